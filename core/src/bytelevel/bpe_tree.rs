//! Merging one long piece in O(n log n) time, in caller-provided memory of about 2.1 ids per byte.
//!
//! The merge order is the same as [`super::bpe::merge_into`]'s (and tiktoken's): repeatedly the
//! lowest-ranked mergeable adjacent pair, leftmost on ties. Instead of compacting the id list
//! after every merge (O(n) per merge), ids stay at the byte position where their token starts:
//!
//! - `ids[i]`: the id of the token starting at byte `i`, when `i` is *live* (a token starts
//!   there); anything when it is not;
//! - `cand[i]`: the id that the live token at `i` and the next live token merge into, or
//!   [`NO_MERGE`]; always `NO_MERGE` at positions that are not live;
//! - `live`: one bit per position, set where a token starts. Neighbours are the next and previous
//!   set bits, found a word (32 positions) at a time;
//! - `tree`: a min-tree over blocks of [`BLOCK`] positions. Leaf `b` holds the lowest rank of
//!   any candidate in block `b`; an inner node the lower of its children. The leftmost lowest
//!   candidate is found by walking down from the root, always to the left child when it holds
//!   the minimum, then scanning that one block from the left.
//!
//! A merge kills one live position and changes at most three candidates (the merged pair's,
//! its left neighbour's, the dead position's), so it costs three block scans and three
//! root-ward walks: O(BLOCK + log n). Every iteration clears one live bit, so the loop runs
//! fewer than n times whatever the tables contain. At the end the live ids are moved to the
//! front of `ids`, in order.

use super::bpe::{pair, NO_MERGE};
use super::tables::Tables;

/// Positions per leaf of the min-tree: a merge rescans up to three blocks of this many.
const BLOCK: usize = 64;

/// Number of `u32` words in the live-position bitset for `n` positions.
#[inline]
const fn bitset_len(n: usize) -> usize {
    n.div_ceil(32)
}

/// Number of `u32` slots in the min-tree for `n` positions: a complete binary tree with a
/// power-of-two number of leaves (one per block), stored 1-based (slot 0 unused).
#[inline]
const fn tree_len(n: usize) -> usize {
    2 * n.div_ceil(BLOCK).next_power_of_two()
}

/// Work area (in `u32`s) that [`merge`] needs for an `n`-byte piece.
#[inline]
pub(crate) const fn scratch_len(n: usize) -> usize {
    2 * n + bitset_len(n) + tree_len(n)
}

/// Merge `piece` (non-empty) using `work` (at least [`scratch_len`]`(piece.len())` long) as the
/// work area. The ids are left in `work[..k]`; returns `k`, or `None` if `work` is too short.
pub(crate) fn merge(t: &Tables<'_>, piece: &[u8], work: &mut [u32]) -> Option<usize> {
    let n = piece.len();
    if n == 0 {
        return Some(0);
    }
    let (ids, rest) = work.split_at_mut_checked(n)?;
    let (cand, rest) = rest.split_at_mut_checked(n)?;
    let (live, rest) = rest.split_at_mut_checked(bitset_len(n))?;
    let tree = rest.get_mut(..tree_len(n))?;
    let leaves = tree.len() / 2;
    let blocks = n.div_ceil(BLOCK);

    super::bpe::start_ids(t, piece, ids, cand);
    for (w, word) in live.iter_mut().enumerate() {
        let left = n - w * 32; // > 0: w < n.div_ceil(32)
        *word = if left >= 32 {
            u32::MAX
        } else {
            (1u32 << left) - 1
        };
    }
    // Leaves, then inner nodes bottom-up.
    for b in 0..leaves {
        *tree.get_mut(leaves + b)? = if b < blocks {
            block_min(t, cand, b)
        } else {
            u32::MAX
        };
    }
    for k in (1..leaves).rev() {
        *tree.get_mut(k)? = (*tree.get(2 * k)?).min(*tree.get(2 * k + 1)?);
    }

    loop {
        let best = *tree.get(1)?;
        if best == u32::MAX {
            break;
        }
        // Walk down to the leftmost leaf holding `best`, then find its leftmost candidate.
        let mut k = 1;
        while k < leaves {
            k *= 2;
            if *tree.get(k)? != best {
                k += 1;
            }
        }
        let block = k - leaves;
        let lo = block * BLOCK;
        let hi = (lo + BLOCK).min(n);
        let i = lo + cand.get(lo..hi)?.iter().position(|&c| key(t, c) == best)?;

        // Merge the token at `i` with the next one (at `j`).
        let merged = *cand.get(i)?;
        let j = next_live(live, i, n);
        *ids.get_mut(i)? = merged;
        clear(live, j)?;
        *cand.get_mut(j)? = NO_MERGE;
        let after = next_live(live, j, n);
        *cand.get_mut(i)? = match ids.get(after) {
            Some(&r) => pair(t, merged, r),
            None => NO_MERGE,
        };
        let before = prev_live(live, i);
        if let Some(p) = before {
            *cand.get_mut(p)? = pair(t, *ids.get(p)?, merged);
        }

        // Refresh each changed block once (p < i < j, so their blocks are ordered).
        let (bi, bj) = (i / BLOCK, j / BLOCK);
        if let Some(bp) = before.map(|p| p / BLOCK).filter(|&bp| bp != bi) {
            refresh(t, cand, tree, leaves, bp)?;
        }
        refresh(t, cand, tree, leaves, bi)?;
        if bj != bi {
            refresh(t, cand, tree, leaves, bj)?;
        }
    }

    // Move the live ids to the front, in order.
    let mut k = 0;
    for i in 0..n {
        if is_live(live, i) {
            let id = *ids.get(i)?;
            *ids.get_mut(k)? = id;
            k += 1;
        }
    }
    Some(k)
}

