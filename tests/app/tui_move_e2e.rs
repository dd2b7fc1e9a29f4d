//! Moving a note from the file pane in a real terminal (tmux): `m` asks for the new path, the
//! banner shows the move with every file whose links change, `y` moves the note and rewrites the
//! links on disk, and the editor follows the note to its new path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::FakeLlm;
use common::tmux::{Tmux, app_line};

const PLAN: &str = "# Garden plan\n\nPlant tomatoes in May.\n";
const IDEAS: &str = "# Ideas\n\nA herb spiral, see [[Plan#Beds|the beds]] and [[Plan]].\n";
const ALONE: &str = "# Alone\n\nNo links.\n";

#[test]
fn m_in_the_file_pane_moves_a_note_and_its_links_follow() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(vault.join("Projects/Plan.md"), PLAN).unwrap();
    std::fs::write(vault.join("Ideas.md"), IDEAS).unwrap();
    std::fs::write(vault.join("Alone.md"), ALONE).unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 100, 30);
    tmux.wait_for("the file pane with the vault's notes", |s| {
        s.contains(" Files ") && s.contains("▸ Projects")
    });

    // Open Projects/Plan.md from the pane: End selects the last row (Ideas), Up Alone, Up the
    // folder.
    tmux.keys(&["M-0"]);
    tmux.keys(&["End", "Up", "Up", "Right"]);
    tmux.wait_text("▾ Projects");
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_text("Plant tomatoes in May.");

    // m asks for the new path, starting from the current one.
    tmux.keys(&["M-0", "m"]);
    tmux.wait_text("Move to");
    tmux.keys(&["C-u"]);
    tmux.type_text("Archive/Old plan");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the move in the banner", |s| {
        s.contains("Allow move_note?") && s.contains("■ Ideas.md")
    });
    assert!(
        screen.contains("Projects/Plan.md → Archive/Old plan.md"),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("Ideas.md")).unwrap(),
        IDEAS
    );

    tmux.keys(&["y"]);
    tmux.wait_for("the editor on the note at its new path", |s| {
        s.contains("╭ Archive/Old plan.md")
    });
    assert!(!vault.join("Projects/Plan.md").exists());
    assert_eq!(
        std::fs::read_to_string(vault.join("Archive/Old plan.md")).unwrap(),
        PLAN
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("Ideas.md")).unwrap(),
        "# Ideas\n\nA herb spiral, see [[Old plan#Beds|the beds]] and [[Old plan]].\n"
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("Alone.md")).unwrap(),
        ALONE
    );

    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=0");
}
