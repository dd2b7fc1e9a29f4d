//! The vault: a folder of Markdown notes.
//!
//! * [`guard`] turns every path a tool or command receives into a checked, vault-relative path.
//! * [`contained`] does every file operation from one handle on the vault root, so a folder
//!   swapped for a link after the guard's check cannot redirect it; it also serialises writers.
//! * [`note_io`] reads notes and writes them atomically, preserving their format.
//! * [`markdown`] extracts structure (frontmatter, tags, wikilinks, headings, code blocks).
//! * [`name`] names a note: its file name and stem, one rule for every caller.
//! * [`links`] resolves wikilink targets to notes; [`relink`] keeps links right when a note moves.
//! * [`walk`] lists the notes of a vault; [`watch`] reports changes while a process runs.
//! * [`obsidian`] reads what the vault's Obsidian settings say about daily notes and templates.
//! * [`journal`] keeps the small durable file a write over several notes needs (a move).

pub mod anchor_match;
pub mod contained;
pub mod guard;
pub mod journal;
pub mod links;
pub mod markdown;
pub mod name;
pub mod note_io;
pub mod obsidian;
pub mod percent;
pub mod relink;
pub mod walk;
pub mod watch;

pub use guard::{Access, PathError, Vault, VaultPath};
