//! The vault's `.vaultchat/hooks.toml`: read bounded through the vault's root handle (never
//! through a link), and used only while the person trusts the vault's `.vaultchat/` tree for the
//! bytes it holds now: the file read once must be in the trusted tree with its own digest, as
//! the vault's commands are.

use crate::commands::trusted_covered;
use crate::config::hooks::HooksConfig;
use crate::config::own_files;
use crate::mcp::plugins::HOOKS_FILE;
use crate::mcp::plugins::covered::sha256_hex;
use crate::vault::Vault;
use crate::vault::contained::ContainedError;
use std::path::Path;

/// The largest hooks file read (a few hooks are a few hundred bytes).
pub const MAX_HOOKS_FILE_BYTES: u64 = 64 * 1024;

/// The vault's hooks as they may be run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VaultHooks {
    /// Empty unless the file is there, trusted and valid.
    pub hooks: HooksConfig,
    /// Why the vault's hooks file is not used, when there is one: not trusted, changed, invalid.
    pub withheld: Option<String>,
}

/// The vault's hooks when its `.vaultchat/` tree is trusted as it is now; otherwise none, and why.
pub fn vault_hooks(vault: &Vault, database: &Path) -> VaultHooks {
    let text = match read_text(vault) {
        Ok(None) => return VaultHooks::default(),
        Ok(Some(text)) => text,
        Err(why) => return withheld(why),
    };
    // Read once, then held against the trust: run only when the trusted tree holds these very
    // bytes (one hash of the tree, one database open per event).
    let covered = match trusted_covered(vault, database, "run") {
        Ok(covered) => covered,
        Err(why) => return withheld(format!("the vault's hooks ({HOOKS_FILE}) are {why}")),
    };
    let digest = format!("sha256:{}", sha256_hex(text.as_bytes()));
    if covered.get(HOOKS_FILE) != Some(digest.as_str()) {
        return withheld(changed_meanwhile());
    }
    match HooksConfig::parse_vault_file(&text) {
        Ok(hooks) => VaultHooks {
            hooks,
            withheld: None,
        },
        Err(why) => withheld(format!(
            "the vault's hooks are not run: {HOOKS_FILE} {}",
            crate::quote::terminal(&why)
        )),
    }
}

fn changed_meanwhile() -> String {
    format!(
        "the vault's hooks ({HOOKS_FILE}) changed while they were read; they run from the next event"
    )
}

fn withheld(why: String) -> VaultHooks {
    VaultHooks {
        hooks: HooksConfig::default(),
        withheld: Some(why),
    }
}

/// The file's text as it is now, whatever the trust (also for `vaultchat trust` to show); `None`
/// when the vault has none.
pub fn read_text(vault: &Vault) -> Result<Option<String>, String> {
    let (folder_name, file_name) = HOOKS_FILE.split_once('/').unwrap_or(("", HOOKS_FILE));
    let cannot =
        |e: &dyn std::fmt::Display| format!("the vault's {HOOKS_FILE} cannot be read: {e}");
    let folder = match vault.handle().folder(&[folder_name], false, folder_name) {
        Ok(folder) => folder,
        Err(ContainedError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(&e)),
    };
    let file = match folder.open_file(file_name, HOOKS_FILE) {
        Ok(file) => file,
        Err(ContainedError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(&e)),
    };
    let (bytes, more) =
        own_files::read_at_most(file, MAX_HOOKS_FILE_BYTES).map_err(|e| cannot(&e))?;
    if more {
        return Err(format!(
            "the vault's {HOOKS_FILE} is larger than {MAX_HOOKS_FILE_BYTES} bytes; it is not read"
        ));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("the vault's {HOOKS_FILE} is not UTF-8 text; it is not read"))
}
