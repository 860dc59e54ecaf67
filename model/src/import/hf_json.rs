//! Import a byte-level BPE model from a Hugging Face `tokenizer.json`: the form Llama 3,
//! Qwen2 / Qwen2.5 and GPT-2-style models ship in.
//!
//! What is accepted is exactly what picobpe reproduces; everything else is refused with an
//! error that names the part ([`ImportError::TokenizerJson`]) or, where it does not change the
//! ids of `encode(text, add_special_tokens=False)`, reported in [`HfJsonImport::notes`]:
//!
//! - **model**: `BPE` over GPT-2 byte-level symbols, no dropout, no subword prefix or suffix,
//!   no byte fallback; `ignore_merges` (Llama 3) is tiktoken's whole-piece rule, and with it a
//!   merge list in the order of the products' ids is tiktoken's ranks (`products_ascend`).
//! - **pre-tokenizer**: `Sequence[Split(Regex(P), Isolated), ByteLevel(use_regex=false)]`
//!   with `P` one of the patterns picobpe splits by hand ([`PatternKind::from_regex`], compared
//!   character for character), or `ByteLevel(use_regex=true)` alone (GPT-2's pattern);
//!   `add_prefix_space` must be off.
//! - **normalizer**: none. `NFC` (Qwen2) only when the caller says the text will already be
//!   in NFC ([`HfJsonOptions::assume_nfc`]; then NFC changes nothing and the ids are exact).
//! - **added tokens**: matched whole in the text, as picobpe's special tokens; `lstrip`,
//!   `rstrip` and `single_word` are refused.
//! - **post-processor**: `ByteLevel` changes only offsets; a template (`TemplateProcessing`,
//!   Llama 3's `<|begin_of_text|>`) is not applied, and a note says what it would add.
//! - **decoder**: `ByteLevel` (or none).

use std::collections::HashMap;

use serde_json::Value;

use super::hf_import::from_parts;
use super::ImportError;
use crate::model::Model;
use crate::pattern::PatternKind;

/// A model imported from a `tokenizer.json`, with what the import chose not to apply.
#[derive(Debug)]
pub struct HfJsonImport {
    /// The validated model.
    pub model: Model,
    /// One line for each part of the file that picobpe does not apply and that does not
    /// change the ids of `encode(text, add_special_tokens=False)` (a post-processor template,
    /// an assumed NFC normalizer, added tokens marked non-special).
    pub notes: Vec<String>,
}

/// Choices the file cannot make for the caller.
#[derive(Clone, Copy, Debug, Default)]
pub struct HfJsonOptions {
    /// Accept an `NFC` normalizer: the caller promises that every text is already in NFC (most
    /// text is), so that normalizing would change nothing. picobpe does not normalize.
    pub assume_nfc: bool,
}

/// True when `tokenizer.json` describes a byte-level BPE model (its pre-tokenizer or decoder
/// is `ByteLevel`, and it has no byte fallback), the kind [`tokenizer_json`] imports; SentencePiece-style files
/// (`Metaspace`, `▁` pieces) go to `sentencepiece::import_tokenizer_json`.
pub fn is_byte_level_json(bytes: &[u8]) -> bool {
    let Ok(root) = serde_json::from_slice::<Value>(bytes) else {
        return false;
    };
    let is_byte_level = |v: Option<&Value>| {
        v.is_some_and(|v| {
            type_of(v) == "ByteLevel"
                || items(v, "pretokenizers")
                    .or_else(|| items(v, "decoders"))
                    .is_some_and(|a| a.iter().any(|p| type_of(p) == "ByteLevel"))
        })
    };
    let model = root.get("model");
    model.map(type_of) == Some("BPE")
        // Byte fallback is SentencePiece's: such a file goes to that importer, which names
        // what it does not support.
        && !model.is_some_and(|m| flag(m, "byte_fallback", false))
        && (is_byte_level(root.get("pre_tokenizer")) || is_byte_level(root.get("decoder")))
}

fn bad(at: &'static str, what: impl Into<String>) -> ImportError {
    ImportError::TokenizerJson {
        at,
        what: what.into(),
    }
}

/// The `"type"` of a component (`""` when absent).
fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The array under `key` of a `Sequence` component.
fn items<'v>(v: &'v Value, key: &str) -> Option<&'v Vec<Value>> {
    (type_of(v) == "Sequence")
        .then(|| v.get(key).and_then(Value::as_array))
        .flatten()
}

/// A boolean field, `default` when absent or null.
fn flag(v: &Value, key: &str, default: bool) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(default)
}

