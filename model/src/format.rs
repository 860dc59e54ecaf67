//! The `*.model` file format, versions 1 to 7.
//!
//! ```text
//! offset  size  field
//! 0       8     magic  b"PICOBPE\0"
//! 8       2     format version, u16 little-endian (1 to 7)
//! 10      4     payload length N, u32 little-endian
//! 14      4     CRC-32 (IEEE, as crc32fast computes it) of the payload, u32 little-endian
//! 18      N     payload
//! ```
//!
//! The model itself is postcard (varint lengths and integers, enum variant index as varint).
//! - Version 1: the payload is a byte-level BPE model, `Model { pattern, tokens, merges,
//!   specials, whole_piece }` in that field order; see [`crate::Model`]. [`Model::to_bytes`]
//!   writes this version, the smallest (what the bake step needs), for a model without a
//!   Unicode normalizer.
//! - Version 2: the payload is a model kind, then the model: variant 0 is a byte-level BPE
//!   `Model` as in version 1, variant 1 a SentencePiece BPE [`crate::SpModel`] `{ pieces,
//!   add_dummy_prefix, remove_extra_whitespaces, byte_fallback, unk_surface, sections }`, each
//!   piece `{ piece, score, kind }` (score an optional `f32`, kind a variant index: normal,
//!   unknown, control, user-defined, byte; sections a variant index: inline, every piece
//!   prefixed, first piece prefixed, unmarked pieces prefixed, first piece words, unmarked
//!   pieces words: see `picobpe::sentencepiece::Sections`). [`SpModel::to_bytes`] writes this version. Variant 3 is a
//!   SentencePiece Unigram model: the same `SpModel` fields (its scores are Viterbi scores),
//!   then `f64_scores` (a sequence of `f64`: a `tokenizer.json` import's scores, else empty).
//!   Variants 4 and 5 are variants 1 and 3 followed by the normalizer's character map (a byte
//!   sequence: `precompiled_charsmap` as `sentencepiece` stores it), for models whose
//!   normalizer rewrites characters (`nmt_nfkc` and the like). Variant 6 is variant 0 followed
//!   by a byte naming its Unicode normalizer (1 NFC, 2 NFD, 3 NFKC, 4 NFKD; Qwen2's NFC), which
//!   [`Model::to_bytes`] writes in this version for such a model. Variant 7 is a SentencePiece
//!   model from a `tokenizer.json` whose settings the others cannot hold: the `SpModel`, a
//!   bool (Unigram), `f64_scores`, the character map (possibly empty) and the settings, a
//!   `u16` varint, not 0 (bit 0: the unknown piece is matched in the text; bit 1: one `<unk>`
//!   per unknown character; bits 2-4: the Unicode normalizer, 1 NFC, 2 NFD, 3 NFKC, 4 NFKD,
//!   5 Nmt + NFKC; bit 5: `Precompiled`; bit 6: runs of spaces made one; bits 7-10: the
//!   character steps, quote pairs, `StripAccents`, `Lowercase`, `Lowercase` first). Variant 2 is a
//!   WordPiece [`crate::WpModel`] `{ vocab, unk_id, prefix, max_chars_per_word, clean_text,
//!   handle_chinese_chars, strip_accents, lowercase, cleanup, specials }`, which
//!   [`WpModel::write`] writes in this version (its tables are built at load). Variant 8 is a
//!   WordPiece model with a `tokenizer.json` normalizer (the model, the Unicode form's code
//!   and the character steps' bits, not both 0) and variant 9 one with a pre-tokenizer other
//!   than `BertPreTokenizer` (the model, those two codes, both 0 for `BertNormalizer`'s flags
//!   alone, and a byte: bits 0-1 whitespace kept, split or `Whitespace`'s words; bits 2-3
//!   `Punctuation` off, isolated, contiguous or removed; bits 4-5 `Digits` likewise).
//! - Version 3: the payload is a u32 little-endian length M, M bytes of a version-2 payload,
//!   then the model's prebuilt host tables (`table_file`: for a byte-level model the
//!   perfect-hash indexes, the byte-pair table and the trie, for a SentencePiece model its
//!   piece index, kinds and priorities, in their final layout). [`Model::write`] and
//!   [`SpModel::write`] write this version, so [`crate::read_tables`] maps them instead of
//!   building (o200k_base: about a millisecond instead of most of a second).
//! - Version 4: version 3 with the model's [`TemplateData`] (the special tokens "encode as the
//!   model expects" adds: `prefix`, then `suffix`, each a sequence of `u32`) at the start of the
//!   model part, before the version-2 payload; the tables may be absent (then they are built at
//!   load, as for every WordPiece model). Writers use it only for a model with a non-empty
//!   template ([`AnyModel::write`]); without one they write version 3 (WordPiece: 2) as before.
//! - Version 5: version 4 whose template is followed by the specials that take the whitespace
//!   beside them (`Model::strips`, `WpModel::strips`, `SpModel::strips`: a sequence of
//!   `(u32 id, u8 bits)`, ids
//!   increasing, bits 1 `lstrip`, 2 `rstrip`). Writers use it only for a model with such a
//!   special. Reading checks the list against the model's specials as [`Model::validate`]
//!   does ([`ModelError::BadStrips`] when tables read without the model do not fit it).
//! - Version 6: version 5 whose strip list is followed by the regexes of the model's `Split`
//!   pre-tokenizers (`Model::splits`: a sequence of strings, outermost first), compiled at
//!   load ([`crate::compile_pattern`]). Writers use it only for a byte-level model with such
//!   splits; a regex the compiler refuses is [`InvalidModel::BadSplit`](crate::InvalidModel)
//!   (with the model) or [`ModelError::BadSplit`] (tables read without it).
//! - Version 7: version 6 whose splits are pairs, the regex and its rule's byte
//!   ([`picobpe::pretok::SplitRule::bits`]: bits 0-1 `Isolated`, `MergedWithPrevious`,
//!   `MergedWithNext`, `Contiguous`; bit 2 inverted; bit 3 `Removed`, with bits 0-1
//!   clear; an unknown byte is [`ModelError::BadSplit`]). Writers use it only when a split is
//!   not `Isolated`.
//!
//! Payload variant 10 (in versions 2 to 6) is a byte-level model with `ByteLevel`'s
//! `add_prefix_space`: the model as in variant 0, then a settings byte, 1 (the prefix space;
//! any other value is [`ModelError::BadSettings`]).
//!
//! Payload variant 11 is a byte-level model with an end-of-word suffix
//! ([`Model::end_of_word_suffix`], CLIP's `</w>`) or normalizer steps ([`Model::steps`]:
//! CLIP's `Lowercase` and whitespace runs): the model as in variant 0, its normalizer's code
//! (0 for none), a settings byte (bit 0 the prefix space, bits 1-3 the steps; others are
//! [`ModelError::BadSettings`]) and the suffix's bytes (a postcard byte string, empty for
//! none), then the empty tokens ([`Model::empty_tokens`]: a sequence of ids). Its prebuilt
//! tables are of kind 2 (`table_file`).
//!
//! A file must end exactly after the payload.
//!
//! Reading checks, in order: magic → version → header length → payload length → checksum →
//! postcard decode (must consume the whole model part) → [`Model::validate`] → for version 3
//! the tables' layout, and that they belong to the model (same ids, pattern and specials); for
//! version 4 that every template id is one of the model's ([`ModelError::BadTemplate`]). Each
//! failure is its own [`ModelError`] variant. Decoding a hostile payload cannot allocate much
//! beyond the file's own size: postcard reads from the slice, every element costs at least one
//! input byte, serde caps the up-front capacity it reserves for a claimed sequence length at
//! 1 MiB, and every table count is checked against the bytes left before allocating.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ModelError;
use crate::model::{Model, Split};
use crate::sentencepiece::SpModel;
use crate::tables::{PieceTable, TableData};
use crate::wordpiece::WpModel;
use crate::{table_file, SpTableData};
use picobpe::pretok::SplitRule;

