//! [`SpTables`]: the read-only tables of a SentencePiece BPE model.
//!
//! Layout invariants (checked by `picobpe-model` when it builds or bakes the tables, relied on
//! here without panicking):
//! - `token_offsets.len() == n_ids + 1`, non-decreasing, last entry `== token_bytes.len()`;
//!   every id has non-empty bytes: its piece as SentencePiece stores it (`▁`, U+2581, for a
//!   space).
//! - `kinds` has one entry per id; `pieces` indexes every piece of every kind (piece strings
//!   are unique); `priorities` has one entry per slot of `pieces`, and `pieces.keys` is empty
//!   or has one [`piece_key_entry`] per slot.
//! - every [`PieceKind::Normal`] and [`PieceKind::UserDefined`] piece is at most
//!   [`MAX_PIECE_BYTES`] long; only such pieces have a non-zero priority.
//! - `byte_ids` is empty (no byte fallback) or has 256 entries, the ids of `<0x00>`..`<0xFF>`.
//! - every user-defined symbol is non-empty and holds no space, no `▁` and no U+FFFD.

pub use super::charsmap::{CharsMap, Replacement};
use crate::hash;
#[cfg(doc)]
use crate::tables::piece_key_entry;
use crate::tables::{bytes_eq, id_bytes, PieceMap};
use crate::utf8::{self, Utf8};
use crate::wordpiece::{Class, WordSplit};

/// Longest piece, in bytes, that merging may produce: pair candidates are assembled in a stack
/// buffer of this size. SentencePiece's trainer caps pieces at 16 characters by default (at
/// most 64 bytes); models with longer mergeable pieces are refused when they are imported.
pub const MAX_PIECE_BYTES: usize = 128;

/// What a piece is, as SentencePiece's `ModelProto.SentencePiece.Type` says (same numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
pub enum PieceKind {
    /// An ordinary piece: produced by merging, decoded with `▁` turned into a space.
    Normal = 1,
    /// The unknown piece (`<unk>`): emitted for a symbol not in the vocabulary when the model
    /// has no byte fallback; decoded as the model's unknown surface (` ⁇ `).
    Unknown = 2,
    /// A control symbol (`<s>`, `</s>`, ...): never produced from text, decoded as nothing.
    Control = 3,
    /// A user-defined symbol: matched verbatim in the text before merging, never split.
    UserDefined = 4,
    /// A byte piece `<0xHH>`: byte fallback for symbols not in the vocabulary.
    Byte = 6,
}

impl PieceKind {
    /// The kind with SentencePiece's type number `n` (`Unused`, 5, is not supported).
    pub const fn from_u8(n: u8) -> Option<PieceKind> {
        Some(match n {
            1 => PieceKind::Normal,
            2 => PieceKind::Unknown,
            3 => PieceKind::Control,
            4 => PieceKind::UserDefined,
            6 => PieceKind::Byte,
            _ => return None,
        })
    }
}

/// Set in a [`SpTables::kinds`] entry when the piece is *whole*: a word whose normalized
/// bytes are this piece merges into exactly this piece, so the encoder takes it after one
/// lookup. `picobpe-model` finds these by merging each piece's own bytes.
pub const WHOLE: u8 = 0x80;

/// The merge priority of a score: an integer whose order is the order of the `f32` scores
/// (higher merges first), so the target compares integers, not floats. `-0.0` comes before
/// `0.0`, as in `sentencepiece` (a piece scored `0.0` merges before one scored `-0.0`); NaN
/// has no priority (0), and every other score, infinities included, gets a priority of at
/// least 1.
pub const fn score_priority(score: f32) -> u32 {
    let bits = score.to_bits();
    if score.is_nan() {
        return 0;
    }
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}

