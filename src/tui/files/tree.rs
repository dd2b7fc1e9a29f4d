//! The file pane's model: the vault's notes as a tree of folders, a "Recent" section above it,
//! which folders are open, and which note is the active one. No drawing and no keys here.
//!
//! Order, as Obsidian's file explorer sorts by default: folders before notes, each by name
//! ignoring case. "Recent" lists the notes touched last, where touched is the later of the file's
//! modification time and the moment it was opened in the app: what was written or read last is
//! what a person comes back to.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// How many notes the "Recent" section lists.
pub const RECENT_LIMIT: usize = 5;

pub use crate::host::NoteEntry;

/// The vault's notes sorted by path: one listing, shared by the file pane, the picker and the
/// `[[` list (each keeps indices into it, never a copy of the names).
pub type NoteTable = Arc<Vec<NoteEntry>>;

/// What one row of the pane shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowKind {
    /// A section heading ("Recent", the vault's notes).
    Header(Section),
    /// A note in the "Recent" section.
    Recent { path: String },
    /// A folder of the tree.
    Folder { path: String, expanded: bool },
    /// A note of the tree.
    Note { path: String },
}

/// The pane's two sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Recent,
    Notes,
}

/// A row: what it is, its label and how deep it sits in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub kind: RowKind,
    pub label: String,
    pub depth: usize,
}

impl RowKind {
    /// Whether two rows are the same place in the pane (a folder stays itself when it opens).
    pub fn same_place(&self, other: &RowKind) -> bool {
        match (self, other) {
            (RowKind::Folder { path: a, .. }, RowKind::Folder { path: b, .. }) => a == b,
            (a, b) => a == b,
        }
    }
}

impl Row {
    /// The note this row opens, if it is a note.
    pub fn note_path(&self) -> Option<&str> {
        match &self.kind {
            RowKind::Recent { path } | RowKind::Note { path } => Some(path),
            RowKind::Header(_) | RowKind::Folder { .. } => None,
        }
    }

    /// Rows can be selected unless they are headings.
    pub fn selectable(&self) -> bool {
        !matches!(self.kind, RowKind::Header(_))
    }
}

/// A folder and what it holds, sorted.
#[derive(Debug, Default, Clone)]
struct Folder {
    /// Vault-relative path without a trailing `/` ("" for the vault itself).
    path: String,
    folders: Vec<Folder>,
    /// Indices into `FileTree::notes`.
    notes: Vec<usize>,
}

/// The vault as a tree, with the state of the pane that is not about drawing.
#[derive(Debug, Default, Clone)]
pub struct FileTree {
    notes: NoteTable,
    root: Folder,
    /// Folders shown open.
    expanded: BTreeSet<String>,
    /// When each note was last opened or saved in the app (ns since the epoch).
    opened: HashMap<String, i64>,
    active: Option<String>,
    /// Whether the index has answered yet (before, the pane says it is loading).
    loaded: bool,
    /// The rows, kept until something changes (a frame draws them without sorting the vault).
    rows: RefCell<Option<Arc<Vec<Row>>>>,
}

impl FileTree {
    /// An empty tree that has not been loaded yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace the notes (a fresh listing from the index). Open folders stay open.
    pub fn set_notes(&mut self, mut notes: Vec<NoteEntry>) {
        notes.sort_by(|a, b| a.path.cmp(&b.path));
        notes.dedup_by(|a, b| a.path == b.path);
        self.root = build(&notes);
        self.notes = Arc::new(notes);
        self.loaded = true;
        self.changed();
    }

    /// Add one note (just created) without waiting for the next listing.
    pub fn add_note(&mut self, note: NoteEntry) {
        let mut notes = Arc::unwrap_or_clone(std::mem::take(&mut self.notes));
        notes.retain(|n| n.path != note.path);
        // One more, not double: the listing arrives sized to the vault (`Index::note_listing`
        // counts first), and a doubled copy of 137k entries would stay resident.
        notes.reserve_exact(1);
        notes.push(note);
        self.set_notes(notes);
    }

    /// A listed note was written (saved in the editor) at `modified_ns`: it moves up in "Recent"
    /// without listing the whole vault again.
    pub fn touch(&mut self, path: &str, modified_ns: i64) {
        // Kept beside the listing, which stays shared and unchanged (an open picker reads it).
        if self.note(path).is_some() {
            let touched = self.opened.entry(path.to_string()).or_insert(modified_ns);
            *touched = (*touched).max(modified_ns);
            self.changed();
        }
    }

    pub fn is_loaded(&self) -> bool {
        self.loaded
    }

    pub fn notes(&self) -> &[NoteEntry] {
        &self.notes
    }

