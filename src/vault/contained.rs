//! File operations that cannot leave the vault, whatever happens to its folders meanwhile.
//!
//! The guard ([`super::guard`]) checks a path before it is used, but a check is only as good as the
//! moment it was made: a sync client or another program may swap a folder for a symbolic link to
//! somewhere else between the check and the open. So every file vaultchat reads, creates, renames or
//! removes inside the vault is reached from one handle on the vault root, opened once, one name at a
//! time, with `O_NOFOLLOW` on every component (`openat`, `mkdirat`, `renameat`, `linkat`,
//! `unlinkat`). The names walked are the guard's canonical ones (links inside the vault already
//! resolved), so a link met on the way can only be one that appeared after the check: the operation
//! stops there with [`ContainedError::LinkAppeared`] and nothing outside is touched.
//!
//! The same handle serialises writers: [`RootHandle::lock_writes`] takes an in-process mutex and an
//! exclusive `flock` on the root folder, so two vaultchat processes on one vault (the app and
//! `vaultchat mcp`) take turns, and a write's compare-and-swap (check the note, then rename over it)
//! is one step for every vaultchat writer.
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags, RenameFlags};

/// How long a writer waits for another vaultchat process to finish its write before giving up.
const LOCK_WAIT: Duration = Duration::from_secs(15);

/// Why a contained operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ContainedError {
    /// A component that was a plain folder when checked is now a symbolic link (or a file).
    #[error(
        "`{component}` became a symbolic link or stopped being a folder after `{path}` was checked; nothing was read or written: check what changed that folder, then try again"
    )]
    LinkAppeared { path: String, component: String },

    /// A component of the path is a regular file: the path itself is wrong, nothing changed.
    #[error(
        "`{component}` is a file, not a folder, so `{path}` cannot be inside it; nothing was read or written: give a path whose folders are folders"
    )]
    NotAFolder { path: String, component: String },

    #[error(
        "another vaultchat process has been writing to this vault for over {} s; nothing was written: try again in a moment",
        LOCK_WAIT.as_secs()
    )]
    LockTimeout,

    #[error("{0}")]
    Io(#[from] io::Error),
}

/// The open vault root: every contained operation starts here.
#[derive(Debug)]
pub struct RootHandle {
    fd: OwnedFd,
    /// Serialises writers inside this process (`flock` alone would not: threads share the handle).
    writers: Mutex<()>,
}

/// Held while a write is in progress; dropping it lets the next writer in.
pub struct WriteLock<'a> {
    root: &'a RootHandle,
    _inner: MutexGuard<'a, ()>,
}

impl Drop for WriteLock<'_> {
    fn drop(&mut self) {
        // Closing the handle would release it too, but the handle lives as long as the vault.
        if let Err(err) = rustix::fs::flock(&self.root.fd, FlockOperation::Unlock) {
            tracing::warn!("releasing the vault write lock failed: {err}");
        }
    }
}

/// A folder inside the vault, opened through the root handle.
pub struct Folder {
    fd: OwnedFd,
}

