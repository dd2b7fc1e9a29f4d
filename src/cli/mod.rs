//! The command line (docs/architecture.md): argument parsing, subcommands and exit codes. Business rules
//! live in the modules below; this one wires them together.

mod app_cmd;
mod ask_cmd;
mod commands_cmd;
mod daily_cmd;
mod doctor;
mod doctor_provider;
mod hook_notices;
mod index_cmd;
mod links_cmd;
mod logging;
mod mcp_cmd;
mod search_cmd;
mod servers;
mod sessions_cmd;
mod sessions_export;
mod tasks_cmd;
mod tools_cmd;
mod trust_cmd;
mod usage_cmd;

use crate::config::{Config, Paths};
use crate::vault::Vault;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "vaultchat",
    version,
    about = "An LLM agent beside your Markdown notes",
    long_about = "vaultchat opens a folder of Markdown notes (an Obsidian-style vault) beside a chat with an \
                  LLM agent. Every edit the agent proposes is shown as a diff and applied only when you accept it."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The vault to open (defaults to $VAULTCHAT_VAULT, then the current folder).
    #[arg(value_name = "VAULT")]
    pub vault_positional: Option<PathBuf>,
}

/// Options accepted before or after any subcommand.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// The vault folder (defaults to $VAULTCHAT_VAULT, then the current folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub vault: Option<PathBuf>,
    /// Keep every vaultchat file (config, database, index, log) under DIR.
    #[arg(long, global = true, value_name = "DIR", env = "VAULTCHAT_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Read the configuration from FILE instead of the config folder's config.toml.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The LLM provider: `anthropic` or `openai` (any OpenAI-compatible server).
    #[arg(long, global = true, value_name = "NAME")]
    pub provider: Option<String>,
    /// The model name.
    #[arg(long, global = true, value_name = "NAME")]
    pub model: Option<String>,
    /// The provider's base URL (Anthropic: without /v1; OpenAI-compatible: ending in /v1).
    #[arg(long, global = true, value_name = "URL")]
    pub base_url: Option<String>,
}

// `defer`: a subcommand's arguments are built only when that subcommand is parsed (or help is
// shown), so `vaultchat search` does not construct `ask`'s forty options on every run — start-up is
// most of a search's time (docs/decisions.md §20).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// One agent turn without the full-screen app; prints the reply as it streams.
    Ask(ask_cmd::AskArgs),
    /// List, show or delete stored sessions.
    Sessions(sessions_cmd::SessionsArgs),
    /// Token usage, cache hits and estimated cost.
    Usage(usage_cmd::UsageArgs),
    /// Build or refresh the search index of the vault.
    Index(index_cmd::IndexArgs),
    /// Search the vault's notes.
    Search(search_cmd::SearchArgs),
    /// List the vault's `- [ ]` tasks (open ones by default), those due soonest first.
    Tasks(tasks_cmd::TasksArgs),
    /// A note's links and backlinks, or the vault's unresolved links or orphans.
    Links(links_cmd::LinksArgs),
    /// List every tool with its tier, schema and annotations.
    Tools(tools_cmd::ToolsArgs),
    /// Serve the vault's tools over MCP on stdin/stdout (for Claude Desktop, IDEs, other agents).
    Mcp(mcp_cmd::McpArgs),
    /// Check the configuration, the vault, the index, the database and the provider.
    Doctor(doctor::DoctorArgs),
    /// Print the shell completion script (e.g. `vaultchat completions bash > ~/.local/share/bash-completion/completions/vaultchat`).
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Show what the vault's plugins (.vaultchat/plugins.toml) would run, and trust them.
    Trust(trust_cmd::TrustArgs),
    /// List every slash command: the chat's own, yours (commands/ in the config folder) and the
    /// vault's (.vaultchat/commands/, once trusted).
    Commands(commands_cmd::CommandsArgs),
    /// Today's daily note (as .obsidian/daily-notes.json places it): create it from its template, append a line.
    Daily(daily_cmd::DailyArgs),
}

/// An error that ends the program: printed as one line on stderr, exit code 1 — unless the reader
/// of our output went away (`vaultchat search … | head`), which ends the command quietly, as
/// `grep` and `ripgrep` do: the person asked for fewer lines, nothing failed.
#[derive(Debug)]
pub struct Failure {
    message: String,
    output_closed: bool,
}

impl Failure {
    /// A failure with this one-line message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            output_closed: false,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error + 'static> From<E> for Failure {
    fn from(e: E) -> Self {
        Self {
            message: e.to_string(),
            output_closed: is_closed_output(&e),
        }
    }
}

/// Whether `error` (or an error it wraps, e.g. inside a `serde_json::Error`) is a write to a pipe
/// whose reader has closed it.
fn is_closed_output(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        let kind = match (
            e.downcast_ref::<std::io::Error>(),
            e.downcast_ref::<serde_json::Error>(),
        ) {
            (Some(io), _) => Some(io.kind()),
            // serde_json hides the io::Error it wraps from `source()`.
            (None, Some(json)) => json.io_error_kind(),
            (None, None) => None,
        };
        if kind == Some(std::io::ErrorKind::BrokenPipe) {
            return true;
        }
        current = e.source();
    }
    false
}

/// `println!` for the commands: a failed write becomes the command's [`Failure`] instead of a
/// panic, so a closed pipe ends the command quietly.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}
pub(crate) use outln;

