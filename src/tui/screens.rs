//! Whole-screen states of the app, as a person sees them, at 80×24 and 120×40 (insta snapshots),
//! plus resizing from 1×1 to 300×100 and the theme role sheets.

use super::app::{App, Effect, SessionInfo};
use super::keymap::Keymap;
use super::testing::{buffer, style_at};
use super::theme::{Role, Theme};
use crate::agent::{
    AgentEvent, CallDecision, PermissionRequest, Proposal, ToolCallRecord, TurnEnd, TurnOutcome,
};
use crate::protocol::Usage;
use crate::protocol::{Fingerprint, NoteText, TextFormat};
use crate::text::diff::TextDiff;
use crate::tui::testing::draw_app as draw;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

const NOTE: &str = "---\ntags: [garden]\n---\n# Garden plan\n\nPlant **tomatoes** in May, see [[Seeds]].\n\n- basil\n- beans #todo\n\n```http id=login env=dev\nGET /api\n```\n\nWater them daily.\n";

fn app() -> App {
    app_with(Keymap::default_map())
}

fn app_with(keymap: Keymap) -> App {
    let mut app = App::new(
        Theme::builtin_dark(),
        keymap,
        SessionInfo {
            price: Some(crate::config::Price {
                input: 3.0,
                output: 15.0,
                cache_read: Some(0.3),
                cache_write: Some(3.75),
            }),
            ..super::testing::session_info()
        },
    );
    app.on_ready();
    app
}

fn note(text: &str) -> NoteText {
    NoteText {
        text: text.into(),
        format: TextFormat::default(),
        fingerprint: Fingerprint {
            hash: 1,
            mtime_ns: 0,
            size: text.len() as u64,
        },
    }
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_terminal(key(KeyCode::Char(c)));
    }
}

fn request(id: u64, before: &str, after: &str) -> PermissionRequest {
    PermissionRequest {
        id,
        call_id: format!("call_{id}"),
        tool: "update_note".into(),
        input: json!({"note": "Projects/Plan.md"}),
        paths: vec!["Projects/Plan.md".into()],
        proposal: Some(Proposal {
            summary: "update Projects/Plan.md".into(),
            path: "Projects/Plan.md".into(),
            diff: TextDiff::new(before, after),
            files: Vec::new(),
        }),
        offer_session: true,
        offer_always: true,
        reason: "update_note changes the vault".into(),
    }
}

/// A conversation in progress: a question, a tool call, a streamed reply.
fn conversation(app: &mut App) {
    app.transcript.push_user("When do I plant tomatoes?");
    app.on_agent_event(AgentEvent::TurnStarted {
        session_id: "4f1c2a9be0d3aa71".into(),
    });
    app.on_agent_event(AgentEvent::ToolCallStarted {
        id: "t1".into(),
        name: "search_notes".into(),
        input: json!({"query": "tomatoes"}),
    });
    app.on_agent_event(AgentEvent::ToolCallFinished(ToolCallRecord {
        id: "t1".into(),
        name: "search_notes".into(),
        input: json!({"query": "tomatoes"}),
        is_error: false,
        decision: CallDecision::Allowed,
        result: "[{\"path\":\"Projects/Plan.md\"}]".into(),
    }));
    app.on_agent_event(AgentEvent::Usage(Usage {
        input_tokens: 1200,
        output_tokens: 80,
        cache_read_input_tokens: 3000,
        cache_creation_input_tokens: 0,
        estimated: false,
    }));
    for delta in [
        "According to **Projects/Plan.md** you plant ",
        "tomatoes in May:\n\n",
        "```\nPlant tomatoes in May.\n```\n",
    ] {
        app.on_agent_event(AgentEvent::TextDelta(delta.into()));
    }
}

fn both_sizes(name: &str, app: &mut App) {
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
    insta::assert_snapshot!(format!("{name}_120x40"), draw(app, 120, 40));
}

#[test]
fn empty_start() {
    let mut app = app();
    both_sizes("app_empty", &mut app);
    assert_eq!(
        app.focus(),
        super::app::Pane::Chat,
        "the chat has the keyboard at start-up"
    );
}

