//! Compiled patterns: any pre-tokenization regex the hand-rolled splitters do not know, as a
//! deterministic automaton that the host builds (`picobpe_model::compile_pattern`, with
//! `regex-automata`) and this module walks, without a regex engine, allocation or panics.
//!
//! # What the automaton is
//!
//! The regex's top-level alternatives are patterns `0..n` of one anchored, leftmost-first DFA
//! over bytes: a search from a piece start finds what a backtracking engine (`fancy-regex`)
//! finds there, and which alternative matched. Matches are reported one byte late, as
//! `regex-automata`'s DFAs report them: the state reached *after* the byte at `i` says "a match
//! of pattern `p` ended at `i`"; the end-of-input transition says whether one ends at the
//! text's end (`$`, `\z`).
//!
//! One look-around is handled exactly: an alternative `X+(?!C)` (a greedy run of one class,
//! then a negative look-ahead on one class whose complement lies inside `X`, such as
//! `\s+(?!\S)`) is compiled as `X+(?:[^C]|\z)` and flagged; when it matches other than at the
//! text's end, the last character it consumed was the look-ahead's and is given back. Because
//! the run is greedy and `[^C] ⊆ X`, the backtracker takes the `\z` branch whenever the run
//! reaches the end, so "matched at the end" and "matched through the look-ahead character"
//! never meet at the same end.
//!
//! # Bytes and invalid UTF-8
//!
//! The automaton sees each well-formed character's bytes; every byte that is not part of a
//! well-formed sequence is fed as U+E000 (`EE 80 80`), which is the rule of the hand-rolled
//! splitters ([`crate::pretok`]'s module docs): an invalid byte splits like a private-use
//! character, so a compiled pattern and a hand-rolled one with the same regex split every
//! byte string alike.
//!
//! # Layout (`u32` words)
//!
//! | words | content |
//! |---|---|
//! | 0 | [`MAGIC`] |
//! | 1, 2, 3 | number of states `S` (≤ 65,536; state 0 is the dead state), start state, number of patterns `P` (low 24 bits) with the [`SplitRule`] in the high 8 ([`SplitRule::bits`]; 0 is `Isolated`) |
//! | 4, 5 | number of byte classes `A` (1 ..= 256), number of rows `R` |
//! | 6 .. 70 | the class of each byte, four bytes to a word, little-endian |
//! | then P | per pattern: flags ([`LOOK_AHEAD`]) |
//! | then 4·S | per state: first transition, `count \| match << 16`, `eoi_match \| settled << 16`, row (0: none, the state reads its ranges; `r + 1`: row `r`, which it reads for every byte) (a match is pattern + 1; 0 is none; [`SETTLED`]) |
//! | then R·⌈A/2⌉ | rows: the next state for each class, two 16-bit states to a word, low half first |
//! | then T | transitions `lo \| hi << 8 \| next << 16` (`lo ≥ 0x80`), each state's sorted by `lo`, disjoint |
//!
//! A state at a character boundary (one that reads some ASCII byte), and a state inside a
//! character whose ranges would be many (the host's choice: more than 16), has a row: the
//! bytes that every such state treats alike share a class, so rows are short (Llama 3's
//! regex: 1,609 states, 102 rows of 111 classes). Any other state, inside a multi-byte
//! character, reads continuation bytes through its few ranges; an ASCII byte, or a byte
//! outside every range, leads it to the dead state.
//! [`CompiledPattern::new`] checks all of this once, so a walk never reads out of range.
//!
//! # Cost
//!
//! Two table reads (class, row) per byte at a character boundary, and a binary search over a
//! state's ranges (most have one to four) per byte inside a character.
//! Finding where the next match starts, when none starts at a position (the text between
//! matches of a `Split` pattern), tries each position in turn: a pattern whose attempts run
//! long before failing makes that quadratic in the gap.

use super::Step;
use crate::utf8::{decode, Utf8};

/// First word of a compiled pattern: `PDFA` in ASCII, little-endian.
pub const MAGIC: u32 = u32::from_le_bytes(*b"PDFA");

