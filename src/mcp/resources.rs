//! The vault's notes as MCP resources: listing in pages and reading a note's bytes.
//!
//! The notes listed are the ones `list_notes` lists (every `.md` file outside dot-folders, links
//! not followed), and a read goes the way `read_note` goes: the vault's guard checks the path,
//! dot-folders and non-notes are refused (`connections.toml` and `envs/` hold secrets), and the
//! bytes are read through the vault root's handle, never through a link. A read returns the file
//! exactly as it is on disk: no line-ending or byte-order-mark normalisation.

use super::note_uri::{cursor_after, cursor_rel, note_rel, note_uri};
use crate::tools::ToolError;
use crate::tools::workspace::Workspace;
use crate::vault::Access;
use crate::vault::walk::{self, NoteStat};
use rmcp::ErrorData as McpError;
use rmcp::model::{Annotations, ReadResourceResult, Resource, ResourceContents};
use serde_json::json;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

/// Notes per `resources/list` page.
pub const PAGE_SIZE: usize = 100;

/// How much of each note a listing reads for its title.
const TITLE_BYTES: usize = 64 * 1024;

/// The most of one note a `resources/read` answers with; a longer note is read in pages of this
/// size (a whole 50 MB note in one answer would be over the 16 MiB a stdio message may be).
pub const READ_PAGE_BYTES: usize = 1024 * 1024;

/// The `_meta` key of a page of a long note: `{offset, bytes, size, next}`.
pub const PAGE_META: &str = "vaultchat/page";

/// What the marker after a cut note takes, besides the note's path.
const CUT_MARKER_BYTES: usize = 200;

/// The MIME type notes are served with.
pub const MARKDOWN: &str = "text/markdown";

/// Size and modification time (ns) of each listed note, by vault-relative path.
pub type NoteStamps = BTreeMap<String, (u64, i64)>;

/// The notes of one vault, as resources.
pub struct NoteCatalog {
    workspace: Arc<Workspace>,
}

impl NoteCatalog {
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self { workspace }
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    /// Every listed note, sorted by path (byte order).
    pub fn notes(&self) -> Vec<NoteStat> {
        let mut notes = walk::walk(self.workspace.vault().root(), &Default::default()).notes;
        notes.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
        notes
    }

    /// Size and modification time of every listed note.
    pub fn stamps(&self) -> NoteStamps {
        self.notes()
            .into_iter()
            .map(|n| (n.rel, (n.size, n.mtime_ns)))
            .collect()
    }

    /// Size and modification time of `rel` when it is a note the listing would show (a regular
    /// `.md` file outside dot-folders, reached without links); `None` otherwise.
    pub fn stamp(&self, rel: &str) -> Option<(u64, i64)> {
        let mut names: Vec<&str> = rel.split('/').collect();
        let name = names.pop()?;
        if !walk::is_note_name(name) || walk::is_hidden_rel(rel) || names.contains(&"") {
            return None;
        }
        let folder = self
            .workspace
            .vault()
            .handle()
            .folder(&names, false, rel)
            .ok()?;
        folder.file_stat(name).ok().flatten()
    }

    /// One page of `resources/list` from `listing` (every listed note, by path): the notes after
    /// the cursor's path, and the cursor of the next page when there is one.
    pub fn page(
        &self,
        listing: &NoteStamps,
        cursor: Option<&str>,
    ) -> Result<(Vec<Resource>, Option<String>), McpError> {
        let (page, next) = cut_page(listing, cursor)?;
        let resources = page
            .into_iter()
            .map(|(rel, &(size, mtime_ns))| to_resource(rel, size, mtime_ns, self.title(rel)))
            .collect();
        Ok((resources, next))
    }

