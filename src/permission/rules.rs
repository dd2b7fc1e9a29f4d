//! Permission rules: a tool name (or `*`) with an optional path glob, an effect and a scope.

use super::glob::glob_match;
use crate::store::StoredRule;
use std::fmt;

/// What a rule does to the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Allow,
    Deny,
}

impl Effect {
    /// The word the config file and the app database use.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Deny => "deny",
        }
    }

    /// The effect named by `allow` or `deny`.
    pub fn parse(text: &str) -> Option<Effect> {
        match text {
            "allow" => Some(Effect::Allow),
            "deny" => Some(Effect::Deny),
            _ => None,
        }
    }
}

/// Where a rule comes from (docs/permissions.md, "Rules").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleScope {
    /// The `[permissions]` table of a config file.
    Config,
    /// An *always* answer, kept per vault in the app database.
    Always,
    /// A *session* answer, kept in memory until the session ends.
    Session,
}

impl fmt::Display for RuleScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuleScope::Config => "config",
            RuleScope::Always => "always",
            RuleScope::Session => "session",
        })
    }
}

/// One permission rule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rule {
    /// An exact tool name, or `*` for every tool.
    pub tool: String,
    /// `None`: every call of the tool. Otherwise a glob over vault-relative paths (see
    /// [`super::glob`]).
    pub path_glob: Option<String>,
    pub effect: Effect,
    pub scope: RuleScope,
}

impl Rule {
    /// Whether the rule applies to a call of `tool` on `paths` (the call's vault-relative target
    /// paths, possibly none).
    ///
    /// A rule without a glob matches every call of its tool. With a glob, the two effects read
    /// the paths differently, each in the direction that errs towards asking:
    /// * a **deny** rule matches when *any* of the call's paths matches (one protected note is
    ///   enough to refuse a call that touches several);
    /// * an **allow** rule matches only when *all* of the call's paths match, and never a call
    ///   with no path (a rule for `Projects/**` must not approve a call whose targets are
    ///   elsewhere or unknown).
    pub fn matches(&self, tool: &str, paths: &[String]) -> bool {
        if self.tool != "*" && self.tool != tool {
            return false;
        }
        let Some(glob) = &self.path_glob else {
            return true;
        };
        match self.effect {
            Effect::Deny => paths.iter().any(|p| glob_match(glob, p)),
            Effect::Allow => !paths.is_empty() && paths.iter().all(|p| glob_match(glob, p)),
        }
    }

    /// The rule as the config file writes it: `tool` or `tool:glob`.
    pub fn spec(&self) -> String {
        match &self.path_glob {
            Some(glob) => format!("{}:{glob}", self.tool),
            None => self.tool.clone(),
        }
    }

    /// Names the rule in a reason: "the session rule for update_note on Projects/**".
    pub fn describe(&self) -> String {
        let tool = if self.tool == "*" {
            "every tool"
        } else {
            &self.tool
        };
        match &self.path_glob {
            Some(glob) => format!("the {} rule for {tool} on {glob}", self.scope),
            None => format!("the {} rule for {tool}", self.scope),
        }
    }
}

impl TryFrom<&StoredRule> for Rule {
    type Error = String;

    /// A rule from the app database; those all have scope *always*.
    fn try_from(stored: &StoredRule) -> Result<Self, Self::Error> {
        let effect = Effect::parse(&stored.effect).ok_or_else(|| {
            format!(
                "stored rule {} has the effect `{}`, neither allow nor deny",
                stored.id, stored.effect
            )
        })?;
        Ok(Rule {
            tool: stored.tool.clone(),
            path_glob: stored.path_glob.clone(),
            effect,
            scope: RuleScope::Always,
        })
    }
}

/// The rules in force for one call: config, always and session rules together.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
}

impl RuleSet {
    /// The first rule with `effect` that matches the call, looking at the scopes in the order
    /// that names the most telling rule in a reason: for deny the config (the person's written
    /// policy), then always, then session; for allow always, then session, then config.
    pub fn find(&self, effect: Effect, tool: &str, paths: &[String]) -> Option<&Rule> {
        let order = match effect {
            Effect::Deny => [RuleScope::Config, RuleScope::Always, RuleScope::Session],
            Effect::Allow => [RuleScope::Always, RuleScope::Session, RuleScope::Config],
        };
        order.into_iter().find_map(|scope| {
            self.rules
                .iter()
                .find(|r| r.scope == scope && r.effect == effect && r.matches(tool, paths))
        })
    }
}

/// Whether `tool` is a valid tool name for a rule: MCP's tool-name characters (letters, digits,
/// `_`, `-`, `.`).
fn is_tool_name(tool: &str) -> bool {
    !tool.is_empty()
        && tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Why a rule's glob could never match a vault-relative path, if it could not.
fn glob_problem(glob: &str) -> Option<String> {
    if glob.starts_with('/') {
        return Some(format!(
            "`{glob}` starts with `/`: globs are relative to the vault root (`Private/**`)"
        ));
    }
    if glob.ends_with('/') {
        let folder = glob.trim_end_matches('/');
        return Some(format!(
            "`{glob}` ends with `/`: to cover a folder and everything in it write `{folder}/**`"
        ));
    }
    if glob
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Some(format!(
            "`{glob}` has an empty, `.` or `..` segment: paths are matched after they are resolved, so write the plain path from the vault root"
        ));
    }
    let trailing_backslashes = glob.chars().rev().take_while(|&c| c == '\\').count();
    if trailing_backslashes % 2 == 1 {
        return Some(format!(
            "`{glob}` ends with a lone `\\`, which escapes nothing; write `\\\\` for a backslash"
        ));
    }
    None
}

