//! What the app asks of the host ([`Request`]) and what the host tells the app ([`HostEvent`]):
//! typed both ways, so that a screen is written against these and never against the engine.

use super::changes::{AppliedChange, ChangeKind, LocalChange};
use crate::agent::{AgentEvent, Op, Resume, StoredConversation};

/// The app → host.
#[derive(Debug)]
pub enum Request {
    /// Send this to the running agent (in order); without one the host says so.
    Agent(Op),
    /// Run one of the person's or the vault's commands (`/name ARGS`): its prompt is made and
    /// sent to the agent as a turn, or the app is told why not ([`HostEvent::CommandRefused`]).
    RunCommand {
        name: String,
        args: String,
        context: crate::agent::NoteContext,
    },
    /// Every command there is (built-ins, the person's, the vault's while trusted), read again
    /// now: answered by [`HostEvent::Commands`].
    ListCommands,
    /// Start an agent: a new session, a stored one (its conversation comes back for the chat),
    /// or a new one continuing a stored one. The running agent, if any, is asked to end.
    StartAgent(Resume),
    /// Resolve a note name or wikilink target and read the note.
    OpenNote(String),
    /// Forget recovery file `file` of note `path` (restored and saved, or discarded); with
    /// `offer_next`, the note's next older recovery, if any, is offered then
    /// ([`HostEvent::RecoveryFound`]).
    ForgetRecovery {
        path: String,
        file: String,
        offer_next: bool,
    },
    /// The open note as the editor knows it: read it again and report it if it changed on disk.
    CheckNote {
        path: String,
        known: crate::vault::note_io::Fingerprint,
    },
    /// Write the open note (atomic; refused if the file no longer matches `read`).
    SaveNote {
        path: String,
        text: String,
        read: crate::vault::note_io::NoteText,
        /// The text holds an agent edit the person approved (the revision is the agent's).
        agent_edit: bool,
    },
    /// The vault's notes with their modification times (the file pane).
    ListFiles,
    /// Plan a change the person asked for (a move, the chat as a note) for the banner, or make
    /// one that needs no question (a new empty note).
    PlanChange(ChangeRequest),
    /// Apply an approved change with the hunks kept (all when `None`).
    ApplyChange {
        change: Box<LocalChange>,
        hunks: Option<Vec<bool>>,
    },
    /// The vault's sessions, all or those matching the text.
    ListSessions(Option<String>),
    DeleteSession(String),
    RenameSession {
        id: String,
        title: String,
    },
    /// The last 30 days of usage.
    Usage,
    /// The stored revisions of a note (`/rewind`).
    Revisions(String),
    /// The text a revision replaced (what `/rewind` restores).
    RevisionText(i64),
    /// Every tool the agent can use and what the model in use is offered.
    ListTools {
        model: String,
        window: u64,
    },
    /// The provider's models for `/model`.
    ListModels {
        current: String,
    },
    /// The context window of a model: the known one at once, the server's when it answers.
    ContextWindow(String),
    /// The vault's open tasks, due first (the tasks view).
    ListTasks,
    /// Check the task on `line` of `path` off (or open it again), written as the person's own
    /// save; refused unless that line still holds a task with this `text`.
    ToggleTask {
        path: String,
        line: usize,
        text: String,
    },
    /// The links to the note at this path from other notes, then the lines that name it without
    /// linking it (the backlinks view): answered by [`HostEvent::Backlinks`], then
    /// [`HostEvent::UnlinkedMentions`].
    Backlinks(String),
    /// The person's answer to the vault plugins question.
    AnswerPluginTrust {
        trusted: bool,
    },
    /// Today's daily note, made at once from its template when missing (the person's own
    /// action, as in Obsidian); answered with `DailyNote`, then opened as any note.
    OpenDailyNote,
    /// The templates of the templates folder, filled in for a note named `title` (to insert one
    /// at the cursor); answered with `Templates`.
    Templates {
        title: String,
    },
}

/// A change the person asked for, to be planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeRequest {
    /// Move (rename) a note, fixing every link to it.
    Move { from: String, to: String },
    /// The chat of a stored session as a new note (`/save`; `last`: the last reply only).
    ChatNote { session: String, last: bool },
    /// An empty note with this name from the file pane (never replacing a file). The person's
    /// own action: applied at once, without the banner, and answered as `Applied`.
    Create { name: String },
}

