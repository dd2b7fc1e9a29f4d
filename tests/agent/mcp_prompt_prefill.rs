//! An MCP prompt that ends with the assistant's words (decisions §71): the spec lets a prompt
//! start the model's answer (`draft` of tests/peers/edge_prompts.py ends with
//! "PREFILL: Here is the draft, in plain words: "). What reaches the provider and what the
//! session stores, for each wire format, through `vaultchat ask` and the fake provider:
//!
//! - Anthropic without extended thinking continues a trailing assistant message (a prefill): it
//!   is sent last, without the trailing whitespace the API refuses, and the reply is stored as
//!   one assistant message that starts with it.
//! - Anthropic with thinking refuses a trailing assistant message, and OpenAI-compatible servers
//!   answer it rather than continue it: the words go into the person's message as quoted
//!   context saying they are the prompt's suggested start, so the request ends with the
//!   person's message.
//!
//! Either way the stored history never holds two assistant messages in a row.

use crate::common;

use common::fake_llm::{
    Chunking, FakeLlm, FakeUsage, Recorded, Reply, anthropic_text, openai_text,
};
use common::python_server_toml;
use serde_json::Value;
use std::path::PathBuf;
use vaultchat::llm::{Block, Role};

const PREFILL: &str = "PREFILL: Here is the draft, in plain words:";

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

/// A vault and a config that runs the edge prompts server as the person's server `edge`, with
/// `provider` lines in `[provider]`.
fn setup(provider: &str) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Note.md"), "# Note\n").unwrap();
    let gate = tmp.path().join("gate");
    std::fs::create_dir_all(&gate).unwrap();
    let config = tmp.path().join("config.toml");
    let server = python_server_toml(
        "edge",
        "edge_prompts.py",
        &format!("env = {{ EDGE_GATE = {:?} }}\n", gate.display().to_string()),
    );
    std::fs::write(&config, format!("[provider]\n{provider}\n\n{server}")).unwrap();
    Setup {
        data: tmp.path().join("data"),
        _tmp: tmp,
        vault,
        config,
    }
}

#[derive(Clone, Copy)]
enum Wire {
    Anthropic,
    OpenAi,
}

/// `vaultchat ask "/edge:draft gardening" --json` against the fake provider: the JSON outcome.
fn ask_draft(s: &Setup, fake: &FakeLlm, wire: Wire) -> Value {
    ask(s, fake, wire, &["/edge:draft gardening"])
}

/// `vaultchat ask ARGS --json` against the fake provider: the JSON outcome.
fn ask(s: &Setup, fake: &FakeLlm, wire: Wire, args: &[&str]) -> Value {
    let mut c = common::cmd(&s.data, &s.vault);
    c.arg("--config").arg(&s.config);
    match wire {
        Wire::Anthropic => c
            .args(["--provider", "anthropic", "--base-url", &fake.base_url])
            .env("ANTHROPIC_API_KEY", "sk-ant-test"),
        Wire::OpenAi => c
            .args(["--provider", "openai", "--base-url", &fake.openai_base()])
            .args(["--model", "local-model"])
            .env("OPENAI_API_KEY", "sk-test"),
    };
    let out = c.arg("ask").args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The request's messages as (role, text), the system prompt left out (OpenAI sends it as a
/// message).
fn sent(request: &Recorded) -> Vec<(String, String)> {
    let mut messages = request.messages();
    messages.retain(|(role, _)| role != "system");
    messages
}

/// The session's messages as stored: (role, its text blocks joined).
fn stored(s: &Setup, outcome: &Value) -> Vec<(Role, String)> {
    let id = outcome["session_id"].as_str().unwrap();
    let store =
        vaultchat::store::Store::open(&vaultchat::config::Paths::under(&s.data).database_file())
            .unwrap();
    let conversation = vaultchat::agent::load_conversation(&store, id).unwrap();
    conversation
        .messages
        .iter()
        .map(|m| {
            let text = m
                .content
                .iter()
                .filter_map(Block::text)
                .collect::<Vec<_>>()
                .join("\n");
            (m.role.clone(), text)
        })
        .collect()
}

fn assert_no_two_assistants_in_a_row(history: &[(Role, String)]) {
    for pair in history.windows(2) {
        assert!(
            !(pair[0].0 == Role::Assistant && pair[1].0 == Role::Assistant),
            "two assistant messages in a row: {history:?}"
        );
    }
}

/// The words were folded into the person's message: the request ends with it, quoted and
/// named as the prompt's suggested start; the reply is stored after it, alone.
fn assert_folded(s: &Setup, request: &Recorded, outcome: &Value, reply: &str) {
    let messages = sent(request);
    let (role, text) = messages.last().unwrap();
    assert_eq!(
        role, "user",
        "the request ends with the person's: {messages:?}"
    );
    assert!(
        text.contains("Draft a short note about gardening."),
        "{text}"
    );
    assert!(text.contains("suggested start"), "said what it is: {text}");
    assert!(text.contains(&format!("> {PREFILL}")), "quoted: {text}");
    assert_eq!(
        messages.iter().filter(|(r, _)| r == "assistant").count(),
        0,
        "{messages:?}"
    );
    assert_eq!(outcome["reply"], reply);
    let history = stored(s, outcome);
    assert_no_two_assistants_in_a_row(&history);
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(history[1], (Role::Assistant, reply.to_string()));
}

#[test]
fn anthropic_without_thinking_continues_the_prompts_words_and_stores_one_reply() {
    let s = setup("");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: anthropic_text(" sow in spring.", FakeUsage::default()),
        chunking: Chunking::Whole,
    }]);
    let outcome = ask_draft(&s, &fake, Wire::Anthropic);
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let messages = sent(&requests[0]);
    assert_eq!(
        messages.last().unwrap(),
        &("assistant".to_string(), PREFILL.to_string()),
        "the prefill is last, without trailing whitespace: {messages:?}"
    );
    assert_eq!(messages.len(), 2, "{messages:?}");
    let whole = format!("{PREFILL} sow in spring.");
    assert_eq!(outcome["reply"], whole.as_str(), "the reply reads whole");
    let history = stored(&s, &outcome);
    assert_no_two_assistants_in_a_row(&history);
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(history[1], (Role::Assistant, whole));
}

