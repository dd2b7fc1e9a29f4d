//! `vaultchat commands [--json]`: every slash command for the vault: the chat's own, the
//! person's (`commands/` in the config folder) and the vault's (`.vaultchat/commands/`, listed
//! only while trusted) and the prompts of the person's MCP servers and the vault's trusted
//! plugins (`/server:prompt`; the servers are started for the listing and closed again). What is
//! left out, and why, goes to stderr.

use super::{Context, Failure, outln};
use crate::commands::{self, Catalog};
use crate::mcp::McpServers;
use crate::mcp::plugins::ServerPlan;
use crate::quote;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct CommandsArgs {
    /// Print one JSON object: {"commands": [{"name", "description", "argument_hint", "origin": {"kind", "server", "prompt", "plugin"}, "file", "arguments": [{"name", "description", "required"}]}], "withheld", "problems"}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: &CommandsArgs) -> Result<ExitCode, Failure> {
    let vault = ctx.vault()?;
    let mut catalog = commands::catalog(&ctx.paths, &vault);
    let plan = ServerPlan::new(&ctx.config, &vault, &ctx.paths.database_file());
    for problem in &plan.problems {
        eprintln!("vaultchat: {}", quote::terminal_text(problem));
    }
    if plan.specs.iter().any(|s| s.enabled && s.origin.may_start()) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (listing, statuses) = runtime.block_on(async {
            let servers = McpServers::start(plan.specs).await;
            let listing = servers.prompts().await;
            servers.shutdown().await;
            (listing, servers.statuses().to_vec())
        });
        super::servers::say_not_started(&statuses);
        catalog.add_prompts(listing);
    }
    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &catalog)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_list(&catalog)?;
    say_left_out(&catalog);
    Ok(ExitCode::SUCCESS)
}

fn print_list(catalog: &Catalog) -> Result<(), Failure> {
    let usage = |c: &commands::Command| {
        let name = quote::terminal(&c.name).into_owned();
        if c.argument_hint.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {}", quote::terminal(&c.argument_hint))
        }
    };
    let width = catalog
        .commands
        .iter()
        .map(|c| usage(c).chars().count())
        .max()
        .unwrap_or(0);
    for command in &catalog.commands {
        let shown = usage(command);
        let pad = width - shown.chars().count();
        outln!(
            "{shown}{:pad$}  {:<8}  {}",
            "",
            command.origin.label(),
            quote::terminal(&command.description)
        );
    }
    Ok(())
}

/// The vault's commands not offered and the files left out, on stderr.
pub(super) fn say_left_out(catalog: &Catalog) {
    if let Some(why) = &catalog.withheld {
        eprintln!("vaultchat: {}", quote::terminal_text(why));
    }
    for problem in &catalog.problems {
        eprintln!("vaultchat: {}", quote::terminal_text(problem));
    }
}
