//! The agent: one task per session that takes [`Op`]s in, talks to the provider, runs tools
//! through the permission cascade, and sends [`AgentEvent`]s out (docs/architecture.md).
//!
//! The agent never draws anything and never waits on its front end except for a permission
//! answer. The full-screen app and `vaultchat ask` are both front ends: they send a
//! [`Op::UserTurn`], show the events, and answer every [`AgentEvent::PermissionRequested`] with an
//! [`Op::Decision`] (`ask --approve all` answers "once" to each, `--approve none` denies each).

pub mod build;
mod compact;
mod dispatch;
pub mod export;
mod inbox;
mod local_server;
mod prompt;
mod prompt_frame;
mod request;
mod session;
mod tool_list;
mod turn;

pub use build::{
    BuildError, ProviderChoice, ProviderFlags, ProviderProblem, Resume, SessionBuilder,
};
pub use compact::{CompactReason, CompactionInfo, ContextSettings, compaction_line};
pub use local_server::{ToolOffer, choose_offer, offer_line, offered_tools, tools_tokens};
pub use prompt_frame::{PromptFrame, SuggestedStart};
pub use session::{SessionError, SessionLog, StoredConversation, load_conversation};
pub use tool_list::build_tool_list;

use crate::llm::{Message, Provider, Usage};
use crate::permission::{Answer, RuleSet};
use crate::text::diff::TextDiff;
use crate::tools::session::EditorState;
use crate::tools::workspace::Workspace;
use crate::tools::{BoxFuture, Registry, Tool};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The `[permissions]` rules of the config, each checked against the tools there are: vaultchat's
/// own, or `NAME__tool` for a configured MCP server `NAME` (whose tools are known only once it
/// runs). `Err` names every bad entry and what is wrong with it.
pub fn config_rules(
    config: &crate::config::Config,
) -> Result<Vec<crate::permission::Rule>, Vec<String>> {
    with_known_tools(config, |known| {
        crate::permission::load::config_rules(config, known)
    })
}

/// The rules that hold for a vault: the config's (see [`config_rules`]), then the *always*
/// rules stored for the vault (see [`crate::permission::load_rules`]).
pub fn load_rules(
    config: &crate::config::Config,
    store: &crate::store::Store,
    vault_id: &str,
) -> Result<RuleSet, crate::permission::RulesError> {
    with_known_tools(config, |known| {
        crate::permission::load_rules(config, known, store, vault_id)
    })
}

/// `f` with the tool names a rule may use (the tools live above `permission`).
fn with_known_tools<T>(
    config: &crate::config::Config,
    f: impl FnOnce(&crate::permission::KnownTools<'_>) -> T,
) -> T {
    let builtin = crate::tools::builtin_tool_names();
    let servers: Vec<&str> = config.mcp.servers.keys().map(String::as_str).collect();
    f(&crate::permission::KnownTools {
        builtin: &builtin,
        servers: &servers,
    })
}

/// The default for the most model responses in one turn.
pub const MAX_STEPS: u32 = 8;

/// What the note side of the screen looks like when a turn starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoteContext {
    /// The focused note (vault-relative) and its editor state; `None` when no note is focused.
    pub note: Option<FocusedNote>,
}

/// A note open in the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FocusedNote {
    pub path: String,
    pub editor: EditorState,
    /// The note is open in the app's editor: edits to it (session tools, and workspace writes to
    /// this path) go to the editor buffer as one undo step instead of to the file, and are
    /// planned against the buffer's text (which may hold unsaved changes). `vaultchat ask` has
    /// no buffer and edits the file.
    pub in_editor: bool,
}

impl FocusedNote {
    /// The text selected in the editor, if any (the selection is in chars).
    pub fn selected_text(&self) -> Option<String> {
        let range = self.editor.selection.clone()?;
        Some(
            self.editor
                .text
                .chars()
                .skip(range.start)
                .take(range.end.saturating_sub(range.start))
                .collect(),
        )
    }
}

