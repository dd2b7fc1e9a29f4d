//! An MCP prompt's messages around the turn's own (decisions §67): the spec gives a prompt as
//! messages with roles, so the earlier ones go into the conversation as they are, the last of
//! the person's is the turn's message (its first text what the session is titled by and what
//! `[[links]]` are read from, its other blocks, embedded resources and images, after it), and an
//! assistant's message the prompt ends with follows it, for the model to continue.

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

impl PromptFrame {
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
    fn a_message_without_text_is_named_by_the_command_and_none_of_the_persons_is_refused() {
        let (text, _) = PromptFrame::split(vec![message(Role::User, &[])], "/s:p").expect("split");
        assert_eq!(text, "/s:p");
        assert!(PromptFrame::split(vec![message(Role::Assistant, &["x"])], "/s:p").is_err());
    }
}
