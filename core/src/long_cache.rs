//! A store for pieces the piece cache's lines cannot hold (longer than
//! [`CACHE_WIDE_PIECE`](crate::cache::CACHE_WIDE_PIECE) bytes, or with more ids than a wide line
//! takes), in part of the caller's cache memory ([`Tokenizer::encode_cached`]).
//!
//! Chinese and Japanese text splits into pieces of dozens of bytes (a run of ideographs up to the
//! next punctuation), each merged by walking the token trie: most of the time such text takes.
//! Encoding the same text again (a prompt prefix, a document re-encoded after an edit) then
//! redoes that work piece for piece. This store remembers those pieces' bytes and ids.
//!
//! Layout, at the end of the piece lines ([`LongPieces::split`]): one *cursor* line (the store's
//! size, the log's write position and the thrash guard's counts, kept from call to call), then,
//! when the store is on, *index* lines of [`SLOTS`] `(tag, position)` slots each and a *log*: a
//! ring of lines that records are appended to, each the piece's length, id count, bytes and ids
//! in consecutive lines. A lookup hashes the piece, scans one index line for its tag, and reads
//! the record the slot points at; it answers only when the record is still in the ring, every
//! line of it carries the record's stamps, and its bytes equal the piece's.
//!
//! Exact whatever the hash does and whatever the memory held before: a record is written whole,
//! each of its lines stamped with the record's start and the line's own log position, and marked
//! in the top byte of both ways' keys ([`MARK`]), a byte no short line (length 1–15), wide line
//! (length 1–31) or memo line (0xFF) has there. A line written over later (by another record,
//! or by a piece line when the store's size changed) loses the record's stamps or marks; so an
//! accepted record is one this encoder wrote, whole, for the bytes it holds, and those bytes
//! equal the piece's. Conversely no other lookup takes one of the store's lines for its own.
//!
//! Size: none at first (text with few long pieces, such as a page of English prose, keeps all
//! the lines for short pieces). After a call whose long pieces would have needed at least a
//! sixty-fourth of the lines (or 256 lines, when that is fewer), the next call gives the store
//! the smallest of a sixteenth, an eighth, a quarter or a half of the lines that holds them
//! with room to spare; it only grows. A change of size
//! rehashes the other lines once (their pieces are recomputed as they come).
//!
//! [`Tokenizer::encode_cached`]: crate::Tokenizer::encode_cached

use crate::cache::CacheEntry;
use crate::hash;

/// Payload words of a line: all sixteen but words 3 and 11, whose top bytes are the marks.
const PAYLOAD: usize = 14;

/// Top byte of words 3 and 11 of every log line.
const MARK: u32 = 0xFE;

/// Top byte of words 3 and 11 of every index line.
const INDEX_MARK: u32 = 0xFC;

/// Top byte of words 3 and 11 of the cursor line.
const CURSOR_MARK: u32 = 0xFD;

/// First payload word of a set-up cursor.
const MAGIC: u32 = 0x4C4F_4E47;

/// Index slots per index line (two payload words each: tag, position).
const SLOTS: usize = PAYLOAD / 2;

/// The store's lines that are index lines: one in `INDEX_SHARE`, the rest the log. An eighth
/// gives one slot per log line, two to three per record of Japanese (whose records take 2–3
/// lines). With a sixteenth, sets of seven slots held some four records on average there (an
/// estimate from the text's long pieces), about one in twenty overflowed, and the record it
/// dropped, still in the log, was merged and written again on every pass of the same text:
/// callgrind warm pass, 64 MiB cache, gpt2 Japanese 54.74M → 49.88M instructions, cl100k_base
/// Japanese 47.11M → 43.62M.
const INDEX_SHARE: usize = 8;

/// Words of a record before its bytes: its stamp (the log position it starts at), its length
/// in bytes, and its number of ids with (bits 16 and up) the bytes each id takes: 2 when every
/// id is below 2^16 (all of gpt2's), else 3. The piece's bytes follow, then the ids.
const HEADER: usize = 3;

/// Longest piece the store keeps, in bytes (the 1 MB Chinese sample has 10 pieces longer, of
/// 48,525). A record is read into a buffer on the stack, so this bounds the lookup's stack use.
pub(crate) const LONG_MAX_BYTES: usize = 256;

/// Most ids of a piece the store keeps (the ids of a piece are at most its bytes).
const LONG_MAX_IDS: usize = LONG_MAX_BYTES;

/// Most lines a record takes: header, bytes, and three bytes per id (the read buffer has one
/// line more, so the last id can be read as a whole word).
const MAX_RECORD_LINES: usize =
    (4 * HEADER + LONG_MAX_BYTES + 3 * LONG_MAX_IDS).div_ceil(4 * PAYLOAD);

