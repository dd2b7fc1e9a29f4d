//! The link graph: every link of every note, stored with its line and resolved to the note it
//! opens, kept current by the same syncs that keep the full-text index current.
//!
//! A link is a `[[wikilink]]` (any form: `#heading`, `#^block`, `|alias`, `\|alias` in a table),
//! an `![[embed]]`, a `[[wikilink]]` in a frontmatter property, or a Markdown link to a local
//! `.md` file (`[text](rel/path%20name.md)`). Links in code are text (the Markdown scan skips
//! them). Wikilinks resolve by [`LinkIndex`] — the one rule `move_note` and `[[` completion use;
//! an ambiguous name is stored with the note Obsidian opens and flagged. Links to attachments
//! (`![[diagram.png]]`) are kept apart: never unresolved, never a backlink of a note.
//!
//! When notes appear, vanish or are renamed, only the links whose last segment names them (their
//! `name_key`) are resolved again: a note created later resolves the links that waited for it.

use super::fresh::{self, Stamp};
use super::{Index, IndexError};
use crate::vault::links::{
    LinkIndex, LinkResolution, ObsidianPicker, file_keys_for_link_key, has_md_extension,
    link_name_key, obsidian_pick,
};
use crate::vault::markdown::{self, ParsedNote};
use crate::vault::name::file_name;
use crate::vault::relink::markdown_links_at;
use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// At most this many links of one note are stored: a generated note with millions of links must
/// not grow the index without bound.
const MAX_LINKS_PER_NOTE: usize = 10_000;

/// A note's links have the rowids `note_id << LINK_BITS` up: one range per note, in text order,
/// so a note's links are found and deleted by rowid with no index of their own (one fewer for a
/// cold build to sort). Room for [`MAX_LINKS_PER_NOTE`].
const LINK_BITS: u32 = 14;
const _: () = assert!(MAX_LINKS_PER_NOTE < 1 << LINK_BITS);

/// The rowids of the links of note `id`: first and last.
pub(super) fn link_rowids(id: i64) -> Result<(i64, i64), IndexError> {
    let first = id
        .checked_mul(1 << LINK_BITS)
        .filter(|first| *first >= 0)
        .ok_or_else(|| IndexError::Graph(format!("note id {id} is too large for it")))?;
    Ok((first, first | ((1 << LINK_BITS) - 1)))
}

/// A context line longer than this (bytes) is cut to a window around the link.
const MAX_CONTEXT_BYTES: usize = 240;

/// How a link is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// `[[Note]]` with any heading, block or alias.
    Wikilink,
    /// `![[Note]]`
    Embed,
    /// `[text](path.md)`
    Markdown,
    /// `[[Note]]` in a frontmatter property.
    Property,
}

impl LinkKind {
    fn code(self) -> i64 {
        match self {
            Self::Wikilink => 0,
            Self::Embed => 1,
            Self::Markdown => 2,
            Self::Property => 3,
        }
    }

    fn from_code(code: i64) -> Self {
        match code {
            1 => Self::Embed,
            2 => Self::Markdown,
            3 => Self::Property,
            _ => Self::Wikilink,
        }
    }
}

/// What a link resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    /// Exactly one note.
    Resolved,
    /// Several notes by the same name: stored with the one Obsidian opens.
    Ambiguous,
    /// No note by that name (yet).
    Unresolved,
    /// A file that is not a note (an image, a PDF): not part of the note graph.
    Attachment,
    /// Written by a sync, resolved before it commits (never seen outside one).
    Pending,
}

impl LinkState {
    fn code(self) -> i64 {
        match self {
            Self::Resolved => 0,
            Self::Ambiguous => 1,
            Self::Unresolved => 2,
            Self::Attachment => 3,
            Self::Pending => 4,
        }
    }

    fn from_code(code: i64) -> Self {
        match code {
            0 => Self::Resolved,
            1 => Self::Ambiguous,
            3 => Self::Attachment,
            4 => Self::Pending,
            _ => Self::Unresolved,
        }
    }
}

