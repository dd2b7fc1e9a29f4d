//! The `/` list and the argument hint in the chat input (decisions §64): typing `/` at the start
//! of the message opens the `[[` list's drawing over every command the host last read; the host
//! reads the command files again each time the list opens, so an edited file or a trust given
//! since shows at the next `/`. Once a name is complete and followed by a space, a dim line
//! above the input says what the command takes.

use super::*;
use crate::commands::{Catalog, Command};
use crate::tui::link_completion::{CommandChoice, Kind};

impl App {
    /// The host read the commands again: keep them, and refilter an open `/` list.
    pub fn on_commands(&mut self, catalog: Catalog) {
        self.commands = catalog;
        if matches!(self.overlay, Some(Overlay::Help(_))) {
            // Asked for when the help opened (ms ago): show what was read.
            self.overlay = Some(Overlay::Help(HelpView::new(
                &self.keymap,
                &self.commands.commands,
            )));
        }
        if self
            .completion
            .as_ref()
            .is_some_and(|c| c.kind == Kind::Commands)
        {
            let choices = self.command_choices();
            let withheld = self.commands.withheld.clone();
            if let Some(list) = self.completion.as_mut() {
                list.set_command_choices(choices, withheld.as_deref());
            }
        }
    }

    /// Every command there is, as the host last read them.
    pub fn commands(&self) -> &[Command] {
        &self.commands.commands
    }

    /// The help (`/help`, F1): the keys and every command; the commands are read again so the
    /// next help is current.
    pub(super) fn show_help(&mut self) {
        self.overlay = Some(Overlay::Help(HelpView::new(
            &self.keymap,
            &self.commands.commands,
        )));
        self.effects.push(Effect::Host(Request::ListCommands));
    }

    fn command_choices(&self) -> Vec<CommandChoice> {
        #[cfg(test)]
        choices_built::count();
        self.commands
            .commands
            .iter()
            .map(|c| CommandChoice {
                name: c.name.clone(),
                // The vault's or a server's words, drawn as the help view draws them.
                description: crate::quote::terminal(&c.description).into_owned(),
                // Only a required argument (`<focus>`) makes Enter wait; `/model` with its
                // optional `[name]` runs as it is.
                takes_arguments: c.argument_hint.trim_start().starts_with('<'),
            })
            .collect()
    }

    /// After a key reached the chat input: open the `/` list when a `/` was just typed at the
    /// start of the message, follow the name typed after it, close it when the name ended.
    /// `true` when the `/` list is (or was) in charge, so the `[[` list is not looked at.
    pub(super) fn update_command_list(&mut self, key: &KeyEvent) -> bool {
        let open = self
            .completion
            .as_ref()
            .is_some_and(|c| c.kind == Kind::Commands);
        if self.focus != Pane::Chat {
            if open {
                self.completion = None;
            }
            return open;
        }
        let (row, col) = self.input.cursor_line_col();
        let line = self.input.line(row);
        let query = link_completion::command_query(row, &line, col);
        let typed_slash = key.code == crossterm::event::KeyCode::Char('/')
            && !key.modifiers.intersects(
                crossterm::event::KeyModifiers::CONTROL | crossterm::event::KeyModifiers::ALT,
            );
        // A `/` typed as the message's first character (re)opens the list.
        let opens = typed_slash && col == 1 && query.as_deref() == Some("");
        if opens {
            let choices = self.command_choices();
            self.completion = Some(LinkCompletion::commands(
                (0, 0),
                choices,
                self.commands.withheld.as_deref(),
            ));
            // Read again: a command file edited, or the vault trusted, since the last `/`.
            self.effects.push(Effect::Host(Request::ListCommands));
            return true;
        }
        if !open {
            return false;
        }
        match query {
            Some(query) => {
                if let Some(list) = self.completion.as_mut() {
                    list.set_command_query(&query);
                }
            }
            None => self.completion = None,
        }
        true
    }

