//! The person's and the vault's commands from the shell: `vaultchat commands [--json]` lists them
//! (the vault's only once trusted, and it says why not), and `vaultchat ask "/name ARGS"` runs one
//! headless: the prompt made from the file reaches the provider (checked at the fake server), with
//! the tools narrowed to the file's `allowed_tools` and the file's model.

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Recorded, Reply, anthropic_text};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
}

const PLAN: &str = "---\ntags: [project]\n---\n# Garden plan\n\nPlant tomatoes in May.\n";
const SHED: &str = "---\ntags: [project/shed]\n---\n# Shed\n\nPaint it.\n";

const WEEKLY: &str = "---\ndescription: Review the week\narguments: [topic, focus]\nmodel: review-model\nallowed_tools: [search_notes, read_note, no_such_tool]\n---\nReview {{topic}} ({{1}}) with {{focus}} on {{date}} ({{date:%A %d %B %Y}}).\nOpen: {{note}}\nSelected: {{selection}}\nAll: {{args}}\nTagged:\n{{tag:project}}\nSee [[Garden plan]].\n";

/// 2026-12-04 12:00 UTC, a Friday.
const NOW_MS: &str = "1796385600000";

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::create_dir_all(vault.join(".vaultchat/commands/study")).unwrap();
    std::fs::write(vault.join("Projects/Plan.md"), PLAN).unwrap();
    std::fs::write(vault.join("Projects/Shed.md"), SHED).unwrap();
    std::fs::write(vault.join(".vaultchat/commands/weekly-review.md"), WEEKLY).unwrap();
    std::fs::write(
        vault.join(".vaultchat/commands/study/flashcards.md"),
        "---\ndescription: Flashcards from the open note\n---\nMake flashcards of {{note}}.\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("commands")).unwrap();
    std::fs::write(
        data.join("commands/inbox.md"),
        "---\ndescription: File my inbox\n---\nFile the inbox: {{args}}\n",
    )
    .unwrap();
    Setup {
        _tmp: tmp,
        vault,
        data,
    }
}

fn run(s: &Setup, args: &[&str]) -> Output {
    common::cmd(&s.data, &s.vault)
        .env("VAULTCHAT_NOW_MS", NOW_MS)
        .args(args)
        .output()
        .unwrap()
}

