//! Hostile inputs to the CLI (fast ones; the large ones are in `hostile_big.rs`).
//!
//! Model files whose *content* is wrong behind a correct header and checksum (the payload is
//! written here by hand in postcard's format, so even values that `Model` cannot hold — an id
//! beyond `u32` — can be expressed), hostile rank files for `import`, and hostile text and ids
//! for `encode` / `decode`. Every failure must exit non-zero, write nothing to stdout and name
//! the file and the precise reason; every accepted input must round-trip. The table of these
//! cases and what the tool does is in `docs/hostile-inputs.md`.

mod cli_common;

use std::path::{Path, PathBuf};

use cli_common::{fails, gpt2_tiktoken, ok, scratch};
use picobpe_tests::reference::crc32;

/// postcard's unsigned varint (LEB128).
fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A model payload in postcard's encoding of `picobpe_model::Model` (field order: pattern,
/// tokens, merges, specials, whole_piece), with ids as raw `u64` so they may exceed `u32`.
struct Payload {
    tokens: Vec<Vec<u8>>,
    merges: Vec<(u64, u64)>,
    specials: Vec<(String, u64)>,
}

impl Payload {
    /// The 256 byte tokens, `extra` tokens after them, no merges or specials.
    fn bytes_and(extra: &[&[u8]]) -> Payload {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.extend(extra.iter().map(|t| t.to_vec()));
        Payload {
            tokens,
            merges: Vec::new(),
            specials: Vec::new(),
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut p = Vec::new();
        varint(&mut p, 0); // PatternKind::Gpt2
        varint(&mut p, self.tokens.len() as u64);
        for t in &self.tokens {
            varint(&mut p, t.len() as u64);
            p.extend_from_slice(t);
        }
        varint(&mut p, self.merges.len() as u64);
        for &(l, r) in &self.merges {
            varint(&mut p, l);
            varint(&mut p, r);
        }
        varint(&mut p, self.specials.len() as u64);
        for (text, id) in &self.specials {
            varint(&mut p, text.len() as u64);
            p.extend_from_slice(text.as_bytes());
            varint(&mut p, *id);
        }
        p.push(1); // whole_piece
        p
    }
}

/// A model file: correct magic, version 1, length and CRC around `payload`.
fn model_file(name: &str, payload: &[u8]) -> PathBuf {
    let mut file = b"PICOBPE\0".to_vec();
    file.extend_from_slice(&1u16.to_le_bytes());
    file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    file.extend_from_slice(&crc32(payload).to_le_bytes());
    file.extend_from_slice(payload);
    let path = scratch().join(format!("hostile-{name}.model"));
    std::fs::write(&path, file).unwrap();
    path
}

/// Every command that loads a model must refuse `path` with `reason` and the path.
fn refused_everywhere(path: &Path, reason: &str) {
    let p = path.to_str().unwrap();
    for command in ["inspect", "encode", "decode"] {
        let err = fails(&[command, "--model", p], b"1 2 3");
        assert!(
            err.contains(reason),
            "{command}: expected {reason:?} in {err}"
        );
        assert!(err.contains(p), "{command}: path missing in {err}");
    }
}

#[test]
fn well_formed_payload_is_accepted() {
    // The hand-made encoding itself is right: a valid payload loads and encodes.
    let mut m = Payload::bytes_and(&[b"ab"]);
    m.merges.push((97, 98));
    m.tokens.push(b"<|end|>".to_vec());
    m.specials.push(("<|end|>".into(), 257));
    let path = model_file("valid", &m.encode());
    let p = path.to_str().unwrap();
    assert_eq!(
        ok(&["encode", "--model", p], b"ab<|end|>a"),
        b"256 257 97\n"
    );
}

#[test]
fn model_content_faults_are_named() {
    // Duplicate tokens.
    let mut m = Payload::bytes_and(&[b"ab", b"ab"]);
    m.merges.push((97, 98));
    refused_everywhere(
        &model_file("duplicate", &m.encode()),
        "invalid model: ids 256 and 257 have the same bytes",
    );

    // A merge that references an id no token has.
    let mut m = Payload::bytes_and(&[b"ab"]);
    m.merges.push((97, 4_000_000_000));
    refused_everywhere(
        &model_file("merge-unknown", &m.encode()),
        "merge #0 references id 4000000000, which is not an ordinary token",
    );

    // A special token spelled like an ordinary token.
    let mut m = Payload::bytes_and(&[b"ab", b"ab"]);
    m.merges.push((97, 98));
    m.specials.push(("ab".into(), 257));
    refused_everywhere(
        &model_file("special-collides", &m.encode()),
        "special token \"ab\" has the same bytes as ordinary token 256",
    );

    // A special id past the last id.
    let mut m = Payload::bytes_and(&[]);
    m.specials.push(("<|x|>".into(), u64::from(u32::MAX)));
    refused_everywhere(
        &model_file("special-out-of-range", &m.encode()),
        "special token \"<|x|>\" has id 4294967295, but the model has only 256 ids",
    );

    // A byte without its token.
    let mut m = Payload::bytes_and(&[]);
    m.tokens[0x41] = b"AA".to_vec();
    refused_everywhere(
        &model_file("missing-byte", &m.encode()),
        "byte 0x41 has no single-byte ordinary token",
    );
}

#[test]
fn ids_beyond_u32_and_huge_lengths_do_not_decode() {
    // A merge id of 2^32 cannot be a u32.
    let mut m = Payload::bytes_and(&[b"ab"]);
    m.merges.push((97, 1 << 32));
    refused_everywhere(
        &model_file("id-2pow32", &m.encode()),
        "model payload does not decode",
    );
    // `tokens` claims 2^62 entries with nothing behind them: an error, at once, no allocation.
    let mut payload = vec![0u8];
    varint(&mut payload, 1 << 62);
    let started = std::time::Instant::now();
    refused_everywhere(
        &model_file("huge-length", &payload),
        "model payload does not decode",
    );
    assert!(
        started.elapsed().as_secs() < 30,
        "took {:?}",
        started.elapsed()
    );
}

/// `import --tiktoken` of a rank file written from `lines`.
fn import_rank_file(name: &str, lines: &str, extra: &[&str]) -> String {
    let rank = scratch().join(format!("hostile-{name}.tiktoken"));
    std::fs::write(&rank, lines).unwrap();
    let out = scratch().join(format!("hostile-{name}-out.model"));
    let mut args = vec![
        "import",
        "--tiktoken",
        rank.to_str().unwrap(),
        "--pattern",
        "gpt2",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let err = fails(&args, b"");
    assert!(!out.exists(), "{name}: output written despite the error");
    assert!(err.contains(rank.to_str().unwrap()), "{name}: {err}");
    err
}

/// The 256 single-byte lines of a rank file (`base64 rank`).
fn byte_lines() -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..=255u8)
        .map(|b| {
            let (c0, c1) = (B64[usize::from(b >> 2)], B64[usize::from((b & 3) << 4)]);
            format!("{}{}== {b}\n", c0 as char, c1 as char)
        })
        .collect()
}

