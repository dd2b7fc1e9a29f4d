//! Long sessions (docs/architecture.md, "Long sessions"): before a request would fill more than
//! the threshold of the model's context window, the older part of the conversation is compacted —
//! first the tool results of earlier turns are shortened, then, if that is not enough, the older
//! turns are summarised by the model into one summary message. The system prompt, the tools and
//! the current turn (with the focused note it carries) are never touched. A provider's
//! context-overflow error forces one compaction and one retry. The stored messages never change:
//! the compaction state is stored beside them and a resumed session continues from it.

mod plan;
mod summary;

pub use plan::upstream;

use super::inbox::Inbox;
use super::request::{Purpose, Sent, text_of, tool_defs};
use super::session::CompactionState;
use super::{Agent, AgentEvent};
use crate::llm::{Message, Request, ToolDef, Usage, tokens};
use serde::Serialize;

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    /// The next request would pass the threshold of the window.
    Threshold,
    /// The provider said the request does not fit its context window.
    Overflow,
    /// The person asked for it (`/compact`).
    Command,
    /// A new session continues an earlier one from its summary.
    ContinueNew,
}

impl CompactReason {
    /// The word stored with the compaction.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactReason::Threshold => "threshold",
            CompactReason::Overflow => "overflow",
            CompactReason::Command => "command",
            CompactReason::ContinueNew => "continue_new",
        }
    }
}

/// One compaction, as the front ends show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactionInfo {
    pub reason: CompactReason,
    /// The new summary, when the compaction made one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// How many stored messages the summary stands for, all told.
    pub summarised_messages: usize,
    /// How many stored messages are sent with their tool results shortened, all told.
    pub shortened_messages: usize,
    /// The estimated tokens of the conversation before and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The model requests the summary took.
    pub summary_requests: u32,
}

/// One line for the person about a compaction.
pub fn compaction_line(info: &CompactionInfo) -> String {
    let why = match info.reason {
        CompactReason::Threshold => "the conversation neared the context window",
        CompactReason::Overflow => {
            "the provider said the conversation overflowed its context window"
        }
        CompactReason::Command => "compacted on request",
        CompactReason::ContinueNew => "continued from the summary of the earlier session",
    };
    let what = match (&info.summary, info.reason) {
        (_, CompactReason::ContinueNew) => return why.to_string(),
        (Some(_), _) => format!("{} older messages summarised", info.summarised_messages),
        (None, _) => "older tool results shortened".to_string(),
    };
    format!(
        "{why}: {what} (about {} → {} tokens)",
        info.tokens_before, info.tokens_after
    )
}

/// How much of the context window a session may fill.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextSettings {
    /// The model's context window, in tokens.
    pub window: u64,
    /// The share of the window a request may fill before it is compacted.
    pub threshold: f64,
    /// Compact before the threshold is passed (else only `/compact` and overflow errors do).
    pub auto: bool,
}

impl ContextSettings {
    /// The most tokens a request may be before it is compacted.
    pub fn limit(&self) -> u64 {
        // Truncation is fine: this is a budget, not a count.
        (self.window as f64 * self.threshold) as u64
    }

    /// The most tokens a summary may be.
    pub fn summary_tokens(&self, max_tokens: u32) -> u32 {
        let tenth = u32::try_from(self.window / 10).unwrap_or(u32::MAX);
        max_tokens.min(tenth.max(256)).min(2_048)
    }
}

impl Default for ContextSettings {
    fn default() -> Self {
        Self {
            window: crate::llm::window::DEFAULT_CONTEXT_WINDOW,
            threshold: 0.8,
            auto: true,
        }
    }
}

/// What the provider last said a request cost, to estimate the next one from (the estimator
/// alone may be off for the model's tokenizer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Calibration {
    /// Input tokens of the request, cached ones included.
    tokens: u64,
    /// How many upstream messages it held.
    messages: usize,
}

/// Reported ÷ estimated tokens of the last request, kept within these bounds (a server that
/// reports nonsense must not make compaction run on every request or never).
const RATIO_BOUNDS: (f64, f64) = (0.5, 4.0);

/// Why a compaction failed (said to the person).
type CompactError = String;