    /// The listing itself, shared (the picker holds it while it is open).
    pub fn table(&self) -> NoteTable {
        Arc::clone(&self.notes)
    }

    /// When notes were opened or saved in the app (ns), beside their modification times.
    pub fn touched_in_app(&self) -> &HashMap<String, i64> {
        &self.opened
    }

    pub fn note(&self, path: &str) -> Option<&NoteEntry> {
        self.notes
            .binary_search_by(|n| n.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.notes[i])
    }

    /// The note open in the editor.
    pub fn active(&self) -> Option<&str> {
        self.active.as_deref()
    }

    /// The editor shows `path` now (or nothing): it becomes the active note, its folders open,
    /// and (when `now_ns` is given) it counts as opened at that moment for "Recent".
    pub fn set_active(&mut self, path: Option<&str>, now_ns: Option<i64>) {
        self.changed();
        self.active = path.map(str::to_string);
        if let Some(path) = path {
            for folder in ancestors(path) {
                self.expanded.insert(folder.to_string());
            }
            if let Some(now) = now_ns {
                self.opened.insert(path.to_string(), now);
            }
        }
    }

    /// When a note was last touched: modified on disk or opened in the app, whichever is later.
    pub fn touched_ns(&self, note: &NoteEntry) -> i64 {
        let opened = self.opened.get(&note.path).copied().unwrap_or(i64::MIN);
        note.modified_ns.max(opened)
    }

    /// The notes touched last, newest first (ties by path, so the order is stable).
    ///
    /// Asked at each key of a `[[` link: one pass over the notes by their write time (no lookup,
    /// no allocation per note), then the few notes opened in this run. A note's touch is its write
    /// or its opening, whichever is later, so the newest `limit` are among the `limit` newest
    /// written and the opened ones.
    pub fn recent(&self, limit: usize) -> Vec<&NoteEntry> {
        // The best `limit` so far, newest first.
        let mut best: Vec<(i64, &NoteEntry)> = Vec::with_capacity(limit + 1);
        for note in self.notes.iter() {
            offer_recent(&mut best, limit, (note.modified_ns, note));
        }
        for path in self.opened.keys() {
            if let Some(note) = self.note(path) {
                let touched = self.touched_ns(note);
                // Already held by its write time: it keeps the later of its two times.
                if let Some(held) = best.iter().position(|(_, n)| n.path == note.path) {
                    if best[held].0 >= touched {
                        continue;
                    }
                    best.remove(held);
                }
                offer_recent(&mut best, limit, (touched, note));
            }
        }
        best.into_iter().map(|(_, note)| note).collect()
    }

    pub fn is_expanded(&self, folder: &str) -> bool {
        self.expanded.contains(folder)
    }

    /// Open or close a folder.
    pub fn toggle(&mut self, folder: &str) {
        self.changed();
        if !self.expanded.remove(folder) {
            self.expanded.insert(folder.to_string());
        }
    }

    pub fn expand(&mut self, folder: &str) {
        self.changed();
        self.expanded.insert(folder.to_string());
    }

    pub fn collapse(&mut self, folder: &str) {
        self.changed();
        self.expanded.remove(folder);
    }

    /// Forget the rows drawn so far.
    fn changed(&mut self) {
        self.rows.get_mut().take();
    }

    /// The rows to show: "Recent" (when there are notes), then the tree with open folders
    /// unfolded.
    pub fn rows(&self) -> Arc<Vec<Row>> {
        if let Some(rows) = self.rows.borrow().as_ref() {
            return Arc::clone(rows);
        }
        let rows = Arc::new(self.build_rows());
        *self.rows.borrow_mut() = Some(Arc::clone(&rows));
        rows
    }

    fn build_rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        if self.notes.is_empty() {
            return rows;
        }
        rows.push(Row {
            kind: RowKind::Header(Section::Recent),
            label: "Recent".into(),
            depth: 0,
        });
        for note in self.recent(RECENT_LIMIT) {
            rows.push(Row {
                kind: RowKind::Recent {
                    path: note.path.clone(),
                },
                label: note.stem().to_string(),
                depth: 0,
            });
        }
        rows.push(Row {
            kind: RowKind::Header(Section::Notes),
            label: "Notes".into(),
            depth: 0,
        });
        self.push_folder(&self.root, 0, &mut rows);
        rows
    }

    fn push_folder(&self, folder: &Folder, depth: usize, rows: &mut Vec<Row>) {
        for child in &folder.folders {
            let expanded = self.expanded.contains(&child.path);
            rows.push(Row {
                kind: RowKind::Folder {
                    path: child.path.clone(),
                    expanded,
                },
                label: file_name(&child.path).to_string(),
                depth,
            });
            if expanded {
                self.push_folder(child, depth + 1, rows);
            }
        }
        for &index in &folder.notes {
            let note = &self.notes[index];
            rows.push(Row {
                kind: RowKind::Note {
                    path: note.path.clone(),
                },
                label: note.stem().to_string(),
                depth,
            });
        }
    }
}

