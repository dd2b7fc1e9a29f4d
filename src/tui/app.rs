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
use super::picker::{Picker, PickerOutcome};
use super::recovery_prompt::{RecoveryChoice, RecoveryPrompt};
pub use super::saving::Cleared;
use super::saving::{AutosaveSettings, Choice, Leave, SaveReport, Saver, UnsavedPrompt};
use super::theme::{Role, Theme};
use super::trust_prompt::{TrustChoice, TrustPrompt};
use super::views::backlinks::BacklinksView;
use super::views::help::HelpView;
use super::views::models::ModelsView;
use super::views::rewind::RewindView;
use super::views::sessions::SessionsView;
use super::views::tasks::{TaskEntry, TasksView};
use super::views::tools::ToolsView;
use super::views::usage::UsageView;
use super::views::{View, ViewOutcome};
use crate::agent::{AgentEvent, Attachment, FocusedNote, NoteContext, Op, Resume, TurnEnd};
use crate::host::{ChangeRequest, Request};
use crate::protocol::{NoteText, Usage};
use crossterm::event::{Event, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

mod draw;
mod host_events;
mod input;
mod local;
mod moves;
mod save_chat;
mod slash;
#[cfg(test)]
pub(crate) use slash::choices_built;
mod templates;
mod waiting;

use local::LOCAL_REQUESTS;

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

pub use crate::attach::MAX_IMAGES_PER_MESSAGE;

/// What the runner must do for the app.
#[derive(Debug)]
pub enum Effect {
    /// Send this to the agent (through the host, in order).
    Agent(Op),
    /// Ask the engine: the answer comes back as a [`HostEvent`] (`App::on_host`).
    Host(Request),
    /// Open this note (the host's answer: `NoteOpened`). Only the saving state machine makes
    /// it (the [`Cleared`] proof), once the open note is saved or the person chose to drop its
    /// changes: to open a note, call [`App::open_note`].
    OpenNote(String, Cleared),
    /// Resolve a wikilink target to a note and open it (made like `OpenNote`).
    OpenLink(String, Cleared),
    /// Write `text` to the note (atomic, refused if the file no longer matches `read`, the note
    /// as it was read or last saved); the host answers `Saved`.
    SaveNote {
        path: String,
        text: String,
        read: NoteText,
        /// The text holds an agent edit the person approved: the revision is the agent's (so
        /// /rewind can undo it), never folded into the person's run of saves.
        agent_edit: bool,
    },
    /// Suspend the app, run `$EDITOR` on the note, then check it for changes.
    OpenExternal(String),
    Copy(String),
    /// Read the clipboard off the UI thread and call `on_clipboard`: an image becomes an
    /// attachment of the message being written, text is pasted into it.
    ReadClipboardImage,
    /// Load these image files (dropped on the terminal, pasted as their paths) off the UI thread
    /// and call `on_clipboard` with each, as if pasted.
    AttachImageFiles(Vec<std::path::PathBuf>),
    SetMouseCapture(bool),
    Suspend,
    Quit,
}

/// Where an effect is carried out.
#[derive(Debug)]
pub enum Route {
    /// By the host: the engine's work.
    Host(Request),
    /// By the terminal loop itself.
    Terminal(Effect),
}

impl Effect {
    /// The host's request this effect is, or the effect when it is the terminal's own work.
    pub fn route(self) -> Route {
        Route::from(self)
    }
}

impl From<Effect> for Route {
    fn from(effect: Effect) -> Route {
        let request = match effect {
            Effect::Agent(op) => Request::Agent(op),
            Effect::Host(request) => request,
            Effect::OpenNote(name, _) | Effect::OpenLink(name, _) => Request::OpenNote(name),
            Effect::SaveNote {
                path,
                text,
                read,
                agent_edit,
            } => Request::SaveNote {
                path,
                text,
                read,
                agent_edit,
            },
            effect @ (Effect::OpenExternal(_)
            | Effect::Copy(_)
            | Effect::ReadClipboardImage
            | Effect::AttachImageFiles(_)
            | Effect::SetMouseCapture(_)
            | Effect::Suspend
            | Effect::Quit) => return Route::Terminal(effect),
        };
        Route::Host(request)
    }
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
    /// The templates to insert at the cursor (`insert_template`).
    Templates(templates::TemplatePicker),
    Sessions(SessionsView),
    Usage(UsageView),
    Help(HelpView),
    Rewind(RewindView),
    Tools(ToolsView),
    Tasks(TasksView),
    Backlinks(BacklinksView),
    Models(ModelsView),
}

impl Overlay {
    /// The overlay as a list view; `None` for the pickers, whose keys open a note or insert a
    /// template instead.
    fn view(&mut self) -> Option<&mut dyn View> {
        match self {
            Overlay::Picker(_) | Overlay::Templates(_) => None,
            Overlay::Sessions(view) => Some(view),
            Overlay::Usage(view) => Some(view),
            Overlay::Help(view) => Some(view),
            Overlay::Rewind(view) => Some(view),
            Overlay::Tools(view) => Some(view),
            Overlay::Tasks(view) => Some(view),
            Overlay::Backlinks(view) => Some(view),
            Overlay::Models(view) => Some(view),
        }
    }
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
    /// `[privacy] local_only`: only servers on this machine or a private network are used.
    pub local_only: bool,
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
    /// Tokens of this session, and the size of the last request (for the context %), and
    /// whether that size is an estimate (the server reported no usage).
    usage: Usage,
    last_context_tokens: u64,
    last_context_estimated: bool,
    /// A one-line message in the status bar (errors, "saved").
    flash: Option<(String, Role)>,
    /// When the open note is written, and what waits for it (tui::saving).
    saver: Saver,
    /// "Save before leaving?" (autosave off, or a save that failed).
    prompt: Option<UnsavedPrompt>,
    /// "Trust this vault's plugins?", asked once per content of the plugins file.
    trust_prompt: Option<TrustPrompt>,
    /// The offer of unsaved text kept when a signal stopped the app.
    recovery_prompt: Option<RecoveryPrompt>,
    /// The note whose kept text was restored into the editor and is not on disk yet: its
    /// recovery file is forgotten only once a save leaves the buffer clean (until then the file
    /// is the only copy of that text that survives the app).
    restored_recovery: Option<(String, String)>,
    /// A command line sent to the host and not yet answered: a refusal puts it back in the
    /// message box, so a typo or a server still starting costs no retyping.
    command_sent: Option<String>,
    /// The note the templates were last asked for: `{{title}}` is filled with its name, so the
    /// filled text goes into that note or none.
    templates_for: Option<String>,
    mouse_captured: bool,
    effects: Vec<Effect>,
    /// What was asked of the host and is still on its way (shown in the status bar).
    waiting: Option<waiting::Waiting>,
    /// The person's own changes the banner asks about (moves, `/save`, `/rewind`).
    local: local::LocalChanges,
    /// The generation of the agent in use: events of an agent it replaced are dropped.
    agent_generation: u64,
    /// The file pane, and whether the person showed or hid it (`None`: by the width).
    pub files: FilePane,
    files_shown: Option<bool>,
    /// The `[[` completion list or the `/` list, while open.
    completion: Option<LinkCompletion>,
    /// A note asked for at a line (the tasks view): the cursor goes there once it is open.
    pending_line: Option<(String, usize)>,
    /// `/mcp` asked for the tools view, which opens when the list comes. A list that comes for
    /// a reload of a view the person has closed meanwhile opens nothing.
    tools_asked: bool,
    /// Every command, as the host last read them (the built-ins until it answers).
    commands: crate::commands::Catalog,
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
            last_context_estimated: false,
            flash: None,
            saver: Saver::new(AutosaveSettings::default()),
            prompt: None,
            trust_prompt: None,
            recovery_prompt: None,
            restored_recovery: None,
            command_sent: None,
            templates_for: None,
            mouse_captured: true,
            effects: Vec::new(),
            waiting: None,
            local: local::LocalChanges::default(),
            agent_generation: 0,
            files,
            files_shown: None,
            completion: None,
            pending_line: None,
            tools_asked: false,
            commands: crate::commands::Catalog::built_in(),
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
        let effects = std::mem::take(&mut self.effects);
        if let Some(waiting) = effects.iter().rev().find_map(waiting::Waiting::of) {
            self.waiting = Some(waiting);
        }
        effects
    }

    /// What the status bar says the app is waiting for (a note being opened, a listing), if any.
    pub fn waiting_for(&self) -> Option<String> {
        self.waiting.as_ref().map(waiting::Waiting::label)
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

    /// Whether the note picker is open.
    pub fn picker_open(&self) -> bool {
        matches!(self.overlay, Some(Overlay::Picker(_)))
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
        // Notices carry servers' and hooks' words: every character shown, none acted on (ratatui
        // drops a bare ESC but would print the rest of its sequence as if it were text).
        let text = text.into();
        let text = match crate::quote::terminal_text(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(escaped) => escaped,
        };
        self.flash = Some((text, role));
    }

    /// An error from the runner (a failed save, an unreadable note): shown, never fatal.
    pub fn on_error(&mut self, text: impl Into<String>) {
        // Escaped for the chat as `flash` escapes it for the status bar: a refused command's
        // reason can carry a server's last line of stderr.
        let text = text.into();
        let text = match crate::quote::terminal_text(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(escaped) => escaped,
        };
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
        self.effects.push(Effect::Host(Request::ListFiles));
    }

    /// The open note was saved: it moves up in the file pane's "Recent". A save changes no other
    /// note, so the vault is not listed again (on a large vault that listing runs on the loop).
    pub fn on_note_written(&mut self, path: &str) {
        self.files.touch(path, crate::time::now_ns());
    }

    /// The vault's notes, for the file pane and the `[[` completion list.
    pub fn set_notes(&mut self, notes: Vec<NoteEntry>) {
        self.files.set_notes(notes);
        if let Some(Overlay::Picker(picker)) = self.overlay.as_mut() {
            let tree = self.files.tree();
            picker.set_notes(tree.table(), tree.touched_in_app().clone());
        }
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
        self.last_context_estimated = false;
        self.info.session_id = None;
        self.effects
            .push(Effect::Host(Request::StartAgent(Resume::New)));
        self.transcript.push_system("new session");
    }

    /// `/compact`: summarise the older part of the conversation now.
    fn compact(&mut self) {
        if self.busy() {
            self.flash(
                "a turn is running; /compact when it has ended",
                Role::Notice,
            );
            return;
        }
        if self.info.session_id.is_none() {
            self.flash("nothing to compact yet: the session is empty", Role::Notice);
            return;
        }
        self.state = AgentState::Thinking;
        self.transcript.push_system("compacting the conversation…");
        self.effects.push(Effect::Agent(Op::Compact));
    }

    /// `/continue-new`: a new session that starts from the summary of this one.
    fn continue_new(&mut self) {
        if self.busy() {
            self.flash(
                "a turn is running; interrupt it first (Esc in the chat)",
                Role::Notice,
            );
            return;
        }
        let Some(id) = self.info.session_id.clone() else {
            self.flash("nothing to continue: the session is empty", Role::Notice);
            return;
        };
        self.transcript.clear();
        self.usage = Usage::default();
        self.last_context_tokens = 0;
        self.info.session_id = None;
        self.effects
            .push(Effect::Host(Request::StartAgent(Resume::ContinueNew(
                Some(id.clone()),
            ))));
        self.transcript.push_system(&format!(
            "new session continuing {id}: its summary is made with your first message"
        ));
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
        // A pasted path or `//text` is a message (one rule with `vaultchat ask`).
        if crate::commands::command_invocation(&text).is_some()
            && let Some(command) = text.trim().strip_prefix('/')
        {
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
        let text = crate::commands::message_text(&text).into_owned();
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
            "compact" => self.compact(),
            "continue-new" => self.continue_new(),
            "sessions" => self.effects.push(Effect::Host(Request::ListSessions(None))),
            "usage" => self.effects.push(Effect::Host(Request::Usage)),
            "help" => self.show_help(),
            "mcp" | "tools" => {
                self.tools_asked = true;
                self.load_tools();
            }
            "tasks" => self.load_tasks(),
            "backlinks" => self.show_backlinks(),
            "rewind" => match self.editor.path() {
                Some(path) => self
                    .effects
                    .push(Effect::Host(Request::Revisions(path.to_string()))),
                None => self.flash(
                    "/rewind restores the open note; open one first (Ctrl+P)",
                    Role::Notice,
                ),
            },
            "model" if arg.is_empty() => {
                self.flash("asking the provider for its models…", Role::Notice);
                self.effects.push(Effect::Host(Request::ListModels {
                    current: self.info.model.clone(),
                }));
            }
            "model" => self.set_model(arg),
            "save" => self.save_chat(arg),
            "quit" | "q" => self.on_action(
                Action::Quit,
                &KeyEvent::from(crossterm::event::KeyCode::Null),
            ),
            other => self.run_own_command(other, arg),
        }
    }

    /// `/name ARGS` that is none of the chat's own: one of the person's or the vault's commands,
    /// found and made into a prompt by the host (decisions §63); shown as typed.
    fn run_own_command(&mut self, name: &str, args: &str) {
        let typed = if args.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {args}")
        };
        if self.state != AgentState::Idle {
            // Back in the message box, as a message sent during a turn is: nothing typed is lost.
            self.input.insert_str(&typed);
            self.flash(
                "a turn is running; run the command when it has ended",
                Role::Notice,
            );
            return;
        }
        self.transcript.push_user_with_images(&typed, Vec::new());
        self.command_sent = Some(typed);
        self.state = AgentState::Thinking;
        self.effects.push(Effect::Host(Request::RunCommand {
            name: name.to_string(),
            args: args.to_string(),
            context: self.note_context(),
        }));
    }

    /// The host could not run a command: no turn started.
    pub fn on_command_refused(&mut self, message: &str) {
        self.command_ended_unrun();
        self.on_error(message);
    }

    /// The person interrupted a command while its prompt was being made: no turn started.
    pub fn on_command_cancelled(&mut self, name: &str) {
        self.command_ended_unrun();
        let line = format!(
            "/{} cancelled before its prompt came; nothing was sent",
            crate::quote::terminal(name)
        );
        self.transcript.push_system(&line);
        self.flash(line, Role::Notice);
    }

    /// A command that started no turn: the chat is idle again, and the command is back in the
    /// box unless the person has started typing something else meanwhile.
    fn command_ended_unrun(&mut self) {
        if self.state == AgentState::Thinking {
            self.state = AgentState::Idle;
        }
        if let Some(typed) = self.command_sent.take()
            && self.input.is_empty()
        {
            self.input.insert_str(&typed);
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
                    self.effects
                        .push(Effect::Host(Request::StartAgent(Resume::Session(id))));
                }
            }
            ViewOutcome::DeleteSession(id) => {
                self.effects.push(Effect::Host(Request::DeleteSession(id)))
            }
            ViewOutcome::RenameSession(id, title) => self
                .effects
                .push(Effect::Host(Request::RenameSession { id, title })),
            ViewOutcome::SearchSessions(query) => self
                .effects
                .push(Effect::Host(Request::ListSessions(Some(query)))),
            ViewOutcome::Rewind { revision } => {
                self.overlay = None;
                self.effects
                    .push(Effect::Host(Request::RevisionText(revision)));
            }
            ViewOutcome::SetModel(model) => {
                self.overlay = None;
                self.set_model(&model);
            }
            ViewOutcome::OpenAtLine { path, line } => {
                self.overlay = None;
                self.open_at_line(path, line);
            }
            ViewOutcome::ToggleTask { path, line, text } => {
                self.effects
                    .push(Effect::Host(Request::ToggleTask { path, line, text }));
            }
        }
    }

    /// Use `model` from the next turn on (a running turn keeps its model).
    fn set_model(&mut self, model: &str) {
        self.info.model = model.to_string();
        self.effects
            .push(Effect::Agent(Op::SetModel(model.to_string())));
        self.effects
            .push(Effect::Host(Request::ContextWindow(model.to_string())));
        self.transcript
            .push_system(&format!("model set to {model} for the next turns"));
    }

    /// The context window of `model` became known (from the config, its server or the table):
    /// the context % measures against it while that model is in use.
    pub fn set_context_window(&mut self, model: &str, tokens: u64) {
        if self.info.model == model && tokens > 0 {
            self.info.context_window = tokens;
        }
    }

    /// `/model`'s list arrived.
    pub fn show_models(&mut self, view: ModelsView) {
        self.flash = None;
        self.overlay = Some(Overlay::Models(view.with_keymap(&self.keymap)));
    }

    // ------------------------------------------------------------------------------------------
    // Answers from the runner

    /// The agent task ended without finishing its turn: approved edits it had not delivered will
    /// never come, so nothing may wait for them (a quit or an open would hang on them).
    pub fn on_agent_gone(&mut self) {
        self.saver.on_turn_done();
        self.state = AgentState::Idle;
        self.settle();
    }

    /// Whether the transcript's last cell is a system line saying exactly `text`.
    fn last_cell_says(&self, text: &str) -> bool {
        self.transcript
            .len()
            .checked_sub(1)
            .and_then(|last| self.transcript.cell(last))
            .is_some_and(|cell| matches!(cell, super::chat::cell::Cell::System { text: said } if said == text))
    }

    /// A message could not reach an agent (none could start: no API key, a bad provider).
    pub fn on_agent_unavailable(&mut self) {
        self.saver.on_turn_done();
        self.settle();
        self.state = AgentState::Idle;
        self.on_error(
            "there is no agent to answer: check [provider] in the config and the API key (vaultchat doctor), then /new",
        );
    }

    pub fn on_note_opened(&mut self, path: &str, note: NoteText) {
        self.editor.open(path, note);
        // The buffer holds the disk's text now: a restored text left it unsaved.
        self.restored_recovery = None;
        self.completion = None;
        self.files.follow(Some(path), Some(crate::time::now_ns()));
        self.saver.on_opened(&self.editor);
        self.focus = Pane::Editor;
        self.flash(format!("opened {path}"), Role::Notice);
        if let Some((_, line)) = self.pending_line.take().filter(|(p, _)| p == path) {
            self.cursor_to_line(line);
        }
        // An open backlinks view follows the open note, as Obsidian's pane does.
        if matches!(&self.overlay, Some(Overlay::Backlinks(view)) if view.path() != path) {
            self.load_backlinks(path);
        }
    }

    /// A save the app asked for finished: `Ok` with the note as written, or `Err((changed on
    /// disk, message))`.
    pub fn on_save_finished(&mut self, path: &str, result: Result<NoteText, (bool, String)>) {
        let (report, prompt) =
            self.saver
                .on_saved(path, result, &mut self.editor, &mut self.effects);
        if let SaveReport::Saved { path, .. } = &report {
            self.forget_recovery_once_saved(path);
        }
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

    /// Open the picker over the file pane's listing (shared, not copied); before the listing
    /// has arrived it says so and fills in when it does. Closing it frees all it holds.
    pub fn show_picker(&mut self) {
        let tree = self.files.tree();
        let mut picker = if tree.is_loaded() {
            Picker::new(tree.table(), tree.touched_in_app().clone())
        } else {
            Picker::loading()
        };
        picker.set_key_hints(&self.keymap);
        self.overlay = Some(Overlay::Picker(picker));
    }

    /// The picker over `notes` instead of the file pane's listing (tests of opening by name).
    #[cfg(test)]
    pub fn show_picker_over(&mut self, notes: Vec<NoteEntry>) {
        let notes = std::sync::Arc::new(notes);
        self.overlay = Some(Overlay::Picker(Picker::new(notes, Default::default())));
    }

    pub fn show_sessions(&mut self, sessions: Vec<crate::protocol::SessionSummary>) {
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
            self.load_tools();
        }
    }

    /// Ask whether the vault's plugins may run (the runner holds them until the answer).
    pub fn ask_plugin_trust(&mut self, prompt: TrustPrompt) {
        self.trust_prompt = Some(prompt);
    }

    /// Unsaved text of a note kept when a signal stopped the app: offered if that note is
    /// still the open one.
    pub fn on_recovery_found(&mut self, kept: crate::host::recovery::Kept) {
        if self.editor.path() != Some(kept.recovery.path.as_str()) {
            return;
        }
        self.recovery_prompt = Some(RecoveryPrompt::new(kept));
    }

    /// How the offered kept text differs from the note, compared by the host.
    pub fn on_recovery_compared(&mut self, file: &str, diff: &crate::text::diff::DiffPreview) {
        if let Some(prompt) = self.recovery_prompt.as_mut() {
            prompt.on_compared(file, diff);
        }
    }

    /// The person answered the recovery offer.
    fn on_recovery_choice(&mut self, prompt: RecoveryPrompt, choice: RecoveryChoice) {
        match choice {
            RecoveryChoice::Restore => {
                if self.editor.path() == Some(prompt.path.as_str()) {
                    self.editor.apply_edit(&prompt.text);
                    self.flash(
                        format!(
                            "restored the kept changes to {}; not saved yet",
                            prompt.path
                        ),
                        Role::Notice,
                    );
                    // Forgotten once saved (`forget_recovery_once_saved`), not now: the app may
                    // end before the save.
                    self.restored_recovery = Some((prompt.path, prompt.file));
                }
            }
            RecoveryChoice::Discard => {
                self.flash(
                    format!("dropped the kept changes to {}", prompt.path),
                    Role::Notice,
                );
                // The note's next older kept text, if any, is offered then.
                self.effects.push(Effect::Host(Request::ForgetRecovery {
                    path: prompt.path,
                    file: prompt.file,
                    offer_next: true,
                }));
            }
            RecoveryChoice::Later => self.flash(
                "the kept changes stay; opening the note offers them again",
                Role::Notice,
            ),
        }
    }

    /// A save of `path` finished: when it leaves the buffer clean, a text restored into it is on
    /// disk, and its recovery file can go. A save that wrote an older text (one in flight when
    /// the person restored) leaves the buffer dirty and the file kept.
    fn forget_recovery_once_saved(&mut self, path: &str) {
        if self.editor.path() != Some(path) || self.editor.is_dirty() {
            return;
        }
        if let Some((path, file)) = self.restored_recovery.take_if(|(p, _)| p == path) {
            // Older kept texts wait for the next opening: an offer popping up while the person
            // types after a save would take their keys.
            self.effects.push(Effect::Host(Request::ForgetRecovery {
                path,
                file,
                offer_next: false,
            }));
        }
    }

    /// Whether the plugins question is open.
    pub fn asking_plugin_trust(&self) -> bool {
        self.trust_prompt.is_some()
    }

    /// Ask the host for every tool and what the model in use is offered.
    fn load_tools(&mut self) {
        self.effects.push(Effect::Host(Request::ListTools {
            model: self.info.model.clone(),
            window: self.info.context_window,
        }));
    }

    /// The tools list came: open the view when `/mcp` asked for it, or replace the open one (a
    /// reload); a reload's list for a view closed since is dropped, so it never reopens over
    /// what the person typed next.
    pub fn show_tools(&mut self, view: ToolsView) {
        let open = matches!(self.overlay, Some(Overlay::Tools(_)));
        if open || std::mem::take(&mut self.tools_asked) {
            self.overlay = Some(Overlay::Tools(view.with_keymap(&self.keymap)));
        }
    }

    /// Ask the host for the vault's open tasks (the tasks view opens when they arrive).
    fn load_tasks(&mut self) {
        self.effects.push(Effect::Host(Request::ListTasks));
    }

    /// The open tasks arrived: a first list opens the view, a later one (after a toggle) replaces
    /// the rows of the open view.
    pub fn show_tasks(&mut self, tasks: Vec<TaskEntry>, total: usize) {
        match self.overlay.as_mut() {
            Some(Overlay::Tasks(view)) => view.set_tasks(tasks, total),
            _ => {
                let today = crate::time::format_day(crate::time::now_ms());
                self.overlay = Some(Overlay::Tasks(
                    TasksView::new(tasks, total, &today).with_keymap(&self.keymap),
                ));
            }
        }
    }

    /// A task was toggled on disk: the open note follows (merged with unsaved typing, as any
    /// change on disk), and the tasks are listed again.
    pub fn on_task_toggled(&mut self, path: &str, result: Result<NoteText, String>) {
        match result {
            Ok(note) => {
                self.on_note_written(path);
                // Said first: a conflict with the person's unsaved typing in that note (or its
                // merge) is said over it, not hidden by it.
                self.flash(format!("task toggled in {path}"), Role::Notice);
                if self.editor.path() == Some(path) {
                    self.on_disk_change(note);
                }
            }
            Err(message) => self.flash(message, Role::Error),
        }
        if matches!(self.overlay, Some(Overlay::Tasks(_))) {
            self.load_tasks();
        }
    }

    /// The backlinks view of the open note, at once in its loading state; the links fill it in
    /// when the host answers.
    fn show_backlinks(&mut self) {
        match self.editor.path().map(str::to_string) {
            Some(path) => self.load_backlinks(&path),
            None => self.flash(
                "the backlinks view lists the notes linking to the open note; open one first",
                Role::Notice,
            ),
        }
    }

    /// (Re)open the backlinks view on `path`, loading, and ask the host for its links.
    fn load_backlinks(&mut self, path: &str) {
        self.overlay = Some(Overlay::Backlinks(
            BacklinksView::loading(path).with_keymap(&self.keymap),
        ));
        self.effects
            .push(Effect::Host(Request::Backlinks(path.to_string())));
    }

    /// The links (or the unlinked mentions) of `path` arrived: shown if the view still shows
    /// that note (an answer for a note the person has left is dropped).
    pub fn on_backlinks(
        &mut self,
        path: &str,
        answer: Result<super::views::backlinks::BacklinkList, String>,
    ) {
        if let Some(Overlay::Backlinks(view)) = self.overlay.as_mut()
            && view.path() == path
            && view.set_links(answer)
        {
            self.refresh_backlinks();
        }
    }

    pub fn on_unlinked_mentions(
        &mut self,
        path: &str,
        answer: Result<Vec<super::views::backlinks::LinkLine>, String>,
    ) {
        if let Some(Overlay::Backlinks(view)) = self.overlay.as_mut()
            && view.path() == path
            && view.set_mentions(answer)
        {
            self.refresh_backlinks();
        }
    }

    /// The index took in changes: an open backlinks view is listed again (it keeps its rows and
    /// selection until the answer comes).
    fn refresh_backlinks(&mut self) {
        if let Some(Overlay::Backlinks(view)) = self.overlay.as_mut()
            && view.ask_again()
        {
            let path = view.path().to_string();
            self.effects.push(Effect::Host(Request::Backlinks(path)));
        }
    }

    /// Open `path` (or stay in it, when it is the open note) with the cursor on `line`.
    fn open_at_line(&mut self, path: String, line: usize) {
        if self.editor.path() == Some(path.as_str()) {
            self.focus = Pane::Editor;
            self.cursor_to_line(line);
            return;
        }
        self.pending_line = Some((path.clone(), line));
        self.open_note(path);
    }

    /// Put the editor's cursor at the start of `line` (1-based; past the end: the last line).
    fn cursor_to_line(&mut self, line: usize) {
        let text = self.editor.text();
        let offset: usize = text
            .split_inclusive('\n')
            .take(line.saturating_sub(1))
            .map(|l| l.chars().count())
            .sum();
        self.editor.select_chars(offset..offset);
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
            // The status bar keeps saying "thinking"; the transcript shows how much so far.
            AgentEvent::ThinkingDelta(text) => self.transcript.append_thinking(&text),
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
                if record.name == "move_note" && !record.is_error {
                    self.after_agent_move(&record.result);
                }
            }
            AgentEvent::EditorEdit {
                id,
                path,
                before,
                after,
            } => self.apply_agent_edit(id, &path, &before, &after),
            AgentEvent::Notice(text) => self.transcript.push_system(&text),
            AgentEvent::Compacted(info) => self.transcript.push_compaction(&info),
            AgentEvent::CompactDone => self.state = AgentState::Idle,
            AgentEvent::Usage(usage) => {
                self.usage.add(&usage);
                self.last_context_tokens = usage.input_tokens
                    + usage.cache_read_input_tokens
                    + usage.cache_creation_input_tokens
                    + usage.output_tokens;
                self.last_context_estimated = usage.estimated;
            }
            AgentEvent::TurnDone(outcome) => {
                self.transcript.finish_streaming();
                // Requests still shown belong to the finished turn: the agent already denied them.
                let _ = self.banner.cancel_all();
                self.saver.on_turn_done();
                match (&outcome.stop_reason, &outcome.error) {
                    (TurnEnd::Interrupted, _) => self.transcript.push_system("interrupted"),
                    (TurnEnd::Error, Some(error)) => self.transcript.push_error(error),
                    // The agent said why as the turn stopped (a notice); once is enough.
                    (_, Some(note)) if self.last_cell_says(note) => {}
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
            match crate::text::diff::merge3(before, &current, after) {
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
}
