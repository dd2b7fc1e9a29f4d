//! The conversation as the engine stores it and the app shows it: provider-neutral messages and
//! token counts. They follow the Anthropic Messages shapes (the richer of the two wire formats) and
//! are stored as JSON in the app database, so their serde form is part of the on-disk format:
//! change it only with a migration. What is done with them (the providers' wire formats, summing
//! usage) stays in `llm`, which re-exports these types.

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
