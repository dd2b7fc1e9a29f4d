//! `vaultchat index [--rebuild] [--watch]`.

use super::outln;
use super::{Context, Failure};
use crate::index::watch::{LiveEvent, LiveIndex};
use crate::index::{Index, Progress, ProgressPhase, SyncReport};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Discard the index and build it again from every note.
    #[arg(long)]
    pub rebuild: bool,
    /// Keep running and keep the index up to date as notes change (Ctrl+C to stop).
    #[arg(long)]
    pub watch: bool,
}

pub fn run(ctx: &Context, args: &IndexArgs) -> Result<ExitCode, Failure> {
    let vault = ctx.vault()?;
    let mut index = Index::open(&ctx.paths.index_dir, &vault, &ctx.config.index)?;
    if args.rebuild {
        index.reset()?;
    }
    let report = sync_with_progress(&mut index)?;
    outln!("{}", summary(&report, index.db_path()));
    print_skipped(&report);
    if let Some(config) = &ctx.config.embeddings {
        index = embed_with_progress(index, config, ctx.config.privacy.local_only)?;
    }
    if !args.watch {
        return Ok(ExitCode::SUCCESS);
    }
    let live = LiveIndex::start(index, &vault, &ctx.config.index, |event| {
        let line = match event {
            LiveEvent::Synced(report) if report.changed() == 0 => return,
            LiveEvent::Synced(report) => format!(
                "updated: {} added, {} changed, {} removed, {} renamed in {:.1} ms",
                report.added,
                report.updated,
                report.removed,
                report.renamed,
                report.elapsed.as_secs_f64() * 1000.0
            ),
            LiveEvent::Failed(message) => {
                format!(
                    "index update failed: {}",
                    crate::quote::terminal_text(&message.to_string())
                )
            }
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    })?;
    // The count is printed once every folder is watched (the registration runs on the
    // watcher's thread); tests take this line to mean "watching".
    live.wait_watching(std::time::Duration::from_secs(600));
    outln!(
        "watching {} folders for changes{} (Ctrl+C to stop)",
        live.watched_folders(),
        if live.is_degraded() {
            "; too many folders to watch them all, so the rest is reconciled every 30 s"
        } else {
            ""
        }
    );
    let _ = std::io::stdout().flush();
    // Run until killed; the index is consistent at every commit, so Ctrl+C loses nothing.
    loop {
        std::thread::park();
    }
}

/// Embed the pieces of notes that changed since the last pass (semantic search), with a progress
/// bar on a terminal.
fn embed_with_progress(
    index: Index,
    config: &crate::config::EmbeddingsConfig,
    local_only: bool,
) -> Result<Index, Failure> {
    use crate::index::embeddings::{HttpEmbedder, embed_pending};
    let embedder = HttpEmbedder::new(config, local_only)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let index = std::sync::Mutex::new(index);
    let bar = std::io::stderr()
        .is_terminal()
        .then(|| ProgressBar::new(0).with_message("embedding"));
    if let Some(bar) = &bar {
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} pieces  {eta} left  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
    }
    let started = std::time::Instant::now();
    let embedded = runtime.block_on(embed_pending(&index, &embedder, &mut |done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    }))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let index = index.into_inner().unwrap_or_else(|p| p.into_inner());
    outln!(
        "embedded {embedded} new or changed pieces with {} in {:.2} s ({} pieces in all)",
        embedder.model(),
        started.elapsed().as_secs_f64(),
        index.embedded_chunks()?
    );
    Ok(index)
}

/// Sync, with a progress bar when stderr is a terminal.
pub fn sync_with_progress(index: &mut Index) -> Result<SyncReport, Failure> {
    if !std::io::stderr().is_terminal() {
        return Ok(index.sync(&mut |_| {})?);
    }
    let bar = ProgressBar::new_spinner();
    bar.set_message("scanning the vault…");
    let style = ProgressStyle::with_template("{bar:30} {pos}/{len} notes  {eta} left  {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let mut styled = false;
    let report = index.sync(&mut |p: Progress| match p.phase {
        ProgressPhase::Scanning => bar.tick(),
        ProgressPhase::Indexing => {
            if !styled {
                bar.set_style(style.clone());
                bar.set_length(p.total);
                bar.set_message("");
                styled = true;
            }
            bar.set_position(p.done);
        }
    });
    bar.finish_and_clear();
    Ok(report?)
}

pub fn summary(report: &SyncReport, db: &std::path::Path) -> String {
    let what = if report.cold { "indexed" } else { "refreshed" };
    format!(
        "{what} {} notes in {:.2} s: {} added, {} changed, {} removed, {} renamed, {} unchanged (index: {})",
        report.scanned,
        report.elapsed.as_secs_f64(),
        report.added,
        report.updated,
        report.removed,
        report.renamed,
        report.unchanged,
        db.display()
    )
}

fn print_skipped(report: &SyncReport) {
    const SHOWN: usize = 10;
    for skipped in report.skipped.iter().take(SHOWN) {
        eprintln!(
            "skipped {}: {}",
            crate::quote::terminal(&skipped.path),
            crate::quote::terminal_text(&skipped.reason.to_string())
        );
    }
    if report.skipped.len() > SHOWN {
        eprintln!("… and {} more skipped", report.skipped.len() - SHOWN);
    }
}
