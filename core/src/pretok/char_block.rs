//! The character-block splitter: gpt2's and cl100k_base's piece boundaries over up to 61 bytes
//! of text written in two- and three-byte characters (Devanagari and the other Indic scripts,
//! Hangul, Thai, Cyrillic, ...), each character classified once.
//!
//! In such text most pieces are one to three characters (cl100k_base Indic: a vowel sign and
//! the letters after it, 5.4 bytes on average), and the per-piece fast path
//! ([`super::ascii_piece`]) classified most characters two or three times: once to choose the
//! rule, once in the rule's run, and once more as the first character of the next piece. Here
//! a block is walked once, left to right, by a six-state automaton over four kinds of
//! character, and every piece boundary it passes is a set bit of one `u64`, which the
//! encoder's cursor ([`super::Blocks`]) hands out one piece at a time.
//!
//! # Why three kinds suffice
//!
//! The automaton knows letters (`\p{L}`), the space U+0020, and `[^\s\p{L}\p{N}]` but `'`
//! ("others": punctuation, symbols, marks); any other character (a digit, any other
//! whitespace, `'`, a four-byte character, invalid UTF-8, a character cut by the block's or the
//! text's end) ends the block before it, and so does an ASCII letter that would start a piece
//! (an ASCII word, which the ASCII splitters take for less). Matching leftmost-first from a
//! piece start, over those three kinds both patterns reduce to:
//! - a letter starts a letter run (`\p{L}+`), which ends where a non-letter is;
//! - a space before a letter starts a letter run with it (` ?\p{L}+`, cl100k's
//!   `[^\r\n\p{L}\p{N}]?+\p{L}++`), before an other a run of others (` ?[^\s\p{L}\p{N}]+`);
//!   spaces before a space are a run, of which all but the last are a piece when a letter or
//!   an other follows (`\s+(?!\S)`; cl100k's `\s++$` and `\s*[\r\n]` cannot match there);
//! - an other starts a run of others that ends before a letter or a space (in cl100k the
//!   `[\r\n]*+` after it takes nothing: neither is known here); but in cl100k an other right
//!   before a letter is instead that letter run's prefix (`[^\r\n\p{L}\p{N}]?+\p{L}++` comes
//!   before the punctuation alternative, and a run of two others is taken by the latter,
//!   possessively, before the letter is seen).
//!
//! Every rule decides a boundary when it sees the character after it, so a boundary the
//! automaton passes holds for every continuation of the text, and the piece in progress when
//! the block ends is left to the next block or to the per-piece splitters. The tests check
//! every boundary against the full splitters ([`super::gpt2`], [`super::cl100k`]).

use super::unicode::{table_class, L_MASK, OTHER_MASK};
use super::Pattern;

/// Whether the encoder uses character blocks: on 64-bit targets (the hosts; on a
/// microcontroller their tables and code would cost flash for text the per-piece splitters
/// take as well).
pub(crate) const CHAR_BLOCKS: bool = cfg!(target_pointer_width = "64");

/// Bytes a block reads: the block's characters start in its first [`SPAN`] bytes, and each is
/// read as one four-byte word.
const WINDOW: usize = 64;

/// Bytes in which a block's characters start: its boundaries are bits 1..=61 of a `u64`
/// (shifted by one while the block is walked, see [`CUT`]).
const SPAN: usize = WINDOW - 3;

// The kinds of character (see the module docs).
/// `\p{L}`.
const LETTER: u8 = 0;
/// `[^\s\p{L}\p{N}]` but `'`.
const OTHER: u8 = 1;
/// U+0020.
const SPACE: u8 = 2;
/// Anything else: the block ends before it.
const UNKNOWN: u8 = 3;
/// `[A-Za-z]`: a letter, but one that starts a piece (an ASCII word) ends the block before
/// it, as [`UNKNOWN`] does: the ASCII splitters take ASCII words for less.
const ASCII_LETTER: u8 = 4;

/// The kind of each ASCII byte.
static ASCII_KIND: [u8; 128] = {
    let mut t = [UNKNOWN; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphabetic() {
            ASCII_LETTER
        } else if c == b' ' {
            SPACE
        } else if c.is_ascii_digit() || c.is_ascii_whitespace() || c == 0x0B || c == b'\'' {
            UNKNOWN
        } else {
            OTHER
        };
        b += 1;
    }
    t
};