/// A config rule from an entry of the `[permissions]` table's `allow` or `deny` list: `"tool"`
/// (every call of the tool), `"tool:glob"`, or `"*:glob"` (every tool on those paths). The error
/// says what is wrong with the entry; the config loader adds the file and key.
pub fn parse_rule_spec(spec: &str, effect: Effect) -> Result<Rule, String> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(
            "an empty rule: write `tool`, `tool:glob` or `*:glob` (for example `*:Private/**`)"
                .to_string(),
        );
    }
    // Tool names contain no `:`, so the first one separates the glob, which may contain more.
    let (tool, glob) = match spec.split_once(':') {
        // Spaces around either part are layout, not part of a name or path (a path that really
        // starts with a space can escape it: `\ `).
        Some((tool, glob)) => (tool.trim(), Some(glob.trim())),
        None => (spec, None),
    };
    if tool != "*" {
        if tool.contains('*') {
            return Err(format!(
                "`{tool}`: a tool name takes no wildcards; use the exact name (`vaultchat tools` lists them) or `*` alone for every tool"
            ));
        }
        if !is_tool_name(tool) {
            return Err(format!(
                "`{tool}` is not a tool name: use the exact name (`vaultchat tools` lists them) or `*` for every tool"
            ));
        }
    }
    if let Some(glob) = glob {
        if glob.is_empty() {
            return Err(format!(
                "`{spec}` has nothing after `:`; drop the `:` to cover every call of `{tool}`"
            ));
        }
        if let Some(problem) = glob_problem(glob) {
            return Err(problem);
        }
    }
    Ok(Rule {
        tool: tool.to_string(),
        path_glob: glob.map(str::to_string),
        effect,
        scope: RuleScope::Config,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(tool: &str, glob: Option<&str>, effect: Effect, scope: RuleScope) -> Rule {
        Rule {
            tool: tool.into(),
            path_glob: glob.map(Into::into),
            effect,
            scope,
        }
    }

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn a_rule_without_a_glob_matches_every_call_of_its_tool() {
        for effect in [Effect::Allow, Effect::Deny] {
            let r = rule("update_note", None, effect, RuleScope::Session);
            assert!(r.matches("update_note", &[]));
            assert!(r.matches("update_note", &paths(&["a.md", "b/c.md"])));
            assert!(!r.matches("create_note", &paths(&["a.md"])));
            assert!(!r.matches("update_notes", &[]));
        }
    }

    #[test]
    fn a_star_tool_matches_every_tool() {
        let r = rule("*", Some("Private/**"), Effect::Deny, RuleScope::Config);
        assert!(r.matches("read_note", &paths(&["Private/a.md"])));
        assert!(r.matches("srv__fetch", &paths(&["Private/a.md"])));
        assert!(!r.matches("read_note", &paths(&["Public/a.md"])));
    }

    #[test]
    fn a_deny_glob_matches_when_any_path_matches() {
        let r = rule("*", Some("Private/**"), Effect::Deny, RuleScope::Config);
        assert!(r.matches("t", &paths(&["Public/a.md", "Private/b.md"])));
        assert!(r.matches("t", &paths(&["Private/b.md", "Public/a.md"])));
        assert!(!r.matches("t", &paths(&["Public/a.md", "Other/b.md"])));
        assert!(
            !r.matches("t", &[]),
            "a call with no path is not on any path"
        );
    }

    #[test]
    fn an_allow_glob_needs_every_path_to_match_and_at_least_one() {
        let r = rule(
            "update_note",
            Some("Projects/**"),
            Effect::Allow,
            RuleScope::Always,
        );
        assert!(r.matches("update_note", &paths(&["Projects/a.md"])));
        assert!(r.matches("update_note", &paths(&["Projects/a.md", "Projects/x/b.md"])));
        assert!(!r.matches("update_note", &paths(&["Projects/a.md", "Private/b.md"])));
        assert!(!r.matches("update_note", &paths(&["Private/b.md", "Projects/a.md"])));
        assert!(!r.matches("update_note", &[]));
    }

    #[test]
    fn find_prefers_scopes_in_the_documented_order() {
        let set = RuleSet {
            rules: vec![
                rule("t", None, Effect::Allow, RuleScope::Config),
                rule("t", None, Effect::Allow, RuleScope::Session),
                rule("t", None, Effect::Allow, RuleScope::Always),
                rule("t", None, Effect::Deny, RuleScope::Session),
                rule("t", None, Effect::Deny, RuleScope::Always),
                rule("t", None, Effect::Deny, RuleScope::Config),
            ],
        };
        let scope = |effect| set.find(effect, "t", &[]).map(|r| (r.scope, r.effect));
        assert_eq!(
            scope(Effect::Allow),
            Some((RuleScope::Always, Effect::Allow))
        );
        assert_eq!(scope(Effect::Deny), Some((RuleScope::Config, Effect::Deny)));
        assert_eq!(set.find(Effect::Allow, "other", &[]), None);
        assert_eq!(RuleSet::default().find(Effect::Deny, "t", &[]), None);
    }

    #[test]
    fn find_skips_rules_that_do_not_match() {
        let set = RuleSet {
            rules: vec![
                rule("t", Some("A/**"), Effect::Allow, RuleScope::Always),
                rule("t", Some("B/**"), Effect::Allow, RuleScope::Session),
            ],
        };
        let found = set.find(Effect::Allow, "t", &paths(&["B/x.md"])).unwrap();
        assert_eq!(found.path_glob.as_deref(), Some("B/**"));
    }

    #[test]
    fn specs_parse_into_config_rules() {
        assert_eq!(
            parse_rule_spec("read_note", Effect::Deny).unwrap(),
            rule("read_note", None, Effect::Deny, RuleScope::Config)
        );
        assert_eq!(
            parse_rule_spec("  update_note : Projects/** ", Effect::Allow).unwrap(),
            rule(
                "update_note",
                Some("Projects/**"),
                Effect::Allow,
                RuleScope::Config
            )
        );
        assert_eq!(
            parse_rule_spec("*:Private/**", Effect::Deny).unwrap(),
            rule("*", Some("Private/**"), Effect::Deny, RuleScope::Config)
        );
        assert_eq!(
            parse_rule_spec("srv__fetch-v2.1", Effect::Allow)
                .unwrap()
                .tool,
            "srv__fetch-v2.1"
        );
        // Only the first `:` separates; a glob may contain more.
        assert_eq!(
            parse_rule_spec("read_note:a:b/*", Effect::Deny)
                .unwrap()
                .path_glob
                .as_deref(),
            Some("a:b/*")
        );
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        let cases = [
            ("", "empty rule"),
            ("   ", "empty rule"),
            ("update_*", "no wildcards"),
            ("*note:x", "no wildcards"),
            ("read note", "not a tool name"),
            (":Private/**", "not a tool name"),
            ("read_note:", "nothing after `:`"),
            ("*:/Private/**", "relative to the vault root"),
            ("*:Private/", "write `Private/**`"),
            ("*:a//b", "empty, `.` or `..` segment"),
            ("*:../x", "empty, `.` or `..` segment"),
            ("*:./x", "empty, `.` or `..` segment"),
            (r"*:x\", "lone `\\`"),
        ];
        for (spec, expected) in cases {
            let err = parse_rule_spec(spec, Effect::Deny).unwrap_err();
            assert!(err.contains(expected), "{spec:?}: {err}");
        }
        // An escaped backslash at the end is fine.
        assert!(parse_rule_spec(r"*:x\\", Effect::Deny).is_ok());
    }

    #[test]
    fn spec_and_parse_round_trip() {
        for spec in ["read_note", "update_note:Projects/**", "*:Private/**"] {
            assert_eq!(parse_rule_spec(spec, Effect::Allow).unwrap().spec(), spec);
        }
    }

    #[test]
    fn describe_names_scope_tool_and_glob() {
        assert_eq!(
            rule(
                "update_note",
                Some("Projects/**"),
                Effect::Allow,
                RuleScope::Session
            )
            .describe(),
            "the session rule for update_note on Projects/**"
        );
        assert_eq!(
            rule("*", Some("Private/**"), Effect::Deny, RuleScope::Config).describe(),
            "the config rule for every tool on Private/**"
        );
        assert_eq!(
            rule("read_note", None, Effect::Deny, RuleScope::Always).describe(),
            "the always rule for read_note"
        );
    }

    #[test]
    fn stored_rules_become_always_rules() {
        let stored = StoredRule {
            id: 7,
            tool: "update_note".into(),
            path_glob: Some("a/*".into()),
            effect: "deny".into(),
        };
        assert_eq!(
            Rule::try_from(&stored).unwrap(),
            rule("update_note", Some("a/*"), Effect::Deny, RuleScope::Always)
        );
        let bad = StoredRule {
            effect: "maybe".into(),
            ..stored
        };
        let err = Rule::try_from(&bad).unwrap_err();
        assert!(err.contains("rule 7") && err.contains("maybe"), "{err}");
    }

    #[test]
    fn effects_round_trip_through_their_words() {
        for effect in [Effect::Allow, Effect::Deny] {
            assert_eq!(Effect::parse(effect.as_str()), Some(effect));
        }
        assert_eq!(Effect::parse("Allow"), None);
        assert_eq!(serde_json::to_string(&Effect::Deny).unwrap(), r#""deny""#);
        assert_eq!(
            serde_json::to_string(&RuleScope::Session).unwrap(),
            r#""session""#
        );
    }
}
