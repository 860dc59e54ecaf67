//! Merge-for-merge agreement with a slow, obviously-correct reference trainer.
//!
//! The reference is written straight from the CS336 `train_bpe` description, sharing no code
//! with `host-trainer`: special tokens are split off by trying every special (longest first) at
//! every position, pieces come from `fancy-regex` with the GPT-2 pattern, and every merge
//! recounts all pairs of all words from scratch, then takes the max by (count, left bytes,
//! right bytes). Words are sequences of interned byte strings, so two tokens are the same
//! symbol exactly when their bytes are equal, as with the reference's tuples of `bytes`.
//!
//! Committed fixtures (fresh clone): 1 MB of English (`<|endoftext|>`-separated) and 100 KB
//! slices of French, Russian, Chinese, Japanese, German, Greek and Rust source, N = 2000; and
//! `--pattern cl100k` / `o200k` against tiktoken's patterns on part of the same text. Debug
//! builds use the first 128 KB and N = 800 to stay quick. With `../shared/data` present and a
//! release build, the full multilingual files (including Arabic, read in place, never committed)
//! and a 2 MB English prefix are checked as well.

mod train_common;

use std::collections::HashMap;
use std::path::Path;

use fancy_regex::Regex;
use picobpe_model::PatternKind;
use picobpe_tests::reference::split_specials;
use train_common::*;

const EOT: &str = "<|endoftext|>";

/// Pre-token counts of `text` (reference pre-tokenizer: fancy-regex with `pattern`).
fn reference_counts(
    text: &str,
    specials: &[&str],
    pattern: &str,
    counts: &mut HashMap<Vec<u8>, u64>,
) {
    let re = Regex::new(pattern).unwrap();
    for chunk in split_specials(text, specials) {
        for m in re.find_iter(chunk) {
            *counts
                .entry(m.unwrap().as_str().as_bytes().to_vec())
                .or_default() += 1;
        }
    }
}

/// All adjacent pairs of all words, weighted by word frequency (zero counts removed).
fn count_pairs(words: &[(Vec<u32>, u64)]) -> HashMap<(u32, u32), u64> {
    let mut pairs = HashMap::new();
    for (w, c) in words {
        for p in w.windows(2) {
            *pairs.entry((p[0], p[1])).or_default() += c;
        }
    }
    pairs
}

/// Add (`add`) or remove the pairs of one word.
fn update_pairs(pairs: &mut HashMap<(u32, u32), u64>, word: &[u32], count: u64, add: bool) {
    for p in word.windows(2) {
        let slot = pairs.entry((p[0], p[1])).or_default();
        if add {
            *slot += count;
        } else {
            *slot -= count;
            if *slot == 0 {
                pairs.remove(&(p[0], p[1]));
            }
        }
    }
}

/// The reference merge loop (see the module docs). `pairs` always equals
/// `count_pairs(&words)`: a word that changes has all its old pairs removed and all its new
/// pairs added, and the equality is re-checked against a full recount every 100 merges.
fn reference_merges(counts: &HashMap<Vec<u8>, u64>, n_merges: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut symbols: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut ids: HashMap<Vec<u8>, u32> = symbols.iter().cloned().zip(0..).collect();
    let mut words: Vec<(Vec<u32>, u64)> = counts
        .iter()
        .map(|(w, &c)| (w.iter().map(|&b| u32::from(b)).collect(), c))
        .collect();
    let mut pairs = count_pairs(&words);
    let mut merges = Vec::new();
    while merges.len() < n_merges {
        if merges.len() % 100 == 0 {
            assert_eq!(pairs, count_pairs(&words), "reference pair counts drifted");
        }
        let Some(best) = pairs
            .iter()
            .max_by(|(a, ca), (b, cb)| {
                ca.cmp(cb)
                    .then_with(|| symbols[a.0 as usize].cmp(&symbols[b.0 as usize]))
                    .then_with(|| symbols[a.1 as usize].cmp(&symbols[b.1 as usize]))
            })
            .map(|(p, _)| *p)
        else {
            break;
        };
        let merged_bytes = [
            symbols[best.0 as usize].as_slice(),
            &symbols[best.1 as usize],
        ]
        .concat();
        let merged = *ids.entry(merged_bytes.clone()).or_insert_with(|| {
            symbols.push(merged_bytes);
            symbols.len() as u32 - 1
        });
        for (w, c) in &mut words {
            if !w.windows(2).any(|p| (p[0], p[1]) == best) {
                continue;
            }
            update_pairs(&mut pairs, w, *c, false);
            let mut out = Vec::with_capacity(w.len());
            let mut i = 0;
            while i < w.len() {
                if i + 1 < w.len() && (w[i], w[i + 1]) == best {
                    out.push(merged);
                    i += 2;
                } else {
                    out.push(w[i]);
                    i += 1;
                }
            }
            *w = out;
            update_pairs(&mut pairs, w, *c, true);
        }
        merges.push((
            symbols[best.0 as usize].clone(),
            symbols[best.1 as usize].clone(),
        ));
    }
    merges
}

