//! What a trust in a vault's plugins covers: not only `.vaultchat/plugins.toml`, but every file the
//! plugins would run or load from inside the vault, because a plugin is only as trusted as its code.
//! A `git pull`, a sync client or another person of a shared vault can change `server.py` without
//! touching the plugins file; the trust must not survive that.
//!
//! The covered set is: the plugins file; the whole `.vaultchat/` tree (except vaultchat's own
//! temporary write files); and the command and each argument of every enabled plugin (or the part
//! after `=` of an `--option=value` argument) that names an existing file or folder inside the
//! vault (a folder counts whole; the vault root itself does not, it is the notes). Each file is
//! recorded by the SHA-256 of its bytes, each link by where it points, each other special file by
//! its kind; the set's own SHA-256 ([`Covered::digest`]) is what trust is recorded for.
//!
//! Everything is read through the vault's root handle, one name at a time, never through a link:
//! a link inside `.vaultchat/` is recorded by its text and not followed, and a command or argument
//! that is a link (or inside one) is refused, since what it runs could then change unseen. Hashing
//! is bounded ([`MAX_COVERED_FILES`], [`MAX_COVERED_BYTES`]): a larger tree is refused with a
//! message, never half-covered.

use crate::mcp::client::McpServerSpec;
use crate::quote;
use crate::vault::Vault;
use crate::vault::contained::{ContainedError, Entry, Folder, Kind};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The most files one trust covers.
pub const MAX_COVERED_FILES: usize = 1_000;

/// The most bytes one trust covers, all files together (16 MiB).
pub const MAX_COVERED_BYTES: u64 = 16 * 1024 * 1024;

/// How deep a covered folder is walked.
const MAX_DEPTH: usize = 32;

/// The folder a vault keeps its plugins in (covered whole).
const PLUGINS_DIR: &str = ".vaultchat";

/// Why the covered set could not be made: trust is refused (or withdrawn) until it can.
#[derive(Debug, thiserror::Error)]
pub enum CoverError {
    #[error(
        "the vault's plugins would run or read {}, which is a symbolic link or inside one; a trust covers the vault's own files only: name the file itself",
        quote::terminal(.0)
    )]
    Link(String),
    #[error(
        "cannot read {}, which the trust in the vault's plugins covers: {source}",
        quote::terminal(path)
    )]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "the vault's plugins hold more than {MAX_COVERED_FILES} files in {PLUGINS_DIR}/ and the paths their commands name; a trust covers every file a plugin could run, so it is refused: keep large data (a virtual environment, node_modules) outside the vault"
    )]
    TooManyFiles,
    #[error(
        "the files the vault's plugins could run ({PLUGINS_DIR}/ and the paths their commands name) are larger than {} MB together; a trust covers all of them, so it is refused: keep large data (a virtual environment, node_modules) outside the vault",
        MAX_COVERED_BYTES / (1024 * 1024)
    )]
    TooLarge,
}

/// Every covered file by its vault-relative path, with what it was: `sha256:HEX` for a file,
/// `link:TARGET` for a symbolic link, `special` or `unreadable-name` otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Covered {
    files: BTreeMap<String, String>,
}

/// One difference between the covered set that was trusted and the one on disk now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Changed(String),
    Added(String),
    Removed(String),
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Changed(path) => write!(f, "{} (changed)", quote::terminal(path)),
            Self::Added(path) => write!(f, "{} (new)", quote::terminal(path)),
            Self::Removed(path) => write!(f, "{} (removed)", quote::terminal(path)),
        }
    }
}

/// Changes as one phrase for a message: the first few, and how many more.
pub fn describe(changes: &[Change]) -> String {
    const SHOWN: usize = 5;
    let mut text = changes
        .iter()
        .take(SHOWN)
        .map(Change::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if changes.len() > SHOWN {
        text.push_str(&format!(" and {} more", changes.len() - SHOWN));
    }
    text
}

impl Covered {
    /// The SHA-256 (hex) of the whole set, paths and contents: what trust is recorded for.
    pub fn digest(&self) -> String {
        use sha2::Digest;
        let mut hasher = sha2::Sha256::new();
        for (path, value) in &self.files {
            hasher.update(path.as_bytes());
            hasher.update([0]);
            hasher.update(value.as_bytes());
            hasher.update([b'\n']);
        }
        hex(&hasher.finalize())
    }

    /// What was recorded for `path` (`sha256:HEX` for a file), if it is covered.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(String::as_str)
    }

    /// The covered paths, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// How many paths are covered.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether nothing is covered (never, once a plugins file is read).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The set as stored with the trust (JSON).
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A stored set; empty when there is none (a trust from before covered sets were kept).
    pub fn from_text(text: &str) -> Self {
        serde_json::from_str(text).unwrap_or_default()
    }

    /// What differs in `self` (now) from `before` (trusted), in path order.
    pub fn changes_since(&self, before: &Covered) -> Vec<Change> {
        let mut changes = Vec::new();
        for (path, value) in &self.files {
            match before.files.get(path) {
                None => changes.push(Change::Added(path.clone())),
                Some(old) if old != value => changes.push(Change::Changed(path.clone())),
                Some(_) => {}
            }
        }
        for path in before.files.keys() {
            if !self.files.contains_key(path) {
                changes.push(Change::Removed(path.clone()));
            }
        }
        changes.sort_by(|a, b| change_path(a).cmp(change_path(b)));
        changes
    }
}

