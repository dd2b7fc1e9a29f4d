//! The recovery offer in the app: a kept text is never forgotten before it is safe — restored
//! text only once the restored buffer is on disk, and a discarded one by the person's answer.

use super::app::{App, Effect};
use super::keymap::Keymap;
use super::testing::LiveHost;
use super::theme::Theme;
use crate::host::recovery::{Kept, Recovery};
use crate::host::{HostEvent, Request};
use crate::protocol::NoteText;
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
    super::testing::note_version(text, hash)
}

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.on_terminal(Event::Key(KeyEvent::new(code, modifiers)));
}

fn offer(app: &mut App) {
    app.on_host(HostEvent::RecoveryFound(Kept {
        file: "0123.2.json".into(),
        recovery: Recovery {
            vault: "/vault".into(),
            path: PATH.into(),
            written_ms: 1_796_376_600_000,
            text: KEPT.into(),
        },
        older: 0,
    }));
}

fn forgets(effects: &[Effect]) -> bool {
    effects
        .iter()
        .any(|e| matches!(e, Effect::Host(Request::ForgetRecovery { .. })))
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

/// Two signals, the first kept for later: both texts are kept, offered newest first, and
/// discarding the newest offers the older; saving a restored text forgets only its own file.
#[test]
fn a_later_kept_text_is_never_replaced_and_comes_after_the_newer() {
    let mut live = LiveHost::new(&[(PATH, NOTE)]);
    let data = live.dir.path().join("data");
    let vault = crate::vault::Vault::open(&live.root)
        .map(|v| v.root().to_path_buf())
        .unwrap_or_default();
    let keep = |text: &str, at: i64| Recovery {
        vault: vault.clone(),
        path: PATH.into(),
        written_ms: at,
        text: text.into(),
    };
    let first = "# Garden plan\n\nWater them daily. First signal.\n";
    let second = "# Garden plan\n\nWater them daily. Second signal.\n";
    assert!(crate::host::recovery::write(&data, &keep(first, 1_796_376_600_000)).is_ok());
    let mut app = opened_app();
    live.start(&mut app);
    // The first is left for later; a second signal keeps another text of the same note.
    app.open_note(PATH);
    assert!(live.pump_until(&mut app, |_, e| matches!(
        e,
        Some(HostEvent::RecoveryFound(_))
    )));
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(crate::host::recovery::write(&data, &keep(second, 1_796_376_700_000)).is_ok());

    // The next opening offers the newest, and says an older one follows.
    app.open_note(PATH);
    let mut found = None;
    assert!(live.pump_until(&mut app, |_, e| {
        if let Some(HostEvent::RecoveryFound(kept)) = e {
            found = Some(kept.clone());
        }
        found.is_some()
    }));
    let newest_file = found.as_ref().map(|k| k.file.clone()).unwrap_or_default();
    let newest = found.take().map(|k| (k.recovery.text, k.older));
    assert_eq!(newest, Some((second.to_string(), 1)));
    // The host compares it with the note off the loop and sends the diff after.
    assert!(live.pump_until(&mut app, |_, e| matches!(
        e,
        Some(HostEvent::RecoveryCompared { file, .. }) if *file == newest_file
    )));
    let screen = super::testing::draw_app(&mut app, 80, 24);
    assert!(screen.contains("An older kept version is"), "{screen}");
    assert!(
        screen.contains("+ Water them daily. Second signal."),
        "{screen}"
    );

    // Discard: that file goes, and the older text is offered at once.
    press(&mut app, KeyCode::Char('d'), KeyModifiers::NONE);
    assert!(live.pump_until(&mut app, |_, e| {
        if let Some(HostEvent::RecoveryFound(kept)) = e {
            found = Some(kept.clone());
        }
        found.is_some()
    }));
    let older = found.take().map(|k| (k.recovery.text, k.older));
    assert_eq!(older, Some((first.to_string(), 0)));

    // Restore and save it: the note holds it, and no recovery is left.
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(app.editor.text(), first);
    press(&mut app, KeyCode::Char('s'), KeyModifiers::CONTROL);
    assert!(live.pump_until(&mut app, |app, _| !app.editor.is_dirty()));
    assert_eq!(
        std::fs::read_to_string(live.root.join(PATH))
            .ok()
            .as_deref(),
        Some(first)
    );
    let folder = crate::host::recovery::folder(&data);
    let gone = || {
        std::fs::read_dir(&folder)
            .map(|d| d.filter_map(Result::ok).count() == 0)
            .unwrap_or(true)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !gone() {
        assert!(
            std::time::Instant::now() < deadline,
            "a recovery file stayed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The offer opens at once; the diff of the kept text (up to 64 MiB) against the note is the
/// host's work, shown when it comes, and the answers work before it does.
#[test]
fn the_offer_opens_at_once_and_its_diff_comes_from_the_host() {
    let mut app = opened_app();
    app.on_host(HostEvent::RecoveryFound(Kept {
        file: "0123.3.json".into(),
        recovery: Recovery {
            vault: "/vault".into(),
            path: PATH.into(),
            written_ms: 1_796_376_600_000,
            text: KEPT.into(),
        },
        older: 2,
    }));
    let screen = super::testing::draw_app(&mut app, 80, 24);
    assert!(screen.contains("comparing"), "{screen}");
    assert!(!screen.contains("+ Water them daily, typed"), "{screen}");
    insta::assert_snapshot!("app_recovery_offer_comparing_80x24", screen);
    // A comparison of another kept file (an offer already answered) is not this one's.
    let diff = crate::text::diff::DiffPreview::new(NOTE, KEPT, 6);
    app.on_host(HostEvent::RecoveryCompared {
        path: PATH.into(),
        file: "0123.2.json".into(),
        diff: diff.clone(),
    });
    assert!(super::testing::draw_app(&mut app, 80, 24).contains("comparing"));
    app.on_host(HostEvent::RecoveryCompared {
        path: PATH.into(),
        file: "0123.3.json".into(),
        diff,
    });
    let screen = super::testing::draw_app(&mut app, 80, 24);
    assert!(!screen.contains("comparing"), "{screen}");
    assert!(screen.contains("+1 -1 lines"), "{screen}");
    assert!(
        screen.contains("+ Water them daily, typed before the logout."),
        "{screen}"
    );
    // Restore works whether or not the diff came.
    let mut app = opened_app();
    offer(&mut app);
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(app.editor.text(), KEPT);
}
