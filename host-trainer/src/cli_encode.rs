//! `host-trainer encode`: raw bytes in, ids out — decimal text (single spaces, final newline),
//! or binary `u16le`/`u32le` (what training pipelines read: no separators, no newline); and
//! `host-trainer count`: the number of ids alone.
//!
//! Streaming: the input is read in 1 MiB chunks and encoded with the core's resumable
//! `encode_part` (`is_final` only at end of input), so memory stays flat for inputs of any size
//! (it grows only with the longest single piece, which BPE must hold whole anyway: about 9 bytes
//! per byte of that piece, e.g. ~900 MB for a 100 MB run of letters with no space). Ids are
//! formatted with `itoa` into one reusable text buffer that goes to stdout in large writes —
//! no per-id I/O or allocation. The only error possible after output has started is an I/O
//! error (reading the input or writing stdout); encode itself cannot fail once the model has
//! loaded, because a piece too long for the id buffer grows the buffer. Pieces go through a
//! piece cache kept for the whole input, [`DEFAULT_CACHE_MIB`] MiB on huge pages unless
//! `--cache-mib` says otherwise: on text seen once it was the fastest size measured (1, 4, 16
//! and 64 MiB, whole process on the 30 MB English corpus and the multilingual files).
//!
//! With `--add-special-tokens` the ids are those of `tokenizers`' `encode(text,
//! add_special_tokens=True)`: the model's template (BOS, `[CLS]` ... `[SEP]`, stored at import)
//! goes around the text's ids.
//!
//! Every family takes this path (`picobpe::Tokenize::encode_part` over the model's
//! `AnyTokenizer`): a SentencePiece word or a WordPiece word is encoded once the next has
//! started. Only a SentencePiece model imported from a `tokenizer.json` with added tokens, or
//! one whose pieces cross word starts, is held whole until the end of the input (its text is
//! cut at added tokens first, and a cut may come at any byte).

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use picobpe::{AnyTokenizer, Cursor, EncodeError, Specials, Template, Tokenize};
use picobpe_model::CacheMemory;

use crate::input;

/// The piece cache's default size in MiB (16,384 lines of 64 bytes per MiB).
pub const DEFAULT_CACHE_MIB: usize = 16;

/// Cache lines per MiB.
const LINES_PER_MIB: usize = (1 << 20) / 64;

/// Input bytes read per chunk.
const CHUNK: usize = 1 << 20;
/// Initial id buffer length.
const IDS: usize = 1 << 18;

