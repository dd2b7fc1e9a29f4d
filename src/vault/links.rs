//! Wikilink resolution, the way Obsidian resolves `[[target]]`, and the looser lookup tools use when
//! a person names a note by its title.
//!
//! Names compare case-insensitively (Unicode `to_lowercase`) after NFC normalisation, because macOS
//! writes decomposed (NFD) file names while people type composed text. Matching goes in tiers and
//! stops at the first tier with a hit: the full path (with or without `.md`), then a path suffix
//! (`[[sub/a]]` for `folder/sub/a.md`) or the file name (`[[a]]` for `folder/a.md`). Several notes in
//! the winning tier are reported as [`LinkResolution::Ambiguous`], never guessed between: the caller
//! lists them to the person. (Obsidian prefers a note near the linking one; a tool that edits the
//! wrong note is worse than one that asks.)

use unicode_normalization::UnicodeNormalization;

/// What a link or a note name refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkResolution<'a> {
    /// Exactly one note.
    Unique(&'a str),
    /// Several notes match equally well; sorted by path, without duplicates.
    Ambiguous(Vec<&'a str>),
    Missing,
}

/// A note as a person may name it: by path, file stem, title or alias.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoteName {
    /// Vault-relative, with `/`.
    pub path: String,
    pub title: Option<String>,
    pub aliases: Vec<String>,
}

/// The form names are compared in: NFC, lowercased. Public so that indexes can key names the same way.
pub fn fold_name(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    // NFC again after lowercasing: a few lowercase mappings (`İ` → `i̇`) yield sequences that
    // normalise differently.
    s.nfc().collect::<String>().to_lowercase().nfc().collect()
}

/// Resolves a wikilink target (as in `WikiLink::target`) among `notes`, vault-relative paths with
/// `/`. `from_note` is the linking note: an empty target (`[[#Heading]]`) means that note, and
/// `./` or `../` targets are relative to its folder. A `|alias` or `#subpath` left on the target is
/// ignored.
pub fn resolve_link<'a>(
    target: &str,
    from_note: Option<&str>,
    notes: &'a [String],
) -> LinkResolution<'a> {
    let paths: Vec<&'a str> = notes.iter().map(String::as_str).collect();
    let target = target.split(['|', '#', '^']).next().unwrap_or("").trim();
    if target.is_empty() {
        return from_note
            .and_then(|from| by_path(&Query::new(from), &paths))
            .unwrap_or(LinkResolution::Missing);
    }
    if target.starts_with("./") || target.starts_with("../") {
        // A relative link names one path; falling back to a file-name match would find a note the
        // author did not mean.
        return relative_to(from_note.unwrap_or(""), target)
            .and_then(|path| by_path(&Query::new(&path), &paths))
            .unwrap_or(LinkResolution::Missing);
    }
    let query = Query::new(target.trim_start_matches('/'));
    by_path_or_name(&query, &paths).unwrap_or(LinkResolution::Missing)
}

/// Finds the note a person means by `query`: its path (with or without `.md`), a path suffix, its
/// file stem, its title, or one of its aliases, each case-insensitively, in that order of tiers.
pub fn resolve_title_or_path<'a>(query: &str, notes: &'a [NoteName]) -> LinkResolution<'a> {
    let raw = query.trim();
    if raw.is_empty() {
        return LinkResolution::Missing;
    }
    let query = Query::new(raw.trim_start_matches('/'));
    let paths: Vec<&'a str> = notes.iter().map(|n| n.path.as_str()).collect();
    if let Some(found) = by_path_or_name(&query, &paths) {
        return found;
    }
    let titled = notes
        .iter()
        .filter(|n| {
            n.title
                .as_deref()
                .is_some_and(|t| names_equal(t.trim(), &query.folded))
        })
        .map(|n| n.path.as_str())
        .collect();
    if let Some(found) = decide(titled, &query, false) {
        return found;
    }
    let aliased = notes
        .iter()
        .filter(|n| {
            n.aliases
                .iter()
                .any(|a| names_equal(a.trim(), &query.folded))
        })
        .map(|n| n.path.as_str())
        .collect();
    decide(aliased, &query, false).unwrap_or(LinkResolution::Missing)
}

struct Query {
    /// NFC, as typed: to prefer an exact-case path among case variants.
    exact: String,
    folded: String,
}

impl Query {
    fn new(s: &str) -> Self {
        Self {
            exact: s.nfc().collect(),
            folded: fold_name(s),
        }
    }
}

fn by_path_or_name<'a>(query: &Query, paths: &[&'a str]) -> Option<LinkResolution<'a>> {
    by_path(query, paths).or_else(|| {
        let hits = if query.folded.contains('/') {
            let suffix = format!("/{}", query.folded);
            paths
                .iter()
                .copied()
                .filter(|p| {
                    let folded = fold_name(p);
                    folded.ends_with(&suffix)
                        || md_stem(&folded).is_some_and(|s| s.ends_with(&suffix))
                })
                .collect()
        } else {
            paths
                .iter()
                .copied()
                .filter(|p| stem_or_name_matches(file_name(p), &query.folded))
                .collect()
        };
        decide(hits, query, false)
    })
}

