//! vaultchat as an MCP client: real servers as child processes speaking MCP over stdio.
//!
//! Peers: the reference filesystem server from npm (`@modelcontextprotocol/server-filesystem`,
//! installed into tests/peers by scripts/install-test-deps), a small server written with the
//! official Python SDK (tests/peers/echo_server.py, SDK in target/test-venv), and broken
//! "servers" made of shell one-liners. The library is driven directly, and `vaultchat ask` end
//! to end against the fake LLM provider.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{
    Chunking, FakeLlm, FakeUsage, Recorded, Reply, anthropic_text, anthropic_tool_calls,
    openai_text, openai_tool_calls,
};
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vaultchat::mcp::{McpServerSpec, McpServerState, McpServers, ServerOrigin};
use vaultchat::tools::{Tier, Tool, ToolError};

fn echo_script() -> PathBuf {
    repo().join("tests/peers/echo_server.py")
}

fn filesystem_server() -> PathBuf {
    let bin = repo().join("tests/peers/node_modules/.bin/mcp-server-filesystem");
    assert!(
        bin.exists(),
        "{} is missing: run scripts/install-test-deps (it installs the MCP peers from npm)",
        bin.display()
    );
    bin
}

fn spec(name: &str, command: impl AsRef<Path>, args: &[&str]) -> McpServerSpec {
    McpServerSpec {
        name: name.into(),
        command: command.as_ref().to_string_lossy().into_owned(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: Default::default(),
        cwd: None,
        enabled: true,
        call_timeout: Duration::from_secs(20),
        startup_timeout: Duration::from_secs(30),
        origin: ServerOrigin::Person,
        trusted_file: None,
    }
}

fn echo_spec(dir: &Path) -> McpServerSpec {
    let mut echo = spec("echo", venv_python(), &[echo_script().to_str().unwrap()]);
    echo.env.insert(
        "ECHO_CALL_LOG".into(),
        dir.join("calls.jsonl").display().to_string(),
    );
    echo.env.insert(
        "ECHO_PID_FILE".into(),
        dir.join("pids").display().to_string(),
    );
    echo
}

fn tool<'a>(servers: &'a [std::sync::Arc<dyn Tool>], name: &str) -> &'a dyn Tool {
    servers
        .iter()
        .find(|t| t.spec().name == name)
        .unwrap_or_else(|| {
            panic!(
                "no tool {name}; there are {:?}",
                servers
                    .iter()
                    .map(|t| t.spec().name.clone())
                    .collect::<Vec<_>>()
            )
        })
        .as_ref()
}

fn state_of(servers: &McpServers, name: &str) -> McpServerState {
    servers
        .statuses()
        .iter()
        .find(|s| s.name == name)
        .unwrap()
        .state
        .clone()
}

fn failure_of(servers: &McpServers, name: &str) -> String {
    match state_of(servers, name) {
        McpServerState::Failed { message } => message,
        other => panic!("{name} did not fail: {other:?}"),
    }
}

