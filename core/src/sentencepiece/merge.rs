//! Merging one word: SentencePiece's BPE over a word's normalized bytes, in the caller's
//! buffer.
//!
//! The word starts as one symbol per character, except that a user-defined symbol found in the
//! text is one symbol that never merges. Then the adjacent pair whose concatenation is a piece
//! with the highest score merges, the leftmost on a tie, until no pair is a piece. Each
//! symbol left is emitted as its piece, or as its bytes' `<0xHH>` pieces (byte fallback), or
//! as `<unk>` (a run of unknown symbols is one `<unk>`).
//!
//! Work area (all `u32`, at the far end of the output buffer; ids are written at the front):
//! for `n` symbols, their starts (`n + 1`, offsets into the normalized bytes, [`FROZEN`]
//! marked), the next and previous live symbol (`n` each), the priority of the pair each live
//! symbol starts (`n`, 0 when none), and a binary max-heap of `(priority, symbol)` entries
//! (`3n` entries: `n - 1` to start with, at most two more per merge). A heap entry is live
//! when its priority is still the priority of the pair its symbol starts (a merged-away
//! symbol's is 0); stale entries are skipped. The heap orders by priority, then by the lower
//! symbol index, which is SentencePiece's order. Each merge costs two table lookups and
//! `O(log n)` heap steps: `O(n log n)` per word. So a word of `n` symbols needs `10n + 1` `u32`
//! of work area, plus room for its ids.

use super::tables::{PieceKind, Sections, SpTables, MAX_PIECE_BYTES};

/// Longest word (normalized bytes) kept in the encoder's stack buffer, which is made once
/// per call; longer words are packed into the output buffer, where every pair candidate is
/// copied out byte by byte.
pub const WORD_BUF: usize = 256;

/// The stack buffer of a call whose text is longer than [`WORD_BUF`]: 4 KiB on 64-bit
/// targets (Chinese and Japanese lines are single words of hundreds of bytes); elsewhere
/// (microcontroller stacks) there is no larger buffer.
#[cfg(target_pointer_width = "64")]
pub const LONG_WORD_BUF: usize = 4096;
/// See the 64-bit value.
#[cfg(not(target_pointer_width = "64"))]
pub const LONG_WORD_BUF: usize = 0;

/// The stack buffer of a call whose text is longer than [`LONG_WORD_BUF`], on 64-bit targets:
/// 64 KiB (and room for the `▁` before it), so a line of Chinese or Japanese of up to 64 KiB
/// is merged in place instead of packed into the output buffer, where every pair candidate
/// is copied out byte by byte (3-4× the work per symbol). Zeroing it costs about as much as
/// encoding 100 bytes, against a text of over 4 KiB.
#[cfg(target_pointer_width = "64")]
pub const HUGE_WORD_BUF: usize = (64 << 10) + 64;

/// Marks a symbol that never merges (a user-defined symbol or a cut byte) in its start entry.
const FROZEN: u32 = 1 << 31;
/// No previous symbol.
const NONE: u32 = u32::MAX;

/// Why a word could not be encoded into the room left.
#[derive(Clone, Copy)]
pub(crate) enum NoRoom {
    /// Not in the free part of the buffer: drain and resume.
    Full,
    /// Not even in an empty buffer of this length: this many `u32` are needed.
    TooLong(usize),
}

