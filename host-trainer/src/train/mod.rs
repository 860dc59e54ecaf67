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
//! Sharded training splits the pipeline after stage 2: `host-trainer count-pieces` runs stages 1
//! and 2 on one shard and writes a [`count_file`]; `merge-counts` sums count files; `train
//! --counts` sums them and runs stages 3 and 4. With shards cut at document boundaries the sum
//! is the whole corpus's table, so the output is byte-identical to `train --input`.
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
mod count_file;
mod error;
mod heap;
mod input;
mod merge;
mod output;
mod sentencepiece;
mod wordpiece;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use picobpe_model::PatternKind;

use count_file::CountFile;
pub use error::TrainError;

/// Chunk size for reading and parallel counting.
const CHUNK_SIZE: usize = 1 << 20;

/// `host-trainer train`: learn a byte-level BPE vocabulary (CS336 `train_bpe` semantics) or a
/// WordPiece one (`tokenizers`' `WordPieceTrainer`).
#[derive(clap::Args, Debug, Clone)]
pub struct TrainArgs {
    /// The kind of model to learn.
    #[arg(long, value_enum, default_value_t = ModelType::BytelevelBpe)]
    pub model_type: ModelType,
    /// Training text (UTF-8). Repeat for several files; each file is a separate document.
    #[arg(
        long = "input",
        value_name = "FILE",
        required_unless_present = "counts"
    )]
    pub inputs: Vec<PathBuf>,
    /// Train from count files (`count-pieces`, `merge-counts`) instead of text: their counts
    /// are summed, and the pattern and special tokens are theirs.
    #[arg(long = "counts", value_name = "FILE", num_args = 1.., conflicts_with = "inputs")]
    pub counts: Vec<PathBuf>,
    /// Vocabulary size N = 256 byte tokens + special tokens + merges.
    #[arg(long, value_name = "N")]
    pub vocab_size: u64,
    /// A special token (e.g. `<|endoftext|>`): the text is split on it and it never takes part
    /// in merges. Repeat for several; they get the last ids, in the order given. WordPiece:
    /// the first ids, in the order given [default: [PAD] [UNK] [CLS] [SEP] [MASK]].
    #[arg(long = "special-token", value_name = "TOK")]
    pub special_tokens: Vec<String>,
    /// WordPiece options (`tokenizers`' `WordPieceTrainer` and `BertNormalizer` names).
    #[command(flatten)]
    pub wordpiece: wordpiece::WordPieceArgs,
    /// SentencePiece options (`spm_train`'s names, dashes for underscores).
    #[command(flatten)]
    pub sentencepiece: sentencepiece::SentencePieceArgs,
    /// Output directory for tokenizer.model, vocab.json and merges.txt (WordPiece:
    /// tokenizer.model, vocab.txt and tokenizer.json).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Counting threads [default: all cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Pre-tokenization pattern [default: gpt2; with --counts: the files'].
    #[arg(long, value_enum)]
    pub pattern: Option<PatternArg>,
    /// No progress bars (the one-line summary is still printed).
    #[arg(long)]
    pub quiet: bool,
    /// Read/count chunk size in bytes (testing and tuning only).
    #[arg(long, hide = true, default_value_t = CHUNK_SIZE)]
    pub chunk_size: usize,
}

/// `host-trainer count-pieces`: the piece counts of one shard of a corpus, for `train
/// --counts` on another machine.
#[derive(clap::Args, Debug, Clone)]
pub struct CountPiecesArgs {
    /// Text of the shard (UTF-8). Repeat for several files; each file is a separate document.
    #[arg(long = "input", value_name = "FILE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// The count file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// A special token; every shard of a corpus needs the same ones in the same order.
    #[arg(long = "special-token", value_name = "TOK")]
    pub special_tokens: Vec<String>,
    /// Pre-tokenization pattern.
    #[arg(long, value_enum, default_value_t = PatternArg::Gpt2)]
    pub pattern: PatternArg,
    /// Counting threads [default: all cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// No progress bar (the one-line summary is still printed).
    #[arg(long)]
    pub quiet: bool,
    /// Read/count chunk size in bytes (testing and tuning only).
    #[arg(long, hide = true, default_value_t = CHUNK_SIZE)]
    pub chunk_size: usize,
}

