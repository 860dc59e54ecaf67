//! The encoder: special tokens, then pre-tokenization, then merging — tiktoken's three stages.
//!
//! Input is split at special tokens (when recognized); the ordinary text between them is split
//! into pieces by the model's pattern ([`crate::pretok`]); each piece becomes one id if it is a
//! whole token ([`Tables::pieces`]) and is merged pair by pair otherwise ([`super::bpe`]).
//!
//! Most pieces of prose and code are short ASCII words that are whole tokens; a tight loop
//! per pattern handles those (the block splitter or the ASCII fast path of [`crate::pretok`],
//! then one table or cache lookup by the piece's packed key) and hands every other piece to the
//! general path.
//!
//! A model with a Unicode normalizer (Qwen2's NFC) finds its special tokens in the raw text
//! and normalizes the text between them a window at a time before these stages
//! ([`crate::normalizer`]); text that normalization leaves alone is encoded where it lies.
//!
//! Output goes into the caller's slice. When it fills up, the call returns
//! [`EncodeError::OutputFull`] at a piece boundary, so encoding the rest of the input later
//! gives exactly the ids a one-shot call would have given.

use super::bpe::{self, STACK_PIECE};
use super::tables::Tables;
use crate::cache::{
    self, CacheEntry, CacheKey, PairMemo, WideKey, WideSet, CACHE_FULL_IDS, CACHE_PIECE,
    CACHE_WIDE_PIECE,
};
use crate::error::EncodeError;
use crate::hash;
use crate::long_cache::LongPieces;
use crate::normalizer::encode_prefixed;
use crate::pretok::{self, AsciiPiece, Blocks, Fast, Pattern, Step};
use crate::slice_ops;
use crate::special::{self, Boundary, FirstBytes, Specials};
use crate::Progress;

/// After the ordinary text before `pos` is encoded: write the special token `found` that ends
/// it (`pos` is its start) and go on after it (`Some((pos, written))`); without one the call is
/// done (`None`): `pos` is the end of the text, or a possible special token that the next
/// input decides.
#[inline(always)]
fn close_segment(
    found: Option<special::Found>,
    pos: usize,
    out: &mut [u32],
    written: usize,
) -> Result<Option<(usize, usize)>, EncodeError> {
    match found {
        // `pos` is `f.start` here; passing it lets `f.start` die before the segment loop (8
        // bytes less stack on a Cortex-M3).
        Some(f) => {
            let written = special::put(special::Found { start: pos, ..f }, out, written)?;
            Ok(Some((f.end, written)))
        }
        None => Ok(None),
    }
}

/// The ordinary text from a position: where it ends, whether more input could change it,
/// the special token after it, and whether the special search window cut it short.
#[derive(Clone, Copy)]
struct Segmented {
    end: usize,
    is_final: bool,
    found: Option<special::Found>,
    cut: bool,
}

/// A tokenizer over a set of tables. Cheap to copy; holds no mutable state.
#[derive(Clone, Copy)]
pub struct Tokenizer<'t> {
    tables: &'t Tables<'t>,
    first_bytes: FirstBytes,
}

impl<'t> Tokenizer<'t> {
    /// A tokenizer over `tables` (baked `TABLES` static, or host-built tables).
    pub fn new(tables: &'t Tables<'t>) -> Self {
        Tokenizer {
            tables,
            first_bytes: FirstBytes::new(tables.specials),
        }
    }

    /// The tables this tokenizer reads.
    pub fn tables(&self) -> &'t Tables<'t> {
        self.tables
    }

    /// Encode all of `text` into `out`, returning the number of ids written.
    pub fn encode(
        &self,
        text: &[u8],
        out: &mut [u32],
        specials: Specials,
    ) -> Result<usize, EncodeError> {
        self.encode_part_cached(text, out, specials, true, &mut [])
            .map(|p| p.written)
    }

    /// [`Tokenizer::encode`] with a piece cache in caller memory: pieces seen before (in this
    /// call or an earlier one with the same `cache`) are answered from the cache. The ids are
    /// the same as without it. Start with every line [`CacheEntry::EMPTY`] and keep the cache
    /// with the tables it was filled from; any number of lines works, and more lines hold more
    /// of a text's distinct pieces (`host-trainer encode` uses 16 384 lines = 1 MiB, the
    /// benchmark 262 144 = 16 MiB and 1 048 576 = 64 MiB). Empty `cache`: no caching. When the
    /// tables backtrack (host-built, `backtrack` feature) and the cache has at least 256
    /// lines, its last sixteenth (rounded down to a power of two) holds a memo of the
    /// backtracking encoder's pair tests instead of pieces: most of Chinese and Japanese
    /// text's tests are repeats. On 64-bit targets, with at least 1,024 lines, the last line
    /// keeps a *long-piece store* in step from call to call: after a call whose pieces too
    /// long (or of too many ids) for a line would need at least a sixty-fourth of the lines
    /// (or 256 lines, when fewer), the next call sets aside a sixteenth to a half of them
    /// (it only grows) for such pieces, up to 256 bytes each, with their bytes and ids (the
    /// Chinese and Japanese runs between punctuation); see `core/src/long_cache.rs`.
    pub fn encode_cached(
        &self,
        text: &[u8],
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        self.encode_part_cached(text, out, specials, true, cache)
            .map(|p| p.written)
    }

