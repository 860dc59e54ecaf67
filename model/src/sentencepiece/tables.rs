//! [`SpTableData`]: the flat form of [`picobpe::SpTables`] built from a validated [`SpModel`]
//! (or read from a model file), baked by `picobpe-build` or leaked into live tables on the host.

use core::fmt;
use std::borrow::Cow;

use picobpe::layout::hash_bytes;
use picobpe::layout::piece_key_entry;
use picobpe::sentencepiece::{score_priority, PieceFilter, Sections, SpAlgorithm, WHOLE, WORD_BUF};
use picobpe::{PieceMap, SpTables};

use super::{InvalidSpModel, SpKind, SpModel};
use crate::tables::{concat, fmt_sizes, ptr_index, IndexData};

/// Table contents, one field per [`SpTables`] field: owned when built from a model, borrowed
/// from a mapped model file when read (as [`crate::TableData`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpTableData<'a> {
    /// Piece bytes of all ids concatenated in id order.
    pub token_bytes: Cow<'a, [u8]>,
    /// `n_ids + 1` offsets into `token_bytes`.
    pub token_offsets: Cow<'a, [u32]>,
    /// Core piece kind of each id, as its `u8`.
    pub kinds: Cow<'a, [u8]>,
    /// Merge priority per slot of the piece index ([`score_priority`]; 0 when symbols never
    /// merge into the slot's piece).
    pub priorities: Cow<'a, [u32]>,
    /// Ids in slot order of the piece index.
    pub pieces: Cow<'a, [u32]>,
    /// Empty, or [`piece_key_entry`] of each slot's piece; [`SpTableData::new`] fills it,
    /// [`SpTableData::without_piece_keys`] drops it (the bake's default).
    pub piece_keys: Cow<'a, [u64]>,
    /// The perfect-hash index of `pieces` (keys hashed with [`hash_bytes`]).
    pub piece_index: IndexData<'a>,
    /// Ids of the byte pieces by byte (empty without byte fallback).
    pub byte_ids: Cow<'a, [u32]>,
    /// The unknown piece's id.
    pub unk_id: u32,
    /// What `<unk>` decodes to.
    pub unk_surface: Cow<'a, [u8]>,
    /// [`picobpe::SpTables::unk_per_char`] ([`SpModel::unk_per_char`]).
    pub unk_per_char: bool,
    /// The Unicode normalizer ([`SpModel::normalizer`]).
    pub normalizer: Option<picobpe::normalizer::UnicodeForm>,
    /// The character map is applied by `Precompiled`'s rule ([`SpModel::precompiled`]).
    pub precompiled: bool,
    /// Character steps ([`SpModel::char_steps`]).
    pub char_steps: crate::normalizer::CharSteps,
    /// The pre-tokenizer steps before the `Metaspace` ([`SpModel::pre_split`]).
    pub pre_split: Option<picobpe::wordpiece::WordSplit>,
    /// [`picobpe::SpTables::joins_pieces`] ([`SpModel::joins_pieces`]).
    pub joins_pieces: bool,
    /// User-defined symbol ids.
    pub user_defined: Cow<'a, [u32]>,
    /// [`picobpe::SpTables::user_strips`]: per entry of `user_defined`, its strip bits
    /// ([`SpModel::strips`]); empty when no symbol takes whitespace. Not in the table file:
    /// a model file's header holds the strips ([`SpTableData::set_strips`]).
    pub user_strips: Cow<'a, [u8]>,
    /// Normalizer flag `add_dummy_prefix`.
    pub add_dummy_prefix: bool,
    /// [`picobpe::SpTables::collapse_spaces`] ([`SpModel::collapse_spaces`]).
    pub collapse_spaces: bool,
    /// [`picobpe::SpTables::strip_sections`] ([`SpModel::strip_sections`]).
    pub strip_sections: bool,
    /// Normalizer flag `remove_extra_whitespaces`.
    pub remove_extra_whitespaces: bool,
    /// Where user-defined symbols are matched.
    pub sections: Sections,
    /// Words may be encoded one at a time ([`SpModel::splits_words`]).
    pub split_words: bool,
    /// [`picobpe::SpTables::cut_bytes`]: ASCII bytes no mergeable piece of two or more bytes
    /// contains.
    pub cut_bytes: [u64; 2],
    /// BPE or Unigram, with the Unigram parameters.
    pub algorithm: SpAlgorithm,
    /// Unigram: the [`PieceFilter`] words (empty for BPE).
    pub piece_filter: Cow<'a, [u64]>,
    /// Unigram `tokenizer.json` imports: each slot's `f64` score bits (else empty).
    pub f64_scores: Cow<'a, [u64]>,
    /// The character map's double array (empty for the `identity` rule and in the compact
    /// form; see [`picobpe::sentencepiece::CharsMap`]).
    pub charsmap_units: Cow<'a, [u32]>,
    /// The character map's replacements (NUL-terminated in the double-array form).
    pub charsmap_strings: Cow<'a, [u8]>,
    /// Compact form: runs of one-character keys.
    pub charsmap_runs: Cow<'a, [u32]>,
    /// Compact form: the runs' replacements.
    pub charsmap_run_values: Cow<'a, [u32]>,
    /// Compact form: the sequences of images, sorted.
    pub charsmap_sequences: Cow<'a, [u32]>,
    /// Compact form: the sequences' replacements.
    pub charsmap_sequence_values: Cow<'a, [u32]>,
    /// Compact form: characters found after the first in a longer key, as runs.
    pub charsmap_tails: Cow<'a, [u32]>,
    /// Compact form: the ASCII one-character keys.
    pub charsmap_ascii: [u64; 2],
    /// Compact form: the bytes a key starts with.
    pub charsmap_lead: [u64; 4],
    /// Compact form: the ASCII pairs that start a longer key (256 words).
    pub charsmap_ascii_pairs: Cow<'a, [u64]>,
    /// Compact form: the BMP filter's block per 128 code points.
    pub charsmap_bmp_index: Cow<'a, [u8]>,
    /// Compact form: the BMP filter's distinct blocks.
    pub charsmap_bmp_blocks: Cow<'a, [u64]>,
    /// Compact form: Hangul jamo compose by rule.
    pub charsmap_hangul: bool,
    /// How far a match can read past a word's end: the longest key of the character map or
    /// user-defined symbol (0 without a map).
    pub charsmap_lookahead: u32,
}

