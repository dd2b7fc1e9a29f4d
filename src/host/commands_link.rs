//! Running one of the person's or the vault's commands from the app: the host finds it (the
//! vault's only while trusted), makes its prompt (the index answers `{{tag:x}}`) and sends the
//! agent an `Op::CommandTurn`; a prompt that cannot be made is a `CommandRefused` the app shows.

use super::HostEvent;
use super::core::Core;
use crate::agent::{NoteContext, Op, TurnLimits};
use crate::commands;
use std::sync::Arc;

/// Find `name`, make its prompt from `args` and the note side of the screen, and hand it to the
/// agent; or tell the app why not.
pub(super) async fn run(core: &Arc<Core>, name: String, args: String, context: NoteContext) {
    let prepared = {
        let core = Arc::clone(core);
        tokio::task::spawn_blocking(move || prepare(&core, &name, &args, context)).await
    };
    match prepared {
        Ok(Ok(op)) => core.agent.send(core, op).await,
        Ok(Err(message)) => core.tell(HostEvent::CommandRefused(message)),
        Err(e) => core.tell(HostEvent::CommandRefused(format!(
            "the command could not be prepared: {e}"
        ))),
    }
}

/// Read every command again (the files may have changed, or the trust) and hand the list to the
/// app; the files left out go to the log.
pub(super) fn list(core: &Core) {
    let launch = &core.launch;
    let catalog = commands::catalog(&launch.paths, &launch.vault);
    for problem in &catalog.problems {
        tracing::warn!("a command file is left out: {problem}");
    }
    core.tell(HostEvent::Commands(catalog));
}

fn prepare(core: &Core, name: &str, args: &str, context: NoteContext) -> Result<Op, String> {
    let launch = &core.launch;
    let ready = core.ready.get();
    let (text, limits) = command_turn(
        &launch.paths,
        &launch.vault,
        name,
        args,
        &context,
        &mut |tag| match ready {
            Some(ready) => ready
                .workspace
                .notes_tagged(tag, commands::MAX_TAGGED_NOTES + 1)
                .map_err(|e| e.to_string()),
            None => {
                Err("the vault is still being indexed; run the command again in a moment".into())
            }
        },
    )?;
    Ok(Op::CommandTurn {
        text,
        attachments: Vec::new(),
        context,
        limits,
    })
}

/// The prompt and the limits of the person's or the vault's command `name` run with `args` on
/// the note side `context` — the one rule the app and `vaultchat ask` follow. `tagged` answers
/// `{{tag:x}}` (the index). An error says why not: no such command (and why the vault's are not
/// offered, when they are not), a built-in of the app, a prompt that cannot be made.
pub fn command_turn(
    paths: &crate::config::Paths,
    vault: &crate::vault::Vault,
    name: &str,
    args: &str,
    context: &NoteContext,
    tagged: &mut dyn FnMut(&str) -> Result<Vec<String>, String>,
) -> Result<(String, TurnLimits), String> {
    let catalog = commands::catalog(paths, vault);
    for problem in &catalog.problems {
        tracing::warn!("a command file is left out: {problem}");
    }
    let shown = crate::quote::terminal(name);
    let Some(command) = catalog.find(name) else {
        // The vault's words (`withheld`) come escaped.
        let mut message = format!(
            "/{shown} is not a command; `vaultchat commands` lists every one (/help the built-in ones)"
        );
        if let Some(why) = &catalog.withheld {
            message.push_str(&format!(" ({why})"));
        }
        return Err(message);
    };
    let Some(file) = &command.prompt else {
        return Err(format!(
            "/{shown} is a command of the chat app, not a prompt; `vaultchat commands` lists your own and the vault's"
        ));
    };
    let note = context.note.as_ref();
    let selection = note.and_then(|n| n.selected_text());
    let invocation = commands::Invocation {
        args,
        note: note.map(|n| n.path.as_str()),
        selection: selection.as_deref(),
        now_ms: crate::time::now_ms(),
    };
    let text = commands::expand(file, &invocation, tagged).map_err(|e| format!("/{shown}: {e}"))?;
    Ok((
        text,
        TurnLimits {
            model: file.model.clone(),
            allowed_tools: file.allowed_tools.clone(),
        },
    ))
}
