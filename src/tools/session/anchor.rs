//! Anchors: short verbatim quotes a model uses to say where in the open note an edit goes
//! (docs/tools.md, "Session tools"). Resolution, in order:
//!
//! 1. exact substring; with several matches, the one whose start is nearest the cursor;
//! 2. otherwise the same search with whitespace runs collapsed, smart quotes made ASCII and NFKC
//!    applied to both sides, the match mapped back to the note's own characters;
//! 3. otherwise an error quoting the lines most like the anchor, so the model can retry.
//!
//! Empty anchors and anchors longer than half the note are refused: they say nothing about a
//! place, or are a rewrite of the whole note in disguise.

use crate::tools::ToolError;
use std::ops::Range;
use std::time::{Duration, Instant};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// How many near misses an error quotes.
const MAX_CANDIDATES: usize = 3;
/// Lines are ranked cheaply first; only this many are compared character by character.
const SHORTLIST: usize = 12;
/// A quoted candidate is cut to this many characters.
const CANDIDATE_CHARS: usize = 160;

/// The byte range in `text` that `anchor` names, or an error telling the model how to retry.
/// `cursor` is a char offset (clamped to the text).
pub(super) fn resolve(text: &str, anchor: &str, cursor: usize) -> Result<Range<usize>, ToolError> {
    if anchor.trim().is_empty() {
        return Err(ToolError::Invalid(
            "`anchor` is empty; quote a few words of the note exactly as they are written there"
                .into(),
        ));
    }
    let note_chars = text.chars().count();
    let anchor_chars = anchor.chars().count();
    if anchor_chars * 2 > note_chars {
        return Err(ToolError::Invalid(format!(
            "the anchor is {anchor_chars} characters long, more than half the note ({note_chars} characters); \
             quote a short phrase (a few words) from the place you mean"
        )));
    }
    let exact = exact_matches(text, anchor);
    if !exact.is_empty() {
        return Ok(nearest(text, exact, cursor));
    }
    let normalised = normalised_matches(text, anchor);
    if !normalised.is_empty() {
        return Ok(nearest(text, normalised, cursor));
    }
    Err(not_found(text, anchor))
}

