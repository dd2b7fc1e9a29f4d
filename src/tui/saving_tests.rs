//! The saving state machine as a person drives it: keys and agent events in, effects out
//! (autosave timing, saving before leaving a note, the unsaved-changes prompt, approved agent
//! edits saved and answered), plus snapshots of the prompt and of status messages.

use super::app::{App, Effect};
use super::files::NoteEntry;
use super::keymap::Keymap;
use super::saving::AutosaveSettings;
use super::testing::buffer;
use super::theme::Theme;
use crate::agent::{AgentEvent, EditorEditResult, Op, PermissionRequest, Proposal};
use crate::protocol::NoteText;
use crate::text::diff::TextDiff;
use crate::tui::testing::draw_app as draw;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

const PATH: &str = "Projects/Plan.md";
const NOTE: &str = "# Garden plan\n\nPlant tomatoes in May, see [[Seeds]].\n\nWater them daily.\n";

fn opened_app(autosave: bool) -> App {
    let mut app = App::new(
        Theme::builtin_dark(),
        Keymap::default_map(),
        super::testing::session_info(),
    )
    .with_autosave(AutosaveSettings {
        enabled: autosave,
        ..AutosaveSettings::default()
    });
    app.on_ready();
    app.on_note_opened(PATH, note(NOTE, 1));
    app
}

fn note(text: &str, hash: u64) -> NoteText {
    super::testing::note_version(text, hash)
}

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.on_terminal(Event::Key(KeyEvent::new(code, modifiers)));
}

fn key(app: &mut App, code: KeyCode) {
    press(app, code, KeyModifiers::NONE);
}

fn ctrl(app: &mut App, c: char) {
    press(app, KeyCode::Char(c), KeyModifiers::CONTROL);
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// The text of the one save among `effects`.
fn saved_text(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::SaveNote { path, text, .. } if path == PATH => Some(text.clone()),
        _ => None,
    })
}

/// The runner wrote `text`.
fn finish(app: &mut App, text: &str) {
    app.on_save_finished(PATH, Ok(note(text, 2)));
}

fn has_quit(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::Quit))
}

fn edit_request(id: u64) -> PermissionRequest {
    let after = NOTE.replace("Water them daily.", "Water them at dawn.");
    PermissionRequest {
        id,
        call_id: format!("call_{id}"),
        tool: "update_note".into(),
        input: json!({"note": PATH}),
        paths: vec![PATH.into()],
        proposal: Some(Proposal {
            summary: format!("update {PATH}"),
            path: PATH.into(),
            diff: TextDiff::new(NOTE, &after),
            files: Vec::new(),
        }),
        offer_session: true,
        offer_always: true,
        reason: "update_note changes the vault".into(),
    }
}

#[test]
fn typing_schedules_the_autosave_and_keys_typed_during_the_save_stay_unsaved() {
    let mut app = opened_app(true);
    assert_eq!(
        app.autosave_deadline(),
        None,
        "nothing to save after opening"
    );
    type_text(&mut app, "A");
    let due = app
        .autosave_deadline()
        .expect("a change schedules the autosave");
    type_text(&mut app, "B");
    assert!(
        app.autosave_deadline().expect("still due") >= due,
        "each key moves the deadline"
    );
    assert!(app.take_effects().is_empty(), "no write while typing");
    app.on_autosave_due();
    let effects = app.take_effects();
    let first = saved_text(&effects).expect("the autosave writes");
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::SaveNote {
                agent_edit: false,
                ..
            }
        )),
        "typing alone is the person's revision"
    );
    assert_eq!(first, format!("AB{NOTE}"));
    // Typed while the save is written: not part of it, and a second due time waits for it.
    type_text(&mut app, "C");
    app.autosave_deadline();
    app.on_autosave_due();
    assert!(
        saved_text(&app.take_effects()).is_none(),
        "one save at a time"
    );
    finish(&mut app, &first);
    assert!(app.editor.is_dirty(), "C is not on disk yet");
    let effects = app.take_effects();
    let second = saved_text(&effects).expect("the key typed meanwhile is saved next");
    assert_eq!(second, format!("ABC{NOTE}"));
    finish(&mut app, &second);
    assert!(!app.editor.is_dirty());
    assert!(app.take_effects().is_empty());
    assert_eq!(app.autosave_deadline(), None);
}

