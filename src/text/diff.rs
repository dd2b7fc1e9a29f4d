//! Line diffs of a note's text: hunks for the approval banner, applying only the hunks a person
//! accepted, and a three-way merge for a note that changed while the agent worked on it.
//!
//! A line is everything up to and including its `\n`; a `\r` before it, a missing newline at the
//! end and a BOM at the start are just bytes of the line. So a diff of a CRLF note compares CRLF
//! lines, and applying hunks rebuilds the exact bytes of either side.
//!
//! Pure functions: no I/O and nothing about how a diff is shown beyond [`TextDiff::unified`].
//! Word-level detail inside changed lines is in [`crate::text::word_diff`].

use crate::text::word_diff::{HunkWords, diff_words};
use serde::Serialize;
use similar::{Algorithm, DiffOp};
use std::ops::Range;
use std::time::{Duration, Instant};

/// Lines of context around each change in [`TextDiff::new`].
const DEFAULT_CONTEXT: usize = 3;

/// Myers diff is quadratic in the worst case; past this budget similar returns a correct but less
/// minimal diff, so a pathological note cannot freeze the approval banner.
const DIFF_BUDGET: Duration = Duration::from_millis(500);

/// What a line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Unchanged, shown around changes.
    Context,
    /// Only in the new text.
    Added,
    /// Only in the old text.
    Removed,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffLine {
    pub kind: LineKind,
    /// The line without its terminator (`\n` or `\r\n`).
    pub text: String,
}

/// A group of nearby changes with the unchanged lines around them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// 0-based index of the hunk's first line in the old text (context included).
    pub old_start: usize,
    /// How many lines of the old text the hunk covers (context included).
    pub old_len: usize,
    /// 0-based index of the hunk's first line in the new text (context included).
    pub new_start: usize,
    /// How many lines of the new text the hunk covers (context included).
    pub new_len: usize,
    /// Context, removed and added lines in display order.
    pub lines: Vec<DiffLine>,
    /// Added lines in this hunk.
    pub added: usize,
    /// Removed lines in this hunk.
    pub removed: usize,
}

/// The line diff between two texts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TextDiff {
    pub hunks: Vec<Hunk>,
    /// Added lines in all hunks.
    pub added: usize,
    /// Removed lines in all hunks.
    pub removed: usize,
}

impl TextDiff {
    /// Diff with 3 lines of context (unified-diff grouping: changes separated by at most
    /// 2 × context unchanged lines share a hunk).
    pub fn new(before: &str, after: &str) -> Self {
        Self::with_context(before, after, DEFAULT_CONTEXT)
    }

    /// Diff with `context` unchanged lines around each change.
    pub fn with_context(before: &str, after: &str, context: usize) -> Self {
        let old = split_lines(before);
        let new = split_lines(after);
        let ops = line_ops(&old, &new);
        let hunks: Vec<Hunk> = similar::group_diff_ops(ops, context)
            .iter()
            .filter_map(|group| hunk_of(group, &old, &new))
            .collect();
        let added = hunks.iter().map(|h| h.added).sum();
        let removed = hunks.iter().map(|h| h.removed).sum();
        Self {
            hunks,
            added,
            removed,
        }
    }

    /// True when both texts are identical.
    pub fn is_empty(&self) -> bool {
        self.hunks.is_empty()
    }

    /// Word-level detail of every hunk (which changed lines pair up, and which of their words
    /// changed), for showing the diff; see [`crate::text::word_diff`].
    pub fn words(&self) -> Vec<HunkWords> {
        diff_words(&self.hunks)
    }

    /// `+N -M`: lines added and removed.
    pub fn summary(&self) -> String {
        format!("+{} -{}", self.added, self.removed)
    }

