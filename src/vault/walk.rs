//! Listing the notes of a vault.
//!
//! A note is a regular `.md` file. Dot-entries (`.git/`, `.obsidian/`, `.trash/`, `.vaultchat/`,
//! editor swap files, vaultchat's own temp files) are not notes, and symbolic links are not
//! followed: a link could point outside the vault (its content would then leak into the index) or
//! back into it (the same note twice, or a loop).

use super::contained::{Folder, Kind, RootHandle};
use std::path::Path;
use std::time::UNIX_EPOCH;

/// What the walker learns about one note from a single `stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteStat {
    /// Vault-relative path with `/` separators.
    pub rel: String,
    /// Modification time in nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    pub size: u64,
}

/// Options that narrow a walk.
#[derive(Debug, Clone, Default)]
pub struct WalkOptions {
    /// Vault-relative folders to skip entirely.
    pub exclude_folders: Vec<String>,
}

/// A folder that could not be read during a walk; the rest of the vault is still listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkProblem {
    pub rel: String,
    pub message: String,
}

/// The result of walking a vault.
#[derive(Debug, Default)]
pub struct Walk {
    pub notes: Vec<NoteStat>,
    /// Vault-relative folders (not the root), in walk order.
    pub folders: Vec<String>,
    pub problems: Vec<WalkProblem>,
}

/// True for a file name vaultchat treats as a note.
pub fn is_note_name(name: &str) -> bool {
    !name.starts_with('.')
        && name.len() > 3
        && name
            .get(name.len() - 3..)
            .is_some_and(|ext| ext.eq_ignore_ascii_case(".md"))
}

/// True when a vault-relative path lies in a part of the vault that is never indexed: a
/// dot-entry, or a name holding a character the guard refuses in every path (a control,
/// bidirectional or zero-width character, [`has_disguising_char`]).
pub fn is_hidden_rel(rel: &str) -> bool {
    rel.split('/')
        .any(|c| c.starts_with('.') || has_disguising_char(c).is_some())
}

/// The first character of `name` that the guard refuses in any path (so no tool could read the
/// file): such names are not listed, rather than listed and then unreadable.
pub fn has_disguising_char(name: &str) -> Option<char> {
    name.chars().find(|&c| super::guard::is_hidden_char(c))
}

/// Modification time of `meta` in nanoseconds (0 when the platform cannot tell).
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Lists one folder: its notes go to `out`, its subfolders (sorted, not excluded) are returned.
fn list_folder(
    folder: &Folder,
    rel_dir: &str,
    options: &WalkOptions,
    out: &mut Walk,
) -> Vec<String> {
    let entries = match folder.entries() {
        Ok(entries) => entries,
        Err(e) => {
            out.problems.push(WalkProblem {
                rel: rel_dir.to_string(),
                message: e.to_string(),
            });
            return Vec::new();
        }
    };
    let mut subdirs = Vec::new();
    for (name, kind) in entries {
        let name = match name {
            Ok(name) => name,
            Err(lossy) => {
                // A name that is not UTF-8 cannot be named in a tool call or shown faithfully.
                out.problems.push(WalkProblem {
                    rel: format!("{rel_dir}/{lossy}"),
                    message: "the file name is not valid UTF-8; rename it to include it".into(),
                });
                continue;
            }
        };
        if name.starts_with('.') {
            continue;
        }
        if let Some(c) = has_disguising_char(&name) {
            // The guard refuses such a name in every path, so a listed note could never be read.
            let shown: String = name.escape_debug().collect();
            out.problems.push(WalkProblem {
                rel: if rel_dir.is_empty() {
                    shown
                } else {
                    format!("{rel_dir}/{shown}")
                },
                message: format!(
                    "the name holds the control or invisible character U+{:04X}, which no tool may name (it can disguise a name); rename it to include it",
                    u32::from(c)
                ),
            });
            continue;
        }
        let rel = if rel_dir.is_empty() {
            name.clone()
        } else {
            format!("{rel_dir}/{name}")
        };
        match kind {
            Kind::Folder => {
                if !options.exclude_folders.iter().any(|ex| ex == &rel) {
                    subdirs.push(rel);
                }
            }
            Kind::File if is_note_name(&name) => match folder.file_stat(&name) {
                Ok(Some((size, mtime_ns))) => out.notes.push(NoteStat {
                    rel,
                    mtime_ns,
                    size,
                }),
                // Replaced by something else since it was listed: not a note now.
                Ok(None) => {}
                Err(e) => out.problems.push(WalkProblem {
                    rel,
                    message: e.to_string(),
                }),
            },
            Kind::File | Kind::Other => {}
        }
    }
    subdirs.sort_unstable();
    out.folders.extend(subdirs.iter().cloned());
    subdirs
}

/// Walk the vault rooted at `root` (already canonical). Every folder is opened from one handle on
/// the root, one name at a time without following links, so a folder swapped for a link while the
/// walk runs is reported as a problem instead of listing what lies outside.
pub fn walk(root: &Path, options: &WalkOptions) -> Walk {
    walk_under(root, "", options, usize::MAX)
}

