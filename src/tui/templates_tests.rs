//! Templates in the app (Alt+T): the host fills them for the note open when they are asked for,
//! and the text goes into that note only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::host::HostEvent;
use crate::tui::app::App;
use crate::tui::keymap::Keymap;
use crate::tui::testing::app_with;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.on_terminal(Event::Key(KeyEvent::new(code, modifiers)));
}

/// Templates are filled for the note open when they were asked for (`{{title}}` is its name):
/// when another note is open by the time one is chosen, nothing is inserted there.
#[test]
fn a_template_filled_for_one_note_is_not_inserted_into_another() {
    use crate::host::FilledTemplate;
    let mut app = app_with(Keymap::default_map());
    app.on_ready();
    app.on_note_opened("A.md", crate::tui::testing::note_text("# A\n"));
    press(&mut app, KeyCode::Char('t'), KeyModifiers::ALT);
    let _ = app.take_effects();
    app.on_note_opened("B.md", crate::tui::testing::note_text("# B\n"));
    let filled = |title: &str| FilledTemplate {
        path: "Templates/Meeting.md".into(),
        name: "Meeting".into(),
        text: format!("## Meeting about {title}\n"),
    };
    app.on_host(HostEvent::Templates(Ok(vec![filled("A")])));
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(app.editor.text(), "# B\n", "A's template went into B");
    // Asked again in B: inserted there.
    press(&mut app, KeyCode::Char('t'), KeyModifiers::ALT);
    app.on_host(HostEvent::Templates(Ok(vec![filled("B")])));
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        app.editor.text().contains("Meeting about B"),
        "{}",
        app.editor.text()
    );
}
