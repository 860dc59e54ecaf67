//! `cargo xtask bench-sp` (or `cargo run --release -p picobpe-bench --bin picobpe-bench-sp --
//! ARGS`): SentencePiece (BPE or Unigram) encode throughput of picobpe next to its peers,
//! single thread, same texts, same run.
//!
//! ```text
//! picobpe-bench-sp [--model sp32000|mistral-v1|sp4096|ug8000|ug4096-bytes|nfkc-bpe|nfkc-ug|ms-*]
//!                  [--corpus NAME]...
//!                  [--runs N] [FILE...]
//! ```
//!
//! Columns: picobpe (`SpTokenizer` over tables built from the model's `tokenizer.model` in
//! `tests/fixtures/sentencepiece/models`, `tests/fixtures/unigram/models` for the Unigram
//! models `ug*`, or `tests/fixtures/sp_norm/models` for the models with an `nmt_nfkc`-style
//! character map `nfkc-*`; or a `tokenizer.json` of `tests/fixtures/metaspace` for `ms-*`,
//! such as `ms-t5-nfkc` with its `Precompiled` map or `ms-bpe-nfkc` with `NFKC`), Hugging Face
//! `tokenizers` (the Rust crate) loading the same model's `tokenizer.json` (when the fixtures
//! have one), kitoken (Rust) loading the `tokenizer.model` (or the `tokenizer.json` of `ms-*`),
//! and `sentencepiece` (the Python package: `scripts/bench_sp_python.py`
//! runs in a child process and times only its encode calls). Each corpus is cut at line ends
//! into texts of at most 64 KiB (requests of a realistic size; the peers would otherwise hold a
//! 30 MB text as one sequence), and every tokenizer encodes the same texts. Before timing,
//! every peer's ids are compared with picobpe's (the Python column by count and CRC-32); a Rust
//! peer that differs is still timed but marked `≠` with the index of the first difference, and
//! left out of the ratio, which is to the fastest peer giving the same ids (the Python column
//! is `sentencepiece` itself, the reference). A Unigram `tokenizer.json` differs from its
//! `tokenizer.model` by design (`tokenizers` adds scores in `f64` and normalizes whitespace its
//! own way). Each column is timed `--runs` times (the Rust ones
//! interleaved), and the median MB/s (10^6 input bytes per second) is printed, with the ratio
//! of picobpe to the fastest peer that gives the same ids. picobpe is timed twice: without a
//! cache, and with a 1 MiB word cache kept across calls and runs (`encode_cached`, what
//! `host-trainer encode` does). Model load times are printed too.
//!
//! Corpora as in `picobpe-bench`: `../shared/data/corpus` when present, else the committed
//! fixtures (with a note).

#[path = "../corpus.rs"]
mod corpus;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use picobpe::{CacheEntry, Cursor, EncodeError, SpTokenizer, Specials, Tokenize};

/// Lines of picobpe's word cache: 1 MiB, as `host-trainer encode` uses.
const CACHE_LINES: usize = 16_384;

/// Longest text handed to a tokenizer in one call.
const CHUNK: usize = 64 * 1024;

const USAGE: &str =
    "usage: picobpe-bench-sp [--model sp32000|mistral-v1|sp4096|ug8000|nfkc-bpe|ms-t5-nfkc|...] [--corpus NAME]... [--runs N] [FILE...]";

/// A tokenizer under test.
trait Subject {
    /// The ids of all texts, concatenated.
    fn ids(&mut self, texts: &[&str]) -> Vec<u32>;
    /// Encode all texts; returns the number of ids (so the work is not optimised away).
    fn run(&mut self, texts: &[&str]) -> usize;
}

struct Picobpe {
    tok: SpTokenizer<'static>,
    out: Vec<u32>,
    /// Empty, or a word cache kept across calls and runs (as the CLI keeps one per input).
    cache: Vec<CacheEntry>,
}

impl Picobpe {
    /// Encode with the contract every family keeps: resume with the cursor (which carries a
    /// Unigram model's score), at no extra cost.
    fn encode(&mut self, text: &str, mut sink: impl FnMut(&[u32])) {
        let mut cursor = Cursor::START;
        loop {
            match self.tok.encode_at(
                text.as_bytes(),
                &mut cursor,
                &mut self.out,
                Specials::All,
                &mut self.cache,
            ) {
                Ok(n) => return sink(&self.out[..n]),
                Err(EncodeError::OutputFull { written, .. }) => sink(&self.out[..written]),
                Err(EncodeError::PieceTooLong { needed, .. }) => {
                    let len = needed.max(2 * self.out.len());
                    self.out.resize(len, 0);
                }
            }
        }
    }
}

