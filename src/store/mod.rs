//! The app database (DESIGN.md §5): one SQLite file with the sessions, usage, permission rules and
//! note revisions of every vault. This module owns the connection settings and the migrations;
//! the tables themselves arrive with the features that use them, each as a new migration.

mod migrate;
mod revisions;
mod sqlite;

pub use revisions::{Actor, NewRevision, Revision};

pub use migrate::{Migration, MigrationError, apply_migrations, schema_version};
pub use sqlite::{Journal, StoreError, open_connection};

use std::path::Path;

/// Every migration of the app database, in order. Never edit a released migration; add a new one.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "vaults",
        sql: include_str!("migrations/0001_vaults.sql"),
    },
    Migration {
        version: 2,
        name: "revisions",
        sql: include_str!("migrations/0002_revisions.sql"),
    },
];

/// The opened app database with its schema up to date.
pub struct Store {
    conn: rusqlite::Connection,
}

impl Store {
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
        }
    }
}
