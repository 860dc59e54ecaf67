//! Character decoding and classification shared by the three splitters.
//!
//! The splitters see the text as a sequence of *characters*, each with a class from the generated
//! tables ([`super::unicode_tables`]) and a byte length:
//! - an ASCII byte is looked up in a 128-entry table (no decoding);
//! - a well-formed UTF-8 sequence (Unicode Table 3-7: no overlongs, no surrogates, ≤ U+10FFFF) is
//!   decoded by hand and looked up in the two-level table (on 64-bit targets, in a flat table of
//!   the Basic Multilingual Plane derived from it);
//! - every other byte is one character of class `OTHER` (the invalid-UTF-8 rule);
//! - at the end of the text, [`peek`] reports the pseudo-class `END` when the text is final, and
//!   `MORE` when it is not (more bytes may follow), also for a truncated but so far well-formed
//!   sequence, whose class is unknown until its last byte arrives.

use crate::utf8::{self, Utf8};

use super::unicode_tables::{
    ASCII, BLOCKS, BLOCK_INDEX, BLOCK_SHIFT, FOLDS, HIGH, LIMIT, LL, LM, LO, LT, LU, M, N, OTHER,
    WS,
};

/// Pseudo-class: the final text ends here.
pub(crate) const END: u8 = 14;
/// Pseudo-class: the text ends here (or inside a possibly-valid UTF-8 sequence) but is not final.
pub(crate) const MORE: u8 = 15;

/// The set bit of one class, for class-set masks (`mask >> class & 1`).
pub(crate) const fn bit(class: u8) -> u16 {
    1 << class
}

/// `\p{L}`.
pub(crate) const L_MASK: u16 = bit(LU) | bit(LL) | bit(LT) | bit(LM) | bit(LO);
/// `\p{N}`.
pub(crate) const N_MASK: u16 = bit(N);
/// `[^\s\p{L}\p{N}]` (marks are neither letters nor numbers).
pub(crate) const OTHER_MASK: u16 = bit(OTHER) | bit(M);
/// `\s`.
pub(crate) const WS_MASK: u16 = bit(WS);
/// `[^\r\n\p{L}\p{N}]` without the `\r` / `\n` exception (callers test those two bytes).
pub(crate) const PRE_MASK: u16 = OTHER_MASK | WS_MASK;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
pub(crate) const UPPER_MASK: u16 = bit(LU) | bit(LT) | bit(LM) | bit(LO) | bit(M);
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
pub(crate) const LOWER_MASK: u16 = bit(LL) | bit(LM) | bit(LO) | bit(M);

/// One character as the splitters see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ch {
    /// A table class, or [`END`] / [`MORE`].
    pub class: u8,
    /// Byte length (0 for `END` / `MORE`).
    pub len: usize,
}

impl Ch {
    /// True when the class is in `mask` (never for `END` / `MORE`).
    #[inline(always)]
    pub(crate) fn is(self, mask: u16) -> bool {
        mask >> self.class & 1 != 0
    }
}

/// `\p{L}` among the two-byte characters, U+0080..=U+07FF (Latin-1 to N'Ko: Cyrillic, Greek,
/// Arabic, Hebrew, ...): bit `cp % 64` of word `cp / 64` (the lead byte's low five bits pick
/// the word, the continuation byte's low six the bit). Derived from the class tables at compile
/// time, so it cannot disagree with [`class_of`].
pub(crate) static LETTERS2: [u64; 32] = two_byte_bitmap(L_MASK);

