//! Starting a session, in one place for `vaultchat ask` and the app: which provider and model
//! (flags over config over environment), the tools of every tier (workspace tools now, the
//! person's MCP servers when they are up, session tools per turn), the permission rules, the
//! store, and the defaults (max tokens, max steps, context window).

use super::{
    Agent, AgentSettings, ContextSettings, MAX_STEPS, PendingTools, SessionError, SessionLog,
    load_rules,
};
use crate::config::Config;
use crate::llm::{LlmError, Provider, ProviderKind, ProviderSettings};
use crate::permission::RulesError;
use crate::store::{Store, StoreError};
use crate::tools::Registry;
use crate::tools::workspace::{self, Workspace};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The most tokens of one response, unless `provider.max_tokens` says otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The model's context window when nothing says otherwise (see [`crate::llm::window`]).
pub const DEFAULT_CONTEXT_WINDOW: u64 = crate::llm::window::DEFAULT_CONTEXT_WINDOW;

/// The context window of the configured model, in tokens: the config, else what its server said
/// (once the probe has run: `crate::llm::models::probe_once`), else the built-in table, else the
/// default. [`crate::llm::window::for_model`] gives it for any model, with its source.
pub fn context_window(config: &Config) -> u64 {
    let kind = config.provider.kind;
    let model = configured_model(config, &ProviderFlags::default())
        .unwrap_or_else(|| default_model(kind).to_string());
    crate::llm::window::for_model(&config.provider, &model).tokens
}

/// The model a provider kind uses when none is named.
pub fn default_model(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "claude-sonnet-4-5",
        ProviderKind::OpenAi => "gpt-4o-mini",
    }
}

/// The provider flags of the command line; each overrides its `[provider]` key.
#[derive(Debug, Clone, Default)]
pub struct ProviderFlags {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

/// The provider to talk to, and the model to ask.
#[derive(Debug, Clone)]
pub struct ProviderChoice {
    pub settings: ProviderSettings,
    pub model: String,
}

/// Why there is no provider to talk to (a usage error: a flag or the environment is wrong).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProviderProblem(pub String);

/// The provider kind the flags or the config name.
pub fn provider_kind(
    config: &Config,
    flags: &ProviderFlags,
) -> Result<ProviderKind, ProviderProblem> {
    match flags.provider.as_deref() {
        Some("anthropic") => Ok(ProviderKind::Anthropic),
        Some("openai") => Ok(ProviderKind::OpenAi),
        Some(other) => Err(ProviderProblem(format!(
            "--provider {other}: the providers are `anthropic` and `openai` (any OpenAI-compatible server)"
        ))),
        None => Ok(config.provider.kind),
    }
}

/// The model the flags or the config name, without looking for a provider.
pub fn configured_model(config: &Config, flags: &ProviderFlags) -> Option<String> {
    flags
        .model
        .clone()
        .or_else(|| config.provider.model.clone())
}

/// The provider from flags, config and environment, and the model name.
pub fn provider_choice(
    config: &Config,
    flags: &ProviderFlags,
) -> Result<ProviderChoice, ProviderProblem> {
    let kind = provider_kind(config, flags)?;
    let provider = &config.provider;
    let (key_env, url_env, default_url) = match kind {
        ProviderKind::Anthropic => (
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "https://api.anthropic.com",
        ),
        ProviderKind::OpenAi => (
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "https://api.openai.com/v1",
        ),
    };
    let key_env = provider.api_key_env.as_deref().unwrap_or(key_env);
    let api_key = std::env::var(key_env).ok().filter(|k| !k.trim().is_empty());
    let base_url = flags
        .base_url
        .clone()
        .or_else(|| provider.base_url.clone())
        .or_else(|| std::env::var(url_env).ok().filter(|u| !u.trim().is_empty()))
        .unwrap_or_else(|| default_url.to_string());
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(ProviderProblem(format!(
            "the base URL `{base_url}` is not an http:// or https:// URL"
        )));
    }
    // Checked before anything is sent: with local_only, a remote server never sees a byte.
    let pinned = if config.privacy.local_only {
        let pinned = crate::config::locality::local_host(&base_url).map_err(|e| {
            ProviderProblem(format!(
                "[privacy] local_only is on and the provider is refused: {e}. Use a server on this machine or your network (e.g. --provider openai --base-url http://localhost:11434/v1), or set local_only = false"
            ))
        })?;
        Some(pinned)
    } else {
        None
    };
    if api_key.is_none() && kind == ProviderKind::Anthropic {
        return Err(ProviderProblem(format!(
            "no API key: set {key_env} (or name another variable with api_key_env in [provider]); or use a model on this machine: --provider openai --base-url http://localhost:11434/v1 --model NAME (Ollama, llama.cpp), with [privacy] local_only = true to keep every request local"
        )));
    }
    let model = configured_model(config, flags).unwrap_or_else(|| default_model(kind).to_string());
    Ok(ProviderChoice {
        settings: ProviderSettings {
            kind,
            base_url,
            api_key,
            connect_timeout: Duration::from_secs(provider.connect_timeout_secs.unwrap_or(5)),
            idle_timeout: Duration::from_secs(provider.idle_timeout_secs.unwrap_or(120)),
            max_retries: provider.max_retries.unwrap_or(2),
            pinned,
            thinking_budget: provider.thinking_budget.unwrap_or(0),
        },
        model,
    })
}

