//! What the agent does about the servers people run at home (docs/decisions.md §49): a window
//! smaller than the model's trained one (Ollama allocates 4,096 tokens by default and silently
//! drops the start of a longer request), a request the server cut (seen only in the prompt
//! tokens it reports), a chat template that takes no tools (many GGUF templates), and tool
//! definitions that would fill a small window.

use super::inbox::Inbox;
use super::{Agent, TurnOutcome};
use crate::config::{ToolSetMode, ToolsMode};
use crate::llm::models::{self, ServerFacts};
use crate::llm::{Request, Usage, tokens};
use crate::tools::{Tier, ToolSpec};
use std::collections::HashSet;

/// A server that reports fewer prompt tokens than this share of what was estimated to be sent
/// took only part of the request.
pub const TRUNCATED_SHARE: f64 = 0.7;

/// Requests smaller than this are not judged: the fixed costs of a chat template (and of tools a
/// template leaves out) weigh too much in them for the share to mean a cut.
const TRUNCATION_MIN_TOKENS: u64 = 1_000;

/// A cut leaves what the server's context holds, and no server runs a chat model with less than
/// this: a smaller count is a server that counts something else (tokens not in its prompt cache),
/// never a context to compact to.
const SMALLEST_CONTEXT: u64 = 1_024;

/// The core tools, sent instead of every tool when the window is small (the session tools of
/// the open note join them).
pub const CORE_TOOLS: [&str; 5] = [
    "create_note",
    "list_notes",
    "read_note",
    "search_notes",
    "update_note",
];

/// The share of the window that every tool's definition may take before the core set is sent.
const TOOLS_SHARE: u64 = 4;

/// What the agent knows about its server beyond the window, and what it has told the person.
#[derive(Debug, Default)]
pub(super) struct LocalServer {
    /// `[provider] tools`.
    pub tools: ToolsMode,
    /// `[provider] tool_set`.
    pub tool_set: ToolSetMode,
    /// The config sets the window: what the server says does not change it.
    pub window_configured: bool,
    /// The most tokens the server gives a request, when it says so and is known to cut a longer
    /// one rather than refuse it (Ollama's allocated context): a request over it is not sent.
    pub hard_window: Option<u64>,
    /// The window the server says it runs the model with (not a trained maximum).
    running_window: Option<u64>,
    /// The prompt tokens of a request the server cut: what it really takes.
    observed_window: Option<u64>,
    /// The models the person was told cannot take tools, or get the core set.
    told_no_tools: HashSet<String>,
    told_core: HashSet<String>,
}

/// Which tools a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolOffer {
    /// Every tool, with its full description.
    Full,
    /// [`CORE_TOOLS`] and the session tools, with their first sentences as descriptions.
    Core,
    /// None: the model's chat template takes no tools.
    NoTools,
}

/// Which tools to send `model`: the config's choice, else what its server said (`facts`), and
/// whether every tool's definition (`full_tokens`) would take more than a quarter of `window`.
pub fn choose_offer(
    tools: ToolsMode,
    tool_set: ToolSetMode,
    facts: Option<&ServerFacts>,
    window: u64,
    full_tokens: u64,
) -> ToolOffer {
    let takes_tools = match tools {
        ToolsMode::Always => true,
        ToolsMode::Never => false,
        ToolsMode::Auto => facts.and_then(|f| f.tools) != Some(false),
    };
    if !takes_tools {
        return ToolOffer::NoTools;
    }
    match tool_set {
        ToolSetMode::Full => ToolOffer::Full,
        ToolSetMode::Core => ToolOffer::Core,
        ToolSetMode::Auto if full_tokens.saturating_mul(TOOLS_SHARE) > window => ToolOffer::Core,
        ToolSetMode::Auto => ToolOffer::Full,
    }
}

/// The tools of `offer` out of `all` (the turn's full list).
pub fn offered_tools(all: Vec<ToolSpec>, offer: ToolOffer) -> Vec<ToolSpec> {
    match offer {
        ToolOffer::Full => all,
        ToolOffer::NoTools => Vec::new(),
        ToolOffer::Core => all
            .into_iter()
            .filter(|t| t.tier == Tier::Session || CORE_TOOLS.contains(&t.name.as_str()))
            .map(|mut t| {
                t.description = first_sentence(&t.description);
                shorten_schema(&mut t.input_schema);
                t
            })
            .collect(),
    }
}

/// About how many tokens `tools` take in a request to `model`.
pub fn tools_tokens(model: &str, tools: &[ToolSpec]) -> u64 {
    let defs = super::request::tool_defs(tools);
    tokens::estimate_request(&Request {
        model: model.to_string(),
        max_tokens: 0,
        system: String::new(),
        tools: defs,
        messages: Vec::new(),
    })
}

/// One line for `/tools` about what this model is sent, when it is not every tool.
pub fn offer_line(offer: ToolOffer, window: u64) -> Option<String> {
    match offer {
        ToolOffer::Full => None,
        ToolOffer::Core => Some(format!(
            "Small context window ({window} tokens): the model is sent the core tools ({} and the open note's tools) with short descriptions; [provider] tool_set = \"full\" sends all",
            CORE_TOOLS.join(", ")
        )),
        ToolOffer::NoTools => Some(
            "This model takes no tools (its chat template has none): it can chat but not act on notes; [provider] tools = \"always\" sends them anyway".to_string(),
        ),
    }
}

