//! The names a note goes by, in one place: its file name, its stem (what Obsidian shows and links
//! by: the file name without the final `.md` extension, case kept) and a path without `.md`. Links
//! (`links`, `relink`), the index, the note tools, MCP prompts and the file pane all call these,
//! so `Plan.Md` has one name everywhere (docs/decisions.md §50). Pure string rules, no I/O.

/// The last segment of a vault-relative path: `a/b/Plan.md` → `Plan.md`.
pub fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// `name` without a final `.md` extension (any case: the walker lists `Plan.MD` as a note), when
/// it has one and something is left before it; `.md` alone is a hidden file's whole name.
pub fn md_stem(name: &str) -> Option<&str> {
    let cut = name.len().checked_sub(3)?;
    let ext = name.get(cut..)?;
    (cut > 0 && ext.eq_ignore_ascii_case(".md")).then(|| &name[..cut])
}

/// `path` without a final `.md` extension, or as it is: `a/Plan.md` → `a/Plan`, `a/x.txt` stays.
pub fn without_md(path: &str) -> &str {
    match md_stem(path) {
        Some(stem) if !stem.ends_with('/') => stem,
        _ => path,
    }
}

/// The note's stem: the file name without folders and without the final `.md` extension, its
/// case kept. `Projects/Plan.Md` → `Plan`, `a.b.md` → `a.b`, `.md` → `.md`, `x` → `x`.
pub fn stem(rel: &str) -> &str {
    let name = file_name(rel);
    md_stem(name).unwrap_or(name)
}

/// `path`'s segments walked from the folder `base` (its segments, outermost first): `.` and
/// empty segments stay, `..` climbs one; `None` when it climbs above the vault root. A
/// wikilink's `./` target and a Markdown link's destination resolve by this one rule:
/// `a/./b/../c` from the root → `a/c`.
pub fn join_relative<'a>(mut base: Vec<&'a str>, path: &'a str) -> Option<String> {
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                base.pop()?;
            }
            s => base.push(s),
        }
    }
    Some(base.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_drop_only_the_final_md_in_any_case() {
        for (rel, want) in [
            ("Plan.md", "Plan"),
            ("Plan.Md", "Plan"),
            ("Plan.MD", "Plan"),
            ("a.b.md", "a.b"),
            ("a.md.md", "a.md"),
            (".md", ".md"),
            ("x", "x"),
            ("md", "md"),
            ("notes.txt", "notes.txt"),
            ("Projects/2026/Plan.md", "Plan"),
            ("日記/Café Ünïcode.md", "Café Ünïcode"),
            ("Folder.md/inner", "inner"),
        ] {
            assert_eq!(stem(rel), want, "{rel}");
        }
    }

    #[test]
    fn relative_paths_walk_dots_and_stop_at_the_root() {
        assert_eq!(
            join_relative(Vec::new(), "a/./b/../c").as_deref(),
            Some("a/c")
        );
        assert_eq!(
            join_relative(vec!["a", "b"], "../c.md").as_deref(),
            Some("a/c.md")
        );
        assert_eq!(
            join_relative(vec!["a"], "//x.md").as_deref(),
            Some("a/x.md")
        );
        assert_eq!(join_relative(vec!["a"], "../../x.md"), None);
    }

    #[test]
    fn paths_and_file_names() {
        assert_eq!(file_name("a/b/Plan.md"), "Plan.md");
        assert_eq!(file_name("Plan.md"), "Plan.md");
        assert_eq!(without_md("a/b/Plan.Md"), "a/b/Plan");
        assert_eq!(without_md("a/.md"), "a/.md");
        assert_eq!(without_md("a/x.txt"), "a/x.txt");
        assert_eq!(md_stem("日記.md"), Some("日記"));
        assert_eq!(md_stem(".md"), None);
        assert_eq!(md_stem("x"), None);
    }
}
