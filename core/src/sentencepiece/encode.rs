//! The SentencePiece BPE encoder: normalize, split into words, merge by score, fall back to
//! bytes.
//!
//! Within a word, SentencePiece starts from one symbol per character (a user-defined symbol
//! matched in the text is one symbol that never merges) and repeatedly merges the adjacent
//! pair whose concatenation is a piece with the highest score, the leftmost on a tie. A
//! symbol left that is not a piece becomes its bytes' `<0xHH>` pieces (byte fallback) or
//! `<unk>`.
//!
//! The symbols live in the caller's output buffer, at its far end: four `u32` per symbol
//! (start, next, previous, and the priority of the pair the symbol starts), while the ids are
//! written at the front. Each merge re-scores only the two pairs it changes (two table
//! lookups) and then scans the live symbols for the best pair, so a word of `n` symbols costs
//! `O(n)` lookups and `O(n · merges)` integer compares; words are short in natural text.
//! A word that needs more room than the whole buffer is [`EncodeError::PieceTooLong`].

use super::normalize::{char_at, Char, Normalizer, SPACE_MARK};
use super::tables::{PieceKind, Sections, SpTables, MAX_PIECE_BYTES};
use crate::error::EncodeError;

/// Marks a symbol that never merges (a user-defined symbol) in its start entry.
const FROZEN: u32 = 1 << 31;
/// No previous symbol.
const NONE: u32 = u32::MAX;

/// A SentencePiece BPE tokenizer over a set of tables. Cheap to copy; holds no mutable state.
#[derive(Clone, Copy, Debug)]
pub struct SpTokenizer<'t> {
    tables: &'t SpTables<'t>,
}

