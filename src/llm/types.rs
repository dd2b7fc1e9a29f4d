//! Provider-neutral conversation types.
//!
//! They follow the Anthropic Messages shapes (the richer of the two wire formats) and are stored as
//! JSON in the app database, so their serde form is part of the on-disk format: change it only with
//! a migration. The messages, their blocks and the token counts are defined in `protocol` (the app
//! shows them) and re-exported here with their behaviour; what only a provider call needs
//! (requests, responses, stop reasons, stream events) is defined here.

use serde::{Deserialize, Serialize};

pub use crate::protocol::{Block, Message, ResultPart, Role, Usage};

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
