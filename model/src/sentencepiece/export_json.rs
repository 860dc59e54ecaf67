//! A SentencePiece BPE or Unigram model written as a `tokenizer.json` that Hugging Face
//! `tokenizers` loads and encodes as `sentencepiece` does ([`SpModel::to_tokenizer_json`]).
//!
//! The layout is `transformers`' `LlamaConverter`'s, with the normalizer spelled out from the
//! model's settings instead of assumed:
//!
//! - **normalizer**: `Precompiled` with the character map (when the model has one), then, with
//!   `remove_extra_whitespaces`, `Replace(Regex("\A +| +\z"), "")` and
//!   `Replace(Regex(" {2,}"), " ")` (`sentencepiece` strips and squeezes U+0020 only, after its
//!   map: `tokenizers`' `Strip` would strip every Unicode space), then `Prepend("▁")` with
//!   `add_dummy_prefix` (like `sentencepiece`, nothing for an empty text), then
//!   `Replace(" ", "▁")`.
//! - **model**: `BPE` over the pieces' ids, `byte_fallback` as the model's, `fuse_unk` (one
//!   `<unk>` for a run of unknown characters, as `sentencepiece` merges them), and the merges
//!   `LlamaConverter` derives: for each normal piece, in score order, every split into two
//!   normal pieces, ordered by the left then the right piece's id. `sentencepiece` merges the
//!   best-scored adjacent pair whose concatenation is a piece; these merges rank the same
//!   pairs the same way.
//! - **Unigram model** in its place for a Unigram model: every piece with its score in id
//!   order, the unknown piece's id, `byte_fallback` (`tokenizers` scores an unknown character
//!   as `sentencepiece` does, the lowest score minus 10, and fuses a run of them). Its trie
//!   holds the control and byte pieces too, which `sentencepiece` never matches in text: the
//!   ids differ on text that spells `<s>` or `<0x41>`. Where two segmentations score exactly
//!   the same, `tokenizers`' Viterbi may keep the other one (`---------` as `-` + 4 × `--`
//!   where `sentencepiece` gives 4 × `--` + `-`).
//! - **pre-tokenizer**: none (`sentencepiece` merges across the whole text); **decoder**:
//!   `LlamaConverter`'s (`▁` to space, byte fallback, fuse, one leading space stripped with a
//!   dummy prefix); **post-processor**: `<s> $A` when the model has `<s>` (what
//!   `LlamaTokenizer` adds).
//! - **added tokens**: the unknown and control pieces, marked special. `tokenizers` matches
//!   them in the text, `sentencepiece` never does: the ids agree on text that does not hold
//!   them.
//!
//! Where the two libraries cannot agree the export is refused ([`SpExportError`]):
//! user-defined symbols (`tokenizers` matches added tokens before its normalizer, so
//! the dummy prefix would come back after each), and models imported from a `tokenizer.json`
//! (write that file instead). With a character map, `tokenizers`' `Precompiled` applies it a
//! grapheme cluster at a time where `sentencepiece` takes the longest match over the bytes:
//! they differ on text where a mapped sequence crosses a cluster boundary (see
//! `picobpe::normalizer`'s `precompiled.rs`).

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::{json, Value};

use super::{SpKind, SpModel, SpSections};

/// Why a SentencePiece model has no `tokenizer.json` that `tokenizers` encodes like
/// `sentencepiece`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpExportError {
    /// User-defined symbols would be added tokens, which `tokenizers` matches before its
    /// normalizer: the dummy prefix would follow each.
    #[error("user-defined symbols: tokenizers would put a dummy prefix after each")]
    UserDefined,
    /// A model imported from a `tokenizer.json` (its settings are that file's).
    #[error("the model came from a tokenizer.json: write that file instead")]
    FromTokenizerJson,
}

