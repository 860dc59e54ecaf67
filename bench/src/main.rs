//! `cargo xtask bench` (or `cargo run --release -p picobpe-bench -- ARGS`): encode throughput
//! of picobpe next to the Rust peers, single thread, same input, same run.
//!
//! ```text
//! picobpe-bench [--encoding gpt2|cl100k_base|o200k_base]... [--corpus NAME]... [--runs N]
//!               [--specials ordinary|all] [--cold] [--first-use] [FILE...]
//! ```
//!
//! For every encoding and corpus: picobpe's ids are compared with tiktoken-rs built from the
//! same rank file (a difference aborts the run); each peer's ids are compared with picobpe's
//! (a peer that differs gets "ids differ at i" and is not timed: a fast wrong answer is not a
//! result); then every tokenizer is timed `--runs` times, interleaved, and the median MB/s
//! (10^6 bytes of input per second) is printed. A Markdown table of all rows ends the output.
//!
//! Columns: picobpe (tables from `tests/fixtures/models` via `picobpe_model::import::tiktoken`,
//! `PieceTable::Full`); tiktoken-rs from the same rank file with the issues' patterns (the
//! reference); tiktoken-rs, bpe-openai, tiktoken (pure Rust) and toktok-rs with the
//! vocabularies they embed. Default mode is `ordinary` (special-token text is plain text), the
//! one every peer offers; `--specials all` recognizes the specials (bpe-openai has no such mode).
//! tiktoken and toktok-rs keep per-thread piece caches across calls; so do the last two columns,
//! "picobpe + 16 MiB cache" and "picobpe + 64 MiB cache" (`Tokenizer::encode_cached` with a
//! cache of 262,144 or 1,048,576 lines in the caller's memory: the budget toktok-rs takes for
//! one thread, and less than fastokens' piece map takes for the English corpus). `--cold`
//! empties them all (untimed) before each timed run. The ratio is the fastest picobpe column
//! over the fastest peer.
//!
//! Corpora: `../shared/data/corpus` when present — `english` (english.txt, 30 MB), each
//! `multi/*.txt` by stem (`zh`, `code-rust`, ...), and `multi` (all of them concatenated);
//! otherwise the committed `tests/fixtures/train` files of the same shape (1 MB English, 100 kB
//! multi slices), with a note. `$PICOBPE_SHARED_DATA` replaces `../shared/data`. FILE arguments
//! replace all of these.
//!
//! `--first-use` (implies `--cold`; `cargo xtask bench --first-use` builds `host-trainer` first)
//! measures what the first use of a tokenizer costs, and prints three tables at the end:
//!
//! 1. **Load**, per encoding: each tokenizer's construction, timed in a fresh child process
//!    (this binary again, as the hidden `picobpe-bench --load-one PEER ENCODING [FILE]`, which
//!    prints the load's nanoseconds), `--runs` times interleaved, median in ms. picobpe:
//!    `load_picobpe` (`picobpe_model::read_tables`), then `Tokenizer::new`, of a `.model` file
//!    the bench writes once into a temporary directory with `Model::write`; tiktoken-rs from
//!    the same rank file (written there uncompressed: read + base64 decode + `CoreBPE::new`)
//!    and with its embedded vocabulary; bpe-openai (first call of its lazy constructor); `tiktoken`;
//!    toktok-rs; Python `tiktoken` (`tiktoken.Encoding(name, pat_str, mergeable_ranks=
//!    tiktoken.load.load_tiktoken_bpe(rank file), special_tokens)` with `TIKTOKEN_CACHE_DIR=""`,
//!    construction only, through `python3 -c`; a note and no column if `python3` cannot import
//!    `tiktoken`).
//! 2. **Whole process vs encode call**, per corpus: `host-trainer encode [--ordinary] [--format
//!    u32le] --model MODEL FILE > /dev/null` (wall time from spawn to exit, `--format u32le`
//!    when its `--help` offers it; its ids are checked against picobpe's first) next to every
//!    in-process encode call of the whole text, in seconds, with call / CLI (> 1: the CLI is
//!    faster). The CLI runs in the same interleaved rounds as the encode calls. It is found
//!    beside this binary, else in `$CARGO_TARGET_DIR/release` or `target/release` (a note and
//!    no table if absent). `multi` (several files) is written to the temporary directory.
//! 3. **Cold MB/s**: the usual table, every column starting fresh before each timed run:
//!    picobpe without a cache (`encode`) and with a cache the size of the CLI's (the default of
//!    `encode --cache-mib`, 16,384 lines of 64 B per MiB; in place of the 16 and 64 MiB
//!    columns), emptied; every peer a new instance
//!    (tiktoken-rs too, rebuilt untimed; bpe-openai's lazy static has no piece cache to drop).
//!    The ratio is the faster picobpe column over the fastest peer.