/// What every command needs: where files live, the configuration and the vault.
pub struct Context {
    pub paths: Paths,
    pub config: Config,
    pub config_path: PathBuf,
    pub vault_arg: PathBuf,
}

impl Context {
    fn new(global: &GlobalArgs, vault_positional: Option<&Path>) -> Result<Self, Failure> {
        let paths = Paths::resolve(global.data_dir.as_deref())?;
        let config_path = global.config.clone().unwrap_or_else(|| paths.config_file());
        // `exists` follows links; a folder or a device is named as such by `Config::load`.
        if global.config.is_some() && !config_path.exists() {
            return Err(Failure::new(format!(
                "the config file {} does not exist; create it or drop --config",
                config_path.display()
            )));
        }
        let config = Config::load(&config_path)?;
        let vault_arg = global
            .vault
            .clone()
            .or_else(|| vault_positional.map(Path::to_path_buf))
            .or_else(|| std::env::var_os("VAULTCHAT_VAULT").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(Self {
            paths,
            config,
            config_path,
            vault_arg,
        })
    }

    /// Open the vault named on the command line, with an error that says how to name another.
    pub fn vault(&self) -> Result<Vault, Failure> {
        if !self.vault_arg.is_dir() {
            return Err(Failure::new(format!(
                "the vault folder {} does not exist or is not a folder; pass --vault DIR",
                self.vault_arg.display()
            )));
        }
        Vault::open(&self.vault_arg).map_err(Failure::from)
    }
}

/// Parse the command line, run it, and turn the outcome into an exit code.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(Failure {
            output_closed: true,
            ..
        }) => ExitCode::SUCCESS,
        Err(Failure { message, .. }) => {
            // Errors quote vault paths, note names and servers' words.
            eprintln!("vaultchat: {}", crate::quote::terminal_text(&message));
            ExitCode::from(1)
        }
    }
}

/// Write the completion script for `shell` to stdout.
fn completions(shell: clap_complete::Shell) -> Result<ExitCode, Failure> {
    use clap::CommandFactory as _;
    use std::io::Write as _;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "vaultchat", &mut script);
    std::io::stdout().lock().write_all(&script)?;
    Ok(ExitCode::SUCCESS)
}

fn dispatch(cli: Cli) -> Result<ExitCode, Failure> {
    // Completions need no config, vault or log: they must work on a machine with none of them.
    if let Some(Command::Completions { shell }) = cli.command {
        return completions(shell);
    }
    let ctx = Context::new(&cli.global, cli.vault_positional.as_deref())?;
    let _log = logging::init(&ctx.paths.log_file());
    match cli.command {
        Some(Command::Ask(args)) => ask_cmd::run(&ctx, &cli.global, &args),
        Some(Command::Sessions(args)) => sessions_cmd::run(&ctx, &args),
        Some(Command::Usage(args)) => usage_cmd::run(&ctx, &args),
        Some(Command::Index(args)) => index_cmd::run(&ctx, &args),
        Some(Command::Search(args)) => search_cmd::run(&ctx, &args),
        Some(Command::Tasks(args)) => tasks_cmd::run(&ctx, &args),
        Some(Command::Links(args)) => links_cmd::run(&ctx, &args),
        Some(Command::Tools(args)) => tools_cmd::run(&ctx, &args),
        Some(Command::Mcp(args)) => mcp_cmd::run(&ctx, &args),
        Some(Command::Doctor(args)) => doctor::run(&ctx, &cli.global, &args),
        Some(Command::Completions { shell }) => completions(shell),
        Some(Command::Trust(args)) => trust_cmd::run(&ctx, &args),
        Some(Command::Commands(args)) => commands_cmd::run(&ctx, &args),
        Some(Command::Daily(args)) => daily_cmd::run(&ctx, &args),
        None => {
            if let Some(arg) = cli.vault_positional.as_deref().filter(|p| !p.is_dir()) {
                // `vaultchat typo` must not look like success.
                eprintln!(
                    "vaultchat: `{}` is neither a command nor a vault folder; see `vaultchat --help`",
                    arg.display()
                );
                return Ok(ExitCode::from(2));
            }
            app_cmd::run(&ctx, &cli.global)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        // Builds every (deferred) subcommand and checks clap's own invariants.
        Cli::command().debug_assert();
    }

    #[test]
    fn deferred_subcommands_still_list_and_parse() {
        let help = Cli::command().render_help().to_string();
        for name in [
            "ask", "sessions", "usage", "index", "search", "tools", "mcp", "doctor", "trust",
            "commands",
        ] {
            assert!(
                help.contains(name),
                "`{name}` missing from the help:\n{help}"
            );
        }
        let cli = Cli::try_parse_from(["vaultchat", "search", "two", "words", "--limit", "3"])
            .map_err(|e| e.to_string());
        match cli.map(|c| c.command) {
            Ok(Some(Command::Search(args))) => {
                assert_eq!(args.query, ["two", "words"]);
                assert_eq!(args.limit, 3);
            }
            other => panic!("search did not parse: {other:?}"),
        }
        let bad = Cli::try_parse_from(["vaultchat", "search", "x", "--limit", "0"]);
        assert!(bad.is_err(), "the limit range is still enforced");
    }
}
