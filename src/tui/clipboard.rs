//! The system clipboard through arboard. Copying text out of vaultchat, with OSC 52 — an escape
//! sequence that asks the terminal itself to set the clipboard — where there is no system
//! clipboard to reach (over SSH, on a console, in a container); and reading it for a paste
//! ([`read_for_paste`]): an image becomes an attachment, text is typed in.
//!
//! Components never write to the terminal, so for OSC 52 [`copy`] only says so and the App writes
//! [`osc52`]`(text)` through its terminal backend.

use std::sync::Mutex;

/// [`copy`] put the text on the system clipboard.
pub const VIA_CLIPBOARD: &str = "clipboard";
/// [`copy`] found no system clipboard: the App writes [`osc52`]`(text)` to the terminal.
pub const VIA_OSC52: &str = "OSC 52";

/// The longest OSC 52 sequence sent. Terminals drop longer ones silently (hterm and tmux set
/// limits near 100 kB), and a copy that silently does nothing is worse than a clear refusal.
pub const OSC52_MAX_BYTES: usize = 100_000;

/// The clipboard stays open for the life of the program: on X11 the copied text lives in the
/// process that copied it, so dropping the handle right after copying would lose the text.
static CLIPBOARD: Mutex<Option<arboard::Clipboard>> = Mutex::new(None);

/// Copy `text`: `Ok(VIA_CLIPBOARD)` when the system clipboard took it; `Ok(VIA_OSC52)` when there
/// is none and the App must write `osc52(text)` to the terminal; `Err` (a message for the status
/// line) when neither can carry it.
pub fn copy(text: &str) -> Result<&'static str, String> {
    match system_copy(text) {
        Ok(()) => Ok(VIA_CLIPBOARD),
        Err(reason) => fallback(text, &reason),
    }
}

/// The OSC 52 sequence that sets the terminal's clipboard to `text`: `ESC ] 52 ; c ; <base64> BEL`.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", crate::attach::base64(text.as_bytes()))
}

fn system_copy(text: &str) -> Result<(), String> {
    let mut slot = CLIPBOARD
        .lock()
        .map_err(|_| "the clipboard handle is unusable after an earlier failure".to_string())?;
    if slot.is_none() {
        *slot = Some(arboard::Clipboard::new().map_err(|e| e.to_string())?);
    }
    let clipboard = slot
        .as_mut()
        .ok_or_else(|| "no clipboard handle".to_string())?;
    let result = clipboard.set_text(text).map_err(|e| e.to_string());
    if result.is_err() {
        // A broken connection (the display went away) is retried from scratch next time.
        *slot = None;
    }
    result
}

/// What the clipboard held when the person pasted.
#[derive(Debug)]
pub enum ClipboardPaste {
    /// An image, scaled and encoded for sending.
    Image(crate::attach::Image),
    /// Text and no image: pasted as the terminal would have pasted it.
    Text(String),
    /// Neither an image nor text.
    Empty,
    /// There is no system clipboard to read: why, for the status line.
    Unavailable(String),
    /// The clipboard could not be read, or its image not attached: why.
    Failed(String),
}

/// The name of a clipboard image in messages.
const CLIPBOARD_IMAGE: &str = "the clipboard image";

/// Read the clipboard for a paste: its image if it has one, else its text. This blocks (the
/// clipboard's owner answers, the image is scaled and encoded), so the runner calls it off the
/// UI thread.
pub fn read_for_paste() -> ClipboardPaste {
    read_raw().into_paste()
}

/// What was read, before an image is converted (done with the clipboard unlocked).
enum Raw {
    Image {
        width: usize,
        height: usize,
        rgba: Vec<u8>,
    },
    Paste(ClipboardPaste),
}

impl Raw {
    /// The paste: an image scaled and encoded as an attachment, or what was read as it is.
    fn into_paste(self) -> ClipboardPaste {
        match self {
            Raw::Image {
                width,
                height,
                rgba,
            } => image_paste(width, height, rgba),
            Raw::Paste(paste) => paste,
        }
    }
}

