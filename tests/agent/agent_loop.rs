//! The agent driven through `Op`/`AgentEvent` as the full-screen app drives it: per-hunk answers,
//! notes changed while a request waits, interrupts of a stream and of a parked request. The
//! provider is the local fake server speaking the Anthropic wire format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use vaultchat::agent::{
    Agent, AgentEvent, AgentSettings, EditorEditResult, NoteContext, Op, PermissionRequest,
    SessionLog, TurnEnd, TurnOutcome,
};
use vaultchat::config::{Config, Paths};
use vaultchat::llm::{Provider, ProviderKind, ProviderSettings};
use vaultchat::permission::{Answer, RuleSet};
use vaultchat::store::{Actor, Store};
use vaultchat::tools::Registry;
use vaultchat::tools::workspace::{self, Workspace};
use vaultchat::vault::Vault;

const NOTE: &str = "# Week\n\nMonday: gym.\n\nTuesday: read.\n\nWednesday: cook.\n\nThursday: swim.\n\nFriday: rest.\n\nSaturday: hike.\n\nSunday: sleep.\n";

fn make_agent(vault: &Path, data: &Path, fake: &FakeLlm) -> (Agent, Arc<Workspace>) {
    make_agent_with(vault, data, fake, |_| {})
}

/// [`make_agent`] with a hand on the registry (to add or replace tools).
fn make_agent_with(
    vault: &Path,
    data: &Path,
    fake: &FakeLlm,
    tools: impl FnOnce(&mut Registry),
) -> (Agent, Arc<Workspace>) {
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
    tools(&mut registry);
    let log = SessionLog::new(Store::open(&paths.database_file()).unwrap(), ws.vault_id());
    let mut settings = ProviderSettings::new(
        ProviderKind::Anthropic,
        fake.base_url.clone(),
        Some("k".into()),
    );
    settings.idle_timeout = Duration::from_secs(5);
    let provider = Provider::new(settings).unwrap();
    let agent = Agent::new(
        provider,
        Arc::clone(&ws),
        registry,
        AgentSettings {
            provider_name: "anthropic".into(),
            model: "m".into(),
            max_tokens: 1024,
            max_steps: 8,
            context: Default::default(),
        },
        RuleSet::default(),
        log,
    );
    (agent, ws)
}

fn u() -> FakeUsage {
    FakeUsage {
        input: 10,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    }
}

fn calls(calls: &[(&str, &str, Value)]) -> Reply {
    Reply::Sse {
        body: anthropic_tool_calls(None, calls, u()),
        chunking: Chunking::Fixed(64),
    }
}

fn text(t: &str) -> Reply {
    Reply::Sse {
        body: anthropic_text(t, u()),
        chunking: Chunking::Whole,
    }
}

/// Run one turn; `on_request` answers each permission request (None: interrupt instead).
async fn turn(
    agent: Agent,
    prompt: &str,
    mut on_request: impl FnMut(&PermissionRequest) -> Option<Op>,
) -> (TurnOutcome, Vec<AgentEvent>) {
    let (ops, mut events, task) = agent.spawn();
    ops.send(Op::UserTurn {
        text: prompt.into(),
        attachments: vec![],
        context: NoteContext::default(),
    })
    .await
    .unwrap();
    let mut seen = Vec::new();
    let outcome = loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .unwrap()
            .unwrap();
        seen.push(event.clone());
        match event {
            AgentEvent::PermissionRequested(request) => match on_request(&request) {
                Some(op) => ops.send(op).await.unwrap(),
                None => ops.send(Op::Interrupt).await.unwrap(),
            },
            AgentEvent::TurnDone(outcome) => break outcome,
            _ => {}
        }
    };
    ops.send(Op::Shutdown).await.unwrap();
    task.await.unwrap();
    (outcome, seen)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Week.md"), NOTE).unwrap();
    let data = tmp.path().join("data");
    (tmp, vault, data)
}

