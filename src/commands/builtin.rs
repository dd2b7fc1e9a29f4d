//! The chat's own commands, for the lists (`vaultchat commands`, the `/` list): a command file
//! cannot take one of these names.

use super::{Command, Origin};

/// Name (without the slash), what it does, what it takes.
pub const BUILTIN: &[(&str, &str, &str)] = &[
    ("new", "Start a new session", ""),
    (
        "compact",
        "Summarise the older part of the conversation now (frees context)",
        "",
    ),
    (
        "continue-new",
        "Start a new session from the summary of this one, linked to it",
        "",
    ),
    (
        "save",
        "Save this chat as a note in Chats/ (/save last: the last reply)",
        "[last]",
    ),
    (
        "sessions",
        "Show past sessions: resume, rename, delete, search",
        "",
    ),
    ("usage", "Show token usage, cache hits and cost", ""),
    (
        "model",
        "List the models and their windows; /model NAME switches",
        "[name]",
    ),
    (
        "rewind",
        "Restore the open note to before an agent edit (shown as a diff first)",
        "",
    ),
    (
        "tasks",
        "Show the vault's open tasks, due first; Enter opens one, a key checks it off",
        "",
    ),
    (
        "backlinks",
        "Show the notes that link to the open note, with the linking lines; Enter opens one",
        "",
    ),
    ("help", "Show the keys and every command", ""),
    ("mcp", "Show the tools and the MCP servers", ""),
];

/// The built-ins as commands.
pub(super) fn commands() -> Vec<Command> {
    BUILTIN
        .iter()
        .map(|(name, description, hint)| Command {
            name: (*name).to_string(),
            description: (*description).to_string(),
            argument_hint: (*hint).to_string(),
            origin: Origin::BuiltIn,
            file: None,
            prompt: None,
            arguments: Vec::new(),
        })
        .collect()
}
