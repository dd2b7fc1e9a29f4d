//! `vaultchat doctor`: check what vaultchat depends on and say what to fix.

use super::{Context, Failure};
use crate::index::Index;
use crate::mcp::McpServerState;
use crate::mcp::plugins::{ServerPlan, Trust};
use crate::store::{MIGRATIONS, Store, schema_version};
use crate::vault::walk;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print one JSON object at the end instead of a line per check: {"checks": [{"status":
    /// "ok"|"warn"|"fail", "what", "detail"}], "problems", "provider": {"kind", "base_url",
    /// "model", "context_window": {"tokens", "source"}} (when a provider is configured)}.
    #[arg(long)]
    pub json: bool,
}

/// The checks so far: printed as they come (a line each), or kept for one JSON object.
pub(super) struct Report {
    failures: usize,
    json: bool,
    checks: Vec<serde_json::Value>,
    /// The provider and its context window, for `--json`.
    pub(super) provider: Option<serde_json::Value>,
}

impl Report {
    fn check(&mut self, status: &str, what: &str, detail: impl std::fmt::Display) {
        if self.json {
            self.checks.push(serde_json::json!({
                "status": status,
                "what": what,
                "detail": detail.to_string(),
            }));
        } else {
            // Details quote server errors, plugin names and vault paths: nothing reaches the
            // terminal raw.
            let label = if status == "fail" { "FAIL" } else { status };
            println!(
                "{label:<6}{}: {}",
                crate::quote::terminal(what),
                crate::quote::terminal(&detail.to_string())
            );
        }
    }
    pub(super) fn ok(&mut self, what: &str, detail: impl std::fmt::Display) {
        self.check("ok", what, detail);
    }
    pub(super) fn warn(&mut self, what: &str, detail: impl std::fmt::Display) {
        self.check("warn", what, detail);
    }
    pub(super) fn fail(&mut self, what: &str, detail: impl std::fmt::Display) {
        self.failures += 1;
        self.check("fail", what, detail);
    }
}

/// The tools of the MCP servers that started, by server: what a `SERVER__tool` rule can be
/// checked against.
type RunningTools = Vec<(String, Vec<String>)>;

/// Start each configured MCP server, report it, and close it again.
fn check_mcp_servers(
    ctx: &Context,
    vault: Option<&crate::vault::Vault>,
    report: &mut Report,
) -> Result<RunningTools, Failure> {
    let Some(vault) = vault else {
        if !ctx.config.mcp.servers.is_empty() {
            report.warn(
                "mcp servers",
                "not started: there is no vault for ${VAULT_PATH}",
            );
        }
        return Ok(Vec::new());
    };
    // The person's servers, and the vault's plugins (listed, and started only when trusted).
    let plan = ServerPlan::new(&ctx.config, vault, &ctx.paths.database_file());
    for problem in &plan.problems {
        report.fail("vault plugins", problem);
    }
    if let Some(plugins) = &plan.plugins {
        let trust = match plan.trust {
            Some(Trust::Trusted) => "trusted",
            _ => "not trusted",
        };
        report.ok(
            "vault plugins",
            format!("{} ({trust})", plugins.file.display()),
        );
        if !plan.changes.is_empty() {
            report.warn(
                "vault plugins",
                format!(
                    "not trusted since these changed after you trusted them: {}; `vaultchat trust` shows what the plugins would run now",
                    crate::mcp::plugins::covered::describe(&plan.changes)
                ),
            );
        }
    }
    let renders = plan.renders();
    let started = super::servers::with_started(plan.specs, |servers| {
        let tools: Vec<String> = servers
            .tools()
            .iter()
            .map(|t| t.spec().name.clone())
            .collect();
        (servers.statuses().to_vec(), tools)
    })?;
    let Some((statuses, tools)) = started else {
        return Ok(Vec::new());
    };
    let mut running = Vec::new();
    for status in statuses {
        let what = format!("mcp server {}", status.name);
        match status.state {
            McpServerState::Running { tools: count } => {
                report.ok(
                    &what,
                    format!("started, {count} tool{}", if count == 1 { "" } else { "s" }),
                );
                let prefix = format!("{}__", status.name);
                let own = tools.iter().filter(|t| t.starts_with(&prefix)).cloned();
                running.push((status.name.clone(), own.collect()));
            }
            McpServerState::Disabled => report.ok(&what, "disabled (enabled = false)"),
            McpServerState::NotTrusted => report.warn(
                &what,
                "not trusted (a vault plugin in .vaultchat/plugins.toml), not started: `vaultchat trust` lists what it runs and allows it",
            ),
            McpServerState::Failed { message } => report.fail(&what, message),
            McpServerState::Starting => report.warn(&what, "still starting"),
        }
    }
    // A `render` entry of a running plugin that names none of its tools (a typo) draws nothing.
    for name in renders.keys() {
        let of_running = running
            .iter()
            .any(|(server, _)| name.starts_with(&format!("{server}__")));
        if of_running && !tools.contains(name) {
            report.warn(
                "vault plugins",
                format!("`render` for `{name}` names no tool the plugin listed; its results show as text"),
            );
        }
    }
    Ok(running)
}

/// The person's hooks, and whether the vault's `.vaultchat/hooks.toml` is run (an untrusted or
/// invalid one is a warning: it is never run).
fn check_hooks(ctx: &Context, vault: &crate::vault::Vault, report: &mut Report) {
    let counted = |hooks: &crate::config::hooks::HooksConfig| {
        hooks
            .by_event()
            .iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(event, list)| format!("{} {event}", list.len()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !ctx.config.hooks.is_empty() {
        report.ok(
            "hooks",
            format!(
                "yours: {} (config.toml [hooks])",
                counted(&ctx.config.hooks)
            ),
        );
    }
    let vault_hooks = crate::hooks::vault_hooks(vault, &ctx.paths.database_file());
    match (&vault_hooks.withheld, vault_hooks.hooks.is_empty()) {
        (Some(why), _) => report.warn("hooks", why),
        (None, false) => report.ok(
            "hooks",
            format!(
                "the vault's: {} ({}, trusted)",
                counted(&vault_hooks.hooks),
                crate::mcp::plugins::HOOKS_FILE
            ),
        ),
        (None, true) => {}
    }
}

/// The `[permissions]` rules: each must name an existing tool (a misspelt one would deny or
/// allow nothing). Rules for a server's tools (`SERVER__tool`) are checked against the tools the
/// server listed, when it started.
fn check_permissions(ctx: &Context, running: &RunningTools, report: &mut Report) {
    let rules = match crate::agent::config_rules(&ctx.config) {
        Ok(rules) => rules,
        Err(problems) => {
            for problem in problems {
                report.fail("permissions", problem);
            }
            return;
        }
    };
    let mut bad = 0;
    for rule in &rules {
        let Some((server, tools)) = running
            .iter()
            .find(|(server, _)| rule.tool.starts_with(&format!("{server}__")))
        else {
            continue;
        };
        if tools.contains(&rule.tool) {
            continue;
        }
        bad += 1;
        let suggestion =
            crate::permission::known::closest(&rule.tool, tools.iter().map(String::as_str))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
        report.fail(
            "permissions",
            format!(
                "[permissions] `{}`: the MCP server `{server}` has no tool `{}`{suggestion} (`vaultchat tools` lists them)",
                rule.spec(),
                rule.tool
            ),
        );
    }
    if bad == 0 {
        let n = rules.len();
        report.ok(
            "permissions",
            format!(
                "{n} config rule{}, none naming a missing tool",
                if n == 1 { "" } else { "s" }
            ),
        );
    }
}

/// Notes that are indexed, but not as written: text that is not UTF-8 (indexed with replacement
/// characters, and refused for editing) and frontmatter that is never closed (its title, tags and
/// aliases are read as body text). Reads every note once.
fn check_note_contents(vault: &crate::vault::Vault, notes: &[walk::NoteStat], report: &mut Report) {
    let mut not_utf8 = Vec::new();
    let mut broken_frontmatter = Vec::new();
    for note in notes {
        let Ok(bytes) = vault.handle().read(&note.rel) else {
            continue;
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            not_utf8.push(note.rel.as_str());
            continue;
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let opens_frontmatter = text.starts_with("---\n") || text.starts_with("---\r\n");
        if opens_frontmatter && crate::vault::markdown::parse(text).frontmatter.is_none() {
            broken_frontmatter.push(note.rel.as_str());
        }
    }
    let list = |paths: &[&str]| {
        let shown: Vec<&str> = paths.iter().take(5).copied().collect();
        let more = paths.len().saturating_sub(shown.len());
        if more > 0 {
            format!("{} (and {more} more)", shown.join(", "))
        } else {
            shown.join(", ")
        }
    };
    if !not_utf8.is_empty() {
        report.warn(
            "notes",
            format!(
                "{} not UTF-8 (searchable with replacement characters, not editable): {}",
                not_utf8.len(),
                list(&not_utf8)
            ),
        );
    }
    if !broken_frontmatter.is_empty() {
        report.warn(
            "notes",
            format!(
                "{} whose frontmatter is never closed (no second `---` line, so its title, tags and aliases are read as text): {}",
                broken_frontmatter.len(),
                list(&broken_frontmatter)
            ),
        );
    }
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

/// The vault: its notes and folders, the names the walk skipped, and notes not read as written.
fn check_vault(ctx: &Context, report: &mut Report) -> Option<crate::vault::Vault> {
    match ctx.vault() {
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
            if walked.problems.len() > 5 {
                report.warn(
                    "vault",
                    format!(
                        "… and {} more names or folders skipped",
                        walked.problems.len() - 5
                    ),
                );
            }
            check_note_contents(&vault, &walked.notes, report);
            Some(vault)
        }
        Err(failure) => {
            report.fail("vault", failure.to_string());
            None
        }
    }
}

pub fn run(
    ctx: &Context,
    global: &super::GlobalArgs,
    args: &DoctorArgs,
) -> Result<ExitCode, Failure> {
    let mut report = Report {
        failures: 0,
        json: args.json,
        checks: Vec::new(),
        provider: None,
    };
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

    let vault = check_vault(ctx, &mut report);

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
    if let Some(vault) = &vault {
        check_hooks(ctx, vault, &mut report);
    }
    let running = check_mcp_servers(ctx, vault.as_ref(), &mut report)?;
    check_permissions(ctx, &running, &mut report);
    super::doctor_provider::check_provider(ctx, global, &mut report)?;

    if report.json {
        let mut out = serde_json::json!({
            "checks": report.checks,
            "problems": report.failures,
        });
        if let Some(provider) = report.provider.take() {
            out["provider"] = provider;
        }
        println!("{out}");
    } else if report.failures > 0 {
        println!("{} problem(s) found", report.failures);
    }
    if report.failures > 0 {
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}
