//! [`TableData`]: the flat form of [`picobpe::Tables`] built from a validated model (or read
//! from a model file, borrowing its arrays: `table_file`).
//!
//! The perfect-hash indexes are made here, once, with `phf_generator`'s PtrHash generator over
//! the core's own fast hashes ([`picobpe::layout`]); entries are stored in slot order. The bake
//! step (`picobpe-build`) prints a `TableData` as Rust source; the host CLI turns it into live
//! [`Tables`] with [`TableData::to_tables`]. Both run the same lookups on the same layout.

use core::fmt;
use rustc_hash::FxHashMap;
use std::borrow::Cow;

use picobpe::bytelevel::BYTE_PAIRS;
use picobpe::layout::{hash_bytes, hash_u64};
use picobpe::layout::{piece_key_entry, ID_BITS};
use picobpe::normalizer::UnicodeForm;
use picobpe::pretok::CompiledPattern;
use picobpe::{PairMap, PieceMap, PtrIndex, SpecialToken, TokenTrie};
use picobpe::{Pattern, Tables};

use crate::bpe::{pair_bpe, Merge};
use crate::error::InvalidModel;
use crate::model::{Model, TextSteps};
use crate::trie::TrieData;

/// Which whole-piece entries to put in [`Tables::pieces`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PieceTable {
    /// Every token the encoder may take whole: all ordinary tokens for tiktoken-semantics
    /// models, the tokens whose own bytes pair-BPE-encode to themselves otherwise. Faster.
    #[default]
    Full,
    /// Only the entries exactness needs: tokens of tiktoken-semantics models that pair BPE
    /// does not reach from their own bytes (none for gpt2, cl100k_base, o200k_base); empty for
    /// pair-semantics models. Smallest.
    Minimal,
}

/// A PtrHash index's arrays (see [`picobpe::PtrIndex`]), owned when built, borrowed from a
/// mapped model file when read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexData<'a> {
    /// The generator's seed.
    pub seed: u64,
    /// One pilot per bucket.
    pub pilots: Cow<'a, [u8]>,
    /// Remapped slots.
    pub remap: Cow<'a, [u32]>,
}

impl IndexData<'_> {
    /// Flash bytes of the index arrays.
    pub fn bytes(&self) -> usize {
        self.pilots.len() + 4 * self.remap.len()
    }

    /// The [`PtrIndex`] over `len` entries, borrowing the arrays.
    pub(crate) fn ptr_index(&self, len: usize) -> PtrIndex<'_> {
        PtrIndex {
            seed: self.seed,
            pilots: &self.pilots,
            remap: &self.remap,
            len,
        }
    }
}

/// Build a PtrHash index over `items` and return it with the items in slot order.
pub(crate) fn ptr_index<T: Copy>(
    items: &[T],
    hash: impl Fn(&T, u64) -> u64,
) -> (IndexData<'static>, Vec<T>) {
    let state = phf_generator::ptrhash::generate_hash_with_hash_fn(items, |t, seed| hash(t, *seed));
    let index = IndexData {
        seed: state.seed,
        pilots: state.pilots.into(),
        remap: state.remap.into(),
    };
    (index, state.map.iter().map(|&i| items[i]).collect())
}

/// The byte strings of all ids concatenated in id order, and the `n_ids + 1` offsets into them.
pub(crate) fn concat<'a>(tokens: impl IntoIterator<Item = &'a [u8]>) -> (Vec<u8>, Vec<u32>) {
    let mut token_bytes = Vec::new();
    let mut token_offsets = vec![0u32];
    for bytes in tokens {
        token_bytes.extend_from_slice(bytes);
        // Validation bounds the total by u32::MAX.
        token_offsets.push(token_bytes.len() as u32);
    }
    (token_bytes, token_offsets)
}

/// The special tokens `(text, id)` as the core's [`SpecialToken`]s with their `strips` bits,
/// sorted by text, so the core walks them as a sorted slice (`picobpe::special`), whatever
/// order a file lists them in.
pub(crate) fn special_tokens<'a>(
    specials: &'a [(String, u32)],
    strips: &[(u32, u8)],
) -> Vec<SpecialToken<'a>> {
    let mut tokens: Vec<SpecialToken<'_>> = specials
        .iter()
        .map(|(text, id)| SpecialToken {
            text,
            id: *id,
            strip: strip_bits(strips, *id),
        })
        .collect();
    tokens.sort_by(|a, b| a.text.as_bytes().cmp(b.text.as_bytes()));
    tokens
}

