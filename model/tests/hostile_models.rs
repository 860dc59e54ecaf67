//! Unusual but *valid* models must lay out and encode exactly: holes in the id space, byte
//! tokens away from ids 0..=255, merge order not monotone in id (explicit rank table), ids past
//! 65 535 (wide pair keys), special tokens that are prefixes of each other or of ordinary text,
//! and whole-piece semantics with tokens that pair merging cannot reach.
//!
//! Each model goes through the file format, `TableData::new` (both piece tables) and the core
//! tokenizer (with the token trie where the model qualifies), and is compared with a plain
//! reference written here: specials (earliest, then longest), the core's pre-tokenizer pieces
//! (checked against fancy-regex in `picobpe-tests`), then — for whole-piece models, a piece
//! equal to an ordinary token is that token — pair merging, lowest rank first, leftmost on
//! ties.

use std::collections::HashMap;

use picobpe::pretok;
use picobpe::{Specials, Tokenizer};
use picobpe_model::{Model, PatternKind, PieceTable, TableData};

/// A model built from merges given as byte strings, with knobs for the unusual layouts.
struct Spec {
    /// Merges, as (left, right) byte strings, in rank order.
    merges: &'static [(&'static str, &'static str)],
    /// Id of byte b is `(b + byte_shift) % 256` within the first 256 ids (a permutation).
    byte_shift: usize,
    /// Empty ids inserted before the merged tokens.
    holes: usize,
    /// Merged tokens get ids in reverse merge order.
    reverse_ids: bool,
    specials: &'static [&'static str],
    whole_piece: bool,
    /// Extra ordinary tokens that no merge produces (reachable only as whole pieces).
    loose: &'static [&'static str],
}

impl Spec {
    fn build(&self) -> Model {
        let n = 256 + self.holes + self.merges.len() + self.loose.len();
        let mut tokens = vec![Vec::new(); n];
        for b in 0..=255u8 {
            tokens[(usize::from(b) + self.byte_shift) % 256] = vec![b];
        }
        let first = 256 + self.holes;
        let mut merges = Vec::new();
        for (rank, (l, r)) in self.merges.iter().enumerate() {
            let id = if self.reverse_ids {
                first + self.merges.len() - 1 - rank
            } else {
                first + rank
            };
            tokens[id] = [l.as_bytes(), r.as_bytes()].concat();
        }
        let id_of = |tokens: &[Vec<u8>], s: &str| -> u32 {
            tokens
                .iter()
                .position(|t| t == s.as_bytes())
                .unwrap_or_else(|| panic!("{s:?} is not a token")) as u32
        };
        for (l, r) in self.merges {
            merges.push((id_of(&tokens, l), id_of(&tokens, r)));
        }
        for (i, t) in self.loose.iter().enumerate() {
            tokens[first + self.merges.len() + i] = t.as_bytes().to_vec();
        }
        let mut specials = Vec::new();
        for s in self.specials {
            tokens.push(s.as_bytes().to_vec());
            specials.push((s.to_string(), tokens.len() as u32 - 1));
        }
        Model {
            pattern: PatternKind::Gpt2,
            tokens,
            merges,
            specials,
            whole_piece: self.whole_piece,
            normalizer: None,
            strips: Vec::new(),
            splits: Vec::new(),
            prefix_space: false,
            end_of_word_suffix: Vec::new(),
            steps: Default::default(),
            empty_tokens: Vec::new(),
        }
    }
}

/// The reference encoder (see the module docs).
fn reference(model: &Model, text: &[u8], with_specials: bool) -> Vec<u32> {
    let ordinary: HashMap<&[u8], u32> = model
        .tokens
        .iter()
        .enumerate()
        .filter(|(id, t)| !t.is_empty() && !model.specials.iter().any(|s| s.1 == *id as u32))
        .map(|(id, t)| (t.as_slice(), id as u32))
        .collect();
    let rank: HashMap<(u32, u32), usize> = model
        .merges
        .iter()
        .enumerate()
        .map(|(r, &p)| (p, r))
        .collect();
    let merge = |piece: &[u8]| -> Vec<u32> {
        if model.whole_piece {
            if let Some(&id) = ordinary.get(piece) {
                return vec![id];
            }
        }
        let mut ids: Vec<u32> = piece.iter().map(|&b| ordinary[[b].as_slice()]).collect();
        loop {
            let best = ids
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| rank.get(&(w[0], w[1])).map(|&r| (r, i)))
                .min();
            let Some((_, i)) = best else { return ids };
            let bytes = [
                model.tokens[ids[i] as usize].as_slice(),
                &model.tokens[ids[i + 1] as usize],
            ]
            .concat();
            ids[i] = ordinary[bytes.as_slice()];
            ids.remove(i + 1);
        }
    };
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        let next = if with_specials {
            (pos..text.len()).find_map(|at| {
                model
                    .specials
                    .iter()
                    .filter(|(s, _)| text[at..].starts_with(s.as_bytes()))
                    .max_by_key(|(s, _)| s.len())
                    .map(|(s, id)| (at, at + s.len(), *id))
            })
        } else {
            None
        };
        let end = next.map_or(text.len(), |n| n.0);
        for piece in pretok::pieces(model.pattern.into(), &text[pos..end]) {
            out.extend(merge(piece));
        }
        match next {
            Some((_, e, id)) => {
                out.push(id);
                pos = e;
            }
            None => return out,
        }
    }
}

