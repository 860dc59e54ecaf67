//! Normalizers shared by every family: text rewritten before pre-tokenization, as
//! `tokenizers`' `normalizers` and `sentencepiece`'s normalizer rewrite it.
//!
//! Today: the Unicode normalization forms ([`UnicodeForm`], [`normalize`]), `tokenizers`'
//! `Precompiled` rule over a SentencePiece character map (`precompiled.rs`, on extended
//! grapheme clusters, `grapheme.rs`), `Sequence`s of character steps (quote pairs, `NFD` or
//! `NFKD`, `StripAccents`, `Lowercase`) with or without `Precompiled` after them
//! ([`Steps`], `steps.rs`), and the windowed encode through either that the
//! families use (`window.rs`), and `ByteLevel`'s `add_prefix_space` through it (`prefix.rs`),
//! from tables that `cargo xtask gen-unicode` generates from the
//! crates `tokenizers` itself calls. SentencePiece's character maps live with that family
//! (`crate::sentencepiece`), WordPiece's BERT normalizer with its own (`crate::wordpiece`).

mod folded;
mod grapheme;
#[allow(clippy::unreadable_literal)]
mod grapheme_tables;
mod precompiled;
mod prefix;
mod steps;
mod unicode;
#[allow(clippy::unreadable_literal)]
mod unicode_tables;
mod units;
mod window;

pub use folded::Folded;
pub use steps::{Decompose, Steps};
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

/// What a [`TextNormalizer`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalizerKind {
    /// A Unicode normalization form (`tokenizers`' `NFC`, `NFD`, `NFKC`, `NFKD`).
    Unicode(UnicodeForm),
    /// `tokenizers`' `Precompiled`: the SentencePiece tables' character map
    /// ([`crate::sentencepiece::SpTables::charsmap`]) applied a grapheme cluster at a time
    /// (see `precompiled.rs`).
    Precompiled,
    /// A `Sequence` of character steps, `Precompiled` after them or not ([`Steps`]).
    Steps(Steps),
    /// A Unicode form, then `Lowercase` and whitespace runs made one space ([`Folded`]:
    /// CLIP's normalizer).
    Folded(Folded),
}

/// The encode through a normalizer ([`window`]'s), behind a function pointer: the kind, the
/// character map (`Precompiled`'s; empty for the others), then `window::encode_normalized`'s
/// arguments.
type EncodeThrough = fn(
    NormalizerKind,
    &CharsMap<'_>,
    &[u8],
    bool,
    &mut [u32],
    fn(usize) -> usize,
    &mut EncodePart<'_>,
) -> Result<Progress, EncodeError>;

/// A model's normalizer as its tables hold it: what it applies, and the function that encodes
/// through it. Holding the function, not only the kind, keeps each normalizer's code and
/// tables (Unicode forms: 95 KB; `Precompiled`'s grapheme clusters: 20 KB) out of programs
/// whose tables do not name it: only its constructor refers to them.
#[derive(Clone, Copy)]
pub struct TextNormalizer {
    kind: NormalizerKind,
    encode: EncodeThrough,
}

impl TextNormalizer {
    /// The normalizer of `form` (a `const fn`: baked tables name it in a `static`).
    pub const fn new(form: UnicodeForm) -> Self {
        TextNormalizer {
            kind: NormalizerKind::Unicode(form),
            encode: encode_unicode,
        }
    }

    /// `tokenizers`' `Precompiled` over the tables' character map (a `const fn` too).
    pub const fn precompiled() -> Self {
        TextNormalizer {
            kind: NormalizerKind::Precompiled,
            encode: encode_precompiled,
        }
    }

    /// A `Sequence` of character steps (a `const fn` too); `Precompiled` in them applies the
    /// tables' character map. Tables must hold only steps this core applies exactly
    /// ([`Steps::is_exact`]; model loaders check it).
    pub const fn steps(steps: Steps) -> Self {
        TextNormalizer {
            kind: NormalizerKind::Steps(steps),
            encode: encode_steps,
        }
    }

    /// A Unicode form, then `Lowercase` and whitespace runs made one space (a `const fn`
    /// too). Tables must hold only what this core applies exactly ([`Folded::is_exact`];
    /// model loaders check it).
    pub const fn folded(folded: Folded) -> Self {
        TextNormalizer {
            kind: NormalizerKind::Folded(folded),
            encode: encode_folded,
        }
    }

    /// What it applies.
    pub fn kind(&self) -> NormalizerKind {
        self.kind
    }

    /// Its Unicode normalization form (`None` for `Precompiled`).
    pub fn form(&self) -> Option<UnicodeForm> {
        match self.kind {
            NormalizerKind::Unicode(form) => Some(form),
            NormalizerKind::Folded(f) => f.form,
            NormalizerKind::Precompiled | NormalizerKind::Steps(_) => None,
        }
    }

