//! Markdown parser benchmark: `cargo bench --bench markdown`.
//!
//! 1. Pathological inputs: thousands of unclosed or repeated constructs in a row (`[[`, `#`, `%%`,
//!    backticks, list markers…), each parsed at 20,000 and at 80,000 repetitions, with and
//!    without inline code after them (which sends a note down the pulldown-cmark path). Linear
//!    work gives a time ratio near 4, quadratic near 16; a ratio of 8 or more is reported as a
//!    failure (exit status 1). Each time is the best of three runs, so a busy machine does not fake
//!    a curve.
//! 2. For information: parsing 1,000 generated notes of about 2 KB (half on each path).
//!
//! Prints a table and writes `bench-results/markdown.json`. Plain `std::time::Instant`, no harness.
//! The unit test `pathological_inputs_parse_to_results_in_proportion` checks what these inputs
//! parse to; this program checks how long it takes.

use serde_json::json;
use std::hint::black_box;
use std::time::{Duration, Instant};
use vaultchat::vault::markdown::parse;

const UNITS: [&str; 21] = [
    "[[", "#", "![[", "[[a", "[[a|", "#a ", "]]", "%%", "[", "(#", "\\", "a#", "[[#", "`", "<",
    "[](", "- ", "> ", "---\n", "a\n", "*",
];
const SMALL: usize = 20_000;
const LARGE: usize = 80_000;
const LIMIT_RATIO: f64 = 8.0;

/// The best of three parses of `text`.
fn parse_time(text: &str) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            black_box(parse(text));
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    println!("pathological inputs: {SMALL} and {LARGE} repetitions, best of 3");
    println!(
        "{:<12} {:>10} {:>10} {:>7}",
        "input", "small ms", "large ms", "ratio"
    );
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for unit in UNITS {
        for suffix in ["", "\n`code`"] {
            let small = format!("{}{suffix}", unit.repeat(SMALL));
            let large = format!("{}{suffix}", unit.repeat(LARGE));
            // Quadratic work gives a ratio near 16 every time; a one-off outlier from other
            // programs on the same cores gets up to two more tries.
            let mut tries = Vec::new();
            for _ in 0..3 {
                let (t_small, t_large) = (parse_time(&small), parse_time(&large));
                let ratio = t_large.as_secs_f64() / t_small.as_secs_f64().max(1e-4);
                tries.push((t_small, t_large, ratio));
                if ratio < LIMIT_RATIO {
                    break;
                }
            }
            let (t_small, t_large, ratio) = tries[tries.len() - 1];
            let name = format!("{unit:?}{}", if suffix.is_empty() { "" } else { "+code" });
            println!(
                "{name:<12} {:>10.2} {:>10.2} {:>7.1}",
                ms(t_small),
                ms(t_large),
                ratio
            );
            if ratio >= LIMIT_RATIO {
                failed.push(name.clone());
            }
            rows.push(json!({
                "input": name,
                "small_ms": ms(t_small),
                "large_ms": ms(t_large),
                "ratio": ratio,
            }));
        }
    }

    let frontmatter = "---\ntitle: Generated\ntags: [a, b/c]\naliases:\n  - Other\n---\n";
    let section = "# Heading\n\nSome text with a #tag and a [[Link|alias]] and more words to make a \
                   realistic paragraph of prose that goes on for a while, #another/tag.\n\n\
                   ## Section\n\n- item one\n- item [[two#Heading]]\n\n";
    let plain = format!("{frontmatter}{}", section.repeat(11));
    let coded = format!(
        "{frontmatter}{}",
        section.replace("more words", "`code`").repeat(11)
    );
    let start = Instant::now();
    for _ in 0..500 {
        black_box(parse(&plain));
        black_box(parse(&coded));
    }
    let generated = start.elapsed();
    println!(
        "\n1,000 generated notes of ~2 KB: {:.1} ms ({:.1} µs a note)",
        ms(generated),
        generated.as_secs_f64() * 1e6 / 1000.0
    );

    let report = json!({
        "pathological": rows,
        "limit_ratio": LIMIT_RATIO,
        "failed": failed,
        "generated_1000_notes_ms": ms(generated),
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-results");
    let path = dir.join("markdown.json");
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        let text = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
        std::fs::write(&path, text + "\n")
    });
    match written {
        Ok(()) => println!("\nwrote {}", path.display()),
        Err(e) => eprintln!("\ncould not write {}: {e}", path.display()),
    }
    if !failed.is_empty() {
        eprintln!(
            "not linear (time ratio ≥ {LIMIT_RATIO}): {}",
            failed.join(", ")
        );
        std::process::exit(1);
    }
}
