//! Daily notes and templates as an Obsidian vault configures them (`.obsidian/daily-notes.json`,
//! `.obsidian/templates.json`), through the real binary: `vaultchat daily` and the MCP tools over
//! stdio (`read_daily_note`, `write_daily_note`, `create_note` with a `template`).

use crate::common::cmd;
use crate::common::mcp_stdio::McpStdio;
use serde_json::{Value, json};
use std::path::Path;

/// 2026-12-04 10:30:00 UTC: the clock of every process here, so "today" and `{{time}}` are known.
const NOW_MS: &str = "1796380200000";

/// The note the acceptance vault's settings give 2026-12-01.
const DAY_NOTE: &str = "Journal/Daily/2026/12/2026-12-01 Tue.md";

const DAILY_TEMPLATE: &str = "---\ncreated: {{date}} {{time}}\n---\n# {{title}}\n\n{{date:dddd, MMMM Do YYYY}} · week {{date:ww}}\n\n## Log\n";

/// The template filled for 2026-12-01 at the clock's time of day.
const FILLED: &str = "---\ncreated: 2026-12-01 10:30\n---\n# 2026-12-01 Tue\n\nTuesday, December 1st 2026 · week 49\n\n## Log\n";

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A vault configured as the issue's acceptance says, with a templates folder.
fn journal_vault(root: &Path) {
    write(
        root,
        ".obsidian/daily-notes.json",
        r#"{"folder": "Journal/Daily", "format": "YYYY/MM/YYYY-MM-DD ddd", "template": "Templates/Daily"}"#,
    );
    write(
        root,
        ".obsidian/templates.json",
        r#"{"folder": "Templates", "dateFormat": "YYYY-MM-DD", "timeFormat": "HH:mm"}"#,
    );
    write(root, "Templates/Daily.md", DAILY_TEMPLATE);
    write(
        root,
        "Templates/Meeting.md",
        "# {{title}}\nDate: {{date:DD.MM.YYYY}}\nAttendees:\n",
    );
    write(root, "Inbox.md", "# Inbox\n");
}

