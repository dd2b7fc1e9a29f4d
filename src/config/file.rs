//! `config.toml`: typed settings and validation.
//!
//! Unknown keys are errors, not silently ignored: a typo such as `modle = "…"` would otherwise
//! leave the person wondering why their setting has no effect. Every error names the file, the
//! line, the full key and what to write instead.

use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {source}")]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the config file {path} is {what}, not a file: point --config at a config.toml")]
    NotAFile { path: PathBuf, what: &'static str },
    #[error(
        "the config file {path} is {size} bytes, more than the {limit} bytes a config file may have: point --config at a config.toml"
    )]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    #[error("{path}:{line}: key `{key}`: {problem}\n  fix: {hint}")]
    Invalid {
        path: PathBuf,
        line: usize,
        key: String,
        problem: String,
        hint: String,
    },
}

/// The whole user configuration. Every section is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub provider: ProviderConfig,
    #[serde(default)]
    pub index: IndexConfig,
    pub embeddings: Option<EmbeddingsConfig>,
    #[serde(default)]
    pub permissions: PermissionsConfig,
    #[serde(default)]
    pub ui: UiConfig,
    #[serde(default)]
    pub editor: EditorConfig,
    /// `[prices.MODEL]`: what a model costs, for the cost estimates (over the built-in list
    /// prices, `config::prices`).
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, Price>,
    /// `[mcp.servers.NAME]`: the person's own MCP servers, whose tools the chat may call.
    #[serde(default)]
    pub mcp: McpConfig,
    /// `[history]`: how long the note revision log keeps what it records.
    #[serde(default)]
    pub history: HistoryConfig,
    /// `[privacy]`: where notes may be sent.
    #[serde(default)]
    pub privacy: PrivacyConfig,
    /// `[context]`: when a long session is compacted.
    #[serde(default)]
    pub context: ContextConfig,
    /// `[attachments]`: the files `ask --image`, a paste and a drop may attach.
    #[serde(default)]
    pub attachments: AttachmentsConfig,
    /// `[hooks]`: the person's commands run after approved writes, turns and sessions.
    #[serde(default)]
    pub hooks: super::hooks::HooksConfig,
}

/// `[attachments]`: how large a file may be to be attached (an image is then checked and scaled
/// to what the providers take; docs/configuration.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttachmentsConfig {
    /// The largest file read as an attachment, in MB (1 to 1024); a larger one is refused before
    /// it is read.
    #[serde(default = "default_attachment_max_file_mb")]
    pub max_file_mb: u64,
}

/// The most `attachments.max_file_mb` may be.
pub const MAX_ATTACHMENT_FILE_MB: u64 = 1024;

fn default_attachment_max_file_mb() -> u64 {
    32
}

impl Default for AttachmentsConfig {
    fn default() -> Self {
        Self {
            max_file_mb: default_attachment_max_file_mb(),
        }
    }
}

impl AttachmentsConfig {
    /// The limit in bytes.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_mb.saturating_mul(1024 * 1024)
    }
}

/// `[privacy]`: where the text of notes may go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivacyConfig {
    /// Only providers (and embedding servers) on this machine or a private network are used; a
    /// remote base URL is refused before any byte is sent.
    #[serde(default)]
    pub local_only: bool,
}

/// `[context]`: long sessions. Before a request would fill more than `compact_threshold` of the
/// model's context window, the older part of the conversation is compacted (docs/architecture.md,
/// "Long sessions").
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// The share of the context window (0.1 to 0.95) a request may fill before the conversation
    /// is compacted.
    #[serde(default = "default_compact_threshold")]
    pub compact_threshold: f64,
    /// Compact on its own before the threshold is passed; `false` leaves it to `/compact` and to
    /// the provider's context-overflow error.
    #[serde(default = "default_auto_compact")]
    pub auto_compact: bool,
}

fn default_compact_threshold() -> f64 {
    0.8
}

fn default_auto_compact() -> bool {
    true
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            compact_threshold: default_compact_threshold(),
            auto_compact: default_auto_compact(),
        }
    }
}

/// `[history]`: the revision log behind /rewind and block history. Revisions are stored as deltas;
/// these bound what is kept per vault.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryConfig {
    /// Revisions older than this many days are dropped.
    #[serde(default = "default_history_keep_days")]
    pub keep_days: u32,
    /// The most history (stored text, in MB) kept per vault; the oldest revisions go first.
    #[serde(default = "default_history_max_mb")]
    pub max_mb: u64,
}

fn default_history_keep_days() -> u32 {
    90
}

fn default_history_max_mb() -> u64 {
    50
}

impl Default for HistoryConfig {
    fn default() -> Self {
        Self {
            keep_days: default_history_keep_days(),
            max_mb: default_history_max_mb(),
        }
    }
}

/// `[mcp]`: MCP servers vaultchat starts for the chat (never re-exported by `vaultchat mcp`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// By name; the name prefixes each of the server's tools (`NAME__tool`).
    #[serde(default)]
    pub servers: std::collections::BTreeMap<String, McpServerConfig>,
}

/// `[mcp.servers.NAME]`: one MCP server spoken to over stdio. `${VAULT_PATH}` in `command`,
/// `args`, `env` values and `cwd` stands for the vault's absolute path (see
/// [`McpServerConfig::expanded`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program to run (found on `PATH` unless it has a `/`).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to the environment vaultchat runs in.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// The working folder of the server; vaultchat's own when absent.
    pub cwd: Option<String>,
    /// `false` keeps the server configured but not started.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Seconds one tool call may take before it is cancelled.
    #[serde(default = "default_mcp_timeout_secs")]
    pub timeout_secs: u64,
    /// Seconds the server may take to start and list its tools.
    #[serde(default = "default_mcp_startup_timeout_secs")]
    pub startup_timeout_secs: u64,
}

fn default_true() -> bool {
    true
}

fn default_mcp_timeout_secs() -> u64 {
    60
}

fn default_mcp_startup_timeout_secs() -> u64 {
    20
}

/// The one variable `[mcp.servers.NAME]` values may name.
pub const VAULT_PATH_VARIABLE: &str = "VAULT_PATH";

