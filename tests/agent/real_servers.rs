//! Real model servers (issue 12): `vaultchat ask` against the fake provider replaying what
//! llama-cpp-python's OpenAI-compatible server really sent (tests/fixtures/sse/llama_cpp_python_*,
//! head and body), and the shape of what vaultchat sends such servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{
    Chunking, FakeLlm, FakeUsage, Recorded, Reply, anthropic_text, openai_text, openai_tool_calls,
    recorded,
};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;
use vaultchat::agent::{
    Agent, AgentEvent, AgentSettings, NoteContext, Op, SessionLog, TurnEnd, TurnOutcome,
};
use vaultchat::config::{Config, Paths};
use vaultchat::llm::{Provider, ProviderKind, ProviderSettings};
use vaultchat::permission::RuleSet;
use vaultchat::store::{Actor, Store};
use vaultchat::tools::Registry;
use vaultchat::tools::workspace::{self, Workspace};
use vaultchat::vault::Vault;

/// The `x-request-id` llama-cpp-python sent with the zero-byte stream
/// (tests/fixtures/sse/llama_cpp_python_content_array_abort.headers).
const ZERO_BYTE_REQUEST_ID: &str = "5b65283bb93c405287d8ccff2c9b34b2";

#[derive(Debug, Clone, Copy, PartialEq)]
enum P {
    Anthropic,
    OpenAi,
}

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

const PLAN: &str = "# Garden plan\n\nPlant tomatoes in May.\n";
const INBOX: &str = "# Inbox\n\nCall Anna about the garden.\n";

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(vault.join("Projects/Plan.md"), PLAN).unwrap();
    std::fs::write(vault.join("Inbox.md"), INBOX).unwrap();
    let data = tmp.path().join("data");
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        "[provider]\nidle_timeout_secs = 5\nconnect_timeout_secs = 2\n",
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

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn text_reply(p: P, text: &str) -> Reply {
    let usage = FakeUsage {
        input: 20,
        output: 5,
        ..FakeUsage::default()
    };
    let body = match p {
        P::Anthropic => anthropic_text(text, usage),
        P::OpenAi => openai_text(text, usage),
    };
    Reply::Sse {
        body,
        chunking: Chunking::Fixed(11),
    }
}

/// What llama-cpp-python answers a request its chat template cannot take; for Anthropic, the same
/// empty `200` stream.
fn zero_byte_reply(p: P) -> Reply {
    match p {
        P::OpenAi => recorded("llama_cpp_python_content_array_abort", Chunking::Fixed(7)),
        P::Anthropic => Reply::Sse {
            body: Vec::new(),
            chunking: Chunking::Whole,
        },
    }
}

/// The messages of a request (OpenAI's include the system message).
fn messages(request: &Recorded) -> Vec<Value> {
    request.body["messages"].as_array().unwrap().clone()
}

