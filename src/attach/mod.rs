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
