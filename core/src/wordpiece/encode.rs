//! [`WpTokenizer`]: WordPiece encoding (see the module docs of [`super`] for the rules).

use super::split::Class;
use super::tables::{char_flags, stripped, WpTables, CJK, DROP, MN, PUNCT, SPACE};
use crate::error::EncodeError;
use crate::special::{self, Boundary, FirstBytes, Specials};
use crate::utf8::{self, Utf8};
use crate::Progress;

/// The output room a word of `len` bytes of normalized text needs: one id per character up
/// to [`MAX_WORD_CHARS`] (a longer word is one unknown token).
fn word_room(len: usize) -> usize {
    len.min(MAX_WORD_CHARS) + 1
}

/// Longest word, in characters, that is matched against the vocabulary; a model whose
/// `max_input_chars_per_word` is larger is refused when it is imported (BERT's is 100).
pub const MAX_WORD_CHARS: usize = 128;

/// Bytes of the normalized word buffer (on the stack): [`MAX_WORD_CHARS`] characters of up to
/// four bytes. A longer word is the unknown token, so it is never stored whole.
pub const MAX_WORD_BYTES: usize = 4 * MAX_WORD_CHARS;

/// Encodes text with a WordPiece model's tables into caller buffers. Cheap to create; keeps
/// nothing between calls.
#[derive(Clone, Copy, Debug)]
pub struct WpTokenizer<'a> {
    tables: &'a WpTables<'a>,
    first_bytes: FirstBytes,
}

/// The normalized word being collected. Invariant: `bytes[..len]` is UTF-8 of `chars`
/// characters when `chars <= MAX_WORD_CHARS`; past that only `chars` counts.
struct Word {
    bytes: [u8; MAX_WORD_BYTES],
    len: usize,
    chars: usize,
    /// Input offset of the first character that put something into the word.
    start: usize,
    /// The pre-tokenizer's key of its characters (see [`Class::Joins`]).
    key: u8,
}

impl Word {
    fn push(&mut self, c: char, at: usize, key: u8) {
        if self.chars == 0 {
            self.start = at;
            self.len = 0;
        }
        self.key = key;
        self.chars += 1;
        let (utf8, n) = crate::utf8::encode(c);
        if let (Some(dst), Some(src)) = (self.bytes.get_mut(self.len..self.len + n), utf8.get(..n))
        {
            self.len += crate::slice_ops::copy(dst, src);
        }
    }
}

/// Where the normalizer flags and the pre-tokenizer put what they make of the text: the
/// encoder collects each word and encodes it at its end ([`Collect`]);
/// [`WpTokenizer::pre_tokenize`] hands the characters to its caller.
trait Words {
    /// `c`, made from the input character at offset `at`, continues the current word, whose
    /// characters have the pre-tokenizer's key `key` ([`Class::Joins`]).
    fn push(&mut self, c: char, at: usize, key: u8);
    /// The key of the current word's characters; `None` when no word is open.
    fn open_key(&self) -> Option<u8>;
    /// The current word (if any) ends; `end` is the input offset after it.
    fn end(&mut self, tok: &WpTokenizer<'_>, end: usize) -> Result<(), EncodeError>;
}

/// The encoder's [`Words`]: the word being collected, and where its ids go.
struct Collect<'w, 'o> {
    word: &'w mut Word,
    sink: &'w mut Sink<'o>,
}

impl Words for Collect<'_, '_> {
    #[inline(always)]
    fn push(&mut self, c: char, at: usize, key: u8) {
        self.word.push(c, at, key);
    }

    #[inline(always)]
    fn open_key(&self) -> Option<u8> {
        (self.word.chars > 0).then_some(self.word.key)
    }

