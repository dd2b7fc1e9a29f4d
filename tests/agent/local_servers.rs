//! Local servers that cannot silently lose a request (issue 19, docs/decisions.md §49), each
//! against a loopback server that behaves as the real one does:
//!
//! - an Ollama-like server whose `/api/show` says the model was trained for 40,960 tokens while
//!   `/api/ps` says it was loaded with 4,096, and which, like Ollama, keeps only the last 4,096
//!   tokens of a longer request and answers 200 with the smaller `prompt_tokens`;
//! - the same server before the model is loaded (no `/api/ps` answer): the cut is seen only in
//!   the reported prompt tokens;
//! - a llama.cpp-like server whose `/props` says `chat_template_caps.supports_tools: false`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{self, fake_llm::*};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use vaultchat::agent::{
    Agent, AgentEvent, AgentSettings, NoteContext, Op, SessionLog, TurnEnd, TurnOutcome,
};
use vaultchat::config::{Config, Paths};
use vaultchat::llm::{Provider, ProviderKind, ProviderSettings};
use vaultchat::permission::RuleSet;
use vaultchat::store::{Actor, Store};
use vaultchat::tools::Registry;
use vaultchat::tools::workspace::{self, Workspace};
use vaultchat::vault::Vault;

const MODEL: &str = "qwen3:8b";
/// What Ollama allocates below 24 GiB of VRAM.
const RUNTIME: u64 = 4_096;
/// The reply of the fake when it saw the whole request.
const WHOLE: &str = "I read the whole conversation.";
/// The reply of the fake when it dropped the start of the request.
const FRAGMENT: &str = "I saw only the end of something.";

/// Ollama's `/api/show` of a model trained for 40,960 tokens (qwen3's shape; tools capable).
fn show_body() -> String {
    json!({
        "modelfile": "FROM qwen3:8b\n",
        "parameters": "temperature 0.6\ntop_k 20",
        "template": "{{ .Prompt }}",
        "details": {"format": "gguf", "family": "qwen3", "parameter_size": "8.2B"},
        "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
        "capabilities": ["completion", "tools", "thinking"]
    })
    .to_string()
}

fn ps_body() -> String {
    let ps = models_fixture("ollama_ps.json");
    assert!(ps.contains("\"context_length\": 4096"), "{ps}");
    ps
}

/// The tokens of an OpenAI chat request, as the server counts them: the text of every message
/// with its framing, and the tool definitions.
fn prompt_tokens(body: &Value) -> u64 {
    let count = |text: &str| vaultchat::llm::tokens::estimate_text(MODEL, text);
    let mut tokens = 3;
    for message in body["messages"].as_array().into_iter().flatten() {
        tokens += 5;
        match &message["content"] {
            Value::String(text) => tokens += count(text),
            Value::Array(parts) => {
                for part in parts {
                    tokens += count(part["text"].as_str().unwrap_or(""));
                }
            }
            _ => {}
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            tokens += count(&call["function"].to_string());
        }
    }
    if let Some(tools) = body.get("tools") {
        tokens += count(&tools.to_string());
    }
    tokens
}

/// The text of every message of a request.
fn request_text(body: &Value) -> String {
    body["messages"].to_string()
}

/// A server that, like Ollama, keeps the last `runtime` tokens of a longer request, reports
/// what it kept, and says whether it saw the start (the system prompt) of the request.
fn ollama_like(runtime: u64) -> FakeLlm {
    let responder: Responder = Arc::new(move |request: &Recorded| {
        let sent = prompt_tokens(&request.body);
        let kept = sent.min(runtime);
        let is_summary = request_text(&request.body).contains("<conversation>");
        let text = match (sent > runtime, is_summary) {
            (true, _) => FRAGMENT,
            (false, true) => "The person asked about the garden note; it lists the weekly plan.",
            (false, false) => WHOLE,
        };
        Reply::Sse {
            body: openai_text(
                text,
                FakeUsage {
                    input: kept,
                    output: 9,
                    ..FakeUsage::default()
                },
            ),
            chunking: Chunking::Whole,
        }
    });
    let fake = FakeLlm::start_responding(responder);
    fake.serve_info(
        "/v1/models",
        200,
        &json!({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "library"}]})
            .to_string(),
    );
    fake.serve_info("/api/show", 200, &show_body());
    fake
}

