//! The full-screen app and `ask --approve ask` end to end in a real terminal (tmux), keys typed as
//! a person types them, the note's bytes checked on disk.
//!
//! One binary for all of them, so a change to the crate is linked once per binary, not once per
//! file (docs/testing.md). Each file in `tests/app/` is a module of it, named with `#[path]` because
//! a crate root looks for its modules beside itself; `tests/common/` is shared by every binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "app/ask_terminal.rs"]
mod ask_terminal;
#[path = "app/host_command_lane.rs"]
mod host_command_lane;
#[path = "app/tui_backlinks.rs"]
mod tui_backlinks;
#[path = "app/tui_compaction.rs"]
mod tui_compaction;
#[path = "app/tui_daily.rs"]
mod tui_daily;
#[path = "app/tui_e2e.rs"]
mod tui_e2e;
#[path = "app/tui_e2e_prose.rs"]
mod tui_e2e_prose;
#[path = "app/tui_files_e2e.rs"]
mod tui_files_e2e;
#[path = "app/tui_hooks.rs"]
mod tui_hooks;
#[path = "app/tui_image_paste.rs"]
mod tui_image_paste;
#[path = "app/tui_local_servers.rs"]
mod tui_local_servers;
#[path = "app/tui_mcp_prompts.rs"]
mod tui_mcp_prompts;
#[path = "app/tui_models.rs"]
mod tui_models;
#[path = "app/tui_move_e2e.rs"]
mod tui_move_e2e;
#[path = "app/tui_plugins.rs"]
mod tui_plugins;
#[path = "app/tui_real_servers.rs"]
mod tui_real_servers;
#[path = "app/tui_save_chat.rs"]
mod tui_save_chat;
#[path = "app/tui_saving.rs"]
mod tui_saving;
#[path = "app/tui_slash_commands.rs"]
mod tui_slash_commands;
#[path = "app/tui_thinking.rs"]
mod tui_thinking;
#[path = "app/tui_usage_estimates.rs"]
mod tui_usage_estimates;
#[path = "app/ui_loop.rs"]
mod ui_loop;
