//! The person's and the vault's commands typed in the chat, on a real host: the host finds the
//! command (the vault's only once trusted, saying why not), makes its prompt and hands it to the
//! agent, or refuses with a line that names what is wrong; a refusal leaves the chat idle.
//! (This host has no provider, so a prepared command ends at "there is no agent to answer".)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::host::HostEvent;
use crate::tui::app::{AgentState, App};
use crate::tui::keymap::Keymap;
use crate::tui::testing::draw_app as draw;
use crate::tui::testing::{LiveHost, app_with};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

fn press(app: &mut App, code: KeyCode) {
    app.on_terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn command(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter);
}

/// Type `text` and carry events until the host refuses the command (its message) or sends it
/// to the agent (`None`: with no agent here, the host says there is none).
fn run(live: &mut LiveHost, app: &mut App, text: &str) -> Option<String> {
    command(app, text);
    let mut refused = None;
    let mut sent = false;
    assert!(
        live.pump_until(app, |_, event| match event {
            Some(HostEvent::CommandRefused(message)) => {
                refused = Some(message.clone());
                true
            }
            Some(HostEvent::AgentUnavailable) => {
                sent = true;
                true
            }
            _ => false,
        }),
        "the host neither ran nor refused {text}"
    );
    assert!(sent || refused.is_some());
    if refused.is_some() {
        // A refused line is back in the message box, to be mended and sent again.
        assert_eq!(
            app.input.take(),
            text,
            "the refused line is not back in the box"
        );
    }
    refused
}

#[test]
fn commands_typed_in_the_chat_run_through_the_host_or_say_why_not() {
    let mut live = LiveHost::new(&[
        ("Plan.md", "---\ntags: [project]\n---\n# Plan\n"),
        (
            ".vaultchat/commands/weekly-review.md",
            "---\ndescription: Review the week\n---\nReview {{args}}\n",
        ),
    ]);
    let own = live.dir.path().join("data/commands");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(
        own.join("inbox.md"),
        "File {{args}}; projects: {{tag:project}}\n",
    )
    .unwrap();
    std::fs::write(own.join("typo.md"), "Hello {{nite}}\n").unwrap();
    let mut app = app_with(Keymap::default_map());
    live.start(&mut app);

    let why = run(&mut live, &mut app, "/weekly-review garden").unwrap();
    assert!(why.contains("/weekly-review is not a command"), "{why}");
    assert!(why.contains("not offered until you trust"), "{why}");
    assert_eq!(
        *app.state(),
        AgentState::Idle,
        "a refused command starts no turn"
    );
    let screen = draw(&mut app, 80, 24);
    assert!(
        screen.contains("/weekly-review garden"),
        "typed as shown: {screen}"
    );

    let why = run(&mut live, &mut app, "/typo").unwrap();
    assert!(why.contains("unknown placeholder {{nite}}"), "{why}");
    assert_eq!(*app.state(), AgentState::Idle);

    let why = run(&mut live, &mut app, "/nosuch").unwrap();
    assert!(
        why.starts_with(
            "/nosuch is not a command; `vaultchat commands` lists every one (/help the built-in ones)"
        ),
        "{why}"
    );

    // The person's own command is made into a prompt and handed to the agent (none here).
    assert_eq!(run(&mut live, &mut app, "/inbox today"), None);

    // Once the vault's .vaultchat/ folder is trusted, its command runs too.
    let vault = crate::vault::Vault::open(&live.root).unwrap();
    crate::mcp::plugins::VaultPlugins::trust_now(&vault, &live.database);
    assert_eq!(run(&mut live, &mut app, "/weekly-review garden"), None);
}

#[test]
fn a_command_typed_while_a_turn_runs_stays_in_the_message_box() {
    let mut app = app_with(Keymap::default_map());
    app.on_agent_event(crate::agent::AgentEvent::TurnStarted {
        session_id: "4f1c2a9be0d3aa71".into(),
    });
    assert_ne!(*app.state(), AgentState::Idle);
    command(&mut app, "/weekly-review the garden and the shed");
    assert_eq!(app.input.text(), "/weekly-review the garden and the shed");
    let effects = app.take_effects();
    assert!(
        !effects.iter().any(|e| matches!(
            e,
            crate::tui::app::Effect::Host(crate::host::Request::RunCommand { .. })
        )),
        "{effects:?}"
    );
}

/// Esc while an MCP prompt is still being made: the host cancels the command (decisions §71);
/// the chat is idle again, the command is back in the box to run again, and the transcript says
/// nothing was sent.
#[test]
fn a_command_cancelled_before_its_prompt_came_leaves_the_chat_idle_with_it_in_the_box() {
    let mut app = app_with(Keymap::default_map());
    command(&mut app, "/notes:summarize gardening");
    assert_eq!(*app.state(), AgentState::Thinking);
    let effects = app.take_effects();
    assert!(
        effects.iter().any(|e| matches!(
            e,
            crate::tui::app::Effect::Host(crate::host::Request::RunCommand { .. })
        )),
        "{effects:?}"
    );
    press(&mut app, KeyCode::Esc);
    assert!(
        app.take_effects().iter().any(|e| matches!(
            e,
            crate::tui::app::Effect::Agent(crate::agent::Op::Interrupt)
        )),
        "Esc asks the host to interrupt"
    );
    app.on_host(HostEvent::CommandCancelled("notes:summarize".into()));
    assert_eq!(*app.state(), AgentState::Idle);
    assert_eq!(app.input.text(), "/notes:summarize gardening");
    let screen = draw(&mut app, 80, 24);
    assert!(
        screen.contains("/notes:summarize cancelled before its prompt came"),
        "{screen}"
    );
    insta::assert_snapshot!("command_cancelled_80x24", screen);
}

/// A message that starts with a pasted path is sent to the model as typed, and `//` sends one
/// that starts with `/` (`//tmp is full`); neither is run as a command (the host is never asked).
#[test]
fn a_pasted_path_or_double_slash_is_a_message_not_a_command() {
    use crate::agent::Op;
    use crate::tui::app::Effect;
    for (typed, sent) in [
        (
            "/home/me/notes/a.md is broken, why?",
            "/home/me/notes/a.md is broken, why?",
        ),
        ("//tmp is full", "/tmp is full"),
    ] {
        let mut app = app_with(Keymap::default_map());
        let _ = app.take_effects();
        command(&mut app, typed);
        let effects = app.take_effects();
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, Effect::Agent(Op::UserTurn { text, .. }) if text == sent)),
            "{typed:?}: {effects:?}"
        );
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, Effect::Host(crate::host::Request::RunCommand { .. }))),
            "{typed:?}: {effects:?}"
        );
        let screen = draw(&mut app, 80, 24);
        assert!(screen.contains(sent), "{screen}");
    }
}