/// Pattern flag: the alternative ended in a one-character negative look-ahead (see the module
/// docs); a match that does not end at the text's end gives back its last character.
pub const LOOK_AHEAD: u32 = 1;

/// Bit of a state's end-of-input word: the state is *settled*: whatever follows, the match is
/// the one the end of input gives (every byte leads to a state that reports that match and
/// then reads nothing more). Never set for a pattern with [`LOOK_AHEAD`].
pub const SETTLED: u32 = 1 << 16;

/// Words before the byte classes.
const HEADER: usize = 6;
/// Words of the class map (one byte per byte).
const CLASS_WORDS: usize = 64;
/// Words per state record.
const STATE_WORDS: usize = 4;
/// The bytes fed for an invalid byte: U+E000.
const INVALID_AS: [u8; 3] = [0xEE, 0x80, 0x80];

/// How a `Split`'s matches and the text between them make pieces (`tokenizers`'
/// `SplitDelimiterBehavior`). Segments are the matches and the runs of text between them;
/// with [`SplitRule::invert`], the runs count as the matches and the matches as the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitBehavior {
    /// Every segment is a piece.
    Isolated,
    /// A match joins the run before it (one that follows another match stands alone).
    MergedWithPrevious,
    /// A match joins the run after it (one followed by another match stands alone).
    MergedWithNext,
    /// Consecutive matches make one piece; each run is a piece.
    Contiguous,
    /// Matches are dropped ([`Step::Skip`]); each run is a piece. Inverted (`tokenizers`'
    /// `Whitespace`, CLIP's pattern), the runs are dropped and each match is a piece.
    Removed,
}

/// A `Split`'s behaviour and whether it is inverted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitRule {
    /// How segments make pieces.
    pub behavior: SplitBehavior,
    /// The runs between matches are the matches (`invert: true`).
    pub invert: bool,
}

impl SplitRule {
    /// `Isolated`, not inverted: the rule of every hand-rolled pattern.
    pub const ISOLATED: SplitRule = SplitRule {
        behavior: SplitBehavior::Isolated,
        invert: false,
    };

    /// The layout's byte: bits 0-1 the behaviour in declaration order (`Isolated` to
    /// `Contiguous`), bit 2 `invert`, bit 3 `Removed` (with bits 0-1 clear; a later bit, so
    /// that the bytes of the first four behaviours kept their values).
    pub const fn bits(self) -> u32 {
        let b = match self.behavior {
            SplitBehavior::Isolated => 0,
            SplitBehavior::MergedWithPrevious => 1,
            SplitBehavior::MergedWithNext => 2,
            SplitBehavior::Contiguous => 3,
            SplitBehavior::Removed => 8,
        };
        b | (self.invert as u32) << 2
    }

    /// The rule of a layout byte (`None` for bits above 3, or bit 3 with bits 0-1).
    pub const fn from_bits(bits: u32) -> Option<SplitRule> {
        let behavior = match bits & 11 {
            0 => SplitBehavior::Isolated,
            1 => SplitBehavior::MergedWithPrevious,
            2 => SplitBehavior::MergedWithNext,
            3 => SplitBehavior::Contiguous,
            8 => SplitBehavior::Removed,
            _ => return None,
        };
        if bits > 15 {
            return None;
        }
        Some(SplitRule {
            behavior,
            invert: bits & 4 != 0,
        })
    }
}

/// Why a compiled pattern's words were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompiledPatternError {
    /// Fewer words than the header and the tables it announces, or more.
    BadLength,
    /// The first word is not [`MAGIC`].
    BadMagic,
    /// No states, more than 65,536, a start state out of range, or the dead state (0) has
    /// transitions or a match.
    BadStates,
    /// A pattern flag other than [`LOOK_AHEAD`], a match naming a pattern that does not
    /// exist, or an unknown split rule.
    BadPattern,
    /// A state's transitions run past the transition table, are not sorted and disjoint, have
    /// `lo > hi`, start below `0x80`, or lead to a state that does not exist.
    BadTransition,
    /// The byte classes: none or more than 256, a byte of a class that does not exist, a
    /// state naming a row that does not exist, or a row leading to a state that does not exist.
    BadClasses,
}