/// A word's normalized bytes (valid UTF-8).
#[derive(Clone, Copy)]
pub(crate) enum Word<'a> {
    /// In a byte slice.
    Flat(&'a [u8]),
    /// Four to a `u32` (little-endian), with the length in bytes.
    Packed(&'a [u32], usize),
}

impl Word<'_> {
    pub(crate) fn len(&self) -> usize {
        match *self {
            Word::Flat(b) => b.len(),
            Word::Packed(_, len) => len,
        }
    }

    #[inline]
    pub(crate) fn byte(&self, k: usize) -> u8 {
        match *self {
            Word::Flat(b) => b.get(k).copied().unwrap_or(0),
            Word::Packed(w, _) => (w.get(k / 4).copied().unwrap_or(0) >> (8 * (k % 4))) as u8,
        }
    }

    /// The bytes `a..b`, borrowed or copied into `tmp`; `None` when longer than `tmp`.
    #[inline]
    pub(crate) fn slice<'s>(&'s self, a: usize, b: usize, tmp: &'s mut [u8]) -> Option<&'s [u8]> {
        match *self {
            Word::Flat(bytes) => bytes.get(a..b),
            Word::Packed(..) => {
                let dst = tmp.get_mut(..b.checked_sub(a)?)?;
                for (k, d) in dst.iter_mut().enumerate() {
                    *d = self.byte(a + k);
                }
                Some(dst)
            }
        }
    }

    /// Length of the character that starts at `k` (the bytes are valid UTF-8).
    #[inline]
    pub(crate) fn char_len(&self, k: usize) -> usize {
        match self.byte(k) {
            0..=0x7F => 1,
            0x80..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        }
    }

    /// Length of the longest user-defined symbol at `k` (0: none).
    fn user_symbol_at(&self, t: &SpTables<'_>, k: usize) -> usize {
        let mut best = 0;
        for &id in t.user_defined {
            let Some(sym) = t.piece_bytes(id) else {
                continue;
            };
            if sym.len() > best
                && k + sym.len() <= self.len()
                && sym.iter().enumerate().all(|(i, &b)| self.byte(k + i) == b)
            {
                best = sym.len();
            }
        }
        best
    }

    /// Call `f(start, frozen)` for each initial symbol (`frozen`: a user-defined symbol).
    fn for_each_symbol(&self, t: &SpTables<'_>, users: bool, mut f: impl FnMut(usize, bool)) {
        let mut k = 0;
        while k < self.len() {
            let ulen = if users { self.user_symbol_at(t, k) } else { 0 };
            if ulen > 0 {
                f(k, true);
                k += ulen;
            } else {
                f(k, false);
                k += self.char_len(k);
            }
        }
    }
}

/// The symbols of a word being merged.
struct Symbols<'a, 'w> {
    word: Word<'w>,
    tables: &'a SpTables<'a>,
    starts: &'a mut [u32],
    next: &'a mut [u32],
    prev: &'a mut [u32],
    best: &'a mut [u32],
    heap: &'a mut [u32],
    heap_len: usize,
    n: usize,
}

impl Symbols<'_, '_> {
    fn start(&self, i: usize) -> usize {
        (at(self.starts, i) & !FROZEN) as usize
    }

    fn frozen(&self, i: usize) -> bool {
        at(self.starts, i) & FROZEN != 0
    }

    /// The priority of merging live symbol `i` with the one after it (0: no merge).
    #[inline]
    fn pair_priority(&self, i: usize) -> u32 {
        let j = at(self.next, i) as usize;
        if j >= self.n || self.frozen(i) || self.frozen(j) {
            return 0;
        }
        let end = self.start(at(self.next, j) as usize);
        let (a, b) = (self.start(i), end);
        if b - a > MAX_PIECE_BYTES {
            return 0;
        }
        let mut tmp = [0u8; MAX_PIECE_BYTES];
        match self.word.slice(a, b, &mut tmp) {
            Some(bytes) => self.tables.merge_priority(bytes),
            None => 0,
        }
    }

    /// Set the priority of the pair `i` starts and queue it.
    fn score(&mut self, i: usize) {
        let p = self.pair_priority(i);
        set(self.best, i, p);
        if p > 0 {
            self.push(p, i as u32);
        }
    }

    /// Heap entry `k` as one ordered key: the priority in the high half, the inverted symbol
    /// index in the low half, so a larger key comes first (higher priority, then lower index).
    #[inline]
    fn key(&self, k: usize) -> u64 {
        u64::from(at(self.heap, 2 * k)) << 32 | u64::from(!at(self.heap, 2 * k + 1))
    }

    #[inline]
    fn put(&mut self, k: usize, key: u64) {
        set(self.heap, 2 * k, (key >> 32) as u32);
        set(self.heap, 2 * k + 1, !(key as u32));
    }

