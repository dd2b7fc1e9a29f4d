//! Reconciling the index with the vault.

use super::document::{self, Document};
use super::graph::{self, GraphChanges};
use super::graph_build::GraphBuild;
use super::{Index, IndexError};
use crate::vault::contained::RootHandle;
use crate::vault::links::LinkIndex;
use crate::vault::walk::{self, NoteStat};
use rusqlite::{Transaction, params};
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A file modified less than this long before it was indexed may be modified again within the
/// same timestamp tick without changing (mtime, size); such rows are re-hashed on the next sync
/// (the "racy git" problem).
const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// A sync that changes at least this many notes merges the FTS5 segments afterwards.
const OPTIMIZE_AFTER_CHANGES: u64 = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressPhase {
    Scanning,
    Indexing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: ProgressPhase,
    pub done: u64,
    pub total: u64,
}

/// A note that could not be indexed, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SyncReport {
    /// Notes found in the vault.
    pub scanned: u64,
    pub added: u64,
    pub updated: u64,
    pub removed: u64,
    pub renamed: u64,
    pub unchanged: u64,
    /// True when the index was empty and built from scratch.
    pub cold: bool,
    pub skipped: Vec<Skipped>,
    #[serde(skip)]
    pub elapsed: Duration,
}

impl SyncReport {
    pub fn changed(&self) -> u64 {
        self.added + self.updated + self.removed + self.renamed
    }
}

/// A stored row, as far as change detection needs it.
#[derive(Debug, Clone, Copy)]
struct Row {
    id: i64,
    mtime_ns: i64,
    size: u64,
    hash: u64,
    racy: bool,
}

/// A note that must be read: new, or changed by (mtime, size), or racy.
struct Work {
    stat: NoteStat,
    existing: Option<Row>,
}

/// A note read from disk, ready to be written to the index.
struct Loaded {
    stat: NoteStat,
    existing: Option<Row>,
    hash: u64,
    doc: Option<Document>,
}