/// An image the person attached to a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub media_type: String,
    /// Base64, without a `data:` prefix.
    pub data: String,
}

/// What a command asks of the one turn it starts. Both only narrow: `allowed_tools` keeps the
/// turn's tools whose names it lists (a name no tool has adds nothing), and `model` answers this
/// turn only, the session's model coming back after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnLimits {
    pub model: Option<String>,
    pub allowed_tools: Option<Vec<String>>,
}

/// Front end → agent.
#[derive(Debug)]
pub enum Op {
    /// The person sent a message.
    UserTurn {
        text: String,
        attachments: Vec<Attachment>,
        context: NoteContext,
    },
    /// The person ran one of their commands (a file in `commands/`): a message like `UserTurn`,
    /// answered within the command's limits (decisions §63).
    CommandTurn {
        text: String,
        attachments: Vec<Attachment>,
        context: NoteContext,
        limits: TurnLimits,
        /// An MCP prompt's other messages (empty for a command file).
        frame: PromptFrame,
    },
    /// The answer to a permission request. `hunks` (one flag per hunk of the proposal's diff)
    /// accepts only some of the hunks; `None` accepts all of them.
    Decision {
        request: u64,
        answer: Answer,
        hunks: Option<Vec<bool>>,
    },
    /// Stop the running turn: the stream is dropped and every parked request is denied.
    Interrupt,
    /// Use this model from the next request on.
    SetModel(String),
    /// The model's context window, in tokens (after `/model`, or once its server said): used
    /// for compaction from the next turn on.
    SetContextWindow(u64),
    /// Compact the conversation now (`/compact`); answered with `Compacted` or a notice, then
    /// `CompactDone`.
    Compact,
    /// The editor's answer to [`AgentEvent::EditorEdit`] `id`: what really happened to the edit.
    EditorApplied { id: u64, result: EditorEditResult },
    /// End the agent task.
    Shutdown,
}

/// What the app's editor did with an approved edit of the open note; the tool result the model
/// gets is built from it, so it never hears "applied" for an edit the editor did not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorEditResult {
    /// In the buffer as one undo step. `text` is the buffer afterwards (typing the person did
    /// meanwhile merged in); `saved` is `Ok` once the note was written to disk, else why not.
    Applied {
        text: String,
        saved: Result<(), String>,
    },
    /// Not applied, and why (the person's typing overlapped it, the note is no longer open).
    Refused(String),
}

/// A write the agent wants to make, shown to the person before anything is written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    /// "update Projects/Plan.md", "create Inbox/New.md".
    pub summary: String,
    pub path: String,
    pub diff: TextDiff,
    /// For a change to several files (a move): each file in order, owning the next `hunks`
    /// hunks of `diff`. Empty for a change to one file.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<ProposalFile>,
}

/// One file of a change to several files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposalFile {
    /// Where the file is now.
    pub path: String,
    /// Where it is after the change (the moved note's new path; else the same).
    pub path_after: String,
    /// How many hunks of the proposal's diff are this file's.
    pub hunks: usize,
}

impl ProposalFile {
    /// The files of `plan` when it changes several (empty otherwise).
    pub fn of_plan(plan: &crate::tools::workspace::Plan) -> Vec<ProposalFile> {
        if !matches!(plan.change, crate::tools::workspace::Change::Move(_)) {
            return Vec::new();
        }
        plan.file_diffs()
            .into_iter()
            .map(|file| ProposalFile {
                path: file.path,
                path_after: file.path_after,
                hunks: file.diff.hunks.len(),
            })
            .collect()
    }
}

