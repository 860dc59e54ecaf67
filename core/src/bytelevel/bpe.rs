//! Byte-pair merging of one piece.
//!
//! The algorithm is tiktoken's `byte_pair_merge` over ids instead of byte ranges: start from one
//! id per byte; keep, for every adjacent pair, the id it merges into (or none); repeatedly merge
//! the pair with the lowest rank, leftmost on ties, and refresh only the two neighbouring pair
//! candidates. Each merge is an O(n) scan plus an O(n) shift, so a piece costs O(n²) in the worst
//! case, like tiktoken; pieces are short (a word) in practice and live in cache. Pieces longer
//! than [`QUADRATIC_MAX`] bytes go to a block-min tree (`bpe_tree.rs`), which merges in the
//! same order in O(n log n), so no input can make the encoder quadratic in more than 512 bytes.
//!
//! Why pairs of ids are exact for tiktoken vocabularies: a merge `(a, b) → t` during encoding
//! only ever happens with `(a, b)` = the last merge of BPE run on `t`'s own bytes, because the
//! merges inside `t`'s span never depend on bytes outside it. The model importer stores exactly
//! those canonical splits, so a pair table reproduces byte-keyed tiktoken merging.
//!
//! Memory: the work area is two `u32` per byte of the piece (ids and pair candidates). Pieces up
//! to [`STACK_PIECE`] bytes use a fixed stack array; longer ones use caller-provided scratch:
//! [`scratch_needed`] ids (2 per byte up to [`QUADRATIC_MAX`] bytes, about 2.1 beyond).

use super::tables::Tables;
use crate::slice_ops::shift_left;

/// Longest piece merged in the fixed stack work area (2 × 4 × 64 = 512 bytes of stack).
pub const STACK_PIECE: usize = 64;

/// Longest piece merged by the quadratic scan; longer ones use the O(n log n) block-min tree.
pub const QUADRATIC_MAX: usize = 512;

/// Marks "this pair does not merge" in the candidate array.
pub(crate) const NO_MERGE: u32 = u32::MAX;

/// Output-buffer room (in ids) that guarantees an `len`-byte piece can be encoded: the piece's
/// ids for pieces of up to [`STACK_PIECE`] bytes, else the work area of its merge, which
/// starts at the piece's first output slot. This is the `needed` of
/// [`crate::EncodeError::PieceTooLong`] for a piece that is not a whole token.
pub const fn scratch_needed(len: usize) -> usize {
    if len <= STACK_PIECE {
        len
    } else if len <= QUADRATIC_MAX {
        2 * len
    } else {
        super::bpe_tree::scratch_len(len)
    }
}

/// Merge a piece longer than [`STACK_PIECE`] bytes in `work` (at least
/// [`scratch_needed`]`(piece.len())` ids). The ids are left in `work[..k]`; returns `k`.
pub(crate) fn merge_long(t: &Tables<'_>, piece: &[u8], work: &mut [u32]) -> Option<usize> {
    let n = piece.len();
    if n <= QUADRATIC_MAX {
        let (ids, cand) = work.get_mut(..2 * n)?.split_at_mut(n);
        merge_into(t, piece, ids, cand)
    } else {
        super::bpe_tree::merge(t, piece, work)
    }
}

