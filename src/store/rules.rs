//! Permission rules with scope *always*, per vault. The store keeps them as plain strings; the
//! `permission` module gives them meaning.

use super::{Store, StoreError};
use rusqlite::params;

/// A stored permission rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRule {
    /// The row id, for [`Store::remove_rule`].
    pub id: i64,
    /// An exact tool name, or `*` for every tool.
    pub tool: String,
    /// `None`: every call of the tool.
    pub path_glob: Option<String>,
    /// `allow` or `deny`.
    pub effect: String,
}

fn check_effect(effect: &str) -> Result<(), StoreError> {
    match effect {
        "allow" | "deny" => Ok(()),
        _ => Err(StoreError::InvalidValue {
            what: "rule effect",
            value: effect.to_string(),
            allowed: "`allow` or `deny`",
        }),
    }
}

impl Store {
    /// Store a rule for a vault. Adding a rule that exists already changes nothing. An empty glob
    /// is the same as none (every call of the tool).
    pub fn add_rule(
        &self,
        vault_id: &str,
        tool: &str,
        path_glob: Option<&str>,
        effect: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        check_effect(effect)?;
        let path_glob = path_glob.filter(|g| !g.is_empty());
        // OR IGNORE: the unique index (see 0004_permission_rules.sql) makes a repeat a no-op and
        // keeps the first rule's id and creation time.
        self.conn.execute(
            "INSERT OR IGNORE INTO rules (vault_id, tool, path_glob, effect, created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![vault_id, tool, path_glob, effect, now_ms],
        )?;
        Ok(())
    }

    /// The rules of a vault, oldest first.
    pub fn rules(&self, vault_id: &str) -> Result<Vec<StoredRule>, StoreError> {
        self.query_rows(
            "SELECT id, tool, path_glob, effect FROM rules WHERE vault_id = ?1 ORDER BY id",
            [vault_id],
            |r| {
                Ok(StoredRule {
                    id: r.get(0)?,
                    tool: r.get(1)?,
                    path_glob: r.get(2)?,
                    effect: r.get(3)?,
                })
            },
        )
    }

    /// Remove one of a vault's rules; `false` when the vault has no rule with that id.
    pub fn remove_rule(&self, vault_id: &str, id: i64) -> Result<bool, StoreError> {
        let removed = self.conn.execute(
            "DELETE FROM rules WHERE vault_id = ?1 AND id = ?2",
            params![vault_id, id],
        )?;
        Ok(removed > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::test_store as store;

    fn shape(rules: &[StoredRule]) -> Vec<(&str, Option<&str>, &str)> {
        rules
            .iter()
            .map(|r| (r.tool.as_str(), r.path_glob.as_deref(), r.effect.as_str()))
            .collect()
    }

    #[test]
    fn rules_round_trip_per_vault_oldest_first() {
        let (_dir, store) = store();
        store
            .add_rule("v", "update_note", Some("Projects/**"), "allow", 1)
            .unwrap();
        store
            .add_rule("v", "*", Some("Private/**"), "deny", 2)
            .unwrap();
        store
            .add_rule("other", "read_note", None, "deny", 3)
            .unwrap();
        assert_eq!(
            shape(&store.rules("v").unwrap()),
            [
                ("update_note", Some("Projects/**"), "allow"),
                ("*", Some("Private/**"), "deny"),
            ]
        );
        assert_eq!(
            shape(&store.rules("other").unwrap()),
            [("read_note", None, "deny")]
        );
        assert!(store.rules("none").unwrap().is_empty());
    }

    #[test]
    fn adding_the_same_rule_twice_keeps_one_including_tool_wide_rules() {
        let (_dir, store) = store();
        for now in [1, 2] {
            store
                .add_rule("v", "create_note", None, "allow", now)
                .unwrap();
            store
                .add_rule("v", "create_note", Some("a/*.md"), "allow", now)
                .unwrap();
        }
        // An empty glob is the tool-wide rule again.
        store
            .add_rule("v", "create_note", Some(""), "allow", 3)
            .unwrap();
        // The same tool and glob with the other effect is a different rule.
        store.add_rule("v", "create_note", None, "deny", 4).unwrap();
        let rules = store.rules("v").unwrap();
        assert_eq!(
            shape(&rules),
            [
                ("create_note", None, "allow"),
                ("create_note", Some("a/*.md"), "allow"),
                ("create_note", None, "deny"),
            ]
        );
        let first_created: i64 = store
            .connection()
            .query_row(
                "SELECT created_ms FROM rules WHERE id = ?1",
                [rules[0].id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(first_created, 1, "a repeat keeps the original rule");
    }

    #[test]
    fn a_bad_effect_is_refused() {
        let (_dir, store) = store();
        let err = store.add_rule("v", "t", None, "ask", 1).unwrap_err();
        assert!(
            matches!(&err, StoreError::InvalidValue { value, .. } if value == "ask"),
            "{err}"
        );
        assert!(err.to_string().contains("`allow` or `deny`"), "{err}");
        assert!(store.rules("v").unwrap().is_empty());
    }

    #[test]
    fn removing_needs_the_right_vault() {
        let (_dir, store) = store();
        store.add_rule("v", "t", None, "allow", 1).unwrap();
        store.add_rule("v", "u", None, "allow", 1).unwrap();
        let id = store.rules("v").unwrap()[0].id;
        assert!(!store.remove_rule("other", id).unwrap());
        assert!(store.remove_rule("v", id).unwrap());
        assert!(!store.remove_rule("v", id).unwrap());
        assert_eq!(shape(&store.rules("v").unwrap()), [("u", None, "allow")]);
    }
}
