//! The names notes go by over MCP: one URI per note, and the opaque cursor of `resources/list`.
//!
//! A note is `vault://note/<its vault-relative path>`, each path segment percent-encoded (every
//! byte outside RFC 3986's unreserved set), the `/` between segments kept: `Projects/My Plan.md` is
//! `vault://note/Projects/My%20Plan.md`. The URI names the note by its place in the vault, not by
//! where the vault lies on disk, so it survives the vault being moved or served over HTTP from
//! another machine; docs/decisions.md says why it is not a `file://` URI.

/// What every note URI starts with.
pub const NOTE_URI_PREFIX: &str = "vault://note/";

/// The RFC 6570 template clients may fill in with a vault-relative path (`{+path}` keeps `/`).
pub const NOTE_URI_TEMPLATE: &str = "vault://note/{+path}";

/// The URI of the note at the vault-relative `rel`.
pub fn note_uri(rel: &str) -> String {
    let mut uri = String::with_capacity(NOTE_URI_PREFIX.len() + rel.len() + 8);
    uri.push_str(NOTE_URI_PREFIX);
    for (index, segment) in rel.split('/').enumerate() {
        if index > 0 {
            uri.push('/');
        }
        percent_encode_into(segment, &mut uri);
    }
    uri
}

/// The vault-relative path a note URI names; `None` when `uri` is not a note URI or its escapes
/// do not decode to UTF-8. The path is not checked here: it goes through the vault's guard.
pub fn note_rel(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(NOTE_URI_PREFIX)?;
    // A query or fragment has no meaning for a note; refuse rather than ignore it.
    if encoded.contains(['?', '#']) {
        return None;
    }
    crate::vault::percent::percent_decode(encoded)
}

fn percent_encode_into(segment: &str, out: &mut String) {
    out.push_str(&crate::vault::percent::percent_encode(
        segment,
        crate::vault::percent::URI_SEGMENT,
    ));
}

/// The cursor of the page after the one that ended with the note at `rel`. Pages are cut by
/// path (the next page starts after this path in byte order), not by position, so a note added
/// or removed before the cursor shifts nothing: no note is listed twice or skipped because
/// another changed. Hex, so it is opaque and survives any client.
pub fn cursor_after(rel: &str) -> String {
    let mut cursor = String::with_capacity(3 + rel.len() * 2);
    cursor.push_str("n1.");
    for byte in rel.as_bytes() {
        cursor.push_str(&format!("{byte:02x}"));
    }
    cursor
}

/// The path a cursor from [`cursor_after`] continues after; `None` for anything else.
pub fn cursor_rel(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix("n1.")?.as_bytes();
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes = hex
        .chunks(2)
        .map(|pair| {
            Some(
                crate::vault::percent::hex_value(pair[0])? << 4
                    | crate::vault::percent::hex_value(pair[1])?,
            )
        })
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_uris_encode_each_segment_and_decode_back() {
        let cases = [
            ("Plan.md", "vault://note/Plan.md"),
            ("Projects/My Plan.md", "vault://note/Projects/My%20Plan.md"),
            ("a/b/c-d_e~f.md", "vault://note/a/b/c-d_e~f.md"),
            ("Café #1?.md", "vault://note/Caf%C3%A9%20%231%3F.md"),
            ("100%/x.md", "vault://note/100%25/x.md"),
            ("日記/2026.md", "vault://note/%E6%97%A5%E8%A8%98/2026.md"),
        ];
        for (rel, uri) in cases {
            assert_eq!(note_uri(rel), uri);
            assert_eq!(note_rel(uri).as_deref(), Some(rel));
        }
    }

    #[test]
    fn other_uris_are_not_notes() {
        for uri in [
            "file:///etc/passwd",
            "vault://other/x.md",
            "vault://note/x.md?raw",
            "vault://note/x.md#top",
            "vault://note/%zz.md",
            "vault://note/%C3.md",
            "vault://note/%2",
        ] {
            assert_eq!(note_rel(uri), None, "{uri}");
        }
        // Escapes decode to what they say; the vault's guard refuses what climbs out.
        assert_eq!(
            note_rel("vault://note/%2e%2e/x.md").as_deref(),
            Some("../x.md")
        );
    }

    #[test]
    fn cursors_round_trip_and_refuse_forgeries() {
        for rel in ["a.md", "Projects/My Plan.md", "日記.md"] {
            assert_eq!(cursor_rel(&cursor_after(rel)).as_deref(), Some(rel));
        }
        for bad in ["", "n1.6", "n1.zz", "x.61", "n1.c3"] {
            assert_eq!(cursor_rel(bad), None, "{bad}");
        }
    }
}
