//! Diffs on screen: the inline hunk list of the permission banner and the full-screen side-by-side
//! view. Pure rendering helpers: a [`TextDiff`] goes in, styled lines or buffer cells come out.
//!
//! Lines are never wrapped (a wrapped diff line is hard to read against its line number); a line
//! too long for the space is cut and ends in `…`. Tabs and control characters are made visible
//! first so that what is counted is what is drawn.

use crate::tui::theme::{Role, Theme};
use crate::vault::diff::{DiffLine, Hunk, LineKind, TextDiff};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Marks the hunk the banner points at (on its header line).
pub const CURRENT_MARK: &str = "▶";
/// Marks the lines of the hunk the banner points at.
const CURRENT_BAR: &str = "▎";
/// Marks a hunk the person toggled off.
pub const REJECTED_MARK: &str = "✗";
/// Columns a tab advances to (tab stops are counted from the start of the line's text).
const TAB_WIDTH: usize = 4;

// ---------------------------------------------------------------------------------------------
// Text measuring and cutting

/// How many terminal columns `text` takes.
pub fn display_width(text: &str) -> usize {
    Span::raw(text).width()
}

fn char_width(c: char) -> usize {
    let mut bytes = [0; 4];
    display_width(c.encode_utf8(&mut bytes))
}

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
                column += char_width(c);
            }
        }
    }
    out
}

/// `text` cut to at most `width` columns; a cut text ends in `…`.
pub fn truncate(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_string();
    }
    cut(text, width)
}

/// `text` cut to `width - 1` columns followed by `…` (nothing when `width` is 0).
fn cut(text: &str, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w > width - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `text` cut or padded with spaces to exactly `width` columns (so a background colour fills
/// the row).
pub fn fit(text: &str, width: usize) -> String {
    let mut out = truncate(text, width);
    let used = display_width(&out);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
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
            out.push(Span::styled(cut(&span.content, left), span.style));
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
// Inline hunks (the banner)

/// The index, in [`inline_diff_lines`]' output, of each hunk's header line.
pub fn inline_hunk_starts(diff: &TextDiff) -> Vec<usize> {
    let mut starts = Vec::with_capacity(diff.hunks.len());
    let mut line = 0;
    for hunk in &diff.hunks {
        starts.push(line);
        line += 1 + hunk.lines.len();
    }
    starts
}

/// How many lines [`inline_diff_lines`] returns.
pub fn inline_line_count(diff: &TextDiff) -> usize {
    diff.hunks.iter().map(|h| 1 + h.lines.len()).sum()
}

/// The hunks as lines of at most `width` columns: per hunk an `@@ -a,b +c,d @@` header, then each
/// line with a mark column (`▶`/`▎` for `current_hunk`), old and new line numbers, a sign and the
/// text coloured by kind. A hunk whose flag in `accepted` is false is drawn in the rejected style
/// and marked `✗` (a missing flag counts as accepted).
pub fn inline_diff_lines(
    diff: &TextDiff,
    theme: &Theme,
    width: u16,
    current_hunk: Option<usize>,
    accepted: &[bool],
) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let gutter = gutter_width(diff);
    let mut lines = Vec::with_capacity(inline_line_count(diff));
    for (index, hunk) in diff.hunks.iter().enumerate() {
        let current = current_hunk == Some(index);
        let accepted = is_accepted(accepted, index);
        lines.push(inline_header(hunk, current, accepted, theme, width));
        for numbered in numbered(hunk) {
            lines.push(inline_body_line(
                &numbered, gutter, current, accepted, theme, width,
            ));
        }
    }
    lines
}

fn inline_header(
    hunk: &Hunk,
    current: bool,
    accepted: bool,
    theme: &Theme,
    width: usize,
) -> Line<'static> {
    let mark = if current {
        Span::styled(CURRENT_MARK, theme.style(Role::HunkSelected))
    } else if !accepted {
        Span::styled(REJECTED_MARK, rejected_label_style(theme))
    } else {
        Span::raw(" ")
    };
    let mut spans = vec![
        mark,
        Span::raw(" "),
        Span::styled(hunk_header(hunk), theme.style(Role::DiffHunkHeader)),
    ];
    if !accepted {
        spans.push(Span::styled(
            format!(" {REJECTED_MARK} rejected"),
            rejected_label_style(theme),
        ));
    }
    let used: usize = spans.iter().map(Span::width).sum();
    if used + 2 <= width {
        // A rule to the edge separates the hunks.
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            "─".repeat(width - used - 1),
            theme.style(Role::Border),
        ));
    }
    fit_spans(spans, width)
}

