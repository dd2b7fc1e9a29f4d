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
/// ignored. For many links against one vault, build a [`LinkIndex`]: the same rule, hashed.
pub fn resolve_link<'a>(
    target: &str,
    from_note: Option<&str>,
    notes: &'a [String],
) -> LinkResolution<'a> {
    let paths: Vec<&'a str> = notes.iter().map(String::as_str).collect();
    resolve_with(target, from_note, &Scan(&paths))
}

/// The one wikilink rule, over any [`Candidates`] source.
fn resolve_with<'a>(
    target: &str,
    from_note: Option<&str>,
    candidates: &impl Candidates<'a>,
) -> LinkResolution<'a> {
    let target = target.split(['|', '#', '^']).next().unwrap_or("").trim();
    if target.is_empty() {
        return from_note
            .and_then(|from| by_path(&Query::new(from), candidates))
            .unwrap_or(LinkResolution::Missing);
    }
    if target.starts_with("./") || target.starts_with("../") {
        // A relative link names one path; falling back to a file-name match would find a note the
        // author did not mean.
        return relative_to(from_note.unwrap_or(""), target)
            .and_then(|path| by_path(&Query::new(&path), candidates))
            .unwrap_or(LinkResolution::Missing);
    }
    let query = Query::new(target.trim_start_matches('/'));
    by_path_or_name(&query, candidates).unwrap_or(LinkResolution::Missing)
}

/// Where the tiers of the rule find their candidates: a plain list of paths, scanned (one lookup,
/// as `move_note` does per link), or a [`LinkIndex`], hashed (the index resolves every link of a
/// vault). Both answer the same two questions, so the rule itself is written once.
trait Candidates<'a> {
    /// Paths that equal `folded` (a folded path) as they are or without their `.md`.
    fn by_path(&self, folded: &str) -> Vec<&'a str>;
    /// Paths whose file name equals `folded` (a folded name) as it is or without its `.md`.
    fn by_name(&self, folded: &str) -> Vec<&'a str>;
}

/// Candidates by scanning every path.
struct Scan<'s, 'a>(&'s [&'a str]);

impl<'a> Candidates<'a> for Scan<'_, 'a> {
    fn by_path(&self, folded: &str) -> Vec<&'a str> {
        self.0
            .iter()
            .copied()
            .filter(|p| stem_or_name_matches(p, folded))
            .collect()
    }

    fn by_name(&self, folded: &str) -> Vec<&'a str> {
        self.0
            .iter()
            .copied()
            .filter(|p| stem_or_name_matches(file_name(p), folded))
            .collect()
    }
}

/// The paths of a vault keyed for [`resolve_link`]'s rule: resolving one link costs a hash lookup
/// instead of a scan of every path, which is what indexing the links of a whole vault needs.
#[derive(Debug, Default)]
pub struct LinkIndex {
    paths: Vec<String>,
    /// Folded path, and folded path without `.md` → positions in `paths`.
    by_path: std::collections::HashMap<String, Vec<u32>>,
    /// Folded file name, and folded file name without `.md` → positions in `paths`.
    by_name: std::collections::HashMap<String, Vec<u32>>,
}

impl LinkIndex {
    /// Every path of `paths` (vault-relative, `/`).
    pub fn new(paths: impl IntoIterator<Item = String>) -> Self {
        let mut index = Self::default();
        for path in paths {
            index.insert(path);
        }
        index
    }

    /// Only the paths whose file name (or its stem) folds to one of `names`: enough to resolve
    /// links whose [`link_name_key`] is among them, without keying a whole vault.
    pub fn with_names(
        paths: impl IntoIterator<Item = String>,
        names: &std::collections::HashSet<String>,
    ) -> Self {
        let mut index = Self::default();
        for path in paths {
            if name_keys_of(&path).iter().any(|k| names.contains(k)) {
                index.insert(path);
            }
        }
        index
    }