    fn push(&mut self, priority: u32, i: u32) {
        let mut k = self.heap_len;
        if 2 * k + 1 >= self.heap.len() {
            return; // Cannot happen: the heap has room for every push (see the module docs).
        }
        self.heap_len += 1;
        let key = u64::from(priority) << 32 | u64::from(!i);
        // Move the hole up past every parent that comes after the new entry.
        while k > 0 {
            let parent = (k - 1) / 2;
            let pk = self.key(parent);
            if pk >= key {
                break;
            }
            self.put(k, pk);
            k = parent;
        }
        self.put(k, key);
    }

    fn pop(&mut self) -> Option<(u32, usize)> {
        if self.heap_len == 0 {
            return None;
        }
        let top = self.key(0);
        self.heap_len -= 1;
        let last = self.key(self.heap_len);
        // Move the hole down past every child that comes before the last entry.
        let mut k = 0;
        loop {
            let l = 2 * k + 1;
            if l >= self.heap_len {
                break;
            }
            let mut c = l;
            let mut ck = self.key(l);
            if l + 1 < self.heap_len {
                let rk = self.key(l + 1);
                if rk > ck {
                    (c, ck) = (l + 1, rk);
                }
            }
            if ck <= last {
                break;
            }
            self.put(k, ck);
            k = c;
        }
        self.put(k, last);
        Some(((top >> 32) as u32, !(top as u32) as usize))
    }

    /// Merge until no pair is a piece, one segment at a time: a segment ends after a frozen
    /// symbol (a user-defined symbol or a cut byte). No merge can involve such a symbol, so
    /// merges on either side of it are independent, and merging each segment alone makes
    /// the same merges (SentencePiece's order only ranks merges against each other within a
    /// segment). The heap then holds one segment's pairs, e.g. one line of a Japanese text.
    fn merge_all(&mut self) {
        let mut from = 0;
        while from < self.n {
            let mut to = from;
            while to + 1 < self.n && !self.frozen(to) {
                to += 1;
            }
            self.merge_segment(from, to);
            from = to + 1;
        }
    }

    /// Merge the symbols `from..=to` (`to` is frozen or the last symbol).
    fn merge_segment(&mut self, from: usize, to: usize) {
        for i in from..=to {
            self.score(i);
        }
        while let Some((p, i)) = self.pop() {
            if p == 0 || at(self.best, i) != p {
                continue; // Stale.
            }
            let j = at(self.next, i) as usize;
            let after = at(self.next, j);
            set(self.next, i, after);
            if (after as usize) < self.n {
                set(self.prev, after as usize, i as u32);
            }
            set(self.best, j, 0);
            self.score(i);
            let before = at(self.prev, i);
            if before != NONE {
                self.score(before as usize);
            }
        }
    }
}

