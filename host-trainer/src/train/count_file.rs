//! Count files: the pre-tokenized piece counts of one shard of a corpus, so counting can run on
//! many machines and the merges on one (`count-pieces`, `merge-counts`, `train --counts`).
//!
//! ```text
//! offset  size  field
//! 0       8     magic  b"PICOCNT\0"
//! 8       2     format version, u16 little-endian (1)
//! 10      8     payload length N, u64 little-endian
//! 18      4     CRC-32 (IEEE, as crc32fast computes it) of the payload, u32 little-endian
//! 22      N     payload: postcard `{ pattern, specials, n_bytes, n_pieces, pieces }`
//! ```
//!
//! `pattern` and `specials` (in the order given) are the settings every shard must share: they
//! decide where pieces end. `pieces` holds each distinct piece's bytes and count, sorted by
//! bytes, so the same text always gives the same file and two files sum in one linear merge.
//! Summing is exact because shards are cut at document boundaries (between input files, or
//! right after a special token), where no piece can span the cut: the sum of the shards'
//! counts is the count of the whole, and the merge loop sees the same table.
//!
//! Reading checks, in order, each with its own error: magic → header length → version →
//! payload length → checksum → postcard decode (consuming the whole payload) → pieces
//! non-empty, strictly sorted, counts positive and their sum equal to `n_pieces`.

use std::fs;
use std::path::{Path, PathBuf};

use picobpe_model::PatternKind;
use serde::{Deserialize, Serialize};

use super::count::Counts;
use super::error::{CountFileError, TrainError};

/// The 8 bytes every count file starts with.
pub const MAGIC: [u8; 8] = *b"PICOCNT\0";
/// The format version this build writes and reads.
pub const VERSION: u16 = 1;
/// Header size: magic, version, length, checksum.
pub const HEADER_LEN: usize = 8 + 2 + 8 + 4;

/// The counts of one shard (or of several, summed), with the settings they were made with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountFile {
    /// Pre-tokenization pattern.
    pub pattern: PatternKind,
    /// Special tokens, in the order given to `count-pieces`.
    pub specials: Vec<String>,
    /// Bytes of text counted.
    pub n_bytes: u64,
    /// Pieces counted, with repetitions (the sum of the counts).
    pub n_pieces: u64,
    /// Distinct pieces and their counts, sorted by bytes.
    pub pieces: Vec<(Vec<u8>, u64)>,
}

impl CountFile {
    /// The counts of a counting pass, sorted.
    pub fn from_counts(
        counts: Counts,
        pattern: PatternKind,
        specials: &[String],
        n_bytes: u64,
    ) -> Self {
        let n_pieces = counts.n_pieces;
        let mut pieces: Vec<(Vec<u8>, u64)> = counts.into_pieces().collect();
        pieces.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        CountFile {
            pattern,
            specials: specials.to_vec(),
            n_bytes,
            n_pieces,
            pieces,
        }
    }