#[test]
fn streaming_reply_with_a_tool_cell() {
    let mut app = app();
    conversation(&mut app);
    both_sizes("app_streaming", &mut app);
}

#[test]
fn finished_turn_with_a_note_open() {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    conversation(&mut app);
    app.on_agent_event(AgentEvent::TurnDone(TurnOutcome {
        session_id: "4f1c2a9be0d3aa71".into(),
        reply: String::new(),
        stop_reason: TurnEnd::EndTurn,
        steps: 2,
        tool_calls: vec![],
        edits: vec![],
        usage: Usage::default(),
        error: None,
        warnings: Vec::new(),
    }));
    both_sizes("app_note_and_chat", &mut app);
}

#[test]
fn banner_small_and_queued() {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    conversation(&mut app);
    app.on_agent_event(AgentEvent::PermissionRequested(request(
        1,
        NOTE,
        &NOTE.replace(
            "Plant **tomatoes** in May",
            "Plant **tomatoes** in late April",
        ),
    )));
    both_sizes("app_banner_small", &mut app);
    app.on_agent_event(AgentEvent::PermissionRequested(request(2, "a\n", "b\n")));
    both_sizes("app_banner_queued", &mut app);
}

#[test]
fn the_banner_answers_go_to_the_agent_and_enter_alone_denies() {
    let mut app = app();
    app.on_agent_event(AgentEvent::PermissionRequested(request(7, "a\n", "b\n")));
    app.on_terminal(key(KeyCode::Enter));
    let effects = app.take_effects();
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Agent(crate::agent::Op::Decision {
                request: 7,
                answer: crate::protocol::Answer::Deny { .. },
                ..
            })]
        ),
        "{effects:?}"
    );
    app.on_agent_event(AgentEvent::PermissionRequested(request(8, "a\n", "b\n")));
    app.on_terminal(key(KeyCode::Char('y')));
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::Agent(crate::agent::Op::Decision {
            request: 8,
            answer: crate::protocol::Answer::Once,
            hunks: None
        })]
    ));
}

#[test]
fn conflict_banner_in_the_editor() {
    // With autosave these two changes (different lines) would merge by themselves.
    let mut app = app().with_autosave(crate::tui::saving::AutosaveSettings {
        enabled: false,
        ..Default::default()
    });
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    type_text(&mut app, "X");
    app.on_disk_change(note(
        &NOTE.replace("Water them daily.", "Water them weekly."),
    ));
    assert!(app.editor.conflict());
    both_sizes("app_conflict", &mut app);
}

#[test]
fn stacked_and_maximised_layouts() {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    conversation(&mut app);
    insta::assert_snapshot!("app_stacked_80x24", draw(&mut app, 80, 24));
    app.on_terminal(Event::Key(KeyEvent::new(
        KeyCode::Char('z'),
        KeyModifiers::ALT,
    )));
    insta::assert_snapshot!("app_maximised_editor_120x40", draw(&mut app, 120, 40));
}

