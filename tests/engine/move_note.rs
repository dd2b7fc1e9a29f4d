//! `move_note` on a generated vault, driven through the real binary over MCP (stdio): the note
//! with the most backlinks moves into a new folder under a new name; every link form to it is
//! counted before and after (and must match what the tool reports); every other note is byte for
//! byte unchanged; the index follows at once. Then a crash: the server is killed (`kill -9`) at a
//! failpoint between two files, and the next start leaves the vault exactly as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{self, cmd};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

const NEW_PATH: &str = "Moved here/Deeper/Renamed keystone.md";
const NEW_NAME: &str = "Renamed keystone";

/// Link counts per form, as the tool reports them (`links_rewritten`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Forms {
    wikilink: usize,
    wikilink_alias: usize,
    wikilink_heading: usize,
    wikilink_heading_alias: usize,
    embed: usize,
    markdown: usize,
}

impl Forms {
    fn of(v: &Value) -> Forms {
        let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}")) as usize;
        Forms {
            wikilink: n("wikilink"),
            wikilink_alias: n("wikilink_alias"),
            wikilink_heading: n("wikilink_heading"),
            wikilink_heading_alias: n("wikilink_heading_alias"),
            embed: n("embed"),
            markdown: n("markdown"),
        }
    }

    fn add(&mut self, o: &Forms) {
        self.wikilink += o.wikilink;
        self.wikilink_alias += o.wikilink_alias;
        self.wikilink_heading += o.wikilink_heading;
        self.wikilink_heading_alias += o.wikilink_heading_alias;
        self.embed += o.embed;
        self.markdown += o.markdown;
    }

    fn total(&self) -> usize {
        self.wikilink
            + self.wikilink_alias
            + self.wikilink_heading
            + self.wikilink_heading_alias
            + self.embed
            + self.markdown
    }
}

