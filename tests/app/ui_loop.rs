//! Nothing on the UI loop: with the disk made slow (the `note.read` failpoint holds every note
//! read until the test lets it go), a note opened from the picker is on its way — the status bar
//! says so — while the person keeps typing in the chat and sees each key echoed within a bound.
//! If the read ran on the loop (or the loop waited for it), no key would be echoed until the read
//! was released and the test fails at the bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::FakeLlm;
use common::tmux::{Tmux, app_line};
use std::path::Path;
use std::time::{Duration, Instant};

/// The longest a typed key may take to show while the read is held: a liveness bound, not a
/// speed target (the figures are printed; docs/benchmarks.md). A loop that waited on the read
/// would show nothing until the test released it, however long; a free loop draws a key within
/// 16 ms, and the rest of the bound is a busy machine (parallel builds on two cores) and tmux.
const KEY_TO_FRAME_BOUND: Duration = Duration::from_secs(5);

/// Wait until the screen contains `needle`, polling tightly; the time it took.
fn time_until_shown(tmux: &Tmux, needle: &str, bound: Duration) -> Duration {
    let start = Instant::now();
    loop {
        if tmux.screen().contains(needle) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < bound,
            "{needle:?} was not on screen within {bound:?} (the loop is blocked?):\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn keys_are_echoed_while_a_note_read_is_held_on_a_slow_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Welcome.md"), "# Welcome\n").unwrap();
    std::fs::write(vault.join("Seeds.md"), "# Seeds\n\nTomatoes, beans.\n").unwrap();
    let data = tmp.path().join("data");
    // Written by the failpoint when the read starts; the read goes on once it is removed.
    let held = tmp.path().join("read-held");
    let env = [
        "VAULTCHAT_FAILPOINT=note.read".to_string(),
        "VAULTCHAT_FAILPOINT_ACTION=wait".to_string(),
        format!(
            "VAULTCHAT_FAILPOINT_MARKER={}",
            common::tmux::quote(&held.display().to_string())
        ),
    ];
    let env: Vec<&str> = env.iter().map(String::as_str).collect();
    let fake = FakeLlm::start(Vec::new());
    let tmux = Tmux::start(&app_line(&env, &data, &fake.base_url, &[], &vault), 100, 30);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.keys(&["C-p"]);
    tmux.wait_text("Open note");
    tmux.type_text("Seeds");
    tmux.wait_for("Seeds.md selected", |s| {
        s.contains("› Seeds ") && s.lines().any(|l| l.contains('▌') && l.contains("Seeds.md"))
    });
    tmux.keys(&["Enter"]);
    // The read has started and is held: the positive signal that the slow operation is pending.
    wait_for_file(&held);
    tmux.wait_text("opening Seeds");

    // Typed into the chat (it kept the keyboard) one key at a time, each seen on screen.
    let phrase = "typing on";
    let mut latencies = Vec::new();
    for (i, c) in phrase.char_indices() {
        tmux.type_text(&c.to_string());
        let shown = &phrase[..i + c.len_utf8()];
        latencies.push(time_until_shown(&tmux, shown, KEY_TO_FRAME_BOUND));
        assert!(
            held.exists(),
            "the read must still be held while the key is echoed"
        );
    }
    let worst = latencies.iter().max().unwrap();
    eprintln!("key-to-frame while a note read is held: {latencies:?}, worst {worst:?}");
    assert!(tmux.screen().contains("opening Seeds"), "{}", tmux.screen());

    // Let the read go: the note opens, and the wait is no longer shown.
    std::fs::remove_file(&held).unwrap();
    let screen = tmux.wait_for("Seeds.md in the editor", |s| {
        s.contains("╭ Seeds.md") && s.contains("Tomatoes, beans.")
    });
    assert!(!screen.contains("opening Seeds"), "{screen}");
    assert!(
        screen.contains("typing on"),
        "the typed text is kept:\n{screen}"
    );
    tmux.keys(&["C-q"]);
}
