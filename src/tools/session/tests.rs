use super::*;
use crate::tools::Tier;
use pretty_assertions::assert_eq;
use serde_json::json;

fn state(text: &str) -> EditorState {
    EditorState {
        text: text.to_string(),
        selection: None,
        cursor: 0,
    }
}

fn selected(text: &str, selection: Range<usize>) -> EditorState {
    EditorState {
        text: text.to_string(),
        selection: Some(selection),
        cursor: 0,
    }
}

fn run(name: &str, args: Value, state: &EditorState) -> SessionEdit {
    match run_session_tool(name, args, state) {
        Ok(edit) => edit,
        Err(e) => panic!("{name} failed: {e}"),
    }
}

fn invalid(name: &str, args: Value, state: &EditorState) -> String {
    match run_session_tool(name, args, state) {
        Err(ToolError::Invalid(message)) => message,
        other => panic!("{name}: expected an Invalid error, got {other:?}"),
    }
}

/// Run `name` on `state` and check the note text it leaves; the edit is returned for more checks.
fn edited(name: &str, args: Value, state: &EditorState, expected: &str) -> SessionEdit {
    let edit = run(name, args, state);
    assert_eq!(edit.new_text, expected, "{name}");
    edit
}

/// Check that `name` on `state` is refused with a message that contains `needle`.
fn refused(name: &str, args: Value, state: &EditorState, needle: &str) {
    let err = invalid(name, args, state);
    assert!(err.contains(needle), "{name}: {err}");
}

/// The text of a char range.
fn chars(text: &str, range: Range<usize>) -> String {
    text.chars()
        .skip(range.start)
        .take(range.end - range.start)
        .collect()
}

fn names(state: &EditorState) -> Vec<String> {
    session_tool_specs(state)
        .into_iter()
        .map(|s| s.name)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Tool list

#[test]
fn a_selection_offers_only_edit_selection() {
    assert_eq!(
        names(&selected("some text", 0..4)),
        vec![EDIT_SELECTION.to_string()]
    );
}

#[test]
fn no_selection_offers_anchor_and_append_tools() {
    let expected = vec![
        REWRITE_PARAGRAPH,
        INSERT_BEFORE_ANCHOR,
        INSERT_AFTER_ANCHOR,
        APPEND_TO_NOTE,
    ];
    assert_eq!(names(&state("plain note\n")), expected);
    // An empty selection is no selection.
    assert_eq!(names(&selected("plain note\n", 3..3)), expected);
    // A fence without an info string is not a structured block.
    assert_eq!(names(&state("```\ncode\n```\n")), expected);
}

#[test]
fn a_tagged_block_adds_replace_structured_block() {
    let names = names(&state("text\n\n```http id=login\nGET /\n```\n"));
    assert_eq!(names.len(), 5);
    assert_eq!(names[4], REPLACE_STRUCTURED_BLOCK);
    assert_eq!(
        self::names(&selected("```http\nGET /\n```\n", 0..3)),
        vec![EDIT_SELECTION.to_string()]
    );
}

#[test]
fn specs_are_destructive_session_tools_with_closed_schemas() {
    let specs = session_tool_specs(&state("```sql\nselect 1\n```\n"));
    let all_specs: Vec<ToolSpec> = specs
        .into_iter()
        .chain(session_tool_specs(&selected("x", 0..1)))
        .collect();
    assert_eq!(all_specs.len(), 6);
    for spec in &all_specs {
        assert_eq!(spec.tier, Tier::Session, "{}", spec.name);
        assert_eq!(spec.annotations, Annotations::DESTRUCTIVE, "{}", spec.name);
        assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
        assert_eq!(spec.input_schema["additionalProperties"], false);
        assert!(spec.description.len() > 100, "{}", spec.name);
        assert!(is_session_tool(&spec.name));
    }
    let required = |name: &str| {
        all_specs
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.input_schema["required"].clone())
    };
    assert_eq!(required(EDIT_SELECTION), Some(json!(["text"])));
    assert_eq!(required(REWRITE_PARAGRAPH), Some(json!(["anchor", "text"])));
    assert_eq!(required(APPEND_TO_NOTE), Some(json!(["text"])));
    assert_eq!(
        required(REPLACE_STRUCTURED_BLOCK),
        Some(json!(["tag", "text"]))
    );
    assert!(!is_session_tool("update_note"));
}

#[test]
fn unknown_and_unoffered_tools_are_refused() {
    let plain = state("a note\n");
    refused("read_note", json!({}), &plain, "not a session tool");
    refused(
        EDIT_SELECTION,
        json!({"text": "x"}),
        &plain,
        "nothing is selected",
    );
    refused(
        REWRITE_PARAGRAPH,
        json!({"anchor": "a", "text": "x"}),
        &selected("a note\n", 0..1),
        "use edit_selection",
    );
    refused(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "http", "text": "x"}),
        &plain,
        "no fenced code block",
    );
}