impl core::fmt::Display for CompiledPatternError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            CompiledPatternError::BadLength => "compiled pattern: length does not match its header",
            CompiledPatternError::BadMagic => {
                "compiled pattern: bad magic (not a compiled pattern)"
            }
            CompiledPatternError::BadStates => "compiled pattern: bad state count or start state",
            CompiledPatternError::BadPattern => {
                "compiled pattern: unknown pattern flag or a match of a pattern that does not exist"
            }
            CompiledPatternError::BadTransition => {
                "compiled pattern: transition out of range, unsorted or to a missing state"
            }
            CompiledPatternError::BadClasses => {
                "compiled pattern: byte class or row out of range, or to a missing state"
            }
        })
    }
}

/// A checked compiled pattern over borrowed words (baked into flash or read from a model file).
#[derive(Clone, Copy, Debug)]
pub struct CompiledPattern<'a> {
    parts: CompiledParts<'a>,
}

/// The tables of a compiled pattern, as [`CompiledPattern::parts`] gives them and
/// [`CompiledPattern::from_parts`] takes them (for code generators that bake them; the
/// module docs give each one's layout).
#[derive(Clone, Copy, Debug)]
pub struct CompiledParts<'a> {
    /// Per pattern: its flags.
    pub flags: &'a [u32],
    /// The class of each byte, four to a word.
    pub classes: &'a [u32],
    /// Per state: its four-word record.
    pub states: &'a [u32],
    /// The rows, `row_words` words each.
    pub rows: &'a [u32],
    /// The ranges of the states without a row.
    pub transitions: &'a [u32],
    /// The start state.
    pub start: u32,
    /// Words per row: half the number of classes, rounded up.
    pub row_words: u32,
    /// How the matches make pieces.
    pub rule: SplitRule,
}

/// Where a match that starts at a position ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchAt {
    /// A match `start..end`, `end > start`, the same for every continuation of the text.
    Match {
        /// Exclusive end.
        end: usize,
    },
    /// No match starts here, whatever follows.
    NoMatch,
    /// The answer depends on bytes after the text (only when `is_final` is false).
    NeedMore,
}

