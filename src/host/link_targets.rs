//! Which `[[links]]` open a note: the vault's note paths keyed for the one resolution rule the
//! index and `move_note` use (`vault::links::NameIndex`), built by the host from the listing it
//! sends the app (off the UI loop), so the editor tells an unresolved link on a visible row with a
//! hash lookup and never reads the disk to draw.

use crate::vault::links::{LinkResolution, NameIndex};

/// The notes a link may name.
#[derive(Debug, Default)]
pub struct LinkTargets {
    notes: NameIndex,
    /// How many links were looked up (tests check that a frame looks up only what it draws).
    #[cfg(test)]
    pub lookups: std::sync::atomic::AtomicUsize,
}

impl LinkTargets {
    /// Every note path of the vault (vault-relative, `/`).
    pub fn new(paths: impl IntoIterator<Item = String>) -> Self {
        Self {
            notes: NameIndex::new(paths),
            #[cfg(test)]
            lookups: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Whether `[[target]]` written in the note at `from` names something: a note (unique or
    /// ambiguous: Obsidian opens one), the note itself (`[[#Heading]]`), or an attachment — the
    /// listing holds notes only, so a name Obsidian shows as an attachment is never called
    /// unresolved.
    pub fn resolves(&self, target: &str, from: &str) -> bool {
        #[cfg(test)]
        self.lookups
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = target.split(['|', '#', '^']).next().unwrap_or("").trim();
        if name.is_empty()
            || crate::index::graph::is_attachment_name(name)
            || names_another_file(name)
        {
            return true;
        }
        !matches!(
            self.notes.resolve(target, Some(from)),
            LinkResolution::Missing
        )
    }
}

/// Whether `name` ends in a file extension other than `.md` (`data.csv`, `Board.base`): a file
/// the listing of notes does not hold, which may well exist, so it is not drawn as unresolved.
/// A dot in a note's name (`Standup 2026.12.01`, `Dr. Who`) is not an extension: one has a letter
/// and no space.
fn names_another_file(name: &str) -> bool {
    let file = name.rsplit('/').next().unwrap_or(name);
    match file.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=8).contains(&ext.len())
                && ext.bytes().all(|b| b.is_ascii_alphanumeric())
                && ext.bytes().any(|b| b.is_ascii_alphabetic())
                && !ext.eq_ignore_ascii_case("md")
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_resolve_by_the_vaults_rule() {
        let targets = LinkTargets::new(
            [
                "Projects/Launch.md",
                "Plan.md",
                "Archive/Plan.md",
                "Daily/2026-12-01.md",
            ]
            .map(String::from),
        );
        let from = "Projects/Notes.md";
        for target in [
            "Launch",
            "launch",
            "Projects/Launch",
            "Launch#Budget",
            "Launch|the launch",
            "Launch#^block",
            "Plan",
            "./Launch",
            "#Heading",
            "diagram.png",
            "data.csv",
            "Board.base",
            "Daily/2026-12-01",
        ] {
            assert!(targets.resolves(target, from), "{target}");
        }
        for target in [
            "Note that does not exist",
            "Other/Launch",
            "../Launch",
            "Launch.pdf.md",
            "Standup 2026.12.01",
            "Dr. Who",
            "Gone.md",
        ] {
            assert!(!targets.resolves(target, from), "{target}");
        }
    }
}
