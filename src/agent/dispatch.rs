//! One tool call: refuse what this turn does not offer, decide by the permission cascade, show
//! writes as a diff and wait for the person's answer, then run (or apply) it.

use super::{
    Agent, AgentEvent, CallDecision, EditRecord, EditStatus, EditorEditResult, NoteContext, Op,
    PermissionRequest, Proposal, ToolCallRecord,
};
use crate::permission::{Answer, CallFacts, Decision, RuleScope, decide, rule_for_answer};
use crate::tools::session::{EditorState, run_session_tool};
use crate::tools::workspace::{Change, Plan};
use crate::tools::{Tier, ToolError, ToolImage, ToolSpec};
use crate::vault::Access;
use crate::vault::diff::apply_hunks;
use crate::vault::note_io;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

/// What a turn remembers between its tool calls.
#[derive(Debug, Default)]
pub(super) struct TurnState {
    /// A tool from an MCP server ran in this turn: its output may carry instructions, so later
    /// writes ask even when a rule would allow them.
    pub tainted: bool,
}

/// The end of one call.
pub(super) struct Dispatched {
    pub record: ToolCallRecord,
    pub edit: Option<EditRecord>,
    /// The person interrupted the turn while this call waited.
    pub interrupted: bool,
    /// Images the tool returned, sent to the model with the result's text.
    pub images: Vec<ToolImage>,
}

/// How the person answered, or that they interrupted.
enum Answered {
    Yes {
        decision: CallDecision,
        hunks: Option<Vec<bool>>,
    },
    No {
        reason: Option<String>,
    },
    Interrupted,
}

