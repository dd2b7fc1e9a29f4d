//! The help overlay, generated from the active key map: every binding of every context under a
//! heading, as `keys  what it does  action_name` (the name is what `keymap.toml` uses), and the
//! chat's slash commands: the built-ins, the person's and the vault's (one list,
//! [`crate::commands`], as the host last read it).

use super::{Hint, Scroll, View, ViewOutcome, draw_box, footer, pad_right, text_width, truncate};
use crate::commands::{Command, Origin};
use crate::tui::keymap::{Action, KeyContext, Keymap};
use crate::tui::theme::{Role, Theme};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// What the mouse does (the terminal reports clicks and the wheel to the app).
pub const MOUSE: &[(&str, &str)] = &[
    (
        "click",
        "Focus a pane; in the editor, put the cursor there; in the file pane, open the note or folder",
    ),
    (
        "drag",
        "In the editor: select text (copy_selection copies it)",
    ),
    ("wheel", "Scroll the pane under the pointer"),
    (
        "shift-drag",
        "Select text to copy with the terminal (most terminals; Option-drag in iTerm2), or use copy_mode",
    ),
];

/// How a context is called in the help, and when its keys apply.
fn context_heading(context: KeyContext) -> (&'static str, &'static str) {
    match context {
        KeyContext::Global => ("Everywhere", "unless the focused pane binds the same key"),
        KeyContext::Editor => ("Note editor", "while the editor has focus"),
        KeyContext::Chat => ("Chat", "while the chat has focus"),
        KeyContext::Banner => (
            "Permission banner",
            "when the agent asks; Enter alone never approves",
        ),
        KeyContext::List => (
            "Lists and overlays",
            "sessions, usage, rewind, tools, this help; type to search sessions",
        ),
        KeyContext::Conflict => (
            "Conflict banner",
            "when the open note changed on disk while you edited it",
        ),
        KeyContext::Files => (
            "File pane",
            "while the file pane has focus; a click opens a note",
        ),
        KeyContext::Completion => (
            "[[ completion",
            "while the list of notes after [[ is open in the editor or the chat",
        ),
        KeyContext::Unsaved => (
            "Unsaved changes",
            "before leaving a note that is not saved (autosave off); arrows and Enter choose too",
        ),
    }
}

/// One row of the help before it is laid out for a width.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    Intro(String),
    Heading {
        title: &'static str,
        table: String,
        note: &'static str,
    },
    Binding {
        keys: String,
        description: String,
        name: &'static str,
    },
    Blank,
}

/// The help overlay.
#[derive(Debug, Clone)]
pub struct HelpView {
    rows: Vec<Row>,
    scroll: Scroll,
    keymap: Keymap,
}

