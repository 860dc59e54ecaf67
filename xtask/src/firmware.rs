//! `cargo xtask firmware-run [--machine lm3s6965evb|mps2-an385] [--model NAME|FILE]
//! [--model-type bytelevel-bpe|wordpiece|sentencepiece-bpe|unigram]`: prepare (train or import) a model,
//! bake it into the firmware, build it and run it under QEMU.
//!
//! Also the shared plumbing of the other firmware commands (`firmware-test`, `footprint`):
//! installing the missing tools, the configurations (machine + model) and their option parsing,
//! preparing the models in `firmware-example/target/models/`, building the firmware with cargo
//! and running an ELF under QEMU with a timeout.
//!
//! Built-in models ([`Builtin`]): `small` (lm3s6965evb) is a small vocabulary trained by
//! `host-trainer train` on the sample in `firmware-example/sample/`; `gpt2` and `cl100k`
//! (mps2-an385) are imported by `host-trainer import` from the tiktoken rank files in
//! `tests/fixtures/models/`; `llama3-8k` (mps2-an385) is a byte-level BPE model with the
//! Llama 3 pattern, imported by `host-trainer import --tokenizer-json` from
//! `tests/fixtures/hf_bpe/llama3-8k/tokenizer.json`, and `deepseek-8k` (mps2-an385) likewise from
//! `tests/fixtures/hf_compiled/deepseek-8k/tokenizer.json` (the same vocabulary with DeepSeek
//! V3's pre-tokenizer: the compiled-pattern configuration); `sp4096` (both machines) and `mistral`
//! (mps2-an385, the published Mistral 7B v0.1 tokenizer) are SentencePiece BPE models imported
//! by `host-trainer import --sentencepiece` from `tests/fixtures/sentencepiece/models/`;
//! `ug8000` (mps2-an385) is a SentencePiece Unigram model (T5-like: no byte fallback),
//! imported the same way from `tests/fixtures/unigram/models/ug8000.model`; `sp-nfkc`
//! (mps2-an385) is a SentencePiece BPE model with the `nmt_nfkc` normalizer (its character
//! map baked with the tables), imported from `tests/fixtures/sp_norm/models/nfkc-bpe.model`;
//! `bert-cased-8k` (lm3s6965evb) and `minilm` (mps2-an385, the published all-MiniLM-L6-v2
//! tokenizer) are WordPiece (BERT) models imported by `host-trainer import --tokenizer-json`
//! from `tests/fixtures/wordpiece/`. The path reaches the firmware's build script through
//! `PICOBPE_MODEL`; `--model FILE` (or `PICOBPE_MODEL` in the environment) bakes any other
//! model instead (a SentencePiece or WordPiece one too: the firmware follows the kind of the
//! model it bakes).

pub mod vectors;

use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use vectors::{SpEncoder, SpFixture};

/// Vocabulary size of the WordPiece model trained for the lm3s6965evb.
const WP_TRAINED_VOCAB: &str = "2000";
/// Pieces of the `sp-trained` model (llama2.c's recipe on the bundled sample), and of the
/// `ug-trained` one.
const SP_TRAINED_VOCAB: &str = "2000";

/// Vocabulary size of the small model trained for the lm3s6965evb.
const SMALL_VOCAB: &str = "4096";
/// Wall-clock limit for one firmware run under QEMU.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// A line QEMU's lm3s6965evb model prints on every boot (a timer it leaves unconfigured).
const QEMU_NOISE: &str = "Timer with period zero, disabling";

/// A QEMU machine the firmware supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machine {
    /// TI Stellaris LM3S6965 evaluation board: 256 KiB flash, 64 KiB RAM.
    Lm3s6965evb,
    /// Arm MPS2 with the AN385 image: 4 MiB code memory, 4 MiB RAM.
    Mps2An385,
}

impl Machine {
    /// Both machines, in the order the commands run them.
    pub const ALL: [Machine; 2] = [Machine::Lm3s6965evb, Machine::Mps2An385];

    /// QEMU's name for the machine (also the cargo feature name).
    pub fn name(self) -> &'static str {
        match self {
            Machine::Lm3s6965evb => "lm3s6965evb",
            Machine::Mps2An385 => "mps2-an385",
        }
    }

    /// Parses a machine name.
    pub fn parse(s: &str) -> Result<Self, String> {
        Machine::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown machine `{s}` (expected lm3s6965evb or mps2-an385)"))
    }
}

