// The on-target tests of a SentencePiece model, BPE or Unigram (`picobpe::SpTokenizer`),
// included by `on_target.rs` when the baked model is one (`cfg(picobpe_sp)`).
//
// Every configuration runs the model-independent tests: round trips (what sentencepiece's
// `DecodeIds` gives: the text, with each byte outside well-formed UTF-8 as U+FFFD; with byte
// fallback and extra whitespace kept only), resume after `OutputFull` through small buffers
// (`encode_from` and `encode_at`), `count`, `decode_from` resume, byte
// pieces, control and user-defined symbols, `PieceTooLong`, empty input, unknown ids, stack
// bounds, tables in flash, and the streaming encoder and decoder (`StreamEncoder`,
// `StreamDecoder`). Builds that embed reference vectors (`cfg(picobpe_vectors)`, `PBVEC2`)
// compare ids and decoded texts with sentencepiece's own for a subset of
// `tests/fixtures/sentencepiece/vectors/<model>/` (BPE) or `tests/fixtures/unigram/vectors/`
// (Unigram), one-shot, resumed and streamed; the Mistral and ug8000 builds add tests with their
// figures written out (`cfg(picobpe_mistral)`, `cfg(picobpe_ug8000)`).
//
// SentencePiece BPE merges a word in the caller's output buffer (its symbols at the far end:
// about 11 `u32` per byte of an ASCII word), Unigram keeps the lattice of a word of more than
// 64 bytes there (a few `u32` per byte), so texts whose words are long are encoded in static
// buffers (`work`, `text_buf`), not on the stack. The streaming encoder holds its own buffers
// (`STREAM_IN` bytes, `STREAM_OUT` ids) on the stack.

use core::ptr::addr_of_mut;
use core::sync::atomic::{AtomicBool, Ordering};

use picobpe::sentencepiece::{PieceKind, Sections, MAX_PIECE_BYTES};
use picobpe::{
    Cursor, DecodeError, EncodeError, SpTokenizer, Specials, StreamDecoder, StreamEncoder,
    StreamError, Tokenize,
};
use picobpe_firmware::tables::{tokenizer, DECODE_BYTES, STREAM_IN, STREAM_OUT, TABLES, WORK_IDS};

/// Peak stack an encode call may use (bytes), whatever the input: asserted by
/// `stack_bound_encode`. The encoder's fixed stack buffers are a 256-byte word and two
/// 128-byte piece candidates; the merge work area lives in the output buffer.
pub const ENCODE_STACK_BOUND: usize = 2048;
/// Peak stack a decode call may use (bytes): asserted by `stack_bound_decode`.
pub const DECODE_STACK_BOUND: usize = 512;

/// Room, in ids, of the stack buffers for short texts: their ids plus the work area of their
/// longest word.
const SHORT: usize = 1024;

/// Bytes the streaming decoder holds: the longest piece's text ([`MAX_PIECE_BYTES`]) beside
/// the U+FFFD of up to three held byte pieces.
const DECODE_PENDING: usize = MAX_PIECE_BYTES + 16;

/// The streaming encoder of the tests, built on the stack (9 KiB on the lm3s6965evb, twice
/// that while being built: see [`STREAM_OUT`]).
type Stream = StreamEncoder<SpTokenizer<'static>, STREAM_IN, STREAM_OUT>;

static mut WORK: [u32; WORK_IDS] = [0; WORK_IDS];
static mut TEXT: [u8; DECODE_BYTES] = [0; DECODE_BYTES];

/// The static ids buffer ([`WORK_IDS`] long), handed out once per test (each test runs in a
/// boot of its own).
fn work() -> &'static mut [u32; WORK_IDS] {
    static TAKEN: AtomicBool = AtomicBool::new(false);
    assert!(
        !TAKEN.swap(true, Ordering::Relaxed),
        "work buffer taken twice"
    );
    // SAFETY: handed out at most once (the flag above), and nothing else touches it.
    unsafe { &mut *addr_of_mut!(WORK) }
}

/// The static text buffer ([`DECODE_BYTES`] long), handed out once per test.
fn text_buf() -> &'static mut [u8; DECODE_BYTES] {
    static TAKEN: AtomicBool = AtomicBool::new(false);
    assert!(
        !TAKEN.swap(true, Ordering::Relaxed),
        "text buffer taken twice"
    );
    // SAFETY: as for `work`.
    unsafe { &mut *addr_of_mut!(TEXT) }
}

/// One-shot encode into `out`; panics on an error.
fn encode_into<'a>(text: &[u8], out: &'a mut [u32]) -> &'a [u32] {
    match tokenizer().encode(text, out) {
        Ok(n) => &out[..n],
        Err(e) => panic!("encode failed: {e}"),
    }
}

/// One-shot decode into `out`; panics on an error.
fn decode_into<'a>(ids: &[u32], out: &'a mut [u8]) -> &'a [u8] {
    match tokenizer().decode(ids, out) {
        Ok(n) => &out[..n],
        Err(e) => panic!("decode failed: {e}"),
    }
}

