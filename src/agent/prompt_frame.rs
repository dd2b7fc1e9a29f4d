//! An MCP prompt's messages around the turn's own (decisions §67): the spec gives a prompt as
//! messages with roles, so the earlier ones go into the conversation as they are, the last of
//! the person's is the turn's message (its first text what the session is titled by and what
//! `[[links]]` are read from, its other blocks, embedded resources and images, after it), and an
//! assistant's message the prompt ends with is the answer's suggested start (decisions §71): a
//! prefill where the provider continues one, else quoted in the turn's message.

use crate::llm::{Block, Message, Role};

/// What a prompt puts around the turn's own message; empty for a typed message or a command
/// file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptFrame {
    /// Messages before the turn's own, roles kept.
    pub before: Vec<Message>,
    /// The turn's own message's blocks after its text.
    pub extra: Vec<Block>,
    /// Messages after the turn's own (the assistant's words a prompt ends with).
    pub after: Vec<Message>,
}

/// How the model is told the words a prompt starts its answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SuggestedStart {
    /// Sent as a trailing assistant message for the model to continue, and put in front of its
    /// reply (Anthropic without extended thinking). Without trailing whitespace: the API
    /// refuses a final assistant message that ends with it.
    Prefill(String),
    /// Quoted at the end of the turn's message, saying what it is (a provider that refuses a
    /// trailing assistant message, or answers it instead of continuing it).
    Quoted(String),
}

impl SuggestedStart {
    /// The quoted form: a text block for the end of the person's message.
    pub fn quoted_block(words: &str) -> String {
        format!(
            "The prompt this message comes from ends with the suggested start of your answer, quoted below; begin your answer with it (unquoted) and go on from there.\n{}",
            quoted(words)
        )
    }

    /// An assistant's message a prompt opens with, run where the conversation already ends
    /// with an answer: the person's message quoting it (its text; other blocks left out), so
    /// that two assistant messages never follow each other.
    pub fn quoted_earlier(message: &Message) -> Message {
        let words = message
            .content
            .iter()
            .filter_map(Block::text)
            .collect::<Vec<_>>()
            .join("\n\n");
        Message {
            role: Role::User,
            content: vec![Block::Text {
                text: format!(
                    "The prompt this message comes from gives these as the assistant's words before it, quoted:\n{}",
                    quoted(&words)
                ),
            }],
        }
    }
}