/// A model the xtask prepares itself; `--model NAME` selects it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// 4096 ids trained by `host-trainer train` on the bundled sample (lm3s6965evb).
    Small,
    /// GPT-2: 50 257 ids imported from its tiktoken rank file (mps2-an385).
    Gpt2,
    /// cl100k_base: 100 256 ranks and 5 special tokens (ids up to 100 276) imported from its
    /// tiktoken rank file (mps2-an385).
    Cl100k,
    /// Byte-level BPE with the Llama 3 pattern: 8192 ids and 4 special tokens, trained with
    /// Hugging Face `tokenizers` in the published Llama 3 layout
    /// (`tests/fixtures/hf_bpe/llama3-8k/tokenizer.json`; mps2-an385).
    Llama3,
    /// Byte-level BPE with a compiled pattern: the llama3-8k vocabulary with DeepSeek V3's
    /// pre-tokenizer (three `Split`s none of the hand-rolled splitters implements)
    /// (`tests/fixtures/hf_compiled/deepseek-8k/tokenizer.json`; mps2-an385).
    DeepSeek,
    /// Byte-level BPE with the Tekken pattern: Mistral NeMo's published `tekken.json`, 131,072
    /// ids of which 1,000 are special (`tests/fixtures/tekken/tekken_240718.json.gz`;
    /// mps2-an385).
    Tekken,
    /// SentencePiece BPE, 4096 ids with byte fallback, trained with `sentencepiece`
    /// (`tests/fixtures/sentencepiece/models/sp4096.model`; lm3s6965evb and mps2-an385).
    Sp4096,
    /// SentencePiece BPE: the published Mistral 7B v0.1 tokenizer, 32 000 ids with byte
    /// fallback (`tests/fixtures/sentencepiece/models/mistral-v1.model`; mps2-an385).
    Mistral,
    /// SentencePiece Unigram, T5-like: 8000 ids, no byte fallback (`<unk>` is id 2), trained
    /// with `sentencepiece` (`tests/fixtures/unigram/models/ug8000.model`; mps2-an385).
    Ug8000,
    /// SentencePiece BPE with the `nmt_nfkc` normalizer (`precompiled_charsmap`) and byte
    /// fallback, trained with `sentencepiece`
    /// (`tests/fixtures/sp_norm/models/nfkc-bpe.model`; mps2-an385).
    SpNfkc,
    /// SentencePiece BPE from a `tokenizer.json`: `tokenizers`' own `SentencePieceBPETokenizer`
    /// (NFKC in the core, a splitting `Metaspace`, one `<unk>` per unknown character), 1,500
    /// ids (`tests/fixtures/metaspace/models/ms-bpe-nfkc.tokenizer.json`; mps2-an385).
    MsBpeNfkc,
    /// SentencePiece BPE from a `tokenizer.json`: `transformers`' T5 conversion of a
    /// `sentencepiece` model trained with `nmt_nfkc` (its `Precompiled` character map applied
    /// by `tokenizers`' grapheme rule in the core, `Strip` + `Replace(" {2,}")`, a splitting
    /// `Metaspace`), 3,000 ids (`tests/fixtures/metaspace/models/ms-t5-nfkc.tokenizer.json`;
    /// mps2-an385).
    MsT5Nfkc,
    /// WordPiece (BERT, cased): 8192 ids trained with Hugging Face `tokenizers`
    /// (`tests/fixtures/wordpiece/bert-cased-8k/tokenizer.json`; lm3s6965evb).
    BertCased,
    /// WordPiece (BERT, uncased): 2000 ids trained by `host-trainer train --model-type
    /// wordpiece` on the bundled sample (lm3s6965evb); reference ids from `tokenizers` loading
    /// the `tokenizer.json` the trainer wrote.
    WpTrained,
    /// SentencePiece BPE: 2000 ids trained by `host-trainer train --model-type
    /// sentencepiece-bpe` on the bundled sample with llama2.c's recipe (identity rule, byte
    /// fallback, split digits; lm3s6965evb); reference ids from `sentencepiece` loading the
    /// `sentencepiece.model` the trainer wrote.
    SpTrained,
    /// SentencePiece Unigram: 2000 ids trained by `host-trainer train --model-type unigram`
    /// on the bundled sample with the same recipe (lm3s6965evb); reference ids from
    /// `sentencepiece` loading the `sentencepiece.model` the trainer wrote.
    UgTrained,
    /// WordPiece (BERT, uncased): the published all-MiniLM-L6-v2 tokenizer, bert-base-uncased's
    /// 30 522 ids (`tests/fixtures/wordpiece/minilm-uncased/tokenizer.json`; mps2-an385).
    Minilm,
    /// WordPiece with `Sequence[Whitespace, Digits(individual_digits)]` in place of
    /// `BertPreTokenizer`: bert-cased-8k's vocabulary, written by `tokenizers`
    /// (`tests/fixtures/wordpiece/wp-whitespace-digits/tokenizer.json`; mps2-an385).
    WpWhitespace,
}

/// The kind of a model: which tokenizer the firmware runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Byte-level BPE (`picobpe::Tokenizer`).
    BytePair,
    /// SentencePiece, BPE or Unigram (`picobpe::SpTokenizer`).
    SentencePiece,
    /// WordPiece (`picobpe::WpTokenizer`).
    WordPiece,
}

impl Builtin {
    /// Every built-in model, in the order the commands run them.
    pub const ALL: [Builtin; 18] = [
        Builtin::Small,
        Builtin::Gpt2,
        Builtin::Cl100k,
        Builtin::Llama3,
        Builtin::DeepSeek,
        Builtin::Tekken,
        Builtin::Sp4096,
        Builtin::Mistral,
        Builtin::Ug8000,
        Builtin::SpNfkc,
        Builtin::MsBpeNfkc,
        Builtin::MsT5Nfkc,
        Builtin::SpTrained,
        Builtin::UgTrained,
        Builtin::BertCased,
        Builtin::WpTrained,
        Builtin::Minilm,
        Builtin::WpWhitespace,
    ];

