//! The host: everything the app asks of the engine, as typed [`Request`]s answered by typed
//! [`HostEvent`]s, carried out off the UI loop. It owns the workspace (vault, index, live
//! watcher), the app database, the person's MCP servers and the vault's plugins, and the running
//! agent. The app (`tui`) is a client of this and of the agent's protocol; it does no I/O and
//! names no engine module (docs/architecture.md draws the arrows).
//!
//! Requests run as they come: the agent's ops and the commands that become turns in order on
//! the agent's lane (a turn's ops must arrive as sent, and after the command sent before them;
//! `agent_lane.rs`), everything that touches the disk or the database on the blocking pool, the
//! provider's HTTP calls and the MCP servers' listings as tasks — so that nothing waits behind a
//! slow server but what must. Each answer is an event on one channel.

mod agent_lane;
mod agent_link;
mod backlinks;
mod changes;
mod commands_link;
mod daily;
mod link_targets;
pub mod memory;
mod messages;
mod models;
mod notes;
mod servers;
mod sessions;
mod tasks;
mod tools_list;

/// Recovery files (kept by the app's loop on a signal, offered by the host at the next open).
pub use crate::store::recovery;

/// One task of the tasks view, as the index lists it.
pub use crate::index::TaskRow as TaskEntry;
pub use changes::{AppliedChange, ChangeKind, LocalChange};
pub use commands_link::{file_turn, no_such_command, prompt_turn};
pub use link_targets::LinkTargets;
pub use messages::{
    Asked, BacklinkList, ChangeRequest, DailyOpened, FilledTemplate, HostEvent, LinkLine, ModelRow,
    ModelsReport, NoteEntry, Request, StartUp, ToolsReport, TrustQuestion, UsageReport,
};

use crate::agent::ProviderChoice;
use crate::config::{Config, Paths};
use crate::vault::Vault;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Everything the app and its host need to start.
pub struct Launch {
    pub vault: Vault,
    pub paths: Paths,
    pub config: Config,
    pub provider: Option<ProviderChoice>,
    /// Why there is no provider (no API key, …), shown in the chat.
    pub provider_problem: Option<String>,
    pub provider_name: String,
    pub model: String,
    pub theme: String,
    pub keymap: String,
}

impl Launch {
    /// The vault's folder name, for the status bar.
    pub fn vault_name(&self) -> String {
        self.vault
            .root()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "vault".into())
    }

    /// The file of a vault-relative note path (for `$EDITOR`).
    pub fn note_file(&self, rel: &str) -> std::path::PathBuf {
        self.vault.root().join(rel)
    }

    /// The context window known for `model` without asking its server (config, table).
    pub fn known_window(&self, model: &str) -> u64 {
        crate::llm::window::for_model(&self.config.provider, model).tokens
    }
}

/// The app's handle on its host: send requests, receive events.
pub struct Host {
    requests: mpsc::UnboundedSender<Request>,
    pub events: mpsc::UnboundedReceiver<HostEvent>,
    core: Arc<core::Core>,
    lane: Arc<agent_lane::Lane>,
}

impl Host {
    /// Start the host on the current runtime: the MCP servers and plugins (or the question about
    /// them), the app database and the workspace, each in the background. The first event is
    /// [`HostEvent::Started`].
    pub fn start(launch: Arc<Launch>) -> Host {
        let (events_tx, events) = mpsc::unbounded_channel();
        let (requests, requests_rx) = mpsc::unbounded_channel();
        let core = core::Core::start(launch, events_tx);
        let lane = Arc::new(agent_lane::Lane::start(Arc::clone(&core)));
        tokio::spawn(core::serve(
            Arc::clone(&core),
            requests_rx,
            Arc::clone(&lane),
        ));
        Host {
            requests,
            events,
            core,
            lane,
        }
    }

    /// Ask the host for something; the answer comes as an event.
    pub fn send(&self, request: Request) {
        if self.requests.send(request).is_err() {
            tracing::debug!("the host has ended; a request was dropped");
        }
    }

