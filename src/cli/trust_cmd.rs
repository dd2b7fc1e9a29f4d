//! `vaultchat trust [--revoke]`: show what the vault's plugins would run and trust them (for the
//! exact content of every file the trust covers), or withdraw the trust. Everything shown from the
//! vault goes through [`quote`]: one argument per row, quoted, hidden characters escaped.

use super::outln;
use super::{Context, Failure};
use crate::mcp::plugins::{
    COMMANDS_DIR, HOOKS_FILE, PLUGINS_FILE, RECHECK_EVERY, VaultPlugins, spec_rows,
};
use crate::quote;
use crate::store::{PluginAnswer, Store};
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Withdraw the trust: the vault's plugins are no longer started.
    #[arg(long)]
    pub revoke: bool,
}

pub fn run(ctx: &Context, args: &TrustArgs) -> Result<ExitCode, Failure> {
    let vault = ctx.vault()?;
    let vault_id = crate::index::vault_id(&vault);
    let store = Store::open(&ctx.paths.database_file())?;
    let root = quote::terminal(&vault.root().display().to_string()).into_owned();
    if args.revoke {
        if store.revoke_plugin_trust(&vault_id)? {
            outln!(
                "The plugins of {root} are no longer trusted; they are not started from now on, and running ones (in the app or `vaultchat mcp`) stop within {} s.",
                RECHECK_EVERY.as_secs().max(1)
            );
        } else {
            outln!("The plugins of {root} were not trusted; nothing changed.");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(plugins) = VaultPlugins::load(&vault)? else {
        outln!(
            "{root} has no {PLUGINS_FILE}, {COMMANDS_DIR}/ or {HOOKS_FILE}; there is nothing to trust."
        );
        return Ok(ExitCode::SUCCESS);
    };
    let changes = plugins.changes_since_trusted(&store, &vault_id)?;
    if !changes.is_empty() {
        outln!("Changed since you last trusted it:");
        for change in &changes {
            outln!("    {change}");
        }
    }
    if plugins.entries.is_empty() {
        outln!(
            "{root} declares no plugins; its command files ({COMMANDS_DIR}/) and hooks ({HOOKS_FILE}) are offered only once trusted (a hook runs as you)."
        );
    } else {
        outln!(
            "{} declares {} plugin{}. Trusting it lets vaultchat run, as you (each word quoted, hidden characters shown as \\u{{…}}):",
            quote::terminal(&plugins.file.display().to_string()),
            plugins.entries.len(),
            if plugins.entries.len() == 1 { "" } else { "s" }
        );
    }
    for spec in plugins.specs(true) {
        let off = if spec.enabled {
            ""
        } else {
            " (enabled = false: not started)"
        };
        outln!("  {}:{off}", quote::terminal(&spec.name));
        for row in spec_rows(&spec) {
            outln!("      {row}");
        }
    }
    show_vault_hooks(&vault)?;
    let count = plugins.covered.len();
    outln!(
        "The trust covers {count} file{} of the vault; a change to any of them withdraws it:",
        if count == 1 { "" } else { "s" }
    );
    for path in plugins.covered.paths().take(SHOWN_FILES) {
        outln!("    {}", quote::terminal(path));
    }
    if count > SHOWN_FILES {
        outln!("    … and {} more", count - SHOWN_FILES);
    }
    plugins.answer(&store, &vault_id, PluginAnswer::Trusted)?;
    outln!(
        "Trusted. Their tools join the chat and `vaultchat mcp`, and the vault's commands and hooks are offered; any change to those files withdraws the trust (running plugins are stopped) until you run `vaultchat trust` again."
    );
    Ok(ExitCode::SUCCESS)
}

/// How many covered files are listed by name.
const SHOWN_FILES: usize = 40;

/// What the vault's hooks file would run, so that the trust is given knowing it (each command
/// quoted as it would run: a shell line for `sh -c`, or a program and its arguments).
fn show_vault_hooks(vault: &crate::vault::Vault) -> Result<(), Failure> {
    let text = match crate::hooks::vault_file::read_text(vault) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(()),
        Err(why) => {
            outln!("{}", quote::terminal(&why));
            return Ok(());
        }
    };
    let hooks = match crate::config::hooks::HooksConfig::parse_vault_file(&text) {
        Ok(hooks) => hooks,
        Err(why) => {
            outln!(
                "{HOOKS_FILE} cannot be used as it is ({}); trusting it runs nothing from it until it is mended.",
                quote::terminal(&why)
            );
            return Ok(());
        }
    };
    outln!("{HOOKS_FILE} runs, as you, in the vault's folder:");
    for (event, list) in hooks.by_event() {
        for hook in list {
            let command = match &hook.command {
                crate::config::hooks::HookCommand::Shell(line) => {
                    format!("sh -c {}", quote::terminal(&format!("{line:?}")))
                }
                crate::config::hooks::HookCommand::Argv(argv) => argv
                    .iter()
                    .map(|a| quote::terminal(&format!("{a:?}")).into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            outln!("  {event} (timeout {} s): {command}", hook.timeout_secs);
        }
    }
    Ok(())
}