    /// Encode a prefix of `text` (see [`crate::Tokenize::encode_part`]), with a piece cache
    /// (see [`Tokenizer::encode_cached`]; empty: none). With `is_final` false, `text` may be
    /// followed by more input: the encoder stops (returning `Ok`) before the first piece or
    /// special token that more input could change. With `is_final` true it encodes everything.
    /// `text` is taken to start a section of text between special tokens: to resume a model
    /// with a prefix space ([`Tables::prefix_space`]), go through [`crate::Tokenize`], whose
    /// cursor carries whether the stop follows a special token.
    pub fn encode_part_cached(
        &self,
        text: &[u8],
        out: &mut [u32],
        specials: Specials,
        is_final: bool,
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        self.encode_part_at(text, out, specials, is_final, cache, &mut true)
    }

    /// [`Tokenizer::encode_part_cached`] where `text` may not start a section of text between
    /// special tokens: `section_start` says whether it does on entry (the text's start, or
    /// right after a special token), and on return (a full buffer's `consumed` included)
    /// whether the stop does. Only a model with [`Tables::prefix_space`] reads it: the space
    /// goes before a section, not before a resumed one.
    pub(crate) fn encode_part_at(
        &self,
        text: &[u8],
        out: &mut [u32],
        specials: Specials,
        is_final: bool,
        cache: &mut [CacheEntry],
        section_start: &mut bool,
    ) -> Result<Progress, EncodeError> {
        if self.tables.normalizer.is_none() && !self.tables.prefix_space {
            *section_start = false;
            return self.encode_raw(text, out, specials, is_final, cache);
        }
        let mut at = *section_start;
        let r = self.encode_normalizing(text, out, specials, is_final, cache, &mut at);
        *section_start = at;
        r
    }

    /// [`Tokenizer::encode_part_at`] for a model with a Unicode normalizer or a prefix space:
    /// special tokens are found in the raw text (as `tokenizers` extracts added tokens before
    /// it normalizes and pre-tokenizes; with [`Tables::specials_normalized`], in the
    /// normalized text instead, as it finds `normalized` added tokens), and the text between
    /// them is normalized (or given
    /// its space) and encoded a window at a time (`normalizer/window.rs`). `fresh` is true
    /// while `pos` starts a section. Never inlined: its window would otherwise sit in the
    /// frame that calls [`Tokenizer::encode_raw`] for every other model (344 B more peak
    /// stack on a Cortex-M3).
    #[inline(never)]
    fn encode_normalizing(
        &self,
        text: &[u8],
        out: &mut [u32],
        specials: Specials,
        is_final: bool,
        cache: &mut [CacheEntry],
        fresh: &mut bool,
    ) -> Result<Progress, EncodeError> {
        // Special tokens matched in the normalized text are found by the encode of each
        // window, not in the raw text.
        let normalized = self.tables.specials_normalized;
        let inner_specials = if normalized { specials } else { Specials::None };
        let use_specials = specials == Specials::All && !self.first_bytes.is_empty() && !normalized;
        let (mut pos, mut written) = (0usize, 0usize);
        let mut window = special::Window::for_room(out.len());
        while pos < text.len() {
            let start = pos;
            let seg = self.segment(text, pos, use_specials, is_final, window);
            let (seg_end, found) = (seg.end, seg.found);
            let segment = text.get(pos..seg_end).unwrap_or(&[]);
            if !segment.is_empty() {
                let room = out.get_mut(written..).unwrap_or(&mut []);
                let (work, encode) = (
                    super::bpe::scratch_needed,
                    &mut |w: &[u8], fin, o: &mut [u32]| {
                        self.encode_raw(w, o, inner_specials, fin, cache)
                    },
                );
                let r = match self.tables.normalizer {
                    Some(n) => n.encode(
                        &crate::sentencepiece::CharsMap::EMPTY,
                        segment,
                        seg.is_final,
                        room,
                        work,
                        encode,
                    ),
                    None => encode_prefixed(*fresh, segment, seg.is_final, room, work, encode),
                };
                let p = match r {
                    Ok(p) => p,
                    Err(e) => {
                        let e = e.within(pos, written, out.len());
                        // A stop at `pos` still starts a section (when it did).
                        *fresh &= matches!(e, EncodeError::OutputFull { consumed, .. } if consumed == pos);
                        return Err(e);
                    }
                };
                written += p.written;
                pos += p.consumed;
                *fresh &= p.consumed == 0;
                if pos < seg_end && !seg.cut {
                    return Ok(Progress {
                        consumed: pos,
                        written,
                    });
                }
            }
            if seg.cut {
                window.after_cut(start, pos);
                continue;
            }
            match close_segment(found, pos, out, written)? {
                Some(next) => {
                    (pos, written) = next;
                    *fresh = true;
                }
                None => break,
            }
        }
        Ok(Progress {
            consumed: pos,
            written,
        })
    }