impl<'a> CompiledPattern<'a> {
    /// Check `words` (layout in the module docs) and borrow them.
    pub fn new(words: &'a [u32]) -> Result<CompiledPattern<'a>, CompiledPatternError> {
        use CompiledPatternError as E;
        let Some(&[magic, n_states, start, patterns_word, n_classes, n_rows]) = words.get(..HEADER)
        else {
            return Err(E::BadLength);
        };
        let n_patterns = patterns_word & 0xFF_FFFF;
        let rule = SplitRule::from_bits(patterns_word >> 24).ok_or(E::BadPattern)?;
        if magic != MAGIC {
            return Err(E::BadMagic);
        }
        if n_states == 0 || n_states > 1 << 16 || start >= n_states || start == 0 {
            return Err(E::BadStates);
        }
        if n_classes == 0 || n_classes > 256 || n_rows > n_states {
            return Err(E::BadClasses);
        }
        let classes = words
            .get(HEADER..HEADER + CLASS_WORDS)
            .ok_or(E::BadLength)?;
        if classes
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .any(|c| u32::from(c) >= n_classes)
        {
            return Err(E::BadClasses);
        }
        let flags_at = HEADER + CLASS_WORDS;
        let flags = words
            .get(flags_at..flags_at.saturating_add(n_patterns as usize))
            .ok_or(E::BadLength)?;
        if flags.iter().any(|&f| f & !LOOK_AHEAD != 0) {
            return Err(E::BadPattern);
        }
        let n_patterns = n_patterns as usize;
        let states_at = flags_at + flags.len();
        let states_end = states_at + n_states as usize * STATE_WORDS;
        let states = words.get(states_at..states_end).ok_or(E::BadLength)?;
        let row_words = n_classes.div_ceil(2);
        let rows_end = states_end + n_rows as usize * row_words as usize;
        let rows = words.get(states_end..rows_end).ok_or(E::BadLength)?;
        if rows
            .iter()
            .any(|&w| w & 0xFFFF >= n_states || w >> 16 >= n_states)
        {
            return Err(E::BadClasses);
        }
        let transitions = words.get(rows_end..).unwrap_or(&[]);
        for (i, record) in states.chunks_exact(STATE_WORDS).enumerate() {
            let &[first, word, eoi, row] = record else {
                return Err(E::BadLength);
            };
            let (first, count, matched) = (first as usize, (word & 0xFFFF) as usize, word >> 16);
            let settled = eoi & SETTLED != 0;
            let eoi = eoi & !SETTLED;
            let flag = |p: u32| flags.get(p.wrapping_sub(1) as usize).copied().unwrap_or(0);
            if matched as usize > n_patterns
                || eoi as usize > n_patterns
                || (settled && (eoi == 0 || flag(eoi) & LOOK_AHEAD != 0))
            {
                return Err(E::BadPattern);
            }
            if i == 0 && (count != 0 || matched != 0 || eoi != 0 || row != 0) {
                return Err(E::BadStates);
            }
            if row > n_rows {
                return Err(E::BadClasses);
            }
            let list = transitions
                .get(first..first.saturating_add(count))
                .ok_or(E::BadTransition)?;
            let mut floor = 0x80u32;
            for &t in list {
                let (lo, hi, next) = (t & 0xFF, t >> 8 & 0xFF, t >> 16);
                if lo < floor || lo > hi || next >= n_states {
                    return Err(E::BadTransition);
                }
                floor = hi + 1;
            }
        }
        Ok(CompiledPattern {
            parts: CompiledParts {
                flags,
                classes,
                states,
                rows,
                transitions,
                start,
                row_words,
                rule,
            },
        })
    }

    /// The checked words' parts, for code generators.
    pub fn parts(&self) -> CompiledParts<'a> {
        self.parts
    }

