//! The read-only tables a tokenizer runs on.
//!
//! A [`Tables`] value is either baked into flash by `picobpe-build` (generated Rust source:
//! flat `static` arrays) or built at run time on the host by `picobpe-model`; both lay the
//! tables out with the same `phf_generator` (PtrHash) call and go through the same lookups
//! below, so the host CLI and the firmware run one code path.
//!
//! Layout invariants (checked by whoever builds the tables, relied on here without panicking):
//! - `token_offsets.len() == n_ids + 1`, non-decreasing, last entry `== token_bytes.len()`;
//!   an id whose range is empty is unused (a hole in the id space).
//! - every merged id in `pairs` and every id in `pieces` is an ordinary (non-special) id;
//!   `pairs.entries` and `pieces.ids` have `index.len` entries; every id is below [`MAX_IDS`].
//! - `ranks` is empty when merge priority equals id order, else `ranks[id]` is the merge rank.

use crate::backtrack::TokenTrie;
use crate::hash::{self, PtrIndex};
use crate::pretok::Pattern;

/// One special token: text matched verbatim in the input, and its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialToken<'a> {
    /// The literal text, e.g. `<|endoftext|>`.
    pub text: &'a str,
    /// Its id.
    pub id: u32,
}

/// Bits of an id in a packed merge entry: models have at most [`MAX_IDS`] ids.
pub const ID_BITS: u32 = 21;

/// Most ids a model may have (2 097 152): every id fits in [`ID_BITS`] bits.
pub const MAX_IDS: usize = 1 << ID_BITS;

const ID_MASK: u64 = (1 << ID_BITS) - 1;

/// The merge table: `(left id, right id)` → merged id, behind a PtrHash perfect-hash index.
///
/// Each slot is one `u64`, `left << 42 | right << 21 | merged` ([`PairMap::entry`]): a lookup
/// hashes the key `left << 21 | right`, finds its slot and compares the entry's top 42 bits,
/// and the merged id comes with the same load — one cache miss per lookup after the pilot's.
#[derive(Clone, Copy, Debug)]
pub struct PairMap<'a> {
    /// The perfect-hash index over the keys ([`hash::hash_u64`] of [`PairMap::key`]).
    pub index: PtrIndex<'a>,
    /// The packed entry of each slot.
    pub entries: &'a [u64],
}

impl PairMap<'_> {
    /// A map with no merges.
    pub const EMPTY: PairMap<'static> = PairMap {
        index: PtrIndex::EMPTY,
        entries: &[],
    };

    /// The hashed key of a pair: `left << 21 | right` (`None` if an id is not below
    /// [`MAX_IDS`]).
    #[inline]
    pub const fn key(left: u32, right: u32) -> Option<u64> {
        if (left | right) as u64 > ID_MASK {
            return None;
        }
        Some((left as u64) << ID_BITS | right as u64)
    }

    /// The stored entry of a merge: `key << 21 | merged` (`None` if an id is too large).
    #[inline]
    pub const fn entry(left: u32, right: u32, merged: u32) -> Option<u64> {
        match PairMap::key(left, right) {
            Some(key) if merged as u64 <= ID_MASK => Some(key << ID_BITS | merged as u64),
            _ => None,
        }
    }

    /// The id that `(left, right)` merges into, if that pair is a merge.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<u32> {
        let key = PairMap::key(left, right)?;
        let slot = self.index.slot(hash::hash_u64(key, self.index.seed))?;
        let entry = *self.entries.get(slot)?;
        if entry >> ID_BITS != key {
            return None;
        }
        Some((entry & ID_MASK) as u32)
    }

    /// Number of merges in the map.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the model has no merges.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Whole pieces that encode to exactly one id: a PtrHash index over the tokens' bytes
/// ([`hash::hash_bytes`]) and the id of each slot. A hit is confirmed by comparing the piece
/// with the id's bytes in [`Tables::token_bytes`], or, when `keys` is present, with the slot's
/// key ([`piece_key_entry`]): for pieces of 1–7 bytes the packed key alone decides, which saves
/// two dependent loads (the offsets and the bytes of the id) on most pieces of natural text;
/// for longer ones it holds the token's length and offset, which saves the offsets load. The
/// keys cost 8 bytes per entry.
#[derive(Clone, Copy, Debug)]
pub struct PieceMap<'a> {
    /// The perfect-hash index.
    pub index: PtrIndex<'a>,
    /// The id of each slot.
    pub ids: &'a [u32],
    /// Empty, or one per slot: [`piece_key_entry`] of the slot's token.
    pub keys: &'a [u64],
}