/// `host-trainer merge-counts`: sum count files into one (a reduce step).
#[derive(clap::Args, Debug, Clone)]
pub struct MergeCountsArgs {
    /// The count file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The count files to sum; they must agree on the pattern and special tokens.
    #[arg(value_name = "COUNTS", required = true)]
    pub counts: Vec<PathBuf>,
}

/// `--model-type` values.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    /// Byte-level BPE (GPT-2 style; CS336 semantics).
    BytelevelBpe,
    /// WordPiece (BERT style; `tokenizers`' `WordPieceTrainer`).
    Wordpiece,
    /// SentencePiece BPE (`spm_train --model_type bpe`).
    SentencepieceBpe,
    /// SentencePiece Unigram (`spm_train --model_type unigram`).
    Unigram,
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
    /// Llama 3.
    Llama3,
    /// Qwen2 and Qwen2.5.
    Qwen2,
}

impl From<PatternArg> for PatternKind {
    fn from(p: PatternArg) -> Self {
        match p {
            PatternArg::Gpt2 => PatternKind::Gpt2,
            PatternArg::Cl100k => PatternKind::Cl100k,
            PatternArg::O200k => PatternKind::O200k,
            PatternArg::Llama3 => PatternKind::Llama3,
            PatternArg::Qwen2 => PatternKind::Qwen2,
        }
    }
}

