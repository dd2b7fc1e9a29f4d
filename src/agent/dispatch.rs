//! One tool call, in stages: refuse what this turn does not offer → decide by the permission
//! cascade → plan a write → ask the person (showing the diff) → apply the write to the editor or
//! to disk, or call the tool. Every wait races the op inbox, so Esc ends it at once.

use super::inbox::{BUSY, Inbox, WaitState};
use super::{
    Agent, AgentEvent, CallDecision, EditRecord, EditStatus, EditorEditResult, NoteContext, Op,
    PermissionRequest, Proposal, ToolCallRecord,
};
use crate::permission::{Answer, CallFacts, Decision, RuleScope, decide, rule_for_answer};
use crate::text::diff::apply_hunks;
use crate::tools::session::{EditorState, run_session_tool};
use crate::tools::workspace::{Change, Plan};
use crate::tools::{Tier, ToolError, ToolImage, ToolSpec};
use crate::vault::note_io::{self, NoteText};
use crate::vault::{Access, VaultPath};
use serde_json::{Map, Value};

/// What a turn remembers between its tool calls.
#[derive(Debug, Default)]
pub(super) struct TurnState {
    /// A tool from an MCP server ran in this turn: its output may carry instructions, so later
    /// writes ask even when a rule would allow them.
    pub tainted: bool,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Call<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub input: &'a Value,
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

/// What the cascade said about a call that was not refused outright.
enum Gate {
    /// Stop here: the record's decision and the result the model gets.
    Stop(CallDecision, String),
    /// Go on, asking the person first when `Some`.
    Go(Option<AskOffer>),
}

/// The question to put to the person.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AskOffer {
    offer_session: bool,
    offer_always: bool,
    /// Why it asks.
    reason: String,
}

/// One call on its way through the stages.
struct InFlight<'a> {
    call: Call<'a>,
    spec: &'a ToolSpec,
    facts: CallFacts,
    record: ToolCallRecord,
}

impl InFlight<'_> {
    fn writes(&self) -> bool {
        !self.spec.annotations.read_only_hint
    }

    /// The edit record of a write (`None` for a call that does not write).
    fn edit(
        &self,
        status: EditStatus,
        added: u64,
        removed: u64,
        path: Option<&str>,
    ) -> Option<EditRecord> {
        self.writes().then(|| EditRecord {
            tool: self.call.name.to_string(),
            path: path
                .map(str::to_string)
                .or_else(|| self.facts.paths.first().cloned())
                .unwrap_or_default(),
            status,
            added,
            removed,
        })
    }

    /// The call ends with `result`; `edit` says what happened to a write.
    fn end(
        mut self,
        result: impl Into<String>,
        edit: Option<(EditStatus, Option<&str>)>,
        interrupted: bool,
    ) -> Dispatched {
        self.record.result = result.into();
        let edit = edit.and_then(|(status, path)| self.edit(status, 0, 0, path));
        Dispatched {
            record: self.record,
            edit,
            interrupted,
            images: Vec::new(),
        }
    }

    /// The call was denied (by the person, or by their interrupt).
    fn denied(
        mut self,
        result: impl Into<String>,
        path: Option<&str>,
        interrupted: bool,
    ) -> Dispatched {
        self.record.decision = CallDecision::Denied;
        self.end(result, Some((EditStatus::Rejected, path)), interrupted)
    }

    fn request(&self, id: u64, offer: AskOffer, proposal: Option<Proposal>) -> PermissionRequest {
        PermissionRequest {
            id,
            call_id: self.call.id.to_string(),
            tool: self.call.name.to_string(),
            input: self.call.input.clone(),
            paths: self.facts.paths.clone(),
            proposal,
            offer_session: offer.offer_session,
            offer_always: offer.offer_always,
            reason: offer.reason,
        }
    }
}

