//! The graph in the app, in a real terminal (tmux) through the real binary: F7 lists the notes
//! linking to the open note, Enter on a linking line opens that note with the cursor on the
//! line, and the editor draws a `[[link]]` to no note differently from one that resolves.

use crate::common;

use common::fake_llm::FakeLlm;
use common::tmux::{Tmux, app_line};
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The escape codes in force just before `needle` on the row that holds it.
fn style_before(screen: &str, row_has: &str, needle: &str) -> String {
    let row = screen
        .lines()
        .find(|l| l.contains(row_has))
        .unwrap_or_else(|| panic!("no row with {row_has}:\n{screen}"));
    let head = &row[..row.find(needle).unwrap_or(0)];
    let escape = head.rfind('\u{1b}').unwrap_or(0);
    head[escape..].to_string()
}

#[test]
fn f7_lists_the_backlinks_and_enter_opens_the_linking_note_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = (tmp.path().join("vault"), tmp.path().join("data"));
    write(
        &vault,
        "Projects/Launch.md",
        "# Launch\n\nThe plan for the launch.\n",
    );
    write(
        &vault,
        "Home/Chores.md",
        "- [ ] Pay for the [[Launch]] hall\n",
    );
    write(
        &vault,
        "Plan.md",
        "# Plan\n\nSee [[Launch]] and [[Nowhere]].\n\nmore\n\nThe [[Launch#Budget|budget]] first.\n",
    );
    let fake = FakeLlm::start(Vec::new());
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 120, 40);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.keys(&["C-p"]);
    tmux.type_text("Launch");
    tmux.wait_text("Projects/Launch.md");
    tmux.keys(&["Enter"]);
    tmux.wait_text("The plan for the launch.");

    tmux.keys(&["F7"]);
    let screen = tmux.wait_text("Linked mentions · 3 links from 2 notes");
    assert!(
        screen.contains("1  - [ ] Pay for the [[Launch]] hall")
            && screen.contains("3  See [[Launch]] and [[Nowhere]].")
            && screen.contains("7  The [[Launch#Budget|budget]] first."),
        "{screen}"
    );
    // Down twice: over Plan's heading to its second line (7), then Enter.
    tmux.keys(&["Down", "Down", "Enter"]);
    let screen = tmux.wait_text("Ln 7/7");
    assert!(screen.contains("╭ Plan.md"), "{screen}");
    assert!(!screen.contains("Linked mentions"), "{screen}");

    // In the editor, the link to no note is drawn otherwise than the one that resolves.
    let styled = tmux.screen_with_escapes();
    let resolved = style_before(&styled, "[[Nowhere]]", "[[Launch]]");
    let unresolved = style_before(&styled, "[[Nowhere]]", "[[Nowhere]]");
    assert_ne!(resolved, unresolved, "{styled:?}");
    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=0");
}
