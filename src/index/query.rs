//! The search query language, translated to an FTS5 `MATCH` expression plus SQL filters.
//!
//! | syntax            | meaning                                        |
//! |-------------------|------------------------------------------------|
//! | `word other`      | notes containing both words (any order)        |
//! | `"a phrase"`      | the words next to each other                   |
//! | `a OR b`          | either (binds tighter than the implicit AND)   |
//! | `-word`, `-"p q"` | notes without it                               |
//! | `pre*`            | words starting with `pre`                      |
//! | `tag:x`, `-tag:x` | notes tagged `x` or a nested `x/…` (or not)    |
//! | `folder:a/b`      | notes under that folder (`-folder:` excludes)  |
//!
//! Every word is quoted before it reaches FTS5, so punctuation in a query (`c++`, `foo-bar`,
//! `NEAR`, `AND`) is never FTS5 syntax and can never be a syntax error.

use super::cjk;

/// A parsed query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// The FTS5 expression for the positive terms, if any.
    pub positive: Option<String>,
    /// The FTS5 expression for excluded terms, if any.
    pub negative: Option<String>,
    /// Lower-cased tags without `#` that every result must carry.
    pub tags: Vec<String>,
    pub not_tags: Vec<String>,
    /// Folder prefixes (vault-relative, no trailing `/`); a result must be under one of them.
    pub folders: Vec<String>,
    pub not_folders: Vec<String>,
    /// The positive words and phrases as typed (no filters, no exclusions), for ranking a note
    /// whose name is the query first and for highlighting matches in snippets.
    pub terms: Vec<Term>,
    /// Whether the query uses `OR` (then it is not a name).
    pub has_or: bool,
    /// How many words, phrases and filters the query has, for the limit on query size.
    pub term_count: usize,
}

/// A positive word or phrase of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// As typed (without the quotes or the `*`).
    pub text: String,
    /// `pre*`: any word starting with the text.
    pub prefix: bool,
}

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Most words, phrases and filters in one query.
pub const MAX_QUERY_TERMS: usize = 64;

