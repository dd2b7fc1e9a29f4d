//! Tier-2 workspace tools: the whole vault, one implementation served to the agent in-process and
//! to other programs over MCP.
//!
//! Every tool body is synchronous file and SQLite work; [`WorkspaceTool`] parses the arguments and
//! runs the body on tokio's blocking pool. Every write goes through the vault guard and the atomic
//! writer, records a revision and updates the index before the tool returns, so a search right
//! after a write sees it.

mod blocks;
mod config_files;
mod daily;
mod graph;
mod move_apply;
mod moves;
mod notebooks;
mod notes;
mod plan;
mod semantic;
mod tags;
mod tasks;
mod templates;

use super::{
    Annotations, BoxFuture, Registry, Tier, Tool, ToolError, ToolOutput, ToolSpec, parse_args,
    schema_of,
};
pub use daily::{DailyNote, DailyOutcome, READ_DAILY_NOTE, WRITE_DAILY_NOTE, append_line, day_of};
pub use graph::Mention;
pub use moves::{FileEdit, MovePlan};
pub use plan::{Applied, Change, FileDiff, Plan, Written, record_hunks};
pub use templates::{Filling, MAX_TEMPLATE_BYTES, MAX_TEMPLATES, TemplateNote, fill};

use crate::config::{Config, Paths};
use crate::index::{Index, IndexError};
use crate::store::{Actor, NewRevision, Retention, Store, StoreError};
use crate::vault::contained::{ContainedError, WriteLock};
use crate::vault::links::{LinkResolution, resolve_title_or_path};
use crate::vault::note_io::{self, NoteError};
use crate::vault::{Access, PathError, Vault, VaultPath};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard};

/// What the workspace tools work on: the vault, its index and the app database.
pub struct Workspace {
    vault: Vault,
    vault_id: String,
    index: Mutex<Index>,
    store: Mutex<Store>,
    /// Who the writes are attributed to in the revision log.
    actor: Actor,
    /// The `[embeddings]` endpoint, when one is configured (else semantic search falls back to
    /// keyword search and says so).
    embeddings: Option<crate::config::EmbeddingsConfig>,
    /// `[privacy] local_only`: the embeddings endpoint must be on this machine or a private network.
    local_only: bool,
    /// How much note history is kept (`[history]`).
    retention: Retention,
    /// Revisions recorded since the history was last pruned.
    recorded_since_prune: std::sync::atomic::AtomicU32,
    /// Whether the index has caught up with the vault since start-up.
    index_synced: std::sync::atomic::AtomicBool,
    /// The data directory: where a move keeps its journal while it runs (see `move_apply`).
    data_dir: std::path::PathBuf,
    /// The revision of each note as the tools' caller last saw it (read with read_note, or
    /// written by a tool), by vault-relative path: replacing a whole `body` needs one that is
    /// current. One per workspace: the app's run, an `ask`, an MCP server (docs/tools.md).
    seen: Mutex<std::collections::HashMap<String, String>>,
    /// Told the paths of each approved change once it is on disk (the hooks listen here).
    written: Mutex<Option<WrittenListener>>,
}

/// Told the vault-relative paths of one approved change once it is written: an applied plan
/// (the agent's after the banner, an MCP client's, the person's moves and `/save`), an agent
/// edit saved in the editor, the daily note made or appended to, a task toggled, a note created
/// from the file pane. Never the person's own typing saved, never a refused or failed write.
pub type WrittenListener = Arc<dyn Fn(&[String]) + Send + Sync>;

/// Whose change an editor save carries, for the revision log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavedBy {
    /// The person's typing: a run of their saves is one revision.
    Person,
    /// An agent edit the person approved in the editor: a revision of its own, the agent's.
    AgentEdit,
}