/// The 8 bytes every model file starts with.
pub const MAGIC: [u8; 8] = *b"PICOBPE\0";
/// The newest format version this build reads.
pub const VERSION: u16 = 7;
/// The version of a byte-level BPE model alone ([`Model::to_bytes`]).
pub const BPE_VERSION: u16 = 1;
/// The version of a model of either kind alone ([`SpModel::to_bytes`]).
pub const KIND_VERSION: u16 = 2;
/// The version of a model with its prebuilt host tables ([`Model::write`]).
pub const TABLES_VERSION: u16 = 3;
/// The version of a model with its template (and, but for WordPiece, its prebuilt tables).
pub const TEMPLATE_VERSION: u16 = 4;
/// The version of a model with its template and specials that take whitespace.
pub const STRIP_VERSION: u16 = 5;
/// The version of a model with its template, strips and compiled `Split` regexes.
pub const SPLIT_VERSION: u16 = 6;
/// The version of a model whose `Split`s carry rules other than `Isolated` (each a regex and
/// its rule's byte).
pub const SPLIT_RULE_VERSION: u16 = 7;
/// Payload variant 10's settings byte: the prefix space ([`Model::prefix_space`]).
const PREFIX_SPACE: u8 = 1;
/// Header size: magic, version, length, checksum.
pub const HEADER_LEN: usize = 8 + 2 + 4 + 4;

impl Model {
    /// Validate and encode into the file format, the model alone (version 1: the smallest
    /// file, all the bake step reads).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        if !self.strips.is_empty() || !self.splits.is_empty() {
            // Only versions 5 and 6 hold specials that take whitespace and splits (with the
            // tables).
            return self.to_bytes_with_tables();
        }
        self.validate()?;
        if self.normalizer.is_some()
            || self.prefix_space
            || !self.end_of_word_suffix.is_empty()
            || self.steps.bits() != 0
            || !self.empty_tokens.is_empty()
        {
            // Version 1 has no room for a normalizer, a prefix space or a suffix: the model
            // with its kind (version 2).
            let payload =
                postcard::to_stdvec(&PayloadRef::byte_pair(self)).map_err(ModelError::Encode)?;
            return frame(KIND_VERSION, &payload);
        }
        let payload = postcard::to_stdvec(self).map_err(ModelError::Encode)?;
        frame(BPE_VERSION, &payload)
    }

    /// Validate and encode with the prebuilt host tables (version 3, [`PieceTable::Full`]):
    /// a larger file (o200k_base: 22 MB instead of 2.4 MB) that [`crate::read_tables`] loads without
    /// building anything.
    pub fn to_bytes_with_tables(&self) -> Result<Vec<u8>, ModelError> {
        file_bytes(PayloadRef::byte_pair(self), &TemplateData::default())
    }

    /// Decode and validate a model file's bytes (a byte-level BPE model; a SentencePiece
    /// model is [`ModelError::WrongKind`]: read those with [`AnyModel::from_bytes`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Model, ModelError> {
        match AnyModel::from_bytes(bytes)? {
            AnyModel::BytePair(model) => Ok(model),
            other => Err(other.wrong_kind("byte-level BPE")),
        }
    }

    /// Read, decode and validate a model file.
    pub fn read(path: impl AsRef<Path>) -> Result<Model, ModelError> {
        Model::from_bytes((*map_file(path.as_ref())?).as_ref())
    }

    /// Validate, encode with the prebuilt host tables ([`Model::to_bytes_with_tables`]) and
    /// write atomically: the bytes go to a temporary file in the same directory, which is then
    /// renamed over `path`, so readers never see a partial model.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        write_file(path.as_ref(), &self.to_bytes_with_tables()?)
    }
}

