//! A chat as a note: a stored session (or its last reply) written as Markdown with frontmatter
//! (date, model, session id) and `[[links]]` to the notes the agent read or changed, so the
//! conversation lives in the vault beside the notes it was about. `/save` in the app and
//! `vaultchat sessions export` make the text here; writing it goes through the workspace's plan
//! (the banner in the app), like any other write.

use super::StoredConversation;
use crate::llm::{Block, Message, Role};
use crate::store::SessionSummary;

/// What of the session becomes the note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportScope {
    /// Every turn.
    Session,
    /// The last question and its reply.
    LastReply,
}

/// The folder chats are saved in unless a path is given.
pub const CHATS_FOLDER: &str = "Chats";

/// The workspace tools whose successful call changes the note named in their input (the
/// destructive ones of `vaultchat tools` that take a note; the session tools edit the open note
/// and name none); any other tool that names a note only read it.
const CHANGING_TOOLS: [&str; 6] = [
    "create_note",
    "delete_note",
    "manage_tags",
    "move_note",
    "toggle_task",
    "update_note",
];

/// The vault path a chat is saved at by default: `Chats/YYYY-MM-DD Title.md`, the title cut to
/// what a file name may hold.
pub fn default_note_path(session: &SessionSummary) -> String {
    let day = crate::time::format_day(session.created_ms);
    let title: String = session
        .title
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' | '#' | '^' | '[' | ']' => ' ',
            c if c.is_control() => ' ',
            c => c,
        })
        .take(60)
        .collect();
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = title.trim_matches('.');
    if title.is_empty() {
        format!("{CHATS_FOLDER}/{day} chat.md")
    } else {
        format!("{CHATS_FOLDER}/{day} {title}.md")
    }
}

/// Why a chat could not become a note.
#[derive(Debug, thiserror::Error)]
pub enum ChatNoteError {
    #[error("99 saved chats of that title exist")]
    NoFreeName,
    #[error(transparent)]
    Tool(#[from] crate::tools::ToolError),
}

/// The one planner of a chat note, for `/save` and `vaultchat sessions export`: at `to` when the
/// person named a path (never over an existing note), else at [`default_note_path`] or, when a
/// chat saved before (or another note) holds that name, the next free one (`… 2.md`, `… 3.md`).
pub fn plan_chat_note(
    workspace: &crate::tools::workspace::Workspace,
    session: &SessionSummary,
    text: String,
    to: Option<&str>,
) -> Result<crate::tools::workspace::Plan, ChatNoteError> {
    let path = match to {
        Some(path) => path.to_string(),
        None => workspace
            .free_note_path(&default_note_path(session))?
            .ok_or(ChatNoteError::NoFreeName)?,
    };
    Ok(workspace.plan_user_create(&path, text)?)
}

/// The note's Markdown: frontmatter, the turns (the person's words, the replies, one line per
/// tool call), and the notes the agent read or changed as `[[links]]`.
pub fn chat_markdown(
    session: &SessionSummary,
    conversation: &StoredConversation,
    scope: ExportScope,
) -> String {
    let messages = match scope {
        ExportScope::Session => &conversation.messages[..],
        ExportScope::LastReply => last_turn(&conversation.messages),
    };
    let title = if session.title.is_empty() {
        "Chat"
    } else {
        &session.title
    };
    let mut out = String::new();
    out.push_str("---\n");
    out.push_str(&format!("title: {}\n", yaml_string(title)));
    out.push_str(&format!(
        "date: {}\n",
        crate::time::format_day(session.created_ms)
    ));
    if let Some(model) = &session.model {
        out.push_str(&format!("model: {}\n", yaml_string(model)));
    }
    out.push_str(&format!("session: {}\n", session.id));
    out.push_str("tags: [vaultchat]\n---\n\n");
    out.push_str(&format!("# {title}\n"));
    let mut touched = Touched::default();
    for message in messages {
        write_message(&mut out, message, &mut touched, conversation);
    }
    touched.write(&mut out);
    out
}

/// From the last message of the person that has text (a question, not a tool result) on.
fn last_turn(messages: &[Message]) -> &[Message] {
    let start = messages
        .iter()
        .rposition(|m| {
            m.role == Role::User
                && m.content
                    .iter()
                    .any(|b| matches!(b, Block::Text { text } if !text.trim().is_empty()))
        })
        .unwrap_or(0);
    &messages[start..]
}

/// The notes a conversation read and changed, in first-seen order, without repeats.
#[derive(Default)]
struct Touched {
    read: Vec<String>,
    changed: Vec<String>,
    /// Tool calls by id: (tool, the notes it names), waiting for their results.
    calls: Vec<(String, String, Vec<String>)>,
}

impl Touched {
    fn call(&mut self, id: &str, tool: &str, input: &serde_json::Value) {
        let notes: Vec<String> = ["path", "note", "to"]
            .iter()
            .filter_map(|key| input.get(key)?.as_str())
            .map(note_link_target)
            .filter(|t| !t.is_empty())
            .collect();
        self.calls.push((id.to_string(), tool.to_string(), notes));
    }

