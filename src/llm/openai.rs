//! OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter):
//! the request body and the stream accumulator (docs/protocols.md §2).
//!
//! The compatible servers differ in small ways (§2.3), so the reader is tolerant: every field is
//! optional, unknown fields are ignored, tool calls are matched by `id` as well as `index`
//! (Ollama gives every parallel call index 0), and whole arguments in one chunk work as well as
//! fragments.

use super::StreamAccumulator;
use super::error::{LlmError, error_from_value};
use super::sse::SseEvent;
use super::types::{
    Block, Message, Request, Response, ResultPart, Role, StopReason, StreamEvent, Usage, push_text,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// Longest tool name the API accepts.
const MAX_WIRE_NAME: usize = 64;

/// The endpoint for a base URL that ends in `/v1` (or wherever the server mounts the API).
pub(crate) fn completions_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim_end_matches('/'))
}

/// Whether the server is OpenAI's own, which wants `max_completion_tokens` (local servers only
/// read the older `max_tokens`).
pub(crate) fn is_openai_host(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .is_some_and(|url| url.host_str() == Some("api.openai.com"))
}

/// Tool names as sent on the wire, and back. The API allows only `^[a-zA-Z0-9_-]{1,64}$`, while
/// MCP tool names may hold dots and run to 128 characters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ToolNames {
    to_wire: HashMap<String, String>,
    from_wire: HashMap<String, String>,
}

impl ToolNames {
    /// Names for every tool offered and every tool called in the history. Valid names stay as
    /// they are; others have bad characters replaced by `_`, and get a hash suffix when they had
    /// to be shortened or would collide, so the mapping is the same on every request.
    pub(crate) fn for_request(request: &Request) -> Self {
        let mut names: BTreeSet<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        for message in &request.messages {
            for block in &message.content {
                if let Block::ToolUse { name, .. } = block {
                    names.insert(name);
                }
            }
        }
        let mut taken: BTreeSet<String> = names
            .iter()
            .filter(|name| is_valid_wire_name(name))
            .map(|name| name.to_string())
            .collect();
        let mut map = Self::default();
        for name in names {
            let wire = if is_valid_wire_name(name) {
                name.to_string()
            } else {
                let replaced: String = name
                    .chars()
                    .map(|c| if is_wire_char(c) { c } else { '_' })
                    .collect();
                if replaced.is_empty()
                    || replaced.len() > MAX_WIRE_NAME
                    || taken.contains(&replaced)
                {
                    let hash = xxhash_rust::xxh3::xxh3_64(name.as_bytes()) as u32;
                    let stem: String = replaced.chars().take(MAX_WIRE_NAME - 9).collect();
                    format!("{stem}_{hash:08x}")
                } else {
                    replaced
                }
            };
            taken.insert(wire.clone());
            map.from_wire.insert(wire.clone(), name.to_string());
            map.to_wire.insert(name.to_string(), wire);
        }
        map
    }

    /// The wire name for a tool.
    pub(crate) fn wire<'a>(&'a self, name: &'a str) -> &'a str {
        self.to_wire.get(name).map_or(name, String::as_str)
    }

    /// The tool's own name for a wire name (unknown names pass through).
    pub(crate) fn original(&self, wire: &str) -> String {
        self.from_wire
            .get(wire)
            .map_or_else(|| wire.to_string(), String::clone)
    }
}

fn is_wire_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn is_valid_wire_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_WIRE_NAME && name.chars().all(is_wire_char)
}

/// The JSON body of a streaming chat completions request.
pub(crate) fn request_body(
    request: &Request,
    names: &ToolNames,
    use_max_completion_tokens: bool,
) -> Result<String, serde_json::Error> {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(WireMessage::System {
            content: &request.system,
        });
    }
    for message in &request.messages {
        match message.role {
            Role::User => push_user_messages(message, &mut messages),
            Role::Assistant => messages.push(assistant_message(message, names)),
        }
    }
    let body = WireRequest {
        model: &request.model,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        max_tokens: (!use_max_completion_tokens).then_some(request.max_tokens),
        max_completion_tokens: use_max_completion_tokens.then_some(request.max_tokens),
        tools: request
            .tools
            .iter()
            .map(|tool| WireTool {
                kind: "function",
                function: WireFunction {
                    name: names.wire(&tool.name),
                    description: &tool.description,
                    parameters: &tool.input_schema,
                },
            })
            .collect(),
        tool_choice: (!request.tools.is_empty()).then_some("auto"),
        messages,
    };
    serde_json::to_string(&body)
}

