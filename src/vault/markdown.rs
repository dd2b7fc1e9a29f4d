//! The Markdown structure of one note, read the way Obsidian reads it: YAML frontmatter (`title`,
//! `tags`, `aliases`, and the raw text of every other key), inline `#tags`, `[[wikilinks]]`, headings,
//! sections, blank-line-delimited paragraphs and fenced code blocks with attributes in their info
//! string; plus [`set_frontmatter_list`], the one frontmatter edit the tag and alias tools need.
//!
//! Everything here is a pure function of the text. Offsets are byte offsets into the text the caller
//! passed, line numbers are 1-based. Callers strip a BOM and normalise CRLF to LF first.
//!
//! [`parse`] runs on every note while a vault is indexed, so it stays linear: the frontmatter is read
//! by a small line reader (no YAML crate), tags and wikilinks by one byte scan, and pulldown-cmark runs
//! only when the note contains something that could hide text from that scan (code, HTML, link
//! destinations, indented blocks, block quotes or setext headings); see `is_plain`.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};
use serde::Serialize;
use unicode_normalization::UnicodeNormalization;

/// Everything [`parse`] extracts from a note.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedNote {
    /// Frontmatter `title`, else the text of the first non-empty level-1 heading.
    pub title: Option<String>,
    /// Frontmatter tags, then inline tags; without `#`, deduplicated case-insensitively (first
    /// spelling wins).
    pub tags: Vec<String>,
    /// Frontmatter `aliases` (or `alias`).
    pub aliases: Vec<String>,
    /// Byte offset just after the frontmatter block; 0 without one.
    pub body_start: usize,
    pub frontmatter: Option<Frontmatter>,
    /// Every inline tag occurrence in document order (not deduplicated, so edits can find them all).
    pub inline_tags: Vec<InlineTag>,
    pub links: Vec<WikiLink>,
    pub headings: Vec<Heading>,
    /// Fenced code blocks only: indented code has no info string and so no attributes.
    pub code_blocks: Vec<CodeBlock>,
}

/// A YAML frontmatter block at the very start of a note.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Frontmatter {
    /// The YAML text between the fences.
    pub raw: String,
    /// The whole block: both fence lines and the newline after the closing one.
    pub span: Range<usize>,
    pub title: Option<String>,
    pub tags: Vec<String>,
    pub aliases: Vec<String>,
    /// Every top-level key in document order, known or not.
    pub fields: Vec<FrontmatterField>,
}

impl Frontmatter {
    /// The first field whose key equals `key` (ASCII case-insensitively, as Obsidian compares keys).
    pub fn get(&self, key: &str) -> Option<&FrontmatterField> {
        self.fields.iter().find(|f| f.key.eq_ignore_ascii_case(key))
    }
}

/// One top-level `key: value` of the frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrontmatterField {
    /// The key, unquoted.
    pub key: String,
    /// The value as written: the rest of the key line and its continuation lines, trimmed.
    pub raw: String,
    pub value: FrontmatterValue,
    /// The key line and its continuation lines, including the last line's newline.
    pub span: Range<usize>,
}

/// The subset of YAML values this reader interprets; anything else is [`FrontmatterValue::Other`]
/// and available as [`FrontmatterField::raw`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum FrontmatterValue {
    /// Empty, `~` or `null`.
    Null,
    /// A plain, quoted or block (`|`, `>`) scalar.
    Scalar(String),
    /// `[a, b]`
    FlowList(Vec<String>),
    /// `- a` lines.
    BlockList(Vec<String>),
    /// Mappings, nested lists, anchors, tagged values.
    Other,
}

impl FrontmatterValue {
    /// The items of either list style.
    pub fn as_list(&self) -> Option<&[String]> {
        match self {
            Self::FlowList(items) | Self::BlockList(items) => Some(items),
            _ => None,
        }
    }
}

/// One `#tag` in the body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InlineTag {
    /// Without the `#`; nested tags (`a/b`) kept whole.
    pub name: String,
    /// From the `#` to the end of the tag.
    pub span: Range<usize>,
}

/// A `[[wikilink]]` or `![[embed]]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WikiLink {
    /// The note as written (`folder/a.md`, `a`); empty for a link into this note (`[[#Heading]]`).
    pub target: String,
    pub heading: Option<String>,
    /// The block id without `^`.
    pub block: Option<String>,
    pub alias: Option<String>,
    pub embed: bool,
    /// From `[[` (or the `!` of an embed) to after `]]`.
    pub span: Range<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// The heading's source text without markers (`## A *b*` → `A *b*`), as Obsidian keeps it.
    pub text: String,
    /// From the first `#` (or the first line of a setext heading) to the end of its last line,
    /// newline excluded.
    pub span: Range<usize>,
    /// 1-based line of `span.start`.
    pub line: usize,
}

/// A heading and everything up to the next heading of the same or a higher level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    /// None for the text before the first heading.
    pub heading: Option<Heading>,
    /// From the start of the heading's line to the start of the line of the heading that ends it
    /// (or the end of the note).
    pub span: Range<usize>,
}

/// A fenced code block (```` ``` ```` or `~~~`, any fence length).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeBlock {
    /// The info string as written, trimmed (```` ```http id=login ```` → `http id=login`).
    pub info: String,
    /// The first word of the info string, or the first `.class` of a `{...}` attribute list.
    pub lang: Option<String>,
    /// `key=value` pairs in order; quotes removed; a bare `flag` has the value ""; `{#x}` is written
    /// as `("id", "x")` and `{.x}` as `("class", "x")`.
    pub attrs: Vec<(String, String)>,
    /// `id=...` or `{#...}`, the first one.
    pub id: Option<String>,
    /// The whole block including both fences (an unclosed block runs to the end of its container).
    pub span: Range<usize>,
    /// The lines between the fences, including the last body line's newline.
    pub body_span: Range<usize>,
    /// 1-based line of the opening fence.
    pub start_line: usize,
    /// 1-based line of the closing fence (or of the last line of an unclosed block).
    pub end_line: usize,
}

/// Parses a note. Never fails: whatever is not understood is left out.
pub fn parse(text: &str) -> ParsedNote {
    parse_with(text, true)
}

/// `allow_fast` exists so tests can check that the fast path agrees with pulldown-cmark.
fn parse_with(text: &str, allow_fast: bool) -> ParsedNote {
    let frontmatter = parse_frontmatter(text);
    let body_start = frontmatter.as_ref().map_or(0, |f| f.span.end);
    let body = &text[body_start..];

    let mut scanner = Scanner::new(text);
    let structure = if allow_fast && is_plain(body) {
        scanner.scan(body_start..text.len());
        BlockStructure {
            headings: atx_headings(text, body_start),
            fences: Vec::new(),
        }
    } else {
        let (structure, excluded) = block_structure(text, body_start);
        let mut pos = body_start;
        for range in excluded {
            if range.start > pos {
                scanner.scan(pos..range.start);
            }
            pos = pos.max(range.end);
        }
        if pos < text.len() {
            scanner.scan(pos..text.len());
        }
        structure
    };

    // Line numbers are only needed for headings and code blocks; most notes have few, and a note
    // without any skips building the index altogether.
    let lines = if structure.headings.is_empty() && structure.fences.is_empty() {
        LineIndex::default()
    } else {
        LineIndex::new(text)
    };
    let headings: Vec<Heading> = structure
        .headings
        .into_iter()
        .map(|(level, span)| Heading {
            level,
            text: heading_text(&text[span.clone()]),
            line: lines.line(span.start),
            span,
        })
        .collect();
    let code_blocks = structure
        .fences
        .into_iter()
        .map(|span| code_block(text, span, &lines))
        .collect();

    let title = frontmatter
        .as_ref()
        .and_then(|f| f.title.clone())
        .or_else(|| {
            headings
                .iter()
                .find(|h| h.level == 1 && !h.text.is_empty())
                .map(|h| h.text.clone())
        });
    let fm_tags = frontmatter
        .as_ref()
        .map(|f| f.tags.clone())
        .unwrap_or_default();
    let tags = dedup_case_insensitive(
        fm_tags
            .into_iter()
            .chain(scanner.tags.iter().map(|t| t.name.clone())),
    );
    let aliases = frontmatter
        .as_ref()
        .map(|f| f.aliases.clone())
        .unwrap_or_default();

    ParsedNote {
        title,
        tags,
        aliases,
        body_start,
        frontmatter,
        inline_tags: scanner.tags,
        links: scanner.links,
        headings,
        code_blocks,
    }
}

/// The sections of a note: the text before the first heading (when it holds more than whitespace;
/// the frontmatter is not part of it) and one section per heading, running to the next heading of the
/// same or a higher level. Sections nest, so one `##` section lies inside its `#` section.
pub fn sections(text: &str) -> Vec<Section> {
    let note = parse(text);
    let line_start = |pos: usize| text[..pos].rfind('\n').map_or(0, |n| n + 1);
    let mut out = Vec::with_capacity(note.headings.len() + 1);
    let first = note
        .headings
        .first()
        .map_or(text.len(), |h| line_start(h.span.start));
    if !text[note.body_start..first].trim().is_empty() {
        out.push(Section {
            heading: None,
            span: note.body_start..first,
        });
    }
    // A stack of open sections (index into `out`, level) keeps this linear in the number of
    // headings: each heading closes the open sections of its level or deeper.
    let mut open: Vec<(usize, u8)> = Vec::new();
    for heading in note.headings {
        let start = line_start(heading.span.start);
        while let Some(&(index, level)) = open.last() {
            if level < heading.level {
                break;
            }
            out[index].span.end = start;
            open.pop();
        }
        open.push((out.len(), heading.level));
        out.push(Section {
            heading: Some(heading),
            span: start..text.len(),
        });
    }
    out
}

