//! Vault plugins, the third tool tier: MCP servers a vault declares for itself in
//! `.vaultchat/plugins.toml`. A vault is someone else's folder as often as not (cloned, synced,
//! unzipped), so nothing in that file runs until the person trusts it. Trust is recorded per vault
//! for the exact content of everything the plugins would run or load from inside the vault (the
//! file, the `.vaultchat/` tree, the paths their commands name: [`covered`]), and any change to
//! any of it withdraws the trust, in running processes too: a plugin whose files changed, or whose
//! trust was revoked, is stopped ([`TrustedFile::check`]).
//!
//! Once trusted, plugins are started like the person's own `[mcp.servers.NAME]` (the same
//! [`McpServers`](super::McpServers), the same permission cascade), their tools named
//! `NAME__tool`, and `vaultchat mcp` serves them too.

pub mod covered;
mod file;

pub use covered::{Change, CoverError, Covered};
pub use file::{PluginEntry, Render};

use super::client::{McpServerSpec, ServerOrigin, qualified_name};
use crate::config::Config;
use crate::quote;
use crate::store::{PluginAnswer, Store, StoreError};
use crate::vault::Vault;
use crate::vault::contained::ContainedError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where a vault keeps its plugins, relative to its root.
pub const PLUGINS_FILE: &str = ".vaultchat/plugins.toml";

/// Where a vault keeps its command files, covered by the same trust (crate::commands).
pub const COMMANDS_DIR: &str = ".vaultchat/commands";

/// Where a vault keeps its hooks, covered by the same trust.
pub const HOOKS_FILE: &str = ".vaultchat/hooks.toml";

/// Whether the vault has command files or hooks (a trust to give without a plugins file); a
/// link in their place counts too, so the trust question shows it rather than hiding it.
fn holds_other_covered_files(vault: &Vault) -> bool {
    let Ok(folder) = vault.handle().folder(&[".vaultchat"], false, ".vaultchat") else {
        return false;
    };
    ["commands", "hooks.toml"].iter().any(|name| {
        !matches!(
            folder.entry(name),
            Ok(crate::vault::contained::Entry::Missing) | Err(_)
        )
    })
}

/// The largest plugins file read (real ones are a few lines).
const MAX_PLUGINS_BYTES: usize = 1024 * 1024;

/// Why a vault's plugins cannot be read; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum PluginsError {
    #[error(
        "{0} is a symbolic link, or inside one; vaultchat reads the vault's own files only: replace it with a regular file"
    )]
    Link(PathBuf),
    #[error("cannot read {path}: {source}")]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is larger than 1 MB; a plugins file is a few lines")]
    TooLarge(PathBuf),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Cover(#[from] CoverError),
    #[error("cannot read or record the trust of the vault's plugins: {0}")]
    Store(#[from] StoreError),
}

/// The plugins file of a vault, read and parsed.
#[derive(Debug, Clone)]
pub struct VaultPlugins {
    /// The file's absolute path (for messages).
    pub file: PathBuf,
    /// The SHA-256 (hex) of everything the trust covers ([`Covered::digest`]): what trust is
    /// recorded for.
    pub sha256: String,
    /// What the trust covers: the file itself and every file the plugins could run.
    pub covered: Covered,
    /// The plugins, by name.
    pub entries: Vec<PluginEntry>,
    vault_root: PathBuf,
}

/// What a running plugin was trusted with. Before it starts (or restarts), before each call of
/// its tools, and every [`RECHECK_EVERY`] while it runs, the covered files are hashed again
/// ([`TrustedFile::check`]): any change, or a revoked trust, withdraws it at once, in a running
/// app or `vaultchat mcp` too, and the plugin's process is stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedFile {
    /// The vault whose plugins they are.
    pub vault_root: PathBuf,
    /// The SHA-256 (hex) of the covered set that was trusted.
    pub sha256: String,
    /// The covered set that was trusted (to name what changed).
    pub covered: Covered,
    /// Where the trust is recorded (the app database) and the vault's id there: a revoked trust
    /// stops the plugin too. `None` only where a test builds the trust by hand.
    pub record: Option<(PathBuf, String)>,
}

/// How often a running plugin's covered files are checked between calls.
pub const RECHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Why a running plugin's trust no longer holds; the message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Withdrawn {
    #[error(
        "the vault's plugin files changed since they were trusted ({0}), so the plugin is stopped; `vaultchat trust` shows what it would run and trusts it again"
    )]
    Changed(String),
    #[error(
        "the vault's plugins cannot be checked against their trust ({0}), so the plugin is stopped"
    )]
    Unreadable(String),
    #[error(
        "the trust in the vault's plugins was revoked (`vaultchat trust --revoke`), so the plugin is stopped"
    )]
    Revoked,
}