#[test]
fn opening_another_note_with_the_picker_saves_first() {
    let mut app = opened_app(true);
    type_text(&mut app, "typed ");
    ctrl(&mut app, 'p');
    assert!(app.picker_open(), "Ctrl+P opened the picker");
    assert!(app.take_effects().is_empty());
    app.show_picker_over(vec![NoteEntry {
        path: "Seeds.md".into(),
        title: "Seeds".into(),
        aliases: vec![],
        modified_ns: 0,
    }]);
    key(&mut app, KeyCode::Enter);
    let effects = app.take_effects();
    let text = saved_text(&effects).expect("saved before leaving");
    assert_eq!(text, format!("typed {NOTE}"));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::OpenNote(..))),
        "the other note opens only once the save is done: {effects:?}"
    );
    finish(&mut app, &text);
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::OpenNote(name, _)] if name == "Seeds.md"
    ));
}

#[test]
fn following_a_link_saves_first() {
    let mut app = opened_app(true);
    // The cursor onto [[Seeds]] (line 3), then a change before following it.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    type_text(&mut app, "X");
    for _ in 0..33 {
        key(&mut app, KeyCode::Right);
    }
    ctrl(&mut app, ']');
    let effects = app.take_effects();
    let text = saved_text(&effects).expect("saved before following");
    assert!(text.contains("XPlant tomatoes"), "{text}");
    finish(&mut app, &text);
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::OpenLink(target, _)] if target == "Seeds"
    ));
}

#[test]
fn quitting_twice_with_autosave_still_saves_before_quitting() {
    let mut app = opened_app(true);
    type_text(&mut app, "last words ");
    ctrl(&mut app, 'q');
    let effects = app.take_effects();
    let text = saved_text(&effects).expect("quit saves");
    assert!(!has_quit(&effects));
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("saving Projects/Plan.md…"), "{screen}");
    ctrl(&mut app, 'q');
    let effects = app.take_effects();
    assert!(
        !has_quit(&effects) && saved_text(&effects).is_none(),
        "a second quit waits for the same save: {effects:?}"
    );
    finish(&mut app, &text);
    assert!(has_quit(&app.take_effects()));
}

#[test]
fn a_clean_note_quits_and_opens_at_once() {
    let mut app = opened_app(true);
    ctrl(&mut app, 'q');
    assert!(matches!(app.take_effects().as_slice(), [Effect::Quit]));
    let mut app = opened_app(false);
    ctrl(&mut app, 'q');
    assert!(matches!(app.take_effects().as_slice(), [Effect::Quit]));
}

#[test]
fn a_failed_save_on_quit_asks_instead_of_quitting() {
    let mut app = opened_app(true);
    type_text(&mut app, "precious ");
    ctrl(&mut app, 'q');
    assert!(saved_text(&app.take_effects()).is_some());
    app.on_save_finished(PATH, Err((false, "No space left on device".into())));
    assert!(!has_quit(&app.take_effects()));
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("Unsaved changes"), "{screen}");
    assert!(screen.contains("No space left on device"), "{screen}");
    // Save tries again; Discard then quits.
    key(&mut app, KeyCode::Char('s'));
    let text = saved_text(&app.take_effects()).expect("retry");
    app.on_save_finished(PATH, Err((false, "No space left on device".into())));
    let _ = app.take_effects();
    key(&mut app, KeyCode::Char('d'));
    assert!(has_quit(&app.take_effects()));
    assert_eq!(app.editor.text(), text, "the buffer was never touched");
}

