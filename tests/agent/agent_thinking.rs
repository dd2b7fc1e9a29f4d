//! The model's reasoning through `vaultchat ask`, end to end against the fake provider: Anthropic
//! extended thinking goes back signed and unchanged in the tool loop, an OpenAI-compatible
//! server's reasoning never goes back, and neither is ever part of `reply`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Recorded, Reply, fixture};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Output;

/// The reasoning both fixtures carry before their read_note call.
const ANTHROPIC_THINKING: &str = "The person asks when to plant the tomatoes. The plan note should say — let me read Projects/Plan.md before answering.";
const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds9fP1L0dRp3uQ3fTnOvJQ0mJEYjIfKbYFpNv8Kq2E9eHnZ5oA==";
const OPENAI_REASONING: &str =
    "The person asks when to plant the tomatoes. The plan note should say — let me read it.";

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

fn setup(provider_lines: &str) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(
        vault.join("Projects/Plan.md"),
        "# Garden plan\n\nPlant tomatoes in May.\n",
    )
    .unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[provider]\nidle_timeout_secs = 5\nconnect_timeout_secs = 2\n{provider_lines}"),
    )
    .unwrap();
    Setup {
        data: tmp.path().join("data"),
        _tmp: tmp,
        vault,
        config,
    }
}

fn ask(s: &Setup, fake: &FakeLlm, anthropic: bool, args: &[&str]) -> Output {
    let mut c = common::cmd(&s.data, &s.vault);
    c.arg("--config").arg(&s.config);
    if anthropic {
        c.args(["--provider", "anthropic", "--base-url", &fake.base_url])
            .env("ANTHROPIC_API_KEY", "sk-ant-test");
    } else {
        c.args(["--provider", "openai", "--base-url", &fake.openai_base()])
            .env("OPENAI_API_KEY", "sk-openai-test");
    }
    let out = c.arg("ask").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ask failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn usage(input: u64, output: u64) -> FakeUsage {
    FakeUsage {
        input,
        output,
        cache_read: 0,
        cache_write: 0,
    }
}

fn sse(body: Vec<u8>) -> Reply {
    Reply::Sse {
        body,
        chunking: Chunking::Cycle(vec![3, 11, 1, 29]),
    }
}

/// The assistant messages a request carried.
fn assistant_messages(request: &Recorded) -> Vec<Value> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .cloned()
        .collect()
}

