//! The MCP server over the tool registry.

use super::note_events::{NoteEvents, SessionSubscriptions};
use crate::tools::{Registry, ToolError, ToolOutput, ToolSpec};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, CustomRequest, CustomResult, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};
use std::sync::Arc;

const INSTRUCTIONS: &str = "Tools over one Markdown vault (an Obsidian-style folder of notes). \
Notes are named by vault-relative paths such as `Projects/Plan.md`; tools that take a note also \
accept an unambiguous title. Start with search_notes or list_notes, then read_note. Secrets in \
connections and environments are always redacted.";

/// An MCP server exposing a registry's tools (and, given the notes, resources and prompts).
#[derive(Clone)]
pub struct VaultServer {
    pub(super) registry: Registry,
    tools: Vec<Tool>,
    /// The vault's notes and their changes: resources, prompts and completions
    /// (`note_handlers.rs`). Without them only tools are served.
    pub(super) notes: Option<Arc<NoteEvents>>,
    /// The notes this connection's client subscribed to (2025-era `resources/subscribe`).
    pub(super) session: Arc<SessionSubscriptions>,
}

impl VaultServer {
    pub fn new(registry: Registry) -> Self {
        let tools = registry.specs().filter_map(to_mcp_tool).collect();
        Self {
            registry,
            tools,
            notes: None,
            session: Arc::default(),
        }
    }

    /// Also serve the vault's notes as resources, with prompts over them.
    pub fn with_notes(mut self, notes: Arc<NoteEvents>) -> Self {
        self.notes = Some(notes);
        self
    }

    /// The same server for another client connection: its own subscriptions.
    pub fn for_session(&self) -> Self {
        Self {
            session: Arc::default(),
            ..self.clone()
        }
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
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        if self.notes.is_some() {
            super::note_handlers::add_note_capabilities(&mut capabilities);
        }
        ServerConfig::new(capabilities)
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
            // A plugin's (or another server's) result goes out as the plugin gave it.
            Ok(ToolOutput {
                served: Some(served),
                ..
            }) => serde_json::from_value::<CallToolResult>(served)
                .map(|mut result| {
                    // A plugin of an older protocol era sends no `resultType`; a 2026-era client
                    // needs it (rmcp strips it again for older clients). Nothing else changes.
                    result
                        .result_type
                        .get_or_insert(rmcp::model::ResultType::COMPLETE);
                    result.into()
                })
                .map_err(|e| {
                    bounded(McpError::internal_error(
                        format!("the plugin's result could not be passed on: {e}"),
                        None,
                    ))
                }),
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
                // `null` is "no structured content": sent as such, rmcp would put a text block
                // `null` before the content for a client of an older protocol version.
                result.structured_content =
                    (!output.structured.is_null()).then_some(output.structured);
                Ok(result.into())
            }
            // The caller's mistake: a result the model can read and act on.
            Err(ToolError::Invalid(message)) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(
                    crate::quote::shorten_echoes(&message).into_owned(),
                )])
                .into())
            }
            Err(ToolError::Internal(message)) => {
                tracing::error!(tool = %request.name, error = %message, "tool failed");
                Err(bounded(McpError::internal_error(message, None)))
            }
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.notes_list(request).await.map_err(bounded)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.notes_templates().map_err(bounded)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.notes_read(request.uri)
            .await
            .map(Into::into)
            .map_err(bounded)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.notes_subscribe(request.uri, context.peer)
            .await
            .map_err(bounded)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.notes_unsubscribe(&request.uri).map_err(bounded)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.notes_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.notes_listen(context).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.notes_prompts().map_err(bounded)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.notes_prompt(request)
            .await
            .map(Into::into)
            .map_err(bounded)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.notes_complete(request).await.map_err(bounded)
    }

    /// A 2025-era client finished its handshake: tell it when notes appear or go.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.forward_to(context.peer);
    }

    /// rmcp sends a request here when it cannot read it as a typed request: an unknown method,
    /// or a known one with params of the wrong shape (`tools/call` with a number for `name`).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(bounded(untyped_request_error(
            &request.method,
            request.params.as_ref(),
        )))
    }
}

