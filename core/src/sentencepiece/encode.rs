//! The SentencePiece BPE encoder: normalize, split into words, merge by score, fall back to
//! bytes.
//!
//! Within a word, SentencePiece starts from one symbol per character (a user-defined symbol
//! matched in the text is one symbol that never merges) and repeatedly merges the adjacent
//! pair whose concatenation is a piece with the highest score, the leftmost on a tie. A
//! symbol left that is not a piece becomes its bytes' `<0xHH>` pieces (byte fallback) or
//! `<unk>`.
//!
//! Most words of natural text are whole pieces: a word whose normalized bytes are a piece
//! marked whole ([`SpTables::is_whole`]) is that piece after one lookup. Other words are
//! merged in the caller's output buffer ([`super::merge`]). A word that needs more room than
//! the whole buffer is [`EncodeError::PieceTooLong`].

use super::merge::{merge_word, NoRoom, Word, WORD_BUF};
#[cfg(target_pointer_width = "64")]
use super::merge::{HUGE_WORD_BUF, LONG_WORD_BUF};
use super::normalize::{char_at, strip_end, strip_start, Normalizer, WordEnd, SPACE_MARK};
use super::tables::{Sections, SpTables};
use crate::cache::{CacheEntry, CacheKey};
use crate::error::EncodeError;
use crate::special::{self, Found};
use crate::tokenize::Cursor;
use crate::utf8;
use crate::Progress;
/// A word found by [`Normalizer::scan_word`].
pub(super) struct Scanned {
    /// Its offset in the text.
    pub(super) start: usize,
    /// Its end in the text.
    pub(super) end: usize,
    /// It starts with the virtual `▁`.
    pub(super) prefix: bool,
    /// Its normalized length in bytes.
    pub(super) len: usize,
}

/// The words an encode call works on: those of `norm.text[pos..end]`, the first after a
/// virtual `▁` when `prefix`; with `hold_last`, a word that reaches `end` is left for later
/// (more input could extend it).
#[derive(Clone, Copy)]
pub(super) struct Span<'a> {
    pub(super) norm: Normalizer<'a>,
    pub(super) pos: usize,
    pub(super) end: usize,
    pub(super) prefix: bool,
    pub(super) hold_last: bool,
}

/// How one word becomes ids: the only step where BPE and Unigram differ. Everything around it
/// (normalizing, finding words, sections between user-defined symbols, resuming, streaming) is
/// [`SpTokenizer::words_in`] and its callers, shared by both algorithms.
pub(super) trait WordCoder {
    /// Write the ids of `word` into `out[written..]` and return how many; `buf` holds its
    /// normalized bytes when they fit (`buf.len() >= word.len`), else the coder packs them
    /// into the far end of `out`. `cells`: the stack work area the coder asked for. On success `cursor`'s carried state (`after_unk`, and a
    /// Unigram model's score) follows the word; on an error nothing changes.
    #[allow(clippy::too_many_arguments)]
    fn word(
        &mut self,
        sp: &SpTokenizer<'_>,
        norm: &Normalizer<'_>,
        word: &Scanned,
        buf: &[u8],
        cells: &mut [u32],
        out: &mut [u32],
        written: usize,
        cursor: &mut Cursor,
        cache: &mut [CacheEntry],
    ) -> Result<usize, NoRoom>;
}

/// The BPE step of the word loop. A word that is a piece marked whole (its own bytes merge
/// into it) is that piece, with one lookup; any other word is merged, from `buf` or, when
/// longer, packed four bytes to a `u32` at the end of `out`.
struct BpeCoder;

