//! Provider-neutral conversation types.
//!
//! They follow the Anthropic Messages shapes (the richer of the two wire formats) and are stored as
//! JSON in the app database, so their serde form is part of the on-disk format: change it only with
//! a migration.

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person, or tool results sent back on their behalf.
    User,
    /// The model.
    Assistant,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its blocks, in order.
    pub content: Vec<Block>,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image the person attached.
    Image {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
        /// Base64 of the image bytes, without a `data:` prefix.
        data: String,
    },
    /// A tool call the model made (only in assistant messages).
    ToolUse {
        /// The provider's id for the call; the matching result must quote it.
        id: String,
        /// The tool's name as vaultchat knows it (never a wire-sanitised alias).
        name: String,
        /// The arguments, normally a JSON object.
        input: serde_json::Value,
    },
    /// The answer to a tool call (only in user messages).
    ToolResult {
        /// The id of the [`Block::ToolUse`] this answers.
        tool_use_id: String,
        /// Text and images the tool returned.
        content: Vec<ResultPart>,
        /// Whether the tool failed; the model sees the content as an error message.
        is_error: bool,
    },
    /// The model's reasoning before its answer (only in assistant messages). Anthropic signs it
    /// and wants it back unchanged in a tool loop; OpenAI-compatible servers send it unsigned
    /// (`reasoning_content`, `reasoning`) and must not get it back.
    Thinking {
        /// The reasoning text (a summary of it for Claude 4 models).
        text: String,
        /// Anthropic's signature over the block; empty when the server sent none.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        signature: String,
    },
    /// Reasoning the provider's safety system encrypted (Anthropic); sent back as it came.
    RedactedThinking {
        /// The encrypted reasoning, opaque.
        data: String,
    },
}

impl Block {
    /// Whether this is the model's reasoning rather than its answer.
    pub fn is_thinking(&self) -> bool {
        matches!(
            self,
            Block::Thinking { .. } | Block::RedactedThinking { .. }
        )
    }

    /// The text of a text block; `None` for every other block (images, tool calls and results,
    /// and the model's reasoning, which is never part of what was said).
    pub fn text(&self) -> Option<&str> {
        match self {
            Block::Text { text } => Some(text),
            Block::Image { .. }
            | Block::ToolUse { .. }
            | Block::ToolResult { .. }
            | Block::Thinking { .. }
            | Block::RedactedThinking { .. } => None,
        }
    }
}

/// One piece of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultPart {
    /// Text output.
    Text {
        /// The text.
        text: String,
    },
    /// Image output (for example a rendered diagram from an MCP tool).
    Image {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
        /// Base64 of the image bytes, without a `data:` prefix.
        data: String,
    },
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// The tool's name as vaultchat knows it; the OpenAI client sanitises it on the wire.
    pub name: String,
    /// What the tool does, for the model to route on.
    pub description: String,
    /// JSON Schema of the input; its top level is `{"type":"object", …}`.
    pub input_schema: serde_json::Value,
}

/// Everything one call to a model needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The provider's model name.
    pub model: String,
    /// The most tokens the model may write in its answer.
    pub max_tokens: u32,
    /// The system prompt; empty means none.
    pub system: String,
    /// The tools offered this turn, in a stable order (it is part of the cached prefix).
    pub tools: Vec<ToolDef>,
    /// The conversation so far, oldest first, ending with a user message.
    pub messages: Vec<Message>,
}

/// Token counts, normalised to Anthropic's meaning: `input_tokens` EXCLUDES cached tokens, so the
/// whole prompt is `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`.
/// (For OpenAI-compatible servers that is `prompt_tokens - cached_tokens - cache_write_tokens`.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens that were neither read from nor written to the cache.
    pub input_tokens: u64,
    /// Tokens the model wrote.
    pub output_tokens: u64,
    /// Prompt tokens served from the cache.
    pub cache_read_input_tokens: u64,
    /// Prompt tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Some of these counts are vaultchat's estimate (`llm::tokens`), not the server's: it
    /// reported no usage. A sum is estimated when any of its parts is.
    #[serde(default)]
    pub estimated: bool,
}

