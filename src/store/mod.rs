//! The app database (docs/architecture.md): one SQLite file with the sessions, usage, permission rules and
//! note revisions of every vault. This module owns the connection settings and the migrations;
//! the tables themselves arrive with the features that use them, each as a new migration.

mod compactions;
mod failed_turns;
mod migrate;
mod plugin_trust;
pub mod recovery;
mod revisions;
mod rules;
mod sessions;
mod sqlite;
mod usage;

pub use compactions::StoredCompaction;
pub use failed_turns::FailedTurn;
pub use plugin_trust::{PluginAnswer, PluginRecord};
pub use revisions::{Actor, HistorySize, NewRevision, Pruned, Retention, Revision};
pub use rules::StoredRule;
pub use sessions::{MIN_SESSION_PREFIX, NewSession, SessionSummary, StoredMessage};
pub use usage::{CostEstimate, DayUsage, TokenTotals, UsageRecord, estimate_cost};

pub use migrate::{Migration, MigrationError, apply_migrations, schema_version};
pub use sqlite::{Journal, StoreError, open_connection};

use std::path::Path;

/// Every migration of the app database, in order. Never edit a released migration; add a new one.
pub const MIGRATIONS: &[Migration] = &[
    Migration::new(1, "vaults", include_str!("migrations/0001_vaults.sql")),
    Migration::new(
        2,
        "revisions",
        include_str!("migrations/0002_revisions.sql"),
    ),
    Migration::new(3, "sessions", include_str!("migrations/0003_sessions.sql")),
    Migration::new(
        4,
        "permission_rules",
        include_str!("migrations/0004_permission_rules.sql"),
    ),
    Migration::new(
        5,
        "revision_deltas",
        include_str!("migrations/0005_revision_deltas.sql"),
    ),
    Migration::new(
        6,
        "tool_decisions",
        include_str!("migrations/0006_tool_decisions.sql"),
    ),
    Migration::new(
        7,
        "failed_turns",
        include_str!("migrations/0007_failed_turns.sql"),
    ),
    Migration::new(
        8,
        "plugin_trust",
        include_str!("migrations/0008_plugin_trust.sql"),
    ),
    Migration::new(
        9,
        "compaction",
        include_str!("migrations/0009_compaction.sql"),
    ),
    Migration::new(
        10,
        "usage_estimated",
        include_str!("migrations/0010_usage_estimated.sql"),
    ),
    Migration::new(
        11,
        "plugin_trust_covered",
        include_str!("migrations/0011_plugin_trust_covered.sql"),
    ),
    Migration::new(
        12,
        "revision_sequence",
        include_str!("migrations/0012_revision_sequence.sql"),
    ),
];

/// A store in a fresh temporary folder, for tests; keep the folder guard alive as long as the store.
#[cfg(test)]
pub(crate) fn test_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("app.db")).unwrap();
    (dir, store)
}

/// The opened app database with its schema up to date.
pub struct Store {
    conn: rusqlite::Connection,
}

impl Store {
    /// Every row `sql` answers for `params`, each turned into a `T` by `row`.
    fn query_rows<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params, row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Open (or create) the app database and apply pending migrations.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let mut conn = open_connection(path, Journal::Wal)?;
        apply_migrations(&mut conn, MIGRATIONS).map_err(|source| StoreError::Migration {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self { conn })
    }

    pub fn connection(&self) -> &rusqlite::Connection {
        &self.conn
    }

    /// Record that a vault was opened now; returns nothing but keeps `first_seen` stable.
    pub fn touch_vault(&self, id: &str, root: &Path, now_unix: i64) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO vaults (id, root, first_seen, last_opened) VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT(id) DO UPDATE SET root = excluded.root, last_opened = excluded.last_opened",
                rusqlite::params![id, root.to_string_lossy(), now_unix],
            )
            .map_err(StoreError::Sql)?;
        Ok(())
    }

    /// The vaults this installation knows, most recently opened first.
    pub fn known_vaults(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, root FROM vaults ORDER BY last_opened DESC")
            .map_err(StoreError::Sql)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(StoreError::Sql)?;
        rows.collect::<Result<_, _>>().map_err(StoreError::Sql)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_creates_the_latest_schema_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/vaultchat.db");
        let store = Store::open(&path).unwrap();
        assert_eq!(
            schema_version(store.connection()).unwrap(),
            MIGRATIONS.len() as i64
        );
        store.touch_vault("abc", Path::new("/v"), 10).unwrap();
        store.touch_vault("abc", Path::new("/v2"), 20).unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(
            store.known_vaults().unwrap(),
            vec![("abc".to_string(), "/v2".to_string())]
        );
        let first_seen: i64 = store
            .connection()
            .query_row("SELECT first_seen FROM vaults", [], |r| r.get(0))
            .unwrap();
        assert_eq!(first_seen, 10);
    }

    #[test]
    fn migration_versions_are_consecutive_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(
                m.version,
                i as i64 + 1,
                "migration {} is out of order",
                m.name
            );
        }
    }

    /// Every older schema version upgrades to the latest one, keeping its rows.
    #[test]
    fn upgrades_from_every_older_version() {
        for upto in 0..MIGRATIONS.len() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("old.db");
            {
                let mut conn = open_connection(&path, Journal::Wal).unwrap();
                apply_migrations(&mut conn, &MIGRATIONS[..upto]).unwrap();
                assert_eq!(schema_version(&conn).unwrap(), upto as i64);
            }
            let store = Store::open(&path).unwrap();
            assert_eq!(
                schema_version(store.connection()).unwrap(),
                MIGRATIONS.len() as i64
            );
            // Every table of the latest schema works after the upgrade, cascade included.
            store.touch_vault("v", Path::new("/v"), 1).unwrap();
            let id = store
                .create_session(&NewSession {
                    vault_id: "v",
                    provider: "p",
                    model: "m",
                    now_ms: 1,
                })
                .unwrap();
            assert_eq!(store.append_message(&id, "user", "[]", "hi", 2).unwrap(), 1);
            store.add_rule("v", "read_note", None, "deny", 3).unwrap();
            assert!(store.delete_session(&id).unwrap());
            let messages: i64 = store
                .connection()
                .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
                .unwrap();
            assert_eq!(messages, 0, "from version {upto}");
            assert_eq!(store.rules("v").unwrap().len(), 1);
        }
    }

    /// Rows written at each older version survive the later migrations.
    #[test]
    fn older_rows_survive_the_upgrade() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let mut conn = open_connection(&path, Journal::Wal).unwrap();
            apply_migrations(&mut conn, &MIGRATIONS[..3]).unwrap();
            conn.execute_batch(
                "INSERT INTO vaults VALUES ('v', '/v', 1, 2);
                 INSERT INTO sessions (id, vault_id, created_ms, updated_ms)
                     VALUES ('0123456789abcdef', 'v', 5, 6);
                 INSERT INTO messages (session_id, seq, role, content, at_ms)
                     VALUES ('0123456789abcdef', 1, 'user', '[]', 6);",
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(
            store.known_vaults().unwrap(),
            [("v".to_string(), "/v".to_string())]
        );
        let session = store.session("0123456789abcdef").unwrap().unwrap();
        assert_eq!((session.messages, session.updated_ms), (1, 6));
    }
}