mod corpus;
mod encodings;
mod first_use;
mod peers;
mod report;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use encodings::Encoding;
use peers::{Column, Mode, Subject};
use report::{Cell, Row};

/// Command-line options.
struct Options {
    encodings: Vec<Encoding>,
    corpora: Vec<String>,
    runs: usize,
    mode: Mode,
    cold: bool,
    first_use: bool,
    files: Vec<String>,
}

const USAGE: &str = "usage: picobpe-bench [--encoding gpt2|cl100k_base|o200k_base|tekken]... \
[--corpus NAME]... [--runs N] [--specials ordinary|all] [--cold] [--first-use] [FILE...]";

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        encodings: Vec::new(),
        corpora: Vec::new(),
        runs: 5,
        mode: Mode::Ordinary,
        cold: false,
        first_use: false,
        files: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--encoding" | "-e" => {
                for e in value()?.split(',') {
                    o.encodings
                        .push(Encoding::parse(e).ok_or(format!("unknown encoding `{e}`"))?);
                }
            }
            "--corpus" | "-c" => o.corpora.extend(value()?.split(',').map(String::from)),
            "--runs" | "-n" => {
                o.runs = value()?
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or("--runs needs a positive integer")?
            }
            "--specials" => {
                o.mode = match value()?.as_str() {
                    "ordinary" | "none" => Mode::Ordinary,
                    "all" => Mode::All,
                    s => return Err(format!("--specials: `{s}` is not ordinary|all")),
                }
            }
            "--cold" => o.cold = true,
            "--first-use" => {
                o.first_use = true;
                o.cold = true;
            }
            "--help" | "-h" => return Err(String::new()),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            f => o.files.push(f.to_string()),
        }
    }
    if o.encodings.is_empty() {
        o.encodings = Encoding::ALL.to_vec();
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--load-one") {
        return first_use::load_one(&args[1..]);
    }
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
    let (source, corpora) = corpus::load(root, &opts.files, &opts.corpora);
    match &source {
        corpus::Source::Shared(p) => println!("corpora: {}", p.display()),
        corpus::Source::Fixtures(p) => println!(
            "note: the shared corpus is absent; measuring the committed fixtures in {} (1 MB English, 100 kB multi slices)",
            p.display()
        ),
        corpus::Source::Files => println!("corpora: files from the command line"),
    }
    if corpora.is_empty() {
        eprintln!("error: no corpus matches {:?}", opts.corpora);
        return ExitCode::from(2);
    }
    println!(
        "single thread, median of {} runs, MB/s (10^6 input bytes/s), mode {:?}{}, load average at start: {}",
        opts.runs,
        opts.mode,
        if opts.first_use {
            ", first use (loads in fresh processes, the CLI as a whole process, fresh instances)"
        } else if opts.cold {
            ", cold caches"
        } else {
            ""
        },
        report::loadavg()
    );
    match run(root, &opts, &corpora) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("FAILURE: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// `--first-use` state: the temporary files, the CLI, Python's availability.
struct FirstUse {
    work: first_use::Workdir,
    cli: Result<first_use::Cli, String>,
    python: Result<(), String>,
    load_rows: Vec<first_use::LoadRow>,
}

/// The CLI run of one corpus: its model and input file.
struct CliJob<'a> {
    cli: &'a first_use::Cli,
    model: &'a Path,
    file: PathBuf,
    ordinary: bool,
}

