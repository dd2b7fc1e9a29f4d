//! `/save` through the loop a person sees: the command asks the runner for the chat's note, the
//! banner shows it as a new file under Chats/, `n` writes nothing and `y` applies it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::config::{Config, Paths};
use crate::store::Actor;
use crate::tools::workspace::Workspace;
use crate::tui::app::{App, Effect};
use crate::tui::keymap::Keymap;
use crate::tui::testing::app_with;
use crate::tui::testing::draw_app as draw;
use crate::vault::Vault;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use std::fs;

const NOTE: &str = "---\ntitle: \"Tomatoes\"\ndate: 2026-12-01\nsession: 0123abcd\ntags: [vaultchat]\n---\n\n# Tomatoes\n\n**You:** When do I plant tomatoes?\n\n> `read_note` [[Projects/Plan]]\n\nPlant them in May.\n\n## Notes in this chat\n\n- Read: [[Projects/Plan]]\n";

fn press(app: &mut App, code: KeyCode) {
    app.on_terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn command(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter);
}

#[test]
fn save_shows_the_new_note_and_only_y_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("vault");
    fs::create_dir_all(&root).unwrap();
    let ws = Workspace::open(
        Vault::open(&root).unwrap(),
        &Paths::under(&tmp.path().join("data")),
        &Config::default(),
        Actor::User,
    )
    .unwrap();
    let mut app = app_with(Keymap::default_map());
    command(&mut app, "/save");
    assert!(
        app.take_effects().is_empty(),
        "nothing to save before a turn"
    );
    app.info.session_id = Some("0123abcd".into());
    command(&mut app, "/save everything");
    assert!(
        app.take_effects().is_empty(),
        "an unknown argument is said, not guessed"
    );
    command(&mut app, "/save last");
    let effects = app.take_effects();
    let [
        Effect::PlanChatNote {
            session,
            last: true,
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}");
    };
    assert_eq!(session, "0123abcd");

    // The runner's part: the note planned on the workspace, shown in the banner.
    let plan = || {
        ws.plan_user_create("Chats/2026-12-01 Tomatoes.md", NOTE.into())
            .unwrap()
    };
    app.propose_chat_note(plan());
    let screen = draw(&mut app, 80, 24);
    insta::assert_snapshot!("save_chat_banner_80x24", screen);
    assert!(screen.contains("Chats/2026-12-01 Tomatoes.md"), "{screen}");
    // `n` asks for a reason (for the model, when the agent asked); Enter sends it empty.
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Enter);
    assert!(!app.banner.is_active(), "the answer closed the banner");
    assert!(app.take_effects().is_empty());
    assert!(!root.join("Chats").exists());

    app.propose_chat_note(plan());
    press(&mut app, KeyCode::Char('y'));
    let effects = app.take_effects();
    let [Effect::ApplyChatNote(plan, hunks)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    ws.apply(plan, hunks.as_deref()).unwrap();
    assert_eq!(
        fs::read_to_string(root.join("Chats/2026-12-01 Tomatoes.md")).unwrap(),
        NOTE
    );
    app.on_chat_saved(Ok("Chats/2026-12-01 Tomatoes.md".into()));
    let screen = draw(&mut app, 80, 24);
    assert!(
        screen.contains("chat saved as Chats/2026-12-01 Tomatoes.md"),
        "{screen}"
    );
}