impl HelpView {
    /// The help for `keymap` (the active key map; its keys also label the footer) and
    /// `commands` (every command: the built-ins, the person's, the vault's).
    pub fn new(keymap: &Keymap, commands: &[Command]) -> Self {
        let mut rows = vec![
            Row::Intro(format!(
                "Key map “{}”. Change any key in keymap.toml in vaultchat's config folder (same format as keymaps/default.toml).",
                keymap.name
            )),
            Row::Blank,
        ];
        for (context, bindings) in keymap.help() {
            if bindings.is_empty() {
                continue;
            }
            let (title, note) = context_heading(context);
            rows.push(Row::Heading {
                title,
                table: format!("[{}]", context.name()),
                note,
            });
            let mut bindings = bindings;
            // What a context is for comes first; scrolling, common to several, last.
            bindings.sort_by_key(|(_, action)| action.is_scrolling());
            for (keys, action) in bindings {
                rows.push(Row::Binding {
                    keys,
                    description: action.describe().to_string(),
                    name: action.name(),
                });
            }
            rows.push(Row::Blank);
        }
        let mcp = Origin::McpPrompt {
            server: String::new(),
            prompt: String::new(),
            plugin: false,
        };
        for (origin, title, note) in [
            (
                Origin::BuiltIn,
                "Chat commands",
                "type them in the chat input; / lists them all",
            ),
            (
                Origin::Personal,
                "Your commands",
                "files in commands/ in vaultchat's config folder",
            ),
            (
                Origin::Vault,
                "The vault's commands",
                "files in .vaultchat/commands/, listed while you trust the vault",
            ),
            (
                mcp,
                "MCP prompts",
                "/server:prompt, from your MCP servers and trusted plugins",
            ),
        ] {
            let mut of_origin = commands
                .iter()
                .filter(|c| std::mem::discriminant(&c.origin) == std::mem::discriminant(&origin))
                .peekable();
            if of_origin.peek().is_none() {
                continue;
            }
            rows.push(Row::Heading {
                title,
                table: String::new(),
                note,
            });
            for command in of_origin {
                // The person's and the vault's names and words come from files: escaped.
                // An MCP prompt's arguments lead its description (the names column is narrow);
                // the files' are in the `/` list's hint.
                let description = match &command.origin {
                    Origin::McpPrompt { .. } if !command.argument_hint.is_empty() => format!(
                        "{} · {}",
                        crate::quote::terminal(&command.argument_hint),
                        crate::quote::terminal(&command.description)
                    ),
                    _ => crate::quote::terminal(&command.description).into_owned(),
                };
                rows.push(Row::Binding {
                    keys: format!("/{}", crate::quote::terminal(&command.name)),
                    description,
                    name: "",
                });
            }
            rows.push(Row::Blank);
        }
        rows.push(Row::Heading {
            title: "Mouse",
            table: String::new(),
            note: "the app takes clicks and the wheel",
        });
        for (what, description) in MOUSE {
            rows.push(Row::Binding {
                keys: (*what).to_string(),
                description: (*description).to_string(),
                name: "",
            });
        }
        Self {
            rows,
            scroll: Scroll::default(),
            keymap: keymap.clone(),
        }
    }

    /// The rows laid out for `width` columns: long keys and descriptions wrap.
    fn lines(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let widest_keys = self
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Binding { keys, .. } => Some(text_width(keys)),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let widest_name = self
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Binding { name, .. } => Some(text_width(name)),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let indent = 2;
        // Most keys are short: a narrow column, and the few long lists wrap at their commas.
        let key_width = widest_keys.min((width / 5).max(12)).max(1);
        // The action names need room beside a readable description, or they are left out.
        let show_names = width >= indent + key_width + 2 + 40 + 2 + widest_name;
        let description_width = width
            .saturating_sub(indent + key_width + 2)
            .saturating_sub(if show_names { widest_name + 2 } else { 0 })
            .max(1);
        let mut lines = Vec::new();
        for row in &self.rows {
            match row {
                Row::Intro(text) => {
                    for part in wrap_words(text, width.max(1)) {
                        lines.push(Line::from(Span::styled(part, theme.style(Role::Dim))));
                    }
                }
                Row::Blank => lines.push(Line::default()),
                Row::Heading { title, table, note } => {
                    let mut spans = vec![Span::styled(*title, theme.style(Role::MdHeading))];
                    if !table.is_empty() {
                        spans.push(Span::styled(format!("  {table}"), theme.style(Role::Dim)));
                    }
                    let used = text_width(title)
                        + if table.is_empty() {
                            0
                        } else {
                            2 + text_width(table)
                        };
                    let room = width.saturating_sub(used + 3);
                    if room > 8 {
                        spans.push(Span::styled(
                            format!(" · {}", truncate(note, room)),
                            theme.style(Role::Dim),
                        ));
                    }
                    lines.push(Line::from(spans));
                }
                Row::Binding {
                    keys,
                    description,
                    name,
                } => {
                    let key_lines = wrap_keys(keys, key_width);
                    let description_lines = wrap_words(description, description_width);
                    let count = key_lines.len().max(description_lines.len());
                    for i in 0..count {
                        let key = key_lines.get(i).map_or("", String::as_str);
                        let text = description_lines.get(i).map_or("", String::as_str);
                        let mut spans = vec![
                            Span::raw(" ".repeat(indent)),
                            Span::styled(
                                pad_right(key, key_width),
                                theme.style(Role::TitleFocused),
                            ),
                            Span::raw("  "),
                        ];
                        if show_names && i == 0 && !name.is_empty() {
                            spans.push(Span::styled(
                                pad_right(text, description_width),
                                theme.style(Role::Text),
                            ));
                            spans.push(Span::styled(format!("  {name}"), theme.style(Role::Dim)));
                        } else {
                            spans.push(Span::styled(text.to_string(), theme.style(Role::Text)));
                        }
                        lines.push(Line::from(spans));
                    }
                }
            }
        }
        lines
    }
}