/// Blank-line-delimited blocks, each from the start of its first line to the end of its last line
/// (newline excluded). A fenced code block stays inside one block even when it contains blank
/// lines, and so does the frontmatter.
pub fn paragraphs(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    if let Some(bounds) = frontmatter_bounds(text) {
        out.push(0..trim_newline(text, bounds.whole.clone()).end);
        from = bounds.whole.end;
    }
    let mut current: Option<Range<usize>> = None;
    let mut fence: Option<(u8, usize)> = None;
    for line in LineIter::new(text, from..text.len()) {
        let content = &text[line.clone()];
        if let Some((ch, len)) = fence {
            if is_closing_fence(content, ch, len) {
                fence = None;
            }
            if let Some(block) = current.as_mut() {
                block.end = line.end;
            }
            continue;
        }
        if content.trim().is_empty() {
            if let Some(block) = current.take() {
                out.push(block);
            }
            continue;
        }
        match current.as_mut() {
            Some(block) => block.end = line.end,
            None => current = Some(line.clone()),
        }
        fence = opening_fence(content);
    }
    out.extend(current);
    out
}

// ---------------------------------------------------------------------------------------------
// Frontmatter

/// Where a frontmatter block is: `content` is the YAML between the fences, `whole` the block with
/// both fence lines and the newline after the closing one.
struct FrontmatterBounds {
    content: Range<usize>,
    whole: Range<usize>,
}

/// A block only counts at byte 0, opened by `---` alone on the first line and closed by `---` or
/// `...` alone on a later line; an unclosed block is body text (Obsidian renders it as a rule).
fn frontmatter_bounds(text: &str) -> Option<FrontmatterBounds> {
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != "---" {
        return None;
    }
    let content_start = first_end + 1;
    for line in LineIter::new(text, content_start..text.len()) {
        let content = text[line.clone()].trim_end();
        if content == "---" || content == "..." {
            let end = if line.end < text.len() {
                line.end + 1
            } else {
                line.end
            };
            return Some(FrontmatterBounds {
                content: content_start..line.start,
                whole: 0..end,
            });
        }
    }
    None
}

fn parse_frontmatter(text: &str) -> Option<Frontmatter> {
    let bounds = frontmatter_bounds(text)?;
    let fields = parse_fields(text, bounds.content.clone());

    let title = find_field(&fields, "title").and_then(|f| match &f.value {
        FrontmatterValue::Scalar(s) => non_empty(s),
        _ => None,
    });
    // Obsidian splits a tags string on commas and spaces; a tag can hold neither, so list items are
    // split the same way (`[a b]` is two tags to Obsidian too).
    let split_tags = |s: &str| -> Vec<String> {
        s.split(|c: char| c == ',' || c.is_whitespace())
            .map(|t| t.trim_start_matches('#'))
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let tags = match find_field(&fields, "tags").map(|f| &f.value) {
        Some(FrontmatterValue::Scalar(s)) => split_tags(s),
        Some(FrontmatterValue::FlowList(items) | FrontmatterValue::BlockList(items)) => {
            items.iter().flat_map(|i| split_tags(i)).collect()
        }
        _ => Vec::new(),
    };
    // A string of aliases is split on commas, as Obsidian's `parseFrontMatterAliases` does.
    let aliases = match find_field(&fields, "aliases").map(|f| &f.value) {
        Some(FrontmatterValue::Scalar(s)) => s.split(',').filter_map(non_empty).collect(),
        Some(FrontmatterValue::FlowList(items) | FrontmatterValue::BlockList(items)) => {
            items.iter().filter_map(|s| non_empty(s)).collect()
        }
        _ => Vec::new(),
    };

    Some(Frontmatter {
        raw: text[bounds.content.clone()].to_owned(),
        span: bounds.whole,
        title,
        tags: dedup_case_insensitive(tags),
        aliases: dedup_case_insensitive(aliases),
        fields,
    })
}

/// The field for `key`, ASCII case-insensitively; `tags` and `aliases` also answer to their
/// singular forms, which Obsidian still reads.
fn find_field<'f>(fields: &'f [FrontmatterField], key: &str) -> Option<&'f FrontmatterField> {
    let singular = match key.to_ascii_lowercase().as_str() {
        "tags" => Some("tag"),
        "aliases" => Some("alias"),
        _ => None,
    };
    fields
        .iter()
        .find(|f| f.key.eq_ignore_ascii_case(key))
        .or_else(|| singular.and_then(|s| fields.iter().find(|f| f.key.eq_ignore_ascii_case(s))))
}

fn parse_fields(text: &str, content: Range<usize>) -> Vec<FrontmatterField> {
    let lines: Vec<Range<usize>> = LineIter::new(text, content.clone()).collect();
    let mut fields = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(key_line) = split_key(&text[lines[i].clone()]) else {
            i += 1;
            continue;
        };
        // Continuation lines are indented or are column-0 `- item`s (valid YAML for a list under a
        // key). Blank and comment lines belong to the field only when more continuation follows,
        // so a rewrite of the field never swallows a comment written after it.
        let mut last = i;
        let mut j = i + 1;
        while j < lines.len() {
            let line = &text[lines[j].clone()];
            if line.trim().is_empty() || line.starts_with('#') {
                j += 1;
                continue;
            }
            if line.starts_with([' ', '\t']) || is_block_item(line) {
                last = j;
                j += 1;
                continue;
            }
            break;
        }
        let value_start = lines[i].start + key_line.value_offset;
        let inline = text[value_start..lines[i].end].trim();
        let continuation: Vec<&str> = lines[i + 1..=last]
            .iter()
            .map(|r| &text[r.clone()])
            .collect();
        fields.push(FrontmatterField {
            key: key_line.key,
            raw: text[value_start..lines[last].end].trim().to_owned(),
            value: parse_value(inline, &continuation),
            span: lines[i].start..(lines[last].end + 1).min(content.end),
        });
        i = last + 1;
    }
    fields
}

struct KeyLine {
    key: String,
    /// Length of the key as written (quotes included), before the colon.
    written_len: usize,
    /// Offset of the value, just after the colon.
    value_offset: usize,
}

/// Splits `key: value` at the first colon followed by a space, a tab or the end of the line (a
/// plain key may itself contain `:` as in `a:b: c`). Lines that are not top-level keys give None.
fn split_key(line: &str) -> Option<KeyLine> {
    let first = line.chars().next()?;
    if first.is_whitespace() || first == '#' || is_block_item(line) || line.starts_with("---") {
        return None;
    }
    let colon_ok = |at: usize| matches!(line.as_bytes().get(at + 1), None | Some(b' ' | b'\t'));
    if first == '"' || first == '\'' {
        let (key, rest) = unquote(line)?;
        let after = line.len() - rest.len();
        let colon = after + (rest.len() - rest.trim_start().len());
        if line.as_bytes().get(colon) != Some(&b':') || !colon_ok(colon) {
            return None;
        }
        return Some(KeyLine {
            key,
            written_len: after,
            value_offset: colon + 1,
        });
    }
    let colon = line
        .match_indices(':')
        .map(|(at, _)| at)
        .find(|&at| colon_ok(at))?;
    let key = line[..colon].trim_end();
    if key.is_empty() {
        return None;
    }
    Some(KeyLine {
        key: key.to_owned(),
        written_len: key.len(),
        value_offset: colon + 1,
    })
}

fn is_block_item(line: &str) -> bool {
    let t = line.trim_start();
    t == "-" || t.starts_with("- ") || t.starts_with("-\t")
}

fn parse_value(inline: &str, continuation: &[&str]) -> FrontmatterValue {
    let meaningful: Vec<&str> = continuation
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    // Only plain values have comments stripped here: a `#` inside quotes or brackets is content.
    if inline.is_empty() || inline.starts_with('#') {
        return match meaningful.first() {
            None => FrontmatterValue::Null,
            Some(first) if is_block_item(first) => parse_block_list(&meaningful),
            Some(_) if meaningful.iter().any(|l| looks_like_mapping(l.trim())) => {
                FrontmatterValue::Other
            }
            Some(_) => plain_scalar(&fold_lines(std::iter::empty(), &meaningful)),
        };
    }
    if meaningful.iter().any(|l| is_block_item(l)) && !inline.starts_with(['|', '>']) {
        // `key: x` followed by `- item`s is not valid YAML; keep it raw rather than guess.
        return FrontmatterValue::Other;
    }
    match inline.as_bytes()[0] {
        b'[' => parse_flow_list(&fold_lines(std::iter::once(inline), &meaningful))
            .map_or(FrontmatterValue::Other, FrontmatterValue::FlowList),
        b'{' | b'&' | b'*' | b'!' => FrontmatterValue::Other,
        b'|' | b'>' => FrontmatterValue::Scalar(block_scalar(inline, continuation)),
        b'"' | b'\'' => unquote(&fold_lines(std::iter::once(inline), &meaningful))
            .map_or(FrontmatterValue::Other, |(s, _)| {
                FrontmatterValue::Scalar(s)
            }),
        _ => plain_scalar(&fold_lines(std::iter::once(inline), &meaningful)),
    }
}

/// Joins a value's lines the way YAML folds multi-line flow scalars: trimmed, separated by spaces.
fn fold_lines<'s>(first: impl Iterator<Item = &'s str>, rest: &[&'s str]) -> String {
    let parts: Vec<&str> = first.chain(rest.iter().map(|l| l.trim())).collect();
    parts.join(" ")
}

