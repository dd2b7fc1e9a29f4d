//! The file pane end to end in a real terminal (tmux): the start screen lists the vault, a note
//! opens from the pane with the keyboard and is shown in the editor, and a note created from the
//! pane is on disk (empty, never over an existing file) and takes what is typed and saved; the
//! mouse (clicks sent as the terminal reports them) opens a note and places the cursor.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::FakeLlm;
use common::tmux::{Tmux, app_line};

const PLAN: &str = "# Garden plan\n\nPlant tomatoes in May.\n";
const IDEAS: &str = "# Ideas\n\nA herb spiral by the shed.\n";

#[test]
fn a_note_opens_from_the_file_pane_and_a_new_one_is_created_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(vault.join("Projects/Plan.md"), PLAN).unwrap();
    std::fs::write(vault.join("Ideas.md"), IDEAS).unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 100, 30);

    // The start screen lists the vault once it is indexed: folders closed, notes by name.
    let screen = tmux.wait_for("the file pane with the vault's notes", |s| {
        s.contains(" Files ") && s.contains("▸ Projects") && s.contains("Recent")
    });
    assert!(screen.lines().any(|l| l.starts_with(" ready ")), "{screen}");

    // Alt+0 gives the pane the keyboard; End selects the last row (Ideas, at the top level),
    // Up the Projects folder; → opens it, Down selects Plan, Enter opens it.
    tmux.keys(&["M-0"]);
    tmux.keys(&["End", "Up", "Right"]);
    tmux.wait_text("▾ Projects");
    tmux.keys(&["Down", "Enter"]);
    let screen = tmux.wait_text("Plant tomatoes in May.");
    assert!(screen.contains("Projects/Plan.md"), "{screen}");
    assert!(
        screen.contains("Ln 1/3"),
        "the editor shows the note: {screen}"
    );

    // n asks for a name (in the selected note's folder), Enter creates and opens the note.
    tmux.keys(&["M-0", "n"]);
    tmux.wait_text("New note");
    tmux.type_text("Compost");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the new note in the editor", |s| {
        s.contains("╭ Projects/Compost.md")
    });
    let created = vault.join("Projects/Compost.md");
    assert_eq!(std::fs::read(&created).unwrap(), b"", "a new note is empty");
    tmux.type_text("Turn it weekly.");
    tmux.keys(&["C-s"]);
    tmux.wait_text("saved Projects/Compost.md");
    assert_eq!(std::fs::read(&created).unwrap(), b"Turn it weekly.");

    // A name that exists is refused, and the note on disk is left as it is.
    tmux.keys(&["M-0", "n"]);
    tmux.wait_text("New note");
    tmux.keys(&["C-u"]);
    tmux.type_text("Ideas");
    tmux.keys(&["Enter"]);
    tmux.wait_text("already exists");
    assert_eq!(
        std::fs::read(vault.join("Ideas.md")).unwrap(),
        IDEAS.as_bytes()
    );
    assert_eq!(
        std::fs::read(vault.join("Projects/Plan.md")).unwrap(),
        PLAN.as_bytes()
    );

    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=0");
}

/// Where `needle` first shows on `screen`, as the 1-based (column, row) a terminal reports.
fn cell_of(screen: &str, needle: &str) -> (usize, usize) {
    screen
        .lines()
        .enumerate()
        .find_map(|(y, line)| {
            line.find(needle)
                .map(|byte| (line[..byte].chars().count() + 1, y + 1))
        })
        .unwrap_or_else(|| panic!("{needle:?} is not on screen:\n{screen}"))
}

/// A left click at 1-based (`column`, `row`), as the terminal reports it (SGR mouse mode).
fn click(tmux: &Tmux, (column, row): (usize, usize)) {
    tmux.type_text(&format!("\x1b[<0;{column};{row}M\x1b[<0;{column};{row}m"));
}

#[test]
fn a_click_opens_a_note_from_the_pane_and_a_click_in_the_editor_is_where_typing_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Ideas.md"), IDEAS).unwrap();
    std::fs::write(vault.join("Plan.md"), PLAN).unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 100, 30);

    let screen = tmux.wait_for("the notes in the file pane", |s| {
        s.contains("Notes") && s.contains("   Plan")
    });
    // The tree's row (the second "Plan" on screen; the first is under Recent).
    let notes_row = cell_of(&screen, " Notes").1;
    let plan = screen
        .lines()
        .enumerate()
        .skip(notes_row)
        .find_map(|(y, line)| {
            line.find("   Plan")
                .map(|b| (line[..b].chars().count() + 4, y + 1))
        })
        .unwrap();
    click(&tmux, plan);
    let screen = tmux.wait_text("Plant tomatoes in May.");
    assert!(screen.contains("╭ Plan.md"), "{screen}");

    // A click before "tomatoes" puts the cursor there.
    let at = cell_of(&screen, "tomatoes in May.");
    click(&tmux, at);
    tmux.type_text("red ");
    tmux.wait_text("Plant red tomatoes");
    tmux.keys(&["C-s"]);
    tmux.wait_text("saved Plan.md");
    assert_eq!(
        std::fs::read_to_string(vault.join("Plan.md")).unwrap(),
        "# Garden plan\n\nPlant red tomatoes in May.\n"
    );
    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=0");
}
