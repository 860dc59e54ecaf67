//! GPT-2 / r50k: `'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
//!
//! Leftmost-first alternation at `start`, which always matches (every character is a letter, a
//! number, whitespace or other), so the pieces tile the text:
//! 1. `'` + `s|d|m|t` or `ll|ve|re` (ASCII, case-sensitive) is a contraction piece;
//! 2. otherwise an optional U+0020 plus a maximal run of one class (letters, numbers, or
//!    "other" = not whitespace/letter/number) — the space is taken only when the character after
//!    it starts such a run;
//! 3. otherwise `start` is whitespace: the maximal whitespace run, except that when a
//!    non-whitespace character follows a run of two or more characters, `\s+(?!\S)` backtracks
//!    one character, leaving the run's last character to start the next piece.

use super::unicode::{letters_from, peek, scan, scan_ws, Ch, L_MASK, MORE, N_MASK, OTHER_MASK};

/// The contraction `'(?:[sdmt]|ll|ve|re)` (case-sensitive) at `s`, where `text[s]` is `'`:
/// `Some(Some(end))` when one matches, `Some(None)` when none does, `None` when undecided (the
/// text ends inside it and is not final).
#[inline]
pub(crate) fn contraction(text: &[u8], s: usize, is_final: bool) -> Option<Option<usize>> {
    let undecided = if is_final { Some(None) } else { None };
    match text.get(s + 1) {
        None => undecided,
        Some(b's' | b'd' | b'm' | b't') => Some(Some(s + 2)),
        Some(&b1 @ (b'l' | b'v' | b'r')) => {
            let want = if b1 == b'l' { b'l' } else { b'e' };
            match text.get(s + 2) {
                None => undecided,
                Some(&b2) => Some((b2 == want).then_some(s + 3)),
            }
        }
        Some(_) => Some(None),
    }
}

/// The end of the piece at `s`, or `None` for NeedMore (see [`super::next_piece`]).
#[inline]
pub(crate) fn next(text: &[u8], s: usize, is_final: bool) -> Option<usize> {
    let b0 = *text.get(s)?;
    // Fast path, most pieces of Latin-script text: ` ?[A-Za-z]` starts a letter run.
    let p = s + usize::from(b0 == b' ');
    if text.get(p).is_some_and(u8::is_ascii_alphabetic) {
        return letters_from(text, p + 1, is_final);
    }
    if b0 == b'\'' {
        if let Some(e) = contraction(text, s, is_final)? {
            return Some(e);
        }
        // `'` is "other": the run of other characters it starts.
        return scan(text, s + 1, OTHER_MASK, is_final);
    }
    let mut c: Ch = peek(text, s, is_final);
    let mut p = s;
    if c.class == MORE {
        return None;
    }
    if b0 == b' ' {
        let c1 = peek(text, s + 1, is_final);
        if c1.class == MORE {
            return None;
        }
        if c1.is(L_MASK | N_MASK | OTHER_MASK) {
            p = s + 1;
            c = c1;
        }
    }
    let mask = if c.is(L_MASK) {
        L_MASK
    } else if c.is(N_MASK) {
        N_MASK
    } else if c.is(OTHER_MASK) {
        OTHER_MASK
    } else {
        // Whitespace (and no space-prefixed run).
        let run = scan_ws(text, s, is_final)?;
        return Some(if !run.at_end && run.last > s {
            run.last
        } else {
            run.end
        });
    };
    scan(text, p + c.len, mask, is_final)
}