impl McpServerConfig {
    /// A server with only a command and the defaults (for tests and programmatic setups).
    pub fn with_command(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: Default::default(),
            cwd: None,
            enabled: true,
            timeout_secs: default_mcp_timeout_secs(),
            startup_timeout_secs: default_mcp_startup_timeout_secs(),
        }
    }

    /// The same server with `${VAULT_PATH}` replaced by `vault_root` in the command, the
    /// arguments, the environment values and the working folder. The config was validated when
    /// it loaded, so no other `${…}` is left to meet here.
    pub fn expanded(&self, vault_root: &Path) -> Self {
        let root = vault_root.to_string_lossy();
        let expand = |value: &str| value.replace(&format!("${{{VAULT_PATH_VARIABLE}}}"), &root);
        Self {
            command: expand(&self.command),
            args: self.args.iter().map(|a| expand(a)).collect(),
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), expand(v)))
                .collect(),
            cwd: self.cwd.as_deref().map(expand),
            ..self.clone()
        }
    }
}

/// Whether `name` may name an MCP server: 1–32 of `[A-Za-z0-9_-]`, so that `NAME__tool` stays a
/// valid tool name for every provider.
pub fn is_mcp_server_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What is wrong with the server `name` (its name, command, timeouts, environment or `${…}`
/// variables): the field at fault (`None`: the name itself) and one sentence. Shared by
/// `[mcp.servers.NAME]` and a vault's `[plugins.NAME]`, which take the same keys.
pub fn mcp_server_problem(
    name: &str,
    server: &McpServerConfig,
) -> Option<(Option<&'static str>, String)> {
    if !is_mcp_server_name(name) {
        return Some((
            None,
            format!(
                "`{name}` is not a server name: use 1 to 32 letters, digits, `_` or `-` (it prefixes the tools as `{name}__tool`)"
            ),
        ));
    }
    if server.command.trim().is_empty() {
        return Some((
            Some("command"),
            "the command is empty; name the program that runs the server".to_string(),
        ));
    }
    for (field, secs) in [
        ("timeout_secs", server.timeout_secs),
        ("startup_timeout_secs", server.startup_timeout_secs),
    ] {
        if secs == 0 {
            return Some((
                Some(field),
                "0 seconds would fail every time; use at least 1".to_string(),
            ));
        }
    }
    if let Some(var) = server
        .env
        .keys()
        .find(|var| var.is_empty() || var.contains(['=', '\0']))
    {
        return Some((
            Some("env"),
            format!("`{var}` is not an environment variable name"),
        ));
    }
    let values = std::iter::once(("command", server.command.as_str()))
        .chain(server.args.iter().map(|a| ("args", a.as_str())))
        .chain(server.env.values().map(|v| ("env", v.as_str())))
        .chain(server.cwd.as_deref().map(|c| ("cwd", c)));
    for (field, value) in values {
        if let Err(problem) = check_variables(value) {
            return Some((Some(field), problem));
        }
    }
    None
}

/// The first `${…}` in `value` that is not `${VAULT_PATH}` (`Err` with what was written), or an
/// unclosed `${`.
fn check_variables(value: &str) -> Result<(), String> {
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!(
                "`{value}` has a `${{` without its closing `}}`; write `${{{VAULT_PATH_VARIABLE}}}`"
            ));
        };
        let name = &after[..end];
        if name != VAULT_PATH_VARIABLE {
            return Err(format!(
                "`${{{name}}}` is not a variable vaultchat knows; the only one is `${{{VAULT_PATH_VARIABLE}}}` (the vault's absolute path). A server that needs an environment variable reads its own environment, or set it under `env`"
            ));
        }
        rest = &after[end + 1..];
    }
    Ok(())
}

/// `[permissions]`: rules that hold in every vault, as `"tool"` or `"tool:glob"` (`*` for every
/// tool), e.g. `deny = ["*:Private/**"]`, `allow = ["update_note:Inbox/**"]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: Option<f64>,
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// The cost in dollars of these token counts. Without explicit cache prices, Anthropic's
    /// ratios: reads 0.1×, writes 1.25× the input price.
    pub fn cost(&self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
        let read = self.cache_read.unwrap_or(self.input * 0.1);
        let write = self.cache_write.unwrap_or(self.input * 1.25);
        (input as f64 * self.input
            + output as f64 * self.output
            + cache_read as f64 * read
            + cache_write as f64 * write)
            / 1_000_000.0
    }
}

/// Which wire format a provider speaks (the one provider kind: `llm` re-exports it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum ProviderKind {
    /// Anthropic Messages API.
    #[default]
    #[serde(rename = "anthropic")]
    Anthropic,
    /// OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter).
    #[serde(rename = "openai")]
    OpenAi,
}

impl ProviderKind {
    /// The name in the config, on the command line, and in the usage rows.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }
}

/// `[provider]`: which LLM to talk to. Command-line flags override these.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    #[serde(default)]
    pub kind: ProviderKind,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    /// The most tokens one response may have.
    pub max_tokens: Option<u32>,
    /// The most model responses in one turn (each tool round trip is one).
    pub max_steps: Option<u32>,
    /// Seconds without a byte from the provider before a request is abandoned.
    pub idle_timeout_secs: Option<u64>,
    /// Seconds to wait for a connection to the provider.
    pub connect_timeout_secs: Option<u64>,
    /// Retries after a rate limit, an overload or a dropped connection (before any output).
    pub max_retries: Option<u32>,
    /// The context window in tokens of every model without its own entry in `context_windows`;
    /// beats what the server says and the built-in table (the status bar's context %, and the
    /// agent's measure of a full context).
    pub context_window: Option<u64>,
    /// Anthropic extended thinking: tokens the model may think in before it answers (at least
    /// 1024); 0 or absent is off. Its thinking is shown collapsed in the transcript.
    pub thinking_budget: Option<u32>,
    /// `[provider.context_windows]`: the window of one model, by its name (`"llama3.2" = 8192`);
    /// beats `context_window`.
    #[serde(default)]
    pub context_windows: std::collections::BTreeMap<String, u64>,
    /// Whether the model is sent the tools: `auto` (unless its server says the model's chat
    /// template takes none: llama.cpp's `/props`, Ollama's `/api/show` capabilities), `always`,
    /// `never`.
    #[serde(default)]
    pub tools: ToolsMode,
    /// Which tools are sent: `auto` (the core set with short descriptions when all of them would
    /// take more than a quarter of the context window), `full`, `core`.
    #[serde(default)]
    pub tool_set: ToolSetMode,
}

