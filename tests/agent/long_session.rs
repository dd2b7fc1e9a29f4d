//! Long sessions end to end (docs/architecture.md, "Long sessions"): fifteen `vaultchat ask
//! --continue` turns, each reading a 24,000-character note, against a local server with a
//! 16,000-token window that refuses larger requests with its provider's real overflow error, in
//! both wire formats. The server counts tokens by its own rule (3.5 bytes of request body a
//! token), not by vaultchat's estimator.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{
    Chunking, FakeLlm, FakeUsage, Recorded, Reply, anthropic_text, anthropic_tool_calls,
    openai_text, openai_tool_calls,
};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The server's context window, in its own tokens.
const WINDOW: u64 = 16_000;
const TURNS: usize = 15;
const NOTE_CHARS: usize = 24_000;
/// What a shortened tool result says (src/agent/compact/plan.rs).
const SHORTENED_MARK: &str = "shortened when the conversation was compacted";

#[derive(Debug, Clone, Copy, PartialEq)]
enum P {
    Anthropic,
    OpenAi,
}

/// The server's token count of a request: 3.5 bytes of body a token.
fn server_tokens(req: &Recorded) -> u64 {
    (req.raw_body.len() as u64 * 2).div_ceil(7)
}

/// A summary request offers no tools.
fn is_summary_request(req: &Recorded) -> bool {
    req.body["tools"].as_array().is_none_or(|t| t.is_empty())
}

/// The last message holds a tool result (the model read the note).
fn after_tool_result(p: P, req: &Recorded) -> bool {
    let last = req.body["messages"].as_array().and_then(|m| m.last());
    let Some(last) = last else { return false };
    match p {
        P::Anthropic => last["content"]
            .as_array()
            .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result")),
        P::OpenAi => last["role"] == "tool",
    }
}

fn overflow_error(p: P, tokens: u64) -> Reply {
    let body = match p {
        P::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": format!("prompt is too long: {tokens} tokens > {WINDOW} maximum")},
            "request_id": "req_fake_overflow"}),
        P::OpenAi => json!({"error": {"message": format!(
            "This model's maximum context length is {WINDOW} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
    };
    Reply::Status {
        status: 400,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.to_string(),
    }
}

/// The server: refuses requests over the window; summarises when offered no tools; otherwise
/// reads the note, then answers.
fn responder(
    p: P,
    summaries: Arc<AtomicUsize>,
    answers: Arc<AtomicUsize>,
) -> common::fake_llm::Responder {
    Arc::new(move |req: &Recorded| {
        let tokens = server_tokens(req);
        if tokens > WINDOW {
            return overflow_error(p, tokens);
        }
        let usage = FakeUsage {
            input: tokens,
            output: 20,
            cache_read: 0,
            cache_write: 0,
        };
        let body = if is_summary_request(req) {
            let n = summaries.fetch_add(1, Ordering::SeqCst) + 1;
            let text = format!(
                "SUMMARY-{n}: the person asked about Big.md again and again; it is a long note about the garden."
            );
            match p {
                P::Anthropic => anthropic_text(&text, usage),
                P::OpenAi => openai_text(&text, usage),
            }
        } else if after_tool_result(p, req) {
            let n = answers.fetch_add(1, Ordering::SeqCst);
            let text = format!("Answer {n}.");
            match p {
                P::Anthropic => anthropic_text(&text, usage),
                P::OpenAi => openai_text(&text, usage),
            }
        } else {
            let id = format!("call_{}", answers.load(Ordering::SeqCst));
            let call = [(
                id.as_str(),
                "read_note",
                json!({"note": "Big.md", "max_chars": NOTE_CHARS}),
            )];
            match p {
                P::Anthropic => anthropic_tool_calls(None, &call, usage),
                P::OpenAi => openai_tool_calls(None, &call, usage),
            }
        };
        Reply::Sse {
            body,
            chunking: Chunking::Fixed(64),
        }
    })
}

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

/// A note of exactly `NOTE_CHARS` characters of varied prose.
fn big_note() -> String {
    let mut text = String::from("# Big\n\n");
    let mut line = 0;
    while text.len() < NOTE_CHARS {
        text.push_str(&format!(
            "Line {line}: the \"garden\" plan says tomatoes in bed {}, beans along the fence, water at {} o'clock.\n",
            line % 7,
            line % 12
        ));
        line += 1;
    }
    text.truncate(NOTE_CHARS);
    text
}

fn setup(auto_compact: bool) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join(".obsidian")).unwrap();
    std::fs::write(vault.join("Big.md"), big_note()).unwrap();
    let data = tmp.path().join("data");
    let config = tmp.path().join("config.toml");
    // `tool_set = "core"`: at 16k tokens the whole tool list would be swapped for the core set
    // anyway; pinned, the requests these figures are about do not change size whenever a tool
    // is added to the workspace.
    std::fs::write(
        &config,
        format!(
            "[provider]\nidle_timeout_secs = 5\nconnect_timeout_secs = 2\nmax_retries = 0\ncontext_window = {WINDOW}\ntool_set = \"core\"\n\
             [context]\nauto_compact = {auto_compact}\n"
        ),
    )
    .unwrap();
    Setup {
        _tmp: tmp,
        vault,
        data,
        config,
    }
}

