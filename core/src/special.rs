//! Finding special tokens in the input.
//!
//! Specials are matched verbatim, earliest position first and, among the specials that match at
//! that position, the longest (so with `<|endoftext|>` and `<|endoftext|><|endoftext|>` both
//! registered, the longer wins). A byte mask of the specials' first bytes lets the scan skip
//! ordinary text with one table lookup per byte.
//!
//! At a byte the mask lets through, the specials are tried one by one, or, when their texts are
//! sorted (bytewise, strictly: what `picobpe-model` and `picobpe-build` write), walked like a
//! trie over the sorted slice: the specials that start with the text's first `d` bytes are one
//! range, narrowed by two binary searches per byte. A model with many specials (Mistral's
//! Tekken: 1,000, most starting with `<` or `[`) then costs a few comparisons per `<` in code,
//! not one per special.
//!
//! A special may take the whitespace beside it, as `tokenizers`' added tokens with `lstrip` or
//! `rstrip` do ([`LSTRIP`], [`RSTRIP`]): the run of Unicode `White_Space` characters (the
//! `regex` crate's `\s`) before it, back to where the search started (the end of the previous
//! special), or after it, becomes part of its [`Found`] span, so no ordinary text holds it.
//! Streaming, a run that reaches the end of the input could grow: with any `lstrip` special a
//! trailing run is held back ([`Boundary::Partial`]), and so is an `rstrip` special whose
//! run reaches the end.

use crate::error::EncodeError;
use crate::tables::SpecialToken;
use crate::utf8;

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

/// [`SpecialToken::strip`] bit: the special takes the whitespace run before it
/// (`tokenizers`' `lstrip`).
pub const LSTRIP: u8 = 1;
/// [`SpecialToken::strip`] bit: the special takes the whitespace run after it
/// (`tokenizers`' `rstrip`).
pub const RSTRIP: u8 = 2;

/// First-byte mask (bit `b` is set when some special token starts with byte `b`), whether
/// the specials can be walked as a sorted slice, and whether one takes the whitespace before it.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstBytes {
    mask: [u64; 4],
    /// Every text is non-empty and the texts are strictly increasing, bytewise.
    sorted: bool,
    /// Some special has [`LSTRIP`]: a trailing whitespace run of streaming input is held back.
    lstrip: bool,
}

/// Fewer specials than this are tried one by one even when sorted.
const WALK_FROM: usize = 8;

impl FirstBytes {
    /// The mask for a set of specials (one pass over them, plus one to see if they are sorted).
    pub fn new(specials: &[SpecialToken<'_>]) -> Self {
        let mut mask = [0u64; 4];
        for s in specials {
            if let Some(&b) = s.text.as_bytes().first() {
                mask[(b >> 6) as usize] |= 1 << (b & 63);
            }
        }
        let sorted = specials.len() >= WALK_FROM
            && specials.iter().all(|s| !s.text.is_empty())
            && specials.windows(2).all(|w| {
                w.first().map(|s| s.text.as_bytes()) < w.get(1).map(|s| s.text.as_bytes())
            });
        let lstrip = specials.iter().any(|s| s.strip & LSTRIP != 0);
        FirstBytes {
            mask,
            sorted,
            lstrip,
        }
    }

    #[inline]
    fn contains(&self, b: u8) -> bool {
        self.mask[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }

    /// True when no special is registered.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.mask == [0; 4]
    }
}

/// What starts at one position: the longest special that matches there, and whether some
/// special is a proper extension of the rest of the text (a partial match at its end).
struct AtPosition<'s, 't> {
    best: Option<&'s SpecialToken<'t>>,
    partial: bool,
}

/// [`AtPosition`] of `tail`, trying every special.
fn at_linear<'s, 't>(specials: &'s [SpecialToken<'t>], tail: &[u8]) -> AtPosition<'s, 't> {
    let mut best: Option<&SpecialToken<'_>> = None;
    let mut partial = false;
    for s in specials {
        let st = s.text.as_bytes();
        if tail.starts_with(st) {
            if best.is_none_or(|b| st.len() > b.text.len()) {
                best = Some(s);
            }
        } else if st.len() > tail.len() && st.starts_with(tail) {
            partial = true;
        }
    }
    AtPosition { best, partial }
}

