//! picobpe model files, vocabulary importers and host-side table building.
//!
//! - [`Model`]: the vocabulary, merges, special tokens and pattern; [`Model::validate`] checks
//!   its invariants. [`format`](mod@format) is the versioned `*.model` file format.
//! - [`import`]: build a model from a tiktoken rank file or HF `vocab.json` + `merges.txt`.
//! - [`TableData`]: the flat tables the core runs on; baked by `picobpe-build`, or turned into
//!   live [`picobpe::Tables`] on the host by [`TableData::to_tables`].
//! - [`SpModel`], [`SpTableData`]: SentencePiece BPE models (Llama 2 family), imported from a
//!   `tokenizer.model` or `tokenizer.json` ([`sentencepiece`]).
//! - [`TokenizerJson`]: a Hugging Face `tokenizer.json`, parsed once, for the importer of its
//!   [`Family`](tokenizer_json::Family).
//! - [`CacheMemory`]: a piece cache's lines on huge pages, for `encode_cached` on the host.
#![deny(missing_docs)]

pub mod bpe;
pub mod byte_unicode;
mod cache_memory;
mod compiled_pattern;
mod error;
pub mod format;
pub mod import;
mod model;
pub mod normalizer;
mod pattern;
pub mod sentencepiece;
mod table_file;
mod tables;
pub mod tokenizer_json;
mod trie;
pub mod wordpiece;

pub use cache_memory::CacheMemory;
pub use compiled_pattern::{compile_pattern, compile_split, PatternCompileError};
pub use error::{InvalidModel, ModelError};
pub use format::{read_tables, read_tables_with_template, AnyModel, LiveTables, TemplateData};
pub use model::{Model, Split, TextSteps};
pub use pattern::{PatternKind, UnknownPattern};
pub use picobpe::normalizer::{NormalizerKind, TextNormalizer};
/// A [`Split`]'s rule, as the core reads it.
pub use picobpe::pretok::{SplitBehavior, SplitRule};
pub use picobpe::sentencepiece::SpAlgorithm;
pub use sentencepiece::{SpModel, SpTableData};
pub use tables::{strip_bits, IndexData, PieceTable, TableData, TableSizes};
pub use tokenizer_json::TokenizerJson;
pub use trie::TrieData;
pub use wordpiece::{WpModel, WpTableData};

/// Leak `value` for the rest of the process and keep its address in a static list. Live tables
/// borrow from what is leaked this way (a process loads a model once and uses it until exit),
/// and the list keeps it reachable, so leak checkers (LeakSanitizer in the fuzz targets) see it
/// as the live memory it is rather than a leak. Do not call this in a loop.
pub(crate) fn keep<T: 'static>(value: T) -> &'static T {
    static KEPT: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let kept: &'static T = Box::leak(Box::new(value));
    if let Ok(mut list) = KEPT.lock() {
        list.push(kept as *const T as usize);
    }
    kept
}