#[test]
fn sending_a_message_queues_a_turn_with_the_note_context() {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    app.on_terminal(Event::Key(KeyEvent::new(
        KeyCode::Char('o'),
        KeyModifiers::CONTROL,
    )));
    type_text(&mut app, "summarise");
    app.on_terminal(key(KeyCode::Enter));
    match app.take_effects().as_slice() {
        [Effect::Agent(crate::agent::Op::UserTurn { text, context, .. })] => {
            assert_eq!(text, "summarise");
            let focused = context.note.as_ref().expect("the open note is the context");
            assert_eq!(focused.path, "Projects/Plan.md");
            assert!(focused.in_editor);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn agent_edits_apply_to_the_buffer_as_one_undo_step() {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    let after = NOTE.replace("Water them daily.", "Water them at dawn.");
    app.on_agent_event(AgentEvent::EditorEdit {
        id: 1,
        path: "Projects/Plan.md".into(),
        before: NOTE.into(),
        after: after.clone(),
    });
    assert_eq!(app.editor.text(), after);
    assert!(app.editor.is_dirty());
    app.editor.handle(super::keymap::Action::Undo);
    assert_eq!(app.editor.text(), NOTE);
}

#[test]
fn resizing_never_panics() {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    conversation(&mut app);
    app.on_agent_event(AgentEvent::PermissionRequested(request(1, NOTE, "x\n")));
    for (w, h) in [
        (1, 1),
        (2, 1),
        (1, 5),
        (10, 3),
        (40, 10),
        (79, 23),
        (99, 30),
        (100, 30),
        (300, 100),
    ] {
        let _ = draw(&mut app, w, h);
    }
}

#[test]
fn status_bar_shows_model_tokens_context_and_cost() {
    let mut app = app();
    conversation(&mut app);
    let screen = draw(&mut app, 120, 40);
    let status = screen.lines().nth(39).unwrap_or_default();
    assert!(status.contains("claude-sonnet-4-5"), "{status}");
    assert!(status.contains("4.3k tok"), "{status}");
    assert!(status.contains("ctx 2%"), "{status}");
    assert!(status.contains("$0.01"), "{status}");
    assert!(status.contains("garden-vault"), "{status}");
}

/// With `[privacy] local_only` the status bar says so beside the vault, at 80 columns too.
#[test]
fn status_bar_says_local_only() {
    let mut app = App::new(
        Theme::builtin_dark(),
        Keymap::default_map(),
        SessionInfo {
            model: "qwen3:8b".into(),
            local_only: true,
            ..super::testing::session_info()
        },
    );
    app.on_ready();
    let screen = draw(&mut app, 80, 24);
    insta::assert_snapshot!("app_local_only_80x24", screen);
    let status = screen.lines().nth(23).unwrap_or_default();
    assert!(status.contains("garden-vault │ local only"), "{status}");
    assert!(status.contains("qwen3:8b"), "{status}");
}

/// The status bar counts tokens as the usage view does (`views::compact`): whole thousands from
/// 10k, and never `1000.0k` just under a million.
#[test]
fn status_bar_counts_tokens_as_the_usage_view_does() {
    for (tokens, shown) in [
        (45_000, "45k tok"),
        (999_999, "1M tok"),
        (4_321, "4.3k tok"),
    ] {
        let mut app = app();
        app.on_agent_event(AgentEvent::Usage(Usage {
            input_tokens: tokens,
            ..Usage::default()
        }));
        let screen = draw(&mut app, 120, 40);
        let status = screen.lines().nth(39).unwrap_or_default();
        assert!(status.contains(shown), "{tokens}: {status}");
    }
}

/// Each theme's role sheet: every role with its colours and modifiers, so a change to a theme
/// shows up in review.
#[test]
fn role_sheets() {
    for name in Theme::builtin_names() {
        let (theme, errors) = Theme::load(name, None);
        assert!(errors.is_empty());
        let mut sheet = String::new();
        for role in Role::ALL {
            let style = theme.style(*role);
            sheet.push_str(&format!(
                "{:<18} fg={:<22} bg={:<22} {:?}\n",
                role.name(),
                format!("{:?}", style.fg),
                format!("{:?}", style.bg),
                style.add_modifier
            ));
        }
        insta::assert_snapshot!(format!("role_sheet_{name}"), sheet);
    }
}

#[test]
fn diff_lines_in_the_banner_use_the_diff_roles() {
    let mut app = app();
    app.on_agent_event(AgentEvent::PermissionRequested(request(
        1,
        "keep\nold line\n",
        "keep\nnew line\n",
    )));
    let mut buf = buffer(100, 30);
    app.render(buf.area, &mut buf);
    let added = style_at(&buf, "new line").expect("the added line is shown");
    let removed = style_at(&buf, "old line").expect("the removed line is shown");
    assert_eq!(added.fg, app.theme.style(Role::DiffAdded).fg);
    assert_eq!(removed.fg, app.theme.style(Role::DiffRemoved).fg);
}

#[test]
fn a_paste_into_the_editor_is_one_undo_step() {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    app.on_terminal(Event::Paste("line one\nline two\n".into()));
    assert!(
        app.editor.text().starts_with("line one\nline two\n"),
        "{}",
        app.editor.text()
    );
    app.editor.handle(super::keymap::Action::Undo);
    assert_eq!(app.editor.text(), NOTE);
}

#[test]
fn an_open_tools_view_is_reloaded_when_the_mcp_servers_have_started() {
    let mut app = app();
    app.on_mcp_started();
    assert!(
        app.take_effects().is_empty(),
        "nothing to reload without the view"
    );
    let key = |app: &mut App, code: KeyCode| {
        app.on_terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    };
    for c in "/mcp".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    key(&mut app, KeyCode::Enter);
    let effects = app.take_effects();
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Host(crate::host::Request::ListTools { .. }))),
        "{effects:?}"
    );
    let tools = || crate::tui::views::tools::ToolsView::new(vec![], vec![]);
    app.show_tools(tools());
    assert!(draw(&mut app, 120, 40).contains("Tools · "));
    app.on_mcp_started();
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::Host(crate::host::Request::ListTools { .. })]
    ));
    // The person closes the view and types on before the reload's list comes: the list must not
    // open the view again over the message being typed.
    key(&mut app, KeyCode::Esc);
    for c in "hello".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    app.show_tools(tools());
    key(&mut app, KeyCode::Char('!'));
    let screen = draw(&mut app, 120, 40);
    assert!(!screen.contains("Tools · "), "{screen}");
    assert_eq!(app.input.text(), "hello!");
}

