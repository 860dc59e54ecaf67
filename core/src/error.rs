//! Error values. Every failure of the core is one of these; none of them loses data.

use core::fmt;

/// Why an encode call stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The output buffer is full. The ids of `text[..consumed]` are in `out[..written]`;
    /// drain them and go on from `consumed` in the same text ([`crate::Tokenize::encode_at`]
    /// with the cursor the call moved, or [`crate::Tokenize::encode_from`]): the concatenated
    /// result equals a one-shot encode, because `consumed` is always a piece, word or
    /// special-token boundary.
    OutputFull {
        /// Input bytes fully encoded.
        consumed: usize,
        /// Ids written to the output buffer.
        written: usize,
    },
    /// One piece needs more room than the whole output buffer offers, so no amount of draining
    /// helps: call again with an output buffer of at least `needed` ids.
    PieceTooLong {
        /// Offset of the piece in the input.
        offset: usize,
        /// Length of the piece in bytes.
        len: usize,
        /// Output buffer length (in ids) this piece needs.
        needed: usize,
    },
}

impl EncodeError {
    /// No room left for a unit of input (a piece, word or special token of `len` bytes at
    /// `offset`) that needs `needed` ids, with `written` ids already in an output buffer of
    /// `out_len`: [`EncodeError::PieceTooLong`] when even the whole buffer is too small, else
    /// [`EncodeError::OutputFull`] (drain and go on from `offset`).
    #[inline]
    pub(crate) fn no_room(
        offset: usize,
        len: usize,
        needed: usize,
        written: usize,
        out_len: usize,
    ) -> Self {
        if written == 0 && needed > out_len {
            EncodeError::PieceTooLong {
                offset,
                len,
                needed,
            }
        } else {
            EncodeError::OutputFull {
                consumed: offset,
                written,
            }
        }
    }

    /// This error of an encode of `text[at..]` into `out[written..]` as one of the whole call
    /// (`text` into `out`, `out_len` ids): offsets moved on by `at`, ids counted from the start
    /// of `out`, and a piece that needs no more than the whole buffer, with ids already in it,
    /// a full buffer at `at` (drain, then resume there).
    #[inline]
    pub(crate) fn within(self, at: usize, written: usize, out_len: usize) -> Self {
        match self {
            EncodeError::OutputFull {
                consumed,
                written: n,
            } => EncodeError::OutputFull {
                consumed: at.saturating_add(consumed),
                written: written.saturating_add(n),
            },
            EncodeError::PieceTooLong { needed, .. } if written > 0 && needed <= out_len => {
                EncodeError::OutputFull {
                    consumed: at,
                    written,
                }
            }
            e => e.shifted(at),
        }
    }

    /// The same error with its input offsets moved on by `by` bytes: an error of an encode of
    /// `text[by..]` as one of `text`.
    #[must_use]
    #[inline]
    pub fn shifted(self, by: usize) -> Self {
        match self {
            EncodeError::OutputFull { consumed, written } => EncodeError::OutputFull {
                consumed: consumed.saturating_add(by),
                written,
            },
            EncodeError::PieceTooLong {
                offset,
                len,
                needed,
            } => EncodeError::PieceTooLong {
                offset: offset.saturating_add(by),
                len,
                needed,
            },
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EncodeError::OutputFull { consumed, written } => write!(
                f,
                "output buffer full after {written} ids ({consumed} input bytes encoded); drain it and resume"
            ),
            EncodeError::PieceTooLong { offset, len, needed } => write!(
                f,
                "the {len}-byte piece at offset {offset} needs an output buffer of at least {needed} ids"
            ),
        }
    }
}

/// Why a decode call stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// `ids[position]` is not a token of this vocabulary. `out[..written]` holds the bytes of
    /// `ids[..position]`.
    UnknownId {
        /// Index of the offending id in the input slice (or, for a stream, since the start).
        position: usize,
        /// The id.
        id: u32,
        /// Bytes written before it.
        written: usize,
    },
    /// The output buffer is full. The bytes of `ids[..consumed]` are in `out[..written]`; drain
    /// them and call again with `ids[consumed..]`.
    OutputFull {
        /// Ids fully decoded.
        consumed: usize,
        /// Bytes written.
        written: usize,
    },
}

impl DecodeError {
    /// The same error with its id positions moved on by `by`: an error of a decode of
    /// `ids[by..]` as one of `ids`.
    #[must_use]
    #[inline]
    pub fn shifted(self, by: usize) -> Self {
        match self {
            DecodeError::UnknownId {
                position,
                id,
                written,
            } => DecodeError::UnknownId {
                position: position.saturating_add(by),
                id,
                written,
            },
            DecodeError::OutputFull { consumed, written } => DecodeError::OutputFull {
                consumed: consumed.saturating_add(by),
                written,
            },
        }
    }

    /// The same error with `before` more bytes written: an error of a decode into
    /// `out[before..]` as one into `out`.
    #[must_use]
    #[inline]
    pub(crate) fn after(self, before: usize) -> Self {
        match self {
            DecodeError::UnknownId {
                position,
                id,
                written,
            } => DecodeError::UnknownId {
                position,
                id,
                written: written.saturating_add(before),
            },
            DecodeError::OutputFull { consumed, written } => DecodeError::OutputFull {
                consumed,
                written: written.saturating_add(before),
            },
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::UnknownId { position, id, .. } => {
                write!(f, "unknown token id {id} at position {position}")
            }
            DecodeError::OutputFull { consumed, written } => write!(
                f,
                "output buffer full after {written} bytes ({consumed} ids decoded); drain it and resume"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EncodeError {}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}
