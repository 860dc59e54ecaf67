//! [`TrainError`]: everything that stops a training run, each with the message the user sees.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why `host-trainer train` failed. `Display` is the complete, user-facing message.
#[derive(Debug)]
pub enum TrainError {
    /// An input could not be opened or read (missing, unreadable, I/O error mid-file).
    Read {
        /// The input path as given.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// An input path is a directory.
    IsDirectory {
        /// The input path as given.
        path: PathBuf,
    },
    /// An input is not valid UTF-8.
    InvalidUtf8 {
        /// The input path as given.
        path: PathBuf,
        /// Byte offset of the first byte that is not part of a well-formed UTF-8 sequence.
        offset: u64,
    },
    /// The inputs hold no ordinary text (empty files, or nothing but special tokens).
    EmptyCorpus,
    /// `--vocab-size` is below 256 byte tokens + the special tokens.
    VocabTooSmall {
        /// The requested size.
        vocab_size: u64,
        /// 256 + number of special tokens.
        minimum: u64,
    },
    /// The same special token was given twice.
    DuplicateSpecial {
        /// The repeated text.
        text: String,
    },
    /// An empty special token was given.
    EmptySpecial,
    /// A one-byte special token would make that byte both a special and an ordinary token.
    SpecialIsByte {
        /// The special token text.
        text: String,
    },
    /// A special token's text is also the `vocab.json` key (GPT-2 text form) of another token.
    SpecialKeyCollision {
        /// The special token text.
        text: String,
    },
    /// `--threads 0`.
    ZeroThreads,
    /// The output directory exists and holds files other than a previous training's output.
    OutputNotReplaceable {
        /// The `--out` path.
        path: PathBuf,
        /// Why it cannot be replaced.
        reason: String,
    },
    /// Creating, writing or renaming an output file or directory failed.
    Write {
        /// The file or directory being written.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// Two merges produced the same byte string, which the model format cannot represent.
    DuplicateToken {
        /// Index of the later merge.
        merge: usize,
        /// The byte string (GPT-2 text form).
        token: String,
    },
    /// The distinct pieces hold more than 4 G bytes in total (the merge state indexes them with
    /// 32-bit offsets).
    TooManySymbols,
    /// The model file could not be built or written.
    Model(picobpe_model::ModelError),
    /// A counting thread panicked (a bug); the message is the panic payload if it was a string.
    WorkerPanicked(String),
    /// A count file could not be read, or is damaged.
    CountFile {
        /// The count file's path as given.
        path: PathBuf,
        /// What is wrong with it.
        error: CountFileError,
    },
    /// A count file was made with other settings than the first count file (or the command
    /// line): its pieces were cut differently, so the counts cannot be summed.
    CountsDisagree {
        /// The disagreeing count file.
        path: PathBuf,
        /// The setting, as its command-line flag (`--pattern`, `--special-token`).
        setting: &'static str,
        /// The file's value.
        found: String,
        /// The value of the reference.
        expected: String,
        /// Where the expected value comes from: the first count file, or the command line.
        reference: String,
    },
}

/// What is wrong with a count file (see `count_file`'s module docs for the format).
#[derive(Debug)]
pub enum CountFileError {
    /// The file could not be opened or read.
    Io(io::Error),
    /// The file does not start with `PICOCNT\0`.
    BadMagic {
        /// It starts with a model file's magic instead.
        is_model: bool,
    },
    /// The file ends before its header or payload does.
    Truncated {
        /// Bytes the header promises.
        needed: u64,
        /// Bytes present.
        have: u64,
    },
    /// A format version this build does not read.
    UnsupportedVersion {
        /// The version in the header.
        found: u16,
    },
    /// Bytes after the payload, or after the decoded counts.
    TrailingBytes {
        /// How many.
        count: u64,
    },
    /// The payload's CRC-32 differs from the header's.
    ChecksumMismatch {
        /// The header's CRC-32.
        expected: u32,
        /// The payload's CRC-32.
        found: u32,
    },
    /// The payload (with a valid checksum) does not decode.
    Decode(postcard::Error),
    /// The decoded counts break a rule of the format.
    Invalid {
        /// Which rule, and where.
        reason: String,
    },
}

impl fmt::Display for CountFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CountFileError::Io(e) => write!(f, "cannot read count file: {e}"),
            CountFileError::BadMagic { is_model } => write!(
                f,
                "not a picobpe count file (bad magic bytes{})",
                if *is_model { "; it is a model file" } else { "" }
            ),
            CountFileError::Truncated { needed, have } => write!(
                f,
                "count file is truncated: {have} bytes present, {needed} expected"
            ),
            CountFileError::UnsupportedVersion { found } => write!(
                f,
                "count file format version {found} is not supported (this build reads version {})",
                super::count_file::VERSION
            ),
            CountFileError::TrailingBytes { count } => {
                write!(f, "count file has {count} unexpected trailing bytes")
            }
            CountFileError::ChecksumMismatch { expected, found } => write!(
                f,
                "count file is corrupt: payload CRC-32 is {found:#010x}, header says {expected:#010x}"
            ),
            CountFileError::Decode(e) => write!(f, "count file payload does not decode: {e}"),
            CountFileError::Invalid { reason } => write!(f, "invalid count file: {reason}"),
        }
    }
}

