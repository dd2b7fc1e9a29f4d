//! Embedded, ordered schema migrations, tracked with SQLite's `user_version`.

use rusqlite::Connection;

/// One schema step. `version` numbers are consecutive from 1.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

impl Migration {
    /// Migration `version`, called `name`, running `sql`.
    pub const fn new(version: i64, name: &'static str, sql: &'static str) -> Migration {
        Migration { version, name, sql }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    #[error(
        "the database has schema version {found}, newer than this vaultchat knows ({known}); \
         it was written by a newer vaultchat: upgrade vaultchat rather than risk losing data"
    )]
    TooNew { found: i64, known: i64 },
    #[error("migration {version} ({name}) failed: {source}")]
    Step {
        version: i64,
        name: &'static str,
        source: rusqlite::Error,
    },
    #[error("database error while migrating: {0}")]
    Sql(#[from] rusqlite::Error),
}

pub fn schema_version(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Apply every migration newer than the database's version, each in its own transaction together
/// with the version bump, so a crash leaves the database at a whole version. Each transaction
/// takes the write lock first and reads the version again under it: two processes opening a new
/// database at once (the app and `vaultchat mcp`, or the app's own connections) must not both run
/// the same step (an `ALTER TABLE … ADD COLUMN` cannot run twice).
pub fn apply_migrations(
    conn: &mut Connection,
    migrations: &[Migration],
) -> Result<i64, MigrationError> {
    let current = schema_version(conn)?;
    let known = migrations.last().map(|m| m.version).unwrap_or(0);
    if current > known {
        return Err(MigrationError::TooNew {
            found: current,
            known,
        });
    }
    for m in migrations.iter().filter(|m| m.version > current) {
        let step = |source| MigrationError::Step {
            version: m.version,
            name: m.name,
            source,
        };
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(step)?;
        if schema_version(&tx).map_err(step)? >= m.version {
            // Another connection applied it while this one waited for the lock.
            tx.commit().map_err(step)?;
            continue;
        }
        tx.execute_batch(m.sql).map_err(step)?;
        tx.pragma_update(None, "user_version", m.version)
            .map_err(step)?;
        tx.commit().map_err(step)?;
    }
    Ok(schema_version(conn)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEPS: &[Migration] = &[
        Migration::new(1, "a", "CREATE TABLE a (x INTEGER);"),
        Migration::new(
            2,
            "b",
            "ALTER TABLE a ADD COLUMN y TEXT; CREATE TABLE b (z INTEGER);",
        ),
        Migration::new(3, "c", "CREATE INDEX a_y ON a (y);"),
    ];

    #[test]
    fn applies_in_order_from_empty_and_from_each_version() {
        for start in 0..=STEPS.len() {
            let mut conn = Connection::open_in_memory().unwrap();
            apply_migrations(&mut conn, &STEPS[..start]).unwrap();
            if start >= 1 {
                conn.execute("INSERT INTO a (x) VALUES (7)", []).unwrap();
            }
            assert_eq!(apply_migrations(&mut conn, STEPS).unwrap(), 3);
            // Data written at an older version survives the upgrade.
            let rows: i64 = conn
                .query_row("SELECT count(*) FROM a", [], |r| r.get(0))
                .unwrap();
            assert_eq!(rows, i64::from(start >= 1));
            conn.execute("INSERT INTO a (x, y) VALUES (1, 'y')", [])
                .unwrap();
        }
    }

    #[test]
    fn a_failing_step_leaves_the_previous_version() {
        let bad = [
            STEPS[0],
            Migration::new(2, "broken", "CREATE TABLE ok (x); THIS IS NOT SQL;"),
        ];
        let mut conn = Connection::open_in_memory().unwrap();
        let err = apply_migrations(&mut conn, &bad).unwrap_err();
        assert!(err.to_string().contains("migration 2 (broken)"), "{err}");
        assert_eq!(schema_version(&conn).unwrap(), 1);
        let ok_exists: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'ok'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(ok_exists, 0, "the failed step was rolled back whole");
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply_migrations(&mut conn, STEPS).unwrap();
        let err = apply_migrations(&mut conn, &STEPS[..1]).unwrap_err();
        assert!(matches!(err, MigrationError::TooNew { found: 3, known: 1 }));
        assert!(err.to_string().contains("upgrade vaultchat"));
    }

    #[test]
    fn connections_opening_a_new_database_at_once_apply_each_step_once() {
        for round in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(format!("db{round}"));
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || {
                        let mut conn =
                            crate::store::open_connection(&path, crate::store::Journal::Wal)
                                .unwrap();
                        apply_migrations(&mut conn, STEPS)
                    })
                })
                .collect();
            for thread in threads {
                assert_eq!(thread.join().unwrap().unwrap(), 3, "round {round}");
            }
        }
    }
}
