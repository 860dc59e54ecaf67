//! The SentencePiece decoder: ids to text, as SentencePiece's `DecodeIds` renders it.
//!
//! - A normal or user-defined piece is its text with `▁` turned into a space; the first one
//!   loses one leading `▁` (the dummy prefix) while nothing has been written yet or the
//!   piece before it gave up such a `▁` (with `remove_extra_whitespaces`, every leading `▁`
//!   goes while nothing has been written).
//! - With [`SpTables::joins_pieces`] (a `tokenizer.json` with no decoder), as `tokenizers`
//!   renders that: each piece as it is, a space between two.
//! - With a `Metaspace` decoder (a `tokenizer.json` whose `Metaspace` prepends, see
//!   [`SpTables::metaspace_decoder`]), as `tokenizers` 0.22 renders it instead: the first id's
//!   piece loses every `▁`, and no other piece loses any.
//! - A control piece (`<s>`, `</s>`) is nothing; the unknown piece is the unknown surface.
//! - A run of byte pieces is its bytes, where each byte that is not part of well-formed UTF-8
//!   becomes U+FFFD.
//!
//! A run of byte pieces is written whole or not at all, so [`DecodeError::OutputFull`] stops
//! before a run or a piece; [`SpTokenizer::decode_from`] resumes there.

use super::encode::SpTokenizer;
use super::normalize::{char_at, Char, REPLACEMENT, SPACE_MARK};
use super::tables::{PieceKind, SpTables};
use crate::error::DecodeError;
use crate::slice_ops;
use crate::tokenize::{append, no_room, unknown};
use crate::utf8;

/// What decides whether the next piece loses its leading `▁` (SentencePiece's `is_bos_ws`).
#[derive(Clone, Copy, Debug)]
struct State {
    /// Still at the start: nothing written yet, and no piece gave up a leading `▁`. Once
    /// false, it stays false.
    bos: bool,
    /// Something has been written.
    wrote: bool,
    /// The last non-byte piece gave up a leading `▁`.
    gave_up_mark: bool,
    /// An id has been decoded (the first one loses its `▁`s under a `Metaspace` decoder).
    seen: bool,
}

impl<'t> SpTokenizer<'t> {
    /// Decode `ids` into `out`, returning the number of bytes written: the UTF-8 of
    /// SentencePiece's `DecodeIds`.
    pub fn decode(&self, ids: &[u32], out: &mut [u8]) -> Result<usize, DecodeError> {
        self.decode_from(ids, 0, out)
    }

    /// Decode `ids[from..]`, where `from` is 0 or a `consumed` count returned by an earlier
    /// call on the same ids (the ids before it decide whether a leading `▁` is dropped).
    /// Positions in errors are indexes into `ids`.
    pub fn decode_from(
        &self,
        ids: &[u32],
        from: usize,
        out: &mut [u8],
    ) -> Result<usize, DecodeError> {
        let t = self.tables();
        if t.joins_pieces {
            return decode_joined(t, ids, from, out);
        }
        let mut state = State {
            bos: true,
            wrote: false,
            gave_up_mark: false,
            seen: false,
        };
        let mut written = 0usize;
        let mut i = 0usize;
        while i < ids.len() {
            if i < from && !state.bos {
                // Only the dummy-prefix state depends on the ids before `from`, and it is
                // settled: skip to `from` (a character boundary, as an earlier call returned).
                i = from;
                continue;
            }
            let emit = i >= from;
            let id = ids.get(i).copied().unwrap_or(0);
            let kind = t.kind(id);
            let Some(piece) = t.piece_bytes(id).filter(|_| kind.is_some()) else {
                return Err(DecodeError::UnknownId {
                    position: i,
                    id,
                    written,
                });
            };
            if kind == Some(PieceKind::Byte) {
                // One character of a run of byte pieces (the run is read greedily from its
                // start, so resuming at any character boundary reads it the same way).
                let (bytes, len) = byte_char(t, ids, i);
                if emit {
                    let dst = out.get_mut(written..).unwrap_or(&mut []);
                    match write_raw(bytes.get(..len.1).unwrap_or(&[]), dst) {
                        Some(n) => written += n,
                        None => {
                            return Err(DecodeError::OutputFull {
                                consumed: i,
                                written,
                            })
                        }
                    }
                }
                state.wrote = true;
                i += len.0;
                continue;
            }
            if state.gave_up_mark || state.wrote {
                state.bos = false;
            }
            let (text, skip, gave_up) = piece_surface(t, kind, piece, state.bos);
            let drop_marks = t.metaspace_decoder() && i == 0;
            if emit {
                let dst = out.get_mut(written..).unwrap_or(&mut []);
                let wrote = if kind == Some(PieceKind::Unknown) {
                    write_raw(text, dst)
                } else {
                    write_surface(text, skip, drop_marks, dst)
                };
                match wrote {
                    Some(n) => written += n,
                    None => {
                        return Err(DecodeError::OutputFull {
                            consumed: i,
                            written,
                        })
                    }
                }
            }
            state.wrote |= text.len() > skip && !drop_marks;
            state.gave_up_mark = gave_up;
            i += 1;
        }
        Ok(written)
    }
}