impl WordCoder for BpeCoder {
    #[inline]
    fn word(
        &mut self,
        sp: &SpTokenizer<'_>,
        norm: &Normalizer<'_>,
        scanned: &Scanned,
        buf: &[u8],
        _cells: &mut [u32],
        out: &mut [u32],
        written: usize,
        cursor: &mut Cursor,
        cache: &mut [CacheEntry],
    ) -> Result<usize, NoRoom> {
        let (t, len, after_unk) = (sp.tables, scanned.len, &mut cursor.after_unk);
        if let Some(word) = buf.get(..len) {
            if let Some(id) = t.piece_id(word).filter(|&id| t.is_whole(id)) {
                let empty = out.is_empty();
                return match out.get_mut(written) {
                    Some(slot) => {
                        *slot = id;
                        *after_unk = false;
                        Ok(1)
                    }
                    None if empty => Err(NoRoom::TooLong(1)),
                    None => Err(NoRoom::Full),
                };
            }
            let Some(key) = Some(word)
                .filter(|_| !cache.is_empty())
                .and_then(CacheKey::of)
            else {
                return merge_word(t, Word::Flat(word), out, written, after_unk);
            };
            let line = key.line(cache.len());
            if let Some(entry) = cache.get(line) {
                match entry.emit(key, out, written) {
                    Some(Ok(n)) => return Ok(n),
                    Some(Err(end)) if written == 0 => return Err(NoRoom::TooLong(end)),
                    Some(Err(_)) => return Err(NoRoom::Full),
                    None => {}
                }
            }
            let n = merge_word(t, Word::Flat(word), out, written, after_unk)?;
            if let (Some(entry), Some(ids)) = (cache.get_mut(line), out.get(written..written + n)) {
                entry.put(key, ids);
            }
            return Ok(n);
        }
        // A longer word: its bytes packed at the end of `out`, the rest is the work area.
        let words = len.div_ceil(4);
        let Some(split) = out.len().checked_sub(words) else {
            // What the work area needs (see `merge_word`), for at most one symbol per
            // character and the prefix.
            let mut chars = usize::from(scanned.prefix);
            let mut pos = scanned.start;
            if norm.is_mapped() {
                // A mapped word: at most one character per normalized byte.
                chars = len;
                pos = scanned.end;
            }
            while pos < scanned.end {
                chars += 1;
                pos += char_at(norm.text, pos).1.max(1);
            }
            return Err(NoRoom::TooLong(
                words
                    .saturating_add(len)
                    .saturating_add(chars.saturating_mul(10))
                    + 1,
            ));
        };
        if split < written {
            // The packed bytes would overwrite ids of this call: those come out first.
            return Err(NoRoom::Full);
        }
        let Some((rest, packed)) = out.split_at_mut_checked(split) else {
            return Err(NoRoom::TooLong(words));
        };
        norm.write_packed(scanned.start, scanned.end, scanned.prefix, packed);
        match merge_word(t, Word::Packed(packed, len), rest, written, after_unk) {
            Err(NoRoom::TooLong(needed)) => Err(NoRoom::TooLong(needed.saturating_add(words))),
            other => other,
        }
    }
}

/// A SentencePiece tokenizer (BPE or Unigram) over a set of tables. Cheap to copy; holds no
/// mutable state. It implements [`crate::Tokenize`], the contract every family keeps.
#[derive(Clone, Copy, Debug)]
pub struct SpTokenizer<'t> {
    tables: &'t SpTables<'t>,
}

impl<'t> SpTokenizer<'t> {
    /// A tokenizer over `tables` (baked, or built on the host by `picobpe-model`).
    pub fn new(tables: &'t SpTables<'t>) -> Self {
        SpTokenizer { tables }
    }

    /// The tables this tokenizer reads.
    pub fn tables(&self) -> &'t SpTables<'t> {
        self.tables
    }

    /// Encode all of `text` into `out`, returning the number of ids written: the ids
    /// SentencePiece's `EncodeAsIds` gives (no `<s>`/`</s>` added). Malformed UTF-8 is
    /// accepted: each byte that is not part of a well-formed character is read as U+FFFD, as
    /// SentencePiece's normalizer does. The same as [`crate::Tokenize::encode_from`] from 0
    /// without a cache; resume, caching and streaming go through [`crate::Tokenize`].
    ///
    /// Stack: a word buffer of 256 bytes; on 64-bit targets a text over 256 bytes gets one of
    /// 4 KiB and a text over 4 KiB one of 64 KiB (a longer word is merged in the far end of
    /// `out` instead, more slowly). On 32-bit targets longer words always use `out`. A Unigram
    /// model's lattice: see [`super::UNIGRAM_STACK_BYTES`].
    pub fn encode(&self, text: &[u8], out: &mut [u32]) -> Result<usize, EncodeError> {
        self.encode_from_offset(text, 0, out, &mut [])
    }

