//! `host-trainer train`: byte-level BPE training with the semantics of Stanford CS336
//! assignment 1 (`train_bpe`), fast enough for real corpora.
//!
//! Pipeline, one module per stage:
//! 1. [`input`]: stream each input file in ~1 MiB chunks, validated as UTF-8 and cut only where
//!    the cut cannot change special-token matching or pre-tokenization.
//! 2. [`count`]: worker threads split chunks on the special tokens (longest first), pre-tokenize
//!    with the core's hand-rolled splitter (`picobpe::pretok`, the same code the encoder runs)
//!    and count distinct pieces.
//! 3. [`merge`]: learn merges incrementally (pair index + lazy max-heap), most frequent pair
//!    first, ties to the lexicographically greatest `(left bytes, right bytes)`.
//! 4. [`output`]: write `tokenizer.model`, `vocab.json`, `merges.txt` into a temporary directory
//!    and rename it to `--out`.
//!
//! The vocabulary size `N` counts 256 byte tokens + merges + special tokens; training stops
//! early when no pair is left. The result is identical for any `--threads`.
//!
//! Choices where CS336 says nothing:
//! - Id layout (rank == id): bytes `0..=255` in byte order, then merges in order, then the
//!   special tokens in the order given. (The CS336 reference vocabulary puts the special first;
//!   the set of byte strings is the same.)
//! - Several `--input` files are separate documents: no piece spans two files.
//! - `--pattern cl100k|o200k` trains with those pre-tokenizers; everything else is unchanged.
//! - A corpus without ordinary text (empty, or only special tokens) is an error; a special
//!   token must be longer than one byte and must not be spelled like another `vocab.json` key.
//! - The one-line summary goes to stderr even with `--quiet`, which only hides progress bars.

mod count;
mod error;
mod heap;
mod input;
mod merge;
mod output;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use aho_corasick::{AhoCorasick, MatchKind};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use picobpe_model::PatternKind;

pub use error::TrainError;

/// Chunk size for reading and parallel counting.
const CHUNK_SIZE: usize = 1 << 20;

/// `host-trainer train`: learn a byte-level BPE vocabulary (CS336 `train_bpe` semantics).
#[derive(clap::Args, Debug, Clone)]
pub struct TrainArgs {
    /// Training text (UTF-8). Repeat for several files; each file is a separate document.
    #[arg(long = "input", value_name = "FILE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Vocabulary size N = 256 byte tokens + special tokens + merges.
    #[arg(long, value_name = "N")]
    pub vocab_size: u64,
    /// A special token (e.g. `<|endoftext|>`): the text is split on it and it never takes part
    /// in merges. Repeat for several; they get the last ids, in the order given.
    #[arg(long = "special-token", value_name = "TOK")]
    pub special_tokens: Vec<String>,
    /// Output directory for tokenizer.model, vocab.json and merges.txt.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Counting threads [default: all cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Pre-tokenization pattern.
    #[arg(long, value_enum, default_value_t = PatternArg::Gpt2)]
    pub pattern: PatternArg,
    /// No progress bars (the one-line summary is still printed).
    #[arg(long)]
    pub quiet: bool,
    /// Read/count chunk size in bytes (testing and tuning only).
    #[arg(long, hide = true, default_value_t = CHUNK_SIZE)]
    pub chunk_size: usize,
}

/// `--pattern` values.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternArg {
    /// GPT-2 / r50k.
    Gpt2,
    /// cl100k_base (GPT-4).
    Cl100k,
    /// o200k_base (GPT-4o).
    O200k,
}

impl From<PatternArg> for PatternKind {
    fn from(p: PatternArg) -> Self {
        match p {
            PatternArg::Gpt2 => PatternKind::Gpt2,
            PatternArg::Cl100k => PatternKind::Cl100k,
            PatternArg::O200k => PatternKind::O200k,
        }
    }
}

/// Run `train`; the error is the message for stderr.
pub fn run(args: TrainArgs) -> Result<(), String> {
    train(&args).map_err(|e| e.to_string())
}

