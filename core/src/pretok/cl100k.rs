//! cl100k_base: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|`
//! ` ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`.
//!
//! Leftmost-first alternation at `start` (it always matches):
//! 1. `'` + a contraction, case-insensitive by Unicode simple case folding (so `'ſ` counts);
//! 2. one optional character that is not `\r`, `\n`, a letter or a number, then a maximal letter
//!    run (the possessive `?+` never gives the character back, but giving it back could not help:
//!    it is not a letter);
//! 3. one to three numbers;
//! 4. an optional U+0020, a maximal run of "other" characters, then a maximal `[\r\n]` run;
//! 5. from here `start` is whitespace; with `r` = the maximal whitespace run: all of `r` if it
//!    reaches the end of the text (`\s++$`; with more text to come that is undecided), else up to
//!    and including the last `\r`/`\n` in `r` (`\s*[\r\n]`), else `r` minus its last character if
//!    `r` has two or more (`\s+(?!\S)`), else the single character (`\s`).

use super::unicode::{
    fold_letter, letters_from, peek, scan, scan_newlines, scan_ws, L_MASK, MORE, N_MASK,
    OTHER_MASK, PRE_MASK,
};

/// The case-insensitive contraction after a `'` whose next character is at `i`: `Some(Some(end))`
/// when one matches, `Some(None)` when none does, `None` when undecided (NeedMore).
#[inline]
pub(crate) fn contraction(text: &[u8], i: usize, is_final: bool) -> Option<Option<usize>> {
    let (l1, n1) = fold_letter(text, i, is_final)?;
    let want = match l1 {
        b's' | b'd' | b'm' | b't' => return Some(Some(i + n1)),
        b'l' => b'l',
        b'v' | b'r' => b'e',
        _ => return Some(None),
    };
    let (l2, n2) = fold_letter(text, i + n1, is_final)?;
    Some((l2 == want).then_some(i + n1 + n2))
}

/// `ASCII_PRE[b]`: `b` is an ASCII byte of `[^\r\n\p{L}\p{N}]`.
static ASCII_PRE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x80 {
        let c = b as u8;
        t[b] = !c.is_ascii_alphanumeric() && c != b'\r' && c != b'\n';
        b += 1;
    }
    t
};

/// An ASCII byte of `[^\r\n\p{L}\p{N}]`.
#[inline(always)]
pub(crate) fn ascii_pre(b: u8) -> bool {
    ASCII_PRE[b as usize]
}

/// The two rules in which the Llama 3 and Qwen2 patterns differ from cl100k_base's (see
/// [`super::Pattern`]). Runtime values, not const parameters: one copy of the splitter serves
/// all three patterns, which keeps firmware that bakes any one of them small.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rules {
    /// Numbers are taken up to this many at a time (`\p{N}{1,3}`: 3, `\p{N}`: 1).
    pub max_digits: u8,
    /// cl100k's `\s++$`: a whitespace run that reaches the end of the text is one piece.
    /// Without it the whitespace alternatives are `\s*[\r\n]+|\s+(?!\S)|\s+`: a run that
    /// holds a newline ends after its last newline even at the end of the text, and only a run
    /// without one is taken whole there.
    pub end_run: bool,
}

impl Rules {
    /// cl100k_base.
    pub const CL100K: Rules = Rules {
        max_digits: 3,
        end_run: true,
    };
    /// Llama 3.
    pub const LLAMA3: Rules = Rules {
        max_digits: 3,
        end_run: false,
    };
    /// Qwen2.
    pub const QWEN2: Rules = Rules {
        max_digits: 1,
        end_run: false,
    };
}

/// The end of the piece at `s` for cl100k_base or a pattern that differs from it in `rules`,
/// or `None` for NeedMore (see [`super::next_piece`]).
#[inline]
pub(crate) fn next_with(text: &[u8], s: usize, is_final: bool, rules: Rules) -> Option<usize> {
    let b0 = *text.get(s)?;
    if b0 == b'\'' {
        if let Some(e) = contraction(text, s + 1, is_final)? {
            return Some(e);
        }
    }
    // Fast path: an ASCII letter, or an ASCII character of `[^\r\n\p{L}\p{N}]` and one.
    let p = s + usize::from(ascii_pre(b0));
    if text.get(p).is_some_and(u8::is_ascii_alphabetic) {
        return letters_from(text, p + 1, is_final);
    }
    let c0 = peek(text, s, is_final);
    if c0.class == MORE {
        return None;
    }
    let s1 = s + c0.len;
    // 2. `[^\r\n\p{L}\p{N}]?+\p{L}++`
    if c0.is(L_MASK) {
        return scan(text, s1, L_MASK, is_final);
    }
    let pre = c0.is(PRE_MASK) && b0 != b'\r' && b0 != b'\n';
    let mut c1 = None;
    if pre {
        let c = peek(text, s1, is_final);
        if c.class == MORE {
            return None;
        }
        if c.is(L_MASK) {
            return scan(text, s1 + c.len, L_MASK, is_final);
        }
        c1 = Some(c);
    }
    // 3. `\p{N}{1,3}+` (`\p{N}` when `rules.max_digits` is 1)
    if c0.is(N_MASK) {
        let mut e = s1;
        for _ in 1..rules.max_digits {
            let c = peek(text, e, is_final);
            if c.class == MORE {
                return None;
            }
            if !c.is(N_MASK) {
                break;
            }
            e += c.len;
        }
        return Some(e);
    }
    // 4. ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    let run_from = if c0.is(OTHER_MASK) {
        Some(s1)
    } else {
        match c1 {
            Some(c) if b0 == b' ' && c.is(OTHER_MASK) => Some(s1 + c.len),
            _ => None,
        }
    };
    if let Some(p) = run_from {
        let e = scan(text, p, OTHER_MASK, is_final)?;
        return scan_newlines(text, e, b'\r', is_final);
    }
    // 5. Whitespace.
    let run = scan_ws(text, s, is_final)?;
    Some(if rules.end_run && run.at_end {
        run.end
    } else if run.newline_end != 0 {
        run.newline_end
    } else if run.at_end {
        // `\s+(?!\S)` takes a run without a newline whole at the end of the text.
        run.end
    } else if run.last > s {
        run.last
    } else {
        run.end
    })
}