/// The tools every session starts with: the workspace tools (MCP servers' tools join when their
/// servers are up; session tools are offered per turn).
pub fn workspace_registry(workspace: &Arc<Workspace>) -> Registry {
    let mut registry = Registry::new();
    workspace::register(&mut registry, workspace);
    registry
}

/// Which session an agent works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// A new one (created in the store when its first turn starts).
    New,
    /// A stored one, by id or a unique id prefix.
    Session(String),
    /// The vault's most recent one.
    Latest,
    /// A new one that continues a stored one (by id or a unique id prefix; `None`: the vault's
    /// most recent) from its summary, linked to it.
    ContinueNew(Option<String>),
}

/// Why an agent could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Provider(#[from] LlmError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// An agent for one vault, built the same way by every front end.
pub struct SessionBuilder<'a> {
    config: &'a Config,
    database: PathBuf,
    workspace: Arc<Workspace>,
    provider: ProviderChoice,
    max_steps: Option<u32>,
    pending_tools: Option<PendingTools>,
}

impl<'a> SessionBuilder<'a> {
    /// `database` is the app database file (sessions, usage, stored rules).
    pub fn new(
        config: &'a Config,
        database: PathBuf,
        workspace: Arc<Workspace>,
        provider: ProviderChoice,
    ) -> Self {
        Self {
            config,
            database,
            workspace,
            provider,
            max_steps: None,
            pending_tools: None,
        }
    }

    /// The most model responses in one turn (`ask --max-steps`); else `provider.max_steps`.
    pub fn max_steps(self, max_steps: Option<u32>) -> Self {
        Self { max_steps, ..self }
    }

    /// Tools that join once their servers are up (the first turn waits for them).
    pub fn pending_tools(self, tools: Option<PendingTools>) -> Self {
        Self {
            pending_tools: tools,
            ..self
        }
    }

    /// The context window of the model this agent starts with (`--model` included, which
    /// [`context_window`] cannot see): the config, else its server's answer once
    /// `llm::models::probe_once` ran, else the built-in table, else the default.
    pub fn context_window(&self) -> u64 {
        crate::llm::window::for_model(&self.config.provider, &self.provider.model).tokens
    }

    /// The agent's settings: the model in one place (`/model` changes it there).
    pub fn settings(&self) -> AgentSettings {
        let provider = &self.config.provider;
        AgentSettings {
            provider_name: self.provider.settings.kind.as_str().to_string(),
            model: self.provider.model.clone(),
            max_tokens: provider.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            max_steps: self.max_steps.or(provider.max_steps).unwrap_or(MAX_STEPS),
            context: ContextSettings {
                window: self.context_window(),
                threshold: self.config.context.compact_threshold,
                auto: self.config.context.auto_compact,
            },
        }
    }

