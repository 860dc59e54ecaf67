//! Errors: [`ModelError`] for reading/writing model files, [`InvalidModel`] for content that
//! breaks a model invariant (see [`crate::Model::validate`]).

use core::fmt;
use std::path::PathBuf;

/// Why a model file could not be read or written. Each kind of damage has its own variant.
#[derive(Debug)]
pub enum ModelError {
    /// The file does not start with `PICOBPE\0`: not a picobpe model.
    BadMagic,
    /// The file is a picobpe model of a format version this build cannot read.
    UnsupportedVersion {
        /// Version in the file.
        found: u16,
        /// Newest version this build reads.
        supported: u16,
    },
    /// The file ends before the header or the payload it announces.
    Truncated {
        /// Bytes the header says the file has.
        needed: u64,
        /// Bytes actually present.
        have: u64,
    },
    /// The payload's CRC-32 differs from the one in the header: the file is corrupt.
    ChecksumMismatch {
        /// CRC-32 stored in the header.
        expected: u32,
        /// CRC-32 of the payload as read.
        found: u32,
    },
    /// The payload passed the checksum but is not a valid postcard `Model`.
    Decode(postcard::Error),
    /// postcard could not encode the model (writing only).
    Encode(postcard::Error),
    /// Bytes after the payload (or inside the payload after the `Model`).
    TrailingBytes {
        /// How many bytes are left over.
        count: u64,
    },
    /// The model decoded but breaks an invariant.
    Invalid(InvalidModel),
    /// The encoded payload would not fit the format's `u32` length field.
    PayloadTooLarge {
        /// Payload length in bytes.
        len: u64,
    },
    /// The file holds a model of another kind than the caller reads.
    WrongKind {
        /// The kind in the file.
        found: &'static str,
        /// The kind the caller reads.
        expected: &'static str,
    },
    /// The prebuilt tables of a version-3 file passed the checksum but are malformed or do
    /// not match the model beside them.
    BadTables {
        /// What is wrong, naming the table.
        reason: String,
    },
    /// A SentencePiece model decoded but breaks an invariant.
    InvalidSentencePiece(crate::sentencepiece::InvalidSpModel),
    /// The decoded WordPiece model breaks an invariant.
    InvalidWordPiece(crate::wordpiece::InvalidWpModel),
    /// Reading or writing the file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::BadMagic => f.write_str("not a picobpe model file (bad magic bytes)"),
            ModelError::UnsupportedVersion { found, supported } => write!(
                f,
                "model file format version {found} is not supported (this build reads versions 1 to {supported})"
            ),
            ModelError::Truncated { needed, have } => write!(
                f,
                "model file is truncated: {have} bytes present, {needed} expected"
            ),
            ModelError::ChecksumMismatch { expected, found } => write!(
                f,
                "model file is corrupt: payload CRC-32 is {found:#010x}, header says {expected:#010x}"
            ),
            ModelError::Decode(err) => write!(f, "model payload does not decode: {err}"),
            ModelError::Encode(err) => write!(f, "model could not be encoded: {err}"),
            ModelError::TrailingBytes { count } => {
                write!(f, "model file has {count} unexpected trailing bytes")
            }
            ModelError::Invalid(err) => write!(f, "invalid model: {err}"),
            ModelError::PayloadTooLarge { len } => {
                write!(f, "model payload of {len} bytes exceeds the format's 4 GiB limit")
            }
            ModelError::WrongKind { found, expected } => {
                write!(f, "the file holds a {found} model, not a {expected} model")
            }
            ModelError::BadTables { reason } => {
                write!(f, "model file's prebuilt tables are invalid: {reason}")
            }
            ModelError::InvalidSentencePiece(err) => write!(f, "invalid SentencePiece model: {err}"),
            ModelError::InvalidWordPiece(err) => write!(f, "invalid WordPiece model: {err}"),
            ModelError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelError::Decode(err) | ModelError::Encode(err) => Some(err),
            ModelError::Invalid(err) => Some(err),
            ModelError::InvalidSentencePiece(err) => Some(err),
            ModelError::InvalidWordPiece(err) => Some(err),
            ModelError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<crate::wordpiece::InvalidWpModel> for ModelError {
    fn from(err: crate::wordpiece::InvalidWpModel) -> Self {
        ModelError::InvalidWordPiece(err)
    }
}

impl From<crate::sentencepiece::InvalidSpModel> for ModelError {
    fn from(err: crate::sentencepiece::InvalidSpModel) -> Self {
        ModelError::InvalidSentencePiece(err)
    }
}

impl From<InvalidModel> for ModelError {
    fn from(err: InvalidModel) -> Self {
        ModelError::Invalid(err)
    }
}

/// A broken model invariant, naming the offending id, merge or special token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidModel {
    /// More ids than the tables can hold ([`picobpe::tables::MAX_IDS`], 2 097 152).
    TooManyIds {
        /// Number of ids.
        n_ids: u64,
    },
    /// The token bytes together exceed what `u32` offsets can address.
    TooManyBytes {
        /// Total bytes of all tokens.
        total: u64,
    },
    /// No ordinary single-byte token for this byte.
    MissingByte {
        /// The byte value.
        byte: u8,
    },
    /// Two ordinary ids have the same bytes.
    DuplicateToken {
        /// The lower id.
        first: u32,
        /// The higher id.
        second: u32,
    },
    /// A special token with empty text.
    SpecialEmpty {
        /// The special's id.
        id: u32,
    },
    /// A special token's id is not below the number of ids.
    SpecialIdOutOfRange {
        /// The special's text.
        text: String,
        /// Its id.
        id: u32,
        /// Number of ids in the model.
        n_ids: u64,
    },
    /// Two special tokens have the same text.
    SpecialDuplicateText {
        /// The text.
        text: String,
    },
    /// Two special tokens have the same id.
    SpecialDuplicateId {
        /// The id.
        id: u32,
    },
    /// `tokens[id]` of a special differs from its text.
    SpecialBytesMismatch {
        /// The special's text.
        text: String,
        /// Its id.
        id: u32,
    },
    /// A special token's text is also an ordinary token.
    SpecialIsOrdinary {
        /// The special's text.
        text: String,
        /// The ordinary id with the same bytes.
        ordinary: u32,
    },
    /// A merge references an id that is not an ordinary token.
    MergeUnknownId {
        /// Index of the merge (its rank).
        index: usize,
        /// The offending id.
        id: u32,
    },
    /// A merge's concatenated bytes are not an ordinary token.
    MergeNotAToken {
        /// Index of the merge.
        index: usize,
        /// Left id.
        left: u32,
        /// Right id.
        right: u32,
    },
    /// Two merges produce the same token.
    MergeDuplicate {
        /// Index of the later merge.
        index: usize,
        /// Index of the earlier merge.
        earlier: usize,
        /// The id both produce.
        merged: u32,
    },
}

