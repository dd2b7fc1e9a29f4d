//! The MCP client: the person's own MCP servers (`[mcp.servers.NAME]`), started as child
//! processes speaking MCP on stdio, whose tools the chat may call as `NAME__tool`.
//!
//! Nothing here can take the app down: a server that does not start, exits or talks nonsense
//! becomes a [`McpServerStatus`] with one sentence saying why, and a call to a server that died
//! is a tool error the model reads (the server is restarted once, on the next call).
//!
//! The pieces are generic over where a server comes from: [`McpServerSpec`] is a resolved
//! command line, so vault plugins (`[plugins.NAME]`, once the vault is trusted) can be started by
//! the same [`McpServers::start`] and their tools re-exported by wrapping [`McpServers::tools`].

mod connection;
mod names;
mod prompts;
mod result;

pub use names::{MAX_TOOL_NAME, provider_schema, qualified_name};
pub use prompts::{
    GotPrompt, ListedArgument, ListedPrompt, MAX_PROMPT_BYTES, MAX_PROMPTS_PER_SERVER,
    PromptListing, prompt_messages,
};
pub use result::{MAX_RESULT_BYTES, to_output};

use crate::config::{Config, McpServerConfig};
use crate::tools::{BoxFuture, Tool, ToolError, ToolOutput, ToolSpec};
use connection::Connection;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How to start one server: its config with `${VAULT_PATH}` expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The name its tools are prefixed with.
    pub name: String,
    /// The program (found on `PATH` unless it holds a `/`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Added to vaultchat's own environment.
    pub env: BTreeMap<String, String>,
    /// The working folder; vaultchat's own when `None`.
    pub cwd: Option<PathBuf>,
    /// `false`: configured, not started.
    pub enabled: bool,
    /// How long one tool call may take.
    pub call_timeout: Duration,
    /// How long spawning, the handshake and the tool list may take together.
    pub startup_timeout: Duration,
    /// Where it is configured, and (for a vault plugin) whether the person trusts it.
    pub origin: ServerOrigin,
    /// A vault plugin: the plugins file content it was started for; its tools refuse to run
    /// once the file no longer holds it.
    pub trusted_file: Option<super::plugins::TrustedFile>,
}

/// Where a server is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerOrigin {
    /// `[mcp.servers.NAME]` in the person's own config.
    Person,
    /// `[plugins.NAME]` in the vault's `.vaultchat/plugins.toml`; never started unless `trusted`.
    Plugin { trusted: bool },
}

impl ServerOrigin {
    /// Whether the server may be started at all.
    pub fn may_start(self) -> bool {
        !matches!(self, Self::Plugin { trusted: false })
    }
}

impl McpServerSpec {
    /// The server `name` of the config, for the vault at `vault_root`.
    pub fn from_config(name: &str, config: &McpServerConfig, vault_root: &Path) -> Self {
        let config = config.expanded(vault_root);
        Self {
            name: name.to_string(),
            command: config.command,
            args: config.args,
            env: config.env,
            cwd: config.cwd.map(PathBuf::from),
            enabled: config.enabled,
            call_timeout: Duration::from_secs(config.timeout_secs),
            startup_timeout: Duration::from_secs(config.startup_timeout_secs),
            origin: ServerOrigin::Person,
            trusted_file: None,
        }
    }

    /// Where in the config files this server is written, for messages.
    pub fn config_table(&self) -> String {
        match self.origin {
            ServerOrigin::Person => format!("[mcp.servers.{}]", self.name),
            ServerOrigin::Plugin { .. } => {
                format!(
                    "[plugins.{}] of the vault's .vaultchat/plugins.toml",
                    self.name
                )
            }
        }
    }

    /// Every `[mcp.servers.NAME]` of the user config, by name.
    pub fn from_user_config(config: &Config, vault_root: &Path) -> Vec<Self> {
        config
            .mcp
            .servers
            .iter()
            .map(|(name, server)| Self::from_config(name, server, vault_root))
            .collect()
    }