    #[inline(always)]
    fn end(&mut self, tok: &WpTokenizer<'_>, end: usize) -> Result<(), EncodeError> {
        tok.flush(self.word, end, self.sink)
    }
}

/// [`WpTokenizer::pre_tokenize`]'s [`Words`]: each character, and each end of a word that
/// has one, to the caller; the key of the open word, if any.
struct Handed<F>(F, Option<u8>);

impl<F: FnMut(Option<char>)> Words for Handed<F> {
    #[inline(always)]
    fn push(&mut self, c: char, _: usize, key: u8) {
        self.1 = Some(key);
        (self.0)(Some(c));
    }

    #[inline(always)]
    fn open_key(&self) -> Option<u8> {
        self.1
    }

    #[inline(always)]
    fn end(&mut self, _: &WpTokenizer<'_>, _: usize) -> Result<(), EncodeError> {
        if self.1.take().is_some() {
            (self.0)(None);
        }
        Ok(())
    }
}

/// Where the ids go: `out[..written]` is done.
struct Sink<'o> {
    out: &'o mut [u32],
    written: usize,
}

impl<'a> WpTokenizer<'a> {
    /// A tokenizer over `tables`.
    pub fn new(tables: &'a WpTables<'a>) -> Self {
        WpTokenizer {
            tables,
            first_bytes: FirstBytes::new(tables.specials),
        }
    }

    /// The tables.
    pub fn tables(&self) -> &'a WpTables<'a> {
        self.tables
    }

    /// Encode `text` into `out`; returns the number of ids. With [`Specials::All`] the added
    /// tokens (`[CLS]`, `[SEP]`, `[MASK]`, ...) are recognized in the text, as `tokenizers`
    /// does; with [`Specials::None`] they are text (`encode_special_tokens = True`). The
    /// post-processor's `[CLS] … [SEP]` is not added (`add_special_tokens=False`).
    ///
    /// Uses about 600 bytes of stack. Errors: [`EncodeError::OutputFull`] at a word boundary
    /// (drain, then [`WpTokenizer::encode_from`] the `consumed` offset); a word that needs more
    /// ids than `out` holds is [`EncodeError::PieceTooLong`].
    pub fn encode(
        &self,
        text: &[u8],
        out: &mut [u32],
        specials: Specials,
    ) -> Result<usize, EncodeError> {
        self.encode_from(text, 0, out, specials)
    }

