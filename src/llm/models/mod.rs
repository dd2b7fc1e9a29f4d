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

    /// llama.cpp's `/props` (of `model`, on a router serving several): `None` when the server
    /// has no such endpoint.
    async fn llama_cpp_props(&self, model: Option<&str>) -> Result<Option<Value>, ModelsError> {
        let mut url = format!("{}/props", self.root());
        if let Some(model) = model
            && let Ok(mut parsed) = reqwest::Url::parse(&url)
        {
            parsed.query_pairs_mut().append_pair("model", model);
            url = parsed.to_string();
        }
        self.json(&url, self.client.get(&url)).await
    }

    /// Ollama's `/api/show` of `model`: `None` when this is not an Ollama server.
    async fn ollama_show(&self, model: &str) -> Result<Option<Value>, ModelsError> {
        let url = format!("{}/api/show", self.root());
        let request = self
            .client
            .post(&url)
            .json(&serde_json::json!({ "model": model }));
        self.json(&url, request).await
    }

    /// The context Ollama allocated for `model`, from `/api/ps` (the models it has loaded); `None`
    /// when it is not loaded or the server cannot say (a failed probe is logged).
    async fn allocated_window(&self, model: &str) -> Option<ServerWindow> {
        let url = format!("{}/api/ps", self.root());
        self.json(&url, self.client.get(&url))
            .await
            .map_err(log_probe_failure)
            .ok()
            .flatten()
            .and_then(|ps| parse::parse_ollama_ps(&ps, model))
    }

    /// What the server says about `model`'s window (see [`ModelsClient::server_facts`]).
    pub async fn server_window(
        &self,
        model: &str,
        listing: Option<&Listing>,
    ) -> Option<ServerWindow> {
        self.server_facts(model, listing).await.window
    }

    /// What the server says about `model`, asking in turn: its list entry (when it holds the
    /// running window), llama.cpp's `/props` (of the model, on a router, and only when the
    /// router has it loaded: asking must not load a model), Ollama's `/api/show` and `/api/ps`,
    /// then the list's trained length. The window a request really gets (llama.cpp's `n_ctx`,
    /// Ollama's allocated `context_length`) beats the trained maximum, which is kept beside it
    /// for `doctor` and `/model`. Anthropic and OpenAI's own API say nothing, so they are not
    /// asked (the table knows their models). Failures are logged and mean "the server did not
    /// say".
    pub async fn server_facts(&self, model: &str, listing: Option<&Listing>) -> ServerFacts {
        let mut facts = ServerFacts::default();
        if !self.may_say_windows() {
            return facts;
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
                        return facts;
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
        facts.trained = entry.and_then(|e| e.trained);
        if let Some(window) = entry.and_then(|e| e.window) {
            facts.window = Some(window);
            return facts;
        }
        let props = match entry.and_then(|e| e.status.as_deref()) {
            // A llama.cpp router: its own /props is not a model's, and a model that is not
            // running would be started by the question.
            Some("loaded") => self.llama_cpp_props(entry.map(|e| e.id.as_str())).await,
            Some(_) => {
                facts.recheck = true;
                Ok(None)
            }
            None => self.llama_cpp_props(None).await,
        };
        if let Some(props) = props.map_err(log_probe_failure).ok().flatten() {
            facts.tools = parse::parse_props_tools(&props);
            if let Some(window) = parse::parse_props(&props) {
                facts.window = Some(window);
                facts.trained = facts.trained.filter(|t| t.tokens != window.tokens);
                return facts;
            }
        }
        if facts.recheck {
            facts.window = facts.trained;
            return facts;
        }
        let show = self
            .ollama_show(model)
            .await
            .map_err(log_probe_failure)
            .ok()
            .flatten();
        if let Some(show) = show {
            facts.tools = parse::parse_ollama_tools(&show);
            let shown = parse::parse_ollama_show(&show);
            let running = self.allocated_window(model).await;
            match running {
                Some(running) => {
                    facts.window = Some(running);
                    facts.trained = shown.filter(|s| s.tokens != running.tokens);
                }
                None => {
                    // Not loaded yet (or an Ollama too old to say): the figure of /api/show
                    // until the first response has loaded it.
                    facts.window = shown;
                    facts.recheck = true;
                }
            }
            return facts;
        }
        facts.window = facts.trained.take();
        facts
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

/// What a server says about one model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerFacts {
    /// The window used: the one the server runs the model with when it says, else the trained
    /// maximum.
    pub window: Option<ServerWindow>,
    /// The trained maximum when the server said it and it is not the window used (shown beside
    /// it).
    pub trained: Option<ServerWindow>,
    /// Whether the model's chat template takes tools (`None`: the server does not say).
    pub tools: Option<bool>,
    /// The running window is not known yet (Ollama has not loaded the model; a router's model is
    /// not running): ask again once a response has loaded it.
    pub recheck: bool,
}

/// The servers' answers of this run, by model.
fn facts_cache() -> &'static std::sync::Mutex<std::collections::HashMap<String, ServerFacts>> {
    static CACHE: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, ServerFacts>>,
    > = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// What the server said about `model` this run: `None` if it was never asked.
pub fn remembered_facts(model: &str) -> Option<ServerFacts> {
    let cache = facts_cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.get(model).copied()
}

fn remember_facts(model: &str, facts: ServerFacts) {
    // A poisoned lock only means another thread panicked mid-insert; the map is still usable.
    let mut cache = facts_cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.insert(model.to_string(), facts);
    window::remember(model, facts.window);
}

/// The server's window for `model`, asked once per run: the answer (or that there was none) is
/// remembered in [`window`]'s cache, which `window::for_model` reads.
pub async fn probe_once(settings: &ProviderSettings, model: &str) -> Option<ServerWindow> {
    probe_facts_once(settings, model).await.window
}

/// What the server says about `model`, asked once per run (see [`probe_once`]).
pub async fn probe_facts_once(settings: &ProviderSettings, model: &str) -> ServerFacts {
    if let Some(known) = remembered_facts(model) {
        return known;
    }
    ask_facts(settings, model).await
}

/// Ask again about a model whose running window was not known (see [`ServerFacts::recheck`]),
/// and remember the answer. `None` when there was nothing to ask again.
pub async fn recheck(settings: &ProviderSettings, model: &str) -> Option<ServerFacts> {
    if !remembered_facts(model).is_some_and(|facts| facts.recheck) {
        return None;
    }
    let known = remembered_facts(model).unwrap_or_default();
    let ollama = known.window.is_some_and(|w| w.field.starts_with("Ollama"));
    let mut facts = if ollama {
        // Only the allocated context is new: /api/ps alone.
        recheck_ollama(settings, model, known).await
    } else {
        ask_facts(settings, model).await
    };
    // Asked once more at most: a server that still does not say will not say later.
    facts.recheck = false;
    remember_facts(model, facts);
    Some(facts)
}

/// `known` with the context Ollama allocated when it loaded `model`, if `/api/ps` says it now.
async fn recheck_ollama(
    settings: &ProviderSettings,
    model: &str,
    known: ServerFacts,
) -> ServerFacts {
    let client = match ModelsClient::new(settings) {
        Ok(client) => client,
        Err(e) => {
            tracing::info!("context window probe: {e}");
            return known;
        }
    };
    let running = client.allocated_window(model).await;
    match running {
        Some(running) => ServerFacts {
            window: Some(running),
            trained: known.window.filter(|w| w.tokens != running.tokens),
            ..known
        },
        None => known,
    }
}

async fn ask_facts(settings: &ProviderSettings, model: &str) -> ServerFacts {
    let found = match ModelsClient::new(settings) {
        Ok(client) => client.server_facts(model, None).await,
        Err(e) => {
            tracing::info!("context window probe: {e}");
            ServerFacts::default()
        }
    };
    tracing::info!(
        "context window of {model} from the server: {}",
        found.window.map_or("not said".to_string(), |w| format!(
            "{} ({})",
            w.tokens, w.field
        ))
    );
    remember_facts(model, found);
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
    // The config beats the server's window; whether the model takes tools is still asked,
    // unless the config says that too.
    if window::configured(provider, model).is_some()
        && provider.tools != crate::config::ToolsMode::Auto
    {
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