    /// The name `--model` takes.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Small => "small",
            Builtin::Gpt2 => "gpt2",
            Builtin::Cl100k => "cl100k",
            Builtin::Llama3 => "llama3-8k",
            Builtin::DeepSeek => "deepseek-8k",
            Builtin::Tekken => "tekken",
            Builtin::Sp4096 => "sp4096",
            Builtin::Mistral => "mistral",
            Builtin::Ug8000 => "ug8000",
            Builtin::SpNfkc => "sp-nfkc",
            Builtin::MsBpeNfkc => "ms-bpe-nfkc",
            Builtin::MsT5Nfkc => "ms-t5-nfkc",
            Builtin::BertCased => "bert-cased-8k",
            Builtin::WpTrained => "wp-trained",
            Builtin::SpTrained => "sp-trained",
            Builtin::UgTrained => "ug-trained",
            Builtin::Minilm => "minilm",
            Builtin::WpWhitespace => "wp-whitespace-digits",
        }
    }

    /// The names `--model` takes, for messages.
    pub fn names() -> String {
        Builtin::ALL.map(Builtin::name).join(", ")
    }

    /// Parses a built-in model name.
    pub fn parse(s: &str) -> Option<Self> {
        Builtin::ALL.into_iter().find(|b| b.name() == s)
    }

    /// The machines the model is built for, in the order the commands run them. GPT-2's tables
    /// (1.2 MB), cl100k_base's (2.3 MB), Mistral's (0.6 MB) and MiniLM's (0.5 MB) only fit the
    /// mps2-an385's 4 MiB of code memory; sp4096's (73 KB) and bert-cased-8k's (125 KB) fit the
    /// lm3s6965evb's 256 KiB of flash with the on-target tests and their vectors, and sp4096
    /// runs on both machines (the small model, trained for the lm3s6965evb, on that one only).
    /// llama3-8k's tables (172 KB) fit the lm3s6965evb's flash in the firmware, but not in the
    /// test binary (its code and 36 KB of vectors overflow the 256 KiB by 33 KB): mps2-an385.
    /// Likewise ug8000's (190 KB with its piece filter): its firmware fits the lm3s6965evb (228
    /// KiB), but its test binary, with its code and 65 KB of vectors, overflows it by 63 KB.
    /// sp-nfkc's tables (293 KB, 240 KB of it the `nmt_nfkc` character map) exceed the
    /// lm3s6965evb's 256 KiB of flash by themselves: mps2-an385.
    pub fn machines(self) -> &'static [Machine] {
        match self {
            Builtin::Small
            | Builtin::BertCased
            | Builtin::WpTrained
            | Builtin::SpTrained
            | Builtin::UgTrained => &[Machine::Lm3s6965evb],
            Builtin::Sp4096 => &Machine::ALL,
            Builtin::Gpt2
            | Builtin::Cl100k
            | Builtin::Llama3
            | Builtin::DeepSeek
            | Builtin::Tekken
            | Builtin::Mistral
            | Builtin::Ug8000
            | Builtin::SpNfkc
            | Builtin::MsBpeNfkc
            | Builtin::MsT5Nfkc
            | Builtin::Minilm
            | Builtin::WpWhitespace => &[Machine::Mps2An385],
        }
    }

    /// The kind of the model.
    pub fn kind(self) -> Kind {
        match self {
            Builtin::Small
            | Builtin::Gpt2
            | Builtin::Cl100k
            | Builtin::Llama3
            | Builtin::DeepSeek
            | Builtin::Tekken => Kind::BytePair,
            Builtin::Sp4096
            | Builtin::Mistral
            | Builtin::Ug8000
            | Builtin::SpNfkc
            | Builtin::MsBpeNfkc
            | Builtin::MsT5Nfkc
            | Builtin::SpTrained
            | Builtin::UgTrained => Kind::SentencePiece,
            Builtin::BertCased | Builtin::WpTrained | Builtin::Minilm | Builtin::WpWhitespace => {
                Kind::WordPiece
            }
        }
    }

    /// The algorithm, folder and name of a model imported from a sentencepiece `.model`
    /// file: the file is `tests/fixtures/<folder>/models/<name>.model`, the reference vectors
    /// `tests/fixtures/<folder>/vectors/<name>/` (folders: `sentencepiece` for BPE, `unigram`,
    /// `sp_norm` for character-map normalizers).
    pub fn sentencepiece_fixture(self) -> Option<SpFixture> {
        let (encoder, dir, name) = match self {
            Builtin::Sp4096 => (SpEncoder::Bpe, "sentencepiece", "sp4096"),
            Builtin::Mistral => (SpEncoder::Bpe, "sentencepiece", "mistral-v1"),
            Builtin::Ug8000 => (SpEncoder::Unigram, "unigram", "ug8000"),
            Builtin::SpNfkc => (SpEncoder::Bpe, "sp_norm", "nfkc-bpe"),
            Builtin::MsBpeNfkc => (SpEncoder::Bpe, "metaspace", "ms-bpe-nfkc"),
            Builtin::MsT5Nfkc => (SpEncoder::Bpe, "metaspace", "ms-t5-nfkc"),
            Builtin::SpTrained => (SpEncoder::Bpe, "trained", "sp-trained"),
            Builtin::UgTrained => (SpEncoder::Unigram, "trained", "ug-trained"),
            _ => return None,
        };
        Some(SpFixture { encoder, dir, name })
    }

    /// The folder, under `tests/fixtures/`, of a model imported from a Hugging Face
    /// `tokenizer.json`: the file and the reference vectors made with `tokenizers`.
    pub fn tokenizer_json_fixture(self) -> Option<&'static str> {
        match self {
            Builtin::Llama3 => Some("hf_bpe/llama3-8k"),
            Builtin::DeepSeek => Some("hf_compiled/deepseek-8k"),
            Builtin::BertCased => Some("wordpiece/bert-cased-8k"),
            Builtin::Minilm => Some("wordpiece/minilm-uncased"),
            Builtin::WpWhitespace => Some("wordpiece/wp-whitespace-digits"),
            _ => None,
        }
    }

    /// The firmware's cargo feature that makes this model the build's default, if any. A feature
    /// set of its own also gives the build its own artifacts in cargo's cache, so the gpt2 and
    /// cl100k builds for the same machine do not rebuild each other, nor the sp4096 and mistral
    /// ones (`sp4096` implies `sentencepiece`), nor the gpt2, cl100k, llama3-8k and minilm ones.
    fn feature(self) -> Option<&'static str> {
        match self {
            Builtin::Cl100k => Some("cl100k"),
            // Shares the llama3-8k builds' artifacts (the model file is always named).
            Builtin::Llama3 | Builtin::DeepSeek => Some("llama3"),
            Builtin::Tekken => Some("tekken"),
            Builtin::Sp4096 => Some("sp4096"),
            Builtin::Mistral | Builtin::SpTrained => Some("sentencepiece"),
            Builtin::Ug8000 | Builtin::UgTrained => Some("unigram"),
            // Shares the sp-nfkc builds' artifacts (the model file is always named).
            Builtin::SpNfkc | Builtin::MsBpeNfkc | Builtin::MsT5Nfkc => Some("nfkc"),
            Builtin::BertCased | Builtin::WpTrained | Builtin::Minilm | Builtin::WpWhitespace => {
                Some("wordpiece")
            }
            Builtin::Small | Builtin::Gpt2 => None,
        }
    }

    /// One line describing the model.
    pub fn describe(self) -> &'static str {
        match self {
            Builtin::Small => "small (4096 ids, trained on the bundled sample)",
            Builtin::Gpt2 => "gpt2 (50257 ids, imported from tiktoken)",
            Builtin::Cl100k => "cl100k (cl100k_base: 100277 ids, imported from tiktoken)",
            Builtin::Llama3 => {
                "llama3-8k (byte-level BPE, Llama 3 pattern, 8196 ids, imported from a Hugging \
                 Face tokenizer.json)"
            }
            Builtin::DeepSeek => {
                "deepseek-8k (byte-level BPE, DeepSeek V3's Split pre-tokenizer compiled into \
                 automata, the llama3-8k vocabulary, imported from a Hugging Face tokenizer.json)"
            }
            Builtin::Tekken => {
                "tekken (byte-level BPE, Tekken pattern: Mistral NeMo, 131072 ids, 1000 of them \
                 special, imported from its tekken.json)"
            }
            Builtin::Sp4096 => {
                "sp4096 (SentencePiece BPE, 4096 ids, byte fallback, imported from sentencepiece)"
            }
            Builtin::Mistral => {
                "mistral (SentencePiece BPE: Mistral 7B v0.1, 32000 ids, byte fallback, imported \
                 from sentencepiece)"
            }
            Builtin::Ug8000 => {
                "ug8000 (SentencePiece Unigram, T5-like: 8000 ids, no byte fallback, imported \
                 from sentencepiece)"
            }
            Builtin::SpNfkc => {
                "sp-nfkc (SentencePiece BPE, nmt_nfkc character map, 3000 ids, byte fallback, \
                 imported from sentencepiece)"
            }
            Builtin::MsBpeNfkc => {
                "ms-bpe-nfkc (SentencePiece BPE with NFKC and a splitting Metaspace, 1500 ids, \
                 no byte fallback, imported from a tokenizers tokenizer.json)"
            }
            Builtin::MsT5Nfkc => {
                "ms-t5-nfkc (SentencePiece BPE, T5 tokenizer.json: Precompiled nmt_nfkc map by \
                 tokenizers' rule, Strip + Replace, splitting Metaspace, 3000 ids, imported from \
                 a transformers conversion)"
            }
            Builtin::BertCased => {
                "bert-cased-8k (WordPiece, cased, 8192 ids, imported from a Hugging Face \
                 tokenizer.json)"
            }
            Builtin::WpTrained => {
                "wp-trained (WordPiece, uncased, 2000 ids, trained on the bundled sample)"
            }
            Builtin::SpTrained => {
                "sp-trained (SentencePiece BPE, 2000 ids, byte fallback, trained on the bundled \
                 sample with llama2.c's recipe)"
            }
            Builtin::UgTrained => {
                "ug-trained (SentencePiece Unigram, 2000 ids, byte fallback, trained on the \
                 bundled sample with llama2.c's recipe)"
            }
            Builtin::Minilm => {
                "minilm (WordPiece, uncased: all-MiniLM-L6-v2, 30522 ids, imported from a \
                 Hugging Face tokenizer.json)"
            }
            Builtin::WpWhitespace => {
                "wp-whitespace-digits (WordPiece, cased, 8192 ids, Whitespace + Digits \
                 pre-tokenizer, imported from a Hugging Face tokenizer.json)"
            }
        }
    }

    /// File name of the prepared model in `firmware-example/target/models/` (also what the
    /// firmware's `build.rs` bakes by default for the model's machine and feature).
    fn file_name(self) -> &'static str {
        match self {
            Builtin::Small => "small.model",
            Builtin::Gpt2 => "gpt2.model",
            Builtin::Cl100k => "cl100k_base.model",
            Builtin::Llama3 => "llama3-8k.model",
            Builtin::DeepSeek => "deepseek-8k.model",
            Builtin::Tekken => "tekken.model",
            Builtin::Sp4096 => "sp4096.model",
            Builtin::Mistral => "mistral.model",
            Builtin::Ug8000 => "ug8000.model",
            Builtin::SpNfkc => "sp-nfkc.model",
            Builtin::MsBpeNfkc => "ms-bpe-nfkc.model",
            Builtin::MsT5Nfkc => "ms-t5-nfkc.model",
            Builtin::BertCased => "bert-cased-8k.model",
            Builtin::WpTrained => "wp-trained.model",
            Builtin::SpTrained => "sp-trained.model",
            Builtin::UgTrained => "ug-trained.model",
            Builtin::Minilm => "minilm.model",
            Builtin::WpWhitespace => "wp-whitespace-digits.model",
        }
    }
}

