//! Integration tests of the agent and its edges: `vaultchat ask` end to end, the agent loop driven
//! through `Op`/`AgentEvent`, the fake LLM provider the tests use (its own self-test), and the MCP
//! client against real servers.
//!
//! One binary for all of them, so a change to the crate is linked once per binary, not once per
//! file (docs/testing.md). Each file in `tests/agent/` is a module of it, named with `#[path]` because
//! a crate root looks for its modules beside itself; `tests/common/` is shared by every binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "agent/agent_ask.rs"]
mod agent_ask;
#[path = "agent/agent_loop.rs"]
mod agent_loop;
#[path = "agent/agent_thinking.rs"]
mod agent_thinking;
#[path = "agent/attachment_bounds.rs"]
mod attachment_bounds;
#[path = "agent/commands_ask.rs"]
mod commands_ask;
#[path = "agent/fake_llm_server.rs"]
mod fake_llm_server;
#[path = "agent/hooks_ask.rs"]
mod hooks_ask;
#[path = "agent/local_servers.rs"]
mod local_servers;
#[path = "agent/long_session.rs"]
mod long_session;
#[path = "agent/mcp_client.rs"]
mod mcp_client;
#[path = "agent/mcp_prompt_prefill.rs"]
mod mcp_prompt_prefill;
#[path = "agent/mcp_prompts.rs"]
mod mcp_prompts;
#[path = "agent/models_doctor.rs"]
mod models_doctor;
#[path = "agent/move_note_ask.rs"]
mod move_note_ask;
#[path = "agent/plugin_trust_covers.rs"]
mod plugin_trust_covers;
#[path = "agent/real_servers.rs"]
mod real_servers;
#[path = "agent/redirects.rs"]
mod redirects;
#[path = "agent/session_vaults.rs"]
mod session_vaults;
#[path = "agent/usage_estimates.rs"]
mod usage_estimates;
#[path = "agent/usage_prices.rs"]
mod usage_prices;
#[path = "agent/vault_plugins.rs"]
mod vault_plugins;
