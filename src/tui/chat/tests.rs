//! Tests of the transcript: streaming, the layout cache, scrolling, and what it looks like.

use super::*;
use crate::tui::testing::{buffer, buffer_text, style_at};
use serde_json::json;

fn theme() -> Theme {
    Theme::builtin_dark()
}

fn draw(transcript: &mut Transcript, width: u16, height: u16) -> Buffer {
    let mut buf = buffer(width, height);
    transcript.render(Rect::new(0, 0, width, height), &mut buf, &theme(), true);
    buf
}

fn draw_uncached(transcript: &mut Transcript, width: u16, height: u16) -> Buffer {
    let mut buf = buffer(width, height);
    transcript.render_uncached(Rect::new(0, 0, width, height), &mut buf, &theme(), true);
    buf
}

const REPLY: &str = "## Next steps\n\nThe plan has **three** open items, tagged #q3:\n\n1. Draft the *budget* for `Q3`\n2. Book the venue\n   - check the dates with [[People/Ana]]\n3. Email [Ana](mailto:ana@example.com)\n\n```rust\nfn main() {\n    // print the plan\n    println!(\"{}\", 42);\n}\n```\n\n> Keep it short.";

fn record(id: &str, decision: CallDecision, is_error: bool, result: &str) -> ToolCallRecord {
    ToolCallRecord {
        id: id.into(),
        name: "read_note".into(),
        input: json!({"path": "Projects/Plan.md"}),
        is_error,
        decision,
        result: result.into(),
    }
}

fn conversation() -> Transcript {
    let mut t = Transcript::new();
    t.push_user("What's in [[Projects/Plan]]? Give me the next steps.");
    t.tool_started("c1", "read_note", &json!({"path": "Projects/Plan.md"}));
    t.tool_finished(&record(
        "c1",
        CallDecision::Allowed,
        false,
        "# Plan\n- budget\n- venue",
    ));
    t.append_delta(REPLY);
    t.finish_streaming();
    t
}

fn numbered(count: usize) -> Transcript {
    let mut t = Transcript::new();
    for n in 0..count {
        t.push_user(&format!("message {n}"));
    }
    t
}

#[test]
fn deltas_append_to_the_streaming_cell_only() {
    let mut t = Transcript::new();
    t.push_user("hi");
    t.append_delta("Hel");
    t.append_delta("lo");
    assert_eq!(t.len(), 2);
    // A note in the middle of a reply does not split it.
    t.push_system("retrying");
    t.append_delta(" there");
    assert_eq!(t.len(), 3);
    assert_eq!(
        t.cell(1),
        Some(&Cell::Assistant {
            text: "Hello there".into(),
            streaming: true
        })
    );
    assert_eq!(
        t.cell(0),
        Some(&Cell::User {
            text: "hi".into(),
            images: Vec::new()
        }),
        "other cells are untouched"
    );
}

#[test]
fn finishing_then_a_delta_starts_a_new_cell() {
    let mut t = Transcript::new();
    t.append_delta("one");
    t.finish_streaming();
    t.append_delta("two");
    assert_eq!(t.len(), 2);
    assert_eq!(
        t.cell(0),
        Some(&Cell::Assistant {
            text: "one".into(),
            streaming: false
        })
    );
    assert_eq!(
        t.cell(1),
        Some(&Cell::Assistant {
            text: "two".into(),
            streaming: true
        })
    );
}

#[test]
fn pushing_a_streaming_reply_completes_the_one_before() {
    let mut t = Transcript::new();
    t.append_delta("first");
    t.push(Cell::Assistant {
        text: "second".into(),
        streaming: true,
    });
    assert_eq!(
        t.cell(0),
        Some(&Cell::Assistant {
            text: "first".into(),
            streaming: false
        })
    );
    t.append_delta(" more");
    assert_eq!(
        t.cell(1),
        Some(&Cell::Assistant {
            text: "second more".into(),
            streaming: true
        })
    );
}