/// A temp file this old cannot belong to a write still in progress.
pub const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// History is pruned at start and after this many recorded revisions.
const PRUNE_EVERY: u32 = 100;

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Workspace {
    /// Open the index (syncing it first) and the app database for `vault`.
    pub fn open(
        vault: Vault,
        paths: &Paths,
        config: &Config,
        actor: Actor,
    ) -> Result<Arc<Self>, WorkspaceError> {
        let workspace = Self::open_unsynced(vault, paths, config, actor)?;
        workspace.index().sync_lean()?;
        workspace.mark_index_synced();
        Ok(workspace)
    }

    /// Open the index as it is and the app database, without bringing the index up to date: for
    /// a server that answers at once while a [`crate::index::watch::LiveIndex`] syncs in the
    /// background and calls [`Workspace::mark_index_synced`] when it is done. Until then search
    /// results say the index may be behind.
    pub fn open_unsynced(
        vault: Vault,
        paths: &Paths,
        config: &Config,
        actor: Actor,
    ) -> Result<Arc<Self>, WorkspaceError> {
        let mut index = Index::open(&paths.index_dir, &vault, &config.index)?;
        // A workspace lives as long as the app or the server: no memory-mapped index (see there).
        index.without_memory_map()?;
        let store = Store::open(&paths.database_file())?;
        let vault_id = crate::index::vault_id(&vault);
        let workspace = Self {
            vault,
            vault_id,
            index: Mutex::new(index),
            store: Mutex::new(store),
            actor,
            embeddings: config.embeddings.clone(),
            local_only: config.privacy.local_only,
            retention: Retention {
                keep_days: config.history.keep_days,
                max_bytes: config.history.max_mb.saturating_mul(1 << 20),
            },
            recorded_since_prune: std::sync::atomic::AtomicU32::new(0),
            index_synced: std::sync::atomic::AtomicBool::new(false),
            data_dir: paths.data_dir.clone(),
            seen: Mutex::new(std::collections::HashMap::new()),
            written: Mutex::new(None),
        };
        workspace.recover_interrupted_move();
        workspace.remove_stale_temps();
        let workspace = Arc::new(workspace);
        // Pruning reads the size of every stored revision: not on the way to the first answer.
        let pruning = Arc::clone(&workspace);
        if let Err(e) = std::thread::Builder::new()
            .name("history-prune".into())
            .spawn(move || pruning.prune_history())
        {
            tracing::warn!("cannot start the history clean-up: {e}");
        }
        Ok(workspace)
    }

    /// The index has caught up with the vault (after start-up).
    pub fn mark_index_synced(&self) {
        self.index_synced
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether the index has caught up with the vault since start-up.
    pub fn index_synced(&self) -> bool {
        self.index_synced.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Removes temp files a crashed write left behind (an hour old at least, so a write in
    /// progress in another process is never touched). It walks the whole vault, so it runs on a
    /// thread of its own rather than delaying start-up.
    fn remove_stale_temps(&self) {
        let root = match self.vault.resolve("", Access::Read) {
            Ok(root) => root,
            Err(e) => {
                tracing::warn!("looking for stale temp files failed: {e}");
                return;
            }
        };
        let spawned = std::thread::Builder::new()
            .name("stale-temps".into())
            .spawn(
                move || match note_io::cleanup_stale_temps(&root, STALE_TEMP_AGE) {
                    Ok(removed) if !removed.is_empty() => {
                        tracing::info!("removed {} stale temp files: {removed:?}", removed.len());
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("looking for stale temp files failed: {e}"),
                },
            );
        if let Err(e) = spawned {
            tracing::warn!("cannot start the stale temp file clean-up: {e}");
        }
    }

    /// Drops the history `[history]` does not keep. A failure only leaves more history behind,
    /// so it is logged rather than raised.
    fn prune_history(&self) {
        let now_ms = crate::time::now_ms();
        match self
            .store()
            .prune_history(&self.vault_id, self.retention, now_ms)
        {
            Ok(pruned) if pruned.revisions > 0 => {
                tracing::info!("pruned {} old revisions", pruned.revisions);
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("pruning the note history failed: {e}"),
        }
    }

    pub fn vault(&self) -> &Vault {
        &self.vault
    }

    pub fn vault_id(&self) -> &str {
        &self.vault_id
    }

    fn index(&self) -> MutexGuard<'_, Index> {
        // A panic while holding the lock leaves the index itself consistent (SQLite rolls back).
        self.index.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Resolve a path for the guard, turning a refusal into a caller error.
    pub fn resolve(&self, input: &str, access: Access) -> Result<VaultPath, ToolError> {
        self.vault.resolve(input, access).map_err(path_error)
    }

    /// Resolve a note named by its vault-relative path, or by its title, alias or file stem when
    /// that is unambiguous. Ambiguity and absence are caller errors that list what exists.
    pub fn resolve_note(&self, name: &str, access: Access) -> Result<VaultPath, ToolError> {
        let found = match self.vault.resolve(name, access) {
            Ok(path) if path.abs().is_file() => Some(path),
            Ok(_) => None,
            // Anything that smells of escaping the vault is refused as such, never retried as a
            // title (`../secret` must not find a note titled "secret").
            Err(e) if REFUSALS.contains(&e.kind()) => return Err(path_error(e)),
            Err(_) => None,
        };
        // `Projects/Plan` for `Projects/Plan.md`.
        let found = found.or_else(|| {
            (!name.is_empty() && !name.to_ascii_lowercase().ends_with(".md"))
                .then(|| self.vault.resolve(&format!("{name}.md"), access).ok())
                .flatten()
                .filter(|path| path.abs().is_file())
        });
        if let Some(path) = found {
            // Dot-folders (`.git/`, `.obsidian/`, `.trash/`, `.vaultchat/`) and dot-files hold
            // other programs' data, not notes: `.git/config` may carry credentials.
            if crate::vault::walk::is_hidden_rel(path.rel()) {
                return Err(ToolError::Invalid(format!(
                    "`{name}` is hidden (a dot-file or inside a dot-folder such as .git, .obsidian or .trash); notes never live there"
                )));
            }
            // Only Markdown notes: `connections.toml` and `envs/*.toml` hold secrets that only
            // the redacting connection and environment tools may show.
            let file_name = path.rel().rsplit('/').next().unwrap_or_default();
            if !crate::vault::walk::is_note_name(file_name) {
                return Err(ToolError::Invalid(format!(
                    "`{name}` is not a note (notes are `.md` files); connections and environments are read with list_connections / get_connection and list_environments / get_environment_variables"
                )));
            }
            return Ok(path);
        }
        let names = self.index().note_names().map_err(internal)?;
        match resolve_title_or_path(name, &names) {
            LinkResolution::Unique(path) => self.resolve(path, access),
            LinkResolution::Ambiguous(candidates) => Err(ToolError::Invalid(format!(
                "`{name}` matches several notes: {}; pass the path of the one you mean",
                candidates.join(", ")
            ))),
            LinkResolution::Missing => Err(ToolError::Invalid(format!(
                "no note is named `{name}` (by path, title, alias or file name); use search_notes or list_notes to find it"
            ))),
        }
    }

    /// Tell `listener` the paths of every approved change from now on (one listener: the last
    /// given).
    pub fn on_written(&self, listener: WrittenListener) {
        *self.written.lock().unwrap_or_else(|p| p.into_inner()) = Some(listener);
    }

    /// The one place an approved change's paths are told, after it is on disk. It may be called
    /// under the vault's write lock, so a listener must not wait for anything (hooks queue).
    pub(crate) fn published(&self, paths: &[String]) {
        if paths.is_empty() {
            return;
        }
        let listener = self
            .written
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(listener) = listener {
            listener(paths);
        }
    }

    /// Waits for every other vaultchat writer on this vault (threads here, other processes).
    pub fn lock_writes(&self) -> Result<WriteLock<'_>, ToolError> {
        self.vault.handle().lock_writes().map_err(|e| match e {
            ContainedError::LockTimeout => ToolError::Invalid(e.to_string()),
            other => internal(format!("cannot lock the vault for writing: {other}")),
        })
    }

    /// After a write: update the index for `rel` and record a revision. The note has already
    /// changed, so nothing here may turn the write into an error: what fails is logged and
    /// returned as a warning for the result (the index catches up at its next sync).
    fn after_write(&self, change: WriteRecord<'_>) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Err(e) = self.index().sync_paths(&[change.rel.to_string()]) {
            tracing::warn!("indexing {} after a write failed: {e}", change.rel);
            warnings.push(format!(
                "the change was written, but the search index could not be updated ({e}); it catches up at the next sync"
            ));
        }
        let (added, removed) = line_stats(change.before.unwrap_or(""), change.after.unwrap_or(""));
        let now_ms = crate::time::now_ms();
        let revision = NewRevision {
            vault_id: &self.vault_id,
            path: change.rel,
            at_unix_ms: now_ms,
            actor: change.actor.unwrap_or(self.actor),
            tool: change.tool,
            added,
            removed,
            before_rev: change.before_rev.as_deref(),
            after_rev: change.after_rev.as_deref(),
            before_text: change.before,
        };
        // The person's saves follow one another a second apart while they type (autosave): a
        // run of them is one revision (see the store).
        let recorded = if change.tool.is_none() && change.actor == Some(Actor::User) {
            self.store().record_user_revision(&revision)
        } else {
            self.store().record_revision(&revision)
        };
        if recorded.is_ok()
            && self
                .recorded_since_prune
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1
                >= PRUNE_EVERY
        {
            self.recorded_since_prune
                .store(0, std::sync::atomic::Ordering::Relaxed);
            self.prune_history();
        }
        if let Err(e) = recorded {
            tracing::warn!("recording the revision of {} failed: {e}", change.rel);
            warnings.push(format!(
                "the change was written, but its history entry could not be recorded ({e}), so /rewind cannot undo it"
            ));
        }
        warnings
    }
}

/// Path-guard refusals that are about safety rather than spelling: a name that trips one of these
/// is never looked up as a title instead.
const REFUSALS: &[&str] = &[
    "absolute",
    "not_a_folder",
    "escapes_vault",
    "nul_byte",
    "encoded_traversal",
    "unicode_traversal",
    "hidden_character",
    "backslash",
    "too_long",
    "symlink_escape",
    "broken_symlink",
    "is_symlink",
    "hard_link",
    "protected_dir",
];

/// What a write changed, for the index and the revision log.
struct WriteRecord<'a> {
    /// The tool that wrote (None: the person saving in the editor).
    tool: Option<&'a str>,
    /// Who wrote, when not the workspace's actor.
    actor: Option<Actor>,
    rel: &'a str,
    before: Option<&'a str>,
    after: Option<&'a str>,
    before_rev: Option<String>,
    after_rev: Option<String>,
}

/// Lines added and removed between two texts.
pub fn line_stats(before: &str, after: &str) -> (u64, u64) {
    let diff = similar::TextDiff::from_lines(before, after);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

fn internal(e: impl std::fmt::Display) -> ToolError {
    ToolError::Internal(e.to_string())
}

fn path_error(e: PathError) -> ToolError {
    match e {
        PathError::VaultUnreadable { .. } => ToolError::Internal(e.to_string()),
        other => ToolError::Invalid(other.to_string()),
    }
}

/// Note I/O failures: what the caller can fix is a caller error.
fn note_error(e: NoteError) -> ToolError {
    match e {
        NoteError::Io { .. } => ToolError::Internal(e.to_string()),
        NoteError::Path(p) => path_error(p),
        other => ToolError::Invalid(other.to_string()),
    }
}

/// What a workspace tool does with its typed arguments.
enum Body<A> {
    /// Reads and answers.
    Read(fn(&Workspace, A) -> Result<ToolOutput, ToolError>),
    /// Plans a change; `call` applies the plan at once, the agent asks first (see [`Plan`]).
    Write(fn(&Workspace, A) -> Result<Plan, ToolError>),
}

/// A workspace tool: typed arguments and a synchronous body.
struct WorkspaceTool<A> {
    spec: ToolSpec,
    workspace: Arc<Workspace>,
    body: Body<A>,
}

impl<A> WorkspaceTool<A> {
    /// Run `work` on the workspace off the async threads: on the blocking pool, so that while
    /// a slow call runs (a big search, a write waiting for another process's lock) the server
    /// still answers `ping`, `tools/list` and other clients.
    async fn run_blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Workspace) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let workspace = Arc::clone(&self.workspace);
        tokio::task::spawn_blocking(move || work(&workspace))
            .await
            .map_err(internal)?
    }
}

impl<A: DeserializeOwned + Send + 'static> Tool for WorkspaceTool<A> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let parsed: A = parse_args(&self.spec.name, args)?;
            match self.body {
                Body::Read(run) => self.run_blocking(move |ws| run(ws, parsed)).await,
                // Planned and applied under one hold of the write lock: a concurrent writer's
                // change is never planned over (an append lands after the other append).
                Body::Write(plan) => {
                    self.run_blocking(move |ws| {
                        let lock = ws.lock_writes()?;
                        Ok(ws.apply_locked(&plan(ws, parsed)?, None, &lock)?.output)
                    })
                    .await
                }
            }
        })
    }

    fn plan(&self, args: Value) -> Option<BoxFuture<'_, Result<Plan, ToolError>>> {
        let Body::Write(plan) = self.body else {
            return None;
        };
        Some(Box::pin(async move {
            let parsed: A = parse_args(&self.spec.name, args)?;
            self.run_blocking(move |ws| plan(ws, parsed)).await
        }))
    }
}

