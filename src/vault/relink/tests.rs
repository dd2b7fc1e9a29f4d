#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use pretty_assertions::assert_eq;

fn paths(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_string()).collect()
}

struct Case {
    before: Vec<String>,
    after: Vec<String>,
    from: &'static str,
    to: &'static str,
}

impl Case {
    fn new(notes: &[&str], from: &'static str, to: &'static str) -> Case {
        let before = paths(notes);
        let mut after: Vec<String> = before
            .iter()
            .map(|p| if p == from { to.to_string() } else { p.clone() })
            .collect();
        after.sort();
        Case {
            before,
            after,
            from,
            to,
        }
    }

    fn relink(&self, note: &str, text: &str) -> Option<Relinked> {
        relink(
            text,
            note,
            &Move {
                from: self.from,
                to: self.to,
                before: &self.before,
                after: &self.after,
            },
        )
    }
}

#[test]
fn every_wikilink_form_is_rewritten_keeping_headings_and_aliases() {
    let case = Case::new(
        &["Old.md", "A.md", "Other.md"],
        "Old.md",
        "Archive/New name.md",
    );
    let text = "[[Old]] [[Old|the old one]] [[Old#Goals]] [[Old#Goals|goals]] ![[Old]] \
                ![[Old#^blk]] [[old.md]] [[Old\\|cell]] [[Other]] [[ Old ]]\n";
    let out = case.relink("A.md", text).unwrap();
    assert_eq!(
        out.text,
        "[[New name]] [[New name|the old one]] [[New name#Goals]] [[New name#Goals|goals]] \
         ![[New name]] ![[New name#^blk]] [[New name]] [[New name\\|cell]] [[Other]] [[ New name ]]\n"
    );
    assert_eq!(
        out.to_moved,
        LinkCounts {
            wikilink: 3,
            wikilink_alias: 2,
            wikilink_heading: 1,
            wikilink_heading_alias: 1,
            embed: 2,
            markdown: 0
        }
    );
    assert_eq!(out.others, 0);
}

#[test]
fn code_is_not_linked() {
    let case = Case::new(&["Old.md", "A.md"], "Old.md", "New.md");
    let text =
        "`[[Old]]` and\n\n```\n[[Old]] [x](Old.md)\n```\n\n    [[Old]] indented\n\n[[Old]]\n";
    let out = case.relink("A.md", text).unwrap();
    assert_eq!(
        out.text,
        "`[[Old]]` and\n\n```\n[[Old]] [x](Old.md)\n```\n\n    [[Old]] indented\n\n[[New]]\n"
    );
    assert_eq!(out.to_moved.total(), 1);
    assert_eq!(case.relink("A.md", "`[[Old]]` `[y](Old.md)`\n"), None);
}

#[test]
fn a_name_another_note_has_is_written_as_a_path() {
    let case = Case::new(
        &["Old.md", "A.md", "Projects/Plan.md"],
        "Old.md",
        "Archive/Plan.md",
    );
    let out = case.relink("A.md", "[[Old]]\n").unwrap();
    assert_eq!(out.text, "[[Archive/Plan]]\n");
    // And a link to the other `Plan` that the new name would make ambiguous keeps its meaning.
    let out = case.relink("A.md", "[[Plan#Top|p]]\n").unwrap();
    assert_eq!(out.text, "[[Projects/Plan#Top|p]]\n");
    assert_eq!(out.to_moved.total(), 0);
    assert_eq!(out.others, 1);
}

