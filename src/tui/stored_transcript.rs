//! A stored session drawn as the chat shows it: the person's words, the replies, each tool call
//! with its result and how it was decided, the thinking (folded), the compactions and the turns
//! that failed. The app rebuilds its transcript from this when a session is resumed.

use super::chat::Transcript;
use crate::agent::{CallDecision, StoredConversation, ToolCallRecord};
use crate::protocol::{Block, ResultPart, Role as MessageRole};

/// The cells of a stored conversation: the person's text (not the note context that follows
/// it), the replies, and each tool call with its result and how it was decided.
pub fn transcript_of(conversation: &StoredConversation) -> Transcript {
    let mut transcript = Transcript::new();
    let mut calls: std::collections::HashMap<&str, (&str, &serde_json::Value)> = Default::default();
    // A summary replaces the first `count` messages that are sent upstream (failed turns are not).
    let summary_after = |count: usize, transcript: &mut Transcript| {
        for (replaced, summary) in conversation.summaries.iter().filter(|(r, _)| *r == count) {
            let headline = if *replaced == 0 {
                "continued from the summary of the earlier session".to_string()
            } else {
                format!("the {replaced} messages above are sent as a summary")
            };
            transcript.push_stored_compaction(&headline, Some(summary));
        }
    };
    summary_after(0, &mut transcript);
    let mut sent = 0;
    for (message, seq) in conversation.messages.iter().zip(&conversation.seqs) {
        let failed = conversation
            .failed_turns
            .iter()
            .any(|t| (t.first_seq..=t.last_seq).contains(seq));
        if !failed {
            if sent > 0 {
                summary_after(sent, &mut transcript);
            }
            sent += 1;
        }
        show_message(&mut transcript, conversation, message, &mut calls);
        // A turn the provider failed is shown with its error: kept, but no longer sent upstream.
        for failed in conversation
            .failed_turns
            .iter()
            .filter(|t| t.last_seq == *seq)
        {
            transcript.push_error(&failed.error);
        }
    }
    if sent > 0 {
        summary_after(sent, &mut transcript);
    }
    transcript
}

/// The cells of one stored message (`calls` pairs tool results with their calls).
fn show_message<'a>(
    transcript: &mut Transcript,
    conversation: &StoredConversation,
    message: &'a crate::protocol::Message,
    calls: &mut std::collections::HashMap<&'a str, (&'a str, &'a serde_json::Value)>,
) {
    let mut first_text = true;
    // The images of a user message come before its text (agent::prompt::user_message).
    let mut images = Vec::new();
    for block in &message.content {
        match block {
            Block::Text { text } => match message.role {
                MessageRole::User if first_text => {
                    transcript.push_user_with_images(text, std::mem::take(&mut images));
                    first_text = false;
                }
                MessageRole::User => {}
                MessageRole::Assistant => {
                    transcript.append_delta(text);
                    transcript.finish_streaming();
                }
            },
            Block::Image { media_type, data } => {
                images.push(crate::attach::ImageFacts::of_base64(media_type, data));
            }
            Block::Thinking { text, .. } => transcript.push_thinking(text),
            // Encrypted by the provider: nothing to show.
            Block::RedactedThinking { .. } => {}
            Block::ToolUse { id, name, input } => {
                transcript.tool_started(id, name, input);
                calls.insert(id, (name, input));
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let (name, input) = calls
                    .remove(tool_use_id.as_str())
                    .map(|(name, input)| (name.to_string(), input.clone()))
                    .unwrap_or_default();
                transcript.tool_finished(&ToolCallRecord {
                    id: tool_use_id.clone(),
                    name,
                    input,
                    is_error: *is_error,
                    // Calls stored before decisions were kept show no approval.
                    decision: conversation
                        .decisions
                        .get(tool_use_id)
                        .copied()
                        .unwrap_or(CallDecision::Allowed),
                    result: result_text(content),
                });
            }
        }
    }
}

