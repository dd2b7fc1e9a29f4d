//! The app in a real terminal (tmux) against a local OpenAI-compatible server that reports no
//! usage (llama-cpp-python's recorded stream, byte for byte): the status bar shows the estimated
//! tokens and context share with `~`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, Reply, fixture};
use common::tmux::{Tmux, quote};

#[test]
fn the_status_bar_marks_estimated_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(
        vault.join("Garden.md"),
        "# Garden\n\nPlant tomatoes in May.\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: fixture("llama_cpp_python_text_no_usage.sse"),
        chunking: Chunking::Fixed(9),
    }]);
    let words: Vec<String> = [
        common::bin(),
        "--data-dir",
        &data.display().to_string(),
        "--provider",
        "openai",
        "--model",
        "smol",
        "--base-url",
        &fake.openai_base(),
        &vault.display().to_string(),
    ]
    .iter()
    .map(|w| quote(w))
    .collect();
    let line = format!(
        "env OPENAI_API_KEY=k TERM=xterm-256color {}; echo EXIT=$?; sleep 60",
        words.join(" ")
    );
    let tmux = Tmux::start(&line, 100, 30);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    let status = |s: &str| s.lines().last().unwrap_or_default().to_string();
    assert!(
        status(&tmux.screen()).contains("smol · 0 tok · ctx 0%"),
        "{}",
        tmux.screen()
    );
    tmux.type_text("Say hello");
    tmux.keys(&["Enter"]);
    tmux.wait_text("science fiction! I'm");
    let screen = tmux.wait_for("the estimated usage", |s| {
        let last = s.lines().last().unwrap_or_default();
        last.contains(" ready ") && last.contains("smol · ~")
    });
    let bar = status(&screen);
    assert!(bar.contains(" tok · ctx ~"), "{bar}");
    assert!(
        !bar.contains("smol · ~0 tok"),
        "the estimate is not zero: {bar}"
    );
    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
}