/// Encode `text` through output buffers of `cap` ids carved from `buf`, resuming after
/// `OutputFull { consumed, .. }` with `encode_from(text, consumed, ..)` on the whole text, and
/// compare the ids with `expected` as they come. A word that needs more room than `cap` gives
/// `PieceTooLong { needed }`; as documented, that step is retried with a buffer of `needed`
/// ids (at most all of `buf`). `Err(i)`: the ids differ from index `i` on.
fn encode_resumed(
    text: &[u8],
    cap: usize,
    buf: &mut [u32],
    expected: &mut dyn Iterator<Item = u32>,
) -> Result<(), usize> {
    let tok = tokenizer();
    let mut index = 0usize;
    let mut from = 0usize;
    let mut room = cap;
    loop {
        assert!(
            room <= buf.len(),
            "a word at {from} needs {room} ids of room, the buffer has {}",
            buf.len()
        );
        let chunk = &mut buf[..room];
        match tok.encode_from(text, from, chunk, Specials::All, &mut []) {
            Ok(n) => {
                compare_ids(&chunk[..n], expected, &mut index)?;
                return match expected.next() {
                    None => Ok(()),
                    Some(_) => Err(index),
                };
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(
                    (consumed > from || written > 0) && consumed <= text.len(),
                    "no progress at {from} with room {room} (consumed {consumed})"
                );
                compare_ids(&chunk[..written], expected, &mut index)?;
                from = consumed;
                room = cap;
            }
            Err(EncodeError::PieceTooLong { offset, needed, .. }) => {
                assert!(
                    offset >= from && needed > room && room < buf.len(),
                    "PieceTooLong at {offset} (from {from}) needs {needed}, room {room}"
                );
                // `needed` is an upper bound: for a word longer than the encoder's 256-byte
                // stack buffer, in a buffer too small to hold even its packed bytes, 12 per byte.
                // The whole buffer is enough for every text the tests encode.
                room = needed.min(buf.len());
            }
        }
    }
}

/// [`encode_resumed`] with [`Cursor`]: encode `text` through buffers of `cap` ids with
/// `encode_at`, going on after `OutputFull` from the cursor it leaves (at `consumed`, with
/// the state a Unigram word start carries), and compare the ids with `expected` as they come.
/// On `PieceTooLong { needed }` the call is made again, from the cursor it started from, with
/// `needed` ids of room (at most all of `buf`). `Err(i)`: the ids differ from index `i` on.
fn encode_cursor_resumed(
    text: &[u8],
    cap: usize,
    buf: &mut [u32],
    expected: &mut dyn Iterator<Item = u32>,
) -> Result<(), usize> {
    let tok = tokenizer();
    let mut index = 0usize;
    let mut cursor = Cursor::START;
    let mut room = cap;
    loop {
        let before = cursor;
        assert!(
            room <= buf.len(),
            "a word at {} needs {room} ids of room, the buffer has {}",
            before.offset(),
            buf.len()
        );
        let chunk = &mut buf[..room];
        match tok.encode_at(text, &mut cursor, chunk, Specials::All, &mut []) {
            Ok(n) => {
                compare_ids(&chunk[..n], expected, &mut index)?;
                assert_eq!(cursor.offset(), text.len(), "cursor not at the end");
                return match expected.next() {
                    None => Ok(()),
                    Some(_) => Err(index),
                };
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(
                    cursor.offset() == consumed && (consumed > before.offset() || written > 0),
                    "cursor at {} after OutputFull at {consumed} (from {})",
                    cursor.offset(),
                    before.offset()
                );
                compare_ids(&chunk[..written], expected, &mut index)?;
                room = cap;
            }
            Err(EncodeError::PieceTooLong { offset, needed, .. }) => {
                assert!(
                    offset >= before.offset() && needed > room && room < buf.len(),
                    "PieceTooLong at {offset} (from {}) needs {needed}, room {room}",
                    before.offset()
                );
                cursor = before;
                room = needed.min(buf.len());
            }
        }
    }
}

/// Why a streamed encode did not give the expected ids.
#[derive(Debug)]
enum StreamMiss {
    /// The ids differ from the expected ones from this index on.
    At(usize),
    /// The encoder failed (the ids it gave before matched).
    Failed(StreamError),
}

/// Stream-encode `text` through a [`Stream`]: push `chunk`-byte pieces, take ids `take` (at
/// most 16) at a time, and compare them with `expected` as they come.
fn encode_streamed(
    text: &[u8],
    chunk: usize,
    take: usize,
    expected: &mut dyn Iterator<Item = u32>,
) -> Result<(), StreamMiss> {
    let mut s: Stream = StreamEncoder::new(tokenizer(), Specials::All);
    let mut out = [0u32; 16];
    let out = &mut out[..take];
    let mut index = 0usize;
    let mut drain = |s: &mut Stream| -> Result<(), StreamMiss> {
        loop {
            let k = s.take(out).map_err(StreamMiss::Failed)?;
            if k == 0 {
                return Ok(());
            }
            compare_ids(&out[..k], expected, &mut index).map_err(StreamMiss::At)?;
        }
    };
    for part in text.chunks(chunk) {
        let mut part = part;
        while !part.is_empty() {
            let n = s.push(part).map_err(StreamMiss::Failed)?;
            part = &part[n..];
            drain(&mut s)?;
        }
    }
    s.finish();
    drain(&mut s)?;
    assert!(s.is_done(), "stream not done after draining");
    match expected.next() {
        None => Ok(()),
        Some(_) => Err(StreamMiss::At(index)),
    }
}

/// Stream-decode `ids` through a [`StreamDecoder`] of [`DECODE_PENDING`] bytes: push each
/// id, taking `take` bytes (4 to 16) at a time whenever the decoder is full and after the
/// last id, and compare the bytes with `expected`. Every take must be whole characters.
/// `Err(i)`: the bytes differ from offset `i` on.
fn decode_streamed(
    ids: impl Iterator<Item = u32>,
    take: usize,
    expected: &[u8],
) -> Result<(), usize> {
    let mut d: StreamDecoder<SpTokenizer<'_>, DECODE_PENDING> = StreamDecoder::new(tokenizer());
    let mut buf = [0u8; 16];
    let buf = &mut buf[..take];
    let mut at = 0usize;
    let mut drain =
        |d: &mut StreamDecoder<SpTokenizer<'_>, DECODE_PENDING>| -> Result<usize, usize> {
            let k = d.take(buf);
            let got = &buf[..k];
            if core::str::from_utf8(got).is_err() || expected.get(at..at + k) != Some(got) {
                return Err(at);
            }
            at += k;
            Ok(k)
        };
    for (position, id) in ids.enumerate() {
        loop {
            match d.push(id) {
                Ok(()) => break,
                Err(DecodeError::OutputFull { consumed, .. }) => {
                    assert_eq!(consumed, position, "OutputFull names another position");
                    assert!(drain(&mut d)? > 0, "no progress at id {position}");
                }
                Err(e) => panic!("push({id}) at {position} failed: {e}"),
            }
        }
    }
    d.finish();
    while drain(&mut d)? > 0 {}
    if at == expected.len() {
        Ok(())
    } else {
        Err(at)
    }
}