/// Build a [`Model`] from a byte-level BPE `tokenizer.json` (see the module docs for what is
/// accepted).
pub fn tokenizer_json(bytes: &[u8], options: HfJsonOptions) -> Result<HfJsonImport, ImportError> {
    let root: Value = serde_json::from_slice(bytes).map_err(ImportError::Json)?;
    let mut notes = Vec::new();
    let model = root.get("model").ok_or_else(|| bad("model", "missing"))?;
    if type_of(model) != "BPE" {
        return Err(bad(
            "model.type",
            format!(
                "{:?}: only BPE is imported as byte-level BPE",
                type_of(model)
            ),
        ));
    }
    for key in ["dropout", "continuing_subword_prefix", "end_of_word_suffix"] {
        match model.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(v) => return Err(bad("model", format!("{key} is {v}; not supported"))),
        }
    }
    if flag(model, "byte_fallback", false) {
        return Err(bad(
            "model.byte_fallback",
            "true; not supported for byte-level BPE",
        ));
    }
    let whole_piece = flag(model, "ignore_merges", false);

    normalizer(root.get("normalizer"), options, &mut notes)?;
    let pattern = pre_tokenizer(root.get("pre_tokenizer"))?;
    post_processor(root.get("post_processor"), &mut notes)?;
    match root.get("decoder") {
        None | Some(Value::Null) => {}
        Some(d) if type_of(d) == "ByteLevel" => {}
        Some(d) => return Err(bad("decoder", format!("{:?}: not supported", type_of(d)))),
    }

    let vocab: HashMap<String, u32> = serde_json::from_value(
        model
            .get("vocab")
            .cloned()
            .ok_or_else(|| bad("model.vocab", "missing"))?,
    )
    .map_err(ImportError::Json)?;
    let merges = merges(model)?;
    let merges: Vec<(usize, &str, &str)> = merges
        .iter()
        .enumerate()
        .map(|(i, (l, r))| (i + 1, l.as_str(), r.as_str()))
        .collect();
    let specials = added_tokens(&root, &mut notes)?;
    let model = if whole_piece && products_ascend(&vocab, &merges) {
        tiktoken_ranks(&vocab, pattern, &specials)?
    } else {
        from_parts(&vocab, &merges, pattern, specials, whole_piece)?
    };
    Ok(HfJsonImport { model, notes })
}

/// True when every merge's product is in the vocabulary and the products' ids never go down
/// along the merge list: then merge priority is the product's id, tiktoken's rule.
///
/// Llama 3's file is converted from tiktoken ranks and lists *every* split of each token
/// (280,147 merges for 128,000 tokens, several making the same token), which a merge list
/// of one merge per token cannot hold; its order is the products' ids, so with
/// `ignore_merges` it encodes exactly like tiktoken with ranks = ids.
fn products_ascend(vocab: &HashMap<String, u32>, merges: &[(usize, &str, &str)]) -> bool {
    let mut last = 0;
    merges
        .iter()
        .all(|(_, l, r)| match vocab.get(&format!("{l}{r}")) {
            Some(&id) if id >= last => {
                last = id;
                true
            }
            _ => false,
        })
}

/// The model with tiktoken's semantics, ranks = ids (see [`products_ascend`]).
fn tiktoken_ranks(
    vocab: &HashMap<String, u32>,
    pattern: PatternKind,
    specials: &[(String, u32)],
) -> Result<Model, ImportError> {
    let decoder = crate::byte_unicode::ByteDecoder::new();
    let mut entries = Vec::with_capacity(vocab.len());
    for (line, (key, &id)) in vocab.iter().enumerate() {
        if specials.iter().any(|(text, sid)| *sid == id && text == key) {
            continue;
        }
        let bytes = decoder
            .decode(key)
            .filter(|b| !b.is_empty())
            .ok_or_else(|| ImportError::VocabKey { key: key.clone() })?;
        entries.push((id, bytes, line + 1));
    }
    super::tiktoken_import::from_ranks(entries, pattern, specials)
}

/// `model.merges`: `"left right"` strings (tokenizers before 0.20) or `[left, right]` pairs.
fn merges(model: &Value) -> Result<Vec<(String, String)>, ImportError> {
    let list = model
        .get("merges")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("model.merges", "missing or not an array"))?;
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let pair = match m {
                Value::String(s) => s
                    .split_once(' ')
                    .filter(|(_, r)| !r.contains(' '))
                    .map(|(l, r)| (l.to_owned(), r.to_owned())),
                Value::Array(a) => match a.as_slice() {
                    [Value::String(l), Value::String(r)] => Some((l.clone(), r.clone())),
                    _ => None,
                },
                _ => None,
            };
            pair.ok_or_else(|| ImportError::BadMergeLine {
                line: i + 1,
                reason: format!("merge {m} is not two tokens"),
            })
        })
        .collect()
}