/// [`SpTokenizer::decode_from`] for tables that join pieces ([`SpTables::joins_pieces`]):
/// each piece as it is, a space before each but the first id's. Nothing before `from`
/// changes what an id writes, so a call may resume at any id.
fn decode_joined(
    t: &SpTables<'_>,
    ids: &[u32],
    from: usize,
    out: &mut [u8],
) -> Result<usize, DecodeError> {
    let mut written = 0usize;
    for (i, &id) in ids.iter().enumerate().skip(from) {
        let Some(piece) = t.piece_bytes(id).filter(|_| t.kind(id).is_some()) else {
            return Err(DecodeError::UnknownId {
                position: i,
                id,
                written,
            });
        };
        let space: &[u8] = if i > 0 { b" " } else { b"" };
        let dst = out.get_mut(written..).unwrap_or(&mut []);
        let fits = dst.len() >= space.len() + piece.len();
        match (fits, dst.split_at_mut_checked(space.len())) {
            (true, Some((head, tail))) => {
                slice_ops::copy(head, space);
                slice_ops::copy(tail, piece);
                written += space.len() + piece.len();
            }
            _ => {
                return Err(DecodeError::OutputFull {
                    consumed: i,
                    written,
                })
            }
        }
    }
    Ok(written)
}

/// A non-byte piece's text, how many of its leading bytes are dropped, and whether it gave up
/// a leading `▁` (which ends the dummy-prefix window).
pub(crate) fn piece_surface<'a>(
    t: &SpTables<'a>,
    kind: Option<PieceKind>,
    piece: &'a [u8],
    bos: bool,
) -> (&'a [u8], usize, bool) {
    match kind {
        Some(PieceKind::Control) => (&[], 0, false),
        Some(PieceKind::Unknown) => (t.unk_surface, 0, false),
        _ if t.metaspace_decoder() => (piece, 0, false),
        _ => {
            let strips = bos
                && (t.add_dummy_prefix || t.remove_extra_whitespaces)
                && piece.starts_with(&SPACE_MARK);
            let skip = if strips { SPACE_MARK.len() } else { 0 };
            (piece, skip, strips && !t.remove_extra_whitespaces)
        }
    }
}

/// Write `bytes` as they are; `None` when they do not fit.
fn write_raw(bytes: &[u8], out: &mut [u8]) -> Option<usize> {
    let dst = out.get_mut(..bytes.len())?;
    for (d, s) in dst.iter_mut().zip(bytes) {
        *d = *s;
    }
    Some(bytes.len())
}

/// Write a piece's `text[skip..]` with `▁` as a space (as nothing with `drop_marks`); `None`
/// when it does not fit.
fn write_surface(text: &[u8], skip: usize, drop_marks: bool, out: &mut [u8]) -> Option<usize> {
    let mut w = 0usize;
    let mut pos = skip;
    while pos < text.len() {
        if text.get(pos..pos + 3) == Some(&SPACE_MARK[..]) {
            if !drop_marks {
                *out.get_mut(w)? = b' ';
                w += 1;
            }
            pos += 3;
        } else {
            *out.get_mut(w)? = *text.get(pos)?;
            w += 1;
            pos += 1;
        }
    }
    Some(w)
}

/// The text of the character that starts at the byte piece `ids[i]`, read from up to four
/// byte pieces: its bytes when they are well-formed UTF-8, else U+FFFD for the one byte; with
/// (ids used, bytes of text).
fn byte_char(t: &SpTables<'_>, ids: &[u32], i: usize) -> ([u8; 4], (usize, usize)) {
    // Past the run the window holds 0xFF, which no character continues with, so a character
    // cut off by the end of the run reads as malformed.
    let mut window = [0xFFu8; 4];
    for (o, d) in window.iter_mut().enumerate() {
        match ids.get(i + o) {
            Some(&id) if t.kind(id) == Some(PieceKind::Byte) => {
                *d = piece_byte(t, id).unwrap_or(0xFF);
            }
            _ => break,
        }
    }
    match char_at(&window, 0) {
        (Char::Invalid, _) => {
            let [a, b, c] = REPLACEMENT;
            ([a, b, c, 0], (1, 3))
        }
        (_, len) => (window, (len, len)),
    }
}

/// The byte a `<0xHH>` piece stands for.
fn piece_byte(t: &SpTables<'_>, id: u32) -> Option<u8> {
    byte_of_piece(t.piece_bytes(id)?)
}

