//! The link graph driven as a person and a client would: `vaultchat links … --json` (the real
//! binary), the graph tools over MCP stdio, a rename by `move_note`, and `index --watch` keeping
//! the graph current. One fixture vault holds every link form, links in code that must not count,
//! an ambiguous name, an attachment and notes nothing links to.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::mcp_stdio::McpStdio;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const HUB: &str = "---
related: \"[[Property Target]]\"
---
# Hub
Plain [[Target]] and aliased [[Target|the target]] and heading [[Target#Section]].
Block [[Target#^blk1]] and embed ![[Target]] and image ![[diagram.png]].

| col | link |
| --- | --- |
| a | [[Tabled\\|shown]] |

Markdown [to spaced](Sub/Spaced%20Name.md) and [gone](Sub/Gone.md).
Inline `[[Inline Code]]` is text.
```
[[Fenced]]
```
Ambiguous [[Twin]] and missing [[Nowhere]].
";

fn fixture(vault: &Path) {
    let files: [(&str, &[u8]); 11] = [
        ("Hub.md", HUB.as_bytes()),
        ("Target.md", b"# Target\n## Section\ntext ^blk1\n"),
        ("Property Target.md", b"# Property Target\n"),
        ("Tabled.md", b"# Tabled\n"),
        ("Sub/Spaced Name.md", b"back to [[Hub]]\n"),
        ("A/Twin.md", b"# Twin A\n"),
        ("B/Twin.md", b"# Twin B\n"),
        ("Lonely.md", b"# Lonely\nno links here\n"),
        // Would gain backlinks if links in code counted.
        ("Inline Code.md", b"# Inline Code\n"),
        ("Fenced.md", b"# Fenced\n"),
        ("diagram.png", b"\x89PNG\r\n"),
    ];
    for (rel, bytes) in files {
        let path = vault.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

fn links_json(data: &Path, vault: &Path, args: &[&str]) -> Value {
    let mut all = vec!["links"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = ok(data, vault, &all);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// (target, path, line) of each outgoing link.
fn outgoing(v: &Value) -> Vec<(String, Value, u64)> {
    v["outgoing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["target"].as_str().unwrap().to_string(),
                o["path"].clone(),
                o["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// (path, line) of each backlink.
fn backlinks(v: &Value, key: &str) -> Vec<(String, u64)> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["path"].as_str().unwrap().to_string(),
                b["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn unresolved(v: &Value) -> Vec<(String, String, u64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["from"].as_str().unwrap().to_string(),
                u["target"].as_str().unwrap().to_string(),
                u["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn paths(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|o| o["path"].as_str().unwrap().to_string())
        .collect()
}

fn expected_hub_outgoing(target: &str) -> Vec<(String, Value, u64)> {
    let t = |name: &str, path: Option<&str>, line: u64| (name.to_string(), json!(path), line);
    vec![
        t("Property Target", Some("Property Target.md"), 2),
        t("Target", Some(target), 5),
        t("Target", Some(target), 5),
        t("Target", Some(target), 5),
        t("Target", Some(target), 6),
        t("Target", Some(target), 6),
        t("diagram.png", None, 6),
        t("Tabled", Some("Tabled.md"), 10),
        t("Sub/Spaced Name.md", Some("Sub/Spaced Name.md"), 12),
        t("Sub/Gone.md", None, 12),
        t("Twin", Some("A/Twin.md"), 17),
        t("Nowhere", None, 17),
    ]
}

#[test]
fn every_link_form_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    fixture(&vault);

    let hub = links_json(&data, &vault, &["Hub"]);
    assert_eq!(hub["note"], "Hub.md");
    assert_eq!(outgoing(&hub), expected_hub_outgoing("Target.md"), "{hub}");
    let flags = &hub["outgoing"];
    assert_eq!(flags[6]["attachment"], true, "{hub}");
    assert_eq!(flags[10]["ambiguous"], true, "{hub}");
    assert_eq!(
        backlinks(&hub, "backlinks"),
        [("Sub/Spaced Name.md".to_string(), 1)]
    );
    assert_eq!(hub["backlinks"][0]["context"], "back to [[Hub]]");

    let target = links_json(&data, &vault, &["Target.md"]);
    let from_hub = |line| ("Hub.md".to_string(), line);
    assert_eq!(
        backlinks(&target, "backlinks"),
        [
            from_hub(5),
            from_hub(5),
            from_hub(5),
            from_hub(6),
            from_hub(6)
        ]
    );
    assert_eq!(
        target["backlinks"][0]["context"],
        "Plain [[Target]] and aliased [[Target|the target]] and heading [[Target#Section]]."
    );
    // The table-escaped alias and the percent-encoded Markdown link reach their notes.
    let tabled = links_json(&data, &vault, &["Tabled"]);
    assert_eq!(backlinks(&tabled, "backlinks"), [from_hub(10)]);
    let spaced = links_json(&data, &vault, &["Sub/Spaced Name.md"]);
    assert_eq!(backlinks(&spaced, "backlinks"), [from_hub(12)]);
    // Code is text: these notes are linked from nowhere.
    for name in ["Inline Code", "Fenced", "B/Twin.md"] {
        let v = links_json(&data, &vault, &[name]);
        assert_eq!(backlinks(&v, "backlinks"), [], "{name}: {v}");
    }

    assert_eq!(
        unresolved(&links_json(&data, &vault, &["--unresolved"])),
        [
            ("Hub.md".to_string(), "Sub/Gone.md".to_string(), 12),
            ("Hub.md".to_string(), "Nowhere".to_string(), 17)
        ]
    );
    assert_eq!(
        paths(&links_json(&data, &vault, &["--orphans"])),
        ["B/Twin.md", "Fenced.md", "Inline Code.md", "Lonely.md"]
    );
    // Human output is escaped: a control character in a note name cannot reach the terminal.
    std::fs::write(vault.join("Evil\u{1b}[2J.md"), "[[Hub]]\n").unwrap();
    ok(&data, &vault, &["index"]);
    let human = ok(&data, &vault, &["links", "Hub"]);
    assert!(!human.contains('\u{1b}'), "{human}");
    assert!(
        human.contains("Sub/Spaced Name.md:1  back to [[Hub]]"),
        "{human}"
    );
}

#[test]
fn graph_tools_over_mcp_and_a_rename_by_move_note() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    fixture(&vault);
    let mut command = cmd(&data, &vault);
    command.args(["mcp", "--allow-writes"]);
    let mut mcp = McpStdio::spawn(command);
    mcp.initialize();

    let back = mcp.call_ok("get_backlinks", json!({"note": "Target"}));
    assert_eq!(back["total"], 5, "{back}");
    assert_eq!(back["backlinks"][3]["line"], 6);
    let page = mcp.call_ok(
        "get_backlinks",
        json!({"note": "Target", "offset": 4, "limit": 2}),
    );
    assert_eq!(page["backlinks"].as_array().unwrap().len(), 1);
    assert_eq!(page["has_more"], false);
    let read = mcp.call_ok("read_note", json!({"note": "Target"}));
    assert_eq!(read["backlinks"], 1, "one note links to it: {read}");

    let out = mcp.call_ok("get_outgoing_links", json!({"note": "Hub"}));
    assert_eq!(out["total"], 12);
    assert_eq!(out["links"][10]["state"], "ambiguous");
    assert_eq!(out["links"][6]["state"], "attachment");
    let gone = mcp.call_ok("list_unresolved_links", json!({}));
    assert_eq!(gone["total"], 2, "{gone}");
    assert_eq!(gone["links"][1]["target"], "Nowhere");
    let in_sub = mcp.call_ok("list_unresolved_links", json!({"folder": "Sub"}));
    assert_eq!(in_sub["total"], 0);
    let orphans = mcp.call_ok("list_orphan_notes", json!({"limit": 2}));
    assert_eq!(orphans["total"], 4);
    assert_eq!(orphans["has_more"], true);
    assert_eq!(orphans["notes"][0]["path"], "B/Twin.md");

    let mentions = mcp.call_ok(
        "get_backlinks",
        json!({"note": "Lonely", "unlinked_mentions": true}),
    );
    assert_eq!(mentions["unlinked_mentions"], json!([]));

    // A rename by move_note: every link follows, and the graph says so at once.
    let moved = mcp.call_ok(
        "move_note",
        json!({"note": "Target.md", "to": "Archive/Goal.md"}),
    );
    assert_eq!(moved["path"], "Archive/Goal.md", "{moved}");
    let back = mcp.call_ok("get_backlinks", json!({"note": "Archive/Goal.md"}));
    let lines: Vec<u64> = back["backlinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [5, 5, 5, 6, 6], "{back}");
    let gone = mcp.call_ok("list_unresolved_links", json!({}));
    assert_eq!(gone["total"], 2, "the rename left no link dangling: {gone}");
    drop(mcp);

    // The same through the CLI, from the files as the move left them.
    let hub = links_json(&data, &vault, &["Hub"]);
    let targets: Vec<(Value, u64)> = outgoing(&hub).into_iter().map(|(_, p, l)| (p, l)).collect();
    let expected: Vec<(Value, u64)> = expected_hub_outgoing("Archive/Goal.md")
        .into_iter()
        .map(|(_, p, l)| (p, l))
        .collect();
    assert_eq!(targets, expected, "{hub}");
}

/// Long enough that only a change that never reaches the index runs out of it.
const NEVER: Duration = Duration::from_secs(60);

#[test]
fn the_watcher_keeps_the_graph_current() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    fixture(&vault);
    let mut child = cmd(&data, &vault)
        .args(["index", "--watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _guard = KillOnDrop(child);
    let mut lines = BufReader::new(stdout).lines();
    wait_for_line(&mut lines, "watching");
    let dangling = || {
        unresolved(&links_json(&data, &vault, &["--unresolved"]))
            .into_iter()
            .map(|(_, target, _)| target)
            .collect::<Vec<_>>()
    };
    assert_eq!(dangling(), ["Sub/Gone.md", "Nowhere"]);

    // (what, how another program saves, the dangling links expected after)
    type Case<'a> = (&'a str, Box<dyn Fn() + 'a>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "a note created later resolves the link that waited for it",
            Box::new(|| std::fs::write(vault.join("Elsewhere/Nowhere.md"), "hi\n").unwrap()),
            vec!["Sub/Gone.md"],
        ),
        (
            "a Markdown link's note appears",
            Box::new(|| std::fs::write(vault.join("Sub/Gone.md"), "back\n").unwrap()),
            vec![],
        ),
        (
            "a rename leaves the old name dangling",
            Box::new(|| {
                std::fs::rename(
                    vault.join("Elsewhere/Nowhere.md"),
                    vault.join("Elsewhere/Somewhere.md"),
                )
                .unwrap()
            }),
            vec!["Nowhere"],
        ),
        (
            "a delete leaves its links dangling",
            Box::new(|| std::fs::remove_file(vault.join("Sub/Gone.md")).unwrap()),
            vec!["Sub/Gone.md", "Nowhere"],
        ),
    ];
    std::fs::create_dir_all(vault.join("Elsewhere")).unwrap();
    for (what, save, expected) in cases {
        let saved = Instant::now();
        save();
        loop {
            let got = dangling();
            if got == expected {
                eprintln!("{what}: after {:?}", saved.elapsed());
                break;
            }
            assert!(saved.elapsed() < NEVER, "{what}: never reflected ({got:?})");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // The renamed note's backlinks: none now (the link names the old file name).
    let v = links_json(&data, &vault, &["Elsewhere/Somewhere.md"]);
    assert_eq!(backlinks(&v, "backlinks"), []);
}

/// (target, path, ambiguous) of each outgoing link.
fn resolved_to(v: &Value) -> Vec<(String, Value, bool)> {
    v["outgoing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["target"].as_str().unwrap().to_string(),
                o["path"].clone(),
                o["ambiguous"] == json!(true),
            )
        })
        .collect()
}

/// What a sync resolves again when notes appear and vanish: only the links whose names those
/// notes carry, found through the index (`vaultchat index` between the changes, as a person
/// running the CLI after editing in another program).
#[test]
fn links_follow_notes_that_appear_and_vanish_between_syncs() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    fixture(&vault);
    let write = |rel: &str, text: &str| {
        let path = vault.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("Sub/Stray.md", "[[Missing Here]]\n");
    write("Sub2/Stray.md", "[[Missing There]]\n");
    write("Waiting.md", "[[Later.md]]\n");
    write("Deep/Solo.md", "# solo\n");
    write("Sub/Linker.md", "[[Solo]]\n");
    let index = || drop(ok(&data, &vault, &["index"]));
    let hub_twin = || resolved_to(&links_json(&data, &vault, &["Hub.md"]))[10].clone();
    let twin = |path: Option<&str>, ambiguous| ("Twin".to_string(), json!(path), ambiguous);

    // Folders are whole names: `Sub` is not `Sub2`.
    let in_folder =
        |flag: &str, folder: &str| links_json(&data, &vault, &[flag, "--folder", folder]);
    assert_eq!(
        unresolved(&in_folder("--unresolved", "Sub")),
        [("Sub/Stray.md".into(), "Missing Here".into(), 1)]
    );
    assert_eq!(
        unresolved(&in_folder("--unresolved", "Sub2/")),
        [("Sub2/Stray.md".into(), "Missing There".into(), 1)]
    );
    assert_eq!(
        paths(&in_folder("--orphans", "Sub")),
        ["Sub/Linker.md", "Sub/Stray.md"]
    );
    assert_eq!(paths(&in_folder("--orphans", "B")), ["B/Twin.md"]);
    assert_eq!(hub_twin(), twin(Some("A/Twin.md"), true));

    // A note created later makes a unique name ambiguous; Obsidian opens the one beside the link.
    let linker = || resolved_to(&links_json(&data, &vault, &["Sub/Linker.md"]));
    assert_eq!(
        linker(),
        [("Solo".to_string(), json!("Deep/Solo.md"), false)]
    );
    write("Sub/Solo.md", "# another solo\n");
    index();
    assert_eq!(linker(), [("Solo".to_string(), json!("Sub/Solo.md"), true)]);
    assert_eq!(
        backlinks(&links_json(&data, &vault, &["Sub/Solo.md"]), "backlinks"),
        [("Sub/Linker.md".to_string(), 1)]
    );
    assert_eq!(
        backlinks(&links_json(&data, &vault, &["Deep/Solo.md"]), "backlinks"),
        []
    );

    // A delete leaves one of two twins: the name is no longer ambiguous; then none: dangling.
    std::fs::remove_file(vault.join("B/Twin.md")).unwrap();
    index();
    assert_eq!(hub_twin(), twin(Some("A/Twin.md"), false));
    std::fs::remove_file(vault.join("A/Twin.md")).unwrap();
    index();
    assert_eq!(hub_twin(), twin(None, false));
    assert!(
        unresolved(&links_json(&data, &vault, &["--unresolved"])).contains(&(
            "Hub.md".into(),
            "Twin".into(),
            17
        ))
    );
    // A note by the name in another case resolves the dangling link.
    write("C/TWIN.md", "# twin again\n");
    index();
    assert_eq!(hub_twin(), twin(Some("C/TWIN.md"), false));

    // `[[Later.md]]` names its note with the extension: it resolves once the note appears.
    assert!(
        unresolved(&links_json(&data, &vault, &["--unresolved"])).contains(&(
            "Waiting.md".into(),
            "Later.md".into(),
            1
        ))
    );
    write("Deep/Later.md", "# later\n");
    index();
    assert_eq!(
        resolved_to(&links_json(&data, &vault, &["Waiting.md"])),
        [("Later.md".to_string(), json!("Deep/Later.md"), false)]
    );
}

/// `vaultchat links` checks each linking note on disk against the index before it prints (no
/// `vaultchat index` in between): a linking note edited, one whose link moved to another line,
/// and one deleted are read again, in the vault's root and in folders.
#[test]
fn links_reads_again_the_linking_notes_changed_since_the_last_index() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    let write = |rel: &str, text: &str| {
        let path = vault.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("Target.md", "# Target\n");
    write("Root.md", "see [[Target]]\n");
    write("F/One.md", "one [[Target]]\n");
    write("F/Two.md", "two [[Target]]\n");
    write("F/G/Three.md", "three [[Target]]\n");
    drop(ok(&data, &vault, &["index"]));
    let target = || links_json(&data, &vault, &["Target.md"]);
    let contexts = |v: &Value| -> Vec<(String, u64, String)> {
        v["backlinks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["path"].as_str().unwrap().to_string(),
                    b["line"].as_u64().unwrap(),
                    b["context"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let row = |path: &str, line: u64, context: &str| (path.to_string(), line, context.to_string());
    assert_eq!(
        contexts(&target()),
        [
            row("F/G/Three.md", 1, "three [[Target]]"),
            row("F/One.md", 1, "one [[Target]]"),
            row("F/Two.md", 1, "two [[Target]]"),
            row("Root.md", 1, "see [[Target]]"),
        ]
    );

    write("F/Two.md", "two\nnow on line two [[Target]]\n");
    std::fs::remove_file(vault.join("F/G/Three.md")).unwrap();
    write("Root.md", "no link any more\n");
    assert_eq!(
        contexts(&target()),
        [
            row("F/One.md", 1, "one [[Target]]"),
            row("F/Two.md", 2, "now on line two [[Target]]"),
        ]
    );
}

/// A cold build resolves every link at once (each name once); later syncs resolve only what
/// changed. After a history of creates, deletes and renames the two must agree on every link.
#[test]
fn a_graph_kept_by_syncs_equals_one_built_cold() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    fixture(&vault);
    let kept = open_index(&vault, &tmp.path().join("kept"));
    let mut kept = kept;
    let write = |rel: &str, text: &str| {
        let path = vault.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let links = "[[Twin]] [[Hub]] [[./Near]] [[../Far]] [[Later.md]] [[x/Deep]] [up](../Hub.md) [[Twin#h|a]] ![[pic.png]]\n";
    let steps: Vec<Box<dyn Fn()>> = vec![
        Box::new(|| write("P/Q/Links.md", links)),
        Box::new(|| write("P/Links.md", links)),
        Box::new(|| write("P/Twin.md", "# a third twin\n")),
        Box::new(|| write("P/Q/Near.md", "[[Links]]\n")),
        Box::new(|| write("P/Far.md", "[[Near]]\n")),
        Box::new(|| write("Later.md", "# later\n")),
        Box::new(|| write("y/x/Deep.md", "# deep\n")),
        Box::new(|| std::fs::remove_file(vault.join("A/Twin.md")).unwrap()),
        Box::new(|| {
            std::fs::rename(vault.join("P/Far.md"), vault.join("P/Q/Far.md")).unwrap();
        }),
        Box::new(|| write("z/x/deep.md", "# another deep\n")),
        Box::new(|| std::fs::remove_file(vault.join("Hub.md")).unwrap()),
        Box::new(|| write("P/Q/Hub.md", "[[Target]]\n")),
    ];
    for step in steps {
        step();
        kept.sync(&mut |_| {}).unwrap();
    }
    let cold = open_index(&vault, &tmp.path().join("cold"));
    let names = cold.note_names().unwrap();
    assert_eq!(kept.note_names().unwrap(), names);
    for note in &names {
        let path = note.path.as_str();
        assert_eq!(
            kept.outgoing_links(path).unwrap(),
            cold.outgoing_links(path).unwrap(),
            "links from {path}"
        );
        assert_eq!(
            kept.backlinks(path, 0, 1000).unwrap(),
            cold.backlinks(path, 0, 1000).unwrap(),
            "links to {path}"
        );
    }
    // The history did exercise every state.
    let states: std::collections::BTreeSet<String> = names
        .iter()
        .flat_map(|n| cold.outgoing_links(&n.path).unwrap().unwrap())
        .map(|o| format!("{:?}", o.state))
        .collect();
    assert_eq!(
        states.into_iter().collect::<Vec<_>>(),
        ["Ambiguous", "Attachment", "Resolved", "Unresolved"]
    );
}
