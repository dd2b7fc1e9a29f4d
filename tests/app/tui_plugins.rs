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

fn open_mcp(tmux: &Tmux) -> String {
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
    // Keys typed while it is open answer it, nothing else; the plugin has not started.
    tmux.keys(&["x"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!started(), "the plugin started before the answer");
    tmux.keys(&["Right", "Enter"]);
    tmux.wait_for("the question to close", |s| {
        !s.contains("Trust this vault's plugins?")
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