/// Compile a model's `Split`s ([`Model::splits`]) into the words the core walks, each
/// checked as the core will read it.
pub(crate) fn compile_splits(splits: &[crate::Split]) -> Result<Vec<Vec<u32>>, String> {
    splits
        .iter()
        .map(|split| {
            let words = crate::compile_split(split).map_err(|e| e.to_string())?;
            picobpe::pretok::CompiledPattern::new(&words).map_err(|e| e.to_string())?;
            Ok(words)
        })
        .collect()
}

/// The strip bits ([`picobpe::special::LSTRIP`], [`picobpe::special::RSTRIP`]) of special `id`
/// in a model's `strips` list ([`Model::strips`]; 0: it takes no whitespace).
pub fn strip_bits(strips: &[(u32, u8)], id: u32) -> u8 {
    strips.iter().find(|s| s.0 == id).map_or(0, |s| s.1)
}

/// Check `(id, bits)` strip entries against a model's `specials`: ids increasing, each a
/// special's, bits among `lstrip` and `rstrip` and not 0; with any `rstrip`, no special may
/// start with whitespace (`tokenizers` would let the next match start inside the whitespace
/// the previous one took, giving overlapping tokens).
pub(crate) fn check_strips(strips: &[(u32, u8)], specials: &[(String, u32)]) -> Result<(), String> {
    use picobpe::special::{LSTRIP, RSTRIP};
    if strips.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err("ids are not strictly increasing".into());
    }
    for &(id, bits) in strips {
        if bits == 0 || bits & !(LSTRIP | RSTRIP) != 0 {
            return Err(format!("id {id}: bits {bits:#x} are not lstrip/rstrip"));
        }
        if !specials.iter().any(|s| s.1 == id) {
            return Err(format!("id {id} is not a special token"));
        }
    }
    let rstrip = strips.iter().any(|s| s.1 & RSTRIP != 0);
    if let Some((text, _)) = specials
        .iter()
        .find(|s| rstrip && s.0.starts_with(char::is_whitespace))
    {
        return Err(format!(
            "{text:?} starts with whitespace, which an rstrip special before it would take"
        ));
    }
    Ok(())
}

/// `specials` sorted by text: the order tables keep them in (see [`special_tokens`]), which
/// baked tables (`picobpe-build`) inherit.
pub(crate) fn sorted_specials(specials: &[(String, u32)]) -> Vec<(String, u32)> {
    let mut sorted = specials.to_vec();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    sorted
}

/// Print a table of sizes (`name, bytes, note` per row), then the total and the bytes per id
/// (`ids_note` after them).
pub(crate) fn fmt_sizes(
    f: &mut fmt::Formatter<'_>,
    rows: &[(&str, usize, String)],
    n_ids: usize,
    ids_note: &str,
) -> fmt::Result {
    for (name, bytes, note) in rows {
        let sep = if note.is_empty() { "" } else { "  " };
        writeln!(f, "  {name:<14}{bytes:>11} B{sep}{note}")?;
    }
    let total: usize = rows.iter().map(|r| r.1).sum();
    let per_id = total as f64 / n_ids.max(1) as f64;
    write!(
        f,
        "  {:<14}{total:>11} B  ({per_id:.1} B per id{ids_note})",
        "total"
    )
}

