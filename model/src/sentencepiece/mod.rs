//! SentencePiece BPE models (Llama 2, TinyLlama, llama2.c): the [`SpModel`] stored in a
//! version-2 model file, its invariants, its importers ([`import_model_proto`] for a
//! `tokenizer.model`, [`import_tokenizer_json`] for a Hugging Face `tokenizer.json`) and its
//! tables ([`SpTableData`]).

pub mod charsmap;
mod export_json;
mod import_json;
mod import_proto;
mod proto;
mod tables;
pub mod train;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use picobpe::sentencepiece::{MAX_PIECE_BYTES, REPLACEMENT};

pub use export_json::SpExportError;
pub use import_json::import_tokenizer_json;
pub(crate) use import_json::{char_chain, normalizer_step};
pub use import_proto::import_model_proto;
pub use import_proto::SpImportError;
pub use tables::{SpTableData, SpTableSizes};
pub use train::{SpModelType, SpNormalization, SpProgress, SpTrainError, SpTrained, SpTrainer};

/// What a piece is: the core's kind, stored as is (the model file's variant order is the
/// core's declaration order).
pub use picobpe::sentencepiece::PieceKind as SpKind;
/// Where user-defined symbols are matched and where the dummy prefix goes: the core's value.
pub use picobpe::sentencepiece::Sections as SpSections;

/// One piece of a SentencePiece model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpPiece {
    /// The piece's text (`▁` for a space).
    pub piece: String,
    /// Its score: higher merges first. `None`: two symbols never merge into it (pieces of a
    /// `tokenizer.json` that no merge produces).
    pub score: Option<f32>,
    /// Its kind.
    pub kind: SpKind,
}