impl Agent {
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn dispatch(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        offered: &[ToolSpec],
        context: &mut NoteContext,
        state: &mut TurnState,
        ops: &mut mpsc::Receiver<Op>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> Dispatched {
        let _ = events.send(AgentEvent::ToolCallStarted {
            id: id.to_string(),
            name: name.to_string(),
            input: input.clone(),
        });
        let mut record = ToolCallRecord {
            id: id.to_string(),
            name: name.to_string(),
            input: input.clone(),
            is_error: true,
            decision: CallDecision::Refused,
            result: String::new(),
        };
        let done = |record, edit, interrupted| Dispatched {
            record,
            edit,
            interrupted,
            images: Vec::new(),
        };

        // Only what this turn offered may run, whatever the registry holds.
        let Some(spec) = offered.iter().find(|t| t.name == name) else {
            record.result = format!(
                "the tool `{name}` is not available in this turn; the tools you can call are: {}",
                offered
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return done(record, None, false);
        };
        let writes = !spec.annotations.read_only_hint;
        let facts = self.facts(spec, input, context);
        let decision = decide(&facts, &self.rules, state.tainted);
        tracing::debug!(tool = name, ?decision, "permission");
        let edit_for = |status, added, removed, path: Option<&str>| {
            writes.then(|| EditRecord {
                tool: name.to_string(),
                path: path
                    .map(str::to_string)
                    .or_else(|| facts.paths.first().cloned())
                    .unwrap_or_default(),
                status,
                added,
                removed,
            })
        };
        let (offer_session, offer_always, ask_reason) = match decision {
            Decision::Deny { reason } => {
                record.decision = if facts.path_refusal.is_some() {
                    CallDecision::Refused
                } else {
                    CallDecision::Denied
                };
                record.result = reason.clone();
                let edit = edit_for(EditStatus::Rejected, 0, 0, None);
                return done(record, edit, false);
            }
            Decision::Allow { .. } => (false, false, None),
            Decision::Ask {
                offer_always,
                offer_session,
            } => (
                offer_session,
                offer_always,
                Some(if state.tainted && writes {
                    "a tool from an MCP server ran earlier in this turn; its output could be steering this write".to_string()
                } else if spec.tier == Tier::Plugin {
                    format!(
                        "{name} comes from an MCP server; what a server says about its tools is not taken on trust"
                    )
                } else {
                    format!("{name} changes the vault")
                }),
            ),
        };

        // A write with a plan: compute the change, show it, apply what was accepted.
        let planned = if spec.tier == Tier::Session {
            Some(self.plan_session_edit(name, input, context).await)
        } else if writes {
            match self.registry.get(name).and_then(|t| t.plan(input.clone())) {
                Some(planning) => Some(planning.await),
                None => None,
            }
        } else {
            None
        };
        if let Some(planned) = planned {
            let plan = match planned
                .and_then(|plan| onto_editor_buffer(plan, context))
                .and_then(|plan| self.rebase_on_what_was_read(plan))
            {
                Ok(plan) => plan,
                Err(e) => {
                    record.result = e.to_string();
                    let edit = edit_for(EditStatus::Failed, 0, 0, None);
                    return done(record, edit, false);
                }
            };
            let path = plan.path().rel().to_string();
            let mut hunks = None;
            let mut asked = None;
            record.decision = CallDecision::Allowed;
            if let Some(reason) = ask_reason.filter(|_| !plan.is_noop()) {
                let request_id = self.next_request_id();
                asked = Some(request_id);
                let request = PermissionRequest {
                    id: request_id,
                    call_id: id.to_string(),
                    tool: name.to_string(),
                    input: input.clone(),
                    paths: facts.paths.clone(),
                    proposal: Some(Proposal {
                        summary: plan.describe(),
                        path: path.clone(),
                        diff: plan.diff(),
                    }),
                    offer_session,
                    offer_always,
                    reason,
                };
                match self.ask(request, &facts, ops, events).await {
                    Answered::Yes {
                        decision,
                        hunks: accepted,
                    } => {
                        record.decision = decision;
                        hunks = accepted;
                    }
                    Answered::No { reason } => {
                        record.decision = CallDecision::Denied;
                        record.result = declined(&reason);
                        let edit = edit_for(EditStatus::Rejected, 0, 0, Some(&path));
                        return done(record, edit, false);
                    }
                    Answered::Interrupted => {
                        record.decision = CallDecision::Denied;
                        record.result =
                            "not applied: the person interrupted the turn; nothing was written"
                                .into();
                        let edit = edit_for(EditStatus::Rejected, 0, 0, Some(&path));
                        return done(record, edit, true);
                    }
                }
            }
            if hunks.as_ref().is_some_and(|h| !h.iter().any(|a| *a)) {
                record.result =
                    "The person rejected every hunk of this change; nothing was written.".into();
                let edit = edit_for(EditStatus::Rejected, 0, 0, Some(&path));
                return done(record, edit, false);
            }
            if let Some(note) = context
                .note
                .as_mut()
                .filter(|n| n.in_editor && n.path == path)
                && let Change::Write {
                    before: Some(before),
                    after,
                    ..
                } = &plan.change
            {
                // The note is open in the editor: the edit goes to the buffer (one undo step)
                // and the app saves it; the result says what the editor really did.
                let diff = plan.diff();
                let text = match hunks.as_deref() {
                    Some(flags) => apply_hunks(&before.text, after, &diff, flags),
                    None => after.clone(),
                };
                let edit_id = asked.unwrap_or_else(|| self.next_request_id());
                let _ = events.send(AgentEvent::EditorEdit {
                    id: edit_id,
                    path: path.clone(),
                    before: before.text.clone(),
                    after: text.clone(),
                });
                let (result, interrupted) = self.wait_for_editor(edit_id, ops, events).await;
                match result {
                    Some(EditorEditResult::Applied { text: now, saved }) => {
                        let (added, removed) =
                            crate::tools::workspace::line_stats(&before.text, &now);
                        let mut result = serde_json::json!({
                            "path": path,
                            "applied_to": "editor",
                            "saved": saved.is_ok(),
                            "added": added,
                            "removed": removed,
                        });
                        if let Some(fields) = result.as_object_mut() {
                            if let Err(why) = &saved {
                                fields
                                    .insert("not_saved_because".into(), Value::String(why.clone()));
                            }
                            if now != text {
                                fields.insert(
                                    "merged_with_the_persons_typing".into(),
                                    Value::Bool(true),
                                );
                            }
                            if let Some(flags) = hunks.as_deref() {
                                crate::tools::workspace::record_hunks(fields, flags);
                            }
                        }
                        let chars = now.chars().count();
                        note.editor.selection = None;
                        note.editor.cursor = note.editor.cursor.min(chars);
                        note.editor.text = now.clone();
                        self.seen.insert(path.clone(), now);
                        record.is_error = false;
                        record.result = result.to_string();
                        let edit = edit_for(EditStatus::Applied, added, removed, Some(&path));
                        return done(record, edit, interrupted);
                    }
                    Some(EditorEditResult::Refused(why)) => {
                        record.result = format!("not applied: {why}; the note is unchanged");
                        let edit = edit_for(EditStatus::Failed, 0, 0, Some(&path));
                        return done(record, edit, interrupted);
                    }
                    None => {
                        record.result = "sent to the editor, but the turn was interrupted before the editor confirmed it; read the note to see whether the change is there".into();
                        let edit = edit_for(EditStatus::Failed, 0, 0, Some(&path));
                        return done(record, edit, true);
                    }
                }
            }
            let workspace = std::sync::Arc::clone(&self.workspace);
            let applied = tokio::task::spawn_blocking(move || {
                workspace.apply(&plan, hunks.as_deref()).map(|a| (a, plan))
            })
            .await
            .map_err(|e| ToolError::Internal(e.to_string()))
            .and_then(|r| r);
            return match applied {
                Ok((applied, plan)) => {
                    record.is_error = false;
                    record.result = applied.output.text.clone();
                    self.after_own_write(&plan, context);
                    let edit = edit_for(
                        EditStatus::Applied,
                        applied.added,
                        applied.removed,
                        Some(&path),
                    );
                    done(record, edit, false)
                }
                Err(e) => {
                    record.result = e.to_string();
                    let edit = edit_for(EditStatus::Failed, 0, 0, Some(&path));
                    done(record, edit, false)
                }
            };
        }

        // Everything else: ask if the cascade says so, then call.
        record.decision = CallDecision::Allowed;
        if let Some(reason) = ask_reason {
            let request = PermissionRequest {
                id: self.next_request_id(),
                call_id: id.to_string(),
                tool: name.to_string(),
                input: input.clone(),
                paths: facts.paths.clone(),
                proposal: None,
                offer_session,
                offer_always,
                reason,
            };
            match self.ask(request, &facts, ops, events).await {
                Answered::Yes { decision, .. } => record.decision = decision,
                Answered::No { reason } => {
                    record.decision = CallDecision::Denied;
                    record.result = declined(&reason);
                    return done(record, None, false);
                }
                Answered::Interrupted => {
                    record.decision = CallDecision::Denied;
                    record.result = "not run: the person interrupted the turn".into();
                    return done(record, None, true);
                }
            }
        }
        if spec.tier == Tier::Plugin {
            state.tainted = true;
        }
        let mut images = Vec::new();
        match self.registry.call(name, input.clone()).await {
            Ok(output) => {
                record.is_error = false;
                record.result = output.text;
                images = output.images;
                if name == "read_note" {
                    self.remember_reads(&facts.paths);
                }
            }
            Err(e) => {
                record.result = e.to_string();
            }
        }
        Dispatched {
            images,
            ..done(record, None, false)
        }
    }

    /// The facts the permission cascade decides on.
    fn facts(&self, spec: &ToolSpec, input: &Value, context: &NoteContext) -> CallFacts {
        let read_only = spec.annotations.read_only_hint;
        let mut paths = Vec::new();
        let mut path_refusal = None;
        if spec.tier == Tier::Session {
            paths.extend(context.note.as_ref().map(|n| n.path.clone()));
        } else if spec.tier == Tier::Workspace {
            let access = if read_only {
                Access::Read
            } else {
                Access::Write
            };
            for key in ["note", "path", "folder"] {
                let Some(value) = input.get(key).and_then(Value::as_str) else {
                    continue;
                };
                match self.workspace.target_path(value, access, key == "note") {
                    Ok(Some(rel)) => paths.push(rel),
                    Ok(None) => {}
                    Err(refusal) => path_refusal = Some(refusal),
                }
            }
        }
        CallFacts {
            tool: spec.name.clone(),
            paths,
            path_refusal,
            read_only,
            destructive: spec.annotations.destructive_hint,
            external: spec.tier == Tier::Plugin,
        }
    }

    /// Park the call until the person answers; remember the rule a session/always answer makes.
    async fn ask(
        &mut self,
        request: PermissionRequest,
        facts: &CallFacts,
        ops: &mut mpsc::Receiver<Op>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> Answered {
        let id = request.id;
        let (offer_session, offer_always) = (request.offer_session, request.offer_always);
        let _ = events.send(AgentEvent::PermissionRequested(request));
        loop {
            match ops.recv().await {
                Some(Op::Decision {
                    request,
                    answer,
                    hunks,
                }) if request == id => {
                    let decision = match &answer {
                        Answer::Deny { reason } => {
                            return Answered::No {
                                reason: reason.clone(),
                            };
                        }
                        Answer::Once => CallDecision::ApprovedOnce,
                        // An option that was not offered counts as once.
                        Answer::Session if !offer_session => CallDecision::ApprovedOnce,
                        Answer::Always { .. } if !offer_always => CallDecision::ApprovedOnce,
                        Answer::Session => CallDecision::ApprovedSession,
                        Answer::Always { .. } => CallDecision::ApprovedAlways,
                    };
                    if matches!(
                        decision,
                        CallDecision::ApprovedSession | CallDecision::ApprovedAlways
                    ) && let Some(rule) = rule_for_answer(facts, &answer)
                    {
                        if rule.scope == RuleScope::Always
                            && let Err(e) = self.log.store().add_rule(
                                self.log.vault_id(),
                                &rule.tool,
                                rule.path_glob.as_deref(),
                                "allow",
                                super::session::now_ms(),
                            )
                        {
                            let _ = events.send(AgentEvent::Notice(format!(
                                "the rule could not be saved ({e}); it holds for this session only"
                            )));
                        }
                        self.rules.rules.push(rule);
                    }
                    return Answered::Yes { decision, hunks };
                }
                // An answer to a request that is no longer waiting.
                Some(Op::Decision { .. } | Op::EditorApplied { .. }) => {}
                Some(Op::SetModel(model)) => self.settings.model = model,
                Some(Op::UserTurn { .. }) => {
                    let _ = events.send(AgentEvent::Notice(
                        "a turn is already running; answer the permission request or interrupt it first".into(),
                    ));
                }
                Some(Op::Interrupt) | None => return Answered::Interrupted,
                Some(Op::Shutdown) => {
                    self.shutting_down = true;
                    return Answered::Interrupted;
                }
            }
        }
    }

    /// A session tool's edit of the focused note, as a plan against the note on disk.
    async fn plan_session_edit(
        &self,
        name: &str,
        input: &Value,
        context: &NoteContext,
    ) -> Result<Plan, ToolError> {
        let Some(note) = &context.note else {
            return Err(ToolError::Invalid(format!(
                "`{name}` edits the note open in the editor, and no note is open"
            )));
        };
        let path = self.workspace.resolve(&note.path, Access::Write)?;
        let mut current = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || note_io::read_note(&path))
                .await
                .map_err(|e| ToolError::Internal(e.to_string()))?
                .map_err(|e| ToolError::Invalid(e.to_string()))?
        };
        // In the app the buffer, unsaved changes included, is the note.
        if note.in_editor {
            current.text = note.editor.text.clone();
        }
        let chars = current.text.chars().count();
        let state = EditorState {
            text: current.text.clone(),
            selection: note
                .editor
                .selection
                .clone()
                .map(|s| s.start.min(chars)..s.end.min(chars)),
            cursor: note.editor.cursor.min(chars),
        };
        let edit = run_session_tool(name, input.clone(), &state)?;
        Ok(Plan {
            tool: name.to_string(),
            change: Change::Write {
                path,
                before: Some(current),
                after: edit.new_text,
            },
            extra: Map::new(),
            pinned: false,
        })
    }

    /// A write planned against the note's current text, while the agent last read an older
    /// text: re-base it (three-way) so that the change the person never saw is kept.
    fn rebase_on_what_was_read(&self, plan: Plan) -> Result<Plan, ToolError> {
        let Change::Write {
            path,
            before: Some(current),
            ..
        } = &plan.change
        else {
            return Ok(plan);
        };
        match self.seen.get(path.rel()) {
            Some(read) if *read != current.text => plan.rebase(read, current),
            _ => Ok(plan),
        }
    }

    /// Remember notes as the agent read them.
    fn remember_reads(&mut self, paths: &[String]) {
        for rel in paths {
            if let Ok(path) = self.workspace.resolve(rel, Access::Read)
                && let Ok(note) = note_io::read_note(&path)
            {
                self.seen.insert(rel.clone(), note.text);
            }
        }
    }

    /// After the agent's own write: it knows the new text, and the focused note's editor state
    /// follows the file.
    fn after_own_write(&mut self, plan: &Plan, context: &mut NoteContext) {
        let rel = plan.path().rel().to_string();
        match note_io::read_note(plan.path()) {
            Ok(note) => {
                if let Some(focused) = context.note.as_mut().filter(|n| n.path == rel) {
                    let chars = note.text.chars().count();
                    focused.editor.selection = None;
                    focused.editor.cursor = focused.editor.cursor.min(chars);
                    focused.editor.text = note.text.clone();
                }
                self.seen.insert(rel, note.text);
            }
            Err(_) => {
                self.seen.remove(&rel);
            }
        }
    }

    /// Wait for the editor's answer to edit `id`. Returns the answer (None when the turn was
    /// interrupted or the front end went away first) and whether the turn was interrupted.
    async fn wait_for_editor(
        &mut self,
        id: u64,
        ops: &mut mpsc::Receiver<Op>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> (Option<EditorEditResult>, bool) {
        loop {
            match ops.recv().await {
                Some(Op::EditorApplied {
                    id: answered,
                    result,
                }) if answered == id => return (Some(result), false),
                // Answers that are no longer awaited.
                Some(Op::EditorApplied { .. } | Op::Decision { .. }) => {}
                Some(Op::SetModel(model)) => self.settings.model = model,
                Some(Op::UserTurn { .. }) => {
                    let _ = events.send(AgentEvent::Notice(
                        "a turn is already running; wait for it or interrupt it first".into(),
                    ));
                }
                Some(Op::Interrupt) | None => return (None, true),
                Some(Op::Shutdown) => {
                    self.shutting_down = true;
                    return (None, true);
                }
            }
        }
    }

    fn next_request_id(&mut self) -> u64 {
        let id = self.next_request;
        self.next_request += 1;
        id
    }
}

/// A workspace write to the note open in the editor is planned against the file; re-base it onto
/// the buffer, which may hold unsaved changes, so that the diff shown is buffer → result.
fn onto_editor_buffer(plan: Plan, context: &NoteContext) -> Result<Plan, ToolError> {
    let Some(note) = context
        .note
        .as_ref()
        .filter(|n| n.in_editor && n.path == plan.path().rel())
    else {
        return Ok(plan);
    };
    let Change::Write {
        before: Some(disk), ..
    } = &plan.change
    else {
        return Ok(plan);
    };
    if disk.text == note.editor.text {
        return Ok(plan);
    }
    let mut buffer = disk.clone();
    buffer.text = note.editor.text.clone();
    let base = disk.text.clone();
    plan.rebase(&base, &buffer)
}

fn declined(reason: &Option<String>) -> String {
    match reason.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => {
            format!("The person declined this call and said: \"{reason}\". Nothing was changed.")
        }
        None => {
            "The person declined this call. Nothing was changed; do not retry it unchanged.".into()
        }
    }
}
