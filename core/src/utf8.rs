//! UTF-8 decoding, one reader for every stage (pre-tokenizers, normalizers, decoders): the
//! well-formed byte sequences of the Unicode Standard's Table 3-7, and for the rest the length
//! of the *maximal subpart* that Unicode (and `String::from_utf8_lossy`, `sentencepiece`,
//! `tokenizers`) replace with one U+FFFD.

/// What the bytes at a position of a text hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Utf8 {
    /// A well-formed character: its code point and its length in bytes (1–4).
    Scalar(u32, usize),
    /// No character starts here: the length of the maximal subpart (1–3), the bytes one
    /// U+FFFD stands for.
    Invalid(usize),
    /// The bytes to the end of the text (this many: 0 at the end) are a proper prefix of a
    /// well-formed character: more input could complete it.
    Truncated(usize),
}

/// Decode the character at `text[i..]`. Always inlined: it is the inner step of several
/// per-character loops, and callers use only some of its outcomes.
#[inline(always)]
pub(crate) fn decode(text: &[u8], i: usize) -> Utf8 {
    let Some(&b0) = text.get(i) else {
        return Utf8::Truncated(0);
    };
    if b0 < 0x80 {
        return Utf8::Scalar(u32::from(b0), 1);
    }
    // Length and the allowed range of the second byte (Table 3-7); later bytes are 80..=BF.
    let (len, lo, hi) = match b0 {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return Utf8::Invalid(1),
    };
    let Some(rest) = text.get(i + 1..) else {
        return Utf8::Truncated(1);
    };
    let cont = |k: usize| rest.get(k).map(|&b| (0x80..=0xBF).contains(&b));
    match rest.first() {
        Some(&b) if (lo..=hi).contains(&b) => {}
        Some(_) => return Utf8::Invalid(1),
        None => return Utf8::Truncated(1),
    }
    for k in 1..len - 1 {
        match cont(k) {
            Some(true) => {}
            Some(false) => return Utf8::Invalid(k + 1),
            None => return Utf8::Truncated(k + 1),
        }
    }
    // Every byte checked: the code point from the lead's payload and six bits a byte.
    let mut cp = u32::from(b0) & (0x7F >> len);
    for &b in rest.iter().take(len - 1) {
        cp = cp << 6 | u32::from(b & 0x3F);
    }
    Utf8::Scalar(cp, len)
}

/// `c` in UTF-8: the bytes (the first `len` of four) and `len`. `char::encode_utf8` without
/// its panic path (a buffer too short), which the panic check would find.
#[inline]
pub(crate) fn encode(c: char) -> ([u8; 4], usize) {
    let cp = u32::from(c);
    let cont = |shift: u32| 0x80 | (cp >> shift & 0x3F) as u8;
    match cp {
        0..=0x7F => ([cp as u8, 0, 0, 0], 1),
        0x80..=0x7FF => ([0xC0 | (cp >> 6) as u8, cont(0), 0, 0], 2),
        0x800..=0xFFFF => ([0xE0 | (cp >> 12) as u8, cont(6), cont(0), 0], 3),
        _ => ([0xF0 | (cp >> 18) as u8, cont(12), cont(6), cont(0)], 4),
    }
}

/// The well-formed character at `text[i..]`, if one starts there.
#[inline]
pub(crate) fn char_at(text: &[u8], i: usize) -> Option<char> {
    match decode(text, i) {
        Utf8::Scalar(cp, _) => char::from_u32(cp),
        _ => None,
    }
}