impl SpTableData<'static> {
    /// Validate `model` and lay out its tables.
    pub fn new(model: &SpModel) -> Result<Self, InvalidSpModel> {
        let map = model.validate_with_map()?;
        let (token_bytes, token_offsets) = concat(model.pieces.iter().map(|p| p.piece.as_bytes()));
        let kinds: Vec<u8> = model.pieces.iter().map(|p| p.kind as u8).collect();
        let ids: Vec<u32> = (0..model.pieces.len() as u32).collect();
        let (piece_index, pieces) = ptr_index(&ids, |&id, seed| {
            hash_bytes(model.pieces[id as usize].piece.as_bytes(), seed)
        });
        let priorities: Vec<u32> = pieces
            .iter()
            .map(|&id| {
                let p = &model.pieces[id as usize];
                if model.unigram {
                    return model.unigram_score(id as usize).map_or(0, score_priority);
                }
                match p.kind {
                    SpKind::Normal | SpKind::UserDefined => p.score.map_or(0, score_priority),
                    _ => 0,
                }
            })
            .collect();
        let f64_scores: Vec<u64> = if model.unigram_tokenizers() {
            pieces
                .iter()
                .map(|&id| {
                    model
                        .unigram_score64(id as usize)
                        .unwrap_or(f64::NEG_INFINITY)
                        .to_bits()
                })
                .collect()
        } else {
            Vec::new()
        };
        let algorithm = model.algorithm();
        let piece_keys: Vec<u64> = pieces
            .iter()
            .map(|&id| {
                piece_key_entry(
                    model.pieces[id as usize].piece.as_bytes(),
                    token_offsets[id as usize],
                )
            })
            .collect();
        let byte_ids = if model.byte_fallback {
            let mut byte_ids = vec![0u32; 256];
            for (id, p) in model.pieces.iter().enumerate() {
                if p.kind == SpKind::Byte {
                    if let Some(b) = super::byte_piece_value(&p.piece) {
                        byte_ids[b as usize] = id as u32;
                    }
                }
            }
            byte_ids
        } else {
            Vec::new()
        };
        let mut user_defined: Vec<u32> = model
            .pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| model.matched_in_text(p))
            .map(|(id, _)| id as u32)
            .collect();
        user_defined.sort_by_key(|&id| std::cmp::Reverse(model.pieces[id as usize].piece.len()));
        let longest_user = user_defined
            .first()
            .map_or(0, |&id| model.pieces[id as usize].piece.len() as u32);
        let user_strips = user_strips(&user_defined, &model.strips);
        let mut data = SpTableData {
            token_bytes: token_bytes.into(),
            token_offsets: token_offsets.into(),
            kinds: kinds.into(),
            priorities: priorities.into(),
            pieces: pieces.into(),
            piece_keys: piece_keys.into(),
            piece_index,
            byte_ids: byte_ids.into(),
            unk_id: model.unk_id(),
            unk_surface: model.unk_surface.as_bytes().to_vec().into(),
            unk_per_char: model.unk_per_char,
            normalizer: model.normalizer,
            precompiled: model.precompiled,
            char_steps: model.char_steps,
            pre_split: model.pre_split,
            joins_pieces: model.joins_pieces,
            user_defined: user_defined.into(),
            user_strips: user_strips.into(),
            add_dummy_prefix: model.add_dummy_prefix,
            remove_extra_whitespaces: model.remove_extra_whitespaces,
            collapse_spaces: model.collapse_spaces,
            strip_sections: model.strip_sections,
            sections: model.sections,
            // Unigram models do not merge: no byte cuts a merge.
            cut_bytes: if model.unigram {
                [0; 2]
            } else {
                model.cut_bytes()
            },
            algorithm,
            f64_scores: f64_scores.into(),
            piece_filter: if model.unigram {
                piece_filter(model).into()
            } else {
                Cow::Borrowed(&[])
            },
            // A run of unknown symbols is one `<unk>`: across a word start only when `▁` is
            // unknown too, which then needs the whole text at once. A `Metaspace` that splits
            // makes each word a call of its own.
            split_words: model.sections.splits_words()
                || model.splits_words()
                    && (model.byte_fallback || model.pieces.iter().any(|p| p.piece == "\u{2581}")),
            charsmap_lookahead: if map.units.is_empty() {
                0
            } else {
                map.max_key.max(longest_user)
            },
            charsmap_units: Cow::Borrowed(&[]),
            charsmap_strings: Cow::Borrowed(&[]),
            charsmap_runs: Cow::Borrowed(&[]),
            charsmap_run_values: Cow::Borrowed(&[]),
            charsmap_sequences: Cow::Borrowed(&[]),
            charsmap_sequence_values: Cow::Borrowed(&[]),
            charsmap_tails: Cow::Borrowed(&[]),
            charsmap_ascii: [0; 2],
            charsmap_lead: [0; 4],
            charsmap_ascii_pairs: Cow::Borrowed(&[]),
            charsmap_bmp_index: Cow::Borrowed(&[]),
            charsmap_bmp_blocks: Cow::Borrowed(&[]),
            charsmap_hangul: false,
        };
        data.charsmap_units = map.units.into();
        data.charsmap_strings = map.strings.into();
        if !model.unigram {
            data.mark_whole_pieces(model);
        }
        Ok(data)
    }

    /// Set [`WHOLE`] on each normal or user-defined piece whose own bytes, merged as a word,
    /// give exactly that piece: the encoder then takes such a word after one lookup. Found
    /// with the core's own merge (on a copy of the tables), so the shortcut cannot change an id.
    fn mark_whole_pieces(&mut self, model: &SpModel) {
        let copy = self.clone();
        let tables = copy.tables();
        let tok = picobpe::SpTokenizer::new(&tables);
        let mut out = vec![0u32; 16 * WORD_BUF];
        for (id, p) in model.pieces.iter().enumerate() {
            if !matches!(p.kind, SpKind::Normal | SpKind::UserDefined) {
                continue;
            }
            if let Ok(1) = tok.merge_normalized(p.piece.as_bytes(), &mut out) {
                if out[0] == id as u32 {
                    self.kinds.to_mut()[id] |= WHOLE;
                }
            }
        }
    }

    /// Build live [`SpTables`] and leak them (see [`crate::TableData::to_tables`] for why
    /// leaking is right here).
    pub fn to_tables(self) -> &'static SpTables<'static> {
        let data: &'static SpTableData<'static> = crate::keep(self);
        crate::keep(data.tables())
    }
}

