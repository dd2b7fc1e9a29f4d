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

/// Open a database file with WAL, `synchronous=NORMAL` and a busy timeout, creating its folder.
///
/// WAL lets readers (a `vaultchat search` in another terminal) run while the TUI writes; NORMAL
/// keeps every committed transaction across an application crash and only risks the last commits
/// on power loss, which is the right trade for an index and for chat logs.
pub fn open_connection(path: &Path) -> Result<rusqlite::Connection, StoreError> {
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
    // journal_mode answers with a row, so it is read rather than executed.
    let _mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .map_err(open_err)?;
    conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
        .map_err(open_err)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragmas_are_set() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open_connection(&dir.path().join("a/b/t.db")).unwrap();
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
        let err = open_connection(&path).unwrap_err();
        assert!(err.to_string().contains("junk.db"), "{err}");
    }
}
