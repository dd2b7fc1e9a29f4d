//! Row counts of the transcript's cells with running totals (a Fenwick tree), so that the cell at
//! a given row is found, and one cell's height is changed, in O(log n) — a frame never walks every
//! cell.

/// Heights of a sequence of items with prefix sums.
#[derive(Debug, Clone, Default)]
pub struct Heights {
    values: Vec<usize>,
    /// 1-based Fenwick tree: `tree[i]` holds the sum of `values[i - lowbit(i) .. i]`.
    tree: Vec<usize>,
}

fn lowbit(i: usize) -> usize {
    i & i.wrapping_neg()
}

impl Heights {
    /// No items.
    pub fn new() -> Self {
        Heights {
            values: Vec::new(),
            tree: vec![0],
        }
    }

    /// The height of item `index` (0 when out of range).
    pub fn get(&self, index: usize) -> usize {
        self.values.get(index).copied().unwrap_or(0)
    }

    /// The sum of the heights of items `0..count`.
    pub fn prefix(&self, count: usize) -> usize {
        let mut i = count.min(self.values.len());
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i];
            i -= lowbit(i);
        }
        sum
    }

    /// The sum of all heights.
    pub fn total(&self) -> usize {
        self.prefix(self.values.len())
    }

    /// Append an item.
    pub fn push(&mut self, value: usize) {
        self.values.push(value);
        let n = self.values.len();
        // Node n covers items (n - lowbit(n), n]: the new value plus earlier items it spans.
        let covered = self.prefix(n - 1) - self.prefix(n - lowbit(n));
        self.tree.push(value + covered);
    }

    /// Remove the last item. (No other node covers the last position, so the tree just shrinks.)
    pub fn pop(&mut self) {
        if self.values.pop().is_some() {
            self.tree.pop();
        }
    }

    /// Change the height of item `index` (ignored when out of range).
    pub fn set(&mut self, index: usize, value: usize) {
        let Some(old) = self.values.get_mut(index) else {
            return;
        };
        let (add, sub) = if value >= *old {
            (value - *old, 0)
        } else {
            (0, *old - value)
        };
        *old = value;
        let mut i = index + 1;
        while i < self.tree.len() {
            // Each node includes the old value, so it never goes below zero.
            self.tree[i] = self.tree[i] + add - sub;
            i += lowbit(i);
        }
    }

    /// Replace every height at once (O(n)).
    pub fn rebuild(&mut self, values: Vec<usize>) {
        let mut tree = Vec::with_capacity(values.len() + 1);
        tree.push(0);
        tree.extend(values.iter().copied());
        for i in 1..tree.len() {
            let parent = i + lowbit(i);
            if parent < tree.len() {
                tree[parent] += tree[i];
            }
        }
        self.values = values;
        self.tree = tree;
    }

    /// Remove every item.
    pub fn clear(&mut self) {
        self.values.clear();
        self.tree.truncate(1);
    }

    /// The item that holds row `row` (rows counted from 0 across all items) and the row within
    /// it, or `None` past the end. Items of height 0 hold no rows and are never returned.
    pub fn locate(&self, row: usize) -> Option<(usize, usize)> {
        let n = self.values.len();
        let mut position = 0;
        let mut remaining = row;
        let mut step = if n == 0 { 0 } else { 1 << n.ilog2() };
        while step > 0 {
            let next = position + step;
            if next <= n && self.tree[next] <= remaining {
                position = next;
                remaining -= self.tree[next];
            }
            step >>= 1;
        }
        (position < n).then_some((position, remaining))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_locate(values: &[usize], row: usize) -> Option<(usize, usize)> {
        let mut start = 0;
        for (i, v) in values.iter().enumerate() {
            if row < start + v {
                return Some((i, row - start));
            }
            start += v;
        }
        None
    }

    #[test]
    fn prefix_sums_and_locate_match_a_plain_walk() {
        let values = [3, 0, 1, 5, 2, 0, 0, 4, 1, 7, 2];
        let mut heights = Heights::new();
        for v in values {
            heights.push(v);
        }
        assert_eq!(heights.values.len(), values.len());
        assert_eq!(heights.total(), values.iter().sum::<usize>());
        for count in 0..=values.len() {
            assert_eq!(heights.prefix(count), values[..count].iter().sum::<usize>());
        }
        for row in 0..heights.total() + 2 {
            assert_eq!(heights.locate(row), naive_locate(&values, row), "row {row}");
        }
        let mut rebuilt = Heights::new();
        rebuilt.rebuild(values.to_vec());
        for row in 0..heights.total() + 2 {
            assert_eq!(rebuilt.locate(row), naive_locate(&values, row), "row {row}");
        }
    }

    #[test]
    fn set_and_pop_keep_the_sums_right() {
        let mut values = vec![2, 2, 2, 2, 2, 2, 2];
        let mut heights = Heights::new();
        heights.rebuild(values.clone());
        heights.set(3, 9);
        values[3] = 9;
        heights.set(0, 0);
        values[0] = 0;
        heights.set(99, 1);
        for count in 0..=values.len() {
            assert_eq!(heights.prefix(count), values[..count].iter().sum::<usize>());
        }
        heights.pop();
        values.pop();
        heights.push(5);
        values.push(5);
        assert_eq!(heights.total(), values.iter().sum::<usize>());
        for row in 0..heights.total() + 1 {
            assert_eq!(heights.locate(row), naive_locate(&values, row), "row {row}");
        }
        heights.clear();
        assert!(heights.values.is_empty());
        assert_eq!(heights.total(), 0);
        assert_eq!(heights.locate(0), None);
    }
}