impl Agent {
    /// Run one call through every stage.
    pub(super) async fn dispatch(
        &mut self,
        call: Call<'_>,
        offered: &[ToolSpec],
        context: &mut NoteContext,
        state: &mut TurnState,
        inbox: &mut Inbox<'_>,
    ) -> Dispatched {
        inbox.send(AgentEvent::ToolCallStarted {
            id: call.id.to_string(),
            name: call.name.to_string(),
            input: call.input.clone(),
        });
        let mut record = ToolCallRecord {
            id: call.id.to_string(),
            name: call.name.to_string(),
            input: call.input.clone(),
            is_error: true,
            decision: CallDecision::Refused,
            result: String::new(),
        };
        let spec = match refuse_unoffered(call.name, offered) {
            Ok(spec) => spec,
            Err(why) => {
                record.result = why;
                return Dispatched {
                    record,
                    edit: None,
                    interrupted: false,
                    images: Vec::new(),
                };
            }
        };
        let facts = self.facts(spec, call.input, context);
        let mut flight = InFlight {
            call,
            spec,
            facts,
            record,
        };
        let offer = match gate(&flight, &self.rules, state.tainted) {
            Gate::Stop(decision, why) => {
                flight.record.decision = decision;
                return flight.end(why, Some((EditStatus::Rejected, None)), false);
            }
            Gate::Go(offer) => offer,
        };
        match self.plan(&flight, context).await {
            Some(planned) => {
                self.run_planned(flight, planned, offer, context, inbox)
                    .await
            }
            None => self.run_call(flight, offer, state, inbox).await,
        }
    }

    /// Stage 3: the change a write would make (`None` for a call that is not planned).
    async fn plan(
        &self,
        flight: &InFlight<'_>,
        context: &NoteContext,
    ) -> Option<Result<Plan, ToolError>> {
        let Call { name, input, .. } = flight.call;
        if flight.spec.tier == Tier::Session {
            return Some(self.plan_session_edit(name, input, context).await);
        }
        if !flight.writes() {
            return None;
        }
        match self.registry.get(name).and_then(|t| t.plan(input.clone())) {
            Some(planning) => Some(planning.await),
            None => None,
        }
    }

    /// A planned write: show it, then apply what was accepted to the editor or to disk.
    async fn run_planned(
        &mut self,
        mut flight: InFlight<'_>,
        planned: Result<Plan, ToolError>,
        offer: Option<AskOffer>,
        context: &mut NoteContext,
        inbox: &mut Inbox<'_>,
    ) -> Dispatched {
        let plan = match planned
            .and_then(|plan| self.body_was_read(flight.call, plan))
            .and_then(|plan| onto_editor_buffer(plan, context))
            .and_then(|plan| self.rebase_on_what_was_read(plan))
        {
            Ok(plan) => plan,
            Err(e) => return flight.end(e.to_string(), Some((EditStatus::Failed, None)), false),
        };
        let path = plan.path().rel().to_string();
        flight.record.decision = CallDecision::Allowed;
        let mut hunks = None;
        let mut asked = None;
        if let Some(offer) = offer.filter(|_| !plan.is_noop()) {
            let id = self.next_request_id();
            asked = Some(id);
            let proposal = Proposal {
                summary: plan.describe(),
                path: path.clone(),
                diff: plan.diff(),
                files: crate::agent::ProposalFile::of_plan(&plan),
            };
            let request = flight.request(id, offer, Some(proposal));
            match self.ask(request, &flight.facts, inbox).await {
                Answered::Yes {
                    decision,
                    hunks: accepted,
                } => {
                    flight.record.decision = decision;
                    hunks = accepted;
                }
                Answered::No { reason } => {
                    return flight.denied(declined(&reason), Some(&path), false);
                }
                Answered::Interrupted => {
                    return flight.denied(
                        "not applied: the person interrupted the turn; nothing was written",
                        Some(&path),
                        true,
                    );
                }
            }
        }
        if hunks.as_ref().is_some_and(|h| !h.iter().any(|a| *a)) {
            return flight.end(
                "The person rejected every hunk of this change; nothing was written.",
                Some((EditStatus::Rejected, Some(&path))),
                false,
            );
        }
        if goes_to_editor(&plan, context) {
            let edit_id = asked.unwrap_or_else(|| self.next_request_id());
            return self
                .apply_to_editor(flight, plan, hunks, edit_id, context, inbox)
                .await;
        }
        self.apply_to_disk(flight, plan, hunks, context).await
    }

