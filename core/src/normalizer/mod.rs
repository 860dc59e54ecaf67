//! Normalizers shared by every family: text rewritten before pre-tokenization, as
//! `tokenizers`' `normalizers` and `sentencepiece`'s normalizer rewrite it.
//!
//! Today: the Unicode normalization forms ([`UnicodeForm`], [`normalize`]), `tokenizers`'
//! `Precompiled` rule over a SentencePiece character map (`precompiled.rs`, on extended
//! grapheme clusters, `grapheme.rs`), and the windowed encode through either that the
//! families use (`window.rs`), from tables that `cargo xtask gen-unicode` generates from the
//! crates `tokenizers` itself calls. SentencePiece's character maps live with that family
//! (`crate::sentencepiece`), WordPiece's BERT normalizer with its own (`crate::wordpiece`).

mod grapheme;
#[allow(clippy::unreadable_literal)]
mod grapheme_tables;
mod precompiled;
mod unicode;
#[allow(clippy::unreadable_literal)]
mod unicode_tables;
mod window;

pub use unicode::{normalize, NormalizeError, UnicodeForm};
pub use unicode_tables::UNICODE_VERSION;

pub use window::NORMALIZE_WINDOW;

use crate::error::EncodeError;
use crate::sentencepiece::CharsMap;
use crate::tokenize::Progress;

/// How a family encodes a prefix of (normalized) text: a stream's `encode_part`.
pub(crate) type EncodePart<'a> =
    dyn FnMut(&[u8], bool, &mut [u32]) -> Result<Progress, EncodeError> + 'a;

/// A normalizer that rewrites text one *unit* at a time, where the output of a unit does not
/// depend on the text around it: what the windowed encode (`window.rs`) needs.
pub(crate) trait UnitNormalizer {
    /// Normalizes whole units of `text` into `out` (with `last` false, not the unit that
    /// reaches the end of `text`: more input could extend it).
    fn normalize(
        &self,
        text: &[u8],
        last: bool,
        out: &mut [u8],
    ) -> Result<Progress, NormalizeError>;
    /// Length of the longest prefix of `text` made of whole units that are their own
    /// normalization (with `last` false, not the unit that reaches the end).
    fn identity_prefix(&self, text: &[u8], last: bool) -> usize;
    /// Length of the unit that starts at `text[at..]` (to the end of the text when more
    /// input could extend it; 0 at the end).
    fn unit_len(&self, text: &[u8], at: usize) -> usize;
}

impl UnitNormalizer for UnicodeForm {
    fn normalize(
        &self,
        text: &[u8],
        last: bool,
        out: &mut [u8],
    ) -> Result<Progress, NormalizeError> {
        normalize(*self, text, last, out)
    }

    fn identity_prefix(&self, text: &[u8], last: bool) -> usize {
        unicode::identity_prefix(*self, text, last)
    }

    fn unit_len(&self, text: &[u8], at: usize) -> usize {
        unicode::unit_len(*self, text, at)
    }
}

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
            encode: encode_unicode,
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

/// [`window::encode_normalized`] through a Unicode form.
fn encode_unicode(
    form: UnicodeForm,
    text: &[u8],
    is_final: bool,
    out: &mut [u32],
    work: fn(usize) -> usize,
    encode: &mut EncodePart<'_>,
) -> Result<Progress, EncodeError> {
    window::encode_normalized(&form, text, is_final, out, work, encode)
}

/// The encode through `tokenizers`' `Precompiled` rule, behind a function pointer.
type EncodePrecompiled = fn(
    CharsMap<'_>,
    &[u8],
    bool,
    &mut [u32],
    fn(usize) -> usize,
    &mut EncodePart<'_>,
) -> Result<Progress, EncodeError>;

/// A `tokenizer.json`'s `Precompiled` normalizer as tables hold it: the character map it
/// applies is the SentencePiece tables' own ([`crate::sentencepiece::SpTables::charsmap`]),
/// applied by `tokenizers`' rule (a grapheme cluster at a time: see `precompiled.rs`). Holds
/// the function that encodes through it for the same reason as [`TextNormalizer`]: the
/// grapheme tables (about 20 KB) are linked only into programs whose tables name it.
#[derive(Clone, Copy)]
pub struct PrecompiledNormalizer {
    encode: EncodePrecompiled,
}

impl PrecompiledNormalizer {
    /// The normalizer (a `const fn`: baked tables name it in a `static`).
    pub const fn new() -> Self {
        PrecompiledNormalizer {
            encode: encode_precompiled,
        }
    }

    /// Encodes `text` through `map` by `Precompiled`'s rule with `encode` (see
    /// `window::encode_normalized`).
    pub(crate) fn encode(
        &self,
        map: CharsMap<'_>,
        text: &[u8],
        is_final: bool,
        out: &mut [u32],
        work: fn(usize) -> usize,
        encode: &mut EncodePart<'_>,
    ) -> Result<Progress, EncodeError> {
        (self.encode)(map, text, is_final, out, work, encode)
    }
}

impl Default for PrecompiledNormalizer {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for PrecompiledNormalizer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("PrecompiledNormalizer")
    }
}

impl PartialEq for PrecompiledNormalizer {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// [`window::encode_normalized`] through a character map by `Precompiled`'s rule.
fn encode_precompiled(
    map: CharsMap<'_>,
    text: &[u8],
    is_final: bool,
    out: &mut [u32],
    work: fn(usize) -> usize,
    encode: &mut EncodePart<'_>,
) -> Result<Progress, EncodeError> {
    window::encode_normalized(
        &precompiled::GraphemeMap(map),
        text,
        is_final,
        out,
        work,
        encode,
    )
}

/// The end of the extended grapheme cluster (UAX #29, as `unicode-segmentation` 1.12.0 finds
/// it) that starts at `text[at..]`, a cluster start; with `last` false, `None` when more input
/// could extend it. A byte that is not UTF-8 is read as U+FFFD. For the reference tests.
#[doc(hidden)]
pub fn grapheme_end(text: &[u8], at: usize, last: bool) -> Option<usize> {
    grapheme::cluster_end(text, at, last).map(|(end, _)| end)
}

/// `text` normalized by `tokenizers`' `Precompiled` rule over `map` into `out` (whole
/// clusters; see [`normalize`] for the contract). For the reference tests and the fuzzer.
#[doc(hidden)]
pub fn precompiled_normalize(
    map: CharsMap<'_>,
    text: &[u8],
    last: bool,
    out: &mut [u8],
) -> Result<Progress, NormalizeError> {
    precompiled::GraphemeMap(map).normalize(text, last, out)
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