/// Build one workspace tool: `Body::Read` answers, `Body::Write` plans a change (see [`Plan`]).
fn tool<A: JsonSchema + DeserializeOwned + Send + 'static>(
    workspace: &Arc<Workspace>,
    name: &str,
    title: &str,
    description: &str,
    annotations: Annotations,
    body: Body<A>,
) -> Arc<dyn Tool> {
    Arc::new(WorkspaceTool {
        spec: ToolSpec {
            name: name.to_string(),
            title: title.to_string(),
            description: description.to_string(),
            input_schema: schema_of::<A>(),
            annotations,
            tier: Tier::Workspace,
        },
        workspace: Arc::clone(workspace),
        body,
    })
}

/// Register every workspace tool.
pub fn register(registry: &mut Registry, workspace: &Arc<Workspace>) {
    let families = [
        notes::tools(workspace),
        notebooks::tools(workspace),
        tags::tools(workspace),
        tasks::tools(workspace),
        graph::tools(workspace),
        config_files::tools(workspace),
        blocks::tools(workspace),
        moves::tools(workspace),
        daily::tools(workspace),
        vec![semantic::tool(workspace)],
    ];
    for t in families.into_iter().flatten() {
        registry.register(t);
    }
}

/// Refuse a write when the caller's `expected_revision` is not the note's current revision.
fn check_expected_revision(
    path: &VaultPath,
    current: &note_io::NoteText,
    expected: Option<&str>,
) -> Result<(), ToolError> {
    let Some(expected) = expected else {
        return Ok(());
    };
    let actual = current.fingerprint.to_revision_string();
    if expected == actual {
        return Ok(());
    }
    Err(ToolError::Invalid(format!(
        "`{}` changed since revision {expected} (it is now {actual}); read it again and redo the change",
        path.rel()
    )))
}

