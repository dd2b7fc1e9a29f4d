//! Recovery files: the unsaved text of a note, kept when the app is stopped by a signal with
//! autosave off (SIGTERM, SIGHUP: nobody is there to answer "save?"), so that it is not lost.
//!
//! One file per vault and note, in the data folder (never in the vault: it is not a note, and a
//! sync tool must not carry it elsewhere): `recovery/<sha256 of the vault root and the note
//! path>.json`, holding the vault root, the note's path, when it was written and the text.
//! Written atomically (a temporary file in the same folder, synced, then renamed), read with a
//! size bound, and removed once the person has restored or discarded it.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// A recovery file larger than this is not read (the notes the editor opens are smaller).
pub const MAX_RECOVERY_BYTES: u64 = 64 * 1024 * 1024;

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
}

/// The folder of recovery files under the data folder.
pub fn folder(data_dir: &Path) -> PathBuf {
    data_dir.join("recovery")
}

/// The recovery file of note `path` of the vault at `vault`.
pub fn file_for(data_dir: &Path, vault: &Path, path: &str) -> PathBuf {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hasher.update(vault.as_os_str().as_encoded_bytes());
    hasher.update([0]);
    hasher.update(path.as_bytes());
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    folder(data_dir).join(format!("{digest}.json"))
}

/// Keep `text` as the unsaved text of note `path`, replacing an older recovery of it.
pub fn write(data_dir: &Path, recovery: &Recovery) -> Result<PathBuf, RecoveryError> {
    let target = file_for(data_dir, &recovery.vault, &recovery.path);
    let dir = folder(data_dir);
    let io = |source| RecoveryError::Io {
        path: target.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let bytes = serde_json::to_vec(recovery).map_err(|source| RecoveryError::Format {
        path: target.clone(),
        source,
    })?;
    // A temporary file in the same folder, synced, then renamed over the target: a crash
    // leaves the old recovery or the new one, never half of one.
    let mut temp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
    temp.write_all(&bytes).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    temp.persist(&target).map_err(|e| io(e.error))?;
    if let Ok(folder) = std::fs::File::open(&dir)
        && let Err(e) = folder.sync_all()
    {
        tracing::warn!("recovery folder not synced: {e}");
    }
    Ok(target)
}

/// The recovery of note `path` of the vault at `vault`, if one was kept.
pub fn read(data_dir: &Path, vault: &Path, path: &str) -> Result<Option<Recovery>, RecoveryError> {
    let file = file_for(data_dir, vault, path);
    let io = |source| RecoveryError::Io {
        path: file.clone(),
        source,
    };
    let opened = match std::fs::File::open(&file) {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mut bytes = Vec::new();
    opened
        .take(MAX_RECOVERY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_RECOVERY_BYTES {
        return Err(RecoveryError::TooLarge { path: file });
    }
    let recovery: Recovery =
        serde_json::from_slice(&bytes).map_err(|source| RecoveryError::Format {
            path: file.clone(),
            source,
        })?;
    // A hash collision or a file copied from elsewhere is not this note's recovery.
    if recovery.vault != vault || recovery.path != path {
        return Ok(None);
    }
    Ok(Some(recovery))
}

/// Forget the recovery of note `path` (restored or discarded); none is fine.
pub fn remove(data_dir: &Path, vault: &Path, path: &str) -> Result<(), RecoveryError> {
    let file = file_for(data_dir, vault, path);
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

    #[test]
    fn a_recovery_is_kept_per_vault_and_note_outside_the_vault_and_replaced_whole() {
        let data = tempfile::tempdir().unwrap();
        let a = kept("/notes/a", "Plan.md", "typed, not saved\n", 1);
        let file = write(data.path(), &a).unwrap();
        assert!(file.starts_with(data.path().join("recovery")), "{file:?}");
        assert_eq!(
            read(data.path(), Path::new("/notes/a"), "Plan.md").unwrap(),
            Some(a)
        );
        // Another vault's note of the same name, and another note of the same vault, are apart.
        assert_eq!(
            read(data.path(), Path::new("/notes/b"), "Plan.md").unwrap(),
            None
        );
        assert_eq!(
            read(data.path(), Path::new("/notes/a"), "Other.md").unwrap(),
            None
        );
        let newer = kept("/notes/a", "Plan.md", "typed more\n", 2);
        write(data.path(), &newer).unwrap();
        assert_eq!(
            read(data.path(), Path::new("/notes/a"), "Plan.md").unwrap(),
            Some(newer)
        );
        // Nothing but the recovery file is left in the folder (no temporary files).
        let names: Vec<_> = std::fs::read_dir(folder(data.path()))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        remove(data.path(), Path::new("/notes/a"), "Plan.md").unwrap();
        assert_eq!(
            read(data.path(), Path::new("/notes/a"), "Plan.md").unwrap(),
            None
        );
        remove(data.path(), Path::new("/notes/a"), "Plan.md").unwrap();
    }

    #[test]
    fn a_damaged_or_foreign_recovery_file_is_not_taken_for_the_note() {
        let data = tempfile::tempdir().unwrap();
        let vault = Path::new("/notes/a");
        let file = file_for(data.path(), vault, "Plan.md");
        std::fs::create_dir_all(folder(data.path())).unwrap();
        std::fs::write(&file, b"{not json").unwrap();
        assert!(matches!(
            read(data.path(), vault, "Plan.md"),
            Err(RecoveryError::Format { .. })
        ));
        // A file for another note copied over this one's name.
        let other = serde_json::to_vec(&kept("/notes/a", "Other.md", "x", 1)).unwrap();
        std::fs::write(&file, other).unwrap();
        assert_eq!(read(data.path(), vault, "Plan.md").unwrap(), None);
    }
}
