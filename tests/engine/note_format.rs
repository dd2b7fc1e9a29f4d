//! Note I/O keeps a note's format through read → edit → write, refuses what it cannot edit safely, and
//! never clobbers a note it was told to create.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::sync::{Arc, Barrier};

use pretty_assertions::assert_eq;
use tempfile::TempDir;
use vaultchat::vault::guard::{Access, Vault, VaultPath};
use vaultchat::vault::note_io::{
    self, LineEnding, NoteError, TextFormat, content_hash, read_note, write_note,
};

fn vault() -> (TempDir, Vault) {
    let dir = tempfile::tempdir().unwrap();
    let vault = Vault::open(dir.path()).unwrap();
    (dir, vault)
}

fn note(vault: &Vault, rel: &str, bytes: &[u8]) -> VaultPath {
    let path = vault.resolve(rel, Access::Write).unwrap();
    fs::create_dir_all(path.abs().parent().unwrap()).unwrap();
    fs::write(path.abs(), bytes).unwrap();
    path
}

/// Reads the note, replaces `from` with `to` in its text, writes it back and returns the bytes on disk.
fn edit(path: &VaultPath, from: &str, to: &str) -> Vec<u8> {
    let read = read_note(path).unwrap();
    assert!(read.text.contains(from), "{:?}", read.text);
    let written = write_note(
        path,
        &read.text.replace(from, to),
        &read.format,
        Some(&read.fingerprint),
    )
    .unwrap();
    let bytes = fs::read(path.abs()).unwrap();
    assert_eq!(written.hash, content_hash(&bytes));
    assert_eq!(written.size, bytes.len() as u64);
    assert_eq!(note_io::fingerprint(path).unwrap(), written);
    bytes
}

#[test]
fn crlf_survives_an_edit() {
    let (_dir, vault) = vault();
    let path = note(&vault, "win.md", b"# Title\r\n\r\nold line\r\nlast\r\n");
    let read = read_note(&path).unwrap();
    assert_eq!(read.format.line_ending, LineEnding::Crlf);
    assert_eq!(read.text, "# Title\n\nold line\nlast\n");
    assert_eq!(
        edit(&path, "old line", "new line\nadded"),
        b"# Title\r\n\r\nnew line\r\nadded\r\nlast\r\n"
    );
}

#[test]
fn bom_survives_an_edit() {
    let (_dir, vault) = vault();
    let path = note(&vault, "bom.md", b"\xEF\xBB\xBFold\n");
    let read = read_note(&path).unwrap();
    assert!(read.format.bom);
    assert_eq!(read.text, "old\n");
    assert_eq!(edit(&path, "old", "new"), b"\xEF\xBB\xBFnew\n");
}

#[test]
fn bom_and_crlf_together_and_missing_trailing_newline() {
    let (_dir, vault) = vault();
    let path = note(&vault, "both.md", b"\xEF\xBB\xBFa\r\nold");
    assert_eq!(edit(&path, "old", "new"), b"\xEF\xBB\xBFa\r\nnew");
    let path = note(&vault, "plain.md", b"line\nold");
    assert_eq!(edit(&path, "old", "new"), b"line\nnew");
}

#[test]
fn mixed_line_endings_are_kept_byte_for_byte() {
    let (_dir, vault) = vault();
    let path = note(&vault, "mixed.md", b"a\r\nb\nold\r\n");
    assert_eq!(read_note(&path).unwrap().format.line_ending, LineEnding::Lf);
    assert_eq!(edit(&path, "old", "new"), b"a\r\nb\nnew\r\n");
}

#[test]
fn mode_0600_survives_an_edit() {
    let (_dir, vault) = vault();
    let path = note(&vault, "private.md", b"old\n");
    fs::set_permissions(path.abs(), fs::Permissions::from_mode(0o600)).unwrap();
    edit(&path, "old", "new");
    let mode = fs::metadata(path.abs()).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
    // And a wider mode is not narrowed by the umask either.
    fs::set_permissions(path.abs(), fs::Permissions::from_mode(0o664)).unwrap();
    edit(&path, "new", "newer");
    let mode = fs::metadata(path.abs()).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o664);
}