/// A call waiting for the person's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PermissionRequest {
    /// Answer with `Op::Decision { request: id, .. }`.
    pub id: u64,
    pub call_id: String,
    pub tool: String,
    pub input: Value,
    /// The vault-relative paths the call touches.
    pub paths: Vec<String>,
    /// The diff, for calls that write.
    pub proposal: Option<Proposal>,
    pub offer_session: bool,
    pub offer_always: bool,
    /// Why it asks: "update_note writes to the vault", "a tool from an MCP server ran earlier in this turn".
    pub reason: String,
}

/// Agent → front end.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// A turn began (the session exists from here on).
    TurnStarted { session_id: String },
    /// Text of the reply as it streams.
    TextDelta(String),
    /// The model's reasoning as it streams (shown apart, never part of the reply).
    ThinkingDelta(String),
    /// The model asked for a tool.
    ToolCallStarted {
        id: String,
        name: String,
        input: Value,
    },
    /// The person must decide; the agent waits for the matching `Op::Decision`.
    PermissionRequested(PermissionRequest),
    /// A tool call ended (run, refused or denied).
    ToolCallFinished(ToolCallRecord),
    /// An approved edit of the note open in the editor: apply it to the buffer as one undo step
    /// and save it, then answer with `Op::EditorApplied { id, .. }` (the call waits for it).
    /// `before` is the text the edit was made against; if the buffer changed since, merge.
    /// `id` is the permission request's id when the person was asked.
    EditorEdit {
        id: u64,
        path: String,
        before: String,
        after: String,
    },
    /// Something the person should know that is not part of the reply (a retry, a step limit).
    Notice(String),
    /// One response's token usage.
    Usage(Usage),
    /// The older part of the conversation was compacted (docs/architecture.md, "Long sessions").
    Compacted(CompactionInfo),
    /// A `/compact` between turns finished (whether or not anything was compacted).
    CompactDone,
    /// The turn ended.
    TurnDone(TurnOutcome),
}

/// How a tool call was let through or stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallDecision {
    /// Allowed without asking (a read-only tool, or an allow rule).
    Allowed,
    /// The person approved it once.
    ApprovedOnce,
    /// The person approved it for this session.
    ApprovedSession,
    /// The person approved it always (a rule was stored).
    ApprovedAlways,
    /// A deny rule or the person denied it.
    Denied,
    /// Refused before any rule was consulted: not offered this turn, a path outside the vault,
    /// a protected folder, or bad arguments.
    Refused,
}

impl CallDecision {
    /// Every decision.
    pub const ALL: [CallDecision; 6] = [
        CallDecision::Allowed,
        CallDecision::ApprovedOnce,
        CallDecision::ApprovedSession,
        CallDecision::ApprovedAlways,
        CallDecision::Denied,
        CallDecision::Refused,
    ];

    /// The word `ask --json` and the app database use.
    pub fn as_str(self) -> &'static str {
        match self {
            CallDecision::Allowed => "allowed",
            CallDecision::ApprovedOnce => "approved_once",
            CallDecision::ApprovedSession => "approved_session",
            CallDecision::ApprovedAlways => "approved_always",
            CallDecision::Denied => "denied",
            CallDecision::Refused => "refused",
        }
    }

    /// The decision [`CallDecision::as_str`] names.
    pub fn parse(word: &str) -> Option<CallDecision> {
        CallDecision::ALL.into_iter().find(|d| d.as_str() == word)
    }
}

/// One tool call of a turn, as `ask --json` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    pub input: Value,
    pub is_error: bool,
    pub decision: CallDecision,
    /// The text the model got back.
    #[serde(skip)]
    pub result: String,
}

/// What happened to a proposed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EditStatus {
    Applied,
    Rejected,
    Failed,
}

/// One proposed write of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EditRecord {
    pub tool: String,
    pub path: String,
    pub status: EditStatus,
    pub added: u64,
    pub removed: u64,
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model finished (`end_turn` / `stop_sequence`).
    EndTurn,
    /// The response hit the token limit.
    MaxTokens,
    /// The provider refused to answer.
    Refusal,
    /// The conversation no longer fits the model's context window.
    ContextWindowExceeded,
    /// MAX_STEPS responses without the model finishing.
    MaxSteps,
    /// The person interrupted it.
    Interrupted,
    /// The provider failed (the message says how).
    Error,
}