/// Records of at most this many lines (a piece of up to about 120 bytes) are read into a
/// buffer of this many lines and one more; longer ones into one for [`MAX_RECORD_LINES`].
const SMALL_RECORD_LINES: usize = 4;

/// Fewest lines a cache needs before part of it can hold long pieces.
const MIN_LINES: usize = 1024;

/// Whether the store exists at all: on 64-bit targets only. A lookup reads a record into a
/// buffer of about 1.1 KiB on the stack, and the store's code is linked into every encoder
/// (the cache is a run-time slice); on a 32-bit microcontroller, where encode's whole stack is
/// under 1 KiB (`cargo xtask footprint`) and caches of 64 KiB are rare, it would cost more
/// than it gives. Off, [`LongPieces::split`] takes no line and the compiler drops the rest.
/// (So `cargo xtask panic-check`, a thumbv7m build, does not see the store, as it does not see
/// the 64-bit fast loop; the store linked panic-free there at all three profiles before it was
/// gated, and it indexes only through `get`, fixed-size arrays and `try_from`.)
const ENABLED: bool = cfg!(target_pointer_width = "64");

/// The store's sizes, as the shift of the piece lines' count: level `k` (1–4) gives it
/// `lines >> SIZE_SHIFT[k - 1]` lines; level 0 none.
const SIZE_SHIFT: [u32; 4] = [4, 3, 2, 1];

/// The share of the piece lines, as a shift, that a call's long pieces must need before the
/// store is turned on (a sixty-fourth), or [`DEMAND_MAX`] lines when that is fewer.
const DEMAND_SHIFT: u32 = 6;

/// Most lines a call's long pieces must need before the store is turned on, whatever the
/// cache's size: without it a large cache never kept them (a 64 MiB cache would need 15,000
/// lines of long pieces; cl100k_base Greek has some 2,500 long pieces, about 6,000 lines, which
/// were then merged again on every call). 256 rather than 4,096: the Chinese changelog lines
/// in the emoji sample are some 520 long pieces, 1,500 lines, merged again on every call below
/// 4,096 (callgrind warm pass, cl100k_base, 16 MiB: 27.29M → 25.98M instructions), while a
/// store of a sixteenth of a cache this large costs the short pieces nothing measurable
/// (English, code, French unchanged).
const DEMAND_MAX: usize = 256;

/// Seed of the pieces' hash (any constant: the bytes are compared on every hit).
const SEED: u64 = 0x6c6f_6e67_5f70_6965;

/// Stamp bits kept in each log line (low 24 bits of words 3 and 11).
const STAMP_MASK: u32 = (1 << 24) - 1;

/// The store: its cursor, index and log lines, split off the caller's cache, the log's write
/// position and what this call asked of it.
pub(crate) struct LongPieces<'c> {
    cursor: &'c mut [CacheEntry],
    index: &'c mut [CacheEntry],
    log: &'c mut [CacheEntry],
    /// The store's size (see [`SIZE_SHIFT`]).
    level: u32,
    /// The piece lines' count the levels are shares of.
    lines: usize,
    /// Next log line to write, counted from the cursor's set-up (the ring position is this
    /// modulo the log's length).
    head: u64,
    /// `head` modulo the log's length, kept with it (a lookup would otherwise divide).
    head_ring: usize,
    /// How the log is paying off, kept in the cursor across calls ([`Thrash`]).
    thrash: Thrash,
    /// Log lines the long pieces met in this call take (records found, written, or that
    /// would have been written): what the next call's size is chosen from.
    demand: usize,
}

/// The log's guard against thrashing. A ring smaller than the text a caller encodes again and
/// again is written over before any record is read back: every piece misses, pays for its
/// record, and the records write over piece lines. So the log is *frozen* (no more records)
/// when a whole ring's worth of writes got fewer hits than a quarter of its records, and it
/// keeps what it holds as long as that answers at least a quarter of the lookups that reach
/// it; it thaws when it does not (the text moved on).
#[derive(Clone, Copy, Default)]
struct Thrash {
    /// Log position where the current window of writes began.
    window_start: u64,
    /// Records written and hits since then.
    window_records: u32,
    window_hits: u32,
    /// Frozen: no records are written.
    frozen: bool,
    /// Misses and hits while frozen, since the last judgement.
    frozen_misses: u32,
    frozen_hits: u32,
}

impl Drop for LongPieces<'_> {
    /// Keep the size, the write position and the guard's counts for the next call.
    fn drop(&mut self) {
        self.save();
    }
}

impl<'c> LongPieces<'c> {
    /// Split the store off the end of `cache` (the piece lines): the cursor when there are at
    /// least [`MIN_LINES`], and the index and log lines of the size the cursor asks for.
    /// Returns the remaining piece lines and the store (off when it has no log).
    pub(crate) fn split(cache: &'c mut [CacheEntry]) -> (&'c mut [CacheEntry], LongPieces<'c>) {
        Self::split_at_level(cache, None)
    }