/// The kind of a table class.
const fn class_kind(class: u8) -> u8 {
    if L_MASK >> class & 1 != 0 {
        LETTER
    } else if OTHER_MASK >> class & 1 != 0 {
        OTHER
    } else {
        UNKNOWN
    }
}

/// The kinds of the 64 code points `64 * row ..`, for a row of the two- and three-byte range;
/// surrogates (not well-formed) are unknown.
const fn row_kinds(row: usize) -> [u8; 64] {
    let mut kinds = [UNKNOWN; 64];
    let mut i = 0;
    while i < 64 {
        let cp = (row * 64 + i) as u32;
        if !(0xD800 <= cp && cp < 0xE000) {
            kinds[i] = class_kind(table_class(cp));
        }
        i += 1;
    }
    kinds
}

/// The one kind of every code point of a row, if it has one.
const fn uniform(kinds: &[u8; 64]) -> Option<u8> {
    let mut i = 1;
    while i < 64 {
        if kinds[i] != kinds[0] {
            return None;
        }
        i += 1;
    }
    Some(kinds[0])
}

/// The kinds of the Basic Multilingual Plane's non-ASCII code points in two levels, indexed by
/// the UTF-8 bytes without decoding them: a row per lead byte and first continuation byte
/// (`lead2`, `lead3`: the code point's high bits), then the kind by the last continuation
/// byte's six bits (`rows`). Rows of one kind (most: CJK, Hangul syllables, symbols) share
/// rows 0–3; the others (~160: scripts that mix letters and marks, such as Devanagari) have
/// their own. Overlong forms and surrogates have the unknown row, so the lookup also
/// checks what a decoder would. 1 KiB + 16 KiB, derived at compile time from the class tables.
struct KindTable {
    /// Row of the two-byte characters with lead byte `0xC0 | i` (0, 1: overlong).
    lead2: [u8; 32],
    /// Row of the three-byte characters whose code point's bits 6..16 are `i`.
    lead3: [u8; 1024],
    /// The rows; 0–3 are those of one kind (`rows[k]` all of kind `k`).
    rows: [[u8; 64]; 256],
}

/// See [`KindTable`].
static KINDS: KindTable = {
    let mut t = KindTable {
        lead2: [UNKNOWN; 32],
        lead3: [UNKNOWN; 1024],
        rows: [[UNKNOWN; 64]; 256],
    };
    let mut kind = 0;
    while kind < 4 {
        t.rows[kind] = [kind as u8; 64];
        kind += 1;
    }
    let mut next_row = 4;
    // Rows 2..32 are the two-byte characters, 32..1024 the three-byte ones; overlong forms
    // (rows 0..2 of `lead2`, 0..32 of `lead3`) keep the unknown row.
    let mut row = 2;
    while row < 1024 {
        let kinds = row_kinds(row);
        let id = match uniform(&kinds) {
            Some(kind) => kind,
            None => {
                assert!(next_row < 256, "more mixed rows than a byte numbers");
                t.rows[next_row] = kinds;
                next_row += 1;
                (next_row - 1) as u8
            }
        };
        if row < 32 {
            t.lead2[row] = id;
        } else {
            t.lead3[row] = id;
        }
        row += 1;
    }
    t
};

// The automaton's states: what the piece in progress holds so far.
/// Nothing (the block's start).
const START: u8 = 0;
/// A letter run (with its prefix, if any).
const LETTERS: u8 = 1;
/// One space.
const SPACE1: u8 = 2;
/// Two or more spaces.
const SPACES: u8 = 3;
/// One other (in cl100k, perhaps the prefix of a letter run).
const OTHER1: u8 = 4;
/// A run of others (with the space before it, if any).
const OTHERS: u8 = 5;

/// Transition flag (in `transitions`' table `t`, which numbers the states plainly; the flat
/// table moves them to [`STATE_BITS`]): a piece ends before the character. The flags sit at
/// bits 6 and 7 so that `next >> 6` shifted by the character's offset marks the boundary one
/// bit up (a piece that ends one byte earlier is the bit below), and the walk shifts them
/// down once at the end.
const CUT: u8 = 128;
/// Transition flag: a piece ends one byte before the character (before the last space of a
/// run of spaces, which goes with what follows).
const CUT_BEFORE_SPACE: u8 = 64;
/// The transition that ends the block before the character (bit 0, which no other transition
/// sets).
const STOP: u8 = 1;
/// The bits of a transition that hold the next state, times eight: the next transition's
/// index is `next & STATE_BITS | kind`.
const STATE_BITS: u8 = 0b11_1000;

