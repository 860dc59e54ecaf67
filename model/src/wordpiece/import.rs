//! WordPiece imports: a BERT `vocab.txt` with the settings given by the caller, or a Hugging
//! Face `tokenizer.json` whose model is `WordPiece`.
//!
//! What a `tokenizer.json` may hold is what picobpe reproduces: normalizer `BertNormalizer`
//! (or none), pre-tokenizer `BertPreTokenizer`, decoder `WordPiece` (or none); added tokens
//! without `lstrip`, `rstrip`, `single_word` and, unless special, not `normalized`. A
//! post-processor (BERT's `[CLS] $A [SEP]` template) is not applied and is reported in
//! [`WpImport::notes`]. Everything else is refused with an error that names it.

use core::fmt;

use serde_json::Value;

use super::{InvalidWpModel, WpModel};

/// Why a WordPiece import failed.
#[derive(Debug)]
pub enum WpImportError {
    /// The file is not JSON.
    Json(serde_json::Error),
    /// A part of the file picobpe does not reproduce, or a malformed one.
    Unsupported {
        /// Where: `model`, `normalizer`, ...
        at: &'static str,
        /// What is there and why it is refused.
        what: String,
    },
    /// The imported model breaks an invariant.
    Invalid(InvalidWpModel),
}

impl fmt::Display for WpImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WpImportError::Json(e) => write!(f, "JSON: {e}"),
            WpImportError::Unsupported { at, what } => write!(f, "tokenizer.json {at}: {what}"),
            WpImportError::Invalid(e) => write!(f, "imported model is invalid: {e}"),
        }
    }
}

impl std::error::Error for WpImportError {}

impl From<InvalidWpModel> for WpImportError {
    fn from(e: InvalidWpModel) -> Self {
        WpImportError::Invalid(e)
    }
}

fn bad(at: &'static str, what: impl Into<String>) -> WpImportError {
    WpImportError::Unsupported {
        at,
        what: what.into(),
    }
}

/// A model imported from a file, with what the import chose not to apply.
#[derive(Debug)]
pub struct WpImport {
    /// The validated model.
    pub model: WpModel,
    /// One line per part of the file that is not applied (a post-processor template).
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
    let model = WpModel {
        vocab,
        unk_id,
        prefix: "##".to_owned(),
        max_chars_per_word: 100,
        clean_text: true,
        handle_chinese_chars: true,
        strip_accents: options.strip_accents.unwrap_or(options.lowercase),
        lowercase: options.lowercase,
        cleanup: true,
        specials,
    };
    model.validate()?;
    Ok(model)
}

/// True when a `tokenizer.json`'s model is `WordPiece`.
pub fn is_wordpiece_json(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|root| root.get("model").map(|m| type_of(m) == "WordPiece"))
        .unwrap_or(false)
}

fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

