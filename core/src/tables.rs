//! The table primitives every family shares: special tokens, the piece map (whole pieces to
//! one id, behind a PtrHash index) and the id-to-bytes lookup.
//!
//! Invariants (checked by whoever builds the tables, relied on here without panicking): a
//! [`PieceMap`]'s `ids` (and `keys`, when present) have `index.len` entries; every id is below
//! [`MAX_IDS`]; an id whose byte range is empty is unused (a hole in the id space).

use crate::hash::{self, PtrIndex};

/// One special token: text matched verbatim in the input, its id, and the whitespace it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialToken<'a> {
    /// The literal text, e.g. `<|endoftext|>`.
    pub text: &'a str,
    /// Its id.
    pub id: u32,
    /// [`crate::special::LSTRIP`] and [`crate::special::RSTRIP`] bits: the whitespace run
    /// before or after it is part of the token, as `tokenizers`' `lstrip` and `rstrip` make it
    /// (0 for tiktoken's specials and most others).
    pub strip: u8,
}

/// Bits of an id in a packed merge entry: models have at most [`MAX_IDS`] ids.
pub const ID_BITS: u32 = 21;

/// Most ids a model may have (2 097 152): every id fits in [`ID_BITS`] bits.
pub const MAX_IDS: usize = 1 << ID_BITS;

/// Whole pieces that encode to exactly one id: a PtrHash index over the tokens' bytes
/// ([`hash::hash_bytes`]) and the id of each slot. A hit is confirmed by comparing the piece
/// with the id's bytes in the token bytes ([`Tables::token_bytes`](crate::Tables::token_bytes)), or, when `keys` is present, with the slot's
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
pub(crate) const LONG_TAG: u64 = 0xFF << 56;

/// The [`PieceMap::keys`] entry of a token with bytes `bytes`, stored at `offset` in
/// the token bytes ([`Tables::token_bytes`](crate::Tables::token_bytes)): its [`short_piece_key`] when it is 1–7 bytes long, else
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
