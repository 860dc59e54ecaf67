//! [`WpTableData`]: the flat, owned form of [`picobpe::WpTables`] built from a validated
//! [`WpModel`], leaked into live tables on the host (and baked by `picobpe-build`).

use picobpe::layout::hash_bytes;
use picobpe::{PieceMap, SpecialToken, WpTables};

use super::{InvalidWpModel, WpModel};
use crate::tables::{concat, fmt_sizes, ptr_index, special_tokens, IndexData, SPECIAL_ENTRY};

/// Owned table contents, one field per [`WpTables`] field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WpTableData {
    /// Vocabulary entries of all ids concatenated in id order.
    pub token_bytes: Vec<u8>,
    /// `n_ids + 1` offsets into `token_bytes`.
    pub token_offsets: Vec<u32>,
    /// Ids in slot order of the word-start index.
    pub starts: Vec<u32>,
    /// The perfect-hash index of `starts` (entries hashed with [`hash_bytes`]).
    pub start_index: IndexData<'static>,
    /// Ids in slot order of the continuation index.
    pub continuations: Vec<u32>,
    /// The perfect-hash index of `continuations` (entries after the prefix).
    pub continuation_index: IndexData<'static>,
    /// Longest key of either index, in bytes.
    pub longest: u32,
    /// The continuation prefix.
    pub prefix: Vec<u8>,
    /// The unknown token's id.
    pub unk_id: u32,
    /// `max_input_chars_per_word`.
    pub max_chars_per_word: u32,
    /// Normalizer and decoder flags: clean_text, handle_chinese_chars, strip_accents,
    /// lowercase, cleanup.
    pub flags: [bool; 5],
    /// Added tokens (text, id).
    pub specials: Vec<(String, u32)>,
    /// The ones that take whitespace ([`WpModel::strips`]).
    pub strips: Vec<(u32, u8)>,
    /// A `tokenizer.json`'s Unicode normalizer ([`WpModel::normalizer`]).
    pub normalizer: Option<picobpe::normalizer::UnicodeForm>,
    /// Its character steps ([`WpModel::char_steps`]).
    pub char_steps: crate::normalizer::CharSteps,
    /// The pre-tokenizer ([`WpModel::split`]).
    pub split: picobpe::wordpiece::WordSplit,
}

impl WpTableData {
    /// Validate `model` and lay out its tables.
    pub fn new(model: &WpModel) -> Result<WpTableData, InvalidWpModel> {
        model.validate()?;
        let (token_bytes, token_offsets) = concat(model.vocab.iter().map(String::as_bytes));
        let key = |id: u32, continued: bool| -> &[u8] {
            let entry = model.vocab[id as usize].as_bytes();
            if continued {
                &entry[model.prefix.len()..]
            } else {
                entry
            }
        };
        let all: Vec<u32> = (0..model.vocab.len() as u32).collect();
        let continued: Vec<u32> = all
            .iter()
            .copied()
            .filter(|&id| {
                let e = &model.vocab[id as usize];
                !model.prefix.is_empty()
                    && e.len() > model.prefix.len()
                    && e.starts_with(&model.prefix)
            })
            .collect();
        let (start_index, starts) = ptr_index(&all, |&id, seed| hash_bytes(key(id, false), seed));
        let (continuation_index, continuations) =
            ptr_index(&continued, |&id, seed| hash_bytes(key(id, true), seed));
        let longest = model.vocab.iter().map(String::len).max().unwrap_or(0) as u32;
        Ok(WpTableData {
            token_bytes,
            token_offsets,
            starts,
            start_index,
            continuations,
            continuation_index,
            longest,
            prefix: model.prefix.as_bytes().to_vec(),
            unk_id: model.unk_id,
            max_chars_per_word: model.max_chars_per_word,
            flags: [
                model.clean_text,
                model.handle_chinese_chars,
                model.strip_accents,
                model.lowercase,
                model.cleanup,
            ],
            specials: crate::tables::sorted_specials(&model.specials),
            strips: model.strips.clone(),
            normalizer: model.normalizer,
            char_steps: model.char_steps,
            split: model.split,
        })
    }