impl SpModel {
    /// The model as a `tokenizer.json` (see the module docs for its layout and where its ids
    /// and `sentencepiece`'s can differ).
    pub fn to_tokenizer_json(&self) -> Result<String, SpExportError> {
        if self.pieces.iter().any(|p| p.kind == SpKind::UserDefined) {
            return Err(SpExportError::UserDefined);
        }
        if self.settings() != 0 || self.sections != SpSections::Inline {
            return Err(SpExportError::FromTokenizerJson);
        }
        let unk = self
            .pieces
            .iter()
            .find(|p| p.kind == SpKind::Unknown)
            .map(|p| p.piece.clone());
        let vocab: serde_json::Map<String, Value> = self
            .pieces
            .iter()
            .enumerate()
            .map(|(id, p)| (p.piece.clone(), json!(id)))
            .collect();
        let added: Vec<Value> = self
            .pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p.kind, SpKind::Unknown | SpKind::Control))
            .map(|(id, p)| {
                json!({"id": id, "content": p.piece, "single_word": false, "lstrip": false,
                       "rstrip": false, "normalized": false, "special": true})
            })
            .collect();
        let bos = self
            .pieces
            .iter()
            .position(|p| p.kind == SpKind::Control && p.piece == "<s>");
        let post_processor = match bos {
            Some(id) => json!({
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "<s>", "type_id": 1}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [id], "tokens": ["<s>"]}},
            }),
            None => Value::Null,
        };
        let mut decoders = vec![
            json!({"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "}),
            json!({"type": "ByteFallback"}),
            json!({"type": "Fuse"}),
        ];
        if self.add_dummy_prefix {
            decoders.push(json!({"type": "Strip", "content": " ", "start": 1, "stop": 0}));
        }
        let model = if self.unigram {
            self.unigram_model()
        } else {
            json!({
                "type": "BPE",
                "dropout": null,
                "unk_token": unk,
                "continuing_subword_prefix": null,
                "end_of_word_suffix": null,
                "fuse_unk": true,
                "byte_fallback": self.byte_fallback,
                "ignore_merges": false,
                "vocab": vocab,
                "merges": self.merges(),
            })
        };
        let file = json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": added,
            "normalizer": {"type": "Sequence", "normalizers": self.normalizer_steps()},
            "pre_tokenizer": null,
            "post_processor": post_processor,
            "decoder": {"type": "Sequence", "decoders": decoders},
            "model": model,
        });
        Ok(serde_json::to_string_pretty(&file).unwrap_or_default() + "\n")
    }

    /// A `Unigram` model: every piece with its score, in id order, the unknown piece's id and
    /// byte fallback (`tokenizers` gives an unknown character `sentencepiece`'s score, the
    /// lowest minus 10, and fuses a run of them).
    fn unigram_model(&self) -> Value {
        let vocab: Vec<Value> = self
            .pieces
            .iter()
            .map(|p| json!([p.piece, p.score.unwrap_or(0.0)]))
            .collect();
        let unk_id = self.pieces.iter().position(|p| p.kind == SpKind::Unknown);
        json!({
            "type": "Unigram",
            "unk_id": unk_id,
            "vocab": vocab,
            "byte_fallback": self.byte_fallback,
        })
    }

    /// The normalizer's steps (see the module docs).
    fn normalizer_steps(&self) -> Vec<Value> {
        let mut steps = Vec::new();
        if !self.charsmap.is_empty() {
            let map = base64::engine::general_purpose::STANDARD.encode(&self.charsmap);
            steps.push(json!({"type": "Precompiled", "precompiled_charsmap": map}));
        }
        if self.remove_extra_whitespaces {
            let replace = |pattern: &str, content: &str| json!({"type": "Replace", "pattern": {"Regex": pattern}, "content": content});
            steps.push(replace(r"\A +| +\z", ""));
            steps.push(replace(" {2,}", " "));
        }
        if self.add_dummy_prefix {
            steps.push(json!({"type": "Prepend", "prepend": "\u{2581}"}));
        }
        steps.push(json!({"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}));
        steps
    }

    /// `LlamaConverter`'s merges: every split of each normal piece into two normal pieces,
    /// pieces by descending score (then id), splits by the left then the right piece's id.
    fn merges(&self) -> Vec<Value> {
        let normal: HashMap<&str, usize> = self
            .pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == SpKind::Normal)
            .map(|(id, p)| (p.piece.as_str(), id))
            .collect();
        let mut by_score: Vec<(usize, f32)> = self
            .pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == SpKind::Normal)
            .map(|(id, p)| (id, p.score.unwrap_or(0.0)))
            .collect();
        by_score.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut merges = Vec::new();
        for (id, _) in by_score {
            let piece = self.pieces[id].piece.as_str();
            let mut splits: Vec<(usize, usize, &str, &str)> = piece
                .char_indices()
                .skip(1)
                .filter_map(|(i, _)| {
                    let (l, r) = piece.split_at(i);
                    Some((*normal.get(l)?, *normal.get(r)?, l, r))
                })
                .collect();
            splits.sort_unstable();
            merges.extend(splits.into_iter().map(|(_, _, l, r)| json!([l, r])));
        }
        merges
    }
}