/// A model of any kind, as read from a file.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyModel {
    /// A byte-level BPE model (GPT-2 family, trained models).
    BytePair(Model),
    /// A SentencePiece BPE model (Llama 2 family).
    SentencePiece(SpModel),
    /// A WordPiece model (BERT family).
    WordPiece(WpModel),
}

/// The special tokens a model adds around the ids of one text when encoding "as the model
/// expects" (`tokenizers`' `add_special_tokens=True`; see the importers), stored beside the
/// model in its file (version 4). [`TemplateData::template`] lends it to the core.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateData {
    /// Ids before the text's ids (BOS, `[CLS]`).
    pub prefix: Vec<u32>,
    /// Ids after the text's ids (EOS, `[SEP]`).
    pub suffix: Vec<u32>,
}

impl TemplateData {
    /// The template as the core's encoders take it.
    pub fn template(&self) -> picobpe::Template<'_> {
        picobpe::Template {
            prefix: &self.prefix,
            suffix: &self.suffix,
        }
    }

    /// True when the template adds no id.
    pub fn is_empty(&self) -> bool {
        self.prefix.is_empty() && self.suffix.is_empty()
    }

    /// Every id must be one of the model's `n_ids`.
    fn validate(&self, n_ids: usize) -> Result<(), ModelError> {
        let ids = self.prefix.iter().chain(&self.suffix);
        match ids.copied().find(|&id| id as usize >= n_ids) {
            Some(id) => Err(ModelError::BadTemplate { id, n_ids }),
            None => Ok(()),
        }
    }
}

/// The version-2 payload (and version 3's model part): the kind (the variant index, the one
/// list of kinds), then the model; read as owned models, written as [`PayloadRef`].
#[derive(Serialize, Deserialize)]
enum Payload<B = Model, S = SpModel, W = WpModel, F = Vec<f64>, C = Vec<u8>, E = Vec<u32>> {
    BytePair(B),
    SentencePiece(S),
    WordPiece(W),
    Unigram(S, F),
    SentencePieceMapped(S, C),
    UnigramMapped(S, F, C),
    /// A byte-level model with a Unicode normalizer ([`crate::normalizer::code`]).
    BytePairNormalized(B, u8),
    /// A SentencePiece model from a `tokenizer.json` with settings the other kinds cannot
    /// hold: the model, whether it is Unigram, its `f64` scores, its character map and the
    /// settings ([`SpModel::settings`]: a `u32` varint, one byte below 128 as when it was a
    /// `u8`, the same bytes below 2^16 as when it was a `u16`).
    SentencePieceSettings(S, bool, F, C, u32),
    /// A WordPiece model with a `tokenizer.json` normalizer in place of `BertNormalizer`:
    /// the model, its Unicode form's code ([`crate::normalizer::code`]) and its character
    /// steps ([`crate::normalizer::CharSteps::bits`]), not both 0.
    WordPieceNormalized(W, u8, u8),
    /// A WordPiece model with a pre-tokenizer other than `BertPreTokenizer`: the model, its
    /// normalizer's codes as in `WordPieceNormalized` (both 0 for `BertNormalizer`'s flags
    /// alone) and the pre-tokenizer's code ([`crate::wordpiece::split_code`]).
    WordPieceSplit(W, u8, u8, u8),
    /// A byte-level model with `ByteLevel`'s `add_prefix_space` ([`Model::prefix_space`]):
    /// the model and a settings byte, bit 0 the prefix space (set: no other bit is defined).
    BytePairSettings(B, u8),
    /// A byte-level model with an end-of-word suffix ([`Model::end_of_word_suffix`]) or
    /// normalizer steps ([`Model::steps`]): the model, its normalizer's code
    /// ([`crate::normalizer::code`], 0 for none), a settings byte (bit 0 the prefix space,
    /// bits 1-3 [`crate::TextSteps::bits`]), the suffix's bytes (empty for none) and the
    /// empty tokens ([`Model::empty_tokens`]).
    BytePairExtended(B, u8, u8, C, E),
}

/// A payload to write, borrowing its model.
type PayloadRef<'a> = Payload<&'a Model, &'a SpModel, &'a WpModel, &'a [f64], &'a [u8], &'a [u32]>;

