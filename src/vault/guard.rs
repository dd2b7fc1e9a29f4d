//! The path guard: every path a tool, command or MCP peer hands to vaultchat passes through
//! [`Vault::resolve`] before anything touches the file system.
//!
//! Inputs are always relative to the vault root. The guard refuses, before any I/O, everything that
//! could name a file outside the vault or a file Windows and sync tools cannot represent (see
//! docs/safety.md §1 for the list of attacks this answers), and then walks the existing part of the
//! path component by component, resolving symbolic links and checking containment with
//! [`Path::starts_with`] on canonical paths (component semantics: `/v/vault_evil` is not inside
//! `/v/vault`, which is the CVE-2025-53110 prefix bypass).
//!
//! The guard cannot close every race on its own (a link may appear between the check and the open);
//! `note_io` therefore writes through a temp file plus rename, which replaces a link instead of following
//! it, and re-checks the final component right before writing.
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::contained::{ContainedError, Folder, RootHandle};

use unicode_normalization::UnicodeNormalization;

/// Folders inside a vault that belong to other programs (or to vaultchat itself) and are never written.
pub const PROTECTED_DIRS: [&str; 4] = [".git", ".obsidian", ".trash", ".vaultchat"];

/// Longest path the guard accepts, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Longest single file or folder name the guard accepts, in bytes (`NAME_MAX` on every common
/// file system).
pub const MAX_NAME_BYTES: usize = 255;

/// The marker vaultchat puts in the names of its temp files (`.NAME.vaultchat-XXXXXX.tmp`). Writes to
/// such names are refused so a note can never be mistaken for a leftover and cleaned up.
pub const TEMP_MARKER: &str = ".vaultchat-";

/// Whether a file name is one of vaultchat's temp files (`.NAME.vaultchat-XXXXXX.tmp`).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(TEMP_MARKER) && name.ends_with(".tmp")
}

/// What the caller is about to do with a path; writes are checked more strictly than reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// Why a path was refused. Every message names the offending input and says what a valid path looks
/// like, because it is shown both to the user and to the model that produced the path.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error(
        "the vault folder {path} cannot be opened: {source}; check that the folder exists and that you may read it"
    )]
    VaultUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error(
        "the vault {path} is not a folder: point vaultchat at the folder that holds your notes"
    )]
    VaultNotFolder { path: PathBuf },

    #[error(
        "`{input}` names no note: give a path relative to the vault root, like `Projects/Plan.md`"
    )]
    Empty { input: String },

    #[error(
        "`{input}` contains a NUL byte, which no file name may contain: give a plain path relative to the vault root, like `Projects/Plan.md`"
    )]
    NulByte { input: String },

    #[error(
        "`{input}` is {len} bytes long, over the limit of {limit} bytes for {what}: use a shorter path relative to the vault root, like `Projects/Plan.md`"
    )]
    TooLong {
        input: String,
        len: usize,
        limit: usize,
        what: &'static str,
    },

    #[error(
        "`{input}` is an absolute path or URL: paths are relative to the vault root, like `Projects/Plan.md`"
    )]
    Absolute { input: String },

    #[error(
        "`{input}` leaves the vault: paths are relative to the vault root, like `Projects/Plan.md`, and may not contain `..`"
    )]
    EscapesVault { input: String },

    #[error(
        "`{input}` uses a backslash: separate folders with `/`, like `Projects/Plan.md`, and do not put `\\` in names"
    )]
    Backslash { input: String },

    #[error(
        "`{input}` contains a percent-encoded dot, slash, backslash or NUL (e.g. `%2e`, `%2f`, `%252e`, `%c0%ae`): write the path plainly, like `Projects/Plan.md`"
    )]
    EncodedTraversal { input: String },

    #[error(
        "`{input}` has the name `{component}`, which reads as `.`, `..` or a separator because of a Unicode look-alike (such as fullwidth `．` or `／`, or the division slash `∕`): use ordinary characters, like `Projects/Plan.md`"
    )]
    UnicodeTraversal { input: String, component: String },

    #[error(
        "`{input}` contains the invisible or control character U+{codepoint:04X} (bidirectional override, zero-width or control character), which can disguise a name: retype the path without it, like `Projects/Plan.md`"
    )]
    HiddenCharacter { input: String, codepoint: u32 },

    #[error(
        "`{input}` ends with `/`, so it names a folder, not a note: drop the trailing slash, like `Projects/Plan.md`"
    )]
    TrailingSeparator { input: String },

    #[error(
        "`{input}` has the name `{component}`, which {reason} (vaults are often synced to Windows): choose another name, like `Projects/Plan.md`"
    )]
    InvalidName {
        input: String,
        component: String,
        reason: &'static str,
    },

    #[error(
        "`{input}` is inside `{dir}/`, which belongs to {owner} and is never written by vaultchat: write notes elsewhere in the vault, like `Projects/Plan.md`"
    )]
    ProtectedDir {
        input: String,
        dir: &'static str,
        owner: &'static str,
    },

    #[error(
        "`{input}` goes through the symbolic link `{link}`, which points outside the vault (to {}): only files inside the vault can be used; give a path to a note that really lives in the vault",
        target.display()
    )]
    SymlinkEscape {
        input: String,
        link: String,
        target: PathBuf,
    },

    #[error(
        "`{input}` goes through the symbolic link `{link}`, whose target does not exist or loops ({source}): fix or remove the link, or give another path inside the vault"
    )]
    BrokenSymlink {
        input: String,
        link: String,
        source: io::Error,
    },

    #[error(
        "`{input}` is a symbolic link, and vaultchat never writes through links: edit the note the link points to, by its own path inside the vault"
    )]
    IsSymlink { input: String },

    #[error(
        "`{input}` has {links} hard links, so the same file may also live outside the vault and writing would change every copy: edit it with another program, or replace it with a plain copy (e.g. `cp` it to a new name) first"
    )]
    HardLink { input: String, links: u64 },

    #[error(
        "`{input}` goes through `{component}`, which is a file, not a folder: nothing can be inside a file; give a path whose folders are folders, like `Projects/Plan.md`"
    )]
    NotAFolder { input: String, component: String },

    #[error(
        "`{input}` was checked for reading only, so it cannot be written: resolve it with write access (which also refuses protected folders and links) before saving"
    )]
    CheckedForRead { input: String },

    #[error(
        "`{input}` cannot be checked because part of it cannot be read ({source}): check the folder permissions, or give another path inside the vault"
    )]
    Unresolvable { input: String, source: io::Error },
}

