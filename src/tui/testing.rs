//! Helpers for the screen tests: a rendered buffer as text for insta snapshots, and style probes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// The buffer's symbols, one line per row, trailing spaces trimmed (what a person would read).
pub fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        for x in area.left()..area.right() {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// An empty buffer of `width`×`height`.
pub fn buffer(width: u16, height: u16) -> Buffer {
    Buffer::empty(Rect::new(0, 0, width, height))
}

/// The style of the first cell whose row contains `needle`, at the needle's first character.
pub fn style_at(buf: &Buffer, needle: &str) -> Option<Style> {
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut columns = Vec::new();
        for x in area.left()..area.right() {
            let symbol = buf[(x, y)].symbol();
            for _ in symbol.chars() {
                columns.push(x);
            }
            row.push_str(symbol);
        }
        if let Some(byte) = row.find(needle) {
            let char_index = row[..byte].chars().count();
            let x = *columns.get(char_index)?;
            return Some(buf[(x, y)].style());
        }
    }
    None
}

/// What a style looks like on screen: colours (unset counts as `Reset`, the terminal default)
/// and modifiers, without the underline colour a buffer cell also carries.
pub fn look(
    style: Option<Style>,
) -> Option<(
    Option<ratatui::style::Color>,
    Option<ratatui::style::Color>,
    ratatui::style::Modifier,
)> {
    let colour = |c: Option<ratatui::style::Color>| c.or(Some(ratatui::style::Color::Reset));
    style.map(|s| (colour(s.fg), colour(s.bg), s.add_modifier))
}

/// The style of the cell `offset` characters into the first occurrence of `needle` (so two words
/// of one row can be compared: a changed word and its unchanged neighbour).
pub fn style_at_offset(buf: &Buffer, needle: &str, offset: usize) -> Option<Style> {
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut columns = Vec::new();
        for x in area.left()..area.right() {
            let symbol = buf[(x, y)].symbol();
            for _ in symbol.chars() {
                columns.push(x);
            }
            row.push_str(symbol);
        }
        if let Some(byte) = row.find(needle) {
            let x = *columns.get(row[..byte].chars().count() + offset)?;
            return Some(buf[(x, y)].style());
        }
    }
    None
}