fn read_raw() -> Raw {
    let Ok(mut slot) = CLIPBOARD.lock() else {
        return Raw::Paste(ClipboardPaste::Failed(
            "the clipboard handle is unusable after an earlier failure".into(),
        ));
    };
    if slot.is_none() {
        match arboard::Clipboard::new() {
            Ok(clipboard) => *slot = Some(clipboard),
            Err(e) => return Raw::Paste(ClipboardPaste::Unavailable(unavailable(&e))),
        }
    }
    let Some(clipboard) = slot.as_mut() else {
        return Raw::Paste(ClipboardPaste::Failed("no clipboard handle".into()));
    };
    let raw = classify(clipboard.get_image(), || clipboard.get_text());
    if matches!(raw, Raw::Paste(ClipboardPaste::Failed(_))) {
        // A broken connection (the display went away) is retried from scratch next time.
        *slot = None;
    }
    raw
}

/// Decide from the clipboard's answers: an image wins; without one, its text (`text` is only
/// asked when there is no image).
fn classify(
    image: Result<arboard::ImageData<'static>, arboard::Error>,
    text: impl FnOnce() -> Result<String, arboard::Error>,
) -> Raw {
    match image {
        Ok(image) => {
            return Raw::Image {
                width: image.width,
                height: image.height,
                rgba: image.bytes.into_owned(),
            };
        }
        Err(arboard::Error::ContentNotAvailable) => {}
        Err(arboard::Error::ConversionFailure) => {
            return Raw::Paste(ClipboardPaste::Failed(
                "the clipboard holds an image vaultchat cannot read (only PNG is taken from the \
                 clipboard); save it as a file and use `vaultchat ask --image`"
                    .into(),
            ));
        }
        Err(e) => return Raw::Paste(ClipboardPaste::Failed(e.to_string())),
    }
    Raw::Paste(match text() {
        Ok(text) if !text.is_empty() => ClipboardPaste::Text(text),
        Ok(_) | Err(arboard::Error::ContentNotAvailable) => ClipboardPaste::Empty,
        Err(e) => ClipboardPaste::Failed(e.to_string()),
    })
}

/// An image file dropped on the terminal (or its path pasted) as an attachment: read only when
/// it is a regular file of at most `max_file_bytes`, and refused from its header when it has more
/// pixels than an image may have (`attach::load_image`), so a path to a device, a FIFO, a huge
/// file or a decompression bomb is a message on the status line, not a frozen or killed app.
pub fn dropped_file_paste(path: &std::path::Path, max_file_bytes: u64) -> ClipboardPaste {
    match crate::attach::load_image(path, max_file_bytes) {
        Ok(image) => ClipboardPaste::Image(image),
        Err(e) => ClipboardPaste::Failed(e.to_string()),
    }
}

/// Pixels from the clipboard as an attachment (scaled to the providers' limits). arboard has
/// decoded them already (under the image crate's default 512 MB allocation limit); an image of
/// more pixels than an attachment may have is refused here before it is copied or scaled.
fn image_paste(width: usize, height: usize, rgba: Vec<u8>) -> ClipboardPaste {
    let (Ok(w), Ok(h)) = (u32::try_from(width), u32::try_from(height)) else {
        return ClipboardPaste::Failed(format!(
            "{CLIPBOARD_IMAGE} is {width}×{height} pixels, too large to read"
        ));
    };
    match crate::attach::image_from_rgba(w, h, rgba, CLIPBOARD_IMAGE) {
        Ok(image) => ClipboardPaste::Image(image),
        Err(e) => ClipboardPaste::Failed(e.to_string()),
    }
}

/// [`image_paste`] for the App's tests.
#[cfg(test)]
pub(super) fn image_paste_for_tests(width: usize, height: usize, rgba: Vec<u8>) -> ClipboardPaste {
    image_paste(width, height, rgba)
}

/// Why there is no clipboard, in words a person can act on.
fn unavailable(error: &arboard::Error) -> String {
    let no_display = std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty())
        && std::env::var_os("WAYLAND_DISPLAY").is_none_or(|d| d.is_empty());
    if cfg!(target_os = "linux") && no_display {
        "no X11 or Wayland display: DISPLAY is unset".into()
    } else {
        error.to_string()
    }
}