impl Usage {
    /// Add `other` to these counts (a turn's usage is the sum over its requests).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.estimated |= other.estimated;
    }
}

/// Why the model stopped writing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants the tools it called to run.
    ToolUse,
    /// It hit `max_tokens`; the answer is cut off (truncated tool calls were dropped).
    MaxTokens,
    /// It wrote one of the stop sequences.
    StopSequence,
    /// The provider paused a long turn; send the content back to let it continue.
    PauseTurn,
    /// The provider's safety system stopped the answer; see [`Response::stop_details`].
    Refusal,
    /// The conversation filled the model's context window.
    ContextWindowExceeded,
    /// A reason this version does not know, as the provider spelled it.
    Other(String),
}

impl StopReason {
    /// Map Anthropic's `stop_reason` string (the OpenAI client maps `finish_reason` itself).
    pub fn from_anthropic(value: &str) -> Self {
        match value {
            "end_turn" => Self::EndTurn,
            "tool_use" => Self::ToolUse,
            "max_tokens" => Self::MaxTokens,
            "stop_sequence" => Self::StopSequence,
            "pause_turn" => Self::PauseTurn,
            "refusal" => Self::Refusal,
            "model_context_window_exceeded" => Self::ContextWindowExceeded,
            other => Self::Other(other.to_string()),
        }
    }

    /// The snake_case name shown to people and printed by `ask --json`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::PauseTurn => "pause_turn",
            Self::Refusal => "refusal",
            Self::ContextWindowExceeded => "context_window_exceeded",
            Self::Other(value) => value,
        }
    }
}

/// Live events while a response streams.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More answer text.
    TextDelta(String),
    /// More of the model's reasoning (never part of the answer).
    ThinkingDelta(String),
    /// The model began a tool call (its input is still streaming).
    ToolUseStarted {
        /// The call's id.
        id: String,
        /// The tool's name as vaultchat knows it.
        name: String,
    },
}

/// A finished response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// Thinking, text and ToolUse blocks in order (consecutive text merged, empty text dropped).
    pub content: Vec<Block>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// More about the stop, e.g. the refusal explanation.
    pub stop_details: Option<String>,
    /// Tokens this request cost.
    pub usage: Usage,
    /// The provider's request id, for support requests and logs.
    pub request_id: Option<String>,
}

