//! Token estimates, for servers that report no usage and for deciding before a request is sent
//! whether it still fits the model's context window.
//!
//! OpenAI's model families are counted with their own BPE encoding ([`bpe`], through
//! `tiktoken-rs`), with the per-message framing OpenAI documents for chat completions. Every
//! other model (Claude, local llama/SmolLM/Qwen/Mistral models, unknown names) gets the
//! [`calibrated`] estimate, fitted to o200k_base on prose, Markdown and code. The whole
//! conversation is estimated before every request, so both are linear and the BPE counts of
//! unchanged messages are remembered.

pub mod accuracy;
pub mod bpe;
pub mod calibrated;
mod usage;

pub use usage::{estimate_missing_usage, estimate_reply};

use super::types::{Block, Message, Request, ResultPart, Role, ToolDef};
use bpe::Encoding;
use serde_json::Value;

/// How the tokens of a model are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// Exactly, with one of OpenAI's encodings.
    Bpe(Encoding),
    /// The calibrated estimate; Claude models are told apart for their tool-use preamble.
    Calibrated {
        /// The model is one of Anthropic's.
        claude: bool,
    },
}

impl Tokenizer {
    /// The tokenizer for a model name as the provider spells it (`gpt-4o-mini`,
    /// `openai/gpt-4.1` through a router, `claude-sonnet-4-5`, `qwen3:8b`…).
    pub fn for_model(model: &str) -> Self {
        let name = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let starts = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
        if starts(&[
            "gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "chatgpt-", "o1", "o3", "o4", "gpt-oss",
            "codex-",
        ]) {
            Self::Bpe(Encoding::O200kBase)
        } else if starts(&["gpt-4", "gpt-3.5", "gpt-35", "text-embedding-"]) {
            Self::Bpe(Encoding::Cl100kBase)
        } else {
            Self::Calibrated {
                claude: name.contains("claude"),
            }
        }
    }

    /// Whether counts are exact (an OpenAI encoding) rather than calibrated.
    pub fn is_exact(self) -> bool {
        matches!(self, Self::Bpe(_))
    }

    /// The tokens of `text`.
    pub fn count(self, text: &str) -> u64 {
        match self {
            Self::Bpe(encoding) => {
                bpe::count(encoding, text).unwrap_or_else(|| calibrated::estimate(text))
            }
            Self::Calibrated { .. } => calibrated::estimate(text),
        }
    }

    /// The framing around each message: OpenAI documents 3 tokens (`<|start|>`, `<|message|>`,
    /// `<|end|>`) plus the role's one token. Chat templates of local models (ChatML, Llama 3)
    /// spend about 5.
    fn per_message(self) -> u64 {
        match self {
            Self::Bpe(_) => 4,
            Self::Calibrated { .. } => 5,
        }
    }

    /// What every request adds once: OpenAI primes the reply with `<|start|>assistant<|message|>`.
    fn reply_priming(self) -> u64 {
        3
    }
}

/// Load `model`'s tokenizer on a thread of its own, so that the first estimate (before the
/// first request, or of a response without usage) does not wait for it: loading o200k_base
/// takes 0.1–0.25 s. Does nothing for models with the calibrated estimate. The handle (callers
/// drop it) answers whether the tokenizer is loaded once the thread is done; `None` when no
/// thread was started.
pub fn preload(model: &str) -> Option<std::thread::JoinHandle<bool>> {
    let Tokenizer::Bpe(encoding) = Tokenizer::for_model(model) else {
        return None;
    };
    let spawned = std::thread::Builder::new()
        .name("tokenizer-load".into())
        .spawn(move || bpe::count(encoding, "").is_some() && bpe::is_loaded(encoding));
    match spawned {
        Ok(handle) => Some(handle),
        Err(error) => {
            tracing::debug!(%error, "the tokenizer loads on first use instead");
            None
        }
    }
}

/// What one image costs, about (Anthropic: width × height / 750 for a 1 MP image).
const IMAGE_TOKENS: u64 = 1_500;

/// About how many tokens `text` is for `model`.
pub fn estimate_text(model: &str, text: &str) -> u64 {
    Tokenizer::for_model(model).count(text)
}

/// About how many tokens one message is for `model`, with its framing (images count a flat
/// amount). Each tool result travels as a message of its own on the OpenAI wire, so each pays
/// the framing.
pub fn estimate_message(model: &str, message: &Message) -> u64 {
    message_tokens(Tokenizer::for_model(model), message)
}

