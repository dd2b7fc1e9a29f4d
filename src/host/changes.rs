//! The person's own changes to the vault — a move from the file pane, the chat as a note
//! (`/save`) — planned here, shown in the banner like the agent's, applied here only when
//! approved, with the hunks kept. One kind ([`LocalChange`]), one apply path, typed results.

use super::core::Core;
use super::{ChangeRequest, HostEvent};
use crate::agent::export::{ExportScope, chat_markdown};
use crate::agent::{PermissionRequest, Proposal, ProposalFile};
use crate::tools::workspace::{Plan, Workspace};

/// What a local change is, for the app's answer to its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// The note `from` moved to `to` with the links to it.
    Move { from: String, to: String },
    /// The chat saved as a new note.
    ChatNote,
    /// An empty note created from the file pane.
    Create,
}

/// A planned change: what the banner shows, and the plan only the host can apply.
#[derive(Debug)]
pub struct LocalChange {
    pub kind: ChangeKind,
    /// The banner's question (its `id` is the app's to give).
    pub request: PermissionRequest,
    plan: Plan,
}

/// What an approved change wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedChange {
    /// The files written, the planned note first (a moved note at its new path).
    pub files_changed: Vec<String>,
    /// What could not follow the write (the index, the history): the write did happen.
    pub warning: Option<String>,
}

pub(super) fn plan(core: &Core, change: ChangeRequest) {
    let Some(ready) = core.ready() else { return };
    let ws = &ready.workspace;
    let (kind, planned) = match change {
        ChangeRequest::Move { from, to } => {
            let kind = ChangeKind::Move {
                from: from.clone(),
                to: to.clone(),
            };
            let planned = ws
                .plan_user_move(&from, &to)
                .map(|plan| move_change(kind.clone(), plan, &from, &to))
                .map_err(|e| format!("the note was not moved: {e}"));
            (kind, planned)
        }
        ChangeRequest::ChatNote { session, last } => {
            let planned = core
                .with_store(|store| chat_note(ws, store, &session, last))
                .unwrap_or_else(|| Err("the app database is not open".into()))
                .map_err(|e| format!("the chat was not saved: {e}"));
            (ChangeKind::ChatNote, planned)
        }
        ChangeRequest::Create { name } => return create(core, ws, &name),
    };
    core.tell(HostEvent::Planned {
        kind,
        result: planned.map(Box::new),
    });
}

fn move_change(kind: ChangeKind, plan: Plan, from: &str, to: &str) -> LocalChange {
    let request = question(
        &plan,
        "file-pane-move",
        "move_note",
        serde_json::json!({ "note": from, "to": to }),
        vec![from.to_string(), to.to_string()],
        "the links to the note are rewritten so that none breaks",
    );
    LocalChange {
        kind,
        request,
        plan,
    }
}

/// `/save`: the note of a stored session, planned for the banner.
fn chat_note(
    ws: &Workspace,
    store: &crate::store::Store,
    session: &str,
    last: bool,
) -> Result<LocalChange, String> {
    let summary = store
        .session(session)
        .map_err(|e| e.to_string())?
        .ok_or("its session is not stored")?;
    let conversation =
        crate::agent::load_conversation(store, session).map_err(|e| e.to_string())?;
    let scope = if last {
        ExportScope::LastReply
    } else {
        ExportScope::Session
    };
    let text = chat_markdown(&summary, &conversation, scope);
    let plan = crate::agent::export::plan_chat_note(ws, &summary, text, None)
        .map_err(|e| e.to_string())?;
    let path = plan.path().rel().to_string();
    let request = question(
        &plan,
        "save-chat",
        "create_note",
        serde_json::json!({ "path": path }),
        vec![path.clone()],
        "the chat is saved as a new note (/save)",
    );
    Ok(LocalChange {
        kind: ChangeKind::ChatNote,
        request,
        plan,
    })
}

/// The banner's question about `plan` (id 0: the app numbers its own questions).
fn question(
    plan: &Plan,
    call_id: &str,
    tool: &str,
    input: serde_json::Value,
    paths: Vec<String>,
    reason: &str,
) -> PermissionRequest {
    PermissionRequest {
        id: 0,
        call_id: call_id.into(),
        tool: tool.into(),
        input,
        paths,
        proposal: Some(Proposal {
            summary: plan.describe(),
            path: plan.path().rel().to_string(),
            diff: plan.diff(),
            files: ProposalFile::of_plan(plan),
        }),
        offer_session: false,
        offer_always: false,
        reason: reason.into(),
    }
}

/// A new empty note: made at once (the person asked for it by name), recorded as theirs.
fn create(core: &Core, ws: &Workspace, name: &str) {
    let result = ws
        .create_user_note(name)
        .map(|(path, _)| AppliedChange {
            files_changed: vec![path],
            warning: None,
        })
        .map_err(|e| e.to_string());
    core.tell(HostEvent::Applied {
        kind: ChangeKind::Create,
        result,
    });
}

/// Apply an approved change with the hunks kept.
pub(super) fn apply(core: &Core, change: LocalChange, hunks: Option<Vec<bool>>) {
    let Some(ready) = core.ready() else { return };
    let result = ready
        .workspace
        .apply(&change.plan, hunks.as_deref())
        .map(|applied| AppliedChange {
            files_changed: applied.written.files_changed,
            warning: (!applied.written.warnings.is_empty())
                .then(|| applied.written.warnings.join("; ")),
        })
        .map_err(|e| e.to_string());
    core.tell(HostEvent::Applied {
        kind: change.kind,
        result,
    });
}
