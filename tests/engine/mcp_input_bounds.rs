//! `vaultchat mcp` holds its bounds against whatever a client sends, on stdio and over HTTP alike
//! (docs/safety.md, "Threat model: MCP clients"): params that are not an object and a cursor that
//! is not a string get -32602 with the request's id; no error quotes more than ~200 characters of
//! an argument; prompts and resource reads stay within their size caps however large a note is;
//! a name with a control character is neither listed nor readable; a path through a file is "not
//! a folder"; a plugin's result is served as the plugin gave it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;

/// The largest answer to a request carrying a 1 MiB argument: the argument may be quoted, but
/// only its first 200 characters.
const SHORT_ANSWER: usize = 2_000;

/// A note far over every cap: 3 MB of text.
const BIG_BYTES: usize = 3 * 1024 * 1024;

/// What the caps in src/mcp/prompts.rs and src/mcp/resources.rs allow.
const PROMPT_CAP: usize = 200_000;
const PAGE_CAP: usize = 1024 * 1024;

fn vault(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join("a.md"), "# A\n\nSmall.\n").unwrap();
    std::fs::write(root.join("Plan.md"), "# Plan\n").unwrap();
    // Multi-byte characters, so a cut can fall inside one.
    let line = "Big note line with é and 日本 in it.\n";
    let big: String = line.repeat(BIG_BYTES / line.len() + 1);
    std::fs::write(root.join("Big.md"), big).unwrap();
    std::fs::write(root.join("Note\u{1}.md"), "# control\n").unwrap();
}

/// The requests both transports are checked with, by id.
fn requests() -> Vec<Value> {
    let huge = "x".repeat(1 << 20);
    let request = |id: u32, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    vec![
        request(10, "tools/list", json!([1])),
        request(11, "prompts/list", json!("x")),
        request(12, "ping", json!(5)),
        request(13, "resources/list", json!({"cursor": 5})),
        request(14, "tools/list", json!({"cursor": {"page": 2}})),
        request(
            15,
            "prompts/get",
            json!({"name": "summarize_note", "arguments": {"note": huge}}),
        ),
        request(
            16,
            "prompts/get",
            json!({"name": "daily_review", "arguments": {"days": huge}}),
        ),
        request(17, "prompts/get", json!({"name": huge})),
        request(
            18,
            "resources/read",
            json!({"uri": format!("vault://note/{huge}.md")}),
        ),
        request(
            19,
            "prompts/get",
            json!({"name": "daily_review", "arguments": {"days": "1"}}),
        ),
        request(
            20,
            "prompts/get",
            json!({"name": "summarize_note", "arguments": {"note": "Big.md"}}),
        ),
        request(21, "resources/read", json!({"uri": "vault://note/Big.md"})),
        request(22, "resources/list", json!({})),
        request(
            23,
            "resources/read",
            json!({"uri": "vault://note/Note%01.md"}),
        ),
        request(
            24,
            "tools/call",
            json!({"name": "move_note", "arguments": {"note": "a.md", "to": "Plan.md/a.md"}}),
        ),
        request(
            25,
            "tools/call",
            json!({"name": "read_note", "arguments": {"note": "Plan.md/x.md"}}),
        ),
        request(
            26,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": huge},
                   "argument": {"name": "note", "value": huge}}),
        ),
    ]
}

