//! The offer of a recovery file when its note opens: the unsaved text vaultchat kept when a
//! signal stopped it (docs/decisions.md §61), with when it was kept and how it differs from the
//! note as it is now. Restore puts it in the editor as unsaved changes (one undo step; the note
//! on disk is untouched until the person saves), Discard forgets it, Esc decides later (the
//! next opening asks again). Nothing is restored without the person's answer.

use super::keymap::{Action, KeyContext, Keymap};
use super::saving::{prompt_box, wrapped_rows};
use super::theme::{Role, Theme};
use crate::host::recovery::Kept;
use crate::text::diff::{DiffPreview, LineKind};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

/// How the kept text differs from the note, as the offer shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Compared {
    added: usize,
    removed: usize,
    /// The first changed lines, signed (`+ …`, `- …`) and escaped.
    preview: Vec<String>,
}

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryChoice {
    Restore,
    Discard,
    Later,
}

/// The open offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryPrompt {
    pub path: String,
    /// The recovery file holding it (what is forgotten once it is safe or discarded).
    pub file: String,
    /// Older recovery files of the note, offered after this one.
    older: usize,
    /// The kept text.
    pub text: String,
    /// When it was kept, `YYYY-MM-DD HH:MM` UTC.
    kept_at: String,
    /// How it differs from the note as it is now, once the host has compared them (`None`:
    /// still comparing, which the offer says).
    compared: Option<Compared>,
    focus: RecoveryChoice,
}

impl RecoveryPrompt {
    /// The offer of the newest recovery `kept` of a note; how it differs from the note comes
    /// later ([`RecoveryPrompt::on_compared`]): the host diffs, not the UI loop.
    pub fn new(kept: Kept) -> Self {
        let Kept {
            file,
            recovery,
            older,
        } = kept;
        Self {
            path: recovery.path,
            file,
            older,
            text: recovery.text,
            kept_at: crate::time::format_minute(recovery.written_ms),
            compared: None,
            focus: RecoveryChoice::Restore,
        }
    }

    /// The host's comparison of recovery `file` with the note; one of another file (an offer
    /// already answered) is not this offer's.
    pub fn on_compared(&mut self, file: &str, diff: &DiffPreview) {
        if file != self.file {
            return;
        }
        let preview = diff
            .lines
            .iter()
            .filter_map(|line| {
                let sign = match line.kind {
                    LineKind::Context => return None,
                    LineKind::Added => '+',
                    LineKind::Removed => '-',
                };
                // Vault text reaches the terminal escaped.
                Some(format!(
                    "{sign} {}",
                    crate::quote::terminal(line.text.trim_end())
                ))
            })
            .collect();
        self.compared = Some(Compared {
            added: diff.added,
            removed: diff.removed,
            preview,
        });
    }

    fn choices() -> [RecoveryChoice; 2] {
        [RecoveryChoice::Restore, RecoveryChoice::Discard]
    }

    /// A key (resolved in [`KeyContext::Unsaved`]: Enter takes the focused button, Esc is
    /// Later, the discard key discards; arrows and Tab move); `Some` once the person chose.
    pub fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<RecoveryChoice> {
        match action {
            Some(Action::Confirm) => return Some(self.focus),
            Some(Action::Cancel) => return Some(RecoveryChoice::Later),
            Some(Action::Discard) => return Some(RecoveryChoice::Discard),
            _ => {}
        }
        if super::saving::moves_focus(key) {
            self.focus = match self.focus {
                RecoveryChoice::Restore => RecoveryChoice::Discard,
                RecoveryChoice::Discard | RecoveryChoice::Later => RecoveryChoice::Restore,
            };
        }
        None
    }

    /// Draw the offer centred in `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, keymap: &Keymap) {
        let width = area.width.saturating_sub(4).min(76);
        if width < 20 || area.height < 8 {
            return;
        }
        let text_width = usize::from(width.saturating_sub(4));
        let against = match &self.compared {
            Some(c) => format!("+{} -{} lines against", c.added, c.removed),
            None => "comparing them with".to_string(),
        };
        let mut message = format!(
            "vaultchat was stopped with unsaved changes to {} and kept them at {} UTC: {against} the note as it is now. Restore puts them in the editor, unsaved; the note on disk changes only when you save.",
            // The path was read back from a file on disk, as another writer may have named it.
            crate::quote::terminal(&self.path),
            self.kept_at
        );
        match self.older {
            0 => {}
            1 => message.push_str(" An older kept version is offered after this one."),
            n => message.push_str(&format!(
                " {n} older kept versions are offered after this one."
            )),
        }
        let message_rows = wrapped_rows(&message, text_width);
        let room = area.height.saturating_sub(message_rows + 6);
        let preview = self.compared.as_ref().map_or(&[][..], |c| &c.preview[..]);
        let shown = preview.len().min(usize::from(room));
        let height = (message_rows + shown as u16 + 5).min(area.height);
        let inner = prompt_box(area, (width, height), " Recovered changes ", buf, theme);
        Paragraph::new(Line::styled(message, theme.style(Role::Text)))
            .wrap(Wrap { trim: true })
            .render(Rect::new(inner.x, inner.y, inner.width, message_rows), buf);
        let mut row = inner.y + message_rows + 1;
        for line in preview.iter().take(shown) {
            let role = if line.starts_with('+') {
                Role::DiffAdded
            } else {
                Role::DiffRemoved
            };
            let text = crate::tui::width::truncate(line, usize::from(inner.width));
            Paragraph::new(Line::styled(text, theme.style(role)))
                .render(Rect::new(inner.x, row, inner.width, 1), buf);
            row += 1;
        }
        if shown > 0 {
            row += 1;
        }
        let mut buttons = Vec::new();
        for choice in Self::choices() {
            let (key, label) = match choice {
                RecoveryChoice::Restore => (Some(Action::Confirm), "Restore"),
                RecoveryChoice::Discard | RecoveryChoice::Later => {
                    (Some(Action::Discard), "Discard")
                }
            };
            buttons.extend(super::saving::button(
                keymap,
                key,
                label,
                choice == self.focus,
                theme,
            ));
        }
        let cancel = keymap
            .keys_for(KeyContext::Unsaved, Action::Cancel)
            .first()
            .cloned()
            .unwrap_or_default();
        buttons.push(Span::styled(
            format!("[{cancel}] later"),
            theme.style(Role::Dim),
        ));
        if row < inner.y + inner.height {
            Paragraph::new(Line::from(buttons))
                .render(Rect::new(inner.x, row, inner.width, 1), buf);
        }
    }
}