/// One link as a note's text holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteLink {
    /// 1-based.
    pub line: u32,
    pub kind: LinkKind,
    /// The note as written, without `#heading`, `^block` or `|alias`; a Markdown link's
    /// destination percent-decoded, without its `#fragment`.
    pub target: String,
    pub attachment: bool,
    /// The linking line (a window of it when long).
    pub context: String,
}

/// The links of a note, in the order of the text. `[[#Heading]]` (a link into the note itself) is
/// not part of the graph.
pub fn extract(text: &str, parsed: &ParsedNote) -> Vec<NoteLink> {
    let mut found: Vec<(usize, LinkKind, String, bool)> = Vec::new();
    if let Some(front) = &parsed.frontmatter {
        for link in markdown::frontmatter_links(text, front) {
            push_wikilink(&mut found, link.span.start, LinkKind::Property, link.target);
        }
    }
    for link in &parsed.links {
        let kind = if link.embed {
            LinkKind::Embed
        } else {
            LinkKind::Wikilink
        };
        push_wikilink(&mut found, link.span.start, kind, link.target.clone());
    }
    // From the note's own parse: no second run of pulldown-cmark.
    for link in markdown_links_at(text, parsed.body_start, &parsed.inline_links) {
        let attachment = !has_md_extension(&link.decoded);
        if attachment && !is_attachment_name(&link.decoded) {
            continue; // `[x](folder/)`, `[x](page.html)`: not a note, not a vault file we know.
        }
        found.push((
            link.target.start,
            LinkKind::Markdown,
            link.decoded,
            attachment,
        ));
    }
    found.sort_by_key(|(at, ..)| *at);
    found.truncate(MAX_LINKS_PER_NOTE);
    let mut line = 1u32;
    let mut counted = 0usize;
    // The line the last link was on: links come in order, so each line is scanned once, however
    // many links it holds (a one-line note of 10,000 links was 10,000 scans of the line).
    let mut bounds: Option<(usize, usize)> = None;
    found
        .into_iter()
        .map(|(at, kind, target, attachment)| {
            let at = at.min(text.len());
            line += count_newlines(text.get(counted..at).unwrap_or(""));
            counted = at;
            let (start, end) = match bounds {
                Some((start, end)) if at >= start && at <= end => (start, end),
                _ => line_bounds(text, at),
            };
            bounds = Some((start, end));
            NoteLink {
                line,
                kind,
                target,
                attachment,
                context: context_at(text, start, end, at),
            }
        })
        .collect()
}

/// The line holding byte `at`: where it starts, and where its newline (or the text) ends it.
fn line_bounds(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
    (start, end)
}

fn push_wikilink(
    found: &mut Vec<(usize, LinkKind, String, bool)>,
    at: usize,
    kind: LinkKind,
    target: String,
) {
    if target.trim().is_empty() {
        return;
    }
    let attachment = is_attachment_name(&target);
    found.push((at, kind, target, attachment));
}

fn count_newlines(s: &str) -> u32 {
    u32::try_from(s.bytes().filter(|&b| b == b'\n').count()).unwrap_or(u32::MAX)
}

/// Whether a link target names a file Obsidian shows as an attachment rather than a note: one
/// with an extension of the formats Obsidian embeds (images, audio, video, PDF, canvases).
pub fn is_attachment_name(target: &str) -> bool {
    const EXTENSIONS: [&str; 27] = [
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "svg",
        "webp",
        "avif",
        "heic",
        "tif",
        "tiff",
        "ico",
        "mp3",
        "wav",
        "m4a",
        "ogg",
        "3gp",
        "flac",
        "webm",
        "mp4",
        "ogv",
        "mov",
        "mkv",
        "pdf",
        "canvas",
        "base",
        "excalidraw",
    ];
    let name = file_name(target.trim());
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e))
    })
}

