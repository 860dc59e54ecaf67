//! `cargo xtask bench-train`: training speed and peak memory of `host-trainer train` next to the
//! Hugging Face `tokenizers` BpeTrainer and `rustbpe`, in the same run, on the same file; and
//! `train --model-type wordpiece` next to `tokenizers`' WordPieceTrainer, and `train
//! --model-type sentencepiece-bpe` and `unigram` next to `spm_train` (and Unigram next to
//! `tokenizers`' UnigramTrainer).
//!
//! ```text
//! cargo xtask bench-train [--runs N] [--vocab-size N] [--no-peers] [--no-big] [--big-gb X]
//!                         [--only wordpiece|sentencepiece|unigram]
//! ```
//!
//! Every measurement is one child process: wall time from spawn to exit, CPU time and peak RSS
//! from the kernel (`wait4`'s `ru_utime + ru_stime` and `ru_maxrss`), so the figures include
//! process start-up, reading the file and writing the result, for every tool alike (the peers'
//! in-library training time is shown too). Other load on the machine inflates wall times; CPU
//! times are steadier.
//! Tools run interleaved, `--runs` times each (default 3); the table shows the median.
//!
//! Inputs: `../shared/data/corpus/english.txt` (or `$PICOBPE_SHARED_DATA/corpus/english.txt`) at
//! N = 10000 with `<|endoftext|>`; `tests/fixtures/cs336/corpus.en` at N = 500 (the CS336
//! budget is 1.5 s); and a ≥ 1 GB file made by repeating english.txt (written once to
//! `$TMPDIR/picobpe-bench/`, never committed) to show that time grows linearly with the input
//! and memory does not. Peers are run by `scripts/bench_train_peers.py` (python3 with
//! `tokenizers` and `rustbpe` installed; a missing peer is reported and skipped).
//!
//! Sharded training is measured next to the whole run on english.txt and on the ≥ 1 GB file:
//! the file is cut in two at the `<|endoftext|>` nearest its middle (shards written once to
//! `$TMPDIR/picobpe-bench/`, outside the timing, as a corpus stored in shards would be), then two
//! `host-trainer count-pieces --threads 1` processes run at the same time (2 workers), then
//! `train --counts` on their two count files. Its wall time is the two steps' sum, its peak RSS
//! the largest of the three processes'; the count files' sizes are shown, and the run checks
//! that the model is byte-identical to the whole run's. (The Dask driver, `examples/
//! dask_train.py`, runs the same commands; its cluster start-up, about a second, is left out.)

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const EOT: &str = "<|endoftext|>";

/// One finished child process.
struct Measurement {
    wall_s: f64,
    /// User + system CPU time (less sensitive than wall time to other load on the machine).
    cpu_s: f64,
    peak_rss_mb: f64,
    stdout: String,
}

/// Options from the command line.
struct Options {
    runs: usize,
    vocab_size: u32,
    peers: bool,
    big: bool,
    big_gb: f64,
    /// One section only (`wordpiece`, `sentencepiece`, `unigram`).
    only: Option<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        runs: 3,
        vocab_size: 10_000,
        peers: true,
        big: true,
        big_gb: 1.0,
        only: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| format!("{name} needs a value"))
                .cloned()
        };
        match a.as_str() {
            "--runs" => {
                o.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?
            }
            "--vocab-size" => {
                o.vocab_size = value("--vocab-size")?
                    .parse()
                    .map_err(|e| format!("--vocab-size: {e}"))?
            }
            "--big-gb" => {
                o.big_gb = value("--big-gb")?
                    .parse()
                    .map_err(|e| format!("--big-gb: {e}"))?
            }
            "--only" => o.only = Some(value("--only")?),
            "--no-peers" => o.peers = false,
            "--no-big" => o.big = false,
            other => return Err(format!("unknown option {other}")),
        }
    }
    o.runs = o.runs.max(1);
    Ok(o)
}

