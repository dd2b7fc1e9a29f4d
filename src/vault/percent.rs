//! `%XX` escapes in paths that arrive as URLs: a dropped file's `file://` URL, a note's
//! `vault://note/` resource URI.

/// `a%20b` → `a b`; `None` for a malformed escape (`%zz`, `%+1`, a `%` at the end) or bytes
/// that are not UTF-8.
pub fn percent_decode(encoded: &str) -> Option<String> {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'%' => {
                let high = hex_value(*bytes.get(index + 1)?)?;
                let low = hex_value(*bytes.get(index + 2)?)?;
                out.push(high << 4 | low);
                index += 3;
            }
            byte => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The value of one hex digit (only `0-9a-fA-F`: no sign, unlike `u8::from_str_radix`).
pub fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_decode_and_malformed_ones_are_refused() {
        assert_eq!(
            percent_decode("My%20Photo.jpg").as_deref(),
            Some("My Photo.jpg")
        );
        assert_eq!(percent_decode("caf%C3%A9").as_deref(), Some("café"));
        for bad in ["%zz", "%+1", "a%", "a%2", "%ff"] {
            assert_eq!(percent_decode(bad), None, "{bad}");
        }
    }
}
