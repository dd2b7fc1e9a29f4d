//! `vaultchat doctor` checks the provider against a local server shaped like llama.cpp, Ollama,
//! vLLM or Anthropic (the fake server's model endpoints answer with the fixture bodies in
//! tests/fixtures/models/): the key, the server, the model in its list, and the context window
//! with where it came from. And `ask` asks the server for the window once, without using up a
//! reply of its turn.

use crate::common::{self, fake_llm::*};
use std::path::PathBuf;
use std::process::Output;

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
}

fn setup(config: &str) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(vault.join("Note.md"), "# Note\n").unwrap();
    std::fs::write(data.join("config.toml"), config).unwrap();
    Setup {
        _tmp: tmp,
        vault,
        data,
    }
}

fn openai_config(base: &str, model: &str, extra: &str) -> String {
    format!("[provider]\nkind = \"openai\"\nbase_url = \"{base}\"\nmodel = \"{model}\"\n{extra}")
}

fn doctor(s: &Setup, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut c = common::cmd(&s.data, &s.vault);
    for (k, v) in env {
        c.env(k, v);
    }
    let out: Output = c.arg("doctor").output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), report)
}

fn doctor_json(s: &Setup, env: &[(&str, &str)]) -> (Option<i32>, serde_json::Value) {
    let mut c = common::cmd(&s.data, &s.vault);
    for (k, v) in env {
        c.env(k, v);
    }
    let out: Output = c.args(["doctor", "--json"]).output().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json printed no JSON object ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (out.status.code(), json)
}

fn line<'a>(report: &'a str, what: &str) -> &'a str {
    report
        .lines()
        .find(|l| l[6..].starts_with(&format!("{what}:")))
        .unwrap_or_else(|| panic!("no `{what}` line in:\n{report}"))
}

fn paths(fake: &FakeLlm) -> Vec<String> {
    fake.info_requests().into_iter().map(|r| r.path).collect()
}

#[test]
fn a_llama_cpp_server_gives_the_slot_context_from_props() {
    let fake = FakeLlm::start(vec![]);
    fake.serve_info("/v1/models", 200, &models_fixture("llama_cpp_models.json"));
    fake.serve_info("/props", 200, &models_fixture("llama_cpp_props.json"));
    let s = setup(&openai_config(
        &fake.openai_base(),
        "SmolLM2-135M-Instruct-Q8_0.gguf",
        "",
    ));
    let (code, report) = doctor(&s, &[]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        line(&report, "provider"),
        format!(
            "ok    provider: openai at {}, model SmolLM2-135M-Instruct-Q8_0.gguf",
            fake.openai_base()
        )
    );
    assert_eq!(
        line(&report, "api key"),
        "ok    api key: none (OPENAI_API_KEY is not set; local servers need none)"
    );
    assert_eq!(
        line(&report, "server"),
        format!(
            "ok    server: {} answers; 1 model listed",
            fake.openai_base()
        )
    );
    assert_eq!(
        line(&report, "model"),
        "ok    model: SmolLM2-135M-Instruct-Q8_0.gguf is listed"
    );
    // /props (the running context) beats the list's trained length (8192), shown beside it.
    assert_eq!(
        line(&report, "context window"),
        "ok    context window: 4096 tokens (server: llama.cpp /props n_ctx); the model was trained for 8192 (/v1/models meta.n_ctx_train), the smaller figure is what a request gets"
    );
    assert_eq!(paths(&fake), ["/v1/models", "/props"]);
    assert!(fake.requests().is_empty());

    // The same as one JSON object, the window with its source in fields.
    let (code, json) = doctor_json(&s, &[]);
    assert_eq!(code, Some(0), "{json}");
    assert_eq!(
        json["provider"],
        serde_json::json!({
            "kind": "openai",
            "base_url": fake.openai_base(),
            "model": "SmolLM2-135M-Instruct-Q8_0.gguf",
            "api_key": false,
            "reachable": true,
            "model_listed": true,
            "context_window": {
                "tokens": 4096,
                "source": "server",
                "field": "llama.cpp /props n_ctx",
                "trained": {"tokens": 8192, "field": "/v1/models meta.n_ctx_train"},
            },
            "tools": "sent",
        })
    );
    assert_eq!(json["problems"], 0);
    let checks = json["checks"].as_array().unwrap();
    assert!(
        checks.contains(&serde_json::json!({
            "status": "ok",
            "what": "context window",
            "detail": "4096 tokens (server: llama.cpp /props n_ctx); the model was trained for 8192 (/v1/models meta.n_ctx_train), the smaller figure is what a request gets",
        })),
        "{json}"
    );
}

