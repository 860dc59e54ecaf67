//! What the three families share: the embedded vectors and the loop over their records, encode
//! and decode through a buffer with resume (comparing with the reference as the output comes),
//! and the footprint figures.

use picobpe::{DecodeError, EncodeError};
use semihosting::println;

use crate::vectors::{self, Ids, Record};

/// The embedded reference vectors.
static VECTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vectors.bin"));

/// The smallest encode buffer the resume checks start from (ids).
pub const SMALL: usize = 7;

/// Failures are printed up to this many; all are counted.
const PRINTED_FAILURES: usize = 20;

/// Counts checks and failures, printing the first failures.
#[derive(Default)]
pub struct Checks {
    checks: usize,
    failures: usize,
}

impl Checks {
    /// Records a check of `what` on record `name`; `ok` is its outcome.
    pub fn check(&mut self, name: &str, what: &str, ok: bool) {
        self.checks += 1;
        if !ok {
            self.fail(name, what);
        }
    }

    fn fail(&mut self, name: &str, what: &str) {
        if self.failures < PRINTED_FAILURES {
            println!("FAIL {name}: {what}");
        }
        self.failures += 1;
    }
}

/// Runs `check_record` on every embedded record and prints the summary line
/// (`<n> records, <c> checks, <f> failures`). With `limits` (`PBVEC2`: the encode buffer, in
/// `u32`, and the decode buffer, in bytes, that the records were selected for), the vector file
/// must name this build's buffers. True when every check passed.
pub fn conformance(
    limits: Option<(usize, usize)>,
    mut check_record: impl FnMut(&Record<'_>, &mut Checks),
) -> bool {
    let Some(mut records) = vectors::records(VECTORS) else {
        println!("the embedded vectors are not a PBVEC file");
        return false;
    };
    if let Some((ids, bytes)) = limits {
        if records.limits() != Some((ids as u32, bytes as u32)) {
            println!(
                "the vectors were selected for buffers {:?}, this build has ({ids}, {bytes})",
                records.limits()
            );
            return false;
        }
    }
    let mut c = Checks::default();
    let mut n = 0usize;
    for r in records.by_ref() {
        n += 1;
        check_record(&r, &mut c);
    }
    if records.malformed {
        c.fail("(vector file)", "truncated or corrupt");
    }
    println!("{n} records, {} checks, {} failures", c.checks, c.failures);
    c.failures == 0 && n > 0
}

/// True when `got` are the next ids of `want`.
pub fn next_ids_are(got: &[u32], want: &mut impl Iterator<Item = u32>) -> bool {
    got.iter().all(|&id| want.next() == Some(id))
}

/// Encodes a text through `buf[..cap]` and compares the ids, as they come, with `expected`.
/// `step(from, out)` encodes the text from byte `from` (0, or a `consumed` it returned) into
/// `out`, offsets in its errors being offsets in the whole text. After `OutputFull` the ids are
/// drained and the encode resumes at `consumed` with `cap` ids again; on `PieceTooLong
/// { needed }` the step is retried with `needed` ids (at most all of `buf`), as documented.
pub fn encode_resumed(
    buf: &mut [u32],
    cap: usize,
    expected: Ids<'_>,
    mut step: impl FnMut(usize, &mut [u32]) -> Result<usize, EncodeError>,
) -> bool {
    let mut want = expected.iter();
    let cap = cap.min(buf.len());
    let (mut from, mut room) = (0usize, cap);
    loop {
        let Some(out) = buf.get_mut(..room) else {
            return false;
        };
        match step(from, out) {
            Ok(n) => return next_ids_are(&out[..n], &mut want) && want.next().is_none(),
            Err(EncodeError::OutputFull { consumed, written }) => {
                if (consumed <= from && written == 0) || !next_ids_are(&out[..written], &mut want) {
                    return false;
                }
                from = consumed;
                room = cap;
            }
            Err(EncodeError::PieceTooLong { needed, .. }) => {
                if needed <= room || room == buf.len() {
                    return false;
                }
                room = needed.min(buf.len());
            }
        }
    }
}

/// Decodes `ids` (in flash) through `bytes`, copying them into `scratch` a buffer at a time,
/// and compares the bytes, as they come, with `expected` (when given; else the decode only has
/// to succeed). `step(continues, ids, out)` decodes `ids` into `out`; `continues` is true once
/// something was written (WordPiece's `decode_after`: no space before the first word). After
/// `OutputFull` it resumes with the ids from `consumed` on. (SentencePiece decodes from RAM
/// with `decode_from` instead: its state at a chunk's start depends on the ids before it.)
#[cfg(not(picobpe_sp))]
pub fn decode_chunked(
    ids: Ids<'_>,
    scratch: &mut [u32],
    bytes: &mut [u8],
    expected: Option<&[u8]>,
    step: impl Fn(bool, &[u32], &mut [u8]) -> Result<usize, DecodeError>,
) -> bool {
    let mut at = 0usize;
    let mut source = ids.iter();
    loop {
        let mut n = 0;
        for (slot, id) in scratch.iter_mut().zip(source.by_ref()) {
            *slot = id;
            n += 1;
        }
        if n == 0 {
            return expected.is_none_or(|e| e.len() == at);
        }
        let mut chunk = &scratch[..n];
        while !chunk.is_empty() {
            let (written, consumed) = match step(at > 0, chunk, bytes) {
                Ok(w) => (w, chunk.len()),
                Err(DecodeError::OutputFull { consumed, written }) if consumed > 0 => {
                    (written, consumed)
                }
                Err(_) => return false,
            };
            let got = &bytes[..written];
            if expected.is_some_and(|e| e.get(at..at + written) != Some(got)) {
                return false;
            }
            at += written;
            chunk = &chunk[consumed..];
        }
    }
}

/// Prints the `FIG` lines of `cargo xtask footprint` for the 8 KB bench text: its ids (encoded
/// through `ids` with `encode_from`, resuming after `OutputFull`), the peak stack of that
/// encode and of decoding the first buffer of its ids into `bytes`, and the guest instructions
/// of the encode. When the model `round_trips`, the decoded bytes must start the bench text
/// (Unigram collapses whitespace and WordPiece spaces out punctuation: theirs are only decoded).
pub fn figures(
    n_ids: usize,
    ids: &mut [u32],
    bytes: &mut [u8],
    round_trips: bool,
    encode_from: impl Fn(&[u8], usize, &mut [u32]) -> Result<usize, EncodeError>,
    decode: impl Fn(&[u32], &mut [u8]) -> Result<usize, DecodeError>,
) -> bool {
    println!("FIG machine {}", crate::MACHINE);
    println!("FIG target {}", crate::target());
    println!("FIG model {}", crate::MODEL_FILE);
    println!("FIG n_ids {n_ids}");
    let text = crate::texts::BENCH;
    println!("FIG bench_bytes {}", text.len());
    let encode = |ids: &mut [u32]| {
        let (mut total, mut at) = (0usize, 0usize);
        loop {
            match encode_from(text, at, ids) {
                Ok(n) => return Some(total + n),
                Err(EncodeError::OutputFull { consumed, written }) if consumed > at => {
                    total += written;
                    at = consumed;
                }
                Err(_) => return None,
            }
        }
    };
    let (r, enc_stack) = crate::stack::measure(|| encode(ids));
    let Some(n) = r else {
        println!("encode of the bench text failed");
        return false;
    };
    println!("FIG bench_tokens {n}");
    println!("FIG stack_encode {enc_stack}");
    let head = match encode_from(text, 0, ids) {
        Ok(n) => n,
        Err(EncodeError::OutputFull { written, .. }) => written,
        Err(_) => return false,
    };
    let (r, dec_stack) = crate::stack::measure(|| decode(&ids[..head], bytes));
    let written = match r {
        Ok(w) | Err(DecodeError::OutputFull { written: w, .. }) => w,
        Err(_) => {
            println!("decode of the bench ids failed");
            return false;
        }
    };
    if round_trips && !text.starts_with(&bytes[..written]) {
        println!("the bench ids do not decode to the bench text");
        return false;
    }
    println!("FIG stack_decode {dec_stack}");
    match crate::instret::count(|| encode(ids)) {
        Some((Some(_), i)) => println!("FIG instr_encode {i}"),
        Some((None, _)) => return false,
        None => println!("FIG instr_encode unavailable"),
    }
    true
}
