//! One server process: spawn it, hold the MCP session, forward calls, restart it once when it
//! died, and close it.

use super::McpServerSpec;
use super::prompts::{self, ListedPrompt};
use crate::mcp::plugins::Withdrawn;
use crate::tools::ToolError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    GetPromptRequestParams, GetPromptResult, Implementation, PaginatedRequestParams,
    ProtocolVersion,
};
use rmcp::service::{ClientInitializeError, Peer, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::ChildStderr;
use tokio::sync::watch;

/// How long a failure report waits for the dead server's last words on stderr.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// How long closing one server may take (stdin closed, then SIGTERM, then SIGKILL).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest stderr line kept (a server may print a whole JSON document on one line).
const MAX_STDERR_LINE: usize = 2_000;

/// A running MCP session with one server.
type Session = RunningService<RoleClient, ClientConfig>;

/// What a successful start gives.
pub(super) struct Started {
    pub session: Session,
    pub tools: Vec<rmcp::model::Tool>,
    pub stderr: Arc<StderrTail>,
}

/// The first and the latest line the server wrote on stderr, and whether it closed.
pub(super) struct StderrTail {
    lines: Mutex<(Option<String>, Option<String>)>,
    closed: watch::Sender<bool>,
}

impl StderrTail {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            lines: Mutex::new((None, None)),
            closed: watch::Sender::new(false),
        })
    }

    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.0.is_none() {
                lines.0 = Some(line.clone());
            }
            lines.1 = Some(line);
        }
    }

    fn first(&self) -> Option<String> {
        self.lines.lock().ok().and_then(|l| l.0.clone())
    }

    fn last(&self) -> Option<String> {
        self.lines.lock().ok().and_then(|l| l.1.clone())
    }

    fn close(&self) {
        self.closed.send_replace(true);
    }

    /// Wait until the server's stderr closed (it exited), at most `grace`.
    async fn settled(&self, grace: Duration) {
        let mut closed = self.closed.subscribe();
        let _ = tokio::time::timeout(grace, closed.wait_for(|c| *c)).await;
    }
}

/// Read the server's stderr to its end, logging every line. A pipe nobody reads fills up and
/// blocks the server; inherited, it would scribble over the full-screen app.
async fn drain(stderr: ChildStderr, server: String, tail: Arc<StderrTail>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // Bounded, so a server that never writes a newline cannot grow the buffer forever.
        match (&mut reader)
            .take(MAX_STDERR_LINE as u64)
            .read_until(b'\n', &mut buf)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                if !line.trim().is_empty() {
                    tracing::info!(server = %server, "MCP server stderr: {line}");
                    tail.push(line);
                }
            }
        }
    }
    tail.close();
}

/// How vaultchat introduces itself. No capabilities: a client that offers `roots` gets asked
/// for them, and the reference filesystem server then replaces its allowed folders with them.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("vaultchat", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Why a start failed before it timed out (boxed: rmcp's handshake error is large).
enum StartFailure {
    Handshake(Box<ClientInitializeError>),
    ToolList(ServiceError),
}

/// Spawn the server, shake hands (the legacy `initialize`, which today's servers speak) and list
/// its tools, all within its start-up timeout. `Err` is one sentence for the person.
pub(super) async fn start(spec: &McpServerSpec) -> Result<Started, String> {
    let shown = spec.command_line();
    // A vault plugin starts (or restarts) only while everything its trust covers is unchanged:
    // the files may have changed since the trust was read (while the app asked, or since the
    // first start).
    if let Err(withdrawn) = check(spec).await {
        return Err(format!("`{shown}` was not started: {withdrawn}"));
    }
    if let Some(cwd) = spec.cwd.as_deref().filter(|c| !c.is_dir()) {
        return Err(format!(
            "`{shown}` was not started: its working folder {} does not exist",
            cwd.display()
        ));
    }
    let mut command = tokio::process::Command::new(&spec.command);
    command.args(&spec.args).envs(&spec.env);
    // The last line of defence: whatever happens to the session, the child dies with it.
    command.kill_on_drop(true);
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_error(spec, &e))?;
    let tail = StderrTail::new();
    match stderr {
        Some(stderr) => {
            tokio::spawn(drain(stderr, spec.name.clone(), Arc::clone(&tail)));
        }
        None => tail.close(),
    }
    let handshake = async {
        let session = client_config()
            .serve(transport)
            .await
            .map_err(|e| StartFailure::Handshake(Box::new(e)))?;
        let tools = session
            .list_all_tools()
            .await
            .map_err(StartFailure::ToolList)?;
        Ok::<_, StartFailure>((session, tools))
    };
    match tokio::time::timeout(spec.startup_timeout, handshake).await {
        Ok(Ok((session, tools))) => Ok(Started {
            session,
            tools,
            stderr: tail,
        }),
        Ok(Err(failure)) => {
            tail.settled(STDERR_GRACE).await;
            Err(describe_failure(&shown, failure, tail.first()))
        }
        Err(_) => Err(format!(
            "`{shown}` did not finish the MCP handshake within {} s; is it an MCP server on stdio? (its stdout must carry only JSON-RPC){}",
            spec.startup_timeout.as_secs(),
            said(tail.first())
        )),
    }
}

