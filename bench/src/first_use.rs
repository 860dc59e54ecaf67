//! `--first-use`: what a program pays the first time it tokenizes, next to the peers.
//!
//! - Load: each tokenizer's construction for an encoding, timed inside a fresh child process
//!   (this binary run again as `picobpe-bench --load-one PEER ENCODING [FILE]`, which prints
//!   the nanoseconds of the load alone and exits; Python `tiktoken` the same way through
//!   `python3 -c`). The files it reads (the `.model` file, the plain rank file) are written
//!   once into a temporary directory and are in the page cache after the first run.
//! - The CLI: [`Cli`] runs `host-trainer encode` on a corpus file as a whole process (see
//!   `main.rs`, which times it in the same rounds as the in-process encode calls).
//! - The CLI's piece-cache size ([`cli_cache_lines`]), for the in-process column that mirrors it.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use crate::encodings::{self, Encoding, Vocabulary};
use crate::report;

/// The load table's columns: picobpe, then the peers.
pub const LOAD_COLUMNS: [&str; 7] = [
    "picobpe",
    "tiktoken-rs (rank file)",
    "tiktoken-rs (embedded)",
    "bpe-openai",
    "tiktoken",
    "toktok-rs",
    "tiktoken (Python)",
];

/// The `--load-one` names of the loads this binary runs, in [`LOAD_COLUMNS`] order.
const LOAD_ONE: [&str; 6] = [
    "picobpe",
    "tiktoken-rs-rank-file",
    "tiktoken-rs-embedded",
    "bpe-openai",
    "tiktoken",
    "toktok-rs",
];