/// Append text to `content`, merging it into a trailing text block so consecutive text stays one
/// block; empty text is dropped because providers reject empty text blocks when it is sent back.
pub(crate) fn push_text(content: &mut Vec<Block>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Block::Text { text: last }) = content.last_mut() {
        last.push_str(text);
    } else {
        content.push(Block::Text {
            text: text.to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialise_with_a_type_tag() {
        let message = Message {
            role: Role::Assistant,
            content: vec![
                Block::Text { text: "hi".into() },
                Block::ToolUse {
                    id: "t1".into(),
                    name: "read_note".into(),
                    input: json!({"path": "a.md"}),
                },
            ],
        };
        let value = serde_json::to_value(&message).unwrap();
        assert_eq!(
            value,
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "hi"},
                {"type": "tool_use", "id": "t1", "name": "read_note", "input": {"path": "a.md"}}
            ]})
        );
    }

    #[test]
    fn a_tool_result_round_trips_through_json() {
        let block = Block::ToolResult {
            tool_use_id: "t1".into(),
            content: vec![
                ResultPart::Text { text: "ok".into() },
                ResultPart::Image {
                    media_type: "image/png".into(),
                    data: "AAAA".into(),
                },
            ],
            is_error: true,
        };
        let text = serde_json::to_string(&block).unwrap();
        assert_eq!(
            text,
            r#"{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"ok"},{"type":"image","media_type":"image/png","data":"AAAA"}],"is_error":true}"#
        );
        let back: Block = serde_json::from_str(&text).unwrap();
        assert_eq!(back, block);
    }

    #[test]
    fn thinking_blocks_round_trip_and_older_rows_still_load() {
        let signed = Block::Thinking {
            text: "hm".into(),
            signature: "c2ln".into(),
        };
        let text = serde_json::to_string(&signed).unwrap();
        assert_eq!(
            text,
            r#"{"type":"thinking","text":"hm","signature":"c2ln"}"#
        );
        assert_eq!(serde_json::from_str::<Block>(&text).unwrap(), signed);
        // Unsigned (an OpenAI-compatible server's reasoning): no signature field at all.
        let unsigned = Block::Thinking {
            text: "hm".into(),
            signature: String::new(),
        };
        let text = serde_json::to_string(&unsigned).unwrap();
        assert_eq!(text, r#"{"type":"thinking","text":"hm"}"#);
        assert_eq!(serde_json::from_str::<Block>(&text).unwrap(), unsigned);
        let redacted = Block::RedactedThinking {
            data: "b3Bh".into(),
        };
        let text = serde_json::to_string(&redacted).unwrap();
        assert_eq!(text, r#"{"type":"redacted_thinking","data":"b3Bh"}"#);
        assert_eq!(serde_json::from_str::<Block>(&text).unwrap(), redacted);
        // A message stored before thinking existed reads as it did.
        let old = r#"{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"read_note","input":{}}]}"#;
        let message: Message = serde_json::from_str(old).unwrap();
        assert_eq!(message.content.len(), 2);
        assert!(!message.content.iter().any(Block::is_thinking));
        assert!(signed.is_thinking() && redacted.is_thinking());
    }

    #[test]
    fn usage_add_sums_every_field() {
        let mut total = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_input_tokens: 3,
            cache_creation_input_tokens: 4,
            estimated: false,
        };
        total.add(&Usage {
            input_tokens: 10,
            output_tokens: 20,
            cache_read_input_tokens: 30,
            cache_creation_input_tokens: 40,
            estimated: false,
        });
        assert_eq!(
            total,
            Usage {
                input_tokens: 11,
                output_tokens: 22,
                cache_read_input_tokens: 33,
                cache_creation_input_tokens: 44,
                estimated: false,
            }
        );
    }

    #[test]
    fn stop_reasons_map_from_anthropic_names() {
        assert_eq!(StopReason::from_anthropic("end_turn"), StopReason::EndTurn);
        assert_eq!(
            StopReason::from_anthropic("pause_turn"),
            StopReason::PauseTurn
        );
        assert_eq!(
            StopReason::from_anthropic("model_context_window_exceeded"),
            StopReason::ContextWindowExceeded
        );
        assert_eq!(
            StopReason::from_anthropic("brand_new"),
            StopReason::Other("brand_new".into())
        );
        assert_eq!(StopReason::Other("brand_new".into()).as_str(), "brand_new");
        assert_eq!(StopReason::ToolUse.as_str(), "tool_use");
    }

    #[test]
    fn stop_reason_serialises_snake_case() {
        assert_eq!(
            serde_json::to_string(&StopReason::MaxTokens).unwrap(),
            r#""max_tokens""#
        );
    }

    #[test]
    fn push_text_merges_consecutive_text_and_drops_empty() {
        let mut content = Vec::new();
        push_text(&mut content, "");
        assert!(content.is_empty());
        push_text(&mut content, "a");
        push_text(&mut content, "b");
        content.push(Block::ToolUse {
            id: "t".into(),
            name: "n".into(),
            input: json!({}),
        });
        push_text(&mut content, "c");
        assert_eq!(
            content,
            vec![
                Block::Text { text: "ab".into() },
                Block::ToolUse {
                    id: "t".into(),
                    name: "n".into(),
                    input: json!({}),
                },
                Block::Text { text: "c".into() },
            ]
        );
    }
}
