//! A piece cache in caller memory ([`Tokenizer::encode_cached`](crate::Tokenizer::encode_cached)).
//!
//! Natural text repeats its pieces (Zipf): most pieces of a long text were seen a few thousand
//! pieces earlier. The cache remembers the ids of pieces of up to [`CACHE_WIDE_PIECE`] bytes,
//! whole tokens included, and the encoder asks it *before* the piece table: a hit costs one
//! hash of the piece's packed bytes and one cache-line load, where the piece table costs a
//! pilot load and then an entry load that depends on it (two cache misses in a row on a
//! 100k–200k vocabulary), and a merged piece dozens of lookups.
//!
//! Layout: a slice of [`CacheEntry`] lines, one 64-byte cache line each. The first three
//! quarters of the lines (`short_lines`) hold two *short* pieces each (1–[`CACHE_PIECE`]
//! bytes, up to [`CACHE_IDS`] ids): two ways, each a 16-byte key (`CacheKey`: the bytes
//! packed into two words with the length) and four ids; or one short piece of up to
//! [`CACHE_FULL_IDS`] ids that takes the whole line (`FULL` in the count byte: a word of
//! Korean or Greek that the vocabulary splits finely, found by the same one probe). The last
//! quarter holds one *wide* piece per line (16–[`CACHE_WIDE_PIECE`] bytes: the longer words of
//! Russian, Greek or Korean text), its 32-byte key (`WideKey`) and its ids spread over both
//! ways: up to [`CACHE_WIDE_IDS`] in 32-bit lanes, or up to [`CACHE_PACKED_IDS`] of 20 bits
//! each (`PACKED` in the count byte). A wide piece may live in either of two neighbouring
//! lines (`WideSet`).
//!
//! A lookup hits only when the stored key equals the piece's, so a hit returns exactly the ids
//! the encoder would compute, and a miss costs only the recomputation. The top byte of a way's
//! first id holds the piece's id count, with `WIDE` set in both ways of a wide piece and
//! `FULL` in the first way of a short piece of the whole line (whose second way's key can match
//! no key: [`CacheEntry`]'s `emit_full`), so no kind of lookup can take another kind's entry
//! for its own (even if the caller changes the cache's length). Merged pieces are kept in preference to whole tokens
//! ([`CacheEntry`]'s `put`). Longer pieces and pieces of more ids go to the long-piece store
//! (`crate::long_cache`) when the cache is large enough, else they are not cached. Single bytes
//! are, although they are one table read anyway: the encoder's loop then need not branch on
//! the piece's length.
//!
//! When the tables backtrack, the last lines of the cache hold a `PairMemo` instead: lines
//! marked so that neither kind of line is ever read as the other.

use crate::slice_ops;

/// Longest piece (in bytes) a cache way holds.
pub const CACHE_PIECE: usize = 15;

/// Most ids a cached short piece may have.
pub const CACHE_IDS: usize = 4;

/// Longest piece (in bytes) a wide cache line holds (pieces of up to [`CACHE_PIECE`] bytes go
/// there when they have more than [`CACHE_IDS`] ids).
pub const CACHE_WIDE_PIECE: usize = 31;

/// Most ids a cached short piece may have when it takes its whole line (a way's four lanes and
/// the other way's 32 bytes, `CacheEntry::put`).
pub const CACHE_FULL_IDS: usize = 12;

/// Most ids a cached wide piece may have when each is below 2^24 (one per 32-bit lane).
pub const CACHE_WIDE_IDS: usize = 8;

/// Most ids a cached wide piece may have when each is below 2^20: 20
/// bits each, six per way. Greek in cl100k_base has many words of 16–31 bytes and 9–12 ids.
pub const CACHE_PACKED_IDS: usize = 12;

/// Ids below this fit the packed wide format (every id of cl100k_base and o200k_base does).
const PACKED_ID_LIMIT: u32 = 1 << 20;

/// Flag in the count byte of a wide piece's first way: its ids are packed, 20 bits each.
const PACKED: u32 = 0x40;

/// Ids at or above this are never cached: the id count lives in the top byte of the first id.
const ID_LIMIT: u32 = 1 << 24;

/// Flag in the count byte of both ways of a wide piece.
const WIDE: u32 = 0x80;

/// Flag in the count byte of a short piece that takes its whole line (5–12 ids).
const FULL: u32 = 0x20;

/// How many of a cache's `lines` hold short pieces (the rest, from this index on, hold wide
/// ones): three quarters, and all of a cache of fewer than four lines.
#[inline(always)]
pub(crate) fn short_lines(lines: usize) -> usize {
    lines - lines / 4
}

/// A piece of 1–[`CACHE_PIECE`] bytes packed into two words: `lo` holds bytes 0–7 and `hi`
/// bytes 8–14 (little-endian, zero past the end) with the length in its top byte, so no two
/// pieces share a key and no key is zero (the empty way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CacheKey {
    lo: u64,
    hi: u64,
}

impl CacheKey {
    /// The key of no piece (an empty way's).
    pub(crate) const EMPTY: CacheKey = CacheKey { lo: 0, hi: 0 };

    /// The key of a piece of `len` bytes (`1..=CACHE_PIECE`) whose first sixteen bytes, read
    /// little-endian, are `w0` and `w1` (bytes past the piece may be anything).
    #[inline(always)]
    pub(crate) fn from_words(w0: u64, w1: u64, len: usize) -> CacheKey {
        // One load of both masks and the length tag instead of two variable shifts.
        let [lo_mask, hi_mask, tag] = KEY_MASKS.get(len).copied().unwrap_or([0; 3]);
        CacheKey {
            lo: w0 & lo_mask,
            hi: (w1 & hi_mask) | tag,
        }
    }

    /// A stand-in key for a piece of `len` bytes too long for a short line (`CACHE_PIECE <
    /// len <= 255`): it carries the length, no bytes, and matches no short piece's key. For
    /// the cached fast loop's batch, which then looks in wide lines or the long-piece store.
    #[inline(always)]
    pub(crate) fn of_long(len: usize) -> CacheKey {
        CacheKey {
            lo: 0,
            hi: (len as u64) << 56,
        }
    }

    /// The length of the piece this key packs (0 for [`CacheKey::EMPTY`]).
    #[inline(always)]
    pub(crate) fn len(self) -> usize {
        (self.hi >> 56) as usize
    }

    /// The key of `piece`, or `None` when it is empty or longer than [`CACHE_PIECE`] bytes.
    /// Reads whole words: 1–7 bytes as [`crate::hash::short_key`] packs them; 8–15 as the
    /// first eight and the eight ending at the piece's end, shifted down past the overlap.
    #[inline]
    pub(crate) fn of(piece: &[u8]) -> Option<CacheKey> {
        let n = piece.len();
        let (lo, hi) = match n {
            1..=7 => (crate::hash::short_key(piece) & low_bytes(7), 0),
            8..=CACHE_PIECE => {
                let first = read_u64(piece.get(..8)?);
                let last = read_u64(piece.get(n - 8..)?);
                // `>> 8` then `>> 8 * (15 - n)`: both shifts stay below 64 for n = 8..=15.
                (first, (last >> 8) >> (8 * (15 - n)))
            }
            _ => return None,
        };
        Some(CacheKey {
            lo,
            hi: hi | (n as u64) << 56,
        })
    }

