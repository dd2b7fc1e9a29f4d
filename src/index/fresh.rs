//! Whether many notes on disk are still what the index recorded, cheaply: a one-shot command
//! that prints thousands of notes (`vaultchat links` of a note 27,000 notes link to) checks each
//! one's (mtime, size) as `vaultchat search` checks its hits, and that check was a third of the
//! process. Here each folder is opened once and its notes are stat-ed by name (`fstatat`), not
//! by a path the kernel walks from `/` every time, and a long list is split across threads.

use crate::vault::contained::{Folder, RootHandle};
use rustix::fs::AtFlags;
use std::sync::atomic::{AtomicBool, Ordering};

/// A list shorter than this is checked on the calling thread: starting threads costs more.
const PARALLEL_FROM: usize = 4096;

/// At most this many threads check one list (the work is the kernel's; more threads than this
/// mostly contend on the same folders).
const MAX_THREADS: usize = 4;

/// A note as the index recorded it.
#[derive(Debug, Clone, Copy)]
pub struct Stamp<'a> {
    /// Vault-relative, `/` separators.
    pub path: &'a str,
    pub mtime_ns: i64,
    pub size: i64,
}

/// True when every note of `stamps` still has its recorded (mtime, size) in the vault whose root
/// `root` holds. Folders are opened from the root's handle without following a link, as every
/// read of a note is. Stamps of the same folder should be adjacent (sorted by path) so that each
/// folder is opened once.
pub fn all_current(root: &RootHandle, stamps: &[Stamp<'_>]) -> bool {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(MAX_THREADS);
    if threads < 2 || stamps.len() < PARALLEL_FROM {
        return chunk_current(root, stamps, &AtomicBool::new(false));
    }
    let stale = AtomicBool::new(false);
    let per_thread = stamps.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for chunk in stamps.chunks(per_thread) {
            let stale = &stale;
            scope.spawn(move || {
                if !chunk_current(root, chunk, stale) {
                    stale.store(true, Ordering::Relaxed);
                }
            });
        }
    });
    !stale.load(Ordering::Relaxed)
}

/// One thread's part; stops early when another thread found a stale note.
fn chunk_current(root: &RootHandle, stamps: &[Stamp<'_>], stale: &AtomicBool) -> bool {
    let mut open: Option<(&str, Folder)> = None;
    for (i, stamp) in stamps.iter().enumerate() {
        if i % 256 == 255 && stale.load(Ordering::Relaxed) {
            return false;
        }
        let (folder, name) = stamp.path.rsplit_once('/').unwrap_or(("", stamp.path));
        let dir = match &open {
            Some((at, fd)) if *at == folder => fd,
            _ => {
                let names: Vec<&str> = folder.split('/').filter(|n| !n.is_empty()).collect();
                let Ok(opened) = root.folder(&names, false, folder) else {
                    return false;
                };
                &open.insert((folder, opened)).1
            }
        };
        let Ok(stat) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            return false;
        };
        if mtime_ns(i128::from(stat.st_mtime), i128::from(stat.st_mtime_nsec)) != stamp.mtime_ns
            || i128::from(stat.st_size) != i128::from(stamp.size)
        {
            return false;
        }
    }
    true
}

/// Nanoseconds since the epoch as `walk::mtime_ns` reads them from `std::fs::Metadata` (0 before
/// the epoch, saturating), so that what a sync stored compares equal.
fn mtime_ns(secs: i128, nanos: i128) -> i64 {
    if secs < 0 {
        return 0;
    }
    i64::try_from(secs * 1_000_000_000 + nanos).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn root(dir: &Path) -> std::sync::Arc<RootHandle> {
        RootHandle::open(dir).unwrap()
    }

    fn stamp_of<'a>(root: &Path, path: &'a str) -> Stamp<'a> {
        let meta = std::fs::symlink_metadata(root.join(path)).unwrap();
        Stamp {
            path,
            mtime_ns: crate::vault::walk::mtime_ns(&meta),
            size: i64::try_from(meta.len()).unwrap(),
        }
    }

    #[test]
    fn notes_as_recorded_are_current_and_a_changed_or_missing_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        let paths: Vec<String> = (0..5000)
            .map(|i| match i % 3 {
                0 => format!("top {i}.md"),
                1 => format!("a/n{i}.md"),
                _ => format!("a/b/n{i}.md"),
            })
            .collect();
        let mut sorted = paths.clone();
        sorted.sort();
        for path in &sorted {
            std::fs::write(dir.path().join(path), path.as_bytes()).unwrap();
        }
        let stamps: Vec<Stamp<'_>> = sorted.iter().map(|p| stamp_of(dir.path(), p)).collect();
        assert!(all_current(&root(dir.path()), &stamps));
        assert!(all_current(&root(dir.path()), &stamps[..10]));

        // The size differs: stale, on one thread and across several.
        let mut changed = stamps.clone();
        changed[4321].size += 1;
        assert!(!all_current(&root(dir.path()), &changed));
        assert!(!all_current(&root(dir.path()), &changed[4300..4400]));

        // The mtime differs.
        let mut changed = stamps.clone();
        changed[7].mtime_ns -= 1;
        assert!(!all_current(&root(dir.path()), &changed[..10]));

        // A note deleted, and a folder gone.
        std::fs::remove_file(dir.path().join(&sorted[2500])).unwrap();
        assert!(!all_current(&root(dir.path()), &stamps));
        std::fs::remove_dir_all(dir.path().join("a/b")).unwrap();
        let in_b: Vec<Stamp<'_>> = stamps
            .iter()
            .copied()
            .filter(|s| s.path.starts_with("a/b/"))
            .collect();
        assert!(!all_current(&root(dir.path()), &in_b[..3]));
    }

    #[test]
    fn before_the_epoch_reads_as_walk_reads_it() {
        assert_eq!(mtime_ns(-5, 3), 0);
        assert_eq!(mtime_ns(2, 7), 2_000_000_007);
        assert_eq!(mtime_ns(i128::from(i64::MAX), 0), i64::MAX);
    }

    /// A folder replaced by a link (to a copy outside the vault, the same sizes and times) is
    /// not followed: its notes are not "current", so the index is synced and the guard has its
    /// say, as for every read of a note.
    #[test]
    fn a_folder_turned_into_a_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/n.md"), "same\n").unwrap();
        let stamps = [stamp_of(dir.path(), "a/n.md")];
        assert!(all_current(&root(dir.path()), &stamps));
        let copy = outside.path().join("n.md");
        std::fs::write(&copy, "same\n").unwrap();
        let mtime = std::fs::metadata(dir.path().join("a/n.md"))
            .unwrap()
            .modified()
            .unwrap();
        std::fs::File::options()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        std::fs::remove_dir_all(dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("a")).unwrap();
        assert!(!all_current(&root(dir.path()), &stamps));
    }
}
