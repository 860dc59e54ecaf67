//! SentencePiece, BPE (sp4096) or Unigram (ug8000): `picobpe::SpTokenizer`, checked against
//! sentencepiece's `EncodeAsIds` and `DecodeIds` (`PBVEC2` vectors). Per record:
//! 1. a one-shot encode into the work buffer equals the reference ids;
//! 2. encode through a 7-id buffer, resumed with `encode_from` after each `OutputFull`, equals
//!    them too (a word that needs more room gets the `needed` ids `PieceTooLong` asks for:
//!    BPE merges a word in the output buffer);
//! 3. the same with `encode_at` (the cursor carries a Unigram word start's score);
//! 4. `count` equals their number;
//! 5. the reference ids, decoded through the byte buffer with `decode_from` resume, give the
//!    reference text.
//!
//! The records were selected (by `cargo xtask ports-test`) so that their ids and the work area
//! of their longest word fit the work buffer, [`IDS`]; the vector file names [`IDS`] and
//! [`BYTES`], and the run checks that.

use picobpe::{Cursor, DecodeError, EncodeError, SpTokenizer, Specials, Tokenize};

use crate::check::{self, Checks, SMALL};
use crate::vectors::Ids;

// The Cortex-M3 firmware's module: `TABLES`, `tokenizer`, `algorithm`, `round_trips` (its
// buffer sizes, chosen by that crate's machine features, are not used here).
#[path = "../../firmware-example/src/sp_tables.rs"]
#[allow(dead_code, unexpected_cfgs)]
mod tables;

use tables::{tokenizer, TABLES};

/// `u32`s of the work buffer: a record's ids and the work area of its longest word (BPE's
/// merge area, Unigram's lattice of a word over 64 bytes). 10 KiB of the micro:bit's 16 KiB;
/// elsewhere 384 KiB, as on the Cortex-M3 mps2-an385.
pub const IDS: usize = if cfg!(picobpe_small_ram) {
    2560
} else {
    96 * 1024
};
/// Bytes of the decode buffer (a decode longer than it resumes with `decode_from`).
pub const BYTES: usize = if cfg!(picobpe_small_ram) {
    1024
} else {
    64 * 1024
};

/// What the model is, and its number of ids.
pub fn describe() -> (&'static str, usize) {
    let kind = match tables::algorithm() {
        "BPE" => "SentencePiece BPE",
        _ => "SentencePiece Unigram",
    };
    (kind, TABLES.n_ids())
}

/// Checks every embedded record; prints failures and the summary line.
pub fn conformance(work: &mut [u32], bytes: &mut [u8]) -> bool {
    let tok = tokenizer();
    check::conformance(Some((IDS, BYTES)), |r, c: &mut Checks| {
        let all = r.all();
        let ok = matches!(tok.encode(r.text, work), Ok(n) if all.eq_slice(&work[..n]));
        c.check(r.name, "encode", ok);
        let ok = check::encode_resumed(work, SMALL, all, |from, out| {
            tok.encode_from(r.text, from, out, Specials::All, &mut [])
        });
        c.check(r.name, "encode_from resumed through 7 ids", ok);
        c.check(r.name, "encode_at resumed through 7 ids", {
            cursor_resumed(&tok, r.text, work, all)
        });
        let ok = tok.count(r.text, work, Specials::All) == Ok(all.len());
        c.check(r.name, "count", ok);
        if let Some(expected) = r.decoded() {
            let ok =
                copy_ids(all, work).is_some_and(|ids| decode_resumed(&tok, ids, bytes, expected));
            c.check(r.name, "decode", ok);
        }
    })
}

/// [`check::encode_resumed`] through 7 ids with `encode_at`: each call goes on from the
/// cursor the last one left (at its `consumed`); a call that asks for more room is made again
/// from the cursor it started from.
fn cursor_resumed(tok: &SpTokenizer<'_>, text: &[u8], work: &mut [u32], expected: Ids<'_>) -> bool {
    let mut cursor = Cursor::START;
    let mut in_step = true;
    let ok = check::encode_resumed(work, SMALL, expected, |from, out| {
        in_step &= cursor.offset() == from;
        let before = cursor;
        let r = tok.encode_at(text, &mut cursor, out, Specials::All, &mut []);
        if matches!(r, Err(EncodeError::PieceTooLong { .. })) {
            cursor = before;
        }
        r
    });
    ok && in_step && cursor.offset() == text.len()
}

/// `ids` copied into the front of `buf` (they are stored unaligned); `None` when they do not
/// fit.
fn copy_ids<'b>(ids: Ids<'_>, buf: &'b mut [u32]) -> Option<&'b [u32]> {
    let out = buf.get_mut(..ids.len())?;
    for (slot, id) in out.iter_mut().zip(ids.iter()) {
        *slot = id;
    }
    Some(out)
}

/// Decodes `ids` through `bytes`, resuming with `decode_from` after `OutputFull`, and compares
/// the bytes, as they come, with `expected`.
fn decode_resumed(tok: &SpTokenizer<'_>, ids: &[u32], bytes: &mut [u8], expected: &[u8]) -> bool {
    let (mut from, mut at) = (0usize, 0usize);
    loop {
        let (written, done) = match tok.decode_from(ids, from, bytes) {
            Ok(w) => (w, true),
            Err(DecodeError::OutputFull { consumed, written })
                if consumed > from || written > 0 =>
            {
                from = consumed;
                (written, false)
            }
            Err(_) => return false,
        };
        if expected.get(at..at + written) != Some(&bytes[..written]) {
            return false;
        }
        at += written;
        if done {
            return at == expected.len();
        }
    }
}

/// The footprint figures.
pub fn figures(work: &mut [u32], bytes: &mut [u8]) -> bool {
    let tok = tokenizer();
    check::figures(
        TABLES.n_ids(),
        work,
        bytes,
        tables::round_trips(),
        |text, from, out| tok.encode_from(text, from, out, Specials::All, &mut []),
        |ids, out| tok.decode(ids, out),
    )
}
