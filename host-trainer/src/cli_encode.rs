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

use std::io::{self, Read, Write};
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
    /// How ids are written: decimal text, or little-endian binary of 2 or 4 bytes per id
    /// (`u16le` only for models whose ids all fit).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Piece cache size in MiB (0: no cache).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CACHE_MIB)]
    cache_mib: usize,
    /// Input file (default: stdin).
    file: Option<PathBuf>,
}

/// Arguments of `count`.
#[derive(Args)]
pub struct CountArgs {
    /// The model file.
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Treat special-token text as ordinary text (byte-level and WordPiece models).
    #[arg(long)]
    ordinary: bool,
    /// Count the special tokens the model adds around a text too (see `encode`).
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
    let (tokenizer, template) = input::load_with_template(&args.model)?;
    let n_ids = tokenizer.n_ids();
    if args.format == Format::U16le && n_ids > 1 << 16 {
        return Err(format!(
            "{}: ids go up to {}, which does not fit --format u16le; use u32le",
            args.model.display(),
            n_ids - 1
        ));
    }
    let stdout = io::stdout();
    let out = IdOutput::new(args.format, stdout.lock());
    let source = Source {
        file: args.file,
        ordinary: args.ordinary,
        template: Some(template).filter(|_| args.add_special_tokens),
        cache_mib: args.cache_mib,
    };
    source.encode(tokenizer, out)
}

/// Run `count`: encode, and print only the number of ids.
pub fn run_count(args: CountArgs) -> Result<(), String> {
    let (tokenizer, template) = input::load_with_template(&args.model)?;
    let stdout = io::stdout();
    let source = Source {
        file: args.file,
        ordinary: args.ordinary,
        template: Some(template).filter(|_| args.add_special_tokens),
        cache_mib: args.cache_mib,
    };
    source.encode(tokenizer, IdOutput::Count(0, stdout.lock()))
}

/// What to encode and how.
struct Source {
    file: Option<PathBuf>,
    ordinary: bool,
    /// The ids to add around the text's (`--add-special-tokens`).
    template: Option<&'static Template<'static>>,
    cache_mib: usize,
}

impl Source {
    fn encode<W: Write>(
        self,
        tokenizer: AnyTokenizer<'_>,
        mut out: IdOutput<W>,
    ) -> Result<(), String> {
        let specials = if !self.ordinary {
            Specials::All
        } else if let AnyTokenizer::SentencePiece(_) = tokenizer {
            return Err(
                "--ordinary applies to byte-level BPE and WordPiece models only".to_owned(),
            );
        } else {
            Specials::None
        };
        let mut reader = input::open(self.file.as_deref())?;
        let in_name = input::name(self.file.as_ref());
        let mut cache = CacheMemory::new(self.cache_mib * LINES_PER_MIB);
        let write_error = |e| format!("writing stdout: {e}");
        let template = self.template.unwrap_or(&Template::NONE);
        out.write(template.prefix).map_err(write_error)?;
        encode_stream(&tokenizer, specials, &mut reader, &mut out, &mut cache).map_err(
            |e| match e {
                StreamError::Read(e) => format!("reading {in_name}: {e}"),
                StreamError::Write(e) => write_error(e),
            },
        )?;
        out.write(template.suffix).map_err(write_error)?;
        out.finish().map_err(write_error)
    }
}

/// Which side of the stream failed.
enum StreamError {
    Read(io::Error),
    Write(io::Error),
}

/// Encode everything `reader` yields, writing ids to `out`: chunks through the core's
/// [`Tokenize::encode_part`], which stops before whatever more input could change (the
/// unfinished piece or word stays in the buffer for the next chunk).
fn encode_stream<W: Write>(
    tokenizer: &AnyTokenizer<'_>,
    specials: Specials,
    reader: &mut dyn Read,
    out: &mut IdOutput<W>,
    cache: &mut [picobpe::CacheEntry],
) -> Result<(), StreamError> {
    let mut buf: Vec<u8> = Vec::with_capacity(2 * CHUNK);
    let mut ids = vec![0u32; IDS];
    let mut eof = false;
    // No id written yet (a SentencePiece normalizer's start-of-text rules), and what a Unigram
    // model carries from one word to the next.
    let mut at_start = true;
    let mut cursor = Cursor::START;
    while !eof {
        // Invariant: `buf` holds input not yet encoded (an unfinished piece or word at most,
        // plus what was just read).
        let start = buf.len();
        buf.resize(start + CHUNK, 0);
        let n = loop {
            match reader.read(&mut buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(StreamError::Read(e)),
            }
        };
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
                Err(EncodeError::OutputFull { consumed, written }) => (consumed, written, false),
                Err(EncodeError::PieceTooLong { needed, .. }) => {
                    ids.resize(needed.max(2 * ids.len()), 0);
                    continue;
                }
            };
            out.write(&ids[..written]).map_err(StreamError::Write)?;
            at_start &= written == 0;
            pos += consumed;
            if done {
                break;
            }
        }
        buf.drain(..pos);
    }
    Ok(())
}

/// Where ids go: formatted into one reusable buffer that reaches the sink in large writes (no
/// per-id I/O or allocation), or only counted.
enum IdOutput<W: Write> {
    /// Decimal text; `first` is true until an id has been written.
    Text { sink: W, buf: Vec<u8>, first: bool },
    /// Little-endian binary, `width` (2 or 4) bytes per id.
    Binary { sink: W, buf: Vec<u8>, width: usize },
    /// The number of ids so far; printed at the end.
    Count(u64, W),
}

impl<W: Write> IdOutput<W> {
    fn new(format: Format, sink: W) -> Self {
        let buf = Vec::with_capacity(IDS * 8);
        match format {
            Format::Text => IdOutput::Text {
                sink,
                buf,
                first: true,
            },
            Format::U16le => IdOutput::Binary {
                sink,
                buf,
                width: 2,
            },
            Format::U32le => IdOutput::Binary {
                sink,
                buf,
                width: 4,
            },
        }
    }

    /// Append `ids`; writes through when the buffer is large.
    fn write(&mut self, ids: &[u32]) -> io::Result<()> {
        let (sink, buf) = match self {
            IdOutput::Text { sink, buf, first } => {
                let mut num = itoa::Buffer::new();
                for &id in ids {
                    if !*first {
                        buf.push(b' ');
                    }
                    *first = false;
                    buf.extend_from_slice(num.format(id).as_bytes());
                }
                (sink, buf)
            }
            IdOutput::Binary { sink, buf, width } => {
                // The caller checked that every id of the model fits `width` bytes.
                for &id in ids {
                    buf.extend_from_slice(&id.to_le_bytes()[..*width]);
                }
                (sink, buf)
            }
            IdOutput::Count(n, _) => {
                *n += ids.len() as u64;
                return Ok(());
            }
        };
        if buf.len() >= IDS * 4 {
            sink.write_all(buf)?;
            buf.clear();
        }
        Ok(())
    }

    /// Write the rest (text: and the final newline; count: the number and a newline).
    fn finish(self) -> io::Result<()> {
        let (mut sink, buf) = match self {
            IdOutput::Text { sink, mut buf, .. } => {
                buf.push(b'\n');
                (sink, buf)
            }
            IdOutput::Binary { sink, buf, .. } => (sink, buf),
            IdOutput::Count(n, sink) => (sink, format!("{n}\n").into_bytes()),
        };
        sink.write_all(&buf)?;
        sink.flush()
    }
}
