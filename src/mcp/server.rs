//! The MCP server over the tool registry.

use crate::tools::{Registry, ToolError, ToolSpec};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};

const INSTRUCTIONS: &str = "Tools over one Markdown vault (an Obsidian-style folder of notes). \
Notes are named by vault-relative paths such as `Projects/Plan.md`; tools that take a note also \
accept an unambiguous title. Start with search_notes or list_notes, then read_note. Secrets in \
connections and environments are always redacted.";

/// An MCP server exposing a registry's tools.
#[derive(Clone)]
pub struct VaultServer {
    registry: Registry,
    tools: Vec<Tool>,
}

impl VaultServer {
    pub fn new(registry: Registry) -> Self {
        let tools = registry.specs().filter_map(to_mcp_tool).collect();
        Self { registry, tools }
    }

    /// The tools as MCP clients see them.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }
}

/// An MCP `Tool` from a spec. rmcp's model structs are non-exhaustive, so they are built from
/// their JSON form.
fn to_mcp_tool(spec: &ToolSpec) -> Option<Tool> {
    let value = json!({
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "annotations": {
            "title": spec.title,
            "readOnlyHint": spec.annotations.read_only_hint,
            "destructiveHint": spec.annotations.destructive_hint,
            "idempotentHint": spec.annotations.idempotent_hint,
            "openWorldHint": spec.annotations.open_world_hint,
        },
    });
    match serde_json::from_value(value) {
        Ok(tool) => Some(tool),
        Err(e) => {
            tracing::error!(tool = %spec.name, error = %e, "tool spec is not a valid MCP tool");
            None
        }
    }
}

impl ServerHandler for VaultServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("vaultchat", env!("CARGO_PKG_VERSION"))
                    .with_title("vaultchat vault tools"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // Debug, not info: a read costs a log write per call; writes are in the revision log anyway.
        tracing::debug!(tool = %request.name, "mcp tools/call");
        match self.registry.call(&request.name, args).await {
            Ok(output) => {
                let content = std::iter::once(ContentBlock::text(output.text))
                    .chain(
                        output
                            .images
                            .into_iter()
                            .map(|image| ContentBlock::image(image.data, image.media_type)),
                    )
                    .collect();
                let mut result = CallToolResult::success(content);
                result.structured_content = Some(output.structured);
                Ok(result.into())
            }
            // The caller's mistake: a result the model can read and act on.
            Err(ToolError::Invalid(message)) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into())
            }
            Err(ToolError::Internal(message)) => {
                tracing::error!(tool = %request.name, error = %message, "tool failed");
                Err(McpError::internal_error(message, None))
            }
        }
    }
}

/// Serve over stdin/stdout until the client disconnects.
pub async fn serve_stdio(server: VaultServer) -> Result<(), String> {
    match pipes() {
        // MCP clients connect through pipes: read and write them with non-blocking I/O on the
        // runtime itself. tokio's stdin/stdout go through its blocking thread pool, a thread
        // hand-off per read and write (measured: about a fifth of a read_note round trip).
        Some((reader, writer)) => serve_on(server, (reader, writer)).await,
        // A terminal or a file: the portable path.
        None => serve_on(server, rmcp::transport::stdio()).await,
    }
}

/// stdin and stdout as non-blocking pipes, when both are pipes.
fn pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::AsFd;
    let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    // `from_file` checks that each is a FIFO before switching it to non-blocking mode.
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(stdin).ok()?;
    let writer = tokio::net::unix::pipe::Sender::from_owned_fd(stdout).ok()?;
    Some((reader, writer))
}

async fn serve_on<T, E, A>(server: VaultServer, transport: T) -> Result<(), String>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // A stateless (2026-07-28) client never sends `initialize`; rmcp serves its requests and
        // then reports the closed connection as an initialisation failure. That is a clean end.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(format!("MCP session failed to start: {e}")),
    };
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("MCP session ended with an error: {e}"))
}