/// The transitions of `pattern`, indexed by `state << 3 | kind`: the next state (times eight,
/// see [`STATE_BITS`]), with the flags of the boundary the character decides; [`STOP`] for
/// [`UNKNOWN`], for an [`ASCII_LETTER`] that does not continue a letter run, and for the
/// unused indexes.
const fn transitions(pattern: Pattern) -> [u8; 64] {
    let mut t = [[0u8; 3]; 6];
    // Where a piece starts with each kind.
    let from_start = [LETTERS, OTHER1, SPACE1];
    let mut kind = 0;
    while kind < 3 {
        t[START as usize][kind] = from_start[kind];
        // A letter run ends before any non-letter, a run of others before any non-other.
        t[LETTERS as usize][kind] = from_start[kind] | CUT;
        t[OTHERS as usize][kind] = from_start[kind] | CUT;
        kind += 1;
    }
    t[LETTERS as usize][LETTER as usize] = LETTERS;
    t[OTHERS as usize][OTHER as usize] = OTHERS;
    // A space takes the letter run or the run of others after it; spaces before a space are a
    // run, whose last space goes with what follows it.
    t[SPACE1 as usize] = [LETTERS, OTHERS, SPACES];
    t[SPACES as usize] = [
        LETTERS | CUT_BEFORE_SPACE,
        OTHERS | CUT_BEFORE_SPACE,
        SPACES,
    ];
    // An other: cl100k's prefix of a letter run, else a run of others.
    t[OTHER1 as usize] = match pattern {
        Pattern::Cl100k => [LETTERS, OTHERS, SPACE1 | CUT],
        _ => [LETTERS | CUT, OTHERS, SPACE1 | CUT],
    };
    let mut flat = [STOP; 64];
    let mut state = 0;
    while state < 6 {
        let mut kind = 0;
        while kind < 3 {
            let next = t[state][kind];
            flat[state << 3 | kind] = (next & 7) << 3 | (next & !7);
            kind += 1;
        }
        state += 1;
    }
    // An ASCII letter goes on with a letter run; anywhere else it would start an ASCII word.
    flat[(LETTERS as usize) << 3 | ASCII_LETTER as usize] = LETTERS << 3;
    flat
}

/// The automaton of gpt2.
static GPT2: [u8; 64] = transitions(Pattern::Gpt2);
/// The automaton of cl100k_base.
static CL100K: [u8; 64] = transitions(Pattern::Cl100k);

/// The kind and byte length of the character whose first bytes are `v` (little-endian: the
/// first byte in the low eight bits): [`UNKNOWN`] for a character the automaton does not
/// take, and for a byte that does not start a well-formed two- or three-byte sequence
/// (invalid UTF-8 goes to the full splitter, which takes it one byte at a time). Four-byte
/// characters are unknown too. No decoding: [`KINDS`] is indexed by the bytes' payload bits.
#[inline(always)]
fn kind_of_word(v: u32) -> (u8, usize) {
    let b0 = v as u8;
    if let Some(&kind) = ASCII_KIND.get(usize::from(b0)) {
        return (kind, 1);
    }
    if v & 0xC0E0 == 0x80C0 {
        // `110xxxxx 10xxxxxx`.
        let row = KINDS.lead2[(v & 0x1F) as usize];
        return (KINDS.rows[usize::from(row)][(v >> 8 & 0x3F) as usize], 2);
    }
    if v & 0xC0_C0F0 == 0x80_80E0 {
        // `1110xxxx 10xxxxxx 10xxxxxx`.
        let row = KINDS.lead3[((v & 0x0F) << 6 | (v >> 8 & 0x3F)) as usize];
        return (KINDS.rows[usize::from(row)][(v >> 16 & 0x3F) as usize], 3);
    }
    (UNKNOWN, 1)
}

/// The kind and byte length of the character at `bytes[o..]` (see [`kind_of_word`]); a
/// character cut by the end of `bytes` is unknown.
#[cfg(test)]
fn kind_at(bytes: &[u8], o: usize) -> (u8, usize) {
    let mut word = [0u8; 4];
    for (w, b) in word.iter_mut().zip(bytes.iter().skip(o)) {
        *w = *b;
    }
    let (kind, len) = kind_of_word(u32::from_le_bytes(word));
    if o + len > bytes.len() {
        return (UNKNOWN, 1);
    }
    (kind, len)
}

