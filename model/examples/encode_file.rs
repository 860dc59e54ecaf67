//! Encode a file repeatedly with a tiktoken rank file and print the best and the median throughput: a small
//! harness for profiling the encoder (`perf record`, `valgrind --tool=callgrind`).
//!
//! `cargo run --release -p picobpe-model --example encode_file -- RANKS PATTERN FILE [RUNS]`
//! where RANKS is a plain (not gzipped) tiktoken rank file and PATTERN is gpt2|cl100k|o200k.
//! `PICOBPE_CACHE=N` encodes with an N-slot piece cache (kept across runs);
//! `PICOBPE_NO_PIECE_KEYS=1` drops the whole-piece keys; `PICOBPE_CHECK=1` then encodes once
//! more without the cache and reports the first id where the two differ; `PICOBPE_EVICT=1`
//! reads 64 MiB of other memory before every run, as the benchmark's other tokenizers do
//! between picobpe's runs, so the cache's lines start out of the CPU's caches;
//! `PICOBPE_COLD=1` empties the cache (untimed) before every run, as `cargo xtask bench --cold`
//! does: the cost of text not seen before.

use std::time::Instant;

use picobpe::{Specials, Tokenizer};
use picobpe_model::{import, PatternKind, PieceTable, TableData};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [ranks, pattern, file, rest @ ..] = args.as_slice() else {
        eprintln!("usage: encode_file RANKS gpt2|cl100k|o200k FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = rest.first().map_or(5, |r| r.parse().expect("RUNS"));
    let pattern: PatternKind = pattern.parse().expect("pattern");
    let model =
        import::tiktoken(&std::fs::read(ranks).expect("ranks"), pattern, &[]).expect("import");
    let mut data = TableData::new(&model, PieceTable::Full).expect("tables");
    if std::env::var_os("PICOBPE_NO_PIECE_KEYS").is_some() {
        data = data.without_piece_keys();
    }
    let tables = data.to_tables();
    let tok = Tokenizer::new(tables);
    let text = std::fs::read(file).expect("file");
    let mut out = vec![0u32; picobpe::bytelevel::scratch_needed(text.len()) + 16];
    let slots: usize =
        std::env::var("PICOBPE_CACHE").map_or(0, |v| v.parse().expect("PICOBPE_CACHE"));
    // On huge pages, as the benchmark's caches are.
    let mut cache = picobpe_model::CacheMemory::new(slots);
    let cold = std::env::var_os("PICOBPE_COLD").is_some();
    let mut times = Vec::with_capacity(runs);
    let mut n = 0;
    let mut other = if std::env::var_os("PICOBPE_EVICT").is_some() {
        vec![1u64; 8 << 20]
    } else {
        Vec::new()
    };
    for _ in 0..runs {
        for (i, x) in other.iter_mut().enumerate() {
            *x = x.wrapping_add(i as u64);
        }
        std::hint::black_box(&other);
        if cold {
            cache.fill(picobpe::CacheEntry::EMPTY);
        }
        let t = Instant::now();
        n = tok
            .encode_cached(&text, &mut out, Specials::None, &mut cache)
            .expect("encode");
        times.push(t.elapsed().as_secs_f64());
    }
    if std::env::var_os("PICOBPE_CHECK").is_some() {
        let mut plain = vec![0u32; out.len()];
        let m = tok
            .encode(&text, &mut plain, Specials::None)
            .expect("plain");
        let i = (0..n.min(m)).find(|&i| plain[i] != out[i]);
        eprintln!("cached {n} plain {m} first diff {i:?}");
        if let Some(i) = i {
            let dec = |ids: &[u32]| {
                let piece = |&id: &u32| tables.token_bytes(id).unwrap_or(&[]);
                let pieces = ids
                    .iter()
                    .map(|id| format!("{:?}", String::from_utf8_lossy(piece(id))));
                pieces.collect::<Vec<_>>().join(" ")
            };
            eprintln!(
                "plain : {}",
                dec(&plain[i.saturating_sub(3)..(i + 4).min(m)])
            );
            eprintln!("cached: {}", dec(&out[i.saturating_sub(3)..(i + 4).min(n)]));
        }
    }
    // Warm runs only (the first fills the cache) for the median, when there are several.
    let warm = if times.len() > 2 {
        &mut times[1..]
    } else {
        &mut times[..]
    };
    warm.sort_by(f64::total_cmp);
    let (best, median) = (warm[0], warm[warm.len() / 2]);
    println!(
        "{n} ids, best of {runs}: {:.1} MB/s, median {:.1} MB/s",
        text.len() as f64 / best / 1e6,
        text.len() as f64 / median / 1e6
    );
}
