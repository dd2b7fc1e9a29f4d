//! Screens of vault plugins as a person sees them (insta snapshots at 80×24): the trust question
//! at launch, and a plugin's result drawn with the renderer its plugins file asked for.

use super::app::{App, Effect};
use super::keymap::Keymap;
use super::testing::{app_with, buffer, draw_app as draw, style_at};
use super::theme::Role;
use super::trust_prompt::{TrustChoice, TrustPrompt};
use crate::agent::{AgentEvent, CallDecision, ToolCallRecord};
use crate::mcp::plugins::Render;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn question() -> TrustPrompt {
    TrustPrompt::new(
        ".vaultchat/plugins.toml".into(),
        vec![
            (
                "tasks".into(),
                "/home/ana/.venvs/mcp/bin/python .vaultchat/tasks_plugin.py".into(),
            ),
            (
                "kanban".into(),
                "npx -y @acme/kanban-mcp --board /home/ana/Notes/Board.md".into(),
            ),
            (
                "bib".into(),
                "/home/ana/Notes/.vaultchat/bin/bibliography-server --library /home/ana/Notes/Library.bib --style apa".into(),
            ),
        ],
    )
}

fn button_style(app: &mut App, label: &str) -> Option<ratatui::style::Style> {
    let mut buf = buffer(80, 24);
    app.render(buf.area, &mut buf);
    style_at(&buf, label).map(|style| style.underline_color(ratatui::style::Color::Reset))
}

fn answer_of(app: &mut App) -> Option<TrustChoice> {
    app.take_effects().into_iter().find_map(|e| match e {
        Effect::AnswerPluginTrust(choice) => Some(choice),
        _ => None,
    })
}

#[test]
fn the_trust_question_lists_the_commands_and_takes_the_keyboard() {
    let mut app = app_with(Keymap::default_map());
    app.ask_plugin_trust(question());
    insta::assert_snapshot!("plugin_trust_question_80x24", draw(&mut app, 80, 24));
    insta::assert_snapshot!("plugin_trust_question_120x40", draw(&mut app, 120, 40));
    // Typing goes nowhere else while it is open; the arrows move to Trust, Enter answers.
    app.on_terminal(key(KeyCode::Char('x')));
    assert!(app.asking_plugin_trust());
    assert_eq!(app.input.text(), "");
    // "Not now" has the focus first (the safe answer); the arrows move it to "Trust".
    let focused = super::theme::Theme::builtin_dark()
        .style(Role::ButtonFocused)
        .underline_color(ratatui::style::Color::Reset);
    assert_eq!(button_style(&mut app, " Not now "), Some(focused));
    app.on_terminal(key(KeyCode::Right));
    assert_eq!(button_style(&mut app, " Trust    Not"), Some(focused));
    assert_ne!(button_style(&mut app, " Not now "), Some(focused));
    app.on_terminal(key(KeyCode::Enter));
    assert!(!app.asking_plugin_trust());
    assert_eq!(answer_of(&mut app), Some(TrustChoice::Trust));
}

#[test]
fn commands_that_do_not_fit_are_counted_never_cut() {
    let mut app = app_with(Keymap::default_map());
    app.ask_plugin_trust(question());
    let screen = draw(&mut app, 80, 14);
    insta::assert_snapshot!("plugin_trust_question_80x14", screen);
    assert!(
        screen.contains("… and 2 more: `vaultchat trust` lists them all"),
        "{screen}"
    );
}

#[test]
fn esc_is_not_now() {
    let mut app = app_with(Keymap::default_map());
    app.ask_plugin_trust(question());
    app.on_terminal(key(KeyCode::Right));
    app.on_terminal(key(KeyCode::Esc));
    assert_eq!(answer_of(&mut app), Some(TrustChoice::NotNow));
    let screen = draw(&mut app, 80, 24);
    assert!(!screen.contains("Trust this vault"), "{screen}");
}

fn call_tool(app: &mut App, name: &str, result: &str) {
    let input = json!({"project": "vaultchat"});
    app.on_agent_event(AgentEvent::ToolCallStarted {
        id: "t1".into(),
        name: name.into(),
        input: input.clone(),
    });
    app.on_agent_event(AgentEvent::ToolCallFinished(ToolCallRecord {
        id: "t1".into(),
        name: name.into(),
        input,
        is_error: false,
        decision: CallDecision::ApprovedOnce,
        result: result.into(),
    }));
}

const TASKS: &str = "{\"task\": \"Write the plugin docs\", \"owner\": \"ana\", \"due\": \"2026-12-04\"}\n{\"task\": \"Ship vaultchat\", \"owner\": \"bo\", \"due\": \"2026-12-11\"}";

#[test]
fn a_plugin_result_is_drawn_with_its_renderer() {
    let mut app = app_with(Keymap::default_map());
    app.transcript.set_tool_renders(
        [
            ("tasks__open_tasks".to_string(), Render::Table),
            ("tasks__notes".to_string(), Render::List),
        ]
        .into(),
    );
    app.transcript.push_user("what is open?");
    call_tool(&mut app, "tasks__open_tasks", TASKS);
    let screen = draw(&mut app, 80, 24);
    insta::assert_snapshot!("plugin_result_table_80x24", screen);
    assert!(screen.contains("Write the plugin docs"), "{screen}");

    // The same result from a tool without a renderer stays folded, as today.
    let mut plain = app_with(Keymap::default_map());
    plain.transcript.push_user("what is open?");
    call_tool(&mut plain, "tasks__open_tasks", TASKS);
    let folded = draw(&mut plain, 80, 24);
    assert!(!folded.contains("Write the plugin docs"), "{folded}");
}

#[test]
fn list_markdown_and_code_renderers() {
    let mut app = app_with(Keymap::default_map());
    app.transcript.set_tool_renders(
        [
            ("tasks__owners".to_string(), Render::List),
            ("tasks__summary".to_string(), Render::Markdown),
            ("tasks__raw".to_string(), Render::Code),
        ]
        .into(),
    );
    call_tool(&mut app, "tasks__owners", r#"["ana", "bo"]"#);
    call_tool(
        &mut app,
        "tasks__summary",
        "## This week\n\nTwo tasks are **open**.",
    );
    call_tool(&mut app, "tasks__raw", r#"{"open": 2, "done": 5}"#);
    insta::assert_snapshot!(
        "plugin_result_list_markdown_code_80x24",
        draw(&mut app, 80, 24)
    );
}
