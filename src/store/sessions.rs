//! Chat sessions and their messages.

use super::usage::TokenTotals;
use super::{Store, StoreError};
use rusqlite::{OptionalExtension, TransactionBehavior, params};

/// The fewest characters of a session id that [`Store::resolve_session_id`] accepts as a prefix;
/// shorter ones would match many sessions in a long history and pick one by accident.
pub const MIN_SESSION_PREFIX: usize = 4;

/// How many fresh ids [`Store::create_session`] tries before giving up on a collision.
const ID_ATTEMPTS: usize = 4;

/// A session to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession<'a> {
    /// The vault the session belongs to (`vaults.id`).
    pub vault_id: &'a str,
    /// The provider the session starts with; empty when not known.
    pub provider: &'a str,
    /// The model the session starts with; empty when not known.
    pub model: &'a str,
    /// Creation time, unix milliseconds.
    pub now_ms: i64,
}

/// One stored message of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Position in the session: 1 for the first message.
    pub seq: i64,
    /// `user` or `assistant`.
    pub role: String,
    /// The JSON array of content blocks, as the agent stored it.
    pub content_json: String,
    /// When it was appended, unix milliseconds.
    pub at_ms: i64,
}

pub use crate::protocol::SessionSummary;

/// The columns of a [`SessionSummary`], for every query that returns one (`s` is `sessions`).
/// The counts are correlated subqueries so that a `LIMIT` bounds the work to the rows returned.
const SUMMARY_COLUMNS: &str =
    "s.id, s.vault_id, s.title, s.provider, s.model, s.created_ms, s.updated_ms,
    (SELECT count(*) FROM messages m WHERE m.session_id = s.id),
    (SELECT ifnull(sum(input_tokens), 0) FROM usage u WHERE u.session_id = s.id),
    (SELECT ifnull(sum(output_tokens), 0) FROM usage u WHERE u.session_id = s.id),
    (SELECT ifnull(sum(cache_read_tokens), 0) FROM usage u WHERE u.session_id = s.id),
    (SELECT ifnull(sum(cache_write_tokens), 0) FROM usage u WHERE u.session_id = s.id),
    (SELECT count(*) FROM usage u WHERE u.session_id = s.id),
    (SELECT ifnull(sum(estimated), 0) FROM usage u WHERE u.session_id = s.id),
    s.parent_id";

/// Newest activity first; ties (same millisecond) by creation, then id, so the order is stable.
const NEWEST_FIRST: &str = "ORDER BY s.updated_ms DESC, s.created_ms DESC, s.id DESC";

fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionSummary> {
    let count = |i| r.get::<_, i64>(i).map(i64::unsigned_abs);
    Ok(SessionSummary {
        id: r.get(0)?,
        vault_id: r.get(1)?,
        title: r.get(2)?,
        provider: r.get(3)?,
        model: r.get(4)?,
        created_ms: r.get(5)?,
        updated_ms: r.get(6)?,
        messages: count(7)?,
        usage: TokenTotals {
            input_tokens: count(8)?,
            output_tokens: count(9)?,
            cache_read_tokens: count(10)?,
            cache_write_tokens: count(11)?,
            responses: count(12)?,
            estimated_responses: count(13)?,
        },
        parent_id: r.get(14)?,
    })
}

