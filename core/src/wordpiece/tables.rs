//! [`WpTables`]: the read-only tables of a WordPiece model, and the character data lookups.
//!
//! Layout invariants (checked by `picobpe-model` when it builds or bakes the tables, relied on
//! here without panicking):
//! - `token_offsets.len() == n_ids + 1`, non-decreasing, last entry `== token_bytes.len()`;
//!   every id's bytes are its vocabulary entry (continuation pieces with the prefix).
//! - `starts` indexes every piece without the prefix, `continuations` every piece with it, by
//!   its bytes after the prefix; `longest` is at least the byte length of every indexed key.
//! - `unk_id < n_ids`; `max_chars_per_word <= MAX_WORD_CHARS`.

use super::unicode_tables::{RUN_FLAGS, RUN_STARTS, STRIP_FROM, STRIP_TEXT, STRIP_TO};
use crate::hash;
use crate::tables::{bytes_eq, id_bytes, PieceMap, SpecialToken};

pub(crate) use super::unicode_tables::{CJK, DROP, MN, PUNCT, SPACE};

/// Everything a WordPiece encoder and decoder read. See the module docs for the invariants.
#[derive(Clone, Copy, Debug)]
pub struct WpTables<'a> {
    /// The vocabulary entries of all ids, concatenated in id order.
    pub token_bytes: &'a [u8],
    /// `token_offsets[id]..token_offsets[id + 1]` is `id`'s range in `token_bytes`.
    pub token_offsets: &'a [u32],
    /// Pieces that may start a word, by their bytes.
    pub starts: PieceMap<'a>,
    /// Pieces that continue a word (vocabulary entries that begin with the prefix), by their
    /// bytes after the prefix.
    pub continuations: PieceMap<'a>,
    /// Longest key of either map, in bytes: the greedy match never tries a longer one.
    pub longest: u32,
    /// The continuation prefix (`##`).
    pub prefix: &'a [u8],
    /// The unknown token's id.
    pub unk_id: u32,
    /// Words of more characters are the unknown token (`max_input_chars_per_word`).
    pub max_chars_per_word: u32,
    /// Normalizer: remove control characters, turn whitespace into spaces.
    pub clean_text: bool,
    /// Normalizer: CJK ideographs are words of their own.
    pub handle_chinese_chars: bool,
    /// Normalizer: NFD, then remove nonspacing marks.
    pub strip_accents: bool,
    /// Normalizer: lowercase.
    pub lowercase: bool,
    /// Decoder: apply the `WordPiece` decoder's clean-up (` .` → `.`, ...).
    pub cleanup: bool,
    /// Added tokens, matched verbatim in the text before normalization.
    pub specials: &'a [SpecialToken<'a>],
    /// A `tokenizer.json`'s normalizer other than `BertNormalizer` (a Unicode form, or
    /// character steps such as `NFD` + `Lowercase` + `StripAccents`, with
    /// [`crate::normalizer::Steps::fffd_per_subpart`]), applied to the text between added
    /// tokens before the flags above (then all off) and the pre-tokenizer. `None`: the flags alone.
    pub normalizer: Option<crate::normalizer::TextNormalizer>,
    /// The pre-tokenizer: [`WordSplit::BERT`](super::WordSplit::BERT), or a `Sequence` of `WhitespaceSplit`,
    /// `Whitespace`, `Punctuation` and `Digits`.
    pub split: super::WordSplit,
}

impl<'a> WpTables<'a> {
    /// Number of ids: valid ids are `0..n_ids()`.
    #[inline]
    pub fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
    }

    /// The vocabulary entry of `id`, or `None` for an id out of range.
    #[inline]
    pub fn token_bytes(&self, id: u32) -> Option<&'a [u8]> {
        id_bytes(self.token_bytes, self.token_offsets, id)
    }

    /// True when `id` is an added token (skipped by decode, like `skip_special_tokens`).
    pub fn is_special(&self, id: u32) -> bool {
        self.specials.iter().any(|s| s.id == id)
    }

    /// The id of the piece `piece` at the start of a word (`continued == false`) or after its
    /// start (the bytes after the prefix).
    #[inline]
    pub fn piece_id(&self, piece: &[u8], continued: bool) -> Option<u32> {
        let map = if continued {
            &self.continuations
        } else {
            &self.starts
        };
        let slot = map.index.slot(hash::hash_bytes(piece, map.index.seed))?;
        let id = *map.ids.get(slot)?;
        let stored = self.token_bytes(id)?;
        let stored = if continued {
            stored.strip_prefix(self.prefix)?
        } else {
            stored
        };
        bytes_eq(stored, piece).then_some(id)
    }
}

/// The flags of `c` (`DROP`, `SPACE`, `PUNCT`, `CJK`, `MN` of the generated tables).
#[inline]
pub fn char_flags(c: char) -> u8 {
    let cp = c as u32;
    // The last run whose start is at most `cp`; run 0 starts at 0.
    let i = RUN_STARTS.partition_point(|&s| s <= cp);
    RUN_FLAGS
        .get(i.wrapping_sub(1))
        .copied()
        .unwrap_or_default()
}

/// `strip_accents` of a character that is not a nonspacing mark: its NFD without nonspacing
/// marks, or `None` when that is the character itself. Hangul syllables decompose
/// arithmetically (Unicode 3.12).
#[inline]
pub(crate) fn stripped(c: char) -> Option<Stripped> {
    let cp = c as u32;
    if cp < 0xC0 {
        return None;
    }
    if let Some(s) = cp.checked_sub(0xAC00).filter(|&s| s < 11_172) {
        let t = s % 28;
        let mut out = Stripped::default();
        out.push(0x1100 + s / 588);
        out.push(0x1161 + (s % 588) / 28);
        if t != 0 {
            out.push(0x11A7 + t);
        }
        return Some(out);
    }
    let i = STRIP_FROM.binary_search(&cp).ok()?;
    let to = *STRIP_TO.get(i)?;
    let (start, len) = ((to >> 8) as usize, (to & 0xFF) as usize);
    let text = STRIP_TEXT.get(start..start.checked_add(len)?)?;
    let mut out = Stripped::default();
    for c in core::str::from_utf8(text).ok()?.chars() {
        out.push(c as u32);
    }
    Some(out)
}

/// Up to four characters (the longest NFD in the tables is three).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stripped {
    chars: [char; 4],
    len: usize,
}

impl Stripped {
    fn push(&mut self, cp: u32) {
        if let (Some(slot), Some(c)) = (self.chars.get_mut(self.len), char::from_u32(cp)) {
            *slot = c;
            self.len += 1;
        }
    }

    /// The characters.
    pub(crate) fn chars(&self) -> &[char] {
        self.chars.get(..self.len).unwrap_or(&[])
    }
}
