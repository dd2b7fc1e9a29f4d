//! The model's context window: how many tokens one request may hold, and where that number came
//! from. The order is the config (`[provider.context_windows]`, then `[provider] context_window`),
//! then what the server says (probed once per run, see [`super::models`]), then the built-in
//! table of known Anthropic and OpenAI models, then a default.
//!
//! The usage meter and the agent both ask [`for_model`]; the server's answer is kept in a
//! process-wide cache so that every caller sees the same number once the probe has run.

use crate::config::ProviderConfig;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The window when nothing else says: the size of the Claude models, the default provider's.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

pub use crate::protocol::{ContextWindow, WindowSource};

impl WindowSource {
    /// One word for machines: `config`, `server`, `table` or `default`.
    pub fn kind(&self) -> &'static str {
        match self {
            WindowSource::Config => "config",
            WindowSource::Server(_) => "server",
            WindowSource::Table => "table",
            WindowSource::Default => "default",
        }
    }

    /// The field the server said it in.
    pub fn server_field(&self) -> Option<&'static str> {
        match self {
            WindowSource::Server(field) => Some(field),
            WindowSource::Config | WindowSource::Table | WindowSource::Default => None,
        }
    }
}

impl std::fmt::Display for WindowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WindowSource::Config => f.write_str("config"),
            WindowSource::Server(field) => write!(f, "server: {field}"),
            WindowSource::Table => f.write_str("built-in table"),
            WindowSource::Default => f.write_str("default"),
        }
    }
}

impl std::fmt::Display for ContextWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} tokens ({})", self.tokens, self.source)
    }
}

/// What a server said about a model's window, and in which field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerWindow {
    pub tokens: u64,
    pub field: &'static str,
}

/// Known models by name prefix: a name matches the longest entry it starts with, followed by the
/// end of the name or a `-` (dated snapshots such as `gpt-4o-2024-08-06`,
/// `claude-sonnet-4-5-20250929`). Sizes are the providers' documented input windows.
///
/// Claude Sonnet 4 and 4.5 take 1M tokens only with a beta header vaultchat does not send, so
/// 200k is what a request here may hold; a gateway that enables more is set in
/// `[provider.context_windows]`.
const TABLE: &[(&str, u64)] = &[
    // Anthropic: every Claude 3 and 4 model has a 200k window; Claude 2.0 and Instant had 100k.
    ("claude", 200_000),
    ("claude-2.0", 100_000),
    ("claude-instant", 100_000),
    // OpenAI.
    ("gpt-3.5-turbo", 16_385),
    ("gpt-3.5-turbo-instruct", 4_096),
    ("gpt-4", 8_192),
    ("gpt-4-32k", 32_768),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-1106-preview", 128_000),
    ("gpt-4-0125-preview", 128_000),
    ("gpt-4-vision-preview", 128_000),
    ("gpt-4o", 128_000),
    ("gpt-4o-mini", 128_000),
    ("chatgpt-4o-latest", 128_000),
    ("gpt-4.5-preview", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.1-mini", 1_047_576),
    ("gpt-4.1-nano", 1_047_576),
    ("o1", 200_000),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o1-pro", 200_000),
    ("o3", 200_000),
    ("o3-mini", 200_000),
    ("o3-pro", 200_000),
    ("o4-mini", 200_000),
    ("gpt-5", 400_000),
    ("gpt-5-mini", 400_000),
    ("gpt-5-nano", 400_000),
    ("gpt-5-codex", 400_000),
    ("gpt-5-chat", 128_000),
    ("gpt-5.1", 400_000),
    ("gpt-5.1-codex", 400_000),
    ("gpt-5.1-chat", 128_000),
    ("gpt-oss-20b", 131_072),
    ("gpt-oss-120b", 131_072),
];

/// The built-in window of a known model, by name. A routing prefix (`openai/gpt-4o` on
/// OpenRouter) and a tag (`gpt-oss:20b` on Ollama spells it with a colon) are looked through.
pub fn builtin(model: &str) -> Option<u64> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let name = name.replace(':', "-");
    TABLE
        .iter()
        .filter(|(prefix, _)| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|&(_, tokens)| tokens)
}

/// The window the config gives `model`: its `[provider.context_windows]` entry, else
/// `[provider] context_window` (which holds for every model without an entry).
pub fn configured(provider: &ProviderConfig, model: &str) -> Option<u64> {
    provider
        .context_windows
        .get(model)
        .copied()
        .or(provider.context_window)
        .filter(|&tokens| tokens > 0)
}

/// Config over server over table over default.
pub fn choose(configured: Option<u64>, server: Option<ServerWindow>, model: &str) -> ContextWindow {
    if let Some(tokens) = configured {
        return ContextWindow {
            tokens,
            source: WindowSource::Config,
        };
    }
    if let Some(server) = server.filter(|s| s.tokens > 0) {
        return ContextWindow {
            tokens: server.tokens,
            source: WindowSource::Server(server.field),
        };
    }
    match builtin(model) {
        Some(tokens) => ContextWindow {
            tokens,
            source: WindowSource::Table,
        },
        None => ContextWindow {
            tokens: DEFAULT_CONTEXT_WINDOW,
            source: WindowSource::Default,
        },
    }
}

