//! Attachments: images for a chat message (load, check, scale, encode).
//!
//! Images are sent as base64 inside every request of the conversation, so they are checked here
//! once: a known format by its magic bytes (the file name may lie), and the size the providers
//! take (docs/protocols.md §1.5): a PNG, JPEG or WebP whose long edge is over 1568 px or whose file
//! is over 5 MB is scaled down here (the provider would scale it anyway, slower and after paying
//! for the upload); a GIF is sent as it is when it is at most 5 MB.
//!
//! Everything here is bounded before it costs anything (docs/safety.md, "Threat model: pasted
//! paths and attachments"): only a regular file is read, never more than the configured limit
//! (`attachments.max_file_mb`), and an image's width and height are read from its header before
//! any pixel is decoded, so a decompression bomb (a small file that decodes to gigabytes) is
//! refused at once; the decoder itself runs under a memory limit too.

mod dropped;
mod file;
mod scale;

pub use dropped::dropped_image_paths;
pub use file::{FileReadError, read_regular_file};

use std::path::Path;

/// The largest image accepted, in bytes before encoding.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// The most images one message carries (claude.ai's limit; past 20 images in one request the
/// API also shrinks its per-image size limit, docs/protocols.md §1.5).
pub const MAX_IMAGES_PER_MESSAGE: usize = 20;
/// The longest edge sent, in pixels: the most most models look at (docs/protocols.md §1.5).
pub const MAX_IMAGE_EDGE: u32 = 1568;
/// The largest file read as an attachment unless the config file says otherwise
/// (`attachments.max_file_mb`), in bytes: a phone photo is well under it, and a larger file is
/// refused before it is read.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// The most pixels an image may have (100 megapixels: more than any phone camera's default
/// mode). It is checked from the header, before decoding, which needs about 4 bytes a pixel.
pub const MAX_IMAGE_PIXELS: u64 = 100_000_000;

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub media_type: &'static str,
    /// Base64 (standard alphabet, padded), without a `data:` prefix.
    pub data: String,
    /// Width and height in pixels, when the header says.
    pub dimensions: Option<(u32, u32)>,
    /// Bytes before base64.
    pub size: usize,
}

impl Image {
    /// What a person is told about this image.
    pub fn facts(&self) -> ImageFacts {
        ImageFacts {
            media_type: self.media_type.to_string(),
            dimensions: self.dimensions,
            size: self.size,
        }
    }
}

/// What a person is told about an image (a chip in the chat): format, pixel size, byte size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFacts {
    /// `image/png`, …
    pub media_type: String,
    pub dimensions: Option<(u32, u32)>,
    /// Bytes before base64.
    pub size: usize,
}

impl ImageFacts {
    /// The facts of an image stored as base64 (a resumed session's messages).
    pub fn of_base64(media_type: &str, data: &str) -> ImageFacts {
        let bytes = base64_decode(data).unwrap_or_default();
        let dimensions = dimensions(&bytes);
        ImageFacts {
            media_type: media_type.to_string(),
            dimensions,
            size: bytes.len(),
        }
    }

    /// The format's short name: `PNG`, `JPEG`, `GIF`, `WEBP`.
    pub fn format(&self) -> String {
        let subtype = self
            .media_type
            .rsplit('/')
            .next()
            .unwrap_or(&self.media_type);
        subtype.to_ascii_uppercase()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot read the image {path}: {source}")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is {kind}, not an image file; only regular files are attached")]
    NotAFile { path: String, kind: &'static str },
    #[error(
        "{path} is {} MB; files of at most {} MB are attached (`attachments.max_file_mb` in the config file sets the limit)",
        megabytes(*size),
        megabytes(*limit)
    )]
    FileTooLarge { path: String, size: u64, limit: u64 },
    #[error(
        "{path} is {width}×{height} pixels ({} megapixels); images of at most {} megapixels are attached, so scale it down first",
        u64::from(*width) * u64::from(*height) / 1_000_000,
        MAX_IMAGE_PIXELS / 1_000_000
    )]
    TooManyPixels {
        path: String,
        width: u32,
        height: u32,
    },
    #[error("{path} is not a PNG, JPEG, GIF or WebP image; convert it to one of those")]
    UnknownFormat { path: String },
    #[error("{path} is {size} bytes; images may be at most 5 MB, so scale it down first")]
    TooLarge { path: String, size: usize },
    #[error("{path} cannot be decoded: {reason}")]
    Undecodable { path: String, reason: String },
}

