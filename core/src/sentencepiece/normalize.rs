//! SentencePiece's normalizer and the split into words, read straight from the caller's text
//! without copying it.
//!
//! With a character map (`nmt_nfkc` and the like), the text is read one *unit* at a time (a
//! user-defined symbol, the longest key of the map, or one character), each unit's output
//! following `sentencepiece`'s whitespace rules, in the map walk below; what follows
//! describes the `identity` rule, whose paths stay as they were.
//!
//! The normalized text SentencePiece merges over is the input with each space (U+0020)
//! turned into `▁` (U+2581) and each byte that is not part of well-formed UTF-8 turned into
//! U+FFFD, preceded by one `▁` when `add_dummy_prefix` is set and the text is not empty. With
//! `remove_extra_whitespaces`, spaces at the start are dropped, a space right after another
//! space is dropped, and `▁`s at the end (spaces or the character itself, the dummy prefix
//! included) are dropped.
//!
//! Nothing is copied: a symbol is a range of the original text, and its normalized bytes are
//! produced on demand ([`Normalizer::write_range`]) into a small buffer when it is looked up.
//! A dropped space belongs to the range of the symbol before it but adds no bytes.
//!
//! A *word* starts at the text's start and at each `▁` that follows another character. When
//! no vocabulary piece holds a character followed by `▁` ([`super::SpTables::split_words`]),
//! no merge crosses a word start, so words are encoded one at a time, in bounded memory.

use super::charsmap::{CharsMap, Replacement};
use super::tables::SpTables;
use crate::utf8;

/// `▁` (U+2581) in UTF-8: what a space becomes.
pub const SPACE_MARK: [u8; 3] = [0xE2, 0x96, 0x81];
/// U+FFFD in UTF-8: what a malformed byte becomes.
pub const REPLACEMENT: [u8; 3] = [0xEF, 0xBF, 0xBD];

/// What the normalizer makes of one character of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Char {
    /// A space (U+0020): `▁`, or nothing when `remove_extra_whitespaces` drops it.
    Space,
    /// The character `▁` itself in the input.
    Mark,
    /// A well-formed character other than those: itself.
    Other,
    /// One byte that is not part of well-formed UTF-8: U+FFFD.
    Invalid,
}

impl Char {
    /// True for the characters that normalize to `▁`.
    #[inline]
    pub(crate) fn is_mark(self) -> bool {
        matches!(self, Char::Space | Char::Mark)
    }
}

/// The character at `text[pos..]` and its length in the input (1–4; 0 at the end).
#[inline]
pub(crate) fn char_at(text: &[u8], pos: usize) -> (Char, usize) {
    let Some(&b0) = text.get(pos) else {
        return (Char::Invalid, 0);
    };
    if b0 < 0x80 {
        return (if b0 == b' ' { Char::Space } else { Char::Other }, 1);
    }
    let len = utf8::well_formed_len(text.get(pos..).unwrap_or(&[]));
    if len == 0 {
        return (Char::Invalid, 1);
    }
    if len == 3 && text.get(pos..pos + 3) == Some(&SPACE_MARK[..]) {
        return (Char::Mark, 3);
    }
    (Char::Other, len)
}

/// Where [`Normalizer::scan_word`] ends a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WordEnd {
    /// At the span's end: the span is one word.
    Span,
    /// Before a `▁` that follows a character other than `▁`: `sentencepiece`'s words, which
    /// no merge crosses when [`super::SpTables::split_words`] holds.
    AfterOther,
    /// Before every `▁` but the word's first character (a space that is dropped makes no
    /// `▁`): the words of a `Metaspace` pre-tokenizer that splits.
    EveryMark,
}

/// The normalizer's view of one text.
#[derive(Clone, Copy)]
pub(crate) struct Normalizer<'a> {
    /// The whole input.
    pub text: &'a [u8],
    /// `remove_extra_whitespaces` (with sections: runs of spaces become one, as the
    /// `Replace(" {2,}", "▁")` of `transformers`' SentencePiece conversions does).
    pub remove_extra: bool,
    /// A space at this offset is never dropped: the text before it belongs to another
    /// section (0: the text's start).
    pub floor: usize,
    /// With a character map: the tables (their map, and the user-defined symbols matched
    /// before it); `None` for the `identity` rule (the fast paths below).
    tables: Option<&'a SpTables<'a>>,
    /// With a character map: where the text's first unit is, past the leading spaces
    /// (`usize::MAX` when `text` does not start the text); its leading spaces are dropped.
    first: usize,
    /// With a character map: the normalized text's end once [`Normalizer::end`] found it
    /// (`usize::MAX` before): the unit that ends there loses its trailing spaces.
    tail: usize,
}

