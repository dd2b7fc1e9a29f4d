//! The `/` list and the argument hint as a person uses them in the chat input: keys in, screens
//! (insta, 80×24 and 120×40) and text out; and on a real host, the vault's commands listed only
//! once trusted (a greyed row says why before), withdrawn when a file changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::commands::{Catalog, Command, Origin};
use crate::host::{HostEvent, Request};
use crate::tui::app::{App, Effect};
use crate::tui::keymap::Keymap;
use crate::tui::testing::draw_app as draw;
use crate::tui::testing::{LiveHost, app_with};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

fn press(app: &mut App, code: KeyCode) {
    app.on_terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn own(name: &str, description: &str, hint: &str, origin: Origin) -> Command {
    Command {
        name: name.into(),
        description: description.into(),
        argument_hint: hint.into(),
        origin,
        file: Some(format!("{name}.md")),
        prompt: None,
        arguments: Vec::new(),
    }
}

/// An app that knows the built-ins, one command of the person's and two of the vault's.
fn app() -> App {
    let mut app = app_with(Keymap::default_map());
    let mut catalog = Catalog::built_in();
    catalog.commands.push(own(
        "inbox",
        "File the inbox into folders",
        "",
        Origin::Personal,
    ));
    catalog.commands.push(own(
        "weekly-review",
        "Review the week's notes and plan the next",
        "<focus>",
        Origin::Vault,
    ));
    catalog.commands.push(own(
        "study:flashcards",
        "Turn the open note into flashcards",
        "",
        Origin::Vault,
    ));
    app.on_host(HostEvent::Commands(catalog));
    app
}

fn asked_for_commands(app: &mut App) -> bool {
    app.take_effects()
        .iter()
        .any(|e| matches!(e, Effect::Host(Request::ListCommands)))
}

#[test]
fn slash_lists_every_command_filters_and_tab_completes_with_the_hint() {
    let mut app = app();
    let _ = app.take_effects();
    type_text(&mut app, "/");
    assert!(app.completion_open());
    assert!(
        asked_for_commands(&mut app),
        "opening the list reads the command files again"
    );
    insta::assert_snapshot!("slash_list_80x24", draw(&mut app, 80, 24));
    insta::assert_snapshot!("slash_list_120x40", draw(&mut app, 120, 40));
    // Up wraps to the end of the list: the person's and the vault's come after the built-ins.
    press(&mut app, KeyCode::Up);
    let screen = draw(&mut app, 120, 40);
    for name in ["/help", "/inbox", "/weekly-review", "/study:flashcards"] {
        assert!(screen.contains(name), "{name} listed: {screen}");
    }
    assert!(screen.contains("File the inbox into folders"), "{screen}");

    // "re": the names starting with it first (/rewind), then the fuzzy ones (/weekly-review…).
    type_text(&mut app, "re");
    let screen = draw(&mut app, 120, 40);
    let rewind = screen.find("/rewind").expect("prefix match listed");
    let weekly = screen.find("/weekly-review").expect("fuzzy match listed");
    assert!(rewind < weekly, "prefix before fuzzy: {screen}");
    assert!(!screen.contains("/inbox"), "no match, not listed: {screen}");

    // Down to /weekly-review, Tab completes its name and waits for the argument.
    type_text(&mut app, "v");
    press(&mut app, KeyCode::Tab);
    assert!(!app.completion_open());
    assert_eq!(app.input.text(), "/weekly-review ");
    insta::assert_snapshot!("slash_argument_hint_80x24", draw(&mut app, 80, 24));
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("/weekly-review <focus>"), "{screen}");
    type_text(&mut app, "garden");
    assert!(
        draw(&mut app, 80, 24).contains("/weekly-review <focus>"),
        "the hint stays while the argument is typed"
    );
}