impl View for HelpView {
    /// A key with its action in the List context.
    fn handle(&mut self, action: Option<Action>, key: &KeyEvent) -> Option<ViewOutcome> {
        super::reader_keys(&mut self.scroll, action, key, Some(Action::ShowHelp))
    }

    /// Draw the overlay over `area` (the whole screen).
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = super::overlay_area(area);
        let hints: &[Hint<'_>] = &[
            (&[Action::Up, Action::Down], "scroll"),
            (&[Action::PageUp, Action::PageDown], "page"),
            (&[Action::Cancel], "close"),
        ];
        let footer = footer(&self.keymap, theme, hints, &[], area.width);
        let inner = draw_box(area, buf, theme, "Help · keys and commands", footer);
        if inner.is_empty() {
            return;
        }
        let lines = self.lines(usize::from(inner.width), theme);
        super::draw_scrolled(buf, theme, inner, &lines, &mut self.scroll);
    }
}

/// `ctrl-o, f6` split at the commas into lines of at most `width` columns.
fn wrap_keys(keys: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let parts: Vec<&str> = keys.split(", ").collect();
    for (i, part) in parts.iter().enumerate() {
        let piece = if i + 1 < parts.len() {
            format!("{part},")
        } else {
            (*part).to_string()
        };
        match lines.last_mut() {
            Some(line) if text_width(line) + 1 + text_width(&piece) <= width => {
                line.push(' ');
                line.push_str(&piece);
            }
            _ => lines.push(truncate(&piece, width)),
        }
    }
    lines
}

