//! `.vaultchat/plugins.toml`: a vault's own MCP servers, `[plugins.NAME]` tables with the keys of
//! `[mcp.servers.NAME]` and a `[plugins.NAME.render]` table saying how each tool's results are
//! drawn in the chat.

use crate::config::{McpServerConfig, line_of_key, mcp_server_problem};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

pub use crate::protocol::Render;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginsToml {
    #[serde(default)]
    plugins: BTreeMap<String, PluginToml>,
}

/// One `[plugins.NAME]`: the keys of `[mcp.servers.NAME]`, and `render`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginToml {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    #[serde(default = "default_true")]
    enabled: bool,
    timeout_secs: Option<u64>,
    startup_timeout_secs: Option<u64>,
    #[serde(default)]
    render: BTreeMap<String, Render>,
}

fn default_true() -> bool {
    true
}

/// One plugin as written, before paths are resolved against the vault.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginEntry {
    pub name: String,
    pub server: McpServerConfig,
    /// By the tool's own name (as the server lists it).
    pub render: BTreeMap<String, Render>,
}

/// Parse the file's text; `shown` names the file in errors (`PATH:LINE: problem`).
pub fn parse(text: &str, shown: &Path) -> Result<Vec<PluginEntry>, String> {
    let file: PluginsToml = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start).min(text.len());
        let line = text[..offset].matches('\n').count() + 1;
        format!("{}:{line}: {}", shown.display(), e.message().trim())
    })?;
    let mut entries = Vec::new();
    for (name, plugin) in file.plugins {
        let mut server = McpServerConfig::with_command(plugin.command);
        server.args = plugin.args;
        server.env = plugin.env;
        server.cwd = plugin.cwd;
        server.enabled = plugin.enabled;
        if let Some(secs) = plugin.timeout_secs {
            server.timeout_secs = secs;
        }
        if let Some(secs) = plugin.startup_timeout_secs {
            server.startup_timeout_secs = secs;
        }
        if let Some((field, problem)) = mcp_server_problem(&name, &server) {
            let key = match field {
                Some(field) => format!("plugins.{name}.{field}"),
                None => format!("plugins.{name}"),
            };
            let line = line_of_key(text, &key);
            return Err(format!(
                "{}:{line}: key `{key}`: {problem}",
                shown.display()
            ));
        }
        entries.push(PluginEntry {
            name,
            server,
            render: plugin.render,
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Vec<PluginEntry>, String> {
        parse(text, Path::new("/v/.vaultchat/plugins.toml"))
    }

    #[test]
    fn plugins_take_the_server_keys_and_render_tables() {
        let entries = parse_text(
            "[plugins.kanban]\ncommand = \"python3\"\nargs = [\"tools/kanban.py\"]\n\
             env = { BOARD = \"${VAULT_PATH}/Board.md\" }\ntimeout_secs = 5\n\n\
             [plugins.kanban.render]\ncards = \"table\"\nsummary = \"markdown\"\n\n\
             [plugins.off]\ncommand = \"x\"\nenabled = false\n",
        )
        .unwrap();
        assert_eq!(entries.len(), 2);
        let kanban = &entries[0];
        assert_eq!(kanban.name, "kanban");
        assert_eq!(kanban.server.args, ["tools/kanban.py"]);
        assert_eq!(kanban.server.timeout_secs, 5);
        assert_eq!(kanban.server.startup_timeout_secs, 20);
        assert_eq!(kanban.render["cards"], Render::Table);
        assert_eq!(kanban.render["summary"], Render::Markdown);
        assert!(!entries[1].server.enabled);
        assert!(parse_text("").unwrap().is_empty());
    }

    #[test]
    fn bad_toml_names_the_file_and_line() {
        let err = parse_text("[plugins.a]\ncommand = \"x\"\nargs = [\"unclosed\n").unwrap_err();
        assert!(err.starts_with("/v/.vaultchat/plugins.toml:3: "), "{err}");
        let err =
            parse_text("[plugins.a]\ncommand = \"x\"\nrender = { t = \"chart\" }\n").unwrap_err();
        assert!(err.starts_with("/v/.vaultchat/plugins.toml:3: "), "{err}");
        assert!(err.contains("chart"), "{err}");
        let err = parse_text("[plugins.a]\ncomand = \"x\"\n").unwrap_err();
        assert!(err.contains("comand"), "{err}");
    }

    #[test]
    fn server_checks_name_the_key_and_line() {
        let err = parse_text("[plugins.a]\ncommand = \"x\"\nargs = [\"${HOME}\"]\n").unwrap_err();
        assert!(
            err.starts_with("/v/.vaultchat/plugins.toml:3: key `plugins.a.args`"),
            "{err}"
        );
        let err = parse_text("[plugins.\"a b\"]\ncommand = \"x\"\n").unwrap_err();
        assert!(err.contains(":1: key `plugins.a b`"), "{err}");
        let err = parse_text("[plugins.a]\ncommand = \"x\"\ntimeout_secs = 0\n").unwrap_err();
        assert!(err.contains(":3: key `plugins.a.timeout_secs`"), "{err}");
    }
}