/// A SentencePiece BPE model: pieces in id order and the normalizer's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpModel {
    /// The pieces; the index is the id.
    pub pieces: Vec<SpPiece>,
    /// A `▁` goes before the text.
    pub add_dummy_prefix: bool,
    /// Leading and trailing spaces are dropped and runs of spaces become one.
    pub remove_extra_whitespaces: bool,
    /// Unknown symbols become byte pieces (else `<unk>`).
    pub byte_fallback: bool,
    /// What `<unk>` decodes to (` ⁇ ` by default).
    pub unk_surface: String,
    /// Where user-defined symbols are matched: [`SpSections::Inline`] for a
    /// `tokenizer.model`, one of the others for a `tokenizer.json`.
    pub sections: SpSections,
    /// A Unigram model (segmented by Viterbi over the scores) rather than BPE. Stored as the
    /// model kind in the file, not as a field.
    #[serde(skip)]
    pub unigram: bool,
    /// A Unigram `tokenizer.json`'s scores as `tokenizers` reads them (`f64`, not always `f32`
    /// values), one per piece; empty otherwise (the pieces' `f32` scores are the scores).
    /// Stored after the model in the file's Unigram kind, not as a field (so BPE models keep
    /// their layout).
    #[serde(skip)]
    pub f64_scores: Vec<f64>,
    /// The normalizer's character map (`precompiled_charsmap`, as `sentencepiece` stores it:
    /// see [`charsmap`]); empty for the `identity` rule. Stored after the model in the file's
    /// "with a character map" kinds, not as a field.
    #[serde(skip)]
    pub charsmap: Vec<u8>,
    /// The unknown piece is also matched whole in the text, as a user-defined symbol is: a
    /// `tokenizer.json` whose added tokens hold it (`tokenizers` then gives its id for the
    /// text `<unk>`). Stored in the file's "`tokenizer.json` settings" kind (see
    /// [`crate::format`]), not as a field.
    #[serde(skip)]
    pub unk_in_text: bool,
    /// BPE: each unknown character is an `<unk>` of its own (a `tokenizer.json` BPE with
    /// `fuse_unk: false`, the default there); false: a run of them is one. Stored as
    /// [`SpModel::unk_in_text`] is.
    #[serde(skip)]
    pub unk_per_char: bool,
    /// A `tokenizer.json`'s Unicode normalizer (`NFKC` and the like), applied before the
    /// text is split into words; only with sections that segment words apart. Stored as
    /// [`SpModel::unk_in_text`] is.
    #[serde(skip)]
    pub normalizer: Option<picobpe::normalizer::UnicodeForm>,
    /// The character map is a `tokenizer.json`'s `Precompiled` normalizer: applied by
    /// `tokenizers`' rule (a grapheme cluster at a time, see `picobpe::normalizer`) before
    /// the text is split into words, not by `sentencepiece`'s; only with sections that
    /// segment words apart. Stored as [`SpModel::unk_in_text`] is.
    #[serde(skip)]
    pub precompiled: bool,
    /// With sections: runs of spaces become one, nothing is stripped (a `tokenizer.json`
    /// normalizer that ends with `Replace(Regex(" {2,}"), " ")`, as `tokenizers`'
    /// `SentencePieceUnigramTokenizer`'s does); never with
    /// [`SpModel::remove_extra_whitespaces`]. Stored as [`SpModel::unk_in_text`] is.
    #[serde(skip)]
    pub collapse_spaces: bool,
    /// With sections that segment words apart: each text between user-defined symbols loses
    /// its leading and trailing whitespace before the normalizer (`Strip(left, right)` first
    /// in a `tokenizer.json` normalizer: `transformers`' DeBERTa-v2/v3 conversion). Stored as
    /// [`SpModel::unk_in_text`] is.
    #[serde(skip)]
    pub strip_sections: bool,
    /// `(id, bits)` of the user-defined symbols that take the whitespace beside them
    /// ([`picobpe::special::LSTRIP`], [`picobpe::special::RSTRIP`]: a `tokenizer.json`'s
    /// added tokens with `lstrip` or `rstrip`, as XLM-RoBERTa's `<mask>`), sorted by id; only
    /// with sections. Stored in the model file's header, as [`crate::Model::strips`] is.
    #[serde(skip)]
    pub strips: Vec<(u32, u8)>,
    /// A `tokenizer.json`'s character steps (ALBERT's and XLNet's quote pairs,
    /// `StripAccents`, `Lowercase`), applied with [`SpModel::normalizer`] before them (then
    /// `NFD` or `NFKD`) and the character map after them when [`SpModel::precompiled`]; only
    /// with sections that segment words apart. Stored as [`SpModel::unk_in_text`] is.
    #[serde(skip)]
    pub char_steps: crate::normalizer::CharSteps,
    /// With [`SpSections::WhitespaceWords`]: a `tokenizer.json`'s pre-tokenizer steps before
    /// its `Metaspace` (`Whitespace`, `Punctuation`, `Digits`, with or without
    /// `WhitespaceSplit`) when they are not `WhitespaceSplit` alone; `None` for that. Stored as
    /// [`SpModel::unk_in_text`] is.
    #[serde(skip)]
    pub pre_split: Option<picobpe::wordpiece::WordSplit>,
    /// Ids decode as `tokenizers` decodes a `tokenizer.json` with no decoder: each piece as it
    /// is, a space between two (always with [`SpSections::PreTokens`]). Stored as
    /// [`SpModel::unk_in_text`] is.
    #[serde(skip)]
    pub joins_pieces: bool,
}

impl SpModel {
    /// True when `piece` is matched whole in the text (a user-defined symbol, or the unknown
    /// piece of a `tokenizer.json` that lists it among its added tokens).
    pub(crate) fn matched_in_text(&self, piece: &SpPiece) -> bool {
        piece.kind == SpKind::UserDefined || piece.kind == SpKind::Unknown && self.unk_in_text
    }

