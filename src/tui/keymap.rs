//! Key maps: which key does what, per context (`keymaps/*.toml`, embedded; a user `keymap.toml` in
//! the config folder patches over the chosen one). The help overlay is generated from the active
//! key map, so what it shows is always what the keys do.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The key map file format this build reads.
pub const KEYMAP_VERSION: u32 = 1;

/// The built-in key maps.
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../keymaps/default.toml")),
    ("vim", include_str!("../../keymaps/vim.toml")),
];

macro_rules! actions {
    ($($variant:ident => $name:literal: $doc:literal,)*) => {
        /// Something a key can do. The names are what key map files use.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Action {
            $(#[doc = $doc] $variant,)*
        }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            pub fn name(self) -> &'static str {
                match self { $(Action::$variant => $name,)* }
            }

            /// What the action does, for the help overlay.
            pub fn describe(self) -> &'static str {
                match self { $(Action::$variant => $doc,)* }
            }

            pub fn from_name(name: &str) -> Option<Action> {
                match name { $($name => Some(Action::$variant),)* _ => None }
            }
        }
    };
}

actions! {
    Quit => "quit": "Quit vaultchat",
    Suspend => "suspend": "Suspend vaultchat (fg in the shell brings it back)",
    FocusNext => "focus_next": "Move focus to the next pane (file pane, editor, chat)",
    FocusEditor => "focus_editor": "Focus the note editor",
    FocusChat => "focus_chat": "Focus the chat",
    FocusFiles => "focus_files": "Focus the file pane (showing it if hidden)",
    ToggleFiles => "toggle_files": "Show or hide the file pane",
    OpenPicker => "open_picker": "Open a note by name (fuzzy)",
    OpenDaily => "open_daily": "Open today's daily note (created from its template when missing)",
    ShowHelp => "show_help": "Show this help",
    ShowSessions => "show_sessions": "Show past sessions",
    ShowUsage => "show_usage": "Show token usage and cost",
    ShowTasks => "show_tasks": "Show the vault's open tasks, due first",
    ShowBacklinks => "show_backlinks": "Show the notes that link to the open note (backlinks)",
    NewSession => "new_session": "Start a new session",
    ToggleMaximize => "toggle_maximize": "Maximise the focused pane, or restore the split",
    GrowEditor => "grow_editor": "Give the editor more width",
    ShrinkEditor => "shrink_editor": "Give the chat more width",
    CopyMode => "copy_mode": "Copy mode: release the mouse so the terminal can select text",
    Save => "save": "Save the note",
    Undo => "undo": "Undo",
    Redo => "redo": "Redo",
    OpenExternal => "open_external": "Open the note in $EDITOR",
    InsertTemplate => "insert_template": "Insert a template (from the templates folder) at the cursor",
    FollowLink => "follow_link": "Open the [[wikilink]] under the cursor",
    CopySelection => "copy_selection": "Copy the selection to the clipboard",
    Send => "send": "Send the message",
    Newline => "newline": "Insert a line break in the message",
    HistoryPrev => "history_prev": "Previous message from the history",
    HistoryNext => "history_next": "Next message from the history",
    PasteImage => "paste_image": "Paste from the clipboard: an image is attached, text is typed in",
    RemoveImage => "remove_image": "Remove the last attached image (while the message is empty)",
    Interrupt => "interrupt": "Interrupt the running turn",
    ScrollUp => "scroll_up": "Scroll up",
    ScrollDown => "scroll_down": "Scroll down",
    PageUp => "page_up": "Scroll up a page",
    PageDown => "page_down": "Scroll down a page",
    ScrollTop => "scroll_top": "Scroll to the top",
    ScrollBottom => "scroll_bottom": "Scroll to the bottom",
    ToggleDetails => "toggle_details": "Toggle the last tool call, thinking or compaction",
    ApproveOnce => "approve_once": "Approve this change once",
    ApproveSession => "approve_session": "Approve this tool for the session",
    ApproveAlways => "approve_always": "Approve this tool always (asks: tool, or tool + path)",
    Deny => "deny": "Deny (type a reason for the model, Enter to send)",
    SideBySide => "side_by_side": "Show the change side by side, full screen",
    NextHunk => "next_hunk": "Next hunk (through a hunk taller than the screen, a row at a time first)",
    PrevHunk => "prev_hunk": "Previous hunk (back up to the current hunk's start first)",
    ToggleHunk => "toggle_hunk": "Accept or reject the current hunk",
    ToggleFile => "toggle_file": "Accept or reject every hunk of the current file (a change to several files)",
    Up => "up": "Move up",
    Down => "down": "Move down",
    Confirm => "confirm": "Choose",
    Cancel => "cancel": "Close",
    Delete => "delete": "Delete",
    Rename => "rename": "Rename",
    ToggleTask => "toggle_task": "Check the selected task off (in the tasks view)",
    Expand => "expand": "Open the folder (or step into it)",
    Collapse => "collapse": "Close the folder (or go to the folder holding the row)",
    NewNote => "new_note": "Create a note (asks for its name; Folder/Name puts it in a folder)",
    KeepMine => "keep_mine": "Keep my text (the note on disk is overwritten when saved)",
    TakeTheirs => "take_theirs": "Take the text on disk (my changes are dropped)",
    Merge => "merge": "Merge both changes (when they touch different lines)",
    Discard => "discard": "Drop the unsaved changes and go on",
}

