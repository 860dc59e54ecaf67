//! Unicode normalization forms NFC, NFD, NFKC and NFKD (UAX #15) without a heap or a buffer,
//! exact to `unicode-normalization-alignments` 0.1.12 — what Hugging Face `tokenizers`' `NFC`,
//! `NFD`, `NFKC` and `NFKD` normalizers call — on every input.
//!
//! **The algorithm.** Decomposing each character gives the *decomposed stream*; NFD is that
//! stream with every maximal run of non-starters (canonical combining class ≠ 0) stably sorted
//! by class; NFC composes it: each starter is a *composee* that absorbs every later character
//! it composes with and is not blocked from (a character is blocked when an uncomposed one of
//! the same or a higher class, or any starter, stands between them), and a starter that does
//! not compose starts the next *block*. A library sorts each run in a buffer and holds the
//! uncomposed marks of a block in another; here both would be unbounded (a base letter may
//! carry any number of marks), so neither is kept:
//! - a run is emitted in sorted order by passes over the input, one per distinct class in it
//!   (at most the few dozen classes Unicode has), after a first pass that finds it already
//!   sorted (the common case: one pass);
//! - a block is simulated twice: once to find its final composee, which comes first in the
//!   output, and again to emit the characters that did not compose, in order.
//!
//! **Units.** The output is written a *unit* at a time: a unit starts at an input character
//! whose decomposition starts with a starter that never composes with what precedes it (not
//! the second character of any composite), so the normalization of the text from there on does
//! not depend on what came before. A full output buffer therefore stops the call at the start
//! of a unit, which is where the next call resumes; and an input that may continue
//! (`last == false`) is normalized up to the start of its last unit, which more input could
//! extend.
//!
//! **Bytes that are not UTF-8** pass through unchanged, one byte at a time, as starters that
//! never compose (the reference takes only `str`, so this is picobpe's choice).
//!
//! **`Nmt` first** ([`UnicodeForm::NmtNfkc`]): `tokenizers`' `Nmt` maps one character at a
//! time (it drops some controls and makes other characters spaces), so NFKC of its output is
//! NFKC with each input character's decomposition replaced by its `Nmt` image: nothing, or a
//! space. A dropped character then decomposes to nothing (walks skip it, and it never starts a
//! unit unless what follows it does); a space is a starter that never composes. A byte that
//! is not UTF-8 is read as U+FFFD, which `Nmt` makes a space.

use super::unicode_tables as t;
use crate::slice_ops;
use crate::tokenize::Progress;
use crate::utf8::{self, Utf8};

/// A Unicode normalization form, as `tokenizers`' normalizers of the same names apply it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnicodeForm {
    /// Canonical decomposition, then canonical composition.
    Nfc,
    /// Canonical decomposition.
    Nfd,
    /// Compatibility decomposition, then canonical composition.
    Nfkc,
    /// Compatibility decomposition.
    Nfkd,
    /// `tokenizers`' `Nmt` then `NFKC` (the start of its `SentencePieceUnigramTokenizer`'s
    /// normalizer): `Nmt` drops U+0001–U+0008, U+000B, U+000E–U+001F, U+007F, U+008F and
    /// U+009F, and makes U+0009, U+000A, U+000C, U+000D, U+1680, U+200B–U+200F, U+2028,
    /// U+2029, U+2581, U+FEFF and U+FFFD (so each byte that is not UTF-8) a space.
    NmtNfkc,
}

impl UnicodeForm {
    fn compat(self) -> bool {
        matches!(
            self,
            UnicodeForm::Nfkc | UnicodeForm::Nfkd | UnicodeForm::NmtNfkc
        )
    }

    fn composes(self) -> bool {
        matches!(
            self,
            UnicodeForm::Nfc | UnicodeForm::Nfkc | UnicodeForm::NmtNfkc
        )
    }

    /// `Nmt` comes first.
    #[inline]
    fn nmt(self) -> bool {
        self == UnicodeForm::NmtNfkc
    }

    /// True when `Nmt` (with this form) changes the character `cp`.
    #[inline]
    fn nmt_changes(self, cp: u32) -> bool {
        self.nmt() && nmt_map(cp).is_some()
    }

    /// The flag bit that says a code point alone is its own normalization under this form.
    fn same_bit(self) -> u8 {
        let i = match self {
            UnicodeForm::Nfc => 0,
            UnicodeForm::Nfd => 1,
            UnicodeForm::Nfkc | UnicodeForm::NmtNfkc => 2,
            UnicodeForm::Nfkd => 3,
        };
        t::SAME[i]
    }

    /// The form's flag bit that says a code point decomposes under it.
    fn decomposes_mask(self) -> u8 {
        if self.compat() {
            t::HAS_CANONICAL | t::HAS_COMPAT
        } else {
            t::HAS_CANONICAL
        }
    }
}

