//! Syntax highlighting of code (the chat's fenced blocks; the editor may use it later).
//!
//! syntect only classifies tokens here: its scopes (`keyword`, `string.quoted`, `comment.line`, …)
//! are mapped onto theme roles, so code takes its colours from the active theme like everything
//! else on screen, and no syntect colour theme is ever loaded. The syntax definitions are loaded
//! on first use (a `OnceLock`), so start-up does not pay for them.

use crate::tui::theme::{Role, Theme};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};
use syntect::easy::ScopeRangeIterator;
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};
use xxhash_rust::xxh3::Xxh3;

/// Columns between tab stops when a tab in code is expanded to spaces (the terminal cannot be
/// trusted to draw a tab in a cell grid).
const TAB_WIDTH: usize = 4;

/// Lines longer than this (in bytes) end highlighting for the rest of the block: syntect's
/// regexes can take very long on minified one-line files, and a frame must never wait on them.
const MAX_HIGHLIGHT_LINE: usize = 2_000;

/// Highlighting stops after this many bytes of a block (the rest is drawn plain), for the same
/// reason: the cost of one block must stay bounded.
const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;

static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
static CLASSES: OnceLock<Vec<(Scope, Class)>> = OnceLock::new();

/// What a scope prefix says about a token.
#[derive(Debug, Clone, Copy)]
enum Class {
    /// Drawn in this role.
    Role(Role),
    /// Plain code (operators and the like would be noise in colour).
    Plain,
    /// `storage.type` alone: some grammars (Rust's, JavaScript's) give declaration words like
    /// `let` and `const` the same scope as type names like `i32`, so the word decides.
    StorageType,
}

/// Declaration words that grammars scope as bare `storage.type`.
const DECLARATION_WORDS: &[&str] = &["let", "const", "var", "val", "mut", "static", "type"];

/// syntect's bundled syntax definitions (parsed once, on first use).
fn syntaxes() -> &'static SyntaxSet {
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Scope prefixes and what a token whose innermost matching scope starts with them is. The
/// first matching prefix wins, so the specific ones come before the general ones.
fn classes() -> &'static [(Scope, Class)] {
    CLASSES.get_or_init(|| {
        let keyword = Class::Role(Role::CodeKeyword);
        let function = Class::Role(Role::CodeFunction);
        let kind = Class::Role(Role::CodeType);
        [
            ("comment", Class::Role(Role::CodeComment)),
            ("string", Class::Role(Role::CodeString)),
            ("constant", Class::Role(Role::CodeConstant)),
            ("entity.name.function", function),
            ("entity.name.tag", keyword),
            ("entity.name", kind),
            ("entity.other.inherited-class", kind),
            ("entity.other.attribute-name", function),
            ("support.function", function),
            ("variable.function", function),
            ("support.type", kind),
            ("support.class", kind),
            ("storage.type.function", keyword),
            ("storage.type.class", keyword),
            ("storage.type.struct", keyword),
            ("storage.type.enum", keyword),
            ("storage.type.impl", keyword),
            ("storage.type.trait", keyword),
            ("storage.type.union", keyword),
            ("storage.type.interface", keyword),
            ("storage.type.module", keyword),
            ("storage.type.namespace", keyword),
            ("storage.type", Class::StorageType),
            ("storage", keyword),
            ("keyword.operator", Class::Plain),
            ("keyword", keyword),
            ("variable.language", keyword),
            ("markup.heading", keyword),
        ]
        .into_iter()
        .filter_map(|(prefix, class)| Scope::new(prefix).ok().map(|scope| (scope, class)))
        .collect()
    })
}

/// The role of `token` with this scope stack, or `None` for plain code.
fn classify(stack: &ScopeStack, token: &str) -> Option<Role> {
    let classes = classes();
    for scope in stack.as_slice().iter().rev() {
        if let Some((_, class)) = classes
            .iter()
            .find(|(prefix, _)| prefix.is_prefix_of(*scope))
        {
            return match class {
                Class::Role(role) => Some(*role),
                Class::Plain => None,
                Class::StorageType if DECLARATION_WORDS.contains(&token.trim()) => {
                    Some(Role::CodeKeyword)
                }
                Class::StorageType => Some(Role::CodeType),
            };
        }
    }
    None
}

