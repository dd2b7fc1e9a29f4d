//! Incremental sync of the index against a real vault on disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};
use vaultchat::config::IndexConfig;
use vaultchat::index::Index;
use vaultchat::vault::Vault;

fn open(data: &Path, vault: &Vault) -> Index {
    Index::open(&data.join("index"), vault, &IndexConfig::default()).unwrap()
}

fn paths(index: &mut Index, q: &str) -> Vec<String> {
    index
        .search(q, 100)
        .unwrap()
        .results
        .into_iter()
        .map(|h| h.path)
        .collect()
}

/// Make a file look older than the racy window so (mtime, size) alone decides.
fn age(path: &Path) {
    let old = SystemTime::now() - Duration::from_secs(60);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(old)
        .unwrap();
}

#[test]
fn adds_updates_deletes_and_renames() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v");
    fs::create_dir_all(root.join("A")).unwrap();
    fs::write(root.join("A/one.md"), "alpha words here\n").unwrap();
    fs::write(root.join("two.md"), "beta words here\n").unwrap();
    fs::write(root.join("three.md"), "gamma words here\n").unwrap();
    for f in ["A/one.md", "two.md", "three.md"] {
        age(&root.join(f));
    }
    let vault = Vault::open(&root).unwrap();
    let mut index = open(tmp.path(), &vault);
    let r = index.sync(&mut |_| {}).unwrap();
    assert!(r.cold);
    assert_eq!((r.scanned, r.added), (3, 3));

    // Nothing changed: nothing is read again.
    let r = index.sync(&mut |_| {}).unwrap();
    assert_eq!((r.unchanged, r.changed()), (3, 0));

    // Edit, delete, rename, add.
    fs::write(root.join("two.md"), "now only delta\n").unwrap();
    fs::remove_file(root.join("three.md")).unwrap();
    fs::rename(root.join("A/one.md"), root.join("A/uno.md")).unwrap();
    fs::write(root.join("four.md"), "epsilon\n").unwrap();
    let r = index.sync(&mut |_| {}).unwrap();
    assert_eq!(
        (r.added, r.updated, r.removed, r.renamed),
        (1, 1, 1, 1),
        "{r:?}"
    );
    assert_eq!(paths(&mut index, "alpha"), ["A/uno.md"]);
    assert_eq!(paths(&mut index, "delta"), ["two.md"]);
    assert!(paths(&mut index, "beta").is_empty());
    assert!(paths(&mut index, "gamma").is_empty());
    assert_eq!(paths(&mut index, "epsilon"), ["four.md"]);
    assert_eq!(index.status().unwrap().notes, 3);
    index.integrity_check().unwrap();
}

#[test]
fn touched_but_identical_files_are_not_reindexed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("n.md"), "same text\n").unwrap();
    age(&root.join("n.md"));
    let vault = Vault::open(&root).unwrap();
    let mut index = open(tmp.path(), &vault);
    index.sync(&mut |_| {}).unwrap();
    // New mtime, same bytes (a sync tool or `touch`): confirmed by hash, not re-parsed.
    fs::File::options()
        .write(true)
        .open(root.join("n.md"))
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(30))
        .unwrap();
    let r = index.sync(&mut |_| {}).unwrap();
    assert_eq!((r.unchanged, r.updated), (1, 0), "{r:?}");
}

/// An edit within the same timestamp tick and of the same size is still caught: rows indexed
/// right after a modification are re-hashed on the next sync.
#[test]
fn same_size_edit_in_the_racy_window_is_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v");
    fs::create_dir_all(&root).unwrap();
    let file = root.join("n.md");
    fs::write(&file, "version aaaa\n").unwrap();
    let vault = Vault::open(&root).unwrap();
    let mut index = open(tmp.path(), &vault);
    index.sync(&mut |_| {}).unwrap();
    let mtime = fs::metadata(&file).unwrap().modified().unwrap();
    fs::write(&file, "version bbbb\n").unwrap();
    // Put the mtime back: (mtime, size) now equal what the index recorded.
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    index.sync(&mut |_| {}).unwrap();
    assert_eq!(paths(&mut index, "bbbb"), ["n.md"]);
    assert!(paths(&mut index, "aaaa").is_empty());
}

