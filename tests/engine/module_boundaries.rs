//! The module map of docs/architecture.md, checked against the source: each top-level module of
//! `src/` imports exactly the modules the map's drawing gives it (an import not drawn fails, and so
//! does a drawn arrow nothing uses or one that runs upward), only `tui` uses the terminal UI
//! crates, and no module touches what its "may not touch" rule forbids (the file system, SQLite,
//! HTTP, a protocol or a sibling module). The source is read as code: comments and literals are
//! blanked, `use` trees are expanded (groups, `self`, `as`), `crate::`/`super::` paths written
//! inline count as much as imports, and a name brought in by `use` (`use std::fs;` … `fs::read`)
//! is followed back to its path. A violation fails CI with the file and line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The module map, top to bottom (docs/architecture.md). A module may use only modules after it.
const LAYERS: [&str; 20] = [
    "cli",
    "tui",
    "host",
    "hooks",
    "commands",
    "agent",
    "mcp",
    "llm",
    "tools",
    "permission",
    "attach",
    "index",
    "store",
    "vault",
    "config",
    "quote",
    "protocol",
    "text",
    "id",
    "time",
];

/// Only `tui` may depend on the terminal UI crates.
const UI_CRATES: [&str; 6] = [
    "ratatui",
    "crossterm",
    "tui_textarea",
    "ratatui_textarea",
    "syntect",
    "arboard",
];

/// Paths that reach the file system. `Path` methods that stat or list (`exists()`, `read_dir()`…)
/// are found separately, by [`PATH_FS_METHODS`].
const FS_PATHS: [&str; 6] = [
    "std::fs",
    "tokio::fs",
    "std::os::unix::fs",
    "rustix",
    "tempfile",
    "tracing_appender",
];

/// `Path`/`PathBuf` methods that ask the file system; all of them take no argument.
const PATH_FS_METHODS: [&str; 9] = [
    ".exists()",
    ".try_exists()",
    ".is_file()",
    ".is_dir()",
    ".metadata()",
    ".symlink_metadata()",
    ".read_dir()",
    ".canonicalize()",
    ".read_link()",
];

/// The modules that own files: notes (`vault`), config files (`config`), the databases (`store`,
/// `index`), image attachments loaded from a path (`attach`), and the edge that opens the log file
/// and reports sizes (`cli`). Everything else goes through them.
const FS_OWNERS: [&str; 6] = ["vault", "config", "store", "index", "attach", "cli"];

/// One "may not touch" rule: `module` may not use a path that starts with any of `paths`.
struct Forbidden {
    module: &'static str,
    what: &'static str,
    paths: &'static [&'static str],
}

/// The "may not touch" column of the module map, beyond the layer order and the file system.
const FORBIDDEN: [Forbidden; 6] = [
    Forbidden {
        module: "tui",
        what: "SQLite (it goes through `store`)",
        paths: &["rusqlite"],
    },
    Forbidden {
        module: "tui",
        what: "HTTP (it goes through the agent)",
        paths: &["reqwest", "hyper", "hyper_util", "http_body_util", "axum"],
    },
    Forbidden {
        module: "llm",
        what: "the tools",
        paths: &["crate::tools"],
    },
    Forbidden {
        module: "tools",
        what: "a protocol (MCP wraps the tools)",
        paths: &["rmcp"],
    },
    Forbidden {
        module: "permission",
        what: "SQLite directly (it goes through `store`)",
        paths: &["rusqlite"],
    },
    Forbidden {
        module: "vault",
        what: "HTTP",
        paths: &["reqwest", "hyper", "hyper_util", "http_body_util"],
    },
];

/// File-system access the map forbids that the code has today: where (a `src/`-relative file
/// without `.rs`, or a folder), which kinds of access are tolerated there (a path prefix or a
/// `Path` method), and where it belongs. Anything else in those places still fails, and an entry
/// that no longer excuses anything fails too, so the list only shrinks.
const KNOWN_FS_EXCEPTIONS: [(&str, &[&str], &str); 6] = [
    (
        "tui/theme",
        &["std::fs::read_to_string", ".is_file()"],
        "reads the person's theme files: loading belongs in `config` (the config folder)",
    ),
    (
        "tui/keymap",
        &["std::fs::read_to_string", ".is_file()"],
        "reads the person's key map files: loading belongs in `config` (the config folder)",
    ),
    (
        "tools/workspace/config_files",
        &["std::fs::read_dir", ".metadata()", ".is_file()"],
        "lists and stats vault folders itself: listing belongs in `vault`",
    ),
    (
        "tools/workspace",
        &[".is_file()", ".is_dir()", ".exists()"],
        "asks whether a guarded vault path is a file or folder: a `vault` question",
    ),
    (
        "mcp/http",
        &["std::fs::File"],
        "reads /dev/urandom for the bearer token (randomness, not storage)",
    ),
    (
        "mcp/client/connection",
        &[".is_dir()"],
        "checks that a configured server's working folder exists before spawning it",
    ),
];

// ---------------------------------------------------------------------------------------------
// Reading Rust source as code

