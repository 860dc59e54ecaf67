//! Imports of the real vocabularies in `../shared/data` (skipped, with a note, when absent).
//!
//! Run in release for speed: `cargo test --release -p picobpe-model --test import_shared`.

use std::path::PathBuf;
use std::time::Instant;

use picobpe_model::{import, Model, PatternKind, PieceTable, TableData};

fn shared(rel: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("note: {} absent; skipping", path.display());
        None
    }
}

fn tiktoken(name: &str, pattern: PatternKind, specials: &[(&str, u32)]) -> Option<Model> {
    let path = shared(&format!("tiktoken/{name}.tiktoken"))?;
    let bytes = std::fs::read(path).unwrap();
    let specials: Vec<(String, u32)> = specials.iter().map(|&(t, i)| (t.to_owned(), i)).collect();
    let start = Instant::now();
    let model = import::tiktoken(&bytes, pattern, &specials).unwrap();
    eprintln!("{name}: import {:.2?}", start.elapsed());
    Some(model)
}

#[test]
fn gpt2_tiktoken_equals_hf() {
    let Some(tk) = tiktoken("gpt2", PatternKind::Gpt2, &[("<|endoftext|>", 50256)]) else {
        return;
    };
    let (Some(vocab), Some(merges)) = (
        shared("cs336/gpt2_vocab.json"),
        shared("cs336/gpt2_merges.txt"),
    ) else {
        return;
    };
    let hf = import::hf(
        &std::fs::read(vocab).unwrap(),
        &std::fs::read(merges).unwrap(),
        PatternKind::Gpt2,
        &["<|endoftext|>".to_owned()],
    )
    .unwrap();
    assert_eq!(tk.tokens.len(), 50257);
    assert_eq!(tk.merges.len(), 50000);
    assert_eq!(tk.tokens, hf.tokens);
    assert_eq!(tk.merges, hf.merges);
    assert_eq!(tk.specials, hf.specials);
    assert!(tk.whole_piece && !hf.whole_piece);
}

/// Special tokens as `(text, id)`.
type Specials = &'static [(&'static str, u32)];

#[test]
fn large_vocabularies_import_and_lay_out() {
    let cases: [(&str, PatternKind, Specials); 3] = [
        ("gpt2", PatternKind::Gpt2, &[("<|endoftext|>", 50256)]),
        (
            "cl100k_base",
            PatternKind::Cl100k,
            &[
                ("<|endoftext|>", 100257),
                ("<|fim_prefix|>", 100258),
                ("<|fim_middle|>", 100259),
                ("<|fim_suffix|>", 100260),
                ("<|endofprompt|>", 100276),
            ],
        ),
        (
            "o200k_base",
            PatternKind::O200k,
            &[("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
        ),
    ];
    for (name, pattern, specials) in cases {
        let Some(model) = tiktoken(name, pattern, specials) else {
            return;
        };
        // Every token of these files is reachable: one merge per multi-byte token.
        let multi_byte = model.n_ordinary() - 256;
        assert_eq!(model.merges.len(), multi_byte, "{name}");
        for piece_table in [PieceTable::Full, PieceTable::Minimal] {
            let start = Instant::now();
            let data = TableData::new(&model, piece_table).unwrap();
            let built = start.elapsed();
            assert!(data.ranks.is_empty(), "{name}: ranks follow ids");
            if piece_table == PieceTable::Minimal {
                assert!(
                    data.pieces.is_empty(),
                    "{name}: pair BPE reaches every token"
                );
            }
            eprintln!(
                "{name} {piece_table:?}: layout {built:.2?}\n{}",
                data.sizes()
            );
        }
    }
}
