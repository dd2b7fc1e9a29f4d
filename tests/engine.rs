//! Integration tests of everything below the agent: the vault (paths, note format, crash and
//! write safety), the index and search (CLI and library), the workspace tools, the store, the MCP
//! server on stdio, and the module boundaries of the source tree.
//!
//! One binary for all of them, so a change to the crate is linked once per binary, not once per
//! file (docs/testing.md). Each file in `tests/engine/` is a module of it, named with `#[path]` because
//! a crate root looks for its modules beside itself; `tests/common/` is shared by every binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "engine/cli_search.rs"]
mod cli_search;
#[path = "engine/crash_safety.rs"]
mod crash_safety;
#[path = "engine/daily_notes.rs"]
mod daily_notes;
#[path = "engine/edit_robustness.rs"]
mod edit_robustness;
#[path = "engine/index_crash.rs"]
mod index_crash;
#[path = "engine/index_graph_file.rs"]
mod index_graph_file;
#[path = "engine/index_sync.rs"]
mod index_sync;
#[path = "engine/link_graph.rs"]
mod link_graph;
#[path = "engine/mcp_input_bounds.rs"]
mod mcp_input_bounds;
#[path = "engine/mcp_startup.rs"]
mod mcp_startup;
#[path = "engine/mcp_stdio_errors.rs"]
mod mcp_stdio_errors;
#[path = "engine/module_boundaries.rs"]
mod module_boundaries;
#[path = "engine/move_note.rs"]
mod move_note;
#[path = "engine/note_format.rs"]
mod note_format;
#[path = "engine/semantic_search.rs"]
mod semantic_search;
#[path = "engine/tasks.rs"]
mod tasks;
#[path = "engine/token_accuracy.rs"]
mod token_accuracy;
#[path = "engine/tools_workspace.rs"]
mod tools_workspace;
#[path = "engine/vault_hooks.rs"]
mod vault_hooks;
#[path = "engine/vault_paths.rs"]
mod vault_paths;
#[path = "engine/watch.rs"]
mod watch;
#[path = "engine/workspace_user_notes.rs"]
mod workspace_user_notes;
#[path = "engine/write_safety.rs"]
mod write_safety;
