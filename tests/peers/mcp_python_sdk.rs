//! The official MCP Python SDK drives `vaultchat mcp` over stdio (tests/mcp/sdk_client.py).
//! The SDK is installed into target/test-venv by scripts/install-test-deps.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::os::unix::fs::symlink;
use std::path::Path;

/// `connections.toml` with the sample vault's connections (same keys) and planted secrets in every
/// shape the redaction must handle: plain secret keys, `apiKey`/`api_key`, an array of tokens, a
/// nested `auth` table, a table with one secret key among plain ones, an array of tables, a password
/// inside a URL, a secret query parameter and a top-level `[secrets]` table.
const CONNECTIONS_TOML: &str = r#"# Connections used by the runbooks; the secret values are planted by the test.
[connections.notes-db]
kind = "postgres"
host = "localhost"
port = 5432
database = "notes"
user = "notes_app"
password = "PLANTED-PW-1"

[connections.notes-api]
kind = "http"
base_url = "http://localhost:8080"
api_key = "PLANTED-APIKEY-5"

[connections.db]
kind = "postgres"
host = "db.internal"
port = 6543
url = "postgres://u:PLANTED-URLPW-3@h/db"
health = "https://h/health?sslmode=off&token=PLANTED-QUERY-8"
apiKey = "PLANTED-APIKEY-6"
tokens = ["PLANTED-ARRAY-7a", "PLANTED-ARRAY-7b"]

[connections.db.auth]
method = "scram"
secret = "PLANTED-NESTED-9"

[connections.db.options]
sslmode = "require"
sslpassword = "PLANTED-SSL-10"

[[connections.db.replicas]]
host = "replica-1"
password = "PLANTED-REPLICA-11"

[secrets]
master_key = "PLANTED-TOPSECRET-12"
"#;

/// `envs/dev.toml`: the sample's keys (base_url, user, secrets.password, secrets.token) plus more.
const DEV_TOML: &str = r#"# The "dev" environment for runbook blocks with env=dev (planted secrets).
base_url = "http://localhost:8080"
user = "demo"
token = "PLANTED-TOKEN-2"

[secrets]
password = "PLANTED-DEVPW-13"
token = "PLANTED-DEVTOKEN-14"
backup_codes = ["PLANTED-CODE-15a", "PLANTED-CODE-15b"]

[secrets.deeper]
signing = "PLANTED-DEEP-16"
"#;

const PROD_TOML: &str = r#"# The "prod" environment (planted secrets).
base_url = "https://api.example.com"
user = "deployer"
timeout = 30
database_url = "postgres://deployer:PLANTED-PRODURL-17@db.example.com:5432/notes"
api_key = "PLANTED-PRODKEY-18"
apiKey = "PLANTED-PRODKEY-19"

[service]
client_id = "vaultchat"
client_secret = "PLANTED-CLIENTSECRET-20"
"#;

/// An environment file with a syntax error on a line that holds a secret (unterminated string).
const BROKEN_TOML: &str = "base_url = \"http://broken\"\npassword = \"PLANTED-BROKEN-21\n";

/// A runbook whose blocks point at the planted environment and connection. Block bodies carry
/// distinctive `BLOCK-BODY-LINE-*` lines that no block tool may return; one info string carries a
/// secret-looking attribute.
const PROD_RUNBOOK: &str = r#"---
title: Prod Ops
tags: [runbook, ops]
owner: platform-team
---
# Prod Ops

Production checks. #oncall

```sql id=prod-check env=prod connection=db timeout=10 token=PLANTED-ATTR-23
SELECT 'BLOCK-BODY-LINE-PROD' AS marker;
```

```http id=ghost env=staging connection=nowhere
GET {{base_url}}/BLOCK-BODY-LINE-GHOST
```

```
BLOCK-BODY-LINE-PLAIN
```
"#;

/// Every secret value planted in the vault (and the config files' other secret-shaped values).
const PLANTED_SECRETS: &[&str] = &[
    "PLANTED-PW-1",
    "PLANTED-TOKEN-2",
    "PLANTED-URLPW-3",
    "PLANTED-APIKEY-5",
    "PLANTED-APIKEY-6",
    "PLANTED-ARRAY-7a",
    "PLANTED-ARRAY-7b",
    "PLANTED-QUERY-8",
    "PLANTED-NESTED-9",
    "PLANTED-SSL-10",
    "PLANTED-REPLICA-11",
    "PLANTED-TOPSECRET-12",
    "PLANTED-DEVPW-13",
    "PLANTED-DEVTOKEN-14",
    "PLANTED-CODE-15a",
    "PLANTED-CODE-15b",
    "PLANTED-DEEP-16",
    "PLANTED-PRODURL-17",
    "PLANTED-PRODKEY-18",
    "PLANTED-PRODKEY-19",
    "PLANTED-CLIENTSECRET-20",
    "PLANTED-BROKEN-21",
    "PLANTED-ATTR-23",
];

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
    // Planted secrets in the config files the connection, environment and block tools read.
    assert!(vault.join("connections.toml").is_file() && vault.join("envs/dev.toml").is_file());
    std::fs::write(vault.join("connections.toml"), CONNECTIONS_TOML).unwrap();
    std::fs::write(vault.join("envs/dev.toml"), DEV_TOML).unwrap();
    std::fs::write(vault.join("envs/prod.toml"), PROD_TOML).unwrap();
    std::fs::write(vault.join("envs/broken.toml"), BROKEN_TOML).unwrap();
    std::fs::write(vault.join("Runbooks/Prod Ops.md"), PROD_RUNBOOK).unwrap();
    for secret in PLANTED_SECRETS {
        let planted = [
            CONNECTIONS_TOML,
            DEV_TOML,
            PROD_TOML,
            BROKEN_TOML,
            PROD_RUNBOOK,
        ];
        assert!(
            planted.iter().any(|f| f.contains(secret)),
            "{secret} is planted"
        );
    }
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
        .arg("--secrets")
        .arg(PLANTED_SECRETS.join(","))
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
    // Last run: 3054 checks, 750 path refusals, 1188 outputs scanned, 178 bad-argument refusals.
    assert!(summary["checks"].as_u64().unwrap() > 2800, "{summary}");
    assert!(
        summary["path_refusals"].as_u64().unwrap() > 700,
        "{summary}"
    );
    assert!(
        summary["outputs_scanned"].as_u64().unwrap() > 1000,
        "{summary}"
    );
    assert!(
        summary["bad_argument_refusals"].as_u64().unwrap() > 160,
        "{summary}"
    );
    assert!(
        summary["secrets"].as_u64().unwrap() >= PLANTED_SECRETS.len() as u64,
        "{summary}"
    );
    // Every tool of the workspace was called successfully (the script fails on any it skipped).
    assert!(
        summary["tools_called"].as_array().unwrap().len() >= 17,
        "{summary}"
    );
    // Nor does the server's log (its stderr, passed through by the SDK) carry a secret.
    for secret in PLANTED_SECRETS {
        assert!(
            !stderr.contains(secret) && !stdout.contains(secret),
            "a planted secret appears in the client's or the server's output streams"
        );
    }
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
