//! The MCP servers of one command: started for it and closed again, and the ones that did not
//! start named on stderr. `ask`, `tools` and `doctor` all start the person's servers and the
//! vault's plugins; they say the same thing about one that did not start.

use super::Failure;
use crate::mcp::{McpServerSpec, McpServerState, McpServerStatus, McpServers};

/// Start `specs` on a runtime of their own, hand them to `look`, and close them again: the
/// commands that only look at what the servers offer must leave none running. `None` when there
/// is no server to start (no runtime is built for nothing).
pub(super) fn with_started<T>(
    specs: Vec<McpServerSpec>,
    look: impl FnOnce(&McpServers) -> T,
) -> Result<Option<T>, Failure> {
    if specs.is_empty() {
        return Ok(None);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(Some(runtime.block_on(async {
        let servers = McpServers::start(specs).await;
        let seen = look(&servers);
        servers.shutdown().await;
        seen
    })))
}

/// Name on stderr each server that did not start (and why) and each vault plugin left out for
/// want of trust. It never fails the command: the others work with the servers there are.
pub(super) fn say_not_started(statuses: &[McpServerStatus]) {
    for status in statuses {
        match &status.state {
            McpServerState::Failed { message } => eprintln!(
                "vaultchat: the MCP server `{}` did not start: {}",
                crate::quote::terminal(&status.name),
                crate::quote::terminal_text(message)
            ),
            McpServerState::NotTrusted => eprintln!(
                "vaultchat: the vault plugin `{}` is not trusted and was not started; `vaultchat trust` lists what it runs and allows it",
                crate::quote::terminal(&status.name)
            ),
            McpServerState::Starting
            | McpServerState::Running { .. }
            | McpServerState::Disabled => {}
        }
    }
}