fn plain_scalar(s: &str) -> FrontmatterValue {
    let s = strip_comment(s);
    match s {
        "" | "~" | "null" | "Null" | "NULL" => FrontmatterValue::Null,
        _ => FrontmatterValue::Scalar(s.to_owned()),
    }
}

/// Removes a YAML comment (`#` at the start or after whitespace) from a plain value.
fn strip_comment(s: &str) -> &str {
    if s.starts_with('#') {
        return "";
    }
    let cut = s
        .match_indices('#')
        .map(|(at, _)| at)
        .find(|&at| s[..at].ends_with([' ', '\t']))
        .unwrap_or(s.len());
    s[..cut].trim()
}

/// A plain scalar cannot contain `: ` nor end with `:`, so such an item is a mapping.
fn looks_like_mapping(s: &str) -> bool {
    let s = strip_comment(s);
    !s.starts_with(['"', '\'']) && (s.contains(": ") || s.contains(":\t") || s.ends_with(':'))
}

fn parse_block_list(lines: &[&str]) -> FrontmatterValue {
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let indent = lines.first().map_or(0, |l| indent_of(l));
    let mut raw_items: Vec<Vec<&str>> = Vec::new();
    for line in lines {
        let t = line.trim_start();
        if indent_of(line) == indent && is_block_item(t) {
            raw_items.push(vec![t[1..].trim()]);
        } else if let Some(item) = raw_items.last_mut().filter(|_| indent_of(line) > indent) {
            item.push(t.trim());
        } else {
            return FrontmatterValue::Other;
        }
    }
    let mut items = Vec::with_capacity(raw_items.len());
    for parts in raw_items {
        let joined = parts.join(" ");
        let item = joined.trim();
        if item.starts_with(['[', '{', '&', '*', '!']) || is_block_item(item) {
            return FrontmatterValue::Other;
        }
        if item.starts_with(['"', '\'']) {
            match unquote(item) {
                Some((s, _)) => items.push(s),
                None => return FrontmatterValue::Other,
            }
            continue;
        }
        if looks_like_mapping(item) {
            return FrontmatterValue::Other;
        }
        // A `- ` with nothing after it is a null item: not a value anyone wants listed.
        if let FrontmatterValue::Scalar(s) = plain_scalar(item) {
            items.push(s);
        }
    }
    FrontmatterValue::BlockList(items)
}

/// `[a, "b, c", 'd']` → its items; None when it is unclosed or nests collections.
fn parse_flow_list(s: &str) -> Option<Vec<String>> {
    let inner = s.strip_prefix('[')?;
    let mut items = Vec::new();
    let mut start = 0;
    let mut chars = inner.char_indices();
    let push = |raw: &str, items: &mut Vec<String>| -> Option<()> {
        let raw = raw.trim();
        if raw.starts_with(['"', '\'']) {
            items.push(unquote(raw)?.0);
        } else if !raw.is_empty() {
            items.push(raw.to_owned());
        }
        Some(())
    };
    while let Some((at, c)) = chars.next() {
        match c {
            '"' | '\'' if inner[start..at].trim().is_empty() => {
                // Skip to the closing quote so commas inside it do not split the item.
                let mut escaped = false;
                loop {
                    let (_, q) = chars.next()?;
                    if c == '"' && q == '\\' && !escaped {
                        escaped = true;
                        continue;
                    }
                    if q == c && !escaped {
                        break;
                    }
                    escaped = false;
                }
            }
            ',' => {
                push(&inner[start..at], &mut items)?;
                start = at + 1;
            }
            ']' => {
                push(&inner[start..at], &mut items)?;
                let rest = inner[at + 1..].trim();
                return (rest.is_empty() || rest.starts_with('#')).then_some(items);
            }
            '[' | '{' => return None,
            _ => {}
        }
    }
    None
}

/// Unquotes a YAML double- or single-quoted string at the start of `s`; returns the value and what
/// follows the closing quote, or None when the quote is never closed.
fn unquote(s: &str) -> Option<(String, &str)> {
    let mut chars = s.char_indices();
    let (_, quote) = chars.next()?;
    let mut out = String::new();
    while let Some((at, c)) = chars.next() {
        if c == quote {
            if quote == '\'' && s[at + 1..].starts_with('\'') {
                // `''` is an escaped single quote inside a single-quoted string.
                chars.next();
                out.push('\'');
                continue;
            }
            return Some((out, &s[at + 1..]));
        }
        if c != '\\' || quote == '\'' {
            out.push(c);
            continue;
        }
        let (_, e) = chars.next()?;
        let hex = |n: usize, chars: &mut std::str::CharIndices<'_>| -> Option<char> {
            let digits: String = chars.by_ref().take(n).map(|(_, c)| c).collect();
            u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            'x' => out.push(hex(2, &mut chars)?),
            'u' => out.push(hex(4, &mut chars)?),
            'U' => out.push(hex(8, &mut chars)?),
            other => out.push(other),
        }
    }
    None
}

/// `|` keeps line breaks, `>` folds them into spaces; `-` strips the final newline, `+` keeps it.
fn block_scalar(indicator: &str, continuation: &[&str]) -> String {
    let literal = indicator.starts_with('|');
    let strip = indicator.contains('-');
    let indent = continuation
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = continuation
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect();
    let mut out = String::new();
    for (n, line) in lines.iter().enumerate() {
        if n > 0 {
            let folds = !literal && !line.is_empty() && !lines[n - 1].is_empty();
            out.push(if folds { ' ' } else { '\n' });
        }
        out.push_str(line);
    }
    let mut out = out.trim_end_matches('\n').to_owned();
    if !strip && !out.is_empty() {
        out.push('\n');
    }
    out
}

fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

/// Sets one list key of the frontmatter (`tags`, `aliases`, ...) to `values`, leaving every other
/// byte of the note as it was. The key is rewritten in place in its own style (a block list stays a
/// block list with its indentation; anything else becomes a flow list `key: [a, b]`), appended at the
/// end of the frontmatter when absent, and a frontmatter block is created when the note has none.
/// Setting an absent key to nothing changes nothing, and so does setting a key to the values it
/// already lists. Assumes LF line endings.
pub fn set_frontmatter_list(text: &str, key: &str, values: &[String]) -> String {
    let Some(bounds) = frontmatter_bounds(text) else {
        if values.is_empty() {
            return text.to_owned();
        }
        let field = render_list(&yaml_scalar(key), values, None);
        return format!("---\n{field}---\n{text}");
    };
    let fields = parse_fields(text, bounds.content.clone());
    let Some(field) = find_field(&fields, key) else {
        if values.is_empty() {
            return text.to_owned();
        }
        let at = bounds.content.end;
        let field = render_list(&yaml_scalar(key), values, None);
        return format!("{}{field}{}", &text[..at], &text[at..]);
    };
    if field.value.as_list() == Some(values) {
        return text.to_owned();
    }
    let block = &text[field.span.clone()];
    let written_key = split_key(block).map_or(key, |k| &block[..k.written_len]);
    let block_indent = match field.value {
        FrontmatterValue::BlockList(_) => block
            .lines()
            .skip(1)
            .find(|l| is_block_item(l))
            .map(|l| &l[..l.len() - l.trim_start().len()]),
        _ => None,
    };
    let rendered = render_list(written_key, values, block_indent);
    format!(
        "{}{rendered}{}",
        &text[..field.span.start],
        &text[field.span.end..]
    )
}

/// `key: [a, b]\n`, or `key:\n  - a\n  - b\n` with `block_indent`; an empty list is always `[]`
/// because a block list cannot be empty.
fn render_list(key: &str, values: &[String], block_indent: Option<&str>) -> String {
    match block_indent {
        Some(indent) if !values.is_empty() => {
            let mut out = format!("{key}:\n");
            for v in values {
                out.push_str(&format!("{indent}- {}\n", yaml_scalar(v)));
            }
            out
        }
        _ => {
            let items: Vec<Cow<'_, str>> = values.iter().map(|v| yaml_scalar(v)).collect();
            format!("{key}: [{}]\n", items.join(", "))
        }
    }
}

/// The value as a YAML scalar that reads back as the same string in flow and block context.
fn yaml_scalar(v: &str) -> Cow<'_, str> {
    if !needs_quotes(v) {
        return Cow::Borrowed(v);
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// Errs on the side of quoting: a needless quote is harmless, a missing one changes the value (a
/// number, a boolean, a date) or breaks the YAML.
fn needs_quotes(v: &str) -> bool {
    let (Some(first), Some(last)) = (v.chars().next(), v.chars().next_back()) else {
        return true;
    };
    if first.is_whitespace() || last.is_whitespace() || "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        return true;
    }
    if v.ends_with(':')
        || v.contains(": ")
        || v.contains(" #")
        || v.contains(['[', ']', '{', '}', ','])
    {
        return true;
    }
    if v.chars().any(char::is_control) {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true"
            | "false"
            | "yes"
            | "no"
            | "on"
            | "off"
            | "y"
            | "n"
            | "null"
            | "~"
            | ".inf"
            | "+.inf"
            | ".nan"
    ) {
        return true;
    }
    // Numbers in every YAML 1.1/1.2 spelling, dates and times: digits with separators.
    let b = v.as_bytes();
    (b[0].is_ascii_digit() || (matches!(b[0], b'+' | b'.') && b.len() > 1))
        && b.iter()
            .all(|c| c.is_ascii_hexdigit() || b"xXoO._:+-".contains(c))
}

// ---------------------------------------------------------------------------------------------
// Tags and wikilinks

