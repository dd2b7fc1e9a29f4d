//! A `tools/call` result as the model gets it (docs/protocols.md §5.3): text blocks joined, images
//! kept when the providers can take them, resources and links as text, `structuredContent` when
//! there is no text, `isError` as a tool error, and huge outputs cut.

use crate::tools::{ToolError, ToolImage, ToolOutput};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

/// The most text one result sends the model (it counts against the context window).
pub const MAX_RESULT_BYTES: usize = 100_000;

/// The image types every provider accepts in a tool result.
const MODEL_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Anthropic's limit for one image.
const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// Map a result. `Err` ([`ToolError::Invalid`]) carries the server's text for an `isError`
/// result, so the model reads what went wrong and may retry.
pub fn to_output(result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let mut lines: Vec<String> = Vec::new();
    let mut has_text = false;
    let mut images = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => {
                has_text |= !text.text.is_empty();
                lines.push(text.text.clone());
            }
            ContentBlock::Image(image) => {
                let bytes = decoded_len(&image.data);
                let mime = image.mime_type.to_ascii_lowercase();
                if !MODEL_IMAGE_TYPES.contains(&mime.as_str()) {
                    lines.push(format!(
                        "[image: {mime}, {bytes} bytes, not shown: the model takes PNG, JPEG, GIF and WebP]"
                    ));
                } else if bytes > MAX_IMAGE_BYTES {
                    lines.push(format!(
                        "[image: {mime}, {bytes} bytes, not shown: larger than 5 MB]"
                    ));
                } else {
                    lines.push(format!("[image: {mime}, {bytes} bytes]"));
                    images.push(ToolImage {
                        media_type: mime,
                        data: image.data.clone(),
                    });
                }
            }
            ContentBlock::Audio(audio) => lines.push(format!(
                "[audio: {}, {} bytes, not sent: the model takes no audio]",
                audio.mime_type,
                decoded_len(&audio.data)
            )),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { text, .. } => {
                    has_text |= !text.is_empty();
                    lines.push(text.clone());
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => lines.push(format!(
                    "[resource: {uri} ({}), {} bytes]",
                    mime_type.as_deref().unwrap_or("binary"),
                    decoded_len(blob)
                )),
                _ => lines.push("[a resource of a kind vaultchat does not know]".to_string()),
            },
            ContentBlock::ResourceLink(link) => {
                has_text = true;
                lines.push(format!("[resource link: {} <{}>]", link.name, link.uri));
            }
            // A content type newer than this client.
            _ => lines.push("[content of a kind vaultchat does not know]".to_string()),
        }
    }
    let structured = result.structured_content.clone().unwrap_or(Value::Null);
    if !has_text && !structured.is_null() {
        lines.insert(0, structured.to_string());
    }
    let is_error = result.is_error.unwrap_or(false);
    let text = lines.join("\n");
    let text = if text.trim().is_empty() {
        if is_error {
            "the tool reported an error without a message".to_string()
        } else {
            "(the tool returned no content)".to_string()
        }
    } else {
        truncated(text, MAX_RESULT_BYTES)
    };
    if is_error {
        return Err(ToolError::Invalid(text));
    }
    Ok(ToolOutput {
        text,
        structured,
        images,
        served: serde_json::to_value(&result).ok(),
    })
}

/// `text` cut to at most `max` bytes (at a character boundary), with a note of how much went.
pub fn truncated(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let total = text.len();
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&format!(
        "\n\n[output truncated: {} of {total} bytes were cut]",
        total - cut
    ));
    text
}

/// How many bytes base64 `data` decodes to.
fn decoded_len(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding.min(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    fn output(value: Value) -> ToolOutput {
        to_output(result(value)).unwrap()
    }

    /// A 1×1 PNG (70 bytes).
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    #[test]
    fn text_blocks_are_joined_by_lines() {
        let out = output(json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "text", "text": "two"}
        ]}));
        assert_eq!(out.text, "one\ntwo");
        assert_eq!(out.structured, Value::Null);
        assert!(out.images.is_empty());
    }

    #[test]
    fn images_the_model_takes_are_kept() {
        let out = output(json!({"content": [
            {"type": "text", "text": "a dot"},
            {"type": "image", "data": PNG, "mimeType": "image/png"}
        ]}));
        assert_eq!(out.text, "a dot\n[image: image/png, 70 bytes]");
        assert_eq!(
            out.images,
            [ToolImage {
                media_type: "image/png".into(),
                data: PNG.into()
            }]
        );
    }

    #[test]
    fn other_images_and_audio_become_placeholders() {
        let out = output(json!({"content": [
            {"type": "image", "data": "PHN2Zz48L3N2Zz4=", "mimeType": "image/svg+xml"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
        ]}));
        assert!(out.images.is_empty());
        assert_eq!(
            out.text,
            "[image: image/svg+xml, 11 bytes, not shown: the model takes PNG, JPEG, GIF and WebP]\n\
             [audio: audio/wav, 3 bytes, not sent: the model takes no audio]"
        );
    }

    #[test]
    fn resources_become_text_and_links_a_line_with_the_uri() {
        let out = output(json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "# A"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c.rs", "name": "c.rs"}
        ]}));
        assert_eq!(
            out.text,
            "# A\n[resource: file:///b.bin (binary), 3 bytes]\n[resource link: c.rs <file:///c.rs>]"
        );
    }

    #[test]
    fn structured_content_is_sent_only_without_text() {
        let out = output(json!({"content": [], "structuredContent": {"temperature": 33}}));
        assert_eq!(out.text, r#"{"temperature":33}"#);
        assert_eq!(out.structured, json!({"temperature": 33}));
        let out = output(json!({
            "content": [{"type": "text", "text": "33 degrees"}],
            "structuredContent": {"temperature": 33}
        }));
        assert_eq!(out.text, "33 degrees");
        assert_eq!(out.structured, json!({"temperature": 33}));
    }

    #[test]
    fn is_error_is_an_invalid_tool_error_with_the_servers_text() {
        let err = to_output(result(json!({
            "content": [{"type": "text", "text": "Access denied - path outside allowed directories"}],
            "isError": true
        })))
        .unwrap_err();
        assert_eq!(
            err,
            ToolError::Invalid("Access denied - path outside allowed directories".into())
        );
        let err = to_output(result(json!({"content": [], "isError": true}))).unwrap_err();
        assert_eq!(
            err,
            ToolError::Invalid("the tool reported an error without a message".into())
        );
    }

    #[test]
    fn empty_results_say_so() {
        assert_eq!(
            output(json!({"content": []})).text,
            "(the tool returned no content)"
        );
    }

    #[test]
    fn huge_text_is_cut_with_a_note() {
        let big = "é".repeat(60_000); // 120,000 bytes
        let out = output(json!({"content": [{"type": "text", "text": big}]}));
        assert!(out.text.len() < MAX_RESULT_BYTES + 100);
        assert!(
            out.text
                .ends_with("[output truncated: 20000 of 120000 bytes were cut]"),
            "{}",
            &out.text[out.text.len() - 80..]
        );
        assert_eq!(truncated("short".into(), 10), "short");
        // A cut inside a character moves back to its start.
        assert!(truncated("aé".into(), 2).starts_with("a\n\n[output truncated: 2 of 3"));
    }
}
