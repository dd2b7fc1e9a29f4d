//! A scripted fake LLM provider for integration tests: it speaks the Anthropic Messages and the
//! OpenAI chat-completions streaming wire formats (docs/protocols.md §1.2, §1.4, §2.2).
//!
//! The tests are plain `#[test]` functions that spawn the real `vaultchat` binary, so the server runs
//! on its own thread with its own tokio runtime and is reached over HTTP on 127.0.0.1. Each POST gets
//! the next scripted [`Reply`]; every request is recorded before it is answered so a test can assert
//! on what the client sent even when the reply makes the client fail.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use futures_util::stream::{self, Stream, StreamExt};
use serde_json::{Value, json};

/// The pause between two chunks of a streamed body, so that each chunk leaves the server in its own
/// write and reaches the client in its own read.
const CHUNK_PAUSE: Duration = Duration::from_millis(1);

/// How the bytes of an SSE body are split into separate writes.
#[derive(Debug, Clone)]
pub enum Chunking {
    /// The whole body in one write.
    Whole,
    /// Writes of this many bytes (0 counts as 1); splits fall inside UTF-8 characters and lines.
    Fixed(usize),
    /// Writes whose sizes repeat this cycle (zeros are skipped; an empty cycle is [`Chunking::Whole`]).
    Cycle(Vec<usize>),
}

/// One scripted answer to one POST.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200, content-type text/event-stream, a `request-id: req_fake_N` header, body split per chunking.
    Sse { body: Vec<u8>, chunking: Chunking },
    /// Any status with headers and a body (JSON error bodies, retry-after, an HTML 413 …). Without a
    /// content-type header the server sends application/json for a JSON body and text/plain otherwise.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// 200 SSE: send `prefix` and then never send another byte nor close (a stall).
    Stall { prefix: Vec<u8> },
    /// 200 SSE: send `prefix` and then abort the connection (the body stream yields an error so hyper
    /// drops the connection without the final empty chunk).
    Reset { prefix: Vec<u8> },
    /// A recorded response replayed: the status and headers of `head` (a `.headers` file: the
    /// status line, then `name: value` lines as received; the framing headers `transfer-encoding`,
    /// `content-length` and `connection` are left to the server), then `body` per chunking (zero
    /// bytes: the headers, then the end of the body). See [`recorded`].
    Recorded {
        head: String,
        body: Vec<u8>,
        chunking: Chunking,
    },
}

/// One request the fake server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The request path, e.g. `/v1/messages`.
    pub path: String,
    /// Header names in lower case; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON, or `Value::Null` when it is not JSON.
    pub body: Value,
    /// The body as text (lossy UTF-8).
    pub raw_body: String,
}

