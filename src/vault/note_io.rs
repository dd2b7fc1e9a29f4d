//! Reading and writing notes without ever losing data.
//!
//! * Reads record a [`Fingerprint`] (hash, size, mtime) so a later write can tell whether the file
//!   changed underneath (the user or a sync tool edited it).
//! * Writes go to a temp file in the same folder, are fsynced, renamed over the note and the folder is
//!   fsynced (perf-and-safety.md §9): after a crash the note is either the old or the new version.
//! * The file's format survives an edit: BOM, CRLF line endings, a missing trailing newline and the
//!   permission bits. Files that are not UTF-8 are refused rather than re-encoded lossily.
use std::fs::{self, File, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::guard::{Access, PathError, TEMP_MARKER, VaultPath, is_temp_name};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The content hash used in fingerprints and by the index (xxh3, 64 bits).
pub fn content_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// What a note looked like on disk when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub hash: u64,
    pub mtime_ns: i64,
    pub size: u64,
}

impl Fingerprint {
    fn of(bytes: &[u8], meta: &fs::Metadata) -> Self {
        Self {
            hash: content_hash(bytes),
            mtime_ns: meta
                .mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.mtime_nsec()),
            size: bytes.len() as u64,
        }
    }

    /// A short, stable token naming this content (`<16 hex digits of the hash>-<size>`). The mtime is
    /// left out on purpose: touching a file does not make a new revision.
    pub fn to_revision_string(&self) -> String {
        format!("{:016x}-{}", self.hash, self.size)
    }

    /// Whether both fingerprints describe the same bytes (hash and size; the mtime is ignored because
    /// sync tools and `touch` change it without changing the note).
    pub fn matches_content(&self, other: &Fingerprint) -> bool {
        self.hash == other.hash && self.size == other.size
    }
}

/// Line endings of a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LineEnding {
    #[default]
    Lf,
    Crlf,
}

/// How a note's text is laid out in bytes, so it can be written back the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TextFormat {
    pub bom: bool,
    pub line_ending: LineEnding,
}

/// A note's text (BOM stripped, CRLF turned into LF for CRLF files) with what is needed to write it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteText {
    pub text: String,
    pub format: TextFormat,
    pub fingerprint: Fingerprint,
}

/// Why a note could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum NoteError {
    #[error(
        "`{path}` does not exist in the vault: check the name (list its folder to see what is there) or create the note first"
    )]
    NotFound { path: String },

    #[error(
        "{} is not UTF-8 text (the first invalid byte is at offset {offset}): vaultchat only edits UTF-8 text, so convert the file to UTF-8 or edit it with another program",
        named(path)
    )]
    NotUtf8 { path: String, offset: usize },

    #[error(
        "`{path}` changed on disk since it was read (read as revision {expected}, now {actual}): nothing was written; read the note again and redo the edit on its current text"
    )]
    Changed {
        path: String,
        expected: String,
        actual: String,
    },

    #[error(
        "`{path}` already exists and was left as it is: choose another name, or overwrite it explicitly"
    )]
    AlreadyExists { path: String },

    #[error("{}", io_message(path, source))]
    Io { path: PathBuf, source: io::Error },

    #[error(transparent)]
    Path(#[from] PathError),
}

impl NoteError {
    /// A stable short code per kind of error, like [`PathError::kind`] (whose codes pass through).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "not_found",
            Self::NotUtf8 { .. } => "not_utf8",
            Self::Changed { .. } => "changed",
            Self::AlreadyExists { .. } => "already_exists",
            Self::Io { source, .. } if is_disk_full(source) => "disk_full",
            Self::Io { .. } => "io",
            Self::Path(err) => err.kind(),
        }
    }
}

fn named(path: &str) -> String {
    if path.is_empty() {
        "the text".to_string()
    } else {
        format!("`{path}`")
    }
}

