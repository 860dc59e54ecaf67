//! Encode arbitrary bytes with every committed vocabulary, with and without special tokens.
//!
//! Input: `[vocab selector][flags][seed: u16 LE][text...]`; flags bit 0 = recognize specials,
//! bits 1–2 = streaming capacities, bit 7 = resumed encode through the cache.
//!
//! Checks (any failure aborts with the input):
//! 1. one-shot `encode` succeeds with a `scratch_needed` buffer and equals the reference
//!    (fancy-regex pre-tokenizer + naive byte-keyed BPE, see `picobpe_fuzz`); `encode_cached`
//!    through a 5-line cache, twice (the second time with hits), gives the same ids;
//! 2. `count` equals the number of ids; `decode(encode(x)) == x`; `decoded_len` agrees;
//! 3. encoding through small, randomly sized output buffers (resuming on `OutputFull`,
//!    growing on `PieceTooLong`), with or without the warm cache, gives the same ids;
//! 4. streaming (`StreamEncoder`, random chunks and `take` sizes) gives the same ids, or fails
//!    only with a capacity error that the input justifies (see `stream`);
//! 5. streaming decode of the ids gives the text back (whole characters only for UTF-8 text).
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::{Specials, StreamEncoder, StreamError, Tokenizer};
use picobpe_fuzz::{escape, vocab, Params, Vocab};
use picobpe_tests::check::{self, Rng};

fuzz_target!(
    init: picobpe_fuzz::load_all_vocabs(),
    |data: &[u8]| {
    let mut p = Params::new(data);
    let v = vocab(p.below(3));
    let flags = p.byte();
    let seed = p.u16();
    let text = p.rest();
    let with_specials = flags & 1 == 1;
    let specials = if with_specials {
        Specials::All
    } else {
        Specials::None
    };
    let tok = Tokenizer::new(v.tables);
    let mut rng = Rng::new("fuzz", u64::from(seed));
    let name = v.encoding.name();
    let show = || format!("{name} {specials:?} \"{}\"", escape(text));

    // 1. One-shot, against the reference.
    let ids = check::encode(&tok, text, specials)
        .unwrap_or_else(|e| panic!("encode failed: {e:?} on {}", show()));
    let mut cache = [picobpe::CacheEntry::EMPTY; 5];
    for _ in 0..2 {
        let cached = check::encode_cached(&tok, text, specials, &mut cache)
            .unwrap_or_else(|e| panic!("encode_cached failed: {e:?} on {}", show()));
        assert!(cached == ids, "encode_cached != encode: {}", show());
    }
    if let Some(expected) = v.ref_encode(text, with_specials) {
        assert!(
            ids == expected,
            "{}",
            check::mismatch(
                &tok,
                &format!("encode != reference: {}", show()),
                text,
                &expected,
                &ids
            )
        );
    }

    // 2. count, decode, decoded_len.
    assert_eq!(
        check::count(&tok, text, specials),
        Ok(ids.len()),
        "count: {}",
        show()
    );
    assert_eq!(
        tok.decoded_len(&ids),
        Ok(text.len()),
        "decoded_len: {}",
        show()
    );
    let back = check::decode(&tok, &ids).unwrap_or_else(|e| panic!("decode: {e:?}: {}", show()));
    assert!(back == text, "decode(encode(x)) != x: {}", show());

    // 3. Small output buffers, through the warm cache when the flags' top bit says so.
    let resume_cache: &mut [picobpe::CacheEntry] = if flags & 0x80 != 0 {
        &mut cache
    } else {
        &mut []
    };
    let resumed = check::encode_resumed(&tok, text, specials, &mut rng, resume_cache)
        .unwrap_or_else(|e| panic!("resumed encode: {e}: {}", show()));
    assert!(resumed == ids, "resumed encode differs: {}", show());

    // 4. Streaming, at one of four capacity pairs.
    match (flags >> 1) & 3 {
        0 => stream::<16, 8>(v, &tok, text, specials, &ids, &mut rng),
        1 => stream::<64, 64>(v, &tok, text, specials, &ids, &mut rng),
        2 => stream::<256, 512>(v, &tok, text, specials, &ids, &mut rng),
        _ => stream::<8192, 16384>(v, &tok, text, specials, &ids, &mut rng),
    }

    // 5. Streaming decode.
    let whole_chars = std::str::from_utf8(text).is_ok();
    let streamed = check::decode_streamed(tok, &ids, &mut rng, whole_chars)
        .unwrap_or_else(|e| panic!("streaming decode: {e}: {}", show()));
    assert!(streamed == text, "streaming decode != text: {}", show());
});

/// Stream `text` through a `StreamEncoder<IN, OUT>`; the ids must equal `ids`, or the error must
/// be a capacity the input really exceeds: `InputTooSmall` only when the longest piece or
/// whitespace run (a whitespace piece is decided where its run ends), plus the longest special
/// token, plus two characters of look-ahead does not fit `IN`; `PieceTooLong` only when the
/// piece needs more than `OUT` ids of work area.
fn stream<const IN: usize, const OUT: usize>(
    v: &Vocab,
    tok: &Tokenizer<'_>,
    text: &[u8],
    specials: Specials,
    ids: &[u32],
    rng: &mut Rng,
) {
    let mut enc: StreamEncoder<Tokenizer<'_>, IN, OUT> = StreamEncoder::new(*tok, specials);
    let with_specials = specials == Specials::All;
    match check::encode_streamed(&mut enc, text, rng) {
        Ok(got) => assert!(
            got == ids,
            "stream <{IN}, {OUT}> differs from one-shot on \"{}\"",
            escape(text)
        ),
        Err(StreamError::InputTooSmall { capacity }) => {
            assert_eq!(capacity, IN);
            let piece = v.longest_piece(text, with_specials);
            let run = v.longest_whitespace_run(text, with_specials);
            if let (Some(piece), Some(run)) = (piece, run) {
                let special = if with_specials {
                    v.max_special_len()
                } else {
                    0
                };
                assert!(
                    piece.max(run) + special + 8 > IN,
                    "stream <{IN}, {OUT}>: InputTooSmall although the longest piece is {piece} bytes and the longest whitespace run {run}: \"{}\"",
                    escape(text)
                );
            }
        }
        Err(StreamError::PieceTooLong { len, needed }) => assert!(
            needed > OUT && needed <= picobpe::bytelevel::scratch_needed(len),
            "stream <{IN}, {OUT}>: PieceTooLong {{ len: {len}, needed: {needed} }}: \"{}\"",
            escape(text)
        ),
        Err(e) => panic!("stream <{IN}, {OUT}>: {e:?} on \"{}\"", escape(text)),
    }
}