/// Where a configuration's model comes from.
#[derive(Clone, Debug)]
pub enum ModelSource {
    /// A model the xtask prepares.
    Builtin(Builtin),
    /// A user's `*.model` file (no reference vectors).
    File(PathBuf),
}

/// One firmware configuration: a machine and the model baked for it.
#[derive(Clone, Debug)]
pub struct Config {
    /// Target machine.
    pub machine: Machine,
    /// Model to bake.
    pub model: ModelSource,
}

impl Config {
    /// `machine/model`, e.g. `mps2-an385/cl100k` (a user model shows its file stem).
    pub fn label(&self) -> String {
        let model = match &self.model {
            ModelSource::Builtin(b) => b.name().to_string(),
            ModelSource::File(p) => p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "model".into()),
        };
        format!("{}/{model}", self.machine.name())
    }

    /// The built-in model, if the configuration uses one.
    pub fn builtin(&self) -> Option<Builtin> {
        match self.model {
            ModelSource::Builtin(b) => Some(b),
            ModelSource::File(_) => None,
        }
    }

    /// The model file: a user's as is, a built-in one prepared (trained or imported) first.
    pub fn model_path(&self) -> Result<PathBuf, String> {
        match &self.model {
            ModelSource::Builtin(b) => {
                eprintln!("== preparing the {} model", b.describe());
                prepare_model(*b)
            }
            ModelSource::File(p) => Ok(p.clone()),
        }
    }
}

/// Parsed `--machine`/`--model` options shared by the firmware commands.
pub struct Options {
    /// Configurations to run, in order.
    pub configs: Vec<Config>,
    /// Arguments not understood here.
    pub rest: Vec<String>,
}

/// Which configurations the options select when they leave something open.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Every built-in configuration that matches (`firmware-test`): each model on each of its
    /// machines.
    All,
    /// Each built-in model once, on the first of its machines (`footprint`: a model's figures
    /// do not depend on the machine beyond its capacity); every matching configuration when
    /// machines are named.
    FirstPerModel,
    /// One configuration per machine, its first built-in model (`firmware-run`); only the first
    /// such configuration (lm3s6965evb unless the model does not fit it) when no machine is
    /// named.
    FirstPerMachine,
}

