//! `vaultchat mcp`'s notes as resources, and its prompts, driven by the official MCP Python SDK
//! (tests/mcp/resources_client.py, from target/test-venv) in both protocol eras.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::os::unix::fs::symlink;
use std::path::Path;

/// Notes the test adds to the sample vault: more than two pages' worth.
const GENERATED: usize = 230;

/// A vault with more notes than two `resources/list` pages, names that need escaping, notes
/// whose bytes a careless reader would change, and things that must never be listed or read.
/// Returns how many notes it holds.
pub fn resource_vault(root: &Path) -> std::path::PathBuf {
    let vault = root.join("vault");
    copy_sample_vault(&vault);
    for i in 0..GENERATED {
        let folder = vault.join(format!("Generated/Batch {}", i / 50));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(format!("Note {i:03}.md")),
            format!(
                "# Note {i}\n\nGenerated note number {i}. See [[Note {}]].\n",
                i / 2
            ),
        )
        .unwrap();
    }
    let odd = [
        ("Names/Café #1 ?.md", "# Café\n".as_bytes().to_vec()),
        ("Names/100% done.md", b"# Done\n".to_vec()),
        ("Names/a+b=c & d.md", b"# Sum\n".to_vec()),
        (
            "Names/CRLF note.md",
            b"# Windows\r\n\r\nLine one\r\nLine two\r\n".to_vec(),
        ),
        (
            "Names/BOM note.md",
            b"\xEF\xBB\xBF# With a byte-order mark\n".to_vec(),
        ),
        ("Names/Latin-1.md", b"# Caf\xE9 in Latin-1\n".to_vec()),
        ("Names/No newline at end.md", b"last line".to_vec()),
        ("Names/Empty.md", Vec::new()),
        (
            "Projects/Subscribed note.md",
            b"# Watched\n\nA note a client subscribes to.\n".to_vec(),
        ),
        ("Inbox/.hidden.md", b"HIDDEN-DOTFILE\n".to_vec()),
        (".obsidian/hidden.md", b"HIDDEN-SECRET\n".to_vec()),
        ("Names/notes.txt", b"not a note\n".to_vec()),
    ];
    for (rel, bytes) in odd {
        let path = vault.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "OUTSIDE-SECRET-42\n").unwrap();
    symlink(&outside, vault.join("link_out")).unwrap();
    symlink(outside.join("secret.md"), vault.join("link_file.md")).unwrap();
    vault
}

fn count_notes(vault: &Path) -> usize {
    // The sample vault's 8, the generated ones, the 9 odd notes that are notes.
    let expected = 8 + GENERATED + 9;
    assert!(vault.join("Names/Latin-1.md").is_file());
    expected
}

/// Runs tests/mcp/resources_client.py (stdio, or Streamable HTTP at `url`) and returns its
/// summary after checking it found nothing wrong.
fn python_sdk_session(vault: &Path, data: &Path, url: Option<&str>) -> serde_json::Value {
    let mut command = std::process::Command::new(venv_python());
    command
        .arg(repo().join("tests/mcp/resources_client.py"))
        .arg("--bin")
        .arg(bin())
        .arg("--vault")
        .arg(vault)
        .arg("--data")
        .arg(data)
        .arg("--expect-notes")
        .arg(count_notes(vault).to_string());
    if let Some(url) = url {
        command.args(["--url", url]);
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: String = stderr
        .chars()
        .skip(stderr.chars().count().saturating_sub(4000))
        .collect();
    assert!(
        out.status.success(),
        "resources client failed:\n{stdout}\n{tail}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(stdout.trim().lines().last().unwrap()).unwrap();
    // The measured latencies, for the record (docs/tools.md quotes them).
    eprintln!("{summary}");
    assert_eq!(summary["failures"], serde_json::json!([]));
    for mode in ["auto", "legacy"] {
        let m = &summary["modes"][mode];
        assert!(m["pages"].as_u64().unwrap() >= 3, "{summary}");
        assert_eq!(m["listed"], m["identical"], "{summary}");
        assert!(summary["update_latency_s"][mode].is_number(), "{summary}");
        assert!(
            summary["list_changed_latency_s"][mode].is_number(),
            "{summary}"
        );
    }
    for secret in ["HIDDEN-SECRET", "HIDDEN-DOTFILE", "OUTSIDE-SECRET-42"] {
        assert!(!stdout.contains(secret), "{secret} reached the client");
    }
    summary
}

#[test]
fn python_sdk_lists_reads_follows_and_prompts_in_both_eras() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = resource_vault(tmp.path());
    python_sdk_session(&vault, &tmp.path().join("data"), None);
}

#[test]
fn python_sdk_follows_notes_over_streamable_http() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = resource_vault(tmp.path());
    let data = tmp.path().join("data");
    let server = start_http(&data, &vault, &["--no-auth"]);
    python_sdk_session(&vault, &data, Some(&server.url));
}

