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
        let mut written = 0usize;
        for (position, &id) in ids.iter().enumerate() {
            let Some(bytes) = self.token_bytes(id) else {
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