    /// Open the store, load the rules, find the session and make the agent.
    pub fn build(self, resume: Resume) -> Result<Agent, BuildError> {
        let store = Store::open(&self.database)?;
        let vault_id = self.workspace.vault_id().to_string();
        let rules = load_rules(self.config, &store, &vault_id)?;
        // The vault's root beside its id: a session of this vault asked for from another one is
        // refused naming this folder (`StoreError::SessionOfAnotherVault`).
        let now_unix = crate::time::now_ms() / 1000;
        store.touch_vault(&vault_id, self.workspace.vault().root(), now_unix)?;
        let log = match resume {
            Resume::New => SessionLog::new(store, &vault_id),
            Resume::Session(id) => SessionLog::resume(store, &vault_id, &id)?,
            Resume::Latest => SessionLog::continue_latest(store, &vault_id)?,
            Resume::ContinueNew(Some(id)) => SessionLog::continuing(store, &vault_id, &id)?,
            Resume::ContinueNew(None) => SessionLog::continuing_latest(store, &vault_id)?,
        };
        let settings = self.settings();
        // Requests are estimated before they are sent (and responses without usage after):
        // the tokenizer loads meanwhile.
        crate::llm::tokens::preload(&settings.model);
        let provider = Provider::new(self.provider.settings)?;
        let registry = workspace_registry(&self.workspace);
        let window_configured =
            crate::llm::window::configured(&self.config.provider, &settings.model).is_some();
        let agent = Agent::new(provider, self.workspace, registry, settings, rules, log)
            .with_server_settings(
                self.config.provider.tools,
                self.config.provider.tool_set,
                window_configured,
            );
        Ok(match self.pending_tools {
            Some(tools) => agent.with_pending_tools(tools),
            None => agent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(provider: Option<&str>, base_url: Option<&str>) -> ProviderFlags {
        ProviderFlags {
            provider: provider.map(str::to_string),
            model: Some("local".into()),
            base_url: base_url.map(str::to_string),
        }
    }

    /// OpenAI-compatible servers need no key; the flags win over the config.
    #[test]
    fn flags_choose_the_provider_and_model() {
        let mut config = Config::default();
        config.provider.model = Some("from-config".into());
        config.provider.api_key_env = Some("VAULTCHAT_TEST_NO_SUCH_KEY".into());
        let choice = provider_choice(
            &config,
            &flags(Some("openai"), Some("http://localhost:1/v1")),
        );
        let choice = choice.map_err(|e| e.0);
        assert_eq!(
            choice.as_ref().map(|c| (
                c.settings.kind,
                c.model.as_str(),
                c.settings.base_url.as_str()
            )),
            Ok((ProviderKind::OpenAi, "local", "http://localhost:1/v1"))
        );
    }

    /// An unknown provider, a missing Anthropic key and a base URL that is not http are usage
    /// problems, each said.
    #[test]
    fn problems_are_named() {
        let mut config = Config::default();
        config.provider.api_key_env = Some("VAULTCHAT_TEST_NO_SUCH_KEY".into());
        let problem = |f: ProviderFlags| provider_choice(&config, &f).err().map(|e| e.0);
        assert!(
            problem(flags(Some("mistral"), None)).is_some_and(|p| p.contains("--provider mistral"))
        );
        assert!(
            problem(flags(None, None)).is_some_and(|p| p.contains("VAULTCHAT_TEST_NO_SUCH_KEY"))
        );
        assert!(
            problem(flags(Some("openai"), Some("ftp://x"))).is_some_and(|p| p.contains("ftp://x"))
        );
    }

    /// The defaults live here: max tokens, max steps, the context window.
    #[test]
    fn defaults_and_overrides() {
        let mut config = Config::default();
        // The default model, claude-sonnet-4-5, is in the built-in table.
        assert_eq!(context_window(&config), 200_000);
        config.provider.model = Some("a-model-nothing-knows".into());
        assert_eq!(context_window(&config), DEFAULT_CONTEXT_WINDOW);
        config.provider.context_window = Some(8_000);
        assert_eq!(context_window(&config), 8_000);
        config
            .provider
            .context_windows
            .insert("a-model-nothing-knows".into(), 4_000);
        assert_eq!(context_window(&config), 4_000);
    }

    fn workspace(dir: &std::path::Path) -> (Arc<Workspace>, crate::config::Paths) {
        let vault = dir.join("vault");
        std::fs::create_dir_all(&vault).unwrap();
        let paths = crate::config::Paths::under(&dir.join("data"));
        let ws = Workspace::open(
            crate::vault::Vault::open(&vault).unwrap(),
            &paths,
            &Config::default(),
            crate::store::Actor::Agent,
        )
        .unwrap();
        (ws, paths)
    }

    fn openai() -> ProviderChoice {
        ProviderChoice {
            settings: ProviderSettings::new(ProviderKind::OpenAi, "http://127.0.0.1:9/v1", None),
            model: "local".into(),
        }
    }

    /// The builder makes an agent on a new session with the settings in one place, and says
    /// when there is nothing to continue or no such session.
    #[test]
    fn builds_new_sessions_and_names_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (ws, paths) = workspace(dir.path());
        let config = Config::default();
        let builder =
            SessionBuilder::new(&config, paths.database_file(), Arc::clone(&ws), openai())
                .max_steps(Some(3));
        let settings = builder.settings();
        assert_eq!(
            (settings.provider_name.as_str(), settings.model.as_str()),
            ("openai", "local")
        );
        // `local` is in no table and no server was asked: the default.
        assert_eq!(builder.context_window(), DEFAULT_CONTEXT_WINDOW);
        assert_eq!(
            (settings.max_tokens, settings.max_steps),
            (DEFAULT_MAX_TOKENS, 3)
        );
        let agent = builder.build(Resume::New).unwrap();
        assert_eq!(agent.session_id(), None);

        let latest = SessionBuilder::new(&config, paths.database_file(), Arc::clone(&ws), openai())
            .build(Resume::Latest);
        assert!(matches!(
            latest,
            Err(BuildError::Session(SessionError::NothingToContinue))
        ));
        let unknown = SessionBuilder::new(&config, paths.database_file(), ws, openai())
            .build(Resume::Session("abcdef".into()));
        assert!(matches!(
            unknown,
            Err(BuildError::Session(SessionError::Unknown(_)))
        ));
    }
}
