//! From corpus bytes to what the merge loop reads (`TrainerInterface::LoadSentences` and
//! `SplitSentencesByWhitespace`): sentences, normalized, meta pieces marked, rare characters
//! made `▅`, cut into words and counted.
//!
//! With `split_by_whitespace` (the default) the corpus is never held as sentences: each
//! thread normalizes its share of the lines and counts their words, and the alphabet is
//! chosen from the words' character counts, which are the sentences' (a word's characters
//! times its count). Rare characters are then replaced in the distinct words, and words that
//! become equal are counted together: the same words and counts as replacing them in the
//! sentences first, as `sentencepiece` does, because the cut before each `▁` does not move
//! while `▁` itself stays in the alphabet. When it does not (long lines with few spaces), the
//! sentences are read again, masked, then cut. Without `split_by_whitespace` the sentences are
//! kept, in `sentencepiece`'s order.

use rustc_hash::FxHashMap;

use super::piece_rule::{BOUNDARY, UNK_CHAR};

/// A line is a sentence when it is not empty, at most this long, and free of `▅`.
pub(super) struct LineRule {
    pub max_len: usize,
}

impl LineRule {
    fn keeps(&self, line: &[u8]) -> bool {
        const UNK: &[u8] = "\u{2585}".as_bytes();
        !line.is_empty()
            && line.len() <= self.max_len
            && !line
                .iter()
                .enumerate()
                .any(|(i, &b)| b == UNK[0] && line[i..].starts_with(UNK))
    }
}

/// What one thread (or the whole corpus, once merged) gathered.
#[derive(Default)]
pub(super) struct Gathered {
    /// Words (UTF-8 bytes) and their counts (`split_by_whitespace`).
    pub words: FxHashMap<Box<[u8]>, u64>,
    /// Sentences in order, empty ones included (otherwise).
    pub sentences: Vec<String>,
    /// Sentences read.
    pub n_sentences: usize,
}

/// `PrefixMatcher::GlobalReplace` over the meta pieces: the longest one starting at each
/// position becomes the boundary mark; elsewhere one character is copied.
pub(super) struct MetaMatcher {
    /// The pieces by their first byte.
    by_first: Vec<Vec<String>>,
}

impl MetaMatcher {
    pub(super) fn new<'a>(pieces: impl Iterator<Item = &'a str>) -> Self {
        let mut by_first: Vec<Vec<String>> = vec![Vec::new(); 256];
        for p in pieces {
            if let Some(&b) = p.as_bytes().first() {
                by_first[usize::from(b)].push(p.to_string());
            }
        }
        MetaMatcher { by_first }
    }

    /// The length of the longest piece at the start of `rest`.
    fn longest(&self, rest: &[u8]) -> Option<usize> {
        let first = rest.first()?;
        self.by_first[usize::from(*first)]
            .iter()
            .filter(|p| rest.starts_with(p.as_bytes()))
            .map(String::len)
            .max()
    }

    /// `text` (UTF-8) with each meta piece replaced.
    pub(super) fn replace<'t>(&self, text: &'t [u8]) -> std::borrow::Cow<'t, [u8]> {
        if !text
            .iter()
            .any(|&b| !self.by_first[usize::from(b)].is_empty())
        {
            return std::borrow::Cow::Borrowed(text);
        }
        let mut out = Vec::with_capacity(text.len());
        let mut pos = 0;
        while pos < text.len() {
            match self.longest(&text[pos..]) {
                Some(len) => {
                    out.push(BOUNDARY as u8);
                    pos += len;
                }
                None => {
                    let len = char_len(text[pos]).min(text.len() - pos);
                    out.extend_from_slice(&text[pos..pos + len]);
                    pos += len;
                }
            }
        }
        std::borrow::Cow::Owned(out)
    }
}

