//! Running one hook: in the vault's root, in a process group of its own (so a hook killed at its
//! timeout takes the processes it started with it), with the event, the session and the changed
//! paths in its environment, its output kept bounded for the log.

use super::Job;
use crate::config::hooks::{HookCommand, HookSpec};
use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessGroup};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};

/// How much of each of a hook's output streams is kept for the log; the rest is read and dropped
/// (so a chatty hook never stalls on a full pipe).
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024;

/// How long the output is waited for after the hook ended: a process that left the group (a
/// daemon) may hold the pipes open forever.
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

/// The most the changed paths may take inline (as `"$@"` and in `VAULTCHAT_CHANGED_PATHS`):
/// Linux refuses one argument or environment string over 128 KiB and a whole exec over a few
/// MiB, so a move relinking thousands of notes would start no hook at all. Past this the paths
/// are in a file `VAULTCHAT_CHANGED_PATHS_FILE` names, one a line.
pub const MAX_INLINE_PATHS_BYTES: usize = 64 * 1024;

/// `$0` of a shell hook, as `ps` and error messages show it.
const SHELL_NAME: &str = "vaultchat-hook";

/// How a hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Exit status 0.
    Succeeded,
    /// A non-zero exit or a signal, as the status says it.
    Failed(String),
    /// Still running at its timeout: its process group was killed.
    TimedOut(Duration),
    /// It could not be started (no such program, no shell).
    NotStarted(String),
}

/// What a hook printed, at most [`MAX_OUTPUT_BYTES`] of each stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
}

/// Run `hook` for `job` in `root` and wait for it (never longer than its timeout and a moment).
pub async fn run(hook: &HookSpec, job: &Job, root: &Path) -> (Ended, Output) {
    let joined = job.paths.join("\n");
    // Kept until the hook has ended: the file is removed when it drops.
    let paths_file = if joined.len() > MAX_INLINE_PATHS_BYTES {
        match crate::config::own_files::temporary_text("vaultchat-changed-", &joined) {
            Ok(file) => Some(file),
            Err(e) => {
                return (
                    Ended::NotStarted(format!("the changed paths could not be written: {e}")),
                    Output::default(),
                );
            }
        }
    } else {
        None
    };
    let inline: &[String] = if paths_file.is_some() {
        &[]
    } else {
        &job.paths
    };
    let mut command = match &hook.command {
        HookCommand::Shell(line) => {
            let mut command = tokio::process::Command::new("sh");
            // The changed paths are `"$@"` to the line, as well as in the environment.
            command.arg("-c").arg(line).arg(SHELL_NAME).args(inline);
            command
        }
        HookCommand::Argv(argv) => {
            let Some((program, args)) = argv.split_first() else {
                return (
                    Ended::NotStarted("the command is empty".into()),
                    Output::default(),
                );
            };
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            command
        }
    };
    command
        .current_dir(root)
        .env("VAULTCHAT_EVENT", job.event.key())
        .env("VAULTCHAT_SESSION_ID", job.session.as_deref().unwrap_or(""))
        .env("VAULTCHAT_CHANGED_PATHS", inline.join("\n"))
        .env("VAULTCHAT_VAULT", root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(file) = &paths_file {
        command.env("VAULTCHAT_CHANGED_PATHS_FILE", file.path());
    }
    let mut wrapped = CommandWrap::from(command);
    wrapped.wrap(ProcessGroup::leader());
    let mut group = match wrapped.spawn() {
        Ok(child) => Group {
            child,
            ended: false,
        },
        Err(e) => return (Ended::NotStarted(e.to_string()), Output::default()),
    };
    let child = &mut group.child;
    let stdout = tokio::spawn(read_bounded(child.stdout().take()));
    let stderr = tokio::spawn(read_bounded(child.stderr().take()));
    let timeout = Duration::from_secs(hook.timeout_secs);
    let ended = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) if status.success() => Ended::Succeeded,
        Ok(Ok(status)) => Ended::Failed(status.to_string()),
        Ok(Err(e)) => Ended::Failed(format!("waiting for it failed: {e}")),
        Err(_) => {
            // The whole group: `sh -c 'sleep 100'` leaves `sleep` behind otherwise.
            if let Err(e) = child.start_kill() {
                tracing::warn!("killing a hook at its timeout failed: {e}");
            }
            if tokio::time::timeout(OUTPUT_GRACE, child.wait())
                .await
                .is_err()
            {
                tracing::warn!("a hook killed at its timeout has not ended yet");
            }
            Ended::TimedOut(timeout)
        }
    };
    // Ended, or killed above: only a wait dropped half-way leaves the group to the guard.
    group.ended = true;
    let output = Output {
        stdout: collected(stdout).await,
        stderr: collected(stderr).await,
    };
    (ended, output)
}

/// A running hook's process group, killed whole if the wait for it is dropped (vaultchat ends
/// while the hook runs): tokio's kill-on-drop would kill the shell and leave its children.
struct Group {
    child: Box<dyn ChildWrapper>,
    ended: bool,
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.child.start_kill();
        }
    }
}

/// The first [`MAX_OUTPUT_BYTES`] of a stream, reading on to its end.
async fn read_bounded(stream: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let Some(mut stream) = stream else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
}

/// A reader's text, or what it had when the grace ran out (the task is then stopped).
async fn collected(reader: tokio::task::JoinHandle<Vec<u8>>) -> String {
    let abort = reader.abort_handle();
    match tokio::time::timeout(OUTPUT_GRACE, reader).await {
        Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        Ok(Err(_)) => String::new(),
        Err(_) => {
            abort.abort();
            String::new()
        }
    }
}
