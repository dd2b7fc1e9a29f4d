//! The prompts of the person's MCP servers and of the vault's trusted plugins as commands:
//! `/server:prompt`, listed with their descriptions and arguments (decisions §67), and what was
//! typed after the name made into the prompt's arguments.
//!
//! The rule for arguments: a word `name=value` whose `name` is one of the prompt's arguments
//! gives that one; the other words fill the arguments not named that way, in the order the server
//! lists them, and the last of those takes the rest of the line (quotes keep spaces together, as
//! in a command file). A required argument left without a value is an error naming every one.

use super::expand::split_args;
use super::{Catalog, Command, Origin};
use crate::mcp::McpServers;
use crate::mcp::client::{GotPrompt, ListedPrompt, PromptListing};
use crate::quote;
use serde::Serialize;
use std::collections::BTreeMap;

/// One argument of an MCP prompt, as the lists show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Argument {
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub required: bool,
}

/// `<topic> [style]`: required arguments in angle brackets, optional ones in square brackets.
fn hint(arguments: &[Argument]) -> String {
    arguments
        .iter()
        .map(|a| {
            if a.required {
                format!("<{}>", a.name)
            } else {
                format!("[{}]", a.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A listed prompt as a command, or why it cannot be one.
fn command_of(prompt: ListedPrompt) -> Result<Command, String> {
    let name = format!("{}:{}", prompt.server, prompt.name);
    if !super::is_command_name(&name) {
        return Err(format!(
            "the prompt {} of the MCP server `{}` is left out: it cannot be typed as a command (letters, digits, -, _ and . only)",
            quote::quoted(&prompt.name),
            quote::terminal(&prompt.server)
        ));
    }
    let arguments: Vec<Argument> = prompt
        .arguments
        .into_iter()
        .map(|a| Argument {
            name: a.name,
            description: a.description,
            required: a.required,
        })
        .collect();
    if let Some(bad) = arguments
        .iter()
        .find(|a| a.name.is_empty() || a.name.contains(['=', ' ']))
    {
        return Err(format!(
            "the prompt /{} is left out: its argument {} cannot be typed as name=value",
            quote::terminal(&name),
            quote::quoted(&bad.name)
        ));
    }
    Ok(Command {
        argument_hint: hint(&arguments),
        description: prompt.description,
        origin: Origin::McpPrompt {
            server: prompt.server,
            prompt: prompt.name,
            plugin: prompt.plugin,
        },
        name,
        file: None,
        prompt: None,
        arguments,
    })
}

impl Catalog {
    /// Add the servers' prompts after the command files: a name already taken (a file named
    /// `server/prompt.md`, or a built-in) keeps its owner and the prompt is left out, saying so.
    pub fn add_prompts(&mut self, listing: PromptListing) {
        self.problems.extend(listing.problems);
        for prompt in listing.prompts {
            match command_of(prompt) {
                Ok(command) => match self.find(&command.name) {
                    Some(taken) => self.problems.push(format!(
                        "the prompt /{} is left out: the name is taken by {}",
                        quote::terminal(&command.name),
                        taken.origin.owner()
                    )),
                    None => self.commands.push(command),
                },
                Err(problem) => self.problems.push(problem),
            }
        }
    }
}

/// Run an MCP prompt: what was typed made into its arguments, then `prompts/get` (bounded in
/// time and size by [`McpServers::get_prompt`]). `Err` is one line naming the command.
pub async fn get_prompt(
    servers: &McpServers,
    command: &Command,
    typed: &str,
) -> Result<GotPrompt, String> {
    let Origin::McpPrompt { server, prompt, .. } = &command.origin else {
        return Err(format!(
            "/{} is not an MCP prompt",
            quote::terminal(&command.name)
        ));
    };
    let arguments = prompt_arguments(command, typed)?;
    servers
        .get_prompt(server, prompt, &arguments)
        .await
        .map_err(|e| format!("/{}: {e}", quote::terminal(&command.name)))
}

/// What was typed after `/server:prompt`, as the prompt's arguments by name.
pub fn prompt_arguments(
    command: &Command,
    typed: &str,
) -> Result<BTreeMap<String, String>, String> {
    let arguments = &command.arguments;
    let mut given: BTreeMap<String, String> = BTreeMap::new();
    let mut positional: Vec<String> = Vec::new();
    for word in split_args(typed) {
        match word.split_once('=') {
            Some((name, value)) if arguments.iter().any(|a| a.name == name) => {
                given.insert(name.to_string(), value.to_string());
            }
            _ => positional.push(word),
        }
    }
    let open: Vec<&Argument> = arguments
        .iter()
        .filter(|a| !given.contains_key(&a.name))
        .collect();
    if !positional.is_empty() && open.is_empty() {
        return Err(format!(
            "/{} takes no more arguments than {}; {} is left over",
            quote::terminal(&command.name),
            if arguments.is_empty() {
                "none".to_string()
            } else {
                quote::terminal(&command.argument_hint).into_owned()
            },
            quote::quoted(&positional.join(" "))
        ));
    }
    let mut words = positional.into_iter();
    for (index, argument) in open.iter().enumerate() {
        let value = if index + 1 == open.len() {
            words.by_ref().collect::<Vec<_>>().join(" ")
        } else {
            words.next().unwrap_or_default()
        };
        if !value.is_empty() {
            given.insert(argument.name.clone(), value);
        }
    }
    let missing: Vec<String> = arguments
        .iter()
        .filter(|a| a.required && !given.contains_key(&a.name))
        .map(|a| format!("<{}>", a.name))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/{}: missing argument{} {}; give {} after the name, as `/{} {}` or name=value",
            quote::terminal(&command.name),
            if missing.len() == 1 { "" } else { "s" },
            quote::terminal(&missing.join(" ")),
            if missing.len() == 1 { "it" } else { "them" },
            quote::terminal(&command.name),
            quote::terminal(&command.argument_hint)
        ));
    }
    Ok(given)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::client::ListedArgument;

    fn listed(server: &str, name: &str, arguments: &[(&str, bool)]) -> ListedPrompt {
        ListedPrompt {
            server: server.into(),
            plugin: false,
            name: name.into(),
            description: "d".into(),
            arguments: arguments
                .iter()
                .map(|(n, required)| ListedArgument {
                    name: (*n).into(),
                    description: String::new(),
                    required: *required,
                })
                .collect(),
        }
    }

    fn catalog_with(prompts: Vec<ListedPrompt>) -> Catalog {
        let mut catalog = Catalog::built_in();
        catalog.add_prompts(PromptListing {
            prompts,
            ..PromptListing::default()
        });
        catalog
    }

    #[test]
    fn prompts_are_server_colon_name_with_their_arguments_hinted() {
        let catalog = catalog_with(vec![listed(
            "notes",
            "summarize",
            &[("topic", true), ("style", false)],
        )]);
        let command = catalog.find("notes:summarize").expect("listed");
        assert_eq!(command.argument_hint, "<topic> [style]");
        assert_eq!(
            command.origin,
            Origin::McpPrompt {
                server: "notes".into(),
                prompt: "summarize".into(),
                plugin: false
            }
        );
    }

    #[test]
    fn names_that_cannot_be_typed_or_are_taken_are_left_out_saying_why() {
        let catalog = catalog_with(vec![
            listed("s", "two words", &[]),
            listed("s", "\u{1b}[2Jx", &[]),
            listed("s", "ok", &[]),
            listed("s", "ok", &[]),
        ]);
        assert_eq!(catalog.matching("s:").count(), 1);
        assert_eq!(catalog.problems.len(), 3, "{:?}", catalog.problems);
        assert!(
            catalog.problems.iter().all(|p| !p.contains('\u{1b}')),
            "escaped: {:?}",
            catalog.problems
        );
    }

    fn command(arguments: &[(&str, bool)]) -> Command {
        catalog_with(vec![listed("s", "p", arguments)])
            .find("s:p")
            .cloned()
            .expect("listed")
    }

    #[test]
    fn arguments_by_name_and_in_order_the_last_taking_the_rest() {
        let c = command(&[("topic", true), ("style", false)]);
        let args = prompt_arguments(&c, "rust terse and short").expect("ok");
        assert_eq!(args["topic"], "rust");
        assert_eq!(args["style"], "terse and short");
        let args = prompt_arguments(&c, "style=long \"type systems\"").expect("ok");
        assert_eq!(args["topic"], "type systems");
        assert_eq!(args["style"], "long");
        let args = prompt_arguments(&c, "rust").expect("ok");
        assert!(!args.contains_key("style"));
    }

    #[test]
    fn missing_required_arguments_are_named() {
        let c = command(&[("topic", true), ("audience", true)]);
        let error = prompt_arguments(&c, "").expect_err("missing");
        assert!(error.contains("<topic> <audience>"), "{error}");
        let c = command(&[]);
        let error = prompt_arguments(&c, "extra").expect_err("left over");
        assert!(error.contains("left over"), "{error}");
    }
}