impl Subject for Picobpe {
    fn ids(&mut self, texts: &[&str]) -> Vec<u32> {
        let mut all = Vec::new();
        for t in texts {
            self.encode(t, |ids| all.extend_from_slice(ids));
        }
        all
    }
    fn run(&mut self, texts: &[&str]) -> usize {
        let mut n = 0;
        for t in texts {
            self.encode(t, |ids| n += ids.len());
        }
        n
    }
}

struct HfTokenizers(tokenizers::Tokenizer);

impl Subject for HfTokenizers {
    fn ids(&mut self, texts: &[&str]) -> Vec<u32> {
        let mut all = Vec::new();
        for t in texts {
            all.extend_from_slice(self.0.encode_fast(*t, false).expect("encode").get_ids());
        }
        all
    }
    fn run(&mut self, texts: &[&str]) -> usize {
        texts
            .iter()
            .map(|t| self.0.encode_fast(*t, false).map_or(0, |e| e.len()))
            .sum()
    }
}

struct Kitoken(kitoken::Kitoken);

impl Subject for Kitoken {
    fn ids(&mut self, texts: &[&str]) -> Vec<u32> {
        let mut all = Vec::new();
        for t in texts {
            match self.0.encode(*t, false) {
                Ok(ids) => all.extend(ids),
                // An error is a difference: no ids for this text.
                Err(_) => all.push(u32::MAX),
            }
        }
        all
    }
    fn run(&mut self, texts: &[&str]) -> usize {
        texts
            .iter()
            .map(|t| self.0.encode(*t, false).map_or(0, |ids| ids.len()))
            .sum()
    }
}

/// Cut `text` at line ends into pieces of at most [`CHUNK`] bytes (a longer line is one
/// piece).
fn chunks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = if rest.len() <= CHUNK {
            rest.len()
        } else {
            let window = &rest.as_bytes()[..CHUNK];
            match window.iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => rest.find('\n').map_or(rest.len(), |i| i + 1),
            }
        };
        let (head, tail) = rest.split_at(cut);
        out.push(head);
        rest = tail;
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn first_difference(a: &[u32], b: &[u32]) -> Option<usize> {
    if a == b {
        return None;
    }
    Some(a.iter().zip(b).take_while(|(x, y)| x == y).count())
}

/// What the Python column printed.
struct PythonRun {
    ids: u64,
    crc32: u32,
    seconds: Vec<f64>,
    version: String,
}

/// Run `scripts/bench_sp_python.py` on the texts; `Err` says why the column is absent.
fn python_column(
    root: &Path,
    model: &Path,
    texts: &[&str],
    runs: usize,
) -> Result<PythonRun, String> {
    let file = std::env::temp_dir().join(format!("picobpe-bench-sp-{}.bin", std::process::id()));
    let mut data = Vec::new();
    for t in texts {
        data.extend_from_slice(&(t.len() as u32).to_le_bytes());
        data.extend_from_slice(t.as_bytes());
    }
    std::fs::write(&file, &data).map_err(|e| e.to_string())?;
    let out = Command::new("python3")
        .arg(root.join("scripts/bench_sp_python.py"))
        .arg(model)
        .arg(runs.to_string())
        .arg(&file)
        .output();
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "python3 failed (pip install sentencepiece): {}",
            err.lines().last().unwrap_or("")
        ));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("python output: {e}"))?;
    Ok(PythonRun {
        ids: v["ids"].as_u64().unwrap_or(0),
        crc32: v["crc32"].as_u64().unwrap_or(0) as u32,
        seconds: v["seconds"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default(),
        version: v["version"].as_str().unwrap_or("?").to_owned(),
    })
}

fn crc_of(ids: &[u32]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for id in ids {
        h.update(&id.to_le_bytes());
    }
    h.finalize()
}

