//! `cargo xtask bench` (or `cargo run --release -p picobpe-bench`): encode throughput of
//! picobpe next to tiktoken-rs, single thread, same input, same run.
//!
//! For every corpus: both encoders run on the same text (special tokens allowed), their ids are
//! compared (a mismatch aborts: a fast wrong answer is not a result), then each is timed
//! `RUNS` times and the median MB/s printed. The corpora are read from `../shared/data/corpus`
//! when present (30 MB English, the multilingual and code files); otherwise the bench says so
//! and uses the committed test fixtures.

use std::path::{Path, PathBuf};
use std::time::Instant;

use picobpe::{Specials, Tokenizer};

const RUNS: usize = 3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let shared = root.join("../shared/data");
    let rank_file = first_existing(&[
        root.join("tests/fixtures/models/gpt2.tiktoken"),
        shared.join("tiktoken/gpt2.tiktoken"),
    ])
    .expect("gpt2.tiktoken not found in tests/fixtures/models or ../shared/data/tiktoken");
    let rank_bytes = std::fs::read(&rank_file).expect("read rank file");

    let corpora = corpora(&root, &shared, &args);
    let model = picobpe_model::import::tiktoken(
        &rank_bytes,
        picobpe_model::PatternKind::Gpt2,
        &[("<|endoftext|>".to_string(), 50256)],
    )
    .expect("import gpt2");
    let tables = picobpe_model::TableData::new(&model, picobpe_model::PieceTable::Full)
        .expect("tables")
        .to_tables();
    let ours = Tokenizer::new(tables);
    let peer = tiktoken_gpt2(&rank_bytes);

    println!("gpt2, single thread, median of {RUNS} runs, MB/s (1 MB = 10^6 bytes)");
    println!(
        "{:<28} {:>10} {:>10} {:>12} {:>8}",
        "corpus", "bytes", "picobpe", "tiktoken-rs", "ratio"
    );
    let mut out = Vec::new();
    for (name, text) in &corpora {
        out.resize(text.len() * 2 + 16, 0u32);
        let n = ours
            .encode(text.as_bytes(), &mut out, Specials::All)
            .expect("picobpe encode");
        let peer_ids = peer.encode_with_special_tokens(text);
        if out[..n] != peer_ids[..] {
            let i = out[..n]
                .iter()
                .zip(&peer_ids)
                .position(|(a, b)| a != b)
                .unwrap_or(n.min(peer_ids.len()));
            panic!("{name}: ids differ from tiktoken-rs at index {i} (picobpe {n} ids, tiktoken-rs {})", peer_ids.len());
        }
        let ours_mbs = median_mbs(text.len(), || {
            std::hint::black_box(
                ours.encode(text.as_bytes(), &mut out, Specials::All)
                    .unwrap(),
            );
        });
        let peer_mbs = median_mbs(text.len(), || {
            std::hint::black_box(peer.encode_with_special_tokens(text));
        });
        println!(
            "{:<28} {:>10} {:>10.1} {:>12.1} {:>7.2}x",
            name,
            text.len(),
            ours_mbs,
            peer_mbs,
            ours_mbs / peer_mbs
        );
    }
}

/// Median throughput of `f` over `RUNS` runs, in MB/s.
fn median_mbs(bytes: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            bytes as f64 / t.elapsed().as_secs_f64() / 1e6
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[RUNS / 2]
}

fn first_existing(paths: &[PathBuf]) -> Option<PathBuf> {
    paths.iter().find(|p| p.exists()).cloned()
}

/// (name, text) for every corpus to measure. Arguments, if any, are file paths to use instead.
fn corpora(root: &Path, shared: &Path, args: &[String]) -> Vec<(String, String)> {
    let read =
        |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    if !args.is_empty() {
        return args
            .iter()
            .map(|a| (a.clone(), read(Path::new(a))))
            .collect();
    }
    let corpus = shared.join("corpus");
    if corpus.exists() {
        let mut v = vec![(
            "english.txt (30 MB)".to_string(),
            read(&corpus.join("english.txt")),
        )];
        let mut multi: Vec<PathBuf> = std::fs::read_dir(corpus.join("multi"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        multi.sort();
        let mut all = String::new();
        for p in &multi {
            let t = read(p);
            all.push_str(&t);
            v.push((
                format!("multi/{}", p.file_name().unwrap().to_string_lossy()),
                t,
            ));
        }
        v.push(("multi/* concatenated".to_string(), all));
        v
    } else {
        println!("note: ../shared/data/corpus not found; measuring the committed fixtures only");
        let dir = root.join("tests/fixtures");
        let mut v = Vec::new();
        for p in walk(&dir) {
            if p.extension().is_some_and(|e| e == "txt") {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    v.push((p.strip_prefix(&dir).unwrap_or(&p).display().to_string(), t));
                }
            }
        }
        v
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// tiktoken-rs's CoreBPE for gpt2 from the local rank file, with tiktoken's r50k pattern.
fn tiktoken_gpt2(rank_file: &[u8]) -> tiktoken_rs::CoreBPE {
    use base64::Engine;
    let mut encoder: rustc_hash::FxHashMap<Vec<u8>, u32> = Default::default();
    for line in rank_file.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut it = line.split(|&b| b == b' ');
        let (Some(tok), Some(rank)) = (it.next(), it.next()) else {
            continue;
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(tok)
            .expect("base64");
        let rank: u32 = std::str::from_utf8(rank)
            .unwrap()
            .trim()
            .parse()
            .expect("rank");
        encoder.insert(bytes, rank);
    }
    let mut specials: rustc_hash::FxHashMap<String, u32> = Default::default();
    specials.insert("<|endoftext|>".to_string(), 50256);
    const R50K_PAT: &str =
        r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
    tiktoken_rs::CoreBPE::new(encoder, specials, R50K_PAT).expect("tiktoken-rs CoreBPE")
}
