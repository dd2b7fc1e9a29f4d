//! The path guard against the bad-input list of docs/safety.md §1, case by case, with real
//! symbolic and hard links in a temp folder laid out as
//!
//! ```text
//! base/vault/          the vault
//! base/outside/        a folder beside it, holding `secret.md`
//! base/vault_evil/     a sibling whose name starts with the vault's (CVE-2025-53110)
//! ```
//!
//! Nothing outside the temp folder is read or written: absolute inputs like `/etc/passwd` are refused
//! before any file system access.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use tempfile::TempDir;
use vaultchat::vault::guard::{Access, PROTECTED_DIRS, PathError, Vault};
use vaultchat::vault::note_io;

const SECRET: &str = "outside secret\n";

struct Fixture {
    _dir: TempDir,
    base: PathBuf,
    vault: Vault,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        fs::create_dir_all(base.join("vault/notes")).unwrap();
        fs::create_dir_all(base.join("outside/dir")).unwrap();
        fs::create_dir_all(base.join("vault_evil")).unwrap();
        fs::write(base.join("vault/notes/a.md"), "# A\n").unwrap();
        fs::write(base.join("outside/secret.md"), SECRET).unwrap();
        fs::write(base.join("outside/dir/inner.md"), SECRET).unwrap();
        fs::write(base.join("vault_evil/x.md"), SECRET).unwrap();
        let vault = Vault::open(base.join("vault")).unwrap();
        Self {
            _dir: dir,
            base,
            vault,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    fn link(&self, target: impl AsRef<Path>, at: &str) {
        symlink(target, self.path(at)).unwrap();
    }

    /// The outside files must be exactly as created, whatever was attempted.
    fn assert_outside_untouched(&self) {
        assert_eq!(
            fs::read_to_string(self.path("outside/secret.md")).unwrap(),
            SECRET
        );
        assert_eq!(
            fs::read_to_string(self.path("vault_evil/x.md")).unwrap(),
            SECRET
        );
        let mut names: Vec<_> = fs::read_dir(self.path("outside"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["dir", "secret.md"]);
    }
}

/// Asserts `input` is refused for `access` with `kind`, and that the message names the input (as
/// `shown`, the form the message uses for it).
fn refused_as(vault: &Vault, input: &str, shown: &str, access: Access, kind: &str) -> PathError {
    let err = match vault.resolve(input, access) {
        Ok(path) => panic!("{input:?} ({access:?}) was accepted as {path:?}"),
        Err(err) => err,
    };
    assert_eq!(err.kind(), kind, "{input:?} ({access:?}): {err}");
    let message = err.to_string();
    assert!(
        message.contains(shown),
        "message does not name {shown:?}: {message}"
    );
    err
}

fn refused(vault: &Vault, input: &str, access: Access, kind: &str) -> PathError {
    refused_as(vault, input, input, access, kind)
}

fn refused_both(vault: &Vault, input: &str, kind: &str) {
    refused(vault, input, Access::Read, kind);
    refused(vault, input, Access::Write, kind);
}

#[test]
fn case_01_dot_dot_escapes() {
    let fx = Fixture::new();
    for input in [
        "../secret.md",
        "notes/../../x",
        "./../x",
        "a/b/../../../x",
        "notes/../a.md",
        "..",
    ] {
        refused_both(&fx.vault, input, "escapes_vault");
    }
    let err = refused(&fx.vault, "../secret.md", Access::Read, "escapes_vault");
    assert!(
        err.to_string().contains("Projects/Plan.md"),
        "no example of a valid path: {err}"
    );
}

#[test]
fn case_02_absolute_inputs() {
    let fx = Fixture::new();
    let own = fx.path("vault/notes/a.md").display().to_string();
    for input in [
        "/etc/passwd",
        "C:\\Windows\\win.ini",
        "C:/Windows/win.ini",
        "\\\\server\\share",
        "file:///etc/passwd",
        own.as_str(),
    ] {
        refused_both(&fx.vault, input, "absolute");
    }
}

#[test]
fn case_03_sibling_prefix() {
    let fx = Fixture::new();
    let evil = fx.path("vault_evil/x.md");
    refused_both(&fx.vault, &evil.display().to_string(), "absolute");
    refused_both(&fx.vault, "../vault_evil/x.md", "escapes_vault");
    assert_eq!(fx.vault.relative(&evil), None);
    assert_eq!(fx.vault.relative(&fx.path("vault_evil")), None);
    // The realpath of a link into the sibling starts with the vault's path as a string.
    fx.link("../vault_evil", "vault/evil");
    refused(&fx.vault, "evil/x.md", Access::Read, "symlink_escape");
    refused(&fx.vault, "evil/new.md", Access::Write, "symlink_escape");
    fx.assert_outside_untouched();
}

#[test]
fn case_04_symlink_out_of_the_vault() {
    let fx = Fixture::new();
    fx.link(fx.path("outside/secret.md"), "vault/file_link.md");
    fx.link(fx.path("outside/dir"), "vault/dir_link");
    // A chain a → b → outside, with relative targets.
    fx.link("b", "vault/a");
    fx.link("../outside", "vault/b");
    // read, edit/write, delete (write access) of the file link.
    refused(&fx.vault, "file_link.md", Access::Read, "symlink_escape");
    refused(&fx.vault, "file_link.md", Access::Write, "is_symlink");
    // list (read of a folder) and every access through the folder link.
    refused(&fx.vault, "dir_link", Access::Read, "symlink_escape");
    refused_both(&fx.vault, "dir_link/inner.md", "symlink_escape");
    refused_both(&fx.vault, "a/secret.md", "symlink_escape");
    refused(&fx.vault, "a", Access::Read, "symlink_escape");
    // rename: both ends are resolved for writing.
    refused(&fx.vault, "a/renamed.md", Access::Write, "symlink_escape");
    let err = refused(&fx.vault, "a/secret.md", Access::Read, "symlink_escape");
    assert!(
        err.to_string().contains("`a`"),
        "the link is not named: {err}"
    );
    // A link loop is refused, not followed forever.
    fx.link("loop2", "vault/loop1");
    fx.link("loop1", "vault/loop2");
    refused(&fx.vault, "loop1/x.md", Access::Read, "broken_symlink");
    fx.assert_outside_untouched();
}

#[test]
fn case_05_toctou_and_dangling_links() {
    let fx = Fixture::new();
    // A dangling link as the final component: never written through.
    fx.link(fx.path("outside/created_by_attack.md"), "vault/dangling.md");
    refused(&fx.vault, "dangling.md", Access::Write, "is_symlink");
    // A link inside the vault pointing inside is still not written through.
    fx.link("notes/a.md", "vault/inner_link.md");
    refused(&fx.vault, "inner_link.md", Access::Write, "is_symlink");
    assert_eq!(
        fx.vault
            .resolve("inner_link.md", Access::Read)
            .unwrap()
            .rel(),
        "notes/a.md"
    );

    // Validation passes, then a link appears before the write (the race the guard alone cannot win).
    let path = fx.vault.resolve("raced.md", Access::Write).unwrap();
    fx.link(fx.path("outside/secret.md"), "vault/raced.md");
    let err = note_io::write_note(&path, "pwned", &Default::default(), None).unwrap_err();
    assert_eq!(err.kind(), "is_symlink", "{err}");
    let err = note_io::create_note(&path, "pwned", false).unwrap_err();
    assert_eq!(err.kind(), "already_exists", "{err}");
    let err = note_io::create_note(&path, "pwned", true).unwrap_err();
    assert_eq!(err.kind(), "is_symlink", "{err}");
    assert!(!fx.path("outside/created_by_attack.md").exists());
    fx.assert_outside_untouched();
}

#[test]
fn case_06_new_file_under_a_linked_parent() {
    let fx = Fixture::new();
    fx.link(fx.path("outside"), "vault/out");
    refused(&fx.vault, "out/new.md", Access::Write, "symlink_escape");
    refused(
        &fx.vault,
        "out/deeper/still/new.md",
        Access::Write,
        "symlink_escape",
    );
    refused(
        &fx.vault,
        "notes/../out/new.md",
        Access::Write,
        "escapes_vault",
    );
    // A dangling parent link cannot be resolved, so it cannot be shown to stay inside.
    fx.link(fx.path("outside/missing_dir"), "vault/gone");
    refused(&fx.vault, "gone/new.md", Access::Write, "broken_symlink");
    fx.assert_outside_untouched();
    assert!(!fx.path("outside/missing_dir").exists());
}

#[test]
fn case_07_vault_root_is_a_symlink() {
    let fx = Fixture::new();
    fx.link(fx.path("vault"), "vault_link");
    let vault = Vault::open(fx.path("vault_link")).unwrap();
    assert_eq!(vault.root(), fx.path("vault"));
    let path = vault.resolve("notes/a.md", Access::Write).unwrap();
    assert_eq!(path.rel(), "notes/a.md");
    assert_eq!(path.abs(), fx.path("vault/notes/a.md"));
    let new = vault.resolve("notes/new/b.md", Access::Write).unwrap();
    assert!(new.abs().starts_with(vault.root()));
    for root in [fx.path("vault"), fx.path("vault_link")] {
        assert_eq!(
            vault.relative(&root.join("notes/a.md")).as_deref(),
            Some("notes/a.md")
        );
        assert_eq!(vault.relative(&root).as_deref(), Some(""));
        assert_eq!(vault.relative(&root.join("notes/../../x")), None);
        // Absolute inputs are refused under either form: inputs are always vault-relative.
        refused(
            &vault,
            &root.join("notes/a.md").display().to_string(),
            Access::Read,
            "absolute",
        );
    }
    assert_eq!(vault.relative(&fx.path("vault_linkx/a.md")), None);
    assert_eq!(vault.relative(&fx.path("vault_evil/x.md")), None);
}

#[test]
fn case_08_nul_empty_slashes_trailing_separator() {
    let fx = Fixture::new();
    refused_as(
        &fx.vault,
        "a.md\0.png",
        "a.md\\0.png",
        Access::Read,
        "nul_byte",
    );
    refused_as(
        &fx.vault,
        "a.md\0.png",
        "a.md\\0.png",
        Access::Write,
        "nul_byte",
    );
    refused(&fx.vault, "", Access::Write, "empty");
    refused(&fx.vault, "./", Access::Write, "empty");
    refused_both(&fx.vault, "/", "empty");
    refused_both(&fx.vault, "///", "empty");
    refused(
        &fx.vault,
        "notes/a.md/",
        Access::Write,
        "trailing_separator",
    );
    // Reads may name the root or a folder with a trailing slash (listing).
    assert!(fx.vault.resolve("", Access::Read).unwrap().is_root());
    assert_eq!(
        fx.vault.resolve("notes/", Access::Read).unwrap().rel(),
        "notes"
    );
}

#[test]
fn case_09_encoded_traversal() {
    let fx = Fixture::new();
    for input in [
        "%2e%2e%2fsecret.md",
        "%2E%2E%2Fsecret.md",
        "%252e%252e%252fsecret.md",
        "..%2fsecret.md",
        "notes%2f..%2f..%2fx",
        "%c0%ae%c0%ae/secret.md",
        "%e0%80%ae%e0%80%ae/x",
        "%5c..%5cx",
        "x%00.md",
    ] {
        refused_both(&fx.vault, input, "encoded_traversal");
    }
    refused_both(&fx.vault, "..\\..\\secret.md", "backslash");
    refused_both(&fx.vault, "notes\\a.md", "backslash");
    // A literal percent sign that encodes nothing is an ordinary name.
    let ok = fx.vault.resolve("100% done.md", Access::Write).unwrap();
    assert_eq!(ok.rel(), "100% done.md");
}

#[test]
fn case_10_unicode_lookalikes_fullwidth() {
    let fx = Fixture::new();
    for input in [
        "．．／secret.md",
        "．．/secret.md",
        "notes/．．",
        "a／b.md",
        "a＼b.md",
    ] {
        refused_both(&fx.vault, input, "unicode_traversal");
    }
    refused_both(&fx.vault, "％２ｅ％２ｅ/x", "encoded_traversal");
}

#[test]
fn case_10_unicode_bidi_and_zero_width() {
    let fx = Fixture::new();
    for (input, shown) in [
        ("evil\u{202E}dm.exe", "evil\\u{202E}dm.exe"),
        ("a\u{202A}b.md", "a\\u{202A}b.md"),
        ("a\u{2066}b.md", "a\\u{2066}b.md"),
        ("no\u{200B}te.md", "no\\u{200B}te.md"),
        ("no\u{200D}te.md", "no\\u{200D}te.md"),
        ("\u{FEFF}note.md", "\\u{FEFF}note.md"),
        ("line\nbreak.md", "line\\u{000A}break.md"),
    ] {
        refused_as(&fx.vault, input, shown, Access::Read, "hidden_character");
        refused_as(&fx.vault, input, shown, Access::Write, "hidden_character");
    }
}

#[test]
fn case_10_unicode_nfc_nfd_and_case_are_not_folded() {
    let fx = Fixture::new();
    // The guard keeps names as given: NFC and NFD spellings, and case variants, stay distinct paths
    // (the file system decides whether they are one file); neither is refused.
    let nfc = fx.vault.resolve("caf\u{e9}.md", Access::Write).unwrap();
    let nfd = fx.vault.resolve("cafe\u{301}.md", Access::Write).unwrap();
    assert_ne!(nfc.rel(), nfd.rel());
    assert_eq!(nfd.rel(), "cafe\u{301}.md");
    let upper = fx.vault.resolve("Notes/A.md", Access::Write).unwrap();
    assert_eq!(upper.rel(), "Notes/A.md");
}

#[test]
fn case_11_windows_reserved_names() {
    let fx = Fixture::new();
    for input in [
        "CON",
        "con.md",
        "PRN.md",
        "AUX",
        "NUL",
        "nul.txt",
        "COM1.md",
        "com9",
        "LPT1",
        "lpt9.md",
        "notes/CON/x.md",
    ] {
        refused(&fx.vault, input, Access::Write, "invalid_name");
    }
}

#[test]
fn case_11_windows_trailing_dot_space_streams_short_names() {
    let fx = Fixture::new();
    for input in [
        "notes.",
        "note.md.",
        "notes /a.md",
        "note.md ",
        "file.md:stream",
        "file.md::$DATA",
        "PROGRA~1/x.md",
        "OBSIDI~1/app.json",
        "NOTE~12.MD",
        "what?.md",
    ] {
        refused(&fx.vault, input, Access::Write, "invalid_name");
    }
    // Reading such a name is harmless on this system; only creating one is refused.
    fx.vault.resolve("file.md:stream", Access::Read).unwrap();
}

#[test]
fn case_12_hard_link_to_outside() {
    let fx = Fixture::new();
    fs::hard_link(fx.path("outside/secret.md"), fx.path("vault/hard.md")).unwrap();
    let err = refused(&fx.vault, "hard.md", Access::Write, "hard_link");
    assert!(err.to_string().contains("2 hard links"), "{err}");
    // realpath cannot see a hard link, so reads are allowed.
    fx.vault.resolve("hard.md", Access::Read).unwrap();
    // A hard link made after the check is caught by the write itself.
    let later = fx.vault.resolve("later.md", Access::Write).unwrap();
    fs::hard_link(fx.path("outside/secret.md"), later.abs()).unwrap();
    let err = note_io::write_note(&later, "pwned", &Default::default(), None).unwrap_err();
    assert_eq!(err.kind(), "hard_link", "{err}");
    fx.assert_outside_untouched();
}

#[test]
fn case_13_protected_dirs() {
    let fx = Fixture::new();
    for dir in PROTECTED_DIRS {
        fs::create_dir_all(fx.path(&format!("vault/{dir}"))).unwrap();
        fs::write(fx.path(&format!("vault/{dir}/file")), "x").unwrap();
        for input in [
            format!("{dir}/file"),
            format!("{dir}/new.md"),
            dir.to_string(),
            format!("notes/{dir}/x"),
        ] {
            let err = refused(&fx.vault, &input, Access::Write, "protected_dir");
            assert!(err.to_string().contains(dir), "{err}");
        }
        // Reads are left to the permission layer.
        assert_eq!(
            fx.vault
                .resolve(&format!("{dir}/file"), Access::Read)
                .unwrap()
                .rel(),
            format!("{dir}/file")
        );
    }
    // A path checked only for reading cannot be handed to a write.
    let read = fx.vault.resolve(".git/file", Access::Read).unwrap();
    let err = note_io::write_note(&read, "pwned", &Default::default(), None).unwrap_err();
    assert_eq!(err.kind(), "checked_for_read", "{err}");
    let err = note_io::create_note(&read, "pwned", true).unwrap_err();
    assert_eq!(err.kind(), "checked_for_read", "{err}");
    assert_eq!(fs::read_to_string(fx.path("vault/.git/file")).unwrap(), "x");
    // A link inside the vault that leads into a protected folder does not make it writable.
    fx.link(".obsidian", "vault/settings");
    refused(
        &fx.vault,
        "settings/app.json",
        Access::Write,
        "protected_dir",
    );
}

#[test]
fn case_14_very_long_and_deep_paths() {
    let fx = Fixture::new();
    let long = "a/".repeat(2_100);
    let err = refused_as(&fx.vault, &long, "a/a/a/", Access::Read, "too_long");
    assert!(err.to_string().contains("4200 bytes"), "{err}");
    let huge = "x".repeat(10 << 20);
    refused_as(&fx.vault, &huge, "xxxx", Access::Write, "too_long");
    let name = "n".repeat(256);
    refused_as(
        &fx.vault,
        &format!("notes/{name}.md"),
        "notes/nnn",
        Access::Write,
        "too_long",
    );
    // Deep but within the limits: accepted, and nothing is created by resolving.
    let deep = format!("{}leaf.md", "d/".repeat(1_000));
    let path = fx.vault.resolve(&deep, Access::Write).unwrap();
    assert_eq!(path.rel(), deep);
    assert!(!fx.path("vault/d").exists());
}

#[test]
fn case_15_rename_destination_outside_or_a_link() {
    let fx = Fixture::new();
    fx.link(fx.path("outside"), "vault/out");
    fx.link("notes/a.md", "vault/alias.md");
    // A rename resolves its destination for writing.
    refused(&fx.vault, "../moved.md", Access::Write, "escapes_vault");
    refused(&fx.vault, "out/moved.md", Access::Write, "symlink_escape");
    refused(&fx.vault, "alias.md", Access::Write, "is_symlink");
    let dst = fx.path("vault_evil/moved.md").display().to_string();
    refused(&fx.vault, &dst, Access::Write, "absolute");
    fx.assert_outside_untouched();
}

#[test]
fn case_16_glob_and_search_patterns() {
    let fx = Fixture::new();
    for (pattern, kind) in [
        ("**/../../*", "escapes_vault"),
        ("../*", "escapes_vault"),
        ("notes/{..,x}/*", "escapes_vault"),
        ("..\\*", "escapes_vault"),
        ("/etc/*", "absolute"),
        ("C:\\*", "absolute"),
        ("%2e%2e/*", "encoded_traversal"),
        ("%252e%252e%252f*", "encoded_traversal"),
        ("．．/*", "unicode_traversal"),
    ] {
        let err = fx.vault.check_pattern(pattern).unwrap_err();
        assert_eq!(err.kind(), kind, "{pattern}: {err}");
        assert!(err.to_string().contains(pattern), "{err}");
    }
    assert_eq!(
        fx.vault.check_pattern("a\0*").unwrap_err().kind(),
        "nul_byte"
    );
    for pattern in [
        "",
        "**/*.md",
        "Projects/**",
        "notes/*.md",
        "{a,b}/**/*.md",
        "dots.in.name/*",
    ] {
        fx.vault.check_pattern(pattern).unwrap();
    }
}

#[test]
fn accepts_ordinary_paths() {
    let fx = Fixture::new();
    for (input, rel) in [
        ("notes/a.md", "notes/a.md"),
        ("./notes//a.md", "notes/a.md"),
        ("Projects/2024/Plan.md", "Projects/2024/Plan.md"),
        ("日本語/ノート.md", "日本語/ノート.md"),
        (
            "Meeting notes/Weekly sync.md",
            "Meeting notes/Weekly sync.md",
        ),
        (".hidden.md", ".hidden.md"),
        ("a..b.md", "a..b.md"),
    ] {
        for access in [Access::Read, Access::Write] {
            let path = fx.vault.resolve(input, access).unwrap();
            assert_eq!(path.rel(), rel);
            assert_eq!(path.abs(), fx.vault.root().join(rel));
        }
    }
    // A folder link that stays inside is followed, and the real location is reported.
    fx.link("notes", "vault/shortcut");
    let path = fx.vault.resolve("shortcut/a.md", Access::Write).unwrap();
    assert_eq!(path.rel(), "notes/a.md");
}

#[test]
fn open_reports_missing_vault() {
    let fx = Fixture::new();
    let err = Vault::open(fx.path("no_such_vault")).unwrap_err();
    assert_eq!(err.kind(), "vault_unreadable");
    assert!(err.to_string().contains("no_such_vault"), "{err}");
    let err = Vault::open(fx.path("outside/secret.md")).unwrap_err();
    assert_eq!(err.kind(), "vault_not_folder");
}
