//! `vaultchat mcp [--http ADDR] [--allow-writes]`: serve the workspace tools (and the vault's
//! trusted plugins' tools) over MCP, on stdio or on Streamable HTTP.

use super::outln;
use super::{Context, Failure};
use crate::index::Index;
use crate::index::watch::{LiveEvent, LiveIndex};
use crate::mcp::plugins::ServerPlan;
use crate::mcp::{
    HttpAuth, McpServerState, McpServers, NoteCatalog, NoteEvents, VaultServer, generate_token,
    serve_http, serve_stdio,
};
use crate::store::Actor;
use crate::tools::Registry;
use crate::tools::workspace::{self, Workspace};
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve over Streamable HTTP on ADDR (e.g. 127.0.0.1:8765; port 0 picks a free one) instead
    /// of stdio. Requests need the bearer token printed at start-up.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// With --http, accept connections from other machines (default: loopback only).
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// With --http on loopback, accept requests without a token. For local test harnesses (such
    /// as the MCP conformance suite) that cannot send one.
    #[arg(long, requires = "http", conflicts_with = "allow_remote")]
    pub no_auth: bool,
    /// Also offer the tools that change notes (create, update, delete, tags, folders). Without
    /// it only read-only tools are listed, and calls to others are refused.
    #[arg(long)]
    pub allow_writes: bool,
}

pub fn run(ctx: &Context, args: &McpArgs) -> Result<ExitCode, Failure> {
    // The server answers at once: the index is opened as it is and brought up to date in the
    // background by the live indexer's first pass (searches meanwhile say so), instead of a
    // full sync before `initialize` can be answered.
    let vault = ctx.vault()?;
    let workspace = Workspace::open_unsynced(vault.clone(), &ctx.paths, &ctx.config, Actor::Agent)?;
    let mut registry = Registry::new();
    workspace::register(&mut registry, &workspace);
    // Keep the index live for the whole session, so a search sees notes other programs saved
    // while the client was connected (the watcher has its own connection and thread).
    let mut live_index = Index::open(&ctx.paths.index_dir, &vault, &ctx.config.index)?;
    if live_index.status()?.last_sync_unix.is_none() {
        // Never built (the first run on this vault): an empty index has nothing to offer, so it
        // is built before serving, as `vaultchat index` would.
        live_index.sync(&mut |_| {})?;
        workspace.mark_index_synced();
    }
    let synced = std::sync::Arc::clone(&workspace);
    // The notes as resources; their changes come from the same watcher as the index's.
    let notes = NoteEvents::new(std::sync::Arc::new(NoteCatalog::new(
        std::sync::Arc::clone(&workspace),
    )));
    let observed = std::sync::Arc::clone(&notes);
    let _live = LiveIndex::start_observed(
        live_index,
        &vault,
        &ctx.config.index,
        move |event| match event {
            LiveEvent::Synced(_) => synced.mark_index_synced(),
            LiveEvent::Failed(message) => tracing::warn!(%message, "live index update failed"),
        },
        move |change| observed.observe(change),
    )?;
    let runtime = if args.http.is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?
    } else {
        // One client, one request at a time: a single thread answers with the fewest hand-offs.
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    };
    // A client's approved write fires the `after_write` hooks (a read-only server writes nothing).
    let hooks_done = args.allow_writes.then(|| {
        let (hooks, done) = super::hook_notices::hooks_on_stderr(ctx, &runtime, &vault);
        workspace.on_written(hooks.written_listener());
        done
    });
    let plugins = runtime.block_on(start_trusted_plugins(ctx, &vault));
    for tool in plugins.tools() {
        registry.register(tool);
    }
    let registry = if args.allow_writes {
        registry
    } else {
        registry.filtered(|spec| spec.annotations.read_only_hint)
    };
    tracing::info!(
        tools = registry.len(),
        allow_writes = args.allow_writes,
        "serving MCP on stdio"
    );
    let server = VaultServer::new(registry).with_notes(notes);
    let Some(addr) = args.http else {
        let served = runtime.block_on(serve_stdio(server));
        runtime.block_on(plugins.shutdown());
        if let Some(done) = hooks_done {
            runtime.block_on(done.wait(super::hook_notices::HOOKS_AT_EXIT));
        }
        served.map_err(Failure::new)?;
        return Ok(ExitCode::SUCCESS);
    };
    if !addr.ip().is_loopback() && !args.allow_remote {
        return Err(Failure::new(format!(
            "{addr} is not a loopback address; the vault would be reachable from other machines. \
             Use 127.0.0.1:PORT, or add --allow-remote if that is really what you want"
        )));
    }
    let (auth, token_from_env) = http_auth(args)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let bound = listener.local_addr()?;
        print_endpoint(bound, &auth, token_from_env)?;
        use std::io::Write;
        std::io::stdout().flush()?;
        let served = serve_http(server, listener, auth, args.allow_remote).await;
        plugins.shutdown().await;
        if let Some(done) = hooks_done {
            done.wait(super::hook_notices::HOOKS_AT_EXIT).await;
        }
        served
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The HTTP server's authentication: none with `--no-auth`, else a bearer token from
/// `VAULTCHAT_MCP_TOKEN` (at least 16 characters; `true` says it came from there) or a fresh one.
fn http_auth(args: &McpArgs) -> Result<(HttpAuth, bool), Failure> {
    if args.no_auth {
        return Ok((HttpAuth::None, false));
    }
    match std::env::var("VAULTCHAT_MCP_TOKEN") {
        Ok(token) if token.len() >= 16 => Ok((HttpAuth::Bearer(token), true)),
        Ok(_) => Err(Failure::new(
            "VAULTCHAT_MCP_TOKEN is shorter than 16 characters; use a longer token",
        )),
        Err(_) => Ok((HttpAuth::Bearer(generate_token()?), false)),
    }
}

/// The endpoint and the token, printed once on stdout so scripts can read them; never logged. A
/// token from the environment is not echoed.
fn print_endpoint(
    bound: std::net::SocketAddr,
    auth: &HttpAuth,
    token_from_env: bool,
) -> std::io::Result<()> {
    match auth {
        HttpAuth::Bearer(_) if token_from_env => {
            outln!("MCP endpoint: http://{bound}/mcp");
            outln!("Bearer token: the value of VAULTCHAT_MCP_TOKEN");
        }
        HttpAuth::Bearer(token) => {
            outln!("MCP endpoint: http://{bound}/mcp");
            outln!("Bearer token: {token}");
        }
        HttpAuth::None => outln!("MCP endpoint: http://{bound}/mcp (no token: --no-auth)"),
    }
    Ok(())
}

/// The vault's plugins, re-exported: only when the person trusts the plugins file as it is, and
/// never the person's own `[mcp.servers]`, which are for their chat only. Their tools pass the
/// same `--allow-writes` filter as the vault's own (a tool not marked read-only needs it).
async fn start_trusted_plugins(ctx: &Context, vault: &crate::vault::Vault) -> McpServers {
    let plan = ServerPlan::new(&ctx.config, vault, &ctx.paths.database_file());
    for problem in &plan.problems {
        tracing::warn!("vault plugins not served: {problem}");
    }
    let specs = plan.trusted_plugin_specs();
    if specs.is_empty() {
        return McpServers::empty();
    }
    let servers = McpServers::start(specs).await;
    for status in servers.statuses() {
        if let McpServerState::Failed { message } = &status.state {
            tracing::warn!(plugin = %status.name, "vault plugin did not start: {message}");
        }
    }
    servers
}