/// The piece boundaries of gpt2 or cl100k_base (`pattern`; o200k_base has none here) in the
/// block at `text[at..]` (`at` a piece start), as bits (bit `i`: a piece ends at `at + i`), how
/// far the block's characters were taken (to the first character the automaton does not
/// know, or past [`SPAN`] bytes), and whether it was the span that ended them (then the piece
/// in progress goes on in the next block). Nothing when fewer than [`WINDOW`] bytes are left.
#[inline(always)]
pub(crate) fn char_block(pattern: Pattern, text: &[u8], at: usize) -> (u64, usize, bool) {
    let Some(window) = text
        .get(at..at.saturating_add(WINDOW))
        .and_then(|b| <&[u8; WINDOW]>::try_from(b).ok())
    else {
        return (0, 0, false);
    };
    let automaton = match pattern {
        Pattern::Cl100k => &CL100K,
        _ => &GPT2,
    };
    // `ends` holds each boundary one bit up (see [`CUT`]).
    let (mut state, mut ends, mut o) = (START, 0u64, 0);
    while o < SPAN {
        let word = window
            .get(o..o + 4)
            .and_then(|w| <[u8; 4]>::try_from(w).ok())
            .map_or(0, u32::from_le_bytes);
        let (kind, len) = kind_of_word(word);
        let next = automaton[usize::from(state | kind) & 63];
        if next & STOP != 0 {
            return (ends >> 1, o, false);
        }
        ends |= u64::from(next >> 6) << o;
        state = next & STATE_BITS;
        o += len;
    }
    (ends >> 1, o, true)
}

/// [`starts_char_block_with`] at `text[at]` and the byte after it.
#[cfg(test)]
pub(crate) fn starts_char_block(pattern: Pattern, text: &[u8], at: usize) -> bool {
    match text.get(at..at + 2) {
        Some(&[b0, b1]) => starts_char_block_with(pattern, b0, b1),
        _ => false,
    }
}

/// A character block may start at a piece whose first bytes are `b0`, `b1`, and is worth its
/// cost there: for gpt2 and cl100k_base, a two- or three-byte character from U+0300 on
/// ([`LEADS`]), or an ASCII space or punctuation byte before one; but not general punctuation
/// (lead 0xE2: curly quotes and dashes in English, which the ASCII fast path knows) or a CJK
/// or fullwidth character (leads 0xE3–0xE9, 0xEF), whose letter runs are mostly longer than a
/// block. The ASCII fast path gives these positions up on 64-bit targets
/// ([`super::Fast::CharBlock`]), so that the encoder asks for a block
/// ([`super::Blocks::char_len`]).
#[inline(always)]
pub(crate) fn starts_char_block_with(pattern: Pattern, b0: u8, b1: u8) -> bool {
    if !CHAR_BLOCKS || !matches!(pattern, Pattern::Gpt2 | Pattern::Cl100k) {
        return false;
    }
    let lead = |b: u8| LEADS[usize::from(b)];
    lead(b0) || (matches!(ASCII_KIND.get(usize::from(b0)), Some(&(SPACE | OTHER))) && lead(b1))
}