/// One pass over body text that collects `#tags` and `[[wikilinks]]`. It works on the source bytes
/// (not pulldown-cmark's text events, which split around `[`), skipping `\`-escaped characters and
/// Obsidian `%% comments %%`.
struct Scanner<'t> {
    text: &'t str,
    tags: Vec<InlineTag>,
    links: Vec<WikiLink>,
    /// Inside a `%%` comment; carried across segments so a comment around a code block still ends
    /// where Obsidian ends it.
    in_comment: bool,
}

impl<'t> Scanner<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text,
            tags: Vec::new(),
            links: Vec::new(),
            in_comment: false,
        }
    }

    fn scan(&mut self, segment: Range<usize>) {
        let b = self.text.as_bytes();
        let end = segment.end;
        let at = |i: usize| if i < end { Some(b[i]) } else { None };
        let mut i = segment.start;
        // Whether the current whitespace-delimited word contains `://`: a `#` in a URL is an anchor.
        let mut in_url = false;
        while i < end {
            if self.in_comment {
                match find_pair(b, i, end, b'%') {
                    Some(close) => {
                        self.in_comment = false;
                        i = close + 2;
                        continue;
                    }
                    None => return,
                }
            }
            match b[i] {
                b'\\' => {
                    i += if at(i + 1).is_some_and(|c| c.is_ascii_punctuation()) {
                        2
                    } else {
                        1
                    }
                }
                b'%' if at(i + 1) == Some(b'%') => {
                    self.in_comment = true;
                    i += 2;
                }
                b'!' if at(i + 1) == Some(b'[') && at(i + 2) == Some(b'[') => {
                    i = self.wikilink(i, i + 1, end);
                }
                b'[' if at(i + 1) == Some(b'[') => i = self.wikilink(i, i, end),
                b'#' => i = self.tag(i, end, in_url),
                b':' if at(i + 1) == Some(b'/') && at(i + 2) == Some(b'/') => {
                    in_url = true;
                    i += 3;
                }
                c => {
                    if c.is_ascii_whitespace() {
                        in_url = false;
                    }
                    i += 1;
                }
            }
        }
    }

    /// Reads the wikilink whose `[[` is at `open` (`start` is the `!` of an embed) and returns where
    /// scanning continues. A link ends at the first `]]` on its line; a `[[` before it restarts
    /// there, which keeps the scan linear on inputs like `[[[[[[…`.
    fn wikilink(&mut self, start: usize, open: usize, end: usize) -> usize {
        let b = self.text.as_bytes();
        let mut j = open + 2;
        while j + 1 < end {
            match (b[j], b[j + 1]) {
                (b'\n', _) => return open + 2,
                (b']', b']') => break,
                (b'[', b'[') => {
                    // Hand an embed's `!` back to the main loop with its `[[`.
                    return if j > open + 2 && b[j - 1] == b'!' {
                        j - 1
                    } else {
                        j
                    };
                }
                _ => j += 1,
            }
        }
        if j + 1 >= end {
            return open + 2;
        }
        if let Some(link) = parse_wikilink(&self.text[open + 2..j], start != open, start..j + 2) {
            self.links.push(link);
        }
        j + 2
    }

    /// Reads the tag whose `#` is at `i` and returns where scanning continues.
    fn tag(&mut self, i: usize, end: usize, in_url: bool) -> usize {
        if in_url {
            return i + 1;
        }
        if let Some(prev) = self.text[..i].chars().next_back()
            && !may_precede_tag(prev)
        {
            return i + 1;
        }
        let mut stop = i + 1;
        let mut has_non_digit = false;
        for (offset, c) in self.text[i + 1..end].char_indices() {
            if !is_tag_char(c) {
                break;
            }
            has_non_digit |= !c.is_numeric();
            stop = i + 1 + offset + c.len_utf8();
        }
        // `#123` is not a tag in Obsidian (it would catch issue numbers and the like).
        if has_non_digit {
            self.tags.push(InlineTag {
                name: self.text[i + 1..stop].to_owned(),
                span: i..stop,
            });
        }
        stop.max(i + 1)
    }
}

/// The first position in `from..end` where `c` appears twice in a row.
fn find_pair(b: &[u8], from: usize, end: usize, c: u8) -> Option<usize> {
    (from..end.saturating_sub(1)).find(|&k| b[k] == c && b[k + 1] == c)
}

/// Letters and digits of any script, `_`, `-`, `/`, and combining marks (so a decomposed `é` does
/// not end a tag).
fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/') || is_combining_mark(c)
}

fn is_combining_mark(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036F}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{3099}'..='\u{309A}'
        | '\u{FE20}'..='\u{FE2F}')
}

/// A tag starts a word: after whitespace or punctuation, not after a letter or digit, and not after
/// characters that make the `#` part of something else (`&#35;` entities, `a/#b` paths, `x)#y`,
/// `color=#fff`).
fn may_precede_tag(prev: char) -> bool {
    prev.is_whitespace()
        || !(is_tag_char(prev) || matches!(prev, '#' | '&' | '\\' | ')' | ']' | '}' | '='))
}

/// `target#heading|alias`, `target#^block`, `target^block`, `#heading`; `\|` (a pipe escaped in
/// a table) separates the alias too.
fn parse_wikilink(content: &str, embed: bool, span: Range<usize>) -> Option<WikiLink> {
    let (link, alias) = match content.find('|') {
        Some(p) => (&content[..p], Some(&content[p + 1..])),
        None => (content, None),
    };
    let link = link.strip_suffix('\\').unwrap_or(link);
    let (target, heading, block) = if let Some(p) = link.find('#') {
        let sub = &link[p + 1..];
        match sub.strip_prefix('^') {
            Some(block) => (&link[..p], None, Some(block)),
            None => (&link[..p], Some(sub), None),
        }
    } else if let Some(p) = link.find('^') {
        (&link[..p], None, Some(&link[p + 1..]))
    } else {
        (link, None, None)
    };
    let heading = heading.and_then(non_empty);
    let block = block.and_then(non_empty);
    let target = target.trim();
    if target.is_empty() && heading.is_none() && block.is_none() {
        return None;
    }
    Some(WikiLink {
        target: target.to_owned(),
        heading,
        block,
        alias: alias.and_then(non_empty),
        embed,
        span,
    })
}

fn dedup_case_insensitive(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|s| seen.insert(fold_key(s)))
        .collect()
}

/// Case-folded, NFC-normalised form for comparisons (`Café`, `café` and a decomposed `café` agree).
fn fold_key(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        s.nfc().collect::<String>().to_lowercase()
    }
}

// ---------------------------------------------------------------------------------------------
// Block structure

#[derive(Default)]
struct BlockStructure {
    /// Level and span (newline excluded) of each heading.
    headings: Vec<(u8, Range<usize>)>,
    /// pulldown-cmark's range of each fenced code block.
    fences: Vec<Range<usize>>,
}

/// Whether the tag/link scan can run over the raw body without pulldown-cmark. True when nothing in
/// the body can make text not-text (code spans and blocks, HTML, link destinations, reference
/// definitions) or put a heading where the line scan of [`atx_headings`] would not see it (block
/// quotes, list items, setext underlines, indented or tab-indented lines). The test
/// `fast_path_agrees_with_pulldown` holds the two paths to the same result.
fn is_plain(body: &str) -> bool {
    let b = body.as_bytes();
    for (k, &c) in b.iter().enumerate() {
        match c {
            b'`' | b'~' | b'<' | b'\t' | b'\r' => return false,
            b']' if matches!(b.get(k + 1), Some(b'(' | b':')) => return false,
            _ => {}
        }
    }
    let mut prev_blank = true;
    for line in body.split('\n') {
        let rest = line.trim_start_matches(' ');
        let blank = rest.trim_end().is_empty();
        if !blank {
            let indent = line.len() - rest.len();
            if indent >= 4
                || rest.starts_with('>')
                || (!prev_blank && is_setext_underline(rest))
                || list_item_hides_block(rest)
            {
                return false;
            }
        }
        prev_blank = blank;
    }
    true
}

fn is_setext_underline(rest: &str) -> bool {
    let t = rest.trim_end();
    !t.is_empty() && (t.bytes().all(|c| c == b'=') || t.bytes().all(|c| c == b'-'))
}

/// Whether a list item's content (possibly nested: `- - x`) starts with something that changes its
/// block structure: a heading, a block quote, or indented code.
fn list_item_hides_block(rest: &str) -> bool {
    let mut s = rest;
    while let Some(after) = strip_list_marker(s) {
        let content = after.trim_start_matches(' ');
        if content.is_empty() {
            return false;
        }
        if after.len() - content.len() >= 5 || content.starts_with(['#', '>']) {
            return true;
        }
        s = content;
    }
    false
}

fn strip_list_marker(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let marker_len = match b.first()? {
        b'-' | b'*' | b'+' => 1,
        c if c.is_ascii_digit() => {
            let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 9 || !matches!(b.get(digits), Some(b'.' | b')')) {
                return None;
            }
            digits + 1
        }
        _ => return None,
    };
    matches!(b.get(marker_len), None | Some(b' ')).then(|| &s[marker_len..])
}

/// ATX headings found line by line; valid only for bodies [`is_plain`] accepts.
fn atx_headings(text: &str, from: usize) -> Vec<(u8, Range<usize>)> {
    let mut out = Vec::new();
    for line in LineIter::new(text, from..text.len()) {
        let content = &text[line.clone()];
        let rest = content.trim_start_matches(' ');
        if !rest.starts_with('#') {
            continue;
        }
        let hashes = rest.bytes().take_while(|&c| c == b'#').count();
        if hashes <= 6 && matches!(rest.as_bytes().get(hashes), None | Some(b' ')) {
            let start = line.start + (content.len() - rest.len());
            out.push((hashes as u8, start..line.end));
        }
    }
    out
}