#[test]
fn markdown_links_are_relative_and_encoded() {
    let case = Case::new(
        &["Notes/My note.md", "Notes/A.md", "B.md", "Deep/er/C.md"],
        "Notes/My note.md",
        "Archive/2024/Renamed note.md",
    );
    let text = "[a](My%20note.md) [b](<My note.md>) [c](./My%20note.md#Part \"t\") ![i](My%20note.md) \
                [web](https://x.org/My%20note.md) [d](A.md)\n";
    let out = case.relink("Notes/A.md", text).unwrap();
    assert_eq!(
        out.text,
        "[a](../Archive/2024/Renamed%20note.md) [b](<../Archive/2024/Renamed note.md>) \
         [c](../Archive/2024/Renamed%20note.md#Part \"t\") ![i](../Archive/2024/Renamed%20note.md) \
         [web](https://x.org/My%20note.md) [d](A.md)\n"
    );
    assert_eq!(out.to_moved.markdown, 4);
    let out = case
        .relink(
            "Deep/er/C.md",
            "[up](../../Notes/My%20note.md) [root](/Notes/My%20note.md)",
        )
        .unwrap();
    assert_eq!(
        out.text,
        "[up](../../Archive/2024/Renamed%20note.md) [root](../../Archive/2024/Renamed%20note.md)"
    );
}

#[test]
fn the_moved_notes_own_relative_links_follow_it() {
    let case = Case::new(
        &["Notes/Old.md", "Notes/Sib.md", "Top.md"],
        "Notes/Old.md",
        "Archive/x/New.md",
    );
    let text = "[s](Sib.md) [t](../Top.md) [[Sib]] [[./Sib]] [[#Local]] [self](Old.md)\n";
    let out = case.relink("Notes/Old.md", text).unwrap();
    assert_eq!(
        out.text,
        "[s](../../Notes/Sib.md) [t](../../Top.md) [[Sib]] [[Sib]] [[#Local]] [self](New.md)\n"
    );
    assert_eq!(out.to_moved.markdown, 1);
    assert_eq!(out.others, 3);
}

#[test]
fn unrelated_notes_are_untouched() {
    let case = Case::new(&["Old.md", "A.md", "Other.md"], "Old.md", "New.md");
    assert_eq!(
        case.relink("A.md", "[[Other]] [x](Other.md) [[Nowhere]] plain\n"),
        None
    );
}

#[test]
fn relative_paths() {
    assert_eq!(relative_path("A.md", "B/C.md"), "B/C.md");
    assert_eq!(relative_path("X/A.md", "B/C.md"), "../B/C.md");
    assert_eq!(relative_path("X/Y/A.md", "X/C.md"), "../C.md");
    assert_eq!(relative_path("X/A.md", "X/C.md"), "C.md");
    assert_eq!(relative_path("X/A.md", "C.md"), "../C.md");
    assert_eq!(percent_decode("a%20b"), "a b");
    // A malformed escape anywhere: the destination is a path as written.
    assert_eq!(percent_decode("a%20b%zz%"), "a%20b%zz%");
    assert_eq!(percent_decode("Note%+1.md"), "Note%+1.md");
    assert_eq!(percent_decode("Note%-1.md"), "Note%-1.md");
    assert_eq!(percent_encode("a b(1)#.md"), "a%20b%281%29%23.md");
}

#[test]
fn a_sign_in_an_escape_is_not_a_byte() {
    // `%+1` read as hex by a lax decoder is byte 0x01: the link would name `Note\u{1}.md`.
    let case = Case::new(
        &["Note%+1.md", "Note\u{1}.md", "A.md"],
        "Note%+1.md",
        "Moved.md",
    );
    let out = case.relink("A.md", "[pct](Note%+1.md)\n").unwrap();
    assert_eq!(out.text, "[pct](Moved.md)\n");
    assert_eq!(out.to_moved.markdown, 1);
    // Moving the control-character file never captures the link meant for `Note%+1.md`.
    let case = Case::new(
        &["Note%+1.md", "Note\u{1}.md", "A.md"],
        "Note\u{1}.md",
        "Ctl.md",
    );
    assert_eq!(case.relink("A.md", "[pct](Note%+1.md)\n"), None);
    // And a `%` in the new name is written escaped, so the rewritten link reads back the same.
    let case = Case::new(&["A.md", "Plan.md"], "Plan.md", "Plan%+1.md");
    let out = case.relink("A.md", "[p](Plan.md)\n").unwrap();
    assert_eq!(out.text, "[p](Plan%25+1.md)\n");
}
