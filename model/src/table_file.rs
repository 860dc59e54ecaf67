//! The prebuilt host tables of a version-3 model file: a [`TableData`] in its final layout, so
//! loading a model is mapping and checking, not building (no perfect hashing, no trie, no
//! byte-pair table to compute).
//!
//! ```text
//! u8        kind: 0 = byte-level BPE tables, 1 = SentencePiece BPE tables (below), 2 =
//!           byte-level BPE tables with settings (below)
//! u8        pattern: 0 gpt2, 1 cl100k, 2 o200k, … (the PatternKind order) in the low four
//!           bits; the normalizer in bits 4-6 (0 none, 1 NFC, 2 NFD, 3 NFKC, 4 NFKD); bit 7
//!           `add_prefix_space` (not with a normalizer)
//! u8        kind 2 only: settings, bit 1 `Lowercase`, bit 2 whitespace runs made one space,
//!           bit 3 special tokens matched in the normalized text (`crate::TextSteps::bits`)
//! arrays    in this order, each a u64 LE element count, zero padding up to the next multiple
//!           of 8 *in the file*, then the elements, little-endian:
//!           token_bytes u8, token_offsets u32, byte_ids u32 (256), pairs u64,
//!           pair_index (u64 LE seed, pilots u8, remap u32), ranks u32, pieces u32,
//!           piece_index (seed, pilots, remap), piece_keys u64, byte_pairs u32,
//!           trie edges u64, next_prefix u32, splits u64, pair_filter u64, starts u64, chars u64,
//!           and for kind 2 word_end_ids u32 (0, or 256 with an end-of-word suffix) and
//!           empty_ids u32 (the tokens with no bytes, increasing)
//! specials  u64 count, then per special: u64 text length, UTF-8 text, u32 id
//! ```
//!
//! SentencePiece tables ([`SpTableData`]), after the kind byte:
//!
//! ```text
//! u8 × 5    add_dummy_prefix, remove_extra_whitespaces (1; 2 collapse_spaces; bit 2
//!           strip_sections; bit 3 a pre-split byte follows; bit 4 joins_pieces), split_words
//!           (bit 0) with the character steps (bits 1-4: quote pairs, StripAccents,
//!           Lowercase, Lowercase first), sections
//!           (the `Sections` variant index 0-7), algorithm (bits 0-1: 0 BPE, 1 Unigram as
//!           `sentencepiece` adds, 2 Unigram as `tokenizers` adds; bit 2 a character map;
//!           bit 3 one `<unk>` per unknown character; bits 4-6 the Unicode normalizer, 0
//!           none, 1 NFC, 2 NFD, 3 NFKC, 4 NFKD)
//! u8        with bit 3 above only: the pre-tokenizer steps before the `Metaspace`
//!           (`wordpiece::split_code`)
//! u32 LE    unk_id
//! u64 × 2   cut_bytes
//! Unigram only: u64 unk_score (f64 bits), u32 max_piece_bytes, u32 0
//! arrays    as above: token_bytes u8, token_offsets u32, kinds u8, priorities u32,
//!           pieces u32, piece_index (seed, pilots, remap), piece_keys u64, byte_ids u32,
//!           unk_surface u8, user_defined u32, and for Unigram only: piece_filter u64,
//!           f64_scores u64 (empty unless a tokenizer.json import)
//! with a character map (bit 2 of the algorithm byte): u32 LE lookahead, u32 Hangul flag, then
//!           the arrays charsmap_units u32, charsmap_strings u8, charsmap_runs u32,
//!           charsmap_run_values u32, charsmap_sequences u32, charsmap_sequence_values u32,
//!           charsmap_tails u32 (the double array, or the compact form with empty units),
//!           then u64 × 2 the ASCII key set, u64 × 4 the lead bytes, the arrays charsmap_ascii_pairs u64,
//!           charsmap_bmp_index u8 and charsmap_bmp_blocks u64
//! ```
//!
//! Fixed-width, aligned arrays rather than postcard varints: on a little-endian host the
//! arrays of a memory-mapped file *are* the tables (the [`TableData`] read borrows them,
//! checked for alignment by `bytemuck`), so loading o200k_base costs a checksum and a layout check, a few
//! milliseconds; elsewhere they are copied. A count is checked against the bytes left before
//! anything is allocated, so a hostile count cannot allocate more than the file holds.
//! [`Blob::check_layout`] then checks the invariants the core's lookups assume (offsets,
//! lengths, ids in range): the core never panics on any table content, but a table that breaks
//! them would encode wrongly, so such a file is rejected with its own error.

