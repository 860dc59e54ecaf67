//! SentencePiece's normalizer (the `identity` rule) and the split into words, read straight
//! from the caller's text without copying it.
//!
//! The normalized text SentencePiece merges over is the input with each space (U+0020)
//! turned into `▁` (U+2581) and each byte that is not part of well-formed UTF-8 turned into
//! U+FFFD, preceded by one `▁` when `add_dummy_prefix` is set and the text is not empty. With
//! `remove_extra_whitespaces`, spaces at the start are dropped, a space right after another
//! space is dropped, and `▁`s at the end (spaces or the character itself, the dummy prefix
//! included) are dropped.
//!
//! Nothing is copied: a symbol is a range of the original text, and its normalized bytes are
//! produced on demand ([`Normalizer::write_range`]) into a small buffer when it is looked up.
//! A dropped space belongs to the range of the symbol before it but adds no bytes.
//!
//! A *word* starts at the text's start and at each `▁` that follows another character. When
//! no vocabulary piece holds a character followed by `▁` ([`super::SpTables::split_words`]),
//! no merge crosses a word start, so words are encoded one at a time, in bounded memory.

/// `▁` (U+2581) in UTF-8: what a space becomes.
pub const SPACE_MARK: [u8; 3] = [0xE2, 0x96, 0x81];
/// U+FFFD in UTF-8: what a malformed byte becomes.
pub const REPLACEMENT: [u8; 3] = [0xEF, 0xBF, 0xBD];

/// What the normalizer makes of one character of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Char {
    /// A space (U+0020): `▁`, or nothing when `remove_extra_whitespaces` drops it.
    Space,
    /// The character `▁` itself in the input.
    Mark,
    /// A well-formed character other than those: itself.
    Other,
    /// One byte that is not part of well-formed UTF-8: U+FFFD.
    Invalid,
}

impl Char {
    /// True for the characters that normalize to `▁`.
    #[inline]
    pub(crate) fn is_mark(self) -> bool {
        matches!(self, Char::Space | Char::Mark)
    }
}

/// The character at `text[pos..]` and its length in the input (1–4; 0 at the end).
#[inline]
pub(crate) fn char_at(text: &[u8], pos: usize) -> (Char, usize) {
    let Some(&b0) = text.get(pos) else {
        return (Char::Invalid, 0);
    };
    if b0 < 0x80 {
        return (if b0 == b' ' { Char::Space } else { Char::Other }, 1);
    }
    let len = utf8_len(text.get(pos..).unwrap_or(&[]));
    if len == 0 {
        return (Char::Invalid, 1);
    }
    if len == 3 && text.get(pos..pos + 3) == Some(&SPACE_MARK[..]) {
        return (Char::Mark, 3);
    }
    (Char::Other, len)
}

/// Length of the well-formed UTF-8 sequence (2–4 bytes) at the start of `s`, or 0 when it is
/// malformed: a stray continuation byte, a truncated sequence, an overlong form, a surrogate,
/// or a code point above U+10FFFF.
#[inline]
fn utf8_len(s: &[u8]) -> usize {
    let cont = |i: usize| s.get(i).is_some_and(|&b| b & 0xC0 == 0x80);
    let b1 = s.get(1).copied().unwrap_or(0);
    match s.first().copied().unwrap_or(0) {
        0xC2..=0xDF if cont(1) => 2,
        0xE0 if (0xA0..=0xBF).contains(&b1) && cont(2) => 3,
        0xE1..=0xEC | 0xEE..=0xEF if cont(1) && cont(2) => 3,
        0xED if (0x80..=0x9F).contains(&b1) && cont(2) => 3,
        0xF0 if (0x90..=0xBF).contains(&b1) && cont(2) && cont(3) => 4,
        0xF1..=0xF3 if cont(1) && cont(2) && cont(3) => 4,
        0xF4 if (0x80..=0x8F).contains(&b1) && cont(2) && cont(3) => 4,
        _ => 0,
    }
}

/// The normalizer's view of one text.
#[derive(Clone, Copy)]
pub(crate) struct Normalizer<'a> {
    /// The whole input.
    pub text: &'a [u8],
    /// `remove_extra_whitespaces`.
    pub remove_extra: bool,
}

impl<'a> Normalizer<'a> {
    /// True when the space at `pos` is dropped: with `remove_extra_whitespaces`, a space
    /// right after a space. (Leading and trailing spaces never reach a word.)
    #[inline]
    pub(crate) fn dropped(&self, pos: usize) -> bool {
        self.remove_extra
            && pos > 0
            && self.text.get(pos - 1) == Some(&b' ')
            && self.text.get(pos) == Some(&b' ')
    }

    /// Where the normalized text ends: `text.len()`, or with `remove_extra_whitespaces` the end
    /// of its last character that is not a `▁` (`from` when there is none).
    pub(crate) fn end(&self, from: usize) -> usize {
        if !self.remove_extra {
            return self.text.len();
        }
        let mut pos = from;
        let mut end = from;
        while pos < self.text.len() {
            let (c, len) = char_at(self.text, pos);
            pos += len;
            if !c.is_mark() {
                end = pos;
            }
        }
        end
    }

