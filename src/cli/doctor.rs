//! `vaultchat doctor`: check what vaultchat depends on and say what to fix.

use super::{Context, Failure};
use crate::index::Index;
use crate::mcp::{McpServerSpec, McpServerState, McpServers};
use crate::store::{MIGRATIONS, Store, schema_version};
use crate::vault::walk;
use std::process::ExitCode;

struct Report {
    failures: usize,
}

impl Report {
    fn ok(&self, what: &str, detail: impl std::fmt::Display) {
        println!("ok    {what}: {detail}");
    }
    fn warn(&self, what: &str, detail: impl std::fmt::Display) {
        println!("warn  {what}: {detail}");
    }
    fn fail(&mut self, what: &str, detail: impl std::fmt::Display) {
        self.failures += 1;
        println!("FAIL  {what}: {detail}");
    }
}

/// Start each configured MCP server, report it, and close it again.
fn check_mcp_servers(
    ctx: &Context,
    vault: Option<&crate::vault::Vault>,
    report: &mut Report,
) -> Result<(), Failure> {
    if ctx.config.mcp.servers.is_empty() {
        return Ok(());
    }
    let Some(vault) = vault else {
        report.warn(
            "mcp servers",
            "not started: there is no vault for ${VAULT_PATH}",
        );
        return Ok(());
    };
    let specs = McpServerSpec::from_user_config(&ctx.config, vault.root());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let statuses = runtime.block_on(async {
        let servers = McpServers::start(specs).await;
        let statuses = servers.statuses().to_vec();
        servers.shutdown().await;
        statuses
    });
    for status in statuses {
        let what = format!("mcp server {}", status.name);
        match status.state {
            McpServerState::Running { tools } => report.ok(
                &what,
                format!("started, {tools} tool{}", if tools == 1 { "" } else { "s" }),
            ),
            McpServerState::Disabled => report.ok(&what, "disabled (enabled = false)"),
            McpServerState::Failed { message } => report.fail(&what, message),
            McpServerState::Starting => report.warn(&what, "still starting"),
        }
    }
    Ok(())
}

/// The size of the vault's note history, and temp files a crashed write left behind.
fn check_history_and_temps(ctx: &Context, vault: &crate::vault::Vault, report: &mut Report) {
    let db = ctx.paths.database_file();
    let file_mb = std::fs::metadata(&db).map_or(0.0, |m| m.len() as f64 / 1_048_576.0);
    match Store::open(&db).and_then(|store| store.history_size(&crate::index::vault_id(vault))) {
        Ok(size) => report.ok(
            "history",
            format!(
                "{} revisions, {:.1} MB stored (keeps {} days, at most {} MB); database file {file_mb:.1} MB",
                size.revisions,
                size.bytes as f64 / 1_048_576.0,
                ctx.config.history.keep_days,
                ctx.config.history.max_mb
            ),
        ),
        Err(e) => report.fail("history", e),
    }
    let stale = vault
        .resolve("", crate::vault::Access::Read)
        .map_err(|e| std::io::Error::other(e.to_string()))
        .and_then(|root| {
            crate::vault::note_io::stale_temps(
                &root,
                crate::tools::workspace::STALE_TEMP_AGE,
                false,
            )
        });
    match stale {
        Ok(stale) if stale.is_empty() => {}
        Ok(stale) => report.warn(
            "temp files",
            format!(
                "{} left by an interrupted write (removed when the vault is next opened): {}",
                stale.len(),
                stale.join(", ")
            ),
        ),
        Err(e) => report.warn("temp files", e),
    }
}

pub fn run(ctx: &Context) -> Result<ExitCode, Failure> {
    let mut report = Report { failures: 0 };
    // The context only exists if the config loaded; say so explicitly.
    if ctx.config_path.is_file() {
        report.ok("config", format!("{} is valid", ctx.config_path.display()));
    } else {
        report.ok(
            "config",
            format!(
                "no file at {}; using the defaults",
                ctx.config_path.display()
            ),
        );
    }

    let vault = match ctx.vault() {
        Ok(vault) => {
            let walked = walk::walk(
                vault.root(),
                &walk::WalkOptions {
                    exclude_folders: ctx.config.index.exclude_folders.clone(),
                },
            );
            report.ok(
                "vault",
                format!(
                    "{} — {} notes in {} folders",
                    vault.root().display(),
                    walked.notes.len(),
                    walked.folders.len()
                ),
            );
            for problem in walked.problems.iter().take(5) {
                report.warn("vault", format!("{}: {}", problem.rel, problem.message));
            }
            Some(vault)
        }
        Err(Failure(message)) => {
            report.fail("vault", message);
            None
        }
    };

    if let Some(vault) = &vault {
        match Index::open(&ctx.paths.index_dir, vault, &ctx.config.index) {
            Ok(mut index) => {
                let status = index.status()?;
                match (status.last_sync_unix, index.staleness()) {
                    (None, _) => report.warn(
                        "index",
                        "not built yet; run `vaultchat index` (searches build it on first use)",
                    ),
                    (Some(_), Ok(s)) if s.new + s.changed + s.missing == 0 => report.ok(
                        "index",
                        format!("{} notes, up to date ({})", s.indexed, status.db_path.display()),
                    ),
                    (Some(_), Ok(s)) => report.warn(
                        "index",
                        format!(
                            "{} notes indexed; {} new, {} changed, {} deleted since — run `vaultchat index`",
                            s.indexed, s.new, s.changed, s.missing
                        ),
                    ),
                    (Some(_), Err(e)) => report.fail("index", e),
                }
                if let Err(e) = index.integrity_check() {
                    report.fail("index", format!("{e}; run `vaultchat index --rebuild`"));
                }
            }
            Err(e) => report.fail("index", e),
        }
    }

    let db = ctx.paths.database_file();
    match Store::open(&db) {
        Ok(store) => {
            let version = schema_version(store.connection())?;
            report.ok(
                "database",
                format!(
                    "{} (schema {version} of {})",
                    db.display(),
                    MIGRATIONS.len()
                ),
            );
        }
        Err(e) => report.fail("database", e),
    }
    if let Some(vault) = &vault {
        check_history_and_temps(ctx, vault, &mut report);
    }
    report.ok("log", ctx.paths.log_file().display());
    check_mcp_servers(ctx, vault.as_ref(), &mut report)?;

    if report.failures > 0 {
        println!("{} problem(s) found", report.failures);
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}
