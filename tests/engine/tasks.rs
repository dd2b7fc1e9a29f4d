//! Tasks (issue 21) through the real binary and through MCP stdio, on tests/fixtures/tasks-vault:
//! every list form the Tasks plugin and Dataview write (markers `-`, `*`, `+`, `1.`, `2)`, nested,
//! in block quotes, custom statuses, `📅` and `[due:: …]` dates) and the look-alikes that are not
//! tasks (in fences, indented code, inline code, the frontmatter, `- []`, `- [ ]x`, `- [ ]`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::mcp_stdio::McpStdio;
use common::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

fn task(path: &str, line: u64, text: &str, status: &str, due: Option<&str>) -> Value {
    json!({"path": path, "line": line, "text": text, "status": status,
           "done": status == "done", "due": due})
}

/// Every task of the fixture, in the order `--all` lists them: due first (soonest first), then
/// by path and line.
fn every_task() -> Vec<Value> {
    let launch = "Projects/Launch.md";
    let chores = "Home/Chores.md";
    vec![
        task(launch, 16, "Quoted follow-up", "open", Some("2026-11-30")),
        task(chores, 25, "Pay rent #bills", "open", Some("2026-12-01")),
        task(
            launch,
            11,
            "Draft the budget",
            "in_progress",
            Some("2026-12-01"),
        ),
        task(
            launch,
            8,
            "Write the press release",
            "open",
            Some("2026-12-03"),
        ),
        task(launch, 15, "Ask about parking", "?", Some("2026-12-10")),
        task(chores, 24, "Water the plants", "open", None),
        task(launch, 9, "Book the venue", "done", None),
        task(launch, 10, "Send invitations", "done", None),
        task(launch, 12, "Hire a band", "cancelled", None),
        task(launch, 14, "Check the microphones #gear", "open", None),
        task(launch, 17, "Forwarded to Sam", ">", None),
    ]
}

fn fixture(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let vault = root.join("vault");
    copy_dir(&repo().join("tests/fixtures/tasks-vault"), &vault);
    (vault, root.join("data"))
}