    /// The end of the word that starts at `start` (a `▁` run, then other characters, up to
    /// the next `▁` or `end`).
    pub(crate) fn word_end(&self, start: usize, end: usize) -> usize {
        let mut pos = start;
        let mut seen_other = false;
        while pos < end {
            let (c, len) = char_at(self.text, pos);
            if c.is_mark() && seen_other {
                break;
            }
            seen_other |= !c.is_mark();
            pos += len;
        }
        pos.min(end)
    }

    /// Write the normalized bytes of `text[from..to]` into `buf` after `at` bytes, returning
    /// the new length, or `None` when they do not fit.
    #[inline]
    pub(crate) fn write_range(
        &self,
        from: usize,
        to: usize,
        buf: &mut [u8],
        mut at: usize,
    ) -> Option<usize> {
        let mut pos = from;
        while pos < to {
            let (c, len) = char_at(self.text, pos);
            let bytes: &[u8] = match c {
                Char::Space if self.dropped(pos) => &[],
                Char::Space => &SPACE_MARK,
                Char::Invalid => &REPLACEMENT,
                Char::Mark | Char::Other => self.text.get(pos..pos + len)?,
            };
            let dst = buf.get_mut(at..at + bytes.len())?;
            for (d, s) in dst.iter_mut().zip(bytes) {
                *d = *s;
            }
            at += bytes.len();
            pos += len.max(1);
        }
        Some(at)
    }

    /// Write the normalized bytes of `text[from..to]` (after a `▁` when `prefix`) four to a
    /// `u32`, little-endian, into `dst`; bytes past its end are dropped.
    pub(crate) fn write_packed(&self, from: usize, to: usize, prefix: bool, dst: &mut [u32]) {
        let mut k = 0usize;
        let mut put = |b: u8| {
            if let Some(w) = dst.get_mut(k / 4) {
                let shift = 8 * (k % 4);
                *w = (*w & !(0xFF << shift)) | u32::from(b) << shift;
            }
            k += 1;
        };
        if prefix {
            SPACE_MARK.iter().for_each(|&b| put(b));
        }
        let mut pos = from;
        while pos < to {
            let (c, len) = char_at(self.text, pos);
            match c {
                Char::Space if self.dropped(pos) => {}
                Char::Space => SPACE_MARK.iter().for_each(|&b| put(b)),
                Char::Invalid => REPLACEMENT.iter().for_each(|&b| put(b)),
                Char::Mark | Char::Other => {
                    for &b in self.text.get(pos..pos + len).unwrap_or(&[]) {
                        put(b);
                    }
                }
            }
            pos += len.max(1);
        }
    }

    /// Number of normalized bytes of `text[from..to]`.
    pub(crate) fn normalized_len(&self, from: usize, to: usize) -> usize {
        let mut pos = from;
        let mut n = 0;
        while pos < to {
            let (c, len) = char_at(self.text, pos);
            n += match c {
                Char::Space if self.dropped(pos) => 0,
                Char::Space | Char::Invalid => 3,
                Char::Mark | Char::Other => len,
            };
            pos += len.max(1);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_lengths() {
        assert_eq!(utf8_len("é".as_bytes()), 2);
        assert_eq!(utf8_len("你".as_bytes()), 3);
        assert_eq!(utf8_len("🌍".as_bytes()), 4);
        for bad in [
            &[0x80][..],
            &[0xC0, 0x80],
            &[0xC1, 0xBF],
            &[0xE0, 0x80, 0x80],
            &[0xED, 0xA0, 0x80],
            &[0xF0, 0x80, 0x80, 0x80],
            &[0xF4, 0x90, 0x80, 0x80],
            &[0xF5, 0x80, 0x80, 0x80],
            &[0xE4, 0xBD],
        ] {
            assert_eq!(utf8_len(bad), 0, "{bad:x?}");
        }
        // Every well-formed scalar value agrees with std.
        let mut buf = [0u8; 4];
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let s = c.encode_utf8(&mut buf);
            if s.len() > 1 {
                assert_eq!(utf8_len(s.as_bytes()), s.len(), "{c:?}");
            }
        }
    }

    #[test]
    fn words_and_normalized_bytes() {
        let n = Normalizer {
            text: "ab  c▁d ".as_bytes(),
            remove_extra: true,
        };
        let end = n.end(0);
        assert_eq!(end, "ab  c▁d".len());
        assert_eq!(n.word_end(0, end), 2);
        assert_eq!(n.word_end(2, end), 5);
        assert_eq!(n.word_end(5, end), end);
        let mut buf = [0u8; 32];
        let len = n.write_range(0, end, &mut buf, 0).unwrap();
        assert_eq!(core::str::from_utf8(&buf[..len]).unwrap(), "ab▁c▁d");
        assert_eq!(n.normalized_len(0, end), len);
        let n = Normalizer {
            text: b"a \xFF ",
            remove_extra: false,
        };
        let len = n.write_range(0, 4, &mut buf, 0).unwrap();
        assert_eq!(core::str::from_utf8(&buf[..len]).unwrap(), "a▁\u{FFFD}▁");
    }
}