/// The result of one turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnOutcome {
    pub session_id: String,
    pub reply: String,
    pub stop_reason: TurnEnd,
    pub steps: u32,
    pub tool_calls: Vec<ToolCallRecord>,
    pub edits: Vec<EditRecord>,
    pub usage: Usage,
    /// One sentence for the person when the turn ended badly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the person should know about the turn even though it ended well (the server cut a
    /// request: the reply may rest on part of it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Settings of one agent.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    pub provider_name: String,
    pub model: String,
    pub max_tokens: u32,
    pub max_steps: u32,
    /// The context window and when to compact.
    pub context: ContextSettings,
}

/// Everything the agent task owns.
pub struct Agent {
    provider: Provider,
    workspace: Arc<Workspace>,
    /// Workspace tools and the tools of configured MCP servers (session tools are added per turn).
    registry: Registry,
    settings: AgentSettings,
    /// Config rules, stored *always* rules of this vault, and rules granted for this session.
    rules: RuleSet,
    log: SessionLog,
    /// The conversation as sent upstream (the stored one under the compaction in force).
    history: Vec<Message>,
    /// The compaction in force (the stored log keeps every message).
    compaction: session::CompactionState,
    /// The last request's reported size, to estimate the next one from.
    calibration: Option<compact::Calibration>,
    /// Reported ÷ estimated tokens of the last reported request (1 until one is reported).
    token_ratio: f64,
    /// Notes the agent has read in this session, as it read them (for the freshness check).
    seen: std::collections::HashMap<String, String>,
    next_request: u64,
    /// A `Shutdown` arrived during a turn: end after it.
    shutting_down: bool,
    /// The person was told that a write to the session's record failed (told once per session;
    /// every failure is logged).
    told_unrecorded: bool,
    /// Tools still being started (the person's MCP servers): awaited before the first request,
    /// so the front end never waits for them and the model never misses them. In a mutex only
    /// to make the agent `Sync` (a future is not); it is only ever reached through `&mut self`.
    pending_tools: std::sync::Mutex<Option<PendingTools>>,
    /// What the server does with windows and tools (docs/decisions.md §49).
    local: local_server::LocalServer,
}

/// Tools that become available later: a future resolving to them once their servers started.
pub type PendingTools = BoxFuture<'static, Vec<Arc<dyn Tool>>>;

impl Agent {
    pub fn new(
        provider: Provider,
        workspace: Arc<Workspace>,
        registry: Registry,
        settings: AgentSettings,
        rules: RuleSet,
        log: SessionLog,
    ) -> Self {
        // Failed turns stay in the log but are not sent again (docs/decisions.md §36); the
        // compaction's positions count the messages that are sent.
        let compaction = log.compaction().clone();
        let history = compact::upstream(&log.upstream_history(), &compaction);
        Self {
            provider,
            workspace,
            registry,
            settings,
            rules,
            log,
            history,
            compaction,
            calibration: None,
            token_ratio: 1.0,
            seen: Default::default(),
            next_request: 1,
            shutting_down: false,
            told_unrecorded: false,
            pending_tools: std::sync::Mutex::new(None),
            local: Default::default(),
        }
    }

    /// `[provider] tools` and `tool_set`, and whether the config sets the window (then what the
    /// server says does not change it).
    pub fn with_server_settings(
        mut self,
        tools: crate::config::ToolsMode,
        tool_set: crate::config::ToolSetMode,
        window_configured: bool,
    ) -> Self {
        self.local.tools = tools;
        self.local.tool_set = tool_set;
        self.local.window_configured = window_configured;
        self
    }

