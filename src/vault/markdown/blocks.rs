//! Block structure: headings, sections and paragraphs.

use super::*;

#[derive(Default)]
pub(super) struct BlockStructure {
    /// Level and span (newline excluded) of each heading.
    pub(super) headings: Vec<(u8, Range<usize>)>,
    /// pulldown-cmark's range of each fenced code block.
    pub(super) fences: Vec<Range<usize>>,
    /// Where each list item starts (its marker), for the tasks.
    pub(super) items: Vec<usize>,
    /// pulldown-cmark's range of each inline link and image (`[text](dest)`), for the graph.
    pub(super) inline_links: Vec<Range<usize>>,
}

/// Whether the tag/link scan can run over the raw body without pulldown-cmark. True when nothing in
/// the body can make text not-text (code spans and blocks, HTML, link destinations, reference
/// definitions) or put a heading where the line scan of [`atx_headings`] would not see it (block
/// quotes, list items, setext underlines, indented or tab-indented lines). The test
/// `fast_path_agrees_with_pulldown` holds the two paths to the same result.
pub(super) fn is_plain(body: &str) -> bool {
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

pub(super) fn is_setext_underline(rest: &str) -> bool {
    let t = rest.trim_end();
    !t.is_empty() && (t.bytes().all(|c| c == b'=') || t.bytes().all(|c| c == b'-'))
}

/// Whether a list item's content (possibly nested: `- - x`) starts with something that changes its
/// block structure: a heading, a block quote, or indented code.
pub(super) fn list_item_hides_block(rest: &str) -> bool {
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

/// What follows a list marker (`-`, `*`, `+`, or up to nine digits and `.` or `)`) that is
/// followed by a space or nothing, at the start of `s`.
pub(super) fn strip_list_marker(s: &str) -> Option<&str> {
    after_list_marker(s).filter(|rest| rest.is_empty() || rest.starts_with(' '))
}

/// What follows a list marker at the start of `s`, whatever it is (the task scanner accepts a
/// tab there and checks the rest itself).
pub(super) fn after_list_marker(s: &str) -> Option<&str> {
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
    Some(&s[marker_len..])
}

/// ATX headings found line by line; valid only for bodies [`is_plain`] accepts.
pub(super) fn atx_headings(text: &str, from: usize) -> Vec<(u8, Range<usize>)> {
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
pub(super) fn block_structure(
    text: &str,
    body_start: usize,
) -> (BlockStructure, Vec<Range<usize>>) {
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
            Event::Start(Tag::Item) => structure.items.push(range.start),
            Event::Start(Tag::Heading { level, .. }) => {
                structure
                    .headings
                    .push((heading_level(level), trim_newline(text, range.clone())));
            }
            Event::Start(Tag::Link { link_type, .. } | Tag::Image { link_type, .. }) => {
                if link_type == LinkType::Inline {
                    structure.inline_links.push(range.clone());
                }
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

pub(super) fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

pub(super) fn trim_newline(text: &str, range: Range<usize>) -> Range<usize> {
    let trimmed = text[range.clone()].trim_end_matches(['\n', '\r']);
    range.start..range.start + trimmed.len()
}

/// The text of a heading from its source: an ATX heading without its opening and closing `#`s, a
/// setext heading's lines without the underline, joined by spaces.
pub(super) fn heading_text(src: &str) -> String {
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