/// A name as the index compares names: lower case, runs of blanks as one space, trimmed.
pub fn name_key(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

impl Query {
    /// True when the query has no text terms, only filters (or nothing at all).
    pub fn is_filter_only(&self) -> bool {
        self.positive.is_none()
    }

    /// The query as a note name would be written ([`name_key`]), when it is one: plain words
    /// and phrases, without `OR` or prefixes.
    pub fn name_key(&self) -> Option<String> {
        if self.has_or || self.terms.is_empty() || self.terms.iter().any(|t| t.prefix) {
            return None;
        }
        let joined: Vec<&str> = self.terms.iter().map(|t| t.text.as_str()).collect();
        Some(name_key(&joined.join(" "))).filter(|k| !k.is_empty())
    }

    /// True when the query would match every note.
    pub fn is_empty(&self) -> bool {
        self.positive.is_none()
            && self.negative.is_none()
            && self.tags.is_empty()
            && self.not_tags.is_empty()
            && self.folders.is_empty()
            && self.not_folders.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word { text: String, negated: bool },
    Phrase { text: String, negated: bool },
    Or,
}

/// Parse a query string. Parsing never fails: anything unusual is treated as plain words.
pub fn parse(input: &str) -> Query {
    let mut query = Query::default();
    let mut positive_groups: Vec<Vec<String>> = Vec::new();
    let mut negatives: Vec<String> = Vec::new();
    let mut pending_or = false;

    for token in tokenize(input) {
        // A searched word or phrase: its FTS5 expression, whether it is negated, and (unless
        // negated) the term to highlight.
        let (expr, negated, term) = match token {
            Token::Or => {
                pending_or = !positive_groups.is_empty();
                query.has_or |= pending_or;
                continue;
            }
            Token::Word { text, negated } => {
                query.term_count += 1;
                if let Some(filter) = filter_of(&text) {
                    apply_filter(&mut query, filter, negated);
                    pending_or = false;
                    continue;
                }
                let Some(expr) = word_expr(&text) else {
                    continue;
                };
                let term = Term {
                    text: text.trim_end_matches('*').to_string(),
                    prefix: text.ends_with('*'),
                };
                (expr, negated, term)
            }
            Token::Phrase { text, negated } => {
                query.term_count += 1;
                let Some(expr) = phrase_expr(&text) else {
                    continue;
                };
                (
                    expr,
                    negated,
                    Term {
                        text,
                        prefix: false,
                    },
                )
            }
        };
        if !negated {
            query.terms.push(term);
        }
        push_term(
            expr,
            negated,
            &mut positive_groups,
            &mut negatives,
            &mut pending_or,
        );
    }

    if !positive_groups.is_empty() {
        let groups: Vec<String> = positive_groups
            .into_iter()
            .map(|g| {
                if g.len() == 1 {
                    g.into_iter().collect()
                } else {
                    format!("({})", g.join(" OR "))
                }
            })
            .collect();
        query.positive = Some(groups.join(" AND "));
    }
    if !negatives.is_empty() {
        query.negative = Some(negatives.join(" OR "));
    }
    query
}

fn push_term(
    expr: String,
    negated: bool,
    groups: &mut Vec<Vec<String>>,
    negatives: &mut Vec<String>,
    pending_or: &mut bool,
) {
    if negated {
        negatives.push(expr);
    } else if *pending_or {
        if let Some(last) = groups.last_mut() {
            last.push(expr);
        }
    } else {
        groups.push(vec![expr]);
    }
    *pending_or = false;
}

enum Filter {
    Tag(String),
    Folder(String),
}

fn filter_of(word: &str) -> Option<Filter> {
    let (key, value) = word.split_once(':')?;
    let value = value.trim_matches('"');
    if value.is_empty() {
        return None;
    }
    match key.to_ascii_lowercase().as_str() {
        "tag" => Some(Filter::Tag(value.trim_start_matches('#').to_lowercase())),
        "folder" | "path" => Some(Filter::Folder(value.trim_matches('/').to_string())),
        _ => None,
    }
}

fn apply_filter(query: &mut Query, filter: Filter, negated: bool) {
    match (filter, negated) {
        (Filter::Tag(t), false) => query.tags.push(t),
        (Filter::Tag(t), true) => query.not_tags.push(t),
        (Filter::Folder(f), false) => query.folders.push(f),
        (Filter::Folder(f), true) => query.not_folders.push(f),
    }
}

/// Split into words and quoted phrases; `-` before either negates it; a bare `OR` is the operator.
/// `tag:"two words"` and `folder:"My Notes"` keep their quoted value.
fn tokenize(input: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = input.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut negated = false;
        if c == '-' {
            chars.next();
            match chars.peek() {
                Some(n) if !n.is_whitespace() => negated = true,
                _ => continue,
            }
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            let text: String = chars.by_ref().take_while(|&c| c != '"').collect();
            tokens.push(Token::Phrase { text, negated });
            continue;
        }
        let mut text = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            if c == '"' && text.ends_with(':') {
                // A quoted filter value: read to the closing quote.
                text.extend(chars.by_ref().take_while(|&c| c != '"'));
                break;
            }
            text.push(c);
        }
        if text == "OR" && !negated {
            tokens.push(Token::Or);
        } else {
            tokens.push(Token::Word { text, negated });
        }
    }
    tokens
}

