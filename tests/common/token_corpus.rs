//! The files the token-estimate comparison reads (`vaultchat::llm::tokens::accuracy`): the
//! recorded streams and the notes of the repository, for the accuracy test and
//! `cargo bench --bench tokens` (which includes this file).

use std::path::{Path, PathBuf};
use vaultchat::llm::tokens::accuracy::{Corpus, NOTE_FOLDERS, RECORDED_STREAMS};

/// The corpus of the repository at `root`.
pub fn load(root: &Path) -> std::io::Result<Corpus> {
    let mut streams = Vec::new();
    for name in RECORDED_STREAMS {
        let path = root.join(format!("tests/fixtures/sse/{name}.sse"));
        streams.push((name.to_string(), std::fs::read(path)?));
    }
    let mut paths = Vec::new();
    for folder in NOTE_FOLDERS {
        collect_markdown(&root.join(folder), &mut paths)?;
    }
    paths.sort();
    let mut notes = Vec::new();
    for path in paths {
        let text = String::from_utf8_lossy(&std::fs::read(&path)?).into_owned();
        let name = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        notes.push((name, text));
    }
    Ok(Corpus { streams, notes })
}

fn collect_markdown(folder: &Path, into: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(folder)?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_markdown(&path, into)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            into.push(path);
        }
    }
    Ok(())
}
