//! Logging to the log file (never to stdout: stdout carries results, and later the TUI).

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

/// Start logging to `path`, filtered by `VAULTCHAT_LOG` (default `vaultchat=info`). A log file
/// that cannot be opened disables logging rather than failing the command.
pub fn init(path: &Path) -> Option<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).ok()?;
    }
    // 0600: prompts and note names end up in the log.
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .ok()?;
    let filter = tracing_subscriber::EnvFilter::try_from_env("VAULTCHAT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("vaultchat=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init()
        .ok()
}