/// A note of about 8,000 tokens of prose.
fn big_note() -> String {
    let mut text = String::from("# Garden\n\n");
    for week in 0..400 {
        text.push_str(&format!(
            "Week {week}: sow beans by the north fence, turn compost number {}, water tomatoes at dusk.\n",
            week * 7 % 13
        ));
    }
    text
}

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
}

fn setup(base: &str, extra: &str) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(vault.join("Garden.md"), big_note()).unwrap();
    write_config(&data, base, extra);
    Setup {
        _tmp: tmp,
        vault,
        data,
    }
}

fn write_config(data: &Path, base: &str, extra: &str) {
    std::fs::write(
        data.join("config.toml"),
        format!(
            "[provider]\nkind = \"openai\"\nbase_url = \"{base}\"\nmodel = \"{MODEL}\"\nidle_timeout_secs = 10\n{extra}"
        ),
    )
    .unwrap();
}

fn ask(s: &Setup, args: &[&str]) -> (std::process::Output, String) {
    let out = common::cmd(&s.data, &s.vault)
        .arg("ask")
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

/// The first run reads the big note into the session with a server that keeps everything; the
/// second continues it with the Ollama-like server that runs the model with 4,096 tokens: the
/// window of `/api/ps` wins over `/api/show`'s 40,960, no request over 4,096 tokens reaches it,
/// and the answer comes from a compacted conversation it saw whole (its start included).
#[test]
fn ollama_allocated_context_wins_and_no_request_passes_it() {
    let roomy = FakeLlm::start(vec![
        Reply::Sse {
            body: openai_tool_calls(
                None,
                &[("call_1", "read_note", json!({"note": "Garden.md"}))],
                FakeUsage::default(),
            ),
            chunking: Chunking::Whole,
        },
        Reply::Sse {
            body: openai_text("It is a weekly plan.", FakeUsage::default()),
            chunking: Chunking::Whole,
        },
    ]);
    let s = setup(
        &roomy.openai_base(),
        "[provider.context_windows]\n\"qwen3:8b\" = 65536\n",
    );
    let (out, stderr) = ask(&s, &["What is in Garden.md?"]);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(roomy.requests().len(), 2, "{stderr}");
    assert!(
        prompt_tokens(&roomy.requests()[1].body) > 8 * RUNTIME / 4,
        "the note was read into the session"
    );

    let ollama = ollama_like(RUNTIME);
    ollama.serve_info("/api/ps", 200, &ps_body());
    write_config(&s.data, &ollama.openai_base(), "");
    let (out, stderr) = ask(&s, &["--continue", "--json", "And in one line?"]);
    assert!(out.status.success(), "{stderr}");
    let requests = ollama.requests();
    assert!(!requests.is_empty(), "{stderr}");
    for request in &requests {
        let tokens = prompt_tokens(&request.body);
        assert!(
            tokens <= RUNTIME,
            "a request of {tokens} tokens reached a server running with {RUNTIME}:\n{stderr}"
        );
    }
    let last = requests.last().unwrap();
    let messages = last.body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(
        messages.last().unwrap()["content"],
        "And in one line?",
        "the question is sent whole"
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["reply"], WHOLE, "{stderr}");
    assert!(json.get("warnings").is_none(), "{json}");
    assert!(
        json["compactions"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "the conversation was compacted: {json}"
    );
    // The small window got the core tools, not all 27.
    let tools = last.body["tools"].as_array().map_or(0, Vec::len);
    assert!((1..=6).contains(&tools), "{tools} tools sent");
}

/// The issue's own case: a question that links an 8,000-token note, to a model Ollama runs with
/// 4,096 tokens. Sent, the start would be dropped; it is not sent, and the person is told why and
/// how to give the model more.
#[test]
fn a_question_larger_than_the_allocated_context_is_not_sent_to_be_cut() {
    let ollama = ollama_like(RUNTIME);
    ollama.serve_info("/api/ps", 200, &ps_body());
    let s = setup(&ollama.openai_base(), "");
    let (out, stderr) = ask(&s, &["--json", "What does [[Garden]] say about beans?"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["stop_reason"], "context_window_exceeded", "{json}");
    assert!(stderr.contains("OLLAMA_CONTEXT_LENGTH"), "{stderr}");
    assert!(stderr.contains("4096"), "{stderr}");
    assert!(
        ollama.requests().is_empty(),
        "nothing was sent to be cut: {} requests",
        ollama.requests().len()
    );
}

/// Before the model is loaded Ollama's `/api/ps` does not list it: the window is the trained
/// 40,960, the request is sent, the server cuts it and reports 4,096 prompt tokens. `ask` says
/// so on stderr and in `--json` `warnings`, naming the cause and the fix.
#[test]
fn a_cut_request_is_reported_by_ask() {
    let ollama = ollama_like(RUNTIME);
    let s = setup(&ollama.openai_base(), "");
    let (out, stderr) = ask(&s, &["--json", "What does [[Garden]] say about beans?"]);
    assert!(out.status.success(), "{stderr}");
    let sent = prompt_tokens(&ollama.requests()[0].body);
    assert!(sent > RUNTIME * 2, "{sent}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["reply"], FRAGMENT);
    let warnings = json["warnings"].as_array().expect("a warnings array");
    assert_eq!(warnings.len(), 1, "{json}");
    let warning = warnings[0].as_str().unwrap();
    assert!(warning.contains("took only 4096"), "{warning}");
    assert!(warning.contains("smaller than the request"), "{warning}");
    assert!(warning.contains("OLLAMA_CONTEXT_LENGTH"), "{warning}");
    assert!(stderr.contains("took only 4096"), "{stderr}");
}

fn paths_of(root: &Path) -> (PathBuf, Paths) {
    let vault = root.join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Garden.md"), big_note()).unwrap();
    let paths = Paths::under(&root.join("data"));
    (vault, paths)
}

fn agent_on(fake: &FakeLlm, vault: &Path, paths: &Paths) -> Agent {
    let ws = Workspace::open(
        Vault::open(vault).unwrap(),
        paths,
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();
    let mut registry = Registry::new();
    workspace::register(&mut registry, &ws);
    let log = SessionLog::new(Store::open(&paths.database_file()).unwrap(), ws.vault_id());
    let mut settings = ProviderSettings::new(ProviderKind::OpenAi, fake.openai_base(), None);
    settings.idle_timeout = Duration::from_secs(10);
    Agent::new(
        Provider::new(settings).unwrap(),
        ws,
        registry,
        AgentSettings {
            provider_name: "openai".into(),
            model: MODEL.into(),
            max_tokens: 512,
            max_steps: 8,
            context: Default::default(),
        },
        RuleSet::default(),
        log,
    )
}

async fn one_turn(
    ops: &tokio::sync::mpsc::Sender<Op>,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
    text: &str,
) -> (TurnOutcome, Vec<String>) {
    ops.send(Op::UserTurn {
        text: text.into(),
        attachments: vec![],
        context: NoteContext::default(),
    })
    .await
    .unwrap();
    let mut notices = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            AgentEvent::Notice(text) => notices.push(text),
            AgentEvent::TurnDone(outcome) => return (outcome, notices),
            _ => {}
        }
    }
}

/// In one session (the app's case): the cut turn carries the warning, and the next request is
/// compacted to what the server really took, so the next answer rests on the whole context.
#[test]
fn after_a_cut_the_next_request_fits_what_the_server_took() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, paths) = paths_of(tmp.path());
    let ollama = ollama_like(RUNTIME);
    let agent = agent_on(&ollama, &vault, &paths);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ((cut, cut_notices), (next, _)) = runtime.block_on(async {
        // As the app and `ask` do at start: the server says the trained 40,960 (not loaded yet).
        let settings = ProviderSettings::new(ProviderKind::OpenAi, ollama.openai_base(), None);
        let facts = vaultchat::llm::models::probe_facts_once(&settings, MODEL).await;
        assert_eq!(facts.window.map(|w| w.tokens), Some(40_960));
        let (ops, mut events, task) = agent.spawn();
        let cut = one_turn(&ops, &mut events, "What does [[Garden]] say about beans?").await;
        let next = one_turn(&ops, &mut events, "And about tomatoes?").await;
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
        (cut, next)
    });
    assert_eq!(cut.reply, FRAGMENT);
    assert_eq!(cut.warnings.len(), 1, "{cut:?}");
    assert!(
        cut_notices.iter().any(|n| n.contains("took only 4096")),
        "{cut_notices:?}"
    );
    assert_eq!(next.stop_reason, TurnEnd::EndTurn, "{next:?}");
    assert_eq!(next.reply, WHOLE);
    assert!(next.warnings.is_empty(), "{next:?}");
    let requests = ollama.requests();
    for request in &requests[1..] {
        let tokens = prompt_tokens(&request.body);
        assert!(
            tokens <= RUNTIME,
            "a request of {tokens} tokens after the cut"
        );
    }
}

/// llama.cpp's `/props` says the model's template takes no tools (SmolLM2's): no tool reaches
/// the server, the person is told once what the model can and cannot do, and `doctor` says it.
#[test]
fn a_template_without_tools_gets_none_and_the_person_is_told() {
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: openai_text("Hello.", FakeUsage::default()),
            chunking: Chunking::Whole,
        },
        Reply::Sse {
            body: openai_text("Hello again.", FakeUsage::default()),
            chunking: Chunking::Whole,
        },
    ]);
    fake.serve_info("/v1/models", 200, &models_fixture("llama_cpp_models.json"));
    fake.serve_info(
        "/props",
        200,
        &models_fixture("llama_cpp_props_no_tools.json"),
    );
    let s = setup(&fake.openai_base(), "");
    let (out, stderr) = ask(&s, &["Hi"]);
    assert!(out.status.success(), "{stderr}");
    let body = &fake.requests()[0].body;
    assert!(
        body.get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "tools were sent: {}",
        body.get("tools").map(Value::to_string).unwrap_or_default()
    );
    assert!(stderr.contains("cannot call tools"), "{stderr}");
    assert!(stderr.contains("can chat but not"), "{stderr}");

    // `[provider] tools = "always"` sends them anyway.
    write_config(&s.data, &fake.openai_base(), "tools = \"always\"\n");
    let (out, stderr) = ask(&s, &["Hi"]);
    assert!(out.status.success(), "{stderr}");
    let body = &fake.requests()[1].body;
    assert!(
        body["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    assert!(!stderr.contains("cannot call tools"), "{stderr}");

    write_config(&s.data, &fake.openai_base(), "");
    let out = common::cmd(&s.data, &s.vault)
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let line = report
        .lines()
        .find(|l| l.contains("tools:"))
        .unwrap_or_else(|| panic!("no tools line:\n{report}"));
    assert!(line.contains("takes no tools"), "{line}");
    assert!(line.contains("can chat but not"), "{line}");
}

/// `doctor` shows both figures of an Ollama model and uses the allocated one.
#[test]
fn doctor_shows_the_allocated_and_the_trained_window() {
    let ollama = ollama_like(RUNTIME);
    ollama.serve_info("/api/ps", 200, &ps_body());
    let s = setup(&ollama.openai_base(), "");
    let out = common::cmd(&s.data, &s.vault)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let window = &json["provider"]["context_window"];
    assert_eq!(window["tokens"], 4_096, "{json}");
    assert_eq!(window["field"], "Ollama /api/ps context_length");
    assert_eq!(window["trained"]["tokens"], 40_960);
    let out = common::cmd(&s.data, &s.vault)
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let line = report
        .lines()
        .find(|l| l.contains("context window:"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        line.contains("4096 tokens (server: Ollama /api/ps context_length)"),
        "{line}"
    );
    assert!(line.contains("trained for 40960"), "{line}");
    assert!(line.contains("OLLAMA_CONTEXT_LENGTH"), "{line}");
}

/// A llama.cpp router (one `llama-server`, several models): `/props` is asked for the model in
/// use only when the router says it is loaded, so asking never starts a model.
#[test]
fn a_router_is_not_asked_about_a_model_it_has_not_loaded() {
    let fake = FakeLlm::start(vec![]);
    fake.serve_info(
        "/v1/models",
        200,
        &models_fixture("llama_cpp_router_models.json"),
    );
    fake.serve_info("/props", 200, &models_fixture("llama_cpp_props.json"));
    let doctor = |model: &str| {
        let s = setup(&fake.openai_base(), "");
        std::fs::write(
            s.data.join("config.toml"),
            format!(
                "[provider]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"{model}\"\n",
                fake.openai_base()
            ),
        )
        .unwrap();
        let out = common::cmd(&s.data, &s.vault)
            .args(["doctor", "--json"])
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        json["provider"]["context_window"].clone()
    };
    let props_asked = || {
        fake.info_requests()
            .iter()
            .filter(|r| r.path == "/props")
            .count()
    };
    let unloaded = doctor("Qwen2.5-7B-Instruct-Q4_K_M");
    assert_eq!(props_asked(), 0, "an unloaded model's /props was asked");
    assert_ne!(unloaded["field"], "llama.cpp /props n_ctx", "{unloaded}");
    let loaded = doctor("SmolLM2-135M-Instruct-Q8_0");
    assert_eq!(props_asked(), 1);
    assert_eq!(loaded["tokens"], 4_096, "{loaded}");
    assert_eq!(loaded["field"], "llama.cpp /props n_ctx");
}

/// Ollama had not loaded the model when it was asked (`/api/ps` lists nothing): the trained
/// figure (40,960) stands until the first response has loaded it; then the window Ollama
/// allocated (8,192 for llama3.2 in tests/fixtures/models/ollama_ps.json) is asked again and used
/// from the next request on: there the tools no longer fit a quarter of it, so the core set goes.
#[test]
fn the_allocated_window_is_asked_again_after_the_first_response() {
    // Another model than the other tests of this binary: the server's answers are remembered
    // per model for the whole process.
    const LOADED_LATER: &str = "llama3.2";
    let tmp = tempfile::tempdir().unwrap();
    let (vault, paths) = paths_of(tmp.path());
    let ollama = ollama_like(8_192);
    ollama.serve_info("/api/ps", 200, r#"{"models": []}"#);
    let settings = ProviderSettings::new(ProviderKind::OpenAi, ollama.openai_base(), None);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let facts = runtime.block_on(vaultchat::llm::models::probe_facts_once(
        &settings,
        LOADED_LATER,
    ));
    assert_eq!(facts.window.map(|w| w.tokens), Some(40_960), "{facts:?}");
    assert!(facts.recheck, "{facts:?}");
    let mut agent_settings = AgentSettings {
        provider_name: "openai".into(),
        model: LOADED_LATER.into(),
        max_tokens: 512,
        max_steps: 8,
        context: Default::default(),
    };
    agent_settings.context.window = 40_960;
    let agent = {
        let ws = Workspace::open(
            Vault::open(&vault).unwrap(),
            &paths,
            &Config::default(),
            Actor::Agent,
        )
        .unwrap();
        let mut registry = Registry::new();
        workspace::register(&mut registry, &ws);
        let log = SessionLog::new(Store::open(&paths.database_file()).unwrap(), ws.vault_id());
        Agent::new(
            Provider::new(settings).unwrap(),
            ws,
            registry,
            agent_settings,
            RuleSet::default(),
            log,
        )
    };
    // Loading the model for the first request, Ollama allocates its context.
    ollama.serve_info("/api/ps", 200, &ps_body());
    let ((first, _), (second, notices)) = runtime.block_on(async {
        let (ops, mut events, task) = agent.spawn();
        let first = one_turn(&ops, &mut events, "Hello").await;
        let second = one_turn(&ops, &mut events, "What does [[Garden]] say about beans?").await;
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
        (first, second)
    });
    assert_eq!(first.reply, WHOLE);
    let ps_asked = ollama
        .info_requests()
        .iter()
        .filter(|r| r.path == "/api/ps")
        .count();
    assert_eq!(
        ps_asked, 2,
        "asked at the probe and once after the first response"
    );
    assert_eq!(second.reply, WHOLE, "{second:?} {notices:?}");
    // The first turn's request, then (the window being smaller now) perhaps a summary of it,
    // then the second turn's.
    let requests = ollama.requests();
    let tools = |r: &Recorded| r.body["tools"].as_array().map_or(0, Vec::len);
    assert!(tools(&requests[0]) > 10, "{}", tools(&requests[0]));
    let last = requests.last().unwrap();
    assert!((1..=6).contains(&tools(last)), "{}", tools(last));
    for request in &requests[1..] {
        assert!(prompt_tokens(&request.body) <= 8_192);
    }
    assert!(
        notices.iter().any(|n| n.contains("core tools")),
        "{notices:?}"
    );
}