/// `text` broken into lines of at most `width` columns at spaces (a longer word is cut).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if line.is_empty() {
            line = truncate(word, width);
        } else if text_width(&line) + 1 + text_width(word) <= width {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(std::mem::take(&mut line));
            line = truncate(word, width);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::{buffer, buffer_text, style_at};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn builtins() -> Vec<Command> {
        crate::commands::Catalog::built_in().commands
    }

    fn rendered(view: &mut HelpView, w: u16, h: u16) -> Buffer {
        let mut buf = buffer(w, h);
        view.render(buf.area, &mut buf, &Theme::builtin_dark());
        buf
    }

    /// Every line of the help, walking the pages with PageDown.
    fn every_page(keymap: &Keymap, w: u16, h: u16) -> Vec<String> {
        let mut view = HelpView::new(keymap, &builtins());
        let mut seen = Vec::new();
        let mut last_offset = None;
        while last_offset != Some(view.scroll.offset) {
            last_offset = Some(view.scroll.offset);
            let text = buffer_text(&rendered(&mut view, w, h));
            seen.extend(text.lines().map(str::to_string));
            view.handle(
                Some(Action::PageDown),
                &KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE),
            );
            // The offset is clamped when drawn.
            rendered(&mut view, w, h);
        }
        seen
    }

    #[test]
    fn every_action_bound_in_both_builtin_keymaps_is_listed_with_its_keys() {
        // Wide enough that no key list wraps (the screen is short, so the overlay is full
        // screen), and the pages are walked.
        for name in ["default", "vim"] {
            let (keymap, errors) = Keymap::load(name, None);
            assert!(errors.is_empty(), "{errors:?}");
            let lines = every_page(&keymap, 180, 28);
            let mut count = 0;
            for (context, bindings) in keymap.help() {
                let (title, _) = context_heading(context);
                assert!(
                    lines.iter().any(|l| l.contains(title)),
                    "{name}: no heading {title}"
                );
                let mut bindings = bindings;
                // What a context is for comes first; scrolling, common to several, last.
                bindings.sort_by_key(|(_, action)| action.is_scrolling());
                for (keys, action) in bindings {
                    count += 1;
                    assert!(
                        lines.iter().any(|l| {
                            let row = l.trim_matches(|c| c == '│' || c == '┃' || c == ' ');
                            row.starts_with(&keys)
                                && row.contains(action.describe())
                                && row.ends_with(action.name())
                        }),
                        "{name}: `{keys}  {}  {}` is missing",
                        action.describe(),
                        action.name()
                    );
                }
            }
            assert!(count > 40, "{name}: only {count} bindings");
        }
    }

    #[test]
    fn a_user_binding_shows_in_the_help() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("keymap.toml"),
            "version = 1\n[editor]\nsave = [\"ctrl-w\", \"f10\"]\n",
        )
        .unwrap();
        let (keymap, errors) = Keymap::load("default", Some(dir.path()));
        assert!(errors.is_empty(), "{errors:?}");
        let lines = every_page(&keymap, 180, 28);
        assert!(
            lines
                .iter()
                .any(|l| l.contains("ctrl-w, f10") && l.contains("Save the note")),
            "{lines:#?}"
        );
        assert!(!lines.iter().any(|l| l.contains("ctrl-s ")));
    }

    #[test]
    fn long_keys_wrap_at_commas_and_descriptions_at_spaces() {
        assert_eq!(
            wrap_keys("alt-enter, shift-enter, ctrl-j", 24),
            ["alt-enter, shift-enter,", "ctrl-j"]
        );
        assert_eq!(wrap_keys("ctrl-o, f6", 24), ["ctrl-o, f6"]);
        assert_eq!(wrap_keys("verylongkeyname", 5), ["very…"]);
        assert_eq!(
            wrap_words("Approve this tool always (asks: tool, or tool + path)", 24),
            [
                "Approve this tool always",
                "(asks: tool, or tool +",
                "path)"
            ]
        );
        assert_eq!(wrap_words("", 10), [""]);
    }

    #[test]
    fn scrolling_moves_and_esc_or_the_help_key_closes() {
        let mut view = HelpView::new(&Keymap::default_map(), &builtins());
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        let first = buffer_text(&rendered(&mut view, 80, 24));
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        let second = buffer_text(&rendered(&mut view, 80, 24));
        assert_ne!(first, second);
        assert_eq!(view.scroll.offset, 1);
        view.handle(None, &key(KeyCode::End));
        rendered(&mut view, 80, 24);
        let bottom = view.scroll.offset;
        assert!(bottom > 20, "{bottom}");
        view.handle(Some(Action::Down), &key(KeyCode::Down));
        rendered(&mut view, 80, 24);
        assert_eq!(view.scroll.offset, bottom, "stops at the end");
        assert_eq!(
            view.handle(Some(Action::ShowHelp), &key(KeyCode::F(1))),
            Some(ViewOutcome::Close)
        );
        assert_eq!(
            view.handle(Some(Action::Cancel), &key(KeyCode::Esc)),
            Some(ViewOutcome::Close)
        );
        assert_eq!(view.handle(None, &key(KeyCode::Char('x'))), None);
    }

    #[test]
    fn keys_and_headings_have_their_styles() {
        let buf = rendered(
            &mut HelpView::new(&Keymap::default_map(), &builtins()),
            120,
            40,
        );
        let theme = Theme::builtin_dark();
        let looks = |text: &str| style_at(&buf, text).map(|s| (s.fg, s.add_modifier));
        let role = |role: Role| Some((theme.style(role).fg, theme.style(role).add_modifier));
        assert_eq!(looks("ctrl-q"), role(Role::TitleFocused));
        assert_eq!(looks("Everywhere"), role(Role::MdHeading));
        assert_eq!(looks("Quit vaultchat"), role(Role::Text));
        assert_eq!(looks("[global]"), role(Role::Dim));
    }

    #[test]
    fn snapshot_help_80x24() {
        let mut view = HelpView::new(&Keymap::default_map(), &builtins());
        insta::assert_snapshot!("help_80x24", buffer_text(&rendered(&mut view, 80, 24)));
        // Further down, where keys wrap.
        for _ in 0..2 {
            view.handle(
                Some(Action::PageDown),
                &KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE),
            );
        }
        insta::assert_snapshot!(
            "help_80x24_page3",
            buffer_text(&rendered(&mut view, 80, 24))
        );
    }

    #[test]
    fn snapshot_help_120x40() {
        let mut view = HelpView::new(&Keymap::load("vim", None).0, &builtins());
        insta::assert_snapshot!(
            "help_vim_120x40",
            buffer_text(&rendered(&mut view, 120, 40))
        );
    }

    #[test]
    fn snapshot_help_with_the_persons_and_the_vaults_commands_80x24() {
        let mut commands = builtins();
        for (name, description, origin) in [
            ("inbox", "File the inbox into folders", Origin::Personal),
            (
                "weekly-review",
                "Review the week's notes and plan the next",
                Origin::Vault,
            ),
            // A vault's file may carry escapes: shown, never obeyed.
            ("study:cards", "Flashcards \u{1b}[2J now", Origin::Vault),
        ] {
            commands.push(Command {
                name: name.into(),
                description: description.into(),
                argument_hint: String::new(),
                origin,
                file: None,
                prompt: None,
                arguments: Vec::new(),
            });
        }
        let mut view = HelpView::new(&Keymap::default_map(), &commands);
        view.handle(None, &KeyEvent::new(KeyCode::End, KeyModifiers::NONE));
        let screen = buffer_text(&rendered(&mut view, 80, 24));
        insta::assert_snapshot!("help_commands_80x24", screen);
        for part in [
            "Your commands",
            "/inbox",
            "The vault's commands",
            "/weekly-review",
        ] {
            assert!(screen.contains(part), "{part}: {screen}");
        }
        assert!(!screen.contains('\u{1b}'), "escaped: {screen}");
    }

    #[test]
    fn never_panics_at_any_size() {
        for (w, h) in [(0, 0), (1, 1), (2, 2), (5, 3), (12, 6), (300, 100)] {
            let mut view = HelpView::new(&Keymap::default_map(), &builtins());
            rendered(&mut view, w, h);
            view.handle(None, &KeyEvent::new(KeyCode::End, KeyModifiers::NONE));
            rendered(&mut view, w, h);
        }
    }

    #[test]
    fn snapshot_help_with_mcp_prompts_80x24() {
        let mut commands = builtins();
        let argument = |name: &str, required| crate::commands::Argument {
            name: name.into(),
            description: String::new(),
            required,
        };
        commands.push(Command {
            name: "notes:summarize".into(),
            description: "Summarise a topic \u{1b}[2J from the notes".into(),
            argument_hint: "<topic> [style]".into(),
            origin: Origin::McpPrompt {
                server: "notes".into(),
                prompt: "summarize".into(),
                plugin: false,
            },
            file: None,
            prompt: None,
            arguments: vec![argument("topic", true), argument("style", false)],
        });
        let mut view = HelpView::new(&Keymap::default_map(), &commands);
        view.handle(None, &KeyEvent::new(KeyCode::End, KeyModifiers::NONE));
        let screen = buffer_text(&rendered(&mut view, 80, 24));
        insta::assert_snapshot!("help_mcp_prompts_80x24", screen);
        assert!(screen.contains("MCP prompts"), "{screen}");
        assert!(screen.contains("<topic> [style] · Summarise"), "{screen}");
        assert!(!screen.contains('\u{1b}'), "escaped: {screen}");
    }
}