impl<'a> PayloadRef<'a> {
    /// The payload of any model.
    fn of(model: &'a AnyModel) -> PayloadRef<'a> {
        match model {
            AnyModel::BytePair(m) => PayloadRef::byte_pair(m),
            AnyModel::SentencePiece(m) => PayloadRef::sentencepiece(m),
            AnyModel::WordPiece(m) => PayloadRef::wordpiece(m),
        }
    }

    /// A WordPiece model's payload: variant 2, or 8 with a normalizer, or 9 with a
    /// pre-tokenizer other than `BertPreTokenizer`.
    fn wordpiece(m: &'a WpModel) -> PayloadRef<'a> {
        let (code, steps) = (crate::normalizer::code(m.normalizer), m.char_steps.bits());
        if !m.split.is_bert() {
            PayloadRef::WordPieceSplit(m, code, steps, crate::wordpiece::split_code(m.split))
        } else if code == 0 && steps == 0 {
            PayloadRef::WordPiece(m)
        } else {
            PayloadRef::WordPieceNormalized(m, code, steps)
        }
    }

    /// The byte-level model of a byte-level payload (any of its variants).
    fn byte_pair_model(&self) -> Option<&'a Model> {
        match *self {
            PayloadRef::BytePair(m)
            | PayloadRef::BytePairNormalized(m, _)
            | PayloadRef::BytePairSettings(m, _)
            | PayloadRef::BytePairExtended(m, ..) => Some(m),
            _ => None,
        }
    }

    /// A byte-level model's payload: variant 0, or 6 with a normalizer, or 10 with a prefix
    /// space, or 11 with an end-of-word suffix.
    fn byte_pair(m: &'a Model) -> PayloadRef<'a> {
        if !m.end_of_word_suffix.is_empty() || m.steps.bits() != 0 || !m.empty_tokens.is_empty() {
            let code = crate::normalizer::code(m.normalizer);
            let settings = if m.prefix_space { PREFIX_SPACE } else { 0 } | m.steps.bits();
            let (suffix, empty) = (&m.end_of_word_suffix[..], &m.empty_tokens[..]);
            return PayloadRef::BytePairExtended(m, code, settings, suffix, empty);
        }
        if m.prefix_space {
            return PayloadRef::BytePairSettings(m, PREFIX_SPACE);
        }
        match m.normalizer {
            None => PayloadRef::BytePair(m),
            Some(n) => PayloadRef::BytePairNormalized(m, crate::normalizer::code(Some(n))),
        }
    }

    /// A SentencePiece model's payload: variant 1 for BPE, 3 for Unigram (4 and 5 with a
    /// character map), 7 with `tokenizer.json` settings.
    fn sentencepiece(m: &'a SpModel) -> PayloadRef<'a> {
        if m.settings() != 0 {
            let (scores, map) = (&m.f64_scores[..], &m.charsmap[..]);
            return PayloadRef::SentencePieceSettings(m, m.unigram, scores, map, m.settings());
        }
        match (m.unigram, m.charsmap.is_empty()) {
            (true, true) => PayloadRef::Unigram(m, &m.f64_scores),
            (false, true) => PayloadRef::SentencePiece(m),
            (true, false) => PayloadRef::UnigramMapped(m, &m.f64_scores, &m.charsmap),
            (false, false) => PayloadRef::SentencePieceMapped(m, &m.charsmap),
        }
    }
}

impl AnyModel {
    /// Decode and validate a model file's bytes, whatever its kind.
    pub fn from_bytes(bytes: &[u8]) -> Result<AnyModel, ModelError> {
        Ok(AnyModel::from_bytes_with_template(bytes)?.0)
    }

    /// Decode and validate a model file's bytes, whatever its kind, with its template (empty
    /// before version 4).
    pub fn from_bytes_with_template(bytes: &[u8]) -> Result<(AnyModel, TemplateData), ModelError> {
        let (header, model_version, model, tables) = parts(bytes)?;
        let mut model = AnyModel::from_payload(model_version, model)?;
        header.template.validate(model.n_ids())?;
        let template = header.set(&mut model)?;
        if let Some((tables, base)) = tables {
            let belongs = match &model {
                AnyModel::BytePair(m) => {
                    let t: TableData = table_file::read(tables, base)?;
                    t.n_ids() == m.n_ids()
                        && t.pattern == m.pattern.into()
                        && t.normalizer == m.normalizer
                        && t.prefix_space == m.prefix_space
                        && *t.word_end_ids == m.word_end_ids()?
                        && t.steps == m.steps
                        && *t.empty_ids == m.empty_tokens[..]
                        // As sets: tables keep them sorted by text (files written before
                        // that, in the model's order).
                        && crate::tables::sorted_specials(&t.specials)
                            == crate::tables::sorted_specials(&m.specials)
                }
                AnyModel::SentencePiece(m) => {
                    let t: SpTableData = table_file::read(tables, base)?;
                    t.n_ids() == m.n_ids() && t.algorithm == m.algorithm()
                }
                // WordPiece models are written without tables.
                AnyModel::WordPiece(_) => false,
            };
            if !belongs {
                return Err(ModelError::BadTables {
                    reason:
                        "the tables do not belong to the model (ids, pattern, normalizer or specials differ)"
                            .to_owned(),
                });
            }
        }
        Ok((model, template))
    }

    /// [`ModelError::WrongKind`] for this model where one of kind `expected` was wanted.
    fn wrong_kind(&self, expected: &'static str) -> ModelError {
        let found = match self {
            AnyModel::BytePair(_) => "byte-level BPE",
            AnyModel::SentencePiece(_) => "SentencePiece BPE",
            AnyModel::WordPiece(_) => "WordPiece",
        };
        ModelError::WrongKind { found, expected }
    }

    /// The number of ids of the model.
    pub fn n_ids(&self) -> usize {
        match self {
            AnyModel::BytePair(m) => m.n_ids(),
            AnyModel::SentencePiece(m) => m.n_ids(),
            AnyModel::WordPiece(m) => m.n_ids(),
        }
    }

    /// Validate and encode with the prebuilt host tables and `template`: version 4, or without
    /// a template the version its kind's `write` writes (3; WordPiece: 2).
    pub fn to_bytes_with(&self, template: &TemplateData) -> Result<Vec<u8>, ModelError> {
        file_bytes(PayloadRef::of(self), template)
    }

    /// Validate, encode with `template` ([`AnyModel::to_bytes_with`]) and write atomically (see
    /// [`Model::write`]).
    pub fn write(&self, path: impl AsRef<Path>, template: &TemplateData) -> Result<(), ModelError> {
        write_file(path.as_ref(), &self.to_bytes_with(template)?)
    }

    /// Decode and validate a version-1 or version-2 payload.
    fn from_payload(version: u16, payload: &[u8]) -> Result<AnyModel, ModelError> {
        let (model, rest): (Payload, &[u8]) = match version {
            BPE_VERSION => {
                postcard::take_from_bytes(payload).map(|(m, r)| (Payload::BytePair(m), r))
            }
            _ => postcard::take_from_bytes(payload),
        }
        .map_err(ModelError::Decode)?;
        let model = match model {
            Payload::BytePair(m) => AnyModel::BytePair(m),
            Payload::BytePairNormalized(m, code) => {
                let normalizer = crate::normalizer::from_code(code)
                    .filter(Option::is_some)
                    .ok_or(ModelError::BadNormalizer { code })?;
                AnyModel::BytePair(Model { normalizer, ..m })
            }
            Payload::BytePairSettings(m, bits) => {
                if bits != PREFIX_SPACE {
                    return Err(ModelError::BadSettings { bits });
                }
                AnyModel::BytePair(Model {
                    prefix_space: true,
                    ..m
                })
            }
            Payload::BytePairExtended(m, code, bits, suffix, empty_tokens) => {
                let normalizer =
                    crate::normalizer::from_code(code).ok_or(ModelError::BadNormalizer { code })?;
                if bits & !0x0F != 0 {
                    return Err(ModelError::BadSettings { bits });
                }
                AnyModel::BytePair(Model {
                    normalizer,
                    prefix_space: bits & PREFIX_SPACE != 0,
                    end_of_word_suffix: suffix,
                    steps: crate::TextSteps::from_bits(bits),
                    empty_tokens,
                    ..m
                })
            }
            Payload::SentencePiece(m) => AnyModel::SentencePiece(m),
            Payload::WordPiece(m) => AnyModel::WordPiece(m),
            Payload::WordPieceNormalized(m, code, steps) => {
                if code == 0 && steps == 0 {
                    return Err(ModelError::InvalidWordPiece(
                        crate::wordpiece::InvalidWpModel::Normalizer,
                    ));
                }
                AnyModel::WordPiece(wordpiece_normalized(m, code, steps)?)
            }
            Payload::WordPieceSplit(m, code, steps, split) => {
                let m = wordpiece_normalized(m, code, steps)?;
                let split = crate::wordpiece::split_from_code(split)
                    .ok_or(ModelError::BadPreTokenizer { code: split })?;
                AnyModel::WordPiece(WpModel { split, ..m })
            }
            Payload::Unigram(m, f64_scores) => AnyModel::SentencePiece(SpModel {
                unigram: true,
                f64_scores,
                ..m
            }),
            Payload::SentencePieceMapped(m, charsmap) => {
                AnyModel::SentencePiece(SpModel { charsmap, ..m })
            }
            Payload::UnigramMapped(m, f64_scores, charsmap) => AnyModel::SentencePiece(SpModel {
                unigram: true,
                f64_scores,
                charsmap,
                ..m
            }),
            Payload::SentencePieceSettings(m, unigram, f64_scores, charsmap, bits) => {
                let mut m = SpModel {
                    unigram,
                    f64_scores,
                    charsmap,
                    ..m
                };
                if !m.set_settings(bits) || bits == 0 {
                    return Err(ModelError::InvalidSentencePiece(
                        crate::sentencepiece::InvalidSpModel::MisplacedSettings,
                    ));
                }
                AnyModel::SentencePiece(m)
            }
        };
        if !rest.is_empty() {
            return Err(ModelError::TrailingBytes {
                count: rest.len() as u64,
            });
        }
        match &model {
            AnyModel::BytePair(m) => m.validate()?,
            AnyModel::SentencePiece(m) => m.validate()?,
            AnyModel::WordPiece(m) => m.validate()?,
        }
        Ok(model)
    }

    /// Read, decode and validate a model file of any kind.
    pub fn read(path: impl AsRef<Path>) -> Result<AnyModel, ModelError> {
        Ok(AnyModel::read_with_template(path)?.0)
    }

    /// [`AnyModel::read`], with the template the file stores (empty when it has none).
    pub fn read_with_template(
        path: impl AsRef<Path>,
    ) -> Result<(AnyModel, TemplateData), ModelError> {
        AnyModel::from_bytes_with_template((*map_file(path.as_ref())?).as_ref())
    }
}

impl SpModel {
    /// Validate and encode into the file format (version 2; version 5, with its tables, when
    /// some user-defined symbol takes whitespace).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        self.validate()?;
        if !self.strips.is_empty() {
            // Only version 5 and later hold symbols that take whitespace (with the tables).
            return self.to_bytes_with_tables();
        }
        let payload =
            postcard::to_stdvec(&PayloadRef::sentencepiece(self)).map_err(ModelError::Encode)?;
        frame(KIND_VERSION, &payload)
    }

    /// Decode and validate a SentencePiece model file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<SpModel, ModelError> {
        match AnyModel::from_bytes(bytes)? {
            AnyModel::SentencePiece(model) => Ok(model),
            other => Err(other.wrong_kind("SentencePiece BPE")),
        }
    }

    /// Read, decode and validate a SentencePiece model file.
    pub fn read(path: impl AsRef<Path>) -> Result<SpModel, ModelError> {
        SpModel::from_bytes((*map_file(path.as_ref())?).as_ref())
    }

    /// Validate and encode with the prebuilt host tables (version 3), which
    /// [`crate::read_tables`] loads without building anything.
    pub fn to_bytes_with_tables(&self) -> Result<Vec<u8>, ModelError> {
        file_bytes(PayloadRef::sentencepiece(self), &TemplateData::default())
    }

    /// Validate, encode with the prebuilt host tables and write atomically (see
    /// [`Model::write`]).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        write_file(path.as_ref(), &self.to_bytes_with_tables()?)
    }
}