impl SpTableData<'_> {
    /// The normalizer the tables apply (see [`crate::normalizer::text_normalizer`]).
    pub fn text_normalizer(&self) -> Option<picobpe::normalizer::TextNormalizer> {
        crate::normalizer::text_normalizer(self.normalizer, self.precompiled, self.char_steps)
    }

    /// The same tables with the character map in its compact form when it has one (see
    /// [`super::charsmap::compact`]; `nmt_nfkc`: 52 KB instead of 240 KB), else unchanged.
    /// What `picobpe-build` bakes: the double array, the host's default, is faster on text
    /// the map leaves alone (zh: 62 against 41 MB/s) but four times the flash.
    pub fn with_compact_charsmap(mut self) -> Result<Self, InvalidSpModel> {
        if self.charsmap_units.is_empty() {
            return Ok(self);
        }
        let units = self.charsmap_units.to_vec();
        let map = super::charsmap::check_parts(units, &self.charsmap_strings)?;
        let Some(c) = super::charsmap::compact(&map.pairs) else {
            return Ok(self);
        };
        self.charsmap_units = Cow::Borrowed(&[]);
        self.charsmap_strings = c.strings.into();
        self.charsmap_runs = c.runs.into();
        self.charsmap_run_values = c.run_values.into();
        self.charsmap_sequences = c.sequences.into();
        self.charsmap_sequence_values = c.sequence_values.into();
        self.charsmap_tails = c.tails.into();
        self.charsmap_ascii = c.ascii;
        self.charsmap_lead = c.lead;
        self.charsmap_ascii_pairs = c.ascii_pairs.into();
        self.charsmap_bmp_index = c.bmp_index.into();
        self.charsmap_bmp_blocks = c.bmp_blocks.into();
        self.charsmap_hangul = c.hangul;
        // The longest spelling of a key the compact form can match (at least the map's
        // longest key): what a stream holds back.
        let bound = super::charsmap::check_compact(&self)?;
        self.charsmap_lookahead = self.charsmap_lookahead.max(bound);
        Ok(self)
    }

    /// The same tables without the piece keys: 8 bytes less per piece, every hit confirmed
    /// through the token bytes instead.
    pub fn without_piece_keys(mut self) -> Self {
        self.piece_keys = Cow::Borrowed(&[]);
        self
    }

    /// Number of ids.
    pub fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
    }

    /// Flash bytes of each table as baked for a 32-bit target.
    pub fn sizes(&self) -> SpTableSizes {
        SpTableSizes {
            n_ids: self.n_ids(),
            token_bytes: self.token_bytes.len(),
            token_offsets: 4 * self.token_offsets.len(),
            kinds: self.kinds.len(),
            priorities: 4 * self.priorities.len(),
            pieces: 4 * self.pieces.len() + 8 * self.piece_keys.len() + self.piece_index.bytes(),
            other: 4 * self.byte_ids.len()
                + self.unk_surface.len()
                + 4 * self.user_defined.len()
                + SP_TABLES_HEADER
                + if self.algorithm == SpAlgorithm::Bpe {
                    0
                } else {
                    8
                },
            piece_filter: 8 * self.piece_filter.len() + 8 * self.f64_scores.len(),
            charsmap: 4
                * (self.charsmap_units.len()
                    + self.charsmap_runs.len()
                    + self.charsmap_run_values.len()
                    + self.charsmap_sequences.len()
                    + self.charsmap_sequence_values.len()
                    + self.charsmap_tails.len())
                + 8 * self.charsmap_ascii_pairs.len()
                + self.charsmap_bmp_index.len()
                + 8 * self.charsmap_bmp_blocks.len()
                + self.charsmap_strings.len(),
        }
    }

    /// Live [`SpTables`] borrowing this data (no leak: [`SpTableData::to_tables`] for
    /// `'static` ones).
    pub fn tables(&self) -> SpTables<'_> {
        SpTables {
            token_bytes: &self.token_bytes,
            token_offsets: &self.token_offsets,
            kinds: &self.kinds,
            priorities: &self.priorities,
            pieces: PieceMap {
                index: self.piece_index.ptr_index(self.pieces.len()),
                ids: &self.pieces,
                keys: &self.piece_keys,
            },
            byte_ids: &self.byte_ids,
            unk_id: self.unk_id,
            unk_surface: &self.unk_surface,
            unk_per_char: self.unk_per_char,
            user_defined: &self.user_defined,
            user_strips: &self.user_strips,
            add_dummy_prefix: self.add_dummy_prefix,
            remove_extra_whitespaces: self.remove_extra_whitespaces,
            collapse_spaces: self.collapse_spaces,
            strip_sections: self.strip_sections,
            sections: self.sections,
            pre_split: self.pre_split.map(picobpe::sentencepiece::PreSplit::new),
            joins_pieces: self.joins_pieces,
            split_words: self.split_words,
            cut_bytes: self.cut_bytes,
            algorithm: self.algorithm,
            piece_filter: &self.piece_filter,
            f64_scores: &self.f64_scores,
            charsmap: picobpe::sentencepiece::CharsMap {
                units: &self.charsmap_units,
                strings: &self.charsmap_strings,
                runs: &self.charsmap_runs,
                run_values: &self.charsmap_run_values,
                sequences: &self.charsmap_sequences,
                sequence_values: &self.charsmap_sequence_values,
                tails: &self.charsmap_tails,
                ascii: self.charsmap_ascii,
                lead: self.charsmap_lead,
                ascii_pairs: &self.charsmap_ascii_pairs,
                bmp_index: &self.charsmap_bmp_index,
                bmp_blocks: &self.charsmap_bmp_blocks,
                hangul: self.charsmap_hangul,
                max_key: self.charsmap_lookahead,
            },
            normalizer: self.text_normalizer(),
        }
    }
}

