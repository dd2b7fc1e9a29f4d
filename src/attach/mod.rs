//! Attachments: images for a chat message (load, check, encode).
//!
//! Images are sent as base64 inside every request of the conversation, so they are checked here
//! once: a known format by its magic bytes (the file name may lie) and at most 5 MB, the limit of
//! the strictest provider (protocols.md §1.7).

use std::path::Path;

/// The largest image accepted, in bytes before encoding.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub media_type: &'static str,
    /// Base64 (standard alphabet, padded), without a `data:` prefix.
    pub data: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot read the image {path}: {source}")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a PNG, JPEG, GIF or WebP image; convert it to one of those")]
    UnknownFormat { path: String },
    #[error("{path} is {size} bytes; images may be at most 5 MB, so scale it down first")]
    TooLarge { path: String, size: usize },
}

/// Load an image file.
pub fn load_image(path: &Path) -> Result<Image, AttachError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| AttachError::Unreadable {
        path: shown.clone(),
        source,
    })?;
    image_from_bytes(&bytes, &shown)
}

/// Check and encode image bytes (from a file or the clipboard); `name` appears in errors.
pub fn image_from_bytes(bytes: &[u8], name: &str) -> Result<Image, AttachError> {
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(AttachError::TooLarge {
            path: name.to_string(),
            size: bytes.len(),
        });
    }
    let media_type = sniff(bytes).ok_or_else(|| AttachError::UnknownFormat {
        path: name.to_string(),
    })?;
    Ok(Image {
        media_type,
        data: base64(bytes),
    })
}

/// The media type from the first bytes.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected, "{input}");
        }
    }

    #[test]
    fn formats_are_sniffed_not_guessed_from_names() {
        let png = b"\x89PNG\r\n\x1a\nrest";
        assert_eq!(
            image_from_bytes(png, "x.jpg").unwrap().media_type,
            "image/png"
        );
        assert!(matches!(
            image_from_bytes(b"hello", "x.png"),
            Err(AttachError::UnknownFormat { .. })
        ));
        let big = vec![0u8; MAX_IMAGE_BYTES + 1];
        assert!(matches!(
            image_from_bytes(&big, "big.png"),
            Err(AttachError::TooLarge { .. })
        ));
    }
}

/// The most notes one message pulls in with `[[…]]`.
pub const MAX_LINKED_NOTES: usize = 5;
/// The most characters of one linked note sent as context.
pub const MAX_LINKED_CHARS: usize = 20_000;

/// The targets of the `[[wikilinks]]` in a chat message, in order, without duplicates, at most
/// [`MAX_LINKED_NOTES`]: `[[Plan]]`, `[[Projects/Plan.md|the plan]]` (alias dropped),
/// `[[Plan#Dates]]` (heading dropped). Embeds `![[…]]` count the same.
pub fn wikilink_targets(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("[[") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("]]") else { break };
        let inner = &after[..end];
        rest = &after[end + 2..];
        if inner.contains('\n') || inner.contains("[[") {
            continue;
        }
        let target = inner.split('|').next().unwrap_or("");
        let target = target.split(['#', '^']).next().unwrap_or("").trim();
        if !target.is_empty() && !out.iter().any(|t| t == target) {
            out.push(target.to_string());
            if out.len() == MAX_LINKED_NOTES {
                break;
            }
        }
    }
    out
}

/// A linked note as context for the model, cut to [`MAX_LINKED_CHARS`] (and saying so).
pub fn linked_note_block(path: &str, text: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_LINKED_CHARS {
        return format!("<linked_note path=\"{path}\">\n{text}\n</linked_note>");
    }
    let cut: String = text.chars().take(MAX_LINKED_CHARS).collect();
    format!(
        "<linked_note path=\"{path}\" truncated=\"true\" total_chars=\"{total}\">\n{cut}\n</linked_note>\n(read_note with offset {MAX_LINKED_CHARS} gives the rest)"
    )
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn wikilink_targets_drop_aliases_and_headings_and_repeat_once() {
        assert_eq!(
            wikilink_targets(
                "see [[Plan]], [[Projects/Plan.md|the plan]], [[Plan#Dates]] and ![[Seeds^b1]]"
            ),
            ["Plan", "Projects/Plan.md", "Seeds"]
        );
        assert!(wikilink_targets("no links [[ ]] [[unclosed").is_empty());
        let many: String = (0..9).map(|n| format!("[[n{n}]] ")).collect();
        assert_eq!(wikilink_targets(&many).len(), MAX_LINKED_NOTES);
    }

    #[test]
    fn long_notes_are_cut_and_say_so() {
        let long = "é".repeat(MAX_LINKED_CHARS + 10);
        let block = linked_note_block("a.md", &long);
        assert!(block.contains("truncated=\"true\""));
        assert!(block.contains(&format!("total_chars=\"{}\"", MAX_LINKED_CHARS + 10)));
        assert_eq!(
            linked_note_block("a.md", "hi"),
            "<linked_note path=\"a.md\">\nhi\n</linked_note>"
        );
    }
}