impl WpModel {
    /// Validate and encode into the file format (version 2: the tables are built at load,
    /// about 10 ms for a 30k vocabulary; version 5 when a special takes whitespace).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        if !self.strips.is_empty() {
            return file_bytes(PayloadRef::wordpiece(self), &TemplateData::default());
        }
        self.validate()?;
        let payload =
            postcard::to_stdvec(&PayloadRef::wordpiece(self)).map_err(ModelError::Encode)?;
        frame(KIND_VERSION, &payload)
    }

    /// Decode and validate a WordPiece model file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<WpModel, ModelError> {
        match AnyModel::from_bytes(bytes)? {
            AnyModel::WordPiece(model) => Ok(model),
            other => Err(other.wrong_kind("WordPiece")),
        }
    }

    /// Read, decode and validate a WordPiece model file.
    pub fn read(path: impl AsRef<Path>) -> Result<WpModel, ModelError> {
        WpModel::from_bytes((*map_file(path.as_ref())?).as_ref())
    }

    /// Validate, encode and write atomically (see [`Model::write`]).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        write_file(path.as_ref(), &self.to_bytes()?)
    }
}

/// Live tables of any kind, as [`read_tables`] returns them.
#[derive(Clone, Copy, Debug)]
pub enum LiveTables {
    /// A byte-level BPE model's tables.
    BytePair(&'static picobpe::Tables<'static>),
    /// A SentencePiece BPE model's tables.
    SentencePiece(&'static picobpe::SpTables<'static>),
    /// A WordPiece model's tables.
    WordPiece(&'static picobpe::WpTables<'static>),
}

