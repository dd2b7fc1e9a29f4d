//! The file pane as a person uses it: keys and clicks in, screens and effects out (whole app,
//! insta snapshots at 80×24 and 120×40), and the mouse on every pane.

use crate::tui::app::{App, Effect, Pane};
use crate::tui::files::{NoteEntry, RowKind};
use crate::tui::keymap::Keymap;
use crate::tui::testing::draw_app as draw;
use crate::tui::testing::{app_with, buffer, buffer_text, note_text, sample_notes, style_at};
use crate::tui::theme::Role;
use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

const PLANNER: &str = "# Garden Planner\n\nPlant the beds in spring.\n";

fn app() -> App {
    let mut app = app_with(Keymap::default_map());
    app.set_notes(sample_notes());
    app
}

fn press(app: &mut App, code: KeyCode) {
    press_with(app, code, KeyModifiers::NONE);
}

fn press_with(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.on_terminal(Event::Key(KeyEvent::new(code, modifiers)));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn mouse(app: &mut App, kind: MouseEventKind, column: u16, row: u16) {
    app.on_terminal(Event::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }));
}

fn click(app: &mut App, column: u16, row: u16) {
    mouse(app, MouseEventKind::Down(MouseButton::Left), column, row);
}

/// The screen position of the first occurrence of `needle`.
fn find(screen: &str, needle: &str) -> (u16, u16) {
    screen
        .lines()
        .enumerate()
        .find_map(|(y, line)| {
            line.find(needle)
                .map(|byte| (line[..byte].chars().count() as u16, y as u16))
        })
        .unwrap_or_else(|| panic!("{needle:?} is not on screen:\n{screen}"))
}

fn open(app: &mut App, path: &str, text: &str) {
    app.on_note_opened(path, note_text(text));
    let _ = app.take_effects();
}

fn both_sizes(name: &str, app: &mut App) {
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
    insta::assert_snapshot!(format!("{name}_120x40"), draw(app, 120, 40));
}

#[test]
fn the_start_screen_shows_the_vault() {
    let mut app = app();
    both_sizes("files_start_screen", &mut app);
    assert_eq!(app.focus(), Pane::Chat, "typing still goes to the chat");
    let screen = draw(&mut app, 80, 24);
    let (recent_x, recent_y) = find(&screen, "Recent");
    let (_, first_y) = find(&screen, "Garden Planner");
    assert!(recent_x < 28 && first_y == recent_y + 1, "{screen}");
}

#[test]
fn before_the_index_answers_the_pane_says_it_is_loading() {
    let mut app = app_with(Keymap::default_map());
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("Loading the vault…"), "{screen}");
    app.set_notes(vec![]);
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("No notes yet"), "{screen}");
    assert!(screen.contains("n creates one"), "{screen}");
}

#[test]
fn the_pane_beside_an_open_note() {
    let mut app = app();
    open(&mut app, "Projects/Garden Planner.md", PLANNER);
    // Below 140 columns an open note leaves the pane out until the person asks for it.
    assert!(draw(&mut app, 140, 40).contains(" Files "));
    assert!(!draw(&mut app, 120, 40).contains(" Files "));
    press_with(&mut app, KeyCode::Char('b'), KeyModifiers::ALT);
    assert_eq!(
        app.focus(),
        Pane::Files,
        "showing the pane gives it the keyboard"
    );
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.focus(), Pane::Editor, "Esc gives the keyboard back");
    both_sizes("files_beside_a_note", &mut app);
    // The toggle hides it again, at any width.
    press_with(&mut app, KeyCode::Char('b'), KeyModifiers::ALT);
    assert!(!draw(&mut app, 160, 40).contains(" Files "));
}

#[test]
fn the_pane_follows_the_active_note() {
    let mut app = app();
    open(&mut app, "Reading/Seeds.md", "# Seeds\n");
    let tree = app.files.tree();
    assert_eq!(tree.active(), Some("Reading/Seeds.md"));
    assert!(tree.is_expanded("Reading"), "its folder opens");
    assert!(!tree.is_expanded("Projects"));
    assert_eq!(
        tree.recent(1)[0].path,
        "Reading/Seeds.md",
        "opened: first in Recent"
    );
    assert_eq!(
        app.files.selected(),
        Some(RowKind::Note {
            path: "Reading/Seeds.md".into()
        })
    );
    press_with(&mut app, KeyCode::Char('0'), KeyModifiers::ALT);
    let mut buf = buffer(140, 40);
    app.render(buf.area, &mut buf);
    let screen = buffer_text(&buf);
    assert!(screen.contains("▾ Reading"), "{screen}");
    let active = style_at(&buf, "Seeds  Reading").expect("the note is in Recent");
    let other = style_at(&buf, "Welcome").expect("another note is listed");
    assert_eq!(active.fg, app.theme.style(Role::FilesActive).fg);
    assert_ne!(active.fg, other.fg);
}

