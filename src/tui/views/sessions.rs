//! The sessions list: past chats of this vault, newest first, with full-text search over their
//! messages (typing edits the query; the App runs the search and hands the results back), and
//! resume, rename (inline) and delete (asks first).

use super::{
    Hint, ListCursor, View, ViewOutcome, draw_box, footer, is_release, nav_of, one_line, pad_left,
    pad_right, put_centered, put_line, strong, text_width, truncate, typed_char,
};
use crate::protocol::SessionSummary;
use crate::tui::keymap::{Action, KeyContext, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

/// What the keys do at the moment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// Moving through the list; typing edits the search query.
    Browse,
    /// "Delete …? y/n" for the session with this id.
    ConfirmDelete { id: String },
    /// Typing a new title for the session with this id.
    Rename { id: String, text: String },
}

/// The sessions overlay.
#[derive(Debug, Clone)]
pub struct SessionsView {
    sessions: Vec<SessionSummary>,
    /// The id of the session the chat is in.
    current: Option<String>,
    query: String,
    /// The query changed since the last `set_sessions`: the new results start at the best match.
    query_changed: bool,
    cursor: ListCursor,
    mode: Mode,
    /// A one-line message about the last key (e.g. why a delete was refused).
    notice: Option<String>,
    keymap: Keymap,
}

impl SessionsView {
    /// The list, with `current` (the session in use) marked. Key hints come from the default key
    /// map until [`SessionsView::with_keymap`] gives the active one.
    pub fn new(sessions: Vec<SessionSummary>, current: Option<String>) -> Self {
        let selected = current
            .as_ref()
            .and_then(|id| sessions.iter().position(|s| &s.id == id))
            .unwrap_or(0);
        Self {
            sessions,
            current,
            query: String::new(),
            query_changed: false,
            cursor: ListCursor {
                selected,
                ..ListCursor::default()
            },
            mode: Mode::Browse,
            notice: None,
            keymap: Keymap::default_map(),
        }
    }

    /// Show the keys of `keymap` (the active one) in the hints.
    pub fn with_keymap(mut self, keymap: &Keymap) -> Self {
        self.keymap = keymap.clone();
        self
    }

    /// New results (of a search, or the list after a change). After a new query the best match
    /// is selected; otherwise the selected session stays selected when it is still there.
    pub fn set_sessions(&mut self, sessions: Vec<SessionSummary>) {
        let keep = if self.query_changed {
            None
        } else {
            self.selected().map(|s| s.id.clone())
        };
        self.sessions = sessions;
        self.cursor.selected = keep
            .and_then(|id| self.sessions.iter().position(|s| s.id == id))
            .unwrap_or(0);
        if self.query_changed {
            self.cursor.offset = 0;
        }
        self.query_changed = false;
        if let Mode::ConfirmDelete { id } | Mode::Rename { id, .. } = &self.mode
            && !self.sessions.iter().any(|s| &s.id == id)
        {
            self.mode = Mode::Browse;
        }
    }

    /// The search query as typed.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The session under the cursor.
    pub fn selected(&self) -> Option<&SessionSummary> {
        self.sessions.get(self.cursor.selected)
    }

