//! Whether the vault's commands are offered: only while the person trusts the vault's
//! `.vaultchat/` tree, for exactly the bytes it holds ([`crate::mcp::plugins`]: the trust that
//! `vaultchat trust` records covers the whole tree, commands and `hooks.toml` included).

use super::load::{Loaded, load_vault};
use crate::mcp::plugins::covered::describe;
use crate::mcp::plugins::{Trust, VaultPlugins};
use crate::store::Store;
use crate::vault::Vault;
use std::path::Path;

/// The vault's commands as they may be offered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VaultCommands {
    /// Empty unless trusted.
    pub loaded: Loaded,
    /// Why the vault's commands are not offered, when it has some.
    pub withheld: Option<String>,
}

/// The vault's commands when its `.vaultchat/` tree is trusted as it is now; otherwise none, and
/// why. The trust is read before and after the files are, so a file changed meanwhile is not
/// offered under a trust given for other bytes.
pub fn vault_commands(vault: &Vault, database: &Path) -> VaultCommands {
    let first = load_vault(vault);
    if first.commands.is_empty() && first.problems.is_empty() {
        return VaultCommands::default();
    }
    let count = first.commands.len();
    let before = match trusted_digest(vault, database, "offered") {
        Ok(digest) => digest,
        Err(why) => {
            return withheld(format!(
                "the vault's {count} command{} {why}",
                if count == 1 { " is" } else { "s are" }
            ));
        }
    };
    let loaded = load_vault(vault);
    match trusted_digest(vault, database, "offered") {
        Ok(after) if after == before => VaultCommands {
            loaded,
            withheld: None,
        },
        Ok(_) => withheld(
            "the vault's commands changed while they were read; run the command again".into(),
        ),
        Err(why) => withheld(format!("the vault's commands are {why}")),
    }
}

fn withheld(why: String) -> VaultCommands {
    VaultCommands {
        loaded: Loaded::default(),
        withheld: Some(why),
    }
}

/// The digest of the trusted `.vaultchat/` tree, or why it is not trusted: a phrase that starts
/// with "not {verb}" (`offered` for commands, `run` for hooks).
pub fn trusted_digest(vault: &Vault, database: &Path, verb: &str) -> Result<String, String> {
    let plugins = match VaultPlugins::load(vault) {
        Ok(Some(plugins)) => plugins,
        Ok(None) => {
            return Err(format!(
                "not {verb}: the vault's .vaultchat/ folder is gone"
            ));
        }
        Err(e) => return Err(format!("not {verb}: {e}")),
    };
    let vault_id = crate::index::vault_id(vault);
    let store = Store::open(database).map_err(|e| format!("not {verb}: {e}"))?;
    match plugins.trust(&store, &vault_id) {
        Ok(Trust::Trusted) => Ok(plugins.sha256),
        Ok(Trust::Declined | Trust::Unanswered) => {
            let changes = plugins
                .changes_since_trusted(&store, &vault_id)
                .unwrap_or_default();
            if changes.is_empty() {
                Err(format!(
                    "not {verb} until you trust the vault's .vaultchat/ folder: run `vaultchat trust` to see what it holds and trust it"
                ))
            } else {
                Err(format!(
                    "not {verb}: the vault's .vaultchat/ folder changed since you trusted it ({}); `vaultchat trust` shows it and trusts it again",
                    describe(&changes)
                ))
            }
        }
        Err(e) => Err(format!("not {verb}: {e}")),
    }
}
