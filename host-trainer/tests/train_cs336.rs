//! CS336 acceptance: training `corpus.en` at N = 500 with `<|endoftext|>` reproduces the course's
//! reference merges line for line and its vocabulary as a set of byte strings.

mod train_common;

use std::collections::BTreeSet;

use picobpe_model::Model;
use train_common::*;

const SPECIAL: &str = "<|endoftext|>";

#[test]
fn corpus_en_500_matches_reference_merges_and_vocab() {
    let tmp = TempDir::new("cs336");
    let out = tmp.join("out");
    train_ok(&[&fixture("cs336/corpus.en")], 500, &[SPECIAL], &out, &[]);

    // merges.txt: identical text, line for line.
    let ours = std::fs::read_to_string(out.join("merges.txt")).unwrap();
    let reference =
        std::fs::read_to_string(fixture("cs336/train-bpe-reference-merges.txt")).unwrap();
    let ours_lines: Vec<&str> = ours.lines().collect();
    let ref_lines: Vec<&str> = reference.lines().collect();
    for (i, (a, b)) in ours_lines.iter().zip(&ref_lines).enumerate() {
        assert_eq!(a, b, "merge {i} differs");
    }
    assert_eq!(ours_lines.len(), ref_lines.len(), "number of merges");
    assert_eq!(ours, reference, "merges.txt bytes");

    // vocab.json: same set of byte strings; ours has 500 entries with ids 0..500 in order.
    let ours = parse_vocab_json(&std::fs::read_to_string(out.join("vocab.json")).unwrap());
    let reference = parse_vocab_json(
        &std::fs::read_to_string(fixture("cs336/train-bpe-reference-vocab.json")).unwrap(),
    );
    assert_eq!(ours.len(), 500);
    assert!(ours.iter().enumerate().all(|(i, (_, id))| *id == i as u64));
    let ours_set: BTreeSet<Vec<u8>> = vocab_bytes(&ours, &[SPECIAL]).into_iter().collect();
    let ref_set: BTreeSet<Vec<u8>> = vocab_bytes(&reference, &[SPECIAL]).into_iter().collect();
    assert_eq!(ref_set.len(), 500);
    assert_eq!(
        ours_set.symmetric_difference(&ref_set).collect::<Vec<_>>(),
        Vec::<&Vec<u8>>::new()
    );

    // tokenizer.model: same tokens in the documented layout (bytes, merges, specials).
    let model = Model::read(out.join("tokenizer.model")).expect("valid model");
    assert!(!model.whole_piece);
    assert_eq!(model.tokens.len(), 500);
    for b in 0..=255u8 {
        assert_eq!(model.tokens[b as usize], vec![b]);
    }
    let merges = parse_merges(&std::fs::read_to_string(out.join("merges.txt")).unwrap());
    assert_eq!(model.merges.len(), merges.len());
    for (i, ((l, r), (left, right))) in model.merges.iter().zip(&merges).enumerate() {
        assert_eq!(&model.tokens[*l as usize], left, "merge {i} left");
        assert_eq!(&model.tokens[*r as usize], right, "merge {i} right");
        assert_eq!(model.tokens[256 + i], [left.as_slice(), right].concat());
    }
    assert_eq!(model.specials, vec![(SPECIAL.to_owned(), 499)]);
    assert_eq!(model.tokens[499], SPECIAL.as_bytes());
    let vocab = vocab_bytes(&ours, &[SPECIAL]);
    assert_eq!(
        vocab, model.tokens,
        "vocab.json and the model agree id for id"
    );
}
