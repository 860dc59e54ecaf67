//! Streaming encoder and decoder with fixed capacities (no heap).
//!
//! [`StreamEncoder`] takes input in chunks of any size ([`StreamEncoder::push`]) and hands out
//! ids as soon as they are final ([`StreamEncoder::take`]): a piece is encoded only once no
//! later byte can change it (the pre-tokenizer's `NeedMore`, or a possible special-token prefix
//! at the end). After [`StreamEncoder::finish`], `take` drains the rest. The ids equal a one-shot
//! encode of the concatenated input, whatever the chunking and however small the `take` buffers.
//! [`StreamEncoder::with_template`] adds the model's special tokens around them.
//!
//! [`StreamDecoder`] turns ids into bytes and hands out only complete UTF-8: a multi-byte
//! character split across tokens is held until its last byte arrives. Bytes that can never start
//! or continue valid UTF-8 are passed through as they are.

use crate::error::{DecodeError, EncodeError};
use crate::post::Template;
use crate::slice_ops;
use crate::special::Specials;
use crate::tokenize::Cursor;
use crate::tokenize::Tokenize;

/// Why a streaming call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamError {
    /// The pending input cannot be split within the encoder's input capacity `IN`: one piece, or
    /// one whitespace run together with the character after it (the pattern decides a
    /// whitespace piece only where the run ends), is longer than `IN`. Use a larger `IN`.
    InputTooSmall {
        /// The input capacity.
        capacity: usize,
    },
    /// A piece needs more id room than the encoder's `OUT` capacity
    /// ([`crate::bytelevel::scratch_needed`] of its length).
    PieceTooLong {
        /// Length of the piece in bytes.
        len: usize,
        /// `OUT` it needs.
        needed: usize,
    },
    /// `push` after `finish`.
    Finished,
}

