//! `vaultchat tools [--json]`: every tool with its tier, schema and annotations.

use super::{Context, Failure};
use crate::mcp::plugins::ServerPlan;
use crate::store::Actor;
use crate::tools::workspace::{self, Workspace};
use crate::tools::{Registry, ToolSpec};
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Print one JSON object: {"tools": [{"name", "title", "description", "inputSchema", "annotations", "tier"}]}.
    #[arg(long)]
    pub json: bool,
}

/// The registry of every tool available for the vault in `ctx`.
pub fn registry(ctx: &Context, actor: Actor) -> Result<Registry, Failure> {
    let vault = ctx.vault()?;
    let ws = Workspace::open(vault, &ctx.paths, &ctx.config, actor)?;
    let mut registry = Registry::new();
    workspace::register(&mut registry, &ws);
    Ok(registry)
}

/// The tools of the person's MCP servers and of the vault's trusted plugins, started for the
/// listing and closed again. A server that does not start, a plugins file that does not read and
/// plugins not trusted yet are named on stderr.
fn mcp_tool_specs(ctx: &Context) -> Result<Vec<ToolSpec>, Failure> {
    let vault = ctx.vault()?;
    let plan = ServerPlan::new(&ctx.config, &vault, &ctx.paths.database_file());
    for problem in &plan.problems {
        eprintln!("vaultchat: {}", crate::quote::terminal_text(problem));
    }
    let tools = super::servers::with_started(plan.specs, |servers| {
        super::servers::say_not_started(servers.statuses());
        servers.tools().iter().map(|t| t.spec().clone()).collect()
    })?;
    Ok(tools.unwrap_or_default())
}

pub fn run(ctx: &Context, args: &ToolsArgs) -> Result<ExitCode, Failure> {
    let registry = registry(ctx, Actor::Agent)?;
    // The session tools act on the editor, so they are listed here but never served over MCP;
    // nor are the tools of the person's MCP servers, which only the chat calls (the vault's
    // trusted plugins are: see `vaultchat mcp`).
    let session = crate::tools::session::all_session_tool_specs();
    let mcp = mcp_tool_specs(ctx)?;
    let specs: Vec<_> = registry
        .specs()
        .chain(session.iter())
        .chain(mcp.iter())
        .collect();
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &serde_json::json!({ "tools": specs }))?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    for spec in specs {
        let a = spec.annotations;
        let kind = if a.read_only_hint {
            "read-only"
        } else if a.destructive_hint {
            "destructive"
        } else {
            "writes"
        };
        let tier = serde_json::to_value(spec.tier)?;
        writeln!(
            out,
            "{:<28} {:<10} {:<12} {}",
            // A plugin's or server's tool names and titles are theirs to write.
            crate::quote::terminal(&spec.name),
            tier.as_str().unwrap_or_default(),
            kind,
            crate::quote::terminal(&spec.title)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
