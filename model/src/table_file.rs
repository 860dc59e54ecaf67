//! The prebuilt host tables of a version-3 model file: a [`TableData`] in its final layout, so
//! loading a model is mapping and checking, not building (no perfect hashing, no trie, no
//! byte-pair table to compute).
//!
//! ```text
//! u8        kind: 0 = byte-level BPE tables, 1 = SentencePiece BPE tables (below)
//! u8        pattern: 0 gpt2, 1 cl100k, 2 o200k (the PatternKind order)
//! arrays    in this order, each a u64 LE element count, zero padding up to the next multiple
//!           of 8 *in the file*, then the elements, little-endian:
//!           token_bytes u8, token_offsets u32, byte_ids u32 (256), pairs u64,
//!           pair_index (u64 LE seed, pilots u8, remap u32), ranks u32, pieces u32,
//!           piece_index (seed, pilots, remap), piece_keys u64, byte_pairs u32,
//!           trie edges u64, next_prefix u32, splits u64, pair_filter u64, starts u64, chars u64
//! specials  u64 count, then per special: u64 text length, UTF-8 text, u32 id
//! ```
//!
//! SentencePiece tables ([`SpTableData`]), after the kind byte:
//!
//! ```text
//! u8 × 5    add_dummy_prefix, remove_extra_whitespaces, split_words (0/1), sections
//!           (0 inline, 1 every piece prefixed, 2 first piece prefixed), algorithm (0 BPE,
//!           1 Unigram as `sentencepiece` adds, 2 Unigram as `tokenizers` adds)
//! u32 LE    unk_id
//! u64 × 2   cut_bytes
//! Unigram only: u64 unk_score (f64 bits), u32 max_piece_bytes, u32 0
//! arrays    as above: token_bytes u8, token_offsets u32, kinds u8, priorities u32,
//!           pieces u32, piece_index (seed, pilots, remap), piece_keys u64, byte_ids u32,
//!           unk_surface u8, user_defined u32, and for Unigram only: piece_filter u64,
//!           f64_scores u64 (empty unless a tokenizer.json import)
//! ```
//!
//! Fixed-width, aligned arrays rather than postcard varints: on a little-endian host the
//! arrays of a memory-mapped file *are* the tables ([`TableView`] borrows them, checked for
//! alignment by `bytemuck`), so loading o200k_base costs a checksum and a layout check, a few
//! milliseconds; elsewhere they are copied. A count is checked against the bytes left before
//! anything is allocated, so a hostile count cannot allocate more than the file holds.
//! [`TableView::check_layout`] then checks the invariants the core's lookups assume (offsets,
//! lengths, ids in range): the core never panics on any table content, but a table that breaks
//! them would encode wrongly, so such a file is rejected with its own error.

use std::borrow::Cow;

use picobpe::tables::{BYTE_PAIRS, MAX_IDS};
use picobpe::{PairMap, PieceMap, PtrIndex, SpecialToken, Tables, TokenTrie};

use crate::error::ModelError;
use crate::pattern::PatternKind;
use crate::sentencepiece::SpTableData;
use crate::tables::{IndexData, TableData};

/// Kind byte of byte-level BPE tables.
const KIND_BYTE_PAIR: u8 = 0;
/// Kind byte of SentencePiece BPE tables.
const KIND_SENTENCEPIECE: u8 = 1;

/// True when a tables blob holds SentencePiece tables (by its kind byte).
pub(crate) fn is_sentencepiece(blob: &[u8]) -> bool {
    blob.first() == Some(&KIND_SENTENCEPIECE)
}