fn flag(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

/// A model from a `tokenizer.json` whose model is `WordPiece` (see the module docs).
pub fn import_tokenizer_json(bytes: &[u8]) -> Result<WpImport, WpImportError> {
    let root: Value = serde_json::from_slice(bytes).map_err(WpImportError::Json)?;
    let mut notes = Vec::new();
    let model = root.get("model").ok_or_else(|| bad("model", "missing"))?;
    if type_of(model) != "WordPiece" {
        return Err(bad(
            "model.type",
            format!("{:?}: not WordPiece", type_of(model)),
        ));
    }
    let map = model
        .get("vocab")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("model.vocab", "missing or not an object"))?;
    let mut vocab: Vec<Option<String>> = vec![None; map.len()];
    for (entry, id) in map {
        let id = id
            .as_u64()
            .map(|id| id as usize)
            .filter(|&id| id < map.len())
            .ok_or_else(|| {
                bad(
                    "model.vocab",
                    format!("id of {entry:?} is not in 0..{}", map.len()),
                )
            })?;
        if vocab[id].replace(entry.clone()).is_some() {
            return Err(bad("model.vocab", format!("id {id} is given twice")));
        }
    }
    let vocab: Vec<String> = vocab.into_iter().map(Option::unwrap_or_default).collect();
    let unk = model
        .get("unk_token")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("model.unk_token", "missing"))?;
    let unk_id = vocab.iter().position(|v| v == unk).ok_or_else(|| {
        bad(
            "model.unk_token",
            format!("{unk:?} is not in the vocabulary"),
        )
    })? as u32;
    let prefix = model
        .get("continuing_subword_prefix")
        .and_then(Value::as_str)
        .unwrap_or("##")
        .to_owned();
    let max_chars_per_word = model
        .get("max_input_chars_per_word")
        .and_then(Value::as_u64)
        .unwrap_or(100)
        .min(u64::from(u32::MAX)) as u32;

    // Normalizer.
    let (clean_text, handle_chinese_chars, strip_accents, lowercase) = match root.get("normalizer")
    {
        None | Some(Value::Null) => (false, false, false, false),
        Some(n) if type_of(n) == "BertNormalizer" => {
            let lowercase = flag(n, "lowercase").unwrap_or(true);
            (
                flag(n, "clean_text").unwrap_or(true),
                flag(n, "handle_chinese_chars").unwrap_or(true),
                flag(n, "strip_accents").unwrap_or(lowercase),
                lowercase,
            )
        }
        Some(n) => {
            return Err(bad(
                "normalizer",
                format!(
                    "{:?}: not supported (BertNormalizer or none is)",
                    type_of(n)
                ),
            ))
        }
    };
    match root.get("pre_tokenizer") {
        Some(p) if type_of(p) == "BertPreTokenizer" => {}
        Some(p) => {
            return Err(bad(
                "pre_tokenizer",
                format!("{:?}: only BertPreTokenizer is supported", type_of(p)),
            ))
        }
        None => return Err(bad("pre_tokenizer", "missing")),
    }
    let cleanup = match root.get("decoder") {
        None | Some(Value::Null) => false,
        Some(d) if type_of(d) == "WordPiece" => {
            if d.get("prefix").and_then(Value::as_str).unwrap_or("##") != prefix {
                return Err(bad("decoder", "its prefix is not the model's"));
            }
            flag(d, "cleanup").unwrap_or(true)
        }
        Some(d) => return Err(bad("decoder", format!("{:?}: not supported", type_of(d)))),
    };
    match root.get("post_processor") {
        None | Some(Value::Null) => {}
        Some(p) => notes.push(format!(
            "post-processor {:?} is not applied: ids are those of encode(text, \
             add_special_tokens=False); add [CLS] / [SEP] yourself",
            type_of(p)
        )),
    }
    let mut specials = Vec::new();
    for t in root
        .get("added_tokens")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let content = t
            .get("content")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .ok_or_else(|| bad("added_tokens", format!("{t}: no content")))?;
        let id = t
            .get("id")
            .and_then(Value::as_u64)
            .and_then(|id| u32::try_from(id).ok())
            .ok_or_else(|| bad("added_tokens", format!("{content:?}: no id")))?;
        for key in ["lstrip", "rstrip", "single_word"] {
            if flag(t, key) == Some(true) {
                return Err(bad(
                    "added_tokens",
                    format!("{content:?}: {key} is not supported"),
                ));
            }
        }
        if flag(t, "special") != Some(true) && flag(t, "normalized") == Some(true) {
            return Err(bad(
                "added_tokens",
                format!("{content:?}: a normalized non-special token is not supported"),
            ));
        }
        specials.push((content.to_owned(), id));
    }
    let model = WpModel {
        vocab,
        unk_id,
        prefix,
        max_chars_per_word,
        clean_text,
        handle_chinese_chars,
        strip_accents,
        lowercase,
        cleanup,
        specials,
    };
    model.validate()?;
    Ok(WpImport { model, notes })
}
