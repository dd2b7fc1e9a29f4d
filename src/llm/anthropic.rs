//! Anthropic Messages API: the request body (with prompt-cache breakpoints) and the stream
//! accumulator (docs/protocols.md §1).
//!
//! Caching works on byte-identical prefixes (tools → system → messages), so the body is built
//! from structs whose field order is fixed and from [`serde_json::Value`]s whose keys serialise
//! sorted: request N+1 repeats request N's messages byte for byte, except for the one moving
//! breakpoint on the last block of the last message.

use super::StreamAccumulator;
use super::error::{LlmError, error_from_value};
use super::sse::SseEvent;
use super::types::{
    Block, Message, Request, Response, ResultPart, Role, StopReason, StreamEvent, ToolDef, Usage,
    push_text,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The API version every official SDK sends.
pub(crate) const API_VERSION: &str = "2023-06-01";

/// The endpoint for a base URL given without `/v1` (a base that already ends in `/v1` is accepted
/// too, because people copy it from OpenAI-style settings).
pub(crate) fn messages_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

/// The JSON body of a streaming Messages request; `thinking_budget` > 0 turns extended thinking
/// on with that many tokens to think in.
pub(crate) fn request_body(
    request: &Request,
    thinking_budget: u32,
) -> Result<String, serde_json::Error> {
    serde_json::to_string(&WireRequest::new(request, thinking_budget))
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    /// No temperature or top_k is ever sent: thinking refuses them.
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<WireThinking>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<WireSystemText<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice>,
    messages: Vec<WireMessage<'a>>,
}

/// `{"type": "enabled", "budget_tokens": N}`.
#[derive(Serialize)]
struct WireThinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

/// The answer's `max_tokens` must exceed the thinking budget (thinking counts against it): a
/// limit at or below the budget gets the budget added, so the answer keeps the room it had.
fn max_tokens_with_thinking(max_tokens: u32, thinking_budget: u32) -> u32 {
    if thinking_budget > 0 && max_tokens <= thinking_budget {
        thinking_budget.saturating_add(max_tokens.max(1))
    } else {
        max_tokens
    }
}

impl<'a> WireRequest<'a> {
    fn new(request: &'a Request, thinking_budget: u32) -> Self {
        let thinking = thinking_budget > 0;
        let system = if request.system.is_empty() {
            Vec::new()
        } else {
            vec![WireSystemText {
                kind: "text",
                text: &request.system,
                cache_control: CacheControl::EPHEMERAL,
            }]
        };
        let last_tool = request.tools.len().checked_sub(1);
        let tools = request
            .tools
            .iter()
            .enumerate()
            .map(|(i, tool)| WireTool::new(tool, Some(i) == last_tool))
            .collect();
        let mut messages: Vec<WireMessage<'a>> = request
            .messages
            .iter()
            .map(|message| WireMessage::new(message, thinking))
            .collect();
        if let Some(last_block) = messages.last_mut().and_then(|m| m.content.last_mut()) {
            last_block.cache_control = Some(CacheControl::EPHEMERAL);
        }
        Self {
            model: &request.model,
            max_tokens: max_tokens_with_thinking(request.max_tokens, thinking_budget),
            stream: true,
            thinking: thinking.then_some(WireThinking {
                kind: "enabled",
                budget_tokens: thinking_budget,
            }),
            system,
            tools,
            tool_choice: (!request.tools.is_empty()).then_some(WireToolChoice { kind: "auto" }),
            messages,
        }
    }
}

#[derive(Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

impl CacheControl {
    /// The 5-minute cache, refreshed on every hit.
    const EPHEMERAL: Self = Self { kind: "ephemeral" };
}

#[derive(Serialize)]
struct WireSystemText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

#[derive(Serialize)]
struct WireToolChoice {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

impl<'a> WireTool<'a> {
    fn new(tool: &'a ToolDef, is_last: bool) -> Self {
        Self {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.input_schema,
            cache_control: is_last.then_some(CacheControl::EPHEMERAL),
        }
    }
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
}

impl<'a> WireMessage<'a> {
    /// With thinking on, signed thinking blocks go back unchanged and in place (the API checks
    /// them in a tool loop); unsigned ones (from an OpenAI-compatible server) cannot be sent.
    /// With thinking off they are all left out.
    fn new(message: &'a Message, thinking: bool) -> Self {
        Self {
            role: match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            },
            content: message
                .content
                .iter()
                .filter(|block| match block {
                    Block::Thinking { signature, .. } => thinking && !signature.is_empty(),
                    Block::RedactedThinking { .. } => thinking,
                    Block::Text { .. }
                    | Block::Image { .. }
                    | Block::ToolUse { .. }
                    | Block::ToolResult { .. } => true,
                })
                .map(WireBlock::new)
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct WireBlock<'a> {
    #[serde(flatten)]
    body: WireBlockBody<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlockBody<'a> {
    Text {
        text: &'a str,
    },
    Image {
        source: WireImageSource<'a>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: Vec<WireResultPart<'a>>,
        #[serde(skip_serializing_if = "is_false")]
        is_error: bool,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
}

fn is_false(value: &bool) -> bool {
    !value
}

impl<'a> WireBlock<'a> {
    fn new(block: &'a Block) -> Self {
        let body = match block {
            Block::Text { text } => WireBlockBody::Text { text },
            Block::Image { media_type, data } => WireBlockBody::Image {
                source: WireImageSource::new(media_type, data),
            },
            Block::ToolUse { id, name, input } => WireBlockBody::ToolUse { id, name, input },
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => WireBlockBody::ToolResult {
                tool_use_id,
                content: content.iter().map(WireResultPart::new).collect(),
                is_error: *is_error,
            },
            Block::Thinking { text, signature } => WireBlockBody::Thinking {
                thinking: text,
                signature,
            },
            Block::RedactedThinking { data } => WireBlockBody::RedactedThinking { data },
        };
        Self {
            body,
            cache_control: None,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireResultPart<'a> {
    Text { text: &'a str },
    Image { source: WireImageSource<'a> },
}

impl<'a> WireResultPart<'a> {
    fn new(part: &'a ResultPart) -> Self {
        match part {
            ResultPart::Text { text } => Self::Text { text },
            ResultPart::Image { media_type, data } => Self::Image {
                source: WireImageSource::new(media_type, data),
            },
        }
    }
}

#[derive(Serialize)]
struct WireImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

impl<'a> WireImageSource<'a> {
    fn new(media_type: &'a str, data: &'a str) -> Self {
        Self {
            kind: "base64",
            media_type,
            data,
        }
    }
}

// ---- the stream ----------------------------------------------------------------------------

/// A stream event, tolerant of everything this version does not know (docs/protocols.md §1.2: "handle
/// unknown event types gracefully").
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: WireStartBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: WireDelta,
    },
    /// Tool input is parsed once the whole message is in, so the index is not needed here.
    ContentBlockStop {},
    MessageDelta {
        delta: WireMessageDelta,
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        error: Option<Value>,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct WireMessageStart {
    usage: Option<WireUsage>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireStartBlock {
    Text {
        text: Option<String>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Option<Value>,
    },
    Thinking {
        thinking: Option<String>,
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    /// Server tools, fallback markers…: not part of what vaultchat sends back.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    /// The whole signature, at the end of a thinking block.
    SignatureDelta {
        signature: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireMessageDelta {
    stop_reason: Option<String>,
    stop_details: Option<Value>,
}

/// Events that must parse; anything else that does not is skipped.
const KNOWN_EVENTS: [&str; 6] = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
];

/// One content block as it streams in.
#[derive(Debug)]
enum Slot {
    Text(String),
    Tool {
        id: String,
        name: String,
        /// The `input_json_delta` fragments so far.
        json: String,
        /// The input from `content_block_start`, used when no fragment arrives.
        initial: Option<Value>,
    },
    Thinking {
        text: String,
        signature: String,
    },
    RedactedThinking(String),
    Ignored,
}

/// Builds a [`Response`] from the events of one Messages stream. Pure: no I/O.
#[derive(Debug, Default)]
pub(crate) struct AnthropicStream {
    /// Blocks by their `index` (their position in the final content).
    slots: BTreeMap<usize, Slot>,
    usage: Usage,
    stop_reason: Option<String>,
    stop_details: Option<String>,
    complete: bool,
    /// Any event arrived (a stream of none is reported as empty, not as cut off).
    saw_event: bool,
    request_id: Option<String>,
}

impl AnthropicStream {
    /// An accumulator for the response with this request id.
    pub(crate) fn new(request_id: Option<String>) -> Self {
        Self {
            request_id,
            ..Self::default()
        }
    }

    fn malformed(&self, message: String) -> LlmError {
        LlmError::Malformed {
            message,
            request_id: self.request_id.clone(),
        }
    }

    fn merge_usage(&mut self, usage: &WireUsage) {
        // The SDK rule (docs/protocols.md §1.2): `message_delta` always sets output_tokens and
        // overwrites the other counts only when present, because the cache counts may come only
        // in `message_start`.
        if let Some(n) = usage.input_tokens {
            self.usage.input_tokens = n;
        }
        if let Some(n) = usage.output_tokens {
            self.usage.output_tokens = n;
        }
        if let Some(n) = usage.cache_creation_input_tokens {
            self.usage.cache_creation_input_tokens = n;
        }
        if let Some(n) = usage.cache_read_input_tokens {
            self.usage.cache_read_input_tokens = n;
        }
    }

    fn start_block(&mut self, index: usize, block: WireStartBlock) -> Vec<StreamEvent> {
        match block {
            WireStartBlock::Text { text } => {
                let text = text.unwrap_or_default();
                let live = (!text.is_empty()).then(|| StreamEvent::TextDelta(text.clone()));
                self.slots.insert(index, Slot::Text(text));
                live.into_iter().collect()
            }
            WireStartBlock::ToolUse { id, name, input } => {
                let live = StreamEvent::ToolUseStarted {
                    id: id.clone(),
                    name: name.clone(),
                };
                self.slots.insert(
                    index,
                    Slot::Tool {
                        id,
                        name,
                        json: String::new(),
                        initial: input,
                    },
                );
                vec![live]
            }
            WireStartBlock::Thinking {
                thinking,
                signature,
            } => {
                let text = thinking.unwrap_or_default();
                let live = (!text.is_empty()).then(|| StreamEvent::ThinkingDelta(text.clone()));
                self.slots.insert(
                    index,
                    Slot::Thinking {
                        text,
                        signature: signature.unwrap_or_default(),
                    },
                );
                live.into_iter().collect()
            }
            WireStartBlock::RedactedThinking { data } => {
                self.slots.insert(index, Slot::RedactedThinking(data));
                Vec::new()
            }
            WireStartBlock::Other => {
                self.slots.insert(index, Slot::Ignored);
                Vec::new()
            }
        }
    }

    fn apply_delta(&mut self, index: usize, delta: WireDelta) -> Vec<StreamEvent> {
        match delta {
            WireDelta::TextDelta { text } => {
                // A delta for a block that never started is kept rather than lost.
                let slot = self
                    .slots
                    .entry(index)
                    .or_insert_with(|| Slot::Text(String::new()));
                match slot {
                    Slot::Text(so_far) => {
                        so_far.push_str(&text);
                        if text.is_empty() {
                            Vec::new()
                        } else {
                            vec![StreamEvent::TextDelta(text)]
                        }
                    }
                    _ => Vec::new(),
                }
            }
            WireDelta::InputJsonDelta { partial_json } => {
                if let Some(Slot::Tool { json, .. }) = self.slots.get_mut(&index) {
                    json.push_str(&partial_json);
                } else {
                    tracing::debug!(
                        index,
                        "input_json_delta for a block that is not a tool call"
                    );
                }
                Vec::new()
            }
            WireDelta::ThinkingDelta { thinking } => match self.slots.get_mut(&index) {
                Some(Slot::Thinking { text, .. }) if !thinking.is_empty() => {
                    text.push_str(&thinking);
                    vec![StreamEvent::ThinkingDelta(thinking)]
                }
                _ => Vec::new(),
            },
            WireDelta::SignatureDelta { signature: more } => {
                if let Some(Slot::Thinking { signature, .. }) = self.slots.get_mut(&index) {
                    // Sent whole, once; appending also keeps a signature that came in pieces.
                    signature.push_str(&more);
                }
                Vec::new()
            }
            WireDelta::Other => Vec::new(),
        }
    }

    fn stop_details_text(details: &Value) -> Option<String> {
        match details {
            Value::String(text) => Some(text.clone()),
            Value::Object(fields) => ["explanation", "category"]
                .iter()
                .find_map(|key| fields.get(*key).and_then(Value::as_str))
                .map(str::to_string),
            _ => None,
        }
    }
}

impl StreamAccumulator for AnthropicStream {
    fn push(&mut self, event: SseEvent) -> Result<Vec<StreamEvent>, LlmError> {
        self.saw_event = true;
        let name = event.event.as_deref().unwrap_or_default();
        if self.complete || name == "ping" {
            return Ok(Vec::new());
        }
        let parsed = match serde_json::from_str::<WireEvent>(&event.data) {
            Ok(parsed) => parsed,
            Err(_) if name == "error" => {
                return Err(LlmError::MidStream {
                    error_type: "error".into(),
                    message: event.data.chars().take(400).collect(),
                    request_id: self.request_id.clone(),
                });
            }
            Err(e) if KNOWN_EVENTS.contains(&name) => {
                return Err(self.malformed(format!("a {name} event that does not parse ({e})")));
            }
            Err(e) => {
                tracing::debug!(event = name, error = %e, "skipping an unreadable stream event");
                return Ok(Vec::new());
            }
        };
        Ok(match parsed {
            WireEvent::MessageStart { message } => {
                self.merge_usage(&message.usage.unwrap_or_default());
                Vec::new()
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block),
            WireEvent::ContentBlockDelta { index, delta } => self.apply_delta(index, delta),
            WireEvent::ContentBlockStop {} | WireEvent::Unknown => Vec::new(),
            WireEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                if let Some(details) = delta
                    .stop_details
                    .as_ref()
                    .and_then(Self::stop_details_text)
                {
                    self.stop_details = Some(details);
                }
                self.merge_usage(&usage.unwrap_or_default());
                Vec::new()
            }
            WireEvent::MessageStop => {
                self.complete = true;
                Vec::new()
            }
            WireEvent::Error { error } => {
                let body = error_from_value(&serde_json::json!({ "error": error }));
                return Err(LlmError::MidStream {
                    error_type: body.error_type.unwrap_or_else(|| "error".into()),
                    message: body.message,
                    request_id: self.request_id.clone(),
                });
            }
        })
    }

    fn is_complete(&self) -> bool {
        self.complete
    }

    fn finish(self) -> Result<Response, LlmError> {
        if !self.complete && !self.saw_event {
            return Err(LlmError::EmptyStream {
                request_id: self.request_id,
            });
        }
        if !self.complete {
            return Err(LlmError::Incomplete {
                expected: "message_stop",
                request_id: self.request_id,
            });
        }
        let stop_reason = match &self.stop_reason {
            Some(reason) => StopReason::from_anthropic(reason),
            None => {
                tracing::warn!("the stream completed without a stop reason; taking it as end_turn");
                StopReason::EndTurn
            }
        };
        let mut content = Vec::new();
        for slot in self.slots.values() {
            match slot {
                Slot::Text(text) => push_text(&mut content, text),
                Slot::Tool {
                    id,
                    name,
                    json,
                    initial,
                } => {
                    let input = if json.trim().is_empty() {
                        Ok(initial.clone().unwrap_or_else(|| serde_json::json!({})))
                    } else {
                        serde_json::from_str::<Value>(json)
                    };
                    match input {
                        Ok(input) => content.push(Block::ToolUse {
                            id: id.clone(),
                            name: name.clone(),
                            input,
                        }),
                        // Cut off by max_tokens: the call is incomplete and must never run.
                        Err(_) if stop_reason == StopReason::MaxTokens => {
                            tracing::warn!(tool = %name, "dropping a tool call cut off by max_tokens");
                        }
                        Err(e) => {
                            return Err(self.malformed(format!(
                                "the input of the {name} tool call is not valid JSON ({e})"
                            )));
                        }
                    }
                }
                Slot::Thinking { text, signature } => content.push(Block::Thinking {
                    text: text.clone(),
                    signature: signature.clone(),
                }),
                Slot::RedactedThinking(data) => {
                    content.push(Block::RedactedThinking { data: data.clone() })
                }
                Slot::Ignored => {}
            }
        }
        Ok(Response {
            content,
            stop_reason,
            stop_details: self.stop_details,
            usage: self.usage,
            request_id: self.request_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::sse::SseParser;
    use crate::llm::sse::tests::fixture;
    use serde_json::json;

    /// Feed `bytes` in `size`-byte chunks, as the HTTP layer does.
    fn run(bytes: &[u8], size: usize) -> (Result<Response, LlmError>, Vec<StreamEvent>) {
        let mut parser = SseParser::new();
        let mut stream = AnthropicStream::new(Some("req_test".into()));
        let mut live = Vec::new();
        let mut events = Vec::new();
        for chunk in bytes.chunks(size) {
            events.extend(parser.feed(chunk));
        }
        events.extend(parser.finish());
        for event in events {
            match stream.push(event) {
                Ok(more) => live.extend(more),
                Err(e) => return (Err(e), live),
            }
        }
        (stream.finish(), live)
    }

    fn text_of(live: &[StreamEvent]) -> String {
        live.iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                StreamEvent::ToolUseStarted { .. } | StreamEvent::ThinkingDelta(_) => None,
            })
            .collect()
    }

    #[test]
    fn the_official_tool_use_stream_accumulates() {
        for size in [1, 7, 13, 4096] {
            let (response, live) = run(fixture("anthropic_stream_tool_use.official"), size);
            let response = response.unwrap();
            let text = "Okay, let's check the weather for San Francisco, CA:";
            assert_eq!(
                response.content,
                vec![
                    Block::Text { text: text.into() },
                    Block::ToolUse {
                        id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                        name: "get_weather".into(),
                        input: json!({"location": "San Francisco, CA"}),
                    }
                ]
            );
            assert_eq!(response.stop_reason, StopReason::ToolUse);
            assert_eq!(
                response.usage,
                Usage {
                    input_tokens: 472,
                    output_tokens: 89,
                    ..Usage::default()
                }
            );
            assert_eq!(response.request_id.as_deref(), Some("req_test"));
            assert_eq!(text_of(&live), text);
            assert_eq!(
                live.last(),
                Some(&StreamEvent::ToolUseStarted {
                    id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                    name: "get_weather".into()
                })
            );
        }
    }

    #[test]
    fn parallel_tool_uses_and_cache_usage_accumulate() {
        let (response, live) = run(fixture("anthropic_stream_parallel_tool_use.vault"), 7);
        let response = response.unwrap();
        assert_eq!(
            response.content,
            vec![
                Block::Text {
                    text: "I'll search your vault for that. 🔎".into()
                },
                Block::ToolUse {
                    id: "toolu_01SearchNotes00000000001".into(),
                    name: "search_notes".into(),
                    input: json!({"query": "rust async", "limit": 5}),
                },
                Block::ToolUse {
                    id: "toolu_01ReadNote000000000000002".into(),
                    name: "read_note".into(),
                    input: json!({"path": "Inbox/Tokio.md"}),
                },
            ]
        );
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 42,
                output_tokens: 71,
                cache_read_input_tokens: 3120,
                cache_creation_input_tokens: 0,
                estimated: false,
            }
        );
        let started: Vec<&StreamEvent> = live
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolUseStarted { .. }))
            .collect();
        assert_eq!(started.len(), 2);
    }

    #[test]
    fn cache_read_from_message_start_survives_a_delta_without_it() {
        let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":900,\"cache_creation_input_tokens\":30,\"output_tokens\":1}}}\n\n\
            event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":12,\"cache_read_input_tokens\":null}}\n\n\
            event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let response = run(stream.as_bytes(), 5).0.unwrap();
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 5,
                output_tokens: 12,
                cache_read_input_tokens: 900,
                cache_creation_input_tokens: 30,
                estimated: false,
            }
        );
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        assert!(response.content.is_empty());
    }

    #[test]
    fn an_error_event_mid_stream_is_an_error_with_its_type() {
        let (result, live) = run(fixture("anthropic_stream_error_midstream"), 13);
        let error = result.unwrap_err();
        assert!(matches!(
            &error,
            LlmError::MidStream { error_type, message, request_id }
                if error_type == "overloaded_error" && message == "Overloaded" && request_id.as_deref() == Some("req_test")
        ));
        assert_eq!(
            error.to_string(),
            "the provider reported an error mid-stream: overloaded_error: Overloaded (request req_test)"
        );
        assert_eq!(text_of(&live), "Partial ans");
    }

    #[test]
    fn a_tool_call_cut_off_by_max_tokens_is_dropped() {
        let response = run(fixture("anthropic_stream_max_tokens_truncated_tool"), 1)
            .0
            .unwrap();
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        assert!(response.content.is_empty());
        assert_eq!(response.usage.output_tokens, 16);
    }

    #[test]
    fn broken_tool_json_without_max_tokens_is_an_error() {
        let text = std::str::from_utf8(fixture("anthropic_stream_max_tokens_truncated_tool"))
            .unwrap()
            .replace("\"max_tokens\"", "\"tool_use\"");
        let error = run(text.as_bytes(), 64).0.unwrap_err();
        assert!(matches!(error, LlmError::Malformed { .. }), "{error:?}");
    }

    #[test]
    fn unknown_events_blocks_and_deltas_are_ignored() {
        let text = std::str::from_utf8(fixture("anthropic_stream_tool_use.official")).unwrap();
        let extra = "event: something_new\ndata: {\"type\":\"something_new\",\"x\":[1]}\n\n\
            event: weird\ndata: not json at all\n\n\
            event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":7,\"content_block\":{\"type\":\"fallback\",\"model\":\"x\"}}\n\n\
            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"citations_delta\",\"citation\":{}}}\n\n\
            event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":7}\n\n";
        let with_extra = text.replacen(
            "event: content_block_start",
            &format!("{extra}event: content_block_start"),
            1,
        );
        let response = run(with_extra.as_bytes(), 7).0.unwrap();
        assert_eq!(response.content.len(), 2);
        assert_eq!(response.stop_reason, StopReason::ToolUse);
    }

    #[test]
    fn a_stream_without_message_stop_is_an_error() {
        let text = std::str::from_utf8(fixture("anthropic_stream_tool_use.official")).unwrap();
        let cut = text.split("event: message_stop").next().unwrap();
        let error = run(cut.as_bytes(), 7).0.unwrap_err();
        assert!(matches!(error, LlmError::Incomplete { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "the stream stopped before the response was complete (it ended without message_stop); this usually means the server failed while generating the reply, and its log says why (request req_test)"
        );
        // Cut between any two events before message_stop, at any chunk size: the same error.
        for before in ["event: content_block_delta", "event: message_delta"] {
            let cut = text.split(before).next().unwrap();
            for size in [1, 7, 64] {
                let error = run(cut.as_bytes(), size).0.unwrap_err();
                assert!(matches!(error, LlmError::Incomplete { .. }), "{error:?}");
            }
        }
    }

    #[test]
    fn a_stream_of_zero_bytes_is_empty_and_says_what_that_means() {
        let error = run(b"", 7).0.unwrap_err();
        assert!(matches!(error, LlmError::EmptyStream { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .contains("the server failed while building the prompt"),
            "{error}"
        );
        assert_eq!(error.request_id(), Some("req_test"));
    }

    #[test]
    fn a_malformed_known_event_is_an_error() {
        let stream = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":\"x\"}\n\n";
        let error = run(stream.as_bytes(), 7).0.unwrap_err();
        assert!(matches!(error, LlmError::Malformed { .. }), "{error:?}");
    }

    #[test]
    fn refusal_keeps_its_explanation_and_empty_tool_input_is_an_object() {
        let stream = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"list_notes\",\"input\":{}}}\n\n\
            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n\
            event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
            event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\",\"stop_details\":{\"type\":\"refusal\",\"category\":\"cyber\",\"explanation\":\"Not this.\"}},\"usage\":{\"output_tokens\":3}}\n\n\
            event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let response = run(stream.as_bytes(), 9).0.unwrap();
        assert_eq!(response.stop_reason, StopReason::Refusal);
        assert_eq!(response.stop_details.as_deref(), Some("Not this."));
        assert_eq!(
            response.content,
            vec![Block::ToolUse {
                id: "t1".into(),
                name: "list_notes".into(),
                input: json!({})
            }]
        );
    }

    #[test]
    fn events_after_message_stop_are_ignored() {
        let text = std::str::from_utf8(fixture("anthropic_stream_tool_use.official")).unwrap();
        let trailing = format!(
            "{text}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"api_error\",\"message\":\"late\"}}}}\n\n"
        );
        assert!(run(trailing.as_bytes(), 64).0.is_ok());
    }

    const THINKING: &str = "The person asks when to plant the tomatoes. The plan note should say — let me read Projects/Plan.md before answering.";
    const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds9fP1L0dRp3uQ3fTnOvJQ0mJEYjIfKbYFpNv8Kq2E9eHnZ5oA==";

    fn thinking_of(live: &[StreamEvent]) -> String {
        live.iter()
            .filter_map(|e| match e {
                StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
                StreamEvent::ToolUseStarted { .. } | StreamEvent::TextDelta(_) => None,
            })
            .collect()
    }

    #[test]
    fn a_thinking_block_keeps_its_text_and_signature_apart_from_the_reply() {
        for size in [1, 3, 7, 13, 64, 4096] {
            let (response, live) = run(fixture("anthropic_stream_thinking_tool_use"), size);
            let response = response.unwrap();
            assert_eq!(
                response.content,
                vec![
                    Block::Thinking {
                        text: THINKING.into(),
                        signature: SIGNATURE.into(),
                    },
                    Block::Text {
                        text: "Let me check your plan.".into()
                    },
                    Block::ToolUse {
                        id: "toolu_01ThinkReadPlan00000001".into(),
                        name: "read_note".into(),
                        input: json!({"note": "Projects/Plan.md"}),
                    },
                ],
                "chunks of {size}"
            );
            assert_eq!(response.stop_reason, StopReason::ToolUse);
            assert_eq!(response.usage.output_tokens, 96);
            assert_eq!(thinking_of(&live), THINKING);
            assert_eq!(text_of(&live), "Let me check your plan.");
        }
    }

    #[test]
    fn redacted_thinking_is_kept_whole() {
        let stream = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va3pzix\"}}\n\n\
            event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
            event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"May.\"}}\n\n\
            event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n\
            event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let (response, live) = run(stream.as_bytes(), 5);
        assert_eq!(
            response.unwrap().content,
            vec![
                Block::RedactedThinking {
                    data: "EmwKAhgBEgy3va3pzix".into()
                },
                Block::Text {
                    text: "May.".into()
                },
            ]
        );
        assert_eq!(live, vec![StreamEvent::TextDelta("May.".into())]);
    }

    /// The tool loop after a thinking response: the assistant turn as the agent stored it.
    fn thinking_tool_loop() -> Request {
        let mut request = small_conversation();
        request.messages[1].content.insert(
            0,
            Block::Thinking {
                text: "Search first.".into(),
                signature: "c2lnbmVk".into(),
            },
        );
        request.messages[1].content.insert(
            1,
            Block::RedactedThinking {
                data: "b3BhcXVl".into(),
            },
        );
        request
    }

    #[test]
    fn with_thinking_on_signed_blocks_go_back_unchanged_before_the_tool_use() {
        let body = request_body(&thinking_tool_loop(), 2048).unwrap();
        assert!(body.starts_with(
            r#"{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"thinking":{"type":"enabled","budget_tokens":2048},"system":"#
        ), "{body}");
        assert!(body.contains(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Search first.","signature":"c2lnbmVk"},{"type":"redacted_thinking","data":"b3BhcXVl"},{"type":"text","text":"Searching."},{"type":"tool_use","id":"toolu_1""#
        ), "{body}");
        assert!(!body.contains("temperature") && !body.contains("top_k"));
    }

    #[test]
    fn max_tokens_rises_above_the_budget_only_when_it_must() {
        assert_eq!(max_tokens_with_thinking(2048, 2048), 4096);
        assert_eq!(max_tokens_with_thinking(1000, 4096), 5096);
        assert_eq!(max_tokens_with_thinking(8192, 4096), 8192);
        assert_eq!(max_tokens_with_thinking(2048, 0), 2048);
        assert_eq!(max_tokens_with_thinking(u32::MAX, 1024), u32::MAX);
        let mut request = thinking_tool_loop();
        request.max_tokens = 16_000;
        let body: Value = serde_json::from_str(&request_body(&request, 4096).unwrap()).unwrap();
        assert_eq!(body["max_tokens"], 16_000);
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 4096})
        );
    }

    #[test]
    fn with_thinking_off_or_unsigned_the_thinking_stays_home() {
        // Off: the body is byte for byte the one without any thinking in the history.
        assert_eq!(
            request_body(&thinking_tool_loop(), 0).unwrap(),
            request_body(&small_conversation(), 0).unwrap()
        );
        // On, but the reasoning came unsigned from an OpenAI-compatible server.
        let mut request = small_conversation();
        request.messages[1].content.insert(
            0,
            Block::Thinking {
                text: "from llama.cpp".into(),
                signature: String::new(),
            },
        );
        let body = request_body(&request, 1024).unwrap();
        assert!(!body.contains("from llama.cpp"), "{body}");
        assert!(body.contains(r#""thinking":{"type":"enabled","budget_tokens":1024}"#));
    }

    // ---- request bodies ----

    fn request_body_off(request: &Request) -> Result<String, serde_json::Error> {
        request_body(request, 0)
    }

    fn small_conversation() -> Request {
        Request {
            model: "claude-sonnet-4-5".into(),
            max_tokens: 2048,
            system: "You are vaultchat.".into(),
            tools: vec![
                ToolDef {
                    name: "search_notes".into(),
                    description: "Search".into(),
                    input_schema: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
                },
                ToolDef {
                    name: "read_note".into(),
                    description: "Read".into(),
                    input_schema: json!({"type": "object"}),
                },
            ],
            messages: vec![
                Message {
                    role: Role::User,
                    content: vec![
                        Block::Image {
                            media_type: "image/png".into(),
                            data: "iVBOR".into(),
                        },
                        Block::Text {
                            text: "Find this.".into(),
                        },
                    ],
                },
                Message {
                    role: Role::Assistant,
                    content: vec![
                        Block::Text {
                            text: "Searching.".into(),
                        },
                        Block::ToolUse {
                            id: "toolu_1".into(),
                            name: "search_notes".into(),
                            input: json!({"query": "rust", "limit": 5}),
                        },
                    ],
                },
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult {
                        tool_use_id: "toolu_1".into(),
                        content: vec![
                            ResultPart::Text {
                                text: "a.md".into(),
                            },
                            ResultPart::Image {
                                media_type: "image/gif".into(),
                                data: "R0lG".into(),
                            },
                        ],
                        is_error: true,
                    }],
                },
            ],
        }
    }

    #[test]
    fn the_body_of_a_small_conversation_is_exact() {
        let body = request_body_off(&small_conversation()).unwrap();
        let expected = concat!(
            r#"{"model":"claude-sonnet-4-5","max_tokens":2048,"stream":true,"#,
            r#""system":[{"type":"text","text":"You are vaultchat.","cache_control":{"type":"ephemeral"}}],"#,
            r#""tools":[{"name":"search_notes","description":"Search","input_schema":{"properties":{"query":{"type":"string"}},"type":"object"}},"#,
            r#"{"name":"read_note","description":"Read","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],"#,
            r#""tool_choice":{"type":"auto"},"#,
            r#""messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}},{"type":"text","text":"Find this."}]},"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"Searching."},{"type":"tool_use","id":"toolu_1","name":"search_notes","input":{"limit":5,"query":"rust"}}]},"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.md"},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lG"}}],"is_error":true,"cache_control":{"type":"ephemeral"}}]}]}"#,
        );
        assert_eq!(body, expected);
    }

    #[test]
    fn no_system_and_no_tools_leave_those_fields_out() {
        let mut request = small_conversation();
        request.system.clear();
        request.tools.clear();
        request.messages.truncate(1);
        let body: Value = serde_json::from_str(&request_body_off(&request).unwrap()).unwrap();
        assert!(body.get("system").is_none());
        assert!(body.get("tools").is_none());
        assert!(body.get("tool_choice").is_none());
        assert_eq!(
            body["messages"][0]["content"][1]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(
            body["messages"][0]["content"][0]
                .get("cache_control")
                .is_none()
        );
    }

    #[test]
    fn earlier_messages_serialise_identically_as_the_conversation_grows() {
        let full = small_conversation();
        let mut longer = full.clone();
        longer.messages.push(Message {
            role: Role::Assistant,
            content: vec![Block::Text {
                text: "Done.".into(),
            }],
        });
        longer.messages.push(Message {
            role: Role::User,
            content: vec![Block::Text {
                text: "Thanks".into(),
            }],
        });
        let breakpoint = r#","cache_control":{"type":"ephemeral"}"#;
        let short_body = request_body_off(&full).unwrap();
        let long_body = request_body_off(&longer).unwrap();
        // Everything before the message list (tools, system) is identical.
        let head = |body: &str| body.split(r#""messages":"#).next().unwrap().to_string();
        assert_eq!(head(&short_body), head(&long_body));
        // The shorter message list, minus its breakpoint, is a prefix of the longer one.
        let messages = |body: &str| body.split(r#""messages":"#).nth(1).unwrap().to_string();
        let short_messages = messages(&short_body).replace(breakpoint, "");
        // Drop the closing `]` of the list and `}` of the body; the next message follows a comma.
        let open_list = format!("{},", short_messages.strip_suffix("]}").unwrap());
        assert!(messages(&long_body).starts_with(&open_list));
        assert_eq!(messages(&long_body).matches(breakpoint).count(), 1);
        assert!(long_body.ends_with(
            r#"{"type":"text","text":"Thanks","cache_control":{"type":"ephemeral"}}]}]}"#
        ));
    }

    #[test]
    fn the_url_gets_v1_messages_once() {
        assert_eq!(
            messages_url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            messages_url("http://127.0.0.1:9/"),
            "http://127.0.0.1:9/v1/messages"
        );
        assert_eq!(
            messages_url("https://proxy.example/v1/"),
            "https://proxy.example/v1/messages"
        );
    }
}