/// The window of `model` with what is known now: the config, the server's answer if the probe
/// has run for it, the table, the default.
pub fn for_model(provider: &ProviderConfig, model: &str) -> ContextWindow {
    choose(
        configured(provider, model),
        remembered(model).flatten(),
        model,
    )
}

/// The server's answers of this run, by model (`None`: asked, the server did not say).
fn cache() -> &'static Mutex<HashMap<String, Option<ServerWindow>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<ServerWindow>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Keep what the server said about `model` (or that it said nothing) for the rest of the run.
pub fn remember(model: &str, window: Option<ServerWindow>) {
    // A poisoned lock only means another thread panicked mid-insert; the map is still usable.
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.insert(model.to_string(), window);
}

/// What the server said about `model` this run: `None` if it was never asked.
pub fn remembered(model: &str) -> Option<Option<ServerWindow>> {
    let cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.get(model).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_models_and_their_snapshots_have_their_windows() {
        let cases = [
            ("claude-sonnet-4-5", Some(200_000)),
            ("claude-sonnet-4-5-20250929", Some(200_000)),
            ("claude-opus-4-1", Some(200_000)),
            ("claude-3-5-haiku-latest", Some(200_000)),
            ("claude-2.0", Some(100_000)),
            ("claude-instant-1.2", Some(100_000)),
            ("gpt-4o", Some(128_000)),
            ("gpt-4o-2024-08-06", Some(128_000)),
            ("gpt-4o-mini", Some(128_000)),
            ("gpt-4.1", Some(1_047_576)),
            ("gpt-4.1-mini-2025-04-14", Some(1_047_576)),
            ("gpt-4", Some(8_192)),
            ("gpt-4-0613", Some(8_192)),
            ("gpt-4-turbo-2024-04-09", Some(128_000)),
            ("gpt-3.5-turbo", Some(16_385)),
            ("o1", Some(200_000)),
            ("o1-mini", Some(128_000)),
            ("o3-mini-2025-01-31", Some(200_000)),
            ("o4-mini", Some(200_000)),
            ("gpt-5", Some(400_000)),
            ("gpt-5-mini", Some(400_000)),
            ("gpt-5-chat-latest", Some(128_000)),
            ("openai/gpt-4o", Some(128_000)),
            ("anthropic/claude-3.5-sonnet", Some(200_000)),
            ("gpt-oss:20b", Some(131_072)),
            ("GPT-4o", Some(128_000)),
        ];
        for (model, tokens) in cases {
            assert_eq!(builtin(model), tokens, "{model}");
        }
    }

    #[test]
    fn unknown_and_lookalike_names_are_not_in_the_table() {
        for model in [
            "llama3.2",
            "gpt-4omni",
            "o10",
            "claudette",
            "qwen2.5:7b",
            "",
            "o",
        ] {
            assert_eq!(builtin(model), None, "{model}");
        }
    }

    #[test]
    fn config_beats_the_server_which_beats_the_table_which_beats_the_default() {
        let server = Some(ServerWindow {
            tokens: 16_384,
            field: "llama.cpp /props n_ctx",
        });
        let window = |configured, server, model| choose(configured, server, model);
        assert_eq!(
            window(Some(8_000), server, "gpt-4o"),
            ContextWindow {
                tokens: 8_000,
                source: WindowSource::Config
            }
        );
        assert_eq!(
            window(None, server, "gpt-4o"),
            ContextWindow {
                tokens: 16_384,
                source: WindowSource::Server("llama.cpp /props n_ctx")
            }
        );
        assert_eq!(
            window(None, None, "gpt-4o"),
            ContextWindow {
                tokens: 128_000,
                source: WindowSource::Table
            }
        );
        assert_eq!(
            window(None, None, "llama3.2"),
            ContextWindow {
                tokens: DEFAULT_CONTEXT_WINDOW,
                source: WindowSource::Default
            }
        );
        // A server that says 0 said nothing.
        let zero = Some(ServerWindow {
            tokens: 0,
            field: "x",
        });
        assert_eq!(window(None, zero, "gpt-4o").source, WindowSource::Table);
    }

    #[test]
    fn a_models_own_entry_beats_the_provider_wide_window() {
        let mut provider = ProviderConfig {
            context_window: Some(32_000),
            ..ProviderConfig::default()
        };
        provider.context_windows.insert("llama3.2".into(), 8_192);
        assert_eq!(configured(&provider, "llama3.2"), Some(8_192));
        assert_eq!(configured(&provider, "qwen3"), Some(32_000));
        provider.context_window = None;
        assert_eq!(configured(&provider, "qwen3"), None);
    }

    #[test]
    fn the_servers_answer_is_remembered_per_model() {
        let model = "window-test-model-that-nothing-else-uses";
        let provider = ProviderConfig::default();
        assert_eq!(remembered(model), None);
        assert_eq!(for_model(&provider, model).source, WindowSource::Default);
        remember(
            model,
            Some(ServerWindow {
                tokens: 4_096,
                field: "llama.cpp /props n_ctx",
            }),
        );
        assert_eq!(for_model(&provider, model).tokens, 4_096);
        assert_eq!(
            for_model(&provider, model).to_string(),
            "4096 tokens (server: llama.cpp /props n_ctx)"
        );
    }
}
