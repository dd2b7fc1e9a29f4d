//! The move key of the file pane, through the whole loop a person sees: `m` asks for the new
//! path, the host plans the move on a real workspace, the banner shows every file it changes,
//! and only `y` moves the note and fixes the links on disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::host::{HostEvent, Request};
use crate::tui::app::{App, Effect};
use crate::tui::keymap::Keymap;
use crate::tui::testing::draw_app as draw;
use crate::tui::testing::{LiveHost, app_with, note_text, sample_notes};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use std::fs;

const PLANNER: &str =
    "# Garden Planner\n\nPlant the beds in spring; costs in [the budget](Budget.md).\n";
const WELCOME: &str =
    "# Welcome\n\nStart with [[Garden Planner]] or [[Garden Planner#Beds|the beds]].\n";
const BUDGET: &str = "# Budget\n\nSeeds for ![[Garden Planner]].\n";

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.on_terminal(Event::Key(KeyEvent::new(code, modifiers)));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

fn planned(_: &App, event: Option<&HostEvent>) -> bool {
    matches!(event, Some(HostEvent::Planned { .. }))
}

#[test]
fn m_asks_for_a_new_path_and_the_move_is_shown_then_applied() {
    let mut live = LiveHost::new(&[
        ("Projects/Garden Planner.md", PLANNER),
        ("Projects/Budget.md", BUDGET),
        ("Welcome.md", WELCOME),
    ]);
    let root = live.root.clone();
    let mut app = app_with(Keymap::default_map());
    live.start(&mut app);
    app.set_notes(sample_notes());
    app.on_note_opened("Projects/Garden Planner.md", note_text(PLANNER));
    let _ = app.take_effects();
    press(&mut app, KeyCode::Char('0'), KeyModifiers::ALT);
    press(&mut app, KeyCode::Char('m'), KeyModifiers::NONE);
    assert!(app.files.prompting());
    press(&mut app, KeyCode::Char('u'), KeyModifiers::CONTROL);
    type_text(&mut app, "Archive/Old garden");
    insta::assert_snapshot!("files_move_prompt_80x24", draw(&mut app, 80, 24));
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        live.pump_until(&mut app, planned),
        "the host planned no move"
    );
    let screen = draw(&mut app, 80, 24);
    insta::assert_snapshot!("files_move_banner_80x24", screen);
    assert!(screen.contains("■ Welcome.md"), "{screen}");
    assert!(
        fs::read_to_string(root.join("Welcome.md")).unwrap() == WELCOME,
        "nothing written yet"
    );

    press(&mut app, KeyCode::Char('y'), KeyModifiers::NONE);
    let mut changed = Vec::new();
    assert!(live.pump_until(&mut app, |_, event| match event {
        Some(HostEvent::Applied { result, .. }) => {
            changed = result.as_ref().unwrap().files_changed.clone();
            true
        }
        _ => false,
    }));
    assert_eq!(
        changed,
        ["Archive/Old garden.md", "Projects/Budget.md", "Welcome.md"]
    );
    assert_eq!(
        fs::read_to_string(root.join("Welcome.md")).unwrap(),
        "# Welcome\n\nStart with [[Old garden]] or [[Old garden#Beds|the beds]].\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("Projects/Budget.md")).unwrap(),
        "# Budget\n\nSeeds for ![[Old garden]].\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("Archive/Old garden.md")).unwrap(),
        "# Garden Planner\n\nPlant the beds in spring; costs in [the budget](../Projects/Budget.md).\n"
    );
    assert!(!root.join("Projects/Garden Planner.md").exists());
    // The list is reloaded and the moved note reopened at its new path.
    assert!(
        live.pump_until(&mut app, |app, _| app.editor.path()
            == Some("Archive/Old garden.md")),
        "the editor did not follow the move"
    );
    let screen = draw(&mut app, 80, 24);
    assert!(
        screen.contains("links fixed in 2 other notes")
            || screen.contains("opened Archive/Old garden.md"),
        "{screen}"
    );
}

#[test]
fn a_denied_move_writes_nothing() {
    let mut live = LiveHost::new(&[("A.md", "# A\n"), ("B.md", "[[A]]\n")]);
    let root = live.root.clone();
    let mut app = app_with(Keymap::default_map());
    live.start(&mut app);
    let entry = |path: &str| crate::tui::files::NoteEntry {
        path: path.into(),
        title: String::new(),
        aliases: Vec::new(),
        modified_ns: 1,
    };
    app.set_notes(vec![entry("A.md"), entry("B.md")]);
    app.on_note_opened("A.md", note_text("# A\n"));
    let _ = app.take_effects();
    press(&mut app, KeyCode::Char('0'), KeyModifiers::ALT);
    press(&mut app, KeyCode::Char('m'), KeyModifiers::NONE);
    press(&mut app, KeyCode::Char('u'), KeyModifiers::CONTROL);
    type_text(&mut app, "Z/A2");
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        live.pump_until(&mut app, planned),
        "the host planned no move"
    );
    assert!(app.banner.is_active());
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(app.take_effects().is_empty());
    assert_eq!(fs::read_to_string(root.join("B.md")).unwrap(), "[[A]]\n");
    assert!(root.join("A.md").exists() && !root.join("Z").exists());
}

#[test]
fn the_editor_follows_a_note_the_agent_moved() {
    use crate::agent::{AgentEvent, CallDecision, ToolCallRecord};
    let mut app = app_with(Keymap::default_map());
    app.set_notes(sample_notes());
    app.on_note_opened("Projects/Garden Planner.md", note_text(PLANNER));
    let _ = app.take_effects();
    let finished = |name: &str, is_error: bool| {
        AgentEvent::ToolCallFinished(ToolCallRecord {
            id: "call_1".into(),
            name: name.into(),
            input: serde_json::json!({"note": "Garden Planner", "to": "Archive/Old garden"}),
            is_error,
            decision: CallDecision::ApprovedOnce,
            result: serde_json::json!({
                "changed": true,
                "from": "Projects/Garden Planner.md",
                "path": "Archive/Old garden.md",
                "files_changed": ["Archive/Old garden.md", "Welcome.md"],
            })
            .to_string(),
        })
    };
    // A failed move, or another tool, changes nothing here.
    app.on_agent_event(finished("move_note", true));
    app.on_agent_event(finished("update_note", false));
    assert!(app.take_effects().is_empty());
    app.on_agent_event(finished("move_note", false));
    let effects = app.take_effects();
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Host(Request::ListFiles)))
            && effects
                .iter()
                .any(|e| matches!(e, Effect::OpenNote(p, _) if p == "Archive/Old garden.md")),
        "{effects:?}"
    );
}
