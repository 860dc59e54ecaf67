//! Importers: tiktoken rank files ([`tiktoken`]), Mistral's `tekken.json` ([`tekken`]), HF GPT-2 style `vocab.json` +
//! `merges.txt` ([`hf`]) and byte-level BPE `tokenizer.json` files ([`tokenizer_json`], given
//! a parsed [`crate::TokenizerJson`]). All return a validated [`crate::Model`]; [`with_regex`]
//! gives a rank file or `vocab.json` model any other pre-tokenization regex.

mod hf_import;
mod hf_json;
mod tekken_import;
mod tiktoken_import;

use crate::error::InvalidModel;
use crate::model::Model;
use crate::pattern::PatternKind;
use crate::tokenizer_json::Refused;

pub use hf_import::hf;
pub use hf_json::{tokenizer_json, HfJsonImport};
pub use tekken_import::{tekken, TekkenImport};
pub use tiktoken_import::tiktoken;

/// `model` split by `regex` (a tiktoken-style `pat_str`, as `fancy-regex` reads it) instead of
/// its pattern. A regex that is one of the hand-rolled patterns', character for character,
/// takes that splitter ([`PatternKind::from_regex`]); any other is compiled
/// ([`crate::compile_pattern`]) and becomes the model's one split
/// ([`Model::splits`](crate::Model::splits)).
pub fn with_regex(mut model: Model, regex: &str) -> Result<Model, ImportError> {
    if let Some(kind) = PatternKind::from_regex(regex) {
        model.pattern = kind;
        model.splits.clear();
        return Ok(model);
    }
    crate::compile_pattern(regex).map_err(|e| ImportError::Pattern {
        regex: regex.to_owned(),
        reason: e.to_string(),
    })?;
    model.splits = vec![crate::Split::isolated(regex)];
    model.validate()?;
    Ok(model)
}

/// Why an import failed. Line numbers are 1-based.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A rank-file line is not `<base64> <rank>`.
    #[error("rank file line {line}: {reason}")]
    BadRankLine {
        /// Line number.
        line: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two rank-file lines give the same rank.
    #[error("rank file line {line}: rank {rank} appears twice")]
    DuplicateRank {
        /// Line number of the second occurrence.
        line: usize,
        /// The rank.
        rank: u32,
    },
    /// A special token's id is already an ordinary token's rank (or another special's id).
    #[error("special token {text:?}: id {id} is already taken")]
    SpecialIdTaken {
        /// The special's text.
        text: String,
        /// The id.
        id: u32,
    },
    /// The largest id is far beyond the number of tokens (a mostly empty id space).
    #[error("ids reach {} but only {used} tokens are given; refusing a mostly empty id space", .n_ids - 1)]
    SparseIds {
        /// Largest id + 1.
        n_ids: usize,
        /// Tokens and specials actually given.
        used: usize,
    },
    /// `vocab.json` is not valid JSON of the expected shape.
    #[error("JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// A `vocab.json` key is not made of GPT-2 byte-level characters (and is not a special).
    #[error("vocabulary: key {key:?} is not GPT-2 byte-level text and not a special token")]
    VocabKey {
        /// The key.
        key: String,
    },
    /// Two `vocab.json` keys have the same id.
    #[error("vocabulary: id {id} appears twice")]
    DuplicateVocabId {
        /// The id.
        id: u32,
    },
    /// A `merges.txt` line is not two space-separated tokens, or names an unknown token.
    #[error("merges.txt line {line}: {reason}")]
    BadMergeLine {
        /// Line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A requested special token is not in `vocab.json`.
    #[error("special token {text:?} is not in vocab.json")]
    UnknownSpecial {
        /// The special's text.
        text: String,
    },
    /// A `tekken.json` that `mistral-common` would not load, or whose pattern picobpe does not
    /// split.
    #[error("tekken.json: {0}")]
    Tekken(String),
    /// A part of a `tokenizer.json` that picobpe does not reproduce, or that is malformed.
    #[error(transparent)]
    TokenizerJson(#[from] Refused),
    /// A pre-tokenization regex that picobpe cannot compile (a look-around other than a final
    /// `X+(?!C)`, a possessive quantifier, a syntax error, ...).
    #[error("{reason}")]
    Pattern {
        /// The regex.
        regex: String,
        /// Why it does not compile.
        reason: String,
    },
    /// The imported model breaks an invariant.
    #[error("imported model is invalid: {0}")]
    Invalid(#[from] InvalidModel),
}
