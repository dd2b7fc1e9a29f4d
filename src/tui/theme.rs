//! Colour themes: a palette of named colours and semantic roles that use them (`themes/*.toml`,
//! embedded in the binary; a user file of the same name in the config folder's `themes/` patches
//! over the built-in one; `inherits` starts from another theme).
//!
//! This is the only module that names colours. Everything on screen asks for a [`Role`].

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The theme file format this build reads.
pub const THEME_VERSION: u32 = 1;

/// The built-in themes, embedded at build time.
pub const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

macro_rules! roles {
    ($($variant:ident => $name:literal: $doc:literal,)*) => {
        /// What a piece of the screen is; the theme says how it looks.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Role {
            $(#[doc = $doc] $variant,)*
        }

        impl Role {
            /// Every role, in the order of the role sheet.
            pub const ALL: &'static [Role] = &[$(Role::$variant,)*];

            /// The role's key in a theme file.
            pub fn name(self) -> &'static str {
                match self {
                    $(Role::$variant => $name,)*
                }
            }

            pub fn from_name(name: &str) -> Option<Role> {
                match name {
                    $($name => Some(Role::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

roles! {
    Text => "text": "Ordinary text.",
    Dim => "dim": "Secondary text: hints, timestamps.",
    Border => "border": "Pane borders.",
    BorderFocused => "border_focused": "The border of the focused pane.",
    Title => "title": "Pane titles.",
    TitleFocused => "title_focused": "The title of the focused pane.",
    StatusBar => "status_bar": "The status bar.",
    StatusKey => "status_key": "Key hints and the mode badge in the status bar.",
    StatusAccent => "status_accent": "Highlighted facts in the status bar (model, tokens).",
    StatusWarning => "status_warning": "Warnings in the status bar (unsaved note, running agent).",
    User => "user": "The person's messages.",
    Assistant => "assistant": "The agent's replies.",
    Tool => "tool": "Tool call summaries.",
    ToolError => "tool_error": "Failed or refused tool calls.",
    System => "system": "System notes in the transcript.",
    Error => "error": "Errors.",
    Notice => "notice": "Notices (retries, limits).",
    DiffAdded => "diff_added": "Added lines in a diff.",
    DiffRemoved => "diff_removed": "Removed lines in a diff.",
    DiffContext => "diff_context": "Unchanged lines around a change.",
    DiffHunkHeader => "diff_hunk_header": "`@@` hunk headers.",
    DiffGutter => "diff_gutter": "Line numbers beside a diff.",
    DiffAddedWord => "diff_added_word": "The words that changed inside an added line.",
    DiffRemovedWord => "diff_removed_word": "The words that changed inside a removed line.",
    Selection => "selection": "Selected text.",
    CursorLine => "cursor_line": "The line the cursor is on.",
    Input => "input": "The chat input.",
    Placeholder => "placeholder": "Placeholder text in empty inputs.",
    Attachment => "attachment": "Chips of images attached to a message.",
    BannerBorder => "banner_border": "The permission banner's border.",
    BannerTitle => "banner_title": "The permission banner's title.",
    Button => "button": "Choices in a banner.",
    ButtonFocused => "button_focused": "The focused choice.",
    HunkSelected => "hunk_selected": "The hunk the banner points at.",
    HunkRejected => "hunk_rejected": "A hunk toggled off.",
    MdHeading => "md_heading": "Markdown headings.",
    MdCode => "md_code": "Inline code.",
    MdCodeBlock => "md_code_block": "Fenced code blocks.",
    MdLink => "md_link": "Links and wikilinks.",
    MdLinkUnresolved => "md_link_unresolved": "[[Wikilinks]] to notes that do not exist (yet).",
    MdTag => "md_tag": "#tags.",
    MdEmphasis => "md_emphasis": "*Emphasis*.",
    MdStrong => "md_strong": "**Strong** text.",
    MdQuote => "md_quote": "Block quotes.",
    MdListMarker => "md_list_marker": "List bullets and numbers.",
    CodeKeyword => "code_keyword": "Keywords in highlighted code.",
    CodeString => "code_string": "String literals in highlighted code.",
    CodeComment => "code_comment": "Comments in highlighted code.",
    CodeConstant => "code_constant": "Numbers and built-in constants in highlighted code.",
    CodeFunction => "code_function": "Function names in highlighted code.",
    CodeType => "code_type": "Type names in highlighted code.",
    PickerMatch => "picker_match": "Matched characters in the note picker.",
    PickerSelected => "picker_selected": "The selected row of a list.",
    Scrollbar => "scrollbar": "Scroll bars.",
    FilesHeader => "files_header": "Section headings in the file pane (Recent, Notes).",
    FilesFolder => "files_folder": "Folders (and their ▸/▾ marks) in the file pane.",
    FilesActive => "files_active": "The note open in the editor, in the file pane.",
    ChartInput => "chart_input": "Input tokens in the usage chart.",
    ChartOutput => "chart_output": "Output tokens in the usage chart.",
    ChartCache => "chart_cache": "Cached tokens in the usage chart.",
}

/// A theme ready to use.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    styles: BTreeMap<Role, Style>,
}

/// One role as a theme file writes it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underlined: bool,
    #[serde(default)]
    dim: bool,
    #[serde(default)]
    reversed: bool,
    #[serde(default)]
    crossed_out: bool,
}

/// A theme file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    version: Option<u32>,
    /// The theme's own name; informative (the file name is what selects a theme).
    #[allow(dead_code)]
    name: Option<String>,
    inherits: Option<String>,
    #[serde(default)]
    palette: BTreeMap<String, String>,
    #[serde(default)]
    roles: BTreeMap<String, StyleSpec>,
}

/// A problem with a theme file; the theme falls back and the message is shown on screen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {problem}")]
pub struct ThemeError {
    pub file: String,
    pub problem: String,
}

impl Theme {
    /// The border and title roles of a pane, focused or not.
    pub fn pane_roles(focused: bool) -> (Role, Role) {
        if focused {
            (Role::BorderFocused, Role::TitleFocused)
        } else {
            (Role::Border, Role::Title)
        }
    }

    /// A pane's rounded border with `title` on it, in the focused or unfocused roles.
    pub fn pane_block(&self, title: impl Into<String>, focused: bool) -> Block<'static> {
        let (border, title_role) = Self::pane_roles(focused);
        Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(self.style(border))
            .title(Span::styled(title.into(), self.style(title_role)))
    }

    /// The theme called `name`: the built-in one, patched by `user_dir/NAME.toml` when that
    /// exists (or only the user's file, for a theme of their own). Problems are returned beside a
    /// usable theme: the built-in `dark` when nothing else can be read.
    pub fn load(name: &str, user_dir: Option<&Path>) -> (Theme, Vec<ThemeError>) {
        let mut errors = Vec::new();
        match resolve(name, user_dir, &mut errors, 0) {
            Some((palette, roles)) => match build(name, &palette, &roles) {
                Ok(theme) => (theme, errors),
                Err(e) => {
                    errors.push(e);
                    (Theme::builtin_dark(), errors)
                }
            },
            None => (Theme::builtin_dark(), errors),
        }
    }

    /// The built-in dark theme (it always parses: a test checks every built-in theme).
    pub fn builtin_dark() -> Theme {
        let mut errors = Vec::new();
        resolve("dark", None, &mut errors, 0)
            .and_then(|(palette, roles)| build("dark", &palette, &roles).ok())
            .unwrap_or_else(|| Theme {
                name: "dark".into(),
                styles: BTreeMap::new(),
            })
    }

    /// No colours at all, for `NO_COLOR`: roles keep only what is needed to tell things apart
    /// (bold, italic, reversed for the selection and the focused choice).
    pub fn monochrome() -> Theme {
        let styles = Role::ALL
            .iter()
            .map(|&role| {
                let style = match role {
                    Role::TitleFocused
                    | Role::User
                    | Role::Error
                    | Role::BannerTitle
                    | Role::MdHeading
                    | Role::MdStrong
                    | Role::HunkSelected
                    | Role::PickerMatch
                    | Role::FilesHeader
                    | Role::FilesActive
                    | Role::StatusWarning => Style::new().add_modifier(Modifier::BOLD),
                    Role::Selection
                    | Role::ButtonFocused
                    | Role::PickerSelected
                    | Role::StatusKey
                    | Role::StatusBar => Style::new().add_modifier(Modifier::REVERSED),
                    Role::System
                    | Role::Placeholder
                    | Role::MdEmphasis
                    | Role::MdQuote
                    | Role::CodeComment => Style::new().add_modifier(Modifier::ITALIC),
                    Role::HunkRejected => Style::new().add_modifier(Modifier::CROSSED_OUT),
                    Role::DiffAddedWord => Style::new().add_modifier(Modifier::REVERSED),
                    Role::DiffRemovedWord => Style::new()
                        .add_modifier(Modifier::REVERSED)
                        .add_modifier(Modifier::CROSSED_OUT),
                    Role::MdLink => Style::new().add_modifier(Modifier::UNDERLINED),
                    Role::MdLinkUnresolved => Style::new()
                        .add_modifier(Modifier::UNDERLINED)
                        .add_modifier(Modifier::ITALIC),
                    _ => Style::new(),
                };
                (role, style)
            })
            .collect();
        Theme {
            name: "no-color".into(),
            styles,
        }
    }

    /// How `role` looks.
    pub fn style(&self, role: Role) -> Style {
        self.styles.get(&role).copied().unwrap_or_default()
    }

    /// The names of the built-in themes.
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|(name, _)| *name)
    }
}