    /// A unified diff (`@@ -a,b +c,d @@` headers with 1-based line numbers as GNU diff writes
    /// them, then ` `/`+`/`-` prefixed lines), for a terminal or a model. No file headers: the
    /// caller knows which note it is.
    pub fn unified(&self) -> String {
        let mut out = String::new();
        for hunk in &self.hunks {
            out.push_str(&format!(
                "@@ -{} +{} @@\n",
                unified_range(hunk.old_start, hunk.old_len),
                unified_range(hunk.new_start, hunk.new_len)
            ));
            for line in &hunk.lines {
                out.push(match line.kind {
                    LineKind::Context => ' ',
                    LineKind::Added => '+',
                    LineKind::Removed => '-',
                });
                out.push_str(&line.text);
                out.push('\n');
            }
        }
        out
    }
}

/// `start,len` as unified diffs write it: 1-based, and an empty range names the line before it.
fn unified_range(start: usize, len: usize) -> String {
    let first = if len == 0 { start } else { start + 1 };
    format!("{first},{len}")
}

/// The text obtained by applying only the hunks whose flag is true: all true gives exactly
/// `after`, all false exactly `before`. `diff` must have been made from (`before`, `after`); a
/// missing flag counts as rejected.
pub fn apply_hunks(before: &str, after: &str, diff: &TextDiff, accepted: &[bool]) -> String {
    let old = split_lines(before);
    let new = split_lines(after);
    let mut out = String::with_capacity(before.len().max(after.len()));
    let mut pos = 0;
    for (index, hunk) in diff.hunks.iter().enumerate() {
        // Clamped so a diff of other texts gives a wrong result rather than a panic.
        let old_start = hunk.old_start.clamp(pos, old.len());
        let old_end = (hunk.old_start + hunk.old_len).clamp(old_start, old.len());
        push_lines(&mut out, &old[pos..old_start]);
        if accepted.get(index).copied().unwrap_or(false) {
            let new_start = hunk.new_start.min(new.len());
            let new_end = (hunk.new_start + hunk.new_len).clamp(new_start, new.len());
            push_lines(&mut out, &new[new_start..new_end]);
        } else {
            push_lines(&mut out, &old[old_start..old_end]);
        }
        pos = old_end;
    }
    push_lines(&mut out, &old[pos..]);
    out
}

/// Both sides of a three-way merge changed the same (or adjacent) lines of the common version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("both sides changed lines {base_start}..{base_end} of the common version")]
pub struct MergeConflict {
    /// 0-based index of the first base line involved.
    pub base_start: usize,
    /// 0-based index just past the last base line involved (equal to `base_start` when both
    /// sides inserted at the same point).
    pub base_end: usize,
}

/// Three-way merge by lines: the changes base→ours and base→theirs applied together when they
/// touch different lines. Insertions at the same point and overlapping or adjacent changed ranges
/// conflict, except identical changes on both sides, which merge once. `Ok(ours)` when theirs ==
/// base, `Ok(theirs)` when ours == base.
pub fn merge3(base: &str, ours: &str, theirs: &str) -> Result<String, MergeConflict> {
    if theirs == base || ours == theirs {
        return Ok(ours.to_string());
    }
    if ours == base {
        return Ok(theirs.to_string());
    }
    let base_lines = split_lines(base);
    let ours_lines = split_lines(ours);
    let theirs_lines = split_lines(theirs);
    let ours_changes = changes(&base_lines, &ours_lines);
    let theirs_changes = changes(&base_lines, &theirs_lines);

    for o in &ours_changes {
        for t in &theirs_changes {
            // Two ranges touch when neither ends before the other starts; empty ranges
            // (insertions) at the same point touch too.
            let touch = o.base.start <= t.base.end && t.base.start <= o.base.end;
            if touch && o != t {
                return Err(MergeConflict {
                    base_start: o.base.start.min(t.base.start),
                    base_end: o.base.end.max(t.base.end),
                });
            }
        }
    }

    let mut all: Vec<&Change> = ours_changes.iter().collect();
    all.extend(theirs_changes.iter().filter(|t| !ours_changes.contains(t)));
    // Stable, so an insertion keeps its place before a change that starts at the same line of the
    // same side; changes of different sides never touch here.
    all.sort_by_key(|c| (c.base.start, c.base.end));

    let mut out = String::with_capacity(ours.len().max(theirs.len()));
    let mut pos = 0;
    for change in all {
        push_lines(&mut out, &base_lines[pos..change.base.start]);
        out.push_str(&change.replacement);
        pos = change.base.end;
    }
    push_lines(&mut out, &base_lines[pos..]);
    Ok(out)
}