/// The text without fenced code blocks and inline code spans (what is not a link).
fn without_code(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// Counts the links to the note named `name` whose Markdown path (from `note`) is `md_path`,
/// form by form, written independently of the code under test.
fn count_links(text: &str, name: &str, md_paths: &[String]) -> Forms {
    let text = without_code(text);
    let mut forms = Forms::default();
    let open = format!("[[{name}");
    let mut from = 0;
    while let Some(at) = text[from..].find(&open) {
        let start = from + at;
        let after = &text[start + open.len()..];
        from = start + open.len();
        let Some(close) = after.find("]]") else {
            continue;
        };
        let rest = &after[..close];
        if !(rest.is_empty() || rest.starts_with('|') || rest.starts_with('#')) {
            continue; // A longer name (`Note 1` vs `Note 12`).
        }
        if start > 0 && text.as_bytes()[start - 1] == b'!' {
            forms.embed += 1;
        } else {
            match (rest.starts_with('#'), rest.contains('|')) {
                (false, false) => forms.wikilink += 1,
                (false, true) => forms.wikilink_alias += 1,
                (true, false) => forms.wikilink_heading += 1,
                (true, true) => forms.wikilink_heading_alias += 1,
            }
        }
    }
    for path in md_paths {
        forms.markdown += text.matches(&format!("]({path})")).count();
        forms.markdown += text.matches(&format!("]({path}#")).count();
        forms.markdown += text
            .matches(&format!("](<{}>)", path.replace("%20", " ")))
            .count();
    }
    forms
}

fn relative(from: &str, to: &str) -> String {
    let from: Vec<&str> = from.split('/').collect();
    let to: Vec<&str> = to.split('/').collect();
    let dirs = &from[..from.len() - 1];
    let common = dirs
        .iter()
        .zip(&to)
        .take_while(|(a, b)| a == b)
        .count()
        .min(to.len() - 1);
    let mut parts = vec![".."; dirs.len() - common];
    parts.extend(&to[common..]);
    parts.join("/").replace(' ', "%20")
}

/// Every file and folder of `dir` with its bytes (folders as `None`).
fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let rel = entry
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if entry.file_type().unwrap().is_dir() {
                out.insert(rel, None);
                pending.push(entry.path());
            } else {
                out.insert(rel, Some(std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    out
}

/// A generated vault with the target's most-linked note found from the manifest, and links of
/// the forms the generator does not write (embeds, heading + alias, Markdown links, links in
/// code) planted in notes that did not link to it yet.
struct Fixture {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    target: String,
    title: String,
    /// Notes holding a link to the target only inside code.
    code_only: Vec<String>,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    let manifest = common::gen_vault(&vault, 1000, 15);
    let notes = manifest["notes"].as_array().unwrap();
    let mut backlinks: BTreeMap<String, usize> = BTreeMap::new();
    for note in notes {
        for link in note["links"].as_array().unwrap() {
            *backlinks
                .entry(link.as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    let (title, _) = backlinks
        .iter()
        .filter(|(t, _)| notes.iter().any(|n| n["title"] == **t))
        .max_by_key(|(t, n)| (**n, std::cmp::Reverse((*t).clone())))
        .unwrap();
    let title = title.clone();
    let target = notes.iter().find(|n| n["title"] == title.as_str()).unwrap()["path"]
        .as_str()
        .unwrap()
        .to_string();
    // Four notes in folders that do not link to the target get the missing forms.
    let plain: Vec<String> = notes
        .iter()
        .filter(|n| {
            let p = n["path"].as_str().unwrap();
            p.contains('/')
                && p != target
                && !p.ends_with("Index.md")
                && !n["links"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|l| *l == title.as_str())
        })
        .map(|n| n["path"].as_str().unwrap().to_string())
        .take(4)
        .collect();
    let append = |rel: &str, extra: &str| {
        let path = vault.join(rel);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(extra);
        std::fs::write(&path, text).unwrap();
    };
    append(
        &plain[0],
        &format!("\n![[{title}]] and ![[{title}#Notes|the notes]]; [[{title}#Notes|see there]].\n"),
    );
    let rel = relative(&plain[1], &target);
    append(
        &plain[1],
        &format!("\nA [plain link]({rel}) and [one to a part]({rel}#Notes \"Notes\").\n"),
    );
    let rel = relative(&plain[2], &target).replace("%20", " ");
    append(&plain[2], &format!("\nAngled: [there](<{rel}>).\n"));
    let rel = relative(&plain[3], &target);
    append(
        &plain[3],
        &format!("\nNot links: `[[{title}]]` and\n\n```\n[[{title}|x]] [y]({rel})\n```\n"),
    );
    Fixture {
        _tmp: tmp,
        vault,
        data,
        target,
        title,
        code_only: vec![plain[3].clone()],
    }
}

impl Fixture {
    /// The links to the target in every note, by note (before the move).
    fn links_before(&self) -> BTreeMap<String, Forms> {
        let mut out = BTreeMap::new();
        for (rel, bytes) in snapshot(&self.vault) {
            let Some(bytes) = bytes else { continue };
            if !rel.ends_with(".md") {
                continue;
            }
            let text = String::from_utf8(bytes).unwrap();
            let md = vec![relative(&rel, &self.target)];
            let forms = count_links(&text, &self.title, &md);
            if forms.total() > 0 {
                out.insert(rel, forms);
            }
        }
        out
    }
}

/// A `vaultchat mcp` session on stdio.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Session {
    fn start(f: &Fixture, extra: &[&str], env: &[(&str, &str)]) -> Session {
        let mut command = cmd(&f.data, &f.vault);
        command
            .arg("mcp")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let mut session = Session {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            next: 1,
        };
        session.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "move-test", "version": "1"}}),
        );
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: &Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .unwrap();
        self.stdin.flush().unwrap();
    }

    fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server ended"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert_ne!(v["result"]["isError"], true, "{tool}: {v}");
        v["result"]["structuredContent"].clone()
    }

    fn tool_names(&mut self) -> Vec<String> {
        let v = self.request("tools/list", json!({}));
        v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_most_linked_note_moves_and_every_link_follows() {
    let f = fixture();
    let before = snapshot(&f.vault);
    let links = f.links_before();
    let mut expected = Forms::default();
    for forms in links.values() {
        expected.add(forms);
    }
    // Every form is present, so each is really tested.
    assert!(
        expected.wikilink > 0
            && expected.wikilink_alias > 0
            && expected.wikilink_heading > 0
            && expected.wikilink_heading_alias > 0
            && expected.embed > 0
            && expected.markdown > 0,
        "{expected:?}"
    );
    eprintln!(
        "moving {} ({} links in {} notes: {expected:?})",
        f.target,
        expected.total(),
        links.len()
    );

    // Without --allow-writes the tool is not offered.
    let mut read_only = Session::start(&f, &[], &[]);
    let names = read_only.tool_names();
    assert!(names.contains(&"read_note".to_string()) && !names.contains(&"move_note".to_string()));
    drop(read_only);

    let mut mcp = Session::start(&f, &["--allow-writes"], &[]);
    assert!(mcp.tool_names().contains(&"move_note".to_string()));
    let out = mcp.call("move_note", json!({"note": f.target, "to": NEW_PATH}));
    assert_eq!(out["path"], NEW_PATH, "{out}");
    assert_eq!(Forms::of(&out["links_rewritten"]), expected, "{out}");

    // The files the tool says it changed: the moved note and exactly the notes that linked to it.
    let changed: BTreeSet<String> = out["files_changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let mut wanted: BTreeSet<String> = links.keys().filter(|p| **p != f.target).cloned().collect();
    wanted.insert(NEW_PATH.to_string());
    assert_eq!(changed, wanted);

    let after = snapshot(&f.vault);
    assert!(!after.contains_key(&f.target));
    assert_eq!(
        after[NEW_PATH], before[&f.target],
        "the moved note had no relative links"
    );
    // Every other note is byte for byte as it was (the code-only note included).
    let mut unchanged = 0;
    for (rel, bytes) in &before {
        if *rel == f.target || changed.contains(rel) || rel.starts_with(".vault-manifest") {
            continue;
        }
        assert_eq!(after.get(rel), Some(bytes), "{rel} changed");
        unchanged += 1;
    }
    for rel in &f.code_only {
        assert!(!changed.contains(rel));
    }
    // In each changed note the links are all there, pointing at the new name, in the same forms.
    let mut found = Forms::default();
    for rel in links.keys().filter(|p| **p != f.target) {
        let text = String::from_utf8(after[rel].clone().unwrap()).unwrap();
        assert_eq!(
            count_links(&text, &f.title, &[relative(rel, &f.target)]).total(),
            0,
            "{rel} still links to the old name"
        );
        let forms = count_links(&text, NEW_NAME, &[relative(rel, NEW_PATH)]);
        assert_eq!(forms, links[rel], "{rel}");
        found.add(&forms);
    }
    assert_eq!(found, expected);
    eprintln!(
        "rewritten: {expected:?} = {} links in {} notes; {unchanged} other files byte-identical",
        found.total(),
        changed.len() - 1
    );

    // The index followed at once: the new name finds the note at its new path and every note
    // that names it now (Markdown links spell it `Renamed%20keystone`, not as words).
    let results = mcp.call(
        "search_notes",
        json!({"query": "\"Renamed keystone\"", "limit": 100}),
    );
    let paths: BTreeSet<String> = results["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    let naming: BTreeSet<String> = changed
        .iter()
        .filter(|p| {
            *p == NEW_PATH
                || String::from_utf8_lossy(after[*p].as_ref().unwrap()).contains(NEW_NAME)
        })
        .cloned()
        .collect();
    assert!(
        naming.len() < changed.len(),
        "some notes link only by Markdown path"
    );
    assert_eq!(paths, naming, "{results}");
    let read = mcp.call("read_note", json!({"note": NEW_NAME}));
    assert_eq!(read["path"], NEW_PATH);
    let old = mcp.request(
        "tools/call",
        json!({"name": "read_note", "arguments": {"note": f.target}}),
    );
    assert_eq!(old["result"]["isError"], true, "{old}");
}

#[test]
fn refusals_change_nothing() {
    let f = fixture();
    let before = snapshot(&f.vault);
    let mut mcp = Session::start(&f, &["--allow-writes"], &[]);
    let other = before
        .keys()
        .find(|p| p.ends_with(".md") && **p != f.target && !p.starts_with('.'))
        .unwrap()
        .clone();
    for (to, says) in [
        (other.as_str(), "already exists"),
        ("../outside.md", "outside"),
        ("Moved/picture.png", "Markdown"),
    ] {
        let v = mcp.request(
            "tools/call",
            json!({"name": "move_note", "arguments": {"note": f.target, "to": to}}),
        );
        assert_eq!(v["result"]["isError"], true, "{to}: {v}");
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(says), "{to}: {text}");
    }
    assert_eq!(snapshot(&f.vault), before);
}

/// Kill the server at `point` in the middle of a move; the next start must roll it back.
/// Start a move and kill the server at `point`; the fixture, the vault before, and after the crash.
#[allow(clippy::type_complexity)]
fn crash_during_move(
    point: &str,
) -> (
    Fixture,
    BTreeMap<String, Option<Vec<u8>>>,
    BTreeMap<String, Option<Vec<u8>>>,
) {
    let f = fixture();
    let before = snapshot(&f.vault);
    let marker = f.data.join("failpoint-reached");
    std::fs::create_dir_all(&f.data).unwrap();
    let mut mcp = Session::start(
        &f,
        &["--allow-writes"],
        &[
            ("VAULTCHAT_FAILPOINT", point),
            ("VAULTCHAT_FAILPOINT_MARKER", marker.to_str().unwrap()),
        ],
    );
    mcp.send_request(
        "tools/call",
        json!({"name": "move_note", "arguments": {"note": f.target, "to": NEW_PATH}}),
    );
    let waited = Instant::now();
    while !marker.exists() {
        assert!(
            waited.elapsed() < Duration::from_secs(120),
            "the move never reached {point}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    mcp.child.kill().unwrap();
    mcp.child.wait().unwrap();
    let crashed = snapshot(&f.vault);
    let differing = before
        .keys()
        .chain(crashed.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|k| before.get(*k) != crashed.get(*k))
        .count();
    assert!(
        differing > 0,
        "{point}: the crash left nothing half-done to test"
    );
    eprintln!("{point}: killed with {differing} files and folders changed");
    (f, before, crashed)
}

fn crash_at(point: &str) {
    let (f, before, _) = crash_during_move(point);
    // The next start (any command that opens the workspace) rolls the move back.
    let out = common::run(&f.data, &f.vault, &["tools", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let restored = snapshot(&f.vault);
    assert_eq!(
        restored.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "{point}: the same files and folders"
    );
    assert!(
        restored == before,
        "{point}: the vault is byte for byte as it was"
    );
}

#[test]
fn a_crash_between_files_leaves_the_vault_as_it_was() {
    crash_at("move_note.after_file.2");
}

#[test]
fn a_crash_after_the_rename_leaves_the_vault_as_it_was() {
    crash_at("move_note.before_commit");
}

/// The undo of an interrupted move runs at the next open, which may be much later: a note the
/// person changed after the move wrote it keeps their text; every other file is restored.
#[test]
fn an_interrupted_move_never_undoes_a_later_edit() {
    let (f, before, crashed) = crash_during_move("move_note.after_file.2");
    let edited = crashed
        .iter()
        .find(|(rel, bytes)| rel.ends_with(".md") && before.get(*rel) != Some(bytes))
        .map(|(rel, _)| rel.clone())
        .expect("a note the move had already rewritten");
    let mut typed = crashed[&edited].clone().unwrap();
    typed.extend_from_slice(b"\nTyped after the crash.\n");
    std::fs::write(f.vault.join(&edited), &typed).unwrap();

    let out = common::run(&f.data, &f.vault, &["tools", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let restored = snapshot(&f.vault);
    assert_eq!(
        restored[&edited].as_deref(),
        Some(&typed[..]),
        "the later edit stays"
    );
    for (rel, bytes) in &before {
        if *rel != edited {
            assert_eq!(restored.get(rel), Some(bytes), "{rel} is restored");
        }
    }
}

/// A step that fails part-way (not a crash): the files already written are restored at once,
/// the tool reports the error, and no journal is left for the next start.
#[test]
fn a_failure_between_files_restores_every_file_at_once() {
    for point in ["move_note.after_file.3", "move_note.before_commit"] {
        let f = fixture();
        let before = snapshot(&f.vault);
        let mut mcp = Session::start(
            &f,
            &["--allow-writes"],
            &[
                ("VAULTCHAT_FAILPOINT", point),
                ("VAULTCHAT_FAILPOINT_ACTION", "fail"),
            ],
        );
        let v = mcp.request(
            "tools/call",
            json!({"name": "move_note", "arguments": {"note": f.target, "to": NEW_PATH}}),
        );
        // An internal failure (as a full disk is) is a JSON-RPC error naming what failed.
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("failpoint")),
            "{point}: {v}"
        );
        assert!(
            snapshot(&f.vault) == before,
            "{point}: the vault is byte for byte as it was"
        );
        let journals: Vec<_> = std::fs::read_dir(f.data.join("moves"))
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        assert!(journals.is_empty(), "{point}: {journals:?}");
        // And the note can still be moved.
        drop(mcp);
        let mut mcp = Session::start(&f, &["--allow-writes"], &[]);
        let out = mcp.call("move_note", json!({"note": f.target, "to": NEW_PATH}));
        assert_eq!(out["path"], NEW_PATH);
    }
}
