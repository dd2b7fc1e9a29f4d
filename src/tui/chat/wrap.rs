//! Wrapping styled text to a width in terminal cells (grapheme clusters, wide CJK and emoji count
//! two cells), with a prefix before the first row and another before the rows that follow (list
//! markers, quote bars, gutters).

use ratatui::buffer::CellWidth;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::borrow::Cow;

/// Columns between tab stops when a tab in prose is expanded (ratatui does not draw tabs).
const TAB_SPACES: &str = "    ";

/// One grapheme cluster as it will be drawn.
struct Glyph<'a> {
    symbol: &'a str,
    style: Style,
    width: usize,
}

impl Glyph<'_> {
    fn is_space(&self) -> bool {
        self.symbol.chars().all(char::is_whitespace)
    }

    fn first_char(&self) -> Option<char> {
        self.symbol.chars().next()
    }
}

/// Whether `c` is a character of a script written without spaces between words (Chinese,
/// Japanese kana), where a row may break beside any character.
fn is_unspaced(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}'      // hiragana, katakana
        | '\u{3400}'..='\u{4dbf}'    // CJK extension A
        | '\u{4e00}'..='\u{9fff}'    // CJK unified ideographs
        | '\u{f900}'..='\u{faff}'    // compatibility ideographs
        | '\u{20000}'..='\u{3134f}' // the supplementary ideograph planes
    )
}

/// Punctuation and marks that never start a row (they close what comes before them).
const NO_BREAK_BEFORE: &str = ",.;:!?)]}'\"、。，．・：；？！）］｝」』】〕〉》〙〗ーゝゞヽヾ々ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ";
/// Punctuation that never ends a row (it opens what comes after it).
const NO_BREAK_AFTER: &str = "([{「『（［｛【〔〈《〘〖";

/// Whether a row may break between two glyphs that have no space between them: beside a
/// character of an unspaced script, unless that would start a row with closing punctuation or
/// end one with opening punctuation.
fn breaks_between(before: &Glyph<'_>, after: &Glyph<'_>) -> bool {
    let (Some(a), Some(b)) = (before.first_char(), after.first_char()) else {
        return false;
    };
    (is_unspaced(a) || is_unspaced(b))
        && !NO_BREAK_BEFORE.contains(b)
        && !NO_BREAK_AFTER.contains(a)
}

/// The width of `text` in terminal cells, as ratatui draws it (control characters take none).
pub fn text_width(text: &str) -> usize {
    Span::raw(text)
        .styled_graphemes(Style::default())
        .map(|g| usize::from(g.symbol.cell_width()))
        .sum()
}

/// The width of some spans in terminal cells.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| text_width(&s.content)).sum()
}

