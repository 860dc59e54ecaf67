//! The token trie's longest-prefix walk (`picobpe::TokenTrie::longest_prefix`) against a brute
//! force over the vocabulary, for cl100k_base and o200k_base, at every position of the fixture
//! texts (among them `partial-char-tokens`: tokens that end inside a 3-byte character) and of
//! the corpus slices (Chinese, Japanese, Hindi, ...).
//!
//! The encoder's ids do not show a wrong walk: a backtracking encoder that is offered a shorter
//! token than the longest still finds BPE's result, or gives up and merges pair by pair. A walk
//! that misses tokens only costs time there, so this test checks the walk itself: the character
//! steps (one probe per 3-byte character) and their `PARTIAL` flags must find what a byte-by-byte
//! search finds.
//!
//! Heavy: run with `cargo test --release -p picobpe-tests --test trie_walk`.

use std::collections::HashMap;

use picobpe::Tables;
use picobpe_tests::models::{self, Source};
use picobpe_tests::vectors::{self, Encoding, Set};

/// Longest token the walk may answer: longer ones are never in these vocabularies' tries.
const WINDOW: usize = 128;

/// The reachable tokens by their bytes: single bytes, and merged ids the trie has a split for.
fn reachable<'t>(t: &Tables<'t>) -> HashMap<&'t [u8], u32> {
    let mut ids: HashMap<&'t [u8], u32> = HashMap::new();
    for id in 0..t.n_ids() as u32 {
        let merged = t
            .trie
            .splits
            .get(id as usize)
            .is_some_and(|&s| s != u64::MAX);
        if merged || t.byte_ids.contains(&id) {
            if let Some(bytes) = t.token_bytes(id) {
                ids.insert(bytes, id);
            }
        }
    }
    ids
}

fn check(encoding: Encoding) {
    let t = models::tables(encoding, Source::Tiktoken);
    assert!(!t.trie.chars.is_empty(), "{encoding:?}: no character edges");
    let ids = reachable(t);
    let longest = ids.keys().map(|b| b.len()).max().unwrap_or(0);
    assert!(longest <= WINDOW);
    let mut positions = 0usize;
    let mut char_steps = 0usize;
    for set in [Set::Fixtures, Set::Corpus] {
        for case in vectors::load(encoding, set).cases {
            let text = &case.input;
            for p in 0..text.len() {
                let rest = &text[p..text.len().min(p + WINDOW)];
                let expected = (1..=rest.len())
                    .rev()
                    .find_map(|len| ids.get(&rest[..len]).map(|&id| (id, len)));
                let got = t.trie.longest_prefix(t, rest);
                assert_eq!(
                    got,
                    expected,
                    "{encoding:?} {}: at byte {p} ({:?})",
                    case.name,
                    String::from_utf8_lossy(&rest[..rest.len().min(24)])
                );
                positions += 1;
                if expected.is_some_and(|(_, len)| len >= 6 && rest[0] >= 0xE0) {
                    char_steps += 1;
                }
            }
        }
    }
    // The texts must exercise the character steps: tokens of two or more 3-byte characters.
    assert!(
        char_steps > 1_000,
        "{encoding:?}: only {char_steps} of {positions}"
    );
}

#[test]
fn cl100k_walk_finds_the_longest_token() {
    check(Encoding::Cl100kBase);
}

#[test]
fn o200k_walk_finds_the_longest_token() {
    check(Encoding::O200kBase);
}
