//! A long day in one run (issue 22): the real app in a real terminal (tmux), driven through 500
//! turns against the local fake provider (tests/common/fake_llm.rs, the Anthropic wire format) —
//! plain replies with Markdown and code, a `read_note` every 5th turn, an approved `update_note`
//! of the open note every 10th (the banner answered with `y`). At turns 1, 100 and 500 it records
//! the process's resident memory, the key-to-frame time (a key typed in the chat until tmux shows
//! it, 20 keys) and the app database's size, and checks that growth is bounded:
//!
//! * memory: what the app keeps per turn is the turn's conversation — the agent's history (what
//!   it sends upstream: measured as the last request's body) and the transcript's cells holding
//!   the same text — plus the laid-out lines of a bounded page of cells around the view
//!   (`tui::chat::KEEP_LAID_OUT`). So from turn 100 to 500 resident memory may grow by at most
//!   `MEMORY_FACTOR` × the growth of the history, plus a fixed slack for the allocator
//!   (`MEMORY_SLACK_MB`). Lines kept for every cell forever add about half as much again.
//! * database: each turn stores its messages, and an edit its revision: the bytes per turn from
//!   100 to 500 may be at most `DB_RATE_FACTOR` × those of turns 1 to 100 (linear, not worse).
//! * key-to-frame: the p95 at turn 500 at most `FRAME_GROWTH` × that at turn 1, plus 10 ms.
//!
//! `cargo bench --bench soak` (add `--profile release-fast` for a quicker build; `SOAK_TURNS=N`
//! for a shorter run; `SOAK_BIN=PATH` drives another build of the app). Prints a table and writes `bench-results/soak.json`; exits non-zero when a
//! bound is broken.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::fake_llm::{
    Chunking, FakeLlm, FakeUsage, Recorded, Reply, anthropic_text, anthropic_tool_calls,
};
use common::tmux::{Tmux, app_line};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TURNS: usize = 500;
const CHECKPOINTS: [usize; 3] = [1, 100, 500];
const KEYS_PER_SAMPLE: usize = 20;
const MEMORY_FACTOR: f64 = 10.0;
const MEMORY_SLACK_MB: f64 = 2.0;
const DB_RATE_FACTOR: f64 = 1.5;
const FRAME_GROWTH: f64 = 2.0;

const PLAN: &str = "# Plan\n\ncount: 0\n\nThe rest of the plan stays as it is.\n";

fn usage() -> FakeUsage {
    FakeUsage {
        input: 200,
        output: 60,
        cache_read: 0,
        cache_write: 0,
    }
}

/// The reply of turn `n`: a heading, a paragraph, a list, and every third turn a code fence.
fn reply_text(n: usize) -> String {
    let code = if n.is_multiple_of(3) {
        format!("\n\n```rust\nfn turn_{n}() -> usize {{\n    {n} * 2\n}}\n```")
    } else {
        String::new()
    };
    format!(
        "## Reply {n}\n\nHere is what the notes say about turn {n}: the plan in [[Plan]] keeps \
         its shape, the count moves on, and nothing else changes today.\n\n- first point of {n}\n\
         - second point of {n}\n- done {n}{code}"
    )
}

/// The number of the turn a request belongs to: the last `turn N` the person wrote.
fn turn_of(request: &Recorded) -> usize {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for message in messages.iter().rev() {
        if message["role"] != "user" {
            continue;
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if let Some(text) = block["text"].as_str()
                && let Some(rest) = text.strip_prefix("turn ")
            {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(n) = digits.parse() {
                    return n;
                }
            }
        }
    }
    0
}

/// Whether the last message answers a tool call (the turn's second request).
fn answers_a_call(request: &Recorded) -> bool {
    let last = request.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    last["content"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|b| b["type"] == "tool_result")
}

fn respond(request: &Recorded) -> Reply {
    let n = turn_of(request);
    let body = if answers_a_call(request) {
        anthropic_text(&reply_text(n), usage())
    } else if n > 0 && n.is_multiple_of(10) {
        anthropic_tool_calls(
            Some("I'll move the count on."),
            &[(
                &format!("edit_{n}"),
                "update_note",
                json!({"note": "Plan.md", "replace_text": {
                    "find": format!("count: {}", n - 10),
                    "replace": format!("count: {n}"),
                }}),
            )],
            usage(),
        )
    } else if n > 0 && n.is_multiple_of(5) {
        anthropic_tool_calls(
            Some("Let me read the plan."),
            &[(
                &format!("read_{n}"),
                "read_note",
                json!({"note": "Plan.md"}),
            )],
            usage(),
        )
    } else {
        anthropic_text(&reply_text(n), usage())
    };
    Reply::Sse {
        body,
        chunking: Chunking::Fixed(64),
    }
}

