//! Applying a [`MovePlan`]: every file changes or none, even across a crash.
//!
//! Each file is written the way every note is (a temp file beside it, fsynced, renamed over it),
//! so each single file is always whole. What makes the set atomic is a journal in the data
//! directory (never in the vault): before the first file changes, the bytes of every file the
//! move may touch, the move itself and the folders it creates are written there (atomically,
//! fsynced). Then the notes are rewritten one by one, the moved note is renamed last (no-replace),
//! and the journal is removed: that removal is the commit.
//!
//! A failure part-way rolls back at once from the journal. A crash part-way leaves the journal
//! behind; the next open of the workspace (app, `mcp`, `ask`) takes the vault's write lock, finds
//! it and rolls back the same way, so the vault is byte for byte as it was before the move. The
//! lock matters: a journal is only ever rolled back by a process that holds the lock, and the
//! process that wrote it held the lock until it removed it, so a live move is never undone.
//! docs/decisions.md ("Link-safe moves") says why roll-back rather than roll-forward.

use super::moves::{FileEdit, MovePlan};
use super::plan::Written;
use super::{Workspace, WriteRecord, internal, note_error, read_text};
use crate::text::diff::{TextDiff, apply_hunks};
use crate::tools::ToolError;
use crate::vault::note_io::{self, NoteText};
use crate::vault::{Access, Vault, VaultPath, journal};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a crash part-way through a move needs to undo it.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    /// The vault the move is in (a data directory may serve several).
    vault: PathBuf,
    from: String,
    to: String,
    /// Folders made for `to`, outermost first.
    created_folders: Vec<String>,
    /// Every file the move writes, with its exact bytes before (the moved note under `from`).
    files: Vec<JournalFile>,
}

#[derive(Debug, Serialize, Deserialize)]
struct JournalFile {
    rel: String,
    /// The file's bytes before the move (notes are UTF-8, BOM and CRLF included).
    original: String,
    /// The bytes the move writes there. A roll-back restores `original` only over exactly these:
    /// a file changed since (the person, another program) keeps its text. (`None` in a journal
    /// written before this field: restored as before.)
    #[serde(default)]
    written: Option<String>,
}

/// One file's part of the move after the person's hunk answers.
struct FileWrite<'a> {
    edit: &'a FileEdit,
    text: String,
}

impl Workspace {
    /// The move journal of this vault.
    fn journal_path(&self) -> PathBuf {
        self.data_dir
            .join("moves")
            .join(format!("{}.json", self.vault_id))
    }

    /// Carry out `mv` (the caller holds the write lock). With `accepted`, one flag per hunk of
    /// the plan's diff, files in plan order; a file whose hunks are all rejected is left as it is.
    pub(super) fn apply_move(
        &self,
        mv: &MovePlan,
        accepted: Option<&[bool]>,
        out: &mut Map<String, Value>,
    ) -> Result<Written, ToolError> {
        let writes = accepted_writes(mv, accepted);
        check_unchanged(mv)?;
        let journal = Journal {
            vault: self.vault.root().to_path_buf(),
            from: mv.from.rel().to_string(),
            to: mv.to.rel().to_string(),
            created_folders: missing_folders(&self.vault, mv.to.rel()),
            files: writes
                .iter()
                .map(|w| {
                    let bytes = |text: &str| {
                        String::from_utf8_lossy(&note_io::encode(text, &w.edit.before.format))
                            .into_owned()
                    };
                    JournalFile {
                        rel: w.edit.path.rel().to_string(),
                        original: bytes(&w.edit.before.text),
                        written: Some(bytes(&w.text)),
                    }
                })
                .collect(),
        };
        write_journal(&self.journal_path(), &journal)
            .map_err(|e| internal(format!("the move was not started: {e}")))?;
        if let Err(e) = self.write_all(mv, &writes) {
            return Err(self.undo(&journal, e));
        }
        if let Err(e) = failpoint("move_note.before_commit") {
            return Err(self.undo(&journal, e));
        }
        if let Err(e) = remove_durably(&self.journal_path()) {
            return Err(self.undo(&journal, internal(format!("finishing the move: {e}"))));
        }
        Ok(self.record_move(mv, &writes, out))
    }

