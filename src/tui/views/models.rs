//! `/model`: the provider's models with their context windows and where each number came from
//! (the config, the server, the built-in table, the default); `●` marks the model in use, and
//! choosing one switches to it for the next turn.

use super::{
    Hint, ListCursor, View, ViewOutcome, compact, draw_box, footer, is_release, nav_of, one_line,
    pad_left, pad_right, put_line, text_width, truncate,
};
use crate::tui::keymap::{Action, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub use crate::host::ModelRow;

/// The models overlay.
#[derive(Debug, Clone)]
pub struct ModelsView {
    provider: String,
    current: String,
    rows: Vec<ModelRow>,
    /// Whether the server lists its models at all.
    listed: bool,
    cursor: ListCursor,
    keymap: Keymap,
}

/// Columns: selection marker 2, current marker 2, the name (flexible), the window, its source.
const MARKERS: usize = 4;
const WINDOW: usize = 6;

impl ModelsView {
    /// `rows` as the server lists them (the model in use among them, or first and `unlisted`);
    /// `listed` is false when the server has no model list (then `rows` holds the model in use).
    pub fn new(provider: &str, current: &str, rows: Vec<ModelRow>, listed: bool) -> Self {
        let selected = rows.iter().position(|r| r.id == current).unwrap_or(0);
        Self {
            provider: provider.to_string(),
            current: current.to_string(),
            rows,
            listed,
            cursor: ListCursor {
                selected,
                ..ListCursor::default()
            },
            keymap: Keymap::default_map(),
        }
    }

    /// Show the keys of `keymap` (the active one) in the hints.
    pub fn with_keymap(mut self, keymap: &Keymap) -> Self {
        self.keymap = keymap.clone();
        self
    }

    fn explanation(&self) -> &'static str {
        if self.listed {
            "Enter uses a model from the next turn on; ● marks the one in use."
        } else {
            "The server does not list its models; /model NAME uses any name it serves."
        }
    }

    fn name_width(&self, width: usize) -> usize {
        let widest = self
            .rows
            .iter()
            .map(|r| text_width(&r.id) + if r.unlisted { 13 } else { 0 })
            .max()
            .unwrap_or(0)
            .max(5);
        widest.min(width.saturating_sub(MARKERS + WINDOW + 4 + 14))
    }

    fn heading(&self, width: usize, theme: &Theme) -> Line<'static> {
        let name = self.name_width(width);
        Line::from(Span::styled(
            format!(
                "{}{}  {}  From",
                " ".repeat(MARKERS),
                pad_right("Model", name),
                pad_left("Window", WINDOW)
            ),
            theme.style(Role::Title),
        ))
    }

    fn row_line(
        &self,
        row: &ModelRow,
        selected: bool,
        width: usize,
        theme: &Theme,
    ) -> Line<'static> {
        let base = super::row_style(theme, selected);
        let with = |role: Role| base.patch(theme.style(role));
        let name_width = self.name_width(width);
        let name = if row.unlisted {
            format!("{} (not listed)", one_line(&row.id))
        } else {
            one_line(&row.id)
        };
        let source_width = width.saturating_sub(MARKERS + name_width + 2 + WINDOW + 2);
        let mut spans = super::row_markers(theme, base, selected, row.id == self.current);
        spans.extend([
            Span::styled(pad_right(&name, name_width), with(Role::Text)),
            Span::styled("  ", base),
            Span::styled(
                pad_left(&compact(row.window.tokens), WINDOW),
                with(Role::Text),
            ),
            Span::styled("  ", base),
            Span::styled(pad_right(&source_of(row), source_width), with(Role::Dim)),
        ]);
        Line::from(spans)
    }
}

/// Where the window came from, and the trained length beside a smaller running window.
fn source_of(row: &ModelRow) -> String {
    match row.trained.filter(|&t| t != row.window.tokens) {
        Some(trained) => format!("{} · trained {}", row.window.source, compact(trained)),
        None => row.window.source.to_string(),
    }
}