/// `text` with comments and the contents of string, byte-string, raw-string and char literals
/// replaced by spaces (line breaks kept, so offsets and line numbers stay right).
fn blank_non_code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_is_ident = i > 0 && ident(chars[i - 1]);
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if !prev_is_ident
            && (c == 'r' || (c == 'b' && next == Some('r')))
            && raw_string_hashes(&chars, i + if c == 'b' { 2 } else { 1 }).is_some()
        {
            let start = i + if c == 'b' { 2 } else { 1 };
            let hashes = raw_string_hashes(&chars, start).unwrap_or(0);
            // The prefix, the hashes and the opening quote.
            for _ in i..start + hashes + 1 {
                out.push(' ');
            }
            i = start + hashes + 1;
            while i < chars.len() {
                let closes =
                    chars[i] == '"' && (0..hashes).all(|h| chars.get(i + 1 + h) == Some(&'#'));
                if closes {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: '\n', '\'', '\u{1F600}'.
            out.push_str("  ");
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push_str("   ");
            i += 3;
        } else {
            // Code, and lifetimes ('a), which are not literals.
            out.push(c);
            i += 1;
        }
    }
    out
}

/// At `i`, `#…#"` opening a raw string: the number of `#`.
fn raw_string_hashes(chars: &[char], i: usize) -> Option<usize> {
    let hashes = chars[i.min(chars.len())..]
        .iter()
        .take_while(|c| **c == '#')
        .count();
    (chars.get(i + hashes) == Some(&'"')).then_some(hashes)
}

/// Blank every item under `#[cfg(test)]` (an inline `mod tests { … }`, a function, a `use`), so
/// rules about production code skip test code. `mod name;` under `#[cfg(test)]` is returned: that
/// whole file is test code.
fn blank_test_code(code: &str) -> (String, Vec<String>) {
    let mut out: Vec<char> = code.chars().collect();
    let mut test_files = Vec::new();
    let attr: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + attr.len() <= out.len() {
        if out[i..i + attr.len()] != attr[..] {
            i += 1;
            continue;
        }
        // The item runs to its first `;` outside braces, or to the `}` closing its first `{`.
        let start = i;
        let mut j = i + attr.len();
        let mut depth = 0usize;
        while j < out.len() {
            match out[j] {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let item: String = out[start + attr.len()..j].iter().collect();
        let words: Vec<&str> = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if item.trim_end().ends_with(';')
            && let Some(pos) = words.iter().position(|w| *w == "mod")
            && let Some(name) = words.get(pos + 1)
        {
            test_files.push((*name).to_string());
        }
        for c in &mut out[start..j] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = j;
    }
    (out.into_iter().collect(), test_files)
}

/// One path the code names, as written after expanding `use` trees: `["crate", "vault", "Vault"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PathRef {
    segments: Vec<String>,
    line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Star,
}

fn tokenize_use_tree(tree: &str) -> Vec<Token> {
    let chars: Vec<char> = tree.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(Token::Ident(word.trim_start_matches("r#").to_string()));
            continue;
        }
        match c {
            ':' if chars.get(i + 1) == Some(&':') => {
                tokens.push(Token::PathSep);
                i += 1;
            }
            '{' => tokens.push(Token::Open),
            '}' => tokens.push(Token::Close),
            ',' => tokens.push(Token::Comma),
            '*' => tokens.push(Token::Star),
            _ => {}
        }
        i += 1;
    }
    tokens
}

/// One imported path and the name it binds (`None` for a glob).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Import {
    path: Vec<String>,
    binds: Option<String>,
}

/// Expand a use tree (`crate::{a, b::{c as d, self}, e::*}`) into every path it imports.
fn expand_use_tree(tree: &str) -> Vec<Import> {
    let tokens = tokenize_use_tree(tree);
    let mut pos = 0;
    let mut out = Vec::new();
    expand_from(&tokens, &mut pos, &[], &mut out);
    out
}

fn expand_from(tokens: &[Token], pos: &mut usize, prefix: &[String], out: &mut Vec<Import>) {
    let mut path = prefix.to_vec();
    if tokens.get(*pos) == Some(&Token::PathSep) {
        *pos += 1; // a leading `::`
    }
    loop {
        match tokens.get(*pos) {
            Some(Token::Ident(word)) if word == "self" && !path.is_empty() => {
                // `a::{self}` imports `a` under its own name.
                *pos += 1;
                let binds = alias_after(tokens, pos).or_else(|| path.last().cloned());
                out.push(Import { path, binds });
                return;
            }
            Some(Token::Ident(word)) => {
                path.push(word.clone());
                *pos += 1;
                if tokens.get(*pos) == Some(&Token::PathSep) {
                    *pos += 1;
                    continue;
                }
                let binds = alias_after(tokens, pos).or_else(|| path.last().cloned());
                out.push(Import { path, binds });
                return;
            }
            Some(Token::Star) => {
                *pos += 1;
                out.push(Import { path, binds: None });
                return;
            }
            Some(Token::Open) => {
                *pos += 1;
                while *pos < tokens.len() && tokens[*pos] != Token::Close {
                    if tokens[*pos] == Token::Comma {
                        *pos += 1;
                        continue;
                    }
                    let before = *pos;
                    expand_from(tokens, pos, &path, out);
                    if *pos == before {
                        *pos += 1; // never stall on something unexpected
                    }
                }
                *pos += 1;
                return;
            }
            _ => return,
        }
    }
}

