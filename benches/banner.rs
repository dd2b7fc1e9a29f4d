//! Permission banner benchmark (issue 10, prose diffs): `cargo bench --bench banner`.
//!
//! An agent rewrites every tenth paragraph of a note of 2,000 paragraphs of about 450 characters
//! (one line each, as Markdown keeps them): 200 hunks, each a paragraph pair compared word by
//! word and wrapped.
//!
//! 1. Showing the request: `Banner::push` (the word-level diff of every pair, once per request)
//!    and the first frame at 80×24 (the whole diff wrapped for that width).
//! 2. Frame time while reading: 300 key presses (j, PageDown, End/Home, side by side and back)
//!    each followed by a frame at 80×24. Target: p95 ≤ 4 ms (a frame styles only the rows on
//!    screen; layouts are kept per width).
//! 3. For information: the first frame after a resize to 200×60.
//!
//! Prints a table and writes `bench-results/banner.json`. Plain `std::time::Instant`, no harness.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;
use std::time::Instant;
use vaultchat::agent::{PermissionRequest, Proposal};
use vaultchat::text::diff::TextDiff;
use vaultchat::tui::banner::Banner;
use vaultchat::tui::keymap::{KeyContext, Keymap};
use vaultchat::tui::theme::Theme;

const PARAGRAPHS: usize = 2_000;
const EVERY: usize = 10;
const PRESSES: usize = 300;
const TARGET_P95_MS: f64 = 4.0;

/// Paragraph `n`: about 450 characters of garden notes, varied by `n`.
fn paragraph(n: usize, rewritten: bool) -> String {
    let (fence, corner, order) = if rewritten {
        ("west", "sunny corner by the gate", "by mid-February")
    } else {
        ("south", "corner by the shed", "before the end of February")
    };
    format!(
        "Bed {n}: plan the vegetables for spring. Tomatoes go along the {fence} fence, where they \
         get sun from late morning until evening; the herb spiral needs more light than the old \
         apple tree allows, so it moves to the {corner}. Beans climb the north trellis again \
         this year, and the compost bin stays behind the greenhouse where the hose reaches it. \
         Order seeds {order}, because the good varieties sell out early."
    )
}

fn note(rewritten: bool) -> String {
    (0..PARAGRAPHS)
        .map(|n| format!("{}\n\n", paragraph(n, rewritten && n % EVERY == 0)))
        .collect()
}

fn request() -> PermissionRequest {
    let diff = TextDiff::new(&note(false), &note(true));
    PermissionRequest {
        id: 1,
        call_id: "call_1".into(),
        tool: "update_note".into(),
        input: json!({"note": "Garden.md"}),
        paths: vec!["Garden.md".into()],
        proposal: Some(Proposal {
            summary: "update Garden.md".into(),
            path: "Garden.md".into(),
            diff,
            files: Vec::new(),
        }),
        offer_session: true,
        offer_always: true,
        reason: "update_note writes to the vault".into(),
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let theme = Theme::builtin_dark();
    let keymap = Keymap::default_map();
    let small = Rect::new(0, 0, 80, 24);
    let large = Rect::new(0, 0, 200, 60);

    println!("vaultchat banner benchmark: {PARAGRAPHS} paragraphs, every {EVERY}th rewritten");
    let request = request();
    let hunks = request.proposal.as_ref().map_or(0, |p| p.diff.hunks.len());

    let mut banner = Banner::new();
    let start = Instant::now();
    banner.push(request);
    let push_ms = ms(start);
    let mut buf = Buffer::empty(small);
    let start = Instant::now();
    banner.render(small, &mut buf, &theme, &keymap);
    let first_frame_ms = ms(start);
    println!();
    println!("1. Showing the request ({hunks} hunks)");
    println!("   push (word diffs):        {push_ms:>8.1} ms");
    println!("   first frame at 80×24:     {first_frame_ms:>8.1} ms");

    let keys = [
        KeyCode::Char('j'),
        KeyCode::Char('j'),
        KeyCode::PageDown,
        KeyCode::Char('j'),
        KeyCode::Char('k'),
        KeyCode::End,
        KeyCode::Home,
        KeyCode::Char('d'),
        KeyCode::PageDown,
        KeyCode::Char('d'),
    ];
    let mut times = Vec::with_capacity(PRESSES);
    for press in 0..PRESSES {
        let event = KeyEvent::new(keys[press % keys.len()], KeyModifiers::NONE);
        let action = keymap.action(KeyContext::Banner, &event);
        buf.reset();
        let start = Instant::now();
        banner.handle(action, &event);
        banner.render(small, &mut buf, &theme, &keymap);
        times.push(ms(start));
    }
    times.sort_by(f64::total_cmp);
    let (p50, p95, max) = (
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        times.last().copied().unwrap_or(0.0),
    );
    let pass = p95 <= TARGET_P95_MS;
    println!();
    println!("2. Key press + frame at 80×24, {PRESSES} presses (j, pgdn, end/home, d)");
    println!("   p50 {p50:.3} ms  p95 {p95:.3} ms  max {max:.3} ms");
    println!(
        "   target p95 ≤ {TARGET_P95_MS} ms: {}",
        if pass { "pass" } else { "FAIL" }
    );

    let mut big = Buffer::empty(large);
    let start = Instant::now();
    banner.render(large, &mut big, &theme, &keymap);
    let resize_ms = ms(start);
    println!();
    println!("3. First frame after a resize to 200×60: {resize_ms:.1} ms");

    let report = json!({
        "benchmark": "banner",
        "paragraphs": PARAGRAPHS,
        "rewritten_every": EVERY,
        "hunks": hunks,
        "push_ms": push_ms,
        "first_frame_80x24_ms": first_frame_ms,
        "frames": {
            "presses": PRESSES,
            "p50_ms": p50,
            "p95_ms": p95,
            "max_ms": max,
            "target_p95_ms": TARGET_P95_MS,
            "pass": pass,
        },
        "resize_200x60_ms": resize_ms,
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-results");
    let path = dir.join("banner.json");
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        let text = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
        std::fs::write(&path, text + "\n")
    });
    match written {
        Ok(()) => println!("\nwrote {}", path.display()),
        Err(e) => eprintln!("\ncould not write {}: {e}", path.display()),
    }
}
