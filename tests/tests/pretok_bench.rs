//! Throughput of the pre-tokenizers alone, next to fancy-regex with the reference patterns, in
//! the same run (a benchmark, not a test: ignored by default, asserts nothing about time).
//!
//! `cargo test -p picobpe-tests --release --test pretok_bench -- --ignored --nocapture`
//!
//! Reads `../shared/data/corpus` (English, the multilingual files) when present, else the
//! committed fixtures. MB/s = input bytes / best of 5 wall-clock runs; both sides count pieces
//! and the counts must agree.

mod pretok_common;

use picobpe::pretok::{pieces, Pattern};
use pretok_common::*;
use std::time::Instant;

fn best_of<F: FnMut() -> usize>(reps: usize, mut f: F) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..reps {
        let t = Instant::now();
        n = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, n)
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn splitter_throughput_vs_fancy_regex() {
    let texts: Vec<(String, String)> = match shared_data() {
        Some(dir) => {
            let mut v = vec![(
                "english.txt".to_string(),
                std::fs::read_to_string(dir.join("corpus/english.txt")).unwrap(),
            )];
            for f in [
                "zh",
                "ru",
                "ar",
                "code-rust",
                "whitespace-heavy",
                "emoji-mixed",
            ] {
                let p = dir.join(format!("corpus/multi/{f}.txt"));
                v.push((format!("{f}.txt"), std::fs::read_to_string(p).unwrap()));
            }
            v
        }
        None => {
            eprintln!("NOTE: ../shared/data absent: benchmarking the committed fixtures");
            fixtures()
        }
    };
    println!(
        "{:<22} {:<7} {:>14} {:>18} {:>7}",
        "file", "pattern", "picobpe MB/s", "fancy-regex MB/s", "ratio"
    );
    for (name, text) in &texts {
        let mb = text.len() as f64 / 1e6;
        for pattern in [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k] {
            let h = Harness::new(pattern);
            let (ours, n_ours) = best_of(5, || pieces(pattern, text.as_bytes()).count());
            let (theirs, n_theirs) = best_of(if text.len() > 4 << 20 { 1 } else { 3 }, || {
                h.re.find_iter(text).count()
            });
            assert_eq!(n_ours, n_theirs, "{name} {pattern:?}: piece counts differ");
            println!(
                "{:<22} {:<7} {:>14.1} {:>18.1} {:>6.1}x",
                name,
                format!("{pattern:?}"),
                mb / ours,
                mb / theirs,
                theirs / ours
            );
        }
    }
}