    /// Writes the other notes, then renames the moved note into place (and writes its fixed
    /// text there). Stops at the first failure.
    fn write_all(&self, mv: &MovePlan, writes: &[FileWrite<'_>]) -> Result<(), ToolError> {
        let mut written = 0;
        for w in writes.iter().filter(|w| w.edit.path.rel() != mv.from.rel()) {
            if w.text == w.edit.before.text {
                continue;
            }
            note_io::write_note(
                &w.edit.path,
                &w.text,
                &w.edit.before.format,
                Some(&w.edit.before.fingerprint),
            )
            .map_err(note_error)?;
            written += 1;
            failpoint(&format!("move_note.after_file.{written}"))?;
        }
        rename_note(&mv.from, &mv.to)?;
        failpoint("move_note.after_rename")?;
        if let Some(moved) = writes.iter().find(|w| w.edit.path.rel() == mv.from.rel())
            && moved.text != moved.edit.before.text
        {
            note_io::write_note(&mv.to, &moved.text, &moved.edit.before.format, None)
                .map_err(note_error)?;
        }
        Ok(())
    }

    /// Rolls a failed move back; the error says what happened either way.
    fn undo(&self, journal: &Journal, cause: ToolError) -> ToolError {
        match roll_back(&self.vault, journal) {
            Ok(()) => {
                if let Err(e) = remove_durably(&self.journal_path()) {
                    tracing::warn!("removing the move journal after a roll-back: {e}");
                }
                cause
            }
            Err(e) => internal(format!(
                "{cause}; undoing the files already changed failed too ({e}): they are restored the next time vaultchat opens this vault"
            )),
        }
    }

    /// Index, revision log and the tool result for a finished move.
    fn record_move(
        &self,
        mv: &MovePlan,
        writes: &[FileWrite<'_>],
        out: &mut Map<String, Value>,
    ) -> Written {
        let mut warnings = Vec::new();
        let mut changed = vec![mv.to.rel().to_string()];
        for w in writes {
            let moved = w.edit.path.rel() == mv.from.rel();
            let before = w.edit.before.fingerprint.to_revision_string();
            if moved {
                // The note leaves its old path and appears at the new one.
                warnings.extend(self.after_write(WriteRecord {
                    tool: Some("move_note"),
                    actor: None,
                    rel: mv.from.rel(),
                    before: Some(&w.edit.before.text),
                    after: None,
                    before_rev: Some(before),
                    after_rev: None,
                }));
                warnings.extend(self.after_write(WriteRecord {
                    tool: Some("move_note"),
                    actor: None,
                    rel: mv.to.rel(),
                    before: None,
                    after: Some(&w.text),
                    before_rev: None,
                    after_rev: Some(revision_of(&w.text, &w.edit.before)),
                }));
            } else if w.text != w.edit.before.text {
                changed.push(w.edit.path.rel().to_string());
                warnings.extend(self.after_write(WriteRecord {
                    tool: Some("move_note"),
                    actor: None,
                    rel: w.edit.path.rel(),
                    before: Some(&w.edit.before.text),
                    after: Some(&w.text),
                    before_rev: Some(before),
                    after_rev: Some(revision_of(&w.text, &w.edit.before)),
                }));
            }
        }
        warnings.sort();
        warnings.dedup();
        out.insert("path".into(), json!(mv.to.rel()));
        out.insert("changed".into(), json!(true));
        out.insert("files_changed".into(), json!(changed));
        if !warnings.is_empty() {
            out.insert("warning".into(), json!(warnings.join("; ")));
        }
        Written {
            files_changed: changed,
            warnings,
        }
    }

    /// A move that a crash interrupted is rolled back: called when the workspace opens. Waits
    /// for the write lock, so a move another process is making right now is never touched.
    pub(super) fn recover_interrupted_move(&self) {
        let path = self.journal_path();
        // Looked at without the lock first: nearly always there is nothing, and opening a
        // workspace should not wait for another process's write.
        match read_journal(&path) {
            Ok(Some(_)) => {}
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("the move journal {} cannot be read: {e}", path.display());
                return;
            }
        }
        let Ok(_lock) = self.lock_writes() else {
            tracing::warn!("an interrupted move waits: the vault is locked by another writer");
            return;
        };
        let journal = match read_journal(&path) {
            Ok(Some(journal)) => journal,
            // The other process finished its move while this one waited for the lock.
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("the move journal {} cannot be read: {e}", path.display());
                return;
            }
        };
        match roll_back(&self.vault, &journal) {
            Ok(()) => {
                tracing::warn!(
                    "a move of {} to {} was interrupted; every file was restored",
                    journal.from,
                    journal.to
                );
                if let Err(e) = remove_durably(&path) {
                    tracing::warn!("removing the move journal: {e}");
                }
                let mut rels: Vec<String> = journal.files.iter().map(|f| f.rel.clone()).collect();
                rels.push(journal.to.clone());
                if let Err(e) = self.index().sync_paths(&rels) {
                    tracing::warn!("indexing the notes of a rolled-back move: {e}");
                }
            }
            Err(e) => tracing::warn!(
                "a move of {} to {} was interrupted and could not be undone yet ({e}); it is tried again at the next start",
                journal.from,
                journal.to
            ),
        }
    }
}