/// Why [`normalize`] stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalizeError {
    /// The output buffer is full: `text[..consumed]` normalized is `out[..written]`; drain it
    /// and call again with `text[consumed..]` (always the start of a unit).
    OutputFull {
        /// Input bytes normalized.
        consumed: usize,
        /// Bytes written.
        written: usize,
    },
    /// One unit (a starter with everything that may compose with it or sort among its marks)
    /// needs more room than the whole output buffer: call again with at least `needed` bytes.
    UnitTooLong {
        /// Offset of the unit in the input.
        offset: usize,
        /// Its length in input bytes.
        len: usize,
        /// Bytes of output it needs.
        needed: usize,
    },
}

impl core::fmt::Display for NormalizeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            NormalizeError::OutputFull { consumed, written } => write!(
                f,
                "output buffer full after {consumed} input bytes ({written} bytes written)"
            ),
            NormalizeError::UnitTooLong {
                offset,
                len,
                needed,
            } => write!(
                f,
                "the {len}-byte character sequence at offset {offset} normalizes to {needed} \
                 bytes, more than the output buffer holds"
            ),
        }
    }
}

/// Normalizes `text` into `out`. With `last == false` the text may go on in a later call:
/// the result stops at the start of the last unit (hand `text[consumed..]` in front of the
/// next input). With `last == true`, `consumed == text.len()` on success.
pub fn normalize(
    form: UnicodeForm,
    text: &[u8],
    last: bool,
    out: &mut [u8],
) -> Result<Progress, NormalizeError> {
    let mut w = Writer {
        out,
        n: 0,
        count_only: false,
        lowercase: false,
    };
    let mut at = 0;
    while at < text.len() {
        // ASCII followed by ASCII is a unit of its own that normalization leaves alone.
        let rest = text.get(at..).unwrap_or(&[]);
        let run = (rest.iter())
            .position(|&b| b >= 0x80 || form.nmt_changes(u32::from(b)))
            .unwrap_or(rest.len());
        if run > 1 {
            let copy = run - 1;
            let k = match w.out.get_mut(w.n..) {
                Some(dst) => slice_ops::copy(dst, rest.get(..copy).unwrap_or(&[])),
                None => 0,
            };
            w.n += k;
            at += k;
            if k < copy {
                return Err(NormalizeError::OutputFull {
                    consumed: at,
                    written: w.n,
                });
            }
        }
        // Units that normalization leaves alone, copied when they all fit.
        let clean = clean_run(form, text, at, last);
        if clean > at {
            let run = text.get(at..clean).unwrap_or(&[]);
            if let Some(dst) = w.out.get_mut(w.n..w.n + run.len()) {
                w.n += slice_ops::copy(dst, run);
                at = clean;
                continue;
            }
        }
        let end = unit_end(form, text, at);
        if end == text.len() && !last {
            break;
        }
        let mark = w.n;
        if emit_unit(form, text, at, end, &mut w).is_err() {
            if mark > 0 {
                return Err(NormalizeError::OutputFull {
                    consumed: at,
                    written: mark,
                });
            }
            let mut counter = Writer {
                out: &mut [],
                n: 0,
                count_only: true,
                lowercase: false,
            };
            let _ = emit_unit(form, text, at, end, &mut counter);
            return Err(NormalizeError::UnitTooLong {
                offset: at,
                len: end - at,
                needed: counter.n,
            });
        }
        at = end;
    }
    Ok(Progress {
        consumed: at,
        written: w.n,
    })
}

/// Normalizes the unit that starts at `text[start..]` by `form`, with `lowercase` lowercasing
/// the result (`tokenizers`' `Lowercase` after the form), into `out`, as much as fits.
/// Returns the unit's end and the bytes its output needs (more than `out.len()`: nothing
/// usable was written), or `None` when `last` is false and the unit reaches the end of the
/// text (more input may extend it).
pub(super) fn unit_into(
    form: UnicodeForm,
    lowercase: bool,
    text: &[u8],
    start: usize,
    last: bool,
    out: &mut [u8],
) -> Option<(usize, usize)> {
    let end = unit_end(form, text, start);
    if end == text.len() && !last {
        return None;
    }
    let mut w = Writer {
        out,
        n: 0,
        count_only: false,
        lowercase,
    };
    if emit_unit(form, text, start, end, &mut w).is_ok() {
        return Some((end, w.n));
    }
    let mut counter = Writer {
        out: &mut [],
        n: 0,
        count_only: true,
        lowercase,
    };
    let _ = emit_unit(form, text, start, end, &mut counter);
    Some((end, counter.n))
}