/// The two-byte characters that are `\p{Lu}` or `\p{Lt}`: in o200k's uppercase class
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and not in its lowercase one (Cyrillic and Greek
/// capitals), as [`LETTERS2`].
pub(crate) static UPPER2: [u64; 32] = two_byte_bitmap(bit(LU) | bit(LT));
/// The two-byte characters that are `\p{Ll}`: in o200k's lowercase class and not in its
/// uppercase one, as [`LETTERS2`].
pub(crate) static LOWER2: [u64; 32] = two_byte_bitmap(bit(LL));
/// The two-byte characters in both of o200k's letter classes (`\p{Lm}`, `\p{Lo}`, `\p{M}`: the
/// letters and marks of Arabic, Hebrew, Syriac, Thaana, N'Ko), as [`LETTERS2`].
pub(crate) static BOTH2: [u64; 32] = two_byte_bitmap(UPPER_MASK & LOWER_MASK);
/// Ranges of three-byte characters that are all `\p{L}` (checked against the class tables at
/// compile time): the Hangul syllables (U+AC00..=U+D7A3), of which Korean words are made. Not
/// the CJK ideographs: Chinese and Japanese runs of letters are longer than the fast path's
/// window, and scanning them there only to give up cost 3 % on Chinese.
pub(crate) const LETTERS3: [(u32, u32); 1] = [(0xAC00, 0xD7A3)];

const _: () = {
    let mut r = 0;
    while r < LETTERS3.len() {
        let (lo, hi) = LETTERS3[r];
        assert!(hi < LIMIT);
        let mut cp = lo;
        while cp <= hi {
            assert!(
                L_MASK >> table_class(cp) & 1 != 0,
                "LETTERS3 holds a non-letter"
            );
            cp += 1;
        }
        r += 1;
    }
};

/// The two-byte characters whose class is in `mask`, as a bitmap (see [`LETTERS2`]).
const fn two_byte_bitmap(mask: u16) -> [u64; 32] {
    let mut words = [0u64; 32];
    let mut cp = 0x80u32;
    while cp < 0x800 {
        if mask >> table_class(cp) & 1 != 0 {
            words[(cp >> 6) as usize] |= 1 << (cp & 63);
        }
        cp += 1;
    }
    words
}

/// Class of a code point below `LIMIT` in the two-level table (block index, then a nibble per
/// code point). A `const fn`, so [`LETTERS2`] is derived from the same lookup at compile time;
/// an index outside a table (impossible below `LIMIT`) reads as class 0.
#[inline(always)]
pub(crate) const fn table_class(cp: u32) -> u8 {
    let b = (cp >> BLOCK_SHIFT) as usize;
    let block = if b < BLOCK_INDEX.len() {
        BLOCK_INDEX[b]
    } else {
        0
    };
    let offset = ((block as usize) << (BLOCK_SHIFT - 1)) | ((cp as usize & 0x7F) >> 1);
    let byte = if offset < BLOCKS.len() {
        BLOCKS[offset]
    } else {
        0
    };
    (byte >> ((cp & 1) * 4)) & 0xF
}

/// The class of every code point of the Basic Multilingual Plane, one byte each: one load
/// instead of [`table_class`]'s two dependent ones and its nibble select. Derived from the same
/// tables at compile time, so it cannot disagree with them. 64 KiB of read-only data, so only on
/// 64-bit targets (the hosts); a text touches only its scripts' lines of it (Devanagari is one
/// 128-byte stretch). The full splitter then runs 11–18 % fewer instructions on Korean,
/// Devanagari and Greek (callgrind on the `split_file` example, cl100k_base).
#[cfg(target_pointer_width = "64")]
static BMP_CLASS: [u8; 0x1_0000] = {
    let mut t = [0u8; 0x1_0000];
    let mut cp = 0;
    while cp < 0x1_0000 {
        t[cp] = table_class(cp as u32);
        cp += 1;
    }
    t
};

/// Table class of a code point.
#[inline]
pub(crate) fn class_of(cp: u32) -> u8 {
    #[cfg(target_pointer_width = "64")]
    if let Some(&class) = BMP_CLASS.get(cp as usize) {
        return class;
    }
    if cp < LIMIT {
        table_class(cp)
    } else {
        HIGH.iter()
            .find(|r| r.0 <= cp && cp <= r.1)
            .map_or(OTHER, |r| r.2)
    }
}

/// The character at `i` (see the module docs for `END` / `MORE`).
#[inline(always)]
pub(crate) fn peek(text: &[u8], i: usize, is_final: bool) -> Ch {
    peek_with::<false>(text, i, is_final)
}

/// [`peek`] with the multi-byte decoder inlined, for loops that step over runs of non-ASCII
/// characters ([`scan`], o200k's letter runs), where a call per character would cost more than
/// the decoding.
#[inline(always)]
pub(crate) fn peek_inline(text: &[u8], i: usize, is_final: bool) -> Ch {
    peek_with::<true>(text, i, is_final)
}

/// [`peek`] (`INLINE` false: the multi-byte decoder out of line, one copy for all callers) or
/// [`peek_inline`] (`INLINE` true). A constant parameter rather than a closure, so that each
/// copy compiles to exactly its own code.
#[inline(always)]
fn peek_with<const INLINE: bool>(text: &[u8], i: usize, is_final: bool) -> Ch {
    match text.get(i) {
        Some(&b) if b < 0x80 => Ch {
            class: ASCII[(b & 0x7F) as usize],
            len: 1,
        },
        Some(&b0) if INLINE => multibyte(text, i, b0, is_final),
        Some(&b0) => peek_multibyte(text, i, b0, is_final),
        None => Ch {
            class: if is_final { END } else { MORE },
            len: 0,
        },
    }
}

/// [`peek`] at a non-ASCII byte `b0`, out of line (the run loop of [`scan`] inlines the decoder).
#[inline(never)]
fn peek_multibyte(text: &[u8], i: usize, b0: u8, is_final: bool) -> Ch {
    multibyte(text, i, b0, is_final)
}

/// The character at a non-ASCII byte `b0`: the fast decoder, else the exact path.
#[inline(always)]
fn multibyte(text: &[u8], i: usize, b0: u8, is_final: bool) -> Ch {
    match decode_valid(text, i, b0) {
        Some(c) => c,
        None => peek_non_ascii(text, i, is_final),
    }
}

/// Fast path of [`peek`] for a complete well-formed multi-byte sequence starting with `b0`
/// (`>= 0x80`): decodes assuming the structure, then rejects overlongs, surrogates and values
/// above U+10FFFF by range — equivalent to Table 3-7's second-byte limits. `None` sends the
/// caller to the exact (slow) path, which classifies invalid and truncated bytes.
#[inline(always)]
fn decode_valid(text: &[u8], i: usize, b0: u8) -> Option<Ch> {
    let cont = |k: usize| -> Option<u32> {
        let b = *text.get(i + k)?;
        (b & 0xC0 == 0x80).then_some(u32::from(b & 0x3F))
    };
    if b0 < 0xE0 {
        if b0 < 0xC2 {
            return None;
        }
        let cp = u32::from(b0 & 0x1F) << 6 | cont(1)?;
        Some(Ch {
            class: class_of(cp),
            len: 2,
        })
    } else if b0 < 0xF0 {
        let cp = u32::from(b0 & 0x0F) << 12 | cont(1)? << 6 | cont(2)?;
        if cp < 0x800 || (0xD800..0xE000).contains(&cp) {
            return None;
        }
        Some(Ch {
            class: class_of(cp),
            len: 3,
        })
    } else {
        if b0 > 0xF4 {
            return None;
        }
        let cp = u32::from(b0 & 0x07) << 18 | cont(1)? << 12 | cont(2)? << 6 | cont(3)?;
        if !(0x1_0000..=0x10_FFFF).contains(&cp) {
            return None;
        }
        Some(Ch {
            class: class_of(cp),
            len: 4,
        })
    }
}

/// Exact classification of a non-ASCII position: a valid sequence, an invalid byte, or a
/// truncated sequence at the end (`MORE` unless final).
#[cold]
#[inline(never)]
fn peek_non_ascii(text: &[u8], i: usize, is_final: bool) -> Ch {
    match utf8::decode(text, i) {
        Utf8::Scalar(cp, len) => Ch {
            class: class_of(cp),
            len,
        },
        Utf8::Invalid(_) => Ch {
            class: OTHER,
            len: 1,
        },
        Utf8::Truncated(_) if is_final => Ch {
            class: OTHER,
            len: 1,
        },
        Utf8::Truncated(_) => Ch {
            class: MORE,
            len: 0,
        },
    }
}

/// Skips the run of characters whose class is in `mask` starting at `i`.
///
/// Returns the run's end (where a character whose class is not in `mask`, or the end of the
/// final text, is), or `None` when the run reaches `MORE`. Runs of ASCII letters (for `\p{L}`)
/// and of ASCII lowercase letters (for o200k's lowercase class) are skipped eight bytes at a
/// time first.
#[inline(always)]
pub(crate) fn scan(text: &[u8], mut i: usize, mask: u16, is_final: bool) -> Option<usize> {
    if mask == L_MASK {
        i = skip_swar(text, i, ascii_letters).unwrap_or_else(|e| e);
    } else if mask == LOWER_MASK {
        i = skip_swar(text, i, ascii_lowercase).unwrap_or_else(|e| e);
    }
    loop {
        let c = match text.get(i) {
            Some(&b) if b < 0x80 => {
                let class = ASCII[(b & 0x7F) as usize];
                if mask >> class & 1 != 0 {
                    i += 1;
                    continue;
                }
                Ch { class, len: 1 }
            }
            // Runs of two- and three-byte characters, on 64-bit targets (with the flat class
            // table; on a microcontroller the loop cost 6.6 KB of code and 7 % more
            // instructions per byte of English, `cargo xtask footprint`).
            #[cfg(target_pointer_width = "64")]
            Some(&b) if b & 0xE0 == 0xC0 || b & 0xF0 == 0xE0 => {
                let (e, stopped) = skip_multibyte(text, i, mask);
                if stopped {
                    return Some(e);
                }
                if e != i {
                    i = e;
                    continue;
                }
                peek_inline(text, i, is_final)
            }
            _ => peek_inline(text, i, is_final),
        };
        if c.class == MORE {
            return None;
        }
        if !c.is(mask) {
            return Some(i);
        }
        i += c.len;
    }
}

/// The position after the run of well-formed two- and three-byte characters whose class is in
/// `mask` starting at `i` (`i` itself when there is none), and whether a well-formed character
/// whose class is not in `mask` ends it (the run ends there). False when something it does not
/// classify does (ASCII, a four-byte character, an ill-formed or truncated sequence, the last
/// three bytes of the text), which [`scan`] then classifies. The inner loop of [`scan`] over
/// Greek, Cyrillic, Arabic, CJK, kana, Hangul and Indic runs: a shape test and one flat-table
/// load per character instead of [`peek`]'s general decoder, one character per 4-byte load
/// and, after a three-byte one, two three-byte characters per 8-byte load while they last.
///
/// Exact without all of Table 3-7's tests: a sequence `ED A0..BF xx` decodes to a surrogate,
/// whose table class is `OTHER` (checked at compile time below). When `mask` lacks `OTHER` the
/// run stops there, as it stops at the ill-formed byte `ED`; when it has it, the three bytes
/// are three ill-formed bytes, each `OTHER`, so the run goes on past them either way. Overlongs
/// (`C0`/`C1` leads, `E0 80..9F xx`) would take another character's class, so they are
/// rejected.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn skip_multibyte(text: &[u8], mut i: usize, mask: u16) -> (usize, bool) {
    let member = |cp: u32| u32::from(mask) >> class_of_bmp(cp) & 1 != 0;
    if mask >> LO & 1 != 0 {
        i = ideographs::skip(text, i);
    }
    while let Some(&w) = text
        .get(i..i + 4)
        .and_then(|w| <&[u8; 4]>::try_from(w).ok())
    {
        let w = u32::from_le_bytes(w);
        if w & 0x00C0_C0F0 == 0x0080_80E0 {
            let cp = three_byte_cp(w);
            if cp < 0x800 {
                return (i, false);
            }
            if !member(cp) {
                return (i, true);
            }
            i += 3;
            // Then two at a time, while the next six bytes are two of them.
            while let Some(&w) = text
                .get(i..i + 8)
                .and_then(|w| <&[u8; 8]>::try_from(w).ok())
            {
                let w = u64::from_le_bytes(w);
                if w & 0xC0C0_F0C0_C0F0 != 0x8080_E080_80E0 {
                    break;
                }
                let (a, b) = (three_byte_cp(w as u32), three_byte_cp((w >> 24) as u32));
                if a < 0x800 || b < 0x800 || !member(a) {
                    break;
                }
                if !member(b) {
                    return (i + 3, true);
                }
                i += 6;
            }
        } else if w & 0xC0E0 == 0x80C0 {
            let cp = (w & 0x1F) << 6 | (w >> 8) & 0x3F;
            if cp < 0x80 {
                return (i, false);
            }
            if !member(cp) {
                return (i, true);
            }
            i += 2;
        } else {
            return (i, false);
        }
    }
    (i, false)
}