    fn insert(&mut self, path: String) {
        let Ok(at) = u32::try_from(self.paths.len()) else {
            return;
        };
        let folded = fold_name(&path);
        if let Some(stem) = md_stem(&folded) {
            self.by_path.entry(stem.to_string()).or_default().push(at);
        }
        for key in name_keys_of(&path) {
            self.by_name.entry(key).or_default().push(at);
        }
        self.by_path.entry(folded).or_default().push(at);
        self.paths.push(path);
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// [`resolve_link`] against these paths.
    pub fn resolve<'a>(&'a self, target: &str, from_note: Option<&str>) -> LinkResolution<'a> {
        resolve_with(target, from_note, &Hashed(self))
    }

    /// [`resolve_markdown`] against these paths.
    pub fn resolve_markdown<'a>(&'a self, dest: &str, note: &str) -> Option<&'a str> {
        resolve_markdown_with(dest, note, &Hashed(self))
    }

    fn lookup<'a>(
        &'a self,
        map: &std::collections::HashMap<String, Vec<u32>>,
        key: &str,
    ) -> Vec<&'a str> {
        map.get(key)
            .map(|hits| {
                hits.iter()
                    .map(|&at| self.paths[at as usize].as_str())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Candidates from a [`LinkIndex`]'s maps.
struct Hashed<'a>(&'a LinkIndex);

impl<'a> Candidates<'a> for Hashed<'a> {
    fn by_path(&self, folded: &str) -> Vec<&'a str> {
        self.0.lookup(&self.0.by_path, folded)
    }

    fn by_name(&self, folded: &str) -> Vec<&'a str> {
        self.0.lookup(&self.0.by_name, folded)
    }
}

/// The same rule over a smaller key: each path once, under its folded stem (its folded file name
/// when it is not a note). [`LinkIndex`] keys every path four ways to resolve a whole vault's links
/// at index speed; this is for holding a vault's names in memory for long (the app tells
/// unresolved links apart while a note is drawn) with one key per path instead of four, each
/// lookup filtering a name's few paths by the rule's own tests.
#[derive(Debug, Default)]
pub struct NameIndex {
    paths: Vec<Box<str>>,
    by_key: std::collections::HashMap<Box<str>, Vec<u32>>,
}

impl NameIndex {
    /// Every path of `paths` (vault-relative, `/`).
    pub fn new(paths: impl IntoIterator<Item = String>) -> Self {
        let mut index = Self::default();
        for path in paths {
            let Ok(at) = u32::try_from(index.paths.len()) else {
                break;
            };
            let name = fold_name(file_name(&path));
            let key = md_stem(&name).unwrap_or(&name);
            index.by_key.entry(key.into()).or_default().push(at);
            index.paths.push(path.into_boxed_str());
        }
        index.by_key.shrink_to_fit();
        index
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// [`resolve_link`] against these paths.
    pub fn resolve<'a>(&'a self, target: &str, from_note: Option<&str>) -> LinkResolution<'a> {
        resolve_with(target, from_note, &Named(self))
    }

    /// The paths whose file name or stem may fold to `folded_name`: its key as it is, and without
    /// a `.md` (a note is keyed by its stem).
    fn near(&self, folded_name: &str) -> impl Iterator<Item = &str> {
        let stem = md_stem(folded_name).filter(|s| *s != folded_name);
        [Some(folded_name), stem]
            .into_iter()
            .flatten()
            .filter_map(|key| self.by_key.get(key))
            .flatten()
            .map(|&at| &*self.paths[at as usize])
    }
}

/// Candidates from a [`NameIndex`]: a name's few paths, tested as [`Scan`] tests every path.
struct Named<'a>(&'a NameIndex);

impl<'a> Candidates<'a> for Named<'a> {
    fn by_path(&self, folded: &str) -> Vec<&'a str> {
        // A path matches only if its file name (or stem) is the query's last segment.
        self.0
            .near(file_name(folded))
            .filter(|p| stem_or_name_matches(p, folded))
            .collect()
    }

    fn by_name(&self, folded: &str) -> Vec<&'a str> {
        self.0
            .near(folded)
            .filter(|p| stem_or_name_matches(file_name(p), folded))
            .collect()
    }
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
    if let Some(found) = by_path_or_name(&query, &Scan(&paths)) {
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

fn by_path_or_name<'a>(
    query: &Query,
    candidates: &impl Candidates<'a>,
) -> Option<LinkResolution<'a>> {
    by_path(query, candidates).or_else(|| {
        let hits = match query.folded.rsplit_once('/') {
            // A path suffix: every note it can name has its last segment as file name or stem.
            Some((_, last)) => {
                let suffix = format!("/{}", query.folded);
                candidates
                    .by_name(last)
                    .into_iter()
                    .filter(|p| {
                        let folded = fold_name(p);
                        folded.ends_with(&suffix)
                            || md_stem(&folded).is_some_and(|s| s.ends_with(&suffix))
                    })
                    .collect()
            }
            None => candidates.by_name(&query.folded),
        };
        decide(hits, query, false)
    })
}

fn by_path<'a>(query: &Query, candidates: &impl Candidates<'a>) -> Option<LinkResolution<'a>> {
    decide(candidates.by_path(&query.folded), query, true)
}

