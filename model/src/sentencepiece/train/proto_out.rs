//! The `sentencepiece.model` a trainer writes: a `ModelProto` (`sentencepiece_model.proto`)
//! with the pieces, the trainer's options under their own field numbers, and the normalizer.

use prost::Message;

use super::SpBpeTrainer;

/// `ModelProto` (the fields written).
#[derive(Clone, PartialEq, prost::Message)]
struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pieces: Vec<PieceProto>,
    #[prost(message, optional, tag = "2")]
    trainer_spec: Option<TrainerSpec>,
    #[prost(message, optional, tag = "3")]
    normalizer_spec: Option<NormalizerSpec>,
}

/// `ModelProto.SentencePiece`.
#[derive(Clone, PartialEq, prost::Message)]
struct PieceProto {
    #[prost(string, optional, tag = "1")]
    piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    score: Option<f32>,
    #[prost(int32, optional, tag = "3")]
    kind: Option<i32>,
}

/// `TrainerSpec` (the options `host-trainer` takes, plus the model type).
#[derive(Clone, PartialEq, prost::Message)]
struct TrainerSpec {
    #[prost(string, repeated, tag = "1")]
    input: Vec<String>,
    #[prost(int32, optional, tag = "3")]
    model_type: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    vocab_size: Option<i32>,
    #[prost(float, optional, tag = "10")]
    character_coverage: Option<f32>,
    #[prost(uint64, optional, tag = "11")]
    input_sentence_size: Option<u64>,
    #[prost(bool, optional, tag = "19")]
    shuffle_input_sentence: Option<bool>,
    #[prost(int32, optional, tag = "18")]
    max_sentence_length: Option<i32>,
    #[prost(int32, optional, tag = "20")]
    max_sentencepiece_length: Option<i32>,
    #[prost(bool, optional, tag = "21")]
    split_by_unicode_script: Option<bool>,
    #[prost(bool, optional, tag = "22")]
    split_by_whitespace: Option<bool>,
    #[prost(bool, optional, tag = "23")]
    split_by_number: Option<bool>,
    #[prost(bool, optional, tag = "24")]
    treat_whitespace_as_suffix: Option<bool>,
    #[prost(bool, optional, tag = "25")]
    split_digits: Option<bool>,
    #[prost(bool, optional, tag = "26")]
    allow_whitespace_only_pieces: Option<bool>,
    #[prost(string, repeated, tag = "30")]
    control_symbols: Vec<String>,
    #[prost(string, repeated, tag = "31")]
    user_defined_symbols: Vec<String>,
    #[prost(bool, optional, tag = "35")]
    byte_fallback: Option<bool>,
    #[prost(int32, optional, tag = "40")]
    unk_id: Option<i32>,
    #[prost(int32, optional, tag = "41")]
    bos_id: Option<i32>,
    #[prost(int32, optional, tag = "42")]
    eos_id: Option<i32>,
    #[prost(int32, optional, tag = "43")]
    pad_id: Option<i32>,
    #[prost(string, optional, tag = "44")]
    unk_surface: Option<String>,
    #[prost(string, optional, tag = "45")]
    unk_piece: Option<String>,
    #[prost(string, optional, tag = "46")]
    bos_piece: Option<String>,
    #[prost(string, optional, tag = "47")]
    eos_piece: Option<String>,
    #[prost(string, optional, tag = "48")]
    pad_piece: Option<String>,
}

/// `NormalizerSpec`.
#[derive(Clone, PartialEq, prost::Message)]
struct NormalizerSpec {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    precompiled_charsmap: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "3")]
    add_dummy_prefix: Option<bool>,
    #[prost(bool, optional, tag = "4")]
    remove_extra_whitespaces: Option<bool>,
    #[prost(bool, optional, tag = "5")]
    escape_whitespaces: Option<bool>,
}

/// The serialized `ModelProto` of `model`, trained with `spec` from `inputs`.
pub(super) fn model_proto(
    spec: &SpBpeTrainer,
    model: &super::super::SpModel,
    inputs: &[String],
) -> Vec<u8> {
    let pieces = model
        .pieces
        .iter()
        .map(|p| PieceProto {
            piece: Some(p.piece.clone()),
            score: Some(p.score.unwrap_or(0.0)),
            kind: Some(p.kind as i32),
        })
        .collect();
    let s = spec;
    let trainer = TrainerSpec {
        input: inputs.to_vec(),
        model_type: Some(2),
        vocab_size: Some(model.pieces.len() as i32),
        character_coverage: Some(s.character_coverage),
        input_sentence_size: Some(s.input_sentence_size),
        shuffle_input_sentence: Some(s.shuffle_input_sentence),
        max_sentence_length: Some(s.max_sentence_length as i32),
        max_sentencepiece_length: Some(s.max_sentencepiece_length as i32),
        split_by_unicode_script: Some(s.split_by_unicode_script),
        split_by_whitespace: Some(s.split_by_whitespace),
        split_by_number: Some(s.split_by_number),
        treat_whitespace_as_suffix: Some(false),
        split_digits: Some(s.split_digits),
        allow_whitespace_only_pieces: Some(s.allow_whitespace_only_pieces),
        control_symbols: s.control_symbols.clone(),
        user_defined_symbols: s.user_defined_symbols.clone(),
        byte_fallback: Some(s.byte_fallback),
        unk_id: Some(s.unk_id),
        bos_id: Some(s.bos_id),
        eos_id: Some(s.eos_id),
        pad_id: Some(s.pad_id),
        unk_surface: Some(s.unk_surface.clone()),
        unk_piece: Some(s.unk_piece.clone()),
        bos_piece: Some(s.bos_piece.clone()),
        eos_piece: Some(s.eos_piece.clone()),
        pad_piece: Some(s.pad_piece.clone()),
    };
    let normalizer = NormalizerSpec {
        name: Some(s.normalization.name().to_string()),
        precompiled_charsmap: (!model.charsmap.is_empty()).then(|| model.charsmap.clone()),
        add_dummy_prefix: Some(s.add_dummy_prefix),
        remove_extra_whitespaces: Some(s.remove_extra_whitespaces),
        escape_whitespaces: Some(true),
    };
    ModelProto {
        pieces,
        trainer_spec: Some(trainer),
        normalizer_spec: Some(normalizer),
    }
    .encode_to_vec()
}
