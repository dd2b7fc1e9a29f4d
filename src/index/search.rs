//! Running a query against the index.

use super::query::{self, Query};
use super::{Index, IndexError, snippet};
use rusqlite::types::Value;
use std::time::{Duration, Instant};

/// The longest a search may run before it is stopped (checked by SQLite's progress handler, so a
/// runaway query becomes an error instead of a stalled server).
pub const SEARCH_DEADLINE: Duration = Duration::from_secs(10);

/// SQLite virtual-machine steps between deadline checks.
const PROGRESS_STEPS: i32 = 20_000;

/// BM25 weights per column (title, aliases, path, tags, body): a word in the title or in an alias
/// says far more about a note than the same word somewhere in its body. Called directly rather
/// than configured as FTS5's `rank`: a configured rank makes FTS5 prepare an extra internal
/// statement on every query, measured at a fifth of a short search's instructions.
const BM25: &str = "bm25(notes_fts, 10.0, 8.0, 3.0, 5.0, 1.0)";

/// One search result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchHit {
    pub path: String,
    pub title: String,
    /// Text around the best match, as one line of plain text.
    pub snippet: String,
    /// Where the matches are in `snippet`: `[start, end)` in characters (Unicode scalar values).
    pub highlights: Vec<[usize; 2]>,
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
    ///
    /// Ranking: a note whose title, file name or alias is the query (case-insensitive) comes first;
    /// then notes with a name starting with the query or holding it as whole words; then, for
    /// queries of several words, notes holding them side by side; then BM25 with field weights.
    /// A newer note wins a tie. Work is bounded: snippets are made for the returned page only, the
    /// query's size is limited and a deadline stops a runaway.
    pub fn search(&mut self, text: &str, limit: usize) -> Result<SearchResults, IndexError> {
        let chars = text.chars().count();
        let query = query::parse(text);
        if chars > query::MAX_QUERY_CHARS || query.term_count > query::MAX_QUERY_TERMS {
            return Err(IndexError::QueryTooLong {
                chars,
                terms: query.term_count,
            });
        }
        let deadline = Instant::now() + SEARCH_DEADLINE;
        self.conn
            .progress_handler(PROGRESS_STEPS, Some(move || Instant::now() > deadline))?;
        let result = self.search_parsed(&query, limit);
        self.conn.progress_handler(0, None::<fn() -> bool>)?;
        result.map_err(|e| match e {
            IndexError::Sql(rusqlite::Error::SqliteFailure(err, _))
                if err.code == rusqlite::ErrorCode::OperationInterrupted =>
            {
                IndexError::QueryTimeout
            }
            other => other,
        })
    }

    fn search_parsed(&self, query: &Query, limit: usize) -> Result<SearchResults, IndexError> {
        let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
        // One read transaction for the hits and the count: one lock cycle, one consistent view.
        let read = self.conn.unchecked_transaction()?;
        let (filters, mut args) = filter_sql(query);
        let (results, total) = match &query.positive {
            Some(positive) => {
                let expr = match &query.negative {
                    Some(neg) => format!("({positive}) NOT ({neg})"),
                    None => positive.clone(),
                };
                let mut match_args = vec![Value::Text(expr)];
                match_args.append(&mut args);
                let filter_args = match_args.len();
                let (tier_sql, tier_args) = tier_sql(query, filter_args + 1);
                let mut ranked_args = match_args.clone();
                ranked_args.extend(tier_args);
                // Rank first, without snippets: only the returned page gets one.
                let hits_sql = format!(
                    "SELECT n.id, n.path, n.title, {BM25} AS score, {tier_sql} AS tier
                     FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid
                     WHERE notes_fts MATCH ?1{filters}
                     ORDER BY tier, score, n.mtime_ns DESC LIMIT {limit}"
                );
                let hits = self.ranked_hits(&hits_sql, &ranked_args, query)?;
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
                    "SELECT n.path, n.title, substr(f.body, 1, 400)
                     FROM notes n JOIN notes_fts f ON f.rowid = n.id
                     WHERE {where_sql}{filters}
                     ORDER BY n.title COLLATE NOCASE, n.path LIMIT {limit}"
                );
                let hits = self.listed_hits(&hits_sql, &all_args)?;
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

    /// The ranked page, each hit with a snippet made from its body.
    fn ranked_hits(
        &self,
        sql: &str,
        args: &[Value],
        query: &Query,
    ) -> Result<Vec<SearchHit>, IndexError> {
        let rows: Vec<(i64, String, String, f64)> = {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
            rows.collect::<Result<_, _>>()?
        };
        let mut body_stmt = self
            .conn
            .prepare_cached("SELECT body FROM notes_fts WHERE rowid = ?1")?;
        rows.into_iter()
            .map(|(id, path, title, rank)| {
                let body: String = body_stmt.query_row([id], |r| r.get(0))?;
                let snippet = snippet::make(&body, &query.terms);
                Ok(SearchHit {
                    path,
                    title,
                    snippet: snippet.text,
                    highlights: snippet.highlights,
                    score: -rank,
                })
            })
            .collect()
    }

    /// Hits of a filter-only query: the beginning of each note as its snippet.
    fn listed_hits(&self, sql: &str, args: &[Value]) -> Result<Vec<SearchHit>, IndexError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            let start: String = r.get(2)?;
            let snippet = snippet::make(&start, &[]);
            Ok(SearchHit {
                path: r.get(0)?,
                title: r.get(1)?,
                snippet: snippet.text,
                highlights: Vec::new(),
                score: 0.0,
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

/// Most query words whose runs are tried as note names (tier 2); longer queries are rarely names.
const NAME_RUN_WORDS: usize = 8;

/// The ranking tier of a row (0 best) and its arguments, numbered from `?first`:
/// 0. the query is a name of the note (title, file name or alias);
/// 1. a name of the note starts with the query, or holds it as whole words;
/// 2. a name of the note is some of the query's words (`tar` for "tar archive");
/// 3. the query's words stand side by side in the note;
/// 4. anything else.
fn tier_sql(query: &Query, first: usize) -> (String, Vec<Value>) {
    let Some(key) = query.name_key() else {
        return ("4".into(), Vec::new());
    };
    let mut args = vec![Value::Text(key.clone())];
    let k = format!("?{first}");
    let mut sql = format!(
        "CASE WHEN instr(n.name_keys, char(1) || {k} || char(1)) > 0 THEN 0 \
         WHEN instr(n.name_keys, char(1) || {k}) > 0 OR instr(n.name_keys, ' ' || {k}) > 0 THEN 1"
    );
    let words: Vec<&str> = key.split(' ').collect();
    if words.len() > 1 && words.len() <= NAME_RUN_WORDS {
        let mut runs = Vec::new();
        for start in 0..words.len() {
            for end in start + 1..=words.len() {
                if end - start < words.len() {
                    runs.push(words[start..end].join(" "));
                }
            }
        }
        let tests: Vec<String> = runs
            .into_iter()
            .map(|run| {
                args.push(Value::Text(format!("\u{1}{run}\u{1}")));
                format!("instr(n.name_keys, ?{}) > 0", first + args.len() - 1)
            })
            .collect();
        sql.push_str(&format!(" WHEN {} THEN 2", tests.join(" OR ")));
    }
    if query.terms.len() > 1 {
        let texts: Vec<&str> = query.terms.iter().map(|t| t.text.as_str()).collect();
        if let Some(phrase) = query::parse(&format!("\"{}\"", texts.join(" "))).positive {
            args.push(Value::Text(phrase));
            sql.push_str(&format!(
                " WHEN n.id IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?{}) THEN 3",
                first + args.len() - 1
            ));
        }
    }
    sql.push_str(" ELSE 4 END");
    (sql, args)
}

fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
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
}
