//! Word-level detail inside a line diff: which removed line is the old version of which added
//! line, and which words of the two changed.
//!
//! A Markdown paragraph is one line, so a line diff of a rewritten paragraph says only "this
//! 450-character line became that one". Here the removed and added lines of each run of changes
//! are paired by how much text they share, and each pair is compared word by word, so a reader
//! can see the three words that changed.
//!
//! Words are runs of letters and digits; spaces and punctuation are tokens of their own, and each
//! character of a script written without spaces (Chinese, Japanese) is a word. Small unchanged
//! pieces between two changes are folded into the change (the semantic clean-up of
//! diff-match-patch), so "the red car" → "a blue bus" shows one changed phrase, not five changed
//! words with unchanged spaces between them.
//!
//! Pure functions: no I/O, nothing about how the result is drawn.

use crate::text::diff::{Hunk, LineKind};
use similar::{Algorithm, DiffTag};
use std::ops::Range;
use std::time::{Duration, Instant};

/// Pairs that share less than this part of their text (letters, not spaces) are not compared
/// word by word: highlighting "changed words" in two unrelated lines would mark nearly all of
/// them and help no one.
pub const MIN_SIMILARITY: f32 = 0.35;

/// Above this many candidate comparisons in one run of changes, lines are paired in order
/// (first removed with first added, …) instead of by best match.
const MAX_PAIRING_COMPARISONS: usize = 400;

/// Time for all word diffs of one [`TextDiff`](crate::text::diff::TextDiff); lines left when it
/// runs out are shown without word detail rather than freezing the approval banner.
const WORDS_BUDGET: Duration = Duration::from_millis(300);

/// Time for one word diff (Myers is quadratic in the worst case).
const PAIR_BUDGET: Duration = Duration::from_millis(50);

/// A piece of a line: a byte range of its text and whether it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordSpan {
    pub range: Range<usize>,
    pub changed: bool,
}

/// The word-level comparison of an old and a new line.
#[derive(Debug, Clone, PartialEq)]
pub struct WordDiff {
    /// The old line cut into unchanged and removed pieces, covering all of it in order.
    pub old: Vec<WordSpan>,
    /// The new line cut into unchanged and added pieces, covering all of it in order.
    pub new: Vec<WordSpan>,
    /// How much of the text the lines share, 0 to 1 (spaces not counted).
    pub similarity: f32,
}

/// Word-level detail of one hunk, line by line (indexes as in [`Hunk::lines`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HunkWords {
    /// For each line, the line on the other side it was compared with (a removed line's new
    /// version, an added line's old version); `None` for context and for unpaired changes.
    pub partner: Vec<Option<usize>>,
    /// For each paired line, its pieces; empty for the others.
    pub spans: Vec<Vec<WordSpan>>,
}

impl HunkWords {
    /// The pieces of line `index`, empty when it has no word detail.
    pub fn spans_of(&self, index: usize) -> &[WordSpan] {
        self.spans.get(index).map_or(&[], Vec::as_slice)
    }

    /// The line paired with line `index`, if any.
    pub fn partner_of(&self, index: usize) -> Option<usize> {
        self.partner.get(index).copied().flatten()
    }
}

/// Word-level detail of every hunk of a diff; see [`hunk_words`].
pub fn diff_words(hunks: &[Hunk]) -> Vec<HunkWords> {
    let deadline = Instant::now() + WORDS_BUDGET;
    hunks.iter().map(|h| hunk_words(h, deadline)).collect()
}

