//! `vaultchat sessions export ID [--to PATH|-] [--last]`: a chat as a note in the vault
//! (`agent::export`), created through the workspace's plan like any write and never over an
//! existing note. Running the command is the person's consent; the app's `/save` asks in the
//! banner instead.

use super::outln;
use super::{Context, Failure};
use crate::agent::export::{ExportScope, chat_markdown, plan_chat_note};
use crate::store::{Actor, Store};
use crate::tools::workspace::Workspace;
use serde_json::json;

pub fn run(
    ctx: &Context,
    store: &Store,
    id: &str,
    to: Option<&str>,
    last: bool,
    as_json: bool,
) -> Result<(), Failure> {
    let full = super::sessions_cmd::resolve(ctx, store, id)?;
    let session = store
        .session(&full)?
        .ok_or_else(|| Failure::new(format!("there is no session `{id}`")))?;
    let conversation = crate::agent::load_conversation(store, &full)?;
    let scope = if last {
        ExportScope::LastReply
    } else {
        ExportScope::Session
    };
    let text = chat_markdown(&session, &conversation, scope);
    if to == Some("-") {
        outln!("{}", crate::quote::terminal_text(text.trim_end()));
        return Ok(());
    }
    let vault = ctx.vault()?;
    let workspace = Workspace::open(vault, &ctx.paths, &ctx.config, Actor::User)?;
    // Without `--to`, a second export of one session finds the next free name, as `/save` does.
    let plan = plan_chat_note(&workspace, &session, text, to)
        .map_err(|e| Failure::new(format!("the chat was not saved: {e}")))?;
    // The note saved fires the `after_write` hooks, run before the command returns.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (hooks, hooks_done) =
        super::hook_notices::hooks_on_stderr(ctx, &runtime, workspace.vault());
    workspace.on_written(hooks.written_listener());
    let applied = workspace.apply(&plan, None);
    runtime.block_on(hooks_done.wait(super::hook_notices::HOOKS_AT_EXIT));
    let applied = applied.map_err(|e| Failure::new(format!("the chat was not saved: {e}")))?;
    let saved = plan.path().rel().to_string();
    if as_json {
        outln!("{}", json!({ "saved": saved, "session": full }));
    } else {
        outln!("saved session {full} as {}", crate::quote::terminal(&saved));
    }
    if !applied.written.warnings.is_empty() {
        let warning = applied.written.warnings.join("; ");
        eprintln!("vaultchat: {}", crate::quote::terminal_text(&warning));
    }
    Ok(())
}
