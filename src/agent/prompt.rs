//! The system prompt and the user message of a turn.
//!
//! The system prompt is the same for every request of a vault (it is part of the cached prefix);
//! everything that changes from turn to turn — the focused note, the selection — goes into the
//! user message instead.

use super::{Attachment, NoteContext};
use crate::llm::{Block, Message, Role};

/// The system prompt for a vault named `vault_name`.
pub fn system_prompt(vault_name: &str) -> String {
    format!(
        "You are vaultchat, an assistant working beside the person's Markdown notes (an Obsidian-style vault named \
         \"{vault_name}\"). Use the tools to search, read and edit notes; name notes by their vault-relative path. \
         Read a note before you change it. Every change you make is shown to the person as a diff and applied only \
         if they accept it; when a tool result says a change was rejected or only partly applied, take that as their \
         answer and do not retry the same change. Wikilinks look like [[Note]] and tags like #tag. The vault's links are \
         indexed: to find related material, judge what a rename or delete affects, or summarise a topic, follow \
         them (get_backlinks lists the notes linking to a note with the linking lines, get_outgoing_links what it \
         links to, list_unresolved_links and list_orphan_notes the gaps). Keep answers short and say which notes \
         you used."
    )
}

/// The user message of a turn: images first, then the text, then what is open in the editor.
pub fn user_message(text: &str, attachments: &[Attachment], context: &NoteContext) -> Message {
    let mut content: Vec<Block> = attachments
        .iter()
        .map(|a| Block::Image {
            media_type: a.media_type.clone(),
            data: a.data.clone(),
        })
        .collect();
    content.push(Block::Text {
        text: text.to_string(),
    });
    if let Some(note) = &context.note {
        let editor = &note.editor;
        let mut about = format!(
            "<focused_note path=\"{}\">\n{}\n</focused_note>",
            note.path, editor.text
        );
        if let Some(selection) = editor.selection.as_ref().filter(|s| !s.is_empty()) {
            let selected = note.selected_text().unwrap_or_default();
            about.push_str(&format!(
                "\n<selection start=\"{}\" end=\"{}\">\n{selected}\n</selection>\nThe person selected this text; edit_selection replaces exactly it.",
                selection.start, selection.end
            ));
        } else {
            about.push_str(
                "\nThe person has this note open. The session tools (rewrite_paragraph, insert_before_anchor, \
                 insert_after_anchor, append_to_note) edit it in place; an anchor is a short verbatim quote from it.",
            );
        }
        content.push(Block::Text { text: about });
    }
    Message {
        role: Role::User,
        content,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::FocusedNote;
    use crate::tools::session::EditorState;

    #[test]
    fn the_selection_is_quoted_by_characters() {
        let context = NoteContext {
            note: Some(FocusedNote {
                path: "a.md".into(),
                editor: EditorState {
                    text: "héllo wörld".into(),
                    selection: Some(6..11),
                    cursor: 6,
                },
                in_editor: false,
            }),
        };
        let message = user_message("fix it", &[], &context);
        let Block::Text { text } = &message.content[1] else {
            panic!("context block")
        };
        assert!(text.contains("<selection start=\"6\" end=\"11\">\nwörld\n</selection>"));
        assert!(text.contains("path=\"a.md\""));
    }

    #[test]
    fn images_come_before_the_text() {
        let message = user_message(
            "what is this",
            &[Attachment {
                media_type: "image/png".into(),
                data: "AAAA".into(),
            }],
            &NoteContext::default(),
        );
        assert!(matches!(message.content[0], Block::Image { .. }));
        assert!(matches!(&message.content[1], Block::Text { text } if text == "what is this"));
        assert_eq!(message.content.len(), 2);
    }
}
