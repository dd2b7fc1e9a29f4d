//! The file pane end to end in a real terminal (tmux): the start screen lists the vault, a note
//! opens from the pane with the keyboard and is shown in the editor, and a note created from the
//! pane is on disk (empty, never over an existing file) and takes what is typed and saved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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
