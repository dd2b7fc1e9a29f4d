//! A command's prompt made from its file and what was typed.
//!
//! Placeholders are `{{…}}`: `{{note}}` (the open note's path), `{{selection}}` (its selected
//! text), `{{args}}` (everything after the name), `{{1}}`, `{{2}}`… and the names the file's
//! `arguments` give (the same parts: the last one takes the rest of the line), `{{date}}`
//! (today, `YYYY-MM-DD`, UTC as every date vaultchat shows) and `{{date:FORMAT}}` (strftime's
//! `%Y %m %d %H %M %S %y %B %b %A %a %j %%`), and `{{tag:x}}` (the notes tagged `x`, one path a
//! line). `$ARGUMENTS` and `$1`…`$9` work too, as in a `.claude/commands` file. A `[[Note]]` is
//! left as written: the chat pulls linked notes into the message as it does for typed text.
//! Anything else in braces is an error that names it: a typo must not reach the model silently.

use super::file::CommandFile;

/// The most notes one `{{tag:x}}` lists.
pub const MAX_TAGGED_NOTES: usize = 200;

/// What a command was run with.
#[derive(Debug, Clone, Default)]
pub struct Invocation<'a> {
    /// Everything typed after the name.
    pub args: &'a str,
    /// The open note's vault-relative path.
    pub note: Option<&'a str>,
    /// The selected text of the open note.
    pub selection: Option<&'a str>,
    /// Now, in Unix milliseconds ([`crate::time::now_ms`]).
    pub now_ms: i64,
}

/// Why a prompt could not be made; each message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("{}", unknown_message(.0))]
    Unknown(Vec<String>),
    #[error("missing argument{}: {}", if .missing.len() == 1 { "" } else { "s" }, crate::quote::terminal(&.missing.join(" ")))]
    MissingArguments { missing: Vec<String>, usage: String },
    #[error("this command uses the open note ({{{{note}}}}); open a note first")]
    NoNote,
    #[error("this command uses the selected text ({{{{selection}}}}); select some text first")]
    NoSelection,
    #[error("{{{{date:{}}}}}: {}", crate::quote::terminal(.format), crate::quote::terminal(.problem))]
    DateFormat { format: String, problem: String },
    #[error("{{{{tag:{}}}}}: {}", crate::quote::terminal(.tag), crate::quote::terminal(.problem))]
    Tag { tag: String, problem: String },
}