#[test]
fn an_ollama_server_gives_the_models_length_from_api_show() {
    let fake = FakeLlm::start(vec![]);
    fake.serve_info("/v1/models", 200, &models_fixture("ollama_models.json"));
    fake.serve_info("/api/show", 200, &models_fixture("ollama_show.json"));
    let s = setup(&openai_config(&fake.openai_base(), "llama3.2", ""));
    let (code, report) = doctor(&s, &[("OPENAI_API_KEY", "ollama")]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        line(&report, "api key"),
        "ok    api key: OPENAI_API_KEY is set"
    );
    assert_eq!(
        line(&report, "model"),
        "ok    model: llama3.2 is listed as llama3.2:latest"
    );
    // The model is not loaded (no /api/ps answer): the trained length until it is.
    assert_eq!(
        line(&report, "context window"),
        "ok    context window: 131072 tokens (server: Ollama /api/show context_length); the server has not loaded the model, so the window it runs with is asked again after the first response (Ollama allocates 4096 by default below 24 GiB of VRAM)"
    );
    assert_eq!(
        line(&report, "tools"),
        "ok    tools: sent (the server says the model takes tools)"
    );
    let asked = fake.info_requests();
    let show = asked.iter().find(|r| r.path == "/api/show").unwrap();
    assert_eq!(show.body, serde_json::json!({"model": "llama3.2"}));
    assert_eq!(show.headers["authorization"], "Bearer ollama");
}

#[test]
fn a_vllm_list_carries_the_window_and_the_config_beats_it() {
    let fake = FakeLlm::start(vec![]);
    fake.serve_info("/v1/models", 200, &models_fixture("vllm_models.json"));
    let model = "Qwen/Qwen2.5-7B-Instruct";
    let s = setup(&openai_config(&fake.openai_base(), model, ""));
    let (code, report) = doctor(&s, &[]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        line(&report, "context window"),
        "ok    context window: 32768 tokens (server: /v1/models max_model_len)"
    );
    // The list said it: /props and /api/show are not asked.
    assert_eq!(paths(&fake), ["/v1/models"]);

    let s = setup(&openai_config(
        &fake.openai_base(),
        model,
        "context_window = 65536\n[provider.context_windows]\n\"Qwen/Qwen2.5-7B-Instruct\" = 16384\n",
    ));
    let (_, report) = doctor(&s, &[]);
    assert_eq!(
        line(&report, "context window"),
        "ok    context window: 16384 tokens (config)"
    );
}

#[test]
fn a_server_without_a_model_list_is_said_and_the_default_window_is_named() {
    let fake = FakeLlm::start(vec![]);
    let s = setup(&openai_config(&fake.openai_base(), "my-local-model", ""));
    let (code, report) = doctor(&s, &[]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        line(&report, "model"),
        "ok    model: my-local-model (the server does not list models, so it is not checked)"
    );
    assert_eq!(
        line(&report, "context window"),
        "ok    context window: 200000 tokens (default)"
    );
    // A model the server does not list is a warning that names what it lists.
    fake.serve_info("/v1/models", 200, &models_fixture("ollama_models.json"));
    let (code, report) = doctor(&s, &[]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        line(&report, "model"),
        "warn  model: my-local-model is not among the models the server lists: llama3.2:latest, qwen2.5:7b"
    );
}

#[test]
fn anthropic_is_asked_with_its_headers_and_its_models_come_from_the_table() {
    let fake = FakeLlm::start(vec![]);
    fake.serve_info("/v1/models", 200, &models_fixture("anthropic_models.json"));
    let s = setup("[provider]\nkind = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"\n");
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant-test"),
        ("ANTHROPIC_BASE_URL", fake.base_url.as_str()),
    ];
    let (code, report) = doctor(&s, &env);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        line(&report, "api key"),
        "ok    api key: ANTHROPIC_API_KEY is set"
    );
    assert_eq!(
        line(&report, "model"),
        "ok    model: claude-sonnet-4-5 is listed as claude-sonnet-4-5-20250929"
    );
    assert_eq!(
        line(&report, "context window"),
        "ok    context window: 200000 tokens (built-in table)"
    );
    let asked = fake.info_requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].headers["x-api-key"], "sk-ant-test");
    assert_eq!(asked[0].headers["anthropic-version"], "2023-06-01");
}

