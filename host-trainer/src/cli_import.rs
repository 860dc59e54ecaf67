//! `host-trainer import`: tiktoken rank file, Mistral's `tekken.json`, HF vocab.json + merges.txt, SentencePiece
//! `tokenizer.model`, BERT `vocab.txt`, or an HF `tokenizer.json` (byte-level BPE such as
//! Llama 3 and Qwen2, SentencePiece-style BPE or Unigram, WordPiece; parsed once, then given
//! to the importer of its family) → `.model`, with the special tokens the model adds around a
//! text (`encode --add-special-tokens`): the `tokenizer.json` post-processor, BOS for a
//! `tokenizer.model` (transformers' `LlamaTokenizer`), `[CLS] $A [SEP]` for a `vocab.txt`
//! (`BertTokenizer`), BOS for a `tekken.json`, none for tiktoken and `vocab.json` + `merges.txt`.

use std::fmt::Display;
use std::path::PathBuf;

use clap::Args;
use picobpe::normalizer::UnicodeForm;
use picobpe_model::normalizer;
use picobpe_model::sentencepiece::{self, SpKind};
use picobpe_model::tokenizer_json::Family;
use picobpe_model::{import, wordpiece, AnyModel, PatternKind, TemplateData, TokenizerJson};

/// Arguments of `import`.
#[derive(Args)]
pub struct ImportArgs {
    /// tiktoken rank file (`<base64> <rank>` lines).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["vocab", "merges"], required_unless_present_any = ["vocab", "sentencepiece", "tokenizer_json", "wordpiece_vocab", "tekken"])]
    tiktoken: Option<PathBuf>,
    /// Mistral's `tekken.json` (Mistral NeMo, Ministral, Pixtral): pattern, vocabulary and
    /// special tokens come from the file, as `mistral-common` reads it. Its `Tekkenizer` never
    /// reads special-token text: encode with --ordinary for its ids.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tiktoken", "vocab", "merges", "sentencepiece", "tokenizer_json", "wordpiece_vocab", "pattern", "specials"])]
    tekken: Option<PathBuf>,
    /// SentencePiece `tokenizer.model`, BPE (Llama 2, TinyLlama, llama2.c) or Unigram (T5
    /// family).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tiktoken", "vocab", "merges", "tokenizer_json", "pattern", "specials"])]
    sentencepiece: Option<PathBuf>,
    /// Hugging Face `tokenizer.json`: byte-level BPE (Llama 3, Qwen2, GPT-2 style; pattern and
    /// special tokens come from the file) or SentencePiece-style BPE (`▁` pieces, byte
    /// fallback).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tiktoken", "vocab", "merges", "pattern", "specials"])]
    tokenizer_json: Option<PathBuf>,
    /// With --tiktoken or --vocab: the Unicode normalization the model's own tokenizer applies
    /// before splitting (nfc, nfd, nfkc or nfkd; Qwen's `qwen.tiktoken` needs nfc). A
    /// `tokenizer.json` names its own.
    #[arg(long, value_name = "FORM", value_parser = parse_normalizer, conflicts_with_all = ["sentencepiece", "tokenizer_json", "wordpiece_vocab"])]
    normalizer: Option<UnicodeForm>,
    /// BERT WordPiece `vocab.txt` (one entry per line): BERT's uncased settings unless
    /// --cased.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tiktoken", "vocab", "merges", "sentencepiece", "tokenizer_json", "pattern", "specials"])]
    wordpiece_vocab: Option<PathBuf>,
    /// With --wordpiece-vocab: a cased model (no lowercasing, no accent stripping).
    #[arg(long, requires = "wordpiece_vocab")]
    cased: bool,
    /// HF vocab.json (GPT-2 byte-level spelling).
    #[arg(long, value_name = "FILE", requires = "merges")]
    vocab: Option<PathBuf>,
    /// HF merges.txt.
    #[arg(long, value_name = "FILE", requires = "vocab")]
    merges: Option<PathBuf>,
    /// Pre-tokenization pattern: gpt2, cl100k, o200k, llama3, qwen2 or tekken (--tiktoken needs
    /// it or --regex; default gpt2 for --vocab).
    #[arg(long)]
    pattern: Option<PatternKind>,
    /// With --tiktoken or --vocab: any other pre-tokenization regex (tiktoken's `pat_str`, as
    /// `fancy-regex` reads it), compiled into an automaton the core walks.
    #[arg(long, value_name = "REGEX", conflicts_with_all = ["pattern", "sentencepiece", "tokenizer_json", "wordpiece_vocab", "tekken"])]
    regex: Option<String>,
    /// Special token: `TEXT=ID` with --tiktoken, `TEXT` (looked up in vocab.json) with --vocab.
    /// Repeat for several.
    #[arg(long = "special", value_name = "SPECIAL")]
    specials: Vec<String>,
    /// Output model file.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// Run `import`: the model of whichever input was given, written to `--out` with its template
/// and reported in one line.
pub fn run(args: ImportArgs) -> Result<(), String> {
    let read = |path: &PathBuf| std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()));
    let at = |path: &PathBuf, e: &dyn Display| format!("{}: {e}", path.display());
    let (model, template) = if let Some(path) = &args.wordpiece_vocab {
        let options = wordpiece::VocabTxtOptions {
            lowercase: !args.cased,
            strip_accents: None,
        };
        let model =
            wordpiece::import_vocab_txt(&read(path)?, &options).map_err(|e| at(path, &e))?;
        let template = TemplateData::bert(&model);
        (AnyModel::WordPiece(model), template)
    } else if let Some(path) = &args.tokenizer_json {
        // One parse, then the importer of the file's family.
        let file = TokenizerJson::parse(&read(path)?)
            .map_err(|e| format!("{}: not a tokenizer.json: {e}", path.display()))?;
        let template = TemplateData::from_tokenizer_json(&file).map_err(|e| at(path, &e))?;
        let (model, mut notes) = match file.family() {
            Family::WordPiece => {
                let i = wordpiece::import_tokenizer_json(&file).map_err(|e| at(path, &e))?;
                (AnyModel::WordPiece(i.model), i.notes)
            }
            Family::ByteLevel => {
                let i = import::tokenizer_json(&file).map_err(|e| at(path, &e))?;
                (AnyModel::BytePair(i.model), i.notes)
            }
            Family::SentencePiece => {
                let m = sentencepiece::import_tokenizer_json(&file).map_err(|e| at(path, &e))?;
                (AnyModel::SentencePiece(m), Vec::new())
            }
        };
        if !template.is_empty() {
            notes.push(format!(
                "post-processor template {:?} is not applied unless you encode with \
                 --add-special-tokens",
                describe(&model, &template)
            ));
        }
        for note in notes {
            eprintln!("note: {}: {note}", path.display());
        }
        (model, template)
    } else if let Some(path) = &args.tekken {
        let i = import::tekken(&read(path)?).map_err(|e| at(path, &e))?;
        let mut model = i.model;
        model.normalizer = args.normalizer;
        (AnyModel::BytePair(model), i.template)
    } else if let Some(path) = &args.sentencepiece {
        let bytes = read(path)?;
        let model = sentencepiece::import_model_proto(&bytes).map_err(|e| at(path, &e))?;
        let template = TemplateData::from_model_proto(&bytes).map_err(|e| at(path, &e))?;
        (AnyModel::SentencePiece(model), template)
    } else {
        if args.tiktoken.is_some() && args.pattern.is_none() && args.regex.is_none() {
            return Err("--tiktoken needs --pattern NAME or --regex REGEX".to_owned());
        }
        let pattern = args.pattern.unwrap_or(PatternKind::Gpt2);
        let mut model = if let Some(rank_file) = &args.tiktoken {
            let specials = args
                .specials
                .iter()
                .map(|s| parse_special(s))
                .collect::<Result<Vec<_>, _>>()?;
            import::tiktoken(&read(rank_file)?, pattern, &specials)
                .map_err(|e| at(rank_file, &e))?
        } else {
            let (Some(vocab), Some(merges)) = (&args.vocab, &args.merges) else {
                return Err("give --tiktoken FILE, or --vocab FILE and --merges FILE".to_owned());
            };
            import::hf(&read(vocab)?, &read(merges)?, pattern, &args.specials)
                .map_err(|e| e.to_string())?
        };
        if let Some(regex) = &args.regex {
            model = import::with_regex(model, regex).map_err(|e| e.to_string())?;
        }
        model.normalizer = args.normalizer;
        (AnyModel::BytePair(model), TemplateData::default())
    };
    let out = &args.out;
    model
        .write(out, &template)
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let summary = match &model {
        AnyModel::BytePair(m) => format!(
            "{} ids, {} merges, {} special tokens, {}, {} semantics{}",
            m.n_ids(),
            m.merges.len(),
            m.specials.len(),
            match m.splits.len() {
                0 => format!("pattern {}", m.pattern),
                n => format!(
                    "{n} compiled split pattern{}",
                    if n == 1 { "" } else { "s" }
                ),
            },
            if m.whole_piece {
                "whole-piece (tiktoken)"
            } else {
                "pair (merges list)"
            },
            match m.normalizer {
                Some(form) => format!(", normalizer {}", normalizer::name(form)),
                None if m.prefix_space => ", a prefix space (add_prefix_space)".to_owned(),
                None => String::new(),
            }
        ),
        AnyModel::SentencePiece(m) => {
            let count = |kind| m.pieces.iter().filter(|p| p.kind == kind).count();
            format!(
                "SentencePiece {}, {} ids ({} byte pieces, {} control, {} user-defined), byte fallback {}",
                if m.unigram { "Unigram" } else { "BPE" },
                m.n_ids(),
                count(SpKind::Byte),
                count(SpKind::Control),
                count(SpKind::UserDefined),
                if m.byte_fallback { "on" } else { "off" },
            )
        }
        AnyModel::WordPiece(m) => format!(
            "WordPiece, {} ids, {}, {} added tokens",
            m.n_ids(),
            if m.lowercase { "uncased" } else { "cased" },
            m.specials.len()
        ),
    };
    println!("wrote {}: {summary}", out.display());
    if !template.is_empty() {
        println!("with --add-special-tokens: {}", describe(&model, &template));
    }
    Ok(())
}

