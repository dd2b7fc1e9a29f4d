//! Path globs for permission rules, matched against vault-relative paths with `/` separators.
//!
//! * `**` as a whole segment: any number of segments, zero included (`Private/**` matches
//!   `Private`, `Private/a.md` and `Private/x/y.md`; `**/*.md` matches `a.md` and `x/y/a.md`).
//! * `*`: any run of characters within one segment, the empty run included.
//! * `?`: exactly one character (not `/`).
//! * `\`: the next character is literal (`\*` matches a `*`); a trailing `\` is a literal `\`.
//!
//! Everything else is literal and case-sensitive; there are no character classes or braces. A
//! pattern without wildcards matches only that exact path (`Private` does not match
//! `Private/a.md`). Names that start with `.` get no special treatment: a rule about `**` is
//! about every path.

/// One element of a segment pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `*`
    AnyRun,
    /// `?`
    AnyChar,
}

/// One `/`-separated piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: zero or more whole segments.
    AnyDepth,
    Tokens(Vec<Token>),
}

fn parse(pattern: &str) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut tokens = Vec::new();
    let mut chars = pattern.chars();
    let finish = |tokens: Vec<Token>| {
        // Only an unescaped `**` filling the whole segment spans segments; escaped stars are
        // literals, and `a**b` is just two stars within a segment.
        if tokens == [Token::AnyRun, Token::AnyRun] {
            Segment::AnyDepth
        } else {
            Segment::Tokens(tokens)
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => tokens.push(Token::Literal(chars.next().unwrap_or('\\'))),
            '/' => segments.push(finish(std::mem::take(&mut tokens))),
            '*' => tokens.push(Token::AnyRun),
            '?' => tokens.push(Token::AnyChar),
            _ => tokens.push(Token::Literal(c)),
        }
    }
    segments.push(finish(tokens));
    segments
}

/// Whether one segment of a path matches a segment pattern. Dynamic programming over (token,
/// character) keeps the cost at most their product, whatever the stars.
fn segment_matches(tokens: &[Token], text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    // row[j]: tokens[i..] match chars[j..]; filled from the last token backwards.
    let mut row = vec![false; chars.len() + 1];
    row[chars.len()] = true;
    for token in tokens.iter().rev() {
        let mut next = vec![false; chars.len() + 1];
        for j in (0..=chars.len()).rev() {
            next[j] = match token {
                Token::AnyRun => row[j] || (j < chars.len() && next[j + 1]),
                Token::AnyChar => j < chars.len() && row[j + 1],
                Token::Literal(c) => j < chars.len() && chars[j] == *c && row[j + 1],
            };
        }
        row = next;
    }
    row[0]
}

/// Whether `path` (vault-relative, `/` separators) matches `pattern`; see the module docs.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let segments = parse(pattern);
    let parts: Vec<&str> = path.split('/').collect();
    // row[j]: segments[i..] match parts[j..]; the same dynamic programme one level up.
    let mut row = vec![false; parts.len() + 1];
    row[parts.len()] = true;
    for segment in segments.iter().rev() {
        let mut next = vec![false; parts.len() + 1];
        for j in (0..=parts.len()).rev() {
            next[j] = match segment {
                Segment::AnyDepth => row[j] || (j < parts.len() && next[j + 1]),
                Segment::Tokens(tokens) => {
                    j < parts.len() && row[j + 1] && segment_matches(tokens, parts[j])
                }
            };
        }
        row = next;
    }
    row[0]
}

