//! The tasks family: list_tasks, toggle_task.
//!
//! Tasks are the vault's `- [ ]` list items (`vault::markdown::tasks`), listed from the index's
//! `tasks` table. Toggling one is an anchored edit: the caller names the note, the line and the
//! task's text as list_tasks gave them, and the change is refused when that line no longer holds
//! that task, so a note edited since the listing is never changed in the wrong place.

use super::{Body, Change, Plan, Workspace, internal, read_text, tool};
use crate::index::{TaskFilter, TaskState};
use crate::tools::{Annotations, Tool, ToolError, ToolOutput};
use crate::vault::Access;
use crate::vault::markdown::{self, TaskStatus};
use crate::vault::note_io;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, json};
use std::sync::Arc;

/// Tasks per page unless the caller asks for another number, and the most it may ask for.
const DEFAULT_LIMIT: u32 = 100;
const MAX_LIMIT: u32 = 500;

pub(super) fn tools(ws: &Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ws,
            "list_tasks",
            "List tasks",
            "List the vault's tasks (`- [ ]` items of any list, nested or quoted, never in code), those with a \
             due date first (soonest first), then by path and line. Each has `path`, `line`, `text` (without the \
             checkbox and date fields), `status` (`open`, `done`, `in_progress`, `cancelled`, or the custom \
             status character), `done` and `due` (YYYY-MM-DD from the Tasks plugin's `📅` or Dataview's \
             `[due:: …]`). `state` is `open` (default: not done, not cancelled), `done` (done or cancelled) or \
             `all`; filter by `due_before` (YYYY-MM-DD, exclusive), `folder` and `tag` (the task's line or its \
             note's frontmatter `tags`, nested tags included). Paged: pass `next_offset` back as `offset` for more.",
            Annotations::READ_ONLY,
            Body::Read(list_tasks),
        ),
        tool(
            ws,
            "toggle_task",
            "Check off a task",
            "Change one task's status: by default an open task becomes done (`[x]`) and a done one open \
             (`[ ]`); pass `status` (`open`, `done`, `in_progress`, `cancelled`, or one character) to set it. \
             Name the task by `note`, `line` and `text` exactly as list_tasks gave them: if that line no longer \
             holds that task (the note changed), nothing is written and the error says to list the tasks \
             again. Only the character between the brackets changes.",
            Annotations::DESTRUCTIVE,
            Body::Write(toggle_task),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// list_tasks

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListTasksArgs {
    /// `open` (default), `done` or `all`.
    #[serde(default)]
    state: Option<String>,
    /// Only tasks due before this day, YYYY-MM-DD (not included).
    #[serde(default)]
    due_before: Option<String>,
    /// Only notes inside this folder (vault-relative).
    #[serde(default)]
    folder: Option<String>,
    /// Only tasks with this tag in their line or their note's frontmatter `tags` (`#` optional;
    /// nested tags included).
    #[serde(default)]
    tag: Option<String>,
    /// At most this many tasks, 1 to 500 (default 100).
    #[serde(default)]
    limit: Option<u32>,
    /// Skip this many tasks (the `next_offset` of the previous page).
    #[serde(default)]
    offset: Option<u32>,
}

fn list_tasks(ws: &Workspace, args: ListTasksArgs) -> Result<ToolOutput, ToolError> {
    let limit = super::notes::bounded(args.limit, DEFAULT_LIMIT, 1, MAX_LIMIT, "limit")?;
    let state = match args.state.as_deref().unwrap_or("open") {
        "open" => TaskState::Open,
        "done" => TaskState::Done,
        "all" => TaskState::All,
        other => {
            return Err(ToolError::Invalid(format!(
                "`state` is `open`, `done` or `all`, not `{other}`"
            )));
        }
    };
    if let Some(day) = &args.due_before
        && crate::time::parse_day(day).is_none()
    {
        return Err(ToolError::Invalid(format!(
            "`due_before` is a date as YYYY-MM-DD, not `{day}`"
        )));
    }
    let folder = match args.folder.as_deref().map(|f| f.trim_matches('/')) {
        Some(f) if !f.is_empty() => Some(ws.resolve(f, Access::Read)?.rel().to_string()),
        _ => None,
    };
    let offset = args.offset.unwrap_or(0) as usize;
    let page = ws
        .index()
        .tasks(&TaskFilter {
            state,
            due_before: args.due_before,
            folder,
            tag: args.tag,
            offset,
            limit,
        })
        .map_err(internal)?;
    let shown = page.tasks.len();
    let mut out = json!({
        "tasks": page.tasks,
        "total": page.total,
        "offset": offset,
    });
    if offset + shown < page.total {
        out["next_offset"] = json!(offset + shown);
    }
    if !ws.index_synced() {
        out["index_behind"] = json!(true);
    }
    ToolOutput::json(out)
}

// ---------------------------------------------------------------------------------------------
// toggle_task

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ToggleTaskArgs {
    /// The note's vault-relative path (as list_tasks gave it), or a title, alias or file name when
    /// unambiguous.
    note: String,
    /// The task's 1-based line, as list_tasks gave it.
    line: u32,
    /// The task's text as list_tasks gave it: the anchor that proves the line still holds it.
    text: String,
    /// The new status: `open`, `done`, `in_progress`, `cancelled` or one character. Default: done
    /// for a task not done, open for a done one.
    #[serde(default)]
    status: Option<String>,
}

fn toggle_task(ws: &Workspace, args: ToggleTaskArgs) -> Result<Plan, ToolError> {
    let path = ws.resolve_note(&args.note, Access::Write)?;
    let current = read_text(&path)?;
    let status = args.status.as_deref().map(parse_status).transpose()?;
    let toggled = toggled(
        &current.text,
        path.rel(),
        args.line as usize,
        &args.text,
        status,
    )?;
    let mut extra = Map::new();
    extra.insert("line".into(), json!(args.line));
    extra.insert("status_before".into(), json!(toggled.before.name()));
    extra.insert("status".into(), json!(toggled.after.name()));
    Ok(Plan {
        tool: "toggle_task".into(),
        change: Change::Write {
            path,
            before: Some(current),
            after: toggled.text,
        },
        extra,
        // A change elsewhere in the note is re-based onto; one to this line conflicts and is
        // refused by the three-way merge.
        pinned: false,
    })
}

/// A note's text with one task's status changed.
struct Toggled {
    text: String,
    before: TaskStatus,
    after: TaskStatus,
}

/// `text` (the note `rel`) with the task on `line` set to `status` (by default: done when not
/// done, open when done), refused unless that line holds a task whose text is `anchor`.
fn toggled(
    text: &str,
    rel: &str,
    line: usize,
    anchor: &str,
    status: Option<TaskStatus>,
) -> Result<Toggled, ToolError> {
    let task = match markdown::tasks(text).into_iter().find(|t| t.line == line) {
        Some(task) if task.text == anchor.trim() => task,
        Some(task) => {
            return Err(ToolError::Invalid(format!(
                "line {line} of `{rel}` now holds the task `{}`, not `{anchor}`; nothing was written: list the tasks again (list_tasks) and use the line given there",
                task.text
            )));
        }
        None => {
            return Err(ToolError::Invalid(format!(
                "line {line} of `{rel}` holds no task now; nothing was written: list the tasks again (list_tasks) and use the line given there"
            )));
        }
    };
    let after = match status {
        Some(status) => status,
        None if task.status.is_done() => TaskStatus::Open,
        None => TaskStatus::Done,
    };
    Ok(Toggled {
        text: markdown::set_task_status(text, task.checkbox.clone(), after.mark()),
        before: task.status,
        after,
    })
}

/// What the app's tasks view asks of the workspace.
impl Workspace {
    /// The tasks `filter` asks for, from the index.
    pub fn list_tasks(&self, filter: &TaskFilter) -> Result<crate::index::TaskPage, ToolError> {
        self.index().tasks(filter).map_err(internal)
    }

    /// The person checked a task off (or opened it again) in the app: the note `rel` with the task
    /// on `line` toggled, written the way the person's saves are (atomic, refused if the note
    /// changed between this read and the write, a revision by the user). Refused unless that line
    /// still holds a task whose text is `anchor`.
    pub fn toggle_task_for_person(
        &self,
        rel: &str,
        line: usize,
        anchor: &str,
    ) -> Result<note_io::NoteText, ToolError> {
        let read = self.read_path(rel)?;
        let toggled = toggled(&read.text, rel, line, anchor, None)?;
        let saved = self.save_user_edit(rel, &read, &toggled.text, super::SavedBy::Person)?;
        // A toggle is a change the person asked for by name, not typing: hooks hear of it.
        self.published(&[rel.to_string()]);
        Ok(saved)
    }
}

/// A status the caller named; the characters that would end the checkbox or the line are refused.
fn parse_status(name: &str) -> Result<TaskStatus, ToolError> {
    match TaskStatus::from_name(name) {
        Some(TaskStatus::Other(c)) if c == ']' || c == '[' || c.is_control() => {
            Err(ToolError::Invalid(format!(
                "`{}` cannot stand between a task's brackets",
                c.escape_default()
            )))
        }
        Some(status) => Ok(status),
        None => Err(ToolError::Invalid(format!(
            "`status` is `open`, `done`, `in_progress`, `cancelled` or one character, not `{name}`"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_the_caller_names() {
        assert_eq!(parse_status("done"), Ok(TaskStatus::Done));
        assert_eq!(parse_status(">"), Ok(TaskStatus::Other('>')));
        assert_eq!(parse_status("X"), Ok(TaskStatus::Done));
        assert!(parse_status("]").is_err());
        assert!(parse_status("\n").is_err());
        assert!(parse_status("finished").is_err());
        for status in [
            TaskStatus::Open,
            TaskStatus::Done,
            TaskStatus::InProgress,
            TaskStatus::Cancelled,
        ] {
            assert_eq!(TaskStatus::from_char(status.mark()), status);
        }
    }
}