/// The revision token of `text` written in `format` (the bytes on disk).
fn revision_of(text: &str, before: &NoteText) -> String {
    let bytes = note_io::encode(text, &before.format);
    format!("{:016x}-{}", note_io::content_hash(&bytes), bytes.len())
}

/// Each file's text after the accepted hunks (all, without `accepted`).
fn accepted_writes<'a>(mv: &'a MovePlan, accepted: Option<&[bool]>) -> Vec<FileWrite<'a>> {
    let mut offset = 0;
    mv.files
        .iter()
        .map(|edit| {
            let text = match accepted {
                None => edit.after.clone(),
                Some(flags) => {
                    let diff = TextDiff::new(&edit.before.text, &edit.after);
                    let count = diff.hunks.len();
                    let mine: Vec<bool> = (offset..offset + count)
                        // A hunk without an answer is not approved, as in every other write.
                        .map(|i| flags.get(i).copied().unwrap_or(false))
                        .collect();
                    offset += count;
                    apply_hunks(&edit.before.text, &edit.after, &diff, &mine)
                }
            };
            FileWrite { edit, text }
        })
        .collect()
}

/// Every file must still be as planned, and the target still free: a move is never merged.
fn check_unchanged(mv: &MovePlan) -> Result<(), ToolError> {
    if mv.to.abs().exists() {
        return Err(ToolError::Invalid(format!(
            "`{}` appeared since the move was proposed; nothing was changed",
            mv.to.rel()
        )));
    }
    for edit in &mv.files {
        let current = read_text(&edit.path)?;
        if !current
            .fingerprint
            .matches_content(&edit.before.fingerprint)
        {
            return Err(ToolError::Invalid(format!(
                "`{}` changed on disk since the move was proposed; nothing was changed. Propose the move again",
                edit.path.rel()
            )));
        }
    }
    Ok(())
}

/// The folders of `rel`'s parent that do not exist yet, outermost first.
fn missing_folders(vault: &Vault, rel: &str) -> Vec<String> {
    let parts: Vec<&str> = rel.split('/').collect();
    let mut missing = Vec::new();
    for end in 1..parts.len() {
        let folder = parts[..end].join("/");
        if !vault.root().join(&folder).exists() {
            missing.push(folder);
        }
    }
    missing
}

