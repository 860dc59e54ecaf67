//! Pre-tokenization: splitting text into the pieces that BPE merges independently.
//!
//! Three hand-rolled splitters (no regex engine, no allocation, no panics) reproduce exactly the
//! splits `fancy-regex` makes with the GPT-2, cl100k_base and o200k_base patterns, and the
//! cl100k_base splitter, with two rules as parameters, those of the Llama 3 and Qwen2 patterns,
//! and the o200k_base one, with two others, that of Mistral's Tekken (see [`Pattern`]); each module spells out how its pattern's leftmost-first backtracking reduces to
//! a few scans. They share one generated Unicode class table (`unicode_tables.rs`, made by
//! `cargo xtask gen-unicode` from `regex-syntax`, ~16 KB: see [`CharClass`]).
//!
//! # Bytes, not strings
//!
//! The splitters take `&[u8]`. Well-formed UTF-8 is split exactly like the regex splits the
//! corresponding `&str`. **Invalid UTF-8 rule:** every byte that is not part of a well-formed
//! UTF-8 sequence (decoding left to right, Unicode Table 3-7; the bytes `from_utf8_lossy` would
//! replace) is one character of class "other" — not a letter, number, mark or whitespace, and
//! not `'`, `\r`, `\n`, `/` or U+0020 — i.e. it splits like a private-use code point such as
//! U+E000 would. Pieces therefore never cut a well-formed sequence, and concatenating the pieces
//! gives back the input byte for byte.
//!
//! # Streaming rule
//!
//! [`next_piece`] with `is_final == false` says that more bytes may follow `text`. It returns
//! [`Step::Piece`] only when the piece is the same for *every* continuation of `text`, and
//! [`Step::NeedMore`] when the piece's extent depends on what follows — precisely when deciding
//! it looked at the end of `text`: a run (letters, numbers, other, whitespace, `[\r\n]`) that
//! reaches the end, a lone `'` or a contraction prefix (`'l`, `'v`, `'r`, …) at the end, an
//! optional prefix character (` ` or, for cl100k/o200k, other leading characters) at the end,
//! a whitespace run at the end (`\s+(?!\S)` and cl100k's `\s++$` need the next character or the
//! end of the input), or a truncated but so far well-formed UTF-8 sequence at the end (its class
//! is unknown until it completes; this case is conservative: NeedMore even when every completion
//! would split alike). With `is_final == true` the text's end is the input's end,
//! `NeedMore` never occurs and a truncated sequence is invalid (one "other" character per byte).
//! Hence: feeding a growing prefix and keeping every returned piece gives exactly the one-shot
//! split.
//!
//! # Complexity
//!
//! One call costs O(piece length + a few characters of lookahead); splitting a whole text is
//! linear. ASCII is classified with a 128-entry table, other characters by a hand-written UTF-8
//! decoder and a two-level table lookup (two loads, no search; on 64-bit targets one load from a
//! flat table of the Basic Multilingual Plane derived from it). On x86_64, letter runs take CJK
//! unified ideographs five at a time (one SSE2 step per 15 bytes, `unicode.rs`).
//!
//! The encoder first asks, for cl100k_base and o200k_base on x86_64, a block splitter
//! (`ascii_block.rs`) that finds every piece boundary in up to 64 ASCII bytes at once with SSE2
//! class masks and bit algebra; then an ASCII fast path (`ascii_piece.rs`) that decides the
//! common short ASCII pieces from the 16 bytes at the piece's start, words eight bytes at a
//! time; then, for gpt2 and cl100k_base on 64-bit targets where that fast path says a piece
//! starts in a two- or three-byte script other than CJK, a character-block splitter
//! (`char_block.rs`) that walks up to 61 bytes of it once, one table lookup and one automaton
//! step a character. All three answer only where they provably agree with [`next_piece`] for
//! every continuation, and say "ask the full splitter" otherwise.

mod ascii_block;
mod ascii_piece;
mod char_block;
mod cl100k;
pub mod compiled;
mod gpt2;
mod o200k;
#[cfg(test)]
mod test_random;
mod unicode;
#[rustfmt::skip]
mod unicode_tables;

pub(crate) use ascii_block::Blocks;
pub(crate) use ascii_piece::{fast_piece, AsciiPiece, Fast};
pub use compiled::{
    split_levels, split_levels_memo, CompiledParts, CompiledPattern, CompiledPatternError, MatchAt,
    SplitBehavior, SplitMemo, SplitRule,
};
pub use unicode::{char_class, CharClass};