/// Entry point.
pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?
        .to_path_buf();
    let shared = std::env::var_os("PICOBPE_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/data"));
    let english = shared.join("corpus/english.txt");
    if !english.is_file() {
        println!(
            "bench-train: {} is not present; nothing to measure (set PICOBPE_SHARED_DATA)",
            english.display()
        );
        return Ok(());
    }

    println!("== building host-trainer (release)");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "-p", "host-trainer"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("cargo build failed".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let trainer = target.join("release/host-trainer");
    let work = std::env::temp_dir().join("picobpe-bench");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;

    print_machine();
    if let Some(only) = &opts.only {
        return match only.as_str() {
            "wordpiece" => wordpiece_section(&trainer, &root, &english, &work, &opts),
            "sentencepiece" => sentencepiece_section(&trainer, &root, &english, &work, &opts),
            "unigram" => unigram_section(&trainer, &root, &english, &work, &opts),
            other => Err(format!(
                "--only {other}: choose wordpiece, sentencepiece or unigram"
            )),
        };
    }
    let n = opts.vocab_size.to_string();
    let english_mb = file_mb(&english);
    let ours = |threads: Option<&str>, input: &Path, vocab: &str, out: &str| {
        let mut c = Command::new(&trainer);
        c.arg("train")
            .arg("--input")
            .arg(input)
            .args(["--vocab-size", vocab, "--special-token", EOT, "--quiet"])
            .arg("--out")
            .arg(work.join(out));
        if let Some(t) = threads {
            c.args(["--threads", t]);
        }
        c
    };
    let peer = |tool: &str| {
        let mut c = Command::new("python3");
        c.arg(root.join("scripts/bench_train_peers.py"))
            .arg(tool)
            .arg(&english)
            .arg(&n)
            .arg(&work);
        c
    };

    // Tools on english.txt, interleaved.
    let mut tools: Vec<Tool<'_>> = vec![
        (
            "picobpe host-trainer (all cores)".into(),
            Box::new(|| ours(None, &english, &n, "ours")),
        ),
        (
            "picobpe host-trainer --threads 1".into(),
            Box::new(|| ours(Some("1"), &english, &n, "ours-1")),
        ),
    ];
    if opts.peers {
        for (tool, module, label) in [
            ("hf", "tokenizers", "HF tokenizers BpeTrainer+ByteLevel"),
            ("rustbpe", "rustbpe", "rustbpe"),
        ] {
            match python_module_version(module) {
                Ok(version) => {
                    tools.push((format!("{label} {version}"), Box::new(move || peer(tool))))
                }
                Err(e) => println!("peer {label} unavailable: {e}"),
            }
        }
    }
    println!(
        "\n== english.txt ({english_mb:.1} MB), N = {}, special {EOT}, median of {} runs",
        opts.vocab_size, opts.runs
    );
    let mut results: Vec<Vec<Measurement>> = tools.iter().map(|_| Vec::new()).collect();
    let english_shards = split_at_documents(&english, 2, &work)?;
    let sharded_label = "picobpe sharded, 2 workers (see below)";
    let mut sharded = Vec::new();
    for run in 0..opts.runs {
        for (i, (name, make)) in tools.iter().enumerate() {
            let m = measure(make()).map_err(|e| format!("{name}: {e}"))?;
            println!(
                "  run {}: {name:<44} {:>7.2} s wall {:>7.2} s CPU {:>8.1} MB",
                run + 1,
                m.wall_s,
                m.cpu_s,
                m.peak_rss_mb
            );
            results[i].push(m);
        }
        let m = sharded_run(
            &trainer,
            &english_shards,
            &n,
            &work,
            "ours-sharded",
            &work.join("ours"),
        )?;
        println!(
            "  run {}: {sharded_label:<44} {:>7.2} s wall {:>7.2} s CPU {:>8.1} MB",
            run + 1,
            m.wall_s,
            m.cpu_s,
            m.peak_rss_mb
        );
        sharded.push(m);
    }
    println!(
        "\n{:<46} {:>8} {:>8} {:>12} {:>10}",
        "tool", "wall s", "CPU s", "peak RSS MB", "train() s"
    );
    for ((name, _), ms) in tools.iter().zip(&results) {
        let wall = median(ms.iter().map(|m| m.wall_s).collect());
        let cpu = median(ms.iter().map(|m| m.cpu_s).collect());
        let rss = median(ms.iter().map(|m| m.peak_rss_mb).collect());
        let inner: Vec<f64> = ms
            .iter()
            .filter_map(|m| json_f64(&m.stdout, "train_s"))
            .collect();
        let inner = if inner.is_empty() {
            "-".to_owned()
        } else {
            format!("{:.2}", median(inner))
        };
        println!("{name:<46} {wall:>8.2} {cpu:>8.2} {rss:>12.1} {inner:>10}");
    }
    let whole_wall = median(results[0].iter().map(|m| m.wall_s).collect());
    sharded.sort_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
    print_sharded(sharded_label, &sharded[sharded.len() / 2], whole_wall);

    // CS336 corpus.en, N = 500.
    let corpus_en = root.join("tests/fixtures/cs336/corpus.en");
    let ms: Vec<Measurement> = (0..opts.runs)
        .map(|_| measure(ours(None, &corpus_en, "500", "cs336")))
        .collect::<Result<_, _>>()?;
    println!(
        "\n== corpus.en ({:.2} MB), N = 500: picobpe {:.3} s wall, {:.3} s CPU, {:.1} MB peak RSS (median of {}; CS336 budget 1.5 s)",
        file_mb(&corpus_en),
        median(ms.iter().map(|m| m.wall_s).collect()),
        median(ms.iter().map(|m| m.cpu_s).collect()),
        median(ms.iter().map(|m| m.peak_rss_mb).collect()),
        opts.runs
    );

    wordpiece_section(&trainer, &root, &english, &work, &opts)?;
    sentencepiece_section(&trainer, &root, &english, &work, &opts)?;
    unigram_section(&trainer, &root, &english, &work, &opts)?;

    if opts.big {
        let big = make_big(&english, &work, opts.big_gb)?;
        let big_mb = file_mb(&big);
        let m = measure(ours(None, &big, &n, "ours-big"))?;
        let cpu = m.cpu_s;
        let small = median(results[0].iter().map(|m| m.wall_s).collect());
        println!(
            "\n== {} ({big_mb:.0} MB = english.txt x {:.0}), N = {}: picobpe {:.1} s wall, {cpu:.1} s CPU \
             ({:.0} MB/s; english.txt: {:.0} MB/s), {:.1} MB peak RSS",
            big.display(),
            big_mb / english_mb,
            opts.vocab_size,
            m.wall_s,
            big_mb / m.wall_s,
            english_mb / small,
            m.peak_rss_mb
        );
        let shards = split_at_documents(&big, 2, &work)?;
        let sharded = sharded_run(
            &trainer,
            &shards,
            &n,
            &work,
            "ours-big-sharded",
            &work.join("ours-big"),
        )?;
        print_sharded("  sharded, 2 workers", &sharded, m.wall_s);
        let m = measure(wordpiece(&trainer, &big, None, &work.join("wp-big"), false))?;
        println!(
            "  WordPiece, N = 30000: picobpe {:.1} s wall, {:.1} s CPU, {:.1} MB peak RSS",
            m.wall_s, m.cpu_s, m.peak_rss_mb
        );
    }
    println!("\ncommand: cargo xtask bench-train {}", args.join(" "));
    Ok(())
}

