//! Running one of the person's or the vault's commands from the app: the host finds it (the
//! vault's only while trusted), makes its prompt (the index answers `{{tag:x}}`; an MCP server's
//! prompt comes from `prompts/get`, decisions §67) and sends the agent an `Op::CommandTurn`; a
//! prompt that cannot be made is a `CommandRefused` the app shows.

use super::HostEvent;
use super::core::Core;
use crate::agent::{NoteContext, Op, PromptFrame, TurnLimits};
use crate::commands::{self, Catalog, Command, Origin};
use std::sync::Arc;

/// Find `name`, make its prompt from `args` and the note side of the screen, and hand it to the
/// agent; or tell the app why not.
pub(super) async fn run(core: &Arc<Core>, name: String, args: String, context: NoteContext) {
    match prepare(core, name, args, context).await {
        Ok(op) => core.agent.send(core, op).await,
        Err(message) => core.tell(HostEvent::CommandRefused(message)),
    }
}

/// Read every command again (the files may have changed, or the trust; the servers' prompts
/// are listed once per run) and hand the list to the app; the files left out go to the log, a
/// server that could not list its prompts is a notice once.
pub(super) async fn list(core: Arc<Core>) {
    let catalog = catalog(&core).await;
    core.tell(HostEvent::Commands(catalog));
}

/// The command files off the loop, then the running servers' prompts (none while they start).
async fn catalog(core: &Arc<Core>) -> Catalog {
    let files = {
        let core = Arc::clone(core);
        tokio::task::spawn_blocking(move || {
            commands::catalog(&core.launch.paths, &core.launch.vault)
        })
        .await
    };
    let mut catalog = files.unwrap_or_else(|e| {
        tracing::warn!("the command files could not be read: {e}");
        Catalog::built_in()
    });
    if let Some(servers) = core.servers.startup.now() {
        let listing = servers.prompts().await;
        for failure in &listing.new_failures {
            core.tell(HostEvent::Notice(failure.clone()));
        }
        catalog.add_prompts(listing);
    }
    for problem in &catalog.problems {
        tracing::warn!("a command is left out: {problem}");
    }
    catalog
}

async fn prepare(
    core: &Arc<Core>,
    name: String,
    args: String,
    context: NoteContext,
) -> Result<Op, String> {
    let catalog = catalog(core).await;
    let Some(command) = catalog.find(&name).cloned() else {
        // The name is what the person typed; the vault's words (`withheld`) come escaped.
        let mut message = format!(
            "/{name} is not a command; /help lists the built-in ones, `vaultchat commands` every one"
        );
        if let Some(why) = &catalog.withheld {
            message.push_str(&format!(" ({why})"));
        }
        return Err(message);
    };
    match &command.origin {
        Origin::McpPrompt { .. } => mcp_prompt(core, &command, &args, context).await,
        Origin::BuiltIn => Err(format!("/{name} is a built-in command")),
        Origin::Personal | Origin::Vault => {
            let core = Arc::clone(core);
            tokio::task::spawn_blocking(move || from_file(&core, &command, &args, context))
                .await
                .unwrap_or_else(|e| Err(format!("the command could not be prepared: {e}")))
        }
    }
}

/// An MCP prompt's messages as the turn (the server asked now, within its timeout).
async fn mcp_prompt(
    core: &Core,
    command: &Command,
    args: &str,
    context: NoteContext,
) -> Result<Op, String> {
    let Some(servers) = core.servers.startup.now() else {
        return Err("the MCP servers are still starting; run the command again in a moment".into());
    };
    let got = commands::get_prompt(&servers, command, args).await?;
    let (text, frame) = PromptFrame::split(got.messages, &format!("/{}", command.name))
        // The name is one a command can have (letters, digits, `-_.:`): nothing to escape.
        .map_err(|e| format!("/{}: {e}", command.name))?;
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
    let name = &command.name;
    let Some(file) = &command.prompt else {
        return Err(format!("/{name} is a built-in command"));
    };
    let note = context.note.as_ref();
    let selection = note.and_then(|n| n.selected_text());
    let invocation = commands::Invocation {
        args,
        note: note.map(|n| n.path.as_str()),
        selection: selection.as_deref(),
        now_ms: crate::time::now_ms(),
    };
    let ready = core.ready.get();
    let text = commands::expand(file, &invocation, &mut |tag| match ready {
        Some(ready) => ready
            .workspace
            .notes_tagged(tag, commands::MAX_TAGGED_NOTES + 1)
            .map_err(|e| e.to_string()),
        None => Err("the vault is still being indexed; run the command again in a moment".into()),
    })
    .map_err(|e| format!("/{name}: {e}"))?;
    Ok(Op::CommandTurn {
        text,
        attachments: Vec::new(),
        context,
        limits: TurnLimits {
            model: file.model.clone(),
            allowed_tools: file.allowed_tools.clone(),
        },
        frame: PromptFrame::default(),
    })
}
