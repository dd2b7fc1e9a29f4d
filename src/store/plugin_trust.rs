//! The person's answer about a vault's plugins file, tied to the file's exact content (a SHA-256
//! of its bytes). The `mcp::plugins` module decides what an answer means; the store only keeps it.

use super::{Store, StoreError};
use rusqlite::{OptionalExtension, params};

/// What the person said about one content of a vault's plugins file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginAnswer {
    /// `vaultchat trust`, or "Trust" in the app: the plugins may run.
    Trusted,
    /// "Not now" in the app: not asked again until the file changes.
    Declined,
}

impl PluginAnswer {
    fn as_str(self) -> &'static str {
        match self {
            Self::Trusted => "trusted",
            Self::Declined => "declined",
        }
    }
}

/// The vault's latest answer, whatever content it was for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRecord {
    /// The SHA-256 of the covered set the answer was for.
    pub sha256: String,
    /// The covered set itself (JSON; empty for an answer from before it was kept).
    pub covered: String,
    pub answer: PluginAnswer,
}

impl Store {
    /// The vault's latest answer and what it was for; `None` when there is none.
    pub fn plugin_record(&self, vault_id: &str) -> Result<Option<PluginRecord>, StoreError> {
        let row: Option<(String, String, String)> = self
            .conn
            .query_row(
                "SELECT file_sha256, covered, answer FROM plugin_trust WHERE vault_id = ?1",
                [vault_id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()?;
        Ok(row.map(|(sha256, covered, answer)| PluginRecord {
            sha256,
            covered,
            answer: if answer == "trusted" {
                PluginAnswer::Trusted
            } else {
                PluginAnswer::Declined
            },
        }))
    }

    /// The answer recorded for `vault_id` when the plugins file had the hash `file_sha256`; `None`
    /// when the person never answered about that content (a changed file has no answer).
    pub fn plugin_answer(
        &self,
        vault_id: &str,
        file_sha256: &str,
    ) -> Result<Option<PluginAnswer>, StoreError> {
        let answer: Option<String> = self
            .conn
            .query_row(
                "SELECT answer FROM plugin_trust WHERE vault_id = ?1 AND file_sha256 = ?2",
                params![vault_id, file_sha256],
                |row| row.get(0),
            )
            .optional()?;
        Ok(match answer.as_deref() {
            Some("trusted") => Some(PluginAnswer::Trusted),
            Some(_) => Some(PluginAnswer::Declined),
            None => None,
        })
    }

    /// Record the answer about the content `file_sha256` (the covered set `covered`, kept to name
    /// what changes later), replacing any earlier one for the vault.
    pub fn set_plugin_answer(
        &self,
        vault_id: &str,
        file_sha256: &str,
        covered: &str,
        answer: PluginAnswer,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO plugin_trust (vault_id, file_sha256, covered, answer, answered_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (vault_id) DO UPDATE SET
                 file_sha256 = excluded.file_sha256,
                 covered = excluded.covered,
                 answer = excluded.answer,
                 answered_ms = excluded.answered_ms",
            params![vault_id, file_sha256, covered, answer.as_str(), now_ms],
        )?;
        Ok(())
    }

    /// Forget the vault's answer (`vaultchat trust --revoke`); `true` when there was one.
    pub fn revoke_plugin_trust(&self, vault_id: &str) -> Result<bool, StoreError> {
        let removed = self
            .conn
            .execute("DELETE FROM plugin_trust WHERE vault_id = ?1", [vault_id])?;
        Ok(removed > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_store;

    #[test]
    fn an_answer_holds_for_one_content_only() {
        let (_dir, store) = test_store();
        assert_eq!(store.plugin_answer("v", "aaa").unwrap(), None);
        store
            .set_plugin_answer("v", "aaa", "{\"a\":\"1\"}", PluginAnswer::Trusted, 1)
            .unwrap();
        assert_eq!(
            store.plugin_answer("v", "aaa").unwrap(),
            Some(PluginAnswer::Trusted)
        );
        assert_eq!(store.plugin_answer("v", "bbb").unwrap(), None);
        assert_eq!(store.plugin_answer("w", "aaa").unwrap(), None);
        let record = store.plugin_record("v").unwrap().unwrap();
        assert_eq!(record.covered, "{\"a\":\"1\"}");
        assert_eq!(record.answer, PluginAnswer::Trusted);
        store
            .set_plugin_answer("v", "bbb", "", PluginAnswer::Declined, 2)
            .unwrap();
        assert_eq!(store.plugin_answer("v", "aaa").unwrap(), None);
        assert_eq!(
            store.plugin_answer("v", "bbb").unwrap(),
            Some(PluginAnswer::Declined)
        );
        assert!(store.revoke_plugin_trust("v").unwrap());
        assert!(!store.revoke_plugin_trust("v").unwrap());
        assert_eq!(store.plugin_answer("v", "bbb").unwrap(), None);
    }
}