impl RootHandle {
    /// Opens the (canonical) vault root.
    pub fn open(root: &Path) -> io::Result<Arc<Self>> {
        let fd = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Arc::new(Self {
            fd,
            writers: Mutex::new(()),
        }))
    }

    /// Waits for this process's other writers and for other vaultchat processes on this vault.
    pub fn lock_writes(&self) -> Result<WriteLock<'_>, ContainedError> {
        let inner = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        let deadline = Instant::now() + LOCK_WAIT;
        let mut pause = Duration::from_millis(1);
        let mut said = false;
        loop {
            match rustix::fs::flock(&self.fd, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {
                    return Ok(WriteLock {
                        root: self,
                        _inner: inner,
                    });
                }
                // Said once per write, so that a write that seems to hang can be explained from
                // the log (and a test knows this writer is queued behind another process).
                Err(rustix::io::Errno::WOULDBLOCK) if !said => {
                    said = true;
                    tracing::info!(
                        "the vault's write lock is held elsewhere (another vaultchat process writing); this write waits for it, up to {} s",
                        LOCK_WAIT.as_secs()
                    );
                }
                Err(rustix::io::Errno::WOULDBLOCK) | Err(rustix::io::Errno::INTR) => {}
                Err(err) => return Err(io::Error::from(err).into()),
            }
            if Instant::now() >= deadline {
                return Err(ContainedError::LockTimeout);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// Reads the whole regular file at the vault-relative `rel` (canonical, `/`-separated), never
    /// through a link.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, ContainedError> {
        let mut file = self.open_rel(rel)?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut file, &mut bytes)?;
        Ok(bytes)
    }

    /// Up to `max` bytes of the regular file at `rel` from byte `offset`, and the file's whole
    /// size: never more than `max` bytes are read or held, however large the file (a page of a
    /// long note, the head of one for a prompt). Never through a link.
    pub fn read_span(
        &self,
        rel: &str,
        offset: u64,
        max: usize,
    ) -> Result<(Vec<u8>, u64), ContainedError> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = self.open_rel(rel)?;
        let size = file.metadata()?.len();
        file.seek(SeekFrom::Start(offset))?;
        let capacity = usize::try_from(size.saturating_sub(offset)).unwrap_or(max);
        let mut bytes = Vec::with_capacity(max.min(capacity));
        file.take(max as u64).read_to_end(&mut bytes)?;
        Ok((bytes, size))
    }

    /// Opens the regular file at the vault-relative `rel` for reading, walking down from the root
    /// one folder at a time, never through a link (what [`RootHandle::read`] and
    /// [`RootHandle::read_span`] read from).
    fn open_rel(&self, rel: &str) -> Result<File, ContainedError> {
        let mut names: Vec<&str> = rel.split('/').filter(|n| !n.is_empty()).collect();
        let name = names.pop().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the vault root is not a file")
        })?;
        let folder = self.folder(&names, false, rel)?;
        folder.open_file(name, rel)
    }

    /// Opens the folder `names` (canonical names below the root; empty: the root itself), making
    /// missing folders when `create`. `shown` names the whole path in errors.
    pub fn folder(
        &self,
        names: &[&str],
        create: bool,
        shown: &str,
    ) -> Result<Folder, ContainedError> {
        let mut current: Option<OwnedFd> = None;
        for (depth, name) in names.iter().enumerate() {
            let parent = current.as_ref().map_or(self.fd.as_fd(), |fd| fd.as_fd());
            let component = || names[..=depth].join("/");
            let next = match open_dir_nofollow(parent, name) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(parent, *name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(err) => return Err(io::Error::from(err).into()),
                    }
                    open_dir_nofollow(parent, name)
                        .map_err(|err| link_or_io(err, shown, component()))?
                }
                Err(rustix::io::Errno::NOTDIR) if is_regular_file(parent, name) => {
                    return Err(ContainedError::NotAFolder {
                        path: shown.to_string(),
                        component: component(),
                    });
                }
                Err(err) => return Err(link_or_io(err, shown, component())),
            };
            current = Some(next);
        }
        match current {
            Some(fd) => Ok(Folder { fd }),
            // The root itself: a handle of its own, so the caller may keep it.
            None => Ok(Folder {
                fd: rustix::io::fcntl_dupfd_cloexec(&self.fd, 0).map_err(io::Error::from)?,
            }),
        }
    }
}

fn open_dir_nofollow(dir: std::os::fd::BorrowedFd<'_>, name: &str) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Whether `name` in `dir` is a regular file (not following a link).
fn is_regular_file(dir: std::os::fd::BorrowedFd<'_>, name: &str) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|stat| {
        rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::RegularFile
    })
}

/// `ELOOP` (a link where `O_NOFOLLOW` forbids one) and `ENOTDIR` (a file or link where a folder
/// should be) mean the tree changed since the check.
fn link_or_io(err: rustix::io::Errno, shown: &str, component: String) -> ContainedError {
    match err {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => ContainedError::LinkAppeared {
            path: shown.to_string(),
            component,
        },
        other => io::Error::from(other).into(),
    }
}

/// One entry of a folder: its name (`Err` with the lossy name when it is not UTF-8) and kind.
pub type Listed = (Result<String, String>, Kind);

/// What a directory listing says an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
    /// A link, a device, a socket…: never followed or read.
    Other,
}

/// What stands at a name in a folder (links are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Missing,
    File {
        mode: u32,
        uid: u32,
        gid: u32,
        links: u64,
    },
    Folder,
    Symlink,
    Other,
}