#[test]
fn an_empty_reply_disappears_when_finished_and_a_tool_call_ends_the_text() {
    let mut t = Transcript::new();
    t.append_delta("");
    t.finish_streaming();
    assert!(t.is_empty());
    t.append_delta("Let me look.");
    t.tool_started("c1", "search_notes", &json!({"query": "plan"}));
    assert_eq!(
        t.cell(0),
        Some(&Cell::Assistant {
            text: "Let me look.".into(),
            streaming: false
        })
    );
    t.append_delta("Found it.");
    assert_eq!(t.len(), 3, "text after the call is a new cell");
}

fn status(t: &Transcript, id: CellId) -> Option<ToolStatus> {
    match t.cell(id) {
        Some(Cell::Tool { status, .. }) => Some(*status),
        _ => None,
    }
}

#[test]
fn tool_finished_updates_the_matching_call() {
    let mut t = Transcript::new();
    t.tool_started("a", "read_note", &json!({"path": "A.md"}));
    t.tool_started("b", "update_note", &json!({"path": "B.md"}));
    t.tool_finished(&record("a", CallDecision::Allowed, false, "text"));
    t.tool_finished(&record("b", CallDecision::ApprovedOnce, false, "ok"));
    assert_eq!(status(&t, 0), Some(ToolStatus::Done));
    assert_eq!(status(&t, 1), Some(ToolStatus::Done));
    assert_eq!(t.entries[1].approval, Some(CallDecision::ApprovedOnce));
    assert_eq!(t.entries[0].approval, None);
    t.tool_finished(&record("c", CallDecision::Denied, true, "no"));
    assert_eq!(t.len(), 3, "an unknown call gets a cell of its own");
    assert_eq!(status(&t, 2), Some(ToolStatus::Denied));
    t.tool_finished(&record("a", CallDecision::Refused, true, "outside"));
    assert_eq!(status(&t, 0), Some(ToolStatus::Refused));
    t.tool_started("d", "read_note", &json!({}));
    t.tool_finished(&record("d", CallDecision::Allowed, true, "boom"));
    assert_eq!(status(&t, 3), Some(ToolStatus::Failed));
    let buf = draw(&mut t, 60, 20);
    assert!(buffer_text(&buf).contains("⚙ update_note B.md  ✓ approved once"));
}

#[test]
fn only_changed_cells_are_laid_out_again() {
    let mut t = conversation();
    for n in 0..50 {
        t.push_user(&format!("question {n}"));
    }
    t.tool_started("x", "search_notes", &json!({"query": "q"}));
    let cells = t.len() as u64;
    draw(&mut t, 80, 24);
    assert_eq!(
        t.layout_count(),
        cells,
        "the first frame lays out every cell"
    );
    draw(&mut t, 80, 24);
    assert_eq!(
        t.layout_count(),
        cells,
        "an unchanged frame lays out nothing"
    );
    t.scroll_up(10);
    draw(&mut t, 80, 24);
    assert_eq!(t.layout_count(), cells, "scrolling lays out nothing");
    t.append_delta("streaming");
    draw(&mut t, 80, 24);
    assert_eq!(t.layout_count(), cells + 1, "a new cell is laid out once");
    t.append_delta(" more");
    t.append_delta(" and more");
    draw(&mut t, 80, 24);
    assert_eq!(
        t.layout_count(),
        cells + 2,
        "deltas between frames: one layout"
    );
    t.toggle_last_tool();
    draw(&mut t, 80, 24);
    assert_eq!(
        t.layout_count(),
        cells + 3,
        "toggling re-lays only that tool cell"
    );
    draw(&mut t, 100, 24);
    let relaid = t.layout_count() - (cells + 3);
    assert!(
        relaid > 0 && relaid < cells / 2,
        "a new width lays out what is in view ({relaid} of {cells} cells)"
    );
}