/// The syntax for a fence's info string (`rust`, `py`, `sh`, `rust,ignore`, `http id=login`).
fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    let token = lang
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
        .trim_start_matches('.')
        .to_ascii_lowercase();
    if token.is_empty() {
        return None;
    }
    // Common names the bundled definitions do not know by these words.
    let token = match token.as_str() {
        "shell" | "console" | "zsh" | "sh" | "shellscript" => "bash",
        "c++" => "cpp",
        "ts" | "typescript" | "tsx" | "jsx" | "javascript" | "node" => "js",
        "jsonc" | "json5" => "json",
        "yml" => "yaml",
        "py3" | "python3" => "py",
        "golang" => "go",
        "md" => "markdown",
        other => other,
    };
    let set = syntaxes();
    set.find_syntax_by_token(token)
}

/// Highlight `code` written in `lang` (a fence's info string): one line per line of code, every
/// span in `Role::MdCodeBlock` patched with the token's role. Tabs become spaces. An unknown or
/// empty language gives plain `Role::MdCodeBlock` lines without loading syntect at all. The same
/// block asked for again (a re-wrap at a new width) comes from a memo instead of syntect.
pub fn highlight_code(code: &str, lang: &str, theme: &Theme) -> Vec<Line<'static>> {
    highlight_with(code, lang, theme, Reuse::Memo)
}

/// How much earlier work a call may reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// A finished block: served from the memo when it was seen before, and kept there.
    Memo,
    /// A block still streaming in: it continues from the lines the last, shorter version of it
    /// had complete, and is not kept (each version would be kept only to be replaced).
    Resume,
    /// Nothing: highlighted from scratch (the benchmark's uncached baseline).
    Nothing,
}

/// Highlight with the given reuse of earlier work; the result is the same in every case.
pub(crate) fn highlight_with(
    code: &str,
    lang: &str,
    theme: &Theme,
    reuse: Reuse,
) -> Vec<Line<'static>> {
    let base = theme.style(Role::MdCodeBlock);
    // An empty language must not load the syntax set: plain text needs no parser.
    let syntax = if lang.trim().is_empty() {
        None
    } else {
        syntax_for(lang)
    };
    let Some(syntax) = syntax else {
        let code = code.strip_suffix('\n').unwrap_or(code);
        return code
            .split('\n')
            .map(|line| plain_line(line, base))
            .collect();
    };
    match reuse {
        Reuse::Nothing => Highlighter::new(syntax).block(code, theme),
        Reuse::Memo => {
            let key = memo_key(code, lang);
            if let Some(lines) = with_memo(theme, |memo| memo.get(key, code, lang)) {
                return lines;
            }
            let lines = Highlighter::new(syntax).block(code, theme);
            with_memo(theme, |memo| memo.insert(key, code, lang, &lines));
            lines
        }
        Reuse::Resume => {
            let resumed = with_memo(theme, |memo| {
                memo.checkpoint
                    .take()
                    .filter(|c| c.lang == lang && code.starts_with(&c.code))
            });
            let mut checkpoint = resumed.unwrap_or_else(|| Checkpoint {
                lang: lang.to_string(),
                code: String::new(),
                highlighter: Highlighter::new(syntax),
                lines: Vec::new(),
            });
            // Complete lines move the checkpoint on; a last, unfinished line is highlighted
            // on a copy, since its end is still to come.
            let rest = &code[checkpoint.code.len()..];
            let complete = rest.rfind('\n').map_or(0, |i| i + 1);
            for line in rest[..complete].split_terminator('\n') {
                let line = checkpoint.highlighter.line(line, theme);
                checkpoint.lines.push(line);
            }
            checkpoint.code.push_str(&rest[..complete]);
            let mut lines = checkpoint.lines.clone();
            let unfinished = &rest[complete..];
            if !unfinished.is_empty() || lines.is_empty() {
                lines.push(checkpoint.highlighter.clone().line(unfinished, theme));
            }
            with_memo(theme, |memo| memo.checkpoint = Some(checkpoint));
            lines
        }
    }
}