/// Runs of CJK unified ideographs (U+4E00–U+9FFF, all `\p{Lo}`: checked at compile time
/// below), five characters (15 bytes) per SSE2 step: most of Chinese text's bytes. Every
/// pattern's letter scans have `Lo`, so a run of them is one run for each.
///
/// Kana were measured too (Japanese runs mix them with ideographs): their tests, which need
/// the second and third bytes, made each step some 40 instructions longer, and Chinese and
/// Japanese both slower than without any step.
#[cfg(target_arch = "x86_64")]
mod ideographs {
    use core::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_set1_epi8,
    };

    /// Lead-byte positions of five three-byte characters in 15 bytes.
    const LEADS: u32 = 0b001_001_001_001_001;
    /// Their continuation-byte positions.
    const CONTS: u32 = 0x7FFF & !LEADS;

    /// The position after ideographs at `i`, in steps of five with 16 readable bytes: `i`
    /// itself when the first step fails; the caller goes on from there character by
    /// character.
    #[inline(always)]
    pub(super) fn skip(text: &[u8], mut i: usize) -> usize {
        let start = i;
        while let Some(w) = text
            .get(i..i + 16)
            .and_then(|w| <&[u8; 16]>::try_from(w).ok())
        {
            // SAFETY: SSE2 is part of the x86_64 baseline, which is all `bits` requires.
            let (lead, cont) = unsafe { bits(w) };
            let bad = !((lead & LEADS) | (cont & CONTS)) & 0x7FFF;
            // A whole step's advance depends on a branch, not on the data: the next load's
            // address is known at once (speculated), not after the masks are computed.
            if bad == 0 {
                i += 15;
                continue;
            }
            // The last step of a run of whole steps (Chinese) adds the ideographs before its
            // first bad byte (`first_bad / 3` characters, for 0..=14). A first step that fails
            // (the short runs of Japanese) adds none: the caller's loop would otherwise wait
            // for this sum before its first load, at every run.
            if i == start {
                break;
            }
            let first_bad = bad.trailing_zeros() as usize;
            return i + ((first_bad * 11) >> 5) * 3;
        }
        i
    }

    /// Bytes of `v` in `lo..=lo + n - 1`, as a lane mask.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn in_range(v: __m128i, lo: u8, n: u8) -> __m128i {
        let moved = _mm_add_epi8(v, _mm_set1_epi8(128u8.wrapping_sub(lo) as i8));
        _mm_cmplt_epi8(moved, _mm_set1_epi8(128u8.wrapping_add(n) as i8))
    }

    /// Bit masks of `w`'s bytes that lead an ideograph (`E5`–`E9`, or `E4` before `B8`–`BF`)
    /// and that are continuation bytes (`80`–`BF`).
    #[inline]
    #[target_feature(enable = "sse2")]
    fn bits(w: &[u8; 16]) -> (u32, u32) {
        // SAFETY: `w` is 16 readable bytes; the load is unaligned.
        let v = unsafe { _mm_loadu_si128(w.as_ptr().cast::<__m128i>()) };
        let mask = |m: __m128i| _mm_movemask_epi8(m) as u32 & 0xFFFF;
        let eq = |b: u8| mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)));
        let cont = mask(_mm_cmpeq_epi8(
            _mm_and_si128(v, _mm_set1_epi8(0xC0u8 as i8)),
            _mm_set1_epi8(0x80u8 as i8),
        ));
        let lead = mask(in_range(v, 0xE5, 5)) | eq(0xE4) & mask(in_range(v, 0xB8, 8)) >> 1;
        (lead, cont)
    }
}

