//! vaultchat: an LLM agent beside your Markdown notes.
//!
//! The library holds every part of the program so that integration tests can reach them; `main.rs`
//! only calls [`cli::run`]. Which module may import which is drawn once, in docs/architecture.md's
//! module map, and checked as drawn by `tests/engine/module_boundaries.rs`.

pub mod agent;
pub mod attach;
pub mod cli;
pub mod commands;
pub mod config;
pub mod hooks;
pub mod host;
pub mod id;
pub mod index;
pub mod llm;
pub mod mcp;
pub mod permission;
pub mod protocol;
pub mod quote;
pub mod store;
pub mod text;
pub mod time;
pub mod tools;
pub mod tui;
pub mod vault;