/// Parses `--machine M` (repeatable), `--model NAME|FILE` and `--model-type T` (the model
/// `host-trainer train` makes with trainer `T` from the bundled sample: `bytelevel-bpe` is
/// `small`, `wordpiece` `wp-trained`, `sentencepiece-bpe` `sp-trained`, `unigram` `ug-trained`; the last of `--model`
/// and `--model-type` wins). A built-in model name ([`Builtin::ALL`], [`Builtin::names`]) selects that model on the machines it is built for
/// ([`Builtin::machines`]; `--machine` picks among them); anything else is a model file (write `./gpt2` for a file of
/// that name), baked for each selected machine (default: as `selection` says). Without
/// `--model`, `PICOBPE_MODEL` in the environment names the file.
pub fn parse_options(args: &[String], selection: Selection) -> Result<Options, String> {
    let mut machines: Vec<Machine> = Vec::new();
    let mut model: Option<ModelSource> = std::env::var_os("PICOBPE_MODEL")
        .map(PathBuf::from)
        .map(ModelSource::File);
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k == "--machine" || k == "--model" || k == "--model-type" => {
                (k, Some(v.to_string()))
            }
            _ => (a.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().cloned().ok_or(format!("{name} needs a value")),
            }
        };
        match key {
            "--machine" => machines.push(Machine::parse(&value("--machine")?)?),
            "--model-type" => {
                // The model `host-trainer train` makes of the bundled sample with that trainer.
                model = Some(ModelSource::Builtin(
                    match value("--model-type")?.as_str() {
                        "bytelevel-bpe" => Builtin::Small,
                        "wordpiece" => Builtin::WpTrained,
                        "sentencepiece-bpe" => Builtin::SpTrained,
                        "unigram" => Builtin::UgTrained,
                        other => {
                            return Err(format!(
                                "--model-type {other}: one of bytelevel-bpe, wordpiece, \
                             sentencepiece-bpe, unigram (the trainers `host-trainer train` has)"
                            ))
                        }
                    },
                ));
            }
            "--model" => {
                let v = value("--model")?;
                model = Some(match Builtin::parse(&v) {
                    Some(b) => ModelSource::Builtin(b),
                    None => ModelSource::File(Path::new(&v).canonicalize().map_err(|e| {
                        format!("--model {v}: {e} (built-in models: {})", Builtin::names())
                    })?),
                });
            }
            _ => rest.push(a.clone()),
        }
    }
    machines.dedup();
    let builtins: &[Builtin] = match &model {
        Some(ModelSource::File(p)) => {
            if machines.is_empty() {
                machines = match selection {
                    Selection::All | Selection::FirstPerModel => Machine::ALL.to_vec(),
                    Selection::FirstPerMachine => vec![Machine::Lm3s6965evb],
                };
            }
            let configs = machines
                .iter()
                .map(|&machine| Config {
                    machine,
                    model: ModelSource::File(p.clone()),
                })
                .collect();
            return Ok(Options { configs, rest });
        }
        Some(ModelSource::Builtin(b)) => {
            if let Some(m) = machines.iter().find(|m| !b.machines().contains(m)) {
                let built_for: Vec<&str> = b.machines().iter().map(|m| m.name()).collect();
                return Err(format!(
                    "model `{}` is built for {}, not {} (give a model file to bake another \
                     model for {})",
                    b.name(),
                    built_for.join(" and "),
                    m.name(),
                    m.name()
                ));
            }
            std::slice::from_ref(b)
        }
        None => &Builtin::ALL,
    };
    let mut configs: Vec<Config> = Vec::new();
    for &b in builtins {
        for &machine in b.machines() {
            let wanted = machines.is_empty() || machines.contains(&machine);
            let taken = match selection {
                Selection::All => false,
                Selection::FirstPerModel => {
                    machines.is_empty() && configs.iter().any(|c| c.builtin() == Some(b))
                }
                Selection::FirstPerMachine => configs.iter().any(|c| c.machine == machine),
            };
            if wanted && !taken {
                configs.push(Config {
                    machine,
                    model: ModelSource::Builtin(b),
                });
            }
        }
    }
    if selection == Selection::FirstPerMachine && machines.is_empty() {
        configs.truncate(1);
    }
    Ok(Options { configs, rest })
}

/// Entry point of `firmware-run`.
pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse_options(args, Selection::FirstPerMachine)?;
    if let Some(a) = opts.rest.first() {
        return Err(format!(
            "unexpected argument `{a}`\nusage: cargo xtask firmware-run [--machine lm3s6965evb|mps2-an385] [--model {}|FILE] [--model-type bytelevel-bpe|wordpiece|sentencepiece-bpe|unigram]",
            Builtin::ALL.map(Builtin::name).join("|")
        ));
    }
    ensure_tools()?;
    for config in &opts.configs {
        let model = config.model_path()?;
        println!(
            "== firmware on {} with model {}",
            config.machine.name(),
            model.display()
        );
        let elf = build(&Build::new(config, &model), Artifact::Firmware)?
            .pop()
            .ok_or("cargo built no firmware binary")?;
        let out = run_qemu(config.machine, &elf, &[], &[], RUN_TIMEOUT)?;
        print!("{}", out.stdout);
        eprint!("{}", out.stderr);
        match out.status {
            Some(0) => {}
            Some(code) => return Err(format!("firmware exited with status {code}")),
            None => return Err(format!("firmware timed out after {RUN_TIMEOUT:?}")),
        }
    }
    Ok(())
}

/// The repository root (xtask's manifest dir is `<root>/xtask`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// The firmware's cargo workspace.
pub fn firmware_dir() -> PathBuf {
    repo_root().join("firmware-example")
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
}

/// Installs what the firmware commands need, or stops with the command to run.
pub fn ensure_tools() -> Result<(), String> {
    ensure_target("thumbv7m-none-eabi")?;
    ensure_qemu()
}

/// Installs a rustup target when missing, or says which command to run.
pub fn ensure_target(target: &str) -> Result<(), String> {
    let out = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map_err(|e| {
            format!("rustup not found ({e}); install rustup, then run `rustup target add {target}`")
        })?;
    if String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim() == target)
    {
        return Ok(());
    }
    println!("== rustup target add {target}");
    let ok = Command::new("rustup")
        .args(["target", "add", target])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "could not install the target; run `rustup target add {target}`"
        ))
    }
}

fn ensure_qemu() -> Result<(), String> {
    ensure_apt("qemu-system-arm", "qemu-system-arm")
}