/// A pattern that matches exactly `literal`: every glob metacharacter gets a `\`. Brackets and
/// braces are escaped too although they are literal today, so such a pattern keeps its meaning
/// if classes or alternatives are ever added.
pub fn escape_glob(literal: &str) -> String {
    let mut escaped = String::with_capacity(literal.len());
    for c in literal.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '{' | '}') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(pattern: &str, matching: &[&str], not_matching: &[&str]) {
        for path in matching {
            assert!(
                glob_match(pattern, path),
                "`{pattern}` should match `{path}`"
            );
        }
        for path in not_matching {
            assert!(
                !glob_match(pattern, path),
                "`{pattern}` should not match `{path}`"
            );
        }
    }

    #[test]
    fn a_folder_with_double_star_covers_everything_inside_it() {
        check(
            "Private/**",
            &[
                "Private/a.md",
                "Private/x/y.md",
                "Private",
                "Private/.hidden",
            ],
            &[
                "Privatex.md",
                "Private.md",
                "private/a.md",
                "x/Private/a.md",
            ],
        );
    }

    #[test]
    fn a_plain_name_matches_only_itself() {
        check(
            "Private",
            &["Private"],
            &["Private/a.md", "private", "Privat", "Privatex", "x/Private"],
        );
        check(
            "Projects/Plan.md",
            &["Projects/Plan.md"],
            &["Projects/plan.md", "Plan.md", "Projects/Plan.mdx"],
        );
    }

    #[test]
    fn double_star_prefix_matches_at_any_depth_including_the_top() {
        check(
            "**/*.md",
            &["a.md", "x/a.md", "x/y/z/a.md", ".md"],
            &["a.txt", "x/a.md/b", "x/a.mdx"],
        );
        check(
            "**/Daily/*",
            &["Daily/2024.md", "a/b/Daily/2024.md"],
            &["Daily", "Daily/x/2024.md", "NotDaily/2024.md"],
        );
    }

    #[test]
    fn double_star_in_the_middle_spans_zero_or_more_folders() {
        check(
            "a/**/b.md",
            &["a/b.md", "a/x/b.md", "a/x/y/b.md"],
            &["b.md", "a/xb.md", "ab.md", "x/a/b.md"],
        );
        check("**", &["a", "a/b/c.md"], &[]);
        check("a/**/**/b", &["a/b", "a/x/b", "a/x/y/b"], &["a/x/y/c"]);
    }

    #[test]
    fn a_single_star_stays_within_one_segment() {
        check(
            "Projects/*.md",
            &["Projects/a.md", "Projects/.md", "Projects/a.b.md"],
            &["Projects/x/a.md", "Projects/a.txt", "Projects.md"],
        );
        check("*", &["a.md", "Private"], &["a/b.md"]);
        check("*a*b*", &["ab", "xaxbx", "aab"], &["ba", "a/b"]);
        // `**` inside a segment is just two stars: it does not cross a `/`.
        check("a**b", &["ab", "axyb"], &["a/b", "ax/yb"]);
    }

    #[test]
    fn a_question_mark_is_exactly_one_character() {
        check(
            "note?.md",
            &["note1.md", "noteé.md"],
            &["note.md", "note12.md", "note/.md"],
        );
        check("??", &["ab", "日本"], &["a", "abc"]);
    }

    #[test]
    fn a_backslash_makes_the_next_character_literal() {
        check(r"a\*b", &["a*b"], &["axb", "ab"]);
        check(r"what\?.md", &["what?.md"], &["whatx.md"]);
        check(r"x\\y", &[r"x\y"], &["xy"]);
        check(r"\*\*/a", &["**/a"], &["x/a", "a"]);
        check(r"end\", &[r"end\"], &["end"]);
    }

    #[test]
    fn matching_is_case_sensitive() {
        check("Notes/*.MD", &["Notes/a.MD"], &["notes/a.MD", "Notes/a.md"]);
    }

    #[test]
    fn many_stars_do_not_blow_up() {
        let pattern = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
        let text = "a".repeat(200);
        assert!(!glob_match(pattern, &text));
        let deep = "**/".repeat(30) + "z";
        assert!(!glob_match(&deep, &"a/".repeat(100)));
        assert!(glob_match(&deep, &("a/".repeat(100) + "z")));
    }

    #[test]
    fn an_escaped_literal_matches_exactly_itself() {
        for literal in [
            "Projects/Plan.md",
            "odd/*name?.md",
            r"back\slash/[x]{y}.md",
            "**/x",
        ] {
            let pattern = escape_glob(literal);
            assert!(glob_match(&pattern, literal), "{pattern} vs {literal}");
        }
        assert_eq!(escape_glob("a*b?c"), r"a\*b\?c");
        assert_eq!(escape_glob(r"[x]{y}\"), r"\[x\]\{y\}\\");
        assert!(!glob_match(&escape_glob("odd/*name?.md"), "odd/Xname!.md"));
        assert!(!glob_match(&escape_glob("**/x"), "a/x"));
        assert_eq!(escape_glob("plain/path.md"), "plain/path.md");
    }
}