/// The line `start..end` around byte `at`, trimmed; a window of about [`MAX_CONTEXT_BYTES`] around the link
/// when the line is longer, marked with `…`.
fn context_at(text: &str, start: usize, end: usize, at: usize) -> String {
    let line = text[start..end].trim_end_matches('\r');
    if line.len() <= MAX_CONTEXT_BYTES {
        return line.trim().to_string();
    }
    let half = MAX_CONTEXT_BYTES / 2;
    let from = floor_char(line, (at - start).saturating_sub(half / 2));
    let to = floor_char(line, (from + MAX_CONTEXT_BYTES).min(line.len()));
    let mut out = String::with_capacity(to - from + 8);
    if from > 0 {
        out.push('…');
    }
    out.push_str(line[from..to].trim());
    if to < line.len() {
        out.push('…');
    }
    out
}

fn floor_char(s: &str, mut at: usize) -> usize {
    while at > 0 && !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The key a link is found by when a note by its name appears or vanishes.
fn key_of(kind: LinkKind, target: &str) -> String {
    match kind {
        // A Markdown destination is a path: `#`, `^` and `|` are part of its file name.
        LinkKind::Markdown => crate::vault::links::fold_name(file_name(target)),
        LinkKind::Wikilink | LinkKind::Embed | LinkKind::Property => link_name_key(target),
    }
}

/// Resolve one link of the note at `from` among `notes`.
fn resolve<'a>(
    notes: &'a LinkIndex,
    kind: LinkKind,
    target: &str,
    attachment: bool,
    from: &str,
) -> (LinkState, Option<&'a str>) {
    if attachment {
        return (LinkState::Attachment, None);
    }
    match kind {
        LinkKind::Markdown => match notes.resolve_markdown(target, from) {
            Some(path) => (LinkState::Resolved, Some(path)),
            None => (LinkState::Unresolved, None),
        },
        LinkKind::Wikilink | LinkKind::Embed | LinkKind::Property => {
            picked(notes.resolve(target, Some(from)), from)
        }
    }
}

/// A wikilink's state and path from its resolution, for a link in the note at `from`.
fn picked<'a>(resolution: LinkResolution<'a>, from: &str) -> (LinkState, Option<&'a str>) {
    match resolution {
        LinkResolution::Unique(path) => (LinkState::Resolved, Some(path)),
        LinkResolution::Ambiguous(candidates) => {
            (LinkState::Ambiguous, obsidian_pick(&candidates, from))
        }
        LinkResolution::Missing => (LinkState::Unresolved, None),
    }
}

/// Resolves the links of a whole vault, each distinct wikilink target once.
///
/// A wikilink that is neither relative (`./`, `../`) nor empty names the same notes from every
/// note, so its resolution is kept by target; only an ambiguous one depends on where the link is
/// (Obsidian's pick prefers the linking note's folder), and its candidates are keyed by folder
/// once ([`ObsidianPicker`]). In a vault where a name repeats across hundreds of folders this
/// resolves each name once instead of sorting and scanning its candidates for every link
/// (docs/benchmarks.md §15).
pub(super) struct Resolver<'a> {
    notes: &'a LinkIndex,
    by_target: HashMap<String, Resolved<'a>>,
}