    /// True when special tokens found from the start of `text` (as an encode with them on
    /// finds them) include one that ends at `at`: whether a resumed encode at `at` starts a
    /// section. Searches `text[..at]` once.
    pub(crate) fn ends_special(&self, text: &[u8], at: usize) -> bool {
        let head = text.get(..at).unwrap_or(&[]);
        let mut pos = 0usize;
        while let Boundary::Special(f) =
            special::find(self.tables.specials, &self.first_bytes, head, pos, false)
        {
            if f.end >= at || f.end <= pos {
                return f.end == at;
            }
            pos = f.end;
        }
        false
    }

    /// Stage 1: where the ordinary text from `pos` ends, whether more input could change it,
    /// the special token that ends it (special tokens are recognized with `use_specials`;
    /// a possible start of one at the end of a non-final `text` ends it too), and whether
    /// the search `window` cut it short (then the call encodes what the cut cannot change
    /// and searches again from there; see [`special::Window`]).
    #[inline(always)]
    fn segment(
        &self,
        text: &[u8],
        pos: usize,
        use_specials: bool,
        is_final: bool,
        window: special::Window,
    ) -> Segmented {
        let (boundary, cut) = if use_specials {
            let (specials, mask) = (self.tables.specials, &self.first_bytes);
            window.find(specials, mask, text, pos, !is_final)
        } else {
            (Boundary::None, false)
        };
        let (end, is_final, found) = match boundary {
            Boundary::Special(f) => (f.start, true, Some(f)),
            Boundary::Partial(p) => (p, false, None),
            Boundary::None => (text.len(), is_final, None),
        };
        Segmented {
            end,
            is_final,
            found,
            cut,
        }
    }

    /// [`Tokenizer::encode_part_cached`] of text as it is (no normalizer, or a window of
    /// normalized text).
    fn encode_raw(
        &self,
        text: &[u8],
        out: &mut [u32],
        specials: Specials,
        is_final: bool,
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        let t = self.tables;
        let use_specials = specials == Specials::All && !self.first_bytes.is_empty();
        let mut pos = 0usize;
        let mut written = 0usize;
        // The cache with the cached fast loop's work area, set up once per call rather than
        // per loop entry (which, in text that is not mostly ASCII, is once per piece or two).
        let mut ahead = Lookahead::new(cache, cfg!(feature = "backtrack") && !t.trie.is_empty());
        // The outer pieces of compiled split levels, found once per call (positions only move
        // forward; segments share the text's offsets).
        let mut memo = pretok::SplitMemo::new();
        let mut window = special::Window::for_room(out.len());
        while pos < text.len() {
            // Stage 1: where does the ordinary text end?
            let start = pos;
            let seg = self.segment(text, pos, use_specials, is_final, window);
            let (seg_end, seg_final, found) = (seg.end, seg.is_final, seg.found);
            let segment = text.get(..seg_end).unwrap_or(&[]);
            // Stage 2 and 3: pieces of the ordinary text, each merged.
            while pos < seg_end {
                // Fast loop. Without a cache: the pieces the fast path splits (most of prose
                // and code) that are whole tokens, one id each, straight into `out`. With one:
                // every piece a short cache line holds, through the cache. One copy per
                // pattern, so the pattern's rules are inlined without a dispatch per piece.
                // `split`: the piece at `pos` that the loop split but did not encode (None: it
                // did not split it).
                let mut split = None;
                if FAST_LOOP && !t.pieces.is_empty() && t.splits.is_empty() {
                    let (p, w, ahead) = (pos, written, &mut ahead);
                    let seg = Segment {
                        text: segment,
                        is_final: seg_final,
                    };
                    (pos, written, split) = match t.pattern {
                        Pattern::Gpt2 => self.pick_fast_loop(Pattern::Gpt2, seg, p, out, w, ahead),
                        Pattern::Cl100k => {
                            self.pick_fast_loop(Pattern::Cl100k, seg, p, out, w, ahead)
                        }
                        Pattern::O200k => {
                            self.pick_fast_loop(Pattern::O200k, seg, p, out, w, ahead)
                        }
                        Pattern::Tekken => {
                            self.pick_fast_loop(Pattern::Tekken, seg, p, out, w, ahead)
                        }
                        // The fast paths know the three tiktoken patterns and Tekken only:
                        // every piece of these goes through the full splitter.
                        Pattern::Llama3 | Pattern::Qwen2 => (p, w, None),
                    };
                }
                if pos >= seg_end {
                    break;
                }
                // The piece's end and, for 1–7-byte pieces the fast path split, its key (0: not
                // known yet).
                let (end, key) = match split {
                    Some(p) => (pos + p.len, p.key),
                    None => match t.next_piece(segment, pos, seg_final, &mut memo) {
                        Step::Piece { end } if end > pos && end <= seg_end => (end, 0),
                        // Bytes a `Split` removed: no ids.
                        Step::Skip { end } if end > pos && end <= seg_end => {
                            pos = end;
                            continue;
                        }
                        // The search window's cut: search again from here.
                        Step::NeedMore if seg.cut => break,
                        // NeedMore, or an out-of-contract answer: stop cleanly here.
                        _ => {
                            return Ok(Progress {
                                consumed: pos,
                                written,
                            })
                        }
                    },
                };
                let piece = segment.get(pos..end).unwrap_or(&[]);
                match self.encode_piece(piece, key, out, written, &mut ahead.mem) {
                    Ok(n) => written += n,
                    Err(needed) => {
                        let len = piece.len();
                        return Err(EncodeError::no_room(pos, len, needed, written, out.len()));
                    }
                }
                pos = end;
            }
            if seg.cut {
                window.after_cut(start, pos);
                continue;
            }
            match close_segment(found, pos, out, written)? {
                Some(next) => (pos, written) = next,
                None => break,
            }
        }
        Ok(Progress {
            consumed: pos,
            written,
        })
    }

