//! What the app shows of the tools: each tool's spec (its name, what it does, its input schema,
//! its MCP annotations and its tier), and the editor's state as the session tools see it. The
//! tools themselves, the registry and the annotation presets stay in `tools`, which re-exports
//! these types.

use serde::Serialize;
use serde_json::Value;
use std::ops::Range;

/// Where a tool comes from (docs/tools.md: session, workspace, plugin).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Acts on the note open in the editor; never served over MCP.
    Session,
    /// Works on the whole vault; served in-process and over MCP.
    Workspace,
    /// From an MCP server the vault or the person configured.
    Plugin,
}

/// MCP tool annotations: hints for clients and for the permission layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    pub read_only_hint: bool,
    pub destructive_hint: bool,
    pub idempotent_hint: bool,
    pub open_world_hint: bool,
}

/// Everything about a tool except how to run it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub title: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    pub annotations: Annotations,
    pub tier: Tier,
}

/// The editor's state as the tools see it. Offsets are Unicode scalar (char) offsets, end
/// exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorState {
    /// The whole text of the open note.
    pub text: String,
    /// The selected range; `None` (or an empty range) when nothing is selected.
    pub selection: Option<Range<usize>>,
    /// The cursor; an anchor found several times resolves to the match nearest it.
    pub cursor: usize,
}