/// Table contents, one field per [`Tables`] field (maps as plain entry lists): owned when
/// built from a model ([`TableData::new`]), borrowed from a mapped version-3 model file when
/// read (the arrays of an aligned file on a little-endian host *are* the tables).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableData<'a> {
    /// The pre-tokenization pattern.
    pub pattern: Pattern,
    /// The Unicode normalization applied before splitting, or none.
    pub normalizer: Option<UnicodeForm>,
    /// A space before each text between special tokens that does not start with one
    /// ([`crate::Model::prefix_space`]).
    pub prefix_space: bool,
    /// The normalizer's steps after its form, and where special tokens are matched
    /// ([`crate::Model::steps`]).
    pub steps: TextSteps,
    /// Bytes of all ids concatenated in id order.
    pub token_bytes: Cow<'a, [u8]>,
    /// `n_ids + 1` offsets into `token_bytes`.
    pub token_offsets: Cow<'a, [u32]>,
    /// Id of each single byte (256 entries).
    pub byte_ids: Cow<'a, [u32]>,
    /// Empty, or the id of each byte followed by the model's end-of-word suffix (256 entries,
    /// [`picobpe::Tables::word_end_ids`]).
    pub word_end_ids: Cow<'a, [u32]>,
    /// Ids of tokens with no bytes ([`crate::Model::empty_tokens`],
    /// [`picobpe::Tables::empty_ids`]), increasing.
    pub empty_ids: Cow<'a, [u32]>,
    /// Merge entries ([`PairMap::entry`]: `left << 42 | right << 21 | merged`), in slot order.
    pub pairs: Cow<'a, [u64]>,
    /// The perfect-hash index of `pairs` (keys hashed with [`hash_u64`]).
    pub pair_index: IndexData<'a>,
    /// Empty when merge order is increasing in merged id; else `ranks[id]` = merge index, or
    /// `u32::MAX` for ids no merge produces.
    pub ranks: Cow<'a, [u32]>,
    /// Ids of the whole-piece entries, in slot order; each key is that id's bytes.
    pub pieces: Cow<'a, [u32]>,
    /// The perfect-hash index of `pieces` (keys hashed with [`hash_bytes`]).
    pub piece_index: IndexData<'a>,
    /// Empty, or [`piece_key_entry`] of each entry of `pieces` (see [`picobpe::PieceMap`]);
    /// [`TableData::new`] fills it, [`TableData::without_piece_keys`] drops it.
    pub piece_keys: Cow<'a, [u64]>,
    /// Special token text and id.
    pub specials: Cow<'a, [(String, u32)]>,
    /// The model's [`Model::strips`] (not stored in the table file: a version-5 file holds
    /// them in its header).
    pub strips: Vec<(u32, u8)>,
    /// The compiled words of the model's [`Model::splits`] (not stored in the table file: a
    /// version-6 file holds the regexes in its header, compiled at load).
    pub splits: Vec<Vec<u32>>,
    /// Empty, or the byte-pair table ([`picobpe::Tables::byte_pairs`]); [`TableData::new`]
    /// fills it, [`TableData::without_byte_pairs`] drops it, [`TableData::for_bake`] leaves it
    /// out.
    pub byte_pairs: Cow<'a, [u32]>,
    /// The token trie ([`picobpe::Tables::trie`]): [`TableData::new`] fills it when the model
    /// qualifies, [`TableData::without_trie`] drops it, [`TableData::for_bake`] leaves it out.
    pub trie: TrieData<'a>,
}

