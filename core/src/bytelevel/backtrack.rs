//! Backtracking BPE: the linear-time encoder for long pieces (host-built tables only).
//!
//! Byte-pair merging a piece of `n` bytes scans all pair candidates once per merge, which is
//! quadratic; CJK text has pieces of 30–300 bytes, where that scan dominates. This module finds
//! the same ids another way, after the `bpe` crate of GitHub (the algorithm, not its code):
//!
//! - A tokenization `t1 … tk` of a piece is the BPE result exactly when every adjacent pair is
//!   *compatible*: BPE run on the bytes of `ti ++ ti+1` alone gives `[ti, ti+1]`
//!   (`compatible`).
//! - Walk the piece left to right. At each position try the longest token that starts there,
//!   then ever shorter ones ([`TokenTrie::next_prefix`]); take the first that is compatible with
//!   the previous token and ends at a position not known to be a dead end. When no token
//!   fits, mark the position a dead end and take back the previous token.
//!
//! Every token is reachable (BPE of its own bytes gives itself), so single bytes always fit
//! somewhere and the walk ends; in practice it rarely takes anything back, so a piece costs
//! one trie walk and one compatibility test per token.
//!
//! The compatibility test needs merge priority to follow id order, with every single byte's id
//! below every merged id (true of tiktoken vocabularies): the model builder leaves the trie
//! empty otherwise, and the encoder then merges pair by pair as before.
//!
//! The encoder uses this only when built with the `backtrack` feature (`picobpe-model` turns
//! it on for host-built tables); the types are always here, since baked tables name
//! [`TokenTrie::EMPTY`].

// Without the `backtrack` feature only the table types are used (baked tables name them).
#![cfg_attr(not(feature = "backtrack"), allow(dead_code))]

use super::tables::Tables;
use crate::cache::PairMemo;

/// A token trie over the vocabulary's reachable ordinary tokens, for the longest token at a
/// position, and for each token its longest proper prefix and its merge split.
///
/// Nodes are numbered so that the node spelling a reachable token's bytes *is* that token's
/// id; other nodes get numbers from [`Tables::n_ids`] up. The edges are an open-addressing hash
/// table of [`TrieEdge`]-packed `u64`s, its length a power of two, at most 7/8 full.
#[derive(Clone, Copy, Debug)]
pub struct TokenTrie<'a> {
    /// The edge table, empty when the tables have no trie (see the module docs).
    pub edges: &'a [u64],
    /// Per id: the longest reachable token that is a proper prefix of it, or `u32::MAX`.
    pub next_prefix: &'a [u32],
    /// Per id: `left << 32 | right`, the merge that makes it, or `u64::MAX` for a single byte
    /// (and for ids that are not reachable tokens).
    pub splits: &'a [u64],
    /// A blocked Bloom filter over the merges' pairs ([`PairFilter`]), its length a power of
    /// two: most pairs `compatible` asks about do not merge, and one load here says so
    /// without the merge map's two dependent loads.
    pub pair_filter: &'a [u64],
    /// Empty, or [`TrieStart::LEN`] entries that start the walk a few bytes in: entry
    /// `a << 8 | b` for a text starting with bytes `a, b`, entry `2^16 + c` for one starting
    /// with the 3-byte UTF-8 character `c`; each is a [`TrieStart`]-packed node, with the
    /// longest token among the prefixes it covers. Saves two probes per CJK token.
    pub starts: &'a [u64],
    /// Empty, or the character edges: an open-addressing hash table of [`TrieChar`]-packed
    /// `u64`s, its length a power of two, at most half full. One entry per node whose last
    /// three bytes are a 3-byte UTF-8 character: the walk takes a whole CJK character in one
    /// probe instead of three.
    pub chars: &'a [u64],
}

/// Packing of a [`TokenTrie::starts`] entry: `PRESENT | leaf << 62 | partial << 61 | best_len
/// << 44 | best << 22 | node`, where `node` is the trie node after the 2 or 3 bytes, and `best`
/// the longest reachable token of `best_len` bytes among their prefixes; 0 when no token has
/// them as prefix. `partial`: as [`TrieChar::PARTIAL`], for `node`.
pub struct TrieStart;

