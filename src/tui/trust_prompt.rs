//! The question a vault with plugins asks once (per content of its plugins file): the commands
//! that would run, and Trust / Not now. Nothing from the vault runs before the answer, and
//! "Not now" (the default, and Esc) leaves them stopped until the file changes or the person runs
//! `vaultchat trust`.

use super::chat::wrap::{self, Breaks};
use super::keymap::{Action, KeyContext, Keymap};
use super::saving::wrapped_rows;
use super::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustChoice {
    Trust,
    NotNow,
}

/// The open question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPrompt {
    /// The plugins file, as the person knows it (vault-relative).
    file: String,
    /// (plugin name, what it runs: the command, each argument, each environment variable and
    /// the working folder, a row each, already quoted and escaped by the host:
    /// [`crate::host::TrustQuestion::command_lines`]).
    commands: Vec<(String, Vec<String>)>,
    focus: TrustChoice,
}

impl TrustPrompt {
    pub fn new(file: String, commands: Vec<(String, Vec<String>)>) -> Self {
        Self {
            file,
            commands,
            focus: TrustChoice::NotNow,
        }
    }

    /// A key (Enter and Esc as in [`KeyContext::Unsaved`]; arrows and Tab move between the
    /// buttons); `Some` once the person answered.
    pub fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<TrustChoice> {
        match action {
            Some(Action::Confirm) => return Some(self.focus),
            Some(Action::Cancel) => return Some(TrustChoice::NotNow),
            _ => {}
        }
        if super::saving::moves_focus(key) {
            self.focus = match self.focus {
                TrustChoice::Trust => TrustChoice::NotNow,
                TrustChoice::NotNow => TrustChoice::Trust,
            };
        }
        None
    }

    /// Draw the question centred in `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, keymap: &Keymap) {
        let width = area.width.saturating_sub(4).min(76);
        if width < 20 || area.height < 8 {
            return;
        }
        let text_width = usize::from(width.saturating_sub(4));
        let intro = format!(
            "This vault declares its own tools in {}. Trusting it lets vaultchat run these commands as you:",
            self.file
        );
        let outro = "Any change to the plugins' files asks again. Later: `vaultchat trust` or `vaultchat trust --revoke`.";
        let intro_rows = wrapped_rows(&intro, text_width);
        let outro_rows = wrapped_rows(outro, text_width);
        let room = area
            .height
            .saturating_sub(intro_rows + outro_rows + 7)
            .max(1);
        // Every command whole, wrapped (a cut line could hide what runs); those that do not fit
        // are counted on a last row instead.
        let laid_out: Vec<Vec<Line<'static>>> = self
            .commands
            .iter()
            .map(|(name, rows)| command_rows(name, rows, text_width, theme))
            .collect();
        let (shown, command_rows) = fitting(&laid_out, room);
        let height = (intro_rows + command_rows + outro_rows + 6).min(area.height);
        let title = " Trust this vault's plugins? ";
        let inner = super::saving::prompt_box(area, (width, height), title, buf, theme);
        let mut row = inner.y;
        let bottom = inner.y + inner.height;
        let intro = Line::styled(intro, theme.style(Role::Text));
        paragraph(intro, intro_rows, &mut row, inner, buf);
        row += 1;
        self.render_commands(&laid_out, shown, &mut row, inner, buf, theme);
        row += 1;
        paragraph(
            Line::styled(outro, theme.style(Role::Dim)),
            outro_rows,
            &mut row,
            inner,
            buf,
        );
        let buttons = self.buttons(theme, keymap);
        let last = bottom.saturating_sub(1);
        if row <= last {
            Paragraph::new(Line::from(buttons))
                .render(Rect::new(inner.x, last, inner.width, 1), buf);
        }
    }

    /// The first `shown` commands' rows from `row` down, then the count of those left out.
    fn render_commands(
        &self,
        laid_out: &[Vec<Line<'static>>],
        shown: usize,
        row: &mut u16,
        inner: Rect,
        buf: &mut Buffer,
        theme: &Theme,
    ) {
        let bottom = inner.y + inner.height;
        let mut put = |line: Line<'static>, row: &mut u16| {
            if *row < bottom {
                Paragraph::new(line).render(Rect::new(inner.x, *row, inner.width, 1), buf);
            }
            *row += 1;
        };
        for lines in laid_out.iter().take(shown) {
            for line in lines {
                put(line.clone(), row);
            }
        }
        if shown < self.commands.len() {
            let more = self.commands.len() - shown;
            let line = Line::styled(
                format!("  … and {more} more: `vaultchat trust` lists them all"),
                theme.style(Role::Dim),
            );
            put(line, row);
        }
    }

    fn buttons(&self, theme: &Theme, keymap: &Keymap) -> Vec<Span<'static>> {
        let key = |action| {
            keymap
                .keys_for(KeyContext::Unsaved, action)
                .first()
                .cloned()
                .unwrap_or_default()
        };
        let mut spans = Vec::new();
        for (choice, label) in [
            (TrustChoice::Trust, "Trust"),
            (TrustChoice::NotNow, "Not now"),
        ] {
            let role = if choice == self.focus {
                Role::ButtonFocused
            } else {
                Role::Button
            };
            spans.push(Span::styled(format!(" {label} "), theme.style(role)));
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(
            format!(
                "←/→ choose · {} answer · {} not now",
                key(Action::Confirm),
                key(Action::Cancel)
            ),
            theme.style(Role::Dim),
        ));
        spans
    }
}