/// Priority of a candidate: its merge rank, or `u32::MAX` for no merge.
#[inline]
fn key(t: &Tables<'_>, c: u32) -> u32 {
    if c == NO_MERGE {
        u32::MAX
    } else {
        t.rank(c)
    }
}

/// The lowest key among block `b`'s candidates.
#[inline]
fn block_min(t: &Tables<'_>, cand: &[u32], b: usize) -> u32 {
    let lo = b * BLOCK;
    let hi = (lo + BLOCK).min(cand.len());
    cand.get(lo..hi)
        .unwrap_or(&[])
        .iter()
        .map(|&c| key(t, c))
        .min()
        .unwrap_or(u32::MAX)
}

/// Recompute leaf `b` and its ancestors, stopping where a node's value does not change.
#[inline]
fn refresh(t: &Tables<'_>, cand: &[u32], tree: &mut [u32], leaves: usize, b: usize) -> Option<()> {
    let mut k = leaves + b;
    *tree.get_mut(k)? = block_min(t, cand, b);
    while k > 1 {
        k /= 2;
        let v = (*tree.get(2 * k)?).min(*tree.get(2 * k + 1)?);
        let node = tree.get_mut(k)?;
        if *node == v {
            break;
        }
        *node = v;
    }
    Some(())
}

/// Whether a token starts at `i`.
#[inline]
fn is_live(live: &[u32], i: usize) -> bool {
    live.get(i / 32).is_some_and(|w| w >> (i % 32) & 1 == 1)
}

/// Mark `i` as no longer starting a token.
#[inline]
fn clear(live: &mut [u32], i: usize) -> Option<()> {
    *live.get_mut(i / 32)? &= !(1u32 << (i % 32));
    Some(())
}

/// The first live position after `i`, or `n` when there is none.
#[inline]
fn next_live(live: &[u32], i: usize, n: usize) -> usize {
    let from = i + 1;
    let mut w = from / 32;
    let mut bits = match live.get(w) {
        Some(&word) if from % 32 != 0 => word & (u32::MAX << (from % 32)),
        Some(&word) => word,
        None => return n,
    };
    loop {
        if bits != 0 {
            return (w * 32 + bits.trailing_zeros() as usize).min(n);
        }
        w += 1;
        match live.get(w) {
            Some(&word) => bits = word,
            None => return n,
        }
    }
}

/// The last live position before `i`, if any.
#[inline]
fn prev_live(live: &[u32], i: usize) -> Option<usize> {
    let last = i.checked_sub(1)?;
    let mut w = last / 32;
    let keep = last % 32;
    let mut bits = *live.get(w)? & (u32::MAX >> (31 - keep));
    loop {
        if bits != 0 {
            return Some(w * 32 + 31 - bits.leading_zeros() as usize);
        }
        w = w.checked_sub(1)?;
        bits = *live.get(w)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_in_the_bitset() {
        // Live: 0, 5, 31, 32, 70.
        let mut live = [0u32; 3];
        for i in [0usize, 5, 31, 32, 70] {
            live[i / 32] |= 1 << (i % 32);
        }
        assert_eq!(next_live(&live, 0, 71), 5);
        assert_eq!(next_live(&live, 5, 71), 31);
        assert_eq!(next_live(&live, 31, 71), 32);
        assert_eq!(next_live(&live, 32, 71), 70);
        assert_eq!(next_live(&live, 70, 71), 71);
        assert_eq!(prev_live(&live, 70), Some(32));
        assert_eq!(prev_live(&live, 32), Some(31));
        assert_eq!(prev_live(&live, 31), Some(5));
        assert_eq!(prev_live(&live, 5), Some(0));
        assert_eq!(prev_live(&live, 0), None);
        clear(&mut live, 31).unwrap();
        assert_eq!(next_live(&live, 5, 71), 32);
        assert!(!is_live(&live, 31) && is_live(&live, 32));
    }

    #[test]
    fn scratch_is_about_two_ids_per_byte() {
        assert_eq!(scratch_len(64), 128 + 2 + 2);
        assert_eq!(scratch_len(65), 130 + 3 + 4);
        assert!(scratch_len(1 << 20) <= 2 * (1 << 20) + (1 << 20) / 10);
    }
}