#[test]
fn streaming_lays_out_only_the_tail() {
    let mut t = Transcript::new();
    t.append_delta("First paragraph.\n\n");
    t.append_delta("Second paragraph.\n\nThird");
    draw(&mut t, 60, 20);
    let layout = t.entries[0]
        .layout
        .as_ref()
        .map(|l| (l.settled, l.head.len()));
    assert_eq!(
        layout,
        Some(("First paragraph.\n\nSecond paragraph.\n\n".len(), 3)),
        "settled: everything before the paragraph that is still arriving"
    );
    t.append_delta(" grows");
    draw(&mut t, 60, 20);
    let text = buffer_text(&draw(&mut t, 60, 20));
    assert!(text.contains("Third grows▍"), "{text}");
    // The same picture as laying out the whole reply at once.
    let cached = buffer_text(&draw(&mut t, 60, 20));
    let uncached = buffer_text(&draw_uncached(&mut t, 60, 20));
    assert_eq!(cached, uncached);
}

#[test]
fn cached_and_uncached_frames_are_the_same_picture() {
    let mut t = conversation();
    for n in 0..30 {
        t.push_user(&format!("question {n}"));
        t.append_delta(REPLY);
        t.finish_streaming();
    }
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let cached = draw(&mut t, w, h);
        let uncached = draw_uncached(&mut t, w, h);
        assert_eq!(cached, uncached, "{w}x{h}");
        t.page_up();
        let cached = draw(&mut t, w, h);
        let uncached = draw_uncached(&mut t, w, h);
        assert_eq!(cached, uncached, "{w}x{h} scrolled");
        t.scroll_bottom();
    }
}

#[test]
fn the_view_follows_stops_following_and_resumes() {
    let mut t = numbered(100);
    let buf = draw(&mut t, 40, 12);
    assert!(t.is_following());
    assert!(buffer_text(&buf).contains("message 99"));

    t.scroll_up(5);
    assert!(!t.is_following());
    let before = buffer_text(&draw(&mut t, 40, 12));
    assert!(!before.contains("message 99"));
    t.push_user("message 100");
    t.append_delta("a reply arrives");
    let after = buffer_text(&draw(&mut t, 40, 12));
    // The rows being read stay put; only the "more below" count changes.
    let rows = |text: &str| text.lines().skip(1).take(10).collect::<Vec<_>>().join("\n");
    assert_eq!(rows(&before), rows(&after));
    assert!(after.contains("more"), "{after}");

    t.scroll_bottom();
    assert!(t.is_following());
    let text = buffer_text(&draw(&mut t, 40, 12));
    assert!(text.contains("a reply arrives"), "{text}");

    // Scrolling down to the bottom resumes following too.
    t.scroll_up(3);
    assert!(!t.is_following());
    t.scroll_down(3);
    assert!(t.is_following());
    t.page_up();
    t.page_up();
    assert!(!t.is_following());
    t.page_down();
    t.page_down();
    assert!(t.is_following());
    t.scroll_top();
    let text = buffer_text(&draw(&mut t, 40, 12));
    assert!(text.contains("message 0"), "{text}");
}

#[test]
fn short_transcripts_keep_following_when_scrolled() {
    let mut t = numbered(2);
    draw(&mut t, 40, 12);
    t.scroll_up(3);
    assert!(t.is_following(), "nothing to scroll: still at the bottom");
}

#[test]
fn a_resize_keeps_the_row_being_read_in_view() {
    let mut t = Transcript::new();
    for n in 0..40 {
        t.push_user(&format!(
            "message {n} with words enough to wrap at a narrow width"
        ));
    }
    draw(&mut t, 80, 12);
    t.scroll_top();
    t.scroll_down(30);
    let text = buffer_text(&draw(&mut t, 80, 12));
    let first = text.lines().nth(1).unwrap_or("").trim().to_string();
    let text = buffer_text(&draw(&mut t, 40, 12));
    let marker = first
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains(&marker), "{marker:?} not in\n{text}");
}