/// Megabytes (of 2^20 bytes) for a message, rounded up so that a file just over a limit never
/// reads as equal to it.
fn megabytes(bytes: u64) -> u64 {
    bytes.div_ceil(1024 * 1024)
}

/// Load an image file: a regular file of at most `max_file_bytes` (links followed), read without
/// blocking on a FIFO and never past the limit.
pub fn load_image(path: &Path, max_file_bytes: u64) -> Result<Image, AttachError> {
    let shown = path.display().to_string();
    let bytes = read_regular_file(path, max_file_bytes).map_err(|e| match e {
        FileReadError::Io(source) => AttachError::Unreadable {
            path: shown.clone(),
            source,
        },
        FileReadError::NotAFile { kind } => AttachError::NotAFile {
            path: shown.clone(),
            kind,
        },
        FileReadError::TooLarge { size, limit } => AttachError::FileTooLarge {
            path: shown.clone(),
            size,
            limit,
        },
    })?;
    image_from_bytes(&bytes, &shown)
}

/// Refuse an image of more than [`MAX_IMAGE_PIXELS`] before anything is decoded.
fn check_pixels(width: u32, height: u32, name: &str) -> Result<(), AttachError> {
    if u64::from(width) * u64::from(height) > MAX_IMAGE_PIXELS {
        return Err(AttachError::TooManyPixels {
            path: name.to_string(),
            width,
            height,
        });
    }
    Ok(())
}

/// Check, scale and encode image bytes (from a file or the clipboard); `name` appears in errors.
///
/// An image within the limits is sent as it is. A larger PNG is scaled and stays PNG (screenshots
/// keep sharp text); a larger JPEG or WebP — a phone photo — is scaled and sent as JPEG, unless it
/// has transparency, which only PNG keeps. A GIF is only checked: it may be animated, and scaling
/// would keep its first frame alone.
pub fn image_from_bytes(bytes: &[u8], name: &str) -> Result<Image, AttachError> {
    let media_type = sniff(bytes).ok_or_else(|| AttachError::UnknownFormat {
        path: name.to_string(),
    })?;
    let too_large = || AttachError::TooLarge {
        path: name.to_string(),
        size: bytes.len(),
    };
    let size = dimensions(bytes);
    // From the header alone: a bomb is refused before its first pixel is decoded.
    if let Some((width, height)) = size {
        check_pixels(width, height, name)?;
    }
    if media_type == "image/gif" {
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(too_large());
        }
        return Ok(encoded(media_type, bytes, size));
    }
    let too_wide = size.is_some_and(|(w, h)| w.max(h) > MAX_IMAGE_EDGE);
    if !too_wide && bytes.len() <= MAX_IMAGE_BYTES {
        return Ok(encoded(media_type, bytes, size));
    }
    let decoded = scale::decode(bytes).map_err(|failure| match failure {
        scale::DecodeFailure::TooMuchMemory => AttachError::Undecodable {
            path: name.to_string(),
            reason: format!(
                "decoding it would take more than {} MB of memory",
                megabytes(scale::MAX_DECODE_BYTES)
            ),
        },
        scale::DecodeFailure::Invalid(_) if bytes.len() > MAX_IMAGE_BYTES => too_large(),
        scale::DecodeFailure::Invalid(reason) => AttachError::Undecodable {
            path: name.to_string(),
            reason,
        },
    })?;
    let (media_type, file) = if media_type == "image/png" || scale::has_transparency(&decoded) {
        ("image/png", scale::fit_png(&decoded, name)?)
    } else {
        ("image/jpeg", scale::fit_jpeg(&decoded, name)?)
    };
    Ok(encoded(media_type, &file, dimensions(&file)))
}

/// Width and height: from a PNG's first chunk, or from the header of the other formats.
fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    scale::png_dimensions(bytes).or_else(|| scale::header_dimensions(bytes))
}

/// An image from raw RGBA pixels (what the clipboard gives): scaled to fit, encoded as PNG, and
/// checked like any other image.
pub fn image_from_rgba(
    width: u32,
    height: u32,
    rgba: Vec<u8>,
    name: &str,
) -> Result<Image, AttachError> {
    check_pixels(width, height, name)?;
    let pixels = image::RgbaImage::from_raw(width, height, rgba).ok_or_else(|| {
        AttachError::Undecodable {
            path: name.to_string(),
            reason: format!("the pixel data does not fill {width}×{height} pixels"),
        }
    })?;
    let png = scale::fit_png(&image::DynamicImage::ImageRgba8(pixels), name)?;
    image_from_bytes(&png, name)
}