    fn handle_browse(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        if let Some(nav) = nav_of(action, key) {
            self.cursor.apply(nav, self.sessions.len());
            return None;
        }
        match action {
            Some(Action::Confirm) => self
                .selected()
                .map(|s| ViewOutcome::ResumeSession(s.id.clone())),
            Some(Action::Cancel) if !self.query.is_empty() => {
                self.query.clear();
                self.query_changed = true;
                Some(ViewOutcome::SearchSessions(String::new()))
            }
            Some(Action::Cancel | Action::ShowSessions) => Some(ViewOutcome::Close),
            Some(Action::Delete) => {
                let session = self.selected()?;
                if self.current.as_ref() == Some(&session.id) {
                    let new = self
                        .keymap
                        .keys_for(KeyContext::Global, Action::NewSession)
                        .into_iter()
                        .next()
                        .map(|k| format!(" ({k})"))
                        .unwrap_or_default();
                    self.notice = Some(format!(
                        "This is the session in use; start a new one{new} before deleting it."
                    ));
                } else {
                    self.mode = Mode::ConfirmDelete {
                        id: session.id.clone(),
                    };
                }
                None
            }
            Some(Action::Rename) => {
                let session = self.selected()?;
                self.mode = Mode::Rename {
                    id: session.id.clone(),
                    text: one_line(&session.title),
                };
                None
            }
            Some(_) => None,
            None => {
                if let Some(c) = typed_char(key) {
                    self.query.push(c);
                } else if key.code == KeyCode::Backspace && !self.query.is_empty() {
                    self.query.pop();
                } else {
                    return None;
                }
                self.query_changed = true;
                Some(ViewOutcome::SearchSessions(self.query.clone()))
            }
        }
    }

    /// Only `y` deletes: Enter is what people press without reading, so it does not.
    fn handle_confirm_delete(
        &mut self,
        id: String,
        action: Option<Action>,
        key: &KeyEvent,
    ) -> Option<ViewOutcome> {
        match (action, typed_char(key)) {
            (None, Some('y' | 'Y')) => {
                self.sessions.retain(|s| s.id != id);
                self.cursor.selected = self
                    .cursor
                    .selected
                    .min(self.sessions.len().saturating_sub(1));
                Some(ViewOutcome::DeleteSession(id))
            }
            (Some(Action::Cancel), _) | (None, Some('n' | 'N')) => None,
            _ => {
                self.mode = Mode::ConfirmDelete { id };
                None
            }
        }
    }

    fn handle_rename(
        &mut self,
        id: String,
        mut text: String,
        action: Option<Action>,
        key: &KeyEvent,
    ) -> Option<ViewOutcome> {
        match action {
            Some(Action::Confirm) => {
                let title = text.trim().to_string();
                if let Some(s) = self.sessions.iter_mut().find(|s| s.id == id) {
                    s.title = title.clone();
                }
                return Some(ViewOutcome::RenameSession(id, title));
            }
            Some(Action::Cancel) => return None,
            Some(_) => {}
            None => {
                if let Some(c) = typed_char(key) {
                    text.push(c);
                } else if key.code == KeyCode::Backspace {
                    text.pop();
                }
            }
        }
        self.mode = Mode::Rename { id, text };
        None
    }

