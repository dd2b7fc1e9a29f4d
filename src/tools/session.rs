//! Tier-1 session tools (docs/tools.md): edits of the note open in the editor, as pure functions
//! from the editor's state (text, selection, cursor) to the new text. The agent offers them per
//! turn with [`session_tool_specs`], runs a call with [`run_session_tool`], and the UI shows the
//! result as a diff and applies it to the editor as one undo step.
//!
//! Offsets are Unicode scalar (char) offsets, end exclusive, as the editor and `--selection` count
//! them; byte offsets stay inside this module.
//!
//! New text is inserted as the model wrote it, with one exception: in a note that uses CRLF, its
//! bare `\n`s become `\r\n`, so an edit never leaves a note with mixed line endings.

mod anchor;
mod fences;

use crate::tools::{Annotations, ToolError, ToolSpec, parse_args, schema_of};
use crate::vault::markdown;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;

pub use crate::protocol::EditorState;

/// What a session tool did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEdit {
    /// The note's whole text after the edit.
    pub new_text: String,
    /// Char range of the new or replaced text in `new_text` (empty where text was only removed),
    /// for the editor to select or scroll to.
    pub changed: Range<usize>,
}

/// Replace the selection.
pub const EDIT_SELECTION: &str = "edit_selection";
/// Replace the paragraph that contains an anchor.
pub const REWRITE_PARAGRAPH: &str = "rewrite_paragraph";
/// Insert text just before an anchor.
pub const INSERT_BEFORE_ANCHOR: &str = "insert_before_anchor";
/// Insert text just after an anchor.
pub const INSERT_AFTER_ANCHOR: &str = "insert_after_anchor";
/// Add a block at the end of the note.
pub const APPEND_TO_NOTE: &str = "append_to_note";
/// Replace the body of a fenced code block.
pub const REPLACE_STRUCTURED_BLOCK: &str = "replace_structured_block";

/// Every session tool, in the order they are offered.
pub const ALL: [&str; 6] = [
    EDIT_SELECTION,
    REWRITE_PARAGRAPH,
    INSERT_BEFORE_ANCHOR,
    INSERT_AFTER_ANCHOR,
    APPEND_TO_NOTE,
    REPLACE_STRUCTURED_BLOCK,
];

/// Whether `name` is one of the session tools (offered now or not).
pub fn is_session_tool(name: &str) -> bool {
    ALL.contains(&name)
}

/// The session tools offered for this state (docs/architecture.md, "The agent", step 2): with a
/// non-empty selection only edit_selection; otherwise the anchor tools and append_to_note, plus
/// replace_structured_block when the note has a fenced code block with an info string.
pub fn session_tool_specs(state: &EditorState) -> Vec<ToolSpec> {
    offered(state).into_iter().map(spec).collect()
}

/// Every session tool, whatever the editor state (for `vaultchat tools`).
pub fn all_session_tool_specs() -> Vec<ToolSpec> {
    ALL.iter().copied().map(spec).collect()
}

/// Run one session tool. An unknown name, or a tool not offered for this state, is the model's
/// mistake ([`ToolError::Invalid`]); a selection outside the text is the caller's
/// ([`ToolError::Internal`]).
pub fn run_session_tool(
    name: &str,
    args: Value,
    state: &EditorState,
) -> Result<SessionEdit, ToolError> {
    if !is_session_tool(name) {
        return Err(ToolError::Invalid(format!(
            "`{name}` is not a session tool; the session tools are {}",
            ALL.join(", ")
        )));
    }
    if !offered(state).contains(&name) {
        return Err(ToolError::Invalid(not_offered(name, state)));
    }
    match name {
        EDIT_SELECTION => edit_selection(state, parse_args(name, args)?),
        REWRITE_PARAGRAPH => rewrite_paragraph(state, parse_args(name, args)?),
        INSERT_BEFORE_ANCHOR => insert_at_anchor(state, parse_args(name, args)?, Side::Before),
        INSERT_AFTER_ANCHOR => insert_at_anchor(state, parse_args(name, args)?, Side::After),
        APPEND_TO_NOTE => append_to_note(state, parse_args(name, args)?),
        REPLACE_STRUCTURED_BLOCK => replace_structured_block(state, parse_args(name, args)?),
        // Unreachable: the name was checked against ALL above.
        _ => Err(ToolError::Invalid(format!(
            "`{name}` is not a session tool"
        ))),
    }
}

fn has_selection(state: &EditorState) -> bool {
    state.selection.as_ref().is_some_and(|s| s.start < s.end)
}

