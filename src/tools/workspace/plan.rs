//! Writes in two steps: a [`Plan`] says what a write tool would change without changing anything,
//! and [`Workspace::apply`] carries it out.
//!
//! The split is what lets the agent show a diff and ask before anything is written: it plans,
//! asks, and applies only the hunks the person accepted. MCP clients (which ask their own users)
//! plan and apply in one call. Both paths end in the same `apply`, so a write is checked, written
//! and recorded the same way whoever asked for it.
//!
//! Apply never writes over a change it has not seen: when the note changed on disk after the plan
//! was made, the planned change is re-based onto the current text by a three-way merge, and refused
//! when both touched the same lines.

use super::moves::MovePlan;
use super::{Workspace, WriteRecord, internal, note_error, read_text};
use crate::text::diff::{TextDiff, apply_hunks, merge3};
use crate::tools::{ToolError, ToolOutput};
use crate::vault::VaultPath;
use crate::vault::contained::{ContainedError, Entry, Folder, WriteLock};
use crate::vault::note_io::{self, NoteText};
use serde_json::{Map, Value, json};

/// What one write tool call would change.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The tool that made the plan.
    pub tool: String,
    pub change: Change,
    /// Tool-specific facts for the result (manage_tags' report, create_note's `created`).
    pub extra: Map<String, Value>,
    /// The caller pinned the note's revision (`expected_revision`): if the note changed after the
    /// plan, the write is refused with the current revision instead of re-based.
    pub pinned: bool,
}

/// The change itself. One file (or folder) per call.
#[derive(Debug, Clone)]
pub enum Change {
    /// Write `after` to a note; `before` is the note as it was when planned (None: it does not
    /// exist and is created, never replacing anything that appears meanwhile).
    Write {
        path: VaultPath,
        before: Option<NoteText>,
        after: String,
    },
    /// Move a note to the vault's `.trash/`.
    Delete { path: VaultPath, before: NoteText },
    /// Create a folder (and missing parents).
    Folder { path: VaultPath },
    /// Move a note and rewrite the links to it in other notes: several files, all or none.
    Move(Box<MovePlan>),
}

impl Plan {
    pub fn path(&self) -> &VaultPath {
        match &self.change {
            Change::Write { path, .. } | Change::Delete { path, .. } | Change::Folder { path } => {
                path
            }
            Change::Move(mv) => &mv.from,
        }
    }

    /// The text before and after, for the diff ("" for a note that does not exist).
    pub fn texts(&self) -> (&str, &str) {
        match &self.change {
            Change::Write { before, after, .. } => {
                (before.as_ref().map_or("", |b| b.text.as_str()), after)
            }
            Change::Delete { before, .. } => (&before.text, ""),
            Change::Folder { .. } | Change::Move(_) => ("", ""),
        }
    }

    /// The line diff of the change (empty for folders and no-op writes). For a move, the hunks
    /// of every file in [`Plan::file_diffs`] order, one after the other: per-hunk answers index
    /// into this list whatever the number of files.
    pub fn diff(&self) -> TextDiff {
        if let Change::Move(_) = &self.change {
            let mut all = TextDiff::new("", "");
            for file in self.file_diffs() {
                all.added += file.diff.added;
                all.removed += file.diff.removed;
                all.hunks.extend(file.diff.hunks);
            }
            return all;
        }
        let (before, after) = self.texts();
        TextDiff::new(before, after)
    }

    /// The change file by file: one entry for a single-file change, one per file of a move
    /// (the moved note first, named by its old and new path).
    pub fn file_diffs(&self) -> Vec<FileDiff> {
        match &self.change {
            Change::Move(mv) => mv
                .files
                .iter()
                .map(|edit| FileDiff {
                    path: edit.path.rel().to_string(),
                    path_after: mv.rel_after(edit).to_string(),
                    diff: TextDiff::new(&edit.before.text, &edit.after),
                })
                .collect(),
            _ => vec![FileDiff {
                path: self.path().rel().to_string(),
                path_after: self.path().rel().to_string(),
                diff: self.diff(),
            }],
        }
    }