/// Compare `ids` with the next ids of `expected`, counting them in `index`; `Err(i)`: the first
/// differing index.
fn compare_ids(
    ids: &[u32],
    expected: &mut dyn Iterator<Item = u32>,
    index: &mut usize,
) -> Result<(), usize> {
    for &id in ids {
        if expected.next() != Some(id) {
            return Err(*index);
        }
        *index += 1;
    }
    Ok(())
}

/// Decode `ids` through output buffers of `cap` bytes, resuming after `OutputFull
/// { consumed, .. }` with `decode_from(ids, consumed, ..)`, and compare the bytes with
/// `expected`. A piece longer than the buffer makes no progress; the buffer then grows (up to
/// 256 bytes) for that step. `Err(i)`: the bytes differ from offset `i` on.
fn decode_resumed(ids: &[u32], cap: usize, expected: &[u8]) -> Result<(), usize> {
    let tok = tokenizer();
    let mut buf = [0u8; 256];
    let mut from = 0usize;
    let mut at = 0usize;
    let mut room = cap;
    loop {
        let out = &mut buf[..room];
        let (done, written) = match tok.decode_from(ids, from, out) {
            Ok(n) => (true, n),
            Err(DecodeError::OutputFull { consumed, written }) => {
                if consumed == from && written == 0 {
                    assert!(room < 256, "a piece at {from} does not fit 256 bytes");
                    room = (2 * room).min(256);
                } else {
                    room = cap;
                }
                from = consumed;
                (false, written)
            }
            Err(e) => panic!("decode_from({from}) failed: {e}"),
        };
        if expected.get(at..at + written) != Some(&out[..written]) {
            return Err(at);
        }
        at += written;
        if done {
            return if at == expected.len() {
                Ok(())
            } else {
                Err(at)
            };
        }
    }
}

/// True when `decoded` is `text` with each byte outside well-formed UTF-8 read as U+FFFD:
/// what sentencepiece's `DecodeIds` gives for the ids of `text`, with byte fallback, extra
/// whitespace kept and no literal `▁` in the text.
fn is_text_with_replacements(decoded: &[u8], text: &[u8]) -> bool {
    let mut d = decoded;
    for chunk in text.utf8_chunks() {
        let Some(rest) = d.strip_prefix(chunk.valid().as_bytes()) else {
            return false;
        };
        d = rest;
        for _ in chunk.invalid() {
            let Some(rest) = d.strip_prefix("\u{FFFD}".as_bytes()) else {
                return false;
            };
            d = rest;
        }
    }
    d.is_empty()
}

/// Whether decode(encode(text)) gives the text back (U+FFFD for malformed bytes): with byte
/// fallback and extra whitespace kept, as in the built-in models (sp4096, Mistral). Other
/// models skip the round-trip comparisons.
fn round_trips() -> bool {
    let yes = TABLES.byte_fallback() && !TABLES.remove_extra_whitespaces;
    if !yes {
        semihosting::println!(
            "model without byte fallback or removing extra whitespace: round trips not compared"
        );
    }
    yes
}

/// Encode, decode and compare with the text; resume through `cap`-id buffers and compare with
/// the one-shot ids.
fn check_round_trip(text: &[u8], cap: usize) {
    let mut ids = [0u32; SHORT];
    let ids = encode_into(text, &mut ids);
    let mut out = [0u8; 1024];
    let decoded = decode_into(ids, &mut out);
    if round_trips() {
        assert!(
            is_text_with_replacements(decoded, text),
            "round trip differs ({} bytes decoded for {})",
            decoded.len(),
            text.len()
        );
    }
    let mut buf = [0u32; SHORT];
    let r = encode_resumed(text, cap, &mut buf, &mut ids.iter().copied());
    assert!(r.is_ok(), "cap {cap}: resumed ids differ at {r:?}");
}

/// The first 4000 bytes of the bench text.
fn bench_part() -> &'static [u8] {
    &picobpe_firmware::texts::BENCH[..4000]
}

/// Ids of the pieces of kind `kind`.
fn ids_of_kind(kind: PieceKind) -> impl Iterator<Item = u32> {
    (0..TABLES.n_ids() as u32).filter(move |&id| TABLES.kind(id) == Some(kind))
}

#[embedded_test::tests]
mod tests {
    use super::*;
    use picobpe_firmware::{stack, texts};

    #[test]
    fn demo_text_round_trips() {
        check_round_trip(texts::DEMO.as_bytes(), 3);
    }

    #[test]
    fn multilingual_round_trips() {
        // CJK and emoji outside the vocabulary fall back to byte pieces.
        let text = "Ünïcödé: 日本語のテキスト, 한국어, Русский текст, ελληνικά, हिन्दी, العربية, \
                    emoji 🙃🇮🇸👩‍👩‍👧 and tabs\t\t, CRLF\r\n, NBSP\u{a0}, U+3000\u{3000}end, \
                    double  and   triple spaces,  leading and trailing  ";
        check_round_trip(text.as_bytes(), 3);
        check_round_trip(b" one leading space", 2);
        check_round_trip(b"   three leading spaces", 2);
    }

    #[test]
    fn invalid_utf8_decodes_to_replacement_characters() {
        let text: &[u8] = b"ok \xff\xfe bad \xc3 lone lead, \x80 stray, \xed\xa0\x80 surrogate, \
                            \xf0\x9f\x99 truncated \xf4\x90\x80\x80 too big \xc0\xaf overlong \xf0";
        check_round_trip(text, 3);
        let mut ids = [0u32; SHORT];
        let ids = encode_into(text, &mut ids);
        let mut out = [0u8; 1024];
        let decoded = decode_into(ids, &mut out);
        assert!(
            core::str::from_utf8(decoded).is_ok(),
            "decode gave malformed UTF-8"
        );
    }