/// The host → app.
#[derive(Debug)]
pub enum HostEvent {
    /// What start-up found before anything ran: problems to show, how plugin tools render,
    /// and the plugins question when the vault's plugins file has no answer yet.
    Started(StartUp),
    /// The workspace is open (the index synced) or could not be opened.
    Ready(Result<(), String>),
    /// The person's MCP servers are done starting: the ones that failed, with why.
    McpStarted {
        failed: Vec<(String, String)>,
    },
    /// The index synced a batch; with `listing_changed` notes came, went or moved.
    Synced {
        listing_changed: bool,
    },
    /// An agent started (`generation` numbers them; events of older ones are stale).
    AgentStarted {
        generation: u64,
        /// For a resumed session: its id and its conversation (or why it cannot be shown).
        resumed: Option<(String, Result<StoredConversation, String>)>,
    },
    /// An event of agent `generation`.
    Agent {
        generation: u64,
        event: AgentEvent,
    },
    /// Agent `generation` ended (it failed): nothing it promised will arrive.
    AgentGone {
        generation: u64,
    },
    /// An op was asked for with no agent running (no provider, a failed start).
    AgentUnavailable,
    /// A command could not be run (no such command, the vault's not trusted, an unknown
    /// placeholder, a missing argument): why, to show; no turn started.
    CommandRefused(String),
    /// The command named here was cancelled (an interrupt) while its prompt was still being
    /// made (an MCP server's `prompts/get`): no turn started.
    CommandCancelled(String),
    /// Every command, read when asked ([`Request::ListCommands`]), for the `/` list and the help.
    Commands(crate::commands::Catalog),
    NoteOpened {
        path: String,
        note: crate::vault::note_io::NoteText,
    },
    /// Unsaved text of the note just opened, kept when a signal stopped the app: offered to the
    /// person (restore / discard), never put over the note unasked.
    RecoveryFound(crate::host::recovery::Kept),
    /// How the offered recovery `file` of `path` differs from the note as read when it was
    /// offered: computed here, off the UI loop (a kept text may be 64 MiB).
    RecoveryCompared {
        path: String,
        file: String,
        diff: crate::text::diff::DiffPreview,
    },
    /// The open note is not what the editor read: the disk's text.
    NoteChanged {
        path: String,
        note: crate::vault::note_io::NoteText,
    },
    /// A save finished: the note as written, or (changed on disk, why not).
    Saved {
        path: String,
        result: Result<crate::vault::note_io::NoteText, (bool, String)>,
    },
    Files(Vec<NoteEntry>),
    /// The notes `[[links]]` can name, keyed from the listing just sent (after each `Files`):
    /// the editor draws a link that names none as unresolved.
    LinkTargets(std::sync::Arc<super::LinkTargets>),
    /// A planned change for the banner, or why it cannot be made.
    Planned {
        kind: ChangeKind,
        result: Result<Box<LocalChange>, String>,
    },
    /// An applied change: the files written (and what could not follow), or why nothing was.
    Applied {
        kind: ChangeKind,
        result: Result<AppliedChange, String>,
    },
    Sessions(Vec<crate::store::SessionSummary>),
    Usage(UsageReport),
    Revisions {
        path: String,
        revisions: Vec<crate::store::Revision>,
    },
    /// The text before `revision`; `None` when the revision created the note.
    RevisionText {
        revision: i64,
        text: Option<String>,
    },
    Tools(ToolsReport),
    /// The open tasks (at most a page of them) and how many there are in all.
    Tasks {
        tasks: Vec<super::TaskEntry>,
        total: usize,
    },
    /// A task was toggled: the note as written, or why nothing was.
    TaskToggled {
        path: String,
        result: Result<crate::vault::note_io::NoteText, String>,
    },
    /// The links to the note at `path` (at most a page of them, with how many there are), or
    /// why they cannot be listed.
    Backlinks {
        path: String,
        result: Result<BacklinkList, String>,
    },
    /// The lines of other notes that name the note at `path` without linking it.
    UnlinkedMentions {
        path: String,
        result: Result<Vec<LinkLine>, String>,
    },
    Models(Result<ModelsReport, String>),
    Window {
        model: String,
        tokens: u64,
    },
    /// Today's daily note exists now, or why it cannot.
    DailyNote(Result<DailyOpened, String>),
    /// The templates, filled in, or why they cannot be listed.
    Templates(Result<Vec<FilledTemplate>, String>),
    /// A request the app waits on ([`Asked`]) could not be answered: why, for the person (a
    /// notice when it is only not possible yet — the vault still opening — else an error). It
    /// ends the app's wait for that answer and no other.
    Unanswered {
        asked: Asked,
        message: String,
        notice: bool,
    },
    /// Something failed; the text says what, for the person.
    Error(String),
    /// Something the person should know that is not a failure (the vault is still opening).
    Notice(String),
}

