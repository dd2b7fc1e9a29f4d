//! Writes that cannot be lost or escape the vault: concurrent writers over MCP (HTTP sessions and
//! separate stdio processes), `expected_revision`, `.trash` links, a folder flipped to a link
//! outside while tools run, a disk that fills up, and the size of the history.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use vaultchat::config::{Config, Paths};
use vaultchat::store::{Actor, Store};
use vaultchat::tools::Registry;
use vaultchat::tools::workspace::{self, Workspace};
use vaultchat::vault::Vault;

/// What tests/mcp/concurrent_writers.py reports.
struct Outcome {
    acknowledged: Vec<String>,
    refused: Vec<String>,
    unchanged: usize,
    protocol_errors: Vec<Value>,
}

fn writers(args: &[&str]) -> Outcome {
    let out = Command::new("python3")
        .arg(common::repo().join("tests/mcp/concurrent_writers.py"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "concurrent_writers.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let strings = |key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| match m {
                Value::Array(pair) => pair[0].as_str().unwrap().to_string(),
                other => other.as_str().unwrap().to_string(),
            })
            .collect()
    };
    Outcome {
        acknowledged: strings("acknowledged"),
        refused: strings("refused"),
        unchanged: v["unchanged"].as_array().unwrap().len(),
        protocol_errors: v["protocol_errors"].as_array().unwrap().clone(),
    }
}

/// Every acknowledged marker is in the note exactly once, every refused one is absent.
fn assert_exactly_once(note: &str, outcome: &Outcome) {
    assert!(
        outcome.protocol_errors.is_empty(),
        "protocol errors: {:?}",
        outcome.protocol_errors
    );
    assert_eq!(outcome.unchanged, 0, "an append reported no change");
    let lost: Vec<_> = outcome
        .acknowledged
        .iter()
        .filter(|m| note.matches(m.as_str()).count() != 1)
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged writes are not in the note exactly once: {:?}",
        lost.len(),
        outcome.acknowledged.len(),
        &lost[..lost.len().min(10)]
    );
    let leaked: Vec<_> = outcome
        .refused
        .iter()
        .filter(|m| note.contains(m.as_str()))
        .collect();
    assert!(leaked.is_empty(), "refused writes landed: {leaked:?}");
}

fn small_vault(tmp: &Path) -> (PathBuf, PathBuf) {
    let vault = tmp.join("vault");
    fs::create_dir_all(vault.join("Inbox")).unwrap();
    fs::write(vault.join("Shared.md"), "# Shared\n\nWritten by many.\n").unwrap();
    fs::write(vault.join("Inbox/a.md"), "# A\n\nInbox note.\n").unwrap();
    (vault, tmp.join("data"))
}

#[test]
fn ten_http_clients_appending_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = small_vault(tmp.path());
    let server = common::start_http(&data, &vault, &["--allow-writes"]);
    let outcome = writers(&[
        "--http",
        &server.url,
        &server.token,
        "--note",
        "Shared.md",
        "--clients",
        "10",
        "--appends",
        "30",
    ]);
    let note = fs::read_to_string(vault.join("Shared.md")).unwrap();
    eprintln!(
        "10 HTTP clients × 30 appends: {} acknowledged, {} refused",
        outcome.acknowledged.len(),
        outcome.refused.len()
    );
    assert_exactly_once(&note, &outcome);
    // Planned and applied under one lock, appends never conflict: all of them land.
    assert_eq!(outcome.acknowledged.len(), 300, "{:?}", outcome.refused);
}

#[test]
fn an_expected_revision_admits_one_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = small_vault(tmp.path());
    let server = common::start_http(&data, &vault, &["--allow-writes"]);
    let outcome = writers(&[
        "--http",
        &server.url,
        &server.token,
        "--note",
        "Shared.md",
        "--clients",
        "4",
        "--mode",
        "pinned",
        "--rounds",
        "20",
    ]);
    let note = fs::read_to_string(vault.join("Shared.md")).unwrap();
    assert_exactly_once(&note, &outcome);
    let mut per_round: BTreeMap<String, usize> = BTreeMap::new();
    for marker in &outcome.acknowledged {
        let round = marker.split('-').nth(1).unwrap().to_string();
        *per_round.entry(round).or_default() += 1;
    }
    assert_eq!(per_round.len(), 20, "every round has one winner");
    assert!(
        per_round.values().all(|n| *n == 1),
        "two writers with the same expected_revision both succeeded: {per_round:?}"
    );
    assert_eq!(outcome.refused.len(), 60);
}

