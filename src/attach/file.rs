//! Reading a file a person (or a paste, or a drop) names, with bounds: only a regular file is
//! read, never a named pipe, a device, a socket or a folder (`/dev/zero` never ends, a FIFO may
//! never be written), and never more than a limit.
//!
//! The type is checked on the opened handle, not on the path, so a name swapped between a check
//! and the open cannot slip a FIFO or a device in; the open itself does not block on a FIFO
//! (`O_NONBLOCK`, which changes nothing for a regular file). A link is followed, so it is read
//! only when it leads to a regular file. The size is checked before the first byte is read, and
//! the read stops one byte past the limit whatever the file turns into meanwhile (it may grow).

use rustix::fs::{Mode, OFlags};
use std::io::Read as _;
use std::os::unix::fs::FileTypeExt as _;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum FileReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The name leads to something other than a regular file.
    #[error("it is {kind}, not a regular file")]
    NotAFile { kind: &'static str },
    /// The file is larger than the limit (`size`: what the file system says, or at least what
    /// was read past the limit).
    #[error("it is {size} bytes, more than the {limit} bytes allowed")]
    TooLarge { size: u64, limit: u64 },
}

/// The bytes of the regular file at `path` (links followed), at most `limit` of them.
pub fn read_regular_file(path: &Path, limit: u64) -> Result<Vec<u8>, FileReadError> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(std::io::Error::from)?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(FileReadError::NotAFile {
            kind: kind_name(&kind),
        });
    }
    if meta.len() > limit {
        return Err(FileReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let read = bytes.len() as u64;
    if read > limit {
        return Err(FileReadError::TooLarge { size: read, limit });
    }
    Ok(bytes)
}

/// What a file that is not a regular file is, in words.
fn kind_name(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn devices_fifos_and_folders_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.png");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let started = Instant::now();
        for (path, kind) in [
            (Path::new("/dev/zero"), "a character device"),
            (fifo.as_path(), "a named pipe (FIFO)"),
            (dir.path(), "a folder"),
        ] {
            match read_regular_file(path, 1024) {
                Err(FileReadError::NotAFile { kind: got }) => assert_eq!(got, kind, "{path:?}"),
                other => panic!("{path:?}: {other:?}"),
            }
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        // A link is followed only to a regular file.
        let link = dir.path().join("zero.png");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(matches!(
            read_regular_file(&link, 1024),
            Err(FileReadError::NotAFile { .. })
        ));
        let real = dir.path().join("real.png");
        std::fs::write(&real, b"12345").unwrap();
        let to_real = dir.path().join("to-real.png");
        std::os::unix::fs::symlink(&real, &to_real).unwrap();
        assert_eq!(read_regular_file(&to_real, 1024).unwrap(), b"12345");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_by_its_size_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let sparse = dir.path().join("huge.png");
        let file = std::fs::File::create(&sparse).unwrap();
        file.set_len(2 << 30).unwrap();
        let started = Instant::now();
        match read_regular_file(&sparse, 1 << 20) {
            Err(FileReadError::TooLarge { size, limit }) => {
                assert_eq!((size, limit), (2 << 30, 1 << 20));
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        let exact = dir.path().join("exact");
        std::fs::write(&exact, [7u8; 10]).unwrap();
        assert_eq!(read_regular_file(&exact, 10).unwrap().len(), 10);
        assert!(matches!(
            read_regular_file(&exact, 9),
            Err(FileReadError::TooLarge { size: 10, limit: 9 })
        ));
    }
}