#[test]
fn actions_scroll_and_toggle() {
    let mut t = numbered(50);
    t.tool_started("c", "read_note", &json!({"path": "A.md"}));
    draw(&mut t, 40, 10);
    assert!(t.handle(Action::ScrollUp));
    assert!(!t.is_following());
    assert!(t.handle(Action::ScrollBottom));
    assert!(t.is_following());
    assert!(t.handle(Action::PageUp));
    assert!(t.handle(Action::PageDown));
    assert!(t.handle(Action::ScrollTop));
    assert!(t.handle(Action::ScrollDown));
    assert!(t.handle(Action::ToggleDetails));
    assert!(matches!(
        t.cell(50),
        Some(Cell::Tool { expanded: true, .. })
    ));
    assert!(!t.handle(Action::Send));
    assert!(!t.handle(Action::Quit));
}

#[test]
fn wide_characters_wrap_by_cell_width() {
    let mut t = Transcript::new();
    t.push_user("漢字漢字漢字漢字 👍🏽👍🏽");
    // 16 columns: border and padding leave 12, the marker 10: five CJK characters per row,
    // then the rest and a space (7 cells) leave too little for the two emoji (4 cells).
    // (The test buffer shows the second cell of a wide character as a space.)
    let text = buffer_text(&draw(&mut t, 16, 7));
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[1], "│ › 漢 字 漢 字 漢  │", "{text}");
    assert_eq!(rows[2], "│   字 漢 字      │", "{text}");
    assert_eq!(rows[3], "│   👍🏽 👍🏽        │", "{text}");
}

#[test]
fn any_size_renders_without_panicking() {
    let mut full = conversation();
    full.toggle_last_tool();
    full.append_delta("streaming ```rust\nfn x() {}");
    let mut empty = Transcript::new();
    for t in [&mut full, &mut empty] {
        for (w, h) in [
            (0, 0),
            (1, 1),
            (2, 2),
            (3, 3),
            (4, 4),
            (5, 5),
            (7, 3),
            (300, 100),
        ] {
            draw(t, w, h);
            draw_uncached(t, w, h);
            t.scroll_up(1);
            t.page_down();
        }
    }
    // An area larger than the buffer is clipped to it.
    let mut buf = buffer(10, 5);
    full.render(Rect::new(3, 2, 50, 50), &mut buf, &theme(), false);
}

#[test]
fn user_marker_and_code_background_use_their_roles() {
    let theme = theme();
    let mut t = conversation();
    let buf = draw(&mut t, 80, 40);
    assert!(drawn_as(style_at(&buf, "› What"), theme.style(Role::User)));
    assert!(!drawn_as(style_at(&buf, "What"), theme.style(Role::User)));
    let code = style_at(&buf, "fn main").map(|s| s.bg);
    assert_eq!(code, Some(theme.style(Role::MdCodeBlock).bg));
    // The shading runs to the end of the row, past the code.
    let row = (0..40u16)
        .find(|&y| {
            (0..80u16)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("fn main")
        })
        .unwrap_or(0);
    assert_eq!(
        buf[(76, row)].bg,
        theme.style(Role::MdCodeBlock).bg.unwrap_or_default()
    );
    assert_eq!(
        style_at(&buf, "fn").map(|s| s.fg),
        Some(theme.style(Role::CodeKeyword).fg)
    );
}

#[test]
fn the_focused_border_and_scroll_marks_use_their_roles() {
    let theme = theme();
    let mut t = numbered(40);
    let focused = draw(&mut t, 40, 10);
    assert_eq!(
        style_at(&focused, "╭").map(|s| s.fg),
        theme.style(Role::BorderFocused).fg.map(Some)
    );
    assert_eq!(
        style_at(&focused, "┃").map(|s| s.fg),
        Some(theme.style(Role::Scrollbar).fg)
    );
    t.scroll_up(5);
    let scrolled = draw(&mut t, 40, 10);
    assert!(
        buffer_text(&scrolled).contains("↓ 5 more"),
        "{}",
        buffer_text(&scrolled)
    );
}

// Snapshots: what a person sees.

fn snapshot(name: &str, transcript: &mut Transcript, width: u16, height: u16) {
    let buf = draw(transcript, width, height);
    insta::assert_snapshot!(name.to_string(), buffer_text(&buf));
}

