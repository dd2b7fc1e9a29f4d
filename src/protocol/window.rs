//! A model's context window and where the number came from, as `/model` shows it. Choosing it
//! (the config, the server, the built-in table, the default) stays in `llm::window`, which
//! re-exports these types.

/// Where a context window came from, as `/model` and `vaultchat doctor` show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// `[provider.context_windows]` or `[provider] context_window` in config.toml.
    Config,
    /// The server said, in this field (e.g. `llama.cpp /props n_ctx`).
    Server(&'static str),
    /// The built-in table of known models.
    Table,
    /// Nothing said; the default window (`llm::window::DEFAULT_CONTEXT_WINDOW`).
    Default,
}

/// A context window in tokens and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    pub tokens: u64,
    pub source: WindowSource,
}
