//! Diffs on screen: the inline hunk list of the permission banner and the full-screen side-by-side
//! view. A [`TextDiff`] and its word-level detail go in, a [`DiffLayout`] of rows for one width
//! comes out, and the rows on screen are drawn from it.
//!
//! A Markdown paragraph is one long line, and the person approving an edit must be able to read
//! all of it: long lines wrap at word boundaries within the pane (by display width), continuation
//! rows keep the line-number gutter blank, and the words that changed inside a changed line are
//! drawn in their own roles. Tabs and control characters are made visible first so that what is
//! counted is what is drawn.

use crate::text::diff::{DiffLine, Hunk, LineKind, TextDiff};
use crate::text::word_diff::{HunkWords, WordSpan};
use crate::tui::chat::wrap::{self, Breaks};
use crate::tui::theme::{Role, Theme};
use crate::tui::width::TAB_WIDTH;
use crate::tui::width::TERMINAL;
pub use crate::tui::width::{display_width, truncate};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use std::ops::Range;

/// Marks the hunk the banner points at (on its header line).
pub const CURRENT_MARK: &str = "▶";
/// Marks the lines of the hunk the banner points at.
const CURRENT_BAR: &str = "▎";
/// Marks a hunk the person toggled off.
pub const REJECTED_MARK: &str = "✗";

// ---------------------------------------------------------------------------------------------
// Making text printable (measuring and cutting is `tui::width`; tab stops are counted from the
// start of the line's text)

/// `text` made safe to draw on one row: tabs expanded to spaces, control characters shown as
/// their Unicode control pictures (the buffer would drop them, and the columns would no longer
/// line up with what was measured).
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut column = 0;
    for c in text.chars() {
        match c {
            '\t' => {
                let spaces = TAB_WIDTH - column % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            '\u{0}'..='\u{1f}' => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('�'));
                column += 1;
            }
            '\u{7f}' => {
                out.push('␡');
                column += 1;
            }
            '\u{80}'..='\u{9f}' => {
                out.push('�');
                column += 1;
            }
            _ => {
                out.push(c);
                column += display_width(c.encode_utf8(&mut [0; 4]));
            }
        }
    }
    out
}

/// The spans cut to `width` columns in total; the last visible span ends in `…` when anything
/// was cut.
pub fn fit_spans(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let total: usize = spans.iter().map(Span::width).sum();
    if total <= width {
        return Line::from(spans);
    }
    let mut out = Vec::new();
    let mut left = width;
    for span in spans {
        let w = span.width();
        if w < left {
            left -= w;
            out.push(span);
        } else {
            // This span reaches the edge (and something follows it): it carries the `…`.
            out.push(Span::styled(
                TERMINAL.cut_end(&span.content, left),
                span.style,
            ));
            break;
        }
    }
    Line::from(out)
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

/// `start,len` as unified diffs write it: 1-based, and an empty range names the line before it.
fn unified_range(start: usize, len: usize) -> String {
    let first = if len == 0 { start } else { start + 1 };
    format!("{first},{len}")
}

/// `@@ -a,b +c,d @@` with 1-based line numbers, as GNU diff writes it.
pub fn hunk_header(hunk: &Hunk) -> String {
    format!(
        "@@ -{} +{} @@",
        unified_range(hunk.old_start, hunk.old_len),
        unified_range(hunk.new_start, hunk.new_len)
    )
}

/// Columns for the widest line number of the diff, so every gutter lines up.
fn gutter_width(diff: &TextDiff) -> usize {
    let largest = diff
        .hunks
        .iter()
        .map(|h| (h.old_start + h.old_len).max(h.new_start + h.new_len))
        .max()
        .unwrap_or(1)
        .max(1);
    largest.to_string().len()
}

/// A line with its old and new line numbers (1-based; `None` on the side it is not in).
struct NumberedLine<'a> {
    old: Option<usize>,
    new: Option<usize>,
    line: &'a DiffLine,
}

fn numbered(hunk: &Hunk) -> impl Iterator<Item = NumberedLine<'_>> {
    let mut old = hunk.old_start + 1;
    let mut new = hunk.new_start + 1;
    hunk.lines.iter().map(move |line| {
        let (o, n) = match line.kind {
            LineKind::Context => (Some(old), Some(new)),
            LineKind::Removed => (Some(old), None),
            LineKind::Added => (None, Some(new)),
        };
        old += usize::from(o.is_some());
        new += usize::from(n.is_some());
        NumberedLine {
            old: o,
            new: n,
            line,
        }
    })
}

fn kind_role(kind: LineKind) -> Role {
    match kind {
        LineKind::Context => Role::DiffContext,
        LineKind::Added => Role::DiffAdded,
        LineKind::Removed => Role::DiffRemoved,
    }
}

fn sign(kind: LineKind) -> &'static str {
    match kind {
        LineKind::Context => " ",
        LineKind::Added => "+",
        LineKind::Removed => "-",
    }
}

fn number(n: Option<usize>, width: usize) -> String {
    match n {
        Some(n) => format!("{n:>width$}"),
        None => " ".repeat(width),
    }
}

/// The label beside a rejected hunk's header: the rejected look without the strike-through, so
/// the word itself stays readable.
fn rejected_label_style(theme: &Theme) -> Style {
    theme
        .style(Role::HunkRejected)
        .remove_modifier(Modifier::CROSSED_OUT)
}

/// Whether hunk `index` is accepted; a missing flag counts as accepted (nothing was toggled).
fn is_accepted(accepted: &[bool], index: usize) -> bool {
    accepted.get(index).copied().unwrap_or(true)
}

// ---------------------------------------------------------------------------------------------
// Laying out: a diff as rows of one width

/// Below this many columns for the text, lines are cut with `…` instead of wrapped: a column of
/// a few characters per row is unreadable either way, and a long note would become thousands of
/// rows.
const MIN_WRAP_ROOM: usize = 12;