impl core::fmt::Display for StreamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            StreamError::InputTooSmall { capacity } => {
                write!(
                    f,
                    "a piece is longer than the stream's {capacity}-byte input buffer"
                )
            }
            StreamError::PieceTooLong { len, needed } => {
                write!(
                    f,
                    "a {len}-byte piece needs an id buffer of at least {needed}"
                )
            }
            StreamError::Finished => write!(f, "input pushed after finish"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for StreamError {}

/// What a streaming encoder keeps between calls: the pending input, the ids encoded but
/// not yet taken (`ids[ids_start..ids_end]`), and the template's ids not yet handed out.
struct Pending<const IN: usize, const OUT: usize> {
    input: heapless::Vec<u8, IN>,
    ids: [u32; OUT],
    ids_start: usize,
    ids_end: usize,
    finished: bool,
    /// The last refill made no progress and no input arrived since: do not rescan.
    stalled: bool,
    /// The ids to add around the text's, and how many of them went out (a `u32`: the C API's
    /// fixed-size stream state has room for no more).
    template: &'static Template<'static>,
    template_sent: u32,
}

impl<const IN: usize, const OUT: usize> Pending<IN, OUT> {
    #[inline(always)]
    fn new() -> Self {
        Pending {
            input: heapless::Vec::new(),
            ids: [0; OUT],
            ids_start: 0,
            ids_end: 0,
            finished: false,
            stalled: false,
            template: &Template::NONE,
            template_sent: 0,
        }
    }

    /// See [`StreamEncoder::push`].
    fn push(&mut self, chunk: &[u8]) -> Result<usize, StreamError> {
        if self.finished {
            return Err(StreamError::Finished);
        }
        let n = chunk.len().min(IN - self.input.len());
        self.stalled &= n == 0;
        // Cannot fail: n fits the remaining capacity.
        let _ = self.input.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
        Ok(n)
    }

    /// See [`StreamEncoder::finish`].
    fn finish(&mut self) {
        self.finished = true;
        self.stalled = false;
    }

    /// See [`StreamEncoder::is_done`].
    fn is_done(&self) -> bool {
        self.finished
            && self.input.is_empty()
            && self.ids_start == self.ids_end
            && self.template_sent as usize >= self.template.len()
    }

    /// See [`StreamEncoder::take`]; `encode` encodes a prefix of the pending input into
    /// the (empty) id buffer and says how far it got.
    fn take(
        &mut self,
        out: &mut [u32],
        mut encode: impl FnMut(&mut Self) -> Result<(usize, usize), EncodeError>,
    ) -> Result<usize, StreamError> {
        let mut n = 0usize;
        while n < out.len() {
            if self.ids_start == self.ids_end {
                match self.refill(&mut encode) {
                    Ok(true) => {}
                    Ok(false) => break,
                    // The ids already in `out` are final: hand them out first. `refill` kept
                    // the input as it was, so the next call meets the same error.
                    Err(_) if n > 0 => break,
                    Err(e) => return Err(e),
                }
            }
            let avail = self.ids.get(self.ids_start..self.ids_end).unwrap_or(&[]);
            let k = slice_ops::copy(out.get_mut(n..).unwrap_or(&mut []), avail);
            n += k;
            self.ids_start += k;
        }
        Ok(n)
    }

    /// Fill the (empty) id buffer: with the template's ids that are due (the prefix first, the
    /// suffix once the text is done), else by encoding more pending input. Returns false if
    /// no progress.
    fn refill(
        &mut self,
        encode: &mut impl FnMut(&mut Self) -> Result<(usize, usize), EncodeError>,
    ) -> Result<bool, StreamError> {
        self.ids_start = 0;
        let text_done = self.finished && self.input.is_empty();
        let due = self.template.due(self.template_sent as usize, text_done);
        self.ids_end = slice_ops::copy(&mut self.ids, due);
        if self.ids_end > 0 {
            self.template_sent = self.template_sent.saturating_add(self.ids_end as u32);
            return Ok(true);
        }
        if self.input.is_empty() || self.stalled {
            return Ok(false);
        }
        let (consumed, written) = match encode(self) {
            Ok(p) => p,
            Err(EncodeError::OutputFull { consumed, written }) => (consumed, written),
            Err(EncodeError::PieceTooLong { len, needed, .. }) => {
                return Err(StreamError::PieceTooLong { len, needed });
            }
        };
        if consumed == 0 && self.input.len() == IN {
            return Err(StreamError::InputTooSmall { capacity: IN });
        }
        // Drop the consumed bytes (shift the rest to the front).
        let kept = slice_ops::move_to_front(&mut self.input, consumed);
        self.input.truncate(kept);
        self.ids_end = written;
        let progressed = consumed > 0 || written > 0;
        self.stalled = !progressed;
        Ok(progressed)
    }
}

/// Streaming encoder holding at most `IN` pending input bytes and `OUT` pending ids, for any
/// family ([`Tokenize`]). `OUT` must hold the work area of the longest piece or word (see
/// [`EncodeError::PieceTooLong`]).
pub struct StreamEncoder<T: Tokenize, const IN: usize, const OUT: usize> {
    tok: T,
    specials: Specials,
    pending: Pending<IN, OUT>,
    /// No id has been written yet: the text has not started (a SentencePiece normalizer's
    /// start-of-text rules still apply).
    at_start: bool,
    /// What the next piece carries (a Unigram model's running score).
    cursor: Cursor,
}

impl<T: Tokenize, const IN: usize, const OUT: usize> StreamEncoder<T, IN, OUT> {
    /// A new stream recognizing `specials` (SentencePiece models ignore it).
    #[inline(always)]
    pub fn new(tok: T, specials: Specials) -> Self {
        StreamEncoder {
            tok,
            specials,
            pending: Pending::new(),
            at_start: true,
            cursor: Cursor::START,
        }
    }

    /// Add `template`'s ids around the text's (`tokenizers`' `add_special_tokens=True`): the
    /// prefix before the first id, the suffix after the last, through `take` like any id (a
    /// full `out` loses none). Call before the first `take`. The template is borrowed for the
    /// program's life, as tables baked into flash or read by `picobpe_model` are.
    pub fn with_template(mut self, template: &'static Template<'static>) -> Self {
        self.pending.template = template;
        self
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

    /// True when all input was pushed, finished, and every id (the template's too) taken.
    pub fn is_done(&self) -> bool {
        self.pending.is_done()
    }

    /// Move finished ids into `out`; returns how many. Returns 0 when nothing more can be done
    /// until more input is pushed (or, after `finish`, when the stream is done). An error
    /// comes only from a call that moved no ids (ids before it are returned first).
    pub fn take(&mut self, out: &mut [u32]) -> Result<usize, StreamError> {
        let (tok, specials) = (self.tok, self.specials);
        let (at_start, cursor) = (&mut self.at_start, &mut self.cursor);
        self.pending.take(out, |p| {
            let r = tok.encode_part(
                &p.input,
                *at_start,
                p.finished,
                cursor,
                &mut p.ids,
                specials,
                &mut [],
            );
            let (consumed, written) = match r {
                Ok(p) => (p.consumed, p.written),
                Err(EncodeError::OutputFull { consumed, written }) => (consumed, written),
                Err(e) => return Err(e),
            };
            *at_start &= written == 0;
            Ok((consumed, written))
        })
    }
}

/// Streaming decoder holding at most `N` pending bytes, for any family ([`Tokenize`]). `N`
/// must hold the longest token's text plus what a family holds back
/// ([`Tokenize::stream_room`]): 256 covers the GPT-2, cl100k, o200k, SentencePiece and BERT
/// vocabularies.
pub struct StreamDecoder<T: Tokenize, const N: usize> {
    tok: T,
    state: T::DecodeState,
    pending: heapless::Vec<u8, N>,
    position: usize,
    finished: bool,
}

impl<T: Tokenize, const N: usize> StreamDecoder<T, N> {
    /// A new decoder.
    pub fn new(tok: T) -> Self {
        StreamDecoder {
            tok,
            state: tok.decode_start(),
            pending: heapless::Vec::new(),
            position: 0,
            finished: false,
        }
    }

    /// Append the text of `id`. Fails on an unknown id (position counted from the start of the
    /// stream), or with `OutputFull` when the pending buffer has no room: `take` first.
    pub fn push(&mut self, id: u32) -> Result<(), DecodeError> {
        self.tok
            .decode_push(id, &mut self.state, &mut self.pending)
            .map_err(|e| e.shifted(self.position))?;
        self.position += 1;
        Ok(())
    }

    /// No more ids: `take` may now hand out a trailing incomplete UTF-8 sequence too (or its
    /// U+FFFD, as the family decodes it).
    pub fn finish(&mut self) {
        self.tok.decode_finish(&mut self.state, &mut self.pending);
        self.finished = true;
    }

    /// Move pending bytes that form complete UTF-8 (or can never become valid) into `out`;
    /// returns how many. A character is never split across two `take` calls, so `out` needs
    /// room for at least 4 bytes to guarantee progress.
    pub fn take(&mut self, out: &mut [u8]) -> usize {
        let ready = if self.finished {
            self.pending.len()
        } else {
            complete_prefix(&self.pending)
        };
        let mut k = ready.min(out.len());
        if k < ready {
            // `out` ends inside the ready bytes: cut back to a character boundary.
            k = complete_prefix(self.pending.get(..k).unwrap_or(&[]));
        }
        let k = slice_ops::copy(out, self.pending.get(..k).unwrap_or(&[]));
        let kept = slice_ops::move_to_front(&mut self.pending, k);
        self.pending.truncate(kept);
        k
    }
}

/// Length of the longest prefix of `b` that does not end inside an incomplete (but so far
/// valid) UTF-8 sequence: everything except a trailing 1–3 byte prefix of a multi-byte character.
fn complete_prefix(b: &[u8]) -> usize {
    let len = b.len();
    // Look back at most 3 bytes for the lead byte of the last sequence.
    for back in 1..=3.min(len) {
        let i = len - back;
        let Some(&lead) = b.get(i) else { break };
        if lead & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for the lead
        }
        let need = match lead {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return len, // ASCII or invalid lead: nothing to hold
        };
        if back >= need {
            return len;
        }
        // Hold only if the bytes so far are a valid prefix of a sequence.
        let tail = b.get(i..).unwrap_or(&[]);
        return if is_valid_prefix(tail) { i } else { len };
    }
    len
}

/// True when `t` (lead byte plus 0–2 continuation bytes) can still become valid UTF-8 (the
/// caller has checked that the lead byte starts a sequence longer than `t`).
pub(crate) fn is_valid_prefix(t: &[u8]) -> bool {
    let Some((&lead, rest)) = t.split_first() else {
        return false;
    };
    let second_ok = |b: u8| match lead {
        0xE0 => (0xA0..=0xBF).contains(&b),
        0xED => (0x80..=0x9F).contains(&b),
        0xF0 => (0x90..=0xBF).contains(&b),
        0xF4 => (0x80..=0x8F).contains(&b),
        _ => (0x80..=0xBF).contains(&b),
    };
    match rest {
        [] => true,
        [a] => second_ok(*a),
        [a, b] => second_ok(*a) && (0x80..=0xBF).contains(b),
        _ => false,
    }
}
