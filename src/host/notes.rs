//! The workspace and the notes: opening the vault (the index sync) and keeping it live, reading,
//! checking, saving and creating notes, and the listing the file pane, the picker and the `[[` list share.

use super::core::Core;
use super::{Asked, HostEvent, NoteEntry};
use crate::config::{Config, Paths};
use crate::index::Index;
use crate::index::watch::{LiveEvent, LiveIndex};
use crate::store::{Actor, Store};
use crate::tools::Registry;
use crate::tools::workspace::{SavedBy, Workspace};
use crate::vault::Vault;
use crate::vault::note_io::{Fingerprint, NoteText};
use std::sync::Arc;

/// The open workspace.
pub(super) struct Ready {
    pub workspace: Arc<Workspace>,
    pub registry: Registry,
    /// Held only to keep the index live while the app runs (dropping it stops the watcher).
    _live: Option<LiveIndex>,
}

/// Open the app database, then the workspace (index sync) and the live index, off the loop.
pub(super) fn open_workspace(core: &Arc<Core>) {
    let core = Arc::clone(core);
    tokio::task::spawn_blocking(move || {
        match Store::open(&core.launch.paths.database_file()) {
            Ok(store) => {
                if let Ok(mut slot) = core.store.lock() {
                    *slot = Some(store);
                }
            }
            Err(e) => core.tell(HostEvent::Error(format!(
                "the app database cannot be opened: {e}"
            ))),
        }
        let launch = &core.launch;
        let opened = Workspace::open(
            launch.vault.clone(),
            &launch.paths,
            &launch.config,
            Actor::Agent,
        );
        let workspace = match opened {
            Ok(workspace) => workspace,
            Err(e) => return core.tell(HostEvent::Ready(Err(e.to_string()))),
        };
        // Every approved change the app makes through this workspace (the agent's, the
        // person's moves and `/save`, tasks, the daily note) fires the `after_write` hooks.
        workspace.on_written(core.hooks.written_listener());
        let live = match watch_vault(&launch.vault, &launch.paths, &launch.config, &core) {
            Ok(live) => Some(live),
            Err(e) => {
                tracing::warn!("the vault is not watched: {e}");
                None
            }
        };
        let ready = Ready {
            registry: crate::agent::build::workspace_registry(&workspace),
            workspace,
            _live: live,
        };
        if core.ready.set(ready).is_err() {
            tracing::warn!("the workspace was opened twice; the second is dropped");
        }
        // The first sync's rows and walk are freed: give their pages back (host::memory).
        super::memory::give_back();
        // Without a provider the chat already says why (at start-up).
        if launch.provider.is_some() {
            super::agent_link::start(&core, crate::agent::Resume::New);
        }
        core.tell(HostEvent::Ready(Ok(())));
    });
}

