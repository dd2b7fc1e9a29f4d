//! Compactions of long sessions (docs/architecture.md, "Long sessions") and the link from a
//! session continued as new to the session it continues.

use super::{Store, StoreError};
use rusqlite::{OptionalExtension, params};

/// One compaction of a session: the state of the upstream conversation from then on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredCompaction {
    /// When it happened, unix milliseconds.
    pub at_ms: i64,
    /// Why: `threshold`, `overflow`, `command` or `continue_new`.
    pub reason: String,
    /// Messages 1..=summarised are replaced upstream by `summary`.
    pub summarised: u64,
    /// The tool results of messages 1..=shortened are sent shortened.
    pub shortened: u64,
    /// The summary of the replaced messages (and of any earlier summary); `None` when only tool
    /// results were shortened so far.
    pub summary: Option<String>,
}

fn compaction_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredCompaction> {
    Ok(StoredCompaction {
        at_ms: r.get(0)?,
        reason: r.get(1)?,
        summarised: r.get::<_, i64>(2)?.unsigned_abs(),
        shortened: r.get::<_, i64>(3)?.unsigned_abs(),
        summary: r.get(4)?,
    })
}

const COLUMNS: &str = "at_ms, reason, summarised, shortened, summary";

impl Store {
    /// Store a compaction of session `session_id`.
    pub fn record_compaction(
        &self,
        session_id: &str,
        compaction: &StoredCompaction,
    ) -> Result<(), StoreError> {
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.conn.execute(
            "INSERT INTO compactions (session_id, at_ms, reason, summarised, shortened, summary)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                session_id,
                compaction.at_ms,
                compaction.reason,
                count(compaction.summarised),
                count(compaction.shortened),
                compaction.summary
            ],
        )?;
        Ok(())
    }

    /// The compaction in force for a session (the latest), if any.
    pub fn latest_compaction(
        &self,
        session_id: &str,
    ) -> Result<Option<StoredCompaction>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM compactions WHERE session_id = ?1 ORDER BY id DESC LIMIT 1"
        );
        Ok(self
            .conn
            .query_row(&sql, [session_id], compaction_from_row)
            .optional()?)
    }

    /// Every compaction of a session, oldest first (for the transcript).
    pub fn compactions(&self, session_id: &str) -> Result<Vec<StoredCompaction>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM compactions WHERE session_id = ?1 ORDER BY id");
        self.query_rows(&sql, [session_id], compaction_from_row)
    }

    /// Mark session `id` as the continuation of session `parent`.
    pub fn set_session_parent(&self, id: &str, parent: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE sessions SET parent_id = ?2 WHERE id = ?1",
            params![id, parent],
        )?;
        Ok(())
    }

    /// The session that session `id` continues, if it was started as a continuation.
    pub fn session_parent(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT parent_id FROM sessions WHERE id = ?1", [id], |r| {
                r.get::<_, Option<String>>(0)
            })
            .optional()?
            .flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewSession, test_store};

    /// The latest compaction is the one in force; all of them read back in order; a session
    /// names its parent; deleting the session takes its compactions.
    #[test]
    fn compactions_round_trip_and_go_with_their_session() {
        let (_dir, store) = test_store();
        let new = |now_ms| NewSession {
            vault_id: "v",
            provider: "p",
            model: "m",
            now_ms,
        };
        let id = store.create_session(&new(1)).unwrap();
        assert_eq!(store.latest_compaction(&id).unwrap(), None);
        let first = StoredCompaction {
            at_ms: 2,
            reason: "threshold".into(),
            summarised: 0,
            shortened: 4,
            summary: None,
        };
        let second = StoredCompaction {
            at_ms: 3,
            reason: "overflow".into(),
            summarised: 6,
            shortened: 8,
            summary: Some("what happened".into()),
        };
        store.record_compaction(&id, &first).unwrap();
        store.record_compaction(&id, &second).unwrap();
        assert_eq!(store.latest_compaction(&id).unwrap(), Some(second.clone()));
        assert_eq!(store.compactions(&id).unwrap(), vec![first, second]);

        let child = store.create_session(&new(4)).unwrap();
        store.set_session_parent(&child, &id).unwrap();
        assert_eq!(store.session_parent(&child).unwrap(), Some(id.clone()));
        assert_eq!(store.session_parent(&id).unwrap(), None);

        assert!(store.delete_session(&id).unwrap());
        assert!(store.compactions(&id).unwrap().is_empty());
    }
}
