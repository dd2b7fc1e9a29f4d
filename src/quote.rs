//! Quoting text from outside vaultchat in what it writes: shortened, and made harmless for a
//! terminal.
//!
//! An error message names what was wrong (`` there is no tool named `serch` ``), but an argument
//! can be any size: a 100 KB path, query or tool name copied back whole would flood a log, a
//! terminal and a model's context with the caller's own input. [`shorten`] keeps the first
//! [`MAX_QUOTED_CHARS`] characters and says how long the whole was; [`shorten_echoes`] applies it
//! to every long quoted span of a finished message, as a net at the boundaries where tool errors
//! leave vaultchat (the tool registry and the agent's tool results).
//!
//! Text from a vault file or a server can also hold characters a terminal obeys rather than shows:
//! an escape sequence that erases a line and prints another, a carriage return, a bidi override
//! that shows `exe.txt` for `txt.exe`, a zero-width character. [`terminal`] is the one function
//! every CLI print of such text goes through: those characters come out as visible `\u{…}`
//! escapes. [`quoted`] adds double quotes (and escapes `"` and `\\`), so each word of a command
//! line reads back exactly, blanks and all.

use std::borrow::Cow;

/// The most characters of one argument a message quotes.
pub const MAX_QUOTED_CHARS: usize = 200;

/// The longest message [`shorten_echoes`] lets through whole, in characters: far above any
/// message vaultchat writes itself, so only a flood of short echoes is ever cut here.
pub const MAX_MESSAGE_CHARS: usize = 16 * 1024;

/// `arg` itself when it has at most [`MAX_QUOTED_CHARS`] characters; otherwise its first
/// [`MAX_QUOTED_CHARS`] characters, an ellipsis and the whole length: `xxxx… (102400 characters)`.
pub fn shorten(arg: &str) -> Cow<'_, str> {
    match arg.char_indices().nth(MAX_QUOTED_CHARS) {
        None => Cow::Borrowed(arg),
        Some((cut, _)) => Cow::Owned(format!(
            "{}… ({} characters)",
            &arg[..cut],
            arg.chars().count()
        )),
    }
}

/// `message` with every echoed argument longer than [`MAX_QUOTED_CHARS`] characters shortened
/// by [`shorten`]: spans between backticks or double quotes, and runs without whitespace (an
/// argument quoted without marks, such as a revision token). A message still longer than
/// [`MAX_MESSAGE_CHARS`] after that is cut there.
pub fn shorten_echoes(message: &str) -> Cow<'_, str> {
    if message.len() <= MAX_QUOTED_CHARS {
        return Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(message.len().min(4 * MAX_QUOTED_CHARS));
    let mut changed = false;
    let mut rest = message;
    while !rest.is_empty() {
        // The next quote mark, and the text before it.
        let mark = rest.find(['`', '"']);
        let (plain, quoted) = match mark {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        changed |= push_words(&mut out, plain);
        if quoted.is_empty() {
            break;
        }
        let mark_char = &quoted[..1];
        let inner = &quoted[1..];
        match inner.find(mark_char) {
            Some(end) => {
                let content = &inner[..end];
                let short = shorten(content);
                changed |= matches!(short, Cow::Owned(_));
                out.push_str(mark_char);
                out.push_str(&short);
                out.push_str(mark_char);
                rest = &inner[end + 1..];
            }
            None => {
                // An unclosed mark: the rest is plain text.
                out.push_str(mark_char);
                changed |= push_words(&mut out, inner);
                break;
            }
        }
    }
    let out = match out.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => {
            changed = true;
            format!(
                "{}… (message cut at {MAX_MESSAGE_CHARS} of {} characters)",
                &out[..cut],
                out.chars().count()
            )
        }
        None => out,
    };
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(message)
    }
}

/// Appends `text`, shortening each run without whitespace that is too long; whether it did.
fn push_words(out: &mut String, text: &str) -> bool {
    let mut changed = false;
    let mut word_start = None;
    for (at, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_whitespace(), word_start) {
            (false, None) => word_start = Some(at),
            (true, Some(start)) => {
                let short = shorten(&text[start..at]);
                changed |= matches!(short, Cow::Owned(_));
                out.push_str(&short);
                word_start = None;
                if at < text.len() {
                    out.push(c);
                }
            }
            (true, None) if at < text.len() => out.push(c),
            _ => {}
        }
    }
    changed
}

/// Whether a terminal would act on `c` (or hide it, or reorder the text around it) rather than
/// show it: control characters (C0, DEL, C1: escapes, carriage returns, newlines, tabs), bidi
/// embeddings, overrides, isolates and marks, zero-width and invisible formatting characters, line
/// and paragraph separators, and tag characters.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// `text` with every character [`is_hidden`] says a terminal would act on written as `\u{…}`
/// (lowercase hex): what comes out shows every character and moves the cursor only forward. The
/// one escaping used wherever the CLI prints text from a vault file, a note, a session or a server.
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