#[test]
fn the_empty_chat_names_the_help_key_of_the_key_map_in_use() {
    let screen = draw(&mut app(), 120, 40);
    assert!(screen.contains("f1 for help"), "{screen}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("keymap.toml"),
        "version = 1\n[global]\nshow_help = \"f9\"\n",
    )
    .unwrap();
    let (keymap, errors) = Keymap::load("default", Some(dir.path()));
    assert!(errors.is_empty(), "{errors:?}");
    let screen = draw(&mut app_with(keymap), 120, 40);
    assert!(screen.contains("f9 for help"), "{screen}");
    assert!(!screen.contains("f1 for help"), "{screen}");
}

/// A recovery as the host finds it: the newest file of its note, none older.
fn kept_in_file(recovery: crate::host::recovery::Recovery) -> crate::host::recovery::Kept {
    crate::host::recovery::Kept {
        file: "0123.1.json".into(),
        recovery,
        older: 0,
    }
}

/// A note longer than the editor: 60 numbered lines, under a heading.
fn long_note() -> String {
    let mut text = String::from("# Daily log\n\n");
    for i in 1..=60 {
        text.push_str(&format!("Line {i} of the log.\n"));
    }
    text
}

#[test]
fn an_approved_edit_at_the_bottom_of_a_long_note_scrolls_into_view() {
    let mut app = app();
    let before = long_note();
    app.on_note_opened("Journal/Log.md", note(&before));
    draw(&mut app, 80, 24);
    assert_eq!(app.editor.visible_lines().map(|(first, _)| first), Some(0));
    let after = before.replace(
        "Line 58 of the log.",
        "Line 58 of the log, rewritten by the agent.",
    );
    app.on_agent_event(AgentEvent::EditorEdit {
        id: 1,
        path: "Journal/Log.md".into(),
        before: before.clone(),
        after: after.clone(),
    });
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("rewritten by the agent"), "{screen}");
    // The cursor did not move: it is still at the top of the note.
    assert_eq!(app.editor.cursor_line_col(), (0, 0));
    insta::assert_snapshot!("app_editor_after_approved_edit_at_bottom_80x24", screen);
    // The next key brings the view back to the cursor.
    app.on_terminal(key(KeyCode::Right));
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("# Daily log"), "{screen}");
}

#[test]
fn an_approved_edit_leaves_the_view_alone_while_the_person_types() {
    let mut app = app();
    let before = long_note();
    app.on_note_opened("Journal/Log.md", note(&before));
    draw(&mut app, 80, 24);
    // The person is typing at the top of the note.
    type_text(&mut app, "Today ");
    let typed = app.editor.text();
    let after = typed.replace(
        "Line 58 of the log.",
        "Line 58 of the log, rewritten by the agent.",
    );
    app.on_agent_event(AgentEvent::EditorEdit {
        id: 1,
        path: "Journal/Log.md".into(),
        before: typed,
        after,
    });
    let screen = draw(&mut app, 80, 24);
    assert!(app.editor.text().contains("rewritten by the agent"));
    assert!(screen.contains("Today # Daily log"), "{screen}");
    assert!(!screen.contains("rewritten by the agent"), "{screen}");
}