/// `[provider] tools`: whether the model is sent tools at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolsMode {
    /// Unless the server says the model cannot take them.
    #[default]
    Auto,
    Always,
    Never,
}

/// `[provider] tool_set`: every tool, or the core set for small windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSetMode {
    /// The core set when the full one would fill more than a quarter of the window.
    #[default]
    Auto,
    Full,
    Core,
}

/// `[ui]`: how the full-screen app looks and which keys it uses.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
    /// `dark`, `light`, `high-contrast`, or the name of a theme file in the config folder's themes/.
    pub theme: Option<String>,
    /// `default` or `vim`; the config folder's keymap.toml patches it.
    pub keymap: Option<String>,
    /// The file pane at start-up: `auto` (on the start screen, and beside a note from 140
    /// columns), `show` or `hide`. Its key (Alt+B or F4) changes it while the app runs.
    pub file_pane: Option<FilePaneMode>,
}

/// `[ui] file_pane`: when the file pane is on screen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FilePaneMode {
    #[default]
    Auto,
    Show,
    Hide,
}

/// `[editor]`: how the app's editor keeps the open note on disk.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditorConfig {
    /// Write the open note by itself: shortly after typing stops, and before leaving it. Off,
    /// leaving a note with unsaved changes asks (save / discard / cancel).
    #[serde(default = "default_true")]
    pub autosave: bool,
    /// Milliseconds after the last change before the autosave writes the note.
    #[serde(default = "default_autosave_delay_ms")]
    pub autosave_delay_ms: u64,
}

fn default_autosave_delay_ms() -> u64 {
    1000
}

impl Default for EditorConfig {
    fn default() -> Self {
        Self {
            autosave: true,
            autosave_delay_ms: default_autosave_delay_ms(),
        }
    }
}

/// `[index]`: what the search index covers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexConfig {
    /// Vault-relative folders whose notes are not indexed (dot-folders never are).
    #[serde(default)]
    pub exclude_folders: Vec<String>,
    /// Milliseconds the watcher waits for a burst of file events to settle.
    #[serde(default = "default_debounce_ms")]
    pub debounce_ms: u64,
    /// Above this many folders the watcher gives up on per-folder watches and reconciles by a
    /// periodic stat pass instead (inotify watches are a limited kernel resource).
    #[serde(default = "default_max_watched_folders")]
    pub max_watched_folders: usize,
}

fn default_debounce_ms() -> u64 {
    50
}

fn default_max_watched_folders() -> usize {
    8192
}

impl Default for IndexConfig {
    fn default() -> Self {
        Self {
            exclude_folders: Vec::new(),
            debounce_ms: default_debounce_ms(),
            max_watched_folders: default_max_watched_folders(),
        }
    }
}

/// `[embeddings]`: an OpenAI-compatible `/v1/embeddings` endpoint for semantic search.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsConfig {
    pub base_url: String,
    pub model: String,
    pub api_key_env: Option<String>,
}

/// The smallest extended-thinking budget Anthropic accepts.
const MIN_THINKING_BUDGET: u32 = 1024;