/// Why the vault is not watched (the app works on, without live updates).
#[derive(Debug, thiserror::Error)]
enum WatchError {
    #[error(transparent)]
    Index(#[from] crate::index::IndexError),
    #[error(transparent)]
    Live(#[from] crate::index::watch::LiveError),
}

/// A live index of the vault: each synced batch is told to the app.
fn watch_vault(
    vault: &Vault,
    paths: &Paths,
    config: &Config,
    core: &Arc<Core>,
) -> Result<LiveIndex, WatchError> {
    let index = Index::open(&paths.index_dir, vault, &config.index)?;
    let events = core.events.clone();
    let live = LiveIndex::start(index, vault, &config.index, move |event| match event {
        LiveEvent::Synced(report) => {
            // Notes came, went or moved: the file pane lists the vault again. A note's content
            // changing (the person's own saves included) does not change the listing.
            let listing_changed = report.added + report.removed + report.renamed > 0;
            // A batch (the first reconcile above all: every row and a walk of the vault) freed
            // what it read; give the pages back rather than keep them resident all day.
            super::memory::give_back();
            if events.send(HostEvent::Synced { listing_changed }).is_err() {
                tracing::debug!("the app ended; a sync was not reported");
            }
        }
        LiveEvent::Failed(message) => tracing::warn!(%message, "live index"),
    })?;
    Ok(live)
}

pub(super) fn open(core: &Core, name: &str) {
    let unanswered = |message: String, notice| {
        core.tell(HostEvent::Unanswered {
            asked: Asked::Note(name.to_string()),
            message,
            notice,
        })
    };
    let Some(ready) = core.ready.get() else {
        return unanswered(super::core::STILL_OPENING.into(), true);
    };
    match ready.workspace.read_note_named(name) {
        Ok((path, note)) => {
            // Read before the note is shown, so the offer comes with it, before any key.
            let kept = kept_recovery(core, &path);
            let current = kept.as_ref().map(|_| note.text.clone());
            core.tell(HostEvent::NoteOpened {
                path: path.clone(),
                note,
            });
            if let (Some(kept), Some(current)) = (kept, current) {
                offer_recovery(core, kept, &current);
            }
        }
        Err(e) => unanswered(e.to_string(), false),
    }
}

/// Unsaved text of the note kept when the app was last stopped by a signal (autosave off),
/// offered when the note opens, so it is never silently dropped nor silently put over the note
/// (docs/decisions.md §61); the newest first when there are several (§70).
fn kept_recovery(core: &Core, path: &str) -> Option<super::recovery::Kept> {
    let data_dir = &core.launch.paths.data_dir;
    super::recovery::newest(data_dir, core.launch.vault.root(), path)
        .map_err(|e| tracing::warn!("{e}"))
        .ok()
        .flatten()
}

/// The person saved a restored text, or discarded a kept one, of `path`: its file goes, and
/// after a discard the next older one, if any, is offered.
pub(super) fn forget_recovery(core: &Core, path: &str, file: &str, offer_next: bool) {
    let data_dir = &core.launch.paths.data_dir;
    if let Err(e) = super::recovery::remove(data_dir, core.launch.vault.root(), path, file) {
        core.tell(HostEvent::Notice(e.to_string()));
        return;
    }
    if !offer_next {
        return;
    }
    let Some(kept) = kept_recovery(core, path) else {
        return;
    };
    let Some(ready) = core.ready() else { return };
    match ready.workspace.read_path(path) {
        Ok(now) => offer_recovery(core, kept, &now.text),
        Err(e) => core.tell(HostEvent::Error(e.to_string())),
    }
}

/// The most changed lines a recovery offer shows (the rest are counted).
const RECOVERY_PREVIEW_LINES: usize = 6;

/// Offer `kept` at once, then how it differs from the note's `current` text: the line diff of
/// up to 64 MiB is this thread's work, never the UI loop's (which shows "comparing" meanwhile).
fn offer_recovery(core: &Core, kept: super::recovery::Kept, current: &str) {
    let (path, file) = (kept.recovery.path.clone(), kept.file.clone());
    let text = kept.recovery.text.clone();
    core.tell(HostEvent::RecoveryFound(kept));
    let diff = crate::text::diff::DiffPreview::new(current, &text, RECOVERY_PREVIEW_LINES);
    core.tell(HostEvent::RecoveryCompared { path, file, diff });
}

/// The open note changed on disk? Tell the app (it reloads a clean buffer or shows both).
pub(super) fn check(core: &Core, path: &str, known: &Fingerprint) {
    let Some(ready) = core.ready.get() else {
        return;
    };
    match ready.workspace.read_path(path) {
        Ok(now) if !now.fingerprint.matches_content(known) => core.tell(HostEvent::NoteChanged {
            path: path.to_string(),
            note: now,
        }),
        Ok(_) => {}
        Err(e) => core.tell(HostEvent::Notice(format!("{path}: {e}"))),
    }
}

/// Write the open note: the same path as every save (atomic, refused when the file changed
/// since `read`).
pub(super) fn save(core: &Core, path: String, text: &str, read: &NoteText, agent_edit: bool) {
    let Some(ready) = core.ready.get() else {
        return core.tell(HostEvent::Saved {
            path,
            result: Err((false, "the vault is still being opened".into())),
        });
    };
    let workspace = &ready.workspace;
    let by = if agent_edit {
        SavedBy::AgentEdit
    } else {
        SavedBy::Person
    };
    let result = workspace
        .save_user_edit(&path, read, text, by)
        .map_err(|e| {
            // Refused because the file is no longer what was read: the conflict state shows
            // both; any other failure is only reported.
            let changed = workspace
                .read_path(&path)
                .is_ok_and(|now| !now.fingerprint.matches_content(&read.fingerprint));
            (changed, e.to_string())
        });
    core.tell(HostEvent::Saved { path, result });
}

pub(super) fn list_files(core: &Core) {
    let Some(ready) = core.ready() else { return };
    let listing = ready.workspace.note_listing();
    // Keyed here, off the UI loop: a vault of 100k notes takes a while to key.
    let targets = listing
        .as_ref()
        .ok()
        .map(|notes| super::LinkTargets::new(notes.iter().map(|n| n.path.clone())));
    core.tell(match listing {
        Ok(notes) => HostEvent::Files(
            notes
                .into_iter()
                .map(|n| {
                    // A title that is the file name is not kept twice (`display_title` gives
                    // the file name back): most notes' first heading is their name, and the
                    // app holds this listing for every note of the vault.
                    let title = if n.title == crate::vault::name::stem(&n.path) {
                        String::new()
                    } else {
                        n.title
                    };
                    NoteEntry {
                        path: n.path,
                        title,
                        aliases: n.aliases,
                        modified_ns: n.mtime_ns,
                    }
                })
                .collect(),
        ),
        Err(e) => HostEvent::Error(e.to_string()),
    });
    if let Some(targets) = targets {
        core.tell(HostEvent::LinkTargets(Arc::new(targets)));
    }
    // The index's rows for the listing are freed; the listing itself stays with the app.
    super::memory::give_back();
}
