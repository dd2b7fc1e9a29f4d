//! Pasting images into the chat: the App's side (the effect it asks for, what it does with the
//! clipboard's answer, removing, sending) and what it looks like at 80×24 and 120×40.

use super::app::{App, Effect, MAX_IMAGES_PER_MESSAGE};
use super::clipboard::ClipboardPaste;
use super::keymap::{Action, KeyContext, Keymap};
use super::testing::{buffer, style_at};
use super::theme::Role;
use crate::agent::{AgentEvent, Op};
use crate::attach::Image;
use crate::tui::testing::draw_app as draw;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

fn app() -> App {
    super::testing::app_with(Keymap::default_map())
}

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.on_terminal(Event::Key(KeyEvent::new(code, modifiers)));
}

fn ctrl_v(app: &mut App) {
    press(app, KeyCode::Char('v'), KeyModifiers::CONTROL);
}

fn backspace(app: &mut App) {
    press(app, KeyCode::Backspace, KeyModifiers::NONE);
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

fn status_line(app: &mut App) -> String {
    draw(app, 120, 40)
        .lines()
        .nth(39)
        .unwrap_or_default()
        .to_string()
}

/// A screenshot as the chips see it (what the pixels are does not matter to the App).
fn screenshot(width: u32, height: u32, size: usize) -> Image {
    Image {
        media_type: "image/png",
        data: format!("iVBORw0KGgo{width}x{height}"),
        dimensions: Some((width, height)),
        size,
    }
}

/// A real PNG made from pixels, as the clipboard gives them.
fn real_png(width: u32, height: u32) -> Image {
    let rgba = (0..width * height)
        .flat_map(|i| [(i * 7 % 256) as u8, 40, 200, 255])
        .collect();
    crate::attach::image_from_rgba(width, height, rgba, "the clipboard image").unwrap()
}

#[test]
fn ctrl_v_is_bound_in_the_chat_only_and_clashes_with_nothing() {
    for name in ["default", "vim"] {
        let (keymap, errors) = Keymap::load(name, None);
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let ctrl_v = KeyEvent::new(KeyCode::Char('v'), KeyModifiers::CONTROL);
        let backspace = KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE);
        assert_eq!(
            keymap.action(KeyContext::Chat, &ctrl_v),
            Some(Action::PasteImage),
            "{name}"
        );
        assert_eq!(
            keymap.action(KeyContext::Chat, &backspace),
            Some(Action::RemoveImage),
            "{name}"
        );
        // Nothing else has the keys: not the editor (its Ctrl+V stays the editor's), not global.
        for context in [KeyContext::Global, KeyContext::Editor] {
            assert_eq!(keymap.action(context, &ctrl_v), None, "{name} {context:?}");
            assert_eq!(
                keymap.action(context, &backspace),
                None,
                "{name} {context:?}"
            );
        }
        let help: Vec<Action> = keymap
            .help()
            .into_iter()
            .flat_map(|(_, rows)| rows.into_iter().map(|(_, a)| a))
            .collect();
        assert!(help.contains(&Action::PasteImage) && help.contains(&Action::RemoveImage));
    }
}

#[test]
fn ctrl_v_in_the_chat_asks_the_runner_to_read_the_clipboard() {
    let mut app = app();
    ctrl_v(&mut app);
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::ReadClipboardImage]
    ));
    assert!(status_line(&mut app).contains("reading the clipboard…"));
}

#[test]
fn an_empty_paste_reads_the_clipboard_and_a_text_paste_is_typed_in() {
    let mut app = app();
    app.on_terminal(Event::Paste(String::new()));
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::ReadClipboardImage]
    ));
    app.on_terminal(Event::Paste("plain text".into()));
    assert!(app.take_effects().is_empty());
    assert_eq!(app.input.text(), "plain text");
}

