//! Decode arbitrary ids with every committed vocabulary.
//!
//! Input: `[vocab selector][flags][seed: u16 LE][ids: u32 LE...]`; flags bit 0 folds each id into
//! `0..n_ids + 8` (mostly valid ids), bits 1–2 pick the streaming decoder's capacity.
//!
//! Checks: `decoded_len` and `decode` agree with the reference (the rank file's bytes), including
//! the position, id and byte count of the first unknown id; decoding through small buffers and
//! streaming decode give the same bytes; the streaming decoder never splits a well-formed UTF-8
//! character across two `take` calls, and refuses a push only when the token cannot fit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::{DecodeError, StreamDecoder, Tokenizer};
use picobpe_fuzz::{escape, vocab, Params};
use picobpe_tests::check::{self, Rng};

fuzz_target!(
    init: picobpe_fuzz::load_all_vocabs(),
    |data: &[u8]| {
    let mut p = Params::new(data);
    let v = vocab(p.below(3));
    let flags = p.byte();
    let seed = p.u16();
    let n_ids = v.tables.n_ids() as u32;
    let ids: Vec<u32> = p
        .rest()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .map(|id| if flags & 1 == 1 { id % (n_ids + 8) } else { id })
        .collect();
    let tok = Tokenizer::new(v.tables);
    let mut rng = Rng::new("fuzz-decode", u64::from(seed));
    let name = v.encoding.name();

    let expected = v.ref_decode(&ids);
    match (&expected, tok.decoded_len(&ids)) {
        (Ok(bytes), Ok(n)) => assert_eq!(n, bytes.len(), "{name}: decoded_len"),
        (
            Err((position, id, _)),
            Err(DecodeError::UnknownId {
                position: p2,
                id: i2,
                ..
            }),
        ) => {
            assert_eq!((*position, *id), (p2, i2), "{name}: decoded_len error")
        }
        (want, got) => panic!("{name}: decoded_len {got:?}, reference {want:?}"),
    }
    let mut out = vec![0u8; expected.as_ref().map_or(1 << 16, Vec::len)];
    match (&expected, tok.decode(&ids, &mut out)) {
        (Ok(bytes), Ok(n)) => assert!(&out[..n] == bytes, "{name}: decode differs"),
        (
            Err((position, id, before)),
            Err(DecodeError::UnknownId {
                position: p2,
                id: i2,
                written,
            }),
        ) => {
            assert_eq!(
                (*position, *id, *before),
                (p2, i2, written),
                "{name}: decode error"
            );
        }
        // The reference's prefix may exceed the 64 KiB buffer before the unknown id.
        (Err((_, _, before)), Err(DecodeError::OutputFull { .. })) if *before > out.len() => {}
        (want, got) => panic!("{name}: decode {got:?}, reference {want:?}"),
    }
    let Ok(bytes) = expected else {
        stream_unknown(&tok, &ids);
        return;
    };

    let resumed = check::decode_resumed(&tok, &ids, &mut rng)
        .unwrap_or_else(|e| panic!("{name}: resumed decode: {e}"));
    assert!(resumed == bytes, "{name}: resumed decode differs");

    let streamed = match (flags >> 1) & 3 {
        0 => stream::<4>(&tok, &ids, &mut rng),
        1 => stream::<16>(&tok, &ids, &mut rng),
        2 => stream::<64>(&tok, &ids, &mut rng),
        _ => stream::<256>(&tok, &ids, &mut rng),
    };
    if let Some(streamed) = streamed {
        assert!(
            streamed == bytes,
            "{name}: streaming decode differs: \"{}\" vs \"{}\"",
            escape(&streamed),
            escape(&bytes)
        );
    }
});

/// Push every id, taking bytes into random buffers of 4..=31 bytes. Returns `None` when a token
/// cannot fit the `N`-byte buffer (checked to be justified), else everything taken. Every chunk
/// boundary must fall outside the well-formed UTF-8 characters of the whole output.
fn stream<const N: usize>(tok: &Tokenizer<'_>, ids: &[u32], rng: &mut Rng) -> Option<Vec<u8>> {
    let mut dec: StreamDecoder<Tokenizer<'_>, N> = StreamDecoder::new(*tok);
    let mut got = Vec::new();
    let mut cuts = Vec::new();
    let mut take = |dec: &mut StreamDecoder<Tokenizer<'_>, N>, rng: &mut Rng, got: &mut Vec<u8>| loop {
        let mut buf = vec![0u8; rng.range(4, 32)];
        let n = dec.take(&mut buf);
        if n == 0 {
            return;
        }
        got.extend_from_slice(&buf[..n]);
        cuts.push(got.len());
    };
    for &id in ids {
        if dec.push(id).is_err() {
            take(&mut dec, rng, &mut got);
            if let Err(e) = dec.push(id) {
                let len = tok.token_bytes(id).map_or(0, <[u8]>::len);
                // At most 3 bytes of an incomplete character may stay pending.
                assert!(
                    len + 3 > N,
                    "StreamDecoder<{N}> refused a {len}-byte token after take: {e:?}"
                );
                return None;
            }
        }
        if rng.one_in(3) {
            take(&mut dec, rng, &mut got);
        }
    }
    dec.finish();
    take(&mut dec, rng, &mut got);
    // No cut inside a well-formed character of the final output.
    let mut inside = vec![false; got.len() + 1];
    let mut at = 0;
    for chunk in got.utf8_chunks() {
        for c in chunk.valid().chars() {
            for k in 1..c.len_utf8() {
                inside[at + k] = true;
            }
            at += c.len_utf8();
        }
        at += chunk.invalid().len();
    }
    for &cut in &cuts {
        assert!(
            !inside[cut],
            "StreamDecoder<{N}> split a character at byte {cut}"
        );
    }
    Some(got)
}

/// With an unknown id in the input, the streaming decoder reports it at its position.
fn stream_unknown(tok: &Tokenizer<'_>, ids: &[u32]) {
    let mut dec: StreamDecoder<Tokenizer<'_>, 256> = StreamDecoder::new(*tok);
    let mut buf = [0u8; 64];
    for (i, &id) in ids.iter().enumerate() {
        let mut result = dec.push(id);
        if let Err(DecodeError::OutputFull { .. }) = result {
            while dec.take(&mut buf) > 0 {}
            result = dec.push(id);
        }
        match result {
            Ok(()) => assert!(tok.token_bytes(id).is_some(), "pushed unknown id {id}"),
            Err(DecodeError::UnknownId {
                position, id: got, ..
            }) => {
                assert_eq!((position, got), (i, id), "stream unknown id");
                assert!(tok.token_bytes(id).is_none());
                return;
            }
            Err(e) => panic!("stream push {id}: {e:?}"),
        }
    }
    panic!("no unknown id reported");
}