/// True when `program --version` runs.
fn present(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Makes sure `program` is installed: as root on a Debian-like system, installs the Debian
/// package `package` (without recommends) when missing; otherwise stops with the command to run.
pub fn ensure_apt(program: &str, package: &str) -> Result<(), String> {
    if present(program) {
        return Ok(());
    }
    let install = format!("apt-get update && apt-get install -y --no-install-recommends {package}");
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let has_apt = Command::new("apt-get")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok();
    if !(is_root && has_apt) {
        return Err(format!(
            "{program} is not installed; run `sudo sh -c '{install}'` (Debian/Ubuntu) or install \
             it from your system's packages"
        ));
    }
    println!("== {install}");
    let ok = Command::new("sh")
        .args(["-c", &install])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok && present(program) {
        Ok(())
    } else {
        Err(format!("installing {package} failed; run `{install}`"))
    }
}

/// Builds (or refreshes) a built-in model under `firmware-example/target/models/` and returns its
/// path. The file is rewritten only when its bytes change, so the firmware is rebuilt only when
/// the model really changed.
pub fn prepare_model(model: Builtin) -> Result<PathBuf, String> {
    let root = repo_root();
    let models = firmware_dir().join("target").join("models");
    let scratch = models.join("scratch");
    let _ = fs::remove_dir_all(&scratch);
    fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let dest = models.join(model.file_name());
    let (args, produced): (Vec<OsString>, PathBuf) = match model {
        Builtin::Small => {
            let sample = firmware_dir().join("sample").join("english-sample.txt");
            (
                vec![
                    "train".into(),
                    "--input".into(),
                    sample.into(),
                    "--vocab-size".into(),
                    SMALL_VOCAB.into(),
                    "--special-token".into(),
                    "<|endoftext|>".into(),
                    "--quiet".into(),
                    "--out".into(),
                    scratch.clone().into(),
                ],
                scratch.join("tokenizer.model"),
            )
        }
        Builtin::Gpt2 => {
            let rank_file = rank_file(&root, "gpt2", &scratch)?;
            let out = scratch.join("gpt2.model");
            (
                import_args(&rank_file, "gpt2", &[("<|endoftext|>".into(), 50256)], &out),
                out,
            )
        }
        Builtin::Cl100k => {
            let rank_file = rank_file(&root, "cl100k_base", &scratch)?;
            let specials = tiktoken_specials(&root, "cl100k_base")?;
            let out = scratch.join("cl100k_base.model");
            (import_args(&rank_file, "cl100k", &specials, &out), out)
        }
        Builtin::Tekken => {
            let gz = root.join("tests/fixtures/tekken/tekken_240718.json.gz");
            let json = scratch.join("tekken.json");
            gunzip(&gz, &json)?;
            let out = scratch.join(model.file_name());
            (
                vec![
                    "import".into(),
                    "--tekken".into(),
                    json.into(),
                    "--out".into(),
                    out.clone().into(),
                ],
                out,
            )
        }
        Builtin::WpTrained => {
            let sample = firmware_dir().join("sample").join("english-sample.txt");
            (
                vec![
                    "train".into(),
                    "--model-type".into(),
                    "wordpiece".into(),
                    "--input".into(),
                    sample.into(),
                    "--vocab-size".into(),
                    WP_TRAINED_VOCAB.into(),
                    "--quiet".into(),
                    "--out".into(),
                    scratch.clone().into(),
                ],
                scratch.join("tokenizer.model"),
            )
        }
        Builtin::SpTrained | Builtin::UgTrained => {
            let sample = firmware_dir().join("sample").join("english-sample.txt");
            let model_type = if model == Builtin::UgTrained {
                "unigram"
            } else {
                "sentencepiece-bpe"
            };
            let mut args: Vec<OsString> = vec![
                "train".into(),
                "--model-type".into(),
                model_type.into(),
                "--input".into(),
                sample.into(),
                "--vocab-size".into(),
                SP_TRAINED_VOCAB.into(),
            ];
            // llama2.c's `train_vocab.sh` options.
            for a in [
                "--character-coverage",
                "1.0",
                "--split-digits",
                "true",
                "--allow-whitespace-only-pieces",
                "true",
                "--byte-fallback",
                "true",
                "--normalization-rule-name",
                "identity",
                "--quiet",
                "--out",
            ] {
                args.push(a.into());
            }
            args.push(scratch.clone().into());
            (args, scratch.join("tokenizer.model"))
        }
        Builtin::Llama3
        | Builtin::DeepSeek
        | Builtin::BertCased
        | Builtin::Minilm
        | Builtin::WpWhitespace => {
            // `host-trainer import --tokenizer-json` reads the kind from the file: byte-level
            // BPE (`picobpe_model::import::tokenizer_json`, no NFC promise) or WordPiece
            // (`picobpe_model::wordpiece::import_tokenizer_json`).
            let dir = model.tokenizer_json_fixture().unwrap_or_default();
            let json = root.join(format!("tests/fixtures/{dir}/tokenizer.json"));
            let out = scratch.join(model.file_name());
            (
                vec![
                    "import".into(),
                    "--tokenizer-json".into(),
                    json.into(),
                    "--out".into(),
                    out.clone().into(),
                ],
                out,
            )
        }
        Builtin::Sp4096
        | Builtin::Mistral
        | Builtin::Ug8000
        | Builtin::SpNfkc
        | Builtin::MsBpeNfkc
        | Builtin::MsT5Nfkc => {
            // A BPE or a Unigram `.model` (or `tokenizer.json`): `host-trainer import` reads
            // the type (and the normalizer) from the file.
            let fixture = model
                .sentencepiece_fixture()
                .ok_or("no sentencepiece fixture")?;
            let flag = if fixture.is_tokenizer_json() {
                "--tokenizer-json"
            } else {
                "--sentencepiece"
            };
            let proto = fixture.model_path();
            let out = scratch.join(model.file_name());
            (
                vec![
                    "import".into(),
                    flag.into(),
                    proto.into(),
                    "--out".into(),
                    out.clone().into(),
                ],
                out,
            )
        }
    };
    let status = cargo()
        .current_dir(&root)
        .args(["run", "--quiet", "--release", "-p", "host-trainer", "--"])
        .args(&args)
        // Progress lines go to stderr, so a command's stdout stays its own (e.g. a table).
        .stdout(Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "host-trainer {} failed ({status})",
            args[0].to_string_lossy()
        ));
    }
    replace_if_changed(&produced, &dest)?;
    if model == Builtin::Small {
        // Keep the GPT-2-style vocabulary files: the small model's reference vectors come
        // from them (see `vectors::prepare_small`).
        for f in ["vocab.json", "merges.txt"] {
            replace_if_changed(&scratch.join(f), &models.join(format!("small.{f}")))?;
        }
    }
    if matches!(model, Builtin::SpTrained | Builtin::UgTrained) {
        // Keep the `sentencepiece.model`: `sentencepiece` loads it for the reference ids (see
        // `vectors::prepare_sp_trained`).
        let proto = models.join(format!("{}.sentencepiece.model", model.name()));
        replace_if_changed(&scratch.join("sentencepiece.model"), &proto)?;
    }
    if model == Builtin::WpTrained {
        // Keep the `tokenizer.json`: `tokenizers` loads it for the reference ids (see
        // `vectors::prepare_wp_trained`).
        let json = models.join("wp-trained.tokenizer.json");
        replace_if_changed(&scratch.join("tokenizer.json"), &json)?;
    }
    let _ = fs::remove_dir_all(&scratch);
    Ok(dest)
}

/// `host-trainer import` arguments for a tiktoken rank file.
fn import_args(
    rank_file: &Path,
    pattern: &str,
    specials: &[(String, u32)],
    out: &Path,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "import".into(),
        "--tiktoken".into(),
        rank_file.into(),
        "--pattern".into(),
        pattern.into(),
    ];
    for (text, id) in specials {
        args.push("--special".into());
        args.push(format!("{text}={id}").into());
    }
    args.push("--out".into());
    args.push(out.into());
    args
}