/// Every occurrence of `anchor`, overlapping ones included, in text order.
fn exact_matches(text: &str, anchor: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find(anchor) {
        let start = from + offset;
        found.push(start..start + anchor.len());
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// The match whose start is nearest the cursor (in chars); the earlier one on a tie.
/// `matches` is non-empty and sorted by start.
fn nearest(text: &str, matches: Vec<Range<usize>>, cursor: usize) -> Range<usize> {
    let mut best: Option<(usize, Range<usize>)> = None;
    let mut chars_before = 0;
    let mut counted_to = 0;
    for range in matches {
        chars_before += text[counted_to..range.start].chars().count();
        counted_to = range.start;
        let distance = chars_before.abs_diff(cursor);
        if best.as_ref().is_none_or(|(d, _)| distance < *d) {
            best = Some((distance, range));
        }
    }
    best.map(|(_, range)| range).unwrap_or(0..0)
}

/// A text in normalised form, each character remembering which bytes of the original it came
/// from.
#[derive(Default)]
struct Folded {
    chars: Vec<char>,
    origin: Vec<Range<usize>>,
}

/// Whitespace runs → one space, smart quotes → ASCII quotes, NFKC. NFKC runs per starter and its
/// combining marks, so every output character can be traced to a few original characters.
fn fold(text: &str) -> Folded {
    let mut folded = Folded::default();
    let mut in_space = false;
    for segment in segments(text) {
        for c in text[segment.clone()].nfkc() {
            let c = ascii_quote(c);
            if c.is_whitespace() {
                if in_space {
                    if let Some(last) = folded.origin.last_mut() {
                        last.end = segment.end;
                    }
                    continue;
                }
                in_space = true;
                folded.chars.push(' ');
            } else {
                in_space = false;
                folded.chars.push(c);
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

fn ascii_quote(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        _ => c,
    }
}

/// Matches of the normalised anchor in the normalised text, as byte ranges of the original text.
fn normalised_matches(text: &str, anchor: &str) -> Vec<Range<usize>> {
    let haystack = fold(text);
    // Whitespace at the anchor's edges is noise once whitespace is being normalised.
    let needle: Vec<char> = fold(anchor.trim()).chars;
    if needle.is_empty() || needle.len() > haystack.chars.len() {
        return Vec::new();
    }
    haystack
        .chars
        .windows(needle.len())
        .enumerate()
        .filter(|(_, window)| *window == needle.as_slice())
        .map(|(i, _)| haystack.origin[i].start..haystack.origin[i + needle.len() - 1].end)
        .collect()
}

/// The error for an anchor that is nowhere: the lines most like it, so the model can copy one.
fn not_found(text: &str, anchor: &str) -> ToolError {
    let candidates = closest_lines(text, anchor);
    let mut message = String::from(
        "the anchor was not found in the note, not even with whitespace, quotes and Unicode normalised; \
         copy a short phrase exactly as it is written in the note and retry.",
    );
    if candidates.is_empty() {
        message.push_str(" No line of the note resembles the anchor.");
    } else {
        message.push_str(" The closest lines are:");
        for (line, quote) in candidates {
            message.push_str(&format!("\nline {line}: {quote:?}"));
        }
    }
    ToolError::Invalid(message)
}

/// Up to [`MAX_CANDIDATES`] (1-based line number, quoted text) of the windows of lines (as many
/// lines as the anchor has) most similar to the anchor, best first.
fn closest_lines(text: &str, anchor: &str) -> Vec<(usize, String)> {
    let anchor = anchor.trim();
    let span = anchor.lines().count().max(1);
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches('\u{feff}'))
        .collect();
    let anchor_grams = bigrams(anchor);
    // Character bigrams rank every script alike (CJK text has no spaces between words) and cost
    // one pass per line; the exact ratio below is only computed for the shortlist.
    let mut ranked: Vec<(f32, usize, String)> = (0..lines.len())
        .filter(|&i| !lines[i].trim().is_empty())
        .map(|i| {
            let window = lines[i..(i + span).min(lines.len())].join("\n");
            (dice(&anchor_grams, &bigrams(&window)), i, window)
        })
        .filter(|(score, _, _)| *score > 0.0)
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.truncate(SHORTLIST);
    let deadline = Instant::now() + Duration::from_millis(200);
    let mut scored: Vec<(f32, usize, String)> = ranked
        .into_iter()
        .map(|(_, i, window)| {
            let ratio = similar::TextDiff::configure()
                .deadline(deadline)
                .diff_chars(anchor, window.as_str())
                .ratio();
            (ratio, i, window)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_CANDIDATES)
        .map(|(_, i, window)| (i + 1, shorten(window.trim())))
        .collect()
}

fn bigrams(s: &str) -> std::collections::HashSet<(char, char)> {
    let chars: Vec<char> = s.chars().flat_map(char::to_lowercase).collect();
    chars.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Dice coefficient of two bigram sets: 1 for the same set, 0 for nothing in common.
fn dice(
    a: &std::collections::HashSet<(char, char)>,
    b: &std::collections::HashSet<(char, char)>,
) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    2.0 * a.intersection(b).count() as f32 / (a.len() + b.len()) as f32
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

    fn char_range(text: &str, range: Range<usize>) -> Range<usize> {
        text[..range.start].chars().count()..text[..range.end].chars().count()
    }

    fn message(err: ToolError) -> String {
        match err {
            ToolError::Invalid(m) => m,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn exact_match_with_multibyte_text() {
        let text = "Café au lait. 中文段落 with 🎉 party. End of note here.";
        let range = resolve(text, "中文段落", 0).unwrap();
        assert_eq!(&text[range.clone()], "中文段落");
        assert_eq!(char_range(text, range), 14..18);
        let range = resolve(text, "🎉 party", 0).unwrap();
        assert_eq!(&text[range], "🎉 party");
    }

    #[test]
    fn several_matches_pick_the_one_nearest_the_cursor() {
        let text = "todo: é one\ntodo: é two\ntodo: é three\nmore text to make it long enough";
        let starts: Vec<usize> = exact_matches(text, "todo")
            .into_iter()
            .map(|r| char_range(text, r).start)
            .collect();
        assert_eq!(starts, vec![0, 12, 24]);
        for (cursor, expected) in [(0, 0), (13, 12), (17, 12), (19, 24), (1000, 24)] {
            let range = resolve(text, "todo", cursor).unwrap();
            assert_eq!(char_range(text, range).start, expected, "cursor {cursor}");
        }
        // A tie goes to the earlier match.
        assert_eq!(char_range(text, resolve(text, "todo", 6).unwrap()).start, 0);
    }

    #[test]
    fn overlapping_occurrences_count() {
        let text = "aaa bbbbbbbbbbbbbbbb";
        let starts: Vec<usize> = exact_matches(text, "aa")
            .into_iter()
            .map(|r| r.start)
            .collect();
        assert_eq!(starts, vec![0, 1]);
    }

    #[test]
    fn normalised_match_maps_back_to_the_original_characters() {
        let text = "Intro line here.\nShe said “bonjour  à\n tous” and left — fin.\nTail.";
        // ASCII quotes, one space where the note has two spaces and a line break.
        let range = resolve(text, "said \"bonjour à tous\" and", 0).unwrap();
        assert_eq!(&text[range.clone()], "said “bonjour  à\n tous” and");
        assert_eq!(char_range(text, range), 21..48);
    }

    #[test]
    fn nfkc_and_combining_marks_map_back_whole() {
        // The note has a decomposed é (e + U+0301) and a full-width "ＡＢ"; the anchor has the
        // composed é and ASCII AB.
        let text = "Le cafe\u{301} est prêt. Code ＡＢ12 ici. Encore du texte pour la longueur.";
        let range = resolve(text, "café est", 0).unwrap();
        assert_eq!(&text[range], "cafe\u{301} est");
        let range = resolve(text, "AB12", 0).unwrap();
        assert_eq!(&text[range], "ＡＢ12");
        // No-break and ideographic spaces are spaces.
        let text = "prix\u{a0}:\u{3000}12 €, et encore du texte pour la longueur";
        let range = resolve(text, "prix : 12 €", 0).unwrap();
        assert_eq!(&text[range], "prix\u{a0}:\u{3000}12 €");
        // A ligature in the note is one character that covers two of the anchor.
        let text = "The ﬁnal word of a longer sentence in this note.";
        let range = resolve(text, "final word", 0).unwrap();
        assert_eq!(&text[range], "ﬁnal word");
    }

    #[test]
    fn normalised_matches_also_prefer_the_cursor() {
        let text = "it’s here\nsome filler text\nit’s here too, and more filler text";
        let range = resolve(text, "it's here", 40).unwrap();
        assert_eq!(char_range(text, range), 27..36);
    }

    #[test]
    fn missing_anchor_lists_the_closest_lines() {
        let text = "# Plan\n\nBuy milk and eggs.\nCall the plumber on Monday.\nWrite the quarterly report.\nUnrelated zzz.\n";
        let err = message(resolve(text, "Call the plumber on Tuesday", 0).unwrap_err());
        assert!(err.contains("not found"), "{err}");
        assert!(
            err.contains("line 4: \"Call the plumber on Monday.\""),
            "{err}"
        );
        // The best candidate comes first, and at most three are quoted.
        let first = err.find("line 4").unwrap();
        assert!(err.find("line 3").is_none_or(|at| at > first), "{err}");
        assert!(err.matches("\nline ").count() <= 3, "{err}");
    }

    #[test]
    fn candidates_work_for_cjk_text() {
        let text = "第一行文字内容\n今天天气很好我们去公园\n完全不同的东西在这里\n";
        let err = message(resolve(text, "今天天气不好", 0).unwrap_err());
        assert!(err.contains("line 2: \"今天天气很好我们去公园\""), "{err}");
    }

    #[test]
    fn empty_and_oversized_anchors_are_refused() {
        let text = "short note with some words";
        assert!(message(resolve(text, "", 0).unwrap_err()).contains("empty"));
        assert!(message(resolve(text, " \n ", 0).unwrap_err()).contains("empty"));
        // 14 chars of a 26-char note: more than half.
        let err = message(resolve(text, "short note wit", 0).unwrap_err());
        assert!(err.contains("more than half the note (26"), "{err}");
        // Exactly half is allowed.
        assert_eq!(resolve(text, "short note wi", 0).unwrap(), 0..13);
        // Half is counted in chars, not bytes.
        let text = "ééééé abcd";
        assert_eq!(resolve(text, "ééééé", 0).unwrap(), 0..10);
    }

    #[test]
    fn cursor_past_the_end_is_clamped_in_effect() {
        let text = "x y x and some more words";
        assert_eq!(resolve(text, "x", usize::MAX).unwrap(), 4..5);
    }
}