fn by_path<'a>(query: &Query, paths: &[&'a str]) -> Option<LinkResolution<'a>> {
    let hits = paths
        .iter()
        .copied()
        .filter(|p| stem_or_name_matches(p, &query.folded))
        .collect();
    decide(hits, query, true)
}

/// `name` equals `folded` as is or without its `.md` extension.
fn stem_or_name_matches(name: &str, folded: &str) -> bool {
    names_equal(name, folded) || md_stem(name).is_some_and(|stem| names_equal(stem, folded))
}

/// One hit is the answer; several are ambiguous, except that for full paths the one spelled exactly
/// as asked wins (on a case-sensitive file system `A.md` and `a.md` are different notes).
fn decide<'a>(
    mut hits: Vec<&'a str>,
    query: &Query,
    prefer_exact: bool,
) -> Option<LinkResolution<'a>> {
    hits.sort_unstable();
    hits.dedup();
    match hits.as_slice() {
        [] => None,
        [one] => Some(LinkResolution::Unique(one)),
        _ => {
            if prefer_exact {
                let exact: Vec<&'a str> = hits
                    .iter()
                    .copied()
                    .filter(|p| {
                        let p: String = p.nfc().collect();
                        p == query.exact || md_stem(&p) == Some(query.exact.as_str())
                    })
                    .collect();
                if let [one] = exact.as_slice() {
                    return Some(LinkResolution::Unique(one));
                }
            }
            Some(LinkResolution::Ambiguous(hits))
        }
    }
}

/// Compares without allocating for the common all-ASCII case; `folded` is already folded.
fn names_equal(name: &str, folded: &str) -> bool {
    if name.is_ascii() && folded.is_ascii() {
        name.eq_ignore_ascii_case(folded)
    } else {
        fold_name(name) == folded
    }
}

use super::name::{file_name, md_stem};

