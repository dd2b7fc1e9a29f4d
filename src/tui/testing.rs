//! Helpers for the screen tests: a rendered buffer as text for insta snapshots, and style probes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// The buffer's symbols, one line per row, trailing spaces trimmed (what a person would read).
pub fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        for x in area.left()..area.right() {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// An empty buffer of `width`×`height`.
pub fn buffer(width: u16, height: u16) -> Buffer {
    Buffer::empty(Rect::new(0, 0, width, height))
}

/// The style of the first cell whose row contains `needle`, at the needle's first character.
pub fn style_at(buf: &Buffer, needle: &str) -> Option<Style> {
    style_at_offset(buf, needle, 0)
}

/// What a style looks like on screen: colours (unset counts as `Reset`, the terminal default)
/// and modifiers, without the underline colour a buffer cell also carries.
pub fn look(
    style: Option<Style>,
) -> Option<(
    Option<ratatui::style::Color>,
    Option<ratatui::style::Color>,
    ratatui::style::Modifier,
)> {
    let colour = |c: Option<ratatui::style::Color>| c.or(Some(ratatui::style::Color::Reset));
    style.map(|s| (colour(s.fg), colour(s.bg), s.add_modifier))
}

/// The style of the cell `offset` characters into the first occurrence of `needle` (so two words
/// of one row can be compared: a changed word and its unchanged neighbour).
pub fn style_at_offset(buf: &Buffer, needle: &str, offset: usize) -> Option<Style> {
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut columns = Vec::new();
        for x in area.left()..area.right() {
            let symbol = buf[(x, y)].symbol();
            for _ in symbol.chars() {
                columns.push(x);
            }
            row.push_str(symbol);
        }
        if let Some(byte) = row.find(needle) {
            let x = *columns.get(row[..byte].chars().count() + offset)?;
            return Some(buf[(x, y)].style());
        }
    }
    None
}

/// The session the screen tests show: the garden vault, Claude Sonnet 4.5, no price.
pub fn session_info() -> crate::tui::app::SessionInfo {
    crate::tui::app::SessionInfo {
        vault: "garden-vault".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        session_id: None,
        context_window: 200_000,
        price: None,
        local_only: false,
    }
}

/// The whole app drawn at `width`×`height`, as text.
pub fn draw_app(app: &mut crate::tui::app::App, width: u16, height: u16) -> String {
    let mut buf = buffer(width, height);
    app.render(buf.area, &mut buf);
    buffer_text(&buf)
}

/// An app as the screen tests draw it: dark theme, the key map `keymap`, the workspace ready.
pub fn app_with(keymap: crate::tui::keymap::Keymap) -> crate::tui::app::App {
    let mut app = crate::tui::app::App::new(
        crate::tui::theme::Theme::builtin_dark(),
        keymap,
        session_info(),
    );
    app.on_ready();
    app
}

/// The notes of a small vault, as the index lists them (newest last-modified: Garden Planner).
pub fn sample_notes() -> Vec<crate::tui::files::NoteEntry> {
    let note = |path: &str, title: &str, aliases: &[&str], modified_ns: i64| {
        crate::tui::files::NoteEntry {
            path: path.into(),
            title: title.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            modified_ns,
        }
    };
    vec![
        note("Welcome.md", "Welcome", &[], 10),
        note(
            "Projects/Garden Planner.md",
            "Garden Planner",
            &["veg beds"],
            90,
        ),
        note(
            "Projects/Vaultchat Launch.md",
            "Vaultchat Launch",
            &["launch"],
            60,
        ),
        note("Inbox/Ideas.md", "Ideas", &[], 70),
        note("Journal/2026-11-30.md", "2026-11-30", &[], 80),
        note("Areas/Health/Running log.md", "Running log", &[], 20),
        note("Reading/Seeds.md", "Seeds", &["seed list"], 30),
    ]
}

/// A note's text as the runner hands it to the app.
pub fn note_text(text: &str) -> crate::protocol::NoteText {
    note_version(text, 1)
}

/// [`note_text`] with the content hash a version of the note on disk carries (tests of saves and
/// conflicts tell versions apart by it).
pub fn note_version(text: &str, hash: u64) -> crate::protocol::NoteText {
    crate::protocol::NoteText {
        text: text.into(),
        format: crate::protocol::TextFormat::default(),
        fingerprint: crate::protocol::Fingerprint {
            hash,
            mtime_ns: 0,
            size: text.len() as u64,
        },
    }
}

