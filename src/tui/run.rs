//! The runner: owns the terminal, the agent task, the workspace and the store, and carries out
//! the app's effects. The first frame is drawn before the vault is opened (opening syncs the
//! index); the agent starts when the workspace is ready.
//!
//! Redraws are driven by events: after anything changed, one frame is drawn at most every
//! 16 ms (bursts of stream deltas coalesce); with nothing happening the loop sleeps.

use super::app::{App, Effect, SessionInfo};
use super::keymap::Keymap;
use super::picker::PickerItem;
use super::plugin_gate::PluginGate;
use super::saving::AutosaveSettings;
use super::stored_transcript::rebuild_transcript;
use super::term::{self, Tui};
use super::theme::{Role, Theme};
use super::views::rewind::RewindView;
use super::views::tools::ToolsView;
use super::views::usage::UsageView;
use crate::agent::{AgentEvent, BuildError, Op, ProviderChoice, Resume, SessionBuilder};
use crate::config::{Config, Paths};
use crate::index::Index;
use crate::index::watch::{LiveEvent, LiveIndex};
use crate::mcp::{McpServerState, McpServerStatus, McpStartup};
use crate::store::{Actor, Store};
use crate::tools::Registry;
use crate::tools::workspace::Workspace;
use crate::vault::Vault;
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The shortest time between two frames (60 per second at most).
const FRAME: Duration = Duration::from_millis(16);

/// Everything the app needs to start.
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

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("the terminal could not be set up: {0}")]
    Terminal(#[from] std::io::Error),
}

/// Why the vault could not be opened for the app.
#[derive(Debug, thiserror::Error)]
enum OpenError {
    #[error(transparent)]
    Workspace(#[from] crate::tools::workspace::WorkspaceError),
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

/// What the background work reports to the loop.
enum Background {
    Ready(Result<Ready, OpenError>),
    /// The index synced a batch of changes (the open note may have changed on disk; with
    /// `listing_changed`, notes were added, removed or renamed).
    Synced {
        listing_changed: bool,
    },
    /// The clipboard was read for a paste.
    Clipboard(super::clipboard::ClipboardPaste),
    /// The person's MCP servers are done starting.
    McpStarted(Vec<McpServerStatus>),
    /// The context window of a model became known (its server answered, or did not).
    Window {
        model: String,
        tokens: u64,
    },
    /// `/model`'s list, or why there is none.
    Models(Result<super::views::models::ModelsView, String>),
    /// A save of the open note finished: the note as written, or (changed on disk, why not).
    Saved {
        path: String,
        result: Result<crate::vault::note_io::NoteText, (bool, String)>,
    },
}

/// How long a quit caused by a signal or a vanished terminal waits for the last save.
const TERMINATE_GRACE: Duration = Duration::from_secs(5);

struct Ready {
    workspace: Arc<Workspace>,
    registry: Registry,
    /// The person's MCP servers (started at launch, in the background).
    mcp: McpStartup,
    /// Held only to keep the index live while the app runs (dropping it stops the watcher).
    _live: Option<LiveIndex>,
}

/// The running agent's channels.
struct AgentLink {
    ops: mpsc::Sender<Op>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
}

pub fn run(launch: Launch) -> Result<(), TuiError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run_async(launch))
}

async fn run_async(launch: Launch) -> Result<(), TuiError> {
    let (theme, mut problems) = if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        (Theme::monochrome(), Vec::new())
    } else {
        let (theme, errors) =
            Theme::load(&launch.theme, Some(&launch.paths.config_dir.join("themes")));
        (theme, errors.into_iter().map(|e| e.to_string()).collect())
    };
    let (keymap, keymap_errors) = Keymap::load(&launch.keymap, Some(&launch.paths.config_dir));
    problems.extend(keymap_errors.into_iter().map(|e| e.to_string()));
    let vault_name = launch
        .vault
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "vault".into());
    let price = launch.config.prices.get(&launch.model).copied();
    let info = SessionInfo {
        vault: vault_name,
        provider: launch.provider_name.clone(),
        model: launch.model.clone(),
        session_id: None,
        context_window: crate::llm::window::for_model(&launch.config.provider, &launch.model)
            .tokens,
        price,
        local_only: launch.config.privacy.local_only,
    };
    let mut app = App::new(theme, keymap, info).with_autosave(AutosaveSettings {
        enabled: launch.config.editor.autosave,
        delay: Duration::from_millis(launch.config.editor.autosave_delay_ms),
    });
    app.set_file_pane(launch.config.ui.file_pane.unwrap_or_default());
    for problem in &problems {
        app.transcript.push_error(problem);
    }
    if let Some(problem) = &launch.provider_problem {
        app.transcript.push_error(problem);
    }

    let mut mouse = true;
    let mut terminal = term::enter(mouse)?;
    let result = event_loop(&mut terminal, &mut app, &launch, &mut mouse).await;
    term::restore();
    result
}

