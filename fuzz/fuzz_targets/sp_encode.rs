//! Encode and decode arbitrary bytes with every committed SentencePiece model
//! (`tests/fixtures/sentencepiece/models`: sp512, sp4096, sp32000, sp4096-unk, mistral-v1; and
//! the Unigram models of `tests/fixtures/unigram/models`: ug8000, ug4096-bytes; the models with
//! character maps of `tests/fixtures/sp_norm/models`: nfkc-bpe, nfkc-ug, nfkc-tsv,
//! nfkc-bpe-user, and the two nmt_nfkc ones again with the compact form of the map; each
//! imported from its `tokenizer.model`), against the naive references in `picobpe_fuzz::sp` (BPE
//! merging, or a Unigram Viterbi over the whole text).
//!
//! Input: `[model selector][flags][seed: u16 LE][text...]`; flags bit 0 = also decode the text's
//! bytes read as ids (pairs of bytes, some out of range), bits 1–2 = streaming capacities,
//! bit 3 = resumed encode through the warm word cache.
//!
//! Checks (any failure aborts with the input):
//! 1. one-shot `encode` succeeds with a buffer of `16 * len + 64` ids (a word's work area is
//!    10 ids per symbol plus its normalized bytes, at most 3 per input byte; 16 times more with
//!    a character map, whose rules may expand 16-fold) and equals the reference,
//!    which merges over the whole normalized text (so it also checks the core's split into
//!    words); `encode_from` with a 5-line cache, twice (the second time with hits), gives
//!    the same ids;
//! 2. `count` equals the number of ids, with a large scratch and with small random ones
//!    (growing only on `PieceTooLong`, whose `needed` must be enough);
//! 3. encoding through small, randomly sized output buffers (resuming with
//!    `encode_from(text, consumed, ..)`, with or without a cache, on `OutputFull`, growing to
//!    `needed` on `PieceTooLong`) gives the same ids;
//! 4. `StreamEncoder` with random chunks and `take` sizes gives the same ids, or fails only
//!    with a capacity error the input justifies (`InputTooSmall` only when the longest word,
//!    with the character that ends it, does not fit `IN`; with a character map, whose rules can
//!    join words and whose longest key the stream holds back, when twice that plus the key does
//!    not; `PieceTooLong` only above `OUT`);
//! 5. `decode` of the ids equals the reference `DecodeIds`, also into a buffer of exactly that
//!    length; resumed `decode_from` through small random buffers gives the same text;
//!    `StreamDecoder` (random `take` sizes) too, handing out whole characters only;
//! 6. with flags bit 0: the same for arbitrary ids, and an id out of range is
//!    `UnknownId { position, id, written }` with the reference's position and byte count.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::{CacheEntry, DecodeError, EncodeError, SpTokenizer, Specials, StreamError, Tokenize};
use picobpe::{StreamDecoder, StreamEncoder};
use picobpe_fuzz::sp::SpRef;
use picobpe_fuzz::{escape, Params};
use picobpe_tests::check::Rng;
use picobpe_tests::sp::{self, SpSource};
use std::sync::OnceLock;

/// The committed SentencePiece models, in selector order: BPE, then Unigram.
const MODELS: [&str; 13] = [
    "sp512",
    "sp4096",
    "sp32000",
    "sp4096-unk",
    "mistral-v1",
    "ug8000",
    "ug4096-bytes",
    "nfkc-bpe",
    "nfkc-ug",
    "nfkc-tsv",
    "nfkc-bpe-user",
    // The same two nmt_nfkc models with the character map in its compact form (what
    // picobpe-build bakes).
    "nfkc-bpe",
    "nfkc-bpe-user",
];

/// Where the compact entries of `MODELS` start.
const FIRST_COMPACT: usize = 11;

struct Loaded {
    tok: SpTokenizer<'static>,
    reference: SpRef,
}

fn model(i: usize) -> &'static Loaded {
    static CACHE: [OnceLock<Loaded>; MODELS.len()] = [const { OnceLock::new() }; MODELS.len()];
    CACHE[i].get_or_init(|| Loaded {
        tok: SpTokenizer::new(sp::tables(
            MODELS[i],
            if i >= FIRST_COMPACT {
                SpSource::Compact
            } else {
                SpSource::ModelProto
            },
        )),
        reference: SpRef::new(&sp::model(MODELS[i], SpSource::ModelProto)),
    })
}

