//! SentencePiece Unigram: the best-scoring segmentation of each word, exact to
//! `sentencepiece`'s `unigram::Model::EncodeOptimized` (the path `EncodeAsIds` takes) or, for
//! tables imported from a `tokenizer.json`, to Hugging Face `tokenizers`' `encode_optimized`
//! (the same walk with `f64` sums, no score reset, every vocabulary piece matchable, and each
//! section between added tokens segmented from a zero score).
//!
//! Over the normalized bytes, for each character start `s` in order, every matchable piece
//! (normal or user-defined) that starts at `s` is a candidate for the best path ending where
//! it ends: `score(piece) + best(s)`, added in `f32`. A candidate replaces the best only when
//! strictly greater, so on a tie the path whose last piece starts earliest wins. When no piece
//! covers exactly the character at `s`, an *unknown* node does, scored the lowest normal score
//! minus 10. Before `s` is expanded, a best score beyond ±100,000 is subtracted from every
//! reached entry between `s` and the furthest end seen (`sentencepiece`'s score reset), which
//! changes later `f32` roundings and so, sometimes, the ids: it is reproduced exactly.
//!
//! **Words.** When no piece holds a character followed by `▁`
//! ([`super::SpTables::split_words`]), no piece crosses a word start, so every path passes
//! through each word start and the Viterbi runs one word at a time. The best score at a word's
//! end is *carried* into the next word instead of restarting from zero: the rounding of every
//! later sum depends on it. That carried state ([`Cursor`]) is what a resumed encode needs.
//!
//! **Memory.** A word's lattice takes 16 bytes per normalized byte (score as `f64`, start, id
//! of the best path ending there). Words of up to [`UNIGRAM_STACK_BYTES`] bytes use a stack
//! lattice; a longer word packs its bytes and its lattice into the far end of `out`, which then
//! needs about 5.25 ids per normalized byte (reported by [`EncodeError::PieceTooLong`] when
//! even the whole buffer is too small).

use super::encode::{span, Scanned, SpTokenizer, Span, WordCoder};
use super::merge::{NoRoom, Word};
use super::normalize::Normalizer;
use super::tables::{
    priority_score, PieceFilter, Sections, SpAlgorithm, SpTables, MAX_PIECE_BYTES,
};
use crate::cache::{CacheEntry, CacheKey};
use crate::error::EncodeError;
use crate::tokenize::Cursor;

/// Longest word (normalized bytes) whose Unigram lattice is kept on the stack: 16 bytes of
/// stack per byte. Longer words use the far end of the output buffer.
#[cfg(target_pointer_width = "64")]
pub const UNIGRAM_STACK_BYTES: usize = 512;
/// See the 64-bit value (microcontroller stacks: about 1 KiB of lattice).
#[cfg(not(target_pointer_width = "64"))]
pub const UNIGRAM_STACK_BYTES: usize = 64;

/// Cells of the stack lattice (see [`UNIGRAM_STACK_BYTES`]).
pub(super) const UNIGRAM_CELLS: usize = CELL * (UNIGRAM_STACK_BYTES + 1);

/// `sentencepiece`'s `kScoreResetThreshold`.
const RESET: f64 = 100_000.0;
/// No start: an entry not reached yet (and the origin).
const NONE: u32 = u32::MAX;

/// Unigram parameters of the tables.
#[derive(Clone, Copy)]
struct Params {
    unk_score: f64,
    max_piece_bytes: usize,
    /// `tokenizers`' arithmetic (`f64`, no reset) rather than `sentencepiece`'s.
    tokenizers: bool,
}

impl Params {
    /// `score + till` as the reference library adds them: in `f32` for `sentencepiece`
    /// (both are `f32` values, so the sum is the `f32` sum), in `f64` for `tokenizers`.
    #[inline]
    fn add(&self, score: f64, till: f64) -> f64 {
        if self.tokenizers {
            score + till
        } else {
            f64::from(score as f32 + till as f32)
        }
    }
}

