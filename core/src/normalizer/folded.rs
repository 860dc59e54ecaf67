//! A Unicode form, then `Lowercase`, with runs of whitespace made one space: CLIP's normalizer
//! (`Sequence[NFC, Replace(Regex("\s+"), " "), Lowercase]`), and `Lowercase` alone.
//!
//! **Units.** A run of `White_Space` characters is one unit, written as one space: the
//! `Replace`. Every other unit is the form's unit (a starter and the marks after it; with no
//! form, one character), normalized whole and lowercased a character at a time on its way out
//! (`unicode::unit_into`), so `Lowercase` sees the form's output, as in the reference.
//!
//! **Why runs of the raw text are the runs of the normalized text.** The `Replace` reads the
//! form's output. Under `NFC` and `NFD` a whitespace character stays whitespace (U+2000 and
//! U+2001 become U+2002 and U+2003), no other character's canonical decomposition holds
//! whitespace, and whitespace neither composes with its neighbours nor carries a combining
//! class; so the whitespace runs of the output are those of the input, and the marks after a
//! run (a unit of their own here) are written as the form writes them after a space. The
//! compatibility forms break this (`¨` becomes a space and U+0308), so a loader only pairs
//! the runs with no form or a canonical one ([`Folded::is_exact`]). `Lowercase` neither makes
//! nor unmakes whitespace, so its place before or after the `Replace` does not matter.
//!
//! **Bytes that are not UTF-8** pass as they are (the byte-level family's rule: the
//! reference takes only valid text, and each byte is a token).

use super::unicode::{self, NormalizeError, UnicodeForm};
use super::units::{by_units, Sink};
use super::UnitNormalizer;
use crate::tokenize::Progress;
use crate::utf8::{self, Utf8};

/// What the normalizer applies, in this order: the form, then `Lowercase` and the whitespace
/// runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Folded {
    /// `NFC`, `NFD` (or, without `collapse_whitespace`, `NFKC` or `NFKD`) first, or none.
    pub form: Option<UnicodeForm>,
    /// `Lowercase`: `char::to_lowercase` of each character of the form's output.
    pub lowercase: bool,
    /// `Replace(Regex("\s+"), " ")`: each run of `White_Space` characters becomes one space.
    pub collapse_whitespace: bool,
}

impl Folded {
    /// True when this core applies it exactly: the whitespace runs only with no form or a
    /// canonical one (see the module docs), and `Nmt` never.
    pub const fn is_exact(&self) -> bool {
        match self.form {
            Some(UnicodeForm::NmtNfkc) => false,
            Some(UnicodeForm::Nfkc | UnicodeForm::Nfkd) => !self.collapse_whitespace,
            _ => true,
        }
    }

    /// The unit at `text[at..]` written to `sink`: its end, or `None` where more input could
    /// extend it (`last` false).
    fn unit(&self, text: &[u8], at: usize, last: bool, sink: &mut Sink<'_>) -> Option<usize> {
        if self.collapse_whitespace {
            let end = crate::special::whitespace_run_end(text, at);
            if end > at {
                // The run goes on if the text ends in it or in a character cut short.
                let open =
                    end == text.len() || matches!(utf8::decode(text, end), Utf8::Truncated(_));
                if open && !last {
                    return None;
                }
                sink.put(b" ");
                return Some(end);
            }
        }
        match self.form {
            Some(form) => {
                // The sink is fresh (`by_units` gives each unit its own): `unit_into` writes
                // from its start, and a `need` past its room says the unit did not fit.
                let (end, need) =
                    unicode::unit_into(form, self.lowercase, text, at, last, sink.out)?;
                sink.need += need;
                Some(end)
            }
            None => self.one_char(text, at, last, sink),
        }
    }

    /// One character lowercased (with no form, each character is a unit).
    fn one_char(&self, text: &[u8], at: usize, last: bool, sink: &mut Sink<'_>) -> Option<usize> {
        match utf8::decode(text, at) {
            Utf8::Scalar(cp, len) => {
                match char::from_u32(cp).filter(|_| self.lowercase) {
                    Some(c) => {
                        for l in c.to_lowercase() {
                            let (bytes, n) = utf8::encode(l);
                            sink.put(bytes.get(..n).unwrap_or(&[]));
                        }
                    }
                    None => sink.put(text.get(at..at + len).unwrap_or(&[])),
                }
                Some(at + len)
            }
            Utf8::Truncated(_) if !last => None,
            Utf8::Invalid(len) | Utf8::Truncated(len) => {
                let len = len.max(1);
                sink.put(text.get(at..at + len).unwrap_or(&[]));
                Some(at + len)
            }
        }
    }

    /// Whether the ASCII byte `b` is its own output when it is a whole unit.
    #[inline]
    fn ascii_stays(&self, b: u8) -> bool {
        let lowered = self.lowercase && b.is_ascii_uppercase();
        let spaced = self.collapse_whitespace && utf8::white_space_len(&[b]) == 1 && b != b' ';
        !(lowered || spaced)
    }
}

impl UnitNormalizer for Folded {
    fn normalize(
        &self,
        text: &[u8],
        last: bool,
        out: &mut [u8],
    ) -> Result<Progress, NormalizeError> {
        by_units(text, out, |at, sink| self.unit(text, at, last, sink))
    }

    /// ASCII only (any other unit ends the prefix): a byte that stays itself, followed by
    /// ASCII (so it is a whole unit), and a space only when no whitespace follows it.
    fn identity_prefix(&self, text: &[u8], last: bool) -> usize {
        let mut at = 0;
        while let Some(&b) = text.get(at) {
            let next = text.get(at + 1).copied();
            let whole = match next {
                Some(n) => n.is_ascii(),
                None => last,
            };
            if !b.is_ascii() || !whole || !self.ascii_stays(b) {
                break;
            }
            let run_goes_on = self.collapse_whitespace
                && b == b' '
                && utf8::white_space_len(text.get(at + 1..).unwrap_or(&[])) > 0;
            if run_goes_on {
                break;
            }
            at += 1;
        }
        at
    }

    fn unit_len(&self, text: &[u8], at: usize) -> usize {
        if at >= text.len() {
            return 0;
        }
        let mut sink = Sink {
            out: &mut [],
            need: 0,
        };
        match self.unit(text, at, false, &mut sink) {
            Some(end) => end - at,
            None => text.len() - at,
        }
    }
}