    /// Whether applying would change nothing on disk.
    pub fn is_noop(&self) -> bool {
        match &self.change {
            Change::Write {
                before: Some(before),
                after,
                ..
            } => before.text == *after,
            Change::Write { before: None, .. } | Change::Delete { .. } | Change::Move(_) => false,
            Change::Folder { path } => path.abs().is_dir(),
        }
    }

    /// A short human description: "update Projects/Plan.md", "create Inbox/New.md".
    pub fn describe(&self) -> String {
        if let Change::Move(mv) = &self.change {
            let links = mv.counts.total() + mv.other_links;
            let notes = mv.files.len().saturating_sub(1);
            return format!(
                "move {} to {} ({links} link{} in {notes} other note{})",
                mv.from.rel(),
                mv.to.rel(),
                if links == 1 { "" } else { "s" },
                if notes == 1 { "" } else { "s" },
            );
        }
        let verb = match &self.change {
            Change::Write { before: None, .. } => "create",
            Change::Write { .. } => "update",
            Change::Delete { .. } => "move to .trash",
            Change::Folder { .. } => "create folder",
            Change::Move(_) => "move",
        };
        format!("{verb} {}", self.path().rel())
    }

    /// The same plan with its text re-based onto `current`: for a write planned against an
    /// older text (`base`) of the note. `Err` when both changed the same lines.
    pub fn rebase(&self, base: &str, current: &NoteText) -> Result<Plan, ToolError> {
        let Change::Write {
            path,
            before: Some(_),
            after,
        } = &self.change
        else {
            return Ok(self.clone());
        };
        let merged = merge3(base, &current.text, after).map_err(|conflict| {
            ToolError::Invalid(format!(
                "`{}` changed since you read it, and the change you asked for touches the same lines ({conflict}); nothing was written. Read the note again and redo the change on its current text",
                path.rel()
            ))
        })?;
        Ok(Plan {
            tool: self.tool.clone(),
            change: Change::Write {
                path: path.clone(),
                before: Some(current.clone()),
                after: merged,
            },
            extra: self.extra.clone(),
            pinned: self.pinned,
        })
    }
}

/// One file of a change, for showing it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDiff {
    /// Where the file is now.
    pub path: String,
    /// Where it is after the change (differs for the moved note of a move).
    pub path_after: String,
    pub diff: TextDiff,
}

/// What apply did, for the tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub output: ToolOutput,
    pub added: u64,
    pub removed: u64,
    /// The facts a caller acts on, typed (the same as in `output`, which is the tool's result).
    pub written: Written,
}

/// What an applied plan wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// The files written, the planned note first (at its new path for a move).
    pub files_changed: Vec<String>,
    /// What could not follow a write that happened (the index, the revision log): said to the
    /// person, never mistaken for a failed write.
    pub warnings: Vec<String>,
}

impl Workspace {
    /// Carry out `plan`. With `accepted`, only the hunks flagged true (one flag per hunk of
    /// [`Plan::diff`]) are applied; the result lists which were.
    ///
    /// Outcomes are honest: an `Err` means the vault is as it was. Once the note itself has
    /// changed, a failure to record it (index, revision log: a full disk, say) is reported as a
    /// `warning` in a successful result, never as an error for a write that happened.
    pub fn apply(&self, plan: &Plan, accepted: Option<&[bool]>) -> Result<Applied, ToolError> {
        let lock = self.lock_writes()?;
        self.apply_locked(plan, accepted, &lock)
    }

