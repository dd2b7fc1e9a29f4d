//! What the app's file pane asks of the workspace: the note listing with modification times, and
//! creating a note for the person (never over an existing file, indexed at once, recorded as
//! theirs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use vaultchat::config::{Config, Paths};
use vaultchat::store::{Actor, Store};
use vaultchat::tools::workspace::Workspace;
use vaultchat::vault::Vault;

#[test]
fn the_listing_has_every_note_with_its_mtime_and_a_created_note_is_empty_listed_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(vault.join("Projects/Plan.md"), "# Plan\n").unwrap();
    std::fs::write(
        vault.join("Ideas.md"),
        "---\naliases: [brainstorm]\n---\n# Ideas\n",
    )
    .unwrap();
    let paths = Paths::under(&tmp.path().join("data"));
    let ws = Workspace::open(
        Vault::open(&vault).unwrap(),
        &paths,
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();

    let listing = ws.note_listing().unwrap();
    let paths_listed: Vec<&str> = listing.iter().map(|n| n.path.as_str()).collect();
    assert_eq!(paths_listed, ["Ideas.md", "Projects/Plan.md"]);
    assert_eq!(listing[0].aliases, ["brainstorm"]);
    let mtime = std::fs::metadata(vault.join("Ideas.md"))
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    assert_eq!(listing[0].mtime_ns as u128, mtime);

    // A new note in a new folder: created empty, listed at once, recorded as the person's.
    let (path, note) = ws.create_user_note("Garden/Compost").unwrap();
    assert_eq!(path, "Garden/Compost.md");
    assert_eq!(note.text, "");
    assert_eq!(std::fs::read(vault.join("Garden/Compost.md")).unwrap(), b"");
    assert!(
        ws.note_listing()
            .unwrap()
            .iter()
            .any(|n| n.path == "Garden/Compost.md")
    );
    let store = Store::open(&paths.database_file()).unwrap();
    let revisions = store
        .revisions_of(ws.vault_id(), "Garden/Compost.md", 10)
        .unwrap();
    assert_eq!(revisions.len(), 1);
    assert_eq!(revisions[0].actor, Actor::User);

    // An existing note is never replaced, with or without `.md`.
    for name in ["Ideas", "Ideas.md", "Projects/Plan"] {
        let error = ws.create_user_note(name).unwrap_err().to_string();
        assert!(error.contains("already exists"), "{name}: {error}");
    }
    assert_eq!(
        std::fs::read_to_string(vault.join("Ideas.md")).unwrap(),
        "---\naliases: [brainstorm]\n---\n# Ideas\n"
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("Projects/Plan.md")).unwrap(),
        "# Plan\n"
    );

    // Names that are not notes, or would leave the vault, are refused without a file.
    for bad in ["../outside", ".hidden/x", "photo.png", ""] {
        assert!(ws.create_user_note(bad).is_err(), "{bad:?}");
    }
    assert!(!tmp.path().join("outside.md").exists());
}

/// The editor's saves: a run of the person's typing is one revision, an approved agent edit saved
/// in the editor is a revision of the agent's between them (so /rewind can undo just that edit).
#[test]
fn an_agent_edit_saved_in_the_editor_is_its_own_agent_revision() {
    use vaultchat::tools::workspace::SavedBy;
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("Plan.md"), "one\n").unwrap();
    let paths = Paths::under(&tmp.path().join("data"));
    let ws = Workspace::open(
        Vault::open(&vault).unwrap(),
        &paths,
        &Config::default(),
        Actor::Agent,
    )
    .unwrap();
    let (_, read) = ws.read_note_named("Plan.md").unwrap();
    let saves = [
        ("one\ntwo\n", SavedBy::Person),
        ("one\ntwo\nthree\n", SavedBy::Person),
        ("ONE\ntwo\nthree\n", SavedBy::AgentEdit),
        ("ONE\ntwo\nthree\nfour\n", SavedBy::Person),
    ];
    let mut read = read;
    for (text, by) in saves {
        read = ws.save_user_edit("Plan.md", &read, text, by).unwrap();
    }
    let store = Store::open(&paths.database_file()).unwrap();
    let revisions = store.revisions_of(ws.vault_id(), "Plan.md", 10).unwrap();
    let actors: Vec<Actor> = revisions.iter().map(|r| r.actor).collect();
    // Newest first: the person's last save, the agent's edit, the person's first two saves as one.
    assert_eq!(actors, [Actor::User, Actor::Agent, Actor::User]);
    assert_eq!(
        store.revision_text(revisions[1].id).unwrap().as_deref(),
        Some("one\ntwo\nthree\n")
    );
}