impl Recorded {
    /// The request's messages as (role, every text of the message joined by newlines), in
    /// either wire format (a string content or blocks); OpenAI's system message included.
    pub fn messages(&self) -> Vec<(String, String)> {
        self.body["messages"]
            .as_array()
            .map(|messages| {
                messages
                    .iter()
                    .map(|m| {
                        let role = m["role"].as_str().unwrap_or_default().to_string();
                        (role, content_text(&m["content"]))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every text of the last message of the person's, joined.
    pub fn last_user_text(&self) -> String {
        self.messages()
            .into_iter()
            .rev()
            .find(|(role, _)| role == "user")
            .map(|(_, text)| text)
            .unwrap_or_default()
    }
}

/// A message's content as text: the string, or its text blocks joined by newlines.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// An answer computed from each request (a server that behaves, rather than a script).
pub type Responder = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

/// What the server thread shares with the test.
#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    /// When set, every POST is answered by it and the script is not used.
    responder: Option<Responder>,
    requests: Mutex<Vec<Recorded>>,
    overflow: AtomicUsize,
    /// Fixed answers of the model endpoints, by path (see [`FakeLlm::serve_info`]).
    info: Mutex<BTreeMap<String, (u16, String)>>,
    info_requests: Mutex<Vec<Recorded>>,
}

/// The endpoints where servers say what models they have and how large their windows are:
/// `GET /v1/models` (every provider), llama.cpp's `GET /props`, Ollama's `POST /api/show` and
/// `GET /api/ps`.
/// The fake server answers them from [`FakeLlm::serve_info`], 404 by default, never from the
/// script: a client that asks about models must not use up the replies of its turns.
const INFO_PATHS: &[&str] = &["/v1/models", "/props", "/api/show", "/api/ps"];

/// A running fake provider; the server thread stops when this is dropped.
pub struct FakeLlm {
    /// `http://127.0.0.1:PORT`, without `/v1` (the Anthropic base URL form).
    pub base_url: String,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeLlm {
    /// Serve `replies` in order to POST /v1/messages and POST /v1/chat/completions (any POST but
    /// the model endpoints, see [`FakeLlm::serve_info`]). A
    /// request beyond the script is answered 500 `{"error":"fake server: no scripted reply left"}`
    /// and counted in [`FakeLlm::overflow`]. Other methods get 405 and are neither recorded nor
    /// answered from the script.
    pub fn start(replies: Vec<Reply>) -> FakeLlm {
        Self::serve(Shared {
            replies: Mutex::new(replies.into()),
            ..Shared::default()
        })
    }

    /// Answer every POST with what `responder` makes of it (recorded first, like scripted ones).
    pub fn start_responding(responder: Responder) -> FakeLlm {
        Self::serve(Shared {
            responder: Some(responder),
            ..Shared::default()
        })
    }

    fn serve(shared: Shared) -> FakeLlm {
        // Bound here, before the thread starts, so the port is known when `start` returns.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener for tokio");
        let base_url = format!("http://{}", listener.local_addr().expect("local address"));
        let shared = Arc::new(shared);
        let (shutdown, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let app = Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&shared));
        let thread = std::thread::Builder::new()
            .name("fake-llm".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a tokio runtime for the fake LLM server");
                runtime.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    tokio::select! {
                        _ = axum::serve(listener, app).into_future() => {}
                        _ = shutdown_rx => {}
                    }
                });
                // Not a graceful shutdown: a stalled stream would never finish on its own.
                runtime.shutdown_timeout(Duration::from_millis(100));
            })
            .expect("spawn the fake LLM server thread");
        FakeLlm {
            base_url,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// Every POST received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests).clone()
    }

    /// How many POSTs arrived after the script ran out.
    pub fn overflow(&self) -> usize {
        self.shared.overflow.load(Ordering::SeqCst)
    }

    /// Answer `path` (one of `/v1/models`, `/props`, `/api/show`) with `status` and this JSON
    /// body from now on, whatever the method. Unset, they answer 404.
    pub fn serve_info(&self, path: &str, status: u16, body: &str) {
        assert!(INFO_PATHS.contains(&path), "not a model endpoint: {path}");
        lock(&self.shared.info).insert(path.to_string(), (status, body.to_string()));
    }

    /// Every request to the model endpoints so far, in arrival order.
    pub fn info_requests(&self) -> Vec<Recorded> {
        lock(&self.shared.info_requests).clone()
    }

    /// The OpenAI-compatible base URL: `base_url` + `/v1`.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.base_url)
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A poisoned lock only means another test thread panicked; the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The single handler: record the request, then answer it with the next scripted reply.
async fn answer(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if INFO_PATHS.contains(&uri.path()) {
        lock(&shared.info_requests).push(record(&uri, &headers, &body));
        let answer = lock(&shared.info).get(uri.path()).cloned();
        return match answer {
            Some((status, body)) => plain(status, "application/json", &body),
            None => plain(
                404,
                "application/json",
                r#"{"error":"fake server: no such endpoint"}"#,
            ),
        };
    }
    if method != Method::POST {
        return plain(
            405,
            "application/json",
            r#"{"error":"fake server: POST only"}"#,
        );
    }
    let recorded = record(&uri, &headers, &body);
    if let Some(responder) = &shared.responder {
        let reply = responder(&recorded);
        let number = {
            let mut requests = lock(&shared.requests);
            requests.push(recorded);
            requests.len()
        };
        return respond(reply, number);
    }
    let number = {
        let mut requests = lock(&shared.requests);
        requests.push(recorded);
        requests.len()
    };
    let next = lock(&shared.replies).pop_front();
    match next {
        Some(reply) => respond(reply, number),
        None => {
            shared.overflow.fetch_add(1, Ordering::SeqCst);
            plain(
                500,
                "application/json",
                r#"{"error":"fake server: no scripted reply left"}"#,
            )
        }
    }
}

fn record(uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Recorded {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        names
            .entry(name.as_str().to_ascii_lowercase())
            .and_modify(|joined| {
                joined.push_str(", ");
                joined.push_str(&value);
            })
            .or_insert(value);
    }
    Recorded {
        path: uri.path().to_string(),
        headers: names,
        body: serde_json::from_slice(body).unwrap_or(Value::Null),
        raw_body: String::from_utf8_lossy(body).into_owned(),
    }
}

fn plain(status: u16, content_type: &str, body: &str) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Body::from(body.to_string()))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn respond(reply: Reply, number: usize) -> Response {
    match reply {
        Reply::Sse { body, chunking } => sse(number, Body::from_stream(chunked(body, chunking))),
        Reply::Stall { prefix } => {
            let never = stream::pending::<Result<Bytes, Infallible>>();
            sse(number, Body::from_stream(once(prefix).chain(never)))
        }
        Reply::Reset { prefix } => {
            let abort = stream::once(async {
                // Let the prefix reach the client before the connection is dropped.
                tokio::time::sleep(CHUNK_PAUSE).await;
                Err::<Bytes, _>(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "fake server: scripted reset",
                ))
            });
            sse(
                number,
                Body::from_stream(once(prefix).map(|r| r.map_err(never_fails)).chain(abort)),
            )
        }
        Reply::Status {
            status,
            headers,
            body,
        } => status_reply(status, headers, body),
        Reply::Recorded {
            head,
            body,
            chunking,
        } => recorded_reply(&head, Body::from_stream(chunked(body, chunking))),
    }
}

/// The response `head` describes, with `body`.
fn recorded_reply(head: &str, body: Body) -> Response {
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse::<u16>().ok())
        .unwrap_or(500);
    let mut builder = Response::builder().status(status);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let framing = ["transfer-encoding", "content-length", "connection"];
        if framing.iter().any(|f| name.trim().eq_ignore_ascii_case(f)) {
            continue;
        }
        builder = builder.header(name.trim(), value.trim());
    }
    builder.body(body).unwrap_or_else(|error| {
        plain(
            500,
            "text/plain",
            &format!("fake server: bad recorded head: {error}"),
        )
    })
}