    /// [`LongPieces::split`], at size `level` instead of the cursor's when it is given (tests).
    fn split_at_level(
        cache: &'c mut [CacheEntry],
        level: Option<u32>,
    ) -> (&'c mut [CacheEntry], LongPieces<'c>) {
        let cursor_lines = usize::from(ENABLED && cache.len() >= MIN_LINES);
        let (rest, cursor) = cache
            .split_at_mut_checked(cache.len() - cursor_lines)
            .unwrap_or_default();
        let lines = rest.len();
        let mut store = LongPieces {
            cursor,
            index: &mut [],
            log: &mut [],
            level: 0,
            lines,
            head: 0,
            head_ring: 0,
            thrash: Thrash::default(),
            demand: 0,
        };
        store.load();
        if let (Some(level), false) = (level, store.cursor.is_empty()) {
            store.level = level;
        }
        let own = level_lines(store.level, lines);
        let (rest, own) = rest.split_at_mut_checked(lines - own).unwrap_or_default();
        let (index, log) = own
            .split_at_mut_checked(own.len() / INDEX_SHARE)
            .unwrap_or_default();
        if !index.is_empty() && !log.is_empty() {
            store.index = index;
            store.log = log;
        }
        store.head_ring = store.head.checked_rem(store.log.len() as u64).unwrap_or(0) as usize;
        (rest, store)
    }

    /// The store's lines count what this call's long pieces need (the cache is large enough).
    #[inline(always)]
    pub(crate) fn is_tracking(&self) -> bool {
        ENABLED && !self.cursor.is_empty()
    }

    /// The store has room (the cache was large enough).
    #[inline(always)]
    pub(crate) fn is_enabled(&self) -> bool {
        ENABLED && !self.log.is_empty()
    }

    /// The hash a piece is filed under.
    #[inline]
    pub(crate) fn hash(piece: &[u8]) -> u64 {
        hash::hash_bytes(piece, SEED)
    }

    /// Read the size, the write position and the guard's counts from the cursor line (all 0
    /// when it is not a cursor: a new cache, or one used with another length).
    fn load(&mut self) {
        let Some((p, _, _)) = self
            .cursor
            .first()
            .and_then(|line| payload(line, CURSOR_MARK))
            .filter(|(p, _, _)| p[0] == MAGIC && p[11] == self.lines as u32)
        else {
            return;
        };
        let wide = |lo: u32, hi: u32| u64::from(lo) | u64::from(hi) << 32;
        self.level = p[10].min(SIZE_SHIFT.len() as u32);
        self.head = wide(p[1], p[2]);
        self.thrash = Thrash {
            window_start: wide(p[3], p[4]),
            window_records: p[5],
            window_hits: p[6],
            frozen: p[7] != 0,
            frozen_misses: p[8],
            frozen_hits: p[9],
        };
    }

    /// Write the size for the next call (grown when this call's long pieces needed more), the
    /// write position and the guard's counts to the cursor line.
    fn save(&mut self) {
        if !self.is_tracking() {
            return;
        }
        let mut level = self.level;
        if self.demand >= (self.lines >> DEMAND_SHIFT).min(DEMAND_MAX) {
            let want = self.demand + self.demand / 2;
            let fits = (1..=SIZE_SHIFT.len() as u32).find(|&k| level_lines(k, self.lines) >= want);
            level = level.max(fits.unwrap_or(SIZE_SHIFT.len() as u32));
        }
        if level != self.level {
            // A new layout: start the log and the guard afresh.
            self.head = 0;
            self.thrash = Thrash::default();
        }
        let t = self.thrash;
        let p = [
            MAGIC,
            self.head as u32,
            (self.head >> 32) as u32,
            t.window_start as u32,
            (t.window_start >> 32) as u32,
            t.window_records,
            t.window_hits,
            u32::from(t.frozen),
            t.frozen_misses,
            t.frozen_hits,
            level,
            self.lines as u32,
            0,
            0,
        ];
        if let Some(line) = self.cursor.first_mut() {
            *line = line_of(&p, 0, 0, CURSOR_MARK);
        }
    }

    /// Count a hit for the guard.
    #[inline]
    fn count_hit(&mut self) {
        let t = &mut self.thrash;
        if t.frozen {
            t.frozen_hits = t.frozen_hits.saturating_add(1);
        } else {
            t.window_hits = t.window_hits.saturating_add(1);
        }
    }

