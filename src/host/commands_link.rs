//! Running one of the person's or the vault's commands from the app: the host finds it (the
//! vault's only while trusted), makes its prompt (the index answers `{{tag:x}}`; an MCP server's
//! prompt comes from `prompts/get`, decisions §67) for the agent's lane to send as an
//! `Op::CommandTurn`; a prompt that cannot be made is a `CommandRefused` the app shows.

use super::HostEvent;
use super::core::Core;
use crate::agent::{NoteContext, Op, PromptFrame, TurnLimits};
use crate::commands::{self, Catalog, Command, Origin};
use std::sync::Arc;

/// Read every command again (the files may have changed, or the trust; the servers' prompts
/// are listed once per run) and hand the list to the app; the files left out go to the log, a
/// server that could not list its prompts is a notice once.
pub(super) async fn list(core: Arc<Core>) {
    let catalog = catalog(&core).await;
    core.tell(HostEvent::Commands(catalog));
}

/// The command files off the loop, then the running servers' prompts (none while they start).
async fn catalog(core: &Arc<Core>) -> Catalog {
    let mut catalog = command_files(core).await;
    if let Some(servers) = core.servers.startup.now() {
        add_prompts(core, &mut catalog, &servers).await;
    }
    catalog
}

/// The command files, read off the loop (the files left out go to the log).
async fn command_files(core: &Arc<Core>) -> Catalog {
    let files = {
        let core = Arc::clone(core);
        tokio::task::spawn_blocking(move || {
            commands::catalog(&core.launch.paths, &core.launch.vault)
        })
        .await
    };
    let catalog = files.unwrap_or_else(|e| {
        tracing::warn!("the command files could not be read: {e}");
        Catalog::built_in()
    });
    for problem in &catalog.problems {
        tracing::warn!("a command is left out: {problem}");
    }
    catalog
}

/// The servers' prompts added to `catalog` (listed once per run; a server that could not list
/// them is a notice once).
async fn add_prompts(core: &Core, catalog: &mut Catalog, servers: &crate::mcp::client::McpServers) {
    let listing = servers.prompts().await;
    for failure in &listing.new_failures {
        core.tell(HostEvent::Notice(failure.clone()));
    }
    catalog.add_prompts(listing);
}

/// Find `name` and make its turn from `args` and the note side of the screen, or say why not.
/// The agent's lane (`agent_lane.rs`) sends the turn, in order with the agent's ops.
pub(super) async fn prepare(
    core: &Arc<Core>,
    name: String,
    args: String,
    context: NoteContext,
) -> Result<Op, String> {
    // The files first: a command file never waits on a server's prompt listing.
    let mut catalog = command_files(core).await;
    let mut servers = None;
    if catalog.find(&name).is_none() && name.contains(':') {
        match core.servers.startup.now() {
            Some(running) => {
                add_prompts(core, &mut catalog, &running).await;
                servers = Some(running);
            }
            None if !core.servers.startup.is_empty() => {
                return Err(format!(
                    "/{}: the MCP servers are still starting; run the command again in a moment",
                    crate::quote::terminal(&name)
                ));
            }
            None => {}
        }
    }
    let Some(command) = catalog.find(&name).cloned() else {
        return Err(no_such_command(&name, &catalog));
    };
    match (&command.origin, servers) {
        (Origin::McpPrompt { .. }, Some(servers)) => {
            mcp_prompt(&servers, &command, &args, context).await
        }
        (Origin::McpPrompt { .. }, None) => Err(no_such_command(&name, &catalog)),
        (Origin::BuiltIn, _) => Err(built_in_refusal(&name)),
        (Origin::Personal | Origin::Vault, _) => {
            let core = Arc::clone(core);
            tokio::task::spawn_blocking(move || from_file(&core, &command, &args, context))
                .await
                .unwrap_or_else(|e| Err(format!("the command could not be prepared: {e}")))
        }
    }
}

/// An MCP prompt's messages as the turn (the server asked now, within its timeout).
async fn mcp_prompt(
    servers: &crate::mcp::client::McpServers,
    command: &Command,
    args: &str,
    context: NoteContext,
) -> Result<Op, String> {
    let got = commands::get_prompt(servers, command, args).await?;
    let (text, frame) = prompt_turn(&command.name, got)?;
    Ok(Op::CommandTurn {
        text,
        attachments: Vec::new(),
        context,
        limits: TurnLimits::default(),
        frame,
    })
}

/// A command file's prompt made from what was typed and the note side of the screen.
fn from_file(
    core: &Core,
    command: &Command,
    args: &str,
    context: NoteContext,
) -> Result<Op, String> {
    let ready = core.ready.get();
    let (text, limits) = file_turn(command, args, &context, &mut |tag| match ready {
        Some(ready) => ready
            .workspace
            .notes_tagged(tag, commands::MAX_TAGGED_NOTES + 1)
            .map_err(|e| e.to_string()),
        None => Err("the vault is still being indexed; run the command again in a moment".into()),
    })?;
    Ok(Op::CommandTurn {
        text,
        attachments: Vec::new(),
        context,
        limits,
        frame: PromptFrame::default(),
    })
}

/// An MCP prompt's messages as a turn: the last user message its text, the rest its frame. The
/// one rule the app and `vaultchat ask` follow.
pub fn prompt_turn(
    name: &str,
    got: crate::mcp::client::GotPrompt,
) -> Result<(String, PromptFrame), String> {
    PromptFrame::split(got.messages, &format!("/{name}"))
        .map_err(|e| format!("/{}: {e}", crate::quote::terminal(name)))
}

/// Why `/name` runs nothing: no command has that name (and why the vault's are not offered, when
/// they are not). The one wording the app and `vaultchat ask` use.
pub fn no_such_command(name: &str, catalog: &Catalog) -> String {
    // The name is what the person typed; the vault's words (`withheld`) come escaped.
    let mut message = format!(
        "/{} is not a command; `vaultchat commands` lists every one (/help the built-in ones); to send a message that starts with /, begin it with //",
        crate::quote::terminal(name)
    );
    if let Some(why) = &catalog.withheld {
        message.push_str(&format!(" ({why})"));
    }
    message
}

/// Why a built-in of the chat app is not run as a prompt.
pub fn built_in_refusal(name: &str) -> String {
    format!(
        "/{} is a command of the chat app, not a prompt; `vaultchat commands` lists your own and the vault's",
        crate::quote::terminal(name)
    )
}

/// The prompt and the limits of the person's or the vault's command file `command` run with
/// `args` on the note side `context` — the one rule the app and `vaultchat ask` follow. `tagged`
/// answers `{{tag:x}}` (the index). An error says why not: a built-in of the app, a prompt that
/// cannot be made.
pub fn file_turn(
    command: &Command,
    args: &str,
    context: &NoteContext,
    tagged: &mut dyn FnMut(&str) -> Result<Vec<String>, String>,
) -> Result<(String, TurnLimits), String> {
    let Some(file) = &command.prompt else {
        return Err(built_in_refusal(&command.name));
    };
    let note = context.note.as_ref();
    let selection = note.and_then(|n| n.selected_text());
    let invocation = commands::Invocation {
        args,
        note: note.map(|n| n.path.as_str()),
        selection: selection.as_deref(),
        now_ms: crate::time::now_ms(),
    };
    let text = commands::expand(file, &invocation, tagged)
        .map_err(|e| format!("/{}: {e}", crate::quote::terminal(&command.name)))?;
    Ok((
        text,
        TurnLimits {
            model: file.model.clone(),
            allowed_tools: file.allowed_tools.clone(),
        },
    ))
}