/// Other 64-bit targets (no SSE2): none skipped (the scalar loop takes them).
#[cfg(all(target_pointer_width = "64", not(target_arch = "x86_64")))]
mod ideographs {
    #[inline(always)]
    pub(super) fn skip(_text: &[u8], i: usize) -> usize {
        i
    }
}

const _: () = {
    let mut cp = 0x4E00;
    while cp <= 0x9FFF {
        assert!(table_class(cp) == LO, "a CJK unified ideograph is not Lo");
        cp += 1;
    }
};

/// The code point of the three-byte sequence in the low three bytes of `w` (little-endian),
/// assuming its shape (`1110xxxx 10xxxxxx 10xxxxxx`) was checked.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn three_byte_cp(w: u32) -> u32 {
    (w & 0x0F) << 12 | (w >> 2) & 0x0FC0 | (w >> 16) & 0x3F
}

const _: () = {
    let mut cp = 0xD800;
    while cp < 0xE000 {
        assert!(table_class(cp) == OTHER, "a surrogate's class is not OTHER");
        cp += 1;
    }
};

/// Table class of a code point below U+10000, from the flat table (no range test).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn class_of_bmp(cp: u32) -> u8 {
    BMP_CLASS[cp as usize & 0xFFFF]
}

/// End of the letter run (`\p{L}+`) that continues at `i` (the caller has seen its first letter);
/// `None` when it reaches `MORE`. ASCII letters go eight at a time.
#[inline(always)]
pub(crate) fn letters_from(text: &[u8], i: usize, is_final: bool) -> Option<usize> {
    match skip_swar(text, i, ascii_letters) {
        Ok(e) if text.get(e).is_some_and(|&b| b < 0x80) => Some(e),
        Ok(e) | Err(e) => scan(text, e, L_MASK, is_final),
    }
}