    /// The command line for messages: on one line (a script passed with `-c` may hold
    /// newlines), blanks collapsed, shortened.
    pub fn command_line(&self) -> String {
        let line = std::iter::once(self.command.as_str())
            .chain(self.args.iter().map(String::as_str))
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ");
        const MAX: usize = 120;
        if line.chars().count() <= MAX {
            line
        } else {
            let mut short: String = line.chars().take(MAX - 1).collect();
            short.push('…');
            short
        }
    }
}

pub use crate::protocol::{McpServerState, McpServerStatus};

impl McpServerStatus {
    /// One line for a person: "running · 3 tools", "failed: …".
    pub fn summary(&self) -> String {
        match &self.state {
            McpServerState::Starting => "starting…".to_string(),
            McpServerState::Running { tools: 1 } => "running · 1 tool".to_string(),
            McpServerState::Running { tools } => format!("running · {tools} tools"),
            McpServerState::Failed { message } => format!("failed: {message}"),
            McpServerState::Disabled => "disabled (enabled = false)".to_string(),
            McpServerState::NotTrusted => {
                "not trusted (a vault plugin): run `vaultchat trust` to allow it".to_string()
            }
        }
    }
}

/// One server's tool: calls go to the server under the name it knows.
struct McpTool {
    spec: ToolSpec,
    remote: String,
    connection: Arc<Connection>,
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            // A plugin whose files changed (or whose trust was revoked) is stopped, not only
            // refused: the call never reaches it.
            if let Err(withdrawn) = self.connection.check_trust().await {
                self.connection.withdraw(&withdrawn).await;
                return Err(ToolError::Invalid(format!(
                    "the plugin `{}` is not run: {withdrawn}",
                    self.connection.name()
                )));
            }
            let result = self.connection.call(&self.remote, args).await?;
            to_output(result)
        })
    }
}

/// The servers of one run, started.
pub struct McpServers {
    statuses: Vec<McpServerStatus>,
    connections: Vec<Arc<Connection>>,
    tools: Vec<Arc<dyn Tool>>,
}

impl McpServers {
    /// Start every enabled server at once, each within its start-up timeout. Never fails: a
    /// server that does not start is reported in [`McpServers::statuses`]. Tool names are given
    /// out in the order of `specs`; a later tool whose name is taken is left out (and logged).
    pub async fn start(specs: Vec<McpServerSpec>) -> Self {
        let started = futures_util::future::join_all(specs.iter().map(|spec| async move {
            if spec.enabled && spec.origin.may_start() {
                Some(connection::start(spec).await)
            } else {
                None
            }
        }))
        .await;
        let mut servers = Self {
            statuses: Vec::new(),
            connections: Vec::new(),
            tools: Vec::new(),
        };
        let mut taken = HashSet::new();
        for (spec, started) in specs.into_iter().zip(started) {
            let name = spec.name.clone();
            let state = match started {
                None if !spec.origin.may_start() => McpServerState::NotTrusted,
                None => McpServerState::Disabled,
                Some(Err(message)) => {
                    tracing::warn!(server = %name, "MCP server did not start: {message}");
                    McpServerState::Failed { message }
                }
                Some(Ok(started)) => {
                    let offered = names::offered_tools(&name, &started.tools, &mut taken);
                    tracing::info!(
                        server = %name,
                        tools = offered.len(),
                        listed = started.tools.len(),
                        "MCP server started"
                    );
                    let connection = Arc::new(Connection::new(spec, started));
                    let count = offered.len();
                    for tool in offered {
                        servers.tools.push(Arc::new(McpTool {
                            spec: tool.spec,
                            remote: tool.remote,
                            connection: Arc::clone(&connection),
                        }));
                    }
                    servers.connections.push(connection);
                    McpServerState::Running { tools: count }
                }
            };
            servers.statuses.push(McpServerStatus { name, state });
        }
        servers.watch_plugins();
        servers
    }