impl Agent {
    /// The estimated input tokens of `request`: the estimator's count, or the last reported
    /// usage plus the estimate of what was appended since, whichever is more.
    pub(super) fn estimated_tokens(&self, request: &Request) -> u64 {
        let estimate = self.scaled(tokens::estimate_request(request));
        let calibrated = self.calibration.and_then(|c| {
            let appended = self.history.get(c.messages..)?;
            let model = request.model.as_str();
            Some(
                c.tokens
                    + self.scaled(
                        appended
                            .iter()
                            .map(|m| tokens::estimate_message(model, m))
                            .sum::<u64>(),
                    ),
            )
        });
        estimate.max(calibrated.unwrap_or(0))
    }

    /// An estimator's count scaled by how far off it was for the last reported request.
    pub(super) fn scaled(&self, estimate: u64) -> u64 {
        // A budget, not a count: rounding either way is fine.
        (estimate as f64 * self.token_ratio).ceil() as u64
    }

    /// Remember what the provider said `request` (of `messages` upstream messages) cost.
    pub(super) fn calibrate(&mut self, usage: &Usage, request: &Request, messages: usize) {
        let tokens =
            usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
        if tokens == 0 || usage.estimated {
            // The server reports no usage (what is there is our own estimate): the estimator
            // alone it is.
            return;
        }
        let estimate = tokens::estimate_request(request).max(1);
        self.token_ratio = (tokens as f64 / estimate as f64).clamp(RATIO_BOUNDS.0, RATIO_BOUNDS.1);
        self.calibration = Some(Calibration { tokens, messages });
    }

    /// Compact when the next request (`system`, `tools` and the history) would pass the
    /// threshold. A failed summary is said and the request goes ahead as it is.
    pub(super) async fn compact_if_needed(
        &mut self,
        system: &str,
        tools: &[ToolDef],
        usage: &mut Usage,
        inbox: &mut Inbox<'_>,
    ) {
        if !self.settings.context.auto {
            return;
        }
        let request = self.request_of(system, tools);
        if self.estimated_tokens(&request) <= self.settings.context.limit() {
            return;
        }
        if let Err(e) = self
            .compact(CompactReason::Threshold, system, tools, usage, inbox)
            .await
        {
            inbox.notice(format!("the conversation could not be compacted: {e}"));
        }
    }

    /// Compact the conversation for `reason`; `Ok(false)` when there was nothing to compact.
    /// Summary requests are added to `usage`, shown and stored like every response.
    pub(super) async fn compact(
        &mut self,
        reason: CompactReason,
        system: &str,
        tools: &[ToolDef],
        usage: &mut Usage,
        inbox: &mut Inbox<'_>,
    ) -> Result<bool, CompactError> {
        let model = self.settings.model.clone();
        let before = self.estimated_tokens(&self.request_of(system, tools));
        let budget = plan::Budget {
            pinned: self.scaled(tokens::estimate_request(&Request {
                model: model.clone(),
                max_tokens: 0,
                system: system.to_string(),
                tools: tools.to_vec(),
                messages: Vec::new(),
            })),
            limit: self.settings.context.limit(),
            summary: u64::from(
                self.settings
                    .context
                    .summary_tokens(self.settings.max_tokens),
            ),
        };
        let force = matches!(reason, CompactReason::Overflow | CompactReason::Command);
        let estimate = |m: &Message| self.scaled(tokens::estimate_message(&model, m));
        let log = self.log.upstream_history();
        let chosen = plan::choose(&log, &self.compaction, &budget, &estimate, force);
        let (state, made, requests) = match chosen {
            plan::Plan::Nothing => return Ok(false),
            plan::Plan::Shorten { shortened } => (
                CompactionState {
                    shortened,
                    ..self.compaction.clone()
                },
                None,
                0,
            ),
            plan::Plan::Summarise {
                from,
                to,
                shortened,
            } => {
                let earlier = self.compaction.summary.clone();
                let (text, requests) = self
                    .summarise(earlier.as_deref(), &log[from..to], usage, inbox)
                    .await?;
                let state = CompactionState {
                    summarised: to,
                    shortened,
                    summary: Some(text.clone()),
                };
                (state, Some(text), requests)
            }
        };
        self.apply_compaction(state, reason)?;
        let after = self.estimated_tokens(&self.request_of(system, tools));
        inbox.send(AgentEvent::Compacted(CompactionInfo {
            reason,
            summary: made,
            summarised_messages: self.compaction.summarised,
            shortened_messages: self.compaction.shortened,
            tokens_before: before,
            tokens_after: after,
            summary_requests: requests,
        }));
        Ok(true)
    }

