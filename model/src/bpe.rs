//! Host-side reference BPE, used to derive merges and tables (never on the encode path).
//!
//! Two semantics, both "lowest rank first, leftmost on ties" (tiktoken's `byte_pair_merge`):
//! - [`tiktoken_split`]: ranks keyed by the *concatenated bytes* of two adjacent parts, as
//!   tiktoken ranks files define them;
//! - [`pair_bpe`]: ranks keyed by the *pair of ids*, as merges lists (HF, CS336) and the core
//!   define them.
//!
//! Both are quadratic in the piece length, which is fine for tokens (at most a few hundred bytes).

use std::collections::HashMap;
use std::hash::BuildHasher;

/// Run tiktoken BPE on `bytes` (ranks by bytes) and, when it ends in one part, return the
/// boundary of the last merge: `bytes[..split]` and `bytes[split..]` are the token's canonical
/// split. `None` for a single byte or when BPE does not reach `bytes` as one token
/// ("unreachable" tokens).
pub fn tiktoken_split(bytes: &[u8], ranks: &HashMap<&[u8], u32>) -> Option<usize> {
    if bytes.len() < 2 {
        return None;
    }
    // Invariant: `bounds` holds the part starts plus the end; `pair_rank[i]` is the rank of
    // parts i and i+1 concatenated (u32::MAX when that is not a token).
    let mut bounds: Vec<usize> = (0..=bytes.len()).collect();
    let rank_of = |bounds: &[usize], i: usize| -> u32 {
        ranks
            .get(&bytes[bounds[i]..bounds[i + 2]])
            .copied()
            .unwrap_or(u32::MAX)
    };
    let mut pair_rank: Vec<u32> = (0..bytes.len() - 1).map(|i| rank_of(&bounds, i)).collect();
    let mut last_split = None;
    while let Some((i, _)) = pair_rank
        .iter()
        .enumerate()
        .filter(|(_, &r)| r != u32::MAX)
        .min_by_key(|&(i, &r)| (r, i))
    {
        last_split = Some(bounds[i + 1]);
        bounds.remove(i + 1);
        pair_rank.remove(i);
        if i < pair_rank.len() {
            pair_rank[i] = rank_of(&bounds, i);
        }
        if i > 0 {
            pair_rank[i - 1] = rank_of(&bounds, i - 1);
        }
    }
    if bounds.len() == 2 {
        last_split
    } else {
        None
    }
}

/// A merge as the pair-semantics BPE sees it: its rank and the id it produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merge {
    /// Merge priority (index in the merges list); lower merges first.
    pub rank: u32,
    /// The produced id.
    pub merged: u32,
}

/// Encode `bytes` with pair semantics: start from the byte ids, repeatedly merge the adjacent
/// pair with the lowest rank (leftmost on ties) until no adjacent pair is a merge.
pub fn pair_bpe<S: BuildHasher>(
    bytes: &[u8],
    byte_ids: &[u32; 256],
    merges: &HashMap<(u32, u32), Merge, S>,
) -> Vec<u32> {
    let mut ids: Vec<u32> = bytes.iter().map(|&b| byte_ids[b as usize]).collect();
    loop {
        let best = ids
            .windows(2)
            .enumerate()
            .filter_map(|(i, w)| merges.get(&(w[0], w[1])).map(|m| (m.rank, i, m.merged)))
            .min();
        let Some((_, i, merged)) = best else {
            return ids;
        };
        ids[i] = merged;
        ids.remove(i + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiktoken_split_prefers_lowest_rank() {
        // a b c; "bc" ranks below "ab", so "abc" = "a" + "bc".
        let ranks: HashMap<&[u8], u32> = [
            (&b"a"[..], 0),
            (b"b", 1),
            (b"c", 2),
            (b"bc", 3),
            (b"ab", 4),
            (b"abc", 5),
            (b"ca", 6),
        ]
        .into_iter()
        .collect();
        assert_eq!(tiktoken_split(b"abc", &ranks), Some(1));
        assert_eq!(tiktoken_split(b"ab", &ranks), Some(1));
        assert_eq!(tiktoken_split(b"a", &ranks), None);
        // "abca": a+bc → (a)(bc)(a); "abc"+"a" is no token, "bca" neither → not reachable.
        assert_eq!(tiktoken_split(b"abca", &ranks), None);
    }

    #[test]
    fn pair_bpe_leftmost_on_ties() {
        let mut byte_ids = [0u32; 256];
        for (b, id) in byte_ids.iter_mut().enumerate() {
            *id = b as u32;
        }
        let a = u32::from(b'a');
        let mut merges = HashMap::new();
        merges.insert(
            (a, a),
            Merge {
                rank: 0,
                merged: 300,
            },
        );
        assert_eq!(pair_bpe(b"aaa", &byte_ids, &merges), vec![300, a]);
        merges.insert(
            (300, 300),
            Merge {
                rank: 1,
                merged: 301,
            },
        );
        assert_eq!(pair_bpe(b"aaaa", &byte_ids, &merges), vec![301]);
    }
}