/// The [`PieceFilter`] of a Unigram model: 8 bits per matchable piece (and per distinct proper
/// prefix) in each half, rounded up to a power of two, so about one lookup in eight that the
/// filter lets through finds nothing.
fn piece_filter(model: &SpModel) -> Vec<u64> {
    let hash = |b: &[u8]| {
        b.iter()
            .fold(PieceFilter::SEED, |h, &b| PieceFilter::step(h, b))
    };
    let pieces: Vec<&str> = (0..model.pieces.len())
        .filter(|&id| model.unigram_score(id).is_some())
        .map(|id| model.pieces[id].piece.as_str())
        .collect();
    let prefixes: std::collections::HashSet<&str> = pieces
        .iter()
        .flat_map(|p| p.char_indices().skip(1).map(|(i, _)| &p[..i]))
        .collect();
    let bits = (8 * pieces.len().max(prefixes.len()))
        .next_power_of_two()
        .max(64);
    let half = bits / 64;
    let mut words = vec![0u64; 2 * half];
    let zeros = vec![0u64; 2 * half];
    let filter = PieceFilter::new(&zeros);
    for p in &pieces {
        let (a, _) = filter.bits(hash(p.as_bytes()));
        words[(a / 64) as usize] |= 1 << (a % 64);
    }
    for p in &prefixes {
        let (_, b) = filter.bits(hash(p.as_bytes()));
        words[half + (b / 64) as usize] |= 1 << (b % 64);
    }
    words
}

