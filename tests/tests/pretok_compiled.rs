//! Differential tests of compiled patterns (`picobpe_model::compile_pattern` walked by
//! `picobpe::pretok::CompiledPattern`): each reference regex the compiler accepts, compiled
//! and split against `fancy-regex` on the corpora, every Unicode scalar value, random strings,
//! invalid UTF-8 (U+E000 substitution reference) and streamed prefixes, with the harness of the
//! hand-rolled splitters (`pretok_common`). Also: compiled and hand-rolled splitters agree on
//! random bytes, and a DeepSeek-style `Split` regex (not one of the hand-rolled patterns).

mod pretok_common;

use picobpe::pretok::{CompiledPattern, MatchAt, Pattern, Step};
use picobpe_model::compile_pattern;
use pretok_common::*;

/// The reference regexes without possessive quantifiers (cl100k_base's has them: the DFA
/// compiler refuses it, as checked below).
const COMPILABLE: [Pattern; 5] = [
    Pattern::Gpt2,
    Pattern::Llama3,
    Pattern::Qwen2,
    Pattern::O200k,
    Pattern::Tekken,
];

fn each(f: impl Fn(&Harness)) {
    for p in COMPILABLE {
        f(&Harness::compiled(p));
    }
}

#[test]
fn corpora_match_fancy_regex() {
    each(|h| corpora(h, 1 << 20));
}

#[test]
fn every_scalar_value_matches_fancy_regex() {
    // Two patterns cover every alternative shape (contractions, optional prefixes, number
    // runs, newline runs, the look-ahead); all five run on the other suites.
    // One thread each: the suite's longest test.
    std::thread::scope(|scope| {
        for p in [Pattern::Gpt2, Pattern::O200k] {
            scope.spawn(move || every_scalar(&Harness::compiled(p)));
        }
    });
}

#[test]
fn random_strings_match_fancy_regex() {
    each(|h| random_strings(h, 0xC0_0000, 10_000));
}

#[test]
fn invalid_utf8_splits_like_private_use() {
    each(|h| invalid_utf8(h, 0xC0_BAD0, 5_000));
}

#[test]
fn cjk_runs_match_fancy_regex() {
    each(|h| cjk_runs(h, 0xC0_C1C0, 5_000));
}

#[test]
fn streaming_prefixes_agree_with_one_shot() {
    each(|h| streaming(h, 0xC0_57E0, 5_000));
}

#[test]
fn streaming_need_more_is_necessary() {
    each(|h| streaming_precision(h, 0xC0_9EC0, 3_000));
}

/// On arbitrary bytes the compiled pattern splits exactly like the hand-rolled splitter of the
/// same regex (both treat an invalid byte as U+E000).
#[test]
fn compiled_and_hand_rolled_agree_on_random_bytes() {
    for p in COMPILABLE {
        let compiled = Harness::compiled(p);
        let hand = Harness::new(p);
        let mut rng = Rng::new(0xC0_AB00 + p as u64);
        for _ in 0..5_000 {
            let text = random_bytes(&mut rng, 40);
            let want = hand.ours(&text);
            compiled.check_ends(&text, &want).unwrap();
        }
    }
}

/// What a DFA cannot run is refused, with the reason named.
#[test]
fn unsupported_patterns_are_refused_with_the_reason() {
    let cl100k = picobpe_model::PatternKind::Cl100k.reference_regex();
    let err = match compile_pattern(cl100k) {
        Ok(_) => panic!("cl100k_base compiled"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("possessive"), "{err}");
    for (re, says) in [
        (r"\s+(?=\S)", "look-arounds"),
        (r"(?<=a)b", "look-arounds"),
        (r"a+(?!b)", "negative look-ahead"),
        (r"^\w+", "anchors"),
        (r"\bfoo", "anchors"),
        (r"a|\s*", "empty string"),
        (r"(?i)a|b", "inline flags"),
        (r"(a", "unclosed"),
    ] {
        let err = match compile_pattern(re) {
            Ok(_) => panic!("{re} compiled"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(says), "{re}: {err}");
    }
}

/// A `Split` pattern that is none of the hand-rolled ones (the third `Split` of DeepSeek V3's
/// `tokenizer.json`, as `tokenizers` reads it), split with the text between matches kept
/// (`Isolated`): against `fancy-regex` on every committed fixture and random strings.
#[test]
fn deepseek_style_split_matches_fancy_regex() {
    let re = r"[!-/:-@\[-`{-~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    let words: &'static [u32] = Box::leak(compile_pattern(re).unwrap().into_boxed_slice());
    let compiled = CompiledPattern::new(words).unwrap();
    let reference = fancy_regex::Regex::new(re).unwrap();
    let isolated = |s: &str| -> Vec<usize> {
        let mut ends = Vec::new();
        let mut pos = 0;
        for m in reference.find_iter(s) {
            let m = m.unwrap();
            if m.start() > pos {
                ends.push(m.start());
            }
            ends.push(m.end());
            pos = m.end();
        }
        if pos < s.len() {
            ends.push(s.len());
        }
        ends
    };
    let ours = |t: &[u8]| -> Vec<usize> {
        let mut ends = Vec::new();
        let mut pos = 0;
        while pos < t.len() {
            match compiled.next_piece(t, pos, true) {
                Step::Piece { end } => {
                    assert!(end > pos);
                    ends.push(end);
                    pos = end;
                }
                Step::NeedMore => panic!("NeedMore with is_final"),
                Step::Skip { .. } => unreachable!("an Isolated pattern drops nothing"),
            }
        }
        ends
    };
    let mut rng = Rng::new(0xDEE9);
    let texts = fixtures()
        .into_iter()
        .map(|(_, t)| t)
        .chain((0..10_000).map(|_| random_string(&mut rng, 30)));
    for s in texts {
        let want = isolated(&s);
        let got = ours(s.as_bytes());
        assert!(want == got, "{}", describe(s.as_bytes(), &want, &got));
    }
}

/// Damaged words are refused; a truncated copy never walks out of range.
#[test]
fn damaged_compiled_patterns_are_refused() {
    let words = compile_pattern(picobpe_model::PatternKind::Gpt2.reference_regex()).unwrap();
    assert!(CompiledPattern::new(&words).is_ok());
    for cut in [0, 3, 4, words.len() / 2, words.len() - 1] {
        assert!(CompiledPattern::new(&words[..cut]).is_err(), "cut at {cut}");
    }
    // Counts that would overflow an index on a 32-bit target.
    let mut huge = words.clone();
    huge[3] = u32::MAX;
    assert!(CompiledPattern::new(&huge).is_err());
    let mut rng = Rng::new(0xDA3A);
    let mut refused = 0;
    for _ in 0..2_000 {
        let mut bad = words.clone();
        let i = rng.below(bad.len());
        bad[i] ^= 1 << rng.below(32);
        match CompiledPattern::new(&bad) {
            Err(_) => refused += 1,
            // A flip that keeps the tables well formed gives some other split, never a panic
            // or an out-of-range piece.
            Ok(c) => {
                let text = random_bytes(&mut rng, 20);
                let mut pos = 0;
                while pos < text.len() {
                    match c.next_piece(&text, pos, true) {
                        // A flipped rule byte may read as `Removed`.
                        Step::Piece { end } | Step::Skip { end } => {
                            assert!(pos < end && end <= text.len());
                            pos = end;
                        }
                        Step::NeedMore => panic!("NeedMore with is_final"),
                    }
                }
                assert!(matches!(
                    c.match_at(&text, 0, true),
                    MatchAt::Match { .. } | MatchAt::NoMatch
                ));
            }
        }
    }
    assert!(refused > 0);
}