    /// Stop each running vault plugin as soon as its trust no longer holds (a covered file
    /// changed, or the trust was revoked), checked every [`RECHECK_EVERY`](super::plugins::RECHECK_EVERY)
    /// even when no call comes. The watch ends with the servers.
    fn watch_plugins(&self) {
        let plugins: Vec<std::sync::Weak<Connection>> = self
            .connections
            .iter()
            .filter(|c| c.trusted_file().is_some())
            .map(Arc::downgrade)
            .collect();
        if plugins.is_empty() {
            return;
        }
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(super::plugins::RECHECK_EVERY).await;
                let mut alive = 0;
                for weak in &plugins {
                    let Some(connection) = weak.upgrade() else {
                        continue;
                    };
                    if !connection.is_up().await {
                        continue;
                    }
                    alive += 1;
                    if let Err(withdrawn) = connection.check_trust().await {
                        connection.withdraw(&withdrawn).await;
                    }
                }
                if alive == 0 {
                    break;
                }
            }
        });
    }

    /// No servers at all (none configured).
    pub fn empty() -> Self {
        Self {
            statuses: Vec::new(),
            connections: Vec::new(),
            tools: Vec::new(),
        }
    }

    /// Each configured server's state, in config order.
    pub fn statuses(&self) -> &[McpServerStatus] {
        &self.statuses
    }

    /// The tools of the running servers (tier `plugin`, named `NAME__tool`).
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }

    /// The prompts of every running server, in config order (each server lists them once per
    /// run, bounded and within a timeout: a server that fails or hangs is one line in
    /// `problems`, never a wait past [`prompts::PROMPT_LIST_TIMEOUT`]).
    pub async fn prompts(&self) -> PromptListing {
        let listed =
            futures_util::future::join_all(self.connections.iter().map(|c| c.prompts())).await;
        let mut listing = PromptListing::default();
        for (result, first_failure) in listed {
            match result {
                Ok((prompts, problems)) => {
                    listing.prompts.extend(prompts);
                    listing.problems.extend(problems);
                }
                Err(failure) => {
                    if first_failure {
                        listing.new_failures.push(failure.clone());
                    }
                    listing.problems.push(failure);
                }
            }
        }
        listing
    }

    /// The messages of `server`'s prompt `prompt` given `arguments`, bounded
    /// ([`prompt_messages`]); `Err` is one line for the person.
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<GotPrompt, String> {
        let connection = self
            .connections
            .iter()
            .find(|c| c.name() == server)
            .ok_or_else(|| format!("the MCP server `{server}` is not running"))?;
        let arguments = arguments
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let result = connection.get_prompt(prompt, arguments).await?;
        Ok(prompt_messages(result))
    }

    /// Close every session (stdin closed, the child waited for, killed if it lingers). Tools
    /// called afterwards answer that their server was shut down.
    pub async fn shutdown(&self) {
        futures_util::future::join_all(self.connections.iter().map(|c| c.close())).await;
    }
}

/// Servers being started in the background: the app draws and opens the vault meanwhile, and
/// the agent waits for them only before its first request.
#[derive(Clone)]
pub struct McpStartup {
    /// Each server's name and its state until start-up is over.
    configured: Vec<(String, McpServerState)>,
    ready: watch::Receiver<Option<Arc<McpServers>>>,
}

impl McpStartup {
    /// Start `specs` on the current tokio runtime.
    pub fn spawn(specs: Vec<McpServerSpec>) -> Self {
        Self::spawn_after(specs, None)
    }

    /// Start `specs` once `trust` answers: vault plugins not trusted yet are started when it
    /// says `true` (the person trusted them just now) and stay stopped otherwise. Every server
    /// waits for the answer, so a turn never runs with half the tools; without a `trust`
    /// channel they start at once.
    pub fn spawn_after(
        specs: Vec<McpServerSpec>,
        trust: Option<tokio::sync::oneshot::Receiver<bool>>,
    ) -> Self {
        let configured = specs
            .iter()
            .map(|s| {
                let state = if !s.origin.may_start() {
                    McpServerState::NotTrusted
                } else if s.enabled {
                    McpServerState::Starting
                } else {
                    McpServerState::Disabled
                };
                (s.name.clone(), state)
            })
            .collect();
        let (tx, ready) = watch::channel(None);
        if specs.is_empty() {
            tx.send_replace(Some(Arc::new(McpServers::empty())));
        } else {
            tokio::spawn(async move {
                let trusted_now = match trust {
                    Some(answer) => {
                        // Every server waits, not only the plugins: the log says why none runs.
                        tracing::info!(
                            "the MCP servers start after the answer about the vault's plugins"
                        );
                        answer.await.unwrap_or(false)
                    }
                    None => false,
                };
                let specs = specs
                    .into_iter()
                    .map(|mut spec| {
                        if trusted_now && !spec.origin.may_start() {
                            spec.origin = ServerOrigin::Plugin { trusted: true };
                        }
                        spec
                    })
                    .collect();
                let servers = McpServers::start(specs).await;
                tx.send_replace(Some(Arc::new(servers)));
            });
        }
        Self { configured, ready }
    }

