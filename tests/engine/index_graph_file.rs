//! The link graph's own file beside the index (decisions §72): what holds when it is written on
//! its own thread, when it goes missing or comes from another build, and when its half of a cold
//! build fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use vaultchat::config::IndexConfig;
use vaultchat::index::Index;
use vaultchat::vault::Vault;

fn open(data: &Path, vault: &Path) -> Index {
    let vault = Vault::open(vault).unwrap();
    Index::open(&data.join("index"), &vault, &IndexConfig::default()).unwrap()
}

/// Ten notes linking `Hub` (each from its own line 3), and the hub.
fn vault_with_hub(root: &Path) {
    fs::create_dir_all(root.join("Notes")).unwrap();
    fs::write(root.join("Hub.md"), "# Hub\n").unwrap();
    for n in 0..10 {
        fs::write(
            root.join(format!("Notes/n{n}.md")),
            format!("# n{n}\n\nsee [[Hub]] and [[Missing {n}]]\n"),
        )
        .unwrap();
    }
}

fn backlinks(index: &Index, path: &str) -> Vec<(String, u32)> {
    index
        .backlinks(path, 0, 100)
        .unwrap()
        .items
        .into_iter()
        .map(|b| (b.path, b.line))
        .collect()
}

fn expected_hub_backlinks() -> Vec<(String, u32)> {
    (0..10).map(|n| (format!("Notes/n{n}.md"), 3)).collect()
}

fn note_count(index: &Index) -> u64 {
    index.status().unwrap().notes
}

#[test]
fn a_cold_build_fills_the_graph_file_and_later_syncs_keep_both_in_one_transaction() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, data) = (tmp.path().join("v"), tmp.path().join("data"));
    vault_with_hub(&root);
    let mut index = open(&data, &root);
    let report = index.sync(&mut |_| {}).unwrap();
    assert!(report.cold);
    assert!(index.graph_path().is_file());
    assert_ne!(index.graph_path(), index.db_path());
    assert_eq!(backlinks(&index, "Hub.md"), expected_hub_backlinks());
    assert_eq!(index.unresolved_links("", 0, 100).unwrap().total, 10);
    // The graph file holds the links; the index file holds none of the graph's tables.
    let graph = rusqlite::Connection::open(index.graph_path()).unwrap();
    let rows: i64 = graph
        .query_row("SELECT count(*) FROM links", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 20);
    let main = rusqlite::Connection::open(index.db_path()).unwrap();
    let tables: i64 = main
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'links'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 0);

    // A later sync writes links through the index's connection: a note created for a waiting
    // link resolves it, a deleted linking note takes its links with it.
    fs::write(root.join("Missing 3.md"), "# here now\n").unwrap();
    fs::remove_file(root.join("Notes/n9.md")).unwrap();
    let report = index.sync(&mut |_| {}).unwrap();
    assert!(!report.cold);
    assert_eq!(
        backlinks(&index, "Missing 3.md"),
        vec![("Notes/n3.md".to_string(), 3)]
    );
    let mut expected = expected_hub_backlinks();
    expected.pop();
    assert_eq!(backlinks(&index, "Hub.md"), expected);
    assert_eq!(index.unresolved_links("", 0, 100).unwrap().total, 8);
}

#[test]
fn a_graph_file_deleted_by_hand_is_built_again_with_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, data) = (tmp.path().join("v"), tmp.path().join("data"));
    vault_with_hub(&root);
    let graph_path = {
        let mut index = open(&data, &root);
        index.sync(&mut |_| {}).unwrap();
        index.graph_path()
    };
    fs::remove_file(&graph_path).unwrap();
    let mut index = open(&data, &root);
    // The notes without their graph are not kept: the next sync is a cold build of both.
    assert_eq!(note_count(&index), 0);
    let report = index.sync(&mut |_| {}).unwrap();
    assert!(report.cold, "{report:?}");
    assert_eq!(note_count(&index), 11);
    assert_eq!(backlinks(&index, "Hub.md"), expected_hub_backlinks());
}

#[test]
fn a_graph_file_of_another_build_is_not_read_as_this_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, data) = (tmp.path().join("v"), tmp.path().join("data"));
    let (other_root, other_data) = (tmp.path().join("other"), tmp.path().join("other-data"));
    vault_with_hub(&root);
    fs::create_dir_all(&other_root).unwrap();
    fs::write(other_root.join("Elsewhere.md"), "[[Hub]] from elsewhere\n").unwrap();
    let graph_path = {
        let mut index = open(&data, &root);
        index.sync(&mut |_| {}).unwrap();
        index.graph_path()
    };
    let other_graph = {
        let mut other = open(&other_data, &other_root);
        other.sync(&mut |_| {}).unwrap();
        other.graph_path()
    };
    // Same schema, another build: its rows name notes this index does not have.
    fs::copy(&other_graph, &graph_path).unwrap();
    let mut index = open(&data, &root);
    assert_eq!(note_count(&index), 0);
    index.sync(&mut |_| {}).unwrap();
    assert_eq!(backlinks(&index, "Hub.md"), expected_hub_backlinks());
}

#[test]
fn when_the_graphs_half_of_a_cold_build_fails_neither_half_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, data) = (tmp.path().join("v"), tmp.path().join("data"));
    vault_with_hub(&root);
    let mut index = open(&data, &root);
    // Another program leaves the graph file at a schema this build does not write: the graph's
    // thread refuses it when the cold build starts.
    let other = rusqlite::Connection::open(index.graph_path()).unwrap();
    other.pragma_update(None, "user_version", 99).unwrap();
    let error = index.sync(&mut |_| {}).unwrap_err().to_string();
    assert!(
        error.contains("the link graph: its file holds another schema version"),
        "{error}"
    );
    assert_eq!(note_count(&index), 0, "the notes' half was rolled back");
    assert!(!index.has_synced().unwrap());

    // Put right, the next sync builds both.
    other.pragma_update(None, "user_version", 8).unwrap();
    let report = index.sync(&mut |_| {}).unwrap();
    assert!(report.cold);
    assert_eq!(note_count(&index), 11);
    assert_eq!(backlinks(&index, "Hub.md"), expected_hub_backlinks());
}

#[test]
fn a_sync_that_changes_nothing_writes_neither_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, data) = (tmp.path().join("v"), tmp.path().join("data"));
    vault_with_hub(&root);
    // Old enough that (mtime, size) alone decides (no racy re-reads).
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for entry in walk(&root) {
        fs::File::options()
            .write(true)
            .open(&entry)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let mut index = open(&data, &root);
    index.sync(&mut |_| {}).unwrap();
    let stamp = |p: &Path| {
        let meta = fs::metadata(p).unwrap();
        (meta.modified().unwrap(), meta.len())
    };
    let before = (stamp(index.db_path()), stamp(&index.graph_path()));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let report = index.sync(&mut |_| {}).unwrap();
    assert_eq!(report.changed(), 0, "{report:?}");
    assert_eq!((stamp(index.db_path()), stamp(&index.graph_path())), before);
}

fn walk(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
