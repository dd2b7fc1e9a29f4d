//! The rules that hold for a vault, loaded in one place: `[permissions]` from the config (each
//! spec checked, and its tool checked against the tools there are), then the *always* rules
//! stored in the app database, each through the strict [`Rule::try_from`]: a stored effect that
//! is neither allow nor deny is an error, never an allow.

use super::{Effect, KnownTools, Rule, RuleSet, parse_rule_spec};
use crate::config::Config;
use crate::store::{Store, StoreError};

/// Why the rules could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// Bad `[permissions]` entries, one line each.
    #[error("{}", .0.join("\n"))]
    Config(Vec<String>),
    #[error("the stored permission rules cannot be read: {0}")]
    Store(#[from] StoreError),
    /// A stored rule that does not make sense (its message names the row).
    #[error("{0}")]
    Stored(String),
}

/// The `[permissions]` rules of the config, each checked: a well-formed spec (see
/// [`parse_rule_spec`]) naming a tool in `known`. `Err` names every bad entry and what is wrong
/// with it; a misspelt tool would otherwise deny or allow nothing, silently.
pub fn config_rules(config: &Config, known: &KnownTools<'_>) -> Result<Vec<Rule>, Vec<String>> {
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    for (specs, effect, key) in [
        (&config.permissions.allow, Effect::Allow, "allow"),
        (&config.permissions.deny, Effect::Deny, "deny"),
    ] {
        for spec in specs {
            let checked =
                parse_rule_spec(spec, effect).and_then(|rule| match known.problem(&rule.tool) {
                    Some(problem) => Err(problem),
                    None => Ok(rule),
                });
            match checked {
                Ok(rule) => rules.push(rule),
                Err(e) => problems.push(format!("[permissions] {key}: `{spec}`: {e}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(rules)
    } else {
        Err(problems)
    }
}

/// The rules that hold for `vault_id`: the config's (see [`config_rules`]), then the stored
/// *always* rules.
pub fn load_rules(
    config: &Config,
    known: &KnownTools<'_>,
    store: &Store,
    vault_id: &str,
) -> Result<RuleSet, RulesError> {
    let mut rules = config_rules(config, known).map_err(RulesError::Config)?;
    for stored in store.rules(vault_id)? {
        rules.push(Rule::try_from(&stored).map_err(RulesError::Stored)?);
    }
    Ok(RuleSet { rules })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const KNOWN: KnownTools<'static> = KnownTools {
        builtin: &["delete_note", "update_note"],
        servers: &[],
    };

    use crate::store::test_store as store;

    /// A stored rule whose effect is neither allow nor deny (a damaged or hand-edited database)
    /// is an error, never an allow (issue 14: it was loaded as an allow).
    #[test]
    fn a_stored_rule_with_an_unknown_effect_is_an_error() {
        let (_dir, store) = store();
        store.add_rule("v", "delete_note", None, "deny", 1).unwrap();
        // The schema's CHECK keeps such a row out; a database from elsewhere may not have it.
        store
            .connection()
            .pragma_update(None, "ignore_check_constraints", true)
            .unwrap();
        store
            .connection()
            .execute(
                "INSERT INTO rules (vault_id, tool, path_glob, effect, created_ms) VALUES ('v', 'update_note', NULL, 'maybe', 2)",
                [],
            )
            .unwrap();
        let loaded = load_rules(&Config::default(), &KNOWN, &store, "v");
        assert!(
            matches!(&loaded, Err(RulesError::Stored(m)) if m.contains("maybe")),
            "{loaded:?}"
        );
    }

    /// Config rules come first, then the stored ones, each with its effect and scope.
    #[test]
    fn config_then_stored_rules() {
        let (_dir, store) = store();
        store
            .add_rule("v", "update_note", Some("Inbox/*"), "allow", 1)
            .unwrap();
        store
            .add_rule("other", "delete_note", None, "allow", 1)
            .unwrap();
        let mut config = Config::default();
        config.permissions.deny = vec!["delete_note".into()];
        let rules = load_rules(&config, &KNOWN, &store, "v").unwrap().rules;
        assert_eq!(rules.len(), 2);
        assert_eq!(
            (rules[0].tool.as_str(), rules[0].effect, rules[0].scope),
            ("delete_note", Effect::Deny, super::super::RuleScope::Config)
        );
        assert_eq!(
            (rules[1].tool.as_str(), rules[1].effect, rules[1].scope),
            (
                "update_note",
                Effect::Allow,
                super::super::RuleScope::Always
            )
        );
        assert_eq!(rules[1].path_glob.as_deref(), Some("Inbox/*"));
    }

    /// A bad `[permissions]` entry is named, and nothing is loaded.
    #[test]
    fn a_misspelt_config_tool_is_an_error() {
        let (_dir, store) = store();
        let mut config = Config::default();
        config.permissions.allow = vec!["updte_note".into()];
        let loaded = load_rules(&config, &KNOWN, &store, "v");
        assert!(
            matches!(&loaded, Err(RulesError::Config(p)) if p[0].contains("updte_note")),
            "{loaded:?}"
        );
    }
}
