//! Fitting an image to what the providers take (docs/protocols.md §1.5): at most
//! [`MAX_IMAGE_EDGE`](super::MAX_IMAGE_EDGE) pixels on the long edge and at most
//! [`MAX_IMAGE_BYTES`](super::MAX_IMAGE_BYTES) as a file. Screenshots stay PNG (sharp text);
//! photos become JPEG (a PNG of a photo is several times larger).

use super::{AttachError, MAX_IMAGE_BYTES, MAX_IMAGE_EDGE};
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType as PngFilter, PngEncoder};
use image::imageops::FilterType;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder as _, ImageReader};
use std::io::Cursor;

/// JPEG quality for scaled photos: visually lossless at the size models look at.
const JPEG_QUALITY: u8 = 85;

/// Below this long edge an image is no longer worth sending: give up instead of shrinking more.
const MIN_EDGE: u32 = 64;

/// Width and height from a PNG's header (the IHDR chunk always comes first); `None` when the
/// bytes do not start like a PNG.
pub(super) fn png_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let header = bytes.get(..24)?;
    if !header.starts_with(b"\x89PNG\r\n\x1a\n") || &header[12..16] != b"IHDR" {
        return None;
    }
    let number = |at: usize| {
        header
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
    };
    let (width, height) = (number(16)?, number(20)?);
    (width > 0 && height > 0).then_some((width, height))
}

/// Width and height as shown, from the header of a PNG, JPEG, GIF or WebP (no pixels decoded):
/// a phone photo stored sideways with an EXIF rotation reports its upright size.
pub(super) fn header_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut decoder = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()?
        .into_decoder()
        .ok()?;
    let (width, height) = decoder.dimensions();
    let upright = match decoder.orientation().unwrap_or(Orientation::NoTransforms) {
        Orientation::Rotate90
        | Orientation::Rotate270
        | Orientation::Rotate90FlipH
        | Orientation::Rotate270FlipH => (height, width),
        Orientation::NoTransforms
        | Orientation::Rotate180
        | Orientation::FlipHorizontal
        | Orientation::FlipVertical => (width, height),
    };
    (width > 0 && height > 0).then_some(upright)
}

/// The most memory the decoder may take for one image: a 100-megapixel RGBA image
/// ([`MAX_IMAGE_PIXELS`](super::MAX_IMAGE_PIXELS)) fits, a decompression bomb whose header lied
/// past the pixel check does not.
pub(super) const MAX_DECODE_BYTES: u64 = 512 * 1024 * 1024;

/// Why an image was not decoded.
#[derive(Debug)]
pub(super) enum DecodeFailure {
    /// Decoding would take more than [`MAX_DECODE_BYTES`].
    TooMuchMemory,
    /// The bytes are not a valid image of their format.
    Invalid(String),
}

/// Decode any supported format, turned upright by its EXIF orientation (re-encoding drops the
/// EXIF block, so a phone photo would otherwise arrive on its side), under a memory limit: the
/// decoder checks the size it needs before it allocates, so a decompression bomb fails at once.
pub(super) fn decode(bytes: &[u8]) -> Result<DynamicImage, DecodeFailure> {
    let invalid = |e: image::ImageError| match e {
        image::ImageError::Limits(_) => DecodeFailure::TooMuchMemory,
        other => DecodeFailure::Invalid(other.to_string()),
    };
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| DecodeFailure::Invalid(e.to_string()))?;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(invalid)?;
    // The decoder's limits cover its own buffers; the image it fills is allocated by
    // `from_decoder`, which does not check them, so its size is checked here first.
    if decoder.total_bytes() > MAX_DECODE_BYTES {
        return Err(DecodeFailure::TooMuchMemory);
    }
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder).map_err(invalid)?;
    image.apply_orientation(orientation);
    Ok(image)
}

/// Whether `image` has pixels that are not fully opaque (those need PNG; JPEG has no alpha).
pub(super) fn has_transparency(image: &DynamicImage) -> bool {
    image.color().has_alpha() && !is_opaque(image)
}

/// The JPEG bytes of `image` made to fit, like [`fit_png`]: the long-edge limit first, then steps
/// of 3/4 until the file is small enough. Transparency is dropped: call it for opaque images.
pub(super) fn fit_jpeg(image: &DynamicImage, name: &str) -> Result<Vec<u8>, AttachError> {
    fit_jpeg_within(image, name, MAX_IMAGE_EDGE, MAX_IMAGE_BYTES)
}

/// [`fit_jpeg`] with the limits as arguments (the tests use small ones).
fn fit_jpeg_within(
    image: &DynamicImage,
    name: &str,
    max_edge: u32,
    max_bytes: usize,
) -> Result<Vec<u8>, AttachError> {
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    fit_within(&rgb, name, max_edge, max_bytes, |fitted| {
        let mut jpeg = Vec::new();
        fitted
            .write_with_encoder(JpegEncoder::new_with_quality(&mut jpeg, JPEG_QUALITY))
            .map_err(|e| e.to_string())?;
        Ok(jpeg)
    })
}

/// The PNG bytes of `image` made to fit: scaled to the long-edge limit, then by steps of 3/4
/// until the file is small enough. An image without transparency is stored without its alpha
/// channel (a quarter fewer bytes to compress and send).
pub(super) fn fit_png(image: &DynamicImage, name: &str) -> Result<Vec<u8>, AttachError> {
    fit_png_within(image, name, MAX_IMAGE_EDGE, MAX_IMAGE_BYTES)
}

