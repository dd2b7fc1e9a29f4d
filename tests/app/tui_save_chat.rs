//! `/save` end to end in a real terminal (tmux): after a turn in which the agent read a note,
//! `/save` shows the chat's note in the banner as a new file under Chats/, nothing is written
//! before `y`, and after `y` the note is on disk with its frontmatter, the turn and a [[link]] to
//! the note the agent read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use common::tmux::{Tmux, app_line};
use serde_json::json;

fn usage() -> FakeUsage {
    FakeUsage {
        input: 100,
        output: 20,
        cache_read: 0,
        cache_write: 0,
    }
}

#[test]
fn save_shows_the_chat_note_and_y_writes_it_under_chats() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(
        vault.join("Projects/Plan.md"),
        "# Plan\n\nTomatoes in May.\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: anthropic_tool_calls(
                Some("Let me look."),
                &[("r1", "read_note", json!({"note": "Projects/Plan.md"}))],
                usage(),
            ),
            chunking: Chunking::Fixed(11),
        },
        Reply::Sse {
            body: anthropic_text("Plant them in May.", usage()),
            chunking: Chunking::Fixed(5),
        },
    ]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 100, 30);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("When do I plant tomatoes?");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Plant them in May.");
    tmux.wait_for("the turn to end", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });

    tmux.type_text("/save");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("Chats/");
    assert!(screen.contains("create_note"), "{screen}");
    let chats = vault.join("Chats");
    assert!(!chats.exists(), "nothing is written before y");
    tmux.keys(&["y"]);
    let screen = tmux.wait_text("chat saved as Chats/");
    let saved: Vec<_> = std::fs::read_dir(&chats)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?} {screen}");
    let name = saved[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(" When do I plant tomatoes.md"), "{name}");
    let note = std::fs::read_to_string(&saved[0]).unwrap();
    for part in [
        "title: \"When do I plant tomatoes?\"",
        "model: \"claude-sonnet-4-5\"",
        "**You:** When do I plant tomatoes?",
        "> `read_note` [[Projects/Plan]]",
        "Plant them in May.",
        "- Read: [[Projects/Plan]]",
    ] {
        assert!(note.contains(part), "{part}: {note}");
    }

    // A second save never replaces the first: it takes the next free name.
    tmux.type_text("/save last");
    tmux.keys(&["Enter"]);
    tmux.wait_text("When do I plant tomatoes 2.md");
    tmux.keys(&["y"]);
    tmux.wait_text("tomatoes 2.md");
    let second = saved[0].with_file_name(name.replace(".md", " 2.md"));
    let last = std::fs::read_to_string(&second).unwrap();
    assert!(last.contains("Plant them in May."), "{last}");
    assert_eq!(
        std::fs::read_to_string(&saved[0]).unwrap(),
        note,
        "the first is kept"
    );
    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=0");
}