fuzz_target!(
    init: for i in 0..MODELS.len() { model(i); },
    |data: &[u8]| {
    let mut p = Params::new(data);
    let which = p.below(MODELS.len());
    let flags = p.byte();
    let seed = p.u16();
    let text = p.rest();
    let name = MODELS[which];
    let m = model(which);
    let tok = m.tok;
    let mut rng = Rng::new(name, u64::from(seed));
    let show = || format!("{name} \"{}\"", escape(text));

    // 1. One-shot, against the reference.
    let expand = if tok.tables().charsmap.is_empty() { 1 } else { 16 };
    let mut out = vec![0u32; 16 * expand * text.len() + 64];
    let n = tok
        .encode(text, &mut out)
        .unwrap_or_else(|e| panic!("encode failed: {e:?} on {}", show()));
    let ids = &out[..n];
    let expected = m.reference.encode(text);
    assert!(
        ids == expected,
        "encode != reference on {}\n  want {expected:?}\n  got  {ids:?}\n  reference pieces {:?}",
        show(),
        m.reference.merged(text)
    );
    let mut cache = [CacheEntry::EMPTY; 5];
    for round in 0..2 {
        let mut again = vec![0u32; out.len()];
        let k = tok
            .encode_from(text, 0, &mut again, Specials::All, &mut cache)
            .unwrap_or_else(|e| panic!("encode_from, cached: {e:?} on {}", show()));
        assert!(again[..k] == *ids, "cached (round {round}) != encode on {}", show());
    }

    // 2. count.
    let mut scratch = vec![0u32; out.len()];
    assert_eq!(tok.count(text, &mut scratch, Specials::All), Ok(ids.len()), "count: {}", show());
    let mut scratch = vec![0u32; rng.range(1, 48)];
    loop {
        match tok.count(text, &mut scratch, Specials::All) {
            Ok(k) => {
                assert_eq!(k, ids.len(), "count (scratch {}): {}", scratch.len(), show());
                break;
            }
            Err(EncodeError::PieceTooLong { needed, .. }) => {
                assert!(needed > scratch.len(), "count: PieceTooLong needs {needed} <= {}: {}", scratch.len(), show());
                scratch = vec![0u32; needed];
            }
            Err(e) => panic!("count: {e:?} on {}", show()),
        }
    }

    // 3. Resumed encode through small buffers, through the warm cache when flags bit 3 says so.
    let cache: &mut [CacheEntry] = if flags & 8 != 0 { &mut cache } else { &mut [] };
    let resumed =
        encode_resumed(&tok, text, &mut rng, cache).unwrap_or_else(|e| panic!("{e}: {}", show()));
    assert!(resumed == ids, "resumed encode differs on {}\n  want {ids:?}\n  got  {resumed:?}", show());

    // 4. Streaming, at one of four capacity pairs.
    match (flags >> 1) & 3 {
        0 => stream::<32, 64>(tok, text, ids, &mut rng, &show),
        1 => stream::<128, 512>(tok, text, ids, &mut rng, &show),
        2 => stream::<512, 2048>(tok, text, ids, &mut rng, &show),
        _ => stream::<4096, 16384>(tok, text, ids, &mut rng, &show),
    }

    // 5. Decode.
    let want = m.reference.decode(ids).expect("encoded ids are in range");
    check_decode(m, ids, &want, &mut rng, &show);

    // 6. Arbitrary ids.
    if flags & 1 == 1 {
        let range = m.reference.n_ids() as u32 + 3;
        let any: Vec<u32> = text
            .chunks(2)
            .map(|c| u32::from(u16::from_le_bytes([c[0], *c.get(1).unwrap_or(&0)])) % range)
            .collect();
        match m.reference.decode(&any) {
            Ok(want) => check_decode(m, &any, &want, &mut rng, &show),
            Err((position, written)) => {
                let mut buf = vec![0u8; 4 * any.len() * m.reference.max_surface() + 16];
                assert_eq!(
                    tok.decode(&any, &mut buf),
                    Err(DecodeError::UnknownId { position, id: any[position], written }),
                    "decode of ids {any:?} ({name})"
                );
            }
        }
    }
});