#[test]
fn anthropic_thinking_goes_back_signed_in_the_tool_loop_and_stays_out_of_the_reply() {
    let s = setup("thinking_budget = 2048\nmax_tokens = 1024\n");
    let fake = FakeLlm::start(vec![
        sse(fixture("anthropic_stream_thinking_tool_use.sse")),
        sse(common::fake_llm::anthropic_text(
            "Plant them in May.",
            usage(1400, 9),
        )),
        sse(common::fake_llm::anthropic_text(
            "Yes, May.",
            usage(1500, 4),
        )),
    ]);
    let out = ask(&s, &fake, true, &["When do I plant tomatoes?", "--json"]);
    let v = json_of(&out);
    assert_eq!(v["reply"], "Plant them in May.");
    assert_eq!(v["thinking"], ANTHROPIC_THINKING);
    assert_eq!(v["tool_calls"][0]["name"], "read_note");
    assert_eq!(v["tool_calls"][0]["is_error"], false);

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(
        first["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    // max_tokens = 1024 is below the budget: raised so the answer keeps its room.
    assert_eq!(first["max_tokens"], 3072);
    assert!(first.get("temperature").is_none() && first.get("top_k").is_none());

    // The tool loop: the thinking block with its signature, unchanged, before the tool_use.
    let second = &requests[1];
    let assistant = assistant_messages(second);
    assert_eq!(assistant.len(), 1);
    let content = assistant[0]["content"].as_array().unwrap();
    assert_eq!(
        content[0],
        json!({"type": "thinking", "thinking": ANTHROPIC_THINKING, "signature": SIGNATURE})
    );
    assert_eq!(
        content[1],
        json!({"type": "text", "text": "Let me check your plan."})
    );
    assert_eq!(content[2]["type"], "tool_use");
    assert_eq!(content[2]["id"], "toolu_01ThinkReadPlan00000001");
    assert_eq!(content[2]["input"], json!({"note": "Projects/Plan.md"}));
    assert_eq!(second.body["thinking"], first["thinking"]);

    // Stored with the session: the next turn still carries it, byte for byte; the plain reply
    // printed to the terminal has none of it.
    let id = v["session_id"].as_str().unwrap();
    let out = ask(&s, &fake, true, &["Sure?", "--session", id]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(printed.trim(), "Yes, May.");
    let third = &fake.requests()[2];
    let stored = assistant_messages(third);
    assert_eq!(stored[0]["content"][0], content[0]);
}

#[test]
fn openai_compatible_reasoning_is_shown_apart_and_never_sent_back() {
    let s = setup("");
    let fake = FakeLlm::start(vec![
        sse(fixture("openai_stream_reasoning_tool_call.sse")),
        sse(common::fake_llm::openai_text(
            "Plant them in May.",
            usage(1400, 9),
        )),
    ]);
    let v = json_of(&ask(
        &s,
        &fake,
        false,
        &["When do I plant tomatoes?", "--json"],
    ));
    assert_eq!(v["reply"], "Plant them in May.");
    assert_eq!(v["thinking"], OPENAI_REASONING);
    assert_eq!(v["tool_calls"][0]["is_error"], false);

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    // No thinking switch is sent to these servers.
    assert!(requests[0].body.get("thinking").is_none());
    let second = &requests[1];
    let assistant = assistant_messages(second);
    assert_eq!(assistant.len(), 1);
    assert_eq!(assistant[0]["content"], "Let me check your plan.");
    assert_eq!(
        assistant[0]["tool_calls"][0]["id"],
        "call_think_read_plan_01"
    );
    let keys: Vec<&String> = assistant[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["content", "role", "tool_calls"]);
    assert!(
        !second.raw_body.contains("reasoning"),
        "{}",
        second.raw_body
    );
    assert!(!second.raw_body.contains("let me read it"));
}

#[test]
fn a_reply_without_thinking_has_no_thinking_field() {
    let s = setup("thinking_budget = 0\n");
    let fake = FakeLlm::start(vec![sse(common::fake_llm::anthropic_text(
        "May.",
        usage(10, 2),
    ))]);
    let v = json_of(&ask(&s, &fake, true, &["When?", "--json"]));
    assert_eq!(v["reply"], "May.");
    assert!(v.get("thinking").is_none(), "{v}");
    assert!(fake.requests()[0].body.get("thinking").is_none());
}

#[test]
fn thinking_cut_off_by_max_tokens_is_not_kept_as_an_assistant_turn() {
    let s = setup("thinking_budget = 1024\n");
    let cut_off = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_cut\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Still weighing the options\"}}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2048}}\n\n",
        "event: message_stop\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );
    let fake = FakeLlm::start(vec![
        sse(cut_off.as_bytes().to_vec()),
        sse(common::fake_llm::anthropic_text("May.", usage(30, 2))),
    ]);
    let v = json_of(&ask(&s, &fake, true, &["When?", "--json"]));
    assert_eq!(v["stop_reason"], "max_tokens");
    assert_eq!(v["reply"], "");
    assert_eq!(v["thinking"], "Still weighing the options");
    let id = v["session_id"].as_str().unwrap();
    let v = json_of(&ask(&s, &fake, true, &["Well?", "--session", id, "--json"]));
    assert_eq!(v["reply"], "May.");
    // The unsigned, unfinished thinking was not stored as a turn of its own: the API would refuse
    // an assistant message holding only thinking.
    let second = &fake.requests()[1];
    assert!(assistant_messages(second).is_empty(), "{}", second.raw_body);
    assert!(!second.raw_body.contains("weighing"));
}