/// Every text a message carries, whatever its shape.
fn texts_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[test]
fn a_zero_byte_stream_says_what_it_means_and_names_the_request_id() {
    let s = setup();
    let fake = FakeLlm::start(vec![zero_byte_reply(P::OpenAi), zero_byte_reply(P::OpenAi)]);
    let out = ask(&s, &fake, P::OpenAi, &["Summarise [[Plan]]"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    for needed in [
        "the provider accepted the request but sent an empty stream",
        "the server failed while building the prompt (its log says why; some servers cannot stream tool calls)",
        &format!("(request {ZERO_BYTE_REQUEST_ID})"),
        "the message is kept in the transcript but not sent to the model again",
    ] {
        assert!(err.contains(needed), "{needed:?} is not in:\n{err}");
    }
    // The server ran the request: it is not retried.
    assert_eq!(fake.requests().len(), 1);
    let sent = &fake.requests()[0];
    assert!(
        sent.headers["x-client-request-id"].starts_with("vaultchat-"),
        "{:?}",
        sent.headers
    );

    // `ask --json` carries the same sentence in its `error`.
    let out = ask(&s, &fake, P::OpenAi, &["Summarise [[Plan]]", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["stop_reason"], "error");
    let error = outcome["error"].as_str().unwrap();
    assert!(error.contains("sent an empty stream"), "{error}");
    assert!(error.contains(ZERO_BYTE_REQUEST_ID), "{error}");
    assert_eq!(fake.overflow(), 0);
}

#[test]
fn a_session_whose_turn_failed_answers_its_next_turn() {
    for p in [P::OpenAi, P::Anthropic] {
        let s = setup();
        let third = match p {
            P::OpenAi => recorded("llama_cpp_python_text_no_usage", Chunking::Fixed(13)),
            P::Anthropic => text_reply(p, "Tomatoes in May."),
        };
        let fake = FakeLlm::start(vec![text_reply(p, "Hi."), zero_byte_reply(p), third]);
        let first = ask(&s, &fake, p, &["hello", "--json"]);
        assert!(first.status.success(), "{p:?}: {}", stderr(&first));
        let outcome: Value = serde_json::from_slice(&first.stdout).unwrap();
        let id = outcome["session_id"].as_str().unwrap().to_string();
        let failed = ask(&s, &fake, p, &["Summarise [[Plan]]", "--continue"]);
        assert_eq!(failed.status.code(), Some(1), "{p:?}: {}", stderr(&failed));
        assert!(stderr(&failed).contains("not sent to the model again"));

        let next = ask(&s, &fake, p, &["What should I plant?", "--continue"]);
        assert!(next.status.success(), "{p:?}: {}", stderr(&next));
        assert_eq!(fake.requests().len(), 3, "{p:?}");
        let sent = messages(&fake.requests()[2]);
        // The failed message (and the note it pulled in) is not sent again; the turns before it are.
        let all = sent.iter().map(texts_of).collect::<Vec<_>>().join("\n");
        assert!(!all.contains("Summarise"), "{p:?}: {all}");
        assert!(!all.contains("Plant tomatoes in May."), "{p:?}: {all}");
        let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
        let last = sent.last().unwrap();
        match p {
            P::OpenAi => {
                assert_eq!(roles, ["system", "user", "assistant", "user"]);
                assert_eq!(sent[1]["content"], "hello");
                // Text only: a plain string, the shape llama.cpp chat templates take.
                assert_eq!(last["content"], "What should I plant?");
            }
            P::Anthropic => {
                // The Anthropic wire is unchanged: content blocks.
                assert_eq!(roles, ["user", "assistant", "user"]);
                assert_eq!(last["content"][0]["text"], "What should I plant?");
            }
        }

        // The failed turn is still in the stored transcript, marked.
        let shown = common::ok(&s.data, &s.vault, &["sessions", "show", &id]);
        assert!(shown.contains("user: Summarise [[Plan]]"), "{shown}");
        assert!(
            shown.contains("[failed, not sent to the model again: the provider accepted the request but sent an empty stream"),
            "{shown}"
        );
        let json: Value = serde_json::from_str(&common::ok(
            &s.data,
            &s.vault,
            &["sessions", "show", &id, "--json"],
        ))
        .unwrap();
        assert_eq!(json["failed_turns"].as_array().unwrap().len(), 1, "{json}");
        assert_eq!(json["failed_turns"][0]["first_seq"], 3);
    }
}

#[test]
fn notes_go_to_openai_compatible_servers_as_one_string_and_images_as_parts() {
    let s = setup();
    let fake = FakeLlm::start(vec![
        text_reply(P::OpenAi, "Done."),
        text_reply(P::OpenAi, "A pixel."),
    ]);
    let out = ask(
        &s,
        &fake,
        P::OpenAi,
        &["Summarise [[Plan]]", "--note", "Inbox.md"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = messages(&fake.requests()[0]);
    assert!(sent[0]["content"].is_string(), "{}", sent[0]);
    let content = sent.last().unwrap()["content"].as_str().unwrap_or_else(|| {
        panic!(
            "a text-only message goes as a string: {}",
            sent.last().unwrap()
        )
    });
    // The person's text, the open note, the linked note: one string, blank lines between.
    assert!(
        content.starts_with("Summarise [[Plan]]\n\n<focused_note path=\"Inbox.md\">\n"),
        "{content}"
    );
    assert!(
        content.contains(
            "\n\n<linked_note path=\"Projects/Plan.md\">\n# Garden plan\n\nPlant tomatoes in May.\n"
        ),
        "{content}"
    );

    // With an image the content is an array of parts, the note text among them.
    let png: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0,
        0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0x90, 0x77, 0x53, 0xde,
    ];
    let image = s.vault.parent().unwrap().join("shot.png");
    std::fs::write(&image, png).unwrap();
    let out = ask(
        &s,
        &fake,
        P::OpenAi,
        &[
            "What is [[Plan]] next to this?",
            "--image",
            image.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = messages(&fake.requests()[1]);
    let parts = sent.last().unwrap()["content"].as_array().unwrap().clone();
    let kinds: Vec<&str> = parts.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["image_url", "text", "text"]);
    assert_eq!(parts[1]["text"], "What is [[Plan]] next to this?");
    assert!(
        parts[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("<linked_note path=\"Projects/Plan.md\">"),
        "{}",
        parts[2]
    );
}

/// The agent as the app runs it (one process, turn after turn), speaking the OpenAI wire to the
/// fake server.
fn openai_agent(vault: &std::path::Path, data: &std::path::Path, fake: &FakeLlm) -> Agent {
    let paths = Paths::under(data);
    let ws = Workspace::open(
        Vault::open(vault).unwrap(),
        &paths,
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();
    let mut registry = Registry::new();
    workspace::register(&mut registry, &ws);
    let log = SessionLog::new(Store::open(&paths.database_file()).unwrap(), ws.vault_id());
    let mut settings =
        ProviderSettings::new(ProviderKind::OpenAi, fake.openai_base(), Some("k".into()));
    settings.idle_timeout = Duration::from_secs(5);
    Agent::new(
        Provider::new(settings).unwrap(),
        ws,
        registry,
        AgentSettings {
            provider_name: "openai".into(),
            model: "smol".into(),
            max_tokens: 256,
            max_steps: 8,
            context: Default::default(),
        },
        RuleSet::default(),
        log,
    )
}

/// Send one message and wait for the end of its turn.
async fn one_turn(
    ops: &tokio::sync::mpsc::Sender<Op>,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
    text: &str,
) -> TurnOutcome {
    ops.send(Op::UserTurn {
        text: text.into(),
        attachments: vec![],
        context: NoteContext::default(),
    })
    .await
    .unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .unwrap()
            .unwrap();
        if let AgentEvent::TurnDone(outcome) = event {
            return outcome;
        }
    }
}

/// In the app the agent lives on after a failed turn: the next message does not carry the failed
/// one, nor the tool round trip that came before the failure.
#[test]
fn in_one_process_a_failed_turn_with_tool_calls_is_not_sent_again() {
    let s = setup();
    let read = openai_tool_calls(
        None,
        &[("call_1", "read_note", json!({"note": "Projects/Plan.md"}))],
        FakeUsage::default(),
    );
    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: read,
            chunking: Chunking::Fixed(17),
        },
        zero_byte_reply(P::OpenAi),
        text_reply(P::OpenAi, "Tomatoes."),
    ]);
    let agent = openai_agent(&s.vault, &s.data, &fake);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (failed, answered) = runtime.block_on(async {
        let (ops, mut events, task) = agent.spawn();
        let failed = one_turn(&ops, &mut events, "Summarise [[Plan]]").await;
        let answered = one_turn(&ops, &mut events, "What should I plant?").await;
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
        (failed, answered)
    });
    assert_eq!(failed.stop_reason, TurnEnd::Error);
    assert_eq!(failed.tool_calls.len(), 1);
    let error = failed.error.unwrap();
    assert!(error.contains(ZERO_BYTE_REQUEST_ID), "{error}");
    assert!(error.contains("not sent to the model again"), "{error}");
    assert_eq!(answered.stop_reason, TurnEnd::EndTurn);
    assert_eq!(answered.reply, "Tomatoes.");

    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    // The second request of the failed turn carried its tool round trip …
    let roles = |r: &Recorded| -> Vec<String> {
        messages(r)
            .iter()
            .map(|m| m["role"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(roles(&requests[1]), ["system", "user", "assistant", "tool"]);
    // … and the next turn starts without any of it.
    assert_eq!(roles(&requests[2]), ["system", "user"]);
    assert_eq!(messages(&requests[2])[1]["content"], "What should I plant?");
}
