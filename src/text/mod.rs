//! Pure text algorithms that the engine and the app both use, as helix-core serves helix-term:
//! no files, no I/O, no knowledge of notes or vaults (docs/architecture.md, the module map).
//!
//! * [`diff`] compares two versions of a text line by line (hunks, per-hunk apply, three-way
//!   merges);
//! * [`word_diff`] pairs changed lines and finds the words that changed inside them.

pub mod diff;
pub mod word_diff;
