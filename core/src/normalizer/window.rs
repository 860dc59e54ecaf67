//! Encoding through a normalizer ([`UnitNormalizer`]: a Unicode form, `Precompiled`) without a heap: the text is normalized a
//! window at a time and each window is encoded as a stream's pending input is, by the
//! family's own `encode_part`.
//!
//! **State.** `pos` is an offset in the raw text that starts a normalization unit, and `skip`
//! the bytes of its normalized form already encoded (a piece of normalized text may end
//! inside a unit: in `क्` the virama is a mark that joins its letter's unit, and a pattern's
//! `\p{L}+` ends before it). A window is the normalization of `text[pos..]`, made again from
//! `pos` each time, so its first `skip` bytes are the ones already encoded: normalizing from a
//! unit start does not depend on the text before it (see [`super::unicode`]).
//!
//! **Text normalization leaves alone** (most text: ASCII, and every character that neither
//! decomposes nor carries a combining class) is encoded where it lies, with no copy and no
//! length limit. Other text goes through a window of [`NORMALIZE_WINDOW`] bytes on the stack;
//! a piece longer than that (normalized) is normalized into the free end of the caller's
//! output buffer instead, which a long piece needs anyway as the merge's work area: a buffer
//! too small for both gives [`EncodeError::PieceTooLong`] with the size that is enough.
//!
//! **Returns** stop at *clean points*, where `skip` is 0: the raw offset there is a piece
//! boundary and a unit start, so a call from it (or a stream that drops the bytes before it)
//! gives the ids a one-shot call gives. When the output fills, or more input is needed, after
//! a piece that ends inside a unit, the ids after the last clean point are left out of
//! `written` (they are made again from it).

use super::unicode::NormalizeError;
use super::{EncodePart, UnitNormalizer};
use crate::error::EncodeError;
use crate::tokenize::Progress;

/// Bytes of normalized text an encoder holds on the stack at once; a longer piece of text
/// that normalization changes is normalized into the output buffer's free end.
pub const NORMALIZE_WINDOW: usize = 256;

/// What one window did: how far `pos` moves, the new `skip`, ids written, and whether the
/// output or the window filled up.
struct Step {
    advance: usize,
    skip: usize,
    written: usize,
    out_full: bool,
    window_full: bool,
}

/// Normalizes `rest` into `window`, encodes it past `skip` into `ids`, and finds where that
/// left `pos` and `skip`. `Err` is an encoder error other than a full buffer.
fn step<N: UnitNormalizer>(
    form: &N,
    rest: &[u8],
    is_final: bool,
    skip: usize,
    window: &mut [u8],
    ids: &mut [u32],
    encode: &mut EncodePart<'_>,
) -> Result<Step, EncodeError> {
    let (consumed, len, whole, window_full) = match form.normalize(rest, is_final, window) {
        Ok(p) => (p.consumed, p.written, p.consumed == rest.len(), false),
        Err(NormalizeError::OutputFull { consumed, written }) => (consumed, written, false, true),
        Err(NormalizeError::UnitTooLong { .. }) => (0, 0, false, true),
    };
    if len <= skip && !(whole && is_final) {
        // The window holds nothing past what is encoded: no progress here.
        return Ok(Step {
            advance: 0,
            skip,
            written: 0,
            out_full: false,
            window_full,
        });
    }
    let part = window.get(skip..len).unwrap_or(&[]);
    let (k, written, out_full) = match encode(part, whole && is_final, ids) {
        Ok(p) => (p.consumed, p.written, false),
        Err(EncodeError::OutputFull { consumed, written }) => (consumed, written, true),
        Err(e) => return Err(e),
    };
    let done = skip + k;
    let (advance, skip) = if done >= len {
        (consumed, 0)
    } else {
        // The unit the encoder stopped in: the last unit start at or before `done`.
        let head = window.get_mut(..done).unwrap_or(&mut []);
        match form.normalize(rest, is_final, head) {
            Ok(p) => (p.consumed, done - p.written),
            Err(NormalizeError::OutputFull { consumed, written }) => (consumed, done - written),
            Err(NormalizeError::UnitTooLong { .. }) => (0, done),
        }
    };
    Ok(Step {
        advance,
        skip,
        written,
        out_full,
        window_full,
    })
}