/// A real host on a temporary vault, for tests that drive the app through the engine the way
/// the runner does: the app's effects go to the host as requests, its events come back to the
/// app. Nothing is faked: the vault, its index and the app database are real files.
pub struct LiveHost {
    pub dir: tempfile::TempDir,
    pub root: std::path::PathBuf,
    /// The app database's file (a test may store a session in it before the host opens it).
    pub database: std::path::PathBuf,
    runtime: tokio::runtime::Runtime,
    host: Option<crate::host::Host>,
    /// The effects that are the terminal's own work (not the host's), in order.
    pub terminal_effects: Vec<crate::tui::app::Effect>,
}

impl LiveHost {
    /// A vault with these notes (path, text); the host is started by [`LiveHost::start`].
    #[allow(clippy::unwrap_used)]
    pub fn new(notes: &[(&str, &str)]) -> LiveHost {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("vault");
        std::fs::create_dir_all(&root).unwrap();
        for (path, text) in notes {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        let paths = crate::config::Paths::under(&dir.path().join("data"));
        let database = paths.database_file();
        std::fs::create_dir_all(database.parent().unwrap()).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        LiveHost {
            dir,
            root,
            database,
            runtime,
            host: None,
            terminal_effects: Vec::new(),
        }
    }

    /// Start the host (no provider: no agent) and carry events until the vault is open.
    #[allow(clippy::unwrap_used)]
    pub fn start(&mut self, app: &mut crate::tui::app::App) {
        let launch = crate::host::Launch {
            vault: crate::vault::Vault::open(&self.root).unwrap(),
            paths: crate::config::Paths::under(&self.dir.path().join("data")),
            config: crate::config::Config::default(),
            provider: None,
            provider_problem: None,
            provider_name: "none".into(),
            model: app.info.model.clone(),
            theme: "dark".into(),
            keymap: "default".into(),
        };
        let host = {
            let _runtime = self.runtime.enter();
            crate::host::Host::start(std::sync::Arc::new(launch))
        };
        self.host = Some(host);
        // Open, and the file pane filled: a snapshot taken later does not depend on whether
        // the first listing has come yet.
        let (mut ready, mut listed) = (false, false);
        assert!(
            self.pump_until(app, |_, event| {
                ready |= matches!(event, Some(crate::host::HostEvent::Ready(Ok(()))));
                listed |= matches!(event, Some(crate::host::HostEvent::Files(_)));
                ready && listed
            }),
            "the host did not open the vault and list its notes"
        );
    }

    /// Carry the app's effects to the host and its events to the app until `done` (called
    /// with each event before the app gets it, and with `None` whenever the app is idle) says
    /// so; `false` after 10 s without it.
    pub fn pump_until(
        &mut self,
        app: &mut crate::tui::app::App,
        mut done: impl FnMut(&crate::tui::app::App, Option<&crate::host::HostEvent>) -> bool,
    ) -> bool {
        let Some(host) = self.host.as_mut() else {
            return false;
        };
        let terminal = &mut self.terminal_effects;
        self.runtime.block_on(async {
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                carry_effects(app, host, terminal);
                if done(app, None) {
                    return true;
                }
                match tokio::time::timeout_at(deadline, host.events.recv()).await {
                    Ok(Some(event)) => {
                        let stop = done(app, Some(&event));
                        app.on_host(event);
                        if stop {
                            // The answer's own effects go out too (a reload after a move).
                            carry_effects(app, host, terminal);
                            return true;
                        }
                    }
                    Ok(None) | Err(_) => return false,
                }
            }
        })
    }
}

/// The app's queued effects: the host's to the host, the terminal's kept for the test.
fn carry_effects(
    app: &mut crate::tui::app::App,
    host: &crate::host::Host,
    terminal: &mut Vec<crate::tui::app::Effect>,
) {
    for effect in app.take_effects() {
        match effect.route() {
            crate::tui::app::Route::Host(request) => host.send(request),
            crate::tui::app::Route::Terminal(effect) => terminal.push(effect),
        }
    }
}
