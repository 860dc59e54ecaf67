//! Streaming SentencePiece encoder and decoder with fixed capacities (no heap), the
//! counterparts of [`crate::StreamEncoder`] and [`crate::StreamDecoder`].
//!
//! [`SpStreamEncoder`] encodes a word once the next word has started (a `▁` after another
//! character), so its ids never change with later input; the ids equal a one-shot
//! [`SpTokenizer::encode`] of the concatenated input, whatever the chunking. Tables that
//! cannot encode words apart (see [`SpTokenizer::encode_part`]) hold the whole input until
//! [`SpStreamEncoder::finish`].
//!
//! [`SpStreamDecoder`] renders ids as `DecodeIds` does and hands out whole characters only;
//! a run of byte pieces is held until it forms a character (or cannot).

use super::decode::{byte_of_piece, piece_surface};
use super::encode::SpTokenizer;
use super::normalize::{char_at, Char, REPLACEMENT, SPACE_MARK};
use super::tables::PieceKind;
use super::unigram::SpCursor;
use crate::error::{DecodeError, EncodeError};
use crate::slice_ops;
use crate::stream::{is_valid_prefix, Pending, StreamError};

/// Streaming SentencePiece encoder holding at most `IN` pending input bytes and `OUT` pending
/// ids (`OUT` must hold the work area of the longest word: see
/// [`EncodeError::PieceTooLong`]).
pub struct SpStreamEncoder<'t, const IN: usize, const OUT: usize> {
    tok: SpTokenizer<'t>,
    pending: Pending<IN, OUT>,
    /// No word has been encoded yet: the normalizer's start-of-text rules still apply.
    at_start: bool,
    /// What the next word start carries (a Unigram model's running score).
    cursor: SpCursor,
}

impl<'t, const IN: usize, const OUT: usize> SpStreamEncoder<'t, IN, OUT> {
    /// A new stream.
    pub fn new(tok: SpTokenizer<'t>) -> Self {
        SpStreamEncoder {
            tok,
            pending: Pending::new(),
            at_start: true,
            cursor: SpCursor::START,
        }
    }

    /// Copy as much of `chunk` as fits into the pending input; returns the bytes accepted
    /// (fewer than `chunk.len()` when the buffer is full: `take` ids, then push the rest).
    pub fn push(&mut self, chunk: &[u8]) -> Result<usize, StreamError> {
        self.pending.push(chunk)
    }

    /// Mark the end of the input; `take` then drains everything.
    pub fn finish(&mut self) {
        self.pending.finish();
    }

    /// True when all input was pushed, finished, and every id taken.
    pub fn is_done(&self) -> bool {
        self.pending.is_done()
    }

    /// Move finished ids into `out`; returns how many. Returns 0 when nothing more can be done
    /// until more input is pushed (or, after `finish`, when the stream is done). An error
    /// comes only from a call that moved no ids (ids before it are returned first).
    pub fn take(&mut self, out: &mut [u32]) -> Result<usize, StreamError> {
        let (tok, at_start, cursor) = (self.tok, &mut self.at_start, &mut self.cursor);
        self.pending.take(out, |p| {
            let r = tok.unigram_part(&p.input, *at_start, p.finished, &mut p.ids, cursor);
            // Until a word is written, the text has not started (leading spaces may be
            // dropped).
            match r {
                Ok(p) => {
                    *at_start &= p.written == 0;
                    Ok((p.consumed, p.written))
                }
                Err(EncodeError::OutputFull { consumed, written }) => {
                    *at_start &= written == 0;
                    Err(EncodeError::OutputFull { consumed, written })
                }
                Err(e) => Err(e),
            }
        })
    }
}

/// Streaming SentencePiece decoder holding at most `N` pending bytes (`N` must hold the
/// longest piece's text: 128 bytes, or the unknown surface when longer).
pub struct SpStreamDecoder<'t, const N: usize> {
    tok: SpTokenizer<'t>,
    pending: heapless::Vec<u8, N>,
    /// Bytes of byte pieces not yet forming a character.
    bytes: heapless::Vec<u8, 4>,
    position: usize,
    bos: bool,
    wrote: bool,
    gave_up_mark: bool,
    finished: bool,
}

impl<'t, const N: usize> SpStreamDecoder<'t, N> {
    /// A new decoder.
    pub fn new(tok: SpTokenizer<'t>) -> Self {
        SpStreamDecoder {
            tok,
            pending: heapless::Vec::new(),
            bytes: heapless::Vec::new(),
            position: 0,
            bos: true,
            wrote: false,
            gave_up_mark: false,
            finished: false,
        }
    }