fn inline_body_line(
    numbered: &NumberedLine<'_>,
    gutter: usize,
    current: bool,
    accepted: bool,
    theme: &Theme,
    width: usize,
) -> Line<'static> {
    let kind = numbered.line.kind;
    let (gutter_style, text_style) = if accepted {
        (theme.style(Role::DiffGutter), theme.style(kind_role(kind)))
    } else {
        let rejected = theme.style(Role::HunkRejected);
        (rejected, rejected)
    };
    let mark = if current {
        Span::styled(CURRENT_BAR, theme.style(Role::HunkSelected))
    } else {
        Span::raw(" ")
    };
    let prefix = vec![
        mark,
        Span::raw(" "),
        Span::styled(number(numbered.old, gutter), gutter_style),
        Span::raw(" "),
        Span::styled(number(numbered.new, gutter), gutter_style),
        Span::raw(" "),
    ];
    let prefix_width: usize = prefix.iter().map(Span::width).sum();
    let mut spans = prefix;
    if width > prefix_width {
        let body = format!("{} {}", sign(kind), printable(&numbered.line.text));
        spans.push(Span::styled(fit(&body, width - prefix_width), text_style));
    }
    fit_spans(spans, width)
}

// ---------------------------------------------------------------------------------------------
// Side by side (full screen)

/// One side of a side-by-side row.
struct SideCell<'a> {
    number: usize,
    kind: LineKind,
    text: &'a str,
}

/// One row of the side-by-side view.
enum SideRow<'a> {
    Header {
        hunk: usize,
    },
    Pair {
        hunk: usize,
        left: Option<SideCell<'a>>,
        right: Option<SideCell<'a>>,
    },
}

/// The rows of the side-by-side view: per hunk a header, then unchanged lines on both sides and
/// each run of changes with its removed lines on the left beside its added lines on the right
/// (the shorter side padded with blank rows).
fn side_rows(diff: &TextDiff) -> Vec<SideRow<'_>> {
    let mut rows = Vec::new();
    for (index, hunk) in diff.hunks.iter().enumerate() {
        rows.push(SideRow::Header { hunk: index });
        let mut removed: Vec<SideCell<'_>> = Vec::new();
        let mut added: Vec<SideCell<'_>> = Vec::new();
        for numbered in numbered(hunk) {
            let text = numbered.line.text.as_str();
            match (numbered.line.kind, numbered.old, numbered.new) {
                (LineKind::Removed, Some(number), _) => removed.push(SideCell {
                    number,
                    kind: LineKind::Removed,
                    text,
                }),
                (LineKind::Added, _, Some(number)) => added.push(SideCell {
                    number,
                    kind: LineKind::Added,
                    text,
                }),
                (_, old, new) => {
                    flush_changes(&mut rows, index, &mut removed, &mut added);
                    let cell = |number: Option<usize>| {
                        number.map(|number| SideCell {
                            number,
                            kind: LineKind::Context,
                            text,
                        })
                    };
                    rows.push(SideRow::Pair {
                        hunk: index,
                        left: cell(old),
                        right: cell(new),
                    });
                }
            }
        }
        flush_changes(&mut rows, index, &mut removed, &mut added);
    }
    rows
}

/// Pair the pending removed lines (left) with the pending added lines (right), row by row.
fn flush_changes<'a>(
    rows: &mut Vec<SideRow<'a>>,
    hunk: usize,
    removed: &mut Vec<SideCell<'a>>,
    added: &mut Vec<SideCell<'a>>,
) {
    let mut left = std::mem::take(removed).into_iter();
    let mut right = std::mem::take(added).into_iter();
    loop {
        let (left, right) = (left.next(), right.next());
        if left.is_none() && right.is_none() {
            break;
        }
        rows.push(SideRow::Pair { hunk, left, right });
    }
}

/// How many rows [`side_by_side`] has to show in all.
pub fn side_by_side_row_count(diff: &TextDiff) -> usize {
    side_rows(diff).len()
}