use std::borrow::Cow;

use picobpe::sentencepiece::{Sections, SpAlgorithm};
use picobpe::{bytelevel::BYTE_PAIRS, Pattern, MAX_IDS};

use crate::error::ModelError;
use crate::pattern::PatternKind;
use crate::sentencepiece::SpTableData;
use crate::tables::{IndexData, TableData};

/// Kind byte of byte-level BPE tables.
const KIND_BYTE_PAIR: u8 = 0;
/// Kind byte of SentencePiece BPE tables.
const KIND_SENTENCEPIECE: u8 = 1;
/// Kind byte of byte-level BPE tables with settings: normalizer steps (a settings byte after
/// the pattern byte) or an end-of-word suffix (`word_end_ids`, 0 or 256, after the trie).
const KIND_BYTE_PAIR_SETTINGS: u8 = 2;

/// Where user-defined symbols are matched, by the code of the sections flag.
const SECTIONS: [Sections; 8] = [
    Sections::Inline,
    Sections::EveryPiecePrefixed,
    Sections::FirstPiecePrefixed,
    Sections::UnmarkedPiecesPrefixed,
    Sections::FirstPieceWords,
    Sections::UnmarkedPiecesWords,
    Sections::WhitespaceWords,
    Sections::PreTokens,
];

/// True when a tables blob holds SentencePiece tables (by its kind byte).
pub(crate) fn is_sentencepiece(blob: &[u8]) -> bool {
    blob.first() == Some(&KIND_SENTENCEPIECE)
}

/// The tables of one family as a blob: their fields, walked once in file order for both
/// writing and reading ([`Blob::fields`]), and the invariants their live tables rely on.
pub(crate) trait Blob<'a>: Default {
    /// Visit every field in file order (the writer reads them, the reader fills them).
    fn fields(&mut self, f: &mut impl Fields<'a>) -> Result<(), ModelError>;
    /// Check the invariants the core's lookups assume.
    fn check_layout(&self) -> Result<(), ModelError>;
}

/// What a walk does with each field of a blob: [`Writer`] appends it, [`Reader`] decodes it.
pub(crate) trait Fields<'a> {
    /// A little-endian scalar.
    fn scalar<T: Le>(&mut self, what: &str, value: &mut T) -> Result<(), ModelError>;
    /// An array: a u64 count, zero padding to a multiple of 8 in the file, the elements.
    fn array<T: Le>(&mut self, what: &str, items: &mut Cow<'a, [T]>) -> Result<(), ModelError>;
    /// The special tokens: a u64 count, then per special a u64 text length, the UTF-8 text and
    /// a u32 id.
    fn specials(&mut self, specials: &mut Cow<'a, [(String, u32)]>) -> Result<(), ModelError>;
}

/// Append the tables blob of `tables` ([`TableData`] or [`SpTableData`]) to `out`, whose
/// byte 0 is at offset `base` in the file (array elements are aligned to 8 in the file).
pub(crate) fn write<'a, V: Blob<'a>>(
    tables: &mut V,
    out: &mut Vec<u8>,
    base: usize,
) -> Result<(), ModelError> {
    tables.fields(&mut Writer { out, base })
}

/// Decode and check a tables blob (the whole of `bytes`, which starts at offset `base` in the
/// file: alignment is judged on the file offset, as the writer padded); each array is
/// borrowed from `bytes` when it is aligned and the host is little-endian, else copied.
pub(crate) fn read<'a, V: Blob<'a>>(bytes: &'a [u8], base: usize) -> Result<V, ModelError> {
    let mut tables = V::default();
    let mut r = Reader { bytes, at: 0, base };
    tables.fields(&mut r)?;
    match bytes.len() - r.at {
        0 => tables.check_layout().map(|()| tables),
        left => Err(bad(format!("{left} bytes after the last table"))),
    }
}

/// The kind byte, which must be `kind`.
fn kind<'a>(f: &mut impl Fields<'a>, kind: u8) -> Result<(), ModelError> {
    let mut found = kind;
    f.scalar("kind", &mut found)?;
    match found == kind {
        true => Ok(()),
        false => Err(bad(format!("unknown table kind {found}"))),
    }
}