async fn event_loop(
    terminal: &mut Tui,
    app: &mut App,
    launch: &Launch,
    mouse: &mut bool,
) -> Result<(), TuiError> {
    terminal.draw(|f| app.draw(f))?;
    // For the start-up benchmark (scripts/bench): stop once the first frame is on screen.
    if std::env::var_os("VAULTCHAT_EXIT_AFTER_FIRST_FRAME").is_some() {
        return Ok(());
    }
    let (bg_tx, mut bg_rx) = mpsc::unbounded_channel::<Background>();

    let (mcp, plugin_gate) = start_background(launch, app, &bg_tx);
    let mut plugin_gate = plugin_gate;

    let mut ready: Option<Ready> = None;
    let mut agent: Option<AgentLink> = None;
    let mut store: Option<Store> = Store::open(&launch.paths.database_file())
        .map_err(|e| app.on_error(format!("the app database cannot be opened: {e}")))
        .ok();
    let mut terminal_events = crossterm::event::EventStream::new();
    let mut dirty = false;
    let mut last_draw = Instant::now();
    // SIGTERM (a logout, `kill`) and SIGHUP (the terminal closed) save the note and quit.
    let mut sigterm = unix_signal(tokio::signal::unix::SignalKind::terminate());
    let mut sighup = unix_signal(tokio::signal::unix::SignalKind::hangup());
    // Since when a quit that nobody can answer any more is under way (signal, terminal gone).
    let mut terminating: Option<Instant> = None;
    // The terminal is gone (SIGHUP, end of input): nothing can be drawn on it.
    let mut headless = false;
    'events: loop {
        let frame_due = sleep_until((dirty && !headless).then(|| last_draw + FRAME));
        let autosave_due = sleep_until(app.autosave_deadline());
        let give_up = sleep_until(terminating.map(|since| since + TERMINATE_GRACE));
        tokio::select! {
            event = terminal_events.next(), if !headless => match event {
                Some(Ok(event)) => {
                    app.on_terminal(event);
                    dirty = true;
                }
                Some(Err(e)) => {
                    tracing::warn!("terminal event error: {e}");
                }
                None => {
                    headless = true;
                    terminating.get_or_insert_with(Instant::now);
                    app.on_terminate();
                }
            },
            () = autosave_due => {
                app.on_autosave_due();
                dirty = true;
            }
            Some(()) = recv_signal(&mut sigterm) => {
                tracing::info!("SIGTERM: saving and quitting");
                terminating.get_or_insert_with(Instant::now);
                app.on_terminate();
            }
            Some(()) = recv_signal(&mut sighup) => {
                tracing::info!("SIGHUP: saving and quitting");
                headless = true;
                terminating.get_or_insert_with(Instant::now);
                app.on_terminate();
            }
            () = give_up => {
                tracing::warn!("quitting without the last save: it did not finish in time");
                break 'events;
            }
            event = recv_agent(&mut agent) => {
                match event {
                    Some(event) => app.on_agent_event(event),
                    // The agent task ended (it failed): nothing it promised will arrive.
                    None => {
                        agent = None;
                        app.on_agent_gone();
                    }
                }
                dirty = true;
            }
            Some(message) = bg_rx.recv() => {
                on_background(message, app, launch, &mut ready, &mut agent);
                dirty = true;
            }
            () = frame_due => {
                terminal.draw(|f| app.draw(f))?;
                last_draw = Instant::now();
                dirty = false;
            }
        }
        let mut loop_state = LoopState {
            launch,
            ready: ready.as_ref(),
            agent: &mut agent,
            store: store.as_mut(),
            bg_tx: &bg_tx,
            headless,
            mouse,
            plugin_gate: &mut plugin_gate,
        };
        let (flow, ran) = run_effects(app, terminal, &mut loop_state).await?;
        dirty |= ran;
        if flow == Flow::Quit {
            break 'events;
        }
    }
    // Each server is asked to stop (stdin closed) and waited for; one that lingers is killed
    // when the runtime ends.
    let _ = tokio::time::timeout(Duration::from_secs(1), mcp.shutdown()).await;
    Ok(())
}

/// After the first frame and beside the vault's opening: start the person's MCP servers (their
/// tools may appear a moment later; the agent waits for them before its first request only)
/// and open the workspace.
fn start_background(
    launch: &Launch,
    app: &mut App,
    bg_tx: &mpsc::UnboundedSender<Background>,
) -> (McpStartup, Option<PluginGate>) {
    // The vault's plugins too: held back until the person answers when the file is new to them.
    let (mcp, plugin_gate) = super::plugin_gate::start_servers(launch, app);
    if !mcp.is_empty() {
        let (mcp, tx) = (mcp.clone(), bg_tx.clone());
        tokio::spawn(async move {
            let servers = mcp.ready().await;
            if tx
                .send(Background::McpStarted(servers.statuses().to_vec()))
                .is_err()
            {
                tracing::debug!("the loop ended before the MCP servers started");
            }
        });
    }
    open_workspace(launch, bg_tx.clone(), mcp.clone());
    find_window(launch, &launch.model, bg_tx);
    (mcp, plugin_gate)
}

