//! Finding and reading command files, bounded: at most [`MAX_COMMANDS`] files of at most
//! [`MAX_COMMAND_BYTES`] each, folders at most [`MAX_COMMAND_DEPTH`] deep. A vault's files may
//! come from anyone who syncs it, so they are read through the vault's root handle, one name at
//! a time and never through a link; a file past a limit is left out with a problem, never read
//! whole.

use super::file::parse_command_file;
use super::{COMMANDS_DIR, Command, Origin};
use crate::config::Paths;
use crate::config::own_files::{self, OwnEntry};
use crate::quote;
use crate::vault::Vault;
use crate::vault::contained::{ContainedError, Folder, Kind};
use std::path::PathBuf;

/// The most command files read from one folder tree.
pub const MAX_COMMANDS: usize = 200;

/// The largest command file read (a prompt is a page or two).
pub const MAX_COMMAND_BYTES: u64 = 64 * 1024;

/// The most entries read from one command folder (files of any kind and folders): a folder
/// holding more is read that far, with a problem saying so.
pub const MAX_FOLDER_ENTRIES: usize = 1_000;

/// How many folders deep a namespace goes (`a:b:c:name` is three).
pub const MAX_COMMAND_DEPTH: usize = 3;

/// The commands of one folder tree and the files left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Sorted by name.
    pub commands: Vec<Command>,
    pub problems: Vec<String>,
    /// `sha256:HEX` of the bytes each of the vault's commands was read from, by its `file` (as
    /// the trust's covered set records them), so they can be checked against the trust without
    /// reading them again. The person's own are not hashed: no trust covers them.
    pub digests: std::collections::BTreeMap<String, String>,
}

/// The person's command folder: `commands/` beside `config.toml`.
pub fn personal_dir(paths: &Paths) -> PathBuf {
    paths.config_dir.join("commands")
}

/// The person's commands (their own folder: links are followed, sizes still bounded).
pub fn load_personal(paths: &Paths) -> Loaded {
    let dir = personal_dir(paths);
    let tree = OwnTree { root: dir.clone() };
    walk(&tree, Origin::Personal, &|rel| {
        dir.join(rel).display().to_string()
    })
}

/// The vault's commands, read whatever the trust: the caller lists them only when trusted.
pub fn load_vault(vault: &Vault) -> Loaded {
    let tree = VaultTree { vault };
    walk(&tree, Origin::Vault, &|rel| format!("{COMMANDS_DIR}/{rel}"))
}

/// A folder's entries (name, kind) and whether it holds more than were read.
type Listing = (Vec<(String, Kind)>, bool);

/// A folder tree to read commands from; `names` are the folders below its root.
trait Tree {
    /// At most [`MAX_FOLDER_ENTRIES`] entries of a folder, sorted by name, and whether it holds
    /// more; `Ok(None)` when the tree's root is not there at all.
    fn entries(&self, names: &[String]) -> std::io::Result<Option<Listing>>;
    /// Up to `max` bytes of a file, and whether there was more.
    fn read(&self, names: &[String], name: &str, max: u64) -> std::io::Result<(Vec<u8>, bool)>;
}

fn walk(tree: &dyn Tree, origin: Origin, shown: &dyn Fn(&str) -> String) -> Loaded {
    let mut loaded = Loaded::default();
    let mut stack: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0usize;
    while let Some(names) = stack.pop() {
        let rel_dir = names.join("/");
        let entries = match tree.entries(&names) {
            Ok(Some((entries, more))) => {
                if more {
                    loaded.problems.push(format!(
                        "{} holds more than {MAX_FOLDER_ENTRIES} entries; the rest are not read",
                        quote::terminal(&shown(&rel_dir))
                    ));
                }
                entries
            }
            Ok(None) => continue,
            Err(e) => {
                loaded.problems.push(format!(
                    "cannot list {}: {e}",
                    quote::terminal(&shown(&rel_dir))
                ));
                continue;
            }
        };
        for (name, kind) in entries {
            let rel = if rel_dir.is_empty() {
                name.clone()
            } else {
                format!("{rel_dir}/{name}")
            };
            // Dot-files and editors' leftovers are nobody's command.
            if name.starts_with('.') || crate::vault::guard::is_temp_name(&name) {
                continue;
            }
            match kind {
                Kind::Folder if names.len() < MAX_COMMAND_DEPTH => {
                    let mut deeper = names.clone();
                    deeper.push(name);
                    stack.push(deeper);
                }
                Kind::Folder => loaded.problems.push(format!(
                    "{} is left out: command folders go {MAX_COMMAND_DEPTH} deep at most",
                    quote::terminal(&shown(&rel))
                )),
                Kind::File => {
                    let Some(stem) = markdown_stem(&name) else {
                        continue;
                    };
                    seen += 1;
                    if seen > MAX_COMMANDS {
                        loaded.problems.push(format!(
                            "only the first {MAX_COMMANDS} command files are read; {} and the rest are left out",
                            quote::terminal(&shown(&rel))
                        ));
                        return finish(loaded);
                    }
                    let mut parts = names.clone();
                    parts.push(stem.to_string());
                    match read_command(tree, &names, &name, &parts, origin.clone(), &shown(&rel)) {
                        Ok((command, digest)) => {
                            if let Some(digest) = digest {
                                loaded.digests.insert(shown(&rel), digest);
                            }
                            loaded.commands.push(command);
                        }
                        Err(problem) => loaded.problems.push(problem),
                    }
                }
                // Links and special files inside a vault's folder are never followed.
                Kind::Other => {}
            }
        }
    }
    finish(loaded)
}

