//! Normalizers shared by every family: text rewritten before pre-tokenization, as
//! `tokenizers`' `normalizers` and `sentencepiece`'s normalizer rewrite it.
//!
//! Today: the Unicode normalization forms ([`UnicodeForm`], [`normalize`]), and the windowed
//! encode through them that the byte-level family uses (`window.rs`), from tables that
//! `cargo xtask gen-unicode` generates from the crate `tokenizers` itself calls. SentencePiece's
//! character maps live with that family (`crate::sentencepiece`), WordPiece's BERT normalizer
//! with its own (`crate::wordpiece`).

mod unicode;
#[allow(clippy::unreadable_literal)]
mod unicode_tables;
mod window;

pub use unicode::{normalize, NormalizeError, UnicodeForm};
pub use unicode_tables::UNICODE_VERSION;
pub(crate) use window::encode_normalized;
pub use window::NORMALIZE_WINDOW;