#[test]
fn sync_paths_handles_the_watchers_view() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v");
    fs::create_dir_all(root.join(".obsidian")).unwrap();
    fs::write(root.join("a.md"), "apple\n").unwrap();
    let vault = Vault::open(&root).unwrap();
    let mut index = open(tmp.path(), &vault);
    index.sync(&mut |_| {}).unwrap();
    fs::write(root.join("b.md"), "banana\n").unwrap();
    fs::write(root.join(".obsidian/c.md"), "cherry\n").unwrap();
    fs::write(root.join("d.txt"), "durian\n").unwrap();
    fs::remove_file(root.join("a.md")).unwrap();
    let r = index
        .sync_paths(&[
            "a.md".into(),
            "b.md".into(),
            ".obsidian/c.md".into(),
            "d.txt".into(),
        ])
        .unwrap();
    assert_eq!((r.added, r.removed), (1, 1), "{r:?}");
    assert_eq!(paths(&mut index, "banana"), ["b.md"]);
    assert!(paths(&mut index, "apple").is_empty());
    assert!(paths(&mut index, "cherry").is_empty());
    assert!(paths(&mut index, "durian").is_empty());
}

#[test]
fn excluded_folders_and_a_rebuild() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v");
    fs::create_dir_all(root.join("Templates")).unwrap();
    fs::write(root.join("Templates/t.md"), "template text\n").unwrap();
    fs::write(root.join("n.md"), "note text\n").unwrap();
    let vault = Vault::open(&root).unwrap();
    let config = IndexConfig {
        exclude_folders: vec!["Templates".into()],
        ..IndexConfig::default()
    };
    let mut index = Index::open(&tmp.path().join("index"), &vault, &config).unwrap();
    index.sync(&mut |_| {}).unwrap();
    assert!(paths(&mut index, "template").is_empty());
    assert_eq!(paths(&mut index, "note"), ["n.md"]);
    index.reset().unwrap();
    assert_eq!(index.status().unwrap().notes, 0);
    let r = index.sync(&mut |_| {}).unwrap();
    assert!(r.cold && r.added == 1);
}

#[test]
fn a_damaged_or_outdated_index_file_is_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("n.md"), "kiwi\n").unwrap();
    let vault = Vault::open(&root).unwrap();
    let db = {
        let mut index = open(tmp.path(), &vault);
        index.sync(&mut |_| {}).unwrap();
        index.db_path().to_path_buf()
    };
    // A different schema version.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
    }
    let mut index = open(tmp.path(), &vault);
    assert_eq!(index.status().unwrap().notes, 0);
    index.sync(&mut |_| {}).unwrap();
    assert_eq!(paths(&mut index, "kiwi"), ["n.md"]);
    drop(index);
    // Garbage instead of a database.
    for suffix in ["-wal", "-shm"] {
        let _ = fs::remove_file(format!("{}{suffix}", db.display()));
    }
    fs::write(&db, vec![b'x'; 8192]).unwrap();
    let mut index = open(tmp.path(), &vault);
    index.sync(&mut |_| {}).unwrap();
    assert_eq!(paths(&mut index, "kiwi"), ["n.md"]);
}

fn note_count(index: &Index) -> u64 {
    index.status().unwrap().notes
}

/// A vault root that cannot be listed (removed, or replaced by a file — both fail for root too)
/// is an error, and the index keeps every row; the vault coming back finds them all again.
#[test]
fn an_unreadable_vault_root_is_an_error_and_the_index_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v");
    fs::create_dir_all(root.join("A")).unwrap();
    for (f, text) in [("A/one.md", "alpha\n"), ("two.md", "beta\n")] {
        fs::write(root.join(f), text).unwrap();
        age(&root.join(f));
    }
    let vault = Vault::open(&root).unwrap();
    let mut index = open(tmp.path(), &vault);
    index.sync(&mut |_| {}).unwrap();
    assert_eq!(note_count(&index), 2);

    let away = tmp.path().join("away");
    fs::rename(&root, &away).unwrap();
    for replaced_by_file in [false, true] {
        if replaced_by_file {
            fs::write(&root, "not a folder").unwrap();
        }
        let err = index.sync(&mut |_| {}).unwrap_err().to_string();
        assert!(err.contains("cannot be read"), "{err}");
        assert!(err.contains("the index was left as it was"), "{err}");
        assert_eq!(note_count(&index), 2, "a full sync emptied the index");
        // The watcher's path-by-path view: both notes look deleted.
        let rels = ["A/one.md".to_string(), "two.md".to_string()];
        let err = index.sync_paths(&rels).unwrap_err().to_string();
        assert!(err.contains("cannot be read"), "{err}");
        assert_eq!(note_count(&index), 2, "sync_paths emptied the index");
        assert!(index.staleness().is_err());
    }
    fs::remove_file(&root).unwrap();
    fs::rename(&away, &root).unwrap();
    let r = index.sync(&mut |_| {}).unwrap();
    assert_eq!((r.unchanged, r.removed), (2, 0));
    assert_eq!(paths(&mut index, "alpha"), ["A/one.md"]);

    // A deleted note is still removed while the vault is there.
    fs::remove_file(root.join("two.md")).unwrap();
    let r = index.sync_paths(&["two.md".to_string()]).unwrap();
    assert_eq!(r.removed, 1);
}

