//! Hooks: the person's commands (`[hooks]` in `config.toml`) and a trusted vault's
//! (`.vaultchat/hooks.toml`) run after an approved change is written, after a turn and at a
//! session's start and end (docs/configuration.md, "Commands and hooks").
//!
//! Front ends fire events ([`Hooks::fire`], or the workspace's written-paths listener from
//! [`Hooks::written_listener`]); nothing waits for a hook there. One task per front end takes
//! the events in order and runs each event's hooks one after the other (two approved writes, two
//! commits, in order), reading the vault's file and its trust again each time, so a trust given
//! or withdrawn meanwhile counts from the next event. A hook's output goes to the log; a failure
//! or a timeout is one line for the person ([`Notices`]).

mod run;
pub mod vault_file;

pub use run::{Ended, MAX_OUTPUT_BYTES, Output};
pub use vault_file::{VaultHooks, vault_hooks};

use crate::config::hooks::{HookSpec, HooksConfig};
use crate::vault::Vault;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

pub use crate::config::hooks::Event;

/// One event to run hooks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub event: Event,
    /// Vault-relative paths (for `after_write`; empty otherwise).
    pub paths: Vec<String>,
    /// The chat session, when one is known.
    pub session: Option<String>,
}

/// Where the one-line notices go: the app's notice line, or stderr for the command line.
pub type Notices = Arc<dyn Fn(String) + Send + Sync>;

/// What the workspace tells of each approved change (the same shape as
/// `tools::workspace::WrittenListener`, so no arrow to `tools` is needed for it).
pub type PathsListener = Arc<dyn Fn(&[String]) + Send + Sync>;

/// What the hooks are run over.
pub struct Setup {
    /// The person's `[hooks]`.
    pub personal: HooksConfig,
    pub vault: Vault,
    /// The app database, where the trust is recorded.
    pub database: PathBuf,
}

/// A front end's handle on its hooks: cheap to clone, never waits.
#[derive(Clone)]
pub struct Hooks {
    queue: mpsc::UnboundedSender<Option<Job>>,
    session: Arc<Mutex<Option<String>>>,
}

/// The task that runs the hooks; [`Finished::wait`] lets the queued ones finish.
pub struct Finished {
    task: tokio::task::JoinHandle<()>,
    /// `None` on it ends the task once what came before has run.
    queue: mpsc::UnboundedSender<Option<Job>>,
}

/// Start the hooks' task on the current tokio runtime. It first reads the vault's file, so an
/// untrusted or invalid one is said at once rather than at the first event.
pub fn start(setup: Setup, notices: Notices) -> (Hooks, Finished) {
    let (queue, jobs) = mpsc::unbounded_channel();
    let task = tokio::spawn(serve(setup, jobs, notices));
    (
        Hooks {
            queue: queue.clone(),
            session: Arc::new(Mutex::new(None)),
        },
        Finished { task, queue },
    )
}

impl Hooks {
    /// The session the next events belong to.
    pub fn set_session(&self, id: Option<&str>) {
        *self.session.lock().unwrap_or_else(|p| p.into_inner()) = id.map(str::to_string);
    }

    /// Run `event`'s hooks after those already queued; returns at once.
    pub fn fire(&self, event: Event, paths: Vec<String>) {
        let session = self
            .session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let job = Job {
            event,
            paths,
            session,
        };
        if self.queue.send(Some(job)).is_err() {
            tracing::debug!("the hooks have ended; an event was dropped");
        }
    }

    /// A listener for the workspace's written paths: each approved change fires `after_write`.
    pub fn written_listener(&self) -> PathsListener {
        let hooks = self.clone();
        Arc::new(move |paths: &[String]| hooks.fire(Event::AfterWrite, paths.to_vec()))
    }
}

impl Finished {
    /// Run the hooks already queued (each is bounded by its own timeout), at most `bound` in
    /// all; events fired later are not run. Past `bound` the running hook is killed with its
    /// process group and the rest are dropped.
    pub async fn wait(self, bound: Duration) {
        let _ = self.queue.send(None);
        let abort = self.task.abort_handle();
        if tokio::time::timeout(bound, self.task).await.is_err() {
            tracing::warn!("hooks were still running when vaultchat ended; they were stopped");
            abort.abort();
        }
    }
}

/// The most events waiting: past it, events are dropped with a notice (a runaway writer).
const MAX_QUEUED: usize = 1_000;

async fn serve(setup: Setup, mut jobs: mpsc::UnboundedReceiver<Option<Job>>, notices: Notices) {
    let setup = Arc::new(setup);
    let mut said: Option<String> = None;
    // Read at once so that an untrusted or invalid file is said before any event.
    read_vault(&setup, &notices, &mut said).await;
    while let Some(Some(job)) = jobs.recv().await {
        if jobs.len() > MAX_QUEUED {
            notices(format!(
                "{} hook events are waiting; the oldest are dropped",
                jobs.len()
            ));
            while jobs.len() > MAX_QUEUED / 2 {
                if let Ok(None) = jobs.try_recv() {
                    return;
                }
            }
        }
        // Read again for each event: a trust given or withdrawn meanwhile counts now.
        let vault = read_vault(&setup, &notices, &mut said).await;
        let hooks = setup
            .personal
            .for_event(job.event)
            .iter()
            .chain(vault.for_event(job.event))
            .cloned()
            .collect::<Vec<_>>();
        for hook in &hooks {
            run_one(hook, &job, setup.vault.root(), &notices).await;
        }
    }
}

/// The vault's hooks now; a reason they are withheld is said once (again when it changes).
async fn read_vault(
    setup: &Arc<Setup>,
    notices: &Notices,
    said: &mut Option<String>,
) -> HooksConfig {
    let reading = Arc::clone(setup);
    let read = tokio::task::spawn_blocking(move || vault_hooks(&reading.vault, &reading.database))
        .await
        .unwrap_or_else(|e| VaultHooks {
            hooks: HooksConfig::default(),
            withheld: Some(format!("the vault's hooks could not be read: {e}")),
        });
    if read.withheld != *said {
        if let Some(why) = &read.withheld {
            tracing::warn!("{why}");
            notices(why.clone());
        }
        said.clone_from(&read.withheld);
    }
    read.hooks
}

/// Run one hook, its output to the log and a failure to the person.
async fn run_one(hook: &HookSpec, job: &Job, root: &std::path::Path, notices: &Notices) {
    let shown = crate::quote::shorten(&hook.command.shown()).into_owned();
    let event = job.event.key();
    tracing::info!(event, command = %shown, paths = ?job.paths, "hook started");
    let started = std::time::Instant::now();
    let (ended, output) = run::run(hook, job, root).await;
    let ms = started.elapsed().as_millis();
    let stdout = crate::quote::terminal_text(output.stdout.trim_end()).into_owned();
    let stderr = crate::quote::terminal_text(output.stderr.trim_end()).into_owned();
    tracing::info!(event, command = %shown, ?ended, ms, %stdout, %stderr, "hook ended");
    let what = match &ended {
        Ended::Succeeded => return,
        Ended::Failed(status) => {
            let said = stderr
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
                .map(|line| format!(": {}", crate::quote::shorten(line)))
                .unwrap_or_default();
            format!("failed ({status}){said}")
        }
        Ended::TimedOut(after) => {
            format!("was stopped after {} s (its timeout)", after.as_secs())
        }
        Ended::NotStarted(why) => format!("could not start: {why}"),
    };
    notices(format!(
        "the {event} hook `{}` {what}",
        crate::quote::terminal(&shown)
    ));
}

#[cfg(test)]
mod tests;
