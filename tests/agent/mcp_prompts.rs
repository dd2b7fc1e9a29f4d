//! MCP prompts as commands (issue 23, decisions §67): a server written with the official Python
//! SDK (tests/peers/prompts_server.py) offers two prompts, one with arguments and one whose
//! messages hold an embedded text resource and an assistant's answer. `vaultchat commands --json`
//! lists them as `/server:prompt` with their arguments and which server they come from;
//! `vaultchat ask "/server:prompt ARGS"` runs one and its messages reach the model as the spec
//! describes (checked at the fake provider); the same server as a vault plugin is not listed
//! until `vaultchat trust`, and then runs the same way.

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text};
use common::{python_server_toml, repo, venv_python};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Output;

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    /// `--config`, when the server is the person's.
    config: Option<PathBuf>,
}

fn vault(tmp: &tempfile::TempDir) -> (PathBuf, PathBuf) {
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Note.md"), "# Note\n\nA long winded note.\n").unwrap();
    (vault, tmp.path().join("data"))
}

/// A vault, with a config that runs the Python script `script` (in tests/peers) as the person's
/// MCP server `name`, with `extra` lines in its table.
fn with_server(name: &str, script: &str, extra: &str) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = vault(&tmp);
    let config = tmp.path().join("config.toml");
    let text = python_server_toml(name, script, extra);
    std::fs::write(&config, text).unwrap();
    Setup {
        _tmp: tmp,
        vault,
        data,
        config: Some(config),
    }
}

/// The prompts server as one of the person's MCP servers, named `notes`.
fn persons_server() -> Setup {
    with_server("notes", "prompts_server.py", "")
}

/// The prompts server as the vault's plugin `notes` (the script inside the vault).
fn vault_plugin() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = vault(&tmp);
    std::fs::create_dir_all(vault.join(".vaultchat")).unwrap();
    std::fs::copy(
        repo().join("tests/peers/prompts_server.py"),
        vault.join(".vaultchat/prompts_server.py"),
    )
    .unwrap();
    let text = format!(
        "[plugins.notes]\ncommand = {python:?}\nargs = [\".vaultchat/prompts_server.py\"]\n",
        python = venv_python().display().to_string(),
    );
    std::fs::write(vault.join(".vaultchat/plugins.toml"), text).unwrap();
    Setup {
        _tmp: tmp,
        vault,
        data,
        config: None,
    }
}

