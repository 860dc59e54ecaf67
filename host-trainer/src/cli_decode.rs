//! `host-trainer decode`: whitespace-separated decimal ids in, raw bytes out.
//!
//! The input is parsed as it is read and every id is checked against the model, then the
//! bytes are written: a malformed or unknown id leaves stdout empty. Memory: 4 bytes per id
//! (the parsed ids are held until the whole input has been checked), not the input text.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use clap::Args;
use picobpe::{DecodeError, Tokenize};

use crate::input;

/// Bytes decoded per write.
const OUT: usize = 1 << 20;
/// Input bytes read per call.
const CHUNK: usize = 1 << 16;
/// Longest word kept for an error message.
const SHOWN: usize = 32;

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
    let (tokenizer, _) = input::load(&args.model)?;
    let (mut reader, in_name) = input::open(args.file.as_deref())?;
    let valid = |id: u32| tokenizer.decode_room(id).is_some();
    let ids = read_ids(&mut reader, &in_name, &valid)?;
    let mut sink = io::stdout().lock();
    let mut out = vec![0u8; OUT];
    let mut from = 0;
    while from < ids.len() {
        let (consumed, written) = match tokenizer.decode_at(&ids, from, &mut out) {
            Ok(written) => (ids.len(), written),
            Err(DecodeError::OutputFull { consumed, written })
                if consumed == from && written == 0 =>
            {
                // One token's text is longer than the buffer (a very long special, a hostile
                // unknown surface): make room.
                let room = tokenizer.decode_room(ids[from]).unwrap_or(0);
                out.resize(room.max(2 * out.len()), 0);
                continue;
            }
            Err(DecodeError::OutputFull { consumed, written }) => (consumed, written),
            // Every id was checked while reading.
            Err(e @ DecodeError::UnknownId { .. }) => return Err(format!("{in_name}: {e}")),
        };
        sink.write_all(&out[..written])
            .map_err(|e| format!("writing stdout: {e}"))?;
        from = consumed;
    }
    sink.flush().map_err(|e| format!("writing stdout: {e}"))
}

/// Parse whitespace-separated decimal ids and check each is a token of the model; errors name
/// the input (`name`) and the id's position (0-based index among the ids).
fn read_ids(
    reader: &mut dyn Read,
    name: &str,
    valid: &dyn Fn(u32) -> bool,
) -> Result<Vec<u32>, String> {
    let mut ids = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    let mut word = Word::default();
    loop {
        let n = input::read(reader, &mut buf, name)?;
        // The end of the input ends the last word as whitespace does.
        let bytes = if n == 0 { b" " } else { &buf[..n] };
        for &b in bytes {
            if !b.is_ascii_whitespace() {
                word.push(b);
            } else if let Err(message) = word.finish(&mut ids, valid) {
                return Err(format!("{name}: {message}"));
            }
        }
        if n == 0 {
            return Ok(ids);
        }
    }
}

/// The id being parsed: its value while it is all digits and below 2^32.
#[derive(Default)]
struct Word {
    value: Option<u32>,
    len: usize,
    shown: Vec<u8>,
}

impl Word {
    fn push(&mut self, b: u8) {
        self.value = match (self.len, self.value) {
            (0, _) => b.is_ascii_digit().then(|| u32::from(b - b'0')),
            (_, Some(v)) if b.is_ascii_digit() => v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u32::from(b - b'0'))),
            _ => None,
        };
        self.len += 1;
        if self.shown.len() < SHOWN {
            self.shown.push(b);
        }
    }

    fn finish(&mut self, ids: &mut Vec<u32>, valid: &dyn Fn(u32) -> bool) -> Result<(), String> {
        if self.len == 0 {
            return Ok(());
        }
        let position = ids.len();
        match self.value {
            Some(id) if valid(id) => ids.push(id),
            Some(id) => return Err(format!("unknown token id {id} at position {position}")),
            None => {
                let more = if self.len > self.shown.len() {
                    "…"
                } else {
                    ""
                };
                return Err(format!(
                    "invalid id {:?}{more} at position {position} (expected a decimal integer below 2^32)",
                    String::from_utf8_lossy(&self.shown)
                ));
            }
        }
        // Reset without dropping `shown`'s allocation.
        self.value = None;
        self.len = 0;
        self.shown.clear();
        Ok(())
    }
}