impl PathError {
    /// A stable short code per kind of refusal, for tests, logs and the MCP layer's error data.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::VaultUnreadable { .. } => "vault_unreadable",
            Self::VaultNotFolder { .. } => "vault_not_folder",
            Self::Empty { .. } => "empty",
            Self::NulByte { .. } => "nul_byte",
            Self::TooLong { .. } => "too_long",
            Self::Absolute { .. } => "absolute",
            Self::EscapesVault { .. } => "escapes_vault",
            Self::Backslash { .. } => "backslash",
            Self::EncodedTraversal { .. } => "encoded_traversal",
            Self::UnicodeTraversal { .. } => "unicode_traversal",
            Self::HiddenCharacter { .. } => "hidden_character",
            Self::TrailingSeparator { .. } => "trailing_separator",
            Self::InvalidName { .. } => "invalid_name",
            Self::ProtectedDir { .. } => "protected_dir",
            Self::SymlinkEscape { .. } => "symlink_escape",
            Self::BrokenSymlink { .. } => "broken_symlink",
            Self::IsSymlink { .. } => "is_symlink",
            Self::HardLink { .. } => "hard_link",
            Self::NotAFolder { .. } => "not_a_folder",
            Self::CheckedForRead { .. } => "checked_for_read",
            Self::Unresolvable { .. } => "unresolvable",
        }
    }
}

/// An opened vault: the root folder every path is checked against.
#[derive(Debug, Clone)]
pub struct Vault {
    /// The root folder, opened once: every file operation on a checked path starts from it (see
    /// [`super::contained`]), so a folder swapped for a link after the check cannot redirect it.
    handle: Arc<RootHandle>,
    /// The root with every symbolic link resolved; all `VaultPath::abs` values live under it.
    root: PathBuf,
    /// The root as the user gave it (made absolute, links not resolved), so that absolute paths reported
    /// by tools that do not resolve links (editors, the watcher on macOS `/tmp`) still map back.
    given: PathBuf,
}

/// A checked path inside the vault.
#[derive(Debug, Clone)]
pub struct VaultPath {
    rel: String,
    abs: PathBuf,
    /// What the path was checked for: note I/O refuses to write a path only checked for reading, which
    /// skipped the write-only checks (protected folders, Windows names, links, hard links).
    access: Access,
    /// The vault root's handle, which every operation on this path starts from.
    handle: Arc<RootHandle>,
}

impl PartialEq for VaultPath {
    fn eq(&self, other: &Self) -> bool {
        self.rel == other.rel && self.abs == other.abs && self.access == other.access
    }
}

impl Eq for VaultPath {}