    #[test]
    fn bench_text_round_trips_through_small_buffers() {
        let text = bench_part();
        let work = work();
        let (one, rest) = work.split_at_mut(WORK_IDS / 2);
        let one = encode_into(text, one);
        let out = text_buf();
        let decoded = decode_into(one, &mut out[..]);
        assert!(is_text_with_replacements(decoded, text) || !round_trips());
        let r = encode_resumed(text, 7, rest, &mut one.iter().copied());
        assert!(r.is_ok(), "resumed ids differ at {r:?}");
        assert!(
            one.len() < text.len() / 2,
            "{} ids for {} bytes: not merging?",
            one.len(),
            text.len()
        );
    }

    #[test]
    fn empty_input_gives_no_ids() {
        let tok = tokenizer();
        let mut out = [0u32; 4];
        assert_eq!(tok.encode(b"", &mut out), Ok(0));
        assert_eq!(tok.encode(b"", &mut []), Ok(0));
        assert_eq!(tok.count(b"", &mut [], Specials::All), Ok(0));
        assert_eq!(tok.encode_from(b"abc", 3, &mut out, Specials::All, &mut []), Ok(0));
        let mut bytes = [0u8; 4];
        assert_eq!(tok.decode(&[], &mut bytes), Ok(0));
        assert_eq!(tok.decode(&[], &mut []), Ok(0));
    }

    #[test]
    fn byte_pieces_decode_to_their_bytes() {
        if !TABLES.byte_fallback() {
            semihosting::println!("no byte fallback: nothing to check");
            return;
        }
        let tok = tokenizer();
        let hex = b"0123456789ABCDEF";
        for b in 0..=255u8 {
            let id = TABLES.byte_ids[b as usize];
            assert_eq!(TABLES.kind(id), Some(PieceKind::Byte), "byte {b:#04x}");
            let name = [
                b'<',
                b'0',
                b'x',
                hex[(b >> 4) as usize],
                hex[(b & 15) as usize],
                b'>',
            ];
            assert!(
                TABLES.piece_bytes(id) == Some(&name[..]),
                "byte {b:#04x} piece"
            );
            let mut out = [0u8; 4];
            let n = tok.decode(&[id], &mut out).unwrap();
            if b < 0x80 {
                assert!(
                    n == 1 && out[0] == b,
                    "byte {b:#04x} decodes to {:?}",
                    &out[..n]
                );
            } else {
                assert!(&out[..n] == "\u{FFFD}".as_bytes(), "lone byte {b:#04x}");
            }
        }
        // A character's bytes decode together; a cut-off one byte by byte.
        let emoji = "🙃".as_bytes();
        let mut ids = [0u32; 4];
        for (id, &b) in ids.iter_mut().zip(emoji) {
            *id = TABLES.byte_ids[b as usize];
        }
        let mut out = [0u8; 16];
        assert!(decode_into(&ids, &mut out) == emoji);
        assert!(decode_into(&ids[..3], &mut out) == "\u{FFFD}\u{FFFD}\u{FFFD}".as_bytes());
        // 🙃 is no piece of the built-in models: it encodes to its four byte pieces.
        let mut enc = [0u32; 64];
        let got = encode_into("a🙃".as_bytes(), &mut enc);
        if let Some(tail) = got.get(got.len().saturating_sub(4)..) {
            if TABLES.piece_id("🙃".as_bytes()).is_none() {
                assert!(tail == ids, "🙃 -> {got:?}");
            }
        }
    }

    #[test]
    fn count_equals_encode_length() {
        let mut scratch = [0u32; 512];
        let work = work();
        for text in [texts::DEMO.as_bytes(), bench_part(), texts::BENCH] {
            let n = encode_into(text, &mut work[..]).len();
            assert_eq!(tokenizer().count(text, &mut scratch, Specials::All), Ok(n));
        }
    }

    #[test]
    fn output_full_resume_equals_one_shot() {
        let text = texts::DEMO.as_bytes();
        let mut one = [0u32; SHORT];
        let one = encode_into(text, &mut one);
        let mut buf = [0u32; SHORT];
        for cap in 1..=9 {
            let r = encode_resumed(text, cap, &mut buf, &mut one.iter().copied());
            assert!(r.is_ok(), "cap {cap}: differs from one-shot at {r:?}");
        }
    }

    #[test]
    fn cursor_resume_equals_one_shot() {
        let text = texts::DEMO.as_bytes();
        let mut one = [0u32; SHORT];
        let one = encode_into(text, &mut one);
        let mut buf = [0u32; SHORT];
        for cap in 1..=9 {
            let r = encode_cursor_resumed(text, cap, &mut buf, &mut one.iter().copied());
            assert!(r.is_ok(), "cap {cap}: differs from one-shot at {r:?}");
        }
        let text = bench_part();
        let work = work();
        let (one, rest) = work.split_at_mut(WORK_IDS / 2);
        let one = encode_into(text, one);
        let r = encode_cursor_resumed(text, 7, rest, &mut one.iter().copied());
        assert!(r.is_ok(), "bench text: differs from one-shot at {r:?}");
    }