/// The length of the well-formed non-ASCII character at the start of `s` (2–4), or 0: the
/// check of [`decode`] without the code point or the subpart's length, for per-character
/// loops that need neither (SentencePiece's normalizer: [`decode`] there cost 1–3 % of its
/// instructions).
#[inline]
pub(crate) fn well_formed_len(s: &[u8]) -> usize {
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

/// The length of the character at the start of `s` when it has the Unicode `White_Space`
/// property (what `char::is_whitespace` and `tokenizers`' `WhitespaceSplit` split at), else 0.
/// A truncated or malformed sequence is not whitespace.
#[inline]
pub(crate) fn white_space_len(s: &[u8]) -> usize {
    match s {
        [b'\t'..=b'\r' | b' ', ..] => 1,
        [0xC2, 0x85 | 0xA0, ..] => 2,
        [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..] => 3,
        _ => 0,
    }
}

/// True when `b` (not empty) is a proper prefix of a well-formed character.
#[inline]
pub(crate) fn is_proper_prefix(b: &[u8]) -> bool {
    matches!(decode(b, 0), Utf8::Truncated(1..))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `white_space_len` agrees with `char::is_whitespace` on every scalar value (under Miri
    /// a sample, with every whitespace character and its neighbours), and says no to every
    /// truncated prefix of a whitespace character.
    #[test]
    fn white_space_is_char_is_whitespace() {
        let step = if cfg!(miri) { 251 } else { 1 };
        let listed = [
            0x09, 0x0D, 0x0E, 0x1C, 0x1F, 0x20, 0x85, 0xA0, 0x1680, 0x180E, 0x2000, 0x200A, 0x200B,
            0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x3001, 0xFEFF,
        ];
        let sample = (0..=0x10FFFFu32).step_by(step).chain(listed);
        for c in sample.filter_map(char::from_u32) {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            let want = if c.is_whitespace() { bytes.len() } else { 0 };
            assert_eq!(white_space_len(bytes), want, "{c:?}");
            if c.is_whitespace() {
                for cut in 1..bytes.len() {
                    assert_eq!(white_space_len(&bytes[..cut]), 0, "{c:?} cut at {cut}");
                }
            }
        }
    }

    /// `text` decoded as our callers do: a scalar as itself, each maximal subpart (and a
    /// truncated end) as one U+FFFD.
    fn lossy(text: &[u8]) -> String {
        let (mut s, mut i) = (String::new(), 0);
        while i < text.len() {
            match decode(text, i) {
                Utf8::Scalar(cp, len) => {
                    s.push(char::from_u32(cp).expect("a scalar value"));
                    i += len;
                }
                Utf8::Invalid(k) | Utf8::Truncated(k) => {
                    s.push(char::REPLACEMENT_CHARACTER);
                    i += k;
                }
            }
        }
        s
    }

    #[test]
    fn every_scalar_value_decodes_as_std_encodes_it() {
        // Under Miri (slow) every 4099th value and the edges of each length and of the
        // surrogates.
        let step = if cfg!(miri) { 4099 } else { 1 };
        let edges = [
            0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF,
        ];
        let mut buf = [0u8; 4];
        for c in (0..=0x10FFFFu32)
            .step_by(step)
            .chain(edges)
            .filter_map(char::from_u32)
        {
            let s = c.encode_utf8(&mut buf);
            assert_eq!(decode(s.as_bytes(), 0), Utf8::Scalar(c as u32, s.len()));
            if s.len() > 1 {
                assert_eq!(well_formed_len(s.as_bytes()), s.len());
            }
            if s.len() > 1 {
                assert_eq!(
                    decode(&s.as_bytes()[..s.len() - 1], 0),
                    Utf8::Truncated(s.len() - 1)
                );
                assert!(is_proper_prefix(&s.as_bytes()[..1]));
            }
        }
    }

    #[test]
    fn ill_formed_bytes_are_their_maximal_subparts_as_in_std() {
        for (bad, want) in [
            (&[0x80][..], Utf8::Invalid(1)),
            (&[0xC0, 0x80], Utf8::Invalid(1)),
            (&[0xE0, 0x80, 0x80], Utf8::Invalid(1)),
            (&[0xED, 0xA0, 0x80], Utf8::Invalid(1)),
            (&[0xF4, 0x90, 0x80, 0x80], Utf8::Invalid(1)),
            (&[0xF5, 0x80], Utf8::Invalid(1)),
            (&[0xE4, 0xBD, 0x41], Utf8::Invalid(2)),
            (&[0xF0, 0x9F, 0x8C, 0x41], Utf8::Invalid(3)),
            (&[0xE4, 0xBD], Utf8::Truncated(2)),
            (&[], Utf8::Truncated(0)),
        ] {
            assert_eq!(decode(bad, 0), want, "{bad:x?}");
        }
        // Random byte strings over the bytes where the rules change: the same U+FFFDs as
        // `String::from_utf8_lossy`.
        let alphabet = [
            0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED,
            0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF,
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let rounds = if cfg!(miri) { 200 } else { 200_000 };
        for _ in 0..rounds {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 7) as usize;
            let text: Vec<u8> = (0..len)
                .map(|k| alphabet[(state >> (8 + 5 * k)) as usize % alphabet.len()])
                .collect();
            assert_eq!(lossy(&text), String::from_utf8_lossy(&text), "{text:x?}");
            let valid = matches!(decode(&text, 0), Utf8::Scalar(_, n) if n > 1);
            assert_eq!(well_formed_len(&text) > 0, valid, "{text:x?}");
        }
    }
}