impl TrustedFile {
    /// Whether everything the trust covers still holds exactly what was trusted, and the trust
    /// is still recorded. Blocking file and database I/O: call it off the async runtime.
    pub fn check(&self) -> Result<(), Withdrawn> {
        let vault =
            Vault::open(&self.vault_root).map_err(|e| Withdrawn::Unreadable(e.to_string()))?;
        let now = match VaultPlugins::load(&vault) {
            Ok(Some(plugins)) => plugins,
            Ok(None) => {
                return Err(Withdrawn::Changed(format!("{PLUGINS_FILE} (removed)")));
            }
            Err(e) => return Err(Withdrawn::Unreadable(e.to_string())),
        };
        if now.sha256 != self.sha256 {
            let changes = now.covered.changes_since(&self.covered);
            return Err(Withdrawn::Changed(if changes.is_empty() {
                "their content".to_string()
            } else {
                covered::describe(&changes)
            }));
        }
        if let Some((database, vault_id)) = &self.record {
            let store = Store::open(database).map_err(|e| Withdrawn::Unreadable(e.to_string()))?;
            match store.plugin_answer(vault_id, &self.sha256) {
                Ok(Some(PluginAnswer::Trusted)) => {}
                Ok(_) => return Err(Withdrawn::Revoked),
                Err(e) => return Err(Withdrawn::Unreadable(e.to_string())),
            }
        }
        Ok(())
    }

    /// [`TrustedFile::check`] as a yes or no.
    pub fn still_trusted(&self) -> bool {
        self.check().is_ok()
    }
}

/// Whether the person trusts the plugins file as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Trusted with exactly these bytes.
    Trusted,
    /// The person said "Not now" to exactly these bytes: listed as not trusted, not asked again.
    Declined,
    /// Never answered about these bytes (a new vault, or the file changed): ask.
    Unanswered,
}

impl VaultPlugins {
    /// Read `.vaultchat/plugins.toml` through the vault's root handle (never through a link).
    /// `None` when the vault has nothing the trust covers: no plugins file, no command files
    /// (`.vaultchat/commands/`) and no hooks (`.vaultchat/hooks.toml`). A vault with commands or
    /// hooks but no plugins file has no plugins, and still a trust to give (decisions §63).
    pub fn load(vault: &Vault) -> Result<Option<Self>, PluginsError> {
        let file = vault.root().join(PLUGINS_FILE);
        let bytes = match vault.handle().read(PLUGINS_FILE) {
            Ok(bytes) => Some(bytes),
            Err(ContainedError::LinkAppeared { .. }) => return Err(PluginsError::Link(file)),
            Err(ContainedError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                if !holds_other_covered_files(vault) {
                    return Ok(None);
                }
                None
            }
            Err(ContainedError::Io(source)) => {
                return Err(PluginsError::Unreadable { path: file, source });
            }
            Err(other @ (ContainedError::LockTimeout | ContainedError::NotAFolder { .. })) => {
                return Err(PluginsError::Unreadable {
                    path: file,
                    source: std::io::Error::other(other.to_string()),
                });
            }
        };
        let entries = match &bytes {
            Some(bytes) => {
                if bytes.len() > MAX_PLUGINS_BYTES {
                    return Err(PluginsError::TooLarge(file));
                }
                let text = std::str::from_utf8(bytes).map_err(|_| {
                    PluginsError::Invalid(format!("{} is not UTF-8 text", file.display()))
                })?;
                file::parse(text, &file).map_err(PluginsError::Invalid)?
            }
            None => Vec::new(),
        };
        let mut plugins = Self {
            sha256: String::new(),
            covered: Covered::default(),
            file,
            entries,
            vault_root: vault.root().to_path_buf(),
        };
        plugins.covered =
            covered::collect(vault, PLUGINS_FILE, bytes.as_deref(), &plugins.specs(false))?;
        plugins.sha256 = plugins.covered.digest();
        Ok(Some(plugins))
    }

    /// What changed since the person last trusted this vault's plugins, when they did and the
    /// covered files are no longer what they trusted (empty otherwise).
    pub fn changes_since_trusted(
        &self,
        store: &Store,
        vault_id: &str,
    ) -> Result<Vec<Change>, PluginsError> {
        Ok(match store.plugin_record(vault_id)? {
            Some(record)
                if record.answer == PluginAnswer::Trusted && record.sha256 != self.sha256 =>
            {
                let before = Covered::from_text(&record.covered);
                if before.is_empty() {
                    // A trust recorded before covered sets were kept: only the file was covered.
                    vec![Change::Added("(every file but the plugins file: a trust from an earlier vaultchat covered the plugins file only)".to_string())]
                } else {
                    self.covered.changes_since(&before)
                }
            }
            _ => Vec::new(),
        })
    }

