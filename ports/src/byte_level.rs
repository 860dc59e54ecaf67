//! Byte-level BPE (`picobpe::Tokenizer`: the small trained model, gpt2, cl100k_base,
//! llama3-8k). Per record:
//! 1. encode with special tokens recognized, and as text, through the largest buffer the
//!    machine has (draining and resuming when a record does not fit), equals the reference ids;
//! 2. encode through a 7-id buffer (growing to `needed` on `PieceTooLong`) equals them too;
//! 3. `count` equals their number;
//! 4. decode, through the byte buffer, gives the reference text back.

use picobpe::{EncodeError, Specials, Tokenize, Tokenizer};

use crate::check::{self, Checks, SMALL};

#[allow(clippy::all, missing_docs, dead_code, long_running_const_eval)]
mod baked {
    include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
}

/// Ids in the encode buffer: the micro:bit has 16 KiB of RAM in all.
pub const IDS: usize = if cfg!(picobpe_small_ram) { 512 } else { 4096 };
/// Bytes in the decode buffer.
pub const BYTES: usize = 2 * IDS;

/// What the model is, and its number of ids.
pub fn describe() -> (&'static str, usize) {
    ("byte-level BPE", baked::TABLES.n_ids())
}

fn tokenizer() -> Tokenizer<'static> {
    Tokenizer::new(&baked::TABLES)
}

/// `tok.encode` of `text[from..]`, with offsets in errors in the whole of `text`.
#[inline(always)]
fn encode_from(
    tok: &Tokenizer<'_>,
    text: &[u8],
    from: usize,
    specials: Specials,
    out: &mut [u32],
) -> Result<usize, EncodeError> {
    let rest = text.get(from..).unwrap_or(&[]);
    tok.encode(rest, out, specials).map_err(|e| e.shifted(from))
}

/// Checks every embedded record; prints failures and the summary line.
pub fn conformance(ids: &mut [u32], bytes: &mut [u8]) -> bool {
    let tok = tokenizer();
    // PBVEC1 (tiktoken's ids) names no buffers; everything goes through them with resume.
    check::conformance(None, |r, c: &mut Checks| {
        let (all, ordinary) = (r.all(), r.ordinary());
        let with = |s| move |from, out: &mut [u32]| encode_from(&tok, r.text, from, s, out);
        let cap = ids.len();
        let ok = check::encode_resumed(ids, cap, all, with(Specials::All));
        c.check(r.name, "encode (specials recognized)", ok);
        let ok = check::encode_resumed(ids, cap, ordinary, with(Specials::None));
        c.check(r.name, "encode (specials as text)", ok);
        let ok = check::encode_resumed(ids, SMALL, all, with(Specials::All));
        c.check(r.name, "encode resumed through 7 ids", ok);
        let ok = tok.count(r.text, ids, Specials::All) == Ok(all.len());
        c.check(r.name, "count", ok);
        if let Some(expected) = r.decoded() {
            let ok = check::decode_chunked(all, ids, bytes, Some(expected), |_, chunk, out| {
                tok.decode(chunk, out)
            });
            c.check(r.name, "decode", ok);
        }
    })
}

/// The footprint figures.
pub fn figures(ids: &mut [u32], bytes: &mut [u8]) -> bool {
    let tok = tokenizer();
    check::figures(
        baked::TABLES.n_ids(),
        ids,
        bytes,
        true,
        |text, from, out| encode_from(&tok, text, from, Specials::All, out),
        |ids, out| tok.decode(ids, out),
    )
}
