//! How the model's reasoning shows in the transcript: folded to one line that says how much there
//! is (and that it is still coming), unfolded with the same key as a tool call's details.

use super::wrap::{self, Breaks};
use crate::tui::theme::{Role, Theme};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

const THINKING_MARKER: &str = "✻ ";
const DETAIL_BAR: &str = "  │ ";

/// The lines of a thinking cell at `width` cells.
pub fn lines(
    text: &str,
    streaming: bool,
    expanded: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let label = if streaming { "thinking…" } else { "thinking" };
    let size = size_label(text);
    let head = vec![
        Span::styled(THINKING_MARKER, dim),
        Span::styled(label, dim.add_modifier(Modifier::ITALIC)),
        Span::styled(format!(" · {size}"), dim),
    ];
    let mut lines = vec![Line::from(wrap::truncate(&head, width))];
    if expanded {
        let bar = [Span::styled(DETAIL_BAR, dim)];
        let style = dim.add_modifier(Modifier::ITALIC);
        for line in text.trim().split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            lines.extend(wrap::wrap(
                &[Span::styled(line.to_string(), style)],
                width,
                &bar,
                &bar,
                Breaks::Words,
            ));
        }
    }
    lines
}

/// "1 char", "1,234 chars": how much the model thought, counted in characters because no
/// provider says how many of its output tokens were thinking.
fn size_label(text: &str) -> String {
    let count = text.chars().count();
    let digits = count.to_string();
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let noun = if count == 1 { "char" } else { "chars" };
    format!("{grouped} {noun}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.to_string().trim_end().to_string())
            .collect()
    }

    #[test]
    fn folded_thinking_is_one_line_with_its_size() {
        let theme = Theme::builtin_dark();
        assert_eq!(
            text(&lines("Let me read the plan.", true, false, 40, &theme)),
            ["✻ thinking… · 21 chars"]
        );
        assert_eq!(
            text(&lines("Let me read the plan.", false, false, 40, &theme)),
            ["✻ thinking · 21 chars"]
        );
        assert_eq!(
            text(&lines(&"x".repeat(1234), false, false, 40, &theme)),
            ["✻ thinking · 1,234 chars"]
        );
        assert_eq!(size_label("é"), "1 char");
        assert_eq!(size_label(&"y".repeat(1_000_000)), "1,000,000 chars");
    }

    #[test]
    fn unfolded_thinking_wraps_its_text_under_a_bar() {
        let theme = Theme::builtin_dark();
        let shown = text(&lines(
            "First the plan.\nThen the answer follows here.",
            false,
            true,
            22,
            &theme,
        ));
        assert_eq!(
            shown,
            [
                "✻ thinking · 45 chars",
                "  │ First the plan.",
                "  │ Then the answer",
                "  │ follows here."
            ]
        );
    }
}