/// A path score as the reference library sums it: `f32` for `sentencepiece`, `f64` for
/// `tokenizers`. The Viterbi runs in that type, so a target without a double-precision FPU
/// (the Cortex-M3 has none at all) pays for `f64` only with `tokenizers`' arithmetic.
trait Score: Copy + PartialOrd + core::ops::Add<Output = Self> + core::ops::Sub<Output = Self> {
    const ZERO: Self;
    const INFINITY: Self;
    /// A score from the tables or the cursor (an `f32` value for `sentencepiece`).
    fn of(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// The lattice's two words.
    fn store(self) -> (u32, u32);
    fn load(lo: u32, hi: u32) -> Self;
    /// The magnitude (the sign bit cleared).
    fn abs(self) -> Self;

    /// `min` and `max` written out: no `fminf`/`fmaxf` call on a target without an FPU.
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        if other < self {
            other
        } else {
            self
        }
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        if other > self {
            other
        } else {
            self
        }
    }
}

impl Score for f32 {
    const ZERO: Self = 0.0;
    const INFINITY: Self = f32::INFINITY;
    #[inline(always)]
    fn of(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn store(self) -> (u32, u32) {
        (self.to_bits(), 0)
    }
    #[inline(always)]
    fn load(lo: u32, _: u32) -> Self {
        f32::from_bits(lo)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::from_bits(self.to_bits() & 0x7FFF_FFFF)
    }
}

impl Score for f64 {
    const ZERO: Self = 0.0;
    const INFINITY: Self = f64::INFINITY;
    #[inline(always)]
    fn of(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn store(self) -> (u32, u32) {
        let bits = self.to_bits();
        (bits as u32, (bits >> 32) as u32)
    }
    #[inline(always)]
    fn load(lo: u32, hi: u32) -> Self {
        f64::from_bits(u64::from(hi) << 32 | u64::from(lo))
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f64::from_bits(self.to_bits() & 0x7FFF_FFFF_FFFF_FFFF)
    }
}

/// `u32` per lattice position: the best score (its [`Score`] words: an `f32` in the first, an
/// `f64` low word first), the start of the last piece, its id.
const CELL: usize = 4;

/// A lattice: [`CELL`] `u32` per position.
struct Lattice<'a>(&'a mut [u32]);

impl Lattice<'_> {
    #[inline]
    fn score<S: Score>(&self, e: usize) -> S {
        match self.0.get(CELL * e..CELL * e + 2) {
            Some(&[lo, hi]) => S::load(lo, hi),
            _ => S::ZERO,
        }
    }
    #[inline]
    fn start(&self, e: usize) -> u32 {
        self.0.get(CELL * e + 2).copied().unwrap_or(NONE)
    }
    #[inline]
    fn id(&self, e: usize) -> u32 {
        self.0.get(CELL * e + 3).copied().unwrap_or(0)
    }
    #[inline]
    fn set<S: Score>(&mut self, e: usize, score: S, start: u32, id: u32) {
        if let Some([lo, hi, s, i]) = self.0.get_mut(CELL * e..CELL * e + CELL) {
            (*lo, *hi) = score.store();
            *s = start;
            *i = id;
        }
    }
    #[inline]
    fn set_score<S: Score>(&mut self, e: usize, score: S) {
        if let Some([lo, hi]) = self.0.get_mut(CELL * e..CELL * e + 2) {
            (*lo, *hi) = score.store();
        }
    }
    #[inline]
    fn set_start(&mut self, e: usize, start: u32) {
        if let Some(b) = self.0.get_mut(CELL * e + 2) {
            *b = start;
        }
    }
}

/// The best path over `word` into `lat` from `origin`, in the arithmetic of `p` ([`Score`]):
/// the smallest gap [`viterbi`] saw (with `gaps`; else 0: the word is not to be cached) and
/// the best score at the word's end.
fn best_path(
    t: &SpTables<'_>,
    p: Params,
    word: Word<'_>,
    lat: &mut Lattice<'_>,
    origin: f64,
    gaps: bool,
) -> (f64, f64) {
    let len = word.len();
    if p.tokenizers {
        let gap = viterbi::<f64>(t, p, word, lat, origin, gaps);
        (gap, lat.score::<f64>(len))
    } else {
        let gap = viterbi::<f32>(t, p, word, lat, origin, gaps);
        (gap.to_f64(), lat.score::<f32>(len).to_f64())
    }
}