/// Pairs the removed and added lines of each run of changes in `hunk` and compares each pair
/// word by word. Work past `deadline` is skipped (those lines get no word detail).
pub fn hunk_words(hunk: &Hunk, deadline: Instant) -> HunkWords {
    let count = hunk.lines.len();
    let mut words = HunkWords {
        partner: vec![None; count],
        spans: vec![Vec::new(); count],
    };
    let mut index = 0;
    while index < count {
        if hunk.lines[index].kind == LineKind::Context {
            index += 1;
            continue;
        }
        // A run of changes: removed lines, then added lines (the order hunks are built in), up
        // to the next context line.
        let start = index;
        while index < count && hunk.lines[index].kind != LineKind::Context {
            index += 1;
        }
        let run = start..index;
        let removed: Vec<usize> = run
            .clone()
            .filter(|&i| hunk.lines[i].kind == LineKind::Removed)
            .collect();
        let added: Vec<usize> = run
            .filter(|&i| hunk.lines[i].kind == LineKind::Added)
            .collect();
        if removed.is_empty() || added.is_empty() || Instant::now() >= deadline {
            continue;
        }
        let old: Vec<&str> = removed
            .iter()
            .map(|&i| hunk.lines[i].text.as_str())
            .collect();
        let new: Vec<&str> = added.iter().map(|&i| hunk.lines[i].text.as_str()).collect();
        // Lines compared one by one, and consecutive lines of one paragraph compared as one
        // text: the paragraphs win only when they find more text in common (a wrapped
        // paragraph joined or re-flowed), so two unrelated lines that happen to touch still
        // pair by line.
        let by_line = Pairing::of(lines_alone(&old), lines_alone(&new), deadline);
        let old_paragraphs = paragraphs(&old);
        let new_paragraphs = paragraphs(&new);
        let grouped = old_paragraphs.len() < old.len() || new_paragraphs.len() < new.len();
        let chosen = match grouped.then(|| Pairing::of(old_paragraphs, new_paragraphs, deadline)) {
            Some(by_paragraph) if by_paragraph.shared > by_line.shared => by_paragraph,
            _ => by_line,
        };
        for (o, n, diff) in &chosen.pairs {
            let (old_paragraph, new_paragraph) = (&chosen.old[*o], &chosen.new[*n]);
            // The k-th rows of the two versions face each other; the longer side's extra rows
            // have no partner (they face the next unpaired change, or a blank).
            for (&old_row, &new_row) in old_paragraph.lines.iter().zip(&new_paragraph.lines) {
                let (old_index, new_index) = (removed[old_row], added[new_row]);
                words.partner[old_index] = Some(new_index);
                words.partner[new_index] = Some(old_index);
            }
            for (&row, spans) in old_paragraph
                .lines
                .iter()
                .zip(old_paragraph.split(&diff.old))
            {
                words.spans[removed[row]] = spans;
            }
            for (&row, spans) in new_paragraph
                .lines
                .iter()
                .zip(new_paragraph.split(&diff.new))
            {
                words.spans[added[row]] = spans;
            }
        }
    }
    words
}

/// Consecutive changed lines of one paragraph, compared as one text: a soft-wrapped paragraph
/// rewritten into one line (or re-flowed) then shows the words that changed, not a removed
/// line without detail and its words as all new.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Paragraph {
    /// Indexes of its lines in the run's list of removed (or added) lines.
    lines: Vec<usize>,
    /// The lines joined by one space.
    text: String,
    /// Where each line starts in `text` and how long it is.
    starts: Vec<Range<usize>>,
}

impl Paragraph {
    fn new(index: usize, line: &str) -> Paragraph {
        Paragraph {
            lines: vec![index],
            text: line.to_string(),
            starts: std::iter::once(0..line.len()).collect(),
        }
    }

    fn push(&mut self, index: usize, line: &str) {
        self.text.push(' ');
        let start = self.text.len();
        self.text.push_str(line);
        self.lines.push(index);
        self.starts.push(start..self.text.len());
    }

