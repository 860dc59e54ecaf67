//! Finding special tokens in the input.
//!
//! Specials are matched verbatim, earliest position first and, among the specials that match at
//! that position, the longest (so with `<|endoftext|>` and `<|endoftext|><|endoftext|>` both
//! registered, the longer wins). A byte mask of the specials' first bytes lets the scan skip
//! ordinary text with one table lookup per byte.

use crate::error::EncodeError;
use crate::tables::SpecialToken;

/// Which special tokens an encode call recognizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    /// Every special token of the model is recognized (tiktoken's `allowed_special="all"`).
    All,
    /// Special-token text is encoded as ordinary text (tiktoken's `encode_ordinary`).
    None,
}

/// A special token found in the input: `start..end` and its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// Offset of the first byte.
    pub start: usize,
    /// Offset one past the last byte.
    pub end: usize,
    /// The token id.
    pub id: u32,
}

/// Where the ordinary text before the next special token ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// A complete special token.
    Special(Found),
    /// A proper prefix of some special token starts at this offset and runs to the end of the
    /// input: with more input it may become a special token, so ordinary text must stop here.
    Partial(usize),
    /// No special token (or prefix of one) from the search start to the end.
    None,
}

/// First-byte mask: bit `b` is set when some special token starts with byte `b`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstBytes([u64; 4]);

impl FirstBytes {
    /// The mask for a set of specials.
    pub fn new(specials: &[SpecialToken<'_>]) -> Self {
        let mut m = [0u64; 4];
        for s in specials {
            if let Some(&b) = s.text.as_bytes().first() {
                m[(b >> 6) as usize] |= 1 << (b & 63);
            }
        }
        FirstBytes(m)
    }

    #[inline]
    fn contains(&self, b: u8) -> bool {
        self.0[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }

    /// True when no special is registered.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
}

/// Find the next special token in `text[from..]`. With `allow_partial`, a proper prefix of a
/// special at the very end of `text` is reported as [`Boundary::Partial`] (streaming input).
pub fn find(
    specials: &[SpecialToken<'_>],
    mask: &FirstBytes,
    text: &[u8],
    from: usize,
    allow_partial: bool,
) -> Boundary {
    if mask.is_empty() {
        return Boundary::None;
    }
    let Some(rest) = text.get(from..) else {
        return Boundary::None;
    };
    for (i, &b) in rest.iter().enumerate() {
        if !mask.contains(b) {
            continue;
        }
        let at = from + i;
        let tail = rest.get(i..).unwrap_or(&[]);
        let mut best: Option<Found> = None;
        let mut partial = false;
        for s in specials {
            let st = s.text.as_bytes();
            if tail.starts_with(st) {
                if best.is_none_or(|f| st.len() > f.end - f.start) {
                    best = Some(Found {
                        start: at,
                        end: at + st.len(),
                        id: s.id,
                    });
                }
            } else if allow_partial && st.len() > tail.len() && st.starts_with(tail) {
                partial = true;
            }
        }
        // A longer special could still complete past the end of a streaming buffer.
        if partial {
            return Boundary::Partial(at);
        }
        if let Some(f) = best {
            return Boundary::Special(f);
        }
    }
    Boundary::None
}

/// Write the id of the special token `f` at `out[written]`; returns the new number of ids
/// written. No room: [`EncodeError::no_room`] at the token.
#[inline]
pub(crate) fn put(f: Found, out: &mut [u32], written: usize) -> Result<usize, EncodeError> {
    let out_len = out.len();
    let Some(slot) = out.get_mut(written) else {
        return Err(EncodeError::no_room(
            f.start,
            f.end - f.start,
            1,
            written,
            out_len,
        ));
    };
    *slot = f.id;
    Ok(written + 1)
}