/// The row, in the side-by-side view, of each hunk's header.
pub fn side_by_side_hunk_starts(diff: &TextDiff) -> Vec<usize> {
    side_rows(diff)
        .iter()
        .enumerate()
        .filter_map(|(row, r)| matches!(r, SideRow::Header { .. }).then_some(row))
        .collect()
}

/// The old text on the left and the new text on the right, aligned per hunk, starting `scroll`
/// rows down (clamped so the last page stays full). A `│` divides the halves; the current hunk is
/// marked `▶`, rejected hunks are drawn in the rejected style.
pub fn side_by_side(
    area: Rect,
    buf: &mut Buffer,
    diff: &TextDiff,
    theme: &Theme,
    scroll: u16,
    current_hunk: Option<usize>,
    accepted: &[bool],
) {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    let rows = side_rows(diff);
    let height = usize::from(area.height);
    let scroll = usize::from(scroll).min(rows.len().saturating_sub(height));
    let width = usize::from(area.width);
    let left_width = width.saturating_sub(1) / 2;
    let right_width = width.saturating_sub(left_width + 1);
    let gutter = gutter_width(diff);
    for (offset, row) in rows.iter().skip(scroll).take(height).enumerate() {
        let y = area.y + offset as u16;
        let (left, right) = side_row_lines(
            row,
            diff,
            theme,
            gutter,
            (left_width, right_width),
            current_hunk,
            accepted,
        );
        buf.set_line(area.x, y, &left, left_width as u16);
        if width > left_width {
            let divider_x = area.x + left_width as u16;
            buf.set_string(divider_x, y, "│", theme.style(Role::Border));
            buf.set_line(divider_x + 1, y, &right, right_width as u16);
        }
    }
}