struct Options {
    model: String,
    corpora: Vec<String>,
    runs: usize,
    files: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        model: "sp32000".to_owned(),
        corpora: Vec::new(),
        runs: 5,
        files: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--model" | "-m" => o.model = value()?,
            "--corpus" | "-c" => o.corpora.extend(value()?.split(',').map(String::from)),
            "--runs" | "-n" => {
                o.runs = value()?
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or("--runs needs a positive integer")?
            }
            "--help" | "-h" => return Err(String::new()),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            f => o.files.push(f.to_string()),
        }
    }
    Ok(o)
}

/// One printed cell.
enum Cell {
    Speed(f64),
    Differs(String),
    Absent,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    // `ms-*`: a `tokenizer.json` only (`tests/fixtures/metaspace`), which picobpe, tokenizers
    // and kitoken read; sentencepiece reads no such file.
    let json_only = opts.model.starts_with("ms-");
    let family = if opts.model.starts_with("ug") {
        "unigram"
    } else if opts.model.starts_with("nfkc-") {
        "sp_norm"
    } else if json_only {
        "metaspace"
    } else {
        "sentencepiece"
    };
    let models = root.join(format!("tests/fixtures/{family}/models"));
    let model_file = models.join(format!("{}.model", opts.model));
    let json_file: PathBuf = models.join(format!("{}.tokenizer.json", opts.model));
    let source = if json_only { &json_file } else { &model_file };
    if !source.is_file() {
        eprintln!("error: no model {}", source.display());
        return ExitCode::from(2);
    }

    // Load each tokenizer, timing the load.
    let start = Instant::now();
    let bytes = std::fs::read(source).expect("model file");
    let sp_model = if json_only {
        let file = picobpe_model::TokenizerJson::parse(&bytes).expect("a tokenizer.json");
        picobpe_model::sentencepiece::import_tokenizer_json(&file).expect("import")
    } else {
        picobpe_model::sentencepiece::import_model_proto(&bytes).expect("import")
    };
    let tables = picobpe_model::SpTableData::new(&sp_model)
        .expect("valid model")
        .to_tables();
    let load_picobpe = start.elapsed();
    let mut ours = Picobpe {
        tok: SpTokenizer::new(tables),
        out: vec![0; 1 << 16],
        cache: Vec::new(),
    };
    let mut ours_cached = Picobpe {
        tok: SpTokenizer::new(tables),
        out: vec![0; 1 << 16],
        cache: vec![CacheEntry::EMPTY; CACHE_LINES],
    };
    let what = if json_only {
        "picobpe (import tokenizer.json)"
    } else {
        "picobpe (import tokenizer.model)"
    };
    let mut loads = vec![(what, load_picobpe)];
    let mut peers: Vec<Option<Box<dyn Subject>>> = Vec::new();
    let start = Instant::now();
    match tokenizers::Tokenizer::from_file(&json_file) {
        Ok(t) if json_file.is_file() => {
            loads.push(("tokenizers (tokenizer.json)", start.elapsed()));
            peers.push(Some(Box::new(HfTokenizers(t))));
        }
        _ => {
            println!(
                "note: no {}: the tokenizers column is absent",
                json_file.display()
            );
            peers.push(None);
        }
    }
    let start = Instant::now();
    let kitoken = if json_only {
        kitoken::Kitoken::from_tokenizers_file(source)
    } else {
        kitoken::Kitoken::from_sentencepiece_file(source)
    };
    match kitoken {
        Ok(k) => {
            let what = if json_only {
                "kitoken (tokenizer.json)"
            } else {
                "kitoken (tokenizer.model)"
            };
            loads.push((what, start.elapsed()));
            peers.push(Some(Box::new(Kitoken(k))));
        }
        Err(e) => {
            println!("note: kitoken cannot load {}: {e}", source.display());
            peers.push(None);
        }
    }
    let (source, corpora) = corpus::load(root, &opts.files, &opts.corpora);
    match &source {
        corpus::Source::Shared(p) => println!("corpora: {}", p.display()),
        corpus::Source::Fixtures(p) => println!(
            "note: the shared corpus is absent; measuring the committed fixtures in {}",
            p.display()
        ),
        corpus::Source::Files => println!("corpora: files from the command line"),
    }
    println!(
        "model {} ({} ids), single thread, texts of at most {} KiB, median of {} runs, MB/s",
        opts.model,
        sp_model.n_ids(),
        CHUNK / 1024,
        opts.runs
    );
    for (name, t) in &loads {
        println!("load: {name}: {:.1} ms", t.as_secs_f64() * 1e3);
    }

