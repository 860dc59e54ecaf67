//! Import a SentencePiece-style BPE model from a Hugging Face `tokenizer.json` (the form
//! `transformers` gives Llama 2 and TinyLlama tokenizers).

use std::collections::HashMap;

use serde_json::Value;

use super::import_proto::SpImportError;
use super::{byte_piece_value, SpKind, SpModel, SpPiece, SpSections};

/// A `tokenizer.json` whose model is `"type": "Unigram"`: `vocab` as `[piece, score]` pairs in
/// id order, `unk_id`, `byte_fallback`; the normalizer and pre-tokenizer as for BPE. Encoded
/// with `tokenizers`' arithmetic (`f64` sums, no score reset, every piece matchable) and the
/// file's `f64` scores (which need not be `f32` values).
fn import_unigram(root: &Value, model: &Value) -> Result<SpModel, SpImportError> {
    for key in model.as_object().into_iter().flat_map(|o| o.keys()) {
        if !matches!(key.as_str(), "type" | "unk_id" | "vocab" | "byte_fallback") {
            return Err(bad("model", format!("{key} is set; not supported")));
        }
    }
    let byte_fallback = model
        .get("byte_fallback")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let unk_id = model
        .get("unk_id")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("model.unk_id", "missing (a Unigram model needs <unk>)"))?
        as usize;
    let (add_dummy_prefix, sections) = normalizer(root)?;
    let vocab = model
        .get("vocab")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("model.vocab", "missing or not a list"))?;
    if vocab.len() > picobpe::tables::MAX_IDS {
        return Err(bad(
            "model.vocab",
            format!("{} pieces is too many", vocab.len()),
        ));
    }
    let added = added_tokens(root, |id| {
        vocab
            .get(id)
            .and_then(|e| e.get(0))
            .and_then(Value::as_str)
            .map(str::to_owned)
    })?;
    let mut pieces = Vec::with_capacity(vocab.len());
    let mut f64_scores = Vec::with_capacity(vocab.len());
    for (id, entry) in vocab.iter().enumerate() {
        let (Some(piece), Some(score)) = (
            entry.get(0).and_then(Value::as_str),
            entry.get(1).and_then(Value::as_f64),
        ) else {
            return Err(bad(
                "model.vocab",
                format!("entry {id} is not [piece, score]"),
            ));
        };
        if score.is_nan() {
            return Err(bad("model.vocab", format!("the score of {piece:?} is NaN")));
        }
        f64_scores.push(score);
        let kind = if id == unk_id {
            SpKind::Unknown
        } else if added.contains_key(piece) {
            SpKind::UserDefined
        } else if byte_fallback && byte_piece_value(piece).is_some() {
            SpKind::Byte
        } else {
            SpKind::Normal
        };
        pieces.push(SpPiece {
            piece: piece.to_owned(),
            score: Some(score as f32),
            kind,
        });
    }
    let model = SpModel {
        pieces,
        add_dummy_prefix,
        remove_extra_whitespaces: false,
        byte_fallback,
        unk_surface: " \u{2047} ".to_owned(),
        sections,
        unigram: true,
        f64_scores,
    };
    model.validate().map_err(SpImportError::Invalid)?;
    Ok(model)
}

/// The added tokens, by text: each must be the vocabulary's piece of its id (`piece_of`).
fn added_tokens(
    root: &Value,
    piece_of: impl Fn(usize) -> Option<String>,
) -> Result<HashMap<String, u32>, SpImportError> {
    let mut added: HashMap<String, u32> = HashMap::new();
    if let Some(tokens) = root.get("added_tokens").and_then(Value::as_array) {
        for t in tokens {
            let content = t.get("content").and_then(Value::as_str).unwrap_or("");
            let id = t.get("id").and_then(Value::as_u64).unwrap_or(u64::MAX);
            // picobpe cuts the raw text at added tokens; `tokenizers` does so only for tokens
            // that are not normalized and take no neighbouring spaces.
            for flag in ["normalized", "lstrip", "rstrip", "single_word"] {
                if t.get(flag).and_then(Value::as_bool) == Some(true) {
                    return Err(bad(
                        "added_tokens",
                        format!("{content:?} has {flag}: true; not supported"),
                    ));
                }
            }
            if piece_of(id as usize).as_deref() != Some(content) {
                return Err(bad(
                    "added_tokens",
                    format!("{content:?} (id {id}) is not the vocabulary's piece of that id"),
                ));
            }
            added.insert(content.to_owned(), id as u32);
        }
    }
    Ok(added)
}