    /// Number of ids.
    pub fn n_ids(&self) -> usize {
        self.token_offsets.len().saturating_sub(1)
    }

    /// Flash bytes of each table as baked for a 32-bit target.
    pub fn sizes(&self) -> WpTableSizes {
        WpTableSizes {
            n_ids: self.n_ids(),
            token_bytes: self.token_bytes.len(),
            token_offsets: 4 * self.token_offsets.len(),
            pieces: 4 * (self.starts.len() + self.continuations.len())
                + self.start_index.bytes()
                + self.continuation_index.bytes(),
            other: self.prefix.len()
                + self
                    .specials
                    .iter()
                    .map(|(text, _)| text.len() + SPECIAL_ENTRY)
                    .sum::<usize>()
                + WP_TABLES_HEADER,
        }
    }

    /// Run `f` on tables that borrow this data (nothing leaked: for tools that load many
    /// models in one process).
    pub fn with_tables<R>(&self, f: impl FnOnce(&WpTables<'_>) -> R) -> R {
        f(&self.tables(&special_tokens(&self.specials, &self.strips)))
    }

    /// Build live [`WpTables`] and leak them: like [`crate::TableData::to_tables`], for a
    /// process that loads one model and keeps it.
    pub fn to_tables(self) -> &'static WpTables<'static> {
        let data: &'static WpTableData = crate::keep(self);
        crate::keep(data.tables(Vec::leak(special_tokens(&data.specials, &data.strips))))
    }

    /// The tables, borrowing this data and `specials`.
    fn tables<'a>(&'a self, specials: &'a [SpecialToken<'a>]) -> WpTables<'a> {
        let map = |ids: &'a [u32], index: &'a IndexData| PieceMap {
            index: index.ptr_index(ids.len()),
            ids,
            keys: &[],
        };
        let [clean_text, handle_chinese_chars, strip_accents, lowercase, cleanup] = self.flags;
        WpTables {
            token_bytes: &self.token_bytes,
            token_offsets: &self.token_offsets,
            starts: map(&self.starts, &self.start_index),
            continuations: map(&self.continuations, &self.continuation_index),
            longest: self.longest,
            prefix: &self.prefix,
            unk_id: self.unk_id,
            max_chars_per_word: self.max_chars_per_word,
            clean_text,
            handle_chinese_chars,
            strip_accents,
            lowercase,
            cleanup,
            specials,
            normalizer: self.text_normalizer(),
            split: self.split,
        }
    }

    /// The normalizer the tables apply besides the flags (see
    /// [`crate::normalizer::wordpiece_normalizer`]).
    pub fn text_normalizer(&self) -> Option<picobpe::normalizer::TextNormalizer> {
        crate::normalizer::wordpiece_normalizer(self.normalizer, self.char_steps)
    }
}

/// `WpTables` itself on a 32-bit target: five slices, two piece maps, three `u32`s, the flags.
const WP_TABLES_HEADER: usize = 5 * 8 + 2 * 36 + 12 + 8;

/// Flash bytes per WordPiece table for a 32-bit target, as baked by `picobpe-build`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WpTableSizes {
    /// Ids.
    pub n_ids: usize,
    /// Concatenated vocabulary entries.
    pub token_bytes: usize,
    /// `u32` offsets.
    pub token_offsets: usize,
    /// The two piece maps: 4 B ids + index each.
    pub pieces: usize,
    /// Prefix, added tokens, the struct itself.
    pub other: usize,
}

impl WpTableSizes {
    /// Sum of all tables.
    pub fn total(&self) -> usize {
        self.token_bytes + self.token_offsets + self.pieces + self.other
    }
}

impl core::fmt::Display for WpTableSizes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let rows = [
            ("token_bytes", self.token_bytes, String::new()),
            ("token_offsets", self.token_offsets, String::new()),
            ("pieces", self.pieces, String::new()),
            ("other", self.other, String::new()),
        ];
        fmt_sizes(f, &rows, self.n_ids, &format!(", {} ids", self.n_ids))
    }
}
