//! Listing the vault's tasks from the `tasks` table that sync keeps (see schema.sql).

use super::{Index, IndexError};
use rusqlite::types::Value;
use serde::Serialize;

/// Which tasks by their status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskState {
    /// Still to do: open, in progress, or a custom status (not done, not cancelled).
    #[default]
    Open,
    /// No longer to do: done or cancelled.
    Done,
    All,
}

/// What to list: every filter is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    pub state: TaskState,
    /// Only tasks due strictly before this `YYYY-MM-DD` date (tasks without a due date are left out).
    pub due_before: Option<String>,
    /// Only notes in this folder (vault-relative, without a trailing `/`; "" is the whole vault).
    pub folder: Option<String>,
    /// Only tasks tagged with this (in the task's own line or the note's frontmatter `tags`), or
    /// with a tag nested under it; case-insensitive, `#` optional.
    pub tag: Option<String>,
    /// Skip this many tasks of the sorted list.
    pub offset: usize,
    /// At most this many tasks.
    pub limit: usize,
}

/// One task, as `vaultchat tasks --json` and list_tasks give it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskRow {
    pub path: String,
    pub line: usize,
    pub text: String,
    /// `open`, `done`, `in_progress`, `cancelled`, else the status character.
    pub status: String,
    pub done: bool,
    pub due: Option<String>,
}

/// A page of tasks and how many match in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskPage {
    pub tasks: Vec<TaskRow>,
    pub total: usize,
}

impl Index {
    /// The tasks `filter` asks for: those with a due date first, soonest first, then by path and
    /// line.
    pub fn tasks(&self, filter: &TaskFilter) -> Result<TaskPage, IndexError> {
        let mut conditions: Vec<String> = Vec::new();
        let mut params: Vec<Value> = Vec::new();
        let param = |value: String, params: &mut Vec<Value>| {
            params.push(Value::Text(value));
            format!("?{}", params.len())
        };
        match filter.state {
            TaskState::Open => conditions.push("t.status NOT IN ('done', 'cancelled')".into()),
            TaskState::Done => conditions.push("t.status IN ('done', 'cancelled')".into()),
            TaskState::All => {}
        }
        if let Some(day) = &filter.due_before {
            let p = param(day.clone(), &mut params);
            conditions.push(format!("t.due < {p}"));
        }
        if let Some(folder) = filter.folder.as_deref().map(|f| f.trim_matches('/'))
            && !folder.is_empty()
        {
            let (lo, hi) = super::graph::folder_range(folder);
            params.extend([lo, hi]);
            let (lo, hi) = (params.len() - 1, params.len());
            conditions.push(format!("n.path >= ?{lo} AND n.path < ?{hi}"));
        }
        if let Some(tag) = &filter.tag {
            let tag = tag.trim().trim_start_matches('#').to_lowercase();
            let own = param(format!("{tag} "), &mut params);
            let nested = param(format!("{tag}/"), &mut params);
            // `tags` holds each tag followed by a space: ` a b/c ` once a space is put in front.
            conditions.push(format!(
                "(instr(' ' || t.tags, ' ' || {own}) > 0 OR instr(' ' || t.tags, ' ' || {nested}) > 0)"
            ));
        }
        let filter_sql = if conditions.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conditions.join(" AND "))
        };
        let from = "FROM tasks t JOIN notes n ON n.id = t.note_id";
        let filter_params = params.clone();
        let as_sql = |n: usize| Value::Integer(super::graph::to_i64(n));
        params.push(as_sql(filter.limit));
        params.push(as_sql(filter.offset));
        let sql = format!(
            "SELECT n.path, t.line, t.text, t.status, t.due {from} {filter_sql} \
             ORDER BY t.due IS NULL, t.due, n.path, t.line LIMIT ?{} OFFSET ?{}",
            params.len() - 1,
            params.len()
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(params.iter()), |r| {
            let status: String = r.get(3)?;
            Ok(TaskRow {
                path: r.get(0)?,
                line: usize::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                text: r.get(2)?,
                done: status == "done",
                status,
                due: r.get(4)?,
            })
        })?;
        let tasks: Vec<TaskRow> = rows.collect::<Result<_, _>>()?;
        // A page that is not full ends the list: its total needs no second pass over the rows
        // (the CLI asks for every task, so it never counts).
        let total = if tasks.len() < filter.limit && (filter.offset == 0 || !tasks.is_empty()) {
            filter.offset + tasks.len()
        } else {
            let counted: i64 = self.conn.query_row(
                &format!("SELECT count(*) {from} {filter_sql}"),
                rusqlite::params_from_iter(filter_params.iter()),
                |r| r.get(0),
            )?;
            usize::try_from(counted).unwrap_or(0)
        };
        Ok(TaskPage { tasks, total })
    }
}
