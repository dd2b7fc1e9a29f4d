//! Finding a passage a model quoted in a note (docs/tools.md, "How quoted text is found"): the
//! one matcher behind `update_note`'s `find` and the session tools' anchors.
//!
//! Models quote prose the way it reads, not the way it is stored: a paragraph hard-wrapped at 72
//! columns comes back as one line, curly quotes come back straight, two spaces after a full stop
//! come back as one, the two trailing spaces of a Markdown hard break and no-break spaces are lost,
//! an accent written decomposed comes back composed. So a quote is looked for twice:
//!
//! 1. exactly, byte for byte;
//! 2. only when that finds nothing, *normalised*: every run of whitespace (spaces, tabs, line
//!    breaks, no-break and other Unicode spaces) as one space, curly and straight quotes as one
//!    (‘ ’ ‚ ‛ ′ as ', “ ” „ ‟ ″ as "), and both sides in Unicode NFC. A normalised match is
//!    mapped back to the exact bytes of the note it covers, so a change replaces precisely that
//!    text, and it is used only when it is the one normalised match: an ambiguous one is refused.
//!
//! Nothing looser than that is ever matched: a quote with a changed word is not found, and the
//! failure quotes the passages of the note most like it (with line numbers) so the model can
//! retry with the text as it is.

use std::collections::HashSet;
use std::ops::Range;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// How many near misses a failure quotes.
pub const MAX_CANDIDATES: usize = 3;
/// A quoted candidate is cut to this many characters (under the 200 that tool errors let
/// through whole: `crate::quote::MAX_QUOTED_CHARS`, escapes included).
const CANDIDATE_CHARS: usize = 170;
/// A candidate window spans at most this many lines.
const MAX_WINDOW_LINES: usize = 12;
/// At most this many match locations are listed in an error.
const MAX_LISTED: usize = 10;

/// Where a quote was found: byte ranges of the note, in text order, never overlapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub ranges: Vec<Range<usize>>,
    /// Found only once whitespace, quotes and Unicode were normalised.
    pub normalised: bool,
}

/// A passage of the note quoted in a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// 1-based line numbers of the passage's first and last line.
    pub first_line: usize,
    pub last_line: usize,
    /// The passage as the note has it (cut to a bounded length).
    pub text: String,
}

/// Why a quote does not name the place (or places) asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// The quote is empty (or only whitespace).
    Empty,
    /// Not in the note, not even normalised: the passages most like it, best first.
    NotFound { candidates: Vec<Candidate> },
    /// Found exactly, but not as many times as expected; the 1-based lines of the matches.
    Count {
        found: usize,
        expected: usize,
        lines: Vec<usize>,
    },
    /// Not found exactly, and normalised it matches several places (or expected several
    /// matches: a normalised match stands only alone); their 1-based lines.
    Ambiguous { lines: Vec<usize>, expected: usize },
}

impl Miss {
    /// The failure as a message for the model; `what` names the quote (`` `anchor` ``,
    /// `` `edits[2].find` ``).
    pub fn describe(&self, what: &str) -> String {
        match self {
            Miss::Empty => format!(
                "{what} is empty; quote a few words of the note exactly as they are written there"
            ),
            Miss::NotFound { candidates } => {
                let mut message = format!(
                    "{what} was not found in the note, not even with whitespace, quotes and Unicode normalised; \
                     copy the passage exactly as the note has it (read_note shows it) and retry."
                );
                if candidates.is_empty() {
                    message.push_str(" No passage of the note resembles it.");
                } else {
                    message.push_str(" The closest passages are:");
                    for c in candidates {
                        message.push('\n');
                        message.push_str(&lines_label(c.first_line, c.last_line));
                        message.push_str(&format!(": {:?}", c.text));
                    }
                }
                message
            }
            Miss::Count {
                found,
                expected,
                lines,
            } => {
                let advice = if found > expected {
                    "quote more of the surrounding text to make it unique, or set expected_matches to the number of places to change"
                } else {
                    "set expected_matches to the number of places, or quote the text differently"
                };
                format!(
                    "{what} occurs {found} time(s) (at {}), expected {expected}; {advice}",
                    list_lines(lines)
                )
            }
            Miss::Ambiguous { lines, expected } => {
                let why = if *expected == 1 {
                    "a match found only with whitespace, quotes and Unicode normalised is used only when it is unique"
                } else {
                    "a match found only with whitespace, quotes and Unicode normalised is used only alone (expected_matches 1)"
                };
                format!(
                    "{what} is not in the note exactly, and normalised it matches {} places ({}); {why}: \
                     quote more of the surrounding text, exactly as the note has it",
                    lines.len(),
                    list_lines(lines)
                )
            }
        }
    }
}

