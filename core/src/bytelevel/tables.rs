//! The byte-level BPE tables: the merges ([`PairMap`]) and everything the byte-level encoder
//! and decoder read ([`Tables`]).
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
//!   `pairs.entries` and `pieces.ids` have `index.len` entries; every id is below [`MAX_IDS`](crate::MAX_IDS).
//! - `ranks` is empty when merge priority equals id order, else `ranks[id]` is the merge rank.
//! - `word_end_ids` is empty or has 256 ids; with it, `pieces` is empty (a piece's key would
//!   be its token's bytes without the suffix) and so is `trie`.

use super::backtrack::TokenTrie;
use crate::hash::{self, PtrIndex};
use crate::normalizer::TextNormalizer;
use crate::pretok::{self, CompiledPattern, Pattern, SplitMemo, Step};
use crate::tables::{
    bytes_eq, id_bytes, short_piece_key, PieceMap, SpecialToken, ID_BITS, LONG_TAG,
};

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
    /// [`MAX_IDS`](crate::MAX_IDS)).
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

/// Everything the encoder and decoder read. See the module docs for the invariants.
#[derive(Clone, Copy, Debug)]
pub struct Tables<'a> {
    /// The pre-tokenization pattern the model was trained with; not used when `splits` is
    /// not empty.
    pub pattern: Pattern,
    /// Empty, or compiled `Split` patterns that take the place of `pattern`, outermost first
    /// ([`crate::pretok::split_levels`]): a `tokenizer.json` whose pre-tokenizer is none of the
    /// hand-rolled patterns.
    pub splits: &'a [CompiledPattern<'a>],
    /// The Unicode normalization applied to the text between special tokens before it is
    /// split (a `tokenizer.json`'s `NFC` normalizer: Qwen2), or none.
    pub normalizer: Option<TextNormalizer>,
    /// `tokenizers`' `ByteLevel` `add_prefix_space`: a space goes before each section of text
    /// between special tokens that does not start with one, before it is split. Loaders
    /// refuse it with a normalizer; the encoder then applies the normalizer only.
    pub prefix_space: bool,
    /// Special tokens are matched in the normalized text, not the raw text: `tokenizers`'
    /// added tokens marked `normalized` behind a normalizer (CLIP's, matched after its
    /// `Lowercase`, so `<|ENDOFTEXT|>` is one). Only with a normalizer.
    pub specials_normalized: bool,
    /// Bytes of every id (ordinary and special), concatenated in id order.
    pub token_bytes: &'a [u8],
    /// `token_offsets[id]..token_offsets[id + 1]` is `id`'s range in `token_bytes`.
    pub token_offsets: &'a [u32],
    /// The id of each single byte, indexed by byte value.
    pub byte_ids: &'a [u32; 256],
    /// Empty, or the id of each byte followed by the model's end-of-word suffix, indexed by
    /// byte value: `tokenizers`' BPE `end_of_word_suffix` (CLIP's `</w>`). The last byte of
    /// every piece starts as this id instead of its `byte_ids` entry, so merges see the end of
    /// the word (`e</w>` merges differently from `e`); the suffix's bytes are part of the
    /// tokens' bytes, so decoding gives them back, as `tokenizers`' `ByteLevel` decoder does.
    pub word_end_ids: &'a [u32],
    /// Ids of tokens with no bytes, in increasing order: tiktoken's `= N` rank line (whisper's
    /// `multilingual.tiktoken`), which no text encodes to and which decodes to nothing. Any
    /// other id with no bytes is unused, and decoding it is an error.
    pub empty_ids: &'a [u32],
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
    /// ([`TokenTrie`], used with the `backtrack` feature). Megabytes for a large
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

    /// The piece at `start` of `text` by the model's pre-tokenizer: the compiled `splits`
    /// when there are any, else the hand-rolled `pattern` ([`pretok::next_piece`]'s contract).
    /// `memo` belongs to `text` ([`SplitMemo`]).
    #[inline]
    pub fn next_piece(
        &self,
        text: &[u8],
        start: usize,
        is_final: bool,
        memo: &mut SplitMemo,
    ) -> Step {
        if self.splits.is_empty() {
            pretok::next_piece(self.pattern, text, start, is_final)
        } else {
            pretok::split_levels_memo(self.splits, text, start, is_final, memo)
        }
    }

    /// The bytes of `id` (none for an empty token, [`Tables::empty_ids`]), or `None` for an
    /// id outside the table or an unused id.
    #[inline]
    pub fn token_bytes(&self, id: u32) -> Option<&'a [u8]> {
        match self.stored_bytes(id) {
            Some(bytes) => Some(bytes),
            None if self.is_empty_token(id) => Some(&[]),
            None => None,
        }
    }

    /// The bytes `id` has in `token_bytes`: `None` for an empty token too. The decoder's loop
    /// reads this and asks [`Tables::is_empty_token`] only when it is `None`.
    #[inline]
    pub(crate) fn stored_bytes(&self, id: u32) -> Option<&'a [u8]> {
        id_bytes(self.token_bytes, self.token_offsets, id)
    }

    /// Whether `id` is an empty token ([`Tables::empty_ids`]): the rare case, out of line.
    #[cold]
    #[inline(never)]
    pub(crate) fn is_empty_token(&self, id: u32) -> bool {
        self.empty_ids.binary_search(&id).is_ok()
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
            return Some(self.single_byte(key as u8));
        }
        self.piece_with_key(piece, key, self.piece_hash_with_key(piece, key))
    }

    /// The id of a piece of one byte: its [`Tables::word_end_ids`] entry when the model has an
    /// end-of-word suffix, else its [`Tables::byte_ids`] entry.
    #[inline(always)]
    pub fn single_byte(&self, b: u8) -> u32 {
        match self.word_end_ids.get(usize::from(b)) {
            Some(&id) => id,
            None => self.byte_ids[usize::from(b)],
        }
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
