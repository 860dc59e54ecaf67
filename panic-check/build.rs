//! Build script: makes a tiny byte-level model (256 byte tokens, a few merges, two special
//! tokens, two compiled split patterns) and bakes it with `picobpe-build`, exactly as a firmware build would; then imports
//! the committed SentencePiece model `sp512.model` (vocab 512, byte fallback) and bakes it as
//! `picobpe_sp_tables.rs`.
//!
//! The models' contents do not matter for the proof: `src/main.rs` passes the baked tables
//! through `black_box`, so the optimiser may assume nothing about them (pattern, sizes, map
//! layout, flags or invariants). The proof therefore covers any tables, not just these.
use std::{env, path::PathBuf};

use picobpe_model::sentencepiece::import_model_proto;
use picobpe_model::{Model, PatternKind, Split};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut merges = Vec::new();
    let mut merge = |tokens: &mut Vec<Vec<u8>>, l: u32, r: u32| {
        let bytes = [tokens[l as usize].clone(), tokens[r as usize].clone()].concat();
        tokens.push(bytes);
        merges.push((l, r));
        tokens.len() as u32 - 1
    };
    let th = merge(&mut tokens, u32::from(b't'), u32::from(b'h'));
    let the = merge(&mut tokens, th, u32::from(b'e'));
    let sp_t = merge(&mut tokens, u32::from(b' '), u32::from(b't'));
    let he = merge(&mut tokens, u32::from(b'h'), u32::from(b'e'));
    merge(&mut tokens, sp_t, he);
    merge(&mut tokens, the, u32::from(b'n'));
    let specials = ["<|endoftext|>", "<|endoftext|><|endoftext|>"];
    let specials: Vec<(String, u32)> = specials
        .iter()
        .map(|s| {
            tokens.push(s.as_bytes().to_vec());
            (s.to_string(), tokens.len() as u32 - 1)
        })
        .collect();
    // One special takes the whitespace before it, the other the whitespace after it, so the
    // proof covers those paths of the special-token search.
    let strips = vec![(specials[0].1, 1), (specials[1].1, 2)];
    let model = Model {
        pattern: PatternKind::Gpt2,
        tokens,
        merges,
        specials,
        whole_piece: true,
        normalizer: None,
        strips,
        // Three compiled split levels (a look-ahead among them), so the proof covers the
        // compiled-pattern walker too.
        splits: vec![
            Split::isolated(r"\p{N}{1,3}"),
            Split {
                regex: r"'s| ?\p{L}+| ?[^\s\p{L}]+|\s+(?!\S)|\s+".to_owned(),
                // A rule that looks past each segment: the proof covers that walk too.
                rule: picobpe_model::SplitRule {
                    behavior: picobpe_model::SplitBehavior::Contiguous,
                    invert: true,
                },
            },
            // A rule that drops bytes: the proof covers the encoder's skip.
            Split {
                regex: r"[\t\r]".to_owned(),
                rule: picobpe_model::SplitRule {
                    behavior: picobpe_model::SplitBehavior::Removed,
                    invert: false,
                },
            },
        ],
        // A space before each text between specials: the proof covers the windowed encode
        // that puts it there (the one Unicode normalizers share).
        prefix_space: true,
        end_of_word_suffix: Vec::new(),
        steps: Default::default(),
        empty_tokens: Vec::new(),
    };
    let path = out.join("tiny.model");
    if let Err(e) = model.write(&path) {
        panic!("writing {}: {e}", path.display());
    }
    if let Err(e) = picobpe_build::bake(&path) {
        panic!("baking {}: {e}", path.display());
    }

    // SentencePiece: the smallest committed reference model.
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let proto = manifest.join("../tests/fixtures/sentencepiece/models/sp512.model");
    let bytes = std::fs::read(&proto).unwrap_or_else(|e| panic!("{}: {e}", proto.display()));
    let sp = import_model_proto(&bytes).unwrap_or_else(|e| panic!("{}: {e}", proto.display()));
    let sp_path = out.join("sp512.model");
    if let Err(e) = sp.write(&sp_path) {
        panic!("writing {}: {e}", sp_path.display());
    }
    if let Err(e) = picobpe_build::Bake::new(&sp_path)
        .module_name("picobpe_sp_tables")
        .run()
    {
        panic!("baking {}: {e}", sp_path.display());
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", proto.display());
}
