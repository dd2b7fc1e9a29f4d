//! Snippets: the text around the best match of a query in a note, with the matched words as ranges.
//!
//! FTS5's `snippet()` scores every pair of matches in a row (quadratic in the matches: a note with
//! 100,000 lines containing the word took 45 s), marks matches with text that collides with the
//! note's own Markdown (`**`), and counts context in tokens, which is a dozen characters in Chinese or
//! Japanese. This module is linear: it tokenises the note the way the index does (runs of letters and
//! digits, each CJK character on its own, case and accents folded), stops after [`MAX_HITS`] matches,
//! picks the window holding the most different terms, and returns plain text with character ranges.

use super::cjk;
use super::query::Term;
use unicode_normalization::UnicodeNormalization;

/// Matches looked at per note: enough to find the best window, bounded whatever the note holds.
const MAX_HITS: usize = 256;
/// Characters of context before the first match in the window.
const BEFORE_CHARS: usize = 60;
/// Characters of the window in all (matches included), about two lines of a result list.
const WINDOW_CHARS: usize = 180;

/// A snippet: one line of text and the character ranges of the matches in it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snippet {
    pub text: String,
    /// `[start, end)` in characters (Unicode scalar values) of `text`.
    pub highlights: Vec<[usize; 2]>,
}

/// One token of a text: its byte span and its folded form.
struct Token {
    start: usize,
    end: usize,
    folded: String,
}

