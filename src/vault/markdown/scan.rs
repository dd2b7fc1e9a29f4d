//! Inline #tags and [[wikilinks]] outside code.

use super::*;

/// One pass over body text that collects `#tags` and `[[wikilinks]]`. It works on the source bytes
/// (not pulldown-cmark's text events, which split around `[`), skipping `\`-escaped characters and
/// Obsidian `%% comments %%`.
pub(super) struct Scanner<'t> {
    pub(super) text: &'t str,
    pub(super) tags: Vec<InlineTag>,
    pub(super) links: Vec<WikiLink>,
    /// Inside a `%%` comment; carried across segments so a comment around a code block still ends
    /// where Obsidian ends it.
    pub(super) in_comment: bool,
}

impl<'t> Scanner<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        Self {
            text,
            tags: Vec::new(),
            links: Vec::new(),
            in_comment: false,
        }
    }

    pub(super) fn scan(&mut self, segment: Range<usize>) {
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
    pub(super) fn wikilink(&mut self, start: usize, open: usize, end: usize) -> usize {
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
    pub(super) fn tag(&mut self, i: usize, end: usize, in_url: bool) -> usize {
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
pub(super) fn find_pair(b: &[u8], from: usize, end: usize, c: u8) -> Option<usize> {
    (from..end.saturating_sub(1)).find(|&k| b[k] == c && b[k + 1] == c)
}

/// Letters and digits of any script, `_`, `-`, `/`, and combining marks (so a decomposed `é` does
/// not end a tag).
pub(super) fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/') || is_combining_mark(c)
}

pub(super) fn is_combining_mark(c: char) -> bool {
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
pub(super) fn may_precede_tag(prev: char) -> bool {
    prev.is_whitespace()
        || !(is_tag_char(prev) || matches!(prev, '#' | '&' | '\\' | ')' | ']' | '}' | '='))
}

/// `target#heading|alias`, `target#^block`, `target^block`, `#heading`; `\|` (a pipe escaped in
/// a table) separates the alias too.
pub(super) fn parse_wikilink(content: &str, embed: bool, span: Range<usize>) -> Option<WikiLink> {
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

pub(super) fn dedup_case_insensitive(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|s| seen.insert(fold_key(s)))
        .collect()
}

/// Case-folded, NFC-normalised form for comparisons (`Café`, `café` and a decomposed `café` agree).
pub(super) fn fold_key(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        s.nfc().collect::<String>().to_lowercase()
    }
}
