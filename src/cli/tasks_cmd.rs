//! `vaultchat tasks [--open|--done|--all] [--due-before DATE] [--folder F] [--tag T] [--json]`.

use super::{Context, Failure};
use crate::index::{Index, TaskFilter, TaskRow, TaskState};
use crate::vault::markdown::TaskStatus;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Tasks still to do: open, in progress or a custom status (the default).
    #[arg(long, conflicts_with_all = ["done", "all"])]
    pub open: bool,
    /// Tasks no longer to do: done or cancelled.
    #[arg(long, conflicts_with = "all")]
    pub done: bool,
    /// Every task, whatever its status.
    #[arg(long)]
    pub all: bool,
    /// Only tasks due before this day (YYYY-MM-DD, not included).
    #[arg(long, value_name = "DATE")]
    pub due_before: Option<String>,
    /// Only notes inside this folder (vault-relative).
    #[arg(long, value_name = "FOLDER")]
    pub folder: Option<String>,
    /// Only tasks tagged T (in the task's line or its note's frontmatter; nested tags included).
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Print a JSON array: [{"path", "line", "text", "status", "done", "due"}].
    #[arg(long)]
    pub json: bool,
}

impl TasksArgs {
    /// The filter these options ask for, or the reason they are wrong.
    fn filter(&self) -> Result<TaskFilter, Failure> {
        if let Some(day) = &self.due_before
            && crate::time::parse_day(day).is_none()
        {
            return Err(Failure::new(format!(
                "--due-before takes a date as YYYY-MM-DD, not {}",
                crate::quote::quoted(day)
            )));
        }
        let state = match (self.done, self.all) {
            (true, _) => TaskState::Done,
            (_, true) => TaskState::All,
            _ => TaskState::Open,
        };
        Ok(TaskFilter {
            state,
            due_before: self.due_before.clone(),
            folder: self.folder.clone(),
            tag: self.tag.clone(),
            offset: 0,
            limit: usize::MAX,
        })
    }
}

pub fn run(ctx: &Context, args: &TasksArgs) -> Result<ExitCode, Failure> {
    let filter = args.filter()?;
    let vault = ctx.vault()?;
    let mut index = Index::open(&ctx.paths.index_dir, &vault, &ctx.config.index)?;
    // Tasks are checked off all day: bring the index up to date first (a no-op refresh when
    // nothing changed; the first run builds it, with progress on a terminal).
    if index.has_synced()? {
        index.sync(&mut |_| {})?;
    } else {
        let report = super::index_cmd::sync_with_progress(&mut index)?;
        eprintln!("{}", super::index_cmd::summary(&report, index.db_path()));
    }
    let page = index.tasks(&filter)?;
    // Buffered: a vault's tasks can be hundreds of thousands of lines.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        serde_json::to_writer(&mut out, &page.tasks)?;
        writeln!(out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    for task in &page.tasks {
        writeln!(out, "{}", human_line(task))?;
    }
    if page.tasks.is_empty() {
        writeln!(out, "no tasks match")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `2026-12-03  [ ] Pay rent  Home/Bills.md:4`: the due day (or blanks), the checkbox as written
/// in Markdown, the text and where it is. Text and path are the vault's: escaped.
fn human_line(task: &TaskRow) -> String {
    let mark = TaskStatus::from_name(&task.status).map_or(' ', TaskStatus::mark);
    format!(
        "{:<10}  [{}] {}  {}:{}",
        task.due.as_deref().unwrap_or(""),
        crate::quote::terminal(mark.encode_utf8(&mut [0; 4])),
        crate::quote::terminal(&task.text),
        crate::quote::terminal(&task.path),
        task.line
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_line_cannot_write_escapes() {
        let task = TaskRow {
            path: "a\u{1b}[2J.md".into(),
            line: 3,
            text: "pay\rrent".into(),
            status: "open".into(),
            done: false,
            due: Some("2026-12-03".into()),
        };
        assert_eq!(
            human_line(&task),
            "2026-12-03  [ ] pay\\u{d}rent  a\\u{1b}[2J.md:3"
        );
    }
}
