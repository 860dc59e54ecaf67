//! The `sentencepiece_model.proto` messages picobpe reads (`import_proto`) and writes (the
//! trainer's `sentencepiece.model`), as `prost` types: the fields used, under their own field
//! numbers; `prost` skips the others when reading.

/// `ModelProto` (the fields picobpe reads or writes).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pub(crate) pieces: Vec<PieceProto>,
    #[prost(message, optional, tag = "2")]
    pub(crate) trainer_spec: Option<TrainerSpec>,
    #[prost(message, optional, tag = "3")]
    pub(crate) normalizer_spec: Option<NormalizerSpec>,
    #[prost(message, optional, tag = "5")]
    pub(crate) denormalizer_spec: Option<NormalizerSpec>,
}

/// `ModelProto.SentencePiece`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PieceProto {
    #[prost(string, optional, tag = "1")]
    pub(crate) piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub(crate) score: Option<f32>,
    /// NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6.
    #[prost(int32, optional, tag = "3")]
    pub(crate) kind: Option<i32>,
}

/// `TrainerSpec`: the fields the importer reads (model type, byte fallback, unknown
/// surface, BOS id, suffix whitespace) and those the trainer writes.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TrainerSpec {
    #[prost(string, repeated, tag = "1")]
    pub(crate) input: Vec<String>,
    /// UNIGRAM = 1, BPE = 2, WORD = 3, CHAR = 4.
    #[prost(int32, optional, tag = "3")]
    pub(crate) model_type: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub(crate) vocab_size: Option<i32>,
    #[prost(float, optional, tag = "10")]
    pub(crate) character_coverage: Option<f32>,
    #[prost(uint64, optional, tag = "11")]
    pub(crate) input_sentence_size: Option<u64>,
    #[prost(bool, optional, tag = "19")]
    pub(crate) shuffle_input_sentence: Option<bool>,
    #[prost(int32, optional, tag = "14")]
    pub(crate) seed_sentencepiece_size: Option<i32>,
    #[prost(float, optional, tag = "15")]
    pub(crate) shrinking_factor: Option<f32>,
    #[prost(int32, optional, tag = "16")]
    pub(crate) num_threads: Option<i32>,
    #[prost(int32, optional, tag = "17")]
    pub(crate) num_sub_iterations: Option<i32>,
    #[prost(int32, optional, tag = "18")]
    pub(crate) max_sentence_length: Option<i32>,
    #[prost(int32, optional, tag = "20")]
    pub(crate) max_sentencepiece_length: Option<i32>,
    #[prost(bool, optional, tag = "21")]
    pub(crate) split_by_unicode_script: Option<bool>,
    #[prost(bool, optional, tag = "22")]
    pub(crate) split_by_whitespace: Option<bool>,
    #[prost(bool, optional, tag = "23")]
    pub(crate) split_by_number: Option<bool>,
    #[prost(bool, optional, tag = "24")]
    pub(crate) treat_whitespace_as_suffix: Option<bool>,
    #[prost(bool, optional, tag = "25")]
    pub(crate) split_digits: Option<bool>,
    #[prost(bool, optional, tag = "26")]
    pub(crate) allow_whitespace_only_pieces: Option<bool>,
    #[prost(string, repeated, tag = "30")]
    pub(crate) control_symbols: Vec<String>,
    #[prost(string, repeated, tag = "31")]
    pub(crate) user_defined_symbols: Vec<String>,
    #[prost(bool, optional, tag = "35")]
    pub(crate) byte_fallback: Option<bool>,
    #[prost(int32, optional, tag = "40")]
    pub(crate) unk_id: Option<i32>,
    #[prost(int32, optional, tag = "41")]
    pub(crate) bos_id: Option<i32>,
    #[prost(int32, optional, tag = "42")]
    pub(crate) eos_id: Option<i32>,
    #[prost(int32, optional, tag = "43")]
    pub(crate) pad_id: Option<i32>,
    #[prost(string, optional, tag = "44")]
    pub(crate) unk_surface: Option<String>,
    #[prost(string, optional, tag = "45")]
    pub(crate) unk_piece: Option<String>,
    #[prost(string, optional, tag = "46")]
    pub(crate) bos_piece: Option<String>,
    #[prost(string, optional, tag = "47")]
    pub(crate) eos_piece: Option<String>,
    #[prost(string, optional, tag = "48")]
    pub(crate) pad_piece: Option<String>,
}

/// `NormalizerSpec`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NormalizerSpec {
    #[prost(string, optional, tag = "1")]
    pub(crate) name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub(crate) precompiled_charsmap: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "3")]
    pub(crate) add_dummy_prefix: Option<bool>,
    #[prost(bool, optional, tag = "4")]
    pub(crate) remove_extra_whitespaces: Option<bool>,
    #[prost(bool, optional, tag = "5")]
    pub(crate) escape_whitespaces: Option<bool>,
    #[prost(string, optional, tag = "6")]
    pub(crate) normalization_rule_tsv: Option<String>,
}