/// Marks the changed words while text goes through the wrapper, which keeps each piece's style;
/// never drawn (rows are styled from their [`Piece`]s when drawn).
const WORD_MARK: Style = Style::new().add_modifier(Modifier::REVERSED);

/// A run of text on one row and whether it is a changed word (or words).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    text: String,
    word: bool,
}

/// One row of one line's text: the whole line, or one of its wrapped rows.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TextRow {
    kind: LineKind,
    /// The line's old and new numbers, on its first row only (continuation rows keep the
    /// gutter blank).
    old: Option<usize>,
    new: Option<usize>,
    first: bool,
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum RowBody {
    /// The name of the file whose hunks follow, in a change to several files; `hunks` are its
    /// hunks' indexes (to say when all of them are rejected).
    File { label: String, hunks: Range<usize> },
    /// The hunk's `@@` header.
    Header,
    /// A row of the inline view.
    Inline(TextRow),
    /// A row of the side-by-side view: old text left, new text right; `None` is blank.
    Side {
        left: Option<TextRow>,
        right: Option<TextRow>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct DiffRow {
    hunk: usize,
    body: RowBody,
}

/// A diff laid out as screen rows for one width: long lines wrapped at word boundaries (by
/// display width: CJK and emoji take two columns), changed words marked inside changed lines.
/// Built once per width; drawing styles only the rows on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLayout {
    rows: Vec<DiffRow>,
    hunk_starts: Vec<usize>,
    gutter: usize,
    width: u16,
    /// Side by side (two halves per row) rather than inline.
    side: bool,
}

/// A line's text as rows of at most `room` columns, its changed words (`spans` with `changed`)
/// marked. Always at least one row.
fn wrap_line(text: &str, spans: &[WordSpan], room: usize) -> Vec<Vec<Piece>> {
    let styled: Vec<Span<'static>> = if spans.is_empty() {
        vec![Span::raw(printable(text))]
    } else {
        spans
            .iter()
            .filter_map(|s| {
                let piece = text.get(s.range.clone())?;
                let style = if s.changed { WORD_MARK } else { Style::new() };
                Some(Span::styled(printable(piece), style))
            })
            .collect()
    };
    let pieces = |spans: Vec<Span<'static>>| -> Vec<Piece> {
        spans
            .into_iter()
            .map(|s| Piece {
                word: s.style == WORD_MARK,
                text: s.content.into_owned(),
            })
            .collect()
    };
    if room < MIN_WRAP_ROOM {
        return vec![pieces(wrap::truncate(&styled, room))];
    }
    wrap::wrap(&styled, room, &[], &[], Breaks::Words)
        .into_iter()
        .map(|line| pieces(line.spans))
        .collect()
}

/// The rows of one line of a hunk.
fn text_rows(numbered: &NumberedLine<'_>, spans: &[WordSpan], room: usize) -> Vec<TextRow> {
    wrap_line(&numbered.line.text, spans, room)
        .into_iter()
        .enumerate()
        .map(|(row, pieces)| TextRow {
            kind: numbered.line.kind,
            old: numbered.old.filter(|_| row == 0),
            new: numbered.new.filter(|_| row == 0),
            first: row == 0,
            pieces,
        })
        .collect()
}

/// Columns before an inline row's text: mark, old and new numbers, sign, each with a space.
fn inline_prefix_width(gutter: usize) -> usize {
    2 * gutter + 6
}

/// Columns before a side-by-side half's text: mark (or space), number, sign, each with a space.
fn side_prefix_width(gutter: usize) -> usize {
    gutter + 4
}

/// The widths of the left and right halves of a side-by-side row (a `│` between them).
fn side_halves(width: usize) -> (usize, usize) {
    let left = width.saturating_sub(1) / 2;
    (left, width.saturating_sub(left + 1))
}

impl DiffLayout {
    /// The banner's inline view: per hunk an `@@ -a,b +c,d @@` header, then each line with its
    /// old and new numbers and a sign, wrapped to `width` columns.
    pub fn inline(diff: &TextDiff, words: &[HunkWords], width: u16) -> DiffLayout {
        let gutter = gutter_width(diff);
        let room = usize::from(width).saturating_sub(inline_prefix_width(gutter));
        let mut layout = DiffLayout::empty(gutter, width, false);
        for (index, hunk) in diff.hunks.iter().enumerate() {
            layout.start_hunk(index);
            let hunk_words = words.get(index);
            for (line, numbered) in numbered(hunk).enumerate() {
                let spans = hunk_words.map_or(&[][..], |w| w.spans_of(line));
                for row in text_rows(&numbered, spans, room) {
                    layout.rows.push(DiffRow {
                        hunk: index,
                        body: RowBody::Inline(row),
                    });
                }
            }
        }
        layout
    }

    /// The full-screen view: old text left, new text right, `width` columns in all. Unchanged
    /// lines face themselves; a changed line faces the line it was paired with (its other
    /// version); other changes of a run face each other in order, the shorter side blank.
    pub fn side_by_side(diff: &TextDiff, words: &[HunkWords], width: u16) -> DiffLayout {
        let gutter = gutter_width(diff);
        let (left, right) = side_halves(usize::from(width));
        // A column of margin keeps the text off the divider and the right edge.
        let rooms = (
            left.saturating_sub(side_prefix_width(gutter) + 1),
            right.saturating_sub(side_prefix_width(gutter) + 1),
        );
        let mut layout = DiffLayout::empty(gutter, width, true);
        let no_words = HunkWords::default();
        for (index, hunk) in diff.hunks.iter().enumerate() {
            layout.start_hunk(index);
            let hunk_words = words.get(index).unwrap_or(&no_words);
            let lines: Vec<NumberedLine<'_>> = numbered(hunk).collect();
            let mut at = 0;
            while at < lines.len() {
                if lines[at].line.kind == LineKind::Context {
                    layout.push_side(
                        index,
                        Some(&lines[at]),
                        Some(&lines[at]),
                        hunk_words,
                        at,
                        at,
                        rooms,
                    );
                    at += 1;
                    continue;
                }
                let run_end = (at..lines.len())
                    .find(|&i| lines[i].line.kind == LineKind::Context)
                    .unwrap_or(lines.len());
                for (old, new) in side_pairs(&lines, at..run_end, hunk_words) {
                    layout.push_side(
                        index,
                        old.map(|i| &lines[i]),
                        new.map(|i| &lines[i]),
                        hunk_words,
                        old.unwrap_or(0),
                        new.unwrap_or(0),
                        rooms,
                    );
                }
                at = run_end;
            }
        }
        layout
    }