impl TableData<'static> {
    /// Validate `model` and lay out its tables, with the host-only lookup aids (the byte-pair
    /// table and, when the model qualifies, the token trie).
    pub fn new(model: &Model, piece_table: PieceTable) -> Result<Self, InvalidModel> {
        TableData::layout(model, piece_table, true)
    }

    /// [`TableData::new`] without the host-only lookup aids: the tables the bake writes (and
    /// all that [`TableData::sizes`] counts), without the time the aids take to build (for
    /// o200k_base, most of a second for the trie).
    pub fn for_bake(model: &Model, piece_table: PieceTable) -> Result<Self, InvalidModel> {
        TableData::layout(model, piece_table, false)
    }

    fn layout(
        model: &Model,
        piece_table: PieceTable,
        host_aids: bool,
    ) -> Result<Self, InvalidModel> {
        model.validate()?;
        let n = model.n_ids();

        let (token_bytes, token_offsets) = concat(model.tokens.iter().map(Vec::as_slice));

        let ordinary = model.ordinary_map();
        let mut byte_ids = [0u32; 256];
        for (b, id) in byte_ids.iter_mut().enumerate() {
            *id = ordinary[[b as u8].as_slice()];
        }

        let merged_ids = model.merged_ids();
        // Validation keeps every id below MAX_IDS, so every entry packs.
        let entries: Vec<u64> = model
            .merges
            .iter()
            .zip(&merged_ids)
            .filter_map(|(&(l, r), &m)| PairMap::entry(l, r, m))
            .collect();
        let (pair_index, pairs) = ptr_index(&entries, |&e, seed| hash_u64(e >> ID_BITS, seed));

        let monotone = merged_ids.windows(2).all(|w| w[0] < w[1]);
        let ranks = if monotone {
            Vec::new()
        } else {
            let mut ranks = vec![u32::MAX; n];
            for (index, &m) in merged_ids.iter().enumerate() {
                ranks[m as usize] = index as u32;
            }
            ranks
        };

        let merge_map: FxHashMap<(u32, u32), Merge> = model
            .merges
            .iter()
            .zip(&merged_ids)
            .enumerate()
            .map(|(rank, (&pair, &merged))| {
                let rank = rank as u32;
                (pair, Merge { rank, merged })
            })
            .collect();
        let mut ids: Vec<u32> = ordinary.values().copied().collect();
        ids.sort_unstable();
        let reaches_itself =
            |id: u32| pair_bpe(&model.tokens[id as usize], &byte_ids, &merge_map) == [id];
        let word_end_ids = model.word_end_ids()?;
        // With an end-of-word suffix a piece is never a token's own bytes (the token ends with
        // the suffix), so no piece is taken whole and no token trie applies.
        let piece_table = match word_end_ids.is_empty() {
            true => piece_table,
            false => PieceTable::Minimal,
        };
        let pieces: Vec<u32> = match (model.whole_piece, piece_table) {
            (true, PieceTable::Full) => ids,
            (true, PieceTable::Minimal) => {
                ids.into_iter().filter(|&id| !reaches_itself(id)).collect()
            }
            (false, PieceTable::Full) => ids.into_iter().filter(|&id| reaches_itself(id)).collect(),
            (false, PieceTable::Minimal) => Vec::new(),
        };
        let (piece_index, pieces) = ptr_index(&pieces, |&id, seed| {
            hash_bytes(&model.tokens[id as usize], seed)
        });
        let piece_keys: Vec<u64> = pieces
            .iter()
            .map(|&id| piece_key_entry(&model.tokens[id as usize], token_offsets[id as usize]))
            .collect();

        let (byte_pairs, trie) = if host_aids {
            let byte_pairs: Vec<u32> = (0..BYTE_PAIRS)
                .map(|i| {
                    let pair = (byte_ids[i >> 8], byte_ids[i & 0xFF]);
                    merge_map.get(&pair).map_or(u32::MAX, |m| m.merged)
                })
                .collect();
            let trie = match word_end_ids.is_empty() {
                true => TrieData::new(model, &byte_ids, &merged_ids, &merge_map),
                false => TrieData::default(),
            };
            (byte_pairs, trie)
        } else {
            (Vec::new(), TrieData::default())
        };
        Ok(TableData {
            pattern: model.pattern.into(),
            normalizer: model.normalizer,
            prefix_space: model.prefix_space,
            steps: model.steps,
            token_bytes: token_bytes.into(),
            token_offsets: token_offsets.into(),
            byte_ids: byte_ids.to_vec().into(),
            word_end_ids: word_end_ids.into(),
            empty_ids: model.empty_tokens.clone().into(),
            pairs: pairs.into(),
            pair_index,
            ranks: ranks.into(),
            pieces: pieces.into(),
            piece_index,
            piece_keys: piece_keys.into(),
            specials: sorted_specials(&model.specials).into(),
            strips: model.strips.clone(),
            splits: compile_splits(&model.splits)
                .map_err(|reason| InvalidModel::BadSplit { reason })?,
            byte_pairs: byte_pairs.into(),
            trie,
        })
    }

    /// Build live [`Tables`] and leak them.
    ///
    /// Leaking is deliberate: `Tables` borrows `'static` data exactly like baked tables do, a
    /// process loads one model once and uses it until exit, so the memory would only be freed
    /// at exit anyway. Do not call this in a loop. Arrays borrowed from a mapped file stay
    /// where they are.
    pub fn to_tables(self) -> &'static Tables<'static> {
        let data: &'static TableData<'static> = crate::keep(self);
        let trie = &data.trie;
        crate::keep(Tables {
            pattern: data.pattern,
            token_bytes: &data.token_bytes,
            token_offsets: &data.token_offsets,
            // Both the reader and the builder have 256.
            byte_ids: data.byte_ids.as_ref().try_into().expect("256 byte ids"),
            word_end_ids: &data.word_end_ids,
            empty_ids: &data.empty_ids,
            pairs: PairMap {
                index: data.pair_index.ptr_index(data.pairs.len()),
                entries: &data.pairs,
            },
            ranks: &data.ranks,
            pieces: PieceMap {
                index: data.piece_index.ptr_index(data.pieces.len()),
                ids: &data.pieces,
                keys: &data.piece_keys,
            },
            specials: Vec::leak(special_tokens(&data.specials, &data.strips)),
            splits: Vec::leak(
                data.splits
                    .iter()
                    .map(|words| {
                        // Checked by `compile_splits` when the words were made.
                        CompiledPattern::new(words).expect("compiled splits are checked")
                    })
                    .collect(),
            ),
            byte_pairs: &data.byte_pairs,
            trie: TokenTrie {
                edges: &trie.edges,
                next_prefix: &trie.next_prefix,
                splits: &trie.splits,
                pair_filter: &trie.pair_filter,
                starts: &trie.starts,
                chars: &trie.chars,
            },
            normalizer: data.steps.text_normalizer(data.normalizer),
            prefix_space: data.prefix_space,
            specials_normalized: data.steps.specials_normalized,
        })
    }
}

