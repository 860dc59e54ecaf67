//! Regression tests from fuzzing the streaming encoder (`fuzz/fuzz_targets/encode.rs`).
//!
//! A whitespace piece is decided only where its whitespace run ends (`\s+(?!\S)` leaves the last
//! whitespace character to the next piece), and the character after the run may itself be a
//! truncated UTF-8 sequence that needs more bytes. So a `StreamEncoder` needs room for the whole
//! run plus look-ahead, which can exceed the longest piece: with `IN = 16` the input below
//! (longest piece 12 bytes, a 15-byte run of U+2003 followed by a lone `\xE2`) stops with
//! `InputTooSmall`. The fuzz oracle first assumed "longest piece + one character" and flagged
//! this; the encoder is right, the bound is "longest whitespace run or piece + look-ahead".

use picobpe::{Specials, StreamEncoder, StreamError, Tokenizer};
use picobpe_tests::check;
use picobpe_tests::models::{self, Source};
use picobpe_tests::vectors::Encoding;

/// The fuzz input (after its 4 parameter bytes): `fuzz/seeds/encode/regress-ws-run-lookahead`.
const TEXT: &[u8] = b" x ];\n   return  |fim_ \x00fn\x01\x02 \x01\x03 \t\t c \r\n  \n\xff\xfff n() {\n   \x80\x83\xe2\x80\x83\xe2\xee\xaf\x00\x00\x80\x83\xe2\x80\x83\xe2\x80\x83\xe2\x80\x83\xe2\x80\x83\xe2\x80\x83\xe23\x83\xe2\x80\x83\xe2\x80\x83\xe2\x80\x83\xe2\x80\x83\xe2(\"{x:?}\")\n}\n";

/// Push `text` in `chunk`-byte pieces, taking everything after each push.
fn stream<const IN: usize, const OUT: usize>(
    tok: Tokenizer<'_>,
    text: &[u8],
    chunk: usize,
) -> Result<Vec<u32>, StreamError> {
    let mut enc: StreamEncoder<Tokenizer<'_>, IN, OUT> = StreamEncoder::new(tok, Specials::None);
    let mut got = Vec::new();
    let mut buf = [0u32; 8];
    let mut drain = |enc: &mut StreamEncoder<Tokenizer<'_>, IN, OUT>| -> Result<(), StreamError> {
        loop {
            let n = enc.take(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            got.extend_from_slice(&buf[..n]);
        }
    };
    for part in text.chunks(chunk) {
        let mut part = part;
        while !part.is_empty() {
            let n = enc.push(part)?;
            part = &part[n..];
            drain(&mut enc)?;
        }
    }
    enc.finish();
    drain(&mut enc)?;
    Ok(got)
}

#[test]
fn whitespace_run_needs_room_beyond_the_longest_piece() {
    let tok = Tokenizer::new(models::tables(Encoding::Gpt2, Source::Tiktoken));
    let one_shot = check::encode(&tok, TEXT, Specials::None).unwrap();
    let longest = picobpe::pretok::pieces(picobpe::Pattern::Gpt2, TEXT)
        .map(<[u8]>::len)
        .max()
        .unwrap();
    assert_eq!(longest, 12);
    // 16 bytes hold every piece but not the 15-byte run plus its look-ahead.
    assert_eq!(
        stream::<16, 8>(tok, TEXT, 1),
        Err(StreamError::InputTooSmall { capacity: 16 })
    );
    // With room for run + look-ahead, streaming equals one-shot for any chunking.
    for chunk in [1, 2, 3, 7, 16, TEXT.len()] {
        assert_eq!(
            stream::<24, 8>(tok, TEXT, chunk).as_ref(),
            Ok(&one_shot),
            "chunk {chunk}"
        );
    }
}

/// A `take` that meets an error after moving ids hands those ids out first (they are final) and
/// reports the error on the next call, so nothing taken is lost: with `OUT = 8`, `"hi"` encodes
/// and the 27-byte piece after it needs more than 8 ids of work area.
#[test]
fn ids_before_a_stream_error_are_handed_out_first() {
    let tok = Tokenizer::new(models::tables(Encoding::Gpt2, Source::Tiktoken));
    let text = b"hi abcdefghijklmnopqrstuvwxyz";
    let one_shot = check::encode(&tok, text, Specials::None).unwrap();
    let mut enc: StreamEncoder<Tokenizer<'_>, 64, 8> = StreamEncoder::new(tok, Specials::None);
    assert_eq!(enc.push(text), Ok(text.len()));
    enc.finish();
    let mut out = [0u32; 16];
    let n = enc.take(&mut out).expect("the ids before the long piece");
    assert!(n >= 1);
    assert_eq!(out[..n], one_shot[..n]);
    assert!(matches!(
        enc.take(&mut out),
        Err(StreamError::PieceTooLong { len: 27, .. })
    ));
}