/// Zero bytes needed after `offset` to reach a multiple of 8.
fn padding(offset: usize) -> usize {
    offset.wrapping_neg() & 7
}

/// Appends each field to `out`, whose byte 0 is at offset `base` in the file.
struct Writer<'o> {
    out: &'o mut Vec<u8>,
    base: usize,
}

impl<'a> Fields<'a> for Writer<'_> {
    fn scalar<T: Le>(&mut self, _: &str, value: &mut T) -> Result<(), ModelError> {
        value.put(self.out);
        Ok(())
    }

    fn array<T: Le>(&mut self, _: &str, items: &mut Cow<'a, [T]>) -> Result<(), ModelError> {
        (items.len() as u64).put(self.out);
        let pad = padding(self.base + self.out.len());
        self.out.resize(self.out.len() + pad, 0);
        for &item in items.iter() {
            item.put(self.out);
        }
        Ok(())
    }

    fn specials(&mut self, specials: &mut Cow<'a, [(String, u32)]>) -> Result<(), ModelError> {
        (specials.len() as u64).put(self.out);
        for (text, id) in specials.iter() {
            (text.len() as u64).put(self.out);
            self.out.extend_from_slice(text.as_bytes());
            id.put(self.out);
        }
        Ok(())
    }
}

/// An array element or scalar stored little-endian; `bytemuck::Pod` so an aligned
/// little-endian array can be borrowed as is.
pub(crate) trait Le: bytemuck::Pod {
    /// Bytes per value.
    const SIZE: usize = size_of::<Self>();
    /// The value with its bytes in little-endian order, or back (the same swap).
    fn le(self) -> Self;
    /// Append the value's bytes.
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(bytemuck::bytes_of(&self.le()));
    }
    /// The value of its `SIZE` bytes.
    fn from_le(bytes: &[u8]) -> Self {
        bytemuck::pod_read_unaligned::<Self>(bytes).le()
    }
}

/// [`Le`] for integers, whose `to_le` is the swap.
macro_rules! le {
    ($($int:ty),*) => {$(
        impl Le for $int {
            fn le(self) -> Self {
                self.to_le()
            }
        }
    )*};
}
le!(u8, u32, u64);

/// A perfect-hash index: the seed, then the pilots and the remapped slots as arrays.
fn index<'a>(
    f: &mut impl Fields<'a>,
    what: &str,
    index: &mut IndexData<'a>,
) -> Result<(), ModelError> {
    f.scalar(what, &mut index.seed)?;
    f.array(what, &mut index.pilots)?;
    f.array(what, &mut index.remap)
}