/// A wikilink target's resolution, as [`Resolver`] keeps it.
enum Resolved<'a> {
    Unique(&'a str),
    Ambiguous(ObsidianPicker<'a>),
    Missing,
}

impl<'a> Resolver<'a> {
    pub fn new(notes: &'a LinkIndex) -> Self {
        Self {
            notes,
            by_target: HashMap::new(),
        }
    }

    fn resolve(&mut self, link: &NoteLink, from: &str) -> (LinkState, Option<&'a str>) {
        let wikilink = matches!(
            link.kind,
            LinkKind::Wikilink | LinkKind::Embed | LinkKind::Property
        );
        if link.attachment || !wikilink || !resolves_alike_everywhere(&link.target) {
            return resolve(self.notes, link.kind, &link.target, link.attachment, from);
        }
        if !self.by_target.contains_key(&link.target) {
            let resolved = match self.notes.resolve(&link.target, None) {
                LinkResolution::Unique(path) => Resolved::Unique(path),
                LinkResolution::Ambiguous(candidates) => {
                    Resolved::Ambiguous(ObsidianPicker::new(&candidates))
                }
                LinkResolution::Missing => Resolved::Missing,
            };
            self.by_target.insert(link.target.clone(), resolved);
        }
        match self.by_target.get(&link.target) {
            Some(&Resolved::Unique(path)) => (LinkState::Resolved, Some(path)),
            Some(Resolved::Ambiguous(picker)) => (LinkState::Ambiguous, picker.pick(from)),
            Some(Resolved::Missing) => (LinkState::Unresolved, None),
            None => resolve(self.notes, link.kind, &link.target, false, from),
        }
    }
}

/// Whether a wikilink target names the same notes from any linking note: it is not relative
/// (`./x`, `../x`) and not empty once its `#heading`, `^block` and `|alias` are cut (`[[#h]]` is
/// the linking note itself).
fn resolves_alike_everywhere(target: &str) -> bool {
    let name = target.split(['|', '#', '^']).next().unwrap_or("").trim();
    !name.is_empty() && !name.starts_with("./") && !name.starts_with("../")
}

/// What a sync changed that the graph must follow.
#[derive(Default)]
pub(super) struct GraphChanges {
    /// Notes whose links were written as [`LinkState::Pending`].
    pub dirty: Vec<i64>,
    /// The name keys of notes that appeared, vanished or were renamed (old and new names).
    pub names: HashSet<String>,
    /// The paths of notes that vanished or were renamed away: links to them resolve anew.
    pub vanished: HashSet<String>,
}

impl GraphChanges {
    /// A note vanished from `path` (deleted, or renamed away).
    pub fn note_vanished(&mut self, path: &str) {
        self.vanished.insert(path.to_string());
        self.note_named(path);
    }

    /// A note appeared at, or vanished from, `path`.
    pub fn note_named(&mut self, path: &str) {
        self.names.insert(link_name_key(file_name(path)));
        let stem = crate::vault::name::stem(path);
        self.names.insert(crate::vault::links::fold_name(stem));
    }
}

/// Write the links of note `id` (at `from`): resolved now when `resolver` holds the whole vault
/// (a cold build), else pending until [`settle`] (the caller names the note in
/// [`GraphChanges::dirty`]).
pub(super) fn insert_links(
    tx: &Transaction<'_>,
    id: i64,
    from: &str,
    links: &[NoteLink],
    mut resolver: Option<&mut Resolver<'_>>,
) -> Result<(), IndexError> {
    if links.is_empty() {
        return Ok(());
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO links (rowid, note_id, from_path, line, kind, target, name_key, to_path, state, context)
         VALUES (?10, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    let (first, _) = link_rowids(id)?;
    for (rowid, link) in (first..).zip(links.iter().take(MAX_LINKS_PER_NOTE)) {
        let (state, to_path) = match resolver.as_deref_mut() {
            Some(resolver) => resolver.resolve(link, from),
            None if link.attachment => (LinkState::Attachment, None),
            None => (LinkState::Pending, None),
        };
        insert.execute(params![
            id,
            from,
            link.line,
            link.kind.code(),
            link.target,
            key_of(link.kind, &link.target),
            to_path,
            state.code(),
            link.context,
            rowid
        ])?;
    }
    Ok(())
}

pub(super) fn delete_links(tx: &Transaction<'_>, id: i64) -> Result<(), IndexError> {
    let (first, last) = link_rowids(id)?;
    tx.prepare_cached("DELETE FROM links WHERE rowid BETWEEN ?1 AND ?2")?
        .execute([first, last])?;
    Ok(())
}

/// The graph's indexes, as graph_schema.sql creates them: dropped before a cold build fills
/// `links` and created after it, which sorts each once instead of inserting every row into
/// its B-tree as it comes.
const INDEXES: [(&str, &str); 3] = [
    (
        "links_to",
        "links (to_path, from_path, line) WHERE to_path IS NOT NULL",
    ),
    (
        "links_waiting",
        "links (name_key) WHERE to_path IS NULL AND state != 3",
    ),
    (
        "links_unresolved",
        "links (from_path, line) WHERE state = 2",
    ),
];

pub(super) fn drop_indexes(tx: &Transaction<'_>) -> Result<(), IndexError> {
    for (name, _) in INDEXES {
        tx.execute_batch(&format!("DROP INDEX IF EXISTS {name}"))?;
    }
    Ok(())
}

pub(super) fn create_indexes(tx: &Transaction<'_>) -> Result<(), IndexError> {
    for (name, on) in INDEXES {
        tx.execute_batch(&format!("CREATE INDEX IF NOT EXISTS {name} ON {on}"))?;
    }
    Ok(())
}

/// Resolve the links a sync left pending, and again every link whose name key names a note that
/// appeared, vanished or was renamed. Only the notes those links can name are read (by their
/// file key), never the whole `notes` table: a save of one note settles in a few lookups.
///
/// A link a name change can affect either resolves to no note (found by its name, on the small
/// index `links_waiting`), or to a note with one of that name's file keys (found through
/// `notes_by_file_key` and `links_to`: there is no index of every link by name, which a cold
/// build would have to sort), or to a note that vanished (found by its old path).
pub(super) fn settle(tx: &Transaction<'_>, changes: &GraphChanges) -> Result<(), IndexError> {
    if changes.dirty.is_empty() && changes.names.is_empty() && changes.vanished.is_empty() {
        return Ok(());
    }
    // (rowid, kind, target, linking note's path)
    let mut todo: Vec<(i64, LinkKind, String, String)> = Vec::new();
    let row = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(i64, LinkKind, String, String)> {
        Ok((
            r.get(0)?,
            LinkKind::from_code(r.get(1)?),
            r.get(2)?,
            r.get(3)?,
        ))
    };
    {
        let mut pending = tx.prepare_cached(
            "SELECT rowid, kind, target, from_path FROM links
             WHERE rowid BETWEEN ?1 AND ?2 AND state = 4",
        )?;
        for id in &changes.dirty {
            let (first, last) = link_rowids(*id)?;
            for found in pending.query_map([first, last], row)? {
                todo.push(found?);
            }
        }
        let mut waiting = tx.prepare_cached(
            "SELECT rowid, kind, target, from_path FROM links
             WHERE name_key = ?1 AND to_path IS NULL AND state != 3",
        )?;
        let mut to_named = tx.prepare_cached(
            "SELECT l.rowid, l.kind, l.target, l.from_path
             FROM notes n CROSS JOIN links l ON l.to_path = n.path
             WHERE n.file_key = ?1 AND l.name_key = ?2",
        )?;
        for name in &changes.names {
            for found in waiting.query_map([name], row)? {
                todo.push(found?);
            }
            for file_key in file_keys_for_link_key(name) {
                for found in to_named.query_map([file_key, name.as_str()], row)? {
                    todo.push(found?);
                }
            }
        }
        let mut to_vanished = tx.prepare_cached(
            "SELECT rowid, kind, target, from_path FROM links WHERE to_path = ?1",
        )?;
        for path in &changes.vanished {
            for found in to_vanished.query_map([path], row)? {
                todo.push(found?);
            }
        }
    }
    todo.sort_unstable_by_key(|(rowid, ..)| *rowid);
    todo.dedup_by_key(|(rowid, ..)| *rowid);
    if todo.is_empty() {
        return Ok(());
    }
    let keys: HashSet<String> = todo
        .iter()
        .map(|(_, kind, target, _)| key_of(*kind, target))
        .collect();
    let notes = {
        let mut stmt = tx.prepare_cached("SELECT path FROM notes WHERE file_key = ?1")?;
        let mut paths = Vec::new();
        for key in &keys {
            for file_key in file_keys_for_link_key(key) {
                for path in stmt.query_map([file_key], |r| r.get::<_, String>(0))? {
                    paths.push(path?);
                }
            }
        }
        paths.sort_unstable();
        paths.dedup();
        LinkIndex::with_names(paths, &keys)
    };
    let mut update =
        tx.prepare_cached("UPDATE links SET state = ?2, to_path = ?3 WHERE rowid = ?1")?;
    for (rowid, kind, target, from) in todo {
        let (state, to_path) = resolve(&notes, kind, &target, false, &from);
        update.execute(params![rowid, state.code(), to_path])?;
    }
    Ok(())
}

/// One outgoing link of a note, with what it resolves to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outgoing {
    pub target: String,
    /// The note it opens; `None` when unresolved or an attachment.
    pub path: Option<String>,
    pub line: u32,
    pub kind: LinkKind,
    pub state: LinkState,
}

/// One link to a note from another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Backlink {
    /// The linking note.
    pub path: String,
    pub line: u32,
    /// The linking line.
    pub context: String,
    pub kind: LinkKind,
    /// True when the link's name is ambiguous and this note is the one Obsidian opens.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ambiguous: bool,
}

/// A link to no note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unresolved {
    /// The linking note.
    pub from: String,
    pub target: String,
    pub line: u32,
}