impl VaultPath {
    /// The vault-relative path: `/`-separated, no leading `./`, no trailing `/`, symbolic links inside
    /// the vault resolved (so it may differ from the input when the input goes through a link). The empty
    /// string is the vault root.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// The absolute path, inside the canonical vault root.
    pub fn abs(&self) -> &Path {
        &self.abs
    }

    /// Whether this is the vault root itself (only ever returned for reads, e.g. listing).
    pub fn is_root(&self) -> bool {
        self.rel.is_empty()
    }

    /// The access this path was checked for.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The vault root's handle (for locking writers).
    pub fn root_handle(&self) -> &RootHandle {
        &self.handle
    }

    /// Opens the folder that holds this path, through the root handle (making missing folders when
    /// `create`), and returns it with the file's own name. The vault root itself has no such folder.
    pub fn open_parent(&self, create: bool) -> Result<(Folder, &str), ContainedError> {
        let mut names: Vec<&str> = self.rel.split('/').filter(|n| !n.is_empty()).collect();
        let Some(name) = names.pop() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the vault root is a folder, not a note",
            )
            .into());
        };
        let folder = self.handle.folder(&names, create, &self.rel)?;
        Ok((folder, name))
    }

    /// The vault root as a folder handle.
    pub fn root_folder(&self) -> Result<Folder, ContainedError> {
        self.handle.folder(&[], false, "")
    }
}

impl Vault {
    /// Opens the vault at `root`, which may itself be a symbolic link.
    pub fn open(root: impl AsRef<Path>) -> Result<Self, PathError> {
        let root = root.as_ref();
        let unreadable = |source| PathError::VaultUnreadable {
            path: root.to_path_buf(),
            source,
        };
        let canonical = root.canonicalize().map_err(unreadable)?;
        if !canonical.is_dir() {
            return Err(PathError::VaultNotFolder {
                path: root.to_path_buf(),
            });
        }
        // `absolute` is lexical: it keeps the links of the given form, which is the point of keeping it.
        let given = std::path::absolute(root).map_err(unreadable)?;
        let given = given.components().collect::<PathBuf>();
        let handle = RootHandle::open(&canonical).map_err(unreadable)?;
        Ok(Self {
            handle,
            root: canonical,
            given,
        })
    }

    /// The root folder's handle: contained operations and the write lock.
    pub fn handle(&self) -> &Arc<RootHandle> {
        &self.handle
    }