    /// End the agent and the MCP servers (each is asked to stop and waited for up to a second).
    /// A command whose prompt is still on its way is dropped first: it starts no turn.
    pub async fn shut_down(&self) {
        self.lane.stop();
        self.core.shut_down().await;
    }
}

mod core {
    //! The host's state and the one place requests are dispatched.

    use super::*;

    /// What a request that needs the workspace is told before it is open.
    pub(super) const STILL_OPENING: &str = "the vault is still being opened; try again in a moment";

    pub(super) struct Core {
        pub launch: Arc<Launch>,
        pub events: mpsc::UnboundedSender<HostEvent>,
        /// The workspace once open (the index synced).
        pub ready: std::sync::OnceLock<notes::Ready>,
        /// The app database (`None` while it opens, or when it could not be opened: said then).
        pub store: Mutex<Option<crate::store::Store>>,
        pub servers: servers::Servers,
        pub agent: agent_link::AgentSlot,
        /// The person's and the trusted vault's hooks, fired here and by the workspace.
        pub hooks: crate::hooks::Hooks,
        /// The hooks' task, waited for at the end (the session's end hooks run then).
        hooks_done: Mutex<Option<crate::hooks::Finished>>,
    }

    /// How long quitting waits for the hooks still queued (each is also killed at its own
    /// timeout).
    const HOOKS_AT_QUIT: std::time::Duration = std::time::Duration::from_secs(30);

    impl Core {
        pub fn start(launch: Arc<Launch>, events: mpsc::UnboundedSender<HostEvent>) -> Arc<Core> {
            let (servers, start_up) = servers::Servers::start(&launch);
            let agent = agent_link::AgentSlot::new(&launch.model);
            let tell = events.clone();
            let (hooks, hooks_done) = crate::hooks::start(
                crate::hooks::Setup {
                    personal: launch.config.hooks.clone(),
                    vault: launch.vault.clone(),
                    database: launch.paths.database_file(),
                },
                Arc::new(move |notice| {
                    let _ = tell.send(HostEvent::Notice(notice));
                }),
            );
            let core = Arc::new(Core {
                launch,
                events,
                ready: std::sync::OnceLock::new(),
                store: Mutex::new(None),
                servers,
                agent,
                hooks,
                hooks_done: Mutex::new(Some(hooks_done)),
            });
            core.tell(HostEvent::Started(start_up));
            core.servers.report_when_started(&core);
            notes::open_workspace(&core);
            models::find_window(&core, &core.launch.model.clone());
            core
        }

        /// Tell the app; a closed channel means the app has ended and nothing is lost.
        pub fn tell(&self, event: HostEvent) {
            if self.events.send(event).is_err() {
                tracing::debug!("the app has ended; a host event was dropped");
            }
        }

        /// The workspace, or a notice that it is still being opened.
        pub fn ready(&self) -> Option<&notes::Ready> {
            let ready = self.ready.get();
            if ready.is_none() {
                self.tell(HostEvent::Notice(STILL_OPENING.into()));
            }
            ready
        }

        /// Run `job` with the app database; without one (it could not be opened, said at
        /// start-up) nothing is done.
        pub fn with_store<T>(&self, job: impl FnOnce(&mut crate::store::Store) -> T) -> Option<T> {
            let mut guard = match self.store.lock() {
                Ok(guard) => guard,
                // A job that panicked left the connection as SQLite keeps it: still usable.
                Err(poisoned) => poisoned.into_inner(),
            };
            guard.as_mut().map(job)
        }

