//! One turn: request, stream, tools, repeat until the model stops or MAX_STEPS responses.

use super::compact::CompactReason;
use super::dispatch::{Call, TurnState};
use super::inbox::{BUSY, Inbox, WaitState};
use super::prompt::user_message;
use super::request::{Purpose, Sent, text_of, tool_defs};
use super::{
    Agent, AgentEvent, Attachment, CallDecision, NoteContext, PromptFrame, SuggestedStart,
    ToolCallRecord, TurnEnd, TurnLimits, TurnOutcome, build_tool_list,
};
use crate::llm::{
    Block, LlmError, Message, ProviderKind, ResultPart, Role, StopReason, ToolDef, Usage,
};
use crate::tools::{ToolImage, ToolSpec};
use serde_json::Value;
use std::ops::ControlFlow;

/// What one turn carries from step to step.
struct Steps {
    outcome: TurnOutcome,
    offered: Vec<ToolSpec>,
    tools: Vec<ToolDef>,
    system: String,
    /// Where this turn's messages start in the upstream history (for a fresh start when the
    /// provider rejects a resumed history).
    turn_start: usize,
    /// Where this turn's messages start in the session's log (to set them aside if it fails).
    log_start: usize,
    retried_fresh: bool,
    /// The provider said the last request overflowed its context window and the conversation
    /// was compacted for it: another overflow before a response ends the turn.
    compacted_for_overflow: bool,
    last_text: String,
    state: TurnState,
    /// The prompt's suggested start of the answer, sent after the history for the model to
    /// continue until a response is recorded, which then starts with it (decisions §71).
    prefill: Option<String>,
}

/// Put a prefill in front of the response that continued it: one assistant message, its first
/// text the prefill and the words that followed (the model continues the text as written).
fn start_with(content: &mut Vec<Block>, words: String) {
    match content.first_mut() {
        Some(Block::Text { text }) => text.insert_str(0, &words),
        _ => content.insert(0, Block::Text { text: words }),
    }
}

/// What comes after a response.
enum Next {
    RunCalls,
    /// Ask the model again (it paused without calls).
    Again,
    End,
}

/// A tool call of a response: id, name, input.
type ToolUse = (String, String, Value);

impl Agent {
    pub(super) async fn turn(
        &mut self,
        text: &str,
        attachments: &[Attachment],
        mut context: NoteContext,
        (limits, frame): (&TurnLimits, &PromptFrame),
        inbox: &mut Inbox<'_>,
    ) -> TurnOutcome {
        let mut outcome = TurnOutcome {
            session_id: String::new(),
            reply: String::new(),
            stop_reason: TurnEnd::EndTurn,
            steps: 0,
            tool_calls: Vec::new(),
            edits: Vec::new(),
            usage: Usage::default(),
            error: None,
            warnings: Vec::new(),
        };
        let settings = &self.settings;
        match self
            .log
            .ensure(text, &settings.provider_name, &settings.model)
        {
            Ok(id) => outcome.session_id = id,
            Err(e) => return failed(outcome, format!("the session could not be stored: {e}")),
        }
        inbox.send(AgentEvent::TurnStarted {
            session_id: outcome.session_id.clone(),
        });
        if self.await_pending_tools(inbox).await {
            outcome.stop_reason = TurnEnd::Interrupted;
            return outcome;
        }
        if let Err(e) = self.seed_from_parent(&mut outcome.usage, inbox).await {
            return failed(
                outcome,
                format!("the earlier session could not be summarised: {e}"),
            );
        }
        let specs: Vec<ToolSpec> = self.registry.specs().cloned().collect();
        self.use_remembered_facts();
        let tools = narrow_tools(build_tool_list(&specs, &context), limits, inbox);
        let offered = self.offer_tools(tools, inbox);
        let log_start = self.log.history().len();
        let turn_start = self.history.len();
        let prefill = match self.send_user_message(text, attachments, &context, frame, inbox) {
            Ok(prefill) => prefill,
            Err(e) => return failed(outcome, e),
        };
        if let Some(words) = &prefill {
            // The answer as the person reads it starts with the prompt's words.
            inbox.send(AgentEvent::TextDelta(words.clone()));
        }
        let mut steps = Steps {
            outcome,
            tools: tool_defs(&offered),
            offered,
            system: self.system(),
            turn_start,
            log_start,
            retried_fresh: false,
            compacted_for_overflow: false,
            last_text: String::new(),
            state: TurnState::default(),
            prefill,
        };
        loop {
            match self.step(&mut steps, &mut context, inbox).await {
                ControlFlow::Continue(()) => {}
                ControlFlow::Break(Ok(())) => break,
                ControlFlow::Break(Err(e)) => return failed(steps.outcome, e),
            }
        }
        steps.outcome.reply = steps.last_text;
        steps.outcome
    }