/// Run `merge-counts`.
pub fn merge_counts(args: MergeCountsArgs) -> Result<(), TrainError> {
    let started = Instant::now();
    let total = count_file::read_all(&args.counts, None, None)?;
    total.write(&args.out)?;
    eprintln!(
        "merged {} in {:.2} s -> {}",
        source(&total, None, args.counts.len()),
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

/// Where counts came from, for a summary line: `5.0 MB (9 pieces, 8 distinct) with 2 threads`
/// when counted by `threads` threads, `2 count files (5.0 MB of text, 9 pieces, 8 distinct)`
/// when read from `n_files` count files.
fn source(total: &CountFile, threads: Option<usize>, n_files: usize) -> String {
    let mb = total.n_bytes as f64 / 1e6;
    let (n_pieces, n_distinct) = (total.n_pieces, total.pieces.len());
    match threads {
        Some(threads) => {
            format!("{mb:.1} MB ({n_pieces} pieces, {n_distinct} distinct) with {threads} threads")
        }
        None => format!(
            "{n_files} count file{} ({mb:.1} MB of text, {n_pieces} pieces, {n_distinct} distinct)",
            if n_files == 1 { "" } else { "s" }
        ),
    }
}

/// Run `count-pieces`.
pub fn count_pieces(args: CountPiecesArgs) -> Result<(), TrainError> {
    let started = Instant::now();
    check_specials(&args.special_tokens)?;
    let threads = threads(args.threads)?;
    let file = count_text(
        &args.inputs,
        &args.special_tokens,
        PatternKind::from(args.pattern),
        threads,
        args.chunk_size,
        args.quiet,
    )?;
    file.write(&args.out)?;
    let size = std::fs::metadata(&args.out).map_or(0, |m| m.len());
    eprintln!(
        "counted {} in {:.2} s -> {} ({size} bytes)",
        source(&file, Some(threads), 0),
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

/// `--threads`, or all cores.
fn threads(arg: Option<usize>) -> Result<usize, TrainError> {
    match arg {
        Some(0) => Err(TrainError::ZeroThreads),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// The number of merges for `vocab_size` ids with `n_specials` special tokens.
fn n_merges(vocab_size: u64, n_specials: usize) -> Result<usize, TrainError> {
    let minimum = 256 + n_specials as u64;
    if vocab_size < minimum {
        return Err(TrainError::VocabTooSmall {
            vocab_size,
            minimum,
        });
    }
    Ok(usize::try_from(vocab_size - minimum).unwrap_or(usize::MAX))
}

/// Count the pieces of `inputs` (stages 1 and 2), with a progress bar unless `quiet`.
fn count_text(
    inputs: &[PathBuf],
    special_tokens: &[String],
    pattern: PatternKind,
    threads: usize,
    chunk_size: usize,
    quiet: bool,
) -> Result<CountFile, TrainError> {
    let total_bytes = input::total_size(inputs)?;
    let splitter = input::Splitter::new(special_tokens, pattern.into());
    let bar = progress_bar(
        quiet,
        total_bytes,
        "counting",
        "{bytes}/{total_bytes} ({bytes_per_sec}",
    );
    let counts = count::count_inputs(inputs, &splitter, threads, chunk_size, |n| bar.inc(n))?;
    bar.finish_and_clear();
    Ok(CountFile::from_counts(
        counts,
        pattern,
        special_tokens,
        total_bytes,
    ))
}

/// Check the special tokens: non-empty and unique.
fn check_specials_unique(specials: &[String]) -> Result<(), TrainError> {
    for (i, s) in specials.iter().enumerate() {
        if s.is_empty() {
            return Err(TrainError::EmptySpecial);
        }
        if specials[..i].contains(s) {
            return Err(TrainError::DuplicateSpecial { text: s.clone() });
        }
    }
    Ok(())
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
        if byte_chars.iter().any(|&c| s.chars().eq([c])) {
            return Err(TrainError::SpecialKeyCollision { text: s.clone() });
        }
        if specials[..i].contains(s) {
            return Err(TrainError::DuplicateSpecial { text: s.clone() });
        }
    }
    Ok(())
}

/// Run `train`.
pub fn train(args: TrainArgs) -> Result<(), TrainError> {
    if matches!(
        args.model_type,
        ModelType::SentencepieceBpe | ModelType::Unigram
    ) {
        return sentencepiece::train(&args);
    }
    if let Some(option) = args.sentencepiece.given() {
        return Err(TrainError::OptionNotFor {
            option,
            model_type: if args.model_type == ModelType::Wordpiece {
                "wordpiece"
            } else {
                "bytelevel-bpe"
            },
        });
    }
    if args.model_type == ModelType::Wordpiece {
        return wordpiece::train(&args);
    }
    if let Some(option) = args.wordpiece.given() {
        return Err(TrainError::OptionNotFor {
            option,
            model_type: "bytelevel-bpe",
        });
    }
    let started = Instant::now();
    check_specials(&args.special_tokens)?;
    let (total, out, threads, n_merges) = if args.counts.is_empty() {
        let n_merges = n_merges(args.vocab_size, args.special_tokens.len())?;
        let threads = threads(args.threads)?;
        let out = output::OutputDir::prepare(&args.out)?;
        let total = count_text(
            &args.inputs,
            &args.special_tokens,
            PatternKind::from(args.pattern.unwrap_or(PatternArg::Gpt2)),
            threads,
            args.chunk_size,
            args.quiet,
        )?;
        (total, out, Some(threads), n_merges)
    } else {
        let given_specials = (!args.special_tokens.is_empty()).then_some(&args.special_tokens[..]);
        let total = count_file::read_all(
            &args.counts,
            args.pattern.map(PatternKind::from),
            given_specials,
        )?;
        check_specials(&total.specials)?;
        let n_merges = n_merges(args.vocab_size, total.specials.len())?;
        (
            total,
            output::OutputDir::prepare(&args.out)?,
            None,
            n_merges,
        )
    };
    if total.pieces.is_empty() {
        return Err(TrainError::EmptyCorpus);
    }
    let counted = started.elapsed();
    let source = source(&total, threads, args.counts.len());

    let bar = progress_bar(
        args.quiet,
        n_merges as u64,
        "merging",
        "{pos}/{len} merges ({rate}",
    );
    let merges = merge::learn_merges(total.pieces, n_merges, |done| bar.set_position(done as u64))?;
    bar.finish_and_clear();
    let merged = started.elapsed();

    let model = output::to_model(total.pattern, &merges, &total.specials)?;
    out.commit(&model)?;
    let secs = |d: Duration| d.as_secs_f64();
    eprintln!(
        "trained {} tokens (256 bytes + {} merges + {} specials{}) from {source} \
         in {:.2} s ({} {:.2} s, merge {:.2} s) -> {}",
        model.n_ids(),
        merges.len(),
        model.specials.len(),
        if merges.len() < n_merges {
            "; stopped early: no pair left"
        } else {
            ""
        },
        secs(started.elapsed()),
        if threads.is_some() { "count" } else { "read" },
        secs(counted),
        secs(merged - counted),
        args.out.display()
    );
    Ok(())
}

/// A progress bar with rate and ETA on stderr, or a hidden one when `quiet` or stderr is not
/// a terminal.
fn progress_bar(quiet: bool, len: u64, label: &str, counter: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
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