    /// The line of a cache of `lines` lines (`lines > 0`) this key lives in. Two multiplies
    /// that issue in parallel: the probe's whole chain (pack, hash, index, load) is serial, so
    /// latency matters more here than a full avalanche; the top bits of each product depend
    /// on every bit of its word.
    #[inline(always)]
    pub(crate) fn line(self, lines: usize) -> usize {
        let h = self.lo.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ self.hi.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        (((h >> 32) * lines as u64) >> 32) as usize
    }
}

/// A piece of 1–[`CACHE_WIDE_PIECE`] bytes packed into four words: `a` holds bytes 0–15, `b`
/// bytes 16–30 and the length (zero past the end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WideKey {
    a: CacheKey,
    b: CacheKey,
}

impl WideKey {
    /// The key of `piece`, or `None` when it is empty or longer than [`CACHE_WIDE_PIECE`].
    #[inline]
    pub(crate) fn of(piece: &[u8]) -> Option<WideKey> {
        if piece.is_empty() || piece.len() > CACHE_WIDE_PIECE {
            return None;
        }
        let mut bytes = [0u8; 32];
        slice_ops::copy(&mut bytes, piece);
        let (first, second) = bytes.split_at(16);
        let mut block = [0u8; 16];
        slice_ops::copy(&mut block, first);
        let (w0, w1) = words(&block);
        slice_ops::copy(&mut block, second);
        let (w2, w3) = words(&block);
        Some(WideKey {
            a: CacheKey { lo: w0, hi: w1 },
            b: CacheKey {
                lo: w2,
                hi: (w3 & low_bytes(7)) | (piece.len() as u64) << 56,
            },
        })
    }

    /// The key of the `len`-byte piece (`1..=CACHE_WIDE_PIECE`) at the start of `window`:
    /// [`WideKey::of`] from four word loads and masks, no byte copy (the cached fast loop's
    /// wide pieces, where 32 bytes of text are left).
    #[inline(always)]
    pub(crate) fn from_window(window: &[u8; 32], len: usize) -> Option<WideKey> {
        if len == 0 || len > CACHE_WIDE_PIECE {
            return None;
        }
        let word = |k: usize| {
            read_u64(window.get(8 * k..8 * k + 8).unwrap_or(&[]))
                & low_bytes(len.saturating_sub(8 * k).min(8))
        };
        Some(WideKey {
            a: CacheKey {
                lo: word(0),
                hi: word(1),
            },
            b: CacheKey {
                lo: word(2),
                hi: (word(3) & low_bytes(7)) | (len as u64) << 56,
            },
        })
    }

    /// The line, among `lines` wide lines (`lines > 0`), this key lives in.
    #[inline]
    pub(crate) fn line(self, lines: usize) -> usize {
        let h = self.a.lo.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ self.a.hi.wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
            ^ self.b.lo.wrapping_mul(0x1656_67b1_9e37_79f9)
            ^ self.b.hi.wrapping_mul(0x27d4_eb2f_1656_67c5);
        (((h >> 32) * lines as u64) >> 32) as usize
    }

    /// The pair of wide lines this key may live in, in a cache whose wide lines are
    /// `cache[first..end]` (`first < end`): two neighbours, or one line when there is only one.
    #[inline]
    pub(crate) fn set(self, first: usize, end: usize) -> WideSet {
        let pairs = (end - first) / 2;
        if pairs == 0 {
            return WideSet { a: first, b: first };
        }
        let a = first + 2 * self.line(pairs);
        WideSet { a, b: a + 1 }
    }
}

/// The two wide lines a wide piece may live in (`a == b` when the cache has one).
///
/// Two-way, because one wide line per piece thrashed: Korean in cl100k_base had some 20,000
/// distinct wide pieces (when short pieces of 5–12 ids were wide too, before they took whole
/// short lines) for about 60,000 wide lines of a 16 MiB cache, and a quarter of them
/// shared their line with another that came back as often, so both were merged again on every
/// pass (about 6,000 of 33,000 wide lookups missed in a simulation of the text repeated; about
/// 1,800 with two lines filled as [`WideSet::put`] does, and 3,100 when the newest piece always
/// goes into `a`). A piece found in `b` stays there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WideSet {
    a: usize,
    b: usize,
}

impl WideSet {
    /// Write the ids `cache` holds for `key` in this set at `out[at..]` (see
    /// [`CacheEntry::emit_wide`]); `None` when neither line holds `key`.
    #[inline]
    pub(crate) fn emit(
        self,
        cache: &[CacheEntry],
        key: WideKey,
        out: &mut [u32],
        at: usize,
    ) -> Option<Result<usize, usize>> {
        if let Some(done) = cache.get(self.a).and_then(|e| e.emit_wide(key, out, at)) {
            return Some(done);
        }
        if self.b == self.a {
            return None;
        }
        cache.get(self.b).and_then(|e| e.emit_wide(key, out, at))
    }

    /// [`prefetch`] both lines of this set.
    #[inline]
    pub(crate) fn prefetch(self, cache: &[CacheEntry]) {
        if let Some(line) = cache.get(self.a) {
            prefetch(line);
        }
        if let Some(line) = cache.get(self.b) {
            prefetch(line);
        }
    }

    /// Remember the wide piece `key` → `ids` in this set: in a line that holds no wide piece
    /// (`a` first), else in `a` after moving `a`'s piece to `b` (dropping `b`'s). False, and the
    /// lines unchanged, when the ids do not fit a wide line.
    #[inline]
    pub(crate) fn put(self, cache: &mut [CacheEntry], key: WideKey, ids: &[u32]) -> bool {
        let mut fresh = CacheEntry::EMPTY;
        if !fresh.put_wide(key, ids) {
            return false;
        }
        let holds = |i: usize| cache.get(i).is_some_and(CacheEntry::holds_wide);
        let target = if !holds(self.a) || self.b == self.a {
            self.a
        } else if !holds(self.b) {
            self.b
        } else {
            if let Some(&old) = cache.get(self.a) {
                if let Some(line) = cache.get_mut(self.b) {
                    *line = old;
                }
            }
            self.a
        };
        if let Some(line) = cache.get_mut(target) {
            *line = fresh;
        }
        true
    }
}

/// The *buddy* of short line `line` among the first `short` lines: its neighbour in the same
/// 128-byte pair (`line ^ 1`), when that is a short line too. A short piece whose own line
/// is taken whole (by a piece of 5–12 ids, [`CacheEntry::put`]) lives there instead, and a
/// lookup that misses its own line tries the buddy before merging: without it, a piece of
/// 5–12 ids and any other merged piece on the same line pushed each other out on every pass
/// (cl100k_base Korean, 16 MiB: some 3,600 pieces merged again per pass of the same text).
#[inline(always)]
pub(crate) fn buddy(line: usize, short: usize) -> Option<usize> {
    let b = line ^ 1;
    (b < short).then_some(b)
}

/// Remember the short piece `key` → `ids` whose own line is `line`, among the first `short`
/// lines of `cache`: in its own line ([`CacheEntry::put`]), unless that line is taken whole
/// and the piece would not take it (one of 1–4 ids), or would take it from another piece
/// of 5–12 ids while the buddy is not taken whole: then in the buddy ([`buddy`]).
#[inline]
pub(crate) fn put_short(
    cache: &mut [CacheEntry],
    short: usize,
    line: usize,
    key: CacheKey,
    ids: &[u32],
) {
    let home_taken = cache.get(line).is_some_and(CacheEntry::is_taken_whole);
    let target = match buddy(line, short) {
        Some(b) if home_taken => {
            let buddy_taken = cache.get(b).is_some_and(CacheEntry::is_taken_whole);
            if ids.len() > CACHE_IDS && buddy_taken {
                line
            } else {
                b
            }
        }
        _ => line,
    };
    if let Some(entry) = cache.get_mut(target) {
        entry.put(key, ids);
    }
}

