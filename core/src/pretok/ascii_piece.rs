//! The ASCII fast path of the three splitters: most pieces of prose and code are a few ASCII
//! bytes (a word with its leading space, a punctuation run, a newline), and for those each
//! pattern reduces to a few short runs within the 16 bytes at the piece's start.
//!
//! Words, the most common case, are found eight bytes at a time (SWAR letter masks and a
//! trailing-zero count); the rarer short runs (punctuation, whitespace, digits) byte by byte
//! with a flag table; contractions by the full splitters' own contraction rules, run on the
//! window. Besides ASCII it knows seven general-punctuation characters common in prose (dashes,
//! curly quotes, the ellipsis: [`punct3`]), so that `don’t`, `“Well,”` and `said.”` stay on the
//! fast path; and for gpt2 and cl100k, words of two-byte letters (Cyrillic, Greek, Arabic:
//! [`LETTERS2`]) and of Hangul syllables ([`LETTERS3`]), and pieces that start with another
//! two- or three-byte character (classed by [`class_of`]: Devanagari, combining marks, as
//! cl100k's prefix of a word or as a run), and for o200k words of cased
//! two-byte letters ([`UPPER2`], [`LOWER2`]) and of caseless ones ([`BOTH2`]: Arabic, Hebrew),
//! that fit in the window. [`fast_piece`] answers only when
//! the piece and the character that ends it lie in the 16-byte window and every character it
//! had to classify is one it knows; otherwise it says `None` and the caller asks the full
//! splitter ([`super::next_piece`]). Whenever it answers,
//! the answer is the full splitter's for every continuation of the text (the deciding byte is
//! inside the window), so it can never change a split, streaming or not.

use super::char_block::{starts_char_block_with, CHAR_BLOCKS};
use super::o200k::Rules;
use super::unicode::{
    ascii_letters, class_of, in_range, BOTH2, HIGH_BITS, LETTERS2, LETTERS3, LOWER2, LOWER_MASK,
    L_MASK, OTHER_MASK, UPPER2, UPPER_MASK,
};
use super::Pattern;

/// A piece found by [`fast_piece`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AsciiPiece {
    /// Its length in bytes (1–15; a piece the encoder's cached fast loop hands back from the
    /// full splitter may be longer, with `key` 0).
    pub len: usize,
    /// [`crate::hash::short_key`] of the piece when it is 1–7 bytes long, else 0.
    pub key: u64,
}

/// Bytes in the window.
const W: usize = 16;

// Flags of an ASCII byte in [`FLAGS`]; bytes `>= 0x80` have none.
/// `[A-Za-z]`.
const LETTER: u8 = 1;
/// `[0-9]`.
const DIGIT: u8 = 2;
/// `\s`: `\t`, `\n`, `\v`, `\f`, `\r`, space.
const SPACE: u8 = 4;
/// `\r`, `\n`.
const NEWLINE: u8 = 8;
/// `[^\s\p{L}\p{N}]`.
const OTHER: u8 = 16;
/// `[^\r\n\p{L}\p{N}]` (the optional character before a letter run).
const PREFIX: u8 = 32;
/// o200k's slash, which may follow a punctuation run with the newlines.
const SLASH: u8 = 64;

/// The flags of each byte.
static FLAGS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x80 {
        let c = b as u8;
        let f = if c.is_ascii_alphabetic() {
            LETTER
        } else if c.is_ascii_digit() {
            DIGIT
        } else if c == b'\n' || c == b'\r' {
            SPACE | NEWLINE
        } else if (c >= b'\t' && c <= 0x0D) || c == b' ' {
            SPACE | PREFIX
        } else {
            OTHER | PREFIX
        };
        t[b] = if c == b'/' { f | SLASH } else { f };
        b += 1;
    }
    t
};

/// The third byte of the UTF-8 form `E2 80 xx` of the general-punctuation characters the fast
/// path knows besides ASCII, common in prose: en and em dash (U+2013, U+2014), curly quotes
/// (U+2018, U+2019, U+201C, U+201D) and the ellipsis (U+2026). In every pattern each is a
/// `[^\s\p{L}\p{N}]` character that is not `\r` or `\n`, as ASCII punctuation is.
#[inline(always)]
fn punct3(third: u8) -> bool {
    matches!(third, 0x93 | 0x94 | 0x98 | 0x99 | 0x9C | 0x9D | 0xA6)
}

/// A two-byte code point (U+0080..=U+07FF) is `\p{L}`.
#[inline(always)]
fn is_letter2(cp: u32) -> bool {
    in_bitmap(&LETTERS2, cp)
}

/// The UTF-8 form of a three-byte code point as a big-endian number (`0xE0_80_80`..`0xEF_BF_BF`).
const fn utf8_3(cp: u32) -> u32 {
    0xE0_80_80 | (cp >> 12) << 16 | (cp >> 6 & 0x3F) << 8 | (cp & 0x3F)
}

/// Three bytes `b0 b1 b2`, packed big-endian in `v` (`0x00_b0_b1_b2`), are the UTF-8 form of a
/// [`LETTERS3`] letter. UTF-8 keeps code point order, so a well-formed sequence is in a range
/// exactly when its packed bytes lie between those of the range's ends; the continuation
/// bytes are checked, the lead is implied by the range. No decoding, no branch per byte.
#[inline(always)]
fn in_letters3(v: u32) -> bool {
    if v & 0xC0C0 != 0x8080 {
        return false;
    }
    // A `while` over the constant ranges, which the compiler unrolls into range compares.
    let mut r = 0;
    while r < LETTERS3.len() {
        let (lo, hi) = (utf8_3(LETTERS3[r].0), utf8_3(LETTERS3[r].1));
        if v.wrapping_sub(lo) <= hi - lo {
            return true;
        }
        r += 1;
    }
    false
}

/// Bit `cp` of a two-byte-character bitmap ([`LETTERS2`], [`UPPER2`], ...).
#[inline(always)]
fn in_bitmap(bitmap: &[u64; 32], cp: u32) -> bool {
    bitmap
        .get((cp >> 6) as usize)
        .is_some_and(|w| w >> (cp & 63) & 1 != 0)
}

/// The 16-byte window at the piece's start.
struct Window<'a>(&'a [u8; W]);

