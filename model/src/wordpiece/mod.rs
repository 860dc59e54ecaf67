//! WordPiece models (BERT family): [`WpModel`], its imports from `vocab.txt`
//! ([`import_vocab_txt`]) and `tokenizer.json` ([`import_tokenizer_json`]), its trainer
//! ([`WpTrainer`]), its exports to those formats, and its tables ([`WpTableData`]).

mod export;
pub(crate) mod import;
mod tables;
mod train;

use std::collections::HashMap;

pub use picobpe::wordpiece::{CharRule, Spaces, WordSplit};
use serde::{Deserialize, Serialize};

pub use export::ExportError;
pub use import::{
    import_tokenizer_json, import_vocab_txt, VocabTxtOptions, WpImport, WpImportError,
};
pub use tables::{WpTableData, WpTableSizes};
pub use train::{WordCounter, WpScore, WpTrainer};

/// A WordPiece model: the vocabulary in id order, the unknown token, the continuation prefix,
/// the word length limit, the BERT normalizer's flags and the added tokens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WpModel {
    /// Vocabulary entries by id (continuation pieces with the prefix).
    pub vocab: Vec<String>,
    /// The unknown token's id.
    pub unk_id: u32,
    /// The continuation prefix (`##`).
    pub prefix: String,
    /// `max_input_chars_per_word`.
    pub max_chars_per_word: u32,
    /// BertNormalizer `clean_text`.
    pub clean_text: bool,
    /// BertNormalizer `handle_chinese_chars`.
    pub handle_chinese_chars: bool,
    /// BertNormalizer `strip_accents` (resolved: `null` means the value of `lowercase`).
    pub strip_accents: bool,
    /// BertNormalizer `lowercase`.
    pub lowercase: bool,
    /// The decoder's `cleanup`.
    pub cleanup: bool,
    /// Added tokens (text, id), matched verbatim before normalization.
    pub specials: Vec<(String, u32)>,
    /// A `tokenizer.json`'s Unicode normalizer in place of `BertNormalizer` (then its flags
    /// are off), alone or before [`WpModel::char_steps`] (then `NFD` or `NFKD`). Stored after
    /// the model in the file's "WordPiece with a normalizer" kind, not as a field.
    #[serde(skip)]
    pub normalizer: Option<picobpe::normalizer::UnicodeForm>,
    /// A `tokenizer.json`'s character steps (`Lowercase`, `StripAccents`) in place of
    /// `BertNormalizer`. Stored as [`WpModel::normalizer`] is.
    #[serde(skip)]
    pub char_steps: crate::normalizer::CharSteps,
    /// The pre-tokenizer ([`picobpe::wordpiece::WordSplit::BERT`] unless a `tokenizer.json`
    /// names another). Stored after the model in the file's "WordPiece with a pre-tokenizer"
    /// kind, not as a field.
    #[serde(skip)]
    pub split: WordSplit,
    /// `(id, bits)` of the specials that take the whitespace beside them, as
    /// [`crate::Model::strips`] (and stored as it is).
    #[serde(skip)]
    pub strips: Vec<(u32, u8)>,
}

/// Why a WordPiece model is not valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidWpModel {
    /// The specials that take whitespace are not a valid list (see
    /// [`crate::InvalidModel::BadStrips`]).
    #[error("specials that take whitespace: {reason}")]
    BadStrips {
        /// What is wrong.
        reason: String,
    },
    /// No vocabulary.
    #[error("the vocabulary is empty")]
    Empty,
    /// A vocabulary entry is empty.
    #[error("vocabulary entry {id} is empty")]
    EmptyEntry {
        /// Its id.
        id: u32,
    },
    /// Two entries are equal.
    #[error("vocabulary entry {entry:?} appears twice")]
    Duplicate {
        /// The entry.
        entry: String,
    },
    /// The unknown token's id is not in the vocabulary.
    #[error("the unknown token's id {id} is not in the vocabulary")]
    UnknownId {
        /// The id.
        id: u32,
    },
    /// `max_input_chars_per_word` is above what the encoder's word buffer holds.
    #[error(
        "max_input_chars_per_word {max} is above {}",
        picobpe::wordpiece::MAX_WORD_CHARS
    )]
    WordLimit {
        /// The model's limit.
        max: u32,
    },
    /// An added token is not the vocabulary entry of its id.
    #[error("added token {text:?} is not vocabulary entry {id}")]
    Special {
        /// Its text.
        text: String,
        /// Its id.
        id: u32,
    },
    /// The vocabulary has more ids than the core supports.
    #[error("{n_ids} ids is too many")]
    TooManyIds {
        /// Number of ids.
        n_ids: usize,
    },
    /// A normalizer beside `BertNormalizer`'s flags, or character steps this core cannot
    /// apply (after `NFC` or `NFKC`, a decomposition without `StripAccents`, quote pairs).
    #[error(
        "a Unicode normalizer or normalizer steps beside BertNormalizer flags, or steps after \
         a form they cannot follow"
    )]
    Normalizer,
    /// A trained model's unknown token is not among its special tokens.
    #[error("the unknown token {token:?} is not among the special tokens")]
    NoUnknown {
        /// The unknown token.
        token: String,
    },
}