    /// The same layout with a row naming each file above its first hunk, for a change to several
    /// files: `files` holds each file's label and its hunks (indexes into the diff, in order).
    /// A file's row belongs to its first hunk, so bringing that hunk into view shows its name.
    pub fn with_files(mut self, files: &[(String, Range<usize>)]) -> DiffLayout {
        if files.is_empty() {
            return self;
        }
        let mut rows = Vec::with_capacity(self.rows.len() + files.len());
        let mut next_file = files
            .iter()
            .filter(|(_, hunks)| !hunks.is_empty())
            .peekable();
        for (at, row) in self.rows.drain(..).enumerate() {
            let starts_hunk = self.hunk_starts.get(row.hunk) == Some(&at);
            if starts_hunk
                && let Some((label, hunks)) = next_file.next_if(|(_, h)| h.start == row.hunk)
            {
                rows.push(DiffRow {
                    hunk: row.hunk,
                    body: RowBody::File {
                        label: label.clone(),
                        hunks: hunks.clone(),
                    },
                });
            }
            rows.push(row);
        }
        self.rows = rows;
        self.hunk_starts.clear();
        for (at, row) in self.rows.iter().enumerate() {
            if self.hunk_starts.len() == row.hunk {
                self.hunk_starts.push(at);
            }
        }
        self
    }

    fn empty(gutter: usize, width: u16, side: bool) -> DiffLayout {
        DiffLayout {
            rows: Vec::new(),
            hunk_starts: Vec::new(),
            gutter,
            width,
            side,
        }
    }

    fn start_hunk(&mut self, hunk: usize) {
        self.hunk_starts.push(self.rows.len());
        self.rows.push(DiffRow {
            hunk,
            body: RowBody::Header,
        });
    }

    /// One side-by-side pair of lines (line indexes `old_at`/`new_at` in the hunk), as many
    /// rows as the longer side needs.
    #[allow(clippy::too_many_arguments)]
    fn push_side(
        &mut self,
        hunk: usize,
        old: Option<&NumberedLine<'_>>,
        new: Option<&NumberedLine<'_>>,
        words: &HunkWords,
        old_at: usize,
        new_at: usize,
        (left_room, right_room): (usize, usize),
    ) {
        // A context line shows the same text on both sides, numbered by its side.
        let side = |line: Option<&NumberedLine<'_>>, at: usize, room: usize, is_old: bool| {
            line.map(|numbered| {
                let one_side = NumberedLine {
                    old: if is_old { numbered.old } else { None },
                    new: if is_old { None } else { numbered.new },
                    line: numbered.line,
                };
                text_rows(&one_side, words.spans_of(at), room)
            })
            .unwrap_or_default()
        };
        let left = side(old, old_at, left_room, true);
        let right = side(new, new_at, right_room, false);
        let count = left.len().max(right.len());
        let mut left = left.into_iter();
        let mut right = right.into_iter();
        for _ in 0..count {
            self.rows.push(DiffRow {
                hunk,
                body: RowBody::Side {
                    left: left.next(),
                    right: right.next(),
                },
            });
        }
    }

    /// The width the layout was made for.
    pub fn width(&self) -> u16 {
        self.width
    }

    /// How many rows there are in all.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The row of each hunk's header.
    pub fn hunk_starts(&self) -> &[usize] {
        &self.hunk_starts
    }

    /// The rows of hunk `hunk`, header included (empty past the last hunk).
    pub fn hunk_rows(&self, hunk: usize) -> Range<usize> {
        let Some(&start) = self.hunk_starts.get(hunk) else {
            return self.len()..self.len();
        };
        let end = self
            .hunk_starts
            .get(hunk + 1)
            .copied()
            .unwrap_or(self.len());
        start..end
    }

    /// The hunk that row `row` belongs to (the last one for a row past the end).
    pub fn hunk_at(&self, row: usize) -> usize {
        self.rows
            .get(row)
            .map(|r| r.hunk)
            .unwrap_or_else(|| self.hunk_starts.len().saturating_sub(1))
    }

    /// Rows `rows` as lines of the layout's width, styled: the current hunk marked `▶`/`▎`, a
    /// hunk whose flag in `accepted` is false in the rejected style and marked `✗` (a missing
    /// flag counts as accepted), changed words in their own roles.
    pub fn lines(
        &self,
        diff: &TextDiff,
        theme: &Theme,
        rows: Range<usize>,
        current_hunk: Option<usize>,
        accepted: &[bool],
    ) -> Vec<Line<'static>> {
        let width = usize::from(self.width);
        let rows = rows.start.min(self.len())..rows.end.min(self.len());
        self.rows[rows]
            .iter()
            .map(|row| {
                let look = RowLook {
                    current: current_hunk == Some(row.hunk),
                    accepted: is_accepted(accepted, row.hunk),
                    gutter: self.gutter,
                    theme,
                };
                match &row.body {
                    RowBody::File { label, hunks } => {
                        let rejected = hunks.clone().all(|h| !is_accepted(accepted, h));
                        look.file(label, rejected, width)
                    }
                    RowBody::Header => match diff.hunks.get(row.hunk) {
                        Some(hunk) => look.header(hunk, width, self.side),
                        None => Line::default(),
                    },
                    RowBody::Inline(text) => look.inline(text, width),
                    RowBody::Side { left, right } => {
                        look.side(left.as_ref(), right.as_ref(), width)
                    }
                }
            })
            .collect()
    }
}