/// Append the SentencePiece tables blob of `data` to `out`, whose byte 0 is at offset `base`
/// in the file.
pub(crate) fn write_sp(data: &SpTableData, out: &mut Vec<u8>, base: usize) {
    use picobpe::sentencepiece::{Sections, SpAlgorithm};
    let sections = match data.sections {
        Sections::Inline => 0,
        Sections::EveryPiecePrefixed => 1,
        Sections::FirstPiecePrefixed => 2,
    };
    out.push(KIND_SENTENCEPIECE);
    out.extend_from_slice(&[
        u8::from(data.add_dummy_prefix),
        u8::from(data.remove_extra_whitespaces),
        u8::from(data.split_words),
        sections,
        match data.algorithm {
            SpAlgorithm::Bpe => 0,
            SpAlgorithm::Unigram {
                tokenizers: false, ..
            } => 1,
            SpAlgorithm::Unigram {
                tokenizers: true, ..
            } => 2,
        },
    ]);
    out.extend_from_slice(&data.unk_id.to_le_bytes());
    out.extend_from_slice(&data.cut_bytes[0].to_le_bytes());
    out.extend_from_slice(&data.cut_bytes[1].to_le_bytes());
    if let SpAlgorithm::Unigram {
        unk_score,
        max_piece_bytes,
        ..
    } = data.algorithm
    {
        out.extend_from_slice(&unk_score.to_bits().to_le_bytes());
        out.extend_from_slice(&max_piece_bytes.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    let mut w = Writer { out, base };
    w.array(&data.token_bytes);
    w.array(&data.token_offsets);
    w.array(&data.kinds);
    w.array(&data.priorities);
    w.array(&data.pieces);
    w.index(&data.piece_index);
    w.array(&data.piece_keys);
    w.array(&data.byte_ids);
    w.array(&data.unk_surface);
    w.array(&data.user_defined);
    if data.algorithm != SpAlgorithm::Bpe {
        w.array(&data.piece_filter);
        w.array(&data.f64_scores);
    }
}

/// Append the tables blob of `data` to `out`, whose byte 0 is at offset `base` in the file
/// (array elements are aligned to 8 in the file).
pub(crate) fn write(data: &TableData, out: &mut Vec<u8>, base: usize) {
    let mut w = Writer { out, base };
    w.out.push(KIND_BYTE_PAIR);
    let pattern = PatternKind::from(data.pattern);
    w.out.push(
        PatternKind::ALL
            .iter()
            .position(|&p| p == pattern)
            .unwrap_or(0) as u8,
    );
    w.array(&data.token_bytes);
    w.array(&data.token_offsets);
    w.array(&data.byte_ids);
    w.array(&data.pairs);
    w.index(&data.pair_index);
    w.array(&data.ranks);
    w.array(&data.pieces);
    w.index(&data.piece_index);
    w.array(&data.piece_keys);
    w.array(&data.byte_pairs);
    let trie = &data.trie;
    w.array(&trie.edges);
    w.array(&trie.next_prefix);
    w.array(&trie.splits);
    w.array(&trie.pair_filter);
    w.array(&trie.starts);
    w.array(&trie.chars);
    let out = w.out;
    out.extend_from_slice(&(data.specials.len() as u64).to_le_bytes());
    for (text, id) in &data.specials {
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(&id.to_le_bytes());
    }
}

/// Zero bytes needed after `offset` to reach a multiple of 8.
fn padding(offset: usize) -> usize {
    offset.wrapping_neg() & 7
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
    base: usize,
}

impl Writer<'_> {
    fn array<T: Le>(&mut self, items: &[T]) {
        self.out
            .extend_from_slice(&(items.len() as u64).to_le_bytes());
        let pad = padding(self.base + self.out.len());
        self.out.resize(self.out.len() + pad, 0);
        for &item in items {
            item.put(self.out);
        }
    }

    fn index(&mut self, index: &IndexData) {
        self.out.extend_from_slice(&index.seed.to_le_bytes());
        self.array(&index.pilots);
        self.array(&index.remap);
    }
}

/// An array element stored little-endian; `bytemuck::Pod` so an aligned little-endian array
/// can be borrowed as is.
trait Le: Copy + bytemuck::Pod {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn from_le(bytes: &[u8]) -> Self;
}

impl Le for u8 {
    const SIZE: usize = 1;
    fn put(self, out: &mut Vec<u8>) {
        out.push(self);
    }
    fn from_le(bytes: &[u8]) -> Self {
        bytes[0]
    }
}

impl Le for u32 {
    const SIZE: usize = 4;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn from_le(b: &[u8]) -> Self {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

impl Le for u64 {
    const SIZE: usize = 8;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn from_le(b: &[u8]) -> Self {
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
}

/// The perfect-hash index of a [`TableView`] (see [`IndexData`]).
pub(crate) struct IndexView<'a> {
    seed: u64,
    pilots: Cow<'a, [u8]>,
    remap: Cow<'a, [u32]>,
}

/// A tables blob, decoded: each array borrowed from the file when it is aligned and the host is
/// little-endian, else copied.
pub(crate) struct TableView<'a> {
    pattern: PatternKind,
    token_bytes: Cow<'a, [u8]>,
    token_offsets: Cow<'a, [u32]>,
    byte_ids: [u32; 256],
    pairs: Cow<'a, [u64]>,
    pair_index: IndexView<'a>,
    ranks: Cow<'a, [u32]>,
    pieces: Cow<'a, [u32]>,
    piece_index: IndexView<'a>,
    piece_keys: Cow<'a, [u64]>,
    byte_pairs: Cow<'a, [u32]>,
    trie: TrieView<'a>,
    specials: Vec<(String, u32)>,
}

/// The token trie of a [`TableView`] (see [`crate::TrieData`]).
struct TrieView<'a> {
    edges: Cow<'a, [u64]>,
    next_prefix: Cow<'a, [u32]>,
    splits: Cow<'a, [u64]>,
    pair_filter: Cow<'a, [u64]>,
    starts: Cow<'a, [u64]>,
    chars: Cow<'a, [u64]>,
}

impl From<IndexData> for IndexView<'static> {
    fn from(d: IndexData) -> Self {
        IndexView {
            seed: d.seed,
            pilots: Cow::Owned(d.pilots),
            remap: Cow::Owned(d.remap),
        }
    }
}

