//! Keeping links pointing where they pointed when a note moves (`move_note`).
//!
//! The rule is one sentence: every link that resolved to a note before the move resolves to the
//! same note after it. Links to the moved note are the obvious case, but not the only one: a note
//! renamed to `Plan.md` makes every `[[Plan]]` that meant another `Plan.md` ambiguous, and a
//! relative Markdown link in the moved note breaks when its folder changes. Each link whose
//! resolution would change is rewritten to the shortest form that resolves uniquely, as Obsidian
//! writes them: the bare file name when no other note has it, else the path without `.md`.
//!
//! Only the target is replaced: a heading, block reference or alias after it is kept byte for
//! byte. Links in code spans and code blocks are text, not links (the Markdown scan skips them).
//! Pure functions: no I/O.

use super::links::{LinkResolution, fold_name, resolve_link, resolve_markdown};
use super::markdown;
use pulldown_cmark::{Event, LinkType, Options, Parser, Tag};
use serde::Serialize;
use std::ops::Range;

/// A note moving from `from` to `to` (vault-relative paths with `.md`), with every note's path
/// before and after.
pub struct Move<'a> {
    pub from: &'a str,
    pub to: &'a str,
    /// Every file of the vault before the move (as `resolve_link` wants them).
    pub before: &'a [String],
    /// The same list after the move.
    pub after: &'a [String],
}

/// How many links of each form were rewritten.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LinkCounts {
    /// `[[Note]]`
    pub wikilink: usize,
    /// `[[Note|alias]]`
    pub wikilink_alias: usize,
    /// `[[Note#Heading]]` (or a `#^block` reference)
    pub wikilink_heading: usize,
    /// `[[Note#Heading|alias]]`
    pub wikilink_heading_alias: usize,
    /// `![[Note]]` in any of the forms above
    pub embed: usize,
    /// `[text](relative/path.md)`
    pub markdown: usize,
}

impl LinkCounts {
    pub fn total(&self) -> usize {
        self.wikilink
            + self.wikilink_alias
            + self.wikilink_heading
            + self.wikilink_heading_alias
            + self.embed
            + self.markdown
    }

    pub fn add(&mut self, other: &LinkCounts) {
        self.wikilink += other.wikilink;
        self.wikilink_alias += other.wikilink_alias;
        self.wikilink_heading += other.wikilink_heading;
        self.wikilink_heading_alias += other.wikilink_heading_alias;
        self.embed += other.embed;
        self.markdown += other.markdown;
    }

    fn count_wikilink(&mut self, link: &markdown::WikiLink) {
        let sub = link.heading.is_some() || link.block.is_some();
        let slot = match (link.embed, sub, link.alias.is_some()) {
            (true, _, _) => &mut self.embed,
            (false, false, false) => &mut self.wikilink,
            (false, false, true) => &mut self.wikilink_alias,
            (false, true, false) => &mut self.wikilink_heading,
            (false, true, true) => &mut self.wikilink_heading_alias,
        };
        *slot += 1;
    }
}

/// A note's text with its links fixed for a move, and what was rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relinked {
    pub text: String,
    /// Links that pointed at the moved note.
    pub to_moved: LinkCounts,
    /// Links rewritten for another reason (made ambiguous by the new name, relative links of the
    /// moved note itself).
    pub others: usize,
}