/// Merge `word` and write its ids to `out[written..]`, using the far end of `out` as the work
/// area; returns the number of ids written.
pub(crate) fn merge_word(
    t: &SpTables<'_>,
    word: Word<'_>,
    out: &mut [u32],
    written: usize,
    after_unk: &mut bool,
) -> Result<usize, NoRoom> {
    // User-defined symbols are matched in the word unless the tables match them in the text.
    let users = t.sections == Sections::Inline && !t.user_defined.is_empty();
    // The symbols `merge_small` counted when there were too many for it.
    let mut counted = None;
    if let Word::Flat(bytes) = word {
        if let Some(result) = merge_small(t, bytes, users, out, written, after_unk, &mut counted) {
            return result;
        }
    }
    let n = counted.unwrap_or_else(|| {
        let mut n = 0usize;
        word.for_each_symbol(t, users, |_, _| n += 1);
        n
    });
    if n == 0 {
        return Ok(0);
    }
    // Each symbol becomes one id, or with byte fallback at most its bytes.
    let max_ids = if t.byte_fallback() { word.len() } else { n };
    // Saturating: a length that would wrap on a 32-bit target cannot fit any buffer.
    let scratch = n.saturating_mul(10).saturating_add(1);
    let needed = max_ids.saturating_add(scratch);
    let too_long = NoRoom::TooLong(needed);
    if needed > out.len() || word.len() >= FROZEN as usize {
        return Err(too_long);
    }
    if written.saturating_add(needed) > out.len() {
        return Err(NoRoom::Full);
    }
    let split = out.len().checked_sub(scratch).ok_or(too_long)?;
    let (front, tail) = out.split_at_mut_checked(split).ok_or(too_long)?;
    let (starts, rest) = tail.split_at_mut_checked(n + 1).ok_or(too_long)?;
    let (next, rest) = rest.split_at_mut_checked(n).ok_or(too_long)?;
    let (prev, rest) = rest.split_at_mut_checked(n).ok_or(too_long)?;
    let (best, heap) = rest.split_at_mut_checked(n).ok_or(too_long)?;
    let mut k = 0usize;
    // A cut byte ([`SpTables::cut_bytes`]: no mergeable piece contains it) never merges
    // either: frozen too, so its pairs are not looked up and it ends a segment (`merge_all`).
    word.for_each_symbol(t, users, |start, frozen| {
        let frozen = frozen || t.is_cut_byte(word.byte(start));
        let start = start as u32;
        set(starts, k, if frozen { start | FROZEN } else { start });
        k += 1;
    });
    set(starts, n, word.len() as u32);
    for i in 0..n {
        set(next, i, i as u32 + 1);
        set(prev, i, if i == 0 { NONE } else { i as u32 - 1 });
    }
    let mut s = Symbols {
        word,
        tables: t,
        starts,
        next,
        prev,
        best,
        heap,
        heap_len: 0,
        n,
    };
    s.merge_all();

    let (next, starts) = (&*s.next, &*s.starts);
    let ranges = live(
        n,
        |i| at(next, i) as usize,
        |i| (at(starts, i) & !FROZEN) as usize,
    );
    let out = front.get_mut(written..).unwrap_or(&mut []);
    Ok(emit(t, word, ranges, out, after_unk))
}

/// The live symbols of a merged word in order (from symbol 0, each `next` the one after it),
/// as byte ranges from its `start` to the next one's.
fn live(
    n: usize,
    next: impl Fn(usize) -> usize,
    start: impl Fn(usize) -> usize,
) -> impl Iterator<Item = (usize, usize)> {
    let mut i = 0usize;
    core::iter::from_fn(move || {
        if i >= n {
            return None;
        }
        let j = next(i);
        let range = (start(i), start(j));
        i = j;
        Some(range)
    })
}

/// Write the ids of the symbols `ranges` (byte ranges of `word`) to `out`: a symbol that is
/// a piece is its id; otherwise its bytes' pieces with byte fallback, or `<unk>` (one for a
/// run of unknown symbols, or one each with [`SpTables::unk_per_char`]). Returns the number
/// of ids written.
fn emit(
    t: &SpTables<'_>,
    word: Word<'_>,
    ranges: impl Iterator<Item = (usize, usize)>,
    out: &mut [u32],
    after_unk: &mut bool,
) -> usize {
    let mut w = 0usize;
    let mut tmp = [0u8; MAX_PIECE_BYTES];
    for (a, b) in ranges {
        let bytes = word.slice(a, b, &mut tmp);
        let id = bytes.and_then(|bytes| t.piece_id(bytes));
        match id {
            Some(id) if t.kind(id) != Some(PieceKind::Unknown) => {
                push(out, &mut w, id);
                *after_unk = false;
            }
            _ if t.byte_fallback() => {
                for k in a..b {
                    let id = t.byte_ids.get(word.byte(k) as usize).copied();
                    push(out, &mut w, id.unwrap_or(t.unk_id));
                }
                *after_unk = false;
            }
            // A run of unknown symbols is one `<unk>` (unless each is its own).
            _ if *after_unk && !t.unk_per_char => {}
            _ => {
                push(out, &mut w, t.unk_id);
                *after_unk = true;
            }
        }
    }
    w
}

/// Most symbols a word may have for [`merge_small`]: its arrays take 8 bytes per symbol of
/// stack, and its scan for the best pair costs `O(n)` per merge. (Larger values measured no
/// faster on Chinese and Japanese lines, and slower from 512 on.)
const SMALL: usize = 32;

/// Marks a frozen symbol in [`merge_small`]'s starts (words there are under 32 KiB).
const SMALL_FROZEN: u16 = 1 << 15;

