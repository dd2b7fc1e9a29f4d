//! The hooks' task on a real vault and real processes: the environment a hook gets, the order of
//! events, a failure and a timeout said in one line, the process group killed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::config::hooks::{HookCommand, HookSpec};
use std::sync::Mutex;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    database: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    std::fs::create_dir_all(&root).unwrap();
    let database = dir.path().join("vaultchat.db");
    Fixture {
        root: root.canonicalize().unwrap(),
        database,
        _dir: dir,
    }
}

fn shell(line: &str, timeout_secs: u64) -> HookSpec {
    HookSpec {
        command: HookCommand::Shell(line.into()),
        timeout_secs,
    }
}

type Said = Arc<Mutex<Vec<String>>>;

fn started(fx: &Fixture, personal: HooksConfig) -> (Hooks, Finished, Said) {
    let said: Said = Arc::default();
    let keep = Arc::clone(&said);
    let (hooks, done) = start(
        Setup {
            personal,
            vault: Vault::open(&fx.root).unwrap(),
            database: fx.database.clone(),
        },
        Arc::new(move |notice| keep.lock().unwrap().push(notice)),
    );
    (hooks, done, said)
}

/// A shell hook runs in the vault's root with the event, the session and the changed paths in
/// its environment, and the paths as `"$@"`.
#[tokio::test]
async fn a_hook_gets_the_event_the_session_and_the_paths() {
    let fx = fixture();
    let personal = HooksConfig {
        after_write: vec![shell(
            r#"printf '%s|%s|%s|%s|%s|%s\n' "$VAULTCHAT_EVENT" "$VAULTCHAT_SESSION_ID" "$VAULTCHAT_CHANGED_PATHS" "$1" "$2" "$(pwd)" > seen.txt"#,
            10,
        )],
        ..HooksConfig::default()
    };
    let (hooks, done, said) = started(&fx, personal);
    hooks.set_session(Some("s-1"));
    hooks.fire(
        Event::AfterWrite,
        vec!["Plan.md".into(), "Ideas/New idea.md".into()],
    );
    done.wait(Duration::from_secs(20)).await;
    let seen = std::fs::read_to_string(fx.root.join("seen.txt")).unwrap();
    assert_eq!(
        seen,
        format!(
            "after_write|s-1|Plan.md\nIdeas/New idea.md|Plan.md|Ideas/New idea.md|{}\n",
            fx.root.display()
        )
    );
    assert!(
        said.lock().unwrap().is_empty(),
        "{:?}",
        said.lock().unwrap()
    );
}

/// A change of thousands of notes (a move that relinks a much-linked note) is more than an
/// argument list or one environment string may hold (Linux refuses 128 KiB in one string): the
/// hook still runs, and reads the paths from the file `VAULTCHAT_CHANGED_PATHS_FILE` names.
#[tokio::test]
async fn a_change_of_thousands_of_paths_still_runs_its_hook() {
    let fx = fixture();
    let personal = HooksConfig {
        after_write: vec![shell(
            r#"printf '%s|%s\n' "$#" "${#VAULTCHAT_CHANGED_PATHS}" > seen.txt; cat "$VAULTCHAT_CHANGED_PATHS_FILE" > paths.txt"#,
            10,
        )],
        ..HooksConfig::default()
    };
    let paths: Vec<String> = (0..5000)
        .map(|i| format!("Projects/Some long folder name/Note number {i:05}.md"))
        .collect();
    let (hooks, done, said) = started(&fx, personal);
    hooks.fire(Event::AfterWrite, paths.clone());
    done.wait(Duration::from_secs(20)).await;
    assert!(
        said.lock().unwrap().is_empty(),
        "{:?}",
        said.lock().unwrap()
    );
    let seen = std::fs::read_to_string(fx.root.join("seen.txt")).unwrap();
    assert_eq!(
        seen, "0|0\n",
        "the paths are not inline when they are this many"
    );
    let listed = std::fs::read_to_string(fx.root.join("paths.txt")).unwrap();
    assert_eq!(listed, paths.join("\n"));
}

/// Events run one after the other, in the order fired: the first hook is slow, and still its
/// line comes first. Only the fired event's hooks run.
#[tokio::test]
async fn events_run_in_order_one_at_a_time() {
    let fx = fixture();
    let personal = HooksConfig {
        after_write: vec![shell(
            r#"case "$1" in first.md) sleep 0.4;; esac; echo "$1" >> order.txt"#,
            10,
        )],
        after_turn: vec![shell("echo turn >> order.txt", 10)],
        ..HooksConfig::default()
    };
    let (hooks, done, _said) = started(&fx, personal);
    hooks.fire(Event::AfterWrite, vec!["first.md".into()]);
    hooks.fire(Event::AfterWrite, vec!["second.md".into()]);
    hooks.fire(Event::AfterTurn, Vec::new());
    hooks.fire(Event::SessionEnd, Vec::new());
    done.wait(Duration::from_secs(20)).await;
    let order = std::fs::read_to_string(fx.root.join("order.txt")).unwrap();
    assert_eq!(order, "first.md\nsecond.md\nturn\n");
}

