//! The decoder: ids to bytes, into the caller's buffer.

use super::encode::Tokenizer;
use crate::error::DecodeError;
use crate::slice_ops;

impl<'t> Tokenizer<'t> {
    /// The bytes of one token (ordinary or special), or `None` for an unknown id.
    #[inline]
    pub fn token_bytes(&self, id: u32) -> Option<&'t [u8]> {
        self.tables().token_bytes(id)
    }

    /// Decode `ids` into `out`, returning the number of bytes written. A token is written whole
    /// or not at all, so [`DecodeError::OutputFull`] always stops at an id boundary.
    pub fn decode(&self, ids: &[u32], out: &mut [u8]) -> Result<usize, DecodeError> {
        let (mut from, mut written) = (0usize, 0usize);
        loop {
            let (rest, room) = (ids.get(from..).unwrap_or(&[]), out.get_mut(written..));
            match self.decode_stored(rest, room.unwrap_or(&mut [])) {
                Ok(n) => return Ok(written + n),
                // An empty token (whisper's `= 50256`) writes nothing: go on after it. Checked
                // here, off the loop, which then runs as it does for every other model.
                Err(DecodeError::UnknownId {
                    position,
                    id,
                    written: w,
                }) if self.tables().is_empty_token(id) => {
                    from += position + 1;
                    written += w;
                }
                Err(e) => return Err(e.shifted(from).after(written)),
            }
        }
    }

    /// [`Tokenizer::decode`] of ids with stored bytes: an empty token stops it as unknown.
    #[inline(always)]
    fn decode_stored(&self, ids: &[u32], out: &mut [u8]) -> Result<usize, DecodeError> {
        let mut written = 0usize;
        for (position, &id) in ids.iter().enumerate() {
            let Some(bytes) = self.tables().stored_bytes(id) else {
                return Err(DecodeError::UnknownId {
                    position,
                    id,
                    written,
                });
            };
            let end = written + bytes.len();
            let Some(dst) = out.get_mut(written..end) else {
                return Err(DecodeError::OutputFull {
                    consumed: position,
                    written,
                });
            };
            slice_ops::copy(dst, bytes);
            written = end;
        }
        Ok(written)
    }

    /// Number of bytes `ids` decode to, or the first unknown id.
    pub fn decoded_len(&self, ids: &[u32]) -> Result<usize, DecodeError> {
        let mut total = 0usize;
        for (position, &id) in ids.iter().enumerate() {
            match self.token_bytes(id) {
                Some(b) => total += b.len(),
                None => {
                    return Err(DecodeError::UnknownId {
                        position,
                        id,
                        written: 0,
                    })
                }
            }
        }
        Ok(total)
    }
}
