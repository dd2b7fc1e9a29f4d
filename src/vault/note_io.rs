//! Reading and writing notes without ever losing data.
//!
//! * Reads record a [`Fingerprint`] (hash, size, mtime) so a later write can tell whether the file
//!   changed underneath (the user or a sync tool edited it).
//! * Writes go to a temp file in the same folder, are fsynced, renamed over the note and the folder is
//!   fsynced: after a crash the note is either the old or the new version.
//! * Every open, create and rename goes through the vault root's handle ([`super::contained`]), one
//!   name at a time without following links, so a folder swapped for a link after the guard's check
//!   cannot send a read or a write outside the vault. Temp files live in the note's real folder and
//!   are removed on every error.
//! * The file's format survives an edit: BOM, CRLF line endings, a missing trailing newline and the
//!   permission bits. Files that are not UTF-8 are refused rather than re-encoded lossily.
use std::fs::{self, File, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use super::contained::{ContainedError, Entry, Folder, Kind};
use super::guard::{Access, PathError, TEMP_MARKER, VaultPath, is_temp_name};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The content hash used in fingerprints and by the index (xxh3, 64 bits).
pub fn content_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

pub use crate::protocol::{Fingerprint, LineEnding, NoteText, TextFormat};

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

    #[error(
        "`{path}` was not read or written: `{component}` became a symbolic link or stopped being a folder after the path was checked; check what changed it and try again"
    )]
    LinkAppeared { path: String, component: String },

    #[error(
        "`{path}` was not written: another vaultchat process kept the vault locked for too long; try again in a moment"
    )]
    Busy { path: String },

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
            Self::LinkAppeared { .. } => "symlink_race",
            Self::Busy { .. } => "busy",
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

/// Turns a contained operation's failure on `path` into a note error.
fn contained_err(path: &VaultPath) -> impl FnOnce(ContainedError) -> NoteError + '_ {
    move |err| match err {
        ContainedError::LinkAppeared { component, .. } => NoteError::LinkAppeared {
            path: path.rel().to_string(),
            component,
        },
        ContainedError::NotAFolder { component, .. } => NoteError::Path(PathError::NotAFolder {
            input: path.rel().to_string(),
            component,
        }),
        ContainedError::LockTimeout => NoteError::Busy {
            path: path.rel().to_string(),
        },
        ContainedError::Io(source) if source.kind() == io::ErrorKind::NotFound => {
            NoteError::NotFound {
                path: path.rel().to_string(),
            }
        }
        ContainedError::Io(source) => io_err(path.abs())(source),
    }
}

/// Reads a file's bytes and the metadata of the same open file, so both describe one version. The
/// file is opened through the vault root's handle without following links.
fn read_bytes(path: &VaultPath) -> Result<(Vec<u8>, fs::Metadata), NoteError> {
    let (folder, name) = path.open_parent(false).map_err(contained_err(path))?;
    read_in(&folder, name, path)
}

/// Opens any regular file of the vault for reading (a config file, say) the way notes are opened:
/// through the vault root's handle, never through a link.
pub fn open_file(path: &VaultPath) -> Result<File, NoteError> {
    let (folder, name) = path.open_parent(false).map_err(contained_err(path))?;
    folder
        .open_file(name, path.rel())
        .map_err(contained_err(path))
}

