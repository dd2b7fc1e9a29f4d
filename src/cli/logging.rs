//! Logging to the log file (never to stdout: stdout carries results, and later the TUI).

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

/// The filter when `VAULTCHAT_LOG` is unset or invalid.
const DEFAULT_FILTER: &str = "vaultchat=info";

/// Start logging to `path`, filtered by `VAULTCHAT_LOG` (`target=level` pairs separated by
/// commas, e.g. `vaultchat=debug`). A log file that cannot be opened disables logging rather
/// than failing the command.
///
/// `Targets` rather than `EnvFilter`: the latter compiles regular expressions at start-up, which
/// measured as a visible share of a 3 ms `vaultchat search`.
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
    let filter: Targets = std::env::var("VAULTCHAT_LOG")
        .ok()
        .and_then(|spec| spec.parse().ok())
        .or_else(|| DEFAULT_FILTER.parse().ok())?;
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(Mutex::new(file));
    tracing_subscriber::registry()
        .with(layer.with_filter(filter))
        .try_init()
        .ok()
}