/// Where user-defined symbols are matched and where the dummy prefix goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Sections {
    /// As `sentencepiece` does: the whole text is normalized (one `▁` before it), and
    /// user-defined symbols are matched among its characters.
    #[default]
    Inline,
    /// As Hugging Face `tokenizers` does with added tokens and a `Prepend("▁")` normalizer:
    /// the text is cut at user-defined symbols first, and each non-empty piece of text
    /// between them is normalized on its own, with a `▁` before it.
    EveryPiecePrefixed,
    /// As `tokenizers` does with added tokens and a `Metaspace` pre-tokenizer whose prepend
    /// scheme is `first`: cut at user-defined symbols, and only a piece of text at the very
    /// start gets the `▁` (when `add_dummy_prefix`), unless it starts with one.
    FirstPiecePrefixed,
    /// A `Metaspace` pre-tokenizer with prepend scheme `always` that does not split: cut at
    /// user-defined symbols, and every piece of text gets a `▁` unless it starts with one (or
    /// a space, which becomes one).
    UnmarkedPiecesPrefixed,
    /// A `Metaspace` pre-tokenizer that splits (`split: true`), prepend scheme `first` (or
    /// `never`, without `add_dummy_prefix`): as [`Sections::FirstPiecePrefixed`], and each
    /// `▁` then starts a word that is segmented on its own (see [`Sections::splits_words`]).
    FirstPieceWords,
    /// A `Metaspace` pre-tokenizer that splits, prepend scheme `always`: as
    /// [`Sections::UnmarkedPiecesPrefixed`], and each `▁` starts a word segmented on its own.
    UnmarkedPiecesWords,
    /// `WhitespaceSplit` then a `Metaspace` that splits, prepend scheme `always` (the T5 and
    /// ALBERT `tokenizer.json` files `transformers` published): cut at user-defined symbols,
    /// then at whitespace (Unicode `White_Space`, dropped); each whitespace-separated word
    /// gets a `▁` unless it starts with one, and each `▁` in it starts a word segmented on
    /// its own. With [`SpTables::pre_split`], the words are the pre-tokens of its steps
    /// (`Whitespace`, `Punctuation`, `Digits` before the `Metaspace`) instead.
    WhitespaceWords,
    /// Pre-tokenizer steps that remove whitespace and no `Metaspace` (`tokenizers`' quick-tour
    /// BPE: `Whitespace`): cut at user-defined symbols, then each pre-token of
    /// [`SpTables::pre_split`] is one word, segmented on its own as it is (no `▁` anywhere;
    /// a `▁` in the text is an ordinary character). Such a file has no decoder
    /// ([`SpTables::joins_pieces`]).
    PreTokens,
}

/// The steps of a `tokenizer.json` pre-tokenizer `Sequence` before a `Metaspace` that splits:
/// `WhitespaceSplit` or `Whitespace`, `Punctuation` and `Digits`, as the WordPiece family
/// reads them ([`WordSplit`]). Each pre-token they make is then one of
/// [`Sections::WhitespaceWords`]' words: a `▁` before it unless it starts with one (or a
/// space), and each `▁` in it starts a word segmented on its own.
#[derive(Clone, Copy)]
pub struct PreSplit {
    split: WordSplit,
    /// [`next_pre_token`], held here so that only programs whose tables name a [`PreSplit`]
    /// link it and the character classes it reads.
    next: fn(&PreSplit, &[u8], usize, bool) -> (usize, usize),
}

impl PreSplit {
    /// The steps of `split` (a `const fn`: baked tables name it in a `static`).
    pub const fn new(split: WordSplit) -> Self {
        PreSplit {
            split,
            next: next_pre_token,
        }
    }

    /// Its steps.
    pub fn split(&self) -> WordSplit {
        self.split
    }

    /// The next pre-token of `text` from `pos`: its start (past removed characters) and end
    /// (`text.len()` when none is left). A character is removed, a pre-token of its own, or
    /// joins the run of characters before it that have its class ([`WordSplit`]); a byte
    /// that is not UTF-8 is a U+FFFD of its own, as the normalizer reads it. With
    /// `hold_last`, a character cut short at the end of `text` belongs to the pre-token before
    /// it, which then reaches the end.
    #[inline]
    pub(crate) fn next_token(&self, text: &[u8], pos: usize, hold_last: bool) -> (usize, usize) {
        (self.next)(self, text, pos, hold_last)
    }
}

