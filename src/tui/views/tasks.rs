//! The tasks view: the vault's open tasks, those due soonest first (overdue ones in the error
//! colour), each with its note and line. Enter opens the note at the task's line; the toggle key
//! checks the task off through the host's save path, and the list is loaded again.

use super::{
    Hint, ListCursor, View, ViewOutcome, draw_box, footer, is_release, nav_of, one_line, pad_right,
    text_width,
};
use crate::tui::keymap::{Action, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub use crate::host::TaskEntry;

/// The tasks overlay.
#[derive(Debug, Clone)]
pub struct TasksView {
    tasks: Vec<TaskEntry>,
    /// How many open tasks there are in all (more than `tasks` holds when the list was cut).
    total: usize,
    /// `YYYY-MM-DD` of today: tasks due before it are overdue.
    today: String,
    cursor: ListCursor,
    keymap: Keymap,
}

/// Columns: selection marker 2, the due day 10 and 2 spaces (only while a task on screen has a
/// due day), the checkbox 4; the text and the place share the rest, the text first.
const DUE: usize = 10;

impl TasksView {
    pub fn new(tasks: Vec<TaskEntry>, total: usize, today: &str) -> Self {
        Self {
            tasks,
            total,
            today: today.to_string(),
            cursor: ListCursor::default(),
            keymap: Keymap::default_map(),
        }
    }

    /// Show the keys of `keymap` (the active one) in the hints.
    pub fn with_keymap(mut self, keymap: &Keymap) -> Self {
        self.keymap = keymap.clone();
        self
    }

    /// The list loaded again (after a toggle): the selection stays on the same row number, so
    /// the next task comes under it when the toggled one left the list.
    pub fn set_tasks(&mut self, tasks: Vec<TaskEntry>, total: usize) {
        self.tasks = tasks;
        self.total = total;
        self.cursor.selected = self.cursor.selected.min(self.tasks.len().saturating_sub(1));
    }

    /// Whether a task of the rows `first..first + rows` has a due day: without one on screen, the
    /// due column would be twelve blank columns taken from the text.
    fn due_on_screen(&self, first: usize, rows: usize) -> bool {
        self.tasks
            .iter()
            .skip(first)
            .take(rows)
            .any(|t| t.due.is_some())
    }

    fn row_line(
        &self,
        task: &TaskEntry,
        selected: bool,
        width: usize,
        show_due: bool,
        theme: &Theme,
    ) -> Line<'static> {
        let base = super::row_style(theme, selected);
        let with = |role: Role| base.patch(theme.style(role));
        let due_role = match task.due.as_deref() {
            Some(due) if due < self.today.as_str() => Role::Error,
            _ => Role::Dim,
        };
        let place = format!(
            "{}:{}",
            crate::quote::terminal(&one_line(&task.path)),
            task.line
        );
        let text = crate::quote::terminal(&one_line(&task.text)).into_owned();
        let due_columns = if show_due { DUE + 2 } else { 0 };
        let rest = width.saturating_sub(2 + due_columns + 4);
        // The text first: the place keeps what the text leaves, but never less than two fifths
        // of the row (or 12 columns) when the text is long; cut at its start, so the file name
        // and the line stay.
        let place_natural = text_width(&place);
        let place_floor = (rest * 2 / 5).max(12).min(place_natural);
        let place_width = place_natural
            .min(rest.saturating_sub(text_width(&text) + 2))
            .max(place_floor)
            .min(rest);
        let text_width_left = rest.saturating_sub(place_width + 2);
        let mark = if task.status == "in_progress" {
            "[/] "
        } else {
            "[ ] "
        };
        let mut spans = vec![Span::styled(
            if selected { "› " } else { "  " },
            with(Role::TitleFocused),
        )];
        if show_due {
            spans.push(Span::styled(
                pad_right(task.due.as_deref().unwrap_or(""), DUE),
                with(due_role),
            ));
            spans.push(Span::styled("  ", base));
        }
        spans.extend([
            Span::styled(mark, with(Role::MdListMarker)),
            Span::styled(pad_right(&text, text_width_left), with(Role::Text)),
            Span::styled("  ", base),
            Span::styled(
                crate::tui::width::TERMINAL.truncate_start(&place, place_width),
                with(Role::Dim),
            ),
        ]);
        Line::from(spans)
    }
}

