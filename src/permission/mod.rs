//! The permission cascade (docs/permissions.md): whether a tool call may run, must be refused, or needs
//! the person's answer. Pure logic: the agent computes the facts of a call, loads the rules
//! (config, the app database, this session) and passes both in.

pub mod glob;
pub mod known;
pub mod load;
pub mod rules;

pub use glob::{escape_glob, glob_match};
pub use known::KnownTools;
pub use load::{RulesError, load_rules};
pub use rules::{Effect, Rule, RuleScope, RuleSet, parse_rule_spec};

/// Facts about one tool call that the cascade needs (the agent computes them).
#[derive(Debug, Clone, Default)]
pub struct CallFacts {
    pub tool: String,
    /// Vault-relative target paths of the call (resolved), may be empty.
    pub paths: Vec<String>,
    /// The path guard refused a path (outside the vault, a protected folder for a write, …):
    /// its message.
    pub path_refusal: Option<String>,
    /// The tool declares `readOnlyHint`.
    pub read_only: bool,
    /// The tool declares `destructiveHint`.
    pub destructive: bool,
    /// The tool comes from an MCP server (a vault plugin or a user MCP server).
    pub external: bool,
}

impl CallFacts {
    /// Whether the cascade treats the call as a read. A tool that declares both `readOnlyHint`
    /// and `destructiveHint` contradicts itself; the safe reading wins and it counts as a write.
    fn reads_only(&self) -> bool {
        self.read_only && !self.destructive
    }

    /// Whether the person may answer *always*: never for an external tool that declares itself
    /// destructive (docs/permissions.md), so such a tool cannot be approved once and for all.
    fn may_allow_always(&self) -> bool {
        !(self.external && self.destructive)
    }
}

/// What the cascade decided for one call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run the call. The reason names the step: "read-only tool", "allowed by the session rule
    /// for update_note on Projects/**".
    Allow { reason: String },
    /// Refuse the call; the reason is one sentence for the model and the person.
    Deny { reason: String },
    /// Ask the person; which lasting answers the banner may offer (*once* and *deny* always are).
    Ask {
        offer_always: bool,
        offer_session: bool,
    },
}

/// The cascade of docs/permissions.md, first match wins:
///
/// 1. The path guard refused a path (`path_refusal`) → **deny** with its message. Always.
/// 2. A matching deny rule of any scope → **deny**. Deny beats allow: a config rule keeping
///    `Private/**` from every tool holds even against an *always* or *session* allow.
/// 3. A read-only built-in call → **allow**. Only vaultchat's own tools: an external tool's
///    `readOnlyHint` is the word of whoever wrote the server, and a hint does not make a call
///    safe (docs/decisions.md). A tool that declares both `readOnlyHint` and `destructiveHint` is
///    treated as a write.
/// 4. A matching allow rule (always, then session, then config) → **allow**, unless `tainted`
///    (this turn has read output of an external tool, which may carry injected instructions)
///    and the call writes → then **ask**. An allow rule also allows an external tool: the person
///    created that rule by answering *session* or *always* for that tool (or wrote it in the
///    config), and asking again every time would make the answer meaningless. For the taint
///    rule an external tool that declares `readOnlyHint` counts as a read: the person allowed
///    that tool knowing what it claims to be, and chains of such reads are what a turn does.
/// 5. Otherwise → **ask**. Every external tool without an allow rule ends here.
///
/// An ask offers *session* always and *always* unless the tool is external and declares
/// `destructiveHint`.
pub fn decide(facts: &CallFacts, rules: &RuleSet, tainted: bool) -> Decision {
    if let Some(refusal) = &facts.path_refusal {
        return Decision::Deny {
            reason: refusal.clone(),
        };
    }
    if let Some(rule) = rules.find(Effect::Deny, &facts.tool, &facts.paths) {
        return Decision::Deny {
            reason: format!("denied by {}", rule.describe()),
        };
    }
    if facts.reads_only() && !facts.external {
        return Decision::Allow {
            reason: "read-only tool".to_string(),
        };
    }
    let ask = Decision::Ask {
        offer_always: facts.may_allow_always(),
        offer_session: true,
    };
    match rules.find(Effect::Allow, &facts.tool, &facts.paths) {
        // Past step 3 a call writes unless it is an external tool that says it only reads.
        Some(_) if tainted && !facts.reads_only() => ask,
        Some(rule) => Decision::Allow {
            reason: format!("allowed by {}", rule.describe()),
        },
        None => ask,
    }
}

pub use crate::protocol::Answer;

