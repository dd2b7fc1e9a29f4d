//! What a provider says about its models: the list (`GET /v1/models`, OpenAI-compatible servers
//! and Anthropic alike), and the context window of one model from the servers that say it
//! (llama.cpp's `/props`, Ollama's `/api/show`, the list entries of vLLM and others).
//!
//! Every call is short (a few seconds at most, [`PROBE_TIMEOUT`]): these answer `/model`,
//! `vaultchat doctor` and the window probe, never a turn, and a server that does not answer them is
//! no reason to wait.

pub mod parse;

use super::window::{self, ServerWindow};
use super::{LlmError, ProviderKind, ProviderSettings};
use crate::config::http;
use parse::ModelInfo;
use serde_json::Value;
use std::time::Duration;

/// The longest any one of these calls may take, connection included.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// What the server said when asked for its models.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    Listed(Vec<ModelInfo>),
    /// The server has no model list (404, 405 or 501).
    NotListed,
}

/// Why a model list or a window could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelsError {
    #[error("cannot reach {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("{url} did not answer within {} s", PROBE_TIMEOUT.as_secs())]
    TimedOut { url: String },
    #[error("{url} answered {status}{}", message_suffix(.message))]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    #[error("{url} answered something that is not a model list")]
    Malformed { url: String },
    /// A redirect, never followed (`config::http`).
    #[error("{0}")]
    Redirected(crate::config::http::RedirectRefused),
}

