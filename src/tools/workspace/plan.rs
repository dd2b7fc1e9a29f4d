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

use super::{Workspace, WriteRecord, internal, note_error, read_text};
use crate::tools::{ToolError, ToolOutput};
use crate::vault::VaultPath;
use crate::vault::diff::{TextDiff, apply_hunks, merge3};
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
}

impl Plan {
    pub fn path(&self) -> &VaultPath {
        match &self.change {
            Change::Write { path, .. } | Change::Delete { path, .. } | Change::Folder { path } => {
                path
            }
        }
    }

    /// The text before and after, for the diff ("" for a note that does not exist).
    pub fn texts(&self) -> (&str, &str) {
        match &self.change {
            Change::Write { before, after, .. } => {
                (before.as_ref().map_or("", |b| b.text.as_str()), after)
            }
            Change::Delete { before, .. } => (&before.text, ""),
            Change::Folder { .. } => ("", ""),
        }
    }

    /// The line diff of the change (empty for folders and no-op writes).
    pub fn diff(&self) -> TextDiff {
        let (before, after) = self.texts();
        TextDiff::new(before, after)
    }

    /// Whether applying would change nothing on disk.
    pub fn is_noop(&self) -> bool {
        match &self.change {
            Change::Write {
                before: Some(before),
                after,
                ..
            } => before.text == *after,
            Change::Write { before: None, .. } | Change::Delete { .. } => false,
            Change::Folder { path } => path.abs().is_dir(),
        }
    }

    /// A short human description: "update Projects/Plan.md", "create Inbox/New.md".
    pub fn describe(&self) -> String {
        let verb = match &self.change {
            Change::Write { before: None, .. } => "create",
            Change::Write { .. } => "update",
            Change::Delete { .. } => "move to .trash",
            Change::Folder { .. } => "create folder",
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
        })
    }
}

/// What apply did, for the tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub output: ToolOutput,
    pub added: u64,
    pub removed: u64,
}

impl Workspace {
    /// Carry out `plan`. With `accepted`, only the hunks flagged true (one flag per hunk of
    /// [`Plan::diff`]) are applied; the result lists which were.
    pub fn apply(&self, plan: &Plan, accepted: Option<&[bool]>) -> Result<Applied, ToolError> {
        let mut out = plan.extra.clone();
        out.insert("path".into(), json!(plan.path().rel()));
        let (added, removed) = match &plan.change {
            Change::Write {
                path,
                before: None,
                after,
            } => {
                let text = match accepted {
                    Some(flags) if !flags.iter().all(|f| *f) => {
                        let diff = plan.diff();
                        record_hunks(&mut out, flags);
                        apply_hunks("", after, &diff, flags)
                    }
                    _ => after.clone(),
                };
                let fingerprint = note_io::create_note(path, &text, false).map_err(note_error)?;
                self.after_write(WriteRecord {
                    tool: &plan.tool,
                    rel: path.rel(),
                    before: None,
                    after: Some(&text),
                    before_rev: None,
                    after_rev: Some(fingerprint.to_revision_string()),
                })?;
                out.insert("changed".into(), json!(true));
                out.insert("revision".into(), json!(fingerprint.to_revision_string()));
                super::line_stats("", &text)
            }
            Change::Write {
                path,
                before: Some(before),
                after,
            } => {
                let wanted = match accepted {
                    Some(flags) if !flags.iter().all(|f| *f) => {
                        let diff = plan.diff();
                        record_hunks(&mut out, flags);
                        apply_hunks(&before.text, after, &diff, flags)
                    }
                    _ => after.clone(),
                };
                let current = read_text(path)?;
                // Changed on disk after the plan: re-base the change onto what is there now.
                let text = if current.fingerprint.matches_content(&before.fingerprint) {
                    wanted
                } else {
                    let merged = merge3(&before.text, &current.text, &wanted).map_err(|conflict| {
                        ToolError::Invalid(format!(
                            "`{}` changed on disk while this change waited for approval, and both touch the same lines ({conflict}); nothing was written. Read the note again and redo the change",
                            path.rel()
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
                    (0, 0)
                } else {
                    let fingerprint = note_io::write_note(
                        path,
                        &text,
                        &current.format,
                        Some(&current.fingerprint),
                    )
                    .map_err(note_error)?;
                    self.after_write(WriteRecord {
                        tool: &plan.tool,
                        rel: path.rel(),
                        before: Some(&current.text),
                        after: Some(&text),
                        before_rev: Some(current.fingerprint.to_revision_string()),
                        after_rev: Some(fingerprint.to_revision_string()),
                    })?;
                    let (added, removed) = super::line_stats(&current.text, &text);
                    out.insert("changed".into(), json!(true));
                    // Line counts, unless the tool reports something else under these names
                    // (manage_tags lists the tags it added and removed).
                    out.entry("added").or_insert(json!(added));
                    out.entry("removed").or_insert(json!(removed));
                    out.insert("revision".into(), json!(fingerprint.to_revision_string()));
                    (added, removed)
                }
            }
            Change::Delete { path, before } => {
                let current = read_text(path)?;
                if !current.fingerprint.matches_content(&before.fingerprint) {
                    return Err(ToolError::Invalid(format!(
                        "`{}` changed on disk since the deletion was proposed; it was left in place. Read it again if it should still go",
                        path.rel()
                    )));
                }
                let moved_to = self.move_to_trash(path)?;
                self.after_write(WriteRecord {
                    tool: &plan.tool,
                    rel: path.rel(),
                    before: Some(&current.text),
                    after: None,
                    before_rev: Some(current.fingerprint.to_revision_string()),
                    after_rev: None,
                })?;
                out.insert("moved_to".into(), json!(moved_to));
                super::line_stats(&current.text, "")
            }
            Change::Folder { path } => {
                let created = super::notebooks::create_folders(self, path)?;
                out.insert("created".into(), json!(!created.is_empty()));
                out.insert("created_folders".into(), json!(created));
                (0, 0)
            }
        };
        Ok(Applied {
            output: ToolOutput::json(Value::Object(out))?,
            added,
            removed,
        })
    }

    /// Move a note into `.trash/` under the same relative path (numbered when an earlier deletion
    /// of the same path is there); returns the trash path.
    fn move_to_trash(&self, path: &VaultPath) -> Result<String, ToolError> {
        let trash_root = self.vault.root().join(".trash");
        let mut target_rel = path.rel().to_string();
        let mut n = 1;
        // Never overwrite an earlier deletion of a note with the same path.
        while trash_root.join(&target_rel).exists() {
            let stem = path.rel().strip_suffix(".md").unwrap_or(path.rel());
            target_rel = format!("{stem} ({n}).md");
            n += 1;
        }
        let target = trash_root.join(&target_rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| internal(format!("cannot create {}: {e}", parent.display())))?;
        }
        // A rename inside one vault: atomic, and the content is never rewritten.
        std::fs::rename(path.abs(), &target).map_err(|e| {
            internal(format!(
                "cannot move {} to {}: {e}",
                path.rel(),
                target.display()
            ))
        })?;
        Ok(format!(".trash/{target_rel}"))
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
