//! `/rewind`: the recorded changes of the open note, newest first. An agent edit can be chosen to
//! restore the note as it was before it (the App shows that as a diff before writing anything);
//! changes by the person or by other programs are listed dim for context and cannot be chosen.

use super::{
    Hint, Nav, View, ViewOutcome, draw_box, draw_scrollbar, footer, is_release, nav_of, one_line,
    pad_left, pad_right, put_centered, put_line, style_row, truncate,
};
use crate::protocol::{Actor, Revision};
use crate::tui::keymap::{Action, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The rewind overlay.
#[derive(Debug, Clone)]
pub struct RewindView {
    path: String,
    /// Newest first.
    revisions: Vec<Revision>,
    /// Index into `revisions` of the selected agent edit (`None`: there is none).
    selected: Option<usize>,
    /// The first row shown.
    offset: usize,
    /// Rows in the window at the last render.
    page: usize,
    keymap: Keymap,
}

impl RewindView {
    /// The revisions of the note at `path`, newest first. The newest agent edit is selected.
    pub fn new(path: String, revisions: Vec<Revision>) -> Self {
        let selected = revisions.iter().position(|r| r.actor == Actor::Agent);
        Self {
            path,
            revisions,
            selected,
            offset: 0,
            page: 1,
            keymap: Keymap::default_map(),
        }
    }

    /// Show the keys of `keymap` (the active one) in the hints.
    pub fn with_keymap(mut self, keymap: &Keymap) -> Self {
        self.keymap = keymap.clone();
        self
    }

    /// The selected agent edit.
    pub fn selected(&self) -> Option<&Revision> {
        self.selected.and_then(|i| self.revisions.get(i))
    }

    /// Move among the agent edits only: the others cannot be chosen.
    fn move_selection(&mut self, nav: Nav) {
        let agent: Vec<usize> = self
            .revisions
            .iter()
            .enumerate()
            .filter(|(_, r)| r.actor == Actor::Agent)
            .map(|(i, _)| i)
            .collect();
        let Some(current) = self.selected else {
            return;
        };
        let page = self.page.max(1);
        let next = match nav {
            Nav::Up => agent.iter().rev().find(|&&i| i < current).copied(),
            Nav::Down => agent.iter().find(|&&i| i > current).copied(),
            // A page of rows away, or as far as there are agent edits.
            Nav::PageUp => agent
                .iter()
                .find(|&&i| i + page >= current && i < current)
                .or(agent.first())
                .copied(),
            Nav::PageDown => agent
                .iter()
                .rev()
                .find(|&&i| i <= current + page && i > current)
                .or(agent.last())
                .copied(),
            Nav::Top => agent.first().copied(),
            Nav::Bottom => agent.last().copied(),
        };
        if let Some(next) = next {
            self.selected = Some(next);
        }
    }

    /// What choosing the selected edit undoes: it, and every change after it.
    fn consequence_line(&self, theme: &Theme) -> Line<'static> {
        let Some(index) = self.selected else {
            return Line::from(Span::styled(
                "No agent edits of this note to rewind; changes by you or other programs are shown dim.",
                theme.style(Role::Dim),
            ));
        };
        // Newest first: everything before the index came later.
        let later = &self.revisions[..index];
        let text = match later.len() {
            0 => "Undoes this edit.".to_string(),
            n => {
                let not_agent = later.iter().filter(|r| r.actor != Actor::Agent).count();
                let yours = if not_agent == 0 {
                    String::new()
                } else {
                    format!(" ({not_agent} not by the agent)")
                };
                format!(
                    "Undoes this edit and {n} later change{}{yours}.",
                    if n == 1 { "" } else { "s" }
                )
            }
        };
        let role = if later.iter().any(|r| r.actor != Actor::Agent) {
            Role::Notice
        } else {
            Role::Dim
        };
        Line::from(Span::styled(text, theme.style(role)))
    }
}