impl Window<'_> {
    /// Byte `i`, or 0x80 (non-ASCII, no flags) past the window.
    #[inline(always)]
    fn byte(&self, i: usize) -> u8 {
        self.0.get(i).copied().unwrap_or(0x80)
    }

    /// Flags of byte `i` (none past the window).
    #[inline(always)]
    fn flags(&self, i: usize) -> u8 {
        FLAGS[self.byte(i) as usize]
    }

    /// Byte `i` is in the window and ASCII.
    #[inline(always)]
    fn ascii(&self, i: usize) -> bool {
        self.byte(i) < 0x80
    }

    /// A [`punct3`] character starts at byte `i` and ends in the window.
    #[inline(always)]
    fn punct3_at(&self, i: usize) -> bool {
        self.byte(i) == 0xE2 && self.byte(i + 1) == 0x80 && punct3(self.byte(i + 2))
    }

    /// The fast path knows the class of the character at byte `i`: it is ASCII, or a
    /// [`punct3`] character that ends in the window.
    #[inline(always)]
    fn known(&self, i: usize) -> bool {
        self.ascii(i) || self.punct3_at(i)
    }

    /// The code point of the two-byte character (U+0080..=U+07FF) at byte `i`, when one starts
    /// there and ends in the window.
    #[inline(always)]
    fn two_byte_at(&self, i: usize) -> Option<u32> {
        let (b0, b1) = (self.byte(i), self.byte(i + 1));
        (i + 1 < W && (0xC2..=0xDF).contains(&b0) && b1 & 0xC0 == 0x80)
            .then(|| u32::from(b0 & 0x1F) << 6 | u32::from(b1 & 0x3F))
    }

    /// A two-byte letter that is cased for o200k (only uppercase, [`UPPER2`], or only
    /// lowercase, [`LOWER2`]) starts at byte `i` and ends in the window.
    #[inline(always)]
    fn cased2_at(&self, i: usize) -> bool {
        self.two_byte_at(i)
            .is_some_and(|cp| in_bitmap(&UPPER2, cp) || in_bitmap(&LOWER2, cp))
    }

    /// A two-byte letter or mark in both of o200k's letter classes ([`BOTH2`]: Arabic, Hebrew)
    /// starts at byte `i` and ends in the window.
    #[inline(always)]
    fn caseless2_at(&self, i: usize) -> bool {
        self.two_byte_at(i).is_some_and(|cp| in_bitmap(&BOTH2, cp))
    }

    /// No byte after byte `i` (`i < 7`) of the window is ASCII. Words of eight or more two-byte
    /// letters fill the window and end outside it (a fifth of Greek words), and most words
    /// end at an ASCII byte: so o200k gives up a word whose first letter is at `i` and that
    /// has no ASCII byte after it without scanning it. (Not gpt2 and cl100k, whose letter runs
    /// also end at combining marks: vowelled Arabic, a letter and a mark at a time.)
    #[inline(always)]
    fn no_ascii_after(&self, i: usize) -> bool {
        let after = (!read_word(self.0, 0) & HIGH_BITS) >> (8 * (i + 1));
        after == 0 && !read_word(self.0, 8) & HIGH_BITS == 0
    }

    /// A three-byte letter of [`LETTERS3`] (Hangul syllables) starts at byte
    /// `i` and ends in the window.
    #[inline(always)]
    fn letter3_at(&self, i: usize) -> bool {
        let Some(&[b0, b1, b2]) = self.0.get(i..i + 3) else {
            return false;
        };
        in_letters3(u32::from_be_bytes([0, b0, b1, b2]))
    }

    /// The class (a table class, as [`class_of`] gives it) of the well-formed three-byte
    /// character at byte `i` when it ends in the window; `None` for an ill-formed sequence (an
    /// overlong form, a surrogate, a bad continuation byte), whose bytes the full splitter
    /// takes one at a time. The checks on the packed bytes cost fewer instructions here than
    /// the full splitter's general decoder (`decode_valid`: +3–5 % on Indic and Arabic).
    #[inline(always)]
    fn class3_at(&self, i: usize) -> Option<u8> {
        let Some(&[b0, b1, b2]) = self.0.get(i..i + 3) else {
            return None;
        };
        let v = u32::from_be_bytes([0, b0, b1, b2]);
        if v & 0xF0_C0_C0 != 0xE0_80_80 {
            return None;
        }
        let cp = (v >> 4 & 0xF000) | (v >> 2 & 0x0FC0) | (v & 0x3F);
        if cp < 0x800 || (0xD800..0xE000).contains(&cp) {
            return None;
        }
        Some(class_of(cp))
    }

    /// The class and length of the non-ASCII character at byte `i`, when it ends in the window
    /// and the fast path knows it: a two-byte character, or a three-byte one
    /// [`Window::class3_at`] knows.
    #[inline(always)]
    fn class_at(&self, i: usize) -> Option<(u8, usize)> {
        if let Some(cp) = self.two_byte_at(i) {
            return Some((class_of(cp), 2));
        }
        self.class3_at(i).map(|class| (class, 3))
    }

    /// Whether the character at byte `i` is a letter (`\p{L}`), when the fast path knows it:
    /// ASCII, a two-byte character, or a three-byte one [`Window::class3_at`] knows.
    #[inline(always)]
    fn letter_at(&self, i: usize) -> Option<bool> {
        let b = self.byte(i);
        if b < 0x80 {
            return Some(FLAGS[b as usize] & LETTER != 0);
        }
        if let Some(cp) = self.two_byte_at(i) {
            return Some(is_letter2(cp));
        }
        self.class3_at(i).map(|class| L_MASK >> class & 1 != 0)
    }

    /// A non-ASCII `[^\s\p{L}\p{N}]` character the fast path knows (a mark, punctuation)
    /// starts at byte `i`.
    #[inline(always)]
    fn others_at(&self, i: usize) -> bool {
        self.class_at(i)
            .is_some_and(|(class, _)| OTHER_MASK >> class & 1 != 0)
    }

    /// A non-ASCII letter starts at byte `i`, and not a CJK one (whose runs mostly fill the
    /// window: see [`NON_ASCII_LEADS_3`]), so a gpt2 or cl100k letter run from it may end in
    /// the window.
    #[inline(always)]
    fn starts_short_word(&self, i: usize) -> bool {
        NON_ASCII_LEADS_3[self.byte(i) as usize] && self.letter_at(i) == Some(true)
    }

    /// The first index at or after `i` that does not start an ASCII `[^\s\p{L}\p{N}]` byte or
    /// a [`punct3`] character (`W` if none).
    #[inline(always)]
    fn others_end(&self, mut i: usize) -> usize {
        while i < W {
            if self.flags(i) & OTHER != 0 {
                i += 1;
            } else if self.punct3_at(i) {
                i += 3;
            } else {
                break;
            }
        }
        i
    }

    /// The first index at or after `i` whose byte lacks every flag in `mask` (`W` if none).
    #[inline(always)]
    fn run_end(&self, mut i: usize, mask: u8) -> usize {
        while i < W && self.flags(i) & mask != 0 {
            i += 1;
        }
        i
    }
}

