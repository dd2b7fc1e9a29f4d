//! `[hooks]`: commands run after an approved change is written, after a turn and at a session's
//! start and end. The same shape is read from the person's `config.toml` (`[[hooks.after_write]]`)
//! and from a trusted vault's `.vaultchat/hooks.toml` (`[[after_write]]`, without the prefix).
//! The vault's file is read and trusted by `crate::hooks`; here is only what the text means.

use serde::Deserialize;

/// The longest a hook may be given (an hour): a hook is a commit or a sync, not a job.
pub const MAX_HOOK_TIMEOUT_SECS: u64 = 3600;

/// How long a hook runs before it is killed, when it does not say.
pub const DEFAULT_HOOK_TIMEOUT_SECS: u64 = 10;

/// The most hooks one file may declare (per event and in all): more is a mistake, not a setup.
pub const MAX_HOOKS: usize = 32;

/// `[hooks]`: the hooks of each event, run in the order written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    /// After an approved change is written to disk (the changed paths are given).
    #[serde(default)]
    pub after_write: Vec<HookSpec>,
    /// After each turn of the agent.
    #[serde(default)]
    pub after_turn: Vec<HookSpec>,
    /// When a chat session starts (the app, `/new`, a resumed session, `vaultchat ask`).
    #[serde(default)]
    pub session_start: Vec<HookSpec>,
    /// When a chat session ends (the app quits, `/new`, `vaultchat ask` is done).
    #[serde(default)]
    pub session_end: Vec<HookSpec>,
}

/// One hook.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// A shell string (run by `sh -c`, the changed paths as `"$@"`) or an argv list (run as is).
    pub command: HookCommand,
    /// Seconds before the hook (and every process it started) is killed.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

fn default_timeout() -> u64 {
    DEFAULT_HOOK_TIMEOUT_SECS
}

/// How a hook's command is written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum HookCommand {
    /// `command = "git add -A && git commit -m …"`: one line for `sh -c`.
    Shell(String),
    /// `command = ["scripts/sync", "--quiet"]`: a program and its arguments, no shell.
    Argv(Vec<String>),
}

impl HookCommand {
    /// How the command reads in a notice or the log.
    pub fn shown(&self) -> String {
        match self {
            HookCommand::Shell(line) => line.clone(),
            HookCommand::Argv(argv) => argv.join(" "),
        }
    }
}

/// When hooks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// An approved change was written (its paths given).
    AfterWrite,
    /// A turn of the agent ended.
    AfterTurn,
    /// A chat session started.
    SessionStart,
    /// A chat session ended.
    SessionEnd,
}

impl Event {
    pub const ALL: [Event; 4] = [
        Event::AfterWrite,
        Event::AfterTurn,
        Event::SessionStart,
        Event::SessionEnd,
    ];

    /// The key in `[hooks]` and the value of `VAULTCHAT_EVENT`.
    pub fn key(self) -> &'static str {
        match self {
            Event::AfterWrite => "after_write",
            Event::AfterTurn => "after_turn",
            Event::SessionStart => "session_start",
            Event::SessionEnd => "session_end",
        }
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

impl HooksConfig {
    /// The hooks of one event.
    pub fn for_event(&self, event: Event) -> &[HookSpec] {
        match event {
            Event::AfterWrite => &self.after_write,
            Event::AfterTurn => &self.after_turn,
            Event::SessionStart => &self.session_start,
            Event::SessionEnd => &self.session_end,
        }
    }

    /// Every event's hooks.
    pub fn by_event(&self) -> [(Event, &[HookSpec]); 4] {
        Event::ALL.map(|event| (event, self.for_event(event)))
    }

    /// Whether no hook is declared.
    pub fn is_empty(&self) -> bool {
        self.by_event().iter().all(|(_, hooks)| hooks.is_empty())
    }

