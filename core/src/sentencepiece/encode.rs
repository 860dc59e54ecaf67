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
use super::normalize::{char_at, Normalizer, SPACE_MARK};
use super::tables::{Sections, SpTables};
use super::unigram::whole_text_needed;
use crate::cache::{CacheEntry, CacheKey};
use crate::encode::Progress;
use crate::error::EncodeError;
use crate::tokenize::Cursor;

/// A word found by [`Normalizer::scan_word`].
struct Scanned {
    /// Its offset in the text.
    start: usize,
    /// Its end in the text.
    end: usize,
    /// It starts with the virtual `▁`.
    prefix: bool,
    /// Its normalized length in bytes.
    len: usize,
}

/// What one encode call carries from word to word.
struct Run<'c> {
    /// The last id written is `<unk>` (a run of unknown symbols is one `<unk>`).
    after_unk: bool,
    /// The word cache (empty: none).
    cache: &'c mut [CacheEntry],
}

/// A SentencePiece BPE tokenizer over a set of tables. Cheap to copy; holds no mutable state.
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
    /// SentencePiece's normalizer does.
    ///
    /// On [`EncodeError::OutputFull`] `{ consumed, written }`, `out[..written]` holds the ids
    /// of the text up to `consumed` (the start of a word); continue with
    /// [`SpTokenizer::encode_from`]`(text, consumed, ..)`, which knows the text before that
    /// point (the normalizer's dummy prefix and whitespace rules depend on it).
    ///
    /// Stack: a word buffer of 256 bytes; on 64-bit targets a text over 256 bytes gets one of
    /// 4 KiB and a text over 4 KiB one of 64 KiB (a longer word is merged in the far end of
    /// `out` instead, more slowly). On 32-bit targets longer words always use `out`.
    pub fn encode(&self, text: &[u8], out: &mut [u32]) -> Result<usize, EncodeError> {
        self.encode_from(text, 0, out)
    }

    /// Encode `text` from byte `from` on, where `from` is 0 or a `consumed` offset returned by
    /// an earlier call on the same text; returns the number of ids written. Offsets in
    /// errors are offsets in `text`.
    pub fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
    ) -> Result<usize, EncodeError> {
        self.encode_from_cached(text, from, out, &mut [])
    }

    /// [`SpTokenizer::encode`] with a word cache in caller memory: the ids of words that had
    /// to be merged (words of up to 15 normalized bytes and up to 12 ids) are remembered by
    /// their bytes, and a later occurrence is copied from the cache. The ids are the same as
    /// without it. Start with every line [`CacheEntry::EMPTY`], keep the cache with the tables
    /// it was filled from; any number of lines works (empty: no caching). BPE models without
    /// byte fallback do not use it; Unigram models cache as
    /// [`SpTokenizer::encode_cursor_cached`] says.
    pub fn encode_cached(
        &self,
        text: &[u8],
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        self.encode_from_cached(text, 0, out, cache)
    }

    /// [`SpTokenizer::encode_from`] with a word cache (see [`SpTokenizer::encode_cached`]).
    pub fn encode_from_cached(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let t = self.tables;
        let from = from.min(text.len());
        if self.is_unigram() {
            return self.unigram_encode_from(text, from, out, cache);
        }
        let cache = if t.byte_fallback() { cache } else { &mut [] };
        let mut run = Run {
            after_unk: false,
            cache,
        };
        if t.sections != Sections::Inline {
            return self.encode_sections(text, from, out, &mut run);
        }
        let norm = Normalizer {
            text,
            remove_extra: t.remove_extra_whitespaces,
        };
        let at_start = from == 0;
        let pos = norm.start(from, at_start);
        let end = norm.end(pos);
        let prefix = at_start && t.add_dummy_prefix;
        self.encode_words(&norm, pos, end, prefix, out, 0, &mut run, false)
            .map(|(_, written)| written)
    }

    /// Encode a prefix of `text` for a stream: `text` is the start of the whole input
    /// (`at_start`), or continues it at a word start that an earlier call consumed up to. With
    /// `is_final` false, the last word (which more input could extend) is left for later, and
    /// so is everything when words cannot be encoded apart (tables without
    /// [`SpTables::split_words`], or imported from a `tokenizer.json` with user-defined
    /// symbols). Returns how far it got; `OutputFull` as in [`SpTokenizer::encode`].
    pub fn encode_part(
        &self,
        text: &[u8],
        at_start: bool,
        is_final: bool,
        out: &mut [u32],
    ) -> Result<Progress, EncodeError> {
        self.encode_part_cached(text, at_start, is_final, out, &mut [])
    }

    /// [`SpTokenizer::encode_part`] with a word cache (see [`SpTokenizer::encode_cached`]).
    pub(crate) fn encode_part_cached(
        &self,
        text: &[u8],
        at_start: bool,
        is_final: bool,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        let t = self.tables;
        if self.is_unigram() {
            // Words carry a score here: without `StreamEncoder`'s cursor, only the whole
            // text at once is exact.
            if !is_final {
                return Ok(Progress {
                    consumed: 0,
                    written: 0,
                });
            }
            let mut cursor = Cursor::START;
            return match self.unigram_part(text, at_start, true, out, &mut cursor, cache) {
                Err(EncodeError::OutputFull { .. }) => Err(EncodeError::PieceTooLong {
                    offset: 0,
                    len: text.len(),
                    needed: whole_text_needed(text.len()),
                }),
                other => other,
            };
        }
        let apart = t.split_words && (t.sections == Sections::Inline || t.user_defined.is_empty());
        if !is_final && !apart {
            return Ok(Progress {
                consumed: 0,
                written: 0,
            });
        }
        if !apart && t.sections != Sections::Inline {
            // Nothing was consumed before the end: encode it all at once.
            let mut run = Run {
                after_unk: false,
                cache: &mut [],
            };
            return match self.encode_sections(text, 0, out, &mut run) {
                Ok(written) => Ok(Progress {
                    consumed: text.len(),
                    written,
                }),
                Err(EncodeError::OutputFull { .. }) => Err(EncodeError::PieceTooLong {
                    offset: 0,
                    len: text.len(),
                    needed: 12 * text.len() + 64,
                }),
                Err(e) => Err(e),
            };
        }
        let norm = Normalizer {
            text,
            remove_extra: t.remove_extra_whitespaces,
        };
        let pos = norm.start(0, at_start);
        let end = if is_final { norm.end(pos) } else { text.len() };
        let mut run = Run {
            after_unk: false,
            cache: if t.byte_fallback() { cache } else { &mut [] },
        };
        let prefix = at_start && t.add_dummy_prefix;
        let (reached, written) =
            self.encode_words(&norm, pos, end, prefix, out, 0, &mut run, !is_final)?;
        // Trailing spaces dropped by `remove_extra_whitespaces` are consumed too.
        let consumed = if is_final { text.len() } else { reached };
        Ok(Progress { consumed, written })
    }

    /// [`SpTokenizer::encode_from`] for tables imported from a `tokenizer.json`: the text is
    /// cut at user-defined symbols first, and each piece of text between them is normalized
    /// and encoded on its own, as Hugging Face `tokenizers` does with added tokens.
    fn encode_sections(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        run: &mut Run<'_>,
    ) -> Result<usize, EncodeError> {
        let norm = Normalizer {
            text,
            remove_extra: false,
        };
        let mut pos = from;
        // Where the section holding `from` starts: the end of the last symbol before it.
        let mut section = 0usize;
        while let Some((at, len, _)) = self.next_user_symbol(text, section, from) {
            section = at + len;
        }
        let mut written = 0usize;
        loop {
            let next = self.next_user_symbol(text, pos, text.len());
            let end = next.map_or(text.len(), |(at, _, _)| at);
            let prefix = pos == section && pos < end && self.section_prefix(text, section);
            written = self
                .encode_words(&norm, pos, end, prefix, out, written, run, false)?
                .1;
            let Some((at, len, id)) = next else {
                return Ok(written);
            };
            match out.get_mut(written) {
                Some(slot) => *slot = id,
                None => {
                    return Err(EncodeError::OutputFull {
                        consumed: at,
                        written,
                    })
                }
            }
            written += 1;
            run.after_unk = false;
            pos = at + len;
            section = pos;
        }
    }

    /// True when the section of text starting at `section` (not empty) gets a `▁` before it,
    /// as `tokenizers` does: every section with a `Prepend("▁")` normalizer; with a
    /// `Metaspace` pre-tokenizer (prepend scheme `first`), the text's first section only, and
    /// only when it does not already start with `▁` (or a space, which becomes one).
    pub(crate) fn section_prefix(&self, text: &[u8], section: usize) -> bool {
        let t = self.tables;
        match t.sections {
            Sections::EveryPiecePrefixed => true,
            _ => section == 0 && t.add_dummy_prefix && !char_at(text, section).0.is_mark(),
        }
    }

    /// The first user-defined symbol that starts in `text[from..limit]` and ends by `limit`
    /// (the longest at that position): its offset, length and id.
    pub(crate) fn next_user_symbol(
        &self,
        text: &[u8],
        from: usize,
        limit: usize,
    ) -> Option<(usize, usize, u32)> {
        let mut pos = from;
        while pos < limit {
            let mut best: Option<(usize, u32)> = None;
            for &id in self.tables.user_defined {
                let Some(sym) = self.tables.piece_bytes(id) else {
                    continue;
                };
                if best.is_none_or(|(len, _)| sym.len() > len)
                    && text
                        .get(pos..limit)
                        .is_some_and(|rest| rest.starts_with(sym))
                {
                    best = Some((sym.len(), id));
                }
            }
            if let Some((len, id)) = best {
                return Some((pos, len, id));
            }
            pos += char_at(text, pos).1.max(1);
        }
        None
    }

    /// Encode the words of `text[pos..end]` into `out` after `written` ids (the first word
    /// after a virtual `▁` when `prefix`); returns where it stopped and the new number of ids
    /// written. With `hold_last`, a word that reaches `end` is left unencoded.
    #[allow(clippy::too_many_arguments)]
    fn encode_words(
        &self,
        norm: &Normalizer<'_>,
        pos: usize,
        end: usize,
        prefix: bool,
        out: &mut [u32],
        written: usize,
        run: &mut Run<'_>,
        hold_last: bool,
    ) -> Result<(usize, usize), EncodeError> {
        // A text that may hold a word longer than the small buffer gets the large one (made,
        // and zeroed, once per call).
        #[cfg(target_pointer_width = "64")]
        if end - pos > LONG_WORD_BUF {
            return self.encode_words_in::<HUGE_WORD_BUF>(
                norm, pos, end, prefix, out, written, run, hold_last,
            );
        }
        #[cfg(target_pointer_width = "64")]
        if end - pos > WORD_BUF {
            return self.encode_words_in::<LONG_WORD_BUF>(
                norm, pos, end, prefix, out, written, run, hold_last,
            );
        }
        self.encode_words_in::<WORD_BUF>(norm, pos, end, prefix, out, written, run, hold_last)
    }

    /// [`SpTokenizer::encode_words`] with a word buffer of `N` bytes.
    #[allow(clippy::too_many_arguments)]
    fn encode_words_in<const N: usize>(
        &self,
        norm: &Normalizer<'_>,
        mut pos: usize,
        end: usize,
        mut prefix: bool,
        out: &mut [u32],
        mut written: usize,
        run: &mut Run<'_>,
        hold_last: bool,
    ) -> Result<(usize, usize), EncodeError> {
        let mut buf = [0u8; N];
        while pos < end {
            let mark = if prefix { SPACE_MARK.len() } else { 0 };
            if prefix {
                for (d, s) in buf.iter_mut().zip(SPACE_MARK) {
                    *d = s;
                }
            }
            let (word_end, len) = norm.scan_word(pos, end, self.tables.split_words, &mut buf, mark);
            if hold_last && word_end >= end {
                break;
            }
            let word = Scanned {
                start: pos,
                end: word_end,
                prefix,
                len,
            };
            match self.encode_word(norm, &word, &buf, out, written, run) {
                Ok(n) => written += n,
                Err(NoRoom::Full) => {
                    return Err(EncodeError::OutputFull {
                        consumed: pos,
                        written,
                    })
                }
                Err(NoRoom::TooLong(needed)) => {
                    return Err(EncodeError::PieceTooLong {
                        offset: pos,
                        len: word_end - pos,
                        needed,
                    })
                }
            }
            prefix = false;
            pos = word_end;
        }
        Ok((pos, written))
    }

    /// Encode a `&str` (see [`SpTokenizer::encode`]).
    pub fn encode_str(&self, text: &str, out: &mut [u32]) -> Result<usize, EncodeError> {
        self.encode(text.as_bytes(), out)
    }

    /// Encode one word into `out[written..]`; returns the number of ids written. `buf` holds
    /// its normalized bytes when they fit; a longer word is packed four bytes to a `u32` at
    /// the end of `out`. A word that is a piece marked whole (its own bytes
    /// merge into it) is that piece, with one lookup; any other word is merged.
    fn encode_word(
        &self,
        norm: &Normalizer<'_>,
        scanned: &Scanned,
        buf: &[u8],
        out: &mut [u32],
        written: usize,
        run: &mut Run<'_>,
    ) -> Result<usize, NoRoom> {
        let t = self.tables;
        let len = scanned.len;
        if len == 0 {
            return Ok(0);
        }
        let users = t.sections == Sections::Inline && !t.user_defined.is_empty();
        if let Some(word) = buf.get(..len) {
            if let Some(id) = t.piece_id(word).filter(|&id| t.is_whole(id)) {
                let empty = out.is_empty();
                return match out.get_mut(written) {
                    Some(slot) => {
                        *slot = id;
                        run.after_unk = false;
                        Ok(1)
                    }
                    None if empty => Err(NoRoom::TooLong(1)),
                    None => Err(NoRoom::Full),
                };
            }
            let key = if run.cache.is_empty() {
                None
            } else {
                CacheKey::of(word)
            };
            let Some(key) = key else {
                return merge_word(t, Word::Flat(word), users, out, written, &mut run.after_unk);
            };
            let line = key.line(run.cache.len());
            if let Some(entry) = run.cache.get(line) {
                match entry.emit(key, out, written) {
                    Some(Ok(n)) => return Ok(n),
                    Some(Err(end)) if written == 0 => return Err(NoRoom::TooLong(end)),
                    Some(Err(_)) => return Err(NoRoom::Full),
                    None => {}
                }
            }
            let n = merge_word(t, Word::Flat(word), users, out, written, &mut run.after_unk)?;
            if let (Some(entry), Some(ids)) =
                (run.cache.get_mut(line), out.get(written..written + n))
            {
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
        let Some((rest, packed)) = out.split_at_mut_checked(split) else {
            return Err(NoRoom::TooLong(words));
        };
        norm.write_packed(scanned.start, scanned.end, scanned.prefix, packed);
        match merge_word(
            t,
            Word::Packed(packed, len),
            users,
            rest,
            written,
            &mut run.after_unk,
        ) {
            Err(NoRoom::TooLong(needed)) => Err(NoRoom::TooLong(needed.saturating_add(words))),
            other => other,
        }
    }

    /// Merge one already normalized word (at most [`WORD_BUF`] bytes) into `out`, without
    /// the whole-word lookup: how `picobpe-model` finds the pieces that are whole. Not part
    /// of the stable API.
    #[doc(hidden)]
    pub fn merge_normalized(&self, word: &[u8], out: &mut [u32]) -> Result<usize, EncodeError> {
        let t = self.tables;
        let users = t.sections == Sections::Inline && !t.user_defined.is_empty();
        if word.len() > WORD_BUF {
            return Err(EncodeError::PieceTooLong {
                offset: 0,
                len: word.len(),
                needed: usize::MAX,
            });
        }
        let mut after_unk = false;
        match merge_word(t, Word::Flat(word), users, out, 0, &mut after_unk) {
            Ok(n) => Ok(n),
            Err(NoRoom::Full) | Err(NoRoom::TooLong(_)) => Err(EncodeError::PieceTooLong {
                offset: 0,
                len: word.len(),
                needed: 12 * word.len() + 1,
            }),
        }
    }
}
