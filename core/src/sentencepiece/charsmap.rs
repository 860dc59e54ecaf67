//! SentencePiece's character map (`precompiled_charsmap`: the `nmt_nfkc`, `nmt_nfkc_cf` and
//! `nfkc` rules, or rules a model was trained with from a TSV file), read as `sentencepiece`
//! stores it: a Darts-clone double array over the keys' bytes, and the replacement strings.
//!
//! At each position the normalizer takes the *longest* key that is a prefix of the rest of
//! the text (over bytes, as `Darts::DoubleArray::commonPrefixSearch` walks) and writes its
//! replacement; where no key matches, the character is itself (a malformed byte: U+FFFD).
//!
//! Invariants (checked by `picobpe-model` when it imports or loads a map, relied on here
//! without panicking: a damaged map reads as "no match", never out of bounds): every unit
//! the walk can reach is in `units`; every leaf's value is the offset of a NUL-terminated
//! string in `strings`; every key is well-formed UTF-8 of at most `max_key` bytes.

/// A character map, borrowed from baked or loaded tables. The empty map (no units) is the
/// identity: no key matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CharsMap<'a> {
    /// The double array: one `u32` unit per node (Darts-clone's layout: bits 0–7 the label,
    /// bit 8 "has a leaf", bit 9 the offset's scale, bits 10–31 the offset; a leaf unit has
    /// bit 31 set and holds its value in bits 0–30).
    pub units: &'a [u32],
    /// The replacement strings, each ended by a NUL; a leaf's value is its offset here.
    pub strings: &'a [u8],
    /// The longest key, in bytes: how far past a position a match can read (a stream keeps
    /// this many bytes back before it cuts a word).
    pub max_key: u32,
}

/// The offset stored in a unit: from a node to its children's base.
#[inline]
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

impl<'a> CharsMap<'a> {
    /// True for the identity map (no keys).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// The longest key that `text` starts with: its length and its replacement (without the
    /// NUL). `None` when no key matches (or the map is empty).
    #[inline]
    pub fn longest(&self, text: &[u8]) -> Option<(usize, &'a [u8])> {
        let units = self.units;
        let mut node = offset(*units.first()?);
        let mut best: Option<(usize, usize)> = None;
        for (i, &b) in text.iter().enumerate() {
            node ^= usize::from(b);
            let Some(&unit) = units.get(node) else {
                break;
            };
            if unit & ((1 << 31) | 0xFF) != u32::from(b) {
                break;
            }
            node ^= offset(unit);
            if unit >> 8 & 1 != 0 {
                if let Some(&leaf) = units.get(node) {
                    best = Some((i + 1, (leaf & !(1 << 31)) as usize));
                }
            }
        }
        let (len, value) = best?;
        let rest = self.strings.get(value..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        Some((len, rest.get(..end)?))
    }
}