/// What to do when the system clipboard failed for `reason`.
fn fallback(text: &str, reason: &str) -> Result<&'static str, String> {
    let length = osc52(text).len();
    if length <= OSC52_MAX_BYTES {
        Ok(VIA_OSC52)
    } else {
        Err(format!(
            "Not copied: no system clipboard ({reason}), and the text is too long for the terminal \
             to take over OSC 52 ({} kB; about {} kB fit). Copy a smaller part.",
            length.div_ceil(1000),
            OSC52_MAX_BYTES / 1000
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_wraps_base64_in_the_escape_sequence() {
        assert_eq!(osc52("hello"), "\x1b]52;c;aGVsbG8=\x07");
        assert_eq!(osc52(""), "\x1b]52;c;\x07");
        // UTF-8 bytes, not chars, are encoded.
        assert_eq!(osc52("é"), "\x1b]52;c;w6k=\x07");
    }

    #[test]
    fn without_a_clipboard_short_text_goes_over_osc52() {
        assert_eq!(fallback("note text", "no display"), Ok(VIA_OSC52));
    }

    #[test]
    fn without_a_clipboard_huge_text_is_refused_with_a_reason() {
        let huge = "x".repeat(OSC52_MAX_BYTES);
        let message = fallback(&huge, "no display").unwrap_err();
        assert!(message.contains("no display"), "{message}");
        assert!(message.contains("134 kB"), "{message}");
    }

    fn pixels(width: usize, height: usize) -> arboard::ImageData<'static> {
        arboard::ImageData {
            width,
            height,
            bytes: vec![200; width * height * 4].into(),
        }
    }

    fn pasted(raw: Raw) -> ClipboardPaste {
        raw.into_paste()
    }

    #[test]
    fn an_image_wins_over_text_and_becomes_a_png_attachment() {
        let paste = pasted(classify(Ok(pixels(6, 4)), || {
            panic!("the text is not read when there is an image")
        }));
        match paste {
            ClipboardPaste::Image(image) => {
                assert_eq!(image.media_type, "image/png");
                assert_eq!(image.dimensions, Some((6, 4)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_an_image_the_text_is_pasted_and_nothing_is_empty() {
        let no_image = || Err(arboard::Error::ContentNotAvailable);
        assert!(matches!(
            pasted(classify(no_image(), || Ok("hello".into()))),
            ClipboardPaste::Text(t) if t == "hello"
        ));
        assert!(matches!(
            pasted(classify(no_image(), || Ok(String::new()))),
            ClipboardPaste::Empty
        ));
        assert!(matches!(
            pasted(classify(no_image(), || Err(
                arboard::Error::ContentNotAvailable
            ))),
            ClipboardPaste::Empty
        ));
        assert!(matches!(
            pasted(classify(no_image(), || Err(
                arboard::Error::ClipboardOccupied
            ))),
            ClipboardPaste::Failed(_)
        ));
    }

    #[test]
    fn unreadable_images_say_what_to_do() {
        let paste = pasted(classify(Err(arboard::Error::ConversionFailure), || {
            Ok("never".into())
        }));
        match paste {
            ClipboardPaste::Failed(why) => assert!(why.contains("--image"), "{why}"),
            other => panic!("{other:?}"),
        }
        // Pixel data that does not match the size the clipboard claims.
        let short = arboard::ImageData {
            width: 10,
            height: 10,
            bytes: vec![0; 12].into(),
        };
        match pasted(classify(Ok(short), || Ok(String::new()))) {
            ClipboardPaste::Failed(why) => {
                assert!(
                    why.starts_with("the clipboard image cannot be decoded"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// These tests only run where there is no display: elsewhere they would read or overwrite
    /// the person's clipboard.
    #[cfg(target_os = "linux")]
    fn has_display() -> bool {
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reading_without_a_display_says_there_is_no_clipboard() {
        if has_display() {
            return;
        }
        match read_for_paste() {
            ClipboardPaste::Unavailable(why) => assert!(why.contains("DISPLAY is unset"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn copy_without_a_display_falls_back_to_osc52() {
        // Only where there is no display: elsewhere this would overwrite the person's clipboard.
        if has_display() {
            return;
        }
        assert_eq!(copy("vaultchat clipboard test"), Ok(VIA_OSC52));
    }
}