/// A folder that cannot be listed keeps its notes' rows (they are reported as skipped, not
/// deleted). chmod 000 does not stop root, so the check only runs where it takes effect.
#[test]
fn an_unreadable_folder_keeps_its_rows() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v");
    fs::create_dir_all(root.join("Locked/Deep")).unwrap();
    for f in [
        "Locked/one.md",
        "Locked/Deep/two.md",
        "three.md",
        "Lockedness.md",
    ] {
        fs::write(root.join(f), "words\n").unwrap();
        age(&root.join(f));
    }
    let vault = Vault::open(&root).unwrap();
    let mut index = open(tmp.path(), &vault);
    index.sync(&mut |_| {}).unwrap();
    assert_eq!(note_count(&index), 4);
    fs::set_permissions(root.join("Locked"), fs::Permissions::from_mode(0o000)).unwrap();
    let effective = fs::read_dir(root.join("Locked")).is_err();
    let result = index.sync(&mut |_| {});
    fs::set_permissions(root.join("Locked"), fs::Permissions::from_mode(0o755)).unwrap();
    if !effective {
        eprintln!("skipped: chmod 000 does not stop this user (root) from reading");
        return;
    }
    let r = result.unwrap();
    assert_eq!(r.removed, 0, "{r:?}");
    assert_eq!(r.skipped.len(), 1, "{r:?}");
    assert_eq!(r.skipped[0].path, "Locked");
    assert_eq!(note_count(&index), 4);
}

/// The same for a folder that even root cannot list by its absolute path: once the vault moves
/// under a longer path, the deepest folders' absolute paths pass PATH_MAX (4096 bytes) and
/// `read_dir` fails with ENAMETOOLONG. A walker that opens each folder relative to its parent
/// still lists them; one that uses absolute paths cannot. Either way no row is lost: the notes
/// are found unchanged, or the folder is skipped and its notes' rows are kept.
#[test]
fn a_folder_too_deep_to_list_keeps_its_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let short_root = tmp.path().join("v");
    let mut deep = std::path::PathBuf::from("Deep");
    for level in 0..13 {
        deep.push(format!("{level:02}{}", "d".repeat(248)));
    }
    fs::create_dir_all(short_root.join(&deep)).unwrap();
    for f in [deep.join("bottom.md"), "top.md".into()] {
        fs::write(short_root.join(&f), "words\n").unwrap();
        age(&short_root.join(&f));
    }
    {
        let vault = Vault::open(&short_root).unwrap();
        let mut index = open(&data, &vault);
        index.sync(&mut |_| {}).unwrap();
        assert_eq!(note_count(&index), 2);
    }
    // Move the vault under four more 250-byte folders, and give the index file its new name
    // (index files are named after the vault's path).
    let mut long_parent = tmp.path().to_path_buf();
    for level in 0..4 {
        long_parent.push(format!("{level}{}", "p".repeat(249)));
    }
    fs::create_dir_all(&long_parent).unwrap();
    let long_root = long_parent.join("v");
    fs::rename(&short_root, &long_root).unwrap();
    let db_files = || -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = fs::read_dir(data.join("index"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "db"))
            .filter(|p| !p.to_string_lossy().ends_with(".graph.db"))
            .collect();
        files.sort();
        files
    };
    let old_db = db_files().pop().unwrap();
    let vault = Vault::open(&long_root).unwrap();
    drop(open(&data, &vault));
    let new_db = db_files().into_iter().find(|p| *p != old_db).unwrap();
    fs::copy(&old_db, &new_db).unwrap();
    // And its link graph, which lives beside it.
    fs::copy(
        old_db.with_extension("graph.db"),
        new_db.with_extension("graph.db"),
    )
    .unwrap();
    assert!(
        fs::read_dir(long_root.join(&deep)).is_err(),
        "the deepest folder should be too deep to list"
    );

    let mut index = open(&data, &vault);
    assert_eq!(note_count(&index), 2);
    let r = index.sync(&mut |_| {}).unwrap();
    assert_eq!(r.removed, 0, "{r:?}");
    assert_eq!(note_count(&index), 2);
    assert_eq!(index.staleness().unwrap().missing, 0);
    if r.skipped.is_empty() {
        // The walker reached the deep folder relative to its parent.
        assert_eq!(r.unchanged, 2, "{r:?}");
    } else {
        assert_eq!((r.skipped.len(), r.unchanged), (1, 1), "{r:?}");
        assert!(deep.starts_with(&r.skipped[0].path), "{r:?}");
    }
}