/// The best path over `word` into `lat` (positions `0..=len`), from `origin` at position 0.
///
/// With `gaps` (a word the cache may keep), returns the smallest difference seen between a candidate and the best it was compared with
/// (a lower bound of every final margin between a position's best path and any other), or
/// `-1` when a score offered exceeds [`CACHE_SCORE_LIMIT`] in magnitude (then the word is not
/// cached: the margin argument needs small scores). With `f32` sums the difference is itself
/// rounded, but rounding is monotonic, so one above [`CACHE_MARGIN`] (exactly representable)
/// is one whose exact value is above it too. Without `gaps`, 0: a target without an FPU
/// saves a soft-float subtraction and three comparisons per candidate.
fn viterbi<S: Score>(
    t: &SpTables<'_>,
    p: Params,
    word: Word<'_>,
    lat: &mut Lattice<'_>,
    origin: f64,
    gaps: bool,
) -> S {
    let len = word.len();
    let mut min_gap = S::INFINITY;
    let mut max_abs = S::ZERO;
    lat.set(0, S::of(origin), NONE, NONE);
    for e in 1..=len {
        lat.set_start(e, NONE);
    }
    let mut tmp = [0u8; MAX_PIECE_BYTES];
    let filter = PieceFilter::new(t.piece_filter);
    let (reset, unk_score) = (S::of(RESET), S::of(p.unk_score));
    let mut max_frontier = 0usize;
    let mut s = 0usize;
    while s < len {
        let mblen = word.char_len(s).min(len - s);
        let mut till: S = lat.score(s);
        let inside = till >= S::ZERO - reset && till <= reset;
        if !p.tokenizers && !inside {
            for i in s..=max_frontier {
                if i == s || lat.start(i) != NONE {
                    lat.set_score(i, lat.score::<S>(i) - till);
                }
            }
            till = S::ZERO;
        }
        let mut has_single = false;
        let limit = len.min(s + p.max_piece_bytes);
        let mut k = s;
        let mut h = PieceFilter::SEED;
        while k < limit {
            let next = k + word.char_len(k);
            if next > limit {
                break;
            }
            while k < next {
                h = PieceFilter::step(h, word.byte(k));
                k += 1;
            }
            let (piece, prefix) = filter.test(h);
            if piece {
                let found = word.slice(s, k, &mut tmp).and_then(|b| t.lookup(b));
                if let Some((slot, id, priority)) = found.filter(|&(_, _, p)| p != 0) {
                    has_single |= k - s == mblen;
                    max_frontier = max_frontier.max(k);
                    let score = match t.f64_scores.get(slot) {
                        Some(&bits) => S::of(f64::from_bits(bits)),
                        None => S::of(f64::from(priority_score(priority))),
                    };
                    let gap = offer(lat, k, score + till, s, id, gaps);
                    if gaps {
                        max_abs = max_abs.max(score.abs());
                        min_gap = min_gap.min(gap);
                    }
                }
            }
            if !prefix {
                break;
            }
        }
        if !has_single {
            let e = s + mblen;
            max_frontier = max_frontier.max(e);
            let gap = offer(lat, e, unk_score + till, s, t.unk_id, gaps);
            if gaps {
                max_abs = max_abs.max(unk_score.abs());
                min_gap = min_gap.min(gap);
            }
        }
        s += mblen.max(1);
    }
    if !gaps {
        return S::ZERO;
    }
    if max_abs > S::of(CACHE_SCORE_LIMIT) {
        return S::ZERO - S::of(1.0);
    }
    min_gap
}

/// Make `(cand, s, id)` the best path ending at `e` when nothing reached `e` yet or it scores
/// strictly more; with `gap`, returns how far apart the two were (infinite when nothing
/// reached `e`), else 0.
#[inline]
fn offer<S: Score>(lat: &mut Lattice<'_>, e: usize, cand: S, s: usize, id: u32, gap: bool) -> S {
    if lat.start(e) == NONE {
        lat.set(e, cand, s as u32, id);
        return S::INFINITY;
    }
    let best: S = lat.score(e);
    if cand > best {
        lat.set(e, cand, s as u32, id);
    }
    if gap {
        (cand - best).abs()
    } else {
        S::ZERO
    }
}

/// Words of up to this many bytes are cached (a [`CacheKey`]'s limit).
const CACHED_WORD: usize = crate::cache::CACHE_PIECE;

