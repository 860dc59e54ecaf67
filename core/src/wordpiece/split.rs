//! [`WordSplit`]: the pre-tokenizer of a WordPiece model — `BertPreTokenizer`, or a
//! `Sequence` of `tokenizers`' `WhitespaceSplit`, `Whitespace`, `Punctuation` and `Digits`.
//!
//! Each of these steps decides from the characters alone, never from where an earlier step
//! cut: a character is removed (whitespace), a word of its own (`Isolated`), or joins the
//! characters around it that share its class (`Contiguous` runs; `Whitespace`'s
//! `\w+|[^\w\s]+` is two such classes). So a `Sequence` of them, in any order, cuts between
//! two characters exactly when one of its steps would: a character removed by any step is
//! removed, one isolated by any step is a word of its own, and two neighbours stay in one
//! word only when every step gives them the same class. The encoder applies that rule one
//! character at a time ([`WordSplit::class`]), with no buffer beyond the word it collects.

use super::tables::{PUNCT, SPACE};
use super::unicode_tables::{CLASS_FLAGS, CLASS_STARTS, NUMERIC, WORD};

/// What a step does with the characters it matches (`tokenizers`' `SplitDelimiterBehavior`,
/// the forms these steps use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharRule {
    /// No such step.
    Off,
    /// Each matching character is a word of its own.
    Isolated,
    /// A run of matching characters is one word.
    Contiguous,
    /// Matching characters are removed and end the word.
    Removed,
}

/// How a pre-tokenizer treats whitespace (`char::is_whitespace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spaces {
    /// Whitespace is an ordinary character (no `WhitespaceSplit` or `Whitespace` step).
    Kept,
    /// Whitespace is removed and ends a word (`WhitespaceSplit`, `BertPreTokenizer`).
    Split,
    /// `Whitespace`: words are the matches of `\w+|[^\w\s]+` (the `regex` crate's Unicode
    /// classes), whitespace is removed.
    Words,
}

/// A WordPiece pre-tokenizer: [`WordSplit::BERT`], or steps built by [`WordSplit::new`].
#[derive(Clone, Copy, Debug)]
pub struct WordSplit {
    spaces: Spaces,
    punctuation: CharRule,
    digits: CharRule,
    /// The [`WORD`] and [`NUMERIC`] flags of a character. A function, not a table read in
    /// place: only [`WordSplit::new`] names the tables, so a program whose models all use
    /// `BertPreTokenizer` links none of them.
    flags: fn(char) -> u8,
}

impl PartialEq for WordSplit {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for WordSplit {}

/// What [`WordSplit::class`] makes of one character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Removed; ends the word before it.
    Removed,
    /// A word of its own.
    Isolated,
    /// Joins the word before it when that word's characters have the same key.
    Joins(u8),
}

impl WordSplit {
    /// `BertPreTokenizer`: whitespace removed, punctuation isolated (the same words as
    /// `Sequence[WhitespaceSplit, Punctuation]`).
    pub const BERT: WordSplit = WordSplit {
        spaces: Spaces::Split,
        punctuation: CharRule::Isolated,
        digits: CharRule::Off,
        flags: no_flags,
    };

    /// A `Sequence` of steps: how it treats whitespace, `Punctuation`'s behaviour
    /// (`is_ascii_punctuation` or `is_punctuation`) and `Digits`' (`char::is_numeric`:
    /// `Isolated` with `individual_digits`, else `Contiguous`), each [`CharRule::Off`] when
    /// absent.
    pub const fn new(spaces: Spaces, punctuation: CharRule, digits: CharRule) -> WordSplit {
        WordSplit {
            spaces,
            punctuation,
            digits,
            flags: class_flags,
        }
    }

    /// Its steps: whitespace, punctuation, digits.
    pub fn parts(&self) -> (Spaces, CharRule, CharRule) {
        (self.spaces, self.punctuation, self.digits)
    }

