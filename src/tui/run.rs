//! The terminal loop: owns the terminal and the host, feeds the app the terminal's events, the
//! host's answers and the signals, and carries out the app's effects in one place
//! ([`dispatch`]). The first frame is drawn before the vault is opened (the host opens it in the
//! background); the engine's work never runs here.
//!
//! Redraws are driven by events: after anything changed, one frame is drawn at most every
//! 16 ms (bursts of stream deltas coalesce); with nothing happening the loop sleeps.

use super::app::{App, Effect, Route, SessionInfo};
use super::clipboard::ClipboardPaste;
use super::keymap::Keymap;
use super::saving::AutosaveSettings;
use super::term::{self, Tui};
use super::theme::{Role, Theme};
use crate::host::{Host, Launch};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The shortest time between two frames (60 per second at most).
const FRAME: Duration = Duration::from_millis(16);

/// How long a quit caused by a signal or a vanished terminal waits for the last save.
const TERMINATE_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("the terminal could not be set up: {0}")]
    Terminal(#[from] std::io::Error),
}

pub fn run(launch: Launch) -> Result<(), TuiError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run_async(Arc::new(launch)))
}

async fn run_async(launch: Arc<Launch>) -> Result<(), TuiError> {
    let mut app = new_app(&launch);
    let mut terminal = term::enter(true)?;
    let result = event_loop(&mut terminal, &mut app, Arc::clone(&launch)).await;
    term::restore();
    if result.is_err() {
        // The loop ended on an error (a terminal gone mid-draw often shows first as one): the
        // unsaved text is kept as a signal's quit keeps it.
        keep_unsaved(&app, &launch);
    }
    result
}

/// The app with the person's theme, key map and settings; what could not be loaded is said in
/// the chat.
fn new_app(launch: &Launch) -> App {
    let (theme, mut problems) = if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        (Theme::monochrome(), Vec::new())
    } else {
        let (theme, errors) =
            Theme::load(&launch.theme, Some(&launch.paths.config_dir.join("themes")));
        (theme, errors.into_iter().map(|e| e.to_string()).collect())
    };
    let (keymap, keymap_errors) = Keymap::load(&launch.keymap, Some(&launch.paths.config_dir));
    problems.extend(keymap_errors.into_iter().map(|e| e.to_string()));
    let info = SessionInfo {
        vault: launch.vault_name(),
        provider: launch.provider_name.clone(),
        model: launch.model.clone(),
        session_id: None,
        context_window: launch.known_window(&launch.model),
        // The session cost in the status bar: the config's price, else the built-in list price.
        price: launch.config.price_of(&launch.model).map(|p| p.price),
        local_only: launch.config.privacy.local_only,
    };
    let mut app = App::new(theme, keymap, info).with_autosave(AutosaveSettings {
        enabled: launch.config.editor.autosave,
        delay: Duration::from_millis(launch.config.editor.autosave_delay_ms),
    });
    app.set_file_pane(launch.config.ui.file_pane.unwrap_or_default());
    for problem in problems.iter().chain(&launch.provider_problem) {
        app.transcript.push_error(problem);
    }
    app
}

/// What the loop owns besides the app and the terminal.
struct Runner {
    launch: Arc<Launch>,
    host: Host,
    /// The clipboard and dropped images are read on the blocking pool and come back here.
    pastes: mpsc::UnboundedSender<ClipboardPaste>,
    /// The terminal is gone (SIGHUP, end of input): nothing can be drawn on it.
    headless: bool,
    mouse: bool,
    /// Since when a quit that nobody can answer any more is under way (signal, terminal gone).
    terminating: Option<Instant>,
}

impl Runner {
    /// Nobody can answer any more: save what can be saved and quit.
    fn terminate(&mut self, app: &mut App, headless: bool) {
        self.headless |= headless;
        self.terminating.get_or_insert_with(Instant::now);
        app.on_terminate();
    }
}

async fn event_loop(
    terminal: &mut Tui,
    app: &mut App,
    launch: Arc<Launch>,
) -> Result<(), TuiError> {
    terminal.draw(|f| app.draw(f))?;
    // For the start-up benchmark (scripts/bench): stop once the first frame is on screen.
    if std::env::var_os("VAULTCHAT_EXIT_AFTER_FIRST_FRAME").is_some() {
        return Ok(());
    }
    let (pastes, mut pasted) = mpsc::unbounded_channel();
    let mut runner = Runner {
        host: Host::start(Arc::clone(&launch)),
        launch,
        pastes,
        headless: false,
        mouse: true,
        terminating: None,
    };
    let mut terminal_events = crossterm::event::EventStream::new();
    let (mut dirty, mut last_draw) = (false, Instant::now());
    // SIGTERM (a logout, `kill`) and SIGHUP (the terminal closed) save the note and quit.
    let mut sigterm = unix_signal(tokio::signal::unix::SignalKind::terminate());
    let mut sighup = unix_signal(tokio::signal::unix::SignalKind::hangup());
    loop {
        let frame_due = sleep_until((dirty && !runner.headless).then(|| last_draw + FRAME));
        let autosave_due = sleep_until(app.autosave_deadline());
        let give_up = sleep_until(runner.terminating.map(|since| since + TERMINATE_GRACE));
        tokio::select! {
            event = terminal_events.next(), if !runner.headless => match event {
                Some(Ok(event)) => app.on_terminal(event),
                Some(Err(e)) => tracing::warn!("terminal event error: {e}"),
                None => runner.terminate(app, true),
            },
            () = autosave_due => app.on_autosave_due(),
            Some(()) = recv_signal(&mut sigterm) => {
                tracing::info!("SIGTERM: saving and quitting");
                runner.terminate(app, false);
            }
            Some(()) = recv_signal(&mut sighup) => {
                tracing::info!("SIGHUP: saving and quitting");
                runner.terminate(app, true);
            }
            () = give_up => {
                tracing::warn!("quitting without the last save: it did not finish in time");
                break;
            }
            Some(event) = runner.host.events.recv() => app.on_host(event),
            Some(paste) = pasted.recv() => app.on_clipboard(paste),
            () = frame_due => {
                terminal.draw(|f| app.draw(f))?;
                last_draw = Instant::now();
                dirty = false;
                continue;
            }
        }
        dirty = true;
        if run_effects(app, terminal, &mut runner)? == Flow::Quit {
            break;
        }
    }
    if runner.terminating.is_some() {
        keep_unsaved(app, &runner.launch);
    }
    // The terminal is the person's again before the session_end hooks are waited for (up to
    // 30 s for a `git push`): a quit does not leave a frozen screen that takes no keys.
    term::restore();
    runner.host.shut_down().await;
    Ok(())
}