#[test]
fn the_clipboard_image_becomes_an_attachment_with_a_chip_and_a_note() {
    let mut app = app();
    app.on_clipboard(ClipboardPaste::Image(real_png(40, 30)));
    assert_eq!(app.input.images().len(), 1);
    assert_eq!(app.input.images()[0].dimensions, Some((40, 30)));
    let status = status_line(&mut app);
    assert!(status.contains("image 1 attached"), "{status}");
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains("[image 1 · PNG 40×30 ·"), "{screen}");
}

#[test]
fn clipboard_text_is_pasted_into_the_message() {
    let mut app = app();
    type_text(&mut app, "see: ");
    app.on_clipboard(ClipboardPaste::Text("the copied line".into()));
    assert_eq!(app.input.text(), "see: the copied line");
    assert!(app.input.images().is_empty());
}

#[test]
fn without_a_clipboard_the_status_line_says_so_and_the_message_stays() {
    let mut app = app();
    type_text(&mut app, "half a question");
    ctrl_v(&mut app);
    app.take_effects();
    app.on_clipboard(ClipboardPaste::Unavailable(
        "no X11 or Wayland display: DISPLAY is unset".into(),
    ));
    assert_eq!(app.input.text(), "half a question", "nothing is lost");
    let status = status_line(&mut app);
    assert!(status.contains("no clipboard to paste from"), "{status}");
    // Errors are flashed in the status bar's warning style, not pushed into the transcript.
    let mut buf = buffer(120, 40);
    app.render(buf.area, &mut buf);
    assert_eq!(
        style_at(&buf, "no clipboard").map(|s| s.fg),
        Some(app.theme.style(Role::StatusWarning).fg)
    );
    assert!(app.transcript.is_empty());

    app.on_clipboard(ClipboardPaste::Failed(
        "the clipboard image cannot be decoded".into(),
    ));
    assert!(status_line(&mut app).contains("nothing pasted: the clipboard image cannot"));
    app.on_clipboard(ClipboardPaste::Empty);
    assert!(status_line(&mut app).contains("the clipboard holds no image and no text"));
    assert_eq!(app.input.text(), "half a question");
    assert!(app.input.images().is_empty());
}

#[test]
fn backspace_removes_the_last_image_only_while_the_message_is_empty() {
    let mut app = app();
    app.on_clipboard(ClipboardPaste::Image(screenshot(800, 600, 114_688)));
    app.on_clipboard(ClipboardPaste::Image(screenshot(1568, 882, 1_258_291)));
    type_text(&mut app, "hi");
    backspace(&mut app);
    assert_eq!(app.input.text(), "h", "with text, Backspace edits it");
    assert_eq!(app.input.images().len(), 2);
    backspace(&mut app);
    assert_eq!(app.input.text(), "");
    assert_eq!(
        app.input.images().len(),
        2,
        "the key that emptied the box removes nothing"
    );
    backspace(&mut app);
    assert_eq!(app.input.images().len(), 1);
    assert_eq!(app.input.images()[0].dimensions, Some((800, 600)));
    assert!(status_line(&mut app).contains("image removed; 1 left"));
    backspace(&mut app);
    assert!(app.input.images().is_empty());
    backspace(&mut app);
    assert!(app.input.images().is_empty());
}

#[test]
fn the_images_go_with_the_next_turn_and_are_cleared() {
    let mut app = app();
    let image = real_png(40, 30);
    app.on_clipboard(ClipboardPaste::Image(image.clone()));
    type_text(&mut app, "what is this?");
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    match app.take_effects().as_slice() {
        [
            Effect::Agent(Op::UserTurn {
                text, attachments, ..
            }),
        ] => {
            assert_eq!(text, "what is this?");
            assert_eq!(attachments.len(), 1);
            assert_eq!(attachments[0].media_type, "image/png");
            assert_eq!(attachments[0].data, image.data);
        }
        other => panic!("{other:?}"),
    }
    assert!(app.input.images().is_empty(), "sent images are cleared");
    match app.transcript.cell(0) {
        Some(super::chat::Cell::User { text, images }) => {
            assert_eq!(text, "what is this?");
            assert_eq!(images, &[image.facts()]);
        }
        other => panic!("{other:?}"),
    }
    // The next message carries nothing it was not given.
    app.on_agent_event(AgentEvent::TurnDone(crate::agent::TurnOutcome {
        session_id: "s".into(),
        reply: String::new(),
        stop_reason: crate::agent::TurnEnd::EndTurn,
        steps: 1,
        tool_calls: vec![],
        edits: vec![],
        usage: Default::default(),
        error: None,
        warnings: Vec::new(),
    }));
    type_text(&mut app, "thanks");
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(matches!(
        app.take_effects().as_slice(),
        [Effect::Agent(Op::UserTurn { attachments, .. })] if attachments.is_empty()
    ));
}

