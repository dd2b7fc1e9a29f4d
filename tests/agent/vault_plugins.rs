//! Vault plugins end to end (the acceptance of issue 15, part 1): a vault declares an MCP server
//! written with the official Python SDK (tests/peers/tasks_plugin.py) in `.vaultchat/plugins.toml`.
//! Before `vaultchat trust` its process never starts (the marker it writes at start-up stays
//! absent) and its tool is nowhere; after, the tool is listed with tier `plugin`, answers in a chat
//! turn (`vaultchat ask` against the fake LLM) and is listed and callable through `vaultchat mcp`
//! from the Python SDK client; editing the file withdraws it again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use common::*;
use serde_json::{Value, json};
use std::path::PathBuf;

const TOOL: &str = "tasks__open_tasks";

struct Vault {
    tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    markers: PathBuf,
}

impl Vault {
    fn plugins_file(&self) -> PathBuf {
        self.vault.join(".vaultchat/plugins.toml")
    }

    /// How many times the plugin process started, and how often its tool ran.
    fn marks(&self, name: &str) -> usize {
        std::fs::read_to_string(self.markers.join(name))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        run(&self.data, &self.vault, args)
    }
}

/// A vault whose plugins file runs the tasks plugin: the script is inside the vault and named by
/// a relative path (resolved against the vault), the markers folder through `${VAULT_PATH}`.
fn vault_with_plugin() -> Vault {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join(".vaultchat")).unwrap();
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(vault.join("Projects/Plan.md"), "# Plan\n\nShip it.\n").unwrap();
    std::fs::copy(
        repo().join("tests/peers/tasks_plugin.py"),
        vault.join(".vaultchat/tasks_plugin.py"),
    )
    .unwrap();
    let markers = tmp.path().join("markers");
    std::fs::create_dir_all(&markers).unwrap();
    let text = format!(
        "# The vault's own tools.\n[plugins.tasks]\ncommand = {python:?}\n\
         args = [\".vaultchat/tasks_plugin.py\"]\n\
         env = {{ TASKS_MARKERS = \"${{VAULT_PATH}}/../markers\" }}\n\n\
         [plugins.tasks.render]\nopen_tasks = \"table\"\n",
        python = venv_python().display().to_string(),
    );
    std::fs::write(vault.join(".vaultchat/plugins.toml"), text).unwrap();
    Vault {
        data: tmp.path().join("data"),
        tmp,
        vault,
        markers,
    }
}