/// [`AtPosition`] of `tail` over specials sorted strictly by text, none empty.
///
/// Invariant: `specials[lo..hi]` are exactly the specials that start with `tail[..d]` and are
/// longer than `d` bytes (a text equal to `tail[..d]`, the shortest, sorts first: it is taken
/// as the best so far and dropped from the range). The range for `d + 1` is the part of it
/// whose byte `d` is `tail[d]`, contiguous because the slice is sorted.
fn at_sorted<'s, 't>(specials: &'s [SpecialToken<'t>], tail: &[u8]) -> AtPosition<'s, 't> {
    let mut best = None;
    let (mut lo, mut hi) = (0usize, specials.len());
    let mut d = 0usize;
    loop {
        if let Some(s) = specials.get(lo).filter(|s| lo < hi && s.text.len() == d) {
            best = Some(s);
            lo += 1;
        }
        if lo >= hi {
            return AtPosition {
                best,
                partial: false,
            };
        }
        let Some(&b) = tail.get(d) else {
            // Specials go on past the end of the text.
            return AtPosition {
                best,
                partial: true,
            };
        };
        let range = specials.get(lo..hi).unwrap_or(&[]);
        let byte = |s: &SpecialToken<'_>| s.text.as_bytes().get(d).copied().unwrap_or(0);
        let start = range.partition_point(|s| byte(s) < b);
        let end = range.partition_point(|s| byte(s) <= b);
        (lo, hi) = (lo + start, lo + end);
        d += 1;
    }
}

/// Find the next special token in `text[from..]`. With `allow_partial`, a proper prefix of a
/// special at the very end of `text` is reported as [`Boundary::Partial`] (streaming input),
/// and so is whitespace a special could still take (see the module docs).
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
    // Where a special at `at` would start once it takes the whitespace before it.
    let left = |at: usize| whitespace_run_start(text, from, at);
    for (i, &b) in rest.iter().enumerate() {
        if !mask.contains(b) {
            continue;
        }
        let at = from + i;
        let tail = rest.get(i..).unwrap_or(&[]);
        let found = if mask.sorted {
            at_sorted(specials, tail)
        } else {
            at_linear(specials, tail)
        };
        // A longer special could still complete past the end of a streaming buffer.
        if allow_partial && found.partial {
            return Boundary::Partial(if mask.lstrip { left(at) } else { at });
        }
        if let Some(s) = found.best {
            let start = if s.strip & LSTRIP != 0 { left(at) } else { at };
            let mut end = at + s.text.len();
            if s.strip & RSTRIP != 0 {
                end = whitespace_run_end(text, end);
                // More whitespace may follow in the next chunk.
                let rest = text.get(end..).unwrap_or(&[]);
                if allow_partial && rest.len() == partial_white_space(rest) {
                    return Boundary::Partial(start);
                }
            }
            return Boundary::Special(Found {
                start,
                end,
                id: s.id,
            });
        }
    }
    if allow_partial && mask.lstrip {
        // A special in the next chunk could take this trailing whitespace (and a character
        // cut at the end that may turn out to be whitespace).
        let cut = partial_white_space(text.get(from..).unwrap_or(&[]));
        let start = left(text.len() - cut);
        if start < text.len() {
            return Boundary::Partial(start);
        }
    }
    Boundary::None
}

/// How far ahead one encode call looks for the next special token.
///
/// Searching the whole rest of the text at every call makes resuming through a small output
/// buffer quadratic: each call would scan to the next special (or the end) to encode a few
/// ids. A window instead searches `len` bytes from where the call stands and treats the cut
/// as the end of streaming input ([`find`] with `allow_partial`): the family encodes what
/// the cut cannot change, then searches again from where it stopped. The invariant is the
/// streaming one (a chunked input gives the one-shot ids), so the ids do not depend on the
/// window; only the work per call does, which is then bounded by the window, not the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    len: usize,
}

/// Bytes of text searched per id of output room, and the fewest searched.
const WINDOW_BYTES_PER_ID: usize = 16;
const WINDOW_MIN: usize = 256;

impl Window {
    /// The window of a call whose output has room for `room` ids: about what that room
    /// covers, so a call searches little more than it encodes.
    #[inline]
    pub(crate) fn for_room(room: usize) -> Self {
        Window {
            len: room.saturating_mul(WINDOW_BYTES_PER_ID).max(WINDOW_MIN),
        }
    }

    /// After a cut, before searching again: the call went from `start` to `pos` in this
    /// window; when it did not move on (the window ended inside the first piece or word),
    /// the window doubles, until it holds one or the whole rest of the text.
    #[inline]
    pub(crate) fn after_cut(&mut self, start: usize, pos: usize) {
        if pos == start {
            self.len = self.len.saturating_mul(2);
        }
    }