#[test]
fn snapshot_empty() {
    snapshot("transcript_empty_80x24", &mut Transcript::new(), 80, 24);
    snapshot("transcript_empty_120x40", &mut Transcript::new(), 120, 40);
}

#[test]
fn snapshot_conversation() {
    snapshot("transcript_conversation_80x24", &mut conversation(), 80, 24);
    snapshot(
        "transcript_conversation_120x40",
        &mut conversation(),
        120,
        40,
    );
}

#[test]
fn snapshot_streaming() {
    let streaming = || {
        let mut t = Transcript::new();
        t.push_user("Draft an agenda for Monday's meeting.");
        t.append_delta("Here is a draft:\n\n1. Status of the **budget**\n2. Venue op");
        t
    };
    snapshot("transcript_streaming_80x24", &mut streaming(), 80, 24);
    snapshot("transcript_streaming_120x40", &mut streaming(), 120, 40);
}

fn tools() -> Transcript {
    let mut t = Transcript::new();
    t.push_user("Tidy up my plan.");
    t.tool_started("c1", "search_notes", &json!({"query": "plan", "limit": 5}));
    t.tool_finished(&ToolCallRecord {
        id: "c1".into(),
        name: "search_notes".into(),
        input: json!({"query": "plan", "limit": 5}),
        is_error: false,
        decision: CallDecision::Allowed,
        result: "Projects/Plan.md\nArchive/Old plan.md".into(),
    });
    t.tool_started(
        "c2",
        "update_note",
        &json!({"path": "Projects/Plan.md", "replace_text": {"find": "TBD", "replace": "Friday"}}),
    );
    t.tool_finished(&ToolCallRecord {
        id: "c2".into(),
        name: "update_note".into(),
        input: json!({"path": "Projects/Plan.md"}),
        is_error: false,
        decision: CallDecision::ApprovedOnce,
        result: "Applied 1 of 1 hunks to Projects/Plan.md (+1 -1).".into(),
    });
    t.tool_started("c3", "delete_note", &json!({"path": "Archive/Old plan.md"}));
    t.tool_finished(&ToolCallRecord {
        id: "c3".into(),
        name: "delete_note".into(),
        input: json!({"path": "Archive/Old plan.md"}),
        is_error: true,
        decision: CallDecision::Denied,
        result: "The user denied this call: keep the archive".into(),
    });
    t.tool_started("c4", "read_note", &json!({"path": "Projects/Plan.md"}));
    let note: Vec<String> = (1..=24).map(|n| format!("- item {n}")).collect();
    t.tool_finished(&record(
        "c4",
        CallDecision::Allowed,
        false,
        &format!("# Plan\n{}", note.join("\n")),
    ));
    t
}

#[test]
fn snapshot_tool_cells() {
    snapshot("transcript_tools_collapsed_80x24", &mut tools(), 80, 24);
    snapshot("transcript_tools_collapsed_120x40", &mut tools(), 120, 40);
    let mut expanded = tools();
    expanded.toggle_last_tool();
    draw(&mut expanded, 80, 24);
    expanded.scroll_top();
    snapshot("transcript_tools_expanded_80x24", &mut expanded, 80, 24);
    let mut expanded = tools();
    expanded.toggle_last_tool();
    snapshot("transcript_tools_expanded_120x40", &mut expanded, 120, 40);
}

#[test]
fn snapshot_error_and_system_note() {
    let notes = || {
        let mut t = Transcript::new();
        t.push_system("Resumed session “Weekly planning” (12 messages).");
        t.push_user("And the budget?");
        t.append_delta("The budget note says");
        t.finish_streaming();
        t.push_error("The provider is overloaded (529). Retried 2 times; try again in a minute.");
        t
    };
    snapshot("transcript_notes_80x24", &mut notes(), 80, 24);
    snapshot("transcript_notes_120x40", &mut notes(), 120, 40);
}