impl LiveTables {
    /// A tokenizer over these tables: encodes and decodes with the family's code through the
    /// core's one contract ([`picobpe::Tokenize`]), whatever the family.
    pub fn tokenizer(&self) -> picobpe::AnyTokenizer<'static> {
        match *self {
            LiveTables::BytePair(t) => picobpe::Tokenizer::new(t).into(),
            LiveTables::SentencePiece(t) => picobpe::SpTokenizer::new(t).into(),
            LiveTables::WordPiece(t) => picobpe::WpTokenizer::new(t).into(),
        }
    }
}

/// Read a model file and return live tables for it, the fastest way the file allows: a
/// version-3 file's prebuilt tables are mapped and checked (o200k_base: about a millisecond);
/// older files are decoded, validated and laid out (byte-level models with
/// [`PieceTable::Full`]).
///
/// The tables are leaked, as [`TableData::to_tables`] explains. The model beside a version-3
/// file's tables is not decoded; the checksum covers both.
pub fn read_tables(path: impl AsRef<Path>) -> Result<LiveTables, ModelError> {
    Ok(read_tables_with_template(path)?.0)
}

/// [`read_tables`], and the model's template (empty before version 4), checked against the
/// model's ids and leaked with the tables.
pub fn read_tables_with_template(
    path: impl AsRef<Path>,
) -> Result<(LiveTables, &'static picobpe::Template<'static>), ModelError> {
    let bytes = map_file(path.as_ref())?;
    let (header, model_version, model, tables) = parts((*bytes).as_ref())?;
    if let Some((tables, base)) = tables {
        let range = base..base + tables.len();
        let sentencepiece = table_file::is_sentencepiece(tables);
        // The tables borrow the file's bytes for the rest of the process.
        let bytes: &'static dyn AsRef<[u8]> = &**crate::keep(bytes);
        let tables = &bytes.as_ref()[range];
        let live = if sentencepiece {
            if !header.splits.is_empty() {
                return Err(ModelError::BadSplit {
                    reason: SP_SPLITS.into(),
                });
            }
            let mut data = table_file::read::<SpTableData>(tables, base)?;
            data.set_strips(&header.strips)
                .map_err(|reason| ModelError::BadStrips { reason })?;
            LiveTables::SentencePiece(data.to_tables())
        } else {
            let mut data = table_file::read::<TableData>(tables, base)?;
            crate::tables::check_strips(&header.strips, &data.specials)
                .map_err(|reason| ModelError::BadStrips { reason })?;
            data.splits = crate::tables::compile_splits(&header.splits)
                .map_err(|reason| ModelError::BadSplit { reason })?;
            data.strips = header.strips;
            LiveTables::BytePair(data.to_tables())
        };
        return with_template(live, header.template);
    }
    let mut model = AnyModel::from_payload(model_version, model)?;
    let template = header.set(&mut model)?;
    let live = match model {
        AnyModel::BytePair(model) => {
            LiveTables::BytePair(TableData::new(&model, PieceTable::Full)?.to_tables())
        }
        AnyModel::SentencePiece(model) => {
            LiveTables::SentencePiece(SpTableData::new(&model)?.to_tables())
        }
        AnyModel::WordPiece(model) => {
            LiveTables::WordPiece(crate::WpTableData::new(&model)?.to_tables())
        }
    };
    with_template(live, template)
}

/// `template` checked against the ids of `live`, and leaked as its tables are.
fn with_template(
    live: LiveTables,
    template: TemplateData,
) -> Result<(LiveTables, &'static picobpe::Template<'static>), ModelError> {
    template.validate(picobpe::Tokenize::n_ids(&live.tokenizer()))?;
    let template = crate::keep(template).template();
    Ok((live, crate::keep(template)))
}

/// What a file's header part holds besides the model: the template (empty before version 4),
/// the specials' strip bits (empty before version 5) and the `Split` regexes (empty before
/// version 6).
#[derive(Default)]
struct Header {
    template: TemplateData,
    strips: Strips,
    splits: Vec<Split>,
}

impl Header {
    /// Give a model read from a file the strip bits and splits the header holds, checked
    /// against it (a SentencePiece model takes neither, a WordPiece model no splits); the
    /// template is returned.
    fn set(self, model: &mut AnyModel) -> Result<TemplateData, ModelError> {
        if !self.splits.is_empty() {
            let AnyModel::BytePair(m) = model else {
                return Err(ModelError::BadSplit {
                    reason: SP_SPLITS.into(),
                });
            };
            crate::tables::compile_splits(&self.splits)
                .map_err(|reason| ModelError::BadSplit { reason })?;
            m.splits = self.splits;
        }
        set_strips(model, self.strips)?;
        Ok(self.template)
    }
}