/// [`fit_png`] with the limits as arguments (the tests use small ones).
fn fit_png_within(
    image: &DynamicImage,
    name: &str,
    max_edge: u32,
    max_bytes: usize,
) -> Result<Vec<u8>, AttachError> {
    let opaque;
    let image = if image.color().has_alpha() && is_opaque(image) {
        opaque = DynamicImage::ImageRgb8(image.to_rgb8());
        &opaque
    } else {
        image
    };
    fit_within(image, name, max_edge, max_bytes, encode_png)
}

/// Scale `image` to `max_edge` and encode it; while the file is over `max_bytes`, shrink the long
/// edge by 3/4 and try again, down to [`MIN_EDGE`].
fn fit_within(
    image: &DynamicImage,
    name: &str,
    max_edge: u32,
    max_bytes: usize,
    encode: impl Fn(&DynamicImage) -> Result<Vec<u8>, String>,
) -> Result<Vec<u8>, AttachError> {
    let long_edge = image.width().max(image.height());
    let mut edge = long_edge.min(max_edge);
    loop {
        let scaled;
        let fitted = if long_edge > edge {
            scaled = image.resize(edge, edge, FilterType::CatmullRom);
            &scaled
        } else {
            image
        };
        let file = encode(fitted).map_err(|reason| AttachError::Undecodable {
            path: name.to_string(),
            reason,
        })?;
        if file.len() <= max_bytes {
            return Ok(file);
        }
        edge = edge * 3 / 4;
        if edge < MIN_EDGE {
            return Err(AttachError::TooLarge {
                path: name.to_string(),
                size: file.len(),
            });
        }
    }
}

fn is_opaque(image: &DynamicImage) -> bool {
    match image {
        DynamicImage::ImageRgba8(pixels) => pixels.pixels().all(|p| p[3] == u8::MAX),
        DynamicImage::ImageLumaA8(pixels) => pixels.pixels().all(|p| p[1] == u8::MAX),
        // Sixteen-bit and float images are rare on a clipboard; keep their alpha as it is.
        _ => false,
    }
}

fn encode_png(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut png = Vec::new();
    let encoder =
        PngEncoder::new_with_quality(&mut png, CompressionType::Default, PngFilter::Adaptive);
    image
        .write_with_encoder(encoder)
        .map_err(|e| e.to_string())?;
    Ok(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG of `width`×`height` with a pattern that compresses poorly when `noisy`.
    fn png(width: u32, height: u32, noisy: bool) -> Vec<u8> {
        let mut state: u32 = 0x1234_5678;
        let pixels = image::RgbaImage::from_fn(width, height, |x, y| {
            if noisy {
                // xorshift: cheap noise that no PNG filter predicts.
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                let [r, g, b, _] = state.to_le_bytes();
                image::Rgba([r, g, b, 255])
            } else {
                image::Rgba([(x % 256) as u8, (y % 256) as u8, 90, 255])
            }
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgba8(pixels)
            .write_with_encoder(PngEncoder::new(&mut out))
            .unwrap();
        out
    }

    #[test]
    fn dimensions_come_from_the_header() {
        assert_eq!(png_dimensions(&png(40, 30, false)), Some((40, 30)));
        assert_eq!(png_dimensions(b"\x89PNG\r\n\x1a\nshort"), None);
        assert_eq!(png_dimensions(b"GIF89a...................."), None);
    }

    #[test]
    fn a_wide_image_is_scaled_to_the_long_edge_limit_keeping_its_aspect() {
        let source = decode(&png(3136, 200, false)).unwrap();
        let fitted = fit_png(&source, "wide.png").unwrap();
        assert_eq!(png_dimensions(&fitted), Some((MAX_IMAGE_EDGE, 100)));
    }

    #[test]
    fn a_small_opaque_image_keeps_its_size_and_drops_the_alpha_channel() {
        let source = decode(&png(40, 30, false)).unwrap();
        let fitted = decode(&fit_png(&source, "small.png").unwrap()).unwrap();
        assert_eq!((fitted.width(), fitted.height()), (40, 30));
        assert_eq!(fitted.color(), image::ColorType::Rgb8);
        let mut clear = source.to_rgba8();
        clear.put_pixel(0, 0, image::Rgba([0, 0, 0, 0]));
        let fitted = fit_png(&DynamicImage::ImageRgba8(clear), "clear.png").unwrap();
        assert_eq!(
            decode(&fitted).unwrap().color(),
            image::ColorType::Rgba8,
            "transparency is kept"
        );
    }

    #[test]
    fn a_file_too_big_at_the_edge_limit_shrinks_until_it_fits() {
        // 200×200 of noise is about 120 kB as an RGB PNG; allow 50 kB.
        let source = decode(&png(200, 200, true)).unwrap();
        let fitted = fit_png_within(&source, "noise.png", MAX_IMAGE_EDGE, 50_000).unwrap();
        assert!(fitted.len() <= 50_000, "{}", fitted.len());
        // 200 → 150 → 112 (3/4 steps): the first size that fits.
        assert_eq!(png_dimensions(&fitted), Some((112, 112)));
        // Under the smallest useful size it gives up, saying how big it still was.
        let error = fit_png_within(&source, "noise.png", MAX_IMAGE_EDGE, 1_000).unwrap_err();
        assert!(
            matches!(error, AttachError::TooLarge { size, .. } if size > 1_000),
            "{error}"
        );
    }
}