type Parts = (BTreeMap<String, String>, BTreeMap<String, StyleSpec>);

/// The merged palette and roles of theme `name` (its `inherits` chain first).
fn resolve(
    name: &str,
    user_dir: Option<&Path>,
    errors: &mut Vec<ThemeError>,
    depth: usize,
) -> Option<Parts> {
    if depth > 8 {
        errors.push(ThemeError {
            file: format!("theme `{name}`"),
            problem:
                "`inherits` goes more than 8 themes deep (a cycle?); using the built-in dark theme"
                    .into(),
        });
        return None;
    }
    let builtin = BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(n, text)| parse(&format!("built-in theme {n}"), text, errors));
    let user_path = user_dir.map(|d| d.join(format!("{name}.toml")));
    let user = user_path.as_ref().filter(|p| p.is_file()).and_then(|p| {
        let shown = p.display().to_string();
        match std::fs::read_to_string(p) {
            Ok(text) => parse(&shown, &text, errors),
            Err(e) => {
                errors.push(ThemeError {
                    file: shown,
                    problem: format!("cannot be read ({e}); using the built-in theme"),
                });
                None
            }
        }
    });
    if builtin.is_none() && user.is_none() {
        if user_path.as_ref().is_some_and(|p| p.is_file()) {
            return None;
        }
        errors.push(ThemeError {
            file: format!("theme `{name}`"),
            problem: format!(
                "there is no such theme (built in: {}); using dark",
                BUILTIN
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
        return None;
    }
    let inherits = user
        .as_ref()
        .and_then(|u| u.inherits.clone())
        .or_else(|| builtin.as_ref().and_then(|b| b.inherits.clone()));
    let (mut palette, mut roles) = match inherits {
        Some(parent) if parent != name => resolve(&parent, user_dir, errors, depth + 1)?,
        _ => (BTreeMap::new(), BTreeMap::new()),
    };
    for file in [builtin, user].into_iter().flatten() {
        palette.extend(file.palette);
        roles.extend(file.roles);
    }
    Some((palette, roles))
}

fn parse(shown: &str, text: &str, errors: &mut Vec<ThemeError>) -> Option<ThemeFile> {
    match toml::from_str::<ThemeFile>(text) {
        Ok(file) => match file.version {
            Some(THEME_VERSION) => Some(file),
            Some(v) => {
                errors.push(ThemeError {
                    file: shown.to_string(),
                    problem: format!(
                        "key `version`: {v} is not a version this vaultchat reads (write `version = {THEME_VERSION}`); file ignored"
                    ),
                });
                None
            }
            None => {
                errors.push(ThemeError {
                    file: shown.to_string(),
                    problem: format!(
                        "key `version` is missing (write `version = {THEME_VERSION}` at the top); file ignored"
                    ),
                });
                None
            }
        },
        Err(e) => {
            errors.push(ThemeError {
                file: shown.to_string(),
                problem: format!("{}; file ignored", e.message().trim()),
            });
            None
        }
    }
}

/// Turn the merged palette and roles into styles.
fn build(
    name: &str,
    palette: &BTreeMap<String, String>,
    roles: &BTreeMap<String, StyleSpec>,
) -> Result<Theme, ThemeError> {
    let problem = |problem: String| ThemeError {
        file: format!("theme `{name}`"),
        problem,
    };
    let colour = |key: &str, value: &str| -> Result<Color, ThemeError> {
        let value = palette.get(value).map(String::as_str).unwrap_or(value);
        parse_colour(value).ok_or_else(|| {
            problem(format!(
                "key `{key}`: `{value}` is neither a palette name nor a colour like \"#7aa2f7\""
            ))
        })
    };
    let mut styles = BTreeMap::new();
    for (key, spec) in roles {
        let Some(role) = Role::from_name(key) else {
            return Err(problem(format!(
                "key `roles.{key}` is not a role (roles: {})",
                Role::ALL
                    .iter()
                    .map(|r| r.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let mut style = Style::new();
        if let Some(fg) = &spec.fg {
            style = style.fg(colour(&format!("roles.{key}.fg"), fg)?);
        }
        if let Some(bg) = &spec.bg {
            style = style.bg(colour(&format!("roles.{key}.bg"), bg)?);
        }
        for (on, modifier) in [
            (spec.bold, Modifier::BOLD),
            (spec.italic, Modifier::ITALIC),
            (spec.underlined, Modifier::UNDERLINED),
            (spec.dim, Modifier::DIM),
            (spec.reversed, Modifier::REVERSED),
            (spec.crossed_out, Modifier::CROSSED_OUT),
        ] {
            if on {
                style = style.add_modifier(modifier);
            }
        }
        styles.insert(role, style);
    }
    Ok(Theme {
        name: name.to_string(),
        styles,
    })
}

/// `#rrggbb`, or one of the 16 ANSI colour names.
fn parse_colour(value: &str) -> Option<Color> {
    if let Some(hex) = value.strip_prefix('#') {
        if hex.len() != 6 {
            return None;
        }
        let n = u32::from_str_radix(hex, 16).ok()?;
        return Some(Color::Rgb((n >> 16) as u8, (n >> 8) as u8, n as u8));
    }
    Some(match value {
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" => Color::Gray,
        "dark_gray" => Color::DarkGray,
        "light_red" => Color::LightRed,
        "light_green" => Color::LightGreen,
        "light_yellow" => Color::LightYellow,
        "light_blue" => Color::LightBlue,
        "light_magenta" => Color::LightMagenta,
        "light_cyan" => Color::LightCyan,
        "white" => Color::White,
        "reset" => Color::Reset,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_theme_loads_without_errors_and_styles_every_role() {
        for name in Theme::builtin_names() {
            let (theme, errors) = Theme::load(name, None);
            assert!(errors.is_empty(), "{name}: {errors:?}");
            assert_eq!(theme.name, name);
            for role in Role::ALL {
                assert!(
                    theme.styles.contains_key(role),
                    "{name} has no style for {}",
                    role.name()
                );
            }
        }
    }

    #[test]
    fn added_and_removed_lines_differ_in_every_theme() {
        for name in Theme::builtin_names() {
            let (theme, _) = Theme::load(name, None);
            assert_ne!(theme.style(Role::DiffAdded), theme.style(Role::DiffRemoved));
        }
        let mono = Theme::monochrome();
        assert_eq!(mono.style(Role::DiffAdded).fg, None);
    }

    #[test]
    fn changed_words_stand_out_from_their_line_in_every_theme() {
        let mut themes: Vec<Theme> = Theme::builtin_names()
            .map(|name| Theme::load(name, None).0)
            .collect();
        themes.push(Theme::monochrome());
        for theme in themes {
            for (line, word) in [
                (Role::DiffAdded, Role::DiffAddedWord),
                (Role::DiffRemoved, Role::DiffRemovedWord),
            ] {
                assert_ne!(theme.style(line), theme.style(word), "{}", theme.name);
            }
            assert_ne!(
                theme.style(Role::DiffAddedWord),
                theme.style(Role::DiffRemovedWord),
                "{}",
                theme.name
            );
        }
    }

    #[test]
    fn light_inherits_roles_from_dark_with_its_own_palette() {
        let (light, _) = Theme::load("light", None);
        let (dark, _) = Theme::load("dark", None);
        assert_ne!(light.style(Role::Text), dark.style(Role::Text));
        assert_eq!(
            light.style(Role::DiffAdded).add_modifier,
            dark.style(Role::DiffAdded).add_modifier
        );
    }

    #[test]
    fn a_user_file_patches_the_builtin_theme() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("dark.toml"),
            "version = 1\n[palette]\ngreen = \"#00ff00\"\n[roles]\nuser = { fg = \"light_red\" }\n",
        )
        .unwrap();
        let (theme, errors) = Theme::load("dark", Some(dir.path()));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(theme.style(Role::DiffAdded).fg, Some(Color::Rgb(0, 255, 0)));
        assert_eq!(theme.style(Role::User).fg, Some(Color::LightRed));
        // Untouched roles keep the built-in look.
        assert_eq!(
            theme.style(Role::Border),
            Theme::builtin_dark().style(Role::Border)
        );
    }

    #[test]
    fn broken_files_name_the_file_and_key_and_fall_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mine.toml"),
            "version = 1\ninherits = \"dark\"\n[roles]\nuser = { fg = \"nope\" }\n",
        )
        .unwrap();
        let (theme, errors) = Theme::load("mine", Some(dir.path()));
        assert_eq!(theme, Theme::builtin_dark());
        assert!(errors[0].problem.contains("roles.user.fg"), "{errors:?}");

        std::fs::write(dir.path().join("v2.toml"), "version = 2\n").unwrap();
        let (_, errors) = Theme::load("v2", Some(dir.path()));
        assert!(errors[0].file.ends_with("v2.toml"));
        assert!(errors[0].problem.contains("version"));

        let (theme, errors) = Theme::load("nosuch", None);
        assert_eq!(theme.name, "dark");
        assert!(errors[0].problem.contains("no such theme"));

        std::fs::write(dir.path().join("a.toml"), "version = 1\ninherits = \"b\"\n").unwrap();
        std::fs::write(dir.path().join("b.toml"), "version = 1\ninherits = \"a\"\n").unwrap();
        let (theme, errors) = Theme::load("a", Some(dir.path()));
        assert_eq!(theme.name, "dark");
        assert!(
            errors.iter().any(|e| e.problem.contains("cycle")),
            "{errors:?}"
        );
    }

    #[test]
    fn colours_parse() {
        assert_eq!(parse_colour("#7aa2f7"), Some(Color::Rgb(0x7a, 0xa2, 0xf7)));
        assert_eq!(parse_colour("red"), Some(Color::Red));
        assert_eq!(parse_colour("#12345"), None);
        assert_eq!(parse_colour("purple-ish"), None);
    }
}