#[test]
fn enter_opens_a_note_the_way_the_picker_does() {
    let mut app = app();
    // The picker's way: Enter on a match queues OpenNote with its path.
    app.show_picker_over(vec![NoteEntry {
        path: "Welcome.md".into(),
        title: "Welcome".into(),
        aliases: vec![],
        modified_ns: 0,
    }]);
    press(&mut app, KeyCode::Enter);
    let picker = app.take_effects();
    assert!(
        matches!(picker.as_slice(), [Effect::OpenNote(p, _)] if p == "Welcome.md"),
        "{picker:?}"
    );
    // The pane's way: Alt+0, Down past the newest note, Enter.
    press_with(&mut app, KeyCode::Char('0'), KeyModifiers::ALT);
    assert_eq!(app.focus(), Pane::Files);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    let pane = app.take_effects();
    assert!(
        matches!(pane.as_slice(), [Effect::OpenNote(p, _)] if p == "Journal/2026-11-30.md"),
        "{pane:?}"
    );
}

#[test]
fn folders_open_and_close_with_enter_and_the_arrows() {
    let mut app = app();
    press_with(&mut app, KeyCode::Char('0'), KeyModifiers::ALT);
    // Recent holds 5 notes; the tree starts with Areas, Inbox, Journal, Projects.
    for _ in 0..8 {
        press(&mut app, KeyCode::Down);
    }
    assert_eq!(
        app.files.selected(),
        Some(RowKind::Folder {
            path: "Projects".into(),
            expanded: false
        })
    );
    let closed = draw(&mut app, 80, 24);
    assert!(closed.contains("▸ Projects"), "{closed}");
    press(&mut app, KeyCode::Enter);
    let opened = draw(&mut app, 80, 24);
    assert!(opened.contains("▾ Projects"), "{opened}");
    assert!(opened.contains("     Vaultchat Launch"), "{opened}");
    assert!(app.take_effects().is_empty(), "a folder opens nothing");
    press(&mut app, KeyCode::Left);
    assert!(draw(&mut app, 80, 24).contains("▸ Projects"));
    press(&mut app, KeyCode::Right);
    assert!(app.files.tree().is_expanded("Projects"));
    // → on an open folder steps into it, ← on a note goes back to its folder.
    press(&mut app, KeyCode::Right);
    assert_eq!(
        app.files.selected(),
        Some(RowKind::Note {
            path: "Projects/Garden Planner.md".into()
        })
    );
    press(&mut app, KeyCode::Left);
    assert!(matches!(
        app.files.selected(),
        Some(RowKind::Folder { path, .. }) if path == "Projects"
    ));
}

#[test]
fn n_asks_for_a_name_in_the_selected_folder_and_creates_through_an_effect() {
    let mut app = app();
    open(&mut app, "Projects/Garden Planner.md", PLANNER);
    press_with(&mut app, KeyCode::Char('0'), KeyModifiers::ALT);
    press(&mut app, KeyCode::Char('n'));
    assert!(app.files.prompting());
    type_text(&mut app, "Compost");
    both_sizes("files_new_note_prompt", &mut app);
    press(&mut app, KeyCode::Enter);
    let effects = app.take_effects();
    assert!(
        matches!(effects.as_slice(), [Effect::Host(crate::host::Request::PlanChange(crate::host::ChangeRequest::Create { name }))] if name == "Projects/Compost"),
        "{effects:?}"
    );
    assert!(!app.files.prompting());
    // The runner created it: it is listed at once and opened the way every note is opened.
    app.on_note_created("Projects/Compost.md", 500);
    let effects = app.take_effects();
    assert!(
        matches!(effects.as_slice(), [Effect::OpenNote(p, _)] if p == "Projects/Compost.md"),
        "{effects:?}"
    );
    assert!(app.files.tree().note("Projects/Compost.md").is_some());

    // Esc leaves the prompt without creating anything; letters bound in the pane are typed,
    // and global keys still work.
    press(&mut app, KeyCode::Char('n'));
    type_text(&mut app, "nn");
    press_with(&mut app, KeyCode::Char('p'), KeyModifiers::CONTROL);
    assert!(app.take_effects().is_empty());
    assert!(app.picker_open(), "Ctrl+P opened the picker");
    press(&mut app, KeyCode::Esc);
    assert!(
        !app.picker_open() && app.files.prompting(),
        "Esc closed the picker first"
    );
    press(&mut app, KeyCode::Esc);
    assert!(!app.files.prompting());
    assert!(app.take_effects().is_empty());
    assert_eq!(app.focus(), Pane::Files, "Esc closed only the prompt");
}