/// An example line for each known key, shown when that key is wrong.
const KEY_HINTS: &[(&str, &str)] = &[
    (
        "hooks",
        "[[hooks.after_write]]   # or after_turn, session_start, session_end\ncommand = \"git add -A && git commit -q -m \\\"vaultchat: $*\\\"\"",
    ),
    (
        "hooks.after_write.command",
        "command = \"git add -A && git commit -q -m \\\"vaultchat: $*\\\"\"   # or [\"program\", \"arg\"]",
    ),
    ("hooks.after_write.timeout_secs", "timeout_secs = 10"),
    ("hooks.after_turn.command", "command = [\"scripts/sync\"]"),
    ("hooks.after_turn.timeout_secs", "timeout_secs = 10"),
    (
        "hooks.session_start.command",
        "command = [\"scripts/pull\"]",
    ),
    ("hooks.session_start.timeout_secs", "timeout_secs = 10"),
    ("hooks.session_end.command", "command = [\"scripts/push\"]"),
    ("hooks.session_end.timeout_secs", "timeout_secs = 10"),
    (
        "hooks.after_write",
        "[[hooks.after_write]]\ncommand = \"git add -A\"",
    ),
    (
        "hooks.after_turn",
        "[[hooks.after_turn]]\ncommand = [\"scripts/sync\"]",
    ),
    (
        "hooks.session_start",
        "[[hooks.session_start]]\ncommand = [\"scripts/pull\"]",
    ),
    (
        "hooks.session_end",
        "[[hooks.session_end]]\ncommand = [\"scripts/push\"]",
    ),
    ("provider", "[provider]\nkind = \"anthropic\""),
    (
        "provider.kind",
        "kind = \"anthropic\"   # or \"openai\" for any OpenAI-compatible server",
    ),
    ("provider.model", "model = \"claude-sonnet-4-5\""),
    (
        "provider.base_url",
        "base_url = \"http://localhost:11434/v1\"",
    ),
    (
        "provider.api_key_env",
        "api_key_env = \"ANTHROPIC_API_KEY\"",
    ),
    ("provider.max_tokens", "max_tokens = 4096"),
    ("provider.max_steps", "max_steps = 8"),
    ("provider.idle_timeout_secs", "idle_timeout_secs = 120"),
    ("provider.connect_timeout_secs", "connect_timeout_secs = 5"),
    ("provider.max_retries", "max_retries = 2"),
    ("provider.context_window", "context_window = 200000"),
    (
        "provider.thinking_budget",
        "thinking_budget = 4096   # Anthropic extended thinking; 0 is off",
    ),
    (
        "provider.context_windows",
        "[provider.context_windows]\n\"llama3.2\" = 8192   # tokens, by model name",
    ),
    (
        "provider.tools",
        "tools = \"auto\"   # or \"always\", \"never\"",
    ),
    (
        "provider.tool_set",
        "tool_set = \"auto\"   # or \"full\", \"core\"",
    ),
    ("ui", "[ui]\ntheme = \"dark\"\nkeymap = \"default\""),
    (
        "ui.theme",
        "theme = \"dark\"   # or \"light\", \"high-contrast\", or a file in themes/",
    ),
    ("ui.keymap", "keymap = \"default\"   # or \"vim\""),
    (
        "ui.file_pane",
        "file_pane = \"auto\"   # or \"show\", \"hide\"",
    ),
    (
        "editor",
        "[editor]\nautosave = true\nautosave_delay_ms = 1000",
    ),
    (
        "editor.autosave",
        "autosave = true   # false: leaving a note with unsaved changes asks",
    ),
    (
        "editor.autosave_delay_ms",
        "autosave_delay_ms = 1000   # 100 to 60000",
    ),
    (
        "permissions",
        "[permissions]\ndeny = [\"*:Private/**\"]\nallow = [\"update_note:Inbox/**\"]",
    ),
    ("permissions.allow", "allow = [\"update_note:Inbox/**\"]"),
    ("permissions.deny", "deny = [\"*:Private/**\"]"),
    (
        "prices",
        "[prices.\"claude-sonnet-4-5\"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\ncache_write = 3.75",
    ),
    ("index", "[index]\nexclude_folders = [\"Templates\"]"),
    ("history", "[history]\nkeep_days = 90\nmax_mb = 50"),
    ("privacy", "[privacy]\nlocal_only = true"),
    (
        "privacy.local_only",
        "local_only = true   # only servers on this machine or a private network",
    ),
    ("history.keep_days", "keep_days = 90"),
    ("history.max_mb", "max_mb = 50"),
    (
        "context",
        "[context]\ncompact_threshold = 0.8\nauto_compact = true",
    ),
    (
        "context.compact_threshold",
        "compact_threshold = 0.8   # compact before a request fills 80% of the window",
    ),
    ("attachments", "[attachments]\nmax_file_mb = 32"),
    (
        "attachments.max_file_mb",
        "max_file_mb = 32   # 1 to 1024: larger files are refused before they are read",
    ),
    (
        "context.auto_compact",
        "auto_compact = true   # false: only /compact and overflow errors compact",
    ),
    (
        "index.exclude_folders",
        "exclude_folders = [\"Templates\", \"Archive/old\"]",
    ),
    ("index.debounce_ms", "debounce_ms = 50"),
    ("index.max_watched_folders", "max_watched_folders = 8192"),
    (
        "embeddings",
        "[embeddings]\nbase_url = \"http://localhost:11434/v1\"\nmodel = \"nomic-embed-text\"",
    ),
    (
        "embeddings.base_url",
        "base_url = \"http://localhost:11434/v1\"",
    ),
    ("embeddings.model", "model = \"nomic-embed-text\""),
    ("embeddings.api_key_env", "api_key_env = \"OPENAI_API_KEY\""),
    (
        "mcp",
        "[mcp.servers.files]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"${VAULT_PATH}\"]",
    ),
    (
        "mcp.servers",
        "[mcp.servers.files]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"${VAULT_PATH}\"]",
    ),
    (
        "mcp.servers.NAME",
        "[mcp.servers.files]   # 1-32 letters, digits, _ or -\ncommand = \"npx\"",
    ),
    (
        "mcp.servers.NAME.command",
        "command = \"npx\"   # the program; ${VAULT_PATH} is the vault's absolute path",
    ),
    (
        "mcp.servers.NAME.args",
        "args = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"${VAULT_PATH}\"]",
    ),
    (
        "mcp.servers.NAME.env",
        "env = { LOG_LEVEL = \"info\", NOTES = \"${VAULT_PATH}\" }   # strings only",
    ),
    ("mcp.servers.NAME.cwd", "cwd = \"${VAULT_PATH}\""),
    (
        "mcp.servers.NAME.enabled",
        "enabled = false   # keep it configured but do not start it",
    ),
    (
        "mcp.servers.NAME.timeout_secs",
        "timeout_secs = 60   # per tool call",
    ),
    (
        "mcp.servers.NAME.startup_timeout_secs",
        "startup_timeout_secs = 20",
    ),
];

/// The key under which [`KEY_HINTS`] keeps the hint for `key`: a server's name becomes `NAME`
/// (`mcp.servers.files.args` → `mcp.servers.NAME.args`), and the variables of its `env` table
/// fall under `env`.
fn hint_key(key: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    match parts.as_slice() {
        ["mcp", "servers", _] => "mcp.servers.NAME".to_string(),
        ["provider", "context_windows", ..] => "provider.context_windows".to_string(),
        ["mcp", "servers", _, field, ..] => format!("mcp.servers.NAME.{field}"),
        _ => key.to_string(),
    }
}

