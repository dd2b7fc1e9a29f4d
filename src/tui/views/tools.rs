//! `/mcp`: the tools the agent can call, grouped by tier with what they may do (read-only,
//! writes, destructive), and the MCP servers with their status.

use super::{
    Hint, Scroll, View, ViewOutcome, draw_box, footer, one_line, pad_right, text_width, truncate,
};
use crate::protocol::{McpServerState, McpServerStatus, Tier, ToolSpec};
use crate::tui::keymap::{Action, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The widest badge (`destructive`).
const BADGE: usize = 11;

/// The tools and servers overlay.
#[derive(Debug, Clone)]
pub struct ToolsView {
    tools: Vec<ToolSpec>,
    /// Each configured MCP server and how it is doing.
    servers: Vec<McpServerStatus>,
    /// What the model in use is sent when it is not every tool (the core set for a small
    /// window, or none for a template without tools), shown first.
    offer: Option<String>,
    scroll: Scroll,
    keymap: Keymap,
}

impl ToolsView {
    /// Every tool (any order: they are grouped by tier and sorted by name) and the MCP servers
    /// with their status ("running · 4 tools", "failed: …", "starting…").
    pub fn new(tools: Vec<ToolSpec>, servers: Vec<McpServerStatus>) -> Self {
        let mut tools = tools;
        tools.sort_by(|a, b| {
            tier_order(a.tier)
                .cmp(&tier_order(b.tier))
                .then_with(|| a.name.cmp(&b.name))
        });
        Self {
            tools,
            servers,
            offer: None,
            scroll: Scroll::default(),
            keymap: Keymap::default_map(),
        }
    }

    /// Show the keys of `keymap` (the active one) in the hints.
    pub fn with_keymap(mut self, keymap: &Keymap) -> Self {
        self.keymap = keymap.clone();
        self
    }

    /// Say first what the model in use is sent, when it is not every tool.
    pub fn with_offer(mut self, offer: Option<String>) -> Self {
        self.offer = offer;
        self
    }

    fn lines(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let name_width = self
            .tools
            .iter()
            .map(|t| text_width(&t.name))
            .max()
            .unwrap_or(0)
            .min(width / 3)
            .max(4);
        let mut lines = Vec::new();
        if let Some(offer) = &self.offer {
            for row in wrap_words(offer, width) {
                lines.push(Line::from(Span::styled(row, theme.style(Role::Notice))));
            }
            lines.push(Line::default());
        }
        for tier in [Tier::Session, Tier::Workspace, Tier::Plugin] {
            let tools: Vec<&ToolSpec> = self.tools.iter().filter(|t| t.tier == tier).collect();
            let (title, note) = tier_heading(tier);
            lines.push(heading(
                &format!("{title} ({})", tools.len()),
                note,
                width,
                theme,
            ));
            if tools.is_empty() {
                lines.push(Line::from(Span::styled(
                    format!("  {}", tier_empty(tier)),
                    theme.style(Role::Dim),
                )));
            }
            for tool in tools {
                lines.push(tool_line(tool, name_width, width, theme));
            }
            lines.push(Line::default());
        }
        lines.push(heading(
            &format!("MCP servers ({})", self.servers.len()),
            "yours in config.toml, the vault's plugins in .vaultchat/plugins.toml",
            width,
            theme,
        ));
        if self.servers.is_empty() {
            lines.push(Line::from(Span::styled(
                "  none configured (add one as [mcp.servers.NAME] in config.toml)",
                theme.style(Role::Dim),
            )));
        }
        let server_width = self
            .servers
            .iter()
            .map(|s| text_width(&s.name))
            .max()
            .unwrap_or(0)
            .min(width / 3);
        let indent = 2 + server_width + 2;
        let status_room = width.saturating_sub(indent);
        for server in &self.servers {
            let style = theme.style(status_role(&server.state));
            // A failure is the one thing here worth reading in full: it wraps.
            let status = one_line(&server.summary());
            let mut rows = match server.state {
                McpServerState::Failed { .. } => wrap_words(&status, status_room),
                _ => vec![truncate(&status, status_room)],
            }
            .into_iter();
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(
                    pad_right(&one_line(&server.name), server_width),
                    theme.style(Role::Text),
                ),
                Span::raw("  "),
                Span::styled(rows.next().unwrap_or_default(), style),
            ]));
            for row in rows {
                lines.push(Line::from(vec![
                    Span::raw(" ".repeat(indent)),
                    Span::styled(row, style),
                ]));
            }
        }
        lines
    }
}