/// Length of the longest prefix of `text` made of whole units that normalization leaves as
/// they are: ASCII, bytes that are not UTF-8, characters that are their own normalization
/// (under NFC most precomposed letters and every Hangul syllable), and short units of several
/// characters that normalize to themselves. With `last == false` the unit that
/// reaches the end of the text is left out (more input may extend it).
pub(crate) fn identity_prefix(form: UnicodeForm, text: &[u8], last: bool) -> usize {
    let mut at = 0;
    while at < text.len() {
        let rest = text.get(at..).unwrap_or(&[]);
        let run = (rest.iter())
            .position(|&b| b >= 0x80 || form.nmt_changes(u32::from(b)))
            .unwrap_or(rest.len());
        if run > 1 {
            at += run - 1;
        }
        let clean = clean_run(form, text, at, last);
        if clean > at {
            at = clean;
            continue;
        }
        let end = unit_end(form, text, at);
        if end == text.len() && !last {
            return at;
        }
        let alone = match utf8::decode(text, at) {
            Utf8::Scalar(cp, len) if at + len == end => {
                (cp < 0x80 || flags(cp) & form.same_bit() != 0) && !form.nmt_changes(cp)
            }
            Utf8::Scalar(..) => unit_is_normalized(form, text, at, end),
            _ => end == at + 1 && !form.nmt(),
        };
        if !alone {
            return at;
        }
        at = end;
    }
    at
}

/// The end of the run of units from `at` that normalization leaves alone (`at` when the
/// first is not), found in one pass with two table lookups per character: each unit a
/// starter that does not decompose, never composes with what precedes it, is its own
/// normalization and is not one `Nmt` changes (CJK, kana, most letters of most scripts),
/// followed by marks of the same kind in canonical order, none of which composes under a
/// composing form (diacritized Arabic, Hebrew, Indic). The callers' unit-by-unit path handles
/// the rest. With `last == false` the unit that reaches the end of the text is left out (more
/// input may extend it).
#[inline]
fn clean_run(form: UnicodeForm, text: &[u8], at: usize, last: bool) -> usize {
    let same = form.same_bit();
    let blocks = form.decomposes_mask() | if form.composes() { t::BACKWARD } else { 0 };
    // Where the current unit starts, and the position past what is read of it.
    let mut unit = at;
    let mut pos = at;
    let mut last_class = 0u8;
    loop {
        match text.get(pos) {
            None => return if last { pos } else { unit },
            // ASCII starts a unit unless `Nmt` drops it (then the general rule decides).
            Some(&b) if b < 0x80 => {
                return if pos == at || form.nmt_changes(u32::from(b)) {
                    unit
                } else {
                    pos
                }
            }
            Some(_) => {}
        }
        let (c, len) = match utf8::decode(text, pos) {
            Utf8::Scalar(c, len) => (c, len),
            // A cut character may join this unit.
            Utf8::Truncated(_) => return unit,
            // A byte that is not UTF-8 is a unit of its own.
            Utf8::Invalid(_) => return if pos == at { unit } else { pos },
        };
        let f = flags(c);
        let class = ccc(c);
        let plain = f & blocks == 0 && f & same != 0 && !form.nmt_changes(c);
        if class == 0 && !(form.composes() && f & t::BACKWARD != 0) {
            // A unit start (when it does not decompose): the unit before it is whole.
            if plain {
                (unit, last_class) = (pos, 0);
            } else if pos > at && starts_unit(form, text, pos) {
                return pos;
            } else {
                return unit;
            }
        } else if pos == at || !plain || class < last_class || class == 0 {
            // A mark out of order, one that composes or decomposes, or a composing starter:
            // the unit changes.
            return unit;
        } else {
            last_class = class;
        }
        pos += len;
    }
}

/// Whether the unit `text[start..end]` of several characters (a letter and its marks, in
/// already sorted, uncomposable order: most accented Arabic, Hebrew and Indic text) is its own
/// normalization: normalized into a small buffer and compared. Units over 32 bytes say no.
fn unit_is_normalized(form: UnicodeForm, text: &[u8], start: usize, end: usize) -> bool {
    const MAX: usize = 32;
    let Some(unit) = text.get(start..end).filter(|u| u.len() <= MAX) else {
        return false;
    };
    let mut buf = [0u8; MAX];
    let mut w = Writer {
        out: &mut buf,
        n: 0,
        count_only: false,
        lowercase: false,
    };
    if emit_unit(form, text, start, end, &mut w).is_err() {
        return false;
    }
    let n = w.n;
    buf.get(..n) == Some(unit)
}

/// A value of the decomposed stream: a code point, or [`RAW`] plus a byte that is not UTF-8.
type Element = u32;

/// Elements at or above this stand for the byte `element - RAW`.
const RAW: u32 = 0x11_0000;

/// The output buffer is full.
struct Full;

