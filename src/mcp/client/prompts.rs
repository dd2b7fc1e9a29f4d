//! A server's prompts (`prompts/list`, `prompts/get`), made into what the chat can offer and
//! send: the list bounded (a server may answer with thousands of prompts or a novel for a
//! description), and a prompt's messages made into the conversation's messages as the MCP spec
//! describes them: roles kept, text as text, an embedded text resource as a text block that names
//! its URI, images as images when a model can take them, everything else as a short note, the
//! whole cut at [`MAX_PROMPT_BYTES`] (decisions §67).

use crate::protocol::{Block, Message, Role};
use rmcp::model::{ContentBlock, GetPromptResult, Prompt, PromptMessage, ResourceContents};
use std::time::Duration;

/// The most prompts offered from one server; the rest are left out with a problem.
pub const MAX_PROMPTS_PER_SERVER: usize = 100;

/// The most `prompts/list` pages read from one server (a server may hand out cursors forever).
pub const MAX_PROMPT_PAGES: usize = 10;

/// The longest prompt name kept, in characters.
pub const MAX_PROMPT_NAME_CHARS: usize = 64;

/// The longest description kept (a prompt's or an argument's), in characters.
pub const MAX_PROMPT_DESCRIPTION_CHARS: usize = 200;

/// The most arguments one prompt may list; a prompt with more is left out.
pub const MAX_PROMPT_ARGUMENTS: usize = 16;

/// How long listing one server's prompts may take at most (its call timeout when shorter).
pub const PROMPT_LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long `prompts/get` may take at most (its call timeout when shorter): the app's host
/// waits for it in order with the agent's ops.
pub const PROMPT_GET_TIMEOUT: Duration = Duration::from_secs(20);

/// The most text one prompt's messages bring into the conversation.
pub const MAX_PROMPT_BYTES: usize = 100_000;

/// The most messages one prompt brings (consecutive ones of one role counted as one).
pub const MAX_PROMPT_MESSAGES: usize = 32;

/// The image types every provider accepts.
const MODEL_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Anthropic's limit for one image.
const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// One prompt of one server, bounded, as the command list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPrompt {
    /// The server's name (`[mcp.servers.NAME]`, `[plugins.NAME]`).
    pub server: String,
    /// Whether the server is a vault plugin (listed only while trusted).
    pub plugin: bool,
    /// The name the server knows it by.
    pub name: String,
    /// Its description (or title), one line, cut at [`MAX_PROMPT_DESCRIPTION_CHARS`].
    pub description: String,
    /// Its arguments in the order the server lists them.
    pub arguments: Vec<ListedArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedArgument {
    pub name: String,
    pub description: String,
    pub required: bool,
}

/// Every running server's prompts, and one line for each server that could not list them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptListing {
    pub prompts: Vec<ListedPrompt>,
    /// Prompts left out and servers that failed, one line each (escaped where shown).
    pub problems: Vec<String>,
    /// The failures not reported before in this run (a notice says each once).
    pub new_failures: Vec<String>,
}

/// A prompt's messages, ready for the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct GotPrompt {
    /// In the server's order, roles kept, consecutive messages of one role joined.
    pub messages: Vec<Message>,
}

/// `text` on one line, cut at `max` characters with `…`.
fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// The prompts of one server's pages, bounded: what is kept and a line for each left out.
pub(super) fn listed(
    server: &str,
    plugin: bool,
    prompts: Vec<Prompt>,
    more_pages: bool,
) -> (Vec<ListedPrompt>, Vec<String>) {
    let mut kept = Vec::new();
    let mut problems = Vec::new();
    let total = prompts.len();
    for prompt in prompts {
        if kept.len() == MAX_PROMPTS_PER_SERVER {
            problems.push(format!(
                "the MCP server `{server}` lists {total}{} prompts; only the first {MAX_PROMPTS_PER_SERVER} are offered",
                if more_pages { " or more" } else { "" }
            ));
            break;
        }
        if prompt.name.is_empty() || prompt.name.chars().count() > MAX_PROMPT_NAME_CHARS {
            problems.push(format!(
                "a prompt of the MCP server `{server}` is left out: its name is empty or longer than {MAX_PROMPT_NAME_CHARS} characters"
            ));
            continue;
        }
        let arguments = prompt.arguments.unwrap_or_default();
        if arguments.len() > MAX_PROMPT_ARGUMENTS {
            problems.push(format!(
                "the prompt {} of the MCP server `{server}` is left out: it takes {} arguments (at most {MAX_PROMPT_ARGUMENTS})",
                crate::quote::quoted(&one_line(&prompt.name, MAX_PROMPT_NAME_CHARS)),
                arguments.len()
            ));
            continue;
        }
        let description = prompt
            .description
            .filter(|d| !d.trim().is_empty())
            .or(prompt.title)
            .unwrap_or_default();
        kept.push(ListedPrompt {
            server: server.to_string(),
            plugin,
            name: prompt.name,
            description: one_line(&description, MAX_PROMPT_DESCRIPTION_CHARS),
            arguments: arguments
                .into_iter()
                .map(|a| ListedArgument {
                    name: one_line(&a.name, MAX_PROMPT_NAME_CHARS),
                    description: one_line(
                        a.description.as_deref().unwrap_or_default(),
                        MAX_PROMPT_DESCRIPTION_CHARS,
                    ),
                    required: a.required.unwrap_or(false),
                })
                .collect(),
        });
    }
    if more_pages && kept.len() < MAX_PROMPTS_PER_SERVER {
        problems.push(format!(
            "the MCP server `{server}` has more than {MAX_PROMPT_PAGES} pages of prompts; the rest are left out"
        ));
    }
    (kept, problems)
}

