//! What the app shows of MCP: how each MCP server is doing, and how the chat draws a vault
//! plugin's tool results. Starting the servers and reading `.vaultchat/plugins.toml` stay in
//! `mcp`, which re-exports these types.

use serde::Deserialize;

/// How one server is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerStatus {
    /// The server's name in the config.
    pub name: String,
    /// Where it stands.
    pub state: McpServerState,
}

/// The states of [`McpServerStatus`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerState {
    /// Still starting (only seen through `mcp::McpStartup::statuses`).
    Starting,
    /// Started; `tools` of its tools are offered.
    Running { tools: usize },
    /// Did not start; one sentence saying why.
    Failed { message: String },
    /// `enabled = false` in the config.
    Disabled,
    /// A vault plugin the person has not trusted (or whose file changed since): never started.
    NotTrusted,
}

/// How the chat draws one tool's results (`[plugins.NAME.render] tool = "table"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Render {
    /// The text is Markdown.
    Markdown,
    /// A JSON array of objects (or one object) as a table.
    Table,
    /// A JSON array, or the lines of the text, as a bulleted list.
    List,
    /// The text (JSON pretty-printed) as a code block.
    Code,
}
