//! Watching a vault for changes made by other programs.
//!
//! Each folder of the vault gets its own non-recursive watch, so dot-folders (`.git/` with its
//! hundreds of object folders, `.obsidian/`, `.trash/`) cost nothing; folders created later are
//! added as they appear. Past `max_folders` watches the watcher stops adding and reports itself
//! degraded: the caller then reconciles periodically instead (inotify watches are a limited,
//! unswappable kernel resource). Events are debounced, and any sign that events were lost (a
//! queue overflow, a watcher error, a folder appearing or vanishing) becomes [`VaultChange::Rescan`],
//! which the caller answers with a full stat pass.

use super::Vault;
use super::walk::is_hidden_rel;
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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
    /// Shared with the worker thread (it adds watches for new folders); taken out on drop, which
    /// stops the debouncer, closes the event channel and so ends the worker.
    debouncer: Arc<Mutex<Option<Debouncer>>>,
    watched: Arc<AtomicUsize>,
    degraded: Arc<AtomicBool>,
    _worker: std::thread::JoinHandle<()>,
}

struct Watches {
    debouncer: Arc<Mutex<Option<Debouncer>>>,
    root: PathBuf,
    max_folders: usize,
    watched: Arc<AtomicUsize>,
    degraded: Arc<AtomicBool>,
}

impl Watches {
    /// Watch `rel` (a vault-relative folder, "" for the root) unless the cap is reached.
    fn add(&self, rel: &str) -> Result<(), notify::Error> {
        if self.watched.load(Ordering::Relaxed) >= self.max_folders {
            self.degraded.store(true, Ordering::Relaxed);
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
        self.watched.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Watch a folder that just appeared, and every folder below it.
    fn add_tree(&self, rel: &str) {
        if let Err(e) = self.add(rel) {
            tracing::warn!(folder = %rel, error = %e, "cannot watch a folder; falling back to periodic reconcile");
            self.degraded.store(true, Ordering::Relaxed);
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
                    self.degraded.store(true, Ordering::Relaxed);
                    return;
                }
                stack.push(child);
            }
        }
    }
}

impl VaultWatcher {
    /// Start watching the vault root and every folder below it. `on_change` runs on the
    /// watcher's own thread.
    pub fn start(
        vault: &Vault,
        debounce: Duration,
        max_folders: usize,
        mut on_change: impl FnMut(VaultChange) + Send + 'static,
    ) -> Result<Self, WatchError> {
        let (tx, rx) = std::sync::mpsc::channel::<DebounceEventResult>();
        // A tick of a quarter of the debounce keeps the added latency near the debounce itself.
        let debouncer = new_debouncer(debounce, Some(debounce / 4), tx)?;
        let watches = Watches {
            debouncer: Arc::new(Mutex::new(Some(debouncer))),
            root: vault.root().to_path_buf(),
            max_folders: max_folders.max(1),
            watched: Arc::new(AtomicUsize::new(0)),
            degraded: Arc::new(AtomicBool::new(false)),
        };
        watches.add("")?;
        watches.add_subfolders("");
        let debouncer = Arc::clone(&watches.debouncer);
        let watched = Arc::clone(&watches.watched);
        let degraded = Arc::clone(&watches.degraded);
        let vault = vault.clone();
        let worker = std::thread::Builder::new()
            .name("vault-watch".into())
            .spawn(move || {
                for result in rx {
                    if let Some(change) = interpret(&vault, &watches, result) {
                        on_change(change);
                    }
                }
            })
            .map_err(|e| WatchError::Notify(notify::Error::io(e)))?;
        Ok(Self {
            debouncer,
            watched,
            degraded,
            _worker: worker,
        })
    }

    /// How many folders are watched.
    pub fn watched_folders(&self) -> usize {
        self.watched.load(Ordering::Relaxed)
    }

    /// True when some folders are not watched (too many, or the kernel refused): the caller
    /// must reconcile periodically to see changes there.
    pub fn is_degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
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