/// What the walk over a character map's units carries from unit to unit: `sentencepiece`'s
/// `is_prev_space` (the last non-empty output ended with a space, so the next one's leading
/// spaces are dropped), whether the last byte written ends a `▁`, and whether anything
/// other than `▁` was written.
#[derive(Clone, Copy)]
struct WalkState {
    prev_space: bool,
    last_mark: bool,
    seen_other: bool,
}

impl<'a> Normalizer<'a> {
    /// The normalizer's view of `text`, with `remove_extra_whitespaces` or not.
    pub(crate) fn new(text: &'a [u8], remove_extra: bool) -> Self {
        Normalizer {
            text,
            remove_extra,
            floor: 0,
            tables: None,
            first: usize::MAX,
            tail: usize::MAX,
        }
    }

    /// The normalizer `tables` describe (flags and character map) over `text`, which starts
    /// the text when `at_start`.
    pub(crate) fn of(text: &'a [u8], tables: &'a SpTables<'a>, at_start: bool) -> Self {
        let mut norm = Normalizer::new(text, tables.remove_extra_whitespaces);
        if !tables.charsmap.is_empty() {
            norm.tables = Some(tables);
            norm.first = if at_start {
                norm.mapped_start(0)
            } else {
                usize::MAX
            };
        }
        norm
    }

    /// True with a character map.
    #[inline]
    pub(crate) fn is_mapped(&self) -> bool {
        self.tables.is_some()
    }

    /// The character map (`None` for the `identity` rule).
    #[inline]
    fn map(&self) -> Option<&'a CharsMap<'a>> {
        self.tables.map(|t| &t.charsmap)
    }

    /// How far past a word's end a stream must hold text before it cuts there: a longer
    /// key of the character map could still match (0 for the identity rule).
    #[inline]
    pub(crate) fn lookahead(&self) -> usize {
        self.map().map_or(0, |m| m.max_key as usize)
    }

    /// The unit at `pos` (not at the end): its length in the input and what it becomes, with
    /// spaces still spaces. A user-defined symbol first (longest; `sentencepiece` matches
    /// them before the map, and keeps them as they are), then the longest key of the map,
    /// else the character itself (a malformed byte: U+FFFD).
    fn unit(&self, pos: usize) -> (usize, Replacement<'a>) {
        let rest = self.text.get(pos..).unwrap_or(&[]);
        if let Some((len, _)) = self.tables.and_then(|t| t.user_symbol_at(rest)) {
            return (len, Replacement::Bytes(rest.get(..len).unwrap_or(&[])));
        }
        if let Some(found) = self.map().and_then(|m| m.longest(rest)) {
            return found;
        }
        match rest.first().map_or(0, |&b| {
            if b < 0x80 {
                1
            } else {
                utf8::well_formed_len(rest)
            }
        }) {
            0 => (1, Replacement::Char('\u{FFFD}')),
            len => (len, Replacement::Bytes(rest.get(..len).unwrap_or(&[]))),
        }
    }

    /// With a character map: past the units at `pos` that become exactly one space (how
    /// `sentencepiece` skips the text's leading whitespace).
    fn mapped_start(&self, mut pos: usize) -> usize {
        if !self.remove_extra {
            return pos;
        }
        while pos < self.text.len() {
            match self.unit(pos) {
                (len, Replacement::Bytes(b" ") | Replacement::Char(' ')) => pos += len,
                _ => break,
            }
        }
        pos
    }

    /// With a character map: the end of the last unit from `from` on whose output holds
    /// something other than spaces and `▁`.
    fn mapped_end(&self, from: usize) -> usize {
        let (mut pos, mut end) = (from, from);
        while pos < self.text.len() {
            let (len, out) = self.unit(pos);
            pos += len;
            if !trim_marks(out.bytes(&mut [0; 4])).is_empty() {
                end = pos;
            }
        }
        end
    }