#[test]
fn the_vim_map_moves_with_j_k_and_opens_folders_with_l_h() {
    let (keymap, errors) = Keymap::load("vim", None);
    assert!(errors.is_empty(), "{errors:?}");
    let mut app = app_with(keymap);
    app.set_notes(sample_notes());
    press_with(&mut app, KeyCode::Char('0'), KeyModifiers::ALT);
    press(&mut app, KeyCode::Char('G'));
    assert!(matches!(
        app.files.selected(),
        Some(RowKind::Note { path }) if path == "Welcome.md"
    ));
    press(&mut app, KeyCode::Char('k'));
    assert!(matches!(
        app.files.selected(),
        Some(RowKind::Folder { path, .. }) if path == "Reading"
    ));
    press(&mut app, KeyCode::Char('l'));
    assert!(app.files.tree().is_expanded("Reading"));
    press(&mut app, KeyCode::Char('h'));
    assert!(!app.files.tree().is_expanded("Reading"));
    press(&mut app, KeyCode::Char('j'));
    assert!(matches!(
        app.files.selected(),
        Some(RowKind::Note { path }) if path == "Welcome.md"
    ));
}

#[test]
fn focus_next_skips_the_editor_on_the_start_screen() {
    let mut app = app();
    let _ = draw(&mut app, 80, 24);
    for expected in [Pane::Files, Pane::Chat] {
        press_with(&mut app, KeyCode::Char('o'), KeyModifiers::CONTROL);
        let _ = draw(&mut app, 80, 24);
        assert_eq!(app.focus(), expected);
    }
}

#[test]
fn focus_next_walks_the_panes_left_to_right() {
    let mut app = app();
    open(&mut app, "Welcome.md", "# Welcome\n");
    let _ = draw(&mut app, 160, 40);
    assert_eq!(app.focus(), Pane::Editor);
    for expected in [Pane::Chat, Pane::Files, Pane::Editor] {
        press_with(&mut app, KeyCode::Char('o'), KeyModifiers::CONTROL);
        let _ = draw(&mut app, 160, 40);
        assert_eq!(app.focus(), expected);
    }
}

// ---- the mouse -------------------------------------------------------------------------

#[test]
fn a_click_on_a_note_in_the_pane_opens_it_and_a_click_on_a_folder_opens_the_folder() {
    let mut app = app();
    let screen = draw(&mut app, 120, 40);
    let (x, y) = find(&screen, "▸ Inbox");
    click(&mut app, x + 2, y);
    assert_eq!(app.focus(), Pane::Files);
    assert!(app.files.tree().is_expanded("Inbox"));
    assert!(app.take_effects().is_empty());
    let screen = draw(&mut app, 120, 40);
    let (x, y) = find(&screen, "     Ideas");
    click(&mut app, x + 6, y);
    let effects = app.take_effects();
    assert!(
        matches!(effects.as_slice(), [Effect::OpenNote(p, _)] if p == "Inbox/Ideas.md"),
        "{effects:?}"
    );
}

#[test]
fn a_click_in_the_editor_focuses_it_and_places_the_cursor() {
    let mut app = app();
    open(&mut app, "Projects/Garden Planner.md", PLANNER);
    let _ = draw(&mut app, 120, 40);
    click(&mut app, 100, 10);
    assert_eq!(
        app.focus(),
        Pane::Chat,
        "a click in the chat focuses the chat"
    );
    let screen = draw(&mut app, 120, 40);
    let (x, y) = find(&screen, "beds in spring");
    click(&mut app, x, y);
    assert_eq!(app.focus(), Pane::Editor);
    assert_eq!(app.editor.cursor_line_col(), (2, "Plant the ".len()));
    // The click is where typing goes.
    type_text(&mut app, "raised ");
    assert!(app.editor.text().contains("Plant the raised beds"));
}

#[test]
fn a_drag_in_the_editor_selects_and_ctrl_c_copies_it() {
    let mut app = app();
    open(&mut app, "Projects/Garden Planner.md", PLANNER);
    let screen = draw(&mut app, 120, 40);
    let (x, y) = find(&screen, "beds in spring");
    click(&mut app, x, y);
    mouse(&mut app, MouseEventKind::Drag(MouseButton::Left), x + 4, y);
    assert_eq!(app.editor.selected_text().as_deref(), Some("beds"));
    press_with(&mut app, KeyCode::Char('c'), KeyModifiers::CONTROL);
    let effects = app.take_effects();
    assert!(
        matches!(effects.as_slice(), [Effect::Copy(text)] if text == "beds"),
        "{effects:?}"
    );
    // A new click drops the selection.
    click(&mut app, x, y);
    assert_eq!(app.editor.selected_text(), None);
}

