//! `tokenizers`' `Precompiled` normalizer: a SentencePiece character map
//! ([`crate::sentencepiece::CharsMap`]) applied by `tokenizers`' own rule, which is not
//! `sentencepiece`'s.
//!
//! **The rule** (found by experiment on `tokenizers` 0.22.2, and what its source does): the text is
//! cut into extended grapheme clusters ([`super::grapheme`]). A cluster shorter than 6 bytes
//! (in the reference's string) is looked up whole: if a key of the map is a prefix of it, the
//! *shortest* such key's replacement replaces the *whole* cluster (so `Ａ` U+FF21 with a
//! combining acute becomes `a`, the accent lost, and `\r\n` becomes one space). Otherwise
//! (a longer cluster, or no key) each character is looked up alone and replaced when it is a
//! key. `sentencepiece` instead takes the longest key at each position, across clusters.
//!
//! **Units** for the window ([`super::window`]) are clusters: the output of a cluster does not
//! depend on the text around it, and a walk from any cluster start finds the same clusters.
//! A byte that is not UTF-8 is one U+FFFD (written as such: passing the byte through could
//! join it to its neighbours' bytes once a character between them is deleted).

use super::grapheme::cluster_end;
use super::unicode::NormalizeError;
use super::units::{by_units, Sink};
use super::UnitNormalizer;
use crate::sentencepiece::{CharsMap, REPLACEMENT};
use crate::tokenize::Progress;
use crate::utf8::{self, Utf8};

/// Clusters at least this long (in the reference's bytes) are rewritten a character at a time.
pub(super) const WHOLE_BELOW: usize = 6;

/// A character map applied by `tokenizers`' `Precompiled` rule (by reference: the map is
/// large, and the encoder's stack is counted).
#[derive(Clone, Copy)]
pub(crate) struct GraphemeMap<'m, 'a>(pub(crate) &'m CharsMap<'a>);

impl GraphemeMap<'_, '_> {
    /// The replacement of the key that is exactly `key`, written to `sink`; false when `key`
    /// is no key.
    pub(super) fn put_key(&self, key: &[u8], sink: &mut Sink<'_>) -> bool {
        match self.0.longest(key) {
            Some((len, r)) if len == key.len() => {
                let mut buf = [0u8; 4];
                sink.put(r.bytes(&mut buf));
                true
            }
            _ => false,
        }
    }

    /// Write the normalization of the cluster `text[at..end]` (`ref_len` bytes in the
    /// reference's string).
    fn cluster(&self, text: &[u8], at: usize, end: usize, ref_len: usize, sink: &mut Sink<'_>) {
        let char_at = |i: usize| -> (&[u8], usize) {
            match utf8::decode(text, i) {
                Utf8::Scalar(_, len) => (text.get(i..i + len).unwrap_or(&[]), len),
                _ => (&REPLACEMENT, 1),
            }
        };
        // Characters from here on are looked up alone (the first of a short cluster already
        // was, as its shortest prefix).
        let mut i = at;
        if ref_len < WHOLE_BELOW {
            // The cluster as the reference's string (at most 5 bytes), and its characters'
            // ends: the shortest key among its prefixes replaces it whole.
            let mut key = [0u8; WHOLE_BELOW - 1];
            let (mut n, mut j) = (0usize, at);
            while j < end {
                let (bytes, len) = char_at(j);
                let Some(dst) = key.get_mut(n..n + bytes.len()) else {
                    break;
                };
                crate::slice_ops::copy(dst, bytes);
                n += bytes.len();
                j += len;
                if self.put_key(key.get(..n).unwrap_or(&[]), sink) {
                    return;
                }
            }
            let (bytes, len) = char_at(at);
            sink.put(bytes);
            i += len;
        }
        while i < end {
            let (bytes, len) = char_at(i);
            if !self.put_key(bytes, sink) {
                sink.put(bytes);
            }
            i += len;
        }
    }

    /// True when `key` is exactly a key of the map.
    #[inline]
    fn is_key(&self, key: &[u8]) -> bool {
        matches!(self.0.longest(key), Some((len, _)) if len == key.len())
    }

    /// Whether the cluster `text[at..end]` is its own normalization: UTF-8 in which no
    /// character is a key and (a cluster under 6 bytes) no longer prefix is one.
    fn unchanged(&self, text: &[u8], at: usize, end: usize, ref_len: usize) -> bool {
        if ref_len != end - at {
            return false;
        }
        let mut i = at;
        while i < end {
            let len = match utf8::decode(text, i) {
                Utf8::Scalar(_, len) => len,
                _ => return false,
            };
            let char_key = self.is_key(text.get(i..i + len).unwrap_or(&[]));
            let prefix_key = ref_len < WHOLE_BELOW
                && i > at
                && self.is_key(text.get(at..i + len).unwrap_or(&[]));
            if char_key || prefix_key {
                return false;
            }
            i += len;
        }
        true
    }
}

/// True when the byte `b`, followed by `next` (`None`: the end of the text, final when
/// `last`), is a cluster of its own: an ASCII character other than CR followed by another
/// ASCII one (nothing ASCII joins it): most text, settled without the cluster walk.
#[inline]
fn alone(b: u8, next: Option<&u8>, last: bool) -> bool {
    b < 0x80 && b != b'\r' && next.map_or(last, |&n| n < 0x80)
}

impl UnitNormalizer for GraphemeMap<'_, '_> {
    fn normalize(
        &self,
        text: &[u8],
        last: bool,
        out: &mut [u8],
    ) -> Result<Progress, NormalizeError> {
        by_units(text, out, |at, sink| {
            // A run of ASCII bytes that are clusters of their own and no keys: copied, each
            // byte a unit (as many as fit, one at least).
            let mut run = at;
            while let Some(&c) = text.get(run) {
                if !alone(c, text.get(run + 1), last) || self.0.ascii_key(c) {
                    break;
                }
                run += 1;
            }
            if run > at {
                let n = (run - at).min(sink.room()).max(1);
                sink.put(text.get(at..at + n).unwrap_or(&[]));
                return Some(at + n);
            }
            let b = *text.get(at)?;
            let (end, ref_len) = if alone(b, text.get(at + 1), last) {
                (at + 1, 1)
            } else {
                cluster_end(text, at, last)?
            };
            self.cluster(text, at, end, ref_len, sink);
            Some(end)
        })
    }

    fn identity_prefix(&self, text: &[u8], last: bool) -> usize {
        let mut at = 0usize;
        while let Some(&b) = text.get(at) {
            if alone(b, text.get(at + 1), last) {
                if self.0.ascii_key(b) {
                    break;
                }
                at += 1;
                continue;
            }
            match cluster_end(text, at, last) {
                Some((end, ref_len)) if self.unchanged(text, at, end, ref_len) => at = end,
                _ => break,
            }
        }
        at
    }

    fn unit_len(&self, text: &[u8], at: usize) -> usize {
        if at >= text.len() {
            return 0;
        }
        match cluster_end(text, at, false) {
            Some((end, _)) => end - at,
            None => text.len() - at,
        }
    }
}