    /// A compiled pattern from the parts [`parts`](Self::parts) gave, unchecked: for baked
    /// tables, checked when they were generated. Parts that were never checked cannot make a
    /// walk panic or read out of range (every read is bounds-checked), but may split wrongly.
    pub const fn from_parts(parts: CompiledParts<'a>) -> CompiledPattern<'a> {
        CompiledPattern { parts }
    }

    /// The state after `state` reads `byte` (0: dead). Inlined: it is the walk's loop body.
    #[inline(always)]
    fn next(&self, state: u32, byte: u8) -> u32 {
        let p = &self.parts;
        let at = (state as usize).saturating_mul(STATE_WORDS);
        match p.states.get(at.saturating_add(3)) {
            // The state's row, at the byte's class.
            Some(&row) if row != 0 => {
                let word = p.classes.get(usize::from(byte >> 2)).copied();
                let class = word.map_or(0, |w| w >> (u32::from(byte & 3) * 8) & 0xFF) as usize;
                let i = ((row - 1) as usize)
                    .saturating_mul(p.row_words as usize)
                    .saturating_add(class >> 1);
                return p
                    .rows
                    .get(i)
                    .map_or(0, |w| w >> ((class & 1) * 16) & 0xFFFF);
            }
            // Inside a character: ASCII ends the walk.
            _ if byte < 0x80 => return 0,
            _ => {}
        }
        let (Some(&first), Some(&count)) = (p.states.get(at), p.states.get(at.saturating_add(1)))
        else {
            return 0;
        };
        let first = first as usize;
        let list = p
            .transitions
            .get(first..first.saturating_add((count & 0xFFFF) as usize))
            .unwrap_or(&[]);
        // The last range whose `lo` is at most `byte`.
        let b = u32::from(byte);
        let i = list.partition_point(|&t| t & 0xFF <= b);
        match i.checked_sub(1).and_then(|i| list.get(i)) {
            Some(&t) if b <= t >> 8 & 0xFF => t >> 16,
            _ => 0,
        }
    }

    /// The pattern (+ 1) whose match the state reports, 0 for none; `eoi` for the end-of-input
    /// word.
    #[inline]
    fn match_of(&self, state: u32, eoi: bool) -> u32 {
        let at = (state as usize).saturating_mul(STATE_WORDS);
        if eoi {
            self.parts
                .states
                .get(at.saturating_add(2))
                .map_or(0, |w| w & !SETTLED)
        } else {
            self.parts
                .states
                .get(at.saturating_add(1))
                .map_or(0, |w| w >> 16)
        }
    }

    /// True when `state` has no transitions (no ranges, no ASCII row) and no match at the end
    /// of input: whatever follows, the walk is over.
    #[inline]
    fn is_final_state(&self, state: u32) -> bool {
        let at = (state as usize).saturating_mul(STATE_WORDS);
        let states = self.parts.states;
        states
            .get(at.saturating_add(1))
            .is_none_or(|w| w & 0xFFFF == 0)
            && states.get(at.saturating_add(3)).is_none_or(|&r| r == 0)
            && self.match_of(state, true) == 0
    }

    /// Whether pattern `p + 1` (as [`match_of`](Self::match_of) gives it) has a look-ahead.
    #[inline]
    fn looks_ahead(&self, matched: u32) -> bool {
        let i = matched.wrapping_sub(1) as usize;
        self.parts.flags.get(i).is_some_and(|f| f & LOOK_AHEAD != 0)
    }

    /// The match of the pattern that starts at `start` (leftmost-first: the one `fancy-regex`
    /// finds when it tries `start`). With `is_final == false` more bytes may follow `text`:
    /// [`MatchAt::NeedMore`] when they could change the answer.
    pub fn match_at(&self, text: &[u8], start: usize, is_final: bool) -> MatchAt {
        match self.walk(text, start, is_final) {
            Walk::Decided(at) => at,
            Walk::Undecided { .. } => MatchAt::NeedMore,
        }
    }

    /// [`match_at`](Self::match_at), saying for an undecided answer whether some match (of
    /// undecided extent) already starts at `start`.
    fn walk(&self, text: &[u8], start: usize, is_final: bool) -> Walk {
        let undecided = |best: (usize, usize, u32)| Walk::Undecided { found: best.2 != 0 };
        let mut state = self.parts.start;
        // The best match so far: (end, start of the character that ends there, pattern + 1).
        let mut best = (0usize, 0usize, 0u32);
        let mut pos = start;
        let mut prev = start;
        'walk: loop {
            if pos >= text.len() {
                if !is_final {
                    // A state that reads nothing more and matches nothing at the end has
                    // decided (a match reported one byte late often ends in one).
                    if self.is_final_state(state) {
                        break 'walk;
                    }
                    let settled = self.parts.states.get(
                        (state as usize)
                            .saturating_mul(STATE_WORDS)
                            .saturating_add(2),
                    );
                    if settled.is_some_and(|w| w & SETTLED != 0) {
                        let end = text.len();
                        return Walk::Decided(MatchAt::Match { end }.checked(start, end));
                    }
                    return undecided(best);
                }
                let matched = self.match_of(state, true);
                if matched != 0 {
                    // Through the end of input: a look-ahead gives nothing back.
                    let end = text.len();
                    return Walk::Decided(MatchAt::Match { end }.checked(start, end));
                }
                break 'walk;
            }
            // ASCII, most of most text, needs no decoding.
            let (len, fed): (usize, &[u8]) = match text.get(pos..pos + 1) {
                Some(ascii @ [b]) if *b < 0x80 => (1, ascii),
                _ => match decode(text, pos) {
                    Utf8::Scalar(_, len) => (len, text.get(pos..pos + len).unwrap_or(&[])),
                    Utf8::Truncated(_) if !is_final => return undecided(best),
                    Utf8::Invalid(_) | Utf8::Truncated(_) => (1, &INVALID_AS),
                },
            };
            for (j, &byte) in fed.iter().enumerate() {
                state = self.next(state, byte);
                if state == 0 {
                    break 'walk;
                }
                // Matches end at character boundaries: the first byte of a character is the
                // one that reports a match ending before it.
                if j == 0 {
                    let matched = self.match_of(state, false);
                    if matched != 0 {
                        best = (pos, prev, matched);
                    }
                }
            }
            prev = pos;
            pos += len;
        }
        let (end, last_char, matched) = best;
        if matched == 0 {
            return Walk::Decided(MatchAt::NoMatch);
        }
        let end = if self.looks_ahead(matched) {
            last_char
        } else {
            end
        };
        Walk::Decided(MatchAt::Match { end }.checked(start, text.len()))
    }

