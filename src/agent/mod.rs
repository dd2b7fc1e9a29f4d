//! The agent: one task per session that takes [`Op`]s in, talks to the provider, runs tools
//! through the permission cascade, and sends [`AgentEvent`]s out (DESIGN.md §2).
//!
//! The agent never draws anything and never waits on its front end except for a permission
//! answer. The full-screen app and `vaultchat ask` are both front ends: they send a
//! [`Op::UserTurn`], show the events, and answer every [`AgentEvent::PermissionRequested`] with an
//! [`Op::Decision`] (`ask --approve all` answers "once" to each, `--approve none` denies each).

mod dispatch;
mod prompt;
mod session;
mod tool_list;
mod turn;

pub use session::SessionLog;
pub use tool_list::build_tool_list;

use crate::llm::{Message, Provider, Usage};
use crate::permission::{Answer, RuleSet};
use crate::tools::session::EditorState;
use crate::tools::workspace::Workspace;
use crate::tools::{BoxFuture, Registry, Tool};
use crate::vault::diff::TextDiff;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The `[permissions]` rules of the config, each checked: a well-formed spec (see
/// [`crate::permission::parse_rule_spec`]) naming a tool that exists — one of vaultchat's own, or
/// `NAME__tool` for a configured MCP server `NAME` (whose tools are known only once it runs).
/// `Err` names every bad entry and what is wrong with it; a misspelt tool would otherwise deny
/// or allow nothing, silently.
pub fn config_rules(
    config: &crate::config::Config,
) -> Result<Vec<crate::permission::Rule>, Vec<String>> {
    use crate::permission::{Effect, KnownTools, parse_rule_spec};
    let builtin = crate::tools::builtin_tool_names();
    let servers: Vec<&str> = config.mcp.servers.keys().map(String::as_str).collect();
    let known = KnownTools {
        builtin: &builtin,
        servers: &servers,
    };
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    for (specs, effect, key) in [
        (&config.permissions.allow, Effect::Allow, "allow"),
        (&config.permissions.deny, Effect::Deny, "deny"),
    ] {
        for spec in specs {
            let checked =
                parse_rule_spec(spec, effect).and_then(|rule| match known.problem(&rule.tool) {
                    Some(problem) => Err(problem),
                    None => Ok(rule),
                });
            match checked {
                Ok(rule) => rules.push(rule),
                Err(e) => problems.push(format!("[permissions] {key}: `{spec}`: {e}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(rules)
    } else {
        Err(problems)
    }
}

/// The rules that hold for a vault: `[permissions]` from the config (see [`config_rules`]), then
/// the *always* rules stored for the vault. `Err` names the bad config entry.
pub fn load_rules(
    config: &crate::config::Config,
    store: &crate::store::Store,
    vault_id: &str,
) -> Result<RuleSet, String> {
    use crate::permission::{Effect, Rule, RuleScope};
    let mut rules = RuleSet {
        rules: config_rules(config).map_err(|problems| problems.join("\n"))?,
    };
    let stored = store.rules(vault_id).map_err(|e| e.to_string())?;
    for stored in stored {
        rules.rules.push(Rule {
            tool: stored.tool,
            path_glob: stored.path_glob,
            effect: if stored.effect == "deny" {
                Effect::Deny
            } else {
                Effect::Allow
            },
            scope: RuleScope::Always,
        });
    }
    Ok(rules)
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

/// An image the person attached to a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub media_type: String,
    /// Base64, without a `data:` prefix.
    pub data: String,
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
}

/// Settings of one agent.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    pub provider_name: String,
    pub model: String,
    pub max_tokens: u32,
    pub max_steps: u32,
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
    /// The conversation as sent upstream.
    history: Vec<Message>,
    /// Notes the agent has read in this session, as it read them (for the freshness check).
    seen: std::collections::HashMap<String, String>,
    next_request: u64,
    /// A `Shutdown` arrived during a turn: end after it.
    shutting_down: bool,
    /// Tools still being started (the person's MCP servers): awaited before the first request,
    /// so the front end never waits for them and the model never misses them. In a mutex only
    /// to make the agent `Sync` (a future is not); it is only ever reached through `&mut self`.
    pending_tools: std::sync::Mutex<Option<PendingTools>>,
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
        let history = log.history().to_vec();
        Self {
            provider,
            workspace,
            registry,
            settings,
            rules,
            log,
            history,
            seen: Default::default(),
            next_request: 1,
            shutting_down: false,
            pending_tools: std::sync::Mutex::new(None),
        }
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
                    let outcome = self
                        .turn(&text, &attachments, context, &mut ops, &events)
                        .await;
                    let _ = events.send(AgentEvent::TurnDone(outcome));
                    if self.shutting_down {
                        break;
                    }
                }
                // Nothing is running or parked between turns.
                Op::Decision { .. } | Op::EditorApplied { .. } | Op::Interrupt => {}
                Op::SetModel(model) => self.settings.model = model,
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
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A stored rule whose effect is neither allow nor deny (a damaged or hand-edited database)
    /// is an error, never an allow.
    #[test]
    fn a_stored_rule_with_an_unknown_effect_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("app.db");
        let store = crate::store::Store::open(&db).unwrap();
        store
            .add_rule("v", "delete_note", None, "deny", 1)
            .unwrap();
        // The schema's CHECK keeps such a row out; a database from elsewhere may not have it.
        store
            .connection()
            .pragma_update(None, "ignore_check_constraints", true)
            .unwrap();
        store
            .connection()
            .execute(
                "INSERT INTO rules (vault_id, tool, path_glob, effect, created_ms) VALUES ('v', 'update_note', NULL, 'maybe', 2)",
                [],
            )
            .unwrap();
        let loaded = load_rules(&crate::config::Config::default(), &store, "v");
        assert!(loaded.is_err(), "{loaded:?}");
    }
}