/// The length of the UTF-8 character whose first byte is `b` (`OneCharLen`: 1 for a byte
/// that cannot start one).
pub(super) fn char_len(b: u8) -> usize {
    match b {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// The ASCII bytes that start a key made of ASCII bytes only, in a character map's double
/// array (`units`, Darts-clone's layout as `picobpe::sentencepiece::CharsMap` holds it; empty:
/// none) whose keys are at most `max_key` bytes. A key that matches at an ASCII byte of an
/// all-ASCII text is all ASCII, so such a text with none of these bytes matches no key.
///
/// Errs on the safe side: a byte whose search exceeds its budget of nodes (a damaged array
/// can make the walk revisit nodes) counts as a key start, which only costs speed.
pub(super) fn ascii_key_starts(units: &[u32], max_key: usize) -> [bool; 128] {
    let mut starts = [false; 128];
    let Some(&root) = units.first() else {
        return starts;
    };
    let root = picobpe::sentencepiece::unit_offset(root);
    for (b, start) in starts.iter_mut().enumerate() {
        let mut budget = 1usize << 16;
        *start = ascii_key_below(units, root, b as u8, max_key, &mut budget);
    }
    starts
}

/// True when the node reached from `node` by the ASCII byte `b` ends a key, or leads to one by
/// ASCII bytes within `depth` more steps (or when `budget` runs out: see
/// [`ascii_key_starts`]).
fn ascii_key_below(units: &[u32], node: usize, b: u8, depth: usize, budget: &mut usize) -> bool {
    if *budget == 0 {
        return true;
    }
    *budget -= 1;
    let next = node ^ usize::from(b);
    let Some(&unit) = units.get(next) else {
        return false;
    };
    if unit & ((1 << 31) | 0xFF) != u32::from(b) {
        return false;
    }
    if unit >> 8 & 1 != 0 {
        return true;
    }
    let child = next ^ picobpe::sentencepiece::unit_offset(unit);
    depth > 1 && (0..128u8).any(|c| ascii_key_below(units, child, c, depth - 1, budget))
}

/// `▁` in UTF-8.
const MARK: [u8; 3] = [0xE2, 0x96, 0x81];

/// `SplitIntoWords` (whitespace as a prefix) over UTF-8 bytes: a word starts at the text's
/// start and at each `▁` (with `allow_ws_only_pieces`, only at the first `▁` of a run). A
/// `▁` is found by its bytes: its first byte, 0xE2, never continues another character.
pub(super) fn split_into_words(text: &[u8], allow_ws_only_pieces: bool, mut f: impl FnMut(&[u8])) {
    let mut start = 0usize;
    let mut from = 0usize;
    // The end of the last `▁` seen, for runs.
    let mut mark_end = usize::MAX;
    while let Some(p) = text[from..].iter().position(|&b| b == MARK[0]) {
        let i = from + p;
        from = i + 1;
        if !text[i..].starts_with(&MARK) {
            continue;
        }
        from = i + MARK.len();
        let in_run = allow_ws_only_pieces && mark_end == i;
        mark_end = from;
        if i > 0 && !in_run {
            f(&text[start..i]);
            start = i;
        }
    }
    if !text.is_empty() {
        f(&text[start..]);
    }
}

/// Normalize the kept lines of `text` and gather them into `g`: words counted when `split`
/// (`Some(allow_whitespace_only_pieces)`), else sentences appended in order.
pub(super) fn gather(
    text: &[u8],
    rule: &LineRule,
    normalize: &(dyn Fn(&[u8], &mut Vec<u8>) + Sync),
    matcher: &MetaMatcher,
    split: Option<bool>,
    g: &mut Gathered,
) {
    let mut buf = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        if !rule.keeps(line) {
            continue;
        }
        g.n_sentences += 1;
        normalize(line, &mut buf);
        let sentence = matcher.replace(&buf);
        match split {
            Some(allow_ws_only) => split_into_words(&sentence, allow_ws_only, |w| {
                if let Some(n) = g.words.get_mut(w) {
                    *n += 1;
                } else {
                    g.words.insert(w.into(), 1);
                }
            }),
            None => g
                .sentences
                .push(String::from_utf8_lossy(&sentence).into_owned()),
        }
    }
}

/// The corpus up to the end of its `n`th sentence (a line `rule` keeps): `spm_train`'s
/// `--input_sentence_size n --shuffle_input_sentence false`.
pub(super) fn first_sentences<'c>(corpus: &[&'c [u8]], rule: &LineRule, n: u64) -> Vec<&'c [u8]> {
    let mut out = Vec::new();
    let mut kept = 0u64;
    for &text in corpus {
        let mut end = 0usize;
        for line in text.split(|&b| b == b'\n') {
            if kept == n {
                break;
            }
            end = (end + line.len() + 1).min(text.len());
            if rule.keeps(line) {
                kept += 1;
            }
        }
        out.push(&text[..end]);
        if kept == n {
            break;
        }
    }
    out
}