#[test]
fn snapshot_a_message_with_images() {
    let facts = |width, height, size| crate::attach::ImageFacts {
        media_type: "image/png".into(),
        dimensions: Some((width, height)),
        size,
    };
    let with_images = || {
        let mut t = Transcript::new();
        t.push_user_with_images(
            "What does this error dialog mean, and how do I get rid of it?",
            vec![facts(800, 600, 114_688), facts(1568, 882, 1_258_291)],
        );
        t.append_delta(
            "The dialog says the vault folder is **read-only**: vaultchat cannot save there.",
        );
        t.finish_streaming();
        t
    };
    snapshot("transcript_images_80x24", &mut with_images(), 80, 24);
    snapshot("transcript_images_120x40", &mut with_images(), 120, 40);
    // The chips hang under the text at its indent, in their own role; narrow panes wrap them.
    let mut t = with_images();
    let buf = draw(&mut t, 50, 12);
    let text = buffer_text(&buf);
    assert!(
        text.contains("│   [image 1 · PNG 800×600 · 112 KB]"),
        "{text}"
    );
    assert!(
        text.contains("│   [image 2 · PNG 1568×882 · 1.2 MB]"),
        "{text}"
    );
    assert!(super::drawn_as(
        style_at(&buf, "[image 2"),
        theme().style(Role::Attachment)
    ));
}

/// A compaction: a marked line among the turns; its summary shows only when expanded.
fn compacted() -> Transcript {
    let mut t = Transcript::new();
    t.push_user("Turn 12: read Big.md and tell me what it says.");
    t.append_delta("Answer 11.");
    t.finish_streaming();
    t.push_compaction(&crate::agent::CompactionInfo {
        reason: crate::agent::CompactReason::Threshold,
        summary: Some(
            "The person asked about Big.md in every turn. It is a long note about the garden: \
             tomatoes in beds 0 to 6, beans along the fence, watering times through the day. \
             Nothing was changed; the next step is to keep answering from it."
                .into(),
        ),
        summarised_messages: 40,
        shortened_messages: 44,
        tokens_before: 12_910,
        tokens_after: 8_120,
        summary_requests: 1,
    });
    t.push_user("Turn 13: and now?");
    t
}

#[test]
fn snapshot_compaction_collapsed_and_expanded() {
    let mut collapsed = compacted();
    let buf = draw(&mut collapsed, 80, 24);
    let shown = buffer_text(&buf);
    assert!(
        shown.contains("compacted ·") && shown.contains("[+ summary]"),
        "{shown}"
    );
    assert!(!shown.contains("beans along the fence"), "{shown}");
    snapshot(
        "transcript_compaction_collapsed_80x24",
        &mut compacted(),
        80,
        24,
    );
    let mut expanded = compacted();
    expanded.toggle_last_tool();
    let shown = buffer_text(&draw(&mut expanded, 80, 24));
    assert!(
        shown.contains("beans along the fence") && shown.contains("[− summary]"),
        "{shown}"
    );
    snapshot(
        "transcript_compaction_expanded_80x24",
        &mut expanded,
        80,
        24,
    );
}

/// A long day's transcript keeps laid-out lines only for a page of cells around the view; cells
/// scrolled back into view are laid out again and look as they did.
#[test]
fn laid_out_lines_are_paged_around_the_view() {
    let mut t = Transcript::new();
    for n in 0..150 {
        t.push_user(&format!("question {n}"));
        t.append_delta(&format!(
            "The plan has **three** items, see [[Plan]].\n\n- one\n- answer {n}"
        ));
        t.finish_streaming();
    }
    let cells = t.len();
    draw(&mut t, 80, 24);
    let bound = 2 * KEEP_LAID_OUT + 24;
    assert!(
        t.laid_out_count() <= bound,
        "{} of {cells} cells hold lines; the page is {bound}",
        t.laid_out_count()
    );
    assert!(
        t.laid_out_count() > KEEP_LAID_OUT,
        "the cells above the view are kept"
    );
    // The first cells were paged out: scrolled back to, they are laid out again, and the frame
    // is the picture of a transcript that never dropped anything.
    t.scroll_top();
    let before = t.layout_count();
    let paged = buffer_text(&draw(&mut t, 80, 24));
    assert!(
        t.layout_count() > before,
        "the top cells were laid out again"
    );
    assert!(paged.contains("question 0"), "{paged}");
    assert!(t.laid_out_count() <= bound);
    let whole = buffer_text(&draw_uncached(&mut t, 80, 24));
    assert_eq!(paged, whole);
    // Paging keeps the heights: the bottom is where it was.
    t.scroll_bottom();
    let bottom = buffer_text(&draw(&mut t, 80, 24));
    assert!(bottom.contains("answer 149"), "{bottom}");
    assert_eq!(bottom, buffer_text(&draw_uncached(&mut t, 80, 24)));
}

