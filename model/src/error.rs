//! Errors: [`ModelError`] for reading/writing model files, [`InvalidModel`] for content that
//! breaks a model invariant (see [`crate::Model::validate`]).

use std::path::PathBuf;

/// Why a model file could not be read or written. Each kind of damage has its own variant.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file does not start with `PICOBPE\0`: not a picobpe model.
    #[error("not a picobpe model file (bad magic bytes)")]
    BadMagic,
    /// The file is a picobpe model of a format version this build cannot read.
    #[error("model file format version {found} is not supported (this build reads versions 1 to {supported})")]
    UnsupportedVersion {
        /// Version in the file.
        found: u16,
        /// Newest version this build reads.
        supported: u16,
    },
    /// The file ends before the header or the payload it announces.
    #[error("model file is truncated: {have} bytes present, {needed} expected")]
    Truncated {
        /// Bytes the header says the file has.
        needed: u64,
        /// Bytes actually present.
        have: u64,
    },
    /// The payload's CRC-32 differs from the one in the header: the file is corrupt.
    #[error(
        "model file is corrupt: payload CRC-32 is {found:#010x}, header says {expected:#010x}"
    )]
    ChecksumMismatch {
        /// CRC-32 stored in the header.
        expected: u32,
        /// CRC-32 of the payload as read.
        found: u32,
    },
    /// The payload passed the checksum but is not a valid postcard `Model`.
    #[error("model payload does not decode: {0}")]
    Decode(#[source] postcard::Error),
    /// postcard could not encode the model (writing only).
    #[error("model could not be encoded: {0}")]
    Encode(#[source] postcard::Error),
    /// Bytes after the payload (or inside the payload after the `Model`).
    #[error("model file has {count} unexpected trailing bytes")]
    TrailingBytes {
        /// How many bytes are left over.
        count: u64,
    },
    /// The model decoded but breaks an invariant.
    #[error("invalid model: {0}")]
    Invalid(#[from] InvalidModel),
    /// The encoded payload would not fit the format's `u32` length field.
    #[error("model payload of {len} bytes exceeds the format's 4 GiB limit")]
    PayloadTooLarge {
        /// Payload length in bytes.
        len: u64,
    },
    /// The file holds a model of another kind than the caller reads.
    #[error("the file holds a {found} model, not a {expected} model")]
    WrongKind {
        /// The kind in the file.
        found: &'static str,
        /// The kind the caller reads.
        expected: &'static str,
    },
    /// The prebuilt tables of a version-3 file passed the checksum but are malformed or do
    /// not match the model beside them.
    #[error("model file's prebuilt tables are invalid: {reason}")]
    BadTables {
        /// What is wrong, naming the table.
        reason: String,
    },
    /// A byte-level model names a Unicode normalizer this build does not know.
    #[error(
        "model file names an unknown normalizer (code {code}; 1 to 4 are NFC, NFD, NFKC, NFKD)"
    )]
    BadNormalizer {
        /// The stored code.
        code: u8,
    },
    /// A byte-level model's settings byte (payload variant 10) is not one this build knows.
    #[error("model file's byte-level settings {bits:#04x}: unknown (1 is the prefix space)")]
    BadSettings {
        /// The stored byte.
        bits: u8,
    },
    /// A WordPiece model names a pre-tokenizer this build does not know.
    #[error(
        "model file names an unknown WordPiece pre-tokenizer (code {code:#04x}: bits 0-1 \
         whitespace 0-2, bits 2-3 punctuation, bits 4-5 digits, nothing above)"
    )]
    BadPreTokenizer {
        /// The stored code.
        code: u8,
    },
    /// A SentencePiece model decoded but breaks an invariant.
    #[error("invalid SentencePiece model: {0}")]
    InvalidSentencePiece(#[from] crate::sentencepiece::InvalidSpModel),
    /// The decoded WordPiece model breaks an invariant.
    #[error("invalid WordPiece model: {0}")]
    InvalidWordPiece(#[from] crate::wordpiece::InvalidWpModel),
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A version-4 file's special-token template holds an id the model does not have.
    #[error(
        "model file's special-token template holds id {id}, but the model has only {n_ids} ids"
    )]
    BadTemplate {
        /// The id.
        id: u32,
        /// The model's number of ids.
        n_ids: usize,
    },
    /// The file's list of specials that take whitespace (`lstrip`, `rstrip`; version 5) does
    /// not fit its tables: an id that is not a special, a repeated or misordered one, unknown
    /// bits, or any on a SentencePiece model. (A model's own list is checked by its
    /// `validate`.)
    #[error("model file's whitespace-taking specials: {reason}")]
    BadStrips {
        /// What is wrong.
        reason: String,
    },
    /// The file's `Split` regexes do not compile for the core, or belong to a model other than
    /// byte-level BPE.
    #[error("model file's split patterns: {reason}")]
    BadSplit {
        /// What is wrong.
        reason: String,
    },
}