/// Why a word could not be encoded into the room left.
enum NoRoom {
    /// Not in the free part of the buffer: drain and resume.
    Full,
    /// Not even in an empty buffer of this length: this many `u32` are needed.
    TooLong(usize),
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
        let t = self.tables;
        let from = from.min(text.len());
        if t.sections != Sections::Inline {
            return self.encode_sections(text, from, out);
        }
        let norm = Normalizer {
            text,
            remove_extra: t.remove_extra_whitespaces,
        };
        let mut pos = from;
        let at_start = pos == 0;
        if at_start && t.remove_extra_whitespaces {
            while text.get(pos) == Some(&b' ') {
                pos += 1;
            }
        }
        let end = norm.end(pos);
        let prefix = at_start && t.add_dummy_prefix;
        let mut after_unk = false;
        self.encode_words(&norm, pos, end, prefix, out, 0, &mut after_unk)
    }

    /// [`SpTokenizer::encode_from`] for tables imported from a `tokenizer.json`: the text is
    /// cut at user-defined symbols first, and each piece of text between them is normalized
    /// and encoded on its own, as Hugging Face `tokenizers` does with added tokens.
    fn encode_sections(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
    ) -> Result<usize, EncodeError> {
        let t = self.tables;
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
        let mut after_unk = false;
        loop {
            let next = self.next_user_symbol(text, pos, text.len());
            let end = next.map_or(text.len(), |(at, _, _)| at);
            let prefix = pos == section
                && pos < end
                && match t.sections {
                    Sections::EveryPiecePrefixed => true,
                    _ => section == 0 && t.add_dummy_prefix,
                };
            written = self.encode_words(&norm, pos, end, prefix, out, written, &mut after_unk)?;
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
            after_unk = false;
            pos = at + len;
            section = pos;
        }
    }

    /// The first user-defined symbol that starts in `text[from..limit]` and ends by `limit`
    /// (the longest at that position): its offset, length and id.
    fn next_user_symbol(
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
    /// after a virtual `▁` when `prefix`); returns the new number of ids written.
    #[allow(clippy::too_many_arguments)]
    fn encode_words(
        &self,
        norm: &Normalizer<'_>,
        mut pos: usize,
        end: usize,
        mut prefix: bool,
        out: &mut [u32],
        mut written: usize,
        after_unk: &mut bool,
    ) -> Result<usize, EncodeError> {
        while pos < end {
            let word_end = if self.tables.split_words {
                norm.word_end(pos, end)
            } else {
                end
            };
            match self.encode_word(norm, pos, word_end, prefix, out, written, after_unk) {
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
        Ok(written)
    }

    /// Encode a `&str` (see [`SpTokenizer::encode`]).
    pub fn encode_str(&self, text: &str, out: &mut [u32]) -> Result<usize, EncodeError> {
        self.encode(text.as_bytes(), out)
    }

    /// Count the ids `text` encodes to, using `scratch` as the work area (it is overwritten;
    /// any length works as long as each word fits — see [`EncodeError::PieceTooLong`]).
    pub fn count(&self, text: &[u8], scratch: &mut [u32]) -> Result<usize, EncodeError> {
        let mut total = 0usize;
        let mut from = 0usize;
        loop {
            match self.encode_from(text, from, scratch) {
                Ok(n) => return Ok(total + n),
                Err(EncodeError::OutputFull { consumed, written })
                    if consumed > from || written > 0 =>
                {
                    total += written;
                    from = consumed;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The longest user-defined symbol at `text[pos..limit]`, as its length (0: none).
    #[inline]
    fn user_symbol_at(&self, text: &[u8], pos: usize, limit: usize) -> usize {
        let mut best = 0;
        for &id in self.tables.user_defined {
            let Some(sym) = self.tables.piece_bytes(id) else {
                continue;
            };
            if sym.len() > best
                && text
                    .get(pos..limit)
                    .is_some_and(|rest| rest.starts_with(sym))
            {
                best = sym.len();
            }
        }
        best
    }

    /// Call `f(start, frozen)` for each initial symbol of the word `text[start..end]` (after
    /// the virtual `▁` when `prefix`, which starts at `start` and is empty in the text).
    #[inline]
    fn for_each_symbol(
        &self,
        norm: &Normalizer<'_>,
        start: usize,
        end: usize,
        prefix: bool,
        mut f: impl FnMut(usize, bool),
    ) {
        if prefix {
            f(start, false);
        }
        let users =
            !self.tables.user_defined.is_empty() && self.tables.sections == Sections::Inline;
        let mut pos = start;
        while pos < end {
            let (c, len) = char_at(norm.text, pos);
            if c == Char::Space && norm.dropped(pos) {
                // Adds nothing: it stays in the range of the symbol before it.
                pos += 1;
                continue;
            }
            if users && c == Char::Other {
                let ulen = self.user_symbol_at(norm.text, pos, end);
                if ulen > 0 {
                    f(pos, true);
                    pos += ulen;
                    continue;
                }
            }
            f(pos, false);
            pos += len.max(1);
        }
    }

    /// Encode one word into `out[written..]`; returns the number of ids written.
    #[allow(clippy::too_many_arguments)]
    fn encode_word(
        &self,
        norm: &Normalizer<'_>,
        start: usize,
        end: usize,
        prefix: bool,
        out: &mut [u32],
        written: usize,
        after_unk: &mut bool,
    ) -> Result<usize, NoRoom> {
        let t = self.tables;
        let mut n = 0usize;
        self.for_each_symbol(norm, start, end, prefix, |_, _| n += 1);
        if n == 0 {
            return Ok(0);
        }
        // Each symbol becomes one id, or with byte fallback at most its normalized bytes.
        let max_ids = if t.byte_fallback() {
            norm.normalized_len(start, end) + if prefix { SPACE_MARK.len() } else { 0 }
        } else {
            n
        };
        let scratch = 4 * n + 1;
        let needed = max_ids + scratch;
        if needed > out.len() || end - start >= FROZEN as usize {
            return Err(NoRoom::TooLong(needed));
        }
        if written + needed > out.len() {
            return Err(NoRoom::Full);
        }
        let (front, tail) = out.split_at_mut(out.len() - scratch);
        let (starts, rest) = tail.split_at_mut(n + 1);
        let (next, rest) = rest.split_at_mut(n);
        let (prev, best) = rest.split_at_mut(n);
        let word = Word {
            norm,
            tables: t,
            base: start,
            prefix,
            starts,
        };
        let mut k = 0usize;
        self.for_each_symbol(norm, start, end, prefix, |pos, frozen| {
            let rel = (pos - start) as u32;
            set(word.starts, k, if frozen { rel | FROZEN } else { rel });
            k += 1;
        });
        set(word.starts, n, (end - start) as u32);
        for i in 0..n {
            set(next, i, i as u32 + 1);
            set(prev, i, if i == 0 { NONE } else { i as u32 - 1 });
        }
        for i in 0..n {
            let p = word.pair_priority(i, at(next, i) as usize, next);
            set(best, i, p);
        }
        // Merge the best pair until none is left.
        loop {
            let mut top = 0u32;
            let mut arg = usize::MAX;
            let mut i = 0usize;
            while i < n {
                let p = at(best, i);
                if p > top {
                    top = p;
                    arg = i;
                }
                i = at(next, i) as usize;
            }
            if arg == usize::MAX {
                break;
            }
            let right = at(next, arg) as usize;
            let after = at(next, right);
            set(next, arg, after);
            if (after as usize) < n {
                set(prev, after as usize, arg as u32);
            }
            let p = word.pair_priority(arg, after as usize, next);
            set(best, arg, p);
            let before = at(prev, arg);
            if before != NONE {
                let p = word.pair_priority(before as usize, arg, next);
                set(best, before as usize, p);
            }
        }
        // Emit the symbols' ids.
        let out = front.get_mut(written..).unwrap_or(&mut []);
        let mut w = 0usize;
        let mut buf = [0u8; MAX_PIECE_BYTES];
        let mut i = 0usize;
        while i < n {
            let j = at(next, i) as usize;
            let id = match word.bytes(i, j, &mut buf) {
                Some(len) => {
                    let bytes = buf.get(..len).unwrap_or(&[]);
                    match t.piece_id(bytes) {
                        Some(id) if t.kind(id) != Some(PieceKind::Unknown) => Some(id),
                        _ if t.byte_fallback() => {
                            for &b in bytes {
                                push(
                                    out,
                                    &mut w,
                                    t.byte_ids.get(b as usize).copied().unwrap_or(t.unk_id),
                                );
                            }
                            None
                        }
                        _ => Some(t.unk_id),
                    }
                }
                None => Some(t.unk_id),
            };
            match id {
                // A run of unknown symbols is one `<unk>` (only without byte fallback).
                Some(id) if id == t.unk_id && *after_unk => {}
                Some(id) => {
                    push(out, &mut w, id);
                    *after_unk = id == t.unk_id;
                }
                None => *after_unk = false,
            }
            i = j;
        }
        Ok(w)
    }
}

/// One word's symbols and how to read their bytes.
struct Word<'a, 'n> {
    norm: &'a Normalizer<'n>,
    tables: &'a SpTables<'a>,
    /// The word's offset in the text.
    base: usize,
    /// The word starts with the virtual `▁` (symbol 0, empty in the text).
    prefix: bool,
    /// Start of each initial symbol relative to `base` ([`FROZEN`] marked), then the end.
    starts: &'a mut [u32],
}

impl Word<'_, '_> {
    /// Normalized bytes of the symbols from `i` up to (not including) `j` into `buf`; their
    /// length, or `None` when longer than `buf`.
    #[inline]
    fn bytes(&self, i: usize, j: usize, buf: &mut [u8]) -> Option<usize> {
        let mut at = 0;
        if i == 0 && self.prefix {
            let dst = buf.get_mut(..SPACE_MARK.len())?;
            for (d, s) in dst.iter_mut().zip(SPACE_MARK) {
                *d = s;
            }
            at = SPACE_MARK.len();
        }
        let from = self.base + (self.starts.get(i)? & !FROZEN) as usize;
        let to = self.base + (self.starts.get(j)? & !FROZEN) as usize;
        self.norm.write_range(from, to, buf, at)
    }

    /// The priority of merging symbol `i` with the symbol `j` after it (0: no merge).
    #[inline]
    fn pair_priority(&self, i: usize, j: usize, next: &[u32]) -> u32 {
        let (Some(&si), Some(&sj)) = (self.starts.get(i), self.starts.get(j)) else {
            return 0;
        };
        if (si | sj) & FROZEN != 0 {
            return 0;
        }
        let Some(&after) = next.get(j) else {
            return 0;
        };
        let mut buf = [0u8; MAX_PIECE_BYTES];
        match self.bytes(i, after as usize, &mut buf) {
            Some(len) => self.tables.merge_priority(buf.get(..len).unwrap_or(&[])),
            None => 0,
        }
    }
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
