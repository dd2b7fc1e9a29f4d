//! Token estimates, for servers that report no usage and for deciding before a request is sent
//! whether it still fits the model's context window.
//!
//! This first version counts about four bytes per token; the interface is what the rest of the
//! program relies on.

use super::types::{Block, Message, Request, ResultPart};

/// Bytes per token for text of unknown kind (English prose and Markdown average about four).
const BYTES_PER_TOKEN: u64 = 4;

/// About how many tokens `text` is for `model`.
pub fn estimate_text(_model: &str, text: &str) -> u64 {
    (text.len() as u64).div_ceil(BYTES_PER_TOKEN)
}

/// About how many tokens one message is for `model` (images count a flat amount).
pub fn estimate_message(model: &str, message: &Message) -> u64 {
    /// What one image costs, about (Anthropic: width × height / 750 for a 1 MP image).
    const IMAGE_TOKENS: u64 = 1_500;
    /// The role and framing around each message.
    const MESSAGE_OVERHEAD: u64 = 4;
    let blocks: u64 = message
        .content
        .iter()
        .map(|block| match block {
            Block::Text { text } | Block::Thinking { text, .. } => estimate_text(model, text),
            Block::RedactedThinking { data } => estimate_text(model, data),
            Block::Image { .. } => IMAGE_TOKENS,
            Block::ToolUse { name, input, .. } => {
                estimate_text(model, name) + estimate_text(model, &input.to_string())
            }
            Block::ToolResult { content, .. } => content
                .iter()
                .map(|part| match part {
                    ResultPart::Text { text } => estimate_text(model, text),
                    ResultPart::Image { .. } => IMAGE_TOKENS,
                })
                .sum(),
        })
        .sum();
    blocks + MESSAGE_OVERHEAD
}

/// About how many input tokens `request` is: system prompt, tool definitions and messages.
pub fn estimate_request(request: &Request) -> u64 {
    let model = request.model.as_str();
    let tools: u64 = request
        .tools
        .iter()
        .map(|tool| {
            estimate_text(model, &tool.name)
                + estimate_text(model, &tool.description)
                + estimate_text(model, &tool.input_schema.to_string())
        })
        .sum();
    let messages: u64 = request
        .messages
        .iter()
        .map(|message| estimate_message(model, message))
        .sum();
    estimate_text(model, &request.system) + tools + messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Role;

    #[test]
    fn longer_text_is_more_tokens_and_empty_is_none() {
        assert_eq!(estimate_text("m", ""), 0);
        let short = estimate_text("m", "a few words");
        let long = estimate_text("m", &"a few words ".repeat(100));
        assert!(short > 0 && long > short * 50, "{short} {long}");
    }

    #[test]
    fn a_request_counts_its_system_prompt_and_messages() {
        let message = Message {
            role: Role::User,
            content: vec![Block::Text {
                text: "hello there ".repeat(50),
            }],
        };
        let request = Request {
            model: "m".into(),
            max_tokens: 10,
            system: "You help with notes. ".repeat(20),
            tools: vec![],
            messages: vec![message.clone(), message],
        };
        let total = estimate_request(&request);
        let parts =
            estimate_text("m", &request.system) + 2 * estimate_message("m", &request.messages[0]);
        assert_eq!(total, parts);
        assert!(total > 300, "{total}");
    }
}
