//! The banner showing a move: one diff over several files, the path change on top, each file
//! named above its hunks, answers per hunk and per file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::agent::{Proposal, ProposalFile};
use crate::tui::testing::buffer_text;
use pretty_assertions::assert_eq;
use serde_json::json;

/// A move of `Projects/Garden plan.md` to `Archive/2024/Garden (old).md` with the link fixes
/// a vault would need: its own relative link, and three notes that link to it.
fn move_request(id: u64) -> PermissionRequest {
    let files = [
        (
            "Projects/Garden plan.md",
            "Archive/2024/Garden (old).md",
            "# Garden plan\n\nSeeds are listed in [the budget](Budget.md).\n",
            "# Garden plan\n\nSeeds are listed in [the budget](../../Projects/Budget.md).\n",
        ),
        (
            "Daily/2024-03-02.md",
            "Daily/2024-03-02.md",
            "# Saturday\n\n- ordered seeds, see [[Garden plan#Seeds|the list]]\n- called Dana\n",
            "# Saturday\n\n- ordered seeds, see [[Garden (old)#Seeds|the list]]\n- called Dana\n",
        ),
        (
            "Projects/Budget.md",
            "Projects/Budget.md",
            "# Budget\n\n| item | cost |\n| --- | --- |\n| seeds | 40 |\n\nFrom [[Garden plan]].\n\n## Notes\n\n![[Garden plan]]\n",
            "# Budget\n\n| item | cost |\n| --- | --- |\n| seeds | 40 |\n\nFrom [[Garden (old)]].\n\n## Notes\n\n![[Garden (old)]]\n",
        ),
        (
            "Index.md",
            "Index.md",
            "- [Garden](Projects/Garden%20plan.md)\n",
            "- [Garden](Archive/2024/Garden%20%28old%29.md)\n",
        ),
    ];
    let mut diff = TextDiff::new("", "");
    let mut proposal_files = Vec::new();
    for (path, path_after, before, after) in files {
        let file_diff = TextDiff::new(before, after);
        proposal_files.push(ProposalFile {
            path: path.into(),
            path_after: path_after.into(),
            hunks: file_diff.hunks.len(),
        });
        diff.added += file_diff.added;
        diff.removed += file_diff.removed;
        diff.hunks.extend(file_diff.hunks);
    }
    PermissionRequest {
        id,
        call_id: format!("call_{id}"),
        tool: "move_note".into(),
        input: json!({"note": "Projects/Garden plan.md", "to": "Archive/2024/Garden (old).md"}),
        paths: vec![
            "Projects/Garden plan.md".into(),
            "Archive/2024/Garden (old).md".into(),
        ],
        proposal: Some(Proposal {
            summary: "move Projects/Garden plan.md to Archive/2024/Garden (old).md (5 links in 3 other notes)".into(),
            path: "Projects/Garden plan.md".into(),
            diff,
            files: proposal_files,
        }),
        offer_session: true,
        offer_always: true,
        reason: "move_note changes the vault".into(),
    }
}

fn press(banner: &mut Banner, c: char) -> Option<BannerOutcome> {
    super::tests::press(banner, KeyCode::Char(c))
}

fn draw(banner: &mut Banner, width: u16, height: u16) -> String {
    buffer_text(&super::tests::draw(banner, width, height))
}

#[test]
fn the_move_is_on_top_and_each_file_is_named_above_its_hunks() {
    let mut banner = Banner::new();
    banner.push(move_request(1));
    let text = draw(&mut banner, 120, 40);
    let top = text.find("move Projects/Garden plan.md → Archive/2024/Garden (old).md");
    let first = text.find("■ Projects/Garden plan.md → Archive/2024/Garden (old).md");
    let daily = text.find("■ Daily/2024-03-02.md");
    let budget = text.find("■ Projects/Budget.md");
    assert!(
        top.is_some() && top < first && first < daily && daily < budget,
        "{text}"
    );
    assert!(text.contains("hunk 1 of 4 · 4 files"), "{text}");
    assert!(text.contains("[f] toggle file"), "{text}");
    // The last file comes into view with its hunk, its name above it.
    for _ in 0..3 {
        press(&mut banner, 'j');
    }
    let text = draw(&mut banner, 120, 40);
    assert!(text.contains("hunk 4 of 4"), "{text}");
    assert!(text.contains("■ Index.md"), "{text}");
}

#[test]
fn a_file_is_accepted_or_rejected_as_a_whole_and_hunks_one_by_one() {
    let mut banner = Banner::new();
    banner.push(move_request(1));
    // To the Budget note's hunk (the third), and reject that file.
    press(&mut banner, 'j');
    press(&mut banner, 'j');
    assert_eq!(banner.shown.current_hunk, 2);
    press(&mut banner, 'f');
    assert_eq!(banner.shown.accepted, vec![true, true, false, true]);
    assert!(draw(&mut banner, 120, 40).contains("■ Projects/Budget.md ✗ not changed"));
    // Again: the whole file is back.
    press(&mut banner, 'f');
    assert_eq!(banner.shown.accepted, vec![true; 4]);
    // One hunk of another file, then approve: the answer carries one flag per hunk.
    press(&mut banner, 'j');
    press(&mut banner, ' ');
    let outcome = press(&mut banner, 'y').unwrap();
    assert_eq!(outcome.answer, Answer::Once);
    assert_eq!(outcome.hunks, Some(vec![true, true, true, false]));
}

#[test]
fn snapshot_multi_file_move() {
    let mut banner = Banner::new();
    banner.push(move_request(1));
    insta::assert_snapshot!("banner_move_80x24", draw(&mut banner, 80, 24));
    insta::assert_snapshot!("banner_move_120x40", draw(&mut banner, 120, 40));
}

#[test]
fn snapshot_multi_file_move_with_a_file_rejected() {
    let mut banner = Banner::new();
    banner.push(move_request(1));
    press(&mut banner, 'j');
    press(&mut banner, 'f');
    insta::assert_snapshot!("banner_move_file_rejected_80x24", draw(&mut banner, 80, 24));
}

#[test]
fn snapshot_multi_file_move_side_by_side() {
    let mut banner = Banner::new();
    banner.push(move_request(1));
    press(&mut banner, 'j');
    press(&mut banner, 'd');
    let text = draw(&mut banner, 120, 40);
    assert!(text.contains("■ Daily/2024-03-02.md"), "{text}");
    insta::assert_snapshot!("banner_move_side_by_side_120x40", text);
}
