//! Token usage of model responses, and the sums `vaultchat usage` reports.

use super::{Store, StoreError};
use rusqlite::params;

/// The usage of one model response, to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRecord<'a> {
    pub session_id: &'a str,
    /// When the response finished, unix milliseconds.
    pub at_ms: i64,
    pub provider: &'a str,
    pub model: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The counts are vaultchat's estimate: the provider reported none.
    pub estimated: bool,
}

pub use crate::protocol::TokenTotals;

impl TokenTotals {
    /// What these tokens cost at `price`, in dollars.
    pub fn cost(&self, price: &crate::config::Price) -> f64 {
        price.cost(
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
        )
    }

    /// Add another set of totals to this one.
    pub fn add(&mut self, other: &TokenTotals) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.responses += other.responses;
        self.estimated_responses += other.estimated_responses;
    }

    /// Whether any of the counts summed is an estimate, so the sums are too.
    pub fn is_estimated(&self) -> bool {
        self.estimated_responses > 0
    }

    /// Every token counted, of all four kinds.
    pub fn all_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

pub use crate::protocol::{CostEstimate, DayUsage};

/// The cost of `days` at the prices `price_of` gives each `provider/model` (the config's, else
/// the built-in list prices: `Config::price_of`), with where each model's price came from.
pub fn estimate_cost(
    days: &[DayUsage],
    price_of: impl Fn(&str) -> Option<crate::config::ModelPrice>,
) -> CostEstimate {
    let mut estimate = CostEstimate::default();
    let mut seen = std::collections::BTreeMap::new();
    for day in days {
        for (model, totals) in &day.by_model {
            let price = price_of(model);
            if let Some(p) = &price {
                estimate.usd += totals.cost(&p.price);
            }
            seen.insert(model.clone(), price.map(|p| p.source));
        }
    }
    estimate.models = seen.into_iter().collect();
    estimate
}

/// The sums of a [`TokenTotals`], in its field order, for queries over `usage`.
const TOTALS_COLUMNS: &str = "ifnull(sum(input_tokens), 0), ifnull(sum(output_tokens), 0),
    ifnull(sum(cache_read_tokens), 0), ifnull(sum(cache_write_tokens), 0), count(*),
    ifnull(sum(estimated), 0)";