    /// Encodes `text` through the normalizer with `encode` (see `window::encode_normalized`);
    /// `map` is the character map `Precompiled` applies.
    pub(crate) fn encode(
        &self,
        map: &CharsMap<'_>,
        text: &[u8],
        is_final: bool,
        out: &mut [u32],
        work: fn(usize) -> usize,
        encode: &mut EncodePart<'_>,
    ) -> Result<Progress, EncodeError> {
        (self.encode)(self.kind, map, text, is_final, out, work, encode)
    }
}

impl core::fmt::Debug for TextNormalizer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("TextNormalizer").field(&self.kind).finish()
    }
}

impl PartialEq for TextNormalizer {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

/// [`window::encode_normalized`] through a Unicode form ([`TextNormalizer::new`] pairs it
/// with that kind; another kind, which no constructor pairs with it, is read as NFC).
fn encode_unicode(
    kind: NormalizerKind,
    _: &CharsMap<'_>,
    text: &[u8],
    is_final: bool,
    out: &mut [u32],
    work: fn(usize) -> usize,
    encode: &mut EncodePart<'_>,
) -> Result<Progress, EncodeError> {
    let form = match kind {
        NormalizerKind::Unicode(form) => form,
        _ => UnicodeForm::Nfc,
    };
    window::encode_normalized(&form, text, is_final, out, work, encode)
}

/// [`window::encode_normalized`] through a character map by `Precompiled`'s rule.
fn encode_precompiled(
    _: NormalizerKind,
    map: &CharsMap<'_>,
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

/// [`window::encode_normalized`] through character steps ([`TextNormalizer::steps`] pairs it
/// with that kind; another kind is read as no step at all).
fn encode_steps(
    kind: NormalizerKind,
    map: &CharsMap<'_>,
    text: &[u8],
    is_final: bool,
    out: &mut [u32],
    work: fn(usize) -> usize,
    encode: &mut EncodePart<'_>,
) -> Result<Progress, EncodeError> {
    let steps = match kind {
        NormalizerKind::Steps(steps) => steps,
        _ => Steps::NONE,
    };
    window::encode_normalized(
        &steps::StepsMap { steps, map },
        text,
        is_final,
        out,
        work,
        encode,
    )
}

/// [`window::encode_normalized`] through a form, `Lowercase` and whitespace runs
/// ([`TextNormalizer::folded`] pairs it with that kind; another kind is read as nothing).
fn encode_folded(
    kind: NormalizerKind,
    _: &CharsMap<'_>,
    text: &[u8],
    is_final: bool,
    out: &mut [u32],
    work: fn(usize) -> usize,
    encode: &mut EncodePart<'_>,
) -> Result<Progress, EncodeError> {
    let folded = match kind {
        NormalizerKind::Folded(folded) => folded,
        _ => Folded {
            form: None,
            lowercase: false,
            collapse_whitespace: false,
        },
    };
    window::encode_normalized(&folded, text, is_final, out, work, encode)
}

/// `text` normalized by `folded` into `out` (whole units; see [`normalize`] for the
/// contract). For the reference tests and the fuzzer.
#[doc(hidden)]
pub fn folded_normalize(
    folded: Folded,
    text: &[u8],
    last: bool,
    out: &mut [u8],
) -> Result<Progress, NormalizeError> {
    folded.normalize(text, last, out)
}

/// Encodes `text`, a section of text between special tokens (`section_start`: from its
/// start), with the space `add_prefix_space` puts before a section that does not start with
/// one; arguments and result as in [`TextNormalizer::encode`] (see `window.rs`).
pub(crate) fn encode_prefixed(
    section_start: bool,
    text: &[u8],
    is_final: bool,
    out: &mut [u32],
    work: fn(usize) -> usize,
    encode: &mut EncodePart<'_>,
) -> Result<Progress, EncodeError> {
    let prefix = prefix::PrefixSpace::of(text, section_start);
    window::encode_normalized(&prefix, text, is_final, out, work, encode)
}

/// `text` normalized by `steps` (over `map` when they end with `Precompiled`) into `out`
/// (whole units; see [`normalize`] for the contract). For the reference tests and the fuzzer.
#[doc(hidden)]
pub fn steps_normalize(
    steps: Steps,
    map: CharsMap<'_>,
    text: &[u8],
    last: bool,
    out: &mut [u8],
) -> Result<Progress, NormalizeError> {
    steps::StepsMap { steps, map: &map }.normalize(text, last, out)
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
    precompiled::GraphemeMap(&map).normalize(text, last, out)
}