/// `words` as a Markdown quote, line by line.
fn quoted(words: &str) -> String {
    words
        .lines()
        .map(|line| {
            if line.is_empty() {
                ">".to_string()
            } else {
                format!("> {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl PromptFrame {
    /// The assistant's words the prompt ends with, as the model is to get them: a prefill when
    /// the provider continues one (`prefill`), else quoted. `None` when the prompt ends with the
    /// person's message (or with an assistant's message without text: images and other blocks
    /// of such a message are left out, since no provider takes them there).
    pub fn suggested_start(&self, prefill: bool) -> Option<SuggestedStart> {
        let words = self
            .after
            .iter()
            .flat_map(|message| message.content.iter().filter_map(Block::text))
            .collect::<Vec<_>>()
            .join("\n\n");
        let words = words.trim_end();
        if words.trim().is_empty() {
            return None;
        }
        Some(if prefill {
            SuggestedStart::Prefill(words.to_string())
        } else {
            SuggestedStart::Quoted(words.to_string())
        })
    }

    /// Split a prompt's `messages` at the last of the person's: its text (`fallback` when it has
    /// none, so the message is never empty) and the frame. `Err` when no message is the person's.
    pub fn split(mut messages: Vec<Message>, fallback: &str) -> Result<(String, Self), String> {
        let at = messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .ok_or("the prompt has no message of the person's (role user) to send")?;
        let after = messages.split_off(at + 1);
        let Some(own) = messages.pop() else {
            return Err("the prompt has no message to send".into());
        };
        // The providers take images in the person's messages only: one in the assistant's
        // words a prompt gives is named, not sent (Anthropic refuses the request otherwise).
        for message in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
            for block in &mut message.content {
                if let Block::Image { media_type, .. } = block {
                    *block = Block::Text {
                        text: format!("[image: {media_type}, not sent: it was the assistant's]"),
                    };
                }
            }
        }
        let mut extra = own.content;
        let text = match extra.iter().position(|b| matches!(b, Block::Text { .. })) {
            Some(first) => match extra.remove(first) {
                Block::Text { text } if !text.trim().is_empty() => text,
                _ => fallback.to_string(),
            },
            None => fallback.to_string(),
        };
        Ok((
            text,
            Self {
                before: messages,
                extra,
                after,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(role: Role, texts: &[&str]) -> Message {
        Message {
            role,
            content: texts
                .iter()
                .map(|t| Block::Text {
                    text: (*t).to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_last_of_the_persons_messages_is_the_turns() {
        let (text, frame) = PromptFrame::split(
            vec![
                message(Role::User, &["one"]),
                message(Role::Assistant, &["two"]),
                message(Role::User, &["three", "<resource>"]),
                message(Role::Assistant, &["Sure:"]),
            ],
            "/s:p",
        )
        .expect("split");
        assert_eq!(text, "three");
        assert_eq!(frame.before.len(), 2);
        assert_eq!(frame.extra.len(), 1);
        assert_eq!(frame.after, vec![message(Role::Assistant, &["Sure:"])]);
    }

    #[test]
    fn an_image_in_the_assistants_earlier_words_is_named_not_sent() {
        let image = Block::Image {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        let (_, frame) = PromptFrame::split(
            vec![
                Message {
                    role: Role::User,
                    content: vec![image.clone()],
                },
                Message {
                    role: Role::Assistant,
                    content: vec![image],
                },
                message(Role::User, &["go on"]),
            ],
            "/s:p",
        )
        .expect("split");
        assert!(matches!(frame.before[0].content[0], Block::Image { .. }));
        assert_eq!(
            frame.before[1].content,
            vec![Block::Text {
                text: "[image: image/png, not sent: it was the assistant's]".into()
            }]
        );
    }

    #[test]
    fn a_closing_assistants_words_are_a_prefill_without_trailing_space_or_quoted() {
        let (_, frame) = PromptFrame::split(
            vec![
                message(Role::User, &["draft it"]),
                message(Role::Assistant, &["Here:\n\nfirst ", "second  \n"]),
            ],
            "/s:p",
        )
        .expect("split");
        assert_eq!(
            frame.suggested_start(true),
            Some(SuggestedStart::Prefill("Here:\n\nfirst \n\nsecond".into()))
        );
        let Some(SuggestedStart::Quoted(words)) = frame.suggested_start(false) else {
            panic!("not quoted");
        };
        assert!(
            SuggestedStart::quoted_block(&words).ends_with("> Here:\n>\n> first \n>\n> second")
        );
        let (_, ends_with_the_persons) =
            PromptFrame::split(vec![message(Role::User, &["x"])], "/s:p").expect("split");
        assert_eq!(ends_with_the_persons.suggested_start(true), None);
        let (_, blank) = PromptFrame::split(
            vec![
                message(Role::User, &["x"]),
                message(Role::Assistant, &[" \n"]),
            ],
            "/s:p",
        )
        .expect("split");
        assert_eq!(blank.suggested_start(false), None);
    }

    #[test]
    fn a_message_without_text_is_named_by_the_command_and_none_of_the_persons_is_refused() {
        let (text, _) = PromptFrame::split(vec![message(Role::User, &[])], "/s:p").expect("split");
        assert_eq!(text, "/s:p");
        assert!(PromptFrame::split(vec![message(Role::Assistant, &["x"])], "/s:p").is_err());
    }
}
