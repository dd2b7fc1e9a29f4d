//! `/tools` (and `/mcp`): every tool the agent can use — the workspace's, the session tools and
//! the MCP servers' that are up — and what the model in use is offered when it is not every tool.

use super::core::Core;
use super::{HostEvent, ToolsReport};

pub(super) fn list(core: &Core, model: &str, window: u64) {
    let Some(ready) = core.ready() else { return };
    let servers = &core.servers.startup;
    let mcp_tools = servers
        .now()
        .map(|servers| servers.tools())
        .unwrap_or_default();
    let tools: Vec<_> = ready
        .registry
        .specs()
        .cloned()
        .chain(crate::tools::session::all_session_tool_specs())
        .chain(mcp_tools.iter().map(|t| t.spec().clone()))
        .collect();
    let offer = tool_offer(&core.launch.config.provider, model, window, &tools);
    core.tell(HostEvent::Tools(ToolsReport {
        tools,
        servers: servers.statuses(),
        offer,
    }));
}

/// What the model in use is sent, when it is not every tool (docs/decisions.md §49): the same
/// choice the agent makes, from the config and what the server said.
fn tool_offer(
    provider: &crate::config::ProviderConfig,
    model: &str,
    window: u64,
    tools: &[crate::tools::ToolSpec],
) -> Option<String> {
    let facts = crate::llm::models::remembered_facts(model);
    let offer = crate::agent::choose_offer(
        provider.tools,
        provider.tool_set,
        facts.as_ref(),
        window,
        crate::agent::tools_tokens(model, tools),
    );
    crate::agent::offer_line(offer, window)
}
