//! Recovery files: the unsaved text of a note, kept when the app is stopped by a signal with
//! autosave off (SIGTERM, SIGHUP: nobody is there to answer "save?"), so that it is not lost.
//!
//! In the data folder (never in the vault: it is not a note, and a sync tool must not carry it
//! elsewhere): `recovery/<sha256 of the vault root and the note path>.<n>.json`, holding the
//! vault root, the note's path, when it was written and the text. A note may have several: each
//! signal writes a new file with the next number, so a kept text the person left for later is
//! never replaced by a newer one (docs/decisions.md §70); they are offered newest (highest
//! number) first. `<sha256>.json`, the one file an earlier version kept per note, is the oldest.
//! Written atomically (a temporary file in the same folder, synced, then linked into place under
//! a name nothing holds), read with a size bound, and removed one by one once the person has
//! restored (and saved) or discarded it.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// A recovery file larger than this is not read (the notes the editor opens are smaller).
pub const MAX_RECOVERY_BYTES: u64 = 64 * 1024 * 1024;

/// Writers racing for the same next number (two processes on one note) try this many more.
const NAME_ATTEMPTS: u64 = 64;

/// What a recovery file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    /// The vault's root folder, as opened.
    pub vault: PathBuf,
    /// The note, vault-relative.
    pub path: String,
    /// When it was written (Unix milliseconds, `time::now_ms`).
    pub written_ms: i64,
    /// The editor's unsaved text.
    pub text: String,
}

/// The newest recovery of a note, and which file holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The file's name in the recovery folder: what [`remove`] forgets.
    pub file: String,
    pub recovery: Recovery,
    /// How many older recovery files the note has (offered after this one; not read yet).
    pub older: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    #[error("recovery file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("recovery file {path} is larger than {MAX_RECOVERY_BYTES} bytes")]
    TooLarge { path: PathBuf },
    #[error("recovery file {path} is unreadable: {source}")]
    Format {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("no free name for a recovery file in {path}")]
    NoName { path: PathBuf },
}

/// The folder of recovery files under the data folder.
pub fn folder(data_dir: &Path) -> PathBuf {
    data_dir.join("recovery")
}

