//! `vaultchat doctor`, the provider part: the key, whether the server answers, whether it lists
//! the model, and the model's context window with where that number came from. Every network
//! call is bounded by `llm::models::PROBE_TIMEOUT` (a few seconds).

use super::doctor::Report;
use super::{Context, Failure, GlobalArgs};
use crate::agent::build::{ProviderChoice, provider_choice, provider_kind};
use crate::llm::models::parse::find_listed;
use crate::llm::models::{Listing, ModelsClient, ModelsError, ServerFacts};
use crate::llm::window;
use crate::llm::{ProviderKind, ProviderSettings};

/// What the server answered, for the lines of the report.
struct ServerAnswer {
    listing: Result<Listing, ModelsError>,
    facts: ServerFacts,
}

/// The environment variable that holds the key.
fn key_variable(ctx: &Context, kind: ProviderKind) -> String {
    ctx.config
        .provider
        .api_key_env
        .clone()
        .unwrap_or_else(|| match kind {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY".into(),
            ProviderKind::OpenAi => "OPENAI_API_KEY".into(),
        })
}

pub(super) fn check_provider(
    ctx: &Context,
    global: &GlobalArgs,
    report: &mut Report,
) -> Result<(), Failure> {
    let flags = super::ask_cmd::provider_flags(global);
    let kind = match provider_kind(&ctx.config, &flags) {
        Ok(kind) => kind,
        Err(problem) => {
            report.fail("provider", problem);
            return Ok(());
        }
    };
    let choice = match provider_choice(&ctx.config, &flags) {
        Ok(choice) => choice,
        // No key for Anthropic, or a base URL that is not http: the chat cannot start, the
        // notes, search and MCP server work as they are.
        Err(problem) => {
            report.warn("provider", format!("{problem} (the chat needs it)"));
            return Ok(());
        }
    };
    let settings = &choice.settings;
    report.ok(
        "provider",
        format!(
            "{} at {}, model {}",
            kind.as_str(),
            settings.base_url,
            choice.model
        ),
    );
    check_key(ctx, settings, report);
    let answer = ask_server(settings, &choice.model)?;
    report_server(&choice, &answer, report);
    let window = window::choose(
        window::configured(&ctx.config.provider, &choice.model),
        answer.facts.window,
        &choice.model,
    );
    report.ok("context window", window_line(&window, &answer.facts));
    let tools = report_tools(&ctx.config.provider, &answer.facts, report);
    let listed = match &answer.listing {
        Ok(Listing::Listed(models)) => {
            serde_json::Value::Bool(find_listed(models, &choice.model).is_some())
        }
        Ok(Listing::NotListed) | Err(_) => serde_json::Value::Null,
    };
    report.provider = Some(serde_json::json!({
        "kind": kind.as_str(),
        "base_url": settings.base_url,
        "model": choice.model,
        "api_key": settings.api_key.is_some(),
        "reachable": answer.listing.is_ok(),
        "model_listed": listed,
        "context_window": window_json(&window, &answer.facts),
        "tools": tools,
    }));
    Ok(())
}

fn check_key(ctx: &Context, settings: &ProviderSettings, report: &mut Report) {
    let variable = key_variable(ctx, settings.kind);
    match (settings.kind, settings.api_key.is_some()) {
        (_, true) => report.ok("api key", format!("{variable} is set")),
        (ProviderKind::OpenAi, false) if is_openai_host(&settings.base_url) => report.fail(
            "api key",
            format!("{variable} is not set; api.openai.com needs a key"),
        ),
        (ProviderKind::OpenAi, false) => report.ok(
            "api key",
            format!("none ({variable} is not set; local servers need none)"),
        ),
        // provider_choice refuses Anthropic without a key before this.
        (ProviderKind::Anthropic, false) => {
            report.warn("api key", format!("{variable} is not set"))
        }
    }
}

fn is_openai_host(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .is_some_and(|url| url.host_str() == Some("api.openai.com"))
}