impl WpModel {
    /// A model with BERT's settings (not yet validated): `BertNormalizer` with `clean_text`
    /// and `handle_chinese_chars` on and `lowercase` and `strip_accents` as given, words of
    /// at most 100 characters, the decoder's clean-up, no other normalizer.
    pub fn bert(
        vocab: Vec<String>,
        unk_id: u32,
        prefix: String,
        lowercase: bool,
        strip_accents: bool,
        specials: Vec<(String, u32)>,
    ) -> WpModel {
        WpModel {
            vocab,
            unk_id,
            prefix,
            max_chars_per_word: 100,
            clean_text: true,
            handle_chinese_chars: true,
            strip_accents,
            lowercase,
            cleanup: true,
            specials,
            normalizer: None,
            char_steps: Default::default(),
            split: WordSplit::BERT,
            strips: Vec::new(),
        }
    }

    /// Number of ids.
    pub fn n_ids(&self) -> usize {
        self.vocab.len()
    }

    /// The id of a vocabulary entry.
    pub fn id_of(&self, entry: &str) -> Option<u32> {
        self.vocab.iter().position(|v| v == entry).map(|i| i as u32)
    }

    /// Check the invariants the tables rely on.
    pub fn validate(&self) -> Result<(), InvalidWpModel> {
        if self.vocab.is_empty() {
            return Err(InvalidWpModel::Empty);
        }
        if self.vocab.len() > picobpe::MAX_IDS {
            return Err(InvalidWpModel::TooManyIds {
                n_ids: self.vocab.len(),
            });
        }
        let mut seen = HashMap::with_capacity(self.vocab.len());
        for (id, entry) in self.vocab.iter().enumerate() {
            if entry.is_empty() {
                return Err(InvalidWpModel::EmptyEntry { id: id as u32 });
            }
            if seen.insert(entry.as_str(), id).is_some() {
                return Err(InvalidWpModel::Duplicate {
                    entry: entry.clone(),
                });
            }
        }
        if self.unk_id as usize >= self.vocab.len() {
            return Err(InvalidWpModel::UnknownId { id: self.unk_id });
        }
        if self.max_chars_per_word as usize > picobpe::wordpiece::MAX_WORD_CHARS {
            return Err(InvalidWpModel::WordLimit {
                max: self.max_chars_per_word,
            });
        }
        let bert =
            self.clean_text || self.handle_chinese_chars || self.strip_accents || self.lowercase;
        let steps = self.char_steps.any() || self.normalizer.is_some();
        let applies = crate::normalizer::wordpiece_normalizer(self.normalizer, self.char_steps);
        if steps && (bert || applies.is_none() || self.char_steps.quotes) {
            return Err(InvalidWpModel::Normalizer);
        }
        crate::tables::check_strips(&self.strips, &self.specials)
            .map_err(|reason| InvalidWpModel::BadStrips { reason })?;
        for (text, id) in &self.specials {
            if self.vocab.get(*id as usize) != Some(text) {
                return Err(InvalidWpModel::Special {
                    text: text.clone(),
                    id: *id,
                });
            }
        }
        Ok(())
    }
}

/// The model file's byte for a pre-tokenizer (see `format.rs`): bits 0-1 whitespace (kept,
/// split, `Whitespace`'s words), bits 2-3 punctuation and bits 4-5 digits (off, isolated,
/// contiguous, removed).
pub fn split_code(split: WordSplit) -> u8 {
    let (spaces, punctuation, digits) = split.parts();
    let rule = |r: CharRule| match r {
        CharRule::Off => 0,
        CharRule::Isolated => 1,
        CharRule::Contiguous => 2,
        CharRule::Removed => 3,
    };
    let spaces = match spaces {
        Spaces::Kept => 0,
        Spaces::Split => 1,
        Spaces::Words => 2,
    };
    spaces | rule(punctuation) << 2 | rule(digits) << 4
}

/// The pre-tokenizer of a [`split_code`]; `None` for a code no pre-tokenizer has (whitespace
/// 3, digits removed, bits above 5).
pub fn split_from_code(code: u8) -> Option<WordSplit> {
    let rule = |bits: u8| match bits & 3 {
        0 => CharRule::Off,
        1 => CharRule::Isolated,
        2 => CharRule::Contiguous,
        _ => CharRule::Removed,
    };
    let spaces = match code & 3 {
        0 => Spaces::Kept,
        1 => Spaces::Split,
        2 => Spaces::Words,
        _ => return None,
    };
    // `Digits` has no `Removed` form.
    let digits = (code >> 4 != 3).then(|| rule(code >> 4));
    digits
        .filter(|_| code >> 6 == 0)
        .map(|digits| WordSplit::new(spaces, rule(code >> 2), digits))
}