impl TableData<'_> {
    /// The same tables without the token trie: every piece that is not a whole token is
    /// merged pair by pair, as with baked tables.
    pub fn without_trie(mut self) -> Self {
        self.trie = TrieData::default();
        self
    }

    /// The same tables without the whole-piece keys: 8 bytes less per whole-piece entry,
    /// every whole-piece hit confirmed through the token bytes instead.
    pub fn without_piece_keys(mut self) -> Self {
        self.piece_keys = Cow::Borrowed(&[]);
        self
    }

    /// The same tables without the byte-pair table (256 KiB less): the first pair candidates
    /// of a merge are looked up in the merge map, as in baked tables.
    pub fn without_byte_pairs(mut self) -> Self {
        self.byte_pairs = Cow::Borrowed(&[]);
        self
    }

    /// Number of ids.
    pub fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
    }

    /// Flash bytes of each table as baked for a 32-bit target (see [`TableSizes`]).
    pub fn sizes(&self) -> TableSizes {
        let n_pairs = self.pairs.len();
        TableSizes {
            n_ids: self.n_ids(),
            n_merges: n_pairs,
            n_pieces: self.pieces.len(),
            token_bytes: self.token_bytes.len(),
            token_offsets: 4 * self.token_offsets.len(),
            byte_ids: 4 * (256 + self.word_end_ids.len()),
            pairs: PAIR_MAP_HEADER + 8 * n_pairs + self.pair_index.bytes(),
            ranks: 4 * self.ranks.len(),
            pieces: PIECE_MAP_HEADER
                + 4 * self.pieces.len()
                + 8 * self.piece_keys.len()
                + self.piece_index.bytes(),
            specials: self
                .specials
                .iter()
                .map(|(text, _)| SPECIAL_ENTRY + text.len())
                .sum(),
        }
    }
}

/// `PairMap` on a 32-bit target: index (seed, two slices, len) + entry slice.
const PAIR_MAP_HEADER: usize = 8 + 8 + 8 + 4 + 8;
/// `PieceMap` on a 32-bit target: index + id slice.
const PIECE_MAP_HEADER: usize = 8 + 8 + 8 + 4 + 8 + 8;
/// One `SpecialToken` on a 32-bit target (`&str` + `u32` + the `u8` strip bits, padded to 4);
/// its text is stored separately.
pub(crate) const SPECIAL_ENTRY: usize = 16;

/// Flash bytes per table for a 32-bit target (`usize` = 4, `u64` aligned to 8), as baked by
/// `picobpe-build`. Whole-piece keys are the ids' own bytes in `token_bytes`: no extra bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableSizes {
    /// Ids, including holes and specials.
    pub n_ids: usize,
    /// Merges.
    pub n_merges: usize,
    /// Whole-piece entries.
    pub n_pieces: usize,
    /// Concatenated token bytes.
    pub token_bytes: usize,
    /// `u32` offsets.
    pub token_offsets: usize,
    /// Byte → id arrays: the single bytes', and with an end-of-word suffix the suffixed
    /// bytes' ([`picobpe::Tables::word_end_ids`]).
    pub byte_ids: usize,
    /// Merge map: 8 B entries + index (1 B pilot per bucket, remap).
    pub pairs: usize,
    /// Rank array (0 when ranks follow ids).
    pub ranks: usize,
    /// Whole-piece map: 4 B ids (+ 8 B keys when present) + index.
    pub pieces: usize,
    /// Special token entries and texts.
    pub specials: usize,
}

impl TableSizes {
    /// Sum of all tables.
    pub fn total(&self) -> usize {
        self.rows().iter().map(|r| r.1).sum()
    }

    /// `(name, bytes, note)` per table, in print order.
    fn rows(&self) -> [(&'static str, usize, String); 7] {
        [
            ("token_bytes", self.token_bytes, String::new()),
            (
                "token_offsets",
                self.token_offsets,
                format!("{} ids", self.n_ids),
            ),
            ("byte_ids", self.byte_ids, String::new()),
            ("pairs", self.pairs, format!("{} merges", self.n_merges)),
            ("ranks", self.ranks, String::new()),
            ("pieces", self.pieces, format!("{} entries", self.n_pieces)),
            ("specials", self.specials, String::new()),
        ]
    }
}

impl fmt::Display for TableSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_sizes(f, &self.rows(), self.n_ids, "")
    }
}