/// What every recovery file of note `path` of the vault at `vault` is named after.
fn digest(vault: &Path, path: &str) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hasher.update(vault.as_os_str().as_encoded_bytes());
    hasher.update([0]);
    hasher.update(path.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The number of recovery file `name` of the note named after `digest`: `<digest>.json` is 0,
/// `<digest>.<n>.json` is n; `None` for any other name.
fn number_of(name: &str, digest: &str) -> Option<u64> {
    let rest = name.strip_prefix(digest)?.strip_suffix(".json")?;
    if rest.is_empty() {
        return Some(0);
    }
    let digits = rest.strip_prefix('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The recovery files of the note named after `digest`, newest (highest number) first.
fn files_of(dir: &Path, digest: &str) -> Result<Vec<(u64, String)>, RecoveryError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(RecoveryError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut files: Vec<(u64, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            Some((number_of(&name, digest)?, name))
        })
        .collect();
    files.sort_unstable_by(|a, b| b.cmp(a));
    Ok(files)
}

/// Keep `recovery` in a new file, after (never over) the recoveries the note has already.
pub fn write(data_dir: &Path, recovery: &Recovery) -> Result<PathBuf, RecoveryError> {
    let dir = folder(data_dir);
    let io = |source| RecoveryError::Io {
        path: dir.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let digest = digest(&recovery.vault, &recovery.path);
    let bytes = serde_json::to_vec(recovery).map_err(|source| RecoveryError::Format {
        path: dir.clone(),
        source,
    })?;
    // What `newest` would refuse to read is not kept: the caller says the text was lost rather
    // than that it is waiting for the next opening.
    if bytes.len() as u64 > MAX_RECOVERY_BYTES {
        return Err(RecoveryError::TooLarge { path: dir });
    }
    // A temporary file in the same folder, synced, then linked under a name nothing holds: a
    // crash leaves the recovery whole or not at all, and no older one is replaced.
    let mut temp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
    temp.write_all(&bytes).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    let next = files_of(&dir, &digest)?.first().map_or(1, |(n, _)| n + 1);
    let mut target = None;
    for number in next..next + NAME_ATTEMPTS {
        let candidate = dir.join(format!("{digest}.{number}.json"));
        match temp.persist_noclobber(&candidate) {
            Ok(_) => {
                target = Some(candidate);
                break;
            }
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => temp = e.file,
            Err(e) => return Err(io(e.error)),
        }
    }
    let target = target.ok_or(RecoveryError::NoName { path: dir.clone() })?;
    if let Ok(folder) = std::fs::File::open(&dir)
        && let Err(e) = folder.sync_all()
    {
        tracing::warn!("recovery folder not synced: {e}");
    }
    Ok(target)
}

/// The newest recovery of note `path` of the vault at `vault`, if one was kept. A damaged file
/// is passed over with a warning (an older one may still be whole); a file whose recorded vault
/// or note is not this one is not this note's.
pub fn newest(data_dir: &Path, vault: &Path, path: &str) -> Result<Option<Kept>, RecoveryError> {
    let dir = folder(data_dir);
    let files = files_of(&dir, &digest(vault, path))?;
    for (index, (_, name)) in files.iter().enumerate() {
        match read_file(&dir.join(name)) {
            // A hash collision or a file copied from elsewhere is not this note's recovery.
            Ok(recovery) if recovery.vault != vault || recovery.path != path => {}
            Ok(recovery) => {
                return Ok(Some(Kept {
                    file: name.clone(),
                    recovery,
                    older: files.len() - index - 1,
                }));
            }
            Err(e @ (RecoveryError::Format { .. } | RecoveryError::TooLarge { .. })) => {
                tracing::warn!("{e}; an older recovery is looked for");
            }
            // Gone since the folder was listed (another vaultchat discarded it): the older
            // ones are still offered.
            Err(RecoveryError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

fn read_file(file: &Path) -> Result<Recovery, RecoveryError> {
    let io = |source| RecoveryError::Io {
        path: file.to_path_buf(),
        source,
    };
    let opened = std::fs::File::open(file).map_err(io)?;
    let mut bytes = Vec::new();
    opened
        .take(MAX_RECOVERY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_RECOVERY_BYTES {
        return Err(RecoveryError::TooLarge {
            path: file.to_path_buf(),
        });
    }
    serde_json::from_slice(&bytes).map_err(|source| RecoveryError::Format {
        path: file.to_path_buf(),
        source,
    })
}

/// Forget recovery file `file` of note `path` (restored and saved, or discarded); a name that
/// is not one of that note's files is left alone, and one already gone is fine.
pub fn remove(data_dir: &Path, vault: &Path, path: &str, file: &str) -> Result<(), RecoveryError> {
    if number_of(file, &digest(vault, path)).is_none() {
        tracing::warn!("{file:?} is not a recovery file of {path}; not removed");
        return Ok(());
    }
    let file = folder(data_dir).join(file);
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(RecoveryError::Io { path: file, source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(vault: &str, path: &str, text: &str, at: i64) -> Recovery {
        Recovery {
            vault: PathBuf::from(vault),
            path: path.into(),
            written_ms: at,
            text: text.into(),
        }
    }

    fn newest_text(data: &Path, vault: &str, path: &str) -> Option<(String, usize)> {
        newest(data, Path::new(vault), path)
            .unwrap()
            .map(|k| (k.recovery.text, k.older))
    }

    /// A text whose file would be larger than the read allows is refused at the write (the
    /// caller logs it as lost), not written and then passed over at the next opening. Quotes
    /// grow under JSON's escaping: a text under the bound can make a file over it.
    #[test]
    fn a_recovery_too_large_to_read_back_is_not_written() {
        let data = tempfile::tempdir().unwrap();
        let quotes = "\"".repeat(MAX_RECOVERY_BYTES as usize / 2 + 1);
        let big = kept("/notes/a", "Plan.md", &quotes, 1);
        assert!(matches!(
            write(data.path(), &big),
            Err(RecoveryError::TooLarge { .. })
        ));
        assert_eq!(newest_text(data.path(), "/notes/a", "Plan.md"), None);
        let left: Vec<_> = std::fs::read_dir(folder(data.path()))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_recovery_is_kept_per_vault_and_note_outside_the_vault_and_never_replaced() {
        let data = tempfile::tempdir().unwrap();
        let a = kept("/notes/a", "Plan.md", "typed, not saved\n", 1);
        let file = write(data.path(), &a).unwrap();
        assert!(file.starts_with(data.path().join("recovery")), "{file:?}");
        let first = newest(data.path(), Path::new("/notes/a"), "Plan.md")
            .unwrap()
            .unwrap();
        assert_eq!((first.recovery, first.older), (a, 0));
        // Another vault's note of the same name, and another note of the same vault, are apart.
        assert_eq!(newest_text(data.path(), "/notes/b", "Plan.md"), None);
        assert_eq!(newest_text(data.path(), "/notes/a", "Other.md"), None);
        // A second signal (the person chose "later" for the first) keeps both: newest first.
        // Its clock may even be behind the first's; the order is the order of writing.
        write(data.path(), &kept("/notes/a", "Plan.md", "typed more\n", 0)).unwrap();
        let second = newest(data.path(), Path::new("/notes/a"), "Plan.md")
            .unwrap()
            .unwrap();
        assert_eq!(
            (second.recovery.text.as_str(), second.older),
            ("typed more\n", 1)
        );
        // Nothing but the two recovery files is left in the folder (no temporary files).
        let names: Vec<_> = std::fs::read_dir(folder(data.path()))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // Forgetting the newest brings the older one back; forgetting it leaves none.
        remove(data.path(), Path::new("/notes/a"), "Plan.md", &second.file).unwrap();
        assert_eq!(
            newest_text(data.path(), "/notes/a", "Plan.md"),
            Some(("typed, not saved\n".into(), 0))
        );
        remove(data.path(), Path::new("/notes/a"), "Plan.md", &first.file).unwrap();
        assert_eq!(newest_text(data.path(), "/notes/a", "Plan.md"), None);
        remove(data.path(), Path::new("/notes/a"), "Plan.md", &first.file).unwrap();
    }

    #[test]
    fn only_a_file_of_the_note_is_removed() {
        let data = tempfile::tempdir().unwrap();
        let plan = write(data.path(), &kept("/notes/a", "Plan.md", "p", 1)).unwrap();
        let other = write(data.path(), &kept("/notes/a", "Other.md", "o", 1)).unwrap();
        std::fs::write(data.path().join("elsewhere.json"), b"{}").unwrap();
        let other_name = other.file_name().unwrap().to_string_lossy().to_string();
        for name in [other_name.as_str(), "../elsewhere.json", "", "."] {
            remove(data.path(), Path::new("/notes/a"), "Plan.md", name).unwrap();
        }
        assert!(plan.exists() && other.exists());
        assert!(data.path().join("elsewhere.json").exists());
    }

    #[test]
    fn a_recovery_of_the_one_file_naming_is_still_offered_as_the_oldest() {
        let data = tempfile::tempdir().unwrap();
        let vault = Path::new("/notes/a");
        std::fs::create_dir_all(folder(data.path())).unwrap();
        let legacy = folder(data.path()).join(format!("{}.json", digest(vault, "Plan.md")));
        let old = kept("/notes/a", "Plan.md", "from before\n", 5);
        std::fs::write(&legacy, serde_json::to_vec(&old).unwrap()).unwrap();
        assert_eq!(
            newest_text(data.path(), "/notes/a", "Plan.md"),
            Some(("from before\n".into(), 0))
        );
        write(data.path(), &kept("/notes/a", "Plan.md", "newer\n", 1)).unwrap();
        assert_eq!(
            newest_text(data.path(), "/notes/a", "Plan.md"),
            Some(("newer\n".into(), 1))
        );
        assert!(legacy.exists());
    }

    #[test]
    fn a_damaged_or_foreign_recovery_file_is_not_taken_for_the_note() {
        let data = tempfile::tempdir().unwrap();
        let vault = Path::new("/notes/a");
        let older = write(data.path(), &kept("/notes/a", "Plan.md", "older\n", 1)).unwrap();
        // The newest is damaged: it is passed over (with a warning) and the older one offered.
        let damaged = write(data.path(), &kept("/notes/a", "Plan.md", "x", 2)).unwrap();
        std::fs::write(&damaged, b"{not json").unwrap();
        assert_eq!(
            newest_text(data.path(), "/notes/a", "Plan.md"),
            Some(("older\n".into(), 0))
        );
        // A file for another note copied over this one's name.
        let other = serde_json::to_vec(&kept("/notes/a", "Other.md", "x", 1)).unwrap();
        std::fs::write(&older, other).unwrap();
        assert_eq!(newest(data.path(), vault, "Plan.md").unwrap(), None);
    }

    /// A newest file that is gone when it is opened (another vaultchat discarded it after the
    /// folder was listed; here a link to nothing under its name) hides none of the older ones.
    #[cfg(unix)]
    #[test]
    fn a_recovery_gone_when_opened_leaves_the_older_ones_offered() {
        let data = tempfile::tempdir().unwrap();
        write(data.path(), &kept("/notes/a", "Plan.md", "older\n", 1)).unwrap();
        let newer = write(data.path(), &kept("/notes/a", "Plan.md", "newer\n", 2)).unwrap();
        std::fs::remove_file(&newer).unwrap();
        std::os::unix::fs::symlink(data.path().join("nothing"), &newer).unwrap();
        assert_eq!(
            newest_text(data.path(), "/notes/a", "Plan.md"),
            Some(("older\n".into(), 0))
        );
    }
}