/// Tabs as spaces (ratatui drops control characters, so a tab would vanish).
fn without_tabs<'a>(spans: &'a [Span<'a>]) -> Cow<'a, [Span<'a>]> {
    if spans.iter().any(|s| s.content.contains('\t')) {
        Cow::Owned(
            spans
                .iter()
                .map(|s| Span::styled(s.content.replace('\t', TAB_SPACES), s.style))
                .collect(),
        )
    } else {
        Cow::Borrowed(spans)
    }
}

fn glyphs<'a>(spans: &'a [Span<'a>]) -> Vec<Glyph<'a>> {
    spans
        .iter()
        .flat_map(|span| span.styled_graphemes(Style::default()))
        .map(|g| Glyph {
            symbol: g.symbol,
            style: g.style,
            width: usize::from(g.symbol.cell_width()),
        })
        .collect()
}

/// Builds one row, merging neighbouring pieces of the same style into one span.
struct Row {
    spans: Vec<Span<'static>>,
    width: usize,
}

impl Row {
    fn new(prefix: &[Span<'static>]) -> Row {
        Row {
            spans: prefix.to_vec(),
            width: 0,
        }
    }

    fn push(&mut self, glyph: &Glyph<'_>) {
        self.width += glyph.width;
        match self.spans.last_mut() {
            Some(last) if last.style == glyph.style && self.width > glyph.width => {
                last.content.to_mut().push_str(glyph.symbol)
            }
            _ => self
                .spans
                .push(Span::styled(glyph.symbol.to_string(), glyph.style)),
        }
    }

    fn finish(self) -> Line<'static> {
        Line::from(self.spans)
    }
}

/// Where rows break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breaks {
    /// Between words; a word wider than the row is split between graphemes.
    Words,
    /// Anywhere (code: every column matters, spaces included).
    Anywhere,
}

/// Lay out one logical line (no line breaks inside) in rows of at most `width` cells, the first
/// row starting with `first_prefix` and the rest with `rest_prefix`. Always at least one row.
/// With [`Breaks::Words`] the spaces where a row breaks are dropped, as in any text view.
pub fn wrap(
    spans: &[Span<'_>],
    width: usize,
    first_prefix: &[Span<'static>],
    rest_prefix: &[Span<'static>],
    breaks: Breaks,
) -> Vec<Line<'static>> {
    let spans = without_tabs(spans);
    let glyphs = glyphs(&spans);
    // A row always has room for one cell, so every glyph lands somewhere and the loop ends.
    let first_room = width.saturating_sub(spans_width(first_prefix)).max(1);
    let rest_room = width.saturating_sub(spans_width(rest_prefix)).max(1);
    let mut wrapper = Wrapper {
        rows: Vec::new(),
        row: Row::new(first_prefix),
        room: first_room,
        rest_room,
        rest_prefix,
    };
    match breaks {
        Breaks::Anywhere => {
            for glyph in &glyphs {
                wrapper.place(glyph);
            }
        }
        Breaks::Words => wrapper.place_words(&glyphs),
    }
    wrapper.rows.push(wrapper.row.finish());
    wrapper.rows
}

struct Wrapper<'p> {
    rows: Vec<Line<'static>>,
    row: Row,
    room: usize,
    rest_room: usize,
    rest_prefix: &'p [Span<'static>],
}

impl Wrapper<'_> {
    fn new_row(&mut self) {
        let row = std::mem::replace(&mut self.row, Row::new(self.rest_prefix));
        self.rows.push(row.finish());
        self.room = self.rest_room;
    }

    /// One glyph, breaking the row first when it would not fit.
    fn place(&mut self, glyph: &Glyph<'_>) {
        if self.row.width + glyph.width > self.room && self.row.width > 0 {
            self.new_row();
        }
        self.row.push(glyph);
    }

    fn place_words(&mut self, glyphs: &[Glyph<'_>]) {
        let mut pending_space: &[Glyph<'_>] = &[];
        let mut i = 0;
        while i < glyphs.len() {
            let space = glyphs[i].is_space();
            let mut end = glyphs[i..]
                .iter()
                .position(|g| g.is_space() != space)
                .map_or(glyphs.len(), |n| i + n);
            if !space {
                // A word ends where a row may break inside it (Chinese, Japanese).
                end = (i + 1..end)
                    .find(|&j| breaks_between(&glyphs[j - 1], &glyphs[j]))
                    .unwrap_or(end);
            }
            let run = &glyphs[i..end];
            i = end;
            if space {
                // Spaces at the start of a continuation row are the break itself: dropped.
                // At the very start they are indentation and kept.
                if self.row.width == 0 && !self.rows.is_empty() {
                    continue;
                }
                pending_space = run;
                continue;
            }
            let space_width: usize = pending_space.iter().map(|g| g.width).sum();
            let word_width: usize = run.iter().map(|g| g.width).sum();
            if self.row.width + space_width + word_width <= self.room {
                for glyph in pending_space.iter().chain(run) {
                    self.row.push(glyph);
                }
            } else if word_width <= self.rest_room && self.row.width > 0 {
                self.new_row();
                for glyph in run {
                    self.row.push(glyph);
                }
            } else {
                // A word wider than a whole row: split it wherever the row ends.
                for glyph in pending_space.iter().chain(run) {
                    self.place(glyph);
                }
            }
            pending_space = &[];
        }
        // Trailing spaces are kept only on an otherwise empty first row (a blank line).
        if self.row.width == 0 && self.rows.is_empty() {
            for glyph in pending_space {
                self.place(glyph);
            }
        }
    }
}

/// `spans` cut to at most `width` cells, ending in `…` (in the style of the last kept piece)
/// when something was cut.
pub fn truncate(spans: &[Span<'_>], width: usize) -> Vec<Span<'static>> {
    let spans = without_tabs(spans);
    if spans_width(&spans) <= width {
        return spans
            .iter()
            .map(|s| Span::styled(s.content.to_string(), s.style))
            .collect();
    }
    if width == 0 {
        return Vec::new();
    }
    let mut row = Row::new(&[]);
    let mut last_style = spans.first().map(|s| s.style).unwrap_or_default();
    for glyph in glyphs(&spans) {
        if row.width + glyph.width > width - 1 {
            break;
        }
        last_style = glyph.style;
        row.push(&glyph);
    }
    row.push(&Glyph {
        symbol: "…",
        style: last_style,
        width: 1,
    });
    row.spans
}

/// Pad `line` with spaces in `style` up to `width` cells (a background that spans the row).
pub fn pad(line: &mut Line<'static>, width: usize, style: Style) {
    let used = spans_width(&line.spans);
    if used < width {
        line.spans
            .push(Span::styled(" ".repeat(width - used), style));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    fn words(text: &str, width: usize) -> Vec<String> {
        texts(&wrap(&[Span::raw(text)], width, &[], &[], Breaks::Words))
    }

    #[test]
    fn words_wrap_at_spaces_and_drop_the_break() {
        assert_eq!(
            words("the quick brown fox jumps", 10),
            ["the quick", "brown fox", "jumps"]
        );
        assert_eq!(words("fits", 10), ["fits"]);
        assert_eq!(words("", 10), [""]);
    }

    #[test]
    fn long_words_split_between_graphemes() {
        assert_eq!(words("abcdefghij kl", 4), ["abcd", "efgh", "ij", "kl"]);
    }

    #[test]
    fn leading_indentation_is_kept() {
        assert_eq!(words("  indented text", 9), ["  indente", "d text"]);
        assert_eq!(words("  two", 10), ["  two"]);
    }

    #[test]
    fn wide_cjk_and_emoji_take_two_cells() {
        // Each CJK character is two cells wide: four of them fill eight cells.
        assert_eq!(words("漢字漢字漢字", 8), ["漢字漢字", "漢字"]);
        // A wide character never straddles the edge: 7 cells hold three, not three and a half.
        assert_eq!(words("漢字漢字", 7), ["漢字漢", "字"]);
        // An emoji with a skin tone (two code points, one grapheme) is one two-cell glyph.
        assert_eq!(words("👍🏽👍🏽👍🏽", 4), ["👍🏽👍🏽", "👍🏽"]);
        assert_eq!(text_width("👍🏽"), 2);
        assert_eq!(text_width("漢a"), 3);
    }

    #[test]
    fn unspaced_scripts_break_between_characters_but_not_before_closing_marks() {
        assert_eq!(
            words("日本語のテキストを折り返す", 10),
            ["日本語のテ", "キストを折", "り返す"]
        );
        // Latin words stay whole; the row breaks inside the Japanese text beside them.
        assert_eq!(
            words("see 検索できる here", 10),
            ["see 検索で", "きる here"]
        );
        // A full stop never starts a row: it takes the character before it along.
        assert_eq!(words("漢字漢字。", 8), ["漢字漢", "字。"]);
        // An opening bracket never ends one.
        assert_eq!(words("漢字漢「字」", 8), ["漢字漢", "「字」"]);
    }

    #[test]
    fn a_glyph_wider_than_the_row_still_gets_a_row() {
        assert_eq!(words("漢字", 1), ["漢", "字"]);
        assert_eq!(words("abc", 0), ["a", "b", "c"]);
    }

    #[test]
    fn prefixes_start_first_and_following_rows() {
        let lines = wrap(
            &[Span::raw("one two three")],
            9,
            &[Span::raw("- ")],
            &[Span::raw("  ")],
            Breaks::Words,
        );
        assert_eq!(texts(&lines), ["- one two", "  three"]);
    }

    #[test]
    fn code_breaks_anywhere_and_keeps_spaces() {
        let lines = wrap(&[Span::raw("a  b  c")], 3, &[], &[], Breaks::Anywhere);
        assert_eq!(texts(&lines), ["a  ", "b  ", "c"]);
    }

    #[test]
    fn styles_survive_wrapping_and_neighbours_merge() {
        let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
        let lines = wrap(
            &[Span::raw("ab "), Span::styled("cd ef", bold)],
            5,
            &[],
            &[],
            Breaks::Words,
        );
        assert_eq!(texts(&lines), ["ab cd", "ef"]);
        assert_eq!(lines[0].spans.len(), 2);
        assert_eq!(lines[0].spans[1].style, bold);
        assert_eq!(lines[1].spans[0].style, bold);
    }

    #[test]
    fn tabs_become_spaces() {
        assert_eq!(words("a\tb", 20), ["a    b"]);
    }

    #[test]
    fn truncate_cuts_with_an_ellipsis() {
        let cut = truncate(&[Span::raw("hello world")], 6);
        assert_eq!(Line::from(cut).to_string(), "hello…");
        let whole = truncate(&[Span::raw("hi")], 6);
        assert_eq!(Line::from(whole).to_string(), "hi");
        assert!(truncate(&[Span::raw("hi")], 0).is_empty());
        // A wide character that would straddle the cut is left out entirely.
        let cjk = truncate(&[Span::raw("漢字漢字")], 4);
        assert_eq!(Line::from(cjk).to_string(), "漢…");
    }

    #[test]
    fn pad_fills_the_row() {
        let mut line = Line::from("ab");
        pad(&mut line, 5, Style::new());
        assert_eq!(line.to_string(), "ab   ");
        pad(&mut line, 3, Style::new());
        assert_eq!(line.to_string(), "ab   ");
    }
}