#[test]
fn two_stdio_servers_on_one_vault_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = small_vault(tmp.path());
    let outcome = writers(&[
        "--stdio",
        common::bin(),
        vault.to_str().unwrap(),
        data.to_str().unwrap(),
        "--note",
        "Shared.md",
        "--clients",
        "2",
        "--appends",
        "100",
    ]);
    let note = fs::read_to_string(vault.join("Shared.md")).unwrap();
    assert_exactly_once(&note, &outcome);
    assert_eq!(outcome.acknowledged.len(), 200, "{:?}", outcome.refused);
}

fn open_registry(vault: &Path, data: &Path) -> (Arc<Workspace>, Registry) {
    let ws = Workspace::open(
        Vault::open(vault).unwrap(),
        &Paths::under(data),
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();
    let mut reg = Registry::new();
    workspace::register(&mut reg, &ws);
    (ws, reg)
}

/// Every file below `dir` (links not followed) with a hash of its bytes.
fn tree_hashes(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            let rel = entry
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if kind.is_dir() {
                pending.push(entry.path());
                out.insert(format!("{rel}/"), 0);
            } else {
                let bytes = fs::read(entry.path()).unwrap_or_default();
                out.insert(rel, vaultchat::vault::note_io::content_hash(&bytes));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trash_that_is_a_link_is_refused() {
    for link_at in [".trash", ".trash/Inbox"] {
        let tmp = tempfile::tempdir().unwrap();
        let (vault, data) = small_vault(tmp.path());
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("keep.md"), "outside\n").unwrap();
        let link = vault.join(link_at);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let before = tree_hashes(&outside);
        let (_ws, reg) = open_registry(&vault, &data);
        let result = reg.call("delete_note", json!({"note": "Inbox/a.md"})).await;
        let message = result
            .expect_err("a delete through a linked trash must fail")
            .to_string();
        assert!(message.contains("symbolic link"), "{link_at}: {message}");
        assert!(
            vault.join("Inbox/a.md").is_file(),
            "{link_at}: the note left"
        );
        assert_eq!(tree_hashes(&outside), before, "{link_at}: outside changed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_flipping_to_an_outside_link_never_leads_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = small_vault(tmp.path());
    let outside = tmp.path().join("outside");
    fs::create_dir_all(outside.join("deep")).unwrap();
    for name in ["a.md", "victim.md", "deep/b.md"] {
        fs::write(outside.join(name), "OUTSIDE-MARKER secret text\n").unwrap();
    }
    let before = tree_hashes(&outside);
    let (_ws, reg) = open_registry(&vault, &data);
    let reg = Arc::new(reg);

    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = Arc::clone(&stop);
        let (inbox, link) = (vault.join("Inbox"), tmp.path().join("Inbox.link"));
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        // The sharpest form of the attack: the real folder and a link to the outside trade places
        // in one atomic step (renameat2 RENAME_EXCHANGE), so `Inbox` always exists.
        let swap = move || {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &inbox,
                rustix::fs::CWD,
                &link,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .unwrap();
        };
        std::thread::spawn(move || {
            let mut flips = 0u32;
            // Pacing only: each arrangement lasts a moment, so the writers meet both.
            while !stop.load(Ordering::Relaxed) {
                swap();
                std::thread::sleep(Duration::from_micros(300));
                swap();
                std::thread::sleep(Duration::from_micros(300));
                flips += 1;
            }
            flips
        })
    };

    let deadline = Instant::now() + Duration::from_secs(4);
    let mut tasks = Vec::new();
    for worker in 0..4 {
        let reg = Arc::clone(&reg);
        tasks.push(tokio::spawn(async move {
            let mut results = Vec::new();
            let mut n = 0;
            while Instant::now() < deadline {
                n += 1;
                let calls = [
                    (
                        "create_note",
                        json!({"path": format!("Inbox/new-{worker}-{n}.md"), "content": "NEW\n"}),
                    ),
                    (
                        "update_note",
                        json!({"note": "Inbox/a.md", "append": format!("w{worker}-{n}")}),
                    ),
                    (
                        "update_note",
                        json!({"note": "Inbox/victim.md", "append": "PWNED"}),
                    ),
                    ("read_note", json!({"note": "Inbox/a.md"})),
                    ("read_note", json!({"note": "Inbox/victim.md"})),
                    ("read_note", json!({"note": "Inbox/deep/b.md"})),
                    (
                        "create_note",
                        json!({"path": "Inbox/deep/c.md", "content": "x\n"}),
                    ),
                    (
                        "delete_note",
                        json!({"note": format!("Inbox/new-{worker}-{}.md", n - 1)}),
                    ),
                    (
                        "manage_tags",
                        json!({"note": "Inbox/a.md", "add": [format!("t{worker}")]}),
                    ),
                    (
                        "create_notebook",
                        json!({"path": format!("Inbox/sub-{worker}-{n}")}),
                    ),
                    ("search_notes", json!({"query": "OUTSIDE-MARKER"})),
                    ("list_notes", json!({})),
                ];
                for (name, args) in calls {
                    let result = reg.call(name, args).await;
                    let text = match result {
                        Ok(out) => out.structured.to_string(),
                        Err(e) => e.to_string(),
                    };
                    // Only the outside folder has a `victim.md`: a listing that names it looked
                    // through the link.
                    assert!(
                        name != "list_notes" || !text.contains("victim"),
                        "a listing showed a file outside the vault: {text}"
                    );
                    results.push(text);
                }
            }
            results
        }));
    }
    let mut calls = 0;
    for task in tasks {
        for text in task.await.unwrap() {
            calls += 1;
            assert!(
                !text.contains("OUTSIDE-MARKER"),
                "outside content was read back: {text}"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    eprintln!("{calls} tool calls while the folder flipped {flips} times");
    assert!(flips > 100, "the folder flipped only {flips} times");
    assert_eq!(
        tree_hashes(&outside),
        before,
        "files outside the vault were created, changed or left behind"
    );
}

/// One `vaultchat mcp --allow-writes` over stdio in a private mount namespace, with its data
/// folder and its vault on two small tmpfs mounts (root only: CI runs as root).
struct FullDiskServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next_id: u64,
    /// The mount point as seen from this process through the server's own root.
    root: PathBuf,
}

impl FullDiskServer {
    fn start(seed: &Path, dir: &Path, vault_kb: u64, data_kb: u64) -> Self {
        fs::create_dir_all(dir.join("vault")).unwrap();
        fs::create_dir_all(dir.join("data")).unwrap();
        let script = format!(
            "set -e; mount -t tmpfs -o size={vault_kb}k tmpfs '{d}/vault'; mount -t tmpfs -o size={data_kb}k tmpfs '{d}/data'; \
             cp -a '{seed}/.' '{d}/vault/'; exec '{bin}' --data-dir '{d}/data' --vault '{d}/vault' mcp --allow-writes",
            d = dir.display(),
            seed = seed.display(),
            bin = common::bin(),
        );
        let mut child = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("unshare (util-linux) runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let root = PathBuf::from(format!("/proc/{}/root{}", child.id(), dir.display()));
        let mut server = Self {
            child,
            stdin,
            stdout,
            next_id: 0,
            root,
        };
        server.rpc(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        writeln!(
            server.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        server
    }

    fn rpc(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server stopped (is this running as root? mounting a tmpfs needs it)"
            );
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    }

    /// (ok, structured result or error text).
    fn call(&mut self, name: &str, arguments: Value) -> (bool, Value) {
        let reply = self.rpc("tools/call", json!({"name": name, "arguments": arguments}));
        let result = &reply["result"];
        // A failure the server could not blame on the arguments (a full disk) comes back as a
        // JSON-RPC error rather than a tool error: an error either way.
        if !result.is_object() {
            return (false, reply["error"].clone());
        }
        if result["isError"] == json!(true) {
            (false, result["content"][0]["text"].clone())
        } else {
            (true, result["structuredContent"].clone())
        }
    }

    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        fs::read(self.root.join("vault").join(rel)).ok()
    }
}

impl Drop for FullDiskServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_full_disk_never_reports_a_write_that_happened_as_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, _) = small_vault(tmp.path());
    // The history and index fill up first (the note is also indexed and its revisions kept),
    // then the vault itself.
    let mut server = FullDiskServer::start(&seed, &tmp.path().join("mnt"), 6144, 1536);
    let chunk: String = "lorem ipsum dolor sit amet ".repeat(3_800); // ~100 KB
    let (mut applied, mut applied_with_warning, mut refused) = (0, 0, 0);
    for step in 0..60 {
        let before = server.read("Shared.md").unwrap();
        let marker = format!("STEP-{step}-END.");
        let (ok, detail) = server.call(
            "update_note",
            json!({"note": "Shared.md", "append": format!("{chunk}{marker}")}),
        );
        let after = server.read("Shared.md").unwrap();
        let text = String::from_utf8_lossy(&after);
        if ok {
            assert_eq!(text.matches(&marker).count(), 1, "step {step}: {detail}");
            applied += 1;
            if detail.get("warning").is_some() {
                applied_with_warning += 1;
            }
        } else {
            assert_eq!(
                after, before,
                "step {step}: an error, yet the note changed: {detail}"
            );
            refused += 1;
        }
        if refused >= 3 {
            break;
        }
    }
    assert!(
        refused >= 3,
        "the vault did not fill up in 60 steps ({refused} refused)"
    );
    // With the disk too full to rewrite the large note: a tag change fails without a trace...
    let before = server.read("Shared.md").unwrap();
    let (ok, detail) = server.call("manage_tags", json!({"note": "Shared.md", "add": ["full"]}));
    assert!(!ok, "a tag change on a full disk succeeded: {detail}");
    assert_eq!(server.read("Shared.md").unwrap(), before, "{detail}");
    let (ok, detail) = server.call(
        "create_note",
        json!({"path": "Big.md", "content": chunk.repeat(20)}),
    );
    // A new note needs only its own size, which may still fit where a rewrite of the large note
    // did not: either outcome, but the answer must match the disk.
    if ok {
        assert!(server.read("Big.md").is_some(), "{detail}");
    } else {
        assert!(server.read("Big.md").is_none(), "{detail}");
    }
    // ... and a deletion either moves the note to the trash or leaves it where it was.
    let (ok, detail) = server.call("delete_note", json!({"note": "Inbox/a.md"}));
    assert_eq!(server.read("Inbox/a.md").is_none(), ok, "{detail}");
    eprintln!(
        "full disk: {applied} applied ({applied_with_warning} with a warning), {refused} refused"
    );
    assert!(
        applied_with_warning > 0,
        "the database never filled up before the vault did"
    );
    assert!(refused > 0, "the vault never filled up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_edits_of_a_large_note_keep_the_history_small() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = small_vault(tmp.path());
    let body: String = (0..1_700)
        .map(|i| format!("Line {i:04} of a long note, with enough words to be realistic.\n"))
        .collect();
    assert!(body.len() > 100_000);
    fs::write(vault.join("Big.md"), &body).unwrap();
    let (ws, reg) = open_registry(&vault, &data);
    let mut texts = vec![body];
    for edit in 0..500 {
        let line = (edit * 37) % 1_700;
        let old = format!("Line {line:04} of");
        let new = format!("Line {line:04} (edit {edit}) of");
        let current = texts.last().unwrap().clone();
        let find = current
            .lines()
            .find(|l| l.starts_with(&old) || l.starts_with(&format!("Line {line:04} (")))
            .unwrap()
            .to_string();
        let replaced = format!("{new}{}", &find[find.find(" of").unwrap() + 3..]);
        reg.call(
            "update_note",
            json!({"note": "Big.md", "replace_text": {"find": find, "replace": replaced}}),
        )
        .await
        .unwrap();
        texts.push(fs::read_to_string(vault.join("Big.md")).unwrap());
    }
    let db = Paths::under(&data).database_file();
    let store = Store::open(&db).unwrap();
    let size = store.history_size(ws.vault_id()).unwrap();
    let file = fs::metadata(&db).unwrap().len()
        + fs::metadata(db.with_extension("db-wal")).map_or(0, |m| m.len());
    eprintln!(
        "500 edits of a {} KB note: {} revisions, {:.2} MB of stored history, database file {:.2} MB",
        texts[0].len() / 1024,
        size.revisions,
        size.bytes as f64 / 1_048_576.0,
        file as f64 / 1_048_576.0
    );
    assert!(file < 20 << 20, "database is {file} bytes");
    // /rewind restores the text before a revision: the last ten give back the ten texts before.
    let revisions = store.revisions_of(ws.vault_id(), "Big.md", 10).unwrap();
    assert_eq!(revisions.len(), 10);
    for (back, revision) in revisions.iter().enumerate() {
        let want = &texts[texts.len() - 2 - back];
        assert_eq!(
            store.revision_text(revision.id).unwrap().as_deref(),
            Some(want.as_str()),
            "revision {back} back"
        );
    }
}

/// A slow call (here a write waiting for another process's vault lock) runs off the MCP dispatch
/// loop: `ping` on the same stdio connection is answered meanwhile, and the write completes once
/// the lock is free.
#[test]
fn ping_is_answered_while_a_write_waits_for_the_vault_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = small_vault(tmp.path());
    let mut child = common::cmd(&data, &vault)
        .args(["mcp", "--allow-writes"])
        // The writer says in the log that it waits for the lock (below).
        .env("VAULTCHAT_LOG", "vaultchat=info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { return };
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
    );
    assert_eq!(rx.recv_timeout(Duration::from_secs(30)).unwrap()["id"], 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // Another process holds the vault's write lock (as a second vaultchat would mid-write).
    let root = rustix::fs::open(
        &vault,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    rustix::fs::flock(&root, rustix::fs::FlockOperation::LockExclusive).unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "update_note", "arguments": {"note": "Shared.md", "append": "AFTER-THE-LOCK"}}}),
    );
    // The write has reached the lock and waits there (it says so once in the log): the ping
    // below arrives while a write is queued, and the note is checked while that write waits.
    let log = data.join("vaultchat.log");
    let queued = Instant::now();
    while !fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("the vault's write lock is held elsewhere")
    {
        assert!(
            queued.elapsed() < Duration::from_secs(30),
            "the write never waited for the lock; the log:\n{}",
            fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    let first = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(first["id"], 3, "the ping waited for the write: {first}");
    assert!(
        !fs::read_to_string(vault.join("Shared.md"))
            .unwrap()
            .contains("AFTER-THE-LOCK")
    );
    rustix::fs::flock(&root, rustix::fs::FlockOperation::Unlock).unwrap();
    let write = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(write["id"], 2);
    assert_eq!(write["result"]["isError"], json!(false), "{write}");
    assert!(
        fs::read_to_string(vault.join("Shared.md"))
            .unwrap()
            .contains("AFTER-THE-LOCK")
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// `vaultchat mcp` answers at once with an existing index: the start-up re-sync runs in the
/// background, and a search meanwhile uses the index as it is and says so.
#[test]
fn the_server_answers_while_the_index_catches_up() {
    let tmp = tempfile::tempdir().unwrap();
    let (vault, data) = small_vault(tmp.path());
    common::ok(&data, &vault, &["index"]);
    fs::write(
        vault.join("Later.md"),
        "# Later\n\nwritten while vaultchat was away\n",
    )
    .unwrap();
    // Another connection keeps the index's write lock, so the background re-sync has to wait.
    let index_file = fs::read_dir(data.join("index"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "db") && !p.to_string_lossy().ends_with(".graph.db")
        })
        .unwrap();
    let blocker = rusqlite::Connection::open(&index_file).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();

    let mut child = common::cmd(&data, &vault)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut rpc = |id: u64, method: &str, params: Value| -> Value {
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        // Only the reply to this request counts (a notification may come first).
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "the server stopped"
            );
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    };
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    let search = |rpc: &mut dyn FnMut(u64, &str, Value) -> Value, id| {
        rpc(
            id,
            "tools/call",
            json!({"name": "search_notes", "arguments": {"query": "written while"}}),
        )["result"]["structuredContent"]
            .clone()
    };
    let during = search(&mut rpc, 2);
    assert!(
        during["index_catching_up"].is_string(),
        "a search during the re-sync does not say so: {during}"
    );
    blocker.execute_batch("COMMIT").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut id = 3;
    let after = loop {
        let result = search(&mut rpc, id);
        if result.get("index_catching_up").is_none() || Instant::now() > deadline {
            break result;
        }
        id += 1;
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(after.get("index_catching_up").is_none(), "{after}");
    assert_eq!(after["results"][0]["path"], "Later.md", "{after}");
    let _ = child.kill();
    let _ = child.wait();
}