/// Checks every answer to [`requests`]; `read_page` reads another resource URI on the same
/// session (the next page of the big note).
fn check_answers(
    transport: &str,
    answers: &HashMap<i64, Value>,
    read_page: &mut dyn FnMut(&str) -> Value,
) {
    let answer = |id: i64| {
        answers
            .get(&id)
            .unwrap_or_else(|| panic!("{transport}: no answer to {id}: {answers:#?}"))
    };
    // Params that are not an object, and a cursor that is not a string: -32602, with the id.
    for (id, expected) in [
        (10, "must be an object"),
        (11, "must be an object"),
        (12, "must be an object"),
        (13, "`params.cursor` of `resources/list` must be a string"),
        (14, "`params.cursor` of `tools/list` must be a string"),
    ] {
        let error = &answer(id)["error"];
        assert_eq!(error["code"], -32602, "{transport} {id}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(expected), "{transport} {id}: {message}");
    }
    // A 1 MiB argument is never echoed whole, in the message or the data.
    for id in [15, 16, 17, 18, 26] {
        let text = answer(id).to_string();
        assert!(
            text.len() < SHORT_ANSWER,
            "{transport} {id}: {} bytes: {:.300}",
            text.len(),
            text
        );
    }
    for id in [15, 16, 17, 18] {
        assert!(answer(id)["error"].is_object(), "{transport} {id}");
    }
    // The review embeds the big note cut to the budget, with a marker.
    let review = &answer(19)["result"];
    let embedded: Vec<&str> = review["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"]["resource"]["text"].as_str())
        .collect();
    let total: usize = embedded.iter().map(|t| t.len()).sum();
    assert!(
        total <= PROMPT_CAP,
        "{transport}: review embeds {total} bytes"
    );
    assert!(
        embedded
            .iter()
            .any(|t| t.contains("[… cut here: `Big.md` is")),
        "{transport}: no cut marker"
    );
    // summarize_note: the same cap for one note.
    let summary = answer(20)["result"]["messages"][0]["content"]["resource"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(summary.len() <= PROMPT_CAP, "{}", summary.len());
    assert!(summary.starts_with("Big note line"), "{summary:.80}");
    assert!(summary.contains("read_note reads the rest"));
    // A resource read is a page, exact bytes, with the next page's URI in `_meta`.
    let first = &answer(21)["result"]["contents"][0];
    let page_text = first["text"].as_str().unwrap();
    assert!(page_text.len() <= PAGE_CAP, "{}", page_text.len());
    assert!(page_text.len() > PAGE_CAP - 8, "{}", page_text.len());
    let page = &first["_meta"]["vaultchat/page"];
    assert_eq!(page["offset"], 0, "{transport}: {page}");
    assert_eq!(page["bytes"], page_text.len());
    let size = page["size"].as_u64().unwrap();
    assert!(size as usize > BIG_BYTES);
    let mut read = page_text.to_string();
    let mut next = page["next"].as_str().map(str::to_string);
    while let Some(uri) = next {
        let answer = read_page(&uri);
        let contents = &answer["result"]["contents"][0];
        read.push_str(contents["text"].as_str().unwrap());
        next = contents["_meta"]["vaultchat/page"]["next"]
            .as_str()
            .map(str::to_string);
    }
    assert_eq!(read.len() as u64, size, "{transport}: pages add up");
    assert!(read.ends_with("in it.\n"));
    // A control character in a name: not listed, and not readable either.
    let listed = answer(22)["result"]["resources"].to_string();
    assert!(listed.contains("vault://note/a.md"), "{listed}");
    assert!(!listed.contains("%01"), "{transport}: {listed}");
    assert!(answer(23)["error"].is_object(), "{transport}");
    // A path through a file: a plain "not a folder" for the caller to fix, never -32603.
    for id in [24, 25] {
        let result = &answer(id)["result"];
        assert_eq!(result["isError"], true, "{transport} {id}: {}", answer(id));
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("`Plan.md`, which is a file, not a folder"),
            "{transport} {id}: {text}"
        );
    }
}

/// One `vaultchat mcp` on stdio, initialized.
struct StdioSession {
    child: std::process::Child,
    reaped: std::sync::Arc<std::sync::Mutex<bool>>,
    _done: std::sync::mpsc::Sender<()>,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl StdioSession {
    fn start(data: &Path, vault: &Path, extra: &[&str]) -> Self {
        let mut child = cmd(data, vault)
            .arg("mcp")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        // A request left unanswered would block the test forever: past a generous deadline the
        // server is stopped, its stdout ends, and the test fails saying so. `reaped` keeps the
        // watchdog from ever signalling a process id that was reaped (and perhaps reused).
        let reaped = std::sync::Arc::new(std::sync::Mutex::new(false));
        let (done, deadline) = std::sync::mpsc::channel::<()>();
        let pid = child.id().to_string();
        let watched = std::sync::Arc::clone(&reaped);
        std::thread::spawn(move || {
            if deadline
                .recv_timeout(std::time::Duration::from_secs(120))
                .is_err()
            {
                let reaped = watched.lock().unwrap();
                if !*reaped {
                    let _ = std::process::Command::new("kill")
                        .args(["-9", &pid])
                        .status();
                }
            }
        });
        let mut session = Self {
            child,
            reaped,
            _done: done,
            stdin,
            stdout,
        };
        session.send(&initialize(1));
        session.read_until(1);
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: &Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .unwrap();
    }

    fn read_until(&mut self, id: i64) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server ended (or was stopped after 120 s) without answering {id}"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.read_until(id)
    }
}

impl Drop for StdioSession {
    fn drop(&mut self) {
        let mut reaped = self.reaped.lock().unwrap();
        *reaped = true;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bounds-test", "version": "1"}}})
}

#[test]
fn stdio_requests_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("vault");
    vault(&root);
    let data = tmp.path().join("data");
    let mut session = StdioSession::start(&data, &root, &["--allow-writes"]);
    let mut answers = HashMap::new();
    for request in requests() {
        session.send(&request);
        let id = request["id"].as_i64().unwrap();
        answers.insert(id, session.read_until(id));
    }
    // The session is still fine after all that.
    let ping = session.call(99, "ping", json!({}));
    assert_eq!(ping["result"], json!({}));
    let mut next_id = 1000;
    check_answers("stdio", &answers, &mut |uri| {
        next_id += 1;
        session.call(next_id, "resources/read", json!({"uri": uri}))
    });
    // Nothing was moved.
    assert!(root.join("a.md").is_file());
}

/// An HTTP session with `vaultchat mcp --http`, initialized.
struct HttpSession {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    url: String,
    token: String,
    session: Option<String>,
}

