//! A command backed by an MCP prompt does not hold up the host (decisions §67, §71): while the
//! server takes its time over `prompts/get` (tests/peers/edge_prompts.py's `slow`, which answers
//! only when the test opens its gate), the person's notes are opened and saved at once; an agent
//! op sent after the command reaches the agent after the command's turn has started; and Esc (an
//! interrupt) cancels the pending command at once, leaving the agent free for the next message.
//! The host is driven through its public requests and events, with a real agent talking to the
//! fake provider and the server written with the official Python SDK.

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use vaultchat::agent::{AgentEvent, NoteContext, Op, ProviderChoice, TurnOutcome};
use vaultchat::host::{Host, HostEvent, Launch, Request};

/// How long a positive signal is waited for. The server's own timeout is longer (30 s), so an
/// answer that only comes once the server gives up is not taken for one that came at once.
const WAIT: Duration = Duration::from_secs(10);

struct Setup {
    _tmp: tempfile::TempDir,
    vault: PathBuf,
    /// Where the `slow` prompt says it has started and waits to be released.
    gate: PathBuf,
    fake: FakeLlm,
    runtime: tokio::runtime::Runtime,
    host: Host,
}

fn reply(text: &str) -> Reply {
    Reply::Sse {
        body: anthropic_text(text, FakeUsage::default()),
        chunking: Chunking::Whole,
    }
}