impl View for RewindView {
    /// A key with its action in the List context; confirm → `Rewind { revision }`.
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        if is_release(key) {
            return None;
        }
        if let Some(nav) = nav_of(action, key) {
            self.move_selection(nav);
            return None;
        }
        match action {
            Some(Action::Confirm) => self
                .selected()
                .map(|r| ViewOutcome::Rewind { revision: r.id }),
            Some(Action::Cancel) => Some(ViewOutcome::Close),
            _ => None,
        }
    }

    /// Draw the overlay over `area` (the whole screen).
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = super::overlay_area(area);
        let hints: &[Hint<'_>] = if self.selected.is_some() {
            &[
                (&[Action::Up, Action::Down], "move"),
                (&[Action::Confirm], "rewind (diff first)"),
                (&[Action::Cancel], "close"),
            ]
        } else {
            &[(&[Action::Cancel], "close")]
        };
        let footer = footer(&self.keymap, theme, hints, &[], area.width);
        let title = format!("Rewind {}", one_line(&self.path));
        let inner = draw_box(area, buf, theme, &title, footer);
        if inner.is_empty() {
            return;
        }
        let height = usize::from(inner.height);
        let roomy = height >= 8;
        // An explanation and the column headings above, what the choice undoes below.
        let list = if roomy {
            Rect::new(inner.x, inner.y + 4, inner.width, inner.height - 6)
        } else {
            inner
        };
        if roomy {
            for (row, text) in [
                "Choose an agent edit to restore the note as it was before it.",
                "You see the change as a diff first; nothing is written until you accept it.",
            ]
            .into_iter()
            .enumerate()
            {
                put_line(
                    buf,
                    inner,
                    row,
                    &Line::from(Span::styled(
                        truncate(text, usize::from(inner.width)),
                        theme.style(Role::Dim),
                    )),
                );
            }
            put_line(buf, inner, 3, &heading(theme, usize::from(inner.width)));
            put_line(buf, inner, height - 1, &self.consequence_line(theme));
        }
        let visible = usize::from(list.height);
        self.page = visible;
        if self.revisions.is_empty() {
            put_centered(
                buf,
                list,
                visible / 2,
                "No recorded changes of this note yet.",
                theme.style(Role::Dim),
            );
            return;
        }
        if let Some(selected) = self.selected {
            if selected < self.offset {
                self.offset = selected;
            } else if visible > 0 && selected >= self.offset + visible {
                self.offset = selected + 1 - visible;
            }
        }
        self.offset = self
            .offset
            .min(self.revisions.len().saturating_sub(visible));
        for (row, index) in (self.offset..self.revisions.len())
            .take(visible)
            .enumerate()
        {
            let is_selected = self.selected == Some(index);
            if is_selected {
                style_row(buf, list, row, theme.style(Role::PickerSelected));
            }
            let line = row_line(
                &self.revisions[index],
                is_selected,
                usize::from(list.width),
                theme,
            );
            put_line(buf, list, row, &line);
        }
        draw_scrollbar(buf, theme, list, self.revisions.len(), self.offset, visible);
    }
}

/// Column widths: marker 2, time 16, tool (flexible), change 12, actor 8.
const TIME: usize = 16;
const CHANGE: usize = 12;
const ACTOR: usize = 8;

fn tool_width(width: usize) -> usize {
    width.saturating_sub(2 + TIME + 2 + 2 + CHANGE + 2 + ACTOR)
}

fn heading(theme: &Theme, width: usize) -> Line<'static> {
    let text = format!(
        "  {}  {}  {}  {}",
        pad_right("When (UTC)", TIME),
        pad_right("Tool", tool_width(width)),
        pad_left("Lines", CHANGE),
        pad_right("By", ACTOR)
    );
    Line::from(Span::styled(text, theme.style(Role::Title)))
}