    fn footer_hints(&self, theme: &Theme, width: u16) -> Line<'static> {
        let hints: &[Hint<'_>] = match &self.mode {
            Mode::Browse if self.query.is_empty() => &[
                (&[Action::Up, Action::Down], "move"),
                (&[Action::Confirm], "resume"),
                (&[Action::Rename], "rename"),
                (&[Action::Delete], "delete"),
                (&[Action::Cancel], "close"),
            ],
            Mode::Browse => &[
                (&[Action::Up, Action::Down], "move"),
                (&[Action::Confirm], "resume"),
                (&[Action::Rename], "rename"),
                (&[Action::Delete], "delete"),
                (&[Action::Cancel], "clear search"),
            ],
            Mode::Rename { .. } => &[(&[Action::Confirm], "save"), (&[Action::Cancel], "cancel")],
            Mode::ConfirmDelete { .. } => &[],
        };
        let extra: &[(&str, &str)] = match self.mode {
            Mode::ConfirmDelete { .. } => &[("y", "delete"), ("n", "keep")],
            _ => &[],
        };
        footer(&self.keymap, theme, hints, extra, width)
    }

    fn search_line(&self, theme: &Theme) -> Line<'static> {
        let mut spans = vec![Span::styled("Search  ", theme.style(Role::Dim))];
        if self.query.is_empty() {
            if matches!(self.mode, Mode::Browse) {
                spans.push(cursor_span(theme));
            }
            spans.push(Span::styled(
                "type to search past messages and titles",
                theme.style(Role::Placeholder),
            ));
        } else {
            spans.push(Span::styled(self.query.clone(), theme.style(Role::Input)));
            if matches!(self.mode, Mode::Browse) {
                spans.push(cursor_span(theme));
            }
        }
        Line::from(spans)
    }

    fn status_line(&self, theme: &Theme) -> Line<'static> {
        if let Some(notice) = &self.notice {
            return Line::from(Span::styled(notice.clone(), theme.style(Role::Notice)));
        }
        match &self.mode {
            Mode::ConfirmDelete { id } => {
                let session = self.sessions.iter().find(|s| &s.id == id);
                let name = session.map_or_else(|| id.clone(), display_title);
                let messages = session.map_or(0, |s| s.messages);
                Line::from(vec![
                    Span::styled(
                        format!(
                            "Delete “{}” and its {messages} message{}? ",
                            truncate(&name, 40),
                            if messages == 1 { "" } else { "s" }
                        ),
                        theme.style(Role::Error),
                    ),
                    Span::styled("y/n", strong(theme, Role::Text)),
                ])
            }
            Mode::Rename { .. } => Line::from(Span::styled(
                "Rename: type the new title",
                theme.style(Role::Notice),
            )),
            Mode::Browse => {
                let n = self.sessions.len();
                let plural = if n == 1 { "" } else { "s" };
                let text = if self.query.trim().is_empty() {
                    format!("{n} session{plural}, most recent first")
                } else {
                    format!(
                        "{n} session{plural} matching “{}”, best first",
                        self.query.trim()
                    )
                };
                let mut spans = vec![Span::styled(text, theme.style(Role::Dim))];
                if self
                    .current
                    .as_ref()
                    .is_some_and(|c| self.sessions.iter().any(|s| &s.id == c))
                {
                    spans.push(Span::styled("  ·  ", theme.style(Role::Dim)));
                    spans.push(Span::styled("●", theme.style(Role::TitleFocused)));
                    spans.push(Span::styled(" current session", theme.style(Role::Dim)));
                }
                Line::from(spans)
            }
        }
    }

    fn row_line(
        &self,
        session: &SessionSummary,
        selected: bool,
        columns: &Columns,
        theme: &Theme,
    ) -> Line<'static> {
        let base = super::row_style(theme, selected);
        let with = |role: Role| base.patch(theme.style(role));
        let is_current = self.current.as_ref() == Some(&session.id);
        let mut spans = super::row_markers(theme, base, selected, is_current);
        let renaming = match &self.mode {
            Mode::Rename { id, text } if id == &session.id => Some(text),
            _ => None,
        };
        let title_width = columns.title;
        if let Some(text) = renaming {
            // The end of a long title stays in view while typing.
            let shown = tail(text, title_width.saturating_sub(1));
            let fill = title_width.saturating_sub(text_width(&shown) + 1);
            spans.push(Span::styled(shown, theme.style(Role::Input)));
            spans.push(cursor_span(theme));
            spans.push(Span::styled(" ".repeat(fill), base));
        } else if session.title.trim().is_empty() {
            let id: String = session.id.chars().take(8).collect();
            spans.push(Span::styled(
                pad_right(&format!("untitled · {id}"), title_width),
                with(Role::Dim).add_modifier(Modifier::ITALIC),
            ));
        } else {
            spans.push(Span::styled(
                pad_right(&one_line(&session.title), title_width),
                with(Role::Text),
            ));
        }
        if columns.updated > 0 {
            let when = crate::time::format_minute(session.updated_ms);
            let when = if columns.updated >= 20 {
                format!("{when} UTC")
            } else {
                when.chars().skip(5).collect()
            };
            spans.push(Span::styled(
                format!("  {}", pad_right(&when, columns.updated)),
                with(Role::Dim),
            ));
        }
        if columns.messages > 0 {
            spans.push(Span::styled(
                format!(
                    "  {}",
                    pad_left(&session.messages.to_string(), columns.messages)
                ),
                with(Role::Text),
            ));
        }
        if columns.tokens > 0 {
            spans.push(Span::styled(
                format!("  {}", pad_left(&tokens_of(&session.usage), columns.tokens)),
                with(Role::Text),
            ));
        }
        Line::from(spans)
    }
}

