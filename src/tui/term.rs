//! The terminal: raw mode, the alternate screen, bracketed paste, mouse capture, focus reports, and putting
//! all of it back — on a normal exit, an error, a panic, and around a suspend (Ctrl+Z) or an
//! external editor. The only module that switches terminal modes.

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Whether the terminal is in the app's modes now (so the panic hook knows what to undo).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the keyboard enhancement was pushed (only on terminals that support it).
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// Mouse reporting for clicks, drags and the wheel only (xterm modes 1000 and 1002, SGR
/// coordinates 1006). crossterm's `EnableMouseCapture` also asks for every pointer movement
/// (1003), which would wake the app on each twitch of the mouse for nothing it uses.
/// `DisableMouseCapture` turns all of them off again.
struct CaptureClicks;

impl crossterm::Command for CaptureClicks {
    fn write_ansi(&self, f: &mut impl std::fmt::Write) -> std::fmt::Result {
        f.write_str("\x1b[?1000h\x1b[?1002h\x1b[?1006h")
    }
}

/// Enter the app's terminal modes and return a terminal to draw on.
pub fn enter(mouse: bool) -> io::Result<Tui> {
    install_panic_hook();
    enable_modes(mouse)?;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    Ok(terminal)
}

fn enable_modes(mouse: bool) -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    // Focus reports let the app save the note when the person switches to another window.
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange
    )?;
    if mouse {
        execute!(out, CaptureClicks)?;
    }
    // Lets Shift+Enter and Alt+Enter arrive as themselves where the terminal can say so.
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false) {
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Put the terminal back as it was. Safe to call twice.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
}

/// Turn mouse capture on or off (copy mode releases the mouse to the terminal).
pub fn set_mouse_capture(on: bool) -> io::Result<()> {
    if on {
        execute!(io::stdout(), CaptureClicks)
    } else {
        execute!(io::stdout(), DisableMouseCapture)
    }
}

/// Leave the app's modes, run `f` (an external editor, a suspend), and come back.
pub fn outside<T>(terminal: &mut Tui, mouse: bool, f: impl FnOnce() -> T) -> io::Result<T> {
    restore();
    let result = f();
    enable_modes(mouse)?;
    terminal.clear()?;
    Ok(result)
}

/// Stop the process as a shell's Ctrl+Z would, with the terminal restored; returns when the
/// shell resumes it (`fg`).
pub fn suspend(terminal: &mut Tui, mouse: bool) -> io::Result<()> {
    outside(terminal, mouse, || {
        // SIGTSTP to ourselves without `unsafe`: the same signal the shell would send.
        let _ = std::process::Command::new("kill")
            .args(["-TSTP", &std::process::id().to_string()])
            .status();
    })
}

/// Restore the terminal before the panic message is printed, so it is readable and the shell
/// is usable; the message also goes to the log.
fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        tracing::error!("panic: {info}");
        previous(info);
    }));
}
