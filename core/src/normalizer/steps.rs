//! `tokenizers`' normalizer `Sequence`s of character steps, with or without a `Precompiled`
//! map after them: ALBERT's and XLNet's files (`Replace("``", "\"")`, `Replace("''", "\"")`,
//! `NFKD`, `StripAccents`, `Lowercase`, `Precompiled`), and the `NFD` + `Lowercase` +
//! `StripAccents` that `tokenizers`' own guides build.
//!
//! **Why a character at a time is exact.** Each step before the map rewrites one character
//! (or one quote pair) without looking at its neighbours — `StripAccents` drops combining
//! marks, `Lowercase` is `char::to_lowercase` — except the decomposition, whose canonical
//! reordering moves non-starters. A decomposition is only accepted with `StripAccents` after
//! it ([`Steps::is_exact`]), and every non-starter is a mark (`cargo xtask gen-unicode` checks
//! this for the reference's tables), so what reordering would move is dropped anyway. The
//! quote pairs are found leftmost from a character boundary, as `Replace` finds them, and no
//! later step makes or breaks one.
//!
//! **`Precompiled` after them** rewrites grapheme clusters of *their* output (see
//! `precompiled.rs`): the characters the steps make are streamed through the cluster walk,
//! a cluster under 6 bytes held until it ends (it may be replaced whole), a longer one
//! rewritten a character at a time as it goes, so no cluster length needs a buffer. A *unit*
//! for the window ([`super::window`]) ends where a cluster of the output ends at the end of
//! what one input character made: its output depends on nothing around it.
//!
//! **Bytes that are not UTF-8** are one U+FFFD each, as in the SentencePiece families, or
//! one U+FFFD per maximal invalid subsequence ([`Steps::fffd_per_subpart`]) as in the
//! WordPiece family. They are replaced here, before any step, as the reference replaces them
//! before normalizing: passing them through would let a dropped mark between two of them
//! join them into a character.

use super::grapheme::{class_byte, Walk};
use super::precompiled::{GraphemeMap, WHOLE_BELOW};
use super::unicode::{self, NormalizeError, UnicodeForm};
use super::units::{by_units, unit_len_of, Sink};
use super::UnitNormalizer;
use crate::sentencepiece::CharsMap;
use crate::tokenize::Progress;
use crate::utf8::{self, Utf8};

/// A decomposition step: `NFD` or `NFKD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decompose {
    /// Canonical decomposition (`NFD`).
    Canonical,
    /// Compatibility decomposition (`NFKD`).
    Compatibility,
}

impl Decompose {
    fn form(self) -> UnicodeForm {
        match self {
            Decompose::Canonical => UnicodeForm::Nfd,
            Decompose::Compatibility => UnicodeForm::Nfkd,
        }
    }
}

/// A normalizer `Sequence` of character steps, applied in this order: the quote pairs, the
/// decomposition, then `Lowercase` and `StripAccents` (in the order
/// [`Steps::lowercase_first`] says), then `Precompiled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steps {
    /// `Replace("``", "\"")` then `Replace("''", "\"")` first (ALBERT's and XLNet's
    /// converters put them there).
    pub quotes: bool,
    /// `NFD` or `NFKD` next; only with [`Steps::strip_accents`] ([`Steps::is_exact`]).
    pub decompose: Option<Decompose>,
    /// `StripAccents`: combining marks (General_Category M) dropped.
    pub strip_accents: bool,
    /// `Lowercase`: `char::to_lowercase`, a character at a time (no final sigma rule).
    pub lowercase: bool,
    /// `Lowercase` comes before `StripAccents` (they differ on `İ`, whose lowercase is `i`
    /// and U+0307).
    pub lowercase_first: bool,
    /// Then `Precompiled`: the tables' character map by `tokenizers`' rule.
    pub precompiled: bool,
    /// A maximal invalid subsequence of the input (Unicode's "maximal subpart", as
    /// `String::from_utf8_lossy` reads it: the WordPiece family's rule) is one U+FFFD,
    /// instead of one U+FFFD per byte that is not UTF-8 (the SentencePiece families' rule).
    pub fffd_per_subpart: bool,
}

impl Steps {
    /// No step at all.
    pub const NONE: Steps = Steps {
        quotes: false,
        decompose: None,
        strip_accents: false,
        lowercase: false,
        lowercase_first: false,
        precompiled: false,
        fffd_per_subpart: false,
    };

    /// True when this core applies the steps exactly: a decomposition only with
    /// `StripAccents` after it (see the module docs).
    pub const fn is_exact(&self) -> bool {
        self.decompose.is_none() || self.strip_accents
    }
}