/// The tool result text the client sent for `id` in any request.
fn any_result_for(fake: &FakeLlm, id: &str) -> String {
    for request in fake.requests() {
        for message in request.body["messages"].as_array().unwrap() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["tool_use_id"] == id {
                    return block["content"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect();
                }
            }
        }
    }
    panic!("no result for {id}")
}

/// The tool result text the client sent for `id` in the last request.
fn result_for(fake: &FakeLlm, id: &str) -> String {
    let last = fake.requests().last().unwrap().body.clone();
    let blocks = last["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    let block = blocks.iter().find(|b| b["tool_use_id"] == id).unwrap();
    block["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

#[test]
fn a_per_hunk_answer_applies_only_the_accepted_hunks_and_tells_the_model() {
    let (_tmp, vault, data) = setup();
    let new = NOTE
        .replace("Monday: gym.", "Monday: gym at 7.")
        .replace("Sunday: sleep.", "Sunday: sleep in.");
    let fake = FakeLlm::start(vec![
        calls(&[("r1", "read_note", json!({"note": "Week.md"}))]),
        calls(&[("w1", "update_note", json!({"note": "Week.md", "body": new}))]),
        text("ok"),
    ]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let (outcome, _) = runtime().block_on(turn(agent, "plan my week", |request| {
        let proposal = request.proposal.as_ref().unwrap();
        assert_eq!(proposal.path, "Week.md");
        assert_eq!(proposal.diff.hunks.len(), 2, "two separate hunks");
        assert_eq!(proposal.diff.summary(), "+2 -2");
        Some(Op::Decision {
            request: request.id,
            answer: Answer::Once,
            hunks: Some(vec![true, false]),
        })
    }));
    assert_eq!(outcome.stop_reason, TurnEnd::EndTurn);
    assert_eq!(
        std::fs::read_to_string(vault.join("Week.md")).unwrap(),
        NOTE.replace("Monday: gym.", "Monday: gym at 7.")
    );
    let result: Value = serde_json::from_str(&result_for(&fake, "w1")).unwrap();
    assert_eq!(result["hunks_applied"], json!([1]));
    assert_eq!(result["hunks_rejected"], json!([2]));
    assert_eq!(outcome.edits[0].added, 1);
}

#[test]
fn a_note_changed_while_the_request_waits_is_merged_or_refused() {
    // Disjoint: the person edits Monday while the agent's Sunday change waits → both survive.
    let (_tmp, vault, data) = setup();
    let agents_text = NOTE.replace("Sunday: sleep.", "Sunday: sleep in.");
    let fake = FakeLlm::start(vec![
        calls(&[("r1", "read_note", json!({"note": "Week"}))]),
        calls(&[(
            "w1",
            "update_note",
            json!({"note": "Week.md", "body": agents_text}),
        )]),
        text("ok"),
    ]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let note = vault.join("Week.md");
    let (outcome, _) = runtime().block_on(turn(agent, "sleep in on sunday", |request| {
        std::fs::write(&note, NOTE.replace("Monday: gym.", "Monday: yoga.")).unwrap();
        Some(Op::Decision {
            request: request.id,
            answer: Answer::Once,
            hunks: None,
        })
    }));
    assert_eq!(
        outcome.edits[0].status,
        vaultchat::agent::EditStatus::Applied
    );
    assert_eq!(
        std::fs::read_to_string(&note).unwrap(),
        NOTE.replace("Monday: gym.", "Monday: yoga.")
            .replace("Sunday: sleep.", "Sunday: sleep in.")
    );
    assert!(result_for(&fake, "w1").contains("merged_with_changes_on_disk"));

    // Overlapping: the person rewrites the same line → refused, their text kept.
    let (_tmp, vault, data) = setup();
    let fake = FakeLlm::start(vec![
        calls(&[("r1", "read_note", json!({"note": "Week"}))]),
        calls(&[(
            "w1",
            "update_note",
            json!({"note": "Week.md", "body": NOTE.replace("Sunday: sleep.", "Sunday: sleep in.")}),
        )]),
        text("ok"),
    ]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let note = vault.join("Week.md");
    let theirs = NOTE.replace("Sunday: sleep.", "Sunday: family lunch.");
    let (outcome, _) = runtime().block_on(turn(agent, "sleep in", |request| {
        std::fs::write(&note, &theirs).unwrap();
        Some(Op::Decision {
            request: request.id,
            answer: Answer::Once,
            hunks: None,
        })
    }));
    assert_eq!(
        outcome.edits[0].status,
        vaultchat::agent::EditStatus::Failed
    );
    assert_eq!(std::fs::read_to_string(&note).unwrap(), theirs);
    assert!(
        result_for(&fake, "w1").contains("changed on disk"),
        "{}",
        result_for(&fake, "w1")
    );
}

#[test]
fn a_whole_body_is_replaced_only_over_a_current_read() {
    // Read before you overwrite: a whole new body for a note the agent has not read is refused;
    // so is one for a note the person edited after the agent read it (it would revert their
    // edit). After reading it again, the same kind of call is offered as a diff.
    let (_tmp, vault, data) = setup();
    let note = vault.join("Week.md");
    let body = NOTE.replace("Friday: rest.", "Friday: party.");
    let edited = NOTE.replace("Tuesday: read.", "Tuesday: read a novel.");
    let fake = FakeLlm::start(vec![
        calls(&[(
            "w0",
            "update_note",
            json!({"note": "Week.md", "body": body}),
        )]),
        calls(&[("r1", "read_note", json!({"note": "Week.md"}))]),
        calls(&[(
            "w1",
            "update_note",
            json!({"note": "Week.md", "body": body}),
        )]),
        calls(&[("r2", "read_note", json!({"note": "Week.md"}))]),
        calls(&[(
            "w2",
            "update_note",
            json!({"note": "Week.md", "body": edited.replace("Friday: rest.", "Friday: party.")}),
        )]),
        text("ok"),
    ]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let rt = runtime();
    let (ops, mut events, task) = rt.block_on(async { agent.spawn() });
    let mut asked = Vec::new();
    let outcome = rt.block_on(async {
        ops.send(Op::UserTurn {
            text: "party friday".into(),
            attachments: vec![],
            context: NoteContext::default(),
        })
        .await
        .unwrap();
        loop {
            match events.recv().await.unwrap() {
                // Once the first read has finished, the person edits the note.
                AgentEvent::ToolCallFinished(record) if record.id == "r1" => {
                    std::fs::write(&note, &edited).unwrap();
                }
                AgentEvent::PermissionRequested(request) => {
                    asked.push(request.call_id.clone());
                    let diff = request.proposal.as_ref().unwrap().diff.unified();
                    assert!(diff.contains("+Friday: party."), "{diff}");
                    assert!(!diff.contains("Tuesday"), "the person's edit stays: {diff}");
                    ops.send(Op::Decision {
                        request: request.id,
                        answer: Answer::Once,
                        hunks: None,
                    })
                    .await
                    .unwrap();
                }
                AgentEvent::TurnDone(outcome) => break outcome,
                _ => {}
            }
        }
    });
    rt.block_on(async {
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
    });
    let unread = any_result_for(&fake, "w0");
    assert!(
        unread.contains("has not been read") && unread.contains("read_note"),
        "{unread}"
    );
    let stale = any_result_for(&fake, "w1");
    assert!(stale.contains("changed since you read it"), "{stale}");
    assert_eq!(
        asked,
        vec!["w2".to_string()],
        "only the call over a current read asks"
    );
    let statuses: Vec<_> = outcome.edits.iter().map(|e| e.status).collect();
    use vaultchat::agent::EditStatus::{Applied, Failed};
    assert_eq!(statuses, vec![Failed, Failed, Applied]);
    assert_eq!(
        std::fs::read_to_string(&note).unwrap(),
        edited.replace("Friday: rest.", "Friday: party.")
    );
}

#[test]
fn interrupt_denies_the_parked_request_and_the_rest_of_the_calls() {
    let (_tmp, vault, data) = setup();
    let fake = FakeLlm::start(vec![calls(&[
        (
            "w1",
            "update_note",
            json!({"note": "Week.md", "append": "More."}),
        ),
        ("w2", "delete_note", json!({"note": "Week.md"})),
    ])]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let (outcome, events) = runtime().block_on(turn(agent, "change things", |_| None));
    assert_eq!(outcome.stop_reason, TurnEnd::Interrupted);
    assert_eq!(
        std::fs::read_to_string(vault.join("Week.md")).unwrap(),
        NOTE
    );
    assert_eq!(outcome.tool_calls.len(), 2);
    assert!(outcome.tool_calls.iter().all(|c| c.is_error));
    // Only the first call was ever asked about.
    let asked = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::PermissionRequested(_)))
        .count();
    assert_eq!(asked, 1);
    assert_eq!(fake.requests().len(), 1, "no request after the interrupt");
}

#[test]
fn interrupt_cancels_a_running_stream() {
    let (_tmp, vault, data) = setup();
    let body = anthropic_text("This answer never finishes", u());
    let fake = FakeLlm::start(vec![Reply::Stall {
        prefix: body[..body.len() / 2].to_vec(),
    }]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let rt = runtime();
    let started = std::time::Instant::now();
    let outcome = rt.block_on(async {
        let (ops, mut events, task) = agent.spawn();
        ops.send(Op::UserTurn {
            text: "hi".into(),
            attachments: vec![],
            context: NoteContext::default(),
        })
        .await
        .unwrap();
        let outcome = loop {
            match events.recv().await.unwrap() {
                AgentEvent::TextDelta(_) => ops.send(Op::Interrupt).await.unwrap(),
                AgentEvent::TurnDone(outcome) => break outcome,
                _ => {}
            }
        };
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
        outcome
    });
    assert_eq!(outcome.stop_reason, TurnEnd::Interrupted);
    assert!(outcome.reply.starts_with("This"), "{}", outcome.reply);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "did not wait for the idle timeout"
    );
}

#[test]
fn session_and_always_answers_stop_the_questions() {
    let (_tmp, vault, data) = setup();
    let fake = FakeLlm::start(vec![
        calls(&[(
            "a1",
            "update_note",
            json!({"note": "Week.md", "append": "One."}),
        )]),
        calls(&[(
            "a2",
            "update_note",
            json!({"note": "Week.md", "append": "Two."}),
        )]),
        text("ok"),
    ]);
    let (agent, ws) = make_agent(&vault, &data, &fake);
    let mut asked = 0;
    let (outcome, _) = runtime().block_on(turn(agent, "append twice", |request| {
        asked += 1;
        Some(Op::Decision {
            request: request.id,
            answer: Answer::Always { with_path: true },
            hunks: None,
        })
    }));
    assert_eq!(asked, 1, "the second append was allowed by the new rule");
    assert!(
        outcome
            .edits
            .iter()
            .all(|e| e.status == vaultchat::agent::EditStatus::Applied)
    );
    let rules = Store::open(&Paths::under(&data).database_file())
        .unwrap()
        .rules(ws.vault_id())
        .unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].tool, "update_note");
    assert_eq!(rules[0].path_glob.as_deref(), Some("Week.md"));
    assert!(
        std::fs::read_to_string(vault.join("Week.md"))
            .unwrap()
            .ends_with("One.\n\nTwo.\n")
    );
}

/// In the app, edits to the open note go to the editor buffer (unsaved changes included), never
/// to the file behind the person's back.
#[test]
fn edits_to_the_note_open_in_the_editor_go_to_the_buffer() {
    use vaultchat::agent::FocusedNote;
    use vaultchat::tools::session::EditorState;
    let (_tmp, vault, data) = setup();
    // The buffer has an unsaved change the file does not have.
    let buffer = NOTE.replace("Monday: gym.", "Monday: gym (unsaved).");
    let fake = FakeLlm::start(vec![
        calls(&[("s1", "append_to_note", json!({"text": "Notes: none."}))]),
        calls(&[(
            "u1",
            "update_note",
            json!({"note": "Week.md", "replace_text": {"find": "Friday: rest.", "replace": "Friday: party."}}),
        )]),
        text("ok"),
    ]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let context = NoteContext {
        note: Some(FocusedNote {
            path: "Week.md".into(),
            editor: EditorState {
                text: buffer.clone(),
                selection: None,
                cursor: 0,
            },
            in_editor: true,
        }),
    };
    let rt = runtime();
    let (edits, outcome) = rt.block_on(async {
        let (ops, mut events, task) = agent.spawn();
        ops.send(Op::UserTurn {
            text: "tidy".into(),
            attachments: vec![],
            context,
        })
        .await
        .unwrap();
        let mut edits = Vec::new();
        let outcome = loop {
            match events.recv().await.unwrap() {
                AgentEvent::PermissionRequested(request) => {
                    let diff = request.proposal.as_ref().unwrap().diff.unified();
                    assert!(
                        !diff.contains("unsaved"),
                        "the diff is against the buffer: {diff}"
                    );
                    ops.send(Op::Decision {
                        request: request.id,
                        answer: Answer::Once,
                        hunks: None,
                    })
                    .await
                    .unwrap();
                }
                AgentEvent::EditorEdit {
                    id,
                    path,
                    before,
                    after,
                } => {
                    // The app applies it, saves it and says so; the result waits for that.
                    ops.send(Op::EditorApplied {
                        id,
                        result: EditorEditResult::Applied {
                            text: after.clone(),
                            saved: Ok(()),
                        },
                    })
                    .await
                    .unwrap();
                    edits.push((path, before, after));
                }
                AgentEvent::TurnDone(outcome) => break outcome,
                _ => {}
            }
        };
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
        (edits, outcome)
    });
    assert_eq!(outcome.edits.len(), 2);
    assert_eq!(
        std::fs::read_to_string(vault.join("Week.md")).unwrap(),
        NOTE,
        "the file is untouched"
    );
    assert_eq!(edits.len(), 2);
    assert_eq!(edits[0].1, buffer);
    assert_eq!(edits[0].2, format!("{buffer}\nNotes: none.\n"));
    // The second edit builds on the first and keeps the unsaved change.
    assert_eq!(edits[1].1, edits[0].2);
    assert_eq!(
        edits[1].2,
        edits[0].2.replace("Friday: rest.", "Friday: party.")
    );
    assert!(result_for(&fake, "u1").contains("\"applied_to\":\"editor\""));
    assert!(result_for(&fake, "u1").contains("\"saved\":true"));
}

/// The model hears what the editor really did: an edit the person's typing overlapped is
/// reported as not applied, with the reason, and one that was applied but could not be written
/// says so.
#[test]
fn the_tool_result_is_the_editors_answer() {
    use vaultchat::agent::FocusedNote;
    use vaultchat::tools::session::EditorState;
    let (_tmp, vault, data) = setup();
    let fake = FakeLlm::start(vec![
        calls(&[("s1", "append_to_note", json!({"text": "Notes: none."}))]),
        calls(&[("s2", "append_to_note", json!({"text": "More."}))]),
        text("ok"),
    ]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let context = NoteContext {
        note: Some(FocusedNote {
            path: "Week.md".into(),
            editor: EditorState {
                text: NOTE.into(),
                selection: None,
                cursor: 0,
            },
            in_editor: true,
        }),
    };
    let rt = runtime();
    let outcome = rt.block_on(async {
        let (ops, mut events, task) = agent.spawn();
        ops.send(Op::UserTurn {
            text: "tidy".into(),
            attachments: vec![],
            context,
        })
        .await
        .unwrap();
        let mut answered = 0;
        let outcome = loop {
            match events.recv().await.unwrap() {
                AgentEvent::PermissionRequested(request) => ops
                    .send(Op::Decision {
                        request: request.id,
                        answer: Answer::Once,
                        hunks: None,
                    })
                    .await
                    .unwrap(),
                AgentEvent::EditorEdit { id, after, .. } => {
                    let result = if answered == 0 {
                        EditorEditResult::Refused(
                            "the person was typing in the same place meanwhile".into(),
                        )
                    } else {
                        EditorEditResult::Applied {
                            text: after,
                            saved: Err("Week.md could not be saved: disk full".into()),
                        }
                    };
                    answered += 1;
                    ops.send(Op::EditorApplied { id, result }).await.unwrap();
                }
                AgentEvent::TurnDone(outcome) => break outcome,
                _ => {}
            }
        };
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
        outcome
    });
    let refused = any_result_for(&fake, "s1");
    assert!(refused.contains("not applied"), "{refused}");
    assert!(refused.contains("typing in the same place"), "{refused}");
    let unsaved = result_for(&fake, "s2");
    assert!(unsaved.contains("\"saved\":false"), "{unsaved}");
    assert!(unsaved.contains("disk full"), "{unsaved}");
    assert_eq!(
        outcome.edits[0].status,
        vaultchat::agent::EditStatus::Failed
    );
    assert_eq!(
        outcome.edits[1].status,
        vaultchat::agent::EditStatus::Applied
    );
}

/// `/model` in the middle of a session: the usage of the responses after it is billed to the new
/// model (issue 14: the session log kept the model it started with).
#[test]
fn usage_after_a_model_switch_is_billed_to_the_new_model() {
    let (_tmp, vault, data) = setup();
    let fake = FakeLlm::start(vec![text("one"), text("two")]);
    let (agent, _ws) = make_agent(&vault, &data, &fake);
    let rt = runtime();
    rt.block_on(async {
        let (ops, mut events, task) = agent.spawn();
        for (prompt, model) in [("first", None), ("second", Some("m2"))] {
            if let Some(model) = model {
                ops.send(Op::SetModel(model.into())).await.unwrap();
            }
            ops.send(Op::UserTurn {
                text: prompt.into(),
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
                    assert_eq!(outcome.stop_reason, TurnEnd::EndTurn);
                    break;
                }
            }
        }
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
    });
    assert_eq!(fake.requests()[1].body["model"], "m2");
    let store = Store::open(&Paths::under(&data).database_file()).unwrap();
    let models: Vec<String> = store
        .usage_by_day(0)
        .unwrap()
        .into_iter()
        .flat_map(|day| day.by_model.into_iter().map(|(name, _)| name))
        .collect();
    assert_eq!(models, ["anthropic/m", "anthropic/m2"]);
}

/// A tool that never answers (an MCP server that hangs until its timeout).
struct Hanging(vaultchat::tools::ToolSpec);

impl vaultchat::tools::Tool for Hanging {
    fn spec(&self) -> &vaultchat::tools::ToolSpec {
        &self.0
    }
    fn call(
        &self,
        _args: Value,
    ) -> vaultchat::tools::BoxFuture<
        '_,
        Result<vaultchat::tools::ToolOutput, vaultchat::tools::ToolError>,
    > {
        Box::pin(std::future::pending())
    }
}

/// Esc while a tool runs ends the wait at once: the call is abandoned, the model is told, and the
/// turn ends as interrupted (issue 14: the call was awaited for its whole timeout).
#[test]
fn interrupt_abandons_a_running_tool_call() {
    let (_tmp, vault, data) = setup();
    let fake = FakeLlm::start(vec![
        calls(&[("h1", "search_notes", json!({"query": "gym"}))]),
        text("never asked"),
    ]);
    let (agent, _ws) = make_agent_with(&vault, &data, &fake, |registry| {
        let spec = registry.get("search_notes").unwrap().spec().clone();
        registry.register(Arc::new(Hanging(spec)));
    });
    let rt = runtime();
    let outcome = rt.block_on(async {
        let (ops, mut events, task) = agent.spawn();
        ops.send(Op::UserTurn {
            text: "find the gym".into(),
            attachments: vec![],
            context: NoteContext::default(),
        })
        .await
        .unwrap();
        let outcome = loop {
            // Generous: the bug made this wait forever (here: the hanging tool never answers).
            let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
                .await
                .expect("the interrupt ended the tool call's wait")
                .unwrap();
            match event {
                AgentEvent::ToolCallStarted { .. } => ops.send(Op::Interrupt).await.unwrap(),
                AgentEvent::TurnDone(outcome) => break outcome,
                _ => {}
            }
        };
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
        outcome
    });
    assert_eq!(outcome.stop_reason, TurnEnd::Interrupted);
    let call = &outcome.tool_calls[0];
    assert!(call.is_error);
    assert!(call.result.contains("interrupted"), "{}", call.result);
    assert_eq!(fake.requests().len(), 1, "no request after the interrupt");
}

/// `/model` (or the server's answer) tells the agent the model's context window between turns:
/// the next turn compacts against it. Here the 200k default is lowered to 16k tokens, so the
/// second turn's request (the first turn holds a 60,000-character message) is summarised before
/// it is sent.
#[test]
fn a_new_context_window_is_what_the_next_turn_compacts_against() {
    let (_tmp, vault, data) = setup();
    // A request without tools asks for a summary; the others are answered in turn. The first
    // answer reports the first request's real size, as a real provider would.
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&answered);
    let fake = FakeLlm::start_responding(Arc::new(move |request| {
        let summary = request.body["tools"]
            .as_array()
            .is_none_or(|t| t.is_empty());
        let (reply, input) = if summary {
            ("SUMMARY-1: a long first message, answered.", 10)
        } else if counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            ("First answer.", 15_000)
        } else {
            ("Second answer.", 10)
        };
        Reply::Sse {
            body: anthropic_text(
                reply,
                FakeUsage {
                    input,
                    output: 5,
                    cache_read: 0,
                    cache_write: 0,
                },
            ),
            chunking: Chunking::Whole,
        }
    }));
    // The core tools only: the same list at 200k and at 16k tokens, so what the first answer
    // calibrates is what the second request holds, however many tools the workspace grows (with
    // every tool, 16k would send the core set and a smaller request than the one calibrated).
    let (agent, _ws) = make_agent_with(&vault, &data, &fake, |registry| {
        *registry = registry.filtered(|spec| {
            [
                "create_note",
                "list_notes",
                "read_note",
                "search_notes",
                "update_note",
            ]
            .contains(&spec.name.as_str())
        });
    });
    runtime().block_on(async {
        let (ops, mut events, task) = agent.spawn();
        let mut compactions = 0;
        for (prompt, window) in [
            (format!("First? {}", "long words ".repeat(5_500)), None),
            ("Second?".to_string(), Some(16_000)),
        ] {
            if let Some(tokens) = window {
                ops.send(Op::SetContextWindow(tokens)).await.unwrap();
            }
            ops.send(Op::UserTurn {
                text: prompt,
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
                match event {
                    AgentEvent::Compacted(_) => compactions += 1,
                    AgentEvent::TurnDone(outcome) => {
                        assert!(outcome.error.is_none(), "{outcome:?}");
                        break;
                    }
                    _ => {}
                }
            }
            if window.is_none() {
                assert_eq!(compactions, 0, "a 200k window holds the first turn");
            }
        }
        ops.send(Op::Shutdown).await.unwrap();
        task.await.unwrap();
        assert_eq!(
            compactions, 1,
            "the second turn compacts against 16k tokens"
        );
    });
    let requests = fake.requests();
    let last = requests.last().unwrap();
    assert!(requests.len() >= 3, "{}", requests.len());
    assert!(
        last.raw_body.contains("Second?"),
        "the last request is the second turn's"
    );
    assert!(last.raw_body.contains("SUMMARY-1:"), "the summary is sent");
    assert!(
        !last.raw_body.contains("long words long words"),
        "the long first message is summarised away"
    );
}