    /// The person's message with the notes it links and the focused note, stored and added to
    /// the history; an MCP prompt's other messages before it, its other blocks (embedded
    /// resources, images) right after its text, and the assistant's words it ends with either
    /// quoted at the end of the message or returned, to be sent as a prefill (decisions §71) —
    /// never stored as a message of their own, so the reply does not follow them as a second
    /// assistant message.
    fn send_user_message(
        &mut self,
        text: &str,
        attachments: &[Attachment],
        context: &NoteContext,
        frame: &PromptFrame,
        inbox: &Inbox<'_>,
    ) -> Result<Option<String>, String> {
        for message in &frame.before {
            let after_the_person = [self.history.last(), self.log.history().last()]
                .iter()
                .any(|last| last.is_some_and(|m| m.role == Role::User));
            if message.role == Role::Assistant && !after_the_person {
                // A prompt that opens with the assistant's words, run after a reply or first in
                // a session: quoted in the person's turn, since a conversation may neither hold
                // two assistant messages in a row nor begin with one.
                self.record(SuggestedStart::quoted_earlier(message))?;
            } else {
                self.record(message.clone())?;
            }
        }
        // The focused note as the model sees it in this message is what it "read".
        if let Some(note) = &context.note {
            self.seen
                .insert(note.path.clone(), note.editor.text.clone());
        }
        let mut user = user_message(text, attachments, context);
        // After the text (which follows the attachments), before the focused note.
        let after_text = attachments.len() + 1;
        user.content
            .splice(after_text..after_text, frame.extra.iter().cloned());
        for block in self.linked_notes(text, inbox) {
            user.content.push(Block::Text { text: block });
        }
        let prefill = match frame.suggested_start(self.continues_prefill()) {
            Some(SuggestedStart::Prefill(words)) => Some(words),
            Some(SuggestedStart::Quoted(words)) => {
                user.content.push(Block::Text {
                    text: SuggestedStart::quoted_block(&words),
                });
                None
            }
            None => None,
        };
        self.record(user)?;
        Ok(prefill)
    }

    /// Whether the provider continues a trailing assistant message: Anthropic does, except with
    /// extended thinking on (it refuses the request); OpenAI-compatible servers answer it as a
    /// finished message instead.
    fn continues_prefill(&self) -> bool {
        self.provider.kind() == ProviderKind::Anthropic
            && self.provider.settings().thinking_budget == 0
    }

