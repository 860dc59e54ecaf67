//! SentencePiece's character map (`precompiled_charsmap`: the `nmt_nfkc`, `nmt_nfkc_cf` and
//! `nfkc` rules, or rules a model was trained with from a TSV file).
//!
//! At each position the normalizer takes the *longest* key that is a prefix of the rest of
//! the text (over bytes, as `Darts::DoubleArray::commonPrefixSearch` walks) and writes its
//! replacement; where no key matches, the character is itself (a malformed byte: U+FFFD).
//!
//! Two forms of the same function:
//! - **Darts**: the map as `sentencepiece` stores it, a Darts-clone double array over the
//!   keys' bytes and the NUL-terminated replacements (any map; `nmt_nfkc`: 240 KB).
//! - **Compact**: for maps whose keys of two or more characters are exactly the sequences
//!   whose characters' *images* (a character's own one-character replacement, or itself when
//!   it is no key) form one of a short list of sequences, or a Hangul syllable's conjoining
//!   jamo L V or L V T (whose replacement is the syllable). `nmt_nfkc` and `nfkc` are such
//!   maps: their 220,267 longer keys are every spelling (full-width, half-width, compatibility
//!   and circled forms) of 949 sequences and the 11,172 syllables. The compact form stores the
//!   one-character keys as runs of code points, the sequences sorted by their images' bytes,
//!   and a flag for the Hangul rule (`nmt_nfkc`: about 52 KB). `picobpe-model` builds it only
//!   after enumerating the keys it generates and finding them equal, with equal
//!   replacements, to the double array's.
//!
//! Invariants (checked by `picobpe-model` when it imports or loads a map, relied on here
//! without panicking: damaged tables read as "no match", never out of bounds): every unit
//! the walk can reach is in `units`; every value names bytes inside `strings`; every key is
//! well-formed UTF-8 of at most `max_key` bytes; runs and sequences are sorted.

/// Set in a run's value when the run maps each character to one character (the first to
/// the value's low 21 bits, the next ones to the following code points); clear, the value is
/// a replacement in `strings` (`offset << 8 | length`) for a run of one character.
pub const RUN_CHAR: u32 = 1 << 31;

/// The longest sequence the compact form's sequence list holds, in characters.
pub const MAX_SEQUENCE_CHARS: usize = 4;

/// A character map, borrowed from baked or loaded tables. The empty map (no units, no runs)
/// is the identity: no key matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CharsMap<'a> {
    /// Darts form: the double array, one `u32` unit per node (Darts-clone's layout: bits 0–7
    /// the label, bit 8 "has a leaf", bit 9 the offset's scale, bits 10–31 the offset; a leaf
    /// unit has bit 31 set and holds its value in bits 0–30). Empty in the compact form.
    pub units: &'a [u32],
    /// Darts form: the replacements, each ended by a NUL (a leaf's value is its offset here).
    /// Compact form: the replacements and the sequences' bytes, without separators.
    pub strings: &'a [u8],
    /// Compact form: runs of one-character keys, sorted, each `first code point << 11 |
    /// (length − 1)`.
    pub runs: &'a [u32],
    /// Compact form: per run, its replacement ([`RUN_CHAR`], or `offset << 8 | length` in
    /// `strings`).
    pub run_values: &'a [u32],
    /// Compact form: the sequences (images of two to [`MAX_SEQUENCE_CHARS`] characters),
    /// sorted by their bytes, each `offset << 8 | length` in `strings`; then, at the same
    /// index in `sequence_values`, its replacement.
    pub sequences: &'a [u32],
    /// Compact form: per sequence, its replacement (`offset << 8 | length` in `strings`).
    pub sequence_values: &'a [u32],
    /// Compact form: the characters that occur after the first in a key of two or more
    /// characters, as sorted runs (`first << 11 | (length − 1)`): a text whose second
    /// character is none of them matches at most a one-character key.
    pub tails: &'a [u32],
    /// Compact form: the ASCII characters that are one-character keys (bit `c % 64` of word
    /// `c / 64`).
    pub ascii: [u64; 2],
    /// Compact form: the bytes some key starts with (bit `b % 64` of word `b / 64`): text
    /// starting with another byte matches nothing, after one load (most CJK lead bytes).
    pub lead: [u64; 4],
    /// Compact form: 256 words, bit `b % 64` of word `2a + b / 64` set when a longer key
    /// starts with the ASCII characters `a` then `b` (`1⁄4`, `a/c`); empty: no such filter.
    pub ascii_pairs: &'a [u64],
    /// Compact form: for the code points below U+10000, two bits each (bit 0: a one-character
    /// key; bit 1: found after the first character of a longer key, as in `tails`), 128 code
    /// points to a block of four words in `bmp_blocks`: `bmp_index[cp >> 7]` is the block.
    /// Empty: no such filter (the runs are searched).
    pub bmp_index: &'a [u8],
    /// Compact form: the distinct blocks of [`CharsMap::bmp_index`], four words each.
    pub bmp_blocks: &'a [u64],
    /// Compact form: conjoining jamo L V and L V T are keys too, replaced by their syllable.
    pub hangul: bool,
    /// The longest key, in bytes: how far past a position a match can read (a stream keeps
    /// this many bytes back before it cuts a word).
    pub max_key: u32,
}

