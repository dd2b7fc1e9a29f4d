//! One command file: optional frontmatter, then the prompt.
//!
//! The keys are those of the issue and, so a `.claude/commands` folder works as it is, their
//! spellings there too: `allowed-tools`, `argument-hint`.

use crate::vault::markdown::{self, FrontmatterValue};
use serde::Serialize;

/// A command file, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CommandFile {
    pub description: Option<String>,
    /// The names of its arguments, in order (`{{1}}` is the first, `{{topic}}` the one named so);
    /// the last one takes the rest of what was typed.
    pub arguments: Vec<String>,
    /// Shown after the name while typing; made from `arguments` when not given.
    pub argument_hint: Option<String>,
    /// The model that answers this command (for its turn only).
    pub model: Option<String>,
    /// The tools this command may use: the turn's tools narrowed to these names; `None` leaves
    /// them as they are. It never adds a tool.
    pub allowed_tools: Option<Vec<String>>,
    /// The prompt with its placeholders.
    pub body: String,
}

impl CommandFile {
    /// What to type after the name: the file's hint, else the arguments as `<name>`, else
    /// `[args]` when the body takes what is typed.
    pub fn hint(&self) -> String {
        if let Some(hint) = &self.argument_hint {
            return hint.clone();
        }
        if !self.arguments.is_empty() {
            return self
                .arguments
                .iter()
                .map(|a| format!("<{a}>"))
                .collect::<Vec<_>>()
                .join(" ");
        }
        if self.body.contains("{{args}}") || self.body.contains("$ARGUMENTS") {
            return "[args]".to_string();
        }
        String::new()
    }
}

/// Parse the text of a command file. A key of the wrong shape is an error naming it.
pub fn parse_command_file(text: &str) -> Result<CommandFile, String> {
    let parsed = markdown::parse(text);
    let body = text
        .get(parsed.body_start..)
        .unwrap_or("")
        .trim()
        .to_string();
    let mut file = CommandFile {
        body,
        ..CommandFile::default()
    };
    let Some(frontmatter) = parsed.frontmatter else {
        return Ok(file);
    };
    for field in &frontmatter.fields {
        let key = field.key.to_ascii_lowercase().replace('-', "_");
        match key.as_str() {
            "description" => file.description = scalar(&field.value, &field.key)?,
            // `[file]` reads as a YAML list, but it is a hint as written.
            "argument_hint" => {
                file.argument_hint = Some(field.raw.trim().to_string()).filter(|s| !s.is_empty())
            }
            "model" => file.model = scalar(&field.value, &field.key)?,
            "arguments" => file.arguments = list(&field.value, &field.key)?,
            "allowed_tools" => file.allowed_tools = Some(list(&field.value, &field.key)?),
            // Other keys (tags, notes to self) are the writer's business.
            _ => {}
        }
    }
    for name in &file.arguments {
        if name.is_empty()
            || name.chars().all(|c| c.is_ascii_digit())
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "`arguments` holds {}, which is no name (letters, digits, _ and -, not only digits)",
                crate::quote::quoted(name)
            ));
        }
    }
    Ok(file)
}

fn scalar(value: &FrontmatterValue, key: &str) -> Result<Option<String>, String> {
    match value {
        FrontmatterValue::Null => Ok(None),
        FrontmatterValue::Scalar(s) => Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty())),
        _ => Err(format!("`{key}` should be one line of text")),
    }
}

/// A list: `[a, b]`, `- a` lines, or one line of names split on commas and spaces.
fn list(value: &FrontmatterValue, key: &str) -> Result<Vec<String>, String> {
    let items: Vec<String> = match value {
        FrontmatterValue::Null => Vec::new(),
        FrontmatterValue::Scalar(s) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(str::to_string)
            .collect(),
        FrontmatterValue::FlowList(items) | FrontmatterValue::BlockList(items) => items.clone(),
        FrontmatterValue::Other => return Err(format!("`{key}` should be a list of names")),
    };
    Ok(items
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect())
}