/// Quote one FTS5 string, doubling embedded quotes.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// True when FTS5's tokenizer would find at least one token in `text`.
fn has_token_chars(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// A word, possibly with a trailing `*` for a prefix search.
fn word_expr(word: &str) -> Option<String> {
    let (stem, prefix) = match word.strip_suffix('*') {
        Some(stem) => (stem.trim_end_matches('*'), true),
        None => (word, false),
    };
    if !has_token_chars(stem) {
        return None;
    }
    let text = cjk::segment(stem).unwrap_or_else(|| stem.to_string());
    Some(if prefix {
        format!("{}*", quote(&text))
    } else {
        quote(&text)
    })
}

fn phrase_expr(phrase: &str) -> Option<String> {
    if !has_token_chars(phrase) {
        return None;
    }
    Some(quote(
        &cjk::segment(phrase).unwrap_or_else(|| phrase.to_string()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn pos(q: &str) -> Option<String> {
        parse(q).positive
    }

    #[test]
    fn words_are_anded_and_quoted() {
        assert_eq!(pos("alpha beta"), Some("\"alpha\" AND \"beta\"".into()));
        assert_eq!(pos("c++ foo-bar"), Some("\"c++\" AND \"foo-bar\"".into()));
        assert_eq!(pos("NEAR AND"), Some("\"NEAR\" AND \"AND\"".into()));
        assert_eq!(
            pos("say \"hi\"there"),
            Some("\"say\" AND \"hi\" AND \"there\"".into())
        );
    }

    #[test]
    fn phrases_prefixes_and_or() {
        assert_eq!(
            pos("\"quick brown\" fox*"),
            Some("\"quick brown\" AND \"fox\"*".into())
        );
        assert_eq!(pos("a OR b c"), Some("(\"a\" OR \"b\") AND \"c\"".into()));
        assert_eq!(pos("a OR b OR c"), Some("(\"a\" OR \"b\" OR \"c\")".into()));
        // A leading or dangling OR is ignored; lower-case `or` is a word.
        assert_eq!(pos("OR a OR"), Some("\"a\"".into()));
        assert_eq!(pos("a or b"), Some("\"a\" AND \"or\" AND \"b\"".into()));
    }

    #[test]
    fn exclusions() {
        let q = parse("plan -draft -\"old stuff\"");
        assert_eq!(q.positive, Some("\"plan\"".into()));
        assert_eq!(q.negative, Some("\"draft\" OR \"old stuff\"".into()));
        let q = parse("-draft");
        assert_eq!(q.positive, None);
        assert_eq!(q.negative, Some("\"draft\"".into()));
        // A lone dash is not an exclusion of nothing.
        assert_eq!(parse("a - b").positive, Some("\"a\" AND \"b\"".into()));
    }

    #[test]
    fn filters() {
        let q = parse(
            "tag:#Project tag:a/b -tag:draft folder:Projects/alpha/ -folder:\"My Archive\" x",
        );
        assert_eq!(q.tags, vec!["project", "a/b"]);
        assert_eq!(q.not_tags, vec!["draft"]);
        assert_eq!(q.folders, vec!["Projects/alpha"]);
        assert_eq!(q.not_folders, vec!["My Archive"]);
        assert_eq!(q.positive, Some("\"x\"".into()));
        assert!(parse("tag:x").is_filter_only());
        // Unknown keys and empty values are ordinary words.
        assert_eq!(pos("http://x"), Some("\"http://x\"".into()));
        assert_eq!(pos("tag:"), Some("\"tag:\"".into()));
    }

    #[test]
    fn punctuation_only_terms_vanish() {
        assert_eq!(parse("& -- ***").positive, None);
        assert!(parse("   ").is_empty());
        assert_eq!(pos("\"\""), None);
    }

    #[test]
    fn names_and_terms() {
        assert_eq!(
            parse("  Tar   Archive ").name_key().as_deref(),
            Some("tar archive")
        );
        assert_eq!(
            parse("\"Properties\" tag:x").name_key().as_deref(),
            Some("properties")
        );
        assert_eq!(parse("a OR b").name_key(), None);
        assert_eq!(parse("pre*").name_key(), None);
        assert_eq!(parse("-x tag:y").name_key(), None);
        let q = parse("alpha -beta \"two words\" pre* folder:x");
        assert_eq!(
            q.terms,
            vec![
                Term {
                    text: "alpha".into(),
                    prefix: false
                },
                Term {
                    text: "two words".into(),
                    prefix: false
                },
                Term {
                    text: "pre".into(),
                    prefix: true
                },
            ]
        );
        assert_eq!(q.term_count, 5);
        assert_eq!(name_key("Ärger  IM\tBüro"), "ärger im büro");
    }

    #[test]
    fn cjk_terms_become_character_phrases() {
        assert_eq!(
            pos("日本語"),
            Some("\"日\u{200B}本\u{200B}語\u{200B}\"".into())
        );
    }
}