    fn result(&mut self, id: &str, is_error: bool) {
        let Some(at) = self.calls.iter().position(|(call, ..)| call == id) else {
            return;
        };
        let (_, tool, notes) = self.calls.remove(at);
        if is_error {
            return;
        }
        let list = if CHANGING_TOOLS.contains(&tool.as_str()) {
            &mut self.changed
        } else {
            &mut self.read
        };
        for note in notes {
            if !list.contains(&note) {
                list.push(note);
            }
        }
    }

    fn pulled_in(&mut self, note: &str) {
        if !self.read.iter().any(|n| n == note) {
            self.read.push(note.to_string());
        }
    }

    fn write(&self, out: &mut String) {
        if self.read.is_empty() && self.changed.is_empty() {
            return;
        }
        out.push_str("\n## Notes in this chat\n\n");
        for (label, notes) in [("Changed", &self.changed), ("Read", &self.read)] {
            if notes.is_empty() {
                continue;
            }
            let links: Vec<String> = notes.iter().map(|n| format!("[[{n}]]")).collect();
            out.push_str(&format!("- {label}: {}\n", links.join(", ")));
        }
    }
}

fn write_message(
    out: &mut String,
    message: &Message,
    touched: &mut Touched,
    conversation: &StoredConversation,
) {
    let mut first_text = true;
    for block in &message.content {
        match block {
            // The person's own words: the first text block (the rest is note context).
            Block::Text { text } if message.role == Role::User => {
                if first_text {
                    out.push_str(&format!("\n**You:** {}\n", text.trim()));
                    first_text = false;
                } else if let Some(path) = linked_note_path(text) {
                    // A note the person pulled in with [[…]]: the model read it too.
                    touched.pulled_in(&note_link_target(path));
                }
            }
            Block::Text { text } => {
                if !text.trim().is_empty() {
                    out.push_str(&format!("\n{}\n", text.trim()));
                }
            }
            Block::Image { media_type, .. } => {
                out.push_str(&format!("\n*(an image, {media_type})*\n"));
            }
            Block::ToolUse { id, name, input } => {
                touched.call(id, name, input);
                let denied = conversation
                    .decisions
                    .get(id)
                    .is_some_and(|d| matches!(d, super::CallDecision::Denied));
                let names: Vec<String> = ["path", "note", "to"]
                    .iter()
                    .filter_map(|key| input.get(key)?.as_str())
                    .map(|p| format!("[[{}]]", note_link_target(p)))
                    .collect();
                let what = if names.is_empty() {
                    String::new()
                } else {
                    format!(" {}", names.join(" → "))
                };
                let mark = if denied { " (denied)" } else { "" };
                out.push_str(&format!("\n> `{name}`{what}{mark}\n"));
            }
            Block::ToolResult {
                tool_use_id,
                is_error,
                ..
            } => touched.result(tool_use_id, *is_error),
            // The model's reasoning is not part of the conversation as it was had.
            Block::Thinking { .. } | Block::RedactedThinking { .. } => {}
        }
    }
}

/// The note path of a `[[link]]` context block (`attach::linked_note_block`) or of the open
/// note's block (`agent::prompt`).
fn linked_note_path(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("<linked_note path=\"")
        .or_else(|| text.strip_prefix("<focused_note path=\""))?;
    rest.split('"').next()
}

/// A note path as a wikilink target: the vault path without `.md` (a path is never ambiguous).
fn note_link_target(path: &str) -> String {
    let path = path.trim().trim_start_matches("./");
    path.strip_suffix(".md").unwrap_or(path).to_string()
}

/// A YAML double-quoted string.
fn yaml_string(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            '\n' | '\r' | '\t' => vec![' '],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ResultPart;
    use serde_json::json;

    fn summary(title: &str) -> SessionSummary {
        SessionSummary {
            id: "0123abcd".into(),
            vault_id: "v".into(),
            title: title.into(),
            provider: Some("anthropic".into()),
            model: Some("claude-sonnet-4-5".into()),
            created_ms: 1_764_547_200_000,
            updated_ms: 1_764_547_200_000,
            messages: 4,
            usage: Default::default(),
            parent_id: None,
        }
    }

    fn text(role: Role, text: &str) -> Message {
        Message {
            role,
            content: vec![Block::Text { text: text.into() }],
        }
    }

    fn conversation() -> StoredConversation {
        let messages = vec![
            Message {
                role: Role::User,
                content: vec![
                    Block::Text {
                        text: "When do I plant tomatoes?".into(),
                    },
                    Block::Text {
                        text: "<linked_note path=\"Garden.md\">…</linked_note>".into(),
                    },
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![Block::ToolUse {
                    id: "c1".into(),
                    name: "read_note".into(),
                    input: json!({"path": "Projects/Plan.md"}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "c1".into(),
                    content: vec![ResultPart::Text {
                        text: "# Plan".into(),
                    }],
                    is_error: false,
                }],
            },
            text(Role::Assistant, "In May."),
            text(Role::User, "Add it to my inbox."),
            Message {
                role: Role::Assistant,
                content: vec![Block::ToolUse {
                    id: "c2".into(),
                    name: "update_note".into(),
                    input: json!({"path": "Inbox.md", "append": "- plant tomatoes"}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "c2".into(),
                    content: vec![],
                    is_error: false,
                }],
            },
            text(Role::Assistant, "Done."),
        ];
        StoredConversation {
            seqs: (1..=messages.len() as i64).collect(),
            messages,
            failed_turns: vec![],
            decisions: Default::default(),
            usage: Default::default(),
            summaries: vec![],
        }
    }

    #[test]
    fn a_session_becomes_a_note_with_frontmatter_turns_and_links() {
        let note = chat_markdown(
            &summary("Tomatoes: when?"),
            &conversation(),
            ExportScope::Session,
        );
        assert_eq!(
            note,
            "---\ntitle: \"Tomatoes: when?\"\ndate: 2025-12-01\nmodel: \"claude-sonnet-4-5\"\nsession: 0123abcd\ntags: [vaultchat]\n---\n\n# Tomatoes: when?\n\n**You:** When do I plant tomatoes?\n\n> `read_note` [[Projects/Plan]]\n\nIn May.\n\n**You:** Add it to my inbox.\n\n> `update_note` [[Inbox]]\n\nDone.\n\n## Notes in this chat\n\n- Changed: [[Inbox]]\n- Read: [[Garden]], [[Projects/Plan]]\n"
        );
    }

    #[test]
    fn the_last_reply_alone_keeps_only_its_turn() {
        let note = chat_markdown(&summary("T"), &conversation(), ExportScope::LastReply);
        assert!(note.contains("**You:** Add it to my inbox."), "{note}");
        assert!(!note.contains("When do I plant"), "{note}");
        assert!(
            note.contains("- Changed: [[Inbox]]") && !note.contains("Read:"),
            "{note}"
        );
    }

    #[test]
    fn the_default_path_is_in_chats_with_the_date_and_a_file_name_safe_title() {
        assert_eq!(
            default_note_path(&summary("What/is: [[this]]?")),
            "Chats/2025-12-01 What is this.md"
        );
        assert_eq!(default_note_path(&summary("")), "Chats/2025-12-01 chat.md");
    }
}