/// The scrolling actions, as a pattern: the app's dispatch `match` names them with it (keeping
/// that match exhaustive) and [`Action::is_scrolling`] tests for them.
macro_rules! scrolling_actions {
    () => {
        $crate::tui::keymap::Action::ScrollUp
            | $crate::tui::keymap::Action::ScrollDown
            | $crate::tui::keymap::Action::PageUp
            | $crate::tui::keymap::Action::PageDown
            | $crate::tui::keymap::Action::ScrollTop
            | $crate::tui::keymap::Action::ScrollBottom
    };
}
pub(crate) use scrolling_actions;

impl Action {
    /// Whether the action scrolls (the help lists these after a context's own).
    pub fn is_scrolling(self) -> bool {
        matches!(self, scrolling_actions!())
    }
}

/// Where a key is pressed. Global bindings apply everywhere unless a context binds the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyContext {
    Global,
    Editor,
    Chat,
    Banner,
    List,
    Conflict,
    Files,
    Completion,
    Unsaved,
}

impl KeyContext {
    pub const ALL: &'static [KeyContext] = &[
        KeyContext::Global,
        KeyContext::Editor,
        KeyContext::Chat,
        KeyContext::Banner,
        KeyContext::List,
        KeyContext::Conflict,
        KeyContext::Files,
        KeyContext::Completion,
        KeyContext::Unsaved,
    ];

    pub fn name(self) -> &'static str {
        match self {
            KeyContext::Global => "global",
            KeyContext::Editor => "editor",
            KeyContext::Chat => "chat",
            KeyContext::Banner => "banner",
            KeyContext::List => "list",
            KeyContext::Conflict => "conflict",
            KeyContext::Files => "files",
            KeyContext::Completion => "completion",
            KeyContext::Unsaved => "unsaved",
        }
    }

    fn from_name(name: &str) -> Option<KeyContext> {
        KeyContext::ALL.iter().copied().find(|c| c.name() == name)
    }
}

/// A key with its modifiers, normalised (a shifted letter is the capital letter, no SHIFT flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    code: KeyCodeOrd,
    ctrl: bool,
    alt: bool,
    shift: bool,
}

/// `KeyCode` with an order, for sorted help output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum KeyCodeOrd {
    Char(char),
    F(u8),
    Named(&'static str),
}

