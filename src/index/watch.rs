//! Keeping the index live while a process runs: the vault watcher's changes are applied on an
//! indexer thread that owns its own connection to the index.

use super::{Index, IndexError, SyncReport};
use crate::config::IndexConfig;
use crate::vault::Vault;
use crate::vault::watch::{VaultChange, VaultWatcher, WatchError};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// How often a degraded watcher (some folders unwatched) falls back to a full reconcile.
const DEGRADED_RECONCILE: Duration = Duration::from_secs(30);

/// What the live index reports after each batch of changes.
#[derive(Debug)]
pub enum LiveEvent {
    /// The index now reflects the vault as of this report.
    Synced(SyncReport),
    /// A batch could not be applied; the next change or reconcile tries again.
    Failed(String),
}

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error(transparent)]
    Watch(#[from] WatchError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("cannot start the indexer thread: {0}")]
    Thread(std::io::Error),
}

enum Message {
    Change(VaultChange),
    Stop,
}

/// A watched, continuously updated index. Dropping it stops watching.
pub struct LiveIndex {
    watcher: VaultWatcher,
    sender: mpsc::Sender<Message>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl LiveIndex {
    /// Start watching and return at once; once the watcher has every folder watched it asks for
    /// one reconcile (so nothing changed during start-up is missed), then changes are applied as
    /// they come. `on_event` runs on the indexer thread.
    pub fn start(
        index: Index,
        vault: &Vault,
        config: &IndexConfig,
        on_event: impl FnMut(LiveEvent) + Send + 'static,
    ) -> Result<Self, LiveError> {
        Self::start_observed(index, vault, config, on_event, |_| {})
    }

    /// [`LiveIndex::start`], and `on_change` sees each batch of changes right after the index
    /// has taken it in (before `on_event`), on the indexer thread: what `vaultchat mcp` tells its
    /// clients about notes comes from here, so it follows the same watcher as the index.
    pub fn start_observed(
        mut index: Index,
        vault: &Vault,
        config: &IndexConfig,
        mut on_event: impl FnMut(LiveEvent) + Send + 'static,
        mut on_change: impl FnMut(&VaultChange) + Send + 'static,
    ) -> Result<Self, LiveError> {
        index.without_memory_map()?;
        let (sender, receiver) = mpsc::channel::<Message>();
        let to_indexer = sender.clone();
        let watcher = VaultWatcher::start(
            vault,
            Duration::from_millis(config.debounce_ms),
            config.max_watched_folders,
            move |change| {
                let _ = to_indexer.send(Message::Change(change));
            },
        )?;
        // The first reconcile is the watcher's: it reports `Rescan` once its watches are in place
        // (a reconcile before them could miss a change made in between).
        let state = watcher.state();
        let worker = std::thread::Builder::new()
            .name("vault-indexer".into())
            .spawn(move || {
                loop {
                    // Asked each time: the watcher learns it is degraded while it registers.
                    let degraded = state.is_degraded();
                    let wait = if degraded {
                        DEGRADED_RECONCILE
                    } else {
                        Duration::from_secs(3600)
                    };
                    let first = match receiver.recv_timeout(wait) {
                        Ok(Message::Change(c)) => c,
                        Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                        Err(RecvTimeoutError::Timeout) if degraded => VaultChange::Rescan,
                        Err(RecvTimeoutError::Timeout) => continue,
                    };
                    // Merge whatever else is already queued into one batch.
                    let mut batch = first;
                    while let Ok(msg) = receiver.try_recv() {
                        match msg {
                            Message::Stop => return,
                            Message::Change(c) => batch = merge(batch, c),
                        }
                    }
                    let result = match &batch {
                        VaultChange::Rescan => index.sync(&mut |_| {}),
                        VaultChange::Paths(paths) => index.sync_paths(paths),
                    };
                    on_change(&batch);
                    // Idle most of the time: keep none of the pages a pass read.
                    if let Err(e) = index.release_memory() {
                        tracing::warn!("releasing the indexer's cache failed: {e}");
                    }
                    match result {
                        Ok(report) => on_event(LiveEvent::Synced(report)),
                        Err(e) => on_event(LiveEvent::Failed(e.to_string())),
                    }
                }
            })
            .map_err(LiveError::Thread)?;
        Ok(Self {
            watcher,
            sender,
            worker: Some(worker),
        })
    }

    pub fn watched_folders(&self) -> usize {
        self.watcher.watched_folders()
    }

    /// Block until every folder that existed at the start is watched, or `timeout` passed (true
    /// when done). Only for callers that report the count; serving does not wait for it.
    pub fn wait_watching(&self, timeout: Duration) -> bool {
        self.watcher.state().wait_registered(timeout)
    }

    pub fn is_degraded(&self) -> bool {
        self.watcher.is_degraded()
    }
}

impl Drop for LiveIndex {
    fn drop(&mut self) {
        let _ = self.sender.send(Message::Stop);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn merge(a: VaultChange, b: VaultChange) -> VaultChange {
    match (a, b) {
        (VaultChange::Paths(mut x), VaultChange::Paths(y)) => {
            x.extend(y);
            x.sort_unstable();
            x.dedup();
            VaultChange::Paths(x)
        }
        _ => VaultChange::Rescan,
    }
}