    /// Encode with the header (layout in the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = postcard::to_stdvec(self).expect("postcard encodes to a Vec infallibly");
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// Decode and check a count file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<CountFile, CountFileError> {
        let have = bytes.len() as u64;
        let magic_len = bytes.len().min(MAGIC.len());
        if bytes[..magic_len] != MAGIC[..magic_len] {
            return Err(CountFileError::BadMagic {
                is_model: bytes.starts_with(b"PICOBPE\0"),
            });
        }
        let header = bytes.get(..HEADER_LEN).ok_or(CountFileError::Truncated {
            needed: HEADER_LEN as u64,
            have,
        })?;
        let version = u16::from_le_bytes([header[8], header[9]]);
        if version != VERSION {
            return Err(CountFileError::UnsupportedVersion { found: version });
        }
        let len = u64::from_le_bytes(header[10..18].try_into().expect("8 bytes"));
        let expected = u32::from_le_bytes(header[18..22].try_into().expect("4 bytes"));
        let needed = (HEADER_LEN as u64).saturating_add(len);
        if have < needed {
            return Err(CountFileError::Truncated { needed, have });
        }
        if have > needed {
            return Err(CountFileError::TrailingBytes {
                count: have - needed,
            });
        }
        let payload = &bytes[HEADER_LEN..];
        let found = crc32fast::hash(payload);
        if found != expected {
            return Err(CountFileError::ChecksumMismatch { expected, found });
        }
        let (file, rest): (CountFile, &[u8]) =
            postcard::take_from_bytes(payload).map_err(CountFileError::Decode)?;
        if !rest.is_empty() {
            return Err(CountFileError::TrailingBytes {
                count: rest.len() as u64,
            });
        }
        file.validate()?;
        Ok(file)
    }

    /// The checks after decoding: pieces non-empty and strictly sorted, counts positive,
    /// summing to `n_pieces`.
    fn validate(&self) -> Result<(), CountFileError> {
        let invalid = |reason: String| Err(CountFileError::Invalid { reason });
        let mut sum: u64 = 0;
        for (i, (bytes, count)) in self.pieces.iter().enumerate() {
            if bytes.is_empty() {
                return invalid(format!("piece {i} is empty"));
            }
            if *count == 0 {
                return invalid(format!("piece {i} has count 0"));
            }
            if i > 0 && self.pieces[i - 1].0 >= *bytes {
                return invalid(format!("pieces {} and {i} are not in order", i - 1));
            }
            sum = match sum.checked_add(*count) {
                Some(s) => s,
                None => return invalid("the counts overflow u64".to_owned()),
            };
        }
        if sum != self.n_pieces {
            return invalid(format!(
                "the counts sum to {sum}, but the file says {} pieces",
                self.n_pieces
            ));
        }
        Ok(())
    }

    /// Read, decode and check a count file; errors name `path`.
    pub fn read(path: &Path) -> Result<CountFile, TrainError> {
        let bytes = fs::read(path).map_err(CountFileError::Io);
        bytes
            .and_then(|b| CountFile::from_bytes(&b))
            .map_err(in_file(path))
    }

    /// Write atomically ([`picobpe_model::format::write_atomically`]), so a reader never sees
    /// a partial file.
    pub fn write(&self, path: &Path) -> Result<(), TrainError> {
        picobpe_model::format::write_atomically(path, &self.to_bytes())
            .map_err(TrainError::write(path))
    }

    /// Add `other` (read from `path`) into `self`, refusing other settings; `reference` names
    /// where `self`'s settings come from. The two tables are sorted, so the stable sort below
    /// only merges two runs (linear time). No piece's sum can overflow when the totals do not:
    /// each table's counts sum to its `n_pieces`.
    fn absorb(
        &mut self,
        mut other: CountFile,
        path: &Path,
        reference: &Path,
    ) -> Result<(), TrainError> {
        let reference = reference.display().to_string();
        check_settings(&other, path, self.pattern, &self.specials, &reference)?;
        let overflow = || CountFileError::Invalid {
            reason: "the summed counts overflow u64".to_owned(),
        };
        let n_pieces = self.n_pieces.checked_add(other.n_pieces);
        self.n_pieces = n_pieces.ok_or_else(overflow).map_err(in_file(path))?;
        self.n_bytes = self.n_bytes.saturating_add(other.n_bytes);
        self.pieces.append(&mut other.pieces);
        self.pieces.sort_by(|a, b| a.0.cmp(&b.0));
        self.pieces.dedup_by(|(bytes, n), (kept, sum)| {
            let same = bytes == kept;
            *sum += if same { *n } else { 0 };
            same
        });
        Ok(())
    }
}

/// The [`TrainError`] of `error` in the count file at `path`, for `map_err`.
fn in_file(path: &Path) -> impl Fn(CountFileError) -> TrainError + '_ {
    move |error| TrainError::CountFile {
        path: path.to_owned(),
        error,
    }
}

