//! The trainer (`host-trainer`'s `train` module, compiled in) on small arbitrary corpora against a
//! slow reference trainer written from the CS336 description.
//!
//! Input: `[pattern][merges][chunk size][threads/specials][split][corpus...]`. The corpus is cut
//! into one or two input files at `split`; up to two special tokens come from a fixed list that
//! includes one special that is a prefix of another and specials made of ordinary text.
//!
//! The reference: split each file on the specials (leftmost, longest first), pre-tokenize with
//! `fancy-regex` and tiktoken's pattern, then repeatedly recount every adjacent pair of every
//! word and merge the most frequent, ties to the greatest `(left bytes, right bytes)`.
//!
//! Checks: the trainer's merges equal the reference's, merge for merge; invalid UTF-8 is
//! reported for the first bad file at the offset `str::from_utf8` finds; a corpus without
//! ordinary text is `EmptyCorpus`; `DuplicateToken` only when the reference's merge at that
//! index really produces an existing token. Tiny chunk sizes stress the trainer's safe splits.
#![no_main]

#[allow(dead_code, clippy::all)]
#[path = "../../host-trainer/src/train/mod.rs"]
mod train;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use fancy_regex::Regex;
use libfuzzer_sys::fuzz_target;
use picobpe_fuzz::{escape, Params};
use picobpe_model::Model;
use picobpe_tests::reference::split_specials;
use picobpe_tests::vectors::Encoding;
use train::{ModelType, PatternArg, TrainArgs};

const SPECIALS: [&str; 5] = [
    "<|endoftext|>",
    "<|endoftext|><|endoftext|>",
    "ab",
    "\n\n",
    " the",
];

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let which = p.below(3);
    let n_merges = p.below(48);
    let chunk = p.byte();
    let opts = p.byte();
    let split = p.byte();
    let corpus = p.rest();
    let (pattern, encoding) = [
        (PatternArg::Gpt2, Encoding::Gpt2),
        (PatternArg::Cl100k, Encoding::Cl100kBase),
        (PatternArg::O200k, Encoding::O200kBase),
    ][which];
    let threads = 1 + usize::from(opts & 1);
    let mut specials: Vec<&str> = Vec::new();
    for k in [(opts >> 1) & 7, (opts >> 4) & 7] {
        if let Some(s) = SPECIALS.get(usize::from(k)) {
            if !specials.contains(s) {
                specials.push(s);
            }
        }
    }
    let chunk_size = if chunk == 0 {
        1 << 20
    } else {
        usize::from(chunk)
    };
    let cut = corpus.len() * usize::from(split) / 256;
    let files: Vec<&[u8]> = if split & 1 == 0 {
        vec![corpus]
    } else {
        vec![&corpus[..cut], &corpus[cut..]]
    };

    let dir = work_dir();
    let mut inputs = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let path = dir.join(format!("input-{i}.txt"));
        std::fs::write(&path, f).expect("write corpus");
        inputs.push(path);
    }
    let out = dir.join("out");
    let args = TrainArgs {
        model_type: ModelType::BytelevelBpe,
        wordpiece: Default::default(),
        sentencepiece: Default::default(),
        inputs: inputs.clone(),
        counts: Vec::new(),
        vocab_size: (256 + specials.len() + n_merges) as u64,
        special_tokens: specials.iter().map(|s| s.to_string()).collect(),
        out: out.clone(),
        threads: Some(threads),
        pattern: Some(pattern),
        quiet: true,
        chunk_size,
    };
    let result = train::train(args).map_err(|e| e.to_string());
    let show = || {
        format!(
            "{} specials {specials:?}, {n_merges} merges, chunk {chunk_size}, {threads} threads, files {:?}",
            encoding.name(),
            files.iter().map(|f| escape(f)).collect::<Vec<_>>()
        )
    };

    // Invalid UTF-8: the first bad file, at the first bad offset.
    let mut texts = Vec::new();
    for (f, path) in files.iter().zip(&inputs) {
        match std::str::from_utf8(f) {
            Ok(t) => texts.push(t),
            Err(e) => {
                let want = format!(
                    "input {} is not valid UTF-8: invalid byte sequence at byte offset {}",
                    path.display(),
                    e.valid_up_to()
                );
                assert_eq!(result.as_ref().err(), Some(&want), "{}", show());
                return;
            }
        }
    }

    let mut counts = HashMap::new();
    for t in &texts {
        reference_counts(encoding, t, &specials, &mut counts);
    }
    if counts.is_empty() {
        let err = result.expect_err("empty corpus accepted");
        assert!(err.contains("the corpus is empty"), "{err}: {}", show());
        return;
    }
    let reference = reference_merges(&counts, n_merges);
    match result {
        Ok(()) => {
            let model = Model::read(out.join("tokenizer.model")).expect("trained model loads");
            let ours: Vec<(Vec<u8>, Vec<u8>)> = model
                .merges
                .iter()
                .map(|&(l, r)| {
                    (
                        model.tokens[l as usize].clone(),
                        model.tokens[r as usize].clone(),
                    )
                })
                .collect();
            let want: Vec<_> = reference
                .iter()
                .map(|m| (m.0.clone(), m.1.clone()))
                .collect();
            if let Some(i) = reference.iter().position(|m| m.2) {
                panic!(
                    "trainer accepted merge {i}, which duplicates a token: {}",
                    show()
                );
            }
            assert!(
                ours == want,
                "merges differ:\n  ours {ours:?}\n  want {want:?}\n  {}",
                show()
            );
        }
        Err(e) if e.contains("which an earlier merge already produced") => {
            let index: usize = e
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unparsable error {e}"));
            assert!(
                reference.get(index).is_some_and(|m| m.2)
                    && reference[..index].iter().all(|m| !m.2),
                "DuplicateToken at merge {index} but the reference disagrees: {}",
                show()
            );
        }
        Err(e) => panic!("train failed: {e}: {}", show()),
    }
});

