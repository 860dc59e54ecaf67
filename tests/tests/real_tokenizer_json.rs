//! A published byte-level BPE `tokenizer.json` (Qwen3's, the Qwen2 vocabulary: 151,643 ids,
//! NFC normalizer, Qwen2 pattern) imported with `import::tokenizer_json`, checked against the
//! ids of llama.cpp's tokenizer test for Qwen2 (`fixtures/hf_real`, see its PROVENANCE.md),
//! which Hugging Face `tokenizers` reproduces: encode, decode round trip, and the same ids
//! through a model file read back.

use std::io::Read;

use picobpe::{Specials, Tokenizer};
use picobpe_model::import;
use picobpe_model::{LiveTables, PieceTable, TableData};
use picobpe_tests::{check, paths, through_model_file};

fn fixture(name: &str) -> Vec<u8> {
    let path = paths::fixtures().join("hf_real").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// llama.cpp's inputs and ids.
fn cases() -> Vec<(String, Vec<u32>)> {
    let inputs = String::from_utf8(fixture("llama.cpp-qwen2.inp")).expect("UTF-8 inputs");
    let inputs: Vec<&str> = inputs.split("\n__ggml_vocab_test__\n").collect();
    let (last, inputs) = inputs.split_last().expect("inputs");
    assert_eq!(*last, "", "the input file ends with a separator");
    let outputs = String::from_utf8(fixture("llama.cpp-qwen2.out")).expect("UTF-8 ids");
    let outputs: Vec<&str> = outputs.split('\n').collect();
    assert!(outputs.len() >= inputs.len(), "one line of ids per input");
    inputs
        .iter()
        .zip(outputs)
        .map(|(text, ids)| {
            let ids = ids
                .split_whitespace()
                .map(|n| n.parse().expect("id"))
                .collect();
            ((*text).to_owned(), ids)
        })
        .collect()
}

fn qwen3() -> picobpe_model::Model {
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(fixture("qwen3.tokenizer.json.gz").as_slice())
        .read_to_end(&mut json)
        .expect("gunzip");
    let file = picobpe_model::TokenizerJson::parse(&json).expect("a tokenizer.json");
    let imported = import::tokenizer_json(&file).expect("import Qwen3 tokenizer.json");
    assert_eq!(imported.model.n_ids(), 151_669);
    assert_eq!(imported.model.pattern, picobpe_model::PatternKind::Qwen2);
    imported.model
}

fn check_all(tok: &Tokenizer<'_>, how: &str) {
    let cases = cases();
    assert_eq!(cases.len(), 46, "llama.cpp's Qwen2 test has 46 inputs");
    let mut failed = Vec::new();
    for (text, want) in &cases {
        let got = check::encode(tok, text.as_bytes(), Specials::All).expect("encode");
        if &got != want {
            failed.push(format!("{text:?}: want {want:?}, got {got:?}"));
            continue;
        }
        let back = check::decode(tok, &got).expect("decode");
        if back != text.as_bytes() {
            failed.push(format!(
                "{text:?}: decodes to {:?}",
                String::from_utf8_lossy(&back)
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{how}: {} of {} differ:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}

#[test]
fn qwen3_tokenizer_json_matches_llama_cpp_ids() {
    let model = qwen3();
    let tables = TableData::new(&model, PieceTable::Full)
        .expect("tables")
        .to_tables();
    check_all(&Tokenizer::new(tables), "imported tables");
}

#[test]
fn qwen3_model_file_matches_llama_cpp_ids() {
    let model = qwen3();
    let LiveTables::BytePair(tables) = through_model_file("qwen3", |path| model.write(path)) else {
        panic!("a byte-level model file loaded as another kind");
    };
    check_all(&Tokenizer::new(tables), "model file");
}
