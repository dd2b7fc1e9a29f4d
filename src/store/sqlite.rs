//! Connection settings shared by every SQLite database vaultchat opens (the app database and the
//! per-vault index).

use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the folder {path} for the database: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot open the database {path}: {source}\n  fix: check that the folder is writable, or move the file aside to start afresh"
    )]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("the database {path} could not be upgraded: {source}")]
    Migration {
        path: PathBuf,
        source: super::MigrationError,
    },
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
}

/// How long a connection waits for another process's write lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How a database keeps its transactions atomic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Journal {
    /// Write-ahead log: readers never block the writer. For the app database, which the TUI
    /// writes to all day while other commands read it.
    Wal,
    /// Rollback journal (truncated after each commit). For the search index: a short-lived reader
    /// (`vaultchat search`) then needs no `-wal`/`-shm` set-up, which on this machine cost about a
    /// millisecond of a 5 ms search; writes are short batches from one indexer.
    Rollback,
}

/// Open a database file with the given journal, `synchronous=NORMAL` and a busy timeout, creating
/// its folder.
///
/// NORMAL keeps every committed transaction across an application crash and only risks the last
/// commits on power loss, which is the right trade for an index and for chat logs.
pub fn open_connection(path: &Path, journal: Journal) -> Result<rusqlite::Connection, StoreError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let conn = rusqlite::Connection::open(path).map_err(open_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
    let mode = match journal {
        Journal::Wal => "WAL",
        Journal::Rollback => "TRUNCATE",
    };
    // journal_mode answers with a row, so it is read rather than executed.
    let _mode: String = conn
        .query_row(&format!("PRAGMA journal_mode={mode}"), [], |r| r.get(0))
        .map_err(open_err)?;
    conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
        .map_err(open_err)?;
    if journal == Journal::Wal {
        // Keep the -wal and -shm files when the last connection closes, so the next short-lived
        // process does not create, size and delete both again.
        let mut persist = 1;
        conn.file_control(
            rusqlite::DEFAULT_NAME,
            rusqlite::FileControl::PersistWal(&mut persist),
        )
        .map_err(open_err)?;
    }
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragmas_are_set() {
        let dir = tempfile::tempdir().unwrap();
        let rollback = open_connection(&dir.path().join("r.db"), Journal::Rollback).unwrap();
        let mode: String = rollback
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "truncate");
        let conn = open_connection(&dir.path().join("a/b/t.db"), Journal::Wal).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let sync: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 1, "NORMAL");
        let busy: i64 = conn
            .query_row("PRAGMA busy_timeout", [], |r| r.get(0))
            .unwrap();
        assert_eq!(busy, 10_000);
    }

    #[test]
    fn a_file_that_is_not_a_database_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junk.db");
        std::fs::write(
            &path,
            b"this is not sqlite, just some text that is long enough",
        )
        .unwrap();
        let err = open_connection(&path, Journal::Wal).unwrap_err();
        assert!(err.to_string().contains("junk.db"), "{err}");
    }
}
