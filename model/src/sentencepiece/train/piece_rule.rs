//! Which character sequences `spm_train` lets become a piece (`IsValidSentencePiece`): the
//! length limit, no unknown mark, NUL, boundary mark (U+001F) or space, `▁` only where the whitespace options
//! allow it, one Unicode script per piece (Hiragana, Katakana and `ー` count as Han; a
//! combining mark takes its predecessor's script), digits alone when `split_digits`.

use super::script_table::{SCRIPT_NAMES, SCRIPT_RANGES};

/// `▁` (U+2581): a space after normalization.
pub(super) const SPACE_MARK: char = '\u{2581}';
/// `▅` (U+2585): what the trainer puts for a character outside the alphabet.
pub(super) const UNK_CHAR: char = '\u{2585}';
/// U+001F: where the trainer replaced a meta piece's text; never inside a piece (0.2.3;
/// earlier versions used a tab).
pub(super) const BOUNDARY: char = '\u{1F}';

/// The options the rule reads.
#[derive(Clone, Copy, Debug)]
pub(super) struct PieceRule {
    pub max_chars: usize,
    pub split_by_whitespace: bool,
    pub split_by_unicode_script: bool,
    pub split_by_number: bool,
    pub split_digits: bool,
    pub treat_whitespace_as_suffix: bool,
    pub allow_whitespace_only_pieces: bool,
}

/// The id of script `name` in [`SCRIPT_NAMES`].
const fn script_id(name: &str) -> u8 {
    let mut i = 0;
    while i < SCRIPT_NAMES.len() {
        let n = SCRIPT_NAMES[i].as_bytes();
        let m = name.as_bytes();
        if n.len() == m.len() {
            let mut j = 0;
            while j < n.len() && n[j] == m[j] {
                j += 1;
            }
            if j == n.len() {
                return i as u8;
            }
        }
        i += 1;
    }
    panic!("unknown script")
}

const HAN: u8 = script_id("Han");
const HIRAGANA: u8 = script_id("Hiragana");
const KATAKANA: u8 = script_id("Katakana");
const INHERITED: u8 = script_id("Inherited");
const LATIN: u8 = script_id("Latin");
/// Matches any script (the start of a piece; a digit when `split_by_number` is off).
const ANY: u8 = u8::MAX;

/// The script of `c` in `sentencepiece`'s table (0, Common, when it lists none).
fn script(c: char) -> u8 {
    if c.is_ascii() {
        return if c.is_ascii_alphabetic() { LATIN } else { 0 };
    }
    let c = c as u32;
    match SCRIPT_RANGES.binary_search_by(|&(lo, hi, _)| {
        if hi < c {
            std::cmp::Ordering::Less
        } else if lo > c {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }) {
        Ok(i) => SCRIPT_RANGES[i].2,
        Err(_) => 0,
    }
}

/// ASCII and full-width decimal digits (`is_unicode_decimal_number`).
fn is_decimal(c: char) -> bool {
    c.is_ascii_digit() || ('\u{FF10}'..='\u{FF19}').contains(&c)
}

impl PieceRule {
    /// True when `chars` may be a piece.
    #[cfg(test)]
    pub(super) fn allows(&self, chars: &[char]) -> bool {
        self.allows_chars(chars.len(), || chars.iter().copied())
    }

    /// True when `text`, of `n` characters, may be a piece.
    pub(super) fn allows_text(&self, text: &str, n: usize) -> bool {
        self.allows_chars(n, || text.chars())
    }

    /// True when the concatenation of `left` and `right` (`n` characters in all) may be a
    /// piece.
    pub(super) fn allows_pair(&self, left: &str, right: &str, n: usize) -> bool {
        self.allows_chars(n, || left.chars().chain(right.chars()))
    }

    /// True when the `n` characters `chars()` yields may be a piece.
    fn allows_chars<I: Iterator<Item = char>>(&self, n: usize, chars: impl Fn() -> I) -> bool {
        if n == 0 || n > self.max_chars {
            return false;
        }
        let all_space = chars().all(|c| c == SPACE_MARK);
        let last = n - 1;
        let mut prev = ANY;
        for (pos, c) in chars().enumerate() {
            if matches!(c, UNK_CHAR | '\0' | BOUNDARY | ' ') {
                return false;
            }
            if c == SPACE_MARK {
                if !self.allow_whitespace_only_pieces || !all_space {
                    let misplaced = if self.treat_whitespace_as_suffix {
                        if self.split_by_whitespace {
                            pos < last
                        } else {
                            pos < last && pos == 0
                        }
                    } else if self.split_by_whitespace {
                        pos > 0
                    } else {
                        pos > 0 && pos == last
                    };
                    if misplaced {
                        return false;
                    }
                }
                continue;
            }
            let mut s = script(c);
            if s == HIRAGANA || s == KATAKANA || c == '\u{30FC}' {
                s = HAN;
            } else if s == INHERITED {
                s = prev;
            }
            if !self.split_by_number && is_decimal(c) {
                s = ANY;
            }
            if self.split_digits && is_decimal(c) && n > 1 {
                return false;
            }
            if self.split_by_unicode_script && s != ANY && prev != ANY && prev != s {
                return false;
            }
            prev = s;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> PieceRule {
        PieceRule {
            max_chars: 16,
            split_by_whitespace: true,
            split_by_unicode_script: true,
            split_by_number: true,
            split_digits: false,
            treat_whitespace_as_suffix: false,
            allow_whitespace_only_pieces: false,
        }
    }

    fn allows(r: &PieceRule, s: &str) -> bool {
        r.allows(&s.chars().collect::<Vec<_>>())
    }

    #[test]
    fn ascii_fast_path_matches_the_table() {
        for b in 0u8..128 {
            let c = char::from(b);
            let listed = SCRIPT_RANGES
                .iter()
                .find(|&&(lo, hi, _)| (lo..=hi).contains(&u32::from(b)))
                .map_or(0, |r| r.2);
            assert_eq!(script(c), listed, "{c:?}");
        }
    }

    #[test]
    fn scripts_whitespace_and_digits() {
        let r = rule();
        assert!(allows(&r, "▁abc"));
        assert!(!allows(&r, "ab▁"));
        assert!(!allows(&r, "a,"), "Latin then Common");
        assert!(!allows(&r, "a1"), "digits are Common");
        assert!(allows(&r, "ひらカタ漢ー"), "kana count as Han");
        assert!(allows(&r, "e\u{301}"), "a mark takes the script before it");
        assert!(!allows(&r, "▁▁"));
        let ws = PieceRule {
            allow_whitespace_only_pieces: true,
            ..r
        };
        assert!(allows(&ws, "▁▁"));
        let digits = PieceRule {
            split_digits: true,
            ..r
        };
        assert!(!allows(&digits, "12"));
        assert!(allows(&digits, "1"));
        let numbers = PieceRule {
            split_by_number: false,
            ..r
        };
        assert!(allows(&numbers, "a1"));
        assert!(!allows(&r, "abcdefghijklmnopq"), "17 characters");
    }
}
