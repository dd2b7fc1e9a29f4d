//! Markdown styling for the note editor: a cheap classifier that looks at one line at a time.
//!
//! The editor re-styles the visible lines on every frame, so this must cost next to nothing on a
//! 5,000-line note. It is deliberately not a Markdown parser (and not syntect, which highlights
//! code in the chat): a line's look depends only on the line itself plus a tiny [`BlockState`]
//! carried from the line before (inside a code fence or the frontmatter). Nesting that needs a
//! real parser (setext headings, lazy continuation, HTML) is left unstyled rather than guessed.

use std::ops::Range;

use crate::tui::theme::Role;

/// Where a line stands in the block structure of the note, which the line alone cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BlockState {
    /// Ordinary Markdown.
    #[default]
    Text,
    /// Inside a fenced code block opened by `len` repetitions of `fence` (`` ` `` or `~`).
    Fence {
        /// The fence character.
        fence: char,
        /// How many of them opened the block (a closing fence needs at least as many).
        len: usize,
    },
    /// Inside the YAML frontmatter that opens the note.
    Frontmatter,
}

/// A byte range of a line and the role it is drawn in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StyledRange {
    /// Byte offsets into the line.
    pub bytes: Range<usize>,
    /// How the range looks.
    pub role: Role,
}

/// How one line looks: a role for the whole line (heading, quote, code block), then ranges painted
/// over it in order (a later range wins where they overlap, so `**bold [[link]]**` is bold and a link).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineStyle {
    /// The role of the whole line, under the ranges.
    pub line: Option<Role>,
    /// Ranges in painting order.
    pub ranges: Vec<StyledRange>,
}

/// The block state at the start of line `row` (walks the lines before it; only fences and the
/// frontmatter carry over, so this is a cheap prefix check per line).
pub fn state_at(lines: &[String], row: usize) -> BlockState {
    let mut state = BlockState::Text;
    for (index, line) in lines.iter().take(row).enumerate() {
        state = next_state(line, state, index == 0);
    }
    state
}

/// The block state after `line`, which started in `state`. `first_line` says whether this is the
/// note's first line (only there can `---` open the frontmatter).
pub fn next_state(line: &str, state: BlockState, first_line: bool) -> BlockState {
    match state {
        BlockState::Frontmatter => {
            if is_frontmatter_end(line) {
                BlockState::Text
            } else {
                BlockState::Frontmatter
            }
        }
        BlockState::Fence { fence, len } => {
            if closes_fence(line, fence, len) {
                BlockState::Text
            } else {
                state
            }
        }
        BlockState::Text => {
            if first_line && line.trim_end() == "---" {
                BlockState::Frontmatter
            } else if let Some((fence, len)) = opens_fence(line) {
                BlockState::Fence { fence, len }
            } else {
                BlockState::Text
            }
        }
    }
}

/// Style `line`, which starts in `state`; returns the style and the state after the line.
pub fn highlight_line(line: &str, state: BlockState, first_line: bool) -> (LineStyle, BlockState) {
    let next = next_state(line, state, first_line);
    let style = match state {
        BlockState::Frontmatter => LineStyle {
            line: Some(Role::Dim),
            ranges: Vec::new(),
        },
        BlockState::Fence { .. } => LineStyle {
            line: Some(Role::MdCodeBlock),
            ranges: Vec::new(),
        },
        BlockState::Text => match next {
            // The line opened a fence or the frontmatter.
            BlockState::Fence { .. } => LineStyle {
                line: Some(Role::MdCodeBlock),
                ranges: Vec::new(),
            },
            BlockState::Frontmatter => LineStyle {
                line: Some(Role::Dim),
                ranges: Vec::new(),
            },
            BlockState::Text => text_line(line),
        },
    };
    (style, next)
}

/// Give the `[[wikilinks]]` and `![[embeds]]` of `line` (styled as links in `style`) whose target
/// `resolves` says names nothing the unresolved-link role. The target is what the link opens:
/// before `|` (a table's `\|` too), with the heading or block part left for `resolves`.
pub fn mark_unresolved(line: &str, style: &mut LineStyle, resolves: impl Fn(&str) -> bool) {
    for range in &mut style.ranges {
        if range.role != Role::MdLink {
            continue;
        }
        let Some(text) = line.get(range.bytes.clone()) else {
            continue;
        };
        let Some(inner) = text
            .strip_prefix("![[")
            .or_else(|| text.strip_prefix("[["))
            .and_then(|t| t.strip_suffix("]]"))
        else {
            continue; // a Markdown link or a URL
        };
        let target = inner.split('|').next().unwrap_or("");
        let target = target.strip_suffix('\\').unwrap_or(target);
        if !resolves(target) {
            range.role = Role::MdLinkUnresolved;
        }
    }
}