    /// The byte of `tokenizer.json` settings the model file stores (0 for none): bit 0
    /// [`SpModel::unk_in_text`], bit 1 [`SpModel::unk_per_char`], bits 2-4 the
    /// [`SpModel::normalizer`]'s code ([`crate::normalizer::code`]), bit 5
    /// [`SpModel::precompiled`], bit 6 [`SpModel::collapse_spaces`], bits 7-10
    /// [`SpModel::char_steps`] ([`crate::normalizer::CharSteps::bits`]), bit 11
    /// [`SpModel::strip_sections`], bit 12 [`SpModel::pre_split`] set, bits 13-18 its
    /// [`crate::wordpiece::split_code`], bit 19 [`SpModel::joins_pieces`]. A `u32` stored as a postcard varint: files written
    /// before bit 7 (a `u8`) or bit 12 (a `u16`) existed read the same.
    pub(crate) fn settings(&self) -> u32 {
        let pre_split = self
            .pre_split
            .map_or(0, |s| 1 | u32::from(crate::wordpiece::split_code(s)) << 1);
        u32::from(self.unk_in_text)
            | u32::from(self.unk_per_char) << 1
            | u32::from(crate::normalizer::code(self.normalizer)) << 2
            | u32::from(self.precompiled) << 5
            | u32::from(self.collapse_spaces) << 6
            | u32::from(self.char_steps.bits()) << 7
            | u32::from(self.strip_sections) << 11
            | pre_split << 12
            | u32::from(self.joins_pieces) << 19
    }

    /// Set the settings [`SpModel::settings`] stores; `false` for unknown bits.
    pub(crate) fn set_settings(&mut self, bits: u32) -> bool {
        self.unk_in_text = bits & 1 != 0;
        self.unk_per_char = bits & 2 != 0;
        self.precompiled = bits & 32 != 0;
        self.collapse_spaces = bits & 64 != 0;
        self.strip_sections = bits & 1 << 11 != 0;
        match crate::normalizer::from_code((bits >> 2 & 7) as u8) {
            Some(n) => self.normalizer = n,
            None => return false,
        }
        match crate::normalizer::CharSteps::from_bits((bits >> 7 & 0xF) as u8) {
            Some(steps) => self.char_steps = steps,
            None => return false,
        }
        self.pre_split = None;
        if bits & 1 << 12 != 0 {
            match crate::wordpiece::split_from_code((bits >> 13 & 0x3F) as u8) {
                Some(split) => self.pre_split = Some(split),
                None => return false,
            }
        }
        self.joins_pieces = bits & 1 << 19 != 0;
        bits < 1 << 20
    }
}

