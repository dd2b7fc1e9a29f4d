//! Reading what servers say about their models: the model lists (`GET /v1/models` of OpenAI,
//! Anthropic, vLLM, llama.cpp, Ollama, OpenRouter, LM Studio), llama.cpp's `GET /props` and
//! Ollama's `POST /api/show`. Pure functions on parsed JSON, so each shape is tested on its bytes
//! (tests/fixtures/models/).

use crate::llm::window::ServerWindow;
use serde_json::Value;

/// One model a server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    pub id: String,
    /// The window the server runs the model with, when its list says (vLLM's `max_model_len`,
    /// OpenRouter's `context_length`, …).
    pub window: Option<ServerWindow>,
    /// The length the model was trained for (llama.cpp's `meta.n_ctx_train`): an upper bound,
    /// not what the server was started with, so it ranks below `/props`.
    pub trained: Option<ServerWindow>,
    /// llama.cpp's router mode (one `llama-server` for several models) says whether each model
    /// is running: `status.value` (`loaded`, `loading`, `unloaded`, …). `None` elsewhere.
    pub status: Option<String>,
}

impl ModelInfo {
    /// What to show for this model: the running window, else the trained length.
    pub fn best_window(&self) -> Option<ServerWindow> {
        self.window.or(self.trained)
    }
}

/// Fields of a model list entry that hold the window the server runs it with, in the order they
/// are believed (each names the server that sends it).
const LIST_WINDOW_FIELDS: &[(&str, &str)] = &[
    // vLLM
    ("max_model_len", "/v1/models max_model_len"),
    // OpenRouter, LM Studio's and Together's lists
    ("context_length", "/v1/models context_length"),
    // Groq
    ("context_window", "/v1/models context_window"),
    // LM Studio's native list
    ("max_context_length", "/v1/models max_context_length"),
    // Anthropic, where its list says
    ("max_input_tokens", "/v1/models max_input_tokens"),
];

/// The entries of a model list (`{"data": [{"id": …}, …]}`, the shape of OpenAI's list that
/// Anthropic's and every compatible server's share). `None` when the body is not such a list.
pub fn parse_list(body: &Value) -> Option<Vec<ModelInfo>> {
    let data = body.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|entry| {
                let id = entry.get("id")?.as_str()?.to_string();
                let window = LIST_WINDOW_FIELDS.iter().find_map(|(name, field)| {
                    positive(entry.get(*name)).map(|tokens| ServerWindow { tokens, field })
                });
                let trained =
                    positive(entry.pointer("/meta/n_ctx_train")).map(|tokens| ServerWindow {
                        tokens,
                        field: "/v1/models meta.n_ctx_train",
                    });
                let status = entry
                    .pointer("/status/value")
                    .or_else(|| entry.get("status").filter(|s| s.is_string()))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                Some(ModelInfo {
                    id,
                    window,
                    trained,
                    status,
                })
            })
            .collect(),
    )
}

/// llama.cpp's `GET /props`: the context of a slot (what one request may use), in
/// `default_generation_settings.n_ctx`, or at the top level on some versions.
pub fn parse_props(body: &Value) -> Option<ServerWindow> {
    positive(body.pointer("/default_generation_settings/n_ctx"))
        .or_else(|| positive(body.get("n_ctx")))
        .map(|tokens| ServerWindow {
            tokens,
            field: "llama.cpp /props n_ctx",
        })
}

/// llama.cpp's `GET /props`: whether the model's chat template renders a tool list
/// (`chat_template_caps.supports_tools`; older servers do not say).
pub fn parse_props_tools(body: &Value) -> Option<bool> {
    body.pointer("/chat_template_caps/supports_tools")
        .and_then(Value::as_bool)
}

/// Ollama's `GET /api/ps`: the context the running model was loaded with (`context_length`),
/// which is what a request really gets (Ollama cuts the start of a longer one). `None` when the
/// model is not loaded (or the server is older and does not say).
pub fn parse_ollama_ps(body: &Value, model: &str) -> Option<ServerWindow> {
    let models = body.get("models")?.as_array()?;
    let same = |name: &str| {
        name == model
            || name.strip_suffix(":latest") == Some(model)
            || model.strip_suffix(":latest") == Some(name)
    };
    models
        .iter()
        .find(|m| {
            ["name", "model"]
                .iter()
                .any(|key| m.get(*key).and_then(Value::as_str).is_some_and(same))
        })
        .and_then(|m| positive(m.get("context_length")))
        .map(|tokens| ServerWindow {
            tokens,
            field: "Ollama /api/ps context_length",
        })
}

