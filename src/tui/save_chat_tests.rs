//! `/save` through the loop a person sees, on a real host: the command asks the host for the
//! chat's note (planned from the session stored in the app database), the banner shows it as a
//! new file under Chats/, `n` writes nothing and `y` applies it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::host::HostEvent;
use crate::store::{NewSession, Store};
use crate::tui::app::App;
use crate::tui::keymap::Keymap;
use crate::tui::testing::draw_app as draw;
use crate::tui::testing::{LiveHost, app_with};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use std::fs;

/// 2026-12-01 10:00 UTC, when the stored session began.
const CREATED_MS: i64 = 1_796_119_200_000;
const NOTE_PATH: &str = "Chats/2026-12-01 Tomatoes.md";

fn press(app: &mut App, code: KeyCode) {
    app.on_terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn command(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
    // The `/` list opened and asked the host for the commands; only what Enter does counts here.
    let typed = app.take_effects();
    assert!(
        typed.iter().all(|e| matches!(
            e,
            crate::tui::app::Effect::Host(crate::host::Request::ListCommands)
        )),
        "typing asks only for the commands: {typed:?}"
    );
    press(app, KeyCode::Enter);
}

/// A session with one question and its reply, stored as the agent stores it.
fn store_session(live: &LiveHost) -> String {
    let store = Store::open(&live.database).unwrap();
    let vault = crate::vault::Vault::open(&live.root).unwrap();
    let vault_id = crate::index::vault_id(&vault);
    let id = store
        .create_session(&NewSession {
            vault_id: &vault_id,
            provider: "anthropic",
            model: "m",
            now_ms: CREATED_MS,
        })
        .unwrap();
    store.set_session_title(&id, "Tomatoes").unwrap();
    let question = serde_json::json!([{"type": "text", "text": "When do I plant tomatoes?"}]);
    let reply = serde_json::json!([{"type": "text", "text": "Plant them in May."}]);
    store
        .append_message(&id, "user", &question.to_string(), "", CREATED_MS + 1)
        .unwrap();
    store
        .append_message(&id, "assistant", &reply.to_string(), "", CREATED_MS + 2)
        .unwrap();
    id
}

fn planned(_: &App, event: Option<&HostEvent>) -> bool {
    matches!(event, Some(HostEvent::Planned { .. }))
}

fn applied(_: &App, event: Option<&HostEvent>) -> bool {
    matches!(event, Some(HostEvent::Applied { .. }))
}

/// `/save last`, until the host has planned the chat's note (the banner shows it).
fn save_last(live: &mut LiveHost, app: &mut App) {
    command(app, "/save last");
    assert!(live.pump_until(app, planned), "the host planned no note");
}

/// `y` on the banner, until the host has written the note.
fn accept(live: &mut LiveHost, app: &mut App) {
    press(app, KeyCode::Char('y'));
    assert!(live.pump_until(app, applied), "the note was not applied");
}

#[test]
fn save_shows_the_new_note_and_only_y_writes_it() {
    let mut live = LiveHost::new(&[("Welcome.md", "# Welcome\n")]);
    let session = store_session(&live);
    let mut app = app_with(Keymap::default_map());
    live.start(&mut app);
    command(&mut app, "/save");
    assert!(
        app.take_effects().is_empty(),
        "nothing to save before a turn"
    );
    app.info.session_id = Some(session.clone());
    command(&mut app, "/save everything");
    assert!(
        app.take_effects().is_empty(),
        "an unknown argument is said, not guessed"
    );

    save_last(&mut live, &mut app);
    // The session's id is new each run: the snapshot shows where it goes.
    let screen = draw(&mut app, 80, 24).replace(&session, "<session id>    ");
    insta::assert_snapshot!("save_chat_banner_80x24", screen);
    assert!(screen.contains(NOTE_PATH), "{screen}");
    // `n` asks for a reason (for the model, when the agent asked); Enter sends it empty.
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Enter);
    assert!(!app.banner.is_active(), "the answer closed the banner");
    assert!(
        app.take_effects().is_empty(),
        "a refused note asks nothing of the host"
    );
    assert!(!live.root.join("Chats").exists());

    save_last(&mut live, &mut app);
    accept(&mut live, &mut app);
    let written = fs::read_to_string(live.root.join(NOTE_PATH)).unwrap();
    assert!(
        written.contains("**You:** When do I plant tomatoes?"),
        "{written}"
    );
    assert!(written.contains("Plant them in May."), "{written}");
    assert!(
        written.contains(&format!("session: {session}")),
        "{written}"
    );
    let screen = draw(&mut app, 80, 24);
    assert!(
        screen.contains(&format!("chat saved as {NOTE_PATH}")),
        "{screen}"
    );

    // A second /save of the same session finds the next free name, never overwrites.
    save_last(&mut live, &mut app);
    accept(&mut live, &mut app);
    assert!(live.root.join("Chats/2026-12-01 Tomatoes 2.md").exists());
    assert_eq!(
        fs::read_to_string(live.root.join(NOTE_PATH)).unwrap(),
        written
    );
}