/// Whether a vault plugin's trust still holds (always, for the person's own servers); hashing is
/// blocking I/O, so it runs off the runtime's threads.
async fn check(spec: &McpServerSpec) -> Result<(), Withdrawn> {
    let Some(file) = spec.trusted_file.clone() else {
        return Ok(());
    };
    tokio::task::spawn_blocking(move || file.check())
        .await
        .unwrap_or_else(|e| Err(Withdrawn::Unreadable(e.to_string())))
}

/// `; it said: "…"` for a stderr line, or nothing.
fn said(line: Option<String>) -> String {
    line.map(|l| format!("; it said: {l}")).unwrap_or_default()
}

fn spawn_error(spec: &McpServerSpec, error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => format!(
            "`{}` was not found: install it, or give its full path as `command` in {}",
            spec.command,
            spec.config_table()
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "`{}` could not be run: it is not an executable program ({error})",
            spec.command
        ),
        _ => format!("`{}` could not be started: {error}", spec.command_line()),
    }
}

fn describe_failure(shown: &str, failure: StartFailure, stderr: Option<String>) -> String {
    let exited = |when: &str| match &stderr {
        Some(line) => format!("`{shown}` exited {when}: {line}"),
        None => format!("`{shown}` exited {when} without a word on stderr"),
    };
    let error = match failure {
        StartFailure::Handshake(error) => *error,
        StartFailure::ToolList(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
            return exited("while listing its tools");
        }
        StartFailure::ToolList(error) => {
            return format!(
                "`{shown}` started, but its tool list could not be read: {error}{}",
                said(stderr)
            );
        }
    };
    match error {
        ClientInitializeError::ConnectionClosed(_)
        | ClientInitializeError::TransportError { .. } => {
            exited("before finishing the MCP handshake")
        }
        ClientInitializeError::JsonRpcError(error) => {
            format!("`{shown}` refused the MCP handshake: {}", error.message)
        }
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::ConflictInitResponseId(..)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => format!(
            "`{shown}` answered the MCP handshake with something other than an initialize result; is it an MCP server?{}",
            said(stderr)
        ),
        error => format!(
            "`{shown}` failed the MCP handshake: {error}{}",
            said(stderr)
        ),
    }
}

/// The session with one server, shared by its tools.
pub(super) struct Connection {
    spec: McpServerSpec,
    link: tokio::sync::Mutex<Link>,
    /// The server's prompts, listed the first time they are asked for (then kept for the run),
    /// or why they could not be.
    prompts: tokio::sync::OnceCell<PromptsListed>,
    /// Whether a failure to list the prompts was reported already (a notice says it once).
    prompts_failure_told: std::sync::atomic::AtomicBool,
}

/// One server's prompts and the lines about those left out, or why none could be listed.
pub(super) type PromptsListed = Result<(Vec<ListedPrompt>, Vec<String>), String>;

enum Link {
    Up {
        session: Session,
        stderr: Arc<StderrTail>,
        /// Whether this is the one restart a server gets.
        restarted: bool,
    },
    /// Stopped for good in this run; the message says why.
    Down(String),
    /// Closed by vaultchat.
    Closed,
}