/// Where normalized bytes go: the caller's buffer, or only their count; with `lowercase`,
/// each character goes through `char::to_lowercase` on its way out (`tokenizers`'
/// `Lowercase` after the form: see `folded.rs`).
struct Writer<'o> {
    out: &'o mut [u8],
    n: usize,
    count_only: bool,
    lowercase: bool,
}

impl Writer<'_> {
    fn put(&mut self, e: Element) -> Result<(), Full> {
        let (bytes, len) = match char::from_u32(e) {
            Some(c) if self.lowercase => return self.put_lower(c),
            Some(c) => utf8::encode(c),
            None => ([e.wrapping_sub(RAW) as u8, 0, 0, 0], 1),
        };
        self.put_raw(bytes.get(..len).unwrap_or(&[]))
    }

    /// The lowercase of `c`, one character or several.
    fn put_lower(&mut self, c: char) -> Result<(), Full> {
        for l in c.to_lowercase() {
            let (bytes, len) = utf8::encode(l);
            self.put_raw(bytes.get(..len).unwrap_or(&[]))?;
        }
        Ok(())
    }

    /// Text that is its own normalization (lowercased character by character when asked;
    /// bytes that are not UTF-8 pass as they are).
    fn put_bytes(&mut self, b: &[u8]) -> Result<(), Full> {
        if !self.lowercase {
            return self.put_raw(b);
        }
        let mut at = 0;
        while at < b.len() {
            match utf8::decode(b, at) {
                Utf8::Scalar(cp, len) => {
                    match char::from_u32(cp) {
                        Some(c) => self.put_lower(c)?,
                        None => self.put_raw(b.get(at..at + len).unwrap_or(&[]))?,
                    }
                    at += len;
                }
                Utf8::Invalid(len) | Utf8::Truncated(len) => {
                    let len = len.max(1);
                    self.put_raw(b.get(at..at + len).unwrap_or(&[]))?;
                    at += len;
                }
            }
        }
        Ok(())
    }

    fn put_raw(&mut self, b: &[u8]) -> Result<(), Full> {
        if !self.count_only {
            let dst = self.out.get_mut(self.n..).ok_or(Full)?;
            if dst.len() < b.len() {
                return Err(Full);
            }
            slice_ops::copy(dst, b);
        }
        self.n += b.len();
        Ok(())
    }
}

/// A byte of a two-level table (`index[cp >> 7]` names a 128-byte block of `blocks`).
#[inline]
fn two_level(cp: u32, limit: u32, index: &[u8], blocks: &[u8]) -> u8 {
    if cp >= limit {
        return 0;
    }
    let block = index
        .get((cp >> t::BLOCK_SHIFT) as usize)
        .copied()
        .unwrap_or(0);
    blocks
        .get((usize::from(block) << t::BLOCK_SHIFT) | (cp & 0x7F) as usize)
        .copied()
        .unwrap_or(0)
}

/// Canonical combining class (0 for bytes that are not UTF-8).
#[inline]
fn ccc(e: Element) -> u8 {
    two_level(e, t::CCC_LIMIT, &t::CCC_INDEX, &t::CCC_BLOCKS)
}

#[inline]
fn flags(e: Element) -> u8 {
    two_level(e, t::FLAGS_LIMIT, &t::FLAGS_INDEX, &t::FLAGS_BLOCKS)
}

const S_BASE: u32 = 0xAC00;
const L_BASE: u32 = 0x1100;
const V_BASE: u32 = 0x1161;
const T_BASE: u32 = 0x11A7;
const L_COUNT: u32 = 19;
const V_COUNT: u32 = 21;
const T_COUNT: u32 = 28;
const N_COUNT: u32 = V_COUNT * T_COUNT;
const S_COUNT: u32 = L_COUNT * N_COUNT;

/// The primary composite of `a` and `b`, if any (Hangul by the algorithm of Unicode §3.12).
#[inline]
fn compose(a: Element, b: Element) -> Option<Element> {
    if (L_BASE..L_BASE + L_COUNT).contains(&a) && (V_BASE..V_BASE + V_COUNT).contains(&b) {
        return Some(S_BASE + (a - L_BASE) * N_COUNT + (b - V_BASE) * T_COUNT);
    }
    if (S_BASE..S_BASE + S_COUNT).contains(&a)
        && (a - S_BASE) % T_COUNT == 0
        && (T_BASE + 1..T_BASE + T_COUNT).contains(&b)
    {
        return Some(a + (b - T_BASE));
    }
    if flags(b) & t::BACKWARD == 0 {
        return None;
    }
    let key = (u64::from(a) << 21) | u64::from(b);
    let i = t::COMPOSE_KEYS.binary_search(&key).ok()?;
    t::COMPOSE_VALUES.get(i).copied()
}