/// An FTS5 query in which every word is a quoted prefix term (`"plan"* "trip"*`): quoting makes
/// FTS5 syntax characters plain text; the prefix finds words while they are still being typed.
/// Words without a letter or digit are left out: the tokenizer would drop them anyway, and an
/// empty phrase is an error in some FTS5 versions.
fn fts_prefix_query(words: &[&str]) -> String {
    words
        .iter()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(|w| format!("\"{}\"*", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Sixteen lower-case hex digits, random ([`crate::id::hex64`]). The format is the one stored
/// sessions already have: `ask --session` and `vaultchat sessions` accept a prefix of at least
/// `MIN_SESSION_PREFIX` digits and look it up lower-cased, so a new id stays short, all digits
/// random (people type its start) and lower-case.
fn new_session_id() -> String {
    crate::id::hex64()
}

fn is_primary_key_clash(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(e, _)
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
    )
}

/// The roles the `messages` table accepts.
fn check_role(role: &str) -> Result<(), StoreError> {
    match role {
        "user" | "assistant" => Ok(()),
        _ => Err(StoreError::InvalidValue {
            what: "message role",
            value: role.to_string(),
            allowed: "`user` or `assistant`",
        }),
    }
}

impl Store {
    /// Create a session and return its new id.
    pub fn create_session(&self, s: &NewSession<'_>) -> Result<String, StoreError> {
        self.create_session_with_ids(s, new_session_id)
    }

    /// [`Store::create_session`] with the id source as a parameter, so that tests can force a
    /// collision. A clash with an existing id (vanishingly rare with 64 random bits) draws a new
    /// id.
    fn create_session_with_ids(
        &self,
        s: &NewSession<'_>,
        mut next_id: impl FnMut() -> String,
    ) -> Result<String, StoreError> {
        let mut attempt = 0;
        loop {
            let id = next_id();
            let inserted = self.conn.execute(
                "INSERT INTO sessions (id, vault_id, provider, model, created_ms, updated_ms)
                 VALUES (?1, ?2, nullif(?3, ''), nullif(?4, ''), ?5, ?5)",
                params![id, s.vault_id, s.provider, s.model, s.now_ms],
            );
            match inserted {
                Ok(_) => return Ok(id),
                Err(e) if is_primary_key_clash(&e) && attempt + 1 < ID_ATTEMPTS => attempt += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Give a session its title (shown in lists and the picker).
    pub fn set_session_title(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let changed = self.conn.execute(
            "UPDATE sessions SET title = ?2 WHERE id = ?1",
            params![id, title],
        )?;
        if changed == 0 {
            return Err(StoreError::UnknownSession { id: id.to_string() });
        }
        Ok(())
    }

    /// Append a message to a session and return its position (1 for the first). `search_text` is
    /// the plain text of the message's text blocks, kept for full-text search; the session's
    /// `updated_ms` moves to `now_ms` (never backwards).
    pub fn append_message(
        &self,
        session_id: &str,
        role: &str,
        content_json: &str,
        search_text: &str,
        now_ms: i64,
    ) -> Result<i64, StoreError> {
        check_role(role)?;
        // IMMEDIATE takes the write lock before reading the last seq, so two writers cannot both
        // pick the same next seq.
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let touched = tx.execute(
            "UPDATE sessions SET updated_ms = max(updated_ms, ?2) WHERE id = ?1",
            params![session_id, now_ms],
        )?;
        if touched == 0 {
            return Err(StoreError::UnknownSession {
                id: session_id.to_string(),
            });
        }
        let seq: i64 = tx.query_row(
            "SELECT ifnull(max(seq), 0) + 1 FROM messages WHERE session_id = ?1",
            [session_id],
            |r| r.get(0),
        )?;
        tx.execute(
            "INSERT INTO messages (session_id, seq, role, content, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![session_id, seq, role, content_json, now_ms],
        )?;
        if !search_text.trim().is_empty() {
            tx.execute(
                "INSERT INTO message_text (rowid, text) VALUES (?1, ?2)",
                params![tx.last_insert_rowid(), search_text],
            )?;
        }
        tx.commit()?;
        Ok(seq)
    }

    /// Every message of a session, in order (empty for an unknown session).
    pub fn session_messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.query_rows(
            "SELECT seq, role, content, at_ms FROM messages WHERE session_id = ?1 ORDER BY seq",
            [session_id],
            |r| {
                Ok(StoredMessage {
                    seq: r.get(0)?,
                    role: r.get(1)?,
                    content_json: r.get(2)?,
                    at_ms: r.get(3)?,
                })
            },
        )
    }

    /// Remember how tool call `call_id` of a session was decided (`decision` is the agent's word
    /// for it, e.g. `approved_once`; the store does not interpret it). A second record for the
    /// same call replaces the first.
    pub fn record_tool_decision(
        &self,
        session_id: &str,
        call_id: &str,
        decision: &str,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT OR REPLACE INTO tool_decisions (session_id, call_id, decision) VALUES (?1, ?2, ?3)",
            params![session_id, call_id, decision],
        )?;
        Ok(())
    }

    /// The recorded decisions of a session's tool calls, as `(call_id, decision)`.
    pub fn tool_decisions(&self, session_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        self.query_rows(
            "SELECT call_id, decision FROM tool_decisions WHERE session_id = ?1 ORDER BY call_id",
            [session_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// The session with exactly this id, with its counts.
    pub fn session(&self, id: &str) -> Result<Option<SessionSummary>, StoreError> {
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM sessions s WHERE s.id = ?1");
        Ok(self
            .conn
            .query_row(&sql, [id], summary_from_row)
            .optional()?)
    }

    /// The full id of the session whose id is `id_or_prefix` or starts with it (case-insensitive,
    /// surrounding spaces ignored). `None` when no session matches; an error when several do, or
    /// when a prefix shorter than [`MIN_SESSION_PREFIX`] is not a whole id.
    pub fn resolve_session_id(&self, id_or_prefix: &str) -> Result<Option<String>, StoreError> {
        let wanted = id_or_prefix.trim().to_ascii_lowercase();
        let exact: Option<String> = self
            .conn
            .query_row("SELECT id FROM sessions WHERE id = ?1", [&wanted], |r| {
                r.get(0)
            })
            .optional()?;
        if exact.is_some() {
            return Ok(exact);
        }
        if wanted.chars().count() < MIN_SESSION_PREFIX {
            return Err(StoreError::SessionIdPrefixTooShort {
                prefix: id_or_prefix.to_string(),
                min: MIN_SESSION_PREFIX,
            });
        }
        // substr rather than LIKE/GLOB: the prefix is compared literally, whatever it contains.
        // Six rows are enough to name a few candidates in the error.
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM sessions WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 6",
        )?;
        let mut candidates = stmt
            .query_map([&wanted], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        match candidates.len() {
            0 => Ok(None),
            1 => Ok(candidates.pop()),
            _ => Err(StoreError::AmbiguousSessionId {
                prefix: id_or_prefix.to_string(),
                candidates,
            }),
        }
    }

    /// [`Self::resolve_session_id`] among the sessions of the vault `vault_id` only: a prefix
    /// picks among this vault's sessions, and an id (or a prefix) that names only sessions of
    /// other vaults is [`StoreError::SessionOfAnotherVault`], never a session to act on.
    pub fn resolve_vault_session_id(
        &self,
        vault_id: &str,
        id_or_prefix: &str,
    ) -> Result<Option<String>, StoreError> {
        let wanted = id_or_prefix.trim().to_ascii_lowercase();
        let owner = |id: &str| -> Result<Option<(String, Option<String>)>, StoreError> {
            Ok(self
                .conn
                .query_row(
                    "SELECT s.vault_id, v.root FROM sessions s LEFT JOIN vaults v ON v.id = s.vault_id
                     WHERE s.id = ?1",
                    [id],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
                )
                .optional()?)
        };
        let another_vault =
            |id: String, root: Option<String>| StoreError::SessionOfAnotherVault { id, root };
        if let Some((owner_vault, root)) = owner(&wanted)? {
            return if owner_vault == vault_id {
                Ok(Some(wanted))
            } else {
                Err(another_vault(wanted, root))
            };
        }
        if wanted.chars().count() < MIN_SESSION_PREFIX {
            return Err(StoreError::SessionIdPrefixTooShort {
                prefix: id_or_prefix.to_string(),
                min: MIN_SESSION_PREFIX,
            });
        }
        // substr rather than LIKE/GLOB: the prefix is compared literally, whatever it contains.
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM sessions WHERE vault_id = ?2 AND substr(id, 1, length(?1)) = ?1
             ORDER BY id LIMIT 6",
        )?;
        let mut candidates = stmt
            .query_map(params![&wanted, vault_id], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        match candidates.len() {
            0 => {}
            1 => return Ok(candidates.pop()),
            _ => {
                return Err(StoreError::AmbiguousSessionId {
                    prefix: id_or_prefix.to_string(),
                    candidates,
                });
            }
        }
        // Not in this vault: say so when another vault has it, rather than "no such session".
        match self.resolve_session_id(&wanted) {
            Ok(Some(id)) => {
                let root = owner(&id)?.and_then(|(_, root)| root);
                Err(another_vault(id, root))
            }
            Err(StoreError::AmbiguousSessionId { .. }) => Err(another_vault(wanted, None)),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sessions with the most recent activity first, of one vault or of all (`None`).
    pub fn list_sessions(
        &self,
        vault_id: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SessionSummary>, StoreError> {
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM sessions s WHERE ?1 IS NULL OR s.vault_id = ?1 {NEWEST_FIRST} LIMIT ?2"
        );
        self.query_rows(
            &sql,
            params![vault_id, i64::try_from(limit).unwrap_or(i64::MAX)],
            summary_from_row,
        )
    }

    /// Sessions whose messages or title match `query`, best first, of one vault or of all (`None`),
    /// at most `limit`. Every whitespace-separated word must occur (as a word prefix in a
    /// message, as a substring of the title); a title match ranks first, then the best-ranked
    /// message (FTS5 bm25), then recent activity. The words are quoted for FTS5, so `"`, `*`,
    /// `(`, `AND`, `-` and the like are searched for as text, never read as query syntax. A
    /// blank query lists the sessions newest first, like [`Store::list_sessions`].
    pub fn search_sessions(
        &self,
        vault_id: Option<&str>,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SessionSummary>, StoreError> {
        let words: Vec<&str> = query.split_whitespace().collect();
        if words.is_empty() {
            return self.list_sessions(vault_id, limit);
        }
        let fts_query = fts_prefix_query(&words);
        // A query of punctuation only has no word the tokenizer would keep; FTS5 would match
        // nothing (or refuse an empty phrase), so only titles are searched then.
        // bm25() may not be called inside an aggregate, so the scored matches are materialised
        // first (otherwise SQLite flattens the subquery into the GROUP BY).
        let hits = if fts_query.is_empty() {
            "matched AS (SELECT NULL AS message_id, NULL AS score WHERE 0),
             hits AS (SELECT NULL AS session_id, NULL AS best WHERE 0)"
        } else {
            "matched AS MATERIALIZED (
                 SELECT rowid AS message_id, bm25(message_text) AS score
                 FROM message_text WHERE message_text MATCH ?1),
             hits AS (
                 SELECT m.session_id AS session_id, min(x.score) AS best
                 FROM matched x JOIN messages m ON m.id = x.message_id
                 GROUP BY m.session_id)"
        };
        // The title matches when every word is in it (ASCII case folded by lower()).
        let title_match = "NOT EXISTS (SELECT 1 FROM json_each(?2) w
                            WHERE instr(lower(s.title), lower(w.value)) = 0)";
        let sql = format!(
            "WITH {hits}
             SELECT {SUMMARY_COLUMNS} FROM sessions s LEFT JOIN hits h ON h.session_id = s.id
             WHERE (?3 IS NULL OR s.vault_id = ?3) AND (h.session_id IS NOT NULL OR {title_match})
             ORDER BY {title_match} DESC, h.best IS NULL, h.best,
                      s.updated_ms DESC, s.created_ms DESC, s.id DESC
             LIMIT ?4"
        );
        let words_json = serde_json::Value::from(words).to_string();
        self.query_rows(
            &sql,
            params![
                fts_query,
                words_json,
                vault_id,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            summary_from_row,
        )
    }

    /// The id of the vault's session with the most recent activity (for `--continue`).
    pub fn latest_session(&self, vault_id: &str) -> Result<Option<String>, StoreError> {
        let sql =
            format!("SELECT s.id FROM sessions s WHERE s.vault_id = ?1 {NEWEST_FIRST} LIMIT 1");
        Ok(self
            .conn
            .query_row(&sql, [vault_id], |r| r.get(0))
            .optional()?)
    }

    /// Delete a session with its messages and usage rows; `false` when there was no such session.
    pub fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        // The messages and usage rows go by ON DELETE CASCADE (foreign_keys is on for every
        // connection, see sqlite.rs), their search text by the trigger.
        let deleted = self
            .conn
            .execute("DELETE FROM sessions WHERE id = ?1", [id])?;
        Ok(deleted > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::UsageRecord;

    use crate::store::test_store as store;

    fn new_session<'a>(vault_id: &'a str, now_ms: i64) -> NewSession<'a> {
        NewSession {
            vault_id,
            provider: "anthropic",
            model: "claude-x",
            now_ms,
        }
    }

    #[test]
    fn tool_decisions_are_kept_per_call_and_go_with_the_session() {
        let (_dir, store) = store();
        let id = store.create_session(&new_session("v", 1)).unwrap();
        store.record_tool_decision(&id, "c1", "denied").unwrap();
        store.record_tool_decision(&id, "c2", "allowed").unwrap();
        store
            .record_tool_decision(&id, "c2", "approved_once")
            .unwrap();
        assert_eq!(
            store.tool_decisions(&id).unwrap(),
            [
                ("c1".to_string(), "denied".to_string()),
                ("c2".to_string(), "approved_once".to_string())
            ]
        );
        store.delete_session(&id).unwrap();
        assert_eq!(count(&store, "SELECT count(*) FROM tool_decisions"), 0);
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store.connection().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn ids_are_sixteen_hex_digits_and_differ() {
        for id in [new_session_id(), new_session_id()] {
            assert_eq!(id.len(), 16, "{id}");
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
                "{id}"
            );
        }
        assert_ne!(new_session_id(), new_session_id());
    }

    #[test]
    fn a_new_session_round_trips_with_empty_counts() {
        let (_dir, store) = store();
        let id = store.create_session(&new_session("v1", 1_000)).unwrap();
        let s = store.session(&id).unwrap().unwrap();
        assert_eq!(
            s,
            SessionSummary {
                id: id.clone(),
                vault_id: "v1".into(),
                title: String::new(),
                provider: Some("anthropic".into()),
                model: Some("claude-x".into()),
                created_ms: 1_000,
                updated_ms: 1_000,
                messages: 0,
                usage: TokenTotals::default(),
                parent_id: None,
            }
        );
        assert_eq!(store.session("0000000000000000").unwrap(), None);
    }

    #[test]
    fn an_unknown_provider_and_model_are_stored_as_null() {
        let (_dir, store) = store();
        let id = store
            .create_session(&NewSession {
                vault_id: "v",
                provider: "",
                model: "",
                now_ms: 1,
            })
            .unwrap();
        let s = store.session(&id).unwrap().unwrap();
        assert_eq!((s.provider, s.model), (None, None));
    }

    #[test]
    fn an_id_clash_draws_a_new_id_and_gives_up_after_a_few() {
        let (_dir, store) = store();
        let first = store
            .create_session_with_ids(&new_session("v", 1), || "aaaaaaaaaaaaaaaa".into())
            .unwrap();
        assert_eq!(first, "aaaaaaaaaaaaaaaa");
        let mut ids = ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"].into_iter();
        let second = store
            .create_session_with_ids(&new_session("v", 2), || ids.next().unwrap().into())
            .unwrap();
        assert_eq!(second, "bbbbbbbbbbbbbbbb");
        let err = store
            .create_session_with_ids(&new_session("v", 3), || "aaaaaaaaaaaaaaaa".into())
            .unwrap_err();
        assert!(matches!(err, StoreError::Sql(_)), "{err}");
        assert_eq!(count(&store, "SELECT count(*) FROM sessions"), 2);
    }

    #[test]
    fn the_title_can_be_set_and_an_unknown_session_is_an_error() {
        let (_dir, store) = store();
        let id = store.create_session(&new_session("v", 1)).unwrap();
        store.set_session_title(&id, "Plan the trip").unwrap();
        assert_eq!(store.session(&id).unwrap().unwrap().title, "Plan the trip");
        store.set_session_title(&id, "Renamed").unwrap();
        assert_eq!(store.session(&id).unwrap().unwrap().title, "Renamed");
        let err = store.set_session_title("nope", "x").unwrap_err();
        assert!(
            matches!(&err, StoreError::UnknownSession { id } if id == "nope"),
            "{err}"
        );
    }

    #[test]
    fn messages_get_consecutive_seqs_per_session_and_come_back_in_order() {
        let (_dir, store) = store();
        let a = store.create_session(&new_session("v", 1)).unwrap();
        let b = store.create_session(&new_session("v", 1)).unwrap();
        assert_eq!(
            store
                .append_message(&a, "user", r#"[{"type":"text","text":"hi"}]"#, "hi", 10)
                .unwrap(),
            1
        );
        assert_eq!(store.append_message(&b, "user", "[]", "", 11).unwrap(), 1);
        assert_eq!(
            store
                .append_message(&a, "assistant", "[2]", "hello", 12)
                .unwrap(),
            2
        );
        assert_eq!(store.append_message(&a, "user", "[3]", "", 13).unwrap(), 3);
        let got = store.session_messages(&a).unwrap();
        assert_eq!(
            got,
            vec![
                StoredMessage {
                    seq: 1,
                    role: "user".into(),
                    content_json: r#"[{"type":"text","text":"hi"}]"#.into(),
                    at_ms: 10
                },
                StoredMessage {
                    seq: 2,
                    role: "assistant".into(),
                    content_json: "[2]".into(),
                    at_ms: 12
                },
                StoredMessage {
                    seq: 3,
                    role: "user".into(),
                    content_json: "[3]".into(),
                    at_ms: 13
                },
            ]
        );
        assert_eq!(store.session(&a).unwrap().unwrap().messages, 3);
        assert_eq!(store.session(&b).unwrap().unwrap().messages, 1);
        assert!(store.session_messages("nope").unwrap().is_empty());
    }

    #[test]
    fn appending_bumps_updated_ms_but_never_backwards() {
        let (_dir, store) = store();
        let id = store.create_session(&new_session("v", 100)).unwrap();
        store.append_message(&id, "user", "[]", "", 500).unwrap();
        assert_eq!(store.session(&id).unwrap().unwrap().updated_ms, 500);
        store
            .append_message(&id, "assistant", "[]", "", 400)
            .unwrap();
        let s = store.session(&id).unwrap().unwrap();
        assert_eq!((s.created_ms, s.updated_ms), (100, 500));
    }

    #[test]
    fn appending_refuses_a_bad_role_and_an_unknown_session() {
        let (_dir, store) = store();
        let id = store.create_session(&new_session("v", 1)).unwrap();
        let err = store
            .append_message(&id, "system", "[]", "", 2)
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::InvalidValue { value, .. } if value == "system"),
            "{err}"
        );
        let err = store
            .append_message("nope", "user", "[]", "", 2)
            .unwrap_err();
        assert!(matches!(err, StoreError::UnknownSession { .. }), "{err}");
        assert_eq!(count(&store, "SELECT count(*) FROM messages"), 0);
        assert_eq!(store.session(&id).unwrap().unwrap().updated_ms, 1);
    }

    #[test]
    fn message_text_is_searchable_and_blank_text_is_not_indexed() {
        let (_dir, store) = store();
        let id = store.create_session(&new_session("v", 1)).unwrap();
        store
            .append_message(&id, "user", "[]", "Where is the café?", 2)
            .unwrap();
        store
            .append_message(&id, "assistant", "[]", "  ", 3)
            .unwrap();
        assert_eq!(count(&store, "SELECT count(*) FROM message_text"), 1);
        let seq: i64 = store
            .connection()
            .query_row(
                "SELECT m.seq FROM message_text t JOIN messages m ON m.id = t.rowid
                 WHERE message_text MATCH 'cafe'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(seq, 1);
    }

    #[test]
    fn deleting_a_session_cascades_to_its_messages_usage_and_text() {
        let (_dir, store) = store();
        let gone = store.create_session(&new_session("v", 1)).unwrap();
        let kept = store.create_session(&new_session("v", 1)).unwrap();
        for id in [&gone, &kept] {
            store.append_message(id, "user", "[]", "words", 2).unwrap();
            store
                .record_usage(&UsageRecord {
                    session_id: id,
                    at_ms: 3,
                    provider: "p",
                    model: "m",
                    input_tokens: 1,
                    output_tokens: 1,
                    cache_read_tokens: 0,
                    cache_write_tokens: 0,
                    estimated: false,
                })
                .unwrap();
        }
        assert!(store.delete_session(&gone).unwrap());
        assert!(!store.delete_session(&gone).unwrap());
        assert_eq!(store.session(&gone).unwrap(), None);
        let left = |table: &str| count(&store, &format!("SELECT count(*) FROM {table}"));
        assert_eq!(left("messages"), 1);
        assert_eq!(left("usage"), 1);
        assert_eq!(left("message_text"), 1);
        assert_eq!(store.session_messages(&kept).unwrap().len(), 1);
    }

    #[test]
    fn lists_newest_activity_first_per_vault_or_all_with_a_limit() {
        let (_dir, store) = store();
        let old = store.create_session(&new_session("v1", 100)).unwrap();
        let mid = store.create_session(&new_session("v1", 200)).unwrap();
        let other = store.create_session(&new_session("v2", 300)).unwrap();
        // A message makes the oldest session the most recently active one.
        store.append_message(&old, "user", "[]", "", 400).unwrap();
        let ids = |list: Vec<SessionSummary>| list.into_iter().map(|s| s.id).collect::<Vec<_>>();
        assert_eq!(
            ids(store.list_sessions(None, 10).unwrap()),
            [old.as_str(), &other, &mid]
        );
        assert_eq!(
            ids(store.list_sessions(Some("v1"), 10).unwrap()),
            [old.as_str(), &mid]
        );
        assert_eq!(
            ids(store.list_sessions(None, 2).unwrap()),
            [old.as_str(), &other]
        );
        assert!(store.list_sessions(Some("v3"), 10).unwrap().is_empty());
        assert_eq!(store.latest_session("v1").unwrap(), Some(old.clone()));
        assert_eq!(store.latest_session("v2").unwrap(), Some(other));
        assert_eq!(store.latest_session("v3").unwrap(), None);
        assert_eq!(store.list_sessions(None, 10).unwrap()[0].messages, 1);
    }

    #[test]
    fn a_summary_sums_the_sessions_usage() {
        let (_dir, store) = store();
        let id = store.create_session(&new_session("v", 1)).unwrap();
        let other = store.create_session(&new_session("v", 1)).unwrap();
        for (session_id, input) in [(&id, 10), (&id, 20), (&other, 1000)] {
            store
                .record_usage(&UsageRecord {
                    session_id,
                    at_ms: 5,
                    provider: "p",
                    model: "m",
                    input_tokens: input,
                    output_tokens: 2,
                    cache_read_tokens: 3,
                    cache_write_tokens: 4,
                    estimated: false,
                })
                .unwrap();
        }
        assert_eq!(
            store.session(&id).unwrap().unwrap().usage,
            TokenTotals {
                input_tokens: 30,
                output_tokens: 4,
                cache_read_tokens: 6,
                cache_write_tokens: 8,
                responses: 2,
                estimated_responses: 0,
            }
        );
    }

    #[test]
    fn a_prefix_resolves_to_the_one_session_it_starts() {
        let (_dir, store) = store();
        let mut ids = [
            "abcd000000000001",
            "abcd000000000002",
            "abce000000000003",
            "ffff000000000004",
        ]
        .into_iter();
        for _ in 0..4 {
            store
                .create_session_with_ids(&new_session("v", 1), || ids.next().unwrap().into())
                .unwrap();
        }
        let resolve = |p: &str| store.resolve_session_id(p);
        assert_eq!(
            resolve("abcd000000000002").unwrap().as_deref(),
            Some("abcd000000000002")
        );
        assert_eq!(
            resolve("abce").unwrap().as_deref(),
            Some("abce000000000003")
        );
        assert_eq!(
            resolve(" FFFF0 ").unwrap().as_deref(),
            Some("ffff000000000004")
        );
        assert_eq!(resolve("abcf").unwrap(), None);
        // LIKE wildcards are not wildcards here.
        assert_eq!(resolve("ab%_").unwrap(), None);
        match resolve("abcd").unwrap_err() {
            StoreError::AmbiguousSessionId { prefix, candidates } => {
                assert_eq!(prefix, "abcd");
                assert_eq!(candidates, ["abcd000000000001", "abcd000000000002"]);
            }
            other => panic!("{other}"),
        }
        let err = resolve("abc").unwrap_err();
        assert!(
            matches!(err, StoreError::SessionIdPrefixTooShort { min: 4, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("at least 4"), "{err}");
    }

    #[test]
    fn a_session_resolves_only_in_its_own_vault() {
        let (_dir, store) = store();
        store
            .touch_vault("w", std::path::Path::new("/vaults/B"), 1)
            .unwrap();
        let mut ids = ["abcd000000000001", "abcd000000000002", "abce000000000003"].into_iter();
        for vault in ["v", "w", "w"] {
            store
                .create_session_with_ids(&new_session(vault, 1), || ids.next().unwrap().into())
                .unwrap();
        }
        let in_v = |p: &str| store.resolve_vault_session_id("v", p);
        assert_eq!(
            in_v("abcd000000000001").unwrap().as_deref(),
            Some("abcd000000000001")
        );
        // A prefix shared with another vault's session picks this vault's one.
        assert_eq!(in_v("abcd").unwrap().as_deref(), Some("abcd000000000001"));
        assert_eq!(in_v("ffff").unwrap(), None);
        for asked in ["abcd000000000002", "ABCE"] {
            match in_v(asked).unwrap_err() {
                StoreError::SessionOfAnotherVault { id, root } => {
                    assert!(id.starts_with(&asked.to_ascii_lowercase()), "{id}");
                    assert_eq!(root.as_deref(), Some("/vaults/B"));
                }
                other => panic!("{asked}: {other}"),
            }
        }
        let message = in_v("abce").unwrap_err().to_string();
        assert!(
            message.contains("belongs to another vault (/vaults/B)"),
            "{message}"
        );
        // The other vault sees its own sessions and not this one.
        assert_eq!(
            store
                .resolve_vault_session_id("w", "abcd")
                .unwrap()
                .as_deref(),
            Some("abcd000000000002")
        );
        assert!(matches!(
            store.resolve_vault_session_id("w", "abcd000000000001"),
            Err(StoreError::SessionOfAnotherVault { .. })
        ));
    }

    /// Three sessions in vault `v` and one in `w`, with messages and titles to search.
    fn searchable_store() -> (tempfile::TempDir, Store, [String; 4]) {
        let (dir, store) = store();
        let trip = store.create_session(&new_session("v", 100)).unwrap();
        store.set_session_title(&trip, "Holiday").unwrap();
        store
            .append_message(&trip, "user", "[]", "Plan the trip to Lisbon", 110)
            .unwrap();
        store
            .append_message(&trip, "assistant", "[]", "Lisbon in May: trams, tiles", 120)
            .unwrap();
        let budget = store.create_session(&new_session("v", 200)).unwrap();
        store.set_session_title(&budget, "Budget planning").unwrap();
        store
            .append_message(&budget, "user", "[]", "Sum up the costs (rent + food)", 210)
            .unwrap();
        let quotes = store.create_session(&new_session("v", 300)).unwrap();
        store
            .append_message(&quotes, "user", "[]", r#"He said "AND" OR NOT* near"#, 310)
            .unwrap();
        let other_vault = store.create_session(&new_session("w", 400)).unwrap();
        store
            .append_message(&other_vault, "user", "[]", "Lisbon again", 410)
            .unwrap();
        (dir, store, [trip, budget, quotes, other_vault])
    }

    fn ids(list: Vec<SessionSummary>) -> Vec<String> {
        list.into_iter().map(|s| s.id).collect()
    }

    #[test]
    fn search_finds_sessions_by_their_messages_per_vault_or_all() {
        let (_dir, store, [trip, _budget, _quotes, other]) = searchable_store();
        assert_eq!(
            ids(store.search_sessions(Some("v"), "lisbon", 10).unwrap()),
            [trip.as_str()]
        );
        let all = ids(store.search_sessions(None, "LISBON", 10).unwrap());
        assert_eq!(all.len(), 2);
        assert!(all.contains(&trip) && all.contains(&other), "{all:?}");
        // The summary carries the counts like list_sessions.
        assert_eq!(
            store.search_sessions(Some("v"), "trams", 10).unwrap()[0].messages,
            2
        );
        assert!(
            store
                .search_sessions(Some("v"), "paris", 10)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn search_words_are_prefixes_and_all_must_match() {
        let (_dir, store, [trip, ..]) = searchable_store();
        // "lis" is a word being typed.
        assert_eq!(
            ids(store.search_sessions(Some("v"), "lis", 10).unwrap()),
            [trip.as_str()]
        );
        assert_eq!(
            ids(store.search_sessions(Some("v"), "trip lisb", 10).unwrap()),
            [trip]
        );
        assert!(
            store
                .search_sessions(Some("v"), "trip budget", 10)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn search_matches_titles_and_ranks_them_first() {
        let (_dir, store, [trip, budget, ..]) = searchable_store();
        // Only in a title.
        assert_eq!(
            ids(store.search_sessions(Some("v"), "holiday", 10).unwrap()),
            [trip.as_str()]
        );
        // "plan" is in the trip's message and in the budget's title: the title wins.
        assert_eq!(
            ids(store.search_sessions(Some("v"), "plan", 10).unwrap()),
            [budget.clone(), trip]
        );
        assert_eq!(
            ids(store.search_sessions(Some("v"), "plan", 1).unwrap()),
            [budget]
        );
    }

    #[test]
    fn search_treats_fts_syntax_as_text() {
        let (_dir, store, [_trip, budget, quotes, _]) = searchable_store();
        for query in [
            r#"""#, r#""AND""#, "AND", "OR NOT", "NOT*", "near(", "(rent", "rent +", "-food",
            "col:umn", "^start", "*", "'", "))",
        ] {
            let result = store.search_sessions(Some("v"), query, 10);
            assert!(result.is_ok(), "{query}: {result:?}");
        }
        assert_eq!(
            ids(store.search_sessions(Some("v"), "(rent", 10).unwrap()),
            [budget]
        );
        assert_eq!(
            ids(store
                .search_sessions(Some("v"), r#""AND" near"#, 10)
                .unwrap()),
            [quotes]
        );
        // Punctuation alone matches no message (the tokenizer keeps no word of it).
        assert!(
            store
                .search_sessions(Some("v"), "))", 10)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_blank_search_lists_the_newest_sessions() {
        let (_dir, store, _) = searchable_store();
        assert_eq!(
            store.search_sessions(Some("v"), "  ", 10).unwrap(),
            store.list_sessions(Some("v"), 10).unwrap()
        );
        assert_eq!(store.search_sessions(None, "", 2).unwrap().len(), 2);
    }

    #[test]
    fn deleted_sessions_are_not_found() {
        let (_dir, store, [trip, ..]) = searchable_store();
        store.delete_session(&trip).unwrap();
        assert!(
            store
                .search_sessions(Some("v"), "lisbon", 10)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn fts_queries_quote_every_word_as_a_prefix() {
        assert_eq!(fts_prefix_query(&["plan", "trip"]), r#""plan"* "trip"*"#);
        assert_eq!(fts_prefix_query(&[r#"say"hi"#]), r#""say""hi"*"#);
        assert_eq!(fts_prefix_query(&["((", "*"]), "");
    }
}