    /// The whole of `text` as `sentencepiece`'s normalizer makes it for its trainer
    /// (`Normalizer::Normalize`): the character map, spaces as `▁`, U+FFFD for each byte that
    /// is not part of well-formed UTF-8, `remove_extra_whitespaces`, and the dummy `▁` before a
    /// text that is not empty. Writes what fits into `out` and returns its length; a result
    /// over `out.len()` asks for a buffer at least that long (then the exact length follows). `None` for tables that do not
    /// normalize whole texts the `sentencepiece` way: with user-defined symbols (matched
    /// inside the normalizer when encoding, not when training) or with the sections or
    /// normalizer of a `tokenizer.json`.
    pub fn normalize(&self, text: &[u8], out: &mut [u8]) -> Option<usize> {
        let t = self.tables;
        if t.sections != Sections::Inline || t.normalizer.is_some() || !t.user_defined.is_empty() {
            return None;
        }
        let mut norm = Normalizer::of(text, t, true);
        let start = norm.start(0, true);
        // With a map, the trailing `▁`s are dropped from the output afterwards, as
        // `sentencepiece` does, rather than found first by a second walk over the map.
        let end = if norm.is_mapped() {
            text.len()
        } else {
            norm.end(start)
        };
        if end <= start {
            return Some(0);
        }
        let at = if t.add_dummy_prefix {
            for (d, &b) in out.iter_mut().zip(SPACE_MARK.iter()) {
                *d = b;
            }
            SPACE_MARK.len()
        } else {
            0
        };
        let (_, mut len) = norm.scan_word(start, end, WordEnd::Span, out, at);
        if len > out.len() {
            // An upper bound: the call with a buffer this long trims the end.
            return Some(len);
        }
        if t.remove_extra_whitespaces && norm.is_mapped() {
            while len > at && out.get(..len).is_some_and(|o| o.ends_with(&SPACE_MARK)) {
                len -= SPACE_MARK.len();
            }
        }
        // A text whose characters all map to nothing is empty, dummy prefix included, once
        // trailing `▁`s are dropped.
        Some(if t.remove_extra_whitespaces && len == at {
            0
        } else {
            len
        })
    }