impl HttpSession {
    fn start(server: &Server) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut session = Self {
            runtime,
            client: reqwest::Client::new(),
            url: server.url.clone(),
            token: server.token.clone(),
            session: None,
        };
        let (_, headers, answer) = session.post(&initialize(1));
        assert_eq!(answer["id"], 1, "{answer}");
        session.session = headers
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        session.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    /// POSTs one message; the status, headers and the JSON-RPC answer (from a JSON body or the
    /// event stream; `null` for none).
    fn post(&self, message: &Value) -> (u16, reqwest::header::HeaderMap, Value) {
        self.runtime.block_on(async {
            let mut request = self
                .client
                .post(&self.url)
                .bearer_auth(&self.token)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-11-25")
                .body(message.to_string());
            if let Some(id) = &self.session {
                request = request.header("mcp-session-id", id);
            }
            let mut response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let is_stream = headers
                .get("content-type")
                .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
            // Bytes, not text, until the end of an event: a chunk may end inside a character.
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.unwrap() {
                bytes.extend_from_slice(&chunk);
                if is_stream
                    && bytes.ends_with(b"\n\n")
                    && let Some(answer) =
                        stream_answer(&String::from_utf8(bytes.clone()).unwrap(), &message["id"])
                {
                    return (status, headers, answer);
                }
            }
            let body = String::from_utf8(bytes).unwrap();
            let answer = if is_stream {
                stream_answer(&body, &message["id"]).unwrap_or(Value::Null)
            } else {
                serde_json::from_str(&body).unwrap_or(Value::Null)
            };
            (status, headers, answer)
        })
    }
}

/// The message answering `id` among an event stream's `data:` lines.
fn stream_answer(body: &str, id: &Value) -> Option<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| &message["id"] == id && !id.is_null())
}

#[test]
fn http_requests_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("vault");
    vault(&root);
    let data = tmp.path().join("data");
    let server = start_http(&data, &root, &["--allow-writes"]);
    let session = HttpSession::start(&server);
    let mut answers = HashMap::new();
    for request in requests() {
        let (status, _, answer) = session.post(&request);
        let id = request["id"].as_i64().unwrap();
        // A JSON body with bad params is answered in JSON-RPC, not refused as a media type.
        assert_ne!(status, 415, "{id}: {answer}");
        if id <= 14 {
            assert_eq!(status, 200, "{id}: {answer}");
        }
        answers.insert(id, answer);
    }
    let mut next_id = 1000;
    check_answers("http", &answers, &mut |uri| {
        next_id += 1;
        session
            .post(
                &json!({"jsonrpc": "2.0", "id": next_id, "method": "resources/read",
                "params": {"uri": uri}}),
            )
            .2
    });
    // A body that is not JSON: a JSON-RPC parse error, 400.
    let (status, _, answer) = session.runtime.block_on(async {
        let response = session
            .client
            .post(&session.url)
            .bearer_auth(&session.token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body("{\"id\": 1,")
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body: Value = response.json().await.unwrap();
        (status, headers, body)
    });
    assert_eq!(status, 400);
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // Bad params from another site's page are still refused as such, before any answer.
    let (status, _) = session.runtime.block_on(async {
        let response = session
            .client
            .post(&session.url)
            .bearer_auth(&session.token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("origin", "https://evil.example")
            .body(
                json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": [1]})
                    .to_string(),
            )
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    });
    assert_eq!(status, 403);
    assert!(root.join("a.md").is_file());
}

/// A plugin's result reaches the client as the plugin gave it: no `"null"` block first, its own
/// text rather than vaultchat's rendering of it, its image as an image.
#[test]
fn a_plugin_result_is_passed_through_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("vault");
    std::fs::create_dir_all(root.join(".vaultchat")).unwrap();
    std::fs::write(root.join("a.md"), "# A\n").unwrap();
    std::fs::copy(
        repo().join("tests/peers/echo_server.py"),
        root.join(".vaultchat/echo_server.py"),
    )
    .unwrap();
    std::fs::write(
        root.join(".vaultchat/plugins.toml"),
        format!(
            "[plugins.echo]\ncommand = {:?}\nargs = [\".vaultchat/echo_server.py\"]\n",
            venv_python().display().to_string()
        ),
    )
    .unwrap();
    let data = tmp.path().join("data");
    let trust = run(&data, &root, &["trust"]);
    assert!(
        trust.status.success(),
        "{}",
        String::from_utf8_lossy(&trust.stderr)
    );
    let mut session = StdioSession::start(&data, &root, &["--allow-writes"]);
    let tools = session.call(2, "tools/list", json!({}));
    let picture = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .find(|name| name.ends_with("picture"))
        .unwrap_or_else(|| panic!("no picture tool: {tools}"))
        .to_string();
    let answer = session.call(3, "tools/call", json!({"name": picture, "arguments": {}}));
    let result = &answer["result"];
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "{result}");
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "a red dot"}),
        "{result}"
    );
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["mimeType"], "image/png");
    assert!(result.get("structuredContent").is_none(), "{result}");
}