fn message_suffix(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

impl ModelsError {
    /// The server refused the key (401 or 403).
    pub fn is_refused_key(&self) -> bool {
        matches!(self, ModelsError::Status { status, .. } if *status == 401 || *status == 403)
    }
}

/// A client for the model endpoints of one provider.
#[derive(Debug, Clone)]
pub struct ModelsClient {
    client: reqwest::Client,
    settings: ProviderSettings,
}

impl ModelsClient {
    /// Fails only on an unusable base URL or TLS setup.
    pub fn new(settings: &ProviderSettings) -> Result<Self, LlmError> {
        let client = http::client(http::ClientOptions {
            connect_timeout: settings.connect_timeout.min(PROBE_TIMEOUT),
            timeout: Some(PROBE_TIMEOUT),
            pinned: settings.pinned.as_ref(),
        })
        .map_err(|e| LlmError::Setup(e.to_string()))?;
        Ok(Self {
            client,
            settings: settings.clone(),
        })
    }

    /// The model list's URL: Anthropic's base is given without `/v1`, an OpenAI-compatible one
    /// with it.
    pub fn models_url(&self) -> String {
        let base = self.settings.base_url.trim_end_matches('/');
        match self.settings.kind {
            ProviderKind::Anthropic => {
                let root = base.strip_suffix("/v1").unwrap_or(base);
                format!("{root}/v1/models?limit=1000")
            }
            ProviderKind::OpenAi => format!("{base}/models"),
        }
    }

    /// The server's root, where llama.cpp and Ollama keep their own endpoints: the base URL
    /// without its `/v1`.
    fn root(&self) -> &str {
        let base = self.settings.base_url.trim_end_matches('/');
        base.strip_suffix("/v1").unwrap_or(base)
    }

    fn with_auth(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match (self.settings.kind, self.settings.api_key.as_deref()) {
            (ProviderKind::Anthropic, key) => {
                let builder = builder.header("anthropic-version", super::anthropic::API_VERSION);
                match key {
                    Some(key) => builder.header("x-api-key", key),
                    None => builder,
                }
            }
            (ProviderKind::OpenAi, Some(key)) => builder.bearer_auth(key),
            (ProviderKind::OpenAi, None) => builder,
        }
    }

    /// Send and read a JSON body; `None` when the server has no such endpoint.
    async fn json(
        &self,
        url: &str,
        builder: reqwest::RequestBuilder,
    ) -> Result<Option<Value>, ModelsError> {
        let sent = tokio::time::timeout(PROBE_TIMEOUT, async {
            let response = self.with_auth(builder).send().await?;
            if http::is_redirect(&response) {
                let refused = http::refusal(
                    &response,
                    http::Server::Provider,
                    self.settings.pinned.is_some(),
                );
                return Ok(Err(refused));
            }
            let status = response.status().as_u16();
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>(Ok((status, body)))
        })
        .await;
        let (status, body) = match sent {
            Ok(Ok(Err(refused))) => return Err(ModelsError::Redirected(refused)),
            Ok(Ok(Ok(answer))) => answer,
            Err(_) => return Err(ModelsError::TimedOut { url: url.into() }),
            Ok(Err(e)) if e.is_timeout() => return Err(ModelsError::TimedOut { url: url.into() }),
            Ok(Err(e)) => {
                return Err(ModelsError::Unreachable {
                    url: url.into(),
                    message: super::transport_message(&e),
                });
            }
        };
        match status {
            200..=299 => serde_json::from_slice(&body)
                .map(Some)
                .map_err(|_| ModelsError::Malformed { url: url.into() }),
            404 | 405 | 501 => Ok(None),
            status => {
                let text = String::from_utf8_lossy(&body);
                let message = super::error::parse_error_body(&text)
                    .message
                    .chars()
                    .take(200)
                    .collect();
                Err(ModelsError::Status {
                    url: url.into(),
                    status,
                    message,
                })
            }
        }
    }

    /// The provider's models.
    pub async fn list(&self) -> Result<Listing, ModelsError> {
        let url = self.models_url();
        match self.json(&url, self.client.get(&url)).await? {
            None => Ok(Listing::NotListed),
            Some(body) => parse::parse_list(&body)
                .map(Listing::Listed)
                .ok_or(ModelsError::Malformed { url }),
        }
    }

    /// llama.cpp's slot context, if this is a llama.cpp server.
    pub async fn llama_cpp_props(&self) -> Result<Option<ServerWindow>, ModelsError> {
        let url = format!("{}/props", self.root());
        let body = self.json(&url, self.client.get(&url)).await?;
        Ok(body.as_ref().and_then(parse::parse_props))
    }

    /// Ollama's window for `model`, if this is an Ollama server.
    pub async fn ollama_show(&self, model: &str) -> Result<Option<ServerWindow>, ModelsError> {
        let url = format!("{}/api/show", self.root());
        let request = self
            .client
            .post(&url)
            .json(&serde_json::json!({ "model": model }));
        let body = self.json(&url, request).await?;
        Ok(body.as_ref().and_then(parse::parse_ollama_show))
    }

    /// What the server says about `model`'s window, asking in turn: its list entry (when it holds
    /// the running window), llama.cpp's `/props`, Ollama's `/api/show`, then the list's trained
    /// length. Anthropic and OpenAI's own API say nothing, so they are not asked (the table knows
    /// their models). Failures are logged and mean "the server did not say".
    pub async fn server_window(
        &self,
        model: &str,
        listing: Option<&Listing>,
    ) -> Option<ServerWindow> {
        if !self.may_say_windows() {
            return None;
        }
        let fetched;
        let listing = match listing {
            Some(listing) => Some(listing),
            None => {
                fetched = match self.list().await {
                    Ok(listing) => Some(listing),
                    // Nobody answers there: the other endpoints would only wait as long again.
                    Err(e @ (ModelsError::Unreachable { .. } | ModelsError::TimedOut { .. })) => {
                        log_probe_failure(e);
                        return None;
                    }
                    Err(e) => {
                        log_probe_failure(e);
                        None
                    }
                };
                fetched.as_ref()
            }
        };
        let entry = match listing {
            Some(Listing::Listed(models)) => parse::find_listed(models, model)
                // A single-model server (llama.cpp) answers to any name.
                .or_else(|| (models.len() == 1).then(|| &models[0])),
            _ => None,
        };
        if let Some(window) = entry.and_then(|e| e.window) {
            return Some(window);
        }
        if let Some(window) = self
            .llama_cpp_props()
            .await
            .map_err(log_probe_failure)
            .ok()
            .flatten()
        {
            return Some(window);
        }
        if let Some(window) = self
            .ollama_show(model)
            .await
            .map_err(log_probe_failure)
            .ok()
            .flatten()
        {
            return Some(window);
        }
        entry.and_then(|e| e.trained)
    }

    /// Whether asking this server about windows can tell anything.
    fn may_say_windows(&self) -> bool {
        match self.settings.kind {
            ProviderKind::Anthropic => false,
            ProviderKind::OpenAi => !super::openai::is_openai_host(&self.settings.base_url),
        }
    }
}

fn log_probe_failure(error: ModelsError) {
    tracing::info!("context window probe: {error}");
}

/// The server's window for `model`, asked once per run: the answer (or that there was none) is
/// remembered in [`window`]'s cache, which `window::for_model` reads.
pub async fn probe_once(settings: &ProviderSettings, model: &str) -> Option<ServerWindow> {
    if let Some(known) = window::remembered(model) {
        return known;
    }
    let found = match ModelsClient::new(settings) {
        Ok(client) => client.server_window(model, None).await,
        Err(e) => {
            tracing::info!("context window probe: {e}");
            None
        }
    };
    tracing::info!(
        "context window of {model} from the server: {}",
        found.map_or("not said".to_string(), |w| format!(
            "{} ({})",
            w.tokens, w.field
        ))
    );
    window::remember(model, found);
    found
}

/// Start [`probe_once`] for `model` on the current runtime, unless the config sets its window
/// (the config beats the server, so there is nothing to ask). Await the handle where the number
/// is needed; it ends within a few seconds whatever the server does.
pub fn spawn_probe(
    provider: &crate::config::ProviderConfig,
    settings: &ProviderSettings,
    model: &str,
) -> Option<tokio::task::JoinHandle<Option<ServerWindow>>> {
    if window::configured(provider, model).is_some() {
        return None;
    }
    let (settings, model) = (settings.clone(), model.to_string());
    Some(tokio::spawn(
        async move { probe_once(&settings, &model).await },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(kind: ProviderKind, base: &str) -> ModelsClient {
        ModelsClient::new(&ProviderSettings::new(kind, base, None)).unwrap()
    }

    #[test]
    fn the_list_and_the_servers_own_endpoints_have_their_urls() {
        let anthropic = client(ProviderKind::Anthropic, "https://api.anthropic.com");
        assert_eq!(
            anthropic.models_url(),
            "https://api.anthropic.com/v1/models?limit=1000"
        );
        let anthropic = client(ProviderKind::Anthropic, "http://gateway:8080/v1/");
        assert_eq!(
            anthropic.models_url(),
            "http://gateway:8080/v1/models?limit=1000"
        );
        let ollama = client(ProviderKind::OpenAi, "http://localhost:11434/v1/");
        assert_eq!(ollama.models_url(), "http://localhost:11434/v1/models");
        assert_eq!(ollama.root(), "http://localhost:11434");
        let proxied = client(ProviderKind::OpenAi, "http://box/llama");
        assert_eq!(proxied.root(), "http://box/llama");
    }

    #[test]
    fn only_servers_that_can_say_are_asked_about_windows() {
        assert!(!client(ProviderKind::Anthropic, "http://127.0.0.1:1").may_say_windows());
        assert!(!client(ProviderKind::OpenAi, "https://api.openai.com/v1").may_say_windows());
        assert!(client(ProviderKind::OpenAi, "http://127.0.0.1:8080/v1").may_say_windows());
    }

    #[test]
    fn errors_say_what_happened() {
        let refused = ModelsError::Status {
            url: "http://x/v1/models".into(),
            status: 401,
            message: "bad key".into(),
        };
        assert!(refused.is_refused_key());
        assert_eq!(
            refused.to_string(),
            "http://x/v1/models answered 401: bad key"
        );
        let timed_out = ModelsError::TimedOut {
            url: "http://x/props".into(),
        };
        assert!(!timed_out.is_refused_key());
        assert_eq!(
            timed_out.to_string(),
            "http://x/props did not answer within 2 s"
        );
    }
}
