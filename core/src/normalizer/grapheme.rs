//! Extended grapheme clusters (UAX #29), found forward from a cluster start, exact to
//! `unicode-segmentation` 1.12.0 (what `tokenizers` 0.22.2 segments with) on every input: its
//! tables are read off its behaviour by `cargo xtask gen-unicode`, and
//! `tests/tests/grapheme_reference.rs` checks this walk against it.
//!
//! **The walk.** Each character has a class ([`class_byte`]); whether a boundary falls between
//! two characters depends on their classes and on three facts about the cluster so far, kept
//! as the walk goes (no look-back): whether the characters since the last pictograph are all
//! Extend (GB11: a pictograph, Extend*, ZWJ joins the next pictograph), whether an odd number
//! of regional indicators ends it (GB12/13: flags pair up), and whether it ends in an Indic
//! consonant followed by linkers and extends with at least one linker (GB9c: a conjunct joins
//! the next consonant). Each of these runs inside one cluster, so a walk that starts at any
//! cluster start finds the same boundaries as one from the text's start.
//!
//! **Bytes that are not UTF-8** are read one byte at a time as U+FFFD (class "other"), the
//! SentencePiece families' rule; the cluster's length in the reference's string counts each
//! as the three bytes of U+FFFD.

use super::grapheme_tables as t;
use crate::utf8::{self, Utf8};

/// The class byte of code point `cp`: the class in [`t::CLASS_MASK`], the Indic conjunct
/// break value in bits 6–7.
#[inline]
pub(crate) fn class_byte(cp: u32) -> u8 {
    if cp < 0x80 {
        return match cp {
            0x0D => t::GB_CR,
            0x0A => t::GB_LF,
            0..=0x1F | 0x7F => t::GB_CONTROL,
            _ => t::GB_OTHER,
        };
    }
    if (0xAC00..=0xD7A3).contains(&cp) {
        return if (cp - 0xAC00) % 28 == 0 {
            t::GB_LV
        } else {
            t::GB_LVT
        };
    }
    if cp >= t::GRAPHEME_LIMIT {
        let i = t::GRAPHEME_HIGH.partition_point(|r| r.1 < cp);
        return match t::GRAPHEME_HIGH.get(i) {
            Some(&(first, _, v)) if first <= cp => v,
            _ => t::GB_OTHER,
        };
    }
    let block = t::GRAPHEME_INDEX
        .get((cp >> 7) as usize)
        .copied()
        .unwrap_or(0);
    t::GRAPHEME_BLOCKS
        .get((usize::from(block) << 7) | (cp & 0x7F) as usize)
        .copied()
        .unwrap_or(0)
}

/// One character of the text as the walk sees it: its class byte, its length in the input,
/// and its length in the reference's string (3 for a byte read as U+FFFD). `None` at the end
/// of the text, or at a character cut short there that more input could complete (with
/// `last`, its bytes are read as U+FFFD, one each).
#[inline]
fn element(text: &[u8], at: usize, last: bool) -> Option<(u8, usize, usize)> {
    match utf8::decode(text, at) {
        Utf8::Scalar(cp, len) => Some((class_byte(cp), len, len)),
        Utf8::Invalid(_) => Some((t::GB_OTHER, 1, 3)),
        Utf8::Truncated(0) => None,
        Utf8::Truncated(_) => last.then_some((t::GB_OTHER, 1, 3)),
    }
}

/// The facts about the cluster so far that decide the next boundary (see the module docs).
#[derive(Clone, Copy)]
pub(super) struct Walk {
    /// The last character's class.
    prev: u8,
    /// The characters since the last pictograph are all Extend (false without one).
    pictograph: bool,
    /// The last character is a ZWJ after a pictograph and Extend*.
    pictograph_zwj: bool,
    /// The cluster ends in an odd number of regional indicators.
    odd_flags: bool,
    /// 0: no conjunct; 1: a consonant then Extend/Linker with no linker yet; 2: with one.
    conjunct: u8,
}

impl Walk {
    pub(super) fn start() -> Self {
        Walk {
            prev: t::GB_OTHER,
            pictograph: false,
            pictograph_zwj: false,
            odd_flags: false,
            conjunct: 0,
        }
    }

    /// Whether the character of class byte `byte` joins the cluster (no boundary before it).
    pub(super) fn joins(&self, byte: u8) -> bool {
        let (p, c) = (self.prev, byte & t::CLASS_MASK);
        let is = |x: u8, set: &[u8]| set.contains(&x);
        let breaks = [t::GB_CONTROL, t::GB_CR, t::GB_LF];
        if p == t::GB_CR && c == t::GB_LF {
            return true; // GB3
        }
        if is(p, &breaks) || is(c, &breaks) {
            return false; // GB4, GB5
        }
        match (p, c) {
            (t::GB_L, t::GB_L | t::GB_V | t::GB_LV | t::GB_LVT) => true, // GB6
            (t::GB_LV | t::GB_V, t::GB_V | t::GB_T) => true,             // GB7
            (t::GB_LVT | t::GB_T, t::GB_T) => true,                      // GB8
            (_, t::GB_EXTEND | t::GB_ZWJ | t::GB_SPACING_MARK) => true,  // GB9, GB9a
            (t::GB_PREPEND, _) => true,                                  // GB9b
            (_, t::GB_CONSONANT) if self.conjunct == 2 => true,          // GB9c
            (t::GB_ZWJ, t::GB_PICTOGRAPHIC) => self.pictograph_zwj,      // GB11
            (t::GB_RI, t::GB_RI) => self.odd_flags,                      // GB12, GB13
            _ => false,
        }
    }

    /// The walk after the character of class byte `byte` (joined or starting a cluster).
    pub(super) fn push(&mut self, byte: u8) {
        let (c, incb) = (byte & t::CLASS_MASK, byte >> 6);
        self.pictograph_zwj = c == t::GB_ZWJ && self.pictograph;
        self.pictograph = c == t::GB_PICTOGRAPHIC || (c == t::GB_EXTEND && self.pictograph);
        self.odd_flags = c == t::GB_RI && !self.odd_flags;
        self.conjunct = match (c, incb, self.conjunct) {
            (t::GB_CONSONANT, _, _) => 1,
            (_, t::INCB_LINKER, 1 | 2) => 2,
            (_, t::INCB_EXTEND, k) => k,
            _ => 0,
        };
        self.prev = c;
    }
}

/// The extended grapheme cluster that starts at `text[at..]` (a cluster start): its end and
/// its length in the reference's string (bytes read as U+FFFD count three). `None` when more
/// input could extend it: it reaches the end of the text (or a character cut short there)
/// and `last` is false. With `last`, a cluster at the end of the text ends there.
pub(crate) fn cluster_end(text: &[u8], at: usize, last: bool) -> Option<(usize, usize)> {
    let (first, len, mut ref_len) = element(text, at, last)?;
    let mut walk = Walk::start();
    walk.push(first);
    let mut end = at + len;
    loop {
        if end >= text.len() {
            return last.then_some((end, ref_len));
        }
        let (byte, len, rlen) = element(text, end, last)?;
        if !walk.joins(byte) {
            return Some((end, ref_len));
        }
        walk.push(byte);
        end += len;
        ref_len += rlen;
    }
}
