//! MCP in both directions.
//!
//! The server: the vault's workspace tools served to other programs (`vaultchat mcp`), a thin
//! adapter over [`crate::tools::Registry`] that lists the registry's tools and forwards calls;
//! beside them the notes as resources (`vault://note/<path>`, with change notifications from the
//! live index's watcher) and prompts over them (`resources.rs`, `note_uri.rs`, `note_events.rs`,
//! `prompts.rs`, `note_handlers.rs`).
//! rmcp speaks both protocol eras (the 2025-11-25 `initialize` handshake and the stateless
//! 2026-07-28 one). Nothing but JSON-RPC goes to stdout; logs go to the log file.
//!
//! The client: the person's own MCP servers (`[mcp.servers.NAME]`), started as child processes,
//! whose tools implement [`crate::tools::Tool`] for the chat (never served back out).

pub mod client;
mod http;
mod note_events;
mod note_handlers;
mod note_uri;
pub mod plugins;
mod prompts;
mod request_check;
mod resources;
mod server;
mod stdio_filter;

pub use client::{
    McpServerSpec, McpServerState, McpServerStatus, McpServers, McpStartup, ServerOrigin,
};
pub use http::{HttpAuth, generate_token, serve_http};
pub use note_events::NoteEvents;
pub use resources::NoteCatalog;
pub use server::{VaultServer, serve_stdio};