/// The keys a file is found by name under: its folded file name and, for a note, its folded stem.
fn name_keys_of(path: &str) -> Vec<String> {
    let name = fold_name(file_name(path));
    match md_stem(&name) {
        Some(stem) => vec![stem.to_string(), name],
        None => vec![name],
    }
}

/// The key under which a link may resolve to a file: the folded last segment of its target (for
/// a Markdown link, of its destination). A note can only be what such a link names if one of
/// its [`LinkIndex`] name keys equals this, so when notes appear, vanish or are renamed, only
/// the links with their keys need resolving again.
pub fn link_name_key(target: &str) -> String {
    let target = target.split(['|', '#', '^']).next().unwrap_or("").trim();
    fold_name(file_name(target))
}

/// The vault path a Markdown link's destination (percent-decoded, without `#fragment`) names from
/// `note`: relative to its folder, or to the vault root when it starts with `/`; `None` when it
/// climbs above the root.
pub fn markdown_destination_path(dest: &str, note: &str) -> Option<String> {
    match dest.strip_prefix('/') {
        Some(rooted) => super::name::join_relative(Vec::new(), rooted),
        None => {
            let mut folder: Vec<&str> = note.split('/').collect();
            folder.pop();
            super::name::join_relative(folder, dest)
        }
    }
}

/// The note a Markdown link's destination (percent-decoded, without `#fragment`) names from
/// `note`, among `notes`: relative to its folder, or to the vault root when it starts with `/`.
/// Only an exact `.md` path counts: a Markdown link is a path, not a name. `move_note` and the
/// link graph ([`LinkIndex::resolve_markdown`]) both use this rule.
pub fn resolve_markdown<'a>(dest: &str, note: &str, notes: &'a [String]) -> Option<&'a str> {
    let paths: Vec<&'a str> = notes.iter().map(String::as_str).collect();
    resolve_markdown_with(dest, note, &Scan(&paths))
}

fn resolve_markdown_with<'a>(
    dest: &str,
    note: &str,
    candidates: &impl Candidates<'a>,
) -> Option<&'a str> {
    let joined = markdown_destination_path(dest, note)?;
    candidates
        .by_path(&fold_name(&joined))
        .into_iter()
        .find(|p| *p == joined && has_md_extension(p))
}

/// The key a note is found under by file name: its file name without `.md`, folded. Every key
/// [`LinkIndex`] finds the note by name under is this key or this key with `.md` (see
/// [`file_keys_for_link_key`]), so an index of notes by this key finds the notes a link can name.
pub fn note_file_key(path: &str) -> String {
    let name = fold_name(file_name(path));
    match md_stem(&name) {
        Some(stem) => stem.to_string(),
        None => name,
    }
}

/// The [`note_file_key`]s of the notes a link whose [`link_name_key`] is `key` may name: the key
/// itself (`[[Plan]]`: `Plan.md`) and, for a key ending in `.md`, the key without it (`[[Plan.md]]`).
pub fn file_keys_for_link_key(key: &str) -> impl Iterator<Item = &str> {
    std::iter::once(key).chain(md_stem(key))
}

/// Whether `path` ends in `.md` (any case): a note, not an attachment.
pub fn has_md_extension(path: &str) -> bool {
    md_stem(file_name(path)).is_some()
}

/// Among the notes an ambiguous link names, the one Obsidian opens: a note in the linking note's
/// own folder first, then the one nearest the vault root (fewest folders), then the first by path.
/// The graph follows it so that backlinks match what a click does; tools still say the link is
/// ambiguous, and `move_note` never rewrites on a guess.
pub fn obsidian_pick<'a>(candidates: &[&'a str], from_note: &str) -> Option<&'a str> {
    let folder = from_note.rsplit_once('/').map_or("", |(folder, _)| folder);
    // Each candidate's key once (a name shared by a copied folder tree has dozens of them).
    candidates.iter().copied().min_by_key(|p| {
        let elsewhere = p.rsplit_once('/').map_or("", |(f, _)| f) != folder;
        (elsewhere, p.bytes().filter(|&b| b == b'/').count(), *p)
    })
}

/// [`obsidian_pick`] among the same candidates for many linking notes: the candidates are keyed
/// by folder once, so each pick is a hash lookup rather than a pass over dozens of paths (a name
/// repeated across a vault's copied folder trees, linked from thousands of notes).
#[derive(Debug, Clone)]
pub struct ObsidianPicker<'a> {
    /// The first by path of the candidates with the fewest folders: the pick from any folder
    /// that holds none of them.
    nearest: Option<&'a str>,
    /// Folder → the first by path of its candidates.
    in_folder: std::collections::HashMap<&'a str, &'a str>,
}