fn lines_label(first: usize, last: usize) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

/// "line 3", "lines 3 and 9", "lines 3, 9 and 12" (at most [`MAX_LISTED`], then "…").
fn list_lines(lines: &[usize]) -> String {
    let mut lines = lines.to_vec();
    lines.dedup();
    let shown: Vec<String> = lines
        .iter()
        .take(MAX_LISTED)
        .map(usize::to_string)
        .collect();
    let more = if lines.len() > MAX_LISTED { " …" } else { "" };
    match shown.as_slice() {
        [] => "no line".into(),
        [one] => format!("line {one}{more}"),
        [init @ .., last] => format!("lines {} and {last}{more}", init.join(", ")),
    }
}

/// The places `quote` names in `text`, `expected` of them: the exact, non-overlapping
/// occurrences when there are any; else the one normalised match. `Err` says why not.
pub fn locate(text: &str, quote: &str, expected: usize) -> Result<Located, Miss> {
    if quote.trim().is_empty() {
        return Err(Miss::Empty);
    }
    let exact: Vec<Range<usize>> = text
        .match_indices(quote)
        .map(|(at, m)| at..at + m.len())
        .filter(|range| whole_characters(text, range))
        .collect();
    if !exact.is_empty() {
        if exact.len() == expected {
            return Ok(Located {
                ranges: exact,
                normalised: false,
            });
        }
        return Err(Miss::Count {
            found: exact.len(),
            expected,
            lines: exact.iter().map(|r| line_of(text, r.start)).collect(),
        });
    }
    match normalised_matches(text, quote).as_slice() {
        [] => Err(Miss::NotFound {
            candidates: closest(text, quote),
        }),
        [one] if expected == 1 => Ok(Located {
            ranges: vec![one.clone()],
            normalised: true,
        }),
        several => Err(Miss::Ambiguous {
            lines: several.iter().map(|r| line_of(text, r.start)).collect(),
            expected,
        }),
    }
}

/// Every exact occurrence of `quote`, overlapping ones included, in text order.
pub fn exact_matches(text: &str, quote: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    if quote.is_empty() {
        return found;
    }
    let mut from = 0;
    while let Some(offset) = text[from..].find(quote) {
        let start = from + offset;
        if whole_characters(text, &(start..start + quote.len())) {
            found.push(start..start + quote.len());
        }
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// Whether `range` covers whole characters of `text` as a reader sees them: it neither starts
/// with nor is followed by a combining mark (`cafe` is not the start of a decomposed `café`).
fn whole_characters(text: &str, range: &Range<usize>) -> bool {
    let combining = |c: Option<char>| c.is_some_and(|c| canonical_combining_class(c) != 0);
    !combining(text[range.start..].chars().next()) && !combining(text[range.end..].chars().next())
}

/// The 1-based line of byte `at`.
pub fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A text in normalised form, each character remembering which bytes of the original it came
/// from.
#[derive(Default)]
struct Folded {
    text: String,
    /// Byte offset in `text` of each folded character.
    at: Vec<usize>,
    /// The original bytes each folded character stands for.
    origin: Vec<Range<usize>>,
}

/// Whitespace runs → one space, curly quotes → straight, NFC. NFC runs per starter and its
/// combining marks, so every folded character traces back to whole characters of the original.
fn fold(text: &str) -> Folded {
    let mut folded = Folded::default();
    let mut in_space = false;
    for segment in segments(text) {
        for c in text[segment.clone()].nfc() {
            let c = straight_quote(c);
            if c.is_whitespace() {
                if in_space {
                    if let Some(last) = folded.origin.last_mut() {
                        last.end = segment.end;
                    }
                    continue;
                }
                in_space = true;
                folded.at.push(folded.text.len());
                folded.text.push(' ');
            } else {
                in_space = false;
                folded.at.push(folded.text.len());
                folded.text.push(c);
            }
            folded.origin.push(segment.clone());
        }
    }
    folded
}

/// Byte ranges of a starter character followed by its combining marks.
fn segments(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        match out.last_mut() {
            Some(last) if canonical_combining_class(c) != 0 => last.end = end,
            _ => out.push(at..end),
        }
    }
    out
}

fn straight_quote(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
        _ => c,
    }
}

