//! Provider requests, in one place for a turn's steps and for compaction's summary requests: the
//! request the history makes now (system prompt, tools, the history with roles merged), sending
//! it while the op inbox is watched (an interrupt drops it), and counting its response's usage.
//! A step shows its text as it streams; a summary is not a reply and streams quietly.

use super::inbox::{BUSY, Inbox, WaitState};
use super::{Agent, AgentEvent};
use crate::llm::{Block, LlmError, Message, Request, Response, StreamEvent, ToolDef, Usage};
use crate::tools::ToolSpec;
use tokio::sync::mpsc;

/// What a request is for: whether its text is shown as it streams, and how its usage is named
/// when it could not be stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// One model response of a turn: text and reasoning go to the front end as they come.
    Step,
    /// A compaction's summary request: nothing is shown (the summary arrives in the response).
    Summary,
}

impl Purpose {
    /// The usage row of the response, as the person is told when it could not be stored.
    fn usage_name(self) -> &'static str {
        match self {
            Purpose::Step => "the usage of a response",
            Purpose::Summary => "the usage of a summary request",
        }
    }
}

/// How a sent request ended.
pub(super) enum Sent {
    /// The provider answered; the response's usage is counted already.
    Done(Response),
    /// The provider failed the request.
    Failed(LlmError),
    /// The person interrupted it; the text that had streamed so far (always empty for a summary).
    Interrupted(String),
}

impl Agent {
    /// The request the history makes now, with `system` and `tools`.
    pub(super) fn request_of(&self, system: &str, tools: &[ToolDef]) -> Request {
        Request {
            model: self.settings.model.clone(),
            max_tokens: self.settings.max_tokens,
            system: system.to_string(),
            tools: tools.to_vec(),
            messages: merged(&self.history),
        }
    }

    /// The system prompt for this vault.
    pub(super) fn system(&self) -> String {
        let name = self
            .workspace
            .vault()
            .root()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "vault".into());
        super::prompt::system_prompt(&name)
    }

    /// Send `request` for `purpose`; a response's usage is added to `total`, shown and stored.
    pub(super) async fn send_request(
        &mut self,
        request: &Request,
        purpose: Purpose,
        total: &mut Usage,
        inbox: &mut Inbox<'_>,
    ) -> Sent {
        let (result, partial) = self.stream(request, purpose, inbox).await;
        match result {
            Some(Ok(response)) => {
                self.count_usage(&response.usage, &request.model, total, purpose, inbox);
                Sent::Done(response)
            }
            Some(Err(e)) => Sent::Failed(e),
            None => Sent::Interrupted(partial),
        }
    }

    /// Stream one request, forwarding what `purpose` shows as it comes; `None` when an interrupt
    /// dropped it, with the text that had streamed.
    async fn stream(
        &mut self,
        request: &Request,
        purpose: Purpose,
        inbox: &mut Inbox<'_>,
    ) -> (Option<Result<Response, LlmError>>, String) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut partial = String::new();
        let events = inbox.events.clone();
        let result = {
            let provider = &self.provider;
            let partial = &mut partial;
            let rx = &mut rx;
            let events = &events;
            let work = async move {
                let call = provider.complete(request, &tx);
                tokio::pin!(call);
                loop {
                    tokio::select! {
                        biased;
                        // Always drained, so the channel never grows.
                        Some(event) = rx.recv() => forward(event, purpose, partial, events),
                        result = &mut call => break result,
                    }
                }
            };
            let state = WaitState {
                model: &mut self.settings.model,
                shutting_down: &mut self.shutting_down,
            };
            inbox.wait(work, state, BUSY, |_| None).await
        };
        // Events sent just before the response completed.
        while let Ok(event) = rx.try_recv() {
            forward(event, purpose, &mut partial, &events);
        }
        (result, partial)
    }

    /// A response's usage: added to `total`, shown, stored against the model that answered.
    fn count_usage(
        &mut self,
        usage: &Usage,
        model: &str,
        total: &mut Usage,
        purpose: Purpose,
        inbox: &Inbox<'_>,
    ) {
        total.add(usage);
        inbox.send(AgentEvent::Usage(*usage));
        if let Err(e) = self
            .log
            .record_usage(usage, &self.settings.provider_name, model)
        {
            self.unrecorded(purpose.usage_name(), &e, inbox);
        }
    }
}

/// One stream event: a step's text and reasoning go to the front end (the text also to
/// `partial`, kept if the person interrupts); a summary's are dropped.
fn forward(
    event: StreamEvent,
    purpose: Purpose,
    partial: &mut String,
    events: &mpsc::UnboundedSender<AgentEvent>,
) {
    match purpose {
        Purpose::Step => {}
        Purpose::Summary => return,
    }
    match event {
        StreamEvent::TextDelta(text) => {
            partial.push_str(&text);
            if events.send(AgentEvent::TextDelta(text)).is_err() {
                tracing::debug!("the front end is gone");
            }
        }
        // Shown as it comes, never part of the reply (nor of the partial text an interrupt keeps).
        StreamEvent::ThinkingDelta(text) => {
            if events.send(AgentEvent::ThinkingDelta(text)).is_err() {
                tracing::debug!("the front end is gone");
            }
        }
        // The call is announced when it is complete and about to run.
        StreamEvent::ToolUseStarted { .. } => {}
    }
}

/// The tools offered, as the provider wants them.
pub(super) fn tool_defs(offered: &[ToolSpec]) -> Vec<ToolDef> {
    offered
        .iter()
        .map(|t| ToolDef {
            name: t.name.clone(),
            description: t.description.clone(),
            input_schema: t.input_schema.clone(),
        })
        .collect()
}

/// The text blocks of a response, joined.
pub(super) fn text_of(content: &[Block]) -> String {
    // Reasoning is never part of the reply (`Block::text` leaves it out).
    content
        .iter()
        .filter_map(Block::text)
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
    use crate::llm::Role;

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
