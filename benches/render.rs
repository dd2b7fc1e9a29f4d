//! Chat render benchmarks (issue 5): `cargo bench --bench render`.
//!
//! 1. Frame time of a 1,000-message transcript (mixed cells, code fences included) at 200×60,
//!    paging through it: `Transcript::render` (per-cell cache, visible rows only) against
//!    `Transcript::render_uncached` (every cell laid out every frame). Targets: p95 ≤ 4 ms and at
//!    least 10× faster than uncached.
//! 2. Cost of one streamed delta (`append_delta` + `render`) with 10, 100, 500 and 1,000 messages
//!    before the reply: the median per size and the slope per 100 messages. Target: flat, a slope
//!    under 0.1 ms per 100 messages.
//! 3. For information: the first frame of a 1,000-message session (every cell laid out, code
//!    highlighted) and a frame after a resize (every cell re-wrapped, highlighting reused).
//!
//! Prints a table and writes `bench-results/render.json`. Plain `std::time::Instant`, no harness.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;
use std::time::Instant;
use vaultchat::agent::{CallDecision, ToolCallRecord};
use vaultchat::tui::chat::Transcript;
use vaultchat::tui::theme::Theme;

const WIDTH: u16 = 200;
const HEIGHT: u16 = 60;
const FRAME_MESSAGES: usize = 1_000;
const FRAMES: usize = 240;
const DELTA_SIZES: [usize; 4] = [10, 100, 500, 1_000];
const DELTAS: usize = 400;
const RESIZES: usize = 20;
const TARGET_P95_MS: f64 = 4.0;
const TARGET_SPEEDUP: f64 = 10.0;
const TARGET_SLOPE_MS_PER_100: f64 = 0.1;

/// An assistant reply with a heading, a list, a code fence and a quote; `n` varies the words.
fn reply(n: usize) -> String {
    let (lang, code) = if n.is_multiple_of(2) {
        (
            "rust",
            format!(
                "fn total(items: &[u32]) -> u32 {{\n    // sum of item {n}\n    items.iter().sum::<u32>() + {n}\n}}"
            ),
        )
    } else {
        (
            "python",
            format!("def total(items):\n    # sum of item {n}\n    return sum(items) + {n}"),
        )
    };
    format!(
        "## Step {n}\n\nHere is what I found in [[Projects/Plan {n}]], tagged #project and **important**: \
         the budget for item {n} is still *open*, and `owner` is unset. The meeting notes mention it \
         twice, so it is worth following up this week.\n\n\
         1. Confirm the budget with finance\n2. Book the venue for the {n}th\n   - check the dates\n\
         3. Send the agenda\n\n```{lang}\n{code}\n```\n\n> Keep the summary short."
    )
}

/// A transcript of `messages` cells: questions, replies, tool calls and the odd note. `seed`
/// varies the text, so that code highlighted for one transcript is not reused for another.
fn transcript(messages: usize, seed: usize) -> Transcript {
    let mut t = Transcript::new();
    for n in seed..seed + messages {
        match n % 4 {
            0 => t.push_user(&format!(
                "Question {n}: what does my plan say about the budget, and what is still open?"
            )),
            1 => {
                let id = format!("call-{n}");
                let input = json!({"path": format!("Projects/Plan {n}.md")});
                t.tool_started(&id, "read_note", &input);
                t.tool_finished(&ToolCallRecord {
                    id,
                    name: "read_note".into(),
                    input,
                    is_error: false,
                    decision: CallDecision::Allowed,
                    result: format!("# Plan {n}\n- budget: open\n- venue: booked"),
                });
            }
            2 => {
                t.append_delta(&reply(n));
                t.finish_streaming();
            }
            _ if n % 100 == 3 => t.push_system(&format!("Context is {}% full.", n / 10)),
            _ => {
                t.append_delta(&format!("Done with step {n}; anything else?"));
                t.finish_streaming();
            }
        }
    }
    t
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

struct Stats {
    p50: f64,
    p95: f64,
    max: f64,
}

fn stats(mut samples: Vec<f64>) -> Stats {
    samples.sort_by(f64::total_cmp);
    Stats {
        p50: percentile(&samples, 0.5),
        p95: percentile(&samples, 0.95),
        max: samples.last().copied().unwrap_or(0.0),
    }
}

/// Frame times (ms) while paging up through the transcript (back to the bottom at the top).
fn frame_times(t: &mut Transcript, theme: &Theme, cached: bool) -> Vec<f64> {
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);
    // The first frame fills the cache; it is the cost of opening a session, not of a frame.
    t.render(area, &mut buf, theme, true);
    let mut times = Vec::with_capacity(FRAMES);
    for frame in 0..FRAMES {
        if frame % 60 == 59 {
            t.scroll_bottom();
        } else {
            t.page_up();
        }
        buf.reset();
        let start = Instant::now();
        if cached {
            t.render(area, &mut buf, theme, true);
        } else {
            t.render_uncached(area, &mut buf, theme, true);
        }
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times
}

/// Times (ms) of one delta and the frame after it, while a reply streams under `messages` cells.
fn delta_times(messages: usize, theme: &Theme) -> Vec<f64> {
    let mut t = transcript(messages, messages * 10_000);
    t.push_user("One more question: summarise the plan.");
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);
    t.render(area, &mut buf, theme, true);
    let mut times = Vec::with_capacity(DELTAS);
    for k in 0..DELTAS {
        // Tokens of a few characters, with paragraph breaks and a code fence now and then.
        let delta = match k % 50 {
            0 if k > 0 => "\n\n".to_string(),
            20 => "\n\n```rust\nlet total = items.iter().sum::<u32>();\n".to_string(),
            30 => "```\n\n".to_string(),
            _ => format!(" word{k}"),
        };
        buf.reset();
        let start = Instant::now();
        t.append_delta(&delta);
        t.render(area, &mut buf, theme, true);
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times
}

/// The first frame of a fresh transcript, and frames that each follow a change of width (ms).
fn relayout_times(theme: &Theme) -> (f64, Vec<f64>) {
    let mut t = transcript(FRAME_MESSAGES, 1_000_000);
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);
    let start = Instant::now();
    t.render(area, &mut buf, theme, true);
    let first = start.elapsed().as_secs_f64() * 1e3;
    let mut times = Vec::with_capacity(RESIZES);
    for i in 0..RESIZES {
        let area = Rect::new(0, 0, WIDTH - (i % 2) as u16, HEIGHT);
        buf.reset();
        let start = Instant::now();
        t.render(area, &mut buf, theme, true);
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    (first, times)
}

/// The least-squares slope of `y` over `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let covariance: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let variance: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if variance == 0.0 {
        0.0
    } else {
        covariance / variance
    }
}