#[test]
fn images_wait_while_a_turn_runs_and_an_image_alone_is_not_sent() {
    let mut app = app();
    app.on_clipboard(ClipboardPaste::Image(screenshot(800, 600, 114_688)));
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(app.take_effects().is_empty());
    assert!(status_line(&mut app).contains("type a message to send with the image"));
    assert_eq!(app.input.images().len(), 1);

    app.on_agent_event(AgentEvent::TurnStarted {
        session_id: "s".into(),
    });
    type_text(&mut app, "and this?");
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(app.take_effects().is_empty(), "a turn is running");
    assert_eq!(app.input.text(), "and this?");
    assert_eq!(app.input.images().len(), 1, "the image waits with the text");
}

#[test]
fn a_message_takes_at_most_twenty_images() {
    let mut app = app();
    for _ in 0..MAX_IMAGES_PER_MESSAGE {
        app.on_clipboard(ClipboardPaste::Image(screenshot(10, 10, 100)));
    }
    app.on_clipboard(ClipboardPaste::Image(screenshot(10, 10, 100)));
    assert_eq!(app.input.images().len(), MAX_IMAGES_PER_MESSAGE);
    assert!(status_line(&mut app).contains("at most 20 images"));
}

#[test]
fn the_editor_keeps_its_own_paste() {
    let mut app = app();
    app.on_note_opened(
        "Plan.md",
        crate::protocol::NoteText {
            text: "# Plan\n".into(),
            format: Default::default(),
            fingerprint: crate::protocol::Fingerprint {
                hash: 1,
                mtime_ns: 0,
                size: 7,
            },
        },
    );
    app.on_terminal(Event::Paste(String::new()));
    ctrl_v(&mut app);
    assert!(
        app.take_effects().is_empty(),
        "images are not pasted into notes"
    );
}

// What it looks like.

fn both_sizes(name: &str, app: &mut App) {
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
    insta::assert_snapshot!(format!("{name}_120x40"), draw(app, 120, 40));
}

#[test]
fn snapshot_one_image_waiting() {
    let mut app = app();
    app.on_clipboard(ClipboardPaste::Image(screenshot(800, 600, 114_688)));
    both_sizes("app_one_image", &mut app);
    let mut buf = buffer(80, 24);
    app.render(buf.area, &mut buf);
    let chip = style_at(&buf, "[image 1").expect("the chip is drawn");
    let role = app.theme.style(Role::Attachment);
    assert_eq!((chip.fg, chip.bg), (role.fg, role.bg));
}

/// Two screenshots pasted and a question typed, not yet sent.
fn two_images_and_a_question() -> App {
    let mut app = app();
    app.on_clipboard(ClipboardPaste::Image(screenshot(800, 600, 114_688)));
    app.on_clipboard(ClipboardPaste::Image(screenshot(1568, 882, 1_258_291)));
    type_text(
        &mut app,
        "Which of these two layouts reads better on a phone?",
    );
    app
}

#[test]
fn snapshot_two_images_and_a_question() {
    let mut app = two_images_and_a_question();
    both_sizes("app_two_images", &mut app);
}

