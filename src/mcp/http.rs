//! MCP over Streamable HTTP (`vaultchat mcp --http ADDR`).
//!
//! Loopback only unless the person explicitly allows otherwise, a bearer token on every request,
//! and browser `Origin`s other than loopback refused (a web page must not be able to drive the
//! person's vault through their browser: DNS rebinding and cross-site requests).
//!
//! A POST's JSON body passes the same shape check as a stdio line ([`super::request_check`])
//! before rmcp reads it: params that are not an object, or a cursor that is not a string, get a
//! JSON-RPC `-32602` with the request's id, and a body that is not JSON `-32700` (rmcp would
//! answer both with a bare 415).

use super::VaultServer;
use super::request_check::{self, Verdict};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

/// How requests are authorised.
#[derive(Debug, Clone)]
pub enum HttpAuth {
    /// Every request must carry `Authorization: Bearer <token>`.
    Bearer(String),
    /// No token (only for loopback testing, e.g. the MCP conformance suite).
    None,
}

/// Serve `server` on an already bound listener until the process ends.
pub async fn serve_http(
    server: VaultServer,
    listener: tokio::net::TcpListener,
    auth: HttpAuth,
    allow_remote: bool,
) -> std::io::Result<()> {
    let config = StreamableHttpServerConfig::default();
    let config = if allow_remote {
        // Reached by this machine's address or name: the bearer token is the protection.
        config.disable_allowed_hosts()
    } else {
        // Host-header check (DNS rebinding): loopback names only.
        config.with_allowed_hosts(["localhost", "127.0.0.1", "::1", "[::1]"])
    };
    let max_body = config.max_request_body_bytes;
    let config = config
        // Browser origins: only pages served from this machine's loopback.
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]);
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let auth = Arc::new(auth);
    let limits = Limits { max_body };
    loop {
        let (stream, peer) = listener.accept().await?;
        let service = service.clone();
        let auth = Arc::clone(&auth);
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let service = service.clone();
                let auth = Arc::clone(&auth);
                async move { Ok::<_, Infallible>(handle(&service, &auth, limits, peer, request).await) }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await
            {
                tracing::debug!(error = %e, "MCP HTTP connection ended");
            }
        });
    }
}

/// What the front door enforces before rmcp.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// rmcp's own limit on a request body: a longer one is refused (413) without being held.
    max_body: usize,
}

async fn handle(
    service: &StreamableHttpService<VaultServer, LocalSessionManager>,
    auth: &HttpAuth,
    limits: Limits,
    peer: SocketAddr,
    request: Request<Incoming>,
) -> Response<BoxBody<Bytes, Infallible>> {
    if request.uri().path() != "/mcp" {
        return plain(StatusCode::NOT_FOUND, "the MCP endpoint is /mcp");
    }
    if let HttpAuth::Bearer(token) = auth
        && !authorised(request.headers(), token)
    {
        tracing::warn!(%peer, "MCP HTTP request without a valid bearer token");
        return plain(
            StatusCode::UNAUTHORIZED,
            "a bearer token is required: send `Authorization: Bearer <token>` (printed when `vaultchat mcp --http` started)",
        );
    }
    if request.method() != hyper::Method::POST || !is_json(request.headers()) {
        // GET (the event stream), DELETE (end of session), or a body rmcp refuses by its type.
        return service.handle(request).await;
    }
    let (parts, body) = request.into_parts();
    let body = match Limited::new(body, limits.max_body).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<LengthLimitError>() => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "Payload Too Large: request body exceeds {} bytes",
                    limits.max_body
                ),
            );
        }
        Err(e) => {
            tracing::debug!(error = %e, "reading an MCP request body failed");
            return plain(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        }
    };
    let verdict = request_check::check(&body);
    if verdict == Verdict::Forward {
        return service
            .handle(Request::from_parts(parts, Full::new(body)))
            .await;
    }
    // rmcp checks Host and Origin (DNS rebinding, other sites) before anything else; a request it
    // would refuse for them is refused the same way before it learns anything from our answer.
    // An OPTIONS probe with the same headers runs exactly that check (and is then refused as a
    // method, 405).
    let mut probe = Request::new(Full::new(Bytes::new()));
    *probe.method_mut() = hyper::Method::OPTIONS;
    *probe.uri_mut() = parts.uri.clone();
    *probe.headers_mut() = parts.headers.clone();
    let probed = service.handle(probe).await;
    if probed.status() == StatusCode::FORBIDDEN {
        return probed;
    }
    match verdict {
        Verdict::Forward => {
            service
                .handle(Request::from_parts(parts, Full::new(body)))
                .await
        }
        Verdict::Answer(answer) => {
            let status = if answer["id"].is_null() {
                // Nothing to correlate (not JSON, or a bad notification): a plain refusal.
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            json_response(status, &answer)
        }
        Verdict::Drop => json_response(
            StatusCode::BAD_REQUEST,
            &request_check::error_response(
                serde_json::Value::Null,
                request_check::INVALID_PARAMS,
                "a notification's params must be an object".into(),
                serde_json::Value::Null,
            ),
        ),
    }
}

/// Whether the request says its body is JSON (rmcp refuses anything else with 415 itself).
fn is_json(headers: &hyper::HeaderMap) -> bool {
    headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

fn json_response(
    status: StatusCode,
    body: &serde_json::Value,
) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Constant-time comparison of the presented token (no early exit on the first wrong byte).
fn authorised(headers: &hyper::HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(presented) = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
    else {
        return false;
    };
    let (a, b) = (presented.trim().as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn plain(status: StatusCode, text: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_string())).boxed());
    *response.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

/// A fresh random token: 32 bytes from the kernel's CSPRNG, hex-encoded.
pub fn generate_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_must_match_exactly() {
        let mut headers = hyper::HeaderMap::new();
        assert!(!authorised(&headers, "abc"));
        headers.insert(hyper::header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert!(authorised(&headers, "abc"));
        assert!(!authorised(&headers, "abd"));
        assert!(!authorised(&headers, "abcd"));
        headers.insert(hyper::header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert!(!authorised(&headers, "abc"));
    }

    #[test]
    fn tokens_are_random_and_long() {
        let (a, b) = (generate_token().unwrap(), generate_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