/// The tools of `vaultchat tools --json`, by name, with their tier.
fn listed_tools(v: &Vault) -> Vec<(String, String)> {
    let out = v.run(&["tools", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["tier"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn usage() -> FakeUsage {
    FakeUsage {
        input: 10,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    }
}

/// One `vaultchat ask` turn whose model calls the plugin's tool, then says "done".
fn ask_calling_the_plugin(v: &Vault) -> (Value, FakeLlm) {
    let calls = [("call_1", TOOL, json!({"project": "vaultchat"}))];
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: anthropic_tool_calls(Some("Checking the tasks."), &calls, usage()),
            chunking: Chunking::Fixed(9),
        },
        Reply::Sse {
            body: anthropic_text("done", usage()),
            chunking: Chunking::Whole,
        },
    ]);
    let out = cmd(&v.data, &v.vault)
        .args(["--provider", "anthropic", "--base-url", &fake.base_url])
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args(["ask", "what is open?", "--json", "--approve", "all"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_slice(&out.stdout).unwrap(), fake)
}

/// The Python SDK client against `vaultchat mcp`: one line per protocol era.
fn sdk_client(v: &Vault, call: Option<&str>) -> Vec<Value> {
    let mut c = std::process::Command::new(venv_python());
    c.arg(repo().join("tests/mcp/plugin_client.py"))
        .arg("--bin")
        .arg(bin())
        .arg("--vault")
        .arg(&v.vault)
        .arg("--data")
        .arg(&v.data);
    if let Some(tool) = call {
        c.args(["--call", tool, "--args", r#"{"project": "vaultchat"}"#]);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    lines
}

fn names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

/// Nothing of the plugin anywhere, and its process never started.
fn assert_withheld(v: &Vault, when: &str) {
    let tools = listed_tools(v);
    assert!(
        !tools.iter().any(|(name, _)| name == TOOL),
        "{when}: {TOOL} is listed: {tools:?}"
    );
    for line in sdk_client(v, None) {
        assert!(!names(&line["tools"]).contains(&TOOL), "{when}: {line}");
        assert!(
            names(&line["tools"]).contains(&"read_note"),
            "{when}: {line}"
        );
    }
    let doctor = v.run(&["doctor"]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        report.contains("mcp server tasks: not trusted"),
        "{when}: {report}"
    );
}

#[test]
fn a_vault_plugin_runs_only_once_trusted_and_an_edit_withdraws_it() {
    let v = vault_with_plugin();

    // Before trust: absent everywhere, never started, and a turn cannot reach it.
    assert_withheld(&v, "before trust");
    let stderr = String::from_utf8_lossy(&v.run(&["tools"]).stderr).to_string();
    assert!(
        stderr.contains("the vault plugin `tasks` is not trusted"),
        "{stderr}"
    );
    let (turn, fake) = ask_calling_the_plugin(&v);
    assert_eq!(turn["tool_calls"][0]["decision"], "refused", "{turn}");
    let offered = fake.requests()[0].body["tools"].clone();
    assert!(!offered.to_string().contains(TOOL), "{offered}");
    assert_eq!(v.marks("started"), 0, "the plugin started before trust");
    assert_eq!(v.marks("called"), 0);

    // `vaultchat trust` shows the command that will run, with the script resolved in the vault.
    let out = v.run(&["trust"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    let script = v.vault.join(".vaultchat/tasks_plugin.py");
    assert!(shown.contains("  tasks:\n"), "{shown}");
    assert!(
        shown.contains("      arg     \".vaultchat/tasks_plugin.py\"\n"),
        "{shown}"
    );
    // Run from the vault's root, so the relative script path names the file in the vault.
    let root = v.vault.canonicalize().unwrap();
    assert!(
        shown.contains(&format!("      in      \"{}\"", root.display())),
        "{shown}"
    );
    assert!(shown.contains("env     TASKS_MARKERS=\""), "{shown}");
    // The trust covers the script too, and says so.
    assert!(
        shown.contains("    .vaultchat/tasks_plugin.py\n"),
        "{shown}"
    );
    assert!(script.is_file());

    // After trust: listed with tier `plugin`, answers in a chat turn and over `vaultchat mcp`.
    let tools = listed_tools(&v);
    assert!(
        tools.contains(&(TOOL.to_string(), "plugin".to_string())),
        "{tools:?}"
    );
    assert!(v.marks("started") >= 1, "the trusted plugin was started");
    let (turn, fake) = ask_calling_the_plugin(&v);
    let call = &turn["tool_calls"][0];
    assert_eq!(call["name"], TOOL);
    assert_eq!(call["is_error"], false, "{turn}");
    assert_eq!(call["decision"], "approved_once", "{turn}");
    assert_eq!(turn["reply"], "done");
    let sent_back = fake.requests()[1].body["messages"].to_string();
    assert!(sent_back.contains("Write the plugin docs"), "{sent_back}");
    assert!(sent_back.contains("Ship vaultchat"), "{sent_back}");
    assert_eq!(v.marks("called"), 1);
    for line in sdk_client(&v, Some(TOOL)) {
        assert!(names(&line["tools"]).contains(&TOOL), "{line}");
        assert_eq!(line["is_error"], false, "{line}");
        let text = line["result"].as_str().unwrap();
        assert!(text.contains("Ship vaultchat"), "{line}");
    }
    assert_eq!(v.marks("called"), 3, "one call per protocol era");

    // Any edit to the file withdraws the trust: absent again, and not started again.
    let mut text = std::fs::read_to_string(v.plugins_file()).unwrap();
    text.push_str("# edited\n");
    std::fs::write(v.plugins_file(), text).unwrap();
    let started = v.marks("started");
    assert_withheld(&v, "after an edit");
    assert_eq!(v.marks("started"), started, "started after the edit");

    // Trusted again, then revoked: withheld once more.
    assert!(v.run(&["trust"]).status.success());
    assert!(listed_tools(&v).iter().any(|(name, _)| name == TOOL));
    let out = v.run(&["trust", "--revoke"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no longer trusted"));
    let started = v.marks("started");
    assert_withheld(&v, "after --revoke");
    assert_eq!(v.marks("started"), started);
    drop(v.tmp);
}

#[test]
fn a_broken_or_linked_plugins_file_is_named_and_the_rest_works() {
    let v = vault_with_plugin();
    std::fs::write(v.plugins_file(), "[plugins.tasks]\ncommand = [\n").unwrap();
    let out = v.run(&["tools", "--json"]);
    assert!(out.status.success(), "the rest of vaultchat keeps working");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".vaultchat/plugins.toml:2: "), "{stderr}");
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(listing.to_string().contains("read_note"));
    let trust = v.run(&["trust"]);
    assert!(!trust.status.success());
    assert!(
        String::from_utf8_lossy(&trust.stderr).contains(".vaultchat/plugins.toml:2: "),
        "{}",
        String::from_utf8_lossy(&trust.stderr)
    );

    // A plugins file that is a link to a file outside the vault is refused, never read.
    let outside = v.tmp.path().join("outside.toml");
    std::fs::write(&outside, "[plugins.evil]\ncommand = \"true\"\n").unwrap();
    std::fs::remove_file(v.plugins_file()).unwrap();
    std::os::unix::fs::symlink(&outside, v.plugins_file()).unwrap();
    let trust = v.run(&["trust"]);
    assert!(!trust.status.success());
    let said = String::from_utf8_lossy(&trust.stderr);
    assert!(said.contains("plugins.toml is a symbolic link"), "{said}");
    let doctor = String::from_utf8_lossy(&v.run(&["doctor"]).stdout).to_string();
    assert!(doctor.contains("symbolic link"), "{doctor}");
    assert_eq!(v.marks("started"), 0);
}

#[test]
fn doctor_checks_a_trusted_plugin_and_its_render_names() {
    let v = vault_with_plugin();
    let text = std::fs::read_to_string(v.plugins_file())
        .unwrap()
        .replace("open_tasks = \"table\"", "open_taks = \"table\"");
    std::fs::write(v.plugins_file(), text).unwrap();
    assert!(v.run(&["trust"]).status.success());
    let report = String::from_utf8_lossy(&v.run(&["doctor"]).stdout).to_string();
    assert!(report.contains("(trusted)"), "{report}");
    assert!(
        report.contains("mcp server tasks: started, 1 tool"),
        "{report}"
    );
    assert!(
        report.contains("`render` for `tasks__open_taks` names no tool the plugin listed"),
        "{report}"
    );
}
