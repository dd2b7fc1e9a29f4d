//! `%XX` escapes, on the `percent-encoding` crate: one strict decoder for every path that arrives
//! escaped (a dropped file's `file://` URL, a note's `vault://note/` resource URI, a Markdown link
//! destination) and the encoders for the two places that write escapes (note URIs, link
//! destinations).

use percent_encoding::{AsciiSet, CONTROLS};

/// Every byte outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`): a note URI's segment.
pub const URI_SEGMENT: &AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What ends or confuses a bare Markdown destination: ASCII controls, space, `(`, `)`, `%`, `#`,
/// `<`, `>`, `\`.
pub const LINK_DESTINATION: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'(')
    .add(b')')
    .add(b'%')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'\\');

/// `a%20b` → `a b`; `None` for a malformed escape (`%zz`, `%+1`, a `%` at the end) or bytes
/// that are not UTF-8. The crate's decoder passes a malformed escape through as written; this one
/// refuses it, so the caller decides (take the text as written, or reject the URI).
pub fn percent_decode(encoded: &str) -> Option<String> {
    let bytes = encoded.as_bytes();
    let well_formed = bytes.iter().enumerate().all(|(index, &byte)| {
        byte != b'%'
            || (bytes.get(index + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(index + 2).is_some_and(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return None;
    }
    percent_encoding::percent_decode_str(encoded)
        .decode_utf8()
        .ok()
        .map(|text| text.into_owned())
}

/// `text` with every byte in `set` and every non-ASCII byte escaped (URIs).
pub fn percent_encode(text: &str, set: &'static AsciiSet) -> String {
    percent_encoding::utf8_percent_encode(text, set).to_string()
}

/// `text` with the ASCII bytes in `set` and Unicode control characters escaped, other Unicode kept
/// as written (link destinations, which Obsidian and CommonMark read in UTF-8).
pub fn percent_encode_ascii(text: &str, set: &'static AsciiSet) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let mut buf = [0u8; 4];
        let bytes = c.encode_utf8(&mut buf).as_bytes();
        if c.is_ascii() {
            out.extend(percent_encoding::percent_encode(bytes, set));
        } else if c.is_control() {
            bytes
                .iter()
                .for_each(|&byte| out.push_str(percent_encoding::percent_encode_byte(byte)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of one hex digit (only `0-9a-fA-F`: no sign, unlike `u8::from_str_radix`).
pub fn hex_value(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|value| u8::try_from(value).ok())
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
        for bad in ["%zz", "%+1", "a%", "a%2", "%ff", "a%+1b.md"] {
            assert_eq!(percent_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn encoders_escape_their_sets() {
        assert_eq!(
            percent_encode("Café #1?.md", URI_SEGMENT),
            "Caf%C3%A9%20%231%3F.md"
        );
        assert_eq!(
            percent_encode_ascii("My (Plan) 100%#.md", LINK_DESTINATION),
            "My%20%28Plan%29%20100%25%23.md"
        );
        assert_eq!(
            percent_encode_ascii("日記\u{85}\t.md", LINK_DESTINATION),
            "日記%C2%85%09.md"
        );
        for text in ["a b", "日記/x y.md", "100%"] {
            let encoded = percent_encode(text, URI_SEGMENT);
            assert_eq!(percent_decode(&encoded).as_deref(), Some(text));
        }
    }

    #[test]
    fn hex_digits_have_no_sign() {
        assert_eq!(hex_value(b'f'), Some(15));
        assert_eq!(hex_value(b'A'), Some(10));
        assert_eq!(hex_value(b'+'), None);
        assert_eq!(hex_value(b'g'), None);
    }
}