/// The word cache is used only while the carried score stays this far inside the reset
/// threshold, and a word is cached only when every score offered in it is at most
/// [`CACHE_SCORE_LIMIT`] in magnitude: a word of at most 15 characters then moves no lattice
/// score by more than 16 × 200 = 3,200, so none passes ±100,000 and no reset happens inside
/// it, on the first pass or any later one.
const CACHE_ORIGIN_LIMIT: f64 = RESET - 4096.0;

/// Largest score magnitude a cached word may have met (see [`CACHE_ORIGIN_LIMIT`]).
const CACHE_SCORE_LIMIT: f64 = 200.0;

/// A word's segmentation is cached only when every comparison its Viterbi made was won or
/// lost by more than this. Then it holds whatever the carried score: from any origin within
/// [`CACHE_ORIGIN_LIMIT`], each of the at most 16 `f32` additions on a path is off its exact
/// sum by at most half an ulp at 2^17 (2^-8), so two candidates' computed difference is within
/// 2 × 16 × 2^-8 = 0.125 of the exact one, which the origin does not change: every comparison
/// comes out the same, hence the same path. The carried score after the word is then replayed
/// along that path, addition by addition, exactly as the Viterbi would compute it.
const CACHE_MARGIN: f64 = 0.5;

/// The carried score after `ids` (a cached path of normal or user-defined pieces over `word`)
/// from `origin`, added as the Viterbi adds; `None` if an id's piece is not where expected.
fn replay(t: &SpTables<'_>, p: Params, word: &[u8], ids: &[u32], origin: f64) -> Option<f64> {
    let mut at = 0usize;
    let mut score = origin;
    for &id in ids {
        let len = t.piece_bytes(id)?.len();
        let piece = word.get(at..at + len)?;
        let (_, _, priority) = t.lookup(piece)?;
        score = p.add(f64::from(priority_score(priority)), score);
        at += len;
    }
    (at == word.len()).then_some(score)
}

/// True when the linked path from `first` has an unknown node.
fn has_unknown(t: &SpTables<'_>, lat: &Lattice<'_>, first: u32) -> bool {
    let mut e = first;
    while e != NONE {
        if lat.id(e as usize) == t.unk_id {
            return true;
        }
        e = lat.start(e as usize);
    }
    false
}

/// Turn the best path ending at `len` into forward links (each piece's start entry then holds
/// the end of the next piece); returns the end of the first piece (`NONE`: empty word).
fn link_forward(lat: &mut Lattice<'_>, len: usize) -> u32 {
    let mut next = NONE;
    let mut e = len;
    while e > 0 {
        let s = lat.start(e);
        lat.set_start(e, next);
        next = e as u32;
        if s == NONE || s as usize >= e {
            break;
        }
        e = s as usize;
    }
    next
}

/// Write the ids of the path [`link_forward`] linked into `out`: an unknown node becomes its
/// bytes' byte pieces with byte fallback; otherwise a run of unknown nodes is one `<unk>`
/// (`after_unk` carries the run across words). With `tokenizers`' rules, a run of nodes with
/// the unknown id (unknown characters, or the `<unk>` piece matched in the text) is fused
/// first: the fused text's id if it is a piece, else its bytes' pieces with byte fallback,
/// else one `<unk>`. `None` when `out` is too small.
fn emit(
    t: &SpTables<'_>,
    p: Params,
    word: Word<'_>,
    lat: &Lattice<'_>,
    first: u32,
    out: &mut [u32],
    after_unk: &mut bool,
) -> Option<usize> {
    let mut w = 0usize;
    let mut put = |id: u32| -> Option<()> {
        *out.get_mut(w)? = id;
        w += 1;
        Some(())
    };
    let mut prev = 0usize;
    let mut e = first;
    while e != NONE {
        let end = e as usize;
        let id = lat.id(end);
        let unk = id == t.unk_id;
        if unk && p.tokenizers {
            // Fuse the run of unknown-id nodes that starts here (within this word).
            let mut run_end = end;
            let mut next = lat.start(end);
            while next != NONE && lat.id(next as usize) == t.unk_id {
                run_end = next as usize;
                next = lat.start(run_end);
            }
            let mut tmp = [0u8; MAX_PIECE_BYTES];
            let whole = word
                .slice(prev, run_end, &mut tmp)
                .and_then(|b| t.piece_id(b))
                .filter(|_| !*after_unk || t.byte_fallback());
            match whole {
                Some(piece) => put(piece)?,
                None if t.byte_fallback() => {
                    for k in prev..run_end {
                        put(t.byte_ids.get(word.byte(k) as usize).copied().unwrap_or(id))?;
                    }
                }
                None if *after_unk => {}
                None => put(id)?,
            }
            *after_unk = true;
            prev = run_end;
            e = next;
            continue;
        }
        if unk && t.byte_fallback() {
            for k in prev..end {
                put(t.byte_ids.get(word.byte(k) as usize).copied().unwrap_or(id))?;
            }
        } else if !(unk && *after_unk) {
            put(id)?;
        }
        *after_unk = unk;
        prev = end;
        e = lat.start(end);
    }
    Some(w)
}

