//! A note's text as the app edits it, and what it looked like on disk when it was read. Reading,
//! hashing and writing stay in `vault::note_io`, which re-exports these types.

use serde::{Deserialize, Serialize};

/// What a note looked like on disk when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub hash: u64,
    pub mtime_ns: i64,
    pub size: u64,
}

/// Line endings of a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LineEnding {
    #[default]
    Lf,
    Crlf,
}

/// How a note's text is laid out in bytes, so it can be written back the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TextFormat {
    pub bom: bool,
    pub line_ending: LineEnding,
}

/// A note's text (BOM stripped, CRLF turned into LF for CRLF files) with what is needed to write it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteText {
    pub text: String,
    pub format: TextFormat,
    pub fingerprint: Fingerprint,
}