impl TrieStart {
    /// Entries of a full table: every 2-byte start, then every 3-byte character.
    pub const LEN: usize = 2 << 16;
    /// Set in every entry that has a node.
    pub const PRESENT: u64 = 1 << 63;
    /// Set when the node has no children.
    pub const LEAF: u64 = 1 << 62;
    /// Set when a token ends one or two bytes into a 3-byte character after the node
    /// ([`TrieChar::PARTIAL`]).
    pub const PARTIAL: u64 = 1 << 61;

    /// The packed entry.
    pub const fn entry(node: u32, best: u32, best_len: usize, leaf: bool, partial: bool) -> u64 {
        Self::PRESENT
            | if leaf { Self::LEAF } else { 0 }
            | if partial { Self::PARTIAL } else { 0 }
            | (best_len as u64 & 0xF) << 44
            | (best as u64 & TrieEdge::NODE_MASK) << 22
            | node as u64 & TrieEdge::NODE_MASK
    }

    /// The node of a present entry.
    #[inline(always)]
    const fn node(entry: u64) -> u32 {
        (entry & TrieEdge::NODE_MASK) as u32
    }

    /// The longest token among the entry's prefixes and its length, when it is longer than
    /// one byte.
    #[inline(always)]
    const fn best(entry: u64) -> Option<(u32, usize)> {
        let len = (entry >> 44) as usize & 0xF;
        if len > 1 {
            Some((((entry >> 22) & TrieEdge::NODE_MASK) as u32, len))
        } else {
            None
        }
    }

    /// The entry index of a text starting with a well-formed 3-byte UTF-8 character.
    #[inline(always)]
    pub const fn char3(b0: u8, b1: u8, b2: u8) -> Option<usize> {
        match char3_code(b0, b1, b2) {
            Some(c) => Some((1 << 16) + c as usize),
            None => None,
        }
    }
}

/// The 16 payload bits of a well-formed 3-byte UTF-8 sequence (lead `1110xxxx`, then two
/// `10xxxxxx`), or `None`. Overlong forms and surrogates count: the tables key on bytes, and
/// only the byte pattern matters for them.
#[inline(always)]
pub const fn char3_code(b0: u8, b1: u8, b2: u8) -> Option<u32> {
    let w = b0 as u32 | (b1 as u32) << 8 | (b2 as u32) << 16;
    if w & 0xC0_C0F0 == 0x80_80E0 {
        Some((w & 0xF) << 12 | (w >> 2) & 0xFC0 | (w >> 16) & 0x3F)
    } else {
        None
    }
}

/// Packing of one [`TokenTrie::chars`] entry: `OCCUPIED | leaf << 62 | partial << 61 | child
/// << 38 | parent << 16 | char`, the edge from node `parent` on the three bytes of the
/// character with payload bits `char` ([`char3_code`]) to node `child`.
pub struct TrieChar;

impl TrieChar {
    /// Set in every used slot.
    pub const OCCUPIED: u64 = TrieEdge::OCCUPIED;
    /// Set when the child has no children.
    pub const LEAF: u64 = 1 << 62;
    /// Set when some token is the child's bytes and then one or two bytes of which the first is
    /// a 3-byte lead (`0xE0..=0xEF`): a token may end inside the next character, so the walk
    /// takes that character byte by byte.
    pub const PARTIAL: u64 = 1 << 61;
    const KEY_BITS: u32 = TrieEdge::NODE_BITS + 16;
    const KEY_MASK: u64 = (1 << Self::KEY_BITS) - 1;

    /// The key of the edge from `parent` on the character with payload `code`.
    #[inline(always)]
    pub const fn key(parent: u32, code: u32) -> u64 {
        ((parent as u64) << 16 | code as u64 & 0xFFFF) & Self::KEY_MASK
    }

    /// The packed entry of a character edge.
    pub const fn entry(parent: u32, code: u32, child: u32, leaf: bool, partial: bool) -> u64 {
        Self::OCCUPIED
            | if leaf { Self::LEAF } else { 0 }
            | if partial { Self::PARTIAL } else { 0 }
            | (child as u64 & TrieEdge::NODE_MASK) << Self::KEY_BITS
            | Self::key(parent, code)
    }