/// The last component of a `/` path.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The folder holding `path` ("" at the top of the vault).
pub fn parent_folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The folders holding `path`, outermost first (`a/b/c.md` → `a`, `a/b`).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

/// Name order: ignoring case first, then exactly (so the order is total).
fn by_name(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| a.cmp(b))
}

/// Put `candidate` (its touch time and the note, not already in `best`) among the `limit`
/// newest of `best`, newest first and ties by path.
fn offer_recent<'a>(
    best: &mut Vec<(i64, &'a NoteEntry)>,
    limit: usize,
    candidate: (i64, &'a NoteEntry),
) {
    let newer = |a: &(i64, &NoteEntry), b: &(i64, &NoteEntry)| {
        b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path))
    };
    let at = best.partition_point(|held| newer(held, &candidate).is_lt());
    if at < limit {
        best.insert(at, candidate);
        best.truncate(limit);
    }
}

/// The folder tree of `notes` (sorted by path).
fn build(notes: &[NoteEntry]) -> Folder {
    let mut root = Folder::default();
    for (index, note) in notes.iter().enumerate() {
        let mut folder = &mut root;
        for prefix in ancestors(&note.path) {
            // Sorted paths keep a folder's notes together: the last folder is nearly always it.
            let last = folder.folders.len().checked_sub(1);
            let found = last
                .filter(|&i| folder.folders[i].path == prefix)
                .or_else(|| folder.folders.iter().position(|f| f.path == prefix));
            let position = match found {
                Some(position) => position,
                None => {
                    folder.folders.push(Folder {
                        path: prefix.to_string(),
                        ..Folder::default()
                    });
                    folder.folders.len() - 1
                }
            };
            folder = &mut folder.folders[position];
        }
        folder.notes.push(index);
    }
    sort(&mut root, notes);
    root
}