/// The links to one note that the backlinks view shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BacklinkList {
    /// By linking note and line.
    pub links: Vec<LinkLine>,
    /// How many links there are in all (more than `links` holds when the list was cut).
    pub total: usize,
}

/// A line of a note that links to (or names) another, as the note holds it: text written by
/// whoever wrote the vault, to be escaped before it is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkLine {
    /// Vault-relative path of the linking note.
    pub path: String,
    /// 1-based.
    pub line: usize,
    /// The line, trimmed and bounded by the index.
    pub context: String,
    /// For an unlinked mention, the title, alias or file name found on the line.
    pub mention: Option<String>,
}

/// A request whose answer the app waits for and says so (the status bar's `opening Plan.md…`):
/// named in [`HostEvent::Unanswered`] so a failure ends that wait alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// A note by the name the app asked for ([`Request::OpenNote`]).
    Note(String),
    /// The sessions list (listed, searched, or after a delete or rename).
    Sessions,
    Usage,
    /// The revisions of the note at this path ([`Request::Revisions`]).
    History(String),
}

/// Today's daily note, as the host made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyOpened {
    /// Vault-relative path.
    pub path: String,
    /// Made now (from its template) rather than found.
    pub created: bool,
    /// What was wrong with `.obsidian/` settings or the template.
    pub warnings: Vec<String>,
}

/// A template with its variables filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilledTemplate {
    /// Vault-relative path of the template.
    pub path: String,
    /// Its name in the templates folder (`Meeting`, `Work/Standup`).
    pub name: String,
    pub text: String,
}

/// What start-up found.
#[derive(Debug, Default)]
pub struct StartUp {
    pub problems: Vec<String>,
    pub renders: std::collections::HashMap<String, crate::mcp::plugins::Render>,
    /// The vault's plugins wait for this answer.
    pub trust_question: Option<TrustQuestion>,
}

/// The plugins question: the file and the commands it would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustQuestion {
    pub file: String,
    pub command_lines: Vec<(String, Vec<String>)>,
}

/// A note in the file pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteEntry {
    /// Vault-relative, with `/` (`Projects/Plan.md`).
    pub path: String,
    /// The title (frontmatter title or first heading); empty when there is none or it is the
    /// file name (see [`NoteEntry::display_title`]).
    pub title: String,
    pub aliases: Vec<String>,
    /// Last modification, in nanoseconds since the Unix epoch.
    pub modified_ns: i64,
}

impl NoteEntry {
    /// The file name without `.md`: what Obsidian shows and links by.
    pub fn stem(&self) -> &str {
        crate::vault::name::stem(&self.path)
    }

    /// The stem as the link resolver compares names (NFC, lower case): two notes with the same
    /// key need a path in a `[[link]]` (`vault::links`, the rule of the graph and `move_note`).
    pub fn link_key(&self) -> String {
        crate::vault::links::fold_name(self.stem())
    }

    /// The path without `.md`: what a `[[link]]` says when the stem is not unique.
    pub fn path_without_md(&self) -> &str {
        crate::vault::name::without_md(&self.path)
    }

    /// The title, or the file name when the note has none.
    pub fn display_title(&self) -> &str {
        if self.title.trim().is_empty() {
            self.stem()
        } else {
            &self.title
        }
    }
}

/// The last days of usage, with their cost where every model has a price.
#[derive(Debug, Clone)]
pub struct UsageReport {
    pub days: Vec<crate::store::DayUsage>,
    /// (session id, title, totals), the biggest first.
    pub by_session: Vec<(String, String, crate::store::TokenTotals)>,
    /// The estimated cost and where each model's price came from.
    pub cost: crate::store::CostEstimate,
    pub period_days: u32,
    pub end_ms: i64,
}

/// Every tool and what the model in use is offered.
#[derive(Debug, Clone)]
pub struct ToolsReport {
    pub tools: Vec<crate::tools::ToolSpec>,
    pub servers: Vec<crate::mcp::McpServerStatus>,
    /// What the model is sent when it is not every tool.
    pub offer: Option<String>,
}

/// The provider's models for `/model`.
#[derive(Debug, Clone)]
pub struct ModelsReport {
    /// "openai · http://…".
    pub label: String,
    pub current: String,
    pub rows: Vec<ModelRow>,
    /// The server listed its models (else only the one in use is shown).
    pub listed: bool,
}

/// One model of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRow {
    pub id: String,
    pub window: crate::llm::window::ContextWindow,
    /// The length the model was trained for, when the server said it beside a smaller window.
    pub trained: Option<u64>,
    /// The model in use, not listed by the server.
    pub unlisted: bool,
}
