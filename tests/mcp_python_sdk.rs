//! The official MCP Python SDK drives `vaultchat mcp` over stdio (tests/mcp/sdk_client.py).
//! The SDK is installed into target/test-venv by scripts/install-test-deps.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use std::os::unix::fs::symlink;
use std::path::Path;

fn venv_python() -> std::path::PathBuf {
    let python = repo().join("target/test-venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/install-test-deps (it installs the MCP Python SDK)",
        python.display()
    );
    python
}

/// A vault with traps around it: links out, a sibling-prefix folder, a hard link, planted secrets.
fn trapped_vault(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let vault = root.join("vault");
    let outside = root.join("outside");
    copy_sample_vault(&vault);
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "OUTSIDE-SECRET-42\n").unwrap();
    std::fs::create_dir_all(root.join("vault_evil")).unwrap();
    std::fs::write(root.join("vault_evil/x.md"), "EVIL-SECRET-77\n").unwrap();
    symlink(&outside, vault.join("link_out")).unwrap();
    symlink(outside.join("secret.md"), vault.join("link_file.md")).unwrap();
    symlink(outside.join("nothing-here.md"), vault.join("dangling.md")).unwrap();
    std::fs::hard_link(outside.join("secret.md"), vault.join("hard.md")).unwrap();
    std::fs::create_dir_all(vault.join(".git")).unwrap();
    std::fs::write(
        vault.join(".git/config"),
        "[remote] url = https://OUTSIDE-SECRET-42@x\n",
    )
    .unwrap();
    (vault, outside)
}

#[test]
fn python_sdk_client_drives_every_tool_in_both_eras() {
    let python = venv_python();
    let tmp = tempfile::tempdir().unwrap();
    let (vault, outside) = trapped_vault(tmp.path());
    let data = tmp.path().join("data");
    let out = std::process::Command::new(python)
        .arg(repo().join("tests/mcp/sdk_client.py"))
        .arg("--bin")
        .arg(bin())
        .arg("--vault")
        .arg(&vault)
        .arg("--data")
        .arg(&data)
        .arg("--outside")
        .arg(&outside)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "sdk client failed:\n{stdout}\n{stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(stdout.trim().lines().last().unwrap()).unwrap();
    assert_eq!(summary["failures"], serde_json::json!([]));
    assert!(summary["checks"].as_u64().unwrap() > 300, "{summary}");
    assert!(
        summary["path_refusals"].as_u64().unwrap() > 300,
        "{summary}"
    );
}

/// Without --allow-writes only read-only tools are listed, and writes are refused.
#[test]
fn write_tools_are_absent_without_allow_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    copy_sample_vault(&vault);
    let data = tmp.path().join("data");
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_note","arguments":{"path":"x.md","content":"x"}}}"#,
    ];
    let mut child = cmd(&data, &vault)
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        for r in requests {
            writeln!(stdin, "{r}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("stdout carries only JSON-RPC lines"))
        .collect();
    let list = lines.iter().find(|l| l["id"] == 2).unwrap();
    let tools = list["result"]["tools"].as_array().unwrap();
    assert!(!tools.is_empty());
    for t in tools {
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
    }
    let call = lines.iter().find(|l| l["id"] == 3).unwrap();
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert!(!vault.join("x.md").exists());
}
