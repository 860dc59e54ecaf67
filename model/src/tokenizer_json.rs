//! The `tokenizer.json` reader: the file of Hugging Face `tokenizers` as serde types, parsed
//! once ([`TokenizerJson::parse`]) and handed to the importer of its [`Family`]:
//! [`crate::import::tokenizer_json`] (byte-level BPE),
//! [`crate::sentencepiece::import_tokenizer_json`] (SentencePiece-style BPE and Unigram) or
//! [`crate::wordpiece::import_tokenizer_json`] (WordPiece).
//!
//! The model is a `#[serde(tag = "type")]` enum of the three types picobpe imports; any other
//! type is kept by name, for the refusal. Each other stage (normalizer, pre-tokenizer,
//! post-processor, decoder) is read as its list of steps, as `tokenizers` runs it: none when
//! the stage is absent or null, the steps of a `Sequence` (nested ones flattened), else the
//! stage itself. Each step is a `Part`: parsed into a tagged enum when it is a kind picobpe
//! reads, and always kept as written, so that an importer refuses a kind it does not reproduce
//! (or a known kind with fields of another shape) by its name and its JSON instead of
//! dropping it.
//!
//! The post-processor becomes the model's [`TemplateData`] here, once for every family
//! ([`TemplateData::from_tokenizer_json`]).
//!
//! The added tokens are checked here, once for every family (`TokenizerJson::added_tokens`):
//! picobpe matches each one whole in the raw text before anything else runs, which is what
//! `tokenizers`' added vocabulary does for a token that is not `single_word` and not
//! `normalized` behind a normalizer (such a token is matched in the normalized text). The
//! byte-level and WordPiece families take `lstrip` and `rstrip` (the special takes the
//! whitespace beside it: `picobpe::special`); the SentencePiece family, whose added tokens
//! are pieces it matches itself, refuses them.

use std::collections::HashMap;

use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use serde_json::Value;

use crate::format::TemplateData;

/// A parsed `tokenizer.json`: its model, pipeline stages and added tokens (other keys are
/// ignored). Give it to the importer of its [`family`](TokenizerJson::family).
#[derive(Debug, Deserialize)]
pub struct TokenizerJson {
    #[serde(deserialize_with = "model")]
    pub(crate) model: ModelJson,
    #[serde(default, deserialize_with = "steps")]
    pub(crate) normalizer: Vec<Part<Normalizer>>,
    #[serde(default, deserialize_with = "steps")]
    pub(crate) pre_tokenizer: Vec<Part<PreTokenizer>>,
    #[serde(default, deserialize_with = "steps")]
    pub(crate) post_processor: Vec<Part<PostProcessor>>,
    #[serde(default, deserialize_with = "steps")]
    pub(crate) decoder: Vec<Part<Decoder>>,
    added_tokens: Option<Vec<AddedToken>>,
}

/// A part of a `tokenizer.json` that picobpe does not reproduce, or a malformed one: the error
/// every importer of the file gives for it.
#[derive(Debug, thiserror::Error)]
#[error("tokenizer.json {at}: {what}")]
pub struct Refused {
    /// Where: `model`, `normalizer`, `pre_tokenizer`, ...
    pub at: &'static str,
    /// What is there and why it is refused.
    pub what: String,
}

/// A [`Refused`]: `what` is at `at`.
pub(crate) fn bad(at: &'static str, what: impl Into<String>) -> Refused {
    let what = what.into();
    Refused { at, what }
}

/// A [`Refused`] for a stage's steps, named by their kinds: `"NFC + NFKC": {why}`.
pub(crate) fn bad_steps<K>(at: &'static str, steps: &[Part<K>], why: &str) -> Refused {
    let kinds: Vec<&str> = steps.iter().map(Part::kind).collect();
    bad(at, format!("{:?}: {why}", kinds.join(" + ")))
}

/// Which importer reads a [`TokenizerJson`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// BPE over GPT-2 byte-level symbols (a `ByteLevel` pre-tokenizer or decoder, no byte
    /// fallback): [`crate::import::tokenizer_json`].
    ByteLevel,
    /// Any other BPE, and Unigram: [`crate::sentencepiece::import_tokenizer_json`] (which
    /// also refuses, by name, a model type no importer reads).
    SentencePiece,
    /// WordPiece: [`crate::wordpiece::import_tokenizer_json`].
    WordPiece,
}

