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
//! slices of French, Russian, Chinese, Japanese, German, Greek and Rust source, N = 2000. Debug
//! builds use the first 256 KB and N = 1000 to stay quick. With `../shared/data` present and a
//! release build, the full multilingual files (including Arabic, read in place, never committed)
//! and a 3 MB English prefix are checked as well.

mod train_common;

use std::collections::HashMap;
use std::path::Path;

use fancy_regex::Regex;
use train_common::*;

const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
const EOT: &str = "<|endoftext|>";

/// Split `text` on the special tokens: at each position the longest special that matches.
fn split_specials<'t>(text: &'t str, specials: &[&str]) -> Vec<&'t str> {
    let mut sorted: Vec<&str> = specials.to_vec();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    let bytes = text.as_bytes();
    'scan: while i < bytes.len() {
        for s in &sorted {
            if bytes[i..].starts_with(s.as_bytes()) {
                out.push(&text[start..i]);
                i += s.len();
                start = i;
                continue 'scan;
            }
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

/// Pre-token counts of `text` (reference pre-tokenizer: fancy-regex).
fn reference_counts(text: &str, specials: &[&str], counts: &mut HashMap<Vec<u8>, u64>) {
    let re = Regex::new(GPT2_PATTERN).unwrap();
    for chunk in split_specials(text, specials) {
        for m in re.find_iter(chunk) {
            *counts
                .entry(m.unwrap().as_str().as_bytes().to_vec())
                .or_default() += 1;
        }
    }
}

/// The reference merge loop (see the module docs).
fn reference_merges(counts: &HashMap<Vec<u8>, u64>, n_merges: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut symbols: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut ids: HashMap<Vec<u8>, u32> = symbols.iter().cloned().zip(0..).collect();
    let mut words: Vec<(Vec<u32>, u64)> = counts
        .iter()
        .map(|(w, &c)| (w.iter().map(|&b| u32::from(b)).collect(), c))
        .collect();
    let mut merges = Vec::new();
    while merges.len() < n_merges {
        // Words of one symbol have no pairs; dropping them changes no count.
        words.retain(|(w, _)| w.len() > 1);
        let mut pairs: HashMap<(u32, u32), u64> = HashMap::new();
        for (w, c) in &words {
            for p in w.windows(2) {
                *pairs.entry((p[0], p[1])).or_default() += c;
            }
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
        for (w, _) in &mut words {
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
        reference_counts(&text, specials, &mut counts);
        paths.push(input);
    }
    let out = tmp.join("out");
    let path_refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    train_ok(&path_refs, vocab_size, specials, &out, &[]);
    let ours = parse_merges(&std::fs::read_to_string(out.join("merges.txt")).unwrap());
    let n_merges = vocab_size - 256 - specials.len();
    let reference = reference_merges(&counts, n_merges);
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
    eprintln!("{name}: {} merges agree", ours.len());
}

/// Full size in release builds; a 256 KB prefix and fewer merges in debug builds.
fn scale() -> (Option<usize>, usize) {
    if cfg!(debug_assertions) {
        (Some(256 << 10), 1000)
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

#[test]
fn shared_data_full_files() {
    let Some(shared) = shared_data() else {
        eprintln!("SKIPPED: ../shared/data not present");
        return;
    };
    if cfg!(debug_assertions) {
        eprintln!("SKIPPED: shared-data variant runs in release builds only");
        return;
    }
    check(
        "english.txt (3 MB prefix)",
        &[(&shared.join("corpus/english.txt"), Some(3 << 20))],
        &[EOT],
        2000,
    );
    let multi = shared.join("corpus/multi");
    let mut files: Vec<_> = std::fs::read_dir(&multi)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 13,
        "expected the 13 multi files in {multi:?}"
    );
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        check(&name, &[(file, None)], &[], 2000);
    }
}