/// Which pre-tokenization regex a model uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// GPT-2 / r50k: `'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
    #[default]
    Gpt2,
    /// cl100k_base (GPT-4): `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|`
    /// `` ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s``.
    Cl100k,
    /// o200k_base (GPT-4o): the `|`-join of
    /// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
    /// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
    /// `\p{N}{1,3}`, `` ?[^\s\p{L}\p{N}]+[\r\n/]*``, `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`.
    O200k,
    /// Llama 3 (Meta's tiktoken-based tokenizer, and its `tokenizer.json`):
    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|`
    /// `` ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+``. It splits like
    /// [`Pattern::Cl100k`] except at the end of the text: a whitespace run there that holds a
    /// newline ends after its last newline (cl100k's `\s++$` takes the whole run).
    Llama3,
    /// Qwen2 and Qwen2.5: the Llama 3 pattern with `\p{N}` for `\p{N}{1,3}` (one number
    /// character per piece).
    Qwen2,
    /// Mistral's Tekken (`tekken.json`: Mistral NeMo, Ministral, Pixtral): the o200k_base
    /// pattern without its contractions and with `\p{N}` for `\p{N}{1,3}`.
    Tekken,
}

/// The outcome of asking for the piece that starts at a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The piece is `text[start..end]`, and no bytes appended after `text` could change it.
    Piece {
        /// Exclusive end of the piece; `start < end <= text.len()`.
        end: usize,
    },
    /// The piece's extent depends on bytes after `text` (only when `is_final` is false).
    NeedMore,
    /// `text[start..end]` is no piece: a `Split` with the behaviour `Removed` drops it
    /// ([`SplitBehavior::Removed`]; only compiled split levels give this). The next piece
    /// starts at `end`; `start < end <= text.len()`, and no bytes appended after `text`
    /// could change that these bytes are dropped.
    Skip {
        /// Exclusive end of the dropped bytes.
        end: usize,
    },
}

/// Find the piece that starts at `start` (`start < text.len()`).
///
/// `is_final` says that `text` ends where the input (or the text between two special tokens)
/// ends; when false, more bytes may follow and an undecidable piece yields [`Step::NeedMore`]
/// (see the module docs for the exact rule). `start` should be `0` or the end of the previous
/// piece; other positions are accepted (a continuation byte there is an invalid byte).
/// `start >= text.len()` has no piece and yields `NeedMore`.
#[inline]
pub fn next_piece(pattern: Pattern, text: &[u8], start: usize, is_final: bool) -> Step {
    let end = match pattern {
        Pattern::Gpt2 => gpt2::next(text, start, is_final),
        Pattern::O200k | Pattern::Tekken => {
            o200k::next_with(text, start, is_final, o200k::Rules::of(pattern))
        }
        // One call site for the three: one copy of the splitter.
        Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => {
            let rules = match pattern {
                Pattern::Llama3 => cl100k::Rules::LLAMA3,
                Pattern::Qwen2 => cl100k::Rules::QWEN2,
                _ => cl100k::Rules::CL100K,
            };
            cl100k::next_with(text, start, is_final, rules)
        }
    };
    match end {
        // Defensive: every splitter returns `start < end <= len`; anything else is reported as
        // "no piece yet" rather than an out-of-range piece.
        Some(end) if start < end && end <= text.len() => Step::Piece { end },
        _ => Step::NeedMore,
    }
}

/// Iterator over the pieces of a complete text (`is_final == true`); see [`pieces`].
#[derive(Clone, Debug)]
pub struct Pieces<'a> {
    pattern: Pattern,
    text: &'a [u8],
    pos: usize,
}

/// The pieces of the complete text `text`, in order; their concatenation is `text`.
pub fn pieces(pattern: Pattern, text: &[u8]) -> Pieces<'_> {
    Pieces {
        pattern,
        text,
        pos: 0,
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.pos;
        let rest = self.text.get(start..).filter(|r| !r.is_empty())?;
        // With `is_final` the splitters always find a piece; should they not, the rest of the
        // text is yielded as one piece so that the pieces still cover the text.
        let end = match next_piece(self.pattern, self.text, start, true) {
            Step::Piece { end } => end,
            // The hand-rolled patterns never drop bytes.
            Step::NeedMore | Step::Skip { .. } => self.text.len(),
        };
        self.pos = end;
        rest.get(..end - start)
    }
}

impl core::iter::FusedIterator for Pieces<'_> {}
