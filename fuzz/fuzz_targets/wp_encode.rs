//! WordPiece against the reference library: arbitrary bytes through picobpe's `WpTokenizer`
//! and through Hugging Face `tokenizers` (the crate itself, loading the same `tokenizer.json`)
//! for the committed WordPiece models (`tests/fixtures/wordpiece`: the published uncased
//! all-MiniLM-L6-v2, a cased 8k model, and its vocabulary with `NFD` + `Lowercase` +
//! `StripAccents` and with `NFKC` in place of `BertNormalizer`).
//!
//! Input: `[model selector][capacity][text...]`. The reference sees the text as
//! `String::from_utf8_lossy` makes it (picobpe's invalid-UTF-8 rule).
//!
//! Checks (any failure aborts with the input):
//! 1. `encode` with added tokens recognized equals `encode(text, false)`, and with them as text
//!    equals the reference with `encode_special_tokens`;
//! 2. encoding through an output buffer of 1 to 16 ids (resuming at `consumed` on
//!    `OutputFull`, growing to `needed` on `PieceTooLong`, whose `needed` must be more than the
//!    buffer) gives the same ids;
//! 3. `decode` of the ids equals the reference's `decode(ids, skip_special_tokens=true)`, and
//!    decoding through a buffer of 1 to 16 bytes (`decode` then `decode_after`) gives the same
//!    text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::{DecodeError, EncodeError, Specials, WpTokenizer};
use picobpe_fuzz::{escape, Params};
use picobpe_model::wordpiece::{import_tokenizer_json, WpTableData};
use std::sync::OnceLock;

const MODELS: [&str; 4] = ["minilm-uncased", "bert-cased-8k", "wp-nfd-lower-strip", "wp-nfkc"];

struct Loaded {
    tok: WpTokenizer<'static>,
    reference: tokenizers::Tokenizer,
    /// The same with `encode_special_tokens` (added tokens as text).
    reference_as_text: tokenizers::Tokenizer,
}

fn model(i: usize) -> &'static Loaded {
    static CACHE: [OnceLock<Loaded>; 4] = [const { OnceLock::new() }; 4];
    CACHE[i].get_or_init(|| {
        let path = picobpe_tests::paths::fixtures()
            .join("wordpiece")
            .join(MODELS[i])
            .join("tokenizer.json");
        let json = std::fs::read(&path).expect("tokenizer.json");
        let file = picobpe_model::TokenizerJson::parse(&json).expect("a tokenizer.json");
        let model = import_tokenizer_json(&file).expect("import").model;
        let mut reference = tokenizers::Tokenizer::from_bytes(&json).expect("tokenizers");
        reference.with_padding(None);
        reference.with_truncation(None).expect("no truncation");
        let mut reference_as_text = reference.clone();
        reference_as_text.set_encode_special_tokens(true);
        Loaded {
            tok: WpTokenizer::new(WpTableData::new(&model).expect("tables").to_tables()),
            reference,
            reference_as_text,
        }
    })
}

fn reference_ids(r: &tokenizers::Tokenizer, text: &str) -> Vec<u32> {
    r.encode(text, false)
        .expect("reference encode")
        .get_ids()
        .to_vec()
}

/// One-shot ids (a normalizer that expands the text may need more than a byte's worth of
/// ids for a long run without a word end: `PieceTooLong` says how many, and must fit then).
fn encode_all(tok: &WpTokenizer<'_>, text: &[u8], specials: Specials) -> Vec<u32> {
    let mut out = vec![0u32; text.len() + 8];
    let n = match tok.encode(text, &mut out, specials) {
        Ok(n) => n,
        Err(EncodeError::PieceTooLong { needed, .. }) if needed > out.len() => {
            out.resize(needed, 0);
            tok.encode(text, &mut out, specials)
                .unwrap_or_else(|e| panic!("encode {} with {needed} ids: {e}", escape(text)))
        }
        Err(e) => panic!("encode {}: {e}", escape(text)),
    };
    out.truncate(n);
    out
}

fuzz_target!(
    init: for i in 0..MODELS.len() { model(i); },
    |data: &[u8]| {
    let mut p = Params::new(data);
    let m = model(p.below(MODELS.len()));
    let cap = 1 + p.below(16);
    let text = p.rest();
    let lossy = String::from_utf8_lossy(text);

    // 1. One-shot ids against the reference, both special-token modes.
    let ids = encode_all(&m.tok, text, Specials::All);
    assert_eq!(ids, reference_ids(&m.reference, &lossy), "ids of {}", escape(text));
    let ordinary = encode_all(&m.tok, text, Specials::None);
    assert_eq!(ordinary, reference_ids(&m.reference_as_text, &lossy), "ordinary ids of {}", escape(text));

    // 2. Resumed through a small buffer.
    let mut out = vec![0u32; cap];
    let (mut got, mut from) = (Vec::new(), 0);
    loop {
        match m.tok.encode_from(text, from, &mut out, Specials::All) {
            Ok(n) => {
                got.extend_from_slice(&out[..n]);
                break;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(consumed > from || written > 0, "no progress at {from}: {}", escape(text));
                got.extend_from_slice(&out[..written]);
                from = consumed;
            }
            Err(EncodeError::PieceTooLong { needed, .. }) => {
                assert!(needed > out.len(), "PieceTooLong needs {needed} of {}", out.len());
                out.resize(needed, 0);
            }
        }
    }
    assert_eq!(got, ids, "resumed with {cap} ids: {}", escape(text));

    // 3. Decode, one shot and resumed.
    let want = m.reference.decode(&ids, true).expect("reference decode");
    let mut buf = vec![0u8; 4 * text.len() + 64];
    let n = m.tok.decode(&ids, &mut buf).expect("decode");
    assert_eq!(&buf[..n], want.as_bytes(), "decode of {}", escape(text));
    let mut small = vec![0u8; cap];
    let (mut text_out, mut rest, mut first) = (Vec::new(), &ids[..], true);
    while !rest.is_empty() {
        let r = if first {
            m.tok.decode(rest, &mut small)
        } else {
            m.tok.decode_after(rest, &mut small)
        };
        match r {
            Ok(n) => {
                text_out.extend_from_slice(&small[..n]);
                break;
            }
            Err(DecodeError::OutputFull { consumed: 0, .. }) => small.resize(2 * small.len(), 0),
            Err(DecodeError::OutputFull { consumed, written }) => {
                text_out.extend_from_slice(&small[..written]);
                first = false;
                rest = &rest[consumed..];
            }
            Err(e) => panic!("decode: {e}"),
        }
    }
    assert_eq!(text_out, want.as_bytes(), "resumed decode of {}", escape(text));
});