#[test]
fn non_utf8_is_refused_for_editing() {
    let (_dir, vault) = vault();
    let bytes = b"caf\xE9 latin-1\n";
    let path = note(&vault, "latin1.md", bytes);
    let err = read_note(&path).unwrap_err();
    assert!(
        matches!(err, NoteError::NotUtf8 { offset: 3, .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("latin1.md") && message.contains("UTF-8"),
        "{message}"
    );
    assert!(message.contains("offset 3"), "{message}");
    assert_eq!(fs::read(path.abs()).unwrap(), bytes);
}

#[test]
fn stale_fingerprint_is_refused_and_leaves_the_file_identical() {
    let (_dir, vault) = vault();
    let path = note(&vault, "shared.md", b"version one\n");
    let read = read_note(&path).unwrap();
    // Someone else edits the note, keeping the size (an mtime+size check would miss this).
    fs::write(path.abs(), b"version two\n").unwrap();
    let err = write_note(&path, "agent edit\n", &read.format, Some(&read.fingerprint)).unwrap_err();
    assert_eq!(err.kind(), "changed");
    let message = err.to_string();
    assert!(
        message.contains("shared.md") && message.contains("read the note again"),
        "{message}"
    );
    assert_eq!(fs::read(path.abs()).unwrap(), b"version two\n");
    // Deleted underneath counts as changed too, and nothing is recreated.
    fs::remove_file(path.abs()).unwrap();
    let err = write_note(&path, "agent edit\n", &read.format, Some(&read.fingerprint)).unwrap_err();
    assert_eq!(err.kind(), "changed");
    assert!(!path.abs().exists());
    assert_eq!(
        fs::read_dir(vault.root()).unwrap().count(),
        0,
        "a temp file was left behind"
    );
}

#[test]
fn create_never_clobbers() {
    let (_dir, vault) = vault();
    let path = vault.resolve("new/deeper/n.md", Access::Write).unwrap();
    let created = note_io::create_note(&path, "first\n", false).unwrap();
    assert_eq!(created.hash, content_hash(b"first\n"));
    let err = note_io::create_note(&path, "second\n", false).unwrap_err();
    assert_eq!(err.kind(), "already_exists");
    assert!(err.to_string().contains("new/deeper/n.md"), "{err}");
    assert_eq!(fs::read(path.abs()).unwrap(), b"first\n");
    note_io::create_note(&path, "third\n", true).unwrap();
    assert_eq!(fs::read(path.abs()).unwrap(), b"third\n");
    let leftovers: Vec<_> = fs::read_dir(path.abs().parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[test]
fn created_notes_get_the_umask_mode() {
    let (_dir, vault) = vault();
    let path = vault.resolve("fresh.md", Access::Write).unwrap();
    note_io::create_note(&path, "x", false).unwrap();
    let umask = fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("Umask:"))
        .map(|value| u32::from_str_radix(value.trim(), 8).unwrap())
        .unwrap_or(0o022);
    let mode = fs::metadata(path.abs()).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o666 & !umask);
    assert_eq!(
        fs::metadata(path.abs()).unwrap().nlink(),
        1,
        "the temp link was not removed"
    );
}

#[test]
fn concurrent_creates_have_exactly_one_winner() {
    let (_dir, vault) = vault();
    for round in 0..40 {
        let path = vault
            .resolve(&format!("race/{round}.md"), Access::Write)
            .unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let handles: Vec<_> = (0..2)
            .map(|id| {
                let path = path.clone();
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    let text = format!("writer {id}\n").repeat(500);
                    barrier.wait();
                    note_io::create_note(&path, &text, false).map(|_| text)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        let loser = results.iter().find_map(|r| r.as_ref().err()).unwrap();
        assert_eq!(loser.kind(), "already_exists");
        // The file holds the winner's complete text, never a mix or a partial write.
        assert_eq!(fs::read_to_string(path.abs()).unwrap(), *winners[0]);
    }
    assert_eq!(fs::read_dir(vault.root().join("race")).unwrap().count(), 40);
}

#[test]
fn writing_through_a_symlinked_final_component_is_refused() {
    let (dir, vault) = vault();
    let target = note(&vault, "real.md", b"real\n");
    symlink(target.abs(), dir.path().join("link.md")).unwrap();
    let err = vault.resolve("link.md", Access::Write).unwrap_err();
    assert_eq!(err.kind(), "is_symlink");
    // Even with a path checked before the link appeared, note I/O re-checks.
    let stale = vault.resolve("later.md", Access::Write).unwrap();
    symlink(target.abs(), stale.abs()).unwrap();
    let err = write_note(&stale, "x", &TextFormat::default(), None).unwrap_err();
    assert_eq!(err.kind(), "is_symlink");
    assert_eq!(fs::read(target.abs()).unwrap(), b"real\n");
    assert!(
        fs::symlink_metadata(stale.abs())
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn missing_note_is_reported_by_name() {
    let (_dir, vault) = vault();
    let path = vault.resolve("nope.md", Access::Read).unwrap();
    let err = read_note(&path).unwrap_err();
    assert_eq!(err.kind(), "not_found");
    assert!(err.to_string().contains("nope.md"), "{err}");
}
