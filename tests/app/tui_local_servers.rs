//! The app against an Ollama-like server that cut a request (issue 19, docs/decisions.md §49):
//! the model was not loaded, so `/api/ps` does not list it and the window is `/api/show`'s
//! trained 40,960; the server keeps the last 4,096 tokens and reports them. The chat says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Recorded, Reply, Responder, openai_text};
use common::tmux::{Tmux, quote};
use serde_json::json;
use std::sync::Arc;

const MODEL: &str = "qwen3:8b";

#[test]
fn the_chat_says_when_the_server_cut_the_request() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let mut note = String::from("# Garden\n\n");
    for week in 0..400 {
        note.push_str(&format!(
            "Week {week}: sow beans by the north fence, turn compost number {}, water tomatoes at dusk.\n",
            week * 7 % 13
        ));
    }
    std::fs::write(vault.join("Garden.md"), note).unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // Ollama keeps the last 4,096 tokens of the longer request and reports what it kept.
    let responder: Responder = Arc::new(|_: &Recorded| Reply::Sse {
        body: openai_text(
            "Beans go by the north fence.",
            FakeUsage {
                input: 4_096,
                output: 7,
                ..FakeUsage::default()
            },
        ),
        chunking: Chunking::Whole,
    });
    let fake = FakeLlm::start_responding(responder);
    fake.serve_info(
        "/v1/models",
        200,
        &json!({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).to_string(),
    );
    fake.serve_info(
        "/api/show",
        200,
        &json!({"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
                "capabilities": ["completion", "tools"]})
        .to_string(),
    );
    let words = [
        common::bin().to_string(),
        "--data-dir".into(),
        data.display().to_string(),
        "--provider".into(),
        "openai".into(),
        "--base-url".into(),
        fake.openai_base(),
        "--model".into(),
        MODEL.into(),
        vault.display().to_string(),
    ];
    let line = format!(
        "env TERM=xterm-256color {}; echo EXIT=$?; sleep 60",
        words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
    );
    let tmux = Tmux::start(&line, 120, 40);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("What does [[Garden]] say about beans?");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the cut notice", |s| {
        joined(s).contains("OLLAMA_CONTEXT_LENGTH") && s.contains("Beans go by the north fence.")
    });
    let notice: Vec<&str> = screen
        .lines()
        .filter_map(|line| line.split_once("││").map(|(_, chat)| chat))
        .skip_while(|chat| !chat.contains("the server took only"))
        .take_while(|chat| !chat.trim_end_matches('│').trim().is_empty())
        .map(|chat| chat.trim_end_matches('│').trim_end())
        .collect();
    let notice = notice.join("\n");
    assert!(notice.contains("4096"), "{screen}");
    // The estimate of what was sent moves with every tool description; the words are the point.
    let notice = match notice.split_once("of about ") {
        Some((before, after)) => {
            let rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
            assert!(rest.len() < after.len(), "{notice}");
            format!("{before}of about [N]{rest}")
        }
        None => panic!("no estimate in {notice}"),
    };
    assert!(
        joined(&screen).contains("smaller than the request"),
        "{screen}"
    );
    insta::assert_snapshot!(notice);
    tmux.keys(&["C-q"]);
}

/// The words of the chat pane (right of the file pane) with line ends and padding folded into
/// single spaces, so a sentence wrapped over several rows reads as one.
fn joined(screen: &str) -> String {
    screen
        .lines()
        .filter_map(|line| line.split_once("││").map(|(_, chat)| chat))
        .flat_map(|chat| chat.trim_end_matches('│').split_whitespace())
        .collect::<Vec<_>>()
        .join(" ")
}