/// Whether a server that reports `reported` prompt tokens for a request estimated at `sent`
/// took only part of it.
pub fn looks_truncated(sent: u64, reported: u64) -> bool {
    sent >= TRUNCATION_MIN_TOKENS
        && reported >= SMALLEST_CONTEXT
        && (reported as f64) < sent as f64 * TRUNCATED_SHARE
}

/// The first sentence of a description (the whole of a one-sentence one).
fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.find(". ") {
        Some(end) => line[..=end].to_string(),
        None => line.to_string(),
    }
}

/// Every `description` in a schema cut to its first sentence.
fn shorten_schema(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(fields) => {
            for (key, value) in fields.iter_mut() {
                match value {
                    serde_json::Value::String(text) if key == "description" => {
                        *text = first_sentence(text);
                    }
                    other => shorten_schema(other),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(shorten_schema),
        _ => {}
    }
}

impl Agent {
    /// The tools of this turn for the model in use, said to the person once per model when it
    /// gets none or the core set.
    pub(super) fn offer_tools(&mut self, all: Vec<ToolSpec>, inbox: &Inbox<'_>) -> Vec<ToolSpec> {
        let model = self.settings.model.clone();
        let facts = models::remembered_facts(&model);
        let window = self.settings.context.window;
        let offer = choose_offer(
            self.local.tools,
            self.local.tool_set,
            facts.as_ref(),
            window,
            tools_tokens(&model, &all),
        );
        match offer {
            ToolOffer::Full => {}
            ToolOffer::NoTools => {
                if self.local.told_no_tools.insert(model.clone()) {
                    inbox.notice(format!(
                        "{model} cannot call tools: its server says the model's chat template takes none, so it can chat but not search, read or edit notes. Models whose templates take tools (Qwen 2.5 and 3, Llama 3.1 and later, Mistral, Granite, gpt-oss) can; [provider] tools = \"always\" sends them anyway"
                    ));
                }
            }
            ToolOffer::Core => {
                if self.local.told_core.insert(model.clone()) {
                    inbox.notice(format!(
                        "every tool would take more than a quarter of {model}'s {window}-token context window: it is sent the core tools with short descriptions (/mcp lists them; [provider] tool_set = \"full\" sends all)"
                    ));
                }
            }
        }
        offered_tools(all, offer)
    }

    /// After a response: the server reported `usage` for `request`. When it took far fewer
    /// tokens than were sent, it cut the request: the turn says so, and from now on the
    /// conversation is compacted to what the server took. `true` when it was cut (the
    /// reported size then says nothing about the estimator and is not calibrated on).
    pub(super) fn check_truncation(
        &mut self,
        usage: &Usage,
        request: &Request,
        outcome: &mut TurnOutcome,
        inbox: &Inbox<'_>,
    ) -> bool {
        // Cuts are what local runtimes do (Ollama, llama.cpp with context shift, LM Studio's
        // truncating overflow policy) and a hosted API refuses instead (Anthropic's always): a
        // server is judged once it has said something about the model (its /props, /api/show or
        // list entry), which hosted APIs and scripted test servers do not.
        let said = models::remembered_facts(&request.model).is_some_and(|f| f.window.is_some());
        if usage.estimated || !said || self.provider.kind() == crate::llm::ProviderKind::Anthropic {
            return false;
        }
        let reported =
            usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
        let sent = self.scaled(tokens::estimate_request(request));
        // A request within the window the server says it runs with was not cut (a low count
        // then is a server that leaves cached tokens out of it).
        if !looks_truncated(sent, reported) || self.local.running_window.is_some_and(|w| sent <= w)
        {
            return false;
        }
        let warning = format!(
            "the server took only {reported} of about {sent} tokens sent: its context for {} is smaller than the request, so it silently dropped the start and the reply may rest on a fragment. The conversation is compacted to {reported} tokens from now on; to give the model more, raise the server's context (Ollama: OLLAMA_CONTEXT_LENGTH=16384 or PARAMETER num_ctx 16384 in a Modelfile; llama-server: -c 16384) or set [provider.context_windows]",
            request.model
        );
        inbox.notice(warning.clone());
        outcome.warnings.push(warning);
        self.local.observed_window = Some(
            self.local
                .observed_window
                .map_or(reported, |o| o.min(reported)),
        );
        self.apply_observed_window();
        true
    }

    /// The server had not loaded the model when it was asked about its window (Ollama): ask
    /// again now that a response has loaded it, and use the window it really runs with.
    pub(super) async fn recheck_window(&mut self) {
        let model = self.settings.model.clone();
        let Some(facts) = models::recheck(self.provider.settings(), &model).await else {
            return;
        };
        self.use_server_facts(&facts);
    }

    /// Take the server's window of the model in use (unless the config sets it).
    pub(super) fn use_server_facts(&mut self, facts: &ServerFacts) {
        if self.local.window_configured {
            return;
        }
        let Some(window) = facts.window else {
            return;
        };
        if is_running_window(window.field) {
            self.settings.context.window = window.tokens;
            self.local.running_window = Some(window.tokens);
            if window.field.starts_with("Ollama") {
                // Ollama cuts a longer request instead of refusing it.
                self.local.hard_window = Some(window.tokens);
            }
        }
        self.apply_observed_window();
    }

    /// What a cut request showed beats every larger figure for compaction. It is no hard
    /// limit: a count is the estimator's measure, not the server's word, and a turn that alone
    /// does not fit is sent (and, if cut again, said again) rather than refused on a guess.
    fn apply_observed_window(&mut self) {
        if let Some(observed) = self.local.observed_window {
            self.settings.context.window = self.settings.context.window.min(observed);
        }
    }

    /// At the start of a turn: what the server said about the model in use.
    pub(super) fn use_remembered_facts(&mut self) {
        if let Some(facts) = models::remembered_facts(&self.settings.model) {
            self.use_server_facts(&facts);
        }
    }

    /// Before a request: more than the server gives a request that it would cut silently.
    /// The message says how large it is and how to give the model more.
    pub(super) fn over_hard_window(&self, request: &Request) -> Option<String> {
        let hard = self.local.hard_window?;
        let estimate = self.estimated_tokens(request);
        (estimate > hard).then(|| {
            format!(
                "this request is about {estimate} tokens and the server runs {} with a context of {hard} tokens: it would silently drop the start. Raise the server's context (Ollama: OLLAMA_CONTEXT_LENGTH=16384 or PARAMETER num_ctx 16384 in a Modelfile; llama-server: -c 16384), or ask about a smaller part",
                request.model
            )
        })
    }
}

/// The server's fields that give the window a request really gets (not a trained maximum).
fn is_running_window(field: &str) -> bool {
    field.contains("/api/ps") || field.contains("/props n_ctx") || field.contains("num_ctx")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::window::ServerWindow;
    use crate::tools::Annotations;

    fn spec(name: &str, tier: Tier) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            title: name.into(),
            description: "Reads a note. Long explanation follows here.\nMore.".into(),
            input_schema: serde_json::json!({"type": "object", "properties": {"path": {"type": "string", "description": "The path. Vault-relative, with .md."}}}),
            annotations: Annotations::READ_ONLY,
            tier,
        }
    }

    fn facts(tools: Option<bool>) -> ServerFacts {
        ServerFacts {
            window: Some(ServerWindow {
                tokens: 8_192,
                field: "llama.cpp /props n_ctx",
            }),
            tools,
            ..ServerFacts::default()
        }
    }

    #[test]
    fn a_template_without_tools_gets_none_unless_the_config_says_always() {
        let no = facts(Some(false));
        let offer = |mode| choose_offer(mode, ToolSetMode::Full, Some(&no), 8_192, 100);
        assert_eq!(offer(ToolsMode::Auto), ToolOffer::NoTools);
        assert_eq!(offer(ToolsMode::Always), ToolOffer::Full);
        assert_eq!(offer(ToolsMode::Never), ToolOffer::NoTools);
        let unknown = choose_offer(ToolsMode::Auto, ToolSetMode::Full, None, 8_192, 100);
        assert_eq!(unknown, ToolOffer::Full);
        let yes = facts(Some(true));
        let offer = choose_offer(ToolsMode::Auto, ToolSetMode::Full, Some(&yes), 8_192, 100);
        assert_eq!(offer, ToolOffer::Full);
    }

    #[test]
    fn tools_over_a_quarter_of_the_window_become_the_core_set() {
        let offer =
            |window, tokens| choose_offer(ToolsMode::Auto, ToolSetMode::Auto, None, window, tokens);
        assert_eq!(offer(8_192, 4_000), ToolOffer::Core);
        assert_eq!(offer(200_000, 4_000), ToolOffer::Full);
        assert_eq!(
            choose_offer(ToolsMode::Auto, ToolSetMode::Full, None, 8_192, 4_000),
            ToolOffer::Full
        );
        let all = vec![
            spec("read_note", Tier::Workspace),
            spec("manage_tags", Tier::Workspace),
            spec("rewrite_paragraph", Tier::Session),
            spec("srv__x", Tier::Plugin),
        ];
        let core = offered_tools(all, ToolOffer::Core);
        let names: Vec<&str> = core.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read_note", "rewrite_paragraph"]);
        assert_eq!(core[0].description, "Reads a note.");
        assert_eq!(
            core[0].input_schema["properties"]["path"]["description"],
            "The path."
        );
    }

    #[test]
    fn a_cut_request_is_told_from_an_estimate_that_is_merely_off() {
        assert!(looks_truncated(9_034, 4_096));
        assert!(!looks_truncated(9_034, 7_000));
        assert!(!looks_truncated(9_034, 0), "no usage is not a cut");
        assert!(!looks_truncated(600, 100), "too small to judge");
        assert!(
            !looks_truncated(9_034, 300),
            "no context is that small: a count of uncached tokens"
        );
    }
}