    /// Stage 5a: the note is open in the editor: the edit goes to the buffer (one undo step) and
    /// the app saves it; the result says what the editor really did.
    async fn apply_to_editor(
        &mut self,
        mut flight: InFlight<'_>,
        plan: Plan,
        hunks: Option<Vec<bool>>,
        edit_id: u64,
        context: &mut NoteContext,
        inbox: &mut Inbox<'_>,
    ) -> Dispatched {
        let path = plan.path().rel().to_string();
        let Change::Write {
            before: Some(before),
            after,
            ..
        } = &plan.change
        else {
            return flight.end(
                "internal: an editor edit without the text it was made against",
                Some((EditStatus::Failed, Some(&path))),
                false,
            );
        };
        let text = match hunks.as_deref() {
            Some(flags) => apply_hunks(&before.text, after, &plan.diff(), flags),
            None => after.clone(),
        };
        inbox.send(AgentEvent::EditorEdit {
            id: edit_id,
            path: path.clone(),
            before: before.text.clone(),
            after: text.clone(),
        });
        let state = WaitState {
            model: &mut self.settings.model,
            shutting_down: &mut self.shutting_down,
        };
        let answered = inbox
            .answer(state, BUSY, |op| match op {
                Op::EditorApplied { id, result } if id == edit_id => Some(result),
                _ => None,
            })
            .await;
        match answered {
            Some(EditorEditResult::Applied { text: now, saved }) => {
                let (added, removed) = crate::tools::workspace::line_stats(&before.text, &now);
                let result = editor_result(&path, &now, &text, &saved, hunks.as_deref(), added, removed);
                if let Some(note) = context.note.as_mut().filter(|n| n.path == path) {
                    follow(&mut note.editor, &now);
                }
                self.seen.insert(path.clone(), now);
                flight.record.is_error = false;
                flight.record.result = result;
                let edit = flight.edit(EditStatus::Applied, added, removed, Some(&path));
                Dispatched {
                    record: flight.record,
                    edit,
                    interrupted: false,
                    images: Vec::new(),
                }
            }
            Some(EditorEditResult::Refused(why)) => flight.end(
                format!("not applied: {why}; the note is unchanged"),
                Some((EditStatus::Failed, Some(&path))),
                false,
            ),
            None => flight.end(
                "sent to the editor, but the turn was interrupted before the editor confirmed it; read the note to see whether the change is there",
                Some((EditStatus::Failed, Some(&path))),
                true,
            ),
        }
    }

    /// Stage 5b: write the accepted change to the note on disk.
    async fn apply_to_disk(
        &mut self,
        mut flight: InFlight<'_>,
        plan: Plan,
        hunks: Option<Vec<bool>>,
        context: &mut NoteContext,
    ) -> Dispatched {
        let path = plan.path().rel().to_string();
        let workspace = std::sync::Arc::clone(&self.workspace);
        // A local atomic write: not raced against Esc, so that an approved write is never left
        // half-known.
        let applied = tokio::task::spawn_blocking(move || {
            workspace.apply(&plan, hunks.as_deref()).map(|a| (a, plan))
        })
        .await
        .map_err(|e| ToolError::Internal(e.to_string()))
        .and_then(|r| r);
        match applied {
            Ok((applied, plan)) => {
                self.after_own_write(&plan, context);
                flight.record.is_error = false;
                flight.record.result = applied.output.text.clone();
                let edit = flight.edit(
                    EditStatus::Applied,
                    applied.added,
                    applied.removed,
                    Some(&path),
                );
                Dispatched {
                    record: flight.record,
                    edit,
                    interrupted: false,
                    images: Vec::new(),
                }
            }
            Err(e) => flight.end(
                e.to_string(),
                Some((EditStatus::Failed, Some(&path))),
                false,
            ),
        }
    }

