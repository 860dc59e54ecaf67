//! The `*.model` file format, version 1.
//!
//! ```text
//! offset  size  field
//! 0       8     magic  b"PICOBPE\0"
//! 8       2     format version, u16 little-endian (= 1)
//! 10      4     payload length N, u32 little-endian
//! 14      4     CRC-32 (IEEE, as crc32fast computes it) of the payload, u32 little-endian
//! 18      N     payload: postcard encoding of `Model`
//! ```
//!
//! The payload is postcard (varint lengths and integers, enum variant index as varint) of
//! `Model { pattern, tokens, merges, specials, whole_piece }` in that field order; see
//! [`crate::Model`]. A file must end exactly after the payload.
//!
//! Reading checks, in order: magic → version → header length → payload length → checksum →
//! postcard decode (must consume the whole payload) → [`Model::validate`]. Each failure is its
//! own [`ModelError`] variant. Decoding a hostile payload cannot allocate much beyond the file's
//! own size: postcard reads from the slice, every element costs at least one input byte, and
//! serde caps the up-front capacity it reserves for a claimed sequence length at 1 MiB.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::ModelError;
use crate::model::Model;

/// The 8 bytes every model file starts with.
pub const MAGIC: [u8; 8] = *b"PICOBPE\0";
/// The format version this build writes and the newest it reads.
pub const VERSION: u16 = 1;
/// Header size: magic, version, length, checksum.
pub const HEADER_LEN: usize = 8 + 2 + 4 + 4;

impl Model {
    /// Validate and encode into the file format (header + postcard payload).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        self.validate()?;
        let payload = postcard::to_stdvec(self).map_err(ModelError::Encode)?;
        let len = u32::try_from(payload.len()).map_err(|_| ModelError::PayloadTooLarge {
            len: payload.len() as u64,
        })?;
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        Ok(out)
    }

    /// Decode and validate a model file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model, ModelError> {
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
        if version != VERSION {
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
        let (model, rest): (Model, &[u8]) =
            postcard::take_from_bytes(payload).map_err(ModelError::Decode)?;
        if !rest.is_empty() {
            return Err(ModelError::TrailingBytes {
                count: rest.len() as u64,
            });
        }
        model.validate()?;
        Ok(model)
    }

    /// Read, decode and validate a model file.
    pub fn read(path: impl AsRef<Path>) -> Result<Model, ModelError> {
        let path = path.as_ref();
        let bytes = fs::read(path).map_err(|source| ModelError::Io {
            path: path.to_owned(),
            source,
        })?;
        Model::from_bytes(&bytes)
    }

    /// Validate, encode and write atomically: the bytes go to a temporary file in the same
    /// directory, which is then renamed over `path`, so readers never see a partial model.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        let path = path.as_ref();
        let bytes = self.to_bytes()?;
        let tmp = temp_path(path);
        let io = |source| ModelError::Io {
            path: path.to_owned(),
            source,
        };
        let result = (|| {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(&bytes)?;
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