    /// The canonical vault root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Maps an absolute path under either form of the root (canonical or as given) to a normalised
    /// vault-relative string; `None` when the path is outside the vault or cannot be expressed as one.
    pub fn relative(&self, abs: &Path) -> Option<String> {
        let rest = abs
            .strip_prefix(&self.root)
            .or_else(|_| abs.strip_prefix(&self.given))
            .ok()?;
        let mut names = Vec::new();
        for component in rest.components() {
            match component {
                Component::Normal(name) => names.push(name.to_str()?),
                Component::CurDir => {}
                // `/v/vault/../x` starts with `/v/vault` lexically but is outside.
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        Some(names.join("/"))
    }

    /// Checks a glob or folder-filter argument (e.g. `Projects/**/*.md`): it must stay relative to the
    /// vault and may not climb out of it, even through brace alternatives like `{..,x}`.
    pub fn check_pattern(&self, pattern: &str) -> Result<(), PathError> {
        let input = shown(pattern);
        check_lexical_prefix(pattern, &input)?;
        let climbs = pattern
            .split(['/', '\\', '{', '}', ','])
            .any(|piece| piece == "..");
        if climbs {
            return Err(PathError::EscapesVault { input });
        }
        for piece in pattern.split(['/', '\\']) {
            check_unicode_lookalike(piece, &input)?;
        }
        Ok(())
    }

    /// Checks `input` (relative to the vault root) for `access` and returns where it lives.
    pub fn resolve(&self, input: &str, access: Access) -> Result<VaultPath, PathError> {
        let shown_input = shown(input);
        let names = lexical_names(input, &shown_input, access)?;
        if names.is_empty() {
            return match access {
                Access::Read => Ok(VaultPath {
                    rel: String::new(),
                    abs: self.root.clone(),
                    access,
                    handle: Arc::clone(&self.handle),
                }),
                Access::Write => Err(PathError::Empty { input: shown_input }),
            };
        }
        if access == Access::Write {
            check_writable_names(&names, &shown_input)?;
        }
        let abs = self.walk(&names, &shown_input, access)?;
        let rel = self.canonical_rel(&abs, &shown_input)?;
        if access == Access::Write {
            // A link inside the vault may lead into `.obsidian/` and the like; check where it really lands.
            let real: Vec<&str> = rel.split('/').collect();
            check_protected(&real, &shown_input)?;
            if rel.is_empty() {
                return Err(PathError::Empty { input: shown_input });
            }
        }
        Ok(VaultPath {
            rel,
            abs,
            access,
            handle: Arc::clone(&self.handle),
        })
    }

    /// Walks the path from the canonical root, resolving each existing component. Returns the absolute
    /// path: canonical for the part that exists, followed lexically by the part that does not yet exist.
    fn walk(&self, names: &[&str], input: &str, access: Access) -> Result<PathBuf, PathError> {
        let mut current = self.root.clone();
        for (index, name) in names.iter().enumerate() {
            let is_last = index + 1 == names.len();
            let next = current.join(name);
            let meta = match std::fs::symlink_metadata(&next) {
                Ok(meta) => meta,
                // The rest does not exist yet (or a file stands where a folder is expected, which the
                // later open reports). Everything from here on is joined lexically onto a canonical
                // folder inside the vault, and the names carry no `..`, so it cannot climb out.
                Err(err)
                    if err.kind() == io::ErrorKind::NotFound
                        || err.kind() == io::ErrorKind::NotADirectory =>
                {
                    let mut rest = next;
                    for later in &names[index + 1..] {
                        rest.push(later);
                    }
                    return Ok(rest);
                }
                Err(source) => {
                    return Err(PathError::Unresolvable {
                        input: input.to_string(),
                        source,
                    });
                }
            };
            if meta.file_type().is_symlink() {
                if is_last && access == Access::Write {
                    return Err(PathError::IsSymlink {
                        input: input.to_string(),
                    });
                }
                let link = names[..=index].join("/");
                let target = next
                    .canonicalize()
                    .map_err(|source| PathError::BrokenSymlink {
                        input: input.to_string(),
                        link: shown(&link),
                        source,
                    })?;
                if !target.starts_with(&self.root) {
                    return Err(PathError::SymlinkEscape {
                        input: input.to_string(),
                        link: shown(&link),
                        target,
                    });
                }
                if !is_last && !target.is_dir() {
                    return Err(PathError::NotAFolder {
                        input: input.to_string(),
                        component: shown(&link),
                    });
                }
                current = target;
            } else {
                if !is_last && !meta.is_dir() {
                    // `Plan.md/x.md`: a later open would fail with ENOTDIR, which reads as a
                    // folder swapped under us; it is the caller's path that is wrong.
                    return Err(PathError::NotAFolder {
                        input: input.to_string(),
                        component: shown(&names[..=index].join("/")),
                    });
                }
                if is_last && access == Access::Write && meta.is_file() && meta.nlink() > 1 {
                    return Err(PathError::HardLink {
                        input: input.to_string(),
                        links: meta.nlink(),
                    });
                }
                current = next;
            }
        }
        Ok(current)
    }

    fn canonical_rel(&self, abs: &Path, input: &str) -> Result<String, PathError> {
        let rest = abs
            .strip_prefix(&self.root)
            .map_err(|_| PathError::EscapesVault {
                input: input.to_string(),
            })?;
        let mut names = Vec::new();
        for component in rest.components() {
            match component {
                Component::Normal(name) => match name.to_str() {
                    Some(name) => names.push(name),
                    None => {
                        return Err(PathError::InvalidName {
                            input: input.to_string(),
                            component: name.to_string_lossy().into_owned(),
                            reason: "leads to a file whose name is not valid UTF-8",
                        });
                    }
                },
                _ => {
                    return Err(PathError::EscapesVault {
                        input: input.to_string(),
                    });
                }
            }
        }
        Ok(names.join("/"))
    }
}

/// The checks that need no file system, shared by paths and patterns: size, NUL, absolute forms,
/// hidden characters and percent-encoded traversal.
fn check_lexical_prefix(input: &str, shown_input: &str) -> Result<(), PathError> {
    // First, so a huge input costs nothing more than its length.
    if input.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong {
            input: shown_input.to_string(),
            len: input.len(),
            limit: MAX_PATH_BYTES,
            what: "a path",
        });
    }
    if input.contains('\0') {
        return Err(PathError::NulByte {
            input: shown_input.to_string(),
        });
    }
    if is_absolute_like(input) {
        return Err(PathError::Absolute {
            input: shown_input.to_string(),
        });
    }
    if let Some(ch) = input.chars().find(|&c| is_hidden_char(c)) {
        return Err(PathError::HiddenCharacter {
            input: shown_input.to_string(),
            codepoint: u32::from(ch),
        });
    }
    // A look-alike percent sign (fullwidth `％２ｅ`) folds to a real escape under NFKC; check both forms.
    let folded: String = input.nfkc().collect();
    if has_encoded_traversal(input) || has_encoded_traversal(&folded) {
        return Err(PathError::EncodedTraversal {
            input: shown_input.to_string(),
        });
    }
    Ok(())
}

