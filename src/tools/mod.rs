//! Tools: one interface for everything the agent (and MCP clients) can call.
//!
//! A tool has a name, a description a model can route on, a JSON Schema for its input (always with
//! `additionalProperties: false`), MCP annotations, and an async `call`. This module knows no
//! protocol: the MCP server and the agent both wrap the same [`Registry`].
//!
//! Errors come in two kinds. A [`ToolError::Invalid`] means the caller did something wrong (a bad
//! argument, a path outside the vault, a note that does not exist); its message says how to fix the
//! call, and protocols return it as a tool result with `isError`, so a model can retry. A
//! [`ToolError::Internal`] is vaultchat's own failure (a database error, a full disk).

mod args;
pub mod session;
pub mod workspace;

pub use args::{parse_args, schema_of};

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed, sendable future (tools are called from tokio tasks).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The names of the workspace tools, as `workspace::register` adds them: for checking permission
/// rules before a workspace is open (tests/tools_workspace.rs keeps the list equal to the
/// registry's).
pub const WORKSPACE_TOOL_NAMES: [&str; 27] = [
    "create_note",
    "create_notebook",
    "delete_note",
    "get_backlinks",
    "get_block_history",
    "get_block_settings",
    "get_connection",
    "get_environment_variables",
    "get_outgoing_links",
    "list_blocks_in_note",
    "list_connections",
    "list_environments",
    "list_notebooks",
    "list_notes",
    "list_orphan_notes",
    "list_tags",
    "list_tasks",
    "list_unresolved_links",
    "manage_tags",
    "move_note",
    "read_daily_note",
    "read_note",
    "search_notes",
    "semantic_search_notes",
    "toggle_task",
    "update_note",
    "write_daily_note",
];

/// Every tool vaultchat itself provides: the workspace tools and the session tools.
pub fn builtin_tool_names() -> Vec<&'static str> {
    WORKSPACE_TOOL_NAMES
        .iter()
        .chain(session::ALL.iter())
        .copied()
        .collect()
}

pub use crate::protocol::{Annotations, Tier, ToolSpec};

impl Annotations {
    /// Reads the vault and changes nothing.
    pub const READ_ONLY: Self = Self {
        read_only_hint: true,
        destructive_hint: false,
        idempotent_hint: true,
        open_world_hint: false,
    };
    /// Adds or changes content without destroying any (creating a note or a folder).
    pub const ADDITIVE: Self = Self {
        read_only_hint: false,
        destructive_hint: false,
        idempotent_hint: false,
        open_world_hint: false,
    };
    /// May replace or remove content.
    pub const DESTRUCTIVE: Self = Self {
        read_only_hint: false,
        destructive_hint: true,
        idempotent_hint: false,
        open_world_hint: false,
    };
}

/// What a successful call returns: text for a model or a person, and the same facts as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    pub structured: Value,
    /// Images for the model (an MCP server's screenshot or chart); the vault's tools return none.
    pub images: Vec<ToolImage>,
    /// The result exactly as the MCP server that ran the tool gave it (a vault plugin or a
    /// configured server), as JSON, which `vaultchat mcp` passes on unchanged rather than
    /// rebuilding it from `text` and `structured`; `None` for vaultchat's own tools.
    pub served: Option<Value>,
}

/// An image a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp` (what the providers accept).
    pub media_type: String,
    /// Base64 of the image bytes, without a `data:` prefix.
    pub data: String,
}

impl ToolOutput {
    /// Structured output whose text form is the same JSON, serialised compactly (MCP asks tools
    /// that return structured content to repeat it as text for older clients; compact JSON
    /// halves what a long note costs to send and parse).
    pub fn json(value: impl Serialize) -> Result<Self, ToolError> {
        let structured =
            serde_json::to_value(value).map_err(|e| ToolError::Internal(e.to_string()))?;
        let text =
            serde_json::to_string(&structured).map_err(|e| ToolError::Internal(e.to_string()))?;
        Ok(Self {
            text,
            structured,
            images: Vec::new(),
            served: None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The call was wrong; the message says how to make it right.
    #[error("{0}")]
    Invalid(String),
    /// vaultchat failed; the call may work later.
    #[error("internal error: {0}")]
    Internal(String),
}

/// A callable tool.
pub trait Tool: Send + Sync {
    fn spec(&self) -> &ToolSpec;
    fn call(&self, args: Value) -> BoxFuture<'_, Result<ToolOutput, ToolError>>;
    /// For a tool that writes to the vault: what the call would change, without changing
    /// anything (the agent shows it as a diff and applies it only when approved). `None` for
    /// tools that do not write through a plan.
    fn plan(&self, _args: Value) -> Option<BoxFuture<'_, Result<workspace::Plan, ToolError>>> {
        None
    }
}

/// The tools available in one process, by name.
#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a tool; a second tool with the same name replaces the first.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name.clone(), tool);
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// Every tool, sorted by name.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.values().map(|t| t.spec())
    }

    /// A registry with only the tools `keep` accepts (e.g. read-only tools for an MCP server
    /// started without `--allow-writes`).
    pub fn filtered(&self, keep: impl Fn(&ToolSpec) -> bool) -> Self {
        Self {
            tools: self
                .tools
                .iter()
                .filter(|(_, t)| keep(t.spec()))
                .map(|(n, t)| (n.clone(), Arc::clone(t)))
                .collect(),
        }
    }

    /// Call a tool by name. An unknown name is the caller's mistake, answered with the list of
    /// names that exist. A caller's error quotes at most [`crate::quote::MAX_QUOTED_CHARS`]
    /// characters of any argument it echoes ([`crate::quote::shorten_echoes`]).
    pub async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        match self.tools.get(name) {
            Some(tool) => tool.call(args).await.map_err(|e| match e {
                ToolError::Invalid(message) => {
                    ToolError::Invalid(crate::quote::shorten_echoes(&message).into_owned())
                }
                internal @ ToolError::Internal(_) => internal,
            }),
            None => Err(ToolError::Invalid(format!(
                "there is no tool named `{}`; available tools: {}",
                crate::quote::shorten(name),
                self.tools.keys().cloned().collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