    /// The guard's verdict before a record is written: false while frozen (counting the
    /// miss, and thawing when the frozen log has answered too little for long enough).
    fn may_write(&mut self, log_len: usize) -> bool {
        let t = &mut self.thrash;
        if !t.frozen {
            return true;
        }
        t.frozen_misses = t.frozen_misses.saturating_add(1);
        if (t.frozen_misses as usize) < (log_len / 4).max(256) {
            return false;
        }
        let thaw = t.frozen_hits < t.frozen_misses / 4;
        t.frozen_misses = 0;
        t.frozen_hits = 0;
        if thaw {
            *t = Thrash {
                window_start: self.head,
                ..Thrash::default()
            };
        }
        thaw
    }

    /// The guard after a record was written: at the end of a window of a whole ring of writes,
    /// freeze if its records got too few hits, else start the next window.
    fn wrote(&mut self, log_len: usize) {
        let head = self.head;
        let t = &mut self.thrash;
        t.window_records = t.window_records.saturating_add(1);
        if head.saturating_sub(t.window_start) < log_len as u64 {
            return;
        }
        let frozen = t.window_hits < t.window_records / 4;
        *t = Thrash {
            window_start: head,
            frozen,
            ..Thrash::default()
        };
    }

    /// Start loading the index line of hash `h` (see [`crate::cache::prefetch`]).
    #[inline(always)]
    pub(crate) fn prefetch(&self, h: u64) {
        if let Some(line) = self.index.get(self.slot_of(h).0) {
            crate::cache::prefetch(line);
        }
    }

    /// The index line and tag of hash `h`.
    #[inline]
    fn slot_of(&self, h: u64) -> (usize, u32) {
        let set = (((h >> 32) * self.index.len() as u64) >> 32) as usize;
        (set, h as u32 | 1)
    }

    /// The ring position of the record written at log position `pos` (low 32 bits), when it
    /// has not been written over since; with the record's full log position.
    #[inline]
    fn live(&self, pos: u32, log_len: usize) -> Option<(usize, u64)> {
        let age = (self.head as u32).wrapping_sub(pos);
        if age == 0 || age as usize > log_len {
            return None;
        }
        let start = self.head.checked_sub(u64::from(age))?;
        // `start` modulo the log's length, from the head's: `age` is at most one length.
        let ring = match self.head_ring.checked_sub(age as usize) {
            Some(r) => r,
            None => (self.head_ring + log_len).checked_sub(age as usize)?,
        };
        Some((ring, start))
    }

    /// Write the ids stored for `piece` (hash `h`) at `out[at..]`: `Some(Ok(n))` with their
    /// number, `Some(Err(at + n))` when they do not fit; `None` when the store does not hold the
    /// piece.
    pub(crate) fn get(
        &mut self,
        piece: &[u8],
        h: u64,
        out: &mut [u32],
        at: usize,
    ) -> Option<Result<usize, usize>> {
        if !self.is_enabled() || piece.len() > LONG_MAX_BYTES {
            return None;
        }
        let (set, tag) = self.slot_of(h);
        let (slots, _, _) = payload(self.index.get(set)?, INDEX_MARK)?;
        for pair in slots.chunks_exact(PAYLOAD / SLOTS) {
            if let [t, pos] = *pair {
                if t == tag {
                    if let Some((done, lines)) = self.read(pos, piece, out, at) {
                        self.demand += lines;
                        self.count_hit();
                        return Some(done);
                    }
                }
            }
        }
        None
    }

    /// The record at log position `pos`, when it is live, intact and holds `piece`: its ids
    /// written at `out[at..]` (see [`LongPieces::get`]).
    fn read(
        &self,
        pos: u32,
        piece: &[u8],
        out: &mut [u32],
        at: usize,
    ) -> Option<(Result<usize, usize>, usize)> {
        let log = &*self.log;
        let (ring, start) = self.live(pos, log.len())?;
        let (p, _, _) = payload(log.get(ring)?, MARK)?;
        let (len, n, width) = (
            p[1] as usize,
            (p[2] & 0xFFFF) as usize,
            (p[2] >> 16) as usize,
        );
        if p[0] != pos || len != piece.len() || !(2..=3).contains(&width) {
            return None;
        }
        let lines = record_lines(len, n, width);
        let record = log.get(ring..ring + lines)?;
        for (j, line) in record.iter().enumerate() {
            let (_, line_stamp, start_stamp) = payload(line, MARK)?;
            if line_stamp != (start + j as u64) as u32 & STAMP_MASK
                || start_stamp != start as u32 & STAMP_MASK
            {
                return None;
            }
        }
        if lines <= SMALL_RECORD_LINES {
            let mut buf = [0u8; (SMALL_RECORD_LINES + 1) * 4 * PAYLOAD];
            unpack(record, &mut buf, piece, (n, width), out, at).map(|done| (done, lines))
        } else {
            let mut buf = [0u8; (MAX_RECORD_LINES + 1) * 4 * PAYLOAD];
            unpack(record, &mut buf, piece, (n, width), out, at).map(|done| (done, lines))
        }
    }

