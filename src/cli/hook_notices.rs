//! The hooks of a command-line run (`ask`, `daily`, `mcp`, `sessions export`): started on the command's runtime,
//! their notices on stderr, escaped (they quote a hook's output).

use super::Context;
use crate::hooks::{self, Finished, Hooks};
use crate::vault::Vault;
use std::sync::Arc;
use std::time::Duration;

/// How long a command waits at its end for the hooks still queued (each is also killed at its
/// own timeout).
pub const HOOKS_AT_EXIT: Duration = Duration::from_secs(30);

/// The person's and the trusted vault's hooks for `vault`, run on `runtime`.
pub fn hooks_on_stderr(
    ctx: &Context,
    runtime: &tokio::runtime::Runtime,
    vault: &Vault,
) -> (Hooks, Finished) {
    let _entered = runtime.enter();
    hooks::start(
        hooks::Setup {
            personal: ctx.config.hooks.clone(),
            vault: vault.clone(),
            database: ctx.paths.database_file(),
        },
        Arc::new(|notice: String| {
            eprintln!("vaultchat: {}", crate::quote::terminal_text(&notice));
        }),
    )
}