    /// Encode `text` from byte `from` on, where `from` is 0 or a `consumed` offset of an
    /// earlier call on the same text. Offsets in errors are offsets in `text`.
    pub fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        specials: Specials,
    ) -> Result<usize, EncodeError> {
        self.encode_span(text, from, text.len(), false, out, specials)
            .map(|p| p.written)
    }

    /// The words the encoder would split `text` into, for counting them (training a
    /// vocabulary): the normalizer flags and the pre-tokenizer as [`WpTokenizer::encode`]
    /// applies them, without added tokens (as `tokenizers` trains). `f(Some(c))` for each
    /// character of a word (any length: nothing is stored), `f(None)` after its last one.
    /// Bytes that are not UTF-8 are read as the encoder reads them (a maximal invalid
    /// subsequence is one U+FFFD). Returns false, calling nothing, for tables with a
    /// [`WpTables::normalizer`] (a `tokenizer.json` normalizer other than `BertNormalizer`),
    /// which this does not apply.
    pub fn pre_tokenize(&self, text: &[u8], f: impl FnMut(Option<char>)) -> bool {
        if self.tables.normalizer.is_some() {
            return false;
        }
        let mut to = Handed(f, None);
        // `Handed` never fails.
        let _ = self.words(text, 0, text.len(), &mut to);
        true
    }

    /// Encode a prefix of `text` for a stream: with `is_final` false, only up to the last
    /// certain word end ([`WpTokenizer::word_end_before`]), and not into a special token that
    /// more input could complete.
    pub(crate) fn encode_part(
        &self,
        text: &[u8],
        is_final: bool,
        out: &mut [u32],
        specials: Specials,
    ) -> Result<Progress, EncodeError> {
        let end = if is_final || self.tables.normalizer.is_some() {
            text.len()
        } else {
            self.word_end_before(text)
        };
        self.encode_span(text, 0, end, !is_final, out, specials)
    }

    /// Encode the words of `text[from..end]` and the special tokens that start in it (a special
    /// that starts before `end` is encoded whole). With `partial`, a proper prefix of a special
    /// at the end of `text` stops the span at the last whitespace before it.
    fn encode_span(
        &self,
        text: &[u8],
        from: usize,
        mut end: usize,
        partial: bool,
        out: &mut [u32],
        specials: Specials,
    ) -> Result<Progress, EncodeError> {
        let t = self.tables;
        let mut sink = Sink { out, written: 0 };
        let mut word = Word {
            bytes: [0; MAX_WORD_BYTES],
            len: 0,
            chars: 0,
            start: from,
            key: 0,
        };
        let use_specials = specials == Specials::All && !self.first_bytes.is_empty();
        let mut pos = from;
        let mut window = special::Window::for_room(sink.out.len());
        while pos < end {
            let start = pos;
            // The special after the words from `pos`, where they end, and whether the search
            // window cut them short (then the words before the cut are encoded and the
            // search goes on from there; see `special::Window`).
            let (found, seg_end, cut) = if use_specials {
                let (specials, mask) = (t.specials, &self.first_bytes);
                match window.find(specials, mask, text, pos, partial) {
                    (Boundary::Special(f), _) if f.start < end => (Some(f), f.start, false),
                    (Boundary::Partial(at), cut) if at < end => {
                        // Text before a possible special ends only where a word surely ends.
                        let stop = self.word_end_before(text.get(..at).unwrap_or(&[])).max(pos);
                        if !cut {
                            end = stop;
                        }
                        (None, stop, cut)
                    }
                    _ => (None, end, false),
                }
            } else {
                (None, end, false)
            };
            if let Some(n) = t.normalizer {
                let seg = text.get(pos..seg_end).unwrap_or(&[]);
                let seg_final = found.is_some() || !(partial || cut || end < text.len());
                if let Some(stop) = self.normalized_segment(n, seg, pos, seg_final, &mut sink)? {
                    if !cut {
                        return Ok(stop);
                    }
                    window.after_cut(start, stop.consumed);
                    pos = stop.consumed;
                    continue;
                }
            } else {
                let mut to = Collect {
                    word: &mut word,
                    sink: &mut sink,
                };
                self.words(text, pos, seg_end, &mut to)?;
            }
            pos = seg_end;
            if cut {
                window.after_cut(start, pos);
                continue;
            }
            if let Some(f) = found {
                sink.written = special::put(f, sink.out, sink.written)?;
                pos = f.end;
            }
        }
        Ok(Progress {
            consumed: pos.max(end),
            written: sink.written,
        })
    }

    /// Encode the segment `seg` (at `pos` in the text; between added tokens) through the
    /// normalizer `n`: a segment that more input could extend (`seg_final` false) is encoded
    /// as far as the window says (a clean point, where a word and a unit start), returned as
    /// where the call stops; `None` when the whole segment is encoded. Out of line: the
    /// BERT normalizer's loop keeps its shape.
    #[inline(never)]
    fn normalized_segment(
        &self,
        n: crate::normalizer::TextNormalizer,
        seg: &[u8],
        pos: usize,
        seg_final: bool,
        sink: &mut Sink<'_>,
    ) -> Result<Option<Progress>, EncodeError> {
        let room = sink.out.get_mut(sink.written..).unwrap_or(&mut []);
        let map = crate::sentencepiece::CharsMap::EMPTY;
        let mut words = |w: &[u8], fin: bool, o: &mut [u32]| self.normalized_words(w, fin, o);
        match n.encode(&map, seg, seg_final, room, word_room, &mut words) {
            Ok(p) => {
                sink.written += p.written;
                Ok((!seg_final && p.consumed < seg.len()).then_some(Progress {
                    consumed: pos + p.consumed,
                    written: sink.written,
                }))
            }
            Err(e) => Err(e.within(pos, sink.written, sink.out.len())),
        }
    }

    /// Feed `text[from..end]` (whole characters) through the normalizer flags and the
    /// pre-tokenizer, then encode the last word: the encoder's loop, inlined in both callers.
    /// A pre-tokenizer other than `BertPreTokenizer` takes a loop of its own, chosen once per
    /// call: a test of it per character costs the BERT loop 6 % (minilm on target).
    #[inline(always)]
    fn words(
        &self,
        text: &[u8],
        from: usize,
        end: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        if !self.tables.split.is_bert() {
            return self.words_other(text, from, end, to);
        }
        self.words_by::<true>(text, from, end, to)
    }

    /// [`WpTokenizer::words`] for a pre-tokenizer other than `BertPreTokenizer`.
    #[inline(never)]
    fn words_other(
        &self,
        text: &[u8],
        from: usize,
        end: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        self.words_by::<false>(text, from, end, to)
    }

    /// The loop of [`WpTokenizer::words`], for `BertPreTokenizer` (`BERT`) or not.
    #[inline(always)]
    fn words_by<const BERT: bool>(
        &self,
        text: &[u8],
        from: usize,
        end: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        let mut i = from;
        while i < end {
            let (c, len) = next_char(text, i);
            self.push_char::<BERT>(c, i, to)?;
            i += len;
        }
        to.end(self, i)
    }

    /// Encode the words of `w`, normalized text, as a stream part: with `is_final` false, only
    /// up to the end of its last whitespace or punctuation character (the word after it could
    /// go on; text already normalized cannot change before it). Offsets are offsets in `w`.
    fn normalized_words(
        &self,
        w: &[u8],
        is_final: bool,
        out: &mut [u32],
    ) -> Result<Progress, EncodeError> {
        let end = if is_final {
            w.len()
        } else {
            let (mut i, mut end) = (0, 0);
            while i < w.len() {
                let (c, len) = next_char(w, i);
                i += len;
                if self.tables.split.ends_word(char_flags(c)) {
                    end = i;
                }
            }
            end
        };
        let mut sink = Sink { out, written: 0 };
        let mut word = Word {
            bytes: [0; MAX_WORD_BYTES],
            len: 0,
            chars: 0,
            start: 0,
            key: 0,
        };
        let mut to = Collect {
            word: &mut word,
            sink: &mut sink,
        };
        self.words(w, 0, end, &mut to)?;
        Ok(Progress {
            consumed: end,
            written: sink.written,
        })
    }

    /// The offset after the last character of `text` that ends a word whatever follows it (0
    /// when there is none): ASCII whitespace and punctuation (which no normalizer step
    /// changes: they end the word before them, and punctuation is a word of its own), and with
    /// `handle_chinese_chars` a whole CJK ideograph (a word of its own, unless the
    /// pre-tokenizer keeps spaces). A character that `clean_text` drops ends nothing. Which
    /// whitespace and punctuation end a word is the pre-tokenizer's
    /// ([`super::WordSplit`]).
    fn word_end_before(&self, text: &[u8]) -> usize {
        let t = self.tables;
        for (i, &b) in text.iter().enumerate().rev() {
            if b < 0x80 {
                let f = char_flags(b as char);
                let dropped = t.clean_text && f & DROP != 0;
                if !dropped && t.split.ends_word(f) {
                    return i + 1;
                }
            } else if b >= 0xC0 && t.handle_chinese_chars && !t.split.keeps_spaces() {
                let (c, len) = next_char(text, i);
                if c != char::REPLACEMENT_CHARACTER && char_flags(c) & CJK != 0 {
                    return i + len;
                }
            }
        }
        0
    }

    /// Feed the input character `c` at offset `at` through the normalizer and pre-tokenizer.
    /// Always inlined: the encoder's loop and the normalized path both call it, and out of
    /// line it costs the loop a call per character (minilm on target: 322 → 334 guest
    /// instructions per byte).
    #[inline(always)]
    fn push_char<const BERT: bool>(
        &self,
        c: char,
        at: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        let t = self.tables;
        let f = char_flags(c);
        if t.clean_text && f & DROP != 0 {
            return Ok(());
        }
        if !BERT {
            return self.push_other(c, f, at, to);
        }
        if t.handle_chinese_chars && f & CJK != 0 {
            to.end(self, at)?;
            self.normalized::<true>(c, f, at, to)?;
            return to.end(self, at);
        }
        self.normalized::<true>(c, f, at, to)
    }

    /// [`WpTokenizer::push_char`] for a pre-tokenizer other than `BertPreTokenizer`. The
    /// spaces `BertNormalizer` makes (`clean_text` turns whitespace into U+0020,
    /// `handle_chinese_chars` puts one on each side of a CJK ideograph) go through the class
    /// split like any character: removed (ending the word) when the pre-tokenizer drops
    /// whitespace, characters of the word when it keeps it.
    #[inline(always)]
    fn push_other(
        &self,
        c: char,
        f: u8,
        at: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        let t = self.tables;
        let space = char_flags(' ');
        if t.clean_text && f & SPACE != 0 {
            return self.split_by_class(' ', space, at, to);
        }
        if t.handle_chinese_chars && f & CJK != 0 {
            self.split_by_class(' ', space, at, to)?;
            self.normalized::<false>(c, f, at, to)?;
            return self.split_by_class(' ', space, at, to);
        }
        self.normalized::<false>(c, f, at, to)
    }

    /// `strip_accents` and `lowercase` of `c` (flags `f`), then each resulting character to
    /// the pre-tokenizer (`BERT`: `BertPreTokenizer`'s rule, else the tables' class split).
    #[inline]
    fn normalized<const BERT: bool>(
        &self,
        c: char,
        f: u8,
        at: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        let t = self.tables;
        if t.strip_accents {
            if f & MN != 0 {
                return Ok(());
            }
            if let Some(s) = stripped(c) {
                for &d in s.chars() {
                    self.lowered::<BERT>(d, char_flags(d), at, to)?;
                }
                return Ok(());
            }
        }
        self.lowered::<BERT>(c, f, at, to)
    }

    /// `lowercase` of `c`, then the pre-tokenizer. Always inlined into
    /// [`WpTokenizer::normalized`]: a call per character otherwise (minilm on target: 322 →
    /// 341 guest instructions per byte).
    #[inline(always)]
    fn lowered<const BERT: bool>(
        &self,
        c: char,
        f: u8,
        at: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        if self.tables.lowercase && !c.is_ascii_lowercase() {
            if c.is_ascii() {
                return self.split::<BERT>(c.to_ascii_lowercase(), f, at, to);
            }
            for d in c.to_lowercase() {
                let g = if d == c { f } else { char_flags(d) };
                self.split::<BERT>(d, g, at, to)?;
            }
            return Ok(());
        }
        self.split::<BERT>(c, f, at, to)
    }

    /// The pre-tokenizer: for `BertPreTokenizer` (`BERT`) whitespace ends a word and
    /// punctuation is a word of its own; other pre-tokenizers by their [`super::WordSplit`]'s
    /// class of `c`. Always inlined: out of line it is a call per character (minilm on
    /// target: 322 → 352 guest instructions per byte).
    #[inline(always)]
    fn split<const BERT: bool>(
        &self,
        c: char,
        f: u8,
        at: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        if !BERT {
            return self.split_by_class(c, f, at, to);
        }
        if f & SPACE != 0 {
            return to.end(self, at);
        }
        if f & PUNCT != 0 {
            to.end(self, at)?;
            to.push(c, at, 0);
            return to.end(self, at);
        }
        to.push(c, at, 0);
        Ok(())
    }

    /// [`WpTokenizer::split`] for a pre-tokenizer other than `BertPreTokenizer`: `c` (flags
    /// `f`) ends the open word when its class is removed, isolated or of another key.
    #[inline]
    fn split_by_class(
        &self,
        c: char,
        f: u8,
        at: usize,
        to: &mut impl Words,
    ) -> Result<(), EncodeError> {
        match self.tables.split.class(c, f) {
            Class::Removed => to.end(self, at),
            Class::Isolated => {
                to.end(self, at)?;
                to.push(c, at, 0);
                to.end(self, at)
            }
            Class::Joins(key) => {
                if to.open_key().is_some_and(|k| k != key) {
                    to.end(self, at)?;
                }
                to.push(c, at, key);
                Ok(())
            }
        }
    }

    /// Encode the collected word (if any) and start a new one. `end`: input offset after it.
    fn flush(&self, word: &mut Word, end: usize, sink: &mut Sink<'_>) -> Result<(), EncodeError> {
        if word.chars == 0 {
            return Ok(());
        }
        let before = sink.written;
        if let Err(needed) = self.word_ids(word, sink) {
            sink.written = before;
            return Err(EncodeError::no_room(
                word.start,
                end.saturating_sub(word.start),
                needed,
                sink.written,
                sink.out.len(),
            ));
        }
        word.chars = 0;
        word.len = 0;
        Ok(())
    }

    /// Ids of the word into the sink; `Err(needed)`, the ids the word needs, when the sink is
    /// full. A word that turns out to be unknown needs one slot however many pieces matched
    /// before its bad position, so once the sink is full the match goes on without writing, to
    /// find out.
    fn word_ids(&self, word: &Word, sink: &mut Sink<'_>) -> Result<(), usize> {
        let t = self.tables;
        let before = sink.written;
        let put = |sink: &mut Sink<'_>, id: u32| -> bool {
            match sink.out.get_mut(sink.written) {
                Some(slot) => {
                    *slot = id;
                    sink.written += 1;
                    true
                }
                None => false,
            }
        };
        let unknown = |sink: &mut Sink<'_>| {
            sink.written = before;
            if put(sink, t.unk_id) {
                Ok(())
            } else {
                Err(1)
            }
        };
        if word.chars > t.max_chars_per_word as usize || word.chars > MAX_WORD_CHARS {
            return unknown(sink);
        }
        let w = word.bytes.get(..word.len).unwrap_or(&[]);
        let (mut start, mut pieces, mut fits) = (0, 0, true);
        while start < w.len() {
            let Some((id, end)) = self.longest_piece(w, start) else {
                return unknown(sink);
            };
            fits = fits && put(sink, id);
            pieces += 1;
            start = end;
        }
        if fits {
            Ok(())
        } else {
            Err(pieces)
        }
    }

    /// The longest piece of the vocabulary at `w[start..]` (a continuation piece when
    /// `start > 0`) and where it ends.
    #[inline]
    fn longest_piece(&self, w: &[u8], start: usize) -> Option<(u32, usize)> {
        let t = self.tables;
        let mut end = w.len().min(start.saturating_add(t.longest as usize));
        while end > start {
            // Only ends at character boundaries.
            if w.get(end).is_none_or(|&b| b & 0xC0 != 0x80) {
                if let Some(id) = t.piece_id(w.get(start..end)?, start > 0) {
                    return Some((id, end));
                }
            }
            end -= 1;
        }
        None
    }
}

/// The character at `text[i]` and its length; a maximal invalid subsequence (Unicode's
/// "maximal subpart" practice, as `String::from_utf8_lossy`) is one U+FFFD. Always inlined:
/// the per-character loop of `encode_span` is the hot path (an out-of-line call cost 3 % of
/// WordPiece's encode instructions).
#[inline(always)]
pub(crate) fn next_char(text: &[u8], i: usize) -> (char, usize) {
    if let Some(&b) = text.get(i).filter(|b| b.is_ascii()) {
        return (b as char, 1);
    }
    match utf8::decode(text, i) {
        Utf8::Scalar(cp, len) => (
            char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER),
            len,
        ),
        Utf8::Invalid(k) | Utf8::Truncated(k) => (char::REPLACEMENT_CHARACTER, k.max(1)),
    }
}
