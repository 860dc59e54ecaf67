//! Importers: tiktoken rank files ([`tiktoken`]), HF GPT-2 style `vocab.json` +
//! `merges.txt` ([`hf`]) and byte-level BPE `tokenizer.json` files ([`tokenizer_json`], given
//! a parsed [`crate::TokenizerJson`]). All return a validated [`crate::Model`].

mod hf_import;
mod hf_json;
mod tiktoken_import;

use core::fmt;

use crate::error::InvalidModel;

pub use hf_import::hf;
pub use hf_json::{tokenizer_json, HfJsonImport, HfJsonOptions};
pub use tiktoken_import::tiktoken;

/// Why an import failed. Line numbers are 1-based.
#[derive(Debug)]
pub enum ImportError {
    /// A rank-file line is not `<base64> <rank>`.
    BadRankLine {
        /// Line number.
        line: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two rank-file lines give the same rank.
    DuplicateRank {
        /// Line number of the second occurrence.
        line: usize,
        /// The rank.
        rank: u32,
    },
    /// A special token's id is already an ordinary token's rank (or another special's id).
    SpecialIdTaken {
        /// The special's text.
        text: String,
        /// The id.
        id: u32,
    },
    /// The largest id is far beyond the number of tokens (a mostly empty id space).
    SparseIds {
        /// Largest id + 1.
        n_ids: usize,
        /// Tokens and specials actually given.
        used: usize,
    },
    /// `vocab.json` is not valid JSON of the expected shape.
    Json(serde_json::Error),
    /// A `vocab.json` key is not made of GPT-2 byte-level characters (and is not a special).
    VocabKey {
        /// The key.
        key: String,
    },
    /// Two `vocab.json` keys have the same id.
    DuplicateVocabId {
        /// The id.
        id: u32,
    },
    /// A `merges.txt` line is not two space-separated tokens, or names an unknown token.
    BadMergeLine {
        /// Line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A requested special token is not in `vocab.json`.
    UnknownSpecial {
        /// The special's text.
        text: String,
    },
    /// A part of a `tokenizer.json` that picobpe does not reproduce, or that is malformed.
    TokenizerJson {
        /// Where: `model`, `normalizer`, `pre_tokenizer`, ...
        at: &'static str,
        /// What is there and why it is refused.
        what: String,
    },
    /// The imported model breaks an invariant.
    Invalid(InvalidModel),
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::BadRankLine { line, reason } => {
                write!(f, "rank file line {line}: {reason}")
            }
            ImportError::DuplicateRank { line, rank } => {
                write!(f, "rank file line {line}: rank {rank} appears twice")
            }
            ImportError::SpecialIdTaken { text, id } => {
                write!(f, "special token {text:?}: id {id} is already taken")
            }
            ImportError::SparseIds { n_ids, used } => write!(
                f,
                "ids reach {} but only {used} tokens are given; refusing a mostly empty id space",
                n_ids - 1
            ),
            ImportError::Json(err) => write!(f, "JSON: {err}"),
            ImportError::VocabKey { key } => write!(
                f,
                "vocabulary: key {key:?} is not GPT-2 byte-level text and not a special token"
            ),
            ImportError::DuplicateVocabId { id } => {
                write!(f, "vocabulary: id {id} appears twice")
            }
            ImportError::BadMergeLine { line, reason } => {
                write!(f, "merges.txt line {line}: {reason}")
            }
            ImportError::UnknownSpecial { text } => {
                write!(f, "special token {text:?} is not in vocab.json")
            }
            ImportError::TokenizerJson { at, what } => write!(f, "tokenizer.json {at}: {what}"),
            ImportError::Invalid(err) => write!(f, "imported model is invalid: {err}"),
        }
    }
}

impl std::error::Error for ImportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ImportError::Json(err) => Some(err),
            ImportError::Invalid(err) => Some(err),
            _ => None,
        }
    }
}

impl From<InvalidModel> for ImportError {
    fn from(err: InvalidModel) -> Self {
        ImportError::Invalid(err)
    }
}