/// The byte ranges of the `[[wikilinks]]` (and `![[embeds]]`) of a line, brackets included, outside
/// inline code. The editor follows the one under the cursor.
pub fn wikilinks(line: &str) -> Vec<Range<usize>> {
    let mut links = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'`' => i = code_span_end(line, i).unwrap_or(i + run_length(bytes, i, b'`')),
            b'!' if line[i..].starts_with("![[") => match wikilink_end(line, i + 1) {
                Some(end) => {
                    links.push(i..end);
                    i = end;
                }
                None => i += 1,
            },
            b'[' if line[i..].starts_with("[[") => match wikilink_end(line, i) {
                Some(end) => {
                    links.push(i..end);
                    i = end;
                }
                None => i += 2,
            },
            _ => i += 1,
        }
    }
    links
}

/// A line of ordinary Markdown: block markers first, then inline markup.
fn text_line(line: &str) -> LineStyle {
    let mut style = LineStyle::default();
    let indent = line.len() - line.trim_start().len();
    let rest = &line[indent..];

    if is_thematic_break(rest) {
        style.line = Some(Role::Dim);
        return style;
    }
    let mut inline_from = indent;
    if let Some(level) = heading_level(rest) {
        style.line = Some(Role::MdHeading);
        style.ranges.push(StyledRange {
            bytes: indent..indent + level,
            role: Role::MdHeading,
        });
        inline_from = indent + level;
    } else if rest.starts_with('>') {
        style.line = Some(Role::MdQuote);
        let markers = rest
            .bytes()
            .take_while(|b| *b == b'>' || *b == b' ')
            .count();
        inline_from = indent + markers;
        // A list inside a quote still gets its marker styled.
        if let Some(marker) = list_marker(&line[inline_from..]) {
            style.ranges.push(StyledRange {
                bytes: inline_from..inline_from + marker,
                role: Role::MdListMarker,
            });
            inline_from += marker;
        }
    } else if let Some(marker) = list_marker(rest) {
        style.ranges.push(StyledRange {
            bytes: indent..indent + marker,
            role: Role::MdListMarker,
        });
        inline_from = indent + marker;
    }
    inline(line, inline_from, &mut style.ranges);
    style
}

/// `#` to `######` followed by a space or the end of the line: the number of `#`.
fn heading_level(rest: &str) -> Option<usize> {
    let level = rest.bytes().take_while(|b| *b == b'#').count();
    let after = rest.as_bytes().get(level);
    ((1..=6).contains(&level) && matches!(after, None | Some(b' ' | b'\t'))).then_some(level)
}

/// `---`, `***` or `___` (three or more, spaces allowed between).
fn is_thematic_break(rest: &str) -> bool {
    let trimmed = rest.trim_end();
    let Some(first) = trimmed.chars().next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_')
        && trimmed.chars().filter(|c| *c == first).count() >= 3
        && trimmed.chars().all(|c| c == first || c == ' ')
}

/// The length of a list marker at the start of `rest`: `- `, `* `, `+ `, `1. `, `1) `, followed by
/// an optional task box `[ ] ` / `[x] `.
fn list_marker(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    let marker = match bytes.first()? {
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 9 || !matches!(bytes.get(digits), Some(b'.' | b')')) {
                return None;
            }
            digits + 1
        }
        _ => return None,
    };
    match bytes.get(marker) {
        Some(b' ' | b'\t') => {}
        None if marker == 1 => {}
        _ => return None,
    }
    let mut end = (marker + 1).min(bytes.len());
    let after = &rest[end..];
    if after.len() >= 3
        && after.as_bytes()[0] == b'['
        && after.as_bytes()[2] == b']'
        && matches!(after.as_bytes()[1], b' ' | b'x' | b'X' | b'-' | b'/')
    {
        match after.as_bytes().get(3) {
            None => end += 3,
            Some(b' ') => end += 4,
            Some(_) => {}
        }
    }
    Some(end)
}

/// A fence opening: up to any indentation, three or more backticks (without backticks in the info
/// string) or tildes.
fn opens_fence(line: &str) -> Option<(char, usize)> {
    let rest = line.trim_start();
    let fence = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == fence).count();
    if len < 3 {
        return None;
    }
    if fence == '`' && rest[len..].contains('`') {
        return None;
    }
    Some((fence, len))
}