    /// Stage 5c: everything that is not a planned write: ask if the cascade says so, then call
    /// the tool, racing the call against the inbox (an MCP tool may take its whole timeout).
    async fn run_call(
        &mut self,
        mut flight: InFlight<'_>,
        offer: Option<AskOffer>,
        state: &mut TurnState,
        inbox: &mut Inbox<'_>,
    ) -> Dispatched {
        flight.record.decision = CallDecision::Allowed;
        if let Some(offer) = offer {
            let id = self.next_request_id();
            let request = flight.request(id, offer, None);
            match self.ask(request, &flight.facts, inbox).await {
                Answered::Yes { decision, .. } => flight.record.decision = decision,
                Answered::No { reason } => return flight.denied_call(declined(&reason), false),
                Answered::Interrupted => {
                    return flight.denied_call("not run: the person interrupted the turn", true);
                }
            }
        }
        if flight.spec.tier == Tier::Plugin {
            state.tainted = true;
        }
        let Call { name, input, .. } = flight.call;
        let wait = WaitState {
            model: &mut self.settings.model,
            shutting_down: &mut self.shutting_down,
        };
        let called = inbox
            .wait(self.registry.call(name, input.clone()), wait, BUSY, |_| {
                None
            })
            .await;
        match called {
            Some(Ok(output)) => {
                if name == "read_note" {
                    self.remember_reads(&flight.facts.paths);
                }
                flight.record.is_error = false;
                flight.record.result = output.text;
                Dispatched {
                    record: flight.record,
                    edit: None,
                    interrupted: false,
                    images: output.images,
                }
            }
            Some(Err(e)) => flight.end(e.to_string(), None, false),
            None => flight.end(
                format!(
                    "not finished: the person interrupted the turn while {name} ran; its result was abandoned"
                ),
                None,
                true,
            ),
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
            for key in ["note", "path", "folder", "to"] {
                let Some(value) = input.get(key).and_then(Value::as_str) else {
                    continue;
                };
                match self.workspace.target_path(value, access, key == "note") {
                    Ok(Some(rel)) => paths.push(rel),
                    Ok(None) => {}
                    Err(refusal) => path_refusal = Some(refusal),
                }
            }
            // A tool that finds its note itself (the daily note of a date) still names it here,
            // so a rule on its folder covers it.
            paths.extend(self.workspace.implied_targets(&spec.name, input));
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

    /// Stage 4: park the call until the person answers; remember the rule a session/always
    /// answer makes.
    async fn ask(
        &mut self,
        request: PermissionRequest,
        facts: &CallFacts,
        inbox: &mut Inbox<'_>,
    ) -> Answered {
        let id = request.id;
        let (offer_session, offer_always) = (request.offer_session, request.offer_always);
        inbox.send(AgentEvent::PermissionRequested(request));
        let state = WaitState {
            model: &mut self.settings.model,
            shutting_down: &mut self.shutting_down,
        };
        let busy = "a turn is already running; answer the permission request or interrupt it first";
        let answered = inbox
            .answer(state, busy, |op| match op {
                Op::Decision {
                    request,
                    answer,
                    hunks,
                } if request == id => Some((answer, hunks)),
                _ => None,
            })
            .await;
        let Some((answer, hunks)) = answered else {
            return Answered::Interrupted;
        };
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
                    crate::time::now_ms(),
                )
            {
                tracing::warn!("an always rule was not stored: {e}");
                inbox.notice(format!(
                    "the rule could not be saved ({e}); it holds for this session only"
                ));
            }
            self.rules.rules.push(rule);
        }
        Answered::Yes { decision, hunks }
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

    /// Read before you overwrite, per session: `update_note` replaces a whole `body` only of a
    /// note this session read (or wrote) as it is now on disk. The workspace checks the same
    /// per process (and for MCP callers); this is the check for "in this session".
    fn body_was_read(&self, call: Call<'_>, plan: Plan) -> Result<Plan, ToolError> {
        let whole_body = call.name == "update_note"
            && call.input.get("body").is_some()
            && call.input.get("expected_revision").is_none();
        let Some((path, current)) = rewrite_of(&plan) else {
            return Ok(plan);
        };
        if !whole_body {
            return Ok(plan);
        }
        match self.seen.get(path.rel()) {
            Some(read) if *read == current.text => Ok(plan),
            Some(_) => Err(crate::tools::workspace::changed_since_read(
                path.rel(),
                "in this session",
            )),
            None => Err(crate::tools::workspace::not_read(path.rel())),
        }
    }

    /// A write planned against the note's current text, while the agent last read an older
    /// text: re-base it (three-way) so that the change the person never saw is kept.
    fn rebase_on_what_was_read(&self, plan: Plan) -> Result<Plan, ToolError> {
        let Some((path, current)) = rewrite_of(&plan) else {
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
                    follow(&mut focused.editor, &note.text);
                }
                self.seen.insert(rel, note.text);
            }
            Err(_) => {
                self.seen.remove(&rel);
            }
        }
    }

    fn next_request_id(&mut self) -> u64 {
        let id = self.next_request;
        self.next_request += 1;
        id
    }
}

impl InFlight<'_> {
    /// A call that is not a planned write was denied: no edit to report.
    fn denied_call(mut self, result: impl Into<String>, interrupted: bool) -> Dispatched {
        self.record.decision = CallDecision::Denied;
        self.end(result, None, interrupted)
    }
}