/// Check the header of a file's `bytes` and split its payload: the [`Header`], the version of
/// the model part (1 or 2), the model part, and the prebuilt tables with their offset in the
/// file if the file has them (version 3; versions 4 to 6 unless they are empty).
#[allow(clippy::type_complexity)]
fn parts(bytes: &[u8]) -> Result<(Header, u16, &[u8], Option<(&[u8], usize)>), ModelError> {
    let (version, payload) = unframe(bytes)?;
    if version < TABLES_VERSION {
        return Ok((Header::default(), version, payload, None));
    }
    let (part, tables, base) = split_tables(payload)?;
    let decode = ModelError::Decode;
    let (header, model) = match version {
        TEMPLATE_VERSION => {
            let (template, rest) = postcard::take_from_bytes(part).map_err(decode)?;
            let header = Header {
                template,
                ..Header::default()
            };
            (header, rest)
        }
        STRIP_VERSION => {
            let ((template, strips), rest) = postcard::take_from_bytes(part).map_err(decode)?;
            let header = Header {
                template,
                strips,
                splits: Vec::new(),
            };
            (header, rest)
        }
        SPLIT_VERSION => {
            let ((template, strips, regexes), rest): ((_, _, Vec<String>), _) =
                postcard::take_from_bytes(part).map_err(decode)?;
            let header = Header {
                template,
                strips,
                splits: regexes.into_iter().map(Split::isolated).collect(),
            };
            (header, rest)
        }
        SPLIT_RULE_VERSION => {
            let ((template, strips, rules), rest): ((_, _, Vec<(String, u8)>), _) =
                postcard::take_from_bytes(part).map_err(decode)?;
            let splits = rules
                .into_iter()
                .map(|(regex, bits)| {
                    let rule = SplitRule::from_bits(u32::from(bits)).ok_or_else(|| {
                        ModelError::BadSplit {
                            reason: format!("unknown split rule {bits:#04x} for {regex:?}"),
                        }
                    })?;
                    Ok(Split { regex, rule })
                })
                .collect::<Result<_, ModelError>>()?;
            let header = Header {
                template,
                strips,
                splits,
            };
            (header, rest)
        }
        _ => (Header::default(), part),
    };
    let present = !tables.is_empty() || version == TABLES_VERSION;
    Ok((
        header,
        KIND_VERSION,
        model,
        present.then_some((tables, base)),
    ))
}

/// Why a model other than byte-level BPE cannot hold `Split` regexes.
const SP_SPLITS: &str = "only a byte-level BPE model has compiled Split patterns";

/// `(id, bits)` of the specials that take whitespace (see [`crate::Model::strips`]).
type Strips = Vec<(u32, u8)>;

/// Give a model read from a file the strip bits its header holds, checked against its
/// specials (a SentencePiece model's user-defined symbols: checked by its validation).
fn set_strips(model: &mut AnyModel, strips: Strips) -> Result<(), ModelError> {
    if strips.is_empty() {
        return Ok(());
    }
    let (specials, slot) = match model {
        AnyModel::BytePair(m) => (&m.specials, &mut m.strips),
        AnyModel::WordPiece(m) => (&m.specials, &mut m.strips),
        AnyModel::SentencePiece(m) => {
            m.strips = strips;
            return m.validate().map_err(ModelError::InvalidSentencePiece);
        }
    };
    crate::tables::check_strips(&strips, specials)
        .map_err(|reason| ModelError::BadStrips { reason })?;
    *slot = strips;
    Ok(())
}

/// The bytes of a model file: the model with its prebuilt host tables (version 3; WordPiece,
/// whose tables are built at load: version 2), or with a non-empty `template` too (version 4).
fn file_bytes(model: PayloadRef<'_>, template: &TemplateData) -> Result<Vec<u8>, ModelError> {
    let strips: &[(u32, u8)] = match model {
        PayloadRef::WordPiece(m)
        | PayloadRef::WordPieceNormalized(m, ..)
        | PayloadRef::WordPieceSplit(m, ..) => &m.strips,
        PayloadRef::SentencePiece(m)
        | PayloadRef::Unigram(m, ..)
        | PayloadRef::SentencePieceMapped(m, ..)
        | PayloadRef::UnigramMapped(m, ..)
        | PayloadRef::SentencePieceSettings(m, ..) => &m.strips,
        _ => model.byte_pair_model().map_or(&[], |m| &m.strips),
    };
    let splits: &[Split] = model.byte_pair_model().map_or(&[], |m| &m.splits);
    let plain = template.is_empty() && strips.is_empty() && splits.is_empty();
    // Version 6 holds `Isolated` splits, version 7 any.
    let ruled = splits.iter().any(|s| s.rule != SplitRule::ISOLATED);
    // The model part's length (set below), the model part, then the tables.
    let mut payload = vec![0; 4];
    if ruled {
        let rules: Vec<(&str, u8)> = splits
            .iter()
            .map(|s| (s.regex.as_str(), s.rule.bits() as u8))
            .collect();
        let header = (template, strips, rules);
        payload.extend(postcard::to_stdvec(&header).map_err(ModelError::Encode)?);
    } else if !splits.is_empty() {
        let regexes: Vec<&str> = splits.iter().map(|s| s.regex.as_str()).collect();
        let header = (template, strips, regexes);
        payload.extend(postcard::to_stdvec(&header).map_err(ModelError::Encode)?);
    } else if !strips.is_empty() {
        let header = (template, strips);
        payload.extend(postcard::to_stdvec(&header).map_err(ModelError::Encode)?);
    } else if !plain {
        payload.extend(postcard::to_stdvec(template).map_err(ModelError::Encode)?);
    }
    payload.extend(postcard::to_stdvec(&model).map_err(ModelError::Encode)?);
    // A part over 4 GiB makes a payload over 4 GiB, which `frame` refuses.
    let part_len = (payload.len() - 4) as u32;
    payload[..4].copy_from_slice(&part_len.to_le_bytes());
    let n_ids = match model {
        PayloadRef::BytePair(m)
        | PayloadRef::BytePairNormalized(m, _)
        | PayloadRef::BytePairSettings(m, _)
        | PayloadRef::BytePairExtended(m, ..) => {
            let mut data = TableData::new(m, PieceTable::Full)?;
            table_file::write(&mut data, &mut payload, HEADER_LEN)?;
            m.n_ids()
        }
        PayloadRef::SentencePiece(m)
        | PayloadRef::Unigram(m, _)
        | PayloadRef::SentencePieceMapped(m, _)
        | PayloadRef::UnigramMapped(m, _, _)
        | PayloadRef::SentencePieceSettings(m, ..) => {
            let mut data = SpTableData::new(m)?;
            table_file::write(&mut data, &mut payload, HEADER_LEN)?;
            m.n_ids()
        }
        PayloadRef::WordPiece(m)
        | PayloadRef::WordPieceNormalized(m, ..)
        | PayloadRef::WordPieceSplit(m, ..)
            if plain =>
        {
            return m.to_bytes()
        }
        PayloadRef::WordPiece(m)
        | PayloadRef::WordPieceNormalized(m, ..)
        | PayloadRef::WordPieceSplit(m, ..) => {
            m.validate()?;
            m.n_ids()
        }
    };
    template.validate(n_ids)?;
    let version = if plain {
        TABLES_VERSION
    } else if ruled {
        SPLIT_RULE_VERSION
    } else if !splits.is_empty() {
        SPLIT_VERSION
    } else if strips.is_empty() {
        TEMPLATE_VERSION
    } else {
        STRIP_VERSION
    };
    frame(version, &payload)
}

