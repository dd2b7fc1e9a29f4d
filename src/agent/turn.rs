//! One turn: request, stream, tools, repeat until the model stops or MAX_STEPS responses.

use super::dispatch::TurnState;
use super::prompt::{system_prompt, user_message};
use super::{
    Agent, AgentEvent, Attachment, CallDecision, NoteContext, Op, ToolCallRecord, TurnEnd,
    TurnOutcome, build_tool_list,
};
use crate::llm::{Block, LlmError, Message, Request, ResultPart, Role, StopReason, StreamEvent};
use crate::llm::{ToolDef, Usage};
use crate::tools::{ToolImage, ToolSpec};
use tokio::sync::mpsc;

/// How a streamed request ended.
enum Streamed {
    Done(Result<crate::llm::Response, LlmError>),
    /// Interrupted; the text that had streamed so far.
    Interrupted(String),
}

impl Agent {
    pub(super) async fn turn(
        &mut self,
        text: &str,
        attachments: &[Attachment],
        mut context: NoteContext,
        ops: &mut mpsc::Receiver<Op>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> TurnOutcome {
        let mut state = TurnState::default();
        let mut outcome = TurnOutcome {
            session_id: String::new(),
            reply: String::new(),
            stop_reason: TurnEnd::EndTurn,
            steps: 0,
            tool_calls: Vec::new(),
            edits: Vec::new(),
            usage: Usage::default(),
            error: None,
        };
        match self.log.ensure(text) {
            Ok(id) => outcome.session_id = id,
            Err(e) => return failed(outcome, format!("the session could not be stored: {e}")),
        }
        let _ = events.send(AgentEvent::TurnStarted {
            session_id: outcome.session_id.clone(),
        });
        if self.await_pending_tools(ops, events).await {
            outcome.stop_reason = TurnEnd::Interrupted;
            return outcome;
        }

        let specs: Vec<ToolSpec> = self.registry.specs().cloned().collect();
        let offered = build_tool_list(&specs, &context);
        let tools: Vec<ToolDef> = offered
            .iter()
            .map(|t| ToolDef {
                name: t.name.clone(),
                description: t.description.clone(),
                input_schema: t.input_schema.clone(),
            })
            .collect();
        // The focused note as the model sees it in this message is what it "read".
        if let Some(note) = &context.note {
            self.seen
                .insert(note.path.clone(), note.editor.text.clone());
        }

        let mut user = user_message(text, attachments, &context);
        for block in self.linked_notes(text, events) {
            user.content.push(Block::Text { text: block });
        }
        if let Err(e) = self.record(user) {
            return failed(outcome, e);
        }
        // Where this turn's messages start in the upstream history (for a fresh start when the
        // provider rejects a resumed history).
        let turn_start = self.history.len() - 1;
        let system = system_prompt(&self.workspace_name());
        let mut last_text = String::new();
        let mut retried_fresh = false;

        loop {
            if outcome.steps >= self.settings.max_steps {
                let message = format!(
                    "stopped after {} model responses without finishing (the limit is provider.max_steps = {}); send another message to let it continue",
                    outcome.steps, self.settings.max_steps
                );
                let _ = events.send(AgentEvent::Notice(message.clone()));
                outcome.stop_reason = TurnEnd::MaxSteps;
                outcome.error = Some(message);
                break;
            }
            outcome.steps += 1;
            let request = Request {
                model: self.settings.model.clone(),
                max_tokens: self.settings.max_tokens,
                system: system.clone(),
                tools: tools.clone(),
                messages: merged(&self.history),
            };
            let response = match self.stream(&request, ops, events).await {
                Streamed::Done(Ok(response)) => response,
                Streamed::Done(Err(e))
                    if e.is_rejected_history() && turn_start > 0 && !retried_fresh =>
                {
                    // A resumed conversation the provider no longer accepts (another model, an
                    // expired image): keep the local log, start the upstream context afresh.
                    retried_fresh = true;
                    outcome.steps -= 1;
                    self.history.drain(..turn_start);
                    let _ = events.send(AgentEvent::Notice(format!(
                        "the provider did not accept the stored conversation ({e}); continuing with a fresh context (the session keeps its history)"
                    )));
                    continue;
                }
                Streamed::Done(Err(e)) => {
                    outcome.stop_reason = TurnEnd::Error;
                    outcome.error = Some(e.to_string());
                    break;
                }
                Streamed::Interrupted(partial) => {
                    if !partial.is_empty() {
                        let _ = self.record(Message {
                            role: Role::Assistant,
                            content: vec![Block::Text {
                                text: format!("{partial}\n\n[interrupted by the person]"),
                            }],
                        });
                        last_text = partial;
                    }
                    outcome.stop_reason = TurnEnd::Interrupted;
                    break;
                }
            };
            outcome.usage.add(&response.usage);
            let _ = events.send(AgentEvent::Usage(response.usage));
            if let Err(e) = self.log.record_usage(&response.usage) {
                tracing::warn!("usage not stored: {e}");
            }
            let text_of_response = text_of(&response.content);
            if !text_of_response.is_empty() {
                last_text = text_of_response;
            }
            let calls: Vec<(String, String, serde_json::Value)> = response
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, name, input } => {
                        Some((id.clone(), name.clone(), input.clone()))
                    }
                    Block::Text { .. } | Block::Image { .. } | Block::ToolResult { .. } => None,
                })
                .collect();
            if !response.content.is_empty()
                && let Err(e) = self.record(Message {
                    role: Role::Assistant,
                    content: response.content.clone(),
                })
            {
                return failed(outcome, e);
            }
            match response.stop_reason {
                StopReason::ToolUse | StopReason::PauseTurn if !calls.is_empty() => {}
                StopReason::PauseTurn => continue,
                StopReason::MaxTokens => {
                    outcome.stop_reason = TurnEnd::MaxTokens;
                    let message = "the reply was cut off at the response token limit (provider.max_tokens); any tool call in it was not run".to_string();
                    let _ = events.send(AgentEvent::Notice(message.clone()));
                    outcome.error = Some(message);
                    self.answer_unrun(&calls, "not run: the response was cut off at max_tokens");
                    break;
                }
                StopReason::Refusal => {
                    outcome.stop_reason = TurnEnd::Refusal;
                    let detail = response
                        .stop_details
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default();
                    let message = format!("the model declined to answer{detail}");
                    let _ = events.send(AgentEvent::Notice(message.clone()));
                    outcome.error = Some(message);
                    self.answer_unrun(&calls, "not run: the model declined");
                    break;
                }
                StopReason::ContextWindowExceeded => {
                    outcome.stop_reason = TurnEnd::ContextWindowExceeded;
                    let message = "the conversation no longer fits the model's context window; start a new session (/new, or `ask` without --continue/--session)".to_string();
                    let _ = events.send(AgentEvent::Notice(message.clone()));
                    outcome.error = Some(message);
                    self.answer_unrun(&calls, "not run: the context window is full");
                    break;
                }
                StopReason::EndTurn
                | StopReason::StopSequence
                | StopReason::ToolUse
                | StopReason::Other(_) => {
                    if calls.is_empty() {
                        break;
                    }
                }
            }