/// A note no other note links to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Orphan {
    pub path: String,
    /// How many of its own links resolve to notes (0: the note is isolated).
    pub outgoing: u32,
}

/// A page of results and how many there are in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: u64,
}

impl Index {
    /// The outgoing links of the note at `path`, in text order; `None` when it is not indexed.
    pub fn outgoing_links(&self, path: &str) -> Result<Option<Vec<Outgoing>>, IndexError> {
        let Some(id) = self.note_id(path)? else {
            return Ok(None);
        };
        let (first, last) = link_rowids(id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT target, to_path, line, kind, state FROM links WHERE rowid BETWEEN ?1 AND ?2
             ORDER BY line, rowid",
        )?;
        let rows = stmt.query_map([first, last], |r| {
            Ok(Outgoing {
                target: r.get(0)?,
                path: r.get(1)?,
                line: r.get(2)?,
                kind: LinkKind::from_code(r.get(3)?),
                state: LinkState::from_code(r.get(4)?),
            })
        })?;
        Ok(Some(rows.collect::<Result<_, _>>()?))
    }

    /// The links to the note at `path` from other notes, by linking note and line: `limit` of
    /// them from `offset`, with the total.
    pub fn backlinks(
        &self,
        path: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Page<Backlink>, IndexError> {
        // Both on the index `links_to` alone: the rows of one target, ordered by linking note
        // and line, so a page is a range scan however many notes link here. The note's own
        // links to itself are left out.
        let total: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM links WHERE to_path = ?1 AND from_path != ?1")?
            .query_row([path], |r| r.get(0))?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT from_path, line, context, kind, state FROM links
             WHERE to_path = ?1 AND from_path != ?1
             ORDER BY from_path, line, rowid LIMIT ?2 OFFSET ?3",
        )?;
        let rows = stmt.query_map(params![path, to_i64(limit), to_i64(offset)], backlink_row)?;
        Ok(Page {
            items: rows.collect::<Result<_, _>>()?,
            total: total.unsigned_abs(),
        })
    }