fn never_fails(never: Infallible) -> std::io::Error {
    match never {}
}

/// The prefix of a stall or reset as one write (nothing when it is empty).
fn once(prefix: Vec<u8>) -> impl Stream<Item = Result<Bytes, Infallible>> {
    stream::iter((!prefix.is_empty()).then(|| Ok(Bytes::from(prefix))))
}

fn sse(number: usize, body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .header("request-id", format!("req_fake_{number}"))
        .body(body)
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn status_reply(status: u16, headers: Vec<(String, String)>, body: String) -> Response {
    let has_content_type = headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"));
    let mut builder = Response::builder().status(status);
    if !has_content_type {
        let kind = if serde_json::from_str::<Value>(&body).is_ok() {
            "application/json"
        } else {
            "text/plain; charset=utf-8"
        };
        builder = builder.header("content-type", kind);
    }
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    builder.body(Body::from(body)).unwrap_or_else(|error| {
        plain(
            500,
            "text/plain",
            &format!("fake server: bad scripted reply: {error}"),
        )
    })
}

/// The sizes of the pieces `chunking` cuts a body of `len` bytes into.
pub fn chunk_sizes(len: usize, chunking: &Chunking) -> Vec<usize> {
    let cycle: Vec<usize> = match chunking {
        Chunking::Whole => vec![len.max(1)],
        Chunking::Fixed(n) => vec![(*n).max(1)],
        Chunking::Cycle(sizes) => sizes.iter().copied().filter(|&n| n > 0).collect(),
    };
    if cycle.is_empty() {
        return chunk_sizes(len, &Chunking::Whole);
    }
    let mut sizes = Vec::new();
    let mut left = len;
    for &size in cycle.iter().cycle() {
        if left == 0 {
            break;
        }
        let take = size.min(left);
        sizes.push(take);
        left -= take;
    }
    sizes
}

/// The body as a stream of pieces with a short pause before every piece but the first.
fn chunked(body: Vec<u8>, chunking: Chunking) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let body = Bytes::from(body);
    let mut pieces = Vec::new();
    let mut start = 0;
    for size in chunk_sizes(body.len(), &chunking) {
        pieces.push(body.slice(start..start + size));
        start += size;
    }
    stream::iter(pieces.into_iter().enumerate()).then(|(i, piece)| async move {
        if i > 0 {
            tokio::time::sleep(CHUNK_PAUSE).await;
        }
        Ok(piece)
    })
}