    /// The child node of a packed entry.
    #[inline(always)]
    const fn child(entry: u64) -> u32 {
        ((entry >> Self::KEY_BITS) & TrieEdge::NODE_MASK) as u32
    }

    /// The home slot of `key` in a table of `len` (a power of two) slots.
    #[inline(always)]
    pub const fn home(key: u64, len: usize) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (len - 1)
    }
}

/// The Bloom filter in [`TokenTrie::pair_filter`]: each pair sets two bits of one word, both
/// chosen by one multiply of its [`PairMap::key`](super::tables::PairMap::key).
pub struct PairFilter;

impl PairFilter {
    /// The word index and the two-bit mask of a pair's key in a filter of `len` words.
    #[inline(always)]
    pub const fn slot(key: u64, len: usize) -> (usize, u64) {
        let h = key.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let word = (h >> 32) as usize & (len - 1);
        (word, 1 << (h & 63) | 1 << ((h >> 6) & 63))
    }
}

/// Packing of one [`TokenTrie::edges`] entry: `OCCUPIED | leaf << 52 | child << 30 | parent
/// << 8 | byte`. `leaf` says the child node has no edges of its own.
pub struct TrieEdge;

impl TrieEdge {
    /// Bits of a node number.
    pub const NODE_BITS: u32 = 22;
    /// Most nodes a trie may have.
    pub const MAX_NODES: usize = 1 << Self::NODE_BITS;
    /// Set in every used slot.
    pub const OCCUPIED: u64 = 1 << 63;
    /// Set when the child has no children.
    pub const LEAF: u64 = 1 << 52;
    const KEY_BITS: u32 = Self::NODE_BITS + 8;
    const KEY_MASK: u64 = (1 << Self::KEY_BITS) - 1;
    const NODE_MASK: u64 = (1 << Self::NODE_BITS) - 1;

    /// The key of the edge from `parent` on `byte`.
    #[inline(always)]
    pub const fn key(parent: u32, byte: u8) -> u64 {
        ((parent as u64) << 8 | byte as u64) & Self::KEY_MASK
    }

    /// The packed entry of an edge.
    pub const fn entry(parent: u32, byte: u8, child: u32, leaf: bool) -> u64 {
        Self::OCCUPIED
            | if leaf { Self::LEAF } else { 0 }
            | (child as u64 & Self::NODE_MASK) << Self::KEY_BITS
            | Self::key(parent, byte)
    }

    /// The child node of a packed entry.
    #[inline(always)]
    const fn child(entry: u64) -> u32 {
        ((entry >> Self::KEY_BITS) & Self::NODE_MASK) as u32
    }

    /// The home slot of `key` in a table of `len` (a power of two) slots.
    #[inline(always)]
    pub const fn home(key: u64, len: usize) -> usize {
        let h = (key >> 8).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 32) as usize + (key & 0xFF) as usize) & (len - 1)
    }
}