/// `host-trainer train --model-type wordpiece` with BertWordPieceTokenizer's settings (the
/// peer's): N = 30000, `--min-frequency 2 --limit-alphabet 1000`, uncased.
fn wordpiece(
    trainer: &Path,
    input: &Path,
    threads: Option<&str>,
    out: &Path,
    likelihood: bool,
) -> Command {
    let mut c = Command::new(trainer);
    c.args(["train", "--model-type", "wordpiece", "--input"])
        .arg(input)
        .args([
            "--vocab-size",
            "30000",
            "--min-frequency",
            "2",
            "--limit-alphabet",
            "1000",
        ])
        .args(["--quiet", "--out"])
        .arg(out);
    if let Some(t) = threads {
        c.args(["--threads", t]);
    }
    if likelihood {
        c.args(["--wordpiece-score", "likelihood"]);
    }
    c
}

/// WordPiece training on english.txt: picobpe (frequency, as `tokenizers`; and likelihood)
/// next to `tokenizers`' WordPieceTrainer, interleaved, with the ratio of wall times.
fn wordpiece_section(
    trainer: &Path,
    root: &Path,
    english: &Path,
    work: &Path,
    opts: &Options,
) -> Result<(), String> {
    let mut tools: Vec<Tool<'_>> = vec![
        (
            "picobpe (all cores)".into(),
            Box::new(|| wordpiece(trainer, english, None, &work.join("wp"), false)),
        ),
        (
            "picobpe --threads 1".into(),
            Box::new(|| wordpiece(trainer, english, Some("1"), &work.join("wp-1"), false)),
        ),
        (
            "picobpe --wordpiece-score likelihood".into(),
            Box::new(|| wordpiece(trainer, english, None, &work.join("wp-l"), true)),
        ),
    ];
    if opts.peers {
        match python_module_version("tokenizers") {
            Ok(version) => tools.push((
                format!("HF tokenizers {version} WordPieceTrainer"),
                Box::new(move || {
                    let mut c = Command::new("python3");
                    c.arg(root.join("scripts/bench_train_peers.py"))
                        .arg("hf-wordpiece")
                        .arg(english)
                        .arg("30000")
                        .arg(work);
                    c
                }),
            )),
            Err(e) => println!("peer tokenizers unavailable: {e}"),
        }
    }
    println!(
        "\n== WordPiece on english.txt, N = 30000 (uncased, min_frequency 2, limit_alphabet \
         1000), median of {} runs",
        opts.runs
    );
    ratio_table(&tools, opts.runs, |_| 0)
}