/// Measure every encoding and corpus, print the rows as they come and the tables at the end.
fn run(root: &Path, opts: &Options, corpora: &[corpus::Corpus]) -> Result<(), String> {
    let mut first = opts.first_use.then(|| FirstUse {
        work: first_use::Workdir::new(),
        cli: first_use::Cli::find(root),
        python: first_use::python_tiktoken(),
        load_rows: Vec::new(),
    });
    // picobpe's cache columns: the CLI's cache (--first-use), else the two large ones.
    let caches: Vec<(&'static str, usize)> = match &first {
        Some(f) => {
            let lines = first_use::cli_cache_lines(root, f.cli.as_ref().ok());
            let bytes = lines * std::mem::size_of::<picobpe::CacheEntry>();
            let name = if bytes.is_multiple_of(1 << 20) {
                format!("picobpe + CLI's cache ({} MiB)", bytes >> 20)
            } else {
                format!("picobpe + CLI's cache ({} KiB)", bytes >> 10)
            };
            if let Err(e) = &f.cli {
                println!("note: no whole-process CLI column: {e}");
            }
            if let Err(e) = &f.python {
                println!("note: no Python tiktoken load column: {e}");
            }
            vec![(&*Box::leak(name.into_boxed_str()), lines)]
        }
        None => peers::CACHE_SIZES.to_vec(),
    };
    let names = peers::column_names(&caches);
    let ordinary = opts.mode == Mode::Ordinary;
    let models = root.join("tests/fixtures/models");
    let mut rows = Vec::new();
    for &enc in &opts.encodings {
        let vocab = encodings::vocabulary(&models, enc);
        println!(
            "\n## {} (rank file {}, {} specials)",
            enc.name(),
            vocab.source.display(),
            vocab.specials.len()
        );
        let model = encodings::picobpe_model(enc, &vocab);
        let model_file = first.as_mut().map(|f| {
            let path = f.work.write_model(enc, &model);
            let row = first_use::measure_loads(enc, &vocab, &path, &f.work, opts.runs, &f.python);
            first_use::print_load_row(&row);
            f.load_rows.push(row);
            path
        });
        let mut ours = peers::picobpe(encodings::picobpe_tables(&model), opts.mode);
        drop(model);
        let mut columns: Vec<Column> = vec![Column::Subject(peers::reference(
            enc,
            &vocab,
            opts.mode,
            opts.first_use,
        ))];
        columns.extend(peers::peers(
            enc,
            &vocab,
            &ours,
            opts.mode,
            &caches,
            opts.first_use,
        ));
        for c in corpora {
            let job = match (&first, &model_file) {
                (
                    Some(FirstUse {
                        cli: Ok(cli), work, ..
                    }),
                    Some(model),
                ) => Some(CliJob {
                    cli,
                    model,
                    file: c.path.clone().unwrap_or_else(|| {
                        work.write(&format!("{}.txt", c.name), c.text.as_bytes())
                    }),
                    ordinary,
                }),
                _ => None,
            };
            let row = measure(enc, c, &mut ours, &mut columns, &names, opts, job.as_ref())?;
            report::print_row(&row);
            rows.push(row);
        }
    }
    println!("\nload average at end: {}\n", report::loadavg());
    if let Some(f) = &first {
        first_use::print_load_markdown(&f.load_rows, opts.runs);
        println!();
        if let Ok(cli) = &f.cli {
            report::print_cli_markdown(&rows, opts.runs, &cli.describe(ordinary));
            println!();
        }
    }
    report::print_markdown(&rows, opts.runs, opts.mode, opts.cold);
    Ok(())
}

