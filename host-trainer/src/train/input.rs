//! Streaming the corpus as chunks that can be counted independently and in any order.
//!
//! Each input file is read in blocks of about `chunk_size` bytes, validated as UTF-8 and cut at a
//! *safe split*: a position `p` such that splitting the text on special tokens and pre-tokenizing
//! `text[..p]` and `text[p..]` separately yields exactly the special tokens and pieces of the
//! whole. The bytes after the cut are carried into the next block. Files are separate documents:
//! no piece spans two inputs.
//!
//! Safe splits, in order of preference (see [`Splitter::split_point`]):
//! 1. **After a special token** whose start is at least `max_special_len` bytes before the end of
//!    the buffer. Special tokens are found leftmost-longest (aho-corasick `LeftmostLongest`,
//!    which is what CS336's longest-first alternation does); a match starting at `s <= len -
//!    max_special_len` is final, because every competing candidate (starting at or before `s`)
//!    lies entirely inside the buffer. Pieces never span a special token, so the cut is safe.
//! 2. **After a `\n`** that has a non-whitespace character before it and a non-whitespace
//!    character other than `/` after it, when no final special-token match exists. In all three
//!    patterns (GPT-2, cl100k, o200k) a piece containing a `\n` is either made of whitespace or a
//!    punctuation run followed by `[\r\n]*` (`[\r\n/]*` for o200k), so no piece contains both
//!    the `\n` and the next character; the piece ending at the `\n` has the same extent whether
//!    the text ends there or continues; and the patterns have no look-behind, so pre-tokenizing
//!    from `p` is the same as continuing from `p`. The cut is at most `len + 1 -
//!    max_special_len`, so no special-token occurrence can straddle it (one would have started
//!    early enough to be a final match).
//! 3. **After the last complete piece** found by running the streaming pre-tokenizer
//!    (`is_final = false`) from the start of the buffer, for text without such newlines (one
//!    long line). This costs one extra pre-tokenizer pass over the buffer.
//!
//! If none exists (a single piece longer than the buffer), the buffer grows geometrically until
//! one does; memory then grows with the longest piece, which the counts must store anyway.

use std::fs::{self, File};
use std::io::Read;
use std::path::PathBuf;

use aho_corasick::{AhoCorasick, MatchKind};
use picobpe::pretok::{next_piece, Step};
use picobpe::Pattern;

use super::error::TrainError;

/// Finds safe split points (see the module docs) for one pattern and set of special tokens,
/// and splits text on those special tokens.
pub struct Splitter {
    /// Leftmost-longest matcher over the special tokens, if any.
    pub specials: Option<AhoCorasick>,
    /// Length in bytes of the longest special token (0 without specials).
    pub max_special_len: usize,
    /// The pre-tokenization pattern.
    pub pattern: Pattern,
}

impl Splitter {
    /// The splitter for `special_tokens` (any order) and `pattern`.
    pub fn new(special_tokens: &[impl AsRef<[u8]>], pattern: Pattern) -> Self {
        let specials = (!special_tokens.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(special_tokens)
                .expect("a few literal strings always build")
        });
        let max_special_len = special_tokens.iter().map(|s| s.as_ref().len()).max();
        Splitter {
            specials,
            max_special_len: max_special_len.unwrap_or(0),
            pattern,
        }
    }

    /// The safe split point preferred by the module-doc rules, in `1..=buf.len()`, or `None`.
    /// `buf` must be valid UTF-8 (it may end anywhere on a character boundary).
    pub fn split_point(&self, buf: &[u8]) -> Option<usize> {
        let n = buf.len();
        if let Some(ac) = &self.specials {
            if let Some(reliable) = n.checked_sub(self.max_special_len) {
                let last = ac
                    .find_iter(buf)
                    .take_while(|m| m.start() <= reliable)
                    .last();
                if let Some(m) = last {
                    return Some(m.end());
                }
            }
        }
        // Largest cut that no special-token occurrence can straddle.
        let limit = (n + 1).checked_sub(self.max_special_len.max(1))?;
        let text = std::str::from_utf8(buf).ok()?;
        newline_split(text, limit).or_else(|| self.piece_split(text, limit))
    }

    /// Rule 3: the end `p` of the last piece that the streaming pre-tokenizer completes in
    /// `text[..limit]`, such that the characters on both sides of `p` are not whitespace and the
    /// last piece `[s, p)` is the same when `text[..p]` is final.
    ///
    /// Why that suffices: every piece before `[s, p)` was decided by looking at most at the
    /// character at `s` (greedy runs stop at the first character outside their class; the only
    /// look-ahead, `\s+(?!\S)`, looks at the character after a whitespace run), so it does not
    /// change when the text ends at `p`; the last piece is checked explicitly. A piece boundary
    /// alone is not enough: in `"I\n\nIn"` the boundary before `In` would turn the pieces
    /// `"\n"`, `"\n"` into `"\n\n"` at the end of a chunk, hence the whitespace condition.
    fn piece_split(&self, text: &str, limit: usize) -> Option<usize> {
        let head = &text.as_bytes()[..limit];
        let mut candidates = Vec::new();
        let mut pos = 0;
        while pos < head.len() {
            match next_piece(self.pattern, head, pos, false) {
                Step::Piece { end } if end > pos && end <= head.len() => {
                    if solid(char_before(text, end)) && solid(char_at(text, end)) {
                        candidates.push((pos, end));
                    }
                    pos = end;
                }
                _ => break,
            }
        }
        candidates.into_iter().rev().find_map(|(start, end)| {
            let last = next_piece(self.pattern, &text.as_bytes()[..end], start, true);
            (last == Step::Piece { end }).then_some(end)
        })
    }
}