fn encoded(media_type: &'static str, bytes: &[u8], dimensions: Option<(u32, u32)>) -> Image {
    Image {
        media_type,
        data: base64(bytes),
        dimensions,
        size: bytes.len(),
    }
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

/// Standard base64 with padding (the `base64` crate): images for the model, the OSC 52 clipboard
/// and the MCP blob of a note that is not UTF-8 are all encoded here.
pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decode standard base64 (padding optional, no whitespace); `None` for anything else.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    const STANDARD_PAD_OPTIONAL: base64::engine::GeneralPurpose =
        base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::general_purpose::PAD_INDIFFERENT,
        );
    STANDARD_PAD_OPTIONAL.decode(text).ok()
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
        // Too big, and not decodable, so it cannot be scaled down either.
        let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        assert!(matches!(
            image_from_bytes(&big, "big.png"),
            Err(AttachError::TooLarge { .. })
        ));
        let mut big_jpeg = vec![0xFF, 0xD8, 0xFF];
        big_jpeg.resize(MAX_IMAGE_BYTES + 1, 0);
        assert!(matches!(
            image_from_bytes(&big_jpeg, "big.jpg"),
            Err(AttachError::TooLarge { .. })
        ));
    }
}

/// Images for tests: small files whose header claims a huge size, the shape of a decompression
/// bomb without its megabytes.
#[cfg(test)]
pub(crate) mod test_images {
    /// CRC-32 (IEEE), as PNG chunks use it.
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = u32::MAX;
        for &byte in bytes {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    /// The PNG of `small` with its header made to claim `width`×`height` (the IHDR's CRC made
    /// right, so a decoder believes it); the compressed IDAT stays the small image's.
    pub(crate) fn png_claiming(small: image::DynamicImage, width: u32, height: u32) -> Vec<u8> {
        let mut png = Vec::new();
        small
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        assert_eq!(&png[12..16], b"IHDR");
        png[16..20].copy_from_slice(&width.to_be_bytes());
        png[20..24].copy_from_slice(&height.to_be_bytes());
        let crc = crc32(&png[12..29]);
        png[29..33].copy_from_slice(&crc.to_be_bytes());
        png
    }

    /// A gray PNG claiming `width`×`height`.
    pub(crate) fn gray_png_claiming(width: u32, height: u32) -> Vec<u8> {
        png_claiming(
            image::DynamicImage::ImageLuma8(image::GrayImage::new(64, 64)),
            width,
            height,
        )
    }
}

#[cfg(test)]
mod bound_tests {
    use super::test_images::{gray_png_claiming, png_claiming};
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_decompression_bomb_is_refused_from_its_header_at_once() {
        let bomb = gray_png_claiming(50_000, 50_000);
        let started = Instant::now();
        let error = image_from_bytes(&bomb, "bomb.png").unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(
            error.to_string(),
            "bomb.png is 50000×50000 pixels (2500 megapixels); images of at most 100 megapixels \
             are attached, so scale it down first"
        );
        // Just over the budget is refused, just under it is not refused for its pixels.
        assert!(matches!(
            image_from_bytes(&gray_png_claiming(10_001, 10_000), "a.png"),
            Err(AttachError::TooManyPixels { .. })
        ));
        assert!(!matches!(
            image_from_bytes(&gray_png_claiming(10_000, 10_000), "a.png"),
            Err(AttachError::TooManyPixels { .. })
        ));
    }

    #[test]
    fn the_decoder_runs_under_a_memory_limit() {
        // 81 megapixels pass the pixel budget, but as 16-bit RGBA they would take 648 MB.
        let deep = image::DynamicImage::ImageRgba16(image::ImageBuffer::new(64, 64));
        let bomb = png_claiming(deep, 9_000, 9_000);
        let started = Instant::now();
        let error = image_from_bytes(&bomb, "deep.png").unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(
            error.to_string(),
            "deep.png cannot be decoded: decoding it would take more than 512 MB of memory"
        );
    }

    #[test]
    fn clipboard_pixels_over_the_budget_are_refused_before_anything_is_made() {
        let error = image_from_rgba(50_000, 50_000, Vec::new(), "the clipboard image").unwrap_err();
        assert!(
            matches!(error, AttachError::TooManyPixels { width: 50_000, .. }),
            "{error}"
        );
    }