/// The kernel's clock, not `crate::time`'s: the racy cutoff is compared with file modification
/// times, which the kernel stamps with its real clock, so a clock a test fixed or started
/// elsewhere would mark every file racy (or none).
fn file_clock_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Index {
    /// Bring the index up to date with the whole vault.
    pub fn sync(&mut self, progress: &mut dyn FnMut(Progress)) -> Result<SyncReport, IndexError> {
        let started = Instant::now();
        let mut report = SyncReport::default();
        let graph_path = self.graph_path();
        // The write lock before reading the rows, so two processes syncing at once cannot both
        // decide to insert the same note.
        let tx = begin_write(&mut self.conn)?;
        let mut rows = load_rows(&tx)?;
        report.cold = rows.is_empty();
        progress(Progress {
            phase: ProgressPhase::Scanning,
            done: 0,
            total: 0,
        });
        let walked = walk::walk(&self.root, &self.walk_options);
        check_root_listed(&self.root, &walked.problems)?;
        report.scanned = walked.notes.len() as u64;
        for problem in walked.problems {
            // A folder (or a note) that could not be read is not gone: its rows stay as they
            // were, instead of being deleted as if the notes had been.
            rows.retain(|path, _| !is_at_or_under(path, &problem.rel));
            report.skipped.push(Skipped {
                path: problem.rel,
                reason: problem.message,
            });
        }

        let mut pending = Pending::new();
        let mut graph_build = None;
        let build_stamp = report.cold.then(new_build_stamp);
        if let Some(build_stamp) = &build_stamp {
            // A cold build knows every note before reading any: each link resolves as it is
            // written (on the graph's own thread), instead of being written, then read back and
            // resolved.
            let notes = LinkIndex::new(walked.notes.iter().map(|n| n.rel.clone()));
            graph_build = Some(GraphBuild::start(graph_path, notes, build_stamp.clone())?);
            // And the index is built once at the end, from all rows, rather than grown row by row.
            tx.execute_batch("DROP INDEX IF EXISTS notes_by_file_key")?;
        }
        for stat in walked.notes {
            let existing = rows.remove(&stat.rel);
            pending.found(stat, existing, &mut report);
        }
        // What is left in `rows` is gone from the vault: deleted, or renamed (matched by hash).
        for (path, row) in rows {
            pending.gone(path, row);
        }

        let total = pending.work.len() as u64;
        let mut done = 0u64;
        pending.write(
            &tx,
            &self.handle,
            graph_build.as_ref(),
            &mut report,
            &mut |n| {
                done += n;
                progress(Progress {
                    phase: ProgressPhase::Indexing,
                    done,
                    total,
                });
            },
        )?;
        if let Some(graph_build) = graph_build.as_mut() {
            // The graph sorts its indexes while this thread finishes the notes' side.
            graph_build.close()?;
        }
        if let Some(build_stamp) = &build_stamp {
            tx.execute_batch("CREATE INDEX IF NOT EXISTS notes_by_file_key ON notes (file_key)")?;
            tx.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('graph_build', ?1)",
                [build_stamp],
            )?;
        }
        // A sync that changed nothing writes nothing: no journal, no fsync (most refreshes).
        if report.changed() > 0 || report.cold || !has_sync_time(&tx)? {
            record_sync_time(&tx)?;
        }
        // A bulk insert leaves the full-text index in many segments, and every query term probes
        // each of them; merging them once after a big sync makes later queries cheaper.
        if report.changed() >= OPTIMIZE_AFTER_CHANGES {
            tx.execute("INSERT INTO notes_fts (notes_fts) VALUES ('optimize')", [])?;
        }
        // The graph commits first: see graph_build.rs on the order.
        if let Some(graph_build) = graph_build {
            graph_build.wait()?;
        }
        tx.commit()?;
        report.elapsed = started.elapsed();
        Ok(report)
    }

    /// Update the index for a few vault-relative paths (from the watcher). Paths that no longer
    /// exist are removed; paths that are not notes are ignored. A path that cannot be checked
    /// (no permission) keeps its row and is reported as skipped; an unreadable vault root is an
    /// error and changes nothing.
    pub fn sync_paths(&mut self, rels: &[String]) -> Result<SyncReport, IndexError> {
        let started = Instant::now();
        let mut report = SyncReport::default();
        let tx = begin_write(&mut self.conn)?;
        let mut pending = Pending::new();
        for rel in rels {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            if walk::is_hidden_rel(rel)
                || !walk::is_note_name(name)
                || is_excluded(&self.walk_options, rel)
            {
                continue;
            }
            let existing = load_row(&tx, rel)?;
            // symlink_metadata: a link is not a note, whatever it points to.
            match std::fs::symlink_metadata(self.root.join(rel)) {
                Ok(meta) if meta.is_file() => {
                    report.scanned += 1;
                    let stat = NoteStat {
                        rel: rel.clone(),
                        mtime_ns: walk::mtime_ns(&meta),
                        size: meta.len(),
                    };
                    pending.found(stat, existing, &mut report);
                }
                Ok(_) => pending.forget(rel, existing),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
                {
                    pending.forget(rel, existing)
                }
                Err(e) => report.skipped.push(Skipped {
                    path: rel.clone(),
                    reason: e.to_string(),
                }),
            }
        }
        if !pending.gone_by_hash.is_empty() {
            check_root_readable(&self.root)?;
        }
        pending.write(&tx, &self.handle, None, &mut report, &mut |_| {})?;
        tx.commit()?;
        report.elapsed = started.elapsed();
        Ok(report)
    }

    /// True when every given note still has the (mtime, size) the index recorded; used to make
    /// sure search results do not point at notes that changed since the last sync.
    pub fn is_fresh(&self, rels: &[&str]) -> Result<bool, IndexError> {
        // One read transaction for all the lookups: outside one, each query takes and releases
        // the file lock (3 fcntl calls and a stat), which for the 4,000 linking notes of a much
        // linked note cost more than the lookups.
        let tx = self.conn.unchecked_transaction()?;
        let mut stmt = tx.prepare_cached("SELECT mtime_ns, size FROM notes WHERE path = ?1")?;
        for rel in rels {
            let stored: Option<(i64, i64)> =
                stmt.query_row([rel], |r| Ok((r.get(0)?, r.get(1)?))).ok();
            let on_disk = std::fs::symlink_metadata(self.root.join(rel))
                .ok()
                .map(|m| {
                    (
                        walk::mtime_ns(&m),
                        i64::try_from(m.len()).unwrap_or(i64::MAX),
                    )
                });
            if stored.is_none() || stored != on_disk {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// `Err` when the walk could not list the vault's root folder itself.
fn check_root_listed(
    root: &std::path::Path,
    problems: &[walk::WalkProblem],
) -> Result<(), IndexError> {
    match problems.iter().find(|p| p.rel.is_empty()) {
        Some(problem) => Err(IndexError::VaultUnreadable {
            root: root.to_path_buf(),
            message: problem.message.clone(),
        }),
        None => Ok(()),
    }
}

/// `Err` unless the vault's root is still a folder that can be listed. A file that "does not
/// exist" only counts as deleted while its vault still does.
fn check_root_readable(root: &std::path::Path) -> Result<(), IndexError> {
    std::fs::read_dir(root)
        .map(drop)
        .map_err(|e| IndexError::VaultUnreadable {
            root: root.to_path_buf(),
            message: e.to_string(),
        })
}

/// Marks the row of `rel`, if it has one, as gone from the vault (deleted, or renamed).
/// What a sync found to do: the notes to (re)load and the rows whose notes are gone (deleted, or
/// renamed: matched by hash when the loaded notes are written).
struct Pending {
    racy_cutoff: i64,
    work: Vec<Work>,
    gone_by_hash: HashMap<u64, Vec<(String, Row)>>,
}

impl Pending {
    fn new() -> Pending {
        Pending {
            racy_cutoff: file_clock_ns() - RACY_WINDOW_NS,
            work: Vec::new(),
            gone_by_hash: HashMap::new(),
        }
    }

    /// A note on disk with its row, if any: unchanged when the row has its size and modification
    /// time (and was not written in the racy window), else to be loaded.
    fn found(&mut self, stat: NoteStat, existing: Option<Row>, report: &mut SyncReport) {
        match existing {
            Some(row) if row.mtime_ns == stat.mtime_ns && row.size == stat.size && !row.racy => {
                report.unchanged += 1;
            }
            existing => self.work.push(Work { stat, existing }),
        }
    }

    /// The row of a note that is no longer there.
    fn gone(&mut self, rel: String, row: Row) {
        self.gone_by_hash
            .entry(row.hash)
            .or_default()
            .push((rel, row));
    }

    /// [`Pending::gone`] for a path that may have had a row.
    fn forget(&mut self, rel: &str, existing: Option<Row>) {
        if let Some(row) = existing {
            self.gone(rel.to_string(), row);
        }
    }

    /// Write the loaded notes (`tick` counts them), then delete the rows still gone. On a cold
    /// build `graph` takes each note's links.
    fn write(
        mut self,
        tx: &Transaction<'_>,
        root: &RootHandle,
        graph: Option<&GraphBuild>,
        report: &mut SyncReport,
        tick: &mut dyn FnMut(u64),
    ) -> Result<(), IndexError> {
        let mut changes = GraphChanges::default();
        let mut writer = Writer {
            tx,
            racy_cutoff: self.racy_cutoff,
            gone_by_hash: &mut self.gone_by_hash,
            graph,
            changes: &mut changes,
        };
        write_loaded(&mut writer, root, self.work, report, tick)?;
        for (rel, row) in self.gone_by_hash.into_values().flatten() {
            delete_row(tx, row.id)?;
            changes.note_vanished(&rel);
            report.removed += 1;
        }
        graph::settle(tx, &changes)
    }
}

/// Whether the vault-relative `path` is `folder` or lies inside it (`""` is the whole vault).
fn is_at_or_under(path: &str, folder: &str) -> bool {
    folder.is_empty()
        || path == folder
        || (path.starts_with(folder) && path.as_bytes().get(folder.len()) == Some(&b'/'))
}

fn is_excluded(options: &crate::vault::walk::WalkOptions, rel: &str) -> bool {
    options
        .exclude_folders
        .iter()
        .any(|ex| rel.starts_with(ex.as_str()) && rel.as_bytes().get(ex.len()) == Some(&b'/'))
}

fn load_rows(tx: &Transaction<'_>) -> Result<HashMap<String, Row>, IndexError> {
    let mut stmt = tx.prepare("SELECT path, id, mtime_ns, size, hash, racy FROM notes")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Row {
                id: r.get(1)?,
                mtime_ns: r.get(2)?,
                size: r.get::<_, i64>(3)?.unsigned_abs(),
                hash: r.get::<_, i64>(4)? as u64,
                racy: r.get(5)?,
            },
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn load_row(tx: &Transaction<'_>, rel: &str) -> Result<Option<Row>, IndexError> {
    let mut stmt =
        tx.prepare_cached("SELECT id, mtime_ns, size, hash, racy FROM notes WHERE path = ?1")?;
    let mut rows = stmt.query([rel])?;
    Ok(match rows.next()? {
        Some(r) => Some(Row {
            id: r.get(0)?,
            mtime_ns: r.get(1)?,
            size: r.get::<_, i64>(2)?.unsigned_abs(),
            hash: r.get::<_, i64>(3)? as u64,
            racy: r.get(4)?,
        }),
        None => None,
    })
}

/// Read, parse and write the notes in `work`. Reading and parsing run on a second thread while
/// this one writes to SQLite, so a cold build uses both cores.
/// Where loaded notes are written, and what the writing must remember.
struct Writer<'w, 't> {
    tx: &'w Transaction<'t>,
    racy_cutoff: i64,
    gone_by_hash: &'w mut HashMap<u64, Vec<(String, Row)>>,
    /// A cold build's graph, which takes each note's links.
    graph: Option<&'w GraphBuild>,
    changes: &'w mut GraphChanges,
}

fn write_loaded(
    writer: &mut Writer<'_, '_>,
    root: &RootHandle,
    work: Vec<Work>,
    report: &mut SyncReport,
    tick: &mut dyn FnMut(u64),
) -> Result<(), IndexError> {
    if work.is_empty() {
        return Ok(());
    }
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Result<Loaded, Skipped>>(128);
    std::thread::scope(|scope| -> Result<(), IndexError> {
        scope.spawn(move || {
            for item in work {
                let loaded = load(root, item);
                if sender.send(loaded).is_err() {
                    break; // the writer stopped on an error
                }
            }
        });
        let mut since_tick = 0;
        for loaded in receiver {
            match loaded {
                Ok(loaded) => write_one(writer, loaded, report)?,
                Err(skipped) => report.skipped.push(skipped),
            }
            since_tick += 1;
            if since_tick == 64 {
                tick(since_tick);
                since_tick = 0;
            }
        }
        tick(since_tick);
        Ok(())
    })
}

fn load(root: &RootHandle, work: Work) -> Result<Loaded, Skipped> {
    let bytes = root.read(&work.stat.rel).map_err(|e| Skipped {
        path: work.stat.rel.clone(),
        reason: e.to_string(),
    })?;
    let hash = crate::vault::note_io::content_hash(&bytes);
    // Same bytes as indexed: only the timestamps moved (touch, a sync tool); skip the parse.
    let doc = match work.existing {
        Some(row) if row.hash == hash => None,
        _ => Some(document::build(&work.stat.rel, &bytes)),
    };
    let mut stat = work.stat;
    // The size recorded must be the size of the bytes hashed, even if the file grew meanwhile.
    stat.size = bytes.len() as u64;
    Ok(Loaded {
        stat,
        existing: work.existing,
        hash,
        doc,
    })
}

fn write_one(
    writer: &mut Writer<'_, '_>,
    loaded: Loaded,
    report: &mut SyncReport,
) -> Result<(), IndexError> {
    let tx = writer.tx;
    let racy = loaded.stat.mtime_ns > writer.racy_cutoff;
    let Some(doc) = loaded.doc else {
        // Unchanged content: refresh the stat fields only.
        if let Some(row) = loaded.existing {
            tx.prepare_cached(
                "UPDATE notes SET mtime_ns = ?2, size = ?3, racy = ?4 WHERE id = ?1",
            )?
            .execute(params![
                row.id,
                loaded.stat.mtime_ns,
                loaded.stat.size as i64,
                racy
            ])?;
        }
        report.unchanged += 1;
        return Ok(());
    };
    let hash_bits = loaded.hash as i64;
    let aliases_json = serde_json::to_string(&doc.alias_list).unwrap_or_else(|_| "[]".into());
    // An existing row is updated in place; a new path with the content of a vanished one is a
    // rename, which keeps that row's id; anything else is a new row.
    let reused = match loaded.existing {
        Some(row) => {
            report.updated += 1;
            Some(row)
        }
        None => {
            let renamed_from = writer.gone_by_hash.get_mut(&loaded.hash).and_then(Vec::pop);
            let renamed_from = renamed_from.map(|(old_rel, row)| {
                report.renamed += 1;
                writer.changes.note_vanished(&old_rel);
                row
            });
            if writer.graph.is_none() {
                // A new name: links that waited for it (or meant another note by it) resolve anew.
                writer.changes.note_named(&loaded.stat.rel);
            }
            renamed_from
        }
    };
    // One upsert for all three cases: a reused row keeps its id (NULL lets SQLite pick one).
    tx.prepare_cached(
        "INSERT INTO notes (id, path, title, mtime_ns, size, hash, racy, aliases, name_keys, file_key)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT(id) DO UPDATE SET path = excluded.path, title = excluded.title,
           mtime_ns = excluded.mtime_ns, size = excluded.size, hash = excluded.hash,
           racy = excluded.racy, aliases = excluded.aliases, name_keys = excluded.name_keys,
           file_key = excluded.file_key",
    )?
    .execute(params![
        reused.map(|row| row.id),
        loaded.stat.rel,
        doc.title,
        loaded.stat.mtime_ns,
        loaded.stat.size as i64,
        hash_bits,
        racy,
        aliases_json,
        doc.name_keys,
        doc.file_key
    ])?;
    let id = match reused {
        Some(row) => {
            clear_note_terms(tx, row.id)?;
            row.id
        }
        None => {
            report.added += 1;
            tx.last_insert_rowid()
        }
    };
    tx.prepare_cached(
        "INSERT INTO notes_fts (rowid, title, aliases, path, tags, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        id,
        doc.title_fts,
        doc.aliases,
        loaded.stat.rel,
        doc.tags_text,
        doc.body
    ])?;
    insert_tags_and_tasks(tx, id, &doc)?;
    match writer.graph {
        Some(graph) => graph.note(id, &loaded.stat.rel, doc.links),
        None => {
            graph::insert_links(tx, id, &loaded.stat.rel, &doc.links, None)?;
            if !doc.links.is_empty() {
                // Written pending: resolved by `settle` at the end of the sync.
                writer.changes.dirty.push(id);
            }
            Ok(())
        }
    }
}

/// The rows of a note's tags and tasks (its old ones already cleared).
fn insert_tags_and_tasks(tx: &Transaction<'_>, id: i64, doc: &Document) -> Result<(), IndexError> {
    let mut insert_tag =
        tx.prepare_cached("INSERT OR IGNORE INTO note_tags (tag, note_id) VALUES (?1, ?2)")?;
    for tag in &doc.tags {
        insert_tag.execute(params![tag, id])?;
    }
    let mut insert_task = tx.prepare_cached(
        "INSERT OR REPLACE INTO tasks (note_id, line, status, text, due, tags) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for task in &doc.tasks {
        insert_task.execute(params![
            id,
            task.line as i64,
            task.status,
            task.text,
            task.due,
            task.tags
        ])?;
    }
    Ok(())
}

fn clear_note_terms(tx: &Transaction<'_>, id: i64) -> Result<(), IndexError> {
    tx.prepare_cached("DELETE FROM notes_fts WHERE rowid = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM note_tags WHERE note_id = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM tasks WHERE note_id = ?1")?
        .execute([id])?;
    graph::delete_links(tx, id)
}

fn delete_row(tx: &Transaction<'_>, id: i64) -> Result<(), IndexError> {
    clear_note_terms(tx, id)?;
    tx.prepare_cached("DELETE FROM chunks WHERE note_id = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM notes WHERE id = ?1")?
        .execute([id])?;
    Ok(())
}

/// A write transaction that holds the index file's write lock from its start, as IMMEDIATE would,
/// but not the graph file's: that one is taken by the first write to `links`, which a cold build
/// leaves to the graph's own connection (graph_build.rs). Every writer takes the index file's
/// lock first, so two never wait on each other in opposite orders. A sync that writes no link
/// commits one file, without SQLite's super-journal.
fn begin_write(conn: &mut rusqlite::Connection) -> Result<Transaction<'_>, IndexError> {
    let tx = conn.transaction()?;
    // Deletes nothing, but begins the write on `main` (checked by a test).
    tx.execute("DELETE FROM main.meta WHERE 0", [])?;
    Ok(tx)
}

/// A stamp for one cold build, which the index and its graph file both record.
fn new_build_stamp() -> String {
    format!("{:x}.{}", file_clock_ns(), std::process::id())
}

fn has_sync_time(tx: &Transaction<'_>) -> Result<bool, IndexError> {
    let n: i64 = tx.query_row(
        "SELECT count(*) FROM meta WHERE key = 'last_sync_unix'",
        [],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

/// Remember when the index last took in changes (`doctor` and `has_synced` read it).
fn record_sync_time(tx: &Transaction<'_>) -> Result<(), IndexError> {
    let now = crate::time::now_ms().div_euclid(1000);
    tx.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('last_sync_unix', ?1)",
        [now.to_string()],
    )?;
    Ok(())
}

/// How far the index is behind the vault, measured without changing anything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Staleness {
    pub indexed: u64,
    pub new: u64,
    pub changed: u64,
    pub missing: u64,
}

impl Index {
    /// Compare the vault with the index by (mtime, size), read-only (for `doctor`).
    pub fn staleness(&mut self) -> Result<Staleness, IndexError> {
        let tx = self.conn.transaction()?;
        let mut rows = load_rows(&tx)?;
        drop(tx);
        let mut out = Staleness {
            indexed: rows.len() as u64,
            ..Staleness::default()
        };
        let walked = walk::walk(&self.root, &self.walk_options);
        check_root_listed(&self.root, &walked.problems)?;
        for problem in &walked.problems {
            // Unreadable is not missing.
            rows.retain(|path, _| !is_at_or_under(path, &problem.rel));
        }
        for stat in walked.notes {
            match rows.remove(&stat.rel) {
                None => out.new += 1,
                Some(row) if row.mtime_ns != stat.mtime_ns || row.size != stat.size => {
                    out.changed += 1
                }
                Some(_) => {}
            }
        }
        out.missing = rows.len() as u64;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_transaction_locks_the_index_file_from_its_start_and_not_the_graph_file() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("v");
        std::fs::create_dir_all(&root).unwrap();
        let vault = crate::vault::Vault::open(&root).unwrap();
        let config = crate::config::IndexConfig::default();
        let mut index = Index::open(&tmp.path().join("index"), &vault, &config).unwrap();
        let (db_path, graph_path) = (index.db_path().to_path_buf(), index.graph_path());
        let tx = begin_write(&mut index.conn).unwrap();
        // No busy timeout on these: a lock held elsewhere is an error at once.
        let other_main = rusqlite::Connection::open(&db_path).unwrap();
        assert!(other_main.execute_batch("BEGIN IMMEDIATE").is_err());
        let other_graph = rusqlite::Connection::open(&graph_path).unwrap();
        other_graph
            .execute_batch("BEGIN IMMEDIATE; COMMIT")
            .unwrap();
        drop(tx);
        other_main.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
    }

    #[test]
    fn rows_under_an_unreadable_folder_are_recognised_by_whole_names() {
        assert!(is_at_or_under("Locked/a.md", "Locked"));
        assert!(is_at_or_under("Locked/Deep/b.md", "Locked"));
        assert!(is_at_or_under("Locked/a.md", "Locked/a.md"));
        assert!(is_at_or_under("anything.md", ""));
        assert!(!is_at_or_under("Lockedness.md", "Locked"));
        assert!(!is_at_or_under("Other/Locked/a.md", "Locked"));
    }
}