/// Ask the model's server for its context window in the background (once per model and run;
/// not at all when the config sets it) and report the window to the loop.
fn find_window(launch: &Launch, model: &str, bg_tx: &mpsc::UnboundedSender<Background>) {
    let Some(choice) = launch.provider.as_ref() else {
        return;
    };
    let Some(probe) =
        crate::llm::models::spawn_probe(&launch.config.provider, &choice.settings, model)
    else {
        return;
    };
    let (provider, model, tx) = (
        launch.config.provider.clone(),
        model.to_string(),
        bg_tx.clone(),
    );
    tokio::spawn(async move {
        if let Err(e) = probe.await {
            tracing::warn!("the context window probe ended early: {e}");
        }
        let tokens = crate::llm::window::for_model(&provider, &model).tokens;
        if tx.send(Background::Window { model, tokens }).is_err() {
            tracing::debug!("the loop ended before the context window was found");
        }
    });
}

/// List the provider's models for `/model` in the background.
fn load_models(app: &mut App, launch: &Launch, bg_tx: &mpsc::UnboundedSender<Background>) {
    let Some(choice) = launch.provider.as_ref() else {
        app.on_error(
            "there is no provider to list models from: check [provider] in the config and the API key (vaultchat doctor)",
        );
        return;
    };
    let (settings, provider, current, tx) = (
        choice.settings.clone(),
        launch.config.provider.clone(),
        app.info.model.clone(),
        bg_tx.clone(),
    );
    tokio::spawn(async move {
        let view = super::models_list::load(&settings, &provider, &current).await;
        if tx.send(Background::Models(view)).is_err() {
            tracing::debug!("the loop ended before the models were listed");
        }
    });
}

/// Sleep until `at`; without one, never wake.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Whether the loop goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// What running the app's effects needs from the loop.
struct LoopState<'a> {
    launch: &'a Launch,
    ready: Option<&'a Ready>,
    agent: &'a mut Option<AgentLink>,
    store: Option<&'a mut Store>,
    bg_tx: &'a mpsc::UnboundedSender<Background>,
    headless: bool,
    mouse: &'a mut bool,
    /// The vault plugins question, while it waits for an answer.
    plugin_gate: &'a mut Option<PluginGate>,
}

/// Run the effects the app queued; an effect's answer may queue more (a created note is then
/// opened): run them all. Also says whether any ran (the screen may have changed).
async fn run_effects(
    app: &mut App,
    terminal: &mut Tui,
    state: &mut LoopState<'_>,
) -> Result<(Flow, bool), TuiError> {
    let mut ran = false;
    loop {
        let effects = app.take_effects();
        if effects.is_empty() {
            return Ok((Flow::Continue, ran));
        }
        ran = true;
        for effect in effects {
            if run_effect(effect, app, terminal, state).await? == Flow::Quit {
                return Ok((Flow::Quit, ran));
            }
        }
    }
}

