//! SentencePiece BPE with byte fallback (the tokenizers of Llama 2, TinyLlama and llama2.c's
//! models) and SentencePiece Unigram (the T5 family), exact to the `sentencepiece` library.
//!
//! Same contract as the byte-level encoder: no heap, no panic, every buffer the caller's, a
//! full output buffer is [`crate::EncodeError::OutputFull`] at a word boundary, and resuming
//! gives the ids of a one-shot call.
//!
//! - [`SpTables`]: the pieces, their scores (as integer priorities) and kinds, the byte
//!   pieces and the normalizer flags; baked by `picobpe-build` or built on the host by
//!   `picobpe-model` from a `tokenizer.model` or `tokenizer.json`.
//! - [`SpTokenizer`]: encode (SentencePiece's `EncodeAsIds`) and decode (`DecodeIds`).
//!
//! Supported: the normalizer (spaces to `▁`, `add_dummy_prefix`, `remove_extra_whitespaces`)
//! with the `identity` rule or a character map ([`CharsMap`]: `nmt_nfkc`, `nmt_nfkc_cf`,
//! `nfkc`, rules from a TSV file), user-defined and control symbols, byte fallback or `<unk>`.
//! Not supported (refused when a model is imported): pieces of kind `UNUSED`, whitespace as a
//! suffix, mergeable pieces longer than [`MAX_PIECE_BYTES`].

pub(crate) mod charsmap;
mod decode;
mod encode;
mod merge;
mod normalize;
mod tables;
mod unigram;

pub use charsmap::{hangul_syllable, unit_offset, MAX_SEQUENCE_CHARS, RUN_CHAR};
pub use decode::SpDecodeState;
pub use encode::SpTokenizer;
pub use merge::{LONG_WORD_BUF, WORD_BUF};
pub use normalize::{REPLACEMENT, SPACE_MARK};
pub use tables::{
    priority_score, score_priority, CharsMap, PieceFilter, PieceKind, PreSplit, Replacement,
    Sections, SpAlgorithm, SpTables, MAX_PIECE_BYTES, WHOLE,
};
pub use unigram::UNIGRAM_STACK_BYTES;