/// [`PreSplit::next_token`].
fn next_pre_token(pre: &PreSplit, text: &[u8], mut pos: usize, hold_last: bool) -> (usize, usize) {
    let end = text.len();
    // The class and length of the character at `at`; `None` when more input could complete
    // it.
    let class_at = |at: usize| -> Option<(Class, usize)> {
        let c = match utf8::decode(text, at) {
            Utf8::Scalar(cp, len) => (char::from_u32(cp), len),
            Utf8::Truncated(_) if hold_last => return None,
            Utf8::Invalid(_) | Utf8::Truncated(_) => (None, 1),
        };
        let ch = c.0.unwrap_or(char::REPLACEMENT_CHARACTER);
        Some((pre.split.class(ch, crate::wordpiece::char_flags(ch)), c.1))
    };
    while pos < end {
        match class_at(pos) {
            Some((Class::Removed, len)) => pos += len,
            _ => break,
        }
    }
    if pos >= end {
        return (end, end);
    }
    let word_end = match class_at(pos) {
        None => end,
        Some((Class::Removed | Class::Isolated, len)) => pos + len,
        Some((joins, len)) => {
            let mut at = pos + len;
            while at < end {
                match class_at(at) {
                    None => at = end,
                    Some((class, len)) if class == joins => at += len,
                    Some(_) => break,
                }
            }
            at
        }
    };
    (pos, word_end)
}

impl PartialEq for PreSplit {
    fn eq(&self, other: &Self) -> bool {
        self.split == other.split
    }
}

impl core::fmt::Debug for PreSplit {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("PreSplit")
            .field(&self.split.parts())
            .finish()
    }
}

impl Sections {
    /// True when every `▁` of the normalized text (after the first character of a piece of
    /// text) starts a new word, and each word is segmented as a call of its own: no piece
    /// spans two words, and a Unigram model's score and `<unk>` run start afresh. This is
    /// `Metaspace`'s `split: true`, whose words are `tokenizers`' pre-tokens. (Without it,
    /// words may still be encoded apart as an optimization: [`SpTables::split_words`].)
    #[inline]
    pub fn splits_words(self) -> bool {
        matches!(
            self,
            Sections::FirstPieceWords
                | Sections::UnmarkedPiecesWords
                | Sections::WhitespaceWords
                | Sections::PreTokens
        )
    }
}

/// Which SentencePiece algorithm segments the normalized text.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum SpAlgorithm {
    /// BPE: symbols merged by score (`model_type: BPE`).
    #[default]
    Bpe,
    /// Unigram: the best-scoring segmentation by Viterbi (`model_type: UNIGRAM`). The
    /// priorities then hold [`score_priority`] of each matchable piece's score (user-defined
    /// pieces: `0.1 × (bytes − 1)`, as `sentencepiece` scores them), recovered with
    /// [`priority_score`].
    Unigram {
        /// Score of an unknown character: the lowest normal score minus 10, as `sentencepiece`
        /// computes it in `f32` (or `tokenizers`, over every piece, in `f64`).
        unk_score: f64,
        /// Longest matchable piece, in bytes (at most [`MAX_PIECE_BYTES`]): how far a
        /// lookup walks from each character.
        max_piece_bytes: u32,
        /// Hugging Face `tokenizers`' arithmetic (`f64` sums, no score reset) instead of
        /// `sentencepiece`'s: tables imported from a `tokenizer.json`.
        tokenizers: bool,
    },
}

/// A one-hash Bloom filter over byte strings, in two halves of equal power-of-two size: the
/// first half has a bit set for every matchable piece, the second for every proper prefix of
/// one that ends at a character boundary. A clear bit proves absence (no lookup is needed, and
/// a Unigram walk from a position can stop); a set bit may be a false positive. Strings are
/// hashed one byte at a time with [`PieceFilter::step`] from [`PieceFilter::SEED`].
#[derive(Clone, Copy, Debug)]
pub struct PieceFilter<'a> {
    words: &'a [u64],
    /// Bits per half minus one (a mask), 0 when there is no filter.
    mask: u64,
    /// Words per half.
    half: usize,
}

impl<'a> PieceFilter<'a> {
    /// The hash of the empty string.
    pub const SEED: u64 = 0xcbf2_9ce4_8422_2325;

    /// The hash of a string extended by `b` (FNV-1a).
    #[inline]
    pub const fn step(h: u64, b: u8) -> u64 {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3)
    }

    /// The filter in `words` (empty, or an even power-of-two number of words; anything else
    /// is read as no filter).
    pub fn new(words: &'a [u64]) -> Self {
        let n = words.len();
        if n < 2 || !n.is_power_of_two() {
            return PieceFilter {
                words: &[],
                mask: 0,
                half: 0,
            };
        }
        PieceFilter {
            words,
            mask: (n as u64 / 2) * 64 - 1,
            half: n / 2,
        }
    }

    /// The two bit positions (in the piece half, in the prefix half) of hash `h`.
    #[inline]
    pub fn bits(&self, h: u64) -> (u64, u64) {
        let m = (h ^ h >> 29).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (m >> 8 & self.mask, m >> 36 & self.mask)
    }

    /// `(may be a piece, may be a proper prefix of a piece)` for a string of hash `h`; both
    /// true without a filter.
    #[inline]
    pub fn test(&self, h: u64) -> (bool, bool) {
        if self.half == 0 {
            return (true, true);
        }
        let (a, b) = self.bits(h);
        let bit = |w: usize, i: u64| self.words.get(w).is_some_and(|&x| x >> (i % 64) & 1 != 0);
        (
            bit((a / 64) as usize, a),
            bit(self.half + (b / 64) as usize, b),
        )
    }
}

