//! Imports of the real vocabularies committed in `tests/fixtures/models` (GPT-2 plain,
//! cl100k_base / o200k_base gzip-compressed).
//!
//! Run in release for speed: `cargo test --release -p picobpe-model --test import_real`.

use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use picobpe_model::{import, Model, PatternKind, PieceTable, TableData};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/models")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if name.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        bytes
    }
}

fn tiktoken(file: &str, pattern: PatternKind, specials: &[(&str, u32)]) -> Model {
    let bytes = fixture(file);
    let specials: Vec<(String, u32)> = specials.iter().map(|&(t, i)| (t.to_owned(), i)).collect();
    let start = Instant::now();
    let model = import::tiktoken(&bytes, pattern, &specials).unwrap();
    eprintln!("{file}: import {:.2?}", start.elapsed());
    model
}

#[test]
fn gpt2_tiktoken_equals_hf() {
    let tk = tiktoken(
        "gpt2.tiktoken",
        PatternKind::Gpt2,
        &[("<|endoftext|>", 50256)],
    );
    let hf = import::hf(
        &fixture("gpt2_vocab.json"),
        &fixture("gpt2_merges.txt"),
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
        (
            "gpt2.tiktoken",
            PatternKind::Gpt2,
            &[("<|endoftext|>", 50256)],
        ),
        (
            "cl100k_base.tiktoken.gz",
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
            "o200k_base.tiktoken.gz",
            PatternKind::O200k,
            &[("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
        ),
    ];
    for (name, pattern, specials) in cases {
        let model = tiktoken(name, pattern, specials);
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
