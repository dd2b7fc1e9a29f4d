//! The Markdown structure of one note, read the way Obsidian reads it: YAML frontmatter (`title`,
//! `tags`, `aliases`, and the raw text of every other key), inline `#tags`, `[[wikilinks]]`, headings,
//! sections, blank-line-delimited paragraphs and fenced code blocks with attributes in their info
//! string; `- [ ]` tasks ([`tasks`]); plus [`set_frontmatter_list`], the one frontmatter edit the tag
//! and alias tools need.
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

mod blocks;
mod code;
mod frontmatter;
mod lines;
mod scan;
mod tasks;
use blocks::*;
use code::*;
pub use frontmatter::set_frontmatter_list;
use frontmatter::*;
use lines::*;
use scan::*;
pub use tasks::{Task, TaskStatus, set_task_status, tasks};

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
    /// The `- [ ]` tasks ([`tasks`]).
    pub tasks: Vec<Task>,
    /// pulldown-cmark's range of each inline link and image (`[text](dest)`) of the body, for
    /// [`crate::vault::relink::markdown_links_at`]: the graph reads Markdown links from the parse
    /// the note had anyway instead of a second one. Empty for a plain note (none can hold one).
    #[serde(skip)]
    pub inline_links: Vec<Range<usize>>,
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
            items: Vec::new(),
            inline_links: Vec::new(),
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
    // The list items pulldown-cmark found, when it ran; else a parse of its own, only when some
    // line looks like a task (a plain note has no code to hide one in, but list rules still
    // decide what is an item).
    let tasks = if structure.items.is_empty() {
        tasks::tasks(text)
    } else {
        tasks::tasks_at_items(text, &structure.items)
    };

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
        tasks,
        inline_links: structure.inline_links,
    }
}

/// The `[[wikilinks]]` written in the frontmatter's property values (`related: "[[Plan]]"`), which
/// Obsidian counts as links of the note; [`ParsedNote::links`] holds the body's only.
pub fn frontmatter_links(text: &str, frontmatter: &Frontmatter) -> Vec<WikiLink> {
    let mut scanner = Scanner::new(text);
    scanner.scan(frontmatter.span.clone());
    scanner.links
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

    /// How fast this is, is measured in benches/markdown.rs (no clock in tests, decisions §25);
    /// here: both paths parse a generated note's structure.
    #[test]
    fn parses_a_generated_vault_note_on_both_paths() {
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
        for text in [&plain, &coded] {
            let parsed = parse(text);
            assert_eq!(parsed.title.as_deref(), Some("Generated"));
            assert_eq!(parsed.links.len(), 22, "{text}");
            assert!(parsed.tags.len() >= 4, "{:?}", parsed.tags);
        }
    }
}
