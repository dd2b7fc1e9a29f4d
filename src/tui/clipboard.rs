//! Copying text out of vaultchat: the system clipboard through arboard, and OSC 52 — an escape
//! sequence that asks the terminal itself to set the clipboard — where there is no system
//! clipboard to reach (over SSH, on a console, in a container).
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

    #[cfg(target_os = "linux")]
    #[test]
    fn copy_without_a_display_falls_back_to_osc52() {
        // Only where there is no display: elsewhere this would overwrite the person's clipboard.
        if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
            return;
        }
        assert_eq!(copy("vaultchat clipboard test"), Ok(VIA_OSC52));
    }
}
