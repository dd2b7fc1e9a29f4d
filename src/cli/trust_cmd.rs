//! `vaultchat trust [--revoke]`: show what the vault's plugins would run and trust them (for the
//! file's exact content), or withdraw the trust.

use super::outln;
use super::{Context, Failure};
use crate::mcp::plugins::{PLUGINS_FILE, VaultPlugins};
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
    if args.revoke {
        if store.revoke_plugin_trust(&vault_id)? {
            outln!(
                "The plugins of {} are no longer trusted; they are not started from now on.",
                vault.root().display()
            );
        } else {
            outln!(
                "The plugins of {} were not trusted; nothing changed.",
                vault.root().display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(plugins) = VaultPlugins::load(&vault)? else {
        outln!(
            "{} has no {PLUGINS_FILE}; there is nothing to trust.",
            vault.root().display()
        );
        return Ok(ExitCode::SUCCESS);
    };
    outln!(
        "{} declares {} plugin{}. Trusting it lets vaultchat run, as you:",
        plugins.file.display(),
        plugins.entries.len(),
        if plugins.entries.len() == 1 { "" } else { "s" }
    );
    for spec in plugins.specs(true) {
        let off = if spec.enabled {
            ""
        } else {
            "  (enabled = false: not started)"
        };
        outln!(
            "  {}: {}{off}",
            spec.name,
            shell_line(&spec.command, &spec.args)
        );
        if let Some(cwd) = &spec.cwd {
            outln!("      in {}", cwd.display());
        }
        if !spec.env.is_empty() {
            let names: Vec<&str> = spec.env.keys().map(String::as_str).collect();
            outln!("      with {}", names.join(", "));
        }
    }
    plugins.answer(&store, &vault_id, PluginAnswer::Trusted)?;
    outln!(
        "Trusted. Their tools join the chat and `vaultchat mcp`; any change to {PLUGINS_FILE} withdraws the trust until you run `vaultchat trust` again."
    );
    Ok(ExitCode::SUCCESS)
}

/// The command and its arguments as one line a shell would read back the same: an argument with
/// blanks or quotes is single-quoted (so nothing is hidden by a clever argument).
fn shell_line(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                word.to_string()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_quote_what_a_shell_would_split() {
        let args = [
            "-c".to_string(),
            "print('hi')\nx".to_string(),
            "a.py".to_string(),
        ];
        assert_eq!(
            shell_line("python3", &args),
            "python3 -c 'print('\\''hi'\\'')\nx' a.py"
        );
        assert_eq!(
            shell_line("/usr/bin/srv", &[String::new()]),
            "/usr/bin/srv ''"
        );
    }
}
