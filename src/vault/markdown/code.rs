//! Fenced code blocks and their info strings.

use super::*;

pub(super) fn code_block(text: &str, span: Range<usize>, lines: &LineIndex) -> CodeBlock {
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
pub(super) fn is_closing_fence(line: &str, ch: u8, len: usize) -> bool {
    let t = line.trim_start_matches([' ', '\t', '>']);
    let run = t.bytes().take_while(|&c| c == ch).count();
    run >= len && t[run..].trim().is_empty()
}

/// The fence character and length when `line` opens a fenced code block. Any indentation is
/// accepted: inside list items fences are indented, and [`paragraphs`] only needs to know that blank
/// lines that follow do not end the block.
pub(super) fn opening_fence(line: &str) -> Option<(u8, usize)> {
    let t = line.trim_start_matches([' ', '\t', '>']);
    let ch = *t.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let run = t.bytes().take_while(|&c| c == ch).count();
    // A backtick fence's info string cannot contain backticks (that would be inline code).
    (run >= 3 && !(ch == b'`' && t[run..].contains('`'))).then_some((ch, run))
}

pub(super) struct InfoToken {
    pub(super) text: String,
    /// Byte offset in `text` of the first `=` outside quotes.
    pub(super) eq: Option<usize>,
    pub(super) in_braces: bool,
}

/// Splits an info string into words; quotes group (`key="a b"` is one word `key=a b`), braces
/// separate (`lang{.x}` is `lang` and `.x`).
pub(super) fn info_tokens(info: &str) -> Vec<InfoToken> {
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

pub(super) type InfoParts = (Option<String>, Vec<(String, String)>, Option<String>);

/// Language, attributes and id of an info string such as `http id=login env="dev box" verbose` or
/// `{#login .http key=v}`.
pub(super) fn parse_info(info: &str) -> InfoParts {
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
