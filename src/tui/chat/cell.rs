//! One entry of the transcript and how it is laid out as lines of a given width.

use super::chips;
use super::markdown::render_markdown_with;
use super::wrap::{self, Breaks};
use crate::agent::CallDecision;
use crate::attach::ImageFacts;
use crate::tui::theme::{Role, Theme};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

/// The glyph at the end of a reply that is still arriving.
pub const STREAM_CURSOR: &str = "▍";
/// How many lines of a tool's result an expanded tool cell shows.
pub const RESULT_PREVIEW_LINES: usize = 20;

const USER_MARKER: &str = "› ";
const ERROR_MARKER: &str = "✗ ";
const SYSTEM_MARKER: &str = "· ";
const TOOL_MARKER: &str = "⚙ ";
const COMPACTION_MARKER: &str = "≡ ";
const DETAIL_BAR: &str = "  │ ";
const DETAIL_END: &str = "  └ ";
/// Input keys that name what a tool works on, in order of preference, for the one-line summary.
const SUMMARY_KEYS: &[&str] = &["path", "note", "query", "name", "folder", "tag", "anchor"];

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// Asked for and not finished (possibly waiting for the person's answer).
    Running,
    /// Finished without error.
    Done,
    /// Ran and failed.
    Failed,
    /// A rule or the person said no.
    Denied,
    /// Refused before any rule was asked (not offered, outside the vault, bad arguments).
    Refused,
}

/// One entry of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// What the person wrote, and the images sent with it (shown as chips under the text).
    User {
        text: String,
        images: Vec<ImageFacts>,
    },
    /// The agent's reply, Markdown; `streaming` while it is still arriving.
    Assistant { text: String, streaming: bool },
    /// A tool call: a one-line summary, and the result below it when `expanded`.
    Tool {
        call_id: String,
        name: String,
        input: Value,
        status: ToolStatus,
        result: String,
        expanded: bool,
    },
    /// The model's reasoning: one line with its size, the text below it when `expanded`;
    /// `streaming` while it is still arriving.
    Thinking {
        text: String,
        streaming: bool,
        expanded: bool,
    },
    /// Something went wrong (the provider failed, the turn was cut short).
    Error { text: String },
    /// A note from vaultchat itself (session resumed, model changed).
    System { text: String },
    /// The older part of the conversation was compacted: a marked line, and the summary that
    /// replaces it upstream below it when `expanded`.
    Compaction {
        headline: String,
        summary: Option<String>,
        expanded: bool,
    },
}

/// The lines of `cell` at `width` cells. A streaming reply ends in [`STREAM_CURSOR`]. `approval`
/// is how the person let a tool call through, shown on its summary line.
pub fn layout(
    cell: &Cell,
    approval: Option<CallDecision>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    layout_with(cell, approval, width, theme, true)
}

/// [`layout`], reusing highlighted code from earlier calls when `reuse`.
pub(crate) fn layout_with(
    cell: &Cell,
    approval: Option<CallDecision>,
    width: usize,
    theme: &Theme,
    reuse: bool,
) -> Vec<Line<'static>> {
    let width = width.max(1);
    match cell {
        Cell::User { text, images } => {
            let mut lines = marked_text(
                text,
                USER_MARKER,
                theme.style(Role::User),
                theme.style(Role::Text),
                width,
            );
            // The chips hang under the text, at its indent.
            let indent = wrap::text_width(USER_MARKER);
            for mut row in chips::chip_rows(
                images,
                width.saturating_sub(indent).max(1),
                usize::MAX,
                theme,
            ) {
                row.spans.insert(0, Span::raw(" ".repeat(indent)));
                lines.push(row);
            }
            lines
        }
        Cell::Assistant { text, streaming } => {
            let mut lines = render_markdown_with(text, width, theme, reuse);
            if *streaming {
                add_stream_cursor(&mut lines, width, theme);
            }
            lines
        }
        Cell::Tool {
            name,
            input,
            status,
            result,
            expanded,
            ..
        } => tool_lines(
            &ToolCall {
                name,
                input,
                status: *status,
                result,
                expanded: *expanded,
                approval,
            },
            width,
            theme,
        ),
        Cell::Thinking {
            text,
            streaming,
            expanded,
        } => super::thinking::lines(text, *streaming, *expanded, width, theme),
        Cell::Error { text } => {
            let style = theme.style(Role::Error);
            marked_text(text, ERROR_MARKER, style, style, width)
        }
        Cell::System { text } => {
            let style = theme.style(Role::System);
            marked_text(text, SYSTEM_MARKER, style, style, width)
        }
        Cell::Compaction {
            headline,
            summary,
            expanded,
        } => compaction_lines(headline, summary.as_deref(), *expanded, width, theme),
    }
}