    /// What serde cannot check: an empty command, a timeout of 0 or past an hour, too many hooks.
    /// `Err((key, problem))` with the key as written under the hooks table (`after_write`).
    pub fn problem(&self) -> Option<(String, String)> {
        let total: usize = self.by_event().iter().map(|(_, hooks)| hooks.len()).sum();
        if total > MAX_HOOKS {
            return Some((
                String::new(),
                format!("{total} hooks are declared; at most {MAX_HOOKS} are run"),
            ));
        }
        for (event, hooks) in self.by_event() {
            for (index, hook) in hooks.iter().enumerate() {
                let empty = match &hook.command {
                    HookCommand::Shell(line) => line.trim().is_empty(),
                    HookCommand::Argv(argv) => argv.first().is_none_or(|p| p.trim().is_empty()),
                };
                if empty {
                    return Some((
                        format!("{event}.command"),
                        format!(
                            "hook {} of `{event}` has an empty command: write a shell line or a program and its arguments",
                            index + 1
                        ),
                    ));
                }
                if !(1..=MAX_HOOK_TIMEOUT_SECS).contains(&hook.timeout_secs) {
                    return Some((
                        format!("{event}.timeout_secs"),
                        format!(
                            "hook {} of `{event}`: {} s is outside 1 to {MAX_HOOK_TIMEOUT_SECS}",
                            index + 1,
                            hook.timeout_secs
                        ),
                    ));
                }
            }
        }
        None
    }

    /// A vault's `.vaultchat/hooks.toml` (the events at the top, no `[hooks]` prefix), or why it
    /// cannot be used: the line and the key, as for `config.toml`.
    pub fn parse_vault_file(text: &str) -> Result<HooksConfig, String> {
        let hooks: HooksConfig = toml::from_str(text).map_err(|e| {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            let (line, key) = super::file::locate_key(text, offset);
            let key = if key.is_empty() {
                String::new()
            } else {
                format!(" key `{key}`:")
            };
            format!("line {line}:{key} {}", e.message().trim())
        })?;
        if let Some((key, problem)) = hooks.problem() {
            let line = super::file::line_of_key(text, &key);
            let key = if key.is_empty() {
                String::new()
            } else {
                format!(" key `{key}`:")
            };
            return Err(format!("line {line}:{key} {problem}"));
        }
        Ok(hooks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vault_file_reads_both_forms_and_names_what_is_wrong() {
        let hooks = HooksConfig::parse_vault_file(
            "[[after_write]]\ncommand = \"git add -A\"\n\n[[after_turn]]\ncommand = [\"sync\", \"--quiet\"]\ntimeout_secs = 30\n",
        )
        .unwrap();
        assert_eq!(
            hooks.after_write[0].command,
            HookCommand::Shell("git add -A".into())
        );
        assert_eq!(hooks.after_write[0].timeout_secs, DEFAULT_HOOK_TIMEOUT_SECS);
        assert_eq!(
            hooks.after_turn[0].command,
            HookCommand::Argv(vec!["sync".into(), "--quiet".into()])
        );
        assert_eq!(hooks.after_turn[0].timeout_secs, 30);

        let unknown =
            HooksConfig::parse_vault_file("[[after_save]]\ncommand = \"x\"\n").unwrap_err();
        assert!(unknown.contains("after_save"), "{unknown}");
        let empty =
            HooksConfig::parse_vault_file("[[after_write]]\ncommand = \"  \"\n").unwrap_err();
        assert!(
            empty.contains("line 2") && empty.contains("after_write.command"),
            "{empty}"
        );
        let argv = HooksConfig::parse_vault_file("[[session_end]]\ncommand = []\n").unwrap_err();
        assert!(argv.contains("empty command"), "{argv}");
        let slow =
            HooksConfig::parse_vault_file("[[after_turn]]\ncommand = \"x\"\ntimeout_secs = 0\n")
                .unwrap_err();
        assert!(slow.contains("after_turn.timeout_secs"), "{slow}");
    }

    /// In `config.toml`, a wrong event or an empty command is a config error naming the key.
    #[test]
    fn config_errors_name_the_hooks_key() {
        let path = std::path::Path::new("config.toml");
        let config = crate::config::Config::parse(
            "[[hooks.after_write]]\ncommand = \"git add -A\"\ntimeout_secs = 30\n",
            path,
        )
        .unwrap();
        assert_eq!(config.hooks.after_write[0].timeout_secs, 30);
        let unknown = crate::config::Config::parse("[[hooks.after_save]]\ncommand = \"x\"\n", path)
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("hooks"), "{unknown}");
        assert!(unknown.contains("after_save"), "{unknown}");
        assert!(
            unknown.contains("after_write"),
            "the known events are named: {unknown}"
        );
        let empty = crate::config::Config::parse(
            "[provider]\nkind = \"anthropic\"\n\n[[hooks.after_write]]\ncommand = []\n",
            path,
        )
        .unwrap_err()
        .to_string();
        assert!(
            empty.contains("config.toml:5: key `hooks.after_write.command`"),
            "{empty}"
        );
    }
}
