//! Compiled split patterns against `fancy-regex`: a regex drawn from a small grammar of the
//! shapes tokenizer patterns use (classes, literals, optional prefixes, greedy and bounded
//! repeats, case-insensitive groups, and a final `\s+(?!\S)`), compiled by
//! `picobpe_model::compile_pattern` and walked by `picobpe::pretok::CompiledPattern`.
//!
//! Input: `[alternatives][atoms...][text...]` (the grammar reads bytes until the regex is
//! complete; the rest is the text).
//!
//! Checks (any failure aborts with the input):
//! 1. a regex the compiler accepts splits the text (each byte that is not well-formed UTF-8
//!    standing in as U+E000) exactly as `fancy-regex`'s matches do with the text between them
//!    kept as pieces (`tokenizers`' `Split` with `Isolated`), and with a drawn rule
//!    (`MergedWithPrevious`, `MergedWithNext`, `Contiguous`, `Removed`, inverted or not)
//!    exactly as `tokenizers`' folds make pieces of those segments (written out plainly in
//!    [`ruled`]); pieces are compared as spans, so bytes `Removed` drops are in none;
//! 2. fed as growing prefixes with `is_final == false`, every piece returned is the one-shot
//!    piece at that position;
//! 3. two levels (the drawn regex inside `\p{N}{1,3}` splits, as DeepSeek's `Sequence`) give
//!    the drawn regex's split of each outer piece.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::pretok::{
    split_levels, split_levels_memo, CompiledPattern, SplitBehavior, SplitMemo, SplitRule, Step,
};
use picobpe_fuzz::{escape, ref_pieces, Params};
use std::collections::HashMap;
use std::sync::Mutex;

/// Atoms of the grammar (each matches at least one character).
const ATOMS: [&str; 14] = [
    r"\p{L}", r"\p{N}", r"\s", r"[^\s\p{L}\p{N}]", r"[a-z]", r"[A-Z]", "'", " ", r"[\r\n]",
    r"\p{Lu}", r"[\p{L}\p{M}]", r"[^\r\n\p{L}\p{N}]", r"[\p{P}\p{S}]", r"[一-龥]",
];
/// Repeats after an atom.
const REPEATS: [&str; 5] = ["", "+", "{1,3}", "+", "*"];

/// Draw a regex: 1 to 4 alternatives, each 1 to 3 atoms (the first never optional), then
/// maybe `\s+(?!\S)|\s+`.
fn draw(p: &mut Params<'_>) -> String {
    let mut alternatives = Vec::new();
    for _ in 0..1 + p.below(4) {
        let mut alt = String::new();
        if p.below(3) == 0 {
            alt.push_str(if p.below(2) == 0 { " ?" } else { r"[^\r\n\p{L}\p{N}]?" });
        }
        for i in 0..1 + p.below(3) {
            alt.push_str(ATOMS[p.below(ATOMS.len())]);
            let repeat = REPEATS[p.below(REPEATS.len())];
            alt.push_str(if i == 0 && repeat == "*" { "+" } else { repeat });
        }
        if p.below(5) == 0 {
            alt = format!("(?i:{alt})");
        }
        alternatives.push(alt);
    }
    if p.below(2) == 0 {
        alternatives.push(r"\s+(?!\S)".to_owned());
        alternatives.push(r"\s+".to_owned());
    }
    alternatives.join("|")
}

/// Compiled patterns by regex (compiling costs milliseconds; the grammar repeats itself).
static COMPILED: Mutex<Option<HashMap<String, Option<&'static [u32]>>>> = Mutex::new(None);

fn compile(regex: &str, rule: SplitRule) -> Option<CompiledPattern<'static>> {
    let mut cache = COMPILED.lock().unwrap();
    let words = *cache
        .get_or_insert_with(HashMap::new)
        .entry(format!("{}/{regex}", rule.bits()))
        .or_insert_with(|| {
            let split = picobpe_model::Split {
                regex: regex.to_owned(),
                rule,
            };
            let words = picobpe_model::compile_split(&split).ok()?;
            Some(&*Box::leak(words.into_boxed_slice()))
        });
    Some(CompiledPattern::new(words?).expect("compiled words check"))
}

