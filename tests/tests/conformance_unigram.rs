//! Conformance of picobpe's SentencePiece Unigram encoder (and its decoder) with the
//! `sentencepiece` library on the committed reference vectors (`fixtures/unigram`, see its
//! PROVENANCE.md): one-shot, resumed (from an offset and with a cursor) and streamed encode,
//! count, one-shot, resumed and streamed decode, for both models and every vector set.
//!
//! Heavy: run with `cargo test --release -p picobpe-tests --test conformance_unigram`.

use picobpe_tests::sp::{check, sets, SpSource};

fn all_sets(model: &str, source: SpSource) {
    let sets = sets(model);
    assert!(sets.len() >= 5, "{model}: only {sets:?}");
    for set in sets {
        check(model, source, &set);
    }
}

/// T5-like: no byte fallback (a run of unknown characters is one `<unk>`), spaces collapsed.
#[test]
fn ug8000() {
    all_sets("ug8000", SpSource::ModelProto);
}

/// Byte fallback, split digits, a user-defined symbol, spaces kept.
#[test]
fn ug4096_bytes() {
    all_sets("ug4096-bytes", SpSource::ModelProto);
}

/// The model files the CLI loads (format version 3, prebuilt tables mapped by `read_tables`).
#[test]
fn model_files_with_prebuilt_tables() {
    for model in ["ug8000", "ug4096-bytes"] {
        all_sets(model, SpSource::ModelFile);
    }
}