impl TokenizerJson {
    /// Parse a `tokenizer.json`. An error means the file is not JSON of that shape, or that
    /// its BPE, Unigram or WordPiece model is malformed.
    pub fn parse(bytes: &[u8]) -> Result<TokenizerJson, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The importer for this file.
    pub fn family(&self) -> Family {
        let kinds = self.pre_tokenizer.iter().map(Part::kind);
        let byte_level = { kinds }
            .chain(self.decoder.iter().map(Part::kind))
            .any(|k| k == "ByteLevel");
        match &self.model {
            ModelJson::WordPiece(_) => Family::WordPiece,
            ModelJson::Bpe(m) if !m.byte_fallback && byte_level => Family::ByteLevel,
            _ => Family::SentencePiece,
        }
    }

    /// The added tokens as `(content, id)`, in file order, each matched whole in the raw text
    /// (see the module docs), and the `(id, bits)` of those that take the whitespace beside
    /// them ([`crate::Model::strips`]), in id order. `Err` names a token picobpe would match
    /// differently: `single_word`, or `normalized` behind a normalizer.
    pub(crate) fn added_tokens(&self) -> Result<AddedTokens, String> {
        self.added_tokens_matched(false)
    }

    /// True when the file has a normalizer and added tokens, and every one of them is marked
    /// `normalized`: `tokenizers` finds them all in the normalized text.
    pub(crate) fn added_tokens_all_normalized(&self) -> bool {
        let mut tokens = self.added_tokens.iter().flatten().peekable();
        !self.normalizer.is_empty()
            && tokens.peek().is_some()
            && tokens.all(|t| t.normalized == Some(true))
    }

    /// [`TokenizerJson::added_tokens`], taking tokens marked `normalized` too when
    /// `in_normalized_text` (the caller matches them all in the normalized text).
    pub(crate) fn added_tokens_matched(
        &self,
        in_normalized_text: bool,
    ) -> Result<AddedTokens, String> {
        use picobpe::special::{LSTRIP, RSTRIP};
        let (mut tokens, mut bits) = (Vec::new(), Vec::new());
        for t in self.added_tokens.iter().flatten() {
            let normalized =
                (t.normalized).filter(|_| !self.normalizer.is_empty() && !in_normalized_text);
            let (lstrip, rstrip) = (t.lstrip == Some(true), t.rstrip == Some(true));
            let flags = [
                ("single_word", t.single_word == Some(true)),
                ("normalized", normalized == Some(true)),
            ];
            if t.content.is_empty() {
                return Err(format!("id {}: no content", t.id));
            }
            if let Some((key, _)) = flags.into_iter().find(|f| f.1) {
                return Err(format!("{:?}: {key} is not supported", t.content));
            }
            let b = if lstrip { LSTRIP } else { 0 } | if rstrip { RSTRIP } else { 0 };
            if b != 0 {
                bits.push((t.id, b));
            }
            tokens.push((t.content.clone(), t.id));
        }
        bits.sort_unstable();
        Ok((tokens, bits))
    }

    /// The contents of the added tokens not marked `special`.
    pub(crate) fn plain_added_tokens(&self) -> Vec<&str> {
        let tokens = self.added_tokens.iter().flatten();
        tokens
            .filter(|t| t.special != Some(true))
            .map(|t| t.content.as_str())
            .collect()
    }
}

/// The added tokens `(content, id)` and the strip bits of those that take whitespace
/// ([`TokenizerJson::added_tokens`]).
pub(crate) type AddedTokens = (Vec<(String, u32)>, Vec<(u32, u8)>);

/// The model: one of the types picobpe imports, or another by name.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum ModelJson {
    #[serde(rename = "BPE")]
    Bpe(Bpe),
    Unigram(Unigram),
    WordPiece(WordPiece),
    #[serde(skip)]
    Other(String),
}