/// A user message becomes one `tool` message per tool result (they must directly follow the
/// assistant's calls), then one `user` message with the person's text and images plus any images
/// the tools returned (a `tool` message can carry only text).
fn push_user_messages<'a>(message: &'a Message, out: &mut Vec<WireMessage<'a>>) {
    let mut tool_images = Vec::new();
    let mut own_parts = Vec::new();
    for block in &message.content {
        match block {
            Block::Text { text } => own_parts.push(WirePart::Text { text: text.clone() }),
            Block::Image { media_type, data } => own_parts.push(WirePart::image(media_type, data)),
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let texts: Vec<&str> = content
                    .iter()
                    .filter_map(|part| match part {
                        ResultPart::Text { text } => Some(text.as_str()),
                        ResultPart::Image { .. } => None,
                    })
                    .collect();
                let images: Vec<WirePart> = content
                    .iter()
                    .filter_map(|part| match part {
                        ResultPart::Image { media_type, data } => {
                            Some(WirePart::image(media_type, data))
                        }
                        ResultPart::Text { .. } => None,
                    })
                    .collect();
                let mut text = texts.join("\n");
                if *is_error {
                    text.insert_str(0, "Error: ");
                }
                if !images.is_empty() {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(
                        "(The images this tool returned follow in the next user message.)",
                    );
                    tool_images.push(WirePart::Text {
                        text: format!("Images returned by tool call {tool_use_id}:"),
                    });
                    tool_images.extend(images);
                }
                out.push(WireMessage::Tool {
                    tool_call_id: tool_use_id,
                    content: text,
                });
            }
            // Tool calls and reasoning belong to assistant messages; the agent never puts them here.
            Block::ToolUse { .. } | Block::Thinking { .. } | Block::RedactedThinking { .. } => {}
        }
    }
    let mut parts = tool_images;
    parts.extend(own_parts);
    if let Some(content) = user_content(parts) {
        out.push(WireMessage::User { content });
    }
}

/// A user message's content: a plain string unless an image is among the parts. Many local
/// servers (llama.cpp chat templates, older vLLM and LM Studio builds) take only a string and
/// fail on an array of parts; several text blocks (the person's text, the focused note, linked
/// notes) are joined with a blank line between them. `None` when there is nothing to send.
fn user_content(parts: Vec<WirePart>) -> Option<UserContent> {
    if parts.is_empty() {
        return None;
    }
    let has_image = parts
        .iter()
        .any(|part| matches!(part, WirePart::ImageUrl { .. }));
    if has_image {
        return Some(UserContent::Parts(parts));
    }
    let texts: Vec<String> = parts
        .into_iter()
        .filter_map(|part| match part {
            WirePart::Text { text } => Some(text),
            WirePart::ImageUrl { .. } => None,
        })
        .collect();
    Some(UserContent::Text(texts.join("\n\n")))
}