/// Moves `from` over `to` unless `to` already has the same bytes (keeps its mtime then).
fn replace_if_changed(from: &Path, to: &Path) -> Result<(), String> {
    let new = fs::read(from).map_err(|e| format!("{}: {e}", from.display()))?;
    if fs::read(to).ok().as_deref() != Some(&new[..]) {
        fs::rename(from, to).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    Ok(())
}

/// The tiktoken rank file of `encoding` as a plain file: the committed fixture
/// (`tests/fixtures/models/<encoding>.tiktoken`, or its `.gz`, decompressed into `scratch`), else
/// the shared data set.
fn rank_file(root: &Path, encoding: &str, scratch: &Path) -> Result<PathBuf, String> {
    let models = root.join("tests/fixtures/models");
    let plain = models.join(format!("{encoding}.tiktoken"));
    if plain.is_file() {
        return Ok(plain);
    }
    let gz = models.join(format!("{encoding}.tiktoken.gz"));
    if gz.is_file() {
        let out = scratch.join(format!("{encoding}.tiktoken"));
        gunzip(&gz, &out)?;
        return Ok(out);
    }
    let shared = root.join(format!("../shared/data/tiktoken/{encoding}.tiktoken"));
    if shared.is_file() {
        return Ok(shared);
    }
    Err(format!(
        "{encoding} rank file not found (looked at {} and {})",
        plain.display(),
        gz.display()
    ))
}

/// Decompresses the gzip file `gz` to `out`.
fn gunzip(gz: &Path, out: &Path) -> Result<(), String> {
    let f = fs::File::open(gz).map_err(|e| format!("{}: {e}", gz.display()))?;
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(f)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", gz.display()))?;
    fs::write(out, bytes).map_err(|e| format!("{}: {e}", out.display()))
}

/// The standard special tokens of a tiktoken encoding, sorted by id, from the committed
/// encoding metadata `tests/fixtures/models/<encoding>.json` (tiktoken's `special_tokens`).
fn tiktoken_specials(root: &Path, encoding: &str) -> Result<Vec<(String, u32)>, String> {
    let path = root.join(format!("tests/fixtures/models/{encoding}.json"));
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let meta: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let map = meta["special_tokens"]
        .as_object()
        .ok_or_else(|| format!("{}: no `special_tokens` object", path.display()))?;
    let mut specials = map
        .iter()
        .map(|(text, id)| {
            id.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(|id| (text.clone(), id))
                .ok_or_else(|| format!("{}: bad id for `{text}`", path.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    specials.sort_by_key(|s| s.1);
    Ok(specials)
}

/// The inputs of one firmware build.
#[derive(Clone, Copy)]
pub struct Build<'a> {
    /// Target machine.
    pub machine: Machine,
    /// The firmware feature of a built-in model, beside the machine's (see [`Builtin`]).
    pub model_feature: Option<&'static str>,
    /// Model file to bake.
    pub model: &'a Path,
    /// Conformance vectors to embed (tests only) and the name of their reference.
    pub vectors: Option<(&'a Path, &'static str)>,
    /// Whole-piece table, `minimal` or `full` (`PICOBPE_PIECES`); `None` keeps the environment's
    /// choice (default `full`).
    pub pieces: Option<&'static str>,
}

impl<'a> Build<'a> {
    /// A build of `config` with the model file `model`, no vectors, default pieces.
    pub fn new(config: &Config, model: &'a Path) -> Self {
        Build {
            machine: config.machine,
            model_feature: config.builtin().and_then(Builtin::feature),
            model,
            vectors: None,
            pieces: None,
        }
    }

    /// Cargo arguments that select the machine's and the model's features.
    fn feature_args(&self) -> Vec<String> {
        let mut features = vec![self.machine.name()];
        features.extend(self.model_feature);
        vec![
            "--no-default-features".into(),
            "--features".into(),
            features.join(","),
        ]
    }
}

/// What to build.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Artifact {
    /// The demo/footprint binary.
    Firmware,
    /// The on-target test binaries.
    Tests,
}

/// Builds the firmware (release profile) for `machine` with `model` baked in (and, for the tests,
/// the conformance `vectors` embedded) and returns the paths of the ELF files cargo produced.
pub fn build(spec: &Build<'_>, what: Artifact) -> Result<Vec<PathBuf>, String> {
    let Build {
        machine,
        model,
        vectors,
        pieces,
        ..
    } = *spec;
    let mut cmd = cargo();
    cmd.current_dir(firmware_dir());
    match what {
        Artifact::Firmware => cmd.args(["build", "--release", "--bins"]),
        Artifact::Tests => cmd.args(["test", "--release", "--no-run", "--tests"]),
    };
    match vectors {
        Some((v, reference)) => cmd
            .env("PICOBPE_VECTORS", v)
            .env("PICOBPE_VECTORS_REF", reference),
        None => cmd
            .env_remove("PICOBPE_VECTORS")
            .env_remove("PICOBPE_VECTORS_REF"),
    };
    if let Some(p) = pieces {
        cmd.env("PICOBPE_PIECES", p);
    }
    cmd.args(spec.feature_args())
        .args(["--message-format", "json-render-diagnostics"])
        .env("PICOBPE_MODEL", model)
        .stderr(Stdio::inherit())
        .stdout(Stdio::piped());
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the firmware for {} failed",
            machine.name()
        ));
    }
    let mut elves = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        // `cargo test` also builds the binaries (for CARGO_BIN_EXE_*); keep what was asked for.
        let is_test = msg["profile"]["test"].as_bool().unwrap_or(false);
        if is_test != (what == Artifact::Tests) {
            continue;
        }
        if let Some(exe) = msg["executable"].as_str() {
            elves.push(PathBuf::from(exe));
        }
    }
    Ok(elves)
}

/// What a QEMU run printed and how it ended.
pub struct RunOutput {
    /// Exit status (the semihosting exit code); `None` when the run timed out and was killed.
    pub status: Option<i32>,
    /// Everything the firmware printed to stdout.
    pub stdout: String,
    /// QEMU's and the firmware's stderr, without QEMU's known boot noise.
    pub stderr: String,
}

/// Runs `elf` on `machine` with semihosting arguments `args` and extra QEMU options `qemu_opts`,
/// killing QEMU after `timeout`.
pub fn run_qemu(
    machine: Machine,
    elf: &Path,
    args: &[String],
    qemu_opts: &[&str],
    timeout: Duration,
) -> Result<RunOutput, String> {
    let board = ["-cpu", "cortex-m3", "-machine", machine.name()];
    run_emulator("qemu-system-arm", &board, elf, args, qemu_opts, timeout)
}

