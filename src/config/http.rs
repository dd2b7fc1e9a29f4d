//! The one way vaultchat builds an HTTP client: the chat providers, the model list and window
//! probe (`/model`, `doctor`), and the embeddings server all get theirs here.
//!
//! Two rules hold for every one of them (docs/safety.md, "Threat model: servers (redirects)"):
//! - **No redirect is followed.** These are JSON APIs reached at a configured base URL; none has a
//!   reason to redirect, and a followed redirect would carry the prompt, the notes in it and the
//!   API key to an address nobody configured — past the `[privacy] local_only` check, which can
//!   only have looked at the configured URL. A redirect comes back as a response, and the caller
//!   turns it into [`RedirectRefused`], which names both addresses and the fix.
//! - **A pinned host stays pinned**: with `local_only`, the addresses `locality::local_host`
//!   checked are the only ones the client connects to for that host (no second DNS answer).

use super::locality::PinnedHost;
use std::time::Duration;

/// What differs between vaultchat's HTTP clients.
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions<'a> {
    /// How long a connection may take to open.
    pub connect_timeout: Duration,
    /// A bound on a whole request, body included; `None` for streams that may run for minutes
    /// (the caller bounds the gaps between chunks instead).
    pub timeout: Option<Duration>,
    /// With `[privacy] local_only`: the host and the local addresses it was checked to have.
    pub pinned: Option<&'a PinnedHost>,
}

/// A client that follows no redirect and, when `pinned` is given, connects to that host only at
/// the checked addresses. Fails only when the TLS setup cannot be built.
pub fn client(options: ClientOptions<'_>) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(options.connect_timeout)
        .redirect(reqwest::redirect::Policy::none());
    if let Some(timeout) = options.timeout {
        builder = builder.timeout(timeout);
    }
    if let Some(pinned) = options.pinned {
        builder = builder.resolve_to_addrs(&pinned.host, &pinned.addresses);
    }
    builder.build()
}

/// A server answered with a redirect, and it was not followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{url} answered {status} with a redirect to {}; vaultchat follows no redirects from {server}, so nothing was sent there (a redirect could carry the request — your prompt and notes — to another machine, past [privacy] local_only). If the server really lives there, point {setting} at it{}",
    .location.as_deref().unwrap_or("an address it did not name"),
    if *.local_only { " (it must be on this machine or a private network: local_only is on)" } else { "" }
)]
pub struct RedirectRefused {
    /// The URL that was asked.
    pub url: String,
    /// The 3xx status.
    pub status: u16,
    /// Where it pointed, made absolute (and so percent-encoded: no control character of the
    /// server's reaches the terminal); `None` without a usable `Location`.
    pub location: Option<String>,
    /// Which kind of server, for the sentence ("a chat provider").
    pub server: &'static str,
    /// The setting that names its address (`base_url in [provider] (or --base-url)`).
    pub setting: &'static str,
    /// Whether `[privacy] local_only` is on.
    pub local_only: bool,
}

/// Which server a client talks to, for [`RedirectRefused`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// The chat provider, its model list and window probe, and `doctor`'s checks of it.
    Provider,
    /// The `[embeddings]` server.
    Embeddings,
}

impl Server {
    fn words(self) -> (&'static str, &'static str) {
        match self {
            Server::Provider => ("a chat provider", "base_url in [provider] (or --base-url)"),
            Server::Embeddings => ("an embeddings server", "base_url in [embeddings]"),
        }
    }
}

/// Whether `response` is one [`refusal`] is for: any 3xx.
pub fn is_redirect(response: &reqwest::Response) -> bool {
    response.status().is_redirection()
}

/// What to say about the redirect `response` (see [`is_redirect`]): which URL pointed where, and
/// the fix.
pub fn refusal(response: &reqwest::Response, server: Server, local_only: bool) -> RedirectRefused {
    let url = response.url();
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|location| url.join(location).ok())
        .map(String::from);
    let (server, setting) = server.words();
    RedirectRefused {
        url: url.to_string(),
        status: response.status().as_u16(),
        location,
        server,
        setting,
        local_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The client is built here and nowhere else: any other `reqwest` client would follow
    /// redirects (reqwest's default) and skip the pinning.
    #[test]
    fn no_other_module_builds_an_http_client() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let this = src.join("config/http.rs");
        let mut stack = vec![src];
        let mut offenders = Vec::new();
        let mut files = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") || path == this {
                    continue;
                }
                files += 1;
                let text = std::fs::read_to_string(&path).unwrap();
                for needle in [
                    "Client::builder(",
                    "ClientBuilder",
                    "reqwest::Client::new(",
                    "reqwest::get(",
                    "reqwest::blocking",
                    "redirect::Policy",
                ] {
                    if text.contains(needle) {
                        offenders.push(format!("{}: {needle}", path.display()));
                    }
                }
            }
        }
        assert!(files > 50, "the source tree was not found ({files} files)");
        assert!(offenders.is_empty(), "{offenders:#?}");
    }

    #[test]
    fn a_refused_redirect_names_both_addresses_and_the_fix() {
        let refused = RedirectRefused {
            url: "http://127.0.0.1:8080/v1/chat/completions".into(),
            status: 307,
            location: Some("http://203.0.113.5/v1/chat/completions".into()),
            server: "a chat provider",
            setting: "base_url in [provider] (or --base-url)",
            local_only: true,
        };
        let text = refused.to_string();
        for part in [
            "http://127.0.0.1:8080/v1/chat/completions answered 307 with a redirect to http://203.0.113.5/v1/chat/completions",
            "vaultchat follows no redirects",
            "nothing was sent there",
            "point base_url in [provider] (or --base-url) at it",
            "local_only is on",
        ] {
            assert!(text.contains(part), "{part:?} not in {text}");
        }
    }
}