/// Joins a `./` or `../` target to the folder of `from`; None when it climbs above the vault root.
fn relative_to(from: &str, target: &str) -> Option<String> {
    let mut folder: Vec<&str> = from.split('/').filter(|s| !s.is_empty()).collect();
    folder.pop();
    super::name::join_relative(folder, target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use LinkResolution::{Ambiguous, Missing, Unique};
    use pretty_assertions::assert_eq;

    fn vault() -> Vec<String> {
        [
            "Plan.md",
            "Projects/Plan.md",
            "Projects/Roadmap.md",
            "Projects/sub/Deep.md",
            "Archive/sub/Deep.md",
            "Daily/2024-01-01.md",
            "Café.md",
            "Notes/Ünïcode.md",
            "Images/diagram.png",
            "Case/Note.md",
            "Case/note.md",
            "Other/NOTE.md",
            "dir.md/inner.md",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    }

    #[test]
    fn resolve_link_table() {
        let notes = vault();
        let cases: Vec<(&str, Option<&str>, LinkResolution<'_>)> = vec![
            // Full path, with or without .md, any case.
            ("Projects/Plan", None, Unique("Projects/Plan.md")),
            ("Projects/Plan.md", None, Unique("Projects/Plan.md")),
            ("projects/plan", None, Unique("Projects/Plan.md")),
            ("/Projects/Roadmap", None, Unique("Projects/Roadmap.md")),
            ("Plan", None, Unique("Plan.md")),
            // File stem anywhere in the vault.
            ("Roadmap", None, Unique("Projects/Roadmap.md")),
            ("roadmap.md", None, Unique("Projects/Roadmap.md")),
            ("2024-01-01", None, Unique("Daily/2024-01-01.md")),
            ("diagram.png", None, Unique("Images/diagram.png")),
            ("diagram", None, Missing),
            ("inner", None, Unique("dir.md/inner.md")),
            // Path suffix.
            (
                "sub/Deep",
                None,
                Ambiguous(vec!["Archive/sub/Deep.md", "Projects/sub/Deep.md"]),
            ),
            ("Projects/sub/Deep", None, Unique("Projects/sub/Deep.md")),
            ("jects/sub/Deep", None, Missing),
            // Ambiguous stems are reported, even from a note in the same folder as one of them.
            (
                "Deep",
                None,
                Ambiguous(vec!["Archive/sub/Deep.md", "Projects/sub/Deep.md"]),
            ),
            (
                "Deep",
                Some("Projects/sub/Other.md"),
                Ambiguous(vec!["Archive/sub/Deep.md", "Projects/sub/Deep.md"]),
            ),
            (
                "note",
                Some("Case/x.md"),
                Ambiguous(vec!["Case/Note.md", "Case/note.md", "Other/NOTE.md"]),
            ),
            // A full path spelled exactly wins over its case variants; otherwise it is ambiguous.
            ("Case/Note", None, Unique("Case/Note.md")),
            ("Case/note.md", None, Unique("Case/note.md")),
            (
                "CASE/NOTE",
                None,
                Ambiguous(vec!["Case/Note.md", "Case/note.md"]),
            ),
            // Unicode: case-insensitive and NFC on both sides.
            ("café", None, Unique("Café.md")),
            ("CAFE\u{301}", None, Unique("Café.md")),
            ("u\u{308}ni\u{308}code", None, Unique("Notes/Ünïcode.md")),
            // Subpaths and aliases left on the target are ignored.
            ("Roadmap#Goals", None, Unique("Projects/Roadmap.md")),
            ("Roadmap|the map", None, Unique("Projects/Roadmap.md")),
            ("Roadmap^blk", None, Unique("Projects/Roadmap.md")),
            // Empty target: the linking note itself.
            ("", Some("Projects/Plan.md"), Unique("Projects/Plan.md")),
            (
                "#Heading",
                Some("Projects/Plan.md"),
                Unique("Projects/Plan.md"),
            ),
            ("", None, Missing),
            ("", Some("Gone.md"), Missing),
            // Relative links.
            (
                "./Roadmap",
                Some("Projects/Plan.md"),
                Unique("Projects/Roadmap.md"),
            ),
            (
                "../Plan",
                Some("Projects/sub/Deep.md"),
                Unique("Projects/Plan.md"),
            ),
            ("./Plan", Some("Daily/2024-01-01.md"), Missing),
            ("../../x", Some("Plan.md"), Missing),
            ("Nowhere", None, Missing),
            ("   ", None, Missing),
        ];
        for (target, from, expected) in cases {
            assert_eq!(
                resolve_link(target, from, &notes),
                expected,
                "{target:?} from {from:?}"
            );
        }
        assert_eq!(resolve_link("Plan", None, &[]), Missing);
    }

    #[test]
    fn nfd_paths_on_disk_match_nfc_links() {
        let notes = vec!["Cafe\u{301}/Re\u{301}sume\u{301}.md".to_owned()];
        assert_eq!(
            resolve_link("résumé", None, &notes),
            Unique(notes[0].as_str())
        );
        assert_eq!(
            resolve_link("Café/Résumé", None, &notes),
            Unique(notes[0].as_str())
        );
        assert_eq!(
            resolve_link("CAFÉ/RÉSUMÉ.MD", None, &notes),
            Unique(notes[0].as_str())
        );
    }

    #[test]
    fn resolve_title_or_path_table() {
        let note = |path: &str, title: Option<&str>, aliases: &[&str]| NoteName {
            path: path.to_owned(),
            title: title.map(str::to_owned),
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
        };
        let notes = vec![
            note("Projects/Plan.md", Some("The Big Plan"), &["plan-2024"]),
            note(
                "Archive/Old.md",
                Some("Old Plan"),
                &["The Big Plan", "Legacy"],
            ),
            note("Inbox/Ideas.md", None, &["Legacy", "brainstorm"]),
            note("Inbox/Plan ideas.md", Some("Plan"), &[]),
            note("C# notes.md", Some("Über C#"), &[]),
            note("Twice/Same.md", Some("Same"), &[]),
            note("Twice/Other.md", Some("same"), &[]),
        ];
        let cases: Vec<(&str, LinkResolution<'_>)> = vec![
            ("Projects/Plan.md", Unique("Projects/Plan.md")),
            ("projects/plan", Unique("Projects/Plan.md")),
            ("Plan", Unique("Projects/Plan.md")),
            ("Old", Unique("Archive/Old.md")),
            ("the big plan", Unique("Projects/Plan.md")),
            ("OLD PLAN", Unique("Archive/Old.md")),
            ("plan-2024", Unique("Projects/Plan.md")),
            ("brainstorm", Unique("Inbox/Ideas.md")),
            (
                "Legacy",
                Ambiguous(vec!["Archive/Old.md", "Inbox/Ideas.md"]),
            ),
            ("same", Unique("Twice/Same.md")),
            ("Über c#", Unique("C# notes.md")),
            ("c# NOTES", Unique("C# notes.md")),
            ("  Plan ideas  ", Unique("Inbox/Plan ideas.md")),
            ("nothing", Missing),
            ("", Missing),
        ];
        for (query, expected) in cases {
            assert_eq!(resolve_title_or_path(query, &notes), expected, "{query:?}");
        }
        let twins = vec![
            note("A/x.md", Some("T"), &[]),
            note("B/y.md", Some("t"), &[]),
        ];
        assert_eq!(
            resolve_title_or_path("T", &twins),
            Ambiguous(vec!["A/x.md", "B/y.md"])
        );
    }

    #[test]
    fn fold_name_normalises() {
        let cases = [
            ("ABC", "abc"),
            ("Café", "café"),
            ("Cafe\u{301}", "café"),
            ("ÉTÉ", "été"),
            ("Straße", "straße"),
            ("日本語", "日本語"),
        ];
        for (input, expected) in cases {
            assert_eq!(fold_name(input), expected, "{input:?}");
        }
    }
}