impl<'a> Blob<'a> for TableData<'a> {
    fn fields(&mut self, f: &mut impl Fields<'a>) -> Result<(), ModelError> {
        let plain = self.word_end_ids.is_empty() && self.empty_ids.is_empty();
        let mut found = match plain && self.steps.bits() == 0 {
            true => KIND_BYTE_PAIR,
            false => KIND_BYTE_PAIR_SETTINGS,
        };
        f.scalar("kind", &mut found)?;
        if found != KIND_BYTE_PAIR && found != KIND_BYTE_PAIR_SETTINGS {
            return Err(bad(format!("unknown table kind {found}")));
        }
        let patterns = PatternKind::ALL.map(Pattern::from);
        let pattern = patterns
            .iter()
            .position(|&p| p == self.pattern)
            .unwrap_or(0) as u8;
        let mut code = pattern
            | crate::normalizer::code(self.normalizer) << 4
            | u8::from(self.prefix_space) << 7;
        f.scalar("pattern", &mut code)?;
        self.pattern = *patterns
            .get(usize::from(code & 0xF))
            .ok_or_else(|| bad(format!("unknown pattern {}", code & 0xF)))?;
        self.normalizer = crate::normalizer::from_code(code >> 4 & 7)
            .ok_or_else(|| bad(format!("unknown normalizer {}", code >> 4 & 7)))?;
        self.prefix_space = code & 0x80 != 0;
        if self.prefix_space && self.normalizer.is_some() {
            return Err(bad("a prefix space with a normalizer".to_owned()));
        }
        if found == KIND_BYTE_PAIR_SETTINGS {
            let mut bits = self.steps.bits();
            f.scalar("settings", &mut bits)?;
            if bits & !0b1110 != 0 {
                return Err(bad(format!("unknown settings bits {bits:#04x}")));
            }
            self.steps = crate::TextSteps::from_bits(bits);
            (self.steps.check(self.normalizer, self.prefix_space)).map_err(bad)?;
        }
        f.array("token_bytes", &mut self.token_bytes)?;
        f.array("token_offsets", &mut self.token_offsets)?;
        f.array("byte_ids", &mut self.byte_ids)?;
        if self.byte_ids.len() != 256 {
            return Err(bad("byte_ids does not have 256 entries".to_owned()));
        }
        f.array("pairs", &mut self.pairs)?;
        index(f, "pair_index", &mut self.pair_index)?;
        f.array("ranks", &mut self.ranks)?;
        f.array("pieces", &mut self.pieces)?;
        index(f, "piece_index", &mut self.piece_index)?;
        f.array("piece_keys", &mut self.piece_keys)?;
        f.array("byte_pairs", &mut self.byte_pairs)?;
        let trie = &mut self.trie;
        f.array("trie edges", &mut trie.edges)?;
        f.array("trie next_prefix", &mut trie.next_prefix)?;
        f.array("trie splits", &mut trie.splits)?;
        f.array("trie pair_filter", &mut trie.pair_filter)?;
        f.array("trie starts", &mut trie.starts)?;
        f.array("trie chars", &mut trie.chars)?;
        if found == KIND_BYTE_PAIR_SETTINGS {
            f.array("word_end_ids", &mut self.word_end_ids)?;
            if !matches!(self.word_end_ids.len(), 0 | 256) {
                return Err(bad("word_end_ids has neither 0 nor 256 entries".to_owned()));
            }
            f.array("empty_ids", &mut self.empty_ids)?;
        }
        f.specials(&mut self.specials)
    }

    /// The invariants [`picobpe::Tables`] documents: offsets non-decreasing and ending at the
    /// byte count, at most [`MAX_IDS`] ids, every stored id in range, optional tables either
    /// empty or of their full length, each index as long as its entries.
    fn check_layout(&self) -> Result<(), ModelError> {
        // Holes (unused ids) have empty ranges.
        let n = check_offsets(&self.token_offsets, self.token_bytes.len(), true)?;
        let mask = (1u64 << picobpe::layout::ID_BITS) - 1;
        check_ids(n, "byte_ids", self.byte_ids.iter().copied())?;
        check_ids(n, "word_end_ids", self.word_end_ids.iter().copied())?;
        check_ids(n, "empty_ids", self.empty_ids.iter().copied())?;
        let empty = |&id: &u32| {
            self.token_offsets.get(id as usize) == self.token_offsets.get(id as usize + 1)
        };
        if !self.empty_ids.windows(2).all(|w| w[0] < w[1]) || !self.empty_ids.iter().all(empty) {
            return Err(bad(
                "empty_ids not increasing, or naming an id with bytes".to_owned()
            ));
        }
        if !self.word_end_ids.is_empty() && (!self.pieces.is_empty() || !self.trie.edges.is_empty())
        {
            let why = "whole pieces or a token trie beside an end-of-word suffix";
            return Err(bad(why.to_owned()));
        }
        check_ids(n, "pieces", self.pieces.iter().copied())?;
        check_ids(n, "specials", self.specials.iter().map(|s| s.1))?;
        check_ids(n, "pairs", self.pairs.iter().map(|&e| (e & mask) as u32))?;
        check_optional(&[
            ("ranks", self.ranks.len(), n),
            ("piece_keys", self.piece_keys.len(), self.pieces.len()),
            ("byte_pairs", self.byte_pairs.len(), BYTE_PAIRS),
            ("trie next_prefix", self.trie.next_prefix.len(), n),
            ("trie splits", self.trie.splits.len(), n),
        ])?;
        check_index("pair_index", &self.pair_index, self.pairs.len())?;
        check_index("piece_index", &self.piece_index, self.pieces.len())
    }
}