/// Runs pulldown-cmark over the body and returns its headings and fenced code blocks, plus the
/// sorted byte ranges the tag/link scan must skip: code, HTML (comments included), link and image
/// destinations, autolinks and reference definitions.
fn block_structure(text: &str, body_start: usize) -> (BlockStructure, Vec<Range<usize>>) {
    struct LinkFrame {
        range: Range<usize>,
        children_end: usize,
        autolink: bool,
    }
    let body = &text[body_start..];
    let shift = |r: Range<usize>| r.start + body_start..r.end + body_start;
    let parser = Parser::new_ext(body, Options::ENABLE_FOOTNOTES).into_offset_iter();
    // Reference definitions produce no events; their destinations are URLs, not text.
    let mut excluded: Vec<Range<usize>> = parser
        .reference_definitions()
        .iter()
        .map(|(_, def)| shift(def.span.clone()))
        .collect();
    let mut structure = BlockStructure::default();
    let mut links: Vec<LinkFrame> = Vec::new();
    for (event, range) in parser {
        let range = shift(range);
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                if matches!(kind, CodeBlockKind::Fenced(_)) {
                    structure.fences.push(range.clone());
                }
                excluded.push(range.clone());
            }
            Event::Start(Tag::HtmlBlock)
            | Event::Html(_)
            | Event::InlineHtml(_)
            | Event::Code(_) => {
                excluded.push(range.clone());
            }
            Event::Start(Tag::Heading { level, .. }) => {
                structure
                    .headings
                    .push((heading_level(level), trim_newline(text, range.clone())));
            }
            Event::Start(Tag::Link { link_type, .. } | Tag::Image { link_type, .. }) => {
                let opener = if text[range.clone()].starts_with('!') {
                    2
                } else {
                    1
                };
                links.push(LinkFrame {
                    children_end: range.start + opener,
                    autolink: matches!(link_type, LinkType::Autolink | LinkType::Email),
                    range,
                });
                continue;
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some(frame) = links.pop() {
                    // An autolink is a URL throughout; a link's text is text, but everything after
                    // it (`](url "title")`, `][ref]`) is not.
                    let from = if frame.autolink {
                        frame.range.start
                    } else {
                        frame.children_end
                    };
                    if from < frame.range.end {
                        excluded.push(from..frame.range.end);
                    }
                    if let Some(parent) = links.last_mut() {
                        parent.children_end = parent.children_end.max(frame.range.end);
                    }
                }
                continue;
            }
            _ => {}
        }
        if let Some(frame) = links.last_mut() {
            frame.children_end = frame.children_end.max(range.end);
        }
    }
    excluded.sort_by_key(|r| r.start);
    (structure, excluded)
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

fn trim_newline(text: &str, range: Range<usize>) -> Range<usize> {
    let trimmed = text[range.clone()].trim_end_matches(['\n', '\r']);
    range.start..range.start + trimmed.len()
}

/// The text of a heading from its source: an ATX heading without its opening and closing `#`s, a
/// setext heading's lines without the underline, joined by spaces.
fn heading_text(src: &str) -> String {
    if let Some(last_newline) = src.rfind('\n') {
        let lines: Vec<&str> = src[..last_newline].split('\n').map(str::trim).collect();
        return lines.join(" ");
    }
    let s = src.trim_start_matches('#').trim();
    let without_closing = s.trim_end_matches('#');
    if without_closing.len() < s.len()
        && (without_closing.is_empty() || without_closing.ends_with([' ', '\t']))
    {
        without_closing.trim_end().to_owned()
    } else {
        s.to_owned()
    }
}

// ---------------------------------------------------------------------------------------------
// Code blocks

fn code_block(text: &str, span: Range<usize>, lines: &LineIndex) -> CodeBlock {
    let src = &text[span.clone()];
    let fence_at = src.find(['`', '~']).unwrap_or(0);
    let fence_char = src.as_bytes().get(fence_at).copied().unwrap_or(b'`');
    let fence_len = src[fence_at..]
        .bytes()
        .take_while(|&c| c == fence_char)
        .count();
    let open_end = src.find('\n').map_or(span.end, |n| span.start + n);
    let info_start = (span.start + fence_at + fence_len).min(open_end);
    let info = text[info_start..open_end].trim().to_owned();
    let body_start = (open_end + 1).min(span.end);
    let last_line_start = src.rfind('\n').map_or(span.start, |n| span.start + n + 1);
    let closed = last_line_start > open_end
        && is_closing_fence(&text[last_line_start..span.end], fence_char, fence_len);
    let body_end = if closed { last_line_start } else { span.end }.max(body_start);
    let mut last_byte = span.end;
    if last_byte > span.start && text.as_bytes()[last_byte - 1] == b'\n' {
        last_byte -= 1;
    }
    let (lang, attrs, id) = parse_info(&info);
    CodeBlock {
        info,
        lang,
        attrs,
        id,
        start_line: lines.line(span.start),
        end_line: lines.line(last_byte.saturating_sub(1).max(span.start)),
        body_span: body_start..body_end,
        span,
    }
}

/// `line` is a closing fence for a block opened by `len` × `ch` (container prefixes such as `> `
/// and list indentation are skipped).
fn is_closing_fence(line: &str, ch: u8, len: usize) -> bool {
    let t = line.trim_start_matches([' ', '\t', '>']);
    let run = t.bytes().take_while(|&c| c == ch).count();
    run >= len && t[run..].trim().is_empty()
}

/// The fence character and length when `line` opens a fenced code block. Any indentation is
/// accepted: inside list items fences are indented, and [`paragraphs`] only needs to know that blank
/// lines that follow do not end the block.
fn opening_fence(line: &str) -> Option<(u8, usize)> {
    let t = line.trim_start_matches([' ', '\t', '>']);
    let ch = *t.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let run = t.bytes().take_while(|&c| c == ch).count();
    // A backtick fence's info string cannot contain backticks (that would be inline code).
    (run >= 3 && !(ch == b'`' && t[run..].contains('`'))).then_some((ch, run))
}

struct InfoToken {
    text: String,
    /// Byte offset in `text` of the first `=` outside quotes.
    eq: Option<usize>,
    in_braces: bool,
}

/// Splits an info string into words; quotes group (`key="a b"` is one word `key=a b`), braces
/// separate (`lang{.x}` is `lang` and `.x`).
fn info_tokens(info: &str) -> Vec<InfoToken> {
    let mut tokens = Vec::new();
    let mut depth = 0usize;
    let mut chars = info.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            '{' => {
                depth += 1;
                chars.next();
            }
            '}' => {
                depth = depth.saturating_sub(1);
                chars.next();
            }
            c if c.is_whitespace() => {
                chars.next();
            }
            _ => {
                let mut token = InfoToken {
                    text: String::new(),
                    eq: None,
                    in_braces: depth > 0,
                };
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || c == '{' || c == '}' {
                        break;
                    }
                    chars.next();
                    match c {
                        '"' | '\'' => {
                            while let Some(q) = chars.next() {
                                if q == c {
                                    break;
                                }
                                if c == '"' && q == '\\' {
                                    if let Some(escaped) = chars.next() {
                                        token.text.push(escaped);
                                    }
                                    continue;
                                }
                                token.text.push(q);
                            }
                        }
                        '=' if token.eq.is_none() => {
                            token.eq = Some(token.text.len());
                            token.text.push('=');
                        }
                        c => token.text.push(c),
                    }
                }
                tokens.push(token);
            }
        }
    }
    tokens
}

type InfoParts = (Option<String>, Vec<(String, String)>, Option<String>);

/// Language, attributes and id of an info string such as `http id=login env="dev box" verbose` or
/// `{#login .http key=v}`.
fn parse_info(info: &str) -> InfoParts {
    let mut lang = None;
    let mut attrs = Vec::new();
    let mut id: Option<String> = None;
    for (n, token) in info_tokens(info).into_iter().enumerate() {
        if let Some(eq) = token.eq {
            let (key, value) = (&token.text[..eq], &token.text[eq + 1..]);
            if key.is_empty() {
                continue;
            }
            if key == "id" && id.is_none() {
                id = Some(value.to_owned());
            }
            attrs.push((key.to_owned(), value.to_owned()));
        } else if let Some(x) = token.text.strip_prefix('#').filter(|x| !x.is_empty()) {
            id.get_or_insert_with(|| x.to_owned());
            attrs.push(("id".to_owned(), x.to_owned()));
        } else if let Some(x) = token
            .text
            .strip_prefix('.')
            .filter(|x| token.in_braces && !x.is_empty())
        {
            lang.get_or_insert_with(|| x.to_owned());
            attrs.push(("class".to_owned(), x.to_owned()));
        } else if n == 0 && !token.in_braces {
            lang = Some(token.text);
        } else {
            attrs.push((token.text, String::new()));
        }
    }
    (lang, attrs, id)
}

// ---------------------------------------------------------------------------------------------
// Lines

/// Lines of `text[range]` as byte ranges without their newline; no empty line after a final newline.
struct LineIter<'t> {
    text: &'t str,
    pos: usize,
    end: usize,
}

impl<'t> LineIter<'t> {
    fn new(text: &'t str, range: Range<usize>) -> Self {
        Self {
            text,
            pos: range.start,
            end: range.end,
        }
    }
}

