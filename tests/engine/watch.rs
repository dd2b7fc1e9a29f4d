//! A note saved by another program while `vaultchat index --watch` runs becomes searchable (a new
//! note, an edit, a new folder, a rename, a delete). The time each took is printed, never asserted
//! (docs/decisions.md §25): the deadline only says the change never arrived.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Long enough that only a change that never reaches the index runs out of it, on any machine.
const NEVER: Duration = Duration::from_secs(60);

fn found(data: &std::path::Path, vault: &std::path::Path, query: &str) -> Vec<String> {
    result_paths(&search_json(data, vault, query, 5))
}

#[test]
fn external_saves_become_searchable() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    copy_sample_vault(&vault);
    let mut child = cmd(&data, &vault)
        .args(["index", "--watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _guard = KillOnDrop(child);
    let mut lines = BufReader::new(stdout).lines();
    wait_for_line(&mut lines, "watching");
    // The first run of a freshly linked binary pays for cold page caches; that is not the watcher.
    assert!(found(&data, &vault, "xylophone").is_empty());

    let mut worst = Duration::ZERO;
    // A new note, an edit of an existing note, a note in a new folder, a rename, a delete.
    // (what, how another program saves, a word to search, the note it should then find)
    type Case<'a> = (&'a str, Box<dyn Fn() + 'a>, &'a str, Option<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "new note",
            Box::new(|| {
                std::fs::write(vault.join("Inbox/Fresh.md"), "the word xylophone\n").unwrap()
            }),
            "xylophone",
            Some("Inbox/Fresh.md"),
        ),
        (
            "edit",
            Box::new(|| {
                std::fs::write(vault.join("Inbox/Ideas.md"), "# Ideas\n\nquokka census\n").unwrap()
            }),
            "quokka",
            Some("Inbox/Ideas.md"),
        ),
        (
            "new folder",
            Box::new(|| {
                std::fs::create_dir_all(vault.join("New/Deep")).unwrap();
                std::fs::write(vault.join("New/Deep/n.md"), "narwhal\n").unwrap();
            }),
            "narwhal",
            Some("New/Deep/n.md"),
        ),
        (
            "rename",
            Box::new(|| {
                std::fs::rename(vault.join("Inbox/Fresh.md"), vault.join("Inbox/Renamed.md"))
                    .unwrap()
            }),
            "xylophone",
            Some("Inbox/Renamed.md"),
        ),
        (
            "delete",
            Box::new(|| std::fs::remove_file(vault.join("Inbox/Renamed.md")).unwrap()),
            "xylophone",
            None,
        ),
    ];
    for (what, save, query, expected) in cases {
        let saved = Instant::now();
        save();
        loop {
            let got = found(&data, &vault, query);
            let ok = match expected {
                Some(path) => got == [path],
                None => got.is_empty(),
            };
            if ok {
                eprintln!("{what}: searchable after {:?}", saved.elapsed());
                worst = worst.max(saved.elapsed());
                break;
            }
            assert!(
                saved.elapsed() < NEVER,
                "{what}: never reflected in search ({got:?})"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    eprintln!("worst save-to-searchable latency: {worst:?}");
}