    /// [`Workspace::apply`] for a caller that already holds the vault's write lock (a tool call
    /// that plans and applies in one step, so that it plans against the latest text).
    pub(super) fn apply_locked(
        &self,
        plan: &Plan,
        accepted: Option<&[bool]>,
        _lock: &WriteLock<'_>,
    ) -> Result<Applied, ToolError> {
        let mut out = plan.extra.clone();
        out.insert("path".into(), json!(plan.path().rel()));
        let mut written = Written::default();
        let done = match &plan.change {
            Change::Write {
                path,
                before: None,
                after,
            } => apply_create(plan, path, after, accepted, &mut out)?,
            Change::Write {
                path,
                before: Some(before),
                after,
            } => apply_update(plan, path, before, after, accepted, &mut out)?,
            Change::Delete { path, before } => apply_delete(path, before, &mut out)?,
            Change::Move(mv) => {
                written = self.apply_move(mv, accepted, &mut out)?;
                out.insert(
                    "links_rewritten".into(),
                    serde_json::to_value(mv.counts).map_err(super::internal)?,
                );
                if mv.other_links > 0 {
                    out.insert("other_links_rewritten".into(), json!(mv.other_links));
                }
                if let Some(flags) = accepted.filter(|f| !f.iter().all(|a| *a)) {
                    record_hunks(&mut out, flags);
                }
                Done::default()
            }
            Change::Folder { path } => {
                let created = super::notebooks::create_folders(path)?;
                out.insert("created".into(), json!(!created.is_empty()));
                out.insert("created_folders".into(), json!(created));
                Done::default()
            }
        };
        if let Some(record) = done.record {
            written.files_changed.push(record.rel.clone());
            // The caller knows what it wrote: a whole-body replacement after it needs no re-read.
            if let Some(revision) = &record.after_rev {
                self.note_read(&record.rel, revision);
            }
            let warnings = self.after_write(WriteRecord {
                tool: Some(&plan.tool),
                actor: None,
                rel: &record.rel,
                before: record.before.as_deref(),
                after: record.after.as_deref(),
                before_rev: record.before_rev,
                after_rev: record.after_rev,
            });
            if !warnings.is_empty() {
                out.insert("warning".into(), json!(warnings.join("; ")));
            }
            written.warnings = warnings;
        }
        let output = ToolOutput::json(Value::Object(out))?;
        // A moved note's old path changed too (it is gone): hooks are told both.
        let mut published = written.files_changed.clone();
        if let Change::Move(mv) = &plan.change
            && !written.files_changed.is_empty()
        {
            published.push(mv.from.rel().to_string());
        }
        self.published(&published);
        Ok(Applied {
            output,
            added: done.added,
            removed: done.removed,
            written,
        })
    }
}

/// What one applied change did: lines added and removed, and what to record (nothing for a
/// folder or a write that changed nothing).
#[derive(Default)]
struct Done {
    added: u64,
    removed: u64,
    record: Option<OwnedRecord>,
}

impl Done {
    /// A write of `path` from `before` to `after`, each a note's text with its revision (`None`:
    /// no note), with its line counts.
    fn written(
        path: &VaultPath,
        before: Option<(String, String)>,
        after: Option<(String, String)>,
    ) -> Done {
        let (before, before_rev) = before.unzip();
        let (after, after_rev) = after.unzip();
        let (added, removed) = super::line_stats(
            before.as_deref().unwrap_or(""),
            after.as_deref().unwrap_or(""),
        );
        Done {
            added,
            removed,
            record: Some(OwnedRecord {
                rel: path.rel().to_string(),
                before,
                after,
                before_rev,
                after_rev,
            }),
        }
    }
}

/// The text a plan writes: `after`, or only the accepted hunks of the change from `before`.
fn accepted_text(
    plan: &Plan,
    before: &str,
    after: &str,
    accepted: Option<&[bool]>,
    out: &mut Map<String, Value>,
) -> String {
    match accepted {
        Some(flags) if !flags.iter().all(|f| *f) => {
            let diff = plan.diff();
            record_hunks(out, flags);
            apply_hunks(before, after, &diff, flags)
        }
        _ => after.to_string(),
    }
}

