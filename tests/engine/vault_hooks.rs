//! A vault's `.vaultchat/hooks.toml` through the real binary (issue 23): never run while
//! untrusted (a one-line notice says why, and `doctor` names it), run after `vaultchat trust`
//! (which shows what it runs), withdrawn by an edit to it. `vaultchat daily --append` is the
//! approved change that fires `after_write`.

use crate::common;

use std::path::Path;

fn append(data: &Path, vault: &Path, line: &str) -> std::process::Output {
    let out = common::cmd(data, vault)
        .args(["daily", "--date", "2026-12-04", "--append", line])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_vault_hooks_file_runs_only_while_trusted_and_an_edit_withdraws_it() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    std::fs::create_dir_all(vault.join(".vaultchat")).unwrap();
    let data = tmp.path().join("data");
    let log = tmp.path().join("vault-hook.log");
    let hooks = vault.join(".vaultchat/hooks.toml");
    // Written beside the vault (the hook runs in the vault's folder).
    std::fs::write(
        &hooks,
        "[[after_write]]\ncommand = 'echo \"$VAULTCHAT_EVENT $*\" >> ../vault-hook.log'\n",
    )
    .unwrap();

    // Untrusted: the note is written, the hook is not run, and one line says why.
    let out = append(&data, &vault, "- first");
    assert!(!log.exists(), "an untrusted hook ran");
    let said: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.contains("hooks"))
        .map(str::to_string)
        .collect();
    assert_eq!(said.len(), 1, "{}", stderr(&out));
    assert!(
        said[0].contains(".vaultchat/hooks.toml") && said[0].contains("vaultchat trust"),
        "{said:?}"
    );
    let doctor = common::run(&data, &vault, &["doctor"]);
    let doctor = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        doctor
            .lines()
            .any(|l| l.contains("hooks") && l.contains("not run until you trust")),
        "{doctor}"
    );

    // `vaultchat trust` shows what the file runs, then the hook runs after the next write.
    let trusted = common::ok(&data, &vault, &["trust"]);
    assert!(
        trusted.contains(".vaultchat/hooks.toml runs, as you")
            && trusted.contains("after_write (timeout 10 s): sh -c"),
        "{trusted}"
    );
    let out = append(&data, &vault, "- second");
    assert!(!stderr(&out).contains("hooks"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "after_write 2026-12-04.md\n"
    );

    // An edit to the file withdraws the trust: not run, and said.
    std::fs::write(
        &hooks,
        "[[after_write]]\ncommand = 'echo \"edited $*\" >> ../vault-hook.log'\n",
    )
    .unwrap();
    let out = append(&data, &vault, "- third");
    assert!(
        stderr(&out).contains("changed since you trusted it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "after_write 2026-12-04.md\n",
        "the edited hook did not run"
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("2026-12-04.md")).unwrap(),
        "- first\n- second\n- third\n"
    );
}