/// Token offsets start at 0, never go down (with `holes`; else strictly rise: no empty
/// entry), and end at the byte count; at most [`MAX_IDS`] ids (at least one without `holes`).
/// Returns the number of ids.
fn check_offsets(offsets: &[u32], n_bytes: usize, holes: bool) -> Result<usize, ModelError> {
    let n = offsets.len().saturating_sub(1);
    if offsets.is_empty() || n > MAX_IDS || (!holes && n == 0) {
        return Err(bad(format!("{} token offsets", offsets.len())));
    }
    let rises = |w: &[u32]| if holes { w[0] <= w[1] } else { w[0] < w[1] };
    if offsets[0] != 0 || !offsets.windows(2).all(rises) || offsets[n] as usize != n_bytes {
        return Err(bad(
            "token offsets do not rise from 0 to the byte count".to_owned()
        ));
    }
    Ok(n)
}

/// Every id the table `what` holds is below `n`.
fn check_ids(n: usize, what: &str, ids: impl IntoIterator<Item = u32>) -> Result<(), ModelError> {
    match ids.into_iter().find(|&id| id as usize >= n) {
        Some(id) => Err(bad(format!("{what} holds id {id}, the model has {n} ids"))),
        None => Ok(()),
    }
}

/// Each optional table `(name, len, full)` is empty or has its full length.
fn check_optional(tables: &[(&str, usize, usize)]) -> Result<(), ModelError> {
    for &(what, len, full) in tables {
        if len != 0 && len != full {
            return Err(bad(format!("{what} has {len} entries, not 0 or {full}")));
        }
    }
    Ok(())
}

/// A perfect-hash index fits its `len` entries: every remapped slot is one of them, and there
/// are pilots when there are entries.
fn check_index(what: &str, index: &IndexData<'_>, len: usize) -> Result<(), ModelError> {
    if index.remap.iter().any(|&slot| slot as usize >= len) || (len > 0 && index.pilots.is_empty())
    {
        return Err(bad(format!("{what} does not fit its {len} entries")));
    }
    Ok(())
}

fn bad(reason: String) -> ModelError {
    ModelError::BadTables { reason }
}

/// Decodes each field from a blob; every read is bounds-checked and names what it was reading.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// File offset of `bytes[0]`.
    base: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8], ModelError> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| bad(format!("the tables end inside {what}")))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    /// A count of elements of at least `min_size` bytes each, no more than the bytes left hold.
    fn count(&mut self, what: &str, min_size: usize) -> Result<usize, ModelError> {
        let count = <u64 as Le>::from_le(self.take(8, what)?);
        let left = (self.bytes.len() - self.at) as u64;
        if count.saturating_mul(min_size as u64) > left {
            return Err(bad(format!(
                "{what} claims {count} entries, more than the file holds"
            )));
        }
        Ok(count as usize)
    }
}

impl<'a> Fields<'a> for Reader<'a> {
    fn scalar<T: Le>(&mut self, what: &str, value: &mut T) -> Result<(), ModelError> {
        *value = T::from_le(self.take(T::SIZE, what)?);
        Ok(())
    }

    /// Borrowed when the host is little-endian and the bytes are aligned in memory, else
    /// decoded into a vector.
    fn array<T: Le>(&mut self, what: &str, items: &mut Cow<'a, [T]>) -> Result<(), ModelError> {
        let count = self.count(what, T::SIZE)?;
        self.take(padding(self.base + self.at), what)?;
        let bytes = self.take(count * T::SIZE, what)?;
        *items = match bytemuck::try_cast_slice(bytes) {
            Ok(aligned) if cfg!(target_endian = "little") => Cow::Borrowed(aligned),
            _ => Cow::Owned(bytes.chunks_exact(T::SIZE).map(T::from_le).collect()),
        };
        Ok(())
    }

    fn specials(&mut self, specials: &mut Cow<'a, [(String, u32)]>) -> Result<(), ModelError> {
        let n_specials = self.count("specials", 12)?;
        let mut read = Vec::with_capacity(n_specials);
        for _ in 0..n_specials {
            let len = self.count("special text", 1)?;
            let text = std::str::from_utf8(self.take(len, "special text")?)
                .map_err(|_| bad("a special token's text is not UTF-8".to_owned()))?
                .to_owned();
            let id = <u32 as Le>::from_le(self.take(4, "special id")?);
            read.push((text, id));
        }
        *specials = Cow::Owned(read);
        Ok(())
    }
}

