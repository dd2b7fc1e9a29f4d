//! The `/` list end to end in a real terminal (tmux), issue 23: a trusted vault's command with
//! an argument is found by typing `/` and a few letters, completed with Tab, given its argument
//! and run with Enter; the prompt made from the file reaches the fake provider as the user's text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text};
use common::run;
use common::tmux::{Tmux, app_line};

#[test]
fn slash_lists_a_trusted_vault_command_tab_completes_it_and_enter_sends_its_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let commands = vault.join(".vaultchat/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    std::fs::write(
        commands.join("weekly-review.md"),
        "---\ndescription: Review the week's notes\narguments: [focus]\n---\nReview my week with a focus on {{focus}}.\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    assert!(run(&data, &vault, &["trust"]).status.success());
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: anthropic_text(
            "Here is your review.",
            FakeUsage {
                input: 50,
                output: 5,
                cache_read: 0,
                cache_write: 0,
            },
        ),
        chunking: Chunking::Fixed(7),
    }]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 100, 30);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.type_text("/");
    let screen = tmux.wait_text("Start a new session");
    assert!(
        screen.contains("/compact"),
        "the built-ins listed: {screen}"
    );
    tmux.type_text("wee");
    let screen = tmux.wait_text("Review the week's notes");
    assert!(screen.contains("/weekly-review"), "{screen}");
    assert!(!screen.contains("/compact"), "filtered: {screen}");
    tmux.keys(&["Tab"]);
    let screen = tmux.wait_text("/weekly-review <focus>");
    assert!(
        !screen.contains("Review the week's notes"),
        "Tab closed the list: {screen}"
    );
    tmux.type_text("garden");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Here is your review.");

    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "one turn");
    let sent = &requests[0].raw_body;
    assert!(
        sent.contains("Review my week with a focus on garden."),
        "the command's prompt reached the model: {sent}"
    );
    assert!(
        !sent.contains("{{focus}}"),
        "the placeholder was filled: {sent}"
    );
}