fn sort(folder: &mut Folder, notes: &[NoteEntry]) {
    folder
        .folders
        .sort_by(|a, b| by_name(file_name(&a.path), file_name(&b.path)));
    folder
        .notes
        .sort_by(|&a, &b| by_name(notes[a].stem(), notes[b].stem()));
    for child in &mut folder.folders {
        sort(child, notes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(path: &str, modified_ns: i64) -> NoteEntry {
        NoteEntry {
            path: path.into(),
            title: String::new(),
            aliases: vec![],
            modified_ns,
        }
    }

    fn labels(tree: &FileTree) -> Vec<String> {
        tree.rows()
            .iter()
            .map(|row| {
                let mark = match &row.kind {
                    RowKind::Header(_) => "#",
                    RowKind::Recent { .. } => "*",
                    RowKind::Folder { expanded: true, .. } => "v",
                    RowKind::Folder { .. } => ">",
                    RowKind::Note { .. } => "-",
                };
                format!("{}{mark}{}", "  ".repeat(row.depth), row.label)
            })
            .collect()
    }

    fn vault() -> FileTree {
        let mut tree = FileTree::new();
        tree.set_notes(vec![
            note("welcome.md", 10),
            note("Projects/Plan.md", 50),
            note("Projects/alpha/Spec.md", 20),
            note("Daily/2026-03-01.md", 30),
            note("Apple.md", 40),
            note("zebra.md", 5),
            note("Projects/Budget.md", 1),
        ]);
        tree
    }

    /// The one-pass "Recent" equals sorting every note by its touch, for notes written and
    /// opened in every order, ties included.
    #[test]
    fn recent_is_the_newest_by_touch_as_a_full_sort_gives_them() {
        let mut tree = FileTree::new();
        // Write times with ties (i % 7), a deterministic spread.
        tree.set_notes(
            (0..300)
                .map(|i| note(&format!("n{:03}.md", (i * 37) % 300), (i % 7) * 10))
                .collect(),
        );
        for (i, path) in ["n005.md", "n150.md", "n299.md", "n000.md"]
            .iter()
            .enumerate()
        {
            tree.set_active(Some(path), Some(25 + i as i64 * 20));
        }
        tree.touch("n042.md", 65);
        for limit in [1, 3, 8, 20] {
            let mut sorted: Vec<&NoteEntry> = tree.notes().iter().collect();
            sorted.sort_by(|a, b| {
                tree.touched_ns(b)
                    .cmp(&tree.touched_ns(a))
                    .then_with(|| a.path.cmp(&b.path))
            });
            sorted.truncate(limit);
            let want: Vec<&str> = sorted.iter().map(|n| n.path.as_str()).collect();
            let got: Vec<&str> = tree.recent(limit).iter().map(|n| n.path.as_str()).collect();
            assert_eq!(got, want, "limit {limit}");
        }
    }

    #[test]
    fn folders_come_before_notes_and_names_sort_ignoring_case() {
        let mut tree = vault();
        tree.expand("Projects");
        let rows = labels(&tree);
        let notes_at = rows.iter().position(|r| r == "#Notes").unwrap();
        assert_eq!(
            rows[notes_at + 1..],
            [
                ">Daily",
                "vProjects",
                "  >alpha",
                "  -Budget",
                "  -Plan",
                "-Apple",
                "-welcome",
                "-zebra",
            ]
        );
    }

    #[test]
    fn folders_start_closed_and_toggle() {
        let mut tree = vault();
        assert!(!labels(&tree).contains(&"  -Plan".to_string()));
        tree.toggle("Projects");
        assert!(labels(&tree).contains(&"  -Plan".to_string()));
        tree.toggle("Projects");
        assert!(!labels(&tree).contains(&"  -Plan".to_string()));
    }

    #[test]
    fn recent_lists_the_newest_modified_notes_first() {
        let tree = vault();
        let rows = labels(&tree);
        assert_eq!(
            rows[..6],
            [
                "#Recent",
                "*Plan",
                "*Apple",
                "*2026-03-01",
                "*Spec",
                "*welcome"
            ]
        );
    }

    #[test]
    fn opening_a_note_puts_it_first_in_recent() {
        let mut tree = vault();
        tree.set_active(Some("zebra.md"), Some(100));
        assert_eq!(tree.recent(2)[0].path, "zebra.md");
        assert_eq!(tree.recent(2)[1].path, "Projects/Plan.md");
        // A later change on disk of another note moves that one up again.
        let mut notes = tree.notes().to_vec();
        notes
            .iter_mut()
            .filter(|n| n.path == "Apple.md")
            .for_each(|n| n.modified_ns = 200);
        tree.set_notes(notes);
        assert_eq!(tree.recent(2)[0].path, "Apple.md");
        assert_eq!(tree.recent(2)[1].path, "zebra.md");
        // A save touches one note without a new listing; an unlisted path changes nothing.
        tree.touch("zebra.md", 300);
        tree.touch("Nowhere.md", 400);
        assert_eq!(tree.recent(2)[0].path, "zebra.md");
        assert_eq!(tree.notes().len(), vault().notes().len());
    }

    #[test]
    fn following_the_active_note_opens_its_folders() {
        let mut tree = vault();
        tree.set_active(Some("Projects/alpha/Spec.md"), None);
        assert_eq!(tree.active(), Some("Projects/alpha/Spec.md"));
        assert!(tree.is_expanded("Projects"));
        assert!(tree.is_expanded("Projects/alpha"));
        assert!(!tree.is_expanded("Daily"));
        let rows = labels(&tree);
        assert!(rows.contains(&"    -Spec".to_string()), "{rows:?}");
        // Without `now`, following does not count as opening (Recent is unchanged).
        assert_eq!(tree.recent(1)[0].path, "Projects/Plan.md");
    }

    #[test]
    fn a_new_listing_keeps_open_folders_and_an_added_note_is_listed_at_once() {
        let mut tree = vault();
        tree.expand("Daily");
        tree.set_notes(vault().notes().to_vec());
        assert!(tree.is_expanded("Daily"));
        tree.add_note(note("Daily/2026-03-02.md", 300));
        let rows = labels(&tree);
        assert_eq!(rows[1], "*2026-03-02");
        assert!(rows.contains(&"  -2026-03-02".to_string()), "{rows:?}");
    }

    #[test]
    fn an_empty_vault_has_no_rows() {
        let mut tree = FileTree::new();
        assert!(!tree.is_loaded());
        tree.set_notes(vec![]);
        assert!(tree.is_loaded());
        assert!(tree.rows().is_empty());
    }

    #[test]
    fn stems_and_titles() {
        let mut n = note("Projects/Plan.md", 0);
        assert_eq!(n.stem(), "Plan");
        assert_eq!(n.display_title(), "Plan");
        n.title = "Garden plan".into();
        assert_eq!(n.display_title(), "Garden plan");
        assert_eq!(parent_folder("a/b/c.md"), "a/b");
        assert_eq!(parent_folder("c.md"), "");
    }
}