/// `text` of the note at `note` (its path before the move) with every link fixed for `mv`;
/// `None` when nothing changes.
pub fn relink(text: &str, note: &str, mv: &Move<'_>) -> Option<Relinked> {
    let note_after = if note == mv.from { mv.to } else { note };
    if note != mv.from && !may_link(text, mv) {
        return None;
    }
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut to_moved = LinkCounts::default();
    let mut others = 0;
    let parsed = markdown::parse(text);
    for link in &parsed.links {
        if link.target.is_empty() {
            continue; // `[[#Heading]]`: this note, wherever it is.
        }
        if note != mv.from && !may_change(&link.target, mv) {
            continue;
        }
        let Some(was) = unique(resolve_link(&link.target, Some(note), mv.before)) else {
            continue;
        };
        let wanted = moved(was, mv);
        if unique(resolve_link(&link.target, Some(note_after), mv.after)) == Some(wanted) {
            continue;
        }
        let Some(range) = wikilink_target_range(text, &link.span) else {
            continue;
        };
        edits.push((range, shortest_wikilink(wanted, mv.after)));
        if was == mv.from {
            to_moved.count_wikilink(link);
        } else {
            others += 1;
        }
    }
    for link in markdown_links(text, parsed.body_start) {
        let Some(was) = resolve_markdown(&link.decoded, note, mv.before) else {
            continue;
        };
        let wanted = moved(was, mv);
        if resolve_markdown(&link.decoded, note_after, mv.after) == Some(wanted) {
            continue;
        }
        edits.push((
            link.target,
            markdown_target(note_after, wanted, link.angled, &link.fragment),
        ));
        if was == mv.from {
            to_moved.markdown += 1;
        } else {
            others += 1;
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (range, replacement) in edits {
        if range.start < at {
            continue; // Overlapping spans cannot happen; never write a torn text if they did.
        }
        out.push_str(&text[at..range.start]);
        out.push_str(&replacement);
        at = range.end;
    }
    out.push_str(&text[at..]);
    Some(Relinked {
        text: out,
        to_moved,
        others,
    })
}

/// Whether `text` (another note than the moved one) may hold a link the move changes: a
/// Markdown link of any kind (its destination may be percent-encoded), or the old or new name
/// somewhere. Most notes have neither and are not parsed at all.
fn may_link(text: &str, mv: &Move<'_>) -> bool {
    if text.contains("](") {
        return true;
    }
    let folded = fold_name(text);
    folded.contains(&fold_name(stem(mv.from))) || folded.contains(&fold_name(stem(mv.to)))
}

/// A non-relative wikilink resolves by its last path segment: only one whose last segment is the
/// moved note's old or new name can resolve differently after the move.
fn may_change(target: &str, mv: &Move<'_>) -> bool {
    let target = target.trim();
    if target.starts_with("./") || target.starts_with("../") {
        return true;
    }
    let last = fold_name(strip_md(target.rsplit('/').next().unwrap_or(target)));
    last == fold_name(stem(mv.from)) || last == fold_name(stem(mv.to))
}

fn unique(resolution: LinkResolution<'_>) -> Option<&str> {
    match resolution {
        LinkResolution::Unique(path) => Some(path),
        LinkResolution::Ambiguous(_) | LinkResolution::Missing => None,
    }
}

/// Where a note that was at `path` is after the move.
fn moved<'a>(path: &'a str, mv: &Move<'a>) -> &'a str {
    if path == mv.from { mv.to } else { path }
}

/// The shortest wikilink target naming `path` uniquely among `notes`: the file name without `.md`
/// (with it for other files), else the full path.
pub fn shortest_wikilink(path: &str, notes: &[String]) -> String {
    let short = strip_md(path.rsplit('/').next().unwrap_or(path));
    if unique(resolve_link(short, None, notes)) == Some(path) {
        return short.to_string();
    }
    strip_md(path).to_string()
}

/// The byte range of the target inside a wikilink spanning `span` (`[[` or `![[` to `]]`),
/// whitespace around it excluded, so a heading or alias after it is kept as written.
fn wikilink_target_range(text: &str, span: &Range<usize>) -> Option<Range<usize>> {
    let raw = text.get(span.clone())?;
    let open = raw.find("[[")? + 2;
    let content = raw.get(open..raw.len().checked_sub(2)?)?;
    let mut end = content.find(['|', '#', '^']).unwrap_or(content.len());
    // `[[Note\|alias]]` in a table: the backslash escapes the pipe, it is not part of the name.
    if content[end..].starts_with('|') && content[..end].ends_with('\\') {
        end -= 1;
    }
    let target = &content[..end];
    let lead = target.len() - target.trim_start().len();
    let trimmed = target.trim();
    let start = span.start + open + lead;
    Some(start..start + trimmed.len())
}

use super::name::{stem, without_md as strip_md};

/// An inline Markdown link to a local `.md` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownLink {
    /// The destination's bytes in the text, `<>` included when angled.
    pub target: Range<usize>,
    /// The destination percent-decoded, without its `#fragment`.
    pub decoded: String,
    /// Written `<like this>` (spaces allowed unencoded).
    pub angled: bool,
    /// `#fragment` as written (or empty), kept after the new path.
    pub fragment: String,
}

/// The inline Markdown links (and images) of the body whose destination is a local file path:
/// no scheme, not a bare `#fragment`. Links in code are not seen (pulldown-cmark parses code).
pub fn markdown_links(text: &str, body_start: usize) -> Vec<MarkdownLink> {
    let body = &text[body_start..];
    let sources: Vec<Range<usize>> = Parser::new_ext(body, Options::ENABLE_FOOTNOTES)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(
                Tag::Link {
                    link_type: LinkType::Inline,
                    ..
                }
                | Tag::Image {
                    link_type: LinkType::Inline,
                    ..
                },
            ) => Some(range.start + body_start..range.end + body_start),
            _ => None,
        })
        .collect();
    markdown_links_at(text, body_start, &sources)
}