/// A per-process scratch directory.
fn work_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("picobpe-fuzz-train-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("create work dir");
        d
    })
    .clone()
}

fn regex(encoding: Encoding) -> &'static Regex {
    static CACHE: [OnceLock<Regex>; 5] = [const { OnceLock::new() }; 5];
    let i = match encoding {
        Encoding::Gpt2 => 0,
        Encoding::Cl100kBase => 1,
        Encoding::O200kBase => 2,
        Encoding::HfLlama3 => 3,
        Encoding::HfQwen2 => 4,
    };
    CACHE[i].get_or_init(|| {
        Regex::new(&picobpe_tests::reference::pattern(encoding)).expect("pattern compiles")
    })
}

/// Pre-token counts (reference pre-tokenizer).
fn reference_counts(
    encoding: Encoding,
    text: &str,
    specials: &[&str],
    counts: &mut HashMap<Vec<u8>, u64>,
) {
    for chunk in split_specials(text, specials) {
        for m in regex(encoding).find_iter(chunk) {
            let m = m.expect("fancy-regex backtrack limit on a small corpus");
            *counts.entry(m.as_str().as_bytes().to_vec()).or_default() += 1;
        }
    }
}

/// The reference merges `(left, right, duplicates an existing token)`: recount every pair of
/// every word before each merge; take the max by (count, left bytes, right bytes).
fn reference_merges(
    counts: &HashMap<Vec<u8>, u64>,
    n_merges: usize,
) -> Vec<(Vec<u8>, Vec<u8>, bool)> {
    let mut words: Vec<(Vec<Vec<u8>>, u64)> = counts
        .iter()
        .map(|(w, &c)| (w.iter().map(|&b| vec![b]).collect(), c))
        .collect();
    let mut vocab: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut merges = Vec::new();
    while merges.len() < n_merges {
        let mut pairs: HashMap<(&[u8], &[u8]), u64> = HashMap::new();
        for (w, c) in &words {
            for p in w.windows(2) {
                *pairs.entry((&p[0], &p[1])).or_default() += c;
            }
        }
        let Some(((l, r), _)) = pairs
            .into_iter()
            .max_by(|(a, ca), (b, cb)| ca.cmp(cb).then_with(|| a.cmp(b)))
        else {
            break;
        };
        let (l, r) = (l.to_vec(), r.to_vec());
        let merged = [l.as_slice(), &r].concat();
        let duplicate = vocab.contains(&merged);
        vocab.push(merged.clone());
        for (w, _) in &mut words {
            let mut out = Vec::with_capacity(w.len());
            let mut i = 0;
            while i < w.len() {
                if i + 1 < w.len() && w[i] == l && w[i + 1] == r {
                    out.push(merged.clone());
                    i += 2;
                } else {
                    out.push(std::mem::take(&mut w[i]));
                    i += 1;
                }
            }
            *w = out;
        }
        merges.push((l, r, duplicate));
    }
    merges
}