/// `text` cut into about `parts` pieces at line ends.
pub(super) fn line_chunks(text: &[u8], parts: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let want = text.len() / parts.max(1) + 1;
    let mut rest = text;
    while !rest.is_empty() {
        let cut = if rest.len() <= want {
            rest.len()
        } else {
            match rest[want..].iter().position(|&b| b == b'\n') {
                Some(p) => want + p + 1,
                None => rest.len(),
            }
        };
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out
}

/// Character counts over `words` (NUL excepted) and their total.
pub(super) fn char_counts<'a>(
    words: impl Iterator<Item = (&'a str, u64)>,
) -> (FxHashMap<char, u64>, u64) {
    let mut ascii = [0u64; 128];
    let mut other: FxHashMap<char, u64> = FxHashMap::default();
    let mut all = 0u64;
    for (w, n) in words {
        for c in w.chars() {
            if c == '\0' {
                continue;
            }
            if c.is_ascii() {
                ascii[c as usize] += n;
            } else {
                *other.entry(c).or_default() += n;
            }
            all += n;
        }
    }
    for (b, &n) in ascii.iter().enumerate() {
        if n > 0 {
            other.insert(char::from(b as u8), n);
        }
    }
    (other, all)
}

/// The ASCII characters in `alphabet`, by byte.
pub(super) fn ascii_kept(alphabet: &FxHashMap<char, u64>) -> [bool; 128] {
    let mut kept = [false; 128];
    for (b, k) in kept.iter_mut().enumerate() {
        *k = alphabet.contains_key(&char::from(b as u8));
    }
    kept
}

/// `text` with every character outside `alphabet` made `▅` (`None`: all are in it);
/// `ascii` is [`ascii_kept`] of `alphabet`.
pub(super) fn mask_rare(
    text: &str,
    alphabet: &FxHashMap<char, u64>,
    ascii: &[bool; 128],
) -> Option<String> {
    let kept = |c: char| match ascii.get(c as usize) {
        Some(&k) => k,
        None => alphabet.contains_key(&c),
    };
    if text.chars().all(kept) {
        return None;
    }
    Some(
        text.chars()
            .map(|c| if kept(c) { c } else { UNK_CHAR })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_key_search_ends_on_damaged_arrays() {
        assert_eq!(ascii_key_starts(&[], 16), [false; 128]);
        // Units whose labels match whatever is asked and whose offsets lead back among
        // themselves: a walk that never ends without its budget.
        let units: Vec<u32> = (0..1024u32)
            .map(|i| (i & 0x7F) | (((i * 37) & 0x3FF) << 10))
            .collect();
        let starts = ascii_key_starts(&units, 64);
        assert!(
            starts.iter().any(|&s| s),
            "a search out of budget counts as a key start"
        );
    }

    #[test]
    fn words_start_at_each_mark() {
        let mut words = Vec::new();
        split_into_words("▁a▁▁b c▁".as_bytes(), false, |w| {
            words.push(String::from_utf8(w.to_vec()).unwrap())
        });
        assert_eq!(words, ["▁a", "▁", "▁b c", "▁"]);
        words.clear();
        split_into_words("▁a▁▁b c▁".as_bytes(), true, |w| {
            words.push(String::from_utf8(w.to_vec()).unwrap())
        });
        assert_eq!(words, ["▁a", "▁▁b c", "▁"]);
    }
}
