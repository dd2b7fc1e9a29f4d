//! A vault's `.vaultchat/hooks.toml` through the real binary (issue 23): never run while
//! untrusted (a one-line notice says why, and `doctor` names it), run after `vaultchat trust`
//! (which shows what it runs), withdrawn by an edit to it. `vaultchat daily --append` is the
//! approved change that fires `after_write`.

use crate::common;

use std::path::Path;

fn append(data: &Path, vault: &Path, line: &str) -> std::process::Output {
    let out = common::cmd(data, vault)
        .args(["daily", "--date", "2026-12-04", "--append", line])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_vault_hooks_file_runs_only_while_trusted_and_an_edit_withdraws_it() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join(".vaultchat")).unwrap();
    let data = tmp.path().join("data");
    let log = tmp.path().join("vault-hook.log");
    let hooks = vault.join(".vaultchat/hooks.toml");
    // Written beside the vault (the hook runs in the vault's folder).
    std::fs::write(
        &hooks,
        "[[after_write]]\ncommand = 'echo \"$VAULTCHAT_EVENT $*\" >> ../vault-hook.log'\n",
    )
    .unwrap();

    // Untrusted: the note is written, the hook is not run, and one line says why.
    let out = append(&data, &vault, "- first");
    assert!(!log.exists(), "an untrusted hook ran");
    let said: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.contains("hooks"))
        .map(str::to_string)
        .collect();
    assert_eq!(said.len(), 1, "{}", stderr(&out));
    assert!(
        said[0].contains(".vaultchat/hooks.toml") && said[0].contains("vaultchat trust"),
        "{said:?}"
    );
    let doctor = common::run(&data, &vault, &["doctor"]);
    let doctor = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        doctor
            .lines()
            .any(|l| l.contains("hooks") && l.contains("not run until you trust")),
        "{doctor}"
    );

    // `vaultchat trust` shows what the file runs, then the hook runs after the next write.
    let trusted = common::ok(&data, &vault, &["trust"]);
    assert!(
        trusted.contains(".vaultchat/hooks.toml runs, as you")
            && trusted.contains("after_write (timeout 10 s): sh -c"),
        "{trusted}"
    );
    let out = append(&data, &vault, "- second");
    assert!(!stderr(&out).contains("hooks"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "after_write 2026-12-04.md\n"
    );

    // An edit to the file withdraws the trust: not run, and said.
    std::fs::write(
        &hooks,
        "[[after_write]]\ncommand = 'echo \"edited $*\" >> ../vault-hook.log'\n",
    )
    .unwrap();
    let out = append(&data, &vault, "- third");
    assert!(
        stderr(&out).contains("changed since you trusted it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "after_write 2026-12-04.md\n",
        "the edited hook did not run"
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("2026-12-04.md")).unwrap(),
        "- first\n- second\n- third\n"
    );
}

/// An MCP client's write (`vaultchat mcp --allow-writes`) fires the person's `after_write` hook
/// with the written path; a refused write fires nothing.
#[test]
fn an_mcp_clients_write_fires_after_write_and_a_refused_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let log = tmp.path().join("mcp-hook.log");
    std::fs::write(
        data.join("config.toml"),
        "[[hooks.after_write]]\ncommand = 'echo \"$VAULTCHAT_CHANGED_PATHS\" >> ../mcp-hook.log'\n",
    )
    .unwrap();
    let mut command = common::cmd(&data, &vault);
    command.args(["mcp", "--allow-writes"]);
    let mut server = common::mcp_stdio::McpStdio::spawn(command);
    server.initialize();
    server.call_ok(
        "create_note",
        serde_json::json!({"path": "Ideas.md", "content": "x"}),
    );
    // Refused: the note exists.
    let refused = server.call_tool(
        "create_note",
        serde_json::json!({"path": "Plan.md", "content": "y"}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    server.call_ok(
        "create_note",
        serde_json::json!({"path": "Later.md", "content": "z"}),
    );
    // The hooks run in order: once the last write's line is there, the refused one had its turn.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&log).is_ok_and(|t| t.contains("Later.md")) {
        assert!(std::time::Instant::now() < deadline, "the hook never ran");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "Ideas.md\nLater.md\n"
    );
}

/// The workspace tells its written-paths listener (the hooks) of each approved change — a move
/// (both paths), an agent edit saved in the editor, a task toggled, a note created, the daily
/// note — and never of the person's own typing saved or of a write that failed.
#[test]
fn the_workspace_tells_approved_changes_and_not_typing_or_failures() {
    use std::sync::{Arc, Mutex};
    use vaultchat::tools::workspace::{SavedBy, Workspace};
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n\n- [ ] water\n").unwrap();
    let paths = vaultchat::config::Paths::under(&tmp.path().join("data"));
    let ws = Workspace::open(
        vaultchat::vault::Vault::open(&vault).unwrap(),
        &paths,
        &vaultchat::config::Config::default(),
        vaultchat::store::Actor::Agent,
    )
    .unwrap();
    let told: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let keep = Arc::clone(&told);
    ws.on_written(Arc::new(move |written: &[String]| {
        keep.lock().unwrap().push(written.to_vec());
    }));
    let take = || std::mem::take(&mut *told.lock().unwrap());

    let read = ws.read_path("Plan.md").unwrap();
    let typed = ws
        .save_user_edit(
            "Plan.md",
            &read,
            "# Plan\n\n- [ ] water\n\nmore\n",
            SavedBy::Person,
        )
        .unwrap();
    assert!(take().is_empty(), "typing saved is not an approved change");
    ws.save_user_edit(
        "Plan.md",
        &typed,
        "# Plan\n\n- [ ] water\n\nmore.\n",
        SavedBy::AgentEdit,
    )
    .unwrap();
    assert_eq!(take(), [vec!["Plan.md".to_string()]]);
    assert!(ws.toggle_task_for_person("Plan.md", 2, "water").is_err());
    assert!(take().is_empty(), "a refused toggle tells nothing");
    ws.toggle_task_for_person("Plan.md", 3, "water").unwrap();
    assert_eq!(take(), [vec!["Plan.md".to_string()]]);
    assert!(ws.create_user_note("Plan").is_err());
    assert!(take().is_empty(), "a refused create tells nothing");
    ws.create_user_note("Ideas").unwrap();
    assert_eq!(take(), [vec!["Ideas.md".to_string()]]);
    let plan = ws.plan_user_move("Ideas.md", "Archive/Ideas.md").unwrap();
    ws.apply(&plan, None).unwrap();
    assert_eq!(
        take(),
        [vec!["Archive/Ideas.md".to_string(), "Ideas.md".to_string()]]
    );
}