/// A compaction: the marked headline (with a hint when there is a summary to expand), and the
/// summary indented under it when expanded.
fn compaction_lines(
    headline: &str,
    summary: Option<&str>,
    expanded: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let style = theme.style(Role::System);
    let hint = match (summary, expanded) {
        (Some(_), false) => "  [+ summary]",
        (Some(_), true) => "  [− summary]",
        (None, _) => "",
    };
    let mut lines = marked_text(
        &format!("compacted · {headline}{hint}"),
        COMPACTION_MARKER,
        theme.style(Role::Notice),
        style,
        width,
    );
    if let (Some(summary), true) = (summary, expanded) {
        let indent = wrap::text_width(COMPACTION_MARKER);
        lines.extend(marked_text(
            summary,
            &" ".repeat(indent),
            style,
            theme.style(Role::Text),
            width,
        ));
    }
    lines
}

/// Put the streaming cursor after the last line, or on a line of its own when that one is full.
pub fn add_stream_cursor(lines: &mut Vec<Line<'static>>, width: usize, theme: &Theme) {
    let cursor = Span::styled(STREAM_CURSOR, theme.style(Role::Assistant));
    match lines.last_mut() {
        Some(last) if wrap::spans_width(&last.spans) < width => last.spans.push(cursor),
        _ => lines.push(Line::from(cursor)),
    }
}

/// Text after a marker, wrapped with a hanging indent; each line of the text starts a new row.
fn marked_text(
    text: &str,
    marker: &str,
    marker_style: Style,
    text_style: Style,
    width: usize,
) -> Vec<Line<'static>> {
    let marker_width = wrap::text_width(marker);
    let first = [Span::styled(marker.to_string(), marker_style)];
    let rest = [Span::raw(" ".repeat(marker_width))];
    let mut lines = Vec::new();
    for (i, line) in text.trim_end().split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let prefix: &[Span<'static>] = if i == 0 { &first } else { &rest };
        lines.extend(wrap::wrap(
            &[Span::styled(line, text_style)],
            width,
            prefix,
            &rest,
            Breaks::Words,
        ));
    }
    lines
}

/// A short description of a tool's input: the note, path or query it works on, else its
/// arguments as compact JSON.
pub fn tool_summary(input: &Value) -> String {
    if let Some(object) = input.as_object() {
        for key in SUMMARY_KEYS {
            if let Some(value) = object.get(*key).and_then(Value::as_str) {
                let value = value.replace('\n', " ");
                return if *key == "query" || *key == "anchor" {
                    format!("\"{value}\"")
                } else {
                    value
                };
            }
        }
        if object.is_empty() {
            return String::new();
        }
    }
    if input.is_null() {
        return String::new();
    }
    input.to_string()
}

/// The status at the end of a tool's summary line: a glyph, and a word where the glyph alone
/// would not say enough.
fn status_label(status: ToolStatus, approval: Option<CallDecision>) -> String {
    match status {
        ToolStatus::Running => "⋯".into(),
        ToolStatus::Done => match approval {
            Some(CallDecision::ApprovedOnce) => "✓ approved once".into(),
            Some(CallDecision::ApprovedSession) => "✓ approved for the session".into(),
            Some(CallDecision::ApprovedAlways) => "✓ approved always".into(),
            _ => "✓".into(),
        },
        ToolStatus::Failed => "✗ failed".into(),
        ToolStatus::Denied => "⊘ denied".into(),
        ToolStatus::Refused => "⊘ refused".into(),
    }
}

/// What a tool cell shows.
struct ToolCall<'a> {
    name: &'a str,
    input: &'a Value,
    status: ToolStatus,
    result: &'a str,
    expanded: bool,
    approval: Option<CallDecision>,
}