/// One changed range of a base text and what replaces it.
#[derive(Debug, PartialEq, Eq)]
struct Change {
    base: Range<usize>,
    replacement: String,
}

/// The changed ranges from `base` to `other`, in base order.
fn changes(base: &[&str], other: &[&str]) -> Vec<Change> {
    line_ops(base, other)
        .into_iter()
        .filter_map(|op| {
            let (tag, old, new) = op.as_tag_tuple();
            (tag != similar::DiffTag::Equal).then(|| Change {
                base: old,
                replacement: other[new].concat(),
            })
        })
        .collect()
}

/// Lines with their terminators, so joining them gives back the text byte for byte.
fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

fn line_ops(old: &[&str], new: &[&str]) -> Vec<DiffOp> {
    let deadline = Instant::now() + DIFF_BUDGET;
    similar::capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline))
}

fn push_lines(out: &mut String, lines: &[&str]) {
    for line in lines {
        out.push_str(line);
    }
}

/// A line without its terminator.
fn line_text(line: &str) -> String {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line).to_string()
}

/// One hunk from a group of ops; None for a group without changes.
fn hunk_of(group: &[DiffOp], old: &[&str], new: &[&str]) -> Option<Hunk> {
    let first = group.first()?;
    let last = group.last()?;
    let old_start = first.old_range().start;
    let new_start = first.new_range().start;
    let mut hunk = Hunk {
        old_start,
        old_len: last.old_range().end - old_start,
        new_start,
        new_len: last.new_range().end - new_start,
        lines: Vec::new(),
        added: 0,
        removed: 0,
    };
    for op in group {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            hunk.lines.extend(
                old[old_range]
                    .iter()
                    .map(|l| diff_line(LineKind::Context, l)),
            );
            continue;
        }
        hunk.removed += old_range.len();
        hunk.added += new_range.len();
        hunk.lines.extend(
            old[old_range]
                .iter()
                .map(|l| diff_line(LineKind::Removed, l)),
        );
        hunk.lines
            .extend(new[new_range].iter().map(|l| diff_line(LineKind::Added, l)));
    }
    (hunk.added + hunk.removed > 0).then_some(hunk)
}

/// How two texts differ, in brief: the lines added and removed, and the first changed lines
/// (removed before added, as a hunk shows them). Unlike [`TextDiff`] it keeps no copy of the
/// rest, so a brief of a large text costs its line diff and little memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffPreview {
    pub added: usize,
    pub removed: usize,
    /// At most the `max_lines` first changed lines.
    pub lines: Vec<DiffLine>,
}

impl DiffPreview {
    pub fn new(before: &str, after: &str, max_lines: usize) -> Self {
        let old = split_lines(before);
        let new = split_lines(after);
        let mut preview = Self {
            added: 0,
            removed: 0,
            lines: Vec::new(),
        };
        for op in line_ops(&old, &new) {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            if tag == similar::DiffTag::Equal {
                continue;
            }
            preview.removed += old_range.len();
            preview.added += new_range.len();
            let changed = old[old_range]
                .iter()
                .map(|l| (LineKind::Removed, l))
                .chain(new[new_range].iter().map(|l| (LineKind::Added, l)));
            let room = max_lines.saturating_sub(preview.lines.len());
            preview
                .lines
                .extend(changed.take(room).map(|(kind, line)| diff_line(kind, line)));
        }
        preview
    }
}

