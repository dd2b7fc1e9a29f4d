//! The vocabulary the engine and the app share: plain data the app shows or answers with,
//! defined here so that `tui` names these types without naming the engine modules that produce
//! them (as codex-rs's `codex-protocol` crate serves its core and its tui). Only data lives here;
//! the behaviour stays with the module that owns it (`store` sums and prices [`TokenTotals`] and
//! reads and writes the rest, `permission` turns an [`Answer`] into rules, `vault` reads and
//! writes a [`NoteText`] and takes its [`Fingerprint`], `llm` sends [`Message`]s and adds up
//! [`Usage`], `tools` runs what a [`ToolSpec`] describes, `mcp` starts the servers a
//! [`McpServerStatus`] reports on), and those modules re-export the types so their own paths keep
//! working. Nothing here touches the file system.
//!
//! * [`note`]: a note's text, its layout in bytes and its fingerprint.
//! * [`message`]: the conversation's messages, their blocks and token counts.
//! * [`window`]: a model's context window and where the number came from.
//! * [`tools`]: tool specs (tier, annotations) and the editor's state as the tools see it.
//! * [`mcp`]: MCP server states and how a plugin's results are drawn.
//! * Here: the permission answer, who changed a note, revisions, session summaries, token totals,
//!   a day's usage, and a cost estimate with where its prices came from.

pub mod mcp;
pub mod message;
pub mod note;
pub mod tools;
pub mod window;

pub use mcp::{McpServerState, McpServerStatus, Render};
pub use message::{Block, Message, ResultPart, Role, Usage};
pub use note::{Fingerprint, LineEnding, NoteText, TextFormat};
pub use tools::{Annotations, EditorState, Tier, ToolSpec};
pub use window::{ContextWindow, WindowSource};

/// The answer a person gives to an Ask.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Run this call only.
    Once,
    /// Run it, and every later call of this tool in this session.
    Session,
    /// Run it, and later calls of this tool in this vault for good; `with_path`: only on this
    /// call's path.
    Always { with_path: bool },
    /// Refuse it, with an optional reason for the model.
    Deny { reason: Option<String> },
}

/// Who changed a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// The person, in vaultchat's editor.
    User,
    /// The agent, or an MCP client through vaultchat's tools.
    Agent,
    /// Another program, seen by the watcher.
    External,
}

/// A recorded revision (without the stored text, which `Store::revision_text` returns).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Revision {
    pub id: i64,
    pub path: String,
    pub at_unix_ms: i64,
    pub actor: Actor,
    pub tool: Option<String>,
    pub added: u64,
    pub removed: u64,
    pub before_rev: Option<String>,
    pub after_rev: Option<String>,
}

/// A session with its counts, for `vaultchat sessions` and the session picker.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub vault_id: String,
    pub title: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Unix milliseconds.
    pub created_ms: i64,
    /// Unix milliseconds of the last message (the creation time before any).
    pub updated_ms: i64,
    /// How many messages the session holds.
    pub messages: u64,
    /// The tokens of every response in the session.
    pub usage: TokenTotals,
    /// The session this one continues (`/continue-new`, `ask --continue-new`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
}

/// Summed token counts over a set of responses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TokenTotals {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// How many responses the sums cover.
    pub responses: u64,
    /// How many of those responses have estimated counts (the provider reported none).
    pub estimated_responses: u64,
}

/// The usage of one calendar day (UTC).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DayUsage {
    /// `YYYY-MM-DD`, UTC.
    pub day: String,
    pub totals: TokenTotals,
    /// Per `provider/model`, sorted by that name.
    pub by_model: Vec<(String, TokenTotals)>,
}

/// Where a model's price came from (`config` owns the prices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum PriceSource {
    /// `[prices.MODEL]` in the config.
    Config,
    /// The built-in table of the providers' list prices, of the date `config::BUILT_IN_AS_OF`.
    BuiltIn,
}

/// An estimated cost of some usage, and what each model in it was priced by (`store` adds it
/// up).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CostEstimate {
    /// Dollars, over the models that have a price.
    pub usd: f64,
    /// Every model with usage (`provider/model`, sorted) and where its price came from; `None`:
    /// it has no price, and its tokens are not in `usd`.
    pub models: Vec<(String, Option<PriceSource>)>,
}

impl CostEstimate {
    /// Some model had a price, so `usd` means something.
    pub fn priced_any(&self) -> bool {
        self.models.iter().any(|(_, source)| source.is_some())
    }

    /// Every model had a price: `usd` is the whole cost.
    pub fn complete(&self) -> bool {
        self.models.iter().all(|(_, source)| source.is_some())
    }

    /// The models priced by `source` (`None`: the unpriced ones), without their provider.
    pub fn models_by(&self, source: Option<PriceSource>) -> Vec<&str> {
        self.models
            .iter()
            .filter(|(_, s)| *s == source)
            .map(|(m, _)| m.split_once('/').map_or(m.as_str(), |(_, name)| name))
            .collect()
    }
}