/// The requests of MCP clients that rmcp parses into typed requests. One of them that reaches
/// [`ServerHandler::on_custom_request`] has params rmcp could not read.
const MCP_REQUEST_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// The answer to a request rmcp could not type: -32602 (invalid params) for a known method whose
/// params do not fit — saying which param of `tools/call` is wrong — and -32601 (method not
/// found) for anything else.
fn untyped_request_error(method: &str, params: Option<&Value>) -> McpError {
    if method == "tools/call" {
        return McpError::invalid_params(tools_call_problem(params), None);
    }
    if MCP_REQUEST_METHODS.contains(&method) {
        return McpError::invalid_params(
            format!("the params of `{method}` do not have the shape MCP gives them"),
            None,
        );
    }
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        crate::quote::shorten(method).into_owned(),
        None,
    )
}

/// Every error the server answers quotes at most [`crate::quote::MAX_QUOTED_CHARS`] characters
/// of any argument it echoes, in its message and in its data (the rule the tool registry applies
/// to tool errors, here for prompts, completions, resources and untyped requests alike): a 1 MiB
/// argument comes back as its first 200 characters and its length.
pub(super) fn bounded(mut error: McpError) -> McpError {
    if let std::borrow::Cow::Owned(short) = crate::quote::shorten_echoes(&error.message) {
        error.message = short.into();
    }
    if let Some(data) = error.data.as_mut() {
        shorten_strings(data);
    }
    error
}

fn shorten_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(short) = crate::quote::shorten(text) {
                *text = short;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(shorten_strings),
        Value::Object(map) => map.values_mut().for_each(shorten_strings),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// What is wrong with the params of a `tools/call` rmcp could not read.
fn tools_call_problem(params: Option<&Value>) -> String {
    let shape = "`tools/call` takes params {\"name\": \"TOOL\", \"arguments\": {…}}";
    let Some(Value::Object(params)) = params else {
        return format!("{shape}; the params are missing or not an object");
    };
    match params.get("name") {
        None => return format!("{shape}; `params.name` is missing"),
        Some(Value::String(_)) => {}
        Some(other) => {
            return format!(
                "`params.name` must be a string (the tool's name), not {}",
                json_type(other)
            );
        }
    }
    match params.get("arguments") {
        Some(other @ (Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_))) => {
            format!(
                "`params.arguments` must be an object of the tool's arguments, not {}",
                json_type(other)
            )
        }
        _ => format!("{shape}; the params do not fit it"),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Serve over stdin/stdout until the client disconnects. Every line passes
/// [`super::stdio_filter`] first, which answers lines that are not JSON (-32700) and lines over
/// the size limit itself; rmcp would drop both without a word.
pub async fn serve_stdio(server: VaultServer) -> Result<(), String> {
    match pipes() {
        // MCP clients connect through pipes: read and write them with non-blocking I/O on the
        // runtime itself. tokio's stdin/stdout go through its blocking thread pool, a thread
        // hand-off per read and write (measured: about a fifth of a read_note round trip).
        Some((reader, writer)) => serve_filtered(server, reader, writer).await,
        // A terminal or a file: the portable path.
        None => serve_filtered(server, tokio::io::stdin(), tokio::io::stdout()).await,
    }
}

async fn serve_filtered<R, W>(server: VaultServer, input: R, output: W) -> Result<(), String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (transport, filter) = super::stdio_filter::splice(input, output);
    let result = serve_on(server, transport).await;
    filter.finish().await;
    result
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_tools_call_params_are_invalid_params_naming_the_field() {
        let cases = [
            (
                json!({"name": 5, "arguments": {}}),
                "`params.name` must be a string (the tool's name), not a number",
            ),
            (
                json!({"name": null}),
                "`params.name` must be a string (the tool's name), not null",
            ),
            (json!({"arguments": {}}), "`params.name` is missing"),
            (
                json!({"name": "read_note", "arguments": [1]}),
                "`params.arguments` must be an object of the tool's arguments, not an array",
            ),
            (
                json!({"name": "read_note", "arguments": "x"}),
                "not a string",
            ),
            (json!([1]), "the params are missing or not an object"),
        ];
        for (params, expected) in cases {
            let error = untyped_request_error("tools/call", Some(&params));
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{params}");
            assert!(
                error.message.contains(expected),
                "{params}: {}",
                error.message
            );
        }
        let error = untyped_request_error("tools/list", Some(&json!({"cursor": 5})));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        let error = untyped_request_error("frobnicate", None);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(error.message, "frobnicate");
    }
}