impl AsciiPiece {
    /// The piece of the first `len` bytes (`1 <= len < W`) of a window whose first eight bytes
    /// are `first_word`: the key is those bytes packed as `short_key` packs them.
    #[inline(always)]
    fn new(first_word: u64, len: usize) -> AsciiPiece {
        let key = if len <= 7 {
            (first_word & ((1u64 << (8 * len)) - 1)) | (len as u64) << 56
        } else {
            0
        };
        AsciiPiece { len, key }
    }

    /// The piece of `len` bytes (`1 <= len < 16`) at `text[at..]`, found by another splitter
    /// (the block splitter), with its key (0 when fewer than eight bytes are left there).
    #[inline(always)]
    pub(crate) fn at(text: &[u8], at: usize, len: usize) -> AsciiPiece {
        match text
            .get(at..at + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
        {
            Some(first) => AsciiPiece::new(u64::from_le_bytes(first), len),
            None => AsciiPiece { len, key: 0 },
        }
    }
}

/// Index of the first byte whose high bit is set in `marks` (8 when none is).
#[inline(always)]
fn first(marks: u64) -> usize {
    (marks & HIGH_BITS).trailing_zeros() as usize / 8
}

/// `NON_ASCII_LEADS[b]`: a piece that starts with the non-ASCII byte `b` may be one
/// [`punct3_start`] decides: `b` leads a two-byte character, a [`punct3`] character (0xE2) or a
/// [`LETTERS3`] letter. Other leads (Devanagari's 0xE0, CJK's 0xE3–0xE9, four-byte characters,
/// invalid bytes) skip the call, which would only give up.
static NON_ASCII_LEADS: [bool; 256] = non_ascii_leads(false);

/// [`NON_ASCII_LEADS`] for gpt2 and cl100k, where [`punct3_start`] also
/// takes words and punctuation runs that start with a three-byte character
/// ([`multibyte_start`]: Devanagari and the other Indic scripts, Thai, Georgian, ...), but not
/// one of U+3000..=U+9FFF or U+F000..=U+FFFF (leads 0xE3–0xE9 and 0xEF: CJK, kana, fullwidth
/// punctuation): Chinese and Japanese letter runs are mostly longer than the window, and
/// walking them to give up cost 6–15 % more instructions there.
static NON_ASCII_LEADS_3: [bool; 256] = non_ascii_leads(true);

/// The table of [`NON_ASCII_LEADS`], with the three-byte leads but 0xE3–0xE9 and 0xEF when
/// `three`.
const fn non_ascii_leads(three: bool) -> [bool; 256] {
    let mut t = [false; 256];
    if three {
        let mut b = 0xE0;
        while b <= 0xEF {
            t[b] = !(0xE3 <= b && b <= 0xE9) && b != 0xEF;
            b += 1;
        }
    }
    let mut b = 0xC2;
    while b <= 0xDF {
        t[b] = true;
        b += 1;
    }
    t[0xE2] = true;
    let mut r = 0;
    while r < LETTERS3.len() {
        let (lo, hi) = LETTERS3[r];
        assert!(
            0x800 <= lo && hi <= 0xFFFF,
            "LETTERS3 holds three-byte characters"
        );
        let mut lead = 0xE0 | (lo >> 12) as usize;
        while lead <= 0xE0 | (hi >> 12) as usize {
            t[lead] = true;
            lead += 1;
        }
        r += 1;
    }
    t
}

/// Little-endian word of `bytes[at..at + 8]` (zero if out of range).
#[inline(always)]
fn read_word(bytes: &[u8; W], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0, u64::from_le_bytes)
}

/// What the fast path says about the piece at a position ([`fast_piece`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fast {
    /// The piece, decided.
    Piece(AsciiPiece),
    /// Not decided, and a character block may start here (64-bit targets only: see
    /// [`super::char_block`]), which the encoder asks for.
    CharBlock,
    /// Not decided: ask the full splitter.
    Full,
}

/// The piece at `text[start..]` when the ASCII fast path can decide it (see the module docs);
/// else whether a character block may start there, or that the full splitter must decide
/// (also when fewer than 16 bytes are left).
///
/// Words are found from the first eight bytes as one register (the second eight only for a
/// word that fills them); everything else goes to [`ascii_rest`], kept out of line so that the
/// word path stays short.
#[inline(always)]
pub(crate) fn fast_piece(pattern: Pattern, text: &[u8], start: usize) -> Fast {
    ascii_piece_for::<CHAR_BLOCKS>(pattern, text, start)
}

/// The length an inner function answers with for "a character block may start here".
const CHAR_BLOCK_HERE: usize = 0;

/// [`fast_piece`], which gives up the pieces a character block takes when `CHAR` (the
/// encoder's choice on 64-bit targets: see [`super::char_block`]), and decides them itself
/// when not (elsewhere; the tests check both).
#[inline(always)]
fn ascii_piece_for<const CHAR: bool>(pattern: Pattern, text: &[u8], start: usize) -> Fast {
    if matches!(pattern, Pattern::Llama3 | Pattern::Qwen2) {
        // Not taught these patterns' rules: the full splitter decides.
        return Fast::Full;
    }
    let Some(bytes) = start
        .checked_add(W)
        .and_then(|end| text.get(start..end))
        .and_then(|b| <&[u8; W]>::try_from(b).ok())
    else {
        return Fast::Full;
    };
    let w0 = read_word(bytes, 0);
    let b0 = w0 as u8;
    // The inner functions answer with the piece's length; the piece (with its key, which
    // the caller may not need) is made here, where the compiler can drop what is unused.
    let piece = |len: Option<usize>| match len {
        Some(CHAR_BLOCK_HERE) => Fast::CharBlock,
        Some(len) => Fast::Piece(AsciiPiece::new(w0, len)),
        None => Fast::Full,
    };
    if b0 >= 0x80 {
        // A character block takes it (64-bit targets only).
        if CHAR && starts_char_block_with(pattern, b0, (w0 >> 8) as u8) {
            return Fast::CharBlock;
        }
        let leads = match pattern {
            Pattern::Gpt2 | Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => {
                &NON_ASCII_LEADS_3
            }
            Pattern::O200k | Pattern::Tekken => &NON_ASCII_LEADS,
        };
        if !leads[b0 as usize] {
            return Fast::Full;
        }
        return piece(punct3_start(pattern, bytes));
    }
    let letters = ascii_letters(w0);
    // `p`: index of the word's first letter (after an optional prefix character).
    let p = if letters & 0x80 != 0 {
        0
    } else if letters & 0x8000 != 0
        && match pattern {
            Pattern::Gpt2 => b0 == b' ',
            // cl100k tries `'` + a contraction first (see `cl100k_rest`).
            Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => {
                FLAGS[b0 as usize] & PREFIX != 0 && b0 != b'\''
            }
            Pattern::O200k | Pattern::Tekken => FLAGS[b0 as usize] & PREFIX != 0,
        }
    {
        1
    } else {
        return piece(ascii_rest::<CHAR>(pattern, bytes));
    };
    piece(word(pattern, bytes, w0, letters, p))
}