/// Check and time every column on one corpus (and with `cli`, the whole CLI process on its
/// file, in the same rounds). `Err` only when picobpe and the reference differ.
fn measure(
    enc: Encoding,
    c: &corpus::Corpus,
    ours: &mut peers::Picobpe,
    columns: &mut [Column],
    names: &[&'static str],
    opts: &Options,
    cli: Option<&CliJob>,
) -> Result<Row, String> {
    let want = ours.ids(&c.text);
    let mut cells: Vec<Cell> = Vec::with_capacity(columns.len() + 1);
    let mut live: Vec<usize> = Vec::new();
    for (i, col) in columns.iter_mut().enumerate() {
        match col {
            Column::Absent(why) => cells.push(Cell::Absent(why)),
            Column::Subject(s) => {
                let got = s.ids(&c.text);
                match first_difference(&want, &got) {
                    None => {
                        cells.push(Cell::Pending);
                        live.push(i);
                    }
                    Some(at) if i == 0 => {
                        let byte = ours.byte_len(&want[..at]);
                        return Err(format!(
                            "{} / {}: picobpe differs from {} at id index {at}, input byte {byte} \
                             (picobpe {} ids, reference {}; around it: picobpe {:?}, reference {:?}; \
                             text {:?})",
                            enc.name(),
                            c.name,
                            s.name(),
                            want.len(),
                            got.len(),
                            around(&want, at),
                            around(&got, at),
                            snippet(&c.text, byte),
                        ));
                    }
                    Some(at) => {
                        let byte = ours.byte_len(&want[..at]);
                        eprintln!(
                            "note: {} / {}: {} ids differ from picobpe's at index {at}, input byte \
                             {byte} ({} vs {} ids; {:?} vs picobpe {:?}; text {:?}); not timed",
                            enc.name(),
                            c.name,
                            s.name(),
                            got.len(),
                            want.len(),
                            around(&got, at),
                            around(&want, at),
                            snippet(&c.text, byte),
                        );
                        cells.push(Cell::Differs(at));
                    }
                }
            }
        }
    }
    let mut cli_cell = cli.map(
        |job| match job.cli.ids(job.model, &job.file, job.ordinary) {
            Ok(got) => match first_difference(&want, &got) {
                None => Cell::Pending,
                Some(at) => {
                    eprintln!(
                        "note: {} / {}: host-trainer encode's ids differ from picobpe's at index \
                         {at} ({} vs {} ids); not timed",
                        enc.name(),
                        c.name,
                        got.len(),
                        want.len()
                    );
                    Cell::Differs(at)
                }
            },
            Err(e) => {
                eprintln!("note: {} / {}: {e}; not timed", enc.name(), c.name);
                Cell::Absent("failed, see note")
            }
        },
    );
    drop(want);

    // Interleaved runs: one run of each tokenizer per round, so load changes hit all alike.
    let bytes = c.text.len();
    let mut ours_times = Vec::with_capacity(opts.runs);
    let mut peer_times: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.runs); columns.len()];
    let mut cli_times = Vec::with_capacity(opts.runs);
    for _ in 0..opts.runs {
        if opts.cold {
            ours.forget();
        }
        ours_times.push(time(bytes, || ours.run(&c.text)));
        for &i in &live {
            let Column::Subject(s) = &mut columns[i] else {
                unreachable!()
            };
            if opts.cold {
                s.forget();
            }
            peer_times[i].push(time(bytes, || s.run(&c.text)));
        }
        if let (Some(job), Some(Cell::Pending)) = (cli, &cli_cell) {
            cli_times.push(time(bytes, || {
                job.cli.run(job.model, &job.file, job.ordinary);
                0
            }));
        }
    }
    if let Some(cell @ Cell::Pending) = &mut cli_cell {
        *cell = Cell::Mbs(report::median(&mut cli_times));
    }
    for &i in &live {
        cells[i] = Cell::Mbs(report::median(&mut peer_times[i]));
    }
    let mut all = vec![Cell::Mbs(report::median(&mut ours_times))];
    all.extend(cells);
    Ok(Row {
        encoding: enc.name(),
        corpus: c.name.clone(),
        bytes,
        columns: names.to_vec(),
        cells: all,
        cli: cli_cell,
    })
}

/// MB/s of one call of `f` on `bytes` bytes of input.
fn time(bytes: usize, mut f: impl FnMut() -> usize) -> f64 {
    let t = std::time::Instant::now();
    std::hint::black_box(f());
    bytes as f64 / t.elapsed().as_secs_f64() / 1e6
}

/// First index where the id sequences differ (a prefix differs at the shorter length).
fn first_difference(a: &[u32], b: &[u32]) -> Option<usize> {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => Some(i),
        None if a.len() == b.len() => None,
        None => Some(a.len().min(b.len())),
    }
}

/// Up to 24 bytes of `text` either side of byte `at`, widened to character boundaries, with
/// `⟦` marking `at`.
fn snippet(text: &str, at: usize) -> String {
    let mut lo = at.saturating_sub(24).min(text.len());
    while !text.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut mid = at.min(text.len());
    while !text.is_char_boundary(mid) {
        mid -= 1;
    }
    let mut hi = (at + 24).min(text.len());
    while !text.is_char_boundary(hi) {
        hi += 1;
    }
    format!("{}⟦{}", &text[lo..mid], &text[mid..hi])
}

fn around(ids: &[u32], at: usize) -> &[u32] {
    let lo = at.saturating_sub(3).min(ids.len());
    let hi = (at + 4).min(ids.len());
    &ids[lo..hi]
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn first_difference_finds_mismatch_and_prefix() {
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_difference(&[1, 2, 3], &[1, 5, 3]), Some(1));
        assert_eq!(first_difference(&[1, 2], &[1, 2, 3]), Some(2));
        assert_eq!(first_difference(&[], &[7]), Some(0));
    }
}
