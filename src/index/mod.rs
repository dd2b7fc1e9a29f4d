//! The search index of a vault: SQLite FTS5 in the cache folder, one database file per vault.
//!
//! * [`Index::sync`] reconciles the index with the vault: stat everything, re-read only what
//!   changed by (mtime, size), confirm by content hash, handle deletes and renames. An empty index
//!   is built in one pipelined pass (a reader thread parses while this thread writes).
//! * [`Index::sync_paths`] updates a few notes (the watcher's path).
//! * [`Index::search`] runs the query language of [`query`].

pub mod cjk;
mod document;
pub mod embeddings;
mod fresh;
pub mod graph;
mod graph_build;
pub mod query;
mod search;
mod snippet;
mod sync;
mod tasks;
pub mod watch;

pub use search::{SearchHit, SearchResults};
pub use sync::{Progress, ProgressPhase, Skipped, Staleness, SyncReport};
pub use tasks::{TaskFilter, TaskPage, TaskRow, TaskState};

use crate::config::IndexConfig;
use crate::store::{Journal, StoreError, open_connection};
use crate::vault::Vault;
use crate::vault::walk::WalkOptions;
use rusqlite::OptionalExtension;
use std::path::{Path, PathBuf};

/// Bump when the schema or the way notes are tokenised changes: older index files are rebuilt.
pub const SCHEMA_VERSION: i64 = 8;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("index database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("cannot remove the old index file {path}: {source}")]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the index reader thread failed: {0}")]
    Reader(String),
    /// The link graph could not be built or written (its own thread and file, decisions §72).
    #[error("the link graph: {0}")]
    Graph(String),
    #[error(
        "the query is too long ({chars} characters, {terms} words, phrases and filters; at most {} characters and {} terms): search for the few words that matter",
        query::MAX_QUERY_CHARS,
        query::MAX_QUERY_TERMS
    )]
    QueryTooLong { chars: usize, terms: usize },
    #[error(
        "the search took longer than {} s and was stopped: use fewer or rarer words, or add tag: or folder: filters",
        search::SEARCH_DEADLINE.as_secs()
    )]
    QueryTimeout,
    /// The vault's root folder cannot be listed (removed, replaced by a file, no permission). The
    /// index is left as it was: an empty listing must not read as "every note was deleted".
    #[error(
        "the vault folder {} cannot be read ({message}); the index was left as it was: check that the folder exists and that you may read it",
        root.display()
    )]
    VaultUnreadable { root: PathBuf, message: String },
}

/// How a note can be named: by path, title or alias (for `[[links]]` and tools that accept a title).
pub use crate::vault::links::NoteName;

/// One note as the app's file pane lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteListing {
    /// Vault-relative, with `/`.
    pub path: String,
    pub title: String,
    pub aliases: Vec<String>,
    /// When the file was last modified, in nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
}

/// A summary of the index for `doctor` and status lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStatus {
    pub notes: u64,
    pub last_sync_unix: Option<i64>,
    pub db_path: PathBuf,
}

/// The open index of one vault.
pub struct Index {
    conn: rusqlite::Connection,
    db_path: PathBuf,
    root: PathBuf,
    /// The vault root's handle: notes are read through it, never through a link that appeared
    /// after the walk (a folder swapped for a link must not pull outside files into the index).
    handle: std::sync::Arc<crate::vault::contained::RootHandle>,
    walk_options: WalkOptions,
}

/// A stable id for a vault: derived from its canonical path, so the same folder always maps to the
/// same index file and app-database rows.
pub fn vault_id(vault: &Vault) -> String {
    let root = vault.root().to_string_lossy();
    format!(
        "{:016x}",
        crate::vault::note_io::content_hash(root.as_bytes())
    )
}

/// Where the index of `vault` lives inside `index_dir`: the folder name (for people looking at the
/// cache) plus the vault id (for uniqueness).
pub fn db_path_for(index_dir: &Path, vault: &Vault) -> PathBuf {
    let name: String = vault
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "vault".into())
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    index_dir.join(format!("{name}-{}.db", vault_id(vault)))
}

