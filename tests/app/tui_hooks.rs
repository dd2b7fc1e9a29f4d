//! Hooks in the full-screen app (tmux), issue 23: the documented recipe — an `after_write` hook
//! that commits a git vault — makes one commit per approved change, naming the changed path, and
//! none for a refused one; a hook that hangs is killed at its timeout with a notice while the app
//! keeps answering keys.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use common::tmux::{Tmux, app_line};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn usage() -> FakeUsage {
    FakeUsage {
        input: 100,
        output: 20,
        cache_read: 0,
        cache_write: 0,
    }
}

fn edit(id: &str, note: &str, find: &str, replace: &str) -> Reply {
    Reply::Sse {
        body: anthropic_tool_calls(
            Some("I'll change the note."),
            &[(
                id,
                "update_note",
                json!({"note": note, "replace_text": {"find": find, "replace": replace}}),
            )],
            usage(),
        ),
        chunking: Chunking::Fixed(7),
    }
}

fn text(reply: &str) -> Reply {
    Reply::Sse {
        body: anthropic_text(reply, usage()),
        chunking: Chunking::Whole,
    }
}

fn git(vault: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(vault)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Wait until `check` holds, at most `within`.
fn wait_until(what: &str, within: Duration, check: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn lines_in(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |t| t.lines().count())
}

#[test]
fn the_git_recipe_commits_each_approved_change_and_nothing_for_a_refused_one() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n\nPlant tomatoes in May.\n").unwrap();
    std::fs::write(vault.join("Shed.md"), "# Shed\n\nPaint it green.\n").unwrap();
    git(&vault, &["init", "-q"]);
    git(&vault, &["config", "user.email", "t@example.org"]);
    git(&vault, &["config", "user.name", "Test"]);
    git(&vault, &["add", "-A"]);
    git(&vault, &["commit", "-q", "-m", "start"]);
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // Each turn's end is written outside the vault: the positive signal that the hooks of a
    // turn (run in order) are done.
    let turns = tmp.path().join("turns.log");
    // Every after_write, written outside the vault: a refused change must add no line (the
    // git recipe alone could not show it: a commit of nothing fails and adds none either).
    let writes = tmp.path().join("writes.log");
    std::fs::write(
        data.join("config.toml"),
        format!(
            "[[hooks.after_write]]\ncommand = 'git add -A && git commit -q -m \"vaultchat: $*\"'\ntimeout_secs = 30\n\n[[hooks.after_write]]\ncommand = ['sh', '-c', 'echo \"$VAULTCHAT_SESSION_ID $VAULTCHAT_CHANGED_PATHS\" >> {}']\n\n[[hooks.after_turn]]\ncommand = ['sh', '-c', 'echo \"$VAULTCHAT_SESSION_ID\" >> {}']\n",
            writes.display(),
            turns.display()
        ),
    )
    .unwrap();

    let fake = FakeLlm::start(vec![
        edit(
            "w1",
            "Plan.md",
            "Plant tomatoes in May.",
            "Plant tomatoes in April.",
        ),
        text("Moved the planting to April."),
        edit("w2", "Shed.md", "Paint it green.", "Paint it red."),
        text("I left the shed alone."),
    ]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 120, 40);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.type_text("Plant earlier");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Allow update_note?");
    tmux.keys(&["y"]);
    tmux.wait_text("Moved the planting to April.");
    wait_until("the first turn's hooks", Duration::from_secs(30), || {
        lines_in(&turns) == 1
    });
    assert_eq!(git(&vault, &["rev-list", "--count", "HEAD"]).trim(), "2");
    assert_eq!(
        git(&vault, &["log", "-1", "--format=%s"]).trim(),
        "vaultchat: Plan.md"
    );
    assert_eq!(
        git(&vault, &["show", "--name-only", "--format=", "HEAD"]).trim(),
        "Plan.md"
    );
    assert_eq!(git(&vault, &["status", "--porcelain"]).trim(), "");

    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("Repaint the shed");
    tmux.keys(&["Enter"]);
    tmux.wait_text("+ Paint it red.");
    tmux.keys(&["n"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("I left the shed alone.");
    wait_until("the second turn's hooks", Duration::from_secs(30), || {
        lines_in(&turns) == 2
    });
    // The after_turn hook of the refused turn ran after anything that turn queued: no commit.
    assert_eq!(git(&vault, &["rev-list", "--count", "HEAD"]).trim(), "2");

    assert_eq!(
        std::fs::read_to_string(vault.join("Shed.md")).unwrap(),
        "# Shed\n\nPaint it green.\n"
    );
    let sessions = std::fs::read_to_string(&turns).unwrap();
    let ids: Vec<&str> = sessions.lines().collect();
    assert!(
        !ids[0].is_empty() && ids[0] == ids[1],
        "both turns name the one session: {ids:?}"
    );
    // One line: none for the refused change; and the new session's first write names it.
    assert_eq!(
        std::fs::read_to_string(&writes).unwrap(),
        format!("{} Plan.md\n", ids[0]),
        "after_write ran for the refused change, or without the session"
    );

    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

#[test]
fn a_hung_hook_is_killed_at_its_timeout_and_typing_goes_on_meanwhile() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n\nPlant tomatoes in May.\n").unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // Beside the vault (the hook runs in the vault's folder), so the notice fits on a line.
    let started = tmp.path().join("hook-started");
    std::fs::write(
        data.join("config.toml"),
        "[[hooks.after_write]]\ncommand = 'touch ../hook-started && sleep 100'\ntimeout_secs = 5\n",
    )
    .unwrap();
    let fake = FakeLlm::start(vec![
        edit(
            "w1",
            "Plan.md",
            "Plant tomatoes in May.",
            "Plant tomatoes in April.",
        ),
        text("Moved the planting to April."),
    ]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 120, 40);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("Plant earlier");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Allow update_note?");
    tmux.keys(&["y"]);
    tmux.wait_text("Moved the planting to April.");
    wait_until("the hook to start", Duration::from_secs(10), || {
        started.exists()
    });
    // The hook is running (its marker is there) until it is killed: the words typed meanwhile
    // show while the notice of its end has not come yet.
    for word in ["still", "typing", "here"] {
        tmux.type_text(&format!("{word} "));
        let screen = tmux.wait_text(word);
        assert!(
            !screen.contains("was stopped after"),
            "the typing was shown only after the hook ended:\n{screen}"
        );
    }
    let screen = tmux.wait_text("was stopped after 5 s");
    assert!(screen.contains("after_write hook"), "{screen}");
    // Still answering: more text appears after the notice.
    tmux.type_text("done");
    tmux.wait_text("still typing here done");
    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=");
}

#[test]
fn an_untrusted_vault_hooks_file_is_named_at_start_and_not_run() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join(".vaultchat")).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    std::fs::write(
        vault.join(".vaultchat/hooks.toml"),
        "[[session_start]]\ncommand = 'touch ../ran'\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 160, 30);
    let screen = tmux.wait_text("hooks.toml) are not run");
    assert!(screen.contains("vaultchat trust"), "{screen}");
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=");
    // The app has quit: its session's hooks (start and end) had their turn.
    assert!(!tmp.path().join("ran").exists(), "an untrusted hook ran");
}

/// A session_end hook (a `git push` on a slow network) is waited for at quit, up to 30 s: the
/// terminal is given back first, so the person is not left before a frozen full screen that
/// takes no keys.
#[test]
fn the_terminal_is_given_back_before_the_session_end_hooks_are_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let started = tmp.path().join("hook-started");
    std::fs::write(
        data.join("config.toml"),
        "[[hooks.session_end]]\ncommand = 'touch ../hook-started && sleep 8'\ntimeout_secs = 20\n",
    )
    .unwrap();
    let fake = FakeLlm::start(Vec::new());
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 100, 30);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.keys(&["C-q"]);
    wait_until(
        "the session_end hook to start",
        Duration::from_secs(10),
        || started.exists(),
    );
    // The hook sleeps on; the app waits for it, but its screen is gone.
    let screen = tmux.wait_for("the app's screen to leave", |s| {
        !s.lines().any(|l| l.starts_with(" ready "))
    });
    assert!(
        !screen.contains("EXIT="),
        "the app had already ended: the hook was not waited for\n{screen}"
    );
    tmux.wait_text("EXIT=0");
}