    /// A note's title as the index has it (frontmatter `title`, else the first heading), read
    /// from the note itself: a page reads its hundred notes rather than every title of the index.
    /// Only the note's first [`TITLE_BYTES`] are read: a title lies at the top.
    fn title(&self, rel: &str) -> Option<String> {
        let (bytes, _size) = self.read_span(rel, 0, TITLE_BYTES).ok()?;
        // The cut may fall inside a character.
        let text = match std::str::from_utf8(&bytes) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()?,
        };
        crate::vault::markdown::parse(text).title
    }

    /// The vault-relative path of a note URI, checked as `read_note` checks a path.
    pub fn checked_rel(&self, uri: &str) -> Result<String, McpError> {
        let rel = note_rel(uri).ok_or_else(|| {
            McpError::invalid_params(
                format!("`{uri}` is not a note URI; notes are vault://note/<path>, as resources/list gives them"),
                None,
            )
        })?;
        let path = self
            .workspace
            .resolve(&rel, Access::Read)
            .map_err(tool_error)?;
        let file_name = path.rel().rsplit('/').next().unwrap_or_default();
        if walk::is_hidden_rel(path.rel()) || !walk::is_note_name(file_name) {
            return Err(McpError::resource_not_found(
                format!("`{rel}` is not a note (notes are .md files outside dot-folders)"),
                Some(json!({ "uri": uri })),
            ));
        }
        // Through the root handle: a regular file, reached without links.
        if self.stamp(path.rel()).is_none() {
            return Err(McpError::resource_not_found(
                format!("no note at `{rel}`"),
                Some(json!({ "uri": uri })),
            ));
        }
        Ok(path.rel().to_string())
    }

    /// The note's bytes as they are on disk: text when they are UTF-8 (as notes are), else a
    /// base64 blob, either way `text/markdown`. A note over [`READ_PAGE_BYTES`] is served in
    /// pages: `uri` reads the first, `uri?offset=N` the one starting at byte `N`, and each page's
    /// `_meta` [`PAGE_META`] gives its offset, length, the note's size and the next page's URI
    /// (`null` on the last). A text page ends at a character boundary.
    pub fn read(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let (note, offset) = split_page(uri)?;
        let rel = self.checked_rel(note)?;
        let (bytes, size) = self.read_span(&rel, offset, READ_PAGE_BYTES)?;
        if offset > 0 && offset >= size {
            return Err(McpError::invalid_params(
                format!("`offset` {offset} is at or past the end of `{rel}` ({size} bytes)"),
                Some(json!({ "uri": uri })),
            ));
        }
        let whole = offset == 0 && bytes.len() as u64 == size;
        let (contents, shown) = match String::from_utf8(bytes) {
            Ok(text) => {
                let shown = text.len();
                (ResourceContents::text(text, uri), shown)
            }
            // A page of a text note whose cut fell inside a character: it ends before it.
            Err(e)
                if !whole
                    && e.utf8_error().error_len().is_none()
                    && e.utf8_error().valid_up_to() > 0 =>
            {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                let text = String::from_utf8(bytes).unwrap_or_default();
                (ResourceContents::text(text, uri), valid)
            }
            Err(e)
                if offset > 0
                    && e.utf8_error().valid_up_to() == 0
                    && is_continuation(e.as_bytes()) =>
            {
                return Err(McpError::invalid_params(
                    format!(
                        "`offset` {offset} is inside a character of `{rel}`: start a page where the previous one's `next` says"
                    ),
                    Some(json!({ "uri": uri })),
                ));
            }
            Err(e) => {
                let shown = e.as_bytes().len();
                (
                    ResourceContents::blob(crate::attach::base64(e.as_bytes()), uri),
                    shown,
                )
            }
        };
        let contents = contents.with_mime_type(MARKDOWN);
        let contents = if whole {
            contents
        } else {
            let end = offset + shown as u64;
            let next = (end < size).then(|| format!("{}?offset={end}", note_uri(&rel)));
            let mut meta = rmcp::model::JsonObject::new();
            meta.insert(
                PAGE_META.into(),
                json!({ "offset": offset, "bytes": shown, "size": size, "next": next }),
            );
            contents.with_meta(rmcp::model::MetaObject(meta))
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    /// The note's text for a prompt: (path, text) for a path, title or alias, as tools take it,
    /// at most `max_bytes` of it. A longer note is read only that far and cut at a character
    /// boundary, with a marker saying how much is missing and how to read it.
    pub fn note_text(&self, name: &str, max_bytes: usize) -> Result<(String, String), McpError> {
        let path = self
            .workspace
            .resolve_note(name, Access::Read)
            .map_err(tool_error)?;
        let rel = path.rel().to_string();
        let size = self.stamp(&rel).map_or(0, |(size, _)| size);
        if size <= max_bytes as u64 {
            let (rel, note) = self.workspace.read_note_named(&rel).map_err(tool_error)?;
            return Ok((rel, note.text));
        }
        // Room for the marker, so text and marker together stay within `max_bytes`.
        let room = max_bytes.saturating_sub(CUT_MARKER_BYTES + rel.len());
        let (head, _) = self.read_span(&rel, 0, room)?;
        let text = match std::str::from_utf8(&head) {
            Ok(text) => text,
            // The cut fell inside a character: end before it.
            Err(e) if e.error_len().is_none() => {
                std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(e) => {
                return Err(McpError::invalid_params(
                    format!(
                        "`{rel}` is not UTF-8 text (byte {}): notes are read as text",
                        e.valid_up_to()
                    ),
                    None,
                ));
            }
        };
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        let marker = format!(
            "\n\n[… cut here: `{rel}` is {size} bytes and only the first {} are shown; read_note reads the rest (`offset`, `max_chars`)]",
            text.len()
        );
        Ok((rel, format!("{text}{marker}")))
    }

    /// Up to `max` bytes of the note `rel` (checked, canonical) from byte `offset`, and the
    /// note's whole size; never reads more than that, whatever the note's size.
    fn read_span(&self, rel: &str, offset: u64, max: usize) -> Result<(Vec<u8>, u64), McpError> {
        self.workspace
            .vault()
            .handle()
            .read_span(rel, offset, max)
            .map_err(|e| McpError::resource_not_found(e.to_string(), None))
    }
}

/// The note URI and the byte offset of a page URI (`vault://note/x.md?offset=N`); a URI without
/// a query is the first page.
fn split_page(uri: &str) -> Result<(&str, u64), McpError> {
    let Some((note, query)) = uri.split_once('?') else {
        return Ok((uri, 0));
    };
    match query.strip_prefix("offset=").map(str::parse::<u64>) {
        Some(Ok(offset)) if !query.contains(['+', '-']) => Ok((note, offset)),
        _ => Err(McpError::invalid_params(
            format!(
                "`{uri}` has a query other than `?offset=N` (a page of a long note, as a page's `next` gives it)"
            ),
            Some(json!({ "uri": uri })),
        )),
    }
}

/// Whether `bytes` start with a UTF-8 continuation byte (a page start inside a character).
fn is_continuation(bytes: &[u8]) -> bool {
    bytes.first().is_some_and(|b| b & 0xC0 == 0x80)
}

/// The notes of `listing` after the cursor's path (all of them without one), at most a page, and
/// the cursor of the next page when more follow.
type Page<'a> = (Vec<(&'a String, &'a (u64, i64))>, Option<String>);

fn cut_page<'a>(listing: &'a NoteStamps, cursor: Option<&str>) -> Result<Page<'a>, McpError> {
    let after = match cursor {
        None => None,
        Some(cursor) => Some(cursor_rel(cursor).ok_or_else(|| {
            McpError::invalid_params(
                "the cursor was not given by this server's resources/list; start again without one",
                None,
            )
        })?),
    };
    let rest = match &after {
        Some(after) => listing.range::<str, _>((Bound::Excluded(after.as_str()), Bound::Unbounded)),
        None => listing.range::<str, _>(..),
    };
    let mut page: Vec<(&String, &(u64, i64))> = rest.take(PAGE_SIZE + 1).collect();
    let more = page.len() > PAGE_SIZE;
    page.truncate(PAGE_SIZE);
    let next = more
        .then(|| page.last().map(|(rel, _)| cursor_after(rel)))
        .flatten();
    Ok((page, next))
}