fn assistant_message<'a>(message: &'a Message, names: &'a ToolNames) -> WireMessage<'a> {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in &message.content {
        match block {
            Block::Text { text: more } => text.push_str(more),
            Block::ToolUse { id, name, input } => tool_calls.push(WireToolCall {
                id,
                kind: "function",
                function: WireFunctionCall {
                    name: names.wire(name),
                    arguments: input.to_string(),
                },
            }),
            // Reasoning is never sent back: these servers do not want it (DeepSeek refuses a
            // request that carries `reasoning_content`).
            Block::Thinking { .. }
            | Block::RedactedThinking { .. }
            | Block::Image { .. }
            | Block::ToolResult { .. } => {}
        }
    }
    WireMessage::Assistant {
        // `null` is the documented content of a message that only calls tools.
        content: (!text.is_empty() || tool_calls.is_empty()).then_some(text),
        tool_calls,
    }
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    messages: Vec<WireMessage<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent,
    },
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: String,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum UserContent {
    Text(String),
    Parts(Vec<WirePart>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

impl WirePart {
    fn image(media_type: &str, data: &str) -> Self {
        Self::ImageUrl {
            image_url: ImageUrl {
                url: format!("data:{media_type};base64,{data}"),
            },
        }
    }
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: String,
}

// ---- the stream ----------------------------------------------------------------------------

#[derive(Deserialize)]
struct WireChunk {
    choices: Option<Vec<WireChoice>>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    index: Option<u32>,
    delta: Option<WireDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    content: Option<String>,
    /// Reasoning text: llama.cpp, DeepSeek and vLLM.
    reasoning_content: Option<String>,
    /// Reasoning text: Ollama and OpenRouter (some servers send both names with the same text).
    reasoning: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<WireToolCallDelta>>,
}

#[derive(Deserialize)]
struct WireToolCallDelta {
    index: Option<usize>,
    id: Option<String>,
    function: Option<WireFunctionDelta>,
}

#[derive(Deserialize)]
struct WireFunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<WirePromptDetails>,
}

#[derive(Deserialize)]
struct WirePromptDetails {
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
}

impl WireUsage {
    /// Anthropic's meaning: `prompt_tokens` includes the cached and cache-written tokens, while
    /// `input_tokens` counts only the rest.
    fn normalised(&self) -> Usage {
        let details = self.prompt_tokens_details.as_ref();
        let cache_read = details.and_then(|d| d.cached_tokens).unwrap_or(0);
        let cache_write = details.and_then(|d| d.cache_write_tokens).unwrap_or(0);
        Usage {
            input_tokens: self
                .prompt_tokens
                .unwrap_or(0)
                .saturating_sub(cache_read)
                .saturating_sub(cache_write),
            output_tokens: self.completion_tokens.unwrap_or(0),
            cache_read_input_tokens: cache_read,
            cache_creation_input_tokens: cache_write,
            estimated: false,
        }
    }
}

/// One tool call as it streams in.
#[derive(Debug, Default)]
struct CallSlot {
    id: Option<String>,
    wire_name: String,
    arguments: String,
    announced: bool,
}

/// Builds a [`Response`] from the chunks of one chat completions stream. Pure: no I/O.
#[derive(Debug, Default)]
pub(crate) struct OpenAiStream {
    names: ToolNames,
    text: String,
    /// The model's reasoning, kept apart from the answer.
    reasoning: String,
    refusal: String,
    calls: Vec<CallSlot>,
    /// The slot each `index` currently writes to.
    slot_of_index: HashMap<usize, usize>,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
    /// Any event arrived (a stream of none is reported as empty, not as cut off).
    saw_event: bool,
    request_id: Option<String>,
}

impl OpenAiStream {
    /// An accumulator that maps wire tool names back through `names`.
    pub(crate) fn new(names: ToolNames, request_id: Option<String>) -> Self {
        Self {
            names,
            request_id,
            ..Self::default()
        }
    }

    /// The slot a tool-call fragment belongs to. An `id` is the strongest key: a known id goes to
    /// its slot, and a new id at an index already in use opens a new slot (Ollama numbers every
    /// parallel call 0). Without an id the `index` decides; without either, the last call.
    fn slot_for(&mut self, delta: &WireToolCallDelta) -> usize {
        if let Some(id) = &delta.id {
            if let Some(known) = self.calls.iter().position(|c| c.id.as_ref() == Some(id)) {
                return known;
            }
            let reusable = delta
                .index
                .and_then(|index| self.slot_of_index.get(&index).copied())
                .filter(|&slot| self.calls.get(slot).is_some_and(|c| c.id.is_none()));
            let slot = reusable.unwrap_or_else(|| self.new_slot());
            if let Some(call) = self.calls.get_mut(slot) {
                call.id = Some(id.clone());
            }
            if let Some(index) = delta.index {
                self.slot_of_index.insert(index, slot);
            }
            return slot;
        }
        match delta.index {
            Some(index) => match self.slot_of_index.get(&index) {
                Some(&slot) => slot,
                None => {
                    let slot = self.new_slot();
                    self.slot_of_index.insert(index, slot);
                    slot
                }
            },
            None => self
                .calls
                .len()
                .checked_sub(1)
                .unwrap_or_else(|| self.new_slot()),
        }
    }

    fn new_slot(&mut self) -> usize {
        self.calls.push(CallSlot::default());
        self.calls.len() - 1
    }

    fn apply_tool_call(&mut self, delta: WireToolCallDelta) -> Option<StreamEvent> {
        let slot = self.slot_for(&delta);
        let call = self.calls.get_mut(slot)?;
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty())
                && call.wire_name.is_empty()
            {
                call.wire_name = name;
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
        match &call.id {
            Some(id) if !call.announced && !call.wire_name.is_empty() => {
                call.announced = true;
                Some(StreamEvent::ToolUseStarted {
                    id: id.clone(),
                    name: self.names.original(&call.wire_name),
                })
            }
            _ => None,
        }
    }

    fn stop_reason(&self) -> StopReason {
        let has_calls = !self.calls.is_empty();
        match self.finish_reason.as_deref() {
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            // Some servers say `stop` even after calling tools; the calls still need answers.
            Some("stop") | None if has_calls => StopReason::ToolUse,
            Some("stop") | None if !self.refusal.is_empty() => StopReason::Refusal,
            Some("stop") | None => StopReason::EndTurn,
            Some(other) => StopReason::Other(other.to_string()),
        }
    }
}

impl StreamAccumulator for OpenAiStream {
    fn push(&mut self, event: SseEvent) -> Result<Vec<StreamEvent>, LlmError> {
        self.saw_event = true;
        let data = event.data.trim();
        if self.done || data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| LlmError::Malformed {
            message: format!("a stream chunk that is not JSON ({e})"),
            request_id: self.request_id.clone(),
        })?;
        let has_error = value.get("error").is_some_and(|e| !e.is_null())
            || value.get("object").and_then(Value::as_str) == Some("error");
        if has_error {
            let body = error_from_value(&value);
            return Err(LlmError::MidStream {
                error_type: body
                    .error_type
                    .or(body.code)
                    .unwrap_or_else(|| "error".into()),
                message: body.message,
                request_id: self.request_id.clone(),
            });
        }
        let chunk: WireChunk = serde_json::from_value(value).map_err(|e| LlmError::Malformed {
            message: format!("a stream chunk of an unexpected shape ({e})"),
            request_id: self.request_id.clone(),
        })?;
        if let Some(usage) = &chunk.usage {
            self.usage = usage.normalised();
        }
        let mut live = Vec::new();
        // vaultchat asks for one choice; a server that sends more is read for the first only.
        for choice in chunk
            .choices
            .unwrap_or_default()
            .into_iter()
            .filter(|c| c.index.unwrap_or(0) == 0)
        {
            if let Some(delta) = choice.delta {
                let reasoning = delta
                    .reasoning_content
                    .filter(|t| !t.is_empty())
                    .or(delta.reasoning.filter(|t| !t.is_empty()));
                if let Some(reasoning) = reasoning {
                    self.reasoning.push_str(&reasoning);
                    live.push(StreamEvent::ThinkingDelta(reasoning));
                }
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    self.text.push_str(&text);
                    live.push(StreamEvent::TextDelta(text));
                }
                if let Some(refusal) = delta.refusal {
                    self.refusal.push_str(&refusal);
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    live.extend(self.apply_tool_call(call));
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
        Ok(live)
    }

    fn is_complete(&self) -> bool {
        self.done
    }

    fn finish(self) -> Result<Response, LlmError> {
        // A server that closes the stream after its finish_reason without `[DONE]` has still
        // said everything; one that closes before any finish_reason was cut off.
        if !self.done && self.finish_reason.is_none() {
            return Err(if self.saw_event {
                LlmError::Incomplete {
                    expected: "a finish_reason or [DONE]",
                    request_id: self.request_id,
                }
            } else {
                LlmError::EmptyStream {
                    request_id: self.request_id,
                }
            });
        }
        let stop_reason = self.stop_reason();
        let mut content = Vec::new();
        if !self.reasoning.is_empty() {
            // Unsigned: no server of this kind can check it, and none gets it back.
            content.push(Block::Thinking {
                text: self.reasoning.clone(),
                signature: String::new(),
            });
        }
        push_text(&mut content, &self.text);
        for (n, call) in self.calls.iter().enumerate() {
            let name = self.names.original(&call.wire_name);
            let input = if call.arguments.trim().is_empty() {
                Ok(serde_json::json!({}))
            } else {
                serde_json::from_str::<Value>(&call.arguments)
            };
            match input {
                Ok(input) => content.push(Block::ToolUse {
                    id: call.id.clone().unwrap_or_else(|| format!("call_{n}")),
                    name,
                    input,
                }),
                Err(_) if stop_reason == StopReason::MaxTokens => {
                    tracing::warn!(tool = %name, "dropping a tool call cut off by the token limit");
                }
                Err(e) => {
                    return Err(LlmError::Malformed {
                        message: format!(
                            "the arguments of the {name} tool call are not valid JSON ({e})"
                        ),
                        request_id: self.request_id,
                    });
                }
            }
        }
        Ok(Response {
            content,
            stop_reason,
            stop_details: (!self.refusal.is_empty()).then_some(self.refusal),
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
    use crate::llm::types::ToolDef;
    use serde_json::json;

    fn run_with(
        names: ToolNames,
        bytes: &[u8],
        size: usize,
    ) -> (Result<Response, LlmError>, Vec<StreamEvent>) {
        let mut parser = SseParser::new();
        let mut stream = OpenAiStream::new(names, Some("req_oa".into()));
        let mut events = Vec::new();
        for chunk in bytes.chunks(size) {
            events.extend(parser.feed(chunk));
        }
        events.extend(parser.finish());
        let mut live = Vec::new();
        for event in events {
            match stream.push(event) {
                Ok(more) => live.extend(more),
                Err(e) => return (Err(e), live),
            }
        }
        (stream.finish(), live)
    }

    fn run(bytes: &[u8], size: usize) -> (Result<Response, LlmError>, Vec<StreamEvent>) {
        run_with(ToolNames::default(), bytes, size)
    }

    fn chunk(choices: Value) -> String {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": choices})
        )
    }

    #[test]
    fn the_recorded_tool_call_accumulates() {
        for size in [1, 7, 13] {
            let (response, live) = run(fixture("openai_stream_tool_call.recorded"), size);
            let response = response.unwrap();
            assert_eq!(
                response.content,
                vec![Block::ToolUse {
                    id: "call_c91SqDXlYFuETYv8mUHzz6pp".into(),
                    name: "GetWeatherArgs".into(),
                    input: json!({"city": "Edinburgh", "country": "UK", "units": "c"}),
                }]
            );
            assert_eq!(response.stop_reason, StopReason::ToolUse);
            assert_eq!(
                response.usage,
                Usage {
                    input_tokens: 76,
                    output_tokens: 24,
                    ..Usage::default()
                }
            );
            assert_eq!(
                live,
                vec![StreamEvent::ToolUseStarted {
                    id: "call_c91SqDXlYFuETYv8mUHzz6pp".into(),
                    name: "GetWeatherArgs".into()
                }]
            );
        }
    }

    #[test]
    fn the_recorded_parallel_calls_accumulate() {
        let response = run(fixture("openai_stream_parallel_tool_calls.recorded"), 13)
            .0
            .unwrap();
        assert_eq!(
            response.content,
            vec![
                Block::ToolUse {
                    id: "call_JMW1whyEaYG438VE1OIflxA2".into(),
                    name: "GetWeatherArgs".into(),
                    input: json!({"city": "Edinburgh", "country": "GB", "units": "c"}),
                },
                Block::ToolUse {
                    id: "call_DNYTawLBoN8fj3KN6qU9N1Ou".into(),
                    name: "get_stock_price".into(),
                    input: json!({"ticker": "AAPL", "exchange": "NASDAQ"}),
                },
            ]
        );
        assert_eq!(
            response.usage.input_tokens + response.usage.output_tokens,
            209
        );
    }

    #[test]
    fn ollama_calls_all_at_index_zero_are_kept_apart_by_id() {
        let stream = [
            chunk(json!([{"index": 0, "delta": {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_a", "index": 0, "type": "function", "function": {"name": "search_notes", "arguments": "{\"query\":\"rust\"}"}}
            ]}, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_b", "index": 0, "type": "function", "function": {"name": "read_note", "arguments": "{\"path\":\"a.md\"}"}}
            ]}, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": "tool_calls"}])),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let (response, live) = run(stream.as_bytes(), 7);
        let response = response.unwrap();
        assert_eq!(
            response.content,
            vec![
                Block::ToolUse {
                    id: "call_a".into(),
                    name: "search_notes".into(),
                    input: json!({"query": "rust"}),
                },
                Block::ToolUse {
                    id: "call_b".into(),
                    name: "read_note".into(),
                    input: json!({"path": "a.md"}),
                },
            ]
        );
        assert_eq!(live.len(), 2);
    }

    #[test]
    fn a_current_shape_usage_chunk_is_normalised() {
        let stream = [
            chunk(json!([{"index": 0, "delta": {"content": "Hi", "reasoning_content": "hmm"}, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {}, "finish_reason": "stop"}])),
            "data: {\"id\":\"chatcmpl-X\",\"object\":\"chat.completion.chunk\",\"created\":1764480000,\"model\":\"gpt-5.6\",\"service_tier\":\"default\",\"system_fingerprint\":null,\"choices\":[],\"usage\":{\"prompt_tokens\":3200,\"completion_tokens\":40,\"total_tokens\":3240,\"prompt_tokens_details\":{\"cached_tokens\":3072,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}},\"obfuscation\":\"Zq3\",\"timings\":{\"cache_n\":3}}\n\n".to_string(),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let (response, live) = run(stream.as_bytes(), 13);
        let response = response.unwrap();
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 128,
                output_tokens: 40,
                cache_read_input_tokens: 3072,
                cache_creation_input_tokens: 0,
                estimated: false,
            }
        );
        // llama.cpp's reasoning is thinking, apart from the reply.
        assert_eq!(
            response.content,
            vec![
                Block::Thinking {
                    text: "hmm".into(),
                    signature: String::new()
                },
                Block::Text { text: "Hi".into() }
            ]
        );
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        assert_eq!(
            live,
            vec![
                StreamEvent::ThinkingDelta("hmm".into()),
                StreamEvent::TextDelta("Hi".into())
            ]
        );
    }

    #[test]
    fn cache_write_tokens_count_as_cache_creation() {
        let stream = [
            chunk(json!([{"index": 0, "delta": {"content": "x"}, "finish_reason": "stop"}])),
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":5,\"prompt_tokens_details\":{\"cached_tokens\":100,\"cache_write_tokens\":800}}}\n\n".to_string(),
        ]
        .concat();
        let response = run(stream.as_bytes(), 64).0.unwrap();
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 100,
                output_tokens: 5,
                cache_read_input_tokens: 100,
                cache_creation_input_tokens: 800,
                estimated: false,
            }
        );
    }

    #[test]
    fn an_error_line_mid_stream_is_an_error() {
        let stream = [
            chunk(json!([{"index": 0, "delta": {"content": "Par"}, "finish_reason": null}])),
            "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n".to_string(),
        ]
        .concat();
        let (result, live) = run(stream.as_bytes(), 5);
        let error = result.unwrap_err();
        assert_eq!(
            error.to_string(),
            "the provider reported an error mid-stream: server_error: The server had an error (request req_oa)"
        );
        assert_eq!(live, vec![StreamEvent::TextDelta("Par".into())]);
        let vllm = "data: {\"object\":\"error\",\"message\":\"boom\",\"type\":\"BadRequestError\",\"code\":400}\n\n";
        assert!(matches!(
            run(vllm.as_bytes(), 5).0,
            Err(LlmError::MidStream { error_type, .. }) if error_type == "BadRequestError"
        ));
    }

    #[test]
    fn null_fields_are_tolerated() {
        let stream = [
            "data: {\"choices\":null,\"usage\":null}\n\n".to_string(),
            chunk(json!([{"index": 0, "delta": null, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {"content": null, "tool_calls": null}, "finish_reason": "stop"}])),
        ]
        .concat();
        let response = run(stream.as_bytes(), 9).0.unwrap();
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        assert!(response.content.is_empty());
    }

    #[test]
    fn the_end_of_the_stream_is_judged_by_the_finish_reason() {
        let finished =
            chunk(json!([{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]));
        let response = run(finished.as_bytes(), 3).0.unwrap();
        assert_eq!(response.content, vec![Block::Text { text: "ok".into() }]);
        let cut = chunk(json!([{"index": 0, "delta": {"content": "o"}, "finish_reason": null}]));
        assert!(matches!(
            run(cut.as_bytes(), 3).0,
            Err(LlmError::Incomplete { .. })
        ));
    }

    #[test]
    fn zero_bytes_are_an_empty_stream_with_the_request_id() {
        let recorded: &[u8] =
            include_bytes!("../../tests/fixtures/sse/llama_cpp_python_content_array_abort.sse");
        assert!(recorded.is_empty());
        let (result, live) = run(recorded, 7);
        let error = result.unwrap_err();
        assert!(matches!(error, LlmError::EmptyStream { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "the provider accepted the request but sent an empty stream; this usually means the server failed while building the prompt (its log says why; some servers cannot stream tool calls) (request req_oa)"
        );
        assert!(live.is_empty());
        // Blank lines and comments are no events either.
        let (result, _) = run(b": keep-alive\n\n\n", 3);
        assert!(matches!(result, Err(LlmError::EmptyStream { .. })));
    }

    #[test]
    fn a_stream_cut_before_finish_reason_and_done_says_so() {
        let recorded = include_str!("../../tests/fixtures/sse/llama_cpp_python_text_no_usage.sse");
        // Everything up to the chunk with the finish reason.
        let cut = &recorded[..recorded.find("\"finish_reason\": \"length\"").unwrap()];
        let cut = &cut[..cut.rfind("data: ").unwrap()];
        for size in [1, 7, 64] {
            let (result, live) = run(cut.as_bytes(), size);
            let error = result.unwrap_err();
            assert!(matches!(error, LlmError::Incomplete { .. }), "{error:?}");
            assert_eq!(
                error.to_string(),
                "the stream stopped before the response was complete (it ended without a finish_reason or [DONE]); this usually means the server failed while generating the reply, and its log says why (request req_oa)"
            );
            assert!(!live.is_empty());
        }
        // The whole recording is complete (its finish reason and [DONE] arrive).
        assert!(run(recorded.as_bytes(), 7).0.is_ok());
    }

    #[test]
    fn length_drops_unparseable_calls_and_other_reasons_map() {
        let stream = [
            chunk(json!([{"index": 0, "delta": {"content": "Writing", "tool_calls": [
                {"index": 0, "id": "call_1", "type": "function", "function": {"name": "create_note", "arguments": "{\"body\": \"lor"}}
            ]}, "finish_reason": null}])),
            chunk(json!([{"index": 0, "delta": {}, "finish_reason": "length"}])),
        ]
        .concat();
        let response = run(stream.as_bytes(), 11).0.unwrap();
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        assert_eq!(
            response.content,
            vec![Block::Text {
                text: "Writing".into()
            }]
        );

        let broken = stream.replace("\"length\"", "\"tool_calls\"");
        assert!(matches!(
            run(broken.as_bytes(), 11).0,
            Err(LlmError::Malformed { .. })
        ));

        let filtered = chunk(json!([{"index": 0, "delta": {}, "finish_reason": "content_filter"}]));
        assert_eq!(
            run(filtered.as_bytes(), 9).0.unwrap().stop_reason,
            StopReason::Refusal
        );
    }

    #[test]
    fn a_stop_after_tool_calls_still_asks_for_the_tools() {
        let stream = [
            chunk(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "c1", "function": {"name": "list_notes", "arguments": ""}}
            ]}, "finish_reason": "stop"}])),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let response = run(stream.as_bytes(), 64).0.unwrap();
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(
            response.content,
            vec![Block::ToolUse {
                id: "c1".into(),
                name: "list_notes".into(),
                input: json!({})
            }]
        );
    }

    #[test]
    fn wire_names_map_back_to_tool_names() {
        let request = Request {
            model: "m".into(),
            max_tokens: 10,
            system: String::new(),
            tools: vec![
                ToolDef {
                    name: "files.read".into(),
                    description: String::new(),
                    input_schema: json!({}),
                },
                ToolDef {
                    name: "files_read".into(),
                    description: String::new(),
                    input_schema: json!({}),
                },
                ToolDef {
                    name: "x".repeat(100),
                    description: String::new(),
                    input_schema: json!({}),
                },
                ToolDef {
                    name: "search_notes".into(),
                    description: String::new(),
                    input_schema: json!({}),
                },
            ],
            messages: Vec::new(),
        };
        let names = ToolNames::for_request(&request);
        assert_eq!(names.wire("search_notes"), "search_notes");
        assert_eq!(names.wire("files_read"), "files_read");
        // `files.read` would collide with `files_read`, so it gets a hash suffix.
        let dotted = names.wire("files.read").to_string();
        assert!(dotted.starts_with("files_read_") && dotted.len() == "files_read_".len() + 8);
        let long = names.wire(&"x".repeat(100)).to_string();
        assert_eq!(long.len(), MAX_WIRE_NAME);
        for wire in [&dotted, &long] {
            assert!(is_valid_wire_name(wire), "{wire}");
        }
        assert_eq!(names.original(&dotted), "files.read");
        assert_eq!(names.original(&long), "x".repeat(100));
        assert_eq!(names.original("unknown"), "unknown");
        // The same request always gets the same names.
        assert_eq!(ToolNames::for_request(&request), names);

        let stream = [chunk(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "c1", "function": {"name": dotted, "arguments": "{}"}}
            ]}, "finish_reason": "tool_calls"}]))]
        .concat();
        let (response, live) = run_with(names, stream.as_bytes(), 64);
        assert_eq!(
            live,
            vec![StreamEvent::ToolUseStarted {
                id: "c1".into(),
                name: "files.read".into()
            }]
        );
        assert!(matches!(
            &response.unwrap().content[0],
            Block::ToolUse { name, .. } if name == "files.read"
        ));
    }

    // ---- request bodies ----

    fn conversation() -> Request {
        Request {
            model: "qwen3:8b".into(),
            max_tokens: 1024,
            system: "You are vaultchat.".into(),
            tools: vec![ToolDef {
                name: "plug.search".into(),
                description: "Search".into(),
                input_schema: json!({"type": "object"}),
            }],
            messages: vec![
                Message {
                    role: Role::User,
                    content: vec![Block::Text {
                        text: "Find rust".into(),
                    }],
                },
                Message {
                    role: Role::Assistant,
                    content: vec![Block::ToolUse {
                        id: "call_1".into(),
                        name: "plug.search".into(),
                        input: json!({"query": "rust", "limit": 5}),
                    }],
                },
                Message {
                    role: Role::User,
                    content: vec![
                        Block::ToolResult {
                            tool_use_id: "call_1".into(),
                            content: vec![
                                ResultPart::Text {
                                    text: "a.md".into(),
                                },
                                ResultPart::Image {
                                    media_type: "image/png".into(),
                                    data: "iVBOR".into(),
                                },
                            ],
                            is_error: false,
                        },
                        Block::Text {
                            text: "And this?".into(),
                        },
                        Block::Image {
                            media_type: "image/jpeg".into(),
                            data: "/9j/".into(),
                        },
                    ],
                },
                Message {
                    role: Role::Assistant,
                    content: vec![Block::Text {
                        text: "Done.".into(),
                    }],
                },
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult {
                        tool_use_id: "call_2".into(),
                        content: vec![ResultPart::Text {
                            text: "no such note".into(),
                        }],
                        is_error: true,
                    }],
                },
            ],
        }
    }

    const REASONING: &str =
        "The person asks when to plant the tomatoes. The plan note should say — let me read it.";

    fn reasoning_of(live: &[StreamEvent]) -> String {
        live.iter()
            .filter_map(|e| match e {
                StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
                StreamEvent::TextDelta(_) | StreamEvent::ToolUseStarted { .. } => None,
            })
            .collect()
    }

    fn expected_reasoning_response() -> Vec<Block> {
        vec![
            Block::Thinking {
                text: REASONING.into(),
                signature: String::new(),
            },
            Block::Text {
                text: "Let me check your plan.".into(),
            },
            Block::ToolUse {
                id: "call_think_read_plan_01".into(),
                name: "read_note".into(),
                input: json!({"note": "Projects/Plan.md"}),
            },
        ]
    }

    #[test]
    fn reasoning_content_is_thinking_and_never_reply_text() {
        for size in [1, 3, 7, 13, 64, 4096] {
            let (response, live) = run(fixture("openai_stream_reasoning_tool_call"), size);
            let response = response.unwrap();
            assert_eq!(
                response.content,
                expected_reasoning_response(),
                "chunks of {size}"
            );
            assert_eq!(response.stop_reason, StopReason::ToolUse);
            assert_eq!(response.usage.output_tokens, 64);
            assert_eq!(reasoning_of(&live), REASONING);
            let text: String = live
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::TextDelta(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(text, "Let me check your plan.");
        }
    }

    #[test]
    fn ollamas_reasoning_field_reads_the_same_and_both_names_count_once() {
        let fixture = std::str::from_utf8(fixture("openai_stream_reasoning_tool_call")).unwrap();
        let ollama = fixture.replace("\"reasoning_content\":", "\"reasoning\":");
        assert_ne!(ollama, fixture);
        let (response, live) = run(ollama.as_bytes(), 11);
        assert_eq!(response.unwrap().content, expected_reasoning_response());
        assert_eq!(reasoning_of(&live), REASONING);
        // vLLM has sent the reasoning under both names: one is read (`reasoning_content`).
        let both = fixture.replace(
            "\"reasoning_content\":\"",
            "\"reasoning\":\"x\",\"reasoning_content\":\"",
        );
        let both = both.replace(
            "\"reasoning\":\"x\",\"reasoning_content\":\"\"",
            "\"reasoning_content\":\"\"",
        );
        let (response, _) = run(both.as_bytes(), 17);
        assert_eq!(response.unwrap().content, expected_reasoning_response());
    }

    #[test]
    fn reasoning_is_never_sent_back() {
        let mut request = conversation();
        let thought = Block::Thinking {
            text: "secret chain of thought".into(),
            signature: "sig".into(),
        };
        for message in &mut request.messages {
            if message.role == Role::Assistant {
                message.content.insert(0, thought.clone());
                message.content.push(Block::RedactedThinking {
                    data: "opaque".into(),
                });
            }
        }
        let names = ToolNames::for_request(&request);
        let with = request_body(&request, &names, false).unwrap();
        let without = request_body(&conversation(), &names, false).unwrap();
        assert_eq!(with, without);
        assert!(!with.contains("reasoning") && !with.contains("secret"));
    }

    #[test]
    fn the_body_of_a_small_conversation_is_exact() {
        let request = conversation();
        let names = ToolNames::for_request(&request);
        let body = request_body(&request, &names, false).unwrap();
        let expected = concat!(
            r#"{"model":"qwen3:8b","stream":true,"stream_options":{"include_usage":true},"max_tokens":1024,"#,
            r#""tools":[{"type":"function","function":{"name":"plug_search","description":"Search","parameters":{"type":"object"}}}],"#,
            r#""tool_choice":"auto","messages":["#,
            r#"{"role":"system","content":"You are vaultchat."},"#,
            r#"{"role":"user","content":"Find rust"},"#,
            r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"plug_search","arguments":"{\"limit\":5,\"query\":\"rust\"}"}}]},"#,
            r#"{"role":"tool","tool_call_id":"call_1","content":"a.md\n(The images this tool returned follow in the next user message.)"},"#,
            r#"{"role":"user","content":[{"type":"text","text":"Images returned by tool call call_1:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBOR"}},"#,
            r#"{"type":"text","text":"And this?"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/"}}]},"#,
            r#"{"role":"assistant","content":"Done."},"#,
            r#"{"role":"tool","tool_call_id":"call_2","content":"Error: no such note"}]}"#,
        );
        assert_eq!(body, expected);
    }

    #[test]
    fn openai_itself_gets_max_completion_tokens_and_no_tools_means_no_tool_choice() {
        let mut request = conversation();
        request.tools.clear();
        request.system.clear();
        request.messages.truncate(1);
        let names = ToolNames::for_request(&request);
        let body = request_body(&request, &names, true).unwrap();
        assert_eq!(
            body,
            r#"{"model":"qwen3:8b","stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":1024,"messages":[{"role":"user","content":"Find rust"}]}"#
        );
        assert!(is_openai_host("https://api.openai.com/v1"));
        assert!(!is_openai_host("http://localhost:11434/v1"));
        assert!(!is_openai_host("https://api.openai.com.evil.example/v1"));
    }

    fn user(content: Vec<Block>) -> Request {
        Request {
            model: "m".into(),
            max_tokens: 10,
            system: "sys".into(),
            tools: Vec::new(),
            messages: vec![Message {
                role: Role::User,
                content,
            }],
        }
    }

    fn wire_messages(request: &Request) -> Value {
        let body = request_body(request, &ToolNames::for_request(request), false).unwrap();
        serde_json::from_str::<Value>(&body).unwrap()["messages"].clone()
    }

    #[test]
    fn text_blocks_go_as_one_string_joined_by_blank_lines() {
        let request = user(vec![
            Block::Text {
                text: "Summarise [[Plan]]".into(),
            },
            Block::Text {
                text: "<linked_note path=\"Plan.md\">\nPlant tomatoes.\n</linked_note>".into(),
            },
            Block::Text {
                text: "<focused_note path=\"Inbox.md\">\nCall Anna.\n</focused_note>".into(),
            },
        ]);
        assert_eq!(
            wire_messages(&request),
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "Summarise [[Plan]]\n\n<linked_note path=\"Plan.md\">\nPlant tomatoes.\n</linked_note>\n\n<focused_note path=\"Inbox.md\">\nCall Anna.\n</focused_note>"}
            ])
        );
    }

    #[test]
    fn an_image_makes_the_content_an_array_of_parts() {
        let request = user(vec![
            Block::Image {
                media_type: "image/png".into(),
                data: "iVBOR".into(),
            },
            Block::Text {
                text: "what is this".into(),
            },
            Block::Text {
                text: "<linked_note>x</linked_note>".into(),
            },
        ]);
        assert_eq!(
            wire_messages(&request)[1]["content"],
            json!([
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
                {"type": "text", "text": "what is this"},
                {"type": "text", "text": "<linked_note>x</linked_note>"}
            ])
        );
    }

    #[test]
    fn tool_results_and_the_system_prompt_are_strings() {
        let request = user(vec![
            Block::ToolResult {
                tool_use_id: "call_1".into(),
                content: vec![
                    ResultPart::Text {
                        text: "line one".into(),
                    },
                    ResultPart::Text {
                        text: "line two".into(),
                    },
                ],
                is_error: false,
            },
            Block::Text {
                text: "go on".into(),
            },
            Block::Text {
                text: "<focused_note>n</focused_note>".into(),
            },
        ]);
        let messages = wire_messages(&request);
        assert_eq!(messages[0], json!({"role": "system", "content": "sys"}));
        assert_eq!(
            messages[1],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "line one\nline two"})
        );
        assert_eq!(
            messages[2],
            json!({"role": "user", "content": "go on\n\n<focused_note>n</focused_note>"})
        );
        // Every content in the request is a string: nothing for a string-only template to refuse.
        for message in messages.as_array().unwrap() {
            assert!(message["content"].is_string(), "{message}");
        }
    }

    #[test]
    fn the_url_gets_chat_completions() {
        assert_eq!(
            completions_url("http://localhost:11434/v1/"),
            "http://localhost:11434/v1/chat/completions"
        );
    }
}