#[test]
fn a_note_changed_on_disk_is_never_overwritten_by_the_autosave() {
    let mut app = opened_app(true);
    type_text(&mut app, "mine ");
    app.autosave_deadline();
    app.on_autosave_due();
    assert!(saved_text(&app.take_effects()).is_some());
    app.on_save_finished(PATH, Err((true, "changed on disk".into())));
    // The runner shows the disk's text: the same line changed on both sides → the banner.
    app.on_disk_change(note(&NOTE.replace("# Garden plan", "# Garden plans"), 3));
    assert!(app.editor.conflict());
    app.autosave_deadline();
    app.on_autosave_due();
    assert!(
        saved_text(&app.take_effects()).is_none(),
        "no autosave over a conflict"
    );
    assert!(app.editor.text().starts_with("mine # Garden plan\n"));
}

#[test]
fn keeping_mine_after_a_conflict_saves_it_with_autosave() {
    let mut app = opened_app(true);
    type_text(&mut app, "mine ");
    app.autosave_deadline();
    app.on_autosave_due();
    app.take_effects();
    app.on_save_finished(PATH, Err((true, "changed on disk".into())));
    app.on_disk_change(note(&NOTE.replace("# Garden plan", "# Garden plans"), 3));
    assert!(app.editor.conflict());
    // The person chose their text: with autosave it goes to disk now, not at the next key.
    key(&mut app, KeyCode::Char('k'));
    assert!(!app.editor.conflict());
    let saved = saved_text(&app.take_effects());
    assert!(
        saved
            .as_deref()
            .is_some_and(|t| t.starts_with("mine # Garden plan\n")),
        "{saved:?}"
    );
}

#[test]
fn a_change_on_disk_elsewhere_is_merged_with_autosave() {
    let mut app = opened_app(true);
    type_text(&mut app, "mine ");
    let theirs = NOTE.replace("Water them daily.", "Water them weekly.");
    app.on_disk_change(note(&theirs, 3));
    assert!(!app.editor.conflict());
    assert_eq!(
        app.editor.text(),
        format!("mine {theirs}"),
        "both changes are kept"
    );
    assert!(app.autosave_deadline().is_some(), "and the merge is saved");
}

#[test]
fn losing_focus_saves_at_once() {
    let mut app = opened_app(true);
    type_text(&mut app, "x");
    app.on_terminal(Event::FocusLost);
    assert!(saved_text(&app.take_effects()).is_some());
    let mut app = opened_app(false);
    type_text(&mut app, "x");
    app.on_terminal(Event::FocusLost);
    assert!(
        app.take_effects().is_empty(),
        "without autosave nothing is written"
    );
}

#[test]
fn a_signal_saves_then_quits_with_autosave_and_quits_without_it() {
    let mut app = opened_app(true);
    type_text(&mut app, "x");
    app.on_terminate();
    let effects = app.take_effects();
    let text = saved_text(&effects).expect("saved first");
    assert!(!has_quit(&effects));
    finish(&mut app, &text);
    assert!(has_quit(&app.take_effects()));

    let mut app = opened_app(false);
    type_text(&mut app, "x");
    app.on_terminate();
    let effects = app.take_effects();
    assert!(saved_text(&effects).is_none() && has_quit(&effects));
}

#[test]
fn suspending_saves_first_with_autosave() {
    let mut app = opened_app(true);
    type_text(&mut app, "x");
    // Ctrl+Z is undo in the editor; the chat's Ctrl+Z suspends.
    ctrl(&mut app, 'o');
    ctrl(&mut app, 'z');
    let effects = app.take_effects();
    let text = saved_text(&effects).expect("saved before suspending");
    finish(&mut app, &text);
    assert!(matches!(app.take_effects().as_slice(), [Effect::Suspend]));
}