/// Case and accents folded as the index's tokenizer folds them (`remove_diacritics`).
fn fold(word: &str) -> String {
    word.nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_cjk(c: char) -> bool {
    cjk::is_unsegmented(c)
}

/// Splits `text` into tokens, calling `visit` for each until it returns false.
fn tokens(text: &str, mut visit: impl FnMut(Token) -> bool) {
    let mut start = None;
    for (index, c) in text.char_indices() {
        let word_char = c.is_alphanumeric();
        if word_char && is_cjk(c) {
            if let Some(s) = start.take()
                && !visit(Token {
                    start: s,
                    end: index,
                    folded: fold(&text[s..index]),
                })
            {
                return;
            }
            let end = index + c.len_utf8();
            if !visit(Token {
                start: index,
                end,
                folded: fold(&text[index..end]),
            }) {
                return;
            }
        } else if word_char {
            start.get_or_insert(index);
        } else if let Some(s) = start.take()
            && !visit(Token {
                start: s,
                end: index,
                folded: fold(&text[s..index]),
            })
        {
            return;
        }
    }
    if let Some(s) = start {
        visit(Token {
            start: s,
            end: text.len(),
            folded: fold(&text[s..]),
        });
    }
}

/// A query term as folded tokens; the last one may be a prefix.
struct Pattern {
    words: Vec<String>,
    prefix: bool,
}

fn patterns(terms: &[Term]) -> Vec<Pattern> {
    terms
        .iter()
        .filter_map(|term| {
            let mut words = Vec::new();
            tokens(&term.text, |t| {
                words.push(t.folded);
                true
            });
            (!words.is_empty()).then_some(Pattern {
                words,
                prefix: term.prefix,
            })
        })
        .collect()
}

/// A match: which pattern, and the byte span it covers.
struct Hit {
    pattern: usize,
    start: usize,
    end: usize,
}

/// The snippet of `body` (as stored in the index, CJK separators included) for `terms`. Without a
/// match in the body (the note matched by its title, path or tags) it is the body's beginning.
pub fn make(body: &str, terms: &[Term]) -> Snippet {
    let text = cjk::unsegment(body);
    let patterns = patterns(terms);
    let hits = find_hits(&text, &patterns);
    let Some((first, last)) = best_window(&hits, patterns.len()) else {
        return tidy(&text, 0, WINDOW_CHARS, &[]);
    };
    let start = back_chars(&text, hits[first].start, BEFORE_CHARS);
    let end_chars = WINDOW_CHARS.max(text[start..hits[last].end].chars().count() + 20);
    tidy(&text, start, end_chars, &hits[first..])
}

/// The first [`MAX_HITS`] matches of any pattern, in text order.
fn find_hits(text: &str, patterns: &[Pattern]) -> Vec<Hit> {
    let mut hits = Vec::new();
    if patterns.is_empty() {
        return hits;
    }
    let longest = patterns.iter().map(|p| p.words.len()).max().unwrap_or(1);
    // The last `longest` tokens, to match multi-word phrases.
    let mut recent: std::collections::VecDeque<Token> = std::collections::VecDeque::new();
    tokens(text, |token| {
        recent.push_back(token);
        if recent.len() > longest {
            recent.pop_front();
        }
        for (index, pattern) in patterns.iter().enumerate() {
            let n = pattern.words.len();
            if recent.len() < n {
                continue;
            }
            let window: Vec<&Token> = recent.iter().skip(recent.len() - n).collect();
            let matched = window
                .iter()
                .zip(&pattern.words)
                .enumerate()
                .all(|(i, (t, w))| {
                    if pattern.prefix && i + 1 == n {
                        t.folded.starts_with(w.as_str())
                    } else {
                        t.folded == *w
                    }
                });
            if matched {
                hits.push(Hit {
                    pattern: index,
                    start: window[0].start,
                    end: window[n - 1].end,
                });
                break;
            }
        }
        hits.len() < MAX_HITS
    });
    hits
}

/// The run of hits (first, last index) within one window that holds the most different patterns,
/// the earliest such run on ties.
fn best_window(hits: &[Hit], patterns: usize) -> Option<(usize, usize)> {
    if hits.is_empty() {
        return None;
    }
    let mut best = (0, 0, 0usize);
    let mut counts = vec![0usize; patterns];
    let mut distinct = 0;
    let mut left = 0;
    for right in 0..hits.len() {
        if counts[hits[right].pattern] == 0 {
            distinct += 1;
        }
        counts[hits[right].pattern] += 1;
        // Byte width is a fair stand-in for the window's width here; the window is cut by
        // characters when the text is made.
        while hits[right].end - hits[left].start > WINDOW_CHARS * 2 && left < right {
            counts[hits[left].pattern] -= 1;
            if counts[hits[left].pattern] == 0 {
                distinct -= 1;
            }
            left += 1;
        }
        if distinct > best.2 {
            best = (left, right, distinct);
        }
    }
    Some((best.0, best.1))
}

/// The byte offset `chars` characters before `at`, moved forward to the start of a word.
fn back_chars(text: &str, at: usize, chars: usize) -> usize {
    let mut start = at;
    for (taken, (index, _)) in text[..at].char_indices().rev().enumerate() {
        if taken >= chars {
            break;
        }
        start = index;
    }
    if start == 0 {
        return 0;
    }
    // Do not begin inside a word (CJK characters stand alone, so any of them is a fine start).
    let rest = &text[start..at];
    match rest.char_indices().find(|(_, c)| c.is_whitespace()) {
        Some((offset, _)) => start + offset,
        None => start,
    }
}

/// One line from `text[start..]`, at most `max_chars` characters, blanks collapsed, with the
/// hits' ranges translated to character offsets of the result.
fn tidy(text: &str, start: usize, max_chars: usize, hits: &[Hit]) -> Snippet {
    let mut out = String::new();
    let mut count = 0;
    let mut highlights = Vec::new();
    let mut open: Option<usize> = None;
    let mut next_hit = hits.iter().peekable();
    let mut pending_space = false;
    let mut cut = false;
    if start > 0 {
        out.push('…');
        count += 1;
    }
    for (offset, c) in text[start..].char_indices() {
        let at = start + offset;
        if let Some(hit) = next_hit.peek()
            && at >= hit.end
            && let Some(from) = open.take()
        {
            highlights.push([from, count]);
            next_hit.next();
        }
        if c.is_whitespace() {
            pending_space = count > 0;
            continue;
        }
        if count + usize::from(pending_space) >= max_chars {
            cut = true;
            break;
        }
        if pending_space {
            out.push(' ');
            count += 1;
            pending_space = false;
        }
        if open.is_none()
            && let Some(hit) = next_hit.peek()
            && at >= hit.start
            && at < hit.end
        {
            open = Some(count);
        }
        out.push(c);
        count += 1;
    }
    if let Some(from) = open {
        highlights.push([from, count]);
    }
    if cut {
        out.push('…');
    }
    Snippet {
        text: out,
        highlights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str) -> Term {
        Term {
            text: text.into(),
            prefix: false,
        }
    }

    fn marked(snippet: &Snippet) -> String {
        let chars: Vec<char> = snippet.text.chars().collect();
        let mut out = String::new();
        let mut index = 0;
        for [start, end] in &snippet.highlights {
            out.extend(&chars[index..*start]);
            out.push('[');
            out.extend(&chars[*start..*end]);
            out.push(']');
            index = *end;
        }
        out.extend(&chars[index..]);
        out
    }

    #[test]
    fn matches_are_ranges_not_markdown() {
        let s = make(
            "Select **Canvas** and then   the canvas\nview.",
            &[term("canvas")],
        );
        assert_eq!(
            marked(&s),
            "Select **[Canvas]** and then the [canvas] view."
        );
    }

    #[test]
    fn accents_case_prefixes_and_phrases_fold_like_the_index() {
        let s = make(
            "Une Crème brûlée, then quick brown foxes.",
            &[
                term("creme"),
                term("quick brown"),
                Term {
                    text: "fox".into(),
                    prefix: true,
                },
            ],
        );
        assert_eq!(
            marked(&s),
            "Une [Crème] brûlée, then [quick brown] [foxes]."
        );
    }

    #[test]
    fn cjk_snippets_keep_context_around_the_match() {
        let before = "前置きの文章がここに長く続きます。".repeat(4);
        let body = cjk::segment(&format!(
            "{before}全文検索ができるようになりました。以上です。"
        ))
        .unwrap_or_default();
        let s = make(&body, &[term("検索")]);
        let text = marked(&s);
        assert!(
            text.contains("全文[検索]ができるようになりました"),
            "{text}"
        );
        assert!(s.text.chars().count() > 40, "{text}");
    }

    #[test]
    fn the_window_with_most_terms_wins_and_work_is_bounded() {
        let mut body = "alpha filler. ".repeat(10_000);
        body.push_str("here alpha and beta together.");
        let s = make(&body, &[term("alpha"), term("beta")]);
        // Only the first MAX_HITS matches are looked at: beta, far beyond, is not reached.
        assert!(s.text.starts_with("alpha filler"), "{}", s.text);
        let s = make("x alpha y. beta alpha z", &[term("alpha"), term("beta")]);
        assert_eq!(marked(&s), "x [alpha] y. [beta] [alpha] z");
    }

    #[test]
    fn no_match_in_the_body_gives_its_beginning() {
        let s = make(&"word ".repeat(100), &[term("title-only")]);
        assert!(s.highlights.is_empty());
        assert!(s.text.ends_with('…'));
        assert!(s.text.chars().count() <= WINDOW_CHARS + 1);
    }
}