fn bad(at: &'static str, what: impl Into<String>) -> SpImportError {
    SpImportError::TokenizerJson {
        at,
        what: what.into(),
    }
}

/// Build an [`SpModel`] from a `tokenizer.json` whose model is `"type": "BPE"` over `▁`
/// pieces: normalizer `Prepend("▁")` + `Replace(" ", "▁")` (or none, with a `Metaspace`
/// pre-tokenizer that does not split), optional byte fallback.
///
/// Merge priority follows the merge list: the piece the first merge makes scores highest;
/// pieces no merge makes are never merged into. Added tokens become user-defined symbols
/// (matched whole in the text, as `tokenizers` does) except the unknown token. Anything else
/// in the normalizer or pre-tokenizer is refused with an error that names it; the
/// post-processor (which adds `<s>`) is not applied: ids are those of
/// `encode(text, add_special_tokens=False)`.
pub fn import_tokenizer_json(bytes: &[u8]) -> Result<SpModel, SpImportError> {
    let root: Value = serde_json::from_slice(bytes).map_err(SpImportError::Json)?;
    let model = root.get("model").ok_or_else(|| bad("model", "missing"))?;
    let ty = model.get("type").and_then(Value::as_str).unwrap_or("");
    if ty == "Unigram" {
        return import_unigram(&root, model);
    }
    if ty != "BPE" {
        return Err(SpImportError::NotBpe {
            model_type: ty.to_owned(),
        });
    }
    for key in ["continuing_subword_prefix", "end_of_word_suffix", "dropout"] {
        if model.get(key).is_some_and(|v| !v.is_null()) {
            return Err(bad("model", format!("{key} is set; not supported")));
        }
    }
    let byte_fallback = model
        .get("byte_fallback")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let unk = model.get("unk_token").and_then(Value::as_str);

    let (add_dummy_prefix, sections) = normalizer(&root)?;

    let vocab = model
        .get("vocab")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("model.vocab", "missing or not an object"))?;
    let mut by_id: Vec<Option<String>> = Vec::new();
    for (piece, id) in vocab {
        let id = id
            .as_u64()
            .ok_or_else(|| bad("model.vocab", format!("id of {piece:?} is not a number")))?
            as usize;
        if id >= picobpe::tables::MAX_IDS {
            return Err(bad("model.vocab", format!("id {id} is too large")));
        }
        if by_id.len() <= id {
            by_id.resize(id + 1, None);
        }
        if by_id[id].replace(piece.clone()).is_some() {
            return Err(bad("model.vocab", format!("id {id} is given twice")));
        }
    }
    let added = added_tokens(&root, |id| by_id.get(id).cloned().flatten())?;
    let merges = model
        .get("merges")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("model.merges", "missing or not a list"))?;
    let mut rank_of: HashMap<String, usize> = HashMap::new();
    for (rank, m) in merges.iter().enumerate() {
        let (left, right) = match m {
            Value::String(s) => s
                .split_once(' ')
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .ok_or_else(|| bad("model.merges", format!("{s:?} is not two pieces")))?,
            Value::Array(pair) if pair.len() == 2 => (
                pair[0].as_str().unwrap_or("").to_owned(),
                pair[1].as_str().unwrap_or("").to_owned(),
            ),
            _ => return Err(bad("model.merges", format!("entry {rank} is not a pair"))),
        };
        rank_of.entry(left + &right).or_insert(rank);
    }

    let mut pieces = Vec::with_capacity(by_id.len());
    for (id, piece) in by_id.into_iter().enumerate() {
        let piece = piece.ok_or_else(|| bad("model.vocab", format!("id {id} is missing")))?;
        let kind = if Some(piece.as_str()) == unk {
            SpKind::Unknown
        } else if added.contains_key(&piece) {
            SpKind::UserDefined
        } else if byte_fallback && byte_piece_value(&piece).is_some() {
            SpKind::Byte
        } else {
            SpKind::Normal
        };
        let score = rank_of.get(&piece).map(|&rank| -(rank as f32));
        pieces.push(SpPiece { piece, score, kind });
    }
    let model = SpModel {
        pieces,
        add_dummy_prefix,
        remove_extra_whitespaces: false,
        byte_fallback,
        unk_surface: " \u{2047} ".to_owned(),
        sections,
        unigram: false,
        f64_scores: Vec::new(),
    };
    model.validate().map_err(SpImportError::Invalid)?;
    Ok(model)
}

