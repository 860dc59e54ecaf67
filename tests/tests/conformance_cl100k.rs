//! Conformance of picobpe with tiktoken's `cl100k_base` on the committed reference vectors
//! (`fixtures/vectors`, see its PROVENANCE.md): ids with and without specials, round trip,
//! resumed encode through small buffers, `count`, streaming encode with random chunks,
//! resumed decode, streaming decode; the same ids from the minimal piece table without the token
//! trie (every piece merged pair by pair; the default host tables backtrack on long pieces).
//!
//! Heavy: run with `cargo test --release -p picobpe-tests --test conformance_cl100k`.

use picobpe_tests::conformance::{assert_trie_only_in_default_tables, run, Plan};
use picobpe_tests::models::Source;
use picobpe_tests::vectors::{Encoding, Set};

const E: Encoding = Encoding::Cl100kBase;

#[test]
fn fixtures() {
    run(E, Source::Tiktoken, Set::Fixtures, Plan::ENCODE);
}

#[test]
fn corpus() {
    run(E, Source::Tiktoken, Set::Corpus, Plan::ENCODE);
}

#[test]
fn random_strings() {
    run(E, Source::Tiktoken, Set::Random, Plan::ENCODE);
}

#[test]
fn second_special_longest_first() {
    run(
        E,
        Source::TiktokenDoubleSpecial,
        Set::DoubleSpecial,
        Plan::ENCODE,
    );
}

#[test]
fn invalid_utf8() {
    run(E, Source::Tiktoken, Set::InvalidUtf8, Plan::ENCODE);
}

/// Streaming decode of the vectors gives the input back, handing out only whole characters
/// (for valid UTF-8) whatever the buffer sizes.
#[test]
fn streaming_decode() {
    for set in Set::ALL {
        let source = match set {
            Set::DoubleSpecial => Source::TiktokenDoubleSpecial,
            _ => Source::Tiktoken,
        };
        run(E, source, set, Plan::STREAM_DECODE);
    }
}

/// A model file with its prebuilt tables (`Model::write`), mapped back by `read_tables` — what
/// the CLI loads — gives the same ids on every vector set.
#[test]
fn model_file_tables_give_the_same_ids() {
    let tables = picobpe_tests::models::tables(E, Source::ModelFile);
    assert!(!tables.trie.is_empty() && !tables.byte_pairs.is_empty());
    for set in [Set::Fixtures, Set::Corpus, Set::Random, Set::InvalidUtf8] {
        run(E, Source::ModelFile, set, Plan::IDS);
    }
}

/// The minimal piece table without the token trie sends every piece through pair merging:
/// same ids.
#[test]
fn minimal_piece_table_gives_the_same_ids() {
    for set in [Set::Fixtures, Set::Corpus, Set::Random, Set::InvalidUtf8] {
        run(E, Source::TiktokenMinimalPieces, set, Plan::IDS);
    }
}

/// The host tables carry the token trie, so the tests above cover backtracking encoding
/// (`picobpe::bytelevel::TokenTrie`), and the minimal tables do not, so the test above covers merging.
#[test]
fn default_tables_backtrack_and_minimal_ones_merge() {
    assert_trie_only_in_default_tables(E);
}
