//! Running a query against the index.

use super::query::{self, Query};
use super::{Index, IndexError, cjk};
use rusqlite::types::Value;

/// BM25 weights per column (title, aliases, path, tags, body): a word in the title or in an alias
/// says far more about a note than the same word somewhere in its body. Called directly rather
/// than configured as FTS5's `rank`: a configured rank makes FTS5 prepare an extra internal
/// statement on every query, measured at a fifth of a short search's instructions.
const BM25: &str = "bm25(notes_fts, 10.0, 8.0, 3.0, 5.0, 1.0)";

/// Tokens of context on each side of a match in a snippet.
const SNIPPET_TOKENS: i64 = 12;

/// One search result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchHit {
    pub path: String,
    pub title: String,
    /// Text around the best match, with matches marked `**like this**`.
    pub snippet: String,
    /// Higher is better (negated BM25); 0 for filter-only queries.
    pub score: f64,
}

/// The results of one query: the best `limit` hits and how many notes matched in all.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchResults {
    pub results: Vec<SearchHit>,
    pub total: u64,
}

impl Index {
    /// Search with the query language of [`super::query`]. `limit` is clamped to at least 1.
    pub fn search(&self, text: &str, limit: usize) -> Result<SearchResults, IndexError> {
        let query = query::parse(text);
        let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
        // One read transaction for the hits and the count: one lock cycle, one consistent view.
        let read = self.conn.unchecked_transaction()?;
        let (filters, mut args) = filter_sql(&query);
        let (results, total) = match &query.positive {
            Some(positive) => {
                let expr = match &query.negative {
                    Some(neg) => format!("({positive}) NOT ({neg})"),
                    None => positive.clone(),
                };
                let mut match_args = vec![Value::Text(expr)];
                match_args.append(&mut args);
                let hits_sql = format!(
                    "SELECT n.path, n.title, snippet(notes_fts, -1, '**', '**', '…', {SNIPPET_TOKENS}), {BM25} AS score
                     FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid
                     WHERE notes_fts MATCH ?1{filters}
                     ORDER BY score LIMIT {limit}"
                );
                let hits = self.collect_hits(&hits_sql, &match_args, true)?;
                let total = if (hits.len() as i64) < limit {
                    hits.len() as u64
                } else {
                    let count_sql = format!(
                        "SELECT count(*) FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid
                         WHERE notes_fts MATCH ?1{filters}"
                    );
                    self.count(&count_sql, &match_args)?
                };
                (hits, total)
            }
            None => {
                // Only filters (and perhaps exclusions): list the matching notes by title.
                let mut where_sql = String::from("1");
                let mut all_args = Vec::new();
                if let Some(neg) = &query.negative {
                    where_sql.push_str(
                        " AND n.id NOT IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?1)",
                    );
                    all_args.push(Value::Text(neg.clone()));
                }
                let filters = renumber(&filters, all_args.len());
                all_args.append(&mut args);
                let hits_sql = format!(
                    "SELECT n.path, n.title, substr(f.body, 1, 200), 0.0
                     FROM notes n JOIN notes_fts f ON f.rowid = n.id
                     WHERE {where_sql}{filters}
                     ORDER BY n.title COLLATE NOCASE, n.path LIMIT {limit}"
                );
                let hits = self.collect_hits(&hits_sql, &all_args, false)?;
                let count_sql = format!("SELECT count(*) FROM notes n WHERE {where_sql}{filters}");
                let total = self.count(&count_sql, &all_args)?;
                (hits, total)
            }
        };
        read.commit()?;
        Ok(SearchResults { results, total })
    }

    /// Search, then make sure no result points at a note that changed since the last sync; if one
    /// did, re-index those notes and search again. This keeps `vaultchat search` honest without
    /// paying for a full stat pass of the vault on every query.
    pub fn search_fresh(&mut self, text: &str, limit: usize) -> Result<SearchResults, IndexError> {
        let results = self.search(text, limit)?;
        let paths: Vec<&str> = results.results.iter().map(|h| h.path.as_str()).collect();
        if self.is_fresh(&paths)? {
            return Ok(results);
        }
        let stale: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        self.sync_paths(&stale)?;
        self.search(text, limit)
    }

