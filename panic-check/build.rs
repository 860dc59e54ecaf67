//! Build script: makes a tiny model (256 byte tokens, a few merges, two special tokens) and
//! bakes it with `picobpe-build`, exactly as a firmware build would.
//!
//! The model's contents do not matter for the proof: `src/main.rs` passes the baked tables
//! through `black_box`, so the optimiser may assume nothing about them (pattern, sizes, map
//! layout or invariants). The proof therefore covers any tables, not just these.
use std::{env, path::PathBuf};

use picobpe_model::{Model, PatternKind};

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
    let model = Model {
        pattern: PatternKind::Gpt2,
        tokens,
        merges,
        specials,
        whole_piece: true,
    };
    let path = out.join("tiny.model");
    if let Err(e) = model.write(&path) {
        panic!("writing {}: {e}", path.display());
    }
    if let Err(e) = picobpe_build::bake(&path) {
        panic!("baking {}: {e}", path.display());
    }
    println!("cargo:rerun-if-changed=build.rs");
}