    /// Remember `piece` → `ids`, under hash `h` when the store is on (see
    /// [`LongPieces::hash`]; `None` when it is off). The record goes at the log's write position
    /// (wrapping to the ring's start when it would not fit before the end), and its index slot
    /// replaces the set's slot whose record is gone or oldest. Ignored when the store is off,
    /// the guard has frozen the log, or the piece or its ids are more than the store keeps; the
    /// record's size counts towards the next call's store size all the same.
    pub(crate) fn put(&mut self, piece: &[u8], h: Option<u64>, ids: &[u32]) {
        if piece.len() > LONG_MAX_BYTES || ids.is_empty() || ids.len() > LONG_MAX_IDS {
            return;
        }
        let width = match ids.iter().max() {
            Some(&max) if max < 1 << 16 => 2,
            Some(&max) if max < 1 << 24 => 3,
            _ => return,
        };
        let lines = record_lines(piece.len(), ids.len(), width);
        self.demand += lines;
        let ring_len = self.log.len();
        let Some(h) = h.filter(|_| lines <= ring_len / 8) else {
            return;
        };
        if !self.may_write(ring_len) {
            return;
        }
        let mut ring = self.head_ring;
        if ring + lines > ring_len {
            self.head += (ring_len - ring) as u64;
            ring = 0;
        }
        let start = self.head;
        let header = [
            start as u32,
            piece.len() as u32,
            ids.len() as u32 | (width as u32) << 16,
        ];
        let mut bytes = header
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .chain(piece.iter().copied())
            .chain(
                ids.iter()
                    .flat_map(move |id| id.to_le_bytes().into_iter().take(width)),
            );
        for (j, line) in self.log.iter_mut().skip(ring).take(lines).enumerate() {
            let mut b = [0u8; 4 * PAYLOAD];
            for (d, s) in b.iter_mut().zip(bytes.by_ref()) {
                *d = s;
            }
            *line = line_of(
                &words_of(&b),
                (start + j as u64) as u32 & STAMP_MASK,
                start as u32 & STAMP_MASK,
                MARK,
            );
        }
        self.head += lines as u64;
        // `ring + lines <= ring_len`: wraps to 0 at most.
        self.head_ring = if ring + lines == ring_len {
            0
        } else {
            ring + lines
        };
        let (set, tag) = self.slot_of(h);
        let slots = self
            .index
            .get(set)
            .and_then(|line| payload(line, INDEX_MARK))
            .map_or([0; PAYLOAD], |(p, _, _)| p);
        // The slot to replace: the first whose record is gone, else the oldest record's.
        let mut victim = 0usize;
        let mut oldest = 0u32;
        for (s, pair) in slots.chunks_exact(PAYLOAD / SLOTS).enumerate() {
            let age = match *pair {
                [t, pos] if t != 0 && self.live(pos, ring_len).is_some() => {
                    (self.head as u32).wrapping_sub(pos)
                }
                _ => u32::MAX,
            };
            if age > oldest {
                oldest = age;
                victim = s;
            }
        }
        let mut slots = slots;
        if let Some(pair) = slots.get_mut(2 * victim..2 * victim + 2) {
            pair.copy_from_slice(&[tag, start as u32]);
        }
        if let Some(line) = self.index.get_mut(set) {
            *line = line_of(&slots, 0, 0, INDEX_MARK);
        }
        self.wrote(ring_len);
    }
}

/// The second half of [`LongPieces::read`]: the payload of `record` (of a piece of
/// `piece.len()` bytes and `n` ids of `width` bytes), line by line, into `buf` (at least one
/// line longer than the record, so the copy needs no length test), then its bytes compared with
/// `piece` and its ids written at `out[at..]`. The caller picks a buffer just large enough: a
/// zeroed buffer for the longest record (1.1 KiB) cost a `memset` per lookup.
#[inline(always)]
fn unpack(
    record: &[CacheEntry],
    buf: &mut [u8],
    piece: &[u8],
    (n, width): (usize, usize),
    out: &mut [u32],
    at: usize,
) -> Option<Result<usize, usize>> {
    let len = piece.len();
    for (j, line) in record.iter().enumerate() {
        let at = j * 4 * PAYLOAD;
        if let Some(d) = buf.get_mut(at..at + 4 * PAYLOAD) {
            if let Ok(d) = <&mut [u8; 4 * PAYLOAD]>::try_from(d) {
                *d = payload_bytes(line);
            }
        }
    }
    let body = buf.get(4 * HEADER..)?;
    let (stored, rest) = body.split_at_checked(len)?;
    if stored != piece {
        return None;
    }
    let ids = rest.get(..n * width)?;
    let Some(dst) = out.get_mut(at..at + n) else {
        return Some(Err(at + n));
    };
    // Each id from its `width` little-endian bytes, in a loop per width (fixed-size chunks:
    // no bounds check or shift per id; a general loop was most of a lookup's instructions).
    if width == 2 {
        for (id, b) in dst.iter_mut().zip(ids.chunks_exact(2)) {
            if let &[lo, hi] = b {
                *id = u32::from(u16::from_le_bytes([lo, hi]));
            }
        }
    } else {
        for (id, b) in dst.iter_mut().zip(ids.chunks_exact(3)) {
            if let &[lo, mid, hi] = b {
                *id = u32::from_le_bytes([lo, mid, hi, 0]);
            }
        }
    }
    Some(Ok(n))
}