fn tasks_json(data: &Path, vault: &Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["tasks", "--json"];
    all.extend_from_slice(args);
    let out = ok(data, vault, &all);
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The tasks of `all` at these (path, line)s, in `all`'s order.
fn only(all: &[Value], keep: &[(&str, u64)]) -> Vec<Value> {
    all.iter()
        .filter(|t| keep.iter().any(|(p, l)| t["path"] == *p && t["line"] == *l))
        .cloned()
        .collect()
}

#[test]
fn the_cli_lists_exactly_the_fixtures_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = fixture(tmp.path());
    let all = every_task();
    assert_eq!(tasks_json(&data, &vault, &["--all"]), all);
    // The default is the open ones: not done, not cancelled.
    let open: Vec<Value> = all
        .iter()
        .filter(|t| !["done", "cancelled"].contains(&t["status"].as_str().unwrap()))
        .cloned()
        .collect();
    assert_eq!(open.len(), 8);
    assert_eq!(tasks_json(&data, &vault, &[]), open);
    assert_eq!(tasks_json(&data, &vault, &["--open"]), open);
    let launch = "Projects/Launch.md";
    let chores = "Home/Chores.md";
    assert_eq!(
        tasks_json(&data, &vault, &["--done"]),
        only(&all, &[(launch, 9), (launch, 10), (launch, 12)])
    );
    assert_eq!(
        tasks_json(&data, &vault, &["--due-before", "2026-12-02"]),
        only(&all, &[(launch, 16), (chores, 25), (launch, 11)])
    );
    assert_eq!(
        tasks_json(&data, &vault, &["--folder", "Home"]),
        only(&all, &[(chores, 24), (chores, 25)])
    );
    // A tag in the task's own line, or in its note's frontmatter (Launch has `tags: [work]`); an
    // inline tag on one task (`#bills`) does not tag the other tasks of its note.
    assert_eq!(
        tasks_json(&data, &vault, &["--tag", "#bills"]),
        only(&all, &[(chores, 25)])
    );
    assert_eq!(
        tasks_json(&data, &vault, &["--tag", "gear", "--all"]),
        only(&all, &[(launch, 14)])
    );
    assert_eq!(
        tasks_json(&data, &vault, &["--tag", "WORK", "--done"]),
        only(&all, &[(launch, 9), (launch, 10), (launch, 12)])
    );
    let bad = run(&data, &vault, &["tasks", "--due-before", "2026-02-30"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("YYYY-MM-DD"),
        "{bad:?}"
    );

    // A task checked off in an editor shows at once: the command refreshes the index first.
    let chores_file = vault.join(chores);
    let text = std::fs::read_to_string(&chores_file).unwrap();
    std::fs::write(
        &chores_file,
        text.replace("- [ ] Water the plants", "- [x] Water the plants"),
    )
    .unwrap();
    let open_now = tasks_json(&data, &vault, &[]);
    assert_eq!(open_now.len(), 7, "{open_now:#?}");
    assert!(
        !open_now
            .iter()
            .any(|t| t["line"] == 24 && t["path"] == chores)
    );

    // The human listing: due day, the checkbox as written, the text, where it is.
    let human = ok(&data, &vault, &["tasks", "--due-before", "2026-12-01"]);
    assert_eq!(
        human,
        "2026-11-30  [ ] Quoted follow-up  Projects/Launch.md:16\n"
    );
}

fn mcp(data: &Path, vault: &Path, extra: &[&str]) -> McpStdio {
    let mut command = cmd(data, vault);
    command.arg("mcp").args(extra);
    let mut session = McpStdio::spawn(command);
    session.initialize();
    session
}

#[test]
fn mcp_lists_the_same_tasks_and_toggles_one_by_its_anchor() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = fixture(tmp.path());
    // Indexed first, so the server's answers do not race its start-up sync.
    ok(&data, &vault, &["index"]);
    let mut session = mcp(&data, &vault, &["--allow-writes"]);
    let all = session.call_ok("list_tasks", json!({"state": "all"}));
    assert_eq!(all["tasks"], json!(every_task()));
    assert_eq!(all["total"], 11);
    assert!(all.get("next_offset").is_none(), "{all}");

    // Paged: three at a time, in the same order.
    let first = session.call_ok("list_tasks", json!({"state": "all", "limit": 3}));
    assert_eq!(first["tasks"], json!(every_task()[..3]));
    assert_eq!(first["next_offset"], 3);
    let second = session.call_ok(
        "list_tasks",
        json!({"state": "all", "limit": 3, "offset": 3}),
    );
    assert_eq!(second["tasks"], json!(every_task()[3..6]));
    let filtered = session.call_ok(
        "list_tasks",
        json!({"due_before": "2026-12-02", "folder": "Projects", "tag": "work"}),
    );
    let paths_lines: Vec<(String, u64)> = filtered["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["path"].as_str().unwrap().to_string(),
                t["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        paths_lines,
        vec![
            ("Projects/Launch.md".to_string(), 16),
            ("Projects/Launch.md".to_string(), 11)
        ]
    );
    let refused = session.call_tool("list_tasks", json!({"state": "later"}));
    assert_eq!(refused["isError"], true, "{refused}");
    let refused = session.call_tool("list_tasks", json!({"limit": 501}));
    assert_eq!(refused["isError"], true, "{refused}");

    // A stale anchor (the text on that line is another task's) changes nothing.
    let chores = vault.join("Home/Chores.md");
    let before = std::fs::read_to_string(&chores).unwrap();
    let stale = session.call_tool(
        "toggle_task",
        json!({"note": "Home/Chores.md", "line": 24, "text": "Pay rent #bills"}),
    );
    assert_eq!(stale["isError"], true, "{stale}");
    assert!(
        stale.to_string().contains("list the tasks again"),
        "{stale}"
    );
    let not_a_task = session.call_tool(
        "toggle_task",
        json!({"note": "Home/Chores.md", "line": 6, "text": "fenced task"}),
    );
    assert_eq!(not_a_task["isError"], true, "{not_a_task}");
    assert_eq!(std::fs::read_to_string(&chores).unwrap(), before);

    // The right anchor checks it off: only the status character changes.
    let done = session.call_ok(
        "toggle_task",
        json!({"note": "Home/Chores.md", "line": 24, "text": "Water the plants"}),
    );
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["status_before"], "open", "{done}");
    assert_eq!(
        std::fs::read_to_string(&chores).unwrap(),
        before.replace("- [ ] Water the plants", "- [x] Water the plants")
    );
    // The index took the write in: the task is no longer open.
    let open = session.call_ok("list_tasks", json!({"folder": "Home"}));
    assert_eq!(
        open["tasks"],
        json!([task(
            "Home/Chores.md",
            25,
            "Pay rent #bills",
            "open",
            Some("2026-12-01")
        )])
    );
    // Toggling again opens it; a named status sets that one.
    session.call_ok(
        "toggle_task",
        json!({"note": "Home/Chores.md", "line": 24, "text": "Water the plants"}),
    );
    session.call_ok(
        "toggle_task",
        json!({"note": "Home/Chores.md", "line": 24, "text": "Water the plants", "status": "in_progress"}),
    );
    assert_eq!(
        std::fs::read_to_string(&chores).unwrap(),
        before.replace("- [ ] Water the plants", "- [/] Water the plants")
    );
}

#[test]
fn a_read_only_server_lists_tasks_but_cannot_toggle_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = fixture(tmp.path());
    ok(&data, &vault, &["index"]);
    let mut session = mcp(&data, &vault, &[]);
    let listed = session.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"list_tasks"), "{names:?}");
    assert!(!names.contains(&"toggle_task"), "{names:?}");
    let open = session.call_ok("list_tasks", json!({}));
    assert_eq!(open["total"], 8);
}