impl Workspace {
    /// The caller has seen `rel` at `revision` (read it, or wrote it).
    pub(crate) fn note_read(&self, rel: &str, revision: &str) {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.insert(rel.to_string(), revision.to_string());
    }

    /// Whether the whole text of `path` may be replaced: only when the caller has seen it as it
    /// is now (Read before Write, as Claude Code's Edit and Write tools require). The error says
    /// to read it first.
    fn check_read(&self, path: &VaultPath, current: &note_io::NoteText) -> Result<(), ToolError> {
        let now = current.fingerprint.to_revision_string();
        let seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(path.rel())
            .cloned();
        match seen {
            Some(read) if read == now => Ok(()),
            Some(read) => Err(changed_since_read(
                path.rel(),
                &format!("(you read revision {read}, it is now {now})"),
            )),
            None => Err(not_read(path.rel())),
        }
    }
}

/// The refusal of a whole-`body` rewrite of `rel`, which changed since the caller read it; `when`
/// says how the change was seen (the revisions, or "in this session"). The workspace (per
/// process) and the agent (per session) refuse in the same words, so the model learns one rule.
pub fn changed_since_read(rel: &str, when: &str) -> ToolError {
    ToolError::Invalid(format!(
        "`{rel}` changed since you read it {when}; nothing was written. Replacing the whole `body` \
         needs the current text: read_note it again, or change only what you mean to with `edits`, \
         `append` or `prepend`"
    ))
}

