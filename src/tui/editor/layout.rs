//! Laying a note out on screen: list continuation, soft wrapping, per-char styles and moving by
//! screen rows.

use super::*;

/// How a list item or quote continues on the next line.
pub(super) struct Continuation {
    /// What the next line starts with.
    pub(super) next: String,
    /// Chars of the marker on this line (0: no list or quote, only indentation).
    pub(super) marker_chars: usize,
    /// The item has no text after its marker.
    pub(super) empty_item: bool,
}

impl Continuation {
    pub(super) fn indent_only(line: &str) -> Self {
        let indent: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        Continuation {
            next: indent,
            marker_chars: 0,
            empty_item: false,
        }
    }

    pub(super) fn of(line: &str) -> Self {
        let indent: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let mut rest = &line[indent.len()..];
        let mut next = indent.clone();
        let mut marker = String::new();
        while let Some(after) = rest.strip_prefix('>') {
            let after = after.strip_prefix(' ').unwrap_or(after);
            marker.push_str(&rest[..rest.len() - after.len()]);
            next.push_str("> ");
            rest = after;
        }
        let bullet = rest
            .chars()
            .next()
            .filter(|c| matches!(c, '-' | '*' | '+'))
            .filter(|_| rest[1..].starts_with(' '));
        if let Some(bullet) = bullet {
            marker.push(bullet);
            marker.push(' ');
            next.push(bullet);
            next.push(' ');
            rest = &rest[2..];
        } else {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let delimiter = rest[digits..].chars().next();
            if (1..=9).contains(&digits)
                && matches!(delimiter, Some('.' | ')'))
                && rest[digits + 1..].starts_with(' ')
                && let (Ok(n), Some(delimiter)) = (rest[..digits].parse::<u64>(), delimiter)
            {
                marker.push_str(&rest[..digits + 2]);
                next.push_str(&format!("{}{delimiter} ", n + 1));
                rest = &rest[digits + 2..];
            }
        }
        let is_list = !marker.is_empty();
        if is_list
            && rest.len() >= 3
            && rest.starts_with('[')
            && rest.as_bytes()[2] == b']'
            && (rest.len() == 3 || rest[3..].starts_with(' '))
        {
            let task = &rest[..(4).min(rest.len())];
            marker.push_str(task);
            next.push_str("[ ] ");
            rest = &rest[task.len()..];
        }
        if !is_list {
            return Continuation::indent_only(line);
        }
        Continuation {
            next,
            marker_chars: indent.chars().count() + marker.chars().count(),
            empty_item: rest.trim().is_empty(),
        }
    }
}

/// A line measured for drawing: its chars, their widths and its wrapped segments (char ranges).
pub(super) struct LineLayout {
    pub(super) chars: Vec<char>,
    pub(super) widths: Vec<usize>,
    pub(super) segments: Vec<Range<usize>>,
}

impl LineLayout {
    pub(super) fn new(line: &str, width: usize) -> Self {
        let chars: Vec<char> = line.chars().collect();
        let widths: Vec<usize> = chars.iter().map(|c| char_width(*c)).collect();
        let segments = wrap(&chars, &widths, width);
        LineLayout {
            chars,
            widths,
            segments,
        }
    }

    /// The segment the cursor at `col` is drawn in (a column at a wrap point belongs to the row
    /// below; the end of the line to the last row).
    pub(super) fn segment_of(&self, col: usize) -> usize {
        self.segments
            .iter()
            .position(|s| col < s.end)
            .unwrap_or(self.segments.len() - 1)
    }

    /// Screen column of `col` within its segment.
    pub(super) fn x_of(&self, segment: usize, col: usize) -> usize {
        let start = self.segments[segment].start;
        self.widths[start..col.min(self.widths.len()).max(start)]
            .iter()
            .sum()
    }