/// Train `inputs` with the binary and with the reference; compare merge by merge.
fn check(name: &str, inputs: &[(&Path, Option<usize>)], specials: &[&str], vocab_size: usize) {
    check_pattern(name, inputs, specials, vocab_size, "gpt2");
}

/// [`check`] with `--pattern` (`gpt2`, `cl100k` or `o200k`).
fn check_pattern(
    name: &str,
    inputs: &[(&Path, Option<usize>)],
    specials: &[&str],
    vocab_size: usize,
    pattern: &str,
) {
    let regex = match pattern {
        "gpt2" => PatternKind::Gpt2.reference_regex(),
        "cl100k" => PatternKind::Cl100k.reference_regex(),
        "o200k" => PatternKind::O200k.reference_regex(),
        other => panic!("unknown pattern {other}"),
    };
    let tmp = TempDir::new("reference");
    let mut counts = HashMap::new();
    let mut paths = Vec::new();
    for (i, (path, limit)) in inputs.iter().enumerate() {
        let mut text = std::fs::read_to_string(path).unwrap();
        if let Some(limit) = limit {
            // Cut after a newline so the text stays valid UTF-8 and ends a line.
            if let Some(cut) = text.get(..*limit).and_then(|t| t.rfind('\n')) {
                text.truncate(cut + 1);
            }
        }
        let input = tmp.join(&format!("input-{i}.txt"));
        std::fs::write(&input, &text).unwrap();
        reference_counts(&text, specials, regex, &mut counts);
        paths.push(input);
    }
    let out = tmp.join("out");
    let path_refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    train_ok(
        &path_refs,
        vocab_size,
        specials,
        &out,
        &["--pattern", pattern],
    );
    let ours = parse_merges(&std::fs::read_to_string(out.join("merges.txt")).unwrap());
    let n_merges = vocab_size - 256 - specials.len();
    let started = std::time::Instant::now();
    let reference = reference_merges(&counts, n_merges);
    let reference_secs = started.elapsed().as_secs_f64();
    for (i, (a, b)) in ours.iter().zip(&reference).enumerate() {
        assert_eq!(
            a,
            b,
            "{name}: merge {i} differs: ours ({:?}, {:?}), reference ({:?}, {:?})",
            String::from_utf8_lossy(&a.0),
            String::from_utf8_lossy(&a.1),
            String::from_utf8_lossy(&b.0),
            String::from_utf8_lossy(&b.1),
        );
    }
    assert_eq!(ours.len(), reference.len(), "{name}: number of merges");
    eprintln!(
        "{name} ({pattern}): {} merges agree (reference trainer {reference_secs:.1} s)",
        ours.len()
    );
}