/// The refusal of a whole-`body` rewrite of `rel`, which the caller has not read (the same words
/// from the workspace and the agent, as [`changed_since_read`]).
pub fn not_read(rel: &str) -> ToolError {
    ToolError::Invalid(format!(
        "`{rel}` has not been read in this session; nothing was written. Replacing the whole `body` \
         needs read_note of the note first (so that nothing you have not seen is overwritten), or \
         change only what you mean to with `edits`, `append` or `prepend`"
    ))
}

/// A note's text and revision token, read through the guard.
fn read_text(path: &VaultPath) -> Result<note_io::NoteText, ToolError> {
    // For the test that the app's loop never waits on a note read (tests/app/ui_loop.rs): a slow
    // disk, held here until the test lets it go.
    let _ = crate::vault::journal::failpoint("note.read");
    note_io::read_note(path).map_err(note_error)
}

impl Workspace {
    /// The vault-relative path a tool argument names, for the permission check. `Err` carries the
    /// guard's refusal (outside the vault, a protected folder for a write, …); `Ok(None)` when the
    /// name resolves to nothing yet (the tool itself will say so, or create it).
    pub fn target_path(
        &self,
        input: &str,
        access: Access,
        is_note: bool,
    ) -> Result<Option<String>, String> {
        match self.vault.resolve(input, access) {
            Err(e) if REFUSALS.contains(&e.kind()) => return Err(e.to_string()),
            Ok(path) if !is_note || path.abs().is_file() => {
                return Ok(Some(path.rel().to_string()));
            }
            _ => {}
        }
        if !is_note {
            return Ok(None);
        }
        match self.resolve_note(input, access) {
            Ok(path) => Ok(Some(path.rel().to_string())),
            Err(_) => Ok(None),
        }
    }
}