    /// Every link to the note at `path` from other notes, by linking note and line, and whether
    /// every linking note on disk still is what the index recorded (its mtime and size): what a
    /// one-shot command prints. Each row comes with its note's stamp (one lookup by rowid, not
    /// one by path), and the notes are stat-ed by folder ([`super::fresh`]).
    pub fn all_backlinks_checked(&self, path: &str) -> Result<(Vec<Backlink>, bool), IndexError> {
        // CROSS JOIN keeps `links_to` as the outer loop: the range of this target only.
        let mut stmt = self.conn.prepare_cached(
            "SELECT l.from_path, l.line, l.context, l.kind, l.state, n.mtime_ns, n.size
             FROM links l CROSS JOIN notes n ON n.id = l.note_id
             WHERE l.to_path = ?1 AND l.from_path != ?1
             ORDER BY l.from_path, l.line, l.rowid",
        )?;
        let rows = stmt.query_map([path], |r| {
            Ok((backlink_row(r)?, r.get::<_, i64>(5)?, r.get::<_, i64>(6)?))
        })?;
        let rows: Vec<(Backlink, i64, i64)> = rows.collect::<Result<_, _>>()?;
        let mut stamps: Vec<Stamp<'_>> = rows
            .iter()
            .map(|(link, mtime_ns, size)| Stamp {
                path: &link.path,
                mtime_ns: *mtime_ns,
                size: *size,
            })
            .collect();
        stamps.dedup_by(|a, b| a.path == b.path); // rows come sorted by linking note
        let current = fresh::all_current(&self.handle, &stamps);
        Ok((rows.into_iter().map(|(link, ..)| link).collect(), current))
    }