    /// True for [`WordSplit::BERT`]'s words.
    #[inline(always)]
    pub fn is_bert(&self) -> bool {
        self.parts() == WordSplit::BERT.parts()
    }

    /// True when whitespace is an ordinary character of the words ([`Spaces::Kept`]).
    #[inline(always)]
    pub(crate) fn keeps_spaces(&self) -> bool {
        self.spaces == Spaces::Kept
    }

    /// The class of `c`, whose [`crate::wordpiece::char_flags`] are `f`.
    #[inline]
    pub(crate) fn class(&self, c: char, f: u8) -> Class {
        let space = f & SPACE != 0;
        if space && self.spaces != Spaces::Kept {
            return Class::Removed;
        }
        let mut key = 0u8;
        let punct = f & PUNCT != 0;
        match (self.punctuation, punct) {
            (CharRule::Removed, true) => return Class::Removed,
            (CharRule::Isolated, true) => return Class::Isolated,
            (CharRule::Contiguous, true) => key |= 1,
            _ => {}
        }
        let needs_flags = self.spaces == Spaces::Words || self.digits != CharRule::Off;
        let g = if needs_flags { (self.flags)(c) } else { 0 };
        let numeric = g & NUMERIC != 0;
        match (self.digits, numeric) {
            (CharRule::Removed, true) => return Class::Removed,
            (CharRule::Isolated, true) => return Class::Isolated,
            (CharRule::Contiguous, true) => key |= 2,
            _ => {}
        }
        if self.spaces == Spaces::Words && g & WORD != 0 {
            key |= 4;
        }
        Class::Joins(key)
    }

    /// True when a character with flags `f` ends the word before it and starts none that
    /// the next character could join, whatever that character is: whitespace that is
    /// removed, punctuation that is removed or isolated. (Digits are left out: the caller
    /// asks about ASCII bytes it has not decoded, and this keeps the answer cheap.)
    #[inline]
    pub(crate) fn ends_word(&self, f: u8) -> bool {
        (f & SPACE != 0 && self.spaces != Spaces::Kept)
            || (f & PUNCT != 0
                && matches!(self.punctuation, CharRule::Isolated | CharRule::Removed))
    }
}

impl Default for WordSplit {
    fn default() -> Self {
        WordSplit::BERT
    }
}

/// [`WordSplit::BERT`]'s flags function: it never asks.
fn no_flags(_: char) -> u8 {
    0
}

/// The [`WORD`] and [`NUMERIC`] flags of `c` from the generated runs.
fn class_flags(c: char) -> u8 {
    let cp = c as u32;
    if cp < 0x80 {
        return match c {
            '0'..='9' => WORD | NUMERIC,
            'a'..='z' | 'A'..='Z' | '_' => WORD,
            _ => 0,
        };
    }
    let i = CLASS_STARTS.partition_point(|&s| s <= cp);
    CLASS_FLAGS
        .get(i.wrapping_sub(1))
        .copied()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_fast_path_agrees_with_the_runs() {
        for b in 0u8..0x80 {
            let cp = u32::from(b);
            let i = CLASS_STARTS.partition_point(|&s| s <= cp);
            let from_runs = CLASS_FLAGS.get(i.wrapping_sub(1)).copied().unwrap_or(0);
            assert_eq!(class_flags(b as char), from_runs, "{b:#x}");
        }
    }

    #[test]
    fn bert_is_wsplit_and_isolated_punctuation() {
        let seq = WordSplit::new(Spaces::Split, CharRule::Isolated, CharRule::Off);
        assert_eq!(seq, WordSplit::BERT);
        assert!(seq.is_bert());
        let ws = WordSplit::new(Spaces::Words, CharRule::Off, CharRule::Off);
        assert!(!ws.is_bert());
        let f = |c| super::super::tables::char_flags(c);
        assert_eq!(ws.class('a', f('a')), ws.class('1', f('1')));
        assert_ne!(ws.class('a', f('a')), ws.class('!', f('!')));
        assert_eq!(ws.class(' ', f(' ')), Class::Removed);
    }
}