#[test]
fn hostile_rank_files_are_refused() {
    let err = import_rank_file("rank-2pow32", "IQ== 4294967296\n", &[]);
    assert!(
        err.contains("line 1: rank is not an integer below 2^32 - 1"),
        "{err}"
    );

    let sparse = format!("{}YWI= 4000000000\n", byte_lines());
    let err = import_rank_file("sparse", &sparse, &[]);
    assert!(
        err.contains("ids reach 4000000000 but only 257 tokens are given"),
        "{err}"
    );

    let duplicate = format!("{}YWI= 256\nYWI= 257\n", byte_lines());
    let err = import_rank_file("duplicate-bytes", &duplicate, &[]);
    assert!(err.contains("ids 256 and 257 have the same bytes"), "{err}");

    let missing: String = byte_lines()
        .lines()
        .take(200)
        .map(|l| format!("{l}\n"))
        .collect();
    let err = import_rank_file("missing-bytes", &missing, &[]);
    assert!(
        err.contains("byte 0xC8 has no single-byte ordinary token"),
        "{err}"
    );

    let err = import_rank_file(
        "special-far",
        &byte_lines(),
        &["--special", "<|endoftext|>=4294967295"],
    );
    assert!(err.contains("ids reach 4294967295"), "{err}");
}

#[test]
fn nul_bytes_invalid_utf8_and_only_specials_round_trip() {
    let m = gpt2_tiktoken();
    // Documented rule: bytes outside well-formed UTF-8 are "other" characters; NUL is an
    // ordinary control character. Both encode and decode back byte for byte.
    for text in [
        &b"a\0b\0\0 \0"[..],
        b"\xff\xfe\xfd",
        b"\xc3\x28 \xe2\x82 \xf0\x9f\x98",
        b"\xed\xa0\x80 surrogate",
        b"<|endoftext|><|endoftext|>",
    ] {
        let ids = ok(&["encode", "--model", m], text);
        assert_eq!(ok(&["decode", "--model", m], &ids), text, "{text:?}");
        let ids = ok(&["encode", "--model", m, "--ordinary"], text);
        assert_eq!(ok(&["decode", "--model", m], &ids), text, "{text:?}");
    }
    // Only special tokens: recognised (one id each) unless --ordinary.
    assert_eq!(
        ok(&["encode", "--model", m], b"<|endoftext|><|endoftext|>"),
        b"50256 50256\n"
    );
}

#[test]
fn hostile_id_lists_are_refused_at_their_position() {
    let m = gpt2_tiktoken();
    for (input, reason) in [
        (
            &b"1 2 99999999999999999999999"[..],
            "invalid id \"99999999999999999999999\" at position 2",
        ),
        (b"+5", "invalid id \"+5\" at position 0"),
        (b"0x10", "invalid id \"0x10\" at position 0"),
        (b"1e3", "invalid id \"1e3\" at position 0"),
        (b"12,13", "invalid id \"12,13\" at position 0"),
        (b"7 \0 8", "invalid id \"\\0\" at position 1"),
        (b"50257", "unknown token id 50257 at position 0"),
        (b"4294967295", "unknown token id 4294967295 at position 0"),
    ] {
        let err = fails(&["decode", "--model", m], input);
        assert!(err.contains(reason), "{input:?}: {err}");
    }
    // Leading zeros are still decimal integers.
    assert_eq!(ok(&["decode", "--model", m], b"0072 0"), b"i!");
}
