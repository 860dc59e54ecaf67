//! Import a SentencePiece-style model (BPE or Unigram over `▁` pieces) from a parsed Hugging
//! Face `tokenizer.json` (the form `transformers` gives Llama 2, TinyLlama and T5 tokenizers).

use std::collections::HashMap;

use super::import_proto::SpImportError;
use super::{byte_piece_value, SpKind, SpModel, SpPiece, SpSections};
use crate::tokenizer_json::{
    bad, by_id, known, ModelJson, Normalizer, Pattern, PreTokenizer, Refused, TokenizerJson,
};

/// Build an [`SpModel`] from a `tokenizer.json` whose model is `BPE` or `Unigram` over `▁`
/// pieces: normalizer `Prepend("▁")` + `Replace(" ", "▁")` (or none, with a `Metaspace`
/// pre-tokenizer that does not split), optional byte fallback.
///
/// - **BPE**: merge priority follows the merge list: the piece the first merge makes scores
///   highest; pieces no merge makes are never merged into.
/// - **Unigram**: `vocab` as `[piece, score]` pairs in id order, `unk_id`, `byte_fallback`.
///   Encoded with `tokenizers`' arithmetic (`f64` sums, no score reset, every piece
///   matchable) and the file's `f64` scores (which need not be `f32` values).
///
/// Added tokens become user-defined symbols (matched whole in the text, as `tokenizers` does)
/// except the unknown token; each must be the vocabulary's piece of its id. Anything else in
/// the normalizer or pre-tokenizer is refused with an error that names it. The post-processor is
/// not part of the model ([`crate::TemplateData::from_tokenizer_json`] reads it): ids are those
/// of `encode(text, add_special_tokens=False)`.
pub fn import_tokenizer_json(file: &TokenizerJson) -> Result<SpModel, SpImportError> {
    let (pieces, scores, f64_scores, unk_id, byte_fallback) = match &file.model {
        ModelJson::Bpe(m) => {
            m.check()?;
            let pieces = by_id(&m.vocab).map_err(|e| bad("model.vocab", e))?;
            let mut rank_of: HashMap<String, usize> = HashMap::new();
            let merges = m.merges().map_err(|e| bad("model.merges", e))?;
            for (n, left, right) in merges {
                rank_of.entry(format!("{left}{right}")).or_insert(n - 1);
            }
            let scores = pieces.iter().map(|p| rank_of.get(p).map(|&r| -(r as f32)));
            let unk_id = pieces.iter().position(|p| Some(p) == m.unk_token.as_ref());
            let scores: Vec<Option<f32>> = scores.collect();
            (pieces, scores, Vec::new(), unk_id, m.byte_fallback)
        }
        ModelJson::Unigram(m) => {
            let unk_id = m
                .unk_id
                .ok_or_else(|| bad("model.unk_id", "missing (a Unigram model needs <unk>)"))?;
            let pieces = m.vocab.iter().map(|(p, _)| p.clone()).collect();
            let f64_scores: Vec<f64> = m.vocab.iter().map(|&(_, s)| s).collect();
            let scores = f64_scores.iter().map(|&s| Some(s as f32)).collect();
            (pieces, scores, f64_scores, Some(unk_id), m.byte_fallback)
        }
        other => {
            let model_type = other.name().to_owned();
            return Err(SpImportError::NotBpe { model_type });
        }
    };
    if pieces.len() > picobpe::MAX_IDS {
        let what = format!("{} pieces is too many", pieces.len());
        return Err(bad("model.vocab", what).into());
    }
    let (add_dummy_prefix, sections) = normalizer(file)?;
    let added = file.added_tokens().map_err(|e| bad("added_tokens", e))?;
    for (content, id) in &added {
        if pieces.get(*id as usize) != Some(content) {
            let what = format!("{content:?} (id {id}) is not the vocabulary's piece of that id");
            return Err(bad("added_tokens", what).into());
        }
    }
    let added: HashMap<String, u32> = added.into_iter().collect();
    let pieces = (pieces.into_iter().zip(scores).enumerate())
        .map(|(id, (piece, score))| {
            let kind = if Some(id) == unk_id {
                SpKind::Unknown
            } else if added.contains_key(&piece) {
                SpKind::UserDefined
            } else if byte_fallback && byte_piece_value(&piece).is_some() {
                SpKind::Byte
            } else {
                SpKind::Normal
            };
            SpPiece { piece, score, kind }
        })
        .collect();
    let model = SpModel {
        pieces,
        add_dummy_prefix,
        remove_extra_whitespaces: false,
        byte_fallback,
        unk_surface: " \u{2047} ".to_owned(),
        sections,
        unigram: matches!(file.model, ModelJson::Unigram(_)),
        f64_scores,
        charsmap: Vec::new(),
    };
    model.validate().map_err(SpImportError::Invalid)?;
    Ok(model)
}

/// The normalizer and pre-tokenizer, as `(add_dummy_prefix, sections)`.
fn normalizer(file: &TokenizerJson) -> Result<(bool, SpSections), Refused> {
    let (mut prepend, mut replace) = (false, false);
    for step in &file.normalizer {
        match &step.known {
            Some(Normalizer::Prepend { prepend: p }) if p == "\u{2581}" => prepend = true,
            Some(Normalizer::Replace {
                pattern: Pattern::String(s),
                content,
            }) if s == " " && content == "\u{2581}" => replace = true,
            _ => {
                let what = format!("{} {} is not supported", step.kind(), step.raw);
                return Err(bad("normalizer", what));
            }
        }
    }
    match known(&file.pre_tokenizer)[..] {
        [] => {}
        [Some(PreTokenizer::Metaspace {
            replacement,
            prepend_scheme,
            split,
        })] if replacement == "\u{2581}" && !split.unwrap_or(true) && !replace => {
            return match prepend_scheme.as_deref() {
                Some("first") => Ok((true, SpSections::FirstPiecePrefixed)),
                Some("always") => Ok((true, SpSections::EveryPiecePrefixed)),
                Some("never") => Ok((false, SpSections::FirstPiecePrefixed)),
                scheme => {
                    let what = format!("prepend_scheme {scheme:?} is not supported");
                    Err(bad("pre_tokenizer", what))
                }
            }
        }
        _ => {
            let raw = file.pre_tokenizer.iter().map(|s| s.raw.to_string());
            let what = "is not supported (a Metaspace that does not split is)";
            let raw = raw.collect::<Vec<_>>().join(" + ");
            return Err(bad("pre_tokenizer", format!("{raw} {what}")));
        }
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