#[test]
fn enter_runs_a_command_or_waits_for_its_arguments_and_esc_closes() {
    let mut app = app();
    type_text(&mut app, "/usa");
    let _ = app.take_effects();
    press(&mut app, KeyCode::Enter);
    assert!(
        app.take_effects()
            .iter()
            .any(|e| matches!(e, Effect::Host(Request::Usage))),
        "Enter ran /usage"
    );
    assert_eq!(app.input.text(), "");

    // An optional argument (`/model [name]`) does not hold Enter back.
    type_text(&mut app, "/mod");
    press(&mut app, KeyCode::Enter);
    assert!(
        app.take_effects()
            .iter()
            .any(|e| matches!(e, Effect::Host(Request::ListModels { .. }))),
        "Enter ran /model"
    );

    type_text(&mut app, "/weekly");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.input.text(),
        "/weekly-review ",
        "a command that takes arguments is completed, not run"
    );
    assert!(
        !app.take_effects()
            .iter()
            .any(|e| matches!(e, Effect::Host(Request::RunCommand { .. }))),
    );
    app.input.set_text("");

    type_text(&mut app, "/in");
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Esc);
    assert!(!app.completion_open());
    assert_eq!(
        app.input.text(),
        "/in",
        "Esc closes the list, keeps the text"
    );
    // A space ends the name: the list closes by itself.
    app.input.set_text("");
    type_text(&mut app, "/inbox ");
    assert!(!app.completion_open());
    // A `/` in the middle of a message is no command.
    app.input.set_text("");
    type_text(&mut app, "a/b");
    assert!(!app.completion_open());
}

#[test]
fn an_untrusted_vaults_commands_are_one_greyed_row_saying_why() {
    let mut app = app_with(Keymap::default_map());
    let mut catalog = Catalog::built_in();
    catalog.withheld = Some(
        "the vault's 2 commands are not offered until you trust them (`vaultchat trust`)".into(),
    );
    app.on_host(HostEvent::Commands(catalog));
    type_text(&mut app, "/se");
    insta::assert_snapshot!("slash_list_withheld_80x24", draw(&mut app, 80, 24));
    let screen = draw(&mut app, 80, 24);
    assert!(screen.contains("vault commands not listed"), "{screen}");
    assert!(screen.contains("the vault's 2 commands are"), "{screen}");
    // Up from the first row wraps past the greyed last row: Enter runs a command, never the row.
    press(&mut app, KeyCode::Up);
    let _ = app.take_effects();
    press(&mut app, KeyCode::Enter);
    assert!(
        app.take_effects()
            .iter()
            .any(|e| matches!(e, Effect::Host(Request::Usage))),
        "the row above the greyed one ran"
    );
}

