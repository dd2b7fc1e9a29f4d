//! The backlinks view through the whole loop a person sees, on a real workspace: the key opens
//! it on the open note (loading first), the host's link graph fills it in grouped by note with
//! the linking lines and then the unlinked mentions, Enter opens the linking note with the
//! cursor on the line, the view follows the open note and a link written meanwhile shows up; and
//! the editor draws a link to no note as unresolved, from the host's listing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::host::HostEvent;
use crate::tui::app::{App, Pane};
use crate::tui::keymap::Keymap;
use crate::tui::testing::draw_app as draw;
use crate::tui::testing::{LiveHost, app_with};
use crate::tui::views::backlinks::{EMPTY, LOADING};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use std::fs;

const LAUNCH: &str = "# Launch\n\nThe plan for the launch.\n";
const CHORES: &str = "# Chores\n\n- [ ] Book the hall\n- [ ] Pay for the [[Launch]] hall\n";
const PLAN: &str = "# Plan\n\nintro\nmore\n\nSee [[Launch#Budget|the budget]] first.\n";
const JOURNAL: &str = "# Monday\n\nWe talked about the launch today.\n";

fn press(app: &mut App, code: KeyCode) {
    app.on_terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Until the unlinked mentions (the second answer) arrived.
fn mentions_came(_: &App, event: Option<&HostEvent>) -> bool {
    matches!(event, Some(HostEvent::UnlinkedMentions { .. }))
}

#[test]
fn the_backlinks_view_lists_the_linking_lines_and_opens_one_at_its_line() {
    let mut live = LiveHost::new(&[
        ("Projects/Launch.md", LAUNCH),
        ("Home/Chores.md", CHORES),
        ("Plan.md", PLAN),
        ("Journal.md", JOURNAL),
    ]);
    let root = live.root.clone();
    let mut app = app_with(Keymap::default_map());
    live.start(&mut app);

    // Without a note open the key says what the view is for.
    press(&mut app, KeyCode::F(7));
    assert!(draw(&mut app, 120, 40).contains("open one first"));

    app.open_note("Projects/Launch.md");
    assert!(live.pump_until(&mut app, |app, _| {
        app.editor.path() == Some("Projects/Launch.md")
    }));
    press(&mut app, KeyCode::F(7));
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains(LOADING), "{screen}");
    assert!(live.pump_until(&mut app, mentions_came), "no mentions came");
    let screen = draw(&mut app, 120, 40);
    insta::assert_snapshot!("app_backlinks_120x40", screen);
    // Grouped by note, by path; each line with its number; the mention after the links.
    let order: Vec<usize> = [
        "Linked mentions · 2 links from 2 notes",
        "Home/Chores",
        "4  - [ ] Pay for the [[Launch]] hall",
        "Plan  1",
        "6  See [[Launch#Budget|the budget]] first.",
        "Unlinked mentions · 1",
        "3  We talked about the launch today.",
    ]
    .iter()
    .map(|t| {
        screen
            .find(t)
            .unwrap_or_else(|| panic!("{t} missing:\n{screen}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{screen}");

    // Down to Plan.md's line, Enter: the editor shows Plan.md with the cursor on line 6.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert!(live.pump_until(&mut app, |app, _| app.editor.path() == Some("Plan.md")));
    assert_eq!(app.focus(), Pane::Editor);
    assert_eq!(app.editor.cursor_line_col().0, 5, "0-based row of line 6");
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains("Ln 6/6"), "{screen}");

    // Plan.md has no backlinks: the empty state.
    press(&mut app, KeyCode::F(7));
    assert!(live.pump_until(&mut app, mentions_came));
    let screen = draw(&mut app, 80, 24);
    assert!(
        screen.contains("Backlinks · Plan") && screen.contains(EMPTY),
        "{screen}"
    );

    // The view follows the note opened meanwhile, and takes in a link written meanwhile.
    app.open_note("Projects/Launch.md");
    assert!(live.pump_until(&mut app, mentions_came));
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains("Backlinks · Projects/Launch"), "{screen}");
    fs::write(root.join("Inbox.md"), "Read [[Launch]] again\n").unwrap();
    assert!(
        live.pump_until(&mut app, |_, event| matches!(
            event,
            Some(HostEvent::Backlinks { result: Ok(list), .. })
                if list.links.iter().any(|l| l.path == "Inbox.md")
        )),
        "the new link was not listed"
    );
    let screen = draw(&mut app, 120, 40);
    assert!(screen.contains("1  Read [[Launch]] again"), "{screen}");
    assert!(screen.contains("3 links from 3 notes"), "{screen}");
}

/// The other half of the graph in the editor: the host's listing says which `[[links]]` name a
/// note, and a link to none is drawn in its own role — until a note of that name appears.
#[test]
fn the_editor_draws_links_to_missing_notes_as_unresolved_from_the_hosts_listing() {
    use crate::tui::theme::Role;
    let mut live = LiveHost::new(&[
        ("Projects/Launch.md", LAUNCH),
        ("Ideas.md", "Next: [[Launch]] then [[Someday]]\n"),
    ]);
    let root = live.root.clone();
    let mut app = app_with(Keymap::default_map());
    live.start(&mut app);
    assert!(live.pump_until(&mut app, |_, event| matches!(
        event,
        Some(HostEvent::LinkTargets(_))
    )));
    app.open_note("Ideas.md");
    assert!(live.pump_until(&mut app, |app, _| app.editor.path() == Some("Ideas.md")));
    let role_of = |app: &mut App, needle: &str| {
        let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 120, 40));
        let area = buf.area;
        app.render(area, &mut buf);
        let style = crate::tui::testing::style_at(&buf, needle).map(|s| s.fg);
        [Role::MdLink, Role::MdLinkUnresolved]
            .into_iter()
            .find(|r| Some(app.theme.style(*r).fg) == style)
    };
    assert_eq!(role_of(&mut app, "[[Launch]]"), Some(Role::MdLink));
    assert_eq!(
        role_of(&mut app, "[[Someday]]"),
        Some(Role::MdLinkUnresolved)
    );
    // A note named Someday appears: the next listing resolves the link.
    fs::write(root.join("Someday.md"), "# Someday\n").unwrap();
    assert!(live.pump_until(&mut app, |_, event| matches!(
        event,
        Some(HostEvent::LinkTargets(_))
    )));
    assert_eq!(role_of(&mut app, "[[Someday]]"), Some(Role::MdLink));
}