/// Highlights one block line by line.
#[derive(Clone)]
struct Highlighter {
    state: ParseState,
    stack: ScopeStack,
    /// Bytes that may still be highlighted in this block.
    budget: usize,
    /// False once a line was too long or did not parse: the rest of the block is plain.
    highlighting: bool,
    with_newline: String,
}

impl Highlighter {
    fn new(syntax: &SyntaxReference) -> Self {
        Highlighter {
            state: ParseState::new(syntax),
            stack: ScopeStack::new(),
            budget: MAX_HIGHLIGHT_BYTES,
            highlighting: true,
            with_newline: String::new(),
        }
    }

    /// Every line of a block (a last line break ends the last line; it starts no new one).
    fn block(mut self, code: &str, theme: &Theme) -> Vec<Line<'static>> {
        let code = code.strip_suffix('\n').unwrap_or(code);
        code.split('\n')
            .map(|line| self.line(line, theme))
            .collect()
    }

    /// The next line of the block (without its line break).
    fn line(&mut self, line: &str, theme: &Theme) -> Line<'static> {
        let base = theme.style(Role::MdCodeBlock);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if !self.highlighting || line.len() > MAX_HIGHLIGHT_LINE || line.len() > self.budget {
            self.highlighting = false;
            return plain_line(line, base);
        }
        self.budget -= line.len();
        // The "newlines" syntax set expects each line with its line ending.
        self.with_newline.clear();
        self.with_newline.push_str(line);
        self.with_newline.push('\n');
        let Ok(ops) = self.state.parse_line(&self.with_newline, syntaxes()) else {
            self.highlighting = false;
            return plain_line(line, base);
        };
        let mut builder = LineBuilder::new();
        for (range, op) in ScopeRangeIterator::new(&ops, &self.with_newline) {
            if self.stack.apply(op).is_err() {
                self.highlighting = false;
            }
            let end = range.end.min(line.len());
            if range.start >= end {
                continue;
            }
            let token = &line[range.start..end];
            let style = match classify(&self.stack, token) {
                Some(role) => base.patch(theme.style(role)),
                None => base,
            };
            builder.push(token, style);
        }
        builder.finish()
    }
}

/// Highlighted lines kept across calls (cleared when the theme changes or it grows too big).
struct Memo {
    theme: Theme,
    blocks: HashMap<u64, MemoBlock>,
    /// Lines held in `blocks`.
    lines: usize,
    /// Where the block that is streaming in got to.
    checkpoint: Option<Checkpoint>,
}

struct MemoBlock {
    code: String,
    lang: String,
    lines: Vec<Line<'static>>,
}

struct Checkpoint {
    lang: String,
    /// The complete lines highlighted so far, with their line breaks.
    code: String,
    highlighter: Highlighter,
    lines: Vec<Line<'static>>,
}

/// The most lines the memo holds before it starts again (a few hundred replies' code).
const MEMO_LINES: usize = 50_000;

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

fn memo_key(code: &str, lang: &str) -> u64 {
    let mut hasher = Xxh3::new();
    hasher.update(lang.as_bytes());
    hasher.update(&[0]);
    hasher.update(code.as_bytes());
    hasher.digest()
}

/// Run `f` on the memo for `theme` (a memo of another theme is dropped first).
fn with_memo<T>(theme: &Theme, f: impl FnOnce(&mut Memo) -> T) -> T {
    // A panic elsewhere while the lock was held leaves a memo that is still consistent
    // enough to use: every change to it is a single insert or replace.
    let mut guard = MEMO.lock().unwrap_or_else(PoisonError::into_inner);
    let memo = match &mut *guard {
        Some(memo) if memo.theme == *theme => memo,
        slot => slot.insert(Memo {
            theme: theme.clone(),
            blocks: HashMap::new(),
            lines: 0,
            checkpoint: None,
        }),
    };
    f(memo)
}