#[test]
fn without_autosave_leaving_asks_and_cancel_keeps_the_buffer() {
    let mut app = opened_app(false);
    type_text(&mut app, "draft ");
    app.autosave_deadline();
    app.on_autosave_due();
    assert!(app.take_effects().is_empty(), "autosave off writes nothing");
    ctrl(&mut app, 'q');
    assert!(app.take_effects().is_empty(), "asks instead");
    let screen = draw(&mut app, 80, 24);
    assert!(
        screen.contains("Projects/Plan.md has unsaved changes"),
        "{screen}"
    );
    key(&mut app, KeyCode::Esc);
    assert!(app.take_effects().is_empty());
    assert_eq!(app.editor.text(), format!("draft {NOTE}"));
    assert!(app.editor.is_dirty());
    assert!(!draw(&mut app, 80, 24).contains("Unsaved changes"));

    // Save writes, then quits.
    ctrl(&mut app, 'q');
    key(&mut app, KeyCode::Char('s'));
    let text = saved_text(&app.take_effects()).expect("Save writes");
    finish(&mut app, &text);
    assert!(has_quit(&app.take_effects()));

    // Discard opens the other note without writing.
    let mut app = opened_app(false);
    type_text(&mut app, "draft ");
    ctrl(&mut app, 'p');
    let _ = app.take_effects();
    app.show_picker_over(vec![NoteEntry {
        path: "Seeds.md".into(),
        title: "Seeds".into(),
        aliases: vec![],
        modified_ns: 0,
    }]);
    key(&mut app, KeyCode::Enter);
    assert!(app.take_effects().is_empty());
    key(&mut app, KeyCode::Char('d'));
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::OpenNote(name, _)] if name == "Seeds.md"
    ));
}

#[test]
fn the_prompt_is_driven_by_arrows_and_enter() {
    let mut app = opened_app(false);
    type_text(&mut app, "draft ");
    ctrl(&mut app, 'q');
    // Focus starts on Save; Right → Discard; Enter chooses it.
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Enter);
    let effects = app.take_effects();
    assert!(saved_text(&effects).is_none() && has_quit(&effects));
    // Left from Save wraps to Cancel.
    let mut app = opened_app(false);
    type_text(&mut app, "draft ");
    ctrl(&mut app, 'q');
    key(&mut app, KeyCode::Left);
    key(&mut app, KeyCode::Enter);
    assert!(app.take_effects().is_empty());
    assert!(app.editor.is_dirty());
}

#[test]
fn an_agent_edit_is_saved_even_without_autosave_and_answered_after_the_save() {
    let mut app = opened_app(false);
    let after = NOTE.replace("Water them daily.", "Water them at dawn.");
    app.on_agent_event(AgentEvent::EditorEdit {
        id: 5,
        path: PATH.into(),
        before: NOTE.into(),
        after: after.clone(),
    });
    let effects = app.take_effects();
    assert_eq!(saved_text(&effects).as_deref(), Some(after.as_str()));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Agent(_))),
        "not answered before it is on disk: {effects:?}"
    );
    // Recorded as the agent's revision (so /rewind can undo it), not as the person's typing.
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::SaveNote {
                agent_edit: true,
                ..
            }
        )),
        "{effects:?}"
    );
    finish(&mut app, &after);
    match app.take_effects().as_slice() {
        [
            Effect::Agent(Op::EditorApplied {
                id: 5,
                result:
                    EditorEditResult::Applied {
                        text,
                        saved: Ok(()),
                    },
            }),
        ] => assert_eq!(text, &after),
        other => panic!("{other:?}"),
    }
    // One undo step brings the text before the edit back.
    app.editor.handle(super::keymap::Action::Undo);
    assert_eq!(app.editor.text(), NOTE);
}

