//! Never losing a word, end to end in a real terminal (tmux): the app on a temp vault, keys typed
//! as a person types them, and each test reads the note's bytes on disk. Typed text survives
//! following a link, opening another note, `kill -9` after the autosave delay, quitting twice, a
//! SIGTERM; an approved agent edit of the open note is on disk even when the person quits at
//! once; with autosave off, leaving asks, and Cancel / Save / Discard do what they say.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use common::tmux::{Tmux, app_line};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const WELCOME: &str = "See [[Seeds]] for more.\n\nThe rest of the note.\n";
const SEEDS: &str = "# Seeds\n\nTomatoes, beans.\n";

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
}

/// A vault with Welcome.md (linking to Seeds) and Seeds.md; `config` is the config.toml.
fn setup(config: &str) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Welcome.md"), WELCOME).unwrap();
    std::fs::write(vault.join("Seeds.md"), SEEDS).unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("config.toml"), config).unwrap();
    Setup {
        _tmp: tmp,
        vault,
        data,
    }
}

fn launch(setup: &Setup, fake: &FakeLlm) -> Tmux {
    let tmux = Tmux::start(
        &app_line(&[], &setup.data, &fake.base_url, &[], &setup.vault),
        100,
        30,
    );
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux
}

/// Open `name` with Ctrl+P (the editor then has the keyboard, the cursor at the top).
fn open(tmux: &Tmux, query: &str, path: &str) {
    tmux.keys(&["C-p"]);
    tmux.wait_text("Open note");
    tmux.type_text(query);
    // The picker filters as the query is typed; Enter takes the selected (best) match.
    wait_for_match(tmux, query, path);
    tmux.keys(&["Enter"]);
    tmux.wait_for(&format!("{path} in the editor"), |s| {
        s.contains(&format!("╭ {path}")) && !s.contains("Open note")
    });
}