impl<'t> SpTokenizer<'t> {
    /// True when the tables are a Unigram model's.
    pub fn is_unigram(&self) -> bool {
        self.unigram_coder(false).is_some()
    }

    /// The Unigram step of the word loop, when the tables are Unigram's; with `write` false
    /// it only moves the carried state.
    pub(super) fn unigram_coder(&self, write: bool) -> Option<UnigramCoder> {
        match self.tables().algorithm {
            SpAlgorithm::Unigram {
                unk_score,
                max_piece_bytes,
                tokenizers,
            } => Some(UnigramCoder {
                p: Params {
                    unk_score,
                    max_piece_bytes: (max_piece_bytes as usize).min(MAX_PIECE_BYTES),
                    tokenizers,
                },
                write,
            }),
            SpAlgorithm::Bpe => None,
        }
    }

    /// [`SpTokenizer::words`] with the Unigram step and its stack lattice (inlined into its
    /// callers: the word loop's frame is the only one).
    #[inline(always)]
    pub(super) fn unigram_words(
        &self,
        coder: &mut UnigramCoder,
        span: Span<'_>,
        out: &mut [u32],
        written: usize,
        cursor: &mut Cursor,
        cache: &mut [CacheEntry],
    ) -> Result<(usize, usize), EncodeError> {
        self.words_in::<UNIGRAM_STACK_BYTES, UNIGRAM_CELLS, _>(
            coder, span, out, written, cursor, cache,
        )
    }

    /// Move `cursor` (at the start) to `from`, a word start, segmenting without writing ids
    /// (`out` is only the work area for long words). A BPE model carries nothing: the cursor
    /// just moves.
    #[inline(never)]
    pub(super) fn advance_cursor(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        cursor: &mut Cursor,
    ) -> Result<(), EncodeError> {
        let Some(mut coder) = self.unigram_coder(false) else {
            cursor.offset = from;
            return Ok(());
        };
        let t = self.tables();
        if t.sections.splits_words() {
            // Every word starts from a zero score: nothing is carried to `from`.
            cursor.offset = from;
            return Ok(());
        }
        // Segment from where the score last started from zero: the text's start, or with
        // sections the start of the section holding `from`.
        let (norm, pos, end, prefix) = if t.sections != Sections::Inline {
            let section = self.section_start(text, from);
            let mut norm = Normalizer::new(text, t.collapses_spaces());
            norm.floor = section;
            let prefix = section < from && self.section_prefix(text, section);
            (norm, section, from, prefix)
        } else {
            let mut norm = Normalizer::of(text, t, true);
            let pos = norm.start(0, true);
            (
                norm,
                pos,
                norm.end(pos).min(from.max(pos)),
                t.add_dummy_prefix,
            )
        };
        *cursor = Cursor::START;
        let span = span(norm, pos, end, prefix, false);
        let (reached, _) = self.unigram_words(&mut coder, span, out, 0, cursor, &mut [])?;
        cursor.offset = reached.max(from.min(text.len()));
        Ok(())
    }
}

/// The Unigram step of the word loop ([`WordCoder`]): a word's Viterbi from the carried
/// score, or its cached path with the score replayed along it.
pub(super) struct UnigramCoder {
    p: Params,
    /// Write the ids (false: only move the carried state, as rebuilding a resume point does).
    write: bool,
}

