//! Pre-tokenization: splitting text into the pieces that BPE merges independently.
//!
//! INTERFACE CONTRACT (the implementation in this file is a placeholder being replaced by the
//! hand-rolled GPT-2 / cl100k / o200k splitters; the signatures below are what the encoder uses).

/// Which pre-tokenization regex a model uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// GPT-2 / r50k: `'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
    Gpt2,
    /// cl100k_base (GPT-4).
    Cl100k,
    /// o200k_base (GPT-4o).
    O200k,
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
}

/// Find the piece that starts at `start` (`start < text.len()`).
///
/// `is_final` says that `text` ends where the input (or the text between two special tokens)
/// ends; when false, more bytes may follow and an undecidable piece yields [`Step::NeedMore`].
pub fn next_piece(pattern: Pattern, text: &[u8], start: usize, is_final: bool) -> Step {
    let _ = (pattern, is_final);
    // PLACEHOLDER: one byte per piece.
    Step::Piece { end: (start + 1).min(text.len()) }
}