fn normalizer(
    n: Option<&Value>,
    options: HfJsonOptions,
    notes: &mut Vec<String>,
) -> Result<(), ImportError> {
    let Some(n) = n.filter(|n| !n.is_null()) else {
        return Ok(());
    };
    if items(n, "normalizers").is_some_and(Vec::is_empty) {
        return Ok(());
    }
    match type_of(n) {
        "NFC" if options.assume_nfc => {
            notes.push(
                "normalizer NFC is not applied: the text is assumed to be in NFC already \
                 (--assume-nfc); text that is not gets other ids than tokenizers gives"
                    .to_owned(),
            );
            Ok(())
        }
        "NFC" => Err(bad(
            "normalizer",
            "NFC: picobpe does not normalize text; if every text you encode is already in \
             NFC (most text is), import with --assume-nfc",
        )),
        other => Err(bad("normalizer", format!("{other:?}: not supported"))),
    }
}

/// The pattern of the pre-tokenizer.
fn pre_tokenizer(p: Option<&Value>) -> Result<PatternKind, ImportError> {
    let p = p
        .filter(|p| !p.is_null())
        .ok_or_else(|| bad("pre_tokenizer", "missing: byte-level BPE needs one"))?;
    let byte_level = |b: &Value, use_regex: bool| -> Result<(), ImportError> {
        if type_of(b) != "ByteLevel" {
            return Err(bad(
                "pre_tokenizer",
                format!("{:?}: not supported", type_of(b)),
            ));
        }
        if flag(b, "add_prefix_space", true) {
            return Err(bad(
                "pre_tokenizer",
                "ByteLevel add_prefix_space: not supported",
            ));
        }
        if flag(b, "use_regex", true) != use_regex {
            return Err(bad(
                "pre_tokenizer",
                format!("ByteLevel use_regex = {}: not supported here", !use_regex),
            ));
        }
        Ok(())
    };
    if type_of(p) == "ByteLevel" {
        byte_level(p, true)?;
        return Ok(PatternKind::Gpt2);
    }
    let Some([split, b]) = items(p, "pretokenizers").map(Vec::as_slice) else {
        return Err(bad(
            "pre_tokenizer",
            format!(
                "{:?}: expected Sequence[Split, ByteLevel] or ByteLevel",
                type_of(p)
            ),
        ));
    };
    if type_of(split) != "Split" {
        return Err(bad(
            "pre_tokenizer",
            format!("{:?}: not supported", type_of(split)),
        ));
    }
    if split.get("behavior").and_then(Value::as_str) != Some("Isolated")
        || flag(split, "invert", false)
    {
        return Err(bad(
            "pre_tokenizer",
            "Split: only behavior Isolated, invert false",
        ));
    }
    let regex = split
        .get("pattern")
        .and_then(|p| p.get("Regex"))
        .and_then(Value::as_str)
        .ok_or_else(|| bad("pre_tokenizer", "Split: only a Regex pattern is supported"))?;
    let pattern = PatternKind::from_regex(regex).ok_or_else(|| {
        bad(
            "pre_tokenizer",
            format!(
                "Split pattern {regex:?} is none of picobpe's splitters ({})",
                PatternKind::ALL.map(PatternKind::name).join(", ")
            ),
        )
    })?;
    byte_level(b, false)?;
    Ok(pattern)
}

fn post_processor(p: Option<&Value>, notes: &mut Vec<String>) -> Result<(), ImportError> {
    let Some(p) = p.filter(|p| !p.is_null()) else {
        return Ok(());
    };
    let parts = items(p, "processors")
        .cloned()
        .unwrap_or_else(|| vec![p.clone()]);
    for part in &parts {
        match type_of(part) {
            "ByteLevel" => {}
            "TemplateProcessing" => {
                let single: Vec<String> = part
                    .get("single")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|piece| match piece.get("SpecialToken") {
                                Some(t) => t
                                    .get("id")
                                    .and_then(Value::as_str)
                                    .unwrap_or("?")
                                    .to_owned(),
                                None => "$A".to_owned(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                notes.push(format!(
                    "post-processor template {:?} is not applied: ids are those of \
                     encode(text, add_special_tokens=False); add its special tokens yourself",
                    single.join(" ")
                ));
            }
            other => {
                return Err(bad("post_processor", format!("{other:?}: not supported")));
            }
        }
    }
    Ok(())
}

/// The added tokens, as special tokens (text, id).
fn added_tokens(root: &Value, notes: &mut Vec<String>) -> Result<Vec<(String, u32)>, ImportError> {
    let Some(list) = root.get("added_tokens").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    let mut specials = Vec::with_capacity(list.len());
    let mut plain = Vec::new();
    for t in list {
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
            if flag(t, key, false) {
                return Err(bad(
                    "added_tokens",
                    format!("{content:?}: {key} is not supported"),
                ));
            }
        }
        if !flag(t, "special", true) {
            plain.push(content.to_owned());
        }
        specials.push((content.to_owned(), id));
    }
    if !plain.is_empty() {
        notes.push(format!(
            "added tokens not marked special ({}) are matched as special tokens: tokenizers \
             matches them even when special tokens are encoded as text",
            plain.join(", ")
        ));
    }
    Ok(specials)
}
