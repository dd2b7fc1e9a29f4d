//! A notice or an error in the status bar comes from outside the app as often as not (an MCP
//! server's failure, a hook's last line of output, a vault file's name): whatever it holds is
//! drawn as visible text, never written to the terminal as a control sequence.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::host::HostEvent;
use crate::tui::keymap::Keymap;
use crate::tui::testing::{app_with, draw_app as draw};

#[test]
fn a_notice_with_control_characters_is_drawn_escaped() {
    let mut app = app_with(Keymap::default_map());
    app.on_host(HostEvent::Notice(
        "server said \u{1b}]52;c;ZXZpbA==\u{7} then \u{1b}[2J".into(),
    ));
    let screen = draw(&mut app, 120, 40);
    assert!(!screen.contains('\u{1b}'), "{screen:?}");
    assert!(!screen.contains('\u{7}'), "{screen:?}");
    assert!(
        screen.contains("server said \\u{1b}]52;c;ZXZpbA=="),
        "{screen}"
    );

    // A message too long for the status bar goes on rows above it: escaped there too.
    let long = format!("{} \u{1b}[31mred", "word ".repeat(40));
    app.on_error(long);
    let screen = draw(&mut app, 80, 24);
    assert!(!screen.contains('\u{1b}'), "{screen:?}");
    assert!(screen.contains("\\u{1b}[31mred"), "{screen}");
}

/// A refused command's reason (an MCP server's last line of stderr among it) is escaped in the
/// chat's error line as well as in the status bar.
#[test]
fn an_error_with_control_characters_is_escaped_in_the_chat_too() {
    let mut app = app_with(Keymap::default_map());
    app.on_host(HostEvent::CommandRefused(
        "/srv:p: the server stopped: \u{1b}[2Jgone".into(),
    ));
    let screen = draw(&mut app, 120, 40);
    assert!(!screen.contains('\u{1b}'), "{screen:?}");
    assert_eq!(
        screen.matches("\\u{1b}[2Jgone").count(),
        2,
        "the chat and the status bar: {screen}"
    );
}
