//! MCP over Streamable HTTP (`vaultchat mcp --http ADDR`).
//!
//! Loopback only unless the person explicitly allows otherwise, a bearer token on every request,
//! and browser `Origin`s other than loopback refused (a web page must not be able to drive the
//! person's vault through their browser: DNS rebinding and cross-site requests).

use super::VaultServer;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
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
    let config = config
        // Browser origins: only pages served from this machine's loopback.
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]);
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let auth = Arc::new(auth);
    loop {
        let (stream, peer) = listener.accept().await?;
        let service = service.clone();
        let auth = Arc::clone(&auth);
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let service = service.clone();
                let auth = Arc::clone(&auth);
                async move { Ok::<_, Infallible>(handle(&service, &auth, peer, request).await) }
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

async fn handle(
    service: &StreamableHttpService<VaultServer, LocalSessionManager>,
    auth: &HttpAuth,
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
    service.handle(request).await
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