/// A quit nobody could answer (a signal, the terminal gone) that leaves unsaved text in the
/// editor — autosave off, a failed or conflicting save, a save that did not finish in time —
/// keeps that text in a recovery file in the data folder (docs/decisions.md §61). Written here,
/// on the way out, because nothing runs after this loop to carry out an effect.
fn keep_unsaved(app: &App, launch: &Launch) {
    let Some(path) = app.editor.path() else {
        return;
    };
    if !app.editor.is_dirty() {
        return;
    }
    let kept = crate::host::recovery::Recovery {
        vault: launch.vault.root().to_path_buf(),
        path: path.to_string(),
        written_ms: crate::time::now_ms(),
        text: app.editor.text(),
    };
    match crate::host::recovery::write(&launch.paths.data_dir, &kept) {
        Ok(file) => tracing::info!(file = %file.display(), "unsaved text of {path} kept"),
        Err(e) => tracing::error!("unsaved text of {path} could not be kept: {e}"),
    }
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

/// Run the effects the app queued; an effect's answer may queue more: run them all.
fn run_effects(app: &mut App, terminal: &mut Tui, runner: &mut Runner) -> Result<Flow, TuiError> {
    loop {
        let effects = app.take_effects();
        if effects.is_empty() {
            return Ok(Flow::Continue);
        }
        for effect in effects {
            if dispatch(effect, app, terminal, runner)? == Flow::Quit {
                return Ok(Flow::Quit);
            }
        }
    }
}

/// The one place effects are carried out: the engine's work goes to the host, the terminal's
/// is done here.
fn dispatch(
    effect: Effect,
    app: &mut App,
    terminal: &mut Tui,
    runner: &mut Runner,
) -> Result<Flow, TuiError> {
    let effect = match effect.route() {
        Route::Host(request) => {
            runner.host.send(request);
            return Ok(Flow::Continue);
        }
        Route::Terminal(effect) => effect,
    };
    match effect {
        Effect::Quit => return Ok(Flow::Quit),
        Effect::Suspend if runner.headless => {}
        Effect::Suspend => term::suspend(terminal, runner.mouse)?,
        Effect::SetMouseCapture(on) => {
            runner.mouse = on;
            if let Err(e) = term::set_mouse_capture(on) {
                app.on_error(format!("mouse capture could not be changed: {e}"));
            }
        }
        Effect::OpenExternal(path) => open_external(app, runner, &path, terminal)?,
        Effect::Copy(text) => copy(app, &text),
        Effect::ReadClipboardImage => {
            // The clipboard's owner answers over X11 and a big image is scaled and encoded:
            // seconds in the worst case, never on the loop.
            let tx = runner.pastes.clone();
            tokio::task::spawn_blocking(move || {
                if tx.send(super::clipboard::read_for_paste()).is_err() {
                    tracing::debug!("the loop ended before the clipboard was read");
                }
            });
        }
        Effect::AttachImageFiles(paths) => {
            // A phone photo is decoded, scaled and re-encoded: a second or more, never on the loop.
            let tx = runner.pastes.clone();
            let max_file_bytes = runner.launch.config.attachments.max_file_bytes();
            tokio::task::spawn_blocking(move || {
                for path in paths {
                    let paste = super::clipboard::dropped_file_paste(&path, max_file_bytes);
                    if tx.send(paste).is_err() {
                        tracing::debug!("the loop ended before the dropped image was read");
                        return;
                    }
                }
            });
        }
        Effect::Agent(_)
        | Effect::Host(_)
        | Effect::OpenNote(..)
        | Effect::OpenLink(..)
        | Effect::SaveNote { .. } => tracing::warn!("a host request reached the terminal; ignored"),
    }
    Ok(Flow::Continue)
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

/// The note in `$VISUAL`/`$EDITOR` (the terminal handed over meanwhile); checked afterwards.
fn open_external(
    app: &mut App,
    runner: &Runner,
    path: &str,
    terminal: &mut Tui,
) -> Result<(), TuiError> {
    let file = runner.launch.note_file(path);
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let status = term::outside(terminal, runner.mouse, || {
        std::process::Command::new(&editor).arg(&file).status()
    })?;
    match status {
        Ok(s) if s.success() => app.after_external_edit(),
        Ok(s) => app.on_error(format!("{editor} exited with {s}")),
        Err(e) => app.on_error(format!("{editor} could not be started: {e}")),
    }
    Ok(())
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