/// [`terminal`] for running text of many lines (a reply, an exported chat, a message that may
/// span lines): the same escaping, but newlines and tabs are kept as they are.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    let hidden = |c: char| c != '\n' && c != '\t' && is_hidden(c);
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` between double quotes, escaped as [`terminal`] does, with `"` and `\\` escaped too: one
/// word of a command line, shown so that it reads back exactly (an empty argument is `""`).
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => push_visible(&mut out, c),
        }
    }
    out.push('"');
    out
}

fn push_visible(out: &mut String, c: char) {
    if is_hidden(c) {
        out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
    } else {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_shows_every_character_a_terminal_would_obey() {
        assert!(matches!(terminal("Projects/Plan é.md"), Cow::Borrowed(_)));
        let attack = "ok\u{1b}[2K\r\u{1b}[1Aharmless\u{202e}txt.exe\u{2066}\u{200b}\n\u{7f}\u{9b}";
        let shown = terminal(attack);
        assert_eq!(
            shown,
            "ok\\u{1b}[2K\\u{d}\\u{1b}[1Aharmless\\u{202e}txt.exe\\u{2066}\\u{200b}\\u{a}\\u{7f}\\u{9b}"
        );
        assert!(shown.chars().all(|c| !is_hidden(c)));
        assert!(shown.is_ascii());
        assert_eq!(terminal_text("a\n\tb\u{1b}[2K\r"), "a\n\tb\\u{1b}[2K\\u{d}");
    }

    #[test]
    fn quoted_words_read_back_exactly() {
        assert_eq!(quoted(""), "\"\"");
        assert_eq!(quoted("a b"), "\"a b\"");
        assert_eq!(
            quoted("say \"hi\" \\ \u{1b}"),
            "\"say \\\"hi\\\" \\\\ \\u{1b}\""
        );
        assert_eq!(quoted("print('x')\nrun()"), "\"print('x')\\u{a}run()\"");
    }

    #[test]
    fn short_arguments_are_kept_and_long_ones_cut_with_their_length() {
        assert!(matches!(
            shorten("Projects/Plan.md"),
            Cow::Borrowed("Projects/Plan.md")
        ));
        let exact = "x".repeat(MAX_QUOTED_CHARS);
        assert_eq!(shorten(&exact), exact);
        let long = "é".repeat(100_000);
        let short = shorten(&long);
        assert_eq!(
            short,
            format!("{}… (100000 characters)", "é".repeat(MAX_QUOTED_CHARS))
        );
    }

    #[test]
    fn echoes_in_a_message_are_shortened_and_the_rest_kept() {
        let big = "x".repeat(100_000);
        let message = format!("there is no tool named `{big}`; available tools: a, b");
        let short = shorten_echoes(&message);
        assert!(short.len() < 400, "{}", short.len());
        assert!(short.starts_with("there is no tool named `xxx"), "{short}");
        assert!(
            short.ends_with("… (100000 characters)`; available tools: a, b"),
            "{short}"
        );
        // serde quotes with double quotes; an unmarked revision token is one long word.
        let message = format!("invalid type: string \"{big}\", expected u32");
        assert!(shorten_echoes(&message).ends_with("(100000 characters)\", expected u32"));
        let message = format!("`a.md` changed since revision {big} (it is now 1-2); read it again");
        let short = shorten_echoes(&message);
        assert!(
            short.starts_with("`a.md` changed since revision xxx"),
            "{short}"
        );
        assert!(
            short.ends_with("(100000 characters) (it is now 1-2); read it again"),
            "{short}"
        );
        // A spaced argument inside quotes is one echo.
        let spaced = "a b ".repeat(1_000);
        let message = format!("no note is named `{spaced}`");
        let short = shorten_echoes(&message);
        assert!(short.len() < 300, "{short}");
    }

    #[test]
    fn ordinary_messages_pass_unchanged() {
        for message in [
            "`../x` leaves the vault: paths are relative to the vault root, like `Projects/Plan.md`",
            "an unclosed ` mark and a \"quote",
            "",
        ] {
            assert!(
                matches!(shorten_echoes(message), Cow::Borrowed(_)),
                "{message}"
            );
        }
        let list = vec!["`Projects/Plan.md`"; 100].join(", ");
        assert!(matches!(shorten_echoes(&list), Cow::Borrowed(_)));
    }

    #[test]
    fn a_flood_of_short_echoes_is_cut_at_the_message_limit() {
        let flood = "`a`".repeat(50_000);
        let short = shorten_echoes(&flood);
        assert!(short.chars().count() < MAX_MESSAGE_CHARS + 100);
        assert!(
            short.ends_with("of 150000 characters)"),
            "{}",
            &short[short.len() - 60..]
        );
    }
}