/// A burst of syncs (a `git pull`, a sync client, autosaves while the view is open) costs one
/// listing more, not one each: while an answer is on its way the view only notes that the vault
/// changed again, and asks once more when the last answer (the mentions) has come.
#[test]
fn a_burst_of_syncs_while_listing_asks_once_more_not_once_each() {
    use crate::host::{BacklinkList, Request};
    use crate::tui::app::Effect;
    let asked = |app: &mut App| {
        app.take_effects()
            .iter()
            .filter(|e| matches!(e, Effect::Host(Request::Backlinks(p)) if p == "Launch.md"))
            .count()
    };
    let mut app = app_with(Keymap::default_map());
    app.on_ready();
    app.on_note_opened("Launch.md", crate::tui::testing::note_text(LAUNCH));
    press(&mut app, KeyCode::F(7));
    assert_eq!(asked(&mut app), 1);
    for _ in 0..5 {
        app.on_host(HostEvent::Synced {
            listing_changed: false,
        });
    }
    assert_eq!(
        asked(&mut app),
        0,
        "asked again while the answer was on its way"
    );
    app.on_host(HostEvent::Backlinks {
        path: "Launch.md".into(),
        result: Ok(BacklinkList::default()),
    });
    assert_eq!(asked(&mut app), 0, "the mentions are still to come");
    app.on_host(HostEvent::UnlinkedMentions {
        path: "Launch.md".into(),
        result: Ok(Vec::new()),
    });
    assert_eq!(asked(&mut app), 1, "the changes meanwhile are listed once");
    app.on_host(HostEvent::Backlinks {
        path: "Launch.md".into(),
        result: Err("the index is busy".into()),
    });
    assert_eq!(asked(&mut app), 0, "nothing changed since");
    app.on_host(HostEvent::Synced {
        listing_changed: false,
    });
    assert_eq!(
        asked(&mut app),
        1,
        "a sync after the answer lists again at once"
    );
}
