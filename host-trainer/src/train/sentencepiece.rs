//! `host-trainer train --model-type sentencepiece-bpe|unigram`: `spm_train --model_type
//! bpe|unigram` under its option names (dashes for underscores) and defaults, to the same
//! pieces in the same order with the same scores
//! ([`picobpe_model::sentencepiece::SpTrainer`]); writes `sentencepiece.model` (which
//! `sentencepiece` loads) and picobpe's `tokenizer.model`.
//!
//! Choices and limits:
//! - Input is read as bytes, one sentence per `\n`-ended line, as `spm_train` reads it;
//!   bytes that are not UTF-8 become U+FFFD, one per byte, in the normalizer.
//! - `--normalization-rule-name` takes `identity`, `nmt_nfkc` (the default) and `nmt_nfkc_cf`,
//!   with the character maps `sentencepiece` 0.2.3 builds in (carried in the binary); the
//!   other rules (`nfkc`, TSV rule files) are not offered.
//! - `--num-threads` (or `--threads`; all cores by default) reads and counts the corpus; a
//!   BPE model does not depend on it. A Unigram model does, as `spm_train`'s does (its EM
//!   sums per-thread `f32` counts): `--num-threads` (16 unless given, `spm_train`'s default)
//!   sets how sentences are dealt, whatever the number of threads that run.
//! - `--input-sentence-size N` takes the first N sentences with `--shuffle-input-sentence
//!   false`; `spm_train`'s random sample (Abseil's `BitGen`) is not replayed, so the default
//!   shuffle is refused with the option to use. `--treat-whitespace-as-suffix` is refused (the
//!   core does not encode such models).

use std::path::PathBuf;
use std::time::Instant;

use clap::ValueEnum;
use picobpe_model::sentencepiece::{SpModelType, SpNormalization, SpProgress, SpTrainer};
use picobpe_model::{AnyModel, TemplateData};

use super::error::TrainError;
use super::output::OutputDir;
use super::{progress_bar, TrainArgs};

/// `spm_train`'s options for BPE, under its names.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SentencePieceArgs {
    /// SentencePiece: share of character occurrences the alphabet covers [default: 0.9995].
    #[arg(long, value_name = "F")]
    pub character_coverage: Option<f32>,
    /// SentencePiece: 256 byte pieces for characters outside the vocabulary [default: false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub byte_fallback: Option<bool>,
    /// SentencePiece: every digit is a piece of its own [default: false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub split_digits: Option<bool>,
    /// SentencePiece: the most characters in a piece [default: 16].
    #[arg(long, value_name = "N")]
    pub max_sentencepiece_length: Option<usize>,
    /// SentencePiece: lines longer than this many bytes are skipped [default: 4192].
    #[arg(long, value_name = "N")]
    pub max_sentence_length: Option<usize>,
    /// SentencePiece: pieces do not cross a space [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub split_by_whitespace: Option<bool>,
    /// SentencePiece: a piece holds one Unicode script [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub split_by_unicode_script: Option<bool>,
    /// SentencePiece: digits do not join other characters [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub split_by_number: Option<bool>,
    /// SentencePiece: `▁` ends pieces instead of starting them (not supported yet).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub treat_whitespace_as_suffix: Option<bool>,
    /// SentencePiece: a run of spaces may be a piece [default: false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub allow_whitespace_only_pieces: Option<bool>,
    /// SentencePiece: pieces matched whole in the text (comma-separated, repeatable).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub user_defined_symbols: Vec<String>,
    /// SentencePiece: pieces never produced from text (comma-separated, repeatable).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub control_symbols: Vec<String>,
    /// SentencePiece: id of `<unk>` [default: 0].
    #[arg(long, value_name = "ID", allow_negative_numbers = true)]
    pub unk_id: Option<i32>,
    /// SentencePiece: id of `<s>`, -1 for none [default: 1].
    #[arg(long, value_name = "ID", allow_negative_numbers = true)]
    pub bos_id: Option<i32>,
    /// SentencePiece: id of `</s>`, -1 for none [default: 2].
    #[arg(long, value_name = "ID", allow_negative_numbers = true)]
    pub eos_id: Option<i32>,
    /// SentencePiece: id of `<pad>`, -1 for none [default: -1].
    #[arg(long, value_name = "ID", allow_negative_numbers = true)]
    pub pad_id: Option<i32>,
    /// SentencePiece: normalization rule [default: nmt_nfkc].
    #[arg(long, value_enum, value_name = "RULE")]
    pub normalization_rule_name: Option<RuleArg>,
    /// SentencePiece: a `▁` before each sentence [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub add_dummy_prefix: Option<bool>,
    /// SentencePiece: drop leading, trailing and repeated spaces [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub remove_extra_whitespaces: Option<bool>,
    /// SentencePiece: train on this many sentences, the first ones with
    /// --shuffle-input-sentence false (random sampling is not supported) [default: 0, all].
    #[arg(long, value_name = "N")]
    pub input_sentence_size: Option<u64>,
    /// SentencePiece: sample --input-sentence-size sentences at random [default: true; only
    /// false is supported].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub shuffle_input_sentence: Option<bool>,
    /// SentencePiece: threads reading the corpus (as --threads); for Unigram also how the EM
    /// deals sentences, which the model depends on as spm_train's does [default: 16].
    #[arg(long, value_name = "N")]
    pub num_threads: Option<usize>,
    /// Unigram: the most substrings kept as seed pieces [default: 1000000].
    #[arg(long, value_name = "N")]
    pub seed_sentencepiece_size: Option<usize>,
    /// Unigram: the share of pieces each pruning round keeps [default: 0.75].
    #[arg(long, value_name = "F")]
    pub shrinking_factor: Option<f32>,
    /// Unigram: EM steps between prunings [default: 2].
    #[arg(long, value_name = "N")]
    pub num_sub_iterations: Option<usize>,
}