/// The score whose [`score_priority`] is `priority` (for every priority except 0, which no
/// score has).
pub const fn priority_score(priority: u32) -> f32 {
    if priority >> 31 == 1 {
        f32::from_bits(priority & !(1 << 31))
    } else {
        f32::from_bits(!priority)
    }
}

/// Everything a SentencePiece encoder and decoder read. See the module docs for the
/// invariants.
#[derive(Clone, Copy, Debug)]
pub struct SpTables<'a> {
    /// The pieces of all ids, concatenated in id order (UTF-8, `▁` for a space).
    pub token_bytes: &'a [u8],
    /// `token_offsets[id]..token_offsets[id + 1]` is `id`'s range in `token_bytes`.
    pub token_offsets: &'a [u32],
    /// [`PieceKind`] of each id, as its `u8` value, with [`WHOLE`] set for whole pieces.
    pub kinds: &'a [u8],
    /// Per slot of `pieces`: [`score_priority`] of the slot's piece's score when two symbols
    /// may merge into it (a normal or user-defined piece with a score), else 0. Kept by slot so
    /// that a pair candidate costs one index lookup, one key compare and this load.
    pub priorities: &'a [u32],
    /// Every piece by its bytes (a perfect-hash index over [`hash::hash_bytes`]), with
    /// optional keys ([`piece_key_entry`]) that confirm a piece of up to 7 bytes without
    /// reading the token bytes.
    pub pieces: PieceMap<'a>,
    /// Empty (no byte fallback), or the ids of the 256 byte pieces by byte value.
    pub byte_ids: &'a [u32],
    /// The id of the unknown piece.
    pub unk_id: u32,
    /// What the unknown piece decodes to (SentencePiece's `unk_surface`, ` ⁇ ` by default).
    pub unk_surface: &'a [u8],
    /// BPE: each unknown character is an `<unk>` of its own (`tokenizers`' BPE with
    /// `fuse_unk: false`); false: a run of them is one (`sentencepiece`, `fuse_unk: true`).
    pub unk_per_char: bool,
    /// Ids of the user-defined symbols (matched in the text, longest first).
    pub user_defined: &'a [u32],
    /// With sections: per entry of [`SpTables::user_defined`], whether the symbol takes the
    /// whitespace beside it ([`crate::special::LSTRIP`], [`crate::special::RSTRIP`]:
    /// `tokenizers`' `lstrip` and `rstrip` on an added token, XLM-RoBERTa's `<mask>`); empty
    /// when none does.
    pub user_strips: &'a [u8],
    /// Normalizer: a `▁` is put before the text (`add_dummy_prefix`).
    pub add_dummy_prefix: bool,
    /// Normalizer: leading and trailing spaces are dropped and runs of spaces become one
    /// (`remove_extra_whitespaces`).
    pub remove_extra_whitespaces: bool,
    /// With sections: runs of spaces become one and nothing is stripped (`tokenizers`'
    /// `Replace(Regex(" {2,}"), " ")` at the end of a normalizer, as its
    /// `SentencePieceUnigramTokenizer` has); never with `remove_extra_whitespaces`.
    pub collapse_spaces: bool,
    /// With sections whose words are segmented apart: each text between user-defined symbols
    /// loses its leading and trailing whitespace (Rust's `char::is_whitespace`) before the
    /// normalizer sees it (`tokenizers`' `Strip(left, right)` first in the normalizer, as
    /// `transformers`' DeBERTa-v2/v3 conversion has).
    pub strip_sections: bool,
    /// Where user-defined symbols are matched and where the dummy prefix goes.
    pub sections: Sections,
    /// With [`Sections::WhitespaceWords`]: the pre-tokenizer steps before the `Metaspace`,
    /// when they are not `WhitespaceSplit` alone (`None`: `WhitespaceSplit`); with
    /// [`Sections::PreTokens`], the pre-tokenizer.
    pub pre_split: Option<PreSplit>,
    /// Ids decode as `tokenizers` decodes a `tokenizer.json` with no decoder: each piece as it
    /// is (`▁` and `<0xHH>` included), a space between two.
    pub joins_pieces: bool,
    /// No mergeable piece holds a character other than `▁` followed by `▁`, so no merge
    /// crosses the start of a word (a `▁` after another character) and words are encoded one
    /// at a time. When false, the whole text is one word.
    pub split_words: bool,
    /// ASCII bytes (bit `b % 64` of word `b / 64`) that no mergeable piece of two or more
    /// bytes contains, such as `\n` and the digits in Llama-style models: a symbol made of
    /// one never merges with a neighbour, so a long word is merged segment by segment between
    /// them (smaller heaps, same ids). All zero is always correct, only slower.
    pub cut_bytes: [u64; 2],
    /// BPE or Unigram (with the Unigram parameters).
    pub algorithm: SpAlgorithm,
    /// Unigram: a filter over the matchable pieces and their proper prefixes (see
    /// [`PieceFilter`]); empty: no filter (every lookup is made). Unused by BPE.
    pub piece_filter: &'a [u64],
    /// Unigram tables imported from a `tokenizer.json`: per slot of `pieces`, the `f64` bits of
    /// the piece's score as `tokenizers` reads it; empty otherwise (the priorities hold the
    /// `f32` scores).
    pub f64_scores: &'a [u64],
    /// The normalizer's character map (`precompiled_charsmap`); empty for the `identity` rule.
    pub charsmap: CharsMap<'a>,
    /// A `tokenizer.json`'s normalizer, applied to each piece of text between user-defined
    /// symbols before it is split into words; only with sections whose words are segmented
    /// apart ([`Sections::splits_words`]): a Unicode form (`NFKC` and the like), or
    /// `Precompiled` ([`SpTables::charsmap`] applied by `tokenizers`' rule, a grapheme
    /// cluster at a time, in place of `sentencepiece`'s).
    pub normalizer: Option<crate::normalizer::TextNormalizer>,
}