/// [`markdown_links`] from the links' source ranges in `text` (pulldown-cmark's, as
/// [`crate::vault::markdown::ParsedNote::inline_links`] keeps them from the note's parse).
pub fn markdown_links_at(
    text: &str,
    body_start: usize,
    sources: &[Range<usize>],
) -> Vec<MarkdownLink> {
    let body = &text[body_start..];
    let mut found = Vec::new();
    for source in sources {
        let range = source.start.saturating_sub(body_start)..source.end.saturating_sub(body_start);
        let Some(dest) = destination_range(body, &range) else {
            continue;
        };
        let raw = &body[dest.clone()];
        let (angled, inner) = match raw.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
            Some(inner) => (true, inner),
            None => (false, raw),
        };
        let (path, fragment) = match inner.find('#') {
            Some(at) => inner.split_at(at),
            None => (inner, ""),
        };
        if path.is_empty() || has_scheme(path) {
            continue;
        }
        found.push(MarkdownLink {
            target: dest.start + body_start..dest.end + body_start,
            decoded: percent_decode(path),
            angled,
            fragment: fragment.to_string(),
        });
    }
    found
}

/// The destination of the inline link whose source is `range`: after the `](` that closes the
/// text, up to a space (before a title) or the closing `)`.
fn destination_range(body: &str, range: &Range<usize>) -> Option<Range<usize>> {
    let source = body.get(range.clone())?;
    let open = source.rfind("](")? + 2;
    let rest = &source[open..];
    let lead = rest.len() - rest.trim_start().len();
    let rest = rest.trim_start();
    let len = if rest.starts_with('<') {
        rest.find('>')? + 1
    } else {
        rest.find([' ', '\t', '\n', ')']).unwrap_or(rest.len())
    };
    let start = range.start + open + lead;
    Some(start..start + len)
}

fn has_scheme(dest: &str) -> bool {
    match dest.split_once(':') {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && !scheme.contains('/')
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// The destination to write in `note` for a link to `target`: relative to the note's folder, with
/// characters a bare destination cannot hold percent-encoded (or in `<>` when it was written so).
fn markdown_target(note: &str, target: &str, angled: bool, fragment: &str) -> String {
    let relative = relative_path(note, target);
    if angled {
        format!("<{relative}{fragment}>")
    } else {
        format!("{}{fragment}", percent_encode(&relative))
    }
}

/// The path from the folder of `from` to `to`, both vault-relative.
pub fn relative_path(from: &str, to: &str) -> String {
    let from_dirs: Vec<&str> = from.split('/').collect();
    let from_dirs = &from_dirs[..from_dirs.len().saturating_sub(1)];
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dirs
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count()
        .min(to_parts.len().saturating_sub(1));
    let mut out: Vec<&str> = vec![".."; from_dirs.len() - common];
    out.extend(&to_parts[common..]);
    out.join("/")
}

/// Percent-encodes what ends or confuses a bare Markdown destination: spaces, parentheses, `%`,
/// `#`, `<`, `>` and control characters. Other characters (Unicode included) stay as they are.
fn percent_encode(path: &str) -> String {
    super::percent::percent_encode_ascii(path, super::percent::LINK_DESTINATION)
}

/// A Markdown destination's path as it names a file: its `%XX` escapes decoded by the one strict
/// decoder ([`super::percent::percent_decode`]), or the destination as written when any escape
/// is malformed (`%+1`, `%zz`, a lone `%`) or the bytes are not UTF-8. `Note%+1.md` names the
/// file `Note%+1.md`, never `Note\u{1}.md` (which a lax decoder reads `%+1` as).
fn percent_decode(text: &str) -> String {
    super::percent::percent_decode(text).unwrap_or_else(|| text.to_string())
}

#[cfg(test)]
mod tests;