    /// One model response and the calls it asks for. `Break(Err)` ends the turn as failed.
    async fn step(
        &mut self,
        steps: &mut Steps,
        context: &mut NoteContext,
        inbox: &mut Inbox<'_>,
    ) -> ControlFlow<Result<(), String>> {
        if steps.outcome.steps >= self.settings.max_steps {
            let message = format!(
                "stopped after {} model responses without finishing (the limit is provider.max_steps = {}); send another message to let it continue",
                steps.outcome.steps, self.settings.max_steps
            );
            stop(steps, TurnEnd::MaxSteps, message, inbox);
            return ControlFlow::Break(Ok(()));
        }
        steps.outcome.steps += 1;
        self.compact_if_needed(&steps.system, &steps.tools, &mut steps.outcome.usage, inbox)
            .await;
        let mut request = self.request_of(&steps.system, &steps.tools);
        if let Some(words) = &steps.prefill {
            request.messages.push(Message {
                role: Role::Assistant,
                content: vec![Block::Text {
                    text: words.clone(),
                }],
            });
        }
        if let Some(message) = self.over_hard_window(&request) {
            // The server would cut it without a word: compact once, else end the turn saying so.
            steps.outcome.steps -= 1;
            return self
                .compact_for_overflow(&message, TurnEnd::ContextWindowExceeded, steps, inbox)
                .await;
        }
        let sent_messages = self.history.len();
        let sent = self
            .send_request(&request, Purpose::Step, &mut steps.outcome.usage, inbox)
            .await;
        let mut response = match sent {
            Sent::Done(response) => response,
            Sent::Failed(e) => return self.after_failed_request(e, steps, inbox).await,
            Sent::Interrupted(mut partial) => {
                if let Some(words) = steps.prefill.take() {
                    partial.insert_str(0, &words);
                }
                self.keep_interrupted_text(&partial, inbox);
                if !partial.is_empty() {
                    steps.last_text = partial;
                }
                steps.outcome.stop_reason = TurnEnd::Interrupted;
                return ControlFlow::Break(Ok(()));
            }
        };
        if !self.check_truncation(&response.usage, &request, &mut steps.outcome, inbox) {
            self.calibrate(&response.usage, &request, sent_messages);
        }
        self.recheck_window().await;
        // A response that answers ends the overflow; one that stopped at the window again is the
        // same overflow, and `compact_for_overflow` ends the turn instead of compacting twice.
        let stopped_at_window = response.stop_reason == StopReason::ContextWindowExceeded;
        if !stopped_at_window {
            steps.compacted_for_overflow = false;
        }
        if let Some(words) = steps.prefill.take() {
            start_with(&mut response.content, words);
        }
        let text_of_response = text_of(&response.content);
        if !text_of_response.is_empty() {
            steps.last_text = text_of_response;
        }
        let calls = tool_uses(&response.content);
        // Thinking alone (cut off by max_tokens) is no message: Anthropic refuses an assistant
        // turn that holds only thinking, and an unsigned one cannot be sent back at all.
        if response.content.iter().any(|block| !block.is_thinking()) {
            let recorded = self.record(Message {
                role: Role::Assistant,
                content: response.content.clone(),
            });
            if let Err(e) = recorded {
                return ControlFlow::Break(Err(e));
            }
        }
        if stopped_at_window {
            self.answer_unrun(&calls, "not run: the context window is full", inbox);
            return self
                .compact_for_overflow(
                    "the response stopped at the context window",
                    TurnEnd::ContextWindowExceeded,
                    steps,
                    inbox,
                )
                .await;
        }
        match self.after_response(&response, &calls, steps, inbox) {
            Next::RunCalls => self.run_calls(&calls, steps, context, inbox).await,
            Next::Again => ControlFlow::Continue(()),
            Next::End => ControlFlow::Break(Ok(())),
        }
    }

    /// A request the provider failed: compact once when the conversation did not fit, start the
    /// upstream context afresh once when a resumed one was refused, else end the turn as failed
    /// (the turn set aside, the log kept).
    async fn after_failed_request(
        &mut self,
        e: LlmError,
        steps: &mut Steps,
        inbox: &mut Inbox<'_>,
    ) -> ControlFlow<Result<(), String>> {
        if e.is_context_overflow() {
            steps.outcome.steps -= 1;
            return self
                .compact_for_overflow(&e.to_string(), TurnEnd::Error, steps, inbox)
                .await;
        }
        if e.is_rejected_history() && steps.turn_start > 0 && !steps.retried_fresh {
            // A resumed conversation the provider no longer accepts (another model, an expired
            // image): keep the local log, start the upstream context afresh.
            steps.retried_fresh = true;
            steps.outcome.steps -= 1;
            self.history.drain(..steps.turn_start);
            // The last reported size counted what was just dropped.
            self.calibration = None;
            inbox.notice(format!(
                "the provider did not accept the stored conversation ({e}); continuing with a fresh context (the session keeps its history)"
            ));
            return ControlFlow::Continue(());
        }
        steps.outcome.stop_reason = TurnEnd::Error;
        steps.outcome.error = Some(self.set_aside_failed_turn(steps.log_start, &e, inbox));
        ControlFlow::Break(Ok(()))
    }