    /// `/compact` between turns: summarise everything before the last turn now. The session
    /// must exist (a new one has nothing to compact).
    pub(super) async fn compact_on_request(&mut self, inbox: &mut Inbox<'_>) {
        let specs: Vec<crate::tools::ToolSpec> = self.registry.specs().cloned().collect();
        let offered = super::build_tool_list(&specs, &super::NoteContext::default());
        let tools = tool_defs(&offered);
        let system = self.system();
        let mut usage = Usage::default();
        match self
            .compact(CompactReason::Command, &system, &tools, &mut usage, inbox)
            .await
        {
            Ok(true) => {}
            Ok(false) => inbox.notice(
                "nothing to compact: the conversation holds no finished turn that is not compacted already",
            ),
            Err(e) => inbox.notice(format!("the conversation could not be compacted: {e}")),
        }
    }

    /// Store `state` for the session and send the conversation under it from now on.
    fn apply_compaction(
        &mut self,
        state: CompactionState,
        reason: CompactReason,
    ) -> Result<(), CompactError> {
        self.log
            .record_compaction(&state, reason.as_str())
            .map_err(|e| format!("the compaction could not be stored: {e}"))?;
        self.history = upstream(&self.log.upstream_history(), &state);
        self.compaction = state;
        self.calibration = None;
        Ok(())
    }

    /// A new session that continues `parent`: its first upstream message is the summary of the
    /// parent's conversation (made now, with the parent's own summary as its start).
    pub(super) async fn seed_from_parent(
        &mut self,
        usage: &mut Usage,
        inbox: &mut Inbox<'_>,
    ) -> Result<(), CompactError> {
        let Some(parent) = self.log.take_parent() else {
            return Ok(());
        };
        let messages = &parent.messages[parent.state.summarised.min(parent.messages.len())..];
        if messages.is_empty() && parent.state.summary.is_none() {
            return Ok(());
        }
        let (text, requests) = if messages.is_empty() {
            (parent.state.summary.clone().unwrap_or_default(), 0)
        } else {
            self.summarise(parent.state.summary.as_deref(), messages, usage, inbox)
                .await?
        };
        let sent = self.log.upstream_history().len();
        let state = CompactionState {
            summarised: sent,
            shortened: sent,
            summary: Some(text.clone()),
        };
        self.apply_compaction(state, CompactReason::ContinueNew)?;
        inbox.send(AgentEvent::Compacted(CompactionInfo {
            reason: CompactReason::ContinueNew,
            summary: Some(text),
            summarised_messages: 0,
            shortened_messages: 0,
            tokens_before: 0,
            tokens_after: 0,
            summary_requests: requests,
        }));
        Ok(())
    }

    /// The summary of `messages` after `earlier`: the transcript in pieces that fit half the
    /// budget, each summarised together with the summary so far. Returns the summary and the
    /// number of requests.
    async fn summarise(
        &mut self,
        earlier: Option<&str>,
        messages: &[Message],
        usage: &mut Usage,
        inbox: &mut Inbox<'_>,
    ) -> Result<(String, u32), CompactError> {
        // Three characters a token is a safe side for prose, Markdown and JSON alike.
        let piece_chars = usize::try_from(self.settings.context.limit() / 2 * 3)
            .unwrap_or(usize::MAX)
            .max(2_000);
        let max_tokens = self
            .settings
            .context
            .summary_tokens(self.settings.max_tokens);
        let mut summary = earlier.map(str::to_string);
        let mut requests = 0;
        for piece in summary::pieces(&summary::transcript(messages), piece_chars) {
            let request =
                summary::request(&self.settings.model, max_tokens, summary.as_deref(), &piece);
            requests += 1;
            let response = match self
                .send_request(&request, Purpose::Summary, usage, inbox)
                .await
            {
                Sent::Done(response) => response,
                Sent::Failed(e) => return Err(format!("the summary request failed: {e}")),
                Sent::Interrupted(_) => return Err("interrupted".into()),
            };
            let text = text_of(&response.content);
            if text.trim().is_empty() {
                return Err("the model answered the summary request with no text".into());
            }
            summary = Some(text);
        }
        Ok((summary.unwrap_or_default(), requests))
    }
}
