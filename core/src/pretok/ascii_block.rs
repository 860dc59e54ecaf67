//! The block splitter: cl100k_base's and o200k_base's piece boundaries over up to 64 bytes of
//! ASCII (and two-byte letters) at once.
//!
//! [`super::ascii_piece`] decides one piece per call, from the 16 bytes at its start; on prose
//! and code that was a third of the cached encoder's time. Here the bytes of a block are
//! classified sixteen at a time (SSE2 compares and `movemask`: one bit per byte for letters,
//! digits, whitespace, `\r`/`\n`, the space, `'`, capitals and `/`), and the piece boundaries of the whole
//! block come out of a few dozen operations on those 64-bit masks, so that the encoder's loop
//! only walks the set bits.
//!
//! # Why ASCII cl100k_base reduces to bit algebra
//!
//! The pattern is `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|`
//! `` ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s``. Write `L` letters, `D` digits,
//! `W` whitespace, `NL` `\r`/`\n`, `T` = `W` without `NL`, `SP` the space, `O` everything else
//! (punctuation and control bytes). Matching leftmost-first from a piece start, on ASCII:
//! - a run of `L` ends a piece where it ends; it starts one at its first letter, or one byte
//!   earlier when that byte is a `T`, or an `O` that is neither part of a longer `O` run nor
//!   after a space (those are taken by the punctuation alternative, possessively);
//! - a run of `D` starts a piece, and another every three digits, and ends one;
//! - a run of `O` (not a word's prefix) starts a piece, or the space before it does, and the
//!   piece ends after the `NL` bytes that follow the run (`[\r\n]*+`);
//! - a run of `W` (less the `NL` bytes a punctuation piece took) starts a piece, and so do the
//!   byte after its last `NL` (`\s*[\r\n]`) and, when the run after that `NL` is two or more
//!   bytes, its last byte (`\s+(?!\S)`); the byte after the run starts a piece unless the
//!   run's last byte is a `T` and a letter follows (a prefix), or a space and an `O` follows;
//! - `'` starts a contraction where a piece starts at it (not after an `O` or a space), and
//!   the contraction ends a piece.
//!
//! o200k_base differs in three places: a word also ends where a small letter is followed by a
//! capital (`[U]*[L]+|[U]+[L]*`); a contraction is the optional suffix of a word (`fooBar's`),
//! so it moves that word's end instead of starting a piece (and a `'` right after a contraction
//! ends no word); and the punctuation tail is `[\r\n/]*`, after which a piece starts whatever
//! the next byte is, which the class rules cannot see, so a block ends before a slash in a
//! tail.
//!
//! Every rule looks at most two bytes back, which at the block's start are "no byte" (the block
//! starts where a piece starts), and one or two ahead. A boundary is kept only when nothing
//! after the known bytes could move it: the known bytes end at the first byte that is neither
//! ASCII nor part of a two-byte letter the block takes (see [`classify`]), or at the block's
//! end; a whitespace run that reaches their end, and (o200k) a word whose
//! contraction is not decided, cut the block short where they start. `\s++$` never applies:
//! nothing that reaches the known end is decided. The test module checks every kept boundary
//! against the full splitters ([`super::cl100k`], [`super::o200k`]) for every continuation.
//!
//! [`Blocks`] is the encoder's view: the next piece's length, from the current block or a new
//! one, or "ask the per-piece splitter" (no SSE2, gpt2, fewer than 64 bytes left, a block
//! that decides nothing, or a backoff after one). It also holds the character blocks
//! ([`super::char_block`], which the encoder asks for where the ASCII fast path says one may
//! start: [`Blocks::char_len`]), whose pieces it hands out the same way.

use super::char_block::char_block;
use super::unicode::{LETTERS2, LOWER2, UPPER2};
use super::Fast;
use super::Pattern;

/// Bytes in a block.
const BLOCK: usize = 64;

/// Whether the encoder uses the block splitter: where its SSE2 classification is available
/// (x86_64; elsewhere [`Blocks::next_len`] always says "ask the per-piece splitter").
const BLOCKS: bool = cfg!(target_arch = "x86_64");

/// Bytes passed before the block splitter is tried again after a try failed, doubled after
/// each failure in a row.
const BACKOFF_MIN: usize = 16;

/// The most bytes passed after failed tries.
const BACKOFF_MAX: usize = 512;

/// The encoder's cursor over the block splitters' pieces: the boundaries of the last block (an
/// ASCII block or a character block) that are ahead of the encoder's position. It lives for one encode call, across the fast
/// loops' entries, so a piece the caller encodes outside the loop does not cost the block.
///
/// Invariant: `ends` holds boundaries relative to `base`, all after `expected`, the position
/// where the next piece from them starts; a call at any other position drops them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocks {
    base: usize,
    ends: u64,
    expected: usize,
    /// No new block is tried before this position.
    next_try: usize,
    backoff: usize,
    /// No new character block is tried before this position.
    next_char_try: usize,
}