/// `host-trainer train --model-type sentencepiece-bpe` with `spm_train`'s defaults, N = 8000
/// (`identity`: `--normalization-rule-name identity`).
fn sentencepiece(trainer: &Path, input: &Path, out: &Path, identity: bool) -> Command {
    let mut c = Command::new(trainer);
    c.args(["train", "--model-type", "sentencepiece-bpe", "--input"])
        .arg(input)
        .args(["--vocab-size", "8000", "--quiet", "--out"])
        .arg(out);
    if identity {
        c.args(["--normalization-rule-name", "identity"]);
    }
    c
}

/// SentencePiece BPE training on english.txt: picobpe next to `spm_train` (the `sentencepiece`
/// wheel), with its default rule and with `identity`, interleaved, with the ratio of wall
/// times. Both give the same pieces (`tests/tests/train_sentencepiece.rs`).
fn sentencepiece_section(
    trainer: &Path,
    root: &Path,
    english: &Path,
    work: &Path,
    opts: &Options,
) -> Result<(), String> {
    let peer = |tool: &'static str| peer_row(root, tool, english, "8000", work);
    let mut tools: Vec<Tool<'_>> = vec![(
        "picobpe (nmt_nfkc, all cores)".into(),
        Box::new(|| sentencepiece(trainer, english, &work.join("spb"), false)),
    )];
    let spm = if opts.peers {
        python_module_version("sentencepiece")
            .map_err(|e| println!("peer sentencepiece unavailable: {e}"))
            .ok()
    } else {
        None
    };
    if let Some(version) = &spm {
        tools.push((format!("spm_train {version} (nmt_nfkc)"), peer("spm-bpe")));
    }
    tools.push((
        "picobpe (identity, all cores)".into(),
        Box::new(|| sentencepiece(trainer, english, &work.join("spb-id"), true)),
    ));
    if let Some(version) = &spm {
        tools.push((
            format!("spm_train {version} (identity)"),
            peer("spm-bpe-identity"),
        ));
    }
    println!(
        "\n== SentencePiece BPE on english.txt, N = 8000 (spm_train's defaults; and the identity \
         rule), median of {} runs",
        opts.runs
    );
    // Each peer against the picobpe row of its rule, the last one before it.
    ratio_table(&tools, opts.runs, |i| {
        (0..=i)
            .rev()
            .find(|&j| tools[j].0.starts_with("picobpe"))
            .unwrap_or(0)
    })
}

