//! Whether the vault's commands are offered: only while the person trusts the vault's
//! `.vaultchat/` tree, for exactly the bytes it holds ([`crate::mcp::plugins`]: the trust that
//! `vaultchat trust` records covers the whole tree, commands and `hooks.toml` included).

use super::load::{Loaded, load_vault};
use crate::mcp::plugins::covered::{Covered, describe};
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
/// why. The files are read once, the tree hashed once, the database opened once (each `/` asks);
/// each file offered must be the very bytes the trust covers, so a file changed between its
/// read and the hash is not offered under a trust given for other bytes.
pub fn vault_commands(vault: &Vault, database: &Path) -> VaultCommands {
    #[cfg(test)]
    steps::count(steps::READ);
    let loaded = load_vault(vault);
    if loaded.commands.is_empty() && loaded.problems.is_empty() {
        return VaultCommands::default();
    }
    let count = loaded.commands.len();
    let covered = match trusted_tree(vault, database) {
        Ok(covered) => covered,
        Err(why) => {
            return withheld(match count {
                0 => format!("the vault's commands are {why}"),
                1 => format!("the vault's 1 command is {why}"),
                _ => format!("the vault's {count} commands are {why}"),
            });
        }
    };
    let as_trusted = loaded
        .digests
        .iter()
        .all(|(file, digest)| covered.get(file) == Some(digest.as_str()));
    if !as_trusted {
        return withheld(
            "the vault's commands changed while they were read; run the command again".into(),
        );
    }
    VaultCommands {
        loaded,
        withheld: None,
    }
}

fn withheld(why: String) -> VaultCommands {
    VaultCommands {
        loaded: Loaded::default(),
        withheld: Some(why),
    }
}

/// The trusted `.vaultchat/` tree's covered set, or why it is not trusted (a phrase).
fn trusted_tree(vault: &Vault, database: &Path) -> Result<Covered, String> {
    #[cfg(test)]
    steps::count(steps::HASHED);
    trusted_covered(vault, database, "offered")
}

/// The covered set (each file's `sha256:HEX`) of the `.vaultchat/` tree as the person trusts it
/// now, or why it is not trusted: a phrase that starts with "not {verb}" (`offered` for
/// commands, `run` for hooks). A file read once and found in it with its own digest is a file
/// the trust covers, whatever changed before or after.
pub fn trusted_covered(vault: &Vault, database: &Path, verb: &str) -> Result<Covered, String> {
    trusted_plugins(vault, database, verb).map(|plugins| plugins.covered)
}

/// The vault's plugins file and covered set when the person trusts them as they are now.
fn trusted_plugins(vault: &Vault, database: &Path, verb: &str) -> Result<VaultPlugins, String> {
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
    #[cfg(test)]
    steps::count(steps::OPENED);
    let store = Store::open(database).map_err(|e| format!("not {verb}: {e}"))?;
    match plugins.trust(&store, &vault_id) {
        Ok(Trust::Trusted) => Ok(plugins),
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

/// How often one call did each costly step (the command files read, the `.vaultchat/` tree
/// hashed, the app database opened): counted on the test's thread, for the test that each is
/// done once per `/`.
#[cfg(test)]
pub(super) mod steps {
    use std::cell::Cell;
    thread_local! {
        pub static COUNTS: Cell<[usize; 3]> = const { Cell::new([0; 3]) };
    }
    pub fn count(step: usize) {
        COUNTS.with(|c| {
            let mut counts = c.get();
            counts[step] += 1;
            c.set(counts);
        });
    }
    pub const READ: usize = 0;
    pub const HASHED: usize = 1;
    pub const OPENED: usize = 2;
}