    #[test]
    fn output_full_stops_at_a_word_boundary() {
        let mut text = [0u8; 24 + 100 * 10];
        text[..24].copy_from_slice(b"Hello world, hello again");
        for k in 0..100 {
            text[24 + 10 * k..34 + 10 * k].copy_from_slice(b" and again");
        }
        let mut one = [0u32; SHORT];
        let one = encode_into(&text, &mut one);
        let mut out = [0u32; 128];
        match tokenizer().encode(&text, &mut out) {
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(written > 0 && written <= 128 && consumed > 0 && consumed < text.len());
                // A word starts at its space (its `▁`).
                assert_eq!(text[consumed], b' ', "consumed {consumed} is inside a word");
                assert!(
                    out[..written] == one[..written],
                    "ids before the stop differ"
                );
                let mut rest = [0u32; SHORT];
                let n = tokenizer()
                    .encode_from(&text, consumed, &mut rest, Specials::All, &mut [])
                    .unwrap();
                assert!(rest[..n] == one[written..], "ids after the stop differ");
            }
            other => panic!("expected OutputFull, got {other:?}"),
        }
    }

    #[test]
    fn word_longer_than_the_buffer_is_an_error() {
        let mut text = [b'q'; 203]; // "ok " and a 200-letter word, no piece
        text[..3].copy_from_slice(b"ok ");
        let tok = tokenizer();
        let mut out = [0u32; 4];
        match tok.encode(&text[3..], &mut out) {
            Err(EncodeError::PieceTooLong {
                offset: 0,
                len: 200,
                needed,
            }) => {
                assert!(needed > 4 && needed <= 12 * 203, "needed {needed}");
                // With the room it asked for, the same input encodes.
                let work = work();
                let ids = encode_into(&text[3..], &mut work[..needed]);
                let mut out = [0u8; 256];
                assert!(decode_into(ids, &mut out) == &text[3..]);
            }
            other => panic!("expected PieceTooLong, got {other:?}"),
        }
        // Later in the text, the word starts at its space. The ids before it come out first
        // (`OutputFull`), so that `PieceTooLong` comes from a call that wrote nothing.
        let mut out = [0u32; 64];
        let result = match tok.encode(&text, &mut out) {
            Err(EncodeError::OutputFull {
                consumed: 2,
                written,
            }) if written > 0 => tok.encode_from(&text, 2, &mut out, Specials::All, &mut []),
            other => panic!("expected OutputFull at 2, got {other:?}"),
        };
        match result {
            Err(EncodeError::PieceTooLong {
                offset: 2,
                len: 201,
                ..
            }) => {}
            other => panic!("expected PieceTooLong at offset 2, got {other:?}"),
        }
    }

    #[test]
    fn long_runs_round_trip() {
        // 200 spaces and a letter: one word (whitespace-only pieces merge); 200 digits (split
        // one by one); 120 spaces alone.
        let work = work();
        let mut text = [b' '; 201];
        text[200] = b'a';
        let digits = [b'7'; 200];
        for t in [&text[..], &digits[..], &text[..120]] {
            let (one, rest) = work.split_at_mut(WORK_IDS / 2);
            let one = encode_into(t, one);
            let mut out = [0u8; 512];
            let decoded = decode_into(one, &mut out);
            assert!(is_text_with_replacements(decoded, t) || !round_trips());
            let r = encode_resumed(t, 5, rest, &mut one.iter().copied());
            assert!(r.is_ok(), "resumed ids differ at {r:?}");
        }
    }

    #[test]
    fn decode_resume_through_small_buffers_equals_one_shot() {
        let text = bench_part();
        let work = work();
        let ids = encode_into(text, &mut work[..]);
        let out = text_buf();
        let one = decode_into(ids, &mut out[..]);
        for cap in [1, 4, 7, 16] {
            let r = decode_resumed(ids, cap, one);
            assert!(r.is_ok(), "cap {cap}: differs at byte {r:?}");
        }
        let multi = "Héllò 🙃 日本語 👩‍👩‍👧 end".as_bytes();
        let mut ids = [0u32; SHORT];
        let ids = encode_into(multi, &mut ids);
        for cap in [1, 2, 3, 5] {
            let r = decode_resumed(ids, cap, multi);
            assert!(
                r.is_ok() || !round_trips(),
                "cap {cap}: differs at byte {r:?}"
            );
        }
    }

    #[test]
    fn decode_output_full_stops_at_an_id_boundary() {
        let text = b"Hello world, hello again";
        let mut ids = [0u32; SHORT];
        let ids = encode_into(text, &mut ids);
        let tok = tokenizer();
        let mut out = [0u8; 9];
        match tok.decode(ids, &mut out) {
            Err(DecodeError::OutputFull { consumed, written }) => {
                assert!(written <= 9 && consumed < ids.len());
                let mut full = [0u8; 64];
                let prefix = decode_into(&ids[..consumed], &mut full);
                assert!(prefix == &out[..written], "bytes before the stop differ");
                assert!(out[..written] == text[..written]);
            }
            other => panic!("expected OutputFull, got {other:?}"),
        }
    }

    #[test]
    fn streaming_equals_one_shot() {
        let texts: [&[u8]; 3] = [
            texts::DEMO.as_bytes(),
            "  Ünïcödé 日本語 🙃🇮🇸 tabs\t\t CRLF\r\n double  spaces, \u{2581} a mark  ".as_bytes(),
            b"bad \xff\xfe \xc3 lone, \xf0\x9f\x99 cut, and trailing  ",
        ];
        for text in texts {
            let mut one = [0u32; SHORT];
            let one = encode_into(text, &mut one);
            for (chunk, take) in [(1, 1), (2, 3), (3, 16), (7, 2), (64, 5)] {
                let r = encode_streamed(text, chunk, take, &mut one.iter().copied());
                assert!(r.is_ok(), "chunk {chunk}, take {take}: {r:?}");
            }
            let mut out = [0u8; 1024];
            let decoded = decode_into(one, &mut out);
            for take in [4, 5, 16] {
                let r = decode_streamed(one.iter().copied(), take, decoded);
                assert!(r.is_ok(), "take {take}: differs at byte {r:?}");
            }
        }
    }

    #[test]
    fn streaming_decode_holds_a_partial_character() {
        if !TABLES.byte_fallback() {
            semihosting::println!("no byte fallback: nothing to check");
            return;
        }
        // 🙃 = F0 9F 99 83, pushed one byte piece at a time.
        let emoji = "🙃".as_bytes();
        let mut d: StreamDecoder<SpTokenizer<'_>, DECODE_PENDING> = StreamDecoder::new(tokenizer());
        let mut buf = [0u8; 8];
        for (i, &b) in emoji.iter().enumerate() {
            d.push(TABLES.byte_ids[b as usize]).unwrap();
            let k = d.take(&mut buf);
            if i < 3 {
                assert_eq!(k, 0, "handed out a partial character after byte {i}");
            } else {
                assert!(k == 4 && &buf[..4] == emoji);
            }
        }
        // A character cut off by the end becomes one U+FFFD per byte; an unknown id in
        // between is an error naming its position.
        d.push(TABLES.byte_ids[0xF0]).unwrap();
        d.push(TABLES.byte_ids[0x9F]).unwrap();
        let bad = TABLES.n_ids() as u32;
        assert_eq!(
            d.push(bad),
            Err(DecodeError::UnknownId {
                position: 6,
                id: bad,
                written: 0
            })
        );
        assert_eq!(d.take(&mut buf), 0);
        d.finish();
        let k = d.take(&mut buf);
        assert!(
            &buf[..k] == "\u{FFFD}\u{FFFD}".as_bytes(),
            "{:?}",
            &buf[..k]
        );
    }

    #[test]
    fn unknown_ids_are_errors_naming_the_position() {
        let tok = tokenizer();
        let bad = TABLES.n_ids() as u32;
        let mut ids = [0u32; 64];
        let a = encode_into(b"a", &mut ids)[0];
        let mut out = [0u8; 64];
        let two = decode_into(&[a, a], &mut out).len();
        assert_eq!(
            tok.decode(&[a, a, bad, a], &mut out),
            Err(DecodeError::UnknownId {
                position: 2,
                id: bad,
                written: two
            })
        );
        assert_eq!(
            tok.decode(&[u32::MAX], &mut out),
            Err(DecodeError::UnknownId {
                position: 0,
                id: u32::MAX,
                written: 0
            })
        );
        assert!(TABLES.piece_bytes(bad).is_none() && TABLES.kind(bad).is_none());
        assert!(TABLES.piece_bytes(bad - 1).is_some());
    }

    #[test]
    fn control_symbols_decode_to_nothing_and_are_not_matched() {
        let tok = tokenizer();
        let mut ids = [0u32; 64];
        let x = encode_into(b"x", &mut ids)[0];
        let mut n = 0;
        for c in ids_of_kind(PieceKind::Control) {
            let mut out = [0u8; 64];
            assert_eq!(tok.decode(&[c], &mut out), Ok(0), "control {c}");
            let mut plain = [0u8; 64];
            let plain = decode_into(&[x, x], &mut plain);
            assert!(
                decode_into(&[c, x, c, x, c], &mut out) == plain,
                "control {c}"
            );
            // Its text in the input is ordinary text.
            let piece = TABLES.piece_bytes(c).unwrap();
            let mut enc = [0u32; SHORT];
            assert!(
                !encode_into(piece, &mut enc).contains(&c),
                "control {c} matched"
            );
            n += 1;
        }
        semihosting::println!("{n} control symbols");
    }

    #[test]
    fn user_defined_symbols_are_matched_in_the_text() {
        let mut n = 0;
        for &u in TABLES.user_defined {
            let piece = TABLES.piece_bytes(u).unwrap();
            // A `tokenizer.json` may list `<unk>` among its added tokens: matched too.
            let unk = u == TABLES.unk_id && TABLES.kind(u) == Some(PieceKind::Unknown);
            assert!(unk || TABLES.kind(u) == Some(PieceKind::UserDefined));
            let mut text = [0u8; 160];
            let len = piece.len() + 8;
            text[..4].copy_from_slice(b"say ");
            text[4..4 + piece.len()].copy_from_slice(piece);
            text[4 + piece.len()..len].copy_from_slice(b" now");
            let mut ids = [0u32; SHORT];
            let ids = encode_into(&text[..len], &mut ids);
            assert!(ids.contains(&u), "user-defined {u} not matched: {ids:?}");
            let mut out = [0u8; 256];
            let decoded = decode_into(ids, &mut out);
            if TABLES.remove_extra_whitespaces && TABLES.sections != Sections::Inline {
                // `tokenizers`' `Strip` (T5 files) drops the space that ends "say ".
                assert!(decoded[..3] == text[..3] && decoded[3..] == text[4..len]);
            } else {
                assert!(decoded == &text[..len]);
            }
            n += 1;
        }
        semihosting::println!("{n} user-defined symbols");
    }

    #[test]
    fn stack_bound_encode() {
        let ids = work();
        let tok = tokenizer();
        let word = [b'q'; 200];
        let inputs: [&[u8]; 4] = [texts::BENCH, texts::DEMO.as_bytes(), &[b'x'; 64], &word];
        let mut peak = 0;
        for text in inputs {
            let (r, used) = stack::measure(|| tok.encode(text, ids));
            assert!(r.is_ok());
            peak = peak.max(used);
        }
        // A Unicode normalizer adds its window of normalized text.
        let bound = ENCODE_STACK_BOUND
            + if TABLES.normalizer.is_some() {
                picobpe::normalizer::NORMALIZE_WINDOW
            } else {
                0
            };
        semihosting::println!("encode peak stack: {peak} B (bound {bound} B)");
        assert!(peak <= bound, "encode used {peak} B of stack");
        assert!(peak >= 64, "implausible stack figure {peak}");
    }

    #[test]
    fn stack_bound_decode() {
        let work = work();
        let ids = encode_into(texts::BENCH, &mut work[..]);
        let out = text_buf();
        let tok = tokenizer();
        let (r, used) = stack::measure(|| tok.decode(ids, out));
        assert!(r.is_ok());
        semihosting::println!("decode peak stack: {used} B (bound {DECODE_STACK_BOUND} B)");
        assert!(used <= DECODE_STACK_BOUND, "decode used {used} B of stack");
    }

    #[test]
    fn tables_live_in_flash() {
        let b = picobpe_firmware::tables::table_bytes(&TABLES);
        assert_eq!(b.outside_flash, 0);
        assert!(b.total() > b.token_bytes && b.token_bytes > 256);
    }

    /// The published Mistral 7B v0.1 tokenizer: its layout as sentencepiece reports it.
    #[test]
    #[cfg(picobpe_mistral)]
    fn mistral_pieces() {
        assert_eq!(TABLES.n_ids(), 32_000);
        assert_eq!(TABLES.unk_id, 0);
        assert_eq!(TABLES.kind(0), Some(PieceKind::Unknown));
        for (id, piece) in [(1u32, &b"<s>"[..]), (2, &b"</s>"[..])] {
            assert_eq!(TABLES.kind(id), Some(PieceKind::Control));
            assert!(TABLES.piece_bytes(id) == Some(piece));
        }
        assert!(TABLES.byte_fallback());
        assert_eq!((TABLES.byte_ids[0], TABLES.byte_ids[255]), (3, 258));
        assert_eq!(ids_of_kind(PieceKind::Normal).count(), 31_741);
        assert!(TABLES.user_defined.is_empty());
        assert!(TABLES.add_dummy_prefix && !TABLES.remove_extra_whitespaces);
    }

    /// sentencepiece's ids for the reference vectors' sanity string with the Mistral model
    /// (record `fixtures/sanity` of `tests/fixtures/sentencepiece/vectors/mistral-v1/`).
    #[test]
    #[cfg(picobpe_mistral)]
    fn mistral_sanity_string() {
        let text = "Hello, 🌍! 你好!";
        let expected = [
            22557u32, 28725, 28705, 31057, 28808, 28705, 29383, 29530, 28808,
        ];
        let mut ids = [0u32; SHORT];
        let ids = encode_into(text.as_bytes(), &mut ids);
        assert!(ids == expected, "got {ids:?}");
        let mut out = [0u8; 64];
        assert!(decode_into(ids, &mut out) == text.as_bytes());
    }

    /// The ug8000 Unigram model: its layout as sentencepiece reports it (T5's ids: `<pad>` 0,
    /// `</s>` 1, `<unk>` 2; no byte fallback) and the unknown score of
    /// `tests/fixtures/unigram/PROVENANCE.md` (lowest normal score − 10, in `f32`).
    #[test]
    #[cfg(picobpe_ug8000)]
    fn ug8000_pieces() {
        use picobpe::sentencepiece::SpAlgorithm;
        assert_eq!(TABLES.n_ids(), 8_000);
        assert!(tokenizer().is_unigram());
        for (id, piece) in [(0u32, &b"<pad>"[..]), (1, &b"</s>"[..])] {
            assert_eq!(TABLES.kind(id), Some(PieceKind::Control));
            assert!(TABLES.piece_bytes(id) == Some(piece));
        }
        assert_eq!(
            (TABLES.unk_id, TABLES.kind(2)),
            (2, Some(PieceKind::Unknown))
        );
        assert!(TABLES.piece_bytes(3) == Some("\u{2581}".as_bytes()));
        assert!(!TABLES.byte_fallback() && TABLES.user_defined.is_empty());
        assert_eq!(ids_of_kind(PieceKind::Normal).count(), 7_997);
        assert!(TABLES.add_dummy_prefix && TABLES.remove_extra_whitespaces);
        match TABLES.algorithm {
            SpAlgorithm::Unigram { unk_score, .. } => {
                // -25.91412353515625 = f32(-15.914122581481934 - 10), the lowest normal score
                // (`ê`, bits c17ea03f) minus 10, as sentencepiece computes it in `f32`.
                #[allow(clippy::unnecessary_cast)]
                let unk = unk_score as f32;
                assert_eq!(unk.to_bits(), 0xc1cf_5020)
            }
            SpAlgorithm::Bpe => panic!("ug8000 baked as BPE"),
        }
    }

    /// sentencepiece 0.2.3's ids for texts that show the Unigram rules (written out from
    /// `EncodeAsIds` with `ug8000.model`): a run of unknown characters is one `<unk>`, broken by
    /// `▁`; exact score ties go to the segmentation whose last piece starts first; extra
    /// whitespace is collapsed; and the sanity string of the reference vectors.
    #[test]
    #[cfg(picobpe_ug8000)]
    fn ug8000_ids() {
        let cases: [(&str, &[u32], &str); 7] = [
            ("😀😁", &[3, 2], " ⁇ "),
            ("😀 😁", &[3, 2, 3, 2], " ⁇   ⁇ "),
            ("a\n\nb", &[11, 2, 77], "a ⁇ b"),
            ("222", &[716, 1130], "222"),
            ("bbb", &[162, 2715], "bbb"),
            ("  Hello   world  ", &[433, 98, 653, 1311], "Hello world"),
            (
                "Hello, 🌍! 你好!",
                &[433, 98, 653, 4, 3, 2, 67, 3, 212, 452, 67],
                "Hello,  ⁇ ! 你好!",
            ),
        ];
        for (text, expected, decoded) in cases {
            let mut ids = [0u32; SHORT];
            let ids = encode_into(text.as_bytes(), &mut ids);
            assert!(ids == expected, "{text:?} -> {ids:?}");
            let mut out = [0u8; 64];
            assert!(
                decode_into(ids, &mut out) == decoded.as_bytes(),
                "{text:?} decoded"
            );
        }
    }

    #[cfg(picobpe_vectors)]
    use crate::vectors::{copy_ids, Miss};

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_ids() {
        let work = work();
        vectors::check(|r| {
            let n = tokenizer()
                .encode(r.text, &mut work[..])
                .map_err(|_| Miss::Other("encode failed"))?;
            r.all()
                .first_difference(&work[..n])
                .map_or(Ok(()), |i| Err(i.into()))
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_count() {
        let work = work();
        vectors::check(
            |r| match tokenizer().count(r.text, &mut work[..], Specials::All) {
                Ok(n) if n == r.all().len() => Ok(()),
                Ok(_) => Err(Miss::Other(
                    "count differs from the number of reference ids",
                )),
                Err(_) => Err(Miss::Other("count failed")),
            },
        );
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_resumed_through_three_id_buffers() {
        let work = work();
        vectors::check(|r| {
            encode_resumed(r.text, 3, &mut work[..], &mut r.all().iter()).map_err(Miss::At)
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_cursor_resumed_through_three_id_buffers() {
        let work = work();
        vectors::check(|r| {
            encode_cursor_resumed(r.text, 3, &mut work[..], &mut r.all().iter()).map_err(Miss::At)
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_streamed_in_small_chunks() {
        /// What a [`Stream`] reports for a word longer than its buffers.
        fn word_too_long(e: StreamError) -> bool {
            match e {
                StreamError::PieceTooLong { needed, .. } => needed > STREAM_OUT,
                StreamError::InputTooSmall { capacity } => capacity == STREAM_IN,
                StreamError::Finished => false,
            }
        }
        let free = stack::free();
        let (mut streamed, mut stopped) = (0usize, 0usize);
        let ((), used) = stack::measure(|| {
            vectors::check(
                |r| match encode_streamed(r.text, 5, 3, &mut r.all().iter()) {
                    Ok(()) => {
                        streamed += 1;
                        Ok(())
                    }
                    Err(StreamMiss::At(i)) => Err(Miss::At(i)),
                    // A word longer than the stream's buffers: the documented error, after ids
                    // that matched.
                    Err(StreamMiss::Failed(e)) if word_too_long(e) => {
                        semihosting::println!("{}: stopped: {e}", r.name);
                        stopped += 1;
                        Ok(())
                    }
                    Err(StreamMiss::Failed(e)) => {
                        semihosting::println!("{}: {e}", r.name);
                        Err(Miss::Other("stream encode failed"))
                    }
                },
            )
        });
        semihosting::println!(
            "{streamed} streamed whole, {stopped} stopped at a word longer than the stream's \
             {STREAM_IN} B / {STREAM_OUT} ids; peak stack {used} B of {free} B"
        );
        assert!(
            used + 1024 <= free,
            "less than 1 KiB of stack left: overflowed?"
        );
        assert!(streamed >= 10 * stopped, "{stopped} records stopped");
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_stream_decode_to_the_reference_text() {
        vectors::check(|r| {
            let expected = r.decoded().ok_or(Miss::Other("no decoded text"))?;
            decode_streamed(r.all().iter(), 4, expected)
                .map_err(|_| Miss::Other("streamed decode differs from sentencepiece's DecodeIds"))
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_decode_to_the_reference_text() {
        let work = work();
        let out = text_buf();
        vectors::check(|r| {
            let ids = copy_ids(r, &mut work[..])?;
            let n = tokenizer()
                .decode(ids, &mut out[..])
                .map_err(|_| Miss::Other("decode failed"))?;
            if Some(&out[..n]) == r.decoded() {
                Ok(())
            } else {
                Err(Miss::Other(
                    "decoded text differs from sentencepiece's DecodeIds",
                ))
            }
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_decode_resumed_through_16_byte_buffers() {
        let work = work();
        vectors::check(|r| {
            let ids = copy_ids(r, &mut work[..])?;
            // 16 bytes: `decode_from` reads the ids before `from` again (they decide whether a
            // leading `▁` is dropped), so tiny buffers over the 14,000-id records take long.
            let expected = r.decoded().ok_or(Miss::Other("no decoded text"))?;
            decode_resumed(ids, 16, expected)
                .map_err(|_| Miss::Other("resumed decode differs from sentencepiece's DecodeIds"))
        });
    }
}

/// Conformance vectors (builds given `PICOBPE_VECTORS`, format `PBVEC2`).
#[cfg(picobpe_vectors)]
mod vectors {
    use super::*;
    use picobpe_firmware::vectors::{records, Record, VECTORS};

    /// Model and reference of the embedded vectors, e.g. `mistral-v1/sentencepiece`.
    const REFERENCE: &str = env!("PICOBPE_VECTORS_REF");

    /// How a record failed: the first differing id (or byte) index, or another problem.
    pub enum Miss {
        /// Ids differ from the reference's from this index on.
        At(usize),
        /// Something else went wrong (described).
        Other(&'static str),
    }

    impl From<usize> for Miss {
        fn from(i: usize) -> Self {
            Miss::At(i)
        }
    }

    /// The record's reference ids, copied into `buf` (they are stored unaligned).
    pub fn copy_ids<'a>(r: &Record<'_>, buf: &'a mut [u32]) -> Result<&'a [u32], Miss> {
        let ids = buf
            .get_mut(..r.all().len())
            .ok_or(Miss::Other("more reference ids than the buffer holds"))?;
        for (slot, id) in ids.iter_mut().zip(r.all().iter()) {
            *slot = id;
        }
        Ok(ids)
    }

    /// Runs `f` on every record. Panics with the record's name on the first failure, if the
    /// vector file is malformed or nearly empty, or if its records were selected for other
    /// buffer sizes than this build's.
    pub fn check(mut f: impl FnMut(&Record<'_>) -> Result<(), Miss>) {
        let mut rs = records(VECTORS).expect("vector file has a bad magic");
        assert!(
            rs.limits() == Some((WORK_IDS as u32, DECODE_BYTES as u32)),
            "vectors selected for buffers {:?}, this build has ({WORK_IDS}, {DECODE_BYTES})",
            rs.limits()
        );
        let total = rs.remaining();
        assert!(total >= 50, "only {total} vectors embedded");
        let mut n = 0;
        for r in rs.by_ref() {
            match f(&r) {
                Ok(()) => {}
                Err(Miss::At(i)) => {
                    panic!("vector {}: differs from {REFERENCE} at index {i}", r.name)
                }
                Err(Miss::Other(why)) => panic!("vector {}: {why}", r.name),
            }
            n += 1;
        }
        assert!(
            !rs.malformed && n == total,
            "vector file malformed after {n} of {total} records"
        );
        semihosting::println!("{n} vectors match ({REFERENCE})");
    }
}