/// One plugin as rows of `width` cells: `  name:`, then each of its rows (command, arguments,
/// environment, folder) on rows of their own, wrapped under themselves (a long path is split
/// rather than cut). Every character is escaped again here, so even a caller's raw text cannot
/// move the cursor or draw a row of its own.
/// How many commands fit whole in `room` rows, keeping a row for "… and N more" when some do
/// not, and how many rows they take (that row included).
fn fitting(laid_out: &[Vec<Line<'static>>], room: u16) -> (usize, u16) {
    let rows_each: Vec<u16> = laid_out
        .iter()
        .map(|lines| u16::try_from(lines.len()).unwrap_or(u16::MAX))
        .collect();
    let mut shown = 0;
    let mut command_rows = 0u16;
    for (i, rows) in rows_each.iter().enumerate() {
        let more_row = u16::from(i + 1 < rows_each.len());
        if command_rows.saturating_add(*rows).saturating_add(more_row) > room {
            break;
        }
        command_rows += rows;
        shown += 1;
    }
    if shown < laid_out.len() {
        command_rows += 1;
    }
    (shown, command_rows)
}

fn command_rows(name: &str, rows: &[String], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::raw("  "),
        Span::styled(
            format!("{}:", crate::quote::terminal(name)),
            theme.style(Role::Tool),
        ),
    ])];
    let first = [Span::raw("    ")];
    let rest = [Span::raw("      ")];
    for row in rows {
        lines.extend(wrap::wrap(
            &[Span::styled(
                crate::quote::terminal(row).into_owned(),
                theme.style(Role::Text),
            )],
            width,
            &first,
            &rest,
            Breaks::Words,
        ));
    }
    lines
}

/// Wrapped text of `rows` rows at `row` inside `inner` (left out if it does not fit); `row` moves
/// past it.
fn paragraph(text: Line<'static>, rows: u16, row: &mut u16, inner: Rect, buf: &mut Buffer) {
    if *row + rows <= inner.y + inner.height {
        Paragraph::new(text)
            .wrap(Wrap { trim: true })
            .render(Rect::new(inner.x, *row, inner.width, rows), buf);
    }
    *row += rows;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn not_now_is_the_default_and_arrows_reach_trust() {
        let keymap = Keymap::default_map();
        let mut prompt = TrustPrompt::new(".vaultchat/plugins.toml".into(), Vec::new());
        let enter = key(KeyCode::Enter);
        let answer = |prompt: &mut TrustPrompt, k: KeyEvent| {
            let action = keymap.action(KeyContext::Unsaved, &k);
            prompt.handle(action, &k)
        };
        assert_eq!(
            answer(&mut prompt.clone(), enter),
            Some(TrustChoice::NotNow)
        );
        assert_eq!(answer(&mut prompt, key(KeyCode::Right)), None);
        assert_eq!(answer(&mut prompt.clone(), enter), Some(TrustChoice::Trust));
        assert_eq!(
            answer(&mut prompt, key(KeyCode::Esc)),
            Some(TrustChoice::NotNow)
        );
        assert_eq!(answer(&mut prompt, key(KeyCode::Char('x'))), None);
    }
}
