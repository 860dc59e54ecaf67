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
pub use window::NORMALIZE_WINDOW;

use crate::error::EncodeError;
use crate::tokenize::Progress;

/// How a family encodes a prefix of (normalized) text: a stream's `encode_part`.
pub(crate) type EncodePart<'a> =
    dyn FnMut(&[u8], bool, &mut [u32]) -> Result<Progress, EncodeError> + 'a;

/// The encode through a normalizer ([`window`]'s), behind a function pointer.
type EncodeThrough = fn(
    UnicodeForm,
    &[u8],
    bool,
    &mut [u32],
    fn(usize) -> usize,
    &mut EncodePart<'_>,
) -> Result<Progress, EncodeError>;

/// A model's Unicode normalizer as its tables hold it: the form, and the function that encodes
/// through it. Holding the function, not only the form, keeps the normalization code and its
/// 95 KB of tables out of programs whose tables have no normalizer: only
/// [`TextNormalizer::new`] refers to them, and only a model with a normalizer calls it.
#[derive(Clone, Copy)]
pub struct TextNormalizer {
    form: UnicodeForm,
    encode: EncodeThrough,
}

impl TextNormalizer {
    /// The normalizer of `form` (a `const fn`: baked tables name it in a `static`).
    pub const fn new(form: UnicodeForm) -> Self {
        TextNormalizer {
            form,
            encode: window::encode_normalized,
        }
    }

    /// Its normalization form.
    pub fn form(&self) -> UnicodeForm {
        self.form
    }

    /// Encodes `text` through the form with `encode` (see `window::encode_normalized`).
    pub(crate) fn encode(
        &self,
        text: &[u8],
        is_final: bool,
        out: &mut [u32],
        work: fn(usize) -> usize,
        encode: &mut EncodePart<'_>,
    ) -> Result<Progress, EncodeError> {
        (self.encode)(self.form, text, is_final, out, work, encode)
    }
}

impl core::fmt::Debug for TextNormalizer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("TextNormalizer").field(&self.form).finish()
    }
}

impl PartialEq for TextNormalizer {
    fn eq(&self, other: &Self) -> bool {
        self.form == other.form
    }
}
