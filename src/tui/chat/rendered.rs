//! Plugin results drawn the way the plugin asked (`[plugins.NAME.render] tool = "table"`): the
//! result becomes Markdown (a table, a bulleted list, a code block, or the text itself) laid out
//! by the transcript's own Markdown renderer, under the tool's summary line. A result that does
//! not fit the form asked for (a table of something that is not JSON) is shown as text.

use super::cell::{self, Cell, RESULT_PREVIEW_LINES, ToolStatus};
use super::markdown::render_markdown_with;
use crate::agent::CallDecision;
use crate::protocol::Render;
use crate::tui::theme::{Role, Theme};
use ratatui::text::{Line, Span};
use serde_json::Value;

const BAR: &str = "  │ ";

/// The lines of a finished tool cell whose tool has a renderer; `None` when the cell is drawn as
/// any other (still running, failed, refused).
pub fn rendered_tool_lines(
    tool: &Cell,
    approval: Option<CallDecision>,
    render: Render,
    width: usize,
    theme: &Theme,
    reuse: bool,
) -> Option<Vec<Line<'static>>> {
    let Cell::Tool {
        status: ToolStatus::Done,
        result,
        expanded,
        ..
    } = tool
    else {
        return None;
    };
    // The summary line exactly as a folded cell draws it.
    let folded = match tool.clone() {
        Cell::Tool {
            call_id,
            name,
            input,
            status,
            result,
            ..
        } => Cell::Tool {
            call_id,
            name,
            input,
            status,
            result,
            expanded: false,
        },
        other => other,
    };
    let mut lines = cell::layout_with(&folded, approval, width, theme, reuse);
    lines.truncate(1);
    let room = width.saturating_sub(BAR.chars().count()).max(1);
    let body = render_markdown_with(&as_markdown(result, render), room, theme, reuse);
    let shown = if *expanded {
        body.len()
    } else {
        body.len().min(RESULT_PREVIEW_LINES)
    };
    let bar = Span::styled(BAR, theme.style(Role::Dim));
    for line in body.iter().take(shown) {
        let mut spans = vec![bar.clone()];
        spans.extend(line.spans.iter().cloned());
        lines.push(Line::from(spans));
    }
    if body.len() > shown {
        let more = body.len() - shown;
        let noun = if more == 1 { "line" } else { "lines" };
        lines.push(Line::from(vec![
            bar,
            Span::styled(format!("… {more} more {noun}"), theme.style(Role::Dim)),
        ]));
    }
    Some(lines)
}

/// The result as Markdown in the form asked for.
pub fn as_markdown(result: &str, render: Render) -> String {
    let text = result.trim_end();
    match render {
        Render::Markdown => text.to_string(),
        Render::Code => match json_of(text) {
            Some(value) => fenced(
                &serde_json::to_string_pretty(&value).unwrap_or_else(|_| text.to_string()),
                "json",
            ),
            None => fenced(text, ""),
        },
        Render::Table => match json_of(text).and_then(|v| table(&v)) {
            Some(table) => table,
            None => fenced(text, ""),
        },
        Render::List => match json_of(text) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| format!("- {}", one_line(&item_text(item))))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| format!("- {}", l.trim_start_matches(['-', '*', '•']).trim()))
                .collect::<Vec<_>>()
                .join("\n"),
        },
    }
}

/// The JSON in a result: one value, or several in a row (MCP servers often send one text block
/// per list item, which vaultchat joins with newlines) taken as an array. `None` for prose.
fn json_of(text: &str) -> Option<Value> {
    let values: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect();
    let mut values = values.ok()?;
    match values.len() {
        0 => None,
        1 => values.pop(),
        _ => Some(Value::Array(values)),
    }
}

/// A Markdown table: rows of an array of objects (columns in the order keys first appear, each
/// object's keys in name order, as serde_json keeps them), the
/// entries of one object, or the items of an array of plain values. `{"result": [...]}` (how SDKs
/// wrap a returned list) is unwrapped.
fn table(value: &Value) -> Option<String> {
    let value = match value {
        Value::Object(map) if map.len() == 1 => match map.values().next() {
            Some(inner @ Value::Array(_)) => inner,
            _ => value,
        },
        _ => value,
    };
    let (header, rows): (Vec<String>, Vec<Vec<String>>) = match value {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            let mut columns: Vec<String> = Vec::new();
            for item in items {
                for key in item.as_object().into_iter().flat_map(|o| o.keys()) {
                    if !columns.contains(key) {
                        columns.push(key.clone());
                    }
                }
            }
            let rows = items
                .iter()
                .map(|item| {
                    columns
                        .iter()
                        .map(|c| item.get(c).map(item_text).unwrap_or_default())
                        .collect()
                })
                .collect();
            (columns, rows)
        }
        Value::Array(items) if !items.is_empty() => (
            vec!["value".to_string()],
            items.iter().map(|i| vec![item_text(i)]).collect(),
        ),
        Value::Object(map) if !map.is_empty() => (
            vec!["key".to_string(), "value".to_string()],
            map.iter()
                .map(|(k, v)| vec![k.clone(), item_text(v)])
                .collect(),
        ),
        _ => return None,
    };
    let row = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| cell_text(c)).collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![
        row(&header),
        format!("|{}|", vec!["---"; header.len()].join("|")),
    ];
    out.extend(rows.iter().map(|r| row(r)));
    Some(out.join("\n"))
}

/// A value as the text of a cell or a list item: strings as they are, others as compact JSON.
fn item_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text that cannot break out of its table cell.
fn cell_text(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

/// A code block whose fence is longer than any run of backticks inside.
fn fenced(text: &str, lang: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{text}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_objects_make_a_table() {
        let md = as_markdown(
            r#"[{"task": "Docs", "owner": "ana"}, {"task": "a|b", "due": 3}]"#,
            Render::Table,
        );
        assert_eq!(
            md,
            "| owner | task | due |\n|---|---|---|\n| ana | Docs |  |\n|  | a\\|b | 3 |"
        );
        // One JSON object per text block, joined by newlines.
        let md = as_markdown("{\"a\": 1}\n{\"a\": 2}", Render::Table);
        assert_eq!(md, "| a |\n|---|\n| 1 |\n| 2 |");
        let md = as_markdown(r#"{"result": [{"a": 1}]}"#, Render::Table);
        assert_eq!(md, "| a |\n|---|\n| 1 |");
        let md = as_markdown(r#"{"x": 1, "y": "two"}"#, Render::Table);
        assert_eq!(md, "| key | value |\n|---|---|\n| x | 1 |\n| y | two |");
    }

    #[test]
    fn prose_asked_as_a_table_stays_text() {
        assert_eq!(
            as_markdown("no rows today", Render::Table),
            "```\nno rows today\n```"
        );
    }

    #[test]
    fn lists_come_from_arrays_or_lines() {
        assert_eq!(
            as_markdown(r#"["one", {"k": 1}, 3]"#, Render::List),
            "- one\n- {\"k\":1}\n- 3"
        );
        assert_eq!(as_markdown("a\n\n- b\n", Render::List), "- a\n- b");
    }

    #[test]
    fn code_pretty_prints_json_and_fences_past_backticks() {
        assert_eq!(
            as_markdown(r#"{"a":1}"#, Render::Code),
            "```json\n{\n  \"a\": 1\n}\n```"
        );
        assert_eq!(
            as_markdown("x ```` y", Render::Code),
            "`````\nx ```` y\n`````"
        );
        assert_eq!(as_markdown("# Title", Render::Markdown), "# Title");
    }
}
