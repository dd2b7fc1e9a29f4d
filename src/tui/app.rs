//! The app's state: panes, focus, overlays, the permission banner and the status bar; what keys
//! and agent events do to it; how it is drawn.
//!
//! `App` does no I/O. What needs the outside world (sending an op to the agent, reading or
//! writing a note, querying the store, the clipboard) is queued as an [`Effect`] that the runner
//! (`tui::run`) carries out and answers through the `on_*` methods. That keeps every screen state
//! reachable from tests without a terminal, an agent or a disk.

use super::banner::Banner;
use super::chat::Transcript;
use super::chat::input::ChatInput;
use super::clipboard::ClipboardPaste;
use super::editor::{ConflictChoice, EditorPane};
use super::files::{FileOutcome, FilePane, NoteEntry};
use super::keymap::{Action, KeyContext, Keymap};
use super::link_completion::{self, LinkCompletion, Target};
use super::picker::{Picker, PickerItem, PickerOutcome};
pub use super::saving::Cleared;
use super::saving::{AutosaveSettings, Choice, Leave, SaveReport, Saver, UnsavedPrompt};
use super::theme::{Role, Theme};
use super::views::ViewOutcome;
use super::views::help::HelpView;
use super::views::rewind::RewindView;
use super::views::sessions::SessionsView;
use super::views::tools::ToolsView;
use super::views::usage::UsageView;
use crate::agent::{AgentEvent, Attachment, FocusedNote, NoteContext, Op, TurnEnd};
use crate::llm::Usage;
use crate::vault::note_io::NoteText;
use crossterm::event::{Event, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

/// Banner requests the app makes itself (/rewind) have ids from here up, far above the agent's.
const LOCAL_REQUESTS: u64 = 1 << 62;

/// Below this width the panes stack instead of standing side by side.
pub const STACK_BELOW_WIDTH: u16 = 100;

/// From this width the file pane is shown beside an open note without asking (the editor and the
/// chat keep about 55 columns each); the start screen shows it at any width. The person's toggle
/// wins over both.
pub const FILES_AUTO_WIDTH: u16 = 140;

/// The file pane's width.
pub const FILES_WIDTH: u16 = 28;

/// Rows the mouse wheel scrolls per notch.
const WHEEL_ROWS: u16 = 3;

/// The most images one message carries (claude.ai's limit; past 20 images in one request the
/// API also shrinks its per-image size limit, protocols.md §1.7).
pub const MAX_IMAGES_PER_MESSAGE: usize = 20;

/// What the runner must do for the app.
#[derive(Debug)]
pub enum Effect {
    /// Send this to the agent.
    Agent(Op),
    /// Read this note and call `on_note_opened` (or `on_error`). Only the saving state machine
    /// makes it (the [`Cleared`] proof), once the open note is saved or the person chose to drop
    /// its changes: to open a note, call [`App::open_note`].
    OpenNote(String, Cleared),
    /// List the vault's notes (with their modification times) and call `set_notes`.
    LoadFiles,
    /// Create an empty note with this name (never replacing a file) and call `on_note_created`.
    CreateNote(String),
    /// Resolve a wikilink target to a note and open it (made like `OpenNote`).
    OpenLink(String, Cleared),
    /// Write `text` to the note (atomic, refused if the file no longer matches `read`, the note
    /// as it was read or last saved) and call `on_save_finished`.
    SaveNote {
        path: String,
        text: String,
        read: NoteText,
    },
    /// Suspend the app, run `$EDITOR` on the note, reload it.
    OpenExternal(String),
    /// Load the picker's items and call `show_picker`.
    LoadPicker,
    /// Query the sessions (all, or matching the text) and call `show_sessions` / `set_sessions`.
    LoadSessions(Option<String>),
    LoadUsage,
    LoadTools,
    /// Load the revisions of the open note and call `show_rewind`.
    LoadRewind(String),
    /// Restore the text stored in a revision of the open note (into the editor buffer).
    Rewind(i64),
    /// Resume a stored session (a new agent on its log) and show its transcript.
    ResumeSession(String),
    DeleteSession(String),
    RenameSession(String, String),
    /// Start a new session (a new agent).
    NewSession,
    /// Switch the model for the next turns.
    SetModel(String),
    Copy(String),
    /// Read the clipboard off the UI thread and call `on_clipboard`: an image becomes an
    /// attachment of the message being written, text is pasted into it.
    ReadClipboardImage,
    SetMouseCapture(bool),
    Suspend,
    Quit,
}

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Editor,
    Chat,
    Files,
}

/// What the agent is doing, for the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentState {
    /// The workspace is being opened (index sync); turns wait.
    Starting,
    Idle,
    Thinking,
    Streaming,
    Tool(String),
    WaitingForYou,
}

/// An overlay above the panes (the banner is separate and above everything).
enum Overlay {
    Picker(Picker),
    Sessions(SessionsView),
    Usage(UsageView),
    Help(HelpView),
    Rewind(RewindView),
    Tools(ToolsView),
}

/// Everything the status bar shows that the app cannot know by itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionInfo {
    pub vault: String,
    pub provider: String,
    pub model: String,
    pub session_id: Option<String>,
    /// The model's context window, in tokens (for the context %).
    pub context_window: u64,
    /// What the model costs, when the config has its price.
    pub price: Option<crate::config::Price>,
}

pub struct App {
    pub theme: Theme,
    pub keymap: Keymap,
    pub info: SessionInfo,
    focus: Pane,
    maximized: Option<Pane>,
    /// The editor's share of the width (or height when stacked), in percent.
    split: u16,
    pub editor: EditorPane,
    pub transcript: Transcript,
    pub input: ChatInput,
    pub banner: Banner,
    overlay: Option<Overlay>,
    state: AgentState,
    /// Tokens of this session, and the size of the last request (for the context %).
    usage: Usage,
    last_context_tokens: u64,
    /// A one-line message in the status bar (errors, "saved").
    flash: Option<(String, Role)>,
    /// When the open note is written, and what waits for it (tui::saving).
    saver: Saver,
    /// "Save before leaving?" (autosave off, or a save that failed).
    prompt: Option<UnsavedPrompt>,
    mouse_captured: bool,
    effects: Vec<Effect>,
    /// A /rewind waiting in the banner: its request id and the text it restores.
    local_rewind: Option<(u64, String)>,
    /// The file pane, and whether the person showed or hid it (`None`: by the width).
    pub files: FilePane,
    files_shown: Option<bool>,
    /// The `[[` completion list, while open.
    completion: Option<LinkCompletion>,
    /// The areas of the last frame, for mouse clicks.
    editor_area: Rect,
    chat_area: Rect,
    files_area: Rect,
    input_area: Rect,
}