impl Blocks {
    /// No block yet.
    pub(crate) const fn new() -> Self {
        Blocks {
            base: 0,
            ends: 0,
            expected: 0,
            next_try: 0,
            backoff: BACKOFF_MIN,
            next_char_try: 0,
        }
    }

    /// The length of the piece of `pattern` at `text[at..]` (`at` a piece start) when a block
    /// decided it: the current block (of either kind), else a new ASCII block at `at`; `None`
    /// when neither did (the caller asks the per-piece splitters), which includes a new block
    /// for gpt2 (it has no ASCII blocks), text within a backoff after a failed try, and fewer
    /// than 64 bytes left. The length may be more than a cache key holds.
    #[inline(always)]
    pub(crate) fn next_len(&mut self, pattern: Pattern, text: &[u8], at: usize) -> Option<usize> {
        if self.ends == 0 || at != self.expected {
            if !BLOCKS || !matches!(pattern, Pattern::Cl100k | Pattern::O200k) || at < self.next_try
            {
                return None;
            }
            let (ends, known) = block_at(pattern, text, at);
            (self.base, self.ends) = (at, ends);
            // Where a try failed (no boundary, or a block dense with two-byte letters), not
            // again for a while, twice as long after each failure in a row: text that is not
            // mostly ASCII (Greek, Russian, Arabic, Korean) does not pay for a try at every
            // piece.
            if ends == 0 || known == 0 {
                self.next_try = at + self.backoff;
                self.backoff = (2 * self.backoff).min(BACKOFF_MAX);
            } else {
                // A block cut short by a byte it does not know decides nothing more until past
                // that byte.
                self.next_try = if known < BLOCK { at + known + 1 } else { at };
                self.backoff = BACKOFF_MIN;
            }
            if ends == 0 {
                return None;
            }
        }
        Some(self.take(at))
    }

    /// The length of the piece at `text[at..]` from a new character block there
    /// ([`super::char_block`]), when the fast path said one may start there (`fast`, its
    /// answer for the position, is [`Fast::CharBlock`]) and it decides the piece; `None`
    /// otherwise (the caller asks the full splitter). The next pieces of the block then come
    /// from [`Blocks::next_len`]. May be more than a cache key holds.
    #[inline(always)]
    pub(crate) fn char_len(
        &mut self,
        pattern: Pattern,
        text: &[u8],
        at: usize,
        fast: Fast,
    ) -> Option<usize> {
        if fast != Fast::CharBlock || at < self.next_char_try {
            return None;
        }
        let (ends, known, reached_span) = char_block(pattern, text, at);
        (self.base, self.ends) = (at, ends);
        // A block ended by a character it does not know decides nothing more until past that
        // character; one cut by its span goes on at its last boundary.
        self.next_char_try = if reached_span { at } else { at + known + 1 };
        if ends == 0 {
            return None;
        }
        Some(self.take(at))
    }

    /// Takes the next boundary of the current block (`ends != 0`) as the end of the piece at
    /// `at`, and returns its length.
    #[inline(always)]
    fn take(&mut self, at: usize) -> usize {
        self.expected = self.base + self.ends.trailing_zeros() as usize;
        self.ends &= self.ends - 1;
        self.expected - at
    }
}

/// The boundaries of the block at `text[at..]` and the number of its bytes the block
/// splitter knows (64 when it knows all; 0 when the block is dense: see [`classify`]), when
/// 64 bytes are left; else `(0, 0)`.
#[inline(always)]
fn block_at(pattern: Pattern, text: &[u8], at: usize) -> (u64, usize) {
    let Some(block) = text
        .get(at..at + BLOCK)
        .and_then(|b| <&[u8; BLOCK]>::try_from(b).ok())
    else {
        return (0, 0);
    };
    ascii_block(pattern, block)
}

/// One bit per byte of a block (bit `i` for byte `i`), per class.
#[derive(Clone, Copy, Debug, Default)]
struct Classes {
    /// How many bytes are known: those before the first byte that is neither ASCII nor part of
    /// a two-byte letter the block takes. Every mask below is within them.
    len: u32,
    /// `[A-Za-z]`.
    letter: u64,
    /// `[0-9]`.
    digit: u64,
    /// `\s`: `\t`, `\n`, `\v`, `\f`, `\r`, space.
    space: u64,
    /// `\r`, `\n`.
    newline: u64,
    /// The space, U+0020.
    blank: u64,
    /// `'`.
    quote: u64,
    /// `[A-Z]` (o200k's letter classes).
    upper: u64,
    /// `/` (o200k's punctuation tail).
    slash: u64,
    /// The known bytes end where the block is dense with two-byte letters (see
    /// [`take_letters2`]).
    dense: bool,
}

