//! The note as lines: splitting, joining, offsets and the textarea set-up.

use super::*;

pub(super) fn new_textarea(lines: Vec<String>) -> TextArea<'static> {
    let mut textarea = TextArea::new(lines);
    // Undo is the pane's own (see the module docs).
    textarea.set_max_histories(0);
    textarea.set_tab_length(TAB_WIDTH as u8);
    textarea
}

/// Put the cursor at (row, col), clamped to the text. `CursorMove::Jump` takes `u16`s, so far
/// positions are reached in steps.
pub(super) fn jump(textarea: &mut TextArea<'static>, (row, col): (usize, usize)) {
    let lines = textarea.lines();
    let row = row.min(lines.len() - 1);
    let col = col.min(lines[row].chars().count());
    if let (Ok(r), Ok(c)) = (u16::try_from(row), u16::try_from(col)) {
        textarea.move_cursor(CursorMove::Jump(r, c));
        return;
    }
    textarea.move_cursor(CursorMove::Jump(u16::try_from(row).unwrap_or(u16::MAX), 0));
    for _ in usize::from(u16::MAX)..row {
        textarea.move_cursor(CursorMove::Down);
    }
    textarea.move_cursor(CursorMove::Head);
    for _ in 0..col {
        textarea.move_cursor(CursorMove::Forward);
    }
}

/// Split a note's text into lines, taking one trailing newline off (it is remembered, not shown
/// as an empty last line).
pub(super) fn split_text(text: &str) -> (Vec<String>, bool) {
    let (body, trailing) = match text.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (text, false),
    };
    (body.split('\n').map(str::to_string).collect(), trailing)
}

pub(super) fn join_lines(lines: &[String], trailing_newline: bool) -> String {
    let mut text = lines.join("\n");
    if trailing_newline {
        text.push('\n');
    }
    text
}

/// Whether `lines` + `trailing_newline` spell `text`, without building the joined string.
pub(super) fn same_text(lines: &[String], trailing_newline: bool, text: &str) -> bool {
    let (body, trailing) = match text.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (text, false),
    };
    trailing == trailing_newline && body.split('\n').eq(lines.iter().map(String::as_str))
}

/// The char offset of (row, col) in the joined text.
pub(super) fn char_offset(lines: &[String], (row, col): (usize, usize)) -> usize {
    lines
        .iter()
        .take(row)
        .map(|line| line.chars().count() + 1)
        .sum::<usize>()
        + col
}

/// The lines of `new` (first, last) that differ from `old`, found by the lines the two share at
/// their start and end; a change that only removed lines gives the line after the removal.
pub(super) fn changed_lines(old: &[String], new: &[String]) -> (usize, usize) {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let end = new.len() - suffix;
    let last_line = new.len().saturating_sub(1);
    if end > prefix {
        (prefix, end - 1)
    } else {
        (prefix.min(last_line), prefix.min(last_line))
    }
}

/// The (row, col) of a char offset, clamped to the text.
pub(super) fn position_of(lines: &[String], mut offset: usize) -> (usize, usize) {
    for (row, line) in lines.iter().enumerate() {
        let len = line.chars().count();
        if offset <= len {
            return (row, offset);
        }
        offset -= len + 1;
    }
    let last = lines.len().saturating_sub(1);
    (last, lines.get(last).map_or(0, |l| l.chars().count()))
}

/// Where a char offset of `old` lands in `new`: unchanged before the edited middle, shifted after
/// it, at the end of the new middle inside it.
pub(super) fn map_offset(old: &str, new: &str, offset: usize) -> usize {
    let old_chars: Vec<char> = old.chars().collect();
    let new_chars: Vec<char> = new.chars().collect();
    let prefix = old_chars
        .iter()
        .zip(&new_chars)
        .take_while(|(a, b)| a == b)
        .count();
    let max_suffix = old_chars.len().min(new_chars.len()) - prefix;
    let suffix = old_chars
        .iter()
        .rev()
        .zip(new_chars.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    if offset <= prefix {
        offset
    } else if offset >= old_chars.len() - suffix {
        offset + new_chars.len() - old_chars.len()
    } else {
        new_chars.len() - suffix
    }
}