    /// How many other notes link to the note at `path`.
    pub fn backlink_count(&self, path: &str) -> Result<u64, IndexError> {
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(DISTINCT from_path) FROM links WHERE to_path = ?1 AND from_path != ?1",
            )?
            .query_row([path], |r| r.get(0))?;
        Ok(n.unsigned_abs())
    }

    /// Links that resolve to no note, from notes in `folder` (`""`: the whole vault), by linking
    /// note and line.
    pub fn unresolved_links(
        &self,
        folder: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Page<Unresolved>, IndexError> {
        let (from, to) = folder_range(folder);
        let total: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM links WHERE state = 2 AND from_path >= ?1 AND from_path < ?2",
            )?
            .query_row(params![from, to], |r| r.get(0))?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT from_path, target, line FROM links
             WHERE state = 2 AND from_path >= ?1 AND from_path < ?2
             ORDER BY from_path, line, rowid LIMIT ?3 OFFSET ?4",
        )?;
        let rows = stmt.query_map(params![from, to, to_i64(limit), to_i64(offset)], |r| {
            Ok(Unresolved {
                from: r.get(0)?,
                target: r.get(1)?,
                line: r.get(2)?,
            })
        })?;
        Ok(Page {
            items: rows.collect::<Result<_, _>>()?,
            total: total.unsigned_abs(),
        })
    }

    /// Notes in `folder` (`""`: the whole vault) that no other note links to, by path.
    pub fn orphans(
        &self,
        folder: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Page<Orphan>, IndexError> {
        let (from, to) = folder_range(folder);
        const ORPHAN: &str = "n.path >= ?1 AND n.path < ?2 AND NOT EXISTS
             (SELECT 1 FROM links l WHERE l.to_path = n.path AND l.from_path != n.path)";
        let total: i64 = self
            .conn
            .prepare_cached(&format!("SELECT count(*) FROM notes n WHERE {ORPHAN}"))?
            .query_row(params![from, to], |r| r.get(0))?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT n.path,
               (SELECT count(*) FROM links o WHERE o.rowid BETWEEN n.id << {LINK_BITS}
                  AND (n.id << {LINK_BITS}) | {last_slot} AND o.to_path IS NOT NULL)
             FROM notes n WHERE {ORPHAN} ORDER BY n.path LIMIT ?3 OFFSET ?4",
            last_slot = (1 << LINK_BITS) - 1
        ))?;
        let rows = stmt.query_map(params![from, to, to_i64(limit), to_i64(offset)], |r| {
            Ok(Orphan {
                path: r.get(0)?,
                outgoing: r.get(1)?,
            })
        })?;
        Ok(Page {
            items: rows.collect::<Result<_, _>>()?,
            total: total.unsigned_abs(),
        })
    }

    fn note_id(&self, path: &str) -> Result<Option<i64>, IndexError> {
        Ok(self
            .conn
            .prepare_cached("SELECT id FROM notes WHERE path = ?1")?
            .query_row([path], |r| r.get(0))
            .optional()?)
    }
}

/// A row starting `from_path, line, context, kind, state` (of `links`) as a backlink.
fn backlink_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Backlink> {
    Ok(Backlink {
        path: r.get(0)?,
        line: r.get(1)?,
        context: r.get(2)?,
        kind: LinkKind::from_code(r.get(3)?),
        ambiguous: LinkState::from_code(r.get(4)?) == LinkState::Ambiguous,
    })
}