/// One-shot decode (large and exact buffers) and resumed decode of `ids` must give `want`.
fn check_decode(m: &Loaded, ids: &[u32], want: &[u8], rng: &mut Rng, show: &dyn Fn() -> String) {
    let tok = m.tok;
    let mut buf = vec![0u8; want.len() + 64];
    let k = tok
        .decode(ids, &mut buf)
        .unwrap_or_else(|e| panic!("decode of {ids:?}: {e:?} on {}", show()));
    assert!(
        buf[..k] == *want,
        "decode != reference for {ids:?} on {}\n  want \"{}\"\n  got  \"{}\"",
        show(),
        escape(want),
        escape(&buf[..k])
    );
    let mut exact = vec![0u8; want.len()];
    assert_eq!(
        tok.decode(ids, &mut exact),
        Ok(want.len()),
        "decode into an exact buffer: {}",
        show()
    );

    let mut text = Vec::new();
    let mut from = 0;
    let mut buf = vec![0u8; rng.range(1, 24)];
    loop {
        match tok.decode_from(ids, from, &mut buf) {
            Ok(k) => {
                text.extend_from_slice(&buf[..k]);
                break;
            }
            Err(DecodeError::OutputFull { consumed, written }) => {
                assert!(
                    consumed >= from && consumed <= ids.len(),
                    "decode_from: consumed {consumed} from {from}"
                );
                text.extend_from_slice(&buf[..written]);
                if consumed == from && written == 0 {
                    // The next id's text does not fit at all: only a buffer shorter than the
                    // longest surface may say so.
                    assert!(
                        buf.len() < m.reference.max_surface(),
                        "decode_from made no progress with {} bytes at id {from}: {}",
                        buf.len(),
                        show()
                    );
                    buf = vec![0u8; 2 * buf.len()];
                    continue;
                }
                from = consumed;
                buf = vec![0u8; rng.range(1, 24)];
            }
            Err(e) => panic!("decode_from: {e:?} on {}", show()),
        }
    }
    assert!(
        text == want,
        "resumed decode differs for {ids:?} on {}\n  want \"{}\"\n  got  \"{}\"",
        show(),
        escape(want),
        escape(&text)
    );

    // Streaming: room for the longest piece (128 bytes) and a held character's U+FFFDs, or
    // more.
    if rng.one_in(2) {
        stream_decode::<140>(m, ids, want, rng, show);
    } else {
        stream_decode::<1024>(m, ids, want, rng, show);
    }
}

/// Push `ids` one by one into an `StreamDecoder<N>`, taking random amounts (at least 4
/// bytes, which guarantees progress) at random moments and when it is full: the text must
/// equal `want`, and every take must be whole characters.
fn stream_decode<const N: usize>(
    m: &Loaded,
    ids: &[u32],
    want: &[u8],
    rng: &mut Rng,
    show: &dyn Fn() -> String,
) {
    if m.reference.max_surface() + 12 > N {
        return;
    }
    let mut dec: StreamDecoder<SpTokenizer<'_>, N> = StreamDecoder::new(m.tok);
    let mut text = Vec::new();
    let mut take = |dec: &mut StreamDecoder<SpTokenizer<'_>, N>, rng: &mut Rng| {
        let mut buf = vec![0u8; rng.range(4, 64)];
        let k = dec.take(&mut buf);
        assert!(
            std::str::from_utf8(&buf[..k]).is_ok(),
            "stream decode <{N}> handed out a partial character: {:?} on {}",
            &buf[..k],
            show()
        );
        text.extend_from_slice(&buf[..k]);
        k
    };
    for (i, &id) in ids.iter().enumerate() {
        let mut stuck = 0;
        loop {
            match dec.push(id) {
                Ok(()) => break,
                Err(DecodeError::OutputFull { consumed, .. }) => {
                    assert_eq!(consumed, i, "stream decode <{N}>: position on {}", show());
                    if take(&mut dec, rng) == 0 {
                        stuck += 1;
                        assert!(
                            stuck < 2,
                            "stream decode <{N}> stuck at id {i} on {}",
                            show()
                        );
                    }
                }
                Err(e) => panic!("stream decode <{N}>: {e:?} at id {i} on {}", show()),
            }
        }
        if rng.one_in(3) {
            take(&mut dec, rng);
        }
    }
    dec.finish();
    while take(&mut dec, rng) > 0 {}
    assert!(
        text == want,
        "stream decode <{N}> differs for {ids:?} on {}\n  want \"{}\"\n  got  \"{}\"",
        show(),
        escape(want),
        escape(&text)
    );
}

/// Length in bytes of the longest word of `text` plus the character after it: a word starts at
/// the text's start and at each space or `▁` that follows another character (bytes outside
/// well-formed UTF-8 count as one character each).
fn longest_word(text: &[u8]) -> usize {
    let mut longest = 0;
    let mut start = 0;
    let mut pos = 0;
    let mut seen_other = false;
    while pos < text.len() {
        let len = match std::str::from_utf8(&text[pos..text.len().min(pos + 4)]) {
            Ok(s) => s.chars().next().map_or(1, char::len_utf8),
            Err(e) if e.valid_up_to() > 0 => std::str::from_utf8(&text[pos..pos + e.valid_up_to()])
                .ok()
                .and_then(|s| s.chars().next())
                .map_or(1, char::len_utf8),
            Err(_) => 1,
        };
        let mark = text[pos] == b' ' || text[pos..].starts_with("\u{2581}".as_bytes());
        if mark && seen_other {
            longest = longest.max(pos + len - start);
            start = pos;
            seen_other = false;
        }
        seen_other |= !mark;
        pos += len;
    }
    longest.max(text.len() - start)
}