fn daily(data: &Path, vault: &Path, args: &[&str]) -> std::process::Output {
    cmd(data, vault)
        .arg("daily")
        .args(args)
        .env("VAULTCHAT_NOW_MS", NOW_MS)
        .output()
        .unwrap()
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn daily_twice_creates_the_note_once_from_its_template_and_appends_both_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    journal_vault(&vault);
    let args = ["--date", "2026-12-01", "--append", "- x", "--json"];

    let first = json_of(&daily(&data, &vault, &args));
    assert_eq!(
        first,
        json!({"path": DAY_NOTE, "date": "2026-12-01", "created": true, "appended": true, "warnings": []})
    );
    assert_eq!(
        std::fs::read_to_string(vault.join(DAY_NOTE)).unwrap(),
        format!("{FILLED}- x\n")
    );

    let second = json_of(&daily(&data, &vault, &args));
    assert_eq!(second["created"], false);
    assert_eq!(second["appended"], true);
    assert_eq!(
        std::fs::read_to_string(vault.join(DAY_NOTE)).unwrap(),
        format!("{FILLED}- x\n- x\n")
    );
    // The template is as it was, and only the day's note was added to the journal.
    assert_eq!(
        std::fs::read_to_string(vault.join("Templates/Daily.md")).unwrap(),
        DAILY_TEMPLATE
    );
    let month: Vec<_> = std::fs::read_dir(vault.join("Journal/Daily/2026/12"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(month, ["2026-12-01 Tue.md"]);

    // Without --json the path alone; without --append an existing note is left as it is.
    let out = daily(&data, &vault, &["--date", "2026-12-01"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{DAY_NOTE}\n")
    );
    assert_eq!(
        std::fs::read_to_string(vault.join(DAY_NOTE)).unwrap(),
        format!("{FILLED}- x\n- x\n")
    );
}

#[test]
fn daily_without_a_date_is_today_and_without_settings_obsidians_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    write(&vault, "Inbox.md", "# Inbox\n");

    let out = json_of(&daily(&data, &vault, &["--json"]));
    assert_eq!(out["path"], "2026-12-04.md");
    assert_eq!(out["created"], true);
    assert_eq!(out["appended"], false);
    assert_eq!(
        std::fs::read_to_string(vault.join("2026-12-04.md")).unwrap(),
        ""
    );

    let out = json_of(&daily(
        &data,
        &vault,
        &["--date", "yesterday", "--append", "one", "--json"],
    ));
    assert_eq!(out["path"], "2026-12-03.md");
    assert_eq!(
        std::fs::read_to_string(vault.join("2026-12-03.md")).unwrap(),
        "one\n"
    );

    let out = daily(&data, &vault, &["--date", "2026-02-30"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a day"));
}

#[test]
fn broken_settings_are_a_warning_and_obsidians_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    write(
        &vault,
        ".obsidian/daily-notes.json",
        r#"{"folder": "Journal", "#,
    );
    write(
        &vault,
        ".obsidian/templates.json",
        &format!("{{\"folder\": \"{}\"}}", "T".repeat(100_000)),
    );

    let out = daily(&data, &vault, &["--append", "- y", "--json"]);
    let answer = json_of(&out);
    assert_eq!(answer["path"], "2026-12-04.md");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".obsidian/daily-notes.json` is not valid JSON"),
        "{stderr}"
    );
    assert!(stderr.contains("more than the 65536"), "{stderr}");
    assert_eq!(answer["warnings"].as_array().unwrap().len(), 2, "{answer}");
    assert_eq!(
        std::fs::read_to_string(vault.join("2026-12-04.md")).unwrap(),
        "- y\n"
    );
}

#[test]
fn a_missing_template_leaves_the_day_empty_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    write(
        &vault,
        ".obsidian/daily-notes.json",
        r#"{"template": "Templates/Gone"}"#,
    );
    let out = daily(&data, &vault, &["--append", "- z", "--json"]);
    let answer = json_of(&out);
    assert_eq!(answer["created"], true);
    assert!(
        answer["warnings"][0]
            .as_str()
            .unwrap()
            .contains("no template `Templates/Gone`"),
        "{answer}"
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("2026-12-04.md")).unwrap(),
        "- z\n"
    );
}

fn mcp(data: &Path, vault: &Path, extra: &[&str]) -> McpStdio {
    let mut command = cmd(data, vault);
    command
        .arg("mcp")
        .args(extra)
        .env("VAULTCHAT_NOW_MS", NOW_MS);
    let mut server = McpStdio::spawn(command);
    server.initialize();
    server
}

#[test]
fn over_mcp_the_daily_note_is_read_created_from_its_template_and_appended_to() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    journal_vault(&vault);
    let mut server = mcp(&data, &vault, &["--allow-writes"]);

    let read = server.call_ok("read_daily_note", json!({"date": "2026-12-01"}));
    assert_eq!(read["path"], DAY_NOTE);
    assert_eq!(read["exists"], false);
    assert_eq!(read["template"], "Templates/Daily");
    assert!(!vault.join(DAY_NOTE).exists(), "reading creates nothing");

    for _ in 0..2 {
        let wrote = server.call_ok(
            "write_daily_note",
            json!({"date": "2026-12-01", "append": "- x"}),
        );
        assert_eq!(wrote["path"], DAY_NOTE);
        assert_eq!(wrote["appended"], true);
    }
    assert_eq!(
        std::fs::read_to_string(vault.join(DAY_NOTE)).unwrap(),
        format!("{FILLED}- x\n- x\n")
    );

    let read = server.call_ok("read_daily_note", json!({"date": "2026-12-01"}));
    assert_eq!(read["exists"], true);
    assert_eq!(read["content"], format!("{FILLED}- x\n- x\n"));

    // Today (the server's clock) by default; nothing to append to an existing note is refused.
    let today = server.call_ok("write_daily_note", json!({}));
    assert_eq!(today["path"], "Journal/Daily/2026/12/2026-12-04 Fri.md");
    assert_eq!(today["created"], true);
    let again = server.call_tool("write_daily_note", json!({}));
    assert_eq!(again["isError"], true, "{again}");

    // create_note from a template of the templates folder, by name.
    let created = server.call_ok(
        "create_note",
        json!({"path": "Meetings/Standup", "template": "Meeting", "content": "- Ana"}),
    );
    assert_eq!(created["template"], "Templates/Meeting.md");
    assert_eq!(
        std::fs::read_to_string(vault.join("Meetings/Standup.md")).unwrap(),
        "# Standup\nDate: 04.12.2026\nAttendees:\n- Ana\n"
    );
    let unknown = server.call_tool(
        "create_note",
        json!({"path": "Meetings/Other", "template": "Retro"}),
    );
    assert_eq!(unknown["isError"], true, "{unknown}");
    let message = unknown["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("no template `Retro`") && message.contains("Daily, Meeting"),
        "{message}"
    );
}

