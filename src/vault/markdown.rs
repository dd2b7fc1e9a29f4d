//! Placeholder: replaced by the Markdown structure implementation.

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedNote {
    pub title: Option<String>,
    pub tags: Vec<String>,
    pub aliases: Vec<String>,
    pub body_start: usize,
}

pub fn parse(text: &str) -> ParsedNote {
    let _ = text;
    ParsedNote::default()
}