/// Wait until the picker shows `query` typed and `path` selected.
fn wait_for_match(tmux: &Tmux, query: &str, path: &str) {
    tmux.wait_for(&format!("{path} selected for {query:?}"), |s| {
        s.contains(&format!("› {query} ")) && s.lines().any(|l| l.contains('▌') && l.contains(path))
    });
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Wait (up to 15 s) until the file holds `expected`.
fn wait_for_file(path: &Path, expected: &str, tmux: &Tmux) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while read(path) != expected {
        assert!(
            Instant::now() < deadline,
            "{} never became {expected:?}; it is {:?}\n{}",
            path.display(),
            read(path),
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A long autosave delay: whatever is on disk was written by leaving the note, not the timer.
const NO_TIMER: &str = "[editor]\nautosave_delay_ms = 60000\n";

#[test]
fn typed_text_is_saved_before_a_link_is_followed() {
    let s = setup(NO_TIMER);
    let fake = FakeLlm::start(vec![]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.type_text("Hello ");
    // Onto [[Seeds]]: "Hello See [[" is 12 characters.
    for _ in 0..6 {
        tmux.keys(&["Right"]);
    }
    // Alt+Enter follows the link (Ctrl+] reaches crossterm as Ctrl+5 from tmux).
    tmux.keys(&["M-Enter"]);
    tmux.wait_text("╭ Seeds.md");
    assert_eq!(
        read(&s.vault.join("Welcome.md")),
        format!("Hello {WELCOME}")
    );
    assert_eq!(read(&s.vault.join("Seeds.md")), SEEDS);
}

#[test]
fn typed_text_is_saved_before_ctrl_p_opens_another_note() {
    let s = setup(NO_TIMER);
    let fake = FakeLlm::start(vec![]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.type_text("Typed before switching. ");
    open(&tmux, "Seeds", "Seeds.md");
    assert_eq!(
        read(&s.vault.join("Welcome.md")),
        format!("Typed before switching. {WELCOME}")
    );
    // And the text is still there when the note is opened again.
    open(&tmux, "Welcome", "Welcome.md");
    tmux.wait_text("Typed before switching.");
}

#[test]
fn the_autosave_writes_after_the_pause_and_survives_kill_9() {
    let s = setup("[editor]\nautosave_delay_ms = 300\n");
    let fake = FakeLlm::start(vec![]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.type_text("Autosaved words. ");
    let expected = format!("Autosaved words. {WELCOME}");
    // Nothing else happens: no key, no switch; only the pause.
    wait_for_file(&s.vault.join("Welcome.md"), &expected, &tmux);
    tmux.wait_for("the saved title (no ●)", |screen| {
        screen.contains("╭ Welcome.md ─")
    });
    let shell = tmux.run(&["display", "-p", "-t", "t", "#{pane_pid}"]);
    let out = std::process::Command::new("pgrep")
        .args(["-P", shell.trim()])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!pid.is_empty(), "the app's pid");
    let status = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    tmux.wait_text("EXIT=137");
    assert_eq!(read(&s.vault.join("Welcome.md")), expected);
    let leftovers: Vec<_> = std::fs::read_dir(&s.vault)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "Welcome.md" && n != "Seeds.md")
        .collect();
    assert!(leftovers.is_empty(), "no temp files: {leftovers:?}");
}

#[test]
fn quitting_twice_at_once_keeps_the_typed_text() {
    let s = setup(NO_TIMER);
    let fake = FakeLlm::start(vec![]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.type_text("Last words. ");
    tmux.keys(&["C-q", "C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(
        read(&s.vault.join("Welcome.md")),
        format!("Last words. {WELCOME}")
    );
}

#[test]
fn sigterm_saves_before_quitting() {
    let s = setup(NO_TIMER);
    let fake = FakeLlm::start(vec![]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.type_text("Before the logout. ");
    tmux.wait_text("Before the logout.");
    let shell = tmux.run(&["display", "-p", "-t", "t", "#{pane_pid}"]);
    let out = std::process::Command::new("pgrep")
        .args(["-P", shell.trim()])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(
        read(&s.vault.join("Welcome.md")),
        format!("Before the logout. {WELCOME}")
    );
}

fn usage() -> FakeUsage {
    FakeUsage {
        input: 100,
        output: 20,
        cache_read: 0,
        cache_write: 0,
    }
}

/// Even with autosave off, an approved edit of the open note is written, and quitting right
/// after `y` does not lose it; the model is told it was applied and saved.
#[test]
fn an_approved_edit_of_the_open_note_is_on_disk_even_when_quitting_at_once() {
    let s = setup("[editor]\nautosave = false\n");
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: anthropic_tool_calls(
                Some("Changing it."),
                &[(
                    "w1",
                    "update_note",
                    json!({"note": "Welcome.md", "replace_text": {"find": "The rest of the note.", "replace": "The rest, rewritten."}}),
                )],
                usage(),
            ),
            chunking: Chunking::Fixed(7),
        },
        Reply::Sse {
            body: anthropic_text("Done.", usage()),
            chunking: Chunking::Whole,
        },
    ]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.keys(&["C-o"]);
    tmux.type_text("Rewrite the rest");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Allow update_note?");
    tmux.keys(&["y", "C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(
        read(&s.vault.join("Welcome.md")),
        WELCOME.replace("The rest of the note.", "The rest, rewritten.")
    );
}

/// The same edit without quitting: the tool result the model gets says it was saved.
#[test]
fn the_model_hears_that_the_approved_edit_was_applied_and_saved() {
    let s = setup("[editor]\nautosave = false\n");
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: anthropic_tool_calls(
                None,
                &[(
                    "w1",
                    "update_note",
                    json!({"note": "Welcome.md", "replace_text": {"find": "The rest of the note.", "replace": "The rest, rewritten."}}),
                )],
                usage(),
            ),
            chunking: Chunking::Whole,
        },
        Reply::Sse {
            body: anthropic_text("Done and saved.", usage()),
            chunking: Chunking::Whole,
        },
    ]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.keys(&["C-o"]);
    tmux.type_text("Rewrite the rest");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Allow update_note?");
    tmux.keys(&["y"]);
    tmux.wait_text("Done and saved.");
    let sent = fake.requests()[1].raw_body.clone();
    assert!(sent.contains(r#"\"saved\":true"#), "{sent}");
    assert_eq!(
        read(&s.vault.join("Welcome.md")),
        WELCOME.replace("The rest of the note.", "The rest, rewritten.")
    );
}

#[test]
fn without_autosave_leaving_asks_cancel_keeps_save_writes_discard_drops() {
    let s = setup("[editor]\nautosave = false\n");
    let fake = FakeLlm::start(vec![]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.type_text("Draft. ");
    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("Unsaved changes");
    assert!(
        screen.contains("Save them before quitting?"),
        "the question is a modal, whole: {screen}"
    );
    // Cancel: the modal goes, the buffer stays, nothing is written.
    tmux.keys(&["Escape"]);
    tmux.wait_for("the modal to close", |s| !s.contains("Unsaved changes"));
    assert!(tmux.screen().contains("Draft. See [[Seeds]]"));
    assert_eq!(read(&s.vault.join("Welcome.md")), WELCOME);

    // Discard: the other note opens, the draft is not written.
    tmux.keys(&["C-p"]);
    tmux.wait_text("Open note");
    tmux.type_text("Seeds");
    wait_for_match(&tmux, "Seeds", "Seeds.md");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the question before opening Seeds.md", |s| {
        s.contains("Save them before opening") && s.contains("Seeds.md?")
    });
    tmux.keys(&["d"]);
    tmux.wait_text("╭ Seeds.md");
    assert_eq!(read(&s.vault.join("Welcome.md")), WELCOME);

    // Save: written, then the app quits.
    tmux.type_text("Kept. ");
    tmux.keys(&["C-q"]);
    tmux.wait_text("Unsaved changes");
    tmux.keys(&["s"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(read(&s.vault.join("Seeds.md")), format!("Kept. {SEEDS}"));
}

/// Without an API key the start screen says so once (in the chat), not again when the vault is
/// ready, and not cut in the status bar.
#[test]
fn the_no_agent_notice_is_shown_once() {
    let s = setup("");
    let line = format!(
        "env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY TERM=xterm-256color {} --data-dir {} {}; echo EXIT=$?; sleep 60",
        common::tmux::quote(common::bin()),
        common::tmux::quote(&s.data.display().to_string()),
        common::tmux::quote(&s.vault.display().to_string()),
    );
    let tmux = Tmux::start(&line, 80, 24);
    // Whatever the vault's opening would add is told before the ready state (one channel, in
    // order), so it is on screen with the badge; and the file pane's listing, which the app asks
    // for when the vault is ready, shows that the app has taken in the answer to that too.
    let screen = tmux.wait_for("the ready badge and the listed notes", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
            && s.lines().any(|l| l.contains("│   Seeds "))
            && s.lines().any(|l| l.contains("│   Welcome "))
    });
    assert_eq!(screen.matches("no API key").count(), 1, "{screen}");
}

/// With autosave off, a SIGTERM cannot ask "save?": the note stays as it was on disk and the typed
/// text is kept in a recovery file in the data folder (not the vault), which the next opening of
/// the note announces.
#[test]
fn sigterm_without_autosave_keeps_the_typed_text_in_a_recovery_file() {
    let s = setup("[editor]\nautosave = false\n");
    let fake = FakeLlm::start(vec![]);
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    tmux.type_text("Typed before the logout. ");
    tmux.wait_text("Typed before the logout.");
    let shell = tmux.run(&["display", "-p", "-t", "t", "#{pane_pid}"]);
    let out = std::process::Command::new("pgrep")
        .args(["-P", shell.trim()])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    // The note is untouched; the vault holds nothing new.
    assert_eq!(read(&s.vault.join("Welcome.md")), WELCOME);
    let mut vault_files: Vec<_> = std::fs::read_dir(&s.vault)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.'))
        .collect();
    vault_files.sort();
    assert_eq!(vault_files, ["Seeds.md", "Welcome.md"]);
    let kept: Vec<PathBuf> = std::fs::read_dir(s.data.join("recovery"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let recovery: serde_json::Value = serde_json::from_str(&read(&kept[0])).unwrap();
    assert_eq!(recovery["path"], "Welcome.md");
    assert_eq!(
        recovery["text"],
        format!("Typed before the logout. {WELCOME}")
    );
    drop(tmux);
    // The next opening of the note offers the kept text, with a diff; nothing is restored
    // before the answer.
    let tmux = launch(&s, &fake);
    open(&tmux, "Welcome", "Welcome.md");
    let screen = tmux.wait_text("Recovered changes");
    assert!(screen.contains("+ Typed before the logout."), "{screen}");
    assert_eq!(read(&s.vault.join("Welcome.md")), WELCOME);
    // Restore: the text is back in the editor (unsaved); the recovery file stays, the only copy
    // of that text on disk until it is saved.
    tmux.keys(&["Enter"]);
    tmux.wait_for("the kept text in the editor", |s| {
        !s.contains("Recovered changes")
            && s.contains("Typed before the logout. See [[Seeds]]")
            && s.contains("not saved yet")
    });
    assert!(kept[0].exists(), "forgotten before it was saved");
    assert_eq!(read(&s.vault.join("Welcome.md")), WELCOME);
    // Saved: the note holds it, and then the recovery file goes.
    tmux.keys(&["C-s"]);
    wait_for_file(
        &s.vault.join("Welcome.md"),
        &format!("Typed before the logout. {WELCOME}"),
        &tmux,
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while kept[0].exists() {
        assert!(
            Instant::now() < deadline,
            "the recovery file stayed after the save"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
