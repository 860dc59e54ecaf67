//! The SentencePiece decoder: ids to text, as SentencePiece's `DecodeIds` renders it.
//!
//! - A normal or user-defined piece is its text with `▁` turned into a space; the first one
//!   loses one leading `▁` (the dummy prefix) while nothing has been written yet or the
//!   piece before it gave up such a `▁` (with `remove_extra_whitespaces`, every leading `▁`
//!   goes while nothing has been written).
//! - A control piece (`<s>`, `</s>`) is nothing; the unknown piece is the unknown surface.
//! - A run of byte pieces is its bytes, where each byte that is not part of well-formed UTF-8
//!   becomes U+FFFD.
//!
//! One decoder, [`SpDecodeState`], serves both entry points: the streaming decoder pushes one
//! id at a time into its pending text, and [`SpTokenizer::decode_from`] runs it over the ids
//! into the caller's buffer. A character of a run of byte pieces, or a piece, is written
//! whole or not at all, so [`DecodeError::OutputFull`] stops before one; `decode_from`
//! resumes there.

use super::encode::SpTokenizer;
use super::normalize::{char_at, Char, REPLACEMENT, SPACE_MARK};
use super::tables::{PieceKind, SpTables};
use crate::error::DecodeError;
use crate::slice_ops;
use crate::tokenize::{no_room, unknown};
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
        let mut s = SpDecodeState::START;
        let mut written = 0usize;
        let mut i = 0usize;
        while let Some(&id) = ids.get(i) {
            if i < from && !s.state.bos {
                // Only the dummy-prefix state depends on the ids before `from`, and it is
                // settled: skip to `from` (a character boundary, as an earlier call returned).
                i = from;
                continue;
            }
            let Some((kind, piece)) = lookup(t, id) else {
                return Err(DecodeError::UnknownId {
                    position: i,
                    id,
                    written,
                });
            };
            i += 1;
            if i <= from {
                // Before `from`, only the dummy-prefix state.
                match kind {
                    PieceKind::Byte => s.state.wrote = true,
                    _ => {
                        s.surface(t, kind, piece);
                    }
                }
                continue;
            }
            // A run of byte pieces ends before an id that is not one: its held bytes go out.
            let run_ends = kind == PieceKind::Byte
                && ids.get(i).and_then(|&id| t.kind(id)) != Some(PieceKind::Byte);
            let dst = out.get_mut(written..).unwrap_or(&mut []);
            match s.step(t, kind, piece, run_ends, dst) {
                Ok(n) => written += n,
                // Stopped at the held byte that starts the character that did not fit (after
                // the ones before it), or before the piece.
                Err(n) => {
                    return Err(DecodeError::OutputFull {
                        consumed: i.saturating_sub(s.bytes.len().max(1)),
                        written: written + n,
                    })
                }
            }
        }
        Ok(written)
    }
}

/// The kind and text of `id`; `None` for an id that is not a piece.
fn lookup<'a>(t: &SpTables<'a>, id: u32) -> Option<(PieceKind, &'a [u8])> {
    Some((t.kind(id)?, t.piece_bytes(id)?))
}

