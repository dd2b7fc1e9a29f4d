//! The tasks view's requests: the vault's open tasks, and checking one off as the person's own
//! save.

use super::HostEvent;
use super::core::Core;
use crate::index::{TaskFilter, TaskState};

/// The most tasks the view is sent at once (it says how many there are in all).
const VIEW_LIMIT: usize = 2_000;

pub(super) fn list(core: &Core) {
    let Some(ready) = core.ready() else { return };
    let filter = TaskFilter {
        state: TaskState::Open,
        limit: VIEW_LIMIT,
        ..TaskFilter::default()
    };
    core.tell(match ready.workspace.list_tasks(&filter) {
        Ok(page) => HostEvent::Tasks {
            tasks: page.tasks,
            total: page.total,
        },
        Err(e) => HostEvent::Error(format!("the tasks cannot be listed: {e}")),
    });
}

/// Toggle the task on `line` of `path`, refused unless that line still holds `text`; written
/// through the workspace's save of the person's edits (atomic, a revision by the user).
pub(super) fn toggle(core: &Core, path: String, line: usize, text: &str) {
    let Some(ready) = core.ready() else { return };
    let result = ready
        .workspace
        .toggle_task_for_person(&path, line, text)
        .map_err(|e| e.to_string());
    core.tell(HostEvent::TaskToggled { path, result });
}