/// The word whose first letter is byte `p` of the window (`p < 8`; bytes before it are the
/// prefix character), found from the first word `w0` (with its letter mask `letters`) as one
/// register, and from the second only for a word that fills the first.
#[inline(always)]
fn word(pattern: Pattern, bytes: &[u8; W], w0: u64, letters: u64, p: usize) -> Option<usize> {
    let from_p = HIGH_BITS << (8 * p);
    let (end, stop) = match pattern {
        Pattern::Gpt2 | Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => {
            let end = first(!letters & from_p);
            if end < 8 {
                (end, w0 >> (8 * end))
            } else {
                let w1 = read_word(bytes, 8);
                let end = first(!ascii_letters(w1));
                if end >= 8 {
                    return None;
                }
                (8 + end, w1 >> (8 * end))
            }
        }
        Pattern::O200k | Pattern::Tekken => {
            // Uppercase run within the first word, then lowercase run (into the second word
            // when it fills the first).
            let upper_end = first(!in_range(w0, b'A', b'Z') & from_p);
            if upper_end >= 8 {
                return None;
            }
            let end = first(!in_range(w0, b'a', b'z') & HIGH_BITS << (8 * upper_end));
            let (end, stop) = if end < 8 {
                (end, w0 >> (8 * end))
            } else {
                let w1 = read_word(bytes, 8);
                let end = first(!in_range(w1, b'a', b'z'));
                if end >= 8 {
                    return None;
                }
                (8 + end, w1 >> (8 * end))
            };
            if stop as u8 == b'\'' && Rules::of(pattern).contractions {
                return o200k_contraction(bytes, end);
            }
            (end, stop)
        }
    };
    // The stop must be a character the fast path knows (a letter or a combining mark would
    // continue the word).
    if stop as u8 >= 0x80 && !Window(bytes).punct3_at(end) {
        return None;
    }
    Some(end)
}

/// A piece that starts with a non-ASCII character: a [`punct3`] character (in cl100k and o200k
/// the prefix of a word of ASCII letters when one follows, else, and in gpt2, a punctuation run
/// with its tail), in gpt2 and cl100k what [`multibyte_start`] takes (letter runs, cl100k's
/// prefixed words, mark and punctuation runs), and in o200k a word of cased or of caseless
/// two-byte letters.
#[inline(never)]
fn punct3_start(pattern: Pattern, bytes: &[u8; W]) -> Option<usize> {
    let w = Window(bytes);
    if !w.punct3_at(0) {
        return match pattern {
            // Letter runs, prefixed words (vowelled Arabic is a mark and a letter at a time)
            // and mark runs, from the first character's class.
            Pattern::Gpt2 | Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => {
                multibyte_start(pattern, &w)
            }
            Pattern::O200k | Pattern::Tekken if w.cased2_at(0) => o200k_letters(pattern, &w, 0),
            Pattern::O200k | Pattern::Tekken if w.caseless2_at(0) => o200k_caseless(pattern, &w, 0),
            Pattern::O200k | Pattern::Tekken => None,
        };
    }
    if pattern != Pattern::Gpt2 && w.flags(3) & LETTER != 0 {
        let w0 = read_word(bytes, 0);
        return word(pattern, bytes, w0, ascii_letters(w0), 3);
    }
    // Not a word: an unknown character at byte 3 could be a letter, and stops the run below.
    let e = w.others_end(3);
    if e >= W || !w.ascii(e) {
        return None;
    }
    let e = match pattern {
        Pattern::Gpt2 => e,
        Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => w.run_end(e, NEWLINE),
        Pattern::O200k | Pattern::Tekken => w.run_end(e, NEWLINE | SLASH),
    };
    if e < W {
        Some(e)
    } else {
        None
    }
}

/// The pieces of [`fast_piece`] that are not words.
#[inline(never)]
fn ascii_rest<const CHAR: bool>(pattern: Pattern, bytes: &[u8; W]) -> Option<usize> {
    let w = Window(bytes);
    match pattern {
        Pattern::Gpt2 => gpt2_rest::<CHAR>(&w),
        Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => cl100k_rest::<CHAR>(&w),
        // o200k: `\p{N}{1,3}`, `` ?[^\s\p{L}\p{N}]+[\r\n/]*``, then whitespace.
        Pattern::O200k | Pattern::Tekken if w.known(1) => {
            let max_digits = Rules::of(pattern).max_digits;
            numbers_punctuation_whitespace(&w, NEWLINE | SLASH, max_digits)
        }
        // A prefix character and a word that starts with a cased two-byte letter.
        Pattern::O200k | Pattern::Tekken if w.flags(0) & PREFIX != 0 && w.cased2_at(1) => {
            o200k_letters(pattern, &w, 1)
        }
        // A prefix character and a word of caseless two-byte letters (Arabic, Hebrew).
        Pattern::O200k | Pattern::Tekken if w.flags(0) & PREFIX != 0 && w.caseless2_at(1) => {
            o200k_caseless(pattern, &w, 1)
        }
        Pattern::O200k | Pattern::Tekken => None,
    }
}

/// An o200k word of `e` bytes followed by `'`: the word with an optional
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, as the full splitter decides it within the window. `None`
/// when that fills the window: the contraction may end on its last byte, and pieces are at
/// most 15 bytes (the cache keys hold no more).
#[inline(never)]
fn o200k_contraction(bytes: &[u8; W], e: usize) -> Option<usize> {
    let end = super::o200k::with_contraction(bytes, e, false)?;
    if end >= W {
        return None;
    }
    Some(end)
}

/// A whitespace run at the window's start, as cl100k and o200k split it. The run must end in
/// the window at an ASCII non-space byte (so cl100k's `\s++$` cannot match); the piece is then
/// up to and including the run's last `\r`/`\n` if it has one (`\s*[\r\n]`, `\s*[\r\n]+`),
/// else all but its last character when it has two or more (`\s+(?!\S)`), else the one
/// character.
#[inline(always)]
fn whitespace(w: &Window<'_>) -> Option<usize> {
    let mut i = 0;
    let mut after_newline = 0;
    while i < W && w.flags(i) & SPACE != 0 {
        if w.flags(i) & NEWLINE != 0 {
            after_newline = i + 1;
        }
        i += 1;
    }
    if i >= W || !w.known(i) {
        return None;
    }
    Some(if after_newline > 0 {
        after_newline
    } else if i >= 2 {
        i - 1
    } else {
        1
    })
}