#[test]
fn an_agent_edit_that_overlaps_typing_is_refused_with_the_reason() {
    let mut app = opened_app(true);
    // The person rewrote the line the agent edits.
    for _ in 0..4 {
        key(&mut app, KeyCode::Down);
    }
    type_text(&mut app, "Never! ");
    let _ = app.take_effects();
    app.on_agent_event(AgentEvent::EditorEdit {
        id: 6,
        path: PATH.into(),
        before: NOTE.into(),
        after: NOTE.replace("Water them daily.", "Water them at dawn."),
    });
    match app.take_effects().as_slice() {
        [
            Effect::Agent(Op::EditorApplied {
                id: 6,
                result: EditorEditResult::Refused(why),
            }),
        ] => assert!(why.contains("typing"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(app.editor.text().contains("Never! Water them daily."));
}

#[test]
fn an_agent_edit_merges_with_typing_elsewhere_and_reports_the_merged_text() {
    let mut app = opened_app(true);
    type_text(&mut app, "Mine ");
    let _ = app.take_effects();
    app.on_agent_event(AgentEvent::EditorEdit {
        id: 7,
        path: PATH.into(),
        before: NOTE.into(),
        after: NOTE.replace("Water them daily.", "Water them at dawn."),
    });
    let merged = format!("Mine {}", NOTE.replace("daily", "at dawn"));
    let text = saved_text(&app.take_effects()).expect("saved");
    assert_eq!(text, merged);
    finish(&mut app, &text);
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::Agent(Op::EditorApplied { id: 7, result: EditorEditResult::Applied { text, saved: Ok(()) } })]
            if *text == merged
    ));
}

#[test]
fn approving_an_edit_of_the_open_note_then_quitting_waits_for_the_edit() {
    let mut app = opened_app(true);
    app.on_agent_event(AgentEvent::PermissionRequested(edit_request(9)));
    key(&mut app, KeyCode::Char('y'));
    let _ = app.take_effects();
    ctrl(&mut app, 'q');
    assert!(
        !has_quit(&app.take_effects()),
        "the approved edit is still on its way"
    );
    let after = NOTE.replace("Water them daily.", "Water them at dawn.");
    app.on_agent_event(AgentEvent::EditorEdit {
        id: 9,
        path: PATH.into(),
        before: NOTE.into(),
        after: after.clone(),
    });
    let effects = app.take_effects();
    assert_eq!(saved_text(&effects).as_deref(), Some(after.as_str()));
    assert!(!has_quit(&effects));
    finish(&mut app, &after);
    let effects = app.take_effects();
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Agent(Op::EditorApplied { id: 9, .. }), Effect::Quit]
        ),
        "{effects:?}"
    );
}

#[test]
fn typing_while_a_quit_waits_for_an_approved_edit_is_saved_and_a_gone_agent_lets_it_quit() {
    let mut app = opened_app(true);
    app.on_agent_event(AgentEvent::PermissionRequested(edit_request(11)));
    key(&mut app, KeyCode::Char('y'));
    let _ = app.take_effects();
    type_text(&mut app, "typed ");
    ctrl(&mut app, 'q');
    // The quit waits for the edit, but the typed text does not wait with it.
    let effects = app.take_effects();
    assert!(!has_quit(&effects), "{effects:?}");
    let typed = saved_text(&effects);
    assert!(
        typed.as_deref().is_some_and(|t| t.starts_with("typed ")),
        "{typed:?}"
    );
    finish(&mut app, &typed.unwrap_or_default());
    assert!(!has_quit(&app.take_effects()));
    // The agent task ends without delivering the edit: the quit goes on instead of hanging.
    app.on_agent_gone();
    assert!(has_quit(&app.take_effects()));
}

#[test]
fn a_denied_edit_does_not_hold_the_quit() {
    let mut app = opened_app(true);
    app.on_agent_event(AgentEvent::PermissionRequested(edit_request(10)));
    key(&mut app, KeyCode::Char('n'));
    key(&mut app, KeyCode::Enter);
    let _ = app.take_effects();
    ctrl(&mut app, 'q');
    assert!(has_quit(&app.take_effects()));
}