/// Splits a path input into its names after every lexical check; no names means the vault root.
fn lexical_names<'a>(
    input: &'a str,
    shown_input: &str,
    access: Access,
) -> Result<Vec<&'a str>, PathError> {
    if !input.is_empty() && input.chars().all(|c| c == '/') {
        // `/` alone would otherwise be reported as absolute; it names nothing either way.
        return Err(PathError::Empty {
            input: shown_input.to_string(),
        });
    }
    check_lexical_prefix(input, shown_input)?;
    if input.contains('\\') {
        return Err(PathError::Backslash {
            input: shown_input.to_string(),
        });
    }
    let mut names = Vec::new();
    for name in input.split('/') {
        match name {
            // `a//b` and `./a` are harmless spellings of `a/b` and `a`.
            "" | "." => {}
            ".." => {
                // Every `..` is refused, even `a/../b`: resolving it correctly needs the file system
                // (links), and nobody needs it in a vault-relative path.
                return Err(PathError::EscapesVault {
                    input: shown_input.to_string(),
                });
            }
            _ => {
                if name.len() > MAX_NAME_BYTES {
                    return Err(PathError::TooLong {
                        input: shown_input.to_string(),
                        len: name.len(),
                        limit: MAX_NAME_BYTES,
                        what: "one file or folder name",
                    });
                }
                check_unicode_lookalike(name, shown_input)?;
                names.push(name);
            }
        }
    }
    if access == Access::Write && input.ends_with('/') && !names.is_empty() {
        return Err(PathError::TrailingSeparator {
            input: shown_input.to_string(),
        });
    }
    Ok(names)
}

/// Characters that look like `/` or `\\` without folding to them under NFKC (the fullwidth `／`
/// and `＼` and the small `﹨` do fold, and are caught by folding). A name holding one reads as a
/// folder path: `Private∕salary.md` at the vault root looks like a note in `Private/`, where a
/// permission rule would cover it.
const SEPARATOR_LOOKALIKES: [char; 9] = [
    '\u{2044}', // ⁄ FRACTION SLASH
    '\u{2215}', // ∕ DIVISION SLASH
    '\u{2216}', // ∖ SET MINUS
    '\u{2571}', // ╱ BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
    '\u{2572}', // ╲ BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
    '\u{29F5}', // ⧵ REVERSE SOLIDUS OPERATOR
    '\u{29F8}', // ⧸ BIG SOLIDUS
    '\u{29F9}', // ⧹ BIG REVERSE SOLIDUS
    '\u{FF0F}', // ／ FULLWIDTH SOLIDUS (also folds to `/`)
];

/// Refuses, for every access, a name that folds (NFKC) to `.` or `..` or to something with a
/// separator, or that holds a separator look-alike: each reads as a different path than it is.
fn check_unicode_lookalike(name: &str, shown_input: &str) -> Result<(), PathError> {
    if name.is_ascii() {
        return Ok(());
    }
    let folded: String = name.nfkc().collect();
    if folded == "."
        || folded == ".."
        || folded.contains(['/', '\\'])
        || name.contains(SEPARATOR_LOOKALIKES)
    {
        return Err(PathError::UnicodeTraversal {
            input: shown_input.to_string(),
            component: shown(name),
        });
    }
    Ok(())
}

/// Why a name may not be created although it may be read: it starts or ends with a blank, or
/// holds a look-alike of the dot (`．`, `․`, `﹒`), so it looks like another name (`Plan．md` like
/// `Plan.md`, ` Plan.md` like `Plan.md`). Blanks at either end also break sync to Windows, which
/// drops trailing ones, and are easily lost when a name is retyped.
fn lookalike_problem(name: &str) -> Option<&'static str> {
    if name.starts_with(char::is_whitespace) {
        return Some(
            "starts with a space (or another blank), which hides in listings and is lost when the name is retyped",
        );
    }
    if name.ends_with(char::is_whitespace) {
        return Some(
            "ends with a space (or another blank), which Windows silently drops and which hides in listings",
        );
    }
    let dot_lookalike = name
        .chars()
        .any(|c| !c.is_ascii() && c.to_string().nfkc().any(|f| f == '.'));
    if dot_lookalike {
        return Some(
            "contains a look-alike of `.` (such as fullwidth `．`), so it reads as another name",
        );
    }
    None
}

