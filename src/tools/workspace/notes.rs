//! The notes family: list_notes, read_note, search_notes, create_note, update_note, delete_note.

use super::{Body, Change, Plan, Workspace, internal, read_text, tool};
use crate::tools::{Annotations, Tool, ToolError, ToolOutput};
use crate::vault::Access;
use crate::vault::anchor_match;
use crate::vault::markdown::{self, FrontmatterValue};

use crate::vault::walk;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ws,
            "list_notes",
            "List notes",
            "List the vault's notes (Markdown files), sorted by path, with title, size and modification time. \
             Filter by `folder` (vault-relative, e.g. `Projects/alpha`, includes subfolders). Paged: pass \
             `offset` from the previous page; `has_more` says whether another page exists.",
            Annotations::READ_ONLY,
            Body::Read(list_notes),
        ),
        tool(
            ws,
            "read_note",
            "Read a note",
            "Read one note. `note` is a vault-relative path (`Projects/Plan.md`) or, when unambiguous, a title, \
             alias or file name (`Plan`); if several notes match, the error lists them. Returns the content \
             (paged by `offset`/`max_chars` in characters, with `has_more` and the total `length`), the \
             frontmatter, tags, outgoing wikilinks, `backlinks` (how many other notes link to it: get_backlinks lists them) and a `revision` to pass to update_note as `expected_revision`.",
            Annotations::READ_ONLY,
            Body::Read(read_note),
        ),
        tool(
            ws,
            "search_notes",
            "Search notes",
            "Full-text search over titles, aliases, tags, paths and bodies, best match first, with a snippet \
             where matches are marked **like this**. Query syntax: words (all must occur), \"exact phrase\", \
             `a OR b`, `-word` to exclude, `prefix*`, `tag:project` (nested tags included), `folder:Projects/alpha`. \
             Accents are ignored; Chinese/Japanese/Korean text matches any run of characters.",
            Annotations::READ_ONLY,
            Body::Read(search_notes),
        ),
        tool(
            ws,
            "create_note",
            "Create a note",
            "Create a new note at a vault-relative `path` (`.md` is added when missing; missing folders are \
             created) with `content` (Markdown, frontmatter included if wanted) and/or from a `template`. Fails \
             if the note exists unless `overwrite` is true.",
            // With `overwrite` it replaces a note, so clients must treat it as destructive.
            Annotations::DESTRUCTIVE,
            Body::Write(create_note),
        ),
        tool(
            ws,
            "update_note",
            "Update a note",
            "Change an existing note. Give exactly one of: `body` (replace the whole text), `append` (added at \
             the end as a new paragraph, after one blank line), `prepend` (added after the frontmatter, before the rest), or \
             `edits` [{find, replace, expected_matches (default 1)}, ...] (several replacements, all or none, \
             one change; `replace_text` takes one). `find` is copied from the note: matched exactly, else with \
             whitespace, quotes and accents normalised if that finds one place; a failure quotes the closest \
             passages. `body` needs a read_note of the note first. Pass `expected_revision` from read_note \
             to fail instead of overwriting a change you have not seen. Line endings, BOM and file mode are kept.",
            Annotations::DESTRUCTIVE,
            Body::Write(update_note),
        ),
        tool(
            ws,
            "delete_note",
            "Delete a note",
            "Move a note to the vault's `.trash/` folder (keeping its folder structure), where it can be \
             restored by hand. `note` is a path or an unambiguous title.",
            Annotations::DESTRUCTIVE,
            Body::Write(delete_note),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// list_notes

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListNotesArgs {
    /// Only notes under this vault-relative folder (and its subfolders).
    #[serde(default)]
    folder: Option<String>,
    /// How many notes to skip (from a previous page's `next_offset`).
    #[serde(default)]
    offset: Option<u32>,
    /// Notes per page, 1 to 500 (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
}

#[derive(Serialize)]
struct ListedNote {
    path: String,
    title: String,
    size: u64,
    modified_unix: i64,
}

fn list_notes(ws: &Workspace, args: ListNotesArgs) -> Result<ToolOutput, ToolError> {
    let limit = bounded(args.limit, 100, 1, 500, "limit")?;
    let offset = args.offset.unwrap_or(0) as usize;
    let prefix = match args
        .folder
        .as_deref()
        .map(str::trim)
        .filter(|f| !f.is_empty())
    {
        Some(folder) => {
            ws.vault.check_pattern(folder).map_err(super::path_error)?;
            let path = ws.resolve(folder, Access::Read)?;
            if walk::is_hidden_rel(path.rel()) {
                return Err(ToolError::Invalid(format!(
                    "`{folder}` is a hidden folder; notes never live in dot-folders"
                )));
            }
            if !path.abs().is_dir() {
                return Err(ToolError::Invalid(format!(
                    "`{folder}` is not a folder of the vault; list_notebooks shows the folders"
                )));
            }
            Some(path.rel().to_string())
        }
        None => None,
    };
    let titles: HashMap<String, String> = ws
        .index()
        .note_names()
        .map_err(internal)?
        .into_iter()
        .map(|n| (n.path, n.title.unwrap_or_default()))
        .collect();
    let mut notes = walk::walk(ws.vault.root(), &Default::default()).notes;
    if let Some(prefix) = &prefix {
        notes.retain(|n| {
            prefix.is_empty()
                || n.rel
                    .strip_prefix(prefix.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        });
    }
    notes.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    let total = notes.len();
    let page: Vec<ListedNote> = notes
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|n| ListedNote {
            title: titles
                .get(&n.rel)
                .cloned()
                .unwrap_or_else(|| stem(&n.rel).to_string()),
            path: n.rel,
            size: n.size,
            modified_unix: n.mtime_ns / 1_000_000_000,
        })
        .collect();
    let has_more = offset + page.len() < total;
    ToolOutput::json(json!({
        "notes": page,
        "total": total,
        "offset": offset,
        "has_more": has_more,
        "next_offset": if has_more { Some(offset + limit) } else { None },
    }))
}

use crate::vault::name::stem;

pub(super) fn bounded(
    value: Option<u32>,
    default: u32,
    min: u32,
    max: u32,
    name: &str,
) -> Result<usize, ToolError> {
    let v = value.unwrap_or(default);
    if v < min || v > max {
        return Err(ToolError::Invalid(format!(
            "`{name}` must be between {min} and {max}, not {v}"
        )));
    }
    Ok(v as usize)
}

// ---------------------------------------------------------------------------------------------
// read_note

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadNoteArgs {
    /// Vault-relative path (`Projects/Plan.md`), or a title, alias or file name when unambiguous.
    note: String,
    /// Character offset to start reading at (default 0), for paging through long notes.
    #[serde(default)]
    offset: Option<u64>,
    /// At most this many characters (default 20000, at most 100000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    max_chars: Option<u32>,
}

fn read_note(ws: &Workspace, args: ReadNoteArgs) -> Result<ToolOutput, ToolError> {
    let max_chars = bounded(args.max_chars, 20_000, 1, 100_000, "max_chars")?;
    let path = ws.resolve_note(&args.note, Access::Read)?;
    let note = read_text(&path)?;
    ws.note_read(path.rel(), &note.fingerprint.to_revision_string());
    let parsed = markdown::parse(&note.text);
    let length = note.text.chars().count();
    let offset = usize::try_from(args.offset.unwrap_or(0)).unwrap_or(usize::MAX);
    if offset > length {
        return Err(ToolError::Invalid(format!(
            "`offset` {offset} is past the end of the note ({length} characters)"
        )));
    }
    let content: String = note.text.chars().skip(offset).take(max_chars).collect();
    let has_more = offset + content.chars().count() < length;
    let frontmatter: Map<String, Value> = parsed
        .frontmatter
        .as_ref()
        .map(|fm| {
            fm.fields
                .iter()
                .map(|f| {
                    let value = match &f.value {
                        FrontmatterValue::Null => Value::Null,
                        FrontmatterValue::Scalar(s) => Value::String(s.clone()),
                        FrontmatterValue::FlowList(items) | FrontmatterValue::BlockList(items) => {
                            Value::from(items.clone())
                        }
                        FrontmatterValue::Other => Value::String(f.raw.clone()),
                    };
                    (f.key.clone(), value)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut links: Vec<String> = parsed
        .links
        .iter()
        .filter(|l| !l.target.is_empty())
        .map(|l| l.target.clone())
        .collect();
    links.sort_unstable();
    links.dedup();
    let title = parsed
        .title
        .clone()
        .unwrap_or_else(|| stem(path.rel()).to_string());
    // How many other notes link here (the graph in the index; null if it cannot be read now).
    let backlinks = ws.index().backlink_count(path.rel()).ok();
    ToolOutput::json(json!({
        "path": path.rel(),
        "title": title,
        "backlinks": backlinks,
        "content": content,
        "offset": offset,
        "length": length,
        "has_more": has_more,
        "frontmatter": frontmatter,
        "tags": parsed.tags,
        "links": links,
        "revision": note.fingerprint.to_revision_string(),
    }))
}

// ---------------------------------------------------------------------------------------------
// search_notes

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchNotesArgs {
    /// The query: words, "a phrase", a OR b, -exclude, prefix*, tag:x, folder:a/b.
    query: String,
    /// How many results, 1 to 100 (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
}

/// A query the caller can fix (too long, too slow) is a tool error; anything else is internal.
fn search_error(e: crate::index::IndexError) -> ToolError {
    match e {
        crate::index::IndexError::QueryTooLong { .. } | crate::index::IndexError::QueryTimeout => {
            ToolError::Invalid(e.to_string())
        }
        other => internal(other),
    }
}

fn search_notes(ws: &Workspace, args: SearchNotesArgs) -> Result<ToolOutput, ToolError> {
    let limit = bounded(args.limit, 10, 1, 100, "limit")?;
    if args.query.trim().is_empty() {
        return Err(ToolError::Invalid(
            "`query` is empty; give words to search for, or tag:x / folder:x".into(),
        ));
    }
    let results = ws
        .index()
        .search_fresh(&args.query, limit)
        .map_err(search_error)?;
    let mut out = serde_json::to_value(results).map_err(internal)?;
    if !ws.index_synced() {
        out["index_catching_up"] = json!(
            "the index is being brought up to date after start-up: notes changed while vaultchat was not running may be missing or out of date for a moment"
        );
    }
    ToolOutput::json(out)
}

// ---------------------------------------------------------------------------------------------
// create_note

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateNoteArgs {
    /// Vault-relative path of the new note, e.g. `Projects/New idea.md` (`.md` is added if missing).
    path: String,
    /// The note's Markdown text (after the template's).
    #[serde(default)]
    content: Option<String>,
    /// A template to start from (a note of the templates folder, e.g. `Meeting`), filled in.
    #[serde(default)]
    template: Option<String>,
    /// Replace an existing note at that path (default false: an existing note is never replaced).
    #[serde(default)]
    overwrite: bool,
}

fn create_note(ws: &Workspace, args: CreateNoteArgs) -> Result<Plan, ToolError> {
    let rel = note_path(&args.path)?;
    let path = ws.resolve(&rel, Access::Write)?;
    let before = if path.abs().is_file() {
        if !args.overwrite {
            return Err(ToolError::Invalid(format!(
                "`{}` already exists and was left as it is: choose another name, or pass overwrite: true to replace it",
                path.rel()
            )));
        }
        Some(read_text(&path)?)
    } else {
        None
    };
    let mut extra = Map::new();
    extra.insert("created".into(), json!(before.is_none()));
    let after = match (&args.template, args.content) {
        (None, None) => {
            return Err(ToolError::Invalid(
                "give the note's `content`, or a `template` to start it from (or both)".into(),
            ));
        }
        (None, Some(content)) => content,
        (Some(name), content) => {
            // The settings once for the whole call: where the template is, how it is filled.
            let formats = ws.template_settings();
            let template = ws.read_template_in(&formats, name)?;
            let filled = super::fill(
                &template.text,
                &super::Filling {
                    title: stem(path.rel()),
                    at_ms: crate::time::now_ms(),
                    formats: &formats,
                },
            );
            extra.insert("template".into(), json!(template.path));
            match content.filter(|c| !c.is_empty()) {
                Some(content) => super::append_line(&filled, &content),
                None => filled,
            }
        }
    };
    Ok(Plan {
        tool: "create_note".into(),
        change: Change::Write {
            path,
            before,
            after,
        },
        extra,
        pinned: false,
    })
}

impl Workspace {
    /// The person's new note with `content` at `path` (a saved chat): the same plan `create_note`
    /// makes, never over an existing note, for the banner or for a command the person ran.
    /// `path`, or when a note is there already `… 2.md`, `… 3.md`, …: the first free name (a
    /// chat saved twice never replaces the first). `None` after 99 taken names.
    pub fn free_note_path(&self, path: &str) -> Result<Option<String>, ToolError> {
        let rel = note_path(path)?;
        let stem = rel.strip_suffix(".md").unwrap_or(&rel);
        for n in 1..=99 {
            let candidate = match n {
                1 => rel.clone(),
                n => format!("{stem} {n}.md"),
            };
            if !self.resolve(&candidate, Access::Write)?.abs().exists() {
                return Ok(Some(candidate));
            }
        }
        Ok(None)
    }

    pub fn plan_user_create(&self, path: &str, content: String) -> Result<Plan, ToolError> {
        create_note(
            self,
            CreateNoteArgs {
                path: path.to_string(),
                content: Some(content),
                template: None,
                overwrite: false,
            },
        )
    }
}

/// A note path with the `.md` extension; other extensions are refused (notes are Markdown).
pub(super) fn note_path(input: &str) -> Result<String, ToolError> {
    let trimmed = input.trim();
    let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
    let stem = name.strip_suffix(".md").unwrap_or(name);
    if trimmed
        .split('/')
        .any(|c| c.starts_with('.') && c != "." && c != "..")
    {
        return Err(ToolError::Invalid(format!(
            "`{input}` is in a hidden (dot) folder or is a dot-file; notes never live there, where no tool would find them"
        )));
    }
    if stem.is_empty() || name.starts_with('.') || name.ends_with('.') || name.ends_with(' ') {
        return Err(ToolError::Invalid(format!(
            "`{input}` is not a usable note name: give a file name such as `Inbox/My idea.md` (not empty, not starting or ending with a dot)"
        )));
    }
    if name.to_ascii_lowercase().ends_with(".md") {
        return Ok(trimmed.to_string());
    }
    match name.rsplit_once('.') {
        Some((_, ext))
            if !ext.is_empty()
                && ext.len() <= 5
                && ext.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            Err(ToolError::Invalid(format!(
                "`{input}` is not a Markdown note: notes end in `.md`"
            )))
        }
        _ => Ok(format!("{trimmed}.md")),
    }
}

// ---------------------------------------------------------------------------------------------
// update_note

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReplaceText {
    /// The text to find, copied from the note (exact; else whitespace, quotes and accents
    /// normalised, if that finds one place).
    find: String,
    /// What to put in its place.
    replace: String,
    /// How many times `find` must occur (default 1); the update fails otherwise.
    #[serde(default)]
    expected_matches: Option<u32>,
}

/// The most replacements one `update_note` call takes.
const MAX_EDITS: usize = 50;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateNoteArgs {
    /// Vault-relative path, or a title, alias or file name when unambiguous.
    note: String,
    /// The note's complete new text (only for a note you read with read_note, unchanged since).
    #[serde(default)]
    body: Option<String>,
    /// Text to add at the end of the note.
    #[serde(default)]
    append: Option<String>,
    /// Text to add at the start of the note's body (after its frontmatter).
    #[serde(default)]
    prepend: Option<String>,
    /// Replace one passage.
    #[serde(default)]
    replace_text: Option<ReplaceText>,
    /// Several replacements, planned on the same text, applied all or none as one change; they
    /// must not overlap.
    #[serde(default)]
    #[schemars(length(min = 1, max = 50))]
    edits: Option<Vec<ReplaceText>>,
    /// The `revision` read_note returned; the update fails if the note changed since.
    #[serde(default)]
    expected_revision: Option<String>,
}

fn update_note(ws: &Workspace, args: UpdateNoteArgs) -> Result<Plan, ToolError> {
    let path = ws.resolve_note(&args.note, Access::Write)?;
    let current = read_text(&path)?;
    super::check_expected_revision(&path, &current, args.expected_revision.as_deref())?;
    if args.body.is_some() && args.expected_revision.is_none() {
        // The whole text is replaced: only over a text the caller has seen (an
        // `expected_revision` that matched, checked above, is proof of that too).
        ws.check_read(&path, &current)?;
    }
    let new_text = apply_update(&current.text, &args)?;
    Ok(Plan {
        tool: "update_note".into(),
        change: Change::Write {
            path,
            before: Some(current),
            after: new_text,
        },
        extra: Map::new(),
        pinned: args.expected_revision.is_some(),
    })
}

/// The note's text after the requested change.
fn apply_update(text: &str, args: &UpdateNoteArgs) -> Result<String, ToolError> {
    let given = [
        args.body.is_some(),
        args.append.is_some(),
        args.prepend.is_some(),
        args.replace_text.is_some(),
        args.edits.is_some(),
    ]
    .iter()
    .filter(|g| **g)
    .count();
    if given != 1 {
        return Err(ToolError::Invalid(format!(
            "give exactly one of `body`, `append`, `prepend`, `replace_text` or `edits` (got {given})"
        )));
    }
    if let Some(body) = &args.body {
        return Ok(body.clone());
    }
    if let Some(extra) = &args.append {
        // One blank line between the old end and the new text, as `append_to_note` does: the
        // addition starts its own paragraph instead of joining the last one (which would also
        // move a trailing `^block-id` off the end of its paragraph).
        let mut out = text.trim_end_matches('\n').to_string();
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(extra.trim_start_matches('\n'));
        if !extra.ends_with('\n') {
            out.push('\n');
        }
        return Ok(out);
    }
    if let Some(extra) = &args.prepend {
        let start = markdown::parse(text).body_start;
        let (head, rest) = text.split_at(start.min(text.len()));
        let mut out = String::with_capacity(text.len() + extra.len() + 1);
        out.push_str(head);
        out.push_str(extra);
        if !extra.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(rest);
        return Ok(out);
    }
    if let Some(rt) = &args.replace_text {
        return replace_all(text, std::slice::from_ref(rt), |_| {
            "`replace_text.find`".into()
        });
    }
    if let Some(edits) = &args.edits {
        if edits.is_empty() {
            return Err(ToolError::Invalid(
                "`edits` is empty; give at least one {find, replace}".into(),
            ));
        }
        if edits.len() > MAX_EDITS {
            return Err(ToolError::Invalid(format!(
                "`edits` has {} replacements, at most {MAX_EDITS} are taken in one call; split them, or replace the whole `body` after read_note",
                edits.len()
            )));
        }
        return replace_all(text, edits, |i| format!("`edits[{i}].find`"));
    }
    Err(ToolError::Invalid("nothing to change".into()))
}

/// One replacement located in the note.
struct Located {
    range: std::ops::Range<usize>,
    replace: String,
    /// Which edit it belongs to.
    edit: usize,
}

/// `text` with every replacement of `edits` made, each located on the same original text
/// ([`crate::vault::anchor_match`]); refused whole when any is not found as asked or two overlap.
/// `name(i)` names edit `i`'s quote in an error.
fn replace_all(
    text: &str,
    edits: &[ReplaceText],
    name: impl Fn(usize) -> String,
) -> Result<String, ToolError> {
    let mut located = Vec::new();
    let mut failures = Vec::new();
    for (i, edit) in edits.iter().enumerate() {
        let expected = edit.expected_matches.unwrap_or(1) as usize;
        if expected == 0 {
            failures.push(format!(
                "{}: `expected_matches` must be at least 1",
                name(i)
            ));
            continue;
        }
        match anchor_match::locate(text, &edit.find, expected) {
            Ok(found) => {
                let replace = if found.normalised {
                    edge_whitespace_kept(&edit.find, &edit.replace)
                } else {
                    edit.replace.clone()
                };
                located.extend(found.ranges.into_iter().map(|range| Located {
                    range,
                    replace: replace.clone(),
                    edit: i,
                }));
            }
            Err(miss) => failures.push(miss.describe(&name(i))),
        }
    }
    if !failures.is_empty() {
        let whole = if edits.len() > 1 {
            "\nNothing was changed: the edits are applied all or none."
        } else {
            ""
        };
        return Err(ToolError::Invalid(format!(
            "{}{whole}",
            failures.join("\n")
        )));
    }
    located.sort_by_key(|l| (l.range.start, l.range.end));
    for pair in located.windows(2) {
        if pair[1].range.start < pair[0].range.end {
            return Err(ToolError::Invalid(format!(
                "{} and {} overlap (both change line {}); nothing was changed: merge them into one edit, or quote passages that do not overlap",
                name(pair[0].edit),
                name(pair[1].edit),
                anchor_match::line_of(text, pair[1].range.start)
            )));
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for l in &located {
        out.push_str(&text[at..l.range.start]);
        out.push_str(&l.replace);
        at = l.range.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The replacement for a normalised match. Such a match leaves out the whitespace at the edges
/// of `find` (the note's own whitespace there stays as it is), so the same whitespace at the
/// edges of `replace` is left out too: `find: "a line\n"` → `replace: "another\n"` replaces
/// "a line" with "another", and the note keeps its line break.
fn edge_whitespace_kept(find: &str, replace: &str) -> String {
    let lead = &find[..find.len() - find.trim_start().len()];
    let trail = &find[find.trim_end().len()..];
    let mut out = replace;
    if !lead.is_empty() {
        out = out.strip_prefix(lead).unwrap_or(out);
    }
    if !trail.is_empty() {
        out = out.strip_suffix(trail).unwrap_or(out);
    }
    out.to_string()
}

// ---------------------------------------------------------------------------------------------
// delete_note

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteNoteArgs {
    /// Vault-relative path, or a title, alias or file name when unambiguous.
    note: String,
}

fn delete_note(ws: &Workspace, args: DeleteNoteArgs) -> Result<Plan, ToolError> {
    let path = ws.resolve_note(&args.note, Access::Write)?;
    let before = read_text(&path)?;
    Ok(Plan {
        tool: "delete_note".into(),
        change: Change::Delete { path, before },
        extra: Map::new(),
        pinned: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(text: &str, f: impl FnOnce(&mut UpdateNoteArgs)) -> Result<String, ToolError> {
        let mut args = UpdateNoteArgs {
            note: "x".into(),
            body: None,
            append: None,
            prepend: None,
            replace_text: None,
            edits: None,
            expected_revision: None,
        };
        f(&mut args);
        apply_update(text, &args)
    }

    #[test]
    fn append_starts_a_new_paragraph() {
        let append =
            |text: &str, extra: &str| update(text, |a| a.append = Some(extra.into())).unwrap();
        assert_eq!(append("a", "b"), "a\n\nb\n");
        assert_eq!(append("a\n", "b\n"), "a\n\nb\n");
        assert_eq!(append("a\n\n\n", "b"), "a\n\nb\n");
        assert_eq!(append("", "b"), "b\n");
    }

    #[test]
    fn prepend_goes_after_frontmatter() {
        let text = "---\ntags: [a]\n---\n# T\n";
        assert_eq!(
            update(text, |a| a.prepend = Some("first".into())).unwrap(),
            "---\ntags: [a]\n---\nfirst\n# T\n"
        );
        assert_eq!(
            update("# T\n", |a| a.prepend = Some("x".into())).unwrap(),
            "x\n# T\n"
        );
    }

    #[test]
    fn replace_text_counts_matches() {
        let rt = |find: &str, n: Option<u32>| ReplaceText {
            find: find.into(),
            replace: "Z".into(),
            expected_matches: n,
        };
        assert_eq!(
            update("a b a", |a| a.replace_text = Some(rt("b", None))).unwrap(),
            "a Z a"
        );
        let err = update("a b a", |a| a.replace_text = Some(rt("a", None))).unwrap_err();
        assert!(
            err.to_string()
                .contains("occurs 2 time(s) (at line 1), expected 1"),
            "{err}"
        );
        assert_eq!(
            update("a b a", |a| a.replace_text = Some(rt("a", Some(2)))).unwrap(),
            "Z b Z"
        );
        assert!(update("a", |a| a.replace_text = Some(rt("", None))).is_err());
    }

    fn edit(find: &str, replace: &str) -> ReplaceText {
        ReplaceText {
            find: find.into(),
            replace: replace.into(),
            expected_matches: None,
        }
    }

    #[test]
    fn several_edits_are_planned_on_the_same_text() {
        let text = "one two\nthree four\nfive six\n";
        let edits = vec![
            edit("five", "5"),
            edit("one", "1"),
            edit("three four", "3 4"),
        ];
        assert_eq!(
            update(text, |a| a.edits = Some(edits)).unwrap(),
            "1 two\n3 4\n5 six\n"
        );
        // A replacement is not searched again by a later edit: both find the original text.
        let edits = vec![edit("one", "two"), edit("two", "one")];
        assert_eq!(
            update(text, |a| a.edits = Some(edits)).unwrap(),
            "two one\nthree four\nfive six\n"
        );
        // A failing edit refuses them all, naming it; overlapping edits are refused.
        let err = update(text, |a| {
            a.edits = Some(vec![edit("one", "1"), edit("seven", "7")])
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`edits[1].find` was not found") && err.contains("all or none"),
            "{err}"
        );
        let err = update(text, |a| {
            a.edits = Some(vec![edit("one two", "x"), edit("two\nthree", "y")])
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`edits[0].find` and `edits[1].find` overlap (both change line 1)"),
            "{err}"
        );
        assert!(update(text, |a| a.edits = Some(Vec::new())).is_err());
    }

    #[test]
    fn a_normalised_match_keeps_the_notes_own_edge_whitespace() {
        let text = "A wrapped\nline here.\n\nNext.\n";
        assert_eq!(
            update(text, |a| a.replace_text =
                Some(edit("A wrapped line here.\n", "Short.\n")))
            .unwrap(),
            "Short.\n\nNext.\n"
        );
    }

    #[test]
    fn exactly_one_operation() {
        let err = update("a", |a| {
            a.body = Some("x".into());
            a.append = Some("y".into());
        })
        .unwrap_err();
        assert!(err.to_string().contains("exactly one"), "{err}");
        assert!(update("a", |_| {}).is_err());
    }

    #[test]
    fn note_paths_get_md() {
        assert_eq!(note_path("Ideas/new").unwrap(), "Ideas/new.md");
        assert_eq!(note_path("a.MD").unwrap(), "a.MD");
        assert_eq!(note_path("v1.2 notes").unwrap(), "v1.2 notes.md");
        assert!(note_path("photo.png").is_err());
        for bad in [
            "",
            "Inbox/",
            ".md",
            "Inbox/.hidden",
            "trailing.md.",
            "a/b. ",
        ] {
            assert!(note_path(bad).is_err(), "{bad:?}");
        }
    }
}