/// Unigram training on english.txt, N = 8000, `spm_train`'s defaults (`nmt_nfkc`, 16
/// threads' worth of partitions): picobpe next to `spm_train --model_type unigram` (the same
/// pieces and scores: `tests/tests/train_sentencepiece.rs`) and `tokenizers`' UnigramTrainer
/// (`SentencePieceUnigramTokenizer`'s Nmt + NFKC + Metaspace; its own pieces).
fn unigram_section(
    trainer: &Path,
    root: &Path,
    english: &Path,
    work: &Path,
    opts: &Options,
) -> Result<(), String> {
    let peer = |tool: &'static str| peer_row(root, tool, english, "8000", work);
    let mut tools: Vec<Tool<'_>> = vec![(
        "picobpe (nmt_nfkc, all cores)".into(),
        Box::new(|| {
            let mut c = Command::new(trainer);
            c.args(["train", "--model-type", "unigram", "--input"])
                .arg(english)
                .args(["--vocab-size", "8000", "--quiet", "--out"])
                .arg(work.join("ug"));
            c
        }),
    )];
    if opts.peers {
        match python_module_version("sentencepiece") {
            Ok(v) => tools.push((format!("spm_train {v} (unigram)"), peer("spm-unigram"))),
            Err(e) => println!("peer sentencepiece unavailable: {e}"),
        }
        match python_module_version("tokenizers") {
            Ok(v) => tools.push((format!("tokenizers {v} UnigramTrainer"), peer("hf-unigram"))),
            Err(e) => println!("peer tokenizers unavailable: {e}"),
        }
    }
    println!(
        "\n== SentencePiece Unigram on english.txt, N = 8000 (spm_train's defaults), median of \
         {} runs",
        opts.runs
    );
    ratio_table(&tools, opts.runs, |_| 0)
}

/// The command of a peer row: `scripts/bench_train_peers.py TOOL FILE VOCAB OUT_DIR`.
fn peer_row<'a>(
    root: &'a Path,
    tool: &'static str,
    input: &'a Path,
    vocab: &'static str,
    work: &'a Path,
) -> Box<dyn Fn() -> Command + 'a> {
    Box::new(move || {
        let mut c = Command::new("python3");
        c.arg(root.join("scripts/bench_train_peers.py"))
            .arg(tool)
            .arg(input)
            .arg(vocab)
            .arg(work);
        c
    })
}

/// A benchmark row: its label and the command it times.
type Tool<'a> = (String, Box<dyn Fn() -> Command + 'a>);

/// Time `tools` interleaved, `runs` times, and print the medians with each row's wall time
/// over that of row `baseline(row)`.
fn ratio_table(
    tools: &[Tool<'_>],
    runs: usize,
    baseline: impl Fn(usize) -> usize,
) -> Result<(), String> {
    let mut results: Vec<Vec<Measurement>> = tools.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs {
        for (i, (name, make)) in tools.iter().enumerate() {
            results[i].push(measure(make()).map_err(|e| format!("{name}: {e}"))?);
        }
    }
    let wall = |ms: &[Measurement]| median(ms.iter().map(|m| m.wall_s).collect());
    println!(
        "{:<46} {:>8} {:>8} {:>12} {:>12}",
        "tool", "wall s", "CPU s", "peak RSS MB", "wall / ours"
    );
    for (i, ((name, _), ms)) in tools.iter().zip(&results).enumerate() {
        println!(
            "{name:<46} {:>8.2} {:>8.2} {:>12.1} {:>11.2}x",
            wall(ms),
            median(ms.iter().map(|m| m.cpu_s).collect()),
            median(ms.iter().map(|m| m.peak_rss_mb).collect()),
            wall(ms) / wall(&results[baseline(i)])
        );
    }
    Ok(())
}

/// Spawn `cmd`, wait for it with `wait4`, and return its wall time, peak RSS and stdout.
fn measure(cmd: Command) -> Result<Measurement, String> {
    finish(start(cmd)?)
}

/// A child process being measured.
struct Started {
    child: std::process::Child,
    start: Instant,
    out_reader: std::thread::JoinHandle<String>,
    err_reader: std::thread::JoinHandle<String>,
}

/// Spawn `cmd` with its output captured.
fn start(mut cmd: Command) -> Result<Started, String> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("cannot start: {e}"))?;
    let mut out = child.stdout.take().ok_or("no stdout")?;
    let mut err = child.stderr.take().ok_or("no stderr")?;
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    Ok(Started {
        child,
        start,
        out_reader,
        err_reader,
    })
}