/// Names that cannot be written: Windows-hostile names, vaultchat's own temp-file names and protected
/// folders.
fn check_writable_names(names: &[&str], shown_input: &str) -> Result<(), PathError> {
    for name in names {
        if let Some(reason) = windows_problem(name).or_else(|| lookalike_problem(name)) {
            return Err(PathError::InvalidName {
                input: shown_input.to_string(),
                component: shown(name),
                reason,
            });
        }
        if is_temp_name(name) {
            return Err(PathError::InvalidName {
                input: shown_input.to_string(),
                component: shown(name),
                reason: "looks like one of vaultchat's temp files, which are deleted after a crash",
            });
        }
    }
    check_protected(names, shown_input)
}

/// Refuses writes into a protected folder. Checked at every depth, not only at the root: a nested
/// `.git/` (a repository inside the vault) is as fragile as the top-level one.
fn check_protected(names: &[&str], shown_input: &str) -> Result<(), PathError> {
    for name in names {
        if let Some(dir) = PROTECTED_DIRS.iter().find(|dir| *dir == name) {
            let owner = match *dir {
                ".git" => "git",
                ".obsidian" => "Obsidian's settings",
                ".trash" => "Obsidian's trash",
                _ => "vaultchat's own configuration",
            };
            return Err(PathError::ProtectedDir {
                input: shown_input.to_string(),
                dir,
                owner,
            });
        }
    }
    Ok(())
}

/// Why Windows (and therefore a synced copy of the vault) cannot hold a file with this name.
fn windows_problem(name: &str) -> Option<&'static str> {
    if name.ends_with('.') {
        return Some("ends with a dot, which Windows silently drops");
    }
    if name.ends_with(' ') {
        return Some("ends with a space, which Windows silently drops");
    }
    if name.contains(':') {
        return Some("contains `:`, which Windows reads as a drive or an alternate data stream");
    }
    if name.contains(['<', '>', '"', '|', '?', '*']) {
        return Some("contains one of `< > \" | ? *`, which Windows does not allow in names");
    }
    // `CON.md` and `con .txt` are as reserved as `CON`: Windows looks at the part before the first dot.
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    let reserved = matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) || ["COM", "LPT"].iter().any(|prefix| {
        upper.strip_prefix(prefix).is_some_and(|digit| {
            matches!(
                digit,
                "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³"
            )
        })
    });
    if reserved {
        return Some("is a device name reserved by Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9)");
    }
    if is_short_name(name) {
        return Some(
            "looks like a Windows 8.3 short name (`NAME~1.EXT`), which may alias another file there",
        );
    }
    None
}

/// `PROGRA~1`, `OBSIDI~1.JSO`: up to six characters, `~`, digits, then an optional extension of up to
/// three.
fn is_short_name(name: &str) -> bool {
    let (stem, ext) = match name.split_once('.') {
        Some((stem, ext)) => (stem, Some(ext)),
        None => (name, None),
    };
    if ext.is_some_and(|ext| ext.len() > 3) {
        return false;
    }
    match stem.split_once('~') {
        Some((base, digits)) => {
            !base.is_empty()
                && base.len() <= 6
                && !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && base.len() + 1 + digits.len() <= 8
        }
        None => false,
    }
}

fn is_absolute_like(input: &str) -> bool {
    let bytes = input.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    // `file:///x`, `smb://host/x`, ...: a scheme is letters (and `+-.`) followed by `:`.
    let scheme = input.split_once(':').is_some_and(|(scheme, rest)| {
        rest.starts_with("//")
            && !scheme.is_empty()
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    });
    // `~/x` is the home folder to a shell and to many tools that expand it before us.
    let home = input == "~" || input.starts_with("~/");
    input.starts_with('/') || input.starts_with('\\') || home || drive || scheme
}