    /// The fast loop for `pattern`: [`fast_loop_cached`](Tokenizer::fast_loop_cached) when
    /// there is a cache, else [`fast_loop`]. Called with the pattern as a constant, so each
    /// pattern gets its own copy with its rules inlined.
    #[inline(always)]
    fn pick_fast_loop(
        &self,
        pattern: Pattern,
        seg: Segment<'_>,
        pos: usize,
        out: &mut [u32],
        written: usize,
        ahead: &mut Lookahead<'_>,
    ) -> (usize, usize, Option<AsciiPiece>) {
        if ahead.mem.pieces.is_empty() {
            fast_loop(
                self.tables,
                pattern,
                seg.text,
                pos,
                out,
                written,
                &mut ahead.blocks,
            )
        } else {
            self.fast_loop_cached(pattern, seg, pos, out, written, ahead)
        }
    }

    /// [`fast_loop`] with a piece cache: encode the pieces at `text[pos..]`, from the cache when
    /// it holds them and through the piece table or merging (then caching them) when it does
    /// not. Pieces are split by the fast path, else by the full splitter (with the segment's
    /// `is_final`, as in [`pretok::next_piece`]), until one is longer than a wide cache line
    /// holds (or than a short one, when the cache has no wide lines), a short one lies within
    /// 16 bytes of the end, or the splitter needs more text. Returns like [`fast_loop`];
    /// the piece handed back is one that `out` had no room for, or the one that stopped the
    /// batch (with key 0).
    ///
    /// Software-pipelined: a 16-MiB cache lives in the last-level cache, and a lookup that
    /// waits for its line before the next piece is split is bound by that latency. So the loop
    /// splits up to [`BATCH`] pieces ahead and prefetches their lines, then answers them in
    /// order; by then most lines have arrived. Splitting does not depend on the answers, so
    /// the batch never has to be undone. Taking the full splitter's pieces too keeps text
    /// that is not mostly ASCII (Devanagari, Greek, Korean) in the pipelined loop.
    #[inline(always)]
    fn fast_loop_cached(
        &self,
        pattern: Pattern,
        seg: Segment<'_>,
        mut pos: usize,
        out: &mut [u32],
        mut written: usize,
        ahead: &mut Lookahead<'_>,
    ) -> (usize, usize, Option<AsciiPiece>) {
        let Segment { text, is_final } = seg;
        let mem = &mut ahead.mem;
        let lines = cache::short_lines(mem.pieces.len());
        // In a register while the loop runs (through `ahead` it would live in memory).
        let mut blocks = ahead.blocks;
        loop {
            // Stage 1: split ahead, recording each piece's key (which holds its length) and
            // line and prefetching the line.
            let mut n = 0;
            let mut at = pos;
            // A piece split but not taken into the batch (too long for a short line), which
            // is handed back after the batch so the caller does not split it again.
            let mut pending = None;
            while n < BATCH {
                // The block splitter, else the ASCII fast path, else the full splitter. A
                // block's piece of any length is taken as it is (one too long for a short
                // line is handed back below, not split again).
                let len = match blocks.next_len(pattern, text, at) {
                    Some(len) => len,
                    None => match pretok::fast_piece(pattern, text, at) {
                        Fast::Piece(p) => p.len,
                        fast => match blocks
                            .char_len(pattern, text, at, fast)
                            .or_else(|| full_piece(pattern, text, at, is_final))
                        {
                            Some(len) => len,
                            None => break,
                        },
                    },
                };
                let (ckey, line) = if len <= CACHE_PIECE {
                    let Some(ckey) = window_key(text, at, len) else {
                        pending = Some(AsciiPiece { len, key: 0 });
                        break;
                    };
                    let line = ckey.line(lines);
                    if let Some(entry) = mem.pieces.get(line) {
                        cache::prefetch(entry);
                    }
                    (ckey, line)
                } else {
                    // Too long for a short line: its wide lines are prefetched (or, longer
                    // than those hold, its long-piece store index line, when the store is on
                    // and the length fits the stand-in key), and stage 2's short probe of no
                    // line (`NO_LINE`) sends it to the miss path, which looks there. Any other
                    // piece is handed back.
                    let piece = text.get(at..at + len).unwrap_or(&[]);
                    let mut long_hash = None;
                    let mut wide = None;
                    if len <= CACHE_WIDE_PIECE && lines < mem.pieces.len() {
                        let key = text
                            .get(at..at + 32)
                            .and_then(|w| <&[u8; 32]>::try_from(w).ok())
                            .map_or_else(|| WideKey::of(piece), |w| WideKey::from_window(w, len));
                        wide = key.map(|k| (k, k.set(lines, mem.pieces.len())));
                        if let Some((_, set)) = wide {
                            set.prefetch(mem.pieces);
                        }
                        // Its ids may be too many for a wide line: the long-piece store's
                        // index line too, so that a wide miss does not wait for it.
                        if mem.long.is_enabled() {
                            long_hash = Some(LongPieces::hash(piece));
                        }
                    } else if len <= LONG_BATCH_MAX && mem.long.is_enabled() {
                        long_hash = Some(LongPieces::hash(piece));
                    } else {
                        pending = Some(AsciiPiece { len, key: 0 });
                        break;
                    }
                    if let Some(h) = long_hash {
                        mem.long.prefetch(h);
                    }
                    if let (Some(h), Some(w)) =
                        (ahead.long_hashes.get_mut(n), ahead.wides.get_mut(n))
                    {
                        *h = long_hash;
                        *w = wide;
                    }
                    (CacheKey::of_long(len), NO_LINE)
                };
                if let (Some(key), Some(line_slot)) =
                    (ahead.keys.get_mut(n), ahead.lines.get_mut(n))
                {
                    *key = ckey;
                    *line_slot = line;
                }
                at += len;
                n += 1;
            }
            // Stage 2: answer them in order, with the keys stage 1 packed.
            for i in 0..n {
                let (Some(&ckey), Some(&line)) = (ahead.keys.get(i), ahead.lines.get(i)) else {
                    break;
                };
                let len = ckey.len();
                // Single bytes go through the cache too: a branch on the length would be
                // mispredicted at every turn between words and punctuation.
                let done = match mem
                    .pieces
                    .get(line)
                    .and_then(|e| e.emit(ckey, out, written))
                {
                    Some(done) => done,
                    None => {
                        let piece = text.get(pos..pos + len).unwrap_or(&[]);
                        let (long_hash, wide) = if line == NO_LINE {
                            (
                                ahead.long_hashes.get(i).copied().flatten(),
                                ahead.wides.get(i).copied().flatten(),
                            )
                        } else {
                            (None, None)
                        };
                        // A wide piece: its set, prefetched in stage 1. A short one: its
                        // line's buddy (the other half of the line's 128-byte pair), where
                        // it lives when its own line is taken whole.
                        let hit = match wide {
                            Some((k, set)) => set.emit(mem.pieces, k, out, written),
                            None => cache::buddy(line, lines)
                                .and_then(|b| mem.pieces.get(b))
                                .and_then(|e| e.emit(ckey, out, written)),
                        };
                        match hit {
                            Some(done) => done,
                            None => {
                                let known = Known { long_hash, wide };
                                self.fast_loop_miss(piece, ckey, line, known, out, written, mem)
                            }
                        }
                    }
                };
                match done {
                    Ok(k) => written += k,
                    Err(_) => {
                        ahead.blocks = blocks;
                        return (pos, written, Some(AsciiPiece { len, key: 0 }));
                    }
                }
                pos += len;
            }
            if n < BATCH {
                ahead.blocks = blocks;
                return (pos, written, pending);
            }
        }
    }