/// Top byte of a [`PieceMap::keys`] entry for a token longer than 7 bytes (a
/// [`short_piece_key`] has its length, 1–7, there).
const LONG_TAG: u64 = 0xFF << 56;

/// The [`PieceMap::keys`] entry of a token with bytes `bytes`, stored at `offset` in
/// [`Tables::token_bytes`]: its [`short_piece_key`] when it is 1–7 bytes long, else
/// `0xFF << 56 | len << 32 | offset` (0 for a length of 2^24 bytes or more: the lookup then
/// reads the offsets).
pub fn piece_key_entry(bytes: &[u8], offset: u32) -> u64 {
    match short_piece_key(bytes) {
        0 if bytes.len() < 1 << 24 => LONG_TAG | (bytes.len() as u64) << 32 | u64::from(offset),
        key => key,
    }
}

/// A piece of 1–7 bytes packed into a `u64`: its bytes little-endian in the low 56 bits and
/// its length in the top 8 (so no two such pieces share a key); 0 for any other length. The
/// piece table hashes such pieces by this key ([`hash::hash_bytes`]).
#[inline]
pub fn short_piece_key(piece: &[u8]) -> u64 {
    hash::short_key(piece)
}

impl PieceMap<'_> {
    /// A map with no entries.
    pub const EMPTY: PieceMap<'static> = PieceMap {
        index: PtrIndex::EMPTY,
        ids: &[],
        keys: &[],
    };

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// Everything the encoder and decoder read. See the module docs for the invariants.
#[derive(Clone, Copy, Debug)]
pub struct Tables<'a> {
    /// The pre-tokenization pattern the model was trained with.
    pub pattern: Pattern,
    /// Bytes of every id (ordinary and special), concatenated in id order.
    pub token_bytes: &'a [u8],
    /// `token_offsets[id]..token_offsets[id + 1]` is `id`'s range in `token_bytes`.
    pub token_offsets: &'a [u32],
    /// The id of each single byte, indexed by byte value.
    pub byte_ids: &'a [u32; 256],
    /// The merges.
    pub pairs: PairMap<'a>,
    /// Merge rank by merged id; empty when ranks follow id order.
    pub ranks: &'a [u32],
    /// Whole pieces that encode to exactly one id. Consulted before merging: a hit is both the
    /// fast path and, for tiktoken-style models, the rule that a piece equal to a token is that
    /// token. Only tokens for which this agrees with the model's semantics are present.
    pub pieces: PieceMap<'a>,
    /// Special tokens, in any order.
    pub specials: &'a [SpecialToken<'a>],
    /// Empty, or [`BYTE_PAIRS`] entries: entry `a << 8 | b` is the id that the ids of bytes
    /// `a` and `b` merge into, or `u32::MAX`. The first pair candidates of every merged piece
    /// are byte pairs; with this table they cost one load each instead of a perfect-hash
    /// lookup. 256 KiB: host-built tables have it, baked tables leave it out.
    pub byte_pairs: &'a [u32],
    /// Empty, or the token trie for backtracking encoding of long and non-ASCII pieces
    /// ([`crate::backtrack`], used with the `backtrack` feature). Megabytes for a large
    /// vocabulary: host-built tables have it, baked tables leave it out.
    pub trie: TokenTrie<'a>,
}

/// Entries of a full [`Tables::byte_pairs`] table.
pub const BYTE_PAIRS: usize = 1 << 16;