/// Encodes `text` through `form` (a Unicode form, or a character map by `Precompiled`'s rule). `encode(window, is_final, out)` encodes a prefix of
/// normalized text into `out` with a stream's contract (`is_final` false: stop before the
/// first piece more text could change); `work(len)` is the output room the family needs to
/// encode a piece of `len` bytes. With `is_final` false, `text` may go on. Offsets in the
/// result and in errors are offsets in `text`.
pub(crate) fn encode_normalized<N: UnitNormalizer>(
    form: &N,
    text: &[u8],
    is_final: bool,
    out: &mut [u32],
    work: fn(usize) -> usize,
    encode: &mut EncodePart<'_>,
) -> Result<Progress, EncodeError> {
    let mut window = [0u8; NORMALIZE_WINDOW];
    let out_len = out.len();
    let (mut pos, mut skip, mut written) = (0usize, 0usize, 0usize);
    // The last clean point: raw offset and ids written up to it.
    let (mut clean_pos, mut clean_written) = (0usize, 0usize);
    // A stop at the last clean point: a full buffer, or (nothing fits) a larger buffer.
    let full_at_clean = |clean: (usize, usize), written: usize, more: usize| {
        if clean == (0, 0) {
            EncodeError::PieceTooLong {
                offset: 0,
                len: 1,
                needed: written.saturating_add(more),
            }
        } else {
            EncodeError::OutputFull {
                consumed: clean.0,
                written: clean.1,
            }
        }
    };
    while pos < text.len() {
        let rest = text.get(pos..).unwrap_or(&[]);
        if skip == 0 {
            // Text that normalization leaves alone: encoded in place.
            let same = form.identity_prefix(rest, is_final);
            if same > 0 {
                let run = rest.get(..same).unwrap_or(&[]);
                let room = out.get_mut(written..).unwrap_or(&mut []);
                match encode(run, is_final && same == rest.len(), room) {
                    Ok(p) => {
                        written += p.written;
                        pos += p.consumed;
                        (clean_pos, clean_written) = (pos, written);
                        if p.consumed == same {
                            continue;
                        }
                        // The last piece runs on past the text normalization leaves alone:
                        // into the unit held back for more input (then wait for it), or into
                        // text that normalization changes (then through a window).
                        if !is_final && same + form.unit_len(rest, same) >= rest.len() {
                            return Ok(Progress {
                                consumed: pos,
                                written,
                            });
                        }
                    }
                    Err(e) => return Err(e.within(pos, written, out_len)),
                }
            }
        }
        let rest = text.get(pos..).unwrap_or(&[]);
        let room = out.get_mut(written..).unwrap_or(&mut []);
        let mut s = match step(form, rest, is_final, skip, &mut window, room, encode) {
            Ok(s) => s,
            Err(EncodeError::PieceTooLong { needed, .. }) if needed <= out_len => {
                return Err(full_at_clean((clean_pos, clean_written), written, needed))
            }
            Err(e) => return Err(e.shifted(pos)),
        };
        if s.window_full && s.written == 0 && (s.advance, s.skip) == (0, skip) {
            // A piece longer than the stack window: normalize into the free end of `out`,
            // as much as leaves the merge its work area.
            let room = out.get_mut(written..).unwrap_or(&mut []);
            let bytes = largest_window(room.len(), work);
            let more = work(4 * NORMALIZE_WINDOW.max(bytes)) + NORMALIZE_WINDOW.max(bytes);
            if bytes <= NORMALIZE_WINDOW {
                return Err(full_at_clean((clean_pos, clean_written), written, more));
            }
            let Some((ids, tail)) =
                room.split_at_mut_checked(room.len().saturating_sub(bytes.div_ceil(4)))
            else {
                return Err(full_at_clean((clean_pos, clean_written), written, more));
            };
            let Ok(tail) = bytemuck::try_cast_slice_mut::<u32, u8>(tail) else {
                return Err(full_at_clean((clean_pos, clean_written), written, more));
            };
            s = match step(form, rest, is_final, skip, tail, ids, encode) {
                Ok(s) => s,
                Err(EncodeError::PieceTooLong { .. }) => {
                    return Err(full_at_clean((clean_pos, clean_written), written, more))
                }
                Err(e) => return Err(e.shifted(pos)),
            };
            if s.window_full && s.written == 0 && (s.advance, s.skip) == (0, skip) {
                return Err(full_at_clean((clean_pos, clean_written), written, more));
            }
        }
        written += s.written;
        let before = (pos, skip);
        pos += s.advance;
        skip = s.skip;
        if skip == 0 {
            (clean_pos, clean_written) = (pos, written);
        }
        if s.out_full {
            let more = work(NORMALIZE_WINDOW) + NORMALIZE_WINDOW;
            return Err(full_at_clean((clean_pos, clean_written), written, more));
        }
        if (pos, skip) == before {
            // More input is needed (a final text always moves on).
            return Ok(Progress {
                consumed: clean_pos,
                written: clean_written,
            });
        }
    }
    Ok(Progress {
        consumed: pos,
        written,
    })
}

/// The longest window of normalized text that fits in `room` ids beside the merge's work
/// area for a piece as long (`work(bytes) + ⌈bytes / 4⌉ <= room`; `work` never decreases):
/// a binary search.
fn largest_window(room: usize, work: fn(usize) -> usize) -> usize {
    let fits = |bytes: usize| work(bytes).saturating_add(bytes.div_ceil(4)) <= room;
    let (mut lo, mut hi) = (0usize, room.saturating_mul(4));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}