    /// A key while the `/` list is open: Up/Down choose, Tab completes the name, Enter runs the
    /// command (or completes it and waits when it takes arguments), Esc closes (`true`); any
    /// other key goes on to the input.
    pub(super) fn on_command_list_key(&mut self, key: &KeyEvent) -> bool {
        let Some(list) = self.completion.as_mut() else {
            return false;
        };
        match self.keymap.action(KeyContext::Completion, key) {
            Some(Action::Up) => list.move_selection(-1),
            Some(Action::Down) => list.move_selection(1),
            Some(Action::Confirm) => {
                let Some(chosen) = list.selected().cloned() else {
                    // Nothing to choose: the key does what it does without the list.
                    self.completion = None;
                    return false;
                };
                let typed = list.query().chars().count();
                self.completion = None;
                // The key map gives the list one "confirm" for Enter and Tab; between the two,
                // Tab only completes (as every shell does) and Enter runs.
                let completes_only = key.code == crossterm::event::KeyCode::Tab;
                if completes_only || chosen.takes_arguments {
                    self.replace_command_name(typed, &format!("{} ", chosen.insert));
                } else {
                    self.replace_command_name(typed, &chosen.insert);
                    self.on_action(Action::Send, key);
                }
            }
            Some(Action::Cancel) => self.completion = None,
            _ => return false,
        }
        true
    }

    /// Put the chosen command's name in place of the one being typed: the `typed` characters
    /// before the cursor and the rest of the name after it (the cursor may be inside the name).
    pub(super) fn replace_command_name(&mut self, typed: usize, text: &str) {
        let (row, col) = self.input.cursor_line_col();
        let after = self
            .input
            .line(row)
            .chars()
            .skip(col)
            .take_while(|c| !c.is_whitespace())
            .count();
        self.input.delete_after_cursor(after);
        self.input.replace_before_cursor(typed, text);
    }

    /// What the command being typed takes, once its name is followed by a space: `/name hint`.
    pub(super) fn argument_hint(&self) -> Option<String> {
        if self.focus != Pane::Chat || self.completion.is_some() {
            return None;
        }
        let line = self.input.line(0);
        let (name, _) = line.strip_prefix('/')?.split_once(' ')?;
        let command = self.commands.find(name)?;
        (!command.argument_hint.is_empty()).then(|| {
            format!(
                "/{} {}",
                crate::quote::terminal(&command.name),
                crate::quote::terminal(&command.argument_hint)
            )
        })
    }

    /// The argument hint on the transcript's last row, just above the message box.
    pub(super) fn render_argument_hint(&self, buf: &mut Buffer) {
        let Some(hint) = self.argument_hint() else {
            return;
        };
        let input = self.input_area;
        // Above the message box is the transcript's bottom border, and above that its last row.
        if input.is_empty() || input.y < 2 || input.width < 8 {
            return;
        }
        let row = input.y - 2;
        let width = usize::from(input.width.saturating_sub(4));
        let hint = crate::tui::width::EDITOR.truncate_end(&hint, width);
        buf.set_stringn(
            input.x + 1,
            row,
            " ".repeat(usize::from(input.width - 2)),
            usize::from(input.width - 2),
            self.theme.style(Role::Text),
        );
        buf.set_stringn(input.x + 2, row, &hint, width, self.theme.style(Role::Dim));
    }
}

/// How many times the `/` list's choices were made from the catalog, on the test's thread.
#[cfg(test)]
pub(crate) mod choices_built {
    use std::cell::Cell;
    thread_local! {
        static BUILT: Cell<usize> = const { Cell::new(0) };
    }
    pub(super) fn count() {
        BUILT.with(|b| b.set(b.get() + 1));
    }
    pub fn reset() {
        BUILT.with(|b| b.set(0));
    }
    pub fn get() -> usize {
        BUILT.with(Cell::get)
    }
}