/// Run one effect: the loop's own here, the rest in [`perform`].
async fn run_effect(
    effect: Effect,
    app: &mut App,
    terminal: &mut Tui,
    state: &mut LoopState<'_>,
) -> Result<Flow, TuiError> {
    match effect {
        Effect::Quit => {
            if let Some(link) = state.agent.as_ref() {
                shut_down(link);
            }
            return Ok(Flow::Quit);
        }
        Effect::Suspend if state.headless => {}
        Effect::Suspend => term::suspend(terminal, *state.mouse)?,
        Effect::SaveNote {
            path,
            text,
            read,
            agent_edit,
        } => match state.ready {
            Some(r) => save_off_the_loop(
                &r.workspace,
                SaveJob {
                    path,
                    text,
                    read,
                    agent_edit,
                },
                state.bg_tx.clone(),
            ),
            None => app.on_save_finished(
                &path,
                Err((false, "the vault is still being opened".into())),
            ),
        },
        Effect::AnswerPluginTrust(choice) => super::plugin_gate::answer(
            state.plugin_gate.take(),
            choice,
            state.store.as_deref(),
            app,
        ),
        Effect::SetMouseCapture(on) => {
            *state.mouse = on;
            if let Err(e) = term::set_mouse_capture(on) {
                app.on_error(format!("mouse capture could not be changed: {e}"));
            }
        }
        Effect::Agent(op) => to_agent(app, state.agent.as_ref(), op).await,
        Effect::ReadClipboardImage => {
            // The clipboard's owner answers over X11 and a big image is scaled and encoded:
            // seconds in the worst case, never on the loop.
            let tx = state.bg_tx.clone();
            tokio::task::spawn_blocking(move || {
                if tx
                    .send(Background::Clipboard(super::clipboard::read_for_paste()))
                    .is_err()
                {
                    tracing::debug!("the loop ended before the clipboard was read");
                }
            });
        }
        Effect::AttachImageFiles(paths) => {
            // A phone photo is decoded, scaled and re-encoded: a second or more, never on the loop.
            let tx = state.bg_tx.clone();
            let max_file_bytes = state.launch.config.attachments.max_file_bytes();
            tokio::task::spawn_blocking(move || {
                for path in paths {
                    let paste = super::clipboard::dropped_file_paste(&path, max_file_bytes);
                    if tx.send(Background::Clipboard(paste)).is_err() {
                        tracing::debug!("the loop ended before the dropped image was read");
                        return;
                    }
                }
            });
        }
        Effect::SetModel(model) => {
            let known = crate::llm::window::for_model(&state.launch.config.provider, &model);
            app.set_context_window(&model, known.tokens);
            find_window(state.launch, &model, state.bg_tx);
            to_agent(app, state.agent.as_ref(), Op::SetModel(model)).await;
            // Compaction measures against the new model's window (its server may say more later).
            if let Some(link) = state.agent.as_ref()
                && link
                    .ops
                    .send(Op::SetContextWindow(known.tokens))
                    .await
                    .is_err()
            {
                tracing::debug!("the agent did not take the context window");
            }
        }
        Effect::LoadModels => load_models(app, state.launch, state.bg_tx),
        effect => {
            let new_agent = perform(
                effect,
                app,
                state.launch,
                state.ready,
                state.store.as_deref_mut(),
                terminal,
                *state.mouse,
            )
            .await?;
            if let Some(link) = new_agent
                && let Some(old) = state.agent.replace(link)
            {
                shut_down(&old);
            }
        }
    }
    Ok(Flow::Continue)
}

/// Ask an agent to end (it finishes what it must on its own task).
fn shut_down(link: &AgentLink) {
    if link.ops.try_send(Op::Shutdown).is_err() {
        tracing::debug!("the agent had already ended");
    }
}

/// What the background work reported.
fn on_background(
    message: Background,
    app: &mut App,
    launch: &Launch,
    ready: &mut Option<Ready>,
    agent: &mut Option<AgentLink>,
) {
    match message {
        Background::Ready(Ok(r)) => {
            match start_agent(launch, &r, Resume::New) {
                Ok(link) => *agent = Some(link),
                // Without a provider the chat already says why (at start-up).
                Err(StartError::NoProvider(_)) => {}
                Err(e) => app.on_error(e.to_string()),
            }
            *ready = Some(r);
            app.on_ready();
            app.on_vault_changed();
        }
        Background::Ready(Err(e)) => app.on_error(e.to_string()),
        Background::McpStarted(statuses) => {
            for status in statuses {
                if let McpServerState::Failed { message } = status.state {
                    app.on_error(format!(
                        "the MCP server `{}` did not start: {message}",
                        status.name
                    ));
                }
            }
            app.on_mcp_started();
        }
        Background::Synced { listing_changed } => {
            // During a save the file is about to change by our own hand.
            if let Some(r) = ready.as_ref()
                && !app.save_in_flight()
            {
                check_open_note(app, &r.workspace);
            }
            if listing_changed {
                app.on_vault_changed();
            }
        }
        Background::Saved { path, result } => {
            let changed = matches!(result, Err((true, _)));
            app.on_save_finished(&path, result);
            if changed && let Some(r) = ready.as_ref() {
                // Shows the disk's text beside the buffer (or merges it).
                check_open_note(app, &r.workspace);
            }
            app.on_note_written(&path);
        }
        Background::Clipboard(paste) => app.on_clipboard(paste),
        Background::Window { model, tokens } => {
            app.set_context_window(&model, tokens);
            // The server's answer about the model in use: the agent compacts against it too.
            if app.info.model == model
                && tokens > 0
                && let Some(link) = agent.as_ref()
                && link.ops.try_send(Op::SetContextWindow(tokens)).is_err()
            {
                tracing::debug!("the agent did not take the context window");
            }
        }
        Background::Models(Ok(view)) => app.show_models(view),
        Background::Models(Err(message)) => app.on_error(message),
    }
}

/// Write the open note on the blocking pool (the same path as every save: atomic, refused when
/// the file changed since `read`) and report to the loop.
/// One save of the open note (see [`Effect::SaveNote`]).
struct SaveJob {
    path: String,
    text: String,
    read: crate::vault::note_io::NoteText,
    agent_edit: bool,
}