impl View for ToolsView {
    /// A key with its action in the List context.
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        super::reader_keys(&mut self.scroll, action, key, None)
    }

    /// Draw the overlay over `area` (the whole screen).
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = super::overlay_area(area);
        let hints: &[Hint<'_>] = &[
            (&[Action::Up, Action::Down], "scroll"),
            (&[Action::Cancel], "close"),
        ];
        let footer = footer(&self.keymap, theme, hints, &[], area.width);
        let title = format!(
            "Tools · {} tool{} · {} MCP server{}",
            self.tools.len(),
            if self.tools.len() == 1 { "" } else { "s" },
            self.servers.len(),
            if self.servers.len() == 1 { "" } else { "s" }
        );
        let inner = draw_box(area, buf, theme, &title, footer);
        if inner.is_empty() {
            return;
        }
        let lines = self.lines(usize::from(inner.width), theme);
        super::draw_scrolled(buf, theme, inner, &lines, &mut self.scroll);
    }
}

fn tier_order(tier: Tier) -> u8 {
    match tier {
        Tier::Session => 0,
        Tier::Workspace => 1,
        Tier::Plugin => 2,
    }
}

fn tier_heading(tier: Tier) -> (&'static str, &'static str) {
    match tier {
        Tier::Session => (
            "Session tools",
            "edit the note open in the editor, one undo step each",
        ),
        Tier::Workspace => (
            "Workspace tools",
            "the whole vault; also served by `vaultchat mcp`",
        ),
        Tier::Plugin => ("Plugin and MCP tools", "from the MCP servers below"),
    }
}

fn tier_empty(tier: Tier) -> &'static str {
    match tier {
        Tier::Session => "none",
        Tier::Workspace => "none (no vault open)",
        Tier::Plugin => "none: no MCP server offers tools",
    }
}

fn heading(title: &str, note: &str, width: usize, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled(
        truncate(title, width),
        theme.style(Role::MdHeading),
    )];
    let room = width.saturating_sub(text_width(title) + 3);
    if room > 8 {
        spans.push(Span::styled(
            format!(" · {}", truncate(note, room)),
            theme.style(Role::Dim),
        ));
    }
    Line::from(spans)
}

/// What a tool may do, from its annotations: the badge and its look.
fn badge(tool: &ToolSpec) -> (&'static str, Role) {
    let a = tool.annotations;
    if a.read_only_hint {
        ("read-only", Role::Dim)
    } else if a.destructive_hint {
        ("destructive", Role::ToolError)
    } else {
        ("writes", Role::Notice)
    }
}

fn tool_line(tool: &ToolSpec, name_width: usize, width: usize, theme: &Theme) -> Line<'static> {
    let (badge, role) = badge(tool);
    let summary = if tool.title.trim().is_empty() {
        first_sentence(&tool.description)
    } else {
        one_line(&tool.title)
    };
    let summary_room = width.saturating_sub(2 + name_width + 2 + BADGE + 2);
    let mut spans = vec![
        Span::raw("  "),
        Span::styled(pad_right(&tool.name, name_width), theme.style(Role::Tool)),
        Span::raw("  "),
        Span::styled(pad_right(badge, BADGE), theme.style(role)),
    ];
    if summary_room > 0 {
        spans.push(Span::raw("  "));
        spans.push(Span::styled(
            truncate(&summary, summary_room),
            theme.style(Role::Text),
        ));
    }
    Line::from(spans)
}

/// The description up to its first full stop (tool descriptions are written for models and run
/// long).
fn first_sentence(description: &str) -> String {
    let text = one_line(description);
    match text.find(". ") {
        Some(end) => text[..=end].to_string(),
        None => text,
    }
}

/// How a server's status looks: failures stand out, waiting states are notices.
fn status_role(state: &McpServerState) -> Role {
    match state {
        McpServerState::Failed { .. } => Role::Error,
        McpServerState::Starting | McpServerState::Disabled | McpServerState::NotTrusted => {
            Role::Notice
        }
        McpServerState::Running { .. } => Role::Text,
    }
}

