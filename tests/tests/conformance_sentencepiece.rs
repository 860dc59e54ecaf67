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