/// A file's bytes: memory-mapped, or read when mapping is not possible (an empty file, a
/// pipe, a file system without mmap).
type FileBytes = Box<dyn AsRef<[u8]>>;

/// Map `path` read-only (falling back to reading it).
///
/// Mapping means the pages of a model file in the page cache become the tables without a copy
/// (o200k_base: 22 MB, about 15 ms to read and copy on a 2-core VM, nothing to map). Like every
/// memory-mapped reader, it assumes the file is not truncated or rewritten in place while the
/// process uses it; [`Model::write`] replaces files by renaming, which leaves a mapping of the
/// old file intact.
fn map_file(path: &Path) -> Result<FileBytes, ModelError> {
    let io = |source| ModelError::Io {
        path: path.to_owned(),
        source,
    };
    let file = fs::File::open(path).map_err(io)?;
    // SAFETY: the mapping is read-only and private to this process; see the doc comment for
    // the one assumption (no in-place truncation of the file while mapped).
    #[cfg(not(miri))]
    let mapped = unsafe { memmap2::Mmap::map(&file) };
    // Miri cannot map files: the file is read, as where mapping fails.
    #[cfg(miri)]
    let mapped: std::io::Result<memmap2::Mmap> = Err(std::io::ErrorKind::Unsupported.into());
    match mapped {
        Ok(map) => Ok(Box::new(map)),
        Err(_) => {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut &file, &mut bytes).map_err(io)?;
            Ok(Box::new(bytes))
        }
    }
}

/// Split a version-3 payload into its model part and its tables, with the tables' offset in
/// the file.
fn split_tables(payload: &[u8]) -> Result<(&[u8], &[u8], usize), ModelError> {
    let truncated = || ModelError::BadTables {
        reason: "the model part's length runs past the payload".to_owned(),
    };
    let len = payload.get(..4).ok_or_else(truncated)?;
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let rest = &payload[4..];
    if len > rest.len() {
        return Err(truncated());
    }
    let (model, tables) = rest.split_at(len);
    Ok((model, tables, HEADER_LEN + 4 + len))
}

/// Header + payload.
fn frame(version: u16, payload: &[u8]) -> Result<Vec<u8>, ModelError> {
    let len = u32::try_from(payload.len()).map_err(|_| ModelError::PayloadTooLarge {
        len: payload.len() as u64,
    })?;
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

/// Check the header (magic, version, length, checksum) and return the version and payload.
fn unframe(bytes: &[u8]) -> Result<(u16, &[u8]), ModelError> {
    let have = bytes.len() as u64;
    let magic_len = bytes.len().min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(ModelError::BadMagic);
    }
    let header = bytes.get(..HEADER_LEN).ok_or(ModelError::Truncated {
        needed: HEADER_LEN as u64,
        have,
    })?;
    let field = |at: usize| [header[at], header[at + 1], header[at + 2], header[at + 3]];
    let version = u16::from_le_bytes([header[8], header[9]]);
    if !(BPE_VERSION..=VERSION).contains(&version) {
        return Err(ModelError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        });
    }
    let len = u32::from_le_bytes(field(10)) as u64;
    let expected = u32::from_le_bytes(field(14));
    let needed = HEADER_LEN as u64 + len;
    if have < needed {
        return Err(ModelError::Truncated { needed, have });
    }
    if have > needed {
        return Err(ModelError::TrailingBytes {
            count: have - needed,
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let found = crc32fast::hash(payload);
    if found != expected {
        return Err(ModelError::ChecksumMismatch { expected, found });
    }
    Ok((version, payload))
}

/// Write `bytes` to a temporary file next to `path`, then rename it over `path`.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    write_atomically(path, bytes).map_err(|source| ModelError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Write `bytes` to `path` so that a reader never sees a partial file: into a temporary file
/// beside it (`.NAME.tmp-PID`), synced, then renamed over `path`; the temporary file is
/// removed if any step fails. Used for model files and the trainer's count files.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// `dir/.name.tmp-<pid>` next to `path`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// A WordPiece model with the normalizer of its stored codes (both 0: `BertNormalizer`'s
/// flags alone).
fn wordpiece_normalized(m: WpModel, code: u8, steps: u8) -> Result<WpModel, ModelError> {
    let normalizer =
        crate::normalizer::from_code(code).ok_or(ModelError::BadNormalizer { code })?;
    let char_steps = crate::normalizer::CharSteps::from_bits(steps).ok_or(
        ModelError::InvalidWordPiece(crate::wordpiece::InvalidWpModel::Normalizer),
    )?;
    Ok(WpModel {
        normalizer,
        char_steps,
        ..m
    })
}