impl Memo {
    fn get(&self, key: u64, code: &str, lang: &str) -> Option<Vec<Line<'static>>> {
        self.blocks
            .get(&key)
            .filter(|b| b.code == code && b.lang == lang)
            .map(|b| b.lines.clone())
    }

    fn insert(&mut self, key: u64, code: &str, lang: &str, lines: &[Line<'static>]) {
        if self.lines + lines.len() > MEMO_LINES {
            self.blocks.clear();
            self.lines = 0;
        }
        self.lines += lines.len();
        let old = self.blocks.insert(
            key,
            MemoBlock {
                code: code.to_string(),
                lang: lang.to_string(),
                lines: lines.to_vec(),
            },
        );
        if let Some(old) = old {
            self.lines -= old.lines.len();
        }
    }
}

/// One line of code without highlighting.
fn plain_line(line: &str, style: Style) -> Line<'static> {
    let mut builder = LineBuilder::new();
    builder.push(line.strip_suffix('\r').unwrap_or(line), style);
    builder.finish()
}

/// Collects the pieces of one line, expanding tabs and merging neighbours of the same style.
struct LineBuilder {
    spans: Vec<Span<'static>>,
    column: usize,
}

impl LineBuilder {
    fn new() -> Self {
        LineBuilder {
            spans: Vec::new(),
            column: 0,
        }
    }