/// A broken model invariant, naming the offending id, merge or special token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidModel {
    /// More ids than the tables can hold ([`picobpe::MAX_IDS`], 2 097 152).
    #[error(
        "{n_ids} ids: at most {} are supported (ids are packed in 21 bits)",
        picobpe::MAX_IDS
    )]
    TooManyIds {
        /// Number of ids.
        n_ids: u64,
    },
    /// The token bytes together exceed what `u32` offsets can address.
    #[error("tokens hold {total} bytes in total, more than u32 offsets can address")]
    TooManyBytes {
        /// Total bytes of all tokens.
        total: u64,
    },
    /// No ordinary single-byte token for this byte.
    #[error("byte 0x{byte:02X} has no single-byte ordinary token")]
    MissingByte {
        /// The byte value.
        byte: u8,
    },
    /// Two ordinary ids have the same bytes.
    #[error("ids {first} and {second} have the same bytes")]
    DuplicateToken {
        /// The lower id.
        first: u32,
        /// The higher id.
        second: u32,
    },
    /// A special token with empty text.
    #[error("special token {id} has empty text")]
    SpecialEmpty {
        /// The special's id.
        id: u32,
    },
    /// A special token's id is not below the number of ids.
    #[error("special token {text:?} has id {id}, but the model has only {n_ids} ids")]
    SpecialIdOutOfRange {
        /// The special's text.
        text: String,
        /// Its id.
        id: u32,
        /// Number of ids in the model.
        n_ids: u64,
    },
    /// Two special tokens have the same text.
    #[error("special token {text:?} is listed twice")]
    SpecialDuplicateText {
        /// The text.
        text: String,
    },
    /// The specials that take whitespace ([`crate::Model::strips`]) name an id that is not a
    /// special, repeat or misorder one, hold unknown bits, or include an `rstrip` special
    /// beside a special that starts with whitespace.
    #[error("specials that take whitespace: {reason}")]
    BadStrips {
        /// What is wrong.
        reason: String,
    },
    /// A `Split` regex ([`crate::Model::splits`]) the core's compiled splitter cannot run.
    #[error("split pattern: {reason}")]
    BadSplit {
        /// What is wrong, from [`crate::compile_pattern`].
        reason: String,
    },
    /// A prefix space ([`crate::Model::prefix_space`]) with a normalizer: picobpe applies
    /// one or the other.
    #[error("a prefix space (add_prefix_space) with a Unicode normalizer: not supported")]
    PrefixWithNormalizer,
    /// An empty token ([`crate::Model::empty_tokens`]) that is not an id with no bytes (or a
    /// special), or the list out of order (`id` is then `u32::MAX`).
    #[error("empty token {id}: not an unused id of the model, or the list is not increasing")]
    BadEmptyToken {
        /// The id.
        id: u32,
    },
    /// Normalizer steps ([`crate::Model::steps`]) that cannot go with the model's form or
    /// prefix space.
    #[error("normalizer steps: {reason}")]
    BadSteps {
        /// What is wrong.
        reason: String,
    },
    /// An end-of-word suffix ([`crate::Model::end_of_word_suffix`]) that some byte followed
    /// by it is not an ordinary token for, or beside tiktoken's whole-piece rule.
    #[error("end-of-word suffix {suffix:?}: {reason}")]
    BadWordEnd {
        /// The suffix, lossily as text.
        suffix: String,
        /// What is wrong.
        reason: String,
    },
    /// Two special tokens have the same id.
    #[error("two special tokens have id {id}")]
    SpecialDuplicateId {
        /// The id.
        id: u32,
    },
    /// `tokens[id]` of a special differs from its text.
    #[error("special token {text:?}: the bytes of id {id} differ from its text")]
    SpecialBytesMismatch {
        /// The special's text.
        text: String,
        /// Its id.
        id: u32,
    },
    /// A special token's text is also an ordinary token.
    #[error("special token {text:?} has the same bytes as ordinary token {ordinary}")]
    SpecialIsOrdinary {
        /// The special's text.
        text: String,
        /// The ordinary id with the same bytes.
        ordinary: u32,
    },
    /// A merge references an id that is not an ordinary token.
    #[error("merge #{index} references id {id}, which is not an ordinary token")]
    MergeUnknownId {
        /// Index of the merge (its rank).
        index: usize,
        /// The offending id.
        id: u32,
    },
    /// A merge's concatenated bytes are not an ordinary token.
    #[error("merge #{index} ({left}, {right}): the concatenated bytes are not a token")]
    MergeNotAToken {
        /// Index of the merge.
        index: usize,
        /// Left id.
        left: u32,
        /// Right id.
        right: u32,
    },
    /// Two merges produce the same token.
    #[error("merge #{index} produces id {merged}, which merge #{earlier} already produces")]
    MergeDuplicate {
        /// Index of the later merge.
        index: usize,
        /// Index of the earlier merge.
        earlier: usize,
        /// The id both produce.
        merged: u32,
    },
}