/// Up to `max` digits at the window's start (`\p{N}{1,3}`: 3; Tekken's `\p{N}`: 1); a
/// non-ASCII byte before the last could be a number.
#[inline(always)]
fn digits(w: &Window<'_>, max: u8) -> Option<usize> {
    let max = usize::from(max);
    let e = w.run_end(0, DIGIT).min(max);
    if e == max || w.known(e) {
        Some(e)
    } else {
        None
    }
}

/// A punctuation run: an optional space, ASCII `[^\s\p{L}\p{N}]` from `p`, then the bytes
/// with a flag in `tail`. `None` when byte `p` is not such a character (another alternative
/// applies); `Some(None)` when the run does not end in the window at an ASCII byte.
#[inline(always)]
fn punctuation(w: &Window<'_>, tail: u8) -> Option<Option<usize>> {
    let p = usize::from(w.byte(0) == b' ');
    if w.flags(p) & OTHER == 0 && !w.punct3_at(p) {
        return None;
    }
    let e = w.others_end(p);
    if e >= W || !w.ascii(e) {
        return Some(None);
    }
    let e = w.run_end(e, tail);
    Some((e < W).then_some(e))
}

/// cl100k_base pieces that are not words: `'(?i:[sdmt]|ll|ve|re)`, `\p{N}{1,3}+`,
/// `` ?[^\s\p{L}\p{N}]++[\r\n]*+``, then the whitespace alternatives.
#[inline(always)]
fn cl100k_rest<const CHAR: bool>(w: &Window<'_>) -> Option<usize> {
    let b0 = w.byte(0);
    if b0 == b'\'' {
        if let Some(len) = super::cl100k::contraction(w.0, 1, false)? {
            return Some(len);
        }
    }
    // The prefix-and-letters alternative is ruled out only if byte 1 is known, or a prefix
    // character and a word that starts with a two-byte letter (Cyrillic, Greek, Arabic, ...;
    // `'` only when it did not start a contraction, above).
    if !w.known(1) {
        return if CHAR && starts_char_block_with(Pattern::Cl100k, b0, w.byte(1)) {
            // A character block takes it (64-bit targets only).
            Some(CHAR_BLOCK_HERE)
        } else if w.flags(0) & PREFIX != 0 && w.starts_short_word(1) {
            letter_run(w, 1)
        } else if w.byte(0) == b' ' && w.others_at(1) {
            // ` ?[^\s\p{L}\p{N}]++[\r\n]*+` with the space (not a prefix: no letter follows).
            others_then_tail(Pattern::Cl100k, w, 1)
        } else {
            None
        };
    }
    if b0 == b'\'' && w.flags(1) & LETTER != 0 {
        // `'` + letters, not a contraction: the prefix alternative.
        let e = w.run_end(1, LETTER);
        return if w.known(e) { Some(e) } else { None };
    }
    numbers_punctuation_whitespace(w, NEWLINE, 3)
}

/// The end of a letter run (gpt2's `\p{L}+`, cl100k's `\p{L}++`) continuing at byte `i`, over
/// ASCII, two-byte and three-byte letters (Hangul by [`Window::letter3_at`], the others by
/// [`Window::class3_at`]); the character that ends it must be one the fast path knows not to be
/// a letter (ASCII, or a well-formed two- or three-byte non-letter such as a combining mark, an
/// Arabic digit or a [`punct3`] character). Dispatched on the lead byte: a three-byte letter
/// is not first tried as a two-byte one (callgrind warm pass, cl100k_base Indic, 16 MiB:
/// 58.21M → 56.88M instructions).
#[inline(always)]
fn letter_run(w: &Window<'_>, mut i: usize) -> Option<usize> {
    // Each character is classified once: the test that does not take it also tells whether
    // the fast path knows it (an ASCII byte or a two-byte character does; past the window,
    // `byte` reads 0x80, which is neither, nor a three-byte letter or `punct3`).
    loop {
        let b = w.byte(i);
        if b < 0x80 {
            if FLAGS[b as usize] & LETTER == 0 {
                return Some(i);
            }
            i += 1;
        } else if b < 0xE0 {
            let cp = w.two_byte_at(i)?;
            if !is_letter2(cp) {
                return Some(i);
            }
            i += 2;
        } else {
            // Three-byte letters come in runs (Devanagari, Hangul, Thai): take the run before
            // looking at the lead byte again.
            loop {
                // Hangul syllables by their packed bytes, the rest by their class.
                if !w.letter3_at(i) && L_MASK >> w.class3_at(i)? & 1 == 0 {
                    return Some(i);
                }
                i += 3;
                if w.byte(i) < 0xE0 {
                    break;
                }
            }
        }
    }
}

/// A gpt2 or cl100k piece that starts with a non-ASCII character other than a [`punct3`] one,
/// when [`Window::class_at`] classes it (any well-formed two- or three-byte one in the window;
/// [`NON_ASCII_LEADS_3`] keeps CJK's out): a letter run (`\p{L}+`), in cl100k a mark or punctuation
/// character before one (`[^\r\n\p{L}\p{N}]?+\p{L}++`: Devanagari's vowel signs are marks,
/// so most of its pieces are a sign and the letters after it), else a run of such characters
/// (` ?[^\s\p{L}\p{N}]+`, in cl100k with `[\r\n]*`: vowelled Arabic's stacked marks). A
/// number or a space is given up.
#[inline(always)]
fn multibyte_start(pattern: Pattern, w: &Window<'_>) -> Option<usize> {
    let (class, len) = w.class_at(0)?;
    if L_MASK >> class & 1 != 0 {
        return letter_run(w, len);
    }
    if OTHER_MASK >> class & 1 == 0 {
        return None;
    }
    if pattern == Pattern::Cl100k && w.letter_at(len)? {
        return letter_run(w, len);
    }
    others_then_tail(pattern, w, len)
}

/// The end of a run of `[^\s\p{L}\p{N}]` characters (ASCII, or non-ASCII ones that
/// [`Window::class_at`] knows) continuing at byte `i`, then, in cl100k, of the `[\r\n]` run
/// after it: `None` unless the character that ends each is one the fast path knows.
#[inline(always)]
fn others_then_tail(pattern: Pattern, w: &Window<'_>, mut i: usize) -> Option<usize> {
    loop {
        let b = w.byte(i);
        if b < 0x80 {
            if FLAGS[b as usize] & OTHER == 0 {
                break;
            }
            i += 1;
        } else {
            let (class, len) = w.class_at(i)?;
            if OTHER_MASK >> class & 1 == 0 {
                // A letter, number or space, not `\r` or `\n`: no tail.
                return Some(i);
            }
            i += len;
        }
    }
    let e = match pattern {
        Pattern::Gpt2 => i,
        Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => w.run_end(i, NEWLINE),
        Pattern::O200k | Pattern::Tekken => w.run_end(i, NEWLINE | SLASH),
    };
    (e < W).then_some(e)
}