    /// What the person said about this content of the file.
    pub fn trust(&self, store: &Store, vault_id: &str) -> Result<Trust, PluginsError> {
        Ok(match store.plugin_answer(vault_id, &self.sha256)? {
            Some(PluginAnswer::Trusted) => Trust::Trusted,
            Some(PluginAnswer::Declined) => Trust::Declined,
            None => Trust::Unanswered,
        })
    }

    /// Record the person's answer for this content of the file.
    pub fn answer(
        &self,
        store: &Store,
        vault_id: &str,
        answer: PluginAnswer,
    ) -> Result<(), PluginsError> {
        store.set_plugin_answer(
            vault_id,
            &self.sha256,
            &self.covered.to_text(),
            answer,
            crate::time::now_ms(),
        )?;
        Ok(())
    }

    /// Trust the vault's `.vaultchat/` tree as it is now, as `vaultchat trust` does (for tests).
    #[cfg(test)]
    pub fn trust_now(vault: &crate::vault::Vault, database: &Path) {
        #![allow(clippy::unwrap_used, clippy::expect_used)]
        let plugins = Self::load(vault)
            .unwrap()
            .expect("the vault has a .vaultchat/ tree");
        let store = Store::open(database).unwrap();
        plugins
            .answer(
                &store,
                &crate::index::vault_id(vault),
                PluginAnswer::Trusted,
            )
            .unwrap();
    }

    /// How to start each plugin: `${VAULT_PATH}` expanded, a relative command (one with a `/`)
    /// and a relative `cwd` taken from the vault root, and the vault root as the working folder
    /// when none is given (so relative arguments name files in the vault too).
    pub fn specs(&self, trusted: bool) -> Vec<McpServerSpec> {
        self.entries
            .iter()
            .map(|entry| {
                let mut spec =
                    McpServerSpec::from_config(&entry.name, &entry.server, &self.vault_root);
                if spec.command.contains('/') && Path::new(&spec.command).is_relative() {
                    spec.command = self.vault_root.join(&spec.command).display().to_string();
                }
                spec.cwd = Some(match spec.cwd {
                    Some(cwd) => self.vault_root.join(cwd),
                    None => self.vault_root.clone(),
                });
                spec.origin = ServerOrigin::Plugin { trusted };
                // Python would otherwise write `__pycache__/` into the covered folder on its first
                // import, withdrawing the trust by itself (a cache it finds there is covered).
                spec.env
                    .entry("PYTHONDONTWRITEBYTECODE".to_string())
                    .or_insert_with(|| "1".to_string());
                spec.trusted_file = Some(TrustedFile {
                    vault_root: self.vault_root.clone(),
                    sha256: self.sha256.clone(),
                    covered: self.covered.clone(),
                    record: None,
                });
                spec
            })
            .collect()
    }

    /// What each enabled plugin would run, as rows for the trust question: the command, each
    /// argument, each environment variable and the working folder on a row of its own, quoted and
    /// escaped ([`crate::quote::quoted`]), so no argument can hide another or draw a fake row.
    pub fn command_lines(&self) -> Vec<(String, Vec<String>)> {
        self.specs(false)
            .into_iter()
            .filter(|s| s.enabled)
            .map(|s| (quote::terminal(&s.name).into_owned(), spec_rows(&s)))
            .collect()
    }

    /// How each tool's results are drawn, by its chat name (`NAME__tool`).
    pub fn renders(&self) -> HashMap<String, Render> {
        self.entries
            .iter()
            .flat_map(|entry| {
                entry
                    .render
                    .iter()
                    .map(|(tool, render)| (qualified_name(&entry.name, tool), *render))
            })
            .collect()
    }
}

/// The servers of one run: the person's, then the vault's plugins (started only when trusted),
/// and what there is to say about the plugins.
#[derive(Debug, Clone, Default)]
pub struct ServerPlan {
    /// Every server to hand to `McpServers::start` / `McpStartup::spawn`.
    pub specs: Vec<McpServerSpec>,
    /// The plugins file, when the vault has one that reads.
    pub plugins: Option<VaultPlugins>,
    /// Its trust.
    pub trust: Option<Trust>,
    /// Why the plugins are left out (a bad file, a name taken by one of the person's servers).
    pub problems: Vec<String>,
    /// What changed since the person trusted the plugins, when that is why they are not trusted.
    pub changes: Vec<Change>,
}

