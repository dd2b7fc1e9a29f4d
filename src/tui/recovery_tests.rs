//! The recovery offer in the app: a kept text is never forgotten before it is safe — restored
//! text only once the restored buffer is on disk, and a discarded one by the person's answer.

use super::app::{App, Effect};
use super::keymap::Keymap;
use super::theme::Theme;
use crate::host::recovery::Recovery;
use crate::host::{HostEvent, Request};
use crate::protocol::{Fingerprint, NoteText, TextFormat};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

const PATH: &str = "Projects/Plan.md";
const NOTE: &str = "# Garden plan\n\nWater them daily.\n";
const KEPT: &str = "# Garden plan\n\nWater them daily, typed before the logout.\n";

fn opened_app() -> App {
    let mut app = App::new(
        Theme::builtin_dark(),
        Keymap::default_map(),
        super::testing::session_info(),
    );
    app.on_ready();
    app.on_note_opened(PATH, note(NOTE, 1));
    app
}

fn note(text: &str, hash: u64) -> NoteText {
    NoteText {
        text: text.into(),
        format: TextFormat::default(),
        fingerprint: Fingerprint {
            hash,
            mtime_ns: 0,
            size: text.len() as u64,
        },
    }
}

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.on_terminal(Event::Key(KeyEvent::new(code, modifiers)));
}

fn offer(app: &mut App) {
    app.on_host(HostEvent::RecoveryFound(Recovery {
        vault: "/vault".into(),
        path: PATH.into(),
        written_ms: 1_796_376_600_000,
        text: KEPT.into(),
    }));
}

fn forgets(effects: &[Effect]) -> bool {
    effects
        .iter()
        .any(|e| matches!(e, Effect::Host(Request::ForgetRecovery(..))))
}

fn saved_text(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::SaveNote { path, text, .. } if path == PATH => Some(text.clone()),
        _ => None,
    })
}

/// Restore keeps the recovery file: until the restored text is saved, the file is the only copy
/// of it on disk, and the app may die before the save.
#[test]
fn restored_text_is_forgotten_only_once_it_is_saved() {
    let mut app = opened_app();
    offer(&mut app);
    app.take_effects();
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(app.editor.text(), KEPT);
    assert!(
        !forgets(&app.take_effects()),
        "forgotten before it was saved"
    );
    press(&mut app, KeyCode::Char('s'), KeyModifiers::CONTROL);
    let effects = app.take_effects();
    assert_eq!(saved_text(&effects).as_deref(), Some(KEPT));
    assert!(!forgets(&effects), "forgotten before the save finished");
    app.on_host(HostEvent::Saved {
        path: PATH.into(),
        result: Ok(note(KEPT, 2)),
    });
    assert!(forgets(&app.take_effects()), "kept after the save");
}

/// A save that fails, or one that wrote a text from before the restore, does not make the
/// restored text safe; nor does a save after the note was opened again (the restored text left
/// the buffer).
#[test]
fn a_failed_or_older_save_or_a_reopened_note_keeps_the_recovery() {
    let mut app = opened_app();
    offer(&mut app);
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    press(&mut app, KeyCode::Char('s'), KeyModifiers::CONTROL);
    app.take_effects();
    app.on_host(HostEvent::Saved {
        path: PATH.into(),
        result: Err((false, "disk full".into())),
    });
    assert!(!forgets(&app.take_effects()));

    // A save of the text from before the restore (in flight when Restore was chosen).
    let mut app = opened_app();
    press(&mut app, KeyCode::Char('s'), KeyModifiers::CONTROL);
    offer(&mut app);
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    app.take_effects();
    app.on_host(HostEvent::Saved {
        path: PATH.into(),
        result: Ok(note(NOTE, 2)),
    });
    assert!(app.editor.is_dirty());
    assert!(
        !forgets(&app.take_effects()),
        "the restored text is not on disk"
    );

    let mut app = opened_app();
    offer(&mut app);
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    app.on_note_opened(PATH, note(NOTE, 3));
    press(&mut app, KeyCode::Char('s'), KeyModifiers::CONTROL);
    app.take_effects();
    app.on_host(HostEvent::Saved {
        path: PATH.into(),
        result: Ok(note(NOTE, 4)),
    });
    assert!(
        !forgets(&app.take_effects()),
        "the restored text was not saved"
    );
}
