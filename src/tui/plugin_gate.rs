//! The runner's side of vault plugins: which servers start at launch, the trust question when
//! the plugins file has no answer yet, and what the answer does (recorded per file content, and
//! the held-back servers started or left stopped).

use super::app::App;
use super::run::Launch;
use super::trust_prompt::{TrustChoice, TrustPrompt};
use crate::mcp::McpStartup;
use crate::mcp::plugins::{PLUGINS_FILE, ServerPlan, Trust, VaultPlugins};
use crate::store::{PluginAnswer, Store};
use tokio::sync::oneshot;

/// A question asked and not answered yet: the servers wait on `answer`.
pub(super) struct PluginGate {
    plugins: VaultPlugins,
    vault_id: String,
    answer: oneshot::Sender<bool>,
}

/// Start the person's MCP servers and the vault's plugins on the current runtime: at once when
/// the plugins are trusted (or declined, or absent), after the person's answer when the file has
/// none yet (the question is put to `app`).
pub(super) fn start_servers(launch: &Launch, app: &mut App) -> (McpStartup, Option<PluginGate>) {
    let plan = ServerPlan::new(&launch.config, &launch.vault, &launch.paths.database_file());
    for problem in &plan.problems {
        app.transcript.push_error(problem);
    }
    app.transcript.set_tool_renders(plan.renders());
    let ask = match (&plan.plugins, plan.trust) {
        (Some(plugins), Some(Trust::Unanswered)) if !plugins.command_lines().is_empty() => {
            Some(plugins.clone())
        }
        _ => None,
    };
    let Some(plugins) = ask else {
        return (McpStartup::spawn(plan.specs), None);
    };
    app.ask_plugin_trust(TrustPrompt::new(
        PLUGINS_FILE.to_string(),
        plugins.command_lines(),
    ));
    if !plan.changes.is_empty() {
        app.transcript.push_error(&format!(
            "the vault's plugins changed since you trusted them: {}",
            crate::mcp::plugins::covered::describe(&plan.changes)
        ));
    }
    let (tx, rx) = oneshot::channel();
    let gate = PluginGate {
        plugins,
        vault_id: crate::index::vault_id(&launch.vault),
        answer: tx,
    };
    (McpStartup::spawn_after(plan.specs, Some(rx)), Some(gate))
}

/// The person answered: record it for this content of the file, and let the servers start.
pub(super) fn answer(
    gate: Option<PluginGate>,
    choice: TrustChoice,
    store: Option<&Store>,
    app: &mut App,
) {
    let Some(gate) = gate else {
        return;
    };
    let trusted = choice == TrustChoice::Trust;
    let answer = if trusted {
        PluginAnswer::Trusted
    } else {
        PluginAnswer::Declined
    };
    // Without the database the answer holds for this run only (the problem was said at start).
    if let Some(store) = store
        && let Err(e) = gate.plugins.answer(store, &gate.vault_id, answer)
    {
        app.on_error(format!(
            "the answer about the vault's plugins was not recorded: {e}"
        ));
    }
    if gate.answer.send(trusted).is_err() {
        tracing::debug!("the MCP start-up ended before the plugins answer");
    }
}