    /// A cache miss in the cached fast loop: `piece` (key `key`) was not in short line `line`
    /// (or has none: `line` is [`NO_LINE`], `piece` longer than a short line holds).
    /// [`Tokenizer::encode_piece_after_short`] takes it from there (the wide lines for a piece
    /// with no short line, then the tables), without probing the short line again. Out of
    /// line: inlined, it would crowd the loop's hit path. Returns like `encode_piece`.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn fast_loop_miss(
        &self,
        piece: &[u8],
        key: CacheKey,
        line: usize,
        known: Known,
        out: &mut [u32],
        at: usize,
        mem: &mut CacheMemory<'_>,
    ) -> Result<usize, usize> {
        let short_key = (line != NO_LINE).then_some((key, line));
        self.encode_piece_after_short(piece, 0, short_key, known, out, at, mem)
    }

    /// Encode one piece into `out[at..]`: a cached piece (when `mem` has piece lines), a single
    /// byte, a whole token, or merged pair by pair. `key` is the piece's
    /// [`hash::short_key`], or 0 when the caller does not know it. Returns the number of ids,
    /// or `Err(needed)`: the free room (in ids, counted from `out[0]`) this piece would need.
    ///
    /// The cache is asked first and remembers every piece it can hold, whole tokens included:
    /// a hit is one line load, cheaper than the piece table's two dependent loads.
    #[inline]
    fn encode_piece(
        &self,
        piece: &[u8],
        key: u64,
        out: &mut [u32],
        at: usize,
        mem: &mut CacheMemory<'_>,
    ) -> Result<usize, usize> {
        // The short line (pieces of up to 15 bytes), else the wide lines (16–31 bytes), then
        // the tables; the result goes where it fits. A short piece with 5–12 ids takes its
        // whole short line: those are common in scripts a vocabulary covers thinly (Greek,
        // Korean in cl100k_base), and so are found by the one probe the fast loop prefetched.
        let short = cache::short_lines(mem.pieces.len());
        let short_key = CacheKey::of(piece)
            .filter(|_| short > 0)
            .map(|k| (k, k.line(short)));
        if let Some((k, line)) = short_key {
            if let Some(done) = mem.pieces.get(line).and_then(|e| e.emit(k, out, at)) {
                return done;
            }
        }
        self.encode_piece_after_short(piece, key, short_key, Known::NOTHING, out, at, mem)
    }

    /// [`Tokenizer::encode_piece`] once the piece's short line (`short_key`: its key and line,
    /// `None` when it has none) has missed: the wide lines (a piece with no short line), the
    /// long-piece store, then the tables. The cached fast loop comes here straight from its
    /// own short-line miss, so as not to probe that line twice, with what its first stage
    /// [`Known`] of the piece.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn encode_piece_after_short(
        &self,
        piece: &[u8],
        key: u64,
        short_key: Option<(CacheKey, usize)>,
        known: Known,
        out: &mut [u32],
        at: usize,
        mem: &mut CacheMemory<'_>,
    ) -> Result<usize, usize> {
        let CacheMemory {
            pieces: cache,
            memo,
            long,
        } = mem;
        let short = cache::short_lines(cache.len());
        // Only a piece with no short line (longer than one holds) has wide lines.
        let wide_key = known.wide.or_else(|| {
            (short < cache.len() && short_key.is_none())
                .then(|| WideKey::of(piece))
                .flatten()
                .map(|k| (k, k.set(short, cache.len())))
        });
        // The long-piece store, for what neither line kind can hold: pieces longer than a
        // wide line, and those a wide line missed (which may have too many ids for one). Its
        // index line is prefetched before the wide line is read, so the two loads overlap.
        let long_piece =
            long.is_tracking() && (piece.len() > CACHE_WIDE_PIECE || wide_key.is_some());
        let long_hash = match known.long_hash {
            // Hashed (and its index line prefetched) by the cached fast loop's first stage.
            Some(h) => long_piece.then_some(h),
            None => {
                let h = (long_piece && long.is_enabled()).then(|| LongPieces::hash(piece));
                if let Some(h) = h {
                    long.prefetch(h);
                }
                h
            }
        };
        // (Unless the fast loop has looked there already.)
        if let (Some((k, set)), None) = (wide_key, known.wide) {
            if let Some(done) = set.emit(cache, k, out, at) {
                return done;
            }
        }
        // A short piece whose own line missed may live in that line's buddy.
        if let Some((k, line)) = short_key {
            let buddy = cache::buddy(line, short).and_then(|b| cache.get(b));
            if let Some(done) = buddy.and_then(|e| e.emit(k, out, at)) {
                return done;
            }
        }
        if let Some(h) = long_hash {
            if let Some(done) = long.get(piece, h, out, at) {
                return done;
            }
        }
        let n = self.uncached_piece(piece, key, out, at, memo)?;
        let ids = out.get(at..at + n).unwrap_or(&[]);
        let stored = match (short_key, wide_key) {
            (Some((k, line)), _) if n <= CACHE_FULL_IDS => {
                cache::put_short(cache, short, line, k, ids);
                true
            }
            (_, Some((k, set))) => set.put(cache, k, ids),
            _ => false,
        };
        if long_piece && !stored {
            long.put(piece, long_hash, ids);
        }
        Ok(n)
    }

    /// Encode a piece without the cache: one id if it is a single byte or a whole token, else
    /// merged pair by pair (see [`Tokenizer::encode_piece`] for `key` and the result).
    #[inline]
    fn uncached_piece(
        &self,
        piece: &[u8],
        key: u64,
        out: &mut [u32],
        at: usize,
        memo: &mut PairMemo<'_>,
    ) -> Result<usize, usize> {
        let t = self.tables;
        if let [b] = piece {
            return put_one(out, at, t.single_byte(*b));
        }
        let key = if key != 0 {
            key
        } else {
            hash::short_key(piece)
        };
        let hash = t.piece_hash_with_key(piece, key);
        if let Some(id) = t.piece_with_key(piece, key, hash) {
            return put_one(out, at, id);
        }
        self.merge_piece(piece, out, at, memo)
    }

    /// Merge a piece that is not a whole token into `out[at..]` (see [`Tokenizer::encode_piece`]
    /// for the result).
    #[inline]
    fn merge_piece(
        &self,
        piece: &[u8],
        out: &mut [u32],
        at: usize,
        memo: &mut PairMemo<'_>,
    ) -> Result<usize, usize> {
        let t = self.tables;
        let room = out.len().saturating_sub(at);
        let n = piece.len();
        #[cfg(not(feature = "backtrack"))]
        let _ = memo;
        #[cfg(feature = "backtrack")]
        if room >= n && (n >= BACKTRACK_MIN || !piece.is_ascii()) && t.word_end_ids.is_empty() {
            let ids = out.get_mut(at..at + n).unwrap_or(&mut []);
            if let Some(k) = super::backtrack::encode(t, piece, ids, memo) {
                return Ok(k);
            }
        }
        if n <= STACK_PIECE {
            let mut cand = [0u32; STACK_PIECE];
            if room >= n {
                // Merge in place in the output buffer: no copy afterwards.
                let ids = out.get_mut(at..at + n).unwrap_or(&mut []);
                return Ok(bpe::merge_into(t, piece, ids, &mut cand).unwrap_or(0));
            }
            let mut ids = [0u32; STACK_PIECE];
            let k = bpe::merge_into(t, piece, &mut ids, &mut cand).unwrap_or(0);
            let (Some(dst), Some(src)) = (out.get_mut(at..at + k), ids.get(..k)) else {
                return Err(at + k);
            };
            slice_ops::copy(dst, src);
            Ok(k)
        } else {
            // Long piece: the work area is the free part of the output buffer.
            let needed = bpe::scratch_needed(n);
            if room < needed {
                return Err(at + needed);
            }
            let free = out.get_mut(at..).unwrap_or(&mut []);
            Ok(bpe::merge_long(t, piece, free).unwrap_or(0))
        }
    }
}

