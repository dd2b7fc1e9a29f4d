//! The note revision log.

use super::{Store, StoreError};
use rusqlite::params;

/// Who changed a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// The person, in vaultchat's editor.
    User,
    /// The agent, or an MCP client through vaultchat's tools.
    Agent,
    /// Another program, seen by the watcher.
    External,
}

impl Actor {
    fn as_str(self) -> &'static str {
        match self {
            Actor::User => "user",
            Actor::Agent => "agent",
            Actor::External => "external",
        }
    }

    fn parse(text: &str) -> Actor {
        match text {
            "user" => Actor::User,
            "agent" => Actor::Agent,
            _ => Actor::External,
        }
    }
}

/// A revision to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRevision<'a> {
    pub vault_id: &'a str,
    pub path: &'a str,
    pub at_unix_ms: i64,
    pub actor: Actor,
    pub tool: Option<&'a str>,
    pub added: u64,
    pub removed: u64,
    pub before_rev: Option<&'a str>,
    pub after_rev: Option<&'a str>,
    pub before_text: Option<&'a str>,
}

/// A recorded revision (without the stored text, which [`Store::revision_text`] returns).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Revision {
    pub id: i64,
    pub path: String,
    pub at_unix_ms: i64,
    pub actor: Actor,
    pub tool: Option<String>,
    pub added: u64,
    pub removed: u64,
    pub before_rev: Option<String>,
    pub after_rev: Option<String>,
}

impl Store {
    pub fn record_revision(&self, rev: &NewRevision<'_>) -> Result<i64, StoreError> {
        self.conn.execute(
            "INSERT INTO revisions (vault_id, path, at_unix_ms, actor, tool, added, removed, before_rev, after_rev, before_text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                rev.vault_id,
                rev.path,
                rev.at_unix_ms,
                rev.actor.as_str(),
                rev.tool,
                i64::try_from(rev.added).unwrap_or(i64::MAX),
                i64::try_from(rev.removed).unwrap_or(i64::MAX),
                rev.before_rev,
                rev.after_rev,
                rev.before_text
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The revisions of one note, newest first.
    pub fn revisions_of(
        &self,
        vault_id: &str,
        path: &str,
        limit: usize,
    ) -> Result<Vec<Revision>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, path, at_unix_ms, actor, tool, added, removed, before_rev, after_rev
             FROM revisions WHERE vault_id = ?1 AND path = ?2
             ORDER BY at_unix_ms DESC, id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(
            params![vault_id, path, i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| {
                Ok(Revision {
                    id: r.get(0)?,
                    path: r.get(1)?,
                    at_unix_ms: r.get(2)?,
                    actor: Actor::parse(&r.get::<_, String>(3)?),
                    tool: r.get(4)?,
                    added: r.get::<_, i64>(5)?.unsigned_abs(),
                    removed: r.get::<_, i64>(6)?.unsigned_abs(),
                    before_rev: r.get(7)?,
                    after_rev: r.get(8)?,
                })
            },
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The note's text before revision `id` (None when the note did not exist before it).
    pub fn revision_text(&self, id: i64) -> Result<Option<String>, StoreError> {
        Ok(self.conn.query_row(
            "SELECT before_text FROM revisions WHERE id = ?1",
            [id],
            |r| r.get(0),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_round_trip_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let mut rev = NewRevision {
            vault_id: "v",
            path: "a.md",
            at_unix_ms: 1,
            actor: Actor::Agent,
            tool: Some("update_note"),
            added: 2,
            removed: 1,
            before_rev: None,
            after_rev: Some("r1"),
            before_text: None,
        };
        let first = store.record_revision(&rev).unwrap();
        rev.at_unix_ms = 2;
        rev.actor = Actor::External;
        rev.tool = None;
        rev.before_rev = Some("r1");
        rev.before_text = Some("old\n");
        let second = store.record_revision(&rev).unwrap();
        let revs = store.revisions_of("v", "a.md", 10).unwrap();
        assert_eq!(
            revs.iter().map(|r| r.id).collect::<Vec<_>>(),
            [second, first]
        );
        assert_eq!(revs[0].actor, Actor::External);
        assert_eq!(revs[1].tool.as_deref(), Some("update_note"));
        assert_eq!(
            store.revision_text(second).unwrap().as_deref(),
            Some("old\n")
        );
        assert_eq!(store.revision_text(first).unwrap(), None);
        assert!(store.revisions_of("other", "a.md", 10).unwrap().is_empty());
    }
}