    /// The provider said the conversation does not fit: compact once and ask again, or end the
    /// turn as `end` saying why (the history is never dropped).
    async fn compact_for_overflow(
        &mut self,
        error: &str,
        end: TurnEnd,
        steps: &mut Steps,
        inbox: &mut Inbox<'_>,
    ) -> ControlFlow<Result<(), String>> {
        let full = |why: String| {
            format!(
                "{error}; {why} (the session keeps its history: /continue-new or `ask --continue-new` starts a new session from its summary)"
            )
        };
        if steps.compacted_for_overflow {
            steps.outcome.stop_reason = end;
            steps.outcome.error = Some(full(
                "it still does not fit after compacting the conversation".into(),
            ));
            return ControlFlow::Break(Ok(()));
        }
        steps.compacted_for_overflow = true;
        let compacted = self
            .compact(
                CompactReason::Overflow,
                &steps.system,
                &steps.tools,
                &mut steps.outcome.usage,
                inbox,
            )
            .await;
        match compacted {
            Ok(true) => {
                inbox.notice(format!(
                    "{error}; the conversation was compacted and the request is sent again"
                ));
                ControlFlow::Continue(())
            }
            Ok(false) => {
                steps.outcome.stop_reason = end;
                steps.outcome.error = Some(full(
                    "this turn alone fills the context window and there is nothing older to compact".into(),
                ));
                ControlFlow::Break(Ok(()))
            }
            Err(e) => {
                steps.outcome.stop_reason = end;
                steps.outcome.error = Some(full(format!("compacting failed: {e}")));
                ControlFlow::Break(Ok(()))
            }
        }
    }

    /// What the stop reason means for the turn: go on to the calls, ask again, or end.
    fn after_response(
        &mut self,
        response: &crate::llm::Response,
        calls: &[ToolUse],
        steps: &mut Steps,
        inbox: &Inbox<'_>,
    ) -> Next {
        let (end, message, unrun) = match &response.stop_reason {
            StopReason::ToolUse | StopReason::PauseTurn if !calls.is_empty() => {
                return Next::RunCalls;
            }
            // Paused by the provider without calls: ask it to continue.
            StopReason::PauseTurn => return Next::Again,
            StopReason::MaxTokens => (
                TurnEnd::MaxTokens,
                "the reply was cut off at the response token limit (provider.max_tokens); any tool call in it was not run".to_string(),
                "not run: the response was cut off at max_tokens",
            ),
            StopReason::Refusal => {
                let detail = response
                    .stop_details
                    .as_ref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                (
                    TurnEnd::Refusal,
                    format!("the model declined to answer{detail}"),
                    "not run: the model declined",
                )
            }
            StopReason::ContextWindowExceeded => (
                TurnEnd::ContextWindowExceeded,
                "the conversation no longer fits the model's context window, even compacted; /continue-new (or `ask --continue-new`) starts a new session from its summary".to_string(),
                "not run: the context window is full",
            ),
            StopReason::EndTurn
            | StopReason::StopSequence
            | StopReason::ToolUse
            | StopReason::Other(_) => {
                return if calls.is_empty() {
                    Next::End
                } else {
                    Next::RunCalls
                };
            }
        };
        stop(steps, end, message, inbox);
        self.answer_unrun(calls, unrun, inbox);
        Next::End
    }

    /// Run the calls in order; all their results go back in one message. After an interrupt
    /// the rest are answered "not run".
    async fn run_calls(
        &mut self,
        calls: &[ToolUse],
        steps: &mut Steps,
        context: &mut NoteContext,
        inbox: &mut Inbox<'_>,
    ) -> ControlFlow<Result<(), String>> {
        let mut results = Vec::with_capacity(calls.len());
        let mut interrupted = false;
        for (id, name, input) in calls {
            let (record, images) = if interrupted {
                (not_run_after_interrupt(id, name, input), Vec::new())
            } else {
                let call = Call { id, name, input };
                let mut done = self
                    .dispatch(call, &steps.offered, context, &mut steps.state, inbox)
                    .await;
                if done.record.is_error {
                    // Plans, session tools and refusals are not called through the registry;
                    // their errors may echo an argument of any size too.
                    done.record.result =
                        crate::quote::shorten_echoes(&done.record.result).into_owned();
                }
                interrupted = done.interrupted;
                steps.outcome.edits.extend(done.edit);
                (done.record, done.images)
            };
            if let Err(e) = self.log.record_decision(&record.id, record.decision) {
                self.unrecorded("how a tool call was decided", &e, inbox);
            }
            results.push(result_block_with_images(&record, &images));
            inbox.send(AgentEvent::ToolCallFinished(record.clone()));
            steps.outcome.tool_calls.push(record);
        }
        if let Err(e) = self.record(Message {
            role: Role::User,
            content: results,
        }) {
            return ControlFlow::Break(Err(e));
        }
        if interrupted {
            steps.outcome.stop_reason = TurnEnd::Interrupted;
            return ControlFlow::Break(Ok(()));
        }
        ControlFlow::Continue(())
    }