/// What one input position starts: a quote pair, or one character (U+FFFD for bytes that
/// are not UTF-8).
#[derive(Clone, Copy)]
enum Source {
    Pair,
    Char(u32),
}

/// A cluster of the steps' output being rewritten by `Precompiled`'s rule.
struct Cluster {
    walk: Walk,
    started: bool,
    /// Its first characters while it is under [`WHOLE_BELOW`] bytes.
    held: [u32; WHOLE_BELOW],
    n_held: usize,
    /// Its length in bytes so far.
    bytes: usize,
    /// It reached [`WHOLE_BELOW`] bytes: its characters are rewritten one at a time.
    spilled: bool,
}

impl Cluster {
    fn new() -> Self {
        Cluster {
            walk: Walk::start(),
            started: false,
            held: [0; WHOLE_BELOW],
            n_held: 0,
            bytes: 0,
            spilled: false,
        }
    }

    /// Adds `c` (class byte `class`) to the cluster.
    fn push(&mut self, c: u32, class: u8, map: GraphemeMap<'_, '_>, sink: &mut Sink<'_>) {
        if !self.started {
            *self = Cluster::new();
            self.started = true;
        }
        self.walk.push(class);
        let len = char_len(c);
        if !self.spilled && self.bytes + len < WHOLE_BELOW {
            if let Some(slot) = self.held.get_mut(self.n_held) {
                *slot = c;
                self.n_held += 1;
            }
        } else {
            if !self.spilled {
                self.spilled = true;
                for &h in self.held.get(..self.n_held).unwrap_or(&[]) {
                    put_mapped(h, map, sink);
                }
            }
            put_mapped(c, map, sink);
        }
        self.bytes += len;
    }

    /// Writes what is left of the cluster and starts none.
    fn finish(&mut self, map: GraphemeMap<'_, '_>, sink: &mut Sink<'_>) {
        if self.started && !self.spilled {
            // Under 6 bytes: the shortest key among its prefixes replaces it whole; else the
            // first character stays and the others are looked up alone.
            let held = self.held.get(..self.n_held).unwrap_or(&[]);
            let mut key = [0u8; WHOLE_BELOW];
            let mut n = 0;
            for &h in held {
                let (b, len) = encode(h);
                if let Some(dst) = key.get_mut(n..n + len) {
                    crate::slice_ops::copy(dst, b.get(..len).unwrap_or(&[]));
                }
                n += len;
                if map.put_key(key.get(..n).unwrap_or(&[]), sink) {
                    self.started = false;
                    return;
                }
            }
            if let Some((&first, rest)) = held.split_first() {
                put_char(first, sink);
                for &h in rest {
                    put_mapped(h, map, sink);
                }
            }
        }
        self.started = false;
    }
}