impl ServerPlan {
    /// The person's servers and the vault's plugins; the trust is read from the database at
    /// `database`. Never fails: a plugins file that does not read is a problem, not an error,
    /// and the person's own servers still start.
    pub fn new(config: &Config, vault: &Vault, database: &Path) -> Self {
        let mut plan = Self {
            specs: McpServerSpec::from_user_config(config, vault.root()),
            ..Self::default()
        };
        let vault_id = crate::index::vault_id(vault);
        let loaded = VaultPlugins::load(vault).and_then(|plugins| {
            let Some(plugins) = plugins else {
                return Ok(None);
            };
            let store = Store::open(database)?;
            let trust = plugins.trust(&store, &vault_id)?;
            if trust != Trust::Trusted {
                plan.changes = plugins.changes_since_trusted(&store, &vault_id)?;
            }
            Ok(Some((plugins, trust)))
        });
        match loaded {
            Ok(None) => {}
            Ok(Some((plugins, trust))) => {
                plan.add_plugins(&plugins, trust, (database.to_path_buf(), vault_id));
                plan.plugins = Some(plugins);
                plan.trust = Some(trust);
            }
            Err(e) => {
                tracing::warn!("vault plugins left out: {e}");
                plan.problems.push(e.to_string());
            }
        }
        plan
    }

    fn add_plugins(&mut self, plugins: &VaultPlugins, trust: Trust, record: (PathBuf, String)) {
        let taken: Vec<String> = self.specs.iter().map(|s| s.name.clone()).collect();
        for mut spec in plugins.specs(trust == Trust::Trusted) {
            if let Some(file) = &mut spec.trusted_file {
                file.record = Some(record.clone());
            }
            if taken.contains(&spec.name) {
                self.problems.push(format!(
                    "the vault plugin `{0}` is left out: one of your own MCP servers is named `{0}` in [mcp.servers.{0}]",
                    spec.name
                ));
                continue;
            }
            self.specs.push(spec);
        }
    }

    /// Only the vault's trusted plugins (for `vaultchat mcp`, which re-exports them).
    pub fn trusted_plugin_specs(&self) -> Vec<McpServerSpec> {
        self.specs
            .iter()
            .filter(|s| s.origin == ServerOrigin::Plugin { trusted: true })
            .cloned()
            .collect()
    }

    /// How plugin tools' results are drawn, by tool name.
    pub fn renders(&self) -> HashMap<String, Render> {
        self.plugins
            .as_ref()
            .map(VaultPlugins::renders)
            .unwrap_or_default()
    }
}