impl View for SessionsView {
    /// A key with its action in [`KeyContext::List`].
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        if is_release(key) {
            return None;
        }
        self.notice = None;
        match std::mem::replace(&mut self.mode, Mode::Browse) {
            Mode::Browse => self.handle_browse(action, key),
            Mode::ConfirmDelete { id } => self.handle_confirm_delete(id, action, key),
            Mode::Rename { id, text } => self.handle_rename(id, text, action, key),
        }
    }

    /// Draw the overlay over `area` (the whole screen).
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = super::overlay_area(area);
        let hints = self.footer_hints(theme, area.width);
        let title = match self.sessions.len() {
            0 => "Sessions".to_string(),
            1 => "Sessions · 1".to_string(),
            n => format!("Sessions · {n}"),
        };
        let inner = draw_box(area, buf, theme, &title, hints);
        if inner.is_empty() {
            return;
        }
        let height = usize::from(inner.height);
        // Search line, column headings, the rows, and a status line at the bottom; on a tiny
        // screen only the rows.
        let roomy = height >= 5;
        let list = if roomy {
            Rect::new(inner.x, inner.y + 2, inner.width, inner.height - 3)
        } else {
            inner
        };
        let columns = Columns::for_width(usize::from(inner.width));
        if roomy {
            put_line(buf, inner, 0, &self.search_line(theme));
            put_line(buf, inner, 1, &columns.heading(theme));
            put_line(buf, inner, height - 1, &self.status_line(theme));
        }
        let visible = usize::from(list.height);
        self.cursor.fit(self.sessions.len(), visible);
        if self.sessions.is_empty() {
            let text = if self.query.trim().is_empty() {
                "No sessions yet: chats are listed here once they start.".to_string()
            } else {
                format!("No session mentions “{}”.", self.query.trim())
            };
            put_centered(buf, list, visible / 2, &text, theme.style(Role::Dim));
            return;
        }
        self.cursor
            .draw(buf, theme, list, self.sessions.len(), |index, selected| {
                self.row_line(&self.sessions[index], selected, &columns, theme)
            });
    }
}

/// A session's tokens in short form, with `~` when some are estimates (the provider reported
/// no usage).
fn tokens_of(usage: &crate::protocol::TokenTotals) -> String {
    let mark = if usage.is_estimated() { "~" } else { "" };
    format!("{mark}{}", super::compact(usage.all_tokens()))
}

/// The widths of the table's columns (0: not shown) for a content width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Columns {
    title: usize,
    updated: usize,
    messages: usize,
    tokens: usize,
}

impl Columns {
    /// The two marker columns (selection, current session) come first; narrower screens drop
    /// tokens, then messages, then shorten and finally drop the date.
    fn for_width(width: usize) -> Columns {
        let markers = 4;
        let (updated, messages, tokens) = match width {
            70.. => (20, 8, 6),
            58.. => (20, 8, 0),
            48.. => (11, 8, 0),
            34.. => (11, 0, 0),
            _ => (0, 0, 0),
        };
        let gaps = [updated, messages, tokens]
            .iter()
            .filter(|w| **w > 0)
            .count()
            * 2;
        let title = width.saturating_sub(markers + updated + messages + tokens + gaps);
        Columns {
            title,
            updated,
            messages,
            tokens,
        }
    }

