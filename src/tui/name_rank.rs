//! The one ranking rule for finding a note by name, shared by the picker (`Ctrl+P`) and the `[[`
//! completion list, as Obsidian's quick switcher ranks: a note whose name (title, file name or an
//! alias) *is* the query comes first, then one whose name starts with it, then one where it starts
//! a word of the name (`grep` in `git-grep`), then every other fuzzy match. Within a tier the
//! matcher's score decides, and where that ties, the note touched last wins.
//!
//! Names are compared ignoring case, without allocating: a keystroke ranks every matching note of
//! a large vault (137k in the benchmarks).

use std::cmp::Ordering;

/// How well a name matches the query, best first (the derived order is the ranking order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// The name is the query.
    Exact,
    /// The name starts with the query.
    Prefix,
    /// Each word of the query starts a word of the name, in order.
    WordStart,
    /// Any other match (fuzzy, or in the path only).
    Fuzzy,
}

/// A query prepared for tiering: lower-cased, its words split on spaces.
#[derive(Debug, Clone, Default)]
pub struct NameQuery {
    /// The whole query, lower-cased, spaces between words collapsed to one.
    whole: String,
    words: Vec<String>,
}

impl NameQuery {
    /// `text` as typed. fzf's operators (`^`, `$`, `'`, `!`) are not names' text: a query that
    /// uses them ranks every match as [`Tier::Fuzzy`] and the matcher's score decides alone.
    pub fn new(text: &str) -> Self {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        let operators = words
            .iter()
            .any(|w| w.starts_with(['^', '\'', '!']) || w.ends_with('$'));
        if operators || words.is_empty() {
            return NameQuery::default();
        }
        NameQuery {
            whole: words.join(" "),
            words,
        }
    }

    /// Whether there is nothing to tier by (every match is [`Tier::Fuzzy`]).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// How `name` matches this query.
    pub fn tier(&self, name: &str) -> Tier {
        if self.words.is_empty() {
            return Tier::Fuzzy;
        }
        let name = name.trim();
        let (exact, prefix) = if name.is_ascii() {
            // Most names: bytes compared without decoding (a keystroke tiers every match).
            let whole = self.whole.as_bytes();
            let head = name.as_bytes().get(..whole.len());
            (
                name.eq_ignore_ascii_case(&self.whole),
                head.is_some_and(|head| head.eq_ignore_ascii_case(whole)),
            )
        } else {
            (
                lowered(name).eq(self.whole.chars()),
                starts_with(lowered(name), &self.whole),
            )
        };
        if exact {
            Tier::Exact
        } else if prefix {
            Tier::Prefix
        } else if self.words_start_words(name) {
            Tier::WordStart
        } else {
            Tier::Fuzzy
        }
    }

    /// The best tier among a note's names.
    pub fn best_tier<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Tier {
        let mut best = Tier::Fuzzy;
        for name in names {
            best = best.min(self.tier(name));
            if best == Tier::Exact {
                break;
            }
        }
        best
    }

    /// Each word of the query, in order, starts a word of `name` (a later word than the previous
    /// one's).
    fn words_start_words(&self, name: &str) -> bool {
        if name.is_ascii() && self.whole.is_ascii() {
            return self.ascii_words_start_words(name.as_bytes());
        }
        let starts = word_starts(name);
        let mut from = 0;
        for word in &self.words {
            let found = starts[from..]
                .iter()
                .position(|&start| starts_with(lowered(&name[start..]), word));
            match found {
                Some(offset) => from += offset + 1,
                None => return false,
            }
        }
        true
    }
}

impl NameQuery {
    /// [`NameQuery::words_start_words`] for an ASCII name and query, on bytes and without
    /// allocating: a keystroke tiers every match of the vault.
    fn ascii_words_start_words(&self, name: &[u8]) -> bool {
        let mut from = 0;
        for word in &self.words {
            let word = word.as_bytes();
            let found = (from..name.len()).find(|&at| {
                ascii_word_starts_at(name, at)
                    && name
                        .get(at..at + word.len())
                        .is_some_and(|head| head.eq_ignore_ascii_case(word))
            });
            match found {
                Some(at) => from = at + 1,
                None => return false,
            }
        }
        true
    }
}

/// Whether a word of the ASCII `name` starts at byte `at`, by [`word_starts`]'s rule.
fn ascii_word_starts_at(name: &[u8], at: usize) -> bool {
    let Some(&c) = name.get(at) else {
        return false;
    };
    match at.checked_sub(1).and_then(|p| name.get(p)) {
        None => true,
        Some(&p) => {
            (c.is_ascii_alphanumeric() && !p.is_ascii_alphanumeric())
                || (c.is_ascii_uppercase() && p.is_ascii_lowercase())
        }
    }
}

/// The order of two matches: tier, then the matcher's score (higher first), then the later touch
/// (nanoseconds; higher first). Callers break what remains by name length and path.
pub fn compare(a: (Tier, u32, i64), b: (Tier, u32, i64)) -> Ordering {
    a.0.cmp(&b.0)
        .then_with(|| b.1.cmp(&a.1))
        .then_with(|| b.2.cmp(&a.2))
}