        pub async fn shut_down(&self) {
            if self.agent.shut_down() {
                self.hooks.fire(crate::hooks::Event::SessionEnd, Vec::new());
            }
            let done = self.hooks_done.lock().ok().and_then(|mut done| done.take());
            if let Some(done) = done {
                done.wait(HOOKS_AT_QUIT).await;
            }
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(1),
                self.servers.startup.shutdown(),
            )
            .await;
        }
    }

    /// Take requests until the app ends; none is waited for here.
    pub(super) async fn serve(
        core: Arc<Core>,
        mut requests: mpsc::UnboundedReceiver<Request>,
        lane: Arc<agent_lane::Lane>,
    ) {
        while let Some(request) = requests.recv().await {
            dispatch(&core, &lane, request);
        }
    }

    /// Where each request runs: the agent's ops and commands in order on the lane, disk and
    /// database work on the blocking pool, the provider's HTTP calls as tasks.
    fn dispatch(core: &Arc<Core>, lane: &agent_lane::Lane, request: Request) {
        match request {
            Request::Agent(op) => lane.send(agent_lane::LaneItem::Op(op)),
            // In order with the agent's ops: the prompt is made, then sent, before the next op;
            // a slow server holds up nothing else.
            Request::RunCommand {
                name,
                args,
                context,
            } => lane.send(agent_lane::LaneItem::Command {
                name,
                args,
                context,
            }),
            Request::ListModels { current } => models::list_models(core, current),
            // Off the loop: the files on the blocking pool, the servers' prompts as a task.
            Request::ListCommands => {
                tokio::spawn(commands_link::list(Arc::clone(core)));
            }
            Request::ContextWindow(model) => models::find_window(core, &model),
            request @ (Request::StartAgent(_)
            | Request::OpenNote(_)
            | Request::ForgetRecovery { .. }
            | Request::CheckNote { .. }
            | Request::SaveNote { .. }
            | Request::ListFiles
            | Request::PlanChange(_)
            | Request::ApplyChange { .. }
            | Request::ListSessions(_)
            | Request::DeleteSession(_)
            | Request::RenameSession { .. }
            | Request::Usage
            | Request::Revisions(_)
            | Request::RevisionText(_)
            | Request::ListTools { .. }
            | Request::ListTasks
            | Request::ToggleTask { .. }
            | Request::Backlinks(_)
            | Request::AnswerPluginTrust { .. }
            | Request::OpenDailyNote
            | Request::Templates { .. }) => {
                let core = Arc::clone(core);
                tokio::task::spawn_blocking(move || blocking(&core, request));
            }
        }
    }

    /// The requests that read or write the disk or the database.
    fn blocking(core: &Arc<Core>, request: Request) {
        match request {
            Request::StartAgent(resume) => agent_link::start(core, resume),
            Request::OpenNote(name) => notes::open(core, &name),
            Request::ForgetRecovery {
                path,
                file,
                offer_next,
            } => notes::forget_recovery(core, &path, &file, offer_next),
            Request::CheckNote { path, known } => notes::check(core, &path, &known),
            Request::SaveNote {
                path,
                text,
                read,
                agent_edit,
            } => notes::save(core, path, &text, &read, agent_edit),
            Request::ListFiles => notes::list_files(core),
            Request::PlanChange(change) => changes::plan(core, change),
            Request::ApplyChange { change, hunks } => changes::apply(core, *change, hunks),
            Request::ListSessions(query) => sessions::list(core, query.as_deref()),
            Request::DeleteSession(id) => sessions::delete(core, &id),
            Request::RenameSession { id, title } => sessions::rename(core, &id, &title),
            Request::Usage => sessions::usage(core),
            Request::Revisions(path) => sessions::revisions(core, path),
            Request::RevisionText(revision) => sessions::revision_text(core, revision),
            Request::ListTools { model, window } => tools_list::list(core, &model, window),
            Request::ListTasks => tasks::list(core),
            Request::ToggleTask { path, line, text } => tasks::toggle(core, path, line, &text),
            Request::Backlinks(path) => backlinks::list(core, path),
            Request::AnswerPluginTrust { trusted } => core.servers.answer(core, trusted),
            Request::OpenDailyNote => daily::open_today(core),
            Request::Templates { title } => daily::templates(core, &title),
            Request::Agent(_)
            | Request::RunCommand { .. }
            | Request::ListCommands
            | Request::ListModels { .. }
            | Request::ContextWindow(_) => {
                tracing::warn!("not a blocking request; ignored");
            }
        }
    }
}