pub(super) fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The range of paths, as SQLite compares text (bytewise), that lie in `folder`: from
/// `folder/` up to `folder0` (`0` is the byte after `/`). The whole vault (`""`) is every text
/// below a blob, which SQLite sorts after all text.
pub(super) fn folder_range(folder: &str) -> (rusqlite::types::Value, rusqlite::types::Value) {
    use rusqlite::types::Value;
    let folder = folder.trim_matches('/');
    if folder.is_empty() {
        return (Value::Text(String::new()), Value::Blob(Vec::new()));
    }
    (
        Value::Text(format!("{folder}/")),
        Value::Text(format!("{folder}0")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(text: &str) -> Vec<(u32, LinkKind, String, bool)> {
        let parsed = markdown::parse(text);
        extract(text, &parsed)
            .into_iter()
            .map(|l| (l.line, l.kind, l.target, l.attachment))
            .collect()
    }

    #[test]
    fn every_link_form_is_found_with_its_line_and_code_is_not() {
        let text = "---\nrelated: \"[[Prop Target]]\"\n---\n\
                    # Title\n\
                    See [[Plain]] and [[Aliased|shown]] and [[Head#Section]].\n\
                    Block [[Blocky#^abc123]] and ![[Embedded]] and ![[diagram.png]].\n\
                    | a | [[Tabled\\|alias]] |\n\
                    [md](sub/Some%20Note.md) and [pic](img/a.png) and [web](https://x.org/a.md)\n\
                    `[[NotInline]]`\n\
                    ```\n[[NotFenced]]\n```\n\
                    [[#Own heading]]\n";
        assert_eq!(
            links(text),
            vec![
                (2, LinkKind::Property, "Prop Target".into(), false),
                (5, LinkKind::Wikilink, "Plain".into(), false),
                (5, LinkKind::Wikilink, "Aliased".into(), false),
                (5, LinkKind::Wikilink, "Head".into(), false),
                (6, LinkKind::Wikilink, "Blocky".into(), false),
                (6, LinkKind::Embed, "Embedded".into(), false),
                (6, LinkKind::Embed, "diagram.png".into(), true),
                (7, LinkKind::Wikilink, "Tabled".into(), false),
                (8, LinkKind::Markdown, "sub/Some Note.md".into(), false),
                (8, LinkKind::Markdown, "img/a.png".into(), true),
            ]
        );
    }

    #[test]
    fn long_lines_give_a_window_around_the_link() {
        let text = format!("{} [[Target]] {}", "a".repeat(500), "b".repeat(500));
        let parsed = markdown::parse(&text);
        let found = extract(&text, &parsed);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].context.contains("[[Target]]"),
            "{}",
            found[0].context
        );
        assert!(found[0].context.len() <= MAX_CONTEXT_BYTES + 8);
        assert!(found[0].context.starts_with('…') && found[0].context.ends_with('…'));
    }

    /// Each link's context is its own line, when lines hold several links and a line holds none:
    /// the line scanned once for all its links is still the right one for each.
    #[test]
    fn links_sharing_a_line_share_its_context_and_the_next_line_has_its_own() {
        let text = "# T\n\n[[A]] and [[B]]\nnothing here\n\n[[C]] last\n[[D]]";
        let parsed = markdown::parse(text);
        let found: Vec<(u32, String)> = extract(text, &parsed)
            .into_iter()
            .map(|l| (l.line, l.context))
            .collect();
        assert_eq!(
            found,
            vec![
                (3, "[[A]] and [[B]]".to_string()),
                (3, "[[A]] and [[B]]".to_string()),
                (6, "[[C]] last".to_string()),
                (7, "[[D]]".to_string()),
            ]
        );
    }

    #[test]
    fn attachments_are_told_by_their_extension() {
        assert!(is_attachment_name("img/Diagram.PNG"));
        assert!(is_attachment_name("paper.pdf"));
        assert!(!is_attachment_name("v1.2 notes"));
        assert!(!is_attachment_name("Plan.md"));
        assert!(!is_attachment_name(".png"));
    }
}