/// The little-endian word of an 8-byte slice (0 for any other length).
#[inline(always)]
fn read_u64(bytes: &[u8]) -> u64 {
    <[u8; 8]>::try_from(bytes).map_or(0, u64::from_le_bytes)
}

/// The two little-endian words of a 16-byte block (two loads: no byte loop).
#[inline(always)]
pub(crate) fn words(bytes: &[u8; 16]) -> (u64, u64) {
    let (lo, hi) = bytes.split_at(8);
    (read_u64(lo), read_u64(hi))
}

/// Ask the CPU to start loading `line` into its caches; the encoder issues this for the
/// lines of pieces it will look up a little later. A no-op on targets without a prefetch
/// instruction in stable Rust, and under Miri (a hint has nothing to check).
#[inline(always)]
pub(crate) fn prefetch(line: &CacheEntry) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetcht0` only hints the cache hierarchy: it never faults and has no
    // architectural effect, whatever the address; here it is a valid reference anyway. The
    // `sse` feature it needs is part of the x86_64 baseline.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((line as *const CacheEntry).cast());
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = line;
}

/// For each piece length `n` (`0..=15`): the masks of its bytes in the first and second word of
/// its 16-byte window, and its length tag ([`CacheKey::from_words`]).
static KEY_MASKS: [[u64; 3]; CACHE_PIECE + 1] = {
    let mut masks = [[0u64; 3]; CACHE_PIECE + 1];
    let mut n = 0;
    while n <= CACHE_PIECE {
        let lo = if n >= 8 { 8 } else { n };
        let hi = n.saturating_sub(8);
        masks[n] = [low_bytes(lo), low_bytes(hi), (n as u64) << 56];
        n += 1;
    }
    masks
};

/// A mask of the low `n` bytes of a word (`n <= 8`).
#[inline(always)]
const fn low_bytes(n: usize) -> u64 {
    if n == 0 {
        0
    } else {
        u64::MAX >> (64 - 8 * n as u32)
    }
}

/// One way: a key and up to four ids, the count in the top byte of the first.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Way {
    key: CacheKey,
    ids: [u32; CACHE_IDS],
}

const EMPTY_WAY: Way = Way {
    key: CacheKey::EMPTY,
    ids: [0; CACHE_IDS],
};

/// One cache line of the piece cache: two pieces and their ids, 64 bytes, aligned to a cache
/// line. Start with [`CacheEntry::EMPTY`].
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct CacheEntry {
    ways: [Way; 2],
}

impl CacheEntry {
    /// An empty line.
    pub const EMPTY: CacheEntry = CacheEntry {
        ways: [EMPTY_WAY; 2],
    };

    /// Write the ids cached for `key` at `out[at..]`: `Some(Ok(n))` with their number, or
    /// `Some(Err(at + n))` when they do not fit; `None` when the line does not hold `key`.
    #[inline(always)]
    pub(crate) fn emit(
        &self,
        key: CacheKey,
        out: &mut [u32],
        at: usize,
    ) -> Option<Result<usize, usize>> {
        let way = if self.ways[0].key == key {
            &self.ways[0]
        } else if self.ways[1].key == key {
            &self.ways[1]
        } else {
            return None;
        };
        let [first, b, c, d] = way.ids;
        let n = (first >> 24) as usize;
        if n > CACHE_IDS {
            // A piece that takes the whole line, or half of a wide piece (not an answer).
            return self.emit_full(key, out, at);
        }
        let first = first & (ID_LIMIT - 1);
        Some(match out.get_mut(at..at + CACHE_IDS) {
            // Room for all four lanes: store them unconditionally, as one 16-byte store (lanes
            // past `n` are overwritten by the next piece or lie past the returned length).
            Some(dst) => {
                if let Ok(dst) = <&mut [u32; CACHE_IDS]>::try_from(dst) {
                    *dst = [first, b, c, d];
                }
                Ok(n)
            }
            None => write_ids(out, at, [first, b, c, d].get(..n).unwrap_or(&[])),
        })
    }

    /// [`CacheEntry::emit`] for a short piece of 5–12 ids, which takes the whole line: its key
    /// and count (with `FULL`) and its first four ids in way 0, the other ids in way 1's 32
    /// bytes, key included. Below 2^24, each id has a zero top byte, so way 1's key (whose top
    /// byte is the eighth id's) never equals a short or a wide key (their top byte is a length
    /// of 1 or more): no lookup takes way 1 for a piece's. Out of line: it would crowd the
    /// loops' hit path.
    #[inline(never)]
    fn emit_full(&self, key: CacheKey, out: &mut [u32], at: usize) -> Option<Result<usize, usize>> {
        let way = &self.ways[0];
        let count = way.ids[0] >> 24;
        if way.key != key || count & (WIDE | FULL) != FULL {
            return None;
        }
        let n = (count & !FULL) as usize;
        // The ids are the line's words after way 0's key (`put`'s layout).
        let words = self.words_of_line();
        let mut ids = [0u32; CACHE_FULL_IDS];
        slice_ops::copy(&mut ids, words.get(4..).unwrap_or(&[]));
        if let Some(first) = ids.first_mut() {
            *first &= ID_LIMIT - 1;
        }
        Some(write_ids(out, at, ids.get(..n)?))
    }

    /// Remember `key` → `ids` (ignored when the ids do not fit a line). A piece of five to
    /// twelve ids (a long merge, the most expensive to redo) takes the whole line. A piece of
    /// two to four ids (merged) goes into way 0 and moves the old way 0 to way 1; a piece of
    /// one id (a whole token: one table lookup to redo) takes way 0 only when it is empty and
    /// otherwise replaces way 1, so whole tokens never push a merged piece out. Either
    /// replaces the whole line when way 0 does not hold a short piece of its own (a piece of
    /// the whole line, or a wide piece, memo or long-piece record after the cache's length
    /// changed), whose way 1 is not a way of its own either; except that a whole token does
    /// not push out a piece of the whole line.
    #[inline]
    pub(crate) fn put(&mut self, key: CacheKey, ids: &[u32]) {
        if ids.len() > CACHE_IDS {
            if let Some([a, b, c, d, e, f, g, h, i, j, k, l]) = pack::<CACHE_FULL_IDS>(ids, FULL) {
                // Way 0's key, then the twelve lanes in the line's remaining words.
                let [k0, k1, k2, k3] =
                    [key.lo, key.lo >> 32, key.hi, key.hi >> 32].map(|x| x as u32);
                *self =
                    CacheEntry::from_words(&[k0, k1, k2, k3, a, b, c, d, e, f, g, h, i, j, k, l]);
            }
            return;
        }
        let Some(lanes) = pack::<CACHE_IDS>(ids, 0) else {
            return;
        };
        let way = Way { key, ids: lanes };
        if self.ways[0].ids[0] >> 24 > CACHE_IDS as u32 {
            if ids.len() > 1 || self.ways[0].ids[0] >> 24 & FULL == 0 {
                self.ways = [way, EMPTY_WAY];
            }
            return;
        }
        if ids.len() == 1 && self.ways[0].key != EMPTY_WAY.key {
            self.ways[1] = way;
        } else {
            self.ways[1] = self.ways[0];
            self.ways[0] = way;
        }
    }

    /// Way 0 holds no short piece of its own (a piece of the whole line, or a wide piece, memo
    /// or long-piece record after the cache's length changed): [`put_short`] then sends a
    /// piece to the line's buddy. Only where a piece is written depends on it, never an answer.
    #[inline]
    fn is_taken_whole(&self) -> bool {
        self.ways[0].ids[0] >> 24 > CACHE_IDS as u32
    }

    /// This line holds a wide piece (`WIDE` in its first way's count byte; any piece, of this
    /// tokenizer or another, a copy or not). Only which line [`WideSet::put`] overwrites
    /// depends on it, never an answer.
    #[inline]
    fn holds_wide(&self) -> bool {
        (self.ways[0].ids[0] >> 24) & WIDE != 0
    }

    /// [`CacheEntry::emit`] for a wide piece: its ids at `out[at..]` when this (wide) line
    /// holds `key`.
    #[inline]
    pub(crate) fn emit_wide(
        &self,
        key: WideKey,
        out: &mut [u32],
        at: usize,
    ) -> Option<Result<usize, usize>> {
        let [w0, w1] = &self.ways;
        let count = w0.ids[0] >> 24;
        if w0.key != key.a || w1.key != key.b || count & WIDE == 0 {
            return None;
        }
        if count & PACKED != 0 {
            let n = (count & !(WIDE | PACKED)) as usize;
            let mut ids = [0u32; CACHE_PACKED_IDS];
            let (lo, hi) = ids.split_at_mut(CACHE_PACKED_IDS / 2);
            unpack20(&w0.ids, lo);
            unpack20(&w1.ids, hi);
            return Some(write_ids(out, at, ids.get(..n).unwrap_or(&[])));
        }
        let n = (count & !WIDE) as usize;
        let mut ids = [0u32; CACHE_WIDE_IDS];
        let (lo, hi) = ids.split_at_mut(CACHE_IDS);
        slice_ops::copy(lo, &w0.ids);
        slice_ops::copy(hi, &w1.ids);
        for id in ids.iter_mut().step_by(CACHE_IDS) {
            *id &= ID_LIMIT - 1;
        }
        Some(write_ids(out, at, ids.get(..n).unwrap_or(&[])))
    }

    /// Remember the wide piece `key` → `ids` in this (wide) line, replacing what it held;
    /// false (and the line unchanged) when the ids do not fit.
    #[inline]
    pub(crate) fn put_wide(&mut self, key: WideKey, ids: &[u32]) -> bool {
        let Some(lanes) = pack::<CACHE_WIDE_IDS>(ids, WIDE) else {
            // More than eight ids: packed, when there are at most twelve, all below 2^20.
            if (CACHE_WIDE_IDS + 1..=CACHE_PACKED_IDS).contains(&ids.len())
                && ids.iter().all(|&id| id < PACKED_ID_LIMIT)
            {
                let (lo, hi) = ids.split_at(ids.len().min(CACHE_PACKED_IDS / 2));
                let count = (WIDE | PACKED | ids.len() as u32) << 24;
                self.ways = [
                    Way {
                        key: key.a,
                        ids: pack20(lo, count),
                    },
                    Way {
                        key: key.b,
                        ids: pack20(hi, WIDE << 24),
                    },
                ];
                return true;
            }
            return false;
        };
        let [a, b, c, d, e, f, g, h] = lanes;
        self.ways = [
            Way {
                key: key.a,
                ids: [a, b, c, d],
            },
            Way {
                key: key.b,
                ids: [e | WIDE << 24, f, g, h],
            },
        ];
        true
    }
}

/// `ids` in `N` lanes, with their count and `flag` in the top byte of the first; `None` when
/// they do not fit (none, more than `N`, or an id of [`ID_LIMIT`] or more).
#[inline]
fn pack<const N: usize>(ids: &[u32], flag: u32) -> Option<[u32; N]> {
    if !(1..=N).contains(&ids.len()) || ids.iter().any(|&id| id >= ID_LIMIT) {
        return None;
    }
    let mut lanes = [0u32; N];
    slice_ops::copy(&mut lanes, ids);
    if let Some(first) = lanes.first_mut() {
        *first |= (flag | ids.len() as u32) << 24;
    }
    Some(lanes)
}

/// Up to six ids below 2^20 packed into a way's four lanes, 20 bits each, around the top byte
/// of the first lane, which gets `mark` (the count byte, already shifted into place): the
/// 128-bit value `r` holds the ids at bits 0, 20, .., 100 and the mark at bits 120–127, and
/// the lanes are `r` rotated left by 32 bits, which puts bits 120–127 at the first lane's top
/// byte.
#[inline]
fn pack20(ids: &[u32], mark: u32) -> [u32; CACHE_IDS] {
    let mut r = u128::from(mark >> 24) << 120;
    for (k, &id) in ids.iter().take(CACHE_PACKED_IDS / 2).enumerate() {
        r |= u128::from(id & (PACKED_ID_LIMIT - 1)) << (20 * k);
    }
    let v = r.rotate_left(32);
    [
        v as u32,
        (v >> 32) as u32,
        (v >> 64) as u32,
        (v >> 96) as u32,
    ]
}

/// The six ids [`pack20`] packed into `lanes`, into `ids` (which takes as many as it has room
/// for).
#[inline]
fn unpack20(lanes: &[u32; CACHE_IDS], ids: &mut [u32]) {
    let [a, b, c, d] = lanes.map(u128::from);
    let r = (a | b << 32 | c << 64 | d << 96).rotate_right(32);
    for (k, id) in ids.iter_mut().enumerate() {
        *id = (r >> (20 * k)) as u32 & (PACKED_ID_LIMIT - 1);
    }
}

/// Copy `ids` to `out[at..]`: `Ok(ids.len())`, or `Err(at + ids.len())` when they do not fit.
#[inline]
fn write_ids(out: &mut [u32], at: usize, ids: &[u32]) -> Result<usize, usize> {
    let n = ids.len();
    match out.get_mut(at..at + n) {
        Some(dst) => {
            slice_ops::copy(dst, ids);
            Ok(n)
        }
        None => Err(at + n),
    }
}

impl CacheEntry {
    /// The line as sixteen 32-bit words in memory order (little-endian halves of each field):
    /// word 3 holds the top four bytes of way 0's `key.hi`, word 11 those of way 1's, so the
    /// top byte of each is the byte that tells the kinds of line apart (a short key's length,
    /// a wide key's length, the memo's and the long-piece store's marks).
    #[inline(always)]
    pub(crate) fn words_of_line(&self) -> [u32; 16] {
        let [a, b] = &self.ways;
        let half = |x: u64| [x as u32, (x >> 32) as u32];
        let ([a0, a1], [a2, a3], [a4, a5, a6, a7]) = (half(a.key.lo), half(a.key.hi), a.ids);
        let ([b0, b1], [b2, b3], [b4, b5, b6, b7]) = (half(b.key.lo), half(b.key.hi), b.ids);
        [
            a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7,
        ]
    }

    /// The line whose [`CacheEntry::words_of_line`] is `w`.
    #[inline(always)]
    pub(crate) fn from_words(w: &[u32; 16]) -> CacheEntry {
        let [a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7] = *w;
        let whole = |lo: u32, hi: u32| u64::from(lo) | u64::from(hi) << 32;
        CacheEntry {
            ways: [
                Way {
                    key: CacheKey {
                        lo: whole(a0, a1),
                        hi: whole(a2, a3),
                    },
                    ids: [a4, a5, a6, a7],
                },
                Way {
                    key: CacheKey {
                        lo: whole(b0, b1),
                        hi: whole(b2, b3),
                    },
                    ids: [b4, b5, b6, b7],
                },
            ],
        }
    }
}

impl Default for CacheEntry {
    fn default() -> Self {
        CacheEntry::EMPTY
    }
}

/// The top byte of both ways' `key.hi` in a pair-memo line ([`PairMemo`]). A piece line never
/// has it in its second way: a short key's top byte is its length (0–15), a wide key's second
/// half's its length (1–31). So no piece lookup takes a memo line, and the memo takes no piece
/// line for its own, whatever lengths the caller gives the cache from one call to the next.
const MEMO_MARK: u64 = 0xFF << 56;

const MEMO_WAY: Way = Way {
    key: CacheKey {
        lo: 0,
        hi: MEMO_MARK,
    },
    ids: [0; CACHE_IDS],
};

/// Lanes (memo entries) per memo line: the ids of both ways.
const MEMO_LANES: usize = 2 * CACHE_IDS;

impl CacheEntry {
    /// An empty memo line.
    const MEMO_EMPTY: CacheEntry = CacheEntry {
        ways: [MEMO_WAY; 2],
    };

    /// This line is a memo line.
    #[inline(always)]
    fn is_memo(&self) -> bool {
        self.ways[0].key.hi >> 56 == 0xFF && self.ways[1].key.hi >> 56 == 0xFF
    }
}

/// A memo of the backtracking encoder's pair tests (`crate::bytelevel::backtrack`), in the last lines of
/// the piece cache: whether BPE on the bytes of two tokens gives back those two tokens.
/// Chinese and Japanese text asks about the same pairs again and again, and a test is a walk
/// down both tokens' merge trees.
///
/// Exact: a pair of ids below 2^18 is a 36-bit key; a bijection of it gives the line (the top
/// bits), the lane (the next three) and the tag stored in the lane (the rest, with a valid bit
/// and the answer), so a lane answers only for the pair that wrote it.
pub(crate) struct PairMemo<'c> {
    lines: &'c mut [CacheEntry],
    /// log2 of `lines.len()` (at least [`PairMemo::MIN_BITS`]); unused when `lines` is empty.
    bits: u32,
}

impl<'c> PairMemo<'c> {
    /// Fewest memo lines, as a power of two: the tag must fit in 30 bits.
    const MIN_BITS: u32 = 4;
    /// Most memo lines, as a power of two (1 GiB): line and lane bits stay within the key.
    const MAX_BITS: u32 = 24;
    /// Ids the memo keys (18 bits each).
    const ID_BITS: u32 = 18;

    /// Split the memo off the end of `cache` when `wanted`: the largest power of two of lines
    /// that is at most a sixteenth of it (and at most 2^24), if that is at least 16 lines. Returns the piece lines
    /// and the memo (empty when not wanted or the cache is too small).
    pub(crate) fn split(
        cache: &'c mut [CacheEntry],
        wanted: bool,
    ) -> (&'c mut [CacheEntry], PairMemo<'c>) {
        let share = cache.len() / 16;
        let bits = if wanted && share >= 1 << Self::MIN_BITS {
            share.ilog2().min(Self::MAX_BITS)
        } else {
            0
        };
        let len = if bits == 0 { 0 } else { 1usize << bits };
        // `len` is at most a sixteenth of the cache; the checked split only keeps a panic
        // path out of the code (its `None` cannot happen, and would mean no caching).
        let at = cache.len().saturating_sub(len);
        let (pieces, lines) = cache.split_at_mut_checked(at).unwrap_or_default();
        (pieces, PairMemo { lines, bits })
    }

    /// The line, lane and stored value (answer bit clear) of the pair, or `None` when the memo
    /// is empty or an id does not fit its key.
    #[inline(always)]
    fn slot(&self, left: u32, right: u32) -> Option<(usize, usize, u32)> {
        if self.lines.is_empty() || (left | right) >> Self::ID_BITS != 0 {
            return None;
        }
        const KEY_BITS: u32 = 2 * PairMemo::ID_BITS;
        const KEY_MASK: u64 = (1 << KEY_BITS) - 1;
        let k = u64::from(left) << Self::ID_BITS | u64::from(right);
        // Multiplying by an odd number and an xor-shift are both bijections of 36-bit values.
        let h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) & KEY_MASK;
        let h = h ^ (h >> 19);
        let tag_bits = KEY_BITS - self.bits - MEMO_LANES.ilog2();
        let line = (h >> (KEY_BITS - self.bits)) as usize;
        let lane = (h >> tag_bits) as usize & (MEMO_LANES - 1);
        let tag = (h & ((1 << tag_bits) - 1)) as u32;
        Some((line, lane, 1 << 31 | tag << 1))
    }

    /// The answer for the pair: the remembered one, else `test()`'s, which is then remembered
    /// (a line that is not yet a memo line becomes one). Pairs the memo cannot key are only
    /// tested.
    #[inline(always)]
    pub(crate) fn answer(&mut self, left: u32, right: u32, test: impl FnOnce() -> bool) -> bool {
        let place = self
            .slot(left, right)
            .and_then(|(line, lane, want)| Some((self.lines.get_mut(line)?, lane, want)));
        if let Some((entry, lane, want)) = &place {
            if let (true, Some(&value)) = (entry.is_memo(), entry.lane(*lane)) {
                if value & !1 == *want {
                    return value & 1 != 0;
                }
            }
        }
        let compatible = test();
        if let Some((entry, lane, want)) = place {
            if !entry.is_memo() {
                *entry = CacheEntry::MEMO_EMPTY;
            }
            if let Some(value) = entry.lane_mut(lane) {
                *value = want | u32::from(compatible);
            }
        }
        compatible
    }

    /// The remembered answer for the pair, if any (tests look without writing).
    #[cfg(test)]
    fn get(&self, left: u32, right: u32) -> Option<bool> {
        let (line, lane, want) = self.slot(left, right)?;
        let entry = self.lines.get(line)?;
        let value = *entry.lane(lane)?;
        (entry.is_memo() && value & !1 == want).then_some(value & 1 != 0)
    }
}

impl CacheEntry {
    /// Lane `lane` (0..8) of a memo line: the ids of way `lane / 4`.
    #[inline(always)]
    fn lane(&self, lane: usize) -> Option<&u32> {
        self.ways.get(lane / CACHE_IDS)?.ids.get(lane % CACHE_IDS)
    }

    /// Lane `lane` of a memo line, to write.
    #[inline(always)]
    fn lane_mut(&mut self, lane: usize) -> Option<&mut u32> {
        self.ways
            .get_mut(lane / CACHE_IDS)?
            .ids
            .get_mut(lane % CACHE_IDS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(piece: &[u8]) -> CacheKey {
        CacheKey::of(piece).expect("fits")
    }

    fn get(e: &CacheEntry, piece: &[u8]) -> Option<Vec<u32>> {
        let mut out = [0u32; 1 + CACHE_FULL_IDS];
        match e.emit(key(piece), &mut out, 1)? {
            Ok(n) => Some(out[1..1 + n].to_vec()),
            Err(_) => panic!("room for {CACHE_FULL_IDS}"),
        }
    }

    /// The ids of `piece` from its own short line `line` or, failing that, its buddy, as the
    /// encoder looks them up.
    fn get_short(
        cache: &[CacheEntry],
        short: usize,
        line: usize,
        piece: &[u8],
    ) -> Option<Vec<u32>> {
        get(&cache[line], piece).or_else(|| get(&cache[buddy(line, short)?], piece))
    }

    #[test]
    fn pieces_whose_line_is_taken_whole_live_in_its_buddy() {
        let (lines, short) = (64, 48);
        let pieces: Vec<Vec<u8>> = (0..400u32).map(|i| format!("p{i}").into_bytes()).collect();
        let line = |p: &[u8]| key(p).line(short);
        // Three pieces with one home line, and one whose home is that line's buddy.
        let home = line(&pieces[0]);
        let same: Vec<&Vec<u8>> = pieces.iter().filter(|p| line(p) == home).collect();
        let next = pieces
            .iter()
            .find(|p| Some(line(p)) == buddy(home, short))
            .expect("buddy's own");
        assert!(same.len() >= 3, "too few pieces share a line");
        let (full, merged, full2) = (same[0], same[1], same[2]);
        let full_ids: Vec<u32> = (1..=7).collect();
        let mut cache = vec![CacheEntry::EMPTY; lines];
        put_short(&mut cache, short, home, key(full), &full_ids);
        put_short(&mut cache, short, home, key(merged), &[5, 6]);
        assert_eq!(get_short(&cache, short, home, full), Some(full_ids.clone()));
        assert_eq!(
            get_short(&cache, short, home, merged),
            Some(vec![5, 6]),
            "went to the buddy"
        );
        // Another piece of 5–12 ids with the same home takes the free buddy, not the home.
        let mut cache = vec![CacheEntry::EMPTY; lines];
        put_short(&mut cache, short, home, key(full), &full_ids);
        put_short(&mut cache, short, home, key(full2), &[9; 6]);
        assert_eq!(get_short(&cache, short, home, full), Some(full_ids.clone()));
        assert_eq!(get_short(&cache, short, home, full2), Some(vec![9; 6]));
        // A piece whose own line is the buddy is answered from there while it is not taken.
        let mut cache = vec![CacheEntry::EMPTY; lines];
        let b = buddy(home, short).expect("a buddy");
        put_short(&mut cache, short, b, key(next), &[3]);
        assert_eq!(get(&cache[b], next), Some(vec![3]));
        // The last short line of an odd count has no buddy among the short lines.
        assert_eq!(buddy(46, 47), None);
        assert_eq!(buddy(46, 48), Some(47));
    }

    #[test]
    fn a_line_answers_only_for_its_own_pieces() {
        let mut e = CacheEntry::EMPTY;
        assert_eq!(get(&e, b"the"), None);
        e.put(key(b" the"), &[262]);
        assert_eq!(get(&e, b" the"), Some(vec![262]));
        assert_eq!(get(&e, b" thE"), None);
        assert_eq!(get(&e, b" th"), None);
        assert_eq!(get(&e, b" the\0"), None);
        e.put(key(b"fifteen bytes.."), &[1, 2, 3, 4]);
        assert_eq!(get(&e, b"fifteen bytes.."), Some(vec![1, 2, 3, 4]));
        assert_eq!(get(&e, b"fifteen bytes.!"), None);
        assert_eq!(
            get(&e, b" the"),
            Some(vec![262]),
            "way 1 keeps the older piece"
        );
        e.put(key(b"xy"), &[7, 8]);
        assert_eq!(get(&e, b"xy"), Some(vec![7, 8]));
        assert_eq!(get(&e, b" the"), None, "the oldest piece is evicted");
        e.put(key(b" a"), &[64]);
        assert_eq!(get(&e, b" a"), Some(vec![64]));
        assert_eq!(
            get(&e, b"xy"),
            Some(vec![7, 8]),
            "a whole token keeps out of way 0"
        );
        assert_eq!(get(&e, b"fifteen bytes.."), None);
        e.put(key(b"ab"), &[1; CACHE_FULL_IDS + 1]); // too many ids: not cached
        e.put(key(b"cd"), &[ID_LIMIT]); // id too large for the packing: not cached
        e.put(key(b"ef"), &[ID_LIMIT, 1, 2, 3, 4]);
        assert_eq!(get(&e, b"ab"), None);
        assert_eq!(get(&e, b"cd"), None);
        assert_eq!(get(&e, b"ef"), None);
        assert_eq!(get(&e, b"xy"), Some(vec![7, 8]));
        assert_eq!(CacheKey::of(b"sixteen bytes..."), None);
        assert_eq!(CacheKey::of(b""), None);
        assert_eq!(core::mem::size_of::<CacheEntry>(), 64);
        assert_eq!(core::mem::align_of::<CacheEntry>(), 64);
    }

    #[test]
    fn a_short_piece_of_five_to_twelve_ids_takes_the_whole_line() {
        let mut e = CacheEntry::EMPTY;
        e.put(key(b"xy"), &[7, 8]);
        e.put(key(b" a"), &[64]);
        let ids: Vec<u32> = (0..CACHE_FULL_IDS as u32)
            .map(|i| ID_LIMIT - 1 - i)
            .collect();
        e.put(key(b"twelve ids"), &ids);
        assert_eq!(get(&e, b"twelve ids"), Some(ids.clone()));
        assert_eq!(get(&e, b"twelve idz"), None);
        assert_eq!(get(&e, b"xy"), None, "both ways are taken");
        assert_eq!(get(&e, b" a"), None);
        // Way 1's bytes are ids: its "key" has length 0, which no piece's key has, short or
        // wide (the wide key's length sits in the same byte of its second half).
        assert_eq!(e.ways[1].key.len(), 0);
        let wide = WideKey {
            a: e.ways[0].key,
            b: e.ways[1].key,
        };
        assert_eq!(e.emit_wide(wide, &mut [0; 16], 0), None);
        // Writes only what fits.
        let mut out = [0u32; CACHE_FULL_IDS + 1];
        assert_eq!(e.emit(key(b"twelve ids"), &mut out, 2), Some(Err(14)));
        assert_eq!(e.emit(key(b"twelve ids"), &mut out, 1), Some(Ok(12)));
        // A whole token does not push it out; a merged piece does, and the line is two ways
        // again.
        e.put(key(b" the"), &[262]);
        assert_eq!(get(&e, b" the"), None);
        assert_eq!(get(&e, b"twelve ids"), Some(ids.clone()));
        e.put(key(b"xy"), &[7, 8]);
        assert_eq!(get(&e, b"xy"), Some(vec![7, 8]));
        assert_eq!(get(&e, b"twelve ids"), None);
        e.put(key(b" the"), &[262]);
        assert_eq!(get(&e, b" the"), Some(vec![262]));
        assert_eq!(get(&e, b"xy"), Some(vec![7, 8]));
        for n in CACHE_IDS + 1..=CACHE_FULL_IDS {
            e.put(key(b"n ids"), &ids[..n]);
            assert_eq!(get(&e, b"n ids"), Some(ids[..n].to_vec()));
        }
    }

    #[test]
    fn a_short_put_replaces_a_line_of_another_kind() {
        // A wide piece read as a short line (the cache's length changed): a short piece takes
        // the whole line, so no half of the wide piece is left to be read as a way.
        let mut e = CacheEntry::EMPTY;
        let piece = b"a piece of twenty bytes";
        e.put_wide(WideKey::of(piece).expect("wide"), &[1, 2, 3, 4, 5]);
        e.put(key(b" the"), &[262]);
        assert_eq!(get(&e, b" the"), Some(vec![262]));
        assert_eq!(e.ways[1].key, CacheKey::EMPTY);
        assert_eq!(get_wide(&e, piece), None);
    }

    #[test]
    fn emit_writes_only_what_fits() {
        let mut e = CacheEntry::EMPTY;
        e.put(key(b"abc"), &[5, 6]);
        let mut out = [0u32; 3];
        assert_eq!(e.emit(key(b"abc"), &mut out, 1), Some(Ok(2)));
        assert_eq!(out, [0, 5, 6]);
        assert_eq!(e.emit(key(b"abc"), &mut out, 2), Some(Err(4)));
    }

    #[test]
    fn keys_from_words_ignore_bytes_past_the_piece() {
        let text = *b"0123456789abcdefXYZ";
        let mut block = [0u8; 16];
        block.copy_from_slice(&text[..16]);
        let (w0, w1) = words(&block);
        for len in 1..=CACHE_PIECE {
            assert_eq!(
                CacheKey::from_words(w0, w1, len),
                key(&text[..len]),
                "len {len}"
            );
        }
    }

    fn get_wide(e: &CacheEntry, piece: &[u8]) -> Option<Vec<u32>> {
        let mut out = [0u32; 2 + CACHE_PACKED_IDS];
        let key = WideKey::of(piece).expect("wide");
        match e.emit_wide(key, &mut out, 2)? {
            Ok(n) => Some(out[2..2 + n].to_vec()),
            Err(_) => panic!("room for {CACHE_PACKED_IDS}"),
        }
    }

    #[test]
    fn a_wide_line_answers_only_for_its_piece_and_never_to_short_lookups() {
        let piece = b"sixteen bytes, and more: 31 b.."; // 31 bytes
        let mut e = CacheEntry::EMPTY;
        assert_eq!(get_wide(&e, piece), None);
        let ids = [1, 2, 3, 4, 5, 6, 7, ID_LIMIT - 1];
        e.put_wide(WideKey::of(piece).expect("wide"), &ids);
        assert_eq!(get_wide(&e, piece), Some(ids.to_vec()));
        assert_eq!(get_wide(&e, &piece[..30]), None);
        let mut other = *piece;
        other[20] ^= 1;
        assert_eq!(get_wide(&e, &other), None);
        // The halves of the wide key are valid short keys' shapes: a short lookup must still
        // not take them.
        assert_eq!(get(&e, &piece[..15]), None);
        let mut out = [0u32; 8];
        assert_eq!(e.emit(e.ways[0].key, &mut out, 0), None);
        assert_eq!(e.emit(e.ways[1].key, &mut out, 0), None);
        // A short line is not a wide one.
        let mut s = CacheEntry::EMPTY;
        s.put(key(b"abc"), &[1, 2]);
        s.put(key(b"abd"), &[3, 4]);
        assert_eq!(get_wide(&s, piece), None);
        // Too many ids, or too short / long a piece: not cached.
        let mut f = CacheEntry::EMPTY;
        f.put_wide(
            WideKey::of(piece).expect("wide"),
            &[1; CACHE_PACKED_IDS + 1],
        );
        assert_eq!(get_wide(&f, piece), None);
        f.put_wide(
            WideKey::of(piece).expect("wide"),
            &[PACKED_ID_LIMIT; CACHE_WIDE_IDS + 1],
        );
        assert_eq!(get_wide(&f, piece), None);
        assert_eq!(WideKey::of(b""), None);
        assert_eq!(WideKey::from_window(&[b'x'; 32], 0), None);
        assert_eq!(WideKey::from_window(&[b'x'; 32], 32), None);
        assert_eq!(WideKey::of(b"thirty-two bytes are too many..."), None);
        // Room for fewer ids than the piece has: the room it would need.
        let mut small = [0u32; 9];
        assert_eq!(
            e.emit_wide(WideKey::of(piece).expect("wide"), &mut small, 2),
            Some(Err(10))
        );
    }

    #[test]
    fn a_wide_line_packs_nine_to_twelve_ids() {
        let piece = "\u{3c0}\u{3b1}\u{3c1}\u{3b1}\u{3ba}\u{3bf}\u{3bb}\u{3bf}\u{3c5}\u{3b8}\u{3ce}"
            .as_bytes();
        for n in CACHE_WIDE_IDS + 1..=CACHE_PACKED_IDS {
            // Every bit of every 20-bit field used, and ids that differ in each lane.
            let ids: Vec<u32> = (0..n as u32)
                .map(|k| (PACKED_ID_LIMIT - 1) ^ (k * 0x1_1111 % PACKED_ID_LIMIT))
                .collect();
            let mut e = CacheEntry::EMPTY;
            e.put_wide(WideKey::of(piece).expect("wide"), &ids);
            assert_eq!(get_wide(&e, piece), Some(ids.clone()), "{n} ids");
            assert_eq!(get_wide(&e, &piece[..piece.len() - 1]), None);
            // Neither way answers a short lookup, even for its own key.
            let mut out = [0u32; 16];
            assert_eq!(e.emit(e.ways[0].key, &mut out, 0), None);
            assert_eq!(e.emit(e.ways[1].key, &mut out, 0), None);
            // Not enough room: the room it would need.
            assert_eq!(
                e.emit_wide(WideKey::of(piece).expect("wide"), &mut out, 9),
                Some(Err(9 + n))
            );
        }
        // Eight ids or fewer keep the plain format, which takes ids up to 2^24.
        let mut e = CacheEntry::EMPTY;
        let big = [PACKED_ID_LIMIT, ID_LIMIT - 1, 3, 4, 5, 6, 7, 8];
        e.put_wide(WideKey::of(piece).expect("wide"), &big);
        assert_eq!(get_wide(&e, piece), Some(big.to_vec()));
    }

    #[test]
    fn a_wide_line_holds_a_short_piece_with_many_ids() {
        let mut e = CacheEntry::EMPTY;
        let ids = [9, 8, 7, 6, 5, 4];
        e.put_wide(WideKey::of(b"\0\0").expect("fits"), &ids);
        assert_eq!(get_wide(&e, b"\0\0"), Some(ids.to_vec()));
        assert_eq!(get_wide(&e, b"\0"), None);
        assert_eq!(get_wide(&e, b"\0\0\0"), None);
        // Its way 1 key is (0, 2 << 56), the short key of the same two NUL bytes: the wide
        // mark keeps a short lookup from taking it.
        assert_eq!(e.ways[1].key, key(b"\0\0"));
        assert_eq!(get(&e, b"\0\0"), None);
    }

    /// The ids `cache` holds for the wide piece `piece` in its set among `cache[first..]`.
    fn wide_get(cache: &[CacheEntry], first: usize, piece: &[u8]) -> Option<Vec<u32>> {
        let k = WideKey::of(piece).expect("wide");
        let mut out = [0u32; 16];
        match k.set(first, cache.len()).emit(cache, k, &mut out, 0)? {
            Ok(n) => Some(out[..n].to_vec()),
            Err(_) => panic!("room for 16"),
        }
    }

    #[test]
    fn a_wide_set_fills_its_empty_line_then_moves_a_to_b() {
        // Three wide lines after one short line: one pair (lines 1 and 2) and line 3 unused.
        let mut cache = [CacheEntry::EMPTY; 4];
        let pieces: [&[u8]; 3] = [
            "κατανοητό".as_bytes(),
            "δικαιώματα".as_bytes(),
            "ανθρώπινης".as_bytes(),
        ];
        let sets: Vec<WideSet> = pieces
            .iter()
            .map(|p| WideKey::of(p).expect("wide").set(1, 4))
            .collect();
        assert!(sets.iter().all(|s| *s == WideSet { a: 1, b: 2 }));
        let put = |cache: &mut [CacheEntry], i: usize| {
            let ids: Vec<u32> = (0..5).map(|j| 100 * i as u32 + j).collect();
            let k = WideKey::of(pieces[i]).expect("wide");
            assert!(sets[i].put(cache, k, &ids));
            ids
        };
        let ids0 = put(&mut cache, 0);
        let ids1 = put(&mut cache, 1);
        assert_eq!(wide_get(&cache, 1, pieces[0]), Some(ids0.clone()));
        assert_eq!(wide_get(&cache, 1, pieces[1]), Some(ids1.clone()));
        // Both lines hold a wide piece: the newest goes into `a`, `a`'s into `b`, `b`'s is gone.
        let ids2 = put(&mut cache, 2);
        assert_eq!(wide_get(&cache, 1, pieces[2]), Some(ids2));
        assert_eq!(wide_get(&cache, 1, pieces[0]), Some(ids0));
        assert_eq!(wide_get(&cache, 1, pieces[1]), None);
        // Short lookups never take a wide line, and the unused line stays empty.
        assert!(cache[3].ways.iter().all(|w| w.key == CacheKey::EMPTY));
        // Ids that do not fit a wide line change nothing.
        let before = cache;
        let k = WideKey::of(pieces[0]).expect("wide");
        assert!(!sets[0].put(&mut cache, k, &[1; 13]));
        assert!(cache
            .iter()
            .zip(&before)
            .all(|(a, b)| a.words_of_line() == b.words_of_line()));
    }

    #[test]
    fn a_wide_set_is_one_line_when_there_is_one() {
        let mut cache = [CacheEntry::EMPTY; 2];
        let k = WideKey::of("καλημέρα".as_bytes()).expect("wide");
        assert_eq!(k.set(1, 2), WideSet { a: 1, b: 1 });
        assert!(k.set(1, 2).put(&mut cache, k, &[7, 8, 9, 10, 11]));
        assert_eq!(
            wide_get(&cache, 1, "καλημέρα".as_bytes()),
            Some(vec![7, 8, 9, 10, 11])
        );
        // Sets of a larger cache stay in range, on a pair boundary from `first`.
        for piece in ["κατανοητό", "δικαιώματα", "ανθρώπινης", "καλημέρα"]
        {
            let set = WideKey::of(piece.as_bytes()).expect("wide").set(5, 1005);
            assert!(set.a >= 5 && set.b == set.a + 1 && set.b < 1005 && (set.a - 5) % 2 == 0);
        }
    }

    #[test]
    fn short_lines_are_three_quarters() {
        assert_eq!(short_lines(3), 3);
        assert_eq!(short_lines(4), 3);
        assert_eq!(short_lines(262_144), 196_608);
    }

    #[test]
    fn lines_stay_in_range() {
        for piece in [&b"a"[..], b" the", b"fifteen bytes.."] {
            for n in [1usize, 7, 4096] {
                assert!(key(piece).line(n) < n);
            }
        }
    }

    #[test]
    fn the_pair_memo_answers_only_for_the_pair_that_wrote_it() {
        // 16 memo lines (the fewest): 8 lanes each, so 128 slots for the pairs below, and
        // many pairs share a slot; a slot answers only for the last pair written to it.
        let mut cache = vec![CacheEntry::EMPTY; 16 * 16];
        let (pieces, mut memo) = PairMemo::split(&mut cache, true);
        assert_eq!(pieces.len(), 240);
        let pairs: Vec<(u32, u32)> = (0..2_000u32)
            .map(|i| {
                (
                    i.wrapping_mul(7919) % 200_000,
                    i.wrapping_mul(104_729) % 200_000,
                )
            })
            .collect();
        let answer = |l: u32, r: u32| (l.wrapping_mul(31) ^ r) >> 3 & 1 == 0;
        for &(l, r) in &pairs {
            assert_eq!(memo.answer(l, r, || answer(l, r)), answer(l, r));
            assert_eq!(memo.get(l, r), Some(answer(l, r)));
            assert_eq!(memo.answer(l, r, || panic!("remembered")), answer(l, r));
        }
        let mut kept = 0;
        for &(l, r) in &pairs {
            if let Some(a) = memo.get(l, r) {
                assert_eq!(a, answer(l, r), "({l}, {r})");
                kept += 1;
            }
        }
        assert!((100..=128).contains(&kept), "{kept}");
        // Ids the key cannot hold are never remembered.
        assert!(memo.answer(1 << 18, 5, || true));
        assert_eq!(memo.get(1 << 18, 5), None);
        // No memo when not wanted, or in a cache of fewer than 256 lines.
        let mut small = vec![CacheEntry::EMPTY; 255];
        assert!(PairMemo::split(&mut small, true).1.lines.is_empty());
        assert!(PairMemo::split(&mut cache, false).1.lines.is_empty());
    }

    #[test]
    fn memo_lines_and_piece_lines_never_answer_for_each_other() {
        let mut line = CacheEntry::EMPTY;
        line.put(key(b" the"), &[262]);
        line.put(
            key(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"),
            &[u32::MAX >> 8; 4],
        );
        assert!(!line.is_memo());
        let mut wide = CacheEntry::EMPTY;
        let long = [0xFFu8; CACHE_WIDE_PIECE];
        wide.put_wide(WideKey::of(&long).expect("fits"), &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(
            !wide.is_memo(),
            "a wide key's second half carries its length"
        );
        // A memo in these lines finds nothing, and writing it turns them into memo lines
        // that answer no piece lookup.
        let mut lines = vec![line; 16];
        let mut memo = PairMemo {
            lines: &mut lines,
            bits: 4,
        };
        for l in 0..64 {
            assert_eq!(memo.get(l, l + 1), None);
            assert!(memo.answer(l, l + 1, || true));
        }
        for e in memo.lines.iter() {
            assert!(e.is_memo());
            assert_eq!(get(e, b" the"), None);
            assert_eq!(get(e, &[0xFF; 15]), None);
            let mut out = [0u32; 8];
            assert!(e
                .emit_wide(WideKey::of(&long).expect("fits"), &mut out, 0)
                .is_none());
        }
    }

    /// A wide key read from a window of text is the key of the piece it starts with, whatever
    /// follows the piece.
    #[test]
    fn wide_key_from_a_window_is_the_piece_key() {
        let mut window = [0u8; 32];
        for (i, b) in window.iter_mut().enumerate() {
            *b = 0x80 | (i as u8).wrapping_mul(37);
        }
        for len in 1..=CACHE_WIDE_PIECE {
            let piece = window.get(..len).expect("piece");
            assert_eq!(
                WideKey::from_window(&window, len),
                WideKey::of(piece),
                "length {len}"
            );
        }
    }
}