/// `text` in rows of at most `width` columns, broken between words (a word wider than a row is
/// cut); at least one row.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    if width == 0 {
        return vec![String::new()];
    }
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let needed = text_width(&row) + usize::from(!row.is_empty()) + text_width(word);
        if !row.is_empty() && needed > width {
            rows.push(std::mem::take(&mut row));
        }
        if !row.is_empty() {
            row.push(' ');
        }
        row.push_str(word);
        if text_width(&row) > width {
            rows.push(truncate(&row, width));
            row.clear();
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Annotations;
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::{KeyCode, KeyModifiers};
    use serde_json::json;

    fn spec(name: &str, title: &str, tier: Tier, annotations: Annotations) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            title: title.into(),
            description: if title.is_empty() {
                "List the open issues of a repository. Pages of 30; filter by label.".into()
            } else {
                format!("{title}. More words for the model.")
            },
            input_schema: json!({"type": "object", "additionalProperties": false}),
            annotations,
            tier,
        }
    }

    fn tools() -> Vec<ToolSpec> {
        use Annotations as A;
        vec![
            spec(
                "search_notes",
                "Search notes by words",
                Tier::Workspace,
                A::READ_ONLY,
            ),
            spec("read_note", "Read a note", Tier::Workspace, A::READ_ONLY),
            spec(
                "update_note",
                "Change a note",
                Tier::Workspace,
                A::DESTRUCTIVE,
            ),
            spec("create_note", "Create a note", Tier::Workspace, A::ADDITIVE),
            spec(
                "delete_note",
                "Move a note to the vault's .trash",
                Tier::Workspace,
                A::DESTRUCTIVE,
            ),
            spec(
                "list_tags",
                "List tags with counts",
                Tier::Workspace,
                A::READ_ONLY,
            ),
            spec(
                "append_to_note",
                "Append to the open note",
                Tier::Session,
                A::DESTRUCTIVE,
            ),
            spec(
                "rewrite_paragraph",
                "Rewrite the paragraph around an anchor",
                Tier::Session,
                A::DESTRUCTIVE,
            ),
            spec("github__list_issues", "", Tier::Plugin, A::READ_ONLY),
            spec(
                "github__create_issue",
                "Open an issue",
                Tier::Plugin,
                A::ADDITIVE,
            ),
        ]
    }

    fn server(name: &str, state: McpServerState) -> McpServerStatus {
        McpServerStatus {
            name: name.into(),
            state,
        }
    }

    fn servers() -> Vec<McpServerStatus> {
        vec![
            server("github", McpServerState::Running { tools: 2 }),
            server(
                "calendar",
                McpServerState::Failed {
                    message: "`npx` was not found: install it, or give its full path as `command` in [mcp.servers.calendar]".into(),
                },
            ),
            server("kanban", McpServerState::Starting),
            server("old", McpServerState::Disabled),
            server("tasks", McpServerState::NotTrusted),
        ]
    }

    fn rendered(view: &mut ToolsView, w: u16, h: u16) -> Buffer {
        let mut buf = buffer(w, h);
        view.render(buf.area, &mut buf, &Theme::builtin_dark());
        buf
    }

    /// A small window: the view says first that the model gets the core set.
    #[test]
    fn tools_core_set_80x24() {
        let offer = crate::agent::offer_line(crate::agent::ToolOffer::Core, 4_096);
        let mut view = ToolsView::new(tools(), vec![]).with_offer(offer);
        let text = buffer_text(&rendered(&mut view, 80, 24));
        assert!(text.contains("core tools"), "{text}");
        insta::assert_snapshot!(text);
    }

    #[test]
    fn tools_are_grouped_by_tier_and_sorted_by_name() {
        let view = ToolsView::new(tools(), servers());
        let names: Vec<&str> = view.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "append_to_note",
                "rewrite_paragraph",
                "create_note",
                "delete_note",
                "list_tags",
                "read_note",
                "search_notes",
                "update_note",
                "github__create_issue",
                "github__list_issues",
            ]
        );
    }

    #[test]
    fn badges_say_what_a_tool_may_do() {
        let buf = rendered(&mut ToolsView::new(tools(), servers()), 120, 40);
        let text = buffer_text(&buf);
        let row = |name: &str| text.lines().find(|l| l.contains(name)).unwrap().to_string();
        assert!(row("read_note").contains("read-only"));
        assert!(row("create_note").contains("writes"));
        assert!(row("delete_note").contains("destructive"));
        // Without a title the description's first sentence is shown.
        assert!(row("github__list_issues").contains("read-only"));
        assert!(
            row("github__list_issues").contains("List the open issues of a repository."),
            "{text}"
        );
        assert!(
            !row("github__list_issues").contains("Pages of 30"),
            "{text}"
        );
        let theme = Theme::builtin_dark();
        assert_eq!(
            style_at(&buf, "destructive").unwrap().fg,
            theme.style(Role::ToolError).fg
        );
        assert_eq!(
            style_at(&buf, "writes").unwrap().fg,
            theme.style(Role::Notice).fg
        );
        assert_eq!(
            style_at(&buf, "failed: `npx`").unwrap().fg,
            theme.style(Role::Error).fg
        );
        assert_eq!(
            style_at(&buf, "starting…").unwrap().fg,
            theme.style(Role::Notice).fg
        );
        assert_eq!(
            style_at(&buf, "running").unwrap().fg,
            theme.style(Role::Text).fg
        );
    }

    #[test]
    fn no_servers_says_none_configured() {
        let text = buffer_text(&rendered(&mut ToolsView::new(tools(), vec![]), 100, 40));
        assert!(text.contains("MCP servers (0)"), "{text}");
        assert!(text.contains("none configured"), "{text}");
        let text = buffer_text(&rendered(&mut ToolsView::new(vec![], vec![]), 100, 40));
        assert!(text.contains("none: no MCP server offers tools"), "{text}");
    }

    #[test]
    fn scrolling_shows_the_rest_and_esc_closes() {
        let mut view = ToolsView::new(tools(), servers());
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        let text = buffer_text(&rendered(&mut view, 60, 12));
        assert!(!text.contains("kanban"), "{text}");
        view.handle(None, &key(KeyCode::End));
        let text = buffer_text(&rendered(&mut view, 60, 12));
        assert!(text.contains("kanban"), "{text}");
        assert_eq!(
            view.handle(Some(Action::Cancel), &key(KeyCode::Esc)),
            Some(ViewOutcome::Close)
        );
    }

    #[test]
    fn statuses_are_classified() {
        assert_eq!(
            status_role(&McpServerState::Failed {
                message: "x".into()
            }),
            Role::Error
        );
        assert_eq!(status_role(&McpServerState::Starting), Role::Notice);
        assert_eq!(status_role(&McpServerState::Disabled), Role::Notice);
        assert_eq!(
            status_role(&McpServerState::Running { tools: 3 }),
            Role::Text
        );
        assert_eq!(first_sentence("Read a note. Paged."), "Read a note.");
        assert_eq!(first_sentence("No stop"), "No stop");
    }

    #[test]
    fn a_failure_wraps_under_its_status_column() {
        let text = buffer_text(&rendered(&mut ToolsView::new(tools(), servers()), 80, 40));
        let lines: Vec<&str> = text.lines().collect();
        let first = lines
            .iter()
            .position(|l| l.contains("calendar  failed: `npx` was not found"))
            .unwrap_or_else(|| panic!("{text}"));
        // The rest of the sentence continues on the next row, under the status column.
        let next = lines[first + 1];
        let column = lines[first].find("failed").unwrap();
        assert_eq!(
            next.find(|c: char| c.is_alphanumeric() || c == '`'),
            Some(column),
            "{text}"
        );
        assert!(text.contains("[mcp.servers.calendar]"), "{text}");
    }

    #[test]
    fn words_wrap_to_the_width() {
        assert_eq!(wrap_words("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap_words("", 5), [""]);
        assert_eq!(wrap_words("abcdefghij k", 4), ["abc…", "k"]);
        assert_eq!(wrap_words("a b", 0), [""]);
    }

    #[test]
    fn snapshot_tools_80x24() {
        insta::assert_snapshot!(
            "tools_80x24",
            buffer_text(&rendered(&mut ToolsView::new(tools(), servers()), 80, 24))
        );
    }

    #[test]
    fn snapshot_tools_120x40() {
        insta::assert_snapshot!(
            "tools_120x40",
            buffer_text(&rendered(&mut ToolsView::new(tools(), servers()), 120, 40))
        );
        insta::assert_snapshot!(
            "tools_no_servers_120x40",
            buffer_text(&rendered(&mut ToolsView::new(tools(), vec![]), 120, 40))
        );
    }

    #[test]
    fn never_panics_at_any_size() {
        for (w, h) in [(0, 0), (1, 1), (3, 3), (10, 5), (30, 8), (300, 100)] {
            rendered(&mut ToolsView::new(tools(), servers()), w, h);
            rendered(&mut ToolsView::new(vec![], vec![]), w, h);
        }
    }
}