/// Stage 1: only what this turn offered may run, whatever the registry holds.
fn refuse_unoffered<'a>(name: &str, offered: &'a [ToolSpec]) -> Result<&'a ToolSpec, String> {
    offered.iter().find(|t| t.name == name).ok_or_else(|| {
        format!(
            "the tool `{name}` is not available in this turn; the tools you can call are: {}",
            offered
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Stage 2: the permission cascade.
fn gate(flight: &InFlight<'_>, rules: &crate::permission::RuleSet, tainted: bool) -> Gate {
    let decision = decide(&flight.facts, rules, tainted);
    tracing::debug!(tool = flight.call.name, ?decision, "permission");
    match decision {
        Decision::Deny { reason } => {
            let decision = if flight.facts.path_refusal.is_some() {
                CallDecision::Refused
            } else {
                CallDecision::Denied
            };
            Gate::Stop(decision, reason)
        }
        Decision::Allow { .. } => Gate::Go(None),
        Decision::Ask {
            offer_always,
            offer_session,
        } => Gate::Go(Some(AskOffer {
            offer_session,
            offer_always,
            reason: ask_reason(flight.spec, flight.writes(), tainted),
        })),
    }
}

/// Why the person is asked about a call.
fn ask_reason(spec: &ToolSpec, writes: bool, tainted: bool) -> String {
    if tainted && writes {
        "a tool from an MCP server ran earlier in this turn; its output could be steering this write".to_string()
    } else if spec.tier == Tier::Plugin {
        format!(
            "{} comes from an MCP server; what a server says about its tools is not taken on trust",
            spec.name
        )
    } else {
        format!("{} changes the vault", spec.name)
    }
}

/// The write is to the note open in the app's editor (and knows the text it was made against).
fn goes_to_editor(plan: &Plan, context: &NoteContext) -> bool {
    let path = plan.path().rel();
    context
        .note
        .as_ref()
        .is_some_and(|n| n.in_editor && n.path == path)
        && matches!(
            &plan.change,
            Change::Write {
                before: Some(_),
                ..
            }
        )
}

/// The editor state follows a new text of its note: no selection, the cursor kept inside.
fn follow(editor: &mut EditorState, text: &str) {
    let chars = text.chars().count();
    editor.selection = None;
    editor.cursor = editor.cursor.min(chars);
    editor.text = text.to_string();
}

/// The tool result of an edit the editor applied: `now` is the buffer afterwards, `sent` what
/// the agent sent (they differ when the person's typing was merged in).
fn editor_result(
    path: &str,
    now: &str,
    sent: &str,
    saved: &Result<(), String>,
    hunks: Option<&[bool]>,
    added: u64,
    removed: u64,
) -> String {
    let mut result = serde_json::json!({
        "path": path,
        "applied_to": "editor",
        "saved": saved.is_ok(),
        "added": added,
        "removed": removed,
    });
    if let Some(fields) = result.as_object_mut() {
        if let Err(why) = saved {
            fields.insert("not_saved_because".into(), Value::String(why.clone()));
        }
        if now != sent {
            fields.insert("merged_with_the_persons_typing".into(), Value::Bool(true));
        }
        if let Some(flags) = hunks {
            crate::tools::workspace::record_hunks(fields, flags);
        }
    }
    result.to_string()
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

/// The note `plan` rewrites and its text when the plan was made; `None` for any other change
/// (a new note, a delete, a folder, a move), which has no earlier text to check against.
fn rewrite_of(plan: &Plan) -> Option<(&VaultPath, &NoteText)> {
    match &plan.change {
        Change::Write {
            path,
            before: Some(current),
            ..
        } => Some((path, current)),
        Change::Write { before: None, .. }
        | Change::Delete { .. }
        | Change::Folder { .. }
        | Change::Move(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::{Effect, Rule, RuleScope, RuleSet};
    use crate::tools::session::all_session_tool_specs;

    fn spec(name: &str, tier: Tier, read_only: bool) -> ToolSpec {
        let mut spec = all_session_tool_specs()[0].clone();
        spec.name = name.into();
        spec.tier = tier;
        spec.annotations.read_only_hint = read_only;
        spec
    }

    fn flight<'a>(spec: &'a ToolSpec, input: &'a Value, facts: CallFacts) -> InFlight<'a> {
        InFlight {
            call: Call {
                id: "c1",
                name: &spec.name,
                input,
            },
            spec,
            facts,
            record: ToolCallRecord {
                id: "c1".into(),
                name: spec.name.clone(),
                input: input.clone(),
                is_error: true,
                decision: CallDecision::Refused,
                result: String::new(),
            },
        }
    }

    fn facts(tool: &str, read_only: bool, external: bool) -> CallFacts {
        CallFacts {
            tool: tool.into(),
            paths: vec!["A.md".into()],
            read_only,
            external,
            ..Default::default()
        }
    }

    #[test]
    fn refuse_names_the_tools_there_are() {
        let offered = [spec("read_note", Tier::Workspace, true)];
        assert!(refuse_unoffered("read_note", &offered).is_ok());
        let why = refuse_unoffered("rm_rf", &offered)
            .err()
            .unwrap_or_default();
        assert!(why.contains("`rm_rf` is not available"), "{why}");
        assert!(why.ends_with("read_note"), "{why}");
    }

    #[test]
    fn gate_allows_reads_asks_writes_and_stops_denied_calls() {
        let input = Value::Null;
        let read = spec("read_note", Tier::Workspace, true);
        let write = spec("update_note", Tier::Workspace, false);
        let rules = RuleSet::default();
        assert!(matches!(
            gate(
                &flight(&read, &input, facts("read_note", true, false)),
                &rules,
                false
            ),
            Gate::Go(None)
        ));
        match gate(
            &flight(&write, &input, facts("update_note", false, false)),
            &rules,
            false,
        ) {
            Gate::Go(Some(offer)) => assert_eq!(offer.reason, "update_note changes the vault"),
            _ => panic!("a write asks"),
        }
        let deny = RuleSet {
            rules: vec![Rule {
                tool: "update_note".into(),
                path_glob: None,
                effect: Effect::Deny,
                scope: RuleScope::Config,
            }],
        };
        assert!(matches!(
            gate(
                &flight(&write, &input, facts("update_note", false, false)),
                &deny,
                false
            ),
            Gate::Stop(CallDecision::Denied, _)
        ));
        let mut refused = facts("update_note", false, false);
        refused.path_refusal = Some("outside the vault".into());
        assert!(matches!(
            gate(&flight(&write, &input, refused), &rules, false),
            Gate::Stop(CallDecision::Refused, _)
        ));
    }

    #[test]
    fn ask_reasons_name_the_risk() {
        let plugin = spec("files__write", Tier::Plugin, false);
        let write = spec("update_note", Tier::Workspace, false);
        assert!(ask_reason(&write, true, true).contains("MCP server ran earlier"));
        assert!(ask_reason(&plugin, true, false).contains("files__write comes from an MCP server"));
        assert_eq!(
            ask_reason(&write, true, false),
            "update_note changes the vault"
        );
    }

    #[test]
    fn ended_calls_report_their_edit_only_for_writes() {
        let input = Value::Null;
        let write = spec("update_note", Tier::Workspace, false);
        let read = spec("read_note", Tier::Workspace, true);
        let done =
            flight(&write, &input, facts("update_note", false, false)).denied("no", None, true);
        assert_eq!(done.record.decision, CallDecision::Denied);
        assert!(done.interrupted);
        assert_eq!(
            done.edit.map(|e| (e.path, e.status)),
            Some(("A.md".to_string(), EditStatus::Rejected))
        );
        let done = flight(&read, &input, facts("read_note", true, false)).denied_call("no", false);
        assert!(done.edit.is_none());
        assert_eq!(done.record.result, "no");
    }

    #[test]
    fn editor_results_say_what_the_editor_did() {
        let result = editor_result(
            "A.md",
            "typed\nnew",
            "new",
            &Err("disk full".into()),
            Some(&[true, false]),
            1,
            0,
        );
        let value: Value = serde_json::from_str(&result).unwrap_or_default();
        assert_eq!(value["applied_to"], "editor");
        assert_eq!(value["saved"], false);
        assert_eq!(value["not_saved_because"], "disk full");
        assert_eq!(value["merged_with_the_persons_typing"], true);
        let clean: Value =
            serde_json::from_str(&editor_result("A.md", "new", "new", &Ok(()), None, 1, 0))
                .unwrap_or_default();
        assert!(clean.get("merged_with_the_persons_typing").is_none());
        assert_eq!(clean["saved"], true);
    }

    #[test]
    fn the_editor_state_follows_a_new_text() {
        let mut editor = EditorState {
            text: "a long text".into(),
            selection: Some(2..5),
            cursor: 10,
        };
        follow(&mut editor, "short");
        assert_eq!(
            editor,
            EditorState {
                text: "short".into(),
                selection: None,
                cursor: 5,
            }
        );
    }

    #[test]
    fn declining_passes_the_reason_on() {
        assert!(declined(&Some(" not now ".into())).contains("\"not now\""));
        assert!(declined(&Some("  ".into())).contains("do not retry"));
        assert!(declined(&None).contains("do not retry"));
    }
}
