//! The app against a real server's failure (issue 12): llama-cpp-python's zero-byte stream,
//! replayed with its recorded head. The chat shows what it usually means and the server's request
//! id, and the next message is answered without the failed one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, recorded};
use common::tmux::{Tmux, app_line};

/// tests/fixtures/sse/llama_cpp_python_content_array_abort.headers
const REQUEST_ID: &str = "5b65283bb93c405287d8ccff2c9b34b2";

#[test]
fn the_chat_says_what_an_empty_stream_means_and_the_next_message_is_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(
        vault.join("Plan.md"),
        "# Garden plan\n\nPlant tomatoes in May.\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![
        recorded("llama_cpp_python_content_array_abort", Chunking::Whole),
        Reply::Sse {
            body: anthropic_text("Tomatoes, in May.", FakeUsage::default()),
            chunking: Chunking::Fixed(9),
        },
    ]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 120, 40);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("Summarise [[Plan]]");
    tmux.keys(&["Enter"]);
    // The error wraps in the chat pane; its words are checked on the joined screen.
    let screen = tmux.wait_for("the empty-stream error", |s| {
        let joined = joined(s);
        joined.contains("sent an empty stream") && joined.contains("not sent to the model again")
    });
    let joined = joined(&screen);
    assert!(
        joined.contains("the server failed while building the prompt"),
        "{screen}"
    );
    assert!(joined.contains(REQUEST_ID), "{screen}");

    tmux.type_text("What should I plant?");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Tomatoes, in May.");
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].raw_body.clone();
    assert!(second.contains("What should I plant?"), "{second}");
    assert!(!second.contains("Summarise"), "{second}");
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
