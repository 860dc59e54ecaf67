//! `host-trainer decode`: whitespace-separated decimal ids in, raw bytes out.
//!
//! All ids are parsed and checked before the first byte is written, so a bad or unknown id
//! leaves stdout empty (the ids are held in memory: 4 bytes per id, less than their text).

use std::io::{self, Read, Write};
use std::path::PathBuf;

use clap::Args;
use picobpe::{DecodeError, Tokenizer};

use crate::input;

/// Bytes decoded per write.
const OUT: usize = 1 << 20;

/// Arguments of `decode`.
#[derive(Args)]
pub struct DecodeArgs {
    /// The model file.
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Input file of ids (default: stdin).
    file: Option<PathBuf>,
}

/// Run `decode`.
pub fn run(args: DecodeArgs) -> Result<(), String> {
    let (_, tables) = input::load(&args.model)?;
    let tokenizer = Tokenizer::new(tables);
    let in_name = input::name(args.file.as_ref());
    let mut text = Vec::new();
    input::open(args.file.as_deref())?
        .read_to_end(&mut text)
        .map_err(|e| format!("reading {in_name}: {e}"))?;
    let ids = parse_ids(&text).map_err(|e| format!("{in_name}: {e}"))?;
    tokenizer
        .decoded_len(&ids)
        .map_err(|e| format!("{in_name}: {e}"))?;

    let stdout = io::stdout();
    let mut sink = stdout.lock();
    let mut out = vec![0u8; OUT];
    let mut rest = &ids[..];
    while !rest.is_empty() {
        let (consumed, written) = match tokenizer.decode(rest, &mut out) {
            Ok(written) => (rest.len(), written),
            Err(DecodeError::OutputFull { consumed: 0, .. }) => {
                // One token longer than the buffer (a very long special): make room.
                let len = tokenizer.token_bytes(rest[0]).map_or(0, <[u8]>::len);
                out.resize(len.max(2 * out.len()), 0);
                continue;
            }
            Err(DecodeError::OutputFull { consumed, written }) => (consumed, written),
            Err(e @ DecodeError::UnknownId { .. }) => return Err(format!("{in_name}: {e}")),
        };
        sink.write_all(&out[..written])
            .map_err(|e| format!("writing stdout: {e}"))?;
        rest = &rest[consumed..];
    }
    sink.flush().map_err(|e| format!("writing stdout: {e}"))
}

/// Parse whitespace-separated decimal ids; the error names the position (0-based index).
fn parse_ids(text: &[u8]) -> Result<Vec<u32>, String> {
    text.split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .enumerate()
        .map(|(position, word)| {
            std::str::from_utf8(word)
                .ok()
                .filter(|w| w.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|w| w.parse::<u32>().ok())
                .ok_or_else(|| {
                    format!(
                        "invalid id {:?} at position {position} (expected a decimal integer below 2^32)",
                        String::from_utf8_lossy(word)
                    )
                })
        })
        .collect()
}
