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
    #[error(
        "there is no session `{id}`\n  fix: `vaultchat sessions list` shows the sessions there are"
    )]
    UnknownSession { id: String },
    #[error(
        "`{prefix}` is the start of several session ids ({}); type more of the id",
        candidates.join(", ")
    )]
    AmbiguousSessionId {
        prefix: String,
        candidates: Vec<String>,
    },
    #[error("`{prefix}` is too short to pick a session: give at least {min} characters of its id")]
    SessionIdPrefixTooShort { prefix: String, min: usize },
    /// The session exists, in another vault: a session is shown, exported, resumed and deleted
    /// only from its own vault (two vaults may share one data folder).
    #[error(
        "session `{id}` belongs to another vault{}, not to this one; sessions are shown, exported, resumed and deleted only from their own vault\n  fix: run the command in that vault (`--vault PATH`), or `vaultchat sessions list` for this vault's sessions",
        root.as_deref().map(|r| format!(" ({r})")).unwrap_or_default()
    )]
    SessionOfAnotherVault { id: String, root: Option<String> },
    #[error("`{value}` is not a valid {what}: expected {allowed}")]
    InvalidValue {
        what: &'static str,
        value: String,
        allowed: &'static str,
    },
}

/// How long a connection waits for another connection's lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long to sleep between attempts to take a lock another connection holds.
const BUSY_RETRY: Duration = Duration::from_millis(1);

/// Retry every millisecond until [`BUSY_TIMEOUT`]. SQLite's own busy timeout backs off (1, 2, 5,
/// 10 … 100 ms between attempts), so a lock held for two milliseconds can cost a waiter a hundred:
/// with the index's rollback journal, a watcher commit and a stream of searches would wait on each
/// other's back-off rather than on each other.
fn retry_briefly(attempt: i32) -> bool {
    #[cfg(test)]
    tests::busy_waits::record();
    let waited = BUSY_RETRY * u32::try_from(attempt).unwrap_or(u32::MAX);
    if waited >= BUSY_TIMEOUT {
        return false;
    }
    std::thread::sleep(BUSY_RETRY);
    true
}

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
    let mut conn = rusqlite::Connection::open(path).map_err(open_err)?;
    conn.busy_handler(Some(retry_briefly)).map_err(open_err)?;
    let mode = match journal {
        Journal::Wal => "WAL",
        Journal::Rollback => "TRUNCATE",
    };
    // journal_mode answers with a row, so it is read rather than executed. Switching a new file to
    // WAL needs its exclusive lock; two connections doing it at once (the app's first start opens
    // the database from two places) can each hold the shared lock the other waits on, and SQLite
    // answers BUSY at once rather than calling the busy handler: try again for a while.
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row(&format!("PRAGMA journal_mode={mode}"), [], |r| {
            r.get::<_, String>(0)
        }) {
            Ok(_) => break,
            Err(rusqlite::Error::SqliteFailure(err, _))
                if err.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(BUSY_RETRY);
            }
            Err(err) => return Err(open_err(err)),
        }
    }
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

    /// The threads the busy handler has run on: a test's sign that a connection is waiting for
    /// another's lock (SQLite shows no waiters from outside).
    pub(super) mod busy_waits {
        use std::sync::{Mutex, PoisonError};
        use std::thread::ThreadId;

        static THREADS: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());

        pub fn record() {
            let id = std::thread::current().id();
            let mut threads = THREADS.lock().unwrap_or_else(PoisonError::into_inner);
            if !threads.contains(&id) {
                threads.push(id);
            }
        }

        pub fn seen(id: ThreadId) -> bool {
            THREADS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&id)
        }
    }

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
        let foreign_keys: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(foreign_keys, 1, "ON DELETE CASCADE needs foreign keys on");
        // A custom busy handler replaces the busy timeout: it retries every millisecond.
        assert!(retry_briefly(0));
        assert!(retry_briefly(9_999));
        assert!(!retry_briefly(10_000));
    }

    #[test]
    fn a_reader_waits_for_a_writer_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock.db");
        let writer = open_connection(&path, Journal::Rollback).unwrap();
        writer
            .execute_batch("CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
            .unwrap();
        let reader_path = path.clone();
        let reader = std::thread::spawn(move || {
            let reader = open_connection(&reader_path, Journal::Rollback).unwrap();
            reader
                .query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
                .unwrap()
        });
        // Commit only once the reader is waiting for the lock: a reader that came after the
        // commit would pass without waiting for anything.
        let waiting = std::time::Instant::now();
        while !busy_waits::seen(reader.thread().id()) {
            assert!(
                !reader.is_finished() && waiting.elapsed() < Duration::from_secs(10),
                "the reader never waited for the writer's lock"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        writer.execute_batch("COMMIT").unwrap();
        assert_eq!(
            reader.join().unwrap(),
            1,
            "the reader saw the committed row"
        );
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