    /// The cache this model's encoder uses: BPE only with byte fallback, Unigram only
    /// without sections (see [`crate::Tokenize`]'s cache rule and `unigram`'s docs).
    fn usable_cache<'c>(&self, cache: &'c mut [CacheEntry]) -> &'c mut [CacheEntry] {
        let t = self.tables;
        let keep = if self.is_unigram() {
            t.sections == Sections::Inline
        } else {
            t.byte_fallback()
        };
        if keep {
            cache
        } else {
            &mut []
        }
    }

    /// [`crate::Tokenize::encode_at`]: encode `text` from `cursor` on, moving it past what was
    /// encoded. On `OutputFull` the cursor stands at `consumed`; `PieceTooLong` comes only from
    /// a call that wrote nothing, with the cursor at the word that needs the room. Inlined
    /// (and `advance_cursor` kept out of line) so that `encode_from_offset`'s
    /// frame is not stacked on this one's: 80 B less encode stack on the Cortex-M0.
    #[inline(always)]
    pub(crate) fn encode_cursor(
        &self,
        text: &[u8],
        cursor: &mut Cursor,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let t = self.tables;
        let cache = self.usable_cache(cache);
        if t.sections != Sections::Inline {
            return if t.normalizer.is_some() {
                self.sections_normalized(text, cursor, out, cache)
            } else {
                self.sections(text, cursor, out, cache)
            };
        }
        let from = cursor.offset.min(text.len());
        let at_start = from == 0;
        let mut norm = Normalizer::of(text, t, at_start);
        let pos = norm.start(from, at_start);
        let end = norm.end(pos);
        let prefix = at_start && t.add_dummy_prefix;
        let (reached, written) =
            self.words(span(norm, pos, end, prefix, false), out, 0, cursor, cache)?;
        cursor.offset = if reached >= end { text.len() } else { reached };
        Ok(written)
    }

    /// [`crate::Tokenize::encode_from`]: the state at `from` (a Unigram model's carried
    /// score) is rebuilt by segmenting the text before it, then the rest is encoded.
    pub(crate) fn encode_from_offset(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let mut cursor = Cursor::START;
        let from = from.min(text.len());
        if from > 0 {
            self.advance_cursor(text, from, out, &mut cursor)?;
        }
        self.encode_cursor(text, &mut cursor, out, cache)
    }

    /// [`crate::Tokenize::encode_part`]: encode a prefix of a stream's pending `text`. With
    /// `is_final` false the last word (which more input could extend) is left for later, and
    /// so is everything when words cannot be encoded apart (tables without
    /// [`SpTables::split_words`]; a `tokenizer.json` import with user-defined symbols, or any
    /// Unigram one, whose sections restart the score). Those are encoded at the end, at once.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn encode_stream_part(
        &self,
        text: &[u8],
        at_start: bool,
        is_final: bool,
        cursor: &mut Cursor,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        let t = self.tables;
        let unigram = self.is_unigram();
        let sections = t.sections != Sections::Inline;
        // With sections, a Unigram model's score restarts only at a section or, with
        // `Metaspace`'s split, at each word.
        let restarts = !unigram || t.sections.splits_words();
        // A stream whose sections lose their leading and trailing whitespace is encoded at the
        // end too: whether whitespace leads or trails is known only then.
        let whole = sections && (!restarts || !t.user_defined.is_empty() || t.strip_sections);
        let apart = t.split_words && !whole;
        if !is_final && !apart {
            return Ok(Progress {
                consumed: 0,
                written: 0,
            });
        }
        if apart && sections && t.normalizer.is_some() {
            let cache = self.usable_cache(cache);
            let mut first = at_start;
            return self.through_normalizer(text, is_final, out, &mut |w, fin, o| {
                self.normalized_words(w, &mut first, at_start, fin, o, cache)
            });
        }
        if !apart && sections {
            // All of it at once: a partial result could not be resumed from this text alone.
            *cursor = Cursor::START;
            let result = if t.normalizer.is_some() {
                self.sections_normalized(text, cursor, out, &mut [])
            } else {
                self.sections(text, cursor, out, &mut [])
            };
            return match result {
                Ok(written) => Ok(Progress {
                    consumed: text.len(),
                    written,
                }),
                Err(EncodeError::OutputFull { .. }) => Err(EncodeError::PieceTooLong {
                    offset: 0,
                    len: text.len(),
                    // Enough for any text encoded at once: per normalized byte (up to 3 an
                    // input byte) an id and the work area (BPE's merge; Unigram's lattice
                    // and packed bytes, about 5.25 ids).
                    needed: if unigram { 20 } else { 12 } * text.len() + 64,
                }),
                Err(e) => Err(e),
            };
        }
        let (norm, pos, end, prefix) = if sections {
            // One section (no user-defined symbols): normalized as `sections` does, trailing
            // whitespace held back until more text shows it is not trailing.
            let norm = Normalizer::new(text, t.collapses_spaces());
            let end = self.section_end(text, 0, text.len());
            let prefix = at_start && end > 0 && self.section_prefix(text, 0);
            (norm, 0, end, prefix)
        } else {
            let mut norm = Normalizer::of(text, t, at_start);
            let pos = norm.start(0, at_start);
            let end = if is_final { norm.end(pos) } else { text.len() };
            (norm, pos, end, at_start && t.add_dummy_prefix)
        };
        let cache = self.usable_cache(cache);
        let (reached, written) = self.words(
            span(norm, pos, end, prefix, !is_final),
            out,
            0,
            cursor,
            cache,
        )?;
        // Trailing spaces dropped by `remove_extra_whitespaces` are consumed too.
        let consumed = if is_final { text.len() } else { reached };
        Ok(Progress { consumed, written })
    }

    /// Encode from `cursor` for tables imported from a `tokenizer.json`: the text is cut at
    /// user-defined symbols (added tokens) first, as `tokenizers` does, and each section
    /// between them is normalized and encoded on its own (a Unigram model from a zero score).
    fn sections(
        &self,
        text: &[u8],
        cursor: &mut Cursor,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let mut norm = Normalizer::new(text, self.tables.collapses_spaces());
        let mut pos = cursor.offset.min(text.len());
        let mut section = self.section_start(text, pos);
        // Resuming inside a section's stripped leading whitespace, or at its end: the
        // section's words start after it.
        let content = self.content_start(text, section);
        if pos <= content {
            (pos, section) = (content, content);
        }
        let mut written = 0usize;
        loop {
            let next = self.next_user_symbol(text, pos, text.len());
            let end = next.map_or(text.len(), |(at, _, _)| at);
            if pos == section && self.tables.strip_sections {
                pos = strip_start(text, pos, end);
                section = pos;
            }
            let end = self.section_end(text, pos, end);
            let end = self.stripped_end(text, pos, end);
            norm.floor = section;
            if pos == section {
                // A new call of the model.
                cursor.score = 0.0;
                cursor.after_unk = false;
            }
            let prefix = pos == section && pos < end && self.section_prefix(text, section);
            written = self
                .words(
                    span(norm, pos, end, prefix, false),
                    out,
                    written,
                    cursor,
                    cache,
                )?
                .1;
            let Some(symbol) = next else {
                cursor.offset = text.len();
                return Ok(written);
            };
            (written, pos) = put_user_symbol(symbol, out, written, cursor)?;
            section = pos;
        }
    }

    /// Encodes `text` (a section, or a stream's part of one) through the tables' normalizer:
    /// a window at a time (`crate::normalizer`), each window encoded by `encode` (directly
    /// without a normalizer).
    fn through_normalizer(
        &self,
        text: &[u8],
        is_final: bool,
        out: &mut [u32],
        encode: &mut crate::normalizer::EncodePart<'_>,
    ) -> Result<Progress, EncodeError> {
        let t = self.tables;
        match t.normalizer {
            Some(n) => n.encode(&t.charsmap, text, is_final, out, normalized_work, encode),
            None => encode(text, is_final, out),
        }
    }

    /// [`SpTokenizer::sections`] for tables with a normalizer (a Unicode form or
    /// `Precompiled`): each section is normalized a window at a time (`crate::normalizer`)
    /// and each window split into words, which are segmented apart
    /// ([`Sections::splits_words`]: the normalizer needs it, so that a window can end at any
    /// word). `cursor` stands at a raw offset where a word and a normalization unit start.
    fn sections_normalized(
        &self,
        text: &[u8],
        cursor: &mut Cursor,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let mut pos = cursor.offset.min(text.len());
        let section = self.section_start(text, pos);
        let mut first_section = section == 0;
        // Resuming inside a section's stripped leading whitespace: its words start after it.
        let content = self.content_start(text, section);
        let mut first = pos <= content;
        pos = pos.max(content);
        let mut written = 0usize;
        loop {
            let next = self.next_user_symbol(text, pos, text.len());
            let end = next.map_or(text.len(), |(at, _, _)| at);
            if first && self.tables.strip_sections {
                pos = strip_start(text, pos, end);
            }
            let end = self.stripped_end(text, pos, end);
            let part = text.get(pos..end).unwrap_or(&[]);
            if !part.is_empty() {
                let room = out.get_mut(written..).unwrap_or(&mut []);
                let result = self.through_normalizer(part, true, room, &mut |w, fin, o| {
                    self.normalized_words(w, &mut first, first_section, fin, o, cache)
                });
                match result {
                    Ok(p) => written += p.written,
                    Err(e) => {
                        let e = e.within(pos, written, out.len());
                        if let EncodeError::OutputFull { consumed, .. } = e {
                            cursor.offset = consumed;
                        }
                        return Err(e);
                    }
                }
            }
            let Some(symbol) = next else {
                cursor.offset = text.len();
                return Ok(written);
            };
            (written, pos) = put_user_symbol(symbol, out, written, cursor)?;
            (first, first_section) = (true, false);
        }
    }

    /// Encode `window`, normalized text of one section, as a stream part (with `is_final`
    /// false, the word that reaches its end is left for later). `first`: the window starts
    /// the section (its `▁` goes first, by [`SpTokenizer::section_prefix`]'s rule, with
    /// `first_section` standing for "the text's first section"); cleared once a word is
    /// encoded.
    fn normalized_words(
        &self,
        window: &[u8],
        first: &mut bool,
        first_section: bool,
        is_final: bool,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        let marked = char_at(window, 0).0.is_mark();
        let prefix = *first && !window.is_empty() && self.prefix_rule(marked, first_section);
        // Runs of spaces become one `▁` and, at the section's end, trailing whitespace goes
        // (`Replace(" {2,}", "▁")` and `Strip` after the normalizer): a window starts at a
        // word, so never inside a run, and whitespace that ends a window waits until more
        // text shows whether it ends the section.
        let norm = Normalizer::new(window, self.tables.collapses_spaces());
        let end = self.section_end(window, 0, window.len());
        let mut cursor = Cursor::START;
        let (reached, written) = self.words(
            span(norm, 0, end, prefix, !is_final),
            out,
            0,
            &mut cursor,
            cache,
        )?;
        if reached > 0 {
            *first = false;
        }
        let consumed = if is_final { window.len() } else { reached };
        Ok(Progress { consumed, written })
    }

    /// Where the section holding `pos` starts: the end of the last user-defined symbol that
    /// ends by `pos` (0 when none does).
    pub(super) fn section_start(&self, text: &[u8], pos: usize) -> usize {
        let mut section = 0usize;
        while let Some((at, len, _)) = self.next_user_symbol(text, section, pos) {
            section = at + len;
        }
        section
    }

    /// True when the section of text starting at `section` (not empty) gets a `▁` before it,
    /// as `tokenizers` does: every section with a `Prepend("▁")` normalizer; with a
    /// `Metaspace` pre-tokenizer, every section (prepend scheme `always`) or the text's first
    /// one (`first`), and only when it does not already start with `▁` (or a space, which
    /// becomes one).
    pub(crate) fn section_prefix(&self, text: &[u8], section: usize) -> bool {
        self.prefix_rule(char_at(text, section).0.is_mark(), section == 0)
    }

    /// [`SpTokenizer::section_prefix`]'s rule for a section whose (normalized) text starts
    /// with `▁` (`starts_marked`) and is the text's first (`first_section`).
    fn prefix_rule(&self, starts_marked: bool, first_section: bool) -> bool {
        let t = self.tables;
        let unmarked = t.add_dummy_prefix && !starts_marked;
        match t.sections {
            Sections::EveryPiecePrefixed => true,
            Sections::UnmarkedPiecesPrefixed
            | Sections::UnmarkedPiecesWords
            | Sections::WhitespaceWords => unmarked,
            _ => first_section && unmarked,
        }
    }

    /// Where the text of the section that starts at `section` starts once
    /// [`SpTables::strip_sections`] dropped its leading whitespace (`section` without it).
    fn content_start(&self, text: &[u8], section: usize) -> usize {
        if !self.tables.strip_sections {
            return section;
        }
        let next = self.next_user_symbol(text, section, text.len());
        strip_start(text, section, next.map_or(text.len(), |(at, _, _)| at))
    }

    /// Where the raw text of a section that runs from `pos` to `end` ends once
    /// [`SpTables::strip_sections`] dropped its trailing whitespace (`end` without it; never
    /// before `pos`). Before any normalizer, unlike [`SpTokenizer::section_end`].
    fn stripped_end(&self, text: &[u8], pos: usize, end: usize) -> usize {
        if self.tables.strip_sections {
            strip_end(text, pos, end)
        } else {
            end
        }
    }

    /// Where the words of a section that runs from `pos` to `end` end: `end`, or with
    /// `remove_extra_whitespaces` (`tokenizers`' `Strip` on the right) before its trailing
    /// whitespace (never before `pos`).
    pub(crate) fn section_end(&self, text: &[u8], pos: usize, end: usize) -> usize {
        if self.tables.remove_extra_whitespaces {
            strip_end(text, pos, end)
        } else {
            end
        }
    }

    /// The first user-defined symbol that starts in `text[from..limit]` and ends by `limit`
    /// (the longest at that position): its offset, length and id. Only positions whose byte
    /// starts some symbol are tried (a set of lead bytes made once per call: symbols are
    /// few); such a byte is ASCII or a UTF-8 lead byte, so it always starts a character.
    ///
    /// A symbol that takes the whitespace beside it ([`SpTables::user_strips`]) is given with
    /// that whitespace: the run before it back to `from` (`lstrip`), the run after it up to
    /// `limit` (`rstrip`), as `tokenizers` cuts added tokens out of the text.
    pub(crate) fn next_user_symbol(
        &self,
        text: &[u8],
        from: usize,
        limit: usize,
    ) -> Option<(usize, usize, u32)> {
        let t = self.tables;
        if t.user_defined.is_empty() {
            return None;
        }
        let mut lead = [0u64; 4];
        for &id in t.user_defined {
            if let Some(&b) = t.piece_bytes(id).and_then(<[u8]>::first) {
                if let Some(word) = lead.get_mut(usize::from(b >> 6)) {
                    *word |= 1 << (b & 63);
                }
            }
        }
        let rest = text.get(from..limit)?;
        for (i, &b) in rest.iter().enumerate() {
            let starts = lead.get(usize::from(b >> 6)).copied().unwrap_or(0) >> (b & 63) & 1;
            if starts == 0 {
                continue;
            }
            if let Some((len, id, strip)) = t.user_symbol_strip_at(rest.get(i..).unwrap_or(&[])) {
                let at = from + i;
                let start = if strip & special::LSTRIP != 0 {
                    special::whitespace_run_start(text, from, at)
                } else {
                    at
                };
                let mut end = at + len;
                if strip & special::RSTRIP != 0 {
                    end = special::whitespace_run_end(text.get(..limit).unwrap_or(&[]), end);
                }
                return Some((start, end - start, id));
            }
        }
        None
    }

    /// Encode the words of `span` into `out` after `written` ids, with the model's algorithm;
    /// returns where it stopped and the new number of ids written. A BPE text that may hold a
    /// word longer than the small buffer gets a large one (made, and zeroed, once per call).
    /// Inlined: a frame of its own would sit between the caller and the word loop's (40 bytes
    /// more stack on Unigram).
    #[inline(always)]
    fn words(
        &self,
        span: Span<'_>,
        out: &mut [u32],
        written: usize,
        cursor: &mut Cursor,
        cache: &mut [CacheEntry],
    ) -> Result<(usize, usize), EncodeError> {
        if matches!(
            self.tables.sections,
            Sections::WhitespaceWords | Sections::PreTokens
        ) {
            return self.pre_token_words(span, out, written, cursor, cache);
        }
        self.span_words(span, out, written, cursor, cache)
    }

    /// [`SpTokenizer::words`] for [`Sections::WhitespaceWords`] and [`Sections::PreTokens`]:
    /// the span is cut into pre-tokens (at whitespace, which is dropped, or where
    /// [`SpTables::pre_split`]'s steps cut: [`PreSplit::next_token`]), and each pre-token is a
    /// span of its own whose `▁` follows [`SpTokenizer::prefix_rule`] (the span's `prefix` is
    /// not used). The cut needs nothing from before a pre-token, so a call may start at any
    /// pre-token start (or at a `▁` word inside one: the rest starts with a `▁` and gets
    /// none), and removed characters are consumed even with `hold_last` (only a pre-token that
    /// reaches the span's end is held: more text could extend it).
    #[inline(never)]
    fn pre_token_words(
        &self,
        whole: Span<'_>,
        out: &mut [u32],
        mut written: usize,
        cursor: &mut Cursor,
        cache: &mut [CacheEntry],
    ) -> Result<(usize, usize), EncodeError> {
        let Span {
            norm,
            mut pos,
            end,
            hold_last,
            ..
        } = whole;
        let text = norm.text.get(..end).unwrap_or(&[]);
        loop {
            let (start, word_end) = match self.tables.pre_split {
                Some(pre) => pre.next_token(text, pos, hold_last),
                None => whitespace_token(text, pos),
            };
            pos = start;
            cursor.offset = pos;
            if pos >= end {
                return Ok((end, written));
            }
            let prefix = self.prefix_rule(char_at(text, pos).0.is_mark(), false);
            let hold = hold_last && word_end >= end;
            let word = span(norm, pos, word_end, prefix, hold);
            let reached;
            (reached, written) = self.span_words(word, out, written, cursor, cache)?;
            if reached < word_end {
                return Ok((reached, written));
            }
            pos = word_end;
        }
    }

    /// [`SpTokenizer::words`] without the whitespace cut.
    #[inline(always)]
    fn span_words(
        &self,
        span: Span<'_>,
        out: &mut [u32],
        written: usize,
        cursor: &mut Cursor,
        cache: &mut [CacheEntry],
    ) -> Result<(usize, usize), EncodeError> {
        let c = &mut BpeCoder;
        match self.unigram_coder(true) {
            Some(mut u) => self.unigram_words(&mut u, span, out, written, cursor, cache),
            #[cfg(target_pointer_width = "64")]
            None if span.end - span.pos > LONG_WORD_BUF => {
                self.words_in::<HUGE_WORD_BUF, 0, _>(c, span, out, written, cursor, cache)
            }
            #[cfg(target_pointer_width = "64")]
            None if span.end - span.pos > WORD_BUF => {
                self.words_in::<LONG_WORD_BUF, 0, _>(c, span, out, written, cursor, cache)
            }
            None => self.words_in::<WORD_BUF, 0, _>(c, span, out, written, cursor, cache),
        }
    }

    /// The word loop, with a word buffer of `N` bytes, `M` cells of work area for the coder
    /// and `coder` for each word. `cursor` stands after the last word encoded (its offset
    /// too). Out of line: each buffer size is a frame of its own, on the stack only when it
    /// runs.
    #[inline(never)]
    pub(super) fn words_in<const N: usize, const M: usize, C: WordCoder>(
        &self,
        coder: &mut C,
        span: Span<'_>,
        out: &mut [u32],
        mut written: usize,
        cursor: &mut Cursor,
        cache: &mut [CacheEntry],
    ) -> Result<(usize, usize), EncodeError> {
        let Span {
            norm,
            mut pos,
            end,
            mut prefix,
            hold_last,
        } = span;
        let norm = &norm;
        let mut buf = [0u8; N];
        let mut cells = [0u32; M];
        let t = self.tables;
        let restart = t.sections.splits_words();
        let split = if t.sections == Sections::PreTokens {
            // A pre-token is one word: no `Metaspace` splits it.
            WordEnd::Span
        } else if restart {
            WordEnd::EveryMark
        } else if t.split_words {
            WordEnd::AfterOther
        } else {
            WordEnd::Span
        };
        while pos < end {
            let mark = if prefix { SPACE_MARK.len() } else { 0 };
            if prefix {
                for (d, s) in buf.iter_mut().zip(SPACE_MARK) {
                    *d = s;
                }
            }
            let (word_end, len) = norm.scan_word(pos, end, split, &mut buf, mark);
            if hold_last && word_end.saturating_add(norm.lookahead()) >= end {
                break;
            }
            if len > 0 {
                if restart {
                    // Each word is a call of the model of its own.
                    cursor.score = 0.0;
                    cursor.after_unk = false;
                }
                let word = Scanned {
                    start: pos,
                    end: word_end,
                    prefix,
                    len,
                };
                match coder.word(
                    self, norm, &word, &buf, &mut cells, out, written, cursor, cache,
                ) {
                    Ok(n) => written += n,
                    // Ids already written come out first, so that `PieceTooLong` always
                    // means that the whole buffer is too small for this word.
                    Err(NoRoom::TooLong(needed)) if written == 0 => {
                        return Err(EncodeError::PieceTooLong {
                            offset: pos,
                            len: word_end - pos,
                            needed,
                        })
                    }
                    Err(_) => {
                        return Err(EncodeError::OutputFull {
                            consumed: pos,
                            written,
                        })
                    }
                }
            }
            prefix = false;
            pos = word_end;
            cursor.offset = pos;
        }
        Ok((pos, written))
    }

    /// Merge one already normalized word (at most [`WORD_BUF`] bytes) into `out`, without
    /// the whole-word lookup: how `picobpe-model` finds the pieces that are whole. Not part
    /// of the stable API.
    #[doc(hidden)]
    pub fn merge_normalized(&self, word: &[u8], out: &mut [u32]) -> Result<usize, EncodeError> {
        if word.len() > WORD_BUF {
            return Err(EncodeError::PieceTooLong {
                offset: 0,
                len: word.len(),
                needed: usize::MAX,
            });
        }
        let mut after_unk = false;
        match merge_word(self.tables, Word::Flat(word), out, 0, &mut after_unk) {
            Ok(n) => Ok(n),
            Err(NoRoom::Full) | Err(NoRoom::TooLong(_)) => Err(EncodeError::PieceTooLong {
                offset: 0,
                len: word.len(),
                needed: 12 * word.len() + 1,
            }),
        }
    }
}