const NAMED: &[(&str, KeyCode)] = &[
    ("enter", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("backspace", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("insert", KeyCode::Insert),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("pageup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("space", KeyCode::Char(' ')),
];

impl Key {
    /// The key of a terminal event.
    pub fn from_event(event: &KeyEvent) -> Option<Key> {
        let mods = event.modifiers;
        let mut shift = mods.contains(KeyModifiers::SHIFT);
        let code = match event.code {
            KeyCode::Char(' ') => KeyCodeOrd::Named("space"),
            KeyCode::Char(c) => {
                // A shifted letter arrives as the capital; the capital is the key.
                if c.is_alphabetic() || !c.is_ascii_alphanumeric() {
                    shift = false;
                }
                KeyCodeOrd::Char(c)
            }
            KeyCode::F(n) => KeyCodeOrd::F(n),
            KeyCode::BackTab => {
                shift = false;
                KeyCodeOrd::Named("backtab")
            }
            other => KeyCodeOrd::Named(NAMED.iter().find(|(_, c)| *c == other)?.0),
        };
        Some(Key {
            code,
            ctrl: mods.contains(KeyModifiers::CONTROL),
            alt: mods.contains(KeyModifiers::ALT),
            shift,
        })
    }

    /// Parse `ctrl-s`, `alt-enter`, `shift-tab`, `f1`, `?`, `G`, `space`.
    pub fn parse(text: &str) -> Option<Key> {
        let mut key = Key {
            code: KeyCodeOrd::Named("esc"),
            ctrl: false,
            alt: false,
            shift: false,
        };
        let mut rest = text;
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-") {
                key.ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-") {
                key.alt = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("shift-") {
                key.shift = true;
                rest = r;
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        key.code = match (chars.next(), chars.next()) {
            (Some(c), None) if c != ' ' => KeyCodeOrd::Char(c),
            _ => {
                if let Some(n) = rest.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    if !(1..=24).contains(&n) {
                        return None;
                    }
                    KeyCodeOrd::F(n)
                } else {
                    KeyCodeOrd::Named(NAMED.iter().find(|(name, _)| *name == rest)?.0)
                }
            }
        };
        if let KeyCodeOrd::Char(c) = key.code
            && key.shift
            && c.is_alphabetic()
        {
            key.shift = false;
            key.code = KeyCodeOrd::Char(c.to_uppercase().next().unwrap_or(c));
        }
        Some(key)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        if self.shift {
            f.write_str("shift-")?;
        }
        match self.code {
            KeyCodeOrd::Char(c) => write!(f, "{c}"),
            KeyCodeOrd::F(n) => write!(f, "f{n}"),
            KeyCodeOrd::Named(name) => f.write_str(name),
        }
    }
}

/// One key map file: `[context]` tables of `action = "key"` or `action = ["key", "key"]`.
/// (No `deny_unknown_fields`: it does not work with `flatten`; an unknown context is reported by
/// name when the contexts are read.)
#[derive(Debug, Deserialize)]
struct KeymapFile {
    version: Option<u32>,
    name: Option<String>,
    inherits: Option<String>,
    #[serde(flatten)]
    contexts: BTreeMap<String, BTreeMap<String, Keys>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Keys {
    One(String),
    Many(Vec<String>),
}

/// A problem with a key map file; the defaults are used and the message is shown on screen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {problem}")]
pub struct KeymapError {
    pub file: String,
    pub problem: String,
}

/// The active key map.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    pub name: String,
    /// Per context: action → keys.
    bindings: BTreeMap<KeyContext, BTreeMap<Action, Vec<Key>>>,
}

impl Keymap {
    /// The key map `name` (built in, or a user file `keymap.toml` in `config_dir` patching it).
    pub fn load(name: &str, config_dir: Option<&Path>) -> (Keymap, Vec<KeymapError>) {
        let mut errors = Vec::new();
        let mut keymap = match Self::builtin(name, &mut errors, 0) {
            Some(k) => k,
            None => {
                errors.push(KeymapError {
                    file: format!("key map `{name}`"),
                    problem: format!(
                        "there is no such key map (built in: {}); using default",
                        BUILTIN
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
                Self::default_map()
            }
        };
        if let Some(path) = config_dir
            .map(|d| d.join("keymap.toml"))
            .filter(|p| p.is_file())
        {
            let shown = path.display().to_string();
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let before = keymap.clone();
                    if let Err(e) = keymap.patch(&shown, &text) {
                        errors.push(e);
                        keymap = before;
                    }
                }
                Err(e) => errors.push(KeymapError {
                    file: shown,
                    problem: format!("cannot be read ({e}); using the built-in key map"),
                }),
            }
        }
        (keymap, errors)
    }

    /// The built-in default key map (a test checks that it parses).
    pub fn default_map() -> Keymap {
        Self::builtin("default", &mut Vec::new(), 0).unwrap_or(Keymap {
            name: "default".into(),
            bindings: BTreeMap::new(),
        })
    }

    fn builtin(name: &str, errors: &mut Vec<KeymapError>, depth: usize) -> Option<Keymap> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        let shown = format!("built-in key map {name}");
        let parsed: KeymapFile = match toml::from_str(text) {
            Ok(p) => p,
            Err(e) => {
                errors.push(KeymapError {
                    file: shown,
                    problem: e.message().to_string(),
                });
                return None;
            }
        };
        let mut keymap = match parsed.inherits.as_deref() {
            Some(parent) if depth < 4 && parent != name => {
                Self::builtin(parent, errors, depth + 1)?
            }
            _ => Keymap {
                name: name.to_string(),
                bindings: BTreeMap::new(),
            },
        };
        keymap.name = name.to_string();
        if let Err(e) = keymap.patch(&shown, text) {
            errors.push(e);
            return None;
        }
        Some(keymap)
    }

    /// Apply a key map file over this one: each action it names gets exactly the keys it lists.
    fn patch(&mut self, shown: &str, text: &str) -> Result<(), KeymapError> {
        let error = |problem: String| KeymapError {
            file: shown.to_string(),
            problem,
        };
        let file: KeymapFile =
            toml::from_str(text).map_err(|e| error(e.message().trim().to_string()))?;
        match file.version {
            Some(KEYMAP_VERSION) => {}
            Some(v) => {
                return Err(error(format!(
                    "key `version`: {v} is not a version this vaultchat reads (write `version = {KEYMAP_VERSION}`)"
                )));
            }
            None => {
                return Err(error(format!(
                    "key `version` is missing (write `version = {KEYMAP_VERSION}` at the top)"
                )));
            }
        }
        let _ = file.name;
        for (context_name, actions) in file.contexts {
            let context = KeyContext::from_name(&context_name).ok_or_else(|| {
                error(format!(
                    "`[{context_name}]` is not a context (contexts: {})",
                    KeyContext::ALL
                        .iter()
                        .map(|c| c.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            for (action_name, keys) in actions {
                let action = Action::from_name(&action_name).ok_or_else(|| {
                    error(format!(
                        "key `{context_name}.{action_name}`: there is no action `{action_name}` (see the help overlay, F1, for the actions)"
                    ))
                })?;
                let texts = match keys {
                    Keys::One(k) => vec![k],
                    Keys::Many(ks) => ks,
                };
                let mut parsed = Vec::new();
                for text in texts {
                    parsed.push(Key::parse(&text).ok_or_else(|| {
                        error(format!(
                            "key `{context_name}.{action_name}`: `{text}` is not a key (write e.g. \"ctrl-s\", \"alt-enter\", \"f1\", \"?\")"
                        ))
                    })?);
                }
                self.bindings
                    .entry(context)
                    .or_default()
                    .insert(action, parsed);
            }
        }
        self.check_conflicts().map_err(error)
    }

    /// Two actions on one key in one context would make one of them unreachable.
    fn check_conflicts(&self) -> Result<(), String> {
        for (context, actions) in &self.bindings {
            let mut seen: BTreeMap<Key, Action> = BTreeMap::new();
            for (action, keys) in actions {
                for key in keys {
                    if let Some(other) = seen.insert(*key, *action) {
                        return Err(format!(
                            "`{key}` is bound twice in [{}]: to `{}` and to `{}`",
                            context.name(),
                            other.name(),
                            action.name()
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The action for `event` in `context`, falling back to the global bindings.
    pub fn action(&self, context: KeyContext, event: &KeyEvent) -> Option<Action> {
        let key = Key::from_event(event)?;
        let find = |ctx: KeyContext| {
            self.bindings.get(&ctx).and_then(|actions| {
                actions
                    .iter()
                    .find(|(_, keys)| keys.contains(&key))
                    .map(|(action, _)| *action)
            })
        };
        find(context).or_else(|| {
            // Overlays take every key they bind and nothing global except what they do not bind.
            find(KeyContext::Global)
        })
    }

    /// The keys bound to `action` in `context`, as text ("ctrl-s").
    pub fn keys_for(&self, context: KeyContext, action: Action) -> Vec<String> {
        self.bindings
            .get(&context)
            .and_then(|a| a.get(&action))
            .map(|keys| keys.iter().map(Key::to_string).collect())
            .unwrap_or_default()
    }

    /// Every binding, per context, for the help overlay.
    pub fn help(&self) -> Vec<(KeyContext, Vec<(String, Action)>)> {
        self.bindings
            .iter()
            .map(|(context, actions)| {
                let rows = actions
                    .iter()
                    .filter(|(_, keys)| !keys.is_empty())
                    .map(|(action, keys)| {
                        (
                            keys.iter()
                                .map(Key::to_string)
                                .collect::<Vec<_>>()
                                .join(", "),
                            *action,
                        )
                    })
                    .collect();
                (*context, rows)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn builtin_key_maps_load_cleanly() {
        for (name, _) in BUILTIN {
            let (keymap, errors) = Keymap::load(name, None);
            assert!(errors.is_empty(), "{name}: {errors:?}");
            assert_eq!(keymap.name, *name);
        }
    }

    #[test]
    fn keys_parse_and_print_round_trip() {
        for text in [
            "ctrl-s",
            "alt-enter",
            "f1",
            "?",
            "G",
            "space",
            "shift-tab",
            "pagedown",
            "ctrl-alt-x",
        ] {
            let key = Key::parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(Key::parse(&key.to_string()), Some(key), "{text}");
        }
        assert_eq!(Key::parse("shift-g"), Key::parse("G"));
        assert_eq!(Key::parse("f99"), None);
        assert_eq!(Key::parse("hyper-x"), None);
    }

    #[test]
    fn events_find_their_actions() {
        let keymap = Keymap::default_map();
        assert_eq!(
            keymap.action(
                KeyContext::Editor,
                &key(KeyCode::Char('q'), KeyModifiers::CONTROL)
            ),
            Some(Action::Quit),
            "global bindings apply in every context"
        );
        assert_eq!(
            keymap.action(
                KeyContext::Editor,
                &key(KeyCode::Char('s'), KeyModifiers::CONTROL)
            ),
            Some(Action::Save)
        );
        assert_eq!(
            keymap.action(
                KeyContext::Banner,
                &key(KeyCode::Char('y'), KeyModifiers::NONE)
            ),
            Some(Action::ApproveOnce)
        );
        // Enter alone never approves.
        assert_ne!(
            keymap.action(KeyContext::Banner, &key(KeyCode::Enter, KeyModifiers::NONE)),
            Some(Action::ApproveOnce)
        );
        // A shifted capital is the capital.
        assert_eq!(
            Key::from_event(&key(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Key::parse("G")
        );
    }

    #[test]
    fn a_user_file_patches_and_bad_files_fall_back_with_the_key_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("keymap.toml"),
            "version = 1\n[editor]\nsave = \"ctrl-w\"\n",
        )
        .unwrap();
        let (keymap, errors) = Keymap::load("default", Some(dir.path()));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            keymap.keys_for(KeyContext::Editor, Action::Save),
            ["ctrl-w"]
        );

        std::fs::write(
            dir.path().join("keymap.toml"),
            "version = 1\n[editor]\nsavee = \"ctrl-w\"\n",
        )
        .unwrap();
        let (keymap, errors) = Keymap::load("default", Some(dir.path()));
        assert_eq!(keymap, Keymap::default_map());
        assert!(errors[0].problem.contains("editor.savee"), "{errors:?}");

        std::fs::write(
            dir.path().join("keymap.toml"),
            "version = 1\n[banner]\ndeny = \"y\"\n",
        )
        .unwrap();
        let (_, errors) = Keymap::load("default", Some(dir.path()));
        assert!(errors[0].problem.contains("bound twice"), "{errors:?}");
    }

    #[test]
    fn the_help_lists_every_bound_action() {
        let keymap = Keymap::default_map();
        let help = keymap.help();
        let listed: Vec<Action> = help
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(|(_, a)| *a))
            .collect();
        for action in [
            Action::Quit,
            Action::Save,
            Action::ApproveOnce,
            Action::Send,
        ] {
            assert!(listed.contains(&action), "{action:?}");
        }
    }
}