fn ask(s: &Setup, fake: &FakeLlm, p: P, args: &[&str]) -> Output {
    let mut c = common::cmd(&s.data, &s.vault);
    c.arg("--config").arg(&s.config);
    match p {
        P::Anthropic => c
            .args(["--provider", "anthropic", "--base-url", &fake.base_url])
            .env("ANTHROPIC_API_KEY", "sk-ant-test"),
        P::OpenAi => c
            .args(["--provider", "openai", "--base-url", &fake.openai_base()])
            .env("OPENAI_API_KEY", "sk-openai-test"),
    };
    c.arg("ask").args(args).output().unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every `cache_control` key removed (Anthropic's moving breakpoint).
fn without_cache_control(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), without_cache_control(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_cache_control).collect()),
        other => other.clone(),
    }
}

/// Whether `b`'s messages begin with all of `a`'s (breakpoints aside).
fn extends(a: &Recorded, b: &Recorded) -> bool {
    let am = without_cache_control(&a.body["messages"]);
    let bm = without_cache_control(&b.body["messages"]);
    let (am, bm) = (am.as_array().unwrap(), bm.as_array().unwrap());
    bm.len() > am.len() && bm[..am.len()] == am[..]
}

/// What one run of the fifteen turns measured.
#[derive(Debug)]
struct Figures {
    /// The largest request sent (tokens by the server's rule, bytes of body).
    largest_sent: (u64, usize),
    /// The largest request the server accepted.
    largest_accepted: (u64, usize),
    /// Compactions by reason.
    reasons: std::collections::BTreeMap<String, usize>,
    summary_requests: usize,
    overflow_errors: usize,
    compactions: usize,
    prefix_changes: usize,
}