impl View for ModelsView {
    /// A key with its action in the List context; confirm → `SetModel`.
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        if is_release(key) {
            return None;
        }
        if let Some(nav) = nav_of(action, key) {
            self.cursor.apply(nav, self.rows.len());
            return None;
        }
        match action {
            Some(Action::Confirm) => self
                .rows
                .get(self.cursor.selected)
                .map(|r| ViewOutcome::SetModel(r.id.clone())),
            Some(Action::Cancel) => Some(ViewOutcome::Close),
            _ => None,
        }
    }

    /// Draw the overlay over `area` (the whole screen).
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = super::overlay_area(area);
        let hints: &[Hint<'_>] = &[
            (&[Action::Up, Action::Down], "move"),
            (&[Action::Confirm], "use for the next turn"),
            (&[Action::Cancel], "close"),
        ];
        let footer = footer(&self.keymap, theme, hints, &[], area.width);
        let listed = self.rows.iter().filter(|r| !r.unlisted).count();
        let title = if self.listed {
            format!("Models · {} · {listed} listed", one_line(&self.provider))
        } else {
            format!("Models · {}", one_line(&self.provider))
        };
        let inner = draw_box(area, buf, theme, &title, footer);
        if inner.is_empty() {
            return;
        }
        let width = usize::from(inner.width);
        let roomy = inner.height >= 6;
        let list = if roomy {
            put_line(
                buf,
                inner,
                0,
                &Line::from(Span::styled(
                    truncate(self.explanation(), width),
                    theme.style(Role::Dim),
                )),
            );
            put_line(buf, inner, 2, &self.heading(width, theme));
            Rect::new(inner.x, inner.y + 3, inner.width, inner.height - 3)
        } else {
            inner
        };
        // The cursor is taken out while the rows are drawn from the rest of the view.
        let mut cursor = std::mem::take(&mut self.cursor);
        cursor.fit_and_draw(
            buf,
            theme,
            list,
            self.rows.len(),
            "The server lists no models.",
            |index, selected| self.row_line(&self.rows[index], selected, width, theme),
        );
        self.cursor = cursor;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ContextWindow, WindowSource};
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn row(id: &str, tokens: u64, source: WindowSource) -> ModelRow {
        ModelRow {
            id: id.into(),
            window: ContextWindow { tokens, source },
            trained: None,
            unlisted: false,
        }
    }

    fn ollama() -> ModelsView {
        ModelsView::new(
            "openai · http://localhost:11434/v1",
            "qwen2.5:7b",
            vec![
                row(
                    "llama3.2:latest",
                    131_072,
                    WindowSource::Server("Ollama /api/show context_length"),
                ),
                row("qwen2.5:7b", 8_192, WindowSource::Config),
                row("gpt-oss:20b", 131_072, WindowSource::Table),
                row("nomic-embed-text:latest", 200_000, WindowSource::Default),
            ],
            true,
        )
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn rendered(view: &mut ModelsView, w: u16, h: u16) -> Buffer {
        let mut buf = buffer(w, h);
        view.render(buf.area, &mut buf, &Theme::builtin_dark());
        buf
    }

    #[test]
    fn models_80x24() {
        let mut view = ollama();
        insta::assert_snapshot!(buffer_text(&rendered(&mut view, 80, 24)));
    }

    #[test]
    fn models_120x40() {
        let mut view = ollama();
        insta::assert_snapshot!(buffer_text(&rendered(&mut view, 120, 40)));
    }

    #[test]
    fn a_server_without_a_list_shows_the_model_in_use() {
        let mut view = ModelsView::new(
            "openai · http://127.0.0.1:8080/v1",
            "local",
            vec![ModelRow {
                id: "local".into(),
                window: ContextWindow {
                    tokens: 4_096,
                    source: WindowSource::Server("llama.cpp /props n_ctx"),
                },
                trained: None,
                unlisted: false,
            }],
            false,
        );
        insta::assert_snapshot!(buffer_text(&rendered(&mut view, 80, 24)));
    }

    /// Ollama allocated 4,096 tokens for a model trained for 40,960: both are shown, and the
    /// window used is the allocated one.
    #[test]
    fn the_allocated_window_is_used_and_the_trained_one_shown_beside_it() {
        let mut view = ModelsView::new(
            "openai · http://localhost:11434/v1",
            "qwen3:8b",
            vec![ModelRow {
                id: "qwen3:8b".into(),
                window: ContextWindow {
                    tokens: 4_096,
                    source: WindowSource::Server("Ollama /api/ps context_length"),
                },
                trained: Some(40_960),
                unlisted: false,
            }],
            true,
        );
        let text = buffer_text(&rendered(&mut view, 100, 12));
        assert!(
            text.contains("server: Ollama /api/ps context_length · trained 41k")
                || text.contains("trained 40"),
            "{text}"
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_model_in_use_is_selected_and_enter_switches() {
        let mut view = ollama();
        let buf = rendered(&mut view, 80, 24);
        let selected = Theme::builtin_dark().style(Role::PickerSelected).bg;
        assert_eq!(style_at(&buf, "qwen2.5:7b").and_then(|s| s.bg), selected);
        assert_ne!(style_at(&buf, "gpt-oss:20b").and_then(|s| s.bg), selected);
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        assert_eq!(
            view.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            Some(ViewOutcome::SetModel("gpt-oss:20b".into()))
        );
        view.handle(None, &key(KeyCode::Home));
        assert_eq!(
            view.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            Some(ViewOutcome::SetModel("llama3.2:latest".into()))
        );
        assert_eq!(
            view.handle(Some(Action::Cancel), &key(KeyCode::Esc)),
            Some(ViewOutcome::Close)
        );
    }

    #[test]
    fn tiny_screens_and_empty_lists_do_not_panic() {
        let mut empty = ModelsView::new("openai", "x", Vec::new(), true);
        let text = buffer_text(&rendered(&mut empty, 60, 12));
        assert!(text.contains("The server lists no models."), "{text}");
        assert_eq!(
            empty.handle(Some(Action::Confirm), &key(KeyCode::Enter)),
            None
        );
        for (w, h) in [(0, 0), (3, 3), (10, 4), (20, 6)] {
            rendered(&mut ollama(), w, h);
        }
    }
}