#[test]
fn anthropic_with_thinking_gets_the_prompts_words_in_the_persons_message() {
    let s = setup("thinking_budget = 2048");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: anthropic_text("Sow in spring.", FakeUsage::default()),
        chunking: Chunking::Whole,
    }]);
    let outcome = ask_draft(&s, &fake, Wire::Anthropic);
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].body["thinking"].is_object(),
        "thinking is on: {}",
        requests[0].raw_body
    );
    assert_folded(&s, &requests[0], &outcome, "Sow in spring.");
}

#[test]
fn an_openai_compatible_server_gets_the_prompts_words_in_the_persons_message() {
    let s = setup("");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: openai_text("Sow in spring.", FakeUsage::default()),
        chunking: Chunking::Whole,
    }]);
    let outcome = ask_draft(&s, &fake, Wire::OpenAi);
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_folded(&s, &requests[0], &outcome, "Sow in spring.");
}

/// A prompt that opens with the assistant's words, run after the model has answered: those
/// words are quoted in the person's turn, not stored as a second answer in a row.
#[test]
fn a_prompt_opening_with_the_assistants_words_after_a_reply_is_quoted_in_the_persons_turn() {
    let s = setup("");
    let text = |t: &str| Reply::Sse {
        body: anthropic_text(t, FakeUsage::default()),
        chunking: Chunking::Whole,
    };
    let fake = FakeLlm::start(vec![text("Hello."), text("Turn it weekly.")]);
    ask(&s, &fake, Wire::Anthropic, &["hello"]);
    let outcome = ask(&s, &fake, Wire::Anthropic, &["--continue", "/edge:tutor"]);
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let messages = sent(&requests[1]);
    let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{messages:?}");
    assert!(
        messages[2]
            .1
            .contains("> TUTOR: I am your gardening tutor.")
            && messages[2].1.contains("Teach me one thing about compost."),
        "{messages:?}"
    );
    let history = stored(&s, &outcome);
    assert_no_two_assistants_in_a_row(&history);
    assert_eq!(
        history.last().unwrap(),
        &(Role::Assistant, "Turn it weekly.".to_string())
    );
}

/// First in a new session the same prompt may not open the conversation with the assistant's
/// words either (Anthropic wants the person's message first): quoted in the person's turn.
#[test]
fn a_prompt_opening_with_the_assistants_words_first_in_a_session_is_quoted_too() {
    let s = setup("");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: anthropic_text("Turn it weekly.", FakeUsage::default()),
        chunking: Chunking::Whole,
    }]);
    let outcome = ask(&s, &fake, Wire::Anthropic, &["/edge:tutor"]);
    let messages = sent(&fake.requests()[0]);
    let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
    // The quote and the person's message, sent as one message of the person's.
    assert_eq!(roles, ["user"], "{messages:?}");
    assert!(
        messages[0]
            .1
            .contains("> TUTOR: I am your gardening tutor.")
            && messages[0].1.contains("Teach me one thing about compost."),
        "{messages:?}"
    );
    assert_no_two_assistants_in_a_row(&stored(&s, &outcome));
}