fn finish(mut loaded: Loaded) -> Loaded {
    loaded.commands.sort_by(|a, b| a.name.cmp(&b.name));
    loaded
}

/// `name.md` → `name`; anything else is not a command file.
fn markdown_stem(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".md")?;
    (!stem.is_empty()).then_some(stem)
}

fn read_command(
    tree: &dyn Tree,
    names: &[String],
    file_name: &str,
    parts: &[String],
    origin: Origin,
    shown: &str,
) -> Result<(Command, Option<String>), String> {
    let shown_q = quote::terminal(shown);
    if let Some(bad) = parts.iter().find(|p| !super::is_name_part(p)) {
        return Err(format!(
            "{shown_q} is left out: {} cannot be typed as a command (letters, digits, -, _ and . only)",
            quote::quoted(bad)
        ));
    }
    let (bytes, more) = tree
        .read(names, file_name, MAX_COMMAND_BYTES)
        .map_err(|e| format!("cannot read {shown_q}: {e}"))?;
    if more {
        return Err(format!(
            "{shown_q} is left out: it is larger than {} KB",
            MAX_COMMAND_BYTES / 1024
        ));
    }
    let digest = matches!(origin, Origin::Vault).then(|| {
        format!(
            "sha256:{}",
            crate::mcp::plugins::covered::sha256_hex(&bytes)
        )
    });
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{shown_q} is left out: it is not UTF-8"))?;
    let prompt = parse_command_file(&text).map_err(|e| format!("{shown_q}: {e}"))?;
    let command = Command {
        name: parts.join(":"),
        description: prompt
            .description
            .clone()
            .unwrap_or_else(|| first_line(&prompt.body)),
        argument_hint: prompt.hint(),
        origin,
        file: Some(shown.to_string()),
        prompt: Some(prompt),
        arguments: Vec::new(),
    };
    Ok((command, digest))
}

/// How much of a prompt's first line stands in for a missing description.
const DESCRIPTION_CHARS: usize = 80;

/// A description for a file without one: the prompt's first line, shortened.
fn first_line(body: &str) -> String {
    let line = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.trim();
    match line.char_indices().nth(DESCRIPTION_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// The person's own folder, through the ordinary file system.
struct OwnTree {
    root: PathBuf,
}

impl OwnTree {
    fn path(&self, names: &[String]) -> PathBuf {
        names.iter().fold(self.root.clone(), |p, n| p.join(n))
    }
}

impl Tree for OwnTree {
    fn entries(&self, names: &[String]) -> std::io::Result<Option<Listing>> {
        let listed = own_files::list_folder(&self.path(names), MAX_FOLDER_ENTRIES)?;
        let Some((listed, more)) = listed else {
            // A folder listed a moment ago and gone now is an error; the root missing is not.
            return if names.is_empty() {
                Ok(None)
            } else {
                Err(std::io::ErrorKind::NotFound.into())
            };
        };
        Ok(Some((
            listed
                .into_iter()
                .map(|(name, entry)| {
                    let kind = match entry {
                        OwnEntry::File => Kind::File,
                        OwnEntry::Folder => Kind::Folder,
                        OwnEntry::Other => Kind::Other,
                    };
                    (name, kind)
                })
                .collect(),
            more,
        )))
    }

    fn read(&self, names: &[String], name: &str, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
        own_files::read_bounded(&self.path(names).join(name), max)
    }
}

/// The vault's folder, through its root handle (no link is followed on the way).
struct VaultTree<'a> {
    vault: &'a Vault,
}

impl VaultTree<'_> {
    fn folder(&self, names: &[String]) -> Result<Folder, ContainedError> {
        let mut all: Vec<&str> = COMMANDS_DIR.split('/').collect();
        all.extend(names.iter().map(String::as_str));
        self.vault.handle().folder(&all, false, &all.join("/"))
    }
}

fn io_of(error: ContainedError) -> std::io::Error {
    match error {
        ContainedError::Io(e) => e,
        other => std::io::Error::other(other.to_string()),
    }
}

impl Tree for VaultTree<'_> {
    fn entries(&self, names: &[String]) -> std::io::Result<Option<Listing>> {
        let folder = match self.folder(names) {
            Ok(folder) => folder,
            Err(ContainedError::Io(e))
                if names.is_empty() && e.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(None);
            }
            Err(e) => return Err(io_of(e)),
        };
        let (listed, more) = folder.entries_at_most(MAX_FOLDER_ENTRIES)?;
        let mut entries: Vec<(String, Kind)> = listed
            .into_iter()
            .filter_map(|(name, kind)| name.ok().map(|n| (n, kind)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Some((entries, more)))
    }

    fn read(&self, names: &[String], name: &str, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
        let folder = self.folder(names).map_err(io_of)?;
        let file = folder.open_file(name, name).map_err(io_of)?;
        own_files::read_at_most(file, max)
    }
}