impl<'a> ObsidianPicker<'a> {
    pub fn new(candidates: &[&'a str]) -> Self {
        let mut in_folder: std::collections::HashMap<&'a str, &'a str> =
            std::collections::HashMap::new();
        for &path in candidates {
            let folder = path.rsplit_once('/').map_or("", |(f, _)| f);
            let first = in_folder.entry(folder).or_insert(path);
            *first = (*first).min(path);
        }
        let nearest = candidates
            .iter()
            .copied()
            .min_by_key(|p| (p.bytes().filter(|&b| b == b'/').count(), *p));
        Self { nearest, in_folder }
    }

    /// What [`obsidian_pick`] answers for a link in `from_note`.
    pub fn pick(&self, from_note: &str) -> Option<&'a str> {
        let folder = from_note.rsplit_once('/').map_or("", |(folder, _)| folder);
        self.in_folder.get(folder).copied().or(self.nearest)
    }
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
        let hashed = LinkIndex::new(notes.clone());
        let named = NameIndex::new(notes.clone());
        assert_eq!(named.len(), notes.len());
        for (target, from, expected) in cases {
            // The name-keyed index too: the app's unresolved links are the graph's.
            assert_eq!(
                named.resolve(target, from),
                expected,
                "named: {target:?} from {from:?}"
            );
            assert_eq!(
                resolve_link(target, from, &notes),
                expected,
                "{target:?} from {from:?}"
            );
            // The hashed index is the same rule: the graph and move_note never disagree.
            assert_eq!(
                hashed.resolve(target, from),
                expected,
                "hashed: {target:?} from {from:?}"
            );
        }
        assert_eq!(resolve_link("Plan", None, &[]), Missing);
    }

    #[test]
    fn an_index_keyed_by_some_names_resolves_links_with_those_names_alike() {
        let notes = vault();
        let names: std::collections::HashSet<String> =
            ["deep", "plan"].iter().map(|s| s.to_string()).collect();
        let some = LinkIndex::with_names(notes.clone(), &names);
        assert_eq!(some.len(), 4);
        for target in ["Deep", "sub/Deep", "Plan", "Projects/Plan", "plan.md"] {
            assert_eq!(
                some.resolve(target, None),
                resolve_link(target, None, &notes),
                "{target}"
            );
        }
        assert_eq!(
            some.resolve_markdown("../Plan.md", "Projects/Roadmap.md"),
            Some("Plan.md")
        );
        assert_eq!(some.resolve_markdown("plan.md", "x.md"), None);
    }

    #[test]
    fn the_picker_picks_as_obsidian_pick_from_every_folder() {
        let candidates = [
            "Archive/sub/Deep.md",
            "Deep.md",
            "Projects/sub/Deep.md",
            "Projects/sub/deep.md",
            "X/Deep.md",
            "A/Deep.md",
        ];
        let picker = ObsidianPicker::new(&candidates);
        for from in [
            "Projects/sub/Other.md",
            "Archive/sub/x.md",
            "X/y.md",
            "A/b.md",
            "Top.md",
            "Nowhere/deep/n.md",
        ] {
            assert_eq!(
                picker.pick(from),
                obsidian_pick(&candidates, from),
                "{from}"
            );
        }
        let rootless = ["B/Deep.md", "A/Deep.md", "A/x/Deep.md"];
        let picker = ObsidianPicker::new(&rootless);
        assert_eq!(picker.pick("C/n.md"), Some("A/Deep.md"));
        assert_eq!(picker.pick("C/n.md"), obsidian_pick(&rootless, "C/n.md"));
        assert_eq!(ObsidianPicker::new(&[]).pick("a.md"), None);
    }

    #[test]
    fn ambiguous_names_pick_what_obsidian_opens() {
        let candidates = ["Archive/sub/Deep.md", "Deep.md", "Projects/sub/Deep.md"];
        assert_eq!(
            obsidian_pick(&candidates, "Projects/sub/Other.md"),
            Some("Projects/sub/Deep.md")
        );
        assert_eq!(obsidian_pick(&candidates, "Inbox/x.md"), Some("Deep.md"));
        assert_eq!(
            obsidian_pick(&["B/x.md", "A/x.md"], "C/y.md"),
            Some("A/x.md")
        );
        assert_eq!(obsidian_pick(&[], "x.md"), None);
        assert_eq!(link_name_key("Folder/Plan#Goals|the plan"), "plan");
        assert_eq!(link_name_key("Café.md"), "café.md");
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