/// The process ids the echo server wrote at start-up.
fn pids(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// Whether `pid` is still a process (a zombie counts: nobody waited for it).
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Wait up to a few seconds for `pid` to be gone.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The calls the echo server received, as `{"tool", "args"}` objects.
fn calls(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filesystem_server_offers_prefixed_tools_and_reads_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("hello.md"), "# Hello\n\nfrom the vault\n").unwrap();
    let servers = McpServers::start(vec![spec(
        "fs",
        filesystem_server(),
        &[root.to_str().unwrap()],
    )])
    .await;
    let tools = servers.tools();
    let McpServerState::Running { tools: count } = state_of(&servers, "fs") else {
        panic!("{:?}", servers.statuses());
    };
    assert_eq!(count, tools.len());
    let names: Vec<String> = tools.iter().map(|t| t.spec().name.clone()).collect();
    for expected in ["fs__read_text_file", "fs__write_file", "fs__list_directory"] {
        assert!(names.contains(&expected.to_string()), "{names:?}");
    }
    let read = tool(&tools, "fs__read_text_file");
    assert_eq!(read.spec().tier, Tier::Plugin);
    assert!(read.spec().annotations.read_only_hint);
    assert_eq!(read.spec().input_schema["type"], "object");
    assert!(
        read.spec().input_schema.get("$schema").is_none(),
        "the dialect marker is dropped for the providers"
    );
    let write = tool(&tools, "fs__write_file");
    assert!(!write.spec().annotations.read_only_hint);

    let path = root.join("hello.md");
    let output = read
        .call(json!({"path": path.to_str().unwrap()}))
        .await
        .unwrap();
    assert_eq!(output.text, "# Hello\n\nfrom the vault\n");
    // Outside its allowed folder the server answers with isError: a tool error for the model.
    let err = read.call(json!({"path": "/etc/passwd"})).await.unwrap_err();
    let ToolError::Invalid(message) = err else {
        panic!("{err:?}");
    };
    assert!(message.contains("Access denied"), "{message}");
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_results_map_to_text_images_errors_and_structured_content() {
    let dir = tempfile::tempdir().unwrap();
    let mut echo = echo_spec(dir.path());
    echo.call_timeout = Duration::from_secs(2);
    let servers = McpServers::start(vec![echo]).await;
    assert_eq!(
        state_of(&servers, "echo"),
        McpServerState::Running { tools: 7 }
    );
    let tools = servers.tools();

    let echo = tool(&tools, "echo__echo");
    assert_eq!(echo.spec().description, "Echo the message back.");
    assert!(echo.spec().annotations.read_only_hint);
    assert!(!echo.spec().annotations.open_world_hint);
    let out = echo.call(json!({"message": "hi there"})).await.unwrap();
    assert_eq!(out.text, "echo: hi there");
    assert_eq!(out.structured, json!({"result": "echo: hi there"}));

    let out = tool(&tools, "echo__picture").call(json!({})).await.unwrap();
    assert_eq!(out.text, "a red dot\n[image: image/png, 70 bytes]");
    assert_eq!(out.images.len(), 1);
    assert_eq!(out.images[0].media_type, "image/png");
    assert!(out.images[0].data.starts_with("iVBORw0KGgo"));

    let err = tool(&tools, "echo__fail")
        .call(json!({"reason": "no luck"}))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::Invalid("it failed: no luck".into()));

    let out = tool(&tools, "echo__weather").call(json!({})).await.unwrap();
    assert_eq!(out.text, r#"{"temperature":33,"unit":"C"}"#);

    // The dotted name is sanitised, and the call still reaches the tool by its real name.
    let out = tool(&tools, "echo__dotted_name")
        .call(Value::Null)
        .await
        .unwrap();
    assert_eq!(out.text, "dotted");

    // Longer than the call timeout: cancelled (well before the 30 s sleep would end), and the
    // server keeps serving.
    let started = Instant::now();
    let err = tool(&tools, "echo__slow")
        .call(json!({"seconds": 30}))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(25));
    let ToolError::Internal(message) = err else {
        panic!("{err:?}");
    };
    assert!(
        message.contains("`slow` on the MCP server `echo` did not answer within 2 s"),
        "{message}"
    );
    let out = echo.call(json!({"message": "still here"})).await.unwrap();
    assert_eq!(out.text, "echo: still here");

    // Arguments that are not an object never reach the server.
    let err = echo.call(json!(["x"])).await.unwrap_err();
    assert!(matches!(err, ToolError::Invalid(_)), "{err:?}");
    let seen: Vec<String> = calls(dir.path())
        .iter()
        .map(|c| c["tool"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, ["echo", "picture", "fail", "weather", "slow", "echo"]);
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_servers_fail_with_one_clear_sentence_and_the_rest_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let mut garbage = spec(
        "garbage",
        "sh",
        &["-c", "while read line; do echo 'hello, I am not MCP'; done"],
    );
    garbage.startup_timeout = Duration::from_secs(2);
    let mut wrong_answer = spec(
        "wrong",
        "python3",
        &[
            "-c",
            "import sys, json\n\
             m = json.loads(sys.stdin.readline())\n\
             print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'bogus': True}}), flush=True)\n\
             sys.stdin.read()",
        ],
    );
    wrong_answer.startup_timeout = Duration::from_secs(3);
    let specs = vec![
        spec("missing", "vaultchat-test-no-such-server", &[]),
        spec(
            "quitter",
            "sh",
            &[
                "-c",
                "echo 'config file /nope.toml is missing' >&2; echo 'more detail' >&2; exit 2",
            ],
        ),
        garbage,
        wrong_answer,
        echo_spec(dir.path()),
    ];
    let servers = McpServers::start(specs).await;

    assert_eq!(
        failure_of(&servers, "missing"),
        "`vaultchat-test-no-such-server` was not found: install it, or give its full path as `command` in [mcp.servers.missing]"
    );
    let quitter = failure_of(&servers, "quitter");
    assert!(
        quitter.starts_with("`sh -c echo 'config file /nope.toml is missing'"),
        "{quitter}"
    );
    assert!(
        quitter.ends_with(
            "exited before finishing the MCP handshake: config file /nope.toml is missing"
        ),
        "{quitter}"
    );
    let garbage = failure_of(&servers, "garbage");
    assert!(
        garbage.contains("did not finish the MCP handshake within 2 s"),
        "{garbage}"
    );
    assert!(
        garbage.contains("stdout must carry only JSON-RPC"),
        "{garbage}"
    );
    let wrong = failure_of(&servers, "wrong");
    assert!(wrong.starts_with("`python3 -c "), "{wrong}");
    assert!(
        wrong.contains("handshake"),
        "the message names the handshake: {wrong}"
    );
    for message in [&quitter, &garbage, &wrong] {
        assert!(!message.contains('\n'), "one line: {message}");
    }

    // The healthy one works beside them.
    let tools = servers.tools();
    assert!(tools.iter().all(|t| t.spec().name.starts_with("echo__")));
    let out = tool(&tools, "echo__echo")
        .call(json!({"message": "fine"}))
        .await
        .unwrap();
    assert_eq!(out.text, "echo: fine");
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_is_restarted_once_on_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let servers = McpServers::start(vec![echo_spec(dir.path())]).await;
    let tools = servers.tools();
    let (crash, echo) = (tool(&tools, "echo__crash"), tool(&tools, "echo__echo"));

    let err = crash.call(json!({})).await.unwrap_err();
    let ToolError::Internal(message) = err else {
        panic!("{err:?}");
    };
    assert_eq!(
        message,
        "the MCP server `echo` exited while running `crash`; it said: crashing on purpose; it is restarted on the next call"
    );
    // The next call starts it again.
    let out = echo.call(json!({"message": "again"})).await.unwrap();
    assert_eq!(out.text, "echo: again");
    assert_eq!(pids(dir.path()).len(), 2, "one restart");

    // A second death is final.
    crash.call(json!({})).await.unwrap_err();
    let err = echo.call(json!({"message": "no"})).await.unwrap_err();
    let ToolError::Internal(message) = err else {
        panic!("{err:?}");
    };
    assert!(
        message.contains("was restarted once already, so it stays stopped"),
        "{message}"
    );
    assert_eq!(pids(dir.path()).len(), 2, "no second restart");
    servers.shutdown().await;
}

/// A running vault plugin stops the moment its plugins file changes: trust is for the exact
/// content of the plugins' files, so an edit withdraws it in a running app or `vaultchat mcp` too.
/// The call is refused before it reaches the server (its call log keeps one call), the message
/// names the file that changed, and the plugin stays stopped for the run even when the trusted
/// bytes come back (its process is gone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_the_plugins_file_stops_a_running_plugin_at_once() {
    use vaultchat::mcp::plugins::{TrustedFile, VaultPlugins};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    std::fs::create_dir_all(root.join(".vaultchat")).unwrap();
    let file = root.join(".vaultchat/plugins.toml");
    let trusted_bytes = "[plugins.echo]\ncommand = \"python3\"\n";
    std::fs::write(&file, trusted_bytes).unwrap();
    let vault = vaultchat::vault::Vault::open(&root).unwrap();
    let plugins = VaultPlugins::load(&vault).unwrap().unwrap();
    let mut echo = echo_spec(dir.path());
    echo.origin = ServerOrigin::Plugin { trusted: true };
    echo.trusted_file = Some(TrustedFile {
        vault_root: vault.root().to_path_buf(),
        sha256: plugins.sha256,
        covered: plugins.covered,
        record: None,
    });
    let servers = McpServers::start(vec![echo]).await;
    let tools = servers.tools();
    let echo = tool(&tools, "echo__echo");
    assert_eq!(
        echo.call(json!({"message": "one"})).await.unwrap().text,
        "echo: one"
    );

    std::fs::write(&file, format!("{trusted_bytes}args = [\"--more\"]\n")).unwrap();
    let err = echo.call(json!({"message": "two"})).await.unwrap_err();
    let ToolError::Invalid(message) = err else {
        panic!("{err:?}");
    };
    assert!(
        message.contains("changed since they were trusted (.vaultchat/plugins.toml (changed))")
            && message.contains("`vaultchat trust`"),
        "{message}"
    );
    assert_eq!(
        calls(dir.path()).len(),
        1,
        "the refused call never reached the server"
    );

    std::fs::write(&file, trusted_bytes).unwrap();
    let err = echo.call(json!({"message": "three"})).await.unwrap_err();
    assert!(err.to_string().contains("is stopped"), "{err}");
    assert_eq!(calls(dir.path()).len(), 1);
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_waits_for_every_server_and_later_calls_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let servers = McpServers::start(vec![
        echo_spec(dir.path()),
        spec("fs", filesystem_server(), &[root.to_str().unwrap()]),
    ])
    .await;
    let pid = pids(dir.path())[0];
    assert!(alive(pid));
    servers.shutdown().await;
    // Waited for, so not even a zombie is left.
    assert!(gone(pid), "the echo server {pid} is still there");
    let tools = servers.tools();
    let err = tool(&tools, "echo__echo")
        .call(json!({"message": "x"}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::Internal("the MCP server `echo` was shut down".into())
    );
}

// ---------------------------------------------------------------------------------------------
// `vaultchat ask`, `tools` and `doctor` end to end

#[derive(Debug, Clone, Copy, PartialEq)]
enum P {
    Anthropic,
    OpenAi,
}

struct Setup {
    tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

/// A vault and a config with the echo server (and `extra` config lines).
fn setup(extra: &str) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Note.md"), "# Note\n").unwrap();
    let data = tmp.path().join("data");
    let config = tmp.path().join("config.toml");
    let text = format!(
        "[provider]\nidle_timeout_secs = 5\nconnect_timeout_secs = 2\n\n\
         [mcp.servers.echo]\ncommand = {python:?}\nargs = [{script:?}]\n\
         env = {{ ECHO_CALL_LOG = {log:?}, ECHO_PID_FILE = {pids:?}, VAULT = \"${{VAULT_PATH}}\" }}\n\
         cwd = \"${{VAULT_PATH}}\"\n{extra}",
        python = venv_python().display().to_string(),
        script = echo_script().display().to_string(),
        log = tmp.path().join("calls.jsonl").display().to_string(),
        pids = tmp.path().join("pids").display().to_string(),
    );
    std::fs::write(&config, text).unwrap();
    Setup {
        tmp,
        vault,
        data,
        config,
    }
}

fn vaultchat(s: &Setup) -> std::process::Command {
    let mut c = cmd(&s.data, &s.vault);
    c.arg("--config").arg(&s.config);
    c
}

fn ask(s: &Setup, fake: &FakeLlm, p: P, args: &[&str]) -> std::process::Output {
    let mut c = vaultchat(s);
    match p {
        P::Anthropic => c
            .args(["--provider", "anthropic", "--base-url", &fake.base_url])
            .env("ANTHROPIC_API_KEY", "sk-ant-test"),
        P::OpenAi => c
            .args(["--provider", "openai", "--base-url", &fake.openai_base()])
            .env("OPENAI_API_KEY", "sk-openai-test"),
    };
    c.arg("ask").args(args).output().unwrap()
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn usage() -> FakeUsage {
    FakeUsage {
        input: 10,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    }
}

/// The model calls `name` with `input`, then (after the result) says "done".
fn script(p: P, name: &str, input: Value) -> Vec<Reply> {
    let calls = [("call_1", name, input)];
    let (first, second) = match p {
        P::Anthropic => (
            anthropic_tool_calls(Some("Let me ask the server."), &calls, usage()),
            anthropic_text("done", usage()),
        ),
        P::OpenAi => (
            openai_tool_calls(None, &calls, usage()),
            openai_text("done", usage()),
        ),
    };
    vec![
        Reply::Sse {
            body: first,
            chunking: Chunking::Fixed(7),
        },
        Reply::Sse {
            body: second,
            chunking: Chunking::Whole,
        },
    ]
}

/// The tool results of a request: (is_error, text, image media types).
fn tool_result(p: P, req: &Recorded) -> (bool, String, Vec<String>) {
    let messages = req.body["messages"].as_array().unwrap();
    match p {
        P::Anthropic => {
            let last = messages.last().unwrap();
            let block = last["content"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["type"] == "tool_result")
                .unwrap();
            let parts = block["content"].as_array().cloned().unwrap_or_default();
            let text = parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("");
            let images = parts
                .iter()
                .filter(|p| p["type"] == "image")
                .map(|p| p["source"]["media_type"].as_str().unwrap().to_string())
                .collect();
            (block["is_error"].as_bool().unwrap_or(false), text, images)
        }
        P::OpenAi => {
            let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
            let text = tool["content"].as_str().unwrap_or_default().to_string();
            (text.starts_with("Error: "), text, Vec::new())
        }
    }
}

fn tool_names(p: P, req: &Recorded) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| match p {
            P::Anthropic => t["name"].as_str().unwrap().to_string(),
            P::OpenAi => t["function"]["name"].as_str().unwrap().to_string(),
        })
        .collect()
}