fn offered(state: &EditorState) -> Vec<&'static str> {
    if has_selection(state) {
        return vec![EDIT_SELECTION];
    }
    let mut names = vec![
        REWRITE_PARAGRAPH,
        INSERT_BEFORE_ANCHOR,
        INSERT_AFTER_ANCHOR,
        APPEND_TO_NOTE,
    ];
    if fences::fenced_blocks(&state.text)
        .iter()
        .any(|b| b.tag().is_some())
    {
        names.push(REPLACE_STRUCTURED_BLOCK);
    }
    names
}

/// Why `name` cannot be called now, and what to call instead.
fn not_offered(name: &str, state: &EditorState) -> String {
    if has_selection(state) {
        format!(
            "`{name}` is not available while text is selected in the editor; use edit_selection to replace \
             the selected text"
        )
    } else if name == EDIT_SELECTION {
        "edit_selection needs a selection and nothing is selected in the editor; use rewrite_paragraph, \
         insert_before_anchor, insert_after_anchor or append_to_note instead"
            .into()
    } else {
        "the note has no fenced code block with an info string (such as ```http), so \
         replace_structured_block is not available; use rewrite_paragraph instead"
            .into()
    }
}

fn spec(name: &'static str) -> ToolSpec {
    let (title, description, input_schema) = match name {
        EDIT_SELECTION => (
            "Edit selection",
            "Replace the text selected in the editor with `text`. Only the selected characters are replaced, \
             nothing around them; `text` is used exactly as given (an empty `text` deletes the selection). \
             Offered only while the person has selected text, and then it is the only way to edit the open note. \
             The person sees the change as a diff and decides whether to apply it.",
            schema_of::<EditSelectionArgs>(),
        ),
        REWRITE_PARAGRAPH => (
            "Rewrite paragraph",
            "Rewrite one block of the open note: the whole blank-line-delimited block (a paragraph, list, table, \
             or a fenced code block with its fences) that contains `anchor` is replaced by `text`; the blank lines \
             around it stay. `anchor` is a short verbatim quote from that block (a few words copied exactly; if it \
             occurs several times, the occurrence nearest the cursor is used). `text` is the complete new block, \
             not just the changed words; an empty `text` removes the block. Use it to reword, fix or restructure \
             existing text; use insert_before_anchor, insert_after_anchor or append_to_note to add text.",
            schema_of::<AnchorArgs>(),
        ),
        INSERT_BEFORE_ANCHOR => (
            "Insert before anchor",
            "Insert `text` into the open note immediately before `anchor`, a short verbatim quote from the note \
             (a few words copied exactly; if it occurs several times, the occurrence nearest the cursor is used). \
             `text` is inserted exactly as given, so include the newlines you need: to add a paragraph before \
             the paragraph that starts with the anchor, end `text` with two newlines. Nothing existing changes.",
            schema_of::<AnchorArgs>(),
        ),
        INSERT_AFTER_ANCHOR => (
            "Insert after anchor",
            "Insert `text` into the open note immediately after `anchor`, a short verbatim quote from the note \
             (a few words copied exactly; if it occurs several times, the occurrence nearest the cursor is used). \
             `text` is inserted exactly as given, so include the newlines you need: to add a paragraph after the \
             paragraph that ends with the anchor, start `text` with two newlines. Nothing existing changes.",
            schema_of::<AnchorArgs>(),
        ),
        APPEND_TO_NOTE => (
            "Append to note",
            "Add `text` at the end of the open note as a new block: exactly one blank line separates it from the \
             note's last non-blank line, and the note then ends with `text` and a newline. Use it to add a \
             paragraph, list or section at the end. Nothing existing changes.",
            schema_of::<AppendArgs>(),
        ),
        _ => (
            "Replace code block body",
            "Replace the body of a fenced code block of the open note (the lines between the opening fence, such \
             as ```http id=login, and the closing fence); both fence lines and the info string stay. `tag` is \
             the first word of the block's info string (`http` for ```http id=login); `occurrence` picks the n-th \
             block with that tag (1 = the first, the default). `text` is the new body only, without fence lines. \
             If no block has that tag, the error lists the tags that exist.",
            schema_of::<ReplaceBlockArgs>(),
        ),
    };
    ToolSpec {
        name: name.to_string(),
        title: title.to_string(),
        description: description.to_string(),
        input_schema,
        annotations: Annotations::DESTRUCTIVE,
        tier: crate::tools::Tier::Session,
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditSelectionArgs {
    /// The text that replaces the selection, exactly as it should appear.
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AnchorArgs {
    /// A short verbatim quote from the note (a few words, copied exactly) that marks the place.
    anchor: String,
    /// The new text.
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AppendArgs {
    /// The text to add at the end of the note.
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReplaceBlockArgs {
    /// The first word of the block's info string (`http` for ```http id=login).
    tag: String,
    /// The new body: the lines between the fences, without the fence lines.
    text: String,
    /// Which block with this tag, counting from 1 in document order (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    occurrence: Option<u32>,
}

// ---------------------------------------------------------------------------------------------
// The tools

fn edit_selection(state: &EditorState, args: EditSelectionArgs) -> Result<SessionEdit, ToolError> {
    let text = &state.text;
    let selection = state.selection.clone().unwrap_or(0..0);
    let (Some(start), Some(end)) = (
        byte_offset(text, selection.start),
        byte_offset(text, selection.end),
    ) else {
        return Err(ToolError::Internal(format!(
            "the selection {}..{} is outside the note ({} characters)",
            selection.start,
            selection.end,
            text.chars().count()
        )));
    };
    let replacement = in_note_line_endings(text, &args.text);
    Ok(splice(text, start..end, &replacement))
}

fn rewrite_paragraph(state: &EditorState, args: AnchorArgs) -> Result<SessionEdit, ToolError> {
    let text = &state.text;
    let found = anchor::resolve(text, &args.anchor, state.cursor)?;
    let blocks: Vec<Range<usize>> = markdown::paragraphs(text)
        .into_iter()
        .map(|b| without_trailing_cr(text, b))
        .collect();
    let touched: Vec<usize> = (0..blocks.len())
        .filter(|&i| blocks[i].start < found.end && found.start < blocks[i].end)
        .collect();
    let (Some(&first), Some(&last)) = (touched.first(), touched.last()) else {
        return Err(ToolError::Invalid(
            "the anchor lies in blank lines between paragraphs; quote words of the paragraph to rewrite".into(),
        ));
    };
    // A BOM is a byte of the first line, not of its paragraph.
    let start = if blocks[first].start == 0 && text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        blocks[first].start
    };
    let block = start..blocks[last].end;
    // The blank lines around the block belong to its neighbours, so line breaks at the edges of
    // the new text would add to them.
    let new_block = args.text.trim_matches(['\n', '\r']);
    if new_block.trim().is_empty() {
        // Removing a block takes one separator with it, so its neighbours keep one blank line.
        let removed = match (
            blocks.get(last + 1),
            first.checked_sub(1).map(|i| &blocks[i]),
        ) {
            (Some(next), _) => block.start..next.start,
            (None, Some(previous)) => previous.end..block.end,
            (None, None) => block,
        };
        return Ok(splice(text, removed, ""));
    }
    Ok(splice(text, block, &in_note_line_endings(text, new_block)))
}

#[derive(Clone, Copy)]
enum Side {
    Before,
    After,
}

fn insert_at_anchor(
    state: &EditorState,
    args: AnchorArgs,
    side: Side,
) -> Result<SessionEdit, ToolError> {
    if args.text.is_empty() {
        return Err(ToolError::Invalid(
            "`text` is empty, so there is nothing to insert".into(),
        ));
    }
    let found = anchor::resolve(&state.text, &args.anchor, state.cursor)?;
    let at = match side {
        Side::Before => found.start,
        Side::After => found.end,
    };
    let insertion = in_note_line_endings(&state.text, &args.text);
    Ok(splice(&state.text, at..at, &insertion))
}

fn append_to_note(state: &EditorState, args: AppendArgs) -> Result<SessionEdit, ToolError> {
    let text = &state.text;
    let addition = strip_blank_edges(&args.text);
    if addition.is_empty() {
        return Err(ToolError::Invalid(
            "`text` is empty, so there is nothing to append".into(),
        ));
    }
    let eol = line_ending(text);
    let addition = in_note_line_endings(text, addition);
    let kept = content_end(text);
    let separator = if kept == 0 {
        String::new()
    } else {
        format!("{eol}{eol}")
    };
    let mut new_text = String::with_capacity(kept + separator.len() + addition.len() + 2);
    new_text.push_str(&text[..kept]);
    new_text.push_str(&separator);
    let start = new_text.chars().count();
    new_text.push_str(&addition);
    let changed = start..start + addition.chars().count();
    new_text.push_str(eol);
    Ok(SessionEdit { new_text, changed })
}

fn replace_structured_block(
    state: &EditorState,
    args: ReplaceBlockArgs,
) -> Result<SessionEdit, ToolError> {
    let text = &state.text;
    let tag = args.tag.trim().trim_start_matches(['`', '~']).trim();
    let occurrence = args.occurrence.unwrap_or(1);
    if occurrence == 0 {
        return Err(ToolError::Invalid(
            "`occurrence` counts from 1 (the first block with the tag)".into(),
        ));
    }
    let blocks = fences::fenced_blocks(text);
    let tagged: Vec<&fences::FencedBlock> = blocks
        .iter()
        .filter(|b| b.tag().is_some_and(|t| t.eq_ignore_ascii_case(tag)))
        .collect();
    let Some(block) = tagged.get(occurrence as usize - 1) else {
        return Err(ToolError::Invalid(missing_block(
            tag,
            occurrence,
            tagged.len(),
            &blocks,
        )));
    };
    if let Some(line) = args.text.lines().find(|line| block.is_closed_by(line)) {
        return Err(ToolError::Invalid(format!(
            "`text` contains the line {line:?}, which would close the block early; send only the body, \
             without the fence lines"
        )));
    }
    let eol = line_ending(text);
    let mut body = in_note_line_endings(text, &args.text).into_owned();
    // The closing fence must stay on its own line.
    if block.closed && !body.is_empty() && !body.ends_with('\n') {
        body.push_str(eol);
    }
    let mut prefix = "";
    if !block.open_line_terminated && !body.is_empty() {
        prefix = eol;
    }
    let mut edit = splice(text, block.body.clone(), &format!("{prefix}{body}"));
    edit.changed.start += prefix.chars().count();
    Ok(edit)
}

/// The error for a block that is not there: which tags exist, so the model can retry.
fn missing_block(
    tag: &str,
    occurrence: u32,
    found: usize,
    blocks: &[fences::FencedBlock],
) -> String {
    if found > 0 {
        return format!(
            "the note has {found} block(s) tagged `{tag}`, so there is no occurrence {occurrence}; \
             pass an occurrence from 1 to {found}"
        );
    }
    let mut tags: Vec<(String, usize)> = Vec::new();
    for t in blocks.iter().filter_map(|b| b.tag()) {
        match tags.iter_mut().find(|(seen, _)| seen == t) {
            Some((_, count)) => *count += 1,
            None => tags.push((t.to_string(), 1)),
        }
    }
    let listed: Vec<String> = tags.iter().map(|(t, n)| format!("`{t}` ({n})")).collect();
    format!(
        "the note has no fenced code block tagged `{tag}`; the tags that exist are {} \
         (count in parentheses); `tag` is the first word after the opening fence",
        listed.join(", ")
    )
}

// ---------------------------------------------------------------------------------------------
// Text helpers

/// Replace a byte range and describe the result in chars.
fn splice(text: &str, range: Range<usize>, replacement: &str) -> SessionEdit {
    let mut new_text =
        String::with_capacity(text.len() - (range.end - range.start) + replacement.len());
    new_text.push_str(&text[..range.start]);
    new_text.push_str(replacement);
    new_text.push_str(&text[range.end..]);
    let start = text[..range.start].chars().count();
    SessionEdit {
        new_text,
        changed: start..start + replacement.chars().count(),
    }
}

/// The byte offset of a char offset; `None` past the end.
fn byte_offset(text: &str, chars: usize) -> Option<usize> {
    text.char_indices()
        .map(|(at, _)| at)
        .chain(std::iter::once(text.len()))
        .nth(chars)
}

/// The note's line terminator: CRLF when its first line ends with one.
fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if text[..at].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// `s` with bare `\n`s written as `\r\n` when the note uses CRLF; unchanged otherwise.
fn in_note_line_endings<'a>(note: &str, s: &'a str) -> Cow<'a, str> {
    if line_ending(note) == "\n" || !s.contains('\n') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut previous = '\0';
    for c in s.chars() {
        if c == '\n' && previous != '\r' {
            out.push('\r');
        }
        out.push(c);
        previous = c;
    }
    Cow::Owned(out)
}

/// The end of the last line that holds more than whitespace (before its terminator); 0 for a
/// blank text.
fn content_end(text: &str) -> usize {
    let Some(last) = text.rfind(|c: char| !c.is_whitespace()) else {
        return 0;
    };
    match text[last..].find('\n') {
        Some(offset) => {
            let end = last + offset;
            if text[..end].ends_with('\r') {
                end - 1
            } else {
                end
            }
        }
        None => text.len(),
    }
}

/// `s` without whitespace-only lines at its start and end (and without its final line break);
/// indentation of the first kept line stays.
fn strip_blank_edges(s: &str) -> &str {
    let mut start = 0;
    while let Some(offset) = s[start..].find('\n') {
        if !s[start..start + offset].trim().is_empty() {
            break;
        }
        start += offset + 1;
    }
    let rest = &s[start..];
    &rest[..content_end(rest)]
}

fn without_trailing_cr(text: &str, range: Range<usize>) -> Range<usize> {
    if range.end > range.start && text[..range.end].ends_with('\r') {
        range.start..range.end - 1
    } else {
        range
    }
}

#[cfg(test)]
mod tests;
