//! Line iteration and byte offset → line lookups.

use super::*;

/// Lines of `text[range]` as byte ranges without their newline; no empty line after a final newline.
pub(super) struct LineIter<'t> {
    pub(super) text: &'t str,
    pub(super) pos: usize,
    pub(super) end: usize,
}

impl<'t> LineIter<'t> {
    pub(super) fn new(text: &'t str, range: Range<usize>) -> Self {
        Self {
            text,
            pos: range.start,
            end: range.end,
        }
    }
}

impl Iterator for LineIter<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        if self.pos >= self.end {
            return None;
        }
        let start = self.pos;
        let stop = self.text[start..self.end]
            .find('\n')
            .map_or(self.end, |n| start + n);
        self.pos = stop + 1;
        Some(start..stop)
    }
}

/// Start offsets of every line, for turning offsets into 1-based line numbers.
#[derive(Default)]
pub(super) struct LineIndex(pub(super) Vec<usize>);

impl LineIndex {
    pub(super) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, c)| c == b'\n')
                .map(|(k, _)| k + 1),
        );
        Self(starts)
    }

    pub(super) fn line(&self, pos: usize) -> usize {
        self.0.partition_point(|&start| start <= pos).max(1)
    }
}
