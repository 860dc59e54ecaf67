//! Added tokens that take the whitespace beside them (`lstrip`, `rstrip`: RoBERTa's and BART's
//! `<mask>`, MPNet's), against the reference library itself: Hugging Face `tokenizers` (the Rust
//! crate, the code the Python package runs) loads a committed `tokenizer.json`, gets three
//! added tokens (`lstrip`, `rstrip`, both) the way `transformers` adds RoBERTa's `<mask>`, and
//! writes the file out; picobpe imports that file, writes a model file (format version 5) and
//! reads its tables back. Both encode seeded random texts built from the tokens, whitespace of
//! several kinds and words: one shot, resumed through small output buffers, and streamed in
//! random chunks. Zero differences allowed.

use picobpe::{AnyTokenizer, EncodeError, Specials, StreamEncoder, Tokenize};
use picobpe_model::tokenizer_json::Family;
use picobpe_model::{AnyModel, TemplateData, TokenizerJson};
use picobpe_tests::check::Rng;
use picobpe_tests::{paths, through_model_file};
use tokenizers::AddedToken;

/// Tokens added to the byte-level file: `(content, lstrip, rstrip)`.
const BYTE_LEVEL: Added = [
    ("<mask>", true, false),
    ("[R]", false, true),
    ("<both>", true, true),
];

/// Tokens made special in the WordPiece file: entries of its vocabulary (a WordPiece
/// `tokenizer.json`'s added tokens are, as MPNet's `<mask>` is).
const WORDPIECE: Added = [
    ("[MASK]", true, false),
    ("[unused1]", false, true),
    ("[unused2]", true, true),
];

/// Added tokens: `(content, lstrip, rstrip)`.
type Added = [(&'static str, bool, bool); 3];

/// The reference tokenizer with the three tokens added, and picobpe's tables for its file.
fn pair(file: &str, added: &Added) -> (tokenizers::Tokenizer, AnyTokenizer<'static>) {
    let path = paths::fixtures().join(file);
    let json = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reference = tokenizers::Tokenizer::from_bytes(&json).expect("tokenizers loads it");
    reference.with_padding(None);
    reference.with_truncation(None).expect("no truncation");
    let tokens: Vec<AddedToken> = added
        .iter()
        .map(|&(text, l, r)| AddedToken::from(text, true).lstrip(l).rstrip(r))
        .collect();
    reference.add_special_tokens(&tokens);
    let written = reference.to_string(false).expect("tokenizers writes it");
    let parsed = TokenizerJson::parse(written.as_bytes()).expect("a tokenizer.json");
    let model = match parsed.family() {
        Family::ByteLevel => AnyModel::BytePair(
            picobpe_model::import::tokenizer_json(&parsed)
                .expect("import")
                .model,
        ),
        Family::WordPiece => AnyModel::WordPiece(
            picobpe_model::wordpiece::import_tokenizer_json(&parsed)
                .expect("import")
                .model,
        ),
        other => panic!("{file}: {other:?}"),
    };
    let live = through_model_file("strip", |p| model.write(p, &TemplateData::default()));
    (reference, live.tokenizer())
}

/// A text of tokens, whitespace runs of several kinds, words and near misses; one in four is
/// long enough (up to about 1,200 bytes) that a call through a small buffer searches for the
/// next token in more than one window (`special::Window`: 256 bytes for 1 to 16 ids).
fn text(rng: &mut Rng, added: &Added) -> String {
    const PARTS: [&str; 13] = [
        " ", "  ", "\u{3000}", "\u{a0}", "\n", "\t", "word", "é", "<", "mask", "[", "R]", "x",
    ];
    let parts = if rng.one_in(4) { 400 } else { 12 };
    (0..rng.range(0, parts))
        .map(|_| match rng.range(0, PARTS.len() + 2) {
            i if i < PARTS.len() => PARTS[i],
            i => added[i - PARTS.len()].0,
        })
        .collect()
}

/// One-shot ids, with room for any text here.
fn one_shot(tok: &AnyTokenizer<'_>, text: &[u8]) -> Vec<u32> {
    let mut out = vec![0u32; 8 * text.len() + 64];
    let n = tok
        .encode_from(text, 0, &mut out, Specials::All, &mut [])
        .expect("encode");
    out.truncate(n);
    out
}

/// Ids through output buffers of 1 to 4 ids, resuming at each `consumed`.
fn resumed(tok: &AnyTokenizer<'_>, text: &[u8], rng: &mut Rng) -> Vec<u32> {
    let (mut got, mut from) = (Vec::new(), 0);
    loop {
        let mut out = vec![0u32; rng.range(1, 4)];
        match tok.encode_from(text, from, &mut out, Specials::All, &mut []) {
            Ok(n) => {
                got.extend_from_slice(&out[..n]);
                return got;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                got.extend_from_slice(&out[..written]);
                from = consumed;
            }
            Err(EncodeError::PieceTooLong { .. }) => {
                let mut big = vec![0u32; 8 * text.len() + 64];
                let n = tok
                    .encode_from(text, from, &mut big, Specials::All, &mut [])
                    .expect("encode");
                got.extend_from_slice(&big[..n]);
                return got;
            }
        }
    }
}

/// Ids pushed in chunks of 1 to 7 bytes through a streaming encoder, drained in between.
fn streamed(tok: AnyTokenizer<'static>, text: &[u8], rng: &mut Rng) -> Vec<u32> {
    let mut enc: StreamEncoder<AnyTokenizer<'static>, 256, 512> =
        StreamEncoder::new(tok, Specials::All);
    let mut got = Vec::new();
    let mut take = |enc: &mut StreamEncoder<AnyTokenizer<'static>, 256, 512>| loop {
        let mut buf = [0u32; 16];
        let n = enc.take(&mut buf).expect("take");
        got.extend_from_slice(&buf[..n]);
        if n == 0 {
            break;
        }
    };
    let mut pos = 0;
    while pos < text.len() {
        let end = (pos + rng.range(1, 7)).min(text.len());
        pos += enc.push(&text[pos..end]).expect("push");
        take(&mut enc);
    }
    enc.finish();
    take(&mut enc);
    got
}

fn check(file: &str, added: &Added, salt: u64) {
    let (reference, ours) = pair(file, added);
    let mut rng = Rng::new(file, salt);
    let mut failed = Vec::new();
    let n = 3_000;
    for _ in 0..n {
        let text = text(&mut rng, added);
        let want = reference
            .encode(text.as_str(), false)
            .expect("encode")
            .get_ids()
            .to_vec();
        let got = [
            ("one shot", one_shot(&ours, text.as_bytes())),
            ("resumed", resumed(&ours, text.as_bytes(), &mut rng)),
            ("streamed", streamed(ours, text.as_bytes(), &mut rng)),
        ];
        for (how, ids) in got {
            if ids != want && failed.len() < 8 {
                failed.push(format!("{how} {text:?}: want {want:?}, got {ids:?}"));
            }
        }
    }
    assert!(failed.is_empty(), "{file}: {}", failed.join("\n"));
}

/// Byte-level BPE (the Llama 3 vocabulary cut to 8k: `Split` + `ByteLevel`), as RoBERTa's.
#[test]
fn byte_level_matches_tokenizers() {
    check("hf_bpe/llama3-8k/tokenizer.json", &BYTE_LEVEL, 1);
}

/// WordPiece (all-MiniLM-L6-v2: `BertNormalizer` lowercasing, `BertPreTokenizer`), as MPNet's.
#[test]
fn wordpiece_matches_tokenizers() {
    check("wordpiece/minilm-uncased/tokenizer.json", &WORDPIECE, 2);
}