/// Wait for a started child with `wait4`: its wall time, CPU time, peak RSS and stdout.
fn finish(started: Started) -> Result<Measurement, String> {
    let Started {
        child,
        start,
        out_reader,
        err_reader,
    } = started;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain old data that wait4 fills in; zeroed is a valid initial value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet reaped (std's `Child` is never waited on); both
    // pointers point to live, writable locals.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall_s = start.elapsed().as_secs_f64();
    if r != pid {
        return Err(format!("wait4 failed: {}", std::io::Error::last_os_error()));
    }
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(format!("failed (status {status}): {stderr}"));
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Measurement {
        wall_s,
        cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
        // Linux reports ru_maxrss in KiB.
        peak_rss_mb: usage.ru_maxrss as f64 * 1024.0 / 1e6,
        stdout,
    })
}

/// One sharded training run: counting on 2 workers at once, then `train --counts`.
struct Sharded {
    /// Wall time of both steps.
    wall_s: f64,
    /// Wall time of the concurrent `count-pieces` step.
    count_s: f64,
    /// CPU time of all three processes.
    cpu_s: f64,
    /// The largest peak RSS of the three processes.
    peak_rss_mb: f64,
    /// Size of each count file in bytes.
    count_file_bytes: Vec<u64>,
}

/// Run `count-pieces --threads 1` on every shard at the same time, then `train --counts` on
/// their count files into `work/out`; the model must equal the one in `whole`.
fn sharded_run(
    trainer: &Path,
    shards: &[PathBuf],
    vocab: &str,
    work: &Path,
    out: &str,
    whole: &Path,
) -> Result<Sharded, String> {
    let counts: Vec<PathBuf> = (0..shards.len())
        .map(|i| work.join(format!("{out}-{i}.counts")))
        .collect();
    let begin = Instant::now();
    let running: Vec<Started> = shards
        .iter()
        .zip(&counts)
        .map(|(shard, c)| {
            let mut cmd = Command::new(trainer);
            cmd.args([
                "count-pieces",
                "--quiet",
                "--threads",
                "1",
                "--special-token",
                EOT,
            ])
            .arg("--input")
            .arg(shard)
            .arg("--out")
            .arg(c);
            start(cmd)
        })
        .collect::<Result<_, _>>()?;
    let counted: Vec<Measurement> = running
        .into_iter()
        .map(finish)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("count-pieces: {e}"))?;
    let count_s = begin.elapsed().as_secs_f64();
    let mut cmd = Command::new(trainer);
    cmd.args(["train", "--quiet", "--vocab-size", vocab, "--counts"])
        .args(&counts)
        .arg("--out")
        .arg(work.join(out));
    let trained = measure(cmd).map_err(|e| format!("train --counts: {e}"))?;
    let model = |dir: &Path| std::fs::read(dir.join("tokenizer.model")).unwrap_or_default();
    if model(&work.join(out)).is_empty() || model(&work.join(out)) != model(whole) {
        return Err(format!(
            "the sharded model in {} differs from the whole run's in {}",
            work.join(out).display(),
            whole.display()
        ));
    }
    Ok(Sharded {
        wall_s: count_s + trained.wall_s,
        count_s,
        cpu_s: counted.iter().map(|m| m.cpu_s).sum::<f64>() + trained.cpu_s,
        peak_rss_mb: counted
            .iter()
            .map(|m| m.peak_rss_mb)
            .fold(trained.peak_rss_mb, f64::max),
        count_file_bytes: counts
            .iter()
            .map(|c| std::fs::metadata(c).map_or(0, |m| m.len()))
            .collect(),
    })
}