/// The pid of the app: the child of the tmux pane's shell named `vaultchat`.
fn app_pid(tmux: &Tmux) -> u32 {
    let shell: u32 = tmux
        .run(&["display", "-p", "-t", "t", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // pid (comm) state ppid …
            let Some((comm, rest)) = stat.split_once(") ") else {
                continue;
            };
            let ppid: u32 = rest
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            if ppid == shell && comm.contains("(vaultchat") {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "the app's process was not found");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb / 1024.0
}

/// The app database's size as SQLite sees it (pages in use, whether they sit in the main file or
/// still in the write-ahead log), read through a read-only connection beside the app's.
fn db_bytes(data: &Path) -> u64 {
    let file = data.join("vaultchat.db");
    let db =
        rusqlite::Connection::open_with_flags(&file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let pages: i64 = db.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    let size: i64 = db.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    (pages * size).unsigned_abs()
}

fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let k = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[k.min(sorted.len() - 1)]
}

/// Type `KEYS_PER_SAMPLE` keys into the chat, each timed until tmux shows it; then clear them.
fn key_to_frame_ms(tmux: &Tmux, turn: usize) -> Vec<f64> {
    let word: String = (0..KEYS_PER_SAMPLE)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let marker = format!("k{turn}-");
    tmux.type_text(&marker);
    tmux.wait_text(&marker);
    let mut times = Vec::new();
    for i in 0..word.len() {
        let shown = format!("{marker}{}", &word[..=i]);
        tmux.type_text(&word[i..=i]);
        let start = Instant::now();
        while !tmux.screen().contains(&shown) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "key not shown:\n{}",
                tmux.screen()
            );
        }
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    // Clear what was typed.
    for _ in 0..(marker.len() + word.len()) {
        tmux.keys(&["BSpace"]);
    }
    tmux.wait_for("the input cleared", |s| !s.contains(&marker));
    times
}

/// One turn as a person does it: type, send, approve an edit, wait for the reply.
fn turn(tmux: &Tmux, n: usize) -> usize {
    let prompt = format!("turn {n} please");
    tmux.type_text(&prompt);
    tmux.keys(&["Enter"]);
    if n.is_multiple_of(10) {
        tmux.wait_text("Allow update_note?");
        tmux.keys(&["y"]);
    }
    let done = format!("done {n}");
    tmux.wait_for(&format!("the reply of turn {n}"), |s| {
        s.contains(&done) && s.lines().any(|l| l.starts_with(" ready "))
    });
    prompt.len() + reply_text(n).len()
}

struct Sample {
    turn: usize,
    rss_mb: f64,
    db_bytes: u64,
    text_bytes: usize,
    /// The last request's body: the whole conversation the agent keeps and sends upstream.
    history_bytes: usize,
    key_ms: Vec<f64>,
}

fn main() {
    let turns: usize = std::env::var("SOAK_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TURNS);
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), PLAN).unwrap();
    std::fs::write(vault.join("Welcome.md"), "# Welcome\n").unwrap();
    let data = tmp.path().join("data");
    let fake = FakeLlm::start_responding(Arc::new(respond));
    // `SOAK_BIN`: another build of the app to drive (e.g. one without a change, to compare).
    let mut line = app_line(&[], &data, &fake.base_url, &[], &vault);
    if let Ok(bin) = std::env::var("SOAK_BIN") {
        line = line.replacen(common::bin(), &bin, 1);
    }
    let tmux = Tmux::start(&line, 120, 40);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    let pid = app_pid(&tmux);
    // The edits are of the open note, as a person keeps a note open while asking about it.
    tmux.keys(&["C-p"]);
    tmux.wait_text("Open note");
    tmux.type_text("Plan");
    tmux.wait_for("Plan.md selected", |s| {
        s.lines().any(|l| l.contains('▌') && l.contains("Plan.md"))
    });
    tmux.keys(&["Enter"]);
    tmux.wait_text("╭ Plan.md");
    tmux.keys(&["M-2"]);

    let started = Instant::now();
    let mut samples = Vec::new();
    let mut text_bytes = 0;
    for n in 1..=turns {
        text_bytes += turn(&tmux, n);
        if CHECKPOINTS.contains(&n) || n == turns {
            let key_ms = key_to_frame_ms(&tmux, n);
            let sample = Sample {
                turn: n,
                rss_mb: rss_mb(pid),
                db_bytes: db_bytes(&data),
                text_bytes,
                history_bytes: fake.requests().last().map_or(0, |r| r.raw_body.len()),
                key_ms,
            };
            eprintln!(
                "turn {:>4}: RSS {:7.1} MB, database {:9} B, key-to-frame p50 {:5.1} ms p95 {:5.1} ms ({:.0} s)",
                sample.turn,
                sample.rss_mb,
                sample.db_bytes,
                percentile(&sample.key_ms, 50.0),
                percentile(&sample.key_ms, 95.0),
                started.elapsed().as_secs_f64()
            );
            samples.push(sample);
        }
    }
    // Every approved edit reached the note (through the open buffer and its autosave).
    let edits = turns / 10 * 10;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let plan = std::fs::read_to_string(vault.join("Plan.md")).unwrap();
        if plan.contains(&format!("count: {edits}")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the edits were not all written: {plan}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.keys(&["C-q"]);

    let first = &samples[0];
    let last = samples.last().unwrap();
    let middle = samples.iter().find(|s| s.turn == 100).unwrap_or(first);
    let mut broken = Vec::new();
    let text_mb = (last.text_bytes - middle.text_bytes) as f64 / 1_048_576.0;
    let history_mb = last.history_bytes.saturating_sub(middle.history_bytes) as f64 / 1_048_576.0;
    let memory_bound = MEMORY_FACTOR * history_mb + MEMORY_SLACK_MB;
    let memory_growth = last.rss_mb - middle.rss_mb;
    if memory_growth > memory_bound {
        broken.push(format!(
            "RSS grew {memory_growth:.1} MB from turn {} to {}; the bound is {memory_bound:.1} MB",
            middle.turn, last.turn
        ));
    }
    let rate = |a: &Sample, b: &Sample| {
        (b.db_bytes.saturating_sub(a.db_bytes)) as f64 / (b.turn - a.turn).max(1) as f64
    };
    let early_rate = rate(first, middle);
    let late_rate = rate(middle, last);
    if middle.turn != first.turn && late_rate > DB_RATE_FACTOR * early_rate.max(1.0) {
        broken.push(format!(
            "the database grew {late_rate:.0} B/turn late against {early_rate:.0} early"
        ));
    }
    let p95_first = percentile(&first.key_ms, 95.0);
    let p95_last = percentile(&last.key_ms, 95.0);
    if p95_last > FRAME_GROWTH * p95_first + 10.0 {
        broken.push(format!(
            "key-to-frame p95 {p95_last:.1} ms at turn {} against {p95_first:.1} ms at turn 1",
            last.turn
        ));
    }
    println!("| turn | RSS MB | database bytes | key-to-frame p50 ms | p95 ms |");
    println!("|---:|---:|---:|---:|---:|");
    for s in &samples {
        println!(
            "| {} | {:.1} | {} | {:.1} | {:.1} |",
            s.turn,
            s.rss_mb,
            s.db_bytes,
            percentile(&s.key_ms, 50.0),
            percentile(&s.key_ms, 95.0)
        );
    }
    println!(
        "memory growth {memory_growth:.1} MB (bound {memory_bound:.1} MB for {history_mb:.2} MB more \
         history, {text_mb:.2} MB of it typed and replied); database {early_rate:.0} → \
         {late_rate:.0} B/turn; {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
    let out = json!({
        "turns": turns,
        "samples": samples.iter().map(|s| json!({
            "turn": s.turn, "rss_mb": s.rss_mb, "db_bytes": s.db_bytes,
            "text_bytes": s.text_bytes, "history_bytes": s.history_bytes,
            "key_to_frame_ms_p50": percentile(&s.key_ms, 50.0),
            "key_to_frame_ms_p95": percentile(&s.key_ms, 95.0),
        })).collect::<Vec<_>>(),
        "memory_growth_mb": memory_growth,
        "memory_bound_mb": memory_bound,
        "db_bytes_per_turn": [early_rate, late_rate],
        "broken": broken,
    });
    let dir = common::repo().join("bench-results");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("soak.json"),
        serde_json::to_string_pretty(&out).unwrap(),
    )
    .unwrap();
    if !broken.is_empty() {
        for b in &broken {
            eprintln!("BOUND BROKEN: {b}");
        }
        std::process::exit(1);
    }
}