// ---------------------------------------------------------------------------------------------
// SSE builders
// ---------------------------------------------------------------------------------------------

/// Token counts for a built stream. `input` is the uncached part (Anthropic's `input_tokens`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FakeUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

/// The model name the built streams report.
pub const ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// The model name the built OpenAI streams report.
pub const OPENAI_MODEL: &str = "gpt-4o-mini";

fn anthropic_event(out: &mut Vec<u8>, data: Value) {
    let name = data["type"].as_str().unwrap_or("unknown").to_string();
    out.extend_from_slice(format!("event: {name}\ndata: {data}\n\n").as_bytes());
}

fn anthropic_start(out: &mut Vec<u8>, usage: FakeUsage) {
    anthropic_event(
        out,
        json!({"type": "message_start", "message": {
            "id": "msg_fake_01", "type": "message", "role": "assistant", "model": ANTHROPIC_MODEL,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.input, "cache_creation_input_tokens": usage.cache_write,
                      "cache_read_input_tokens": usage.cache_read, "output_tokens": 1}}}),
    );
}

/// A text block at `index`: one `text_delta` per word (with its leading space), a ping after the
/// first delta.
fn anthropic_text_block(out: &mut Vec<u8>, index: usize, text: &str) {
    anthropic_event(
        out,
        json!({"type": "content_block_start", "index": index,
               "content_block": {"type": "text", "text": ""}}),
    );
    for (i, word) in words(text).into_iter().enumerate() {
        anthropic_event(
            out,
            json!({"type": "content_block_delta", "index": index,
                   "delta": {"type": "text_delta", "text": word}}),
        );
        if i == 0 {
            anthropic_event(out, json!({"type": "ping"}));
        }
    }
    anthropic_event(out, json!({"type": "content_block_stop", "index": index}));
}

fn anthropic_finish(out: &mut Vec<u8>, stop_reason: &str, usage: FakeUsage) {
    anthropic_event(
        out,
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": usage.output}}),
    );
    anthropic_event(out, json!({"type": "message_stop"}));
}

/// An Anthropic stream of one text block ending with `stop_reason: end_turn`.
pub fn anthropic_text(text: &str, usage: FakeUsage) -> Vec<u8> {
    let mut out = Vec::new();
    anthropic_start(&mut out, usage);
    anthropic_text_block(&mut out, 0, text);
    anthropic_finish(&mut out, "end_turn", usage);
    out
}