/// A vault with one note, the edge prompts server as the person's server `edge`, an agent
/// started on the fake provider (answering `replies` in order).
fn start(replies: Vec<Reply>) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Note.md"), "# Note\n\nFirst words.\n").unwrap();
    let gate = tmp.path().join("gate");
    std::fs::create_dir_all(&gate).unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let toml = common::python_server_toml(
        "edge",
        "edge_prompts.py",
        &format!(
            "timeout_secs = 30\nenv = {{ EDGE_GATE = {:?} }}\n",
            gate.display().to_string()
        ),
    );
    let config = vaultchat::config::Config::parse(&toml, Path::new("config.toml")).unwrap();
    let fake = FakeLlm::start(replies);
    let model = "claude-sonnet-4-5".to_string();
    let launch = Launch {
        vault: vaultchat::vault::Vault::open(&vault).unwrap(),
        paths: vaultchat::config::Paths::under(&data),
        config,
        provider: Some(ProviderChoice {
            settings: vaultchat::llm::ProviderSettings::new(
                vaultchat::llm::ProviderKind::Anthropic,
                fake.base_url.clone(),
                Some("sk-ant-test".into()),
            ),
            model: model.clone(),
        }),
        provider_problem: None,
        provider_name: "anthropic".into(),
        model,
        theme: "dark".into(),
        keymap: "default".into(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let host = {
        let _entered = runtime.enter();
        Host::start(Arc::new(launch))
    };
    let mut setup = Setup {
        _tmp: tmp,
        vault,
        gate,
        fake,
        runtime,
        host,
    };
    // The host starts the first agent itself once the vault is open.
    let (mut ready, mut servers, mut agent) = (false, false, false);
    setup.wait_for("the vault, the MCP servers and the agent", |event| {
        ready |= matches!(event, HostEvent::Ready(Ok(())));
        servers |= matches!(event, HostEvent::McpStarted { failed } if failed.is_empty());
        agent |= matches!(event, HostEvent::AgentStarted { .. });
        ready && servers && agent
    });
    setup
}

impl Setup {
    /// Take the host's events until `done` says so; fails after [`WAIT`] without it.
    fn wait_for(&mut self, what: &str, mut done: impl FnMut(&HostEvent) -> bool) {
        let events: &mut UnboundedReceiver<HostEvent> = &mut self.host.events;
        let found = self.runtime.block_on(async {
            let deadline = tokio::time::Instant::now() + WAIT;
            loop {
                match tokio::time::timeout_at(deadline, events.recv()).await {
                    Ok(Some(event)) if done(&event) => return true,
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => return false,
                }
            }
        });
        assert!(found, "{what} did not come within {WAIT:?}");
    }

    /// Wait for the end of a turn, and return it with the agent's notices that came before it.
    fn turn_done(&mut self) -> (TurnOutcome, Vec<String>) {
        let (mut outcome, mut notices) = (None, Vec::new());
        self.wait_for("the end of a turn", |event| match event {
            HostEvent::Agent {
                event: AgentEvent::TurnDone(done),
                ..
            } => {
                outcome = Some(done.clone());
                true
            }
            HostEvent::Agent {
                event: AgentEvent::Notice(notice),
                ..
            } => {
                notices.push(notice.clone());
                false
            }
            _ => false,
        });
        (outcome.unwrap(), notices)
    }

    fn run_slow_command(&self) {
        self.host.send(Request::RunCommand {
            name: "edge:slow".into(),
            args: String::new(),
            context: NoteContext::default(),
        });
    }

    /// Wait until the server has the command's `prompts/get` in hand (it says so in a file).
    fn wait_until_the_prompt_is_pending(&self) {
        let started = self.gate.join("started");
        let deadline = std::time::Instant::now() + WAIT;
        while !started.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the server never got the command's prompts/get"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn release_the_prompt(&self) {
        std::fs::write(self.gate.join("release"), "go").unwrap();
    }

    fn message(&self, text: &str) {
        self.host.send(Request::Agent(Op::UserTurn {
            text: text.into(),
            attachments: Vec::new(),
            context: NoteContext::default(),
        }));
    }
}

#[test]
fn a_slow_prompt_holds_up_neither_the_notes_nor_the_order_of_the_agents_ops() {
    let mut s = start(vec![reply("Command answered."), reply("After answered.")]);
    s.run_slow_command();
    s.wait_until_the_prompt_is_pending();

    // The person opens and saves a note while the server still has the prompt.
    s.host.send(Request::OpenNote("Note".into()));
    let mut opened = None;
    s.wait_for("the note opened while the prompt was pending", |event| {
        if let HostEvent::NoteOpened { path, note } = event {
            opened = Some((path.clone(), note.clone()));
            return true;
        }
        false
    });
    let (path, read) = opened.unwrap();
    s.host.send(Request::SaveNote {
        path: path.clone(),
        text: "# Note\n\nSaved while the prompt was pending.\n".into(),
        read,
        agent_edit: false,
    });
    let mut saved = None;
    s.wait_for("the save while the prompt was pending", |event| {
        if let HostEvent::Saved { result, .. } = event {
            saved = Some(result.clone());
            return true;
        }
        false
    });
    let written = saved.unwrap().unwrap();
    assert_eq!(
        std::fs::read_to_string(s.vault.join("Note.md")).unwrap(),
        "# Note\n\nSaved while the prompt was pending.\n"
    );
    assert!(
        !s.gate.join("release").exists() && s.fake.requests().is_empty(),
        "the save came while the command was still pending"
    );

    // A message sent after the command reaches the agent after it: in practice while the
    // command's turn runs, so the agent answers it as any message sent during a turn (the app
    // keeps such a message in its box; here it shows the order), else as the next turn. A save
    // after the message still goes through at once, so the host has taken the message by the
    // time the gate opens.
    s.message("AFTER-THE-COMMAND");
    s.host.send(Request::SaveNote {
        path,
        text: "# Note\n\nSaved again.\n".into(),
        read: written,
        agent_edit: false,
    });
    s.wait_for("the second save", |event| {
        matches!(event, HostEvent::Saved { result: Ok(_), .. })
    });
    s.release_the_prompt();
    let (done, notices) = s.turn_done();
    assert_eq!(
        done.reply, "Command answered.",
        "the command's turn came first"
    );
    let during = notices
        .iter()
        .any(|n| n.contains("a turn is already running"));
    if !during {
        let (after, _) = s.turn_done();
        assert_eq!(after.reply, "After answered.");
    }
    let requests = s.fake.requests();
    assert_eq!(requests.len(), if during { 1 } else { 2 });
    assert!(
        requests[0].last_user_text().contains("SLOW-PROMPT: go on."),
        "the command's turn came first: {}",
        requests[0].raw_body
    );
    if !during {
        assert!(requests[1].last_user_text().contains("AFTER-THE-COMMAND"));
    }
}

#[test]
fn esc_cancels_a_pending_prompt_and_the_next_message_runs_at_once() {
    let mut s = start(vec![reply("After answered.")]);
    s.run_slow_command();
    s.wait_until_the_prompt_is_pending();
    s.host.send(Request::Agent(Op::Interrupt));
    let mut cancelled = None;
    s.wait_for("the command cancelled", |event| {
        if let HostEvent::CommandCancelled(name) = event {
            cancelled = Some(name.clone());
            return true;
        }
        false
    });
    assert_eq!(cancelled.as_deref(), Some("edge:slow"));

    s.message("AFTER-THE-CANCEL");
    let (done, _) = s.turn_done();
    assert_eq!(done.reply, "After answered.");
    let requests = s.fake.requests();
    assert_eq!(requests.len(), 1, "the cancelled command sent nothing");
    assert!(requests[0].last_user_text().contains("AFTER-THE-CANCEL"));
    // The gate stays shut: the server still holds the abandoned request, and nothing waits on it.
    s.release_the_prompt();
}
