//! Whether a rule's tool names a tool that exists. A rule for a misspelt tool
//! (`deny = ["updte_note"]`) would otherwise match nothing and deny nothing, silently.
//!
//! vaultchat's own tools are known before anything starts. The tools of the person's MCP servers
//! (`NAME__tool`) are known only once the server runs, so a rule is accepted when its prefix names
//! a configured server; `vaultchat doctor` starts the servers and checks the rest of the name.

/// The names a rule may use: vaultchat's own tools and the configured MCP servers.
#[derive(Debug, Clone, Copy)]
pub struct KnownTools<'a> {
    /// Every built-in tool (workspace and session tools).
    pub builtin: &'a [&'a str],
    /// The configured MCP servers (`[mcp.servers.NAME]`), started or not.
    pub servers: &'a [&'a str],
}

/// The separator between a server's name and its tool's name (`files__read_text_file`).
const SERVER_SEPARATOR: &str = "__";

impl KnownTools<'_> {
    /// Why `tool` (a rule's tool: a name or `*`) names no tool, or `None` when it names one or a
    /// configured server's prefix. The message names the tool and suggests the closest name.
    pub fn problem(&self, tool: &str) -> Option<String> {
        if tool == "*" || self.builtin.contains(&tool) {
            return None;
        }
        if self.servers.iter().any(|server| {
            tool.strip_prefix(server)
                .and_then(|rest| rest.strip_prefix(SERVER_SEPARATOR))
                .is_some_and(|rest| !rest.is_empty())
        }) {
            return None;
        }
        if let Some((server, _)) = tool.split_once(SERVER_SEPARATOR) {
            let configured = if self.servers.is_empty() {
                "no MCP server is configured".to_string()
            } else {
                format!("the configured ones are {}", backticked(self.servers))
            };
            let suggestion = closest(server, self.servers.iter().copied())
                .map(|s| format!("; did you mean `{s}{SERVER_SEPARATOR}…`?"))
                .unwrap_or_default();
            return Some(format!(
                "`{tool}` names no tool: there is no MCP server `{server}` in [mcp.servers] ({configured}){suggestion}"
            ));
        }
        let suggestion = closest(tool, self.builtin.iter().copied())
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        Some(format!(
            "`{tool}` names no tool, so the rule would match nothing; {suggestion}`vaultchat tools` lists the names (`*` is every tool, `SERVER__tool` a tool of an MCP server)"
        ))
    }
}

fn backticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The candidate closest to `name` by edit distance, when it is close enough to be a typo: at
/// most a third of the name's length, and at least 2 edits allowed.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters (case-insensitive: `Update_Note` is a typo too).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILTIN: &[&str] = &["read_note", "update_note", "create_note", "edit_selection"];

    fn known<'a>(servers: &'a [&'a str]) -> KnownTools<'a> {
        KnownTools {
            builtin: BUILTIN,
            servers,
        }
    }

    #[test]
    fn builtin_names_and_star_are_known() {
        for tool in ["*", "read_note", "update_note", "edit_selection"] {
            assert_eq!(known(&[]).problem(tool), None, "{tool}");
        }
    }

    #[test]
    fn a_typo_is_named_with_the_closest_tool() {
        let problem = known(&[]).problem("updte_note").unwrap();
        assert!(problem.contains("`updte_note` names no tool"), "{problem}");
        assert!(problem.contains("did you mean `update_note`?"), "{problem}");
        let problem = known(&[]).problem("Read_Note").unwrap();
        assert!(problem.contains("`read_note`"), "{problem}");
        // Nothing close: no suggestion, but still the list command.
        let problem = known(&[]).problem("frobnicate").unwrap();
        assert!(!problem.contains("did you mean"), "{problem}");
        assert!(problem.contains("vaultchat tools"), "{problem}");
    }

    #[test]
    fn tools_of_a_configured_server_are_accepted_by_prefix() {
        let servers = ["files", "gh-issues"];
        for tool in [
            "files__read_text_file",
            "files__anything",
            "gh-issues__list",
        ] {
            assert_eq!(known(&servers).problem(tool), None, "{tool}");
        }
        // The prefix alone names no tool.
        assert!(known(&servers).problem("files__").is_some());
    }

    #[test]
    fn a_tool_of_an_unconfigured_server_names_the_servers() {
        let problem = known(&["files"]).problem("flies__read_text_file").unwrap();
        assert!(
            problem.contains("there is no MCP server `flies`"),
            "{problem}"
        );
        assert!(
            problem.contains("the configured ones are `files`"),
            "{problem}"
        );
        assert!(problem.contains("did you mean `files__…`?"), "{problem}");
        let problem = known(&[]).problem("gh__create_issue").unwrap();
        assert!(problem.contains("no MCP server is configured"), "{problem}");
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("updte_note", "update_note"), 1);
        assert_eq!(edit_distance("read_note", "read_note"), 0);
        assert_eq!(edit_distance("raed_note", "read_note"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(closest("x", BUILTIN.iter().copied()), None);
    }
}
