//! o200k_base: the `|`-join of
//! `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
//! `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
//! `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`.
//!
//! Write `P` = `[^\r\n\p{L}\p{N}]`, `U` = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`,
//! `W` = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`. Marks are in `P`, `U` and `W` at once, which is what
//! makes the backtracking of the first two alternatives worth spelling out. Let `a` be the
//! position after the optional `P` character (taken first, greedily) and `[a, b)` the maximal `U`
//! run from `a`. The first alternative's `U*` then gives characters back from `b` until `W+`
//! can start:
//! - the character at `b` is in `W` (it can only be `Ll`): the piece runs to the end of the
//!   maximal `W` run from `b`;
//! - else the last `W` character inside `[a, b)`, if any: `W+` matches exactly that character
//!   (the characters after it are not in `W`), and the piece ends after it;
//! - else, if the optional `P` character was a mark, dropping it lets `U*` be empty and `W+`
//!   match the mark alone;
//! - else the second alternative: `U+` = `[a, b)` if non-empty, `W*` then matches nothing.
//!
//! Either way an optional case-insensitive contraction follows (not in Tekken: see [`Rules`]). Then numbers (one to three),
//! then ` ?` + a maximal "other" run + a maximal `[\r\n/]` run, then whitespace: with `r` the
//! maximal whitespace run, up to and including its last `\r`/`\n` (`\s*[\r\n]+`), else all of `r`
//! at the end of the text, else `r` minus its last character when it has two or more, else `r`.

use super::cl100k::{ascii_pre, contraction};
use super::unicode::{
    peek, peek_inline, scan, scan_newlines, scan_ws, skip_ascii_lowercase, Ch, LOWER_MASK, L_MASK,
    MORE, N_MASK, OTHER_MASK, PRE_MASK, UPPER_MASK,
};
use super::unicode_tables::M;
use super::Pattern;

/// The optional contraction after a letter piece ending at `e`; `None` when undecided.
#[inline]
pub(crate) fn with_contraction(text: &[u8], e: usize, is_final: bool) -> Option<usize> {
    match text.get(e) {
        Some(b'\'') => Some(contraction(text, e + 1, is_final)?.unwrap_or(e)),
        Some(_) => Some(e),
        None => is_final.then_some(e),
    }
}

/// The letter part of the first two alternatives (see the module docs): `Some(Some(end))` before
/// the contraction, `Some(None)` when neither alternative matches, `None` when undecided.
#[inline]
fn letters(text: &[u8], s: usize, c0: Ch, pre: bool, is_final: bool) -> Option<Option<usize>> {
    let a = if pre { s + c0.len } else { s };
    let mut i = a;
    let mut last_w_end = 0;
    let stop = loop {
        // The decoder inlined on 64-bit targets (faster on the hosts); one out-of-line copy on
        // 32-bit ones, where flash is scarce (`cargo xtask footprint`: 454 bytes less code).
        let c = if cfg!(target_pointer_width = "64") {
            peek_inline(text, i, is_final)
        } else {
            peek(text, i, is_final)
        };
        if c.class == MORE {
            return None;
        }
        if !c.is(UPPER_MASK) {
            break c;
        }
        i += c.len;
        if c.is(LOWER_MASK) {
            last_w_end = i;
        }
    };
    if stop.is(LOWER_MASK) {
        let e = scan(text, i + stop.len, LOWER_MASK, is_final)?;
        return Some(Some(e));
    }
    if last_w_end != 0 {
        return Some(Some(last_w_end));
    }
    if pre && c0.class == M {
        return Some(Some(s + c0.len));
    }
    Some((i > a).then_some(i))
}

/// Fast path of the letter alternatives when everything they look at is ASCII: an optional
/// ASCII `P` character, `[A-Z]*`, then `[a-z]+` or (second alternative) nothing, stopped by an
/// ASCII character. `None` sends the caller to the general path.
#[inline(always)]
fn ascii_letters(text: &[u8], s: usize, b0: u8) -> Option<usize> {
    let p = s + usize::from(ascii_pre(b0));
    let mut i = p;
    while text.get(i).is_some_and(u8::is_ascii_uppercase) {
        i += 1;
    }
    let b = *text.get(i)?;
    if b.is_ascii_lowercase() {
        let e = skip_ascii_lowercase(text, i + 1);
        // The run continues only through non-ASCII `W` characters, or it is undecided.
        return text.get(e).is_some_and(|&b| b < 0x80).then_some(e);
    }
    // `[A-Z]+` stopped by an ASCII non-letter: `W+` cannot start, the second alternative takes
    // the uppercase run.
    (b < 0x80 && i > p).then_some(i)
}

/// The two rules in which Mistral's Tekken pattern differs from o200k_base's (see
/// [`super::Pattern::Tekken`]). Runtime values: one copy of the splitter serves both patterns.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rules {
    /// A letter piece takes the optional `(?i:'s|'t|'re|'ve|'m|'ll|'d)` after it.
    pub contractions: bool,
    /// Numbers are taken up to this many at a time (`\p{N}{1,3}`: 3, `\p{N}`: 1).
    pub max_digits: u8,
}

impl Rules {
    /// o200k_base.
    pub const O200K: Rules = Rules {
        contractions: true,
        max_digits: 3,
    };
    /// Tekken: no contractions, one number character a piece.
    pub const TEKKEN: Rules = Rules {
        contractions: false,
        max_digits: 1,
    };

    /// The rules of `pattern`: Tekken's for [`Pattern::Tekken`], else o200k_base's.
    #[inline(always)]
    pub(crate) const fn of(pattern: Pattern) -> Rules {
        match pattern {
            Pattern::Tekken => Rules::TEKKEN,
            _ => Rules::O200K,
        }
    }
}

/// The end of the piece at `s` under `rules`, or `None` for NeedMore (see
/// [`super::next_piece`]).
#[inline]
pub(crate) fn next_with(text: &[u8], s: usize, is_final: bool, rules: Rules) -> Option<usize> {
    let contraction = |e| {
        if rules.contractions {
            with_contraction(text, e, is_final)
        } else {
            Some(e)
        }
    };
    let b0 = *text.get(s)?;
    if let Some(e) = ascii_letters(text, s, b0) {
        return contraction(e);
    }
    let c0 = peek(text, s, is_final);
    if c0.class == MORE {
        return None;
    }
    let s1 = s + c0.len;
    let pre = c0.is(PRE_MASK) && b0 != b'\r' && b0 != b'\n';
    if pre || c0.is(L_MASK) {
        if let Some(e) = letters(text, s, c0, pre, is_final)? {
            return contraction(e);
        }
    }
    // `\p{N}{1,3}` (Tekken: `\p{N}`)
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
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    let run_from = if c0.is(OTHER_MASK) {
        Some(s1)
    } else if b0 == b' ' {
        let c1 = peek(text, s1, is_final);
        if c1.class == MORE {
            return None;
        }
        c1.is(OTHER_MASK).then_some(s1 + c1.len)
    } else {
        None
    };
    if let Some(p) = run_from {
        let e = scan(text, p, OTHER_MASK, is_final)?;
        return scan_newlines(text, e, b'/', is_final);
    }
    // Whitespace.
    let run = scan_ws(text, s, is_final)?;
    Some(if run.newline_end != 0 {
        run.newline_end
    } else if !run.at_end && run.last > s {
        run.last
    } else {
        run.end
    })
}