fn run_long_session(p: P, auto_compact: bool) -> Figures {
    let s = setup(auto_compact);
    let summaries = Arc::new(AtomicUsize::new(0));
    let answers = Arc::new(AtomicUsize::new(0));
    let fake = FakeLlm::start_responding(responder(p, summaries.clone(), answers.clone()));
    let mut compactions = 0;
    let mut reasons = std::collections::BTreeMap::new();
    let mut session = String::new();
    for turn in 0..TURNS {
        let prompt = format!("Turn {turn}: read Big.md and tell me what it says.");
        let mut args = vec![prompt.as_str(), "--json"];
        if turn > 0 {
            args.push("--continue");
        }
        let out = ask(&s, &fake, p, &args);
        assert!(
            out.status.success(),
            "{p:?} turn {turn}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        assert_eq!(v["stop_reason"], "end_turn", "{p:?} turn {turn}: {v}");
        assert!(
            v["reply"].as_str().unwrap().starts_with("Answer "),
            "{p:?} turn {turn} answers: {v}"
        );
        let id = v["session_id"].as_str().unwrap().to_string();
        if turn == 0 {
            session = id;
        } else {
            assert_eq!(id, session, "--continue resumes the same session");
        }
        for c in v["compactions"].as_array().into_iter().flatten() {
            compactions += 1;
            let kind = if c["summary"].is_string() {
                "summary"
            } else {
                "shortened"
            };
            *reasons
                .entry(format!("{}/{kind}", c["reason"].as_str().unwrap()))
                .or_insert(0) += 1;
        }
    }
    let requests = fake.requests();
    let overflowed = |r: &Recorded| server_tokens(r) > WINDOW;
    let overflow_errors = requests.iter().filter(|r| overflowed(r)).count();
    // At most one overflow error per compaction: an overflow is always followed by a compaction
    // and a request that fits, never by a second overflow.
    for pair in requests.windows(2) {
        assert!(
            !(overflowed(&pair[0]) && overflowed(&pair[1])),
            "{p:?}: two overflow errors in a row"
        );
    }
    assert!(
        overflow_errors <= compactions,
        "{p:?}: {overflow_errors} overflow errors for {compactions} compactions"
    );
    // Every turn answered from the note.
    let main: Vec<&Recorded> = requests.iter().filter(|r| !is_summary_request(r)).collect();
    let summary_requests = requests.len() - main.len();
    assert!(
        summary_requests > 0,
        "{p:?}: fifteen big turns were never summarised"
    );
    // The summary text is in every request after the first summary, up to date.
    let mut latest_summary: Option<String> = None;
    let mut seen = 0;
    for req in &requests {
        if is_summary_request(req) {
            seen += 1;
            latest_summary = Some(format!("SUMMARY-{seen}:"));
            continue;
        }
        if let Some(summary) = &latest_summary {
            assert!(
                req.raw_body.contains(summary.as_str()),
                "{p:?}: a request after {summary} does not carry it"
            );
        }
    }
    // The prefix: system prompt and tools never change; the messages change only at a
    // compaction (a summary request between two requests, or more results shortened).
    let mut prefix_changes = 0;
    for (i, pair) in main.windows(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        assert_eq!(a.body["tools"], b.body["tools"], "{p:?}: tools changed");
        assert_eq!(
            without_cache_control(&a.body["system"]),
            without_cache_control(&b.body["system"]),
            "{p:?}: system changed"
        );
        if extends(a, b) {
            continue;
        }
        prefix_changes += 1;
        let (ai, bi) = (
            requests.iter().position(|r| std::ptr::eq(r, a)).unwrap(),
            requests.iter().position(|r| std::ptr::eq(r, b)).unwrap(),
        );
        let summarised_between = requests[ai..bi].iter().any(is_summary_request);
        let shortened_more =
            b.raw_body.matches(SHORTENED_MARK).count() > a.raw_body.matches(SHORTENED_MARK).count();
        assert!(
            summarised_between || shortened_more,
            "{p:?}: main requests {i} and {} differ in their prefix without a compaction",
            i + 1
        );
    }
    assert!(
        prefix_changes <= compactions,
        "{p:?}: {prefix_changes} prefix changes for {compactions} compactions"
    );
    let size = |r: &Recorded| (server_tokens(r), r.raw_body.len());
    let largest_sent = requests.iter().map(size).max().unwrap();
    let largest_accepted = requests
        .iter()
        .filter(|r| !overflowed(r))
        .map(size)
        .max()
        .unwrap();
    // The stored session resumes from the summary: sessions show keeps every message.
    let shown: Value = serde_json::from_str(&common::ok(
        &s.data,
        &s.vault,
        &["sessions", "show", &session, "--json"],
    ))
    .unwrap();
    assert_eq!(
        shown["messages"].as_array().unwrap().len(),
        TURNS * 4,
        "{p:?}: the stored session keeps every message"
    );
    Figures {
        largest_sent,
        largest_accepted,
        reasons,
        summary_requests,
        overflow_errors,
        compactions,
        prefix_changes,
    }
}

/// Fifteen `ask --continue` turns reading a 24,000-character note against a 16k window: every
/// turn answers, compaction keeps every request under the window (at most one overflow per
/// compaction), and later requests carry the summary.
#[test]
fn fifteen_big_turns_fit_a_small_window_in_both_wire_formats() {
    for p in [P::Anthropic, P::OpenAi] {
        let figures = run_long_session(p, true);
        println!("long session {p:?}: {figures:?}");
        assert!(figures.largest_accepted.0 <= WINDOW, "{p:?}: {figures:?}");
        assert!(
            figures.summary_requests > 0 && figures.compactions > 0,
            "{figures:?}"
        );
        assert!(
            figures.largest_sent.0 <= WINDOW * 85 / 100,
            "{p:?}: the threshold (80%) holds by the server's count, within the estimate's error: {figures:?}"
        );
    }
}

/// With `auto_compact = false` only the provider's overflow error compacts: each overflow is
/// answered by one compaction and one retry that fits, and every turn still answers.
#[test]
fn overflow_errors_compact_once_and_retry_in_both_wire_formats() {
    for p in [P::Anthropic, P::OpenAi] {
        let figures = run_long_session(p, false);
        println!("long session without auto-compaction {p:?}: {figures:?}");
        assert!(figures.overflow_errors > 0, "{p:?}: {figures:?}");
        assert_eq!(
            figures.prefix_changes, figures.compactions,
            "{p:?}: {figures:?}"
        );
        assert_eq!(
            figures
                .reasons
                .get("overflow/summary")
                .copied()
                .unwrap_or(0),
            figures.overflow_errors,
            "{p:?}: one summary per overflow error: {figures:?}"
        );
    }
}

/// `ask --continue-new`: a new session, linked to the latest one, whose first request carries the
/// summary of it (made by one summary request), and which `sessions` lists with its parent.
#[test]
fn continue_new_starts_a_linked_session_from_the_summary() {
    for p in [P::Anthropic, P::OpenAi] {
        let s = setup(true);
        let summaries = Arc::new(AtomicUsize::new(0));
        let answers = Arc::new(AtomicUsize::new(0));
        let fake = FakeLlm::start_responding(responder(p, summaries.clone(), answers.clone()));
        let first = json_of(&ask(&s, &fake, p, &["What is in Big.md?", "--json"]));
        let parent = first["session_id"].as_str().unwrap().to_string();
        let before = fake.requests().len();
        let out = ask(&s, &fake, p, &["And now?", "--json", "--continue-new"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        let child = v["session_id"].as_str().unwrap().to_string();
        assert_ne!(child, parent, "{p:?}: a new session");
        assert!(v["reply"].as_str().unwrap().starts_with("Answer "), "{v}");
        assert_eq!(v["compactions"][0]["reason"], "continue_new", "{v}");
        let requests = &fake.requests()[before..];
        assert!(
            is_summary_request(&requests[0]),
            "{p:?}: the parent is summarised first"
        );
        assert!(
            requests[0].raw_body.contains("What is in Big.md?"),
            "{p:?}: the summary request holds the parent's conversation"
        );
        for req in &requests[1..] {
            assert!(
                req.raw_body.contains("SUMMARY-1:"),
                "{p:?}: the summary seeds the new session"
            );
            assert!(
                !req.raw_body.contains("What is in Big.md?"),
                "{p:?}: the parent's messages themselves are not sent"
            );
        }
        let listed: Value =
            serde_json::from_str(&common::ok(&s.data, &s.vault, &["sessions", "--json"])).unwrap();
        let row = listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == child.as_str())
            .unwrap()
            .clone();
        assert_eq!(row["parent_id"], parent.as_str(), "{listed}");
        // The summary request is counted with the new session: summary, read, answer.
        assert_eq!(row["usage"]["responses"], 3, "{listed}");
        let text = common::ok(&s.data, &s.vault, &["sessions"]);
        assert!(text.contains(&format!("(continues {parent})")), "{text}");
        // --continue now resumes the new session, from its summary.
        let again = json_of(&ask(&s, &fake, p, &["Once more", "--json", "--continue"]));
        assert_eq!(again["session_id"], child.as_str());
        let last = fake.requests().last().unwrap().clone();
        assert!(last.raw_body.contains("SUMMARY-1:"));
    }
}

/// Anthropic's `model_context_window_exceeded` stop reason is treated like the overflow error:
/// one compaction, then the request again, and the turn answers.
#[test]
fn a_response_stopped_at_the_window_compacts_and_asks_again() {
    let s = setup(true);
    let usage = FakeUsage {
        input: 100,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    };
    let sse = |body: Vec<u8>| Reply::Sse {
        body,
        chunking: Chunking::Fixed(32),
    };
    let stopped = String::from_utf8(anthropic_text("Partial", usage))
        .unwrap()
        .replace("\"end_turn\"", "\"model_context_window_exceeded\"");
    let fake = FakeLlm::start(vec![
        sse(anthropic_text("First answer.", usage)),
        sse(stopped.into_bytes()),
        sse(anthropic_text("SUMMARY-1: one question so far.", usage)),
        sse(anthropic_text("Second answer.", usage)),
    ]);
    let first = json_of(&ask(&s, &fake, P::Anthropic, &["First?", "--json"]));
    assert_eq!(first["reply"], "First answer.");
    let out = ask(
        &s,
        &fake,
        P::Anthropic,
        &["Second?", "--json", "--continue"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_eq!(v["reply"], "Second answer.", "{v}");
    assert_eq!(v["compactions"][0]["reason"], "overflow", "{v}");
    let requests = fake.requests();
    assert_eq!(requests.len(), 4);
    assert!(is_summary_request(&requests[2]));
    assert!(requests[3].raw_body.contains("SUMMARY-1:"));
    assert!(
        !requests[3].raw_body.contains("First?"),
        "the first turn is summarised"
    );
}

/// A response that stops at the window again right after the compaction it caused ends the turn
/// saying so: one compaction per overflow, not one per response until `max_steps`.
#[test]
fn a_second_stop_at_the_window_after_compacting_ends_the_turn() {
    let s = setup(true);
    let usage = FakeUsage {
        input: 100,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    };
    let sse = |body: Vec<u8>| Reply::Sse {
        body,
        chunking: Chunking::Fixed(32),
    };
    let stopped = |text: &str| {
        String::from_utf8(anthropic_text(text, usage))
            .unwrap()
            .replace("\"end_turn\"", "\"model_context_window_exceeded\"")
            .into_bytes()
    };
    let fake = FakeLlm::start(vec![
        sse(anthropic_text("First answer.", usage)),
        sse(stopped("Partial")),
        sse(anthropic_text("SUMMARY-1: one question so far.", usage)),
        sse(stopped("Partial again")),
        sse(anthropic_text("SUMMARY-2: still one question.", usage)),
        sse(anthropic_text(
            "An answer after a second compaction.",
            usage,
        )),
    ]);
    let first = json_of(&ask(&s, &fake, P::Anthropic, &["First?", "--json"]));
    assert_eq!(first["reply"], "First answer.");
    let out = ask(
        &s,
        &fake,
        P::Anthropic,
        &["Second?", "--json", "--continue"],
    );
    let v = json_of(&out);
    assert_eq!(v["stop_reason"], "context_window_exceeded", "{v}");
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("still does not fit after compacting")),
        "{v}"
    );
    assert_eq!(
        v["compactions"].as_array().map(Vec::len),
        Some(1),
        "one compaction for the overflow: {v}"
    );
    assert_eq!(fake.requests().len(), 4, "no second summary request");
}