/// An Anthropic stream of an optional text block and then one tool_use block per call, ending with
/// `stop_reason: tool_use`. Each input is sent as compact JSON in several `input_json_delta`
/// fragments, the first of them `""`.
pub fn anthropic_tool_calls(
    text: Option<&str>,
    calls: &[(&str, &str, Value)],
    usage: FakeUsage,
) -> Vec<u8> {
    let mut out = Vec::new();
    anthropic_start(&mut out, usage);
    let mut index = 0;
    if let Some(text) = text {
        anthropic_text_block(&mut out, index, text);
        index += 1;
    }
    for (id, name, input) in calls {
        anthropic_event(
            &mut out,
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        );
        let mut fragments = vec![String::new()];
        fragments.extend(fragments_of(&input.to_string()));
        for fragment in fragments {
            anthropic_event(
                &mut out,
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": fragment}}),
            );
        }
        anthropic_event(
            &mut out,
            json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    anthropic_finish(&mut out, "tool_use", usage);
    out
}

fn openai_chunk(out: &mut Vec<u8>, delta: Value, finish_reason: Option<&str>) {
    let chunk = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1764480000,
        "model": OPENAI_MODEL, "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        "usage": null});
    out.extend_from_slice(format!("data: {chunk}\n\n").as_bytes());
}

fn openai_text_chunks(out: &mut Vec<u8>, text: &str) {
    for word in words(text) {
        openai_chunk(out, json!({"content": word}), None);
    }
}

/// The `include_usage` chunk (`choices: []`) and `[DONE]`. OpenAI counts cached tokens inside
/// `prompt_tokens`, so it is the sum of every input part.
fn openai_finish(out: &mut Vec<u8>, finish_reason: &str, usage: FakeUsage) {
    openai_chunk(out, json!({}), Some(finish_reason));
    let prompt = usage.input + usage.cache_read + usage.cache_write;
    let mut prompt_details = json!({"cached_tokens": usage.cache_read});
    if usage.cache_write > 0 {
        prompt_details["cache_write_tokens"] = json!(usage.cache_write);
    }
    let chunk = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1764480000,
        "model": OPENAI_MODEL, "system_fingerprint": "fp_fake", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": usage.output,
                  "total_tokens": prompt + usage.output,
                  "prompt_tokens_details": prompt_details,
                  "completion_tokens_details": {"reasoning_tokens": 0}}});
    out.extend_from_slice(format!("data: {chunk}\n\ndata: [DONE]\n\n").as_bytes());
}

/// An OpenAI chat-completions stream of text, one chunk per word, ending with `finish_reason: stop`,
/// a usage chunk and `[DONE]`. `prompt_tokens` = input + cache_read (+ cache_write, then also given
/// as `cache_write_tokens`); `prompt_tokens_details.cached_tokens` = cache_read.
pub fn openai_text(text: &str, usage: FakeUsage) -> Vec<u8> {
    let mut out = Vec::new();
    openai_chunk(&mut out, json!({"role": "assistant", "content": ""}), None);
    openai_text_chunks(&mut out, text);
    openai_finish(&mut out, "stop", usage);
    out
}

/// An OpenAI stream of optional text and then the calls, one after the other: each call's first
/// chunk carries `index`, `id`, `type` and `function.name` with `arguments: ""`, later chunks carry
/// only `index` and an arguments fragment. Ends with `finish_reason: tool_calls`, usage and `[DONE]`.
pub fn openai_tool_calls(
    text: Option<&str>,
    calls: &[(&str, &str, Value)],
    usage: FakeUsage,
) -> Vec<u8> {
    let mut out = Vec::new();
    openai_chunk(
        &mut out,
        json!({"role": "assistant", "content": null}),
        None,
    );
    if let Some(text) = text {
        openai_text_chunks(&mut out, text);
    }
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        openai_chunk(
            &mut out,
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            None,
        );
        for fragment in fragments_of(&arguments.to_string()) {
            openai_chunk(
                &mut out,
                json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}),
                None,
            );
        }
    }
    openai_finish(&mut out, "tool_calls", usage);
    out
}

/// Words with their leading whitespace: "a b  c" → ["a", " b", "  c"]; concatenated they give back
/// the text.
pub fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut previous_was_space = true;
    for c in text.chars() {
        let starts_word = c.is_whitespace() && !previous_was_space;
        match out.last_mut() {
            Some(last) if !starts_word => last.push(c),
            _ => out.push(c.to_string()),
        }
        previous_was_space = c.is_whitespace();
    }
    out
}