/// The lines a store of size `level` takes of `lines` piece lines (0 at level 0).
#[inline]
fn level_lines(level: u32, lines: usize) -> usize {
    level
        .checked_sub(1)
        .and_then(|k| SIZE_SHIFT.get(k as usize))
        .map_or(0, |&shift| lines >> shift)
}

/// Lines a record of `len` bytes and `n` ids of `width` bytes each takes.
#[inline]
fn record_lines(len: usize, n: usize, width: usize) -> usize {
    (4 * HEADER + len + n * width).div_ceil(4 * PAYLOAD)
}

/// The little-endian word at `b[at..at + 4]` (0 when it runs past the end).
#[inline(always)]
fn read_u32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|w| <[u8; 4]>::try_from(w).ok())
        .map_or(0, u32::from_le_bytes)
}

/// A line's payload as bytes (each payload word little-endian), marks not checked.
#[inline]
fn payload_bytes(line: &CacheEntry) -> [u8; 4 * PAYLOAD] {
    let [w0, w1, w2, _, w4, w5, w6, w7, w8, w9, w10, _, w12, w13, w14, w15] = line.words_of_line();
    let p = [w0, w1, w2, w4, w5, w6, w7, w8, w9, w10, w12, w13, w14, w15];
    let mut b = [0u8; 4 * PAYLOAD];
    for (k, w) in p.iter().enumerate() {
        if let Some(d) = b.get_mut(4 * k..4 * k + 4) {
            if let Ok(d) = <&mut [u8; 4]>::try_from(d) {
                *d = w.to_le_bytes();
            }
        }
    }
    b
}

/// The payload words of payload bytes `b` (the inverse of [`payload_bytes`]).
#[inline]
fn words_of(b: &[u8; 4 * PAYLOAD]) -> [u32; PAYLOAD] {
    let mut p = [0u32; PAYLOAD];
    for (k, w) in p.iter_mut().enumerate() {
        *w = read_u32(b, 4 * k);
    }
    p
}

/// A line's payload words and the low 24 bits of words 3 and 11, when both their top bytes are
/// `mark`.
#[inline]
fn payload(line: &CacheEntry, mark: u32) -> Option<([u32; PAYLOAD], u32, u32)> {
    let [w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15] =
        line.words_of_line();
    if w3 >> 24 != mark || w11 >> 24 != mark {
        return None;
    }
    let p = [w0, w1, w2, w4, w5, w6, w7, w8, w9, w10, w12, w13, w14, w15];
    Some((p, w3 & STAMP_MASK, w11 & STAMP_MASK))
}