/// A broken SentencePiece model invariant, naming the offending id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidSpModel {
    /// No pieces, or more than the core's id limit.
    #[error("{n} pieces (a model has 1 to {} pieces)", picobpe::MAX_IDS)]
    IdCount {
        /// Number of pieces.
        n: usize,
    },
    /// A piece with empty text.
    #[error("piece {id} is empty")]
    EmptyPiece {
        /// The id.
        id: u32,
    },
    /// Two pieces with the same text.
    #[error("pieces {first} and {second} have the same text")]
    DuplicatePiece {
        /// The first id.
        first: u32,
        /// The second id.
        second: u32,
    },
    /// Not exactly one unknown piece.
    #[error("{found} unknown pieces (a model has exactly one)")]
    UnknownCount {
        /// How many there are.
        found: usize,
    },
    /// A score is NaN.
    #[error("piece {id} has a NaN score")]
    NanScore {
        /// The id.
        id: u32,
    },
    /// A byte piece whose text is not `<0xHH>` (two upper-case hex digits), or a second piece
    /// for the same byte.
    #[error("byte piece {id} is not <0xHH> with two upper-case hex digits, or repeats a byte")]
    BadBytePiece {
        /// The id.
        id: u32,
    },
    /// Byte fallback is on but a byte has no piece.
    #[error("byte fallback is on but byte {byte:#04X} has no <0x..> piece")]
    MissingBytePiece {
        /// The byte.
        byte: u8,
    },
    /// A user-defined symbol holds a space, `▁` or U+FFFD (not supported).
    #[error("user-defined symbol {id} holds a space, '▁' or U+FFFD (not supported)")]
    UserSymbolText {
        /// The id.
        id: u32,
    },
    /// A Unigram model without a normal piece (its unknown score is the lowest normal score
    /// minus 10), or with a normal piece without a score; or `f64` scores that are not one
    /// per piece of a Unigram `tokenizer.json` import, or are NaN.
    #[error("a Unigram model needs at least one normal piece, and a score on every normal piece")]
    UnigramScores,
    /// A piece that merging or matching may produce is longer than the core's limit.
    #[error(
        "piece {id} is {len} bytes long; merged and user-defined pieces may be at most {}",
        MAX_PIECE_BYTES
    )]
    PieceTooLong {
        /// The id.
        id: u32,
        /// Its length in bytes.
        len: usize,
    },
    /// The normalizer's character map is damaged or beyond the core's limits.
    #[error(transparent)]
    CharsMap(#[from] charsmap::InvalidCharsMap),
    /// A character map on a model whose sections follow `tokenizers` (a `tokenizer.json`
    /// import) that does not say it applies it by `Precompiled`'s rule.
    #[error(
        "a character map on a tokenizer.json import must be its Precompiled normalizer \
         (applied by tokenizers' rule)"
    )]
    CharsMapSections,
    /// `tokenizer.json` settings on a model that does not follow `tokenizers` (inline
    /// sections), unknown characters one by one on a Unigram model (`tokenizers` always
    /// makes a run one `<unk>` there), a Unicode normalizer on sections whose words are not
    /// segmented apart or with the whitespace rule (not supported yet), `Precompiled`
    /// without a character map, with a Unicode normalizer but no character steps, or on words
    /// not segmented apart, or character steps on such words or after a Unicode form other
    /// than `NFD` or `NFKD` with `StripAccents`.
    #[error(
        "tokenizer.json settings (unk_in_text, unk_per_char, normalizer steps) on a model they do not fit"
    )]
    MisplacedSettings,
    /// The strips ([`SpModel::strips`]) break the rule every family's strips follow
    /// (`crate::tables::check_strips`: ids of symbols matched in the text, increasing, bits
    /// `lstrip`/`rstrip`, and with an `rstrip` no symbol that starts with whitespace).
    #[error("user-defined symbols that take whitespace: {0}")]
    BadStrips(String),
}

