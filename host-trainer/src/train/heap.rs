//! A binary max-heap of `(count, pair)` entries ordered like CS336's `max`: by count, then by
//! the pair's byte strings `(left bytes, right bytes)` compared lexicographically.
//!
//! `std::collections::BinaryHeap` needs an `Ord` that sees only the entries, but the tie-break
//! needs the symbol table (which grows while the heap lives), so this small heap takes the
//! table as an argument to `push`/`pop` instead. Entries stay 16 bytes.

use std::cmp::Ordering;

/// A pair of symbol ids packed as `left << 32 | right`.
pub type PairKey = u64;

/// Pack a pair of symbol ids.
#[inline]
pub fn pair_key(left: u32, right: u32) -> PairKey {
    (u64::from(left) << 32) | u64::from(right)
}

/// Unpack a pair of symbol ids.
#[inline]
pub fn unpack(key: PairKey) -> (u32, u32) {
    ((key >> 32) as u32, key as u32)
}

/// One heap entry: a pair and the count it had when pushed (possibly stale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The pair's count when pushed.
    pub count: u64,
    /// The pair.
    pub pair: PairKey,
}

/// Max-heap of [`Entry`]; `bytes[id]` is symbol `id`'s byte string.
///
/// Invariant: `items` is a binary heap under [`cmp`] (parent ≥ children).
#[derive(Default)]
pub struct PairHeap {
    items: Vec<Entry>,
}

/// CS336 order: higher count first, ties by `(bytes(left), bytes(right))`, greater first.
#[inline]
pub fn cmp(x: Entry, y: Entry, bytes: &[Vec<u8>]) -> Ordering {
    x.count.cmp(&y.count).then_with(|| {
        let (xl, xr) = unpack(x.pair);
        let (yl, yr) = unpack(y.pair);
        bytes[xl as usize]
            .cmp(&bytes[yl as usize])
            .then_with(|| bytes[xr as usize].cmp(&bytes[yr as usize]))
    })
}

impl PairHeap {
    /// Build a heap from arbitrary entries in O(n).
    pub fn from_vec(items: Vec<Entry>, bytes: &[Vec<u8>]) -> Self {
        let mut heap = PairHeap { items };
        for i in (0..heap.items.len() / 2).rev() {
            heap.sift_down(i, bytes);
        }
        heap
    }

    /// Add an entry.
    pub fn push(&mut self, entry: Entry, bytes: &[Vec<u8>]) {
        self.items.push(entry);
        let mut i = self.items.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if cmp(self.items[i], self.items[parent], bytes) != Ordering::Greater {
                break;
            }
            self.items.swap(i, parent);
            i = parent;
        }
    }

    /// Remove and return the greatest entry.
    pub fn pop(&mut self, bytes: &[Vec<u8>]) -> Option<Entry> {
        if self.items.is_empty() {
            return None;
        }
        let top = self.items.swap_remove(0);
        self.sift_down(0, bytes);
        Some(top)
    }

    fn sift_down(&mut self, mut i: usize, bytes: &[Vec<u8>]) {
        let n = self.items.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n
                && cmp(self.items[right], self.items[left], bytes) == Ordering::Greater
            {
                right
            } else {
                left
            };
            if cmp(self.items[child], self.items[i], bytes) != Ordering::Greater {
                break;
            }
            self.items.swap(i, child);
            i = child;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_cs336_order() {
        // Symbols: 0 = "a", 1 = "b", 2 = "ab", 3 = "" (unused in pairs).
        let bytes = vec![b"a".to_vec(), b"b".to_vec(), b"ab".to_vec()];
        let e = |count, l, r| Entry {
            count,
            pair: pair_key(l, r),
        };
        let entries = vec![
            e(3, 0, 1),
            e(5, 0, 0),
            e(5, 1, 0),
            e(5, 0, 2), // ("a", "ab") > ("a", "a")
            e(1, 2, 2),
            e(5, 2, 0), // ("ab", "a") > ("a", ...) and < ("b", "a")
        ];
        let mut heap = PairHeap::from_vec(entries, &bytes);
        heap.push(e(4, 1, 1), &bytes);
        let order: Vec<_> = std::iter::from_fn(|| heap.pop(&bytes))
            .map(|x| (x.count, unpack(x.pair)))
            .collect();
        assert_eq!(
            order,
            vec![
                (5, (1, 0)),
                (5, (2, 0)),
                (5, (0, 2)),
                (5, (0, 0)),
                (4, (1, 1)),
                (3, (0, 1)),
                (1, (2, 2)),
            ]
        );
    }
}
