//! The tools offered in one turn: a pure function of the registry and the note context
//! (docs/architecture.md, "The agent", step 2).

use super::NoteContext;
use crate::tools::ToolSpec;
use crate::tools::session::session_tool_specs;

/// Workspace, plugin and user-MCP tools always (sorted by name, so the list, and with it the
/// cacheable prefix of every request, is the same from turn to turn); the session tools when a
/// note is focused: `edit_selection` alone when there is a selection, otherwise the anchor and
/// append tools (and `replace_structured_block` when the note has an attributed code block).
pub fn build_tool_list(registry_specs: &[ToolSpec], context: &NoteContext) -> Vec<ToolSpec> {
    let mut tools: Vec<ToolSpec> = registry_specs.to_vec();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(note) = &context.note {
        tools.extend(session_tool_specs(&note.editor));
    }
    tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::FocusedNote;
    use crate::tools::session::EditorState;
    use crate::tools::{Annotations, Tier};

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            title: name.into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
            annotations: Annotations::READ_ONLY,
            tier: Tier::Workspace,
        }
    }

    fn names(tools: &[ToolSpec]) -> Vec<&str> {
        tools.iter().map(|t| t.name.as_str()).collect()
    }

    fn focused(text: &str, selection: Option<std::ops::Range<usize>>) -> NoteContext {
        NoteContext {
            note: Some(FocusedNote {
                path: "a.md".into(),
                editor: EditorState {
                    text: text.into(),
                    selection,
                    cursor: 0,
                },
                in_editor: false,
            }),
        }
    }

    #[test]
    fn no_note_means_no_session_tools() {
        let specs = [spec("search_notes"), spec("read_note")];
        let tools = build_tool_list(&specs, &NoteContext::default());
        assert_eq!(names(&tools), ["read_note", "search_notes"]);
    }

    #[test]
    fn a_focused_note_adds_the_anchor_tools() {
        let tools = build_tool_list(&[spec("read_note")], &focused("one\n\ntwo\n", None));
        let names = names(&tools);
        assert!(names.contains(&"rewrite_paragraph"));
        assert!(names.contains(&"append_to_note"));
        assert!(!names.contains(&"edit_selection"));
        assert!(!names.contains(&"replace_structured_block"));
        let with_block = build_tool_list(&[], &focused("```http id=a\nGET /\n```\n", None));
        assert!(names_of(&with_block).contains(&"replace_structured_block".to_string()));
    }

    fn names_of(tools: &[ToolSpec]) -> Vec<String> {
        tools.iter().map(|t| t.name.clone()).collect()
    }

    #[test]
    fn a_selection_offers_edit_selection_only() {
        let tools = build_tool_list(&[spec("read_note")], &focused("one two", Some(0..3)));
        assert_eq!(names(&tools), ["read_note", "edit_selection"]);
    }

    #[test]
    fn the_list_is_the_same_whatever_order_tools_were_registered_in() {
        let a = build_tool_list(&[spec("b"), spec("a")], &NoteContext::default());
        let b = build_tool_list(&[spec("a"), spec("b")], &NoteContext::default());
        assert_eq!(a, b);
    }
}