    /// Add `tools` to the registry when they are ready; the first turn waits for them (an
    /// interrupt ends the wait).
    pub fn with_pending_tools(self, tools: PendingTools) -> Self {
        Self {
            pending_tools: std::sync::Mutex::new(Some(tools)),
            ..self
        }
    }

    /// The session's id (it exists once the first turn started, or from the start when resumed).
    pub fn session_id(&self) -> Option<&str> {
        self.log.id()
    }

    /// Run the agent: handle ops until `Shutdown` or until the front end goes away.
    pub async fn run(
        mut self,
        mut ops: mpsc::Receiver<Op>,
        events: mpsc::UnboundedSender<AgentEvent>,
    ) {
        while let Some(op) = ops.recv().await {
            match op {
                Op::UserTurn {
                    text,
                    attachments,
                    context,
                } => {
                    let mut inbox = inbox::Inbox {
                        ops: &mut ops,
                        events: &events,
                        window: None,
                    };
                    let limits = TurnLimits::default();
                    let frame = PromptFrame::default();
                    let outcome = self
                        .turn(&text, &attachments, context, (&limits, &frame), &mut inbox)
                        .await;
                    inbox.send(AgentEvent::TurnDone(outcome));
                    if let Some(tokens) = inbox.window {
                        self.settings.context.window = tokens;
                    }
                    if self.shutting_down {
                        break;
                    }
                }
                Op::CommandTurn {
                    text,
                    attachments,
                    context,
                    limits,
                    frame,
                } => {
                    let mut inbox = inbox::Inbox {
                        ops: &mut ops,
                        events: &events,
                        window: None,
                    };
                    let session_model = limits
                        .model
                        .as_ref()
                        .map(|model| std::mem::replace(&mut self.settings.model, model.clone()));
                    let outcome = self
                        .turn(&text, &attachments, context, (&limits, &frame), &mut inbox)
                        .await;
                    // Back to the session's model, unless `/model` chose another meanwhile.
                    if let Some(model) = session_model
                        && limits.model.as_ref() == Some(&self.settings.model)
                    {
                        self.settings.model = model;
                    }
                    inbox.send(AgentEvent::TurnDone(outcome));
                    if let Some(tokens) = inbox.window {
                        self.settings.context.window = tokens;
                    }
                    if self.shutting_down {
                        break;
                    }
                }
                // Nothing is running or parked between turns.
                Op::Decision { .. } | Op::EditorApplied { .. } | Op::Interrupt => {}
                Op::SetModel(model) => self.settings.model = model,
                Op::SetContextWindow(tokens) => self.settings.context.window = tokens,
                Op::Compact => {
                    let mut inbox = inbox::Inbox {
                        ops: &mut ops,
                        events: &events,
                        window: None,
                    };
                    self.compact_on_request(&mut inbox).await;
                    inbox.send(AgentEvent::CompactDone);
                    if let Some(tokens) = inbox.window {
                        self.settings.context.window = tokens;
                    }
                    if self.shutting_down {
                        break;
                    }
                }
                Op::Shutdown => break,
            }
        }
    }

    /// Spawn the agent on the current tokio runtime; returns the op sender and the event receiver.
    pub fn spawn(
        self,
    ) -> (
        mpsc::Sender<Op>,
        mpsc::UnboundedReceiver<AgentEvent>,
        tokio::task::JoinHandle<()>,
    ) {
        let (op_tx, op_rx) = mpsc::channel(64);
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let handle = tokio::spawn(self.run(op_rx, ev_tx));
        (op_tx, ev_rx, handle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stored word is the JSON word, and every decision reads back.
    #[test]
    fn decision_words_round_trip_and_match_the_json() {
        for decision in CallDecision::ALL {
            assert_eq!(CallDecision::parse(decision.as_str()), Some(decision));
            assert_eq!(
                serde_json::to_value(decision).ok(),
                Some(serde_json::Value::String(decision.as_str().into()))
            );
        }
        assert_eq!(CallDecision::parse("maybe"), None);
    }
}
