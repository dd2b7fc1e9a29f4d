//! Request ids: the one the server names in its response head, and our own, sent with every
//! request as `X-Client-Request-Id`, so a failed stream always has an id to quote (a local server
//! may send none; OpenAI logs the client's id beside its own).

use reqwest::header::HeaderMap;

/// The header vaultchat sends its own id in (the name OpenAI documents for it).
pub(crate) const CLIENT_REQUEST_ID_HEADER: &str = "X-Client-Request-Id";

/// A fresh id for one HTTP attempt: `vaultchat-` and 32 hex digits (a random v4 UUID without its
/// dashes, from [`crate::id::hex128`]). The prefix says in a server's log whose id it is; the
/// length is the one these ids have always had, so log searches and the tests keep working.
pub(crate) fn new_client_request_id() -> String {
    format!("vaultchat-{}", crate::id::hex128())
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