/// What `Nmt` makes of `cp`: `None` when it leaves it alone, else [`Source::Empty`] (dropped)
/// or a space.
#[inline]
fn nmt_map(cp: u32) -> Option<Source> {
    match cp {
        0x01..=0x08 | 0x0B | 0x0E..=0x1F | 0x7F | 0x8F | 0x9F => Some(Source::Empty),
        0x09
        | 0x0A
        | 0x0C
        | 0x0D
        | 0x1680
        | 0x200B..=0x200F
        | 0x2028
        | 0x2029
        | 0x2581
        | 0xFEFF
        | 0xFFFD => Some(Source::One(0x20)),
        _ => None,
    }
}

/// Where one input character's decomposition comes from.
#[derive(Clone, Copy)]
enum Source {
    /// Nothing: a character `Nmt` drops.
    Empty,
    /// The character itself (or a byte that is not UTF-8).
    One(Element),
    /// A Hangul syllable: L, V and T jamo (`t == 0`: none).
    Hangul(u32, u32, u32),
    /// A full decomposition from the tables, UTF-8.
    Table(&'static [u8]),
}

/// The decomposition of the input character at `text[at..]`, and its length in bytes.
#[inline]
fn decompose_at(form: UnicodeForm, text: &[u8], at: usize) -> (Source, usize) {
    let (cp, len) = match utf8::decode(text, at) {
        Utf8::Scalar(cp, len) => (cp, len),
        // With `Nmt`: U+FFFD, a space.
        _ if form.nmt() => return (Source::One(0x20), 1),
        _ => {
            return (
                Source::One(RAW + u32::from(text.get(at).copied().unwrap_or(0))),
                1,
            )
        }
    };
    if form.nmt() {
        if let Some(image) = nmt_map(cp) {
            return (image, len);
        }
    }
    (source_of(form, cp), len)
}

/// The decomposition of the scalar value `cp` under `form` (`Nmt` aside).
#[inline]
fn source_of(form: UnicodeForm, cp: u32) -> Source {
    if cp < 0x80 {
        return Source::One(cp);
    }
    if (S_BASE..S_BASE + S_COUNT).contains(&cp) {
        let s = cp - S_BASE;
        let (l, v, tt) = (
            L_BASE + s / N_COUNT,
            V_BASE + (s % N_COUNT) / T_COUNT,
            s % T_COUNT,
        );
        return Source::Hangul(l, v, if tt == 0 { 0 } else { T_BASE + tt });
    }
    let f = flags(cp);
    if f & form.decomposes_mask() == 0 {
        return Source::One(cp);
    }
    let (keys, ends, bytes): (&[u32], &[u16], &'static [u8]) =
        if form.compat() && f & t::HAS_COMPAT != 0 {
            (&t::COMPAT_KEYS, &t::COMPAT_ENDS, &t::COMPAT_UTF8)
        } else {
            (&t::CANONICAL_KEYS, &t::CANONICAL_ENDS, &t::CANONICAL_UTF8)
        };
    let Ok(i) = keys.binary_search(&cp) else {
        return Source::One(cp);
    };
    let start = match i.checked_sub(1) {
        Some(p) => ends.get(p).copied().unwrap_or(0),
        None => 0,
    };
    let end = ends.get(i).copied().unwrap_or(0);
    match bytes.get(usize::from(start)..usize::from(end)) {
        Some(d) if !d.is_empty() => Source::Table(d),
        _ => Source::One(cp),
    }
}

/// Calls `f` with each character of the full decomposition of the scalar value `cp` under
/// `form` (canonical, or compatibility for the K forms), in the tables' order: no canonical
/// reordering across characters (the caller's steps make that unnecessary).
#[inline]
pub(super) fn for_each_decomposed(form: UnicodeForm, cp: u32, mut f: impl FnMut(u32)) {
    match source_of(form, cp) {
        Source::Empty => {}
        Source::One(e) => f(e),
        Source::Hangul(l, v, tt) => {
            f(l);
            f(v);
            if tt != 0 {
                f(tt);
            }
        }
        Source::Table(d) => {
            let mut i = 0;
            while let Utf8::Scalar(e, len) = utf8::decode(d, i) {
                f(e);
                i += len;
            }
        }
    }
}

/// True when `cp` is a combining mark (General_Category M as the reference's tables have
/// it): what `tokenizers`' `StripAccents` drops.
#[inline]
pub(super) fn is_mark(cp: u32) -> bool {
    if cp < 0x300 {
        return false;
    }
    let i = t::MARK_RANGES.partition_point(|r| r.1 < cp);
    matches!(t::MARK_RANGES.get(i), Some(&(first, _)) if first <= cp)
}

/// A position in the decomposed stream of `text[..end]`, which can be copied to walk the same
/// elements again.
#[derive(Clone, Copy)]
struct Walk<'a> {
    form: UnicodeForm,
    text: &'a [u8],
    end: usize,
    /// Offset of the current input character.
    at: usize,
    /// Its length in bytes.
    width: usize,
    src: Source,
    /// Position inside `src`: element index (`One`, `Hangul`) or byte offset (`Table`).
    i: usize,
}

impl<'a> Walk<'a> {
    fn new(form: UnicodeForm, text: &'a [u8], at: usize, end: usize) -> Self {
        let mut w = Walk {
            form,
            text,
            end,
            at,
            width: 0,
            src: Source::One(0),
            i: 0,
        };
        w.load();
        w
    }

