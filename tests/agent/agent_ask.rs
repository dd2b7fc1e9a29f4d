//! `vaultchat ask` end to end: the real binary as a child process against a local HTTP server that
//! speaks each provider's exact streaming wire format, with bytes split at odd boundaries.
//!
//! Every scenario runs for both providers and asserts what the client sent (tool_result ids,
//! cache breakpoints, headers, images) as well as what it did (the vault, byte for byte).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{
    Chunking, FakeLlm, FakeUsage, Recorded, Reply, anthropic_error, anthropic_text,
    anthropic_tool_calls, fixture, openai_error, openai_text, openai_tool_calls, to_crlf,
    with_comments,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

#[derive(Debug, Clone, Copy, PartialEq)]
enum P {
    Anthropic,
    OpenAi,
}

const BOTH: [P; 2] = [P::Anthropic, P::OpenAi];

impl P {
    /// The `--provider` value.
    fn name(self) -> &'static str {
        match self {
            P::Anthropic => "anthropic",
            P::OpenAi => "openai",
        }
    }
}

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

const PLAN: &str =
    "---\ntags: [project]\n---\n# Garden plan\n\nPlant tomatoes in May.\n\nWater them daily.\n";
const INBOX: &str = "# Inbox\n\nCall Anna about the garden.\n";

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::create_dir_all(vault.join(".obsidian")).unwrap();
    std::fs::write(vault.join("Projects/Plan.md"), PLAN).unwrap();
    std::fs::write(vault.join("Inbox.md"), INBOX).unwrap();
    std::fs::write(vault.join(".obsidian/app.json"), "{}").unwrap();
    std::fs::write(tmp.path().join("outside.md"), "secret outside\n").unwrap();
    let data = tmp.path().join("data");
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        "[provider]\nidle_timeout_secs = 2\nconnect_timeout_secs = 2\n",
    )
    .unwrap();
    Setup {
        _tmp: tmp,
        vault,
        data,
        config,
    }
}

/// Every file of the vault (including dot-folders and .trash) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    out
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

fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> FakeUsage {
    FakeUsage {
        input,
        output,
        cache_read,
        cache_write,
    }
}

fn text_reply(p: P, text: &str, u: FakeUsage, chunking: Chunking) -> Reply {
    let body = match p {
        P::Anthropic => anthropic_text(text, u),
        P::OpenAi => openai_text(text, u),
    };
    Reply::Sse { body, chunking }
}

fn tool_reply(p: P, calls: &[(&str, &str, Value)], u: FakeUsage, chunking: Chunking) -> Reply {
    let body = match p {
        P::Anthropic => anthropic_tool_calls(Some("Let me look."), calls, u),
        P::OpenAi => openai_tool_calls(None, calls, u),
    };
    Reply::Sse { body, chunking }
}

fn error_reply(p: P, status: u16, kind: &str, message: &str, retry_after: Option<&str>) -> Reply {
    match p {
        P::Anthropic => anthropic_error(status, kind, message, retry_after),
        P::OpenAi => openai_error(status, kind, message, retry_after),
    }
}

/// The tool results the client sent back in a request, as (id, is_error, text).
fn tool_results(p: P, req: &Recorded) -> Vec<(String, bool, String)> {
    let messages = req.body["messages"].as_array().unwrap();
    match p {
        P::Anthropic => {
            let last = messages.last().unwrap();
            assert_eq!(last["role"], "user");
            last["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| {
                    let text = match &b["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join(""),
                        _ => String::new(),
                    };
                    (
                        b["tool_use_id"].as_str().unwrap().to_string(),
                        b["is_error"].as_bool().unwrap_or(false),
                        text,
                    )
                })
                .collect()
        }
        P::OpenAi => messages
            .iter()
            .rev()
            .take_while(|m| m["role"] == "tool")
            .map(|m| {
                let text = m["content"].as_str().unwrap_or_default().to_string();
                let is_error = text.starts_with("Error: ");
                (
                    m["tool_call_id"].as_str().unwrap().to_string(),
                    is_error,
                    text,
                )
            })
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect(),
    }
}

fn tool_names(p: P, req: &Recorded) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| match p {
                    P::Anthropic => t["name"].as_str().unwrap().to_string(),
                    P::OpenAi => t["function"]["name"].as_str().unwrap().to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn assert_auth(p: P, req: &Recorded) {
    match p {
        P::Anthropic => {
            assert_eq!(req.path, "/v1/messages");
            assert_eq!(req.headers["x-api-key"], "sk-ant-test");
            assert_eq!(req.headers["anthropic-version"], "2023-06-01");
            assert_eq!(req.body["stream"], true);
            assert!(req.body["max_tokens"].as_u64().unwrap() > 0);
        }
        P::OpenAi => {
            assert_eq!(req.path, "/v1/chat/completions");
            assert_eq!(req.headers["authorization"], "Bearer sk-openai-test");
            assert_eq!(req.body["stream"], true);
            assert_eq!(req.body["stream_options"]["include_usage"], true);
        }
    }
    assert!(req.headers["content-type"].starts_with("application/json"));
}

/// Remove every `cache_control` key (the moving breakpoint) from a JSON value.
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

/// Every request's messages begin with the previous request's messages (breakpoints aside), and
/// its tools and system prompt are byte-identical.
fn assert_prefix_property(requests: &[Recorded]) {
    for pair in requests.windows(2) {
        let (a, b) = (&pair[0].body, &pair[1].body);
        assert_eq!(
            serde_json::to_string(&a["tools"]).unwrap(),
            serde_json::to_string(&b["tools"]).unwrap(),
            "tools changed between requests"
        );
        assert_eq!(
            serde_json::to_string(&a["system"]).unwrap(),
            serde_json::to_string(&b["system"]).unwrap(),
            "system changed between requests"
        );
        let am = without_cache_control(&a["messages"]);
        let bm = without_cache_control(&b["messages"]);
        let (am, bm) = (am.as_array().unwrap(), bm.as_array().unwrap());
        assert!(bm.len() > am.len(), "the conversation did not grow");
        assert_eq!(&bm[..am.len()], &am[..], "an earlier message changed");
    }
}

/// Anthropic: breakpoints on the last tool, the system block and the last block of the last message.
fn assert_breakpoints(req: &Recorded) {
    let body = &req.body;
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.last().unwrap()["cache_control"]["type"], "ephemeral");
    assert!(
        tools[..tools.len() - 1]
            .iter()
            .all(|t| t.get("cache_control").is_none())
    );
    let system = body["system"].as_array().unwrap();
    assert_eq!(system.last().unwrap()["cache_control"]["type"], "ephemeral");
    let messages = body["messages"].as_array().unwrap();
    let last_block = messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last_block["cache_control"]["type"], "ephemeral");
    let marked = serde_json::to_string(&body["messages"])
        .unwrap()
        .matches("cache_control")
        .count();
    assert_eq!(marked, 1, "exactly one breakpoint in the messages");
}

