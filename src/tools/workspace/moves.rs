//! `move_note`: move or rename a note and rewrite every link to it, as one change of many files.
//!
//! Planning reads every note of the vault and asks [`crate::vault::relink`] which links would
//! resolve differently after the move; the plan holds each changed note's text before and after,
//! the moved note first. Applying it is all or nothing across files: see [`super::move_apply`].

use super::{Body, Change, Plan, Workspace, read_text, tool};
use crate::tools::{Annotations, Tool, ToolError};
use crate::vault::note_io::NoteText;
use crate::vault::relink::{self, LinkCounts, Move};
use crate::vault::{Access, VaultPath, walk};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, json};
use std::sync::Arc;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![tool(
        ws,
        "move_note",
        "Move or rename a note",
        "Move or rename a note and rewrite every link to it across the vault, so none breaks: \
         `[[Note]]`, `[[Note|alias]]`, `[[Note#Heading]]`, `![[embeds]]` and relative Markdown links \
         `[x](path.md)`, keeping headings and aliases and writing the shortest form that is unambiguous \
         (the bare name when no other note has it, else the path). `note` is a path or an unambiguous \
         title; `to` is the new vault-relative path (`.md` added when missing; missing folders are \
         created). All files change or none. Returns the files changed and the links rewritten per form.",
        Annotations::DESTRUCTIVE,
        Body::Write(move_note),
    )]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MoveNoteArgs {
    /// The note to move: a vault-relative path, or a title, alias or file name when unambiguous.
    note: String,
    /// Its new vault-relative path, e.g. `Archive/2024/Old plan.md`; must not exist yet.
    to: String,
}

/// A move of one note with the link fixes it needs in every note.
#[derive(Debug, Clone)]
pub struct MovePlan {
    pub from: VaultPath,
    pub to: VaultPath,
    /// The moved note first (its `path` is where it is now, `from`), then every other note whose
    /// links change, sorted by path.
    pub files: Vec<FileEdit>,
    /// The links to the moved note that are rewritten, per form.
    pub counts: LinkCounts,
    /// Other links rewritten so that they keep their meaning (made ambiguous by the new name, or
    /// relative links of the moved note).
    pub other_links: usize,
}

/// One note's text before and after a move.
#[derive(Debug, Clone)]
pub struct FileEdit {
    pub path: VaultPath,
    pub before: NoteText,
    pub after: String,
}

impl MovePlan {
    /// The vault-relative path a file of the plan has after the move.
    pub fn rel_after<'a>(&'a self, edit: &'a FileEdit) -> &'a str {
        if edit.path.rel() == self.from.rel() {
            self.to.rel()
        } else {
            edit.path.rel()
        }
    }
}

fn move_note(ws: &Workspace, args: MoveNoteArgs) -> Result<Plan, ToolError> {
    let from = ws.resolve_note(&args.note, Access::Write)?;
    let to_rel = super::notes::note_path(&args.to)?;
    if !from.rel().to_ascii_lowercase().ends_with(".md") {
        return Err(ToolError::Invalid(format!(
            "`{}` is not a Markdown note; move_note moves notes (`.md`)",
            from.rel()
        )));
    }
    let to = ws.resolve(&to_rel, Access::Write)?;
    if to.rel() == from.rel() {
        return Err(ToolError::Invalid(format!(
            "`{}` is already at that path; nothing to move",
            from.rel()
        )));
    }
    if to.abs().exists() {
        return Err(ToolError::Invalid(format!(
            "`{}` already exists and was left as it is; choose another path (move_note never replaces a note)",
            to.rel()
        )));
    }
    plan_move(ws, from, to)
}

/// The plan for moving `from` to `to` (both checked for writing; `to` free).
pub(super) fn plan_move(ws: &Workspace, from: VaultPath, to: VaultPath) -> Result<Plan, ToolError> {
    let mut before: Vec<String> = walk::walk(ws.vault.root(), &Default::default())
        .notes
        .into_iter()
        .map(|n| n.rel)
        .collect();
    before.sort();
    let mut after: Vec<String> = before
        .iter()
        .filter(|p| *p != from.rel())
        .cloned()
        .chain([to.rel().to_string()])
        .collect();
    after.sort();
    let mv = Move {
        from: from.rel(),
        to: to.rel(),
        before: &before,
        after: &after,
    };
    let moved = read_text(&from)?;
    let mut counts = LinkCounts::default();
    let mut other_links = 0;
    let moved_after = match relink::relink(&moved.text, from.rel(), &mv) {
        Some(fixed) => {
            counts.add(&fixed.to_moved);
            other_links += fixed.others;
            fixed.text
        }
        None => moved.text.clone(),
    };
    let mut files = vec![FileEdit {
        path: from.clone(),
        before: moved,
        after: moved_after,
    }];
    for rel in before.iter().filter(|p| *p != from.rel()) {
        let Ok(path) = ws.resolve(rel, Access::Read) else {
            continue;
        };
        // A note that cannot be read as text (not UTF-8) has no links this tool could rewrite.
        let Ok(note) = read_text(&path) else {
            continue;
        };
        let Some(fixed) = relink::relink(&note.text, rel, &mv) else {
            continue;
        };
        counts.add(&fixed.to_moved);
        other_links += fixed.others;
        files.push(FileEdit {
            path: ws.resolve(rel, Access::Write)?,
            before: note,
            after: fixed.text,
        });
    }
    let mut extra = Map::new();
    extra.insert("from".into(), json!(from.rel()));
    extra.insert("to".into(), json!(to.rel()));
    Ok(Plan {
        tool: "move_note".into(),
        change: Change::Move(Box::new(MovePlan {
            from,
            to,
            files,
            counts,
            other_links,
        })),
        extra,
        pinned: false,
    })
}

impl Workspace {
    /// The person's move from the file pane: the same plan the tool makes, for the banner.
    pub fn plan_user_move(&self, note: &str, to: &str) -> Result<Plan, ToolError> {
        move_note(
            self,
            MoveNoteArgs {
                note: note.to_string(),
                to: to.to_string(),
            },
        )
    }
}
