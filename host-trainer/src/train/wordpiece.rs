//! `host-trainer train --model-type wordpiece`: count the corpus's words as BERT's normalizer
//! and pre-tokenizer make them (the core's own walk, [`picobpe::WpTokenizer::pre_tokenize`]),
//! learn a vocabulary ([`picobpe_model::wordpiece::WpTrainer`]: `tokenizers`'
//! `WordPieceTrainer`, or the likelihood criterion), and write `tokenizer.model`, `vocab.txt`
//! and `tokenizer.json` (both with BERT's `[CLS] … [SEP]` template when the specials hold
//! them).
//!
//! Choices where `tokenizers` says nothing or does otherwise:
//! - Without `--special-token`, BERT's five (`[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`), as
//!   `BertWordPieceTokenizer` has; the unknown token must be one of them.
//! - Input that is not UTF-8 is refused with its offset (`tokenizers` refuses it too).
//! - Files are read in chunks cut after a space, tab, CR or LF (which end a word whatever
//!   surrounds them) and counted on `--threads` threads; the counts, so the model, do not depend
//!   on the cut or the number of threads.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Instant;

use clap::ValueEnum;
use picobpe_model::wordpiece::{WordCounter, WpScore, WpTrainer};
use picobpe_model::{AnyModel, TemplateData};

use super::error::TrainError;
use super::output::OutputDir;
use super::{input, progress_bar, threads, TrainArgs};

/// BERT's special tokens, the default.
const BERT_SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// The WordPiece options of `train`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WordPieceArgs {
    /// WordPiece: a pair seen fewer times is never merged [default: 0].
    #[arg(long, value_name = "N")]
    pub min_frequency: Option<u64>,
    /// WordPiece: keep only the N most frequent characters [default: all].
    #[arg(long, value_name = "N")]
    pub limit_alphabet: Option<usize>,
    /// WordPiece: the prefix of pieces that continue a word [default: ##].
    #[arg(long, value_name = "TEXT")]
    pub continuing_subword_prefix: Option<String>,
    /// WordPiece: the unknown token, one of the special tokens [default: [UNK]].
    #[arg(long, value_name = "TOK")]
    pub unk_token: Option<String>,
    /// WordPiece: keep case (BertNormalizer `lowercase` off; accents kept unless
    /// --strip-accents true).
    #[arg(long)]
    pub cased: bool,
    /// WordPiece: BertNormalizer `strip_accents` [default: on unless --cased].
    #[arg(long, value_name = "BOOL")]
    pub strip_accents: Option<bool>,
    /// WordPiece: how the next merge is chosen [default: frequency].
    #[arg(long, value_enum, value_name = "SCORE")]
    pub wordpiece_score: Option<ScoreArg>,
}

/// `--wordpiece-score` values.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreArg {
    /// The most frequent pair (`tokenizers`).
    Frequency,
    /// The greatest count(AB) / (count(A) · count(B)) (Google's WordPiece criterion).
    Likelihood,
}