/// Whether the encoder runs [`fast_loop`]: on 64-bit targets only. Its word-at-a-time scans
/// use 64-bit arithmetic, which a 32-bit core (the Cortex-M firmware) does in several
/// instructions: measured under QEMU (`cargo xtask footprint`), it made the firmware encoder
/// about 10 % slower, so 32-bit targets split every piece with the full splitter.
const FAST_LOOP: bool = cfg!(target_pointer_width = "64");

/// Shortest ASCII piece encoded by backtracking ([`super::backtrack`]) when the tables have a
/// trie (every piece that is not all ASCII is). Shorter ASCII pieces merge as fast pair by pair
/// from tables already in cache, where the trie walk would touch colder memory (measured with
/// callgrind on English: neutral at 16 bytes, 10 % more cycles at 2).
#[cfg(feature = "backtrack")]
const BACKTRACK_MIN: usize = 16;

/// Pieces the cached fast loop splits ahead of answering them
/// ([`Tokenizer::fast_loop_cached`]). 64 rather than 32 (`encode_file`, 16 MiB cache,
/// interleaved best of 3x10): cl100k_base emoji-mixed 273 -> 280 MB/s, English 346 -> 355,
/// gpt2 Chinese and Greek within 1 %; 128 was slower on English.
const BATCH: usize = 64;