#[test]
fn a_click_on_a_command_completes_it() {
    let mut app = app();
    type_text(&mut app, "/inb");
    let screen = draw(&mut app, 120, 40);
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("/inbox "))
        .expect("the row is drawn");
    let column = line.chars().position(|c| c == '/').unwrap() as u16;
    app.on_terminal(Event::Mouse(crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: column + 1,
        row: row as u16,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(app.input.text(), "/inbox ");
    assert!(!app.completion_open());
}

#[test]
fn help_lists_the_persons_and_the_vaults_commands() {
    let mut app = app();
    press(&mut app, KeyCode::F(1));
    let mut screen = String::new();
    // The help scrolls; the commands are near its end.
    for _ in 0..20 {
        screen.push_str(&draw(&mut app, 120, 40));
        press(&mut app, KeyCode::PageDown);
    }
    assert!(screen.contains("Your commands"), "{screen}");
    assert!(screen.contains("File the inbox into folders"), "{screen}");
    assert!(screen.contains("The vault's commands"), "{screen}");
    assert!(screen.contains("/study:flashcards"), "{screen}");
    assert!(screen.contains("/continue-new"), "built-ins too: {screen}");
}

/// Type `/` and carry events until the host's list came in; the screen then.
fn slash_screen(live: &mut LiveHost, app: &mut App) -> String {
    app.input.set_text("");
    type_text(app, "/");
    assert!(
        live.pump_until(app, |_, event| matches!(
            event,
            Some(HostEvent::Commands(_))
        )),
        "the host answered the list"
    );
    // The list shows 8 rows at a time: the vault's come after the built-ins.
    type_text(app, "wee");
    draw(app, 120, 40)
}

#[test]
fn the_vaults_commands_are_listed_once_trusted_and_withdrawn_when_a_file_changes() {
    let mut live = LiveHost::new(&[
        ("Plan.md", "# Plan\n"),
        (
            ".vaultchat/commands/weekly-review.md",
            "---\ndescription: Review the week\n---\nReview {{args}}\n",
        ),
    ]);
    let mut app = app_with(Keymap::default_map());
    live.start(&mut app);

    let screen = slash_screen(&mut live, &mut app);
    assert!(!screen.contains("Review the week"), "untrusted: {screen}");
    assert!(screen.contains("vault commands not listed"), "{screen}");

    let vault = crate::vault::Vault::open(&live.root).unwrap();
    crate::mcp::plugins::VaultPlugins::trust_now(&vault, &live.database);
    let screen = slash_screen(&mut live, &mut app);
    assert!(screen.contains("/weekly-review"), "trusted: {screen}");
    assert!(screen.contains("Review the week"), "{screen}");
    assert!(!screen.contains("vault commands not listed"), "{screen}");

    std::fs::write(
        live.root.join(".vaultchat/commands/weekly-review.md"),
        "---\ndescription: Review the week, changed\n---\nSend {{args}} somewhere\n",
    )
    .unwrap();
    let screen = slash_screen(&mut live, &mut app);
    assert!(
        !screen.contains("Review the week"),
        "a changed file is withdrawn until trusted again: {screen}"
    );
    assert!(screen.contains("vault commands not listed"), "{screen}");
}

#[test]
fn choosing_with_the_cursor_inside_the_name_replaces_the_whole_name() {
    let mut app = app();
    // "/weekly" with the cursor after "/wee": Tab completes the name, leaving nothing of "kly".
    type_text(&mut app, "/weekly");
    for _ in 0..3 {
        press(&mut app, KeyCode::Left);
    }
    assert!(app.completion_open(), "the list follows the cursor");
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.input.text(), "/weekly-review ");

    // "/usage" with the cursor after "/usa": Enter runs /usage, not "/usagege".
    app.input.set_text("");
    type_text(&mut app, "/usage");
    press(&mut app, KeyCode::Left);
    press(&mut app, KeyCode::Left);
    let _ = app.take_effects();
    press(&mut app, KeyCode::Enter);
    let effects = app.take_effects();
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Host(Request::Usage))),
        "Enter ran /usage: {effects:?}"
    );
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::Host(Request::RunCommand { .. }))),
        "{effects:?}"
    );
}

#[test]
fn the_lists_choices_are_built_once_per_open_not_per_keystroke() {
    use crate::tui::app::choices_built;
    let mut app = app();
    choices_built::reset();
    type_text(&mut app, "/weekly-rev");
    press(&mut app, KeyCode::Backspace);
    press(&mut app, KeyCode::Left);
    assert!(app.completion_open());
    assert_eq!(choices_built::get(), 1, "once, when / opened the list");
    // The host's answer brings a new list: built again, once.
    app.on_host(HostEvent::Commands(Catalog::built_in()));
    assert_eq!(choices_built::get(), 2);
}

/// A description is the vault's (or a server's) words: a character that would draw as a blank
/// or act on the terminal is shown as `\u{…}`, as the help view shows it.
#[test]
fn a_commands_description_is_shown_escaped() {
    let mut app = app_with(Keymap::default_map());
    let mut catalog = Catalog::built_in();
    catalog.commands.push(own(
        "inbox",
        "File\u{3164}the inbox \u{1b}[2J",
        "",
        Origin::Vault,
    ));
    app.on_host(HostEvent::Commands(catalog));
    type_text(&mut app, "/inb");
    let screen = draw(&mut app, 120, 40);
    assert!(
        screen.contains("File\\u{3164}the inbox \\u{1b}[2J"),
        "{screen}"
    );
}