/// A new note: linked into place, never replacing anything that appeared meanwhile.
fn apply_create(
    plan: &Plan,
    path: &VaultPath,
    after: &str,
    accepted: Option<&[bool]>,
    out: &mut Map<String, Value>,
) -> Result<Done, ToolError> {
    let text = accepted_text(plan, "", after, accepted, out);
    let fingerprint = note_io::create_note(path, &text, false).map_err(note_error)?;
    out.insert("changed".into(), json!(true));
    out.insert("revision".into(), json!(fingerprint.to_revision_string()));
    Ok(Done::written(
        path,
        None,
        Some((text, fingerprint.to_revision_string())),
    ))
}

/// A change to an existing note, re-based three-way onto what is on disk now when the note
/// changed after the plan (refused when pinned, or when both touched the same lines).
fn apply_update(
    plan: &Plan,
    path: &VaultPath,
    before: &NoteText,
    after: &str,
    accepted: Option<&[bool]>,
    out: &mut Map<String, Value>,
) -> Result<Done, ToolError> {
    let wanted = accepted_text(plan, &before.text, after, accepted, out);
    let current = read_text(path)?;
    let text = if current.fingerprint.matches_content(&before.fingerprint) {
        wanted
    } else if plan.pinned {
        return Err(ToolError::Invalid(format!(
            "`{}` changed since revision {} (it is now {}); nothing was written: read it again and redo the change",
            path.rel(),
            before.fingerprint.to_revision_string(),
            current.fingerprint.to_revision_string()
        )));
    } else {
        let merged = merge3(&before.text, &current.text, &wanted).map_err(|conflict| {
            ToolError::Invalid(format!(
                "`{}` changed on disk while this change waited, and both touch the same lines ({conflict}); nothing was written. Read the note again (it is now revision {}) and redo the change",
                path.rel(),
                current.fingerprint.to_revision_string()
            ))
        })?;
        out.insert("merged_with_changes_on_disk".into(), json!(true));
        merged
    };
    if text == current.text {
        out.insert("changed".into(), json!(false));
        out.insert(
            "revision".into(),
            json!(current.fingerprint.to_revision_string()),
        );
        return Ok(Done::default());
    }
    let fingerprint = note_io::write_note(path, &text, &current.format, Some(&current.fingerprint))
        .map_err(note_error)?;
    let revision = fingerprint.to_revision_string();
    let done = Done::written(
        path,
        Some((current.text, current.fingerprint.to_revision_string())),
        Some((text, revision.clone())),
    );
    out.insert("changed".into(), json!(true));
    // Line counts, unless the tool reports something else under these names (manage_tags lists
    // the tags it added and removed).
    out.entry("added").or_insert(json!(done.added));
    out.entry("removed").or_insert(json!(done.removed));
    out.insert("revision".into(), json!(revision));
    Ok(done)
}

/// A deletion: the note moves to `.trash/`, unless it changed since the plan.
fn apply_delete(
    path: &VaultPath,
    before: &NoteText,
    out: &mut Map<String, Value>,
) -> Result<Done, ToolError> {
    let current = read_text(path)?;
    if !current.fingerprint.matches_content(&before.fingerprint) {
        return Err(ToolError::Invalid(format!(
            "`{}` changed on disk since the deletion was proposed; it was left in place. Read it again if it should still go",
            path.rel()
        )));
    }
    let moved_to = move_to_trash(path)?;
    out.insert("moved_to".into(), json!(moved_to));
    let before_rev = current.fingerprint.to_revision_string();
    Ok(Done::written(path, Some((current.text, before_rev)), None))
}

/// What a write changed, kept until its bookkeeping is done.
struct OwnedRecord {
    rel: String,
    before: Option<String>,
    after: Option<String>,
    before_rev: Option<String>,
    after_rev: Option<String>,
}