/// `as name` after a path: the name (`_` binds nothing).
fn alias_after(tokens: &[Token], pos: &mut usize) -> Option<String> {
    if tokens.get(*pos) == Some(&Token::Ident("as".into())) {
        *pos += 1;
        if let Some(Token::Ident(name)) = tokens.get(*pos) {
            *pos += 1;
            return Some(name.clone());
        }
    }
    None
}

fn line_of(code: &str, offset: usize) -> usize {
    code[..offset].matches('\n').count() + 1
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Every `use` item of `code` (blanked source): its imports and its byte range.
fn use_items(code: &str) -> Vec<(Vec<Import>, usize, std::ops::Range<usize>)> {
    let bytes = code.as_bytes();
    let mut items = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("use") {
        let at = from + found;
        from = at + 3;
        let before_ok = at == 0 || !(is_ident_byte(bytes[at - 1]) || bytes[at - 1] == b':');
        let after_ok = bytes.get(at + 3).is_some_and(|b| b.is_ascii_whitespace());
        if !before_ok || !after_ok {
            continue;
        }
        let Some(end) = code[at..].find(';') else {
            continue;
        };
        let tree = &code[at + 3..at + end];
        items.push((expand_use_tree(tree), line_of(code, at), at..at + end + 1));
        from = at + end + 1;
    }
    items
}

/// Every path written in code outside `use` items (`crate::index::Index::open`, `fs::read`,
/// `File::open`): the longest run of `ident::ident…` that is not itself the tail of a path.
fn inline_paths(code: &str) -> Vec<PathRef> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_path = is_ident_byte(bytes[i])
            && !bytes[i].is_ascii_digit()
            && (i == 0 || !(is_ident_byte(bytes[i - 1]) || bytes[i - 1] == b':'));
        if !starts_path {
            i += 1;
            continue;
        }
        let start = i;
        let mut segments = Vec::new();
        let mut j = i;
        loop {
            let seg_start = j;
            while j < bytes.len() && is_ident_byte(bytes[j]) {
                j += 1;
            }
            segments.push(code[seg_start..j].to_string());
            let sep =
                code[j..].starts_with("::") && bytes.get(j + 2).is_some_and(|b| is_ident_byte(*b));
            if !sep {
                break;
            }
            j += 2;
        }
        if segments.len() > 1 || code[j..].starts_with("::") {
            out.push(PathRef {
                segments,
                line: line_of(code, start),
            });
        }
        i = j.max(i + 1);
    }
    out
}

/// Every path a file names, with `use` aliases followed back (`use std::fs;` makes `fs::read`
/// `std::fs::read`, `use std::fs::File as F;` makes `F::open` `std::fs::File::open`).
fn paths_in(code: &str) -> Vec<PathRef> {
    let mut refs = Vec::new();
    let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut rest = code.to_string();
    for (imports, line, range) in use_items(code) {
        for import in imports {
            if let Some(name) = &import.binds
                && name != "_"
            {
                aliases.insert(name.clone(), import.path.clone());
            }
            refs.push(PathRef {
                segments: import.path,
                line,
            });
        }
        let blanks: String = code[range.clone()]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        rest.replace_range(range, &blanks);
    }
    for mut path in inline_paths(&rest) {
        let first = path.segments[0].as_str();
        if !matches!(first, "crate" | "self" | "super" | "std" | "core")
            && let Some(full) = aliases.get(first)
        {
            path.segments.splice(0..1, full.iter().cloned());
        }
        refs.push(path);
    }
    refs
}

/// The path with `super::`/`self::` resolved against the file's module path (`["tui", "views"]`
/// for `src/tui/views/mod.rs`), as a `::`-joined string starting with `crate::` for paths into
/// this crate; other paths are returned as written (an external crate or a local name). Inline
/// modules (`mod tests { use super::*; }`) are not tracked: their `super` resolves one level
/// higher than it should, which can only make a path look like a module above, never hide one.
fn resolve(path: &[String], module_path: &[String]) -> String {
    let mut here: Vec<String> = module_path.to_vec();
    let mut rest = path;
    let mut relative = false;
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                here.pop();
                relative = true;
            }
            "self" => relative = true,
            _ => break,
        }
        rest = &rest[1..];
    }
    if relative {
        let mut full = vec!["crate".to_string()];
        full.extend(here);
        full.extend(rest.iter().cloned());
        full.join("::")
    } else {
        rest.join("::")
    }
}

fn starts_with_path(path: &str, prefix: &str) -> bool {
    path == prefix || path.starts_with(&format!("{prefix}::"))
}

// ---------------------------------------------------------------------------------------------
// The source tree