fn unknown_message(names: &[String]) -> String {
    format!(
        "unknown placeholder{} {}: the placeholders are {{{{note}}}}, {{{{selection}}}}, {{{{args}}}}, {{{{1}}}}…, the names in `arguments`, {{{{date}}}}, {{{{date:FORMAT}}}} and {{{{tag:NAME}}}}",
        if names.len() == 1 { "" } else { "s" },
        names
            .iter()
            .map(|p| format!("{{{{{}}}}}", crate::quote::terminal(p)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Split what was typed into words: spaces separate, `"…"` and `'…'` keep spaces together.
pub fn split_args(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The parts the numbered and named placeholders refer to: with declared `arguments`, that many
/// parts, the last taking the rest of the line as typed; without, one per word.
fn parts(file: &CommandFile, args: &str) -> Vec<String> {
    let words = split_args(args);
    let declared = file.arguments.len();
    if declared == 0 || words.len() <= declared {
        return words;
    }
    let mut parts: Vec<String> = words[..declared - 1].to_vec();
    // The rest of the line as typed, after the words already taken.
    let mut rest = args.trim();
    for _ in 0..declared - 1 {
        rest = skip_word(rest);
    }
    parts.push(unquote(rest.trim()));
    parts
}

/// `text` after its first word (quotes respected).
fn skip_word(text: &str) -> &str {
    let mut quote: Option<char> = None;
    for (at, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, c) if c.is_whitespace() => return text[at..].trim_start(),
            (None, _) => {}
        }
    }
    ""
}

/// A whole rest of the line in one pair of quotes loses them.
fn unquote(text: &str) -> String {
    let words = split_args(text);
    if words.len() == 1 && (text.starts_with('"') || text.starts_with('\'')) {
        return words[0].clone();
    }
    text.to_string()
}

/// The prompt of `file` run as `invocation`. `tagged` lists the notes with a tag (the index's
/// answer; past [`MAX_TAGGED_NOTES`] the list says there are more).
pub fn expand(
    file: &CommandFile,
    invocation: &Invocation<'_>,
    tagged: &mut dyn FnMut(&str) -> Result<Vec<String>, String>,
) -> Result<String, ExpandError> {
    let parts = parts(file, invocation.args);
    let body = file.body.as_str();
    let mut out = String::with_capacity(body.len());
    let mut unknown: Vec<String> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    // One pass over the file's text: `$ARGUMENTS`, `$1`… and `{{…}}` are found in it and what
    // replaces them is never read again, so braces typed in the arguments stay as typed.
    let mut rest = body;
    // Where the next `{{` and the next `$` are in `rest`, kept while `rest` has not reached them
    // (`None`: no more ahead, or no placeholder can close any more), so the text is searched
    // once for each: linear in the file's size.
    let mut brace: Option<usize> = rest.find("{{");
    let mut dollar: Option<usize> = rest.find('$');
    // A position found before `rest` moved on by `moved` bytes; searched again when passed.
    let ahead = |found: Option<usize>, moved: usize, rest: &str, what: &str| match found {
        Some(at) if at >= moved => Some(at - moved),
        Some(_) => rest.find(what),
        None => None,
    };
    loop {
        let (at, is_brace) = match (brace, dollar) {
            (None, None) => break,
            (Some(b), Some(d)) if d < b => (d, false),
            (Some(b), _) => (b, true),
            (None, Some(d)) => (d, false),
        };
        out.push_str(&rest[..at]);
        let before = rest.len();
        if !is_brace {
            rest = dollar_argument(&rest[at + 1..], invocation.args.trim(), &parts, &mut out);
            let moved = before - rest.len();
            brace = ahead(brace, moved, rest, "{{");
            dollar = rest.find('$');
            continue;
        }
        let Some(close) = rest[at + 2..].find("}}") else {
            // No placeholder can close after this: the rest is text (and `$` words).
            brace = None;
            out.push_str("{{");
            rest = &rest[at + 2..];
            dollar = ahead(dollar, at + 2, rest, "$");
            continue;
        };
        let inner = rest[at + 2..at + 2 + close].trim();
        rest = &rest[at + 4 + close..];
        brace = rest.find("{{");
        dollar = ahead(dollar, before - rest.len(), rest, "$");
        match inner {
            "note" => out.push_str(invocation.note.ok_or(ExpandError::NoNote)?),
            "selection" => out.push_str(
                invocation
                    .selection
                    .filter(|s| !s.is_empty())
                    .ok_or(ExpandError::NoSelection)?,
            ),
            "args" => out.push_str(invocation.args.trim()),
            "date" => out.push_str(&crate::time::format_day(invocation.now_ms)),
            _ => {
                if let Some(format) = inner.strip_prefix("date:") {
                    out.push_str(&format_date(invocation.now_ms, format)?);
                } else if let Some(tag) = inner.strip_prefix("tag:") {
                    out.push_str(&tag_list(tag.trim(), tagged)?);
                } else if let Some(index) = argument_index(file, inner) {
                    match parts.get(index) {
                        Some(part) => out.push_str(part),
                        None => {
                            let name = file
                                .arguments
                                .get(index)
                                .map_or_else(|| format!("<{}>", index + 1), |n| format!("<{n}>"));
                            if !missing.contains(&name) {
                                missing.push(name);
                            }
                        }
                    }
                } else if !unknown.iter().any(|u| u == inner) {
                    unknown.push(inner.to_string());
                }
            }
        }
    }
    out.push_str(rest);
    if !unknown.is_empty() {
        return Err(ExpandError::Unknown(unknown));
    }
    if !missing.is_empty() {
        return Err(ExpandError::MissingArguments {
            missing,
            usage: file.hint(),
        });
    }
    Ok(out)
}

/// `{{1}}` (1-based) or a declared name → the part's index.
fn argument_index(file: &CommandFile, inner: &str) -> Option<usize> {
    if let Ok(n) = inner.parse::<usize>() {
        return n.checked_sub(1);
    }
    file.arguments.iter().position(|a| a == inner)
}

/// After a `$` of the file's text (`after`): `ARGUMENTS` or a digit 1–9 of a `.claude/commands`
/// file is replaced in `out`, anything else keeps its `$`. Returns the text after it.
fn dollar_argument<'t>(after: &'t str, args: &str, parts: &[String], out: &mut String) -> &'t str {
    if let Some(tail) = after.strip_prefix("ARGUMENTS") {
        out.push_str(args);
        return tail;
    }
    if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
        let index = (digit as usize) - ('1' as usize);
        out.push_str(parts.get(index).map_or("", String::as_str));
        return &after[1..];
    }
    out.push('$');
    after
}