impl fmt::Display for InvalidModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidModel::TooManyIds { n_ids } => {
                write!(
                    f,
                    "{n_ids} ids: at most {} are supported (ids are packed in 21 bits)",
                    picobpe::tables::MAX_IDS
                )
            }
            InvalidModel::TooManyBytes { total } => write!(
                f,
                "tokens hold {total} bytes in total, more than u32 offsets can address"
            ),
            InvalidModel::MissingByte { byte } => {
                write!(f, "byte 0x{byte:02X} has no single-byte ordinary token")
            }
            InvalidModel::DuplicateToken { first, second } => {
                write!(f, "ids {first} and {second} have the same bytes")
            }
            InvalidModel::SpecialEmpty { id } => write!(f, "special token {id} has empty text"),
            InvalidModel::SpecialIdOutOfRange { text, id, n_ids } => write!(
                f,
                "special token {text:?} has id {id}, but the model has only {n_ids} ids"
            ),
            InvalidModel::SpecialDuplicateText { text } => {
                write!(f, "special token {text:?} is listed twice")
            }
            InvalidModel::SpecialDuplicateId { id } => {
                write!(f, "two special tokens have id {id}")
            }
            InvalidModel::SpecialBytesMismatch { text, id } => write!(
                f,
                "special token {text:?}: the bytes of id {id} differ from its text"
            ),
            InvalidModel::SpecialIsOrdinary { text, ordinary } => write!(
                f,
                "special token {text:?} has the same bytes as ordinary token {ordinary}"
            ),
            InvalidModel::MergeUnknownId { index, id } => write!(
                f,
                "merge #{index} references id {id}, which is not an ordinary token"
            ),
            InvalidModel::MergeNotAToken { index, left, right } => write!(
                f,
                "merge #{index} ({left}, {right}): the concatenated bytes are not a token"
            ),
            InvalidModel::MergeDuplicate {
                index,
                earlier,
                merged,
            } => write!(
                f,
                "merge #{index} produces id {merged}, which merge #{earlier} already produces"
            ),
        }
    }
}

impl std::error::Error for InvalidModel {}
