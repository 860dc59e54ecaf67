//! A Unicode form, then `Lowercase`, with runs of whitespace made one space: CLIP's normalizer
//! (`Sequence[NFC, Replace(Regex("\s+"), " "), Lowercase]`), `Lowercase` alone, and
//! `Sequence[NFC, Lowercase]` and the like in every family's `tokenizer.json` files.
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
//! reference takes only valid text, and each byte is a token); the SentencePiece and WordPiece
//! encoders then read them by their own rules, as after a Unicode form alone.

use super::unicode::{self, NormalizeError, UnicodeForm};
use super::units::{by_units, unit_len_of, Sink};
use super::UnitNormalizer;
use crate::tokenize::Progress;
use crate::utf8::{self, Utf8};

/// Longest run of ASCII characters written as one unit (short enough that a unit always fits
/// the normalizing window).
const ASCII_RUN: usize = 64;

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
        if let Some(end) = self.ascii_run(text, at, last) {
            let run = text.get(at..end).unwrap_or(&[]);
            if let Some(dst) = sink.out.get_mut(..run.len()) {
                for (d, &b) in dst.iter_mut().zip(run) {
                    *d = if self.lowercase {
                        b.to_ascii_lowercase()
                    } else {
                        b
                    };
                }
            }
            sink.need += run.len();
            return Some(end);
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

    /// The end of a run of ASCII characters from `at` that is a unit of its own: no
    /// whitespace when runs collapse, at most [`ASCII_RUN`] bytes, and not its last character
    /// when a byte that is not ASCII follows it or the text may go on (a mark could join it).
    /// Every form leaves ASCII alone and `Lowercase` maps it to ASCII, so each of these
    /// characters is its own normalization, lowercased. `None`: no such run of one byte or
    /// more.
    #[inline]
    fn ascii_run(&self, text: &[u8], at: usize, last: bool) -> Option<usize> {
        let rest = text.get(at..)?;
        let limit = rest.len().min(ASCII_RUN + 1);
        let stop = |b: &u8| {
            !b.is_ascii()
                || (self.collapse_whitespace
                    && utf8::white_space_len(core::slice::from_ref(b)) == 1)
        };
        let run = rest.get(..limit)?.iter().position(stop).unwrap_or(limit);
        // The character before a byte that is not ASCII, or before the end of a text that
        // may go on, is not whole yet; a run that stopped at whitespace or at its limit is.
        let open = match rest.get(run) {
            Some(b) => !b.is_ascii(),
            None => !last,
        };
        let end = if open {
            run.checked_sub(1)?
        } else {
            run.min(ASCII_RUN)
        };
        (end > 0).then_some(at + end)
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

    /// The offset of the first character of `text[..k]` that `Lowercase` or the whitespace
    /// runs change (`k` if none); a run that reaches `k` changes when it may go on after it.
    fn first_change(&self, text: &[u8], k: usize, last: bool) -> usize {
        let mut at = 0;
        while at < k {
            let Some(&b) = text.get(at) else {
                return at;
            };
            if self.collapse_whitespace {
                let end = crate::special::whitespace_run_end(text, at);
                if end > at {
                    let lone_space = b == b' ' && end == at + 1;
                    // More input could extend a run that ends the text or a character cut
                    // short; a run past `k` is not inside the prefix.
                    let whole = match utf8::decode(text, end) {
                        _ if end >= text.len() => last,
                        Utf8::Truncated(_) => last,
                        _ => true,
                    };
                    if !lone_space || !whole || end > k {
                        return at;
                    }
                    at = end;
                    continue;
                }
            }
            if b.is_ascii() {
                if self.lowercase && b.is_ascii_uppercase() {
                    return at;
                }
                at += 1;
                continue;
            }
            match utf8::decode(text, at) {
                Utf8::Scalar(cp, len) => {
                    let stays = |c: char| {
                        let mut l = c.to_lowercase();
                        l.next() == Some(c) && l.next().is_none()
                    };
                    if self.lowercase && !char::from_u32(cp).is_some_and(stays) {
                        return at;
                    }
                    at += len;
                }
                Utf8::Invalid(len) | Utf8::Truncated(len) => at += len.max(1),
            }
        }
        k
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

    /// The form's own identity prefix (whole units it leaves alone), cut before the first
    /// character that `Lowercase` changes or the first whitespace the runs change (any
    /// whitespace but a lone space; a space whose run may go on), at the start of that
    /// character's unit.
    fn identity_prefix(&self, text: &[u8], last: bool) -> usize {
        // The first change, found first: the form's prefix is then looked for only before
        // it (each call reads about as far as the prefix it returns).
        let p = self.first_change(text, text.len(), last);
        let Some(form) = self.form else {
            // With no form each character is a unit: all but one cut short at the end.
            let whole = if last {
                text.len()
            } else {
                text.len() - truncated_tail(text)
            };
            return p.min(whole);
        };
        if p == text.len() {
            return unicode::identity_prefix(form, text, last);
        }
        // Whole units before the change: the unit it starts, or the one it is inside.
        let before = text.get(..p).unwrap_or(&[]);
        unicode::identity_prefix(form, before, unicode::starts_unit(form, text, p))
    }

    fn unit_len(&self, text: &[u8], at: usize) -> usize {
        unit_len_of(text, at, |at, sink| self.unit(text, at, false, sink))
    }
}

/// Length of the proper prefix of a character's encoding that `text` ends with (0 to 3).
fn truncated_tail(text: &[u8]) -> usize {
    (1..=3)
        .find(|&n| {
            text.len() >= n && utf8::is_proper_prefix(text.get(text.len() - n..).unwrap_or(&[]))
        })
        .unwrap_or(0)
}