fn row_line(revision: &Revision, selected: bool, width: usize, theme: &Theme) -> Line<'static> {
    let base = if selected {
        theme.style(Role::PickerSelected)
    } else {
        Style::default()
    };
    let agent = revision.actor == Actor::Agent;
    // Changes that cannot be chosen are all dim, whatever their parts.
    let with = |role: Role| {
        if agent {
            base.patch(theme.style(role))
        } else {
            base.patch(theme.style(Role::Dim))
        }
    };
    let (tool, actor) = match revision.actor {
        Actor::Agent => (revision.tool.as_deref().unwrap_or("agent edit"), "agent"),
        Actor::User => (
            revision.tool.as_deref().unwrap_or("saved in the editor"),
            "you",
        ),
        Actor::External => (
            revision.tool.as_deref().unwrap_or("changed on disk"),
            "external",
        ),
    };
    let added = format!("+{}", revision.added);
    let removed = format!("-{}", revision.removed);
    let change_pad = CHANGE.saturating_sub(added.len() + 1 + removed.len());
    Line::from(vec![
        Span::styled(if selected { "› " } else { "  " }, with(Role::TitleFocused)),
        Span::styled(
            pad_right(&crate::time::format_minute(revision.at_unix_ms), TIME),
            with(Role::Dim),
        ),
        Span::styled("  ", base),
        Span::styled(
            pad_right(&one_line(tool), tool_width(width)),
            with(Role::Text),
        ),
        Span::styled(format!("  {}", " ".repeat(change_pad)), base),
        Span::styled(added, with(Role::DiffAdded)),
        Span::styled(" ", base),
        Span::styled(removed, with(Role::DiffRemoved)),
        Span::styled("  ", base),
        Span::styled(pad_right(actor, ACTOR), with(Role::Text)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::{KeyCode, KeyModifiers};

    /// 2026-03-14 09:30 UTC.
    const T0: i64 = 1_773_480_600_000;
    const MINUTE: i64 = 60_000;

    fn revision(
        id: i64,
        minutes_ago: i64,
        actor: Actor,
        tool: Option<&str>,
        added: u64,
        removed: u64,
    ) -> Revision {
        Revision {
            id,
            path: "Projects/Plan.md".into(),
            at_unix_ms: T0 - minutes_ago * MINUTE,
            actor,
            tool: tool.map(str::to_string),
            added,
            removed,
            before_rev: None,
            after_rev: None,
        }
    }

    /// Newest first, as the store returns them.
    fn history() -> Vec<Revision> {
        vec![
            revision(9, 2, Actor::User, None, 1, 1),
            revision(8, 5, Actor::Agent, Some("rewrite_paragraph"), 6, 4),
            revision(7, 31, Actor::Agent, Some("insert_after_anchor"), 12, 0),
            revision(6, 80, Actor::External, None, 3, 2),
            revision(5, 200, Actor::Agent, Some("update_note"), 40, 38),
            revision(4, 1500, Actor::User, None, 22, 0),
        ]
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn rendered(view: &mut RewindView, w: u16, h: u16) -> Buffer {
        let mut buf = buffer(w, h);
        view.render(buf.area, &mut buf, &Theme::builtin_dark());
        buf
    }

    #[test]
    fn only_agent_edits_are_offered() {
        let mut view = RewindView::new("Projects/Plan.md".into(), history());
        assert_eq!(view.selected().unwrap().id, 8, "the newest agent edit");
        view.handle(Some(Action::Up), &key(KeyCode::Up));
        assert_eq!(
            view.selected().unwrap().id,
            8,
            "the user's save above is skipped"
        );
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        assert_eq!(view.selected().unwrap().id, 7);
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        assert_eq!(
            view.selected().unwrap().id,
            5,
            "the external change is skipped"
        );
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        assert_eq!(
            view.selected().unwrap().id,
            5,
            "the user's save below is skipped"
        );
        view.handle(None, &key(KeyCode::Home));
        assert_eq!(view.selected().unwrap().id, 8);
        // A page is as many rows as the last render showed.
        rendered(&mut view, 80, 24);
        view.handle(Some(Action::PageDown), &key(KeyCode::PageDown));
        assert_eq!(view.selected().unwrap().id, 5);
    }

    #[test]
    fn confirm_rewinds_the_selected_agent_edit() {
        let mut view = RewindView::new("Projects/Plan.md".into(), history());
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        assert_eq!(
            view.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            Some(ViewOutcome::Rewind { revision: 7 })
        );
        assert_eq!(
            view.handle(Some(Action::Cancel), &key(KeyCode::Esc)),
            Some(ViewOutcome::Close)
        );
    }

    #[test]
    fn without_agent_edits_nothing_can_be_chosen() {
        let others = vec![
            revision(2, 1, Actor::User, None, 1, 0),
            revision(1, 9, Actor::External, None, 4, 4),
        ];
        let mut view = RewindView::new("a.md".into(), others);
        assert_eq!(view.selected(), None);
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        assert_eq!(
            view.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            None
        );
        let text = buffer_text(&rendered(&mut view, 100, 20));
        assert!(
            text.contains("No agent edits of this note to rewind"),
            "{text}"
        );
        assert!(!text.contains("› "), "{text}");
        let mut empty = RewindView::new("a.md".into(), vec![]);
        assert_eq!(
            empty.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            None
        );
        let text = buffer_text(&rendered(&mut empty, 100, 20));
        assert!(
            text.contains("No recorded changes of this note yet."),
            "{text}"
        );
    }

    #[test]
    fn the_footer_says_what_a_rewind_undoes() {
        let mut view = RewindView::new("Projects/Plan.md".into(), history());
        let text = buffer_text(&rendered(&mut view, 100, 20));
        assert!(
            text.contains("Undoes this edit and 1 later change (1 not by the agent)."),
            "{text}"
        );
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        let text = buffer_text(&rendered(&mut view, 100, 20));
        assert!(
            text.contains("Undoes this edit and 4 later changes (2 not by the agent)."),
            "{text}"
        );
    }

    #[test]
    fn agent_rows_are_coloured_and_the_others_dim() {
        let mut view = RewindView::new("Projects/Plan.md".into(), history());
        let buf = rendered(&mut view, 100, 20);
        let theme = Theme::builtin_dark();
        assert_eq!(
            style_at(&buf, "+12").unwrap().fg,
            theme.style(Role::DiffAdded).fg
        );
        assert_eq!(
            style_at(&buf, "-38").unwrap().fg,
            theme.style(Role::DiffRemoved).fg
        );
        assert_eq!(style_at(&buf, "+22").unwrap().fg, theme.style(Role::Dim).fg);
        assert_eq!(
            style_at(&buf, "saved in the editor").unwrap().fg,
            theme.style(Role::Dim).fg
        );
        assert_eq!(
            style_at(&buf, "rewrite_paragraph").unwrap().bg,
            theme.style(Role::PickerSelected).bg
        );
    }

    #[test]
    fn snapshot_rewind_80x24() {
        let mut view = RewindView::new("Projects/Plan.md".into(), history());
        insta::assert_snapshot!("rewind_80x24", buffer_text(&rendered(&mut view, 80, 24)));
    }

    #[test]
    fn snapshot_rewind_120x40() {
        let mut view = RewindView::new("Projects/Plan.md".into(), history());
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        insta::assert_snapshot!("rewind_120x40", buffer_text(&rendered(&mut view, 120, 40)));
    }

    #[test]
    fn a_long_history_scrolls_to_the_selection() {
        let mut many = Vec::new();
        for i in 0..60 {
            let actor = if i % 3 == 0 {
                Actor::User
            } else {
                Actor::Agent
            };
            many.push(revision(100 - i, i * 10, actor, Some("update_note"), 1, 1));
        }
        let mut view = RewindView::new("a.md".into(), many);
        view.handle(None, &key(KeyCode::End));
        let text = buffer_text(&rendered(&mut view, 80, 24));
        assert_eq!(view.selected().unwrap().id, 41, "the oldest agent edit");
        assert!(text.contains("› "), "{text}");
    }

    #[test]
    fn never_panics_at_any_size() {
        for (w, h) in [(0, 0), (1, 1), (4, 3), (16, 6), (40, 8), (300, 100)] {
            rendered(
                &mut RewindView::new("Projects/Plan.md".into(), history()),
                w,
                h,
            );
            rendered(&mut RewindView::new(String::new(), vec![]), w, h);
        }
    }
}