/// Tables built on the host, as a view that owns every array: [`TableData::to_tables`] makes
/// live tables through the same [`TableView::into_tables`] as a mapped file.
impl From<TableData> for TableView<'static> {
    fn from(d: TableData) -> Self {
        let t = d.trie;
        TableView {
            pattern: d.pattern.into(),
            token_bytes: Cow::Owned(d.token_bytes),
            token_offsets: Cow::Owned(d.token_offsets),
            byte_ids: d.byte_ids,
            pairs: Cow::Owned(d.pairs),
            pair_index: d.pair_index.into(),
            ranks: Cow::Owned(d.ranks),
            pieces: Cow::Owned(d.pieces),
            piece_index: d.piece_index.into(),
            piece_keys: Cow::Owned(d.piece_keys),
            byte_pairs: Cow::Owned(d.byte_pairs),
            trie: TrieView {
                edges: Cow::Owned(t.edges),
                next_prefix: Cow::Owned(t.next_prefix),
                splits: Cow::Owned(t.splits),
                pair_filter: Cow::Owned(t.pair_filter),
                starts: Cow::Owned(t.starts),
                chars: Cow::Owned(t.chars),
            },
            specials: d.specials,
        }
    }
}

/// Decode and check a tables blob (the whole of `bytes`, which starts at offset `base` in the
/// file: alignment is judged on the file offset, as the writer padded).
pub(crate) fn read(bytes: &[u8], base: usize) -> Result<TableView<'_>, ModelError> {
    let mut r = Reader { bytes, at: 0, base };
    let kind = r.u8("kind")?;
    if kind != KIND_BYTE_PAIR {
        return Err(bad(format!("unknown table kind {kind}")));
    }
    let pattern = r.u8("pattern")?;
    let pattern = *PatternKind::ALL
        .get(pattern as usize)
        .ok_or_else(|| bad(format!("unknown pattern {pattern}")))?;
    // Fields are read in file order, the order they are written in here.
    let view = TableView {
        pattern,
        token_bytes: r.array("token_bytes")?,
        token_offsets: r.array("token_offsets")?,
        byte_ids: r
            .array::<u32>("byte_ids")?
            .as_ref()
            .try_into()
            .map_err(|_| bad("byte_ids does not have 256 entries".to_owned()))?,
        pairs: r.array("pairs")?,
        pair_index: r.index("pair_index")?,
        ranks: r.array("ranks")?,
        pieces: r.array("pieces")?,
        piece_index: r.index("piece_index")?,
        piece_keys: r.array("piece_keys")?,
        byte_pairs: r.array("byte_pairs")?,
        trie: TrieView {
            edges: r.array("trie edges")?,
            next_prefix: r.array("trie next_prefix")?,
            splits: r.array("trie splits")?,
            pair_filter: r.array("trie pair_filter")?,
            starts: r.array("trie starts")?,
            chars: r.array("trie chars")?,
        },
        specials: r.specials()?,
    };
    r.end()?;
    view.check_layout()?;
    Ok(view)
}