fn vaultchat(s: &Setup) -> std::process::Command {
    let mut c = common::cmd(&s.data, &s.vault);
    if let Some(config) = &s.config {
        c.arg("--config").arg(config);
    }
    c
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// `vaultchat commands --json`: the MCP prompts in it, by name.
fn mcp_prompts(s: &Setup) -> Vec<Value> {
    let out = vaultchat(s).args(["commands", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["origin"]["kind"] == "mcp_prompt")
        .cloned()
        .collect()
}

fn ask(s: &Setup, fake: &FakeLlm, prompt: &str) -> Output {
    vaultchat(s)
        .args(["--provider", "anthropic", "--base-url", &fake.base_url])
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args(["ask", prompt, "--json"])
        .output()
        .unwrap()
}

fn done() -> Reply {
    Reply::Sse {
        body: anthropic_text("Done.", FakeUsage::default()),
        chunking: Chunking::Whole,
    }
}

/// Both prompts listed as `/notes:…`, from the server `notes`, with their arguments.
fn assert_listed(prompts: &[Value], plugin: bool) {
    let summarize = prompts
        .iter()
        .find(|c| c["name"] == "notes:summarize")
        .unwrap_or_else(|| panic!("notes:summarize is not listed: {prompts:?}"));
    assert_eq!(
        summarize["origin"],
        json!({"kind": "mcp_prompt", "server": "notes", "prompt": "summarize", "plugin": plugin})
    );
    assert_eq!(
        summarize["description"],
        "Summarise what the notes say about a topic"
    );
    assert_eq!(summarize["argument_hint"], "<topic> [style]");
    assert_eq!(
        summarize["arguments"],
        json!([{"name": "topic", "required": true}, {"name": "style", "required": false}])
    );
    assert!(
        prompts.iter().any(|c| c["name"] == "notes:house_style"),
        "{prompts:?}"
    );
}

/// `/notes:summarize` with its arguments inline, then `/notes:house_style`: what reaches the
/// model is the prompt's text, the resource's text with its URI, and the roles as the server
/// gave them.
fn assert_prompts_run(s: &Setup) {
    let fake = FakeLlm::start(vec![done()]);
    let out = ask(s, &fake, "/notes:summarize \"type systems\" style=terse");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = fake.requests()[0].messages();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, "user");
    assert!(
        sent[0]
            .1
            .contains("Summarise what my notes say about type systems, in a terse style."),
        "{sent:?}"
    );

    let fake = FakeLlm::start(vec![done()]);
    let out = ask(s, &fake, "/notes:house_style");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = fake.requests()[0].messages();
    let roles: Vec<&str> = sent.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{sent:?}");
    assert!(sent[0].1.contains("Here is our house style."), "{sent:?}");
    assert!(
        sent[0].1.contains("<resource uri=\"style://house\">"),
        "{sent:?}"
    );
    assert!(
        sent[0]
            .1
            .contains("HOUSE-STYLE: short sentences, no jargon."),
        "{sent:?}"
    );
    assert!(sent[1].1.contains("Understood"), "{sent:?}");
    assert!(
        sent[2].1.contains("Now rewrite the open note to match it."),
        "{sent:?}"
    );
}

#[test]
fn a_servers_prompts_are_listed_as_server_colon_prompt_and_run_through_ask() {
    let s = persons_server();
    assert_listed(&mcp_prompts(&s), false);
    assert_prompts_run(&s);

    // A required argument left out: named, and nothing reaches the model.
    let fake = FakeLlm::start(vec![done()]);
    let out = ask(&s, &fake, "/notes:summarize");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("missing argument <topic>"), "{said}");
    assert!(fake.requests().is_empty());

    // The list in words says which server each comes from.
    let out = vaultchat(&s).arg("commands").output().unwrap();
    let listed = text(&out.stdout);
    let line = listed
        .lines()
        .find(|l| l.starts_with("/notes:summarize"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        line.contains("<topic> [style]") && line.contains("mcp"),
        "{line}"
    );
}

#[test]
fn a_vault_plugins_prompts_are_listed_only_once_trusted() {
    let s = vault_plugin();
    assert!(mcp_prompts(&s).is_empty(), "listed before trust");
    let fake = FakeLlm::start(vec![done()]);
    let out = ask(&s, &fake, "/notes:summarize rust");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is not a command"),
        "{}",
        text(&out.stderr)
    );
    assert!(fake.requests().is_empty());

    let out = vaultchat(&s).arg("trust").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_listed(&mcp_prompts(&s), true);
    assert_prompts_run(&s);
}

/// The hostile server (tests/peers/hostile_prompts.py) in `mode`, as the person's server `h`
/// with a 2 s call timeout.
fn hostile(mode: &str) -> Setup {
    with_server(
        "h",
        "hostile_prompts.py",
        &format!("timeout_secs = 2\nenv = {{ HOSTILE_MODE = {mode:?} }}\n"),
    )
}

#[test]
fn a_flood_of_prompts_is_cut_to_the_bound_and_escaped() {
    let s = hostile("flood");
    let prompts = mcp_prompts(&s);
    assert_eq!(
        prompts.len(),
        99,
        "at most 100 prompts a server, and of those the one whose name holds escapes left out"
    );
    for prompt in &prompts {
        let description = prompt["description"].as_str().unwrap();
        assert!(description.chars().count() <= 201, "{}", description.len());
    }
    let out = vaultchat(&s).arg("commands").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'));
    assert!(
        stderr.contains("only the first 100 are offered"),
        "{stderr}"
    );
    assert!(stderr.contains("cannot be typed as a command"), "{stderr}");
}

#[test]
fn a_server_that_never_answers_is_one_line_within_its_timeout() {
    let s = hostile("hang");
    let started = std::time::Instant::now();
    let out = vaultchat(&s).arg("commands").output().unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("did not list its prompts within 2 s"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(took.as_secs() < 15, "took {took:?}");
    assert!(text(&out.stdout).contains("/new"), "the rest is listed");

    let s = hostile("hang-get");
    let fake = FakeLlm::start(vec![done()]);
    let started = std::time::Instant::now();
    let out = ask(&s, &fake, "/h:p");
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("did not give the prompt within 2 s"),
        "{}",
        text(&out.stderr)
    );
    assert!(took.as_secs() < 15, "took {took:?}");
    assert!(fake.requests().is_empty());
}