/// The byte the text of a `<0xHH>` piece stands for.
pub(crate) fn byte_of_piece(piece: &[u8]) -> Option<u8> {
    match piece {
        [b'<', b'0', b'x', hi, lo, b'>'] => Some(hex(*hi)? << 4 | hex(*lo)?),
        _ => None,
    }
}

fn hex(d: u8) -> Option<u8> {
    match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'A'..=b'F' => Some(d - b'A' + 10),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    }
}

/// A streaming decoder's state for a SentencePiece model ([`crate::StreamDecoder`]): the
/// dummy-prefix state, and the bytes of byte pieces that do not form a character yet.
#[derive(Clone, Debug)]
pub struct SpDecodeState {
    state: State,
    /// Bytes of byte pieces not yet forming a character.
    bytes: heapless::Vec<u8, 4>,
}

impl SpDecodeState {
    /// The start of a sequence.
    pub(crate) const START: SpDecodeState = SpDecodeState {
        state: State {
            bos: true,
            wrote: false,
            gave_up_mark: false,
            seen: false,
        },
        bytes: heapless::Vec::new(),
    };

    /// Append the text of `id` to `pending` (see [`crate::Tokenize::decode_push`]): its
    /// surface as `DecodeIds` renders it, `▁` as a space; a byte piece's byte is held until it
    /// forms a character or cannot.
    pub(crate) fn push<const N: usize>(
        &mut self,
        t: &SpTables<'_>,
        id: u32,
        pending: &mut heapless::Vec<u8, N>,
    ) -> Result<(), DecodeError> {
        let kind = t.kind(id);
        let Some(piece) = t.piece_bytes(id).filter(|_| kind.is_some()) else {
            return Err(unknown(id));
        };
        if t.joins_pieces {
            // Each piece as it is, a space before each but the first.
            let space: &[u8] = if self.state.seen { b" " } else { b"" };
            if pending.len() + space.len() + piece.len() > N {
                return Err(no_room());
            }
            self.state.seen = true;
            let _ = pending.extend_from_slice(space);
            return append(pending, piece);
        }
        let held = 3 * self.bytes.len();
        if kind == Some(PieceKind::Byte) {
            // Room for what the held bytes and this one can become: up to four U+FFFD.
            if pending.len() + held + 3 > N {
                return Err(no_room());
            }
            let _ = self.bytes.push(byte_of_piece(piece).unwrap_or(0));
            self.drain_bytes(false, pending);
            self.state.wrote = true;
            self.state.seen = true;
            return Ok(());
        }
        if pending.len() + held + piece.len().max(t.unk_surface.len()) > N {
            return Err(no_room());
        }
        self.drain_bytes(true, pending);
        let s = &mut self.state;
        if s.gave_up_mark || s.wrote {
            s.bos = false;
        }
        let (text, skip, gave_up) = piece_surface(t, kind, piece, s.bos);
        let mut rest = text.get(skip..).unwrap_or(&[]);
        let drop_marks = t.metaspace_decoder() && !s.seen;
        s.wrote |= !rest.is_empty() && !drop_marks;
        s.gave_up_mark = gave_up;
        s.seen = true;
        if kind == Some(PieceKind::Unknown) {
            return append(pending, rest);
        }
        // A piece's text, `▁` as a space (room was checked above).
        while let Some((&b, tail)) = rest.split_first() {
            if rest.starts_with(&SPACE_MARK) {
                if !drop_marks {
                    let _ = pending.push(b' ');
                }
                rest = rest.get(SPACE_MARK.len()..).unwrap_or(&[]);
            } else {
                let _ = pending.push(b);
                rest = tail;
            }
        }
        Ok(())
    }

    /// Turn held bytes into text: each character they form, or U+FFFD for a byte that
    /// cannot start or continue one. Without `all`, a prefix that can still become a
    /// character is kept.
    pub(crate) fn drain_bytes<const N: usize>(
        &mut self,
        all: bool,
        pending: &mut heapless::Vec<u8, N>,
    ) {
        while !self.bytes.is_empty() {
            let mut window = [0xFFu8; 4];
            slice_ops::copy(&mut window, &self.bytes);
            let (c, len) = char_at(&window, 0);
            if !all && c == Char::Invalid && utf8::is_proper_prefix(&self.bytes) {
                return;
            }
            let len = if c == Char::Invalid { 1 } else { len };
            let text = if c == Char::Invalid {
                &REPLACEMENT[..]
            } else {
                window.get(..len).unwrap_or(&[])
            };
            let _ = pending.extend_from_slice(text);
            let kept = slice_ops::move_to_front(&mut self.bytes, len);
            self.bytes.truncate(kept);
        }
    }
}