    fn heading(&self, theme: &Theme) -> Line<'static> {
        let mut text = format!("    {}", pad_right("Title", self.title));
        if self.updated > 0 {
            let label = if self.updated >= 20 {
                "Last active"
            } else {
                "Active"
            };
            text.push_str(&format!("  {}", pad_right(label, self.updated)));
        }
        if self.messages > 0 {
            text.push_str(&format!("  {}", pad_left("Messages", self.messages)));
        }
        if self.tokens > 0 {
            text.push_str(&format!("  {}", pad_left("Tokens", self.tokens)));
        }
        Line::from(Span::styled(text, theme.style(Role::Title)))
    }
}

/// A title for prompts: the session's title, or its id when it has none.
fn display_title(session: &SessionSummary) -> String {
    if session.title.trim().is_empty() {
        session.id.chars().take(8).collect()
    } else {
        one_line(&session.title)
    }
}

/// The last `width` columns of `text`, starting with `…` when cut.
fn tail(text: &str, width: usize) -> String {
    let text = one_line(text);
    if text_width(&text) <= width {
        return text;
    }
    let reversed: String = text.chars().rev().collect();
    let cut = truncate(&reversed, width);
    // truncate() put the ellipsis at the end of the reversed text: the start of the tail.
    cut.chars().rev().collect()
}