/// The allow rule a *session* or *always* answer creates for this call: the tool, with the
/// call's path as a literal glob when the answer is *always* with `with_path`.
///
/// No rule (`None`) for *once* and *deny*, and — so that an answer never grants more than the
/// person chose — none either when:
/// * *always* with `with_path` is given for a call that does not have exactly one path (a rule
///   holds one glob; widening it to the whole tool would approve paths nobody saw), or
/// * *always* is given for an external destructive tool, for which it is never offered.
///
/// In those cases the answer approves this call only, like *once*; the banner should not offer
/// them in the first place.
pub fn rule_for_answer(facts: &CallFacts, answer: &Answer) -> Option<Rule> {
    let (scope, path_glob) = match answer {
        Answer::Once | Answer::Deny { .. } => return None,
        Answer::Session => (RuleScope::Session, None),
        Answer::Always { .. } if !facts.may_allow_always() => return None,
        Answer::Always { with_path: false } => (RuleScope::Always, None),
        Answer::Always { with_path: true } => match facts.paths.as_slice() {
            [only] => (RuleScope::Always, Some(escape_glob(only))),
            _ => return None,
        },
    };
    Some(Rule {
        tool: facts.tool.clone(),
        path_glob,
        effect: Effect::Allow,
        scope,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(tool: &str, paths: &[&str]) -> CallFacts {
        CallFacts {
            tool: tool.into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            ..CallFacts::default()
        }
    }

    fn read(tool: &str, paths: &[&str]) -> CallFacts {
        CallFacts {
            read_only: true,
            ..write(tool, paths)
        }
    }

    fn external(mut facts: CallFacts, destructive: bool) -> CallFacts {
        facts.external = true;
        facts.destructive = destructive;
        facts
    }

    fn rule(spec: &str, effect: Effect, scope: RuleScope) -> Rule {
        Rule {
            scope,
            ..parse_rule_spec(spec, effect).unwrap()
        }
    }

    fn set(rules: Vec<Rule>) -> RuleSet {
        RuleSet { rules }
    }

    fn allow(reason: &str) -> Decision {
        Decision::Allow {
            reason: reason.into(),
        }
    }

    fn deny(reason: &str) -> Decision {
        Decision::Deny {
            reason: reason.into(),
        }
    }

    const ASK: Decision = Decision::Ask {
        offer_always: true,
        offer_session: true,
    };

    const ASK_WITHOUT_ALWAYS: Decision = Decision::Ask {
        offer_always: false,
        offer_session: true,
    };

    #[test]
    fn step_1_a_refused_path_is_denied_even_for_reads_and_allowed_tools() {
        let rules = set(vec![rule("*", Effect::Allow, RuleScope::Always)]);
        for mut facts in [read("read_note", &[]), write("update_note", &[".git/x"])] {
            facts.path_refusal = Some("`../x` is outside the vault".into());
            assert_eq!(
                decide(&facts, &rules, false),
                deny("`../x` is outside the vault")
            );
        }
    }

    #[test]
    fn step_2_a_deny_rule_refuses_reads_too() {
        let rules = set(vec![rule("*:Private/**", Effect::Deny, RuleScope::Config)]);
        assert_eq!(
            decide(&read("read_note", &["Private/diary.md"]), &rules, false),
            deny("denied by the config rule for every tool on Private/**")
        );
        assert_eq!(
            decide(&read("read_note", &["Public/a.md"]), &rules, false),
            allow("read-only tool")
        );
    }

    #[test]
    fn step_2_deny_beats_allow_across_every_pair_of_scopes() {
        let scopes = [RuleScope::Config, RuleScope::Always, RuleScope::Session];
        for deny_scope in scopes {
            for allow_scope in scopes {
                let rules = set(vec![
                    rule("update_note", Effect::Allow, allow_scope),
                    rule("update_note:Private/**", Effect::Deny, deny_scope),
                ]);
                let decision = decide(&write("update_note", &["Private/a.md"]), &rules, false);
                assert!(
                    matches!(decision, Decision::Deny { .. }),
                    "deny {deny_scope} vs allow {allow_scope}: {decision:?}"
                );
                // The allow still works where the deny does not reach.
                assert_eq!(
                    decide(&write("update_note", &["Public/a.md"]), &rules, false),
                    allow(&format!(
                        "allowed by the {allow_scope} rule for update_note"
                    ))
                );
            }
        }
    }

    #[test]
    fn step_2_one_denied_path_refuses_a_multi_path_call() {
        let rules = set(vec![
            rule("*:Private/**", Effect::Deny, RuleScope::Config),
            rule("update_note", Effect::Allow, RuleScope::Always),
        ]);
        let call = write("update_note", &["Public/a.md", "Private/b.md"]);
        assert!(matches!(
            decide(&call, &rules, false),
            Decision::Deny { .. }
        ));
    }

    #[test]
    fn step_3_builtin_reads_are_allowed_without_rules() {
        let none = RuleSet::default();
        assert_eq!(
            decide(&read("search_notes", &[]), &none, false),
            allow("read-only tool")
        );
        // Taint concerns writes only.
        assert_eq!(
            decide(&read("read_note", &["a.md"]), &none, true),
            allow("read-only tool")
        );
    }

    #[test]
    fn step_3_a_tool_claiming_read_only_and_destructive_counts_as_a_write() {
        let facts = external(read("srv__wipe", &[]), true);
        assert_eq!(
            decide(&facts, &RuleSet::default(), false),
            ASK_WITHOUT_ALWAYS
        );
        let mut builtin = read("odd", &[]);
        builtin.destructive = true;
        assert_eq!(decide(&builtin, &RuleSet::default(), false), ASK);
    }

    #[test]
    fn step_3_an_external_read_only_hint_is_not_trusted() {
        let call = external(read("srv__fetch", &[]), false);
        for tainted in [false, true] {
            assert_eq!(decide(&call, &RuleSet::default(), tainted), ASK);
        }
        // An allow rule lets it through, and taint does not take that back from a declared read.
        let rules = set(vec![rule("srv__fetch", Effect::Allow, RuleScope::Config)]);
        for tainted in [false, true] {
            assert_eq!(
                decide(&call, &rules, tainted),
                allow("allowed by the config rule for srv__fetch")
            );
        }
        // A deny rule still wins.
        let rules = set(vec![rule("srv__fetch", Effect::Deny, RuleScope::Session)]);
        assert_eq!(
            decide(&call, &rules, false),
            deny("denied by the session rule for srv__fetch")
        );
    }

    #[test]
    fn step_4_an_allow_rule_allows_a_write_and_names_itself() {
        let rules = set(vec![rule(
            "update_note:Projects/**",
            Effect::Allow,
            RuleScope::Session,
        )]);
        assert_eq!(
            decide(&write("update_note", &["Projects/x/a.md"]), &rules, false),
            allow("allowed by the session rule for update_note on Projects/**")
        );
        assert_eq!(
            decide(&write("create_note", &["Projects/a.md"]), &rules, false),
            ASK,
            "another tool is not covered"
        );
    }

    #[test]
    fn step_4_prefers_always_then_session_then_config_in_the_reason() {
        let rules = set(vec![
            rule("update_note", Effect::Allow, RuleScope::Config),
            rule("update_note", Effect::Allow, RuleScope::Session),
            rule("update_note", Effect::Allow, RuleScope::Always),
        ]);
        assert_eq!(
            decide(&write("update_note", &["a.md"]), &rules, false),
            allow("allowed by the always rule for update_note")
        );
        let without_always = set(rules.rules[..2].to_vec());
        assert_eq!(
            decide(&write("update_note", &["a.md"]), &without_always, false),
            allow("allowed by the session rule for update_note")
        );
        let config_only = set(rules.rules[..1].to_vec());
        assert_eq!(
            decide(&write("update_note", &["a.md"]), &config_only, false),
            allow("allowed by the config rule for update_note")
        );
    }

    #[test]
    fn step_4_an_allow_glob_must_cover_every_path_and_needs_one() {
        let rules = set(vec![rule(
            "*:Projects/**",
            Effect::Allow,
            RuleScope::Always,
        )]);
        assert_eq!(
            decide(
                &write("manage_tags", &["Projects/a.md", "Projects/b.md"]),
                &rules,
                false
            ),
            allow("allowed by the always rule for every tool on Projects/**")
        );
        assert_eq!(
            decide(
                &write("manage_tags", &["Projects/a.md", "Inbox/b.md"]),
                &rules,
                false
            ),
            ASK
        );
        assert_eq!(decide(&write("manage_tags", &[]), &rules, false), ASK);
    }

    #[test]
    fn step_4_taint_turns_an_allowed_write_into_a_question() {
        let rules = set(vec![rule("update_note", Effect::Allow, RuleScope::Always)]);
        assert_eq!(decide(&write("update_note", &["a.md"]), &rules, true), ASK);
        assert_eq!(
            decide(&write("update_note", &["a.md"]), &rules, false),
            allow("allowed by the always rule for update_note")
        );
    }

    #[test]
    fn step_4_an_allow_rule_allows_an_external_write_unless_tainted() {
        let rules = set(vec![rule("srv__post", Effect::Allow, RuleScope::Session)]);
        let call = external(write("srv__post", &[]), false);
        assert_eq!(
            decide(&call, &rules, false),
            allow("allowed by the session rule for srv__post")
        );
        assert_eq!(decide(&call, &rules, true), ASK);
    }

    #[test]
    fn step_5_a_write_without_a_rule_asks() {
        assert_eq!(
            decide(&write("create_note", &["a.md"]), &RuleSet::default(), false),
            ASK
        );
        assert_eq!(
            decide(
                &external(write("srv__post", &[]), false),
                &RuleSet::default(),
                false
            ),
            ASK
        );
    }

    #[test]
    fn an_external_destructive_tool_is_never_offered_always() {
        let call = external(write("srv__drop", &[]), true);
        assert_eq!(
            decide(&call, &RuleSet::default(), false),
            ASK_WITHOUT_ALWAYS
        );
        let rules = set(vec![rule("srv__drop", Effect::Allow, RuleScope::Session)]);
        assert_eq!(decide(&call, &rules, true), ASK_WITHOUT_ALWAYS);
        // A built-in destructive tool may be approved for good.
        let mut delete = write("delete_note", &["a.md"]);
        delete.destructive = true;
        assert_eq!(decide(&delete, &RuleSet::default(), false), ASK);
    }

    #[test]
    fn decisions_serialize_with_a_decision_tag() {
        assert_eq!(
            serde_json::to_value(allow("read-only tool")).unwrap(),
            serde_json::json!({"decision": "allow", "reason": "read-only tool"})
        );
        assert_eq!(
            serde_json::to_value(ASK_WITHOUT_ALWAYS).unwrap(),
            serde_json::json!({"decision": "ask", "offer_always": false, "offer_session": true})
        );
    }

    #[test]
    fn answers_round_trip_through_json() {
        for answer in [
            Answer::Once,
            Answer::Session,
            Answer::Always { with_path: true },
            Answer::Deny {
                reason: Some("not now".into()),
            },
        ] {
            let text = serde_json::to_string(&answer).unwrap();
            assert_eq!(serde_json::from_str::<Answer>(&text).unwrap(), answer);
        }
        assert_eq!(serde_json::to_string(&Answer::Once).unwrap(), r#""once""#);
    }

    #[test]
    fn once_and_deny_answers_create_no_rule() {
        let call = write("update_note", &["a.md"]);
        assert_eq!(rule_for_answer(&call, &Answer::Once), None);
        assert_eq!(rule_for_answer(&call, &Answer::Deny { reason: None }), None);
    }

    #[test]
    fn session_and_always_answers_create_tool_wide_allow_rules() {
        let call = write("update_note", &["a.md"]);
        assert_eq!(
            rule_for_answer(&call, &Answer::Session),
            Some(Rule {
                tool: "update_note".into(),
                path_glob: None,
                effect: Effect::Allow,
                scope: RuleScope::Session,
            })
        );
        assert_eq!(
            rule_for_answer(&call, &Answer::Always { with_path: false }),
            Some(Rule {
                tool: "update_note".into(),
                path_glob: None,
                effect: Effect::Allow,
                scope: RuleScope::Always,
            })
        );
    }

    #[test]
    fn an_always_answer_with_path_pins_the_literal_path() {
        let call = write("update_note", &["Ideas/what*?.md"]);
        let rule = rule_for_answer(&call, &Answer::Always { with_path: true }).unwrap();
        assert_eq!(rule.path_glob.as_deref(), Some(r"Ideas/what\*\?.md"));
        assert_eq!(
            (rule.scope, rule.effect),
            (RuleScope::Always, Effect::Allow)
        );
        // The new rule allows this very call and nothing that the raw glob would have.
        let rules = set(vec![rule]);
        assert!(matches!(
            decide(&call, &rules, false),
            Decision::Allow { .. }
        ));
        assert_eq!(
            decide(&write("update_note", &["Ideas/whatever.md"]), &rules, false),
            ASK
        );
    }

    #[test]
    fn an_always_answer_with_path_needs_exactly_one_path() {
        for paths in [&[][..], &["a.md", "b.md"][..]] {
            let call = write("manage_tags", paths);
            assert_eq!(
                rule_for_answer(&call, &Answer::Always { with_path: true }),
                None,
                "{paths:?}"
            );
        }
    }

    #[test]
    fn always_is_never_granted_to_an_external_destructive_tool() {
        let call = external(write("srv__drop", &[]), true);
        for with_path in [false, true] {
            assert_eq!(rule_for_answer(&call, &Answer::Always { with_path }), None);
        }
        assert_eq!(
            rule_for_answer(&call, &Answer::Session).map(|r| r.scope),
            Some(RuleScope::Session)
        );
    }
}
