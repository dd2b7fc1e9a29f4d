//! The tasks view through the whole loop a person sees, on a real workspace: the key lists the
//! vault's open tasks (due first), Enter opens the note with the cursor on the task's line, the
//! toggle key checks the task off through the host's save path and the list comes back without
//! it; a task whose line changed meanwhile is refused, and nothing is written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::host::HostEvent;
use crate::tui::app::{App, Pane};
use crate::tui::keymap::Keymap;
use crate::tui::testing::draw_app as draw;
use crate::tui::testing::{LiveHost, app_with};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use std::fs;

const TODO: &str = "# Todo\n\n- [ ] Water the plants\n- [x] Buy soil\n* [ ] Pay rent 📅 2026-12-01\n\n```\n- [ ] not a task\n```\n";
const LAUNCH: &str = "# Launch\n\n1. [/] Draft the budget [due:: 2026-11-28]\n> - [ ] Call the venue 📅 2026-12-04\n";

/// 2026-12-02 12:00 UTC: the budget is overdue, the rent too, the venue not yet.
const NOW_MS: i64 = 1_796_212_800_000;

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.on_terminal(Event::Key(KeyEvent::new(code, modifiers)));
}

fn listed(_: &App, event: Option<&HostEvent>) -> bool {
    matches!(event, Some(HostEvent::Tasks { .. }))
}

#[test]
fn the_tasks_view_opens_a_task_at_its_line_and_checks_it_off() {
    let _clock = crate::time::fix_now_ms(NOW_MS);
    let mut live = LiveHost::new(&[("Todo.md", TODO), ("Projects/Launch.md", LAUNCH)]);
    let root = live.root.clone();
    let mut app = app_with(Keymap::default_map());
    live.start(&mut app);
    let _ = app.take_effects();

    press(&mut app, KeyCode::F(8), KeyModifiers::NONE);
    assert!(live.pump_until(&mut app, listed), "no tasks came");
    insta::assert_snapshot!("app_tasks_80x24", draw(&mut app, 80, 24));
    let screen = draw(&mut app, 120, 40);
    insta::assert_snapshot!("app_tasks_120x40", screen);
    // Due first, soonest first; done tasks and the fenced look-alike are not listed.
    let order: Vec<usize> = [
        "Draft the budget",
        "Pay rent",
        "Call the venue",
        "Water the plants",
    ]
    .iter()
    .map(|t| {
        screen
            .find(t)
            .unwrap_or_else(|| panic!("{t} missing:\n{screen}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{screen}");
    assert!(
        !screen.contains("Buy soil") && !screen.contains("not a task"),
        "{screen}"
    );

    // Enter on the second row (Pay rent, Todo.md line 5) opens the note there.
    press(&mut app, KeyCode::Down, KeyModifiers::NONE);
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(live.pump_until(&mut app, |app, _| app.editor.path() == Some("Todo.md")));
    assert_eq!(app.focus(), Pane::Editor);
    assert_eq!(app.editor.cursor_line_col().0, 4, "0-based row of line 5");

    // Back in the view, Ctrl+L on the first open task of Todo.md (Water the plants, line 3).
    press(&mut app, KeyCode::F(8), KeyModifiers::NONE);
    assert!(live.pump_until(&mut app, listed));
    for _ in 0..3 {
        press(&mut app, KeyCode::Down, KeyModifiers::NONE);
    }
    press(&mut app, KeyCode::Char('l'), KeyModifiers::CONTROL);
    let mut toggled = false;
    assert!(live.pump_until(&mut app, |_, event| {
        toggled |= matches!(event, Some(HostEvent::TaskToggled { result: Ok(_), .. }));
        toggled && matches!(event, Some(HostEvent::Tasks { .. }))
    }));
    let written = TODO.replace("- [ ] Water the plants", "- [x] Water the plants");
    assert_eq!(fs::read_to_string(root.join("Todo.md")).unwrap(), written);
    // The open note follows the disk, and the list no longer has the task.
    assert_eq!(app.editor.text(), written);
    let screen = draw(&mut app, 120, 40);
    // (The editor behind shows the note, now `- [x] Water the plants`.)
    assert!(!screen.contains("[ ] Water the plants"), "{screen}");
    assert!(screen.contains("- [x] Water the plants"), "{screen}");
    assert!(screen.contains("Tasks · 3 open"), "{screen}");

    // A line that changed since the list was made: refused, nothing written.
    let moved = format!(
        "intro\n{}",
        fs::read_to_string(root.join("Projects/Launch.md")).unwrap()
    );
    fs::write(root.join("Projects/Launch.md"), &moved).unwrap();
    press(&mut app, KeyCode::Home, KeyModifiers::NONE);
    press(&mut app, KeyCode::Char('l'), KeyModifiers::CONTROL);
    let mut refusal = None;
    assert!(live.pump_until(&mut app, |_, event| {
        if let Some(HostEvent::TaskToggled { result: Err(e), .. }) = event {
            refusal = Some(e.clone());
        }
        refusal.is_some()
    }));
    assert!(refusal.unwrap().contains("list the tasks again"));
    assert_eq!(
        fs::read_to_string(root.join("Projects/Launch.md")).unwrap(),
        moved
    );
}

/// A line to open at belongs to the one opening it was asked for: when another note opens
/// instead (the person went elsewhere before the answer came), a later opening of the task's
/// note from anywhere else starts at its top, not at a line asked for long before.
#[test]
fn a_line_asked_for_is_forgotten_when_another_note_opens() {
    let mut app = app_with(Keymap::default_map());
    app.on_ready();
    press(&mut app, KeyCode::F(8), KeyModifiers::NONE);
    let _ = app.take_effects();
    app.on_host(HostEvent::Tasks {
        tasks: vec![crate::host::TaskEntry {
            path: "Todo.md".into(),
            line: 5,
            text: "Pay rent".into(),
            status: "open".into(),
            done: false,
            due: None,
        }],
        total: 1,
    });
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    let todo = "# Todo\n\n- [ ] Water\n\n- [ ] Pay rent\n";
    app.on_note_opened("Other.md", crate::tui::testing::note_text("# Other\n"));
    app.on_note_opened("Todo.md", crate::tui::testing::note_text(todo));
    assert_eq!(app.editor.cursor_line_col().0, 0);
}

/// A task checked off in the open note while the person has unsaved typing there: the note
/// changed on disk under their text, and that is what the status bar says (not only "toggled").
#[test]
fn a_task_toggled_under_unsaved_typing_says_the_note_changed() {
    let mut app = app_with(Keymap::default_map());
    app.on_ready();
    let todo = "# Todo\n\n- [ ] Water\n";
    app.on_note_opened("Todo.md", crate::tui::testing::note_text(todo));
    for c in "typed ".chars() {
        press(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    app.on_task_toggled(
        "Todo.md",
        Ok(crate::tui::testing::note_version(
            "# Todo\n\n- [x] Water\n",
            2,
        )),
    );
    let screen = draw(&mut app, 120, 40);
    assert!(
        screen.contains("changed on disk"),
        "the conflict is not said:\n{screen}"
    );
}