/// [`walk`] of the folder `folder` of the vault (vault-relative, canonical names; "" is the
/// root) alone, stopping once `max_notes` notes are found: for a folder whose notes are wanted
/// without walking the rest of the vault (the templates folder).
pub fn walk_under(root: &Path, folder: &str, options: &WalkOptions, max_notes: usize) -> Walk {
    let mut out = Walk::default();
    let handle = match RootHandle::open(root) {
        Ok(handle) => handle,
        Err(e) => {
            out.problems.push(WalkProblem {
                rel: String::new(),
                message: e.to_string(),
            });
            return out;
        }
    };
    let names: Vec<&str> = folder.split('/').filter(|n| !n.is_empty()).collect();
    let start = names.join("/");
    let root_folder = match handle.folder(&names, false, &start) {
        Ok(folder) => folder,
        Err(e) => {
            out.problems.push(WalkProblem {
                rel: start,
                message: e.to_string(),
            });
            return out;
        }
    };
    // Depth first in name order; only the folders on the current path are open, and each is opened
    // from its parent's handle.
    let mut frames = Vec::new();
    let children = list_folder(&root_folder, &start, options, &mut out);
    frames.push((root_folder, children.into_iter()));
    while out.notes.len() < max_notes
        && let Some((folder, children)) = frames.last_mut()
    {
        let Some(rel) = children.next() else {
            frames.pop();
            continue;
        };
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        match folder.open_folder(name, &rel) {
            Ok(sub) => {
                let children = list_folder(&sub, &rel, options, &mut out);
                frames.push((sub, children.into_iter()));
            }
            Err(e) => out.problems.push(WalkProblem {
                rel: rel.clone(),
                message: e.to_string(),
            }),
        }
    }
    out.notes.truncate(max_notes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn lists_notes_and_skips_dot_entries_links_and_excluded_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "a.md",
            "B.MD",
            "notes.txt",
            ".hidden.md",
            "Sub/c.md",
            "Sub/Deep/d.md",
            ".obsidian/w.md",
            ".trash/old.md",
            "Templates/t.md",
            "Sub/.c.md.vaultchat-x.tmp",
        ] {
            let p = root.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, "x").unwrap();
        }
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linked")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("s.md")).unwrap();

        let walk = walk(
            root,
            &WalkOptions {
                exclude_folders: vec!["Templates".into()],
            },
        );
        let mut rels: Vec<&str> = walk.notes.iter().map(|n| n.rel.as_str()).collect();
        rels.sort_unstable();
        assert_eq!(rels, ["B.MD", "Sub/Deep/d.md", "Sub/c.md", "a.md"]);
        assert_eq!(walk.folders, ["Sub", "Sub/Deep"]);
        assert!(walk.problems.is_empty());
        assert!(walk.notes.iter().all(|n| n.size == 1 && n.mtime_ns > 0));
    }

    #[test]
    fn a_walk_under_a_folder_lists_that_folder_alone_and_stops_at_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in ["a.md", "T/x.md", "T/Sub/y.md", "T/Sub/z.md", "Tx/no.md"] {
            let p = root.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, "x").unwrap();
        }
        // A name the walk reports as a problem, outside the folder: never met.
        fs::write(root.join("bad\u{202e}.md"), "x").unwrap();
        let under = walk_under(root, "T", &WalkOptions::default(), usize::MAX);
        let mut rels: Vec<&str> = under.notes.iter().map(|n| n.rel.as_str()).collect();
        rels.sort_unstable();
        assert_eq!(rels, ["T/Sub/y.md", "T/Sub/z.md", "T/x.md"]);
        assert_eq!(under.folders, ["T/Sub"]);
        assert!(under.problems.is_empty(), "{:?}", under.problems);
        let bounded = walk_under(root, "T", &WalkOptions::default(), 2);
        assert_eq!(bounded.notes.len(), 2);
        let missing = walk_under(root, "Gone", &WalkOptions::default(), 10);
        assert!(missing.notes.is_empty() && missing.problems.len() == 1);
        // The whole vault's walk does meet it.
        assert_eq!(walk(root, &WalkOptions::default()).problems.len(), 1);
    }

    #[test]
    fn note_names_and_hidden_paths() {
        assert!(is_note_name("a.md"));
        assert!(is_note_name("日本語.Md"));
        assert!(!is_note_name(".md"));
        assert!(!is_note_name("a.markdownx"));
        assert!(!is_note_name(".swap.md"));
        assert!(is_hidden_rel(".git/x.md"));
        assert!(is_hidden_rel("a/.trash/x.md"));
        assert!(!is_hidden_rel("a/b.md"));
        assert!(is_hidden_rel("a\u{1}b/c.md"));
        assert!(is_hidden_rel("evil\u{202E}dm.md"));
    }

    #[test]
    fn names_the_guard_refuses_are_not_listed_but_reported() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "ok.md",
            "Note\u{1}.md",
            "bidi\u{202E}dm.md",
            "Bad\u{7}/inner.md",
        ] {
            let p = root.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, "x").unwrap();
        }
        let walk = walk(root, &WalkOptions::default());
        let rels: Vec<&str> = walk.notes.iter().map(|n| n.rel.as_str()).collect();
        assert_eq!(rels, ["ok.md"]);
        assert!(walk.folders.is_empty(), "{:?}", walk.folders);
        assert_eq!(walk.problems.len(), 3, "{:?}", walk.problems);
        // Reported escaped: nothing raw reaches a terminal.
        assert!(
            walk.problems
                .iter()
                .all(|p| !p.rel.chars().any(super::super::guard::is_hidden_char)),
            "{:?}",
            walk.problems
        );
    }
}