/// The byte a `<0xHH>` piece text stands for.
pub fn byte_piece_value(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
    {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

impl SpModel {
    /// Number of ids.
    pub fn n_ids(&self) -> usize {
        self.pieces.len()
    }

    /// The id of the unknown piece (a valid model has one).
    pub fn unk_id(&self) -> u32 {
        self.pieces
            .iter()
            .position(|p| p.kind == SpKind::Unknown)
            .unwrap_or(0) as u32
    }

    /// True for a Unigram model imported from a `tokenizer.json`, segmented with Hugging Face
    /// `tokenizers`' arithmetic (`f64`, no score reset, every piece matchable).
    pub fn unigram_tokenizers(&self) -> bool {
        self.unigram && self.sections != SpSections::Inline
    }

    /// The core's algorithm and Unigram parameters for this model.
    pub fn algorithm(&self) -> picobpe::sentencepiece::SpAlgorithm {
        use picobpe::sentencepiece::SpAlgorithm;
        match self.unk_score() {
            Some(unk_score) if self.unigram => SpAlgorithm::Unigram {
                unk_score,
                max_piece_bytes: (0..self.pieces.len())
                    .filter(|&id| self.unigram_score(id).is_some())
                    .map(|id| self.pieces[id].piece.len() as u32)
                    .max()
                    .unwrap_or(0),
                tokenizers: self.unigram_tokenizers(),
            },
            _ => SpAlgorithm::Bpe,
        }
    }

    /// A Unigram model's score of an unknown character: the lowest score minus 10. As
    /// `sentencepiece` computes it: over normal pieces, in `f32`; as `tokenizers` does: over
    /// every piece, in `f64`. `None` without such a score.
    pub fn unk_score(&self) -> Option<f64> {
        if self.unigram_tokenizers() {
            return (0..self.pieces.len())
                .filter_map(|id| self.unigram_score64(id))
                .reduce(f64::min)
                .map(|min| min - 10.0);
        }
        self.pieces
            .iter()
            .filter(|p| p.kind == SpKind::Normal)
            .filter_map(|p| p.score)
            .reduce(f32::min)
            .map(|min| f64::from(min - 10.0))
    }

    /// [`SpModel::unigram_score`] at full precision: the `f64` score of a `tokenizer.json`
    /// import.
    pub fn unigram_score64(&self, id: usize) -> Option<f64> {
        match self.f64_scores.get(id) {
            Some(&s) if self.unigram_tokenizers() => Some(s),
            _ => self.unigram_score(id).map(f64::from),
        }
    }

    /// The score a Unigram lattice gives `id`'s piece when it matches, `None` when it never
    /// matches text. `sentencepiece`: a normal piece's own score, `0.1 × (bytes − 1)` for a
    /// user-defined one (so that they win over normal pieces, whose scores are negative);
    /// `tokenizers`: every piece's own score.
    pub fn unigram_score(&self, id: usize) -> Option<f32> {
        let p = self.pieces.get(id)?;
        if self.unigram_tokenizers() {
            return p.score;
        }
        match p.kind {
            SpKind::Normal => p.score,
            SpKind::UserDefined => Some((0.1 * (p.piece.len() as f64 - 1.0)) as f32),
            _ => None,
        }
    }

    /// Check every invariant; the error names the first offending id.
    pub fn validate(&self) -> Result<(), InvalidSpModel> {
        self.validate_with_map().map(|_| ())
    }

    /// [`SpModel::validate`], returning the character map it checked (empty parts for the
    /// identity rule), so that laying out the tables does not walk it a second time.
    pub(crate) fn validate_with_map(&self) -> Result<charsmap::CharsMapParts, InvalidSpModel> {
        let n = self.pieces.len();
        if n == 0 || n > picobpe::MAX_IDS {
            return Err(InvalidSpModel::IdCount { n });
        }
        let mut seen: HashMap<&str, u32> = HashMap::with_capacity(n);
        let mut unknowns = 0;
        let mut bytes = [false; 256];
        let mark = '\u{2581}';
        let replacement = std::str::from_utf8(&REPLACEMENT).unwrap_or("\u{FFFD}");
        for (id, p) in self.pieces.iter().enumerate() {
            let id = id as u32;
            if p.piece.is_empty() {
                return Err(InvalidSpModel::EmptyPiece { id });
            }
            if let Some(&first) = seen.get(p.piece.as_str()) {
                return Err(InvalidSpModel::DuplicatePiece { first, second: id });
            }
            seen.insert(&p.piece, id);
            if p.score.is_some_and(f32::is_nan) {
                return Err(InvalidSpModel::NanScore { id });
            }
            match p.kind {
                SpKind::Unknown => unknowns += 1,
                SpKind::Byte => match byte_piece_value(&p.piece) {
                    Some(b) if !bytes[b as usize] => bytes[b as usize] = true,
                    _ => return Err(InvalidSpModel::BadBytePiece { id }),
                },
                SpKind::UserDefined => {
                    if p.piece.contains([' ', mark]) || p.piece.contains(replacement) {
                        return Err(InvalidSpModel::UserSymbolText { id });
                    }
                }
                SpKind::Normal | SpKind::Control => {}
            }
            let mergeable = matches!(p.kind, SpKind::Normal | SpKind::UserDefined);
            if mergeable && p.piece.len() > MAX_PIECE_BYTES {
                return Err(InvalidSpModel::PieceTooLong {
                    id,
                    len: p.piece.len(),
                });
            }
        }
        if self.unigram
            && (self.unk_score().is_none()
                || self.pieces.iter().any(|p| {
                    p.score.is_none() && (p.kind == SpKind::Normal || self.unigram_tokenizers())
                }))
        {
            return Err(InvalidSpModel::UnigramScores);
        }
        let f64_ok = self.f64_scores.is_empty()
            || (self.unigram_tokenizers()
                && self.f64_scores.len() == n
                && self.f64_scores.iter().all(|s| !s.is_nan()));
        if !f64_ok {
            return Err(InvalidSpModel::UnigramScores);
        }
        if unknowns != 1 {
            return Err(InvalidSpModel::UnknownCount { found: unknowns });
        }
        if !self.charsmap.is_empty() && self.sections != SpSections::Inline && !self.precompiled {
            return Err(InvalidSpModel::CharsMapSections);
        }
        if self.settings() != 0 && self.sections == SpSections::Inline
            || self.unk_per_char && self.unigram
            || self.collapse_spaces && self.remove_extra_whitespaces
            || self.strip_sections && !self.sections.splits_words()
            || self.sections == SpSections::PreTokens
                && (self.add_dummy_prefix
                    || !self.joins_pieces
                    || self
                        .pre_split
                        .is_none_or(|s| s.parts().0 == picobpe::wordpiece::Spaces::Kept))
            || self.pre_split.is_some()
                && (!matches!(
                    self.sections,
                    SpSections::WhitespaceWords | SpSections::PreTokens
                ) || self.collapse_spaces
                    || self.strip_sections
                    || self.remove_extra_whitespaces)
            || !self.strips.is_empty() && self.sections == SpSections::Inline
            || self.normalizer.is_some()
                && (!self.sections.splits_words() || self.remove_extra_whitespaces)
            || self.precompiled
                && (!self.sections.splits_words()
                    || self.normalizer.is_some() && !self.char_steps.any()
                    || self.charsmap.is_empty())
            || self.char_steps.any()
                && (!self.sections.splits_words()
                    || self.remove_extra_whitespaces
                    || self
                        .char_steps
                        .normalizer(self.normalizer, self.precompiled)
                        .is_none())
        {
            return Err(InvalidSpModel::MisplacedSettings);
        }
        if !self.strips.is_empty() {
            // The symbols matched in the text, as the shared check reads specials.
            let symbols: Vec<(String, u32)> = (self.pieces.iter().enumerate())
                .filter(|(_, p)| self.matched_in_text(p))
                .map(|(id, p)| (p.piece.clone(), id as u32))
                .collect();
            crate::tables::check_strips(&self.strips, &symbols)
                .map_err(InvalidSpModel::BadStrips)?;
        }
        let map = charsmap::parse(&self.charsmap)?;
        if self.byte_fallback {
            if let Some(byte) = (0..=255u8).find(|&b| !bytes[b as usize]) {
                return Err(InvalidSpModel::MissingBytePiece { byte });
            }
        }
        Ok(map)
    }

    /// The ASCII bytes no normal or user-defined piece of two or more bytes contains, as a
    /// bit set (see [`picobpe::SpTables::cut_bytes`]).
    pub fn cut_bytes(&self) -> [u64; 2] {
        let mut seen = [0u64; 2];
        for p in &self.pieces {
            if matches!(p.kind, SpKind::Normal | SpKind::UserDefined) && p.piece.len() >= 2 {
                for &b in p.piece.as_bytes() {
                    if b < 0x80 {
                        seen[usize::from(b / 64)] |= 1 << (b % 64);
                    }
                }
            }
        }
        [!seen[0], !seen[1]]
    }

    /// True when no normal or user-defined piece (with `tokenizers`' Unigram, no piece) has a
    /// character other than `▁` followed by `▁`: then no merge or match crosses the start of a
    /// word (see [`picobpe::SpTables::split_words`]).
    pub fn splits_words(&self) -> bool {
        let all = self.unigram_tokenizers();
        self.pieces.iter().all(|p| {
            !(all || matches!(p.kind, SpKind::Normal | SpKind::UserDefined)) || {
                let mut prev_other = false;
                p.piece.chars().all(|c| {
                    let ok = !(prev_other && c == '\u{2581}');
                    prev_other = c != '\u{2581}';
                    ok
                })
            }
        })
    }
}
