//! Turns that ended with a provider error (migration 0007): which messages of a session they
//! span, so that a resumed session leaves them out of what it sends the model.

use super::{Store, StoreError};
use rusqlite::params;

/// One failed turn: the session's messages `first_seq..=last_seq`, and the error the person saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedTurn {
    pub first_seq: i64,
    pub last_seq: i64,
    pub error: String,
}

impl Store {
    /// Mark messages `first_seq..=last_seq` of a session as a failed turn. Marking the same first
    /// message again replaces the mark.
    pub fn record_failed_turn(
        &self,
        session_id: &str,
        turn: &FailedTurn,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT OR REPLACE INTO failed_turns (session_id, first_seq, last_seq, error, at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                session_id,
                turn.first_seq,
                turn.last_seq,
                turn.error,
                now_ms
            ],
        )?;
        Ok(())
    }

    /// The failed turns of a session, in order.
    pub fn failed_turns(&self, session_id: &str) -> Result<Vec<FailedTurn>, StoreError> {
        self.query_rows(
            "SELECT first_seq, last_seq, error FROM failed_turns WHERE session_id = ?1 \
             ORDER BY first_seq",
            [session_id],
            |r| {
                Ok(FailedTurn {
                    first_seq: r.get(0)?,
                    last_seq: r.get(1)?,
                    error: r.get(2)?,
                })
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewSession, test_store};

    #[test]
    fn failed_turns_round_trip_and_go_with_the_session() {
        let (_dir, store) = test_store();
        let new = |vault_id| NewSession {
            vault_id,
            provider: "openai",
            model: "m",
            now_ms: 1,
        };
        let id = store.create_session(&new("v")).unwrap();
        let other = store.create_session(&new("v")).unwrap();
        let turn = |first_seq, error: &str| FailedTurn {
            first_seq,
            last_seq: first_seq + 1,
            error: error.into(),
        };
        store.record_failed_turn(&id, &turn(5, "later"), 2).unwrap();
        store.record_failed_turn(&id, &turn(1, "first"), 2).unwrap();
        store.record_failed_turn(&id, &turn(1, "again"), 3).unwrap();
        assert_eq!(
            store.failed_turns(&id).unwrap(),
            vec![turn(1, "again"), turn(5, "later")]
        );
        assert!(store.failed_turns(&other).unwrap().is_empty());
        assert!(store.delete_session(&id).unwrap());
        assert!(store.failed_turns(&id).unwrap().is_empty());
    }
}