/// Matches of the normalised quote in the normalised text (overlapping ones included), as byte
/// ranges of the original text. Whitespace at the quote's edges is dropped; a match must start
/// and end on whole characters of the note (never half of a letter with its accent).
pub fn normalised_matches(text: &str, quote: &str) -> Vec<Range<usize>> {
    let haystack = fold(text);
    let needle = fold(quote.trim()).text;
    if needle.is_empty() {
        return Vec::new();
    }
    let needle_chars = needle.chars().count();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = haystack.text[from..].find(needle.as_str()) {
        let byte = from + offset;
        from = byte
            + haystack.text[byte..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
        let Ok(first) = haystack.at.binary_search(&byte) else {
            continue;
        };
        let last = first + needle_chars - 1;
        let (Some(start), Some(end)) = (haystack.origin.get(first), haystack.origin.get(last))
        else {
            continue;
        };
        let whole_start = first == 0 || haystack.origin[first - 1] != *start;
        let whole_end = haystack.origin.get(last + 1) != Some(end);
        if whole_start && whole_end {
            found.push(start.start..end.end);
        }
    }
    found
}

/// Up to [`MAX_CANDIDATES`] passages of `text` most like `quote`, best first: windows of whole
/// lines about as long as the quote (a paragraph wrapped over several lines, for a quote that
/// re-flowed it into one), ranked by how much of the quote they hold (character pairs, so every
/// script ranks alike: CJK text has no spaces between words), less for what they hold beyond it.
pub fn closest(text: &str, quote: &str) -> Vec<Candidate> {
    let quote = quote.trim();
    let quote_chars = quote.chars().count().max(1);
    let quote_lines = quote.lines().count().max(1);
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches('\u{feff}'))
        .collect();
    let quote_grams = bigrams(quote);
    if quote_grams.is_empty() {
        return Vec::new();
    }
    let mut ranked: Vec<(f32, usize, usize)> = Vec::new();
    for i in (0..lines.len()).filter(|&i| !lines[i].trim().is_empty()) {
        let mut end = i + 1;
        let mut chars = lines[i].chars().count();
        while end < lines.len()
            && end - i < MAX_WINDOW_LINES
            && (end - i < quote_lines || chars < quote_chars)
            && !lines[end].trim().is_empty()
        {
            chars += 1 + lines[end].chars().count();
            end += 1;
        }
        // The quote may start in the middle of a line: the window one line longer too.
        let longer = (end < lines.len() && !lines[end].trim().is_empty()).then_some(end + 1);
        for end in std::iter::once(end).chain(longer) {
            let window = lines[i..end].join("\n");
            let held = quote_grams.intersection(&bigrams(&window)).count() as f32
                / quote_grams.len() as f32;
            if held > 0.0 {
                let length = window.chars().count() as f32 / quote_chars as f32;
                ranked.push((held - 0.1 * (length - 1.0).max(0.0), i, end));
            }
        }
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<Candidate> = Vec::new();
    for (_, i, end) in ranked {
        // Overlapping windows quote the same passage twice: keep the better one.
        if out.iter().any(|c| i < c.last_line && c.first_line <= end) {
            continue;
        }
        out.push(Candidate {
            first_line: i + 1,
            last_line: end,
            text: shorten(lines[i..end].join("\n").trim()),
        });
        if out.len() == MAX_CANDIDATES {
            break;
        }
    }
    out
}

fn bigrams(s: &str) -> HashSet<(char, char)> {
    let chars: Vec<char> = fold(s).text.chars().flat_map(char::to_lowercase).collect();
    chars.windows(2).map(|w| (w[0], w[1])).collect()
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= CANDIDATE_CHARS {
        return s.to_string();
    }
    let mut cut: String = s.chars().take(CANDIDATE_CHARS).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn located(text: &str, quote: &str) -> String {
        let found = locate(text, quote, 1).unwrap();
        assert_eq!(found.ranges.len(), 1);
        text[found.ranges[0].clone()].to_string()
    }

    #[test]
    fn exact_wins_and_counts_non_overlapping() {
        let text = "a “b” c\na \"b\" c\n";
        let found = locate(text, "a \"b\" c", 1).unwrap();
        assert!(!found.normalised);
        assert_eq!(&text[found.ranges[0].clone()], "a \"b\" c");
        assert_eq!(
            locate("xx xx xx", "xx", 2).unwrap_err(),
            Miss::Count {
                found: 3,
                expected: 2,
                lines: vec![1, 1, 1]
            }
        );
    }

    #[test]
    fn normalised_match_maps_back_to_the_exact_bytes() {
        let text = "Intro.\nShe said “bonjour  à\n tous” and left.  \nTail\u{a0}end.";
        assert_eq!(
            located(text, "said \"bonjour à tous\" and"),
            "said “bonjour  à\n tous” and"
        );
        assert_eq!(located(text, "left. Tail end."), "left.  \nTail\u{a0}end.");
        // Decomposed in the note, composed in the quote, and the other way round.
        let text = "Le cafe\u{301} est pre\u{302}t. Un thé.";
        assert_eq!(
            located(text, "café est prêt"),
            "cafe\u{301} est pre\u{302}t"
        );
        assert_eq!(located(text, "the\u{301}"), "thé");
    }

    #[test]
    fn no_compatibility_folding_and_no_half_characters() {
        // NFC, not NFKC: a ligature or a full-width letter is a different character.
        assert!(matches!(
            locate("The ﬁnal word here.", "final word", 1),
            Err(Miss::NotFound { .. })
        ));
        // `e` does not match the first half of a decomposed `é`.
        assert!(matches!(
            locate("cafe\u{301} noir", "cafe", 1),
            Err(Miss::NotFound { .. })
        ));
        // q + acute has no composed form: it is still one character of the note.
        assert!(matches!(
            locate("q\u{301} x", "q x", 1),
            Err(Miss::NotFound { .. })
        ));
    }

    #[test]
    fn ambiguous_normalised_matches_are_refused_with_their_lines() {
        let text = "Check the “backup”.\nCheck the \"backup\" .\nCheck the ‘backup’.\n";
        // Single quotes match single quotes only: one place.
        assert_eq!(
            located(text, "Check the \u{2019}backup\u{2019}."),
            "Check the ‘backup’."
        );
        let text = "one  two\none two\n";
        let miss = locate(text, "one\ttwo", 1).unwrap_err();
        assert_eq!(
            miss,
            Miss::Ambiguous {
                lines: vec![1, 2],
                expected: 1
            }
        );
        assert!(miss.describe("`find`").contains("2 places (lines 1 and 2)"));
        // Unique, but more were expected: a normalised match stands only alone.
        assert!(matches!(
            locate("one  two\n", "one two\t", 2),
            Err(Miss::Ambiguous { expected: 2, .. })
        ));
    }

    #[test]
    fn near_misses_quote_whole_wrapped_passages_with_line_numbers() {
        let text = "# Plan\n\nBuy milk and eggs.\nCall the plumber on\nMonday about the sink.\n\nWrite the report.\n";
        let miss = locate(text, "Call the plumber on Tuesday about the sink.", 1).unwrap_err();
        let message = miss.describe("`find`");
        assert!(message.contains("not found"), "{message}");
        assert!(
            message.contains("lines 4-5: \"Call the plumber on\\nMonday about the sink.\""),
            "{message}"
        );
        assert!(
            message.matches("\nline").count() <= MAX_CANDIDATES,
            "{message}"
        );
    }

    #[test]
    fn empty_quotes_are_refused() {
        assert_eq!(locate("text", " \n", 1).unwrap_err(), Miss::Empty);
    }
}