/// Merge `piece` (non-empty) into ids, using `ids` and `cand` (each at least `piece.len()` long)
/// as the work area. Returns the number of ids, which are left in `ids[..n]`.
///
/// Returns `None` only if the work area is too short, which callers rule out beforehand.
#[inline]
pub fn merge_into(
    t: &Tables<'_>,
    piece: &[u8],
    ids: &mut [u32],
    cand: &mut [u32],
) -> Option<usize> {
    let n = piece.len();
    let ids = ids.get_mut(..n)?;
    let cand = cand.get_mut(..n)?;
    start_ids(t, piece, ids, cand);
    let mut len = n;
    let rank_is_id = t.ranks.is_empty();
    loop {
        // Find the leftmost lowest-ranked merge among the live pairs.
        let live = cand.get(..len.saturating_sub(1))?;
        let mut best = NO_MERGE;
        let mut best_rank = u32::MAX;
        let mut best_i = 0;
        if rank_is_id {
            for (i, &c) in live.iter().enumerate() {
                if c < best {
                    best = c;
                    best_i = i;
                }
            }
        } else {
            for (i, &c) in live.iter().enumerate() {
                if c != NO_MERGE {
                    let r = t.rank(c);
                    if r < best_rank {
                        best_rank = r;
                        best = c;
                        best_i = i;
                    }
                }
            }
        }
        if best == NO_MERGE {
            return Some(len);
        }
        // Merge pair best_i: ids[best_i] = best; drop ids[best_i + 1].
        *ids.get_mut(best_i)? = best;
        shift_left(ids.get_mut(best_i + 1..len)?);
        shift_left(cand.get_mut(best_i + 1..len)?);
        len -= 1;
        // Refresh the candidates that involve the merged id.
        *cand.get_mut(best_i)? = pair_after(t, ids, best_i, len);
        if best_i > 0 {
            *cand.get_mut(best_i - 1)? = pair_after(t, ids, best_i - 1, len);
        }
        *cand.get_mut(len - 1)? = NO_MERGE;
    }
}

/// Fill `ids` (the id of each byte of `piece`) and `cand` (`cand[i]`: the id that `ids[i]` and
/// `ids[i + 1]` merge into, [`NO_MERGE`] for none and in the last slot), both `piece.len()`
/// long. Uses the byte-pair table when the tables have one.
#[inline(always)]
pub(crate) fn start_ids(t: &Tables<'_>, piece: &[u8], ids: &mut [u32], cand: &mut [u32]) {
    for (slot, &b) in ids.iter_mut().zip(piece) {
        *slot = t.byte_ids[b as usize];
    }
    if t.byte_pairs.len() == super::tables::BYTE_PAIRS {
        for (i, c) in cand.iter_mut().enumerate() {
            *c = match (piece.get(i), piece.get(i + 1)) {
                (Some(&a), Some(&b)) => t
                    .byte_pairs
                    .get(usize::from(a) << 8 | usize::from(b))
                    .copied()
                    .unwrap_or(NO_MERGE),
                _ => NO_MERGE,
            };
        }
    } else {
        for (i, c) in cand.iter_mut().enumerate() {
            *c = match (ids.get(i), ids.get(i + 1)) {
                (Some(&l), Some(&r)) => pair(t, l, r),
                _ => NO_MERGE,
            };
        }
    }
    if !t.word_end_ids.is_empty() {
        mark_word_end(t, piece, ids, cand);
    }
}

/// With an end-of-word suffix ([`Tables::word_end_ids`]): the last byte starts as its
/// suffixed id, and the pair before it is looked up again with that id (`tokenizers` builds
/// a word's symbols this way before merging: the suffix goes on the last character).
fn mark_word_end(t: &Tables<'_>, piece: &[u8], ids: &mut [u32], cand: &mut [u32]) {
    let n = piece.len();
    let (Some(&b), Some(last)) = (piece.last(), n.checked_sub(1)) else {
        return;
    };
    if let Some(slot) = ids.get_mut(last) {
        *slot = t.single_byte(b);
    }
    if let Some(before) = last.checked_sub(1) {
        let merged = pair_after(t, ids, before, n);
        if let Some(c) = cand.get_mut(before) {
            *c = merged;
        }
    }
}

/// The id that `left` and `right` merge into, or [`NO_MERGE`].
#[inline(always)]
pub(crate) fn pair(t: &Tables<'_>, left: u32, right: u32) -> u32 {
    t.pairs.get(left, right).unwrap_or(NO_MERGE)
}

/// The merge candidate for `ids[i], ids[i + 1]` within the first `len` ids.
#[inline]
fn pair_after(t: &Tables<'_>, ids: &[u32], i: usize, len: usize) -> u32 {
    if i + 1 >= len {
        return NO_MERGE;
    }
    match (ids.get(i), ids.get(i + 1)) {
        (Some(&l), Some(&r)) => pair(t, l, r),
        _ => NO_MERGE,
    }
}