impl<'a> SpTables<'a> {
    /// True when ids decode as `tokenizers`' `Metaspace` decoder renders them: tables from a
    /// `tokenizer.json` whose `Metaspace` pre-tokenizer prepends a `▁` (prepend scheme
    /// `always` or `first`; its decoder mirrors it). See [`crate::SpTokenizer::decode`].
    #[inline]
    pub fn metaspace_decoder(&self) -> bool {
        self.add_dummy_prefix
            && matches!(
                self.sections,
                Sections::FirstPiecePrefixed
                    | Sections::UnmarkedPiecesPrefixed
                    | Sections::FirstPieceWords
                    | Sections::UnmarkedPiecesWords
                    | Sections::WhitespaceWords
            )
    }

    /// True when a space right after a space of the same piece of text is dropped
    /// ([`SpTables::remove_extra_whitespaces`] or [`SpTables::collapse_spaces`]).
    #[inline]
    pub fn collapses_spaces(&self) -> bool {
        self.remove_extra_whitespaces || self.collapse_spaces
    }

    /// True when `b` is one of [`SpTables::cut_bytes`].
    #[inline]
    pub fn is_cut_byte(&self, b: u8) -> bool {
        match self.cut_bytes.get(usize::from(b / 64)) {
            Some(&w) => w >> (b % 64) & 1 != 0,
            None => false,
        }
    }

