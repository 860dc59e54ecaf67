//! Import a SentencePiece `tokenizer.model` (a serialized `ModelProto`), decoded with `prost`
//! into the message types of [`super::proto`].

use super::proto::{ModelProto, NormalizerSpec};
use super::{SpKind, SpModel, SpPiece, SpSections};
use crate::format::TemplateData;

/// Why a SentencePiece model could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum SpImportError {
    /// The file is not a serialized `ModelProto`.
    #[error("not a SentencePiece model (protobuf): {0}")]
    Protobuf(prost::DecodeError),
    /// The model is neither BPE nor Unigram (word and char models).
    #[error(
        "the model type is {model_type}; picobpe imports SentencePiece BPE and Unigram models only"
    )]
    NotBpe {
        /// What the file says.
        model_type: String,
    },
    /// A setting picobpe does not implement.
    #[error("{setting} is not supported")]
    Unsupported {
        /// The setting and its value.
        setting: String,
    },
    /// A piece of type `UNUSED` (or an unknown type number): not supported.
    #[error("piece {id} has type {kind} (UNUSED or unknown); not supported")]
    PieceType {
        /// The id.
        id: usize,
        /// The type number.
        kind: i32,
    },
    /// A `tokenizer.json` part that does not describe a SentencePiece-style BPE model.
    #[error(transparent)]
    TokenizerJson(#[from] crate::tokenizer_json::Refused),
    /// The imported model breaks an invariant.
    #[error("invalid SentencePiece model: {0}")]
    Invalid(super::InvalidSpModel),
}

impl TemplateData {
    /// What transformers' `LlamaTokenizer` adds by default (`add_bos_token=True`,
    /// `add_eos_token=False`) around the ids of one text of a SentencePiece `tokenizer.model`:
    /// the BOS piece (`trainer_spec.bos_id`, 1 unless set) before them when the model has it,
    /// nothing else. A model without BOS gets nothing (a T5-style model's `</s>`, which
    /// `T5Tokenizer` appends, is not added).
    pub fn from_model_proto(bytes: &[u8]) -> Result<TemplateData, SpImportError> {
        let proto =
            <ModelProto as prost::Message>::decode(bytes).map_err(SpImportError::Protobuf)?;
        let bos = proto.trainer_spec.and_then(|t| t.bos_id).unwrap_or(1);
        let has_bos = usize::try_from(bos).is_ok_and(|b| b < proto.pieces.len());
        let prefix = Vec::from_iter(has_bos.then_some(bos as u32));
        let suffix = Vec::new();
        Ok(TemplateData { prefix, suffix })
    }
}

/// Build an [`SpModel`] from the bytes of a SentencePiece `tokenizer.model`.
///
/// BPE and Unigram models are imported, with their normalizer's character map (`nmt_nfkc` and
/// the like; checked by [`super::charsmap::parse`]). Refused: word and character models,
/// denormalizers with a character map or rules, `treat_whitespace_as_suffix`, `escape_whitespaces = false`, `UNUSED` pieces, and anything
/// [`SpModel::validate`] rejects.
pub fn import_model_proto(bytes: &[u8]) -> Result<SpModel, SpImportError> {
    let proto = <ModelProto as prost::Message>::decode(bytes).map_err(SpImportError::Protobuf)?;
    let trainer = proto.trainer_spec.unwrap_or_default();
    let not_bpe = |model_type| Err(SpImportError::NotBpe { model_type });
    let unigram = match trainer.model_type.unwrap_or(1) {
        1 => true,
        2 => false,
        3 => return not_bpe("WORD".to_owned()),
        4 => return not_bpe("CHAR".to_owned()),
        n => return not_bpe(n.to_string()),
    };
    let unsupported = |setting: &str| SpImportError::Unsupported {
        setting: setting.to_owned(),
    };
    // A denormalizer that rewrites characters: a character map or rules.
    let rewrites = |n: &NormalizerSpec| {
        let map = n.precompiled_charsmap.as_deref().unwrap_or(&[]);
        !map.is_empty()
            || n.normalization_rule_tsv
                .as_deref()
                .is_some_and(|r| !r.is_empty())
    };
    if trainer.treat_whitespace_as_suffix == Some(true) {
        return Err(unsupported("treat_whitespace_as_suffix = true"));
    }
    // The normalizer's character map is what `sentencepiece` applies (its
    // `normalization_rule_tsv` is read by the trainer only).
    let norm = proto.normalizer_spec.unwrap_or_default();
    if norm.escape_whitespaces == Some(false) {
        return Err(unsupported("escape_whitespaces = false"));
    }
    if proto.denormalizer_spec.as_ref().is_some_and(rewrites) {
        return Err(unsupported("a denormalizer with rules"));
    }
    let mut pieces = Vec::with_capacity(proto.pieces.len());
    for (id, p) in proto.pieces.iter().enumerate() {
        let raw = p.kind.unwrap_or(1);
        let kind = match raw {
            1 => SpKind::Normal,
            2 => SpKind::Unknown,
            3 => SpKind::Control,
            4 => SpKind::UserDefined,
            6 => SpKind::Byte,
            _ => return Err(SpImportError::PieceType { id, kind: raw }),
        };
        pieces.push(SpPiece {
            piece: p.piece.clone().unwrap_or_default(),
            score: Some(p.score.unwrap_or(0.0)),
            kind,
        });
    }
    let model = SpModel {
        pieces,
        add_dummy_prefix: norm.add_dummy_prefix.unwrap_or(true),
        remove_extra_whitespaces: norm.remove_extra_whitespaces.unwrap_or(true),
        byte_fallback: trainer.byte_fallback.unwrap_or(false),
        unk_surface: trainer
            .unk_surface
            .unwrap_or_else(|| " \u{2047} ".to_owned()),
        sections: SpSections::Inline,
        unigram,
        f64_scores: Vec::new(),
        charsmap: norm.precompiled_charsmap.unwrap_or_default(),
        unk_in_text: false,
        unk_per_char: false,
        collapse_spaces: false,
        strip_sections: false,
        strips: Vec::new(),
        char_steps: Default::default(),
        pre_split: None,
        joins_pieces: false,
        normalizer: None,
        precompiled: false,
    };
    model.validate().map_err(SpImportError::Invalid)?;
    Ok(model)
}