/// Longest piece the cached fast loop's batch takes into the long-piece store's care: the
/// stand-in key ([`CacheKey::of_long`]) holds the length in a byte.
const LONG_BATCH_MAX: usize = 255;

/// The "line" of a piece in the cached fast loop's batch that has no short line (longer than
/// one holds): no cache has this many lines, so the short probe finds nothing.
const NO_LINE: usize = usize::MAX;

/// The ordinary text the fast loops work on: the text up to the next special token (or the
/// end), and whether it is final there (see [`pretok::next_piece`]).
#[derive(Clone, Copy)]
struct Segment<'a> {
    text: &'a [u8],
    is_final: bool,
}

/// The caller's cache memory: the piece lines, the long-piece store and the pair memo split
/// off their end.
struct CacheMemory<'c> {
    pieces: &'c mut [CacheEntry],
    memo: PairMemo<'c>,
    long: LongPieces<'c>,
}

/// The cache memory, with the cached fast loop's split-ahead pieces: their keys and cache
/// lines ([`Tokenizer::fast_loop_cached`]). Set up once per call (768 bytes).
struct Lookahead<'c> {
    mem: CacheMemory<'c>,
    keys: [CacheKey; BATCH],
    lines: [usize; BATCH],
    /// [`LongPieces::hash`] of the batch's pieces that the first stage hashed (those with no
    /// short line, when the long-piece store is on), so that a miss does not hash them again.
    long_hashes: [Option<u64>; BATCH],
    /// The wide key and set of the batch's wide pieces (16 to 31 bytes).
    wides: [Option<(WideKey, WideSet)>; BATCH],
    /// The block splitter's pieces ahead (both fast loops).
    blocks: Blocks,
}