fn run_inspector(args: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new("node")
        .arg(repo().join("tests/peers/node_modules/.bin/mcp-inspector"))
        .arg("--cli")
        .args(args)
        .args(["--format", "json"])
        .env("MCP_INSPECTOR_SECRET_STORE", "memory")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "inspector failed ({:?}): {}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("inspector prints one JSON object")
}

/// The Inspector's `resources/list` follows every `nextCursor`; each listed note reads back as
/// the file's bytes; the prompts are listed and fetched with the note embedded. Each Inspector run
/// is a Node start-up of a few seconds, so only the `thorough` pass reads every odd note and
/// fetches every prompt.
fn inspector_checks(server: &[&str], vault: &Path, expected: usize, thorough: bool) {
    let with = |extra: &[&str]| {
        let mut args = server.to_vec();
        args.extend_from_slice(extra);
        run_inspector(&args)
    };
    let listed = with(&["--method", "resources/list"]);
    let resources = listed["result"]["resources"].as_array().unwrap();
    assert_eq!(resources.len(), expected, "every note, over several pages");
    let names: Vec<&str> = resources
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for name in [
        "Names/CRLF note.md",
        "Names/Café #1 ?.md",
        "Generated/Batch 4/Note 229.md",
    ] {
        assert!(names.contains(&name), "{name} is listed");
    }
    for name in ["link_file.md", ".obsidian/hidden.md", "Inbox/.hidden.md"] {
        assert!(!names.contains(&name), "{name} is not listed");
    }
    let odd = [
        "Names/CRLF note.md",
        "Names/BOM note.md",
        "Names/Café #1 ?.md",
        "Welcome.md",
    ];
    for &name in odd.iter().take(if thorough { odd.len() } else { 1 }) {
        let uri = &resources.iter().find(|r| r["name"] == name).unwrap()["uri"];
        let read = with(&["--method", "resources/read", "--uri", uri.as_str().unwrap()]);
        let content = &read["result"]["contents"][0];
        assert_eq!(content["mimeType"], "text/markdown");
        assert_eq!(
            content["text"].as_str().unwrap().as_bytes(),
            std::fs::read(vault.join(name)).unwrap(),
            "{name} reads back byte for byte"
        );
    }
    let prompts = with(&["--method", "prompts/list"]);
    let names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["summarize_note", "daily_review", "find_related"]);
    let note = "Projects/Garden Planner.md";
    let prompts = ["summarize_note", "find_related"];
    for &prompt in prompts.iter().take(if thorough { 2 } else { 1 }) {
        let got = with(&[
            "--method",
            "prompts/get",
            "--prompt-name",
            prompt,
            "--prompt-args",
            &format!("note={note}"),
        ]);
        let first = &got["result"]["messages"][0]["content"];
        assert_eq!(first["type"], "resource", "{got}");
        assert_eq!(
            first["resource"]["text"].as_str().unwrap(),
            std::fs::read_to_string(vault.join(note)).unwrap()
        );
    }
    if !thorough {
        return;
    }
    let review = with(&[
        "--method",
        "prompts/get",
        "--prompt-name",
        "daily_review",
        "--prompt-args",
        "days=7",
    ]);
    let last = review["result"]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    assert!(
        last["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Names/Empty.md"),
        "the notes written today are in the review: {last}"
    );
}

#[test]
fn inspector_lists_reads_and_fetches_prompts_over_stdio_and_http() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = resource_vault(tmp.path());
    let data = tmp.path().join("data");
    let expected = count_notes(&vault);
    // stdio, the 2025-11-25 handshake.
    let server = [
        bin(),
        "--vault",
        vault.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "mcp",
    ];
    inspector_checks(&server, &vault, expected, true);
    // stdio, the stateless 2026-07-28 era, through a config file.
    let config = tmp.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"vault": {
            "type": "stdio", "command": bin(), "args": server[1..], "protocolEra": "modern"
        }}})
        .to_string(),
    )
    .unwrap();
    inspector_checks(
        &["--config", config.to_str().unwrap(), "--server", "vault"],
        &vault,
        expected,
        false,
    );
    // Streamable HTTP, with the token.
    let http = start_http(&data, &vault, &[]);
    let auth = format!("Authorization: Bearer {}", http.token);
    inspector_checks(&[&http.url, "--header", &auth], &vault, expected, false);
}