    /// With a character map: write the normalized bytes of the units from `start` (a word
    /// start) to `end` through `put`, spaces as `▁`, as `sentencepiece`'s `Normalize` does:
    /// leading spaces of a unit's output dropped after an output that ended with a space,
    /// trailing spaces and `▁`s dropped from the unit that ends the normalized text. With
    /// `split`, stops before a unit whose output starts a new word (a `▁` right after
    /// another character). Returns where it stopped.
    ///
    /// Words are cut only between units: a unit whose output holds a word start inside
    /// (`"a b"`) stays in one word with what follows. That gives the same ids, since no
    /// mergeable piece holds a character followed by `▁` when words are split.
    ///
    /// Out of line and over a [`Sink`] rather than a closure: one copy of the code, not in the
    /// frames of the identity rule's callers.
    #[inline(never)]
    fn walk(&self, start: usize, end: usize, split: bool, sink: &mut Sink<'_>) -> usize {
        let mut put = |b: u8| sink.put(b);
        let mut st = WalkState {
            prev_space: self.remove_extra && start == self.first,
            last_mark: false,
            seen_other: false,
        };
        let mut pos = start;
        while pos < end {
            let (len, out) = self.unit(pos);
            let mut one = [0u8; 4];
            let mut bytes = out.bytes(&mut one);
            if st.prev_space {
                while let [b' ', rest @ ..] = bytes {
                    bytes = rest;
                }
            }
            if self.remove_extra && pos + len >= self.tail {
                bytes = trim_marks_end(bytes);
            }
            let starts_mark = bytes.first() == Some(&b' ') || bytes.starts_with(&SPACE_MARK);
            if split && starts_mark && st.seen_other && !st.last_mark {
                break;
            }
            if let Some(&last) = bytes.last() {
                for &b in bytes {
                    if b == b' ' {
                        SPACE_MARK.iter().for_each(|&m| put(m));
                    } else {
                        put(b);
                    }
                }
                st.prev_space = self.remove_extra && last == b' ';
                st.last_mark = last == b' ' || bytes.ends_with(&SPACE_MARK);
                st.seen_other |= !trim_marks(bytes).is_empty();
            }
            pos += len;
        }
        pos.min(end)
    }

    /// True when the space at `pos` is dropped: with `remove_extra_whitespaces`, a space
    /// right after a space of the same section. (Leading and trailing spaces never reach a
    /// word.)
    #[inline]
    pub(crate) fn dropped(&self, pos: usize) -> bool {
        self.remove_extra
            && pos > self.floor
            && self.text.get(pos - 1) == Some(&b' ')
            && self.text.get(pos) == Some(&b' ')
    }

    /// Where encoding begins for text from `pos` on: past the leading spaces that
    /// `remove_extra_whitespaces` drops when `pos` is the text's start (`at_start`), else `pos`.
    pub(crate) fn start(&self, mut pos: usize, at_start: bool) -> usize {
        if self.is_mapped() {
            return if at_start {
                self.mapped_start(pos)
            } else {
                pos
            };
        }
        if at_start && self.remove_extra {
            while self.text.get(pos) == Some(&b' ') {
                pos += 1;
            }
        }
        pos
    }

    /// Where the normalized text ends: `text.len()`, or with `remove_extra_whitespaces` the end
    /// of its last character that is not a `▁` (`from` when there is none).
    pub(crate) fn end(&mut self, from: usize) -> usize {
        if self.is_mapped() {
            if !self.remove_extra {
                return self.text.len();
            }
            self.tail = self.mapped_end(from);
            return self.tail;
        }
        if !self.remove_extra {
            return self.text.len();
        }
        let mut pos = from;
        let mut end = from;
        while pos < self.text.len() {
            let (c, len) = char_at(self.text, pos);
            pos += len;
            if !c.is_mark() {
                end = pos;
            }
        }
        end
    }

    /// Find the end of the word that starts at `start` (see [`WordEnd`]; at most `end`) and
    /// write its normalized bytes into `buf` after `at` bytes, in one pass. Returns the word's
    /// end and its normalized length (`at` included), which counts bytes that did not fit in
    /// `buf` too.
    #[inline]
    pub(crate) fn scan_word(
        &self,
        start: usize,
        end: usize,
        split: WordEnd,
        buf: &mut [u8],
        at: usize,
    ) -> (usize, usize) {
        let mut n = at;
        let mut put = |b: u8| {
            if let Some(d) = buf.get_mut(n) {
                *d = b;
            }
            n += 1;
        };
        if self.is_mapped() {
            let mut sink = Sink::Bytes(buf, n);
            let pos = self.walk(start, end, split != WordEnd::Span, &mut sink);
            return (pos, sink.len());
        }
        let mut pos = start;
        let mut seen_other = false;
        while pos < end {
            let Some(&b) = self.text.get(pos) else {
                break;
            };
            if b < 0x80 && b != b' ' {
                seen_other = true;
                put(b);
                pos += 1;
                continue;
            }
            let (c, len) = char_at(self.text, pos);
            if c.is_mark()
                && match split {
                    WordEnd::Span => false,
                    WordEnd::AfterOther => seen_other,
                    WordEnd::EveryMark => pos > start && !(c == Char::Space && self.dropped(pos)),
                }
            {
                break;
            }
            match c {
                Char::Space if self.dropped(pos) => {}
                Char::Space | Char::Mark => SPACE_MARK.iter().for_each(|&b| put(b)),
                Char::Invalid => {
                    seen_other = true;
                    REPLACEMENT.iter().for_each(|&b| put(b));
                }
                Char::Other => {
                    seen_other = true;
                    for &b in self.text.get(pos..pos + len).unwrap_or(&[]) {
                        put(b);
                    }
                }
            }
            pos += len.max(1);
        }
        (pos.min(end), n)
    }