/// The end of o200k's word (`[U]*[L]+` or `[U]+[L]*`, with `U` and `L` its uppercase and
/// lowercase classes, then the optional contraction) whose first letter is byte `start`, over
/// ASCII letters and the two-byte letters that are in only one of the classes ([`UPPER2`],
/// [`LOWER2`]: Cyrillic, Greek, Armenian): a run of capitals, then a run of small letters.
/// Since no letter it takes is in both classes, that is the regex's match. The character that
/// ends it must be one the fast path knows and neither run would take: ASCII or a [`punct3`]
/// character, or a two-byte character outside `L` (a two-byte capital is in the first run).
/// A modifier letter or a mark, in both classes, is not taken, so it ends the fast path's
/// answer.
#[inline(always)]
fn o200k_letters(pattern: Pattern, w: &Window<'_>, start: usize) -> Option<usize> {
    if w.no_ascii_after(start) {
        return None;
    }
    let capitals_end = cased_run_end(w, start, u8::is_ascii_uppercase, &UPPER2);
    let i = cased_run_end(w, capitals_end, u8::is_ascii_lowercase, &LOWER2);
    if i == start {
        return None;
    }
    if w.byte(i) == b'\'' && Rules::of(pattern).contractions {
        return o200k_contraction(w.0, i);
    }
    if w.known(i) {
        return Some(i);
    }
    // A two-byte capital would have been taken by the first run, so only `L` can go on.
    if LOWER_MASK >> class_of(w.two_byte_at(i)?) & 1 == 0 {
        Some(i)
    } else {
        None
    }
}

/// The end of o200k's word whose first character is byte `start`, when it is a run of two-byte
/// letters and marks that are in both of o200k's classes ([`BOTH2`]: Arabic, Hebrew, with
/// their vowel marks), ended by a character in neither class, then the optional contraction.
/// `[U]*[L]+` takes the whole run: its first part takes every character, gives the last one
/// back to `[L]+` (which needs one), and `[L]+` can take no more. The character that ends the
/// run must be one the fast path knows: ASCII other than a letter, a [`punct3`] character, or
/// a two-byte character that is not a letter or a mark (a digit, `،`); a run that goes on with
/// a cased letter is given up.
#[inline(always)]
fn o200k_caseless(pattern: Pattern, w: &Window<'_>, start: usize) -> Option<usize> {
    if w.no_ascii_after(start) {
        return None;
    }
    let mut i = start;
    while w.caseless2_at(i) {
        i += 2;
    }
    if w.byte(i) == b'\'' && Rules::of(pattern).contractions {
        return o200k_contraction(w.0, i);
    }
    if w.ascii(i) {
        return (w.flags(i) & LETTER == 0).then_some(i);
    }
    if w.punct3_at(i) {
        return Some(i);
    }
    if (UPPER_MASK | LOWER_MASK) >> class_of(w.two_byte_at(i)?) & 1 == 0 {
        Some(i)
    } else {
        None
    }
}

/// The end of the run at byte `i` of ASCII letters that `ascii` accepts and two-byte letters in
/// `bitmap` ([`UPPER2`] or [`LOWER2`]), within the window.
#[inline(always)]
fn cased_run_end(
    w: &Window<'_>,
    mut i: usize,
    ascii: fn(&u8) -> bool,
    bitmap: &[u64; 32],
) -> usize {
    loop {
        if ascii(&w.byte(i)) {
            i += 1;
        } else if w.two_byte_at(i).is_some_and(|cp| in_bitmap(bitmap, cp)) {
            i += 2;
        } else {
            return i;
        }
    }
}

/// The alternatives cl100k_base, o200k_base and Tekken share after their letter rules:
/// `\p{N}{1,max_digits}`, `` ?[^\s\p{L}\p{N}]+`` followed by the bytes flagged in `tail`
/// (cl100k: `[\r\n]*`, o200k and Tekken: `[\r\n/]*`), then the whitespace alternatives. The caller has seen that byte 1 is ASCII,
/// so the letter alternatives are ruled out.
#[inline(always)]
fn numbers_punctuation_whitespace(w: &Window<'_>, tail: u8, max_digits: u8) -> Option<usize> {
    let f0 = w.flags(0);
    if f0 & DIGIT != 0 {
        return digits(w, max_digits);
    }
    if let Some(piece) = punctuation(w, tail) {
        return piece;
    }
    if f0 & SPACE != 0 {
        return whitespace(w);
    }
    None
}