fn diff_line(kind: LineKind, line: &str) -> DiffLine {
    DiffLine {
        kind,
        text: line_text(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_preview_counts_every_change_and_keeps_the_first_lines() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nB\nc\nd\ne\nf\n";
        let full = TextDiff::new(before, after);
        let preview = DiffPreview::new(before, after, 2);
        assert_eq!((preview.added, preview.removed), (full.added, full.removed));
        let shown: Vec<(LineKind, &str)> = preview
            .lines
            .iter()
            .map(|l| (l.kind, l.text.as_str()))
            .collect();
        assert_eq!(shown, [(LineKind::Removed, "b"), (LineKind::Added, "B")]);
        assert_eq!(DiffPreview::new(before, before, 5).lines, []);
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn identical_texts_have_no_hunks() {
        let diff = TextDiff::new("a\nb\n", "a\nb\n");
        assert!(diff.is_empty());
        assert_eq!(diff.summary(), "+0 -0");
        assert_eq!(diff.unified(), "");
        assert!(TextDiff::new("", "").is_empty());
    }

    #[test]
    fn one_change_makes_one_hunk_with_context() {
        let before = numbered(10);
        let after = before.replace("line 5\n", "line five\n");
        let diff = TextDiff::new(&before, &after);
        assert_eq!(diff.hunks.len(), 1);
        let hunk = &diff.hunks[0];
        assert_eq!(
            (hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len),
            (1, 7, 1, 7)
        );
        assert_eq!((hunk.added, hunk.removed), (1, 1));
        assert_eq!(diff.summary(), "+1 -1");
        let kinds: Vec<LineKind> = hunk.lines.iter().map(|l| l.kind).collect();
        use LineKind::*;
        assert_eq!(
            kinds,
            vec![
                Context, Context, Context, Removed, Added, Context, Context, Context
            ]
        );
        assert_eq!(hunk.lines[3].text, "line 5");
        assert_eq!(hunk.lines[4].text, "line five");
    }

    #[test]
    fn unified_text_uses_one_based_headers() {
        let diff = TextDiff::new("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(diff.unified(), "@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n");
        // An insertion into an empty text names line 0, as GNU diff does.
        assert_eq!(TextDiff::new("", "x\n").unified(), "@@ -0,0 +1,1 @@\n+x\n");
    }

    #[test]
    fn distant_changes_make_separate_hunks_and_near_ones_share() {
        let before = numbered(20);
        let far = before
            .replace("line 2\n", "two\n")
            .replace("line 18\n", "eighteen\n");
        assert_eq!(TextDiff::new(&before, &far).hunks.len(), 2);
        // Six unchanged lines between the changes: the two contexts of 3 meet, one hunk.
        let near = before
            .replace("line 2\n", "two\n")
            .replace("line 9\n", "nine\n");
        assert_eq!(TextDiff::new(&before, &near).hunks.len(), 1);
        // Seven unchanged lines: two hunks.
        let apart = before
            .replace("line 2\n", "two\n")
            .replace("line 10\n", "ten\n");
        assert_eq!(TextDiff::new(&before, &apart).hunks.len(), 2);
        // Without context, every change is its own hunk and lines are only changes.
        let diff = TextDiff::with_context(&before, &near, 0);
        assert_eq!(diff.hunks.len(), 2);
        assert!(
            diff.hunks[0]
                .lines
                .iter()
                .all(|l| l.kind != LineKind::Context)
        );
    }

    #[test]
    fn crlf_lines_keep_their_bytes() {
        let before = "\u{feff}title\r\none\r\ntwo\r\nthree\r\n";
        let after = "\u{feff}title\r\none\r\n2\r\nthree\r\nfour\r\n";
        let diff = TextDiff::new(before, after);
        assert_eq!(diff.summary(), "+2 -1");
        // Terminators are not part of the shown text, the BOM is.
        assert_eq!(diff.hunks[0].lines[0].text, "\u{feff}title");
        assert!(diff.hunks[0].lines.iter().all(|l| !l.text.contains('\r')));
        assert_eq!(apply_hunks(before, after, &diff, &[true]), after);
        assert_eq!(apply_hunks(before, after, &diff, &[false]), before);
    }

    #[test]
    fn a_line_ending_change_is_a_change() {
        let diff = TextDiff::new("a\nb\n", "a\r\nb\n");
        assert_eq!(diff.summary(), "+1 -1");
    }

    #[test]
    fn missing_trailing_newline_edits_round_trip() {
        let cases = [
            ("a\nb", "a\nb\n"),
            ("a\nb\n", "a\nb"),
            ("a\nb", "a\nc"),
            ("a", "a\nmore"),
            ("", "only"),
            ("only", ""),
        ];
        for (before, after) in cases {
            let diff = TextDiff::new(before, after);
            assert!(!diff.is_empty(), "{before:?} → {after:?}");
            assert_eq!(apply_hunks(before, after, &diff, &[true]), after);
            assert_eq!(apply_hunks(before, after, &diff, &[false]), before);
        }
        let diff = TextDiff::new("a\nb", "a\nb\n");
        assert_eq!(diff.summary(), "+1 -1");
    }

    #[test]
    fn every_subset_of_three_hunks_applies_exactly_those_hunks() {
        let before = numbered(30);
        let after = before
            .replace("line 2\n", "two\n")
            .replace("line 15\n", "fifteen\nand a half\n")
            .replace("line 28\n", "");
        let diff = TextDiff::new(&before, &after);
        assert_eq!(diff.hunks.len(), 3);
        for mask in 0..8u8 {
            let flags: Vec<bool> = (0..3).map(|i| mask & (1 << i) != 0).collect();
            let mut expected = before.clone();
            if flags[0] {
                expected = expected.replace("line 2\n", "two\n");
            }
            if flags[1] {
                expected = expected.replace("line 15\n", "fifteen\nand a half\n");
            }
            if flags[2] {
                expected = expected.replace("line 28\n", "");
            }
            assert_eq!(
                apply_hunks(&before, &after, &diff, &flags),
                expected,
                "{flags:?}"
            );
        }
    }

    #[test]
    fn missing_flags_count_as_rejected() {
        let before = numbered(30);
        let after = before.replace("line 2\n", "two\n").replace("line 28\n", "");
        let diff = TextDiff::new(&before, &after);
        assert_eq!(diff.hunks.len(), 2);
        assert_eq!(
            apply_hunks(&before, &after, &diff, &[true]),
            before.replace("line 2\n", "two\n")
        );
    }

    /// A deterministic linear congruential generator (no test crates needed).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, below: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % below
        }
    }

    fn random_text(rng: &mut Lcg) -> String {
        // Few distinct lines, so diffs find both matches and changes; some CRLF, some without a
        // final newline.
        const LINES: [&str; 6] = ["a\n", "b\n", "c\r\n", "é中\n", "\n", "x"];
        let n = rng.next(9);
        let mut text = String::new();
        for _ in 0..n {
            let line = LINES[rng.next(LINES.len() as u64) as usize];
            text.push_str(line);
            if line == "x" && rng.next(2) == 0 {
                text.push('\n');
            }
        }
        text
    }

    #[test]
    fn generated_cases_apply_all_and_none_exactly() {
        let mut rng = Lcg(42);
        for case in 0..2000 {
            let before = random_text(&mut rng);
            let after = random_text(&mut rng);
            let context = rng.next(4) as usize;
            let diff = TextDiff::with_context(&before, &after, context);
            let n = diff.hunks.len();
            assert_eq!(
                apply_hunks(&before, &after, &diff, &vec![true; n]),
                after,
                "case {case}: {before:?} → {after:?}"
            );
            assert_eq!(
                apply_hunks(&before, &after, &diff, &vec![false; n]),
                before,
                "case {case}: {before:?} → {after:?}"
            );
            let added: usize = diff.hunks.iter().map(|h| h.added).sum();
            assert_eq!(added, diff.added);
            assert_eq!(diff.is_empty(), before == after, "case {case}");
        }
    }

    #[test]
    fn generated_single_line_edits_merge_unless_adjacent() {
        let base: String = (0..12).map(|i| format!("l{i}\n")).collect();
        let edit = |text: &str, line: usize, with: &str| {
            text.replace(&format!("l{line}\n"), &format!("{with}\n"))
        };
        let mut rng = Lcg(7);
        for _ in 0..300 {
            let (o, t) = (rng.next(12) as usize, rng.next(12) as usize);
            let ours = edit(&base, o, "ours");
            let theirs = edit(&base, t, "theirs");
            let merged = merge3(&base, &ours, &theirs);
            if o.abs_diff(t) <= 1 {
                assert_eq!(
                    merged,
                    Err(MergeConflict {
                        base_start: o.min(t),
                        base_end: o.max(t) + 1
                    }),
                    "{o} {t}"
                );
            } else {
                assert_eq!(merged, Ok(edit(&ours, t, "theirs")), "{o} {t}");
            }
        }
    }

    #[test]
    fn merge_takes_the_only_changed_side() {
        let base = "a\nb\n";
        assert_eq!(merge3(base, "a\nB\n", base).as_deref(), Ok("a\nB\n"));
        assert_eq!(merge3(base, base, "A\nb\n").as_deref(), Ok("A\nb\n"));
        assert_eq!(merge3(base, base, base).as_deref(), Ok(base));
    }

    #[test]
    fn merge_combines_disjoint_edits_at_top_and_bottom() {
        let base = numbered(10);
        let ours = base.replace("line 1\n", "first\n");
        let theirs = base.replace("line 10\n", "last\n");
        let merged = merge3(&base, &ours, &theirs);
        assert_eq!(
            merged,
            Ok(base
                .replace("line 1\n", "first\n")
                .replace("line 10\n", "last\n"))
        );
    }

    #[test]
    fn merge_reports_overlapping_changes() {
        let base = numbered(10);
        let ours = base.replace("line 5\n", "five\n");
        let theirs = base.replace("line 5\n", "FIVE\n");
        assert_eq!(
            merge3(&base, &ours, &theirs),
            Err(MergeConflict {
                base_start: 4,
                base_end: 5
            })
        );
        let err = merge3(&base, &ours, &theirs).unwrap_err();
        assert_eq!(
            err.to_string(),
            "both sides changed lines 4..5 of the common version"
        );
    }

    #[test]
    fn merge_reports_adjacent_changes_and_insertions_at_one_point() {
        let base = numbered(10);
        let ours = base.replace("line 5\n", "five\n");
        let theirs = base.replace("line 6\n", "six\n");
        assert_eq!(
            merge3(&base, &ours, &theirs),
            Err(MergeConflict {
                base_start: 4,
                base_end: 6
            })
        );
        let ours = base.replace("line 5\n", "line 5\nours\n");
        let theirs = base.replace("line 5\n", "line 5\ntheirs\n");
        assert_eq!(
            merge3(&base, &ours, &theirs),
            Err(MergeConflict {
                base_start: 5,
                base_end: 5
            })
        );
    }

    #[test]
    fn identical_changes_merge_once() {
        let base = numbered(10);
        let both = base.replace("line 5\n", "five\n");
        let theirs = both.replace("line 10\n", "ten\n");
        assert_eq!(merge3(&base, &both, &theirs), Ok(theirs.clone()));
        assert_eq!(merge3(&base, &both, &both), Ok(both.clone()));
    }

    #[test]
    fn append_on_one_side_and_top_edit_on_the_other_merge() {
        let base = "# Title\n\nfirst paragraph\n\nsecond paragraph\n";
        let ours = format!("{base}\nappended by the agent\n");
        let theirs = base.replace("# Title", "# Better title");
        assert_eq!(
            merge3(base, &ours, &theirs),
            Ok(
                "# Better title\n\nfirst paragraph\n\nsecond paragraph\n\nappended by the agent\n"
                    .to_string()
            )
        );
    }

    #[test]
    fn merge_keeps_crlf_lines() {
        let base = "a\r\nb\r\nc\r\nd\r\ne\r\n";
        let ours = "A\r\nb\r\nc\r\nd\r\ne\r\n";
        let theirs = "a\r\nb\r\nc\r\nd\r\nE\r\n";
        assert_eq!(
            merge3(base, ours, theirs).as_deref(),
            Ok("A\r\nb\r\nc\r\nd\r\nE\r\n")
        );
    }
}