    /// Append the text of `id`. Fails on an unknown id (position counted from the start of
    /// the stream), or with `OutputFull` when the pending buffer has no room: `take` first.
    pub fn push(&mut self, id: u32) -> Result<(), DecodeError> {
        let t = self.tok.tables();
        let kind = t.kind(id);
        let Some(piece) = t.piece_bytes(id).filter(|_| kind.is_some()) else {
            return Err(DecodeError::UnknownId {
                position: self.position,
                id,
                written: 0,
            });
        };
        let full = DecodeError::OutputFull {
            consumed: self.position,
            written: 0,
        };
        if kind == Some(PieceKind::Byte) {
            // Room for what the held bytes and this one can become: up to four U+FFFD.
            if self.pending.len() + 3 * (self.bytes.len() + 1) > N {
                return Err(full);
            }
            let byte = byte_of_piece(piece).unwrap_or(0);
            let _ = self.bytes.push(byte);
            self.drain_bytes(false);
            self.wrote = true;
            self.position += 1;
            return Ok(());
        }
        if self.pending.len() + 3 * self.bytes.len() + piece.len().max(t.unk_surface.len()) > N {
            return Err(full);
        }
        self.drain_bytes(true);
        if self.gave_up_mark || self.wrote {
            self.bos = false;
        }
        let (text, skip, gave_up) = piece_surface(t, kind, piece, self.bos);
        let mut rest = text.get(skip..).unwrap_or(&[]);
        let wrote = !rest.is_empty();
        if kind == Some(PieceKind::Unknown) {
            let _ = self.pending.extend_from_slice(rest);
        } else {
            // A piece's text, `▁` as a space.
            while let Some((&b, tail)) = rest.split_first() {
                if rest.starts_with(&SPACE_MARK) {
                    let _ = self.pending.push(b' ');
                    rest = rest.get(SPACE_MARK.len()..).unwrap_or(&[]);
                } else {
                    let _ = self.pending.push(b);
                    rest = tail;
                }
            }
        }
        self.wrote |= wrote;
        self.gave_up_mark = gave_up;
        self.position += 1;
        Ok(())
    }

    /// No more ids: held bytes of an unfinished character become U+FFFD.
    pub fn finish(&mut self) {
        self.drain_bytes(true);
        self.finished = true;
    }

    /// Move pending whole characters into `out`; returns how many bytes. `out` needs room for
    /// at least 4 bytes to guarantee progress.
    pub fn take(&mut self, out: &mut [u8]) -> usize {
        let mut k = self.pending.len().min(out.len());
        // The pending text is well-formed UTF-8: cut back to a character boundary.
        while k > 0
            && k < self.pending.len()
            && self.pending.get(k).is_some_and(|&b| b & 0xC0 == 0x80)
        {
            k -= 1;
        }
        let k = slice_ops::copy(out, self.pending.get(..k).unwrap_or(&[]));
        let kept = slice_ops::move_to_front(&mut self.pending, k);
        self.pending.truncate(kept);
        k
    }

    /// Turn held bytes into text: each character they form, or U+FFFD for a byte that
    /// cannot start or continue one. Without `all`, a prefix that can still become a
    /// character is kept.
    fn drain_bytes(&mut self, all: bool) {
        while !self.bytes.is_empty() {
            let mut window = [0xFFu8; 4];
            for (d, s) in window.iter_mut().zip(self.bytes.iter()) {
                *d = *s;
            }
            let (c, len) = char_at(&window, 0);
            if !all && c == Char::Invalid && could_continue(&self.bytes) {
                return;
            }
            let len = if c == Char::Invalid { 1 } else { len };
            if c == Char::Invalid {
                let _ = self.pending.extend_from_slice(&REPLACEMENT);
            } else {
                let _ = self
                    .pending
                    .extend_from_slice(window.get(..len).unwrap_or(&[]));
            }
            let kept = slice_ops::move_to_front(&mut self.bytes, len);
            self.bytes.truncate(kept);
        }
    }
}

/// True when `b` is a proper prefix of some well-formed UTF-8 character.
fn could_continue(b: &[u8]) -> bool {
    let need = match b.first() {
        Some(0xC2..=0xDF) => 2,
        Some(0xE0..=0xEF) => 3,
        Some(0xF0..=0xF4) => 4,
        _ => return false,
    };
    b.len() < need && is_valid_prefix(b)
}