    /// The piece that starts at `start` when the text is split by the pattern's matches with
    /// the text between matches kept as pieces (`tokenizers`' `Split` with `Isolated`): a
    /// match, or the run of characters up to where the next match starts. Same contract as
    /// [`crate::pretok::next_piece`].
    pub fn next_piece(&self, text: &[u8], start: usize, is_final: bool) -> Step {
        match self.piece_or_bound(text, start, is_final) {
            Ok(step) => step,
            Err(_) => Step::NeedMore,
        }
    }

    /// [`next_piece`](Self::next_piece) as `Ok(Piece or Skip)`, or when undecided
    /// `Err(bound)`: the piece is known to reach at least `bound` (`start` when nothing is
    /// known; more when it is text between matches that has not met the next match yet). The
    /// segment at `start` (a match, or the run up to the next one) makes the piece by the
    /// pattern's [`SplitRule`], with the segments after it when the rule joins them.
    #[inline]
    fn piece_or_bound(&self, text: &[u8], start: usize, is_final: bool) -> Result<Step, usize> {
        let segment = self.segment(text, start, is_final);
        let rule = self.parts.rule;
        if rule == SplitRule::ISOLATED {
            return segment.map(|(_, end)| Step::Piece { end });
        }
        if rule.behavior == SplitBehavior::Removed {
            return match segment {
                Ok((matched, end)) if matched != rule.invert => Ok(Step::Skip { end }),
                Ok((_, end)) => Ok(Step::Piece { end }),
                // A run known to reach `bound` (a bound past `start` is only ever a run's):
                // when runs are dropped, its bytes so far are dropped whatever follows.
                Err(bound) if bound > start && rule.invert => Ok(Step::Skip { end: bound }),
                Err(bound) => Err(bound),
            };
        }
        let (matched, end) = segment?;
        self.joined(text, is_final, matched, end)
            .map(|end| Step::Piece { end })
    }

    /// [`piece_or_bound`](Self::piece_or_bound) by a rule that joins segments: the piece that
    /// starts with the segment ending at `end` (a match when `matched`). Out of line: the
    /// walk of `Isolated` levels, the common case, stays small.
    #[inline(never)]
    fn joined(
        &self,
        text: &[u8],
        is_final: bool,
        matched: bool,
        mut end: usize,
    ) -> Result<usize, usize> {
        let rule = self.parts.rule;
        // `tokenizers`' flag of a segment: a match, or with `invert` a run.
        let flag = matched != rule.invert;
        // The flag of the segment at `end`: `Ok(None)` at the end of the text, `Err` when
        // more input could change it.
        let next = |end: usize| -> Result<Option<(bool, usize)>, usize> {
            if end >= text.len() {
                return if is_final { Ok(None) } else { Err(end) };
            }
            match self.segment(text, end, is_final) {
                Ok((m, e)) => Ok(Some((m != rule.invert, e))),
                Err(_) => Err(end),
            }
        };
        match rule.behavior {
            // `piece_or_bound` answers these two without joining.
            SplitBehavior::Isolated | SplitBehavior::Removed => Ok(end),
            // A piece that starts with a match stands alone; a run takes the match after it.
            SplitBehavior::MergedWithPrevious if flag => Ok(end),
            SplitBehavior::MergedWithPrevious => match next(end)? {
                Some((true, e)) => Ok(e),
                _ => Ok(end),
            },
            // A run stands alone; a match takes the run after it.
            SplitBehavior::MergedWithNext if !flag => Ok(end),
            SplitBehavior::MergedWithNext => match next(end)? {
                Some((false, e)) => Ok(e),
                _ => Ok(end),
            },
            // The segments with the same flag that follow one another.
            SplitBehavior::Contiguous => loop {
                match next(end)? {
                    Some((f, e)) if f == flag => end = e,
                    _ => return Ok(end),
                }
            },
        }
    }

