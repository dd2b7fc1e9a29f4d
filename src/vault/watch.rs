//! Watching a vault for changes made by other programs.
//!
//! Each folder of the vault gets its own non-recursive watch, so dot-folders (`.git/` with its
//! hundreds of object folders, `.obsidian/`, `.trash/`) cost nothing; folders created later are
//! added as they appear. Past `max_folders` watches the watcher stops adding and reports itself
//! degraded: the caller then reconciles periodically instead (inotify watches are a limited,
//! unswappable kernel resource). Events are debounced, and any sign that events were lost (a
//! queue overflow, a watcher error, a folder appearing or vanishing) becomes [`VaultChange::Rescan`],
//! which the caller answers with a full stat pass.
//!
//! The watches are registered on the watcher's own thread, not by [`VaultWatcher::start`]: on a
//! vault of hundreds of folders that walk takes a fifth of a second, and `vaultchat mcp` answers
//! `initialize` meanwhile. Once every folder is watched the watcher reports one `Rescan`, so
//! whatever changed before a folder's watch existed is found by the caller's reconcile, and
//! whatever changes after it is an event.

use super::Vault;
use super::journal::failpoint;
use super::walk::is_hidden_rel;
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// What changed in the vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VaultChange {
    /// These vault-relative paths were created, modified, removed or renamed (both names).
    Paths(Vec<String>),
    /// Events may have been lost or a folder changed: reconcile the whole vault.
    Rescan,
}

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(
        "cannot watch the vault for changes: {0}\n  fix: on Linux, raise fs.inotify.max_user_watches or max_user_instances (sysctl)"
    )]
    Notify(#[from] notify::Error),
}

type Debouncer = notify_debouncer_full::Debouncer<
    notify::RecommendedWatcher,
    notify_debouncer_full::RecommendedCache,
>;

/// A running watcher; dropping it stops watching.
pub struct VaultWatcher {
    /// Shared with the worker thread (it adds the watches); taken out on drop, which stops the
    /// debouncer, closes the event channel and so ends the worker.
    debouncer: Arc<Mutex<Option<Debouncer>>>,
    state: Arc<WatchState>,
    _worker: std::thread::JoinHandle<()>,
}

/// How far the watcher got: shared by the watcher, its worker thread and whoever asks (the live
/// indexer reads `is_degraded` before each wait).
#[derive(Debug, Default)]
pub struct WatchState {
    watched: AtomicUsize,
    degraded: AtomicBool,
    /// Every folder that existed at the start is watched (or the cap was reached).
    registered: Mutex<bool>,
    registered_changed: Condvar,
}

impl WatchState {
    /// How many folders are watched so far.
    pub fn watched_folders(&self) -> usize {
        self.watched.load(Ordering::Relaxed)
    }

    /// True when some folders are not watched (too many, or the kernel refused): the caller
    /// must reconcile periodically to see changes there.
    pub fn is_degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
    }

    /// Whether the start-up registration has finished.
    pub fn is_registered(&self) -> bool {
        *self.registered.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Block until the start-up registration has finished or `timeout` passed; true when it has.
    pub fn wait_registered(&self, timeout: Duration) -> bool {
        let guard = self.registered.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = self
            .registered_changed
            .wait_timeout_while(guard, timeout, |done| !*done)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }

    fn set_registered(&self) {
        *self.registered.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.registered_changed.notify_all();
    }
}

struct Watches {
    debouncer: Arc<Mutex<Option<Debouncer>>>,
    root: PathBuf,
    max_folders: usize,
    state: Arc<WatchState>,
}

impl Watches {
    /// Watch `rel` (a vault-relative folder, "" for the root) unless the cap is reached.
    fn add(&self, rel: &str) -> Result<(), notify::Error> {
        if self.state.watched.load(Ordering::Relaxed) >= self.max_folders {
            self.state.degraded.store(true, Ordering::Relaxed);
            return Ok(());
        }
        let path = if rel.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        };
        let mut guard = match self.debouncer.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let Some(debouncer) = guard.as_mut() else {
            return Ok(()); // stopping
        };
        debouncer.watch(&path, RecursiveMode::NonRecursive)?;
        self.state.watched.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Watch a folder that just appeared, and every folder below it.
    fn add_tree(&self, rel: &str) {
        if let Err(e) = self.add(rel) {
            tracing::warn!(folder = %rel, error = %e, "cannot watch a folder; falling back to periodic reconcile");
            self.state.degraded.store(true, Ordering::Relaxed);
            return;
        }
        self.add_subfolders(rel);
    }