    /// Write the normalized bytes of `text[from..to]` (after a `▁` when `prefix`) four to a
    /// `u32`, little-endian, into `dst`; bytes past its end are dropped.
    pub(crate) fn write_packed(&self, from: usize, to: usize, prefix: bool, dst: &mut [u32]) {
        let mut k = 0usize;
        let mut put = |b: u8| {
            if let Some(w) = dst.get_mut(k / 4) {
                let shift = 8 * (k % 4);
                *w = (*w & !(0xFF << shift)) | u32::from(b) << shift;
            }
            k += 1;
        };
        if prefix {
            SPACE_MARK.iter().for_each(|&b| put(b));
        }
        if self.is_mapped() {
            self.walk(from, to, false, &mut Sink::Packed(dst, k));
            return;
        }
        let mut pos = from;
        while pos < to {
            let (c, len) = char_at(self.text, pos);
            match c {
                Char::Space if self.dropped(pos) => {}
                Char::Space => SPACE_MARK.iter().for_each(|&b| put(b)),
                Char::Invalid => REPLACEMENT.iter().for_each(|&b| put(b)),
                Char::Mark | Char::Other => {
                    for &b in self.text.get(pos..pos + len).unwrap_or(&[]) {
                        put(b);
                    }
                }
            }
            pos += len.max(1);
        }
    }
}

/// Where [`Normalizer::walk`] writes normalized bytes, with the count written so far (bytes
/// past the end are counted, not stored).
enum Sink<'b> {
    /// Into a byte buffer.
    Bytes(&'b mut [u8], usize),
    /// Four to a `u32`, little-endian.
    Packed(&'b mut [u32], usize),
}

impl Sink<'_> {
    /// Write `b` after the bytes written so far.
    #[inline]
    fn put(&mut self, b: u8) {
        match self {
            Sink::Bytes(buf, n) => {
                if let Some(d) = buf.get_mut(*n) {
                    *d = b;
                }
                *n += 1;
            }
            Sink::Packed(words, k) => {
                if let Some(w) = words.get_mut(*k / 4) {
                    let shift = 8 * (*k % 4);
                    *w = (*w & !(0xFF << shift)) | u32::from(b) << shift;
                }
                *k += 1;
            }
        }
    }

    /// Bytes written so far.
    fn len(&self) -> usize {
        match self {
            Sink::Bytes(_, n) | Sink::Packed(_, n) => *n,
        }
    }
}

/// The end of `text[from..to]` without its trailing whitespace (the characters Rust's
/// `char::is_whitespace` accepts, which `tokenizers`' `Strip` removes; a byte outside
/// well-formed UTF-8 is not whitespace): the special-token module's whitespace run, which
/// reads the same set. `from` when it is all whitespace.
pub(crate) fn strip_end(text: &[u8], from: usize, to: usize) -> usize {
    crate::special::whitespace_run_start(text, from, to.min(text.len()))
}

/// The start of `text[from..to]` without its leading whitespace (as [`strip_end`] reads it).
/// `to` when it is all whitespace; a character cut at `to` is not whitespace.
pub(crate) fn strip_start(text: &[u8], from: usize, to: usize) -> usize {
    crate::special::whitespace_run_end(text.get(..to.min(text.len())).unwrap_or(&[]), from)
}

/// `bytes` without its spaces and `▁`s at the end.
fn trim_marks_end(mut bytes: &[u8]) -> &[u8] {
    loop {
        if let [rest @ .., b' '] = bytes {
            bytes = rest;
        } else if let Some(rest) = bytes.strip_suffix(&SPACE_MARK[..]) {
            bytes = rest;
        } else {
            return bytes;
        }
    }
}

