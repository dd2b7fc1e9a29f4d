//! What keys, the mouse and pastes do: each key goes to the first taker (banner, prompt, overlay,
//! conflict, `[[` list, pane), then bound actions run as named steps.

use super::*;

impl App {
    /// A terminal event.
    pub fn on_terminal(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(&key),
            Event::Key(_) => {}
            Event::Paste(text) => self.on_paste(&text),
            Event::Mouse(mouse) => self.on_mouse(&mouse),
            // Switching to another window is a natural moment to have the note on disk.
            Event::FocusLost => self.saver.save_now_if_auto(&self.editor, &mut self.effects),
            Event::Resize(..) | Event::FocusGained => {}
        }
        self.settle();
    }

    pub(super) fn on_paste(&mut self, text: &str) {
        if self.banner.is_active()
            || self.overlay.is_some()
            || self.trust_prompt.is_some()
            || self.recovery_prompt.is_some()
        {
            return;
        }
        match self.focus {
            // Some terminals paste an image as an empty paste: look at the clipboard itself.
            Pane::Chat if text.is_empty() => self.read_clipboard(),
            Pane::Chat => match crate::attach::dropped_image_paths(text) {
                Some(paths) => {
                    let count = paths.len();
                    self.effects.push(Effect::AttachImageFiles(paths));
                    let what = if count == 1 { "image" } else { "images" };
                    self.flash(format!("attaching the dropped {what}…"), Role::Notice);
                }
                None => self.input.insert_str(text),
            },
            Pane::Editor if self.editor.path().is_some() => self.editor.insert_text(text),
            Pane::Editor => {}
            Pane::Files => self.files.paste(text),
        }
    }

    /// A click focuses the pane under the pointer (and places the editor's cursor, or opens
    /// what the file pane shows there); a drag in the editor selects; the wheel scrolls the pane
    /// under the pointer. Overlays and the banner take no mouse input.
    pub(super) fn on_mouse(&mut self, mouse: &MouseEvent) {
        if self.banner.is_active()
            || self.overlay.is_some()
            || self.trust_prompt.is_some()
            || self.recovery_prompt.is_some()
        {
            return;
        }
        let (column, row) = (mouse.column, mouse.row);
        let inside = |r: Rect| r.contains(ratatui::layout::Position::new(column, row));
        let wheel = match mouse.kind {
            MouseEventKind::ScrollUp => Some(-1),
            MouseEventKind::ScrollDown => Some(1),
            _ => None,
        };
        if let Some(direction) = wheel {
            let rows = isize::from(WHEEL_ROWS as i16) * direction;
            if inside(self.editor_area) && self.editor.path().is_some() {
                self.editor.scroll_view(rows);
            } else if inside(self.files_area) {
                self.files.scroll_by(rows);
            } else if inside(self.chat_area) {
                match direction {
                    -1 => self.transcript.scroll_up(WHEEL_ROWS),
                    _ => self.transcript.scroll_down(WHEEL_ROWS),
                }
            }
            return;
        }
        if mouse.kind == MouseEventKind::Drag(MouseButton::Left) {
            // Dragging in the editor after a click there selects, as in any editor.
            if self.focus == Pane::Editor && inside(self.editor_area) {
                self.editor.drag_to(column, row);
            }
            return;
        }
        if mouse.kind != MouseEventKind::Down(MouseButton::Left) {
            return;
        }
        // A click on the `[[` list accepts the row under it; anywhere else closes the list.
        if let Some(completion) = self.completion.as_mut() {
            match completion.click(column, row) {
                Some(true) => {
                    self.accept_completion();
                    return;
                }
                Some(false) => return,
                None => self.completion = None,
            }
        }
        if inside(self.editor_area) {
            self.focus = Pane::Editor;
            self.editor.click(column, row);
        } else if inside(self.files_area) {
            self.focus = Pane::Files;
            if let Some(outcome) = self.files.click(column, row) {
                self.on_file_outcome(outcome);
            }
        } else if inside(self.chat_area) {
            self.focus = Pane::Chat;
        }
    }

    pub(super) fn on_file_outcome(&mut self, outcome: FileOutcome) {
        match outcome {
            FileOutcome::Open(path) => self.open_note(path),
            FileOutcome::Create(name) => {
                self.effects
                    .push(Effect::Host(Request::PlanChange(ChangeRequest::Create {
                        name,
                    })))
            }
            FileOutcome::Move { from, to } => {
                self.effects
                    .push(Effect::Host(Request::PlanChange(ChangeRequest::Move {
                        from,
                        to,
                    })))
            }
            FileOutcome::Leave => self.focus = self.text_pane(),
        }
    }

    /// The pane that takes typing when the file pane gives the keyboard back.
    pub(super) fn text_pane(&self) -> Pane {
        if self.editor.path().is_some() {
            Pane::Editor
        } else {
            Pane::Chat
        }
    }

    /// A key goes to the first of: the banner, the unsaved-changes prompt, an overlay, the
    /// conflict keys, the `[[` list, then the focused pane (its own keys, then global actions).
    pub(super) fn on_key(&mut self, key: &KeyEvent) {
        self.flash = None;
        if self.banner.is_active() {
            self.on_banner_key(key);
        } else if self.trust_prompt.is_some() {
            self.on_trust_key(key);
        } else if self.recovery_prompt.is_some() {
            self.on_recovery_key(key);
        } else if self.prompt.is_some() {
            self.on_prompt_key(key);
        } else if self.overlay.is_some() {
            self.on_overlay_key(key);
        } else if self.focus == Pane::Editor && self.editor.conflict() {
            self.on_conflict_key(key);
        } else if self.completion.is_none()
            || !match self.completion.as_ref().map(|c| c.kind) {
                Some(link_completion::Kind::Commands) => self.on_command_list_key(key),
                _ => self.on_completion_key(key),
            }
        {
            self.on_pane_key(key);
        }
    }

    pub(super) fn on_banner_key(&mut self, key: &KeyEvent) {
        let action = self.keymap.action(KeyContext::Banner, key);
        let edits_open_note = self
            .banner
            .current()
            .and_then(|r| r.proposal.as_ref())
            .is_some_and(|p| Some(p.path.as_str()) == self.editor.path());
        let Some(outcome) = self.banner.handle(action, key) else {
            return;
        };
        let approved = !matches!(outcome.answer, crate::protocol::Answer::Deny { .. })
            && outcome.hunks.as_ref().is_none_or(|h| h.iter().any(|a| *a));
        if approved && edits_open_note && outcome.request < LOCAL_REQUESTS {
            // Leaving the note waits until the agent delivered it (approve, then quit).
            self.saver.expect_edit(outcome.request);
        }
        if self.answer_local(&outcome) {
            return;
        }
        self.effects.push(Effect::Agent(Op::Decision {
            request: outcome.request,
            answer: outcome.answer,
            hunks: outcome.hunks,
        }));
        if !self.banner.is_active() {
            self.state = AgentState::Thinking;
        }
    }

    /// The plugins question: Enter answers with the focused button, Esc is "Not now".
    pub(super) fn on_trust_key(&mut self, key: &KeyEvent) {
        let Some(prompt) = self.trust_prompt.as_mut() else {
            return;
        };
        let action = self.keymap.action(KeyContext::Unsaved, key);
        let Some(choice) = prompt.handle(action, key) else {
            return;
        };
        self.trust_prompt = None;
        match choice {
            TrustChoice::Trust => self.flash("vault plugins trusted; starting them", Role::Notice),
            TrustChoice::NotNow => self.flash(
                "vault plugins not started; `vaultchat trust` allows them later",
                Role::Notice,
            ),
        }
        self.effects.push(Effect::Host(Request::AnswerPluginTrust {
            trusted: choice == TrustChoice::Trust,
        }));
        // The trust covers the vault's commands too.
        self.effects.push(Effect::Host(Request::ListCommands));
    }

    /// The recovery offer: Enter takes the focused button, Esc is "later".
    pub(super) fn on_recovery_key(&mut self, key: &KeyEvent) {
        let Some(prompt) = self.recovery_prompt.as_mut() else {
            return;
        };
        let action = self.keymap.action(KeyContext::Unsaved, key);
        let Some(choice) = prompt.handle(action, key) else {
            return;
        };
        if let Some(prompt) = self.recovery_prompt.take() {
            self.on_recovery_choice(prompt, choice);
        }
    }

    pub(super) fn on_prompt_key(&mut self, key: &KeyEvent) {
        let Some(prompt) = self.prompt.as_mut() else {
            return;
        };
        let action = self.keymap.action(KeyContext::Unsaved, key);
        let Some(choice) = prompt.handle(action, key) else {
            return;
        };
        let leave = prompt.leave.clone();
        self.prompt = None;
        if choice == Choice::Cancel {
            self.flash(
                "stayed on the note; nothing was saved or dropped",
                Role::Notice,
            );
        }
        if let Some(again) = self
            .saver
            .answer(leave, choice, &self.editor, &mut self.effects)
        {
            self.prompt = Some(again);
        }
    }

    pub(super) fn on_overlay_key(&mut self, key: &KeyEvent) {
        let action = self.keymap.action(KeyContext::List, key);
        let Some(overlay) = self.overlay.as_mut() else {
            return;
        };
        if let Some(view) = overlay.view() {
            let outcome = view.handle(action, key);
            self.on_view_outcome(outcome);
            return;
        }
        match overlay {
            Overlay::Picker(picker) => match picker.handle(action, key) {
                Some(PickerOutcome::Open(path)) => {
                    self.overlay = None;
                    self.open_note(path);
                }
                Some(PickerOutcome::Cancel) => self.overlay = None,
                None => {}
            },
            Overlay::Templates(templates) => match templates.picker.handle(action, key) {
                Some(PickerOutcome::Open(path)) => {
                    let text = templates.text_of(&path).map(str::to_string);
                    self.overlay = None;
                    self.insert_template(&path, text);
                }
                Some(PickerOutcome::Cancel) => self.overlay = None,
                None => {}
            },
            // The list views took the key above.
            Overlay::Sessions(_)
            | Overlay::Usage(_)
            | Overlay::Help(_)
            | Overlay::Rewind(_)
            | Overlay::Tools(_)
            | Overlay::Models(_)
            | Overlay::Tasks(_)
            | Overlay::Backlinks(_) => {}
        }
    }

    pub(super) fn on_conflict_key(&mut self, key: &KeyEvent) {
        match self.keymap.action(KeyContext::Conflict, key) {
            Some(Action::KeepMine) => self.resolve(ConflictChoice::KeepMine),
            Some(Action::TakeTheirs) => self.resolve(ConflictChoice::TakeTheirs),
            Some(Action::Merge) => self.resolve(ConflictChoice::Merge),
            Some(Action::Cancel) => self.focus = Pane::Chat,
            Some(other) => self.on_action(other, key),
            None => {}
        }
    }

    /// A key for the focused pane: the file pane's own keys, then bound actions, then typing.
    pub(super) fn on_pane_key(&mut self, key: &KeyEvent) {
        let context = match self.focus {
            Pane::Editor => KeyContext::Editor,
            Pane::Chat => KeyContext::Chat,
            Pane::Files => KeyContext::Files,
        };
        let action = self.keymap.action(context, key);
        // While the prompt is open the pane types even its own keys (`n`, vim's `j`); global
        // keys (quit, the picker, focus) still work.
        if self.focus == Pane::Files && is_file_pane_key(action) {
            if let Some(outcome) = self.files.handle(action, key) {
                self.on_file_outcome(outcome);
            }
            return;
        }
        match action {
            Some(action) => self.on_action(action, key),
            None => match self.focus {
                Pane::Editor => self.editor.handle_key(key),
                Pane::Chat => self.input.handle_key(key),
                Pane::Files => {}
            },
        }
        self.update_completion(key);
    }

    /// A key while the `[[` list is open: its own keys move, accept or close it (`true`); any
    /// other key goes on to the text box and the list follows what is typed.
    pub(super) fn on_completion_key(&mut self, key: &KeyEvent) -> bool {
        let Some(completion) = self.completion.as_mut() else {
            return false;
        };
        match self.keymap.action(KeyContext::Completion, key) {
            Some(Action::Up) => completion.move_selection(-1),
            Some(Action::Down) => completion.move_selection(1),
            Some(Action::Confirm) if completion.selected().is_none() => {
                // Nothing matches: the key does what it does without the list (a new line).
                self.completion = None;
                return false;
            }
            Some(Action::Confirm) => self.accept_completion(),
            Some(Action::Cancel) => self.completion = None,
            _ => return false,
        }
        true
    }

    /// Insert the chosen note after `[[` (and the closing `]]` unless it is already there).
    pub(super) fn accept_completion(&mut self) {
        let Some(completion) = self.completion.take() else {
            return;
        };
        let Some(candidate) = completion.selected() else {
            return;
        };
        let typed = completion.query().chars().count();
        if completion.kind == link_completion::Kind::Commands {
            // A clicked command is completed as Tab completes it: the name and a space.
            self.replace_command_name(typed, &format!("{} ", candidate.insert));
            return;
        }
        let insert = format!("{}]]", candidate.insert);
        match completion.target {
            Target::Editor => self.editor.replace_before_cursor(typed, &insert),
            Target::Chat => self.input.replace_before_cursor(typed, &insert),
        }
    }

    /// After a key reached the editor or the chat input: open the list when `[[` was just
    /// typed, follow the text typed after it, close it when the cursor left the link.
    pub(super) fn update_completion(&mut self, key: &KeyEvent) {
        if self.update_command_list(key) {
            return;
        }
        let (target, line, cursor) = match self.focus {
            Pane::Editor if self.editor.path().is_some() => {
                let (row, col) = self.editor.cursor_line_col();
                (Target::Editor, self.editor.line(row), (row, col))
            }
            Pane::Chat => {
                let (row, col) = self.input.cursor_line_col();
                (Target::Chat, self.input.line(row), (row, col))
            }
            Pane::Editor | Pane::Files => {
                self.completion = None;
                return;
            }
        };
        let typed_bracket = key.code == crossterm::event::KeyCode::Char('[')
            && !key.modifiers.intersects(
                crossterm::event::KeyModifiers::CONTROL | crossterm::event::KeyModifiers::ALT,
            );
        let opens = self.completion.is_none()
            && typed_bracket
            && link_completion::just_opened(&line, cursor.1);
        // Only while a link is being typed: other keys never look at the vault's notes.
        if self.completion.is_none() && !opens {
            return;
        }
        let recent: Vec<String> = self
            .files
            .tree()
            .recent(link_completion::MAX_ROWS)
            .into_iter()
            .map(|n| n.path.clone())
            .collect();
        let recent: Vec<&str> = recent.iter().map(String::as_str).collect();
        let notes = self.files.tree().notes();
        if opens {
            self.completion = Some(LinkCompletion::new(
                target,
                (cursor.0, cursor.1 - 2),
                notes,
                &recent,
            ));
            return;
        }
        if let Some(completion) = self.completion.as_mut() {
            let query = (completion.target == target && completion.anchor.0 == cursor.0)
                .then(|| link_completion::query_after_anchor(&line, completion.anchor.1, cursor.1))
                .flatten();
            match query {
                Some(query) => completion.set_query(&query, notes, &recent),
                None => self.completion = None,
            }
        }
    }

    pub(super) fn resolve(&mut self, choice: ConflictChoice) {
        match self.editor.resolve_conflict(choice) {
            Ok(()) => {
                self.flash("conflict resolved", Role::Notice);
                // The person chose the text to keep (theirs, mine or merged): with autosave it
                // goes to disk now, not at the next keystroke or when the note is left.
                self.saver.save_now_if_auto(&self.editor, &mut self.effects);
            }
            Err(message) => self.flash(message, Role::Error),
        }
    }

    pub(super) fn on_action(&mut self, action: Action, key: &KeyEvent) {
        match action {
            Action::Quit => self.leave(Leave::Quit),
            // Without autosave a suspend drops nothing (the buffer is still there after fg).
            Action::Suspend if self.saver.autosave() => self.leave(Leave::Suspend),
            Action::Suspend => self.effects.push(Effect::Suspend),
            Action::FocusNext => self.focus_next(),
            Action::FocusEditor => self.focus = Pane::Editor,
            Action::FocusChat => self.focus = Pane::Chat,
            Action::FocusFiles => self.focus_files(),
            Action::ToggleFiles => self.toggle_files(),
            Action::OpenPicker => self.show_picker(),
            Action::OpenDaily => self.effects.push(Effect::Host(Request::OpenDailyNote)),
            Action::InsertTemplate => self.ask_templates(),
            Action::ShowHelp => self.show_help(),
            Action::ShowSessions => self.effects.push(Effect::Host(Request::ListSessions(None))),
            Action::ShowUsage => self.effects.push(Effect::Host(Request::Usage)),
            Action::ShowTasks => self.load_tasks(),
            Action::ShowBacklinks => self.show_backlinks(),
            Action::NewSession => self.new_session(),
            Action::ToggleMaximize => {
                self.maximized = match self.maximized {
                    Some(_) => None,
                    None => Some(self.focus),
                };
            }
            Action::GrowEditor => self.split = (self.split + 5).min(80),
            Action::ShrinkEditor => self.split = self.split.saturating_sub(5).max(20),
            Action::CopyMode => self.toggle_copy_mode(),
            Action::Save => self.save_now(),
            Action::Undo | Action::Redo => {
                self.editor.handle(action);
            }
            Action::OpenExternal => self.open_external(),
            Action::FollowLink => match self.editor.link_under_cursor() {
                Some(target) => self.leave(Leave::Link(target)),
                None => self.flash("the cursor is not on a [[wikilink]]", Role::Notice),
            },
            Action::CopySelection => self.copy_selection(),
            Action::Send => self.send(),
            Action::Newline | Action::HistoryPrev | Action::HistoryNext => {
                self.input.handle(action);
            }
            Action::PasteImage => match self.focus {
                Pane::Chat => self.read_clipboard(),
                Pane::Editor => self.editor.handle_key(key),
                Pane::Files => {}
            },
            Action::RemoveImage => self.remove_image(key),
            Action::Interrupt => {
                if self.busy() {
                    self.effects.push(Effect::Agent(Op::Interrupt));
                    self.flash("interrupting…", Role::Notice);
                } else if self.maximized.is_some() {
                    self.maximized = None;
                }
            }
            crate::tui::keymap::scrolling_actions!() | Action::ToggleDetails => {
                self.transcript.handle(action);
            }
            // Actions of other contexts that a user key map may bind here: pass the key on.
            Action::ApproveOnce
            | Action::ApproveSession
            | Action::ApproveAlways
            | Action::Deny
            | Action::SideBySide
            | Action::NextHunk
            | Action::PrevHunk
            | Action::ToggleHunk
            | Action::ToggleFile
            | Action::Up
            | Action::Down
            | Action::Confirm
            | Action::Cancel
            | Action::Delete
            | Action::Rename
            | Action::ToggleTask
            | Action::KeepMine
            | Action::TakeTheirs
            | Action::Merge
            | Action::Expand
            | Action::Collapse
            | Action::NewNote
            | Action::Discard => self.pass_key(key),
        }
    }

    /// Left to right over the panes on screen.
    pub(super) fn focus_next(&mut self) {
        let files = self.files_area.width > 0 || self.files_shown == Some(true);
        self.focus = match self.focus {
            Pane::Files => self.text_pane(),
            Pane::Editor => Pane::Chat,
            Pane::Chat if files => Pane::Files,
            Pane::Chat => Pane::Editor,
        };
        if self.maximized.is_some() {
            self.maximized = Some(self.focus);
        }
    }

    pub(super) fn focus_files(&mut self) {
        if self.files_area.width == 0 {
            self.files_shown = Some(true);
        }
        self.focus = Pane::Files;
        if self.maximized.is_some() {
            self.maximized = Some(Pane::Files);
        }
    }

    pub(super) fn toggle_files(&mut self) {
        let shown = self.files_area.width > 0;
        self.files_shown = Some(!shown);
        if shown {
            if self.focus == Pane::Files {
                self.focus = self.text_pane();
            }
            if self.maximized == Some(Pane::Files) {
                self.maximized = None;
            }
        } else {
            self.focus = Pane::Files;
            if self.maximized.is_some() {
                self.maximized = None;
            }
        }
    }

    pub(super) fn toggle_copy_mode(&mut self) {
        self.mouse_captured = !self.mouse_captured;
        self.effects
            .push(Effect::SetMouseCapture(self.mouse_captured));
        self.flash(
            if self.mouse_captured {
                "mouse captured again (scroll and click work)"
            } else {
                "copy mode: select text with the mouse; the same key again ends it"
            },
            Role::Notice,
        );
    }

    /// The save key: saves now, or says which keys settle the conflict that stops it.
    pub(super) fn save_now(&mut self) {
        if self.editor.path().is_none() || self.saver.save_asked(&self.editor, &mut self.effects) {
            return;
        }
        let keys: Vec<String> = [Action::KeepMine, Action::TakeTheirs, Action::Merge]
            .iter()
            .filter_map(|a| {
                self.keymap
                    .keys_for(KeyContext::Conflict, *a)
                    .into_iter()
                    .next()
            })
            .collect();
        self.flash(
            format!(
                "not saved: the note changed on disk; settle the conflict first ({})",
                keys.join(", ")
            ),
            Role::Error,
        );
    }

    pub(super) fn open_external(&mut self) {
        if let Some(path) = self.editor.path().map(str::to_string) {
            if self.saver.autosave() {
                self.leave(Leave::External(path));
            } else {
                self.effects.push(Effect::OpenExternal(path));
            }
        }
    }

    pub(super) fn copy_selection(&mut self) {
        let text = match self.focus {
            Pane::Editor => self.editor.selected_text(),
            Pane::Chat | Pane::Files => None,
        };
        match text {
            Some(text) => self.effects.push(Effect::Copy(text)),
            None => self.flash("nothing is selected", Role::Notice),
        }
    }

    /// Removes the last attached image, only while nothing is typed: otherwise the key
    /// (Backspace) edits the text.
    pub(super) fn remove_image(&mut self, key: &KeyEvent) {
        if self.focus == Pane::Chat
            && !self.input.has_text()
            && self.input.remove_last_image().is_some()
        {
            let left = self.input.images().len();
            let message = match left {
                0 => "image removed".to_string(),
                1 => "image removed; 1 left".to_string(),
                n => format!("image removed; {n} left"),
            };
            self.flash(message, Role::Notice);
        } else {
            self.pass_key(key);
        }
    }

    /// A key whose action belongs elsewhere: it goes to the focused text box as typing.
    pub(super) fn pass_key(&mut self, key: &KeyEvent) {
        match self.focus {
            Pane::Editor => self.editor.handle_key(key),
            Pane::Chat => self.input.handle_key(key),
            Pane::Files => {}
        }
    }
}

/// The file pane's own actions, and unbound keys (typing, while the new-note prompt is open).
fn is_file_pane_key(action: Option<Action>) -> bool {
    matches!(
        action,
        None | Some(
            Action::Up
                | Action::Down
                | Action::PageUp
                | Action::PageDown
                | Action::ScrollTop
                | Action::ScrollBottom
                | Action::Confirm
                | Action::Cancel
                | Action::Expand
                | Action::Collapse
                | Action::NewNote
                | Action::Rename
        )
    )
}