/// Renames `from` to `to` (missing folders made), never replacing anything at `to`.
fn rename_note(from: &VaultPath, to: &VaultPath) -> Result<(), ToolError> {
    let fail = |e: &dyn std::fmt::Display| {
        internal(format!("moving `{}` to `{}`: {e}", from.rel(), to.rel()))
    };
    let (source, name) = from.open_parent(false).map_err(|e| fail(&e))?;
    let (target, new_name) = to.open_parent(true).map_err(|e| fail(&e))?;
    source
        .move_noreplace(name, &target, new_name)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => ToolError::Invalid(format!(
                "`{}` appeared since the move was proposed; nothing was changed",
                to.rel()
            )),
            _ => fail(&e),
        })?;
    // The journal is removed (the move committed) only once the rename is durable: a failed
    // sync undoes the move instead of leaving links and note apart after a power loss.
    source
        .sync()
        .and_then(|()| target.sync())
        .map_err(|e| fail(&format!("syncing the folders: {e}")))?;
    Ok(())
}

/// Puts every file of `journal` back as it was: the moved note back at `from`, each file's bytes
/// restored where they differ, the folders the move made removed when empty.
fn roll_back(vault: &Vault, journal: &Journal) -> Result<(), String> {
    let resolve = |rel: &str| vault.resolve(rel, Access::Write).map_err(|e| e.to_string());
    let from = resolve(&journal.from)?;
    let to = resolve(&journal.to)?;
    if !from.abs().exists() && to.abs().is_file() {
        let (source, name) = to.open_parent(false).map_err(|e| e.to_string())?;
        let (target, old_name) = from.open_parent(true).map_err(|e| e.to_string())?;
        source
            .move_noreplace(name, &target, old_name)
            .map_err(|e| format!("moving `{}` back: {e}", journal.to))?;
        if let Err(e) = source.sync().and_then(|()| target.sync()) {
            tracing::warn!("syncing the folders after moving {} back: {e}", journal.to);
        }
    }
    for file in &journal.files {
        let path = resolve(&file.rel)?;
        let current = read_bytes(&path).map_err(|e| format!("reading `{}`: {e}", file.rel))?;
        if current.as_deref() == Some(file.original.as_bytes()) {
            continue;
        }
        if let Some(written) = &file.written
            && current.as_deref() != Some(written.as_bytes())
        {
            // Changed after the move wrote it (an interrupted move is undone at the next open,
            // which may be much later): that text is the person's, and it stays.
            tracing::warn!(
                "undoing a move: `{}` changed since the move wrote it and is left as it is",
                file.rel
            );
            continue;
        }
        let (text, format) =
            note_io::decode(file.original.as_bytes()).map_err(|e| e.to_string())?;
        note_io::write_note(&path, &text, &format, None)
            .map_err(|e| format!("restoring `{}`: {e}", file.rel))?;
    }
    for folder in journal.created_folders.iter().rev() {
        let Ok(path) = vault.resolve(folder, Access::Write) else {
            continue;
        };
        if let Ok((parent, name)) = path.open_parent(false)
            && let Err(e) = parent.remove_empty_folder(name)
        {
            // Not empty: something else was put there meanwhile, and it stays.
            tracing::info!("leaving the folder {folder} the move made: {e}");
        }
    }
    Ok(())
}

/// A file's bytes (None when it is missing), read through the vault root's handle.
fn read_bytes(path: &VaultPath) -> std::io::Result<Option<Vec<u8>>> {
    match note_io::open_file(path) {
        Ok(mut file) => {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok(Some(bytes))
        }
        Err(note_io::NoteError::NotFound { .. }) => Ok(None),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

fn write_journal(path: &Path, journal: &Journal) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(journal).map_err(std::io::Error::other)?;
    journal::write_durably(path, &bytes)
}

fn read_journal(path: &Path) -> std::io::Result<Option<Journal>> {
    match journal::read_if_exists(path)? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(std::io::Error::other),
        None => Ok(None),
    }
}

/// Removes the journal durably: the move's commit point.
fn remove_durably(path: &Path) -> std::io::Result<()> {
    journal::remove_durably(path)
}

/// A failpoint of the crash tests (see [`journal::failpoint`]).
fn failpoint(name: &str) -> Result<(), ToolError> {
    match journal::failpoint(name) {
        journal::Failpoint::Pass => Ok(()),
        journal::Failpoint::Fail => Err(internal(format!(
            "the step after {name} failed (failpoint)"
        ))),
    }
}
