//! LLM provider clients: Anthropic Messages and OpenAI-compatible chat completions, streamed over
//! SSE, with the official SDKs' retry policy (docs/protocols.md §1–§4).
//!
//! The parts that decide anything are pure and tested on bytes: [`sse`] frames the stream, the
//! `anthropic` and `openai` accumulators turn events into a [`Response`], `retry` decides
//! whether and when to try again. This file is the thin HTTP layer around them.

mod anthropic;
mod error;
pub mod models;
mod openai;
mod request_id;
mod retry;
pub mod sse;
pub mod tokens;
mod types;
pub mod window;

pub use error::LlmError;
pub use types::{
    Block, Message, Request, Response, ResultPart, Role, StopReason, StreamEvent, ToolDef, Usage,
};

use crate::config::http;
use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use sse::{SseEvent, SseParser};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// Which wire format a provider speaks (defined beside the config that names it).
pub use crate::config::ProviderKind;

/// How to reach a provider.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// The wire format.
    pub kind: ProviderKind,
    /// Anthropic: without `/v1` (the client appends `/v1/messages`); OpenAI: ends in `/v1` (the
    /// client appends `/chat/completions`). A trailing `/` is tolerated.
    pub base_url: String,
    /// Sent as `x-api-key` (Anthropic) or `Authorization: Bearer` (OpenAI) when set.
    pub api_key: Option<String>,
    /// The longest wait for a TCP/TLS connection.
    pub connect_timeout: Duration,
    /// The longest silence allowed while waiting for the response headers and between two
    /// received chunks once the body started.
    pub idle_timeout: Duration,
    /// Retries after a failure before the first byte of a successful body.
    pub max_retries: u32,
    /// With `[privacy] local_only`: the host's addresses, checked to be local; the client
    /// connects to these and never resolves the name again.
    pub pinned: Option<crate::config::locality::PinnedHost>,
    /// Anthropic extended thinking: tokens the model may think in before answering; 0 is off.
    /// (OpenAI-compatible servers decide about reasoning themselves; their reasoning is read.)
    pub thinking_budget: u32,
}

impl ProviderSettings {
    /// The default connect timeout (as the official SDKs).
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
    /// The default idle timeout.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
    /// The default number of retries (as the official SDKs).
    pub const DEFAULT_MAX_RETRIES: u32 = 2;

    /// Settings with the default timeouts and retries.
    pub fn new(kind: ProviderKind, base_url: impl Into<String>, api_key: Option<String>) -> Self {
        Self {
            kind,
            base_url: base_url.into(),
            api_key,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            max_retries: Self::DEFAULT_MAX_RETRIES,
            pinned: None,
            thinking_budget: 0,
        }
    }
}

/// Turns the SSE events of one response into a [`Response`]; implemented once per wire format.
trait StreamAccumulator {
    /// Take one event; returns the live events it produced, or the error the stream reported.
    fn push(&mut self, event: SseEvent) -> Result<Vec<StreamEvent>, LlmError>;
    /// The stream's final event arrived; the rest of the body does not matter.
    fn is_complete(&self) -> bool;
    /// The stream ended (or completed): the response, or why it is unusable.
    fn finish(self) -> Result<Response, LlmError>;
}

/// A client for one provider.
#[derive(Debug, Clone)]
pub struct Provider {
    client: reqwest::Client,
    settings: ProviderSettings,
}