struct SourceFile {
    /// `src/`-relative, without `.rs`: `tui/views/mod`.
    key: String,
    /// The top-level module: `tui`.
    top: String,
    /// The module path of the file: `["tui", "views"]`.
    module_path: Vec<String>,
    code: String,
    /// The code with `#[cfg(test)]` items blanked; empty when the whole file is test code.
    production: String,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

impl SourceFile {
    /// The file at `key` (`src/`-relative, without `.rs`) with source text `text`. Whether the
    /// whole file is test code (`#[cfg(test)] mod name;` in its parent) is decided by
    /// [`source_files`], which sees the parent.
    fn new(key: &str, text: &str) -> SourceFile {
        let mut module_path: Vec<String> = key.split('/').map(str::to_string).collect();
        if module_path.last().is_some_and(|l| l == "mod") {
            module_path.pop();
        }
        let code = blank_non_code(text);
        let (production, _) = blank_test_code(&code);
        SourceFile {
            top: module_path[0].clone(),
            key: key.to_string(),
            module_path,
            code,
            production,
        }
    }
}

fn source_files() -> Vec<SourceFile> {
    let mut paths = Vec::new();
    rust_files(&src(), &mut paths);
    paths.sort();
    let mut files: Vec<SourceFile> = paths
        .iter()
        .map(|path| {
            let rel = path.strip_prefix(src()).unwrap().with_extension("");
            SourceFile::new(
                &rel.to_string_lossy(),
                &std::fs::read_to_string(path).unwrap(),
            )
        })
        .collect();
    // Files declared as `#[cfg(test)] mod name;` are test code as a whole.
    let mut test_files = Vec::new();
    for file in &files {
        let (_, names) = blank_test_code(&file.code);
        for name in names {
            let mut child = file.module_path.clone();
            child.push(name);
            test_files.push(child);
        }
    }
    for file in &mut files {
        if test_files.contains(&file.module_path) {
            file.production.clear();
        }
    }
    files
}

/// Files of the layered modules (everything but `lib.rs` and `main.rs`).
fn layered(files: &[SourceFile]) -> impl Iterator<Item = &SourceFile> {
    files.iter().filter(|f| f.key != "lib" && f.key != "main")
}

// ---------------------------------------------------------------------------------------------
// The rules

#[test]
fn every_top_level_module_is_in_the_module_map() {
    let files = source_files();
    assert!(files.len() > 10, "src/ has {} files", files.len());
    let mut missing: Vec<String> = layered(&files)
        .map(|f| f.top.clone())
        .filter(|top| !LAYERS.contains(&top.as_str()))
        .collect();
    // And every module lib.rs declares, in case one lives somewhere unexpected (`#[path]`).
    let lib = files.iter().find(|f| f.key == "lib").expect("src/lib.rs");
    for (declared, _line) in module_declarations(&lib.code) {
        if !LAYERS.contains(&declared.as_str()) {
            missing.push(declared);
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "top-level modules missing from LAYERS (and from the module map in docs/architecture.md): {missing:?}"
    );
}

/// `mod name;` / `pub mod name;` declarations: name and line.
fn module_declarations(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(pos) = words.iter().position(|w| *w == "mod")
            && let Some(name) = words.get(pos + 1)
            && line.trim_end().ends_with(';')
        {
            out.push(((*name).to_string(), n + 1));
        }
    }
    out
}

#[test]
fn the_module_map_in_the_docs_lists_the_layers_in_order() {
    let doc = architecture_doc();
    let mapped: Vec<String> = doc
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|cell| cell.split('`').next())
        .map(|name| {
            name.trim_end_matches('/')
                .trim_end_matches(".rs")
                .to_string()
        })
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase()))
        .collect();
    assert_eq!(
        mapped, LAYERS,
        "docs/architecture.md's module map and LAYERS here must list the same modules in the same order"
    );
}