fn save_off_the_loop(
    workspace: &Arc<Workspace>,
    job: SaveJob,
    tx: mpsc::UnboundedSender<Background>,
) {
    let workspace = Arc::clone(workspace);
    tokio::task::spawn_blocking(move || {
        let SaveJob {
            path,
            text,
            read,
            agent_edit,
        } = job;
        let by = if agent_edit {
            crate::tools::workspace::SavedBy::AgentEdit
        } else {
            crate::tools::workspace::SavedBy::Person
        };
        let result = workspace
            .save_user_edit(&path, &read, &text, by)
            .map_err(|e| {
                // Refused because the file is no longer what was read: the conflict state
                // shows both; any other failure is only reported.
                let changed = workspace
                    .read_path(&path)
                    .is_ok_and(|now| !now.fingerprint.matches_content(&read.fingerprint));
                (changed, e.to_string())
            });
        let _ = tx.send(Background::Saved { path, result });
    });
}

/// A Unix signal stream; `None` (logged) when it cannot be installed.
fn unix_signal(kind: tokio::signal::unix::SignalKind) -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(kind)
        .map_err(|e| tracing::warn!("signal handler not installed: {e}"))
        .ok()
}

async fn recv_signal(signal: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match signal {
        Some(signal) => signal.recv().await,
        None => std::future::pending().await,
    }
}

/// Send an op to the agent; without one (no API key, a failed start) say why.
async fn to_agent(app: &mut App, agent: Option<&AgentLink>, op: Op) {
    let sent = match agent {
        Some(link) => link.ops.send(op).await.is_ok(),
        None => false,
    };
    if !sent {
        app.on_agent_unavailable();
    }
}

