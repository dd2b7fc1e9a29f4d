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

/// How long a run of the person's saves of one note counts as one revision (five minutes, the
/// interval of Obsidian's file recovery snapshots).
pub const USER_SESSION_MS: i64 = 5 * 60 * 1000;

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

    /// Record a save from the person's editor. Saves follow one another a second apart while
    /// they type (autosave), so a save that continues the newest revision of the note — also the
    /// person's, ending at this save's starting point, less than [`USER_SESSION_MS`] ago — extends
    /// it instead of adding a row with another full copy of the note: that row keeps the text
    /// before the whole run of saves (what /rewind restores), and its line counts add up.
    pub fn record_user_revision(&self, rev: &NewRevision<'_>) -> Result<i64, StoreError> {
        let newest: Option<(i64, String, Option<String>, i64)> = self
            .conn
            .query_row(
                "SELECT id, actor, after_rev, at_unix_ms FROM revisions
                 WHERE vault_id = ?1 AND path = ?2 ORDER BY at_unix_ms DESC, id DESC LIMIT 1",
                params![rev.vault_id, rev.path],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                other => Err(other),
            })?;
        if let Some((id, actor, after_rev, at)) = newest
            && actor == Actor::User.as_str()
            && rev.actor == Actor::User
            && after_rev.as_deref() == rev.before_rev
            && rev.before_rev.is_some()
            && rev.at_unix_ms.saturating_sub(at) < USER_SESSION_MS
        {
            self.conn.execute(
                "UPDATE revisions SET at_unix_ms = ?2, after_rev = ?3,
                 added = added + ?4, removed = removed + ?5 WHERE id = ?1",
                params![
                    id,
                    rev.at_unix_ms,
                    rev.after_rev,
                    i64::try_from(rev.added).unwrap_or(i64::MAX),
                    i64::try_from(rev.removed).unwrap_or(i64::MAX),
                ],
            )?;
            return Ok(id);
        }
        self.record_revision(rev)
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
    fn a_run_of_user_saves_is_one_revision_with_the_text_before_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let save =
            |at, before: &'static str, after: &'static str, text: &'static str| NewRevision {
                vault_id: "v",
                path: "a.md",
                at_unix_ms: at,
                actor: Actor::User,
                tool: None,
                added: 1,
                removed: 0,
                before_rev: Some(before),
                after_rev: Some(after),
                before_text: Some(text),
            };
        let first = store
            .record_user_revision(&save(1_000, "r0", "r1", "v0\n"))
            .unwrap();
        let joined = store
            .record_user_revision(&save(2_000, "r1", "r2", "v1\n"))
            .unwrap();
        assert_eq!(first, joined);
        let revs = store.revisions_of("v", "a.md", 10).unwrap();
        assert_eq!(revs.len(), 1);
        assert_eq!(revs[0].after_rev.as_deref(), Some("r2"));
        assert_eq!(revs[0].added, 2);
        assert_eq!(store.revision_text(first).unwrap().as_deref(), Some("v0\n"));
        // After a pause longer than a session, or when the chain breaks (another writer), a new row.
        let later = store
            .record_user_revision(&save(2_000 + USER_SESSION_MS, "r2", "r3", "v2\n"))
            .unwrap();
        assert_ne!(later, first);
        let broken = store
            .record_user_revision(&save(2_001 + USER_SESSION_MS, "rX", "r4", "v3\n"))
            .unwrap();
        assert_ne!(broken, later);
        // An agent revision in between is never extended.
        let mut agent = save(2_002 + USER_SESSION_MS, "r4", "r5", "v4\n");
        agent.actor = Actor::Agent;
        let agent_id = store.record_revision(&agent).unwrap();
        let after_agent = store
            .record_user_revision(&save(2_003 + USER_SESSION_MS, "r5", "r6", "v5\n"))
            .unwrap();
        assert_ne!(after_agent, agent_id);
        assert_eq!(store.revisions_of("v", "a.md", 10).unwrap().len(), 5);
    }

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