fn change_path(change: &Change) -> &str {
    match change {
        Change::Changed(p) | Change::Added(p) | Change::Removed(p) => p,
    }
}

/// The covered set of a vault whose plugins file holds `plugins_bytes` (read once by the caller,
/// so the set records exactly the bytes that were parsed; `None` when there is no plugins file,
/// only command files or hooks) and whose plugins start as `specs`.
pub fn collect(
    vault: &Vault,
    plugins_file: &str,
    plugins_bytes: Option<&[u8]>,
    specs: &[McpServerSpec],
) -> Result<Covered, CoverError> {
    let mut walk = Walk {
        covered: Covered::default(),
        bytes: 0,
        skip: plugins_file,
    };
    if let Some(plugins_bytes) = plugins_bytes {
        walk.add(
            plugins_file,
            format!("sha256:{}", sha256_hex(plugins_bytes)),
        )?;
        walk.bytes += plugins_bytes.len() as u64;
    }
    let folder = vault
        .handle()
        .folder(&[PLUGINS_DIR], false, PLUGINS_DIR)
        .map_err(|e| contained(PLUGINS_DIR, e))?;
    walk.tree(&folder, PLUGINS_DIR, 0)?;
    for spec in specs.iter().filter(|s| s.enabled) {
        let base = spec
            .cwd
            .clone()
            .unwrap_or_else(|| vault.root().to_path_buf());
        let words = std::iter::once(spec.command.as_str())
            .filter(|c| c.contains('/'))
            .chain(spec.args.iter().map(String::as_str));
        for word in words {
            let value = word.split_once('=').map(|(_, v)| v);
            for candidate in std::iter::once(word).chain(value) {
                if let Some(rel) = inside(vault.root(), &base, candidate) {
                    walk.named(vault, &rel)?;
                }
            }
        }
    }
    Ok(walk.covered)
}

/// The vault-relative path `word` names (relative words against `base`), when it is inside the
/// vault and not the vault root itself; decided on the words alone (no link is looked at here).
fn inside(root: &Path, base: &Path, word: &str) -> Option<String> {
    if word.is_empty() || word.starts_with('-') {
        return None;
    }
    let joined = base.join(word);
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    let rel = normal.strip_prefix(root).ok()?;
    let names: Vec<&str> = rel
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    (!names.is_empty()).then(|| names.join("/"))
}

struct Walk<'a> {
    covered: Covered,
    bytes: u64,
    /// The plugins file, recorded from the caller's bytes, not read again.
    skip: &'a str,
}

