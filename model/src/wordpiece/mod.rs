//! WordPiece models (BERT family): [`WpModel`], its imports from `vocab.txt`
//! ([`import_vocab_txt`]) and `tokenizer.json` ([`import_tokenizer_json`]), and its tables
//! ([`WpTableData`]).

mod import;
mod tables;

use std::collections::HashMap;

use core::fmt;

use serde::{Deserialize, Serialize};

pub use import::{
    import_tokenizer_json, import_vocab_txt, VocabTxtOptions, WpImport, WpImportError,
};
pub use tables::{WpTableData, WpTableSizes};

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
}

/// Why a WordPiece model is not valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidWpModel {
    /// No vocabulary.
    Empty,
    /// A vocabulary entry is empty.
    EmptyEntry {
        /// Its id.
        id: u32,
    },
    /// Two entries are equal.
    Duplicate {
        /// The entry.
        entry: String,
    },
    /// The unknown token's id is not in the vocabulary.
    UnknownId {
        /// The id.
        id: u32,
    },
    /// `max_input_chars_per_word` is above what the encoder's word buffer holds.
    WordLimit {
        /// The model's limit.
        max: u32,
    },
    /// An added token is not the vocabulary entry of its id.
    Special {
        /// Its text.
        text: String,
        /// Its id.
        id: u32,
    },
    /// The vocabulary has more ids than the core supports.
    TooManyIds {
        /// Number of ids.
        n_ids: usize,
    },
}

impl fmt::Display for InvalidWpModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidWpModel::Empty => write!(f, "the vocabulary is empty"),
            InvalidWpModel::EmptyEntry { id } => write!(f, "vocabulary entry {id} is empty"),
            InvalidWpModel::Duplicate { entry } => {
                write!(f, "vocabulary entry {entry:?} appears twice")
            }
            InvalidWpModel::UnknownId { id } => {
                write!(f, "the unknown token's id {id} is not in the vocabulary")
            }
            InvalidWpModel::WordLimit { max } => write!(
                f,
                "max_input_chars_per_word {max} is above {}",
                picobpe::wordpiece::MAX_WORD_CHARS
            ),
            InvalidWpModel::Special { text, id } => {
                write!(f, "added token {text:?} is not vocabulary entry {id}")
            }
            InvalidWpModel::TooManyIds { n_ids } => write!(f, "{n_ids} ids is too many"),
        }
    }
}

impl std::error::Error for InvalidWpModel {}

impl WpModel {
    /// Number of ids.
    pub fn n_ids(&self) -> usize {
        self.vocab.len()
    }

    /// Check the invariants the tables rely on.
    pub fn validate(&self) -> Result<(), InvalidWpModel> {
        if self.vocab.is_empty() {
            return Err(InvalidWpModel::Empty);
        }
        if self.vocab.len() > picobpe::tables::MAX_IDS {
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
