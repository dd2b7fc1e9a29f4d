//! Usage for responses whose server reported none: llama-cpp-python sends no usage chunk even
//! when asked (`stream_options.include_usage`), and some servers report zeros. The counts are
//! estimated from the request and the reply and marked [`Usage::estimated`](crate::llm::Usage::estimated), so every figure
//! made from them can say so.

use super::{Tokenizer, tool_call_tokens};
use crate::llm::types::{Block, Request, Response};

/// Fill in the counts the server left at zero: the prompt from `request`, the output from the
/// reply's text and tool calls. Counts the server did report are kept; the usage is marked
/// estimated when anything was filled in.
pub fn estimate_missing_usage(request: &Request, response: &mut Response) {
    let usage = &mut response.usage;
    let prompt_reported =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens > 0;
    if !prompt_reported {
        usage.input_tokens = super::estimate_request(request);
        usage.estimated = true;
    }
    if usage.output_tokens == 0 {
        let output = estimate_reply(&request.model, &response.content);
        if output > 0 {
            usage.output_tokens = output;
            usage.estimated = true;
        }
    }
}

/// What OpenAI's models write around one tool call besides its name and arguments (the
/// recipient, the content type, the end of the message): fitted to the recorded gpt-4o stream
/// with one call (tests/fixtures/sse/openai_stream_tool_call.recorded.sse).
const TOOL_CALL_FRAMING: u64 = 7;

/// About how many tokens the model wrote for `content` (text and tool calls).
pub fn estimate_reply(model: &str, content: &[Block]) -> u64 {
    let tokenizer = Tokenizer::for_model(model);
    let calls: Vec<(&str, &serde_json::Value)> = content
        .iter()
        .filter_map(|block| match block {
            Block::ToolUse { name, input, .. } => Some((name.as_str(), input)),
            Block::Text { .. }
            | Block::Image { .. }
            | Block::ToolResult { .. }
            | Block::Thinking { .. }
            | Block::RedactedThinking { .. } => None,
        })
        .collect();
    let text: u64 = content
        .iter()
        .map(|block| match block {
            // Reasoning is written output too (servers count it in the completion tokens).
            Block::Text { text } | Block::Thinking { text, .. } => tokenizer.count(text),
            Block::RedactedThinking { data } => tokenizer.count(data),
            Block::ToolUse { .. } | Block::Image { .. } | Block::ToolResult { .. } => 0,
        })
        .sum();
    text + calls_tokens(tokenizer, &calls)
}

/// The tool calls of a reply. OpenAI's models make parallel calls through one call of a
/// `multi_tool_use.parallel` wrapper whose JSON arguments list each call's recipient and
/// parameters, so more than one call is counted as that JSON.
fn calls_tokens(tokenizer: Tokenizer, calls: &[(&str, &serde_json::Value)]) -> u64 {
    match (tokenizer, calls) {
        (_, []) => 0,
        (Tokenizer::Bpe(_), [_, _, ..]) => {
            let uses: Vec<serde_json::Value> = calls
                .iter()
                .map(|(name, input)| {
                    serde_json::json!({"recipient_name": format!("functions.{name}"), "parameters": input})
                })
                .collect();
            let wrapper = serde_json::json!({ "tool_uses": uses });
            tokenizer.count("multi_tool_use.parallel")
                + tokenizer.count(&wrapper.to_string())
                + TOOL_CALL_FRAMING
        }
        _ => calls
            .iter()
            .map(|(name, input)| tool_call_tokens(tokenizer, name, input) + TOOL_CALL_FRAMING - 1)
            .sum(),
    }
}