/// `sentencepiece` 0.2.3's `precompiled_charsmap` of `nmt_nfkc`, gzipped
/// (`tests/scripts/gen_spm_charsmaps.py` takes it from the library; Apache-2.0).
const NMT_NFKC: &[u8] = include_bytes!("../../data/nmt_nfkc.charsmap.gz");
/// The same for `nmt_nfkc_cf`.
const NMT_NFKC_CF: &[u8] = include_bytes!("../../data/nmt_nfkc_cf.charsmap.gz");

/// The rule `name` with the gzipped character map `gz`.
fn builtin_rule(name: &str, gz: &[u8]) -> Result<SpNormalization, TrainError> {
    use std::io::Read;
    let mut charsmap = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut charsmap)
        .map_err(|e| TrainError::Unsupported(format!("the built-in {name} map: {e}")))?;
    Ok(SpNormalization::Rule {
        name: name.to_string(),
        charsmap,
    })
}

/// `--normalization-rule-name` values.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum RuleArg {
    /// No character map.
    Identity,
    /// NFKC with `sentencepiece`'s NMT additions (the default).
    #[value(name = "nmt_nfkc", alias = "nmt-nfkc")]
    Nmt_nfkc,
    /// `nmt_nfkc` with case folding.
    #[value(name = "nmt_nfkc_cf", alias = "nmt-nfkc-cf")]
    Nmt_nfkc_cf,
}

