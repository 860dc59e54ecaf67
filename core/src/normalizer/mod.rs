//! Normalizers shared by every family: text rewritten before pre-tokenization, as
//! `tokenizers`' `normalizers` and `sentencepiece`'s normalizer rewrite it.
//!
//! Today: the Unicode normalization forms ([`UnicodeForm`], [`normalize`]), from tables that
//! `cargo xtask gen-unicode` generates from the crate `tokenizers` itself calls. SentencePiece's
//! character maps live with that family (`crate::sentencepiece`), WordPiece's BERT normalizer
//! with its own (`crate::wordpiece`).

mod unicode;
#[allow(clippy::unreadable_literal)]
mod unicode_tables;

pub use unicode::{normalize, NormalizeError, UnicodeForm};