#[inline]
fn encode(c: u32) -> ([u8; 4], usize) {
    utf8::encode(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
}

#[inline]
fn char_len(c: u32) -> usize {
    encode(c).1
}

#[inline]
fn put_char(c: u32, sink: &mut Sink<'_>) {
    let (b, len) = encode(c);
    sink.put(b.get(..len).unwrap_or(&[]));
}

/// `c` looked up alone in the map: its replacement, or itself.
#[inline]
fn put_mapped(c: u32, map: GraphemeMap<'_, '_>, sink: &mut Sink<'_>) {
    let (b, len) = encode(c);
    let bytes = b.get(..len).unwrap_or(&[]);
    if !map.put_key(bytes, sink) {
        sink.put(bytes);
    }
}

/// [`Steps`] over a character map (used when [`Steps::precompiled`]).
#[derive(Clone, Copy)]
pub(crate) struct StepsMap<'m, 'a> {
    pub(crate) steps: Steps,
    pub(crate) map: &'m CharsMap<'a>,
}

impl StepsMap<'_, '_> {
    /// What `text[at..]` starts, and its length; `None` at the end of the text, or where more
    /// input could change it (with `last` false).
    #[inline]
    fn source(&self, text: &[u8], at: usize, last: bool) -> Option<(Source, usize)> {
        match utf8::decode(text, at) {
            Utf8::Scalar(cp, len) if self.steps.quotes && (cp == 0x60 || cp == 0x27) => {
                match text.get(at + 1) {
                    Some(&b) if u32::from(b) == cp => Some((Source::Pair, 2)),
                    Some(_) => Some((Source::Char(cp), len)),
                    None => last.then_some((Source::Char(cp), len)),
                }
            }
            Utf8::Scalar(cp, len) => Some((Source::Char(cp), len)),
            Utf8::Truncated(0) => None,
            Utf8::Truncated(_) if !last => None,
            Utf8::Invalid(k) | Utf8::Truncated(k) if self.steps.fffd_per_subpart => {
                Some((Source::Char(0xFFFD), k.max(1)))
            }
            _ => Some((Source::Char(0xFFFD), 1)),
        }
    }

    /// Calls `f` with the characters the steps before `Precompiled` make of `source`.
    #[inline]
    fn each(&self, source: Source, f: &mut impl FnMut(u32)) {
        let cp = match source {
            Source::Pair => return f(u32::from(b'"')),
            Source::Char(cp) => cp,
        };
        match self.steps.decompose {
            Some(d) => unicode::for_each_decomposed(d.form(), cp, |e| self.cased(e, f)),
            None => self.cased(cp, f),
        }
    }

    /// `Lowercase` and `StripAccents` of `c`, in their order.
    #[inline]
    fn cased(&self, c: u32, f: &mut impl FnMut(u32)) {
        let s = &self.steps;
        let strip = |e: u32| s.strip_accents && unicode::is_mark(e);
        if s.lowercase && s.lowercase_first {
            for l in lower(c) {
                if !strip(u32::from(l)) {
                    f(u32::from(l));
                }
            }
        } else if !strip(c) {
            if s.lowercase {
                for l in lower(c) {
                    f(u32::from(l));
                }
            } else {
                f(c);
            }
        }
    }

    /// The unit at `text[at..]` (not at the end) normalized into `sink`; its end, or `None`
    /// when more input could extend it.
    fn unit(&self, text: &[u8], at: usize, last: bool, sink: &mut Sink<'_>) -> Option<usize> {
        if !self.steps.precompiled {
            let (source, len) = self.source(text, at, last)?;
            self.each(source, &mut |c| put_char(c, sink));
            return Some(at + len);
        }
        let map = GraphemeMap(self.map);
        let mut cluster = Cluster::new();
        let mut r = at;
        loop {
            let Some((source, len)) = self.source(text, r, last) else {
                if r >= text.len() && last {
                    cluster.finish(map, sink);
                    return Some(r);
                }
                return None;
            };
            // A cluster that ends before the first character this source makes ends the unit.
            let (mut first, mut ends) = (true, false);
            self.each(source, &mut |c| {
                if ends {
                    return;
                }
                let class = class_byte(c);
                if cluster.started && !cluster.walk.joins(class) {
                    if first {
                        ends = true;
                        return;
                    }
                    cluster.finish(map, sink);
                }
                first = false;
                cluster.push(c, class, map, sink);
            });
            if ends {
                cluster.finish(map, sink);
                return Some(r);
            }
            r += len;
        }
    }

    /// When `text[at]` is an ASCII byte that is a unit of its own (followed by another ASCII
    /// byte, or the final end; not CR, not a quote of a pair): the byte.
    #[inline]
    fn ascii_alone(&self, text: &[u8], at: usize, last: bool) -> Option<u8> {
        let b = *text.get(at)?;
        let quote = self.steps.quotes && (b == b'`' || b == b'\'');
        let alone =
            b < 0x80 && b != b'\r' && !quote && text.get(at + 1).map_or(last, |&n| n < 0x80);
        alone.then_some(b)
    }

    /// What the steps make of the ASCII byte `b` alone, into `sink`; true when that is `b`.
    #[inline]
    fn ascii(&self, b: u8, sink: &mut Sink<'_>) -> bool {
        let l = if self.steps.lowercase {
            b.to_ascii_lowercase()
        } else {
            b
        };
        if self.steps.precompiled
            && self.map.ascii_key(l)
            && GraphemeMap(self.map).put_key(&[l], sink)
        {
            return false;
        }
        sink.put(&[l]);
        l == b
    }
}

/// `char::to_lowercase` of `c` (a scalar value).
#[inline]
fn lower(c: u32) -> core::char::ToLowercase {
    char::from_u32(c)
        .unwrap_or(char::REPLACEMENT_CHARACTER)
        .to_lowercase()
}

impl UnitNormalizer for StepsMap<'_, '_> {
    fn normalize(
        &self,
        text: &[u8],
        last: bool,
        out: &mut [u8],
    ) -> Result<Progress, NormalizeError> {
        by_units(text, out, |at, sink| {
            match self.ascii_alone(text, at, last) {
                Some(b) => {
                    self.ascii(b, sink);
                    Some(at + 1)
                }
                None => self.unit(text, at, last, sink),
            }
        })
    }

    fn identity_prefix(&self, text: &[u8], last: bool) -> usize {
        /// Units longer than this are not looked at (the prefix just ends there).
        const LOOK: usize = 32;
        let mut at = 0usize;
        while at < text.len() {
            let mut buf = [0u8; LOOK];
            let mut sink = Sink {
                out: &mut buf,
                need: 0,
            };
            if let Some(b) = self.ascii_alone(text, at, last) {
                if !self.ascii(b, &mut sink) {
                    break;
                }
                at += 1;
                continue;
            }
            match self.unit(text, at, last, &mut sink) {
                Some(end)
                    if sink.need == end - at
                        && sink.need <= LOOK
                        && buf.get(..end - at) == text.get(at..end) =>
                {
                    at = end
                }
                _ => break,
            }
        }
        at
    }

    fn unit_len(&self, text: &[u8], at: usize) -> usize {
        unit_len_of(text, at, |at, sink| self.unit(text, at, false, sink))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(steps: Steps, text: &[u8], last: bool) -> (usize, std::vec::Vec<u8>) {
        let map = CharsMap::EMPTY;
        let mut out = [0u8; 64];
        let p = StepsMap { steps, map: &map }
            .normalize(text, last, &mut out)
            .expect("room");
        (p.consumed, out[..p.written].to_vec())
    }

    const ALBERT_NO_MAP: Steps = Steps {
        quotes: true,
        decompose: Some(Decompose::Compatibility),
        strip_accents: true,
        lowercase: true,
        lowercase_first: false,
        precompiled: false,
        fffd_per_subpart: false,
    };

    #[test]
    fn quote_pairs_are_leftmost_and_wait_for_more_input() {
        let s = Steps {
            quotes: true,
            ..Steps::NONE
        };
        assert_eq!(run(s, b"```''x'", true), (7, b"\"`\"x'".to_vec()));
        // A last quote could pair with the next input: held back.
        assert_eq!(run(s, b"a`", false), (1, b"a".to_vec()));
        assert_eq!(run(s, b"a``", false), (3, b"a\"".to_vec()));
    }

    #[test]
    fn steps_apply_in_their_order() {
        // NFKD, marks dropped, lowercased: `Ｃafé İ` → `cafe i`.
        let text = "\u{FF23}af\u{E9} \u{130}".as_bytes();
        assert_eq!(run(ALBERT_NO_MAP, text, true).1, b"cafe i");
        // Lowercase before StripAccents without a decomposition: `İ` → `i` (the U+0307 its
        // lowercase carries is a mark); after: `i̇`.
        let lower_first = Steps {
            lowercase: true,
            strip_accents: true,
            lowercase_first: true,
            ..Steps::NONE
        };
        assert_eq!(run(lower_first, "\u{130}".as_bytes(), true).1, b"i");
        let strip_first = Steps {
            lowercase_first: false,
            ..lower_first
        };
        assert_eq!(
            run(strip_first, "\u{130}".as_bytes(), true).1,
            "i\u{307}".as_bytes()
        );
        // A byte that is not UTF-8 is one U+FFFD; with `fffd_per_subpart` a maximal
        // subpart is one, held back while more input could complete it.
        assert_eq!(
            run(ALBERT_NO_MAP, b"A\xe2\x82", true).1,
            "a\u{FFFD}\u{FFFD}".as_bytes()
        );
        let subparts = Steps {
            fffd_per_subpart: true,
            ..ALBERT_NO_MAP
        };
        assert_eq!(run(subparts, b"A\xe2\x82", true).1, "a\u{FFFD}".as_bytes());
        assert_eq!(run(subparts, b"A\xe2\x82", false), (1, b"a".to_vec()));
        // A mark dropped between two invalid bytes does not join them (`\xCE\xAE` is `ή`).
        assert_eq!(
            run(subparts, b"\xce\xd9\x8c\xae", true).1,
            "\u{FFFD}\u{FFFD}".as_bytes()
        );
    }

    #[test]
    fn identity_prefix_and_unit_length() {
        let map = CharsMap::EMPTY;
        let n = StepsMap {
            steps: ALBERT_NO_MAP,
            map: &map,
        };
        assert_eq!(n.identity_prefix(b"abc Def", true), 4);
        assert_eq!(n.identity_prefix(b"ab``", true), 2);
        assert_eq!(n.unit_len(b"a``b", 1), 2);
        assert_eq!(n.unit_len("e\u{301}x".as_bytes(), 1), 2);
        assert_eq!(n.unit_len(b"ab", 2), 0);
    }
}