/// picobpe's load of a `.model` file (the child also times `Tokenizer::new` on the result, so
/// the figure is everything a program does before its first encode call). `read_tables`: a
/// file written by `Model::write` carries its prebuilt tables, which are copied and checked.
fn load_picobpe(path: &Path) -> &'static picobpe::Tables<'static> {
    match picobpe_model::read_tables(path) {
        Ok(picobpe_model::LiveTables::BytePair(tables)) => tables,
        Ok(other) => panic!("{}: not a byte-level model: {other:?}", path.display()),
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

/// The child: `--load-one PEER ENCODING [FILE]`. Times the one load and prints its nanoseconds.
/// FILE is the `.model` file for `picobpe`, the plain rank file for `tiktoken-rs-rank-file`.
pub fn load_one(args: &[String]) -> ExitCode {
    let (Some(peer), Some(enc)) = (args.first(), args.get(1).and_then(|e| Encoding::parse(e)))
    else {
        eprintln!("usage: picobpe-bench --load-one PEER ENCODING [FILE]");
        return ExitCode::from(2);
    };
    let file = args.get(2).map(PathBuf::from);
    let need_file = || file.as_deref().expect("--load-one: this load needs a FILE");
    // Inputs the load is given rather than reads (untimed), as Python's construction is given
    // its special-token dict.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let specials = encodings::specials(&root.join("tests/fixtures/models"), enc);
    let t = Instant::now();
    // Every result is leaked (not dropped): freeing is no part of the load.
    match peer.as_str() {
        "picobpe" => _ = black_box(picobpe::Tokenizer::new(load_picobpe(need_file()))),
        "tiktoken-rs-rank-file" => {
            let path = need_file();
            let ranks = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let bpe = encodings::tiktoken_rs_from_ranks(enc, &ranks, &specials);
            std::mem::forget(black_box((ranks, bpe)));
        }
        "tiktoken-rs-embedded" => {
            std::mem::forget(black_box(crate::peers::tiktoken_rs_embedded(enc)));
        }
        "bpe-openai" => match enc {
            Encoding::Cl100k => _ = black_box(bpe_openai::cl100k_base()),
            Encoding::O200k => _ = black_box(bpe_openai::o200k_base()),
            Encoding::Gpt2 | Encoding::Tekken => panic!("bpe-openai has no {}", enc.name()),
        },
        "tiktoken" => std::mem::forget(black_box(match enc {
            Encoding::Gpt2 => tiktoken::encoding::gpt2(),
            Encoding::Cl100k => tiktoken::encoding::cl100k_base(),
            Encoding::O200k => tiktoken::encoding::o200k_base(),
            Encoding::Tekken => panic!("tiktoken has no tekken"),
        })),
        "toktok-rs" => std::mem::forget(black_box(
            toktok::Tokenizer::builtin(enc.name()).expect("toktok builtin"),
        )),
        p => {
            eprintln!("--load-one: unknown load `{p}` (one of {LOAD_ONE:?})");
            return ExitCode::from(2);
        }
    }
    let ns = t.elapsed().as_nanos();
    println!("{ns}");
    ExitCode::SUCCESS
}

/// Python `tiktoken`, offline: the rank file through `load_tiktoken_bpe` (with
/// `TIKTOKEN_CACHE_DIR` empty, so it reads the file itself rather than a cached copy) and the
/// `Encoding` built on it; only those two are timed (not the interpreter's start or the import).
const PYTHON_LOAD: &str = "\
import json, sys, time
import tiktoken, tiktoken.load
path, name, pat, special = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
t = time.perf_counter_ns()
enc = tiktoken.Encoding(name=name, pat_str=pat,
    mergeable_ranks=tiktoken.load.load_tiktoken_bpe(path), special_tokens=special)
print(time.perf_counter_ns() - t)
";

/// `Ok` when `python3` imports `tiktoken`; else why not (for a note).
pub fn python_tiktoken() -> Result<(), String> {
    match Command::new("python3")
        .args(["-c", "import tiktoken, tiktoken.load"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(_) => Err("python3 cannot import tiktoken (pip install tiktoken)".into()),
        Err(e) => Err(format!("no python3 ({e})")),
    }
}

/// A temporary directory for the model files, plain rank files and concatenated corpora the
/// children read; removed on drop.
pub struct Workdir(PathBuf);

impl Workdir {
    /// A new directory under the system's temporary directory.
    pub fn new() -> Workdir {
        let dir =
            std::env::temp_dir().join(format!("picobpe-bench-first-use-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        Workdir(dir)
    }

    /// Write `bytes` as `name` in the directory; returns its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }

    /// Write `model` with `Model::write` as `<encoding>.model`; returns its path.
    pub fn write_model(&self, enc: Encoding, model: &picobpe_model::Model) -> PathBuf {
        let path = self.0.join(format!("{}.model", enc.name()));
        model
            .write(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One encoding's load times.
pub struct LoadRow {
    encoding: &'static str,
    /// Size of picobpe's `.model` file.
    model_bytes: u64,
    /// Median ms per [`LOAD_COLUMNS`] entry, or why there is none.
    cells: Vec<Result<f64, String>>,
}

/// Time every load of `enc` `runs` times, each in a fresh process, interleaved (one of each per
/// round). `model`: picobpe's `.model` file; `python`: whether Python `tiktoken` is there.
pub fn measure_loads(
    enc: Encoding,
    vocab: &Vocabulary,
    model: &Path,
    work: &Workdir,
    runs: usize,
    python: &Result<(), String>,
) -> LoadRow {
    let exe = std::env::current_exe().expect("current_exe");
    let ranks = work.write(&format!("{}.tiktoken", enc.name()), &vocab.rank_file);
    let specials_json = serde_json::Value::Object(
        vocab
            .specials
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::from(*v)))
            .collect(),
    )
    .to_string();
    // How to start each load's child (a `Command` is used once), or why there is none.
    let jobs: Vec<Result<Vec<std::ffi::OsString>, String>> = LOAD_COLUMNS
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let Some(&load) = LOAD_ONE.get(i) else {
                python
                    .as_ref()
                    .map_err(|_| "n/a (no Python tiktoken)".to_string())?;
                return Ok(vec![
                    "python3".into(),
                    "-c".into(),
                    PYTHON_LOAD.into(),
                    ranks.clone().into(),
                    format!("{}-local", enc.name()).into(),
                    enc.pattern().reference_regex().into(),
                    specials_json.clone().into(),
                ]);
            };
            if enc == Encoding::Gpt2 && matches!(load, "bpe-openai" | "toktok-rs") {
                return Err("n/a (no gpt2)".into());
            }
            let embedded = [
                "tiktoken-rs-embedded",
                "bpe-openai",
                "tiktoken",
                "toktok-rs",
            ];
            if enc == Encoding::Tekken && embedded.contains(&load) {
                return Err("n/a (no tekken)".into());
            }
            let mut argv = vec![
                exe.clone().into(),
                "--load-one".into(),
                load.into(),
                enc.name().into(),
            ];
            match load {
                "picobpe" => argv.push(model.into()),
                "tiktoken-rs-rank-file" => argv.push(ranks.clone().into()),
                _ => {}
            }
            Ok(argv)
        })
        .collect();
    let mut times: Vec<Result<Vec<f64>, String>> = jobs
        .iter()
        .map(|j| j.as_ref().map(|_| Vec::new()).map_err(Clone::clone))
        .collect();
    for _ in 0..runs {
        for (j, t) in jobs.iter().zip(&mut times) {
            let (Ok(argv), Ok(v)) = (j, t.as_mut()) else {
                continue;
            };
            match run_load(argv) {
                Ok(ms) => v.push(ms),
                Err(e) => {
                    eprintln!("note: {} load: {e}", enc.name());
                    *t = Err("failed (see note)".into());
                }
            }
        }
    }
    LoadRow {
        encoding: enc.name(),
        model_bytes: std::fs::metadata(model).map_or(0, |m| m.len()),
        cells: times
            .into_iter()
            .map(|t| t.map(|mut v| report::median(&mut v)))
            .collect(),
    }
}

/// Run one load child (`argv[0]` with the rest as arguments); its printed nanoseconds as ms.
fn run_load(argv: &[std::ffi::OsString]) -> Result<f64, String> {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .env("TIKTOKEN_CACHE_DIR", "")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", argv[0].to_string_lossy()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match (out.status.success(), text.trim().parse::<u64>()) {
        (true, Ok(ns)) => Ok(ns as f64 / 1e6),
        _ => Err(format!(
            "`{} {}` exited with {} and printed {:?}",
            argv[0].to_string_lossy(),
            argv.get(1..3)
                .unwrap_or_default()
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            out.status,
            text.trim()
        )),
    }
}

impl LoadRow {
    /// The fastest peer's ms over picobpe's, and that peer's name.
    fn ratio(&self) -> Option<(f64, &'static str)> {
        let ours = *self.cells[0].as_ref().ok()?;
        let (best, name) = self.cells[1..]
            .iter()
            .zip(&LOAD_COLUMNS[1..])
            .filter_map(|(c, n)| c.as_ref().ok().map(|&v| (v, *n)))
            .min_by(|a, b| a.0.total_cmp(&b.0))?;
        Some((best / ours, name))
    }

    fn ratio_text(&self) -> String {
        self.ratio()
            .map_or_else(|| "-".into(), |(r, n)| format!("{r:.2}x ({n})"))
    }

    fn cell_text(c: &Result<f64, String>) -> String {
        match c {
            Ok(ms) => format!("{ms:.1}"),
            Err(why) => why.clone(),
        }
    }
}

/// A progress line for one encoding's loads.
pub fn print_load_row(row: &LoadRow) {
    let mut line = format!("{:<12} load ms |", row.encoding);
    for (n, c) in LOAD_COLUMNS.iter().zip(&row.cells) {
        let _ = write!(line, " {n} {} |", LoadRow::cell_text(c));
    }
    println!("{line} fastest peer/picobpe {}", row.ratio_text());
}

/// The Markdown table of load times.
pub fn print_load_markdown(rows: &[LoadRow], runs: usize) {
    println!(
        "Load, ms, median of {runs} runs, each in a fresh process (files in the page cache): \
         picobpe = `load_picobpe` of its `.model` file (written by `Model::write`) + \
         `Tokenizer::new`; tiktoken-rs (rank file) = read the plain rank file + base64 decode + \
         `CoreBPE::new`; the other Rust peers = their embedded vocabulary's constructor \
         (bpe-openai: the first call of its lazy static); tiktoken (Python) = \
         `load_tiktoken_bpe(rank file)` + `tiktoken.Encoding(...)`, interpreter start and import \
         not counted. Last column: fastest peer / picobpe (> 1: \
         picobpe loads faster):\n"
    );
    let mut head = vec!["encoding", "`.model` MB"];
    head.extend(LOAD_COLUMNS);
    head.push("fastest peer / picobpe");
    report::print_head(&head, 1);
    for r in rows {
        let mut cells = vec![
            r.encoding.to_string(),
            format!("{:.1}", r.model_bytes as f64 / 1e6),
        ];
        cells.extend(r.cells.iter().map(LoadRow::cell_text));
        cells.push(r.ratio_text());
        println!("| {} |", cells.join(" | "));
    }
}

/// The CLI's piece-cache lines: the default of `encode --cache-mib` in its `--help` (16,384
/// lines of 64 bytes per MiB), else `CACHE_SLOTS` in `host-trainer/src/cli_encode.rs` (the
/// fixed size before that option); 16,384 with a note if neither can be read.
pub fn cli_cache_lines(root: &Path, cli: Option<&Cli>) -> usize {
    if let Some(mib) = cli.and_then(|c| c.cache_mib) {
        return mib * 16_384;
    }
    let src = root.join("host-trainer/src/cli_encode.rs");
    let found = std::fs::read_to_string(&src)
        .ok()
        .and_then(|s| number_after(&s, "const CACHE_SLOTS: usize =", ';'));
    found.unwrap_or_else(|| {
        eprintln!(
            "note: neither `encode --cache-mib` nor `const CACHE_SLOTS` in {}; assuming 16,384 \
             cache lines",
            src.display()
        );
        16_384
    })
}

/// The integer (digits, `_` and `,` skipped) between `key` and the next `end` in `text`.
fn number_after(text: &str, key: &str, end: char) -> Option<usize> {
    let rest = &text[text.find(key)? + key.len()..];
    let digits: String = rest[..rest.find(end)?]
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// `host-trainer`, the CLI whose whole-process time `--first-use` measures.
pub struct Cli {
    exe: PathBuf,
    /// `encode --format u32le` is offered (else the default decimal text).
    u32le: bool,
    /// The default of `encode --cache-mib`, when it has that option.
    cache_mib: Option<usize>,
}

impl Cli {
    /// The release `host-trainer` beside this binary, else in `$CARGO_TARGET_DIR/release` or
    /// `target/release`; `Err` (for a note) when there is none.
    pub fn find(root: &Path) -> Result<Cli, String> {
        let name = format!("host-trainer{}", std::env::consts::EXE_SUFFIX);
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf))
        {
            dirs.push(dir);
        }
        if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
            dirs.push(root.join(t).join("release"));
        }
        dirs.push(root.join("target/release"));
        let exe = dirs
            .iter()
            .map(|d| d.join(&name))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                format!(
                    "no {name} in {dirs:?}: build it first (cargo build --release -p host-trainer)"
                )
            })?;
        let help = Command::new(&exe)
            .args(["encode", "--help"])
            .output()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let help = String::from_utf8_lossy(&help.stdout);
        let u32le = help.contains("--format") && help.contains("u32le");
        let cache_mib = help
            .find("--cache-mib")
            .and_then(|at| number_after(&help[at..], "[default:", ']'));
        Ok(Cli {
            exe,
            u32le,
            cache_mib,
        })
    }

    /// The command line, for the report (`MODEL` and `FILE` as placeholders).
    pub fn describe(&self, ordinary: bool) -> String {
        format!(
            "host-trainer encode{}{} --model MODEL FILE > /dev/null",
            if ordinary { " --ordinary" } else { "" },
            if self.u32le { " --format u32le" } else { "" }
        )
    }

    fn command(&self, model: &Path, file: &Path, ordinary: bool) -> Command {
        let mut c = Command::new(&self.exe);
        c.arg("encode");
        if ordinary {
            c.arg("--ordinary");
        }
        if self.u32le {
            c.args(["--format", "u32le"]);
        }
        c.arg("--model").arg(model).arg(file).stdin(Stdio::null());
        c
    }

    /// The ids the CLI writes for `file` (untimed; for the exactness check).
    pub fn ids(&self, model: &Path, file: &Path, ordinary: bool) -> Result<Vec<u32>, String> {
        let out = self
            .command(model, file, ordinary)
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.exe.display()))?;
        if !out.status.success() {
            return Err(format!("host-trainer encode exited with {}", out.status));
        }
        if self.u32le {
            if out.stdout.len() % 4 != 0 {
                return Err(format!("u32le output of {} bytes", out.stdout.len()));
            }
            Ok(out
                .stdout
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect())
        } else {
            String::from_utf8_lossy(&out.stdout)
                .split_ascii_whitespace()
                .map(|t| t.parse().map_err(|_| format!("not an id: {t:?}")))
                .collect()
        }
    }

    /// Run the whole process once, output to `/dev/null` (the timed call).
    pub fn run(&self, model: &Path, file: &Path, ordinary: bool) {
        let status = self
            .command(model, file, ordinary)
            .stdout(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.exe.display()));
        assert!(status.success(), "host-trainer encode exited with {status}");
    }
}

#[cfg(test)]
mod tests {
    use super::number_after;

    #[test]
    fn number_after_reads_a_help_default_and_a_const() {
        let help = "--cache-mib <MIB>\n    Piece cache size in MiB\n\n    [default: 16]\n";
        assert_eq!(number_after(help, "[default:", ']'), Some(16));
        let src = "const CACHE_SLOTS: usize = 16_384;";
        assert_eq!(
            number_after(src, "const CACHE_SLOTS: usize =", ';'),
            Some(16_384)
        );
        assert_eq!(number_after(src, "[default:", ']'), None);
    }
}