impl View for TasksView {
    /// A key with its action in the List context: confirm opens the note at the task, the toggle
    /// key checks it off.
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        if is_release(key) {
            return None;
        }
        if let Some(nav) = nav_of(action, key) {
            self.cursor.apply(nav, self.tasks.len());
            return None;
        }
        let selected = self.tasks.get(self.cursor.selected);
        match action {
            Some(Action::Confirm) => selected.map(|t| ViewOutcome::OpenAtLine {
                path: t.path.clone(),
                line: t.line,
            }),
            Some(Action::ToggleTask) => selected.map(|t| ViewOutcome::ToggleTask {
                path: t.path.clone(),
                line: t.line,
                text: t.text.clone(),
            }),
            Some(Action::Cancel | Action::ShowTasks) => Some(ViewOutcome::Close),
            _ => None,
        }
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = super::overlay_area(area);
        let hints: &[Hint<'_>] = &[
            (&[Action::Up, Action::Down], "move"),
            (&[Action::Confirm], "open"),
            (&[Action::ToggleTask], "check off"),
            (&[Action::Cancel], "close"),
        ];
        let footer = footer(&self.keymap, theme, hints, &[], area.width);
        let title = if self.total > self.tasks.len() {
            format!(
                "Tasks · {} open, the first {} shown",
                self.total,
                self.tasks.len()
            )
        } else {
            format!("Tasks · {} open", self.total)
        };
        let inner = draw_box(area, buf, theme, &title, footer);
        if inner.is_empty() {
            return;
        }
        let width = usize::from(inner.width);
        // Fitted first, to know which rows are on screen (fitting again below changes nothing).
        self.cursor.fit(self.tasks.len(), usize::from(inner.height));
        let show_due = self.due_on_screen(self.cursor.offset, usize::from(inner.height));
        // The cursor is taken out while the rows are drawn from the rest of the view.
        let mut cursor = std::mem::take(&mut self.cursor);
        cursor.fit_and_draw(
            buf,
            theme,
            inner,
            self.tasks.len(),
            "No open tasks: every `- [ ]` of the vault is done.",
            |index, selected| self.row_line(&self.tasks[index], selected, width, show_due, theme),
        );
        self.cursor = cursor;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn task(path: &str, line: usize, text: &str, due: Option<&str>) -> TaskEntry {
        TaskEntry {
            path: path.into(),
            line,
            text: text.into(),
            status: "open".into(),
            done: false,
            due: due.map(str::to_owned),
        }
    }