/// The pieces of `text` by `tokenizers`' `Split` with `rule`: its segments (matches, and the
/// text between them), each flagged as a match (or, inverted, as not one), folded as
/// `tokenizers`' `NormalizedString::split` folds them: the pieces' spans.
fn ruled(re: &fancy_regex::Regex, text: &[u8], rule: SplitRule) -> Vec<(usize, usize)> {
    let mut segments = Vec::new();
    let mut pos = 0;
    for (start, end) in ref_pieces(re, text).expect("fancy-regex runs") {
        if start > pos {
            segments.push((pos, start, rule.invert));
        }
        segments.push((start, end, !rule.invert));
        pos = end;
    }
    if pos < text.len() {
        segments.push((pos, text.len(), rule.invert));
    }
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    let mut previous = false;
    match rule.behavior {
        SplitBehavior::Isolated => pieces = segments.iter().map(|&(a, b, _)| (a, b)).collect(),
        SplitBehavior::MergedWithPrevious => {
            for &(a, b, m) in &segments {
                match pieces.last_mut() {
                    Some(last) if m && !previous => last.1 = b,
                    _ => pieces.push((a, b)),
                }
                previous = m;
            }
        }
        SplitBehavior::MergedWithNext => {
            for &(a, b, m) in segments.iter().rev() {
                match pieces.last_mut() {
                    Some(last) if m && !previous => last.0 = a,
                    _ => pieces.push((a, b)),
                }
                previous = m;
            }
            pieces.reverse();
        }
        SplitBehavior::Contiguous => {
            for &(a, b, m) in &segments {
                match pieces.last_mut() {
                    Some(last) if m == previous => last.1 = b,
                    _ => pieces.push((a, b)),
                }
                previous = m;
            }
        }
        SplitBehavior::Removed => {
            pieces = (segments.iter())
                .filter(|s| !s.2)
                .map(|&(a, b, _)| (a, b))
                .collect()
        }
    }
    pieces
}

/// The piece ends of `text` when the matches of `re` and the text between them are pieces.
fn isolated(re: &fancy_regex::Regex, text: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut pos = 0;
    for (start, end) in ref_pieces(re, text).expect("fancy-regex runs") {
        if start > pos {
            ends.push(start);
        }
        ends.push(end);
        pos = end;
    }
    if pos < text.len() {
        ends.push(text.len());
    }
    ends
}

/// The split by `levels`, one memo across the walk (as the encoder does), checked against a
/// fresh memo at every piece: the pieces' spans (dropped bytes in none).
fn ours(levels: &[CompiledPattern<'_>], text: &[u8]) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut pos = 0;
    let mut memo = SplitMemo::new();
    while pos < text.len() {
        let step = split_levels_memo(levels, text, pos, true, &mut memo);
        assert_eq!(step, split_levels(levels, text, pos, true), "memo at {pos}");
        match step {
            Step::Piece { end } => {
                assert!(pos < end && end <= text.len(), "piece {pos}..{end}");
                pieces.push((pos, end));
                pos = end;
            }
            Step::Skip { end } => {
                assert!(pos < end && end <= text.len(), "skip {pos}..{end}");
                pos = end;
            }
            Step::NeedMore => panic!("NeedMore with is_final at {pos}"),
        }
    }
    pieces
}

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    // Bits 0-2 as drawn; `Removed` (bit 3) in place of `Isolated` for half the bytes.
    let b = u32::from(p.byte());
    let bits = if b & 3 == 0 && b & 8 != 0 { b & 12 } else { b & 7 };
    let rule = SplitRule::from_bits(bits).expect("a rule's bits");
    let regex = draw(&mut p);
    let text = p.rest();
    let Some(compiled) = compile(&regex, rule) else {
        return;
    };
    let reference = fancy_regex::Regex::new(&regex).expect("fancy-regex compiles the grammar");
    if rule == SplitRule::ISOLATED {
        let ends: Vec<usize> = ruled(&reference, text, rule).iter().map(|s| s.1).collect();
        assert_eq!(ends, isolated(&reference, text));
    }
    let want = ruled(&reference, text, rule);
    let got = ours(&[compiled], text);
    assert_eq!(got, want, "{regex:?} ({rule:?}) on {}", escape(text));

    // Streaming: growing prefixes, not final until the end.
    let mut pos = 0;
    let mut streamed = Vec::new();
    for avail in 1..=text.len() {
        while pos < avail {
            match compiled.next_piece(&text[..avail], pos, avail == text.len()) {
                Step::Piece { end } => {
                    streamed.push((pos, end));
                    pos = end;
                }
                Step::Skip { end } => pos = end,
                Step::NeedMore => break,
            }
        }
    }
    assert_eq!(
        streamed,
        want,
        "{regex:?} ({rule:?}) streamed on {}",
        escape(text)
    );

    // Two levels: digits outside, the drawn regex inside each outer piece.
    let digits = compile(r"\p{N}{1,3}", SplitRule::ISOLATED).expect("digits compile");
    let outer = fancy_regex::Regex::new(r"\p{N}{1,3}").unwrap();
    let mut want = Vec::new();
    let mut from = 0;
    for end in isolated(&outer, text) {
        let inner = ruled(&reference, &text[from..end], rule);
        want.extend(inner.into_iter().map(|(a, b)| (from + a, from + b)));
        from = end;
    }
    let got = ours(&[digits, compiled], text);
    assert_eq!(
        got,
        want,
        "digits then {regex:?} ({rule:?}) on {}",
        escape(text)
    );
});