/// `bytes` without its spaces and `▁`s at both ends (empty when it holds nothing else).
fn trim_marks(mut bytes: &[u8]) -> &[u8] {
    bytes = trim_marks_end(bytes);
    loop {
        if let [b' ', rest @ ..] = bytes {
            bytes = rest;
        } else if let Some(rest) = bytes.strip_prefix(&SPACE_MARK[..]) {
            bytes = rest;
        } else {
            return bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Metaspace`'s words: every `▁` starts one, a space that `remove_extra_whitespaces`
    /// drops does not, and a section start keeps its space.
    #[test]
    fn words_at_every_mark() {
        let words = |text: &str, floor: usize| {
            let mut n = Normalizer::new(text.as_bytes(), true);
            n.floor = floor;
            let mut buf = [0u8; 32];
            let (mut pos, mut words) = (floor, Vec::new());
            while pos < text.len() {
                let (end, len) = n.scan_word(pos, text.len(), WordEnd::EveryMark, &mut buf, 0);
                words.push(std::string::String::from_utf8(buf[..len].to_vec()).unwrap());
                pos = end;
            }
            words
        };
        assert_eq!(words("a  b▁▁c", 0), ["a", "▁b", "▁", "▁c"]);
        assert_eq!(words("  a", 0), ["▁a"]);
        // From offset 1 (a section after a symbol ending in a space): its space stays.
        assert_eq!(words("x  a", 1), ["▁a"]);
        assert_eq!(words("x a", 2), ["a"]);
        let mut n = Normalizer::new(b"x  a", true);
        assert!(n.dropped(2));
        n.floor = 2;
        assert!(!n.dropped(2));
    }

    /// `Strip(left)`: the same characters from the start.
    #[test]
    fn strip_start_drops_leading_whitespace() {
        let start = |s: &[u8]| strip_start(s, 0, s.len());
        assert_eq!(start(b" \t\n\ra"), 4);
        assert_eq!(start("\u{3000}\u{85}\u{a0}\u{2028} a".as_bytes()), 11);
        assert_eq!(start(" \u{2581}".as_bytes()), 1);
        assert_eq!(start(b"\xA0a"), 0);
        assert_eq!(start(b" \xE3\x80"), 1);
        assert_eq!(start(b"   "), 3);
        assert_eq!(strip_start(b"  ab", 1, 2), 2);
        assert_eq!(start("\u{200b}a".as_bytes()), 0);
    }

    /// `Strip(right)`: Unicode whitespace goes, `▁` and malformed bytes stay.
    #[test]
    fn strip_end_drops_trailing_whitespace() {
        let end = |s: &[u8]| strip_end(s, 0, s.len());
        assert_eq!(end(b"a \t\n\r"), 1);
        assert_eq!(end("a\u{3000}\u{85}\u{a0}\u{2028} ".as_bytes()), 1);
        assert_eq!(end("a\u{2581} ".as_bytes()), 4);
        assert_eq!(end(b"a\xA0"), 2);
        assert_eq!(end(b"a\xE3\x80"), 3);
        assert_eq!(end(b"   "), 0);
        assert_eq!(strip_end(b"ab  ", 3, 4), 3);
        assert_eq!(end("a\u{200b}".as_bytes()), 4);
    }

    #[test]
    fn words_and_normalized_bytes() {
        let mut n = Normalizer::new("ab  c▁d ".as_bytes(), true);
        let end = n.end(0);
        assert_eq!(end, "ab  c▁d".len());
        let mut buf = [0u8; 32];
        let mut words = Vec::new();
        let mut pos = 0;
        while pos < end {
            let (word_end, len) = n.scan_word(pos, end, WordEnd::AfterOther, &mut buf, 0);
            words.push(std::string::String::from_utf8(buf[..len].to_vec()).unwrap());
            pos = word_end;
        }
        assert_eq!(words, ["ab", "▁c", "▁d"]);
        let (word_end, len) = n.scan_word(0, end, WordEnd::Span, &mut buf, 0);
        assert_eq!(word_end, end);
        assert_eq!(core::str::from_utf8(&buf[..len]).unwrap(), "ab▁c▁d");
        let n = Normalizer::new(b"a \xFF ", false);
        let (_, len) = n.scan_word(0, 4, WordEnd::Span, &mut buf, 0);
        assert_eq!(core::str::from_utf8(&buf[..len]).unwrap(), "a▁\u{FFFD}▁");
        // A word longer than the buffer: its full length, the buffer holds what fits.
        let (_, len) = n.scan_word(0, 4, WordEnd::Span, &mut buf[..2], 0);
        assert_eq!(len, 10);
        let mut packed = [0u32; 2];
        n.write_packed(0, 4, false, &mut packed);
        assert_eq!(
            packed,
            [
                u32::from_le_bytes([b'a', 0xE2, 0x96, 0x81]),
                u32::from_le_bytes([0xEF, 0xBF, 0xBD, 0xE2])
            ]
        );
    }
}
