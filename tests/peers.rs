//! `vaultchat mcp` against the official peers: the MCP conformance suite, the MCP Inspector and the
//! Python SDK (installed by scripts/install-test-deps into tests/peers/node_modules and
//! target/test-venv).
//!
//! One binary for all of them, so a change to the crate is linked once per binary, not once per
//! file (docs/testing.md). Each file in `tests/peers/*.rs` is a module of it, named with `#[path]` because
//! a crate root looks for its modules beside itself; `tests/common/` is shared by every binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "peers/mcp_conformance.rs"]
mod mcp_conformance;
#[path = "peers/mcp_inspector.rs"]
mod mcp_inspector;
#[path = "peers/mcp_python_sdk.rs"]
mod mcp_python_sdk;
#[path = "peers/mcp_resources.rs"]
mod mcp_resources;
