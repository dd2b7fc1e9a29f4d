//! Fenced code blocks as replace_structured_block sees them: a small line scanner that works on
//! the editor's text as it is (CRLF, BOM) and gives byte ranges into it. `vault::markdown` wants
//! LF-normalised text, and its offsets would then have to be mapped back.

use std::ops::Range;

/// One fenced code block (```` ``` ```` or `~~~`, three or more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FencedBlock {
    /// The info string after the opening fence, trimmed.
    pub info: String,
    /// Byte range of the lines between the fences (the last body line's terminator included);
    /// empty and at the end of the opening fence line when the block has no body.
    pub body: Range<usize>,
    /// Whether the opening fence line ends with a line terminator (a fence on the note's last
    /// line has none, and a body put after it needs one first).
    pub open_line_terminated: bool,
    /// The fence character (`` ` `` or `~`).
    pub fence_char: char,
    /// The opening fence's length; a closing fence is at least this long.
    pub fence_len: usize,
    /// False when the note ends inside the block.
    pub closed: bool,
}

impl FencedBlock {
    /// The first word of the info string (`http` for `http id=login`, `rust` for `rust{.x}`).
    pub fn tag(&self) -> Option<&str> {
        let word = self.info.split_whitespace().next()?;
        let word = word.split('{').next().unwrap_or(word);
        (!word.is_empty()).then_some(word)
    }

    /// Whether `line` would close this block.
    pub fn is_closed_by(&self, line: &str) -> bool {
        closing_fence(line, self.fence_char, self.fence_len)
    }
}

/// Every fenced code block of `text`, in document order.
pub(super) fn fenced_blocks(text: &str) -> Vec<FencedBlock> {
    let mut blocks = Vec::new();
    let mut open: Option<FencedBlock> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        // A BOM is part of the first line's bytes but not of its Markdown.
        let content = if start == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        match open.as_mut() {
            Some(block) => {
                if closing_fence(content, block.fence_char, block.fence_len) {
                    block.body.end = start;
                    block.closed = true;
                    blocks.extend(open.take());
                }
            }
            None => {
                if let Some((fence_char, fence_len, info)) = opening_fence(content) {
                    open = Some(FencedBlock {
                        info,
                        body: pos..pos,
                        open_line_terminated: line.ends_with('\n'),
                        fence_char,
                        fence_len,
                        closed: false,
                    });
                }
            }
        }
    }
    if let Some(mut block) = open {
        block.body.end = text.len();
        blocks.push(block);
    }
    blocks
}

/// CommonMark allows up to three spaces before a fence; more makes it indented code.
fn strip_indent(line: &str) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    (spaces <= 3).then(|| &line[spaces..])
}

/// The fence character, its length and the info string when `line` opens a fenced block.
fn opening_fence(line: &str) -> Option<(char, usize, String)> {
    let rest = strip_indent(line)?;
    let fence_char = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let fence_len = rest.chars().take_while(|c| *c == fence_char).count();
    if fence_len < 3 {
        return None;
    }
    let info = rest[fence_len..].trim();
    // A backtick in a backtick fence's info string makes the line inline code, not a fence.
    if fence_char == '`' && info.contains('`') {
        return None;
    }
    Some((fence_char, fence_len, info.to_string()))
}

fn closing_fence(line: &str, fence_char: char, fence_len: usize) -> bool {
    let Some(rest) = strip_indent(line) else {
        return false;
    };
    let run = rest.chars().take_while(|c| *c == fence_char).count();
    run >= fence_len && rest[run..].trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn finds_blocks_with_their_info_and_body() {
        let text = "intro\n```http id=login\nGET /\n\nHost: x\n```\n~~~~\nplain\n~~~~\n";
        let blocks = fenced_blocks(text);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].info, "http id=login");
        assert_eq!(blocks[0].tag(), Some("http"));
        assert_eq!(&text[blocks[0].body.clone()], "GET /\n\nHost: x\n");
        assert!(blocks[0].closed);
        assert_eq!(blocks[1].tag(), None);
        assert_eq!((blocks[1].fence_char, blocks[1].fence_len), ('~', 4));
        assert_eq!(&text[blocks[1].body.clone()], "plain\n");
    }

    #[test]
    fn closing_fence_must_match_char_and_be_long_enough() {
        let text = "````md\n```\n~~~~\n````\n";
        let blocks = fenced_blocks(text);
        assert_eq!(blocks.len(), 1);
        assert_eq!(&text[blocks[0].body.clone()], "```\n~~~~\n");
        assert!(blocks[0].is_closed_by("`````\n"));
        assert!(!blocks[0].is_closed_by("```\n"));
        assert!(!blocks[0].is_closed_by("```` x\n"));
    }

    #[test]
    fn crlf_bom_and_unclosed_blocks() {
        let text = "\u{feff}```sql\r\nselect 1;\r\n```\r\n```rust{.x}\r\nfn main() {}";
        let blocks = fenced_blocks(text);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].info, "sql");
        assert_eq!(&text[blocks[0].body.clone()], "select 1;\r\n");
        assert_eq!(blocks[1].tag(), Some("rust"));
        assert!(!blocks[1].closed);
        assert_eq!(&text[blocks[1].body.clone()], "fn main() {}");
    }

    #[test]
    fn not_fences() {
        // Too short, indented four spaces, inline code.
        assert!(fenced_blocks("``x``\n    ```\ncode\n```a`b\n").is_empty());
        // A fence on the last line without a newline opens an empty block.
        let blocks = fenced_blocks("text\n```http");
        assert_eq!(blocks.len(), 1);
        assert!(!blocks[0].open_line_terminated);
        assert_eq!(blocks[0].body, 12..12);
    }
}
