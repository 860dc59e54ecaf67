//! Conformance of picobpe's SentencePiece BPE encoder and decoder with the `sentencepiece`
//! library (and, for `tokenizer.json` imports, with Hugging Face `tokenizers`) on the
//! committed reference vectors (`fixtures/sentencepiece`, see its PROVENANCE.md): one-shot
//! and resumed encode, count, one-shot and resumed decode, for every model and vector set.
//!
//! Heavy: run with `cargo test --release -p picobpe-tests --test conformance_sentencepiece`.

use picobpe_tests::sp::{check_all_sets, SpSource};

#[test]
fn sp512() {
    check_all_sets("sp512", SpSource::ModelProto);
}

#[test]
fn sp4096() {
    check_all_sets("sp4096", SpSource::ModelProto);
}

#[test]
fn sp4096_without_byte_fallback() {
    check_all_sets("sp4096-unk", SpSource::ModelProto);
}

#[test]
fn sp32000() {
    check_all_sets("sp32000", SpSource::ModelProto);
}

#[test]
fn mistral_v1() {
    check_all_sets("mistral-v1", SpSource::ModelProto);
}

#[test]
fn sp4096_tokenizer_json() {
    check_all_sets("sp4096", SpSource::TokenizerJson);
}

#[test]
fn sp32000_tokenizer_json() {
    check_all_sets("sp32000", SpSource::TokenizerJson);
}

/// The model files the CLI loads (format version 3, prebuilt tables mapped by `read_tables`)
/// give the same ids as tables built from the `tokenizer.model`.
#[test]
fn model_files_with_prebuilt_tables() {
    for model in ["sp4096", "mistral-v1"] {
        check_all_sets(model, SpSource::ModelFile);
    }
}

/// A word too long for the stack buffer is packed into the far end of `out`; when ids of
/// earlier words in the same call sit where it would go, they come out first (`OutputFull`)
/// instead of being overwritten. Found by the `sp_encode` fuzz target: resumed through every
/// buffer size from 1 to 120 ids (growing only on `PieceTooLong`), the ids equal one shot.
#[test]
fn long_word_after_short_ones_keeps_their_ids() {
    use picobpe::{EncodeError, SpTokenizer, Specials, Tokenize};
    let mut text = b"x<to c_ ab ".to_vec();
    text.extend([0xFF; 100]); // 100 U+FFFD: 300 normalized bytes, over the 256-byte buffer
    text.extend(b" im_end|> b");
    for source in [SpSource::ModelProto, SpSource::TokenizerJson] {
        let tok = SpTokenizer::new(picobpe_tests::sp::tables("sp32000", source));
        let want = picobpe_tests::sp::encode(&tok, &text).unwrap();
        for cap in 1..=120 {
            let (mut ids, mut from, mut buf) = (Vec::new(), 0, vec![0u32; cap]);
            loop {
                match tok.encode_from(&text, from, &mut buf, Specials::All, &mut []) {
                    Ok(n) => break ids.extend_from_slice(&buf[..n]),
                    Err(EncodeError::OutputFull { consumed, written }) => {
                        ids.extend_from_slice(&buf[..written]);
                        (from, buf) = (consumed, vec![0u32; cap]);
                    }
                    Err(EncodeError::PieceTooLong { needed, .. }) => buf = vec![0u32; needed],
                }
            }
            assert_eq!(ids, want, "{source:?}, {cap} ids");
        }
    }
}
