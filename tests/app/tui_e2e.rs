//! The full-screen app end to end in a real terminal (tmux) against the local fake provider:
//! launch on a temp vault, type a request, the banner shows the path and the diff, nothing is
//! written before `y`, after `y` the file changes and the reply shows, `n` leaves the file alone,
//! Ctrl+Q quits and restores the terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use common::tmux::{Tmux, app_line};
use serde_json::json;
use std::time::{Duration, Instant};

const PLAN: &str = "# Garden plan\n\nPlant tomatoes in May.\n\nWater them daily.\n";

fn usage() -> FakeUsage {
    FakeUsage {
        input: 100,
        output: 20,
        cache_read: 0,
        cache_write: 0,
    }
}

fn edit(id: &str, find: &str, replace: &str) -> Reply {
    Reply::Sse {
        body: anthropic_tool_calls(
            Some("I'll change the note."),
            &[(
                id,
                "update_note",
                json!({"note": "Plan.md", "replace_text": {"find": find, "replace": replace}}),
            )],
            usage(),
        ),
        chunking: Chunking::Fixed(7),
    }
}

#[test]
fn approve_with_y_writes_deny_with_n_does_not_and_ctrl_q_restores_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), PLAN).unwrap();
    let data = tmp.path().join("data");
    let note = vault.join("Plan.md");
    let after_first = PLAN.replace("Plant tomatoes in May.", "Plant tomatoes in late April.");

    let fake = FakeLlm::start(vec![
        edit(
            "w1",
            "Plant tomatoes in May.",
            "Plant tomatoes in late April.",
        ),
        Reply::Sse {
            body: anthropic_text("Moved the planting to late April.", usage()),
            chunking: Chunking::Fixed(5),
        },
        edit("w2", "Water them daily.", "Never water them."),
        Reply::Sse {
            body: anthropic_text("Understood, I left the watering alone.", usage()),
            chunking: Chunking::Whole,
        },
    ]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 120, 40);
    // The chat has the keyboard at start-up; it is ready once the vault is indexed.
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    assert_eq!(
        tmux.run(&["display", "-p", "-t", "t", "#{alternate_on}"])
            .trim(),
        "1"
    );

    tmux.type_text("Move the tomatoes to late April");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("Allow update_note?");
    assert!(
        screen.contains("update Plan.md"),
        "the banner names the path:\n{screen}"
    );
    assert!(screen.contains("- Plant tomatoes in May."), "{screen}");
    assert!(
        screen.contains("+ Plant tomatoes in late April."),
        "{screen}"
    );
    assert!(screen.contains("+1 -1"), "{screen}");
    // Nothing is written while the banner waits. No wait is needed for that: the agent asks
    // only once the change is planned, from the task that would write, and writes only after
    // the answer; a write made before asking would be on disk by the time the banner shows.
    assert_eq!(std::fs::read_to_string(&note).unwrap(), PLAN);
    tmux.keys(&["y"]);
    tmux.wait_text("Moved the planting to late April.");
    // The edit went to the open note's buffer or the file: either way, after saving it is on disk.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&note).unwrap() != after_first {
        if Instant::now() > deadline {
            // The note is open in the editor: the edit is in the buffer; save it.
            tmux.keys(&["C-s"]);
            let saving = Instant::now();
            while std::fs::read_to_string(&note).unwrap() != after_first {
                assert!(
                    saving.elapsed() < Duration::from_secs(10),
                    "{:?}\n{}",
                    std::fs::read_to_string(&note).unwrap(),
                    tmux.screen()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // A second change, denied with `n` (and Enter for no reason): the file stays as it is.
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("Stop watering");
    tmux.keys(&["Enter"]);
    tmux.wait_text("+ Never water them.");
    tmux.keys(&["n"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("Understood, I left the watering alone.");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), after_first);
    let sent = fake.requests()[3].raw_body.clone();
    assert!(sent.contains("declined"), "the model was told: {sent}");

    tmux.keys(&["C-q"]);
    let screen = tmux.wait_text("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(
        tmux.run(&["display", "-p", "-t", "t", "#{alternate_on}"])
            .trim(),
        "0",
        "the alternate screen was left"
    );
    assert!(
        !screen.contains("Ask about your notes"),
        "the app's screen is gone:\n{screen}"
    );
}