    /// No server is configured.
    pub fn is_empty(&self) -> bool {
        self.configured.is_empty()
    }

    /// The servers once every one of them started or failed.
    pub async fn ready(&self) -> Arc<McpServers> {
        let mut ready = self.ready.clone();
        let servers = match ready.wait_for(Option::is_some).await {
            Ok(servers) => servers.clone(),
            Err(_) => None,
        };
        // The start-up task ended without an answer: only when the runtime is going away.
        servers.unwrap_or_else(|| Arc::new(McpServers::empty()))
    }

    /// The servers, if they are done starting.
    pub fn now(&self) -> Option<Arc<McpServers>> {
        self.ready.borrow().clone()
    }

    /// Each server's state now (`Starting` until start-up is over).
    pub fn statuses(&self) -> Vec<McpServerStatus> {
        match self.now() {
            Some(servers) => servers.statuses().to_vec(),
            None => self
                .configured
                .iter()
                .map(|(name, state)| McpServerStatus {
                    name: name.clone(),
                    state: state.clone(),
                })
                .collect(),
        }
    }

    /// The tools, once the servers are ready (for `Agent::with_pending_tools`).
    pub fn pending_tools(&self) -> BoxFuture<'static, Vec<Arc<dyn Tool>>> {
        let startup = self.clone();
        Box::pin(async move { startup.ready().await.tools() })
    }

    /// Close the servers if they are up; one still starting is killed when the runtime ends.
    pub async fn shutdown(&self) {
        if let Some(servers) = self.now() {
            servers.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> McpServerSpec {
        McpServerSpec::from_config(name, &McpServerConfig::with_command("srv"), Path::new("/v"))
    }

    #[test]
    fn specs_come_from_the_config_expanded() {
        let mut config = Config::default();
        let mut files = McpServerConfig::with_command("npx");
        files.args = vec!["server".into(), "${VAULT_PATH}".into()];
        files.cwd = Some("${VAULT_PATH}/sub".into());
        files.timeout_secs = 7;
        config.mcp.servers.insert("files".into(), files);
        let mut off = McpServerConfig::with_command("x");
        off.enabled = false;
        config.mcp.servers.insert("aaa".into(), off);
        let specs = McpServerSpec::from_user_config(&config, Path::new("/home/p/vault"));
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].name, "aaa");
        assert!(!specs[0].enabled);
        let files = &specs[1];
        assert_eq!(files.args, ["server", "/home/p/vault"]);
        assert_eq!(files.cwd.as_deref(), Some(Path::new("/home/p/vault/sub")));
        assert_eq!(files.call_timeout, Duration::from_secs(7));
        assert_eq!(files.startup_timeout, Duration::from_secs(20));
        assert_eq!(files.command_line(), "npx server /home/p/vault");
    }

    #[test]
    fn command_lines_are_one_line() {
        let mut s = spec("s");
        s.command = "python3".into();
        s.args = vec!["-c".into(), "import sys\n  print(1)".into()];
        assert_eq!(s.command_line(), "python3 -c import sys print(1)");
    }

    #[test]
    fn long_command_lines_are_shortened() {
        let mut s = spec("s");
        s.args = vec!["a".repeat(200)];
        let line = s.command_line();
        assert_eq!(line.chars().count(), 120);
        assert!(line.starts_with("srv aaa") && line.ends_with('…'));
    }

    #[test]
    fn statuses_read_as_one_line() {
        let status = |state| McpServerStatus {
            name: "s".into(),
            state,
        };
        assert_eq!(
            status(McpServerState::Running { tools: 1 }).summary(),
            "running · 1 tool"
        );
        assert_eq!(
            status(McpServerState::Running { tools: 4 }).summary(),
            "running · 4 tools"
        );
        assert_eq!(
            status(McpServerState::Failed {
                message: "`x` was not found".into()
            })
            .summary(),
            "failed: `x` was not found"
        );
        assert_eq!(
            status(McpServerState::Disabled).summary(),
            "disabled (enabled = false)"
        );
        assert_eq!(status(McpServerState::Starting).summary(), "starting…");
    }

    #[tokio::test]
    async fn a_startup_reports_starting_then_its_result() {
        let mut off = spec("off");
        off.enabled = false;
        let startup = McpStartup::spawn(vec![off]);
        assert!(!startup.is_empty());
        let servers = startup.ready().await;
        assert_eq!(
            servers.statuses(),
            [McpServerStatus {
                name: "off".into(),
                state: McpServerState::Disabled
            }]
        );
        assert!(servers.tools().is_empty());
        assert_eq!(startup.statuses(), servers.statuses());
        let none = McpStartup::spawn(Vec::new());
        assert!(none.is_empty());
        assert!(none.now().is_some(), "nothing to start is ready at once");
        assert!(none.pending_tools().await.is_empty());
    }

    #[tokio::test]
    async fn untrusted_plugins_wait_for_the_answer_and_start_only_on_trust() {
        let plugin = || {
            let mut s = spec("tasks");
            s.command = "vaultchat-no-such-plugin".into();
            s.origin = ServerOrigin::Plugin { trusted: false };
            s
        };
        // Never started without an answer channel, and said so in the plugin's own words.
        let servers = McpServers::start(vec![plugin()]).await;
        assert_eq!(servers.statuses()[0].state, McpServerState::NotTrusted);
        assert!(
            McpServerStatus {
                name: "tasks".into(),
                state: McpServerState::NotTrusted
            }
            .summary()
            .contains("vaultchat trust")
        );
        for (answer, trusted) in [(false, false), (true, true)] {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let startup = McpStartup::spawn_after(vec![plugin()], Some(rx));
            assert_eq!(startup.statuses()[0].state, McpServerState::NotTrusted);
            assert!(startup.now().is_none(), "nothing starts before the answer");
            tx.send(answer).unwrap();
            let state = startup.ready().await.statuses()[0].state.clone();
            match state {
                McpServerState::Failed { message } => {
                    assert!(trusted, "started without trust: {message}");
                    // The start was tried, and the message points at the vault's file.
                    assert!(
                        message.contains("[plugins.tasks] of the vault's .vaultchat/plugins.toml"),
                        "{message}"
                    );
                }
                McpServerState::NotTrusted => assert!(!trusted),
                other => panic!("{other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn a_missing_program_fails_with_a_clear_sentence() {
        let mut missing = spec("ghost");
        missing.command = "vaultchat-no-such-mcp-server".into();
        let servers = McpServers::start(vec![missing]).await;
        let McpServerState::Failed { message } = &servers.statuses()[0].state else {
            panic!("{:?}", servers.statuses());
        };
        assert_eq!(
            message,
            "`vaultchat-no-such-mcp-server` was not found: install it, or give its full path as `command` in [mcp.servers.ghost]"
        );
    }

    #[tokio::test]
    async fn a_missing_working_folder_is_named() {
        let mut s = spec("s");
        s.command = "true".into();
        s.cwd = Some(PathBuf::from("/no/such/folder/for/vaultchat"));
        let servers = McpServers::start(vec![s]).await;
        assert_eq!(
            servers.statuses()[0].state,
            McpServerState::Failed {
                message: "`true` was not started: its working folder /no/such/folder/for/vaultchat does not exist".into()
            }
        );
    }
}