impl Index {
    /// Open (creating if needed) the index of `vault` in `index_dir`. An index written by another
    /// schema version, or a damaged file, is discarded and starts empty: it is only a cache.
    pub fn open(index_dir: &Path, vault: &Vault, config: &IndexConfig) -> Result<Self, IndexError> {
        let db_path = db_path_for(index_dir, vault);
        let graph_path = graph_path_for(&db_path);
        let conn = match Self::open_checked(&db_path, &graph_path) {
            Ok(Some(conn)) => conn,
            Ok(None) | Err(_) => {
                tracing::info!(path = %db_path.display(), "discarding an outdated or damaged index");
                remove_db_files(&db_path)?;
                remove_db_files(&graph_path)?;
                Self::open_checked(&db_path, &graph_path)?.ok_or_else(|| {
                    IndexError::Reader("a freshly created index has the wrong version".into())
                })?
            }
        };
        let index = Self::over(conn, db_path, vault, config);
        if !index.graph_in_step()? {
            // The graph file is not the one the notes were built with (deleted or replaced by
            // hand, or left by a build that never committed the notes): start both again, so
            // the next sync is a cold build that fills them together.
            tracing::info!(path = %graph_path.display(), "the link graph is out of step with the index; rebuilding both");
            index.clear()?;
        }
        Ok(index)
    }