/// Read [`TOTALS_COLUMNS`] starting at column `first`.
fn totals_from_row(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<TokenTotals> {
    let count = |i| r.get::<_, i64>(first + i).map(i64::unsigned_abs);
    Ok(TokenTotals {
        input_tokens: count(0)?,
        output_tokens: count(1)?,
        cache_read_tokens: count(2)?,
        cache_write_tokens: count(3)?,
        responses: count(4)?,
        estimated_responses: count(5)?,
    })
}

/// Token counts are u64 in the API and INTEGER (i64) in SQLite; no real count comes near the limit.
fn to_sql_count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    /// Record the usage of one model response.
    pub fn record_usage(&self, u: &UsageRecord<'_>) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO usage (session_id, at_ms, provider, model, input_tokens, output_tokens,
                                cache_read_tokens, cache_write_tokens, estimated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                u.session_id,
                u.at_ms,
                u.provider,
                u.model,
                to_sql_count(u.input_tokens),
                to_sql_count(u.output_tokens),
                to_sql_count(u.cache_read_tokens),
                to_sql_count(u.cache_write_tokens),
                u.estimated
            ],
        )?;
        Ok(())
    }

    /// Usage per UTC day from `since_ms` on, oldest day first; days without usage are left out.
    pub fn usage_by_day(&self, since_ms: i64) -> Result<Vec<DayUsage>, StoreError> {
        let sql = format!(
            "SELECT strftime('%Y-%m-%d', at_ms / 1000, 'unixepoch') AS day, provider || '/' || model AS name,
                    {TOTALS_COLUMNS}
             FROM usage WHERE at_ms >= ?1 GROUP BY day, name ORDER BY day, name"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([since_ms], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                totals_from_row(r, 2)?,
            ))
        })?;
        let mut days: Vec<DayUsage> = Vec::new();
        for row in rows {
            let (day, name, totals) = row?;
            match days.last_mut() {
                Some(last) if last.day == day => {
                    last.totals.add(&totals);
                    last.by_model.push((name, totals));
                }
                _ => days.push(DayUsage {
                    day,
                    totals,
                    by_model: vec![(name, totals)],
                }),
            }
        }
        Ok(days)
    }

    /// Usage summed over everything from `since_ms` on.
    pub fn usage_totals(&self, since_ms: i64) -> Result<TokenTotals, StoreError> {
        let sql = format!("SELECT {TOTALS_COLUMNS} FROM usage WHERE at_ms >= ?1");
        Ok(self
            .conn
            .query_row(&sql, [since_ms], |r| totals_from_row(r, 0))?)
    }

    /// The sessions that used the most tokens (all four kinds together) from `since_ms` on, as
    /// (id, title, totals), at most `limit`. Only usage since `since_ms` counts.
    pub fn usage_by_session(
        &self,
        since_ms: i64,
        limit: usize,
    ) -> Result<Vec<(String, String, TokenTotals)>, StoreError> {
        let sql = format!(
            "SELECT s.id, s.title, {TOTALS_COLUMNS}
             FROM usage u JOIN sessions s ON s.id = u.session_id
             WHERE u.at_ms >= ?1
             GROUP BY s.id
             ORDER BY sum(input_tokens) + sum(output_tokens) + sum(cache_read_tokens)
                      + sum(cache_write_tokens) DESC, s.id
             LIMIT ?2"
        );
        self.query_rows(
            &sql,
            params![since_ms, i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| Ok((r.get(0)?, r.get(1)?, totals_from_row(r, 2)?)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewSession;

    /// 2024-03-01T00:00:00Z in unix milliseconds.
    const MARCH_1: i64 = 1_709_251_200_000;
    const DAY: i64 = 86_400_000;

    use crate::store::test_store as store;

    fn session(store: &Store, title: &str) -> String {
        let id = store
            .create_session(&NewSession {
                vault_id: "v",
                provider: "anthropic",
                model: "m",
                now_ms: MARCH_1,
            })
            .unwrap();
        store.set_session_title(&id, title).unwrap();
        id
    }

    fn record(store: &Store, session_id: &str, at_ms: i64, model: &str, tokens: [u64; 4]) {
        store
            .record_usage(&UsageRecord {
                session_id,
                at_ms,
                provider: "anthropic",
                model,
                input_tokens: tokens[0],
                output_tokens: tokens[1],
                cache_read_tokens: tokens[2],
                cache_write_tokens: tokens[3],
                estimated: false,
            })
            .unwrap();
    }

    fn totals(tokens: [u64; 4], responses: u64) -> TokenTotals {
        TokenTotals {
            input_tokens: tokens[0],
            output_tokens: tokens[1],
            cache_read_tokens: tokens[2],
            cache_write_tokens: tokens[3],
            responses,
            estimated_responses: 0,
        }
    }

    #[test]
    fn usage_of_an_unknown_session_is_refused() {
        let (_dir, store) = store();
        let err = store
            .record_usage(&UsageRecord {
                session_id: "nope",
                at_ms: 1,
                provider: "p",
                model: "m",
                input_tokens: 1,
                output_tokens: 1,
                cache_read_tokens: 1,
                cache_write_tokens: 1,
                estimated: false,
            })
            .unwrap_err();
        assert!(err.to_string().contains("FOREIGN KEY"), "{err}");
    }

    #[test]
    fn totals_are_the_sums_since_the_given_time() {
        let (_dir, store) = store();
        let a = session(&store, "a");
        let b = session(&store, "b");
        record(&store, &a, MARCH_1 - 1, "m", [1000, 1000, 1000, 1000]);
        record(&store, &a, MARCH_1, "m", [1, 2, 3, 4]);
        record(&store, &b, MARCH_1 + DAY, "m", [10, 20, 30, 40]);
        assert_eq!(
            store.usage_totals(MARCH_1).unwrap(),
            totals([11, 22, 33, 44], 2)
        );
        assert_eq!(
            store.usage_totals(0).unwrap(),
            totals([1011, 1022, 1033, 1044], 3)
        );
        assert_eq!(
            store.usage_totals(MARCH_1 + 2 * DAY).unwrap(),
            TokenTotals::default()
        );
    }

    #[test]
    fn days_are_utc_oldest_first_with_per_model_sums_that_add_up() {
        let (_dir, store) = store();
        let a = session(&store, "a");
        record(&store, &a, MARCH_1 - DAY, "old", [9, 9, 9, 9]);
        // The last millisecond of 1 March and the first of 2 March fall on different days.
        record(&store, &a, MARCH_1 + DAY - 1, "sonnet", [1, 1, 0, 0]);
        record(&store, &a, MARCH_1, "haiku", [2, 0, 0, 5]);
        record(&store, &a, MARCH_1 + 10, "sonnet", [3, 1, 7, 0]);
        record(&store, &a, MARCH_1 + DAY, "sonnet", [4, 4, 4, 4]);
        let days = store.usage_by_day(MARCH_1).unwrap();
        assert_eq!(
            days,
            vec![
                DayUsage {
                    day: "2024-03-01".into(),
                    totals: totals([6, 2, 7, 5], 3),
                    by_model: vec![
                        ("anthropic/haiku".into(), totals([2, 0, 0, 5], 1)),
                        ("anthropic/sonnet".into(), totals([4, 2, 7, 0], 2)),
                    ],
                },
                DayUsage {
                    day: "2024-03-02".into(),
                    totals: totals([4, 4, 4, 4], 1),
                    by_model: vec![("anthropic/sonnet".into(), totals([4, 4, 4, 4], 1))],
                },
            ]
        );
        let mut summed = TokenTotals::default();
        for day in &days {
            summed.add(&day.totals);
        }
        assert_eq!(summed, store.usage_totals(MARCH_1).unwrap());
        assert!(store.usage_by_day(MARCH_1 + 5 * DAY).unwrap().is_empty());
    }

    #[test]
    fn sessions_are_ranked_by_all_their_tokens_since_the_given_time() {
        let (_dir, store) = store();
        let small = session(&store, "small");
        let big = session(&store, "big");
        let early = session(&store, "early");
        record(&store, &small, MARCH_1, "m", [5, 5, 0, 0]);
        record(&store, &big, MARCH_1, "m", [1, 1, 100, 0]);
        record(&store, &big, MARCH_1 + 1, "m", [1, 1, 0, 0]);
        // Heavy, but before the window: it neither counts nor ranks.
        record(&store, &early, MARCH_1 - 1, "m", [20_000, 0, 0, 0]);
        record(&store, &small, MARCH_1 - 1, "m", [9999, 0, 0, 0]);
        let ranked = store.usage_by_session(MARCH_1, 10).unwrap();
        assert_eq!(
            ranked,
            vec![
                (big.clone(), "big".to_string(), totals([2, 2, 100, 0], 2)),
                (small, "small".to_string(), totals([5, 5, 0, 0], 1)),
            ]
        );
        let top = store.usage_by_session(MARCH_1, 1).unwrap();
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].0, big);
        assert_eq!(
            store.usage_by_session(0, 10).unwrap()[0].1,
            "early",
            "with the whole history, the early session is the biggest"
        );
    }

    #[test]
    fn totals_add_and_count_all_tokens() {
        let mut t = totals([1, 2, 3, 4], 1);
        t.add(&totals([10, 20, 30, 40], 2));
        assert_eq!(t, totals([11, 22, 33, 44], 3));
        assert_eq!(t.all_tokens(), 110);
    }
}