/// A reply that streams while the person reads far above keeps its lines, so each delta still
/// costs only its tail.
#[test]
fn the_streaming_reply_is_never_paged_out() {
    let mut t = numbered(400);
    t.append_delta("First paragraph.\n\nSecond");
    draw(&mut t, 60, 20);
    t.scroll_top();
    draw(&mut t, 60, 20);
    let streaming = t.len() - 1;
    assert!(t.entries[streaming].layout.is_some());
    assert!(
        t.entries[streaming - 1].layout.is_none(),
        "its neighbours are paged out"
    );
    let before = t.layout_count();
    t.append_delta(" grows");
    draw(&mut t, 60, 20);
    assert_eq!(t.layout_count(), before + 1, "one tail layout");
    assert_eq!(
        t.entries[streaming].layout.as_ref().map(|l| l.settled),
        Some("First paragraph.\n\n".len())
    );
}

/// A long day's transcript at the bottom, its replies long enough to wrap differently at each
/// width.
fn long_day(turns: usize) -> Transcript {
    let mut t = Transcript::new();
    for n in 0..turns {
        t.push_user(&format!("question {n}"));
        t.append_delta(&format!(
            "Answer {n}: the beans go along the north fence, the tomatoes by the shed, and the \
             squash wherever there is room left over after the first two are in.\n\n- one\n- two"
        ));
        t.finish_streaming();
    }
    t
}

/// A resize lays out the cells in view, not the whole transcript: the others' heights are
/// estimated from their old ones and made exact when they come into view. At the bottom the
/// picture is the one a full layout draws; scrolled up, the cell at the top stays at the top.
#[test]
fn a_resize_lays_out_only_what_is_in_view() {
    let mut t = long_day(1000);
    draw(&mut t, 100, 30);
    let before = t.layout_count();
    let shown = buffer_text(&draw(&mut t, 70, 30));
    let laid = t.layout_count() - before;
    assert!(
        laid <= 30,
        "{laid} of {} cells laid out for a resize",
        t.len()
    );
    assert!(shown.contains("Answer 999"), "{shown}");
    let mut whole = long_day(1000);
    assert_eq!(shown, buffer_text(&draw_uncached(&mut whole, 70, 30)));

    // Scrolled far up: the question at the top of the view is still there after two resizes.
    for _ in 0..200 {
        t.page_up();
    }
    let top_line = |screen: &str| {
        screen
            .lines()
            .find_map(|l| {
                l.split("question ")
                    .nth(1)
                    .map(|n| n.split(' ').next().map(str::to_string))
            })
            .flatten()
    };
    let before_resize = buffer_text(&draw(&mut t, 70, 30));
    let first = top_line(&before_resize);
    assert!(first.is_some(), "{before_resize}");
    let before = t.layout_count();
    let narrow = buffer_text(&draw(&mut t, 50, 30));
    assert!(t.layout_count() - before <= 30);
    assert_eq!(top_line(&narrow), first, "{narrow}");
    // Scrolling back to the bottom shows the end, laid out at the new width.
    t.scroll_bottom();
    let bottom = buffer_text(&draw(&mut t, 50, 30));
    let mut whole = long_day(1000);
    assert_eq!(bottom, buffer_text(&draw_uncached(&mut whole, 50, 30)));
}