#[test]
fn ui_crates_stay_in_tui() {
    let files = source_files();
    let mut offenders = Vec::new();
    for file in layered(&files).filter(|f| f.top != "tui") {
        for path in paths_in(&file.code) {
            let resolved = resolve(&path.segments, &file.module_path);
            if let Some(krate) = UI_CRATES.iter().find(|k| starts_with_path(&resolved, k)) {
                offenders.push(format!("src/{}.rs:{} uses {krate}", file.key, path.line));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// Where a file touches the file system in production code: `(line, what)`.
fn file_system_uses(file: &SourceFile) -> Vec<(usize, String)> {
    let mut uses = Vec::new();
    for path in paths_in(&file.production) {
        let resolved = resolve(&path.segments, &file.module_path);
        if FS_PATHS.iter().any(|p| starts_with_path(&resolved, p)) {
            uses.push((path.line, resolved));
        }
    }
    for method in PATH_FS_METHODS {
        for (offset, _) in file.production.match_indices(method) {
            uses.push((line_of(&file.production, offset), method.to_string()));
        }
    }
    uses
}

/// The place of the [`KNOWN_FS_EXCEPTIONS`] entry that excuses `what` in the file `key`, if any
/// (the first entry that covers the file decides).
fn known_exception(key: &str, what: &str) -> Option<&'static str> {
    let (place, kinds, _why) = KNOWN_FS_EXCEPTIONS
        .iter()
        .find(|(place, _, _)| key == *place || key.starts_with(&format!("{place}/")))?;
    kinds
        .iter()
        .any(|kind| what.starts_with(kind))
        .then_some(*place)
}

#[test]
fn only_the_modules_that_own_files_touch_the_file_system() {
    let files = source_files();
    let mut offenders = Vec::new();
    let mut excused = Vec::new();
    for file in layered(&files).filter(|f| !FS_OWNERS.contains(&f.top.as_str())) {
        for (line, what) in file_system_uses(file) {
            if let Some(place) = known_exception(&file.key, &what) {
                excused.push(place);
                continue;
            }
            offenders.push(format!(
                "src/{}.rs:{line} ({}) touches the file system: {what}",
                file.key, file.top
            ));
        }
    }
    assert!(
        offenders.is_empty(),
        "only {FS_OWNERS:?} may touch the file system (docs/architecture.md); go through them:\n{offenders:#?}"
    );
    let stale: Vec<&str> = KNOWN_FS_EXCEPTIONS
        .iter()
        .map(|(place, _, _)| *place)
        .filter(|place| !excused.contains(place))
        .collect();
    assert!(
        stale.is_empty(),
        "these no longer touch the file system: remove them from KNOWN_FS_EXCEPTIONS: {stale:?}"
    );
}

#[test]
fn no_module_touches_what_its_rule_forbids() {
    let files = source_files();
    let mut offenders = Vec::new();
    for rule in &FORBIDDEN {
        for file in layered(&files).filter(|f| f.top == rule.module) {
            for path in paths_in(&file.code) {
                let resolved = resolve(&path.segments, &file.module_path);
                if rule.paths.iter().any(|p| starts_with_path(&resolved, p)) {
                    offenders.push(format!(
                        "src/{}.rs:{} ({}) may not touch {}: uses {resolved}",
                        file.key, path.line, rule.module, rule.what
                    ));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

// ---------------------------------------------------------------------------------------------
// The drawing: which top-level module imports which

/// Where the drawing lives, for messages.
const ARCHITECTURE: &str = "docs/architecture.md";

/// The drawing of the allowed arrows under "## Modules" in docs/architecture.md: the first
/// ```` ```text ```` block of that section, one line per module, `tui → host protocol config`.
#[derive(Debug, Default)]
struct Drawing {
    /// Each module's line, in the order drawn: the module, its line in the doc, its targets.
    rows: Vec<(String, usize, Vec<String>)>,
}

impl Drawing {
    fn arrows(&self) -> impl Iterator<Item = (&str, &str, usize)> {
        self.rows.iter().flat_map(|(from, line, targets)| {
            targets
                .iter()
                .map(move |to| (from.as_str(), to.as_str(), *line))
        })
    }

    fn has(&self, from: &str, to: &str) -> bool {
        self.arrows().any(|(f, t, _)| f == from && t == to)
    }
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == module)
}

/// Read the drawing out of the text of docs/architecture.md. Lines that are not `module → …`
/// with known module names are errors, as is a drawing that cannot be found.
fn read_drawing(doc: &str) -> Result<Drawing, Vec<String>> {
    let mut lines = doc.lines().enumerate().map(|(n, l)| (n + 1, l));
    let Some((heading, _)) = lines.find(|(_, l)| l.trim_end() == "## Modules") else {
        return Err(vec![format!(
            "{ARCHITECTURE} has no \"## Modules\" section"
        )]);
    };
    let section = lines.take_while(|(_, l)| !l.starts_with("## "));
    let mut block = section
        .skip_while(|(_, l)| l.trim_end() != "```text")
        .skip(1);
    let mut drawing = Drawing::default();
    let mut errors = Vec::new();
    let mut closed = false;
    for (n, line) in block.by_ref() {
        if line.trim_end() == "```" {
            closed = true;
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        let Some((from, targets)) = line.split_once('→') else {
            errors.push(format!(
                "{ARCHITECTURE}:{n}: not `module → modules it imports`: {line:?}"
            ));
            continue;
        };
        let from = from.trim().to_string();
        let targets: Vec<String> = targets.split_whitespace().map(str::to_string).collect();
        for name in std::iter::once(&from).chain(&targets) {
            if rank(name).is_none() {
                errors.push(format!(
                    "{ARCHITECTURE}:{n}: `{name}` is not a module of LAYERS"
                ));
            }
        }
        if drawing.rows.iter().any(|(f, _, _)| *f == from) {
            errors.push(format!("{ARCHITECTURE}:{n}: `{from}` has a second line"));
        }
        for (i, to) in targets.iter().enumerate() {
            if targets[..i].contains(to) {
                errors.push(format!(
                    "{ARCHITECTURE}:{n}: `{from} → {to}` is drawn twice"
                ));
            }
        }
        drawing.rows.push((from, n, targets));
    }
    if !closed {
        errors.push(format!(
            "{ARCHITECTURE}:{heading}: no closed ```text block (the drawing of the arrows) in \"## Modules\""
        ));
    }
    if errors.is_empty() {
        Ok(drawing)
    } else {
        Err(errors)
    }
}

/// One top-level module naming another: where, and the path as resolved.
struct ModuleUse {
    from: String,
    to: String,
    at: String,
    path: String,
}

/// Every place where a file names another top-level module, in production code (`test: false`) or
/// in its test code (`test: true`).
fn module_uses(files: &[SourceFile], test: bool) -> Vec<ModuleUse> {
    let mut uses = Vec::new();
    for file in layered(files) {
        let production: Vec<(usize, String)> = paths_in(&file.production)
            .iter()
            .map(|p| (p.line, resolve(&p.segments, &file.module_path)))
            .collect();
        let paths: Vec<(usize, String)> = if test {
            // Test code: what the whole file names, less what its production code names.
            let mut rest = production.clone();
            paths_in(&file.code)
                .iter()
                .map(|p| (p.line, resolve(&p.segments, &file.module_path)))
                .filter(|named| match rest.iter().position(|p| p == named) {
                    Some(i) => {
                        rest.remove(i);
                        false
                    }
                    None => true,
                })
                .collect()
        } else {
            production
        };
        for (line, path) in paths {
            let Some(to) = LAYERS
                .iter()
                .find(|l| starts_with_path(&path, &format!("crate::{l}")))
            else {
                continue;
            };
            if *to != file.top {
                uses.push(ModuleUse {
                    from: file.top.clone(),
                    to: to.to_string(),
                    at: format!("src/{}.rs:{line}", file.key),
                    path,
                });
            }
        }
    }
    uses
}

/// The drawing the production code has: one line per module of LAYERS, targets in LAYERS order.
fn drawing_of(uses: &[ModuleUse]) -> String {
    let mut out = String::new();
    for from in LAYERS {
        let targets: Vec<&str> = LAYERS
            .into_iter()
            .filter(|to| uses.iter().any(|u| u.from == from && u.to == *to))
            .collect();
        out.push_str(format!("{from} → {}", targets.join(" ")).trim_end());
        out.push('\n');
    }
    out
}

/// Everything wrong between the source `files` and the `drawing`: a drawing not in LAYERS order
/// or missing a module, a drawn arrow that runs upward, a production import along an arrow not
/// drawn, a drawn arrow that no production code uses, and test code that imports a module above
/// its own (test code may use any module below without an arrow: fixtures are not dependencies).
fn arrow_problems(files: &[SourceFile], drawing: &Drawing) -> Vec<String> {
    let mut problems = Vec::new();
    let drawn: Vec<&str> = drawing.rows.iter().map(|(m, _, _)| m.as_str()).collect();
    for module in LAYERS {
        if !drawn.contains(&module) {
            problems.push(format!(
                "{ARCHITECTURE}: `{module}` has no line in the drawing (a module that imports nothing is drawn as `{module} →`)"
            ));
        }
    }
    let mut in_order = drawn.clone();
    in_order.sort_by_key(|m| rank(m));
    if drawn != in_order {
        problems.push(format!(
            "{ARCHITECTURE}: the drawing's lines are not in LAYERS order: {drawn:?}, want {in_order:?}"
        ));
    }
    for (from, line, targets) in &drawing.rows {
        let mut sorted = targets.clone();
        sorted.sort_by_key(|m| rank(m));
        if *targets != sorted {
            problems.push(format!(
                "{ARCHITECTURE}:{line}: `{from}`'s targets are not in LAYERS order: want `{from} → {}`",
                sorted.join(" ")
            ));
        }
    }
    for (from, to, line) in drawing.arrows() {
        if rank(to) <= rank(from) {
            problems.push(format!(
                "{ARCHITECTURE}:{line}: `{from} → {to}` runs upward: a module may import only modules after it in LAYERS"
            ));
        }
    }
    let production = module_uses(files, false);
    let mut undrawn: BTreeMap<(usize, usize), Vec<&ModuleUse>> = BTreeMap::new();
    for found in &production {
        if !drawing.has(&found.from, &found.to) {
            let key = (rank(&found.from).unwrap(), rank(&found.to).unwrap());
            undrawn.entry(key).or_default().push(found);
        }
    }
    for found in undrawn.values() {
        let first = found[0];
        let more = match found.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        problems.push(format!(
            "`{} → {}` is not drawn: {} uses {}{more}",
            first.from, first.to, first.at, first.path
        ));
    }
    for (from, to, line) in drawing.arrows() {
        if !production.iter().any(|u| u.from == from && u.to == to) {
            problems.push(format!(
                "{ARCHITECTURE}:{line}: `{from} → {to}` is drawn but no production code uses it: take it out of the drawing"
            ));
        }
    }
    for found in module_uses(files, true) {
        if rank(&found.to) < rank(&found.from) {
            problems.push(format!(
                "{} (test code of `{}`) uses {}, a module above it",
                found.at, found.from, found.path
            ));
        }
    }
    problems
}

fn architecture_doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(ARCHITECTURE)).unwrap()
}

#[test]
fn modules_import_exactly_the_arrows_drawn_in_the_docs() {
    let files = source_files();
    let problems = match read_drawing(&architecture_doc()) {
        Ok(drawing) => arrow_problems(&files, &drawing),
        Err(errors) => errors,
    };
    assert!(
        problems.is_empty(),
        "the arrows drawn under \"## Modules\" in {ARCHITECTURE} and the imports of src/ differ:\n{}\n\nThe drawing the production code has today:\n```text\n{}```",
        problems.join("\n"),
        drawing_of(&module_uses(&files, false))
    );
}

/// A drawing with one line per module of LAYERS and the `arrows` given.
fn drawing_with(arrows: &[(&str, &str)]) -> String {
    let mut doc = String::from("# Architecture\n\n## Modules\n\n```text\n");
    for from in LAYERS {
        let targets: Vec<&str> = arrows
            .iter()
            .filter(|(f, _)| *f == from)
            .map(|(_, t)| *t)
            .collect();
        doc.push_str(format!("{from} → {}", targets.join(" ")).trim_end());
        doc.push('\n');
    }
    doc.push_str("```\n\n## Next\n");
    doc
}

fn problems_with(files: &[(&str, &str)], arrows: &[(&str, &str)]) -> Vec<String> {
    let files: Vec<SourceFile> = files
        .iter()
        .map(|(key, text)| SourceFile::new(key, text))
        .collect();
    let drawing = read_drawing(&drawing_with(arrows)).expect("the drawing reads");
    arrow_problems(&files, &drawing)
}

#[test]
fn module_boundaries_catch_a_planted_import_from_tui_into_vault() {
    let drawn = [("tui", "host")];
    let clean = [("tui/x", "use crate::host::Host;\n")];
    assert_eq!(problems_with(&clean, &drawn), Vec::<String>::new());
    let planted = [(
        "tui/x",
        "use crate::host::Host;\nuse crate::vault::Vault;\n",
    )];
    assert_eq!(
        problems_with(&planted, &drawn),
        vec!["`tui → vault` is not drawn: src/tui/x.rs:2 uses crate::vault::Vault".to_string()]
    );
    // Inline and through `super::`, too; in test code it is a fixture, not an arrow.
    let inline = [
        (
            "tui/x",
            "use crate::host::Host;\nfn f() { super::super::vault::open(); }\n",
        ),
        (
            "tui/y",
            "#[cfg(test)]\nmod tests {\n    use crate::vault::Vault;\n}\n",
        ),
    ];
    assert_eq!(
        problems_with(&inline, &drawn),
        vec!["`tui → vault` is not drawn: src/tui/x.rs:2 uses crate::vault::open".to_string()]
    );
}

#[test]
fn module_boundaries_reject_a_drawn_arrow_that_runs_upward() {
    let files = [
        ("vault/x", "use crate::tui::App;\n"),
        ("tui/x", "use crate::vault::Vault;\n"),
    ];
    let problems = problems_with(&files, &[("tui", "vault"), ("vault", "tui")]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].contains("`vault → tui` runs upward"),
        "{problems:#?}"
    );
    // Test code may not reach upward either, drawn or not.
    let test_code = [
        ("tui/x", "use crate::vault::Vault;\n"),
        (
            "vault/y",
            "#[cfg(test)]\nmod tests {\n    use crate::tui::App;\n}\n",
        ),
    ];
    assert_eq!(
        problems_with(&test_code, &[("tui", "vault")]),
        vec![
            "src/vault/y.rs:3 (test code of `vault`) uses crate::tui::App, a module above it"
                .to_string()
        ]
    );
}

#[test]
fn module_boundaries_reject_a_drawn_arrow_nothing_uses() {
    let files = [("tui/x", "use crate::host::Host;\n")];
    let problems = problems_with(&files, &[("tui", "host"), ("tui", "vault")]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].contains("`tui → vault` is drawn but no production code uses it"),
        "{problems:#?}"
    );
    // Test code alone does not make an arrow used.
    let test_only = [
        ("tui/x", "use crate::host::Host;\n"),
        (
            "tui/y",
            "#[cfg(test)]\nmod tests {\n    use crate::vault::Vault;\n}\n",
        ),
    ];
    assert_eq!(
        problems_with(&test_only, &[("tui", "host"), ("tui", "vault")]).len(),
        1
    );
}

#[test]
fn module_boundaries_reject_a_drawing_missing_a_module_or_out_of_order() {
    let files: Vec<SourceFile> = Vec::new();
    let without_time = drawing_with(&[]).replace("time →\n", "");
    let drawing = read_drawing(&without_time).unwrap();
    let problems = arrow_problems(&files, &drawing);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("`time` has no line"), "{problems:#?}");
    let swapped = drawing_with(&[]).replace("cli →\ntui →\n", "tui →\ncli →\n");
    let problems = arrow_problems(&files, &read_drawing(&swapped).unwrap());
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("not in LAYERS order"), "{problems:#?}");
    let unknown = drawing_with(&[]).replace("tui →\n", "tui → screen\n");
    assert!(read_drawing(&unknown).is_err());
    assert!(read_drawing("## Modules\n\nno drawing\n\n## Next\n").is_err());
}

// ---------------------------------------------------------------------------------------------
// Self-test of the reader: each of these must be caught, so the rules above cannot pass by
// failing to see an import.

/// What a file at `module_path` names, resolved, from source text `text`.
fn resolved_paths(text: &str, module_path: &[&str]) -> Vec<String> {
    let module_path: Vec<String> = module_path.iter().map(|s| s.to_string()).collect();
    paths_in(&blank_non_code(text))
        .iter()
        .map(|p| resolve(&p.segments, &module_path))
        .collect()
}

fn names(text: &str, module_path: &[&str], wanted: &str) -> bool {
    resolved_paths(text, module_path)
        .iter()
        .any(|p| starts_with_path(p, wanted))
}

#[test]
fn the_reader_sees_every_way_of_naming_a_module() {
    let caught = [
        ("use crate::tui::App;", "crate::tui"),
        ("use crate::{vault, tui::keymap::Keymap};", "crate::tui"),
        (
            "use crate::{\n    vault,\n    tui::{self, App},\n};",
            "crate::tui",
        ),
        ("use crate::tui as screen;", "crate::tui"),
        ("use crate::tui::{self as screen};", "crate::tui"),
        ("pub(crate) use crate::tui::*;", "crate::tui"),
        ("use ::std::fs;", "std::fs"),
        ("fn f() { crate::tui::run::run(); }", "crate::tui"),
        ("fn f() -> crate::tui::App { todo!() }", "crate::tui"),
        ("fn f() { let x = crate::tui::App::new; }", "crate::tui"),
        ("fn f() { std::fs::read(\"x\"); }", "std::fs"),
        ("use std::fs;\nfn f() { fs::read(\"x\"); }", "std::fs"),
        (
            "use std::fs::File;\nfn f() { File::open(\"x\"); }",
            "std::fs::File",
        ),
        ("use std::{fs::{self, File as F}, io};", "std::fs"),
        (
            "use std::fs::File as F;\nfn f() { F::open(\"x\"); }",
            "std::fs::File",
        ),
        (
            "use std::io::{Read, Write}; use rustix::fs::openat;",
            "rustix",
        ),
        // super:: from src/agent/dispatch.rs climbs to the crate root.
        ("use super::super::tui::App;", "crate::tui"),
        ("fn f() { super::super::tui::run(); }", "crate::tui"),
    ];
    for (text, wanted) in caught {
        assert!(
            names(text, &["agent", "dispatch"], wanted),
            "not caught: {wanted} in {text:?}; read as {:?}",
            resolved_paths(text, &["agent", "dispatch"])
        );
    }
}

#[test]
fn the_reader_ignores_comments_literals_and_lookalikes() {
    let ignored = [
        "// use crate::tui::App;",
        "/// See [`crate::tui::App`].",
        "/* crate::tui::App /* nested */ crate::tui */",
        "fn f() { let s = \"crate::tui::App\"; }",
        "fn f() { let s = r#\"use crate::tui; \"quoted\" \"#; }",
        "fn f() { let c = '\"'; let t = crate_tui::x; }",
        "fn f<'a>(x: &'a str) { let s = \"crate::tui\"; }",
        // A child module of the agent named `tui` is not the top-level `tui`.
        "use self::tui::Thing;",
    ];
    for text in ignored {
        assert!(
            !names(text, &["agent"], "crate::tui"),
            "a false alarm from {text:?}: read as {:?}",
            resolved_paths(text, &["agent"])
        );
    }
}

#[test]
fn the_reader_finds_file_system_access_only_in_production_code() {
    let uses_in = |text: &str| {
        let code = blank_non_code(text);
        let (production, test_files) = blank_test_code(&code);
        let file = SourceFile {
            key: "tui/example".into(),
            top: "tui".into(),
            module_path: vec!["tui".into(), "example".into()],
            code,
            production,
        };
        (file_system_uses(&file), test_files)
    };
    let (uses, _) = uses_in("fn load(p: &Path) -> String { std::fs::read_to_string(p).unwrap() }");
    assert_eq!(uses.len(), 1, "{uses:?}");
    let (uses, _) = uses_in("fn here(p: &Path) -> bool { p.exists() }");
    assert_eq!(uses, vec![(1, ".exists()".to_string())]);
    let (uses, _) = uses_in(
        "fn f() {}\n#[cfg(test)]\nmod tests {\n    use std::fs;\n    fn g() { fs::write(\"a\", \"b\").unwrap(); }\n}\n",
    );
    assert!(uses.is_empty(), "test code counted: {uses:?}");
    let (uses, test_files) =
        uses_in("#[cfg(test)]\nmod tests;\nfn f() { tokio::fs::read(\"x\"); }");
    assert_eq!(test_files, vec!["tests".to_string()]);
    assert_eq!(uses.len(), 1, "{uses:?}");
}