fn read_in(
    folder: &Folder,
    name: &str,
    path: &VaultPath,
) -> Result<(Vec<u8>, fs::Metadata), NoteError> {
    let mut file = folder
        .open_file(name, path.rel())
        .map_err(contained_err(path))?;
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
/// (with no `expected`) creates it. Callers that must not lose a concurrent vaultchat write hold the
/// vault's write lock ([`super::contained::RootHandle::lock_writes`]) around their read and this call,
/// which makes the check and the rename one step.
pub fn write_note(
    path: &VaultPath,
    text: &str,
    format: &TextFormat,
    expected: Option<&Fingerprint>,
) -> Result<Fingerprint, NoteError> {
    check_write_access(path)?;
    let (folder, name) = path.open_parent(false).map_err(contained_err(path))?;
    let existing = check_target(&folder, name, path)?;
    if let Some(expected) = expected {
        let actual = match read_in(&folder, name, path) {
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
    let (mode, owner) = match existing {
        Some((mode, uid, gid)) => (mode, Some((uid, gid))),
        None => (new_file_mode(), None),
    };
    let bytes = encode(text, format);
    let temp = TempFile::write(&folder, name, path, &bytes, mode, owner)?;
    let file = temp.rename_over(name)?;
    Ok(written(path, &folder, &file, &bytes))
}

/// The fingerprint of a note whose new content is already in place. From here on an error may not
/// be reported as one: `NoteError` means "the note was left unchanged", and it was not. A folder
/// that cannot be synced (a network mount) or a handle that cannot be stat'ed is logged, and the
/// fingerprint falls back to the bytes alone (the mtime is never compared).
fn written(path: &VaultPath, folder: &Folder, file: &File, bytes: &[u8]) -> Fingerprint {
    if let Err(err) = folder.sync() {
        tracing::warn!(
            "{} was written, but its folder could not be synced: {err}",
            path.rel()
        );
    }
    match file.metadata() {
        Ok(meta) => Fingerprint::of(bytes, &meta),
        Err(err) => {
            tracing::warn!("{} was written, but cannot be stat'ed: {err}", path.rel());
            Fingerprint {
                hash: content_hash(bytes),
                mtime_ns: 0,
                size: bytes.len() as u64,
            }
        }
    }
}

fn check_write_access(path: &VaultPath) -> Result<(), NoteError> {
    if path.access() != Access::Write {
        return Err(PathError::CheckedForRead {
            input: path.rel().to_string(),
        }
        .into());
    }
    Ok(())
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
    check_write_access(path)?;
    if overwrite {
        path.open_parent(true).map_err(contained_err(path))?;
        return write_note(path, text, &TextFormat::default(), None);
    }
    let (folder, name) = path.open_parent(true).map_err(contained_err(path))?;
    let bytes = text.as_bytes();
    let temp = TempFile::write(&folder, name, path, bytes, new_file_mode(), None)?;
    let file = temp.link_as(name)?;
    Ok(written(path, &folder, &file, bytes))
}

/// Re-checks the final component right before a write: the guard checked it earlier, but a link or a
/// hard link may have appeared since. Returns the mode and owner of the existing regular file, if any.
fn check_target(
    folder: &Folder,
    name: &str,
    path: &VaultPath,
) -> Result<Option<(u32, u32, u32)>, NoteError> {
    let input = path.rel().to_string();
    match folder.entry(name).map_err(io_err(path.abs()))? {
        Entry::Symlink => Err(PathError::IsSymlink { input }.into()),
        Entry::File { links, .. } if links > 1 => Err(PathError::HardLink { input, links }.into()),
        Entry::File { mode, uid, gid, .. } => Ok(Some((mode, uid, gid))),
        Entry::Folder | Entry::Other => Err(NoteError::Io {
            path: path.abs().to_path_buf(),
            source: io::Error::new(
                io::ErrorKind::IsADirectory,
                "this is a folder or a special file, not a note",
            ),
        }),
        Entry::Missing => Ok(None),
    }
}

/// A fully written and flushed temp file beside a note (`.NAME.vaultchat-XXXXXX.tmp`), removed again
/// unless it is renamed or linked into place.
struct TempFile<'a> {
    folder: &'a Folder,
    name: String,
    file: Option<File>,
    path: &'a VaultPath,
}

impl<'a> TempFile<'a> {
    /// Writes `bytes` to a fresh temp file in `folder`, with `mode` (and the owner, where allowed),
    /// and flushes it to disk.
    fn write(
        folder: &'a Folder,
        note_name: &str,
        path: &'a VaultPath,
        bytes: &[u8],
        mode: u32,
        owner: Option<(u32, u32)>,
    ) -> Result<Self, NoteError> {
        let fail = io_err(path.abs());
        let (name, file) = create_temp_in(folder, note_name).map_err(fail)?;
        let mut temp = TempFile {
            folder,
            name,
            file: Some(file),
            path,
        };
        temp.fill(bytes, mode, owner)?;
        Ok(temp)
    }

    fn fill(
        &mut self,
        bytes: &[u8],
        mode: u32,
        owner: Option<(u32, u32)>,
    ) -> Result<(), NoteError> {
        let abs = self.path.abs();
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        if let Some((uid, gid)) = owner {
            // Only root may give a file away; for anyone else this keeps the group where allowed and
            // is otherwise harmless to skip, so its error is ignored.
            let _ = std::os::unix::fs::fchown(&*file, Some(uid), Some(gid));
        }
        // Set after creation so the umask does not strip bits the original had (and 0600 stays 0600).
        file.set_permissions(Permissions::from_mode(mode))
            .map_err(io_err(abs))?;
        file.write_all(bytes).map_err(io_err(abs))?;
        file.sync_all().map_err(io_err(abs))?;
        Ok(())
    }

    /// Renames the temp file over `target` in the same folder; the returned handle is the note.
    fn rename_over(mut self, target: &str) -> Result<File, NoteError> {
        self.folder
            .rename_over(&self.name, target)
            .map_err(io_err(self.path.abs()))?;
        self.take()
    }

    /// Gives the temp file the name `target` unless anything has it, then drops the temp name.
    fn link_as(mut self, target: &str) -> Result<File, NoteError> {
        let already = || NoteError::AlreadyExists {
            path: self.path.rel().to_string(),
        };
        match self.folder.link(&self.name, target) {
            Ok(()) => {
                // The note now has its name; the temp name goes (Drop removes it).
                let file = self.file.take().ok_or_else(|| {
                    io_err(self.path.abs())(io::Error::other("temp file already used"))
                })?;
                return Ok(file);
            }
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => return Err(already()),
            // Some file systems (FAT, exFAT, some network mounts) have no hard links; there an
            // exclusive rename is the next best atomic create.
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::Unsupported | io::ErrorKind::PermissionDenied
                ) => {}
            Err(err) => return Err(io_err(self.path.abs())(err)),
        }
        match self.folder.rename_noreplace(&self.name, target) {
            Ok(()) => self.take(),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Err(already()),
            Err(err) => Err(io_err(self.path.abs())(err)),
        }
    }

    /// The file after its temp name was renamed away (nothing left to remove).
    fn take(&mut self) -> Result<File, NoteError> {
        self.name.clear();
        self.file
            .take()
            .ok_or_else(|| io_err(self.path.abs())(io::Error::other("temp file already used")))
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if !self.name.is_empty()
            && let Err(err) = self.folder.remove_file(&self.name)
        {
            tracing::warn!("removing the temp file {} failed: {err}", self.name);
        }
    }
}

/// Creates `.NAME.vaultchat-XXXXXX.tmp` in `folder`; dot-prefixed so vault walkers skip it, the name
/// cut so the temp name stays within 255 bytes.
fn create_temp_in(folder: &Folder, note_name: &str) -> io::Result<(String, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let prefix = format!(".{}{TEMP_MARKER}", truncate_at_char(note_name, 200));
    let mut last = None;
    for _ in 0..16 {
        let seed = COUNTER.fetch_add(1, Ordering::Relaxed);
        // A uniqueness seed, not "what time is it": the real clock, never `crate::time`'s, which
        // a test may fix or start at the same instant in every process.
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let random = content_hash(format!("{}-{seed}-{nanos}", std::process::id()).as_bytes());
        let name = format!("{prefix}{:06x}.tmp", random & 0xff_ffff);
        match folder.create_new(&name) {
            Ok(file) => return Ok((name, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temp file name")))
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

/// Removes vaultchat temp files older than `older_than` left behind by a crash, in the vault and
/// every folder below it, walked through the root's handle (links are never followed). Returns the
/// vault-relative paths removed.
pub fn cleanup_stale_temps(root: &VaultPath, older_than: Duration) -> io::Result<Vec<String>> {
    stale_temps(root, older_than, true)
}

/// The vault-relative paths of vaultchat temp files older than `older_than` (removed when
/// `remove`).
pub fn stale_temps(
    root: &VaultPath,
    older_than: Duration,
    remove: bool,
) -> io::Result<Vec<String>> {
    // Compared with the temp files' modification times, which the kernel stamps with its real
    // clock: so the real clock here, never `crate::time`'s (a fixed clock would age them wrongly).
    let now = SystemTime::now();
    let mut removed = Vec::new();
    let top = root
        .root_folder()
        .map_err(|e| io::Error::other(e.to_string()))?;
    let mut pending = vec![(top, String::new())];
    while let Some((folder, rel)) = pending.pop() {
        // Kinds from the listing itself: only temp-named files are looked at more closely.
        let entries = match folder.entries() {
            Ok(entries) => entries,
            // The top folder must be readable; a subfolder that vanished or is closed off is skipped.
            Err(err) if rel.is_empty() => return Err(err),
            Err(_) => continue,
        };
        for (name, kind) in entries {
            let Ok(name) = name else { continue };
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            match kind {
                // Never touch the files of git or other tools, even if a name happened to match.
                Kind::Folder if name != ".git" => {
                    if let Ok(sub) = folder.open_folder(&name, &child) {
                        pending.push((sub, child));
                    }
                }
                Kind::File if is_temp_name(&name) => {
                    let Ok(file) = folder.open_file(&name, &child) else {
                        continue;
                    };
                    let age = file
                        .metadata()
                        .and_then(|meta| meta.modified())
                        .ok()
                        .and_then(|modified| now.duration_since(modified).ok());
                    // A temp file from the future (clock skew) is left alone: it may be a live write.
                    if age.is_some_and(|age| age >= older_than) {
                        if !remove {
                            removed.push(child);
                            continue;
                        }
                        match folder.remove_file(&name) {
                            Ok(()) => removed.push(child),
                            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                            Err(err) => return Err(err),
                        }
                    }
                }
                Kind::Folder | Kind::File | Kind::Other => {}
            }
        }
    }
    removed.sort();
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
        let root = vault.resolve("", Access::Read).unwrap();
        assert!(
            cleanup_stale_temps(&root, Duration::from_secs(3600))
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            cleanup_stale_temps(&root, Duration::ZERO).unwrap(),
            ["sub/.a.md.vaultchat-abcdef.tmp"]
        );
        assert!(!stale.exists());
        let names: Vec<_> = fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
