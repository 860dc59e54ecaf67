//! WordPiece (bert-cased-8k): `picobpe::WpTokenizer`, checked against Hugging Face
//! tokenizers' `encode(text, add_special_tokens=False)` and `decode` (`PBVEC2` vectors).
//! Per record:
//! 1. encode with added tokens recognized, and as text, through the id buffer (draining and
//!    resuming with `encode_from` after `OutputFull`), equals the reference ids;
//! 2. encode through a 7-id buffer, resumed likewise, equals them too;
//! 3. the reference ids, decoded through the byte buffer (`decode`, then `decode_after` for
//!    the ids after a drained `OutputFull` or a full id buffer), give tokenizers' text where
//!    the record has one (the probes), and decode without an error where it has none (the
//!    set files carry no decoded text).
//!
//! WordPiece has no `count`, and matches a word on the stack: everything goes through the
//! buffers with resume, so the records (selected by `cargo xtask` for the Cortex-M3 tests'
//! 4,096 ids and 12 KiB) need not fit them.

use picobpe::Specials;

use crate::check::{self, Checks, SMALL};

// The Cortex-M3 firmware's module: `TABLES`, `tokenizer` (its buffer sizes are not used here).
#[path = "../../firmware-example/src/wp_tables.rs"]
#[allow(dead_code)]
mod tables;

use tables::{tokenizer, TABLES};

/// Ids in the encode buffer: 4 KiB of the micro:bit's 16 KiB; elsewhere the Cortex-M3 tests'.
pub const IDS: usize = if cfg!(picobpe_small_ram) { 1024 } else { 4096 };
/// Bytes in the decode buffer.
pub const BYTES: usize = if cfg!(picobpe_small_ram) {
    1024
} else {
    12 * 1024
};

/// What the model is, and its number of ids.
pub fn describe() -> (&'static str, usize) {
    ("WordPiece", TABLES.n_ids())
}

/// Checks every embedded record; prints failures and the summary line.
pub fn conformance(ids: &mut [u32], bytes: &mut [u8]) -> bool {
    let tok = tokenizer();
    check::conformance(None, |r, c: &mut Checks| {
        let (all, ordinary) = (r.all(), r.ordinary());
        let with = |s| move |from, out: &mut [u32]| tok.encode_from(r.text, from, out, s);
        let cap = ids.len();
        let ok = check::encode_resumed(ids, cap, all, with(Specials::All));
        c.check(r.name, "encode (added tokens recognized)", ok);
        let ok = check::encode_resumed(ids, cap, ordinary, with(Specials::None));
        c.check(r.name, "encode (added tokens as text)", ok);
        let ok = check::encode_resumed(ids, SMALL, all, with(Specials::All));
        c.check(r.name, "encode resumed through 7 ids", ok);
        let ok = check::decode_chunked(all, ids, bytes, r.decoded(), |after, chunk, out| {
            if after {
                tok.decode_after(chunk, out)
            } else {
                tok.decode(chunk, out)
            }
        });
        c.check(r.name, "decode", ok);
    })
}

/// The footprint figures.
pub fn figures(ids: &mut [u32], bytes: &mut [u8]) -> bool {
    let tok = tokenizer();
    check::figures(
        TABLES.n_ids(),
        ids,
        bytes,
        false,
        |text, from, out| tok.encode_from(text, from, out, Specials::All),
        |ids, out| tok.decode(ids, out),
    )
}