    /// Number of ids: valid ids are `0..n_ids()`.
    #[inline]
    pub fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
    }

    /// The piece of `id` (UTF-8 bytes, `▁` for a space), or `None` for an id out of range.
    #[inline]
    pub fn piece_bytes(&self, id: u32) -> Option<&'a [u8]> {
        id_bytes(self.token_bytes, self.token_offsets, id)
    }

    /// The kind of `id`, or `None` for an id out of range.
    #[inline]
    pub fn kind(&self, id: u32) -> Option<PieceKind> {
        PieceKind::from_u8(*self.kinds.get(id as usize)? & !WHOLE)
    }

    /// True when `id` is a whole piece (see [`WHOLE`]).
    #[inline]
    pub fn is_whole(&self, id: u32) -> bool {
        self.kinds.get(id as usize).is_some_and(|&k| k & WHOLE != 0)
    }

    /// The slot of `pieces` that holds `piece`, if it is a piece.
    #[inline]
    fn slot_of(&self, piece: &[u8]) -> Option<usize> {
        let seed = self.pieces.index.seed;
        let key = hash::short_key(piece);
        let h = if key != 0 {
            hash::hash_u64(key, seed)
        } else {
            hash::hash_long(piece, seed)
        };
        let slot = self.pieces.index.slot(h)?;
        if let Some(&stored) = self.pieces.keys.get(slot) {
            if key != 0 {
                // A piece of 1–7 bytes: the packed key decides.
                return (stored == key).then_some(slot);
            }
            // A longer piece: the entry holds the stored piece's length and offset.
            let len = (stored >> 32) as usize & 0xFF_FFFF;
            let start = stored as u32 as usize;
            let bytes = self.token_bytes.get(start..start.checked_add(len)?)?;
            return (stored >> 56 == 0xFF && bytes_eq(bytes, piece)).then_some(slot);
        }
        let id = *self.pieces.ids.get(slot)?;
        bytes_eq(self.piece_bytes(id)?, piece).then_some(slot)
    }

    /// The id whose piece is `piece`, of any kind.
    #[inline]
    pub fn piece_id(&self, piece: &[u8]) -> Option<u32> {
        self.pieces.ids.get(self.slot_of(piece)?).copied()
    }

    /// The slot, id and priority of `piece` when it is a piece of any kind (the priority is 0 when
    /// it is not matchable or mergeable).
    #[inline]
    pub(crate) fn lookup(&self, piece: &[u8]) -> Option<(usize, u32, u32)> {
        let slot = self.slot_of(piece)?;
        Some((
            slot,
            *self.pieces.ids.get(slot)?,
            self.priorities.get(slot).copied().unwrap_or(0),
        ))
    }

    /// The merge priority of `piece` when two symbols may merge into it (a normal or
    /// user-defined piece), else 0.
    #[inline]
    pub(crate) fn merge_priority(&self, piece: &[u8]) -> u32 {
        self.slot_of(piece)
            .and_then(|slot| self.priorities.get(slot).copied())
            .unwrap_or(0)
    }

    /// The longest user-defined symbol `text` starts with: its length and id.
    #[inline]
    pub(crate) fn user_symbol_at(&self, text: &[u8]) -> Option<(usize, u32)> {
        self.user_symbol_strip_at(text)
            .map(|(len, id, _)| (len, id))
    }

    /// [`SpTables::user_symbol_at`] with the symbol's [`SpTables::user_strips`] bits.
    #[inline]
    pub(crate) fn user_symbol_strip_at(&self, text: &[u8]) -> Option<(usize, u32, u8)> {
        let mut best: Option<(usize, u32, u8)> = None;
        for (i, &id) in self.user_defined.iter().enumerate() {
            let Some(sym) = self.piece_bytes(id) else {
                continue;
            };
            if best.is_none_or(|(len, _, _)| sym.len() > len) && text.starts_with(sym) {
                let strip = self.user_strips.get(i).copied().unwrap_or(0);
                best = Some((sym.len(), id, strip));
            }
        }
        best
    }

    /// True when unknown symbols fall back to byte pieces.
    #[inline]
    pub fn byte_fallback(&self) -> bool {
        self.byte_ids.len() == 256
    }
}

#[cfg(test)]
mod tests {
    use super::{priority_score, score_priority};

    #[test]
    fn priorities_order_like_scores() {
        let scores = [
            f32::NEG_INFINITY,
            -1e30,
            -2.5,
            -1.0,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            1.0,
            3.5,
            1e30,
            f32::INFINITY,
        ];
        for w in scores.windows(2) {
            assert!(score_priority(w[0]) < score_priority(w[1]), "{w:?}");
        }
        // sentencepiece merges a piece scored 0.0 before one scored -0.0.
        assert!(score_priority(-0.0) < score_priority(0.0));
        assert!(score_priority(-f32::MIN_POSITIVE) < score_priority(-0.0));
        assert_eq!(score_priority(f32::NAN), 0);
        for s in scores {
            assert_eq!(priority_score(score_priority(s)).to_bits(), s.to_bits());
        }
        assert!(score_priority(f32::NEG_INFINITY) > 0);
    }
}