impl TokenTrie<'_> {
    /// No trie: every piece is merged pair by pair.
    pub const EMPTY: TokenTrie<'static> = TokenTrie {
        edges: &[],
        next_prefix: &[],
        splits: &[],
        pair_filter: &[],
        starts: &[],
        chars: &[],
    };

    /// True when the tables carry no trie.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// The entry of the edge from `parent` on `byte`, if there is one.
    #[inline(always)]
    fn edge(&self, parent: u32, byte: u8) -> Option<u64> {
        let key = TrieEdge::key(parent, byte);
        let home = TrieEdge::home(key, self.edges.len());
        probe(self.edges, home, TrieEdge::KEY_MASK, key)
    }

    /// The entry of the character edge from `parent` on the character with payload `code`.
    #[inline(always)]
    fn char_edge(&self, parent: u32, code: u32) -> Option<u64> {
        let key = TrieChar::key(parent, code);
        let home = TrieChar::home(key, self.chars.len());
        probe(self.chars, home, TrieChar::KEY_MASK, key)
    }

    /// The longest reachable token that `text` starts with, and its length (`None` for an
    /// empty text).
    ///
    /// The walk starts 2 or 3 bytes in ([`TokenTrie::starts`]). After a 3-byte character it
    /// goes on a whole character per probe ([`TokenTrie::chars`]) while the text has 3-byte
    /// characters and no token ends inside the next one (the `PARTIAL` flags); from the first
    /// position where either fails, it goes byte by byte. Both walks see the same nodes at
    /// character boundaries, so they find the same token.
    #[inline]
    pub fn longest_prefix(&self, t: &Tables<'_>, text: &[u8]) -> Option<(u32, usize)> {
        let n_ids = t.n_ids();
        let first = *text.first()?;
        let mut node = *t.byte_ids.get(first as usize)?;
        let mut best = (node, 1);
        let mut from = 1;
        if let (Some(&b1), false) = (text.get(1), self.starts.is_empty()) {
            // Start 3 bytes in at a 3-byte character, else 2 bytes in.
            let char3 = text.get(2).and_then(|&b2| TrieStart::char3(first, b1, b2));
            let mut start = char3.and_then(|i| self.starts.get(i)).copied().unwrap_or(0);
            from = 3;
            if start & TrieStart::PRESENT == 0 {
                start = self
                    .starts
                    .get(usize::from(first) << 8 | usize::from(b1))
                    .copied()
                    .unwrap_or(0);
                from = 2;
            }
            if start & TrieStart::PRESENT == 0 {
                return Some(best);
            }
            if let Some(longer) = TrieStart::best(start) {
                best = longer;
            }
            if start & TrieStart::LEAF != 0 {
                return Some(best);
            }
            node = TrieStart::node(start);
            if from == 3 {
                // Invariant: `node` spells `text[..from]`, and `partial` says whether a token
                // may end inside the character after it.
                let mut partial = start & TrieStart::PARTIAL != 0 || self.chars.is_empty();
                while !partial {
                    let (Some(&c0), Some(&c1), Some(&c2)) =
                        (text.get(from), text.get(from + 1), text.get(from + 2))
                    else {
                        break;
                    };
                    let Some(code) = char3_code(c0, c1, c2) else {
                        break;
                    };
                    // No edge: no token goes into this character at all.
                    let Some(e) = self.char_edge(node, code) else {
                        return Some(best);
                    };
                    let child = TrieChar::child(e);
                    from += 3;
                    if (child as usize) < n_ids {
                        best = (child, from);
                    }
                    if e & TrieChar::LEAF != 0 {
                        return Some(best);
                    }
                    node = child;
                    partial = e & TrieChar::PARTIAL != 0;
                }
            }
        }
        for (i, &b) in text.iter().enumerate().skip(from) {
            let Some(e) = self.edge(node, b) else { break };
            let child = TrieEdge::child(e);
            if (child as usize) < n_ids {
                best = (child, i + 1);
            }
            if e & TrieEdge::LEAF != 0 {
                break;
            }
            node = child;
        }
        Some(best)
    }

    /// False when `(left, right)` is certainly not a merge (no filter: never).
    #[inline(always)]
    fn may_merge(&self, left: u32, right: u32) -> bool {
        let Some(key) = super::tables::PairMap::key(left, right) else {
            return false;
        };
        if self.pair_filter.is_empty() {
            return true;
        }
        let (word, mask) = PairFilter::slot(key, self.pair_filter.len());
        self.pair_filter.get(word).is_some_and(|w| w & mask == mask)
    }

    /// The merge that makes `id`: `(left, right)`, or `None` for a single byte.
    #[inline(always)]
    fn split(&self, id: u32) -> Option<(u32, u32)> {
        let s = *self.splits.get(id as usize)?;
        (s != u64::MAX).then_some(((s >> 32) as u32, s as u32))
    }
}

/// The entry whose `key_mask` bits are `key` in an open-addressing table of packed `u64`s
/// (bit 63 set in every used slot; length a power of two), probing from slot `home`.
#[inline(always)]
fn probe(table: &[u64], home: usize, key_mask: u64, key: u64) -> Option<u64> {
    let mask = table.len().wrapping_sub(1);
    let mut slot = home;
    // The table is never full, so an empty slot ends every probe sequence; the bound only
    // keeps a corrupt table from looping.
    for _ in 0..table.len() {
        let e = *table.get(slot)?;
        if e & TrieEdge::OCCUPIED == 0 {
            return None;
        }
        if e & key_mask == key {
            return Some(e);
        }
        slot = (slot + 1) & mask;
    }
    None
}