fn is_disk_full(err: &io::Error) -> bool {
    // ENOSPC and EDQUOT (quota) both mean "no room"; Rust maps them to these kinds.
    matches!(
        err.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

fn io_message(path: &Path, source: &io::Error) -> String {
    if is_disk_full(source) {
        format!(
            "the disk is full, so {} could not be written ({source}); the note was left unchanged: free some space and try again",
            path.display()
        )
    } else {
        format!(
            "{} could not be read or written ({source}); any note being saved was left unchanged: check that the file and its folder exist and that you may read and write them",
            path.display()
        )
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> NoteError + '_ {
    move |source| NoteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads a file's bytes and the metadata of the same open file, so both describe one version.
fn read_bytes(path: &VaultPath) -> Result<(Vec<u8>, fs::Metadata), NoteError> {
    let mut file = File::open(path.abs()).map_err(|source| {
        if source.kind() == io::ErrorKind::NotFound {
            NoteError::NotFound {
                path: path.rel().to_string(),
            }
        } else {
            io_err(path.abs())(source)
        }
    })?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(io_err(path.abs()))?;
    // Stat the handle that was read, not the path: a rename between the two would otherwise pair these
    // bytes with another file's mtime.
    let meta = file.metadata().map_err(io_err(path.abs()))?;
    Ok((bytes, meta))
}

/// The fingerprint of a note as it is on disk now.
pub fn fingerprint(path: &VaultPath) -> Result<Fingerprint, NoteError> {
    let (bytes, meta) = read_bytes(path)?;
    Ok(Fingerprint::of(&bytes, &meta))
}

/// Decodes a note's bytes into text plus the format needed to write it back byte for byte.
pub fn decode(bytes: &[u8]) -> Result<(String, TextFormat), NoteError> {
    let (bom, body) = match bytes.strip_prefix(BOM) {
        Some(body) => (true, body),
        None => (false, bytes),
    };
    let text = std::str::from_utf8(body).map_err(|err| NoteError::NotUtf8 {
        path: String::new(),
        offset: err.valid_up_to() + if bom { BOM.len() } else { 0 },
    })?;
    let line_ending = detect_line_ending(text);
    let text = match line_ending {
        LineEnding::Crlf => text.replace("\r\n", "\n"),
        LineEnding::Lf => text.to_string(),
    };
    Ok((text, TextFormat { bom, line_ending }))
}

/// CRLF when every line break is `\r\n`. Mixed files, and files with `\r\r\n` (which would not survive
/// the LF round trip exactly), count as LF and are kept byte for byte.
fn detect_line_ending(text: &str) -> LineEnding {
    let bytes = text.as_bytes();
    let mut saw_newline = false;
    for (index, &byte) in bytes.iter().enumerate() {
        if byte == b'\n' {
            saw_newline = true;
            let crlf = index >= 1 && bytes[index - 1] == b'\r';
            let double_cr = index >= 2 && bytes[index - 2] == b'\r';
            if !crlf || double_cr {
                return LineEnding::Lf;
            }
        }
    }
    if saw_newline {
        LineEnding::Crlf
    } else {
        LineEnding::Lf
    }
}

/// Encodes text back into bytes in `format`: the inverse of [`decode`].
pub fn encode(text: &str, format: &TextFormat) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 32 + BOM.len());
    if format.bom {
        out.extend_from_slice(BOM);
    }
    match format.line_ending {
        LineEnding::Lf => out.extend_from_slice(text.as_bytes()),
        LineEnding::Crlf => {
            // Text from `decode` has no `\r\n`; an edit that brings one in (a model pasting CRLF text)
            // must not turn into `\r\r\n`, so existing pairs are kept as they are.
            let mut previous = 0u8;
            for &byte in text.as_bytes() {
                if byte == b'\n' && previous != b'\r' {
                    out.push(b'\r');
                }
                out.push(byte);
                previous = byte;
            }
        }
    }
    out
}

/// Reads a note for display or editing.
pub fn read_note(path: &VaultPath) -> Result<NoteText, NoteError> {
    let (bytes, meta) = read_bytes(path)?;
    let fingerprint = Fingerprint::of(&bytes, &meta);
    let (text, format) = decode(&bytes).map_err(|err| match err {
        NoteError::NotUtf8 { offset, .. } => NoteError::NotUtf8 {
            path: path.rel().to_string(),
            offset,
        },
        other => other,
    })?;
    Ok(NoteText {
        text,
        format,
        fingerprint,
    })
}

/// Replaces a note's content atomically, keeping its permission bits.
///
/// With `expected`, the note must still hold the content that fingerprint describes; otherwise
/// [`NoteError::Changed`] is returned and nothing is written. Writing a note that does not exist yet
/// (with no `expected`) creates it.
pub fn write_note(
    path: &VaultPath,
    text: &str,
    format: &TextFormat,
    expected: Option<&Fingerprint>,
) -> Result<Fingerprint, NoteError> {
    let existing = check_target(path)?;
    if let Some(expected) = expected {
        let actual = match read_bytes(path) {
            Ok((bytes, meta)) => Some(Fingerprint::of(&bytes, &meta)),
            Err(NoteError::NotFound { .. }) => None,
            Err(err) => return Err(err),
        };
        if !actual.is_some_and(|actual| actual.matches_content(expected)) {
            return Err(NoteError::Changed {
                path: path.rel().to_string(),
                expected: expected.to_revision_string(),
                actual: actual.map_or_else(
                    || "deleted".to_string(),
                    |actual| actual.to_revision_string(),
                ),
            });
        }
    }
    let (mode, owner) = match &existing {
        Some(meta) => (meta.mode() & 0o7777, Some((meta.uid(), meta.gid()))),
        None => (new_file_mode(), None),
    };
    let bytes = encode(text, format);
    let temp = write_temp(path, &bytes, mode, owner)?;
    let file = temp.persist(path.abs()).map_err(|err| NoteError::Io {
        path: path.abs().to_path_buf(),
        // Dropping the returned temp file removes it; the original was never touched.
        source: err.error,
    })?;
    sync_parent(path.abs())?;
    let meta = file.metadata().map_err(io_err(path.abs()))?;
    Ok(Fingerprint::of(&bytes, &meta))
}

/// Creates a note (LF, no BOM), creating missing folders. Without `overwrite` an existing file is never
/// replaced, even by a concurrent writer: the complete content is linked into place in one step that
/// fails if anything already has the name.
pub fn create_note(
    path: &VaultPath,
    text: &str,
    overwrite: bool,
) -> Result<Fingerprint, NoteError> {
    if path.is_root() {
        return Err(NoteError::AlreadyExists {
            path: path.rel().to_string(),
        });
    }
    if let Some(parent) = path.abs().parent() {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    if overwrite {
        return write_note(path, text, &TextFormat::default(), None);
    }
    let bytes = text.as_bytes();
    let temp = write_temp(path, bytes, new_file_mode(), None)?;
    let already = || NoteError::AlreadyExists {
        path: path.rel().to_string(),
    };
    let file = match fs::hard_link(temp.path(), path.abs()) {
        Ok(()) => {
            let file = temp.as_file().try_clone().map_err(io_err(path.abs()))?;
            temp.close().map_err(io_err(path.abs()))?;
            file
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => return Err(already()),
        // Some file systems (FAT, exFAT, some network mounts) have no hard links; there an exclusive
        // rename (`renameat2(RENAME_NOREPLACE)` where available) is the next best atomic create.
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::Unsupported | io::ErrorKind::PermissionDenied
            ) =>
        {
            temp.persist_noclobber(path.abs()).map_err(|err| {
                if err.error.kind() == io::ErrorKind::AlreadyExists {
                    already()
                } else {
                    io_err(path.abs())(err.error)
                }
            })?
        }
        Err(err) => return Err(io_err(path.abs())(err)),
    };
    sync_parent(path.abs())?;
    let meta = file.metadata().map_err(io_err(path.abs()))?;
    Ok(Fingerprint::of(bytes, &meta))
}

/// Re-checks the final component right before a write: the guard checked it earlier, but a link or a
/// hard link may have appeared since. Returns the metadata of the existing regular file, if any.
fn check_target(path: &VaultPath) -> Result<Option<fs::Metadata>, NoteError> {
    let input = path.rel().to_string();
    if path.access() != Access::Write {
        return Err(PathError::CheckedForRead { input }.into());
    }
    match fs::symlink_metadata(path.abs()) {
        Ok(meta) if meta.file_type().is_symlink() => Err(PathError::IsSymlink { input }.into()),
        Ok(meta) if meta.is_file() && meta.nlink() > 1 => Err(PathError::HardLink {
            input,
            links: meta.nlink(),
        }
        .into()),
        Ok(meta) if meta.is_file() => Ok(Some(meta)),
        Ok(_) => Err(NoteError::Io {
            path: path.abs().to_path_buf(),
            source: io::Error::new(
                io::ErrorKind::IsADirectory,
                "this is a folder or a special file, not a note",
            ),
        }),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(io_err(path.abs())(err)),
    }
}

/// Writes `bytes` to a fresh temp file beside the note, with `mode` (and the owner, where allowed), and
/// flushes it to disk. The temp file is removed when the returned handle is dropped unpersisted.
fn write_temp(
    path: &VaultPath,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> Result<tempfile::NamedTempFile, NoteError> {
    let abs = path.abs();
    let parent = abs.parent().ok_or_else(|| NoteError::Io {
        path: abs.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidInput, "a note needs a parent folder"),
    })?;
    let name = abs
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Dot-prefixed so vault walkers skip it; the name is cut so the temp name stays within 255 bytes.
    let prefix = format!(".{}{TEMP_MARKER}", truncate_at_char(&name, 200));
    let mut temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .rand_bytes(6)
        .tempfile_in(parent)
        .map_err(io_err(abs))?;
    let fail = |source| NoteError::Io {
        path: abs.to_path_buf(),
        source,
    };
    if let Some((uid, gid)) = owner {
        // Only root may give a file away; for anyone else this keeps the group where allowed and is
        // otherwise harmless to skip, so its error is ignored.
        let _ = std::os::unix::fs::fchown(temp.as_file(), Some(uid), Some(gid));
    }
    // Set after creation so the umask does not strip bits the original had (and 0600 stays 0600).
    temp.as_file()
        .set_permissions(Permissions::from_mode(mode))
        .map_err(fail)?;
    temp.as_file_mut().write_all(bytes).map_err(fail)?;
    temp.as_file().sync_all().map_err(fail)?;
    Ok(temp)
}

fn truncate_at_char(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Makes a rename in `path`'s folder durable: without it the new content survives a power loss but the
/// folder entry may still point at the old file.
fn sync_parent(path: &Path) -> Result<(), NoteError> {
    let parent = path.parent().unwrap_or(Path::new("/"));
    File::open(parent)
        .and_then(|dir| dir.sync_all())
        .map_err(io_err(parent))
}

/// The mode a new note gets: what `open(O_CREAT, 0666)` would give under the process umask.
fn new_file_mode() -> u32 {
    0o666 & !current_umask()
}

/// The process umask from `/proc/self/status` (Linux 4.7+); reading it this way needs neither libc nor
/// `unsafe`, and changing it to read it (the classic `umask()` dance) would race other threads.
fn current_umask() -> u32 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let value = line.strip_prefix("Umask:")?.trim();
                u32::from_str_radix(value, 8).ok()
            })
        })
        .unwrap_or(0o022)
}