impl WordPieceArgs {
    /// The first WordPiece option given, as spelled on the command line.
    pub fn given(&self) -> Option<&'static str> {
        [
            (self.min_frequency.is_some(), "--min-frequency"),
            (self.limit_alphabet.is_some(), "--limit-alphabet"),
            (
                self.continuing_subword_prefix.is_some(),
                "--continuing-subword-prefix",
            ),
            (self.unk_token.is_some(), "--unk-token"),
            (self.cased, "--cased"),
            (self.strip_accents.is_some(), "--strip-accents"),
            (self.wordpiece_score.is_some(), "--wordpiece-score"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

/// Run `train --model-type wordpiece`.
pub fn train(args: &TrainArgs) -> Result<(), TrainError> {
    let started = Instant::now();
    let not_here = |option| TrainError::OptionNotFor {
        option,
        model_type: "wordpiece",
    };
    if !args.counts.is_empty() {
        return Err(not_here("--counts"));
    }
    if args.pattern.is_some() {
        return Err(not_here("--pattern"));
    }
    let w = &args.wordpiece;
    let specials: Vec<String> = if args.special_tokens.is_empty() {
        BERT_SPECIALS.map(String::from).to_vec()
    } else {
        args.special_tokens.clone()
    };
    super::check_specials_unique(&specials)?;
    let unk = w.unk_token.clone().unwrap_or_else(|| "[UNK]".into());
    if !specials.contains(&unk) {
        return Err(TrainError::UnknownNotSpecial { token: unk });
    }
    if args.vocab_size < specials.len() as u64 {
        return Err(TrainError::WordPieceTooSmall {
            vocab_size: args.vocab_size,
            n_specials: specials.len(),
        });
    }
    let lowercase = !w.cased;
    let strip_accents = w.strip_accents.unwrap_or(lowercase);
    let trainer = WpTrainer {
        vocab_size: usize::try_from(args.vocab_size).unwrap_or(usize::MAX),
        min_frequency: w.min_frequency.unwrap_or(0),
        limit_alphabet: w.limit_alphabet,
        prefix: w
            .continuing_subword_prefix
            .clone()
            .unwrap_or_else(|| "##".into()),
        special_tokens: specials,
        score: match w.wordpiece_score {
            Some(ScoreArg::Likelihood) => WpScore::Likelihood,
            _ => WpScore::Frequency,
        },
    };
    let threads = threads(args.threads)?;
    let out = OutputDir::prepare(&args.out)?;
    let counts = count_words(args, lowercase, strip_accents, threads)?;
    if counts.is_empty() {
        return Err(TrainError::EmptyCorpus);
    }
    let counted = started.elapsed();
    let bar = progress_bar(
        args.quiet,
        trainer.vocab_size as u64,
        "merging",
        "{pos}/{len} entries ({rate}",
    );
    let vocab = trainer.train_with_progress(&counts, |n| bar.set_position(n as u64));
    bar.finish_and_clear();
    let model = trainer
        .bert_model(vocab, &unk, lowercase, strip_accents)
        .map_err(|e| TrainError::Export(e.to_string()))?;
    let export = |e: picobpe_model::wordpiece::ExportError| TrainError::Export(e.to_string());
    let vocab_txt = model.to_vocab_txt().map_err(export)?;
    let json = model.to_tokenizer_json().map_err(export)?;
    out.commit_with(|dir| {
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(TrainError::write(&path))
        };
        write("vocab.txt", &vocab_txt)?;
        write("tokenizer.json", &json)?;
        // With BERT's `[CLS] … [SEP]` template, for `encode --add-special-tokens`.
        let template = TemplateData::bert(&model);
        AnyModel::WordPiece(model.clone())
            .write(dir.join("tokenizer.model"), &template)
            .map_err(TrainError::Model)
    })?;
    let words: u64 = counts.values().sum();
    eprintln!(
        "trained {} WordPiece entries{} from {words} words ({} distinct) with {threads} \
         threads in {:.2} s (count {:.2} s) -> {}",
        model.n_ids(),
        if model.n_ids() < trainer.vocab_size {
            " (stopped early: no pair left to merge)"
        } else {
            ""
        },
        counts.len(),
        started.elapsed().as_secs_f64(),
        counted.as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

/// The words of every input, counted on `threads` threads (chunks cut after ASCII
/// whitespace; see the module docs).
fn count_words(
    args: &TrainArgs,
    lowercase: bool,
    strip_accents: bool,
    threads: usize,
) -> Result<HashMap<String, u64>, TrainError> {
    let total = input::total_size(&args.inputs)?;
    let bar = progress_bar(
        args.quiet,
        total,
        "counting",
        "{bytes}/{total_bytes} ({bytes_per_sec}",
    );
    let (send, receive) = mpsc::sync_channel::<Vec<u8>>(2 * threads);
    let receive = std::sync::Mutex::new(receive);
    let counted = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut counter = WordCounter::new(lowercase, strip_accents);
                    while let Ok(chunk) = receive
                        .lock()
                        .map_err(|_| ())
                        .and_then(|r| r.recv().map_err(|_| ()))
                    {
                        counter.add(&chunk);
                    }
                    counter.counts
                })
            })
            .collect();
        // Cut after the last byte that ends words; the reader checks that chunks are UTF-8.
        let split = |buf: &[u8]| buf.iter().rposition(|&b| ends_words(b)).map(|i| i + 1);
        let read = input::read_inputs(
            &args.inputs,
            split,
            args.chunk_size,
            |n| bar.inc(n),
            |chunk| send.send(chunk).is_ok(),
        );
        drop(send);
        let mut total: HashMap<String, u64> = HashMap::new();
        for w in workers {
            let counts = w
                .join()
                .map_err(|_| TrainError::WorkerPanicked("a WordPiece counting thread".into()))?;
            if total.is_empty() {
                total = counts;
                continue;
            }
            for (word, n) in counts {
                *total.entry(word).or_default() += n;
            }
        }
        read.map(|()| total)
    });
    bar.finish_and_clear();
    counted
}

/// True for the ASCII bytes after which a chunk may be cut: space, tab, CR and LF end the word
/// before them whatever follows. (Not form feed or vertical tab: `clean_text` drops those
/// as control characters, so `a\x0Cb` is one word.)
fn ends_words(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}
