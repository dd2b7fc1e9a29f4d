//! `vaultchat mcp` on stdio answers every broken request instead of leaving the client waiting:
//! a line that is not JSON gets -32700, a line over the size limit an explicit error, and
//! `tools/call` with a non-string `name` or non-object `arguments` gets -32602.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

#[test]
fn broken_lines_and_bad_params_are_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("a.md"), "# A\n").unwrap();
    let data = tmp.path().join("data");
    let mut child = cmd(&data, &vault)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let call = |id: u32, params: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
    };
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        "this is not json".to_string(),
        "{\"jsonrpc\": \"2.0\", \"id\": 77, \"method\": ".to_string(),
        call(2, json!({"name": 5, "arguments": {}})),
        call(3, json!({"name": "read_note", "arguments": [1]})),
        call(4, json!({"name": "read_note", "arguments": "a.md"})),
    ];
    // Over the 16 MiB limit for one message.
    lines.push(format!("{{\"x\": \"{}\"}}", "a".repeat(17 * 1024 * 1024)));
    lines.push(call(
        5,
        json!({"name": "read_note", "arguments": {"note": "a.md"}}),
    ));
    let writer = std::thread::spawn(move || {
        for line in lines {
            stdin.write_all(line.as_bytes()).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
        stdin
    });
    let mut responses: Vec<Value> = Vec::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Read until the last request is answered, then close stdin and read what is left.
    while !responses.iter().any(|r| r["id"] == 5) {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the server ended early; answers so far: {responses:#?}"
        );
        responses.push(serde_json::from_str(&line).unwrap());
    }
    drop(writer.join().unwrap());
    for line in stdout.lines() {
        responses.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(responses.len(), 8, "one answer per request: {responses:#?}");

    let by_id = |id: i64| {
        responses
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {responses:#?}"))
    };
    let parse_errors: Vec<&Value> = responses
        .iter()
        .filter(|r| r["id"].is_null() && r["error"]["code"] == -32700)
        .collect();
    assert_eq!(parse_errors.len(), 3, "{responses:#?}");
    let messages: Vec<&str> = parse_errors
        .iter()
        .map(|r| r["error"]["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages
            .iter()
            .filter(|m| m.contains("is not JSON"))
            .count(),
        2,
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("over the limit of 16777216 bytes")),
        "{messages:?}"
    );
    for (id, expected) in [
        (2, "`params.name` must be a string"),
        (3, "`params.arguments` must be an object"),
        (4, "`params.arguments` must be an object"),
    ] {
        let error = &by_id(id)["error"];
        assert_eq!(error["code"], -32602, "{id}: {error}");
        assert!(
            error["message"].as_str().unwrap().contains(expected),
            "{id}: {error}"
        );
    }
    // The session is still fine after all that.
    assert_eq!(by_id(5)["result"]["structuredContent"]["path"], "a.md");
}
