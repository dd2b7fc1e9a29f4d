//! Small durable files beside the vault, for writes that span several notes (`move_note`'s
//! journal, in the data directory): written whole or not at all, and removed durably.
//!
//! Also the failpoints the crash tests stop such a write at (tests/engine/move_note.rs).

use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically and durably: a temp file beside it, fsynced, renamed over
/// it, and the folder fsynced. Missing folders are made.
pub fn write_durably(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let folder = path
        .parent()
        .ok_or_else(|| io::Error::other("the journal has no folder"))?;
    std::fs::create_dir_all(folder)?;
    let mut temp_name = path.as_os_str().to_owned();
    temp_name.push(".tmp");
    let temp = Path::new(&temp_name);
    {
        let mut file = std::fs::File::create(temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(temp, path)?;
    std::fs::File::open(folder)?.sync_all()
}

/// The bytes at `path`, or `None` when there is no such file.
pub fn read_if_exists(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes `path` and makes the removal durable (the folder fsynced). The removal is what
/// commits the write the journal guarded, so once the file is gone this succeeds: a failed
/// folder sync after it is logged, never reported as "not removed" (the caller would undo a write
/// that no journal can redo).
pub fn remove_durably(path: &Path) -> io::Result<()> {
    std::fs::remove_file(path)?;
    if let Some(folder) = path.parent()
        && let Err(e) = std::fs::File::open(folder).and_then(|f| f.sync_all())
    {
        tracing::warn!(
            "syncing {} after removing the journal: {e}",
            folder.display()
        );
    }
    Ok(())
}

/// What a failpoint asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    /// Not armed: go on.
    Pass,
    /// `VAULTCHAT_FAILPOINT_ACTION=fail`: the step fails, as a full disk would make it.
    Fail,
}

/// For the crash tests: when `VAULTCHAT_FAILPOINT` names `name`, the file
/// `VAULTCHAT_FAILPOINT_MARKER` names is written and the process stops here until it is killed,
/// as a crash would stop it — or, with `VAULTCHAT_FAILPOINT_ACTION=fail`, the caller is told to
/// fail the step, or, with `VAULTCHAT_FAILPOINT_ACTION=wait`, the step waits until the test
/// removes the marker file and then goes on (a start-up held at a known point). Costs one
/// environment lookup otherwise.
pub fn failpoint(name: &str) -> Failpoint {
    if std::env::var("VAULTCHAT_FAILPOINT").ok().as_deref() != Some(name) {
        return Failpoint::Pass;
    }
    if let Some(marker) = std::env::var_os("VAULTCHAT_FAILPOINT_MARKER") {
        let _ = std::fs::write(marker, name);
    }
    match std::env::var("VAULTCHAT_FAILPOINT_ACTION").ok().as_deref() {
        Some("fail") => return Failpoint::Fail,
        Some("wait") => {
            if let Some(marker) = std::env::var_os("VAULTCHAT_FAILPOINT_MARKER") {
                // Polls the marker every 10 ms: pacing only, the test decides when to go on.
                while std::path::Path::new(&marker).exists() {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
            return Failpoint::Pass;
        }
        _ => {}
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn written_read_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("moves/v.json");
        assert_eq!(read_if_exists(&path).unwrap(), None);
        write_durably(&path, b"one").unwrap();
        write_durably(&path, b"two").unwrap();
        assert_eq!(read_if_exists(&path).unwrap().as_deref(), Some(&b"two"[..]));
        assert_eq!(
            std::fs::read_dir(dir.path().join("moves")).unwrap().count(),
            1
        );
        remove_durably(&path).unwrap();
        assert_eq!(read_if_exists(&path).unwrap(), None);
        assert_eq!(failpoint("not.armed"), Failpoint::Pass);
    }
}