    /// The column in `segment` nearest to screen column `x`.
    pub(super) fn col_at_x(&self, segment: usize, x: usize) -> usize {
        let range = self.segments[segment.min(self.segments.len() - 1)].clone();
        let last = segment + 1 >= self.segments.len();
        let mut acc = 0;
        for col in range.clone() {
            let w = self.widths[col];
            if acc + w > x {
                return col;
            }
            acc += w;
        }
        if last || range.is_empty() {
            range.end
        } else {
            // Stay on this row: the end of a wrapped row is the start of the next one.
            range.end - 1
        }
    }
}

/// Word wrap: break after the last whitespace that fits, or inside a word longer than the row.
pub(super) fn wrap(chars: &[char], widths: &[usize], width: usize) -> Vec<Range<usize>> {
    let width = width.max(1);
    let mut segments = Vec::new();
    let mut start = 0;
    let mut x = 0;
    let mut last_break: Option<usize> = None;
    let mut i = 0;
    while i < chars.len() {
        let w = widths[i];
        if x + w > width && x <= width && chars[i].is_whitespace() {
            // One space may hang past the edge: breaking before it would push the word
            // before it to the next row for nothing.
            x += w;
            last_break = Some(i + 1);
            i += 1;
            continue;
        }
        if x + w > width && i > start {
            let cut = match last_break {
                Some(b) if b > start => b,
                _ => i,
            };
            segments.push(start..cut);
            start = cut;
            x = widths[cut..i].iter().sum();
            last_break = None;
            continue;
        }
        x += w;
        if chars[i].is_whitespace() {
            last_break = Some(i + 1);
        }
        i += 1;
    }
    segments.push(start..chars.len());
    segments
}

/// Per-char styles of a line: text, the line's role, then its ranges in order.
pub(super) fn char_styles(
    line: &str,
    layout: &LineLayout,
    line_style: &editor_highlight::LineStyle,
    theme: &Theme,
    text_style: Style,
) -> Vec<Style> {
    let base = match line_style.line {
        Some(role) => text_style.patch(theme.style(role)),
        None => text_style,
    };
    let mut styles = vec![base; layout.chars.len()];
    if line_style.ranges.is_empty() {
        return styles;
    }
    let starts: Vec<usize> = line.char_indices().map(|(byte, _)| byte).collect();
    for range in &line_style.ranges {
        let from = starts.partition_point(|b| *b < range.bytes.start);
        let to = starts.partition_point(|b| *b < range.bytes.end);
        let style = theme.style(range.role);
        for s in &mut styles[from..to] {
            *s = s.patch(style);
        }
    }
    styles
}

/// Append `c` as drawn: tabs as spaces, control chars as a dot (the terminal would act on them).
pub(super) fn push_shown(run: &mut String, c: char) {
    if c == '\t' {
        run.push_str(&" ".repeat(TAB_WIDTH));
    } else if c.is_control() {
        run.push('·');
    } else {
        run.push(c);
    }
}

/// One screen row up from `position` (line, segment).
pub(super) fn step_back(
    lines: &[String],
    width: usize,
    position: (usize, usize),
) -> Option<(usize, usize)> {
    let (line, segment) = position;
    if segment > 0 {
        return Some((line, segment - 1));
    }
    let previous = line.checked_sub(1)?;
    let segments = LineLayout::new(lines.get(previous)?, width).segments.len();
    Some((previous, segments - 1))
}

/// One screen row down from `position`.
pub(super) fn step_forward(
    lines: &[String],
    width: usize,
    position: (usize, usize),
) -> Option<(usize, usize)> {
    let (line, segment) = position;
    let segments = LineLayout::new(lines.get(line)?, width).segments.len();
    if segment + 1 < segments {
        return Some((line, segment + 1));
    }
    (line + 1 < lines.len()).then_some((line + 1, 0))
}

pub(super) fn walk_back(
    lines: &[String],
    width: usize,
    mut position: (usize, usize),
    rows: usize,
) -> (usize, usize) {
    for _ in 0..rows {
        match step_back(lines, width, position) {
            Some(p) => position = p,
            None => break,
        }
    }
    position
}
