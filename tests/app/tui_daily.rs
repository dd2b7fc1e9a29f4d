//! Daily notes and templates in the app, in a real terminal (tmux): the agent writes the day's
//! note only after the person approves it in the banner (created from the vault's template,
//! then appended to), the "today's note" key makes and opens today's note at once, and "insert
//! template" puts a filled template at the cursor.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use common::tmux::{Tmux, app_line};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// 2026-12-04 10:30:00 UTC, a Friday: the app's clock.
const NOW: &str = "VAULTCHAT_NOW_MS=1796380200000";

const DAY_NOTE: &str = "Journal/Daily/2026/12/2026-12-01 Tue.md";

const FILLED: &str = "---\ncreated: 2026-12-01 10:30\n---\n# 2026-12-01 Tue\n\nTuesday, December 1st 2026\n\n## Log\n";

fn usage() -> FakeUsage {
    FakeUsage {
        input: 100,
        output: 20,
        cache_read: 0,
        cache_write: 0,
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn journal_vault(root: &Path) {
    write(
        root,
        ".obsidian/daily-notes.json",
        r#"{"folder": "Journal/Daily", "format": "YYYY/MM/YYYY-MM-DD ddd", "template": "Templates/Daily"}"#,
    );
    write(
        root,
        ".obsidian/templates.json",
        r#"{"folder": "Templates"}"#,
    );
    write(
        root,
        "Templates/Daily.md",
        "---\ncreated: {{date}} {{time}}\n---\n# {{title}}\n\n{{date:dddd, MMMM Do YYYY}}\n\n## Log\n",
    );
    write(
        root,
        "Templates/Meeting.md",
        "## Meeting {{date:DD.MM.YYYY}}\nAttendees:\n",
    );
    write(root, "Inbox.md", "# Inbox\n\nfirst line\n");
}

fn append_call(id: &str) -> Reply {
    Reply::Sse {
        body: anthropic_tool_calls(
            Some("I'll add it to that day's note."),
            &[(
                id,
                "write_daily_note",
                json!({"date": "2026-12-01", "append": "- x"}),
            )],
            usage(),
        ),
        chunking: Chunking::Fixed(9),
    }
}

fn ready(tmux: &Tmux) {
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
}

/// Waits until the file at `path` holds `want` (the app writes on its own threads).
fn wait_for_file(path: &Path, want: &str, tmux: &Tmux) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(path).ok().as_deref() != Some(want) {
        assert!(
            Instant::now() < deadline,
            "{:?}\n{}",
            std::fs::read_to_string(path),
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_agent_writes_the_daily_note_only_after_approval_from_its_template_then_appends() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = (tmp.path().join("vault"), tmp.path().join("data"));
    journal_vault(&vault);
    let note = vault.join(DAY_NOTE);
    let fake = FakeLlm::start(vec![
        append_call("d1"),
        Reply::Sse {
            body: anthropic_text("Added to Tuesday's note.", usage()),
            chunking: Chunking::Whole,
        },
        append_call("d2"),
        Reply::Sse {
            body: anthropic_text("Added it again.", usage()),
            chunking: Chunking::Whole,
        },
    ]);
    let tmux = Tmux::start(
        &app_line(&[NOW], &data, &fake.base_url, &[], &vault),
        120,
        40,
    );
    ready(&tmux);

    tmux.type_text("Log x on Tuesday");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("Allow write_daily_note?");
    assert!(screen.contains(&format!("create {DAY_NOTE}")), "{screen}");
    assert!(screen.contains("+ # 2026-12-01 Tue"), "{screen}");
    // The banner is sent by the task that would write, after planning and before any write.
    assert!(!note.exists(), "written before the answer");
    tmux.keys(&["y"]);
    tmux.wait_text("Added to Tuesday's note.");
    wait_for_file(&note, &format!("{FILLED}- x\n"), &tmux);

    ready(&tmux);
    tmux.type_text("And once more");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("Allow write_daily_note?");
    assert!(screen.contains(&format!("update {DAY_NOTE}")), "{screen}");
    assert_eq!(
        std::fs::read_to_string(&note).unwrap(),
        format!("{FILLED}- x\n")
    );
    tmux.keys(&["y"]);
    tmux.wait_text("Added it again.");
    wait_for_file(&note, &format!("{FILLED}- x\n- x\n"), &tmux);
}

#[test]
fn the_today_key_makes_and_opens_todays_note_and_a_template_goes_in_at_the_cursor() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = (tmp.path().join("vault"), tmp.path().join("data"));
    journal_vault(&vault);
    let today = vault.join("Journal/Daily/2026/12/2026-12-04 Fri.md");
    let fake = FakeLlm::start(Vec::new());
    let tmux = Tmux::start(
        &app_line(&[NOW], &data, &fake.base_url, &[], &vault),
        120,
        40,
    );
    ready(&tmux);

    tmux.keys(&["M-d"]);
    let filled_today = "---\ncreated: 2026-12-04 10:30\n---\n# 2026-12-04 Fri\n\nFriday, December 4th 2026\n\n## Log\n";
    wait_for_file(&today, filled_today, &tmux);
    let screen = tmux.wait_text("Friday, December 4th 2026");
    assert!(screen.contains("2026-12-04 Fri"), "{screen}");

    // Pressed again: the note is there, opened as it is, not made twice.
    tmux.keys(&["M-d"]);
    tmux.wait_text("Friday, December 4th 2026");
    assert_eq!(std::fs::read_to_string(&today).unwrap(), filled_today);

    // Insert a template on a new line after the last one: the picker lists the templates folder.
    tmux.keys(&["M-1", "C-End", "Enter"]);
    tmux.keys(&["M-t"]);
    let screen = tmux.wait_text("Insert template");
    assert!(
        screen.contains("Meeting") && screen.contains("Daily"),
        "{screen}"
    );
    tmux.type_text("meet");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Meeting 04.12.2026");
    tmux.keys(&["C-s"]);
    wait_for_file(
        &today,
        &format!("{filled_today}## Meeting 04.12.2026\nAttendees:\n\n"),
        &tmux,
    );
}
