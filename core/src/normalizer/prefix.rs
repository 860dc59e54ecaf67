//! `tokenizers`' `ByteLevel` pre-tokenizer with `add_prefix_space`: a space before each
//! section of text between added tokens that does not already start with one (RoBERTa-,
//! BART- and GPT-NeoX-style files made with `add_prefix_space=True`).
//!
//! The space changes how the section splits (`"'s"` alone is a contraction; after a space it
//! is `" '"` then `"s"`), so it is put into the text, not into the ids: the section's first
//! byte is a unit whose output is the space and that byte, every other byte is its own
//! output, and the windowed encode (`window.rs`) does the rest. Text after the first piece is
//! encoded where it lies, as any text a normalizer leaves alone.

use super::unicode::NormalizeError;
use super::units::by_units;
use super::UnitNormalizer;
use crate::tokenize::Progress;

/// The prefix space of one section: `section_len` is the section's length when it gets the
/// space (it is a section start and does not start with `b' '`), else `usize::MAX`.
///
/// `window.rs` hands its methods suffixes of the section (`text[pos..]`), so the section's
/// start is where the suffix is as long as the section.
pub(super) struct PrefixSpace {
    section_len: usize,
}

impl PrefixSpace {
    /// The prefix of `section`, which starts a section when `starts` is true.
    pub(super) fn of(section: &[u8], starts: bool) -> Self {
        let spaced = section.first().is_some_and(|&b| b != b' ');
        PrefixSpace {
            section_len: if starts && spaced {
                section.len()
            } else {
                usize::MAX
            },
        }
    }

    /// True when `text`, a suffix of the section, is the whole section and gets the space.
    #[inline]
    fn at_start(&self, text: &[u8]) -> bool {
        text.len() == self.section_len
    }
}

impl UnitNormalizer for PrefixSpace {
    fn normalize(
        &self,
        text: &[u8],
        _last: bool,
        out: &mut [u8],
    ) -> Result<Progress, NormalizeError> {
        let spaced = self.at_start(text);
        by_units(text, out, |at, sink| {
            if at == 0 && spaced {
                sink.put(b" ");
            }
            sink.put(text.get(at..at + 1).unwrap_or(&[]));
            Some(at + 1)
        })
    }

    fn identity_prefix(&self, text: &[u8], _last: bool) -> usize {
        if self.at_start(text) {
            0
        } else {
            text.len()
        }
    }

    fn unit_len(&self, text: &[u8], at: usize) -> usize {
        usize::from(at < text.len())
    }
}