#[test]
fn snapshot_sent_message_with_its_images() {
    let mut app = two_images_and_a_question();
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    app.on_agent_event(AgentEvent::TurnStarted {
        session_id: "4f1c2a9be0d3aa71".into(),
    });
    app.on_agent_event(AgentEvent::TextDelta(
        "The **second** one: its buttons are larger and the text column is narrower, so it \
         reads without zooming."
            .into(),
    ));
    both_sizes("app_sent_images", &mut app);
}

#[test]
fn a_pasted_path_to_an_image_file_attaches_it_and_other_paths_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let photo = dir.path().join("IMG 1.jpg");
    std::fs::write(&photo, b"not decoded here").unwrap();
    let mut app = app();
    app.on_terminal(Event::Paste(format!("'{}'", photo.display())));
    match app.take_effects().as_slice() {
        [Effect::AttachImageFiles(paths)] => assert_eq!(paths, std::slice::from_ref(&photo)),
        other => panic!("expected the file to be attached, got {other:?}"),
    }
    assert_eq!(app.input.text(), "", "the path is not typed");
    assert!(status_line(&mut app).contains("attaching the dropped image…"));
    // A path that is not an image file is text like any other.
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, b"x").unwrap();
    app.on_terminal(Event::Paste(notes.display().to_string()));
    assert!(app.take_effects().is_empty());
    assert_eq!(app.input.text(), notes.display().to_string());
}

/// The screen's words with each run of spaces and line breaks made one space: a message too
/// long for the status bar is wrapped on the rows above it.
fn message_text(app: &mut App) -> String {
    draw(app, 120, 40)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// What an attacker (or a slip) pastes or drops instead of a photo, through the code the app
/// calls: a FIFO or a link to a device is typed as text, never opened; a 2 GB sparse `.png` and
/// a decompression bomb are attached by path but refused at once by the runner's read
/// (`clipboard::dropped_file_paste`), and the status line says why; the message loses nothing.
#[test]
fn a_dropped_device_fifo_huge_file_or_bomb_is_refused_at_once_with_a_reason() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.png");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let zero = dir.path().join("zero.png");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let huge = dir.path().join("huge.png");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let bomb = dir.path().join("bomb.png");
    std::fs::write(
        &bomb,
        crate::attach::test_images::gray_png_claiming(50_000, 50_000),
    )
    .unwrap();

    let mut app = app();
    type_text(&mut app, "keep me ");
    for not_a_file in [&fifo, &zero] {
        assert_eq!(
            crate::attach::dropped_image_paths(&not_a_file.display().to_string()),
            None
        );
    }
    for (path, reason) in [
        (&huge, "huge.png is 2048 MB; files of at most 32 MB"),
        (&bomb, "bomb.png is 50000×50000 pixels (2500 megapixels)"),
    ] {
        app.on_terminal(Event::Paste(format!("'{}'", path.display())));
        let paths = match app.take_effects().as_slice() {
            [Effect::AttachImageFiles(paths)] => paths.clone(),
            other => panic!("expected the file to be attached, got {other:?}"),
        };
        let started = Instant::now();
        let paste =
            super::clipboard::dropped_file_paste(&paths[0], crate::attach::DEFAULT_MAX_FILE_BYTES);
        assert!(started.elapsed() < Duration::from_secs(1), "{path:?}");
        app.on_clipboard(paste);
        let screen = message_text(&mut app);
        assert!(screen.contains(reason), "{screen}");
        assert!(app.input.images().is_empty());
    }
    assert_eq!(app.input.text(), "keep me ");
}

/// The clipboard's own image: one claiming more pixels than an attachment may have is refused
/// before it is copied or scaled.
#[test]
fn a_clipboard_image_over_the_pixel_budget_is_refused() {
    let mut app = app();
    let paste = super::clipboard::image_paste_for_tests(50_000, 50_000, Vec::new());
    app.on_clipboard(paste);
    let screen = message_text(&mut app);
    assert!(
        screen.contains("nothing pasted: the clipboard image is 50000×50000 pixels"),
        "{screen}"
    );
    assert!(app.input.images().is_empty());
}
