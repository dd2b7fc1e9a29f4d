//! The app asks about a vault's plugins before anything of theirs runs (tmux, the real binary):
//! the question lists the command, the plugin's process has not started while it is open, and
//! "Trust" starts it (its server shows as running in `/mcp`); the next launch does not ask again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::FakeLlm;
use common::tmux::{Tmux, app_line};
use common::*;
use std::path::PathBuf;

/// A vault whose plugins file runs the tasks plugin; returns (tmp, vault, markers folder).
fn vault_with_plugin() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join(".vaultchat")).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let script = repo().join("tests/peers/tasks_plugin.py");
    let markers = tmp.path().join("markers");
    std::fs::create_dir_all(&markers).unwrap();
    std::fs::write(
        vault.join(".vaultchat/plugins.toml"),
        format!(
            "[plugins.tasks]\ncommand = {:?}\nargs = [{:?}]\nenv = {{ TASKS_MARKERS = {:?} }}\n",
            venv_python().display().to_string(),
            script.display().to_string(),
            markers.display().to_string(),
        ),
    )
    .unwrap();
    (tmp, vault, markers)
}

/// The escape codes just before `label` on the question's row of buttons (the button's look),
/// if the question is on screen.
fn button_style(screen: &str, label: &str) -> Option<String> {
    let row = screen
        .lines()
        .find(|l| l.contains(" Not now ") && l.contains("choose"))?;
    let mut before = &row[..row.find(label)?];
    let mut codes = Vec::new();
    while let Some(start) = before.rfind("\u{1b}[") {
        let code = &before[start..];
        let sgr = code.len() >= 3
            && code.ends_with('m')
            && code[2..code.len() - 1]
                .chars()
                .all(|c| c.is_ascii_digit() || c == ';');
        if !sgr {
            break;
        }
        codes.push(code);
        before = &before[..start];
    }
    codes.reverse();
    Some(codes.concat())
}

/// Wait (up to 30 s) until `done`.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: never happened"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn open_mcp(tmux: &Tmux) -> String {
    // `/mcp` asks the opened vault: before it is open, the app says so and shows nothing.
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("/mcp");
    tmux.keys(&["Enter"]);
    tmux.wait_text("MCP servers (1)")
}

fn quit(tmux: &Tmux) {
    tmux.keys(&["Escape"]);
    tmux.wait_for("/mcp to close", |s| !s.contains("MCP servers (1)"));
    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=0");
}

#[test]
fn the_app_asks_before_a_plugin_runs_and_trust_starts_it() {
    let (tmp, vault, markers) = vault_with_plugin();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(Vec::new());
    let started = || markers.join("started").exists();

    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 110, 60);
    let screen = tmux.wait_text("Trust this vault's plugins?");
    assert!(screen.contains("tasks: "), "{screen}");
    assert!(screen.contains("tasks_plugin.py"), "{screen}");
    // Keys typed while it is open answer it, nothing else; the plugin has not started. `x` is
    // followed by Right, which moves the focus to Trust: once Trust looks as Not now did, both
    // keys were taken by the open question (had `x` answered it, there would be no focus to
    // move). And the MCP start-up says in the log that it waits for the answer: nothing of the
    // vault's has been started before that.
    let before = tmux.screen_with_escapes();
    let (trust, not_now) = (
        button_style(&before, " Trust ").unwrap(),
        button_style(&before, " Not now ").unwrap(),
    );
    assert_ne!(
        trust, not_now,
        "Not now has the focus at first:\n{before:?}"
    );
    tmux.keys(&["x", "Right"]);
    wait_until(
        "the focus to move to Trust, the question still open",
        || button_style(&tmux.screen_with_escapes(), " Trust ").as_ref() == Some(&not_now),
    );
    let log = tmp.path().join("data/vaultchat.log");
    wait_until("the MCP start-up to wait for the answer", || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("the MCP servers start after the answer about the vault's plugins")
    });
    assert!(!started(), "the plugin started before the answer");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the question to close", |s| {
        !s.contains("Trust this vault's plugins?")
    });
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("/mcp");
    tmux.keys(&["Enter"]);
    tmux.wait_text("running · 1 tool");
    assert!(started(), "Trust started the plugin");
    quit(&tmux);
    drop(tmux);

    // Trusted for this content of the file: the next launch does not ask.
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 110, 60);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("/mcp");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("running · 1 tool");
    assert!(!screen.contains("Trust this vault's plugins?"), "{screen}");
}