fn tool_lines(call: &ToolCall<'_>, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let ToolCall {
        name,
        input,
        status,
        result,
        expanded,
        approval,
    } = *call;
    let tool = theme.style(Role::Tool);
    let dim = theme.style(Role::Dim);
    let failed = matches!(
        status,
        ToolStatus::Failed | ToolStatus::Denied | ToolStatus::Refused
    );
    let status_style = match status {
        ToolStatus::Running => dim,
        ToolStatus::Done => tool,
        _ => theme.style(Role::ToolError),
    };
    let status_text = status_label(status, approval);
    let head = vec![
        Span::styled(TOOL_MARKER, tool),
        Span::styled(name.to_string(), tool.add_modifier(Modifier::BOLD)),
    ];
    let head_width = wrap::spans_width(&head);
    let status_width = wrap::text_width(&status_text) + 2;
    let summary = tool_summary(input);
    let mut spans = head;
    // The summary gives way first, so the status is always seen; then the name is cut.
    let room = width.saturating_sub(head_width + status_width + 1);
    if !summary.is_empty() && room >= 4 {
        spans.push(Span::raw(" "));
        spans.extend(wrap::truncate(&[Span::styled(summary, dim)], room));
    }
    spans.push(Span::raw("  "));
    spans.push(Span::styled(status_text, status_style));
    let mut lines = vec![Line::from(wrap::truncate(&spans, width))];

    let detail_style = if failed {
        theme.style(Role::ToolError)
    } else {
        dim
    };
    let bar = Span::styled(DETAIL_BAR, dim);
    let bar_width = wrap::text_width(DETAIL_BAR);
    let room = width.saturating_sub(bar_width).max(1);
    let detail = |text: &str, style: Style| {
        let mut spans = vec![bar.clone()];
        spans.extend(wrap::truncate(
            &[Span::styled(text.to_string(), style)],
            room,
        ));
        Line::from(spans)
    };
    if expanded {
        if !input.is_null() && input.as_object().is_none_or(|o| !o.is_empty()) {
            lines.push(detail(&format!("input {input}"), dim));
        }
        let result = result.trim_end();
        if result.is_empty() {
            let note = if status == ToolStatus::Running {
                "(running…)"
            } else {
                "(no output)"
            };
            lines.push(detail(note, dim));
        } else {
            let all: Vec<&str> = result.split('\n').collect();
            for line in all.iter().take(RESULT_PREVIEW_LINES) {
                lines.push(detail(line.trim_end_matches('\r'), detail_style));
            }
            if all.len() > RESULT_PREVIEW_LINES {
                let more = all.len() - RESULT_PREVIEW_LINES;
                let noun = if more == 1 { "line" } else { "lines" };
                lines.push(detail(&format!("… {more} more {noun}"), dim));
            }
        }
    } else if failed {
        // Why a call failed or was refused matters even when the details are folded away.
        if let Some(reason) = result.lines().map(str::trim).find(|l| !l.is_empty()) {
            let mut spans = vec![Span::styled(DETAIL_END, dim)];
            spans.extend(wrap::truncate(
                &[Span::styled(reason.to_string(), detail_style)],
                room,
            ));
            lines.push(Line::from(spans));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn theme() -> Theme {
        Theme::builtin_dark()
    }

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.to_string().trim_end().to_string())
            .collect()
    }

    fn tool(status: ToolStatus, result: &str, expanded: bool) -> Cell {
        Cell::Tool {
            call_id: "c1".into(),
            name: "read_note".into(),
            input: json!({"path": "Projects/Plan.md"}),
            status,
            result: result.into(),
            expanded,
        }
    }

    #[test]
    fn user_text_wraps_under_its_marker() {
        let theme = theme();
        let lines = layout(
            &Cell::User {
                text: "hello there world\nsecond".into(),
                images: Vec::new(),
            },
            None,
            12,
            &theme,
        );
        assert_eq!(text(&lines), ["› hello", "  there", "  world", "  second"]);
        assert_eq!(lines[0].spans[0].style, theme.style(Role::User));
        assert_eq!(lines[0].spans[1].style, theme.style(Role::Text));
    }

    #[test]
    fn streaming_replies_end_in_a_cursor() {
        let theme = theme();
        let streaming = Cell::Assistant {
            text: "partial".into(),
            streaming: true,
        };
        assert_eq!(text(&layout(&streaming, None, 20, &theme)), ["partial▍"]);
        let done = Cell::Assistant {
            text: "partial".into(),
            streaming: false,
        };
        assert_eq!(text(&layout(&done, None, 20, &theme)), ["partial"]);
        let empty = Cell::Assistant {
            text: String::new(),
            streaming: true,
        };
        assert_eq!(text(&layout(&empty, None, 20, &theme)), ["▍"]);
        // A full last row pushes the cursor to a row of its own.
        assert_eq!(
            text(&layout(
                &Cell::Assistant {
                    text: "abcd".into(),
                    streaming: true
                },
                None,
                4,
                &theme
            )),
            ["abcd", "▍"]
        );
    }

    #[test]
    fn tool_summary_names_the_target() {
        assert_eq!(tool_summary(&json!({"path": "a.md", "query": "x"})), "a.md");
        assert_eq!(tool_summary(&json!({"query": "plans"})), "\"plans\"");
        assert_eq!(tool_summary(&json!({"limit": 3})), "{\"limit\":3}");
        assert_eq!(tool_summary(&json!({})), "");
        assert_eq!(tool_summary(&Value::Null), "");
    }

    #[test]
    fn tool_cells_show_status_and_decision() {
        let theme = theme();
        let done = layout(&tool(ToolStatus::Done, "# Plan", false), None, 60, &theme);
        assert_eq!(text(&done), ["⚙ read_note Projects/Plan.md  ✓"]);
        let approved = layout(
            &tool(ToolStatus::Done, "", false),
            Some(CallDecision::ApprovedOnce),
            60,
            &theme,
        );
        assert_eq!(
            text(&approved),
            ["⚙ read_note Projects/Plan.md  ✓ approved once"]
        );
        let running = layout(&tool(ToolStatus::Running, "", false), None, 60, &theme);
        assert_eq!(text(&running), ["⚙ read_note Projects/Plan.md  ⋯"]);
        let denied = layout(
            &tool(ToolStatus::Denied, "denied: not now", false),
            None,
            60,
            &theme,
        );
        assert_eq!(
            text(&denied),
            [
                "⚙ read_note Projects/Plan.md  ⊘ denied",
                "  └ denied: not now"
            ]
        );
        assert!(super::super::drawn_as(
            crate::tui::testing::style_at(&buffer_of(&denied), "⊘"),
            theme.style(Role::ToolError)
        ));
    }

    fn buffer_of(lines: &[Line<'_>]) -> ratatui::buffer::Buffer {
        let mut buf = crate::tui::testing::buffer(60, lines.len() as u16);
        for (y, line) in lines.iter().enumerate() {
            buf.set_line(0, y as u16, line, 60);
        }
        buf
    }

    #[test]
    fn narrow_tool_lines_drop_the_summary_before_the_status() {
        let lines = layout(&tool(ToolStatus::Done, "", false), None, 24, &theme());
        assert_eq!(text(&lines), ["⚙ read_note Projects…  ✓"]);
        let lines = layout(&tool(ToolStatus::Done, "", false), None, 16, &theme());
        assert_eq!(text(&lines), ["⚙ read_note  ✓"]);
        let lines = layout(&tool(ToolStatus::Done, "", false), None, 8, &theme());
        assert_eq!(text(&lines), ["⚙ read_…"]);
    }

    #[test]
    fn expanded_tool_cells_show_input_and_the_first_result_lines() {
        let result: Vec<String> = (1..=25).map(|n| format!("line {n}")).collect();
        let lines = layout(
            &tool(ToolStatus::Done, &result.join("\n"), true),
            None,
            60,
            &theme(),
        );
        let text = text(&lines);
        assert_eq!(text.len(), 1 + 1 + RESULT_PREVIEW_LINES + 1);
        assert_eq!(text[1], "  │ input {\"path\":\"Projects/Plan.md\"}");
        assert_eq!(text[2], "  │ line 1");
        assert_eq!(text[21], "  │ line 20");
        assert_eq!(text[22], "  │ … 5 more lines");
    }

    #[test]
    fn errors_and_system_notes_use_their_roles() {
        let theme = theme();
        let error = layout(
            &Cell::Error {
                text: "provider said 529".into(),
            },
            None,
            40,
            &theme,
        );
        assert_eq!(text(&error), ["✗ provider said 529"]);
        assert!(
            error[0]
                .spans
                .iter()
                .all(|s| s.style == theme.style(Role::Error))
        );
        let note = layout(
            &Cell::System {
                text: "Session resumed".into(),
            },
            None,
            40,
            &theme,
        );
        assert_eq!(text(&note), ["· Session resumed"]);
        assert!(
            note[0]
                .spans
                .iter()
                .all(|s| s.style == theme.style(Role::System))
        );
    }
}
