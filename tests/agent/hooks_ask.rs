//! Hooks in `vaultchat ask` (issue 23): the session's start, each turn and its end fire their
//! hooks in that order with the session id, an approved write fires `after_write` with its path,
//! and `ask` returns after them; a failing hook is one line on stderr, never a failed turn.

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use serde_json::json;

fn done(text: &str) -> Reply {
    Reply::Sse {
        body: anthropic_text(text, FakeUsage::default()),
        chunking: Chunking::Whole,
    }
}

#[test]
fn ask_runs_session_turn_and_write_hooks_in_order_and_reports_a_failing_one() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "# Plan\n\nPlant tomatoes in May.\n").unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let log = tmp.path().join("hooks.log");
    let line = format!(
        "echo \"$VAULTCHAT_EVENT|$VAULTCHAT_SESSION_ID|$*\" >> {}",
        log.display()
    );
    std::fs::write(
        data.join("config.toml"),
        format!(
            "[[hooks.session_start]]\ncommand = '{line}'\n\n[[hooks.after_write]]\ncommand = '{line}'\n\n[[hooks.after_turn]]\ncommand = '{line}'\n\n[[hooks.after_turn]]\ncommand = 'echo cannot sync >&2; exit 2'\n\n[[hooks.session_end]]\ncommand = '{line}'\n"
        ),
    )
    .unwrap();
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: anthropic_tool_calls(
                None,
                &[(
                    "w1",
                    "update_note",
                    json!({"note": "Plan.md", "replace_text": {"find": "May", "replace": "April"}}),
                )],
                FakeUsage::default(),
            ),
            chunking: Chunking::Whole,
        },
        done("Moved it."),
    ]);
    let out = common::cmd(&data, &vault)
        .args(["--provider", "anthropic", "--base-url", &fake.base_url])
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args(["ask", "--approve", "all", "--json", "Plant in April"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = outcome["session_id"].as_str().unwrap();
    // `ask` returned after its hooks: the log is complete when it exits.
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        logged,
        format!(
            "session_start||\nafter_write|{session}|Plan.md\nafter_turn|{session}|\nsession_end|{session}|\n"
        ),
        "a new session has its id from its first turn on, its first write's hook included"
    );
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("after_turn hook"))
        .collect();
    assert_eq!(failures.len(), 1, "{stderr}");
    assert!(
        failures[0].contains("exit status: 2") && failures[0].ends_with(": cannot sync"),
        "{stderr}"
    );
}
