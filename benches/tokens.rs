//! Token estimator benchmark and accuracy report: `cargo bench --bench tokens`.
//!
//! 1. Accuracy: every comparison of `llm::tokens::accuracy` (recorded streams against their
//!    reported or streamed token counts, notes against whole-note tokenizer counts), each
//!    fixture on a line and the error distribution (min / median / p90 / max) per estimator and
//!    reference. Exits 1 when an OpenAI-family estimate is off by more than 15%, as the unit test
//!    `estimates_stay_within_fifteen_percent` does.
//! 2. Speed: `estimate_request` on a 200 KB conversation (notes read by tools, replies, a
//!    system prompt and tool definitions) for an OpenAI model (first call with the encoder load,
//!    then new text every run, then the same conversation again, as before each request of a
//!    session) and for a model with the calibrated estimate. Best and median of 20 runs.
//!
//! Prints tables and writes `bench-results/tokens.json`. Plain `std::time::Instant`, no harness.

use serde_json::json;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};
use vaultchat::llm::tokens::accuracy::{Comparison, Distribution, compare_all};

#[path = "../tests/common/token_corpus.rs"]
mod token_corpus;
use vaultchat::llm::tokens::estimate_request;
use vaultchat::llm::{Block, Message, Request, ResultPart, Role, ToolDef};

const TARGET_BYTES: usize = 200 * 1024;
const RUNS: usize = 20;
const OPENAI_LIMIT: f64 = 15.0;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = match token_corpus::load(root) {
        Ok(corpus) => corpus,
        Err(e) => {
            eprintln!("accuracy: reading the corpus: {e}");
            std::process::exit(2);
        }
    };
    let comparisons = match compare_all(&corpus) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("accuracy: {e}");
            std::process::exit(2);
        }
    };
    let groups = accuracy_report(&comparisons);
    let speed = speed_report(&corpus.notes);
    let failed: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.estimator == "openai" && c.error_percent().abs() > OPENAI_LIMIT)
        .collect();
    let report =
        json!({ "accuracy": groups, "speed_ms": speed, "openai_over_limit": failed.len() });
    write_report(root, &report);
    if !failed.is_empty() {
        for c in failed {
            eprintln!(
                "over ±{OPENAI_LIMIT}%: {} {:+.1}%",
                c.name,
                c.error_percent()
            );
        }
        std::process::exit(1);
    }
}

fn accuracy_report(comparisons: &[Comparison]) -> serde_json::Value {
    println!("recorded streams");
    for c in comparisons
        .iter()
        .filter(|c| c.name.ends_with(".sse") || c.name.contains(".sse "))
    {
        println!(
            "  {:<58} {:<10} est {:>4} vs {:>4} {:<17} {:+6.1}%",
            c.name,
            c.estimator,
            c.estimated,
            c.reference,
            c.reference_kind,
            c.error_percent()
        );
    }
    println!("\nerror distribution, % (signed min/max; median, p90 and max of |error|)");
    println!(
        "  {:<11} {:<18} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "estimator", "reference", "n", "min", "median", "p90", "max", "max|e|"
    );
    let mut groups = Vec::new();
    let mut keys: Vec<(&str, &str)> = comparisons
        .iter()
        .map(|c| (c.estimator, c.reference_kind))
        .collect();
    keys.dedup();
    keys.sort();
    keys.dedup();
    for (estimator, reference) in keys {
        let members = comparisons
            .iter()
            .filter(|c| c.estimator == estimator && c.reference_kind == reference);
        let Some(d) = Distribution::of(members) else {
            continue;
        };
        println!(
            "  {:<11} {:<18} {:>5} {:>+7.1} {:>7.1} {:>7.1} {:>+7.1} {:>7.1}",
            estimator, reference, d.count, d.min, d.median_abs, d.p90_abs, d.max, d.max_abs
        );
        groups.push(json!({
            "estimator": estimator, "reference": reference, "n": d.count, "min": d.min,
            "median_abs": d.median_abs, "p90_abs": d.p90_abs, "max": d.max, "max_abs": d.max_abs,
        }));
    }
    json!(groups)
}