#[test]
fn bad_arguments_are_refused() {
    let plain = state("a note with words\n");
    refused(
        APPEND_TO_NOTE,
        json!({"text": "x", "extra": 1}),
        &plain,
        "unknown field `extra`",
    );
    refused(
        INSERT_AFTER_ANCHOR,
        json!({"text": "x"}),
        &plain,
        "missing field `anchor`",
    );
}

// ---------------------------------------------------------------------------------------------
// edit_selection

#[test]
fn edit_selection_replaces_chars_not_bytes() {
    let text = "héllo 中文 🎉 wörld";
    // "中文 🎉" is chars 6..10.
    assert_eq!(chars(text, 6..10), "中文 🎉");
    let edit = edited(
        EDIT_SELECTION,
        json!({"text": "日本語"}),
        &selected(text, 6..10),
        "héllo 日本語 wörld",
    );
    assert_eq!(edit.changed, 6..9);
    assert_eq!(chars(&edit.new_text, edit.changed), "日本語");
}

#[test]
fn edit_selection_with_empty_text_deletes() {
    let edit = edited(
        EDIT_SELECTION,
        json!({"text": ""}),
        &selected("abcdef", 1..3),
        "adef",
    );
    assert_eq!(edit.changed, 1..1);
}

#[test]
fn edit_selection_at_the_end_and_outside_the_text() {
    edited(
        EDIT_SELECTION,
        json!({"text": "!"}),
        &selected("ééé", 2..3),
        "éé!",
    );
    let err = run_session_tool(EDIT_SELECTION, json!({"text": "x"}), &selected("ééé", 2..4));
    assert!(matches!(err, Err(ToolError::Internal(_))), "{err:?}");
}

#[test]
fn edit_selection_writes_crlf_in_a_crlf_note() {
    let text = "one\r\ntwo\r\nthree\r\n";
    edited(
        EDIT_SELECTION,
        json!({"text": "2\nand a half"}),
        &selected(text, 5..8),
        "one\r\n2\r\nand a half\r\nthree\r\n",
    );
    // An LF note gets the text as written.
    edited(
        EDIT_SELECTION,
        json!({"text": "2\nb"}),
        &selected("one\ntwo\n", 4..7),
        "one\n2\nb\n",
    );
}

// ---------------------------------------------------------------------------------------------
// rewrite_paragraph

const NOTE: &str =
    "# Title\n\nFirst paragraph, line one.\nLine two of the first.\n\n\nSecond paragraph here.\n";

#[test]
fn rewrite_replaces_the_whole_paragraph_and_keeps_blank_lines() {
    let edit = edited(
        REWRITE_PARAGRAPH,
        json!({"anchor": "two of the", "text": "A new first paragraph.\n"}),
        &state(NOTE),
        "# Title\n\nA new first paragraph.\n\n\nSecond paragraph here.\n",
    );
    assert_eq!(
        chars(&edit.new_text, edit.changed),
        "A new first paragraph."
    );
}

#[test]
fn rewrite_picks_the_paragraph_nearest_the_cursor() {
    let text = "Status: open (é).\n\nfiller text between them\n\nStatus: open (é).\n";
    let mut st = state(text);
    st.cursor = text.chars().count();
    edited(
        REWRITE_PARAGRAPH,
        json!({"anchor": "Status: open", "text": "Status: closed."}),
        &st,
        "Status: open (é).\n\nfiller text between them\n\nStatus: closed.\n",
    );
    st.cursor = 0;
    edited(
        REWRITE_PARAGRAPH,
        json!({"anchor": "Status: open", "text": "Status: closed."}),
        &st,
        "Status: closed.\n\nfiller text between them\n\nStatus: open (é).\n",
    );
}

#[test]
fn rewrite_treats_a_fenced_block_as_one_block() {
    let text = "intro\n\n```sh\necho a\n\necho b\n```\n\noutro text\n";
    edited(
        REWRITE_PARAGRAPH,
        json!({"anchor": "echo b", "text": "```sh\necho c\n```"}),
        &state(text),
        "intro\n\n```sh\necho c\n```\n\noutro text\n",
    );
}

#[test]
fn rewrite_with_an_anchor_across_paragraphs_replaces_both() {
    let text = "one one one\n\ntwo two two\n\nthree three three\n";
    edited(
        REWRITE_PARAGRAPH,
        json!({"anchor": "one\n\ntwo", "text": "merged"}),
        &state(text),
        "merged\n\nthree three three\n",
    );
}