fn ask(s: &Setup, fake: &FakeLlm, args: &[&str]) -> Output {
    common::cmd(&s.data, &s.vault)
        .env("VAULTCHAT_NOW_MS", NOW_MS)
        .args(["--provider", "anthropic", "--base-url", &fake.base_url])
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .arg("ask")
        .args(args)
        .output()
        .unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn listed(s: &Setup) -> (Vec<(String, String)>, Value) {
    let out = run(s, &["commands", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names = json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["origin"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (names, json)
}

fn has(names: &[(String, String)], name: &str, kind: &str) -> bool {
    names.iter().any(|(n, k)| n == name && k == kind)
}

fn done() -> Reply {
    Reply::Sse {
        body: anthropic_text("Done.", FakeUsage::default()),
        chunking: Chunking::Whole,
    }
}

fn tool_names(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn trust(s: &Setup) {
    let out = run(s, &["trust"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("declares no plugins"), "{said}");
    assert!(
        said.contains(".vaultchat/commands/weekly-review.md"),
        "{said}"
    );
}

#[test]
fn an_untrusted_vaults_commands_are_not_listed_and_say_why_until_trusted_and_an_edit_withdraws_them()
 {
    let s = setup();
    let (names, json) = listed(&s);
    assert!(has(&names, "help", "built_in"), "{names:?}");
    assert!(has(&names, "inbox", "personal"), "{names:?}");
    assert!(
        !names.iter().any(|(n, _)| n == "weekly-review"),
        "{names:?}"
    );
    let why = json["withheld"].as_str().unwrap();
    assert!(
        why.contains("2 commands are not offered until you trust")
            && why.contains("vaultchat trust"),
        "{why}"
    );
    // The plain list says it on stderr.
    let out = run(&s, &["commands"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains("/inbox [args]"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("not offered until you trust"),
        "{}",
        text(&out.stderr)
    );
    // And `ask` refuses the name, saying why, without asking the model.
    let fake = FakeLlm::start(vec![]);
    let out = ask(&s, &fake, &["/weekly-review garden"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("/weekly-review is not a command; `vaultchat commands` lists every one"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("not offered until you trust"),
        "{}",
        text(&out.stderr)
    );
    assert!(fake.requests().is_empty());

    trust(&s);
    let (names, json) = listed(&s);
    assert!(has(&names, "weekly-review", "vault"), "{names:?}");
    assert!(has(&names, "study:flashcards", "vault"), "{names:?}");
    assert!(json.get("withheld").is_none(), "{json}");
    let weekly = json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "weekly-review")
        .unwrap();
    assert_eq!(weekly["description"], "Review the week");
    assert_eq!(weekly["argument_hint"], "<topic> <focus>");

    std::fs::write(
        s.vault.join(".vaultchat/commands/study/flashcards.md"),
        "Something else entirely.\n",
    )
    .unwrap();
    let (names, json) = listed(&s);
    assert!(
        !names.iter().any(|(n, _)| n == "weekly-review"),
        "{names:?}"
    );
    let why = json["withheld"].as_str().unwrap();
    assert!(
        why.contains("changed since you trusted it")
            && why.contains(".vaultchat/commands/study/flashcards.md (changed)"),
        "{why}"
    );
}

#[test]
fn a_vault_command_runs_through_ask_with_every_placeholder_its_model_and_only_its_tools() {
    let s = setup();
    trust(&s);
    let fake = FakeLlm::start(vec![done()]);
    let out = ask(
        &s,
        &fake,
        &[
            "/weekly-review garden the whole shed",
            "--note",
            "Projects/Plan.md",
            "--selection",
            "0..3",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    let sent = request.last_user_text();
    assert!(
        sent.contains(
            "Review garden (garden) with the whole shed on 2026-12-04 (Friday 04 December 2026).\n\
             Open: Projects/Plan.md\nSelected: ---\nAll: garden the whole shed\n\
             Tagged:\n- Projects/Plan.md\n- Projects/Shed.md\nSee [[Garden plan]]."
        ),
        "{sent}"
    );
    // `[[Garden plan]]` is pulled in as the chat does for typed links.
    assert!(sent.contains("Plant tomatoes in May."), "{sent}");
    assert_eq!(request.body["model"], "review-model");
    let mut tools = tool_names(request);
    tools.sort();
    assert_eq!(tools, ["read_note", "search_notes"]);
    assert!(
        text(&out.stderr).contains("allowed_tools names \"no_such_tool\""),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_plain_prompt_keeps_every_tool_and_errors_name_what_is_wrong() {
    let s = setup();
    trust(&s);
    let fake = FakeLlm::start(vec![done(), done(), done()]);
    // The person's own command, no frontmatter limits: every tool is sent.
    let out = ask(&s, &fake, &["/inbox today's mail"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]
            .last_user_text()
            .contains("File the inbox: today's mail")
    );
    assert!(
        tool_names(&requests[0]).len() > 5,
        "{:?}",
        tool_names(&requests[0])
    );
    // A path is no command: sent as typed.
    let out = ask(&s, &fake, &["/etc/hosts is what?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        fake.requests()[1]
            .last_user_text()
            .starts_with("/etc/hosts is what?")
    );
    // And `//` sends text that starts with `/` where the word alone could be a command's name.
    let out = ask(&s, &fake, &["//tmp is full"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        fake.requests()[2]
            .last_user_text()
            .starts_with("/tmp is full")
    );

    let usage = |args: &[&str], expected: &str| {
        let out = ask(&s, &fake, args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(expected),
            "{args:?}: {}",
            text(&out.stderr)
        );
    };
    usage(
        &["/study:flashcards"],
        "/study:flashcards: this command uses the open note",
    );
    usage(
        &[
            "/weekly-review garden",
            "--note",
            "Projects/Plan.md",
            "--selection",
            "0..3",
        ],
        "/weekly-review: missing argument: <focus>",
    );
    usage(
        &["/help"],
        "/help is a command of the chat app, not a prompt; `vaultchat commands` lists",
    );
    usage(&["/weekly-reveiw x"], "/weekly-reveiw is not a command");
    usage(
        &["/weekly-reveiw x"],
        "to send a message that starts with /, begin it with //",
    );
    std::fs::write(
        s.data.join("commands/typo.md"),
        "Hello {{nite}} and {{args}} and {{topic}}\n",
    )
    .unwrap();
    usage(&["/typo"], "unknown placeholders {{nite}}, {{topic}}");
    assert_eq!(
        fake.requests().len(),
        3,
        "no refused command reached the model"
    );
}