/// Removes vaultchat temp files older than `older_than` left behind by a crash, in `dir` and every
/// folder below it (links are not followed). Returns how many were removed.
pub fn cleanup_stale_temps(dir: &Path, older_than: Duration) -> io::Result<usize> {
    let now = SystemTime::now();
    let mut removed = 0;
    let mut pending = vec![dir.to_path_buf()];
    let mut first = true;
    while let Some(folder) = pending.pop() {
        let entries = match fs::read_dir(&folder) {
            Ok(entries) => entries,
            // The top folder must be readable; a subfolder that vanished or is closed off is skipped.
            Err(err) if first => return Err(err),
            Err(_) => continue,
        };
        first = false;
        for entry in entries {
            let entry = entry?;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if kind.is_dir() {
                // Never touch the files of git or other tools, even if a name happened to match.
                if name != ".git" {
                    pending.push(entry.path());
                }
                continue;
            }
            if !kind.is_file() || !is_temp_name(&name) {
                continue;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let age = meta
                .modified()
                .ok()
                .and_then(|modified| now.duration_since(modified).ok());
            // A temp file from the future (clock skew) is left alone: it may be a live write.
            if age.is_some_and(|age| age >= older_than) {
                match fs::remove_file(entry.path()) {
                    Ok(()) => removed += 1,
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                    Err(err) => return Err(err),
                }
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::vault::guard::Vault;

    fn round_trip(bytes: &[u8]) -> TextFormat {
        let (text, format) = decode(bytes).unwrap();
        assert_eq!(encode(&text, &format), bytes, "{bytes:?}");
        format
    }

    #[test]
    fn round_trips_are_byte_exact() {
        let crlf = round_trip(b"a\r\nb\r\n");
        assert_eq!(crlf.line_ending, LineEnding::Crlf);
        assert!(!crlf.bom);
        assert_eq!(round_trip(b"a\nb").line_ending, LineEnding::Lf);
        assert_eq!(round_trip(b"a\r\nb\nc").line_ending, LineEnding::Lf);
        assert!(round_trip(b"\xEF\xBB\xBFx\r\ny").bom);
        assert_eq!(round_trip(b"a\r\r\nb\r\n").line_ending, LineEnding::Lf);
        assert_eq!(round_trip(b"a\rb\r\n").line_ending, LineEnding::Crlf);
        round_trip(b"");
        round_trip(b"\xEF\xBB\xBF");
        round_trip(b"no newline at all");
    }

    #[test]
    fn crlf_text_is_given_as_lf() {
        let (text, _) = decode(b"a\r\nb\r\n").unwrap();
        assert_eq!(text, "a\nb\n");
        let format = TextFormat {
            bom: false,
            line_ending: LineEnding::Crlf,
        };
        assert_eq!(encode("x\r\ny\nz", &format), b"x\r\ny\r\nz");
    }

    #[test]
    fn invalid_utf8_reports_the_offset() {
        let err = decode(b"\xEF\xBB\xBFab\xFFc").unwrap_err();
        assert!(
            matches!(err, NoteError::NotUtf8 { offset: 5, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("only edits UTF-8"));
    }

    #[test]
    fn revision_string_is_stable() {
        let fp = Fingerprint {
            hash: 0xab,
            mtime_ns: 5,
            size: 12,
        };
        assert_eq!(fp.to_revision_string(), "00000000000000ab-12");
        assert!(fp.matches_content(&Fingerprint { mtime_ns: 9, ..fp }));
        assert!(!fp.matches_content(&Fingerprint { size: 13, ..fp }));
    }

    #[test]
    fn umask_is_read() {
        assert_eq!(current_umask() & !0o777, 0);
    }

    #[test]
    fn disk_full_message_says_unchanged() {
        let err = NoteError::Io {
            path: PathBuf::from("/v/a.md"),
            source: io::Error::from(io::ErrorKind::StorageFull),
        };
        assert_eq!(err.kind(), "disk_full");
        let message = err.to_string();
        assert!(message.contains("disk is full") && message.contains("left unchanged"));
        assert!(message.contains("/v/a.md"));
    }

    #[test]
    fn write_then_read_and_cleanup() {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::open(dir.path()).unwrap();
        let path = vault.resolve("sub/a.md", Access::Write).unwrap();
        let created = create_note(&path, "one\n", false).unwrap();
        assert_eq!(fingerprint(&path).unwrap(), created);
        let note = read_note(&path).unwrap();
        let written = write_note(&path, "two\n", &note.format, Some(&note.fingerprint)).unwrap();
        assert_eq!(fs::read(path.abs()).unwrap(), b"two\n");
        assert!(!written.matches_content(&created));
        let stale = dir.path().join("sub/.a.md.vaultchat-abcdef.tmp");
        fs::write(&stale, "x").unwrap();
        fs::write(dir.path().join("sub/keep.tmp"), "x").unwrap();
        assert_eq!(
            cleanup_stale_temps(dir.path(), Duration::from_secs(3600)).unwrap(),
            0
        );
        assert_eq!(cleanup_stale_temps(dir.path(), Duration::ZERO).unwrap(), 1);
        assert!(!stale.exists());
        let names: Vec<_> = fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