/// Rule 2: the largest `p <= limit`, `p < text.len()`, with `text[p - 1] == '\n'`, a
/// non-whitespace character before the newline and a non-whitespace, non-`/` character at `p`.
fn newline_split(text: &str, limit: usize) -> Option<usize> {
    let mut end = limit.min(text.len().saturating_sub(1)); // search newlines in text[..end]
    while let Some(q) = text.as_bytes()[..end].iter().rposition(|&b| b == b'\n') {
        end = q;
        let next = char_at(text, q + 1);
        if solid(char_before(text, q)) && solid(next) && next != Some('/') {
            return Some(q + 1);
        }
    }
    None
}

/// Whether `c` is a character that is not whitespace.
fn solid(c: Option<char>) -> bool {
    c.is_some_and(|c| !c.is_whitespace())
}

/// The character starting at byte `i`, if one does.
fn char_at(text: &str, i: usize) -> Option<char> {
    text.get(i..)?.chars().next()
}

/// The character ending just before byte `i`, if one does.
fn char_before(text: &str, i: usize) -> Option<char> {
    text.get(..i)?.chars().next_back()
}

/// Total size in bytes of the inputs, checking that each exists and is not a directory.
pub fn total_size(inputs: &[PathBuf]) -> Result<u64, TrainError> {
    let mut total = 0;
    for path in inputs {
        let meta = fs::metadata(path).map_err(|source| TrainError::Read {
            path: path.clone(),
            source,
        })?;
        if meta.is_dir() {
            return Err(TrainError::IsDirectory { path: path.clone() });
        }
        total += meta.len();
    }
    Ok(total)
}

