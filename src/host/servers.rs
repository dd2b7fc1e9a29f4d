//! The person's MCP servers and the vault's plugins: which start at launch, the trust question
//! when the plugins file has no answer yet, and what the answer does (recorded per content of the
//! file, and the held-back servers started or left stopped).

use super::core::Core;
use super::{HostEvent, Launch, StartUp, TrustQuestion};
use crate::mcp::plugins::{PLUGINS_FILE, ServerPlan, Trust, VaultPlugins};
use crate::mcp::{McpServerState, McpStartup};
use crate::store::PluginAnswer;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

pub(super) struct Servers {
    pub startup: McpStartup,
    /// The plugins question, while it waits for an answer.
    gate: Mutex<Option<PluginGate>>,
}

/// A question asked and not answered yet: the servers wait on `answer`.
struct PluginGate {
    plugins: VaultPlugins,
    vault_id: String,
    answer: oneshot::Sender<bool>,
}

impl Servers {
    /// Start the person's MCP servers and the vault's plugins on the current runtime: at once
    /// when the plugins are trusted (or declined, or absent), after the person's answer when
    /// the file has none yet (the question goes to the app in [`StartUp`]).
    pub fn start(launch: &Launch) -> (Servers, StartUp) {
        let plan = ServerPlan::new(&launch.config, &launch.vault, &launch.paths.database_file());
        let mut start_up = StartUp {
            problems: plan.problems.clone(),
            renders: plan.renders(),
            trust_question: None,
        };
        let ask = match (&plan.plugins, plan.trust) {
            (Some(plugins), Some(Trust::Unanswered)) if !plugins.command_lines().is_empty() => {
                Some(plugins.clone())
            }
            _ => None,
        };
        let Some(plugins) = ask else {
            let servers = Servers {
                startup: McpStartup::spawn(plan.specs),
                gate: Mutex::new(None),
            };
            return (servers, start_up);
        };
        start_up.trust_question = Some(TrustQuestion {
            file: PLUGINS_FILE.to_string(),
            command_lines: plugins.command_lines(),
        });
        if !plan.changes.is_empty() {
            start_up.problems.push(format!(
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
        let servers = Servers {
            startup: McpStartup::spawn_after(plan.specs, Some(rx)),
            gate: Mutex::new(Some(gate)),
        };
        (servers, start_up)
    }

    /// Tell the app when every server is done starting (their tools may appear a moment after
    /// the first frame; the agent waits for them before its first request only).
    pub fn report_when_started(&self, core: &Arc<Core>) {
        if self.startup.is_empty() {
            return;
        }
        let (startup, core) = (self.startup.clone(), Arc::clone(core));
        tokio::spawn(async move {
            let servers = startup.ready().await;
            let failed = servers
                .statuses()
                .iter()
                .filter_map(|status| match &status.state {
                    McpServerState::Failed { message } => {
                        Some((status.name.clone(), message.clone()))
                    }
                    McpServerState::Starting
                    | McpServerState::Running { .. }
                    | McpServerState::Disabled
                    | McpServerState::NotTrusted => None,
                })
                .collect();
            core.tell(HostEvent::McpStarted { failed });
            // Their prompts are commands: listed now, so the next `/` has them at once.
            super::commands_link::list(core).await;
        });
    }

    /// The person answered: record it for this content of the file, and let the servers start.
    pub fn answer(&self, core: &Core, trusted: bool) {
        let gate = match self.gate.lock() {
            Ok(mut gate) => gate.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        let Some(gate) = gate else {
            return;
        };
        let answer = if trusted {
            PluginAnswer::Trusted
        } else {
            PluginAnswer::Declined
        };
        // Without the database the answer holds for this run only (the problem was said then).
        let recorded = core.with_store(|store| gate.plugins.answer(store, &gate.vault_id, answer));
        if let Some(Err(e)) = recorded {
            core.tell(HostEvent::Error(format!(
                "the answer about the vault's plugins was not recorded: {e}"
            )));
        }
        if gate.answer.send(trusted).is_err() {
            tracing::debug!("the MCP start-up ended before the plugins answer");
        }
    }
}