#[test]
fn the_wheel_scrolls_the_pane_under_the_pointer() {
    let mut app = app();
    let long: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    open(&mut app, "Welcome.md", &long);
    for n in 0..60 {
        app.transcript.push_system(&format!("message {n}"));
    }
    let before = draw(&mut app, 120, 40);
    assert!(before.contains("  1 line 1 "), "{before}");
    assert!(before.contains("message 59"), "{before}");

    // Over the editor: the editor scrolls, the chat stays.
    mouse(&mut app, MouseEventKind::ScrollDown, 10, 10);
    let after = draw(&mut app, 120, 40);
    assert!(!after.contains("  1 line 1 "), "{after}");
    assert!(after.contains("  4 line 4 "), "{after}");
    assert!(after.contains("message 59"), "{after}");
    assert_eq!(
        app.focus(),
        Pane::Editor,
        "the wheel does not move the focus"
    );

    // Over the chat: the transcript scrolls back.
    mouse(&mut app, MouseEventKind::ScrollUp, 100, 10);
    let after = draw(&mut app, 120, 40);
    assert!(!after.contains("message 59"), "{after}");
    assert!(after.contains("  4 line 4 "), "{after}");

    // Over the file pane (shown): its list scrolls.
    press_with(&mut app, KeyCode::Char('b'), KeyModifiers::ALT);
    app.files.set_notes(
        (0..60)
            .map(|n| crate::tui::files::NoteEntry {
                path: format!("note {n:02}.md"),
                title: String::new(),
                aliases: vec![],
                modified_ns: n,
            })
            .collect(),
    );
    let before = draw(&mut app, 120, 40);
    assert!(before.contains(" Recent"), "{before}");
    mouse(&mut app, MouseEventKind::ScrollDown, 5, 10);
    let after = draw(&mut app, 120, 40);
    assert!(!after.contains(" Recent"), "{after}");
    assert!(
        after.contains("  4 line 4 "),
        "the editor did not move: {after}"
    );
}

#[test]
fn the_mouse_does_nothing_under_an_overlay() {
    let mut app = app();
    open(&mut app, "Welcome.md", "# Welcome\n");
    app.show_picker_over(vec![]);
    let screen = draw(&mut app, 120, 40);
    let _ = screen;
    click(&mut app, 100, 5);
    assert_eq!(app.focus(), Pane::Editor);
}

#[test]
fn the_config_can_start_the_pane_shown_or_hidden() {
    let parse = |text: &str| {
        crate::config::Config::parse(text, std::path::Path::new("config.toml"))
            .map(|c| c.ui.file_pane.unwrap_or_default())
    };
    assert_eq!(parse("").ok(), Some(crate::config::FilePaneMode::Auto));
    let hide = parse("[ui]\nfile_pane = \"hide\"\n").unwrap();
    let mut app = app();
    app.set_file_pane(hide);
    assert!(
        !draw(&mut app, 120, 40).contains(" Files "),
        "hidden on the start screen too"
    );
    let show = parse("[ui]\nfile_pane = \"show\"\n").unwrap();
    app.set_file_pane(show);
    open(&mut app, "Welcome.md", "# Welcome\n");
    assert!(
        draw(&mut app, 80, 24).contains(" Files "),
        "shown beside a note at 80 columns"
    );
    let error = parse("[ui]\nfile_pane = \"sometimes\"\n")
        .unwrap_err()
        .to_string();
    assert!(error.contains("ui.file_pane"), "{error}");
}

#[test]
fn every_size_draws_the_pane_the_prompt_and_the_list_without_panicking() {
    let sizes = [
        (1, 1),
        (3, 2),
        (10, 3),
        (30, 5),
        (56, 8),
        (57, 4),
        (80, 24),
        (300, 100),
    ];
    let mut app = app();
    for (w, h) in sizes {
        let _ = draw(&mut app, w, h);
    }
    press_with(&mut app, KeyCode::Char('0'), KeyModifiers::ALT);
    press(&mut app, KeyCode::Char('n'));
    type_text(
        &mut app,
        "a very long name for a note in a folder/that goes on and on",
    );
    for (w, h) in sizes {
        let _ = draw(&mut app, w, h);
    }
    press(&mut app, KeyCode::Esc);
    open(&mut app, "Welcome.md", "# Welcome\n\n");
    type_text(&mut app, "[[");
    for (w, h) in sizes {
        let _ = draw(&mut app, w, h);
    }
    assert!(app.completion_open());
}