fn closes_fence(line: &str, fence: char, len: usize) -> bool {
    let rest = line.trim();
    !rest.is_empty() && rest.chars().all(|c| c == fence) && rest.chars().count() >= len
}

fn is_frontmatter_end(line: &str) -> bool {
    matches!(line.trim_end(), "---" | "...")
}

/// Inline markup from byte `from` on: code, links, tags and URLs are atomic (nothing inside them
/// is markup); emphasis may span across them and is painted first so they show on top.
fn inline(line: &str, from: usize, out: &mut Vec<StyledRange>) {
    let bytes = line.as_bytes();
    let mut atoms: Vec<StyledRange> = Vec::new();
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        let next = match b {
            b'\\' => i + 2,
            b'`' => match code_span_end(line, i) {
                Some(end) => {
                    atoms.push(range(i..end, Role::MdCode));
                    end
                }
                None => i + run_length(bytes, i, b'`'),
            },
            b'!' if line[i..].starts_with("![[") => {
                link_atom(line, i, wikilink_end(line, i + 1), &mut atoms)
            }
            b'[' if line[i..].starts_with("[[") => {
                link_atom(line, i, wikilink_end(line, i), &mut atoms)
            }
            b'!' if line[i..].starts_with("![") => {
                link_atom(line, i, markdown_link_end(line, i + 1), &mut atoms)
            }
            b'[' => link_atom(line, i, markdown_link_end(line, i), &mut atoms),
            b'#' if starts_word(line, i) => match tag_end(line, i) {
                Some(end) => {
                    atoms.push(range(i..end, Role::MdTag));
                    end
                }
                None => i + 1,
            },
            b'h' if starts_word(line, i)
                && (line[i..].starts_with("https://") || line[i..].starts_with("http://")) =>
            {
                let end = url_end(line, i);
                atoms.push(range(i..end, Role::MdLink));
                end
            }
            _ => i + 1,
        };
        i = next.max(i + 1).min(bytes.len());
    }
    emphasis(line, from, &atoms, out);
    out.extend(atoms);
}

fn range(bytes: Range<usize>, role: Role) -> StyledRange {
    StyledRange { bytes, role }
}

fn link_atom(line: &str, start: usize, end: Option<usize>, atoms: &mut Vec<StyledRange>) -> usize {
    match end {
        Some(end) => {
            atoms.push(range(start..end, Role::MdLink));
            end
        }
        None => start + 1 + usize::from(line[start..].starts_with("![")),
    }
}

fn run_length(bytes: &[u8], at: usize, byte: u8) -> usize {
    bytes[at..].iter().take_while(|b| **b == byte).count()
}

/// The end of a code span opened by the backtick run at `start`: after the next run of the same
/// length.
fn code_span_end(line: &str, start: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    let len = run_length(bytes, start, b'`');
    let mut i = start + len;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = run_length(bytes, i, b'`');
            if run == len {
                return Some(i + run);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

/// The end (after `]]`) of a wikilink whose `[[` is at `start`; the target may not be empty or
/// span another `[[`.
fn wikilink_end(line: &str, start: usize) -> Option<usize> {
    let inner_start = start + 2;
    let close = line[inner_start..].find("]]")?;
    let inner = &line[inner_start..inner_start + close];
    if inner.trim().is_empty() || inner.contains("[[") {
        return None;
    }
    Some(inner_start + close + 2)
}

/// The end of `[text](target)` whose `[` is at `start`.
fn markdown_link_end(line: &str, start: usize) -> Option<usize> {
    let text_end = start + 1 + line[start + 1..].find(']')?;
    let rest = &line[text_end + 1..];
    if !rest.starts_with('(') {
        return None;
    }
    let close = rest.find(')')?;
    Some(text_end + 1 + close + 1)
}

/// Whether byte `at` begins a word: the line start, or after whitespace or an opening bracket.
fn starts_word(line: &str, at: usize) -> bool {
    line[..at]
        .chars()
        .next_back()
        .is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '[' | '{' | '"' | '\''))
}

/// The end of a `#tag` at `start`: letters, digits, `_`, `-`, `/`, with at least one non-digit
/// (Obsidian's rule, so `#1` is not a tag).
fn tag_end(line: &str, start: usize) -> Option<usize> {
    let body = &line[start + 1..];
    let len: usize = body
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
        .map(char::len_utf8)
        .sum();
    let tag = &body[..len];
    (len > 0 && !tag.chars().all(|c| c.is_ascii_digit())).then_some(start + 1 + len)
}