/// A key's replacement: bytes of the tables, or one character the compact form computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacement<'a> {
    /// These bytes.
    Bytes(&'a [u8]),
    /// This character.
    Char(char),
}

impl<'a> Replacement<'a> {
    /// The replacement's bytes (a character's encoded into `buf`).
    #[inline]
    pub fn bytes<'b>(&self, buf: &'b mut [u8; 4]) -> &'b [u8]
    where
        'a: 'b,
    {
        match *self {
            Replacement::Bytes(b) => b,
            Replacement::Char(c) => {
                let (bytes, len) = crate::utf8::encode(c);
                *buf = bytes;
                buf.get(..len).unwrap_or(&[])
            }
        }
    }
}

/// The bytes `offset << 8 | length` names in `strings` (empty when out of range).
#[inline]
fn named(strings: &[u8], at: u32) -> &[u8] {
    let (start, len) = ((at >> 8) as usize, (at & 0xFF) as usize);
    strings.get(start..start + len).unwrap_or(&[])
}

/// The offset stored in a Darts-clone unit: from a node to its children's base (bits 10–31,
/// shifted left by 8 more when bit 9 is set).
#[inline]
pub fn unit_offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

impl<'a> CharsMap<'a> {
    /// The empty map (the identity), as a constant.
    pub const EMPTY: CharsMap<'static> = CharsMap {
        units: &[],
        strings: &[],
        runs: &[],
        run_values: &[],
        sequences: &[],
        sequence_values: &[],
        tails: &[],
        ascii: [0; 2],
        lead: [0; 4],
        ascii_pairs: &[],
        bmp_index: &[],
        bmp_blocks: &[],
        hangul: false,
        max_key: 0,
    };

    /// True when the ASCII byte `b` alone is a key (one load in the compact form).
    #[inline]
    pub(crate) fn ascii_key(&self, b: u8) -> bool {
        if self.units.is_empty() {
            let word = self.ascii.get(usize::from(b / 64)).copied().unwrap_or(0);
            return word >> (b % 64) & 1 != 0;
        }
        matches!(self.longest(&[b]), Some((1, _)))
    }

    /// True for the identity map (no keys).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.units.is_empty() && self.runs.is_empty()
    }

    /// The longest key that `text` starts with: its length and its replacement. `None` when
    /// no key matches (or the map is empty).
    #[inline]
    pub fn longest(&self, text: &[u8]) -> Option<(usize, Replacement<'a>)> {
        if self.units.is_empty() {
            return self.longest_compact(text);
        }
        let units = self.units;
        let mut node = unit_offset(*units.first()?);
        let mut best: Option<(usize, usize)> = None;
        for (i, &b) in text.iter().enumerate() {
            node ^= usize::from(b);
            let Some(&unit) = units.get(node) else {
                break;
            };
            if unit & ((1 << 31) | 0xFF) != u32::from(b) {
                break;
            }
            node ^= unit_offset(unit);
            if unit >> 8 & 1 != 0 {
                if let Some(&leaf) = units.get(node) {
                    best = Some((i + 1, (leaf & !(1 << 31)) as usize));
                }
            }
        }
        let (len, value) = best?;
        let rest = self.strings.get(value..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        Some((len, Replacement::Bytes(rest.get(..end)?)))
    }

    /// The one-character key `c`'s replacement, if `c` is a key.
    #[inline]
    fn single(&self, c: char) -> Option<Replacement<'a>> {
        let cp = u32::from(c);
        // The last run starting at or before `c`.
        let i = self
            .runs
            .partition_point(|&r| r >> 11 <= cp)
            .checked_sub(1)?;
        let run = *self.runs.get(i)?;
        let (first, len) = (run >> 11, (run & 0x7FF) + 1);
        if cp - first >= len {
            return None;
        }
        let value = *self.run_values.get(i)?;
        if value & RUN_CHAR != 0 {
            return char::from_u32((value & 0x1F_FFFF) + (cp - first)).map(Replacement::Char);
        }
        Some(Replacement::Bytes(named(self.strings, value)))
    }

    /// True when `c` is in `runs` (sorted `first << 11 | (length − 1)` runs).
    #[inline]
    fn in_runs(runs: &[u32], c: u32) -> bool {
        let i = runs.partition_point(|&r| r >> 11 <= c);
        i.checked_sub(1)
            .and_then(|i| runs.get(i))
            .is_some_and(|&r| c - (r >> 11) <= (r & 0x7FF))
    }

    /// The compact form's longest match: the sequences of two or more characters (through
    /// their images), else the first character alone. Most characters are settled by the
    /// filters: an ASCII character followed by a character that no longer key holds after
    /// its first is a key only if its bit is set.
    fn longest_compact(&self, text: &[u8]) -> Option<(usize, Replacement<'a>)> {
        let &b0 = text.first()?;
        if self.lead.get(usize::from(b0 / 64)).copied().unwrap_or(0) >> (b0 % 64) & 1 == 0 {
            return None;
        }
        let (c, len) = if b0 < 0x80 {
            (char::from(b0), 1)
        } else {
            let c = crate::utf8::char_at(text, 0)?;
            (c, c.len_utf8())
        };
        let next = match text.get(len) {
            Some(&b) if b < 0x80 => u32::from(b),
            Some(_) => crate::utf8::char_at(text, len).map_or(0, u32::from),
            None => 0,
        };
        let longer = if b0 < 0x80 && next < 0x80 {
            let w = 2 * usize::from(b0) + (next / 64) as usize;
            self.ascii_pairs
                .get(w)
                .is_none_or(|&w| w >> (next % 64) & 1 != 0)
        } else {
            match self.bmp_class(next) {
                Some(class) => class & 2 != 0,
                None => Self::in_runs(self.tails, next),
            }
        };
        if longer {
            return self.longest_sequence(text);
        }
        // A one-character key at most.
        let key = if b0 < 0x80 {
            let word = self.ascii.get(usize::from(b0 / 64)).copied().unwrap_or(0);
            word >> (b0 % 64) & 1 != 0
        } else {
            self.bmp_class(u32::from(c))
                .is_none_or(|class| class & 1 != 0)
        };
        if !key {
            return None;
        }
        Some((len, self.single(c)?))
    }

    /// The two bits [`CharsMap::bmp_index`] keeps for `cp`; `None` above U+FFFF or without
    /// the filter.
    #[inline]
    fn bmp_class(&self, cp: u32) -> Option<u64> {
        if cp > 0xFFFF {
            return None;
        }
        let block = usize::from(*self.bmp_index.get((cp >> 7) as usize)?);
        let word = self
            .bmp_blocks
            .get(4 * block + ((cp & 127) >> 5) as usize)?;
        Some(word >> (2 * (cp & 31)) & 3)
    }

    /// [`CharsMap::longest_compact`] without the filters. Out of line: its work arrays stay
    /// out of the filters' path.
    #[inline(never)]
    fn longest_sequence(&self, text: &[u8]) -> Option<(usize, Replacement<'a>)> {
        // The first characters' images, UTF-8, and where each character ends in `text`.
        let mut image = [0u8; 4 * MAX_SEQUENCE_CHARS];
        let mut image_end = [0usize; MAX_SEQUENCE_CHARS];
        let mut text_end = [0usize; MAX_SEQUENCE_CHARS];
        let mut jamo = [0u32; MAX_SEQUENCE_CHARS];
        let (mut n, mut pos, mut at) = (0usize, 0usize, 0usize);
        let mut first = None;
        while n < MAX_SEQUENCE_CHARS {
            let Some(c) = crate::utf8::char_at(text, pos) else {
                break;
            };
            let own = self.single(c);
            if n == 0 {
                first = own.map(|r| (c.len_utf8(), r));
            }
            // A key of two or more characters holds only characters whose image is one
            // character.
            let d = match own {
                None => c,
                Some(Replacement::Char(d)) => d,
                Some(Replacement::Bytes(b)) => match crate::utf8::char_at(b, 0) {
                    Some(d) if d.len_utf8() == b.len() => d,
                    _ => break,
                },
            };
            let (bytes, len) = crate::utf8::encode(d);
            let (Some(slot), Some(src)) = (image.get_mut(at..at + len), bytes.get(..len)) else {
                break;
            };
            crate::slice_ops::copy(slot, src);
            at += d.len_utf8();
            pos += c.len_utf8();
            if let (Some(e), Some(t), Some(j)) =
                (image_end.get_mut(n), text_end.get_mut(n), jamo.get_mut(n))
            {
                (*e, *t, *j) = (at, pos, u32::from(d));
            }
            n += 1;
        }
        for k in (2..=n).rev() {
            let (Some(&e), Some(&t)) = (image_end.get(k - 1), text_end.get(k - 1)) else {
                continue;
            };
            if let Some(seq) = image.get(..e) {
                if let Some(to) = self.sequence(seq) {
                    return Some((t, Replacement::Bytes(to)));
                }
            }
            if self.hangul && k <= 3 {
                if let Some(s) = jamo.get(..k).and_then(hangul_syllable) {
                    return Some((t, Replacement::Char(s)));
                }
            }
        }
        first
    }

    /// The replacement of the sequence whose images' bytes are `seq`.
    #[inline]
    fn sequence(&self, seq: &[u8]) -> Option<&'a [u8]> {
        let strings = self.strings;
        let i = self
            .sequences
            .binary_search_by(|&s| named(strings, s).cmp(seq))
            .ok()?;
        Some(named(strings, *self.sequence_values.get(i)?))
    }
}

/// The Hangul syllable of conjoining jamo L V or L V T (Unicode's composition rule), if
/// `jamo` (code points) is such a sequence.
pub fn hangul_syllable(jamo: &[u32]) -> Option<char> {
    if jamo.len() > 3 {
        return None;
    }
    let (l, v) = (
        jamo.first()?.checked_sub(0x1100)?,
        jamo.get(1)?.checked_sub(0x1161)?,
    );
    if l >= 19 || v >= 21 {
        return None;
    }
    let t = match jamo.get(2) {
        None => 0,
        Some(&t) => match t.checked_sub(0x11A7) {
            Some(t @ 1..=27) => t,
            _ => return None,
        },
    };
    char::from_u32(0xAC00 + (l * 21 + v) * 28 + t)
}
