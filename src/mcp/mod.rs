//! MCP: the vault's workspace tools served to other programs (`vaultchat mcp`).
//!
//! The server is a thin adapter over [`crate::tools::Registry`]: it lists the registry's tools
//! and forwards calls. rmcp speaks both protocol eras (the 2025-11-25 `initialize` handshake and
//! the stateless 2026-07-28 one). Nothing but JSON-RPC goes to stdout; logs go to the log file.

mod http;
mod server;

pub use http::{HttpAuth, generate_token, serve_http};
pub use server::{VaultServer, serve_stdio};