    /// Loads the decomposition of the character at `at`, past characters that have none.
    fn load(&mut self) {
        self.i = 0;
        while self.at < self.end {
            let (src, width) = decompose_at(self.form, self.text, self.at);
            self.src = src;
            self.width = width;
            if !matches!(src, Source::Empty) {
                break;
            }
            self.at += width;
        }
    }

    /// The next element and the step to the one after it inside the current character.
    #[inline]
    fn peek_step(&self) -> Option<(Element, usize)> {
        if self.at >= self.end {
            return None;
        }
        match self.src {
            Source::Empty => None,
            Source::One(e) => (self.i == 0).then_some((e, 1)),
            Source::Hangul(l, v, tt) => match self.i {
                0 => Some((l, 1)),
                1 => Some((v, 1)),
                2 if tt != 0 => Some((tt, 1)),
                _ => None,
            },
            Source::Table(d) => match utf8::decode(d, self.i) {
                Utf8::Scalar(cp, len) => Some((cp, len)),
                _ => None,
            },
        }
    }

    #[inline]
    fn peek(&self) -> Option<Element> {
        self.peek_step().map(|(e, _)| e)
    }

    #[inline]
    fn next(&mut self) -> Option<Element> {
        let (e, step) = self.peek_step()?;
        self.i += step;
        if self.peek_step().is_none() {
            self.at += self.width;
            self.load();
        }
        Some(e)
    }
}

/// Whether a unit starts at the input character at `text[at..]` (see the module docs). With
/// `Nmt`, a character it drops starts one when the first character after the dropped ones
/// does; when the text ends before one is whole (more input could bring a mark), it does not.
#[inline]
pub(super) fn starts_unit(form: UnicodeForm, text: &[u8], at: usize) -> bool {
    if form.nmt() {
        let mut next = at;
        loop {
            match utf8::decode(text, next) {
                Utf8::Scalar(cp, len) if matches!(nmt_map(cp), Some(Source::Empty)) => next += len,
                Utf8::Truncated(_) if next > at => return false,
                _ => break,
            }
        }
        if next > at {
            return starts_unit_after_nmt(form, text, next);
        }
    }
    starts_unit_after_nmt(form, text, at)
}

/// [`starts_unit`] at a character that `Nmt` does not drop.
#[inline]
fn starts_unit_after_nmt(form: UnicodeForm, text: &[u8], at: usize) -> bool {
    match text.get(at) {
        Some(&b) if b < 0x80 && !form.nmt_changes(u32::from(b)) => return true,
        None => return true,
        _ => {}
    }
    // A character that does not decompose (most of any script) is its own first element.
    if let Utf8::Scalar(cp, _) = utf8::decode(text, at) {
        let f = flags(cp);
        let hangul = (S_BASE..S_BASE + S_COUNT).contains(&cp);
        if f & form.decomposes_mask() == 0 && !hangul && !form.nmt_changes(cp) {
            return ccc(cp) == 0 && (!form.composes() || f & t::BACKWARD == 0);
        }
    }
    let first = Walk::new(form, text, at, text.len()).peek().unwrap_or(0);
    ccc(first) == 0 && (!form.composes() || flags(first) & t::BACKWARD == 0)
}

/// Length of the unit that starts at `text[at..]` (0 at the end of the text).
pub(crate) fn unit_len(form: UnicodeForm, text: &[u8], at: usize) -> usize {
    if at >= text.len() {
        return 0;
    }
    unit_end(form, text, at) - at
}

/// The end of the unit that starts at `at` (the next unit start, or the end of the text).
fn unit_end(form: UnicodeForm, text: &[u8], at: usize) -> usize {
    let mut i = at;
    loop {
        // The end, or a character that more input may complete (it may be a mark that sorts
        // or composes into this unit): the unit runs to the end of the text.
        i += match utf8::decode(text, i) {
            Utf8::Scalar(_, len) => len,
            Utf8::Invalid(_) => 1,
            Utf8::Truncated(_) => return text.len(),
        };
        if i >= text.len() || matches!(utf8::decode(text, i), Utf8::Truncated(_)) {
            return text.len();
        }
        if starts_unit(form, text, i) {
            return i;
        }
    }
}

/// Whether the unit `text[start..end]` is its own normalization by a check that reads each
/// character's flags once (most accented Arabic, Hebrew and Indic units): a starter then
/// marks, each character its own normalization alone and unchanged by `Nmt`, the marks'
/// combining classes never decreasing (so the canonical order is the text's order), and,
/// under a composing form, no mark the second character of any composite (so nothing
/// composes). `false` says only that the full walk must decide.
#[inline]
fn unit_is_its_own(form: UnicodeForm, text: &[u8], start: usize, end: usize) -> bool {
    let same = form.same_bit();
    let backward = if form.composes() { t::BACKWARD } else { 0 };
    let mut at = start;
    let mut last_class = 0u8;
    while at < end {
        let Utf8::Scalar(cp, len) = utf8::decode(text, at) else {
            return false;
        };
        let f = flags(cp);
        let class = ccc(cp);
        let first = at == start;
        if f & same == 0
            || form.nmt_changes(cp)
            || first != (class == 0)
            || class < last_class
            || !first && f & backward != 0
        {
            return false;
        }
        last_class = class;
        at += len;
    }
    at == end
}

/// Whether the decomposition `d` (UTF-8 from the tables) is its own normalization as it
/// stands: every character a starter (so no reordering), and under a composing form none
/// after the first the second character of any composite (so nothing composes).
#[inline]
fn starters_that_stay(form: UnicodeForm, d: &[u8]) -> bool {
    let backward = if form.composes() { t::BACKWARD } else { 0 };
    let mut i = 0;
    while let Utf8::Scalar(e, len) = utf8::decode(d, i) {
        if ccc(e) != 0 || i > 0 && flags(e) & backward != 0 {
            return false;
        }
        i += len;
    }
    i == d.len()
}

/// Writes the normalization of the unit `text[start..end]`.
fn emit_unit(
    form: UnicodeForm,
    text: &[u8],
    start: usize,
    end: usize,
    w: &mut Writer<'_>,
) -> Result<(), Full> {
    // One character that is its own normalization, or a letter and marks that are: itself.
    if let Utf8::Scalar(cp, len) = utf8::decode(text, start) {
        if start + len == end && flags(cp) & form.same_bit() != 0 && !form.nmt_changes(cp) {
            return w.put_bytes(text.get(start..end).unwrap_or(&[]));
        }
        if start + len < end && unit_is_its_own(form, text, start, end) {
            return w.put_bytes(text.get(start..end).unwrap_or(&[]));
        }
        // One character whose decomposition is starters that cannot compose (a full-width
        // form, a ligature, a compatibility ideograph): its decomposition.
        if start + len == end {
            if let (Source::Table(d), _) = decompose_at(form, text, start) {
                if starters_that_stay(form, d) {
                    return w.put_bytes(d);
                }
            }
        }
    }
    let composes = form.composes();
    let mut walk = Walk::new(form, text, start, end);
    while let Some(e) = walk.peek() {
        if ccc(e) != 0 {
            // Non-starters with no starter before them (the start of the text).
            let run = walk;
            let n = skip_run(&mut walk);
            for_each_sorted(run, n, |e, _| w.put(e))?;
            continue;
        }
        let block = walk;
        let (composee, after) = simulate(block, composes, |_| Ok(()))?;
        w.put(composee)?;
        simulate(block, composes, |e| w.put(e))?;
        walk = after;
    }
    Ok(())
}

/// Moves `walk` past a run of non-starters; returns how many elements it holds.
fn skip_run(walk: &mut Walk<'_>) -> usize {
    let mut n = 0;
    while let Some(e) = walk.peek() {
        if ccc(e) == 0 {
            break;
        }
        walk.next();
        n += 1;
    }
    n
}

/// Calls `f` with the `n` non-starters from `run` on, stably sorted by class: one pass when
/// they are already in order, else one pass per distinct class.
fn for_each_sorted(
    run: Walk<'_>,
    n: usize,
    mut f: impl FnMut(Element, u8) -> Result<(), Full>,
) -> Result<(), Full> {
    let (mut lowest, mut sorted, mut prev) = (u8::MAX, true, 0u8);
    let mut w = run;
    for _ in 0..n {
        let c = w.next().map(ccc).unwrap_or(0);
        sorted &= c >= prev;
        prev = c;
        lowest = lowest.min(c);
    }
    if sorted {
        let mut w = run;
        for _ in 0..n {
            let e = w.next().unwrap_or(0);
            f(e, ccc(e))?;
        }
        return Ok(());
    }
    let mut class = lowest;
    loop {
        let mut next_class: Option<u8> = None;
        let mut w = run;
        for _ in 0..n {
            let e = w.next().unwrap_or(0);
            let c = ccc(e);
            if c == class {
                f(e, c)?;
            } else if c > class && next_class.is_none_or(|m| c < m) {
                next_class = Some(c);
            }
        }
        match next_class {
            Some(c) => class = c,
            None => return Ok(()),
        }
    }
}

/// Runs the composition of the block that starts at the starter under `start`: calls
/// `uncomposed` with each character that stays (in output order, after the composee) and
/// returns the final composee and the walk at the block's end (the next starter that does not
/// compose, or the unit's end). Without `composes` (NFD, NFKD) nothing composes and the block
/// is the starter and its run of marks.
fn simulate<'a>(
    start: Walk<'a>,
    composes: bool,
    mut uncomposed: impl FnMut(Element) -> Result<(), Full>,
) -> Result<(Element, Walk<'a>), Full> {
    let mut walk = start;
    let mut composee = walk.next().unwrap_or(0);
    // Class of the last character that stayed; 0 while none has (they are all non-starters).
    let mut last = 0u8;
    while let Some(e) = walk.peek() {
        if ccc(e) == 0 {
            if composes && last == 0 {
                if let Some(r) = compose(composee, e) {
                    composee = r;
                    walk.next();
                    continue;
                }
            }
            break;
        }
        let run = walk;
        let n = skip_run(&mut walk);
        for_each_sorted(run, n, |e, c| {
            if composes && (last == 0 || last < c) {
                if let Some(r) = compose(composee, e) {
                    composee = r;
                    return Ok(());
                }
            }
            last = c;
            uncomposed(e)
        })?;
    }
    Ok((composee, walk))
}