fn main() {
    let theme = Theme::builtin_dark();

    println!("vaultchat render benchmark ({WIDTH}×{HEIGHT})");
    println!();
    println!("1. Frame time, {FRAME_MESSAGES} messages, {FRAMES} frames paging through");
    let mut t = transcript(FRAME_MESSAGES, 0);
    let before = t.layout_count();
    let cached = stats(frame_times(&mut t, &theme, true));
    let cached_layouts = t.layout_count() - before;
    let mut t = transcript(FRAME_MESSAGES, 0);
    let uncached = stats(frame_times(&mut t, &theme, false));
    let speedup_p50 = uncached.p50 / cached.p50.max(1e-9);
    let speedup_p95 = uncached.p95 / cached.p95.max(1e-9);
    println!(
        "   {:<10} {:>10} {:>10} {:>10}",
        "", "p50 ms", "p95 ms", "max ms"
    );
    for (name, s) in [("cached", &cached), ("uncached", &uncached)] {
        println!(
            "   {:<10} {:>10.3} {:>10.3} {:>10.3}",
            name, s.p50, s.p95, s.max
        );
    }
    println!(
        "   speed-up: {speedup_p50:.0}× at p50, {speedup_p95:.0}× at p95 \
         (cells laid out during the cached frames, first included: {cached_layouts})"
    );
    let frame_pass = cached.p95 <= TARGET_P95_MS && speedup_p95 >= TARGET_SPEEDUP;
    println!(
        "   target p95 ≤ {TARGET_P95_MS} ms and ≥ {TARGET_SPEEDUP}× faster: {}",
        if frame_pass { "pass" } else { "FAIL" }
    );

    println!();
    println!("2. One streamed delta (append_delta + render), {DELTAS} deltas per size");
    println!("   {:>10} {:>12} {:>10}", "messages", "median ms", "p95 ms");
    let mut sizes = Vec::new();
    let mut points = Vec::new();
    for messages in DELTA_SIZES {
        let s = stats(delta_times(messages, &theme));
        println!("   {:>10} {:>12.4} {:>10.4}", messages, s.p50, s.p95);
        points.push((messages as f64, s.p50));
        sizes.push(
            json!({"messages": messages, "median_ms": s.p50, "p95_ms": s.p95, "max_ms": s.max}),
        );
    }
    let per_100 = slope(&points) * 100.0;
    let delta_pass = per_100 < TARGET_SLOPE_MS_PER_100;
    println!(
        "   slope: {per_100:.5} ms per 100 messages (target < {TARGET_SLOPE_MS_PER_100}): {}",
        if delta_pass { "pass" } else { "FAIL" }
    );

    println!();
    println!("3. Full layouts, {FRAME_MESSAGES} messages (for information)");
    let (first, resizes) = relayout_times(&theme);
    let resize = stats(resizes);
    println!("   first frame of the session: {first:.1} ms");
    println!(
        "   frame after a resize: p50 {:.1} ms, max {:.1} ms ({RESIZES} resizes)",
        resize.p50, resize.max
    );

    let report = json!({
        "benchmark": "render",
        "width": WIDTH,
        "height": HEIGHT,
        "frame": {
            "messages": FRAME_MESSAGES,
            "frames": FRAMES,
            "cached": {"p50_ms": cached.p50, "p95_ms": cached.p95, "max_ms": cached.max},
            "uncached": {"p50_ms": uncached.p50, "p95_ms": uncached.p95, "max_ms": uncached.max},
            "speedup_p50": speedup_p50,
            "speedup_p95": speedup_p95,
            "target": {"p95_ms": TARGET_P95_MS, "speedup": TARGET_SPEEDUP},
            "pass": frame_pass,
        },
        "delta": {
            "deltas_per_size": DELTAS,
            "sizes": sizes,
            "slope_ms_per_100_messages": per_100,
            "target_slope_ms_per_100_messages": TARGET_SLOPE_MS_PER_100,
            "pass": delta_pass,
        },
        "relayout": {
            "messages": FRAME_MESSAGES,
            "first_frame_ms": first,
            "resize_p50_ms": resize.p50,
            "resize_max_ms": resize.max,
        },
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-results");
    let path = dir.join("render.json");
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        let text = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
        std::fs::write(&path, text + "\n")
    });
    match written {
        Ok(()) => println!("\nwrote {}", path.display()),
        Err(e) => eprintln!("\ncould not write {}: {e}", path.display()),
    }
}
