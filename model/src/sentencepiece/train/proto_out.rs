//! The `sentencepiece.model` a trainer writes: a `ModelProto` ([`super::super::proto`]) with
//! the pieces, the trainer's options, and the normalizer.

use prost::Message;

use super::super::proto::{ModelProto, NormalizerSpec, PieceProto, TrainerSpec};

use super::{SpModelType, SpTrainer};

/// The serialized `ModelProto` of `model`, trained with `spec` from `inputs`.
pub(super) fn model_proto(
    spec: &SpTrainer,
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
    let unigram = s.model_type == SpModelType::Unigram;
    let trainer = TrainerSpec {
        input: inputs.to_vec(),
        model_type: Some(if unigram { 1 } else { 2 }),
        seed_sentencepiece_size: unigram.then_some(s.seed_sentencepiece_size as i32),
        shrinking_factor: unigram.then_some(s.shrinking_factor),
        num_threads: unigram.then_some(s.num_threads as i32),
        num_sub_iterations: unigram.then_some(s.num_sub_iterations as i32),
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
        normalization_rule_tsv: None,
    };
    ModelProto {
        pieces,
        trainer_spec: Some(trainer),
        normalizer_spec: Some(normalizer),
        denormalizer_spec: None,
    }
    .encode_to_vec()
}