/// The model list, and the window when the server answered at all.
fn ask_server(settings: &ProviderSettings, model: &str) -> Result<ServerAnswer, Failure> {
    let client = match ModelsClient::new(settings) {
        Ok(client) => client,
        Err(e) => {
            return Ok(ServerAnswer {
                listing: Err(ModelsError::Unreachable {
                    url: settings.base_url.clone(),
                    message: e.to_string(),
                }),
                facts: ServerFacts::default(),
            });
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(runtime.block_on(async {
        let listing = client.list().await;
        // A server that did not answer the list will not answer the rest in time either.
        let facts = match &listing {
            Ok(listing) => client.server_facts(model, Some(listing)).await,
            Err(_) => ServerFacts::default(),
        };
        ServerAnswer { listing, facts }
    }))
}

fn report_server(choice: &ProviderChoice, answer: &ServerAnswer, report: &mut Report) {
    let model = &choice.model;
    match &answer.listing {
        Ok(Listing::Listed(models)) => {
            report.ok(
                "server",
                format!(
                    "{} answers; {} model{} listed",
                    choice.settings.base_url,
                    models.len(),
                    if models.len() == 1 { "" } else { "s" }
                ),
            );
            match find_listed(models, model) {
                Some(entry) if &entry.id == model => {
                    report.ok("model", format!("{model} is listed"))
                }
                Some(entry) => report.ok("model", format!("{model} is listed as {}", entry.id)),
                None => {
                    let shown: Vec<&str> = models.iter().take(5).map(|m| m.id.as_str()).collect();
                    let more = models.len().saturating_sub(shown.len());
                    let more = if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    };
                    report.warn(
                        "model",
                        format!(
                            "{model} is not among the models the server lists: {}{more}",
                            shown.join(", ")
                        ),
                    );
                }
            }
        }
        Ok(Listing::NotListed) => {
            report.ok("server", format!("{} answers", choice.settings.base_url));
            report.ok(
                "model",
                format!("{model} (the server does not list models, so it is not checked)"),
            );
        }
        Err(e) if e.is_refused_key() => report.fail("server", format!("the key was refused: {e}")),
        Err(e) => report.fail("server", e),
    }
}

/// The window for `--json`: tokens, source and field, and the trained maximum when the server
/// said one beside a smaller running window.
fn window_json(used: &window::ContextWindow, facts: &ServerFacts) -> serde_json::Value {
    let mut value = serde_json::json!({
        "tokens": used.tokens,
        "source": used.source.kind(),
        "field": used.source.server_field(),
    });
    if let Some(trained) = facts.trained.filter(|t| t.tokens != used.tokens) {
        value["trained"] = serde_json::json!({"tokens": trained.tokens, "field": trained.field});
    }
    value
}

/// The window used and, beside it, the trained maximum the server also said (Ollama's
/// `/api/show` beside the context it allocated; llama.cpp's `n_ctx_train` beside `n_ctx`).
fn window_line(used: &window::ContextWindow, facts: &ServerFacts) -> String {
    let mut line = used.to_string();
    if let Some(trained) = facts.trained.filter(|t| t.tokens != used.tokens) {
        line.push_str(&format!(
            "; the model was trained for {} ({}), the smaller figure is what a request gets",
            trained.tokens, trained.field
        ));
        if used
            .source
            .server_field()
            .is_some_and(|f| f.starts_with("Ollama"))
        {
            line.push_str(
                "; raise it with OLLAMA_CONTEXT_LENGTH=16384 (ollama serve) or PARAMETER num_ctx 16384 in a Modelfile",
            );
        }
    }
    if facts.recheck {
        line.push_str(
            "; the server has not loaded the model, so the window it runs with is asked again after the first response (Ollama allocates 4096 by default below 24 GiB of VRAM)",
        );
    }
    line
}

/// Whether the model is sent tools, and why; the word for `--json`: `sent`, `none`, `always`,
/// `never`.
fn report_tools(
    provider: &crate::config::ProviderConfig,
    facts: &ServerFacts,
    report: &mut Report,
) -> &'static str {
    use crate::config::ToolsMode;
    match (provider.tools, facts.tools) {
        (ToolsMode::Never, _) => {
            report.ok("tools", "none are sent ([provider] tools = \"never\")");
            "never"
        }
        (ToolsMode::Always, Some(false)) => {
            report.warn(
                "tools",
                "the server says the model's chat template takes no tools, and [provider] tools = \"always\" sends them anyway: the template will likely drop them",
            );
            "always"
        }
        (ToolsMode::Always, _) => {
            report.ok("tools", "sent ([provider] tools = \"always\")");
            "always"
        }
        (ToolsMode::Auto, Some(false)) => {
            report.warn(
                "tools",
                "the server says the model's chat template takes no tools: vaultchat sends none, so the model can chat but not search, read or edit notes (pick a model whose template takes tools: Qwen 2.5 or 3, Llama 3.1+, Mistral; or set [provider] tools = \"always\")",
            );
            "none"
        }
        (ToolsMode::Auto, Some(true)) => {
            report.ok("tools", "sent (the server says the model takes tools)");
            "sent"
        }
        (ToolsMode::Auto, None) => {
            report.ok("tools", "sent");
            "sent"
        }
    }
}