/// Check the special tokens: non-empty, unique, not a single byte, and not spelled like a
/// byte token in `vocab.json` (longer collisions can only be found after training).
fn check_specials(specials: &[String]) -> Result<(), TrainError> {
    let byte_chars = picobpe_model::byte_unicode::byte_to_char();
    for (i, s) in specials.iter().enumerate() {
        if s.is_empty() {
            return Err(TrainError::EmptySpecial);
        }
        if s.len() == 1 {
            return Err(TrainError::SpecialIsByte { text: s.clone() });
        }
        let mut chars = s.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if byte_chars.contains(&c) {
                return Err(TrainError::SpecialKeyCollision { text: s.clone() });
            }
        }
        if specials[..i].contains(s) {
            return Err(TrainError::DuplicateSpecial { text: s.clone() });
        }
    }
    Ok(())
}

/// The whole command, with a typed error.
fn train(args: &TrainArgs) -> Result<(), TrainError> {
    let started = Instant::now();
    check_specials(&args.special_tokens)?;
    let minimum = 256 + args.special_tokens.len() as u64;
    if args.vocab_size < minimum {
        return Err(TrainError::VocabTooSmall {
            vocab_size: args.vocab_size,
            minimum,
        });
    }
    let n_merges = usize::try_from(args.vocab_size - minimum).unwrap_or(usize::MAX);
    let threads = match args.threads {
        Some(0) => return Err(TrainError::ZeroThreads),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let total_bytes = input::total_size(&args.inputs)?;
    let out = output::OutputDir::prepare(&args.out)?;

    let specials = if args.special_tokens.is_empty() {
        None
    } else {
        Some(
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&args.special_tokens)
                .expect("a few literal strings always build"),
        )
    };
    let pattern = PatternKind::from(args.pattern);
    let config = count::CountConfig {
        specials: specials.as_ref(),
        max_special_len: args
            .special_tokens
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(0),
        pattern: pattern.into(),
        threads,
        chunk_size: args.chunk_size.max(1),
    };
    let show = !args.quiet && std::io::stderr().is_terminal();

    let bar = progress_bar(
        show,
        total_bytes,
        "counting",
        "{bytes}/{total_bytes} ({bytes_per_sec}",
    );
    let counts = count::count_inputs(&args.inputs, &config, |n| bar.inc(n))?;
    bar.finish_and_clear();
    if counts.distinct() == 0 {
        return Err(TrainError::EmptyCorpus);
    }
    let counted = started.elapsed();
    let n_pieces = counts.n_pieces;
    let n_distinct = counts.distinct();

    let bar = progress_bar(
        show,
        n_merges as u64,
        "merging",
        "{pos}/{len} merges ({rate}",
    );
    let merges = merge::learn_merges(counts.into_pieces(), n_merges, |done| {
        bar.set_position(done as u64)
    })
    .map_err(|_| TrainError::TooManySymbols)?;
    bar.finish_and_clear();
    let merged = started.elapsed();

    let trained = output::Trained {
        pattern,
        merges,
        specials: args.special_tokens.clone(),
    };
    out.commit(&trained)?;
    let secs = |d: Duration| d.as_secs_f64();
    eprintln!(
        "trained {} tokens (256 bytes + {} merges + {} specials{}) from {:.1} MB \
         ({} pieces, {} distinct) with {} threads in {:.2} s (count {:.2} s, merge {:.2} s) \
         -> {}",
        trained.vocab_len(),
        trained.merges.len(),
        trained.specials.len(),
        if trained.merges.len() < n_merges {
            "; stopped early: no pair left"
        } else {
            ""
        },
        total_bytes as f64 / 1e6,
        n_pieces,
        n_distinct,
        threads,
        secs(started.elapsed()),
        secs(counted),
        secs(merged - counted),
        args.out.display()
    );
    Ok(())
}

/// A progress bar with rate and ETA on stderr, or a hidden one.
fn progress_bar(show: bool, len: u64, label: &str, counter: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    let template = format!("{label:>8} [{{bar:40}}] {counter}, ETA {{eta}})");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        let style = style.with_key(
            "rate",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", state.per_sec());
            },
        );
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
