//! Request ids: the one the server names in its response head, and our own, sent with every
//! request as `X-Client-Request-Id`, so a failed stream always has an id to quote (a local server
//! may send none; OpenAI logs the client's id beside its own).

use reqwest::header::HeaderMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// The header vaultchat sends its own id in (the name OpenAI documents for it).
pub(crate) const CLIENT_REQUEST_ID_HEADER: &str = "X-Client-Request-Id";

/// A fresh id for one HTTP attempt: `vaultchat-` and 32 hex digits. Unique, not secret: made from
/// the clock, the process id and a counter, so it needs no random source.
pub(crate) fn new_client_request_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // A uniqueness seed, not "what time is it": the real clock, never `crate::time`'s, which a
    // test may fix or start at the same instant in every process.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut seed = Vec::with_capacity(28);
    seed.extend_from_slice(&nanos.to_le_bytes());
    seed.extend_from_slice(&std::process::id().to_le_bytes());
    seed.extend_from_slice(&count.to_le_bytes());
    format!("vaultchat-{:032x}", xxhash_rust::xxh3::xxh3_128(&seed))
}

/// The server's own id for the request: Anthropic sends `request-id`, OpenAI and most compatible
/// servers (llama-cpp-python, vLLM) `x-request-id`.
pub(crate) fn server_request_id(headers: &HeaderMap) -> Option<String> {
    ["request-id", "x-request-id"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_differ_and_say_whose_they_are() {
        let first = new_client_request_id();
        let second = new_client_request_id();
        assert_ne!(first, second);
        assert!(first.starts_with("vaultchat-"), "{first}");
        assert_eq!(first.len(), "vaultchat-".len() + 32);
    }

    #[test]
    fn the_server_id_is_read_from_either_header() {
        let mut headers = HeaderMap::new();
        assert_eq!(server_request_id(&headers), None);
        headers.insert(
            "x-request-id",
            "9fd730e80bb64c4f9a9fa8dc8649b593".parse().unwrap(),
        );
        assert_eq!(
            server_request_id(&headers).as_deref(),
            Some("9fd730e80bb64c4f9a9fa8dc8649b593")
        );
        headers.insert("request-id", "req_1".parse().unwrap());
        assert_eq!(server_request_id(&headers).as_deref(), Some("req_1"));
    }
}