/// A JSON text cut into three roughly equal fragments at character boundaries (fewer when it is
/// shorter than three characters), so cuts fall inside keys and values like a real stream's.
pub fn fragments_of(json_text: &str) -> Vec<String> {
    let chars: Vec<char> = json_text.chars().collect();
    let size = chars.len().div_ceil(3).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

// ---------------------------------------------------------------------------------------------
// Fixtures and stream transformations
// ---------------------------------------------------------------------------------------------

/// Where the copies of the shared SSE fixtures live in the repository.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sse")
}

/// The bytes of `tests/fixtures/sse/NAME` (byte-exact copies of the protocol fixtures).
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixtures_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

/// The recorded response `tests/fixtures/sse/NAME.sse` with its head `NAME.headers`, replayed as
/// received (status, headers such as the server's `x-request-id`, body bytes).
pub fn recorded(name: &str, chunking: Chunking) -> Reply {
    let head = String::from_utf8(fixture(&format!("{name}.headers"))).expect("a UTF-8 head");
    Reply::Recorded {
        head,
        body: fixture(&format!("{name}.sse")),
        chunking,
    }
}

/// Every `\n` becomes `\r\n`.
pub fn to_crlf(sse: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(sse.len() + sse.len() / 16);
    for &byte in sse {
        if byte == b'\n' {
            out.push(b'\r');
        }
        out.push(byte);
    }
    out
}

/// A `: keepalive` comment between every two events. Works on LF and on CRLF streams (the comment
/// uses the stream's line ending), so it can be combined with [`to_crlf`] in either order.
pub fn with_comments(sse: &[u8]) -> Vec<u8> {
    let crlf = sse.windows(4).any(|w| w == b"\r\n\r\n");
    let (separator, comment): (&[u8], &[u8]) = if crlf {
        (b"\r\n\r\n", b": keepalive\r\n\r\n")
    } else {
        (b"\n\n", b": keepalive\n\n")
    };
    let mut out = Vec::with_capacity(sse.len() * 2);
    let mut rest = sse;
    while let Some(at) = rest.windows(separator.len()).position(|w| w == separator) {
        let end = at + separator.len();
        out.extend_from_slice(&rest[..end]);
        rest = &rest[end..];
        if !rest.is_empty() {
            out.extend_from_slice(comment);
        }
    }
    out.extend_from_slice(rest);
    out
}

/// An Anthropic error reply (protocols §1.6): `{"type":"error","error":{"type","message"},
/// "request_id"}` with a matching `request-id` header, and `retry-after` when given. The request id
/// is `req_fake_error_STATUS` so a test can predict it.
pub fn anthropic_error(status: u16, kind: &str, message: &str, retry_after: Option<&str>) -> Reply {
    let request_id = format!("req_fake_error_{status}");
    let body = json!({"type": "error", "error": {"type": kind, "message": message},
                      "request_id": request_id});
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("request-id".to_string(), request_id),
    ];
    if let Some(seconds) = retry_after {
        headers.push(("retry-after".to_string(), seconds.to_string()));
    }
    Reply::Status {
        status,
        headers,
        body: body.to_string(),
    }
}

/// An OpenAI error reply (protocols §2.3): `{"error":{"message","type","param":null,"code":null}}`
/// with an `x-request-id: req_fake_error_STATUS` header, and `retry-after` when given.
pub fn openai_error(status: u16, kind: &str, message: &str, retry_after: Option<&str>) -> Reply {
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        (
            "x-request-id".to_string(),
            format!("req_fake_error_{status}"),
        ),
    ];
    if let Some(seconds) = retry_after {
        headers.push(("retry-after".to_string(), seconds.to_string()));
    }
    Reply::Status {
        status,
        headers,
        body: body.to_string(),
    }
}

/// The text of `tests/fixtures/models/NAME`: what real servers answer about their models.
pub fn models_fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}
