//! The note picker at 137k notes (issue 22): `cargo bench --bench picker`.
//!
//! A listing shaped like `gen_vault.py --shape tldr --notes 137442` (tldr-pages ×3: 600 folders,
//! about 2,100 command names each repeated in up to 70 folders, no titles of their own), built in
//! memory. Five rounds of: open the picker and draw its first frame (160×48), type `tar` one key
//! at a time, each key followed by its frame, move down a page, close. Prints the open and
//! per-keystroke times (p50, p95, max) in process — what `scripts/bench --only app` measures
//! through tmux minus the terminal's share — and writes `bench-results/picker.json`.
//! `PICKER_QUERY` types another query.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;
use vaultchat::tui::files::NoteEntry;
use vaultchat::tui::picker::Picker;
use vaultchat::tui::theme::Theme;

const NOTES: usize = 137_442;
const ROUNDS: usize = 5;
const WIDTH: u16 = 160;
const HEIGHT: u16 = 48;

const COPIES: [&str; 3] = ["tldr", "tldr-mirror", "tldr-old"];
const LANGS: [&str; 25] = [
    "", "ar", "bn", "bs", "ca", "cs", "da", "de", "es", "fa", "fr", "hi", "id", "it", "ja", "ko",
    "nl", "no", "pl", "pt_BR", "ru", "sv", "th", "tr", "zh",
];
const PLATFORMS: [&str; 8] = [
    "android",
    "cisco-ios",
    "common",
    "freebsd",
    "linux",
    "osx",
    "sunos",
    "windows",
];
const WORDS: [&str; 60] = [
    "tar",
    "tart",
    "git",
    "grep",
    "cp",
    "cpio",
    "man",
    "find",
    "ls",
    "cat",
    "sed",
    "awk",
    "zip",
    "unzip",
    "ssh",
    "scp",
    "rsync",
    "curl",
    "wget",
    "top",
    "ps",
    "kill",
    "mount",
    "umount",
    "df",
    "du",
    "chmod",
    "chown",
    "ln",
    "mv",
    "rm",
    "mkdir",
    "touch",
    "head",
    "tail",
    "less",
    "more",
    "sort",
    "uniq",
    "cut",
    "tr",
    "wc",
    "xargs",
    "tee",
    "diff",
    "patch",
    "make",
    "gcc",
    "python",
    "node",
    "npm",
    "cargo",
    "docker",
    "kubectl",
    "systemctl",
    "journalctl",
    "ip",
    "ping",
    "archive",
    "note",
];
const SUFFIXES: [&str; 8] = ["system", "plan", "note", "back", "for", "all", "any", "and"];

/// A tiny deterministic generator (no dependency for a benchmark's names).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

fn listing() -> Vec<NoteEntry> {
    let mut rng = Lcg(7);
    let mut names = BTreeSet::new();
    for word in WORDS {
        names.insert(word.to_string());
        for _ in 0..40 {
            let name = match rng.next() % 4 {
                0 | 1 => word.to_string(),
                2 => format!("{word}-{}", SUFFIXES[rng.next() % SUFFIXES.len()]),
                _ => format!("{word}{}", 1 + rng.next() % 9),
            };
            names.insert(name);
        }
    }
    let names: Vec<String> = names.into_iter().collect();
    let folders: Vec<String> = COPIES
        .iter()
        .flat_map(|c| {
            LANGS.iter().flat_map(move |l| {
                PLATFORMS.iter().map(move |p| {
                    let pages = if l.is_empty() {
                        "pages".to_string()
                    } else {
                        format!("pages.{l}")
                    };
                    format!("{c}/{pages}/{p}")
                })
            })
        })
        .collect();
    let per_folder = NOTES / folders.len();
    let mut notes = Vec::with_capacity(NOTES);
    for (fi, folder) in folders.iter().enumerate() {
        let count = per_folder + usize::from(fi < NOTES - per_folder * folders.len());
        let start = (fi * 37) % names.len();
        let mut seen = BTreeSet::new();
        for k in 0..count {
            let name = &names[(start + k) % names.len()];
            let path = format!("{folder}/{name}.md");
            if !seen.insert(path.clone()) {
                continue;
            }
            notes.push(NoteEntry {
                path,
                title: String::new(),
                aliases: Vec::new(),
                modified_ns: (fi * 1000 + k) as i64,
            });
        }
    }
    notes.sort_by(|a, b| a.path.cmp(&b.path));
    notes
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn summary(mut values: Vec<f64>) -> serde_json::Value {
    values.sort_by(f64::total_cmp);
    json!({"p50_ms": pct(&values, 50.0), "p95_ms": pct(&values, 95.0),
           "max_ms": values.last().copied().unwrap_or(0.0), "n": values.len()})
}

fn main() {
    let query = std::env::var("PICKER_QUERY").unwrap_or_else(|_| "tar".into());
    let table = Arc::new(listing());
    let theme = Theme::builtin_dark();
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let (mut opens, mut keys) = (Vec::new(), Vec::new());
    let mut per_key: Vec<Vec<f64>> = vec![Vec::new(); query.chars().count()];
    let mut counts = Vec::new();
    for _ in 0..ROUNDS {
        let mut buf = Buffer::empty(area);
        let started = Instant::now();
        let mut picker = Picker::new(Arc::clone(&table), HashMap::new());
        picker.render(area, &mut buf, &theme);
        opens.push(started.elapsed().as_secs_f64() * 1000.0);
        for (n, c) in query.chars().enumerate() {
            let mut buf = Buffer::empty(area);
            let started = Instant::now();
            picker.handle(None, &key(c));
            picker.render(area, &mut buf, &theme);
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            keys.push(ms);
            per_key[n].push(ms);
        }
        counts.push(picker.matched_paths().len());
        drop(picker);
    }
    let result = json!({
        "notes": table.len(), "query": query, "matches": counts.first(),
        "open": summary(opens), "keystroke": summary(keys),
        "per_key": per_key.into_iter().map(summary).collect::<Vec<_>>(),
    });
    println!(
        "picker at {} notes, query {query:?} ({} matches)",
        table.len(),
        counts[0]
    );
    println!(
        "open + first frame   p50 {:.2} ms  p95 {:.2} ms",
        result["open"]["p50_ms"].as_f64().unwrap_or(0.0),
        result["open"]["p95_ms"].as_f64().unwrap_or(0.0)
    );
    println!(
        "keystroke + frame    p50 {:.2} ms  p95 {:.2} ms  max {:.2} ms",
        result["keystroke"]["p50_ms"].as_f64().unwrap_or(0.0),
        result["keystroke"]["p95_ms"].as_f64().unwrap_or(0.0),
        result["keystroke"]["max_ms"].as_f64().unwrap_or(0.0)
    );
    for (n, s) in result["per_key"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        println!(
            "  key {}            p50 {:.2} ms",
            n + 1,
            s["p50_ms"].as_f64().unwrap_or(0.0)
        );
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-results");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(
            out.join("picker.json"),
            serde_json::to_string_pretty(&result).unwrap_or_default(),
        );
    }
}
