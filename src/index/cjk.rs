//! Making text in scripts written without spaces findable.
//!
//! FTS5's `unicode61` tokenizer splits on spaces and punctuation, so a Japanese sentence such as
//! `日本語のノートです` is one long token and a search for `日本語` finds nothing. The index therefore
//! separates every character of such scripts with a ZERO WIDTH SPACE (a separator to `unicode61`,
//! invisible to people) and a query in those scripts becomes a phrase of single characters. This
//! is the unigram scheme; docs/decisions.md explains why it was chosen over the trigram tokenizer.

/// The separator inserted between characters; stripped again from snippets.
pub const SEPARATOR: char = '\u{200B}';

/// Scripts that do not separate words with spaces (Han, kana, Hangul syllables, Thai, Lao, Khmer).
pub fn is_unsegmented(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0x0E00..=0x0EFF    // Thai, Lao
        | 0x1780..=0x17FF    // Khmer
        | 0x20000..=0x2FA1F  // CJK extensions B-F and supplements
    )
}

/// `text` with a separator after every character of an unsegmented script, or `None` when the
/// text has none (the common case: no allocation).
pub fn segment(text: &str) -> Option<String> {
    let first = text.char_indices().find(|(_, c)| is_unsegmented(*c))?.0;
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    out.push_str(&text[..first]);
    let mut prev: Option<char> = text[..first].chars().next_back();
    for c in text[first..].chars() {
        if is_unsegmented(c) {
            // Split from a word glued to the left (`abc日`); after a space or another character
            // of these scripts a separator is already there.
            if prev.is_some_and(|p| !p.is_whitespace() && p != SEPARATOR && !is_unsegmented(p)) {
                out.push(SEPARATOR);
            }
            out.push(c);
            out.push(SEPARATOR);
            prev = Some(SEPARATOR);
        } else {
            out.push(c);
            prev = Some(c);
        }
    }
    Some(out)
}

/// Remove the separators [`segment`] added.
pub fn unsegment(text: &str) -> String {
    text.replace(SEPARATOR, "")
}

/// True when the text contains a character of an unsegmented script.
pub fn has_unsegmented(text: &str) -> bool {
    text.chars().any(is_unsegmented)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_text_is_left_alone() {
        assert_eq!(segment("plain text, café"), None);
    }

    #[test]
    fn each_cjk_character_becomes_a_token() {
        let s = segment("見て: 日本語のノート ok").unwrap();
        assert_eq!(
            s,
            "見\u{200B}て\u{200B}: 日\u{200B}本\u{200B}語\u{200B}の\u{200B}ノ\u{200B}ー\u{200B}ト\u{200B} ok"
        );
        assert_eq!(unsegment(&s), "見て: 日本語のノート ok");
    }

    #[test]
    fn a_word_glued_to_cjk_is_split_from_it() {
        assert_eq!(segment("abc日").unwrap(), "abc\u{200B}日\u{200B}");
    }

    #[test]
    fn hangul_and_thai_are_segmented() {
        assert!(segment("검색").is_some());
        assert!(segment("ภาษาไทย").is_some());
        assert!(has_unsegmented("abc 漢"));
        assert!(!has_unsegmented("Ελληνικά Русский"));
    }
}
