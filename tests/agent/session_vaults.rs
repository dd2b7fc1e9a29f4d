//! Sessions belong to their vault. Two vaults share one data folder (`--data-dir`, as one person's
//! vaults do by default); a chat held in vault A is not shown, exported, deleted or resumed from
//! vault B — by its full id or a prefix — and nothing is written into B (the finding:
//! vault A's chat was written into vault B's `Chats/`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn vaultchat(data: &Path, vault: &Path, fake: &FakeLlm, args: &[&str]) -> Output {
    common::cmd(data, vault)
        .args(["--provider", "anthropic", "--base-url", &fake.base_url])
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args(args)
        .output()
        .unwrap()
}

fn reply(text: &str) -> Reply {
    Reply::Sse {
        body: anthropic_text(
            text,
            FakeUsage {
                input: 10,
                output: 3,
                cache_read: 0,
                cache_write: 0,
            },
        ),
        chunking: Chunking::Whole,
    }
}

#[test]
fn a_session_of_another_vault_is_not_shown_exported_deleted_or_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let (a, b) = (tmp.path().join("A"), tmp.path().join("B"));
    for vault in [&a, &b] {
        std::fs::create_dir_all(vault).unwrap();
        std::fs::write(vault.join("Plan.md"), "# Plan\n").unwrap();
    }
    let fake = FakeLlm::start(vec![reply("Private to A."), reply("Still A.")]);
    let out = vaultchat(&data, &a, &fake, &["ask", "A's secret question", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = v["session_id"].as_str().unwrap().to_string();
    assert_eq!(fake.requests().len(), 1);

    let b_before = snapshot(&b);
    for id in [session.as_str(), &session[..8]] {
        for args in [
            vec!["sessions", "show", id],
            vec!["sessions", "show", id, "--json"],
            vec!["sessions", "export", id],
            vec!["sessions", "export", id, "--to", "-"],
            vec!["sessions", "rm", id],
            vec!["ask", "--session", id, "B asks"],
            vec!["ask", "--session", id, "--continue-new", "B asks"],
        ] {
            let out = vaultchat(&data, &b, &fake, &args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{args:?} succeeded: {out:?}");
            assert!(
                stderr.contains(&format!(
                    "session `{session}` belongs to another vault ({})",
                    a.canonicalize().unwrap().display()
                )),
                "{args:?}: {stderr}"
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                !stdout.contains("secret") && !stdout.contains("Private to A"),
                "{args:?} showed A's chat: {stdout}"
            );
        }
    }
    assert_eq!(snapshot(&b), b_before, "nothing was written into vault B");
    assert_eq!(fake.requests().len(), 1, "B's resume sent nothing");

    // The session is still A's, whole: shown and resumed from A.
    let out = vaultchat(&data, &a, &fake, &["sessions", "show", &session]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("A's secret question"));
    let out = vaultchat(&data, &a, &fake, &["ask", "--session", &session, "more"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fake.requests().len(), 2);
}

/// `vaultchat sessions export` finds the next free name, as `/save` does: a second export of one
/// session writes `… 2.md` beside the first and leaves the first as it was.
#[test]
fn a_second_export_of_one_session_writes_the_next_free_name() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let fake = FakeLlm::start(vec![reply("The answer.")]);
    let out = vaultchat(&data, &vault, &fake, &["ask", "Which plan?", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = v["session_id"].as_str().unwrap().to_string();

    let export = |n: usize| {
        let out = vaultchat(
            &data,
            &vault,
            &fake,
            &["sessions", "export", &session, "--json"],
        );
        assert!(out.status.success(), "export {n}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["saved"].as_str().unwrap().to_string()
    };
    let first = export(1);
    let first_bytes = std::fs::read(vault.join(&first)).unwrap();
    let second = export(2);
    let stem = first.strip_suffix(".md").unwrap();
    assert_eq!(second, format!("{stem} 2.md"));
    assert_eq!(std::fs::read(vault.join(&first)).unwrap(), first_bytes);
    assert_eq!(
        std::fs::read(vault.join(&second)).unwrap(),
        first_bytes,
        "the same session, the same text"
    );
}

/// `VAULTCHAT_NOW_MS` starts the clock of a process (src/time.rs): a session asked on
/// 2021-03-14 11:04 UTC is counted on that day, listed with it and exported under it, and the
/// last 30 days seen from then hold it while the last 30 days seen from today do not.
#[test]
fn a_started_clock_dates_sessions_usage_and_exports() {
    const NOW: &str = "1615719845123"; // 2021-03-14T11:04:05.123Z
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let fake = FakeLlm::start(vec![reply("The answer.")]);
    let at_now = |args: &[&str]| {
        let out = common::cmd(&data, &vault)
            .args(["--provider", "anthropic", "--base-url", &fake.base_url])
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("VAULTCHAT_NOW_MS", NOW)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let asked: serde_json::Value =
        serde_json::from_str(&at_now(&["ask", "Which plan?", "--json"])).unwrap();
    let session = asked["session_id"].as_str().unwrap().to_string();

    let usage: serde_json::Value =
        serde_json::from_str(&at_now(&["usage", "--days", "30", "--json"])).unwrap();
    assert_eq!(usage["by_day"][0]["day"], "2021-03-14", "{usage}");
    assert_eq!(usage["responses"], 1, "{usage}");

    let listed = at_now(&["sessions"]);
    assert!(
        listed.contains(&format!("{session}  2021-03-14")),
        "{listed}"
    );

    let exported: serde_json::Value =
        serde_json::from_str(&at_now(&["sessions", "export", &session, "--json"])).unwrap();
    let saved = exported["saved"].as_str().unwrap();
    assert!(saved.starts_with("Chats/2021-03-14 "), "{saved}");
    let note = std::fs::read_to_string(vault.join(saved)).unwrap();
    assert!(note.contains("\ndate: 2021-03-14\n"), "{note}");

    // Without the variable the clock is the real one, years after the session.
    let out = vaultchat(&data, &vault, &fake, &["usage", "--days", "30", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let today: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(today["responses"], 0, "{today}");
}