    /// The provider failed the turn: its messages (from `log_start` in the log) stay in the
    /// transcript but leave the upstream history, here and in the store, so that the next turn
    /// does not send again what the server refused or broke on (docs/decisions.md §36).
    /// Returns the error as the person reads it.
    fn set_aside_failed_turn(
        &mut self,
        log_start: usize,
        error: &LlmError,
        inbox: &Inbox<'_>,
    ) -> String {
        let message = format!(
            "{error}; the message is kept in the transcript but not sent to the model again (send it again to retry)"
        );
        let recorded = self.log.history().len().saturating_sub(log_start);
        self.history
            .truncate(self.history.len().saturating_sub(recorded));
        // The last reported size may count what was just set aside.
        self.calibration = None;
        if let Err(e) = self.log.mark_failed_turn(log_start, &message) {
            self.unrecorded("that the turn failed", &e, inbox);
        }
        message
    }

    /// Keep the text of an interrupted reply in the conversation, marked as interrupted.
    fn keep_interrupted_text(&mut self, partial: &str, inbox: &Inbox<'_>) {
        if partial.is_empty() {
            return;
        }
        let kept = self.record(Message {
            role: Role::Assistant,
            content: vec![Block::Text {
                text: format!("{partial}\n\n[interrupted by the person]"),
            }],
        });
        if let Err(e) = kept {
            self.unrecorded("the interrupted reply", &e, inbox);
        }
    }

    /// Wait for the tools still being started and register them. `true` when the person
    /// interrupted (or shut down) first; the tools then stay pending for the next turn.
    async fn await_pending_tools(&mut self, inbox: &mut Inbox<'_>) -> bool {
        let Some(mut pending) = self
            .pending_tools
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
        else {
            return false;
        };
        let events = inbox.events.clone();
        let started = {
            let work = async {
                // Say why nothing happens only when the wait is long enough to notice.
                let slow = tokio::time::sleep(std::time::Duration::from_secs(1));
                tokio::select! {
                    biased;
                    tools = &mut pending => return tools,
                    () = slow => {}
                }
                if events
                    .send(AgentEvent::Notice(
                        "waiting for the MCP servers to start before asking the model".into(),
                    ))
                    .is_err()
                {
                    tracing::debug!("the front end is gone");
                }
                (&mut pending).await
            };
            let state = WaitState {
                model: &mut self.settings.model,
                shutting_down: &mut self.shutting_down,
            };
            inbox.wait(work, state, BUSY, |_| None).await
        };
        match started {
            Some(tools) => {
                for tool in tools {
                    self.registry.register(tool);
                }
                false
            }
            None => {
                *self
                    .pending_tools
                    .get_mut()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(pending);
                true
            }
        }
    }

    /// Store a message and add it to the upstream history.
    fn record(&mut self, message: Message) -> Result<(), String> {
        self.log
            .append(&message)
            .map_err(|e| format!("the conversation could not be stored: {e}"))?;
        self.history.push(message);
        Ok(())
    }

    /// Answer tool calls that will not run, so the history stays well-formed for the next turn.
    fn answer_unrun(&mut self, calls: &[ToolUse], why: &str, inbox: &Inbox<'_>) {
        if calls.is_empty() {
            return;
        }
        let content = calls
            .iter()
            .map(|(id, _, _)| Block::ToolResult {
                tool_use_id: id.clone(),
                content: vec![ResultPart::Text { text: why.into() }],
                is_error: true,
            })
            .collect();
        if let Err(e) = self.record(Message {
            role: Role::User,
            content,
        }) {
            self.unrecorded("the answers to calls that were not run", &e, inbox);
        }
    }