/// The lines of a run of changes (`run`, indexes into `lines`) as side-by-side pairs of line
/// indexes: paired lines face each other; unpaired ones face the next unpaired line of the
/// other side, or a blank.
fn side_pairs(
    lines: &[NumberedLine<'_>],
    run: Range<usize>,
    words: &HunkWords,
) -> Vec<(Option<usize>, Option<usize>)> {
    let removed: Vec<usize> = run
        .clone()
        .filter(|&i| lines[i].line.kind == LineKind::Removed)
        .collect();
    let added: Vec<usize> = run
        .filter(|&i| lines[i].line.kind == LineKind::Added)
        .collect();
    let mut pairs = Vec::new();
    let (mut r, mut a) = (0, 0);
    loop {
        match (removed.get(r).copied(), added.get(a).copied()) {
            (None, None) => break,
            (Some(old), Some(new)) => {
                let old_partner = words.partner_of(old);
                let new_partner = words.partner_of(new);
                if old_partner == Some(new) || (old_partner.is_none() && new_partner.is_none()) {
                    pairs.push((Some(old), Some(new)));
                    r += 1;
                    a += 1;
                } else if old_partner.is_none() {
                    // The added line waits for its own partner further down the left side.
                    pairs.push((Some(old), None));
                    r += 1;
                } else {
                    pairs.push((None, Some(new)));
                    a += 1;
                }
            }
            (Some(old), None) => {
                pairs.push((Some(old), None));
                r += 1;
            }
            (None, Some(new)) => {
                pairs.push((None, Some(new)));
                a += 1;
            }
        }
    }
    pairs
}

// ---------------------------------------------------------------------------------------------
// Drawing rows

/// How the rows of one hunk are drawn.
struct RowLook<'a> {
    current: bool,
    accepted: bool,
    gutter: usize,
    theme: &'a Theme,
}

impl RowLook<'_> {
    fn mark(&self, header: bool) -> Span<'static> {
        if self.current {
            let mark = if header { CURRENT_MARK } else { CURRENT_BAR };
            Span::styled(mark, self.theme.style(Role::HunkSelected))
        } else if header && !self.accepted {
            Span::styled(REJECTED_MARK, rejected_label_style(self.theme))
        } else {
            Span::raw(" ")
        }
    }

    fn rejected_label(&self) -> Option<Span<'static>> {
        (!self.accepted).then(|| {
            Span::styled(
                format!(" {REJECTED_MARK} rejected"),
                rejected_label_style(self.theme),
            )
        })
    }

    /// `■ Projects/Plan.md ───` above a file's hunks (`✗ … not changed` when all are rejected).
    fn file(&self, label: &str, rejected: bool, width: usize) -> Line<'static> {
        let strong = self.theme.style(Role::Text).add_modifier(Modifier::BOLD);
        let mut spans = vec![Span::styled(format!("■ {}", printable(label)), strong)];
        if rejected {
            spans.push(Span::styled(
                format!(" {REJECTED_MARK} not changed"),
                rejected_label_style(self.theme),
            ));
        }
        with_rule(spans, width, self.theme)
    }

    /// `▶ @@ -a,b +c,d @@ ───`, or for side by side `▶ @@ -a,b @@ ──│ @@ +c,d @@ ──`.
    fn header(&self, hunk: &Hunk, width: usize, side: bool) -> Line<'static> {
        let style = self.theme.style(Role::DiffHunkHeader);
        if !side {
            let mut spans = vec![
                self.mark(true),
                Span::raw(" "),
                Span::styled(hunk_header(hunk), style),
            ];
            spans.extend(self.rejected_label());
            return with_rule(spans, width, self.theme);
        }
        let (left_width, right_width) = side_halves(width);
        let left = vec![
            self.mark(true),
            Span::raw(" "),
            Span::styled(
                format!("@@ -{} @@", unified_range(hunk.old_start, hunk.old_len)),
                style,
            ),
        ];
        let mut right = vec![
            Span::raw(" "),
            Span::styled(
                format!("@@ +{} @@", unified_range(hunk.new_start, hunk.new_len)),
                style,
            ),
        ];
        right.extend(self.rejected_label());
        self.halves(
            with_rule(left, left_width, self.theme),
            with_rule(right, right_width, self.theme),
            width,
        )
    }

    /// The two halves of a side-by-side row with the divider between them.
    fn halves(&self, left: Line<'static>, right: Line<'static>, width: usize) -> Line<'static> {
        let (left_width, right_width) = side_halves(width);
        let mut spans = fit_spans(left.spans, left_width).spans;
        let used: usize = spans.iter().map(Span::width).sum();
        spans.push(Span::raw(" ".repeat(left_width.saturating_sub(used))));
        if width > left_width {
            spans.push(Span::styled("│", self.theme.style(Role::Border)));
            spans.extend(fit_spans(right.spans, right_width).spans);
        }
        fit_spans(spans, width)
    }

    /// The styles of a line of `kind`: gutter, the line's text, its changed words.
    fn styles(&self, kind: LineKind) -> (Style, Style, Style) {
        if !self.accepted {
            let rejected = self.theme.style(Role::HunkRejected);
            return (rejected, rejected, rejected);
        }
        let word = match kind {
            LineKind::Added => Role::DiffAddedWord,
            LineKind::Removed => Role::DiffRemovedWord,
            LineKind::Context => Role::DiffContext,
        };
        (
            self.theme.style(Role::DiffGutter),
            self.theme.style(kind_role(kind)),
            self.theme.style(word),
        )
    }

    /// Sign and text filling `width` columns in the line's style (so a background spans the
    /// row); the sign only on a line's first row.
    fn text_spans(&self, row: &TextRow, width: usize) -> Vec<Span<'static>> {
        let (_, line_style, word_style) = self.styles(row.kind);
        let sign = if row.first { sign(row.kind) } else { " " };
        let mut spans = vec![Span::styled(format!("{sign} "), line_style)];
        spans.extend(row.pieces.iter().map(|piece| {
            let style = if piece.word { word_style } else { line_style };
            Span::styled(piece.text.clone(), style)
        }));
        let used: usize = spans.iter().map(Span::width).sum();
        if used < width {
            spans.push(Span::styled(" ".repeat(width - used), line_style));
        }
        fit_spans(spans, width).spans
    }

    /// `▎ 6 7 + text…`: mark, old and new numbers (blank on continuation rows), sign, text.
    fn inline(&self, row: &TextRow, width: usize) -> Line<'static> {
        let (gutter_style, _, _) = self.styles(row.kind);
        let mut spans = vec![
            self.mark(false),
            Span::raw(" "),
            Span::styled(number(row.old, self.gutter), gutter_style),
            Span::raw(" "),
            Span::styled(number(row.new, self.gutter), gutter_style),
            Span::raw(" "),
        ];
        // The sign and its space are part of the text spans.
        let prefix = inline_prefix_width(self.gutter) - 2;
        if width > prefix {
            spans.extend(self.text_spans(row, width - prefix));
        }
        fit_spans(spans, width)
    }

    /// One half: `▎6 - text` on the left (the mark column), ` 6 + text` on the right; blank
    /// for `None`.
    fn side_half(&self, row: Option<&TextRow>, width: usize, lead: Span<'static>) -> Line<'static> {
        let Some(row) = row else {
            return Line::from(vec![lead, Span::raw(" ".repeat(width.saturating_sub(1)))]);
        };
        let (gutter_style, _, _) = self.styles(row.kind);
        let number = number(row.old.or(row.new), self.gutter);
        let mut spans = vec![lead, Span::styled(format!("{number} "), gutter_style)];
        let prefix = side_prefix_width(self.gutter) - 2;
        if width > prefix {
            spans.extend(self.text_spans(row, width - prefix));
        }
        fit_spans(spans, width)
    }

    fn side(&self, left: Option<&TextRow>, right: Option<&TextRow>, width: usize) -> Line<'static> {
        let (left_width, right_width) = side_halves(width);
        self.halves(
            self.side_half(left, left_width, self.mark(false)),
            self.side_half(right, right_width, Span::raw(" ")),
            width,
        )
    }
}