/// Stream `text` through an `StreamEncoder<IN, OUT>` with random chunks and takes: the ids
/// must equal `ids`, or the error must be a capacity the input exceeds.
fn stream<const IN: usize, const OUT: usize>(
    tok: SpTokenizer<'_>,
    text: &[u8],
    ids: &[u32],
    rng: &mut Rng,
    show: &dyn Fn() -> String,
) {
    let mut enc: StreamEncoder<SpTokenizer<'_>, IN, OUT> = StreamEncoder::new(tok, Specials::All);
    let mut got = Vec::new();
    let result = (|| -> Result<(), StreamError> {
        let mut rest = text;
        let mut idle = 0;
        while !rest.is_empty() {
            let n = rng.range(1, 64).min(rest.len());
            let k = enc.push(&rest[..n])?;
            rest = &rest[k..];
            // A take may free input without giving ids (spaces that are dropped): stuck means
            // that pushes keep being refused while takes give nothing.
            if k > 0 {
                idle = 0;
            }
            if k == 0 || rng.one_in(2) {
                let mut buf = vec![0u32; rng.range(1, 32)];
                let t = enc.take(&mut buf)?;
                got.extend_from_slice(&buf[..t]);
                idle = if k == 0 && t == 0 { idle + 1 } else { 0 };
                assert!(
                    idle < 3,
                    "stream <{IN}, {OUT}> accepts nothing and gives nothing: {}",
                    show()
                );
            }
        }
        enc.finish();
        loop {
            let mut buf = vec![0u32; rng.range(1, 32)];
            let t = enc.take(&mut buf)?;
            got.extend_from_slice(&buf[..t]);
            if t == 0 {
                break;
            }
        }
        assert!(
            enc.is_done(),
            "stream <{IN}, {OUT}> not done after draining: {}",
            show()
        );
        Ok(())
    })();
    match result {
        Ok(()) => assert!(
            got == ids,
            "stream <{IN}, {OUT}> differs on {}\n  want {ids:?}\n  got  {got:?}",
            show()
        ),
        Err(StreamError::InputTooSmall { capacity }) => {
            assert_eq!(capacity, IN);
            let map = tok.tables().charsmap;
            let word = if map.is_empty() {
                longest_word(text)
            } else {
                2 * longest_word(text) + map.max_key as usize
            };
            assert!(
                word + 4 > IN,
                "stream <{IN}, {OUT}>: InputTooSmall although the longest word is {word} bytes: {}",
                show()
            );
        }
        Err(StreamError::PieceTooLong { needed, .. }) => assert!(
            needed > OUT,
            "stream <{IN}, {OUT}>: PieceTooLong needing {needed}: {}",
            show()
        ),
        Err(e) => panic!("stream <{IN}, {OUT}>: {e:?} on {}", show()),
    }
}

/// Encode through small random buffers, resuming on `OutputFull` and growing to `needed` on
/// `PieceTooLong` (which must then be enough).
fn encode_resumed(
    tok: &SpTokenizer<'_>,
    text: &[u8],
    rng: &mut Rng,
    cache: &mut [CacheEntry],
) -> Result<Vec<u32>, String> {
    let mut ids = Vec::new();
    let mut from = 0;
    let mut buf = vec![0u32; rng.range(1, 40)];
    loop {
        match tok.encode_from(text, from, &mut buf, Specials::All, cache) {
            Ok(n) => {
                ids.extend_from_slice(&buf[..n]);
                return Ok(ids);
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                if consumed < from || consumed > text.len() || (consumed == from && written == 0) {
                    return Err(format!(
                        "OutputFull {{ consumed: {consumed}, written: {written} }} from {from} with {} ids",
                        buf.len()
                    ));
                }
                ids.extend_from_slice(&buf[..written]);
                from = consumed;
                buf = vec![0u32; rng.range(1, 40)];
            }
            Err(EncodeError::PieceTooLong { offset, needed, .. }) => {
                // `needed` must exceed the buffer, and growing to it must be enough (a second
                // `PieceTooLong` for the same word would fail this test).
                if needed <= buf.len() || offset < from {
                    return Err(format!(
                        "PieceTooLong {{ offset: {offset}, needed: {needed} }} from {from} with {} ids",
                        buf.len()
                    ));
                }
                buf = vec![0u32; needed];
            }
        }
    }
}
