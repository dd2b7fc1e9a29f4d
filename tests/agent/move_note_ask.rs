//! `move_note` through the agent: `vaultchat ask` with the fake provider asking for the move.
//! Approved, the note moves and every link follows (the model hears the files changed); denied,
//! the vault is byte for byte as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{
    Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls, openai_text,
    openai_tool_calls,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;

#[derive(Debug, Clone, Copy)]
enum P {
    Anthropic,
    OpenAi,
}

const USAGE: FakeUsage = FakeUsage {
    input: 10,
    output: 5,
    cache_read: 0,
    cache_write: 0,
};

const TARGET: &str = "# Seeds\n\nOrder from [the shop list](../Shops.md).\n";
const LINKING: &str = "# Plan\n\nSee [[Seeds]], [[Seeds#Tomatoes|tomato seeds]] and ![[Seeds]].\n\n`[[Seeds]]` is how you link.\n";
const SHOPS: &str = "# Shops\n\n- [seeds](Garden/Seeds.md)\n";
const ALONE: &str = "# Alone\n\nNothing links from here.\n";

fn setup(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let vault = dir.join("vault");
    std::fs::create_dir_all(vault.join("Garden")).unwrap();
    std::fs::write(vault.join("Garden/Seeds.md"), TARGET).unwrap();
    std::fs::write(vault.join("Plan.md"), LINKING).unwrap();
    std::fs::write(vault.join("Shops.md"), SHOPS).unwrap();
    std::fs::write(vault.join("Alone.md"), ALONE).unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[provider]\nidle_timeout_secs = 2\nconnect_timeout_secs = 2\n",
    )
    .unwrap();
    (vault, dir.join("data"), config)
}

fn replies(p: P) -> Vec<Reply> {
    let call = [(
        "call_m",
        "move_note",
        json!({"note": "Seeds", "to": "Archive/2024/Seed list"}),
    )];
    let (tool, text) = match p {
        P::Anthropic => (
            anthropic_tool_calls(Some("Moving it."), &call, USAGE),
            anthropic_text("Moved.", USAGE),
        ),
        P::OpenAi => (
            openai_tool_calls(None, &call, USAGE),
            openai_text("Moved.", USAGE),
        ),
    };
    vec![
        Reply::Sse {
            body: tool,
            chunking: Chunking::Fixed(11),
        },
        Reply::Sse {
            body: text,
            chunking: Chunking::Whole,
        },
    ]
}

fn ask(p: P, fake: &FakeLlm, vault: &Path, data: &Path, config: &Path, approve: &str) -> Output {
    let mut c = common::cmd(data, vault);
    c.arg("--config").arg(config);
    match p {
        P::Anthropic => c
            .args(["--provider", "anthropic", "--base-url", &fake.base_url])
            .env("ANTHROPIC_API_KEY", "sk-ant-test"),
        P::OpenAi => c
            .args(["--provider", "openai", "--base-url", &fake.openai_base()])
            .env("OPENAI_API_KEY", "sk-openai-test"),
    };
    c.args([
        "ask",
        "Archive the seed list",
        "--approve",
        approve,
        "--json",
    ])
    .output()
    .unwrap()
}

fn read(vault: &Path, rel: &str) -> String {
    std::fs::read_to_string(vault.join(rel)).unwrap()
}

#[test]
fn an_approved_move_rewrites_every_link_and_the_model_hears_the_files() {
    for p in [P::Anthropic, P::OpenAi] {
        let tmp = tempfile::tempdir().unwrap();
        let (vault, data, config) = setup(tmp.path());
        let fake = FakeLlm::start(replies(p));
        let out = ask(p, &fake, &vault, &data, &config, "all");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["tool_calls"][0]["decision"], "approved_once", "{v}");
        assert_eq!(v["tool_calls"][0]["is_error"], false, "{v}");
        assert!(!vault.join("Garden/Seeds.md").exists());
        assert_eq!(
            read(&vault, "Archive/2024/Seed list.md"),
            "# Seeds\n\nOrder from [the shop list](../../Shops.md).\n"
        );
        assert_eq!(
            read(&vault, "Plan.md"),
            "# Plan\n\nSee [[Seed list]], [[Seed list#Tomatoes|tomato seeds]] and ![[Seed list]].\n\n`[[Seeds]]` is how you link.\n"
        );
        assert_eq!(
            read(&vault, "Shops.md"),
            "# Shops\n\n- [seeds](Archive/2024/Seed%20list.md)\n"
        );
        assert_eq!(read(&vault, "Alone.md"), ALONE);
        // What the model was told: the files changed, the moved note first.
        let second = serde_json::to_string(&fake.requests()[1].body).unwrap();
        assert!(
            second.contains(
                r#"\"files_changed\":[\"Archive/2024/Seed list.md\",\"Plan.md\",\"Shops.md\"]"#
            ),
            "{second}"
        );
    }
}

#[test]
fn a_denied_move_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data, config) = setup(tmp.path());
    let before: Vec<(String, String)> = ["Garden/Seeds.md", "Plan.md", "Shops.md", "Alone.md"]
        .iter()
        .map(|r| (r.to_string(), read(&vault, r)))
        .collect();
    let fake = FakeLlm::start(replies(P::Anthropic));
    let out = ask(P::Anthropic, &fake, &vault, &data, &config, "none");
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tool_calls"][0]["decision"], "denied");
    for (rel, text) in before {
        assert_eq!(read(&vault, &rel), text, "{rel}");
    }
    assert!(!vault.join("Archive").exists());
}
