//! docs/architecture.md: only `src/tui/` may use the terminal UI crates, and each module imports only
//! modules below it in the module map. These tests read the source, so a violation fails CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

const UI_CRATES: [&str; 6] = [
    "ratatui",
    "crossterm",
    "tui_textarea",
    "ratatui_textarea",
    "syntect",
    "arboard",
];

/// The module map, top to bottom. A module may use only modules after it in this list.
const LAYERS: [&str; 13] = [
    "cli",
    "tui",
    "agent",
    "mcp",
    "llm",
    "tools",
    "permission",
    "attach",
    "index",
    "store",
    "vault",
    "config",
    "quote",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file belongs to (`src/index/sync.rs` → `index`).
fn module_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).ok()?;
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    Some(first.trim_end_matches(".rs").to_string())
}

#[test]
fn ui_crates_stay_in_tui() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(files.len() > 10);
    let mut offenders = Vec::new();
    for file in files {
        if module_of(&file).as_deref() == Some("tui") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for krate in UI_CRATES {
            if text.contains(&format!("{krate}::")) || text.contains(&format!("use {krate}")) {
                offenders.push(format!("{} uses {krate}", file.display()));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn modules_only_import_modules_below_them() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut offenders = Vec::new();
    for file in files {
        let Some(module) = module_of(&file) else {
            continue;
        };
        let Some(rank) = LAYERS.iter().position(|l| *l == module) else {
            continue; // lib.rs, main.rs
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for higher in LAYERS.iter().take(rank) {
            if text.contains(&format!("crate::{higher}::"))
                || text.contains(&format!("crate::{higher};"))
            {
                offenders.push(format!(
                    "{} ({module}) uses crate::{higher}",
                    file.display()
                ));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}