/// [`merge_word`] for a word of at most [`SMALL`] symbols, in stack arrays: no work area in
/// `out`, and the best pair found by a scan of the live symbols (cheaper than a heap at this
/// size). `None` when the word has more symbols (their number in `counted`, when counted).
fn merge_small(
    t: &SpTables<'_>,
    word: &[u8],
    users: bool,
    out: &mut [u32],
    written: usize,
    after_unk: &mut bool,
    counted: &mut Option<usize>,
) -> Option<Result<usize, NoRoom>> {
    if word.len() >= usize::from(SMALL_FROZEN) {
        return None;
    }
    let w = Word::Flat(word);
    let mut starts = [0u16; SMALL + 1];
    let mut n = 0usize;
    let mut fits = true;
    w.for_each_symbol(t, users, |start, is_frozen| {
        match starts.get_mut(n) {
            Some(s) if n < SMALL => {
                *s = start as u16 | if is_frozen { SMALL_FROZEN } else { 0 };
            }
            _ => fits = false,
        }
        n += 1;
    });
    if !fits {
        *counted = Some(n);
        return None;
    }
    if let Some(s) = starts.get_mut(n) {
        *s = word.len() as u16;
    }
    let max_ids = if t.byte_fallback() { word.len() } else { n };
    if max_ids > out.len() {
        return Some(Err(NoRoom::TooLong(max_ids)));
    }
    if written + max_ids > out.len() {
        return Some(Err(NoRoom::Full));
    }
    let mut next = [0u16; SMALL];
    for (i, x) in next.iter_mut().enumerate() {
        *x = (i + 1) as u16;
    }
    let raw = |i: usize| starts.get(i).copied().unwrap_or(0);
    let start = |i: usize| usize::from(raw(i) & !SMALL_FROZEN);
    let follow = |next: &[u16; SMALL], i: usize| next.get(i).map_or(n, |&j| usize::from(j));
    // The priority of merging `i` with the symbol after it.
    let score = |next: &[u16; SMALL], i: usize| -> u32 {
        let j = follow(next, i);
        if j >= n || (raw(i) | raw(j)) & SMALL_FROZEN != 0 {
            return 0;
        }
        let (a, b) = (start(i), start(follow(next, j)));
        if b - a > MAX_PIECE_BYTES {
            return 0;
        }
        word.get(a..b).map_or(0, |bytes| t.merge_priority(bytes))
    };
    let mut best = [0u32; SMALL];
    for i in 0..n {
        if let Some(b) = best.get_mut(i) {
            *b = score(&next, i);
        }
    }
    loop {
        // The best pair, the leftmost on a tie, and the symbol before it.
        let (mut top, mut arg, mut before) = (0u32, usize::MAX, usize::MAX);
        let (mut i, mut prev) = (0usize, usize::MAX);
        while i < n {
            let p = best.get(i).copied().unwrap_or(0);
            if p > top {
                (top, arg, before) = (p, i, prev);
            }
            prev = i;
            i = follow(&next, i);
        }
        if arg == usize::MAX {
            break;
        }
        let j = follow(&next, arg);
        let after = next.get(j).copied().unwrap_or(n as u16);
        if let Some(x) = next.get_mut(arg) {
            *x = after;
        }
        if let Some(b) = best.get_mut(arg) {
            *b = score(&next, arg);
        }
        if let Some(b) = best.get_mut(before) {
            *b = score(&next, before);
        }
    }
    let ranges = live(n, |i| follow(&next, i), start);
    let out = out.get_mut(written..).unwrap_or(&mut []);
    Some(Ok(emit(t, w, ranges, out, after_unk)))
}

#[inline]
fn at(s: &[u32], i: usize) -> u32 {
    s.get(i).copied().unwrap_or(0)
}

#[inline]
fn set(s: &mut [u32], i: usize, v: u32) {
    if let Some(x) = s.get_mut(i) {
        *x = v;
    }
}

#[inline]
fn push(out: &mut [u32], w: &mut usize, id: u32) {
    if let Some(x) = out.get_mut(*w) {
        *x = id;
        *w += 1;
    }
}