/// A header half with a rule to its edge.
fn with_rule(mut spans: Vec<Span<'static>>, width: usize, theme: &Theme) -> Line<'static> {
    let used: usize = spans.iter().map(Span::width).sum();
    if used + 2 <= width {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            "─".repeat(width - used - 1),
            theme.style(Role::Border),
        ));
    }
    fit_spans(spans, width)
}

/// Draw rows from `scroll` on (clamped so the last page stays full) into `area`, which should
/// be as wide as the layout.
#[allow(clippy::too_many_arguments)]
pub fn draw_rows(
    layout: &DiffLayout,
    area: Rect,
    buf: &mut Buffer,
    diff: &TextDiff,
    theme: &Theme,
    scroll: usize,
    current_hunk: Option<usize>,
    accepted: &[bool],
) {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    let height = usize::from(area.height);
    let scroll = scroll.min(layout.len().saturating_sub(height));
    let lines = layout.lines(diff, theme, scroll..scroll + height, current_hunk, accepted);
    for (offset, line) in lines.iter().enumerate() {
        buf.set_line(area.x, area.y + offset as u16, line, area.width);
    }
}

// ---------------------------------------------------------------------------------------------
// Scroll bar

/// A vertical scroll bar in the one-column `area` for `total` rows of which the rows from
/// `offset` on are shown; nothing when everything fits.
pub fn scrollbar(area: Rect, buf: &mut Buffer, theme: &Theme, total: usize, offset: usize) {
    let area = area.intersection(buf.area);
    let height = usize::from(area.height);
    if area.is_empty() || total <= height {
        return;
    }
    let style = theme.style(Role::Scrollbar);
    let thumb = (height * height / total).clamp(1, height);
    let max_offset = total - height;
    let travel = height - thumb;
    let top = (offset.min(max_offset) * travel + max_offset / 2) / max_offset.max(1);
    for row in 0..height {
        let symbol = if (top..top + thumb).contains(&row) {
            "█"
        } else {
            "│"
        };
        buf.set_string(area.x, area.y + row as u16, symbol, style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text, look, style_at, style_at_offset};

    fn small_diff() -> TextDiff {
        TextDiff::new(
            "# Plan\n\nShip it.\nTest it.\nDone.\n",
            "# Plan\n\nShip it soon.\nTest it.\nDocument it.\nDone.\n",
        )
    }

    fn two_hunks() -> TextDiff {
        let before: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let after = before
            .replace("line 3\n", "line three\n")
            .replace("line 25\n", "");
        TextDiff::new(&before, &after)
    }

    fn text_of(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn truncation_cuts_with_an_ellipsis_and_counts_wide_characters() {
        assert_eq!(truncate("hello world", 20), "hello world");
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("hello", 0), "");
        assert_eq!(truncate("日本語のテキスト", 7), "日本語…");
    }

    #[test]
    fn tabs_and_control_characters_become_visible_columns() {
        assert_eq!(printable("a\tb"), "a   b");
        assert_eq!(printable("\tx"), "    x");
        assert_eq!(printable("a\u{7}b"), "a␇b");
        assert_eq!(printable("a\rb"), "a␍b");
    }

    #[test]
    fn spans_are_cut_to_the_width_with_an_ellipsis() {
        let line = fit_spans(vec![Span::raw("abc"), Span::raw("defgh")], 6);
        assert_eq!(text_of(&line), "abcde…");
        let line = fit_spans(vec![Span::raw("abc"), Span::raw("def")], 3);
        assert_eq!(text_of(&line), "ab…");
        let line = fit_spans(vec![Span::raw("abc")], 3);
        assert_eq!(text_of(&line), "abc");
    }

    #[test]
    fn headers_are_one_based_like_unified_diff() {
        let diff = small_diff();
        assert_eq!(hunk_header(&diff.hunks[0]), "@@ -1,5 +1,6 @@");
        let hunk = Hunk {
            old_start: 4,
            old_len: 0,
            new_start: 4,
            new_len: 1,
            lines: vec![],
            added: 1,
            removed: 0,
        };
        assert_eq!(hunk_header(&hunk), "@@ -4,0 +5,1 @@");
    }

    fn inline(diff: &TextDiff, width: u16) -> DiffLayout {
        DiffLayout::inline(diff, &diff.words(), width)
    }

    fn all_lines(
        layout: &DiffLayout,
        diff: &TextDiff,
        current: Option<usize>,
        accepted: &[bool],
    ) -> Vec<Line<'static>> {
        layout.lines(
            diff,
            &Theme::builtin_dark(),
            0..layout.len(),
            current,
            accepted,
        )
    }

    /// A paragraph of about 450 characters, as Markdown keeps it: one line.
    const PARAGRAPH: &str = "Plan the vegetable beds for spring. Tomatoes go along the south fence, where they get sun from late morning until evening; the herb spiral needs more light than the old apple tree allows, so it moves to the corner by the shed. Beans climb the north trellis again this year, and the compost bin stays behind the greenhouse where the hose reaches it. Order seeds before the end of February, because the good varieties sell out early every year.";

    fn paragraph_rewrite() -> (String, String) {
        let new = PARAGRAPH
            .replace("south fence", "west fence")
            .replace("corner by the shed", "sunny corner by the gate")
            .replace("before the end of February", "by mid-February");
        (
            format!("# Garden\n\n{PARAGRAPH}\n\n- basil\n"),
            format!("# Garden\n\n{new}\n\n- basil\n"),
        )
    }

    /// The text column of the rows of the line whose first row starts with `sign`, joined.
    fn joined_text(texts: &[String], sign: char, text_column: usize) -> String {
        let first = texts
            .iter()
            .position(|t| t.chars().nth(text_column - 2) == Some(sign))
            .unwrap_or(texts.len());
        let mut words = Vec::new();
        for (row, text) in texts.iter().enumerate().skip(first) {
            let gutter: String = text.chars().take(text_column).collect();
            if row > first && gutter.trim_start_matches('▎').trim() != "" {
                break;
            }
            let body: String = text.chars().skip(text_column).collect();
            words.push(body.trim().to_string());
        }
        words.join(" ")
    }

    #[test]
    fn inline_lines_carry_numbers_signs_and_marks() {
        let diff = small_diff();
        let theme = Theme::builtin_dark();
        let layout = inline(&diff, 60);
        let lines = all_lines(&layout, &diff, Some(0), &[true]);
        let texts: Vec<String> = lines.iter().map(text_of).collect();
        assert_eq!(lines.len(), layout.len());
        assert_eq!(layout.hunk_starts(), &[0]);
        assert!(texts[0].starts_with("▶ @@ -1,5 +1,6 @@ ─"), "{}", texts[0]);
        assert!(texts[1].starts_with("▎ 1 1   # Plan"), "{}", texts[1]);
        assert!(texts[3].starts_with("▎ 3   - Ship it."), "{}", texts[3]);
        assert!(
            texts[4].starts_with("▎   3 + Ship it soon."),
            "{}",
            texts[4]
        );
        for line in &lines {
            assert_eq!(line.width(), 60, "every line fills the width");
        }
        let removed = &lines[3].spans.last().map(|s| s.style);
        assert_eq!(*removed, Some(theme.style(Role::DiffRemoved)));
        let added = &lines[4].spans.last().map(|s| s.style);
        assert_eq!(*added, Some(theme.style(Role::DiffAdded)));
    }

    #[test]
    fn a_rejected_hunk_is_marked_and_greyed() {
        let diff = two_hunks();
        let theme = Theme::builtin_dark();
        let layout = inline(&diff, 50);
        let lines = all_lines(&layout, &diff, Some(0), &[true, false]);
        let starts = layout.hunk_starts();
        let header = text_of(&lines[starts[1]]);
        assert!(header.starts_with("✗ @@"), "{header}");
        assert!(header.contains("✗ rejected"), "{header}");
        let body = &lines[starts[1] + 1];
        assert_eq!(
            body.spans.last().map(|s| s.style),
            Some(theme.style(Role::HunkRejected))
        );
        let accepted_body = &lines[starts[0] + 1];
        assert_ne!(
            accepted_body.spans.last().map(|s| s.style),
            Some(theme.style(Role::HunkRejected))
        );
        // Every row of the rejected hunk, changed words included, is in the rejected style.
        let three = layout
            .lines(&diff, &theme, 0..layout.len(), None, &[false, true])
            .into_iter()
            .find(|l| text_of(l).contains("line three"))
            .map(|l| l.spans)
            .unwrap_or_default();
        assert!(
            three
                .iter()
                .skip(2)
                .all(|s| s.style == theme.style(Role::HunkRejected) || s.content.trim().is_empty()),
            "{three:?}"
        );
    }

    #[test]
    fn a_long_paragraph_wraps_at_words_with_a_blank_gutter() {
        let (before, after) = paragraph_rewrite();
        let diff = TextDiff::new(&before, &after);
        let width = 60;
        let layout = inline(&diff, width);
        let lines = all_lines(&layout, &diff, Some(0), &[true]);
        let texts: Vec<String> = lines.iter().map(text_of).collect();
        for (line, text) in lines.iter().zip(&texts) {
            assert_eq!(line.width(), usize::from(width), "{text}");
        }
        // Text starts after `▎ 3 3 - ` (gutter of one digit): column 8.
        let column = inline_prefix_width(1);
        let old = joined_text(&texts, '-', column);
        let new = joined_text(&texts, '+', column);
        assert_eq!(old, PARAGRAPH, "{texts:#?}");
        assert_eq!(new, after.lines().nth(2).unwrap_or_default(), "{texts:#?}");
        // Several rows per side, each continuation row with a blank gutter and no sign.
        let removed_rows = texts
            .iter()
            .skip_while(|t| !t.starts_with("▎ 3   - "))
            .take_while(|t| !t.contains(" + "))
            .count();
        assert!(removed_rows >= 8, "{texts:#?}");
        assert!(
            texts.iter().any(|t| t.starts_with("▎         Tomatoes")
                || t.starts_with(&format!("▎{}", " ".repeat(column - 1)))),
            "{texts:#?}"
        );
    }

    #[test]
    fn changed_words_have_their_own_style_beside_unchanged_words() {
        let (before, after) = paragraph_rewrite();
        let diff = TextDiff::new(&before, &after);
        let theme = Theme::builtin_dark();
        let layout = inline(&diff, 80);
        let lines = all_lines(&layout, &diff, Some(0), &[true]);
        let style_of = |needle: &str| {
            lines.iter().find_map(|line| {
                line.spans
                    .iter()
                    .find(|s| s.content.contains(needle))
                    .map(|s| s.style)
            })
        };
        assert_eq!(style_of("west"), Some(theme.style(Role::DiffAddedWord)));
        assert_eq!(style_of("south"), Some(theme.style(Role::DiffRemovedWord)));
        assert_eq!(style_of("sunny"), Some(theme.style(Role::DiffAddedWord)));
        // "by mid-" is new, "February" was there before.
        assert_eq!(style_of("mid-"), Some(theme.style(Role::DiffAddedWord)));
        // "Tomatoes go along the" is the same on both sides: the line's own style.
        let unchanged: Vec<Style> = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .filter(|s| s.content.contains("Tomatoes go along the"))
            .map(|s| s.style)
            .collect();
        assert_eq!(
            unchanged,
            vec![theme.style(Role::DiffRemoved), theme.style(Role::DiffAdded)]
        );
    }

    #[test]
    fn cjk_and_emoji_wrap_by_display_width() {
        let old = "今日は雨です。".repeat(12);
        let new = format!("{} 🌱🌱", "今日は晴れです。".repeat(12));
        let diff = TextDiff::new(&format!("{old}\n"), &format!("{new}\n"));
        for width in [30u16, 41, 80] {
            let layout = inline(&diff, width);
            let lines = all_lines(&layout, &diff, None, &[]);
            assert!(lines.len() > 3, "wraps at {width}");
            let texts: Vec<String> = lines.iter().map(text_of).collect();
            for line in &lines {
                assert_eq!(line.width(), usize::from(width), "{texts:#?}");
            }
            let joined: String = texts
                .iter()
                .skip(1)
                .map(|t| t.chars().skip(inline_prefix_width(1)).collect::<String>())
                .collect::<String>()
                .replace(' ', "");
            assert_eq!(joined, format!("{old}{new}").replace(' ', ""));
        }
    }

    #[test]
    fn narrow_panes_cut_instead_of_wrapping_and_never_overflow() {
        let diff = TextDiff::new("short\n", &format!("{}\n", "word ".repeat(100)));
        let layout = inline(&diff, 16);
        // 16 columns leave 8 for text: too few to wrap, so the line is cut.
        assert_eq!(layout.len(), 3);
        let lines = all_lines(&layout, &diff, None, &[]);
        assert!(text_of(&lines[2]).ends_with('…'), "{}", text_of(&lines[2]));
        for width in [0, 1, 3, 7, 16, 21, 40] {
            let layout = inline(&diff, width);
            for line in all_lines(&layout, &diff, Some(0), &[]) {
                assert!(line.width() <= usize::from(width));
            }
            let layout = DiffLayout::side_by_side(&diff, &diff.words(), width);
            for line in all_lines(&layout, &diff, Some(0), &[]) {
                assert!(line.width() <= usize::from(width));
            }
        }
    }

    #[test]
    fn hunk_rows_and_hunk_at_agree_with_the_headers() {
        let diff = two_hunks();
        let layout = inline(&diff, 40);
        let starts = layout.hunk_starts().to_vec();
        assert_eq!(starts.len(), 2);
        assert_eq!(starts[0], 0);
        assert_eq!(starts[1], 1 + diff.hunks[0].lines.len());
        assert_eq!(layout.hunk_rows(0), 0..starts[1]);
        assert_eq!(layout.hunk_rows(1), starts[1]..layout.len());
        assert_eq!(layout.hunk_rows(2), layout.len()..layout.len());
        assert_eq!(layout.hunk_at(starts[1] - 1), 0);
        assert_eq!(layout.hunk_at(starts[1]), 1);
        assert_eq!(layout.hunk_at(usize::MAX), 1);
        let sides = DiffLayout::side_by_side(&diff, &diff.words(), 80);
        assert_eq!(sides.hunk_starts()[0], 0);
        assert!(sides.hunk_starts()[1] > 0);
    }

    fn side_texts(diff: &TextDiff, width: u16) -> Vec<String> {
        let layout = DiffLayout::side_by_side(diff, &diff.words(), width);
        all_lines(&layout, diff, None, &[])
            .iter()
            .map(text_of)
            .collect()
    }

    #[test]
    fn side_rows_pair_removed_with_added_and_pad_the_shorter_side() {
        let diff = TextDiff::new("a\nb\nc\nd\n", "a\nB1\nB2\nd\n");
        // a, -b, -c, +B1, +B2, d → header, a|a, b|B1, c|B2, d|d
        assert_eq!(side_texts(&diff, 40).len(), 5);
        let diff = TextDiff::new("a\nb\nc\n", "a\nX\nY\nZ\nc\n");
        // header, a|a, b|X, _|Y, _|Z, c|c
        assert_eq!(side_texts(&diff, 40).len(), 6);
    }

    #[test]
    fn side_by_side_faces_a_rewritten_line_with_its_new_version() {
        let diff = TextDiff::new(
            "a\nAn unrelated line that goes away\nThe garden plan is due in May\nc\n",
            "a\nThe garden plan is due in April\nc\n",
        );
        let texts = side_texts(&diff, 100);
        let row = texts
            .iter()
            .find(|t| t.contains("due in May"))
            .cloned()
            .unwrap_or_default();
        assert!(row.contains("due in April"), "{texts:#?}");
        let gone = texts
            .iter()
            .find(|t| t.contains("goes away"))
            .cloned()
            .unwrap_or_default();
        let right: String = gone.chars().skip(50).collect();
        assert_eq!(right.trim(), "", "{texts:#?}");
    }

    #[test]
    fn side_by_side_wraps_both_halves_and_keeps_them_aligned() {
        let (before, after) = paragraph_rewrite();
        let diff = TextDiff::new(&before, &after);
        let width = 80u16;
        let texts = side_texts(&diff, width);
        let (left, _) = side_halves(usize::from(width));
        let prefix = side_prefix_width(1);
        let half = |t: &String, right: bool| -> String {
            let chars: Vec<char> = t.chars().collect();
            let (from, to) = if right {
                (left + 1 + prefix, chars.len())
            } else {
                (prefix, left)
            };
            chars.get(from..to).unwrap_or_default().iter().collect()
        };
        let first = texts
            .iter()
            .position(|t| t.contains("Plan the vegetable"))
            .unwrap_or_default();
        // Both halves start on the same row and carry their line numbers there.
        assert!(texts[first].starts_with(" 3 - Plan the"), "{texts:#?}");
        assert!(
            half(&texts[first], true).starts_with("Plan the"),
            "{texts:#?}"
        );
        let rows: Vec<&String> = texts[first..]
            .iter()
            .take_while(|t| !t.contains(" 4 ") || t.contains("Plan"))
            .collect();
        let old: Vec<String> = rows
            .iter()
            .map(|t| half(t, false).trim().to_string())
            .collect();
        let new: Vec<String> = rows
            .iter()
            .map(|t| half(t, true).trim().to_string())
            .collect();
        let join = |parts: Vec<String>| {
            parts
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(join(old), PARAGRAPH, "{texts:#?}");
        assert_eq!(
            join(new),
            after.lines().nth(2).unwrap_or_default(),
            "{texts:#?}"
        );
        for t in &texts {
            assert!(display_width(t) <= usize::from(width), "{t}");
        }
    }

    #[test]
    fn side_by_side_puts_old_left_and_new_right() {
        let diff = TextDiff::new("a\nold line\nc\n", "a\nnew line\nc\n");
        let theme = Theme::builtin_dark();
        let mut buf = buffer(40, 6);
        let layout = DiffLayout::side_by_side(&diff, &diff.words(), 40);
        draw_rows(
            &layout,
            buf.area,
            &mut buf,
            &diff,
            &theme,
            0,
            Some(0),
            &[true],
        );
        let text = buffer_text(&buf);
        let row = text
            .lines()
            .find(|l| l.contains("old line"))
            .unwrap_or_default();
        let divider = row.find('│').unwrap_or(0);
        assert!(
            row.find("old line").unwrap_or(usize::MAX) < divider,
            "{text}"
        );
        assert!(row.find("new line").unwrap_or(0) > divider, "{text}");
        // The changed word in its word role, the rest of the line in the line's role.
        assert_eq!(
            look(style_at(&buf, "old line")),
            look(Some(theme.style(Role::DiffRemovedWord)))
        );
        assert_eq!(
            look(style_at_offset(&buf, "old line", 4)),
            look(Some(theme.style(Role::DiffRemoved)))
        );
        assert_eq!(
            look(style_at(&buf, "new line")),
            look(Some(theme.style(Role::DiffAddedWord)))
        );
    }

    #[test]
    fn drawing_clamps_the_scroll_and_survives_any_size() {
        let diff = two_hunks();
        let theme = Theme::builtin_dark();
        // Scrolled far past the end, with the current hunk pointed at or not.
        let draw = |layout: &DiffLayout, buf: &mut Buffer, current: Option<usize>| {
            draw_rows(
                layout,
                buf.area,
                buf,
                &diff,
                &theme,
                usize::MAX,
                current,
                &[],
            );
        };
        for (w, h) in [(0, 0), (1, 1), (2, 1), (3, 2), (20, 5), (300, 100)] {
            let mut buf = buffer(w, h);
            draw(
                &DiffLayout::side_by_side(&diff, &diff.words(), w),
                &mut buf,
                Some(1),
            );
            draw(&inline(&diff, w), &mut buf, Some(1));
        }
        let mut buf = buffer(40, 4);
        draw(
            &DiffLayout::side_by_side(&diff, &diff.words(), 40),
            &mut buf,
            None,
        );
        // The last page is full: its bottom row is the last line of the last hunk.
        let text = buffer_text(&buf);
        assert!(
            text.lines().last().unwrap_or_default().contains("28"),
            "{text}"
        );
    }

    #[test]
    fn the_scrollbar_shows_only_when_content_overflows() {
        let theme = Theme::builtin_dark();
        let mut buf = buffer(1, 10);
        scrollbar(buf.area, &mut buf, &theme, 10, 0);
        assert_eq!(buffer_text(&buf).trim(), "");
        scrollbar(buf.area, &mut buf, &theme, 100, 0);
        assert!(buffer_text(&buf).starts_with("█\n"));
        let mut buf = buffer(1, 10);
        scrollbar(buf.area, &mut buf, &theme, 100, 90);
        assert!(buffer_text(&buf).ends_with("█\n"));
        assert!(buffer_text(&buf).starts_with("│\n"));
    }
}