    #[test]
    fn load_image_reads_only_regular_files_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let sparse = dir.path().join("huge.png");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(2 << 30)
            .unwrap();
        let started = Instant::now();
        let error = load_image(&sparse, DEFAULT_MAX_FILE_BYTES).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(
            error
                .to_string()
                .ends_with("huge.png is 2048 MB; files of at most 32 MB are attached (`attachments.max_file_mb` in the config file sets the limit)"),
            "{error}"
        );
        let error = load_image(Path::new("/dev/zero"), DEFAULT_MAX_FILE_BYTES).unwrap_err();
        assert_eq!(
            error.to_string(),
            "/dev/zero is a character device, not an image file; only regular files are attached"
        );
        let bomb = dir.path().join("bomb.png");
        std::fs::write(&bomb, gray_png_claiming(50_000, 50_000)).unwrap();
        assert!(matches!(
            load_image(&bomb, DEFAULT_MAX_FILE_BYTES),
            Err(AttachError::TooManyPixels { .. })
        ));
    }
}

#[cfg(test)]
mod image_tests {
    use super::*;

    /// The 1×1 PNG header from the vision docs (no pixel data): `ask --image` sends it as it is.
    const HEADER_ONLY_PNG: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0,
        0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0x90, 0x77, 0x53, 0xde,
    ];

    fn rgba(width: u32, height: u32) -> Vec<u8> {
        (0..width * height)
            .flat_map(|i| [(i % 251) as u8, (i % 13) as u8, 7, 255])
            .collect()
    }

    #[test]
    fn base64_decodes_what_it_encodes() {
        for input in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            assert_eq!(
                base64_decode(&base64(input.as_bytes())).as_deref(),
                Some(input.as_bytes()),
                "{input}"
            );
        }
        assert_eq!(base64_decode("Zm9v YmFy"), None, "no whitespace");
        assert_eq!(base64_decode("Zm9vY"), None, "a lone sextet is no byte");
        assert_eq!(
            base64_decode("Zg").as_deref(),
            Some(&b"f"[..]),
            "padding optional"
        );
    }

    #[test]
    fn a_small_png_is_sent_as_it_is_with_its_size() {
        let image = image_from_bytes(HEADER_ONLY_PNG, "dot.png").unwrap();
        assert_eq!(image.data, base64(HEADER_ONLY_PNG));
        assert_eq!(image.dimensions, Some((1, 1)));
        assert_eq!(image.size, HEADER_ONLY_PNG.len());
        assert_eq!(
            image.facts(),
            ImageFacts {
                media_type: "image/png".into(),
                dimensions: Some((1, 1)),
                size: 33
            }
        );
    }

    #[test]
    fn a_wide_png_is_scaled_down_to_the_long_edge_limit() {
        let wide = image_from_rgba(2000, 500, rgba(2000, 500), "wide").unwrap();
        assert_eq!(wide.dimensions, Some((MAX_IMAGE_EDGE, 392)));
        assert_eq!(wide.media_type, "image/png");
        // The file route scales the same way.
        let bytes = base64_decode(&wide.data).unwrap();
        assert_eq!(bytes.len(), wide.size);
        let again = image_from_bytes(&bytes, "wide.png").unwrap();
        assert_eq!(again.data, wide.data, "a fitted image is left alone");
    }

    #[test]
    fn clipboard_pixels_become_a_png_of_the_same_size() {
        let image = image_from_rgba(40, 30, rgba(40, 30), "the clipboard image").unwrap();
        assert_eq!(image.dimensions, Some((40, 30)));
        let bytes = base64_decode(&image.data).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
        let error = image_from_rgba(40, 30, vec![0; 10], "the clipboard image").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the clipboard image cannot be decoded: the pixel data does not fill 40×30 pixels"
        );
    }

    /// A photo-like `width`×`height` image: smooth gradients under fine noise, so it compresses
    /// like a real photo (several bytes per pixel at high quality), not like a flat screenshot.
    fn photo(width: u32, height: u32) -> image::RgbImage {
        let mut state: u32 = 0x9e37_79b9;
        image::RgbImage::from_fn(width, height, |x, y| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let noise = (state % 64) as u8;
            image::Rgb([
                ((x * 255 / width) as u8).wrapping_add(noise),
                ((y * 255 / height) as u8).wrapping_add(noise / 2),
                noise.wrapping_mul(3),
            ])
        })
    }

    /// A JPEG of `pixels` at `quality`, with an EXIF block giving `orientation` when set.
    fn jpeg(pixels: &image::RgbImage, quality: u8, orientation: Option<u16>) -> Vec<u8> {
        use image::ImageEncoder as _;
        let mut out = Vec::new();
        let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
        if let Some(value) = orientation {
            // A little-endian TIFF header and one IFD entry: Orientation (0x0112), SHORT, 1 value.
            let mut exif = b"II*\0\x08\0\0\0\x01\0".to_vec();
            exif.extend_from_slice(&[0x12, 0x01, 3, 0, 1, 0, 0, 0]);
            exif.extend_from_slice(&value.to_le_bytes());
            exif.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
            encoder.set_exif_metadata(exif).unwrap();
        }
        encoder
            .write_image(
                pixels.as_raw(),
                pixels.width(),
                pixels.height(),
                image::ExtendedColorType::Rgb8,
            )
            .unwrap();
        out
    }

    #[test]
    fn a_phone_photo_over_5_mb_is_scaled_to_a_jpeg_that_fits() {
        let original = jpeg(&photo(4032, 3024), 100, None);
        assert!(original.len() > MAX_IMAGE_BYTES, "{}", original.len());
        let image = image_from_bytes(&original, "IMG_0001.jpg").unwrap();
        assert_eq!(image.media_type, "image/jpeg");
        assert_eq!(image.dimensions, Some((MAX_IMAGE_EDGE, 1176)));
        assert!(image.size <= MAX_IMAGE_BYTES, "{}", image.size);
        let sent = base64_decode(&image.data).unwrap();
        assert!(sent.starts_with(&[0xFF, 0xD8, 0xFF]));
        assert_eq!(
            scale::header_dimensions(&sent),
            Some((MAX_IMAGE_EDGE, 1176))
        );
    }

    #[test]
    fn a_photo_stored_sideways_arrives_upright() {
        // Stored 1800×1200 with "rotate 90° clockwise to show": it is a portrait photo.
        let sideways = jpeg(&photo(1800, 1200), 90, Some(6));
        assert_eq!(dimensions(&sideways), Some((1200, 1800)));
        let image = image_from_bytes(&sideways, "portrait.jpg").unwrap();
        assert_eq!(image.dimensions, Some((1045, MAX_IMAGE_EDGE)));
        let sent = base64_decode(&image.data).unwrap();
        let decoded = image::load_from_memory(&sent).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (1045, MAX_IMAGE_EDGE));
    }

    #[test]
    fn a_small_jpeg_or_webp_is_sent_as_it_is_with_its_size() {
        let small = jpeg(&photo(640, 480), 80, None);
        let image = image_from_bytes(&small, "small.jpg").unwrap();
        assert_eq!(image.data, base64(&small));
        assert_eq!(image.dimensions, Some((640, 480)));
        let webp = webp(&image::DynamicImage::ImageRgb8(photo(300, 200)));
        let image = image_from_bytes(&webp, "small.webp").unwrap();
        assert_eq!(
            (image.media_type, image.dimensions),
            ("image/webp", Some((300, 200)))
        );
        assert_eq!(image.data, base64(&webp));
    }

    fn webp(image: &image::DynamicImage) -> Vec<u8> {
        let mut out = Vec::new();
        image
            .write_with_encoder(image::codecs::webp::WebPEncoder::new_lossless(&mut out))
            .unwrap();
        out
    }

    #[test]
    fn a_large_webp_becomes_a_jpeg_and_one_with_transparency_a_png() {
        let opaque = webp(&image::DynamicImage::ImageRgb8(photo(1800, 900)));
        let image = image_from_bytes(&opaque, "wide.webp").unwrap();
        assert_eq!(
            (image.media_type, image.dimensions),
            ("image/jpeg", Some((MAX_IMAGE_EDGE, 784)))
        );
        let mut clear = image::DynamicImage::ImageRgb8(photo(1800, 900)).to_rgba8();
        clear.put_pixel(5, 5, image::Rgba([0, 0, 0, 0]));
        let transparent = webp(&image::DynamicImage::ImageRgba8(clear));
        let image = image_from_bytes(&transparent, "sticker.webp").unwrap();
        assert_eq!(
            (image.media_type, image.dimensions),
            ("image/png", Some((MAX_IMAGE_EDGE, 784)))
        );
    }

    #[test]
    fn facts_of_a_stored_image_come_from_its_bytes() {
        let facts = ImageFacts::of_base64("image/png", &base64(HEADER_ONLY_PNG));
        assert_eq!(facts.dimensions, Some((1, 1)));
        assert_eq!(facts.size, 33);
        assert_eq!(facts.format(), "PNG");
        let broken = ImageFacts::of_base64("image/jpeg", &base64(&[0xFF, 0xD8, 0xFF, 0]));
        assert_eq!((broken.dimensions, broken.size), (None, 4));
        assert_eq!(broken.format(), "JPEG");
        let photo = jpeg(&photo(64, 48), 80, None);
        let facts = ImageFacts::of_base64("image/jpeg", &base64(&photo));
        assert_eq!(facts.dimensions, Some((64, 48)));
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