/// The output room a SentencePiece encoder needs for `len` bytes of normalized text that it
/// may have to segment as one word (the merge's or lattice's work area and the ids; see
/// `encode_stream_part`'s `needed`): what a normalizing encoder leaves beside a long window.
fn normalized_work(len: usize) -> usize {
    len.saturating_mul(20).saturating_add(64)
}

/// Write the user-defined symbol `(at, len, id)` that ends a section. `cursor` stands
/// before the symbol while it does not fit (the error says so) and after it once written.
/// Returns the new `written` and the offset after the symbol.
fn put_user_symbol(
    (at, len, id): (usize, usize, u32),
    out: &mut [u32],
    written: usize,
    cursor: &mut Cursor,
) -> Result<(usize, usize), EncodeError> {
    cursor.offset = at;
    let found = Found {
        start: at,
        end: at + len,
        id,
    };
    let written = special::put(found, out, written)?;
    cursor.offset = at + len;
    Ok((written, at + len))
}

/// A [`Span`] (argument order as the fields).
#[inline(always)]
/// The next whitespace-separated word of `text` from `pos`: its start (past the whitespace
/// before it) and end (`text.len()` when none is left).
fn whitespace_token(text: &[u8], mut pos: usize) -> (usize, usize) {
    let white = |at: usize| utf8::white_space_len(text.get(at..).unwrap_or(&[]));
    while pos < text.len() {
        match white(pos) {
            0 => break,
            n => pos += n,
        }
    }
    let mut end = pos;
    while end < text.len() && white(end) == 0 {
        end += char_at(text, end).1.max(1);
    }
    (pos, end)
}

pub(super) fn span(
    norm: Normalizer<'_>,
    pos: usize,
    end: usize,
    prefix: bool,
    hold_last: bool,
) -> Span<'_> {
    Span {
        norm,
        pos,
        end,
        prefix,
        hold_last,
    }
}