fn url_end(line: &str, start: usize) -> usize {
    let len: usize = line[start..]
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, '<' | '>' | '"'))
        .map(char::len_utf8)
        .sum();
    // Trailing punctuation belongs to the sentence, not the address.
    let url = line[start..start + len].trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    start + url.len()
}

/// `**strong**`, `__strong__`, `*em*`, `_em_`: an opener not followed by a space, the next closer of
/// the same kind not preceded by one; `_` only at word boundaries (so `snake_case` stays plain).
/// Delimiters inside atoms (code, links, tags) do not count.
fn emphasis(line: &str, from: usize, atoms: &[StyledRange], out: &mut Vec<StyledRange>) {
    let bytes = line.as_bytes();
    let inside_atom = |at: usize| atoms.iter().any(|a| a.bytes.contains(&at));
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' {
            i += 2;
            continue;
        }
        if !(b == b'*' || b == b'_') || inside_atom(i) {
            i += 1;
            continue;
        }
        let run = run_length(bytes, i, b);
        let width = if run >= 2 { 2 } else { 1 };
        let role = if width == 2 {
            Role::MdStrong
        } else {
            Role::MdEmphasis
        };
        let opens = bytes
            .get(i + width)
            .is_some_and(|next| !next.is_ascii_whitespace())
            && (b == b'*' || !word_byte_before(line, i));
        if opens && let Some(close) = find_closer(line, i + width, b, width, &inside_atom) {
            out.push(range(i..close + width, role));
            i = close + width;
            continue;
        }
        i += run;
    }
}

fn word_byte_before(line: &str, at: usize) -> bool {
    line[..at]
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric)
}

