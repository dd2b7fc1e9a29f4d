//! Commands of one's own: prompts kept as Markdown files and run as `/name` in the chat or with
//! `vaultchat ask "/name ARGS"`. The person's live in the config folder's `commands/`, the vault's
//! in `.vaultchat/commands/`; the file name is the command and folders make namespaces
//! (`study/flashcards.md` is `/study:flashcards`). Optional frontmatter says what the command is
//! (`description`), what it takes (`arguments`, `argument_hint`), which model answers it
//! (`model`) and which tools it may use (`allowed_tools`, a narrowing of the turn's tools); the
//! body is the prompt, with placeholders ([`expand`]).
//!
//! A vault's command files are written by whoever wrote the vault (a clone, a shared sync
//! folder), so they are listed only while the person trusts the vault's `.vaultchat/` tree: the
//! same per-file-hash trust as the vault's plugins ([`crate::mcp::plugins`], decisions §45, §63).
//! Every read is bounded ([`load`]): how many files, how deep, how large.

mod builtin;
mod expand;
mod file;
mod load;
mod mcp_prompts;
mod trust;

pub use builtin::BUILTIN;
pub use expand::{ExpandError, Invocation, MAX_TAGGED_NOTES, expand, split_args};
pub use file::{CommandFile, parse_command_file};
pub use load::{
    MAX_COMMAND_BYTES, MAX_COMMAND_DEPTH, MAX_COMMANDS, MAX_FOLDER_ENTRIES, load_personal,
    load_vault, personal_dir,
};
pub use mcp_prompts::{Argument, get_prompt, prompt_arguments};
pub use trust::{VaultCommands, trusted_covered, vault_commands};

use serde::Serialize;

/// Where the vault keeps its command files, relative to its root (one constant, beside the
/// plugins file the same trust covers).
pub use crate::mcp::plugins::COMMANDS_DIR;

/// Where a command comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// One of the chat's own (`/new`, `/help`, …).
    BuiltIn,
    /// A file in the person's config folder.
    Personal,
    /// A file in the vault's `.vaultchat/commands/` (listed only while trusted).
    Vault,
    /// A prompt of one of the person's MCP servers (`plugin: false`) or of one of the vault's
    /// plugins (listed only while trusted), run with `prompts/get` (decisions §67).
    McpPrompt {
        server: String,
        /// The name the server knows it by.
        prompt: String,
        plugin: bool,
    },
}

impl Origin {
    /// One word for lists.
    pub fn label(&self) -> &'static str {
        match self {
            Self::BuiltIn => "built-in",
            Self::Personal => "yours",
            Self::Vault => "vault",
            Self::McpPrompt { plugin: false, .. } => "mcp",
            Self::McpPrompt { plugin: true, .. } => "plugin",
        }
    }

    /// Who owns a name, for messages: "a built-in command".
    fn owner(&self) -> &'static str {
        match self {
            Self::BuiltIn => "a built-in command",
            Self::Personal => "one of your commands",
            Self::Vault => "one of the vault's commands",
            Self::McpPrompt { .. } => "an MCP server's prompt",
        }
    }
}

/// One command as the lists show it and the chat runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    /// Without the slash: `weekly-review`, `study:flashcards`.
    pub name: String,
    pub description: String,
    /// What to type after the name (`<topic>`, `[args]`); empty when it takes nothing.
    pub argument_hint: String,
    pub origin: Origin,
    /// The file it was read from (absolute for the person's, vault-relative for the vault's);
    /// `None` for a built-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The parsed file; `None` for a built-in or an MCP prompt.
    #[serde(skip)]
    pub prompt: Option<CommandFile>,
    /// An MCP prompt's arguments in the server's order; empty for the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<Argument>,
}

/// Every command there is for a vault, and what there is to say about the ones left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Catalog {
    /// Built-ins first, then the person's, then the vault's, each sorted by name.
    pub commands: Vec<Command>,
    /// Why the vault's commands are not listed (not trusted, changed since), when it has some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    /// Files left out (unreadable, too large, a bad name, a name taken), one line each.
    pub problems: Vec<String>,
}

impl Catalog {
    /// Only the built-ins (what the app knows before the host has read the command files).
    pub fn built_in() -> Self {
        Self {
            commands: builtin::commands(),
            withheld: None,
            problems: Vec::new(),
        }
    }

    /// The built-ins, the person's commands from `personal` and the vault's from `vault` (already
    /// checked against the trust by the caller): a name taken by a built-in, or a vault command
    /// named like one of the person's, is left out with a problem saying so.
    pub fn assemble(personal: load::Loaded, vault: load::Loaded, withheld: Option<String>) -> Self {
        let mut catalog = Self {
            commands: builtin::commands(),
            withheld,
            problems: Vec::new(),
        };
        for loaded in [personal, vault] {
            catalog.problems.extend(loaded.problems);
            for command in loaded.commands {
                match catalog.find(&command.name) {
                    Some(taken) => catalog.problems.push(format!(
                        "/{} from {} is left out: the name is taken by {}",
                        crate::quote::terminal(&command.name),
                        crate::quote::terminal(command.file.as_deref().unwrap_or("")),
                        taken.origin.owner()
                    )),
                    None => catalog.commands.push(command),
                }
            }
        }
        catalog
    }

    /// The command named `name` (without the slash).
    pub fn find(&self, name: &str) -> Option<&Command> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// The commands whose name starts with `prefix` (without the slash), in list order.
    pub fn matching<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Command> + 'a {
        self.commands
            .iter()
            .filter(move |c| c.name.starts_with(prefix))
    }
}

/// Every command for `vault`: the built-ins, the person's (from `paths`) and the vault's while
/// the person trusts them (the trust is read from the app database at `database`).
pub fn catalog(paths: &crate::config::Paths, vault: &crate::vault::Vault) -> Catalog {
    let vault_commands = vault_commands(vault, &paths.database_file());
    Catalog::assemble(
        load_personal(paths),
        vault_commands.loaded,
        vault_commands.withheld,
    )
}

/// Whether `name` could be a command: letters, digits, `-`, `_`, `.` and `:` between parts (a
/// path like `etc/hosts` is not).
pub fn is_command_name(name: &str) -> bool {
    name.split(':').all(is_name_part)
}

/// One part of a command's name (a file's stem, a folder, a server, a prompt): letters, digits,
/// `-`, `_` and `.`, what can be typed after a `/`.
fn is_name_part(part: &str) -> bool {
    !part.is_empty()
        && part
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `/name ARGS` when a typed message is a command: a name a command can have, and no `//` at
/// the start. A pasted path (`/home/me/notes/a.md is broken`) is a message, as is `//text`, the
/// way to send a message that starts with `/` (see [`message_text`]). The app and `vaultchat ask`
/// both decide by this.
pub fn command_invocation(text: &str) -> Option<(&str, &str)> {
    if text.trim_start().starts_with("//") {
        return None;
    }
    let (name, args) = parse_invocation(text)?;
    is_command_name(name).then_some((name, args))
}

/// The text a typed message sends: as typed, except that `//` at its start stands for `/`
/// (`//tmp is full` sends `/tmp is full`).
pub fn message_text(text: &str) -> std::borrow::Cow<'_, str> {
    match text.trim_start().strip_prefix("//") {
        Some(rest) => std::borrow::Cow::Owned(format!("/{rest}")),
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// `/name ARGS` split into the name and the rest (trimmed); `None` when `text` is no command.
pub fn parse_invocation(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(at) => (&rest[..at], rest[at..].trim()),
        None => (rest, ""),
    };
    (!name.is_empty()).then_some((name, args))
}

#[cfg(test)]
mod tests;