    /// Watch every non-dot folder below `rel` (not `rel` itself). Only folders are visited; the
    /// file type comes from readdir, so files cost no `stat`.
    fn add_subfolders(&self, rel: &str) {
        let mut stack = vec![rel.to_string()];
        while let Some(dir) = stack.pop() {
            let path = if dir.is_empty() {
                self.root.clone()
            } else {
                self.root.join(&dir)
            };
            let Ok(entries) = std::fs::read_dir(path) else {
                continue;
            };
            for entry in entries.flatten() {
                let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
                let name = entry.file_name().to_string_lossy().into_owned();
                if !is_dir || name.starts_with('.') {
                    continue;
                }
                let child = if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                };
                if let Err(e) = self.add(&child) {
                    // ENOSPC here means the kernel's watch limit: degrade rather than fail.
                    tracing::warn!(folder = %child, error = %e, "cannot watch a folder; falling back to periodic reconcile");
                    self.state.degraded.store(true, Ordering::Relaxed);
                    return;
                }
                stack.push(child);
            }
        }
    }
}

impl VaultWatcher {
    /// Start watching the vault root and every folder below it. Returns at once: the watches are
    /// added on the watcher's own thread, which then reports [`VaultChange::Rescan`] once (see
    /// the module's comment) and goes on with the events. `on_change` runs on that thread.
    pub fn start(
        vault: &Vault,
        debounce: Duration,
        max_folders: usize,
        mut on_change: impl FnMut(VaultChange) + Send + 'static,
    ) -> Result<Self, WatchError> {
        let (tx, rx) = std::sync::mpsc::channel::<DebounceEventResult>();
        // A tick of a quarter of the debounce keeps the added latency near the debounce itself.
        let debouncer = new_debouncer(debounce, Some(debounce / 4), tx)?;
        let state = Arc::new(WatchState::default());
        let watches = Watches {
            debouncer: Arc::new(Mutex::new(Some(debouncer))),
            root: vault.root().to_path_buf(),
            max_folders: max_folders.max(1),
            state: Arc::clone(&state),
        };
        let debouncer = Arc::clone(&watches.debouncer);
        let vault = vault.clone();
        let worker = std::thread::Builder::new()
            .name("vault-watch".into())
            .spawn(move || {
                // For the tests of start-up: hold here, before any watch, until released.
                let _ = failpoint("watch.before_folders");
                // Events of folders already watched queue in the channel meanwhile.
                watches.add_tree("");
                watches.state.set_registered();
                tracing::debug!(
                    folders = watches.state.watched_folders(),
                    degraded = watches.state.is_degraded(),
                    "the vault's folders are watched"
                );
                on_change(VaultChange::Rescan);
                for result in rx {
                    if let Some(change) = interpret(&vault, &watches, result) {
                        on_change(change);
                    }
                }
            })
            .map_err(|e| WatchError::Notify(notify::Error::io(e)))?;
        Ok(Self {
            debouncer,
            state,
            _worker: worker,
        })
    }

    /// How far the watcher got (shared: it stays current).
    pub fn state(&self) -> Arc<WatchState> {
        Arc::clone(&self.state)
    }

    /// How many folders are watched so far.
    pub fn watched_folders(&self) -> usize {
        self.state.watched_folders()
    }

    /// True when some folders are not watched (too many, or the kernel refused): the caller
    /// must reconcile periodically to see changes there.
    pub fn is_degraded(&self) -> bool {
        self.state.is_degraded()
    }
}

impl Drop for VaultWatcher {
    fn drop(&mut self) {
        let debouncer = match self.debouncer.lock() {
            Ok(mut guard) => guard.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        drop(debouncer);
    }
}

/// Turn one debounced batch into a change report.
fn interpret(vault: &Vault, watches: &Watches, result: DebounceEventResult) -> Option<VaultChange> {
    let events = match result {
        Ok(events) => events,
        Err(errors) => {
            for e in errors {
                tracing::warn!(error = %e, "file watcher error; reconciling the vault");
            }
            return Some(VaultChange::Rescan);
        }
    };
    let mut rescan = false;
    let mut rels = BTreeSet::new();
    for event in events {
        if event.need_rescan() {
            rescan = true;
        }
        // Opening or reading a note (by vaultchat itself, an editor, a backup tool) changes
        // nothing; only a close after writing does.
        if let EventKind::Access(kind) = event.kind
            && kind != AccessKind::Close(AccessMode::Write)
        {
            continue;
        }
        for path in &event.paths {
            let Some(rel) = vault.relative(path) else {
                continue;
            };
            if rel.is_empty() || is_hidden_rel(&rel) {
                continue;
            }
            let meta = std::fs::symlink_metadata(path);
            match meta {
                Ok(m) if m.is_dir() => {
                    // A folder appeared (created or moved in): watch it and look at its notes.
                    watches.add_tree(&rel);
                    rescan = true;
                }
                Ok(_) => {
                    rels.insert(rel);
                }
                Err(_) => {
                    // Gone. A vanished folder leaves its notes' rows behind: reconcile.
                    if !rel.to_ascii_lowercase().ends_with(".md") {
                        rescan = true;
                    }
                    rels.insert(rel);
                }
            }
        }
    }
    if rescan {
        Some(VaultChange::Rescan)
    } else if rels.is_empty() {
        None
    } else {
        Some(VaultChange::Paths(rels.into_iter().collect()))
    }
}