    /// Open the index of `vault` for reading only, as a one-shot query command needs it: no
    /// journal mode to set, no schema to create. `None` when there is no index yet, or one of
    /// another schema version, or one never synced: the caller opens it with [`Index::open`]
    /// and builds it.
    pub fn open_read_only(
        index_dir: &Path,
        vault: &Vault,
        config: &IndexConfig,
    ) -> Result<Option<Self>, IndexError> {
        use rusqlite::OpenFlags;
        let db_path = db_path_for(index_dir, vault);
        let graph_path = graph_path_for(&db_path);
        if !db_path.is_file() || !graph_path.is_file() {
            return Ok(None);
        }
        let Ok(conn) = rusqlite::Connection::open_with_flags(
            &db_path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        ) else {
            return Ok(None);
        };
        // A sync in another process holds the write lock for a moment: wait for it as
        // `open_connection` does.
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch("PRAGMA mmap_size = 268435456;")?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            return Ok(None);
        }
        // Attached from a read-only connection, the graph is read-only too.
        if attach_graph(&conn, &graph_path).is_err() {
            return Ok(None);
        }
        let index = Self::over(conn, db_path, vault, config);
        Ok((index.has_synced()? && index.graph_in_step()?).then_some(index))
    }

    /// The index of `vault` on an opened connection.
    fn over(
        conn: rusqlite::Connection,
        db_path: PathBuf,
        vault: &Vault,
        config: &IndexConfig,
    ) -> Self {
        Self {
            conn,
            db_path,
            root: vault.root().to_path_buf(),
            handle: std::sync::Arc::clone(vault.handle()),
            walk_options: WalkOptions {
                exclude_folders: config.exclude_folders.clone(),
            },
        }
    }

    /// Whether a note is indexed at exactly `path`.
    pub fn has_note(&self, path: &str) -> Result<bool, IndexError> {
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM notes WHERE path = ?1")?
            .query_row([path], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Set this connection up for a long-lived process (the app, `vaultchat mcp`, the live
    /// indexer): no memory map. Every page a mapped read touches — and the neighbours the kernel
    /// maps around it, which for the small `notes` table interleaved with the FTS content means
    /// most of the file — stays resident in the process (measured: 141 MB of a 220 MB index after
    /// listing 100,000 notes). Pages go through SQLite's bounded cache instead, which
    /// [`Index::release_memory`] empties. One-shot commands (`vaultchat search`) keep the map.
    pub fn without_memory_map(&mut self) -> Result<(), IndexError> {
        self.conn.execute_batch("PRAGMA mmap_size = 0;")?;
        Ok(())
    }

    /// A full sync, then SQLite's page cache emptied: for a long-lived process that goes idle.
    pub fn sync_lean(&mut self) -> Result<SyncReport, IndexError> {
        let report = self.sync(&mut |_| {});
        self.release_memory()?;
        report
    }

    /// Give SQLite's page cache back to the system (after a sync, before going idle).
    pub fn release_memory(&self) -> Result<(), IndexError> {
        self.conn.execute_batch("PRAGMA shrink_memory;")?;
        Ok(())
    }

    /// Open an index file and its graph file, create their schemas and attach the graph; `None`
    /// when either holds another schema version.
    fn open_checked(
        db_path: &Path,
        graph_path: &Path,
    ) -> Result<Option<rusqlite::Connection>, IndexError> {
        let Some(conn) = open_with_schema(db_path, include_str!("schema.sql"))? else {
            return Ok(None);
        };
        conn.execute_batch("PRAGMA mmap_size = 268435456;")?;
        if open_graph_file(graph_path)?.is_none() {
            return Ok(None);
        }
        attach_graph(&conn, graph_path)?;
        Ok(Some(conn))
    }

    /// Throw the index away and start empty (`vaultchat index --rebuild`).
    pub fn reset(&mut self) -> Result<(), IndexError> {
        self.clear()?;
        // Reclaim the space now rather than leaving files twice the size.
        self.conn.execute_batch("VACUUM main; VACUUM graph;")?;
        Ok(())
    }

    /// Delete every row of the index and its graph, in one transaction.
    fn clear(&self) -> Result<(), IndexError> {
        let tx = self.conn.unchecked_transaction()?;
        tx.execute_batch(
            "DELETE FROM notes; DELETE FROM note_tags; DELETE FROM notes_fts; DELETE FROM meta; DELETE FROM chunks; DELETE FROM tasks;
             DELETE FROM graph.links; DELETE FROM graph.graph_meta;",
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Whether the graph file was filled by the same cold build as the notes (both record it),
    /// or there are no notes yet. Writes after a cold build change both files in one
    /// transaction, so only a file deleted or replaced by hand, or a cold build that committed
    /// the graph and then failed before the notes, leaves them apart — and in that last case the
    /// notes are still empty.
    fn graph_in_step(&self) -> Result<bool, IndexError> {
        let build = |sql: &str| -> Result<Option<String>, IndexError> {
            Ok(self.conn.query_row(sql, [], |r| r.get(0)).optional()?)
        };
        let notes = build("SELECT value FROM main.meta WHERE key = 'graph_build'")?;
        let graph = build("SELECT value FROM graph.graph_meta WHERE key = 'build'")?;
        if notes == graph {
            return Ok(true);
        }
        let any_note: Option<i64> = self
            .conn
            .query_row("SELECT 1 FROM notes LIMIT 1", [], |r| r.get(0))
            .optional()?;
        Ok(any_note.is_none())
    }

    pub fn graph_path(&self) -> PathBuf {
        graph_path_for(&self.db_path)
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True once a sync has completed (cheap: one row of `meta`, no count).
    pub fn has_synced(&self) -> Result<bool, IndexError> {
        let found: Option<i64> = self
            .conn
            .query_row("SELECT 1 FROM meta WHERE key = 'last_sync_unix'", [], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(found.is_some())
    }

    pub fn status(&self) -> Result<IndexStatus, IndexError> {
        let notes: i64 = self
            .conn
            .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))?;
        let last_sync_unix = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'last_sync_unix'",
                [],
                |r| r.get::<_, String>(0),
            )
            .ok()
            .and_then(|v| v.parse().ok());
        Ok(IndexStatus {
            notes: u64::try_from(notes).unwrap_or(0),
            last_sync_unix,
            db_path: self.db_path.clone(),
        })
    }

    /// Every note's path, title and aliases (for resolving a title or alias to a path).
    pub fn note_names(&self) -> Result<Vec<NoteName>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, title, aliases FROM notes ORDER BY path")?;
        let rows = stmt.query_map([], note_name_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One note's path, title and aliases; `None` when the index has no such note.
    pub fn note_name(&self, path: &str) -> Result<Option<NoteName>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, title, aliases FROM notes WHERE path = ?1")?;
        Ok(stmt.query_row([path], note_name_row).optional()?)
    }

    /// Every note's path, title, aliases and modification time (ns since the epoch), sorted by
    /// path: what the app's file pane and `[[` completion list.
    pub fn note_listing(&self) -> Result<Vec<NoteListing>, IndexError> {
        // Sized before it is filled: collected from rows, the list would grow by doubling, and
        // the copies left behind stay in the long-lived app's resident memory.
        let count: i64 = self
            .conn
            .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))?;
        let mut listing = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, title, aliases, mtime_ns FROM notes ORDER BY path")?;
        let rows = stmt.query_map([], |r| {
            let aliases: String = r.get(2)?;
            Ok(NoteListing {
                path: r.get(0)?,
                title: r.get(1)?,
                aliases: serde_json::from_str(&aliases).unwrap_or_default(),
                mtime_ns: r.get(3)?,
            })
        })?;
        for row in rows {
            listing.push(row?);
        }
        // The scan filled the page cache with the whole `notes` table (13 MB at 137k notes),
        // which the app, idle afterwards, would keep.
        self.release_memory()?;
        Ok(listing)
    }

    /// The paths of the notes tagged `tag` or a tag nested under it (`a` also finds `a/b`),
    /// case-insensitively, sorted; at most `limit` (a command's `{{tag:x}}`).
    pub fn notes_tagged(&self, tag: &str, limit: usize) -> Result<Vec<String>, IndexError> {
        let tag = tag.trim_start_matches('#').to_lowercase();
        // '0' sorts right after '/': the range is every tag starting with "tag/".
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT n.path FROM notes n JOIN note_tags t ON t.note_id = n.id \
             WHERE t.tag = ?1 OR (t.tag >= ?2 AND t.tag < ?3) ORDER BY n.path LIMIT ?4",
        )?;
        let rows = stmt.query_map(
            rusqlite::params![
                tag,
                format!("{tag}/"),
                format!("{tag}0"),
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |r| r.get(0),
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Check the FTS5 structures (used after crash tests and by `doctor`).
    pub fn integrity_check(&self) -> Result<(), IndexError> {
        self.conn.execute(
            "INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)",
            [],
        )?;
        let ok: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if ok != "ok" {
            return Err(IndexError::Reader(format!("integrity check: {ok}")));
        }
        Ok(())
    }
}

/// A row of `SELECT path, title, aliases FROM notes` as the note's names.
fn note_name_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<NoteName> {
    let aliases: String = r.get(2)?;
    Ok(NoteName {
        path: r.get(0)?,
        title: Some(r.get(1)?),
        aliases: serde_json::from_str(&aliases).unwrap_or_default(),
    })
}

/// The graph file beside the index file `db_path`: `x.db` → `x.graph.db`.
pub fn graph_path_for(db_path: &Path) -> PathBuf {
    db_path.with_extension("graph.db")
}

/// The page cache and temporary storage of a connection that writes big syncs.
const BULK_PRAGMAS: &str = "PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY;";

/// Open (creating) the graph file with its own connection, as a cold build writes it; `None`
/// when it holds another schema version.
pub(crate) fn open_graph_file(
    graph_path: &Path,
) -> Result<Option<rusqlite::Connection>, IndexError> {
    open_with_schema(graph_path, include_str!("graph_schema.sql"))
}

/// Open (creating) a database file of the index with the page cache of a big sync, and create
/// `schema` in a new one; `None` when it holds another schema version.
fn open_with_schema(path: &Path, schema: &str) -> Result<Option<rusqlite::Connection>, IndexError> {
    let conn = open_connection(path, Journal::Rollback)?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version != 0 && version != SCHEMA_VERSION {
        return Ok(None);
    }
    // A larger page cache keeps FTS5 segment merges and index sorts in memory during big syncs.
    conn.execute_batch(BULK_PRAGMAS)?;
    if version == 0 {
        conn.execute_batch(schema)?;
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    Ok(Some(conn))
}

/// Attach the graph file to the index's connection as `graph` (read-only when the connection
/// is). Its tables' names are the graph's own, so queries name them without the schema.
fn attach_graph(conn: &rusqlite::Connection, graph_path: &Path) -> Result<(), IndexError> {
    #[cfg(unix)]
    let name = {
        use std::os::unix::ffi::OsStrExt;
        // Bytes, not text: a path need not be UTF-8, and ATTACH reads a blob's bytes as the name.
        rusqlite::types::Value::Blob(graph_path.as_os_str().as_bytes().to_vec())
    };
    #[cfg(not(unix))]
    let name = rusqlite::types::Value::Text(graph_path.to_string_lossy().into_owned());
    conn.execute("ATTACH DATABASE ?1 AS graph", [name])?;
    Ok(())
}

fn remove_db_files(db_path: &Path) -> Result<(), IndexError> {
    // The rollback journal too: a hot journal left beside a new file would be played into it.
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let mut p = db_path.as_os_str().to_owned();
        p.push(suffix);
        let p = PathBuf::from(p);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(IndexError::Remove { path: p, source }),
        }
    }
    Ok(())
}