/// Move a note into `.trash/` under the same relative path (numbered when an earlier deletion of
/// the same path is there); returns the trash path. Every step goes through the vault root's
/// handle: a `.trash` (or a folder in it) that is a symbolic link is refused, never followed.
fn move_to_trash(path: &VaultPath) -> Result<String, ToolError> {
    let rel = path.rel();
    let (source, name) = path.open_parent(false).map_err(trash_error(rel))?;
    let root = path.root_folder().map_err(trash_error(rel))?;
    let mut folder = open_trash_folder(&root, ".trash", rel)?;
    let mut trash_rel = String::new();
    let folders: Vec<&str> = rel.split('/').collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    for part in folders {
        trash_rel.push_str(part);
        trash_rel.push('/');
        folder = open_trash_folder(&folder, part, rel)?;
    }
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let mut target = name.to_string();
    // Never overwrite an earlier deletion of a note with the same path: the move refuses to
    // replace, and the next number is tried.
    for n in 1..=1000 {
        match source.move_noreplace(name, &folder, &target) {
            Ok(()) => {
                if let Err(e) = source.sync().and_then(|()| folder.sync()) {
                    tracing::warn!("syncing the folders after moving {rel} to the trash: {e}");
                }
                return Ok(format!(".trash/{trash_rel}{target}"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                target = format!("{stem} ({n}).md");
            }
            Err(e) => {
                return Err(internal(format!(
                    "cannot move {rel} to the trash: {e}; the note was left in place"
                )));
            }
        }
    }
    Err(internal(format!(
        "the trash already holds 1000 deleted copies of {rel}; empty .trash and try again"
    )))
}

/// Opens (making it when missing) the trash folder `name` inside `parent`, refusing links.
fn open_trash_folder(parent: &Folder, name: &str, rel: &str) -> Result<Folder, ToolError> {
    match parent.entry(name) {
        Ok(Entry::Missing) => {
            parent
                .make_folder(name)
                .map_err(|e| internal(format!("cannot create the trash folder `{name}`: {e}")))?;
        }
        Ok(Entry::Folder) => {}
        Ok(Entry::Symlink) => {
            return Err(ToolError::Invalid(format!(
                "the trash folder `{name}` is a symbolic link, and vaultchat never moves notes through links (it could lead outside the vault); `{rel}` was left in place: replace the link with a real folder"
            )));
        }
        Ok(Entry::File { .. } | Entry::Other) => {
            return Err(ToolError::Invalid(format!(
                "`{name}` in the trash is not a folder; `{rel}` was left in place: move that file away"
            )));
        }
        Err(e) => {
            return Err(internal(format!(
                "cannot inspect the trash folder `{name}`: {e}"
            )));
        }
    }
    parent.open_folder(name, name).map_err(trash_error(rel))
}

fn trash_error(rel: &str) -> impl FnOnce(ContainedError) -> ToolError + '_ {
    move |e| match e {
        ContainedError::LinkAppeared { component, .. } => ToolError::Invalid(format!(
            "`{component}` became a symbolic link or stopped being a folder while `{rel}` was being moved to the trash; it was left in place"
        )),
        other => internal(format!(
            "cannot move {rel} to the trash: {other}; it was left in place"
        )),
    }
}

/// Add `hunks_applied` and `hunks_rejected` (1-based hunk numbers) to a tool result, so the model
/// knows which parts of its change were kept.
pub fn record_hunks(out: &mut Map<String, Value>, flags: &[bool]) {
    let numbered = |want: bool| {
        flags
            .iter()
            .enumerate()
            .filter(|(_, f)| **f == want)
            .map(|(i, _)| i + 1)
            .collect::<Vec<_>>()
    };
    out.insert("hunks_applied".into(), json!(numbered(true)));
    out.insert("hunks_rejected".into(), json!(numbered(false)));
}