/// Refuse `file` (read from `path`) unless it was made with `pattern` and `specials`, which come
/// from `reference` (another count file, or the command line).
fn check_settings(
    file: &CountFile,
    path: &Path,
    pattern: PatternKind,
    specials: &[String],
    reference: &str,
) -> Result<(), TrainError> {
    let mismatch = |setting: &'static str, found: String, expected: String| {
        Err(TrainError::CountsDisagree {
            path: path.to_owned(),
            setting,
            found,
            expected,
            reference: reference.to_owned(),
        })
    };
    if file.pattern != pattern {
        return mismatch("--pattern", file.pattern.to_string(), pattern.to_string());
    }
    if file.specials != specials {
        return mismatch(
            "--special-token",
            format!("{:?}", file.specials),
            format!("{specials:?}"),
        );
    }
    Ok(())
}

/// Read and sum count files. `pattern` and `specials`, when the command line gives them, must
/// match the files' settings; every file must match the first. Only the running sum and one
/// file are in memory at a time.
pub fn read_all(
    paths: &[PathBuf],
    pattern: Option<PatternKind>,
    specials: Option<&[String]>,
) -> Result<CountFile, TrainError> {
    let (first, rest) = paths.split_first().ok_or(TrainError::EmptyCorpus)?;
    let mut total = CountFile::read(first)?;
    if pattern.is_some() || specials.is_some() {
        check_settings(
            &total,
            first,
            pattern.unwrap_or(total.pattern),
            specials.unwrap_or(&total.specials),
            "the command line",
        )?;
    }
    for path in rest {
        let file = CountFile::read(path)?;
        total.absorb(file, path, first)?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CountFile {
        CountFile {
            pattern: PatternKind::Cl100k,
            specials: vec!["<|endoftext|>".to_owned()],
            n_bytes: 12,
            n_pieces: 5,
            pieces: vec![(b" a".to_vec(), 2), (b"b".to_vec(), 3)],
        }
    }

    #[test]
    fn round_trip_and_every_damage_is_refused() {
        let file = sample();
        let bytes = file.to_bytes();
        assert_eq!(CountFile::from_bytes(&bytes).unwrap(), file);
        for len in 0..bytes.len() {
            let err = CountFile::from_bytes(&bytes[..len]).unwrap_err();
            assert!(
                matches!(err, CountFileError::Truncated { .. }),
                "{len}: {err}"
            );
        }
        for bit in HEADER_LEN * 8..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            let err = CountFile::from_bytes(&b).unwrap_err();
            assert!(
                matches!(err, CountFileError::ChecksumMismatch { .. }),
                "{bit}: {err}"
            );
        }
    }

    #[test]
    fn unsorted_or_miscounted_pieces_are_invalid() {
        let mut f = sample();
        f.pieces.swap(0, 1);
        let err = CountFile::from_bytes(&f.to_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid count file: pieces 0 and 1 are not in order"
        );
        let mut f = sample();
        f.n_pieces = 6;
        let err = CountFile::from_bytes(&f.to_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid count file: the counts sum to 5, but the file says 6 pieces"
        );
    }

    #[test]
    fn absorb_sums_sorted_tables() {
        let mut a = sample();
        let mut b = sample();
        b.pieces = vec![(b" a".to_vec(), 1), (b"a".to_vec(), 4), (b"c".to_vec(), 1)];
        b.n_pieces = 6;
        a.absorb(b, Path::new("b"), Path::new("a")).unwrap();
        assert_eq!(
            a.pieces,
            vec![
                (b" a".to_vec(), 3),
                (b"a".to_vec(), 4),
                (b"b".to_vec(), 3),
                (b"c".to_vec(), 1)
            ]
        );
        assert_eq!(a.n_pieces, 11);
        assert!(a.validate().is_ok());
    }
}
