//! WordPiece imports: a BERT `vocab.txt` with the settings given by the caller, or a parsed
//! Hugging Face `tokenizer.json` whose model is `WordPiece`.
//!
//! What a `tokenizer.json` may hold is what picobpe reproduces: normalizer `BertNormalizer`
//! (or none), pre-tokenizer `BertPreTokenizer`, decoder `WordPiece` (a file with none is
//! refused: `tokenizers` would join the tokens with spaces); added tokens by the rule of
//! [`TokenizerJson`]. The post-processor (BERT's `[CLS] $A [SEP]` template) is
//! not part of the model: [`TemplateData::from_tokenizer_json`] reads it. Everything else is
//! refused with an error that names it.

use picobpe::normalizer::UnicodeForm;
use picobpe::wordpiece::{CharRule, Spaces, WordSplit};

use super::{InvalidWpModel, WpModel};
use crate::format::TemplateData;
use crate::tokenizer_json::{
    bad, bad_steps, by_id, known, Decoder, ModelJson, Normalizer, Part, PreTokenizer, Refused,
    TokenizerJson,
};

/// Why a WordPiece import failed.
#[derive(Debug, thiserror::Error)]
pub enum WpImportError {
    /// A part of the file picobpe does not reproduce, or a malformed one.
    #[error(transparent)]
    Unsupported(#[from] Refused),
    /// The imported model breaks an invariant.
    #[error("imported model is invalid: {0}")]
    Invalid(#[from] InvalidWpModel),
}

/// A model imported from a file, with what the import chose not to apply.
#[derive(Debug)]
pub struct WpImport {
    /// The validated model.
    pub model: WpModel,
    /// One line per part of the file that is not applied (none today).
    pub notes: Vec<String>,
}

/// The settings a `vocab.txt` does not carry: those of BERT's `BertTokenizer` by default
/// (uncased: lowercase and strip accents; `[UNK]`, `##`, 100 characters per word; the tokens
/// `[PAD] [UNK] [CLS] [SEP] [MASK]` as added tokens when the vocabulary has them).
#[derive(Clone, Debug)]
pub struct VocabTxtOptions {
    /// Lowercase (and, unless `strip_accents` says otherwise, strip accents).
    pub lowercase: bool,
    /// `None`: follow `lowercase`, as BERT does.
    pub strip_accents: Option<bool>,
}

impl Default for VocabTxtOptions {
    fn default() -> Self {
        VocabTxtOptions {
            lowercase: true,
            strip_accents: None,
        }
    }
}

/// The added tokens BERT's tokenizer registers.
const BERT_SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// A model from a `vocab.txt` (one entry per line, the id is the line number from 0; trailing
/// whitespace is dropped, as `tokenizers` does).
pub fn import_vocab_txt(text: &[u8], options: &VocabTxtOptions) -> Result<WpModel, WpImportError> {
    let text = std::str::from_utf8(text).map_err(|e| bad("vocab.txt", e.to_string()))?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    let vocab: Vec<String> = text.split('\n').map(|l| l.trim_end().to_owned()).collect();
    let id_of = |entry: &str| vocab.iter().position(|v| v == entry).map(|i| i as u32);
    let unk_id = id_of("[UNK]").ok_or_else(|| bad("vocab.txt", "no [UNK] entry"))?;
    let specials = BERT_SPECIALS
        .iter()
        .filter_map(|s| id_of(s).map(|id| ((*s).to_owned(), id)))
        .collect();
    let model = WpModel::bert(
        vocab,
        unk_id,
        "##".to_owned(),
        options.lowercase,
        options.strip_accents.unwrap_or(options.lowercase),
        specials,
    );
    model.validate()?;
    Ok(model)
}

/// A model from a `tokenizer.json` whose model is `WordPiece` (see the module docs).
pub fn import_tokenizer_json(file: &TokenizerJson) -> Result<WpImport, WpImportError> {
    let ModelJson::WordPiece(model) = &file.model else {
        let what = format!("{:?}: not WordPiece", file.model.name());
        return Err(bad("model.type", what).into());
    };
    let vocab = by_id(&model.vocab).map_err(|e| bad("model.vocab", e))?;
    let unk = &model.unk_token;
    let unk_id = vocab.iter().position(|v| v == unk).ok_or_else(|| {
        let what = format!("{unk:?} is not in the vocabulary");
        bad("model.unk_token", what)
    })? as u32;
    let prefix = model.continuing_subword_prefix.as_deref().unwrap_or("##");
    let max_chars_per_word = model.max_input_chars_per_word.unwrap_or(100);
    // A normalizer other than `BertNormalizer`: a Unicode form alone, or character steps
    // (`NFD` + `Lowercase` + `StripAccents`, as `tokenizers`' guides build it).
    let names: Vec<&str> = file
        .normalizer
        .iter()
        .map(crate::sentencepiece::normalizer_step)
        .collect();
    let (mut normalizer, mut char_steps) = (None, crate::normalizer::CharSteps::default());
    match crate::sentencepiece::char_chain(&names) {
        Some((chain, form, false, n)) if n == names.len() && !chain.quotes => {
            if chain.normalizer(form, false).is_none() {
                let why = "supported: StripAccents and Lowercase alone or after NFD or NFKD \
                           with StripAccents, and Lowercase alone after any form but Nmt (not \
                           yet StripAccents after NFC or NFKC)";
                return Err(bad_steps("normalizer", &file.normalizer, why).into());
            }
            (normalizer, char_steps) = (form, chain);
        }
        _ => {
            if let [form] = names[..] {
                normalizer = crate::normalizer::parse(form).filter(|f| *f != UnicodeForm::NmtNfkc);
            }
        }
    }
    let bert_flags = normalizer.is_none() && !char_steps.any();
    let (clean_text, handle_chinese_chars, strip_accents, lowercase) =
        match known(&file.normalizer)[..] {
            _ if !bert_flags => (false, false, false, false),
            [] => (false, false, false, false),
            [Some(Normalizer::Bert(n))] => {
                let lowercase = n.lowercase.unwrap_or(true);
                let on = |flag: Option<bool>| flag.unwrap_or(true);
                let strip = n.strip_accents.unwrap_or(lowercase);
                (
                    on(n.clean_text),
                    on(n.handle_chinese_chars),
                    strip,
                    lowercase,
                )
            }
            _ => {
                let why = "not supported (BertNormalizer, one Unicode form, StripAccents and \
                           Lowercase after NFD or NFKD, or none is)";
                return Err(bad_steps("normalizer", &file.normalizer, why).into());
            }
        };
    let split = word_split(&file.pre_tokenizer)?;
    let cleanup = match known(&file.decoder)[..] {
        [] => return Err(bad("decoder", NO_DECODER).into()),
        [Some(Decoder::WordPiece { prefix: p, cleanup })] => {
            if p.as_deref().unwrap_or("##") != prefix {
                return Err(bad("decoder", "its prefix is not the model's").into());
            }
            cleanup.unwrap_or(true)
        }
        _ => return Err(bad_steps("decoder", &file.decoder, "not supported").into()),
    };
    let (specials, strips) = file.added_tokens().map_err(|e| bad("added_tokens", e))?;
    let model = WpModel {
        vocab,
        unk_id,
        prefix: prefix.to_owned(),
        max_chars_per_word: max_chars_per_word.min(u64::from(u32::MAX)) as u32,
        clean_text,
        handle_chinese_chars,
        strip_accents,
        lowercase,
        cleanup,
        specials,
        normalizer,
        char_steps,
        split,
        strips,
    };
    model.validate()?;
    let notes = Vec::new();
    Ok(WpImport { model, notes })
}

impl TemplateData {
    /// What transformers' `BertTokenizer` adds around the ids of one text of a `vocab.txt`
    /// model: `[CLS] $A [SEP]` (nothing when the vocabulary lacks either).
    pub fn bert(model: &WpModel) -> TemplateData {
        let id = |entry| model.id_of(entry).map(|id| vec![id]);
        match (id("[CLS]"), id("[SEP]")) {
            (Some(prefix), Some(suffix)) => TemplateData { prefix, suffix },
            _ => TemplateData::default(),
        }
    }
}

/// The words of a `tokenizer.json`'s pre-tokenizer: `BertPreTokenizer`, or a `Sequence` of
/// `WhitespaceSplit`, `Whitespace`, `Punctuation` (any behaviour but the two merged ones) and
/// `Digits`, each at most once (see `picobpe::wordpiece::WordSplit` for why their order does
/// not matter).
/// Why a file with no decoder is refused.
const NO_DECODER: &str = "none: tokenizers decodes the ids as the tokens joined by spaces, \
                          continuation prefixes kept; not supported (a WordPiece decoder is)";

pub(crate) fn word_split(steps: &[Part<PreTokenizer>]) -> Result<WordSplit, Refused> {
    let refuse = |why: &str| Err(bad_steps("pre_tokenizer", steps, why));
    const WHY: &str = "supported: BertPreTokenizer, or WhitespaceSplit or Whitespace, \
                       Punctuation (isolated, contiguous or removed) and Digits, each at most once";
    if steps.is_empty() {
        return Err(bad("pre_tokenizer", "missing"));
    }
    if let [Part {
        known: Some(PreTokenizer::Bert),
        ..
    }] = steps
    {
        return Ok(WordSplit::BERT);
    }
    let (mut spaces, mut punctuation, mut digits) = (None, None, None);
    for step in steps {
        let fresh = match &step.known {
            Some(PreTokenizer::WhitespaceSplit) => spaces.replace(Spaces::Split).is_none(),
            Some(PreTokenizer::Whitespace) => spaces.replace(Spaces::Words).is_none(),
            Some(PreTokenizer::Punctuation { behavior }) => {
                let rule = match behavior.as_deref().unwrap_or("Isolated") {
                    "Isolated" => CharRule::Isolated,
                    "Contiguous" => CharRule::Contiguous,
                    "Removed" => CharRule::Removed,
                    _ => return refuse(WHY),
                };
                punctuation.replace(rule).is_none()
            }
            Some(PreTokenizer::Digits { individual_digits }) => {
                let rule = if individual_digits.unwrap_or(false) {
                    CharRule::Isolated
                } else {
                    CharRule::Contiguous
                };
                digits.replace(rule).is_none()
            }
            _ => false,
        };
        if !fresh {
            return refuse(WHY);
        }
    }
    Ok(WordSplit::new(
        spaces.unwrap_or(Spaces::Kept),
        punctuation.unwrap_or(CharRule::Off),
        digits.unwrap_or(CharRule::Off),
    ))
}