impl fmt::Display for TrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrainError::Read { path, source } => {
                write!(f, "cannot read input {}: {source}", path.display())
            }
            TrainError::IsDirectory { path } => {
                write!(f, "input {} is a directory, not a file", path.display())
            }
            TrainError::InvalidUtf8 { path, offset } => write!(
                f,
                "input {} is not valid UTF-8: invalid byte sequence at byte offset {offset}",
                path.display()
            ),
            TrainError::EmptyCorpus => f.write_str(
                "the corpus is empty: the inputs contain no text besides special tokens",
            ),
            TrainError::VocabTooSmall {
                vocab_size,
                minimum,
            } => write!(
                f,
                "--vocab-size {vocab_size} is too small: it must be at least {minimum} \
                 (256 byte tokens + {} special tokens)",
                minimum - 256
            ),
            TrainError::DuplicateSpecial { text } => {
                write!(f, "special token {text:?} is given more than once")
            }
            TrainError::EmptySpecial => f.write_str("a special token must not be empty"),
            TrainError::SpecialIsByte { text } => write!(
                f,
                "special token {text:?} is a single byte, which is already an ordinary byte token"
            ),
            TrainError::SpecialKeyCollision { text } => write!(
                f,
                "special token {text:?} is spelled like an ordinary token in vocab.json's \
                 GPT-2 byte-to-unicode form; the two could not be told apart"
            ),
            TrainError::ZeroThreads => f.write_str("--threads must be at least 1"),
            TrainError::OutputNotReplaceable { path, reason } => {
                write!(
                    f,
                    "cannot write output directory {}: {reason}",
                    path.display()
                )
            }
            TrainError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
            TrainError::DuplicateToken { merge, token } => write!(
                f,
                "merge {merge} produced {token:?}, which an earlier merge already produced; \
                 the model format needs one merge per token"
            ),
            TrainError::TooManySymbols => f.write_str(
                "the distinct pre-tokens hold more than 4 G bytes in total; \
                 the merge state supports at most 2^32 symbols",
            ),
            TrainError::Model(e) => write!(f, "cannot write the model: {e}"),
            TrainError::WorkerPanicked(msg) => {
                write!(f, "internal error: a counting thread panicked: {msg}")
            }
            TrainError::CountFile { path, error } => write!(f, "{}: {error}", path.display()),
            TrainError::CountsDisagree {
                path,
                setting,
                found,
                expected,
                reference,
            } => write!(
                f,
                "count file {} was counted with {setting} {found}, but {reference} has \
                 {setting} {expected}; count files can only be summed when they agree",
                path.display()
            ),
        }
    }
}

impl std::error::Error for TrainError {}