/// GPT-2 pieces that are not words: `'(?:[sdmt]|ll|ve|re)`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`,
/// `\s+(?!\S)`, `\s+`.
#[inline(always)]
fn gpt2_rest<const CHAR: bool>(w: &Window<'_>) -> Option<usize> {
    if !w.known(1) {
        // ` ?\p{L}+` with the space, when the word starts with a two-byte or [`LETTERS3`]
        // letter (unless a character block takes it: 64-bit targets only).
        return if CHAR && starts_char_block_with(Pattern::Gpt2, w.byte(0), w.byte(1)) {
            Some(CHAR_BLOCK_HERE)
        } else if w.byte(0) == b' ' && w.starts_short_word(1) {
            letter_run(w, 1)
        } else if w.byte(0) == b' ' && w.others_at(1) {
            // ` ?[^\s\p{L}\p{N}]+` with the space.
            others_then_tail(Pattern::Gpt2, w, 1)
        } else {
            None
        };
    }
    let b0 = w.byte(0);
    if b0 == b'\'' {
        if let Some(len) = super::gpt2::contraction(w.0, 0, false)? {
            return Some(len);
        }
    }
    let p = usize::from(b0 == b' ');
    let class = w.flags(p) & (DIGIT | OTHER);
    if class == DIGIT {
        let e = w.run_end(p, DIGIT);
        return if e < W && w.known(e) { Some(e) } else { None };
    }
    if class == OTHER || w.punct3_at(p) {
        let e = w.others_end(p);
        return if e < W && w.ascii(e) { Some(e) } else { None };
    }
    if w.flags(0) & SPACE == 0 {
        return None;
    }
    // All but the last character of a run of two or more followed by a non-space, else the
    // run (here: its one character).
    let r = w.run_end(0, SPACE);
    if r >= W || !w.known(r) {
        return None;
    }
    Some(if r >= 2 { r - 1 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::short_key;
    use crate::pretok::test_random::random_below;
    use crate::pretok::{next_piece, Step};

    /// Checks the fast path at every position of `text` against the full splitter (final and
    /// not final) and the key against `short_key`, as it is where the encoder has no character
    /// blocks (32-bit targets) and where it has; returns how often the former answered (the
    /// latter answers where it does, less where a character block may start).
    fn check(pattern: Pattern, bytes: &[u8]) -> usize {
        let mut answered = 0;
        for start in 0..bytes.len() {
            let with_blocks = ascii_piece_for::<true>(pattern, bytes, start);
            if with_blocks == Fast::CharBlock {
                assert!(
                    crate::pretok::char_block::starts_char_block(pattern, bytes, start),
                    "{pattern:?} at {start}: no character block starts there"
                );
            }
            let without = ascii_piece_for::<false>(pattern, bytes, start);
            let Fast::Piece(p) = without else {
                assert_eq!(without, Fast::Full, "{pattern:?} at {start}");
                assert!(
                    !matches!(with_blocks, Fast::Piece(_)),
                    "{pattern:?} at {start}"
                );
                continue;
            };
            assert!(
                matches!(with_blocks, Fast::CharBlock) || with_blocks == Fast::Piece(p),
                "{pattern:?} at {start}"
            );
            answered += 1;
            // The contract the cached loop's keys rely on: 1–15 bytes.
            assert!(
                (1..W).contains(&p.len),
                "{pattern:?} at {start}: a piece of {} bytes",
                p.len
            );
            for is_final in [true, false] {
                assert_eq!(
                    next_piece(pattern, bytes, start, is_final),
                    Step::Piece { end: start + p.len },
                    "{pattern:?} at {start} of {:?}",
                    String::from_utf8_lossy(bytes)
                );
            }
            assert_eq!(p.key, short_key(&bytes[start..start + p.len]));
        }
        answered
    }

    const PATTERNS: [Pattern; 4] = [
        Pattern::Gpt2,
        Pattern::Cl100k,
        Pattern::O200k,
        Pattern::Tekken,
    ];

    /// How often the fast path answered over `strings` texts from `make`, each run through
    /// [`check`].
    fn answered_on(pattern: Pattern, strings: usize, mut make: impl FnMut() -> Vec<u8>) -> usize {
        (0..strings).map(|_| check(pattern, &make())).sum()
    }

    /// A text rich in the edge cases: prefixes, apostrophes, case changes, digit runs,
    /// whitespace runs with and without newlines, slashes, non-ASCII letters, numbers,
    /// spaces and punctuation right after ASCII runs.
    #[test]
    fn agrees_with_the_full_splitter_on_edge_cases() {
        let text = "Hello, world! It's a TEST of HTTPServer's fooBar (x) \"quoted\" \
                    caf\u{e9} na\u{ef}ve 123abc abc123 1234567 \ttab\r\nline's WON'T 'twas \
                    \u{5f}under_score a-b a/b ABCdef abcDEF aBcDeF IVs I'm he'd WE'D don't X y z! \
                    ./\n/x ...\n\n   \n  x  \t\n y\u{a0}z 12\u{663} x\u{2003}\u{2003}y 'S 'LL \
                    'ſ '\u{e9} \u{201c}Well,\u{201d} he said.\u{201d}\n\n  end?\r\n\r\n--abc \
                    don\u{2019}t \u{2018}Tis\u{2019} \u{201c}I\u{2019}LL\u{201d}\u{2014}no\u{2026}\n\
                    x\u{2013}y 7\u{2019}s \u{2019}\u{2019}/\n\u{201d}\u{2020}a\u{2028}b\u{2003}c";
        for pattern in PATTERNS {
            let answered = check(pattern, text.as_bytes());
            assert!(
                answered > 100,
                "{pattern:?}: fast path answered only {answered} times"
            );
        }
    }

    /// Random strings over an alphabet of the bytes the rules distinguish (and a few
    /// non-ASCII characters), 3 000 per pattern, with a fixed-seed generator.
    #[test]
    fn agrees_with_the_full_splitter_on_random_text() {
        // The general-punctuation characters: the ones the fast path knows (`punct3`) and, with
        // the same first two bytes, a dagger, a line separator (`\s`) and an em space (`\s`).
        const ALPHABET: [&str; 49] = [
            "a", "Z", "q", "S", "s", "t", "l", "e", "v", "r", "d", "m", "L", "E", "T", "D", "7",
            " ", " ", "\t", "\n", "\r", "'", "'", "/", ".", ",", "-", "\u{e9}", "\u{a0}",
            "\u{663}", "\u{201d}", "\u{2019}", "\u{2014}", "\u{2026}", "\u{2020}", "\u{2028}",
            "\u{2003}",
            // Two-byte characters: letters (Cyrillic, Greek, Arabic, long s, a modifier letter),
            // a combining mark, an Arabic-Indic digit, punctuation, NEL (`\s`).
            "\u{434}", "\u{42f}", "\u{3c9}", "\u{639}", "\u{17f}", "\u{2c6}", "\u{64b}", "\u{661}",
            "\u{ab}", "\u{37e}", "\u{85}",
        ];
        let mut next = random_below(0x2545_f491_4f6c_dd1d);
        // Miri runs a handful (the splitters are the same code; it checks memory, not logic).
        let strings = if cfg!(miri) { 3 } else { 3000 };
        for pattern in PATTERNS {
            let answered = answered_on(pattern, strings, || {
                let len = 16 + next(48);
                (0..len)
                    .flat_map(|_| ALPHABET[next(ALPHABET.len())].bytes())
                    .collect()
            });
            assert!(
                answered > strings * 3,
                "{pattern:?}: answered only {answered} times"
            );
        }
    }

    /// Random word-shaped text: words of 1–16 letters from all of `[A-Za-z]`, each a run of
    /// capitals then a run of small letters or mixed case, with separators (space, apostrophe
    /// contractions, punctuation, digits, a non-ASCII letter) between them. The random strings
    /// above rarely make words long enough to reach the window's second word.
    #[test]
    fn agrees_with_the_full_splitter_on_random_words() {
        const SEPARATORS: [&str; 15] = [
            " ",
            " ",
            " ",
            "'s ",
            "'LL",
            ", ",
            ".\n",
            "7",
            "\u{e9}",
            "/",
            "\u{2019}",
            " \u{201c}",
            ",\u{201d}\n\n",
            "\u{2014}",
            "\u{2026} ",
        ];
        let mut next = random_below(0x9e37_79b9_7f4a_7c15);
        let strings = if cfg!(miri) { 3 } else { 2000 };
        for pattern in PATTERNS {
            let answered = answered_on(pattern, strings, || {
                let mut text = Vec::new();
                while text.len() < 48 {
                    let len = 1 + next(16);
                    let capitals = match next(3) {
                        0 => 0,
                        1 => 1,
                        _ => next(len + 1),
                    };
                    for i in 0..len {
                        let letter = b'a' + next(26) as u8;
                        let capital = if capitals == len && next(4) == 0 {
                            next(2) == 0 // mixed case
                        } else {
                            i < capitals
                        };
                        text.push(if capital {
                            letter.to_ascii_uppercase()
                        } else {
                            letter
                        });
                    }
                    text.extend_from_slice(SEPARATORS[next(SEPARATORS.len())].as_bytes());
                }
                text
            });
            assert!(
                answered > strings * 10,
                "{pattern:?}: answered only {answered} times"
            );
        }
    }

    /// Random words of two-byte letters (Cyrillic, Greek and Armenian capitals and small
    /// letters, Arabic, a titlecase and a modifier letter, with ASCII letters, Hangul, a CJK
    /// ideograph and a kana mixed in) of 1–9 characters, between the separators the three
    /// patterns' fast paths must decide on: spaces, contractions,
    /// punctuation, combining marks, Arabic-Indic digits, apostrophes, `«`, no-break spaces,
    /// superscript digits (`\p{N}`, not a prefix), U+0085 (whitespace), the ideographic full
    /// stop and space, U+D7A4 (just past the Hangul syllables: not a letter).
    #[test]
    fn agrees_with_the_full_splitter_on_random_two_byte_words() {
        const LETTERS: [&str; 22] = [
            "\u{434}", "\u{41c}", "\u{44f}", "\u{3b1}", "\u{3a9}", "\u{3ac}", "\u{627}", "\u{644}",
            "\u{639}", "\u{17f}", "a", "Z", "\u{d55c}", "\u{ac00}", "\u{d7a3}", "\u{4e2d}",
            "\u{3042}", "\u{1c5}", "\u{2c6}", "\u{3c2}", "\u{531}", "\u{561}",
        ];
        const SEPARATORS: [&str; 21] = [
            " ",
            " ",
            " ",
            ", ",
            ".\n",
            "\u{64b}",
            "\u{661}2",
            "'",
            "'\u{17f}",
            "\u{ab}",
            "\u{a0}",
            "\u{2014}",
            "\u{64e}",
            "\u{b2}",
            "\u{85}",
            "\u{64b}\u{651}",
            "\u{3002}",
            "\u{d7a4}",
            "\u{3000}",
            "'s ",
            "'RE",
        ];
        let mut next = random_below(0x6a09_e667_f3bc_c908);
        let strings = if cfg!(miri) { 3 } else { 2000 };
        for pattern in PATTERNS {
            let answered = answered_on(pattern, strings, || {
                let mut text = String::new();
                while text.len() < 48 {
                    for _ in 0..1 + next(9) {
                        text.push_str(LETTERS[next(LETTERS.len())]);
                    }
                    text.push_str(SEPARATORS[next(SEPARATORS.len())]);
                }
                text.into_bytes()
            });
            // Before the gpt2 and o200k fast paths took two-byte words, they answered 1,735
            // and 1,547 times here.
            let least = match pattern {
                Pattern::Gpt2 | Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => strings * 5,
                Pattern::O200k | Pattern::Tekken => strings * 3,
            };
            assert!(
                answered > least,
                "{pattern:?}: answered only {answered} times"
            );
        }
    }

    /// Random text of three-byte characters (Devanagari letters, vowel signs and other marks,
    /// digits and the danda; CJK ideographs, kana, the ideographic space and full stop; a
    /// zero-width joiner; the general punctuation [`punct3`] knows and a dagger, which it does
    /// not) with ASCII, two-byte characters, Hangul, a four-byte letter and ill-formed
    /// three-byte sequences (overlong, surrogate, truncated, bad continuation) mixed in: the
    /// characters [`multibyte_start`] and the generalised [`letter_run`] classify.
    #[test]
    fn agrees_with_the_full_splitter_on_random_three_byte_text() {
        const PARTS: [&[u8]; 40] = [
            "\u{915}".as_bytes(),  // क
            "\u{928}".as_bytes(),  // न
            "\u{905}".as_bytes(),  // अ
            "\u{93e}".as_bytes(),  // ा (Mc)
            "\u{93f}".as_bytes(),  // ि (Mc)
            "\u{941}".as_bytes(),  // ु (Mn)
            "\u{94d}".as_bytes(),  // ् (virama, Mn)
            "\u{902}".as_bytes(),  // ं (Mn)
            "\u{93c}".as_bytes(),  // nukta (Mn)
            "\u{966}".as_bytes(),  // ० (Nd)
            "\u{964}".as_bytes(),  // । (Po)
            "\u{97d}".as_bytes(),  // a Devanagari letter (Lo) at the block's end
            "\u{200d}".as_bytes(), // ZWJ (Cf)
            "\u{4e2d}".as_bytes(),
            "\u{6587}".as_bytes(),
            "\u{3042}".as_bytes(),
            "\u{30ab}".as_bytes(),
            "\u{3000}".as_bytes(), // ideographic space (\s)
            "\u{3002}".as_bytes(), // 。
            "\u{ff0c}".as_bytes(), // ，
            "\u{2019}".as_bytes(),
            "\u{2014}".as_bytes(),
            "\u{2020}".as_bytes(),
            "\u{2160}".as_bytes(), // Ⅰ (Nl: \p{N})
            "\u{d55c}".as_bytes(),
            "\u{20000}".as_bytes(), // a four-byte letter
            "\u{434}".as_bytes(),
            "\u{64b}".as_bytes(),
            b"\xE0\x80\x80", // overlong
            b"\xED\xA0\x80", // surrogate
            b"\xE0\xA4",     // truncated
            b"\xE0\xA4A",    // bad continuation
            b"a",
            b"Z",
            b" ",
            b" ",
            b"\n",
            b"'",
            b".",
            b"7",
        ];
        let mut next = random_below(0xbb67_ae85_84ca_a73b);
        let strings = if cfg!(miri) { 3 } else { 3000 };
        for pattern in PATTERNS {
            let answered = answered_on(pattern, strings, || {
                let mut text = Vec::new();
                while text.len() < 48 {
                    text.extend_from_slice(PARTS[next(PARTS.len())]);
                }
                text
            });
            // o200k takes no three-byte word (its letter classes hold the marks).
            let least = match pattern {
                Pattern::Gpt2 | Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => strings * 4,
                Pattern::O200k | Pattern::Tekken => strings / 2,
            };
            assert!(
                answered > least,
                "{pattern:?}: answered only {answered} times"
            );
        }
    }
}
