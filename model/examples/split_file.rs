//! Split a file into pieces with the core's full pre-tokenizer repeatedly and print the best
//! throughput and the piece count: a harness for profiling the splitter alone
//! (`valgrind --tool=callgrind --toggle-collect='*split_all*'`), apart from the encoder's fast
//! paths and cache.
//!
//! `cargo run --release -p picobpe-model --example split_file -- gpt2|cl100k|o200k FILE [RUNS]`

use std::time::Instant;

use picobpe::pretok::{self, Pattern};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [pattern, file, rest @ ..] = args.as_slice() else {
        eprintln!("usage: split_file gpt2|cl100k|o200k FILE [RUNS]");
        std::process::exit(2);
    };
    let pattern = match pattern.as_str() {
        "gpt2" => Pattern::Gpt2,
        "cl100k" => Pattern::Cl100k,
        "o200k" => Pattern::O200k,
        other => panic!("unknown pattern {other}"),
    };
    let runs: usize = rest.first().map_or(5, |r| r.parse().expect("RUNS"));
    let text = std::fs::read(file).expect("file");
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..runs {
        let t = Instant::now();
        n = split_all(pattern, &text);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{n} pieces, best of {runs}: {:.1} MB/s",
        text.len() as f64 / best / 1e6
    );
}

/// The number of pieces in `text` (kept out of line, so a profiler can select it by name).
#[inline(never)]
fn split_all(pattern: Pattern, text: &[u8]) -> usize {
    std::hint::black_box(pretok::pieces(pattern, std::hint::black_box(text)).count())
}
