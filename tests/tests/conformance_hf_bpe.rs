//! Conformance of picobpe with Hugging Face `tokenizers` on byte-level BPE models in
//! `tokenizer.json` form (`fixtures/hf_bpe`, see its PROVENANCE.md): a model with the Llama 3
//! pattern, layout and `ignore_merges`, and one with the Qwen2 pattern and NFC normalizer
//! (imported with `assume_nfc`; the harness hands picobpe each input in NFC, as a caller
//! must: 1,317 of the inputs change under NFC, and `tokenizers` gives their ids for the NFC
//! text). Ids with and without
//! special tokens, round trip, resumed and streamed encode and decode, through the imported
//! tables, the minimal piece table (pair merging only) and a model file read back.
//!
//! Heavy: run with `cargo test --release -p picobpe-tests --test conformance_hf_bpe`.

use picobpe_tests::conformance::{run, Plan};
use picobpe_tests::models::Source;
use picobpe_tests::vectors::{Encoding, Set};

const SETS: [Set; 3] = [Set::Fixtures, Set::Corpus, Set::Random];

fn all_sets(encoding: Encoding, source: Source, plan: Plan) {
    for set in SETS {
        run(encoding, source, set, plan);
    }
}

#[test]
fn llama3_ids() {
    all_sets(Encoding::HfLlama3, Source::Tiktoken, Plan::ENCODE);
}

#[test]
fn llama3_pair_merging() {
    all_sets(
        Encoding::HfLlama3,
        Source::TiktokenMinimalPieces,
        Plan::ENCODE,
    );
}

#[test]
fn llama3_model_file() {
    all_sets(Encoding::HfLlama3, Source::ModelFile, Plan::ENCODE);
}

#[test]
fn llama3_streaming_decode() {
    all_sets(Encoding::HfLlama3, Source::Tiktoken, Plan::STREAM_DECODE);
}

#[test]
fn qwen2_ids() {
    all_sets(Encoding::HfQwen2, Source::Tiktoken, Plan::ENCODE);
}

#[test]
fn qwen2_pair_merging() {
    all_sets(
        Encoding::HfQwen2,
        Source::TiktokenMinimalPieces,
        Plan::ENCODE,
    );
}

#[test]
fn qwen2_model_file() {
    all_sets(Encoding::HfQwen2, Source::ModelFile, Plan::ENCODE);
}

#[test]
fn qwen2_streaming_decode() {
    all_sets(Encoding::HfQwen2, Source::Tiktoken, Plan::STREAM_DECODE);
}
