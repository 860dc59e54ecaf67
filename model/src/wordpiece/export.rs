//! A WordPiece model written in the other libraries' formats: `vocab.txt` (one entry per
//! line, in id order: BERT's file) and a `tokenizer.json` that Hugging Face `tokenizers`
//! loads (`BertNormalizer` with the model's flags, its pre-tokenizer, the `WordPiece` model
//! and decoder, BERT's `[CLS]`/`[SEP]` template, the added tokens marked special).

use serde_json::{json, Map, Value};

use super::{CharRule, Spaces, WordSplit, WpModel};

/// Why a model cannot be written in another library's format.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// `vocab.txt` holds one entry per line.
    #[error("vocabulary entry {id} holds a line break: vocab.txt cannot hold it")]
    LineBreak {
        /// The entry's id.
        id: u32,
    },
    /// Only `BertNormalizer`'s flags are written.
    #[error("the model's normalizer is not BertNormalizer's flags: not written")]
    Normalizer,
}

impl WpModel {
    /// The model's `vocab.txt`: its entries in id order, one per line.
    pub fn to_vocab_txt(&self) -> Result<String, ExportError> {
        let mut out = String::new();
        for (id, entry) in self.vocab.iter().enumerate() {
            if entry.contains(['\n', '\r']) {
                return Err(ExportError::LineBreak { id: id as u32 });
            }
            out.push_str(entry);
            out.push('\n');
        }
        Ok(out)
    }

    /// The model as a `tokenizer.json`, with BERT's post-processor (`[CLS] $A [SEP]`, and
    /// `[CLS] $A [SEP] $B [SEP]` for pairs) when the vocabulary has `[CLS]` and `[SEP]`
    /// ([`crate::TemplateData::bert`]).
    pub fn to_tokenizer_json(&self) -> Result<String, ExportError> {
        if self.normalizer.is_some() || self.char_steps.any() {
            return Err(ExportError::Normalizer);
        }
        let added: Vec<Value> = self
            .specials
            .iter()
            .map(|(text, id)| {
                json!({"id": id, "content": text, "single_word": false, "lstrip": false,
                       "rstrip": false, "normalized": false, "special": true})
            })
            .collect();
        let mut vocab = Map::new();
        for (id, entry) in self.vocab.iter().enumerate() {
            vocab.insert(entry.clone(), json!(id));
        }
        let unk = self
            .vocab
            .get(self.unk_id as usize)
            .cloned()
            .unwrap_or_default();
        let template = crate::TemplateData::bert(self);
        let post_processor = match (template.prefix.first(), template.suffix.first()) {
            (Some(&cls), Some(&sep)) => {
                let special = |id: &str, type_id: u32| json!({"SpecialToken": {"id": id, "type_id": type_id}});
                let sequence =
                    |id: &str, type_id: u32| json!({"Sequence": {"id": id, "type_id": type_id}});
                json!({
                    "type": "TemplateProcessing",
                    "single": [special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0)],
                    "pair": [special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0),
                             sequence("B", 1), special("[SEP]", 1)],
                    "special_tokens": {
                        "[CLS]": {"id": "[CLS]", "ids": [cls], "tokens": ["[CLS]"]},
                        "[SEP]": {"id": "[SEP]", "ids": [sep], "tokens": ["[SEP]"]},
                    },
                })
            }
            _ => Value::Null,
        };
        let file = json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": added,
            "normalizer": {
                "type": "BertNormalizer",
                "clean_text": self.clean_text,
                "handle_chinese_chars": self.handle_chinese_chars,
                "strip_accents": self.strip_accents,
                "lowercase": self.lowercase,
            },
            "pre_tokenizer": pre_tokenizer(self.split),
            "post_processor": post_processor,
            "decoder": {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup},
            "model": {
                "type": "WordPiece",
                "unk_token": unk,
                "continuing_subword_prefix": self.prefix,
                "max_input_chars_per_word": self.max_chars_per_word,
                "vocab": vocab,
            },
        });
        Ok(serde_json::to_string_pretty(&file).unwrap_or_default() + "\n")
    }
}

/// The `pre_tokenizer` of a [`WordSplit`]: `BertPreTokenizer`, or a `Sequence` of its steps.
fn pre_tokenizer(split: WordSplit) -> Value {
    if split.is_bert() {
        return json!({"type": "BertPreTokenizer"});
    }
    let (spaces, punctuation, digits) = split.parts();
    let mut steps = Vec::new();
    match spaces {
        Spaces::Kept => {}
        Spaces::Split => steps.push(json!({"type": "WhitespaceSplit"})),
        Spaces::Words => steps.push(json!({"type": "Whitespace"})),
    }
    let behavior = |rule: CharRule| format!("{rule:?}");
    if punctuation != CharRule::Off {
        steps.push(json!({"type": "Punctuation", "behavior": behavior(punctuation)}));
    }
    match digits {
        CharRule::Off => {}
        CharRule::Isolated => steps.push(json!({"type": "Digits", "individual_digits": true})),
        _ => steps.push(json!({"type": "Digits", "individual_digits": false})),
    }
    json!({"type": "Sequence", "pretokenizers": steps})
}
