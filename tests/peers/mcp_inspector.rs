//! The MCP Inspector CLI (npm `@modelcontextprotocol/inspector`, installed into tests/peers by
//! scripts/install-test-deps) lists and calls vaultchat's tools over stdio and over HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn inspector() -> PathBuf {
    let path = repo().join("tests/peers/node_modules/@modelcontextprotocol/inspector");
    assert!(
        path.is_dir(),
        "the MCP Inspector is missing: run scripts/install-test-deps"
    );
    repo().join("tests/peers/node_modules/.bin/mcp-inspector")
}

fn run_inspector(args: &[&str]) -> Output {
    Command::new("node")
        .arg(inspector())
        .arg("--cli")
        .args(args)
        .env("MCP_INSPECTOR_SECRET_STORE", "memory")
        .output()
        .unwrap()
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "inspector failed ({:?}): {}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("inspector prints one JSON object")
}

fn sample(tmp: &Path) -> (PathBuf, PathBuf) {
    let vault = tmp.join("vault");
    copy_sample_vault(&vault);
    (vault, tmp.join("data"))
}

#[test]
fn inspector_over_stdio_in_both_eras() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = sample(tmp.path());
    let server = [
        bin(),
        "--vault",
        vault.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "mcp",
    ];
    // The default (legacy, 2025-11-25 initialize) era, server given as a command.
    let mut args = server.to_vec();
    args.extend(["--method", "tools/list", "--format", "json"]);
    let list = json_of(&run_inspector(&args));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"search_notes") && names.contains(&"read_note"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"create_note"),
        "write tools need --allow-writes"
    );

    let mut args = server.to_vec();
    args.extend([
        "--method",
        "tools/call",
        "--tool-name",
        "read_note",
        "--tool-arg",
        "note=Deploy API",
        "--format",
        "json",
    ]);
    let read = json_of(&run_inspector(&args));
    assert_eq!(
        read["result"]["structuredContent"]["path"],
        "Runbooks/Deploy API.md"
    );

    // A refused path is a tool error: the inspector exits with 5.
    let mut args = server.to_vec();
    args.extend([
        "--method",
        "tools/call",
        "--tool-name",
        "read_note",
        "--tool-arg",
        "note=../../etc/passwd",
    ]);
    assert_eq!(run_inspector(&args).status.code(), Some(5));

    // The modern (2026-07-28, stateless) era through a config file.
    let config = tmp.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"vault": {
            "type": "stdio", "command": bin(), "args": server[1..], "protocolEra": "modern"
        }}})
        .to_string(),
    )
    .unwrap();
    let out = run_inspector(&[
        "--config",
        config.to_str().unwrap(),
        "--server",
        "vault",
        "--method",
        "tools/call",
        "--tool-name",
        "search_notes",
        "--tool-args-json",
        r#"{"query":"tag:runbook"}"#,
        "--format",
        "json",
    ]);
    let found = json_of(&out);
    assert_eq!(
        found["result"]["structuredContent"]["results"][0]["path"],
        "Runbooks/Deploy API.md"
    );
}

#[test]
fn inspector_over_http_needs_the_token() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = sample(tmp.path());
    let server = start_http(&data, &vault, &["--allow-writes"]);
    assert_eq!(server.token.len(), 64);
    let auth = format!("Authorization: Bearer {}", server.token);

    let list = json_of(&run_inspector(&[
        &server.url,
        "--header",
        &auth,
        "--method",
        "tools/list",
        "--format",
        "json",
    ]));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"create_note"), "{names:?}");

    let created = json_of(&run_inspector(&[
        &server.url,
        "--header",
        &auth,
        "--method",
        "tools/call",
        "--tool-name",
        "create_note",
        "--tool-args-json",
        r##"{"path":"Inbox/Over HTTP.md","content":"# Over HTTP\n"}"##,
        "--format",
        "json",
    ]));
    assert_eq!(created["result"]["structuredContent"]["created"], true);
    assert_eq!(
        std::fs::read_to_string(vault.join("Inbox/Over HTTP.md")).unwrap(),
        "# Over HTTP\n"
    );

    // Without the token, or with a wrong one, nothing is served.
    for header in [None, Some("Authorization: Bearer wrong-token")] {
        let mut args = vec![server.url.as_str()];
        if let Some(h) = header {
            args.extend(["--header", h]);
        }
        args.extend(["--method", "tools/list", "--format", "json"]);
        let out = run_inspector(&args);
        assert!(!out.status.success(), "served without a valid token");
    }
}

#[test]
fn http_refuses_non_loopback_addresses_and_short_tokens() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = sample(tmp.path());
    let out = run(&data, &vault, &["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
    let out = cmd(&data, &vault)
        .args(["mcp", "--http", "127.0.0.1:0"])
        .env("VAULTCHAT_MCP_TOKEN", "short")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("16 characters"));
}