fn find_closer(
    line: &str,
    from: usize,
    delimiter: u8,
    width: usize,
    inside_atom: &dyn Fn(usize) -> bool,
) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = from;
    while i + width <= bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == delimiter && !inside_atom(i) {
            let run = run_length(bytes, i, delimiter);
            let fits = if width == 2 { run >= 2 } else { run == 1 };
            let after = i + width;
            let closes = fits
                && i > from
                && !bytes[i - 1].is_ascii_whitespace()
                && (delimiter == b'*'
                    || line[after..]
                        .chars()
                        .next()
                        .is_none_or(|c| !c.is_alphanumeric()));
            if closes {
                return Some(i);
            }
            i += run;
            continue;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles_of(line: &str) -> Vec<(&str, Role)> {
        let (style, _) = highlight_line(line, BlockState::Text, false);
        style
            .ranges
            .iter()
            .map(|r| (&line[r.bytes.clone()], r.role))
            .collect()
    }

    #[test]
    fn headings_style_the_whole_line() {
        let (style, _) = highlight_line("## Plans for #q3", BlockState::Text, false);
        assert_eq!(style.line, Some(Role::MdHeading));
        assert_eq!(
            roles_of("## Plans for #q3"),
            vec![("##", Role::MdHeading), ("#q3", Role::MdTag)]
        );
        // No space after the hashes: a tag, not a heading.
        let (style, _) = highlight_line("#tag", BlockState::Text, false);
        assert_eq!(style.line, None);
        assert_eq!(roles_of("#tag"), vec![("#tag", Role::MdTag)]);
        assert_eq!(heading_level("####### seven"), None);
    }

    #[test]
    fn list_markers_and_task_boxes() {
        assert_eq!(
            roles_of("- item"),
            vec![("- ", Role::MdListMarker)],
            "bullet"
        );
        assert_eq!(roles_of("  12. twelve"), vec![("12. ", Role::MdListMarker)]);
        assert_eq!(roles_of("* [x] done"), vec![("* [x] ", Role::MdListMarker)]);
        assert_eq!(roles_of("-no space"), vec![]);
        assert_eq!(roles_of("2024 was a year"), vec![]);
    }

    #[test]
    fn inline_code_hides_markup_inside_it() {
        assert_eq!(
            roles_of("run `**not bold** #nottag` now"),
            vec![("`**not bold** #nottag`", Role::MdCode)]
        );
        assert_eq!(roles_of("``a ` b``"), vec![("``a ` b``", Role::MdCode)]);
        assert_eq!(roles_of("an `unclosed span"), vec![]);
    }

    #[test]
    fn links_wikilinks_embeds_and_urls() {
        assert_eq!(
            roles_of("see [[Plan#Goals|the plan]] and ![[img.png]]"),
            vec![
                ("[[Plan#Goals|the plan]]", Role::MdLink),
                ("![[img.png]]", Role::MdLink)
            ]
        );
        assert_eq!(
            roles_of("[docs](https://x.io) or https://example.com/a."),
            vec![
                ("[docs](https://x.io)", Role::MdLink),
                ("https://example.com/a", Role::MdLink)
            ]
        );
        assert_eq!(roles_of("[[]] and [not a link]"), vec![]);
    }

    #[test]
    fn tags_need_a_word_start_and_a_non_digit() {
        assert_eq!(
            roles_of("#work/project and #日本語 but not a#b or #123"),
            vec![("#work/project", Role::MdTag), ("#日本語", Role::MdTag)]
        );
    }

    #[test]
    fn strong_and_emphasis() {
        assert_eq!(
            roles_of("**bold** and *em* and __b__ and _e_"),
            vec![
                ("**bold**", Role::MdStrong),
                ("*em*", Role::MdEmphasis),
                ("__b__", Role::MdStrong),
                ("_e_", Role::MdEmphasis)
            ]
        );
        assert_eq!(roles_of("snake_case_name"), vec![]);
        assert_eq!(roles_of("2 * 3 * 4"), vec![]);
        assert_eq!(roles_of(r"\*literal\*"), vec![]);
        // Emphasis around a link: both, the link painted last.
        assert_eq!(
            roles_of("**see [[a]]**"),
            vec![("**see [[a]]**", Role::MdStrong), ("[[a]]", Role::MdLink)]
        );
    }

    #[test]
    fn quotes_style_the_line() {
        let (style, _) = highlight_line("> quoted *word*", BlockState::Text, false);
        assert_eq!(style.line, Some(Role::MdQuote));
        assert_eq!(
            roles_of("> quoted *word*"),
            vec![("*word*", Role::MdEmphasis)]
        );
        assert_eq!(roles_of("> - item"), vec![("- ", Role::MdListMarker)]);
    }

    #[test]
    fn fences_carry_state_until_closed() {
        let lines: Vec<String> = ["text", "```rust", "let x = `y`; # not", "```", "after"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(state_at(&lines, 1), BlockState::Text);
        assert_eq!(
            state_at(&lines, 2),
            BlockState::Fence { fence: '`', len: 3 }
        );
        assert_eq!(state_at(&lines, 4), BlockState::Text);
        let (open, _) = highlight_line("```rust", BlockState::Text, false);
        assert_eq!(open.line, Some(Role::MdCodeBlock));
        let (inside, _) = highlight_line("# not a heading", state_at(&lines, 2), false);
        assert_eq!(inside.line, Some(Role::MdCodeBlock));
        assert!(inside.ranges.is_empty());
        // A shorter fence does not close a longer one; tildes close tildes only.
        let state = next_state("````", BlockState::Text, false);
        assert_eq!(next_state("```", state, false), state);
        let tilde = next_state("~~~", BlockState::Text, false);
        assert_eq!(next_state("```", tilde, false), tilde);
        assert_eq!(next_state("~~~", tilde, false), BlockState::Text);
        // Inline code with three backticks and more after it is not a fence.
        assert_eq!(
            next_state("```a``` b", BlockState::Text, false),
            BlockState::Text
        );
    }

    #[test]
    fn frontmatter_only_at_the_top() {
        let lines: Vec<String> = ["---", "tags: [a]", "---", "# Title"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(state_at(&lines, 1), BlockState::Frontmatter);
        assert_eq!(state_at(&lines, 3), BlockState::Text);
        let (inside, _) = highlight_line("tags: [a]", BlockState::Frontmatter, false);
        assert_eq!(inside.line, Some(Role::Dim));
        // Later `---` is a thematic break.
        let (rule, next) = highlight_line("---", BlockState::Text, false);
        assert_eq!(rule.line, Some(Role::Dim));
        assert_eq!(next, BlockState::Text);
    }

    #[test]
    fn wikilinks_are_found_outside_code() {
        let line = "a [[x]] `[[y]]` ![[z|w]] [[]]";
        let found: Vec<&str> = wikilinks(line).into_iter().map(|r| &line[r]).collect();
        assert_eq!(found, vec!["[[x]]", "![[z|w]]"]);
    }

    #[test]
    fn never_panics_on_odd_input() {
        for line in [
            "", "`", "``", "[", "[[", "![", "![[", "#", "*", "**", "_", "\\", "1.", "- [", "> ",
            "é*", "**é", "[é](", "#é", "```", "~~~~ é",
        ] {
            let _ = highlight_line(line, BlockState::Text, true);
            let _ = wikilinks(line);
        }
    }
}