/// What is left of the byte budget, and the images taken so far.
struct Budget {
    bytes: usize,
    images: usize,
    cut: bool,
}

impl Budget {
    /// `text` within what is left; the first text past the budget is cut and says so.
    fn text(&mut self, text: String) -> Option<String> {
        if self.cut {
            return None;
        }
        if text.len() <= self.bytes {
            self.bytes -= text.len();
            return Some(text);
        }
        self.cut = true;
        let total = text.len();
        let text = super::result::truncated(text, self.bytes);
        self.bytes = 0;
        Some(format!(
            "{text}\n[the prompt is longer than {} KB; the rest of it ({total} bytes in this part and anything after) is left out]",
            MAX_PROMPT_BYTES / 1000
        ))
    }

    /// An image block when a model can take it, else a note saying why not.
    fn image(&mut self, what: &str, mime: &str, data: &str) -> Block {
        let mime = mime.to_ascii_lowercase();
        let bytes = data.len() / 4 * 3;
        let note = if !MODEL_IMAGE_TYPES.contains(&mime.as_str()) {
            format!(
                "[{what}: {mime}, {bytes} bytes, not sent: the model takes PNG, JPEG, GIF and WebP]"
            )
        } else if bytes > MAX_IMAGE_BYTES {
            format!("[{what}: {mime}, {bytes} bytes, not sent: larger than 5 MB]")
        } else if self.images >= crate::attach::MAX_IMAGES_PER_MESSAGE {
            format!(
                "[{what}: {mime}, {bytes} bytes, not sent: a prompt brings at most {} images]",
                crate::attach::MAX_IMAGES_PER_MESSAGE
            )
        } else {
            self.images += 1;
            return Block::Image {
                media_type: mime,
                data: data.to_string(),
            };
        };
        Block::Text { text: note }
    }
}

/// One message's content as a block (text within the budget); `None` once the budget is spent.
fn block_of(content: ContentBlock, budget: &mut Budget) -> Option<Block> {
    let text = match content {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            if budget.cut {
                return None;
            }
            return Some(budget.image("image", &image.mime_type, &image.data));
        }
        ContentBlock::Audio(audio) => format!(
            "[audio: {}, not sent: the model takes no audio]",
            audio.mime_type
        ),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("<resource uri=\"{uri}\">\n{text}\n</resource>")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                if budget.cut {
                    return None;
                }
                let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                if mime.starts_with("image/") {
                    return Some(budget.image(&format!("resource {uri}"), mime, blob));
                }
                format!(
                    "[resource {uri} ({mime}), {} bytes, not sent: only text and images are]",
                    blob.len() / 4 * 3
                )
            }
            _ => "[a resource of a kind vaultchat does not know]".to_string(),
        },
        ContentBlock::ResourceLink(link) => {
            format!("[resource link: {} <{}>]", link.name, link.uri)
        }
        _ => "[content of a kind vaultchat does not know]".to_string(),
    };
    budget.text(text).map(|text| Block::Text { text })
}