/// Ollama's `POST /api/show`: whether the model takes tools (`capabilities` holds `tools`).
/// `None` when the server does not list capabilities (older versions).
pub fn parse_ollama_tools(body: &Value) -> Option<bool> {
    let capabilities = body.get("capabilities")?.as_array()?;
    Some(capabilities.iter().any(|c| c.as_str() == Some("tools")))
}

/// Ollama's `POST /api/show`: `num_ctx` when the model's parameters set it (the context Ollama
/// runs it with), else `model_info["<architecture>.context_length"]` (the trained length).
pub fn parse_ollama_show(body: &Value) -> Option<ServerWindow> {
    let num_ctx = body
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|parameters| {
            parameters.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse::<u64>().ok())
                    .flatten()
            })
        })
        .filter(|&n| n > 0);
    if let Some(tokens) = num_ctx {
        return Some(ServerWindow {
            tokens,
            field: "Ollama /api/show num_ctx",
        });
    }
    let info = body.get("model_info")?.as_object()?;
    let by_architecture = info
        .get("general.architecture")
        .and_then(Value::as_str)
        .and_then(|arch| positive(info.get(&format!("{arch}.context_length"))));
    by_architecture
        .or_else(|| {
            info.iter()
                .find(|(key, _)| key.ends_with(".context_length"))
                .and_then(|(_, value)| positive(Some(value)))
        })
        .map(|tokens| ServerWindow {
            tokens,
            field: "Ollama /api/show context_length",
        })
}

/// The entry of `model` in a list: the same id, Ollama's `:latest` tag, or a dated snapshot of an
/// alias (`claude-sonnet-4-5` is listed as `claude-sonnet-4-5-20250929`).
pub fn find_listed<'a>(models: &'a [ModelInfo], model: &str) -> Option<&'a ModelInfo> {
    models
        .iter()
        .find(|m| m.id == model)
        .or_else(|| {
            models
                .iter()
                .find(|m| m.id.strip_suffix(":latest") == Some(model))
        })
        .or_else(|| {
            models.iter().find(|m| {
                m.id.strip_prefix(model)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|date| date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()))
            })
        })
}

