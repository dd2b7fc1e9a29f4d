//! Placeholder: replaced by wikilink resolution.
