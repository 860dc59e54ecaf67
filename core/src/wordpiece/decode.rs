//! WordPiece decoding, as `tokenizers`' `decode(ids)` with its defaults: added tokens are
//! skipped (`skip_special_tokens=True`); every other token after the first loses the
//! continuation prefix or gets a space before it; then the decoder's clean-up (` .` → `.`,
//! ` 's` → `'s`, …) is applied to that piece.

use super::encode::WpTokenizer;
use crate::error::DecodeError;
use crate::slice_ops::copy;
use crate::tokenize::{append, no_room};

/// The clean-up replacements of the `WordPiece` decoder, in its order.
const CLEANUP: [(&[u8], &[u8]); 11] = [
    (b" .", b"."),
    (b" ?", b"?"),
    (b" !", b"!"),
    (b" ,", b","),
    (b" ' ", b"'"),
    (b" n't", b"n't"),
    (b" 'm", b"'m"),
    (b" do not", b" don't"),
    (b" 's", b"'s"),
    (b" 've", b"'ve"),
    (b" 're", b"'re"),
];

// `replace_all` works in place: no replacement is longer than what it replaces.
const _: () = {
    let mut k = 0;
    while k < CLEANUP.len() {
        assert!(CLEANUP[k].1.len() <= CLEANUP[k].0.len());
        k += 1;
    }
};

/// Longest piece decoded with the clean-up: a space, the token, room for the replacements.
const PIECE_BUF: usize = 256;

impl WpTokenizer<'_> {
    /// Decode `ids` into `out`; returns the number of bytes. `ids` start the text (the first
    /// token gets no space); for the rest of a sequence after a drained
    /// [`DecodeError::OutputFull`], call [`WpTokenizer::decode_after`] with `ids[consumed..]`.
    /// `consumed == 0` means nothing was decoded: call again with a bigger buffer.
    pub fn decode(&self, ids: &[u32], out: &mut [u8]) -> Result<usize, DecodeError> {
        self.decode_ids(ids, true, out)
    }

    /// [`WpTokenizer::decode`] of ids that continue an earlier call's.
    pub fn decode_after(&self, ids: &[u32], out: &mut [u8]) -> Result<usize, DecodeError> {
        self.decode_ids(ids, false, out)
    }

    /// Append the text of `id` to a streaming decoder's `pending` text (see
    /// [`crate::Tokenize::decode_push`]); `first`: no word has been written yet.
    pub(crate) fn decode_one<const N: usize>(
        &self,
        id: u32,
        first: &mut bool,
        pending: &mut heapless::Vec<u8, N>,
    ) -> Result<(), DecodeError> {
        let mut text = [0u8; PIECE_BUF];
        let n = self
            .decode_ids(&[id], *first, &mut text)
            .map_err(|e| match e {
                DecodeError::OutputFull { .. } => no_room(),
                e => e,
            })?;
        append(pending, text.get(..n).unwrap_or(&[]))?;
        *first &= self.tables().is_special(id);
        Ok(())
    }

    /// Decode `ids`; `first`: they start the text (the first word gets no space).
    pub(crate) fn decode_ids(
        &self,
        ids: &[u32],
        mut first: bool,
        out: &mut [u8],
    ) -> Result<usize, DecodeError> {
        let t = self.tables();
        let mut written = 0;
        // A piece being cleaned up, reused for every token.
        let mut piece = [0u8; PIECE_BUF];
        for (position, &id) in ids.iter().enumerate() {
            let Some(token) = t.token_bytes(id) else {
                return Err(DecodeError::UnknownId {
                    position,
                    id,
                    written,
                });
            };
            if t.is_special(id) {
                continue;
            }
            let (space, body) = match token.strip_prefix(t.prefix) {
                Some(rest) if !first => (false, rest),
                _ if first => (false, token),
                _ => (true, token),
            };
            let starts_text = first;
            first = false;
            // Every clean-up pattern starts with a space, so only a piece with one can change
            // (in practice: a token after which a space was put).
            let cleaned = if t.cleanup && (space || body.contains(&b' ')) {
                cleaned(&mut piece, space, body)
            } else {
                None
            };
            let (space, bytes): (bool, &[u8]) = match cleaned {
                Some(len) => (false, piece.get(..len).unwrap_or(&[])),
                None => (space, body),
            };
            let total = bytes.len() + usize::from(space);
            let Some(dst) = out.get_mut(written..written + total) else {
                // Nothing emitted yet by a call that starts the text: report no progress (the
                // skipped added tokens before this one are decoded again by the retry), so
                // that `consumed > 0` always means the next call is `decode_after`.
                let consumed = if starts_text { 0 } else { position };
                return Err(DecodeError::OutputFull { consumed, written });
            };
            if space {
                if let Some((head, rest)) = dst.split_first_mut() {
                    *head = b' ';
                    copy(rest, bytes);
                }
            } else {
                copy(dst, bytes);
            }
            written += total;
        }
        Ok(written)
    }
}

/// The piece (a space if `space`, then `body`) after the clean-up, in `buf[..len]`; `None` when
/// it does not fit the buffer (longer than any real token: decoded without the clean-up).
fn cleaned(buf: &mut [u8; PIECE_BUF], space: bool, body: &[u8]) -> Option<usize> {
    let mut len = 0;
    if space {
        *buf.first_mut()? = b' ';
        len = 1;
    }
    len += copy(buf.get_mut(len..len + body.len())?, body);
    // Every pattern starts with a space; when the only space is the leading one, a pattern can
    // occur only at the start (and no replacement puts a space anywhere else).
    let only_leading = !body.contains(&b' ');
    for (from, to) in CLEANUP {
        let b = buf.get(..len).unwrap_or(&[]);
        let present = if only_leading {
            b.starts_with(from)
        } else {
            (0..b.len()).any(|i| b.get(i..).is_some_and(|r| r.starts_with(from)))
        };
        if present {
            len = replace_all(buf, len, from, to);
        }
    }
    Some(len)
}

/// Replace every occurrence of `from` in `buf[..len]` by `to`, left to right without rescanning
/// replaced text, as `str::replace`; returns the new length. In place: `to` is never longer than
/// `from` (every [`CLEANUP`] pair), so the text written never passes the text still to read.
fn replace_all(buf: &mut [u8; PIECE_BUF], len: usize, from: &[u8], to: &[u8]) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < len {
        let byte = buf.get(i).copied().unwrap_or(0);
        let (piece, skip) = match buf.get(i..len) {
            Some(rest) if rest.starts_with(from) => (to, from.len()),
            _ => (core::slice::from_ref(&byte), 1),
        };
        n += copy(buf.get_mut(n..n + piece.len()).unwrap_or(&mut []), piece);
        i += skip;
    }
    n
}