/// A positive integer, or nothing.
fn positive(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64).filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/models")
            .join(name);
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
    }

    fn window(tokens: u64, field: &'static str) -> Option<ServerWindow> {
        Some(ServerWindow { tokens, field })
    }

    #[test]
    fn openai_and_anthropic_lists_have_ids_and_no_windows() {
        let openai = parse_list(&fixture("openai_models.json")).unwrap();
        assert!(openai.iter().any(|m| m.id == "gpt-4o-mini"), "{openai:?}");
        assert!(openai.iter().all(|m| m.best_window().is_none()));
        let anthropic = parse_list(&fixture("anthropic_models.json")).unwrap();
        let ids: Vec<&str> = anthropic.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "claude-sonnet-4-5-20250929",
                "claude-haiku-4-5-20251001",
                "claude-opus-4-1-20250805"
            ]
        );
        assert!(find_listed(&anthropic, "claude-sonnet-4-5").is_some());
        assert!(find_listed(&anthropic, "claude-sonnet-4").is_none());
    }

    #[test]
    fn vllm_llama_cpp_and_openrouter_lists_carry_windows() {
        let vllm = parse_list(&fixture("vllm_models.json")).unwrap();
        assert_eq!(vllm[0].id, "Qwen/Qwen2.5-7B-Instruct");
        assert_eq!(vllm[0].window, window(32_768, "/v1/models max_model_len"));
        let llama = parse_list(&fixture("llama_cpp_models.json")).unwrap();
        assert_eq!(llama[0].window, None);
        assert_eq!(
            llama[0].trained,
            window(8_192, "/v1/models meta.n_ctx_train")
        );
        assert_eq!(llama[0].best_window(), llama[0].trained);
        let openrouter = parse_list(&fixture("openrouter_models.json")).unwrap();
        assert_eq!(
            openrouter[0].window,
            window(1_048_576, "/v1/models context_length")
        );
    }

    #[test]
    fn ollama_lists_tags_and_latest_is_the_plain_name() {
        let ollama = parse_list(&fixture("ollama_models.json")).unwrap();
        assert_eq!(
            find_listed(&ollama, "llama3.2").map(|m| m.id.as_str()),
            Some("llama3.2:latest")
        );
        assert_eq!(
            find_listed(&ollama, "qwen2.5:7b").map(|m| m.id.as_str()),
            Some("qwen2.5:7b")
        );
        assert!(find_listed(&ollama, "llama3").is_none());
    }

    #[test]
    fn llama_cpp_props_give_the_slot_context_in_either_place() {
        assert_eq!(
            parse_props(&fixture("llama_cpp_props.json")),
            window(4_096, "llama.cpp /props n_ctx")
        );
        assert_eq!(
            parse_props(&json!({"n_ctx": 2048, "total_slots": 1})),
            window(2_048, "llama.cpp /props n_ctx")
        );
        assert_eq!(
            parse_props(&json!({"default_generation_settings": {}})),
            None
        );
        assert_eq!(parse_props(&json!({"n_ctx": 0})), None);
    }

    #[test]
    fn ollama_show_prefers_num_ctx_to_the_trained_length() {
        assert_eq!(
            parse_ollama_show(&fixture("ollama_show.json")),
            window(131_072, "Ollama /api/show context_length")
        );
        let mut with_num_ctx = fixture("ollama_show.json");
        with_num_ctx["parameters"] = json!(
            "num_ctx                        8192\nstop                           \"<|eot_id|>\""
        );
        assert_eq!(
            parse_ollama_show(&with_num_ctx),
            window(8_192, "Ollama /api/show num_ctx")
        );
        // Another architecture's key is found by its suffix when general.architecture is absent.
        assert_eq!(
            parse_ollama_show(&json!({"model_info": {"qwen2.context_length": 32768}})),
            window(32_768, "Ollama /api/show context_length")
        );
        assert_eq!(parse_ollama_show(&json!({"modelfile": ""})), None);
    }

    #[test]
    fn ollama_ps_gives_the_allocated_context_of_the_loaded_model() {
        let ps = fixture("ollama_ps.json");
        assert_eq!(
            parse_ollama_ps(&ps, "qwen3:8b"),
            window(4_096, "Ollama /api/ps context_length")
        );
        assert_eq!(
            parse_ollama_ps(&ps, "llama3.2"),
            window(8_192, "Ollama /api/ps context_length")
        );
        assert_eq!(parse_ollama_ps(&ps, "mistral"), None);
        assert_eq!(parse_ollama_ps(&json!({"models": []}), "qwen3:8b"), None);
    }

    #[test]
    fn servers_say_whether_the_template_takes_tools() {
        assert_eq!(
            parse_props_tools(&fixture("llama_cpp_props_no_tools.json")),
            Some(false)
        );
        assert_eq!(parse_props_tools(&fixture("llama_cpp_props.json")), None);
        assert_eq!(parse_ollama_tools(&fixture("ollama_show.json")), Some(true));
        assert_eq!(
            parse_ollama_tools(&json!({"capabilities": ["completion"]})),
            Some(false)
        );
        assert_eq!(parse_ollama_tools(&json!({"modelfile": ""})), None);
    }

    #[test]
    fn a_router_list_says_which_models_are_loaded() {
        let list = parse_list(&fixture("llama_cpp_router_models.json")).unwrap();
        let status: Vec<(&str, Option<&str>)> = list
            .iter()
            .map(|m| (m.id.as_str(), m.status.as_deref()))
            .collect();
        assert_eq!(
            status,
            [
                ("SmolLM2-135M-Instruct-Q8_0", Some("loaded")),
                ("Qwen2.5-7B-Instruct-Q4_K_M", Some("unloaded"))
            ]
        );
    }

    #[test]
    fn bodies_that_are_not_lists_are_refused() {
        assert_eq!(parse_list(&json!({"error": "not found"})), None);
        assert_eq!(parse_list(&json!([1, 2])), None);
        // Entries without an id are skipped, not fatal.
        assert_eq!(
            parse_list(&json!({"data": [{"object": "model"}, {"id": "a"}]})).map(|l| l.len()),
            Some(1)
        );
    }
}