/// `SpTables` itself on a 32-bit target: eighteen slices, a `PtrIndex`, an id, the flags, the
/// cut-byte set and the character map's lookahead, Hangul flag, ASCII and lead-byte sets.
const SP_TABLES_HEADER: usize = 18 * 8 + 24 + 8 + 4 + 4 + 16 + 4 + 4 + 16 + 32;

/// Flash bytes per SentencePiece table for a 32-bit target, as baked by `picobpe-build`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpTableSizes {
    /// Ids.
    pub n_ids: usize,
    /// Concatenated piece bytes.
    pub token_bytes: usize,
    /// `u32` offsets.
    pub token_offsets: usize,
    /// One kind byte per id.
    pub kinds: usize,
    /// One `u32` merge priority per id.
    pub priorities: usize,
    /// The Unigram piece filter and `f64` scores (0 for BPE).
    pub piece_filter: usize,
    /// Piece map: 4 B ids (+ 8 B keys when present) + index.
    pub pieces: usize,
    /// Byte-piece ids, unknown surface, user-defined ids, the struct itself.
    pub other: usize,
    /// The normalizer's character map (0 for the `identity` rule).
    pub charsmap: usize,
}

impl SpTableSizes {
    /// Sum of all tables.
    pub fn total(&self) -> usize {
        self.rows().iter().map(|r| r.1).sum()
    }