#[test]
fn not_now_keeps_it_stopped_asks_no_more_and_an_edit_asks_again() {
    let (tmp, vault, markers) = vault_with_plugin();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(Vec::new());
    let launch = || Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 110, 60);

    let tmux = launch();
    tmux.wait_text("Trust this vault's plugins?");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the question to close", |s| {
        !s.contains("Trust this vault's plugins?")
    });
    // `/mcp` typed before the vault has opened is answered "still being opened": wait for it.
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    let screen = open_mcp(&tmux);
    assert!(screen.contains("tasks  not trusted"), "{screen}");
    quit(&tmux);
    drop(tmux);
    assert!(!markers.join("started").exists(), "declined, yet started");

    // The same file: not asked again, still not started.
    let tmux = launch();
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    let screen = open_mcp(&tmux);
    assert!(!screen.contains("Trust this vault's plugins?"), "{screen}");
    assert!(screen.contains("tasks  not trusted"), "{screen}");
    quit(&tmux);
    drop(tmux);

    // An edited file is a new question.
    let file = vault.join(".vaultchat/plugins.toml");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("startup_timeout_secs = 30\n");
    std::fs::write(&file, text).unwrap();
    let tmux = launch();
    tmux.wait_text("Trust this vault's plugins?");
    assert!(!markers.join("started").exists());
}

/// Whether process `pid` is running (a zombie waiting to be reaped is not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        })
        .unwrap_or(false)
}

/// The trust covers the plugin's script, not only its plugins file (issue 18, finding 2): in the
/// running app, editing only `.vaultchat/server.py` stops the plugin (its process is gone), the
/// edited script never runs, and the next launch asks again, naming the file that changed.
#[test]
fn editing_a_trusted_plugins_script_stops_it_in_the_app_and_asks_again() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join(".vaultchat")).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let script = vault.join(".vaultchat/server.py");
    std::fs::copy(repo().join("tests/peers/tasks_plugin.py"), &script).unwrap();
    let markers = tmp.path().join("markers");
    std::fs::create_dir_all(&markers).unwrap();
    std::fs::write(
        vault.join(".vaultchat/plugins.toml"),
        format!(
            "[plugins.tasks]\ncommand = {:?}\nargs = [\".vaultchat/server.py\"]\nenv = {{ TASKS_MARKERS = {:?} }}\n",
            venv_python().display().to_string(),
            markers.display().to_string(),
        ),
    )
    .unwrap();
    let data = tmp.path().join("data");
    assert!(run(&data, &vault, &["trust"]).status.success());
    let fake = FakeLlm::start(Vec::new());
    let launch = || Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 110, 60);

    let tmux = launch();
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    open_mcp(&tmux);
    tmux.wait_text("running · 1 tool");
    let started = std::fs::read_to_string(markers.join("started")).unwrap();
    let pid: u32 = started.lines().last().unwrap().parse().unwrap();
    assert!(running(pid));

    let old = std::fs::read_to_string(&script).unwrap();
    std::fs::write(
        &script,
        format!("import os\nopen(os.path.join(os.environ['TASKS_MARKERS'], 'pwned'), 'a').write('ran')\n{old}"),
    )
    .unwrap();
    let edited = std::time::Instant::now();
    while running(pid) {
        assert!(
            edited.elapsed() < std::time::Duration::from_secs(15),
            "the plugin {pid} still runs after its script changed"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    quit(&tmux);
    drop(tmux);

    let tmux = launch();
    let screen = tmux.wait_text("Trust this vault's plugins?");
    assert!(screen.contains(".vaultchat/server.py"), "{screen}");
    tmux.keys(&["Escape"]);
    // The chat says what changed (the line wraps before "(changed)").
    let screen = tmux.wait_text("changed since you trusted them");
    assert!(screen.contains(".vaultchat/server.py"), "{screen}");
    assert!(!markers.join("pwned").exists(), "the edited script ran");
    assert_eq!(
        std::fs::read_to_string(markers.join("started")).unwrap(),
        started,
        "the plugin was started again"
    );
}