#[test]
fn rewrite_with_empty_text_removes_the_block_and_one_separator() {
    let text = "alpha alpha\n\nbeta beta\n\ngamma gamma";
    edited(
        REWRITE_PARAGRAPH,
        json!({"anchor": "beta", "text": ""}),
        &state(text),
        "alpha alpha\n\ngamma gamma",
    );
    let last = edited(
        REWRITE_PARAGRAPH,
        json!({"anchor": "gamma", "text": "\n"}),
        &state(text),
        "alpha alpha\n\nbeta beta",
    );
    assert_eq!(last.changed, 22..22);
}

#[test]
fn rewrite_in_a_crlf_note_keeps_crlf_and_the_bom() {
    let text = "\u{feff}First line\r\nsecond line\r\n\r\nOther paragraph\r\n";
    let edit = edited(
        REWRITE_PARAGRAPH,
        json!({"anchor": "second line", "text": "New\nparagraph"}),
        &state(text),
        "\u{feff}New\r\nparagraph\r\n\r\nOther paragraph\r\n",
    );
    assert_eq!(chars(&edit.new_text, edit.changed), "New\r\nparagraph");
}

#[test]
fn anchor_errors_reach_the_model() {
    let text = "Meeting notes for Monday.\n\nDecide the budget.\n";
    refused(
        REWRITE_PARAGRAPH,
        json!({"anchor": "Decide the budgets now", "text": "x"}),
        &state(text),
        "line 3: \"Decide the budget.\"",
    );
    refused(
        INSERT_AFTER_ANCHOR,
        json!({"anchor": "Meeting notes for Monday.\n\nDecide", "text": "x"}),
        &state(text),
        "more than half the note",
    );
    refused(
        INSERT_BEFORE_ANCHOR,
        json!({"anchor": "", "text": "x"}),
        &state(text),
        "empty",
    );
}

// ---------------------------------------------------------------------------------------------
// insert_before_anchor / insert_after_anchor

#[test]
fn inserts_go_exactly_before_and_after_the_anchor() {
    let text = "Ünïcode 中文 and 🎉 emoji, then more words to make it long.";
    let before = edited(
        INSERT_BEFORE_ANCHOR,
        json!({"anchor": "中文", "text": "[b]"}),
        &state(text),
        "Ünïcode [b]中文 and 🎉 emoji, then more words to make it long.",
    );
    assert_eq!(before.changed, 8..11);
    let after = edited(
        INSERT_AFTER_ANCHOR,
        json!({"anchor": "🎉", "text": "\n\nnew paragraph\n\n"}),
        &state(text),
        "Ünïcode 中文 and 🎉\n\nnew paragraph\n\n emoji, then more words to make it long.",
    );
    assert_eq!(
        chars(&after.new_text, after.changed),
        "\n\nnew paragraph\n\n"
    );
}

#[test]
fn inserts_after_a_normalised_anchor_use_the_original_end() {
    let text = "He wrote “don’t panic”  here.\nAnd some more text below it.";
    edited(
        INSERT_AFTER_ANCHOR,
        json!({"anchor": "\"don't panic\" here", "text": " (sic)"}),
        &state(text),
        "He wrote “don’t panic”  here (sic).\nAnd some more text below it.",
    );
}

#[test]
fn inserting_nothing_is_refused() {
    refused(
        INSERT_BEFORE_ANCHOR,
        json!({"anchor": "note", "text": ""}),
        &state("a note with text\n"),
        "nothing to insert",
    );
}

// ---------------------------------------------------------------------------------------------
// append_to_note

#[test]
fn append_keeps_exactly_one_blank_line() {
    for text in [
        "Last line.",
        "Last line.\n",
        "Last line.\n\n\n",
        "Last line.\n  \n\t\n",
    ] {
        let edit = run(APPEND_TO_NOTE, json!({"text": "Added."}), &state(text));
        assert_eq!(edit.new_text, "Last line.\n\nAdded.\n", "{text:?}");
        assert_eq!(edit.changed, 12..18);
    }
}

#[test]
fn append_trims_blank_edges_of_the_text_but_keeps_indentation() {
    let edit = edited(
        APPEND_TO_NOTE,
        json!({"text": "\n\n    indented code\nnext\n\n\n"}),
        &state("é\n"),
        "é\n\n    indented code\nnext\n",
    );
    assert_eq!(
        chars(&edit.new_text, edit.changed),
        "    indented code\nnext"
    );
}

#[test]
fn append_to_an_empty_note_adds_no_blank_line() {
    for text in ["", "\n\n", "  "] {
        let edit = run(APPEND_TO_NOTE, json!({"text": "First."}), &state(text));
        assert_eq!(edit.new_text, "First.\n", "{text:?}");
        assert_eq!(edit.changed, 0..6);
    }
}