    /// The notes a message names with `[[…]]`, as context blocks. A link to a note the rules
    /// keep from the agent (a deny rule on its path) is left out, and the person is told.
    fn linked_notes(&mut self, text: &str, inbox: &Inbox<'_>) -> Vec<String> {
        let mut blocks = Vec::new();
        for target in crate::attach::wikilink_targets(text) {
            let (path, note) = match self.workspace.read_note_named(&target) {
                Ok(found) => found,
                Err(e) => {
                    inbox.notice(format!("[[{target}]]: {e}"));
                    continue;
                }
            };
            let facts = crate::permission::CallFacts {
                tool: "read_note".into(),
                paths: vec![path.clone()],
                read_only: true,
                ..Default::default()
            };
            if let crate::permission::Decision::Deny { reason } =
                crate::permission::decide(&facts, &self.rules, false)
            {
                inbox.notice(format!("[[{target}]] was not sent to the model: {reason}"));
                continue;
            }
            blocks.push(crate::attach::linked_note_block(&path, &note.text));
            self.seen.insert(path, note.text);
        }
        blocks
    }
}

/// End the turn for `end`, telling the person why.
fn stop(steps: &mut Steps, end: TurnEnd, message: String, inbox: &Inbox<'_>) {
    inbox.notice(message.clone());
    steps.outcome.stop_reason = end;
    steps.outcome.error = Some(message);
}

/// The tool calls of a response, in order.
fn tool_uses(content: &[Block]) -> Vec<ToolUse> {
    content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.clone(), name.clone(), input.clone())),
            Block::Text { .. }
            | Block::Image { .. }
            | Block::ToolResult { .. }
            | Block::Thinking { .. }
            | Block::RedactedThinking { .. } => None,
        })
        .collect()
}

/// A call after the person interrupted: not run, and said so.
fn not_run_after_interrupt(id: &str, name: &str, input: &Value) -> ToolCallRecord {
    ToolCallRecord {
        id: id.to_string(),
        name: name.to_string(),
        input: input.clone(),
        is_error: true,
        decision: CallDecision::Denied,
        result: "not run: the person interrupted the turn".into(),
    }
}

fn failed(mut outcome: TurnOutcome, error: String) -> TurnOutcome {
    outcome.stop_reason = TurnEnd::Error;
    outcome.error = Some(error);
    outcome
}

/// The result's text, then the images the tool returned (an MCP server's screenshot).
fn result_block_with_images(record: &ToolCallRecord, images: &[ToolImage]) -> Block {
    let mut content = vec![ResultPart::Text {
        text: record.result.clone(),
    }];
    content.extend(images.iter().map(|image| ResultPart::Image {
        media_type: image.media_type.clone(),
        data: image.data.clone(),
    }));
    Block::ToolResult {
        tool_use_id: record.id.clone(),
        content,
        is_error: record.is_error,
    }
}

/// The turn's tools kept to a command's `allowed_tools` (every tool when it names none). A name
/// no tool has is said once, so a list written for another program does not silently leave the
/// model without tools.
fn narrow_tools(tools: Vec<ToolSpec>, limits: &TurnLimits, inbox: &Inbox<'_>) -> Vec<ToolSpec> {
    let Some(allowed) = &limits.allowed_tools else {
        return tools;
    };
    let unknown: Vec<&str> = allowed
        .iter()
        .filter(|name| !tools.iter().any(|t| &t.name == *name))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        inbox.notice(format!(
            "the command's allowed_tools names {}, which no tool of this turn has; it is sent only the tools it names that exist",
            unknown
                .iter()
                .map(|n| crate::quote::quoted(n))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    tools
        .into_iter()
        .filter(|t| allowed.contains(&t.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The continuation is glued to the prefill as the model wrote it; a response that opens
    /// with a tool call gets the prefill as its own text before it.
    #[test]
    fn a_prefill_starts_the_recorded_answer() {
        let mut content = vec![Block::Text {
            text: " sow in spring.".into(),
        }];
        start_with(&mut content, "Here:".into());
        assert_eq!(
            content,
            vec![Block::Text {
                text: "Here: sow in spring.".into()
            }]
        );
        let call = Block::ToolUse {
            id: "t1".into(),
            name: "search_notes".into(),
            input: serde_json::json!({}),
        };
        let mut content = vec![call.clone()];
        start_with(&mut content, "Here:".into());
        assert_eq!(
            content,
            vec![
                Block::Text {
                    text: "Here:".into()
                },
                call
            ]
        );
    }
}