/// The byte the text of a `<0xHH>` piece stands for.
fn byte_of_piece(piece: &[u8]) -> Option<u8> {
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

/// Let `write` append to `pending`, in at most `room` bytes of its free capacity; keep what it
/// reports written.
fn append_with<const N: usize>(
    pending: &mut heapless::Vec<u8, N>,
    room: usize,
    write: impl FnOnce(&mut [u8]) -> usize,
) {
    let len = pending.len();
    let _ = pending.resize(len.saturating_add(room).min(N), 0);
    let n = write(pending.get_mut(len..).unwrap_or(&mut []));
    pending.truncate(len + n);
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
        let (kind, piece) = lookup(t, id).ok_or(unknown(id))?;
        // Room for the held bytes as U+FFFD and the longest text this id can become: four
        // U+FFFD for a byte, else the piece or the unknown surface.
        let text = match kind {
            PieceKind::Byte => 3,
            _ => piece.len().max(t.unk_surface.len()),
        };
        let room = 3 * self.bytes.len() + text;
        if pending.len() + room > N {
            return Err(no_room());
        }
        append_with(pending, room, |dst| {
            self.step(t, kind, piece, false, dst).unwrap_or_else(|n| n)
        });
        Ok(())
    }

    /// Write the text of a piece (`kind`, `piece`) to `out`; `all`: a run of byte pieces ends
    /// after it. Returns its length; when it does not fit, `Err` with the length of the
    /// characters of held bytes written before (the rest stay held).
    fn step(
        &mut self,
        t: &SpTables<'_>,
        kind: PieceKind,
        piece: &[u8],
        all: bool,
        out: &mut [u8],
    ) -> Result<usize, usize> {
        if kind == PieceKind::Byte {
            let _ = self.bytes.push(byte_of_piece(piece).unwrap_or(0));
            self.state.wrote = true;
            return self.drain(all, out);
        }
        let held = match self.bytes.is_empty() {
            true => 0,
            false => self.drain(true, out)?,
        };
        let mut rest = self.surface(t, kind, piece);
        let out = out.get_mut(held..).unwrap_or(&mut []);
        if kind == PieceKind::Unknown {
            let dst = out.get_mut(..rest.len()).ok_or(held)?;
            return Ok(held + slice_ops::copy(dst, rest));
        }
        // A piece's text, `▁` as a space.
        let mut w = 0;
        while let Some((&b, tail)) = rest.split_first() {
            let (b, tail) = match rest.strip_prefix(&SPACE_MARK) {
                Some(tail) => (b' ', tail),
                None => (b, tail),
            };
            *out.get_mut(w).ok_or(held)? = b;
            w += 1;
            rest = tail;
        }
        Ok(held + w)
    }

    /// Move the dummy-prefix state past a piece that is not a byte piece; returns the text it
    /// is written as (the unknown surface; a piece's text after the `▁` it gives up).
    fn surface<'a>(&mut self, t: &SpTables<'a>, kind: PieceKind, piece: &'a [u8]) -> &'a [u8] {
        let s = &mut self.state;
        if s.gave_up_mark || s.wrote {
            s.bos = false;
        }
        let text = matches!(kind, PieceKind::Normal | PieceKind::UserDefined);
        let strips = text
            && s.bos
            && (t.add_dummy_prefix || t.remove_extra_whitespaces)
            && piece.starts_with(&SPACE_MARK);
        s.gave_up_mark = strips && !t.remove_extra_whitespaces;
        let rest = match kind {
            PieceKind::Unknown => Some(t.unk_surface),
            _ if text => piece.get(if strips { SPACE_MARK.len() } else { 0 }..),
            _ => None,
        }
        .unwrap_or(&[]);
        s.wrote |= !rest.is_empty();
        rest
    }

    /// Turn held bytes into text in `pending` (see [`SpDecodeState::drain`]).
    pub(crate) fn drain_bytes<const N: usize>(
        &mut self,
        all: bool,
        pending: &mut heapless::Vec<u8, N>,
    ) {
        append_with(pending, 12, |dst| {
            self.drain(all, dst).unwrap_or_else(|n| n)
        });
    }

    /// Turn held bytes into text in `out`: each character they form, or U+FFFD for a byte
    /// that cannot start or continue one. Without `all`, a prefix that can still become a
    /// character is kept. Returns the length written; `Err` with it when the next character
    /// does not fit (its bytes stay held).
    fn drain(&mut self, all: bool, out: &mut [u8]) -> Result<usize, usize> {
        let mut w = 0;
        while !self.bytes.is_empty() {
            let mut window = [0xFFu8; 4];
            slice_ops::copy(&mut window, &self.bytes);
            let (text, len) = match char_at(&window, 0) {
                (Char::Invalid, _) if !all && utf8::is_proper_prefix(&self.bytes) => break,
                (Char::Invalid, _) => (&REPLACEMENT[..], 1),
                (_, len) => (window.get(..len).unwrap_or(&[]), len),
            };
            w += slice_ops::copy(out.get_mut(w..w + text.len()).ok_or(w)?, text);
            let kept = slice_ops::move_to_front(&mut self.bytes, len);
            self.bytes.truncate(kept);
        }
        Ok(w)
    }
}