impl<'a> TableView<'a> {
    /// Number of ids.
    pub(crate) fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
    }

    /// The pattern.
    pub(crate) fn pattern(&self) -> PatternKind {
        self.pattern
    }

    /// Special token text and id.
    pub(crate) fn specials(&self) -> &[(String, u32)] {
        &self.specials
    }

    /// Check the invariants [`picobpe::Tables`] documents: offsets non-decreasing and ending
    /// at the byte count, at most [`MAX_IDS`] ids, every stored id in range, optional tables
    /// either empty or of their full length, each index as long as its entries.
    fn check_layout(&self) -> Result<(), ModelError> {
        // Holes (unused ids) have empty ranges.
        let n = check_offsets(&self.token_offsets, self.token_bytes.len(), true)?;
        let mask = (1u64 << picobpe::tables::ID_BITS) - 1;
        check_ids(n, "byte_ids", self.byte_ids.iter().copied())?;
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

impl TableView<'static> {
    /// Live [`Tables`] over this view, which is leaked with its owned arrays (see
    /// [`TableData::to_tables`] for why leaking is right here); borrowed arrays stay where
    /// they are.
    pub(crate) fn into_tables(self) -> &'static Tables<'static> {
        let view: &'static TableView<'static> = Box::leak(Box::new(self));
        let specials: Vec<SpecialToken<'static>> = view
            .specials
            .iter()
            .map(|(text, id)| SpecialToken { text, id: *id })
            .collect();
        let trie = &view.trie;
        Box::leak(Box::new(Tables {
            pattern: view.pattern.into(),
            token_bytes: &view.token_bytes,
            token_offsets: &view.token_offsets,
            byte_ids: &view.byte_ids,
            pairs: PairMap {
                index: ptr_index(&view.pair_index, view.pairs.len()),
                entries: &view.pairs,
            },
            ranks: &view.ranks,
            pieces: PieceMap {
                index: ptr_index(&view.piece_index, view.pieces.len()),
                ids: &view.pieces,
                keys: &view.piece_keys,
            },
            specials: Vec::leak(specials),
            byte_pairs: &view.byte_pairs,
            trie: TokenTrie {
                edges: &trie.edges,
                next_prefix: &trie.next_prefix,
                splits: &trie.splits,
                pair_filter: &trie.pair_filter,
                starts: &trie.starts,
                chars: &trie.chars,
            },
        }))
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
fn check_index(what: &str, index: &IndexView<'_>, len: usize) -> Result<(), ModelError> {
    if index.remap.iter().any(|&slot| slot as usize >= len) || (len > 0 && index.pilots.is_empty())
    {
        return Err(bad(format!("{what} does not fit its {len} entries")));
    }
    Ok(())
}

fn bad(reason: String) -> ModelError {
    ModelError::BadTables { reason }
}

/// A cursor over the blob; every read is bounds-checked and names what it was reading.
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

    /// Nothing may follow the last table.
    fn end(&self) -> Result<(), ModelError> {
        match self.bytes.len() - self.at {
            0 => Ok(()),
            left => Err(bad(format!("{left} bytes after the last table"))),
        }
    }

    fn u8(&mut self, what: &str) -> Result<u8, ModelError> {
        Ok(self.take(1, what)?[0])
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

    /// An array: borrowed when the host is little-endian and its bytes are aligned in memory,
    /// else decoded into a vector.
    fn array<T: Le>(&mut self, what: &str) -> Result<Cow<'a, [T]>, ModelError> {
        let count = self.count(what, T::SIZE)?;
        self.take(padding(self.base + self.at), what)?;
        let bytes = self.take(count * T::SIZE, what)?;
        if cfg!(target_endian = "little") {
            if let Ok(items) = bytemuck::try_cast_slice(bytes) {
                return Ok(Cow::Borrowed(items));
            }
        }
        Ok(Cow::Owned(
            bytes.chunks_exact(T::SIZE).map(T::from_le).collect(),
        ))
    }

    /// The special tokens: a count, then per special its text's length, text and id.
    fn specials(&mut self) -> Result<Vec<(String, u32)>, ModelError> {
        let n_specials = self.count("specials", 12)?;
        let mut specials = Vec::with_capacity(n_specials);
        for _ in 0..n_specials {
            let len = self.count("special text", 1)?;
            let text = std::str::from_utf8(self.take(len, "special text")?)
                .map_err(|_| bad("a special token's text is not UTF-8".to_owned()))?
                .to_owned();
            let id = <u32 as Le>::from_le(self.take(4, "special id")?);
            specials.push((text, id));
        }
        Ok(specials)
    }

    fn index(&mut self, what: &str) -> Result<IndexView<'a>, ModelError> {
        let seed = <u64 as Le>::from_le(self.take(8, what)?);
        Ok(IndexView {
            seed,
            pilots: self.array(what)?,
            remap: self.array(what)?,
        })
    }
}

