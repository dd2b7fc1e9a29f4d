//! Measuring text in terminal cells and cutting it to fit, with `…` where it was cut.
//!
//! Two measures exist on purpose: [`TERMINAL`] counts as ratatui draws (control characters take
//! no room), for text already made printable (the diff, the banner, the overlays); [`EDITOR`]
//! counts a tab as [`TAB_WIDTH`] columns and a control character as one, as the editor and the
//! lists that show note text lay them out. The cutting is the same for both.

use ratatui::buffer::CellWidth;
use ratatui::text::Span;

/// Columns a tab takes in the editor's measure.
pub const TAB_WIDTH: usize = 4;

/// How to measure: the width of a whole string and of one character.
pub struct Measure {
    text: fn(&str) -> usize,
    char: fn(char) -> usize,
}

/// As ratatui draws a span (control characters take none).
pub const TERMINAL: Measure = Measure {
    text: display_width,
    char: display_char_width,
};

/// As the editor lays text out (a tab is [`TAB_WIDTH`] columns, a control character one).
pub const EDITOR: Measure = Measure {
    text: str_width,
    char: char_width,
};

/// How many terminal columns `text` takes when drawn as a span.
pub fn display_width(text: &str) -> usize {
    Span::raw(text).width()
}

fn display_char_width(c: char) -> usize {
    let mut bytes = [0; 4];
    display_width(c.encode_utf8(&mut bytes))
}

/// Display width of one char in the editor's measure.
pub fn char_width(c: char) -> usize {
    if c == '\t' {
        TAB_WIDTH
    } else if c.is_ascii() || c.is_control() {
        1
    } else {
        let mut bytes = [0; 4];
        usize::from(c.encode_utf8(&mut bytes).cell_width())
    }
}

/// Display width of a string in the editor's measure.
pub fn str_width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

impl Measure {
    /// `text` cut to `max` columns, with `…` at the end when cut (nothing when `max` is 0).
    pub fn truncate_end(&self, text: &str, max: usize) -> String {
        if (self.text)(text) <= max {
            return text.to_string();
        }
        self.cut_end(text, max)
    }

    /// `text` cut to `max - 1` columns followed by `…`, even when it would fit (nothing when
    /// `max` is 0): for a piece that reaches the edge with more behind it.
    pub fn cut_end(&self, text: &str, max: usize) -> String {
        if max == 0 {
            return String::new();
        }
        let mut out: String = self.fitting(text.chars(), max).into_iter().collect();
        out.push('…');
        out
    }

    /// `text` cut to `max` columns from the front, with `…` first when cut (keeps a path's file
    /// name).
    pub fn truncate_start(&self, text: &str, max: usize) -> String {
        if (self.text)(text) <= max {
            return text.to_string();
        }
        if max == 0 {
            return String::new();
        }
        let kept = self.fitting(text.chars().rev(), max);
        std::iter::once('…').chain(kept.into_iter().rev()).collect()
    }

    /// The leading characters of `chars` that fit in `max - 1` columns (room for the `…`);
    /// `max` is at least 1.
    fn fitting(&self, chars: impl Iterator<Item = char>, max: usize) -> Vec<char> {
        let mut kept = Vec::new();
        let mut used = 0;
        for c in chars {
            let w = (self.char)(c);
            if used + w > max - 1 {
                break;
            }
            kept.push(c);
            used += w;
        }
        kept
    }
}

/// `text` cut to `max` columns as drawn, ending in `…` when it was longer.
pub fn truncate(text: &str, max: usize) -> String {
    TERMINAL.truncate_end(text, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_are_cut_with_an_ellipsis() {
        assert_eq!(truncate("Projects/2024/Plan.md", 10), "Projects/…");
        assert_eq!(
            TERMINAL.truncate_start("Projects/2024/Plan.md", 10),
            "…4/Plan.md"
        );
        assert_eq!(EDITOR.truncate_end("a\tbcdef", 6), "a\t…");
        assert_eq!(truncate("Plan.md", 10), "Plan.md");
        assert_eq!(truncate("Plan.md", 0), "");
        assert_eq!(TERMINAL.truncate_start("Plan.md", 0), "");
    }

    #[test]
    fn wide_characters_count_two_columns() {
        assert_eq!(truncate("日本語のノート", 6), "日本…");
        assert_eq!(EDITOR.truncate_start("日本語のノート", 6), "…ート");
    }

    #[test]
    fn the_editor_measure_marks_what_was_cut() {
        assert_eq!(EDITOR.truncate_end("abcdef", 4), "abc…");
        assert_eq!(EDITOR.truncate_end("abc", 4), "abc");
        assert_eq!(EDITOR.truncate_start("Projects/Plan.md", 8), "…Plan.md");
        assert_eq!(EDITOR.truncate_end("日本語", 4), "日…");
        assert_eq!(EDITOR.truncate_end("abc", 0), "");
        assert_eq!(str_width("日本a\t"), 5 + TAB_WIDTH);
    }
}