/// Print one sharded run's line.
fn print_sharded(label: &str, m: &Sharded, whole_wall_s: f64) {
    let sizes: Vec<String> = m
        .count_file_bytes
        .iter()
        .map(|b| format!("{:.2}", *b as f64 / 1e6))
        .collect();
    println!(
        "{label:<46} {:>8.2} {:>8.2} {:>12.1}\n    = 2 x count-pieces --threads 1 at once \
         {:.2} s + train --counts {:.2} s; count files {} MB; {:.2}x the whole run's wall time; \
         model byte-identical",
        m.wall_s,
        m.cpu_s,
        m.peak_rss_mb,
        m.count_s,
        m.wall_s - m.count_s,
        sizes.join(" + "),
        m.wall_s / whole_wall_s
    );
}

/// Cut `path` in `parts` shards at the `<|endoftext|>` nearest each even cut, streaming, into
/// `work` (reused when already there with the same total size).
fn split_at_documents(path: &Path, parts: usize, work: &Path) -> Result<Vec<PathBuf>, String> {
    use std::io::{Seek, SeekFrom};
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let size = std::fs::metadata(path).map_err(io)?.len();
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let shards: Vec<PathBuf> = (0..parts)
        .map(|i| work.join(format!("{stem}.shard-{i}-of-{parts}.txt")))
        .collect();
    let have: u64 = shards
        .iter()
        .map(|s| std::fs::metadata(s).map_or(0, |m| m.len()))
        .sum();
    if have == size && shards.iter().all(|s| s.is_file()) {
        return Ok(shards);
    }
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut cuts = vec![0u64];
    for i in 1..parts as u64 {
        // The first <|endoftext|> ending after the even cut (documents are small).
        let target = size * i / parts as u64;
        file.seek(SeekFrom::Start(target)).map_err(io)?;
        let mut window = vec![0u8; 1 << 20];
        let n = file.read(&mut window).map_err(io)?;
        let hit = window[..n]
            .windows(EOT.len())
            .position(|w| w == EOT.as_bytes())
            .ok_or_else(|| format!("no {EOT} within 1 MiB after byte {target}"))?;
        cuts.push(target + (hit + EOT.len()) as u64);
    }
    cuts.push(size);
    for (shard, w) in shards.iter().zip(cuts.windows(2)) {
        file.seek(SeekFrom::Start(w[0])).map_err(io)?;
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(shard).map_err(|e| format!("{}: {e}", shard.display()))?,
        );
        std::io::copy(&mut (&mut file).take(w[1] - w[0]), &mut out).map_err(io)?;
        std::io::Write::flush(&mut out).map_err(|e| e.to_string())?;
    }
    Ok(shards)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn file_mb(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

/// `"key": number` from a one-line JSON object.
fn json_f64(text: &str, key: &str) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    v.get(key)?.as_f64()
}

/// The installed version of a Python package, or why it cannot be used.
fn python_module_version(module: &str) -> Result<String, String> {
    let out = Command::new("python3")
        .args([
            "-c",
            &format!("import {module}; from importlib.metadata import version; print(version('{module}'))"),
        ])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!("import {module} failed (pip install {module})"))
    }
}

/// `english` repeated until the file has at least `gb` GB (reused when already there).
fn make_big(english: &Path, work: &Path, gb: f64) -> Result<PathBuf, String> {
    let text = std::fs::read(english).map_err(|e| format!("{}: {e}", english.display()))?;
    let copies = ((gb * 1e9) / text.len() as f64).ceil().max(1.0) as u64;
    let path = work.join(format!("english-x{copies}.txt"));
    let want = copies * text.len() as u64;
    if std::fs::metadata(&path).map(|m| m.len()).ok() != Some(want) {
        println!("\n== writing {} ({copies} copies)", path.display());
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?,
        );
        for _ in 0..copies {
            std::io::Write::write_all(&mut f, &text).map_err(|e| e.to_string())?;
        }
        std::io::Write::flush(&mut f).map_err(|e| e.to_string())?;
    }
    Ok(path)
}

/// Cores and load, since other work on the machine shows up in wall times.
fn print_machine() {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!("machine: {cores} cores, load average {}", load.join(" "));
}