/// A SentencePiece tables blob, decoded (arrays borrowed or copied as in [`TableView`]).
pub(crate) struct SpTableView<'a> {
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    split_words: bool,
    sections: picobpe::sentencepiece::Sections,
    unk_id: u32,
    cut_bytes: [u64; 2],
    algorithm: picobpe::sentencepiece::SpAlgorithm,
    token_bytes: Cow<'a, [u8]>,
    token_offsets: Cow<'a, [u32]>,
    kinds: Cow<'a, [u8]>,
    priorities: Cow<'a, [u32]>,
    pieces: Cow<'a, [u32]>,
    piece_index: IndexView<'a>,
    piece_keys: Cow<'a, [u64]>,
    byte_ids: Cow<'a, [u32]>,
    unk_surface: Cow<'a, [u8]>,
    user_defined: Cow<'a, [u32]>,
    piece_filter: Cow<'a, [u64]>,
    f64_scores: Cow<'a, [u64]>,
}

/// Decode and check a SentencePiece tables blob (the whole of `bytes`, at offset `base` in
/// the file).
pub(crate) fn read_sp(bytes: &[u8], base: usize) -> Result<SpTableView<'_>, ModelError> {
    let mut r = Reader { bytes, at: 0, base };
    let kind = r.u8("kind")?;
    if kind != KIND_SENTENCEPIECE {
        return Err(bad(format!("unknown table kind {kind}")));
    }
    let flags: [u8; 5] = r
        .take(5, "flags")?
        .try_into()
        .map_err(|_| bad("the tables end inside flags".to_owned()))?;
    use picobpe::sentencepiece::Sections;
    let sections = match flags[3] {
        0 => Sections::Inline,
        1 => Sections::EveryPiecePrefixed,
        2 => Sections::FirstPiecePrefixed,
        _ => return Err(bad(format!("unknown flag values {flags:?}"))),
    };
    if flags[..3].iter().any(|&f| f > 1) || flags[4] > 2 {
        return Err(bad(format!("unknown flag values {flags:?}")));
    }
    let unk_id = <u32 as Le>::from_le(r.take(4, "unk_id")?);
    let cut_bytes = [
        <u64 as Le>::from_le(r.take(8, "cut_bytes")?),
        <u64 as Le>::from_le(r.take(8, "cut_bytes")?),
    ];
    let algorithm = if flags[4] != 0 {
        let unk_score = f64::from_bits(<u64 as Le>::from_le(r.take(8, "unk_score")?));
        let max_piece_bytes = <u32 as Le>::from_le(r.take(4, "max_piece_bytes")?);
        let pad = <u32 as Le>::from_le(r.take(4, "max_piece_bytes")?);
        if unk_score.is_nan()
            || max_piece_bytes as usize > picobpe::sentencepiece::MAX_PIECE_BYTES
            || pad != 0
        {
            return Err(bad(format!(
                "Unigram unk_score {unk_score:e} or max_piece_bytes {max_piece_bytes} out of range"
            )));
        }
        picobpe::sentencepiece::SpAlgorithm::Unigram {
            unk_score,
            max_piece_bytes,
            tokenizers: flags[4] == 2,
        }
    } else {
        picobpe::sentencepiece::SpAlgorithm::Bpe
    };
    let view = SpTableView {
        algorithm,
        add_dummy_prefix: flags[0] == 1,
        remove_extra_whitespaces: flags[1] == 1,
        split_words: flags[2] == 1,
        sections,
        unk_id,
        cut_bytes,
        token_bytes: r.array("token_bytes")?,
        token_offsets: r.array("token_offsets")?,
        kinds: r.array("kinds")?,
        priorities: r.array("priorities")?,
        pieces: r.array("pieces")?,
        piece_index: r.index("piece_index")?,
        piece_keys: r.array("piece_keys")?,
        byte_ids: r.array("byte_ids")?,
        unk_surface: r.array("unk_surface")?,
        user_defined: r.array("user_defined")?,
        piece_filter: if flags[4] != 0 {
            r.array("piece_filter")?
        } else {
            Cow::Borrowed(&[])
        },
        f64_scores: if flags[4] != 0 {
            r.array("f64_scores")?
        } else {
            Cow::Borrowed(&[])
        },
    };
    r.end()?;
    view.check_layout()?;
    Ok(view)
}