/// The position after the ASCII lowercase letters at `i` (eight at a time).
#[inline(always)]
pub(crate) fn skip_ascii_lowercase(text: &[u8], i: usize) -> usize {
    match skip_swar(text, i, ascii_lowercase) {
        Ok(e) => e,
        Err(mut e) => {
            while text.get(e).is_some_and(u8::is_ascii_lowercase) {
                e += 1;
            }
            e
        }
    }
}

const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
pub(crate) const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
const ONES: u64 = 0x0101_0101_0101_0101;

/// SWAR: the high bit of each byte of the result is set iff that byte of `w` is in `lo..=hi`
/// (`lo <= hi < 0x80`); other bits are zero. Adding to 7-bit values never carries across bytes.
#[inline(always)]
pub(crate) const fn in_range(w: u64, lo: u8, hi: u8) -> u64 {
    let x = w & LOW7;
    let ge_lo = x + ONES * (0x80 - lo as u64);
    let gt_hi = x + ONES * (0x7F - hi as u64);
    ge_lo & !gt_hi & !w & HIGH_BITS
}

/// High bit per byte: ASCII letter.
#[inline(always)]
pub(crate) const fn ascii_letters(w: u64) -> u64 {
    // Setting bit 5 maps exactly `A..=Z` onto `a..=z` and no other byte into that range.
    in_range(w | (ONES * 0x20), b'a', b'z')
}

