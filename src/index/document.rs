//! One note turned into the fields the index stores.

use super::cjk;
use super::query::name_key;
use crate::vault::markdown;

/// The indexed form of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The title as people see it.
    pub title: String,
    /// The title as the FTS index tokenises it.
    pub title_fts: String,
    /// Aliases space-joined, as the FTS index tokenises them.
    pub aliases: String,
    /// Aliases as written, for resolving a name to a note.
    pub alias_list: Vec<String>,
    /// Tags as written (space-separated), for ranking words that are also tags.
    pub tags_text: String,
    /// Lower-cased tags for `tag:` filters.
    pub tags: Vec<String>,
    pub body: String,
    /// The names a person may type to mean this note (title, file name, aliases), each as
    /// [`super::query::name_key`] makes it, between `\u{1}` separators: `\u{1}plan\u{1}q3 plan\u{1}`.
    pub name_keys: String,
    /// The note's `- [ ]` tasks.
    pub tasks: Vec<IndexedTask>,
    /// Every link of the note with its line (the link graph).
    pub links: Vec<super::graph::NoteLink>,
    /// The key links find the note by ([`crate::vault::links::note_file_key`]).
    pub file_key: String,
}

/// One task as the `tasks` table stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedTask {
    pub line: usize,
    pub status: String,
    pub text: String,
    pub due: Option<String>,
    /// The task line's own tags and the note's frontmatter tags, lower-cased, each followed by a
    /// space (`a b/c `).
    pub tags: String,
}

/// Build the document for the note at `rel` from its bytes. Text that is not valid UTF-8 is
/// indexed lossily: it can still be found, although vaultchat will refuse to edit it.
pub fn build(rel: &str, bytes: &[u8]) -> Document {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let parsed = markdown::parse(text);
    let title = parsed
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| stem_of(rel).to_string());
    let body_text = text.get(parsed.body_start..).unwrap_or(text);
    let body = cjk::segment(body_text).unwrap_or_else(|| body_text.to_string());
    let mut tags: Vec<String> = parsed.tags.iter().map(|t| t.to_lowercase()).collect();
    tags.sort_unstable();
    tags.dedup();
    let mut names = vec![name_key(&title), name_key(stem_of(rel))];
    names.extend(parsed.aliases.iter().map(|a| name_key(a)));
    names.retain(|n| !n.is_empty());
    names.sort_unstable();
    names.dedup();
    let name_keys = if names.is_empty() {
        String::new()
    } else {
        format!("\u{1}{}\u{1}", names.join("\u{1}"))
    };
    // A task's tags are those of its own line and the note's frontmatter `tags` (not every
    // inline tag of the note: `#bills` on one task does not tag the others).
    let frontmatter_tags = parsed
        .frontmatter
        .as_ref()
        .map(|f| f.tags.as_slice())
        .unwrap_or_default();
    // The note's own parse found every inline tag with its place: a task's are those after its
    // checkbox on its first line (its `text`), not found again by parsing that text.
    let tasks = parsed
        .tasks
        .iter()
        .cloned()
        .map(|task| {
            let line_end = text[task.checkbox.end..]
                .find('\n')
                .map_or(text.len(), |n| task.checkbox.end + n);
            let mut tags: Vec<String> = parsed
                .inline_tags
                .iter()
                .filter(|t| task.checkbox.end <= t.span.start && t.span.start < line_end)
                .map(|t| t.name.as_str())
                .chain(frontmatter_tags.iter().map(String::as_str))
                .map(|t| t.to_lowercase() + " ")
                .collect();
            tags.sort_unstable();
            tags.dedup();
            IndexedTask {
                line: task.line,
                status: task.status.name(),
                tags: tags.concat(),
                text: task.text,
                due: task.due,
            }
        })
        .collect();
    let links = super::graph::extract(text, &parsed);
    Document {
        links,
        file_key: crate::vault::links::note_file_key(rel),
        tasks,
        name_keys,
        title_fts: cjk::segment(&title).unwrap_or_else(|| title.clone()),
        title,
        aliases: parsed.aliases.join(" "),
        alias_list: parsed.aliases.clone(),
        tags_text: parsed.tags.join(" "),
        tags,
        body,
    }
}

/// The file name without folder and without the `.md` extension.
pub fn stem_of(rel: &str) -> &str {
    crate::vault::name::stem(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems() {
        assert_eq!(stem_of("a/b/Plan.md"), "Plan");
        assert_eq!(stem_of("Plan.MD"), "Plan");
        assert_eq!(stem_of("x"), "x");
    }

    #[test]
    fn title_falls_back_to_the_file_stem() {
        let doc = build("Folder/My Note.md", b"just text\n");
        assert_eq!(doc.title, "My Note");
        assert_eq!(doc.body, "just text\n");
    }

    #[test]
    fn names_are_title_stem_and_aliases() {
        let doc = build(
            "Docs/git-grep.md",
            b"---\ntitle: Git  Grep\naliases: [GG, git-grep]\n---\nbody\n",
        );
        assert_eq!(doc.name_keys, "\u{1}gg\u{1}git grep\u{1}git-grep\u{1}");
    }

    #[test]
    fn a_task_is_tagged_by_its_own_line_and_the_frontmatter() {
        let doc = build(
            "t.md",
            "---\ntags: [Home]\n---\n#intro before\n- [ ] pay #bills `#code` 📅 2026-12-03 #Money/Rent\n  \
             #continued on the next line\n- [x] call #family\n- [ ] none here\nafter #outro\n"
                .as_bytes(),
        );
        let tags: Vec<(usize, &str)> = doc
            .tasks
            .iter()
            .map(|t| (t.line, t.tags.as_str()))
            .collect();
        assert_eq!(
            tags,
            [
                (5, "bills home money/rent "),
                (7, "family home "),
                (8, "home ")
            ]
        );
    }

    #[test]
    fn invalid_utf8_is_indexed_lossily() {
        let doc = build("x.md", b"caf\xe9 au lait");
        assert!(doc.body.contains("au lait"));
    }
}