impl<'a> Blob<'a> for SpTableData<'a> {
    fn fields(&mut self, f: &mut impl Fields<'a>) -> Result<(), ModelError> {
        kind(f, KIND_SENTENCEPIECE)?;
        // The Unigram parameters: the unknown score's bits, the longest matchable piece, a zero.
        let (algorithm, mut unigram) = match self.algorithm {
            SpAlgorithm::Bpe => (0, (0, 0, 0u32)),
            SpAlgorithm::Unigram {
                unk_score,
                max_piece_bytes,
                tokenizers,
            } => (
                1 + u8::from(tokenizers),
                (unk_score.to_bits(), max_piece_bytes, 0),
            ),
        };
        // Bit 2 of the algorithm byte: the tables end with a character map.
        let mapped = !self.charsmap_units.is_empty() || !self.charsmap_runs.is_empty();
        // Bit 3: one `<unk>` per unknown character; bits 4-6: the Unicode normalizer; bit 7:
        // the character map is applied by `Precompiled`'s rule.
        let algorithm = algorithm
            | u8::from(mapped) << 2
            | u8::from(self.unk_per_char) << 3
            | crate::normalizer::code(self.normalizer) << 4
            | u8::from(self.precompiled) << 7;
        let sections = SECTIONS
            .iter()
            .position(|&s| s == self.sections)
            .unwrap_or(0);
        let mut flags = [
            u8::from(self.add_dummy_prefix),
            // 1: remove_extra_whitespaces; 2: collapse_spaces; bit 2: strip_sections; bit 3:
            // a pre-split byte follows the flags; bit 4: joins_pieces.
            u8::from(self.remove_extra_whitespaces)
                | u8::from(self.collapse_spaces) << 1
                | u8::from(self.strip_sections) << 2
                | u8::from(self.pre_split.is_some()) << 3
                | u8::from(self.joins_pieces) << 4,
            // Bit 0: split_words; bits 1-4: the character steps.
            u8::from(self.split_words) | self.char_steps.bits() << 1,
            sections as u8,
            algorithm,
        ];
        for flag in &mut flags {
            f.scalar("flags", flag)?;
        }
        let char_steps = crate::normalizer::CharSteps::from_bits(flags[2] >> 1);
        if flags[0] > 1
            || flags[1] & 3 > 2
            || flags[1] > 31
            || char_steps.is_none()
            || usize::from(flags[3]) >= SECTIONS.len()
            || flags[4] & 3 > 2
            || crate::normalizer::from_code(flags[4] >> 4 & 7).is_none()
        {
            return Err(bad(format!("unknown flag values {flags:?}")));
        }
        let mapped = flags[4] & 4 != 0;
        self.unk_per_char = flags[4] & 8 != 0;
        self.normalizer = crate::normalizer::from_code(flags[4] >> 4 & 7).flatten();
        self.precompiled = flags[4] & 0x80 != 0;
        flags[4] &= 3;
        self.add_dummy_prefix = flags[0] == 1;
        self.remove_extra_whitespaces = flags[1] & 3 == 1;
        self.collapse_spaces = flags[1] & 3 == 2;
        self.strip_sections = flags[1] & 4 != 0;
        self.joins_pieces = flags[1] & 16 != 0;
        if flags[1] & 8 != 0 {
            // The pre-tokenizer steps ([`crate::wordpiece::split_code`]).
            let mut code = self.pre_split.map_or(0, crate::wordpiece::split_code);
            f.scalar("pre_split", &mut code)?;
            let split = crate::wordpiece::split_from_code(code);
            self.pre_split = Some(split.ok_or_else(|| bad(format!("unknown pre-split {code}")))?);
        } else {
            self.pre_split = None;
        }
        self.split_words = flags[2] & 1 == 1;
        self.char_steps = char_steps.unwrap_or_default();
        self.sections = SECTIONS[usize::from(flags[3])];
        f.scalar("unk_id", &mut self.unk_id)?;
        f.scalar("cut_bytes", &mut self.cut_bytes[0])?;
        f.scalar("cut_bytes", &mut self.cut_bytes[1])?;
        self.algorithm = SpAlgorithm::Bpe;
        if flags[4] != 0 {
            f.scalar("unk_score", &mut unigram.0)?;
            f.scalar("max_piece_bytes", &mut unigram.1)?;
            f.scalar("max_piece_bytes", &mut unigram.2)?;
            let (unk_score, max_piece_bytes) = (f64::from_bits(unigram.0), unigram.1);
            if unk_score.is_nan()
                || max_piece_bytes as usize > picobpe::sentencepiece::MAX_PIECE_BYTES
                || unigram.2 != 0
            {
                return Err(bad(format!(
                    "Unigram unk_score {unk_score:e} or max_piece_bytes {max_piece_bytes} out of range"
                )));
            }
            self.algorithm = SpAlgorithm::Unigram {
                unk_score,
                max_piece_bytes,
                tokenizers: flags[4] == 2,
            };
        }
        f.array("token_bytes", &mut self.token_bytes)?;
        f.array("token_offsets", &mut self.token_offsets)?;
        f.array("kinds", &mut self.kinds)?;
        f.array("priorities", &mut self.priorities)?;
        f.array("pieces", &mut self.pieces)?;
        index(f, "piece_index", &mut self.piece_index)?;
        f.array("piece_keys", &mut self.piece_keys)?;
        f.array("byte_ids", &mut self.byte_ids)?;
        f.array("unk_surface", &mut self.unk_surface)?;
        f.array("user_defined", &mut self.user_defined)?;
        if flags[4] != 0 {
            f.array("piece_filter", &mut self.piece_filter)?;
            f.array("f64_scores", &mut self.f64_scores)?;
        }
        if mapped {
            f.scalar("charsmap_lookahead", &mut self.charsmap_lookahead)?;
            let mut hangul = u32::from(self.charsmap_hangul);
            f.scalar("charsmap_hangul", &mut hangul)?;
            if hangul > 1 {
                return Err(bad(format!("charsmap_hangul is {hangul}, not 0 or 1")));
            }
            self.charsmap_hangul = hangul == 1;
            f.array("charsmap_units", &mut self.charsmap_units)?;
            f.array("charsmap_strings", &mut self.charsmap_strings)?;
            f.array("charsmap_runs", &mut self.charsmap_runs)?;
            f.array("charsmap_run_values", &mut self.charsmap_run_values)?;
            f.array("charsmap_sequences", &mut self.charsmap_sequences)?;
            f.array(
                "charsmap_sequence_values",
                &mut self.charsmap_sequence_values,
            )?;
            f.array("charsmap_tails", &mut self.charsmap_tails)?;
            f.scalar("charsmap_ascii", &mut self.charsmap_ascii[0])?;
            f.scalar("charsmap_ascii", &mut self.charsmap_ascii[1])?;
            for word in &mut self.charsmap_lead {
                f.scalar("charsmap_lead", word)?;
            }
            f.array("charsmap_ascii_pairs", &mut self.charsmap_ascii_pairs)?;
            f.array("charsmap_bmp_index", &mut self.charsmap_bmp_index)?;
            f.array("charsmap_bmp_blocks", &mut self.charsmap_bmp_blocks)?;
        }
        Ok(())
    }

    /// The invariants [`picobpe::SpTables`] documents that the encoder's lookups rely on:
    /// offsets, one kind per id, one priority per slot, ids in range, optional tables empty or
    /// full, the index fitting its entries.
    fn check_layout(&self) -> Result<(), ModelError> {
        // Every piece is non-empty.
        let n = check_offsets(&self.token_offsets, self.token_bytes.len(), false)?;
        let lengths = [
            ("kinds", self.kinds.len(), n),
            ("priorities", self.priorities.len(), self.pieces.len()),
        ];
        for (what, len, want) in lengths {
            if len != want {
                return Err(bad(format!("{what} has {len} entries, not {want}")));
            }
        }
        check_optional(&[
            ("piece_keys", self.piece_keys.len(), self.pieces.len()),
            ("byte_ids", self.byte_ids.len(), 256),
        ])?;
        check_ids(n, "pieces", self.pieces.iter().copied())?;
        check_ids(n, "byte_ids", self.byte_ids.iter().copied())?;
        let filter = self.piece_filter.len();
        if filter != 0 && (filter < 2 || !filter.is_power_of_two()) {
            return Err(bad(format!(
                "piece_filter has {filter} words, not 0 or a power of two"
            )));
        }
        check_optional(&[("f64_scores", self.f64_scores.len(), self.pieces.len())])?;
        // `tokenizers`' arithmetic goes with its sections and its f64 scores, and only there.
        let tokenizers = matches!(
            self.algorithm,
            SpAlgorithm::Unigram {
                tokenizers: true,
                ..
            }
        );
        let inline = self.sections == Sections::Inline;
        // Where a character map may be: inline sections (`sentencepiece`'s rule), or as a
        // `Precompiled` normalizer before words segmented apart (`tokenizers`' rule).
        let map_placed = if self.precompiled {
            self.sections.splits_words() && (self.normalizer.is_none() || self.char_steps.any())
        } else {
            inline
        };
        let mapped = !self.charsmap_runs.is_empty() || !self.charsmap_units.is_empty();
        if self.precompiled && !(mapped && map_placed) {
            return Err(bad(
                "a Precompiled normalizer without a character map, with a Unicode one, or on \
                 words not segmented apart"
                    .to_owned(),
            ));
        }
        let steps_placed = self.sections.splits_words()
            && !self.remove_extra_whitespaces
            && self.text_normalizer().is_some();
        let split_placed = matches!(
            self.sections,
            Sections::WhitespaceWords | Sections::PreTokens
        ) && !self.remove_extra_whitespaces
            && !self.collapse_spaces
            && !self.strip_sections;
        let pre_tokens = self.sections == Sections::PreTokens;
        let kept =
            |s: picobpe::wordpiece::WordSplit| s.parts().0 == picobpe::wordpiece::Spaces::Kept;
        if self.pre_split.is_some() && !split_placed
            || pre_tokens
                && (self.add_dummy_prefix || !self.joins_pieces || self.pre_split.is_none_or(kept))
        {
            return Err(bad(
                "pre-tokenizer steps without whitespace-word or pre-token sections, or with a \
                 whitespace rule; or pre-token sections without steps that remove whitespace"
                    .to_owned(),
            ));
        }
        if self.char_steps.any() && !steps_placed {
            return Err(bad(
                "normalizer character steps on words not segmented apart, with the whitespace \
                 rule, or after a Unicode form they cannot follow"
                    .to_owned(),
            ));
        }
        let unigram = self.algorithm != SpAlgorithm::Bpe;
        if unigram && (tokenizers == inline || tokenizers == self.f64_scores.is_empty()) {
            return Err(bad(
                "Unigram arithmetic, sections and f64 scores do not go together".to_owned(),
            ));
        }
        check_ids(n, "user_defined", self.user_defined.iter().copied())?;
        check_ids(n, "unk_id", [self.unk_id])?;
        if !self.charsmap_runs.is_empty() {
            let max_key = crate::sentencepiece::charsmap::check_compact(self)
                .map_err(|e| bad(e.to_string()))?;
            if self.charsmap_lookahead < max_key || !map_placed || !self.charsmap_units.is_empty() {
                return Err(bad(format!(
                    "compact charsmap: lookahead {} below its longest key {max_key}, sections \
                     not inline, or a double array too",
                    self.charsmap_lookahead
                )));
            }
        }
        if !self.charsmap_units.is_empty() {
            let map = crate::sentencepiece::charsmap::check_parts(
                self.charsmap_units.to_vec(),
                &self.charsmap_strings,
            )
            .map_err(|e| bad(e.to_string()))?;
            if self.charsmap_lookahead < map.max_key || !map_placed {
                return Err(bad(format!(
                    "charsmap lookahead {} is shorter than its longest key {}, or the sections \
                     are not inline",
                    self.charsmap_lookahead, map.max_key
                )));
            }
        }
        check_index("piece_index", &self.piece_index, self.pieces.len())
    }
}