#[test]
fn append_to_a_crlf_note_uses_crlf() {
    edited(
        APPEND_TO_NOTE,
        json!({"text": "one\ntwo"}),
        &state("title\r\nbody\r\n\r\n"),
        "title\r\nbody\r\n\r\none\r\ntwo\r\n",
    );
}

#[test]
fn appending_blank_text_is_refused() {
    refused(
        APPEND_TO_NOTE,
        json!({"text": " \n "}),
        &state("note"),
        "nothing to append",
    );
}

// ---------------------------------------------------------------------------------------------
// replace_structured_block

const BLOCKS: &str = "# Requests\n\n```http id=login\nPOST /login\n```\n\n~~~sql\nselect 1;\n~~~\n\n```HTTP id=logout\nPOST /logout\n```\n";

#[test]
fn replaces_the_body_and_keeps_the_fences() {
    let edit = edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "http", "text": "POST /v2/login\nContent-Type: application/json\n"}),
        &state(BLOCKS),
        &BLOCKS.replace(
            "POST /login\n",
            "POST /v2/login\nContent-Type: application/json\n",
        ),
    );
    assert_eq!(
        chars(&edit.new_text, edit.changed),
        "POST /v2/login\nContent-Type: application/json\n"
    );
}

#[test]
fn occurrence_and_case_insensitive_tags() {
    // A missing final newline is added so the closing fence stays on its own line.
    edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "http", "text": "GET /bye", "occurrence": 2}),
        &state(BLOCKS),
        &BLOCKS.replace("POST /logout\n", "GET /bye\n"),
    );
    edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "```sql", "text": "select 2;\n"}),
        &state(BLOCKS),
        &BLOCKS.replace("select 1;", "select 2;"),
    );
}

#[test]
fn missing_blocks_list_the_tags_that_exist() {
    refused(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "graphql", "text": "x"}),
        &state(BLOCKS),
        "`http` (1), `sql` (1), `HTTP` (1)",
    );
    refused(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "sql", "text": "x", "occurrence": 3}),
        &state(BLOCKS),
        "1 block(s) tagged `sql`",
    );
    refused(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "sql", "text": "x", "occurrence": 0}),
        &state(BLOCKS),
        "counts from 1",
    );
}

#[test]
fn a_body_that_would_close_the_block_is_refused() {
    refused(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "http", "text": "```http\nGET /\n```"}),
        &state(BLOCKS),
        "without the fence lines",
    );
    // A shorter fence inside a longer one is body text.
    let text = "````md\nold\n````\n";
    edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "md", "text": "```js\nx\n```\n"}),
        &state(text),
        "````md\n```js\nx\n```\n````\n",
    );
}

#[test]
fn replace_block_in_a_crlf_note_with_multibyte_text() {
    let text = "\u{feff}```json\r\n{\"a\": 1}\r\n```\r\n";
    let edit = edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "json", "text": "{\"名前\": \"é🎉\"}\n{}"}),
        &state(text),
        "\u{feff}```json\r\n{\"名前\": \"é🎉\"}\r\n{}\r\n```\r\n",
    );
    assert_eq!(
        chars(&edit.new_text, edit.changed),
        "{\"名前\": \"é🎉\"}\r\n{}\r\n"
    );
}

#[test]
fn replace_block_edge_shapes() {
    // An empty body becomes non-empty, an unclosed block runs to the end, and an opening fence
    // on the last line gets a line break before its new body.
    edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "sh", "text": "ls\n"}),
        &state("```sh\n```\n"),
        "```sh\nls\n```\n",
    );
    edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "sh", "text": "ls"}),
        &state("```sh\nold\nstuff"),
        "```sh\nls",
    );
    let edit = edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "sh", "text": "ls"}),
        &state("text\n```sh"),
        "text\n```sh\nls",
    );
    assert_eq!(chars(&edit.new_text, edit.changed), "ls");
    // An empty text empties the body.
    edited(
        REPLACE_STRUCTURED_BLOCK,
        json!({"tag": "sh", "text": ""}),
        &state("```sh\nold\n```\n"),
        "```sh\n```\n",
    );
}

// ---------------------------------------------------------------------------------------------
// Helpers

#[test]
fn content_end_and_blank_edges() {
    assert_eq!(content_end("a  \n\n"), 3);
    assert_eq!(content_end("a\r\n \r\n"), 1);
    assert_eq!(content_end(" \n"), 0);
    assert_eq!(strip_blank_edges(" \n  x\n \n"), "  x");
    assert_eq!(byte_offset("é中", 2), Some(5));
    assert_eq!(byte_offset("é中", 3), None);
}
