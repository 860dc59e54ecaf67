//! The `*.model` file format, versions 1 and 2.
//!
//! ```text
//! offset  size  field
//! 0       8     magic  b"PICOBPE\0"
//! 8       2     format version, u16 little-endian (1 or 2)
//! 10      4     payload length N, u32 little-endian
//! 14      4     CRC-32 (IEEE, as crc32fast computes it) of the payload, u32 little-endian
//! 18      N     payload: postcard encoding of `Model`
//! ```
//!
//! The payload is postcard (varint lengths and integers, enum variant index as varint).
//! - Version 1: a byte-level BPE model, `Model { pattern, tokens, merges, specials,
//!   whole_piece }` in that field order; see [`crate::Model`]. Byte-level BPE models are still
//!   written as version 1, so every build reads them.
//! - Version 2: a model kind, then the model: variant 0 is a byte-level BPE `Model` as in
//!   version 1, variant 1 a SentencePiece BPE [`crate::SpModel`] `{ pieces, add_dummy_prefix,
//!   remove_extra_whitespaces, byte_fallback, unk_surface, sections }`, each piece `{ piece, score,
//!   kind }` (score an optional `f32`, kind a variant index: normal, unknown, control,
//!   user-defined, byte; sections a variant index: inline, every piece prefixed, first piece
//!   prefixed).
//!
//! A file must end exactly after the payload.
//!
//! Reading checks, in order: magic → version → header length → payload length → checksum →
//! postcard decode (must consume the whole payload) → [`Model::validate`]. Each failure is its
//! own [`ModelError`] variant. Decoding a hostile payload cannot allocate much beyond the file's
//! own size: postcard reads from the slice, every element costs at least one input byte, and
//! serde caps the up-front capacity it reserves for a claimed sequence length at 1 MiB.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ModelError;
use crate::model::Model;
use crate::sentencepiece::SpModel;

/// The 8 bytes every model file starts with.
pub const MAGIC: [u8; 8] = *b"PICOBPE\0";
/// The newest format version this build reads (and writes for SentencePiece models).
pub const VERSION: u16 = 2;
/// The version byte-level BPE models are written as.
pub const BPE_VERSION: u16 = 1;
/// Header size: magic, version, length, checksum.
pub const HEADER_LEN: usize = 8 + 2 + 4 + 4;

impl Model {
    /// Validate and encode into the file format (header + postcard payload).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        self.validate()?;
        let payload = postcard::to_stdvec(self).map_err(ModelError::Encode)?;
        frame(BPE_VERSION, &payload)
    }

    /// Decode and validate a model file's bytes (a byte-level BPE model; a SentencePiece
    /// model is [`ModelError::WrongKind`]: read those with [`AnyModel::from_bytes`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Model, ModelError> {
        match AnyModel::from_bytes(bytes)? {
            AnyModel::BytePair(model) => Ok(model),
            AnyModel::SentencePiece(_) => Err(ModelError::WrongKind {
                found: "SentencePiece BPE",
                expected: "byte-level BPE",
            }),
        }
    }

    /// Read, decode and validate a model file.
    pub fn read(path: impl AsRef<Path>) -> Result<Model, ModelError> {
        let path = path.as_ref();
        Model::from_bytes(&read_file(path)?)
    }

    /// Validate, encode and write atomically: the bytes go to a temporary file in the same
    /// directory, which is then renamed over `path`, so readers never see a partial model.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        write_file(path.as_ref(), &self.to_bytes()?)
    }
}

/// A model of any kind, as read from a file.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyModel {
    /// A byte-level BPE model (GPT-2 family, trained models).
    BytePair(Model),
    /// A SentencePiece BPE model (Llama 2 family).
    SentencePiece(SpModel),
}

