//! What `/model` shows: the provider's models, each with its context window and where that came
//! from, and the model in use first when the server does not list it; and the context window of
//! the model in use, asked of its server. Runs as tasks (the calls are bounded by
//! `llm::models::PROBE_TIMEOUT`).

use super::core::Core;
use super::{HostEvent, ModelRow, ModelsReport};
use crate::config::ProviderConfig;
use crate::llm::ProviderSettings;
use crate::llm::models::parse::{ModelInfo, find_listed};
use crate::llm::models::{Listing, ModelsClient, ServerFacts, probe_facts_once};
use crate::llm::window::{self, ServerWindow};
use std::sync::Arc;

/// List the provider's models for `/model` (a task) and tell the app.
pub(super) fn list_models(core: &Arc<Core>, current: String) {
    let Some(choice) = core.launch.provider.as_ref() else {
        return core.tell(HostEvent::Error(
            "there is no provider to list models from: check [provider] in the config and the API key (vaultchat doctor)".into(),
        ));
    };
    let (settings, core) = (choice.settings.clone(), Arc::clone(core));
    tokio::spawn(async move {
        let report = load(&settings, &core.launch.config.provider, &current).await;
        core.tell(HostEvent::Models(report));
    });
}

/// Tell the app the context window of `model`: the known one at once, then (once per model and
/// run, not at all when the config sets it) what its server says.
pub(super) fn find_window(core: &Arc<Core>, model: &str) {
    let known = core.launch.known_window(model);
    core.agent.offer_window(model, known);
    core.tell(HostEvent::Window {
        model: model.to_string(),
        tokens: known,
    });
    let Some(choice) = core.launch.provider.as_ref() else {
        return;
    };
    let Some(probe) =
        crate::llm::models::spawn_probe(&core.launch.config.provider, &choice.settings, model)
    else {
        return;
    };
    let (model, core) = (model.to_string(), Arc::clone(core));
    tokio::spawn(async move {
        if let Err(e) = probe.await {
            tracing::warn!("the context window probe ended early: {e}");
        }
        let tokens = core.launch.known_window(&model);
        core.agent.offer_window(&model, tokens);
        core.tell(HostEvent::Window { model, tokens });
    });
}

/// The list for the view, or why there is none.
async fn load(
    settings: &ProviderSettings,
    provider: &ProviderConfig,
    current: &str,
) -> Result<ModelsReport, String> {
    let client = ModelsClient::new(settings).map_err(|e| e.to_string())?;
    let listing = client
        .list()
        .await
        .map_err(|e| format!("the models could not be listed: {e}"))?;
    // The model in use gets the full probe (its server's /props or /api/show), once per run.
    let facts = probe_facts_once(settings, current).await;
    let probed = facts.window;
    let label = format!("{} · {}", settings.kind.as_str(), settings.base_url);
    Ok(match listing {
        Listing::Listed(models) => ModelsReport {
            label,
            current: current.to_string(),
            rows: rows(&models, current, &facts, provider),
            listed: true,
        },
        Listing::NotListed => {
            let row = ModelRow {
                id: current.to_string(),
                window: window::choose(window::configured(provider, current), probed, current),
                trained: facts.trained.map(|t| t.tokens),
                unlisted: false,
            };
            ModelsReport {
                label,
                current: current.to_string(),
                rows: vec![row],
                listed: false,
            }
        }
    })
}

/// A row per listed model; the model in use is named as the person named it, and put first
/// (marked) when the server does not list it.
fn rows(
    models: &[ModelInfo],
    current: &str,
    facts: &ServerFacts,
    provider: &ProviderConfig,
) -> Vec<ModelRow> {
    let probed: Option<ServerWindow> = facts.window;
    let in_use = find_listed(models, current)
        .or_else(|| (models.len() == 1).then(|| &models[0]))
        .map(|m| m.id.clone());
    let mut rows: Vec<ModelRow> = models
        .iter()
        .map(|model| {
            let is_current = in_use.as_deref() == Some(model.id.as_str());
            // The person's name for it (`llama3.2`, not `llama3.2:latest`) is what /model sets;
            // a server of one model (llama.cpp's) answers to any name, so the row in use is named
            // as the person named it and marked in use.
            let id = if is_current {
                current.to_string()
            } else {
                model.id.clone()
            };
            let server = if is_current {
                probed.or(model.best_window())
            } else {
                model.best_window()
            };
            ModelRow {
                window: window::choose(window::configured(provider, &id), server, &id),
                trained: if is_current {
                    facts.trained.map(|t| t.tokens)
                } else {
                    None
                },
                id,
                unlisted: false,
            }
        })
        .collect();
    if in_use.is_none() {
        rows.insert(
            0,
            ModelRow {
                id: current.to_string(),
                window: window::choose(window::configured(provider, current), probed, current),
                trained: facts.trained.map(|t| t.tokens),
                unlisted: true,
            },
        );
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::window::WindowSource;

    fn info(id: &str, window: Option<u64>) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            window: window.map(|tokens| ServerWindow {
                tokens,
                field: "/v1/models max_model_len",
            }),
            trained: None,
            status: None,
        }
    }

    #[test]
    fn the_model_in_use_keeps_its_name_and_gets_the_probed_window() {
        let models = [info("llama3.2:latest", None), info("gpt-4o", None)];
        let probed = Some(ServerWindow {
            tokens: 131_072,
            field: "Ollama /api/show context_length",
        });
        let facts = ServerFacts {
            window: probed,
            ..ServerFacts::default()
        };
        let rows = rows(&models, "llama3.2", &facts, &ProviderConfig::default());
        assert_eq!(rows[0].id, "llama3.2");
        assert_eq!(rows[0].window.tokens, 131_072);
        assert_eq!(rows[1].window.source, WindowSource::Table);
        assert!(rows.iter().all(|r| !r.unlisted));
    }

    #[test]
    fn an_unlisted_model_in_use_comes_first_and_config_wins() {
        let models = [info("a", Some(4_096)), info("b", None)];
        let mut provider = ProviderConfig::default();
        provider.context_windows.insert("b".into(), 1_000);
        let rows = rows(&models, "mine", &ServerFacts::default(), &provider);
        let ids: Vec<(&str, bool)> = rows.iter().map(|r| (r.id.as_str(), r.unlisted)).collect();
        assert_eq!(ids, [("mine", true), ("a", false), ("b", false)]);
        assert_eq!(rows[0].window.source, WindowSource::Default);
        assert_eq!(
            rows[1].window.source,
            WindowSource::Server("/v1/models max_model_len")
        );
        assert_eq!(rows[2].window.source, WindowSource::Config);
    }

    /// llama.cpp's server lists the one model it serves by its file path and answers to any
    /// name: the row is the model in use, named as the person named it (so the view marks it ●).
    #[test]
    fn a_server_of_one_model_lists_it_as_the_one_in_use() {
        let models = [info("models/SmolLM2-135M-Instruct.Q4_1.gguf", Some(8_192))];
        let rows = rows(
            &models,
            "smollm2",
            &ServerFacts::default(),
            &ProviderConfig::default(),
        );
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].id.as_str(), rows[0].unlisted), ("smollm2", false));
        assert_eq!(rows[0].window.tokens, 8_192);
    }
}