/// High bit per byte: ASCII lowercase letter.
#[inline(always)]
const fn ascii_lowercase(w: u64) -> u64 {
    in_range(w, b'a', b'z')
}

/// Advances `i` over whole 8-byte words in which `member` marks every byte, then over the
/// leading member bytes of the next word: `Ok(e)` with `text[e]` the first non-member byte, or
/// `Err(e)` when fewer than 8 bytes are left at `e` (the rest is for the byte loop).
#[inline(always)]
fn skip_swar(text: &[u8], mut i: usize, member: impl Fn(u64) -> u64) -> Result<usize, usize> {
    while let Some(chunk) = text.get(i..i + 8) {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let outside = !member(u64::from_le_bytes(bytes)) & HIGH_BITS;
        if outside != 0 {
            return Ok(i + (outside.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    Err(i)
}

/// Skips the run of bytes that are `\r`, `\n` or `extra` (pass `b'\r'` for none) starting at `i`.
/// `None` when the run reaches the end of a non-final text.
#[inline]
pub(crate) fn scan_newlines(text: &[u8], mut i: usize, extra: u8, is_final: bool) -> Option<usize> {
    loop {
        match text.get(i) {
            Some(&b) if b == b'\r' || b == b'\n' || b == extra => i += 1,
            Some(_) => return Some(i),
            None => return is_final.then_some(i),
        }
    }
}

/// A maximal run of whitespace characters `text[start..end]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WsRun {
    /// Exclusive end of the run.
    pub end: usize,
    /// Start of the run's last character.
    pub last: usize,
    /// End of the run's last `\r` or `\n`, or 0 when the run has none.
    pub newline_end: usize,
    /// The run ends at the end of the (final) text.
    pub at_end: bool,
}

/// The whitespace run starting at `start` (which must be a whitespace character); `None` when
/// the run reaches `MORE`.
#[inline]
pub(crate) fn scan_ws(text: &[u8], start: usize, is_final: bool) -> Option<WsRun> {
    let mut i = start;
    let mut last = start;
    let mut newline_end = 0;
    loop {
        let c = match text.get(i) {
            Some(&b) if b < 0x80 => {
                if ASCII[(b & 0x7F) as usize] == WS {
                    if b == b'\r' || b == b'\n' {
                        newline_end = i + 1;
                    }
                    last = i;
                    i += 1;
                    continue;
                }
                Ch {
                    class: OTHER,
                    len: 1,
                }
            }
            _ => peek(text, i, is_final),
        };
        match c.class {
            MORE => return None,
            WS => {
                last = i;
                i += c.len;
            }
            class => {
                return Some(WsRun {
                    end: i,
                    last,
                    newline_end,
                    at_end: class == END,
                });
            }
        }
    }
}

/// For the case-insensitive contractions: the character at `i` as a lowercase ASCII contraction
/// letter (`0` when it is none, or at `END`), with its byte length; `None` at `MORE`.
#[inline]
pub(crate) fn fold_letter(text: &[u8], i: usize, is_final: bool) -> Option<(u8, usize)> {
    match text.get(i) {
        Some(&b) if b < 0x80 => Some((b.to_ascii_lowercase(), 1)),
        Some(_) => match utf8::decode(text, i) {
            Utf8::Scalar(cp, len) => {
                Some((FOLDS.iter().find(|f| f.0 == cp).map_or(0, |f| f.1), len))
            }
            Utf8::Invalid(_) => Some((0, 1)),
            Utf8::Truncated(_) => is_final.then_some((0, 1)),
        },
        None => is_final.then_some((0, 0)),
    }
}

/// The general category group of a character, as the pre-tokenizer patterns distinguish them.
///
/// Every Unicode scalar value has exactly one class; the table is generated from `regex-syntax`
/// (Unicode 16.0.0), so `\p{L}` = the five letter classes, `\p{N}` = [`CharClass::Number`],
/// `\p{M}` = [`CharClass::Mark`], `\s` = [`CharClass::WhiteSpace`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CharClass {
    /// Anything else (punctuation, symbols, controls that are not White_Space, unassigned, …).
    Other,
    /// White_Space property (`\s`).
    WhiteSpace,
    /// Number: Nd, Nl, No (`\p{N}`).
    Number,
    /// Uppercase_Letter (Lu).
    UppercaseLetter,
    /// Lowercase_Letter (Ll).
    LowercaseLetter,
    /// Titlecase_Letter (Lt).
    TitlecaseLetter,
    /// Modifier_Letter (Lm).
    ModifierLetter,
    /// Other_Letter (Lo).
    OtherLetter,
    /// Mark: Mn, Mc, Me (`\p{M}`).
    Mark,
}

/// The class of a character (see [`CharClass`]).
pub fn char_class(c: char) -> CharClass {
    match class_of(c as u32) {
        WS => CharClass::WhiteSpace,
        N => CharClass::Number,
        LU => CharClass::UppercaseLetter,
        LL => CharClass::LowercaseLetter,
        LT => CharClass::TitlecaseLetter,
        LM => CharClass::ModifierLetter,
        LO => CharClass::OtherLetter,
        M => CharClass::Mark,
        _ => CharClass::Other,
    }
}