    fn view() -> TasksView {
        let mut in_progress = task(
            "Projects/Launch.md",
            11,
            "Draft the budget",
            Some("2026-12-01"),
        );
        in_progress.status = "in_progress".into();
        TasksView::new(
            vec![
                task(
                    "Projects/Launch.md",
                    16,
                    "Quoted follow-up",
                    Some("2026-11-30"),
                ),
                task("Home/Chores.md", 25, "Pay rent #bills", Some("2026-12-01")),
                in_progress,
                task(
                    "Projects/Launch.md",
                    8,
                    "Write the press release for the launch, with quotes from the team and a photo",
                    Some("2026-12-03"),
                ),
                task("Home/Chores.md", 24, "Water the plants", None),
                task(
                    "Projects/Launch.md",
                    14,
                    "Check the microphones #gear",
                    None,
                ),
            ],
            6,
            "2026-12-01",
        )
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn rendered(view: &mut TasksView, w: u16, h: u16) -> Buffer {
        let mut buf = buffer(w, h);
        view.render(buf.area, &mut buf, &Theme::builtin_dark());
        buf
    }

    #[test]
    fn tasks_80x24() {
        insta::assert_snapshot!(buffer_text(&rendered(&mut view(), 80, 24)));
    }

    #[test]
    fn tasks_120x40() {
        insta::assert_snapshot!(buffer_text(&rendered(&mut view(), 120, 40)));
    }

    #[test]
    fn overdue_tasks_are_marked_and_today_is_not() {
        let buf = rendered(&mut view(), 120, 40);
        let theme = Theme::builtin_dark();
        assert_eq!(
            style_at(&buf, "2026-11-30").and_then(|s| s.fg),
            theme.style(Role::Error).fg
        );
        assert_eq!(
            style_at(&buf, "2026-12-03").and_then(|s| s.fg),
            theme.style(Role::Dim).fg
        );
    }

    #[test]
    fn enter_opens_the_task_and_the_toggle_key_checks_it_off() {
        let mut view = view();
        rendered(&mut view, 80, 24);
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        assert_eq!(
            view.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            Some(ViewOutcome::OpenAtLine {
                path: "Home/Chores.md".into(),
                line: 25
            })
        );
        let ctrl_l = KeyEvent::new(KeyCode::Char('l'), KeyModifiers::CONTROL);
        assert_eq!(
            view.handle(Some(Action::ToggleTask), &ctrl_l),
            Some(ViewOutcome::ToggleTask {
                path: "Home/Chores.md".into(),
                line: 25,
                text: "Pay rent #bills".into()
            })
        );
        // The list comes back without it: the selection stays on the row, now the next task.
        let mut rest = view.tasks.clone();
        rest.remove(1);
        view.set_tasks(rest, 5);
        assert_eq!(
            view.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            Some(ViewOutcome::OpenAtLine {
                path: "Projects/Launch.md".into(),
                line: 11
            })
        );
        assert_eq!(
            view.handle(Some(Action::Cancel), &key(KeyCode::Esc)),
            Some(ViewOutcome::Close)
        );
    }

    /// Open tasks none of which has a due day (most vaults' tasks).
    fn undated() -> TasksView {
        TasksView::new(
            vec![
                task(
                    "Projects/Launch.md",
                    8,
                    "Write the press release for the launch, with quotes from the team and a photo",
                    None,
                ),
                task("Home/Chores.md", 24, "Water the plants", None),
                task(
                    "Archive/2025/Conferences/Travel planning.md",
                    112,
                    "Book the train to Lyon and the hotel near the venue",
                    None,
                ),
            ],
            3,
            "2026-12-01",
        )
    }

    #[test]
    fn tasks_without_due_days_80x24() {
        let text = buffer_text(&rendered(&mut undated(), 80, 24));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn without_a_due_day_on_screen_the_text_takes_the_due_column() {
        let text = buffer_text(&rendered(&mut undated(), 80, 24));
        // No twelve blank columns before the checkbox, and the text has them: 48 columns of the
        // press release where a due column left it 36.
        assert!(text.contains("│ › [ ] Write the press release"), "{text}");
        assert!(
            text.contains("Write the press release for the launch, with qu…"),
            "{text}"
        );
        // A long path gives way at its start: the file name and the line stay.
        assert!(
            text.contains("Travel planning.md:112") && !text.contains("Archive/2025"),
            "{text}"
        );
        // With a dated task on screen, the column is back for every row.
        let text = buffer_text(&rendered(&mut view(), 80, 24));
        assert!(
            text.contains("│               [ ] Water the plants"),
            "{text}"
        );
    }

    #[test]
    fn the_due_column_follows_the_rows_on_screen() {
        let mut tasks = vec![task("Due.md", 1, "Dated", Some("2026-12-02"))];
        tasks.extend((2..40).map(|n| task("Undated.md", n, &format!("Task {n}"), None)));
        let mut view = TasksView::new(tasks, 39, "2026-12-01");
        let text = buffer_text(&rendered(&mut view, 80, 12));
        assert!(text.contains("2026-12-02  [ ] Dated"), "{text}");
        view.handle(Some(Action::ScrollBottom), &key(KeyCode::End));
        let text = buffer_text(&rendered(&mut view, 80, 12));
        assert!(
            !text.contains("Dated") && text.contains("› [ ] Task 39"),
            "{text}"
        );
    }

    #[test]
    fn an_empty_list_and_tiny_screens() {
        let mut empty = TasksView::new(Vec::new(), 0, "2026-12-01");
        let text = buffer_text(&rendered(&mut empty, 80, 12));
        assert!(text.contains("No open tasks"), "{text}");
        assert_eq!(
            empty.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            None
        );
        for (w, h) in [(0, 0), (3, 3), (10, 4), (20, 6)] {
            rendered(&mut view(), w, h);
        }
    }
}