/// The line with payload `p`, stamps `a` and `b` (24 bits each) and `mark`.
#[inline]
fn line_of(p: &[u32; PAYLOAD], a: u32, b: u32, mark: u32) -> CacheEntry {
    let [w0, w1, w2, w4, w5, w6, w7, w8, w9, w10, w12, w13, w14, w15] = *p;
    let w3 = mark << 24 | (a & STAMP_MASK);
    let w11 = mark << 24 | (b & STAMP_MASK);
    CacheEntry::from_words(&[
        w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::CacheKey;

    /// Piece `i`: 40 bytes that differ from every other `i`'s.
    fn piece(i: u32) -> Vec<u8> {
        let mut p = b"a long piece of forty bytes, number ....".to_vec();
        p[36..40].copy_from_slice(&i.to_le_bytes());
        p
    }

    fn ids(i: u32, n: usize) -> Vec<u32> {
        (0..n as u32).map(|k| 70_000 * (k % 3) + i + k).collect()
    }

    /// A store at its largest size (half the lines).
    fn store(cache: &mut [CacheEntry]) -> LongPieces<'_> {
        LongPieces::split_at_level(cache, Some(SIZE_SHIFT.len() as u32)).1
    }

    fn put(store: &mut LongPieces<'_>, p: &[u8], ids: &[u32]) {
        store.put(p, Some(LongPieces::hash(p)), ids);
    }

    fn get(store: &mut LongPieces<'_>, p: &[u8], h: u64) -> Option<Vec<u32>> {
        let mut out = [0u32; 64];
        match store.get(p, h, &mut out, 1)? {
            Ok(n) => Some(out[1..1 + n].to_vec()),
            Err(_) => panic!("room for 63"),
        }
    }

    fn find(store: &mut LongPieces<'_>, p: &[u8]) -> Option<Vec<u32>> {
        get(store, p, LongPieces::hash(p))
    }

    #[test]
    fn a_stored_piece_comes_back_and_only_for_its_own_bytes() {
        let mut cache = vec![CacheEntry::EMPTY; 2048];
        let mut store = store(&mut cache);
        assert!(store.is_enabled());
        let (a, b) = (piece(1), piece(2));
        assert_eq!(find(&mut store, &a), None);
        put(&mut store, &a, &ids(1, 20));
        put(&mut store, &b, &ids(2, 5));
        assert_eq!(find(&mut store, &a), Some(ids(1, 20)));
        assert_eq!(find(&mut store, &b), Some(ids(2, 5)));
        // The same hash (as a colliding piece would have) but other bytes: no answer.
        assert_eq!(get(&mut store, &b, LongPieces::hash(&a)), None);
        assert_eq!(get(&mut store, &a[..39], LongPieces::hash(&a)), None);
        // gpt2-sized ids (two bytes each) come back too.
        let c = piece(3);
        let small: Vec<u32> = (0..30).map(|k| 50_000 + k).collect();
        put(&mut store, &c, &small);
        assert_eq!(find(&mut store, &c), Some(small));
    }

    #[test]
    fn a_full_output_says_how_much_room_the_piece_needs() {
        let mut cache = vec![CacheEntry::EMPTY; 2048];
        let mut store = store(&mut cache);
        let a = piece(7);
        put(&mut store, &a, &ids(7, 9));
        let h = LongPieces::hash(&a);
        let mut out = [0u32; 10];
        assert_eq!(store.get(&a, h, &mut out, 2), Some(Err(11)));
        assert_eq!(store.get(&a, h, &mut out, 1), Some(Ok(9)));
        assert_eq!(out[1..10], ids(7, 9)[..]);
    }

    /// The ring tests' cache and store: the largest store of a 2048-line cache, or under Miri
    /// (slow) the smallest store of the smallest cache that has one (63 lines: a ring of 56),
    /// with the number of records that wrap its ring four times or more.
    fn ring(cache: &mut Vec<CacheEntry>) -> (LongPieces<'_>, u32) {
        let (lines, level, records) = if cfg!(miri) {
            (MIN_LINES, 1, 120)
        } else {
            (2048, SIZE_SHIFT.len() as u32, 2000)
        };
        cache.resize(lines, CacheEntry::EMPTY);
        let store = LongPieces::split_at_level(cache, Some(level)).1;
        // Two lines a record (below): `records` wrap the ring more than three times.
        assert!(
            records as usize > 3 * store.log.len() / 2,
            "{}",
            store.log.len()
        );
        (store, records)
    }

    #[test]
    fn the_ring_forgets_the_oldest_records_and_keeps_the_newest() {
        let mut cache = Vec::new();
        let (mut store, records) = ring(&mut cache);
        // Each record: 12 + 40 + 3 * 20 bytes = 2 lines, in a ring of 896 lines (56 under
        // Miri): 2000 records (120) wrap it four times or more (the thrash guard freezes the
        // log after a ring of writes with no hits; a hit per record read back keeps it going).
        for i in 0..records {
            let p = piece(i);
            put(&mut store, &p, &ids(i, 20));
            assert_eq!(find(&mut store, &p), Some(ids(i, 20)), "piece {i}");
        }
        // The last fifth: more than half of it is kept. Older than a ring: forgotten.
        let recent = records / 5;
        let old = records - 5 * recent / 4;
        assert!((records - old) as usize > store.log.len() / 2);
        assert_eq!(find(&mut store, &piece(0)), None);
        assert_eq!(find(&mut store, &piece(old)), None);
        let kept = (records - recent..records)
            .filter(|&i| find(&mut store, &piece(i)).is_some())
            .count();
        assert!(
            kept > recent as usize / 2,
            "{kept} of the last {recent} kept"
        );
        for i in 0..records {
            if let Some(got) = find(&mut store, &piece(i)) {
                assert_eq!(got, ids(i, 20), "piece {i}");
            }
        }
    }

    #[test]
    fn a_ring_that_thrashes_is_frozen_and_keeps_what_it_holds() {
        let mut cache = Vec::new();
        let (mut store, records) = ring(&mut cache);
        // Writes alone, none read back: after a ring of them the log is frozen.
        for i in 0..records {
            put(&mut store, &piece(i), &ids(i, 20));
        }
        assert!(store.thrash.frozen);
        let kept: Vec<u32> = (0..records)
            .filter(|&i| find(&mut store, &piece(i)).is_some())
            .collect();
        assert!(!kept.is_empty());
        // Frozen: a new piece is not written, and what the log holds stays.
        put(&mut store, &piece(5000), &ids(5000, 20));
        assert_eq!(find(&mut store, &piece(5000)), None);
        assert!(kept.iter().all(|&i| find(&mut store, &piece(i)).is_some()));
    }

    #[test]
    fn a_record_written_over_by_a_piece_line_is_not_read() {
        let mut cache = vec![CacheEntry::EMPTY; 2048];
        let log_start = 2047 - 1023; // the cursor, then half of the rest
        let a = piece(5);
        {
            let mut store = store(&mut cache);
            put(&mut store, &a, &ids(5, 30)); // 12 + 40 + 90 bytes: three lines, after the index
            assert_eq!(find(&mut store, &a), Some(ids(5, 30)));
        }
        let record = (log_start..2047)
            .find(|&i| payload(&cache[i], MARK).is_some())
            .expect("the record");
        cache[record + 1].put(CacheKey::of(b"xy").expect("fits"), &[9]);
        let mut store = store(&mut cache);
        assert_eq!(find(&mut store, &a), None);
    }

    #[test]
    fn store_lines_are_no_other_lookups_lines() {
        let mut cache = vec![CacheEntry::EMPTY; 2048];
        {
            let mut store = store(&mut cache);
            let a = piece(0);
            put(&mut store, &a, &ids(0, 30));
        }
        let mut marked = 0;
        for line in cache.iter().filter(|l| l.words_of_line() != [0; 16]) {
            let w = line.words_of_line();
            let bytes: Vec<u8> = w[..4].iter().flat_map(|x| x.to_le_bytes()).collect();
            for len in 1..=15 {
                // The key this line's first way would have if it were a short line of `len`.
                let key = CacheKey::of(&bytes[..len]).expect("fits");
                assert_eq!(line.emit(key, &mut [0u32; 16], 0), None);
            }
            let (a, b) = (w[3] >> 24, w[11] >> 24);
            assert!(a == b && [MARK, INDEX_MARK, CURSOR_MARK].contains(&a));
            marked += 1;
        }
        assert_eq!(marked, 5, "the cursor, an index line and three log lines");
    }

    #[test]
    fn the_store_and_its_write_position_carry_over_to_the_next_call() {
        let mut cache = vec![CacheEntry::EMPTY; 2048];
        let (a, b) = (piece(1), piece(2));
        put(&mut store(&mut cache), &a, &ids(1, 20));
        {
            let mut store = store(&mut cache);
            put(&mut store, &b, &ids(2, 20));
            assert_eq!(
                find(&mut store, &a),
                Some(ids(1, 20)),
                "the second call's record did not write over the first's"
            );
        }
        // The same memory as a cache of another length: a piece is found with its own ids or
        // not at all, at every size.
        for level in 0..=SIZE_SHIFT.len() as u32 {
            let (_, mut store) = LongPieces::split_at_level(&mut cache[..1500], Some(level));
            for (p, i) in [(&a, 1), (&b, 2)] {
                if let Some(got) = find(&mut store, p) {
                    assert_eq!(got, ids(i, 20));
                }
            }
        }
    }

    #[test]
    fn the_store_grows_after_a_call_whose_long_pieces_need_room() {
        let mut cache = vec![CacheEntry::EMPTY; 4096];
        {
            let (rest, mut store) = LongPieces::split(&mut cache);
            assert_eq!(rest.len(), 4095, "a new cache: the cursor only");
            assert!(!store.is_enabled());
            // 2 lines each: 40 records ask for 80 lines, more than a sixty-fourth (63).
            for i in 0..40 {
                store.put(&piece(i), None, &ids(i, 20));
            }
        }
        let (rest, mut store) = LongPieces::split(&mut cache);
        assert_eq!(
            rest.len(),
            4095 - 4095 / 16,
            "80 lines and half again: a sixteenth"
        );
        assert!(store.is_enabled());
        put(&mut store, &piece(1), &ids(1, 20));
        assert_eq!(find(&mut store, &piece(1)), Some(ids(1, 20)));
        drop(store);
        // A call with few long pieces leaves the size as it is.
        {
            let (_, mut store) = LongPieces::split(&mut cache);
            store.put(&piece(2), None, &ids(2, 20));
        }
        let (rest, _) = LongPieces::split(&mut cache);
        assert_eq!(rest.len(), 4095 - 4095 / 16);
    }

    #[test]
    fn small_caches_have_no_store() {
        let mut cache = vec![CacheEntry::EMPTY; MIN_LINES - 1];
        let (log, mut store) = LongPieces::split_at_level(&mut cache, Some(4));
        assert_eq!(log.len(), MIN_LINES - 1);
        assert!(!store.is_enabled() && !store.is_tracking());
        let a = piece(1);
        store.put(&a, Some(1), &ids(1, 20));
        assert_eq!(get(&mut store, &a, 1), None);
    }
}
