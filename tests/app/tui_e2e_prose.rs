//! Reading a prose diff end to end in a real terminal (tmux, 80×24) against the local fake
//! provider: the agent rewrites a 450-character paragraph (one line of the note); the banner
//! wraps both versions, marks the changed words in their own style, and `j` scrolls through the
//! diff until every word has been on screen; `y` then writes exactly the new text to disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::fake_llm::{Chunking, FakeLlm, FakeUsage, Reply, anthropic_text, anthropic_tool_calls};
use common::tmux::{Tmux, app_line};
use serde_json::json;
use std::time::{Duration, Instant};

/// 450 characters, one line.
const PARAGRAPH: &str = "Plan the vegetable beds for spring. Tomatoes go along the south fence, where they get sun from late morning until evening; the herb spiral needs more light than the old apple tree allows, so it moves to the corner by the shed. Beans climb the north trellis again this year, and the compost bin stays behind the greenhouse where the hose reaches it. Order seeds before the end of February, because the good varieties sell out very early, every spring.";

fn rewritten() -> String {
    PARAGRAPH
        .replace("south fence", "west fence")
        .replace("corner by the shed", "sunny corner by the gate")
        .replace("before the end of February", "by mid-February")
}

fn note(paragraph: &str) -> String {
    format!("# Garden Planner\n\n{paragraph}\n\n## Beds\n\n- basil\n- beans\n")
}

fn usage() -> FakeUsage {
    FakeUsage {
        input: 100,
        output: 20,
        cache_read: 0,
        cache_write: 0,
    }
}

/// The `rows a–b of n` label on the banner's border, as (a, b, n).
fn rows_label(screen: &str) -> Option<(usize, usize, usize)> {
    let at = screen.find("rows ")?;
    let rest = &screen[at + "rows ".len()..];
    let (first, rest) = rest.split_once('–')?;
    let (last, rest) = rest.split_once(" of ")?;
    let total: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((first.parse().ok()?, last.parse().ok()?, total.parse().ok()?))
}

/// The diff rows on screen: the banner's rows of the marked hunk (`▎` after the border).
fn diff_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter(|l| l.starts_with("│ ▎"))
        .map(str::to_string)
        .collect()
}

/// The text of the diff line whose first row has `sign` in the sign column, joined from its
/// rows (continuation rows have a blank gutter).
fn line_text(rows: &[String], sign: char) -> String {
    // `│ ▎ 3   - text`: border, space, mark, space, two one-digit numbers with spaces, sign.
    let text = |row: &str| -> String {
        let chars: Vec<char> = row.chars().collect();
        let end = chars.len().saturating_sub(3);
        chars
            .get(10..end)
            .unwrap_or_default()
            .iter()
            .collect::<String>()
    };
    let Some(first) = rows.iter().position(|r| r.chars().nth(8) == Some(sign)) else {
        return String::new();
    };
    let mut parts = vec![text(&rows[first]).trim().to_string()];
    for row in &rows[first + 1..] {
        let gutter: String = row.chars().skip(3).take(7).collect();
        if !gutter.trim().is_empty() {
            break;
        }
        parts.push(text(row).trim().to_string());
    }
    parts.join(" ")
}

#[test]
fn a_rewritten_paragraph_is_readable_word_for_word_at_80x24_before_y_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let path = vault.join("Garden.md");
    std::fs::write(&path, note(PARAGRAPH)).unwrap();
    let data = tmp.path().join("data");

    let fake = FakeLlm::start(vec![
        Reply::Sse {
            body: anthropic_tool_calls(
                Some("I'll tighten the paragraph."),
                &[(
                    "w1",
                    "update_note",
                    json!({"note": "Garden.md", "replace_text": {"find": PARAGRAPH, "replace": rewritten()}}),
                )],
                usage(),
            ),
            chunking: Chunking::Fixed(64),
        },
        Reply::Sse {
            body: anthropic_text("Rewrote the paragraph.", usage()),
            chunking: Chunking::Whole,
        },
    ]);
    let tmux = Tmux::start(&app_line(&[], &data, &fake.base_url, &[], &vault), 80, 24);
    tmux.wait_for("the ready badge", |s| {
        s.lines().any(|l| l.starts_with(" ready "))
    });
    tmux.type_text("Rewrite the garden paragraph");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("Allow update_note?");
    assert!(!screen.contains('…'), "nothing is cut:\n{screen}");

    // The changed word is drawn differently from its unchanged neighbour in the same row.
    let styled = tmux.screen_with_escapes();
    let row = styled
        .lines()
        .find(|l| l.contains("along the") && l.contains("south"))
        .unwrap_or_default();
    let before = |word: &str| -> String {
        let at = row.find(word).unwrap_or(0);
        let head = &row[..at];
        let escape = head.rfind('\u{1b}').unwrap_or(0);
        head[escape..].to_string()
    };
    assert_ne!(before("south"), before("along"), "{row:?}");

    // j scrolls one row at a time to the end; every row is seen once.
    let (mut first, mut last, total) =
        rows_label(&screen).unwrap_or_else(|| panic!("a row counter:\n{screen}"));
    assert_eq!(first, 1);
    let mut rows = diff_rows(&screen);
    while last < total {
        tmux.keys(&["j"]);
        let next = first + 1;
        let screen = tmux.wait_for(&format!("rows {next}–"), |s| {
            rows_label(s).is_some_and(|(f, _, _)| f == next)
        });
        (first, last, _) = rows_label(&screen).unwrap();
        if let Some(row) = diff_rows(&screen).last() {
            rows.push(row.clone());
        }
    }
    assert_eq!(line_text(&rows, '-'), PARAGRAPH, "{rows:#?}");
    assert_eq!(line_text(&rows, '+'), rewritten(), "{rows:#?}");

    // Nothing is written while the banner waits; y writes exactly the new text.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), note(PARAGRAPH));
    tmux.keys(&["y"]);
    tmux.wait_text("Rewrote the paragraph.");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&path).unwrap() != note(&rewritten()) {
        assert!(
            Instant::now() < deadline,
            "the note on disk:\n{}\n{}",
            std::fs::read_to_string(&path).unwrap(),
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.keys(&["C-q"]);
    tmux.wait_text("EXIT=");
}