/// Texts over the toy alphabet, plus seeded random strings of its fragments.
fn texts() -> Vec<Vec<u8>> {
    let mut texts: Vec<Vec<u8>> = [
        &b"the theme of the thesis"[..],
        b"aaaaaaaaa aaaa aaa",
        b"<s><s><s> <s>x<ss><s",
        b"abcabc abc ab bc ca",
        b"\xff\x00the\xc3 aa",
        b"",
    ]
    .iter()
    .map(|t| t.to_vec())
    .collect();
    let frags: [&[u8]; 10] = [
        b"a",
        b"b",
        b"c",
        b"th",
        b"e",
        b" ",
        b"<s>",
        b"<ss>",
        b"\n",
        b"\xe2\x82",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..300 {
        let mut t = Vec::new();
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        for _ in 0..(state >> 59) {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            t.extend_from_slice(frags[(state >> 33) as usize % frags.len()]);
        }
        texts.push(t);
    }
    texts
}

fn check(name: &str, spec: &Spec) {
    let model = spec.build();
    let model = Model::from_bytes(&model.to_bytes().expect("valid")).expect("loads");
    for pieces in [PieceTable::Full, PieceTable::Minimal] {
        let tables = TableData::new(&model, pieces)
            .expect("lays out")
            .to_tables();
        let tok = Tokenizer::new(tables);
        for text in texts() {
            for (specials, flag) in [(Specials::All, true), (Specials::None, false)] {
                let want = reference(&model, &text, flag);
                let mut out = vec![0u32; 2 * text.len() + 8];
                let n = tok.encode(&text, &mut out, specials).expect("encode");
                assert_eq!(
                    &out[..n],
                    want.as_slice(),
                    "{name} {pieces:?} {specials:?} {:?}",
                    String::from_utf8_lossy(&text)
                );
                let mut back = vec![0u8; text.len()];
                assert_eq!(tok.decode(&want, &mut back), Ok(text.len()));
                assert_eq!(back, text);
            }
        }
    }
}

const MERGES: &[(&str, &str)] = &[
    ("t", "h"),
    ("th", "e"),
    ("a", "a"),
    ("aa", "aa"),
    ("b", "c"),
    ("a", "bc"),
    ("e", " "),
    (" ", "th"),
    ("c", "a"),
];

fn plain() -> Spec {
    Spec {
        merges: MERGES,
        byte_shift: 0,
        holes: 0,
        reverse_ids: false,
        specials: &["<s>", "<ss>"],
        whole_piece: false,
        loose: &[],
    }
}

#[test]
fn holes_and_shifted_byte_ids() {
    check(
        "holes",
        &Spec {
            holes: 17,
            byte_shift: 100,
            ..plain()
        },
    );
}

#[test]
fn merge_order_not_monotone_in_id() {
    let model = Spec {
        reverse_ids: true,
        ..plain()
    }
    .build();
    let data = TableData::new(&model, PieceTable::Full).unwrap();
    assert!(!data.ranks.is_empty(), "reversed ids need a rank table");
    check(
        "reverse",
        &Spec {
            reverse_ids: true,
            ..plain()
        },
    );
}

#[test]
fn ids_past_65535_use_wide_keys() {
    check(
        "wide",
        &Spec {
            holes: 70_000,
            reverse_ids: true,
            ..plain()
        },
    );
}

#[test]
fn specials_that_prefix_each_other_and_text() {
    // "<s" + ">" : the special `<s>` is a prefix of `<s>>`, and "<" alone is ordinary text.
    check(
        "specials",
        &Spec {
            specials: &["<s>", "<s><s>", "<s", "<ss>"],
            ..plain()
        },
    );
}

#[test]
fn whole_piece_tokens_unreachable_by_merges() {
    // "abc" is produced by (a, bc); "cab" and "aaa" are loose tokens no merge produces: with
    // whole-piece semantics a piece equal to them is that token.
    check(
        "whole-piece",
        &Spec {
            whole_piece: true,
            loose: &["cab", "aaa", " abc"],
            ..plain()
        },
    );
}

/// Models whose merge order follows id order (bytes first) get the token trie, so `check`
/// covers the backtracking encoder on them (pieces that are not all ASCII, or of 16 bytes and
/// more); the others merge pair by pair.
#[test]
fn token_trie_only_where_merge_order_follows_ids() {
    let with_holes = Spec {
        holes: 17,
        byte_shift: 100,
        ..plain()
    };
    let data = TableData::new(&with_holes.build(), PieceTable::Full).unwrap();
    assert!(!data.trie.edges.is_empty());
    let reversed = Spec {
        reverse_ids: true,
        ..plain()
    };
    let data = TableData::new(&reversed.build(), PieceTable::Full).unwrap();
    assert!(data.trie.edges.is_empty());
}