/// For callers that stat many names of one folder themselves (the index's freshness check).
impl AsFd for Folder {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Folder {
    /// What `name` is, without following a link.
    // `st_nlink` is u64 on some targets and u32 on others.
    #[allow(clippy::useless_conversion)]
    pub fn entry(&self, name: &str) -> io::Result<Entry> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => {
                let kind = rustix::fs::FileType::from_raw_mode(stat.st_mode);
                Ok(match kind {
                    rustix::fs::FileType::RegularFile => Entry::File {
                        mode: stat.st_mode & 0o7777,
                        uid: stat.st_uid,
                        gid: stat.st_gid,
                        links: u64::from(stat.st_nlink),
                    },
                    rustix::fs::FileType::Directory => Entry::Folder,
                    rustix::fs::FileType::Symlink => Entry::Symlink,
                    _ => Entry::Other,
                })
            }
            Err(rustix::io::Errno::NOENT) => Ok(Entry::Missing),
            Err(err) => Err(err.into()),
        }
    }

    /// Opens the regular file `name` for reading; a link or anything but a regular file is refused
    /// (`O_NONBLOCK` so that a FIFO put in a note's place cannot hang the read).
    pub fn open_file(&self, name: &str, shown: &str) -> Result<File, ContainedError> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|err| match err {
            rustix::io::Errno::LOOP => ContainedError::LinkAppeared {
                path: shown.to_string(),
                component: shown.to_string(),
            },
            other => io::Error::from(other).into(),
        })?;
        let file = File::from(fd);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "this is a folder or a special file, not a note",
            )
            .into());
        }
        Ok(file)
    }

    /// Where the symbolic link `name` in this folder points (its text, never followed); a target
    /// that is not UTF-8 comes back lossy.
    pub fn read_link(&self, name: &str) -> io::Result<String> {
        let target = rustix::fs::readlinkat(&self.fd, name, Vec::new())?;
        Ok(target.to_string_lossy().into_owned())
    }

    /// Opens the folder `name` inside this one, never through a link.
    pub fn open_folder(&self, name: &str, shown: &str) -> Result<Folder, ContainedError> {
        open_dir_nofollow(self.fd.as_fd(), name)
            .map(|fd| Folder { fd })
            .map_err(|err| link_or_io(err, shown, name.to_string()))
    }

    /// Makes the folder `name` inside this one; `Ok(false)` when something already has the name.
    pub fn make_folder(&self, name: &str) -> io::Result<bool> {
        match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::EXIST) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    /// Creates a new, empty file `name` in this folder (never replacing anything), mode 0600 until
    /// the caller sets the final mode.
    pub fn create_new(&self, name: &str) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        Ok(File::from(fd))
    }

    /// Renames `from` over `to` (both in this folder): atomic, and a link at `to` is replaced, never
    /// followed.
    pub fn rename_over(&self, from: &str, to: &str) -> io::Result<()> {
        rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(io::Error::from)
    }

    /// Moves `name` into `target` (another folder) as `new_name`, failing with `AlreadyExists`
    /// rather than replacing anything there.
    pub fn move_noreplace(&self, name: &str, target: &Folder, new_name: &str) -> io::Result<()> {
        rustix::fs::renameat_with(&self.fd, name, &target.fd, new_name, RenameFlags::NOREPLACE)
            .map_err(io::Error::from)
    }

    /// Gives the file `from` the second name `to` in this folder; fails with `AlreadyExists` when
    /// anything has that name. Not every file system has hard links (`Unsupported`).
    pub fn link(&self, from: &str, to: &str) -> io::Result<()> {
        rustix::fs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty()).map_err(io::Error::from)
    }

    /// Renames `from` to `to` in this folder unless `to` exists.
    pub fn rename_noreplace(&self, from: &str, to: &str) -> io::Result<()> {
        rustix::fs::renameat_with(&self.fd, from, &self.fd, to, RenameFlags::NOREPLACE)
            .map_err(io::Error::from)
    }

    /// Removes the file `name` from this folder.
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(io::Error::from)
    }

    /// Removes the folder `name` from this folder if it is empty (never its contents: a folder
    /// with anything in it is an error).
    pub fn remove_empty_folder(&self, name: &str) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR).map_err(io::Error::from)
    }

    /// Makes renames and new names in this folder durable.
    pub fn sync(&self) -> io::Result<()> {
        rustix::fs::fsync(&self.fd).map_err(io::Error::from)
    }

    /// The entries of this folder with their kinds, from the directory listing itself where the
    /// file system says (no `stat` per entry), else from a `stat` that does not follow links. Names
    /// that are not UTF-8 come back as `Err(lossy name)`.
    pub fn entries(&self) -> io::Result<Vec<Listed>> {
        Ok(self.entries_at_most(usize::MAX)?.0)
    }

    /// At most `max` of this folder's entries ([`Folder::entries`]), in the order the file system
    /// lists them, and whether it holds more: a folder of a hundred thousand files written by
    /// someone else is not listed (nor its entries `stat`ed) whole.
    pub fn entries_at_most(&self, max: usize) -> io::Result<(Vec<Listed>, bool)> {
        // A handle of its own for the listing (its read position), without the extra `fcntl` and
        // `openat` that `Dir::read_from` would add.
        let fd = rustix::fs::openat(
            &self.fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut dir = rustix::fs::Dir::new(fd)?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let bytes = entry.file_name().to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            if out.len() == max {
                return Ok((out, true));
            }
            let name = std::str::from_utf8(bytes)
                .map(str::to_string)
                .map_err(|_| String::from_utf8_lossy(bytes).into_owned());
            let kind = match entry.file_type() {
                rustix::fs::FileType::RegularFile => Kind::File,
                rustix::fs::FileType::Directory => Kind::Folder,
                rustix::fs::FileType::Unknown => {
                    match rustix::fs::statat(&self.fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    {
                        Ok(stat) => match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
                            rustix::fs::FileType::RegularFile => Kind::File,
                            rustix::fs::FileType::Directory => Kind::Folder,
                            _ => Kind::Other,
                        },
                        Err(_) => Kind::Other,
                    }
                }
                _ => Kind::Other,
            };
            out.push((name, kind));
        }
        Ok((out, false))
    }

    /// The size and modification time (ns since the epoch) of the regular file `name`, without
    /// following a link; `Ok(None)` when it is not a regular file (any more).
    // `st_mtime` and `st_mtime_nsec` are i64 on some targets and narrower on others.
    #[allow(clippy::useless_conversion)]
    pub fn file_stat(&self, name: &str) -> io::Result<Option<(u64, i64)>> {
        let stat = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)?;
        if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
            return Ok(None);
        }
        let mtime_ns = i64::try_from(stat.st_mtime)
            .unwrap_or(i64::MAX)
            .saturating_mul(1_000_000_000)
            .saturating_add(i64::try_from(stat.st_mtime_nsec).unwrap_or(0));
        Ok(Some((u64::try_from(stat.st_size).unwrap_or(0), mtime_ns)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::io::Read;

    #[test]
    fn a_link_in_the_path_stops_the_walk() {
        let vault = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path(), vault.path().join("Inbox")).unwrap();
        let root = RootHandle::open(vault.path()).unwrap();
        let err = root
            .folder(&["Inbox"], true, "Inbox/secret.md")
            .err()
            .unwrap();
        assert!(matches!(err, ContainedError::LinkAppeared { .. }), "{err}");
        std::fs::create_dir(vault.path().join("real")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            vault.path().join("real/l.md"),
        )
        .unwrap();
        let folder = root.folder(&["real"], false, "real/l.md").unwrap();
        assert_eq!(folder.entry("l.md").unwrap(), Entry::Symlink);
        let err = folder.open_file("l.md", "real/l.md").err().unwrap();
        assert!(matches!(err, ContainedError::LinkAppeared { .. }), "{err}");
    }

    #[test]
    fn folders_are_created_and_files_read() {
        let vault = tempfile::tempdir().unwrap();
        let root = RootHandle::open(vault.path()).unwrap();
        let folder = root.folder(&["a", "b"], true, "a/b/x.md").unwrap();
        let mut file = folder.create_new("x.md").unwrap();
        std::io::Write::write_all(&mut file, b"hello").unwrap();
        assert!(folder.create_new("x.md").is_err());
        let mut text = String::new();
        folder
            .open_file("x.md", "a/b/x.md")
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "hello");
        let names: Vec<_> = folder.entries().unwrap();
        assert_eq!(names, [(Ok("x.md".to_string()), Kind::File)]);
        let other = root.folder(&["c"], true, "c").unwrap();
        folder.move_noreplace("x.md", &other, "y.md").unwrap();
        assert!(vault.path().join("c/y.md").is_file());
    }

    #[test]
    fn the_write_lock_is_exclusive_across_handles() {
        let vault = tempfile::tempdir().unwrap();
        let first = RootHandle::open(vault.path()).unwrap();
        let second = RootHandle::open(vault.path()).unwrap();
        let held = first.lock_writes().unwrap();
        // Another open file description on the same folder (as another process has) must wait.
        assert_eq!(
            rustix::fs::flock(&second.fd, FlockOperation::NonBlockingLockExclusive),
            Err(rustix::io::Errno::WOULDBLOCK)
        );
        drop(held);
        drop(second.lock_writes().unwrap());
    }
}
