//! The model's reasoning in the chat: a folded "thinking" item that counts characters while it
//! streams, unfolds with the tool-details key, and never mixes into the reply. 80×24 snapshots.

use super::app::App;
use super::chat::Cell;
use super::keymap::Keymap;
use crate::agent::{AgentEvent, CallDecision, ToolCallRecord};
use crate::tui::testing::draw_app as draw;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

const REASONING: [&str; 3] = [
    "The person asks when to plant the tomatoes. ",
    "The plan note should say; I read it before answering, ",
    "then quote the line.",
];

fn app() -> App {
    super::testing::app_with(Keymap::default_map())
}

fn toggle_details(app: &mut App) {
    app.on_terminal(Event::Key(KeyEvent::new(
        KeyCode::Char('t'),
        KeyModifiers::CONTROL,
    )));
}

/// A question the model thinks about, still thinking.
fn thinking_turn(app: &mut App) {
    app.transcript.push_user("When do I plant tomatoes?");
    app.on_agent_event(AgentEvent::TurnStarted {
        session_id: "4f1c2a9be0d3aa71".into(),
    });
    for piece in REASONING {
        app.on_agent_event(AgentEvent::ThinkingDelta(piece.into()));
    }
}

fn cells(app: &App) -> Vec<Cell> {
    (0..app.transcript.len())
        .filter_map(|id| app.transcript.cell(id).cloned())
        .collect()
}

#[test]
fn thinking_streams_as_one_folded_line_with_a_count() {
    let mut app = app();
    thinking_turn(&mut app);
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("✻ thinking… · 118 chars"), "{screen}");
    assert!(
        !screen.contains("plan note"),
        "folded while it streams:\n{screen}"
    );
    insta::assert_snapshot!("app_thinking_streaming_80x24", screen);
}

#[test]
fn the_reply_after_thinking_is_its_own_cell_and_the_thinking_unfolds() {
    let mut app = app();
    thinking_turn(&mut app);
    app.on_agent_event(AgentEvent::TextDelta("Plant them in **May**.".into()));
    let all = cells(&app);
    let [
        _,
        Cell::Thinking {
            text,
            streaming,
            expanded,
        },
        Cell::Assistant { text: reply, .. },
    ] = all.as_slice()
    else {
        panic!("{:?}", cells(&app));
    };
    assert_eq!(text, &REASONING.concat());
    assert!(!streaming && !expanded);
    assert_eq!(reply, "Plant them in **May**.");
    let folded = draw(&mut app, 80, 24);
    assert!(folded.contains("✻ thinking · 118 chars"), "{folded}");
    insta::assert_snapshot!("app_thinking_folded_80x24", folded);

    toggle_details(&mut app);
    let unfolded = draw(&mut app, 80, 24);
    assert!(
        unfolded.contains("│ The person asks when to plant the tomatoes."),
        "{unfolded}"
    );
    insta::assert_snapshot!("app_thinking_unfolded_80x24", unfolded);
    toggle_details(&mut app);
    assert_eq!(draw(&mut app, 80, 24), folded);
}

#[test]
fn thinking_in_each_step_of_a_tool_loop_gets_its_own_item() {
    let mut app = app();
    thinking_turn(&mut app);
    app.on_agent_event(AgentEvent::ToolCallStarted {
        id: "t1".into(),
        name: "read_note".into(),
        input: json!({"path": "Projects/Plan.md"}),
    });
    app.on_agent_event(AgentEvent::ToolCallFinished(ToolCallRecord {
        id: "t1".into(),
        name: "read_note".into(),
        input: json!({"path": "Projects/Plan.md"}),
        is_error: false,
        decision: CallDecision::Allowed,
        result: "# Garden plan".into(),
    }));
    app.on_agent_event(AgentEvent::ThinkingDelta("It says May.".into()));
    let kinds: Vec<&str> = cells(&app)
        .iter()
        .map(|cell| match cell {
            Cell::User { .. } => "user",
            Cell::Thinking {
                streaming: false, ..
            } => "thought",
            Cell::Thinking { .. } => "thinking",
            Cell::Tool { .. } => "tool",
            Cell::Assistant { .. } => "reply",
            Cell::Error { .. } | Cell::System { .. } | Cell::Compaction { .. } => "note",
        })
        .collect();
    assert_eq!(kinds, ["user", "thought", "tool", "thinking"]);
}

/// A turn cut off at max_tokens is said once: the agent's notice as it stopped, not again when
/// the turn's outcome (which carries the same words) arrives.
#[test]
fn the_reason_a_turn_stopped_is_said_once() {
    let mut app = app();
    let why = "the reply was cut off at the response token limit (provider.max_tokens); any tool call in it was not run";
    app.on_agent_event(AgentEvent::TextDelta("Partial".into()));
    app.on_agent_event(AgentEvent::Notice(why.into()));
    app.on_agent_event(AgentEvent::TurnDone(crate::agent::TurnOutcome {
        session_id: "s".into(),
        reply: "Partial".into(),
        stop_reason: crate::agent::TurnEnd::MaxTokens,
        steps: 1,
        tool_calls: vec![],
        edits: vec![],
        usage: Default::default(),
        error: Some(why.into()),
        warnings: Vec::new(),
    }));
    let said = cells(&app)
        .iter()
        .filter(|cell| matches!(cell, Cell::System { text } if text == why))
        .count();
    assert_eq!(said, 1, "{:?}", cells(&app));
}