#[test]
fn reference_trainer_reproduces_the_cs336_reference_merges() {
    // The reference is itself checked against the course's data before it judges anything.
    let text = std::fs::read_to_string(fixture("cs336/corpus.en")).unwrap();
    let mut counts = HashMap::new();
    reference_counts(
        &text,
        &[EOT],
        PatternKind::Gpt2.reference_regex(),
        &mut counts,
    );
    let expected = parse_merges(
        &std::fs::read_to_string(fixture("cs336/train-bpe-reference-merges.txt")).unwrap(),
    );
    assert_eq!(reference_merges(&counts, 500 - 257), expected);
}

/// Full size in release builds; a 128 KB prefix and fewer merges in debug builds.
fn scale() -> (Option<usize>, usize) {
    if cfg!(debug_assertions) {
        (Some(128 << 10), 800)
    } else {
        (None, 2000)
    }
}

#[test]
fn english_1mb_with_endoftext() {
    let (limit, n) = scale();
    let path = fixture("train/english-1mb.txt");
    check("english-1mb", &[(&path, limit)], &[EOT], n);
}

macro_rules! multi_fixture_tests {
    ($($test:ident => $file:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let (limit, n) = scale();
            let path = fixture(concat!("train/multi/", $file));
            check($file, &[(&path, limit)], &[], n);
        }
    )*};
}

multi_fixture_tests! {
    multi_fr => "fr.txt",
    multi_ru => "ru.txt",
    multi_zh => "zh.txt",
    multi_ja => "ja.txt",
    multi_de => "de.txt",
    multi_el => "el.txt",
    multi_code_rust => "code-rust.txt",
}

#[test]
fn cl100k_and_o200k_patterns() {
    let (limit, n) = scale();
    let english = fixture("train/english-1mb.txt");
    let limit = limit.or(Some(400 << 10));
    for pattern in ["cl100k", "o200k"] {
        check_pattern("english", &[(&english, limit)], &[EOT], n, pattern);
        for f in ["zh", "ru", "code-rust"] {
            let path = fixture(&format!("train/multi/{f}.txt"));
            check_pattern(f, &[(&path, limit)], &[], n, pattern);
        }
    }
}

#[test]
fn several_inputs_and_specials() {
    // Two files are two documents; two specials where one contains the other.
    let a = fixture("cs336/tinystories_sample.txt");
    let b = fixture("cs336/german.txt");
    check(
        "tinystories+german",
        &[(&a, None), (&b, None)],
        &[EOT, "<|endoftext|><|endoftext|>"],
        400,
    );
}

/// The shared-data variant: `None` (with a note) unless `../shared/data` exists and this is a
/// release build.
fn shared() -> Option<std::path::PathBuf> {
    let Some(shared) = shared_data() else {
        eprintln!("SKIPPED: ../shared/data not present");
        return None;
    };
    if cfg!(debug_assertions) {
        eprintln!("SKIPPED: the shared-data variant runs in release builds only");
        return None;
    }
    Some(shared)
}

#[test]
fn shared_english_prefix() {
    if let Some(shared) = shared() {
        let path = shared.join("corpus/english.txt");
        check(
            "english.txt (2 MB prefix)",
            &[(&path, Some(2 << 20))],
            &[EOT],
            2000,
        );
    }
}

macro_rules! shared_multi_tests {
    ($($test:ident => $file:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            if let Some(shared) = shared() {
                let path = shared.join(concat!("corpus/multi/", $file));
                check($file, &[(&path, None)], &[], 2000);
            }
        }
    )*};
}

shared_multi_tests! {
    shared_ar => "ar.txt",
    shared_code_python => "code-python.txt",
    shared_code_rust => "code-rust.txt",
    shared_de => "de.txt",
    shared_el => "el.txt",
    shared_emoji_mixed => "emoji-mixed.txt",
    shared_fr => "fr.txt",
    shared_indic => "indic.txt",
    shared_ja => "ja.txt",
    shared_ko => "ko.txt",
    shared_ru => "ru.txt",
    shared_whitespace_heavy => "whitespace-heavy.txt",
    shared_zh => "zh.txt",
}
