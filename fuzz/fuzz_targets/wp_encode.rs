//! WordPiece against the reference library: arbitrary bytes through picobpe's `WpTokenizer`
//! and through Hugging Face `tokenizers` (the crate itself, loading the same `tokenizer.json`)
//! for the committed WordPiece models (`tests/fixtures/wordpiece`: the published uncased
//! all-MiniLM-L6-v2, a cased 8k model, and its vocabulary with `NFD` + `Lowercase` +
//! `StripAccents` and with `NFKC` in place of `BertNormalizer`, and with `Whitespace`,
//! `WhitespaceSplit`, `Punctuation` and `Digits` sequences in place of `BertPreTokenizer`).
//!
//! Input: `[model selector][capacity][text...]`. The reference sees the text as
//! `String::from_utf8_lossy` makes it (picobpe's invalid-UTF-8 rule).
//!
//! Checks (any failure aborts with the input):
//! 1. `encode` with added tokens recognized equals `encode(text, false)`, and with them as text
//!    equals the reference with `encode_special_tokens`;
//! 2. encoding through an output buffer of 1 to 16 ids (resuming at `consumed` on
//!    `OutputFull`, growing to `needed` on `PieceTooLong`, whose `needed` must be more than the
//!    buffer) gives the same ids as through a buffer of an id per input byte (and 8 more);
//! 3. `decode` of the ids equals the reference's `decode(ids, skip_special_tokens=true)`, and
//!    decoding through a buffer of 1 to 16 bytes (`decode` then `decode_after`) gives the same
//!    text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::{DecodeError, EncodeError, Specials, WpTokenizer};
use picobpe_fuzz::{escape, Params};
use picobpe_model::wordpiece::{import_tokenizer_json, WpTableData};
use std::sync::OnceLock;

const MODELS: [&str; 11] = [
    "minilm-uncased",
    "bert-cased-8k",
    "wp-nfd-lower-strip",
    "wp-nfkc",
    "wp-nfkc-lower",
    "wp-whitespace",
    "wp-whitespace-digits",
    "wp-wsplit-punct-contig-digits",
    "wp-wsplit-punct-removed",
    "wp-wsplit-punct",
    "wp-punct-digits",
];

struct Loaded {
    tok: WpTokenizer<'static>,
    reference: tokenizers::Tokenizer,
    /// The same with `encode_special_tokens` (added tokens as text).
    reference_as_text: tokenizers::Tokenizer,
}

fn model(i: usize) -> &'static Loaded {
    static CACHE: [OnceLock<Loaded>; MODELS.len()] = [const { OnceLock::new() }; MODELS.len()];
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

/// Ids through an output buffer of `cap` ids, drained and resumed at `consumed` on
/// `OutputFull` and grown to `needed` on `PieceTooLong` (whose `needed` must be more than the
/// buffer): a word that a normalizer makes longer than the stack window needs room in the
/// output for its normalized text, so even a buffer of an id per input byte can be full.
fn encode_resumed(tok: &WpTokenizer<'_>, text: &[u8], specials: Specials, cap: usize) -> Vec<u32> {
    let mut out = vec![0u32; cap];
    let (mut got, mut from) = (Vec::new(), 0);
    loop {
        match tok.encode_from(text, from, &mut out, specials) {
            Ok(n) => {
                got.extend_from_slice(&out[..n]);
                return got;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(
                    consumed > from || written > 0,
                    "no progress at {from}: {}",
                    escape(text)
                );
                got.extend_from_slice(&out[..written]);
                from = consumed;
            }
            Err(EncodeError::PieceTooLong { needed, .. }) => {
                assert!(
                    needed > out.len(),
                    "PieceTooLong needs {needed} of {}",
                    out.len()
                );
                out.resize(needed, 0);
            }
        }
    }
}

fuzz_target!(
    init: for i in 0..MODELS.len() { model(i); },
    |data: &[u8]| {
    let mut p = Params::new(data);
    let m = model(p.below(MODELS.len()));
    let cap = 1 + p.below(16);
    let text = p.rest();
    let lossy = String::from_utf8_lossy(text);

    // 1. Ids against the reference, both special-token modes.
    let ids = encode_resumed(&m.tok, text, Specials::All, text.len() + 8);
    assert_eq!(ids, reference_ids(&m.reference, &lossy), "ids of {}", escape(text));
    let ordinary = encode_resumed(&m.tok, text, Specials::None, text.len() + 8);
    assert_eq!(ordinary, reference_ids(&m.reference_as_text, &lossy), "ordinary ids of {}", escape(text));

    // 2. Resumed through a small buffer.
    let got = encode_resumed(&m.tok, text, Specials::All, cap);
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