/// A failing hook is one line naming the event, the command and the last line it wrote to stderr.
#[tokio::test]
async fn a_failure_is_one_line_with_what_the_hook_said() {
    let fx = fixture();
    let personal = HooksConfig {
        after_turn: vec![shell(
            "echo working; echo 'nothing to commit' >&2; exit 3",
            10,
        )],
        session_start: vec![HookSpec {
            command: HookCommand::Argv(vec!["/no/such/program".into()]),
            timeout_secs: 10,
        }],
        ..HooksConfig::default()
    };
    let (hooks, done, said) = started(&fx, personal);
    hooks.fire(Event::AfterTurn, Vec::new());
    hooks.fire(Event::SessionStart, Vec::new());
    done.wait(Duration::from_secs(20)).await;
    let said = said.lock().unwrap().clone();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].starts_with("the after_turn hook `echo working;"),
        "{said:?}"
    );
    assert!(said[0].contains("exit status: 3"), "{said:?}");
    assert!(said[0].ends_with(": nothing to commit"), "{said:?}");
    assert!(!said[0].contains('\n'), "{said:?}");
    assert!(
        said[1].starts_with("the session_start hook `/no/such/program` could not start"),
        "{said:?}"
    );
}

/// A hook still running at its timeout is killed with every process it started (the `sleep`
/// that `sh` started too), and said; the next event's hooks still run.
#[tokio::test]
async fn a_hung_hook_and_its_children_are_killed_at_the_timeout() {
    let fx = fixture();
    let personal = HooksConfig {
        after_write: vec![shell(
            r#"if [ "$1" = hang.md ]; then sleep 100 & echo $! > child.pid; wait; fi; echo "$1" > after.txt"#,
            1,
        )],
        ..HooksConfig::default()
    };
    let (hooks, done, said) = started(&fx, personal);
    let started_at = std::time::Instant::now();
    hooks.fire(Event::AfterWrite, vec!["hang.md".into()]);
    hooks.fire(Event::AfterWrite, vec!["next.md".into()]);
    done.wait(Duration::from_secs(20)).await;
    let took = started_at.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let said = said.lock().unwrap().clone();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("was stopped after 1 s"), "{said:?}");
    assert_eq!(
        std::fs::read_to_string(fx.root.join("after.txt")).unwrap(),
        "next.md\n"
    );
    let pid = std::fs::read_to_string(fx.root.join("child.pid")).unwrap();
    // Killed: gone, or a zombie until init reaps it. Waited on as a condition, not a sleep.
    assert_gone(pid.trim()).await;
}

/// A vault's hooks file is run only while trusted; an untrusted one is said once, not run.
#[tokio::test]
async fn the_vaults_hooks_run_only_while_trusted() {
    let fx = fixture();
    std::fs::create_dir_all(fx.root.join(".vaultchat")).unwrap();
    std::fs::write(
        fx.root.join(".vaultchat/hooks.toml"),
        "[[after_write]]\ncommand = 'echo \"$1\" >> vault-hook.txt'\n",
    )
    .unwrap();
    let (hooks, done, said) = started(&fx, HooksConfig::default());
    hooks.fire(Event::AfterWrite, vec!["a.md".into()]);
    hooks.fire(Event::AfterWrite, vec!["b.md".into()]);
    done.wait(Duration::from_secs(20)).await;
    assert!(!fx.root.join("vault-hook.txt").exists());
    let said = said.lock().unwrap().clone();
    assert_eq!(said.len(), 1, "said once: {said:?}");
    assert!(said[0].contains("vaultchat trust"), "{said:?}");

    // Trusted as `vaultchat trust` does: the file runs.
    let vault = Vault::open(&fx.root).unwrap();
    crate::mcp::plugins::VaultPlugins::trust_now(&vault, &fx.database);
    let (hooks, done, said) = started(&fx, HooksConfig::default());
    hooks.fire(Event::AfterWrite, vec!["c.md".into()]);
    done.wait(Duration::from_secs(20)).await;
    assert_eq!(
        std::fs::read_to_string(fx.root.join("vault-hook.txt")).unwrap(),
        "c.md\n"
    );
    assert!(said.lock().unwrap().is_empty());
}

/// Ending with a hook still running (the wait's bound passed) kills its whole process group.
#[tokio::test]
async fn a_hook_still_running_when_the_wait_ends_is_killed_with_its_children() {
    let fx = fixture();
    let personal = HooksConfig {
        session_end: vec![shell("sleep 100 & echo $! > child.pid; wait", 3600)],
        ..HooksConfig::default()
    };
    let (hooks, done, _said) = started(&fx, personal);
    hooks.fire(Event::SessionEnd, Vec::new());
    let pid_file = fx.root.join("child.pid");
    let started_at = std::time::Instant::now();
    while !std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')) {
        assert!(
            started_at.elapsed() < Duration::from_secs(10),
            "the hook never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done.wait(Duration::from_millis(200)).await;
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert_gone(pid.trim()).await;
}

/// Waits until `pid` is gone or a zombie, at most 5 s.
async fn assert_gone(pid: &str) {
    let stat = format!("/proc/{pid}/stat");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let state = std::fs::read_to_string(&stat).ok().and_then(|s| {
            s.rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next())
        });
        match state {
            None | Some('Z') | Some('X') => return,
            Some(state) => assert!(
                std::time::Instant::now() < deadline,
                "the hook's child {pid} is still running (state {state})"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