#[test]
fn ask_offers_the_servers_tools_and_sends_back_what_the_server_said() {
    for p in [P::Anthropic, P::OpenAi] {
        let s = setup("");
        let fake = FakeLlm::start(script(p, "echo__echo", json!({"message": "hello"})));
        let out = ask(
            &s,
            &fake,
            p,
            &["say hello through the server", "--json", "--approve", "all"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result = json_of(&out);
        assert_eq!(result["reply"], "done");
        let call = &result["tool_calls"][0];
        assert_eq!(call["name"], "echo__echo");
        assert_eq!(call["is_error"], false);
        // Read-only by the server's word, yet asked (and approved by --approve all).
        assert_eq!(call["decision"], "approved_once");
        assert_eq!(result["edits"], json!([]));

        let requests = fake.requests();
        assert_eq!(requests.len(), 2);
        let names = tool_names(p, &requests[0]);
        assert!(names.contains(&"echo__echo".to_string()), "{names:?}");
        assert!(names.contains(&"read_note".to_string()), "{names:?}");
        let (is_error, text, _) = tool_result(p, &requests[1]);
        assert!(!is_error);
        assert_eq!(text, "echo: hello");
        assert_eq!(
            calls(s.tmp.path()),
            [json!({"tool": "echo", "args": {"message": "hello"}})]
        );
        // `ask` waited for its server: no process (not even a zombie) outlives it.
        let pids = pids(s.tmp.path());
        assert_eq!(pids.len(), 1);
        assert!(gone(pids[0]), "the server {} outlived ask", pids[0]);
    }
}

#[test]
fn with_approve_none_the_call_is_denied_and_never_reaches_the_server() {
    let p = P::Anthropic;
    let s = setup("");
    let fake = FakeLlm::start(script(p, "echo__echo", json!({"message": "secret"})));
    let out = ask(&s, &fake, p, &["try it", "--json", "--approve", "none"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = json_of(&out);
    assert_eq!(result["tool_calls"][0]["decision"], "denied");
    assert_eq!(result["tool_calls"][0]["is_error"], true);
    let (is_error, text, _) = tool_result(p, &fake.requests()[1]);
    assert!(is_error);
    assert!(text.starts_with("The person declined this call"), "{text}");
    assert_eq!(calls(s.tmp.path()), Vec::<Value>::new());
}

#[test]
fn an_allow_rule_lets_the_tool_run_without_asking() {
    let p = P::Anthropic;
    let s = setup("\n[permissions]\nallow = [\"echo__echo\"]\n");
    let fake = FakeLlm::start(script(p, "echo__echo", json!({"message": "ok"})));
    let out = ask(&s, &fake, p, &["go", "--json", "--approve", "none"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = json_of(&out);
    assert_eq!(result["tool_calls"][0]["decision"], "allowed");
    assert_eq!(tool_result(p, &fake.requests()[1]).1, "echo: ok");
    assert_eq!(calls(s.tmp.path()).len(), 1);
}

#[test]
fn an_image_from_the_server_reaches_the_model() {
    let p = P::Anthropic;
    let s = setup("\n[permissions]\nallow = [\"echo__picture\"]\n");
    let fake = FakeLlm::start(script(p, "echo__picture", json!({})));
    let out = ask(&s, &fake, p, &["draw", "--json", "--approve", "none"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (is_error, text, images) = tool_result(p, &fake.requests()[1]);
    assert!(!is_error);
    assert_eq!(text, "a red dot\n[image: image/png, 70 bytes]");
    assert_eq!(images, ["image/png"]);
}

#[test]
fn a_server_that_fails_is_named_and_ask_goes_on_without_it() {
    let p = P::Anthropic;
    let s = setup("\n[mcp.servers.broken]\ncommand = \"vaultchat-test-no-such-server\"\n");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: anthropic_text("fine", usage()),
        chunking: Chunking::Whole,
    }]);
    let out = ask(&s, &fake, p, &["hi", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_of(&out)["reply"], "fine");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("vaultchat: the MCP server `broken` did not start: `vaultchat-test-no-such-server` was not found"),
        "{stderr}"
    );
    let names = tool_names(p, &fake.requests()[0]);
    assert!(names.contains(&"echo__echo".to_string()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("broken__")),
        "{names:?}"
    );
}

#[test]
fn tools_and_doctor_list_the_servers() {
    let s = setup(
        "\n[mcp.servers.broken]\ncommand = \"vaultchat-test-no-such-server\"\n\n[mcp.servers.off]\ncommand = \"x\"\nenabled = false\n",
    );
    let out = vaultchat(&s).args(["tools", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let echo = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo__echo")
        .unwrap();
    assert_eq!(echo["tier"], "plugin");
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(echo["inputSchema"]["required"], json!(["message"]));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the MCP server `broken` did not start"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = vaultchat(&s).arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("ok    mcp server echo: started, 7 tools"),
        "{report}"
    );
    assert!(
        report.contains("FAIL  mcp server broken: `vaultchat-test-no-such-server` was not found"),
        "{report}"
    );
    assert!(
        report.contains("ok    mcp server off: disabled"),
        "{report}"
    );
    assert_eq!(out.status.code(), Some(1), "a failed server is a problem");
    // Every server the commands started was waited for.
    for pid in pids(s.tmp.path()) {
        assert!(gone(pid), "the server {pid} outlived the command");
    }
}

#[test]
fn rules_naming_no_tool_are_errors_and_doctor_checks_server_tools() {
    // A misspelt built-in tool stops `ask` before anything runs, naming the closest tool.
    let s = setup("\n[permissions]\ndeny = [\"updte_note\"]\n");
    let fake = FakeLlm::start(Vec::new());
    let out = ask(&s, &fake, P::Anthropic, &["hi", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`updte_note` names no tool")
            && stderr.contains("did you mean `update_note`?"),
        "{stderr}"
    );
    assert!(fake.requests().is_empty(), "the model was never asked");

    // A configured server's tools are accepted by prefix until doctor starts the server and
    // finds the name missing from what it lists.
    let s =
        setup("\n[permissions]\nallow = [\"echo__ecko\", \"echo__echo\"]\ndeny = [\"nope__x\"]\n");
    let out = vaultchat(&s).arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("FAIL  permissions: [permissions] deny: `nope__x`: `nope__x` names no tool: there is no MCP server `nope`"),
        "{report}"
    );
    let s = setup("\n[permissions]\nallow = [\"echo__ecko\", \"echo__echo\"]\n");
    let out = vaultchat(&s).arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("FAIL  permissions: [permissions] `echo__ecko`: the MCP server `echo` has no tool `echo__ecko`; did you mean `echo__echo`?"),
        "{report}"
    );
    assert!(!report.contains("`echo__echo`:"), "{report}");
}

/// The full-screen app in a real terminal: the server starts after the first frame, `/mcp` shows
/// it running with its tools, and the model's call to `echo__echo` waits in the banner — the
/// server sees nothing until `y`, and its answer reaches the model.
#[test]
fn the_app_lists_the_servers_tools_and_asks_before_calling_them() {
    use common::tmux::{Tmux, app_line};
    let s = setup("");
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: anthropic_tool_calls(
                Some("Let me ask the server."),
                &[("call_1", "echo__echo", json!({"message": "from the app"}))],
                usage(),
            ),
            chunking: Chunking::Fixed(7),
        },
        Reply::Sse {
            body: anthropic_text("The server said hello back.", usage()),
            chunking: Chunking::Whole,
        },
    ]);
    let config = vec!["--config".to_string(), s.config.display().to_string()];
    let line = app_line(&[], &s.data, &fake.base_url, &config, &s.vault);
    let tmux = Tmux::start(&line, 120, 40);
    tmux.wait_for("the ready badge", |screen| {
        screen.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.type_text("/mcp");
    tmux.keys(&["Enter"]);
    // The view opens at once (the server may still be starting; it is reloaded when it has
    // started); its end lists the servers (below the fold of 40 rows: End goes there).
    tmux.wait_text("Tools · ");
    tmux.wait_for("the plugin and MCP tools section", |screen| {
        tmux.keys(&["End"]);
        screen.contains("Plugin and MCP tools")
    });
    let screen = tmux.wait_for("the server running, at the end of the view", |screen| {
        tmux.keys(&["End"]);
        screen.contains("running · ")
    });
    assert!(screen.contains("echo"), "the server is named:\n{screen}");
    assert!(
        screen.contains("echo__echo"),
        "its tools are listed under their chat names:\n{screen}"
    );
    tmux.keys(&["Escape"]);

    tmux.type_text("Say hello through the server");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("Allow echo__echo?");
    assert!(
        screen.contains("from the app"),
        "the banner shows the input:\n{screen}"
    );
    // No wait is needed here: the agent asks from the task that would call the server, and
    // calls only after the answer; the server logs a call before it answers it, so a call made
    // before asking would be in the log by the time the banner shows.
    assert!(
        calls(s.tmp.path()).is_empty(),
        "the server was called before the answer"
    );
    tmux.keys(&["y"]);
    tmux.wait_text("The server said hello back.");
    let logged = calls(s.tmp.path());
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["args"]["message"], "from the app");
    let (is_error, text, _) = tool_result(P::Anthropic, &fake.requests()[1]);
    assert!(!is_error);
    assert!(text.contains("echo: from the app"), "{text}");

    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    // The server process went with the app.
    let deadline = Instant::now() + Duration::from_secs(10);
    for pid in pids(s.tmp.path()) {
        while !gone(pid) {
            assert!(Instant::now() < deadline, "server {pid} outlived the app");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