/// Runs `elf` under the QEMU system emulator `program` with the machine options `board`,
/// semihosting arguments `args` and extra options `qemu_opts`, killing it after `timeout`.
pub fn run_emulator(
    program: &str,
    board: &[&str],
    elf: &Path,
    args: &[String],
    qemu_opts: &[&str],
    timeout: Duration,
) -> Result<RunOutput, String> {
    let mut semihosting = String::from("enable=on,target=native");
    for a in args {
        semihosting.push_str(",arg=");
        semihosting.push_str(a);
    }
    let mut child = Command::new(program)
        .args(board)
        .args(["-nographic", "-monitor", "none", "-serial", "none"])
        .args(["-semihosting-config", &semihosting])
        .args(qemu_opts)
        .arg("-kernel")
        .arg(elf)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    // Drain both pipes on threads so a chatty firmware cannot block on a full pipe.
    let mut so = child.stdout.take().ok_or("no stdout pipe")?;
    let mut se = child.stderr.take().ok_or("no stderr pipe")?;
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = so.read_to_end(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        s
    });
    let status = match child
        .wait_timeout(timeout)
        .map_err(|e| format!("waiting for qemu: {e}"))?
    {
        Some(s) => Some(s.code().unwrap_or(-1)),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap_or_default())
        .lines()
        .filter(|l| l.trim() != QEMU_NOISE)
        .map(|l| format!("{l}\n"))
        .collect();
    Ok(RunOutput {
        status,
        stdout,
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::{parse_options, Config, Selection};

    /// The labels of the configurations `args` select, or `None` when `PICOBPE_MODEL` is set
    /// (it names a model file).
    fn labels(args: &[&str], selection: Selection) -> Option<Vec<String>> {
        if std::env::var_os("PICOBPE_MODEL").is_some() {
            return None;
        }
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let opts = parse_options(&args, selection).expect("options parse");
        Some(opts.configs.iter().map(Config::label).collect())
    }

    #[test]
    fn built_in_configurations() {
        use Selection::{All, FirstPerMachine, FirstPerModel};
        let (lm3s, mps2) = ("lm3s6965evb", "mps2-an385");
        let cases: &[(&[&str], Selection, &[&str])] = &[
            (
                &[],
                All,
                &[
                    "lm3s6965evb/small",
                    "mps2-an385/gpt2",
                    "mps2-an385/cl100k",
                    "mps2-an385/llama3-8k",
                    "mps2-an385/deepseek-8k",
                    "mps2-an385/tekken",
                    "lm3s6965evb/sp4096",
                    "mps2-an385/sp4096",
                    "mps2-an385/mistral",
                    "mps2-an385/ug8000",
                    "mps2-an385/sp-nfkc",
                    "mps2-an385/ms-bpe-nfkc",
                    "mps2-an385/ms-t5-nfkc",
                    "lm3s6965evb/sp-trained",
                    "lm3s6965evb/ug-trained",
                    "lm3s6965evb/bert-cased-8k",
                    "lm3s6965evb/wp-trained",
                    "mps2-an385/minilm",
                    "mps2-an385/wp-whitespace-digits",
                ],
            ),
            (
                &["--model", "sp4096"],
                All,
                &["lm3s6965evb/sp4096", "mps2-an385/sp4096"],
            ),
            (
                &["--model", "sp4096", "--machine", mps2],
                All,
                &["mps2-an385/sp4096"],
            ),
            (
                &["--machine", lm3s],
                All,
                &[
                    "lm3s6965evb/small",
                    "lm3s6965evb/sp4096",
                    "lm3s6965evb/sp-trained",
                    "lm3s6965evb/ug-trained",
                    "lm3s6965evb/bert-cased-8k",
                    "lm3s6965evb/wp-trained",
                ],
            ),
            (
                &[],
                FirstPerModel,
                &[
                    "lm3s6965evb/small",
                    "mps2-an385/gpt2",
                    "mps2-an385/cl100k",
                    "mps2-an385/llama3-8k",
                    "mps2-an385/deepseek-8k",
                    "mps2-an385/tekken",
                    "lm3s6965evb/sp4096",
                    "mps2-an385/mistral",
                    "mps2-an385/ug8000",
                    "mps2-an385/sp-nfkc",
                    "mps2-an385/ms-bpe-nfkc",
                    "mps2-an385/ms-t5-nfkc",
                    "lm3s6965evb/sp-trained",
                    "lm3s6965evb/ug-trained",
                    "lm3s6965evb/bert-cased-8k",
                    "lm3s6965evb/wp-trained",
                    "mps2-an385/minilm",
                    "mps2-an385/wp-whitespace-digits",
                ],
            ),
            (
                &["--model", "minilm"],
                FirstPerMachine,
                &["mps2-an385/minilm"],
            ),
            (
                &["--model", "bert-cased-8k"],
                All,
                &["lm3s6965evb/bert-cased-8k"],
            ),
            (&["--model", "tekken"], All, &["mps2-an385/tekken"]),
            (&["--model", "ug8000"], All, &["mps2-an385/ug8000"]),
            (
                &["--model", "ug8000"],
                FirstPerMachine,
                &["mps2-an385/ug8000"],
            ),
            (&["--model", "sp-nfkc"], All, &["mps2-an385/sp-nfkc"]),
            (
                &["--model", "ms-bpe-nfkc"],
                All,
                &["mps2-an385/ms-bpe-nfkc"],
            ),
            (&["--model", "ms-t5-nfkc"], All, &["mps2-an385/ms-t5-nfkc"]),
            (
                &["--model", "sp-nfkc"],
                FirstPerModel,
                &["mps2-an385/sp-nfkc"],
            ),
            (
                &["--model=sp4096", "--machine", lm3s, "--machine", mps2],
                FirstPerModel,
                &["lm3s6965evb/sp4096", "mps2-an385/sp4096"],
            ),
            (&[], FirstPerMachine, &["lm3s6965evb/small"]),
            (
                &["--model-type", "sentencepiece-bpe"],
                FirstPerMachine,
                &["lm3s6965evb/sp-trained"],
            ),
            (
                &["--model-type", "unigram"],
                FirstPerMachine,
                &["lm3s6965evb/ug-trained"],
            ),
            (
                &["--model-type=wordpiece"],
                FirstPerMachine,
                &["lm3s6965evb/wp-trained"],
            ),
            (
                &["--model-type", "bytelevel-bpe"],
                FirstPerMachine,
                &["lm3s6965evb/small"],
            ),
            (
                &["--model", "sp4096"],
                FirstPerMachine,
                &["lm3s6965evb/sp4096"],
            ),
            (
                &["--model", "mistral"],
                FirstPerMachine,
                &["mps2-an385/mistral"],
            ),
            (
                &["--machine", lm3s, "--machine", mps2],
                FirstPerMachine,
                &["lm3s6965evb/small", "mps2-an385/gpt2"],
            ),
        ];
        for &(args, selection, expected) in cases {
            if let Some(got) = labels(args, selection) {
                assert_eq!(got, expected, "{args:?}");
            }
        }
        let args: Vec<String> = ["--model", "mistral", "--machine", lm3s]
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert!(parse_options(&args, All).is_err());
        let args: Vec<String> = ["--model", "minilm", "--machine", lm3s]
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert!(parse_options(&args, All).is_err());
        let args: Vec<String> = ["--model", "ug8000", "--machine", lm3s]
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert!(parse_options(&args, All).is_err());
        let args: Vec<String> = ["--model", "sp-nfkc", "--machine", lm3s]
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert!(parse_options(&args, All).is_err());
    }
}