fn message_tokens(tokenizer: Tokenizer, message: &Message) -> u64 {
    let mut framed_messages: u64 = 0;
    let blocks: u64 = message
        .content
        .iter()
        .map(|block| match block {
            Block::Text { text } => tokenizer.count(text),
            // Only signed thinking is ever sent back (Anthropic's, in tool loops); the reasoning
            // of other servers stays home, so it costs no input.
            Block::Thinking { text, signature } if !signature.is_empty() => tokenizer.count(text),
            Block::Thinking { .. } => 0,
            Block::RedactedThinking { data } => tokenizer.count(data),
            Block::Image { .. } => IMAGE_TOKENS,
            Block::ToolUse { name, input, .. } => tool_call_tokens(tokenizer, name, input),
            Block::ToolResult { content, .. } => {
                framed_messages += 1;
                content
                    .iter()
                    .map(|part| match part {
                        ResultPart::Text { text } => tokenizer.count(text),
                        ResultPart::Image { .. } => IMAGE_TOKENS,
                    })
                    .sum()
            }
        })
        .sum();
    // A user message of tool results only is not a message of its own on the OpenAI wire.
    let only_results =
        message.role == Role::User && framed_messages == message.content.len() as u64;
    let framing = if only_results && framed_messages > 0 {
        framed_messages
    } else {
        framed_messages + 1
    };
    blocks + framing * tokenizer.per_message()
}

/// A tool call in the history: the name, the JSON arguments, and a token around them.
fn tool_call_tokens(tokenizer: Tokenizer, name: &str, input: &Value) -> u64 {
    tokenizer.count(name) + tokenizer.count(&input.to_string()) + 1
}

/// About how many input tokens `request` is: system prompt, tool definitions and messages,
/// with their framing.
pub fn estimate_request(request: &Request) -> u64 {
    let tokenizer = Tokenizer::for_model(&request.model);
    let system = if request.system.is_empty() {
        0
    } else {
        tokenizer.count(&request.system) + tokenizer.per_message()
    };
    let messages: u64 = request
        .messages
        .iter()
        .map(|message| message_tokens(tokenizer, message))
        .sum();
    system + tools_tokens(tokenizer, &request.tools) + messages + tokenizer.reply_priming()
}

/// The tool definitions. OpenAI renders them into the system prompt as a TypeScript-like
/// namespace; its cookbook counts `name:description` and `key:type:description` per parameter
/// plus fixed costs (7 per function, 3 for the parameter list, 3 per parameter, 12 at the end),
/// which is what the BPE branch does, with nested schemas counted as their JSON. Anthropic adds
/// a tool-use system prompt of 346 tokens (its documentation, `tool_choice` auto) to the
/// definitions.
fn tools_tokens(tokenizer: Tokenizer, tools: &[ToolDef]) -> u64 {
    if tools.is_empty() {
        return 0;
    }
    match tokenizer {
        Tokenizer::Bpe(_) => {
            let functions: u64 = tools
                .iter()
                .map(|tool| openai_function_tokens(tokenizer, tool))
                .sum();
            functions + 12
        }
        Tokenizer::Calibrated { claude } => {
            let preamble = if claude { 346 } else { 0 };
            let definitions: u64 = tools
                .iter()
                .map(|tool| {
                    tokenizer.count(&tool.name)
                        + tokenizer.count(&tool.description)
                        + tokenizer.count(&tool.input_schema.to_string())
                        + 8
                })
                .sum();
            preamble + definitions
        }
    }
}

/// One function as the OpenAI cookbook counts it.
fn openai_function_tokens(tokenizer: Tokenizer, tool: &ToolDef) -> u64 {
    let description = tool.description.trim_end_matches('.');
    let mut tokens = 7 + tokenizer.count(&format!("{}:{description}", tool.name));
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        return tokens;
    };
    tokens += 3;
    for (key, property) in properties {
        tokens += 3;
        let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
        let about = property
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        tokens += tokenizer.count(&format!("{key}:{kind}:{about}"));
        if let Some(items) = property.get("enum").and_then(Value::as_array) {
            // The cookbook: -3 for the list, then 3 and the item's tokens per item.
            tokens = tokens.saturating_sub(3);
            for item in items {
                tokens += 3 + tokenizer.count(item.as_str().unwrap_or(&item.to_string()));
            }
        }
        for nested in ["items", "properties", "anyOf", "oneOf"] {
            if let Some(schema) = property.get(nested) {
                tokens += tokenizer.count(&schema.to_string());
            }
        }
    }
    tokens
}

#[cfg(test)]
mod tests;
