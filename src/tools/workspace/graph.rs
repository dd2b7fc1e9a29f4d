//! The link graph family: get_backlinks, get_outgoing_links, list_unresolved_links,
//! list_orphan_notes. All read the index's link graph (index/graph.rs), which the live indexer
//! and every tool write keep current.

use super::notes::bounded;
use super::{Body, Workspace, internal, read_text, tool};
use crate::tools::{Annotations, Tool, ToolError, ToolOutput};
use crate::vault::Access;
use crate::vault::links::fold_name;
use crate::vault::markdown;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Arc;

/// Notes searched for unlinked mentions: enough for a pane, bounded for a vault of any size.
const MENTION_CANDIDATES: usize = 200;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ws,
            "get_backlinks",
            "Backlinks of a note",
            "List the links to one note from other notes (`[[wikilinks]]` in any form, embeds, links in \
             frontmatter properties and Markdown links), each with the linking note's `path`, the `line` \
             and the linking line as `context`, by path and line; paged by `offset`/`limit` with `total` \
             and `has_more`. Use it to find related material, to judge what a rename or delete affects, \
             or to summarise a topic from what points at it. `unlinked_mentions: true` also lists lines \
             that mention the note's title or aliases without linking it.",
            Annotations::READ_ONLY,
            Body::Read(get_backlinks),
        ),
        tool(
            ws,
            "get_outgoing_links",
            "Outgoing links of a note",
            "List the links in one note with what each resolves to: `target` as written, `path` of the \
             note it opens (null when unresolved or an attachment), `line`, `kind` (wikilink, embed, \
             markdown, property) and `state` (resolved, ambiguous — several notes share the name and \
             `path` is the one Obsidian opens —, unresolved, attachment). Paged by `offset`/`limit`.",
            Annotations::READ_ONLY,
            Body::Read(get_outgoing_links),
        ),
        tool(
            ws,
            "list_unresolved_links",
            "Unresolved links",
            "List links that point at no note (`[[Note that does not exist]]`), each with the linking note \
             (`from`), the `target` and the `line`, in the whole vault or under `folder`; paged by \
             `offset`/`limit` with `total` and `has_more`. Attachments are not listed.",
            Annotations::READ_ONLY,
            Body::Read(list_unresolved_links),
        ),
        tool(
            ws,
            "list_orphan_notes",
            "Orphan notes",
            "List notes that no other note links to, by path, in the whole vault or under `folder`, each \
             with `outgoing`: how many of its own links resolve (0: the note is isolated). Paged by \
             `offset`/`limit` with `total` and `has_more`.",
            Annotations::READ_ONLY,
            Body::Read(list_orphan_notes),
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BacklinksArgs {
    /// Vault-relative path (`Projects/Plan.md`), or a title, alias or file name when unambiguous.
    note: String,
    /// Skip this many backlinks (default 0), for paging.
    #[serde(default)]
    offset: Option<u32>,
    /// At most this many backlinks, 1 to 500 (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
    /// Also list lines of other notes that mention the note's title or aliases without linking
    /// it (at most 50; default false).
    #[serde(default)]
    unlinked_mentions: bool,
}

fn get_backlinks(ws: &Workspace, args: BacklinksArgs) -> Result<ToolOutput, ToolError> {
    let limit = bounded(args.limit, 100, 1, 500, "limit")?;
    let offset = args.offset.unwrap_or(0) as usize;
    let path = ws.resolve_note(&args.note, Access::Read)?;
    let page = ws
        .index()
        .backlinks(path.rel(), offset, limit)
        .map_err(internal)?;
    let has_more = (offset + page.items.len()) < page.total as usize;
    let mut out = json!({
        "note": path.rel(),
        "backlinks": page.items,
        "total": page.total,
        "offset": offset,
        "has_more": has_more,
    });
    if args.unlinked_mentions {
        out["unlinked_mentions"] = json!(unlinked_mentions(ws, path.rel())?);
    }
    ToolOutput::json(out)
}

/// A line that names a note without linking it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mention {
    /// The mentioning note.
    pub path: String,
    /// 1-based.
    pub line: usize,
    /// The line, trimmed, at most 240 characters.
    pub context: String,
    /// The title or alias found.
    pub name: String,
}

impl Workspace {
    /// The first `limit` links to the note at `rel` from other notes, by linking note and line,
    /// with how many there are in all (the app's backlinks view; the tool pages the same query).
    pub fn backlinks_of(
        &self,
        rel: &str,
        limit: usize,
    ) -> Result<crate::index::graph::Page<crate::index::graph::Backlink>, ToolError> {
        let path = self.resolve(rel, Access::Read)?;
        self.index()
            .backlinks(path.rel(), 0, limit)
            .map_err(internal)
    }