impl SentencePieceArgs {
    /// The first SentencePiece option given, as spelled on the command line.
    pub fn given(&self) -> Option<&'static str> {
        [
            (self.character_coverage.is_some(), "--character-coverage"),
            (self.byte_fallback.is_some(), "--byte-fallback"),
            (self.split_digits.is_some(), "--split-digits"),
            (
                self.max_sentencepiece_length.is_some(),
                "--max-sentencepiece-length",
            ),
            (self.max_sentence_length.is_some(), "--max-sentence-length"),
            (self.split_by_whitespace.is_some(), "--split-by-whitespace"),
            (
                self.split_by_unicode_script.is_some(),
                "--split-by-unicode-script",
            ),
            (self.split_by_number.is_some(), "--split-by-number"),
            (
                self.treat_whitespace_as_suffix.is_some(),
                "--treat-whitespace-as-suffix",
            ),
            (
                self.allow_whitespace_only_pieces.is_some(),
                "--allow-whitespace-only-pieces",
            ),
            (
                !self.user_defined_symbols.is_empty(),
                "--user-defined-symbols",
            ),
            (!self.control_symbols.is_empty(), "--control-symbols"),
            (self.unk_id.is_some(), "--unk-id"),
            (self.bos_id.is_some(), "--bos-id"),
            (self.eos_id.is_some(), "--eos-id"),
            (self.pad_id.is_some(), "--pad-id"),
            (
                self.normalization_rule_name.is_some(),
                "--normalization-rule-name",
            ),
            (self.add_dummy_prefix.is_some(), "--add-dummy-prefix"),
            (
                self.remove_extra_whitespaces.is_some(),
                "--remove-extra-whitespaces",
            ),
            (self.input_sentence_size.is_some(), "--input-sentence-size"),
            (
                self.shuffle_input_sentence.is_some(),
                "--shuffle-input-sentence",
            ),
            (self.num_threads.is_some(), "--num-threads"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
        .or_else(|| self.unigram_only())
    }

    /// The Unigram-only option given, if any.
    fn unigram_only(&self) -> Option<&'static str> {
        [
            (
                self.seed_sentencepiece_size.is_some(),
                "--seed-sentencepiece-size",
            ),
            (self.shrinking_factor.is_some(), "--shrinking-factor"),
            (self.num_sub_iterations.is_some(), "--num-sub-iterations"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    /// The trainer these options describe, for `vocab_size` pieces of `model_type`.
    fn trainer(&self, vocab_size: u64, model_type: SpModelType) -> Result<SpTrainer, TrainError> {
        let unsupported = |what: &str| Err(TrainError::Unsupported(what.to_string()));
        let normalization = match self.normalization_rule_name.unwrap_or(RuleArg::Nmt_nfkc) {
            RuleArg::Identity => SpNormalization::Identity,
            RuleArg::Nmt_nfkc => builtin_rule("nmt_nfkc", NMT_NFKC)?,
            RuleArg::Nmt_nfkc_cf => builtin_rule("nmt_nfkc_cf", NMT_NFKC_CF)?,
        };
        if self.num_threads.is_some_and(|n| n > 1024) {
            return Err(TrainError::SentencePiece(
                "--num-threads must be between 1 and 1024 (as in spm_train)".into(),
            ));
        }
        if self.treat_whitespace_as_suffix == Some(true) {
            return unsupported("--treat-whitespace-as-suffix true is not supported");
        }
        let d = SpTrainer::default();
        Ok(SpTrainer {
            vocab_size: usize::try_from(vocab_size).unwrap_or(usize::MAX),
            character_coverage: self.character_coverage.unwrap_or(d.character_coverage),
            byte_fallback: self.byte_fallback.unwrap_or(d.byte_fallback),
            split_digits: self.split_digits.unwrap_or(d.split_digits),
            max_sentencepiece_length: self
                .max_sentencepiece_length
                .unwrap_or(d.max_sentencepiece_length),
            max_sentence_length: self.max_sentence_length.unwrap_or(d.max_sentence_length),
            split_by_whitespace: self.split_by_whitespace.unwrap_or(d.split_by_whitespace),
            split_by_unicode_script: self
                .split_by_unicode_script
                .unwrap_or(d.split_by_unicode_script),
            split_by_number: self.split_by_number.unwrap_or(d.split_by_number),
            allow_whitespace_only_pieces: self
                .allow_whitespace_only_pieces
                .unwrap_or(d.allow_whitespace_only_pieces),
            user_defined_symbols: self.user_defined_symbols.clone(),
            control_symbols: self.control_symbols.clone(),
            unk_id: self.unk_id.unwrap_or(d.unk_id),
            bos_id: self.bos_id.unwrap_or(d.bos_id),
            eos_id: self.eos_id.unwrap_or(d.eos_id),
            pad_id: self.pad_id.unwrap_or(d.pad_id),
            normalization,
            add_dummy_prefix: self.add_dummy_prefix.unwrap_or(d.add_dummy_prefix),
            remove_extra_whitespaces: self
                .remove_extra_whitespaces
                .unwrap_or(d.remove_extra_whitespaces),
            input_sentence_size: self.input_sentence_size.unwrap_or(0),
            shuffle_input_sentence: self
                .shuffle_input_sentence
                .unwrap_or(d.shuffle_input_sentence),
            model_type,
            seed_sentencepiece_size: self
                .seed_sentencepiece_size
                .unwrap_or(d.seed_sentencepiece_size),
            shrinking_factor: self.shrinking_factor.unwrap_or(d.shrinking_factor),
            num_sub_iterations: self.num_sub_iterations.unwrap_or(d.num_sub_iterations),
            num_threads: self.num_threads.unwrap_or(d.num_threads),
            ..d
        })
    }
}

/// Run `train --model-type sentencepiece-bpe` or `unigram`.
pub fn train(args: &TrainArgs) -> Result<(), TrainError> {
    let started = Instant::now();
    let (model_type, type_name, kind) = match args.model_type {
        super::ModelType::Unigram => (SpModelType::Unigram, "unigram", "Unigram"),
        _ => (SpModelType::Bpe, "sentencepiece-bpe", "BPE"),
    };
    let not_here = |option| TrainError::OptionNotFor {
        option,
        model_type: type_name,
    };
    if model_type == SpModelType::Bpe {
        if let Some(option) = args.sentencepiece.unigram_only() {
            return Err(not_here(option));
        }
    }
    if !args.counts.is_empty() {
        return Err(not_here("--counts"));
    }
    if args.pattern.is_some() {
        return Err(not_here("--pattern"));
    }
    if !args.special_tokens.is_empty() {
        return Err(not_here(
            "--special-token (use --user-defined-symbols or --control-symbols)",
        ));
    }
    if let Some(option) = args.wordpiece.given() {
        return Err(not_here(option));
    }
    let trainer = args.sentencepiece.trainer(args.vocab_size, model_type)?;
    let out = OutputDir::prepare(&args.out)?;
    super::input::total_size(&args.inputs)?;
    let mut text = Vec::new();
    for path in &args.inputs {
        let bytes = std::fs::read(path).map_err(|source| TrainError::Read {
            path: path.clone(),
            source,
        })?;
        text.push(bytes);
    }
    let threads = match args.sentencepiece.num_threads {
        Some(n) => super::threads(Some(n))?,
        None => super::threads(args.threads)?,
    };
    let slices: Vec<&[u8]> = text.iter().map(Vec::as_slice).collect();
    let names: Vec<String> = args
        .inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let bar = match model_type {
        SpModelType::Bpe => progress_bar(args.quiet, 0, "merging", "{pos}/{len} pieces ({rate}"),
        SpModelType::Unigram => progress_bar(args.quiet, 0, "pruning", "({pos} pieces left"),
    };
    let trained = trainer
        .train(&slices, threads, &names, |p| match p {
            SpProgress::Sentences(_) => {}
            SpProgress::MergesTotal(n) => bar.set_length(n as u64),
            SpProgress::Merges(n) | SpProgress::Seeds(n) | SpProgress::Pruned(n) => {
                bar.set_position(n as u64)
            }
        })
        .map_err(|e| TrainError::SentencePiece(e.to_string()))?;
    bar.finish_and_clear();
    drop(text);
    out.commit_with(|dir| {
        let path: PathBuf = dir.join("sentencepiece.model");
        std::fs::write(&path, &trained.model_proto).map_err(TrainError::write(&path))?;
        let template = TemplateData::from_model_proto(&trained.model_proto)
            .map_err(|e| TrainError::Export(e.to_string()))?;
        AnyModel::SentencePiece(trained.model.clone())
            .write(dir.join("tokenizer.model"), &template)
            .map_err(TrainError::Model)?;
        match trained.model.to_tokenizer_json() {
            Ok(json) => {
                let path = dir.join("tokenizer.json");
                std::fs::write(&path, json).map_err(TrainError::write(&path))
            }
            Err(why) => {
                eprintln!("note: no tokenizer.json: {why}");
                Ok(())
            }
        }
    })?;
    eprintln!(
        "trained {} SentencePiece {kind} pieces in {:.2} s -> {}",
        trained.model.n_ids(),
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}