impl<'a> Tables<'a> {
    /// Number of ids (including holes and specials): valid ids are `0..n_ids()`.
    #[inline]
    pub fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
    }

    /// The bytes of `id`, or `None` for an id outside the table or an unused id.
    #[inline]
    pub fn token_bytes(&self, id: u32) -> Option<&'a [u8]> {
        id_bytes(self.token_bytes, self.token_offsets, id)
    }

    /// The id of a whole piece, if `piece` is in the piece table.
    #[inline]
    pub fn piece(&self, piece: &[u8]) -> Option<u32> {
        self.piece_with_hash(piece, self.piece_hash(piece))
    }

    /// The hash the piece table uses for `piece` ([`hash::hash_bytes`] under its seed).
    #[inline]
    pub fn piece_hash(&self, piece: &[u8]) -> u64 {
        hash::hash_bytes(piece, self.pieces.index.seed)
    }

    /// [`Tables::piece_hash`] of a piece whose [`short_piece_key`] is `key`.
    #[inline(always)]
    pub(crate) fn piece_hash_with_key(&self, piece: &[u8], key: u64) -> u64 {
        if key != 0 {
            hash::hash_u64(key, self.pieces.index.seed)
        } else {
            hash::hash_long(piece, self.pieces.index.seed)
        }
    }

    /// [`Tables::piece`] of a piece whose [`short_piece_key`] is `key`, including single
    /// bytes (which need no lookup).
    #[inline(always)]
    pub(crate) fn whole_piece(&self, piece: &[u8], key: u64) -> Option<u32> {
        if key >> 56 == 1 {
            return self.byte_ids.get(key as u8 as usize).copied();
        }
        self.piece_with_key(piece, key, self.piece_hash_with_key(piece, key))
    }

    /// [`Tables::piece`] with the piece's [`Tables::piece_hash`] already computed.
    #[inline]
    pub fn piece_with_hash(&self, piece: &[u8], hash: u64) -> Option<u32> {
        self.piece_with_key(piece, short_piece_key(piece), hash)
    }

    /// [`Tables::piece_with_hash`] with the piece's [`short_piece_key`] already computed.
    #[inline(always)]
    pub(crate) fn piece_with_key(&self, piece: &[u8], want: u64, hash: u64) -> Option<u32> {
        let slot = self.pieces.index.slot(hash)?;
        let id = *self.pieces.ids.get(slot)?;
        if let Some(&key) = self.pieces.keys.get(slot) {
            if want != 0 {
                // A short piece: the keys decide.
                return (key == want).then_some(id);
            }
            if key >> 56 == LONG_TAG >> 56 {
                // A long piece and a long token: compare with the token's bytes, found
                // through the key instead of the offsets.
                let len = (key >> 32) as usize & 0xFF_FFFF;
                let start = key as u32 as usize;
                let stored = self.token_bytes.get(start..start.checked_add(len)?)?;
                return bytes_eq(stored, piece).then_some(id);
            }
            if key != 0 {
                // A long piece, and a slot holding a short token.
                return None;
            }
        }
        if bytes_eq(self.token_bytes(id)?, piece) {
            Some(id)
        } else {
            None
        }
    }

    /// Merge priority of a merged id: lower merges first.
    #[inline]
    pub fn rank(&self, merged: u32) -> u32 {
        if self.ranks.is_empty() {
            merged
        } else {
            self.ranks.get(merged as usize).copied().unwrap_or(u32::MAX)
        }
    }

    /// The special token with this id, if any.
    pub fn special_by_id(&self, id: u32) -> Option<&SpecialToken<'a>> {
        self.specials.iter().find(|s| s.id == id)
    }
}

/// The bytes of `id` in concatenated `bytes` with `offsets` (`offsets[id]..offsets[id + 1]`),
/// or `None` for an id outside the table or an empty range.
#[inline]
pub(crate) fn id_bytes<'a>(bytes: &'a [u8], offsets: &[u32], id: u32) -> Option<&'a [u8]> {
    let i = id as usize;
    let start = *offsets.get(i)? as usize;
    let end = *offsets.get(i.checked_add(1)?)? as usize;
    match bytes.get(start..end) {
        Some(b) if !b.is_empty() => Some(b),
        _ => None,
    }
}

/// Slice equality without a `memcmp` call: pieces are a few bytes long, where the call costs
/// more than the compare.
#[inline]
pub(crate) fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::short_piece_key;
    use std::collections::HashMap;

    /// Every string of 1–7 bytes over a small alphabet that includes NUL and 0xFF gets its own
    /// key (so trailing NULs or a shorter prefix never collide), and longer pieces get 0.
    #[test]
    fn short_piece_keys_are_injective() {
        // Under Miri (slow) two symbols still cover every length and the overlapping reads.
        let alphabet: &[u8] = if cfg!(miri) {
            &[0, 0xFF]
        } else {
            &[0, 1, b'a', 0xFF]
        };
        let k = alphabet.len();
        let mut seen: HashMap<u64, Vec<u8>> = HashMap::new();
        let mut piece = Vec::new();
        for len in 1..=7u32 {
            for code in 0..k.pow(len) {
                piece.clear();
                let mut c = code;
                for _ in 0..len {
                    piece.push(alphabet[c % k]);
                    c /= k;
                }
                let key = short_piece_key(&piece);
                assert_ne!(key, 0);
                assert_eq!(key >> 56, u64::from(len));
                if let Some(other) = seen.insert(key, piece.clone()) {
                    panic!("{piece:?} and {other:?} share key {key:#x}");
                }
            }
        }
        assert_eq!(short_piece_key(b""), 0);
        assert_eq!(short_piece_key(b"12345678"), 0);
        assert_eq!(
            short_piece_key(b"abcdefg"),
            u64::from_le_bytes(*b"abcdefg\x07")
        );
    }
}