    let names: Vec<&str> = ["tokenizers (Rust)", "kitoken", "sentencepiece (Python)"].to_vec();
    let mut table = Vec::new();
    for c in &corpora {
        let texts = chunks(&c.text);
        let want = ours.ids(&texts);
        if ours_cached.ids(&texts) != want {
            eprintln!(
                "FAILURE: {}: picobpe with a cache differs from picobpe",
                c.name
            );
            return ExitCode::FAILURE;
        }
        let mb = c.text.len() as f64 / 1e6;
        let mut cells: Vec<Cell> = Vec::new();
        let mut live: Vec<usize> = Vec::new();
        for (i, p) in peers.iter_mut().enumerate() {
            match p {
                None => cells.push(Cell::Absent),
                Some(p) => {
                    match first_difference(&want, &p.ids(&texts)) {
                        None => cells.push(Cell::Speed(0.0)),
                        Some(at) => cells.push(Cell::Differs(format!("≠ at {at}"))),
                    }
                    live.push(i);
                }
            }
        }
        // The Rust columns, interleaved.
        let mut ours_s = Vec::new();
        let mut cached_s = Vec::new();
        let mut peer_s: Vec<Vec<f64>> = vec![Vec::new(); peers.len()];
        for _ in 0..opts.runs {
            let t = Instant::now();
            std::hint::black_box(ours.run(&texts));
            ours_s.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            std::hint::black_box(ours_cached.run(&texts));
            cached_s.push(t.elapsed().as_secs_f64());
            for &i in &live {
                if let Some(p) = peers[i].as_mut() {
                    let t = Instant::now();
                    std::hint::black_box(p.run(&texts));
                    peer_s[i].push(t.elapsed().as_secs_f64());
                }
            }
        }
        for &i in &live {
            let speed = mb / median(peer_s[i].clone());
            cells[i] = match &cells[i] {
                Cell::Differs(d) => Cell::Differs(format!("{speed:.1} ({d})")),
                _ => Cell::Speed(speed),
            };
        }
        let python = if json_only {
            Err("sentencepiece reads no tokenizer.json: its column is absent".to_owned())
        } else {
            python_column(root, &model_file, &texts, opts.runs)
        };
        match python {
            Ok(py) if py.ids == want.len() as u64 && py.crc32 == crc_of(&want) => {
                if c.name == corpora[0].name {
                    println!("sentencepiece (Python) {}", py.version);
                }
                cells.push(Cell::Speed(mb / median(py.seconds)));
            }
            Ok(py) => cells.push(Cell::Differs(format!(
                "ids differ ({} ids vs {})",
                py.ids,
                want.len()
            ))),
            Err(e) => {
                println!("note: {e}");
                cells.push(Cell::Absent);
            }
        }
        let ours_mbs = mb / median(ours_s);
        let cached_mbs = mb / median(cached_s);
        let best = cells
            .iter()
            .zip(&names)
            .filter_map(|(c, n)| match c {
                Cell::Speed(s) => Some((*s, *n)),
                _ => None,
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let mut line = format!("| {} | {:.1} | {:.1} |", c.name, ours_mbs, cached_mbs);
        for cell in &cells {
            match cell {
                Cell::Speed(s) => line.push_str(&format!(" {s:.1} |")),
                Cell::Differs(d) => line.push_str(&format!(" {d} |")),
                Cell::Absent => line.push_str(" — |"),
            }
        }
        match best {
            Some((s, n)) => line.push_str(&format!(
                " {:.2}× / {:.2}× ({n}) |",
                ours_mbs / s,
                cached_mbs / s
            )),
            None => line.push_str(" — |"),
        }
        println!("{line}");
        table.push(line);
    }
    println!(
        "\n| corpus ({}) | picobpe | picobpe + 1 MiB cache | {} | picobpe / fastest exact peer (no cache / cache) |",
        opts.model,
        names.join(" | ")
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    // (A `≠` cell is a peer whose ids differ from picobpe's: timed, not in the ratio.)
    for line in &table {
        println!("{line}");
    }
    ExitCode::SUCCESS
}