            // Run the calls in order; all their results go back in one message.
            let mut results = Vec::with_capacity(calls.len());
            let mut interrupted = false;
            for (id, name, input) in &calls {
                if interrupted {
                    let record = ToolCallRecord {
                        id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                        is_error: true,
                        decision: CallDecision::Denied,
                        result: "not run: the person interrupted the turn".into(),
                    };
                    results.push(result_block(&record));
                    let _ = events.send(AgentEvent::ToolCallFinished(record.clone()));
                    outcome.tool_calls.push(record);
                    continue;
                }
                let mut done = self
                    .dispatch(
                        id,
                        name,
                        input,
                        &offered,
                        &mut context,
                        &mut state,
                        ops,
                        events,
                    )
                    .await;
                if done.record.is_error {
                    // Plans, session tools and refusals are not called through the registry;
                    // their errors may echo an argument of any size too.
                    done.record.result =
                        crate::quote::shorten_echoes(&done.record.result).into_owned();
                }
                interrupted = done.interrupted;
                results.push(result_block_with_images(&done.record, &done.images));
                let _ = events.send(AgentEvent::ToolCallFinished(done.record.clone()));
                outcome.tool_calls.push(done.record);
                outcome.edits.extend(done.edit);
            }
            if let Err(e) = self.record(Message {
                role: Role::User,
                content: results,
            }) {
                return failed(outcome, e);
            }
            if interrupted {
                outcome.stop_reason = TurnEnd::Interrupted;
                break;
            }
        }
        outcome.reply = last_text;
        outcome
    }

    /// Wait for the tools still being started and register them. `true` when the person
    /// interrupted (or shut down) first; the tools then stay pending for the next turn.
    async fn await_pending_tools(
        &mut self,
        ops: &mut mpsc::Receiver<Op>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> bool {
        let Some(mut pending) = self
            .pending_tools
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
        else {
            return false;
        };
        // Say why nothing happens only when the wait is long enough to notice.
        let slow = tokio::time::sleep(std::time::Duration::from_secs(1));
        tokio::pin!(slow);
        let mut told = false;
        loop {
            tokio::select! {
                biased;
                tools = &mut pending => {
                    for tool in tools {
                        self.registry.register(tool);
                    }
                    return false;
                }
                op = ops.recv() => match op {
                    Some(Op::Interrupt) | None => break,
                    Some(Op::Shutdown) => {
                        self.shutting_down = true;
                        break;
                    }
                    Some(Op::Decision { .. } | Op::EditorApplied { .. }) => {}
                    Some(Op::SetModel(model)) => self.settings.model = model,
                    Some(Op::UserTurn { .. }) => {
                        let _ = events.send(AgentEvent::Notice(
                            "a turn is already running; wait for it or interrupt it first".into(),
                        ));
                    }
                },
                () = &mut slow, if !told => {
                    told = true;
                    let _ = events.send(AgentEvent::Notice(
                        "waiting for the MCP servers to start before asking the model".into(),
                    ));
                }
            }
        }
        *self
            .pending_tools
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(pending);
        true
    }

    /// Stream one request, forwarding text as it comes; an interrupt drops the request.
    async fn stream(
        &mut self,
        request: &Request,
        ops: &mut mpsc::Receiver<Op>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> Streamed {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut partial = String::new();
        let provider = &self.provider;
        let call = provider.complete(request, &tx);
        tokio::pin!(call);
        let mut shutdown = false;
        let result = loop {
            tokio::select! {
                biased;
                op = ops.recv() => match op {
                    Some(Op::Interrupt) | None => break None,
                    Some(Op::Shutdown) => { shutdown = true; break None }
                    // Nothing is parked while the model writes; a stray answer is stale.
                    Some(Op::Decision { .. } | Op::EditorApplied { .. }) => {}
                    // The running request keeps its model; the next one uses the new one.
                    Some(Op::SetModel(model)) => self.settings.model = model,
                    Some(Op::UserTurn { .. }) => {
                        let _ = events.send(AgentEvent::Notice(
                            "a turn is already running; wait for it or interrupt it first".into(),
                        ));
                    }
                },
                Some(event) = rx.recv() => forward(event, &mut partial, events),
                result = &mut call => break Some(result),
            }
        };
        // Events sent just before the response completed.
        while let Ok(event) = rx.try_recv() {
            forward(event, &mut partial, events);
        }
        if shutdown {
            self.shutting_down = true;
        }
        match result {
            Some(result) => Streamed::Done(result),
            None => Streamed::Interrupted(partial),
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
    fn answer_unrun(&mut self, calls: &[(String, String, serde_json::Value)], why: &str) {
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
        let _ = self.record(Message {
            role: Role::User,
            content,
        });
    }

    /// The notes a message names with `[[…]]`, as context blocks. A link to a note the rules
    /// keep from the agent (a deny rule on its path) is left out, and the person is told.
    fn linked_notes(
        &mut self,
        text: &str,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> Vec<String> {
        let mut blocks = Vec::new();
        for target in crate::attach::wikilink_targets(text) {
            let (path, note) = match self.workspace.read_note_named(&target) {
                Ok(found) => found,
                Err(e) => {
                    let _ = events.send(AgentEvent::Notice(format!("[[{target}]]: {e}")));
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
                let _ = events.send(AgentEvent::Notice(format!(
                    "[[{target}]] was not sent to the model: {reason}"
                )));
                continue;
            }
            blocks.push(crate::attach::linked_note_block(&path, &note.text));
            self.seen.insert(path, note.text);
        }
        blocks
    }

    fn workspace_name(&self) -> String {
        self.workspace
            .vault()
            .root()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "vault".into())
    }
}

fn forward(event: StreamEvent, partial: &mut String, events: &mpsc::UnboundedSender<AgentEvent>) {
    match event {
        StreamEvent::TextDelta(text) => {
            partial.push_str(&text);
            let _ = events.send(AgentEvent::TextDelta(text));
        }
        // The call is announced when it is complete and about to run.
        StreamEvent::ToolUseStarted { .. } => {}
    }
}

fn failed(mut outcome: TurnOutcome, error: String) -> TurnOutcome {
    outcome.stop_reason = TurnEnd::Error;
    outcome.error = Some(error);
    outcome
}

fn result_block(record: &ToolCallRecord) -> Block {
    result_block_with_images(record, &[])
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

/// The text blocks of a response, joined.
fn text_of(content: &[Block]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            Block::Image { .. } | Block::ToolUse { .. } | Block::ToolResult { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// The history with consecutive messages of one role merged (after an interrupted turn the
/// next message follows a user message; providers want roles to alternate). Tool results stay
/// first in a merged user message, as Anthropic requires.
fn merged(history: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(history.len());
    for message in history {
        match out.last_mut() {
            Some(last) if last.role == message.role => {
                last.content.extend(message.content.iter().cloned());
                // Stable: tool results before anything else.
                last.content
                    .sort_by_key(|b| !matches!(b, Block::ToolResult { .. }));
            }
            _ => out.push(message.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(role: Role, t: &str) -> Message {
        Message {
            role,
            content: vec![Block::Text { text: t.into() }],
        }
    }

    #[test]
    fn consecutive_user_messages_merge_with_results_first() {
        let history = vec![
            text(Role::User, "a"),
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "t".into(),
                    content: vec![],
                    is_error: true,
                }],
            },
            text(Role::Assistant, "b"),
        ];
        let merged = merged(&history);
        assert_eq!(merged.len(), 2);
        assert!(matches!(merged[0].content[0], Block::ToolResult { .. }));
        assert!(matches!(&merged[0].content[1], Block::Text { text } if text == "a"));
    }

    #[test]
    fn alternating_history_is_unchanged() {
        let history = vec![text(Role::User, "a"), text(Role::Assistant, "b")];
        assert_eq!(merged(&history), history);
    }
}