/// [`starts_char_block_with`]'s leads: from U+0300 (combining marks, Greek, Cyrillic, Armenian,
/// Hebrew, Arabic, ...; not the Latin letters before it, whose words are mostly ASCII with an
/// accented letter or two, which the ASCII fast path takes for less) to U+FFFF, less the
/// leads 0xE2–0xE9 and 0xEF.
static LEADS: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0xCC;
    while b <= 0xEF {
        t[b] = !(0xE2 <= b && b <= 0xE9) && b != 0xEF;
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::test_random::{random_below, sum_over_piece_starts};
    use crate::pretok::{next_piece, Step};

    const PATTERNS: [Pattern; 2] = [Pattern::Gpt2, Pattern::Cl100k];

    /// Checks the boundaries of the block at `text[start..]` against the full splitter, not
    /// final (so: for every continuation of the text), and that the block stops only where
    /// it should; returns the bytes decided.
    fn check(pattern: Pattern, text: &[u8], start: usize) -> usize {
        let (mut bits, known, reached_span) = char_block(pattern, text, start);
        assert!(known < SPAN + 3 && start + known <= text.len());
        assert!(!reached_span || known >= SPAN);
        let mut at = start;
        while bits != 0 {
            let end = start + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            assert!(
                end <= start + known,
                "{pattern:?}: boundary past the known bytes"
            );
            assert_eq!(
                next_piece(pattern, text, at, false),
                Step::Piece { end },
                "{pattern:?}: piece at {at} of {:?}",
                String::from_utf8_lossy(&text[start..])
            );
            at = end;
        }
        at - start
    }

    /// Checks the block at every piece start of `text`; returns the bytes decided.
    fn check_text(pattern: Pattern, text: &[u8]) -> usize {
        sum_over_piece_starts(pattern, text, |at| check(pattern, text, at))
    }

    #[test]
    fn kinds_match_the_class_table() {
        use crate::pretok::CharClass::*;
        // Under Miri (slow) every 97th code point and the edges of each UTF-8 length.
        let step = if cfg!(miri) { 97 } else { 1 };
        let edges = [0x20, 0x27, 0x41, 0x7F, 0x80, 0x7FF, 0x800, 0xFFFF];
        for cp in (0..0x1_0000u32)
            .step_by(step)
            .chain(edges)
            .filter_map(char::from_u32)
        {
            let mut buf = [0u8; 4];
            let bytes = cp.encode_utf8(&mut buf).as_bytes();
            let expected = match crate::pretok::char_class(cp) {
                _ if cp == '\'' || cp == ' ' => {
                    if cp == ' ' {
                        SPACE
                    } else {
                        UNKNOWN
                    }
                }
                _ if cp.is_ascii_alphabetic() => ASCII_LETTER,
                UppercaseLetter | LowercaseLetter | TitlecaseLetter | ModifierLetter
                | OtherLetter => LETTER,
                Mark | Other => OTHER,
                _ => UNKNOWN,
            };
            let (kind, len) = kind_at(bytes, 0);
            assert_eq!(kind, expected, "{cp:?}");
            assert!(kind == UNKNOWN || len == bytes.len(), "{cp:?}");
            // Cut short, it is not taken.
            if bytes.len() > 1 {
                assert_eq!(kind_at(&bytes[..bytes.len() - 1], 0).0, UNKNOWN, "{cp:?}");
            }
        }
        // Ill-formed: overlong forms, surrogates, lone continuation and lead bytes.
        let bad: [&[u8]; 7] = [
            b"\xC1\x81",
            b"\xE0\x83\x80",
            b"\xED\xA0\x80",
            b"\xED\xBF\xBF",
            b"\x80\x80\x80",
            b"\xE0\xE0\x80",
            b"\xF0\x9F\x98\x80",
        ];
        for b in bad {
            assert_eq!(kind_at(b, 0).0, UNKNOWN, "{b:?}");
        }
    }

    #[test]
    fn agrees_with_the_full_splitter_on_edge_cases() {
        let texts = [
            "नमस्ते दुनिया। यह एक परीक्षण है, “उद्धरण” और  दो  स्पेस   तीन ॥ ।। ्् ्क क्",
            "안녕하세요 세계! 한국어  문장입니다. ㅋㅋ ,한 .한 한. 한.. ..한",
            "Привет, мир! Это — тест: «кавычки» и ‘апостроф’ ‐ x ̀ ́a ̀́a à .̀a",
            "ไทย ภาษา ๆ ฯ กั้น  ეს ქართული  Ελληνικά, κείμενο· ܐܒ ا ل عَرَبِيّ",
            "mixed ascii, words; and (punctuation) [x] {y} <z> @#$%^&*-=+|\\ ~`_ ?!",
            "ab'cd x'y 'क क'ख क 1 क२ ३ क\tख क\nख क\r\nख  \n  क",
        ];
        // Under Miri (slow) two of the four cuts.
        let cuts: &[usize] = if cfg!(miri) { &[0, 3] } else { &[0, 1, 2, 3] };
        for pattern in PATTERNS {
            let mut decided = 0;
            for text in texts {
                for &cut in cuts {
                    // Also cut at every byte, so that characters cut by the end occur.
                    let bytes = &text.as_bytes()[..text.len() - cut.min(text.len())];
                    decided += check_text(pattern, bytes);
                }
            }
            assert!(
                decided > 250 * cuts.len(),
                "{pattern:?}: decided {decided} bytes"
            );
        }
    }

    #[test]
    fn the_cursor_gives_the_full_splitters_pieces() {
        // Hindi, Korean and Russian with ASCII, digits and newlines between them (blocks that
        // end at a character they do not know), and pieces the caller takes without asking
        // the cursor (it must start again at the next position it is asked).
        let mut text = String::new();
        // Under Miri (slow) one round of the mix (it repeats every 12 lines).
        for i in 0..if cfg!(miri) { 12 } else { 60 } {
            text.push_str("यह एक परीक्षण है, और “उद्धरण” भी। ");
            if i % 3 == 0 {
                text.push_str("안녕하세요 세계, 한국어 문장입니다. ");
            }
            if i % 4 == 1 {
                text.push_str("Это тест — «кавычки». ");
            }
            text.push_str(&"x = 12; it's\n\t".repeat(i % 2));
            text.push_str("  क्षत्रिय ्् ।\n");
        }
        let text = text.as_bytes();
        for pattern in PATTERNS {
            let mut blocks = super::super::Blocks::new();
            let (mut at, mut piece, mut from_blocks) = (0, 0, 0);
            while at < text.len() {
                let Step::Piece { end } = next_piece(pattern, text, at, true) else {
                    panic!("no piece at {at}");
                };
                piece += 1;
                // As the encoder asks: the current block (or a new ASCII one), the ASCII fast
                // path, then a new character block.
                if piece % 7 != 0 {
                    let len = blocks.next_len(pattern, text, at).or_else(|| {
                        match crate::pretok::fast_piece(pattern, text, at) {
                            crate::pretok::Fast::Piece(p) => {
                                assert_eq!(at + p.len, end, "{pattern:?}: piece at {at}");
                                None
                            }
                            fast => blocks.char_len(pattern, text, at, fast),
                        }
                    });
                    if let Some(len) = len {
                        assert_eq!(at + len, end, "{pattern:?}: piece at {at}");
                        from_blocks += 1;
                    }
                }
                at = end;
            }
            assert!(
                from_blocks > piece / 2,
                "{pattern:?}: {from_blocks} of {piece} pieces from blocks"
            );
        }
    }

    #[test]
    fn agrees_with_the_full_splitter_on_random_text() {
        // Runs of one kind of character, of random lengths, so that every pair and triple of
        // kinds meets; invalid bytes and characters the automaton does not know between them.
        const KINDS: [&str; 12] = [
            "कखगमनसतरह",
            "\u{93e}\u{93f}\u{940}\u{94d}\u{902}\u{903}",
            "가나다한국",
            "abcXYZ",
            "αβγЖжя",
            " ",
            " ",
            ".,!-()\"/#।“”",
            "'\t\n\r0१२",
            "\u{300}\u{301}\u{5d0}\u{627}\u{64e}",
            "中文かな！",
            "\u{a0}\u{2000}\u{3000}\u{1F600}\u{FFFD}",
        ];
        let (texts, floor) = if cfg!(miri) { (4, 50) } else { (3000, 300_000) };
        for pattern in PATTERNS {
            let mut rand = random_below(0x2545_F491_4F6C_DD1D);
            let mut decided = 0;
            for _ in 0..texts {
                let mut text = Vec::new();
                while text.len() < 200 {
                    let kind: Vec<char> = KINDS[rand(KINDS.len())].chars().collect();
                    let long = rand(8) == 0;
                    let run = 1 + rand(if long { 12 } else { 3 });
                    for _ in 0..run {
                        let mut buf = [0u8; 4];
                        text.extend_from_slice(
                            kind[rand(kind.len())].encode_utf8(&mut buf).as_bytes(),
                        );
                    }
                    if rand(40) == 0 {
                        // An ill-formed sequence.
                        let bad: [&[u8]; 4] =
                            [b"\xE0\x83\x80", b"\xED\xA0\x80", b"\x80", b"\xE0\xA4"];
                        text.extend_from_slice(bad[rand(bad.len())]);
                    }
                }
                decided += check_text(pattern, &text);
            }
            assert!(
                decided > floor,
                "{pattern:?}: the character blocks decided only {decided} bytes"
            );
        }
    }
}