impl Provider {
    /// Build the HTTP client. Fails only on an unusable base URL or TLS setup.
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let bad_url = |message: String| LlmError::BadBaseUrl {
            url: settings.base_url.clone(),
            message,
        };
        let url = reqwest::Url::parse(&settings.base_url).map_err(|e| bad_url(e.to_string()))?;
        // `localhost:11434/v1` parses as a URL with the scheme `localhost`.
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad_url("it must start with http:// or https://".into()));
        }
        // Streams run for minutes: the gaps between chunks are bounded (`idle_timeout`), not
        // the whole request.
        let client = http::client(http::ClientOptions {
            connect_timeout: settings.connect_timeout,
            timeout: None,
            pinned: settings.pinned.as_ref(),
        })
        .map_err(|e| LlmError::Setup(e.to_string()))?;
        Ok(Self { client, settings })
    }

    /// The wire format this provider speaks.
    pub fn kind(&self) -> ProviderKind {
        self.settings.kind
    }

    /// Where and how this provider is reached (to ask its server about a model).
    pub fn settings(&self) -> &ProviderSettings {
        &self.settings
    }

    /// Send `request` with streaming; forward live events through `events` (send errors are
    /// ignored: a closed receiver only means nobody watches); return the complete response.
    /// Dropping the future cancels the HTTP request (that is how the agent interrupts). Retries
    /// happen inside, only before the first byte of a 2xx body was received. When the server
    /// reported no usage, the response carries an estimate, marked as one.
    pub async fn complete(
        &self,
        request: &Request,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Response, LlmError> {
        let mut response = self.stream_response(request, events).await?;
        tokens::estimate_missing_usage(request, &mut response);
        Ok(response)
    }

    /// The response as the server streamed it.
    async fn stream_response(
        &self,
        request: &Request,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Response, LlmError> {
        let encode = |e: serde_json::Error| LlmError::Encode(e.to_string());
        match self.settings.kind {
            ProviderKind::Anthropic => {
                let url = anthropic::messages_url(&self.settings.base_url);
                let body = anthropic::request_body(request, self.settings.thinking_budget)
                    .map_err(encode)?;
                let (response, request_id) = self.send(&url, body).await?;
                self.read_stream(
                    response,
                    anthropic::AnthropicStream::new(Some(request_id.clone())),
                    request_id,
                    events,
                )
                .await
            }
            ProviderKind::OpenAi => {
                let url = openai::completions_url(&self.settings.base_url);
                let names = openai::ToolNames::for_request(request);
                let body = openai::request_body(
                    request,
                    &names,
                    openai::is_openai_host(&self.settings.base_url),
                )
                .map_err(encode)?;
                let (response, request_id) = self.send(&url, body).await?;
                self.read_stream(
                    response,
                    openai::OpenAiStream::new(names, Some(request_id.clone())),
                    request_id,
                    events,
                )
                .await
            }
        }
    }

    fn post(&self, url: &str, body: Bytes, client_request_id: &str) -> reqwest::RequestBuilder {
        let builder = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(request_id::CLIENT_REQUEST_ID_HEADER, client_request_id)
            .body(body);
        let builder = match self.settings.kind {
            ProviderKind::Anthropic => builder.header("anthropic-version", anthropic::API_VERSION),
            ProviderKind::OpenAi => builder,
        };
        match (self.settings.kind, self.settings.api_key.as_deref()) {
            (ProviderKind::Anthropic, Some(key)) => builder.header("x-api-key", key),
            (ProviderKind::OpenAi, Some(key)) => builder.bearer_auth(key),
            (_, None) => builder,
        }
    }

    /// POST until a 2xx response's headers arrive, retrying per the policy in `retry`. Returns
    /// the response with the id to quote for it: the server's own, or else the
    /// `X-Client-Request-Id` this attempt was sent with.
    async fn send(&self, url: &str, body: String) -> Result<(reqwest::Response, String), LlmError> {
        // Shared, so each attempt re-sends the (possibly image-heavy) body without copying it.
        let body = Bytes::from(body);
        let idle = self.settings.idle_timeout;
        let mut retries = 0;
        loop {
            let client_id = request_id::new_client_request_id();
            let attempt = self.post(url, body.clone(), &client_id).send();
            let sent = tokio::time::timeout(idle, attempt).await;
            let failure = match sent {
                Ok(Ok(response)) if response.status().is_success() => {
                    let id = request_id::server_request_id(response.headers()).unwrap_or(client_id);
                    return Ok((response, id));
                }
                // Never followed, never retried: the next attempt would be redirected too
                // (`config::http`).
                Ok(Ok(response)) if http::is_redirect(&response) => {
                    return Err(LlmError::Redirected(http::refusal(
                        &response,
                        http::Server::Provider,
                        self.settings.pinned.is_some(),
                    )));
                }
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    let headers = response.headers().clone();
                    let text = error_body_text(response, idle).await;
                    let parsed = error::parse_error_body(&text);
                    let error = LlmError::Status {
                        status,
                        error_type: parsed.error_type,
                        code: parsed.code,
                        message: parsed.message,
                        request_id: request_id::server_request_id(&headers).or(parsed.request_id),
                        retries,
                    };
                    let retryable = retry::is_retryable_status(status, &headers, &text);
                    (error, retryable, Some(headers))
                }
                // The request itself cannot be built (e.g. a control character in the API key):
                // no attempt will do better.
                Ok(Err(e)) if e.is_builder() => {
                    return Err(LlmError::Setup(transport_message(&e)));
                }
                Ok(Err(e)) => {
                    let error = LlmError::Unreachable {
                        url: url.to_string(),
                        message: transport_message(&e),
                        retries,
                    };
                    (error, true, None)
                }
                Err(_) => (
                    LlmError::NoAnswer {
                        url: url.to_string(),
                        idle,
                        retries,
                    },
                    true,
                    None,
                ),
            };
            let (error, retryable, headers) = failure;
            if !retryable || retries >= self.settings.max_retries {
                return Err(error);
            }
            let wait = retry::retry_wait(retries, headers.as_ref(), retry::jitter_sample());
            tracing::warn!(%error, retry = retries + 1, wait_ms = wait.as_millis() as u64, "retrying the provider request");
            tokio::time::sleep(wait).await;
            retries += 1;
        }
    }

    /// Read the body chunk by chunk into `accumulator`, forwarding live events. `request_id` is
    /// the id errors quote.
    async fn read_stream<A: StreamAccumulator>(
        &self,
        mut response: reqwest::Response,
        mut accumulator: A,
        request_id: String,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Response, LlmError> {
        let idle = self.settings.idle_timeout;
        let request_id = Some(request_id);
        if is_json(response.headers()) {
            // A 200 with a JSON body is not a stream: a proxy or server that ignored `stream`.
            let text = error_body_text(response, idle).await;
            let parsed = error::parse_error_body(&text);
            return Err(LlmError::Malformed {
                message: format!(
                    "it answered with JSON instead of an event stream: {}",
                    parsed.message
                ),
                request_id,
            });
        }
        let mut parser = SseParser::new();
        let forward = |accumulator: &mut A, parsed: Vec<SseEvent>| -> Result<(), LlmError> {
            for event in parsed {
                for live in accumulator.push(event)? {
                    // A closed receiver means nobody watches the live text; keep reading.
                    let _ = events.send(live);
                }
            }
            Ok(())
        };
        while !accumulator.is_complete() {
            let chunk = match tokio::time::timeout(idle, response.chunk()).await {
                Err(_) => return Err(LlmError::Idle { idle, request_id }),
                Ok(Err(e)) => {
                    return Err(LlmError::Broken {
                        message: transport_message(&e),
                        request_id,
                    });
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            forward(&mut accumulator, parser.feed(&chunk))?;
        }
        if !accumulator.is_complete() {
            forward(&mut accumulator, parser.finish())?;
        }
        accumulator.finish()
    }
}

/// The body of a response that is not a stream (an error, or JSON where a stream was asked
/// for), as text; empty when it does not arrive within `idle` or cannot be read.
async fn error_body_text(response: reqwest::Response, idle: Duration) -> String {
    tokio::time::timeout(idle, response.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("application/json"))
}

/// A transport error with its causes (reqwest's own message is often just "error sending
/// request").
fn transport_message(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    //! The HTTP layer against a loopback fake server that writes raw HTTP/1.1 responses in
    //! pieces, so retries, timeouts and headers are exercised without the network.
    use super::*;
    use crate::llm::sse::tests::fixture;
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// One canned answer: the status line and headers, then body pieces, then either close the
    /// connection or stall with it open.
    struct Reply {
        head: String,
        pieces: Vec<Vec<u8>>,
        stall: bool,
    }

    impl Reply {
        fn new(status: &str, headers: &[&str], body: &[u8], piece: usize) -> Self {
            let mut head = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
            for header in headers {
                head.push_str(header);
                head.push_str("\r\n");
            }
            head.push_str("\r\n");
            Self {
                head,
                pieces: body.chunks(piece.max(1)).map(<[u8]>::to_vec).collect(),
                stall: false,
            }
        }

        fn stalling(mut self) -> Self {
            self.stall = true;
            self
        }
    }

    /// Serve `replies` in order, one per connection (each on its own task, so a stalled reply
    /// does not hold up the next attempt); record each request (head and body). Connections
    /// beyond the replies are recorded and dropped, so a test sees any extra retry.
    async fn fake_server(replies: Vec<Reply>) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        tokio::spawn(async move {
            let mut replies = replies.into_iter();
            while let Ok((mut socket, _)) = listener.accept().await {
                let reply = replies.next();
                let record = record.clone();
                tokio::spawn(async move {
                    let request = read_request(&mut socket).await;
                    record.lock().unwrap().push(request);
                    let Some(reply) = reply else {
                        return;
                    };
                    socket.write_all(reply.head.as_bytes()).await.unwrap();
                    for piece in &reply.pieces {
                        if socket.write_all(piece).await.is_err() {
                            break;
                        }
                        let _ = socket.flush().await;
                        tokio::task::yield_now().await;
                    }
                    if reply.stall {
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                });
            }
        });
        (base, seen)
    }

    async fn read_request(socket: &mut tokio::net::TcpStream) -> String {
        let mut bytes = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            let n = socket.read(&mut buffer).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&bytes).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().to_string())
                    })
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                if bytes.len() >= end + 4 + length {
                    break;
                }
            }
        }
        String::from_utf8_lossy(&bytes).to_string()
    }

    /// The error when the Anthropic server answers with `part` of the recorded tool-use stream,
    /// and the requests the server saw.
    async fn error_of_partial_stream(
        part: impl FnOnce(&'static str) -> Reply,
    ) -> (LlmError, Arc<Mutex<Vec<String>>>) {
        let text = std::str::from_utf8(fixture("anthropic_stream_tool_use.official")).unwrap();
        error_against(ProviderKind::Anthropic, vec![part(text)]).await
    }

    /// The error a provider of `kind` ends a completion of `hello()` with against a server that
    /// gives `replies`, and the requests the server saw.
    async fn error_against(
        kind: ProviderKind,
        replies: Vec<Reply>,
    ) -> (LlmError, Arc<Mutex<Vec<String>>>) {
        let (base, seen) = fake_server(replies).await;
        (error_of(settings(kind, &base)).await, seen)
    }

    /// Check the sentence an error reads as and how many requests the server saw.
    fn assert_reported(
        error: &LlmError,
        seen: &Mutex<Vec<String>>,
        sentence: &str,
        requests: usize,
    ) {
        assert_eq!(error.to_string(), sentence);
        assert_eq!(seen.lock().unwrap().len(), requests);
    }

    /// The error a provider with `settings` ends a completion of `hello()` with.
    async fn error_of(settings: ProviderSettings) -> LlmError {
        let provider = Provider::new(settings).unwrap();
        let (sender, _receiver) = tokio::sync::mpsc::unbounded_channel();
        provider.complete(&hello(), &sender).await.unwrap_err()
    }

    fn settings(kind: ProviderKind, base: &str) -> ProviderSettings {
        let mut settings = ProviderSettings::new(kind, base, Some("sk-test".into()));
        settings.idle_timeout = Duration::from_millis(300);
        settings
    }

    fn hello() -> Request {
        Request {
            model: "m".into(),
            max_tokens: 100,
            system: "sys".into(),
            tools: Vec::new(),
            messages: vec![Message {
                role: Role::User,
                content: vec![Block::Text { text: "hi".into() }],
            }],
        }
    }

    const SSE: &str = "content-type: text/event-stream";

    #[tokio::test]
    async fn anthropic_overload_is_retried_then_the_stream_is_read() {
        let (base, seen) = fake_server(vec![
            Reply::new(
                "529 Overloaded",
                &["content-type: application/json", "retry-after-ms: 5"],
                br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                4096,
            ),
            Reply::new(
                "200 OK",
                &[SSE, "request-id: req_test"],
                fixture("anthropic_stream_tool_use.official"),
                7,
            ),
        ])
        .await;
        let provider = Provider::new(settings(ProviderKind::Anthropic, &base)).unwrap();
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let response = provider.complete(&hello(), &sender).await.unwrap();
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.request_id.as_deref(), Some("req_test"));
        assert_eq!(response.content.len(), 2);
        let mut text = String::new();
        while let Ok(event) = receiver.try_recv() {
            if let StreamEvent::TextDelta(delta) = event {
                text.push_str(&delta);
            }
        }
        assert_eq!(text, "Okay, let's check the weather for San Francisco, CA:");

        let requests = seen.lock().unwrap().clone();
        assert_eq!(requests.len(), 2);
        let request = requests[1].to_lowercase();
        assert!(
            request.starts_with("post /v1/messages http/1.1\r\n"),
            "{request}"
        );
        assert!(request.contains("\r\nx-api-key: sk-test\r\n"));
        assert!(request.contains("\r\nanthropic-version: 2023-06-01\r\n"));
        assert!(request.contains("\r\ncontent-type: application/json\r\n"));
        let body = requests[1].split("\r\n\r\n").nth(1).unwrap();
        assert_eq!(body, anthropic::request_body(&hello(), 0).unwrap());
    }

    #[tokio::test]
    async fn a_401_is_not_retried_and_reads_as_one_sentence() {
        let (error, seen) = error_against(ProviderKind::Anthropic, vec![Reply::new(
            "401 Unauthorized",
            &["content-type: application/json", "request-id: req_401"],
            br#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_401"}"#,
            4096,
        )]).await;
        assert_eq!(
            error.to_string(),
            "the provider rejected the API key (HTTP 401 authentication_error: invalid x-api-key; request req_401)"
        );
        // No wait needed: `complete` has returned, and the server records each request before
        // it answers or drops it, so a retry would already be counted here.
        assert_eq!(seen.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn retries_stop_at_max_retries() {
        let overloaded = || {
            Reply::new(
                "503 Service Unavailable",
                &["retry-after-ms: 1"],
                b"busy",
                4096,
            )
        };
        let (error, seen) = error_against(
            ProviderKind::OpenAi,
            vec![overloaded(), overloaded(), overloaded()],
        )
        .await;
        assert!(
            matches!(
                error,
                LlmError::Status {
                    status: 503,
                    retries: 2,
                    ..
                }
            ),
            "{error:?}"
        );
        assert_reported(
            &error,
            &seen,
            "the provider had an internal error (HTTP 503: busy) and still was after 2 retries; try again shortly",
            3,
        );
    }

    #[tokio::test]
    async fn a_silent_stream_times_out_and_is_not_retried() {
        let (error, seen) = error_of_partial_stream(|text| {
            let half = &text.as_bytes()[..text.len() / 2];
            Reply::new("200 OK", &[SSE, "request-id: req_slow"], half, 64).stalling()
        })
        .await;
        assert!(matches!(error, LlmError::Idle { .. }), "{error:?}");
        assert_reported(
            &error,
            &seen,
            "no data from the provider for 300 ms (request req_slow)",
            1,
        );
    }

    #[tokio::test]
    async fn a_stream_closed_early_is_incomplete() {
        let (error, _seen) = error_of_partial_stream(|text| {
            let cut = text.split("event: message_stop").next().unwrap();
            Reply::new("200 OK", &[SSE], cut.as_bytes(), 13)
        })
        .await;
        assert!(matches!(error, LlmError::Incomplete { .. }), "{error:?}");
    }

    #[tokio::test]
    async fn an_empty_stream_quotes_the_servers_request_id() {
        let head = [
            "content-type: text/event-stream; charset=utf-8",
            "x-request-id: 9fd730e80bb64c4f9a9fa8dc8649b593",
        ];
        let (error, seen) = error_against(
            ProviderKind::OpenAi,
            vec![Reply::new("200 OK", &head, b"", 1)],
        )
        .await;
        assert!(matches!(error, LlmError::EmptyStream { .. }), "{error:?}");
        assert_eq!(error.request_id(), Some("9fd730e80bb64c4f9a9fa8dc8649b593"));
        // Not retried: the server ran the request.
        assert_eq!(seen.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn without_a_server_id_the_client_request_id_is_quoted() {
        let (error, seen) = error_against(
            ProviderKind::Anthropic,
            vec![Reply::new("200 OK", &[SSE], b"", 1)],
        )
        .await;
        let request = seen.lock().unwrap()[0].to_lowercase();
        let sent = request
            .lines()
            .find_map(|line| line.strip_prefix("x-client-request-id: "))
            .unwrap()
            .to_string();
        assert!(sent.starts_with("vaultchat-"), "{sent}");
        assert_eq!(error.request_id(), Some(sent.as_str()));
        assert!(
            error.to_string().ends_with(&format!("(request {sent})")),
            "{error}"
        );
    }

    #[tokio::test]
    async fn openai_streams_with_a_bearer_key() {
        let (base, seen) = fake_server(vec![Reply::new(
            "200 OK",
            &[SSE, "x-request-id: req_oa"],
            fixture("openai_stream_parallel_tool_calls.recorded"),
            13,
        )])
        .await;
        let provider =
            Provider::new(settings(ProviderKind::OpenAi, &format!("{base}/v1/"))).unwrap();
        assert_eq!(provider.kind(), ProviderKind::OpenAi);
        let (sender, _receiver) = tokio::sync::mpsc::unbounded_channel();
        let response = provider.complete(&hello(), &sender).await.unwrap();
        assert_eq!(response.content.len(), 2);
        assert_eq!(response.request_id.as_deref(), Some("req_oa"));
        let request = seen.lock().unwrap()[0].to_lowercase();
        assert!(
            request.starts_with("post /v1/chat/completions http/1.1\r\n"),
            "{request}"
        );
        assert!(request.contains("\r\nauthorization: bearer sk-test\r\n"));
        assert!(request.contains(r#""max_tokens":100"#));
    }

    #[tokio::test]
    async fn a_json_body_instead_of_a_stream_is_reported() {
        let (error, _seen) = error_against(
            ProviderKind::OpenAi,
            vec![Reply::new(
                "200 OK",
                &["content-type: application/json"],
                br#"{"error":{"message":"streaming is disabled"}}"#,
                4096,
            )],
        )
        .await;
        let text = error.to_string();
        assert!(
            text.starts_with(
                "the provider sent a response vaultchat cannot read: it answered with JSON instead of an event stream: streaming is disabled (request vaultchat-"
            ),
            "{text}"
        );
    }

    #[tokio::test]
    async fn an_unreachable_server_is_retried_then_named() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let mut settings = settings(ProviderKind::Anthropic, &base);
        settings.max_retries = 1;
        let error = error_of(settings).await;
        assert!(
            matches!(error, LlmError::Unreachable { retries: 1, .. }),
            "{error:?}"
        );
        let text = error.to_string();
        assert!(
            text.starts_with(&format!(
                "could not reach the provider at {base}/v1/messages ("
            )),
            "{text}"
        );
        assert!(
            text.ends_with(" and still after 1 retry; check the base URL and the network"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_server_that_never_answers_times_out() {
        let silent = || Reply {
            head: String::new(),
            pieces: Vec::new(),
            stall: true,
        };
        let (base, seen) = fake_server(vec![silent(), silent()]).await;
        let mut settings = settings(ProviderKind::OpenAi, &base);
        settings.max_retries = 1;
        let error = error_of(settings).await;
        assert_reported(
            &error,
            &seen,
            &format!(
                "no answer from the provider at {base}/chat/completions for 300 ms and still after 1 retry"
            ),
            2,
        );
    }

    #[tokio::test]
    async fn an_api_key_that_cannot_be_a_header_fails_without_retrying() {
        let (base, seen) = fake_server(Vec::new()).await;
        let mut settings = settings(ProviderKind::Anthropic, &base);
        settings.api_key = Some("sk-ant\nbroken".into());
        let error = error_of(settings).await;
        assert!(matches!(error, LlmError::Setup(_)), "{error:?}");
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn a_base_url_that_is_no_url_is_refused() {
        let error = Provider::new(ProviderSettings::new(
            ProviderKind::OpenAi,
            "localhost:11434/v1",
            None,
        ))
        .unwrap_err();
        assert!(matches!(error, LlmError::BadBaseUrl { .. }), "{error:?}");
    }
}