/// The version-2 payload as written: the kind, then the model.
#[derive(Serialize)]
enum PayloadRef<'a> {
    /// Variant 0; byte-level BPE models are written as version 1, so this stays unused.
    #[allow(dead_code)]
    BytePair(&'a Model),
    SentencePiece(&'a SpModel),
}

/// The version-2 payload as read.
#[derive(Deserialize)]
enum Payload {
    BytePair(Model),
    SentencePiece(SpModel),
}

impl AnyModel {
    /// Decode and validate a model file's bytes, whatever its kind.
    pub fn from_bytes(bytes: &[u8]) -> Result<AnyModel, ModelError> {
        let (version, payload) = unframe(bytes)?;
        let (model, rest) = if version == BPE_VERSION {
            let (model, rest): (Model, &[u8]) =
                postcard::take_from_bytes(payload).map_err(ModelError::Decode)?;
            (AnyModel::BytePair(model), rest)
        } else {
            let (model, rest): (Payload, &[u8]) =
                postcard::take_from_bytes(payload).map_err(ModelError::Decode)?;
            let model = match model {
                Payload::BytePair(m) => AnyModel::BytePair(m),
                Payload::SentencePiece(m) => AnyModel::SentencePiece(m),
            };
            (model, rest)
        };
        if !rest.is_empty() {
            return Err(ModelError::TrailingBytes {
                count: rest.len() as u64,
            });
        }
        match &model {
            AnyModel::BytePair(m) => m.validate()?,
            AnyModel::SentencePiece(m) => m.validate()?,
        }
        Ok(model)
    }

    /// Read, decode and validate a model file of any kind.
    pub fn read(path: impl AsRef<Path>) -> Result<AnyModel, ModelError> {
        AnyModel::from_bytes(&read_file(path.as_ref())?)
    }
}

impl SpModel {
    /// Validate and encode into the file format (version 2).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        self.validate()?;
        let payload =
            postcard::to_stdvec(&PayloadRef::SentencePiece(self)).map_err(ModelError::Encode)?;
        frame(VERSION, &payload)
    }

    /// Decode and validate a SentencePiece model file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<SpModel, ModelError> {
        match AnyModel::from_bytes(bytes)? {
            AnyModel::SentencePiece(model) => Ok(model),
            AnyModel::BytePair(_) => Err(ModelError::WrongKind {
                found: "byte-level BPE",
                expected: "SentencePiece BPE",
            }),
        }
    }

    /// Read, decode and validate a SentencePiece model file.
    pub fn read(path: impl AsRef<Path>) -> Result<SpModel, ModelError> {
        SpModel::from_bytes(&read_file(path.as_ref())?)
    }

    /// Validate, encode and write atomically (see [`Model::write`]).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        write_file(path.as_ref(), &self.to_bytes()?)
    }
}

/// Header + payload.
fn frame(version: u16, payload: &[u8]) -> Result<Vec<u8>, ModelError> {
    let len = u32::try_from(payload.len()).map_err(|_| ModelError::PayloadTooLarge {
        len: payload.len() as u64,
    })?;
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

/// Check the header (magic, version, length, checksum) and return the version and payload.
fn unframe(bytes: &[u8]) -> Result<(u16, &[u8]), ModelError> {
    let have = bytes.len() as u64;
    let magic_len = bytes.len().min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(ModelError::BadMagic);
    }
    let header = bytes.get(..HEADER_LEN).ok_or(ModelError::Truncated {
        needed: HEADER_LEN as u64,
        have,
    })?;
    let field = |at: usize| [header[at], header[at + 1], header[at + 2], header[at + 3]];
    let version = u16::from_le_bytes([header[8], header[9]]);
    if !(BPE_VERSION..=VERSION).contains(&version) {
        return Err(ModelError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        });
    }
    let len = u32::from_le_bytes(field(10)) as u64;
    let expected = u32::from_le_bytes(field(14));
    let needed = HEADER_LEN as u64 + len;
    if have < needed {
        return Err(ModelError::Truncated { needed, have });
    }
    if have > needed {
        return Err(ModelError::TrailingBytes {
            count: have - needed,
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let found = crc32fast::hash(payload);
    if found != expected {
        return Err(ModelError::ChecksumMismatch { expected, found });
    }
    Ok((version, payload))
}

fn read_file(path: &Path) -> Result<Vec<u8>, ModelError> {
    fs::read(path).map_err(|source| ModelError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Write `bytes` to a temporary file next to `path`, then rename it over `path`.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    {
        let tmp = temp_path(path);
        let io = |source| ModelError::Io {
            path: path.to_owned(),
            source,
        };
        let result = (|| {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map_err(io)
    }
}

/// `dir/.name.tmp-<pid>` next to `path`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}