/// Three copies of a tree, each with a README, touched last: "Recent" shows three `README`s.
fn namesake_app() -> App {
    let mut app = app_with(Keymap::default_map());
    let mut notes = Vec::new();
    for (n, copy) in ["tldr", "tldr-mirror", "tldr-old"].iter().enumerate() {
        for (path, modified_ns) in [
            (format!("{copy}/pages/README.md"), 100 + n as i64),
            (format!("{copy}/pages/linux/tar.md"), 50 + n as i64),
        ] {
            notes.push(NoteEntry {
                path,
                title: String::new(),
                aliases: vec![],
                modified_ns,
            });
        }
    }
    notes.push(NoteEntry {
        path: "Projects/a very long folder name/Plan.md".into(),
        title: String::new(),
        aliases: vec![],
        modified_ns: 200,
    });
    app.set_notes(notes);
    app
}

#[test]
fn recent_notes_of_the_same_name_show_the_folders_that_tell_them_apart() {
    let mut app = namesake_app();
    let screen = draw(&mut app, 80, 24);
    // Two fit whole; the longer one is cut to what tells it apart.
    for folder in ["tldr/pages", "tldr-mirror/…", "tldr-old/pages"] {
        assert!(
            screen.contains(&format!("README  {folder} ")),
            "{folder}:\n{screen}"
        );
    }
    // A name no other recent note has shows its folder only whole, never cut.
    assert!(screen.contains(" Plan "), "{screen}");
    assert!(!screen.contains("Plan  Projects"), "{screen}");
    both_sizes("files_recent_namesakes", &mut app);
}

#[test]
fn folder_labels_tell_namesakes_apart_or_say_nothing() {
    use super::folder_label;
    let copies = ["tldr-mirror/pages/linux", "tldr-old/pages/linux"];
    assert_eq!(
        folder_label("tldr/pages/linux", 30, &copies).as_deref(),
        Some("tldr/pages/linux"),
        "whole when it fits"
    );
    assert_eq!(
        folder_label("tldr/pages/linux", 12, &copies).as_deref(),
        Some("tldr/…/linux")
    );
    assert_eq!(
        folder_label("tldr/pages/linux", 7, &copies).as_deref(),
        Some("tldr/…")
    );
    // Trees that differ in their last folder: the last is what tells them apart.
    let platforms = ["notes/pages/osx", "notes/pages/windows"];
    assert_eq!(
        folder_label("notes/pages/linux", 9, &platforms).as_deref(),
        Some("…/linux")
    );
    assert_eq!(
        folder_label("notes/pages/linux", 9, &[]),
        None,
        "no namesake"
    );
    assert_eq!(folder_label("", 30, &copies), None, "the vault's top");
    assert_eq!(folder_label("a/b", 2, &["c/b"]).as_deref(), Some("a"));
    assert_eq!(
        folder_label("x/a/b", 3, &["x/c/b"]),
        None,
        "nothing fits that tells them apart"
    );
}

#[test]
fn the_picker_reads_the_panes_listing_and_lets_go_of_it_when_closed() {
    let mut app = app();
    let listing = app.files.tree().table();
    let held = std::sync::Arc::strong_count(&listing);
    press_with(&mut app, KeyCode::Char('p'), KeyModifiers::CONTROL);
    assert!(app.picker_open());
    assert_eq!(
        std::sync::Arc::strong_count(&listing),
        held + 1,
        "the picker holds the same listing, not a copy"
    );
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("7 of 7"), "{screen}");
    type_text(&mut app, "seeds");
    assert!(draw(&mut app, 80, 24).contains("1 of 7"));
    press(&mut app, KeyCode::Esc);
    assert!(!app.picker_open());
    assert_eq!(
        std::sync::Arc::strong_count(&listing),
        held,
        "freed on close"
    );
}

#[test]
fn a_picker_opened_before_the_listing_fills_in_when_it_arrives() {
    let mut app = app_with(Keymap::default_map());
    press_with(&mut app, KeyCode::Char('p'), KeyModifiers::CONTROL);
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("Listing the vault's notes…"), "{screen}");
    type_text(&mut app, "garden");
    app.set_notes(sample_notes());
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("Garden Planner"), "{screen}");
    assert!(screen.contains("1 of 7"), "{screen}");
}