/// The largest config file vaultchat reads. Real ones are a few kilobytes.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Refuses anything but a regular file, naming what it is instead.
fn check_config_file_type(path: &Path, meta: &std::fs::Metadata) -> Result<(), ConfigError> {
    use std::os::unix::fs::FileTypeExt;
    let file_type = meta.file_type();
    let what = if file_type.is_file() {
        return Ok(());
    } else if file_type.is_dir() {
        "a folder"
    } else if file_type.is_char_device() {
        "a character device (like /dev/null or /dev/zero)"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_fifo() {
        "a named pipe"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(ConfigError::NotAFile {
        path: path.to_path_buf(),
        what,
    })
}

impl Config {
    /// Load the config file at `path`. A missing file is the default configuration; an explicit
    /// `--config FILE` that does not exist is checked by the caller.
    ///
    /// Only a regular file of at most [`MAX_CONFIG_BYTES`] is read: a folder, a device
    /// (`/dev/zero` would never end) or a named pipe (which may never be written) is refused
    /// before it is opened, and the read stops at the limit whatever the file turns into.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let unreadable = |source| ConfigError::Unreadable {
            path: path.to_path_buf(),
            source,
        };
        // `metadata` follows links, so a config.toml that links to a real file is fine.
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(unreadable(source)),
        };
        check_config_file_type(path, &meta)?;
        let file = std::fs::File::open(path).map_err(unreadable)?;
        // Checked again on the open file: the name may have been replaced since the `stat`.
        check_config_file_type(path, &file.metadata().map_err(unreadable)?)?;
        let mut bytes = Vec::new();
        use std::io::Read;
        file.take(MAX_CONFIG_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge {
                path: path.to_path_buf(),
                size: meta.len().max(bytes.len() as u64),
                limit: MAX_CONFIG_BYTES,
            });
        }
        let text = String::from_utf8(bytes)
            .map_err(|e| unreadable(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        Self::parse(&text, path)
    }

    /// Parse config text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            let (line, key) = locate_key(text, offset);
            let key = refine_key(&key, e.message());
            let hint = KEY_HINTS
                .iter()
                .find(|(k, _)| *k == hint_key(&key))
                .map(|(_, h)| format!("write it like\n    {}", h.replace('\n', "\n    ")))
                .unwrap_or_else(|| {
                    // The keys of the table the wrong key stands in.
                    let hinted = hint_key(&key);
                    let parent = hinted.rsplit_once('.').map(|(p, _)| p);
                    let known: Vec<&str> = KEY_HINTS
                        .iter()
                        .map(|(k, _)| *k)
                        .filter(|k| k.rsplit_once('.').map(|(p, _)| p) == parent)
                        .collect();
                    format!(
                        "remove it or use one of the known keys: {}",
                        known.join(", ")
                    )
                });
            ConfigError::Invalid {
                path: path.to_path_buf(),
                line,
                key,
                problem: e.message().trim().to_string(),
                hint,
            }
        })?;
        config.validate(text, path)?;
        Ok(config)
    }

    /// Checks serde cannot express.
    fn validate(&self, text: &str, path: &Path) -> Result<(), ConfigError> {
        let invalid = |key: &str, problem: String| {
            let line = line_of_key(text, key);
            let hint = KEY_HINTS
                .iter()
                .find(|(k, _)| *k == hint_key(key))
                .map(|(_, h)| format!("write it like\n    {}", h.replace('\n', "\n    ")))
                .unwrap_or_default();
            ConfigError::Invalid {
                path: path.to_path_buf(),
                line,
                key: key.to_string(),
                problem,
                hint,
            }
        };
        self.validate_limits(&invalid)?;
        self.validate_provider(&invalid)?;
        self.validate_rules(&invalid)?;
        self.validate_mcp(&invalid)?;
        self.validate_urls(&invalid)?;
        if let Some((key, problem)) = self.hooks.problem() {
            let key = if key.is_empty() {
                "hooks".to_string()
            } else {
                format!("hooks.{key}")
            };
            return Err(invalid(&key, problem));
        }
        Ok(())
    }

    /// The index, editor, context and attachment limits.
    fn validate_limits(
        &self,
        invalid: &impl Fn(&str, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        for folder in &self.index.exclude_folders {
            if folder.is_empty() || folder.starts_with('/') || folder.split('/').any(|c| c == "..")
            {
                return Err(invalid(
                    "index.exclude_folders",
                    format!("`{folder}` is not a folder inside the vault"),
                ));
            }
        }
        if self.index.debounce_ms > 10_000 {
            return Err(invalid(
                "index.debounce_ms",
                format!(
                    "{} ms is longer than 10 seconds; edits would take that long to reach the index",
                    self.index.debounce_ms
                ),
            ));
        }
        if !(100..=60_000).contains(&self.editor.autosave_delay_ms) {
            return Err(invalid(
                "editor.autosave_delay_ms",
                format!(
                    "{} ms is outside 100 to 60000: shorter writes on nearly every key, longer risks minutes of typing",
                    self.editor.autosave_delay_ms
                ),
            ));
        }
        if !(0.1..=0.95).contains(&self.context.compact_threshold) {
            return Err(invalid(
                "context.compact_threshold",
                format!(
                    "{} is outside 0.1 to 0.95: it is the share of the context window a request may fill before compaction",
                    self.context.compact_threshold
                ),
            ));
        }
        if !(1..=MAX_ATTACHMENT_FILE_MB).contains(&self.attachments.max_file_mb) {
            return Err(invalid(
                "attachments.max_file_mb",
                format!(
                    "{} MB is outside 1 to {MAX_ATTACHMENT_FILE_MB}: it is the largest file read as an attachment",
                    self.attachments.max_file_mb
                ),
            ));
        }
        Ok(())
    }

    /// `[provider]` numbers the API would refuse or that could never answer.
    fn validate_provider(
        &self,
        invalid: &impl Fn(&str, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        if self.provider.max_steps == Some(0) {
            return Err(invalid(
                "provider.max_steps",
                "0 steps would never call the model; use at least 1".to_string(),
            ));
        }
        if let Some(budget) = self.provider.thinking_budget
            && budget > 0
            && budget < MIN_THINKING_BUDGET
        {
            return Err(invalid(
                "provider.thinking_budget",
                format!(
                    "{budget} tokens is below the {MIN_THINKING_BUDGET} the API accepts; use 0 for off or at least {MIN_THINKING_BUDGET}"
                ),
            ));
        }
        if self.provider.max_tokens == Some(0) {
            return Err(invalid(
                "provider.max_tokens",
                "a response of 0 tokens says nothing; use at least 1".to_string(),
            ));
        }
        Ok(())
    }

    /// `[permissions]` rules: `tool` or `tool:vault-relative glob`.
    fn validate_rules(
        &self,
        invalid: &impl Fn(&str, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        for (key, specs) in [
            ("permissions.allow", &self.permissions.allow),
            ("permissions.deny", &self.permissions.deny),
        ] {
            if let Some(bad) = specs.iter().find(|s| {
                let (tool, glob) = s.split_once(':').unwrap_or((s.as_str(), "x"));
                tool.trim().is_empty() || glob.trim().is_empty() || glob.starts_with('/')
            }) {
                return Err(invalid(
                    key,
                    format!(
                        "`{bad}` is not a rule: write `tool` or `tool:vault-relative glob` (`*` for every tool)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The provider's and the embeddings' base URLs are http(s).
    fn validate_urls(
        &self,
        invalid: &impl Fn(&str, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        let urls = [
            ("provider.base_url", self.provider.base_url.as_deref()),
            (
                "embeddings.base_url",
                self.embeddings.as_ref().map(|e| e.base_url.as_str()),
            ),
        ];
        for (key, url) in urls {
            if let Some(url) =
                url.filter(|u| !(u.starts_with("http://") || u.starts_with("https://")))
            {
                return Err(invalid(
                    key,
                    format!("`{url}` is not an http:// or https:// URL"),
                ));
            }
        }
        Ok(())
    }
}

impl Config {
    /// `[mcp.servers.NAME]`: names, commands, timeouts and `${…}` variables.
    fn validate_mcp(
        &self,
        invalid: &impl Fn(&str, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        for (name, server) in &self.mcp.servers {
            if let Some((field, problem)) = mcp_server_problem(name, server) {
                let key = match field {
                    Some(field) => format!("mcp.servers.{name}.{field}"),
                    None => format!("mcp.servers.{name}"),
                };
                return Err(invalid(&key, problem));
            }
        }
        Ok(())
    }
}

/// The 1-based line of `offset` and the dotted key written on that line (or the table header
/// when the error points at a header).
pub(crate) fn locate_key(text: &str, offset: usize) -> (usize, String) {
    let offset = offset.min(text.len());
    let line_no = text[..offset].matches('\n').count() + 1;
    let mut section = String::new();
    let mut key_on_line = String::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(header) = table_header(trimmed) {
            section = header;
            if i + 1 == line_no {
                return (line_no, section);
            }
            continue;
        }
        if i + 1 == line_no {
            key_on_line = trimmed
                .split('=')
                .next()
                .unwrap_or_default()
                .trim()
                .trim_matches('"')
                .to_string();
            break;
        }
    }
    let key = match (section.is_empty(), key_on_line.is_empty()) {
        (true, _) => key_on_line,
        (false, true) => section,
        (false, false) => format!("{section}.{key_on_line}"),
    };
    (line_no, key)
}

/// The dotted name of a `[table]` or `[[array]]` header, with quotes and the blanks around the
/// dots taken out (`[mcp.servers."my files"]` → `mcp.servers.my files`), as serde names keys.
fn table_header(trimmed: &str) -> Option<String> {
    let inner = trimmed.strip_prefix('[')?.split(']').next()?;
    let inner = inner.trim_matches('[');
    Some(
        inner
            .split('.')
            .map(|part| part.trim().trim_matches(|c| c == '"' || c == '\''))
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// serde reports a missing field at the table, not at a line: name the missing key itself.
fn refine_key(key: &str, message: &str) -> String {
    let missing = message
        .split("missing field `")
        .nth(1)
        .and_then(|rest| rest.split('`').next());
    match missing {
        Some(field) if key.is_empty() => field.to_string(),
        Some(field) => format!("{key}.{field}"),
        None => key.to_string(),
    }
}

/// The line where `dotted` is written: as `key = …` in its table, or as a `[table]` header of its
/// own (`[mcp.servers.files]`, `[mcp.servers.files.env]`). Line 1 when it cannot be found.
pub(crate) fn line_of_key(text: &str, dotted: &str) -> usize {
    let (section, key) = dotted.rsplit_once('.').unwrap_or(("", dotted));
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(header) = table_header(trimmed) {
            if header == dotted {
                return i + 1;
            }
            current = header;
            continue;
        }
        let written = trimmed
            .split('=')
            .next()
            .map(|k| k.trim().trim_matches(|c| c == '"' || c == '\''));
        if current == section && written == Some(key) {
            return i + 1;
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/home/p/.config/vaultchat/config.toml"))
    }

    #[test]
    fn empty_config_is_the_default() {
        assert_eq!(parse("").unwrap(), Config::default());
        assert_eq!(Config::default().index.debounce_ms, 50);
    }

    #[test]
    fn tools_and_tool_set_are_words_and_default_to_auto() {
        let c = parse("[provider]\n").unwrap();
        assert_eq!(
            (c.provider.tools, c.provider.tool_set),
            (ToolsMode::Auto, ToolSetMode::Auto)
        );
        let c = parse("[provider]\ntools = \"never\"\ntool_set = \"core\"\n").unwrap();
        assert_eq!(
            (c.provider.tools, c.provider.tool_set),
            (ToolsMode::Never, ToolSetMode::Core)
        );
        let e = parse("[provider]\ntools = \"sometimes\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("provider.tools"), "{e}");
        assert!(e.contains("tools = \"auto\""), "{e}");
    }

    #[test]
    fn context_windows_are_set_per_model_and_checked() {
        let c = parse(
            "[provider]\ncontext_window = 32768\n[provider.context_windows]\n\"llama3.2\" = 8192\n\"qwen3:8b\" = 40960\n",
        )
        .unwrap();
        assert_eq!(c.provider.context_window, Some(32_768));
        assert_eq!(c.provider.context_windows.get("llama3.2"), Some(&8_192));
        assert_eq!(c.provider.context_windows.get("qwen3:8b"), Some(&40_960));
        let e = parse("[provider.context_windows]\n\"llama3.2\" = \"big\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(":2: key `provider.context_windows.llama3.2`"),
            "{e}"
        );
        assert!(e.contains("\"llama3.2\" = 8192"), "{e}");
    }

    #[test]
    fn editor_autosave_defaults_on_and_the_delay_is_checked() {
        let c = parse("").unwrap();
        assert!(c.editor.autosave);
        assert_eq!(c.editor.autosave_delay_ms, 1000);
        let c = parse("[editor]\nautosave = false\nautosave_delay_ms = 2500\n").unwrap();
        assert!(!c.editor.autosave);
        assert_eq!(c.editor.autosave_delay_ms, 2500);
        let e = parse("[editor]\nautosave_delay_ms = 5\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains(":2: key `editor.autosave_delay_ms`"), "{e}");
        assert!(e.contains("autosave_delay_ms = 1000"), "{e}");
        let e = parse("[editor]\nauto_save = true\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("editor.autosave"), "{e}");
    }

    #[test]
    fn thinking_budget_is_off_by_default_and_at_least_the_api_minimum() {
        assert_eq!(parse("").unwrap().provider.thinking_budget, None);
        let c = parse("[provider]\nthinking_budget = 4096\n").unwrap();
        assert_eq!(c.provider.thinking_budget, Some(4096));
        assert_eq!(
            parse("[provider]\nthinking_budget = 0\n")
                .unwrap()
                .provider
                .thinking_budget,
            Some(0)
        );
        let e = parse("[provider]\nthinking_budget = 500\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains(":2: key `provider.thinking_budget`"), "{e}");
        assert!(e.contains("at least 1024"), "{e}");
    }

    #[test]
    fn full_config_parses() {
        let c = parse(
            "[provider]\nkind = \"openai\"\nmodel = \"llama3\"\nbase_url = \"http://localhost:11434/v1\"\n\
             [index]\nexclude_folders = [\"Templates\"]\ndebounce_ms = 100\n\
             [embeddings]\nbase_url = \"http://localhost:11434/v1\"\nmodel = \"nomic\"\n",
        )
        .unwrap();
        assert_eq!(c.provider.kind, ProviderKind::OpenAi);
        assert_eq!(c.provider.model.as_deref(), Some("llama3"));
        assert_eq!(c.index.exclude_folders, vec!["Templates".to_string()]);
        assert_eq!(c.embeddings.unwrap().model, "nomic");
    }

    #[test]
    fn unknown_key_names_file_line_key_and_known_keys() {
        let err = parse("[provider]\nkind = \"anthropic\"\nmodle = \"x\"\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("config.toml:3"), "{msg}");
        assert!(msg.contains("`provider.modle`"), "{msg}");
        assert!(msg.contains("provider.model"), "{msg}");
    }

    #[test]
    fn wrong_type_names_the_key_and_shows_an_example() {
        let err = parse("[index]\ndebounce_ms = \"fast\"\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(":2: key `index.debounce_ms`"), "{msg}");
        assert!(msg.contains("debounce_ms = 50"), "{msg}");
    }

    #[test]
    fn bad_enum_value_lists_the_choices() {
        let err = parse("[provider]\nkind = \"gemini\"\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`provider.kind`"), "{msg}");
        assert!(msg.contains("openai"), "{msg}");
    }

    #[test]
    fn missing_required_key_is_named() {
        let err = parse("[embeddings]\nbase_url = \"http://x/v1\"\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`embeddings.model`"), "{msg}");
        assert!(msg.contains("nomic-embed-text"), "{msg}");
    }

    #[test]
    fn syntax_error_points_at_the_line() {
        let err = parse("[index]\nexclude_folders = [\"a\"\n").unwrap_err();
        assert!(err.to_string().contains("config.toml:"), "{err}");
    }

    #[test]
    fn semantic_checks_name_the_key() {
        let err = parse("[index]\nexclude_folders = [\"../outside\"]\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(":2: key `index.exclude_folders`"), "{msg}");
        let err = parse("[provider]\nbase_url = \"localhost:8080\"\n").unwrap_err();
        assert!(err.to_string().contains("`provider.base_url`"), "{err}");
    }

    /// `[context]`: compaction at 80% by default; a threshold outside 0.1–0.95 is named.
    #[test]
    fn context_threshold_defaults_and_bounds() {
        let c = parse("").unwrap();
        assert_eq!(c.context, ContextConfig::default());
        assert!((c.context.compact_threshold - 0.8).abs() < f64::EPSILON);
        assert!(c.context.auto_compact);
        let c = parse("[context]\ncompact_threshold = 0.5\nauto_compact = false\n").unwrap();
        assert!((c.context.compact_threshold - 0.5).abs() < f64::EPSILON);
        assert!(!c.context.auto_compact);
        let err = parse("[context]\ncompact_threshold = 1.5\n").unwrap_err();
        assert!(
            err.to_string().contains("context.compact_threshold"),
            "{err}"
        );
        let err = parse("[context]\nthreshold = 0.5\n").unwrap_err();
        assert!(err.to_string().contains("compact_threshold"), "{err}");
    }

    #[test]
    fn attachments_default_to_32_mb_and_refuse_a_limit_out_of_range() {
        let c = parse("").unwrap();
        assert_eq!(c.attachments.max_file_mb, 32);
        assert_eq!(c.attachments.max_file_bytes(), 32 * 1024 * 1024);
        let c = parse("[attachments]\nmax_file_mb = 4\n").unwrap();
        assert_eq!(c.attachments.max_file_bytes(), 4 * 1024 * 1024);
        for bad in ["0", "1025"] {
            let err = parse(&format!("[attachments]\nmax_file_mb = {bad}\n")).unwrap_err();
            assert!(err.to_string().contains("attachments.max_file_mb"), "{err}");
        }
    }

    #[test]
    fn mcp_servers_parse_with_their_defaults() {
        let c = parse(
            "[mcp.servers.files]\ncommand = \"npx\"\nargs = [\"-y\", \"server\", \"${VAULT_PATH}\"]\n\
             env = { ROOT = \"${VAULT_PATH}/Inbox\", MODE = \"ro\" }\ncwd = \"${VAULT_PATH}\"\n\
             [mcp.servers.off]\ncommand = \"x\"\nenabled = false\ntimeout_secs = 5\nstartup_timeout_secs = 3\n",
        )
        .unwrap();
        let files = &c.mcp.servers["files"];
        assert_eq!(files.command, "npx");
        assert_eq!(files.args, ["-y", "server", "${VAULT_PATH}"]);
        assert_eq!(files.env["MODE"], "ro");
        assert!(files.enabled);
        assert_eq!((files.timeout_secs, files.startup_timeout_secs), (60, 20));
        let off = &c.mcp.servers["off"];
        assert!(!off.enabled);
        assert_eq!((off.timeout_secs, off.startup_timeout_secs), (5, 3));
        assert_eq!(
            off,
            &McpServerConfig {
                enabled: false,
                timeout_secs: 5,
                startup_timeout_secs: 3,
                ..McpServerConfig::with_command("x")
            }
        );
    }

    #[test]
    fn vault_path_expands_in_command_args_env_and_cwd() {
        let mut server = McpServerConfig::with_command("${VAULT_PATH}/bin/srv");
        server.args = vec!["--root=${VAULT_PATH}".into(), "plain".into()];
        server
            .env
            .insert("A".into(), "${VAULT_PATH}:${VAULT_PATH}".into());
        server.cwd = Some("${VAULT_PATH}".into());
        let expanded = server.expanded(Path::new("/home/p/My Vault"));
        assert_eq!(expanded.command, "/home/p/My Vault/bin/srv");
        assert_eq!(expanded.args, ["--root=/home/p/My Vault", "plain"]);
        assert_eq!(expanded.env["A"], "/home/p/My Vault:/home/p/My Vault");
        assert_eq!(expanded.cwd.as_deref(), Some("/home/p/My Vault"));
        assert_eq!(expanded.timeout_secs, server.timeout_secs);
    }

    #[test]
    fn an_unknown_variable_is_named_with_its_key_and_line() {
        let err = parse("[mcp.servers.files]\ncommand = \"srv\"\nargs = [\"${HOME}/x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("config.toml:3: key `mcp.servers.files.args`"),
            "{err}"
        );
        assert!(err.contains("`${HOME}` is not a variable"), "{err}");
        assert!(err.contains("${VAULT_PATH}"), "{err}");
        for (text, key) in [
            ("command = \"${VAULT}/srv\"\n", "command"),
            ("command = \"srv\"\ncwd = \"${PWD}\"\n", "cwd"),
            ("command = \"srv\"\nenv = { A = \"${X}\" }\n", "env"),
        ] {
            let err = parse(&format!("[mcp.servers.s]\n{text}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(&format!("`mcp.servers.s.{key}`")), "{err}");
            assert!(err.contains("is not a variable vaultchat knows"), "{err}");
        }
        let err = parse("[mcp.servers.s]\ncommand = \"${VAULT_PATH\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("without its closing"), "{err}");
    }

    #[test]
    fn a_bad_server_name_is_refused_at_its_header() {
        let err =
            parse("[provider]\nmodel = \"m\"\n\n[mcp.servers.\"my files\"]\ncommand = \"srv\"\n")
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("config.toml:4: key `mcp.servers.my files`"),
            "{err}"
        );
        assert!(err.contains("1 to 32 letters, digits"), "{err}");
        assert!(err.contains("[mcp.servers.files]"), "{err}");
        let long = "a".repeat(33);
        let err = parse(&format!("[mcp.servers.{long}]\ncommand = \"srv\"\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a server name"), "{err}");
        assert!(is_mcp_server_name(&"a".repeat(32)));
        assert!(is_mcp_server_name("gh-issues_2"));
        assert!(!is_mcp_server_name(""));
        assert!(!is_mcp_server_name("a.b"));
    }

    #[test]
    fn mcp_server_mistakes_name_the_key_and_show_an_example() {
        let err = parse("[mcp.servers.files]\nargs = [\"x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("key `mcp.servers.files.command`"), "{err}");
        assert!(err.contains("command = \"npx\""), "{err}");
        let err = parse("[mcp.servers.files]\ncommand = \"srv\"\ncomand = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":3: key `mcp.servers.files.comand`"), "{err}");
        assert!(
            err.contains("mcp.servers.NAME.startup_timeout_secs"),
            "{err}"
        );
        let err = parse("[mcp.servers.files]\ncommand = \"srv\"\nenv = { A = 1 }\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":3: key `mcp.servers.files.env`"), "{err}");
        assert!(err.contains("strings only"), "{err}");
        let err = parse("[mcp.servers.files]\ncommand = \"srv\"\ntimeout_secs = 0\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(":3: key `mcp.servers.files.timeout_secs`"),
            "{err}"
        );
        assert!(err.contains("timeout_secs = 60"), "{err}");
        let err = parse("[mcp.servers.files]\ncommand = \" \"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":2: key `mcp.servers.files.command`"), "{err}");
        let err = parse("[mcp]\nserver = {}\n").unwrap_err().to_string();
        assert!(err.contains("`mcp.server`"), "{err}");
        assert!(err.contains("mcp.servers"), "{err}");
    }

    #[test]
    fn missing_file_is_default_but_unreadable_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Config::load(&dir.path().join("nope.toml")).unwrap(),
            Config::default()
        );
        let err = Config::load(dir.path()).unwrap_err();
        assert!(matches!(err, ConfigError::NotAFile { .. }), "{err}");
        assert!(err.to_string().contains("is a folder, not a file"), "{err}");
    }

    #[test]
    fn devices_are_refused_before_they_are_read() {
        // /dev/zero never ends: reading it would hang and fill the memory.
        for device in ["/dev/null", "/dev/zero"] {
            let err = Config::load(Path::new(device)).unwrap_err().to_string();
            assert!(
                err.contains(&format!("{device} is a character device")),
                "{err}"
            );
        }
    }

    #[test]
    fn a_huge_file_is_refused_and_a_link_to_a_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let huge = dir.path().join("huge.toml");
        std::fs::write(&huge, "#".repeat(MAX_CONFIG_BYTES as usize + 1)).unwrap();
        let err = Config::load(&huge).unwrap_err();
        assert!(matches!(err, ConfigError::TooLarge { .. }), "{err}");
        let real = dir.path().join("real.toml");
        std::fs::write(&real, "[index]\ndebounce_ms = 70\n").unwrap();
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(Config::load(&link).unwrap().index.debounce_ms, 70);
    }
}
