//! Writing a normalizer's output a unit at a time: [`Sink`] collects one unit's bytes,
//! [`by_units`] runs the units of a text into a caller's buffer with the contract of
//! [`super::normalize`] (a full buffer stops at a unit start).

use super::unicode::NormalizeError;
use crate::tokenize::Progress;

/// Output bytes, written while they fit; `need` counts them all.
pub(super) struct Sink<'o> {
    pub(super) out: &'o mut [u8],
    pub(super) need: usize,
}

impl Sink<'_> {
    pub(super) fn put(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.out.get_mut(self.need..self.need + bytes.len()) {
            crate::slice_ops::copy(dst, bytes);
        }
        self.need += bytes.len();
    }

    /// Bytes that still fit.
    #[inline]
    pub(super) fn room(&self) -> usize {
        self.out.len().saturating_sub(self.need)
    }
}

/// Normalizes `text` into `out` unit by unit: `unit(at, sink)` writes the unit that starts at
/// `at` into `sink` (which holds the free end of `out`) and returns its end, or `None` where
/// more input could extend it. A unit that does not fit stops the call before it:
/// [`NormalizeError::OutputFull`], or [`NormalizeError::UnitTooLong`] when it is the first.
#[inline(always)]
pub(super) fn by_units(
    text: &[u8],
    out: &mut [u8],
    mut unit: impl FnMut(usize, &mut Sink<'_>) -> Option<usize>,
) -> Result<Progress, NormalizeError> {
    let (mut at, mut written) = (0usize, 0usize);
    while at < text.len() {
        let room = out.get_mut(written..).unwrap_or(&mut []);
        let room_len = room.len();
        let mut sink = Sink { out: room, need: 0 };
        let Some(end) = unit(at, &mut sink) else {
            break;
        };
        if sink.need > room_len {
            return Err(if written == 0 {
                NormalizeError::UnitTooLong {
                    offset: at,
                    len: end - at,
                    needed: sink.need,
                }
            } else {
                NormalizeError::OutputFull {
                    consumed: at,
                    written,
                }
            });
        }
        written += sink.need;
        at = end;
    }
    Ok(Progress {
        consumed: at,
        written,
    })
}

/// Length of the unit that starts at `text[at..]`, found by `unit` as [`by_units`] calls it
/// (nothing written: the sink has no room), to the end of the text when more input could
/// extend it, 0 at the end: [`super::UnitNormalizer::unit_len`] of a normalizer made of units.
pub(super) fn unit_len_of(
    text: &[u8],
    at: usize,
    unit: impl FnOnce(usize, &mut Sink<'_>) -> Option<usize>,
) -> usize {
    if at >= text.len() {
        return 0;
    }
    let mut sink = Sink {
        out: &mut [],
        need: 0,
    };
    match unit(at, &mut sink) {
        Some(end) => end - at,
        None => text.len() - at,
    }
}