impl Connection {
    pub(super) fn new(spec: McpServerSpec, started: Started) -> Self {
        Self {
            spec,
            link: tokio::sync::Mutex::new(Link::Up {
                session: started.session,
                stderr: started.stderr,
                restarted: false,
            }),
            prompts: tokio::sync::OnceCell::new(),
            prompts_failure_told: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The server's prompts (listed once per run, bounded: [`prompts::listed`]), and whether a
    /// failure is said for the first time.
    pub(super) async fn prompts(&self) -> (PromptsListed, bool) {
        let listed = self
            .prompts
            .get_or_init(|| self.list_prompts())
            .await
            .clone();
        let first_failure = listed.is_err()
            && !self
                .prompts_failure_told
                .swap(true, std::sync::atomic::Ordering::Relaxed);
        (listed, first_failure)
    }

    /// `prompts/list`, page after page up to [`prompts::MAX_PROMPT_PAGES`], within
    /// [`prompts::PROMPT_LIST_TIMEOUT`] (or the call timeout when shorter).
    async fn list_prompts(&self) -> PromptsListed {
        let name = &self.spec.name;
        let plugin = matches!(self.spec.origin, super::ServerOrigin::Plugin { .. });
        if let Err(withdrawn) = self.check_trust().await {
            self.withdraw(&withdrawn).await;
            return Err(format!("the plugin `{name}` is not run: {withdrawn}"));
        }
        let peer = self.peer().await.map_err(|e| e.to_string())?;
        // A server that says it has no prompts is not asked (many answer "method not found").
        if peer
            .peer_info()
            .is_some_and(|info| info.capabilities.prompts.is_none())
        {
            return Ok((Vec::new(), Vec::new()));
        }
        let wait = self.spec.call_timeout.min(prompts::PROMPT_LIST_TIMEOUT);
        let pages = async {
            let mut all = Vec::new();
            let mut cursor = None;
            for _ in 0..prompts::MAX_PROMPT_PAGES {
                let params = PaginatedRequestParams::default().with_cursor(cursor);
                let page = peer.list_prompts(Some(params)).await?;
                all.extend(page.prompts);
                cursor = page.next_cursor;
                if cursor.is_none() || all.len() > prompts::MAX_PROMPTS_PER_SERVER {
                    break;
                }
            }
            Ok::<_, ServiceError>((all, cursor.is_some()))
        };
        match tokio::time::timeout(wait, pages).await {
            Ok(Ok((all, more))) => Ok(prompts::listed(name, plugin, all, more)),
            // What the server wrote is escaped here: the line is shown as a notice.
            Ok(Err(ServiceError::McpError(error))) => Err(format!(
                "the MCP server `{name}` refused to list its prompts: {}",
                crate::quote::terminal(&error.message)
            )),
            Ok(Err(error)) => Err(format!(
                "the MCP server `{name}` could not list its prompts: {}",
                crate::quote::terminal(&error.to_string())
            )),
            Err(_) => Err(format!(
                "the MCP server `{name}` did not list its prompts within {} s; they are not offered",
                wait.as_secs()
            )),
        }
    }

    /// `prompts/get` for `prompt` with `arguments`, within the call timeout; `Err` is one line.
    pub(super) async fn get_prompt(
        &self,
        prompt: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<GetPromptResult, String> {
        let name = &self.spec.name;
        if let Err(withdrawn) = self.check_trust().await {
            self.withdraw(&withdrawn).await;
            return Err(format!("the plugin `{name}` is not run: {withdrawn}"));
        }
        let peer = self.peer().await.map_err(|e| e.to_string())?;
        let params = GetPromptRequestParams::new(prompt).with_arguments(arguments);
        let wait = self.spec.call_timeout.min(prompts::PROMPT_GET_TIMEOUT);
        match tokio::time::timeout(wait, peer.get_prompt(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(error))) => Err(format!(
                "the MCP server `{name}` refused the prompt: {}",
                crate::quote::terminal(&error.message)
            )),
            Ok(Err(error)) => Err(format!(
                "the MCP server `{name}` did not give the prompt: {}",
                crate::quote::terminal(&error.to_string())
            )),
            Err(_) => Err(format!(
                "the MCP server `{name}` did not give the prompt within {} s (timeout_secs in {})",
                wait.as_secs(),
                self.spec.config_table()
            )),
        }
    }

    /// Call `tool` with `args` (a JSON object, or null for none) within the call timeout.
    /// For a vault plugin, the plugins file content it was started for.
    pub(super) fn trusted_file(&self) -> Option<&crate::mcp::plugins::TrustedFile> {
        self.spec.trusted_file.as_ref()
    }

    /// Whether this vault plugin's trust still holds ([`crate::mcp::plugins::TrustedFile::check`]).
    pub(super) async fn check_trust(&self) -> Result<(), Withdrawn> {
        check(&self.spec).await
    }

    /// Whether the server is running (not stopped for good, not closed).
    pub(super) async fn is_up(&self) -> bool {
        matches!(&*self.link.lock().await, Link::Up { .. })
    }

    /// The trust no longer holds: stop the process (stdin closed, then SIGTERM, then SIGKILL)
    /// and keep it stopped for this run; later calls say why.
    pub(super) async fn withdraw(&self, why: &Withdrawn) {
        let message = format!("the plugin `{}` is not run: {why}", self.spec.name);
        let link = std::mem::replace(&mut *self.link.lock().await, Link::Down(message));
        if let Link::Up { mut session, .. } = link {
            tracing::warn!(server = %self.spec.name, "vault plugin stopped: {why}");
            if !matches!(session.close_with_timeout(CLOSE_TIMEOUT).await, Ok(Some(_))) {
                tracing::warn!(server = %self.spec.name, "the MCP server did not stop in time");
            }
        }
    }

    /// The server's name (its tools' prefix).
    pub(super) fn name(&self) -> &str {
        &self.spec.name
    }

    pub(super) async fn call(&self, tool: &str, args: Value) -> Result<CallToolResult, ToolError> {
        let name = &self.spec.name;
        let mut params = CallToolRequestParams::new(tool.to_string());
        match args {
            Value::Object(arguments) => params = params.with_arguments(arguments),
            Value::Null => {}
            other => {
                return Err(ToolError::Invalid(format!(
                    "the arguments of `{tool}` must be a JSON object, not {other}"
                )));
            }
        }
        let peer = self.peer().await?;
        // Dropping the request on a timeout makes rmcp send `notifications/cancelled`.
        match tokio::time::timeout(self.spec.call_timeout, peer.call_tool(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(error))) => Err(ToolError::Invalid(format!(
                "the MCP server `{name}` refused the call: {}",
                error.message
            ))),
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                let stderr = self.stderr().await;
                if let Some(stderr) = &stderr {
                    stderr.settled(STDERR_GRACE).await;
                }
                Err(ToolError::Internal(format!(
                    "the MCP server `{name}` exited while running `{tool}`{}; it is restarted on the next call",
                    said(stderr.and_then(|s| s.last()))
                )))
            }
            Ok(Err(error)) => Err(ToolError::Internal(format!(
                "the MCP server `{name}` did not answer `{tool}`: {error}"
            ))),
            Err(_) => Err(ToolError::Internal(format!(
                "`{tool}` on the MCP server `{name}` did not answer within {} s and was cancelled (timeout_secs in {})",
                self.spec.call_timeout.as_secs(),
                self.spec.config_table()
            ))),
        }
    }