/// Arguments of `encode`.
#[derive(Args)]
pub struct EncodeArgs {
    #[command(flatten)]
    input: Input,
    /// How ids are written: decimal text, or little-endian binary of 2 or 4 bytes per id
    /// (`u16le` only for models whose ids all fit).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// What `encode` and `count` encode, and how.
#[derive(Args)]
pub struct Input {
    /// The model file.
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Treat special-token text as ordinary text (default: recognize the model's specials).
    /// Byte-level and WordPiece models: SentencePiece models have no special-token text (their
    /// user-defined symbols are always matched, as in `sentencepiece`).
    #[arg(long)]
    ordinary: bool,
    /// Encode as the model expects: add the special tokens its file says go around a text (BOS,
    /// `[CLS]` ... `[SEP]`; `tokenizers`' `add_special_tokens=True`). Default: the text's ids only.
    #[arg(long)]
    add_special_tokens: bool,
    /// Piece cache size in MiB (0: no cache).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CACHE_MIB)]
    cache_mib: usize,
    /// Input file (default: stdin).
    file: Option<PathBuf>,
}

/// Output formats of `encode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Decimal ids separated by single spaces, then a newline.
    Text,
    /// Each id as 2 little-endian bytes.
    U16le,
    /// Each id as 4 little-endian bytes.
    U32le,
}

/// Run `encode`.
pub fn run(args: EncodeArgs) -> Result<(), String> {
    args.input.encode(Some(args.format))
}

/// Run `count`: encode, and print only the number of ids.
pub fn run_count(args: Input) -> Result<(), String> {
    args.encode(None)
}

impl Input {
    /// Encode everything the input yields and write the ids in `format` to stdout (`None`:
    /// their number): chunks through the core's [`Tokenize::encode_part`], which stops before
    /// whatever more input could change (the unfinished piece or word stays in the buffer for
    /// the next chunk).
    fn encode(self, format: Option<Format>) -> Result<(), String> {
        let (tokenizer, template) = input::load(&self.model)?;
        let n_ids = tokenizer.n_ids();
        if format == Some(Format::U16le) && n_ids > 1 << 16 {
            return Err(format!(
                "{}: ids go up to {}, which does not fit --format u16le; use u32le",
                self.model.display(),
                n_ids - 1
            ));
        }
        let specials = if !self.ordinary {
            Specials::All
        } else if let AnyTokenizer::SentencePiece(_) = tokenizer {
            return Err(
                "--ordinary applies to byte-level BPE and WordPiece models only".to_owned(),
            );
        } else {
            Specials::None
        };
        let (mut reader, in_name) = input::open(self.file.as_deref())?;
        let cache = &mut CacheMemory::new(self.cache_mib * LINES_PER_MIB);
        let template = if self.add_special_tokens {
            template
        } else {
            &Template::NONE
        };
        let mut out = IdOutput {
            sink: BufWriter::with_capacity(IDS * 4, io::stdout().lock()),
            format,
            n: 0,
        };
        let write_error = |e| format!("writing stdout: {e}");
        out.write(template.prefix).map_err(write_error)?;
        let mut buf: Vec<u8> = Vec::with_capacity(2 * CHUNK);
        let mut ids = vec![0u32; IDS];
        let mut eof = false;
        // No id written yet (a SentencePiece normalizer's start-of-text rules), and what a
        // Unigram model carries from one word to the next.
        let mut at_start = true;
        let mut cursor = Cursor::START;
        while !eof {
            // Invariant: `buf` holds input not yet encoded (an unfinished piece or word at
            // most, plus what was just read).
            let start = buf.len();
            buf.resize(start + CHUNK, 0);
            let n = input::read(&mut reader, &mut buf[start..], &in_name)?;
            buf.truncate(start + n);
            eof = n == 0;
            let mut pos = 0;
            loop {
                let r = tokenizer.encode_part(
                    &buf[pos..],
                    at_start,
                    eof,
                    &mut cursor,
                    &mut ids,
                    specials,
                    cache,
                );
                let (consumed, written, done) = match r {
                    Ok(p) => (p.consumed, p.written, true),
                    Err(EncodeError::OutputFull { consumed, written }) => {
                        (consumed, written, false)
                    }
                    Err(EncodeError::PieceTooLong { needed, .. }) => {
                        ids.resize(needed.max(2 * ids.len()), 0);
                        continue;
                    }
                };
                out.write(&ids[..written]).map_err(write_error)?;
                at_start &= written == 0;
                pos += consumed;
                if done {
                    break;
                }
            }
            buf.drain(..pos);
        }
        out.write(template.suffix).map_err(write_error)?;
        out.finish().map_err(write_error)
    }
}

/// Where ids go: formatted into a buffer that reaches stdout in large writes (no per-id I/O or
/// allocation), or, without a format, only counted and the number printed at the end.
struct IdOutput {
    sink: BufWriter<io::StdoutLock<'static>>,
    format: Option<Format>,
    /// The number of ids so far.
    n: u64,
}

impl IdOutput {
    /// Append `ids`.
    fn write(&mut self, ids: &[u32]) -> io::Result<()> {
        let mut num = itoa::Buffer::new();
        match self.format {
            Some(Format::Text) => {
                for &id in ids {
                    if self.n > 0 {
                        self.sink.write_all(b" ")?;
                    }
                    self.n += 1;
                    self.sink.write_all(num.format(id).as_bytes())?;
                }
            }
            Some(binary) => {
                // `encode` checked that every id of the model fits 2 bytes for `u16le`.
                let width = if binary == Format::U16le { 2 } else { 4 };
                for id in ids {
                    self.sink.write_all(&id.to_le_bytes()[..width])?;
                }
            }
            None => self.n += ids.len() as u64,
        }
        Ok(())
    }

    /// Write the rest (text: and the final newline; count: the number and a newline).
    fn finish(mut self) -> io::Result<()> {
        match self.format {
            Some(Format::Text) => self.sink.write_all(b"\n")?,
            None => writeln!(self.sink, "{}", self.n)?,
            _ => {}
        }
        self.sink.flush()
    }
}