    /// Lines of other notes that name the note at `rel` (title, file name, aliases) without
    /// linking it, at most 50, by note and line: what `get_backlinks` lists as unlinked mentions.
    pub fn unlinked_mentions_of(&self, rel: &str) -> Result<Vec<Mention>, ToolError> {
        let path = self.resolve(rel, Access::Read)?;
        unlinked_mentions(self, path.rel())
    }
}

/// Lines of other notes that contain the note's title, file name or an alias as whole words,
/// outside links and code: full-text search finds the candidates, the text confirms each line.
fn unlinked_mentions(ws: &Workspace, rel: &str) -> Result<Vec<Mention>, ToolError> {
    // This note's names alone: the whole table (137k rows, each note's aliases parsed) was read
    // for them at every backlinks view.
    let Some(me) = ws.index().note_name(rel).map_err(internal)? else {
        return Ok(Vec::new());
    };
    let mut wanted: Vec<String> = me
        .title
        .iter()
        .chain(me.aliases.iter())
        .map(|n| n.trim().to_string())
        .chain(std::iter::once(crate::vault::name::stem(rel).to_string()))
        .filter(|n| n.chars().count() >= 2)
        .collect();
    wanted.sort_by_key(|n| fold_name(n));
    wanted.dedup_by_key(|n| fold_name(n));
    // Each candidate note with the names that found it: read once, however many of its names
    // the search matched (a note naming the title and an alias was read for each).
    let mut candidates: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for name in &wanted {
        // The name as one phrase; quotes inside it cannot be written in the query language.
        let phrase = format!("\"{}\"", name.replace('"', " "));
        let hits = match ws.index().search(&phrase, MENTION_CANDIDATES) {
            Ok(hits) => hits.results,
            Err(_) => continue, // a name too long to search is not mentioned by anyone
        };
        for hit in hits.into_iter().filter(|h| h.path != rel) {
            candidates.entry(hit.path).or_default().push(name);
        }
    }
    let mut found = Vec::new();
    // By path: the first notes in the order the list is shown, once enough lines are found.
    'notes: for (path, names) in candidates {
        let Ok(note) = ws.resolve(&path, Access::Read).and_then(|p| read_text(&p)) else {
            continue;
        };
        for name in names {
            for (line, context) in mention_lines(&note.text, name) {
                found.push(Mention {
                    path: path.clone(),
                    line,
                    context,
                    name: name.to_string(),
                });
            }
        }
        if found.len() >= MAX_MENTIONS {
            break 'notes;
        }
    }
    // Two names can find the same line.
    found.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    found.dedup_by(|a, b| a.path == b.path && a.line == b.line);
    found.truncate(MAX_MENTIONS);
    Ok(found)
}

/// At most this many unlinked mentions are listed.
const MAX_MENTIONS: usize = 50;

/// The lines of `text` (1-based, trimmed) where `name` occurs as whole words, case-insensitively,
/// outside `[[links]]`, Markdown links and code.
fn mention_lines(text: &str, name: &str) -> Vec<(usize, String)> {
    let parsed = markdown::parse(text);
    let mut masked: Vec<std::ops::Range<usize>> =
        parsed.links.iter().map(|l| l.span.clone()).collect();
    masked.extend(parsed.code_blocks.iter().map(|c| c.span.clone()));
    if let Some(front) = &parsed.frontmatter {
        masked.push(front.span.clone());
    }
    let needle = name.to_lowercase();
    let lower = text.to_lowercase();
    // Lowercasing may change byte lengths outside ASCII; offsets are only trusted when it did not.
    if lower.len() != text.len() {
        return Vec::new();
    }
    // Matches come in text order: the masks are walked and the lines counted once for all of
    // them, not from the start of the note for each (a long note with many mentions).
    masked.sort_unstable_by_key(|r| r.start);
    let mut masks = masked.iter().peekable();
    let mut counted = 0;
    let mut line_number = 1;
    let mut out = Vec::new();
    let mut last_line = 0;
    for (at, _) in lower.match_indices(&needle) {
        let end = at + needle.len();
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        while masks.next_if(|r| r.end <= at).is_some() {}
        let masked_here = masks.peek().is_some_and(|r| r.start <= at);
        if word(before) || word(after) || masked_here {
            continue;
        }
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        let line_end = text[at..].find('\n').map_or(text.len(), |n| at + n);
        let line = &text[line_start..line_end];
        // Inline code and Markdown links on the line: the mention must be outside them.
        if inside_inline_code_or_link(line, at - line_start) {
            continue;
        }
        line_number += text[counted..at].bytes().filter(|&b| b == b'\n').count();
        counted = at;
        let number = line_number;
        if number == last_line {
            continue;
        }
        last_line = number;
        out.push((number, line.trim().chars().take(240).collect()));
    }
    out
}

