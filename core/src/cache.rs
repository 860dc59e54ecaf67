//! A piece cache in caller memory ([`Tokenizer::encode_cached`](crate::Tokenizer::encode_cached)).
//!
//! Natural text repeats its pieces (Zipf): most pieces of a long text were seen a few thousand
//! pieces earlier. Pieces that are a whole token cost one table lookup; the others are merged
//! pair by pair, dozens of lookups into a table of megabytes. The cache remembers those: a
//! direct-mapped array of [`CacheEntry`] slots, one cache line each, indexed by the piece's hash
//! (the one the whole-piece lookup computes anyway). A slot holds a piece's bytes and its ids;
//! a lookup hits only when the stored bytes equal the piece, so a hit returns exactly the ids
//! merging would give, and a collision just overwrites the slot. Whole-token pieces, pieces
//! longer than [`CACHE_PIECE`] bytes and pieces of more than [`CACHE_IDS`] ids are not cached.

use crate::slice_ops;

/// Longest piece (in bytes) a cache slot holds.
pub const CACHE_PIECE: usize = 22;

/// Most ids a cached piece may have.
pub const CACHE_IDS: usize = 10;

/// One cache slot: 64 bytes, aligned to a cache line. Start with [`CacheEntry::EMPTY`].
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct CacheEntry {
    bytes: [u8; CACHE_PIECE],
    /// Length of the piece in `bytes`; 0 = empty slot (pieces are never empty).
    len: u8,
    n_ids: u8,
    ids: [u32; CACHE_IDS],
}

impl CacheEntry {
    /// An empty slot.
    pub const EMPTY: CacheEntry = CacheEntry {
        bytes: [0; CACHE_PIECE],
        len: 0,
        n_ids: 0,
        ids: [0; CACHE_IDS],
    };

    /// The cached ids if this slot holds exactly `piece`.
    #[inline]
    pub(crate) fn get(&self, piece: &[u8]) -> Option<&[u32]> {
        let len = usize::from(self.len);
        if len != piece.len() {
            return None;
        }
        let stored = self.bytes.get(..len)?;
        if stored.iter().zip(piece).all(|(a, b)| a == b) {
            self.ids.get(..usize::from(self.n_ids))
        } else {
            None
        }
    }

    /// Remember `piece` → `ids` (ignored when either does not fit a slot).
    #[inline]
    pub(crate) fn put(&mut self, piece: &[u8], ids: &[u32]) {
        if piece.is_empty() || piece.len() > CACHE_PIECE || ids.len() > CACHE_IDS {
            return;
        }
        slice_ops::copy(&mut self.bytes, piece);
        slice_ops::copy(&mut self.ids, ids);
        self.len = piece.len() as u8;
        self.n_ids = ids.len() as u8;
    }
}

impl Default for CacheEntry {
    fn default() -> Self {
        CacheEntry::EMPTY
    }
}

/// The slot for a piece with hash `hash` in a cache of `slots` entries (`slots > 0`). Uses the
/// hash's high half: the perfect-hash bucket uses the low half.
#[inline]
pub(crate) fn slot(hash: u64, slots: usize) -> usize {
    (((hash >> 32) * slots as u64) >> 32) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_answers_only_for_its_own_piece() {
        let mut e = CacheEntry::EMPTY;
        assert_eq!(e.get(b"the"), None);
        e.put(b" the", &[262]);
        assert_eq!(e.get(b" the"), Some(&[262][..]));
        assert_eq!(e.get(b" thE"), None);
        assert_eq!(e.get(b" th"), None);
        e.put(b"abcdefghijklmnopqrstuvw", &[1, 2]); // 23 bytes: not cached
        assert_eq!(e.get(b" the"), Some(&[262][..]));
        e.put(b"xy", &[1; CACHE_IDS + 1]); // too many ids: not cached
        assert_eq!(e.get(b"xy"), None);
        assert_eq!(core::mem::size_of::<CacheEntry>(), 64);
    }

    #[test]
    fn slots_stay_in_range() {
        for h in [0u64, u64::MAX, 0x1234_5678_9abc_def0] {
            for n in [1usize, 7, 4096] {
                assert!(slot(h, n) < n);
            }
        }
    }
}