impl App {
    pub fn new(theme: Theme, keymap: Keymap, info: SessionInfo) -> Self {
        let mut input = ChatInput::new();
        let remove_keys = keymap.keys_for(KeyContext::Chat, Action::RemoveImage);
        if !remove_keys.is_empty() {
            input.set_image_hint(format!("{} removes the last image", remove_keys.join("/")));
        }
        let mut transcript = Transcript::new();
        // The empty chat names the help key of the key map in use (a person's own map may move it).
        if let Some(key) = keymap
            .keys_for(KeyContext::Global, Action::ShowHelp)
            .first()
        {
            transcript.set_hint(format!(
                "Ask about your notes — [[Note]] pulls a note in, {key} for help"
            ));
        }
        let mut files = FilePane::new();
        files.set_key_hints(&keymap);
        Self {
            theme,
            keymap,
            info,
            // With no note open, the chat has the keyboard.
            focus: Pane::Chat,
            maximized: None,
            split: 50,
            editor: EditorPane::new(),
            transcript,
            input,
            banner: Banner::new(),
            overlay: None,
            state: AgentState::Starting,
            usage: Usage::default(),
            last_context_tokens: 0,
            flash: None,
            saver: Saver::new(AutosaveSettings::default()),
            prompt: None,
            mouse_captured: true,
            effects: Vec::new(),
            local_rewind: None,
            files,
            files_shown: None,
            completion: None,
            editor_area: Rect::default(),
            chat_area: Rect::default(),
            files_area: Rect::default(),
            input_area: Rect::default(),
        }
    }

    /// Use these autosave settings (`[editor]` in the config).
    pub fn with_autosave(mut self, settings: AutosaveSettings) -> Self {
        self.saver.settings = settings;
        self
    }

    /// When the open note's autosave is due, if it is (the runner sleeps until then and calls
    /// [`App::on_autosave_due`]). A change of the text since the last call moves it.
    pub fn autosave_deadline(&mut self) -> Option<std::time::Instant> {
        self.saver.deadline(&self.editor, std::time::Instant::now())
    }

    pub fn on_autosave_due(&mut self) {
        self.saver.on_due(&self.editor, &mut self.effects);
    }

    /// Whether a save of the open note is being written (the runner does not compare the file
    /// with the buffer meanwhile: the change it would see is this save's own).
    pub fn save_in_flight(&self) -> bool {
        self.saver.in_flight()
    }

    /// SIGTERM, SIGHUP or the terminal going away: save (with autosave) and quit, after the
    /// saves and approved agent edits already on their way.
    pub fn on_terminate(&mut self) {
        // Nobody is there to answer a prompt.
        self.prompt = None;
        if let Some(prompt) = self.saver.terminate(&self.editor, &mut self.effects) {
            tracing::warn!(leave = ?prompt.leave, "quitting with unsaved changes nobody can settle");
            self.effects.push(Effect::Quit);
        }
    }

    /// Leave the open note (open another, follow a link, quit, …) once it is safe: saved first
    /// with autosave; without it, unsaved changes open the prompt.
    fn leave(&mut self, leave: Leave) {
        if self.editor.path().is_none() {
            self.effects.push(leave.effect());
            return;
        }
        let waiting = self.saver.leaving();
        if let Some(prompt) = self.saver.leave(leave, &self.editor, &mut self.effects) {
            self.prompt = Some(prompt);
        } else if self.saver.leaving() && !waiting {
            let path = self.editor.path().unwrap_or_default().to_string();
            self.flash(format!("saving {path}…"), Role::Notice);
        }
    }

    /// Open the note `name` (a path, title or alias): the one way every part of the app opens
    /// a note, so the open one is saved first (autosave) or the person is asked (autosave off).
    pub fn open_note(&mut self, name: impl Into<String>) {
        self.leave(Leave::Open(name.into()));
    }

    /// After anything that may have finished what a leave waits for.
    fn settle(&mut self) {
        if let Some(prompt) = self.saver.settle(&self.editor, &mut self.effects) {
            self.prompt = Some(prompt);
        }
    }