/// Whether BPE on the bytes of `left ++ right` yields `[left, right]`.
///
/// Replays the two tokens' formation backwards in time. A state is the pair of tokens that
/// touch across the boundary; it lasts from when the later of the two was made until `limit`,
/// the rank of the merge that consumes one of them. The pair is incompatible iff some state's
/// two tokens merge (crossing the boundary) at a rank below its `limit`. Going back, undo the
/// later-made token: its right part (for `left`) or left part (for `right`) now touches the
/// boundary. Ties on equal ranks go to the leftmost pair, as in tiktoken: a crossing merge
/// beats the merge that made `right` (it lies to its left), and loses to the one that made
/// `left`, hence `limit = right + 1` but `limit = left`. Needs rank = id, bytes first.
#[inline]
fn compatible(t: &Tables<'_>, trie: &TokenTrie<'_>, mut left: u32, mut right: u32) -> bool {
    let mut limit = u32::MAX;
    loop {
        if trie.may_merge(left, right) {
            if let Some(merged) = t.pairs.get(left, right) {
                if merged < limit {
                    return false;
                }
            }
        }
        // Undo the later-made (larger) token. Chosen without a branch: which side it is
        // follows no pattern the predictor can learn (half the tests mispredicted it).
        let undo_left = left > right;
        let later = if undo_left { left } else { right };
        let Some((l, r)) = trie.split(later) else {
            // The larger of the two is a single byte, so both are.
            return true;
        };
        limit = if undo_left {
            left
        } else {
            right.saturating_add(1)
        };
        left = if undo_left { r } else { left };
        right = if undo_left { right } else { l };
    }
}

/// Longest piece the backtracking encoder takes: its dead-end set is a fixed bit array.
pub(crate) const MAX_PIECE: usize = 512;

/// Encode `piece` (1..=[`MAX_PIECE`] bytes) into `out` (at least `piece.len()` long) with the
/// trie; returns the number of ids, or `None` if the tables have no trie or the piece does not
/// fit the limits (the caller then merges pair by pair). `memo` remembers pair tests.
pub(crate) fn encode(
    t: &Tables<'_>,
    piece: &[u8],
    out: &mut [u32],
    memo: &mut PairMemo<'_>,
) -> Option<usize> {
    let trie = &t.trie;
    let n = piece.len();
    if trie.is_empty() || n == 0 || n > MAX_PIECE || out.len() < n {
        return None;
    }
    // Bit `p` set: position `p` may still start the rest of the encoding.
    let mut open = [u64::MAX; MAX_PIECE / 64 + 1];
    let is_open = |open: &[u64], p: usize| open.get(p / 64).is_some_and(|w| w >> (p % 64) & 1 != 0);
    let mut k: usize = 0;
    let mut pos: usize = 0;
    let (mut token, mut len) = trie.longest_prefix(t, piece)?;
    loop {
        let end = pos + len;
        let fits = is_open(&open, end)
            && match k.checked_sub(1).and_then(|i| out.get(i)) {
                Some(&last) => memo.answer(last, token, || compatible(t, trie, last, token)),
                None => true,
            };
        if fits {
            *out.get_mut(k)? = token;
            k += 1;
            pos = end;
            if pos >= n {
                return Some(k);
            }
            (token, len) = trie.longest_prefix(t, piece.get(pos..)?)?;
            continue;
        }
        match trie.next_prefix.get(token as usize) {
            Some(&shorter) if shorter != u32::MAX => {
                token = shorter;
                len = t.token_bytes(token)?.len();
            }
            _ => {
                // No token fits at `pos`: it is a dead end; take back the previous token and
                // try it shorter (its own end is now closed, so it cannot be taken again).
                if let Some(w) = open.get_mut(pos / 64) {
                    *w &= !(1 << (pos % 64));
                }
                k = k.checked_sub(1)?;
                token = *out.get(k)?;
                len = t.token_bytes(token)?.len();
                pos = pos.checked_sub(len)?;
            }
        }
    }
}