#[test]
fn a_refused_key_an_unreachable_server_and_a_missing_key_are_said() {
    let fake = FakeLlm::start(vec![]);
    fake.serve_info(
        "/v1/models",
        401,
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
    );
    let s = setup(&openai_config(&fake.openai_base(), "gpt-4o", ""));
    let (code, report) = doctor(&s, &[("OPENAI_API_KEY", "sk-wrong")]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        line(&report, "server"),
        format!(
            "FAIL  server: the key was refused: {}/models answered 401: Incorrect API key provided",
            fake.openai_base()
        )
    );
    // The table still knows the window.
    assert_eq!(
        line(&report, "context window"),
        "ok    context window: 128000 tokens (built-in table)"
    );

    // Nothing listens on a port that was just freed.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let s = setup(&openai_config(
        &format!("http://127.0.0.1:{closed}/v1"),
        "gpt-4o",
        "",
    ));
    let (code, json) = doctor_json(&s, &[]);
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(json["problems"], 1);
    assert_eq!(json["provider"]["reachable"], false);
    assert_eq!(json["provider"]["model_listed"], serde_json::Value::Null);
    assert_eq!(
        json["provider"]["context_window"],
        serde_json::json!({"tokens": 128000, "source": "table", "field": null})
    );
    let (code, report) = doctor(&s, &[]);
    assert_eq!(code, Some(1), "{report}");
    let server = line(&report, "server");
    assert!(
        server.starts_with(&format!(
            "FAIL  server: cannot reach http://127.0.0.1:{closed}/v1/models:"
        )),
        "{report}"
    );

    let s = setup("[provider]\nkind = \"anthropic\"\napi_key_env = \"VAULTCHAT_TEST_NO_KEY\"\n");
    let (code, report) = doctor(&s, &[]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        line(&report, "provider"),
        "warn  provider: no API key: set VAULTCHAT_TEST_NO_KEY (or name another variable with api_key_env in [provider]); or use a model on this machine: --provider openai --base-url http://localhost:11434/v1 --model NAME (Ollama, llama.cpp), with [privacy] local_only = true to keep every request local (the chat needs it)"
    );
    let (_, json) = doctor_json(&s, &[]);
    assert_eq!(json.get("provider"), None, "{json}");
}

#[test]
fn ask_asks_the_server_for_the_window_once_and_its_turn_is_answered() {
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: openai_text("Hello.", FakeUsage::default()),
        chunking: Chunking::Whole,
    }]);
    fake.serve_info("/v1/models", 200, &models_fixture("llama_cpp_models.json"));
    fake.serve_info("/props", 200, &models_fixture("llama_cpp_props.json"));
    let s = setup(&openai_config(&fake.openai_base(), "local", ""));
    let out = common::cmd(&s.data, &s.vault)
        .args(["ask", "hi"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(paths(&fake), ["/v1/models", "/props"]);
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(fake.overflow(), 0);

    // With the window and the tools in the config there is nothing to ask.
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: openai_text("Hello.", FakeUsage::default()),
        chunking: Chunking::Whole,
    }]);
    let s = setup(&openai_config(
        &fake.openai_base(),
        "local",
        "context_window = 16384\ntools = \"always\"\n",
    ));
    let out = common::cmd(&s.data, &s.vault)
        .args(["ask", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(paths(&fake).is_empty(), "{:?}", paths(&fake));
}

/// A server that accepts connections and never answers: the list times out, and the window is
/// not asked of it again (doctor ends instead of waiting once per endpoint).
#[test]
fn a_server_that_never_answers_is_given_up_on() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = std::sync::Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    let s = setup(&openai_config(
        &format!("http://127.0.0.1:{port}/v1"),
        "llama3.2",
        "",
    ));
    let (code, report) = doctor(&s, &[]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        line(&report, "server"),
        format!("FAIL  server: http://127.0.0.1:{port}/v1/models did not answer within 2 s")
    );
    assert_eq!(
        line(&report, "context window"),
        "ok    context window: 200000 tokens (default)"
    );
    // Only the list was asked.
    assert_eq!(held.lock().unwrap().len(), 1);
}
