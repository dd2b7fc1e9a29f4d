//! A token estimate for models whose tokenizer vaultchat does not carry (Claude, local llama,
//! SmolLM, Qwen, Mistral and unknown names): one pass over the characters, weighing each kind of
//! run by what it costs in OpenAI's o200k_base encoding on average.
//!
//! The weights were fitted (least squares on relative error) to o200k_base counts of 399 texts:
//! this repository's docs and README in 2.5 KB sections, its sample vault, notes from
//! scripts/gen_vault.py (with their non-ASCII lines) and Rust sources, then rounded. Against
//! o200k_base the estimate is off by 2% at the median and at most about 20% on those texts
//! (docs/benchmarks.md has the distribution; `cargo bench --bench tokens` measures it again).
//! Plain bytes ÷ 4 was off by up to 186% on the same texts: box-drawing and CJK characters are
//! three bytes but about one token, indentation is many bytes but one token.

/// What each kind of run costs, in hundredths of a token.
mod weight {
    /// A run of ASCII letters (a word, with its leading space).
    pub const WORD: u64 = 110;
    /// Each letter of such a run past the sixth (long words split in pieces).
    pub const LONG_WORD_LETTER: u64 = 20;
    /// Each group of up to three ASCII digits (the BPE regex splits numbers so).
    pub const DIGIT_GROUP: u64 = 175;
    /// A run of ASCII punctuation, plus each of its characters.
    pub const PUNCTUATION_RUN: u64 = 50;
    pub const PUNCTUATION: u64 = 15;
    /// A run of line breaks.
    pub const LINE_BREAK: u64 = 33;
    /// A run of two or more other blanks (indentation, alignment).
    pub const BLANK_RUN: u64 = 60;
    /// A Chinese, Japanese or Korean character.
    pub const CJK: u64 = 85;
    /// Another non-ASCII letter (accented Latin, Greek, Cyrillic…).
    pub const OTHER_LETTER: u64 = 30;
    /// Any other non-ASCII character (symbols, emoji, box drawing).
    pub const OTHER_SYMBOL: u64 = 45;
}

/// About how many tokens `text` is.
pub fn estimate(text: &str) -> u64 {
    let mut cost: u64 = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphabetic() {
            let length = 1 + take_while(&mut chars, |c| c.is_ascii_alphabetic());
            cost += weight::WORD + weight::LONG_WORD_LETTER * length.saturating_sub(6);
        } else if c.is_ascii_digit() {
            let length = 1 + take_while(&mut chars, |c| c.is_ascii_digit());
            cost += weight::DIGIT_GROUP * length.div_ceil(3);
        } else if c == '\n' || c == '\r' {
            take_while(&mut chars, |c| c == '\n' || c == '\r');
            cost += weight::LINE_BREAK;
        } else if c.is_whitespace() {
            if take_while(&mut chars, |c| c.is_whitespace() && c != '\n' && c != '\r') > 0 {
                cost += weight::BLANK_RUN;
            }
        } else if c.is_ascii() {
            let length = 1 + take_while(&mut chars, |c| {
                c.is_ascii() && !c.is_ascii_alphanumeric() && !c.is_ascii_whitespace()
            });
            cost += weight::PUNCTUATION_RUN + weight::PUNCTUATION * length;
        } else if is_cjk(c) {
            cost += weight::CJK;
        } else if c.is_alphabetic() {
            cost += weight::OTHER_LETTER;
        } else {
            cost += weight::OTHER_SYMBOL;
        }
    }
    cost.div_ceil(100)
}

/// Skip the characters that match; how many were skipped.
fn take_while(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    matches: impl Fn(char) -> bool,
) -> u64 {
    let mut skipped = 0;
    while chars.next_if(|c| matches(*c)).is_some() {
        skipped += 1;
    }
    skipped
}

/// Han, kana, Hangul and the CJK punctuation and full-width forms: about a token each.
fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x3000..=0x30FF // CJK punctuation, hiragana, katakana
        | 0x3400..=0x4DBF // Han extension A
        | 0x4E00..=0x9FFF // Han
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xF900..=0xFAFF // Han compatibility
        | 0xFF00..=0xFFEF // full-width forms
        | 0x20000..=0x2FFFF) // Han extensions B and on
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_run_costs_its_weight() {
        assert_eq!(estimate(""), 0);
        // One word: 1.1 → 2 (rounded up); ten words ≈ 11 plus the blanks between them (free).
        assert_eq!(estimate("hello"), 2);
        assert_eq!(estimate(&"hello ".repeat(10)), 11);
        // Seven digits are three groups.
        assert_eq!(estimate("1234567"), 6);
        // CJK counts per character, not per byte: 10 characters, 30 bytes.
        let japanese = "日本語のノートです。";
        assert_eq!(japanese.len(), 30);
        assert_eq!(estimate(japanese), 9);
        // Indentation is one run however long.
        assert_eq!(estimate(&" ".repeat(40)), estimate("  "));
    }

    #[test]
    fn a_long_word_costs_more_than_a_short_one() {
        assert!(estimate("internationalisation") > estimate("word"));
    }
}