impl<'c> Lookahead<'c> {
    /// The cache's lines, with a pair memo split off their end when `memo` (the tables can
    /// backtrack).
    fn new(cache: &'c mut [CacheEntry], memo: bool) -> Self {
        let (pieces, memo) = PairMemo::split(cache, memo);
        let (pieces, long) = LongPieces::split(pieces);
        Lookahead {
            mem: CacheMemory { pieces, memo, long },
            keys: [CacheKey::EMPTY; BATCH],
            lines: [0; BATCH],
            long_hashes: [None; BATCH],
            wides: [None; BATCH],
            blocks: Blocks::new(),
        }
    }
}

/// What the cached fast loop's first stage worked out about a piece with no short line: its
/// [`LongPieces::hash`] (index line prefetched) and its wide key and set (set prefetched, and
/// already probed: a miss there).
#[derive(Clone, Copy)]
struct Known {
    long_hash: Option<u64>,
    wide: Option<(WideKey, WideSet)>,
}

impl Known {
    /// Nothing known: everything is worked out afresh.
    const NOTHING: Known = Known {
        long_hash: None,
        wide: None,
    };
}

/// The cache key of the `len`-byte piece (`1..=15`) at `text[at..]`, read from the 16 bytes
/// there (`None` when fewer are left).
#[inline(always)]
fn window_key(text: &[u8], at: usize, len: usize) -> Option<CacheKey> {
    let window = <&[u8; 16]>::try_from(text.get(at..at + 16)?).ok()?;
    let (w0, w1) = cache::words(window);
    Some(CacheKey::from_words(w0, w1, len))
}

/// Encode the pieces at `text[pos..]` that the fast path splits (the block splitter through
/// `blocks`, else the ASCII fast path) and that are whole tokens, one id each into
/// `out[written..]`, until one is not (or `out` is full). Returns the new `(pos, written)` and,
/// when the loop stopped at a piece it had split, that piece (so the caller does not split it
/// again; key 0 for a block's piece longer than a key holds).
#[inline(always)]
fn fast_loop(
    t: &Tables<'_>,
    pattern: Pattern,
    text: &[u8],
    mut pos: usize,
    out: &mut [u32],
    mut written: usize,
    blocks: &mut Blocks,
) -> (usize, usize, Option<AsciiPiece>) {
    // In a register while the loop runs.
    let mut cursor = *blocks;
    let stop = loop {
        // The block splitter, else the ASCII fast path. A block's piece longer than a key
        // holds is handed back as it is (key 0), for the caller's general path.
        let p = match cursor.next_len(pattern, text, pos) {
            Some(len) if len <= CACHE_PIECE => AsciiPiece::at(text, pos, len),
            Some(len) => break Some(AsciiPiece { len, key: 0 }),
            None => match pretok::fast_piece(pattern, text, pos) {
                Fast::Piece(p) => p,
                fast => match cursor.char_len(pattern, text, pos, fast) {
                    Some(len) if len <= CACHE_PIECE => AsciiPiece::at(text, pos, len),
                    Some(len) => break Some(AsciiPiece { len, key: 0 }),
                    None => break None,
                },
            },
        };
        let piece = text.get(pos..pos + p.len).unwrap_or(&[]);
        let (Some(id), Some(slot)) = (t.whole_piece(piece, p.key), out.get_mut(written)) else {
            break Some(p);
        };
        *slot = id;
        written += 1;
        pos += p.len;
    };
    *blocks = cursor;
    (pos, written, stop)
}

/// The length of the piece at `text[at..]` (a piece start) by the pattern's full splitter,
/// for the cached fast loop where the fast path did not split it; `None` when the splitter
/// needs more text (`is_final` false). Out of line, so that the loop's fast path stays small.
#[inline(never)]
fn full_piece(pattern: Pattern, text: &[u8], at: usize, is_final: bool) -> Option<usize> {
    match pretok::next_piece(pattern, text, at, is_final) {
        Step::Piece { end } => Some(end.saturating_sub(at)),
        // The hand-rolled patterns never drop bytes.
        Step::NeedMore | Step::Skip { .. } => None,
    }
}

/// Write one id at `out[at]`: `Ok(1)`, or `Err(at + 1)` when it does not fit.
#[inline]
fn put_one(out: &mut [u32], at: usize, id: u32) -> Result<usize, usize> {
    match out.get_mut(at) {
        Some(slot) => {
            *slot = id;
            Ok(1)
        }
        None => Err(at + 1),
    }
}