/// The normalizer and pre-tokenizer, as `(add_dummy_prefix, sections)`.
fn normalizer(root: &Value) -> Result<(bool, SpSections), SpImportError> {
    let mut prepend = false;
    let mut replace = false;
    let norm = root.get("normalizer").unwrap_or(&Value::Null);
    let steps: Vec<&Value> = match norm.get("type").and_then(Value::as_str) {
        None if norm.is_null() => Vec::new(),
        Some("Sequence") => norm
            .get("normalizers")
            .and_then(Value::as_array)
            .map(|v| v.iter().collect())
            .unwrap_or_default(),
        Some(_) => vec![norm],
        None => return Err(bad("normalizer", "has no type")),
    };
    for step in steps {
        match step.get("type").and_then(Value::as_str).unwrap_or("") {
            "Prepend" if step.get("prepend").and_then(Value::as_str) == Some("\u{2581}") => {
                prepend = true
            }
            "Replace"
                if step.pointer("/pattern/String").and_then(Value::as_str) == Some(" ")
                    && step.get("content").and_then(Value::as_str) == Some("\u{2581}") =>
            {
                replace = true
            }
            other => {
                return Err(bad(
                    "normalizer",
                    format!("{other} {step} is not supported"),
                ))
            }
        }
    }
    let pre = root.get("pre_tokenizer").unwrap_or(&Value::Null);
    if !pre.is_null() {
        let ty = pre.get("type").and_then(Value::as_str).unwrap_or("");
        let scheme = pre.get("prepend_scheme").and_then(Value::as_str);
        let split = pre.get("split").and_then(Value::as_bool).unwrap_or(true);
        if ty != "Metaspace"
            || pre.get("replacement").and_then(Value::as_str) != Some("\u{2581}")
            || split
            || replace
        {
            return Err(bad(
                "pre_tokenizer",
                format!("{pre} is not supported (a Metaspace that does not split is)"),
            ));
        }
        let (p, sections) = match scheme {
            Some("first") => (true, SpSections::FirstPiecePrefixed),
            Some("always") => (true, SpSections::EveryPiecePrefixed),
            Some("never") => (false, SpSections::FirstPiecePrefixed),
            _ => {
                return Err(bad(
                    "pre_tokenizer",
                    format!("prepend_scheme {scheme:?} is not supported"),
                ))
            }
        };
        return Ok((p, sections));
    }
    if !replace {
        return Err(bad(
            "normalizer",
            "spaces are not replaced by '▁': not a SentencePiece-style model",
        ));
    }
    let sections = if prepend {
        SpSections::EveryPiecePrefixed
    } else {
        SpSections::FirstPiecePrefixed
    };
    Ok((prepend, sections))
}
