//! Long sessions in the full-screen app (tmux, against the local fake provider): `/compact`
//! summarises the older turns and shows a marked item whose summary Ctrl+T expands;
//! `/continue-new` starts a new session from the summary, linked to the old one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text};
use common::tmux::{Tmux, app_line};

fn text(reply: &str) -> Reply {
    Reply::Sse {
        body: anthropic_text(
            reply,
            FakeUsage {
                input: 100,
                output: 20,
                cache_read: 0,
                cache_write: 0,
            },
        ),
        chunking: Chunking::Fixed(9),
    }
}

#[test]
fn compact_shows_an_expandable_summary_and_continue_new_starts_from_it() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n\nTomatoes.\n").unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start(vec![
        text("First answer."),
        text("Second answer."),
        text("SUMMARY-TUI the person asked two questions about tomatoes."),
        text("SUMMARY-NEW everything so far, summarised for the next session."),
        text("Third answer."),
    ]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 100, 30);
    let ready = |tmux: &Tmux| {
        tmux.wait_for("the ready badge", |s| {
            s.lines().any(|l| l.starts_with(" ready "))
        })
    };
    ready(&tmux);
    for (question, answer) in [
        ("First question?", "First answer."),
        ("Second?", "Second answer."),
    ] {
        tmux.type_text(question);
        tmux.keys(&["Enter"]);
        tmux.wait_text(answer);
        ready(&tmux);
    }

    tmux.type_text("/compact");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("[+ summary]");
    ready(&tmux);
    assert!(screen.contains("compacted ·"), "{screen}");
    assert!(!screen.contains("SUMMARY-TUI"), "collapsed: {screen}");
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests[2].body["tools"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "the summary request offers no tools"
    );
    tmux.keys(&["C-t"]);
    let screen = tmux.wait_text("SUMMARY-TUI");
    assert!(screen.contains("[− summary]"), "{screen}");

    tmux.type_text("/continue-new");
    tmux.keys(&["Enter"]);
    tmux.wait_text("new session continuing");
    ready(&tmux);
    tmux.type_text("Third?");
    tmux.keys(&["Enter"]);
    tmux.wait_text("Third answer.");
    ready(&tmux);
    let requests = fake.requests();
    assert_eq!(
        requests.len(),
        5,
        "one summary of the old session, then the turn"
    );
    assert!(
        requests[3].raw_body.contains("SUMMARY-TUI"),
        "the old session's summary goes into the new one's"
    );
    assert!(requests[4].raw_body.contains("SUMMARY-NEW"));
    assert!(!requests[4].raw_body.contains("First question?"));
    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=0");

    let listed: serde_json::Value =
        serde_json::from_str(&common::ok(&data, &vault, &["sessions", "--json"])).unwrap();
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed}");
    let child = &sessions[0];
    assert_eq!(child["parent_id"], sessions[1]["id"], "{listed}");
    // Usage counts the summary requests: five responses in all.
    let responses: u64 = sessions
        .iter()
        .map(|s| s["usage"]["responses"].as_u64().unwrap())
        .sum();
    assert_eq!(responses, 5, "{listed}");
}
