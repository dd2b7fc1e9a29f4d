//! A cold build's link graph, written beside the notes: its own thread and its own connection
//! to the graph file, fed the links of each note as the notes are written (decisions §72).
//!
//! The graph's rows and its four indexes were a third of a cold build's time when the index's
//! one connection wrote them after each note's full-text rows (docs/benchmarks.md §15b); here
//! they are written while the index's thread writes the notes, and the graph's indexes are
//! sorted while that thread merges the full-text segments.
//!
//! Commit order: the graph commits first, then the notes. A failure or crash between the two
//! leaves the notes empty (a cold build starts from none), which the next sync builds again;
//! `Index::graph_in_step` only compares the two files' build stamps once notes exist.

use super::IndexError;
use super::graph::{self, NoteLink, Resolver};
use crate::vault::links::LinkIndex;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// The links of the note `id` (at `from`).
struct NoteLinks {
    id: i64,
    from: String,
    links: Vec<NoteLink>,
}

/// Notes are handed over this many at a time: one message per note cost a thread wake-up each
/// (137k of them: over a second of system time in a cold build).
const BATCH: usize = 256;

/// What the notes' writer sends the graph's.
enum Work {
    Notes(Vec<NoteLinks>),
    /// Every note was written: sort the indexes, stamp the build, commit.
    Finish,
}

/// The graph's thread, while a cold build runs. Dropped before [`GraphBuild::close`] (the notes'
/// build failed), the graph's transaction is rolled back; after it, the graph commits (and the
/// notes, if they then fail, stay empty: the next sync is a cold build again). Either way the
/// drop waits for the thread.
pub(super) struct GraphBuild {
    sender: Option<SyncSender<Work>>,
    batch: RefCell<Vec<NoteLinks>>,
    thread: Mutex<Option<JoinHandle<Result<(), IndexError>>>>,
}

impl GraphBuild {
    /// Start the thread: it opens the graph file, takes its write lock and empties it. `notes`
    /// is every note of the vault (each link resolves as it arrives); `build` the stamp both
    /// files record.
    pub fn start(graph_path: PathBuf, notes: LinkIndex, build: String) -> Result<Self, IndexError> {
        // A few batches in flight: the writer never waits on the graph for long, and a graph
        // that falls behind holds little memory.
        let (sender, receiver) = sync_channel::<Work>(4);
        let thread = std::thread::Builder::new()
            .name("index-graph".into())
            .spawn(move || write_graph(&graph_path, &notes, receiver, &build))
            .map_err(|e| IndexError::Graph(format!("cannot start its thread: {e}")))?;
        Ok(Self {
            sender: Some(sender),
            batch: RefCell::new(Vec::with_capacity(BATCH)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Hand over the links of one written note.
    pub fn note(&self, id: i64, from: &str, links: Vec<NoteLink>) -> Result<(), IndexError> {
        if links.is_empty() {
            return Ok(());
        }
        let full = {
            let mut batch = self.batch.borrow_mut();
            batch.push(NoteLinks {
                id,
                from: from.to_string(),
                links,
            });
            batch.len() >= BATCH
        };
        if full { self.flush() } else { Ok(()) }
    }

    /// Send the notes gathered so far.
    fn flush(&self) -> Result<(), IndexError> {
        let notes = std::mem::replace(&mut *self.batch.borrow_mut(), Vec::with_capacity(BATCH));
        if notes.is_empty() {
            return Ok(());
        }
        match self.sender.as_ref().map(|s| s.send(Work::Notes(notes))) {
            Some(Ok(())) => Ok(()),
            // The graph's thread stopped: its error says why.
            _ => Err(self
                .join()
                .err()
                .unwrap_or_else(|| IndexError::Graph("its thread stopped".into()))),
        }
    }

    /// Every note is written: the graph sorts its indexes and commits while the caller finishes
    /// the notes; [`GraphBuild::wait`] waits for it.
    pub fn close(&mut self) -> Result<(), IndexError> {
        self.flush()?;
        if let Some(sender) = self.sender.take() {
            // A thread that already stopped has its error waiting in `join`.
            let _ = sender.send(Work::Finish);
        }
        Ok(())
    }

    /// Wait for the graph to commit (closing it first if the caller did not).
    pub fn wait(mut self) -> Result<(), IndexError> {
        self.close()?;
        self.join()
    }

    fn join(&self) -> Result<(), IndexError> {
        let thread = match self.thread.lock() {
            Ok(mut guard) => guard.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        match thread.map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(IndexError::Graph("its thread panicked".into())),
        }
    }
}

impl Drop for GraphBuild {
    fn drop(&mut self) {
        // Closing the channel without `Finish` rolls the graph back.
        self.sender.take();
        let _ = self.join();
    }
}

/// The graph thread's whole work: one transaction on the graph file.
fn write_graph(
    graph_path: &std::path::Path,
    notes: &LinkIndex,
    receiver: Receiver<Work>,
    build: &str,
) -> Result<(), IndexError> {
    let mut conn = super::open_graph_file(graph_path)?
        .ok_or_else(|| IndexError::Graph("its file holds another schema version".into()))?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Built once at the end from all rows, rather than grown row by row.
    graph::drop_indexes(&tx)?;
    tx.execute_batch("DELETE FROM links; DELETE FROM graph_meta;")?;
    let mut resolver = Resolver::new(notes);
    let mut finished = false;
    for work in receiver {
        match work {
            Work::Notes(notes) => {
                for note in notes {
                    let (id, from, links) = (note.id, &note.from, &note.links);
                    graph::insert_links(&tx, id, from, links, Some(&mut resolver))?;
                }
            }
            Work::Finish => {
                finished = true;
                break;
            }
        }
    }
    if !finished {
        return Ok(()); // the notes' build failed: dropping `tx` rolls the graph back
    }
    graph::create_indexes(&tx)?;
    tx.execute(
        "INSERT INTO graph_meta (key, value) VALUES ('build', ?1)",
        [build],
    )?;
    tx.commit()?;
    Ok(())
}
