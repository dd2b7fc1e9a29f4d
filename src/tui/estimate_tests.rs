//! The status bar when the server reported no usage: `~` before the token figure and the
//! context share, at 80×24 (insta snapshot) and as the figures change.

use super::app::SessionInfo;
use super::keymap::Keymap;
use super::testing::{draw_app as draw, session_info};
use super::theme::Theme;
use crate::agent::AgentEvent;
use crate::protocol::Usage;

/// A local model on an OpenAI-compatible server with an 8k window.
fn local_app() -> super::app::App {
    let mut app = super::app::App::new(
        Theme::builtin_dark(),
        Keymap::default_map(),
        SessionInfo {
            provider: "openai".into(),
            model: "smol".into(),
            context_window: 8_192,
            ..session_info()
        },
    );
    app.on_ready();
    app
}

fn status_row(screen: &str) -> String {
    screen.lines().last().unwrap_or_default().to_string()
}

fn usage(input: u64, output: u64, estimated: bool) -> AgentEvent {
    AgentEvent::Usage(Usage {
        input_tokens: input,
        output_tokens: output,
        estimated,
        ..Usage::default()
    })
}

#[test]
fn estimated_usage_is_marked_in_the_status_bar() {
    let mut app = local_app();
    app.transcript.push_user("Say hello");
    app.on_agent_event(AgentEvent::TextDelta(
        "Hello, welcome to the world of science fiction! I'm".into(),
    ));
    app.on_agent_event(usage(1_120, 14, true));
    let screen = draw(&mut app, 80, 24);
    let status = status_row(&screen);
    assert!(status.contains("smol · ~1.1k tok · ctx ~13%"), "{status}");
    insta::assert_snapshot!("status_estimated_usage_80x24", screen);
}

#[test]
fn reported_usage_has_no_mark_and_a_mix_is_estimated() {
    let mut app = local_app();
    app.on_agent_event(usage(1_000, 10, false));
    let status = status_row(&draw(&mut app, 80, 24));
    assert!(status.contains("smol · 1k tok · ctx 12%"), "{status}");
    // One estimated response makes the session's sum an estimate, and the last request's size.
    app.on_agent_event(usage(1_200, 20, true));
    let status = status_row(&draw(&mut app, 80, 24));
    assert!(status.contains("~2.2k tok · ctx ~14%"), "{status}");
    // The next request was reported: its size is exact again, the session's sum stays marked.
    app.on_agent_event(usage(1_300, 20, false));
    let status = status_row(&draw(&mut app, 80, 24));
    assert!(status.contains("~3.6k tok · ctx 16%"), "{status}");
}