/// Bidirectional controls, zero-width characters and every control character: they disguise a name
/// (`evil\u{202E}dm.exe` shows as `evilexe.md`) and have no business in a note's path.
pub(crate) fn is_hidden_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Whether any `%XX` escape decodes, after up to a few rounds of decoding (`%252e` → `%2e` → `.`), to a
/// dot, a separator, a NUL, or an overlong UTF-8 sequence (`%c0%ae`, which lax decoders read as `.`).
fn has_encoded_traversal(input: &str) -> bool {
    let mut current = input.as_bytes().to_vec();
    for _ in 0..4 {
        let mut decoded = Vec::with_capacity(current.len());
        let mut index = 0;
        let mut changed = false;
        while index < current.len() {
            if current[index] == b'%'
                && let Some(byte) = hex_pair(current.get(index + 1), current.get(index + 2))
            {
                if matches!(byte, b'.' | b'/' | b'\\' | 0 | 0xC0 | 0xC1) {
                    return true;
                }
                // Overlong three- and four-byte forms start with E0 8x/9x or F0 8x.
                if matches!(byte, 0xE0 | 0xF0)
                    && current.get(index + 3) == Some(&b'%')
                    && hex_pair(current.get(index + 4), current.get(index + 5))
                        .is_some_and(|next| (0x80..0xA0).contains(&next))
                {
                    return true;
                }
                decoded.push(byte);
                index += 3;
                changed = true;
            } else {
                decoded.push(current[index]);
                index += 1;
            }
        }
        if !changed {
            return false;
        }
        current = decoded;
    }
    // Still decoding after four rounds: nobody names a note like that, and a fifth round might traverse.
    true
}

fn hex_pair(high: Option<&u8>, low: Option<&u8>) -> Option<u8> {
    let high = char::from(*high?).to_digit(16)?;
    let low = char::from(*low?).to_digit(16)?;
    u8::try_from(high * 16 + low).ok()
}