/// The input cursor: a reversed space.
fn cursor_span(theme: &Theme) -> Span<'static> {
    Span::styled(
        " ",
        theme.style(Role::Input).add_modifier(Modifier::REVERSED),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TokenTotals;
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::KeyModifiers;

    /// 2026-03-14 09:30 UTC.
    const T0: i64 = 1_773_480_600_000;
    const HOUR: i64 = 3_600_000;

    fn session(
        id: &str,
        title: &str,
        hours_ago: i64,
        messages: u64,
        tokens: u64,
    ) -> SessionSummary {
        SessionSummary {
            id: id.into(),
            vault_id: "v".into(),
            title: title.into(),
            provider: Some("anthropic".into()),
            model: Some("claude-sonnet-4-5".into()),
            created_ms: T0 - hours_ago * HOUR - HOUR,
            updated_ms: T0 - hours_ago * HOUR,
            messages,
            usage: TokenTotals {
                input_tokens: tokens / 4,
                output_tokens: tokens / 4,
                cache_read_tokens: tokens / 2,
                cache_write_tokens: 0,
                responses: messages / 2,
                estimated_responses: 0,
            },
            parent_id: None,
        }
    }

    fn sample() -> Vec<SessionSummary> {
        vec![
            session("a1b2c3d4e5f60718", "Plan the Lisbon trip", 1, 14, 182_400),
            session(
                "b2c3d4e5f6071829",
                "Budget for the flat: rent, bills and the deposit we still owe",
                26,
                8,
                41_200,
            ),
            session("c3d4e5f60718293a", "", 50, 2, 3_100),
            session(
                "d4e5f60718293a4b",
                "Reading list: Borges, Calvino",
                75,
                22,
                1_250_000,
            ),
            session("e5f60718293a4b5c", "Meeting notes cleanup", 170, 6, 18_900),
        ]
    }

    fn view() -> SessionsView {
        SessionsView::new(sample(), Some("a1b2c3d4e5f60718".into()))
    }

    fn press(
        view: &mut SessionsView,
        action: Option<Action>,
        code: KeyCode,
    ) -> Option<ViewOutcome> {
        view.handle(action, &KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn type_text(view: &mut SessionsView, text: &str) -> Vec<Option<ViewOutcome>> {
        text.chars()
            .map(|c| press(view, None, KeyCode::Char(c)))
            .collect()
    }

    fn rendered(view: &mut SessionsView, w: u16, h: u16) -> Buffer {
        let mut buf = buffer(w, h);
        view.render(buf.area, &mut buf, &Theme::builtin_dark());
        buf
    }

    #[test]
    fn the_current_session_is_selected_first_and_arrows_move() {
        let mut v = SessionsView::new(sample(), Some("c3d4e5f60718293a".into()));
        assert_eq!(v.selected().unwrap().id, "c3d4e5f60718293a");
        press(&mut v, Some(Action::Down), KeyCode::Down);
        assert_eq!(v.selected().unwrap().id, "d4e5f60718293a4b");
        press(&mut v, Some(Action::Down), KeyCode::Down);
        press(&mut v, Some(Action::Down), KeyCode::Down);
        assert_eq!(
            v.selected().unwrap().id,
            "e5f60718293a4b5c",
            "stops at the end"
        );
        press(&mut v, Some(Action::Up), KeyCode::Up);
        assert_eq!(v.selected().unwrap().id, "d4e5f60718293a4b");
        press(&mut v, None, KeyCode::Home);
        assert_eq!(v.selected().unwrap().id, "a1b2c3d4e5f60718");
    }

    #[test]
    fn confirm_resumes_the_selected_session() {
        let mut v = view();
        press(&mut v, Some(Action::Down), KeyCode::Down);
        assert_eq!(
            press(&mut v, Some(Action::Confirm), KeyCode::Enter),
            Some(ViewOutcome::ResumeSession("b2c3d4e5f6071829".into()))
        );
        let mut empty = SessionsView::new(vec![], None);
        assert_eq!(
            press(&mut empty, Some(Action::Confirm), KeyCode::Enter),
            None
        );
    }

    #[test]
    fn typing_searches_and_backspace_and_cancel_edit_the_query() {
        let mut v = view();
        let outcomes = type_text(&mut v, "lis");
        assert_eq!(
            outcomes,
            [
                Some(ViewOutcome::SearchSessions("l".into())),
                Some(ViewOutcome::SearchSessions("li".into())),
                Some(ViewOutcome::SearchSessions("lis".into())),
            ]
        );
        assert_eq!(v.query(), "lis");
        assert_eq!(
            press(&mut v, None, KeyCode::Backspace),
            Some(ViewOutcome::SearchSessions("li".into()))
        );
        // Esc clears a query first, then closes.
        assert_eq!(
            press(&mut v, Some(Action::Cancel), KeyCode::Esc),
            Some(ViewOutcome::SearchSessions(String::new()))
        );
        assert_eq!(v.query(), "");
        assert_eq!(press(&mut v, None, KeyCode::Backspace), None);
        assert_eq!(
            press(&mut v, Some(Action::Cancel), KeyCode::Esc),
            Some(ViewOutcome::Close)
        );
        // Keys with an action never type.
        assert_eq!(
            v.handle(
                Some(Action::Quit),
                &KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL)
            ),
            None
        );
        assert_eq!(v.query(), "");
    }

    #[test]
    fn new_results_select_the_best_match_and_refreshes_keep_the_selection() {
        let mut v = view();
        press(&mut v, Some(Action::Down), KeyCode::Down);
        press(&mut v, Some(Action::Down), KeyCode::Down);
        // A refresh (no new query) keeps the selected session.
        let mut refreshed = sample();
        refreshed.reverse();
        v.set_sessions(refreshed);
        assert_eq!(v.selected().unwrap().id, "c3d4e5f60718293a");
        // After typing, the first result is selected.
        type_text(&mut v, "bud");
        v.set_sessions(vec![sample()[3].clone(), sample()[1].clone()]);
        assert_eq!(v.selected().unwrap().id, "d4e5f60718293a4b");
    }

    #[test]
    fn delete_asks_first_and_only_y_deletes() {
        let mut v = view();
        press(&mut v, Some(Action::Down), KeyCode::Down);
        assert_eq!(
            press(&mut v, Some(Action::Delete), KeyCode::Char('d')),
            None
        );
        let text = buffer_text(&rendered(&mut v, 100, 20));
        assert!(
            text.contains(
                "Delete “Budget for the flat: rent, bills and th…” and its 8 messages? y/n"
            ),
            "{text}"
        );
        // Enter does not delete; n keeps the session.
        assert_eq!(press(&mut v, Some(Action::Confirm), KeyCode::Enter), None);
        assert_eq!(press(&mut v, None, KeyCode::Char('n')), None);
        assert_eq!(v.sessions.len(), 5);
        // Esc backs out as well.
        press(&mut v, Some(Action::Delete), KeyCode::Char('d'));
        assert_eq!(press(&mut v, Some(Action::Cancel), KeyCode::Esc), None);
        assert_eq!(v.mode, Mode::Browse);
        press(&mut v, Some(Action::Delete), KeyCode::Char('d'));
        assert_eq!(
            press(&mut v, None, KeyCode::Char('y')),
            Some(ViewOutcome::DeleteSession("b2c3d4e5f6071829".into()))
        );
        assert_eq!(v.sessions.len(), 4);
        assert!(v.sessions.iter().all(|s| s.id != "b2c3d4e5f6071829"));
        assert_eq!(v.selected().unwrap().id, "c3d4e5f60718293a");
    }

    #[test]
    fn the_session_in_use_is_not_deleted() {
        let mut v = view();
        assert_eq!(
            press(&mut v, Some(Action::Delete), KeyCode::Char('d')),
            None
        );
        assert_eq!(v.mode, Mode::Browse);
        assert_eq!(
            press(&mut v, None, KeyCode::Char('y')),
            Some(ViewOutcome::SearchSessions("y".into()))
        );
        let mut v = view();
        press(&mut v, Some(Action::Delete), KeyCode::Char('d'));
        let text = buffer_text(&rendered(&mut v, 100, 20));
        assert!(
            text.contains("start a new one (ctrl-n) before deleting it"),
            "{text}"
        );
    }

    #[test]
    fn rename_edits_the_title_inline_and_enter_saves() {
        let mut v = view();
        press(&mut v, Some(Action::Rename), KeyCode::Char('e'));
        for _ in 0.."Lisbon trip".len() {
            press(&mut v, None, KeyCode::Backspace);
        }
        type_text(&mut v, "Porto weekend");
        let text = buffer_text(&rendered(&mut v, 100, 20));
        assert!(text.contains("Plan the Porto weekend"), "{text}");
        assert_eq!(v.query(), "", "typing went to the title, not the search");
        assert_eq!(
            press(&mut v, Some(Action::Confirm), KeyCode::Enter),
            Some(ViewOutcome::RenameSession(
                "a1b2c3d4e5f60718".into(),
                "Plan the Porto weekend".into()
            ))
        );
        assert_eq!(v.sessions[0].title, "Plan the Porto weekend");
        // Esc abandons a rename.
        press(&mut v, Some(Action::Rename), KeyCode::Char('e'));
        type_text(&mut v, "!!!");
        assert_eq!(press(&mut v, Some(Action::Cancel), KeyCode::Esc), None);
        assert_eq!(v.sessions[0].title, "Plan the Porto weekend");
        assert_eq!(v.mode, Mode::Browse);
    }

    #[test]
    fn rows_show_title_time_messages_tokens_and_the_current_marker() {
        let mut v = view();
        let buf = rendered(&mut v, 100, 20);
        let text = buffer_text(&buf);
        let row = text
            .lines()
            .find(|l| l.contains("Plan the Lisbon trip"))
            .unwrap();
        assert!(row.contains("› ● Plan the Lisbon trip"), "{row}");
        assert!(row.contains("2026-03-14 08:30 UTC"), "{row}");
        assert!(row.contains("14"), "{row}");
        assert!(row.contains("182k"), "{row}");
        assert!(text.contains("untitled · c3d4e5f6"), "{text}");
        assert!(text.contains("1.3M"), "{text}");
        let theme = Theme::builtin_dark();
        assert_eq!(
            style_at(&buf, "●").unwrap().fg,
            theme.style(Role::TitleFocused).fg
        );
        assert_eq!(
            style_at(&buf, "Plan the Lisbon").unwrap().bg,
            theme.style(Role::PickerSelected).bg
        );
    }

    #[test]
    fn the_footer_names_the_keymaps_keys() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("keymap.toml"),
            "version = 1\n[list]\nrename = \"f2\"\n",
        )
        .unwrap();
        let (keymap, _) = Keymap::load("default", Some(dir.path()));
        let mut v = view().with_keymap(&keymap);
        let text = buffer_text(&rendered(&mut v, 100, 20));
        assert!(text.contains("f2 rename"), "{text}");
        assert!(!text.contains("ctrl-e"), "{text}");
    }

    /// The view searched for "plan", with the three sessions the store found.
    fn searched_for_plan() -> SessionsView {
        let mut v = view();
        type_text(&mut v, "plan");
        v.set_sessions(vec![
            sample()[0].clone(),
            sample()[1].clone(),
            sample()[4].clone(),
        ]);
        v
    }

    #[test]
    fn snapshot_with_a_search_query_80x24() {
        let mut v = searched_for_plan();
        insta::assert_snapshot!(
            "sessions_search_80x24",
            buffer_text(&rendered(&mut v, 80, 24))
        );
    }

    #[test]
    fn snapshot_with_a_search_query_120x40() {
        let mut v = searched_for_plan();
        press(&mut v, Some(Action::Down), KeyCode::Down);
        insta::assert_snapshot!(
            "sessions_search_120x40",
            buffer_text(&rendered(&mut v, 120, 40))
        );
    }

    #[test]
    fn snapshot_all_sessions_80x24() {
        let mut many = sample();
        for i in 0..20 {
            many.push(session(
                &format!("f{i:015x}"),
                &format!("Older chat number {i}"),
                200 + i64::from(i) * 24,
                4,
                9_000,
            ));
        }
        let mut v = SessionsView::new(many, Some("a1b2c3d4e5f60718".into()));
        insta::assert_snapshot!(
            "sessions_list_80x24",
            buffer_text(&rendered(&mut v, 80, 24))
        );
    }

    /// A session with a local server that reported no usage: its tokens are marked `~`.
    #[test]
    fn snapshot_estimated_tokens_80x24() {
        let mut list = sample();
        list[1].usage.estimated_responses = 3;
        let mut v = SessionsView::new(list, None);
        let text = buffer_text(&rendered(&mut v, 80, 24));
        assert!(text.contains("~41k"), "{text}");
        assert!(!text.contains("~182k"), "{text}");
        insta::assert_snapshot!("sessions_estimated_80x24", text);
    }

    #[test]
    fn snapshot_delete_prompt_and_empty_results() {
        let mut v = view();
        press(&mut v, Some(Action::Down), KeyCode::Down);
        press(&mut v, Some(Action::Delete), KeyCode::Char('d'));
        insta::assert_snapshot!(
            "sessions_delete_80x24",
            buffer_text(&rendered(&mut v, 80, 24))
        );
        let mut v = view();
        type_text(&mut v, "zanzibar");
        v.set_sessions(vec![]);
        insta::assert_snapshot!(
            "sessions_no_match_80x24",
            buffer_text(&rendered(&mut v, 80, 24))
        );
    }

    #[test]
    fn never_panics_at_any_size() {
        for (w, h) in [
            (0, 0),
            (1, 1),
            (2, 3),
            (10, 4),
            (20, 6),
            (33, 8),
            (300, 100),
        ] {
            let mut v = view();
            rendered(&mut v, w, h);
            press(&mut v, Some(Action::Rename), KeyCode::Char('e'));
            rendered(&mut v, w, h);
        }
        // Drawn into a corner of a bigger buffer.
        let mut buf = buffer(50, 20);
        view().render(Rect::new(45, 15, 10, 10), &mut buf, &Theme::builtin_dark());
    }
}