/// A `prompts/get` result as the conversation's messages: consecutive messages of one role
/// joined into one (the providers want turns), at most [`MAX_PROMPT_MESSAGES`], the text at most
/// [`MAX_PROMPT_BYTES`].
pub fn prompt_messages(result: GetPromptResult) -> GotPrompt {
    let mut budget = Budget {
        bytes: MAX_PROMPT_BYTES,
        images: 0,
        cut: false,
    };
    let mut messages: Vec<Message> = Vec::new();
    let total = result.messages.len();
    for (index, PromptMessage { role, content, .. }) in result.messages.into_iter().enumerate() {
        let role = match role {
            rmcp::model::Role::User => Role::User,
            rmcp::model::Role::Assistant => Role::Assistant,
        };
        let joins = messages.last().is_some_and(|m| m.role == role);
        if !joins && messages.len() == MAX_PROMPT_MESSAGES {
            if let Some(last) = messages.last_mut() {
                last.content.push(Block::Text {
                    text: format!(
                        "[the prompt has more messages; {} of {total} are left out]",
                        total - index
                    ),
                });
            }
            break;
        }
        let Some(block) = block_of(content, &mut budget) else {
            break;
        };
        match messages.last_mut() {
            Some(last) if joins => last.content.push(block),
            _ => messages.push(Message {
                role,
                content: vec![block],
            }),
        }
    }
    GotPrompt { messages }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::PromptArgument;

    fn prompt(name: &str, description: &str) -> Prompt {
        Prompt::new(name, Some(description), None)
    }

    #[test]
    fn lists_are_bounded_and_descriptions_one_short_line() {
        let many: Vec<Prompt> = (0..150).map(|i| prompt(&format!("p{i}"), "d")).collect();
        let (kept, problems) = listed("s", false, many, false);
        assert_eq!(kept.len(), MAX_PROMPTS_PER_SERVER);
        assert!(problems[0].contains("lists 150 prompts"), "{problems:?}");

        let long = "word\n".repeat(500);
        let (kept, _) = listed("s", true, vec![prompt("p", &long)], false);
        assert_eq!(
            kept[0].description.chars().count(),
            MAX_PROMPT_DESCRIPTION_CHARS + 1
        );
        assert!(!kept[0].description.contains('\n') && kept[0].description.ends_with('…'));
        assert!(kept[0].plugin);
    }

    #[test]
    fn arguments_keep_their_order_and_which_are_required() {
        let args = vec![
            PromptArgument::new("topic").with_required(true),
            PromptArgument::new("style"),
        ];
        let (kept, _) = listed(
            "s",
            false,
            vec![Prompt::new("p", None::<String>, Some(args))],
            false,
        );
        let names: Vec<(&str, bool)> = kept[0]
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        assert_eq!(names, [("topic", true), ("style", false)]);

        let too_many = (0..=MAX_PROMPT_ARGUMENTS)
            .map(|i| PromptArgument::new(format!("a{i}")))
            .collect();
        let (kept, problems) = listed(
            "s",
            false,
            vec![Prompt::new("big", None::<String>, Some(too_many))],
            true,
        );
        assert!(kept.is_empty());
        assert_eq!(problems.len(), 2, "{problems:?}");
    }

    fn text(role: rmcp::model::Role, text: &str) -> PromptMessage {
        PromptMessage::new_text(role, text)
    }

    #[test]
    fn messages_keep_roles_and_resources_name_their_uri() {
        use rmcp::model::Role as R;
        let resource = ContentBlock::embedded_text("notes://style", "Write plainly.");
        let result = GetPromptResult::new(vec![
            text(R::User, "one"),
            text(R::Assistant, "two"),
            text(R::User, "three"),
            PromptMessage::new(R::User, resource),
        ]);
        let got = prompt_messages(result);
        let roles: Vec<&Role> = got.messages.iter().map(|m| &m.role).collect();
        assert_eq!(roles, [&Role::User, &Role::Assistant, &Role::User]);
        assert_eq!(got.messages[2].content.len(), 2);
        assert_eq!(
            got.messages[2].content[1],
            Block::Text {
                text: "<resource uri=\"notes://style\">\nWrite plainly.\n</resource>".into()
            }
        );
    }

    #[test]
    fn a_huge_prompt_is_cut_and_says_so() {
        let big = "x".repeat(MAX_PROMPT_BYTES * 3);
        let result = GetPromptResult::new(vec![
            PromptMessage::new(rmcp::model::Role::User, ContentBlock::text(big)),
            text(rmcp::model::Role::User, "after"),
        ]);
        let got = prompt_messages(result);
        let Block::Text { text } = &got.messages[0].content[0] else {
            panic!("text expected");
        };
        assert!(text.len() < MAX_PROMPT_BYTES + 1_000, "{}", text.len());
        assert!(text.contains("left out"));
        assert_eq!(got.messages[0].content.len(), 1, "nothing after the cut");
    }

    #[test]
    fn many_messages_are_bounded() {
        let result = GetPromptResult::new(
            (0..100)
                .map(|i| {
                    let role = if i % 2 == 0 {
                        rmcp::model::Role::User
                    } else {
                        rmcp::model::Role::Assistant
                    };
                    text(role, "m")
                })
                .collect(),
        );
        let got = prompt_messages(result);
        assert_eq!(got.messages.len(), MAX_PROMPT_MESSAGES);
    }
}