#[test]
fn without_allow_writes_mcp_reads_the_daily_note_but_cannot_write_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    journal_vault(&vault);
    let mut server = mcp(&data, &vault, &[]);
    let listed = server.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read_daily_note"), "{names:?}");
    assert!(!names.contains(&"write_daily_note"), "{names:?}");
}

#[test]
fn a_format_that_leaves_the_vault_or_hides_the_note_is_refused_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    for (format, says) in [
        ("[../outside/]YYYY-MM-DD", "outside"),
        ("[.hidden/]YYYY-MM-DD", "hidden"),
    ] {
        write(
            &vault,
            ".obsidian/daily-notes.json",
            &format!(r#"{{"format": "{format}"}}"#),
        );
        let out = daily(&data, &vault, &["--append", "- nope"]);
        assert_eq!(out.status.code(), Some(1), "{format}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
        assert!(
            stderr.contains(says) || stderr.contains("vault"),
            "{format}: {stderr}"
        );
    }
    assert!(!tmp.path().join("outside").exists());
    assert!(!vault.join(".hidden").exists());
    let names: Vec<_> = std::fs::read_dir(&vault)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, [".obsidian"]);
}

/// The permission check sees the path a daily tool writes, which no argument names: a rule on the
/// journal folder covers it.
#[test]
fn the_daily_tools_name_their_note_to_the_permission_check() {
    use vaultchat::config::{Config, Paths};
    use vaultchat::store::Actor;
    use vaultchat::tools::workspace::Workspace;
    use vaultchat::vault::Vault;
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    journal_vault(&vault);
    let ws = Workspace::open(
        Vault::open(&vault).unwrap(),
        &Paths::under(&tmp.path().join("data")),
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();
    let args = json!({"date": "2026-12-01", "append": "- x"});
    // The template too, which writing the missing note reads (§70).
    assert_eq!(
        ws.implied_targets("write_daily_note", &args),
        [DAY_NOTE, "Templates/Daily.md"]
    );
    assert_eq!(ws.implied_targets("read_daily_note", &args), [DAY_NOTE]);
    assert!(ws.implied_targets("update_note", &args).is_empty());
    assert!(
        ws.implied_targets("write_daily_note", &json!({"date": "someday"}))
            .is_empty()
    );
}

/// `create_note`'s `template` reads a note the call names in no `path`: only the templates
/// folder may be read that way (a vault path elsewhere, `Private/Secret`, is refused), and the
/// template it reads is named to the permission check, so a deny rule on its folder holds.
#[test]
fn a_template_is_read_only_from_the_templates_folder_and_the_permission_check_sees_it() {
    use vaultchat::config::{Config, Paths};
    use vaultchat::permission::{CallFacts, Decision, Effect, RuleSet, decide, parse_rule_spec};
    use vaultchat::store::Actor;
    use vaultchat::tools::workspace::Workspace;
    use vaultchat::vault::Vault;
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    journal_vault(&vault);
    write(&vault, "Private/Secret.md", "the door code is 4711\n");

    // Over MCP (no permission rules there): a path outside the templates folder is no template.
    let mut server = mcp(&data, &vault, &["--allow-writes"]);
    for template in ["Private/Secret", "Private/Secret.md", "Inbox"] {
        let refused =
            server.call_tool("create_note", json!({"path": "Leak", "template": template}));
        assert_eq!(refused["isError"], true, "{template}: {refused}");
        let message = refused["content"][0]["text"].as_str().unwrap();
        assert!(!message.contains("4711"), "{message}");
    }
    assert!(!vault.join("Leak.md").exists());
    // The folder's own name may be written out.
    let created = server.call_ok(
        "create_note",
        json!({"path": "Meetings/Full", "template": "Templates/Meeting"}),
    );
    assert_eq!(created["template"], "Templates/Meeting.md");
    drop(server);

    // For the agent: the template is one of the call's paths, so `*:Templates/**` denies it.
    let ws = Workspace::open(
        Vault::open(&vault).unwrap(),
        &Paths::under(&data),
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();
    let call = json!({"path": "Meetings/Standup", "template": "Meeting"});
    let mut paths = vec!["Meetings/Standup.md".to_string()];
    paths.extend(ws.implied_targets("create_note", &call));
    assert_eq!(paths, ["Meetings/Standup.md", "Templates/Meeting.md"]);
    let rules = RuleSet {
        rules: vec![parse_rule_spec("*:Templates/**", Effect::Deny).unwrap()],
    };
    let facts = CallFacts {
        tool: "create_note".into(),
        paths,
        ..Default::default()
    };
    assert!(
        matches!(decide(&facts, &rules, false), Decision::Deny { .. }),
        "{:?}",
        decide(&facts, &rules, false)
    );
    // The daily note's template too (daily-notes.json may name any note).
    let daily = json!({"date": "2026-12-01", "append": "- x"});
    assert_eq!(
        ws.implied_targets("write_daily_note", &daily),
        [DAY_NOTE, "Templates/Daily.md"]
    );
}

/// The templates of the templates folder are listed by walking that folder alone: notes
/// elsewhere (however many) are neither walked nor listed.
#[test]
fn only_the_templates_folder_is_listed() {
    use vaultchat::config::{Config, Paths};
    use vaultchat::store::Actor;
    use vaultchat::tools::workspace::Workspace;
    use vaultchat::vault::Vault;
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    journal_vault(&vault);
    write(&vault, "Templates/Work/Standup.md", "# {{title}}\n");
    write(&vault, "Templates/.hidden/X.md", "x\n");
    write(&vault, "TemplatesOld/Nope.md", "x\n");
    let ws = Workspace::open_unsynced(
        Vault::open(&vault).unwrap(),
        &Paths::under(&tmp.path().join("data")),
        &Config::default(),
        Actor::User,
    )
    .unwrap();
    assert_eq!(
        ws.list_templates().unwrap(),
        [
            "Templates/Daily.md",
            "Templates/Meeting.md",
            "Templates/Work/Standup.md"
        ]
    );
    // Bounded: a templates folder is a handful of notes; past the bound the rest is not walked.
    for n in 0..vaultchat::tools::workspace::MAX_TEMPLATES + 5 {
        write(&vault, &format!("Templates/Many/T{n:04}.md"), "x\n");
    }
    let listed = ws.list_templates().unwrap();
    assert_eq!(listed.len(), vaultchat::tools::workspace::MAX_TEMPLATES);
    assert_eq!(listed[0], "Templates/Daily.md");
}

/// The Obsidian settings are read once per daily call: a broken file's warning is logged once,
/// not once per read (it was read for the note, then again for its template).
#[test]
fn a_broken_settings_file_is_warned_about_once_per_call() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, vault) = (tmp.path().join("data"), tmp.path().join("vault"));
    journal_vault(&vault);
    write(
        &vault,
        ".obsidian/templates.json",
        r#"{"folder": "Templates", "#,
    );
    let out = daily(&data, &vault, &["--date", "2026-12-01", "--json"]);
    let answer = json_of(&out);
    assert_eq!(answer["created"], true, "{answer}");
    let warnings = answer["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{answer}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("is not valid JSON").count(), 1, "{stderr}");
    let log = std::fs::read_to_string(data.join("vaultchat.log")).unwrap_or_default();
    assert_eq!(
        log.matches(".obsidian/templates.json` is not valid JSON")
            .count(),
        1,
        "{log}"
    );
}