/// Whether byte `at` of `line` lies between backticks or inside `[text](destination)`.
fn inside_inline_code_or_link(line: &str, at: usize) -> bool {
    let ticks = line[..at].matches('`').count();
    if ticks % 2 == 1 {
        return true;
    }
    let open = line[..at].rfind('[');
    let close = line[..at].rfind(']');
    let in_brackets = match (open, close) {
        (Some(o), Some(c)) => o > c,
        (Some(_), None) => true,
        _ => false,
    };
    in_brackets && line[at..].contains("](")
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OutgoingArgs {
    /// Vault-relative path (`Projects/Plan.md`), or a title, alias or file name when unambiguous.
    note: String,
    /// Skip this many links (default 0), for paging.
    #[serde(default)]
    offset: Option<u32>,
    /// At most this many links, 1 to 1000 (default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
}

fn get_outgoing_links(ws: &Workspace, args: OutgoingArgs) -> Result<ToolOutput, ToolError> {
    let limit = bounded(args.limit, 200, 1, 1000, "limit")?;
    let offset = args.offset.unwrap_or(0) as usize;
    let path = ws.resolve_note(&args.note, Access::Read)?;
    let links = ws
        .index()
        .outgoing_links(path.rel())
        .map_err(internal)?
        .ok_or_else(|| {
            ToolError::Invalid(format!(
                "`{}` is not in the index yet; try again once indexing has caught up",
                path.rel()
            ))
        })?;
    let total = links.len();
    let page: Vec<_> = links.into_iter().skip(offset).take(limit).collect();
    let has_more = offset + page.len() < total;
    ToolOutput::json(json!({
        "note": path.rel(),
        "links": page,
        "total": total,
        "offset": offset,
        "has_more": has_more,
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct VaultListArgs {
    /// Only notes under this vault-relative folder (subfolders included); default: the whole vault.
    #[serde(default)]
    folder: Option<String>,
    /// Skip this many entries (default 0), for paging.
    #[serde(default)]
    offset: Option<u32>,
    /// At most this many entries, 1 to 1000 (default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
}

impl VaultListArgs {
    fn bounds(&self) -> Result<(String, usize, usize), ToolError> {
        let limit = bounded(self.limit, 200, 1, 1000, "limit")?;
        let folder = self
            .folder
            .as_deref()
            .unwrap_or("")
            .trim()
            .trim_matches('/')
            .to_string();
        Ok((folder, self.offset.unwrap_or(0) as usize, limit))
    }
}

/// A page of a vault-wide list as the tools answer it: the items under `key`, with `total`,
/// `offset` and `has_more`.
fn page_output<T: serde::Serialize>(
    key: &str,
    page: crate::index::graph::Page<T>,
    offset: usize,
) -> Result<ToolOutput, ToolError> {
    let has_more = offset + page.items.len() < page.total as usize;
    ToolOutput::json(json!({
        key: page.items,
        "total": page.total,
        "offset": offset,
        "has_more": has_more,
    }))
}

fn list_unresolved_links(ws: &Workspace, args: VaultListArgs) -> Result<ToolOutput, ToolError> {
    let (folder, offset, limit) = args.bounds()?;
    let page = ws
        .index()
        .unresolved_links(&folder, offset, limit)
        .map_err(internal)?;
    page_output("links", page, offset)
}

fn list_orphan_notes(ws: &Workspace, args: VaultListArgs) -> Result<ToolOutput, ToolError> {
    let (folder, offset, limit) = args.bounds()?;
    let page = ws
        .index()
        .orphans(&folder, offset, limit)
        .map_err(internal)?;
    page_output("notes", page, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_in_a_long_note_keep_their_lines() {
        // Links, code and mentions interleaved over many lines: each mention's line is counted
        // from the last one, and each mask is passed once.
        let mut text = String::from("---\ntitle: Roadmap\n---\n");
        let mut expected = Vec::new();
        for i in 0..300 {
            let line = text.matches('\n').count() + 1;
            match i % 3 {
                0 => text.push_str("see [[Roadmap]] and [[Roadmap|it]]\n"),
                1 => text.push_str("```\nRoadmap\n```\n"),
                _ => {
                    text.push_str(&format!("the Roadmap, item {i}\n"));
                    expected.push((line, format!("the Roadmap, item {i}")));
                }
            }
        }
        assert_eq!(mention_lines(&text, "roadmap"), expected);
    }

    #[test]
    fn mentions_are_whole_words_outside_links_and_code() {
        let text = "# T\nI read the Roadmap today.\nSee [[Roadmap]].\n`Roadmap` in code\nRoadmaps are many\n[the Roadmap](x.md)\n```\nRoadmap\n```\nroadmap again, roadmap twice\n";
        assert_eq!(
            mention_lines(text, "Roadmap"),
            vec![
                (2, "I read the Roadmap today.".to_string()),
                (10, "roadmap again, roadmap twice".to_string()),
            ]
        );
    }
}