impl WordCoder for UnigramCoder {
    #[inline(always)]
    fn word(
        &mut self,
        sp: &SpTokenizer<'_>,
        norm: &Normalizer<'_>,
        w: &Scanned,
        buf: &[u8],
        cells: &mut [u32],
        out: &mut [u32],
        written: usize,
        cursor: &mut Cursor,
        cache: &mut [CacheEntry],
    ) -> Result<usize, NoRoom> {
        let (t, p, len, write) = (sp.tables(), self.p, w.len, self.write);
        let mut after_unk = cursor.after_unk;
        let result = if let Some(bytes) = buf.get(..len) {
            // The word cache (see `CACHE_MARGIN`), for `sentencepiece`'s arithmetic.
            let key = if write
                && !cache.is_empty()
                && !p.tokenizers
                && len <= CACHED_WORD
                && cursor.score.abs() < CACHE_ORIGIN_LIMIT
            {
                CacheKey::of(bytes)
            } else {
                None
            };
            let line = key.map(|k| k.line(cache.len()));
            let mut cached = None;
            if let (Some(k), Some(l)) = (key, line) {
                match cache.get(l).and_then(|e| e.emit(k, out, written)) {
                    Some(Ok(n)) => {
                        cached = out
                            .get(written..written + n)
                            .and_then(|ids| replay(t, p, bytes, ids, cursor.score))
                            .map(|score| Some((n, score)));
                    }
                    Some(Err(_)) => cached = Some(None),
                    None => {}
                }
            }
            match cached {
                Some(hit) => {
                    after_unk = false;
                    hit
                }
                None => {
                    let word = Word::Flat(bytes);
                    let mut lat = Lattice(cells);
                    let (gap, score) = best_path(t, p, word, &mut lat, cursor.score, key.is_some());
                    let first = link_forward(&mut lat, len);
                    let room = if write {
                        out.get_mut(written..).unwrap_or(&mut [])
                    } else {
                        &mut []
                    };
                    let n = if write {
                        emit(t, p, word, &lat, first, room, &mut after_unk)
                    } else {
                        after_unk = lat.id(len) == t.unk_id;
                        Some(0)
                    };
                    if let (Some(k), Some(l), Some(n)) = (key, line, n) {
                        if gap > CACHE_MARGIN && !has_unknown(t, &lat, first) {
                            if let (Some(e), Some(ids)) =
                                (cache.get_mut(l), out.get(written..written + n))
                            {
                                e.put(k, ids);
                            }
                        }
                    }
                    n.map(|n| (n, score))
                }
            }
        } else {
            // A long word: bytes and lattice at the far end of `out`.
            let packed = len.div_ceil(4);
            let need = packed + CELL * (len + 1);
            // Ids already written in this call come out first (`OutputFull`), so
            // that `PieceTooLong` always means the whole buffer is too small.
            if written > 0 && out.len() < need + len + written {
                return Err(NoRoom::Full);
            }
            let Some(split) = out.len().checked_sub(need) else {
                return Err(NoRoom::TooLong(need + if write { len } else { 0 }));
            };
            let too_long = NoRoom::TooLong(need + len);
            let Some((head, tail)) = out.split_at_mut_checked(split) else {
                return Err(too_long);
            };
            let Some((cells, bytes)) = tail.split_at_mut_checked(CELL * (len + 1)) else {
                return Err(too_long);
            };
            norm.write_packed(w.start, w.end, w.prefix, bytes);
            let word = Word::Packed(bytes, len);
            let mut lat = Lattice(cells);
            let (_, score) = best_path(t, p, word, &mut lat, cursor.score, false);
            let first = link_forward(&mut lat, len);
            if write {
                let room = head.get_mut(written..).unwrap_or(&mut []);
                match emit(t, p, word, &lat, first, room, &mut after_unk) {
                    Some(n) => Some((n, score)),
                    None if written == 0 => return Err(NoRoom::TooLong(need + len)),
                    None => None,
                }
            } else {
                after_unk = lat.id(len) == t.unk_id;
                Some((0, score))
            }
        };
        match result {
            Some((n, score)) => {
                cursor.score = score;
                cursor.after_unk = after_unk;
                Ok(n)
            }
            // Every id covers at least one byte: `len` ids always fit.
            None if written == 0 => Err(NoRoom::TooLong(len)),
            None => Err(NoRoom::Full),
        }
    }
}
