//! The summary request: the part of the conversation to summarise, written out as a plain
//! transcript (so the request needs no tools and no call/result pairing), with the earlier
//! summary first, and the instruction what to keep.

use super::plan::shortened;
use crate::llm::{Block, Message, Request, ResultPart, Role};

/// The system prompt of a summary request.
pub const SUMMARY_SYSTEM: &str = "You summarise a conversation between a person and vaultchat, an assistant working on \
the person's Markdown notes, so that the conversation can continue from your summary alone. Write plain text.";

/// What the summary must keep.
const INSTRUCTION: &str = "Summarise the conversation above for your own later use; it will replace it. Keep: what \
the person asked for and still wants, decisions made, the notes read or changed (by path) with the facts from them \
that matter, open questions and the next step. Leave out greetings and anything already settled and unimportant. \
At most about 400 words.";

/// The transcript of `messages`, tool results shortened.
pub fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        let message = shortened(message);
        for block in &message.content {
            let line = match (&message.role, block) {
                (Role::User, Block::Text { text }) => format!("person: {text}"),
                (Role::Assistant, Block::Text { text }) => format!("assistant: {text}"),
                (_, Block::Image { .. }) => "person: [an image]".to_string(),
                // The model's reasoning is not part of what was said or done.
                (_, Block::Thinking { .. } | Block::RedactedThinking { .. }) => continue,
                (_, Block::ToolUse { name, input, .. }) => {
                    format!("assistant called {name} {input}")
                }
                (
                    _,
                    Block::ToolResult {
                        content, is_error, ..
                    },
                ) => {
                    let text: Vec<&str> = content
                        .iter()
                        .map(|part| match part {
                            ResultPart::Text { text } => text.as_str(),
                            ResultPart::Image { .. } => "[an image]",
                        })
                        .collect();
                    let kind = if *is_error {
                        "tool error"
                    } else {
                        "tool result"
                    };
                    format!("{kind}: {}", text.join("\n"))
                }
            };
            out.push_str(&line);
            out.push_str("\n\n");
        }
    }
    out
}

/// Split `text` into pieces of at most `max_chars` characters, at line ends where there is one.
pub fn pieces(text: &str, max_chars: usize) -> Vec<String> {
    let max_chars = max_chars.max(1);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut count = 0;
    for line in text.split_inclusive('\n') {
        let mut rest = line;
        loop {
            let room = max_chars - count;
            let len = rest.chars().count();
            if len <= room {
                current.push_str(rest);
                count += len;
                break;
            }
            if count > 0 {
                out.push(std::mem::take(&mut current));
                count = 0;
                continue;
            }
            let split = rest
                .char_indices()
                .nth(max_chars)
                .map(|(i, _)| i)
                .unwrap_or(rest.len());
            out.push(rest[..split].to_string());
            rest = &rest[split..];
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The request that summarises `transcript` (a piece of it), after the summary of what came
/// before it if there is one.
pub fn request(model: &str, max_tokens: u32, earlier: Option<&str>, transcript: &str) -> Request {
    let earlier = earlier
        .map(|e| format!("[summary of the conversation before this part]\n{e}\n\n"))
        .unwrap_or_default();
    Request {
        model: model.to_string(),
        max_tokens,
        system: SUMMARY_SYSTEM.to_string(),
        tools: Vec::new(),
        messages: vec![Message {
            role: Role::User,
            content: vec![Block::Text {
                text: format!(
                    "<conversation>\n{earlier}{transcript}</conversation>\n\n{INSTRUCTION}"
                ),
            }],
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_transcript_names_calls_and_shortens_results() {
        let messages = vec![
            Message {
                role: Role::User,
                content: vec![Block::Text {
                    text: "read Big".into(),
                }],
            },
            Message {
                role: Role::Assistant,
                content: vec![Block::ToolUse {
                    id: "c".into(),
                    name: "read_note".into(),
                    input: json!({"path": "Big.md"}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "c".into(),
                    content: vec![ResultPart::Text {
                        text: "y".repeat(10_000),
                    }],
                    is_error: false,
                }],
            },
        ];
        let text = transcript(&messages);
        assert!(text.starts_with("person: read Big"));
        assert!(text.contains("assistant called read_note {\"path\":\"Big.md\"}"));
        assert!(text.len() < 2_000, "{}", text.len());
        let request = request("m", 500, Some("earlier things"), &text);
        assert!(request.tools.is_empty());
        let Block::Text { text: sent } = &request.messages[0].content[0] else {
            panic!("text")
        };
        assert!(sent.contains(
            "[summary of the conversation before this part]\nearlier things\n\nperson: read Big"
        ));
    }

    #[test]
    fn pieces_cover_the_text_within_the_size() {
        let text = format!("{}\n{}\nshort\n", "a".repeat(30), "b".repeat(5));
        let parts = pieces(&text, 12);
        assert_eq!(parts.concat(), text);
        assert!(parts.iter().all(|p| p.chars().count() <= 12), "{parts:?}");
        assert_eq!(pieces("", 5), Vec::<String>::new());
    }
}