#[cfg(test)]
mod tests {
    //! Examples from UAX #15 and the Unicode Standard (§3.11, §3.12), small enough for Miri;
    //! the exhaustive comparison with `tokenizers` is `tests/tests/unicode_normalization.rs`.
    use super::*;

    fn run(form: UnicodeForm, text: &str) -> std::string::String {
        let mut out = [0u8; 64];
        let p = normalize(form, text.as_bytes(), true, &mut out).unwrap();
        assert_eq!(p.consumed, text.len());
        std::string::String::from_utf8(out[..p.written].to_vec()).unwrap()
    }

    #[test]
    fn standard_examples() {
        use UnicodeForm::*;
        // Canonical composition and decomposition.
        assert_eq!(run(Nfd, "\u{e9}"), "e\u{301}");
        assert_eq!(run(Nfc, "e\u{301}"), "\u{e9}");
        // Canonical ordering: below (220) before above (230); composition skips the blocked.
        assert_eq!(run(Nfd, "a\u{301}\u{316}"), "a\u{316}\u{301}");
        assert_eq!(run(Nfc, "a\u{301}\u{316}"), "\u{e1}\u{316}");
        // Singletons and composition exclusions: Ångström sign, Ohm sign.
        assert_eq!(run(Nfc, "\u{212B}"), "\u{c5}");
        assert_eq!(run(Nfc, "\u{2126}"), "\u{3a9}");
        // Compatibility: the fi ligature, superscript two, full-width A.
        assert_eq!(run(Nfkc, "\u{FB01}\u{b2}\u{FF21}"), "fi2A");
        assert_eq!(run(Nfc, "\u{FB01}"), "\u{FB01}");
        // Hangul: syllable <-> jamo, LV + T composes.
        assert_eq!(run(Nfd, "\u{AC01}"), "\u{1100}\u{1161}\u{11A8}");
        assert_eq!(run(Nfc, "\u{1100}\u{1161}\u{11A8}"), "\u{AC01}");
        assert_eq!(run(Nfc, "\u{AC00}\u{11A8}"), "\u{AC01}");
        // A byte that is not UTF-8 passes through between characters that normalize.
        let mut out = [0u8; 16];
        let p = normalize(Nfc, b"e\xCC\x81\xFFe", true, &mut out).unwrap();
        assert_eq!(&out[..p.written], b"\xC3\xA9\xFFe");
    }

    #[test]
    fn a_small_buffer_resumes_at_a_unit() {
        let text = "xe\u{301}\u{316}y\u{AC00}\u{11A8}";
        let want = run(UnicodeForm::Nfc, text);
        let (mut got, mut at) = (std::vec::Vec::new(), 0);
        let mut buf = [0u8; 5];
        loop {
            match normalize(UnicodeForm::Nfc, &text.as_bytes()[at..], true, &mut buf) {
                Ok(p) => {
                    got.extend_from_slice(&buf[..p.written]);
                    break;
                }
                Err(NormalizeError::OutputFull { consumed, written }) => {
                    got.extend_from_slice(&buf[..written]);
                    at += consumed;
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, want.as_bytes());
    }
}