impl Walk<'_> {
    fn add(&mut self, path: &str, value: String) -> Result<(), CoverError> {
        if !self.covered.files.contains_key(path) && self.covered.files.len() >= MAX_COVERED_FILES {
            return Err(CoverError::TooManyFiles);
        }
        self.covered.files.insert(path.to_string(), value);
        Ok(())
    }

    /// Every entry of `folder` (at `path`), folders walked, links recorded and not followed.
    fn tree(&mut self, folder: &Folder, path: &str, depth: usize) -> Result<(), CoverError> {
        if depth > MAX_DEPTH {
            return Err(CoverError::TooManyFiles);
        }
        // A folder of more entries than the set may hold is refused unread: a hundred thousand
        // files dropped in `.vaultchat/commands/` must not be listed (and sorted) at every `/`.
        // (Twice the bound: vaultchat's temporary files are listed but not covered.)
        let (mut entries, more) =
            folder
                .entries_at_most(2 * MAX_COVERED_FILES)
                .map_err(|source| CoverError::Unreadable {
                    path: path.to_string(),
                    source,
                })?;
        if more {
            return Err(CoverError::TooManyFiles);
        }
        entries.sort_by_cached_key(|entry| format!("{:?}", entry.0));
        for (name, kind) in entries {
            let name = match name {
                Ok(name) => name,
                Err(lossy) => {
                    self.add(&format!("{path}/{lossy}"), "unreadable-name".into())?;
                    continue;
                }
            };
            // vaultchat's own temporary write files come and go with every save.
            if crate::vault::guard::is_temp_name(&name) {
                continue;
            }
            let child = format!("{path}/{name}");
            if child == self.skip {
                continue;
            }
            match kind {
                Kind::File => self.file(folder, &name, &child)?,
                Kind::Folder => {
                    let sub = folder
                        .open_folder(&name, &child)
                        .map_err(|e| contained(&child, e))?;
                    self.tree(&sub, &child, depth + 1)?;
                }
                Kind::Other => self.special(folder, &name, &child)?,
            }
        }
        Ok(())
    }

    fn special(&mut self, folder: &Folder, name: &str, path: &str) -> Result<(), CoverError> {
        let value = match folder.entry(name) {
            Ok(Entry::Symlink) => match folder.read_link(name) {
                Ok(target) => format!("link:{target}"),
                Err(source) => {
                    return Err(CoverError::Unreadable {
                        path: path.to_string(),
                        source,
                    });
                }
            },
            Ok(Entry::File { .. }) => return self.file(folder, name, path),
            Ok(_) => "special".to_string(),
            Err(source) => {
                return Err(CoverError::Unreadable {
                    path: path.to_string(),
                    source,
                });
            }
        };
        self.add(path, value)
    }

    /// The SHA-256 of one regular file, read in pieces within what is left of the byte budget.
    fn file(&mut self, folder: &Folder, name: &str, path: &str) -> Result<(), CoverError> {
        use sha2::Digest;
        if path == self.skip || self.covered.files.contains_key(path) {
            return Ok(());
        }
        let mut file = folder
            .open_file(name, path)
            .map_err(|e| contained(path, e))?;
        let mut hasher = sha2::Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let read = file
                .read(&mut buf)
                .map_err(|source| CoverError::Unreadable {
                    path: path.to_string(),
                    source,
                })?;
            if read == 0 {
                break;
            }
            self.bytes += read as u64;
            if self.bytes > MAX_COVERED_BYTES {
                return Err(CoverError::TooLarge);
            }
            hasher.update(&buf[..read]);
        }
        self.add(path, format!("sha256:{}", hex(&hasher.finalize())))
    }

    /// A path a command or argument names: walked one name at a time from the root; a link on
    /// the way is refused, a name that is not there is an ordinary word (nothing to cover).
    fn named(&mut self, vault: &Vault, rel: &str) -> Result<(), CoverError> {
        let names: Vec<&str> = rel.split('/').collect();
        let mut folder = vault
            .handle()
            .folder(&[], false, rel)
            .map_err(|e| contained(rel, e))?;
        for (depth, name) in names.iter().enumerate() {
            let last = depth + 1 == names.len();
            let shown = names[..=depth].join("/");
            match folder.entry(name) {
                Ok(Entry::Missing) => return Ok(()),
                Ok(Entry::Symlink) => return Err(CoverError::Link(shown)),
                Ok(Entry::Folder) => {
                    let next = folder
                        .open_folder(name, &shown)
                        .map_err(|e| contained(&shown, e))?;
                    if last {
                        return self.tree(&next, &shown, 0);
                    }
                    folder = next;
                }
                Ok(Entry::File { .. }) if last => return self.file(&folder, name, &shown),
                // A file where a folder would be: the word names nothing.
                Ok(Entry::File { .. }) => return Ok(()),
                Ok(Entry::Other) => return self.add(&shown, "special".into()),
                Err(source) => {
                    return Err(CoverError::Unreadable {
                        path: shown,
                        source,
                    });
                }
            }
        }
        Ok(())
    }
}