/// One plugin's command line as rows: `command "…"`, `arg "…"` (one per argument),
/// `env NAME="…"`, `in "…"`; every word quoted and escaped.
pub fn spec_rows(spec: &McpServerSpec) -> Vec<String> {
    let mut rows = vec![format!("command {}", quote::quoted(&spec.command))];
    rows.extend(
        spec.args
            .iter()
            .map(|a| format!("arg     {}", quote::quoted(a))),
    );
    rows.extend(
        spec.env
            .iter()
            .filter(|(name, _)| name.as_str() != "PYTHONDONTWRITEBYTECODE")
            .map(|(name, value)| {
                format!("env     {}={}", quote::terminal(name), quote::quoted(value))
            }),
    );
    if let Some(cwd) = &spec.cwd {
        rows.push(format!(
            "in      {}",
            quote::quoted(&cwd.display().to_string())
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn vault_with(plugins: Option<&str>) -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".vaultchat")).unwrap();
        if let Some(text) = plugins {
            std::fs::write(dir.path().join(PLUGINS_FILE), text).unwrap();
        }
        let vault = Vault::open(dir.path()).unwrap();
        (dir, vault)
    }

    #[test]
    fn no_file_means_no_plugins() {
        let (_dir, vault) = vault_with(None);
        assert!(VaultPlugins::load(&vault).unwrap().is_none());
    }

    #[test]
    fn paths_resolve_against_the_vault() {
        let (_dir, vault) = vault_with(Some(
            "[plugins.a]\ncommand = \"bin/srv\"\nargs = [\"${VAULT_PATH}/x\", \"rel\"]\n\
             [plugins.b]\ncommand = \"python3\"\ncwd = \"tools\"\n\
             [plugins.c]\ncommand = \"/usr/bin/srv\"\ncwd = \"/tmp\"\n",
        ));
        let root = vault.root().to_path_buf();
        let plugins = VaultPlugins::load(&vault).unwrap().unwrap();
        let specs = plugins.specs(false);
        assert_eq!(specs[0].command, root.join("bin/srv").display().to_string());
        assert_eq!(specs[0].args[0], format!("{}/x", root.display()));
        assert_eq!(specs[0].args[1], "rel");
        assert_eq!(specs[0].cwd.as_deref(), Some(root.as_path()));
        assert_eq!(specs[1].command, "python3");
        assert_eq!(specs[1].cwd, Some(root.join("tools")));
        assert_eq!(specs[2].command, "/usr/bin/srv");
        assert_eq!(specs[2].cwd.as_deref(), Some(Path::new("/tmp")));
        assert!(specs.iter().all(|s| !s.origin.may_start()));
        assert!(plugins.specs(true).iter().all(|s| s.origin.may_start()));
    }

    #[test]
    fn the_hash_is_of_the_exact_bytes() {
        let (dir, vault) = vault_with(Some("[plugins.a]\ncommand = \"x\"\n"));
        let first = VaultPlugins::load(&vault).unwrap().unwrap().sha256;
        // sha256("[plugins.a]\ncommand = \"x\"\n"), computed with sha256sum.
        assert_eq!(first.len(), 64);
        std::fs::write(
            dir.path().join(PLUGINS_FILE),
            "[plugins.a]\ncommand = \"x\" \n",
        )
        .unwrap();
        let second = VaultPlugins::load(&vault).unwrap().unwrap().sha256;
        assert_ne!(first, second, "a blank changes the hash");
        assert_eq!(
            covered::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_linked_plugins_file_is_refused() {
        let (dir, vault) = vault_with(None);
        let elsewhere = dir.path().join("elsewhere.toml");
        std::fs::write(&elsewhere, "[plugins.a]\ncommand = \"x\"\n").unwrap();
        symlink(&elsewhere, dir.path().join(PLUGINS_FILE)).unwrap();
        let err = VaultPlugins::load(&vault).unwrap_err();
        assert!(matches!(err, PluginsError::Link(_)), "{err}");
        assert!(
            err.to_string().contains("plugins.toml is a symbolic link"),
            "{err}"
        );
    }

    #[test]
    fn a_bad_file_is_a_problem_and_the_persons_servers_stay() {
        let (dir, vault) = vault_with(Some("[plugins.a]\ncommand = \n"));
        let mut config = Config::default();
        config.mcp.servers.insert(
            "mine".into(),
            crate::config::McpServerConfig::with_command("srv"),
        );
        let plan = ServerPlan::new(&config, &vault, &dir.path().join("app.db"));
        assert_eq!(plan.specs.len(), 1);
        assert_eq!(plan.problems.len(), 1);
        assert!(
            plan.problems[0].contains(".vaultchat/plugins.toml:2: "),
            "{:?}",
            plan.problems
        );
    }

    #[test]
    fn trust_follows_the_content_and_a_name_of_yours_wins() {
        let (dir, vault) = vault_with(Some(
            "[plugins.mine]\ncommand = \"x\"\n[plugins.kanban]\ncommand = \"y\"\n\
             [plugins.kanban.render]\ncards = \"table\"\n",
        ));
        let db = dir.path().join("app.db");
        let mut config = Config::default();
        config.mcp.servers.insert(
            "mine".into(),
            crate::config::McpServerConfig::with_command("srv"),
        );
        let plan = ServerPlan::new(&config, &vault, &db);
        assert_eq!(plan.trust, Some(Trust::Unanswered));
        assert_eq!(plan.specs.len(), 2);
        assert!(
            plan.problems[0].contains("`mine` is left out"),
            "{:?}",
            plan.problems
        );
        assert!(plan.trusted_plugin_specs().is_empty());
        assert_eq!(plan.renders()["kanban__cards"], Render::Table);
        let plugins = plan.plugins.unwrap();
        let store = Store::open(&db).unwrap();
        let id = crate::index::vault_id(&vault);
        plugins.answer(&store, &id, PluginAnswer::Trusted).unwrap();
        let plan = ServerPlan::new(&config, &vault, &db);
        assert_eq!(plan.trust, Some(Trust::Trusted));
        assert_eq!(plan.trusted_plugin_specs().len(), 1);
        std::fs::write(
            dir.path().join(PLUGINS_FILE),
            "[plugins.kanban]\ncommand = \"z\"\n",
        )
        .unwrap();
        let plan = ServerPlan::new(&config, &vault, &db);
        assert_eq!(
            plan.trust,
            Some(Trust::Unanswered),
            "a changed file is untrusted"
        );
        assert!(plan.trusted_plugin_specs().is_empty());
    }
}
