//! Reading the person's own files in the config folder (their `commands/`): the listing of a
//! folder and a bounded read of a file. The person's folder is theirs, so links are followed
//! (dotfiles are often linked in); every read is still bounded by the caller's limit. Also the
//! temporary files vaultchat hands to the person's own programs (a hook's list of paths).

use std::io::Read;
use std::path::Path;

/// What stands at a name in one of the person's folders (links followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnEntry {
    File,
    Folder,
    Other,
}

/// A folder's entries by name and whether it holds more than were read.
pub type OwnListing = (Vec<(String, OwnEntry)>, bool);

/// At most `max` entries of `dir` (in the order the file system lists them, then sorted by
/// name) and whether it holds more; `Ok(None)` when `dir` is not there. Names that are not UTF-8
/// are skipped (they cannot be typed as commands).
pub fn list_folder(dir: &Path, max: usize) -> std::io::Result<Option<OwnListing>> {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut entries = Vec::new();
    let mut more = false;
    for entry in listing {
        let entry = entry?;
        if entries.len() == max {
            more = true;
            break;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let kind = match std::fs::metadata(entry.path()) {
            Ok(meta) if meta.is_dir() => OwnEntry::Folder,
            Ok(meta) if meta.is_file() => OwnEntry::File,
            _ => OwnEntry::Other,
        };
        entries.push((name, kind));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Some((entries, more)))
}

/// Up to `max` bytes of the file at `path`, and whether it holds more.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
    read_at_most(std::fs::File::open(path)?, max)
}

/// Up to `max` bytes of `reader`, and whether there was more.
pub fn read_at_most(reader: impl Read, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::new();
    reader.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    let more = bytes.len() as u64 > max;
    bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    Ok((bytes, more))
}

/// `text` in a new temporary file of the system's (never the vault's: a hook's `git add -A`
/// would commit it), removed when the returned handle drops.
pub fn temporary_text(prefix: &str, text: &str) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".txt")
        .tempfile()?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    Ok(file)
}
