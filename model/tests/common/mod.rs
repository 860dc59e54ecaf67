//! Helpers shared by the model crate's integration tests.

use picobpe_model::{Model, PatternKind};

/// Bytes 0..=255 as ids 0..=255, then "ab" (256), "abc" (257), special "<|end|>" (258).
pub fn small_model() -> Model {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.push(b"ab".to_vec());
    tokens.push(b"abc".to_vec());
    tokens.push(b"<|end|>".to_vec());
    Model {
        pattern: PatternKind::Gpt2,
        tokens,
        merges: vec![(u32::from(b'a'), u32::from(b'b')), (256, u32::from(b'c'))],
        specials: vec![("<|end|>".to_owned(), 258)],
        whole_piece: false,
        normalizer: None,
        strips: Vec::new(),
        splits: Vec::new(),
        prefix_space: false,
        end_of_word_suffix: Vec::new(),
        steps: Default::default(),
        empty_tokens: Vec::new(),
    }
}