/// Stream every input in order (each checked by [`total_size`]) and hand each safe chunk to
/// `emit`, which returns `false` to stop early. `split_point(buf)` says where valid UTF-8
/// `buf` may be cut (in `1..=buf.len()`; [`Splitter::split_point`] for byte-level pieces).
/// `progress` is called with the number of bytes read after each block.
pub fn read_inputs(
    inputs: &[PathBuf],
    split_point: impl Fn(&[u8]) -> Option<usize>,
    chunk_size: usize,
    mut progress: impl FnMut(u64),
    mut emit: impl FnMut(Vec<u8>) -> bool,
) -> Result<(), TrainError> {
    for path in inputs {
        let read_err = |source| TrainError::Read {
            path: path.clone(),
            source,
        };
        let mut file = File::open(path).map_err(read_err)?;
        // Invariants: `pending` holds the file's bytes from offset `base` on that are not yet
        // emitted; `pending[..valid]` is valid UTF-8 ending on a character boundary.
        let mut pending: Vec<u8> = Vec::new();
        let mut base: u64 = 0;
        let mut valid = 0usize;
        let mut want = chunk_size;
        loop {
            pending.reserve(want);
            let got = (&mut file)
                .take(want as u64)
                .read_to_end(&mut pending)
                .map_err(read_err)?;
            progress(got as u64);
            let eof = got < want;
            match std::str::from_utf8(&pending[valid..]) {
                Ok(_) => valid = pending.len(),
                Err(e) => {
                    if e.error_len().is_some() || eof {
                        return Err(TrainError::InvalidUtf8 {
                            path: path.clone(),
                            offset: base + (valid + e.valid_up_to()) as u64,
                        });
                    }
                    valid += e.valid_up_to();
                }
            }
            if eof {
                if !pending.is_empty() && !emit(pending) {
                    return Ok(());
                }
                break;
            }
            match split_point(&pending[..valid]) {
                Some(p) => {
                    let mut rest = Vec::with_capacity(chunk_size + (pending.len() - p));
                    rest.extend_from_slice(&pending[p..]);
                    pending.truncate(p);
                    if !emit(std::mem::replace(&mut pending, rest)) {
                        return Ok(());
                    }
                    base += p as u64;
                    valid -= p;
                    want = chunk_size;
                }
                // No safe split yet: read as much again (geometric growth keeps this linear).
                None => want = pending.len().max(chunk_size),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newline_rule_needs_non_space_on_both_sides() {
        let s = Splitter::new(&[] as &[&str], Pattern::Gpt2);
        assert_eq!(s.split_point(b"ab\ncd"), Some(3));
        // Whitespace before the newline: the run would split differently at the end of text.
        assert_eq!(newline_split("ab \ncd", 6), None);
        assert_eq!(newline_split("ab\n cd", 6), None);
        assert_eq!(newline_split("ab\n\ncd", 6), None);
        assert_eq!(newline_split("ab\n/cd", 6), None);
        assert_eq!(newline_split("é\nü", 5), Some(3));
        // NBSP (U+00A0) is whitespace.
        assert_eq!(newline_split("a\u{a0}\nb", 5), None);
        assert_eq!(newline_split("a\nb\n", 4), Some(2));
    }

    #[test]
    fn special_split_only_where_final() {
        let s = Splitter::new(&["<|a|>", "<|a|><|a|>"], Pattern::Gpt2);
        // The <|a|> could still be the start of <|a|><|a|>: not final yet.
        assert_eq!(s.split_point(b"x<|a|><|a"), None);
        let text = b"xx<|a|>yyyyyyyyyyyy";
        assert_eq!(s.split_point(text), Some(7));
    }
}
#[cfg(test)]
mod chunking_tests {
    //! Chunking must be invisible: the pieces of all chunks, in order, equal the pieces of the
    //! whole text, for every pattern and chunk size (this exercises all three split rules).

    use super::*;

    /// `(start, end)` of every piece of `text` (split on specials, each segment final).
    fn pieces(
        text: &[u8],
        ac: Option<&AhoCorasick>,
        pattern: Pattern,
        base: usize,
    ) -> Vec<(usize, usize)> {
        let mut segments = Vec::new();
        let mut start = 0;
        if let Some(ac) = ac {
            for m in ac.find_iter(text) {
                segments.push((start, m.start()));
                start = m.end();
            }
        }
        segments.push((start, text.len()));
        let mut out = Vec::new();
        for (a, b) in segments {
            let seg = &text[a..b];
            let mut p = 0;
            while p < seg.len() {
                let Step::Piece { end } = next_piece(pattern, seg, p, true) else {
                    panic!("final text gave NeedMore");
                };
                out.push((base + a + p, base + a + end));
                p = end;
            }
        }
        out
    }

    fn check(rel: &str, limit: usize, specials: &[&str], chunk_sizes: &[usize]) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures")
            .join(rel);
        let mut text = std::fs::read(&path).unwrap();
        if text.len() > limit {
            let cut = text[..limit].iter().rposition(|&b| b == b'\n').unwrap() + 1;
            text.truncate(cut);
        }
        let tmp = std::env::temp_dir().join(format!(
            "picobpe-chunking-{}-{}",
            std::process::id(),
            rel.replace('/', "_")
        ));
        std::fs::write(&tmp, &text).unwrap();
        for pattern in [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k] {
            let splitter = Splitter::new(specials, pattern);
            let ac = splitter.specials.as_ref();
            let want = pieces(&text, ac, pattern, 0);
            for &chunk_size in chunk_sizes {
                let mut got = Vec::new();
                let mut pos = 0;
                let mut n_chunks = 0;
                read_inputs(
                    std::slice::from_ref(&tmp),
                    |buf| splitter.split_point(buf),
                    chunk_size,
                    |_| {},
                    |chunk| {
                        got.extend(pieces(&chunk, ac, pattern, pos));
                        pos += chunk.len();
                        n_chunks += 1;
                        true
                    },
                )
                .unwrap();
                assert_eq!(pos, text.len());
                if let Some(i) = (0..want.len().min(got.len())).find(|&i| want[i] != got[i]) {
                    let (a, b) = want[i];
                    panic!(
                        "{rel} {pattern:?} chunk {chunk_size}: piece {i} is {:?}, chunked {:?}, near {:?}",
                        want[i],
                        got[i],
                        String::from_utf8_lossy(&text[a.saturating_sub(12)..(b + 12).min(text.len())])
                    );
                }
                assert_eq!(
                    want.len(),
                    got.len(),
                    "{rel} {pattern:?} chunk {chunk_size}"
                );
                assert!(
                    chunk_size > text.len() || n_chunks > 1,
                    "{rel}: no split exercised"
                );
            }
        }
        let _ = std::fs::remove_file(&tmp);
    }

    #[test]
    fn english_with_specials() {
        let specials = ["<|endoftext|>", "<|endoftext|><|endoftext|>"];
        check(
            "train/english-1mb.txt",
            300_000,
            &specials,
            &[97, 4096, 1 << 20],
        );
        check("train/english-1mb.txt", 40_000, &specials, &[1, 13]);
        check(
            "cs336/tinystories_sample.txt",
            1 << 20,
            &specials,
            &[1, 5, 64],
        );
    }

    #[test]
    fn multilingual_without_specials() {
        for f in ["fr", "ru", "zh", "ja", "de", "el", "code-rust"] {
            let rel = format!("train/multi/{f}.txt");
            check(&rel, 1 << 20, &[], &[97, 4096]);
            check(&rel, 20_000, &[], &[1]);
        }
    }
}