    /// [`find`] over `text[from..]`, looking at most `len` bytes ahead. Returns the boundary
    /// and whether the window cut the text short: then the boundary is a
    /// [`Boundary::Partial`] (at the cut, or earlier where a special could start), and the
    /// text before it is to be encoded as streaming input (not final) before searching again.
    #[inline]
    pub(crate) fn find(
        &self,
        specials: &[SpecialToken<'_>],
        mask: &FirstBytes,
        text: &[u8],
        from: usize,
        allow_partial: bool,
    ) -> (Boundary, bool) {
        let limit = from.saturating_add(self.len);
        if mask.is_empty() {
            return (Boundary::None, false);
        }
        let Some(head) = text.get(..limit).filter(|_| limit < text.len()) else {
            return (find(specials, mask, text, from, allow_partial), false);
        };
        match find(specials, mask, head, from, true) {
            Boundary::Special(f) => (Boundary::Special(f), false),
            Boundary::Partial(p) => (Boundary::Partial(p), true),
            Boundary::None => (Boundary::Partial(limit), true),
        }
    }
}

/// Length of the proper prefix of a `White_Space` character's encoding that `text` ends
/// with (0, 1 or 2 bytes): streamed, it may become whitespace.
fn partial_white_space(text: &[u8]) -> usize {
    let n = text.len();
    let last2 = text.get(n.wrapping_sub(2)..);
    if matches!(
        last2,
        Some([0xE1, 0x9A] | [0xE2, 0x80 | 0x81] | [0xE3, 0x80])
    ) {
        2
    } else if matches!(text.last(), Some(0xC2 | 0xE1 | 0xE2 | 0xE3)) {
        1
    } else {
        0
    }
}

/// Length of the `White_Space` character `head` ends with (0: none; see
/// [`utf8::white_space_len`]). A complete encoding starts with a lead byte, which no earlier
/// byte can continue, so reading backwards finds the characters a forward reading finds.
#[inline]
fn whitespace_before(head: &[u8]) -> usize {
    let n = head.len();
    for len in 1..=3 {
        if let Some(last) = head.get(n.wrapping_sub(len)..) {
            if utf8::white_space_len(last) == len {
                return len;
            }
        }
    }
    0
}

/// Start of the whitespace run that ends at `at`, no earlier than `from`.
pub(crate) fn whitespace_run_start(text: &[u8], from: usize, mut at: usize) -> usize {
    while at > from {
        let len = whitespace_before(text.get(from..at).unwrap_or(&[]));
        if len == 0 {
            break;
        }
        at -= len;
    }
    at
}

/// End of the whitespace run that starts at `at`.
pub(crate) fn whitespace_run_end(text: &[u8], mut at: usize) -> usize {
    loop {
        let len = utf8::white_space_len(text.get(at..).unwrap_or(&[]));
        if len == 0 {
            return at;
        }
        at += len;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator: the texts are made of a 3-letter alphabet so that specials
    /// share prefixes, extend each other and end where the text ends.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn text(&mut self, max: usize) -> Vec<u8> {
            let len = 1 + self.below(max);
            (0..len).map(|_| b"<ab"[self.below(3)]).collect()
        }
    }

