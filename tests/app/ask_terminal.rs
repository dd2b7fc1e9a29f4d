//! `vaultchat ask --approve ask` on a real terminal (tmux): the request shows the path and the
//! coloured diff, nothing is written before `y`, Enter alone denies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use common::tmux::{Tmux, quote};
use serde_json::json;
use std::path::Path;

const PLAN: &str = "# Garden plan\n\nPlant tomatoes in May.\n\nWater them daily.\n";

/// The last foreground colour (SGR 30–39) set before `needle` in a `capture-pane -e` dump.
fn foreground_before(screen: &str, needle: &str) -> Option<u8> {
    let at = screen.find(needle)?;
    let before = &screen[..at];
    let mut colour = None;
    for (i, _) in before.match_indices("\u{1b}[") {
        let rest = &before[i + 2..];
        let end = rest.find('m')?;
        for code in rest[..end].split(';') {
            if let Ok(n) = code.parse::<u8>()
                && (30..=39).contains(&n)
            {
                colour = Some(n);
            }
        }
    }
    colour
}

fn command_line(fake: &FakeLlm, data: &Path, vault: &Path) -> String {
    let args = [
        common::bin().to_string(),
        "--data-dir".into(),
        data.display().to_string(),
        "--vault".into(),
        vault.display().to_string(),
        "--provider".into(),
        "anthropic".into(),
        "--base-url".into(),
        fake.base_url.clone(),
        "ask".into(),
        "Plant in late April instead".into(),
    ];
    let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
    format!(
        "env -u NO_COLOR ANTHROPIC_API_KEY=k TERM=xterm-256color {}; echo EXIT=$?; sleep 60",
        args.join(" ")
    )
}

fn script() -> Vec<Reply> {
    let usage = FakeUsage {
        input: 10,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    };
    vec![
        Reply::Sse {
            body: anthropic_tool_calls(
                Some("I'll change the date."),
                &[(
                    "w1",
                    "update_note",
                    json!({"note": "Plan.md", "replace_text": {"find": "Plant tomatoes in May.", "replace": "Plant tomatoes in late April."}}),
                )],
                usage,
            ),
            chunking: Chunking::Fixed(7),
        },
        Reply::Sse {
            body: anthropic_text("Done.", usage),
            chunking: Chunking::Whole,
        },
    ]
}

#[test]
fn the_terminal_prompt_shows_the_diff_and_writes_only_after_y() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), PLAN).unwrap();
    let data = tmp.path().join("data");

    let fake = FakeLlm::start(script());
    let tmux = Tmux::start(&command_line(&fake, &data, &vault), 150, 50);
    let screen = tmux.wait_text("[n] deny");
    assert!(screen.contains("update Plan.md"), "{screen}");
    assert!(screen.contains("+1 -1"), "{screen}");
    assert!(screen.contains("-Plant tomatoes in May."), "{screen}");
    assert!(
        screen.contains("+Plant tomatoes in late April."),
        "{screen}"
    );
    assert!(
        screen.contains("[y] once")
            && screen.contains("[s] this session")
            && screen.contains("[a] always")
    );
    // Colours: removed lines red, added green (SGR 31/32 as tmux reports them).
    let coloured = tmux.screen_with_escapes();
    assert_eq!(
        foreground_before(&coloured, "+Plant tomatoes in late April."),
        Some(32),
        "{coloured:?}"
    );
    assert_eq!(
        foreground_before(&coloured, "-Plant tomatoes in May."),
        Some(31),
        "{coloured:?}"
    );
    // Nothing is written while the question is open. No wait is needed for that: the agent
    // asks only once the change is planned, from the task that would write, and writes only
    // after the answer; a write made before asking would be on disk by the time the question
    // shows.
    assert_eq!(
        std::fs::read_to_string(vault.join("Plan.md")).unwrap(),
        PLAN
    );
    tmux.keys(&["y", "Enter"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(screen.contains("Done."), "{screen}");
    assert_eq!(
        std::fs::read_to_string(vault.join("Plan.md")).unwrap(),
        PLAN.replace("Plant tomatoes in May.", "Plant tomatoes in late April.")
    );
}

#[test]
fn enter_alone_denies_and_the_reason_reaches_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), PLAN).unwrap();
    let data = tmp.path().join("data");

    let fake = FakeLlm::start(script());
    let tmux = Tmux::start(&command_line(&fake, &data, &vault), 150, 50);
    tmux.wait_text("[n] deny");
    tmux.keys(&["Enter"]);
    tmux.wait_text("reason for the model");
    tmux.keys(&["-l", "May is right"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(vault.join("Plan.md")).unwrap(),
        PLAN
    );
    let sent = fake.requests()[1].raw_body.clone();
    assert!(sent.contains("May is right"), "{sent}");
}