fn lowered(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().flat_map(char::to_lowercase)
}

fn starts_with(mut chars: impl Iterator<Item = char>, prefix: &str) -> bool {
    prefix.chars().all(|p| chars.next() == Some(p))
}

/// Byte offsets where a word of `name` starts: its first character, and each letter or digit that
/// follows a character that is neither (`git-grep`, `Plan for Q3`, `2024_05`), or an upper-case
/// letter after a lower-case one (`camelCase`).
fn word_starts(name: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut previous: Option<char> = None;
    for (at, c) in name.char_indices() {
        let start = match previous {
            None => true,
            Some(p) => {
                (c.is_alphanumeric() && !p.is_alphanumeric())
                    || (c.is_uppercase() && p.is_lowercase())
            }
        };
        if start {
            starts.push(at);
        }
        previous = Some(c);
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_word_start_check_agrees_with_the_general_one() {
        let names = [
            "git-grep",
            "gitGrep",
            "Plan for Q3",
            "2024_05 notes",
            "tar",
            "xtar",
            "a-b-c",
            "ABc",
            "camelCaseName",
            "  spaced  out ",
            "q3plan",
            "--",
            "",
        ];
        let queries = [
            "g",
            "grep",
            "git grep",
            "plan q3",
            "q3",
            "05",
            "b c",
            "c",
            "case name",
            "a",
        ];
        for name in names {
            for query in queries {
                let q = NameQuery::new(query);
                let starts = word_starts(name);
                let mut from = 0;
                let general = q.words.iter().all(|word| {
                    let found = starts[from..]
                        .iter()
                        .position(|&start| starts_with(lowered(&name[start..]), word));
                    found.map(|offset| from += offset + 1).is_some()
                });
                assert_eq!(
                    q.ascii_words_start_words(name.as_bytes()),
                    general,
                    "{query:?} in {name:?}"
                );
            }
        }
    }

    #[test]
    fn tiers_in_order() {
        let q = NameQuery::new("tar");
        assert_eq!(q.tier("tar"), Tier::Exact);
        assert_eq!(q.tier("TAR"), Tier::Exact, "case is ignored");
        assert_eq!(q.tier("tart"), Tier::Prefix);
        assert_eq!(q.tier("gnu-tar"), Tier::WordStart);
        assert_eq!(q.tier("unTar"), Tier::WordStart, "camelCase starts a word");
        assert_eq!(q.tier("guitar"), Tier::Fuzzy);
        assert_eq!(q.tier("t-a-r"), Tier::Fuzzy);
        assert!(Tier::Exact < Tier::Prefix && Tier::Prefix < Tier::WordStart);
        assert!(Tier::WordStart < Tier::Fuzzy);
    }

    #[test]
    fn words_start_words_in_order() {
        let q = NameQuery::new("plan q3");
        assert_eq!(q.tier("Plan for Q3"), Tier::WordStart);
        assert_eq!(q.tier("plan Q3"), Tier::Exact, "spaces collapse");
        assert_eq!(q.tier("Q3 plan"), Tier::Fuzzy, "out of order");
        assert_eq!(NameQuery::new("  Plan   Q3 ").tier("plan q3"), Tier::Exact);
    }

    #[test]
    fn non_ascii_names_compare_by_lower_case() {
        let q = NameQuery::new("école");
        assert_eq!(q.tier("École"), Tier::Exact);
        assert_eq!(q.tier("Écoles du monde"), Tier::Prefix);
        assert_eq!(NameQuery::new("日記").tier("今日の日記"), Tier::Fuzzy);
        assert_eq!(NameQuery::new("日記").tier("日記帳"), Tier::Prefix);
    }

    #[test]
    fn operators_leave_the_order_to_the_matcher() {
        for text in ["^tar", "tar$", "'tar", "!tar", "   "] {
            let q = NameQuery::new(text);
            assert!(q.is_empty(), "{text}");
            assert_eq!(q.tier("tar"), Tier::Fuzzy, "{text}");
        }
    }

    #[test]
    fn the_best_name_counts() {
        let q = NameQuery::new("zip");
        assert_eq!(q.best_tier(["compress", "zip"]), Tier::Exact);
        assert_eq!(q.best_tier(["compress", "zipinfo"]), Tier::Prefix);
        assert_eq!(q.best_tier([]), Tier::Fuzzy);
    }

    #[test]
    fn ties_go_to_the_note_touched_last() {
        assert_eq!(
            compare((Tier::Exact, 10, 0), (Tier::Prefix, 99, 9)),
            Ordering::Less
        );
        assert_eq!(
            compare((Tier::Prefix, 20, 0), (Tier::Prefix, 10, 9)),
            Ordering::Less
        );
        assert_eq!(
            compare((Tier::Exact, 10, 5), (Tier::Exact, 10, 9)),
            Ordering::Greater
        );
    }
}
