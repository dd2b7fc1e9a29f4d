//! The running agent: started (new, resumed, continued) on the blocking pool, its ops sent in
//! order, its events told to the app with the agent's generation so that the app can drop what
//! an agent it replaced still had in flight.

use super::HostEvent;
use super::core::Core;
use crate::agent::{BuildError, Op, Resume, SessionBuilder};
use crate::hooks::Event;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The agent in use, if any.
pub(super) struct AgentSlot {
    running: Mutex<Option<Running>>,
    generations: AtomicU64,
    /// The model the person chose (`Op::SetModel` passes here): a window found for it is the
    /// agent's to compact against.
    model: Mutex<String>,
}

struct Running {
    ops: mpsc::Sender<Op>,
    /// Carries the agent's events to the app; aborted when the agent is replaced.
    forward: tokio::task::JoinHandle<()>,
}

/// Why no agent could be started.
#[derive(Debug, thiserror::Error)]
enum StartError {
    /// No provider is configured; the message says what is missing.
    #[error("{0}")]
    NoProvider(String),
    #[error(transparent)]
    Build(#[from] BuildError),
}

impl AgentSlot {
    pub fn new(model: &str) -> AgentSlot {
        AgentSlot {
            running: Mutex::new(None),
            generations: AtomicU64::new(0),
            model: Mutex::new(model.to_string()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        match self.running.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Send an op to the agent (waiting while its queue is full); without one say so.
    pub async fn send(&self, core: &Core, op: Op) {
        if let Op::SetModel(model) = &op
            && let Ok(mut current) = self.model.lock()
        {
            current.clone_from(model);
        }
        let ops = self.lock().as_ref().map(|r| r.ops.clone());
        let sent = match ops {
            Some(ops) => ops.send(op).await.is_ok(),
            None => false,
        };
        if !sent {
            core.tell(HostEvent::AgentUnavailable);
        }
    }

    /// The context window of `model` became known: when it is the model in use, the agent
    /// compacts against it (without an agent nothing waits for it).
    pub fn offer_window(&self, model: &str, tokens: u64) {
        let in_use = self.model.lock().is_ok_and(|current| *current == model);
        if !in_use || tokens == 0 {
            return;
        }
        if let Some(running) = self.lock().as_ref()
            && running.ops.try_send(Op::SetContextWindow(tokens)).is_err()
        {
            tracing::debug!("the agent did not take the context window");
        }
    }

    /// Ask the agent to end (it finishes what it must on its own task); whether one ran.
    pub fn shut_down(&self) -> bool {
        match self.lock().take() {
            Some(running) => {
                stop(running);
                true
            }
            None => false,
        }
    }
}

fn stop(running: Running) {
    running.forward.abort();
    if running.ops.try_send(Op::Shutdown).is_err() {
        tracing::debug!("the agent had already ended");
    }
}

/// Start an agent on a new session, or on a stored one, in place of the running one.
pub(super) fn start(core: &Arc<Core>, resume: Resume) {
    let Some(ready) = core.ready.get() else {
        // At start-up the first agent starts once the workspace is ready.
        return core.tell(HostEvent::Notice(
            "the vault is still being opened; try again in a moment".into(),
        ));
    };
    let resumed_id = match &resume {
        Resume::Session(id) => Some(id.clone()),
        Resume::New | Resume::Latest | Resume::ContinueNew(_) => None,
    };
    let launch = &core.launch;
    let built = launch
        .provider
        .clone()
        .ok_or_else(|| {
            StartError::NoProvider(
                launch
                    .provider_problem
                    .clone()
                    .unwrap_or_else(|| "no provider is configured".into()),
            )
        })
        .and_then(|choice| {
            let servers = &core.servers.startup;
            SessionBuilder::new(
                &launch.config,
                launch.paths.database_file(),
                Arc::clone(&ready.workspace),
                choice,
            )
            .pending_tools((!servers.is_empty()).then(|| servers.pending_tools()))
            .build(resume)
            .map_err(StartError::from)
        });
    let agent = match built {
        Ok(agent) => agent,
        Err(e) => return core.tell(HostEvent::Error(e.to_string())),
    };
    // Known from the start for a stored session; a new one has its id from its first turn.
    let session = agent.session_id().map(str::to_string);
    let (ops, mut events, _task) = agent.spawn();
    let generation = core.agent.generations.fetch_add(1, Ordering::SeqCst) + 1;
    let resumed = resumed_id.map(|id| {
        let conversation = core
            .with_store(|store| {
                crate::agent::load_conversation(store, &id).map_err(|e| e.to_string())
            })
            .unwrap_or_else(|| Err("the app database is not open".into()))
            .inspect_err(|e| tracing::warn!("session {id} cannot be shown: {e}"));
        (id, conversation)
    });
    // Told before the first event of the new agent can be.
    core.tell(HostEvent::AgentStarted {
        generation,
        resumed,
    });
    let tell = core.events.clone();
    let hooks = core.hooks.clone();
    let forward = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            // A new session exists from its first turn on: its writes' hooks name it.
            if let crate::agent::AgentEvent::TurnStarted { session_id } = &event {
                hooks.set_session(Some(session_id));
            }
            if let crate::agent::AgentEvent::TurnDone(outcome) = &event {
                hooks.set_session(Some(&outcome.session_id));
                hooks.fire(Event::AfterTurn, Vec::new());
            }
            if tell.send(HostEvent::Agent { generation, event }).is_err() {
                return;
            }
        }
        // The agent task ended (it failed): nothing it promised will arrive.
        let _ = tell.send(HostEvent::AgentGone { generation });
    });
    let previous = core.agent.lock().replace(Running { ops, forward });
    if let Some(previous) = previous {
        stop(previous);
        // Fired with the session that ended, before the new one is set.
        core.hooks.fire(Event::SessionEnd, Vec::new());
    }
    core.hooks.set_session(session.as_deref());
    core.hooks.fire(Event::SessionStart, Vec::new());
}
