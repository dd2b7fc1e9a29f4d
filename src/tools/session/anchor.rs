//! Anchors: short verbatim quotes a model uses to say where in the open note an edit goes
//! (docs/tools.md, "Session tools"). Found by the same matcher as `update_note`'s `find`
//! ([`crate::vault::anchor_match`]), in order:
//!
//! 1. exact substring; with several matches, the one whose start is nearest the cursor;
//! 2. otherwise the one match with whitespace runs, curly quotes and Unicode (NFC) normalised,
//!    mapped back to the note's own characters; several normalised matches are refused with
//!    their lines (the cursor never picks among matches the model did not quote exactly);
//! 3. otherwise an error quoting the passages most like the anchor, so the model can retry.
//!
//! Empty anchors and anchors longer than half the note are refused: they say nothing about a
//! place, or are a rewrite of the whole note in disguise.

use crate::tools::ToolError;
use crate::vault::anchor_match::{self, Miss};
use std::ops::Range;

/// The byte range in `text` that `anchor` names, or an error telling the model how to retry.
/// `cursor` is a char offset (clamped to the text).
pub(super) fn resolve(text: &str, anchor: &str, cursor: usize) -> Result<Range<usize>, ToolError> {
    if anchor.trim().is_empty() {
        return Err(ToolError::Invalid(Miss::Empty.describe("`anchor`")));
    }
    let note_chars = text.chars().count();
    let anchor_chars = anchor.chars().count();
    if anchor_chars * 2 > note_chars {
        return Err(ToolError::Invalid(format!(
            "the anchor is {anchor_chars} characters long, more than half the note ({note_chars} characters); \
             quote a short phrase (a few words) from the place you mean"
        )));
    }
    let exact = anchor_match::exact_matches(text, anchor);
    if !exact.is_empty() {
        return Ok(nearest(text, exact, cursor));
    }
    match anchor_match::locate(text, anchor, 1) {
        Ok(found) => Ok(found.ranges.into_iter().next().unwrap_or(0..0)),
        Err(miss) => Err(ToolError::Invalid(miss.describe("`anchor`"))),
    }
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
        let starts: Vec<usize> = anchor_match::exact_matches(text, "todo")
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
        let starts: Vec<usize> = anchor_match::exact_matches(text, "aa")
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
    fn nfc_and_combining_marks_map_back_whole() {
        // The note has a decomposed é (e + U+0301); the anchor has the composed é.
        let text = "Le cafe\u{301} est prêt. Code ＡＢ12 ici. Encore du texte pour la longueur.";
        let range = resolve(text, "café est", 0).unwrap();
        assert_eq!(&text[range], "cafe\u{301} est");
        // NFC, not NFKC: full-width letters and ligatures are other characters, and the error
        // quotes the line that has them.
        let err = message(resolve(text, "AB12", 0).unwrap_err());
        assert!(err.contains("not found") && err.contains("ＡＢ12"), "{err}");
        let text = "The ﬁnal word of a longer sentence in this note.";
        assert!(resolve(text, "final word", 0).is_err());
        // No-break and ideographic spaces are spaces.
        let text = "prix\u{a0}:\u{3000}12 €, et encore du texte pour la longueur";
        let range = resolve(text, "prix : 12 €", 0).unwrap();
        assert_eq!(&text[range], "prix\u{a0}:\u{3000}12 €");
    }

    #[test]
    fn several_normalised_matches_are_refused_with_their_lines() {
        // The cursor picks among exact matches only: a normalised anchor must be unique.
        let text = "it’s here\nsome filler text\nit’s here too, and more filler text";
        let err = message(resolve(text, "it's here", 40).unwrap_err());
        assert!(err.contains("2 places (lines 1 and 3)"), "{err}");
        let text = "it’s here\nsome filler text\nit is here too, and more filler text";
        let range = resolve(text, "it's here", 40).unwrap();
        assert_eq!(&text[range], "it’s here");
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