/// What the app's editor needs from the workspace: the names to pick from, and reads and writes
/// of the note the person edits (recorded as theirs in the revision log).
impl Workspace {
    /// Every note's path, title and aliases, sorted by path.
    pub fn note_names(&self) -> Result<Vec<crate::vault::links::NoteName>, ToolError> {
        self.index().note_names().map_err(internal)
    }

    /// The notes tagged `tag` (or a tag under it), sorted by path, at most `limit`.
    pub fn notes_tagged(&self, tag: &str, limit: usize) -> Result<Vec<String>, ToolError> {
        self.index().notes_tagged(tag, limit).map_err(internal)
    }

    /// Every note with its modification time, sorted by path (the app's file pane).
    pub fn note_listing(&self) -> Result<Vec<crate::index::NoteListing>, ToolError> {
        self.index().note_listing().map_err(internal)
    }

    /// Create an empty note named `name` (`Ideas/New idea`, `.md` added when missing) for the
    /// person, under the vault's write lock as every write. An existing file is never replaced:
    /// that is an error that says so (and `create_note` refuses one that appears meanwhile). The
    /// note is indexed and its creation recorded as theirs in the revision log.
    pub fn create_user_note(&self, name: &str) -> Result<(String, note_io::NoteText), ToolError> {
        let rel = notes::note_path(name)?;
        let path = self.resolve(&rel, Access::Write)?;
        if path.abs().exists() {
            return Err(ToolError::Invalid(format!(
                "`{}` already exists; choose another name",
                path.rel()
            )));
        }
        let text = String::new();
        let fingerprint = {
            let _lock = self.lock_writes()?;
            note_io::create_note(&path, &text, false).map_err(note_error)?
        };
        // The note exists; bookkeeping failures are logged, never reported as a failed create.
        for warning in self.after_write(WriteRecord {
            tool: None,
            actor: Some(Actor::User),
            rel: path.rel(),
            before: None,
            after: Some(&text),
            before_rev: None,
            after_rev: Some(fingerprint.to_revision_string()),
        }) {
            tracing::warn!("after creating {}: {warning}", path.rel());
        }
        self.published(&[path.rel().to_string()]);
        Ok((
            path.rel().to_string(),
            note_io::NoteText {
                text,
                format: note_io::TextFormat::default(),
                fingerprint,
            },
        ))
    }