    async fn stderr(&self) -> Option<Arc<StderrTail>> {
        match &*self.link.lock().await {
            Link::Up { stderr, .. } => Some(Arc::clone(stderr)),
            Link::Down(_) | Link::Closed => None,
        }
    }

    /// The session's peer; a server found dead is restarted once in a run.
    async fn peer(&self) -> Result<Peer<RoleClient>, ToolError> {
        let name = &self.spec.name;
        let mut link = self.link.lock().await;
        let (stderr, restarted) = match &*link {
            Link::Up { session, .. } if !session.is_transport_closed() => {
                return Ok(session.peer().clone());
            }
            Link::Up {
                stderr, restarted, ..
            } => (Arc::clone(stderr), *restarted),
            Link::Down(why) => return Err(ToolError::Internal(why.clone())),
            Link::Closed => {
                return Err(ToolError::Internal(format!(
                    "the MCP server `{name}` was shut down"
                )));
            }
        };
        stderr.settled(STDERR_GRACE).await;
        let died = format!(
            "the MCP server `{name}` (`{}`) exited{}",
            self.spec.command_line(),
            said(stderr.last())
        );
        if restarted {
            let why = format!(
                "{died}; it was restarted once already, so it stays stopped until vaultchat starts again"
            );
            *link = Link::Down(why.clone());
            return Err(ToolError::Internal(why));
        }
        tracing::warn!(server = %name, "{died}; restarting it");
        match start(&self.spec).await {
            Ok(started) => {
                let peer = started.session.peer().clone();
                *link = Link::Up {
                    session: started.session,
                    stderr: started.stderr,
                    restarted: true,
                };
                Ok(peer)
            }
            Err(message) => {
                let why = format!("{died}, and restarting it failed: {message}");
                *link = Link::Down(why.clone());
                Err(ToolError::Internal(why))
            }
        }
    }

    /// Close the session: stdin closed, the child waited for (SIGTERM, then SIGKILL, if it
    /// lingers). Later calls say it was shut down.
    pub(super) async fn close(&self) {
        let link = std::mem::replace(&mut *self.link.lock().await, Link::Closed);
        if let Link::Up { mut session, .. } = link {
            match session.close_with_timeout(CLOSE_TIMEOUT).await {
                Ok(Some(_)) => {}
                // The session task goes on; the child is killed when it is dropped.
                Ok(None) | Err(_) => {
                    tracing::warn!(server = %self.spec.name, "the MCP server did not stop in time")
                }
            }
        }
    }
}