    /// The effects queued since the last call.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    pub fn focus(&self) -> Pane {
        self.focus
    }

    /// How the file pane starts (`[ui] file_pane`): by the width, shown or hidden.
    pub fn set_file_pane(&mut self, mode: crate::config::FilePaneMode) {
        self.files_shown = match mode {
            crate::config::FilePaneMode::Auto => None,
            crate::config::FilePaneMode::Show => Some(true),
            crate::config::FilePaneMode::Hide => Some(false),
        };
    }

    /// Whether the `[[` completion list is open.
    pub fn completion_open(&self) -> bool {
        self.completion.is_some()
    }

    pub fn state(&self) -> &AgentState {
        &self.state
    }

    /// Show a message in the status bar until the next key.
    pub fn flash(&mut self, text: impl Into<String>, role: Role) {
        self.flash = Some((text.into(), role));
    }

    /// An error from the runner (a failed save, an unreadable note): shown, never fatal.
    pub fn on_error(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.transcript.push_error(&text);
        self.flash(text, Role::Error);
    }

    /// The workspace is open; turns can run.
    pub fn on_ready(&mut self) {
        if self.state == AgentState::Starting {
            self.state = AgentState::Idle;
        }
    }

    /// The vault was opened, or the index took in changes to it: list the notes (again) for the
    /// file pane and the `[[` list.
    pub fn on_vault_changed(&mut self) {
        self.effects.push(Effect::LoadFiles);
    }

    /// The vault's notes, for the file pane and the `[[` completion list.
    pub fn set_notes(&mut self, notes: Vec<NoteEntry>) {
        self.files.set_notes(notes);
    }

    /// A note was created from the file pane: list it and open it the way any note is opened.
    pub fn on_note_created(&mut self, path: &str, modified_ns: i64) {
        self.files.add_note(NoteEntry {
            path: path.to_string(),
            title: String::new(),
            aliases: Vec::new(),
            modified_ns,
        });
        self.open_note(path.to_string());
        self.flash(format!("created {path}"), Role::Notice);
    }

    // ------------------------------------------------------------------------------------------
    // Input

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

    fn on_paste(&mut self, text: &str) {
        if self.banner.is_active() || self.overlay.is_some() {
            return;
        }
        match self.focus {
            // Some terminals paste an image as an empty paste: look at the clipboard itself.
            Pane::Chat if text.is_empty() => self.read_clipboard(),
            Pane::Chat => self.input.insert_str(text),
            Pane::Editor if self.editor.path().is_some() => self.editor.insert_text(text),
            Pane::Editor => {}
            Pane::Files => self.files.paste(text),
        }
    }

    /// A click focuses the pane under the pointer (and places the editor's cursor, or opens
    /// what the file pane shows there); a drag in the editor selects; the wheel scrolls the pane
    /// under the pointer. Overlays and the banner take no mouse input.
    fn on_mouse(&mut self, mouse: &MouseEvent) {
        if self.banner.is_active() || self.overlay.is_some() {
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

    fn on_file_outcome(&mut self, outcome: FileOutcome) {
        match outcome {
            FileOutcome::Open(path) => self.open_note(path),
            FileOutcome::Create(name) => self.effects.push(Effect::CreateNote(name)),
            FileOutcome::Leave => self.focus = self.text_pane(),
        }
    }

    /// The pane that takes typing when the file pane gives the keyboard back.
    fn text_pane(&self) -> Pane {
        if self.editor.path().is_some() {
            Pane::Editor
        } else {
            Pane::Chat
        }
    }

    fn on_key(&mut self, key: &KeyEvent) {
        self.flash = None;
        if self.banner.is_active() {
            let action = self.keymap.action(KeyContext::Banner, key);
            let edits_open_note = self
                .banner
                .current()
                .and_then(|r| r.proposal.as_ref())
                .is_some_and(|p| Some(p.path.as_str()) == self.editor.path());
            if let Some(outcome) = self.banner.handle(action, key) {
                let approved = !matches!(outcome.answer, crate::permission::Answer::Deny { .. })
                    && outcome.hunks.as_ref().is_none_or(|h| h.iter().any(|a| *a));
                if approved && edits_open_note && outcome.request < LOCAL_REQUESTS {
                    // Leaving the note waits until the agent delivered it (approve, then quit).
                    self.saver.expect_edit(outcome.request);
                }
                if let Some((id, text)) = self.local_rewind.take() {
                    if outcome.request == id {
                        if !matches!(outcome.answer, crate::permission::Answer::Deny { .. }) {
                            let current = self.editor.text();
                            let diff = crate::vault::diff::TextDiff::new(&current, &text);
                            let restored = match &outcome.hunks {
                                Some(flags) => {
                                    crate::vault::diff::apply_hunks(&current, &text, &diff, flags)
                                }
                                None => text,
                            };
                            self.editor.apply_edit(&restored);
                            if self.saver.autosave() {
                                self.flash("restored in the editor", Role::Notice);
                            } else {
                                self.flash(
                                    "restored in the editor — save to keep it",
                                    Role::Notice,
                                );
                            }
                        }
                        return;
                    }
                    self.local_rewind = Some((id, text));
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
            return;
        }
        if let Some(prompt) = self.prompt.as_mut() {
            let action = self.keymap.action(KeyContext::Unsaved, key);
            if let Some(choice) = prompt.handle(action, key) {
                let leave = prompt.leave.clone();
                self.prompt = None;
                if choice == Choice::Cancel {
                    self.flash(
                        "stayed on the note; nothing was saved or dropped",
                        Role::Notice,
                    );
                }
                if let Some(again) =
                    self.saver
                        .answer(leave, choice, &self.editor, &mut self.effects)
                {
                    self.prompt = Some(again);
                }
            }
            return;
        }
        if let Some(overlay) = self.overlay.as_mut() {
            let action = self.keymap.action(KeyContext::List, key);
            match overlay {
                Overlay::Picker(picker) => match picker.handle(action, key) {
                    Some(PickerOutcome::Open(path)) => {
                        self.overlay = None;
                        self.open_note(path);
                    }
                    Some(PickerOutcome::Cancel) => self.overlay = None,
                    None => {}
                },
                Overlay::Sessions(view) => {
                    let outcome = view.handle(action, key);
                    self.on_view_outcome(outcome);
                }
                Overlay::Usage(view) => {
                    let outcome = view.handle(action, key);
                    self.on_view_outcome(outcome);
                }
                Overlay::Help(view) => {
                    let outcome = view.handle(action, key);
                    self.on_view_outcome(outcome);
                }
                Overlay::Rewind(view) => {
                    let outcome = view.handle(action, key);
                    self.on_view_outcome(outcome);
                }
                Overlay::Tools(view) => {
                    let outcome = view.handle(action, key);
                    self.on_view_outcome(outcome);
                }
            }
            return;
        }
        if self.focus == Pane::Editor && self.editor.conflict() {
            match self.keymap.action(KeyContext::Conflict, key) {
                Some(Action::KeepMine) => self.resolve(ConflictChoice::KeepMine),
                Some(Action::TakeTheirs) => self.resolve(ConflictChoice::TakeTheirs),
                Some(Action::Merge) => self.resolve(ConflictChoice::Merge),
                Some(Action::Cancel) => self.focus = Pane::Chat,
                Some(other) => self.on_action(other, key),
                None => {}
            }
            return;
        }
        if self.completion.is_some() && self.on_completion_key(key) {
            return;
        }
        let context = match self.focus {
            Pane::Editor => KeyContext::Editor,
            Pane::Chat => KeyContext::Chat,
            Pane::Files => KeyContext::Files,
        };
        let action = self.keymap.action(context, key);
        if self.focus == Pane::Files {
            // The pane's own actions, and unbound keys (typing, while the new-note prompt is open).
            let own = matches!(
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
                )
            );
            // While the prompt is open the pane types even its own keys (`n`, vim's `j`); global
            // keys (quit, the picker, focus) still work.
            if own {
                if let Some(outcome) = self.files.handle(action, key) {
                    self.on_file_outcome(outcome);
                }
                return;
            }
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
    fn on_completion_key(&mut self, key: &KeyEvent) -> bool {
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
    fn accept_completion(&mut self) {
        let Some(completion) = self.completion.take() else {
            return;
        };
        let Some(candidate) = completion.selected() else {
            return;
        };
        let typed = completion.query().chars().count();
        let insert = format!("{}]]", candidate.insert);
        match completion.target {
            Target::Editor => self.editor.replace_before_cursor(typed, &insert),
            Target::Chat => self.input.replace_before_cursor(typed, &insert),
        }
    }

    /// After a key reached the editor or the chat input: open the list when `[[` was just
    /// typed, follow the text typed after it, close it when the cursor left the link.
    fn update_completion(&mut self, key: &KeyEvent) {
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

    fn resolve(&mut self, choice: ConflictChoice) {
        match self.editor.resolve_conflict(choice) {
            Ok(()) => self.flash("conflict resolved", Role::Notice),
            Err(message) => self.flash(message, Role::Error),
        }
    }

    fn on_action(&mut self, action: Action, key: &KeyEvent) {
        match action {
            Action::Quit => self.leave(Leave::Quit),
            // Without autosave a suspend drops nothing (the buffer is still there after fg).
            Action::Suspend if self.saver.autosave() => self.leave(Leave::Suspend),
            Action::Suspend => self.effects.push(Effect::Suspend),
            Action::FocusNext => {
                // Left to right over the panes on screen.
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
            Action::FocusEditor => self.focus = Pane::Editor,
            Action::FocusChat => self.focus = Pane::Chat,
            Action::FocusFiles => {
                if self.files_area.width == 0 {
                    self.files_shown = Some(true);
                }
                self.focus = Pane::Files;
                if self.maximized.is_some() {
                    self.maximized = Some(Pane::Files);
                }
            }
            Action::ToggleFiles => {
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
            Action::OpenPicker => self.effects.push(Effect::LoadPicker),
            Action::ShowHelp => self.overlay = Some(Overlay::Help(HelpView::new(&self.keymap))),
            Action::ShowSessions => self.effects.push(Effect::LoadSessions(None)),
            Action::ShowUsage => self.effects.push(Effect::LoadUsage),
            Action::NewSession => self.new_session(),
            Action::ToggleMaximize => {
                self.maximized = match self.maximized {
                    Some(_) => None,
                    None => Some(self.focus),
                };
            }
            Action::GrowEditor => self.split = (self.split + 5).min(80),
            Action::ShrinkEditor => self.split = self.split.saturating_sub(5).max(20),
            Action::CopyMode => {
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
            Action::Save => {
                if self.editor.path().is_some()
                    && !self.saver.save_asked(&self.editor, &mut self.effects)
                {
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
            }
            Action::Undo | Action::Redo => {
                self.editor.handle(action);
            }
            Action::OpenExternal => {
                if let Some(path) = self.editor.path().map(str::to_string) {
                    if self.saver.autosave() {
                        self.leave(Leave::External(path));
                    } else {
                        self.effects.push(Effect::OpenExternal(path));
                    }
                }
            }
            Action::FollowLink => match self.editor.link_under_cursor() {
                Some(target) => self.leave(Leave::Link(target)),
                None => self.flash("the cursor is not on a [[wikilink]]", Role::Notice),
            },
            Action::CopySelection => {
                let text = match self.focus {
                    Pane::Editor => self.editor.selected_text(),
                    Pane::Chat | Pane::Files => None,
                };
                match text {
                    Some(text) => self.effects.push(Effect::Copy(text)),
                    None => self.flash("nothing is selected", Role::Notice),
                }
            }
            Action::Send => self.send(),
            Action::Newline | Action::HistoryPrev | Action::HistoryNext => {
                self.input.handle(action);
            }
            Action::PasteImage => match self.focus {
                Pane::Chat => self.read_clipboard(),
                Pane::Editor => self.editor.handle_key(key),
                Pane::Files => {}
            },
            Action::RemoveImage => {
                // Only while nothing is typed: otherwise the key (Backspace) edits the text.
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
            Action::Interrupt => {
                if self.busy() {
                    self.effects.push(Effect::Agent(Op::Interrupt));
                    self.flash("interrupting…", Role::Notice);
                } else if self.maximized.is_some() {
                    self.maximized = None;
                }
            }
            Action::ScrollUp
            | Action::ScrollDown
            | Action::PageUp
            | Action::PageDown
            | Action::ScrollTop
            | Action::ScrollBottom
            | Action::ToggleDetails => {
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
            | Action::Up
            | Action::Down
            | Action::Confirm
            | Action::Cancel
            | Action::Delete
            | Action::Rename
            | Action::KeepMine
            | Action::TakeTheirs
            | Action::Merge
            | Action::Expand
            | Action::Collapse
            | Action::NewNote
            | Action::Discard => self.pass_key(key),
        }
    }

    /// A key whose action belongs elsewhere: it goes to the focused text box as typing.
    fn pass_key(&mut self, key: &KeyEvent) {
        match self.focus {
            Pane::Editor => self.editor.handle_key(key),
            Pane::Chat => self.input.handle_key(key),
            Pane::Files => {}
        }
    }

    /// Ask the runner for the clipboard's image (or text) for the chat input.
    fn read_clipboard(&mut self) {
        self.effects.push(Effect::ReadClipboardImage);
        self.flash("reading the clipboard…", Role::Notice);
    }

    /// What the clipboard held: an image is attached to the message being written, text is
    /// pasted into it; without either, or without a clipboard, the status line says so and the
    /// message stays as it was.
    pub fn on_clipboard(&mut self, paste: ClipboardPaste) {
        match paste {
            ClipboardPaste::Image(image) => {
                if self.input.images().len() >= MAX_IMAGES_PER_MESSAGE {
                    self.flash(
                        format!(
                            "not attached: a message takes at most {MAX_IMAGES_PER_MESSAGE} images"
                        ),
                        Role::Error,
                    );
                    return;
                }
                self.input.attach_image(image);
                // Short: the status bar is narrow, and the chip above the text has the details.
                let number = self.input.images().len();
                self.flash(format!("image {number} attached"), Role::Notice);
            }
            ClipboardPaste::Text(text) => {
                self.flash = None;
                self.input.insert_str(&text);
            }
            ClipboardPaste::Empty => {
                self.flash("the clipboard holds no image and no text", Role::Notice)
            }
            ClipboardPaste::Unavailable(why) => self.flash(
                format!("no clipboard to paste from ({why}); use the terminal's paste"),
                Role::Error,
            ),
            ClipboardPaste::Failed(why) => {
                self.flash(format!("nothing pasted: {why}"), Role::Error)
            }
        }
    }

    fn busy(&self) -> bool {
        !matches!(self.state, AgentState::Idle | AgentState::Starting)
    }

    fn new_session(&mut self) {
        if self.busy() {
            self.flash(
                "a turn is running; interrupt it first (Esc in the chat)",
                Role::Notice,
            );
            return;
        }
        self.transcript.clear();
        self.usage = Usage::default();
        self.last_context_tokens = 0;
        self.info.session_id = None;
        self.effects.push(Effect::NewSession);
        self.transcript.push_system("new session");
    }

    /// The chat input was sent: a `/command`, or a message for the agent.
    fn send(&mut self) {
        let text = self.input.take();
        if text.trim().is_empty() {
            if !self.input.images().is_empty() {
                // The providers want text beside an image; a question is what makes it useful.
                self.flash("type a message to send with the image", Role::Notice);
            }
            return;
        }
        if let Some(command) = text.trim().strip_prefix('/') {
            self.command(command);
            return;
        }
        match self.state {
            AgentState::Starting => {
                self.flash(
                    "the vault is still being indexed; send again in a moment",
                    Role::Notice,
                );
                self.input.insert_str(&text);
                return;
            }
            AgentState::Idle => {}
            AgentState::Thinking
            | AgentState::Streaming
            | AgentState::Tool(_)
            | AgentState::WaitingForYou => {
                self.flash(
                    "a turn is running; wait for it or interrupt it (Esc)",
                    Role::Notice,
                );
                self.input.insert_str(&text);
                return;
            }
        }
        let images = self.input.take_images();
        let facts = images.iter().map(crate::attach::Image::facts).collect();
        self.transcript.push_user_with_images(&text, facts);
        self.state = AgentState::Thinking;
        let attachments = images
            .into_iter()
            .map(|image| Attachment {
                media_type: image.media_type.to_string(),
                data: image.data,
            })
            .collect();
        self.effects.push(Effect::Agent(Op::UserTurn {
            text,
            attachments,
            context: self.note_context(),
        }));
    }

    /// What the agent should know about the editor.
    pub fn note_context(&self) -> NoteContext {
        NoteContext {
            note: self.editor.path().map(|path| FocusedNote {
                path: path.to_string(),
                editor: self.editor.editor_state(),
                in_editor: true,
            }),
        }
    }

    fn command(&mut self, command: &str) {
        let (name, arg) = command
            .split_once(char::is_whitespace)
            .map(|(n, a)| (n, a.trim()))
            .unwrap_or((command, ""));
        match name {
            "new" => self.new_session(),
            "sessions" => self.effects.push(Effect::LoadSessions(None)),
            "usage" => self.effects.push(Effect::LoadUsage),
            "help" => self.overlay = Some(Overlay::Help(HelpView::new(&self.keymap))),
            "mcp" | "tools" => self.effects.push(Effect::LoadTools),
            "rewind" => match self.editor.path() {
                Some(path) => self.effects.push(Effect::LoadRewind(path.to_string())),
                None => self.flash(
                    "/rewind restores the open note; open one first (Ctrl+P)",
                    Role::Notice,
                ),
            },
            "model" if arg.is_empty() => {
                let message = format!(
                    "model: {} ({}); /model NAME switches",
                    self.info.model, self.info.provider
                );
                self.transcript.push_system(&message);
            }
            "model" => {
                self.info.model = arg.to_string();
                self.effects.push(Effect::SetModel(arg.to_string()));
                self.transcript
                    .push_system(&format!("model set to {arg} for the next turns"));
            }
            "quit" | "q" => self.on_action(Action::Quit, &KeyEvent::from(crossterm::event::KeyCode::Null)),
            other => self.flash(
                format!(
                    "/{other} is not a command; commands: /new /sessions /usage /model /rewind /mcp /help"
                ),
                Role::Error,
            ),
        }
    }

    fn on_view_outcome(&mut self, outcome: Option<ViewOutcome>) {
        let Some(outcome) = outcome else {
            return;
        };
        match outcome {
            ViewOutcome::Close => self.overlay = None,
            ViewOutcome::ResumeSession(id) => {
                self.overlay = None;
                if self.busy() {
                    self.flash("a turn is running; interrupt it first", Role::Notice);
                } else {
                    self.effects.push(Effect::ResumeSession(id));
                }
            }
            ViewOutcome::DeleteSession(id) => self.effects.push(Effect::DeleteSession(id)),
            ViewOutcome::RenameSession(id, title) => {
                self.effects.push(Effect::RenameSession(id, title))
            }
            ViewOutcome::SearchSessions(query) => {
                self.effects.push(Effect::LoadSessions(Some(query)))
            }
            ViewOutcome::Rewind { revision } => {
                self.overlay = None;
                self.effects.push(Effect::Rewind(revision));
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Answers from the runner

    /// A message could not reach an agent (none could start: no API key, a bad provider).
    pub fn on_agent_unavailable(&mut self) {
        self.state = AgentState::Idle;
        self.on_error(
            "there is no agent to answer: check [provider] in the config and the API key (vaultchat doctor), then /new",
        );
    }

    /// /rewind chose a revision: show the change back to its text as a diff; applied to the
    /// buffer (one undo step, unsaved) only when approved.
    pub fn rewind_to(&mut self, revision: i64, text: String) {
        let Some(path) = self.editor.path().map(str::to_string) else {
            return;
        };
        let current = self.editor.text();
        let diff = crate::vault::diff::TextDiff::new(&current, &text);
        if diff.is_empty() {
            self.flash("the note already has that text", Role::Notice);
            return;
        }
        let id = LOCAL_REQUESTS + revision.unsigned_abs();
        self.local_rewind = Some((id, text));
        self.banner.push(crate::agent::PermissionRequest {
            id,
            call_id: format!("rewind-{revision}"),
            tool: "rewind".into(),
            input: serde_json::json!({ "note": path, "revision": revision }),
            paths: vec![path.clone()],
            proposal: Some(crate::agent::Proposal {
                summary: format!("restore {path} to the text before revision {revision}"),
                path,
                diff,
            }),
            offer_session: false,
            offer_always: false,
            reason: "/rewind restores the text before an agent edit".into(),
        });
    }

    pub fn on_note_opened(&mut self, path: &str, note: NoteText) {
        self.editor.open(path, note);
        self.completion = None;
        self.files.follow(Some(path), Some(now_ns()));
        self.saver.on_opened(&self.editor);
        self.focus = Pane::Editor;
        self.flash(format!("opened {path}"), Role::Notice);
    }

    /// A save the app asked for finished: `Ok` with the note as written, or `Err((changed on
    /// disk, message))`.
    pub fn on_save_finished(&mut self, path: &str, result: Result<NoteText, (bool, String)>) {
        let (report, prompt) =
            self.saver
                .on_saved(path, result, &mut self.editor, &mut self.effects);
        match report {
            SaveReport::Saved { path, asked: true } => {
                self.flash(format!("saved {path}"), Role::Notice)
            }
            SaveReport::Saved { .. } | SaveReport::Stale => {}
            SaveReport::Changed { path } => self.flash(
                format!("{path} changed on disk; your text is kept in the editor"),
                Role::StatusWarning,
            ),
            SaveReport::Failed { path, error } => {
                self.on_error(format!("{path} was not saved: {error}"))
            }
        }
        if prompt.is_some() {
            self.prompt = prompt;
        }
        self.settle();
    }

    /// The open note changed on disk (another program, or the agent through a workspace tool).
    /// With autosave, changes on both sides that touch different lines are merged at once (and
    /// saved by the autosave); otherwise, or when they clash, the conflict banner asks.
    pub fn on_disk_change(&mut self, note: NoteText) {
        self.editor.on_disk_change(note);
        if self.editor.conflict()
            && self.saver.autosave()
            && self.editor.resolve_conflict(ConflictChoice::Merge).is_ok()
        {
            self.flash(
                "the note changed on disk; merged with your changes",
                Role::Notice,
            );
            // A leave stopped by the conflict can go on: the merged text is saved first.
            if let Some(prompt) = self.prompt.take_if(|p| !p.can_save()) {
                self.leave(prompt.leave);
            }
        }
        if self.editor.conflict() {
            self.flash(
                "the note changed on disk while you have unsaved changes",
                Role::StatusWarning,
            );
        }
        self.settle();
    }

    pub fn show_picker(&mut self, items: Vec<PickerItem>) {
        self.overlay = Some(Overlay::Picker(Picker::new(items)));
    }

    pub fn show_sessions(&mut self, sessions: Vec<crate::store::SessionSummary>) {
        match self.overlay.as_mut() {
            Some(Overlay::Sessions(view)) => view.set_sessions(sessions),
            _ => {
                self.overlay = Some(Overlay::Sessions(
                    SessionsView::new(sessions, self.info.session_id.clone())
                        .with_keymap(&self.keymap),
                ))
            }
        }
    }

    pub fn show_usage(&mut self, view: UsageView) {
        self.overlay = Some(Overlay::Usage(view.with_keymap(&self.keymap)));
    }

    /// The person's MCP servers finished starting: an open tools view was drawn while they were
    /// still starting, so it is loaded again with their tools and states.
    pub fn on_mcp_started(&mut self) {
        if matches!(self.overlay, Some(Overlay::Tools(_))) {
            self.effects.push(Effect::LoadTools);
        }
    }

    pub fn show_tools(&mut self, view: ToolsView) {
        self.overlay = Some(Overlay::Tools(view.with_keymap(&self.keymap)));
    }

    pub fn show_rewind(&mut self, view: RewindView) {
        self.overlay = Some(Overlay::Rewind(view.with_keymap(&self.keymap)));
    }

    /// A resumed session: its id and a transcript rebuilt from the stored messages.
    pub fn on_session_resumed(&mut self, id: String, transcript: Transcript, usage: Usage) {
        self.info.session_id = Some(id);
        self.transcript = transcript;
        self.usage = usage;
        self.flash("session resumed", Role::Notice);
    }

    // ------------------------------------------------------------------------------------------
    // Agent events

    pub fn on_agent_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::TurnStarted { session_id } => {
                self.info.session_id = Some(session_id);
                self.state = AgentState::Thinking;
            }
            AgentEvent::TextDelta(text) => {
                self.transcript.append_delta(&text);
                self.state = AgentState::Streaming;
            }
            AgentEvent::ToolCallStarted { id, name, input } => {
                self.transcript.finish_streaming();
                self.transcript.tool_started(&id, &name, &input);
                self.state = AgentState::Tool(name);
            }
            AgentEvent::PermissionRequested(request) => {
                self.banner.push(request);
                self.state = AgentState::WaitingForYou;
            }
            AgentEvent::ToolCallFinished(record) => {
                self.transcript.tool_finished(&record);
                self.state = AgentState::Thinking;
            }
            AgentEvent::EditorEdit {
                id,
                path,
                before,
                after,
            } => self.apply_agent_edit(id, &path, &before, &after),
            AgentEvent::Notice(text) => self.transcript.push_system(&text),
            AgentEvent::Usage(usage) => {
                self.usage.add(&usage);
                self.last_context_tokens = usage.input_tokens
                    + usage.cache_read_input_tokens
                    + usage.cache_creation_input_tokens
                    + usage.output_tokens;
            }
            AgentEvent::TurnDone(outcome) => {
                self.transcript.finish_streaming();
                // Requests still shown belong to the finished turn: the agent already denied them.
                let _ = self.banner.cancel_all();
                self.saver.on_turn_done();
                match (&outcome.stop_reason, &outcome.error) {
                    (TurnEnd::Interrupted, _) => self.transcript.push_system("interrupted"),
                    (TurnEnd::Error, Some(error)) => self.transcript.push_error(error),
                    (_, Some(note)) => self.transcript.push_system(note),
                    (_, None) => {}
                }
                self.state = AgentState::Idle;
            }
        }
        self.settle();
    }

    /// An approved agent edit of the open note: one undo step in the buffer, then saved (whatever
    /// the autosave setting: the person approved a change of the vault). If the person typed
    /// since the agent saw the text, the edit is merged onto what they typed. The agent hears
    /// what happened once the save finished (`Op::EditorApplied`).
    fn apply_agent_edit(&mut self, id: u64, path: &str, before: &str, after: &str) {
        if self.editor.path() != Some(path) {
            let why = format!("{path} is no longer open in the editor");
            self.on_error(format!(
                "the agent edited {path}, which is no longer open; the edit was not applied"
            ));
            self.saver.on_edit_refused(id, why, &mut self.effects);
            return;
        }
        let current = self.editor.text();
        let text = if current == before {
            after.to_string()
        } else {
            match crate::vault::diff::merge3(before, &current, after) {
                Ok(merged) => merged,
                Err(conflict) => {
                    self.on_error(format!(
                        "the agent's edit of {path} overlaps what you typed meanwhile ({conflict}); it was not applied"
                    ));
                    let why = format!(
                        "the person was typing in the same place of {path} meanwhile ({conflict}); read the note again and redo the change on its current text"
                    );
                    self.saver.on_edit_refused(id, why, &mut self.effects);
                    return;
                }
            }
        };
        self.editor.apply_edit(&text);
        self.saver
            .on_edit_applied(id, self.editor.text(), &self.editor, &mut self.effects);
    }

    // ------------------------------------------------------------------------------------------
    // Drawing

    pub fn draw(&mut self, frame: &mut Frame) {
        let area = frame.area();
        self.render(area, frame.buffer_mut());
    }

    /// Draw the whole screen into `buf` (tests call this directly).
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let message_rows = self
            .message_rows(area.width)
            .min(area.height.saturating_sub(1) / 2);
        let [main, message, status] = Layout::vertical([
            Constraint::Min(0),
            Constraint::Length(message_rows),
            Constraint::Length(1),
        ])
        .areas(area);
        let (files_area, editor_area, chat_area) = self.pane_areas(main);
        if files_area.is_empty() && self.focus == Pane::Files {
            // The pane went away (a narrower window): the keyboard goes where typing happens.
            self.focus = self.text_pane();
        }
        self.files_area = files_area;
        self.editor_area = editor_area;
        self.chat_area = chat_area;
        self.input_area = Rect::default();
        if !files_area.is_empty() {
            self.files
                .render(files_area, buf, &self.theme, self.focus == Pane::Files);
        }
        if editor_area.width > 0 && editor_area.height > 0 {
            if self.editor.path().is_some() {
                self.editor
                    .render(editor_area, buf, &self.theme, self.focus == Pane::Editor);
            } else {
                self.render_no_note(editor_area, buf);
            }
        }
        if chat_area.width > 0 && chat_area.height > 0 {
            self.render_chat(chat_area, buf);
        }
        self.render_completion(main, buf);
        self.render_status(status, buf, message_rows == 0);
        if message_rows > 0 {
            self.render_message(message, buf);
        }
        if let Some(overlay) = self.overlay.as_mut() {
            match overlay {
                Overlay::Picker(v) => v.render(main, buf, &self.theme),
                Overlay::Sessions(v) => v.render(main, buf, &self.theme),
                Overlay::Usage(v) => v.render(main, buf, &self.theme),
                Overlay::Help(v) => v.render(main, buf, &self.theme),
                Overlay::Rewind(v) => v.render(main, buf, &self.theme),
                Overlay::Tools(v) => v.render(main, buf, &self.theme),
            }
        }
        if let Some(prompt) = &self.prompt {
            prompt.render(main, buf, &self.theme, &self.keymap);
        }
        if self.banner.is_active() {
            self.banner.render(main, buf, &self.theme, &self.keymap);
        }
    }

    /// Whether the file pane is on screen at this width (before it is checked for room).
    fn files_wanted(&self, width: u16) -> bool {
        match self.files_shown {
            Some(shown) => shown,
            // The start screen shows the vault instead of an empty editor area.
            None => self.editor.path().is_none() || width >= FILES_AUTO_WIDTH,
        }
    }

    /// File pane, editor and chat areas: the file pane on the left when shown, the editor and
    /// the chat side by side (stacked on narrow terminals), or one pane maximised.
    fn pane_areas(&self, main: Rect) -> (Rect, Rect, Rect) {
        let none = Rect::default();
        match self.maximized {
            Some(Pane::Editor) => return (none, main, none),
            Some(Pane::Chat) => return (none, none, main),
            Some(Pane::Files) => return (main, none, none),
            None => {}
        }
        let mut rest = main;
        let mut files = none;
        // The pane needs as much room again beside it; narrower screens leave it out.
        if self.files_wanted(main.width) && main.width >= FILES_WIDTH * 2 {
            let [left, right] =
                Layout::horizontal([Constraint::Length(FILES_WIDTH), Constraint::Min(0)])
                    .areas(main);
            files = left;
            rest = right;
        }
        // Without a note the chat takes the rest (Ctrl+P or the file pane bring the editor).
        if self.editor.path().is_none() {
            return (files, none, rest);
        }
        let direction = if main.width < STACK_BELOW_WIDTH {
            Direction::Vertical
        } else {
            Direction::Horizontal
        };
        let [a, b] = Layout::default()
            .direction(direction)
            .constraints([
                Constraint::Percentage(self.split),
                Constraint::Percentage(100 - self.split),
            ])
            .areas(rest);
        (files, a, b)
    }

    /// The `[[` list: under the cursor in the editor, above the message box in the chat.
    fn render_completion(&mut self, main: Rect, buf: &mut Buffer) {
        let Some(completion) = self.completion.as_mut() else {
            return;
        };
        let typed = super::width::str_width(completion.query()) as u16 + 2;
        match (completion.target, self.focus) {
            (Target::Editor, Pane::Editor) => {
                if let Some((x, y)) = self.editor.cursor_position() {
                    completion.render(main, x.saturating_sub(typed), y + 1, y, buf, &self.theme);
                }
            }
            (Target::Chat, Pane::Chat) if !self.input_area.is_empty() => {
                let input = self.input_area;
                // Inside the transcript, just above its bottom border.
                let above = input.y.saturating_sub(1);
                completion.render(main, input.x + 2, main.bottom(), above, buf, &self.theme);
            }
            _ => self.completion = None,
        }
    }

    fn pane_block(&self, title: String, focused: bool) -> Block<'static> {
        let (border, title_role) = if focused {
            (Role::BorderFocused, Role::TitleFocused)
        } else {
            (Role::Border, Role::Title)
        };
        Block::default()
            .borders(Borders::ALL)
            .border_style(self.theme.style(border))
            .title(Span::styled(title, self.theme.style(title_role)))
    }

    fn render_no_note(&self, area: Rect, buf: &mut Buffer) {
        let focused = self.focus == Pane::Editor;
        let block = self.pane_block(" No note open ".into(), focused);
        let inner = block.inner(area);
        block.render(area, buf);
        let keys = self
            .keymap
            .keys_for(KeyContext::Global, Action::OpenPicker)
            .join(", ");
        let lines = vec![
            Line::default(),
            Line::from(Span::styled(
                format!("{keys} opens a note"),
                self.theme.style(Role::Dim),
            ))
            .centered(),
        ];
        Paragraph::new(lines).render(inner, buf);
    }

    fn render_chat(&mut self, area: Rect, buf: &mut Buffer) {
        let focused = self.focus == Pane::Chat;
        let input_height = self.input.height(area.width).min(area.height / 2).max(3);
        let [transcript_area, input_area] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(input_height)]).areas(area);
        self.input_area = input_area;
        self.transcript
            .render(transcript_area, buf, &self.theme, focused);
        let placeholder = match self.state {
            AgentState::Starting => "Indexing the vault…",
            AgentState::Idle if !self.input.images().is_empty() => {
                "Ask about the image (Enter sends)"
            }
            AgentState::Idle => "Ask about your notes (Enter sends, /help for commands)",
            _ => "The agent is working — Esc interrupts",
        };
        self.input
            .render(input_area, buf, &self.theme, focused, placeholder);
    }

    /// The status bar's left part without the message: the agent's badge, the vault, the note.
    fn status_facts(&self) -> (Span<'static>, Vec<Span<'static>>) {
        let theme = &self.theme;
        let (badge, badge_role) = match &self.state {
            AgentState::Starting => (" indexing ".to_string(), Role::StatusWarning),
            AgentState::Idle => (" ready ".to_string(), Role::StatusKey),
            AgentState::Thinking => (" thinking ".to_string(), Role::StatusWarning),
            AgentState::Streaming => (" writing ".to_string(), Role::StatusWarning),
            AgentState::Tool(name) => (format!(" {name} "), Role::StatusWarning),
            AgentState::WaitingForYou => (" your answer ".to_string(), Role::StatusWarning),
        };
        let mut spans = vec![Span::styled(
            format!(" {} ", self.info.vault),
            theme.style(Role::StatusBar),
        )];
        if let Some(path) = self.editor.path() {
            let dirty = if self.editor.is_dirty() { " ●" } else { "" };
            spans.push(Span::styled(
                format!("│ {path}{dirty} "),
                theme.style(if self.editor.is_dirty() {
                    Role::StatusWarning
                } else {
                    Role::StatusBar
                }),
            ));
        }
        (Span::styled(badge, theme.style(badge_role)), spans)
    }

    /// The message's span in the status bar.
    fn message_span(&self) -> Option<Span<'static>> {
        let (text, role) = self.flash.as_ref()?;
        let role = match role {
            Role::Error | Role::StatusWarning => Role::StatusWarning,
            _ => Role::StatusAccent,
        };
        Some(Span::styled(format!("│ {text} "), self.theme.style(role)))
    }

    /// Rows of a message line above the status bar: none when the message fits in the status
    /// bar itself (beside the badge, if need be alone with it), else enough to show it whole.
    fn message_rows(&self, width: u16) -> u16 {
        let Some(message) = self.message_span() else {
            return 0;
        };
        let (badge, _) = self.status_facts();
        if badge.width() + message.width() <= usize::from(width) {
            return 0;
        }
        let text = self.flash.as_ref().map(|(t, _)| t.as_str()).unwrap_or("");
        // One column of margin each side, words wrapped.
        super::saving::wrapped_rows(text, usize::from(width.saturating_sub(2)))
    }

    /// A message too long for the status bar, whole, on the rows above it.
    fn render_message(&self, area: Rect, buf: &mut Buffer) {
        let Some((text, role)) = &self.flash else {
            return;
        };
        let role = match role {
            Role::Error | Role::StatusWarning => Role::StatusWarning,
            _ => Role::StatusAccent,
        };
        Clear.render(area, buf);
        buf.set_style(area, self.theme.style(Role::StatusBar));
        Paragraph::new(Span::styled(text.clone(), self.theme.style(role)))
            .block(Block::default().padding(ratatui::widgets::Padding::horizontal(1)))
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(area, buf);
    }

    /// The status bar. `with_message`: the message goes in it (it fits); the facts on the right
    /// and then the vault and note make room for it, so a message is never cut.
    fn render_status(&self, area: Rect, buf: &mut Buffer, with_message: bool) {
        let theme = &self.theme;
        Clear.render(area, buf);
        buf.set_style(area, theme.style(Role::StatusBar));
        let (badge, facts) = self.status_facts();
        let message = self.message_span().filter(|_| with_message);
        let room = usize::from(area.width);
        let facts_width: usize = facts.iter().map(Span::width).sum();
        let message_width = message.as_ref().map_or(0, Span::width);
        let mut spans = vec![badge.clone()];
        // The vault and note stay unless the message needs their room.
        if badge.width() + facts_width + message_width <= room {
            spans.extend(facts);
        }
        let message_shown = message.is_some();
        spans.extend(message);
        let left = Line::from(spans);
        let tokens = self.usage.input_tokens
            + self.usage.output_tokens
            + self.usage.cache_read_input_tokens
            + self.usage.cache_creation_input_tokens;
        let context = (self.last_context_tokens * 100)
            .checked_div(self.info.context_window)
            .unwrap_or(0)
            .min(999);
        let mut right = format!(
            "{} · {} tok · ctx {}%",
            self.info.model,
            compact(tokens),
            context
        );
        if let Some(cost) = self.cost() {
            right.push_str(&format!(" · ${cost:.2}"));
        }
        if self.banner.queued() > 0 {
            right.push_str(&format!(" · {} waiting", self.banner.queued() + 1));
        }
        right.push(' ');
        let right_width = right.chars().count() as u16;
        // The facts on the right stay whole and the left part is cut to what is left of the row,
        // unless a message needs the row: then the right part goes.
        let right_fits =
            usize::from(area.width) > left.width() + usize::from(right_width) || !message_shown;
        let left_width = if right_fits && area.width > right_width + 20 {
            let r = Rect::new(area.x + area.width - right_width, area.y, right_width, 1);
            Paragraph::new(Span::styled(right, theme.style(Role::StatusAccent))).render(r, buf);
            area.width - right_width - 1
        } else {
            area.width
        };
        Paragraph::new(left).render(Rect::new(area.x, area.y, left_width, 1), buf);
    }

    /// The session's estimated cost, when the model has a price.
    fn cost(&self) -> Option<f64> {
        let u = &self.usage;
        Some(self.info.price?.cost(
            u.input_tokens,
            u.output_tokens,
            u.cache_read_input_tokens,
            u.cache_creation_input_tokens,
        ))
    }
}

/// Now, in nanoseconds since the Unix epoch (when a note was opened, for "Recent").
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// 1234 → "1.2k", 1234567 → "1.2M".
fn compact(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}