    /// Read a note by path, title or alias.
    pub fn read_note_named(&self, name: &str) -> Result<(String, note_io::NoteText), ToolError> {
        let path = self.resolve_note(name, Access::Read)?;
        let note = read_text(&path)?;
        Ok((path.rel().to_string(), note))
    }

    /// Save the person's text over `rel`, which must still be as `read` describes (else
    /// `NoteError::Changed`, so a change on disk is never overwritten unseen). Updates the index
    /// and records a revision by the user.
    pub fn save_user_edit(
        &self,
        rel: &str,
        read: &note_io::NoteText,
        text: &str,
        by: SavedBy,
    ) -> Result<note_io::NoteText, ToolError> {
        let path = self.resolve(rel, Access::Write)?;
        let fingerprint = {
            let _lock = self.lock_writes()?;
            note_io::write_note(&path, text, &read.format, Some(&read.fingerprint))
                .map_err(note_error)?
        };
        // The note is saved; bookkeeping failures are logged, never reported as a failed save.
        let (tool, actor) = match by {
            SavedBy::Person => (None, Actor::User),
            SavedBy::AgentEdit => (Some("editor edit"), Actor::Agent),
        };
        for warning in self.after_write(WriteRecord {
            tool,
            actor: Some(actor),
            rel: path.rel(),
            before: Some(&read.text),
            after: Some(text),
            before_rev: Some(read.fingerprint.to_revision_string()),
            after_rev: Some(fingerprint.to_revision_string()),
        }) {
            tracing::warn!("after saving {}: {warning}", path.rel());
        }
        // An agent edit the person approved is an approved change; their own typing is not.
        if by == SavedBy::AgentEdit {
            self.published(&[path.rel().to_string()]);
        }
        Ok(note_io::NoteText {
            text: text.to_string(),
            format: read.format,
            fingerprint,
        })
    }

    /// The note at `rel` as it is on disk now.
    pub fn read_path(&self, rel: &str) -> Result<note_io::NoteText, ToolError> {
        read_text(&self.resolve(rel, Access::Read)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/tools.md counts and names what the registry serves: the number of read-only tools
    /// `vaultchat mcp` lists without `--allow-writes`, the tools that flag adds, and a section
    /// for every tool.
    #[test]
    fn the_tool_docs_match_the_registry() {
        let docs = include_str!("../../../docs/tools.md");
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path().join("vault");
        std::fs::create_dir_all(&vault).unwrap();
        let paths = crate::config::Paths::under(&dir.path().join("data"));
        let workspace = Workspace::open(
            crate::vault::Vault::open(&vault).unwrap(),
            &paths,
            &crate::config::Config::default(),
            Actor::Agent,
        )
        .unwrap();
        let mut registry = Registry::new();
        register(&mut registry, &workspace);
        let read_only = registry
            .specs()
            .filter(|s| s.annotations.read_only_hint)
            .count();
        let sentence = format!("lists only the {read_only} read-only tools");
        assert!(docs.contains(&sentence), "docs/tools.md lacks {sentence:?}");
        let adds = docs
            .split("`--allow-writes` adds")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap_or_default();
        for spec in registry.specs() {
            assert!(
                docs.contains(&format!("\n### {}\n", spec.name)),
                "docs/tools.md has no section for {}",
                spec.name
            );
            if !spec.annotations.read_only_hint {
                assert!(
                    adds.contains(&format!("`{}`", spec.name)),
                    "docs/tools.md does not say --allow-writes adds {}",
                    spec.name
                );
            }
        }
    }
}
