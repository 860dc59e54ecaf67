//! [`TrainError`]: everything that stops a training run, each with the message the user sees.

use std::io;
use std::path::{Path, PathBuf};

/// Why `host-trainer train` failed. `Display` is the complete, user-facing message.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// An input could not be opened or read (missing, unreadable, I/O error mid-file).
    #[error("cannot read input {path}: {source}")]
    Read {
        /// The input path as given.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// An input path is a directory.
    #[error("input {path} is a directory, not a file")]
    IsDirectory {
        /// The input path as given.
        path: PathBuf,
    },
    /// An input is not valid UTF-8.
    #[error("input {path} is not valid UTF-8: invalid byte sequence at byte offset {offset}")]
    InvalidUtf8 {
        /// The input path as given.
        path: PathBuf,
        /// Byte offset of the first byte that is not part of a well-formed UTF-8 sequence.
        offset: u64,
    },
    /// An option of one model type was given for another.
    #[error("{option} does not apply to --model-type {model_type}")]
    OptionNotFor {
        /// The option, as spelled on the command line.
        option: &'static str,
        /// The model type it was given for.
        model_type: &'static str,
    },
    /// WordPiece: the unknown token is not among the special tokens.
    #[error("the unknown token {token:?} (--unk-token) must be one of the special tokens")]
    UnknownNotSpecial {
        /// The unknown token.
        token: String,
    },
    /// WordPiece: the vocabulary cannot even hold the special tokens.
    #[error("--vocab-size {vocab_size} is too small: the {n_specials} special tokens need as many entries")]
    WordPieceTooSmall {
        /// The requested size.
        vocab_size: u64,
        /// The number of special tokens.
        n_specials: usize,
    },
    /// A trained model could not be written in another library's format.
    /// An option or value the SentencePiece trainer does not implement.
    #[error("{0}")]
    Unsupported(String),
    /// The SentencePiece trainer refused the corpus or the options.
    #[error("{0}")]
    SentencePiece(String),
    #[error("cannot write the trained model: {0}")]
    Export(String),
    /// The inputs hold no ordinary text (empty files, or nothing but special tokens).
    #[error("the corpus is empty: the inputs contain no text besides special tokens")]
    EmptyCorpus,
    /// `--vocab-size` is below 256 byte tokens + the special tokens.
    #[error("--vocab-size {vocab_size} is too small: it must be at least {minimum} (256 byte tokens + {} special tokens)", .minimum - 256)]
    VocabTooSmall {
        /// The requested size.
        vocab_size: u64,
        /// 256 + number of special tokens.
        minimum: u64,
    },
    /// The same special token was given twice.
    #[error("special token {text:?} is given more than once")]
    DuplicateSpecial {
        /// The repeated text.
        text: String,
    },
    /// An empty special token was given.
    #[error("a special token must not be empty")]
    EmptySpecial,
    /// A one-byte special token would make that byte both a special and an ordinary token.
    #[error("special token {text:?} is a single byte, which is already an ordinary byte token")]
    SpecialIsByte {
        /// The special token text.
        text: String,
    },
    /// A special token's text is also the `vocab.json` key (GPT-2 text form) of another token.
    #[error("special token {text:?} is spelled like an ordinary token in vocab.json's GPT-2 byte-to-unicode form; the two could not be told apart")]
    SpecialKeyCollision {
        /// The special token text.
        text: String,
    },
    /// `--threads 0`.
    #[error("--threads must be at least 1")]
    ZeroThreads,
    /// The output directory exists and holds files other than a previous training's output.
    #[error("cannot write output directory {path}: {reason}")]
    OutputNotReplaceable {
        /// The `--out` path.
        path: PathBuf,
        /// Why it cannot be replaced.
        reason: String,
    },
    /// Creating, writing or renaming an output file or directory failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or directory being written.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// Two merges produced the same byte string, which the model format cannot represent.
    #[error("merge {merge} produced {token:?}, which an earlier merge already produced; the model format needs one merge per token")]
    DuplicateToken {
        /// Index of the later merge.
        merge: usize,
        /// The byte string (GPT-2 text form).
        token: String,
    },
    /// The distinct pieces hold more than 4 G bytes in total (the merge state indexes them with
    /// 32-bit offsets).
    #[error("the distinct pre-tokens hold more than 4 G bytes in total; the merge state supports at most 2^32 symbols")]
    TooManySymbols,
    /// The model file could not be built or written.
    #[error("cannot write the model: {0}")]
    Model(picobpe_model::ModelError),
    /// A counting thread panicked (a bug); the message is the panic payload if it was a string.
    #[error("internal error: a counting thread panicked: {0}")]
    WorkerPanicked(String),
    /// A count file could not be read, or is damaged.
    #[error("{path}: {error}")]
    CountFile {
        /// The count file's path as given.
        path: PathBuf,
        /// What is wrong with it.
        error: CountFileError,
    },
    /// A count file was made with other settings than the first count file (or the command
    /// line): its pieces were cut differently, so the counts cannot be summed.
    #[error("count file {path} was counted with {setting} {found}, but {reference} has {setting} {expected}; count files can only be summed when they agree")]
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

impl TrainError {
    /// The [`TrainError::Write`] of an I/O error on `path`, for `map_err`.
    pub fn write(path: &Path) -> impl Fn(io::Error) -> TrainError + '_ {
        move |source| TrainError::Write {
            path: path.to_owned(),
            source,
        }
    }
}

/// What is wrong with a count file (see `count_file`'s module docs for the format).
#[derive(Debug, thiserror::Error)]
pub enum CountFileError {
    /// The file could not be opened or read.
    #[error("cannot read count file: {0}")]
    Io(io::Error),
    /// The file does not start with `PICOCNT\0`.
    #[error("not a picobpe count file (bad magic bytes{})", if *is_model { "; it is a model file" } else { "" })]
    BadMagic {
        /// It starts with a model file's magic instead.
        is_model: bool,
    },
    /// The file ends before its header or payload does.
    #[error("count file is truncated: {have} bytes present, {needed} expected")]
    Truncated {
        /// Bytes the header promises.
        needed: u64,
        /// Bytes present.
        have: u64,
    },
    /// A format version this build does not read.
    #[error(
        "count file format version {found} is not supported (this build reads version {})",
        super::count_file::VERSION
    )]
    UnsupportedVersion {
        /// The version in the header.
        found: u16,
    },
    /// Bytes after the payload, or after the decoded counts.
    #[error("count file has {count} unexpected trailing bytes")]
    TrailingBytes {
        /// How many.
        count: u64,
    },
    /// The payload's CRC-32 differs from the header's.
    #[error(
        "count file is corrupt: payload CRC-32 is {found:#010x}, header says {expected:#010x}"
    )]
    ChecksumMismatch {
        /// The header's CRC-32.
        expected: u32,
        /// The payload's CRC-32.
        found: u32,
    },
    /// The payload (with a valid checksum) does not decode.
    #[error("count file payload does not decode: {0}")]
    Decode(postcard::Error),
    /// The decoded counts break a rule of the format.
    #[error("invalid count file: {reason}")]
    Invalid {
        /// Which rule, and where.
        reason: String,
    },
}
