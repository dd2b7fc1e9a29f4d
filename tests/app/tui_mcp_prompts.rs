//! MCP prompts in the app, end to end in a real terminal (tmux), issue 23 (decisions §67): the
//! prompts of the person's MCP server (written with the official Python SDK,
//! tests/peers/prompts_server.py) are in the `/` list as `/server:prompt` with their
//! descriptions; Tab completes one and shows its arguments, Enter runs it, and the prompt the
//! server made from the argument reaches the fake provider.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text};
use common::tmux::{Tmux, app_line};

#[test]
fn slash_lists_an_mcp_prompt_tab_completes_it_and_enter_sends_the_servers_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        common::python_server_toml("notes", "prompts_server.py", ""),
    )
    .unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: anthropic_text(
            "Your notes on gardening, summarised.",
            FakeUsage {
                input: 50,
                output: 5,
                cache_read: 0,
                cache_write: 0,
            },
        ),
        chunking: Chunking::Fixed(7),
    }]);
    let extra = ["--config".to_string(), config.display().to_string()];
    let tmux = Tmux::start(
        &app_line(&[], &data, &fake.base_url, &extra, &vault),
        100,
        30,
    );
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.type_text("/notes:");
    // The list refilters when the host's answer (with the server's prompts) comes.
    let screen = tmux.wait_text("/notes:house_style");
    assert!(screen.contains("/notes:summarize"), "{screen}");
    assert!(
        screen.contains("Summarise what the notes say"),
        "its description: {screen}"
    );
    assert!(!screen.contains("/compact"), "filtered: {screen}");
    tmux.type_text("su");
    tmux.wait_for("only the one prompt", |s| !s.contains("/notes:house_style"));
    tmux.keys(&["Tab"]);
    let screen = tmux.wait_text("/notes:summarize <topic> [style]");
    assert!(
        !screen.contains("Summarise what the notes say"),
        "Tab closed the list: {screen}"
    );
    tmux.type_text("gardening");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Your notes on gardening, summarised.");

    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "one turn");
    let sent = &requests[0].raw_body;
    assert!(
        sent.contains("Summarise what my notes say about gardening, in a plain style."),
        "the server's prompt reached the model: {sent}"
    );
}

/// A server whose `prompts/list` never answers (tests/peers/hostile_prompts.py): the `/` list
/// opens at once with everything else, the app says in one line that the server's prompts are
/// not offered once its timeout passed, and it keeps answering keys meanwhile.
#[test]
fn a_server_that_never_lists_its_prompts_is_one_notice_and_the_app_keeps_answering() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        common::python_server_toml(
            "h",
            "hostile_prompts.py",
            "timeout_secs = 5\nenv = { HOSTILE_MODE = \"hang\" }\n",
        ),
    )
    .unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(Vec::new());
    let extra = ["--config".to_string(), config.display().to_string()];
    let tmux = Tmux::start(
        &app_line(&[], &data, &fake.base_url, &extra, &vault),
        120,
        30,
    );
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("/");
    tmux.wait_text("Start a new session");
    tmux.type_text("usa");
    let screen = tmux.wait_text("Show token usage");
    assert!(!screen.contains("Start a new session"), "{screen}");
    // The list answered before the server's timeout, not after it.
    assert!(!screen.contains("did not list its prompts"), "{screen}");
    let screen = tmux.wait_text("did not list its prompts within 5 s");
    let notices = screen.matches("did not list its prompts").count();
    assert_eq!(notices, 1, "{screen}");
    tmux.keys(&["Escape"]);
    tmux.type_text(" still typing");
    tmux.wait_text("/usa still typing");
}

/// A server still starting (its `initialize` unanswered): `/h:p` says the servers are still
/// starting, not that there is no such command (and not "begin it with //").
#[test]
fn a_servers_prompt_asked_while_it_starts_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    let data = tmp.path().join("data");
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        common::python_server_toml(
            "h",
            "hostile_prompts.py",
            "timeout_secs = 60\nenv = { HOSTILE_MODE = \"hang-init\" }\n",
        ),
    )
    .unwrap();
    let fake = FakeLlm::start(Vec::new());
    let extra = ["--config".to_string(), config.display().to_string()];
    let tmux = Tmux::start(
        &app_line(&[], &data, &fake.base_url, &extra, &vault),
        120,
        30,
    );
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("/h:p x");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("the MCP servers are still starting");
    assert!(!screen.contains("is not a command"), "{screen}");
    assert!(fake.requests().is_empty(), "nothing reached the model");
}
