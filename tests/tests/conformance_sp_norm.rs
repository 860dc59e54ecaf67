//! Conformance of picobpe's SentencePiece encoder and decoder with the `sentencepiece`
//! library on models whose normalizer is a character map (`precompiled_charsmap`):
//! `nmt_nfkc` (BPE; and BPE with user-defined symbols that NFKC would rewrite, without
//! `remove_extra_whitespaces`), `nmt_nfkc_cf` (Unigram without byte fallback), and a custom
//! `normalization_rule_tsv` (BPE, with and without `remove_extra_whitespaces`) whose rules
//! overlap, delete, and produce spaces and U+2581 at the start, middle and end of their
//! output. One-shot and resumed encode, count, one-shot and resumed decode, for every model
//! and vector set (`sp_edge`, `nfkc_edge`, `random`, `invalid_utf8`, `corpus`).
//!
//! The vectors in `fixtures/sp_norm` come from `sentencepiece` 0.2.3 through
//! `tests/scripts/gen_sp_norm_vectors.py` (see `fixtures/sp_norm/PROVENANCE.md`); the
//! `invalid_utf8` ids were made from the raw bytes, so a malformed byte is a U+FFFD that the
//! character map never sees, while a U+FFFD in the text is a key of every map here.
//!
//! Heavy: run with `cargo test --release -p picobpe-tests --test conformance_sp_norm`.

use picobpe_tests::sp::{check_all_sets, SpSource};

/// The models of `fixtures/sp_norm`.
const MODELS: [&str; 5] = [
    "nfkc-bpe",
    "nfkc-ug",
    "nfkc-tsv",
    "nfkc-tsv-raw",
    "nfkc-bpe-user",
];

/// BPE, `nmt_nfkc` (spm_train's default), byte fallback, `remove_extra_whitespaces`.
#[test]
fn nfkc_bpe() {
    check_all_sets("nfkc-bpe", SpSource::ModelProto);
}

/// Unigram, `nmt_nfkc_cf` (NFKC plus simple case folding), no byte fallback.
#[test]
fn nfkc_cf_unigram() {
    check_all_sets("nfkc-ug", SpSource::ModelProto);
}

/// BPE, the custom rules of `models/nfkc-tsv.rules.tsv`, `remove_extra_whitespaces`.
#[test]
fn rule_tsv() {
    check_all_sets("nfkc-tsv", SpSource::ModelProto);
}

/// The same rules without `remove_extra_whitespaces`.
#[test]
fn rule_tsv_keep_whitespace() {
    check_all_sets("nfkc-tsv-raw", SpSource::ModelProto);
}

/// `nmt_nfkc` without `remove_extra_whitespaces`, with user-defined symbols (ﬁ ① Ａ ㍻ x²)
/// that are matched on the raw text before the character map.
#[test]
fn nfkc_user_defined_symbols() {
    check_all_sets("nfkc-bpe-user", SpSource::ModelProto);
}

/// The model files the CLI loads (format version 3, prebuilt tables mapped by `read_tables`)
/// give the same ids as tables built from the `.model`, for every model.
#[test]
fn model_files_with_prebuilt_tables() {
    for model in MODELS {
        check_all_sets(model, SpSource::ModelFile);
    }
}

/// The tables `picobpe-build` bakes, with the character map in its compact form where the
/// map has one (`nmt_nfkc`: nfkc-bpe, nfkc-bpe-user; the others keep the double array), give
/// the same ids.
#[test]
fn compact_character_maps() {
    for model in MODELS {
        check_all_sets(model, SpSource::Compact);
    }
}
