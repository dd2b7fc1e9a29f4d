//! `vaultchat mcp` answers `initialize` before it watches a single folder, and a note saved while
//! the watches are not yet in place is still found afterwards: the watcher's first reconcile,
//! which runs once every folder is watched, picks it up.
//!
//! The start-up is held at a known point with a failpoint (`watch.before_folders`, action `wait`):
//! the watcher's thread stops before its first watch and goes on when the test removes the marker
//! file, so "before any watch" is a fact of the run, not a race the test hopes to win.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::mcp_stdio::McpStdio;
use common::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Long enough that only an answer or a change that never comes runs out of it, on any machine.
const NEVER: Duration = Duration::from_secs(60);

fn held_server(data: &Path, vault: &Path, marker: &Path) -> McpStdio {
    let mut command = cmd(data, vault);
    command
        .arg("mcp")
        .env("VAULTCHAT_FAILPOINT", "watch.before_folders")
        .env("VAULTCHAT_FAILPOINT_ACTION", "wait")
        .env("VAULTCHAT_FAILPOINT_MARKER", marker);
    McpStdio::spawn(command)
}

fn search_text(server: &mut McpStdio, query: &str) -> String {
    server
        .call_tool("search_notes", json!({"query": query}))
        .to_string()
}

#[test]
fn initialize_is_answered_before_any_watch_and_startup_saves_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    let marker = tmp.path().join("watch-held");
    gen_vault(&vault, 120, 5);
    // The index exists, as it does for a client that starts the server again and again.
    ok(&data, &vault, &["index"]);
    let existing = std::fs::read_dir(vault.join("Projects"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("a folder under Projects");

    let mut server = held_server(&data, &vault, &marker);
    // The watcher's thread has reached the point before its first watch and waits there.
    let deadline = Instant::now() + NEVER;
    while !marker.exists() {
        assert!(
            Instant::now() < deadline,
            "the watcher never reached its start"
        );
        // Pacing only: the marker is the signal.
        std::thread::sleep(Duration::from_millis(10));
    }
    let init = server.initialize();
    assert!(
        init["result"]["serverInfo"].is_object(),
        "initialize was not answered while no folder was watched: {init}"
    );

    // Saved while nothing is watched: an edit in a folder that exists, a note in a new folder.
    std::fs::write(
        existing.join("Startup edit.md"),
        "# Startup edit\n\nthe word quetzalcoatl\n",
    )
    .unwrap();
    std::fs::create_dir_all(vault.join("Arrived/During/Startup")).unwrap();
    std::fs::write(
        vault.join("Arrived/During/Startup/Fresh.md"),
        "# Fresh\n\nthe word xylophonist\n",
    )
    .unwrap();
    // Still held: a search now cannot have been helped by a watch (there is none yet).
    assert!(marker.exists());

    // Let the watcher go on: it watches every folder, then asks for the one reconcile.
    std::fs::remove_file(&marker).unwrap();
    let deadline = Instant::now() + NEVER;
    let wanted = [
        ("quetzalcoatl", "Startup edit.md"),
        ("xylophonist", "Arrived/During/Startup/Fresh.md"),
    ];
    for (word, path) in wanted {
        loop {
            let text = search_text(&mut server, word);
            if text.contains(path) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{path}, saved during start-up, was never found by searching {word:?}: {text}"
            );
            // Pacing between searches while the first reconcile runs.
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    // And the watches are live afterwards: a later save in the new folder is found too.
    std::fs::write(
        vault.join("Arrived/During/Startup/Later.md"),
        "# Later\n\nthe word ocarinaist\n",
    )
    .unwrap();
    loop {
        let text = search_text(&mut server, "ocarinaist");
        if text.contains("Arrived/During/Startup/Later.md") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a save after start-up was never found: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