fn contained(path: &str, error: ContainedError) -> CoverError {
    match error {
        ContainedError::LinkAppeared { .. } => CoverError::Link(path.to_string()),
        ContainedError::Io(source) => CoverError::Unreadable {
            path: path.to_string(),
            source,
        },
        other @ (ContainedError::LockTimeout | ContainedError::NotAFolder { .. }) => {
            CoverError::Unreadable {
                path: path.to_string(),
                source: std::io::Error::other(other.to_string()),
            }
        }
    }
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::plugins::VaultPlugins;
    use std::os::unix::fs::symlink;

    fn vault(files: &[(&str, &str)]) -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let vault = Vault::open(dir.path()).unwrap();
        (dir, vault)
    }

    fn covered(vault: &Vault) -> Covered {
        VaultPlugins::load(vault).unwrap().unwrap().covered
    }

    const PLUGINS: &str = "[plugins.a]\ncommand = \"python3\"\n\
        args = [\"tools/a.py\", \"--config=conf/a.toml\", \"${VAULT_PATH}\", \"../outside.py\", \"run\"]\n";

    #[test]
    fn the_set_holds_the_plugins_folder_and_the_paths_the_commands_name() {
        let (dir, vault) = vault(&[
            (".vaultchat/plugins.toml", PLUGINS),
            (".vaultchat/lib/helper.py", "x = 1\n"),
            (
                ".vaultchat/.plugins.toml.vaultchat-a1b2c3.tmp",
                "a save in progress",
            ),
            ("tools/a.py", "print('a')\n"),
            ("tools/other.py", "not named\n"),
            ("conf/a.toml", "k = 1\n"),
            ("Notes/Plan.md", "# Plan\n"),
        ]);
        let set = covered(&vault);
        let paths: Vec<&str> = set.paths().collect();
        assert_eq!(
            paths,
            [
                ".vaultchat/lib/helper.py",
                ".vaultchat/plugins.toml",
                "conf/a.toml",
                "tools/a.py"
            ]
        );
        let before = set.clone();
        std::fs::write(dir.path().join("Notes/Plan.md"), "# Plan\n\nedited\n").unwrap();
        std::fs::write(dir.path().join("tools/other.py"), "edited\n").unwrap();
        assert_eq!(
            covered(&vault),
            before,
            "notes and unnamed files are not covered"
        );
        std::fs::write(dir.path().join("tools/a.py"), "print('pwned')\n").unwrap();
        std::fs::write(dir.path().join(".vaultchat/new.py"), "new\n").unwrap();
        std::fs::remove_file(dir.path().join(".vaultchat/lib/helper.py")).unwrap();
        let now = covered(&vault);
        assert_ne!(now.digest(), before.digest());
        let changes: Vec<String> = now
            .changes_since(&before)
            .iter()
            .map(Change::to_string)
            .collect();
        assert_eq!(
            changes,
            [
                ".vaultchat/lib/helper.py (removed)",
                ".vaultchat/new.py (new)",
                "tools/a.py (changed)"
            ]
        );
        assert_eq!(Covered::from_text(&now.to_text()), now);
    }

    #[test]
    fn links_are_recorded_in_the_folder_and_refused_as_a_command_path() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("evil.py"), "evil\n").unwrap();
        let (dir, vault) = vault(&[(".vaultchat/plugins.toml", "")]);
        symlink(
            outside.path().join("evil.py"),
            dir.path().join(".vaultchat/python"),
        )
        .unwrap();
        let set = covered(&vault);
        let linked = set.files.get(".vaultchat/python").unwrap();
        assert!(linked.starts_with("link:"), "{linked}");
        // Named by a plugin's arguments, a link (or a folder link on the way) is refused.
        std::fs::write(
            dir.path().join(".vaultchat/plugins.toml"),
            "[plugins.a]\ncommand = \"python3\"\nargs = [\".vaultchat/python\"]\n",
        )
        .unwrap();
        let err = VaultPlugins::load(&vault).unwrap_err();
        assert!(
            err.to_string()
                .contains(".vaultchat/python, which is a symbolic link"),
            "{err}"
        );
        symlink(outside.path(), dir.path().join("tools")).unwrap();
        std::fs::write(
            dir.path().join(".vaultchat/plugins.toml"),
            "[plugins.a]\ncommand = \"tools/evil.py\"\n",
        )
        .unwrap();
        let err = VaultPlugins::load(&vault).unwrap_err();
        assert!(
            err.to_string().contains("tools, which is a symbolic link"),
            "{err}"
        );
    }

    #[test]
    fn an_oversized_tree_is_refused_with_a_message() {
        let (dir, vault) = vault(&[(".vaultchat/plugins.toml", "")]);
        let big = dir.path().join(".vaultchat/big.bin");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_COVERED_BYTES + 1).unwrap();
        let started = std::time::Instant::now();
        let err = VaultPlugins::load(&vault).unwrap_err();
        assert!(err.to_string().contains("larger than 16 MB"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        std::fs::remove_file(&big).unwrap();
        let many = dir.path().join(".vaultchat/venv");
        std::fs::create_dir_all(&many).unwrap();
        for i in 0..MAX_COVERED_FILES {
            std::fs::write(many.join(format!("{i}.py")), "").unwrap();
        }
        let err = VaultPlugins::load(&vault).unwrap_err();
        assert!(err.to_string().contains("more than 1000 files"), "{err}");
    }
}