/// The input as it appears in messages: very long inputs shortened ([`crate::quote::shorten`])
/// and hidden characters made visible (so a bidi override cannot reorder the message itself).
fn shown(input: &str) -> String {
    let short = crate::quote::shorten(input);
    let mut out = String::with_capacity(short.len());
    for c in short.chars() {
        if c == '\0' {
            out.push_str("\\0");
        } else if is_hidden_char(c) {
            out.push_str(&format!("\\u{{{:04X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn vault() -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::open(dir.path()).unwrap();
        (dir, vault)
    }

    fn kind(vault: &Vault, input: &str, access: Access) -> &'static str {
        match vault.resolve(input, access) {
            Ok(path) => panic!("{input:?} was accepted as {path:?}"),
            Err(err) => err.kind(),
        }
    }

    #[test]
    fn normalises_spelling() {
        let (_dir, vault) = vault();
        let path = vault.resolve("./a//b/c.md", Access::Write).unwrap();
        assert_eq!(path.rel(), "a/b/c.md");
        assert_eq!(path.abs(), vault.root().join("a/b/c.md"));
        assert!(vault.resolve("", Access::Read).unwrap().is_root());
        assert_eq!(vault.resolve("a/", Access::Read).unwrap().rel(), "a");
    }

    #[test]
    fn a_path_through_a_file_is_not_a_folder() {
        let (dir, vault) = vault();
        std::fs::write(dir.path().join("Plan.md"), "x").unwrap();
        std::os::unix::fs::symlink("Plan.md", dir.path().join("linked.md")).unwrap();
        for access in [Access::Read, Access::Write] {
            assert_eq!(kind(&vault, "Plan.md/x.md", access), "not_a_folder");
            assert_eq!(kind(&vault, "Plan.md/deeper/x.md", access), "not_a_folder");
            assert_eq!(kind(&vault, "linked.md/x.md", access), "not_a_folder");
        }
        let message = vault
            .resolve("Plan.md/x.md", Access::Write)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("`Plan.md`, which is a file, not a folder"),
            "{message}"
        );
        // The file itself, and a new note beside it, are fine.
        assert!(vault.resolve("Plan.md", Access::Write).is_ok());
        assert!(vault.resolve("New/x.md", Access::Write).is_ok());
        // Through the root handle (a file put there after the check): the same plain error.
        let error = vault
            .handle()
            .folder(&["Plan.md"], true, "Plan.md/x.md")
            .err()
            .unwrap();
        assert!(
            matches!(error, ContainedError::NotAFolder { .. }),
            "{error}"
        );
    }

    #[test]
    fn percent_decoding() {
        assert!(has_encoded_traversal("%2e%2e%2f"));
        assert!(has_encoded_traversal("%252E%252e"));
        assert!(has_encoded_traversal("%25252e"));
        assert!(has_encoded_traversal("%c0%ae"));
        assert!(has_encoded_traversal("%e0%80%ae"));
        assert!(has_encoded_traversal("%00"));
        assert!(!has_encoded_traversal("100% done.md"));
        assert!(!has_encoded_traversal("%e6%97%a5.md"));
        assert!(!has_encoded_traversal("%zz%"));
    }

    #[test]
    fn windows_names() {
        for bad in [
            "CON", "con.md", "Nul.txt", "COM1", "lpt9.md", "AUX .md", "x.", "x ", "a:b", "a?b",
            "PROGRA~1",
        ] {
            assert!(windows_problem(bad).is_some(), "{bad}");
        }
        for good in [
            "CONTENT.md",
            "COM10.md",
            "console.md",
            "a~b.md",
            "Plan.md",
            ".obsidian",
        ] {
            assert_eq!(windows_problem(good), None, "{good}");
        }
    }

    #[test]
    fn separator_lookalikes_are_refused_for_reads_and_writes() {
        let (_dir, vault) = vault();
        for name in [
            "a\u{2215}b.md",
            "a\u{2044}b.md",
            "a\u{29F8}b.md",
            "a\u{FF0F}b.md",
            "a\u{FF3C}b.md",
            "a\u{2216}b.md",
            "\u{FF0E}\u{FF0E}",
        ] {
            for access in [Access::Read, Access::Write] {
                assert_eq!(kind(&vault, name, access), "unicode_traversal", "{name}");
            }
            let err = vault.resolve(name, Access::Read).unwrap_err().to_string();
            assert!(err.contains("look-alike"), "{err}");
        }
        // Scripts that merely contain slash-like strokes are ordinary names.
        for name in ["ノート.md", "日本語/メモ.md", "Ünïcödé.md"] {
            vault.resolve(name, Access::Write).unwrap();
        }
    }

    #[test]
    fn blanks_at_either_end_and_dot_lookalikes_are_refused_for_writes() {
        let (_dir, vault) = vault();
        for name in [
            " Plan.md",
            "Plan.md ",
            "\u{3000}Plan.md",
            "Plan.md\u{00A0}",
            " Projects/Plan.md",
            "Plan\u{FF0E}md",
            "Plan.md\u{FF0E}",
            "Plan\u{2024}md",
            "Plan.md.",
        ] {
            assert_eq!(
                kind(&vault, name, Access::Write),
                "invalid_name",
                "{name:?}"
            );
        }
        let err = vault
            .resolve(" Plan.md", Access::Write)
            .unwrap_err()
            .to_string();
        assert!(err.contains("starts with a space"), "{err}");
        let err = vault
            .resolve("Plan\u{FF0E}md", Access::Write)
            .unwrap_err()
            .to_string();
        assert!(err.contains("look-alike of `.`"), "{err}");
        // Reading such a name (a file some other program made) is harmless.
        vault.resolve(" Plan.md", Access::Read).unwrap();
        vault.resolve("Plan\u{FF0E}md", Access::Read).unwrap();
        // Blanks inside a name are fine.
        vault.resolve("Weekly plan 2.md", Access::Write).unwrap();
    }

    #[test]
    fn absolute_forms() {
        for bad in ["/x", "\\\\srv\\share", "C:\\x", "c:x", "file:///etc", "~/x"] {
            assert!(is_absolute_like(bad), "{bad}");
        }
        for good in ["ab:c.md", "notes/x.md", "Plan: draft.md"] {
            assert!(!is_absolute_like(good), "{good}");
        }
    }

    #[test]
    fn shown_makes_hidden_visible_and_short() {
        assert_eq!(shown("a\u{202E}b\0"), "a\\u{202E}b\\0");
        let long = "x".repeat(10_000);
        assert!(shown(&long).len() < 300);
        assert!(shown(&long).ends_with("… (10000 characters)"));
    }

    #[test]
    fn huge_input_is_cheap_and_refused() {
        let (_dir, vault) = vault();
        let huge = "a/".repeat(5_000_000);
        assert_eq!(kind(&vault, &huge, Access::Read), "too_long");
    }

    #[test]
    fn write_refuses_temp_names() {
        let (_dir, vault) = vault();
        assert_eq!(
            kind(&vault, ".a.md.vaultchat-x1y2z3.tmp", Access::Write),
            "invalid_name"
        );
    }

    #[test]
    fn patterns() {
        let (_dir, vault) = vault();
        for good in ["", "**/*.md", "Projects/**", "{a,b}/*.md", "[.]x"] {
            vault.check_pattern(good).unwrap();
        }
        for (bad, expected) in [
            ("**/../../*", "escapes_vault"),
            ("{..,x}/*", "escapes_vault"),
            ("/etc/*", "absolute"),
            ("%2e%2e/*", "encoded_traversal"),
            ("a\0*", "nul_byte"),
            ("．．/*", "unicode_traversal"),
        ] {
            assert_eq!(
                vault.check_pattern(bad).unwrap_err().kind(),
                expected,
                "{bad}"
            );
        }
    }
}