    /// Pieces of the joined text cut back into pieces of each line (the joining spaces, which
    /// belong to no line, dropped), so every line is covered in order.
    fn split(&self, spans: &[WordSpan]) -> Vec<Vec<WordSpan>> {
        self.starts
            .iter()
            .map(|line| {
                spans
                    .iter()
                    .filter_map(|span| {
                        let start = span.range.start.max(line.start);
                        let end = span.range.end.min(line.end);
                        (start < end).then(|| WordSpan {
                            range: start - line.start..end - line.start,
                            changed: span.changed,
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

/// One way of pairing the two sides of a run of changes, and how much text its pairs share.
struct Pairing {
    old: Vec<Paragraph>,
    new: Vec<Paragraph>,
    /// `(old paragraph, new paragraph, word diff)`, as [`pair_lines`] gives them.
    pairs: Vec<(usize, usize, WordDiff)>,
    /// Letters (not spaces) in the unchanged pieces of all pairs.
    shared: usize,
}

impl Pairing {
    fn of(old: Vec<Paragraph>, new: Vec<Paragraph>, deadline: Instant) -> Pairing {
        let old_refs: Vec<&str> = old.iter().map(|p| p.text.as_str()).collect();
        let new_refs: Vec<&str> = new.iter().map(|p| p.text.as_str()).collect();
        let pairs = pair_lines(&old_refs, &new_refs, deadline);
        let shared = pairs
            .iter()
            .map(|(o, _, diff)| {
                diff.old
                    .iter()
                    .filter(|span| !span.changed)
                    .map(|span| {
                        old[*o].text[span.range.clone()]
                            .chars()
                            .filter(|c| !c.is_whitespace())
                            .count()
                    })
                    .sum::<usize>()
            })
            .sum();
        Pairing {
            old,
            new,
            pairs,
            shared,
        }
    }
}

/// Every line its own paragraph.
fn lines_alone(lines: &[&str]) -> Vec<Paragraph> {
    lines
        .iter()
        .enumerate()
        .map(|(index, line)| Paragraph::new(index, line))
        .collect()
}

/// Whether a line begins a Markdown block of its own (a heading, list item, quote, fence, table
/// row or thematic break) rather than continuing the paragraph above it.
fn starts_block(line: &str) -> bool {
    let text = line.trim_start();
    let marker = |m: char| {
        text.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    };
    let ordered = {
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        digits > 0
            && text[digits..].starts_with(['.', ')'])
            && text[digits + 1..]
                .chars()
                .next()
                .is_none_or(|c| c == ' ' || c == '\t')
    };
    text.starts_with('#')
        || text.starts_with('>')
        || text.starts_with('|')
        || text.starts_with("```")
        || text.starts_with("~~~")
        || text.starts_with("---")
        || text.starts_with("***")
        || marker('-')
        || marker('*')
        || marker('+')
        || ordered
}

/// The lines of one side of a run of changes grouped into paragraphs: a non-blank line that
/// does not start a block continues the paragraph of the non-blank, non-heading, non-fence line
/// above it.
fn paragraphs(lines: &[&str]) -> Vec<Paragraph> {
    let mut out: Vec<Paragraph> = Vec::new();
    let mut open = false;
    for (index, line) in lines.iter().enumerate() {
        let blank = line.trim().is_empty();
        match out.last_mut() {
            Some(paragraph) if open && !blank && !starts_block(line) => {
                paragraph.push(index, line);
            }
            _ => out.push(Paragraph::new(index, line)),
        }
        let text = line.trim_start();
        // A heading, a fence or a table row is one line; nothing continues it.
        open = !blank
            && !text.starts_with('#')
            && !text.starts_with("```")
            && !text.starts_with("~~~")
            && !text.starts_with('|');
    }
    out
}

/// Which old line is the earlier version of which new line: pairs `(old index, new index, word
/// diff)`, both indexes increasing, each pair sharing at least [`MIN_SIMILARITY`] of its text.
/// The pairing with the most shared text overall is chosen; in a long run, lines are paired in
/// order.
pub fn pair_lines(old: &[&str], new: &[&str], deadline: Instant) -> Vec<(usize, usize, WordDiff)> {
    let compare = |o: &str, n: &str| {
        if Instant::now() >= deadline {
            return None;
        }
        let diff = word_diff_until(o, n, Instant::now() + PAIR_BUDGET);
        (diff.similarity >= MIN_SIMILARITY).then_some(diff)
    };
    if old.len() * new.len() > MAX_PAIRING_COMPARISONS {
        return old
            .iter()
            .zip(new)
            .enumerate()
            .filter_map(|(i, (o, n))| compare(o, n).map(|d| (i, i, d)))
            .collect();
    }
    // Every candidate, then the best order-keeping choice (a weighted longest common
    // subsequence): best[i][j] is the most similarity the first i old and j new lines can pair.
    let mut candidates: Vec<Vec<Option<WordDiff>>> = old
        .iter()
        .map(|o| new.iter().map(|n| compare(o, n)).collect())
        .collect();
    let (rows, cols) = (old.len(), new.len());
    let mut best = vec![vec![0.0f32; cols + 1]; rows + 1];
    for i in 1..=rows {
        for j in 1..=cols {
            let pair = candidates[i - 1][j - 1]
                .as_ref()
                .map_or(f32::MIN, |d| best[i - 1][j - 1] + d.similarity);
            best[i][j] = pair.max(best[i - 1][j]).max(best[i][j - 1]);
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (rows, cols);
    while i > 0 && j > 0 {
        if best[i][j] == best[i - 1][j] {
            i -= 1;
        } else if best[i][j] == best[i][j - 1] {
            j -= 1;
        } else {
            if let Some(diff) = candidates[i - 1][j - 1].take() {
                pairs.push((i - 1, j - 1, diff));
            }
            i -= 1;
            j -= 1;
        }
    }
    pairs.reverse();
    pairs
}

/// Compare two lines word by word.
pub fn word_diff(old: &str, new: &str) -> WordDiff {
    word_diff_until(old, new, Instant::now() + PAIR_BUDGET)
}

/// What one step of the comparison does to a run of tokens.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    changed: bool,
    /// Byte ranges in the old and the new line.
    old: Range<usize>,
    new: Range<usize>,
}

fn word_diff_until(old: &str, new: &str, deadline: Instant) -> WordDiff {
    let old_tokens = tokens(old);
    let new_tokens = tokens(new);
    let old_words: Vec<&str> = old_tokens.iter().map(|r| &old[r.clone()]).collect();
    let new_words: Vec<&str> = new_tokens.iter().map(|r| &new[r.clone()]).collect();
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &old_words,
        &new_words,
        Some(deadline),
    );
    // Byte range covered by tokens `range` of a line (empty ranges sit where they would start).
    let bytes = |tokens: &[Range<usize>], range: Range<usize>, len: usize| -> Range<usize> {
        let start = tokens.get(range.start).map_or(len, |t| t.start);
        let end = if range.is_empty() {
            start
        } else {
            tokens.get(range.end - 1).map_or(len, |t| t.end)
        };
        start..end
    };
    let mut steps: Vec<Step> = Vec::new();
    for op in ops {
        let (tag, o, n) = op.as_tag_tuple();
        let step = Step {
            changed: tag != DiffTag::Equal,
            old: bytes(&old_tokens, o, old.len()),
            new: bytes(&new_tokens, n, new.len()),
        };
        push_step(&mut steps, step);
    }
    clean_up(&mut steps, old, new);
    let letters = |text: &str| text.chars().filter(|c| !c.is_whitespace()).count();
    let shared: usize = steps
        .iter()
        .filter(|s| !s.changed)
        .map(|s| letters(&old[s.old.clone()]))
        .sum();
    let total = letters(old) + letters(new);
    let similarity = if total == 0 {
        1.0
    } else {
        (2 * shared) as f32 / total as f32
    };
    let side = |pick: fn(&Step) -> &Range<usize>| -> Vec<WordSpan> {
        steps
            .iter()
            .filter(|s| !pick(s).is_empty())
            .map(|s| WordSpan {
                range: pick(s).clone(),
                changed: s.changed,
            })
            .collect()
    };
    WordDiff {
        old: side(|s| &s.old),
        new: side(|s| &s.new),
        similarity,
    }
}

/// Append a step, merging it into the last one when both are changes (a deletion next to an
/// insertion is one replacement) or both unchanged.
fn push_step(steps: &mut Vec<Step>, step: Step) {
    if let Some(last) = steps.last_mut()
        && last.changed == step.changed
        && last.old.end == step.old.start
        && last.new.end == step.new.start
    {
        last.old.end = step.old.end;
        last.new.end = step.new.end;
        return;
    }
    steps.push(step);
}

/// Fold each unchanged piece that sits between two changes and is no longer than either of them
/// into one change, until none is left: a stray "the" or space inside a rewritten phrase is
/// noise, not information.
fn clean_up(steps: &mut Vec<Step>, old: &str, new: &str) {
    let size = |s: &Step| {
        old[s.old.clone()]
            .chars()
            .count()
            .max(new[s.new.clone()].chars().count())
    };
    loop {
        let fold = (1..steps.len().saturating_sub(1)).find(|&i| {
            let (before, equal, after) = (&steps[i - 1], &steps[i], &steps[i + 1]);
            !equal.changed
                && before.changed
                && after.changed
                && size(equal) <= size(before)
                && size(equal) <= size(after)
        });
        let Some(i) = fold else {
            return;
        };
        let after = steps.remove(i + 1);
        steps.remove(i);
        let before = &mut steps[i - 1];
        before.old.end = after.old.end;
        before.new.end = after.new.end;
    }
}

/// Whether `c` belongs to a script written without spaces between words, where every
/// character is compared on its own.
fn is_unspaced_script(c: char) -> bool {
    matches!(c,
        '\u{3000}'..='\u{30ff}'      // CJK punctuation, hiragana, katakana
        | '\u{3400}'..='\u{4dbf}'    // CJK extension A
        | '\u{4e00}'..='\u{9fff}'    // CJK unified ideographs
        | '\u{f900}'..='\u{faff}'    // compatibility ideographs
        | '\u{ff00}'..='\u{ffef}'    // full-width forms
        | '\u{20000}'..='\u{3134f}' // the supplementary ideograph planes
    )
}

/// Characters that belong to the character before them (accents, variation selectors, emoji
/// skin tones and the zero-width joiner of emoji sequences), so a token never splits what is
/// drawn as one glyph.
fn is_joining(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036f}'
        | '\u{1ab0}'..='\u{1aff}'
        | '\u{1dc0}'..='\u{1dff}'
        | '\u{20d0}'..='\u{20ff}'
        | '\u{200d}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{fe20}'..='\u{fe2f}'
        | '\u{1f3fb}'..='\u{1f3ff}'
        | '\u{e0020}'..='\u{e007f}'
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenClass {
    Word,
    Space,
    /// A token of one character (punctuation, symbols, emoji, unspaced scripts).
    Single,
}

fn class_of(c: char) -> TokenClass {
    if c.is_whitespace() {
        TokenClass::Space
    } else if (c.is_alphanumeric() || c == '_') && !is_unspaced_script(c) {
        TokenClass::Word
    } else {
        TokenClass::Single
    }
}

/// The byte ranges of the tokens of `text`: words, runs of spaces, and single other characters
/// (each with the joining characters that follow it).
fn tokens(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut current: Option<(TokenClass, Range<usize>)> = None;
    let mut after_joiner = false;
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        if let Some((_, range)) = current.as_mut()
            && (is_joining(c) || after_joiner)
        {
            range.end = end;
            after_joiner = c == '\u{200d}';
            continue;
        }
        after_joiner = false;
        let class = class_of(c);
        match current.as_mut() {
            Some((open, range)) if *open == class && class != TokenClass::Single => {
                range.end = end;
            }
            _ => {
                if let Some((_, range)) = current.take() {
                    out.push(range);
                }
                current = Some((class, at..end));
            }
        }
    }
    if let Some((_, range)) = current {
        out.push(range);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::diff::TextDiff;
    use pretty_assertions::assert_eq;

    /// The changed pieces of each side, as text.
    fn changed(diff: &WordDiff, old: &str, new: &str) -> (Vec<String>, Vec<String>) {
        let pick = |spans: &[WordSpan], text: &str| {
            spans
                .iter()
                .filter(|s| s.changed)
                .map(|s| text[s.range.clone()].to_string())
                .collect()
        };
        (pick(&diff.old, old), pick(&diff.new, new))
    }

    fn covers(spans: &[WordSpan], text: &str) {
        let joined: String = spans.iter().map(|s| &text[s.range.clone()]).collect();
        assert_eq!(joined, text);
        assert!(spans.iter().all(|s| !s.range.is_empty()));
    }

    #[test]
    fn tokens_are_words_spaces_and_single_marks() {
        let text = "Plant **tomatoes**, 2 rows.";
        let words: Vec<&str> = tokens(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            words,
            [
                "Plant", " ", "*", "*", "tomatoes", "*", "*", ",", " ", "2", " ", "rows", "."
            ]
        );
        let cjk = "検索できる test";
        let words: Vec<&str> = tokens(cjk).into_iter().map(|r| &cjk[r]).collect();
        assert_eq!(words, ["検", "索", "で", "き", "る", " ", "test"]);
        // An emoji with a skin tone, and a family joined by ZWJ, stay whole.
        let emoji = "a👍🏽b👨\u{200d}👩\u{200d}👧";
        let words: Vec<&str> = tokens(emoji).into_iter().map(|r| &emoji[r]).collect();
        assert_eq!(words, ["a", "👍🏽", "b", "👨\u{200d}👩\u{200d}👧"]);
        assert_eq!(words.concat(), emoji);
    }

    #[test]
    fn only_the_changed_words_are_marked() {
        let old = "Plant tomatoes in May, see [[Seeds]].";
        let new = "Plant tomatoes in late April, see [[Seeds]].";
        let diff = word_diff(old, new);
        covers(&diff.old, old);
        covers(&diff.new, new);
        assert_eq!(
            changed(&diff, old, new),
            (vec!["May".to_string()], vec!["late April".to_string()])
        );
        assert!(diff.similarity > 0.8, "{}", diff.similarity);
    }

    #[test]
    fn small_equal_pieces_between_changes_fold_into_one_phrase() {
        let old = "We drive the red car to town.";
        let new = "We drive a blue bus to town.";
        let diff = word_diff(old, new);
        assert_eq!(
            changed(&diff, old, new),
            (
                vec!["the red car".to_string()],
                vec!["a blue bus".to_string()]
            )
        );
        // A long unchanged stretch between two changes stays unchanged.
        let old = "One change here, then a long unchanged stretch of words, then another there.";
        let new = "Two change here, then a long unchanged stretch of words, then another where.";
        let diff = word_diff(old, new);
        assert_eq!(
            changed(&diff, old, new),
            (
                vec!["One".to_string(), "there".to_string()],
                vec!["Two".to_string(), "where".to_string()]
            )
        );
    }

    #[test]
    fn unrelated_lines_share_little() {
        let diff = word_diff(
            "The meeting moved to Thursday afternoon.",
            "Buy flour, eggs and milk for the weekend.",
        );
        assert!(diff.similarity < MIN_SIMILARITY, "{}", diff.similarity);
        assert_eq!(word_diff("same", "same").similarity, 1.0);
        assert_eq!(word_diff("", "").similarity, 1.0);
        let diff = word_diff("", "new");
        assert_eq!(
            diff.new,
            vec![WordSpan {
                range: 0..3,
                changed: true
            }]
        );
        assert!(diff.old.is_empty());
    }

    #[test]
    fn cjk_changes_are_found_by_character() {
        let old = "今日は雨です";
        let new = "今日は晴れです";
        let diff = word_diff(old, new);
        assert_eq!(
            changed(&diff, old, new),
            (vec!["雨".to_string()], vec!["晴れ".to_string()])
        );
    }

    #[test]
    fn lines_pair_by_shared_text_not_by_position() {
        let old = [
            "Buy milk.",
            "The garden plan is due in May, with beds A and B.",
        ];
        let new = [
            "A brand new line about something else entirely.",
            "The garden plan is due in April, with beds A and B.",
        ];
        let pairs = pair_lines(&old, &new, Instant::now() + WORDS_BUDGET);
        let indexes: Vec<(usize, usize)> = pairs.iter().map(|(o, n, _)| (*o, *n)).collect();
        assert_eq!(indexes, vec![(1, 1)]);
    }

    #[test]
    fn a_rewritten_paragraph_pairs_with_its_new_version() {
        let before =
            "# Plan\n\nShip the importer by Friday, then write the docs.\n\n- keep it small\n";
        let after = "# Plan\n\nShip the importer by Monday, then write the docs and the tests.\n\n- keep it small\n";
        let diff = TextDiff::new(before, after);
        let words = diff.words();
        assert_eq!(words.len(), 1);
        let hunk = &diff.hunks[0];
        let removed = hunk
            .lines
            .iter()
            .position(|l| l.kind == LineKind::Removed)
            .unwrap_or_default();
        let added = hunk
            .lines
            .iter()
            .position(|l| l.kind == LineKind::Added)
            .unwrap_or_default();
        assert_eq!(words[0].partner_of(removed), Some(added));
        assert_eq!(words[0].partner_of(added), Some(removed));
        assert_eq!(words[0].partner_of(0), None);
        assert!(words[0].spans_of(0).is_empty());
        let text = &hunk.lines[added].text;
        let marked: Vec<&str> = words[0]
            .spans_of(added)
            .iter()
            .filter(|s| s.changed)
            .map(|s| &text[s.range.clone()])
            .collect();
        assert_eq!(marked, vec!["Monday", " and the tests"]);
    }

    /// The changed pieces of each line of the hunk, as text (context lines empty).
    fn marked_per_line(diff: &TextDiff, words: &[HunkWords]) -> Vec<(LineKind, Vec<String>)> {
        let hunk = &diff.hunks[0];
        hunk.lines
            .iter()
            .enumerate()
            .map(|(i, line)| {
                let marked = words[0]
                    .spans_of(i)
                    .iter()
                    .filter(|s| s.changed)
                    .map(|s| line.text[s.range.clone()].to_string())
                    .collect();
                (line.kind, marked)
            })
            .collect()
    }

    #[test]
    fn a_wrapped_paragraph_rewritten_into_one_line_is_compared_as_one_text() {
        let before = "# Beds\n\nTomatoes go along the south fence, where they get sun\nfrom late morning until evening, every day.\n\n- basil\n";
        let after = "# Beds\n\nTomatoes go along the west fence, where they get sun from late morning until evening, every day.\n\n- basil\n";
        let diff = TextDiff::new(before, after);
        let words = diff.words();
        let lines = marked_per_line(&diff, &words);
        let changes: Vec<&(LineKind, Vec<String>)> = lines
            .iter()
            .filter(|(kind, _)| *kind != LineKind::Context)
            .collect();
        assert_eq!(
            changes,
            [
                &(LineKind::Removed, vec!["south".to_string()]),
                // The second old row has word detail too: all of it is in the new line.
                &(LineKind::Removed, vec![]),
                &(LineKind::Added, vec!["west".to_string()]),
            ]
        );
        let hunk = &diff.hunks[0];
        let rows: Vec<usize> = (0..hunk.lines.len())
            .filter(|&i| hunk.lines[i].kind != LineKind::Context)
            .collect();
        // Every changed row's pieces cover it exactly.
        for &row in &rows {
            covers(words[0].spans_of(row), &hunk.lines[row].text);
        }
        // The first old row faces the new line; the second has no partner of its own.
        assert_eq!(words[0].partner_of(rows[0]), Some(rows[2]));
        assert_eq!(words[0].partner_of(rows[2]), Some(rows[0]));
        assert_eq!(words[0].partner_of(rows[1]), None);
    }

    #[test]
    fn a_reflowed_paragraph_marks_no_words_and_list_items_stay_apart() {
        let before = "Ship the importer by Friday, then\nwrite the docs and the tests.\n";
        let after = "Ship the importer by Friday,\nthen write the docs and the tests.\n";
        let diff = TextDiff::new(before, after);
        let lines = marked_per_line(&diff, &diff.words());
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(
            lines.iter().all(|(_, marked)| marked.is_empty()),
            "{lines:?}"
        );
        // Each item of a list is its own paragraph: the changed item pairs with its new version.
        let before = "- plant the tomatoes in May\n- buy milk\n";
        let after = "- plant the tomatoes in April\n- buy oat milk\n";
        assert_eq!(
            paragraphs(&["- plant the tomatoes in May", "- buy milk"]).len(),
            2
        );
        let diff = TextDiff::new(before, after);
        let lines = marked_per_line(&diff, &diff.words());
        assert!(
            lines.contains(&(LineKind::Added, vec!["April".to_string()])),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|(kind, marked)| *kind == LineKind::Added
                && marked.iter().map(|m| m.trim()).eq(["oat"])),
            "{lines:?}"
        );
        // A heading and a wrapped list item's continuation.
        let grouped = paragraphs(&[
            "# Title",
            "text that",
            "wraps",
            "- item that",
            "  wraps too",
        ]);
        let shape: Vec<Vec<usize>> = grouped.into_iter().map(|p| p.lines).collect();
        assert_eq!(shape, vec![vec![0], vec![1, 2], vec![3, 4]]);
    }

    #[test]
    fn long_runs_pair_in_order_and_a_spent_budget_pairs_nothing() {
        let old: Vec<String> = (0..30).map(|i| format!("item {i} is open")).collect();
        let new: Vec<String> = (0..30).map(|i| format!("item {i} is done")).collect();
        let old: Vec<&str> = old.iter().map(String::as_str).collect();
        let new: Vec<&str> = new.iter().map(String::as_str).collect();
        let pairs = pair_lines(&old, &new, Instant::now() + WORDS_BUDGET);
        assert_eq!(pairs.len(), 30);
        assert!(pairs.iter().all(|(o, n, _)| o == n));
        assert!(pair_lines(&old[..2], &new[..2], Instant::now()).is_empty());
    }
}
