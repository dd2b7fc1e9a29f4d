//! What the app waits for from the host shows in the status bar until the answer comes: a note
//! being opened (the read runs on the host's blocking pool, so on a slow disk the person keeps
//! typing and sees the note is on its way), the picker's list, sessions, usage, a note's history.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::host::{Asked, HostEvent, Request};
use crate::tui::app::{App, Effect};
use crate::tui::keymap::Keymap;
use crate::tui::testing::{app_with, draw_app as draw, note_text};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

/// Type `text` in the chat and press Enter (a slash command).
fn command(app: &mut App, text: &str) {
    type_text(app, text);
    app.on_terminal(Event::Key(KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::NONE,
    )));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_terminal(Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
    }
}

/// An app that asked the host for `Seeds` and has not had the answer yet.
fn opening_seeds() -> App {
    let mut app = app_with(Keymap::default_map());
    app.open_note("Reading/Seeds.md");
    let effects = app.take_effects();
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::OpenNote(name, _) if name == "Reading/Seeds.md")),
        "{effects:?}"
    );
    app
}

#[test]
fn a_note_being_opened_is_said_until_it_arrives_and_typing_goes_on() {
    let mut app = opening_seeds();
    // The person types in the chat meanwhile: the keys are taken, the wait stays.
    type_text(&mut app, "still typing");
    let small = draw(&mut app, 80, 24);
    assert!(small.contains("opening Reading/Seeds.md…"), "{small}");
    assert!(small.contains("still typing"), "{small}");
    insta::assert_snapshot!("opening_a_note_80x24", small);
    let large = draw(&mut app, 120, 40);
    insta::assert_snapshot!("opening_a_note_120x40", large);

    app.on_host(HostEvent::NoteOpened {
        path: "Reading/Seeds.md".into(),
        note: note_text("# Seeds\n\nTomatoes, beans.\n"),
    });
    let opened = draw(&mut app, 120, 40);
    assert!(!opened.contains("opening Reading/Seeds.md…"), "{opened}");
    assert!(opened.contains("Tomatoes, beans."), "{opened}");
    assert_eq!(app.waiting_for(), None);
}

#[test]
fn a_failed_read_ends_its_wait_and_no_other() {
    let mut app = opening_seeds();
    assert!(app.waiting_for().is_some());
    // An unrelated answer does not end it.
    app.on_host(HostEvent::Sessions(Vec::new()));
    assert_eq!(
        app.waiting_for().as_deref(),
        Some("opening Reading/Seeds.md…")
    );
    // Nor does an error or a notice about something else (a plugin, a server, the database).
    app.on_host(HostEvent::Error("the MCP server `web` exited".into()));
    app.on_host(HostEvent::Notice(
        "the vault's plugins are not trusted".into(),
    ));
    assert_eq!(
        app.waiting_for().as_deref(),
        Some("opening Reading/Seeds.md…")
    );
    // Nor a failure to answer another request.
    app.on_host(HostEvent::Unanswered {
        asked: Asked::Sessions,
        message: "the app database is not open".into(),
        notice: true,
    });
    app.on_host(HostEvent::Unanswered {
        asked: Asked::Note("Reading/Other.md".into()),
        message: "no note named Reading/Other.md".into(),
        notice: false,
    });
    assert_eq!(
        app.waiting_for().as_deref(),
        Some("opening Reading/Seeds.md…")
    );
    // The failure of this read ends it, and says why.
    app.on_host(HostEvent::Unanswered {
        asked: Asked::Note("Reading/Seeds.md".into()),
        message: "Reading/Seeds.md: permission denied".into(),
        notice: false,
    });
    assert_eq!(app.waiting_for(), None);
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains("permission denied"), "{screen}");
}

#[test]
fn sessions_and_history_are_waited_for_until_their_answer() {
    let mut app = app_with(Keymap::default_map());
    command(&mut app, "/sessions");
    app.take_effects();
    assert_eq!(app.waiting_for().as_deref(), Some("reading sessions…"));
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("reading sessions…"), "{screen}");
    app.on_host(HostEvent::Sessions(Vec::new()));
    assert_eq!(app.waiting_for(), None);
    // Esc closes the sessions list the answer opened.
    app.on_terminal(Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));

    app.on_host(HostEvent::NoteOpened {
        path: "Plan.md".into(),
        note: note_text("# Plan\n"),
    });
    // Alt+2: back to the chat.
    app.on_terminal(Event::Key(KeyEvent::new(
        KeyCode::Char('2'),
        KeyModifiers::ALT,
    )));
    command(&mut app, "/rewind");
    let effects = app.take_effects();
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Host(Request::Revisions(p)) if p == "Plan.md")),
        "{effects:?}"
    );
    assert_eq!(
        app.waiting_for().as_deref(),
        Some("reading the history of Plan.md…")
    );
    app.on_host(HostEvent::Revisions {
        path: "Plan.md".into(),
        revisions: Vec::new(),
    });
    assert_eq!(app.waiting_for(), None);
}

#[test]
fn the_picker_key_before_the_listing_says_it_is_listing() {
    // The picker opens over the file pane's listing (decisions §60): before the listing has
    // arrived it opens at once and says what it waits for, and asks the host for nothing.
    let mut app = app_with(Keymap::default_map());
    app.on_terminal(Event::Key(KeyEvent::new(
        KeyCode::Char('p'),
        KeyModifiers::CONTROL,
    )));
    let effects = app.take_effects();
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Host(_))),
        "{effects:?}"
    );
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("Listing the vault's notes…"), "{screen}");
}