fn tag_list(
    tag: &str,
    tagged: &mut dyn FnMut(&str) -> Result<Vec<String>, String>,
) -> Result<String, ExpandError> {
    let tag = tag.trim_start_matches('#');
    if tag.is_empty() {
        return Err(ExpandError::Tag {
            tag: String::new(),
            problem: "name a tag, as {{tag:project}}".to_string(),
        });
    }
    let notes = tagged(tag).map_err(|problem| ExpandError::Tag {
        tag: tag.to_string(),
        problem,
    })?;
    if notes.is_empty() {
        return Ok(format!("(no note is tagged #{tag})"));
    }
    let mut lines: Vec<String> = notes
        .iter()
        .take(MAX_TAGGED_NOTES)
        .map(|n| format!("- {n}"))
        .collect();
    if notes.len() > MAX_TAGGED_NOTES {
        lines.push(format!(
            "- … (more notes are tagged #{tag}; the first {MAX_TAGGED_NOTES} are listed)"
        ));
    }
    Ok(lines.join("\n"))
}

/// `now_ms` as `format` says, in UTC.
fn format_date(now_ms: i64, format: &str) -> Result<String, ExpandError> {
    let bad = |problem: String| ExpandError::DateFormat {
        format: format.to_string(),
        problem,
    };
    let at = ::time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_ms) * 1_000_000)
        .map_err(|e| bad(e.to_string()))?;
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else {
            return Err(bad("it ends with a lone %".to_string()));
        };
        let month = at.month();
        let weekday = at.weekday();
        match spec {
            'Y' => out.push_str(&at.year().to_string()),
            'y' => out.push_str(&format!("{:02}", at.year().rem_euclid(100))),
            'm' => out.push_str(&format!("{:02}", u8::from(month))),
            'd' => out.push_str(&format!("{:02}", at.day())),
            'H' => out.push_str(&format!("{:02}", at.hour())),
            'M' => out.push_str(&format!("{:02}", at.minute())),
            'S' => out.push_str(&format!("{:02}", at.second())),
            'j' => out.push_str(&format!("{:03}", at.ordinal())),
            'B' => out.push_str(&month.to_string()),
            'b' => out.push_str(&month.to_string()[..3]),
            'A' => out.push_str(&weekday.to_string()),
            'a' => out.push_str(&weekday.to_string()[..3]),
            '%' => out.push('%'),
            other => {
                return Err(bad(format!(
                    "%{other} is not known; use %Y %m %d %H %M %S %y %B %b %A %a %j or %%"
                )));
            }
        }
    }
    Ok(out)
}