impl Iterator for LineIter<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        if self.pos >= self.end {
            return None;
        }
        let start = self.pos;
        let stop = self.text[start..self.end]
            .find('\n')
            .map_or(self.end, |n| start + n);
        self.pos = stop + 1;
        Some(start..stop)
    }
}

/// Start offsets of every line, for turning offsets into 1-based line numbers.
#[derive(Default)]
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, c)| c == b'\n')
                .map(|(k, _)| k + 1),
        );
        Self(starts)
    }

    fn line(&self, pos: usize) -> usize {
        self.0.partition_point(|&start| start <= pos).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn link(target: &str) -> WikiLink {
        WikiLink {
            target: target.to_owned(),
            heading: None,
            block: None,
            alias: None,
            embed: false,
            span: 0..0,
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn tag_names(text: &str) -> Vec<String> {
        parse(text)
            .inline_tags
            .into_iter()
            .map(|t| t.name)
            .collect()
    }

    #[test]
    fn wikilink_forms() {
        let with = |f: fn(&mut WikiLink)| {
            let mut l = link("a");
            f(&mut l);
            l
        };
        let cases: Vec<(&str, WikiLink)> = vec![
            ("[[a]]", link("a")),
            ("[[a|alias]]", with(|l| l.alias = Some("alias".into()))),
            (
                "[[a#Heading]]",
                with(|l| l.heading = Some("Heading".into())),
            ),
            (
                "[[a#Heading|alias]]",
                with(|l| {
                    l.heading = Some("Heading".into());
                    l.alias = Some("alias".into());
                }),
            ),
            ("[[a^block]]", with(|l| l.block = Some("block".into()))),
            ("[[a#^block]]", with(|l| l.block = Some("block".into()))),
            (
                "[[a#^block|see]]",
                with(|l| {
                    l.block = Some("block".into());
                    l.alias = Some("see".into());
                }),
            ),
            ("![[a]]", with(|l| l.embed = true)),
            (
                "![[a#Heading|300]]",
                with(|l| {
                    l.embed = true;
                    l.heading = Some("Heading".into());
                    l.alias = Some("300".into());
                }),
            ),
            (
                "[[#Heading]]",
                with(|l| {
                    l.target = String::new();
                    l.heading = Some("Heading".into());
                }),
            ),
            (
                "[[#^blk]]",
                with(|l| {
                    l.target = String::new();
                    l.block = Some("blk".into());
                }),
            ),
            ("[[folder/a.md]]", with(|l| l.target = "folder/a.md".into())),
            ("[[ a ]]", link("a")),
            ("[[a|]]", link("a")),
            ("[[a\\|alias]]", with(|l| l.alias = Some("alias".into()))),
            ("[[a#H1#H2]]", with(|l| l.heading = Some("H1#H2".into()))),
            (
                "[[日本語のノート]]",
                with(|l| l.target = "日本語のノート".into()),
            ),
        ];
        for (source, mut expected) in cases {
            let text = format!("see {source} here");
            expected.span = 4..4 + source.len();
            assert_eq!(parse(&text).links, vec![expected], "{source}");
        }
    }

    #[test]
    fn not_wikilinks() {
        for text in [
            "[[]]",
            "[[|x]]",
            "[[#]]",
            "[[a\nb]]",
            "[[unclosed",
            "\\[[escaped]]",
            "`[[code]]`",
            "```\n[[fenced]]\n```",
            "<!-- [[comment]] -->",
            "%% [[obsidian comment]] %%",
            "[text](http://x/[[a]])",
        ] {
            assert_eq!(parse(text).links, vec![], "{text:?}");
        }
    }

    #[test]
    fn wikilink_details() {
        let note = parse("![[x]] \\![[y]] [[a [[b]] c]] [[p]][[q]]");
        let got: Vec<(&str, bool)> = note
            .links
            .iter()
            .map(|l| (l.target.as_str(), l.embed))
            .collect();
        assert_eq!(
            got,
            vec![
                ("x", true),
                ("y", false),
                ("b", false),
                ("p", false),
                ("q", false)
            ]
        );
        let text = "a ![[img.png]] b";
        let l = &parse(text).links[0];
        assert_eq!(&text[l.span.clone()], "![[img.png]]");
        // Links after code, inside headings, lists and quotes are still found.
        let text = "# See [[h]]\n- [[li]]\n> [[q]]\n\n`x` [[after]]\n";
        let targets: Vec<String> = parse(text).links.into_iter().map(|l| l.target).collect();
        assert_eq!(targets, strings(&["h", "li", "q", "after"]));
    }

    #[test]
    fn tag_rules() {
        let cases: Vec<(&str, Vec<&str>)> = vec![
            ("#tag", vec!["tag"]),
            ("text #tag more", vec!["tag"]),
            ("#a/b/c and #x_y-z", vec!["a/b/c", "x_y-z"]),
            ("#日本語 と #한국어 и #тег", vec!["日本語", "한국어", "тег"]),
            (
                "#café. #naïve, (#paren) \"#quoted\"",
                vec!["café", "naïve", "paren", "quoted"],
            ),
            ("decomposed #cafe\u{301}!", vec!["cafe\u{301}"]),
            ("#123 #2024 #y1984 #1a", vec!["y1984", "1a"]),
            ("word#notag a/#no &#35;x &#x41; x)#no color=#fff", vec![]),
            (
                "# Heading\n## Also heading\n#Tag at line start",
                vec!["Tag"],
            ),
            ("##notatag", vec![]),
            ("# Title #intitle", vec!["intitle"]),
            ("see http://x.com/#anchor and https://y/p?a#b", vec![]),
            ("<http://x/#auto> [l](http://x/#inline) [r](#frag)", vec![]),
            ("[ref]: http://x/#refdef\n\n[ref] #after", vec!["after"]),
            ("`#code` ``#more code`` #real", vec!["real"]),
            ("```\n#fenced\n```\n~~~\n#tilde\n~~~\n#out", vec!["out"]),
            ("    #indented code\n\n#out", vec!["out"]),
            (
                "<!-- #comment -->\n#out <!-- #inline\n#multiline --> #end",
                vec!["out", "end"],
            ),
            ("%% #obsidian-comment %% #out", vec!["out"]),
            ("\\#escaped #real", vec!["real"]),
            ("[[note#heading]] [[#heading]] #real", vec!["real"]),
            (
                "- #list\n> #quote\n1. #ordered",
                vec!["list", "quote", "ordered"],
            ),
            ("emphasis *#em* **#strong**", vec!["em", "strong"]),
            ("#", vec![]),
            ("# ", vec![]),
            ("#tag#other", vec!["tag"]),
        ];
        for (text, expected) in cases {
            assert_eq!(tag_names(text), strings(&expected), "{text:?}");
        }
    }

    #[test]
    fn tags_merge_frontmatter_and_inline_deduplicated() {
        let text = "---\ntags: [Project, a/b]\n---\n#project #New #new #a/B #c\n";
        let note = parse(text);
        assert_eq!(note.tags, strings(&["Project", "a/b", "New", "c"]));
        assert_eq!(note.inline_tags.len(), 5);
        assert_eq!(&text[note.inline_tags[0].span.clone()], "#project");
    }

    #[test]
    fn frontmatter_tag_forms() {
        let cases: Vec<(&str, Vec<&str>)> = vec![
            ("tags: [a, b]", vec!["a", "b"]),
            ("tags: [\"a\", 'b c', \"#d\"]", vec!["a", "b", "c", "d"]),
            ("tags:\n  - a\n  - \"b\"\n  - 'c'", vec!["a", "b", "c"]),
            ("tags:\n- a\n- b", vec!["a", "b"]),
            ("tags: single", vec!["single"]),
            ("tags: a, b", vec!["a", "b"]),
            ("tags: a b #comment", vec!["a", "b"]),
            ("tags: \"quoted, string\"", vec!["quoted", "string"]),
            ("tags: #only-a-comment", vec![]),
            ("tags:", vec![]),
            ("tags: []", vec![]),
            ("Tags: [upper]", vec!["upper"]),
            ("tag: singular", vec!["singular"]),
            ("tags: [a, A, b]", vec!["a", "b"]),
            ("tags: [nested/tag, 日本語]", vec!["nested/tag", "日本語"]),
            (
                "tags:\n  - a # comment\n  # full comment\n  - b",
                vec!["a", "b"],
            ),
            ("tags: {a: b}", vec![]),
        ];
        for (yaml, expected) in cases {
            let text = format!("---\n{yaml}\n---\nbody\n");
            let note = parse(&text);
            assert!(note.frontmatter.is_some(), "{yaml:?}");
            assert_eq!(note.tags, strings(&expected), "{yaml:?}");
        }
    }

    #[test]
    fn frontmatter_title_and_aliases() {
        let cases: Vec<(&str, Option<&str>, Vec<&str>)> = vec![
            ("title: Plain title", Some("Plain title"), vec![]),
            (
                "title: \"Quoted: with colon\"",
                Some("Quoted: with colon"),
                vec![],
            ),
            ("title: 'It''s'", Some("It's"), vec![]),
            (
                "title: \"esc \\\"q\\\" \\u00e9\"",
                Some("esc \"q\" é"),
                vec![],
            ),
            ("title: >\n  folded\n  lines", Some("folded lines"), vec![]),
            ("title:\n  multi\n  line", Some("multi line"), vec![]),
            ("title: ~", None, vec![]),
            (
                "aliases: [One, \"Two, too\"]",
                None,
                vec!["One", "Two, too"],
            ),
            ("aliases:\n  - One\n  - Two", None, vec!["One", "Two"]),
            ("aliases: One, Two", None, vec!["One", "Two"]),
            ("alias: Single", None, vec!["Single"]),
        ];
        for (yaml, title, aliases) in cases {
            let note = parse(&format!("---\n{yaml}\n---\n# Heading\n"));
            assert_eq!(
                note.frontmatter.as_ref().and_then(|f| f.title.clone()),
                title.map(str::to_owned),
                "{yaml:?}"
            );
            assert_eq!(note.aliases, strings(&aliases), "{yaml:?}");
        }
    }

    #[test]
    fn title_falls_back_to_first_h1() {
        let cases: Vec<(&str, Option<&str>)> = vec![
            ("---\ntitle: FM\n---\n# H1\n", Some("FM")),
            ("intro\n## two\n# One #\n# Second\n", Some("One")),
            ("Setext\n===\n", Some("Setext")),
            ("#\n# Real\n", Some("Real")),
            ("## only h2\n", None),
            ("```\n# not a heading\n```\n", None),
            ("", None),
        ];
        for (text, title) in cases {
            assert_eq!(parse(text).title, title.map(str::to_owned), "{text:?}");
        }
    }

    #[test]
    fn frontmatter_detection() {
        let cases: Vec<(&str, Option<(usize, &str)>)> = vec![
            ("---\na: 1\n---\nbody", Some((13, "a: 1\n"))),
            ("---\na: 1\n...\nbody", Some((13, "a: 1\n"))),
            ("---   \na: 1\n---  \nbody", Some((18, "a: 1\n"))),
            ("---\n---\nbody", Some((8, ""))),
            ("---\na: 1\n---", Some((12, "a: 1\n"))),
            ("---\na: 1\nno close\n", None),
            ("---", None),
            ("\n---\na: 1\n---\n", None),
            (" ---\na: 1\n---\n", None),
            ("----\na: 1\n----\n", None),
            ("text\n\n---\na: 1\n---\n", None),
            // The caller strips a BOM; one left in place means the block is not at byte 0.
            ("\u{feff}---\na: 1\n---\n", None),
            // Callers normalise CRLF, but a CRLF block is still recognised.
            ("---\r\na: 1\r\n---\r\nbody", Some((16, "a: 1\r\n"))),
        ];
        for (text, expected) in cases {
            let note = parse(text);
            let got = note
                .frontmatter
                .as_ref()
                .map(|f| (f.span.end, f.raw.as_str()));
            assert_eq!(got, expected, "{text:?}");
            assert_eq!(note.body_start, expected.map_or(0, |e| e.0), "{text:?}");
        }
        // A thematic break later in the note is body text.
        let note = parse("# T\n\n---\n\nmore\n---\n");
        assert!(note.frontmatter.is_none());
        assert_eq!(note.body_start, 0);
    }

    #[test]
    fn frontmatter_fields_keep_unknown_keys() {
        let text = "---\ntitle: T\nstatus: draft # note\nnested:\n  a: 1\n  b: [x]\n# comment\ncreated: 2024-01-01\n\"quoted key\": v\nurl: http://x:80/a\nempty:\n---\n";
        let fm = parse(text).frontmatter.unwrap_or_default();
        let got: Vec<(&str, &str, &FrontmatterValue)> = fm
            .fields
            .iter()
            .map(|f| (f.key.as_str(), f.raw.as_str(), &f.value))
            .collect();
        let scalar = |s: &str| FrontmatterValue::Scalar(s.to_owned());
        assert_eq!(
            got,
            vec![
                ("title", "T", &scalar("T")),
                ("status", "draft # note", &scalar("draft")),
                ("nested", "a: 1\n  b: [x]", &FrontmatterValue::Other),
                ("created", "2024-01-01", &scalar("2024-01-01")),
                ("quoted key", "v", &scalar("v")),
                ("url", "http://x:80/a", &scalar("http://x:80/a")),
                ("empty", "", &FrontmatterValue::Null),
            ]
        );
        let nested = fm.get("NESTED").map(|f| &text[f.span.clone()]);
        assert_eq!(nested, Some("nested:\n  a: 1\n  b: [x]\n"));
    }

    #[test]
    fn set_frontmatter_list_rewrites_only_its_key() {
        let v = |items: &[&str]| strings(items);
        let cases: Vec<(&str, &str, Vec<String>, &str)> = vec![
            // Flow list rewritten in place; other lines byte-identical.
            (
                "---\ntitle:  Odd  spacing \ntags: [a,b]   \nx: {k: v}\n---\nbody #t\n",
                "tags",
                v(&["a", "c"]),
                "---\ntitle:  Odd  spacing \ntags: [a, c]\nx: {k: v}\n---\nbody #t\n",
            ),
            // Block list keeps its style and indentation; the comment after it stays.
            (
                "---\ntags:\n    - a\n    - b\n# keep me\nz: 1\n---\n",
                "tags",
                v(&["a", "b", "new one"]),
                "---\ntags:\n    - a\n    - b\n    - new one\n# keep me\nz: 1\n---\n",
            ),
            (
                "---\ntags:\n- a\n---\n",
                "tags",
                v(&["b"]),
                "---\ntags:\n- b\n---\n",
            ),
            // A string value becomes a flow list.
            (
                "---\ntags: a, b\n---\n",
                "tags",
                v(&["a"]),
                "---\ntags: [a]\n---\n",
            ),
            // Absent key: appended before the closing fence.
            (
                "---\ntitle: T\n---\ntext",
                "aliases",
                v(&["Other name"]),
                "---\ntitle: T\naliases: [Other name]\n---\ntext",
            ),
            ("---\n---\n", "tags", v(&["x"]), "---\ntags: [x]\n---\n"),
            // No frontmatter: created; the body is untouched.
            (
                "# Note\n\n---\n",
                "tags",
                v(&["x", "z"]),
                "---\ntags: [x, z]\n---\n# Note\n\n---\n",
            ),
            // Empty lists.
            (
                "---\ntags:\n  - a\n---\n",
                "tags",
                v(&[]),
                "---\ntags: []\n---\n",
            ),
            ("# no fm\n", "tags", v(&[]), "# no fm\n"),
            ("---\na: 1\n---\n", "tags", v(&[]), "---\na: 1\n---\n"),
            // Values that need quoting.
            (
                "---\naliases: []\n---\n",
                "aliases",
                v(&[
                    "a, b",
                    "x: y",
                    "true",
                    "2024",
                    "#h",
                    "\"hi\" she said",
                    "-dash",
                    "",
                ]),
                "---\naliases: [\"a, b\", \"x: y\", \"true\", \"2024\", \"#h\", \"\\\"hi\\\" she said\", \"-dash\", \"\"]\n---\n",
            ),
            // Same values: no change at all, not even normalised spacing.
            (
                "---\ntags: [a,b]\n---\n",
                "tags",
                v(&["a", "b"]),
                "---\ntags: [a,b]\n---\n",
            ),
            // The key keeps its spelling; `tags` also rewrites a singular `tag`.
            (
                "---\nTags: [a]\n---\n",
                "tags",
                v(&["b"]),
                "---\nTags: [b]\n---\n",
            ),
            (
                "---\ntag: a\n---\n",
                "tags",
                v(&["b"]),
                "---\ntag: [b]\n---\n",
            ),
        ];
        for (text, key, values, expected) in cases {
            let got = set_frontmatter_list(text, key, &values);
            assert_eq!(got, expected, "{text:?} {key} {values:?}");
            if !values.is_empty() {
                let fm = parse(&got).frontmatter.unwrap_or_default();
                let read = fm
                    .get(key)
                    .or_else(|| fm.get("tag"))
                    .map(|f| f.value.clone());
                let read = read.and_then(|v| v.as_list().map(<[String]>::to_vec));
                assert_eq!(read, Some(values.clone()), "round trip of {values:?}");
            }
        }
    }

    #[test]
    fn code_block_attributes() {
        type Case<'a> = (
            &'a str,
            Option<&'a str>,
            Vec<(&'a str, &'a str)>,
            Option<&'a str>,
        );
        let cases: Vec<Case<'_>> = vec![
            (
                "http id=login env=dev",
                Some("http"),
                vec![("id", "login"), ("env", "dev")],
                Some("login"),
            ),
            (
                "sql name=\"quoted value\" q='single' flag",
                Some("sql"),
                vec![("name", "quoted value"), ("q", "single"), ("flag", "")],
                None,
            ),
            (
                "{#login .http key=v}",
                Some("http"),
                vec![("id", "login"), ("class", "http"), ("key", "v")],
                Some("login"),
            ),
            (
                "python {.numberLines #x}",
                Some("python"),
                vec![("class", "numberLines"), ("id", "x")],
                Some("x"),
            ),
            ("js", Some("js"), vec![], None),
            ("", None, vec![], None),
            (
                "k=\"a \\\"b\\\" = c\"",
                None,
                vec![("k", "a \"b\" = c")],
                None,
            ),
            (
                "x unterminated=\"abc",
                Some("x"),
                vec![("unterminated", "abc")],
                None,
            ),
            ("x {", Some("x"), vec![], None),
        ];
        for (info, lang, attrs, id) in cases {
            let text = format!("```{info}\nbody\n```\n");
            let note = parse(&text);
            assert_eq!(note.code_blocks.len(), 1, "{info:?}");
            let block = &note.code_blocks[0];
            assert_eq!(block.info, info);
            assert_eq!(block.lang.as_deref(), lang, "{info:?}");
            let got: Vec<(&str, &str)> = block
                .attrs
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            assert_eq!(got, attrs, "{info:?}");
            assert_eq!(block.id.as_deref(), id, "{info:?}");
        }
    }

    #[test]
    fn code_block_spans_and_lines() {
        let text = "intro\n\n```http id=a\nGET /\n\nHost: x\n```\n\n~~~~ sh\n~~~\n~~~~\n\n- item\n\n  ````js\n  a\n  ````\n\n> ```\n> q\n> ```\n\n```open\nnever closed\n";
        let blocks = parse(text).code_blocks;
        let got: Vec<(&str, &str, usize, usize)> = blocks
            .iter()
            .map(|b| {
                (
                    &text[b.span.clone()],
                    &text[b.body_span.clone()],
                    b.start_line,
                    b.end_line,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "```http id=a\nGET /\n\nHost: x\n```",
                    "GET /\n\nHost: x\n",
                    3,
                    7
                ),
                ("~~~~ sh\n~~~\n~~~~", "~~~\n", 9, 11),
                ("````js\n  a\n  ````", "  a\n", 15, 17),
                ("```\n> q\n> ```", "> q\n", 19, 21),
                ("```open\nnever closed\n", "never closed\n", 23, 24),
            ]
        );
        assert_eq!(blocks[1].lang.as_deref(), Some("sh"));
    }

    #[test]
    fn headings() {
        let text = "---\nt: 1\n---\n# One\ntext\n  ## Two ##\n### Three \\#\n\nSetext\n---\n- # In list\n> ###### Quoted\n####### seven\n#nospace\n";
        let got: Vec<(u8, String, &str, usize)> = parse(text)
            .headings
            .into_iter()
            .map(|h| (h.level, h.text, &text[h.span], h.line))
            .collect();
        let e = |l: u8, t: &str, s: &'static str, line: usize| (l, t.to_owned(), s, line);
        assert_eq!(
            got,
            vec![
                e(1, "One", "# One", 4),
                e(2, "Two", "## Two ##", 6),
                e(3, "Three \\#", "### Three \\#", 7),
                e(2, "Setext", "Setext\n---", 9),
                e(1, "In list", "# In list", 11),
                e(6, "Quoted", "###### Quoted", 12),
            ]
        );
    }

    #[test]
    fn sections_nest_and_end_at_same_or_higher_level() {
        let text = "---\na: 1\n---\nintro\n# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\ne\n";
        let got: Vec<(Option<String>, &str)> = sections(text)
            .into_iter()
            .map(|s| (s.heading.map(|h| h.text), &text[s.span]))
            .collect();
        let s = |h: Option<&str>, body: &'static str| (h.map(str::to_owned), body);
        assert_eq!(
            got,
            vec![
                s(None, "intro\n"),
                s(Some("A"), "# A\na\n## B\nb\n### C\nc\n## D\nd\n"),
                s(Some("B"), "## B\nb\n### C\nc\n"),
                s(Some("C"), "### C\nc\n"),
                s(Some("D"), "## D\nd\n"),
                s(Some("E"), "# E\ne\n"),
            ]
        );
        assert_eq!(sections("\n\n# Only\n").len(), 1);
        let plain = sections("just text");
        assert_eq!(plain.len(), 1);
        assert_eq!(plain[0].span, 0..9);
        assert!(sections("").is_empty());
        // A heading inside a block quote starts its section at the start of its line.
        let text = "> # Q\nbody\n";
        assert_eq!(sections(text)[0].span, 0..text.len());
    }

    #[test]
    fn paragraph_ranges() {
        let text = "---\na: 1\n\nb: 2\n---\nfirst\nstill first\n\n\n  second  \n\n```\ncode\n\n\nmore\n```\nafter fence\n\n- list\n- items\n   \nlast";
        let got: Vec<&str> = paragraphs(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            got,
            vec![
                "---\na: 1\n\nb: 2\n---",
                "first\nstill first",
                "  second  ",
                "```\ncode\n\n\nmore\n```\nafter fence",
                "- list\n- items",
                "last",
            ]
        );
        assert!(paragraphs("").is_empty());
        assert!(paragraphs("\n\n  \n").is_empty());
        let text = "a\n\n~~~~\nx\n\n~~~\nstill code\n~~~~\n\nb\n";
        let got: Vec<&str> = paragraphs(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(got, vec!["a", "~~~~\nx\n\n~~~\nstill code\n~~~~", "b"]);
        // An unclosed fence runs to the end.
        let text = "```\na\n\nb\n";
        assert_eq!(paragraphs(text), vec![0..8]);
    }

    #[test]
    fn fast_path_agrees_with_pulldown() {
        let notes = [
            "plain #tag and [[link]] text\n",
            "---\ntags: [a]\n---\n# Title\n\nBody #t [[x#h|y]] ![[e]]\n\n## Sub ##\ntext\n",
            "  # indented heading\n   ### three\n#NotHeading\n\n- item #li\n- [[a]]\n1. one\n",
            "Setext-like after blank\n\n---\n\n===\n",
            "escape \\#x \\[[y]] %% #hidden [[h]] %% #shown\n",
            "url http://x/#a www.y.com/#b and (#p) [#q]\n",
            "##### five\n####### seven\n# \n#\n",
            "* a\n+ b\n10) c #ten\n\n- \n\n-\n",
            "日本語 #日本語 #한국어/하위\n",
            "%% unterminated #x\n\n# Heading\n",
            "tail # heading without newline",
        ];
        for note in notes {
            assert!(
                is_plain(&note[parse_frontmatter(note).map_or(0, |f| f.span.end)..]),
                "{note:?} should be plain"
            );
            assert_eq!(parse_with(note, true), parse_with(note, false), "{note:?}");
        }
        for not_plain in [
            "`c`",
            "~~~",
            "<b>",
            "\tx",
            "a\r\n",
            "[a](b)",
            "[a]: b",
            "    code",
            "> q",
            "a\n===",
            "a\n-",
            "- # h",
            "1. > q",
            "-      code",
        ] {
            assert!(!is_plain(not_plain), "{not_plain:?}");
        }
    }

    /// How much a parse found: links, inline tags, headings, code blocks, frontmatter fields.
    fn found(note: &ParsedNote) -> [usize; 5] {
        [
            note.links.len(),
            note.inline_tags.len(),
            note.headings.len(),
            note.code_blocks.len(),
            note.frontmatter.as_ref().map_or(0, |f| f.fields.len()),
        ]
    }

    #[test]
    fn pathological_inputs_parse_to_results_in_proportion() {
        // Thousands of unclosed or repeated constructs in a row. Every one parses, and four times
        // the input finds four times as much (within a few items at the edges): no construct is
        // lost or found twice as inputs grow. How long they take is measured by
        // `cargo bench --bench markdown` (docs/benchmarks.md §5), never asserted here.
        let units = [
            "[[", "#", "![[", "[[a", "[[a|", "#a ", "]]", "%%", "[", "(#", "\\", "a#", "[[#", "`",
            "<", "[](", "- ", "> ", "---\n", "a\n", "*", "[[a]]", "#tag ", "# h\n", "```\n",
        ];
        for unit in units {
            for suffix in ["", "\n`code`"] {
                let small = found(&parse(&format!("{}{suffix}", unit.repeat(5_000))));
                let large = found(&parse(&format!("{}{suffix}", unit.repeat(20_000))));
                for (s, l) in small.iter().zip(&large) {
                    assert!(
                        l.abs_diff(4 * s) <= 4,
                        "{unit:?}{suffix:?}: found {small:?} in 5,000 repetitions, {large:?} in 20,000"
                    );
                }
            }
        }
        // The units that do make something are counted as what they are.
        assert_eq!(found(&parse(&"[[a]]".repeat(1_000)))[0], 1_000);
        assert_eq!(found(&parse(&"#tag ".repeat(1_000)))[1], 1_000);
        assert_eq!(found(&parse(&"# h\n".repeat(1_000)))[2], 1_000);
        assert_eq!(found(&parse(&"```\nx\n```\n".repeat(1_000)))[3], 1_000);
        // Frontmatter that never closes.
        let text = format!("---\n{}", "a: b\n".repeat(50_000));
        assert!(parse(&text).frontmatter.is_none());
    }

    #[test]
    fn parses_a_generated_vault_quickly() {
        let frontmatter = "---\ntitle: Generated\ntags: [a, b/c]\naliases:\n  - Other\n---\n";
        let section = "# Heading\n\nSome text with a #tag and a [[Link|alias]] and more words to make a \
                       realistic paragraph of prose that goes on for a while, #another/tag.\n\n\
                       ## Section\n\n- item one\n- item [[two#Heading]]\n\n";
        let plain = format!("{frontmatter}{}", section.repeat(11));
        // Inline code sends the note down the pulldown-cmark path.
        let coded = format!(
            "{frontmatter}{}",
            section.replace("more words", "`code`").repeat(11)
        );
        for text in [&plain, &coded] {
            assert!(text.len() > 2000 && text.len() < 2500, "{}", text.len());
        }
        assert!(is_plain(&plain[parse(&plain).body_start..]));
        assert!(!is_plain(&coded[parse(&coded).body_start..]));
        let start = std::time::Instant::now();
        for _ in 0..500 {
            std::hint::black_box(parse(&plain));
            std::hint::black_box(parse(&coded));
        }
        // 1,000 notes of 2 KB. A debug build runs this ~10-30x slower than release, so this bound
        // keeps 10,000 notes in release well under a second.
        let elapsed = start.elapsed();
        assert!(elapsed.as_secs_f64() < 5.0, "{elapsed:?}");
    }
}
