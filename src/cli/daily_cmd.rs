//! `vaultchat daily [--date YYYY-MM-DD] [--append TEXT] [--json]`: the day's note, where the
//! vault's Obsidian settings put it, created from its template when missing, with a line
//! appended. The person's own command: no question asked, but written as every write is (the
//! vault's write lock, the atomic writer, never over a change it has not seen).

use super::{Context, Failure};
use crate::store::Actor;
use crate::tools::workspace::{Workspace, day_of};
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct DailyArgs {
    /// The day (`YYYY-MM-DD`, `today`, `yesterday`, `tomorrow`); default today (UTC).
    #[arg(long, value_name = "DATE")]
    pub date: Option<String>,
    /// Add TEXT at the end of the note, on a line of its own (`--append "- [ ] call Ana"`).
    // A journal line is often a list item: `- x` is the value, not an option.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub append: Option<String>,
    /// Print one JSON object: {"path", "date", "created", "appended", "warnings"}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: &DailyArgs) -> Result<ExitCode, Failure> {
    let day = match day_of(args.date.as_deref()) {
        Ok(day) => day,
        Err(e) => {
            eprintln!("vaultchat: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let vault = ctx.vault()?;
    // The index is not brought up to date for one note: the write indexes the note it wrote.
    let workspace = Workspace::open_unsynced(vault, &ctx.paths, &ctx.config, Actor::User)?;
    // A note made or appended to fires the `after_write` hooks, run before the command returns.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (hooks, hooks_done) =
        super::hook_notices::hooks_on_stderr(ctx, &runtime, workspace.vault());
    workspace.on_written(hooks.written_listener());
    let outcome = workspace.daily_for_person(day, args.append.as_deref());
    runtime.block_on(hooks_done.wait(super::hook_notices::HOOKS_AT_EXIT));
    let outcome = outcome.map_err(|e| Failure::new(e.to_string()))?;
    for warning in &outcome.warnings {
        eprintln!("vaultchat: {}", crate::quote::terminal(warning));
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &outcome)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}", crate::quote::terminal(&outcome.path))?;
    }
    Ok(ExitCode::SUCCESS)
}
