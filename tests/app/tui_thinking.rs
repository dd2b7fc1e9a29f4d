//! The model's thinking in the full-screen app (tmux, fake Anthropic provider with extended
//! thinking on): each response's thinking is one folded line with its size, never part of the
//! reply, and Ctrl+T unfolds the latest one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, Reply, fixture};
use common::tmux::{Tmux, app_line};

/// A reply that thinks (signed) and then answers, as Anthropic streams it.
fn thinking_then_text(thinking: &str, text: &str) -> Vec<u8> {
    let event = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    [
        event(
            "message_start",
            serde_json::json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 1400, "output_tokens": 1}}}),
        ),
        event(
            "content_block_start",
            serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        event(
            "content_block_delta",
            serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": thinking}}),
        ),
        event(
            "content_block_delta",
            serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}}),
        ),
        event(
            "content_block_stop",
            serde_json::json!({"type": "content_block_stop", "index": 0}),
        ),
        event(
            "content_block_start",
            serde_json::json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            "content_block_delta",
            serde_json::json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": text}}),
        ),
        event(
            "content_block_stop",
            serde_json::json!({"type": "content_block_stop", "index": 1}),
        ),
        event(
            "message_delta",
            serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 30}}),
        ),
        event("message_stop", serde_json::json!({"type": "message_stop"})),
    ]
    .concat()
    .into_bytes()
}

#[test]
fn thinking_shows_folded_and_ctrl_t_unfolds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(
        vault.join("Projects/Plan.md"),
        "# Garden plan\n\nPlant tomatoes in May.\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("config.toml"),
        "[provider]\nthinking_budget = 2048\n",
    )
    .unwrap();
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: fixture("anthropic_stream_thinking_tool_use.sse"),
            chunking: Chunking::Fixed(7),
        },
        Reply::Sse {
            body: thinking_then_text(
                "The plan says May, so the answer is May.",
                "Plant them in May.",
            ),
            chunking: Chunking::Fixed(5),
        },
    ]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 100, 30);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("When do I plant tomatoes?");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("Plant them in May.");
    // Both responses' thinking, folded, with their sizes; none of its text on screen.
    assert!(screen.contains("✻ thinking · 117 chars"), "{screen}");
    assert!(screen.contains("✻ thinking · 40 chars"), "{screen}");
    assert!(!screen.contains("let me read"), "{screen}");
    assert!(!screen.contains("so the answer is"), "{screen}");
    assert!(screen.contains("Let me check your plan."), "{screen}");

    tmux.keys(&["C-t"]);
    let unfolded = tmux.wait_text("The plan says May, so the answer is May.");
    assert!(unfolded.contains("│ The plan says May"), "{unfolded}");
    tmux.keys(&["C-t"]);
    tmux.wait_for("the thinking folded again", |s| {
        !s.contains("so the answer is") && s.contains("✻ thinking · 40 chars")
    });

    // The config's budget reached the request, and the tool loop sent the signed thinking back
    // before the tool_use.
    assert_eq!(fake.requests()[0].body["thinking"]["budget_tokens"], 2048);
    let second = &fake.requests()[1].body;
    let assistant = &second["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"][0]["type"], "thinking");
    assert_eq!(assistant["content"][2]["type"], "tool_use");

    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
}
