//! The `[[` completion list as a person uses it, in the editor and in the chat input: keys in,
//! screens (insta, 80×24 and 120×40) and text out.

use crate::tui::app::{App, Pane};
use crate::tui::keymap::Keymap;
use crate::tui::testing::draw_app as draw;
use crate::tui::testing::{app_with, buffer, note_text, sample_notes};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

const NOTE: &str = "# Garden plan\n\nSow the beans.\n";

fn app() -> App {
    let mut app = app_with(Keymap::default_map());
    app.set_notes(sample_notes());
    app
}

fn editor_app() -> App {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note_text(NOTE));
    let _ = app.take_effects();
    // The cursor to the end of "Sow the beans."
    for _ in 0..2 {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::End);
    app
}

fn press(app: &mut App, code: KeyCode) {
    app.on_terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn both_sizes(name: &str, app: &mut App) {
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
    insta::assert_snapshot!(format!("{name}_120x40"), draw(app, 120, 40));
}

fn list_open(app: &mut App) -> bool {
    let _ = draw(app, 120, 40);
    app.completion_open()
}

#[test]
fn typing_double_brackets_in_the_editor_lists_notes_and_enter_inserts_the_link() {
    let mut app = editor_app();
    type_text(&mut app, " See [");
    assert!(!list_open(&mut app), "one bracket is not a link yet");
    type_text(&mut app, "[");
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains("Link to a note"), "{screen}");
    type_text(&mut app, "gard");
    both_sizes("completion_in_the_editor", &mut app);
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.editor.text(),
        "# Garden plan\n\nSow the beans. See [[Garden Planner]]\n"
    );
    assert!(!list_open(&mut app));
    // The insertion is one undo step: undo brings back what was typed, redo the link.
    app.editor.handle(crate::tui::keymap::Action::Undo);
    assert_eq!(
        app.editor.text(),
        "# Garden plan\n\nSow the beans. See [[gard\n"
    );
    app.editor.handle(crate::tui::keymap::Action::Redo);
    assert!(app.editor.text().contains("See [[Garden Planner]]\n"));
    // Typing goes on after the link.
    type_text(&mut app, " now");
    assert!(app.editor.text().contains("[[Garden Planner]] now"));
}

#[test]
fn up_down_choose_tab_accepts_and_an_alias_links_by_name() {
    let mut app = editor_app();
    type_text(&mut app, " [[seed");
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains("Seeds"), "{screen}");
    press(&mut app, KeyCode::Tab);
    assert!(
        app.editor.text().contains(" [[Seeds]]"),
        "{}",
        app.editor.text()
    );

    type_text(&mut app, " [[veg");
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains("veg beds"), "{screen}");
    press(&mut app, KeyCode::Enter);
    assert!(
        app.editor.text().contains(" [[Garden Planner|veg beds]]"),
        "{}",
        app.editor.text()
    );

    // With nothing typed the recent notes come first; Down picks the second.
    type_text(&mut app, " [[");
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert!(
        app.editor.text().ends_with(" [[2026-11-30]]\n"),
        "{}",
        app.editor.text()
    );
}

#[test]
fn esc_closes_the_list_and_keeps_the_text_and_leaving_the_link_closes_it() {
    let mut app = editor_app();
    type_text(&mut app, " [[wel");
    assert!(list_open(&mut app));
    press(&mut app, KeyCode::Esc);
    assert!(!list_open(&mut app));
    assert!(app.editor.text().contains(" [[wel\n"));
    assert_eq!(app.focus(), Pane::Editor);
    // Typing the closing bracket by hand ends the link.
    type_text(&mut app, " [[wel");
    assert!(list_open(&mut app));
    type_text(&mut app, "]");
    assert!(!list_open(&mut app));
    // Moving before the [[ ends it too.
    type_text(&mut app, " [[a");
    assert!(list_open(&mut app));
    for _ in 0..3 {
        press(&mut app, KeyCode::Left);
    }
    assert!(!list_open(&mut app));
}

#[test]
fn typing_double_brackets_in_the_chat_lists_notes_above_the_message_box() {
    let mut app = app();
    assert_eq!(app.focus(), Pane::Chat);
    type_text(&mut app, "What does [[lau");
    both_sizes("completion_in_the_chat", &mut app);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.input.text(), "What does [[Vaultchat Launch]]");
    type_text(&mut app, " say?");
    assert_eq!(app.input.text(), "What does [[Vaultchat Launch]] say?");
}

#[test]
fn an_existing_closing_pair_is_not_doubled() {
    let mut app = app();
    type_text(&mut app, "[[]]");
    press(&mut app, KeyCode::Left);
    press(&mut app, KeyCode::Left);
    // The list opens only when the second [ is typed, not when the cursor passes one.
    assert!(!list_open(&mut app));
    press(&mut app, KeyCode::Backspace);
    type_text(&mut app, "[wel");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.input.text(), "[[Welcome]]");
    assert!(
        app.take_effects().is_empty(),
        "Enter accepted; it did not send"
    );
}

#[test]
fn with_no_match_enter_is_a_new_line_again() {
    let mut app = editor_app();
    type_text(&mut app, " [[zzzz");
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("No note matches"), "{screen}");
    press(&mut app, KeyCode::Enter);
    assert!(!list_open(&mut app));
    assert_eq!(
        app.editor.text(),
        "# Garden plan\n\nSow the beans. [[zzzz\n\n"
    );
}

#[test]
fn a_click_on_a_row_accepts_it_and_a_click_elsewhere_closes_the_list() {
    let mut app = editor_app();
    type_text(&mut app, " [[");
    let screen = draw(&mut app, 120, 40);
    let (x, y) = screen
        .lines()
        .enumerate()
        .find_map(|(y, line)| {
            line.find("Ideas")
                .map(|b| (line[..b].chars().count() as u16, y as u16))
        })
        .expect("Ideas is listed");
    app.on_terminal(Event::Mouse(crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }));
    assert!(
        app.editor.text().contains("Sow the beans. [[Ideas]]"),
        "{}",
        app.editor.text()
    );
    assert!(!list_open(&mut app));

    type_text(&mut app, " [[");
    assert!(list_open(&mut app));
    app.on_terminal(Event::Mouse(crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: 100,
        row: 5,
        modifiers: KeyModifiers::NONE,
    }));
    assert!(!list_open(&mut app));
    assert_eq!(app.focus(), Pane::Chat);
}

#[test]
fn the_typed_letters_are_lit_in_the_list() {
    let mut app = editor_app();
    type_text(&mut app, " [[gard");
    let mut buf = buffer(120, 40);
    app.render(buf.area, &mut buf);
    let lit = crate::tui::testing::style_at_offset(&buf, "Garden Planner  Projects", 0)
        .expect("the row is shown");
    let plain = crate::tui::testing::style_at_offset(&buf, "Garden Planner  Projects", 7)
        .expect("the row is shown");
    let matched = app.theme.style(crate::tui::theme::Role::PickerMatch);
    assert_eq!(lit.fg, matched.fg, "G of gard is lit");
    assert_ne!(plain.fg, matched.fg, "P is not");
}
