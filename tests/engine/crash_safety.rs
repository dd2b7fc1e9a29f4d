//! `kill -9` in the middle of a loop of note writes leaves every note either the complete old version
//! or a complete new version (docs/safety.md §2, "Atomic replace"), and the temp files a kill
//! leaves behind are found and removed by `cleanup_stale_temps`.
//!
//! The writer is this test binary itself, re-executed with `VAULTCHAT_CRASH_CHILD` set and a filter
//! selecting only the test, which then runs as the writer ([`crash_writer`]) instead, so the kill
//! lands in a real separate process at an arbitrary point.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use vaultchat::vault::guard::{Access, Vault, VaultPath, is_temp_name};
use vaultchat::vault::note_io::{self, content_hash, read_note, write_note};

const CHILD_ENV: &str = "VAULTCHAT_CRASH_CHILD";
const NOTES: usize = 20;
const ROUNDS: usize = 10;
/// The child stops on its own after this long, in case the parent died and will never kill it.
const CHILD_LIFETIME: Duration = Duration::from_secs(30);

/// Version `version` of note `note`: a header naming both, a body of several KB that differs per
/// version, and a trailer with the length and hash of everything before it, so a torn or mixed file
/// cannot pass for a valid version.
fn content(note: usize, version: u64) -> String {
    let mut body = format!("note: {note}\nversion: {version}\n");
    let lines = 80 + (version % 40);
    for line in 0..lines {
        body.push_str(&format!(
            "line {line:04} of version {version:08} of note {note:02}: the quick brown fox jumps over\n"
        ));
    }
    let trailer = format!(
        "length: {} hash: {:016x}\n",
        body.len(),
        content_hash(body.as_bytes())
    );
    body + &trailer
}

/// The version a note's text holds, if it is exactly one complete valid version of `note`.
fn parse(note: usize, text: &str) -> Result<u64, String> {
    let version = text
        .lines()
        .nth(1)
        .and_then(|line| line.strip_prefix("version: "))
        .and_then(|value| value.parse::<u64>().ok())
        .ok_or_else(|| format!("no version header in {} bytes", text.len()))?;
    if text == content(note, version) {
        Ok(version)
    } else {
        Err(format!(
            "{} bytes claim version {version} but are not that version",
            text.len()
        ))
    }
}

fn note_paths(vault: &Vault) -> Vec<VaultPath> {
    (0..NOTES)
        .map(|note| {
            vault
                .resolve(&format!("notes/n{note:02}.md"), Access::Write)
                .unwrap()
        })
        .collect()
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| is_temp_name(&path.file_name().unwrap().to_string_lossy()))
        .collect()
}

/// The sum of the versions the notes hold now (every read sees a whole note: writes are atomic).
fn total_version(paths: &[VaultPath]) -> u64 {
    paths
        .iter()
        .enumerate()
        .map(|(note, path)| {
            let text = fs::read_to_string(path.abs()).unwrap();
            parse(note, &text).unwrap_or_else(|err| panic!("note {note}: {err}"))
        })
        .sum()
}

/// The test harness's name for [`kill_9_during_writes_leaves_every_note_old_or_new`]: its module
/// path without the binary's name, so the filter still matches wherever this file is mounted.
fn parent_test_name() -> String {
    const NAME: &str = "kill_9_during_writes_leaves_every_note_old_or_new";
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_binary, module)| module);
    if module.is_empty() {
        NAME.to_string()
    } else {
        format!("{module}::{NAME}")
    }
}

/// The writer: [`kill_9_during_writes_leaves_every_note_old_or_new`] runs itself again in a
/// process of its own with `CHILD_ENV` set, and that process writes here until it is killed. It
/// is a mode of the test rather than a test of its own, so the test list holds no test that
/// proves nothing alone.
fn crash_writer(base: PathBuf) {
    let vault = Vault::open(base.join("vault")).unwrap();
    let paths = note_paths(&vault);
    fs::write(base.join("ready"), "").unwrap();
    let start = Instant::now();
    let mut step = 0;
    while start.elapsed() < CHILD_LIFETIME {
        let note = step % NOTES;
        let read = read_note(&paths[note]).unwrap();
        let version = parse(note, &read.text).unwrap();
        write_note(
            &paths[note],
            &content(note, version + 1),
            &read.format,
            Some(&read.fingerprint),
        )
        .unwrap();
        step += 1;
    }
}

#[test]
fn kill_9_during_writes_leaves_every_note_old_or_new() {
    if let Some(base) = std::env::var_os(CHILD_ENV) {
        crash_writer(PathBuf::from(base));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().to_path_buf();
    let vault = Vault::open({
        fs::create_dir_all(base.join("vault")).unwrap();
        base.join("vault")
    })
    .unwrap();
    let paths = note_paths(&vault);
    for (note, path) in paths.iter().enumerate() {
        note_io::create_note(path, &content(note, 0), false).unwrap();
    }
    let notes_dir = vault.root().join("notes");
    let exe = std::env::current_exe().unwrap();
    let mut versions = [0u64; NOTES];
    let mut seed: u64 = 0x5EED_CAFE;
    let mut temps_seen = 0;
    for round in 0..ROUNDS {
        // A tiny LCG (Knuth's MMIX constants): a fixed seed gives the same delays on every run.
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let delay = Duration::from_millis(5 + (seed >> 33) % 56);
        let _ = fs::remove_file(base.join("ready"));
        let mut child = Command::new(&exe)
            .args([
                &parent_test_name(),
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &base)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let waited = Instant::now();
        while !base.join("ready").exists() {
            if let Some(status) = child.try_wait().unwrap() {
                let output = child.wait_with_output().unwrap();
                panic!(
                    "round {round}: the writer exited early ({status}): {}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            assert!(
                waited.elapsed() < Duration::from_secs(60),
                "the writer never started"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // One write of this round has landed before the kill is paced: on a loaded machine the
        // writer can take longer than the delay to reach its loop, and a kill before any write
        // proves nothing.
        let before: u64 = versions.iter().sum();
        while total_version(&paths) <= before {
            assert!(
                waited.elapsed() < Duration::from_secs(60),
                "round {round}: the writer wrote nothing"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // Pacing only: the kill lands at a varied point of the writer's loop; that it died
        // of the kill, mid-loop, is checked below.
        std::thread::sleep(delay);
        child.kill().unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(
            output.status.signal(),
            Some(9),
            "round {round}: the writer was not killed mid-loop ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );

        for (note, path) in paths.iter().enumerate() {
            let text = fs::read_to_string(path.abs()).unwrap();
            let version = parse(note, &text)
                .unwrap_or_else(|err| panic!("round {round}, note {note}: {err}"));
            assert!(
                version >= versions[note],
                "round {round}, note {note}: went back from {} to {version}",
                versions[note]
            );
            versions[note] = version;
        }
        let temps = temp_files(&notes_dir);
        temps_seen += temps.len();
        let root = vault.resolve("", Access::Read).unwrap();
        let removed = note_io::cleanup_stale_temps(&root, Duration::ZERO).unwrap();
        assert_eq!(removed.len(), temps.len(), "round {round}: {temps:?}");
        assert!(temp_files(&notes_dir).is_empty());
    }
    let writes: u64 = versions.iter().sum();
    eprintln!(
        "{writes} writes completed over {ROUNDS} kills; {temps_seen} torn temp files cleaned up"
    );
    assert!(
        writes >= ROUNDS as u64,
        "too few writes happened for the kills to prove anything"
    );
}