#[test]
fn snapshots_of_the_unsaved_prompt() {
    let mut app = opened_app(false);
    type_text(&mut app, "draft ");
    ctrl(&mut app, 'q');
    insta::assert_snapshot!("unsaved_quit_80x24", draw(&mut app, 80, 24));
    insta::assert_snapshot!("unsaved_quit_120x40", draw(&mut app, 120, 40));
    key(&mut app, KeyCode::Esc);
    ctrl(&mut app, 'p');
    app.show_picker_over(vec![NoteEntry {
        path: "Seeds.md".into(),
        title: "Seeds".into(),
        aliases: vec![],
        modified_ns: 0,
    }]);
    key(&mut app, KeyCode::Enter);
    insta::assert_snapshot!("unsaved_open_80x24", draw(&mut app, 80, 24));
    insta::assert_snapshot!("unsaved_open_120x40", draw(&mut app, 120, 40));
}

#[test]
fn the_focused_choice_of_the_prompt_has_its_own_style() {
    let mut app = opened_app(false);
    type_text(&mut app, "draft ");
    ctrl(&mut app, 'q');
    let mut buf = buffer(80, 24);
    app.render(buf.area, &mut buf);
    let focused = super::testing::style_at(&buf, "[s] Save").expect("shown");
    let other = super::testing::style_at(&buf, "[d] Discard").expect("shown");
    assert_eq!(
        focused.bg,
        app.theme.style(super::theme::Role::ButtonFocused).bg
    );
    assert_ne!(focused, other);
}

/// The rows above and including the status bar that carry `text`, joined: the message whole.
fn message_shown(screen: &str, text: &str) -> bool {
    let lines: Vec<&str> = screen.lines().collect();
    (0..lines.len()).any(|start| {
        let joined = lines[start..]
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        joined.contains(text)
    })
}

#[test]
fn status_messages_are_shown_whole_at_80_columns() {
    let long = "there is no agent to answer: check [provider] in the config and the API key (vaultchat doctor), then /new";
    let mut app = opened_app(true);
    app.on_error(long);
    let screen = draw(&mut app, 80, 24);
    assert!(message_shown(&screen, long), "{screen}");
    insta::assert_snapshot!("status_message_long_80x24", screen);
    insta::assert_snapshot!("status_message_long_120x40", draw(&mut app, 120, 40));
    // A shorter one takes the status row itself; the model facts make room.
    let medium = "the note changed on disk while you have unsaved changes";
    app.flash(medium, super::theme::Role::StatusWarning);
    let screen = draw(&mut app, 80, 24);
    let status = screen.lines().last().unwrap_or_default();
    assert!(status.contains(medium), "{status}");
    insta::assert_snapshot!("status_message_row_80x24", screen);
    // The next key clears it and the layout is as before.
    key(&mut app, KeyCode::Right);
    let screen = draw(&mut app, 80, 24);
    assert!(!screen.contains(medium));
    assert!(
        screen
            .lines()
            .last()
            .unwrap_or_default()
            .contains("claude-sonnet-4-5")
    );
}

#[test]
fn a_quit_stopped_by_a_change_on_disk_goes_on_once_the_change_merges() {
    let mut app = opened_app(true);
    type_text(&mut app, "mine ");
    ctrl(&mut app, 'q');
    assert!(saved_text(&app.take_effects()).is_some());
    app.on_save_finished(PATH, Err((true, "changed on disk".into())));
    assert!(!has_quit(&app.take_effects()));
    assert!(draw(&mut app, 80, 24).contains("Unsaved changes"));
    // The runner reads the disk: another line changed, so the two merge and the quit goes on.
    let theirs = NOTE.replace("Water them daily.", "Water them weekly.");
    app.on_disk_change(note(&theirs, 3));
    let effects = app.take_effects();
    let text = saved_text(&effects).expect("the merged text is saved");
    assert_eq!(text, format!("mine {theirs}"));
    finish(&mut app, &text);
    assert!(has_quit(&app.take_effects()));
}