    /// `texts` as specials, ids in order, each with the strip bits `strip` draws.
    fn tokens(texts: &[String], mut strip: impl FnMut() -> u8) -> Vec<SpecialToken<'_>> {
        (0u32..)
            .zip(texts)
            .map(|(id, text)| SpecialToken {
                text,
                id,
                strip: strip(),
            })
            .collect()
    }

    /// The sorted walk finds what trying every special finds, at every position, streaming or
    /// not, for random special sets (in sorted order, so that `new` takes the walk).
    #[test]
    fn sorted_walk_agrees_with_trying_every_special() {
        let mut rng = Rng(0x5EED);
        let rounds = if cfg!(miri) { 20 } else { 2_000 };
        for _ in 0..rounds {
            let mut texts: Vec<Vec<u8>> = (0..WALK_FROM + rng.below(40))
                .map(|_| rng.text(5))
                .collect();
            texts.sort();
            texts.dedup();
            let strings: Vec<String> = texts
                .iter()
                .map(|t| String::from_utf8(t.clone()).unwrap())
                .collect();
            let specials = tokens(&strings, || 0);
            let sorted = FirstBytes::new(&specials);
            if specials.len() < WALK_FROM {
                continue;
            }
            assert!(sorted.sorted);
            let linear = FirstBytes {
                sorted: false,
                ..sorted
            };
            let text = rng.text(12);
            for from in 0..text.len() {
                for partial in [false, true] {
                    assert_eq!(
                        find(&specials, &sorted, &text, from, partial),
                        find(&specials, &linear, &text, from, partial),
                        "{strings:?} in {:?} from {from}",
                        core::str::from_utf8(&text)
                    );
                }
            }
        }
    }

    /// Unsorted, duplicated or empty texts, and fewer than [`WALK_FROM`], are tried one by one.
    #[test]
    fn only_strictly_sorted_nonempty_sets_are_walked() {
        let make = |texts: &[&'static str]| -> Vec<SpecialToken<'static>> {
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| SpecialToken {
                    text: t,
                    id: i as u32,
                    strip: 0,
                })
                .collect()
        };
        let many = ["a", "b", "c", "d", "e", "f", "g", "h"];
        assert!(FirstBytes::new(&make(&many)).sorted);
        assert!(!FirstBytes::new(&make(&many[..7])).sorted);
        let mut unsorted = many;
        unsorted.swap(0, 1);
        assert!(!FirstBytes::new(&make(&unsorted)).sorted);
        let mut duplicated = many;
        duplicated[1] = "a";
        assert!(!FirstBytes::new(&make(&duplicated)).sorted);
        let mut empty = many;
        empty[0] = "";
        assert!(!FirstBytes::new(&make(&empty)).sorted);
    }

    /// `tokenizers`' `AddedVocabulary::find_matches`, written plainly: leftmost-longest
    /// matches, each taking the whitespace before it (`lstrip`, back to the end of the previous
    /// match) and after it (`rstrip`). Returns `(start, end, id)` of each special.
    fn reference(specials: &[SpecialToken<'_>], text: &str) -> Vec<(usize, usize, u32)> {
        let (mut out, mut offset, mut i) = (Vec::new(), 0usize, 0usize);
        while i < text.len() {
            let best = specials
                .iter()
                .filter(|s| text[i..].starts_with(s.text))
                .max_by_key(|s| s.text.len());
            let Some(s) = best else {
                i += text[i..].chars().next().map_or(1, char::len_utf8);
                continue;
            };
            let mut start = i;
            if s.strip & LSTRIP != 0 {
                let kept = text[..i].trim_end_matches(char::is_whitespace).len();
                start = kept.max(offset);
            }
            let mut end = i + s.text.len();
            if s.strip & RSTRIP != 0 {
                end = text.len() - text[end..].trim_start_matches(char::is_whitespace).len();
            }
            out.push((start, end, s.id));
            offset = end;
            i += s.text.len();
        }
        out
    }

    /// Specials that take whitespace: `find` from each special's end gives the reference's
    /// spans on random texts; streamed (a prefix, `allow_partial`), it never reports a special
    /// or a final text end that the whole text contradicts.
    #[test]
    fn strip_matches_tokenizers_and_streams_safely() {
        let mut rng = Rng(0x57219);
        let rounds = if cfg!(miri) { 20 } else { 3_000 };
        let pieces = [" ", "\u{3000}", "\n", "<", "a", "b", "\u{a0}"];
        for _ in 0..rounds {
            let n = 1 + rng.below(4);
            let mut texts: Vec<String> = (0..n)
                .map(|_| {
                    let t = String::from_utf8(rng.text(3)).unwrap();
                    format!("<{t}")
                })
                .collect();
            texts.sort();
            texts.dedup();
            let specials = tokens(&texts, || rng.below(4) as u8);
            let mask = FirstBytes::new(&specials);
            let len = rng.below(16);
            let text: String = (0..len).map(|_| pieces[rng.below(pieces.len())]).collect();
            let bytes = text.as_bytes();
            let want = reference(&specials, &text);
            let mut got = Vec::new();
            let mut from = 0;
            while let Boundary::Special(f) = find(&specials, &mask, bytes, from, false) {
                got.push((f.start, f.end, f.id));
                from = f.end;
            }
            assert_eq!(got, want, "{texts:?} {:?} in {text:?}", specials);
            // Streaming: from each special's end (and the start), every cut.
            let froms = core::iter::once(0).chain(want.iter().map(|w| w.1));
            for from in froms {
                let whole = find(&specials, &mask, bytes, from, false);
                for cut in from..=bytes.len() {
                    let next_start = match whole {
                        Boundary::Special(f) => f.start,
                        _ => bytes.len(),
                    };
                    match find(&specials, &mask, &bytes[..cut], from, true) {
                        Boundary::Special(f) => assert_eq!(Boundary::Special(f), whole),
                        Boundary::Partial(p) => assert!(p <= next_start && p >= from),
                        Boundary::None => assert!(cut <= next_start, "{text:?} cut {cut}"),
                    }
                }
            }
        }
    }

    /// Whitespace read backwards is the whitespace read forwards, for each `White_Space`
    /// character after any byte.
    #[test]
    fn whitespace_before_reads_back_what_is_read_forward() {
        for c in [
            '\t', ' ', '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{3000}', 'a', '\u{200b}',
        ] {
            for lead in 0u8..=255 {
                let mut buf = [0u8; 5];
                buf[0] = lead;
                let n = 1 + c.encode_utf8(&mut buf[1..]).len();
                let want = if c.is_whitespace() { n - 1 } else { 0 };
                assert_eq!(whitespace_before(&buf[..n]), want, "{lead:#x} {c:?}");
            }
        }
    }
}
