//! Frontmatter: finding, parsing and rewriting the YAML block at the top of a note.

use super::*;

/// Where a frontmatter block is: `content` is the YAML between the fences, `whole` the block with
/// both fence lines and the newline after the closing one.
pub(super) struct FrontmatterBounds {
    pub(super) content: Range<usize>,
    pub(super) whole: Range<usize>,
}

/// A block only counts at byte 0, opened by `---` alone on the first line and closed by `---` or
/// `...` alone on a later line; an unclosed block is body text (Obsidian renders it as a rule).
pub(super) fn frontmatter_bounds(text: &str) -> Option<FrontmatterBounds> {
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

pub(super) fn parse_frontmatter(text: &str) -> Option<Frontmatter> {
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
pub(super) fn find_field<'f>(
    fields: &'f [FrontmatterField],
    key: &str,
) -> Option<&'f FrontmatterField> {
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

pub(super) fn parse_fields(text: &str, content: Range<usize>) -> Vec<FrontmatterField> {
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

pub(super) struct KeyLine {
    pub(super) key: String,
    /// Length of the key as written (quotes included), before the colon.
    pub(super) written_len: usize,
    /// Offset of the value, just after the colon.
    pub(super) value_offset: usize,
}

/// Splits `key: value` at the first colon followed by a space, a tab or the end of the line (a
/// plain key may itself contain `:` as in `a:b: c`). Lines that are not top-level keys give None.
pub(super) fn split_key(line: &str) -> Option<KeyLine> {
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

pub(super) fn is_block_item(line: &str) -> bool {
    let t = line.trim_start();
    t == "-" || t.starts_with("- ") || t.starts_with("-\t")
}

pub(super) fn parse_value(inline: &str, continuation: &[&str]) -> FrontmatterValue {
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
pub(super) fn fold_lines<'s>(first: impl Iterator<Item = &'s str>, rest: &[&'s str]) -> String {
    let parts: Vec<&str> = first.chain(rest.iter().map(|l| l.trim())).collect();
    parts.join(" ")
}

pub(super) fn plain_scalar(s: &str) -> FrontmatterValue {
    let s = strip_comment(s);
    match s {
        "" | "~" | "null" | "Null" | "NULL" => FrontmatterValue::Null,
        _ => FrontmatterValue::Scalar(s.to_owned()),
    }
}

/// Removes a YAML comment (`#` at the start or after whitespace) from a plain value.
pub(super) fn strip_comment(s: &str) -> &str {
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
pub(super) fn looks_like_mapping(s: &str) -> bool {
    let s = strip_comment(s);
    !s.starts_with(['"', '\'']) && (s.contains(": ") || s.contains(":\t") || s.ends_with(':'))
}

pub(super) fn parse_block_list(lines: &[&str]) -> FrontmatterValue {
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
pub(super) fn parse_flow_list(s: &str) -> Option<Vec<String>> {
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
pub(super) fn unquote(s: &str) -> Option<(String, &str)> {
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
pub(super) fn block_scalar(indicator: &str, continuation: &[&str]) -> String {
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

pub(super) fn non_empty(s: &str) -> Option<String> {
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
pub(super) fn render_list(key: &str, values: &[String], block_indent: Option<&str>) -> String {
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
pub(super) fn yaml_scalar(v: &str) -> Cow<'_, str> {
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
pub(super) fn needs_quotes(v: &str) -> bool {
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