    fn collect_hits(
        &self,
        sql: &str,
        args: &[Value],
        ranked: bool,
    ) -> Result<Vec<SearchHit>, IndexError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            let snippet: String = r.get(2)?;
            let rank: f64 = r.get(3)?;
            Ok(SearchHit {
                path: r.get(0)?,
                title: r.get(1)?,
                snippet: tidy_snippet(&snippet, !ranked),
                score: if ranked { -rank } else { 0.0 },
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn count(&self, sql: &str, args: &[Value]) -> Result<u64, IndexError> {
        let n: i64 = self
            .conn
            .prepare_cached(sql)?
            .query_row(rusqlite::params_from_iter(args), |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// SQL conditions (each starting with ` AND `) for the query's tag and folder filters, with
/// placeholders numbered from ?2 (?1 is the MATCH expression).
fn filter_sql(query: &Query) -> (String, Vec<Value>) {
    let mut sql = String::new();
    let mut args: Vec<Value> = Vec::new();
    let next = |args: &mut Vec<Value>, v: String| {
        args.push(Value::Text(v));
        format!("?{}", args.len() + 1)
    };
    for (tags, negate) in [(&query.tags, false), (&query.not_tags, true)] {
        for tag in tags {
            let exact = next(&mut args, tag.clone());
            // Nested tags: `a` also matches `a/b`. '0' sorts right after '/', so the range is
            // every tag starting with "a/" and can use the primary key.
            let lo = next(&mut args, format!("{tag}/"));
            let hi = next(&mut args, format!("{tag}0"));
            sql.push_str(&format!(
                " AND n.id {}IN (SELECT note_id FROM note_tags WHERE tag = {exact} OR (tag >= {lo} AND tag < {hi}))",
                if negate { "NOT " } else { "" }
            ));
        }
    }
    if !query.folders.is_empty() {
        let mut alternatives = Vec::new();
        for folder in &query.folders {
            let p = next(&mut args, format!("{}/%", escape_like(folder)));
            alternatives.push(format!("n.path LIKE {p} ESCAPE '\\'"));
        }
        sql.push_str(&format!(" AND ({})", alternatives.join(" OR ")));
    }
    for folder in &query.not_folders {
        let p = next(&mut args, format!("{}/%", escape_like(folder)));
        sql.push_str(&format!(" AND n.path NOT LIKE {p} ESCAPE '\\'"));
    }
    (sql, args)
}

/// Shift placeholders written for "?1 is MATCH" when there is no MATCH argument before them.
fn renumber(sql: &str, leading_args: usize) -> String {
    if leading_args == 1 {
        return sql.to_string();
    }
    // Placeholders were numbered from ?2; with no leading argument they start at ?1.
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(pos) = rest.find('?') {
        out.push_str(&rest[..pos + 1]);
        rest = &rest[pos + 1..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let n: usize = digits.parse().unwrap_or(1);
        out.push_str(&(n + leading_args - 1).to_string());
        rest = &rest[digits.len()..];
    }
    out.push_str(rest);
    out
}

fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// One line of readable text: no index separators, no line breaks, no runs of spaces.
fn tidy_snippet(snippet: &str, add_ellipsis: bool) -> String {
    let text = cjk::unsegment(snippet);
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    if add_ellipsis && snippet.chars().count() >= 200 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbering_placeholders() {
        assert_eq!(renumber("a ?2 b ?3 ?12", 0), "a ?1 b ?2 ?11");
        assert_eq!(renumber("a ?2", 1), "a ?2");
    }

    #[test]
    fn like_patterns_are_escaped() {
        assert_eq!(escape_like("a_b%c\\"), "a\\_b\\%c\\\\");
    }

    #[test]
    fn snippets_are_one_tidy_line() {
        assert_eq!(
            tidy_snippet("日\u{200B}本 **x**\n\n  y", false),
            "日本 **x** y"
        );
    }
}