/// A tool result's text, an image as `[image]`.
fn result_text(content: &[ResultPart]) -> String {
    content
        .iter()
        .map(|p| match p {
            ResultPart::Text { text } => text.as_str(),
            ResultPart::Image { .. } => "[image]",
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::protocol::Usage;
    use crate::store::{NewSession, Store};
    use crate::tui::chat::{Cell, ToolStatus};
    use crate::tui::theme::Theme;

    /// The transcript of stored session `id`, read as the host reads it for a resume.
    fn rebuild_transcript(store: &Store, id: &str) -> (Transcript, Usage) {
        let conversation = crate::agent::load_conversation(store, id).unwrap();
        (transcript_of(&conversation), conversation.usage)
    }

    fn session_with_a_denied_call() -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("app.db")).unwrap();
        let id = store
            .create_session(&NewSession {
                vault_id: "v",
                provider: "anthropic",
                model: "m",
                now_ms: 1,
            })
            .unwrap();
        let call = serde_json::json!([{"type": "tool_use", "id": "c1", "name": "delete_note", "input": {"note": "A.md"}}]);
        let result = serde_json::json!([{"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "The person declined this call."}], "is_error": true}]);
        store
            .append_message(&id, "assistant", &call.to_string(), "", 2)
            .unwrap();
        store
            .append_message(&id, "user", &result.to_string(), "", 3)
            .unwrap();
        store.record_tool_decision(&id, "c1", "denied").unwrap();
        (dir, store, id)
    }

    fn tool_statuses(transcript: &Transcript) -> Vec<ToolStatus> {
        (0..transcript.len())
            .filter_map(|i| match transcript.cell(i) {
                Some(Cell::Tool { status, .. }) => Some(*status),
                _ => None,
            })
            .collect()
    }

    /// A resumed session shows each past call as it was decided (issue 14: every call showed as
    /// allowed).
    #[test]
    fn a_resumed_transcript_shows_the_stored_decision() {
        let (_dir, store, id) = session_with_a_denied_call();
        let (transcript, _) = rebuild_transcript(&store, &id);
        assert_eq!(tool_statuses(&transcript), [ToolStatus::Denied]);
    }

    /// A failed turn shows its error after its messages when the session is opened again.
    #[test]
    fn a_failed_turn_shows_its_error_in_the_resumed_transcript() {
        let (_dir, store, id) = session_with_a_denied_call();
        let failed = serde_json::json!([{"type": "text", "text": "Summarise [[Plan]]"}]);
        store
            .append_message(&id, "user", &failed.to_string(), "", 4)
            .unwrap();
        let turn = crate::store::FailedTurn {
            first_seq: 3,
            last_seq: 3,
            error: "the provider sent an empty stream; the message is kept in the transcript but not sent to the model again".into(),
        };
        store.record_failed_turn(&id, &turn, 5).unwrap();
        let (transcript, _) = rebuild_transcript(&store, &id);
        let cells: Vec<&Cell> = (0..transcript.len())
            .filter_map(|i| transcript.cell(i))
            .collect();
        let last_two = &cells[cells.len() - 2..];
        assert!(
            matches!(last_two[0], Cell::User { text, .. } if text == "Summarise [[Plan]]"),
            "{last_two:?}"
        );
        assert!(
            matches!(last_two[1], Cell::Error { text } if text.contains("not sent to the model again")),
            "{last_two:?}"
        );
        for (width, height) in [(80, 24), (120, 40)] {
            let (mut transcript, _) = rebuild_transcript(&store, &id);
            let mut buf = crate::tui::testing::buffer(width, height);
            let area = ratatui::layout::Rect::new(0, 0, width, height);
            transcript.render(area, &mut buf, &Theme::builtin_dark(), true);
            insta::assert_snapshot!(
                format!("resumed_failed_turn_{width}x{height}"),
                crate::tui::testing::buffer_text(&buf)
            );
        }
    }

    /// Stored reasoning comes back as a folded thinking item before the reply; redacted
    /// reasoning shows nothing, and an older row without thinking reads as before.
    #[test]
    fn a_resumed_transcript_shows_stored_thinking_folded() {
        let (_dir, store, id) = session_with_a_denied_call();
        let reply = serde_json::json!([
            {"type": "redacted_thinking", "data": "b3BhcXVl"},
            {"type": "thinking", "text": "Check the plan first.", "signature": "c2ln"},
            {"type": "text", "text": "Plant them in May."}
        ]);
        store
            .append_message(&id, "assistant", &reply.to_string(), "", 4)
            .unwrap();
        let (transcript, _) = rebuild_transcript(&store, &id);
        let last: Vec<Cell> = (transcript.len() - 2..transcript.len())
            .filter_map(|i| transcript.cell(i).cloned())
            .collect();
        assert_eq!(
            last,
            [
                Cell::Thinking {
                    text: "Check the plan first.".into(),
                    streaming: false,
                    expanded: false
                },
                Cell::Assistant {
                    text: "Plant them in May.".into(),
                    streaming: false
                }
            ]
        );
        assert_eq!(tool_statuses(&transcript), [ToolStatus::Denied]);
    }

    /// A message that cannot be decoded is said, not skipped in silence.
    #[test]
    fn a_damaged_message_is_surfaced_in_the_transcript() {
        let (_dir, store, id) = session_with_a_denied_call();
        store
            .append_message(&id, "assistant", "{not json", "", 4)
            .unwrap();
        // As the host answers a resume: the conversation, or why it cannot be read.
        let conversation = crate::agent::load_conversation(&store, &id).map_err(|e| e.to_string());
        let mut app = crate::tui::testing::app_with(crate::tui::keymap::Keymap::default_map());
        app.on_host(crate::host::HostEvent::AgentStarted {
            generation: 1,
            resumed: Some((id, conversation)),
        });
        let transcript = &app.transcript;
        let errors: Vec<&str> = (0..transcript.len())
            .filter_map(|i| match transcript.cell(i) {
                Some(Cell::Error { text }) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("message 3"), "{errors:?}");
    }
}
