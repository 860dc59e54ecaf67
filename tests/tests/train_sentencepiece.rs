//! The SentencePiece BPE and Unigram trainers against `spm_train` 0.2.3
//! (`tests/fixtures/spm_train`, made by `tests/scripts/gen_spm_train_vectors.py` with the
//! `sentencepiece` wheel): the same pieces in the same order with the same `f32` scores and
//! types, for each configuration; the
//! trained model encodes a held-out text to `sentencepiece`'s ids; and the written
//! `sentencepiece.model` reads back as the same model.

use picobpe::SpTokenizer;
use picobpe_model::sentencepiece::{
    import_model_proto, SpKind, SpModelType, SpNormalization, SpTableData, SpTrainError, SpTrainer,
};
use picobpe_tests::paths;
use serde_json::Value;

struct Reference {
    name: String,
    config: Value,
    pieces: Vec<(String, f32, String)>,
    held_out: Value,
}

fn references() -> Vec<Reference> {
    let dir = paths::fixtures().join("spm_train");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("spm_train fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["sentencepiece"], "0.2.3");
        if v.get("error").is_some() {
            continue;
        }
        out.push(Reference {
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            config: v["config"].clone(),
            pieces: serde_json::from_value(v["pieces"].clone()).unwrap(),
            held_out: v["held_out"].clone(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(out.len(), 17, "reference configurations");
    out
}

/// A built-in rule with the character map `host-trainer` carries.
fn rule(name: &str) -> SpNormalization {
    use std::io::Read;
    let path = paths::repo_root().join(format!("host-trainer/data/{name}.charsmap.gz"));
    let gz = std::fs::read(path).expect("charsmap");
    let mut charsmap = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut charsmap)
        .unwrap();
    SpNormalization::Rule {
        name: name.to_string(),
        charsmap,
    }
}

/// The trainer `spm_train`'s options describe (the ones the generator uses; it passes one
/// thread unless the options say).
fn trainer(config: &Value) -> SpTrainer {
    let options = &config["options"];
    let mut t = SpTrainer {
        normalization: rule("nmt_nfkc"),
        model_type: match config["model_type"].as_str() {
            Some("unigram") => SpModelType::Unigram,
            None | Some("bpe") => SpModelType::Bpe,
            Some(other) => panic!("model type {other}"),
        },
        num_threads: 1,
        ..SpTrainer::default()
    };
    for (key, v) in options.as_object().unwrap() {
        let b = || v.as_bool().unwrap();
        let n = || v.as_i64().unwrap();
        let list = || -> Vec<String> { serde_json::from_value(v.clone()).unwrap() };
        match key.as_str() {
            "vocab_size" => t.vocab_size = n() as usize,
            "character_coverage" => t.character_coverage = v.as_f64().unwrap() as f32,
            "split_digits" => t.split_digits = b(),
            "allow_whitespace_only_pieces" => t.allow_whitespace_only_pieces = b(),
            "byte_fallback" => t.byte_fallback = b(),
            "normalization_rule_name" => {
                t.normalization = match v.as_str().unwrap() {
                    "identity" => SpNormalization::Identity,
                    name => rule(name),
                }
            }
            "user_defined_symbols" => t.user_defined_symbols = list(),
            "control_symbols" => t.control_symbols = list(),
            "unk_id" => t.unk_id = n() as i32,
            "bos_id" => t.bos_id = n() as i32,
            "eos_id" => t.eos_id = n() as i32,
            "pad_id" => t.pad_id = n() as i32,
            "split_by_number" => t.split_by_number = b(),
            "split_by_unicode_script" => t.split_by_unicode_script = b(),
            "split_by_whitespace" => t.split_by_whitespace = b(),
            "max_sentencepiece_length" => t.max_sentencepiece_length = n() as usize,
            "max_sentence_length" => t.max_sentence_length = n() as usize,
            "input_sentence_size" => t.input_sentence_size = n() as u64,
            "shuffle_input_sentence" => t.shuffle_input_sentence = b(),
            "add_dummy_prefix" => t.add_dummy_prefix = b(),
            "num_threads" => t.num_threads = n() as usize,
            "shrinking_factor" => t.shrinking_factor = v.as_f64().unwrap() as f32,
            "num_sub_iterations" => t.num_sub_iterations = n() as usize,
            "seed_sentencepiece_size" => t.seed_sentencepiece_size = n() as usize,
            "remove_extra_whitespaces" => t.remove_extra_whitespaces = b(),
            other => panic!("option {other} not mapped"),
        }
    }
    t
}

/// A corpus file: under `tests/fixtures` when it names a folder, else a committed text.
fn text(file: &str) -> Vec<u8> {
    let path = if file.contains('/') {
        paths::fixtures().join(file)
    } else {
        paths::vectors().join("texts").join(file)
    };
    std::fs::read(path).expect("corpus")
}

/// The corpus files a configuration names.
fn corpus(config: &Value) -> Vec<Vec<u8>> {
    let files = config["files"].as_array().unwrap();
    files.iter().map(|f| text(f.as_str().unwrap())).collect()
}

fn kind_name(kind: SpKind) -> &'static str {
    match kind {
        SpKind::Normal => "normal",
        SpKind::Unknown => "unknown",
        SpKind::Control => "control",
        SpKind::UserDefined => "user_defined",
        SpKind::Byte => "byte",
    }
}

#[test]
fn pieces_match_spm_train() {
    let mut failures = Vec::new();
    for r in references() {
        let files = corpus(&r.config);
        let slices: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
        let trained = trainer(&r.config)
            .train(&slices, 2, &[], |_| {})
            .unwrap_or_else(|e| panic!("{}: {e}", r.name));
        let got: Vec<(String, f32, String)> = trained
            .model
            .pieces
            .iter()
            .map(|p| {
                (
                    p.piece.clone(),
                    p.score.unwrap_or(0.0),
                    kind_name(p.kind).to_string(),
                )
            })
            .collect();
        if let Some(i) = (0..got.len().max(r.pieces.len())).find(|&i| got.get(i) != r.pieces.get(i))
        {
            failures.push(format!(
                "{}: id {i} is {:?}, spm_train's is {:?} ({} vs {} pieces)",
                r.name,
                got.get(i),
                r.pieces.get(i),
                got.len(),
                r.pieces.len()
            ));
            continue;
        }
        // The held-out text encodes to sentencepiece's ids.
        let held = String::from_utf8(text(r.held_out["file"].as_str().unwrap())).unwrap();
        let lines = r.held_out["lines"].as_u64().unwrap() as usize;
        let held: Vec<&str> = held.lines().take(lines).collect();
        let held = held.join("\n");
        let want: Vec<u32> = serde_json::from_value(r.held_out["ids"].clone()).unwrap();
        let tables = SpTableData::new(&trained.model).unwrap().to_tables();
        let mut out = vec![0u32; held.len() * 2 + 16];
        let tok = SpTokenizer::new(tables);
        let n = match tok.encode(held.as_bytes(), &mut out) {
            // A model that does not split words merges the whole text as one word.
            Err(picobpe::EncodeError::PieceTooLong { needed, .. }) => {
                out.resize(needed, 0);
                tok.encode(held.as_bytes(), &mut out).unwrap()
            }
            other => other.unwrap(),
        };
        assert_eq!(out[..n], want[..], "{}: held-out ids", r.name);
        // The written ModelProto reads back as the same model.
        let back = import_model_proto(&trained.model_proto).unwrap();
        assert_eq!(back, trained.model, "{}: sentencepiece.model", r.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The configurations `spm_train` refuses (`tests/fixtures/spm_train/error-*.json`) are
/// refused here too, for the same reason: "no pieces are loaded." is
/// [`SpTrainError::NoPiecesLeft`], "Vocabulary size too high (V). Please set it to a value <=
/// N." is [`SpTrainError::VocabTooLarge`] with the same N.
#[test]
fn refusals_match_spm_train() {
    let dir = paths::fixtures().join("spm_train");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("spm_train fixtures") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("error-") {
            continue;
        }
        seen += 1;
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let want = v["error"].as_str().unwrap();
        let files = corpus(&v["config"]);
        let slices: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
        let got = trainer(&v["config"]).train(&slices, 2, &[], |_| {});
        match got {
            Err(SpTrainError::NoPiecesLeft) => {
                assert!(want.contains("no pieces are loaded."), "{name}: {want}")
            }
            Err(SpTrainError::VocabTooLarge { reached, .. }) => assert!(
                want.ends_with(&format!("Please set it to a value <= {reached}.")),
                "{name}: we reach {reached}; spm_train: {want}"
            ),
            other => panic!("{name}: spm_train says {want:?}, picobpe gives {other:?}"),
        }
    }
    assert_eq!(seen, 3, "refusal references");
}