    /// `(name, bytes, note)` per table, in print order.
    fn rows(&self) -> [(&'static str, usize, String); 8] {
        [
            ("token_bytes", self.token_bytes, String::new()),
            ("token_offsets", self.token_offsets, String::new()),
            ("kinds", self.kinds, String::new()),
            ("priorities", self.priorities, String::new()),
            ("piece_filter", self.piece_filter, String::new()),
            ("pieces", self.pieces, String::new()),
            ("other", self.other, String::new()),
            ("charsmap", self.charsmap, String::new()),
        ]
    }
}

impl fmt::Display for SpTableSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_sizes(
            f,
            &self.rows(),
            self.n_ids,
            &format!(", {} ids", self.n_ids),
        )
    }
}

/// The strip bits of each of `user_defined` (in its order) from `strips` (`(id, bits)`);
/// empty when no symbol takes whitespace.
fn user_strips(user_defined: &[u32], strips: &[(u32, u8)]) -> Vec<u8> {
    if strips.is_empty() {
        return Vec::new();
    }
    user_defined
        .iter()
        .map(|id| strips.iter().find(|s| s.0 == *id).map_or(0, |s| s.1))
        .collect()
}

impl SpTableData<'_> {
    /// Give tables read from a model file the strips its header holds (`(id, bits)`),
    /// checked against the tables' user-defined symbols as every family's strips are
    /// (`crate::tables::check_strips`).
    pub fn set_strips(&mut self, strips: &[(u32, u8)]) -> Result<(), String> {
        if strips.is_empty() {
            return Ok(());
        }
        let symbols: Vec<(String, u32)> = {
            let tables = self.tables();
            (self.user_defined.iter())
                .map(|&id| {
                    let bytes = tables.piece_bytes(id).unwrap_or_default();
                    (String::from_utf8_lossy(bytes).into_owned(), id)
                })
                .collect()
        };
        crate::tables::check_strips(strips, &symbols)?;
        self.user_strips = user_strips(&self.user_defined, strips).into();
        Ok(())
    }
}
