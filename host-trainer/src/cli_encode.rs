//! `host-trainer encode`: raw bytes in, decimal ids out (single spaces, final newline).
//!
//! Streaming: the input is read in 1 MiB chunks and encoded with the core's resumable
//! `encode_part` (`is_final` only at end of input), so memory stays flat for inputs of any size
//! (it grows only with the longest single piece, which BPE must hold whole anyway: about 9 bytes
//! per byte of that piece, e.g. ~900 MB for a 100 MB run of letters with no space). Ids are
//! formatted with `itoa` into one reusable text buffer that goes to stdout in large writes —
//! no per-id I/O or allocation. The only error possible after output has started is an I/O
//! error (reading the input or writing stdout); encode itself cannot fail once the model has
//! loaded, because a piece too long for the id buffer grows the buffer. Pieces go through a
//! 1 MiB piece cache ([`CACHE_SLOTS`] lines) kept for the whole input.
//!
//! A SentencePiece model's input is read whole (its normalizer looks at the text's start and
//! end) and encoded with `SpTokenizer::encode_from` into the same id writer.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use clap::Args;
use picobpe::{EncodeError, SpTokenizer, Specials, Tokenizer};

use crate::input;

/// Lines of the piece cache (64 bytes each).
const CACHE_SLOTS: usize = 16_384;

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
    /// Byte-level models only: SentencePiece models have no special-token text (their
    /// user-defined symbols are always matched, as in `sentencepiece`).
    #[arg(long)]
    ordinary: bool,
    /// Input file (default: stdin).
    file: Option<PathBuf>,
}

/// Run `encode`.
pub fn run(args: EncodeArgs) -> Result<(), String> {
    let tables = match input::load_any(&args.model)? {
        input::Loaded::BytePair(tables) => tables,
        input::Loaded::SentencePiece(tables) => return run_sentencepiece(&args, tables),
    };
    let tokenizer = Tokenizer::new(tables);
    let specials = if args.ordinary {
        Specials::None
    } else {
        Specials::All
    };
    let mut reader = input::open(args.file.as_deref())?;
    let in_name = input::name(args.file.as_ref());
    let stdout = io::stdout();
    let mut out = IdWriter::new(stdout.lock());
    encode_stream(&tokenizer, specials, &mut reader, &mut out).map_err(|e| match e {
        StreamError::Read(e) => format!("reading {in_name}: {e}"),
        StreamError::Write(e) => format!("writing stdout: {e}"),
    })?;
    out.finish().map_err(|e| format!("writing stdout: {e}"))
}

/// `encode` with a SentencePiece model: the whole input, then its ids.
fn run_sentencepiece(args: &EncodeArgs, tables: &picobpe::SpTables<'_>) -> Result<(), String> {
    if args.ordinary {
        return Err("--ordinary applies to byte-level BPE models only".to_owned());
    }
    let in_name = input::name(args.file.as_ref());
    let mut text = Vec::new();
    input::open(args.file.as_deref())?
        .read_to_end(&mut text)
        .map_err(|e| format!("reading {in_name}: {e}"))?;
    let tokenizer = SpTokenizer::new(tables);
    let stdout = io::stdout();
    let mut out = IdWriter::new(stdout.lock());
    let mut ids = vec![0u32; IDS];
    let mut from = 0;
    loop {
        match tokenizer.encode_from(&text, from, &mut ids) {
            Ok(n) => {
                out.write(&ids[..n])
                    .map_err(|e| format!("writing stdout: {e}"))?;
                break;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                out.write(&ids[..written])
                    .map_err(|e| format!("writing stdout: {e}"))?;
                from = consumed;
            }
            Err(EncodeError::PieceTooLong { needed, .. }) => {
                ids.resize(needed.max(2 * ids.len()), 0);
            }
        }
    }
    out.finish().map_err(|e| format!("writing stdout: {e}"))
}

/// Which side of the stream failed.
enum StreamError {
    Read(io::Error),
    Write(io::Error),
}

/// Encode everything `reader` yields, writing ids to `out`.
fn encode_stream<W: Write>(
    tokenizer: &Tokenizer<'_>,
    specials: Specials,
    reader: &mut dyn Read,
    out: &mut IdWriter<W>,
) -> Result<(), StreamError> {
    let mut buf: Vec<u8> = Vec::with_capacity(2 * CHUNK);
    let mut ids = vec![0u32; IDS];
    let mut cache = vec![picobpe::CacheEntry::EMPTY; CACHE_SLOTS];
    let mut eof = false;
    while !eof {
        // Invariant: `buf` holds input not yet encoded (a partial piece or special at most,
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
            match tokenizer.encode_part_cached(&buf[pos..], &mut ids, specials, eof, &mut cache) {
                Ok(p) => {
                    out.write(&ids[..p.written]).map_err(StreamError::Write)?;
                    pos += p.consumed;
                    break;
                }
                Err(EncodeError::OutputFull { consumed, written }) => {
                    out.write(&ids[..written]).map_err(StreamError::Write)?;
                    pos += consumed;
                }
                Err(EncodeError::PieceTooLong { needed, .. }) => {
                    ids.resize(needed.max(2 * ids.len()), 0);
                }
            }
        }
        buf.drain(..pos);
    }
    Ok(())
}

/// Formats ids as decimal text separated by single spaces, flushing in large writes.
struct IdWriter<W: Write> {
    sink: W,
    text: Vec<u8>,
    first: bool,
}

impl<W: Write> IdWriter<W> {
    fn new(sink: W) -> Self {
        IdWriter {
            sink,
            text: Vec::with_capacity(IDS * 7),
            first: true,
        }
    }

    /// Append `ids`; writes through when the text buffer is large.
    fn write(&mut self, ids: &[u32]) -> io::Result<()> {
        let mut num = itoa::Buffer::new();
        for &id in ids {
            if !self.first {
                self.text.push(b' ');
            }
            self.first = false;
            self.text.extend_from_slice(num.format(id).as_bytes());
        }
        if self.text.len() >= IDS * 4 {
            self.sink.write_all(&self.text)?;
            self.text.clear();
        }
        Ok(())
    }

    /// Write the rest and the final newline.
    fn finish(mut self) -> io::Result<()> {
        self.text.push(b'\n');
        self.sink.write_all(&self.text)?;
        self.sink.flush()
    }
}