/// The most two-byte letters a block takes. They are checked one at a time, which costs more
/// than the per-piece splitter does in text written in a two-byte script (Greek, Russian):
/// there the block ends after a few words, and the encoder backs off as after a failure. In
/// Latin-script text (French, German) most blocks have fewer.
const LETTERS2_MAX: u32 = 8;

/// Non-ASCII bytes in sixteen that make the block end at the first of them, as dense
/// (four or more two-byte characters): the block is not worth its cost there.
const DENSE_HIGH_BYTES: u32 = 8;

/// The low `n` bits (`n <= 64`).
#[inline(always)]
fn low_bits(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The classes of the bytes of `block` before the first one the block splitter does not
/// know: ASCII bytes, and for `pattern` the two-byte letters that behave as ASCII letters do
/// ([`letter2`]), each of whose two bytes counts as a letter.
#[inline(always)]
fn classify(pattern: Pattern, block: &[u8; BLOCK]) -> Classes {
    let mut c = Classes::default();
    // The two-byte letters taken, and the continuation bytes among them.
    let (mut letters2, mut taken) = (0u32, 0u64);
    for (i, chunk) in block.chunks_exact(16).enumerate() {
        let Ok(chunk) = <&[u8; 16]>::try_from(chunk) else {
            break;
        };
        let m = simd::classify16(chunk);
        let shift = 16 * i as u32;
        c.letter |= u64::from(m.letter) << shift;
        c.digit |= u64::from(m.digit) << shift;
        c.space |= u64::from(m.space) << shift;
        c.newline |= u64::from(m.newline) << shift;
        c.blank |= u64::from(m.blank) << shift;
        c.quote |= u64::from(m.quote) << shift;
        c.upper |= u64::from(m.upper) << shift;
        c.slash |= u64::from(m.slash) << shift;
        c.len = shift + 16;
        if m.high != 0 {
            // Out of line: most blocks of prose and code have no non-ASCII byte.
            let t = take_letters2(pattern, block, shift, m.high, letters2, taken);
            (letters2, taken) = (t.count, t.taken);
            c.letter |= t.letters;
            c.upper |= t.capitals;
            if let Some((len, dense)) = t.stop {
                (c.len, c.dense) = (len, dense);
                break;
            }
        }
    }
    let known = low_bits(c.len);
    c.letter &= known;
    c.digit &= known;
    c.space &= known;
    c.newline &= known;
    c.blank &= known;
    c.quote &= known;
    c.upper &= known;
    c.slash &= known;
    c
}

/// The two-byte letters [`take_letters2`] took from sixteen bytes.
struct Letters2 {
    /// Their bytes.
    letters: u64,
    /// The bytes of the capitals among them (o200k).
    capitals: u64,
    /// How many letters are taken in the block so far.
    count: u32,
    /// The continuation bytes taken in the block so far.
    taken: u64,
    /// Where the known bytes end, and whether because the block is dense with two-byte
    /// letters (a letter past [`LETTERS2_MAX`], or mostly non-ASCII sixteen bytes).
    stop: Option<(u32, bool)>,
}

/// Takes the two-byte letters among the non-ASCII bytes `high` of the sixteen at `shift`,
/// with `count` letters and the continuation bytes `taken` taken before.
#[inline(never)]
fn take_letters2(
    pattern: Pattern,
    block: &[u8; BLOCK],
    shift: u32,
    high: u32,
    count: u32,
    taken: u64,
) -> Letters2 {
    let mut t = Letters2 {
        letters: 0,
        capitals: 0,
        count,
        taken,
        stop: None,
    };
    let mut rest = u64::from(high) << shift & !taken;
    if high.count_ones() >= DENSE_HIGH_BYTES {
        // Mostly non-ASCII (a two-byte or wider script): not worth checking one by one.
        t.stop = Some((rest.trailing_zeros().min(shift + 16), true));
        return t;
    }
    while rest != 0 {
        let at = rest.trailing_zeros();
        let letter = letter2(pattern, block, at as usize);
        let Some(upper) = letter.filter(|_| t.count < LETTERS2_MAX) else {
            t.stop = Some((at, letter.is_some()));
            return t;
        };
        t.count += 1;
        let both = 3u64 << at;
        t.letters |= both;
        if upper {
            t.capitals |= both;
        }
        t.taken |= both;
        rest &= !both;
    }
    t
}

/// Whether the two-byte character at `block[at..at + 2]` (when one is there) is a letter that
/// the block rules may treat as an ASCII letter of `pattern`, and if so whether it is a
/// capital (o200k). For cl100k_base every `\p{L}` ([`LETTERS2`]); for o200k_base the letters
/// in exactly one of its two letter classes ([`UPPER2`] capitals, [`LOWER2`] small letters:
/// Latin, Greek, Cyrillic, Armenian), since its word rule splits where a small letter meets a
/// capital. Not U+017F (ſ), which `(?i:'s)` matches as an `s`.
#[inline(always)]
fn letter2(pattern: Pattern, block: &[u8; BLOCK], at: usize) -> Option<bool> {
    let (&b0, &b1) = (block.get(at)?, block.get(at + 1)?);
    if !(0xC2..=0xDF).contains(&b0) || b1 & 0xC0 != 0x80 {
        return None;
    }
    let cp = u32::from(b0 & 0x1F) << 6 | u32::from(b1 & 0x3F);
    let has = |bitmap: &[u64; 32]| {
        bitmap
            .get((cp >> 6) as usize)
            .is_some_and(|w| w >> (cp & 63) & 1 != 0)
    };
    match pattern {
        _ if cp == 0x17F => None,
        Pattern::Cl100k if has(&LETTERS2) => Some(false),
        Pattern::O200k if has(&UPPER2) => Some(true),
        Pattern::O200k if has(&LOWER2) => Some(false),
        _ => None,
    }
}

/// The piece boundaries in `block`, which starts where a piece of `pattern` (cl100k_base or
/// o200k_base, not gpt2: [`Blocks::next_len`] does not ask for it) starts, and the number of bytes it knows (64: all; 0 when
/// the block is dense: past [`LETTERS2_MAX`] two-byte letters, or sixteen bytes with
/// [`DENSE_HIGH_BYTES`] non-ASCII ones: see [`classify`]). Bit `i` (`1 <= i <= 63`) of the boundaries is set when a piece
/// ends at byte `i` and the next one starts there. Every piece from byte 0 up to the highest
/// set bit is the full splitter's piece for every continuation of the block; nothing is said
/// about the bytes after the highest set bit (0: nothing decided).
#[inline(always)]
fn ascii_block(pattern: Pattern, block: &[u8; BLOCK]) -> (u64, usize) {
    let c = classify(pattern, block);
    if c.len == 0 {
        return (0, 0);
    }
    let o200k = pattern == Pattern::O200k;
    let known = low_bits(c.len);
    let (l, d, w, nl, sp) = (c.letter, c.digit, c.space, c.newline, c.blank);
    let o = known & !(l | d | w);
    let t = w & !nl;
    let mut b = 0u64;

    // Words: a letter run starts a piece at its first letter or, with its prefix byte, one
    // before; it ends one where it ends.
    let word_start = l & !(l << 1);
    let prefixed = word_start & (t << 1 | (o << 1 & !(o << 2) & !(sp << 2)));
    b |= prefixed >> 1 | (word_start & !prefixed);
    b |= l << 1 & !l & known;
    if o200k {
        // `[U]*[L]+|[U]+[L]*`: a small letter followed by a capital ends a word.
        b |= c.upper & (l & !c.upper) << 1;
    }

    // Numbers: a digit run starts a piece, and another every three digits; it ends one.
    let digit_start = d & !(d << 1);
    b |= digit_start | (d << 1 & !d & known);
    let four_digits = d & d << 1 & d << 2 & d << 3;
    let mut every_three = digit_start;
    loop {
        every_three = every_three << 3 & four_digits;
        if every_three == 0 {
            break;
        }
        b |= every_three;
    }

    // Punctuation: an `O` run starts a piece (or the space before it does: whitespace below);
    // the piece ends after the run and the `\r`/`\n` bytes right after it (a carry through
    // them). An `O` run followed by a letter is handled with the words.
    let other_start = o & !(o << 1);
    let other_end = o << 1 & !o & known;
    b |= other_start & !(sp << 1);
    b |= other_end & !l & !nl;
    // The tail: cl100k `[\r\n]*+`, o200k `[\r\n/]*`.
    let tail = if o200k { nl | c.slash } else { nl };
    let carried = tail.wrapping_add(other_end & nl);
    b |= carried & !tail & known;

    // Whitespace: the run's start (unless its first bytes are newlines a punctuation piece
    // took), the byte after its last newline, the last byte of a tail of two or more, and the
    // byte after the run unless the run's last byte is a prefix of what follows.
    let space_start = w & !(w << 1);
    let space_end = w << 1 & !w & known;
    b |= space_start & !(o << 1 & nl);
    b |= last_newlines(w, nl) << 1;
    b |= t & t << 1 & (!w & known) >> 1;
    b |= space_end & !(t << 1 & l) & !(sp << 1 & o);

    // The last byte whose boundary is final: before the known end, before a whitespace run
    // that reaches it, and at an undecided contraction.
    let mut limit = c.len - 1;
    if w >> limit & 1 != 0 {
        let before = !w & low_bits(limit);
        limit = 64 - before.leading_zeros();
    }
    // An o200k tail with a `/` in it: the byte after it starts a piece whatever its class,
    // which the rules above do not know; the block ends before the slash.
    let tail_slashes = (carried ^ tail) & tail & c.slash;
    if tail_slashes != 0 {
        limit = limit.min(tail_slashes.trailing_zeros().saturating_sub(1));
    }
    // Contractions (rare enough for a loop over the `'` bytes).
    let quotes = if o200k {
        c.quote & l << 1
    } else {
        c.quote & !(o << 1) & !(sp << 1)
    };
    if quotes != 0 {
        if o200k {
            let final_bytes = block.get(..limit as usize + 1).unwrap_or(&[]);
            limit = o200k_contractions(final_bytes, quotes, &mut b, limit);
        } else {
            let known_bytes = block.get(..c.len as usize).unwrap_or(&[]);
            cl100k_contractions(known_bytes, quotes, &mut b, limit);
        }
    }
    let known = if c.dense { 0 } else { c.len as usize };
    (b & low_bits(limit + 1) & !1, known)
}

/// cl100k_base's contractions `'(?i:[sdmt]|ll|ve|re)`, at the `'` bytes in `quotes` where a
/// piece starts (not after an `O` or a space): each ends a piece. The full splitter's own matcher ([`super::cl100k::contraction`]) decides each, on the `known`
/// bytes. One it cannot decide there lies in the last two known bytes, where no boundary
/// follows the `'` either way (the letter after it is a prefixed word's), so it counts as none.
#[inline(always)]
fn cl100k_contractions(known: &[u8], quotes: u64, b: &mut u64, limit: u32) {
    let mut quotes = quotes & low_bits(limit);
    while quotes != 0 {
        let q = quotes.trailing_zeros();
        quotes &= quotes - 1;
        if let Some(Some(end)) = super::cl100k::contraction(known, q as usize + 1, false) {
            if let Some(bit) = 1u64.checked_shl(end as u32) {
                *b |= bit;
            }
        }
    }
}

/// o200k_base's `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` after a word: at the `'` bytes in `quotes`
/// (each after a letter) that end a word, a contraction moves the word's end past it; a `'`
/// right after a contraction ends no word (the letters before it were the contraction's).
/// The full splitter's matcher ([`super::o200k::with_contraction`]) decides each, on the
/// `final_bytes` (those up to the limit). Returns the new limit: before a word whose
/// contraction is not decided.
#[inline(always)]
fn o200k_contractions(final_bytes: &[u8], quotes: u64, b: &mut u64, limit: u32) -> u32 {
    let mut quotes = quotes & low_bits(limit + 1);
    let mut after_contraction = 0;
    while quotes != 0 {
        let q = quotes.trailing_zeros();
        quotes &= quotes - 1;
        if q == after_contraction {
            continue;
        }
        let Some(end) = super::o200k::with_contraction(final_bytes, q as usize, false) else {
            return q.saturating_sub(1);
        };
        let n = end as u32 - q;
        if n == 0 {
            continue;
        }
        // The contraction is the word's: no boundary inside it (a capital in `'rE` would
        // look like a new word), one after it.
        *b &= !(low_bits(n) << q);
        if let Some(bit) = 1u64.checked_shl(q + n) {
            *b |= bit;
        }
        after_contraction = q + n;
    }
    limit
}

/// The newlines that are the last of their whitespace run (`w`: whitespace, `nl`: newlines).
///
/// `follows` marks the whitespace bytes with a newline later in their run, filled from the byte
/// before each newline back to the run's start by doubling steps (Kogge–Stone): after the step
/// of shift `s`, a byte is marked when a newline lies within `2s` bytes of whitespace after it.
#[inline(always)]
fn last_newlines(w: u64, nl: u64) -> u64 {
    let mut follows = w & nl >> 1;
    let mut all_space = w;
    for shift in [1, 2, 4, 8, 16, 32] {
        follows |= all_space & follows >> shift;
        all_space &= all_space >> shift;
    }
    nl & !((nl | follows) >> 1)
}

/// The class bits of sixteen bytes.
#[derive(Clone, Copy, Debug, Default)]
struct Masks16 {
    high: u32,
    letter: u32,
    digit: u32,
    space: u32,
    newline: u32,
    blank: u32,
    quote: u32,
    upper: u32,
    slash: u32,
}

#[cfg(target_arch = "x86_64")]
mod simd {
    //! SSE2, part of every x86_64 processor.
    use super::Masks16;
    use core::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_set_epi64x,
    };

    /// The class bits of `bytes`.
    #[inline(always)]
    pub(super) fn classify16(bytes: &[u8; 16]) -> Masks16 {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 processor has it (and this
        // module is compiled for x86_64 only), which is all `classify_sse2` requires.
        unsafe { classify_sse2(bytes) }
    }

    /// Bytes of `v` in `lo..lo + n` (`lo + n <= 128`): a signed compare after moving `lo` to
    /// -128.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn in_range(v: __m128i, lo: u8, n: u8) -> __m128i {
        let moved = _mm_add_epi8(v, _mm_set1_epi8(128u8.wrapping_sub(lo) as i8));
        _mm_cmplt_epi8(moved, _mm_set1_epi8((128 + u32::from(n)) as u8 as i8))
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn classify_sse2(bytes: &[u8; 16]) -> Masks16 {
        let (lo, hi) = bytes.split_at(8);
        let word = |b: &[u8]| <[u8; 8]>::try_from(b).map_or(0, i64::from_le_bytes);
        let v = _mm_set_epi64x(word(hi), word(lo));
        let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        let bits = |m: __m128i| _mm_movemask_epi8(m) as u32 & 0xFFFF;
        let blank = eq(b' ');
        let newline = _mm_or_si128(eq(b'\n'), eq(b'\r'));
        // `v | 0x20` folds capitals onto small letters.
        let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        Masks16 {
            high: bits(v),
            letter: bits(in_range(folded, b'a', 26)),
            digit: bits(in_range(v, b'0', 10)),
            space: bits(_mm_or_si128(blank, in_range(v, b'\t', 5))),
            newline: bits(newline),
            blank: bits(blank),
            quote: bits(eq(b'\'')),
            upper: bits(in_range(v, b'A', 26)),
            slash: bits(eq(b'/')),
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod simd {
    //! Byte by byte, where there is no SSE2 (the encoder uses blocks on x86_64 only).
    use super::Masks16;

    /// The class bits of `bytes`.
    #[inline(always)]
    pub(super) fn classify16(bytes: &[u8; 16]) -> Masks16 {
        let mut m = Masks16::default();
        for (i, &b) in bytes.iter().enumerate() {
            let bit = 1u32 << i;
            let set = |on: bool| if on { bit } else { 0 };
            m.high |= set(b >= 0x80);
            m.letter |= set(b.is_ascii_alphabetic());
            m.digit |= set(b.is_ascii_digit());
            m.space |= set(b == b' ' || (b'\t'..=b'\r').contains(&b));
            m.newline |= set(b == b'\n' || b == b'\r');
            m.blank |= set(b == b' ');
            m.quote |= set(b == b'\'');
            m.upper |= set(b.is_ascii_uppercase());
            m.slash |= set(b == b'/');
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::test_random::{random_below, sum_over_piece_starts};
    use crate::pretok::{next_piece, Pattern, Step};

    const PATTERNS: [Pattern; 2] = [Pattern::Cl100k, Pattern::O200k];

    /// Checks the boundaries of the block at `bytes[start..]` against the full splitter, not
    /// final (so: for every continuation of the block's bytes); returns the bytes decided.
    fn check(pattern: Pattern, bytes: &[u8], start: usize) -> usize {
        let Some(block) = bytes
            .get(start..start + BLOCK)
            .and_then(|b| <&[u8; BLOCK]>::try_from(b).ok())
        else {
            return 0;
        };
        let (mut bits, known) = ascii_block(pattern, block);
        assert_eq!(known, known_len(pattern, block), "{pattern:?}: {block:?}");
        let mut at = 0;
        while bits != 0 {
            let end = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            assert_eq!(
                next_piece(pattern, block, at, false),
                Step::Piece { end },
                "{pattern:?}: piece at {at} of the block {:?}",
                String::from_utf8_lossy(block)
            );
            at = end;
        }
        at
    }

    /// The bytes the block splitter should know at the start of `block`: ASCII, and two-byte
    /// letters (cl100k: any letter; o200k: capitals and small letters), not U+017F.
    fn known_len(pattern: Pattern, block: &[u8]) -> usize {
        use crate::pretok::CharClass::*;
        let text = match core::str::from_utf8(block) {
            Ok(t) => t,
            Err(e) => core::str::from_utf8(&block[..e.valid_up_to()]).unwrap_or(""),
        };
        let (mut len, mut letters2) = (0, 0);
        for c in text.chars() {
            let class = crate::pretok::char_class(c);
            let letter2 = c.len_utf8() == 2
                && c != '\u{17f}'
                && match pattern {
                    Pattern::O200k => {
                        matches!(class, UppercaseLetter | TitlecaseLetter | LowercaseLetter)
                    }
                    _ => matches!(
                        class,
                        UppercaseLetter
                            | TitlecaseLetter
                            | LowercaseLetter
                            | ModifierLetter
                            | OtherLetter
                    ),
                };
            if letter2 && letters2 == LETTERS2_MAX {
                return 0;
            }
            // Sixteen bytes with eight or more non-ASCII bytes end the block at the first.
            let chunk = len / 16 * 16;
            let high = block[chunk..chunk + 16]
                .iter()
                .filter(|b| !b.is_ascii())
                .count();
            if !c.is_ascii() && high >= DENSE_HIGH_BYTES as usize {
                return 0;
            }
            if !c.is_ascii() && !letter2 {
                break;
            }
            letters2 += usize::from(letter2) as u32;
            len += c.len_utf8();
        }
        // Invalid UTF-8 (or a character cut by the block's end) ends the valid prefix; there too
        // a mostly non-ASCII sixteen marks the block dense.
        let chunk = len.min(BLOCK - 1) / 16 * 16;
        let high = block[chunk..chunk + 16]
            .iter()
            .filter(|b| !b.is_ascii())
            .count();
        if len < BLOCK && high >= DENSE_HIGH_BYTES as usize {
            return 0;
        }
        len
    }

    /// Checks the block at every piece start of `text`; returns the bytes decided.
    fn check_text(pattern: Pattern, text: &[u8]) -> usize {
        sum_over_piece_starts(pattern, text, |at| check(pattern, text, at))
    }

    #[test]
    fn classes_match_the_byte_tables() {
        let mut block = [0u8; BLOCK];
        for first in (0..256).step_by(64) {
            for (i, b) in block.iter_mut().enumerate() {
                *b = (first + i) as u8;
            }
            let c = classify(Pattern::Cl100k, &block);
            let ascii = block.iter().take_while(|b| b.is_ascii()).count() as u32;
            assert_eq!(c.len, ascii);
            for (i, &b) in block.iter().enumerate().take(ascii as usize) {
                let has = |m: u64| m >> i & 1 != 0;
                assert_eq!(has(c.letter), b.is_ascii_alphabetic(), "{b:#x}");
                assert_eq!(has(c.digit), b.is_ascii_digit(), "{b:#x}");
                assert_eq!(has(c.space), b" \t\n\x0b\x0c\r".contains(&b), "{b:#x}");
                assert_eq!(has(c.newline), b == b'\n' || b == b'\r', "{b:#x}");
                assert_eq!(has(c.blank), b == b' ', "{b:#x}");
                assert_eq!(has(c.quote), b == b'\'', "{b:#x}");
            }
        }
    }

    #[test]
    fn agrees_with_the_full_splitter_on_edge_cases() {
        let texts: [&[u8]; 9] = [
            b"Hello, world! It's a TEST of HTTPServer's fooBar (x) \"quoted\" 123abc abc123 \
              1234567 \ttab\r\nline's WON'T 'twas we'LL they'Re I'd 'l 'v x'' .'s  's\n\n  x",
            b"fn main() {\n    let x = 1_000_000;\n\n\tif a.b(c) { return; }\n  \n   \r\n}\n",
            b"a.b a..b a .b a\t.b a\n.b 1.b 'sa 'lll ''s .\n\n  \n x .\r\n\r\ny ... \n\t \n",
            b"12345678901234567890 a1b2c3 x  1 x\t\t1 \x00\x7f\x1b[0m \x0b\x0cz  !x  !!x",
            b"    \n        \n    }\n\n\n// comment's here\n/* multi\n   line */ #[derive(Debug)]\n",
            b"don't DON'T Don'T d'oh l'l'l rock'n'roll we've WE'VE you're YOU'RE he'd it'll ",
            b"it'll've x'sa'll fooBar's HTTPServer ABC'S aBC 'rE x'rE .\n/x .\n//x }\n/// a/b ./b",
            "caf\u{e9} na\u{ef}ve \u{c9}t\u{e9}\u{c9}t\u{e9} Stra\u{df}e \u{fc}ber'S x'\u{e9} l'\u{e9}t\u{e9} \
             \u{3a3}\u{3bf}\u{3c6}\u{3af}\u{3b1}'s \u{41c}\u{43e}\u{441}\u{43a}\u{432}\u{430}\u{41c} \
             '\u{17f} x'\u{17f} \u{2b0}x \u{627}\u{644} \u{301}a .\u{e9} \u{a0}x 1\u{e9}2"
                .as_bytes(),
            // Invalid UTF-8 (and a dense sixteen after it), a lone continuation byte, a cut
            // sequence, ending the known bytes.
            b"ab\xff\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 x\x80y \xc3 z\xe2\x80 w \xce\xb1\xce a'\xc3",
        ];
        // Under Miri (slow: a minute for half of this) one pattern and every fourth text:
        // ASCII prose, code, and the invalid UTF-8.
        let (every, floor, patterns) = if cfg!(miri) {
            (4, 100, 1)
        } else {
            (1, 500, PATTERNS.len())
        };
        for pattern in PATTERNS.into_iter().take(patterns) {
            let mut decided = 0;
            for text in texts.into_iter().step_by(every) {
                let mut padded = text.to_vec();
                padded.extend_from_slice(&[b' '; BLOCK]);
                padded.extend_from_slice(b"end");
                decided += check_text(pattern, &padded);
            }
            assert!(
                decided > floor,
                "{pattern:?}: the block splitter decided {decided} bytes"
            );
        }
    }

    #[test]
    fn agrees_with_the_full_splitter_on_random_text() {
        // Runs of one kind of byte, of random lengths, so that every pair and triple of
        // classes meets, and long runs of whitespace, digits and punctuation occur.
        const KINDS: [&str; 14] = [
            "aAsSdDmMtTlLvVeErRxz",
            "aeEsStTrRlLvVdDmM",
            "0123456789",
            " ",
            " ",
            "\t\x0b\x0c",
            "\n\r",
            "'",
            "'",
            ".,!-()\"/#",
            "\x00\x1b\x7f",
            " \n",
            "\u{e9}\u{2019}\u{fffd}\u{4e00}",
            "\u{e9}\u{c9}\u{3b1}\u{391}\u{436}\u{416}\u{17f}\u{2b0}\u{1c5}\u{627}\u{301}\u{a0}\u{df}\u{660}",
        ];
        let (texts, floor) = if cfg!(miri) {
            (1, 25)
        } else {
            (4000, 1_000_000)
        };
        for pattern in PATTERNS {
            let decided = random_texts(pattern, &KINDS, texts);
            assert!(
                decided > floor,
                "{pattern:?}: the block splitter decided only {decided} bytes"
            );
        }
    }

    #[test]
    fn the_cursor_gives_the_full_splitters_pieces() {
        // English, code, Greek between them (the backoff), and pieces the caller takes
        // without asking the cursor (it must start again at the next position it is asked).
        let mut text = Vec::new();
        // Under Miri (slow) one round of the mix (it repeats every 12 lines).
        for i in 0..if cfg!(miri) { 12 } else { 40 } {
            text.extend_from_slice(b"fn main() {\n    let x = 1_000_000; // it's fine\n}\n");
            if i % 3 == 0 {
                text.extend_from_slice(
                    "\u{397} \u{3bb}\u{3ad}\u{3be}\u{3b7}, "
                        .repeat(i % 4)
                        .as_bytes(),
                );
            }
            text.extend_from_slice(b"The QUICK brown fox's tail\t\t\r\n  x .\n/y (1234567)\n");
        }
        for pattern in PATTERNS {
            let mut blocks = Blocks::new();
            let (mut at, mut piece, mut from_blocks, mut asked_ascii) = (0, 0, 0, 0);
            while at < text.len() {
                let Step::Piece { end } = next_piece(pattern, &text, at, true) else {
                    panic!("no piece at {at}");
                };
                piece += 1;
                if piece % 7 != 0 {
                    asked_ascii += usize::from(text[at..end].is_ascii());
                    if let Some(len) = blocks.next_len(pattern, &text, at) {
                        assert_eq!(at + len, end, "{pattern:?}: piece at {at}");
                        from_blocks += 1;
                    }
                }
                at = end;
            }
            assert!(
                from_blocks > asked_ascii / 2,
                "{pattern:?}: {from_blocks} of {piece} pieces from blocks ({asked_ascii} ASCII asked)"
            );
        }
    }

    #[test]
    fn keys_of_block_pieces_are_short_keys() {
        let text = b"fn main() { let x = 1_000_000; // it's fine\n} The QUICK brown fox's tail  ";
        let mut blocks = Blocks::new();
        let mut at = 0;
        while let Some(len) = blocks.next_len(Pattern::Cl100k, text, at) {
            let p = crate::pretok::AsciiPiece::at(text, at, len);
            let expected = if len <= 7 {
                crate::hash::short_key(&text[at..at + len])
            } else {
                0
            };
            assert_eq!(p.key, expected, "piece at {at}");
            at += len;
        }
        assert!(at > 40, "blocks gave pieces up to byte {at} only");
    }

    /// Checks [`check_text`] on `count` random texts of runs of `kinds`; returns the bytes
    /// decided.
    fn random_texts(pattern: Pattern, kinds: &[&str], count: usize) -> usize {
        let mut rand = random_below(0x9E37_79B9_7F4A_7C15);
        let mut decided = 0;
        for _ in 0..count {
            let mut text = String::new();
            while text.len() < 160 {
                let kind: Vec<char> = kinds[rand(kinds.len())].chars().collect();
                let long = rand(8) == 0;
                let run = 1 + rand(if long { 12 } else { 3 });
                for _ in 0..run {
                    text.push(kind[rand(kind.len())]);
                }
            }
            decided += check_text(pattern, text.as_bytes());
        }
        decided
    }
}