    /// The segment that starts at `start`: whether it is a match, and its end (a match's, or
    /// where the next match starts); `Err(bound)` as in
    /// [`piece_or_bound`](Self::piece_or_bound) when more input could change it.
    #[inline]
    fn segment(&self, text: &[u8], start: usize, is_final: bool) -> Result<(bool, usize), usize> {
        if start >= text.len() {
            return Err(start);
        }
        let mut pos = start;
        while pos < text.len() {
            match self.walk(text, pos, is_final) {
                Walk::Decided(MatchAt::Match { end }) if pos == start => return Ok((true, end)),
                Walk::Decided(MatchAt::NoMatch) => {}
                Walk::Undecided { found: false } | Walk::Decided(MatchAt::NeedMore) => {
                    return Err(pos)
                }
                // Text between matches ends where a match starts, however long that is.
                Walk::Decided(MatchAt::Match { .. }) | Walk::Undecided { found: true } => {
                    return if pos == start {
                        Err(start)
                    } else {
                        Ok((false, pos))
                    }
                }
            }
            pos += match decode(text, pos) {
                Utf8::Scalar(_, len) => len,
                _ => 1,
            };
        }
        if is_final {
            Ok((false, text.len()))
        } else {
            Err(text.len())
        }
    }
}

/// The piece at `start` when each of `levels` splits the pieces of the one before it
/// (`tokenizers`' `Sequence` of `Split`s, each `Isolated`): the first splits the text, the
/// second each of its pieces as a text of its own (so `$` and look-aheads see that piece's
/// end), and so on. Streaming as [`crate::pretok::next_piece`]: when an outer piece's end is
/// not known yet but it reaches at least some bound, the inner levels run on the text up to
/// that bound as a text that goes on, so a long run between matches of an outer level does
/// not hold back the pieces inside it. No levels: the whole text is one piece.
///
/// Without a [`SplitMemo`] each call finds the outer pieces again; [`split_levels_memo`] is
/// the same split at the cost of the innermost pieces alone.
pub fn split_levels(
    levels: &[CompiledPattern<'_>],
    text: &[u8],
    start: usize,
    is_final: bool,
) -> Step {
    split_levels_memo(levels, text, start, is_final, &mut SplitMemo::new())
}

/// Outer levels remembered by [`split_levels_memo`].
const MEMO_LEVELS: usize = 4;

/// What [`split_levels_memo`] knows of the outer pieces that contain the last piece it gave,
/// one entry per outer level: `(end, decided)`: the piece ends at `end`, or (not decided) it
/// reaches at least `end`. A walk over a text then finds each outer piece about once. Valid
/// for one text and positions that only move forward (a new text needs a new memo).
#[derive(Clone, Copy, Debug, Default)]
pub struct SplitMemo {
    ends: [(usize, bool); MEMO_LEVELS],
}

impl SplitMemo {
    /// A memo that knows nothing.
    pub const fn new() -> SplitMemo {
        SplitMemo {
            ends: [(0, false); MEMO_LEVELS],
        }
    }
}

/// [`split_levels`], remembering in `memo` what it learnt of the outer pieces (and using what
/// it remembered), so that splitting a text costs about its length. When the memo does not
/// settle the piece at `start`, the outer levels are found again over a window from `start`
/// that doubles (from 256 bytes) until the innermost piece is decided: a call costs about its
/// own piece's length, not the outer piece's (the text between matches of an outer level, as
/// DeepSeek's digit split has, can be the whole input).
pub fn split_levels_memo(
    levels: &[CompiledPattern<'_>],
    text: &[u8],
    start: usize,
    is_final: bool,
    memo: &mut SplitMemo,
) -> Step {
    let Some((last, outer)) = levels.split_last() else {
        return if is_final && start < text.len() {
            Step::Piece { end: text.len() }
        } else {
            Step::NeedMore
        };
    };
    if outer.is_empty() {
        return last.next_piece(text, start, is_final);
    }
    // The outer pieces around `start` as the memo knows them, outermost first: the first
    // `known` levels need no search.
    let mut known = 0;
    for &(end, _) in memo.ends.iter().take(outer.len()) {
        let (limit, _) = memo.around(known, text.len(), is_final);
        if !(start < end && end <= limit) {
            break;
        }
        known += 1;
    }
    memo.forget_from(known);
    loop {
        let (limit, decided) = memo.around(known, text.len(), is_final);
        let rest = levels.get(known..).unwrap_or(&[]);
        // A window from `start` that doubles until the piece is decided or the window
        // reaches what is known of the piece around it.
        let mut window = 256usize;
        let step = loop {
            let cut = start.saturating_add(window).min(limit);
            let whole = cut == limit;
            let part = text.get(..cut).unwrap_or(&[]);
            match split_levels_in(rest, part, start, decided && whole, memo, known) {
                Step::NeedMore if !whole => window = window.saturating_mul(2),
                step => break step,
            }
        };
        // Undecided, inside an outer piece known only to reach `limit`: search that level
        // again (it may reach further now).
        match step {
            Step::NeedMore if known > 0 && !decided => {
                known -= 1;
                memo.forget_from(known);
            }
            step => return step,
        }
    }
}

impl SplitMemo {
    /// What the level after the first `known` entries sees: the end of its text (`len`, the
    /// whole text's, before any entry) and whether that end is decided (`is_final` for the
    /// whole text).
    fn around(&self, known: usize, len: usize, is_final: bool) -> (usize, bool) {
        match known.checked_sub(1).and_then(|k| self.ends.get(k)) {
            Some(&(end, decided)) => (end, decided),
            None => (len, is_final),
        }
    }

    /// Forget the entries from `level` on (their outer piece changed).
    fn forget_from(&mut self, level: usize) {
        for slot in self.ends.iter_mut().skip(level) {
            *slot = (0, false);
        }
    }
}

/// The levels over all of `text`, noting in `memo` (from entry `first`) what the outer ones
/// decided or bounded.
fn split_levels_in(
    levels: &[CompiledPattern<'_>],
    text: &[u8],
    start: usize,
    is_final: bool,
    memo: &mut SplitMemo,
    first: usize,
) -> Step {
    let mut limit = text.len();
    let mut fin = is_final;
    let last = levels.len().saturating_sub(1);
    for (i, level) in levels.iter().enumerate() {
        match level.piece_or_bound(text.get(..limit).unwrap_or(&[]), start, fin) {
            Ok(Step::Piece { end }) => {
                limit = end;
                fin = true;
                if let Some(slot) = memo.ends.get_mut(first + i).filter(|_| i < last) {
                    *slot = (end, true);
                }
            }
            Err(bound) if bound > start && i < last => {
                limit = bound;
                fin = false;
                if let Some(slot) = memo.ends.get_mut(first + i) {
                    *slot = (bound, false);
                }
            }
            // Dropped bytes (`Skip`): nothing inside them is a piece at any inner level.
            Ok(step) => return step,
            Err(_) => return Step::NeedMore,
        }
    }
    if fin && start < limit {
        Step::Piece { end: limit }
    } else {
        Step::NeedMore
    }
}

/// What a walk from a position found.
#[derive(Clone, Copy, Debug)]
enum Walk {
    /// The answer, the same for every continuation.
    Decided(MatchAt),
    /// More bytes could change the answer; `found`: a match starts here whatever they are.
    Undecided {
        /// Some match starts at the position.
        found: bool,
    },
}

impl MatchAt {
    /// Defensive: an end outside `start < end <= len` (which a checked automaton never gives)
    /// is no match rather than an out-of-range piece.
    #[inline]
    fn checked(self, start: usize, len: usize) -> MatchAt {
        match self {
            MatchAt::Match { end } if end <= start || end > len => MatchAt::NoMatch,
            other => other,
        }
    }
}