/// A conversation of about [`TARGET_BYTES`]: each turn a question, a tool call reading a note,
/// its result, and a reply quoting it. The notes repeat to fill it, each text marked with `salt`
/// and its turn, so every text is new (nothing remembered) unless `salt` is the same as before.
fn conversation(model: &str, notes: &[(String, String)], salt: usize) -> Request {
    let mut messages = Vec::new();
    let mut bytes = 0;
    for (turn, (path, text)) in notes.iter().cycle().enumerate() {
        if bytes >= TARGET_BYTES {
            break;
        }
        let id = format!("call_{salt}_{turn}");
        let question = format!("({salt}.{turn}) What does {path} say about the plan?");
        // The first third of the note, cut at a character boundary.
        let third = (0..=text.len() / 3)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        let reply = format!("({salt}.{turn}) {}", &text[..third]);
        bytes += question.len() + text.len() + reply.len();
        messages.push(Message {
            role: Role::User,
            content: vec![Block::Text { text: question }],
        });
        messages.push(Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: id.clone(),
                name: "read_note".into(),
                input: json!({ "path": path }),
            }],
        });
        messages.push(Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: id,
                content: vec![ResultPart::Text {
                    text: format!("({salt}.{turn}) {text}"),
                }],
                is_error: false,
            }],
        });
        messages.push(Message {
            role: Role::Assistant,
            content: vec![Block::Text { text: reply }],
        });
    }
    let tools = (0..12)
        .map(|i| ToolDef {
            name: format!("tool_{i}"),
            description: "Read a note of the vault by its path and return its text.".into(),
            input_schema: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The note's path in the vault"},
                "limit": {"type": "integer", "description": "At most this many lines"}
            }, "required": ["path"]}),
        })
        .collect();
    Request {
        model: model.into(),
        max_tokens: 4096,
        system: "You are vaultchat, an assistant beside a folder of Markdown notes. ".repeat(20),
        tools,
        messages,
    }
}

/// The text of the conversation (questions, notes read, replies, system prompt), and the same
/// messages as JSON.
fn request_bytes(request: &Request) -> (usize, usize) {
    let mut text = request.system.len();
    let mut json = request.system.len();
    for message in &request.messages {
        json += serde_json::to_string(&message.content).map_or(0, |s| s.len());
        for block in &message.content {
            text += match block {
                Block::Text { text } | Block::Thinking { text, .. } => text.len(),
                Block::RedactedThinking { data } => data.len(),
                Block::ToolResult { content, .. } => content
                    .iter()
                    .map(|part| match part {
                        ResultPart::Text { text } => text.len(),
                        ResultPart::Image { .. } => 0,
                    })
                    .sum(),
                Block::ToolUse { .. } | Block::Image { .. } => 0,
            };
        }
    }
    (text, json)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Best and median of [`RUNS`] estimates of the requests `make` builds (outside the timing).
fn time_runs(mut make: impl FnMut(usize) -> Request) -> (f64, f64, u64) {
    let mut times = Vec::new();
    let mut tokens = 0;
    for run in 0..RUNS {
        let request = make(run);
        let start = Instant::now();
        tokens = black_box(estimate_request(black_box(&request)));
        times.push(start.elapsed());
    }
    times.sort();
    (ms(times[0]), ms(times[RUNS / 2]), tokens)
}

fn speed_report(notes: &[(String, String)]) -> serde_json::Value {
    let first = conversation("gpt-4o", notes, 1_000_000);
    let (text_bytes, json_bytes) = request_bytes(&first);
    println!(
        "\nestimate_request on a conversation of {:.0} KB of text ({:.0} KB as JSON, {} messages), {RUNS} runs",
        text_bytes as f64 / 1024.0,
        json_bytes as f64 / 1024.0,
        first.messages.len()
    );
    let start = Instant::now();
    let tokens = black_box(estimate_request(&first));
    let cold = ms(start.elapsed());
    println!("  gpt-4o, first call (loads o200k_base)   {cold:8.2} ms  {tokens} tokens");
    let (best_new, median_new, _) = time_runs(|run| conversation("gpt-4o", notes, run));
    println!(
        "  gpt-4o, all text new                    {best_new:8.2} ms best, {median_new:.2} median"
    );
    let same = conversation("gpt-4o", notes, 0);
    let (best_same, median_same, _) = time_runs(|_| same.clone());
    println!(
        "  gpt-4o, same conversation again         {best_same:8.2} ms best, {median_same:.2} median"
    );
    let (best_cal, median_cal, cal_tokens) =
        time_runs(|run| conversation("claude-sonnet-4-5", notes, run));
    println!(
        "  claude-sonnet-4-5 (calibrated)          {best_cal:8.2} ms best, {median_cal:.2} median  {cal_tokens} tokens"
    );
    json!({
        "text_bytes": text_bytes,
        "json_bytes": json_bytes,
        "openai_first_call_with_load": cold,
        "openai_new_text": {"best": best_new, "median": median_new},
        "openai_same_conversation": {"best": best_same, "median": median_same},
        "calibrated": {"best": best_cal, "median": median_cal},
    })
}

fn write_report(root: &Path, report: &serde_json::Value) {
    let dir = root.join("bench-results");
    let path = dir.join("tokens.json");
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
        std::fs::write(&path, text + "\n")
    });
    match written {
        Ok(()) => println!("\nwrote {}", path.display()),
        Err(e) => eprintln!("\ncould not write {}: {e}", path.display()),
    }
}