impl SpTableView<'_> {
    /// The algorithm and its parameters.
    pub(crate) fn algorithm(&self) -> picobpe::sentencepiece::SpAlgorithm {
        self.algorithm
    }

    /// Number of ids.
    pub(crate) fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
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
            picobpe::sentencepiece::SpAlgorithm::Unigram {
                tokenizers: true,
                ..
            }
        );
        let inline = self.sections == picobpe::sentencepiece::Sections::Inline;
        let unigram = self.algorithm != picobpe::sentencepiece::SpAlgorithm::Bpe;
        if unigram && (tokenizers == inline || tokenizers == self.f64_scores.is_empty()) {
            return Err(bad(
                "Unigram arithmetic, sections and f64 scores do not go together".to_owned(),
            ));
        }
        check_ids(n, "user_defined", self.user_defined.iter().copied())?;
        check_ids(n, "unk_id", [self.unk_id])?;
        check_index("piece_index", &self.piece_index, self.pieces.len())
    }
}

/// Tables built on the host, as a view that owns every array: [`SpTableData::to_tables`]
/// makes live tables through the same [`SpTableView::into_tables`] as a mapped file.
impl From<SpTableData> for SpTableView<'static> {
    fn from(d: SpTableData) -> Self {
        SpTableView {
            add_dummy_prefix: d.add_dummy_prefix,
            remove_extra_whitespaces: d.remove_extra_whitespaces,
            split_words: d.split_words,
            sections: d.sections,
            unk_id: d.unk_id,
            cut_bytes: d.cut_bytes,
            algorithm: d.algorithm,
            token_bytes: Cow::Owned(d.token_bytes),
            token_offsets: Cow::Owned(d.token_offsets),
            kinds: Cow::Owned(d.kinds),
            priorities: Cow::Owned(d.priorities),
            pieces: Cow::Owned(d.pieces),
            piece_index: d.piece_index.into(),
            piece_keys: Cow::Owned(d.piece_keys),
            byte_ids: Cow::Owned(d.byte_ids),
            unk_surface: Cow::Owned(d.unk_surface),
            user_defined: Cow::Owned(d.user_defined),
            piece_filter: Cow::Owned(d.piece_filter),
            f64_scores: Cow::Owned(d.f64_scores),
        }
    }
}

impl SpTableView<'_> {
    /// Live [`picobpe::SpTables`] borrowing this view.
    pub(crate) fn tables(&self) -> picobpe::SpTables<'_> {
        picobpe::SpTables {
            token_bytes: &self.token_bytes,
            token_offsets: &self.token_offsets,
            kinds: &self.kinds,
            priorities: &self.priorities,
            pieces: PieceMap {
                index: ptr_index(&self.piece_index, self.pieces.len()),
                ids: &self.pieces,
                keys: &self.piece_keys,
            },
            byte_ids: &self.byte_ids,
            unk_id: self.unk_id,
            unk_surface: &self.unk_surface,
            user_defined: &self.user_defined,
            add_dummy_prefix: self.add_dummy_prefix,
            remove_extra_whitespaces: self.remove_extra_whitespaces,
            sections: self.sections,
            split_words: self.split_words,
            cut_bytes: self.cut_bytes,
            algorithm: self.algorithm,
            piece_filter: &self.piece_filter,
            f64_scores: &self.f64_scores,
        }
    }
}

impl SpTableView<'static> {
    /// Live [`picobpe::SpTables`] over this view, which is leaked with its owned arrays (see
    /// [`TableView::into_tables`]); borrowed arrays stay where they are.
    pub(crate) fn into_tables(self) -> &'static picobpe::SpTables<'static> {
        let view: &'static SpTableView<'static> = Box::leak(Box::new(self));
        Box::leak(Box::new(view.tables()))
    }
}

/// The [`PtrIndex`] of `index` over `len` entries, borrowing its arrays.
fn ptr_index<'a>(index: &'a IndexView<'_>, len: usize) -> PtrIndex<'a> {
    PtrIndex {
        seed: index.seed,
        pilots: &index.pilots,
        remap: &index.remap,
        len,
    }
}