#[test]
fn kept_changes_are_offered_when_their_note_opens_and_restore_puts_them_in_the_editor() {
    let mut app = app();
    app.on_note_opened("Projects/Plan.md", note(NOTE));
    let kept = NOTE.replace(
        "Water them daily.",
        "Water them daily, typed before the logout.",
    );
    // Kept 2026-12-04 09:30 UTC.
    app.on_host(crate::host::HostEvent::RecoveryFound(kept_in_file(
        crate::host::recovery::Recovery {
            vault: "/vault".into(),
            path: "Projects/Plan.md".into(),
            written_ms: 1_796_376_600_000,
            text: kept.clone(),
        },
    )));
    // The host compares it with the note (off the loop) and sends the diff after.
    app.on_host(crate::host::HostEvent::RecoveryCompared {
        path: "Projects/Plan.md".into(),
        file: "0123.1.json".into(),
        diff: crate::text::diff::DiffPreview::new(NOTE, &kept, 6),
    });
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("Recovered changes"), "{screen}");
    assert!(screen.contains("2026-12-04 09:30"), "{screen}");
    assert!(
        screen.contains("+ Water them daily, typed before the logout."),
        "{screen}"
    );
    insta::assert_snapshot!("app_recovery_offer_80x24", screen);
    // Nothing changed before the answer.
    assert_eq!(app.editor.text(), NOTE);
    app.take_effects();
    app.on_terminal(key(KeyCode::Enter));
    assert_eq!(app.editor.text(), kept);
    assert!(app.editor.is_dirty(), "restored text is unsaved");
    // The recovery file stays until the restored text is saved (the app may end before).
    let forgot = |effects: &[Effect]| {
        effects.iter().any(|e| {
            matches!(
                e,
                Effect::Host(crate::host::Request::ForgetRecovery { path, .. }) if path == "Projects/Plan.md"
            )
        })
    };
    let effects = app.take_effects();
    assert!(!forgot(&effects), "{effects:?}");
    app.on_terminal(Event::Key(KeyEvent::new(
        KeyCode::Char('s'),
        KeyModifiers::CONTROL,
    )));
    app.on_save_finished("Projects/Plan.md", Ok(note(&kept)));
    let effects = app.take_effects();
    assert!(forgot(&effects), "{effects:?}");
    assert!(!draw(&mut app, 80, 24).contains("Recovered changes"));
}

#[test]
fn kept_changes_can_be_discarded_or_left_for_later() {
    for (keys, forgotten) in [
        (vec![KeyCode::Right, KeyCode::Enter], true),
        (vec![KeyCode::Esc], false),
    ] {
        let mut app = app();
        app.on_note_opened("Projects/Plan.md", note(NOTE));
        app.on_host(crate::host::HostEvent::RecoveryFound(kept_in_file(
            crate::host::recovery::Recovery {
                vault: "/vault".into(),
                path: "Projects/Plan.md".into(),
                written_ms: 0,
                text: format!("{NOTE}kept\n"),
            },
        )));
        app.take_effects();
        for code in keys {
            app.on_terminal(key(code));
        }
        assert_eq!(app.editor.text(), NOTE);
        let effects = app.take_effects();
        let forgot = effects
            .iter()
            .any(|e| matches!(e, Effect::Host(crate::host::Request::ForgetRecovery { .. })));
        assert_eq!(forgot, forgotten, "{effects:?}");
        assert!(!draw(&mut app, 80, 24).contains("Recovered changes"));
    }
    // An offer for a note no longer open is not shown.
    let mut app = app();
    app.on_note_opened("Other.md", note(NOTE));
    app.on_host(crate::host::HostEvent::RecoveryFound(kept_in_file(
        crate::host::recovery::Recovery {
            vault: "/vault".into(),
            path: "Projects/Plan.md".into(),
            written_ms: 0,
            text: "x".into(),
        },
    )));
    assert!(!draw(&mut app, 80, 24).contains("Recovered changes"));
}