/// The left and right halves of one row.
fn side_row_lines(
    row: &SideRow<'_>,
    diff: &TextDiff,
    theme: &Theme,
    gutter: usize,
    (left_width, right_width): (usize, usize),
    current_hunk: Option<usize>,
    accepted: &[bool],
) -> (Line<'static>, Line<'static>) {
    match row {
        SideRow::Header { hunk: index } => {
            let Some(hunk) = diff.hunks.get(*index) else {
                return (Line::default(), Line::default());
            };
            let current = current_hunk == Some(*index);
            let accepted = is_accepted(accepted, *index);
            let mark = if current {
                Span::styled(CURRENT_MARK, theme.style(Role::HunkSelected))
            } else if !accepted {
                Span::styled(REJECTED_MARK, rejected_label_style(theme))
            } else {
                Span::raw(" ")
            };
            let header = theme.style(Role::DiffHunkHeader);
            let left = vec![
                mark,
                Span::raw(" "),
                Span::styled(
                    format!("@@ -{} @@", unified_range(hunk.old_start, hunk.old_len)),
                    header,
                ),
            ];
            let mut right = vec![
                Span::raw(" "),
                Span::styled(
                    format!("@@ +{} @@", unified_range(hunk.new_start, hunk.new_len)),
                    header,
                ),
            ];
            if !accepted {
                right.push(Span::styled(
                    format!(" {REJECTED_MARK} rejected"),
                    rejected_label_style(theme),
                ));
            }
            (
                with_rule(left, left_width, theme),
                with_rule(right, right_width, theme),
            )
        }
        SideRow::Pair { hunk, left, right } => {
            let current = current_hunk == Some(*hunk);
            let accepted = is_accepted(accepted, *hunk);
            let mark = if current {
                Span::styled(CURRENT_BAR, theme.style(Role::HunkSelected))
            } else {
                Span::raw(" ")
            };
            let mut left_spans = vec![mark];
            left_spans.extend(side_cell(
                left.as_ref(),
                gutter,
                accepted,
                theme,
                left_width.saturating_sub(1),
            ));
            let mut right_spans = vec![Span::raw(" ")];
            right_spans.extend(side_cell(
                right.as_ref(),
                gutter,
                accepted,
                theme,
                right_width.saturating_sub(1),
            ));
            (
                fit_spans(left_spans, left_width),
                fit_spans(right_spans, right_width),
            )
        }
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

/// One side of a line row: number, sign and text filling `width`; blank filler for `None`.
fn side_cell(
    cell: Option<&SideCell<'_>>,
    gutter: usize,
    accepted: bool,
    theme: &Theme,
    width: usize,
) -> Vec<Span<'static>> {
    let Some(cell) = cell else {
        return vec![Span::raw(" ".repeat(width))];
    };
    let (gutter_style, text_style) = if accepted {
        (
            theme.style(Role::DiffGutter),
            theme.style(kind_role(cell.kind)),
        )
    } else {
        let rejected = theme.style(Role::HunkRejected);
        (rejected, rejected)
    };
    let number = format!("{:>gutter$} ", cell.number);
    let number_width = display_width(&number);
    let mut spans = vec![Span::styled(number, gutter_style)];
    if width > number_width {
        let body = format!("{} {}", sign(cell.kind), printable(cell.text));
        spans.push(Span::styled(fit(&body, width - number_width), text_style));
    }
    spans
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
    use crate::tui::testing::{buffer, buffer_text, look, style_at};

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
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(fit("abcdef", 4), "abc…");
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

    #[test]
    fn inline_lines_carry_numbers_signs_and_marks() {
        let diff = small_diff();
        let theme = Theme::builtin_dark();
        let lines = inline_diff_lines(&diff, &theme, 60, Some(0), &[true]);
        let texts: Vec<String> = lines.iter().map(text_of).collect();
        assert_eq!(lines.len(), inline_line_count(&diff));
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
        let lines = inline_diff_lines(&diff, &theme, 50, Some(0), &[true, false]);
        let starts = inline_hunk_starts(&diff);
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
    }

    #[test]
    fn long_lines_are_cut_not_wrapped() {
        let diff = TextDiff::new("short\n", &format!("{}\n", "x".repeat(200)));
        let theme = Theme::builtin_dark();
        let lines = inline_diff_lines(&diff, &theme, 30, None, &[]);
        assert_eq!(lines.len(), 3);
        let added = text_of(&lines[2]);
        assert!(added.ends_with("x…"), "{added}");
        assert_eq!(lines[2].width(), 30);
        // Narrower than the gutter: still no line wider than asked.
        for width in [0, 1, 3, 7] {
            for line in inline_diff_lines(&diff, &theme, width, Some(0), &[]) {
                assert!(line.width() <= usize::from(width));
            }
        }
    }

    #[test]
    fn hunk_starts_point_at_headers() {
        let diff = two_hunks();
        let starts = inline_hunk_starts(&diff);
        assert_eq!(starts.len(), 2);
        assert_eq!(starts[0], 0);
        assert_eq!(starts[1], 1 + diff.hunks[0].lines.len());
        let sides = side_by_side_hunk_starts(&diff);
        assert_eq!(sides[0], 0);
        assert!(sides[1] > sides[0]);
    }

    #[test]
    fn side_rows_pair_removed_with_added_and_pad_the_shorter_side() {
        let diff = TextDiff::new("a\nb\nc\nd\n", "a\nB1\nB2\nd\n");
        // a, -b, -c, +B1, +B2, d → header, a|a, b|B1, c|B2, d|d
        assert_eq!(side_by_side_row_count(&diff), 5);
        let diff = TextDiff::new("a\nb\nc\n", "a\nX\nY\nZ\nc\n");
        // header, a|a, b|X, _|Y, _|Z, c|c
        assert_eq!(side_by_side_row_count(&diff), 6);
    }

    #[test]
    fn side_by_side_puts_old_left_and_new_right() {
        let diff = TextDiff::new("a\nold line\nc\n", "a\nnew line\nc\n");
        let theme = Theme::builtin_dark();
        let mut buf = buffer(40, 6);
        side_by_side(buf.area, &mut buf, &diff, &theme, 0, Some(0), &[true]);
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
        assert_eq!(
            look(style_at(&buf, "old line")),
            look(Some(theme.style(Role::DiffRemoved)))
        );
        assert_eq!(
            look(style_at(&buf, "new line")),
            look(Some(theme.style(Role::DiffAdded)))
        );
    }

    #[test]
    fn side_by_side_clamps_the_scroll_and_survives_any_size() {
        let diff = two_hunks();
        let theme = Theme::builtin_dark();
        for (w, h) in [(0, 0), (1, 1), (2, 1), (3, 2), (20, 5), (300, 100)] {
            let mut buf = buffer(w, h);
            side_by_side(buf.area, &mut buf, &diff, &theme, u16::MAX, Some(1), &[]);
        }
        let mut buf = buffer(40, 4);
        side_by_side(buf.area, &mut buf, &diff, &theme, u16::MAX, None, &[]);
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
