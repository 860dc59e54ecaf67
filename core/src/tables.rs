//! The read-only tables a tokenizer runs on.
//!
//! A [`Tables`] value is either baked into flash by `picobpe-build` (generated Rust source with
//! `phf_codegen` maps and flat arrays) or built at run time on the host by `picobpe-model` (the
//! same maps made with `phf_generator`). Both go through the same lookups below, so the host CLI
//! and the firmware run one code path.
//!
//! Layout invariants (checked by whoever builds the tables, relied on here without panicking):
//! - `token_offsets.len() == n_ids + 1`, non-decreasing, last entry `== token_bytes.len()`;
//!   an id whose range is empty is unused (a hole in the id space).
//! - every merged id in `pairs` and every id in `pieces` is an ordinary (non-special) id.
//! - `ranks` is empty when merge priority equals id order, else `ranks[id]` is the merge rank.

use crate::pretok::Pattern;

/// One special token: text matched verbatim in the input, and its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialToken<'a> {
    /// The literal text, e.g. `<|endoftext|>`.
    pub text: &'a str,
    /// Its id.
    pub id: u32,
}

/// The merge table: `(left id, right id)` → merged id, as a perfect-hash map.
///
/// `Narrow` packs the pair into one `u32` (`left << 16 | right`), usable when every id is below
/// 65 536 (GPT-2 and small trained models); `Wide` packs into a `u64` (`left << 32 | right`).
#[derive(Clone, Copy)]
pub enum PairMap<'a> {
    /// Pair key `left << 16 | right`.
    Narrow(&'a phf::Map<u32, u32>),
    /// Pair key `left << 32 | right`.
    Wide(&'a phf::Map<u64, u32>),
}

impl PairMap<'_> {
    /// The id that `(left, right)` merges into, if that pair is a merge.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<u32> {
        match self {
            PairMap::Narrow(map) => {
                if left > 0xFFFF || right > 0xFFFF {
                    return None;
                }
                map.get(&(left << 16 | right)).copied()
            }
            PairMap::Wide(map) => map.get(&((left as u64) << 32 | right as u64)).copied(),
        }
    }

    /// Number of merges in the map.
    pub fn len(&self) -> usize {
        match self {
            PairMap::Narrow(map) => map.len(),
            PairMap::Wide(map) => map.len(),
        }
    }

    /// True when the model has no merges.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Everything the encoder and decoder read. See the module docs for the invariants.
#[derive(Clone, Copy)]
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
    pub pieces: &'a phf::Map<&'static [u8], u32>,
    /// Special tokens, in any order.
    pub specials: &'a [SpecialToken<'a>],
}

impl<'a> Tables<'a> {
    /// Number of ids (including holes and specials): valid ids are `0..n_ids()`.
    #[inline]
    pub fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
    }

    /// The bytes of `id`, or `None` for an id outside the table or an unused id.
    #[inline]
    pub fn token_bytes(&self, id: u32) -> Option<&'a [u8]> {
        let i = id as usize;
        let start = *self.token_offsets.get(i)? as usize;
        let end = *self.token_offsets.get(i.checked_add(1)?)? as usize;
        match self.token_bytes.get(start..end) {
            Some(bytes) if !bytes.is_empty() => Some(bytes),
            _ => None,
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