async fn recv_agent(agent: &mut Option<AgentLink>) -> Option<AgentEvent> {
    match agent {
        Some(link) => link.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Open the workspace (index sync) and start the live index, off the loop.
fn open_workspace(launch: &Launch, tx: mpsc::UnboundedSender<Background>, mcp: McpStartup) {
    let vault = launch.vault.clone();
    let paths = launch.paths.clone();
    let config = launch.config.clone();
    tokio::task::spawn_blocking(move || {
        let result = Workspace::open(vault.clone(), &paths, &config, Actor::Agent)
            .map_err(OpenError::from)
            .map(|workspace| {
                let live = match watch_vault(&vault, &paths, &config, tx.clone()) {
                    Ok(live) => Some(live),
                    Err(e) => {
                        tracing::warn!("the vault is not watched: {e}");
                        None
                    }
                };
                Ready {
                    registry: crate::agent::build::workspace_registry(&workspace),
                    workspace,
                    mcp,
                    _live: live,
                }
            });
        if tx.send(Background::Ready(result)).is_err() {
            tracing::debug!("the loop ended before the vault was open");
        }
    });
}

/// Why the vault is not watched (the app works on, without live updates).
#[derive(Debug, thiserror::Error)]
enum WatchError {
    #[error(transparent)]
    Index(#[from] crate::index::IndexError),
    #[error(transparent)]
    Live(#[from] crate::index::watch::LiveError),
}

/// A live index of the vault: each synced batch is reported to the loop.
fn watch_vault(
    vault: &Vault,
    paths: &Paths,
    config: &Config,
    tx: mpsc::UnboundedSender<Background>,
) -> Result<LiveIndex, WatchError> {
    let index = Index::open(&paths.index_dir, vault, &config.index)?;
    let live = LiveIndex::start(index, vault, &config.index, move |event| match event {
        LiveEvent::Synced(report) => {
            // Notes came, went or moved: the file pane lists the vault again. A note's content
            // changing (the person's own saves included) does not change the listing.
            let listing_changed = report.added + report.removed + report.renamed > 0;
            if tx.send(Background::Synced { listing_changed }).is_err() {
                tracing::debug!("the loop ended; a sync was not reported");
            }
        }
        LiveEvent::Failed(message) => tracing::warn!(%message, "live index"),
    })?;
    Ok(live)
}

/// Start an agent on a new session, or on a stored one.
fn start_agent(launch: &Launch, ready: &Ready, resume: Resume) -> Result<AgentLink, StartError> {
    let choice = launch.provider.clone().ok_or_else(|| {
        StartError::NoProvider(
            launch
                .provider_problem
                .clone()
                .unwrap_or_else(|| "no provider is configured".into()),
        )
    })?;
    let agent = SessionBuilder::new(
        &launch.config,
        launch.paths.database_file(),
        Arc::clone(&ready.workspace),
        choice,
    )
    .pending_tools((!ready.mcp.is_empty()).then(|| ready.mcp.pending_tools()))
    .build(resume)?;
    let (ops, events, _task) = agent.spawn();
    Ok(AgentLink { ops, events })
}

/// The open note changed on disk? Reload it (clean) or enter the conflict state (dirty).
fn check_open_note(app: &mut App, workspace: &Workspace) {
    let Some(path) = app.editor.path().map(str::to_string) else {
        return;
    };
    let Some(known) = app.editor.note().map(|n| n.fingerprint) else {
        return;
    };
    match workspace.read_path(&path) {
        Ok(now) if !now.fingerprint.matches_content(&known) => app.on_disk_change(now),
        Ok(_) => {}
        Err(e) => app.flash(format!("{path}: {e}"), Role::StatusWarning),
    }
}

/// Carry out one effect. Returns a new agent when the effect replaced the session.
async fn perform(
    effect: Effect,
    app: &mut App,
    launch: &Launch,
    ready: Option<&Ready>,
    store: Option<&mut Store>,
    terminal: &mut Tui,
    mouse: bool,
) -> Result<Option<AgentLink>, TuiError> {
    let Some(ready) = ready else {
        app.flash(
            "the vault is still being opened; try again in a moment",
            Role::Notice,
        );
        return Ok(None);
    };
    let ws = &ready.workspace;
    match effect {
        Effect::OpenNote(name, _) | Effect::OpenLink(name, _) => open_note(app, ws, &name),
        Effect::LoadFiles => load_files(app, ws),
        Effect::CreateNote(name) => match ws.create_user_note(&name) {
            Ok((path, note)) => app.on_note_created(&path, note.fingerprint.mtime_ns),
            Err(e) => app.on_error(format!("the note was not created: {e}")),
        },
        Effect::PlanMove { from, to } => match ws.plan_user_move(&from, &to) {
            Ok(plan) => app.propose_move(plan),
            Err(e) => app.on_error(format!("the note was not moved: {e}")),
        },
        Effect::ApplyChatNote(plan, hunks) => {
            let applied = ws.apply(&plan, hunks.as_deref());
            let warning = applied.as_ref().ok().and_then(write_warning);
            let result = applied
                .map(|_| plan.path().rel().to_string())
                .map_err(|e| e.to_string());
            app.on_chat_saved(result);
            if let Some(warning) = warning {
                app.on_error(format!("the chat note was written, but {warning}"));
            }
        }
        Effect::ApplyMove(plan, hunks) => {
            let from = plan.path().rel().to_string();
            let applied = ws.apply(&plan, hunks.as_deref());
            let warning = applied.as_ref().ok().and_then(write_warning);
            let result = applied
                .map(|applied| changed_files(&applied.output.structured))
                .map_err(|e| e.to_string());
            app.on_moved(&from, result);
            if let Some(warning) = warning {
                app.on_error(format!("the move was made, but {warning}"));
            }
        }
        Effect::OpenExternal(path) => open_external(app, launch, ws, &path, terminal, mouse)?,
        Effect::LoadPicker => load_picker(app, ws),
        Effect::LoadTools => load_tools(app, launch, ready),
        Effect::ResumeSession(id) => return Ok(resume_session(app, launch, ready, store, id)),
        Effect::NewSession => match start_agent(launch, ready, Resume::New) {
            Ok(link) => return Ok(Some(link)),
            Err(e) => app.on_error(e.to_string()),
        },
        Effect::ContinueNew(id) => {
            match start_agent(launch, ready, Resume::ContinueNew(Some(id))) {
                Ok(link) => return Ok(Some(link)),
                Err(e) => app.on_error(e.to_string()),
            }
        }
        Effect::Copy(text) => copy(app, &text),
        effect @ (Effect::LoadSessions(_)
        | Effect::PlanChatNote { .. }
        | Effect::LoadUsage
        | Effect::LoadRewind(_)
        | Effect::Rewind(_)
        | Effect::DeleteSession(_)
        | Effect::RenameSession(..)) => {
            // The app database could not be opened at start-up (said then).
            if let Some(store) = store {
                perform_on_store(effect, app, launch, ws, store);
            }
        }
        // Handled by the loop.
        Effect::Agent(_)
        | Effect::SaveNote { .. }
        | Effect::SetModel(_)
        | Effect::LoadModels
        | Effect::Quit
        | Effect::Suspend
        | Effect::ReadClipboardImage
        | Effect::AttachImageFiles(_)
        | Effect::AnswerPluginTrust(_)
        | Effect::SetMouseCapture(_) => {}
    }
    Ok(None)
}

/// What went wrong after a write that did happen (the index or the history could not follow):
/// said to the person, never mistaken for a failed write.
fn write_warning(applied: &crate::tools::workspace::Applied) -> Option<String> {
    applied
        .output
        .structured
        .get("warning")
        .and_then(|w| w.as_str())
        .map(str::to_string)
}

/// `/save`: the note of a stored session, planned for the banner.
fn plan_chat_note(app: &mut App, ws: &Workspace, store: &Store, session: &str, last: bool) {
    use crate::agent::export::{ExportScope, chat_markdown};
    let summary = match store.session(session) {
        Ok(Some(summary)) => summary,
        Ok(None) => return app.on_error("the chat was not saved: its session is not stored"),
        Err(e) => return app.on_error(format!("the chat was not saved: {e}")),
    };
    let conversation = match crate::agent::load_conversation(store, session) {
        Ok(conversation) => conversation,
        Err(e) => return app.on_error(format!("the chat was not saved: {e}")),
    };
    let scope = if last {
        ExportScope::LastReply
    } else {
        ExportScope::Session
    };
    let text = chat_markdown(&summary, &conversation, scope);
    match crate::agent::export::plan_chat_note(ws, &summary, text, None) {
        Ok(plan) => app.propose_chat_note(plan),
        Err(e) => app.on_error(format!("the chat was not saved: {e}")),
    }
}

/// The effects that read or change the app database.
fn perform_on_store(
    effect: Effect,
    app: &mut App,
    launch: &Launch,
    ws: &Workspace,
    store: &mut Store,
) {
    match effect {
        Effect::LoadSessions(query) => {
            let found = match query.as_deref().filter(|q| !q.trim().is_empty()) {
                Some(q) => store.search_sessions(Some(ws.vault_id()), q, 100),
                None => store.list_sessions(Some(ws.vault_id()), 100),
            };
            match found {
                Ok(sessions) => app.show_sessions(sessions),
                Err(e) => app.on_error(e.to_string()),
            }
        }
        Effect::LoadUsage => load_usage(app, launch, store),
        Effect::PlanChatNote { session, last } => plan_chat_note(app, ws, store, &session, last),
        Effect::LoadRewind(path) => match store.revisions_of(ws.vault_id(), &path, 50) {
            Ok(revisions) => app.show_rewind(RewindView::new(path, revisions)),
            Err(e) => app.on_error(e.to_string()),
        },
        Effect::Rewind(revision) => match store.revision_text(revision) {
            Ok(Some(text)) => app.rewind_to(revision, text),
            Ok(None) => app
                .on_error("that revision created the note, so there is no earlier text to restore"),
            Err(e) => app.on_error(e.to_string()),
        },
        Effect::DeleteSession(id) => match store.delete_session(&id) {
            Ok(_) => refresh_sessions(app, ws, store),
            Err(e) => app.on_error(e.to_string()),
        },
        Effect::RenameSession(id, title) => match store.set_session_title(&id, &title) {
            Ok(()) => refresh_sessions(app, ws, store),
            Err(e) => app.on_error(e.to_string()),
        },
        Effect::OpenNote(..)
        | Effect::OpenLink(..)
        | Effect::LoadFiles
        | Effect::CreateNote(_)
        | Effect::PlanMove { .. }
        | Effect::ApplyMove(..)
        | Effect::ApplyChatNote(..)
        | Effect::OpenExternal(_)
        | Effect::LoadPicker
        | Effect::LoadTools
        | Effect::ResumeSession(_)
        | Effect::NewSession
        | Effect::ContinueNew(_)
        | Effect::Copy(_)
        | Effect::Agent(_)
        | Effect::SaveNote { .. }
        | Effect::SetModel(_)
        | Effect::LoadModels
        | Effect::Quit
        | Effect::Suspend
        | Effect::ReadClipboardImage
        | Effect::AttachImageFiles(_)
        | Effect::AnswerPluginTrust(_)
        | Effect::SetMouseCapture(_) => {
            tracing::warn!("not an effect on the app database; ignored");
        }
    }
}

/// The `files_changed` a move reports, the moved note first.
fn changed_files(result: &serde_json::Value) -> Vec<String> {
    result["files_changed"]
        .as_array()
        .map(|files| {
            files
                .iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn open_note(app: &mut App, ws: &Workspace, name: &str) {
    match ws.read_note_named(name) {
        Ok((path, note)) => app.on_note_opened(&path, note),
        Err(e) => app.on_error(e.to_string()),
    }
}

fn load_files(app: &mut App, ws: &Workspace) {
    match ws.note_listing() {
        Ok(notes) => app.set_notes(
            notes
                .into_iter()
                .map(|n| super::files::NoteEntry {
                    path: n.path,
                    title: n.title,
                    aliases: n.aliases,
                    modified_ns: n.mtime_ns,
                })
                .collect(),
        ),
        Err(e) => app.on_error(e.to_string()),
    }
}

fn load_picker(app: &mut App, ws: &Workspace) {
    match ws.note_names() {
        Ok(names) => app.show_picker(
            names
                .into_iter()
                .map(|n| PickerItem {
                    title: n.title.unwrap_or_default(),
                    path: n.path,
                    aliases: n.aliases,
                })
                .collect(),
        ),
        Err(e) => app.on_error(e.to_string()),
    }
}

/// The note in `$VISUAL`/`$EDITOR` (the terminal handed over meanwhile); reloaded afterwards.
fn open_external(
    app: &mut App,
    launch: &Launch,
    ws: &Workspace,
    path: &str,
    terminal: &mut Tui,
    mouse: bool,
) -> Result<(), TuiError> {
    let abs = launch.vault.root().join(path);
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let status = term::outside(terminal, mouse, || {
        std::process::Command::new(&editor).arg(&abs).status()
    })?;
    match status {
        Ok(s) if s.success() => check_open_note(app, ws),
        Ok(s) => app.on_error(format!("{editor} exited with {s}")),
        Err(e) => app.on_error(format!("{editor} could not be started: {e}")),
    }
    Ok(())
}

/// Every tool: the workspace's, the session tools, and the MCP servers' that are up.
fn load_tools(app: &mut App, launch: &Launch, ready: &Ready) {
    let mcp_tools = ready
        .mcp
        .now()
        .map(|servers| servers.tools())
        .unwrap_or_default();
    let tools: Vec<_> = ready
        .registry
        .specs()
        .cloned()
        .chain(crate::tools::session::all_session_tool_specs())
        .chain(mcp_tools.iter().map(|t| t.spec().clone()))
        .collect();
    let offer = tool_offer(app, &launch.config.provider, &tools);
    app.show_tools(ToolsView::new(tools, ready.mcp.statuses()).with_offer(offer));
}

/// What the model in use is sent, when it is not every tool (docs/decisions.md §49): the same
/// choice the agent makes, from the config and what the server said.
fn tool_offer(
    app: &App,
    provider: &crate::config::ProviderConfig,
    tools: &[crate::tools::ToolSpec],
) -> Option<String> {
    let model = &app.info.model;
    let facts = crate::llm::models::remembered_facts(model);
    let window = app.info.context_window;
    let offer = crate::agent::choose_offer(
        provider.tools,
        provider.tool_set,
        facts.as_ref(),
        window,
        crate::agent::tools_tokens(model, tools),
    );
    crate::agent::offer_line(offer, window)
}

/// The last 30 days of usage, with their cost where every model has a price.
fn load_usage(app: &mut App, launch: &Launch, store: &Store) {
    let now = crate::time::now_ms();
    let since = crate::time::period_start_ms(now, 30);
    let days = store.usage_by_day(since);
    let by_session = store.usage_by_session(since, 20);
    match (days, by_session) {
        (Ok(days), Ok(by_session)) => {
            let cost = usage_cost(&launch.config, &days);
            app.show_usage(UsageView::new(days, by_session, cost, 30).with_end_ms(now));
        }
        (Err(e), _) | (_, Err(e)) => app.on_error(e.to_string()),
    }
}

/// An agent on stored session `id`, and its transcript in the chat.
fn resume_session(
    app: &mut App,
    launch: &Launch,
    ready: &Ready,
    store: Option<&mut Store>,
    id: String,
) -> Option<AgentLink> {
    match start_agent(launch, ready, Resume::Session(id.clone())) {
        Ok(link) => {
            if let Some(store) = store {
                let (transcript, usage) = rebuild_transcript(store, &id);
                app.on_session_resumed(id, transcript, usage);
            }
            Some(link)
        }
        Err(e) => {
            app.on_error(e.to_string());
            None
        }
    }
}

/// The session list again, after a change.
fn refresh_sessions(app: &mut App, ws: &Workspace, store: &Store) {
    match store.list_sessions(Some(ws.vault_id()), 100) {
        Ok(sessions) => app.show_sessions(sessions),
        Err(e) => tracing::warn!("the session list was not refreshed: {e}"),
    }
}

fn copy(app: &mut App, text: &str) {
    match super::clipboard::copy(text) {
        Ok(how) => app.flash(format!("copied ({how})"), Role::Notice),
        Err(_) => {
            // No clipboard (SSH, no display): OSC 52 asks the terminal to copy.
            use std::io::Write;
            let mut out = std::io::stdout();
            let written = out
                .write_all(super::clipboard::osc52(text).as_bytes())
                .and_then(|()| out.flush());
            if let Err(e) = written {
                tracing::warn!("OSC 52 copy not written: {e}");
            }
            app.flash("copied (OSC 52)", Role::Notice);
        }
    }
}

/// Cost of the period from the configured prices (None when a model has no price).
fn usage_cost(config: &Config, days: &[crate::store::DayUsage]) -> Option<f64> {
    let mut cost = 0.0;
    for day in days {
        for (model, t) in &day.by_model {
            cost += t.cost(&config.price_of(model)?);
        }
    }
    Some(cost)
}