fn sum_usage(us: &[FakeUsage]) -> Value {
    json!({
        "input_tokens": us.iter().map(|u| u.input).sum::<u64>(),
        "output_tokens": us.iter().map(|u| u.output).sum::<u64>(),
        "cache_read_input_tokens": us.iter().map(|u| u.cache_read).sum::<u64>(),
        "cache_creation_input_tokens": us.iter().map(|u| u.cache_write).sum::<u64>(),
        "estimated": false,
    })
}

/// search → read → update with approval, at several chunkings; the heart of the issue.
#[test]
fn search_read_update_with_approval() {
    let chunkings = [
        Chunking::Fixed(1),
        Chunking::Fixed(7),
        Chunking::Fixed(13),
        Chunking::Cycle(vec![3, 11, 1, 29]),
    ];
    for p in BOTH {
        for (n, chunking) in chunkings.iter().enumerate() {
            let s = setup();
            let usages = [
                usage(500, 20, 0, 1200),
                usage(30, 25, 1200, 0),
                usage(60, 40, 1200, 0),
                usage(90, 12, 1200, 0),
            ];
            let transform = |reply: Reply| match (n, reply) {
                // CRLF line ends and keep-alive comments on one variant.
                (3, Reply::Sse { body, chunking }) => Reply::Sse {
                    body: with_comments(&to_crlf(&body)),
                    chunking,
                },
                (_, r) => r,
            };
            let fake = FakeLlm::start(
                vec![
                    tool_reply(p, &[("call_1", "search_notes", json!({"query": "tomatoes"}))], usages[0], chunking.clone()),
                    tool_reply(p, &[("call_2", "read_note", json!({"note": "Projects/Plan.md"}))], usages[1], chunking.clone()),
                    tool_reply(
                        p,
                        &[("call_3", "update_note", json!({"note": "Projects/Plan.md", "replace_text": {"find": "Plant tomatoes in May.", "replace": "Plant tomatoes in late April."}}))],
                        usages[2],
                        chunking.clone(),
                    ),
                    text_reply(p, "Moved the planting to late April — 🍅 done.", usages[3], chunking.clone()),
                ]
                .into_iter()
                .map(transform)
                .collect(),
            );
            let out = ask(
                &s,
                &fake,
                p,
                &[
                    "When do I plant tomatoes? Make it late April.",
                    "--approve",
                    "all",
                    "--json",
                ],
            );
            assert!(
                out.status.success(),
                "{p:?}/{n}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v = json_of(&out);
            assert_eq!(
                v["reply"], "Moved the planting to late April — 🍅 done.",
                "{p:?}/{n}"
            );
            assert_eq!(v["stop_reason"], "end_turn");
            assert_eq!(v["steps"], 4);
            let calls = v["tool_calls"].as_array().unwrap();
            assert_eq!(calls.len(), 3);
            assert_eq!(calls[0]["name"], "search_notes");
            assert_eq!(calls[0]["decision"], "allowed");
            assert_eq!(calls[1]["decision"], "allowed");
            assert_eq!(calls[2]["decision"], "approved_once");
            assert!(calls.iter().all(|c| c["is_error"] == false), "{calls:?}");
            assert_eq!(
                v["edits"],
                json!([{"tool": "update_note", "path": "Projects/Plan.md", "status": "applied", "added": 1, "removed": 1}])
            );
            assert_eq!(v["usage"], sum_usage(&usages));
            let plan = std::fs::read_to_string(s.vault.join("Projects/Plan.md")).unwrap();
            assert_eq!(
                plan,
                PLAN.replace("Plant tomatoes in May.", "Plant tomatoes in late April.")
            );

            let reqs = fake.requests();
            assert_eq!(reqs.len(), 4);
            for r in &reqs {
                assert_auth(p, r);
            }
            // Each request answers the previous response's call, by id.
            for (i, id) in ["call_1", "call_2", "call_3"].iter().enumerate() {
                let results = tool_results(p, &reqs[i + 1]);
                assert_eq!(results.len(), 1);
                assert_eq!(results[0].0, *id);
                assert!(!results[0].1, "{:?}", results[0]);
            }
            assert!(
                tool_results(p, &reqs[1])[0].2.contains("Projects/Plan.md"),
                "search found the note"
            );
            assert!(
                tool_results(p, &reqs[2])[0].2.contains("Water them daily."),
                "read returned the text"
            );
            assert!(tool_results(p, &reqs[3])[0].2.contains("\"changed\":true"));
            assert_prefix_property(&reqs);
            if p == P::Anthropic {
                for r in &reqs {
                    assert_breakpoints(r);
                }
            }
            // The session and its usage were stored, and `usage --json` agrees.
            let u = common::ok(&s.data, &s.vault, &["usage", "--json"]);
            let u: Value = serde_json::from_str(&u).unwrap();
            assert_eq!(u["usage"], sum_usage(&usages));
        }
    }
}

#[test]
fn a_denied_write_leaves_the_vault_byte_identical() {
    for p in BOTH {
        let s = setup();
        let before = snapshot(&s.vault);
        let fake = FakeLlm::start(vec![
            tool_reply(
                p,
                // A whole-body replacement is only planned over a note read first.
                &[
                    ("call_r", "read_note", json!({"note": "Inbox.md"})),
                    (
                        "call_w",
                        "update_note",
                        json!({"note": "Inbox.md", "body": "wiped\n"}),
                    ),
                ],
                usage(10, 5, 0, 0),
                Chunking::Fixed(7),
            ),
            text_reply(
                p,
                "Understood, I left it.",
                usage(20, 5, 0, 0),
                Chunking::Fixed(7),
            ),
        ]);
        let out = ask(
            &s,
            &fake,
            p,
            &["Clear my inbox", "--approve", "none", "--json"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        assert_eq!(v["tool_calls"][1]["decision"], "denied");
        assert_eq!(v["tool_calls"][1]["is_error"], true);
        assert_eq!(v["edits"][0]["status"], "rejected");
        assert_eq!(snapshot(&s.vault), before);
        let results = tool_results(p, &fake.requests()[1]);
        assert_eq!(results[1].0, "call_w");
        assert!(results[1].2.contains("declined"), "{:?}", results[1]);
        // Without a terminal, --approve ask denies too.
        let fake = FakeLlm::start(vec![
            tool_reply(
                p,
                &[("call_w", "delete_note", json!({"note": "Inbox.md"}))],
                usage(10, 5, 0, 0),
                Chunking::Whole,
            ),
            text_reply(p, "ok", usage(20, 5, 0, 0), Chunking::Whole),
        ]);
        let out = ask(&s, &fake, p, &["Delete my inbox", "--json"]);
        assert!(out.status.success());
        assert_eq!(json_of(&out)["tool_calls"][0]["decision"], "denied");
        assert_eq!(snapshot(&s.vault), before);
    }
}

#[test]
fn path_escapes_are_refused_even_with_approve_all() {
    for p in BOTH {
        let s = setup();
        let before = snapshot(&s.vault);
        let outside = s.vault.parent().unwrap().join("outside.md");
        let fake = FakeLlm::start(vec![
            tool_reply(
                p,
                &[
                    (
                        "c1",
                        "update_note",
                        json!({"note": "../outside.md", "body": "pwned\n"}),
                    ),
                    (
                        "c2",
                        "create_note",
                        json!({"path": ".obsidian/evil.md", "content": "x"}),
                    ),
                    ("c3", "read_note", json!({"note": "/etc/passwd"})),
                    (
                        "c4",
                        "create_note",
                        json!({"path": "Projects/%2e%2e/%2e%2e/escape.md", "content": "x"}),
                    ),
                ],
                usage(10, 5, 0, 0),
                Chunking::Fixed(13),
            ),
            text_reply(
                p,
                "Those were refused.",
                usage(20, 5, 0, 0),
                Chunking::Whole,
            ),
        ]);
        let out = ask(
            &s,
            &fake,
            p,
            &["do bad things", "--approve", "all", "--json"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        for call in v["tool_calls"].as_array().unwrap() {
            assert_eq!(call["is_error"], true, "{call}");
            assert_eq!(call["decision"], "refused", "{call}");
        }
        assert_eq!(snapshot(&s.vault), before);
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "secret outside\n"
        );
        let results = tool_results(p, &fake.requests()[1]);
        assert_eq!(
            results.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
            ["c1", "c2", "c3", "c4"]
        );
        assert!(results.iter().all(|r| r.1));
    }
}

#[test]
fn a_tool_not_offered_this_turn_is_refused() {
    for p in BOTH {
        let s = setup();
        let before = snapshot(&s.vault);
        // No note is focused, so session tools are not offered; get_weather exists nowhere.
        let official = match p {
            P::Anthropic => fixture("anthropic_stream_tool_use.official.sse"),
            P::OpenAi => fixture("openai_stream_tool_call.recorded.sse"),
        };
        let fake = FakeLlm::start(vec![
            tool_reply(
                p,
                &[("c1", "edit_selection", json!({"text": "x"}))],
                usage(10, 5, 0, 0),
                Chunking::Fixed(1),
            ),
            Reply::Sse {
                body: official,
                chunking: Chunking::Fixed(7),
            },
            text_reply(p, "fine", usage(20, 5, 0, 0), Chunking::Whole),
        ]);
        let out = ask(&s, &fake, p, &["edit", "--approve", "all", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        let calls = v["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2);
        assert!(
            calls
                .iter()
                .all(|c| c["decision"] == "refused" && c["is_error"] == true)
        );
        let reqs = fake.requests();
        assert!(!tool_names(p, &reqs[0]).contains(&"edit_selection".to_string()));
        let first = tool_results(p, &reqs[1]);
        assert!(
            first[0].2.contains("not available in this turn"),
            "{first:?}"
        );
        let second = tool_results(p, &reqs[2]);
        let expected_id = match p {
            P::Anthropic => "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            P::OpenAi => "call_c91SqDXlYFuETYv8mUHzz6pp",
        };
        assert_eq!(second[0].0, expected_id);
        assert_eq!(snapshot(&s.vault), before);
    }
}

#[test]
fn a_selection_offers_only_edit_selection_and_edits_only_the_selection() {
    for p in BOTH {
        let s = setup();
        // "Water them daily." — find its character offsets.
        let start = PLAN.find("Water them daily.").unwrap();
        let start_chars = PLAN[..start].chars().count();
        let end_chars = start_chars + "Water them daily.".chars().count();
        let selection = format!("{start_chars}..{end_chars}");
        let fake = FakeLlm::start(vec![
            tool_reply(
                p,
                &[(
                    "c1",
                    "edit_selection",
                    json!({"text": "Water them every other day."}),
                )],
                usage(10, 5, 0, 0),
                Chunking::Fixed(7),
            ),
            text_reply(p, "Changed.", usage(20, 5, 0, 0), Chunking::Fixed(7)),
        ]);
        let out = ask(
            &s,
            &fake,
            p,
            &[
                "less water",
                "--note",
                "Projects/Plan.md",
                "--selection",
                &selection,
                "--approve",
                "all",
                "--json",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        assert_eq!(v["edits"][0]["status"], "applied", "{v}");
        assert_eq!(v["edits"][0]["path"], "Projects/Plan.md");
        assert_eq!(
            std::fs::read_to_string(s.vault.join("Projects/Plan.md")).unwrap(),
            PLAN.replace("Water them daily.", "Water them every other day.")
        );
        let reqs = fake.requests();
        let names = tool_names(p, &reqs[0]);
        assert!(names.contains(&"edit_selection".to_string()));
        for absent in ["rewrite_paragraph", "append_to_note", "insert_after_anchor"] {
            assert!(
                !names.contains(&absent.to_string()),
                "{absent} offered with a selection"
            );
        }
        assert!(
            reqs[0].raw_body.contains("Water them daily."),
            "the selection is in the request"
        );
        // A revision was recorded for the agent's write.
        let versions = common::ok(&s.data, &s.vault, &["sessions", "list", "--json"]);
        assert_eq!(
            serde_json::from_str::<Value>(&versions).unwrap()["sessions"][0]["title"],
            "less water"
        );
    }
}

#[test]
fn anchored_session_tools_edit_the_note_through_the_same_approval() {
    for p in BOTH {
        let s = setup();
        let before = snapshot(&s.vault);
        let fake = FakeLlm::start(vec![
            tool_reply(
                p,
                &[(
                    "c1",
                    "insert_after_anchor",
                    json!({"anchor": "Plant tomatoes in May.", "text": " Use stakes."}),
                )],
                usage(10, 5, 0, 0),
                Chunking::Fixed(13),
            ),
            text_reply(p, "ok", usage(20, 5, 0, 0), Chunking::Whole),
        ]);
        let out = ask(
            &s,
            &fake,
            p,
            &[
                "add stakes",
                "--note",
                "Plan",
                "--approve",
                "none",
                "--json",
            ],
        );
        assert!(out.status.success());
        assert_eq!(json_of(&out)["edits"][0]["status"], "rejected");
        assert_eq!(snapshot(&s.vault), before);
        let fake = FakeLlm::start(vec![
            tool_reply(
                p,
                &[(
                    "c1",
                    "insert_after_anchor",
                    json!({"anchor": "Plant tomatoes in May.", "text": " Use stakes."}),
                )],
                usage(10, 5, 0, 0),
                Chunking::Fixed(13),
            ),
            text_reply(p, "ok", usage(20, 5, 0, 0), Chunking::Whole),
        ]);
        let out = ask(
            &s,
            &fake,
            p,
            &["add stakes", "--note", "Plan", "--approve", "all", "--json"],
        );
        assert!(out.status.success());
        assert_eq!(
            std::fs::read_to_string(s.vault.join("Projects/Plan.md")).unwrap(),
            PLAN.replace(
                "Plant tomatoes in May.",
                "Plant tomatoes in May. Use stakes."
            )
        );
    }
}

#[test]
fn retries_follow_the_sdk_policy() {
    for p in BOTH {
        let s = setup();
        // 429 with retry-after: 1 s, then 529 (backoff), then success.
        let fake = FakeLlm::start(vec![
            error_reply(p, 429, "rate_limit_error", "slow down", Some("1")),
            error_reply(p, 529, "overloaded_error", "Overloaded", None),
            text_reply(p, "finally", usage(10, 3, 0, 0), Chunking::Fixed(7)),
        ]);
        let started = std::time::Instant::now();
        let out = ask(&s, &fake, p, &["hi", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            started.elapsed() >= std::time::Duration::from_millis(1000),
            "retry-after honoured"
        );
        assert_eq!(json_of(&out)["reply"], "finally");
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 3);
        assert_eq!(
            reqs[0].raw_body, reqs[2].raw_body,
            "a retry re-sends the same request"
        );

        // 500 three times: two retries, then one clear sentence and exit 1.
        let fake = FakeLlm::start(vec![
            error_reply(p, 500, "api_error", "Internal server error", None),
            error_reply(p, 500, "api_error", "Internal server error", None),
            error_reply(p, 500, "api_error", "Internal server error", None),
        ]);
        let out = ask(&s, &fake, p, &["hi"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(fake.requests().len(), 3);
        assert_eq!(fake.overflow(), 0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("500"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");

        // 401 is not retried.
        let fake = FakeLlm::start(vec![error_reply(
            p,
            401,
            "authentication_error",
            "invalid x-api-key",
            None,
        )]);
        let out = ask(&s, &fake, p, &["hi"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(fake.requests().len(), 1);
    }
}

#[test]
fn broken_streams_fail_cleanly_and_are_not_resent() {
    for p in BOTH {
        let s = setup();
        let before = snapshot(&s.vault);
        let partial = match p {
            P::Anthropic => anthropic_text("This will be cut", usage(5, 5, 0, 0)),
            P::OpenAi => openai_text("This will be cut", usage(5, 5, 0, 0)),
        };
        let prefix = partial[..partial.len() / 2].to_vec();
        // A reset after output began.
        let fake = FakeLlm::start(vec![Reply::Reset {
            prefix: prefix.clone(),
        }]);
        let out = ask(&s, &fake, p, &["hi", "--json"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(fake.requests().len(), 1, "never re-sent after output began");
        assert_eq!(json_of(&out)["stop_reason"], "error");
        // A stall: the idle timeout (2 s in the test config) ends it.
        let fake = FakeLlm::start(vec![Reply::Stall {
            prefix: prefix.clone(),
        }]);
        let started = std::time::Instant::now();
        let out = ask(&s, &fake, p, &["hi"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(started.elapsed() < std::time::Duration::from_secs(15));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("2 s") || err.contains("no data"), "{err}");
        assert_eq!(fake.requests().len(), 1);
        assert_eq!(snapshot(&s.vault), before);
    }
}

#[test]
fn anthropic_error_event_mid_stream_and_truncated_tool_json() {
    let s = setup();
    let before = snapshot(&s.vault);
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: fixture("anthropic_stream_error_midstream.sse"),
        chunking: Chunking::Fixed(7),
    }]);
    let out = ask(&s, &fake, P::Anthropic, &["hi", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert!(v["error"].as_str().unwrap().contains("verloaded"), "{v}");
    assert_eq!(fake.requests().len(), 1);

    // max_tokens inside a tool call: the call never runs.
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: fixture("anthropic_stream_max_tokens_truncated_tool.sse"),
        chunking: Chunking::Fixed(1),
    }]);
    let out = ask(
        &s,
        &fake,
        P::Anthropic,
        &["write", "--approve", "all", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_eq!(v["stop_reason"], "max_tokens");
    assert_eq!(v["tool_calls"], json!([]));
    assert_eq!(snapshot(&s.vault), before);
    // Said once on stderr (as the turn ended), not again with the outcome.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches("cut off at the response token limit")
            .count(),
        1,
        "{stderr}"
    );
}

#[test]
fn openai_error_chunk_mid_stream() {
    let s = setup();
    let mut body = b"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n".to_vec();
    body.extend_from_slice(b"data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body,
        chunking: Chunking::Fixed(5),
    }]);
    let out = ask(&s, &fake, P::OpenAi, &["hi", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        json_of(&out)["error"]
            .as_str()
            .unwrap()
            .contains("The server had an error")
    );
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn images_are_sent_in_each_providers_shape() {
    // The 1×1 PNG from the vision docs.
    let png: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0,
        0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0x90, 0x77, 0x53, 0xde,
    ];
    for p in BOTH {
        let s = setup();
        let image = s.vault.parent().unwrap().join("shot.png");
        std::fs::write(&image, png).unwrap();
        let fake = FakeLlm::start(vec![text_reply(
            p,
            "A pixel.",
            usage(10, 3, 0, 0),
            Chunking::Fixed(7),
        )]);
        let out = ask(
            &s,
            &fake,
            p,
            &[
                "what is this?",
                "--image",
                image.to_str().unwrap(),
                "--json",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let req = &fake.requests()[0];
        let content = &req.body["messages"].as_array().unwrap().last().unwrap()["content"];
        let b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1Pe";
        match p {
            P::Anthropic => {
                assert_eq!(content[0]["type"], "image");
                assert_eq!(content[0]["source"]["type"], "base64");
                assert_eq!(content[0]["source"]["media_type"], "image/png");
                assert_eq!(content[0]["source"]["data"], b64);
            }
            P::OpenAi => {
                let part = content
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["type"] == "image_url")
                    .unwrap();
                assert_eq!(
                    part["image_url"]["url"],
                    format!("data:image/png;base64,{b64}")
                );
            }
        }
        // A file that is not an image is a usage error.
        let fake = FakeLlm::start(vec![]);
        let out = ask(&s, &fake, p, &["x", "--image", s.config.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        assert!(fake.requests().is_empty());
        // More images than a message takes is a usage error, before any request.
        let mut args = vec!["x"];
        for _ in 0..21 {
            args.extend(["--image", image.to_str().unwrap()]);
        }
        let out = ask(&s, &fake, p, &args);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("21 images given; a message takes at most 20"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(fake.requests().is_empty());
    }
}

/// A scripted 10-turn session: each turn is a new `ask --continue`; the cacheable prefix holds.
#[test]
fn ten_turns_keep_the_prefix_cacheable_and_usage_adds_up() {
    for p in BOTH {
        let s = setup();
        let mut replies = Vec::new();
        let mut usages = Vec::new();
        for turn in 0..10 {
            if turn % 3 == 1 {
                let u = usage(40 + turn, 9, 1000, 0);
                usages.push(u);
                replies.push(tool_reply(
                    p,
                    &[(&*format!("call_t{turn}"), "list_notes", json!({}))],
                    u,
                    Chunking::Fixed(13),
                ));
            }
            let u = usage(50 + turn, 7, 1000 + turn * 10, 20);
            usages.push(u);
            replies.push(text_reply(
                p,
                &format!("Answer {turn}."),
                u,
                Chunking::Fixed(7),
            ));
        }
        let fake = FakeLlm::start(replies);
        let mut session = String::new();
        for turn in 0..10 {
            let prompt = format!("Question {turn}?");
            let mut args = vec![prompt.as_str(), "--json"];
            if turn > 0 {
                args.push("--continue");
            }
            let out = ask(&s, &fake, p, &args);
            assert!(
                out.status.success(),
                "turn {turn}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v = json_of(&out);
            assert_eq!(v["reply"], format!("Answer {turn}."));
            // Far under the window: no compaction, so the prefix must hold across every request
            // (tests/agent/long_session.rs checks that it changes only at a compaction).
            assert!(v.get("compactions").is_none(), "{v}");
            let id = v["session_id"].as_str().unwrap().to_string();
            if turn == 0 {
                session = id;
            } else {
                assert_eq!(id, session, "--continue resumes the same session");
            }
        }
        let reqs = fake.requests();
        assert_eq!(reqs.len(), usages.len());
        assert_prefix_property(&reqs);
        if p == P::Anthropic {
            for r in &reqs {
                assert_breakpoints(r);
            }
        }
        let u: Value =
            serde_json::from_str(&common::ok(&s.data, &s.vault, &["usage", "--json"])).unwrap();
        assert_eq!(u["usage"], sum_usage(&usages));
        let shown: Value = serde_json::from_str(&common::ok(
            &s.data,
            &s.vault,
            &["sessions", "show", &session, "--json"],
        ))
        .unwrap();
        assert_eq!(shown["session"]["usage"]["responses"], usages.len());
        // 10 user turns + their answers + 3 tool round trips (call + result).
        assert_eq!(shown["messages"].as_array().unwrap().len(), 10 * 2 + 3 * 2);
    }
}

#[test]
fn a_resumed_session_the_provider_rejects_continues_fresh() {
    for p in BOTH {
        let s = setup();
        let fake = FakeLlm::start(vec![
            text_reply(p, "First answer.", usage(10, 3, 0, 0), Chunking::Whole),
            error_reply(
                p,
                400,
                "invalid_request_error",
                "messages: the stored image is no longer valid",
                None,
            ),
            text_reply(p, "Second answer.", usage(12, 3, 0, 0), Chunking::Whole),
        ]);
        let first = json_of(&ask(&s, &fake, p, &["one", "--json"]));
        let id = first["session_id"].as_str().unwrap().to_string();
        let out = ask(&s, &fake, p, &["two", "--session", &id[..6], "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        assert_eq!(v["reply"], "Second answer.");
        assert_eq!(v["session_id"], id);
        let reqs = fake.requests();
        // The rejected request re-sent the stored history; the fresh one only the new turn.
        let sent = |r: &Recorded| serde_json::to_string(&r.body["messages"]).unwrap();
        assert!(sent(&reqs[1]).contains("First answer."));
        assert!(!sent(&reqs[2]).contains("First answer."));
        assert!(sent(&reqs[2]).contains("two"));
        // The local log still has everything.
        let shown: Value = serde_json::from_str(&common::ok(
            &s.data,
            &s.vault,
            &["sessions", "show", &id, "--json"],
        ))
        .unwrap();
        assert_eq!(shown["messages"].as_array().unwrap().len(), 4);
    }
}

#[test]
fn usage_errors_exit_2_and_touch_nothing() {
    let s = setup();
    let fake = FakeLlm::start(vec![]);
    for args in [
        vec!["hi", "--selection", "0..3"],
        vec!["hi", "--note", "Projects/Plan.md", "--selection", "9..2"],
        vec![
            "hi",
            "--note",
            "Projects/Plan.md",
            "--selection",
            "0..100000",
        ],
        vec!["hi", "--approve", "maybe"],
        vec!["hi", "--max-steps", "0"],
        vec!["hi", "--note", "Nope.md"],
    ] {
        let out = ask(&s, &fake, P::Anthropic, &args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.trim().is_empty());
    }
    assert!(fake.requests().is_empty());
}

/// The provider named by host name rather than address: the name goes through the resolver
/// vaultchat ships with (hickory: the hosts file and resolv.conf, no NSS modules — decisions §29),
/// here `localhost` from /etc/hosts.
#[test]
fn a_provider_named_by_host_name_is_reached() {
    for p in BOTH {
        let s = setup();
        let fake = FakeLlm::start(vec![text_reply(
            p,
            "hello by name",
            usage(3, 2, 0, 0),
            Chunking::Whole,
        )]);
        let by_name = fake.base_url.replace("127.0.0.1", "localhost");
        assert!(by_name.starts_with("http://localhost:"), "{by_name}");
        let mut c = common::cmd(&s.data, &s.vault);
        c.arg("--config").arg(&s.config);
        match p {
            P::Anthropic => c
                .args(["--provider", "anthropic", "--base-url", &by_name])
                .env("ANTHROPIC_API_KEY", "sk-ant-test"),
            P::OpenAi => c
                .args([
                    "--provider",
                    "openai",
                    "--base-url",
                    &format!("{by_name}/v1"),
                ])
                .env("OPENAI_API_KEY", "sk-openai-test"),
        };
        let out = c.args(["ask", "hi", "--json"]).output().unwrap();
        assert!(
            out.status.success(),
            "{p:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(json_of(&out)["reply"], "hello by name");
        assert_eq!(fake.requests().len(), 1);
    }
}

#[test]
fn max_steps_stops_a_looping_model() {
    let p = P::OpenAi;
    let s = setup();
    let replies = (0..3)
        .map(|i| {
            tool_reply(
                p,
                &[(&*format!("c{i}"), "list_tags", json!({}))],
                usage(1, 1, 0, 0),
                Chunking::Whole,
            )
        })
        .collect();
    let fake = FakeLlm::start(replies);
    let out = ask(&s, &fake, p, &["loop", "--max-steps", "2", "--json"]);
    assert!(out.status.success());
    let v = json_of(&out);
    assert_eq!(v["stop_reason"], "max_steps");
    assert_eq!(v["steps"], 2);
    assert!(v["error"].as_str().unwrap().contains("max_steps"));
    assert_eq!(fake.requests().len(), 2);
}

#[test]
fn permission_rules_from_the_config_apply() {
    let s = setup();
    std::fs::write(
        &s.config,
        "[provider]\nidle_timeout_secs = 2\n[permissions]\nallow = [\"update_note:Projects/**\"]\ndeny = [\"*:Inbox.md\"]\n",
    )
    .unwrap();
    let before_inbox = std::fs::read(s.vault.join("Inbox.md")).unwrap();
    let p = P::Anthropic;
    let fake = FakeLlm::start(vec![
        tool_reply(
            p,
            &[
                (
                    "c1",
                    "update_note",
                    json!({"note": "Projects/Plan.md", "append": "More."}),
                ),
                ("c2", "read_note", json!({"note": "Inbox.md"})),
            ],
            usage(1, 1, 0, 0),
            Chunking::Fixed(7),
        ),
        text_reply(p, "ok", usage(1, 1, 0, 0), Chunking::Whole),
    ]);
    // --approve none: the allow rule writes without asking; the deny rule blocks even a read.
    let out = ask(&s, &fake, p, &["go", "--approve", "none", "--json"]);
    assert!(out.status.success());
    let v = json_of(&out);
    assert_eq!(v["tool_calls"][0]["decision"], "allowed");
    assert_eq!(v["tool_calls"][1]["decision"], "denied");
    assert!(
        std::fs::read_to_string(s.vault.join("Projects/Plan.md"))
            .unwrap()
            .ends_with("More.\n")
    );
    assert_eq!(
        std::fs::read(s.vault.join("Inbox.md")).unwrap(),
        before_inbox
    );
    let results = tool_results(p, &fake.requests()[1]);
    assert!(
        !results[1].2.contains("Call Anna"),
        "the denied read leaked the note"
    );
}

/// Several calls in one response run in order and their results go back in one message; a tool
/// error (here: a wrong argument name) goes back to the model instead of ending the turn.
#[test]
fn parallel_calls_run_in_order_and_tool_errors_reach_the_model() {
    let s = setup();
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: fixture("anthropic_stream_parallel_tool_use.vault.sse"),
            chunking: Chunking::Fixed(1),
        },
        text_reply(
            P::Anthropic,
            "Nothing about Tokio.",
            usage(5, 5, 0, 0),
            Chunking::Whole,
        ),
    ]);
    let out = ask(&s, &fake, P::Anthropic, &["rust async?", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    let calls = v["tool_calls"].as_array().unwrap();
    assert_eq!(
        calls
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["search_notes", "read_note"]
    );
    assert_eq!(
        calls[0]["input"],
        json!({"query": "rust async", "limit": 5})
    );
    assert_eq!(calls[0]["is_error"], false);
    assert_eq!(calls[1]["is_error"], true);
    // Usage: the fixture's cache read (only in message_start/message_delta) is kept.
    assert_eq!(v["usage"]["cache_read_input_tokens"], 3120);
    let reqs = fake.requests();
    let results = tool_results(P::Anthropic, &reqs[1]);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, "toolu_01SearchNotes00000000001");
    assert_eq!(results[1].0, "toolu_01ReadNote000000000000002");
    assert!(results[1].1);
    // The assistant turn is echoed back exactly: text, then both tool_use blocks.
    let echoed = &reqs[1].body["messages"][1];
    assert_eq!(echoed["role"], "assistant");
    let kinds: Vec<&str> = echoed["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "tool_use", "tool_use"]);
}

#[test]
fn openai_truncated_tool_json_at_the_length_limit_never_runs() {
    let s = setup();
    let before = snapshot(&s.vault);
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let mut body = chunk(
        r#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_cut","type":"function","function":{"name":"delete_note","arguments":""}}]}"#,
        "null",
    );
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"note\": \"Inb"}}]}"#,
        "null",
    ));
    body.push_str(&chunk("{}", "\"length\""));
    body.push_str("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":16,\"total_tokens\":46}}\n\ndata: [DONE]\n\n");
    let fake = FakeLlm::start(vec![Reply::Sse {
        body: body.into_bytes(),
        chunking: Chunking::Fixed(1),
    }]);
    let out = ask(
        &s,
        &fake,
        P::OpenAi,
        &["delete inbox", "--approve", "all", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_eq!(v["stop_reason"], "max_tokens");
    assert_eq!(v["tool_calls"], json!([]));
    assert_eq!(v["usage"]["input_tokens"], 30);
    assert_eq!(snapshot(&s.vault), before);
}

#[test]
fn sessions_can_be_listed_shown_and_removed() {
    let s = setup();
    let fake = FakeLlm::start(vec![text_reply(
        P::Anthropic,
        "Hello there.",
        usage(10, 3, 0, 0),
        Chunking::Whole,
    )]);
    let v = json_of(&ask(
        &s,
        &fake,
        P::Anthropic,
        &["Say hello\nplease", "--json"],
    ));
    let id = v["session_id"].as_str().unwrap().to_string();
    let listed = common::ok(&s.data, &s.vault, &["sessions", "list"]);
    assert!(
        listed.contains(&id) && listed.contains("Say hello"),
        "{listed}"
    );
    let shown = common::ok(&s.data, &s.vault, &["sessions", "show", &id]);
    assert!(
        shown.contains("user: Say hello") && shown.contains("assistant: Hello there."),
        "{shown}"
    );
    common::ok(&s.data, &s.vault, &["sessions", "rm", &id]);
    let listed: Value = serde_json::from_str(&common::ok(
        &s.data,
        &s.vault,
        &["sessions", "list", "--json"],
    ))
    .unwrap();
    assert_eq!(listed["sessions"], json!([]));
    let out = common::run(&s.data, &s.vault, &["sessions", "show", &id]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session"));
}

#[test]
fn tools_lists_every_tier_with_closed_schemas() {
    let s = setup();
    let v: Value =
        serde_json::from_str(&common::ok(&s.data, &s.vault, &["tools", "--json"])).unwrap();
    let tools = v["tools"].as_array().unwrap();
    let tier_of = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["tier"].clone())
    };
    for name in [
        "edit_selection",
        "rewrite_paragraph",
        "insert_before_anchor",
        "insert_after_anchor",
        "append_to_note",
        "replace_structured_block",
    ] {
        assert_eq!(tier_of(name), Some(json!("session")), "{name}");
    }
    assert_eq!(tier_of("update_note"), Some(json!("workspace")));
    assert_eq!(tools.len(), 27 + 6);
    for t in tools {
        assert_eq!(
            t["inputSchema"]["additionalProperties"], false,
            "{}",
            t["name"]
        );
        assert_eq!(t["inputSchema"]["type"], "object");
    }
}

#[test]
fn a_context_overflow_says_how_to_get_out() {
    for p in BOTH {
        let s = setup();
        let fake = FakeLlm::start(vec![error_reply(
            p,
            400,
            "invalid_request_error",
            "prompt is too long: 214000 tokens > 200000 maximum",
            None,
        )]);
        let out = ask(&s, &fake, p, &["hi", "--json"]);
        assert_eq!(out.status.code(), Some(1));
        let v = json_of(&out);
        let error = v["error"].as_str().unwrap();
        assert!(
            error.contains("context window") && error.contains("new session"),
            "{error}"
        );
        // The turn alone overflows: nothing older to compact, so no retry, and the history is kept.
        assert!(
            error.contains("nothing older to compact") && error.contains("keeps its history"),
            "{error}"
        );
        assert_eq!(fake.requests().len(), 1, "a 400 is not retried");
    }
}

#[test]
fn wikilinks_in_a_message_pull_the_notes_in_unless_a_rule_forbids() {
    for p in BOTH {
        let s = setup();
        std::fs::write(
            &s.config,
            "[provider]\nidle_timeout_secs = 2\n[permissions]\ndeny = [\"*:Inbox.md\"]\n",
        )
        .unwrap();
        let fake = FakeLlm::start(vec![text_reply(
            p,
            "Tomatoes in May.",
            usage(10, 3, 0, 0),
            Chunking::Whole,
        )]);
        let out = ask(
            &s,
            &fake,
            p,
            &[
                "What does [[Plan|my plan]] say? Compare with [[Inbox]].",
                "--json",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sent = fake.requests()[0].raw_body.clone();
        assert!(
            sent.contains("linked_note path=\\\"Projects/Plan.md\\\""),
            "{sent}"
        );
        assert!(
            sent.contains("Water them daily."),
            "the note's text is sent"
        );
        assert!(!sent.contains("Call Anna"), "the denied note stays out");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("[[Inbox]] was not sent"), "{err}");
    }
}

/// `[privacy] local_only`: a provider on this machine answers (by address, and by a name that
/// resolves to it: the client is pinned to the checked address); a public address is refused
/// with a clear usage error before any connection is tried.
#[test]
fn local_only_uses_local_servers_and_refuses_remote_ones() {
    for p in BOTH {
        let s = setup();
        std::fs::write(
            &s.config,
            "[provider]\nidle_timeout_secs = 2\nconnect_timeout_secs = 2\n[privacy]\nlocal_only = true\n",
        )
        .unwrap();
        let fake = FakeLlm::start(vec![
            text_reply(p, "By address.", usage(10, 3, 0, 0), Chunking::Fixed(5)),
            text_reply(p, "By name.", usage(10, 3, 0, 0), Chunking::Fixed(5)),
        ]);
        let out = ask(&s, &fake, p, &["hello"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("By address."));

        let by_name = match p {
            P::Anthropic => fake.base_url.replace("127.0.0.1", "localhost"),
            P::OpenAi => fake.openai_base().replace("127.0.0.1", "localhost"),
        };
        assert_ne!(
            by_name, fake.base_url,
            "the fake server listens on 127.0.0.1"
        );
        let out = common::cmd(&s.data, &s.vault)
            .arg("--config")
            .arg(&s.config)
            .args(["--provider", p.name(), "--base-url", &by_name])
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .args(["ask", "hello"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("By name."));

        let out = common::cmd(&s.data, &s.vault)
            .arg("--config")
            .arg(&s.config)
            .args([
                "--provider",
                p.name(),
                "--base-url",
                "http://93.184.216.34:9/v1",
            ])
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .args(["ask", "hello"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("local_only is on and the provider is refused: 93.184.216.34 is not on this machine or a private network"),
            "{stderr}"
        );
        assert_eq!(fake.requests().len(), 2);
    }
}

/// A chat saved as a note: `sessions export` writes the session with frontmatter, the person's
/// words, the reply and a [[link]] to the note the agent read, under Chats/; it never replaces an
/// existing note, `--to -` prints instead of writing, and `--last` keeps only the last turn.
#[test]
fn a_session_is_exported_as_a_note_that_links_what_the_agent_read() {
    let s = setup();
    let p = P::Anthropic;
    let fake = FakeLlm::start(vec![
        tool_reply(
            p,
            &[("c1", "read_note", json!({"note": "Projects/Plan.md"}))],
            usage(10, 3, 0, 0),
            Chunking::Fixed(9),
        ),
        text_reply(
            p,
            "Plant them in May.",
            usage(12, 4, 0, 0),
            Chunking::Fixed(9),
        ),
        text_reply(p, "Beans in June.", usage(12, 4, 0, 0), Chunking::Fixed(9)),
    ]);
    let out = ask(&s, &fake, p, &["When do I plant tomatoes?", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let session = json_of(&out)["session_id"].as_str().unwrap().to_string();
    let out = ask(&s, &fake, p, &["And the beans?", "--continue"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let export = |args: &[&str]| {
        common::cmd(&s.data, &s.vault)
            .arg("--config")
            .arg(&s.config)
            .args(["sessions", "export", &session[..8]])
            .args(args)
            .output()
            .unwrap()
    };
    let before = snapshot(&s.vault);
    let printed = export(&["--to", "-"]);
    assert!(printed.status.success(), "{printed:?}");
    assert_eq!(snapshot(&s.vault), before, "--to - writes nothing");
    let printed = String::from_utf8(printed.stdout).unwrap();

    let out = export(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let day = &printed[printed.find("date: ").unwrap() + 6..][..10];
    let path = format!("Chats/{day} When do I plant tomatoes.md");
    assert!(stdout.contains(&path), "{stdout}");
    let note = std::fs::read_to_string(s.vault.join(&path)).unwrap();
    assert_eq!(note.trim_end(), printed.trim_end());
    assert!(
        note.starts_with("---\ntitle: \"When do I plant tomatoes?\"\n"),
        "{note}"
    );
    assert!(note.contains(&format!("session: {session}\n")), "{note}");
    for part in [
        "**You:** When do I plant tomatoes?",
        "> `read_note` [[Projects/Plan]]",
        "Plant them in May.",
        "**You:** And the beans?",
        "Beans in June.",
        "- Read: [[Projects/Plan]]",
    ] {
        assert!(note.contains(part), "{part}: {note}");
    }

    // Never over an existing note: a second export names the next free note (tests/agent/
    // session_vaults.rs), and an explicit `--to` onto the first is refused, the note as it was.
    let again = export(&["--to", path.as_str()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already exists"),
        "{again:?}"
    );
    assert_eq!(std::fs::read_to_string(s.vault.join(&path)).unwrap(), note);

    let out = export(&["--last", "--to", "Inbox/Beans.md"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = std::fs::read_to_string(s.vault.join("Inbox/Beans.md")).unwrap();
    assert!(
        last.contains("**You:** And the beans?") && last.contains("Beans in June."),
        "{last}"
    );
    assert!(!last.contains("**You:** When do I plant"), "{last}");
}