/// A template as the text of its tokens around `$A`: `[CLS] $A [SEP]`.
pub fn describe(model: &AnyModel, template: &TemplateData) -> String {
    let text = |&id: &u32| {
        let i = id as usize;
        let text = match model {
            AnyModel::BytePair(m) => m.tokens.get(i).map(|t| String::from_utf8_lossy(t).into()),
            AnyModel::SentencePiece(m) => m.pieces.get(i).map(|p| p.piece.clone()),
            AnyModel::WordPiece(m) => m.vocab.get(i).cloned(),
        };
        text.unwrap_or_else(|| id.to_string())
    };
    let prefix = template.prefix.iter().map(text);
    let suffix = template.suffix.iter().map(text);
    let all: Vec<String> = prefix.chain(["$A".to_owned()]).chain(suffix).collect();
    all.join(" ")
}

/// `TEXT=ID`, split at the last `=` (the text may contain `=`).
fn parse_special(arg: &str) -> Result<(String, u32), String> {
    let (text, id) = arg
        .rsplit_once('=')
        .ok_or_else(|| format!("--special {arg:?}: expected TEXT=ID with --tiktoken"))?;
    let id = id
        .parse()
        .map_err(|_| format!("--special {arg:?}: {id:?} is not an id (0..=4294967294)"))?;
    Ok((text.to_owned(), id))
}

/// `--normalizer`: a Unicode normalization form by name.
fn parse_normalizer(name: &str) -> Result<UnicodeForm, String> {
    normalizer::parse(name).ok_or_else(|| format!("{name:?}: expected nfc, nfd, nfkc or nfkd"))
}