fn to_resource(rel: &str, size: u64, mtime_ns: i64, title: Option<String>) -> Resource {
    let stem = rel.rsplit('/').next().unwrap_or(rel);
    let stem = stem.get(..stem.len().saturating_sub(3)).unwrap_or(stem);
    let annotations: Option<Annotations> =
        serde_json::from_value(json!({ "lastModified": crate::time::format_rfc3339_ns(mtime_ns) }))
            .ok();
    let resource = Resource::new(note_uri(rel), rel)
        .with_title(title.unwrap_or_else(|| stem.to_string()))
        .with_mime_type(MARKDOWN)
        .with_size(size);
    match annotations {
        Some(annotations) => resource.with_annotations(annotations),
        None => resource,
    }
}

/// A caller's mistake (a bad path, no such note) is `invalid_params`; anything else internal.
pub fn tool_error(e: ToolError) -> McpError {
    match e {
        ToolError::Invalid(message) => McpError::invalid_params(message, None),
        ToolError::Internal(message) => McpError::internal_error(message, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(page: &Page<'_>) -> Vec<String> {
        page.0.iter().map(|(rel, _)| rel.to_string()).collect()
    }

    #[test]
    fn pages_are_cut_by_path_and_stay_put_while_notes_change() {
        let mut listing: NoteStamps = (0..250).map(|i| (format!("n{i:03}.md"), (1, 1))).collect();
        let first = cut_page(&listing, None).unwrap();
        assert_eq!(first.0.len(), PAGE_SIZE);
        let cursor = first.1.clone().unwrap();
        let second = names(&cut_page(&listing, Some(&cursor)).unwrap());
        assert_eq!(second.first().map(String::as_str), Some("n100.md"));
        // Notes added before the cursor and the cursor's own note removed: the next page is
        // the same notes (no repeat, no skip).
        listing.insert("a new note.md".into(), (1, 1));
        listing.remove("n099.md");
        let again = cut_page(&listing, Some(&cursor)).unwrap();
        assert_eq!(names(&again), second);
        let last = cut_page(&listing, again.1.as_deref()).unwrap();
        assert_eq!(last.0.len(), 50);
        assert_eq!(last.1, None);
        let error = cut_page(&listing, Some("page-2")).unwrap_err();
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    }
}