    fn push(&mut self, text: &str, style: Style) {
        let mut piece = String::with_capacity(text.len());
        for c in text.chars() {
            if c == '\t' {
                let spaces = TAB_WIDTH - self.column % TAB_WIDTH;
                piece.extend(std::iter::repeat_n(' ', spaces));
                self.column += spaces;
            } else if c.is_control() {
                // Control characters would corrupt the terminal; they are not code anyone reads.
                continue;
            } else {
                piece.push(c);
                // Columns only matter for tab stops, which code indents with ASCII before them.
                self.column += 1;
            }
        }
        if piece.is_empty() {
            return;
        }
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(&piece),
            _ => self.spans.push(Span::styled(piece, style)),
        }
    }

    fn finish(self) -> Line<'static> {
        Line::from(self.spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> Theme {
        Theme::builtin_dark()
    }

    fn style_of(lines: &[Line<'_>], token: &str) -> Option<Style> {
        lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .find(|s| s.content.contains(token))
            .map(|s| s.style)
    }

    #[test]
    fn rust_tokens_take_their_roles_over_the_code_block_style() {
        let theme = theme();
        let base = theme.style(Role::MdCodeBlock);
        let lines = highlight_code(
            "fn main() {\n    // greet\n    let s = \"hi\";\n    let n: i32 = 42;\n}\n",
            "rust",
            &theme,
        );
        assert_eq!(lines.len(), 5, "the trailing newline adds no line");
        assert_eq!(
            style_of(&lines, "fn"),
            Some(base.patch(theme.style(Role::CodeKeyword)))
        );
        assert_eq!(
            style_of(&lines, "// greet"),
            Some(base.patch(theme.style(Role::CodeComment)))
        );
        assert_eq!(
            style_of(&lines, "hi"),
            Some(base.patch(theme.style(Role::CodeString)))
        );
        assert_eq!(
            style_of(&lines, "42"),
            Some(base.patch(theme.style(Role::CodeConstant)))
        );
        assert_eq!(
            style_of(&lines, "main"),
            Some(base.patch(theme.style(Role::CodeFunction)))
        );
        assert_eq!(
            style_of(&lines, "let"),
            Some(base.patch(theme.style(Role::CodeKeyword)))
        );
        assert_eq!(
            style_of(&lines, "i32"),
            Some(base.patch(theme.style(Role::CodeType)))
        );
        assert_eq!(style_of(&lines, "="), Some(base), "operators stay plain");
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text[2], "    let s = \"hi\";");
    }

    #[test]
    fn python_declarations_are_keywords_and_classes_types() {
        let theme = theme();
        let base = theme.style(Role::MdCodeBlock);
        let lines = highlight_code(
            "def f(x):\n    pass\nclass A(B):\n    pass\n",
            "python",
            &theme,
        );
        assert_eq!(
            style_of(&lines, "def"),
            Some(base.patch(theme.style(Role::CodeKeyword)))
        );
        assert_eq!(
            style_of(&lines, "A"),
            Some(base.patch(theme.style(Role::CodeType)))
        );
    }

    #[test]
    fn memo_resume_and_fresh_give_the_same_lines() {
        let theme = theme();
        let code = "fn a() {\n    let s = \"multi\n line\";\n}\n// done\n";
        let fresh = highlight_with(code, "rust", &theme, Reuse::Nothing);
        assert_eq!(highlight_with(code, "rust", &theme, Reuse::Memo), fresh);
        assert_eq!(
            highlight_with(code, "rust", &theme, Reuse::Memo),
            fresh,
            "from the memo"
        );
        // Streaming: every prefix, resumed from the previous one, matches a fresh highlight of
        // that prefix (the string that spans two lines keeps its state across the checkpoint).
        for end in (0..=code.len()).filter(|&i| code.is_char_boundary(i)) {
            let prefix = &code[..end];
            assert_eq!(
                highlight_with(prefix, "rust", &theme, Reuse::Resume),
                highlight_with(prefix, "rust", &theme, Reuse::Nothing),
                "prefix {prefix:?}"
            );
        }
    }

    #[test]
    fn the_memo_follows_the_theme() {
        let dark = theme();
        let (light, _) = Theme::load("light", None);
        let code = "let x = 1;\n";
        let on_dark = highlight_code(code, "rust", &dark);
        let on_light = highlight_code(code, "rust", &light);
        assert_ne!(on_dark, on_light);
        assert_eq!(
            on_light,
            highlight_with(code, "rust", &light, Reuse::Nothing)
        );
    }

    #[test]
    fn unknown_and_empty_languages_are_plain_code_block_lines() {
        let theme = theme();
        let base = theme.style(Role::MdCodeBlock);
        for lang in ["", "no-such-language", "   "] {
            let lines = highlight_code("a = 1\nb = 2", lang, &theme);
            assert_eq!(lines.len(), 2);
            assert_eq!(lines[0].to_string(), "a = 1");
            for span in lines.iter().flat_map(|l| l.spans.iter()) {
                assert_eq!(span.style, base, "{lang:?}");
            }
        }
    }

    #[test]
    fn info_strings_and_aliases_find_syntaxes() {
        assert!(syntax_for("rust,ignore").is_some());
        assert!(syntax_for("python {.class}").is_some());
        assert!(syntax_for("sh").is_some());
        assert!(syntax_for("Shell").is_some());
        assert!(syntax_for("ts").is_some());
        assert!(syntax_for("yml").is_some());
        assert!(syntax_for("klingon").is_none());
        assert!(syntax_for("").is_none());
    }

    #[test]
    fn tabs_expand_to_tab_stops_and_control_characters_vanish() {
        let lines = highlight_code("\tx\n ab\tc\u{7}d", "", &theme());
        assert_eq!(lines[0].to_string(), "    x");
        assert_eq!(lines[1].to_string(), " ab cd");
    }

    #[test]
    fn very_long_lines_stop_highlighting_but_keep_the_text() {
        let theme = theme();
        let long = format!("let s = \"{}\";", "x".repeat(MAX_HIGHLIGHT_LINE));
        let code = format!("{long}\nlet n = 1;");
        let lines = highlight_code(&code, "rust", &theme);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].to_string(), long);
        let base = theme.style(Role::MdCodeBlock);
        assert!(lines[1].spans.iter().all(|s| s.style == base));
    }

    #[test]
    fn windows_line_endings_are_dropped() {
        let lines = highlight_code("a\r\nb\r\n", "rust", &theme());
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["a", "b"]);
    }
}
