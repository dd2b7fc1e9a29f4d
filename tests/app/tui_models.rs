//! `/model` in a real terminal against an Ollama-shaped local server: the list shows each model's
//! context window and where it came from, Enter switches the model for the next turn (the request
//! names it), and the status bar's context % measures against the new model's window.

use crate::common::fake_llm::*;
use crate::common::tmux::{Tmux, quote};

fn usage(input: u64, output: u64) -> FakeUsage {
    FakeUsage {
        input,
        output,
        ..FakeUsage::default()
    }
}

#[test]
fn model_lists_windows_and_sources_and_enter_switches_the_next_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: openai_text("First answer.", usage(3_900, 196)),
            chunking: Chunking::Whole,
        },
        Reply::Sse {
            body: openai_text("Second answer.", usage(3_900, 196)),
            chunking: Chunking::Whole,
        },
    ]);
    fake.serve_info("/v1/models", 200, &models_fixture("ollama_models.json"));
    fake.serve_info("/api/show", 200, &models_fixture("ollama_show.json"));
    std::fs::write(
        data.join("config.toml"),
        format!(
            "[provider]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"llama3.2\"\n\n[provider.context_windows]\n\"qwen2.5:7b\" = 8192\n",
            fake.openai_base()
        ),
    )
    .unwrap();
    let line = format!(
        "env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u OPENAI_BASE_URL TERM=xterm-256color {} --data-dir {} {}; echo EXIT=$?; sleep 60",
        quote(crate::common::bin()),
        quote(&data.display().to_string()),
        quote(&vault.display().to_string()),
    );
    let tmux = Tmux::start(&line, 80, 24);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.type_text("hello");
    tmux.keys(&["Enter"]);
    tmux.wait_text("First answer.");
    // 4096 tokens of Ollama's 131072 (its /api/show context_length).
    tmux.wait_text("llama3.2 · 4.1k tok · ctx 3%");

    tmux.type_text("/model");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("Models · openai");
    for row in [
        "│ › ● llama3.2      131k  server: Ollama /api/show context_length",
        "│     qwen2.5:7b    8.2k  config",
    ] {
        assert!(screen.contains(row), "{row}:\n{screen}");
    }
    assert!(screen.contains("· 2 listed"), "{screen}");

    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("model set to qwen2.5:7b for the next turns");
    // The same 4096 tokens of the new model's 8192 (from the config).
    tmux.wait_text("qwen2.5:7b · 4.1k tok · ctx 50%");

    tmux.type_text("again");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Second answer.");
    let sent: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(sent, ["llama3.2", "qwen2.5:7b"]);
    assert_eq!(fake.overflow(), 0);
    // The window of llama3.2 was asked once (at start-up; after its first response only
    // /api/ps, for the context Ollama allocated), /model listed the models once more.
    let asked: Vec<(String, String)> = fake
        .info_requests()
        .into_iter()
        .map(|r| (r.path, r.body["model"].as_str().unwrap_or("").to_string()))
        .collect();
    assert_eq!(
        asked
            .iter()
            .filter(|(path, model)| path == "/api/show" && model == "llama3.2")
            .count(),
        1,
        "{asked:?}"
    );

    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
}