impl ModelJson {
    /// The model's `"type"`.
    pub(crate) fn name(&self) -> &str {
        match self {
            ModelJson::Bpe(_) => "BPE",
            ModelJson::Unigram(_) => "Unigram",
            ModelJson::WordPiece(_) => "WordPiece",
            ModelJson::Other(name) => name,
        }
    }
}

/// `model`: a known type parsed (its errors are the file's), any other kept by name.
fn model<'de, D: Deserializer<'de>>(d: D) -> Result<ModelJson, D::Error> {
    let raw = Value::deserialize(d)?;
    match raw.get("type").and_then(Value::as_str).unwrap_or("") {
        "BPE" | "Unigram" | "WordPiece" => {
            ModelJson::deserialize(&raw).map_err(|e| D::Error::custom(format_args!("model: {e}")))
        }
        other => Ok(ModelJson::Other(other.to_owned())),
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct Bpe {
    pub(crate) vocab: HashMap<String, u32>,
    merges: Vec<Merge>,
    dropout: Option<f64>,
    continuing_subword_prefix: Option<String>,
    end_of_word_suffix: Option<String>,
    #[serde(default)]
    pub(crate) byte_fallback: bool,
    #[serde(default)]
    pub(crate) ignore_merges: bool,
    pub(crate) unk_token: Option<String>,
    /// A run of unknown characters is one `<unk>` (false, the default: one per character).
    #[serde(default)]
    pub(crate) fuse_unk: bool,
}

/// A merge: `"left right"` (tokenizers before 0.20) or `[left, right]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Merge {
    Text(String),
    Pair(String, String),
}

impl Bpe {
    /// Refuse a setting no importer reproduces (dropout, a subword prefix or suffix).
    pub(crate) fn check(&self) -> Result<(), Refused> {
        self.check_but_suffix()?;
        match self.end_of_word_suffix() {
            Some(v) => Err(bad(
                "model",
                format!("end_of_word_suffix is {v:?}; not supported"),
            )),
            None => Ok(()),
        }
    }

    /// The `end_of_word_suffix`, if it is set and not empty.
    pub(crate) fn end_of_word_suffix(&self) -> Option<&str> {
        self.end_of_word_suffix.as_deref().filter(|v| !v.is_empty())
    }

    /// [`Bpe::check`] but for the end-of-word suffix, which the byte-level importer applies.
    pub(crate) fn check_but_suffix(&self) -> Result<(), Refused> {
        let affix = |key, v: &Option<String>| {
            let v = v.as_deref().filter(|v| !v.is_empty());
            v.map(|v| format!("{key} is {v:?}; not supported"))
        };
        (self
            .dropout
            .map(|d| format!("dropout is {d}; not supported")))
        .or_else(|| affix("continuing_subword_prefix", &self.continuing_subword_prefix))
        .map_or(Ok(()), |what| Err(bad("model", what)))
    }

    /// The merges as `(number, left, right)`, in priority order, numbered from 1.
    pub(crate) fn merges(&self) -> Result<Vec<(usize, &str, &str)>, String> {
        (self.merges.iter().zip(1..))
            .map(|(m, n)| match m {
                Merge::Pair(l, r) => Ok((n, l.as_str(), r.as_str())),
                Merge::Text(s) => (s.split_once(' ').filter(|(_, r)| !r.contains(' ')))
                    .map(|(l, r)| (n, l, r))
                    .ok_or_else(|| format!("merge {n} {s:?} is not two tokens")),
            })
            .collect()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Unigram {
    pub(crate) vocab: Vec<(String, f64)>,
    pub(crate) unk_id: Option<usize>,
    #[serde(default)]
    pub(crate) byte_fallback: bool,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WordPiece {
    pub(crate) vocab: HashMap<String, u32>,
    pub(crate) unk_token: String,
    pub(crate) continuing_subword_prefix: Option<String>,
    pub(crate) max_input_chars_per_word: Option<u64>,
}

/// The entries of a `vocab` map in id order: the ids must be `0..n`.
pub(crate) fn by_id(vocab: &HashMap<String, u32>) -> Result<Vec<String>, String> {
    let n = vocab.len();
    let mut by_id = vec![None; n];
    for (entry, &id) in vocab {
        let slot = by_id.get_mut(id as usize);
        let slot = slot.ok_or_else(|| format!("id of {entry:?} is not in 0..{n}"))?;
        if slot.replace(entry.clone()).is_some() {
            return Err(format!("id {id} is given twice"));
        }
    }
    // n distinct ids below n: every slot is filled.
    Ok(by_id.into_iter().flatten().collect())
}

/// A step of a stage: parsed when it is a kind picobpe reads, and always as written.
#[derive(Debug)]
pub(crate) struct Part<K> {
    pub(crate) known: Option<K>,
    pub(crate) raw: Value,
}

impl<K> Part<K> {
    /// The stage's `"type"` (`""` without one).
    pub(crate) fn kind(&self) -> &str {
        self.raw.get("type").and_then(Value::as_str).unwrap_or("")
    }
}

/// The parsed steps of a stage (`None` for a step of a kind picobpe does not read).
pub(crate) fn known<K>(steps: &[Part<K>]) -> Vec<Option<&K>> {
    steps.iter().map(|s| s.known.as_ref()).collect()
}

/// A stage as its steps (see the module docs).
fn steps<'de, D: Deserializer<'de>, K: DeserializeOwned>(d: D) -> Result<Vec<Part<K>>, D::Error> {
    fn push<K: DeserializeOwned>(raw: Value, steps: &mut Vec<Part<K>>) {
        if raw.get("type").and_then(Value::as_str) == Some("Sequence") {
            let lists = raw.as_object().into_iter().flat_map(|o| o.values());
            for step in lists.filter_map(Value::as_array).flatten() {
                push(step.clone(), steps);
            }
        } else {
            let known = <K as Deserialize<'_>>::deserialize(&raw).ok();
            steps.push(Part { known, raw });
        }
    }
    let mut steps = Vec::new();
    if let Some(raw) = Option::<Value>::deserialize(d)? {
        push(raw, &mut steps);
    }
    Ok(steps)
}

/// A `Split` or `Replace` pattern.
#[derive(Debug, Deserialize)]
pub(crate) enum Pattern {
    String(String),
    Regex(String),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Normalizer {
    #[serde(rename = "NFC")]
    Nfc,
    #[serde(rename = "NFD")]
    Nfd,
    #[serde(rename = "NFKC")]
    Nfkc,
    #[serde(rename = "NFKD")]
    Nfkd,
    /// `sentencepiece`'s `nmt` rule: some controls dropped, some characters made spaces.
    Nmt,
    Prepend {
        prepend: String,
    },
    Strip {
        #[serde(default)]
        strip_left: bool,
        #[serde(default)]
        strip_right: bool,
    },
    Replace {
        pattern: Pattern,
        content: String,
    },
    #[serde(rename = "BertNormalizer")]
    Bert(BertNormalizer),
    /// `char::to_lowercase`, a character at a time.
    Lowercase,
    /// Combining marks dropped.
    StripAccents,
    /// A SentencePiece character map (`precompiled_charsmap`, base64).
    Precompiled {
        precompiled_charsmap: String,
    },
}

#[derive(Debug, Deserialize)]
pub(crate) struct BertNormalizer {
    pub(crate) clean_text: Option<bool>,
    pub(crate) handle_chinese_chars: Option<bool>,
    pub(crate) strip_accents: Option<bool>,
    pub(crate) lowercase: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum PreTokenizer {
    ByteLevel {
        add_prefix_space: Option<bool>,
        use_regex: Option<bool>,
    },
    Split {
        pattern: Pattern,
        behavior: String,
        invert: Option<bool>,
    },
    Metaspace(Metaspace),
    #[serde(rename = "BertPreTokenizer")]
    Bert,
    /// Words are the runs of non-whitespace characters (`char::is_whitespace`).
    WhitespaceSplit,
    /// Words are the matches of `\w+|[^\w\s]+`.
    Whitespace,
    /// Punctuation characters split by `behavior` (`Isolated` when absent).
    Punctuation {
        behavior: Option<String>,
    },
    /// Numeric characters isolated (`individual_digits`) or in runs.
    Digits {
        individual_digits: Option<bool>,
    },
}

/// A `Metaspace` pre-tokenizer (or decoder): spaces become `replacement`, a `replacement` is put
/// before the text by `prepend_scheme` (`add_prefix_space` in files before it existed), and
/// with `split` every `replacement` starts a word.
#[derive(Debug, Deserialize)]
pub(crate) struct Metaspace {
    pub(crate) replacement: String,
    pub(crate) prepend_scheme: Option<String>,
    pub(crate) add_prefix_space: Option<bool>,
    pub(crate) split: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum PostProcessor {
    ByteLevel,
    TemplateProcessing {
        single: Vec<TemplatePiece>,
        special_tokens: HashMap<String, TemplateToken>,
    },
    BertProcessing {
        sep: (String, u32),
        cls: (String, u32),
    },
    RobertaProcessing {
        sep: (String, u32),
        cls: (String, u32),
    },
}

/// A piece of a template: a special token or the sequence (`$A`).
#[derive(Debug, Deserialize)]
pub(crate) enum TemplatePiece {
    SpecialToken { id: String },
    Sequence {},
}

/// A template's special token: the ids it stands for.
#[derive(Debug, Deserialize)]
pub(crate) struct TemplateToken {
    ids: Vec<u32>,
}

impl TemplateData {
    /// The ids `post_processor` adds around the ids of one text, as `tokenizers`'
    /// `encode(text, add_special_tokens=True)` does: the `single` template of
    /// `TemplateProcessing`, `[CLS] $A [SEP]` of `BertProcessing` and `RobertaProcessing`,
    /// nothing for `ByteLevel` or no post-processor; a `Sequence` of these with at most one
    /// that adds ids (Llama 3's `ByteLevel` + `TemplateProcessing`). Only the single-sequence
    /// template is read (picobpe encodes one text). `Err` names a post-processor picobpe does
    /// not read.
    pub fn from_tokenizer_json(file: &TokenizerJson) -> Result<TemplateData, Refused> {
        let bad = |what: String| bad("post_processor", what);
        let mut template = None;
        for step in &file.post_processor {
            let [prefix, suffix] = match &step.known {
                Some(PostProcessor::ByteLevel) => continue,
                Some(
                    PostProcessor::BertProcessing { sep, cls }
                    | PostProcessor::RobertaProcessing { sep, cls },
                ) => [vec![cls.1], vec![sep.1]],
                Some(PostProcessor::TemplateProcessing {
                    single,
                    special_tokens,
                }) => {
                    let (mut sides, mut sequences) = ([Vec::new(), Vec::new()], 0);
                    for piece in single {
                        let TemplatePiece::SpecialToken { id } = piece else {
                            sequences += 1;
                            continue;
                        };
                        let token = special_tokens
                            .get(id)
                            .ok_or_else(|| bad(format!("{id:?} is not in its special_tokens")))?;
                        sides[usize::from(sequences > 0)].extend(&token.ids);
                    }
                    if sequences != 1 {
                        return Err(bad("the single template must hold $A once".into()));
                    }
                    sides
                }
                None => {
                    let (kind, raw) = (step.kind(), &step.raw);
                    return Err(bad(format!("{kind:?} is not supported: {raw}")));
                }
            };
            // tokenizers hands a template's pieces to the next step as separate sequences
            // (a pair, for `RobertaProcessing`): no simple wrapping.
            if template.replace(TemplateData { prefix, suffix }).is_some() {
                let what = "a Sequence of two steps that add ids is not supported";
                return Err(bad(what.into()));
            }
        }
        Ok(template.unwrap_or_default())
    }
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Decoder {
    ByteLevel,
    WordPiece {
        prefix: Option<String>,
        cleanup: Option<bool>,
    },
}

/// One entry of `added_tokens` (a flag absent or null is false).
#[derive(Debug, Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
    special: Option<bool>,
    single_word: Option<bool>,
    lstrip: Option<bool>,
    rstrip: Option<bool>,
    normalized: Option<bool>,
}
