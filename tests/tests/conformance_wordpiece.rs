//! Conformance of picobpe's WordPiece with Hugging Face `tokenizers` on the committed vectors
//! (`fixtures/wordpiece`, see its PROVENANCE.md): a published uncased model (all-MiniLM-L6-v2,
//! BERT's vocabulary) and a cased 8k model trained here, on the fixtures, corpus, random and
//! invalid-UTF-8 sets; the published model on llama.cpp's BERT test vectors and on the
//! generator's edge-case probes. Ids with added tokens recognized and as text, resumed encode
//! through small output buffers, the streaming encoder and decoder, decode, and the same ids
//! through a model file read back.

use std::io::Read;

use picobpe::{EncodeError, Specials, StreamError, WpTables, WpTokenizer};
use picobpe_model::wordpiece::{
    import_tokenizer_json, import_vocab_txt, VocabTxtOptions, WpTableData,
};
use picobpe_model::{LiveTables, WpModel};
use picobpe_tests::sp::{decode_streamed, encode_streamed};
use picobpe_tests::vectors::{inputs, inputs_at, Set};
use picobpe_tests::{paths, through_model_file};

const SETS: [Set; 4] = [Set::Fixtures, Set::Corpus, Set::Random, Set::InvalidUtf8];

fn dir(model: &str) -> std::path::PathBuf {
    paths::fixtures().join("wordpiece").join(model)
}

fn model(name: &str) -> WpModel {
    let json = std::fs::read(dir(name).join("tokenizer.json")).expect("tokenizer.json");
    let file = picobpe_model::TokenizerJson::parse(&json).expect("a tokenizer.json");
    import_tokenizer_json(&file).expect("import").model
}

fn tables(model: &WpModel) -> &'static WpTables<'static> {
    WpTableData::new(model).expect("tables").to_tables()
}

fn encode(tok: &WpTokenizer<'_>, input: &[u8], specials: Specials) -> Vec<u32> {
    let mut out = vec![0u32; input.len() + 8];
    let n = tok.encode(input, &mut out, specials).expect("encode");
    out.truncate(n);
    out
}

/// Encode through an output buffer of `cap` ids, draining and resuming (and growing it when
/// a word needs more).
fn encode_resumed(tok: &WpTokenizer<'_>, input: &[u8], specials: Specials, cap: usize) -> Vec<u32> {
    let mut ids = Vec::new();
    let mut out = vec![0u32; cap];
    let mut from = 0;
    loop {
        match tok.encode_from(input, from, &mut out, specials) {
            Ok(n) => {
                ids.extend_from_slice(&out[..n]);
                return ids;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                ids.extend_from_slice(&out[..written]);
                assert!(consumed > from || written > 0, "no progress at {from}");
                from = consumed;
            }
            // One word needs more ids than the buffer holds: the documented error, then a
            // bigger buffer.
            Err(EncodeError::PieceTooLong { needed, .. }) => {
                assert!(needed > out.len());
                out.resize(needed, 0);
            }
        }
    }
}

/// The longest run of bytes without ASCII whitespace or punctuation (an upper bound of what a
/// stream must hold before a word surely ends).
fn longest_run(text: &[u8]) -> usize {
    text.split(|b| b.is_ascii_whitespace() || b.is_ascii_punctuation())
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0)
}

/// The reference records of one set: (name, all, ordinary).
fn records(model: &str, set: &str) -> Vec<(String, Vec<u32>, Vec<u32>)> {
    let path = dir(model).join(format!("{set}.jsonl.gz"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("vectors"))
        .read_to_string(&mut text)
        .expect("gunzip");
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().expect("header")).unwrap();
    assert_eq!(header["encoding"], model);
    assert_eq!(header["tokenizers"], "0.22.2");
    lines
        .map(|line| {
            let rec: serde_json::Value = serde_json::from_str(line).unwrap();
            let ids = |v: &serde_json::Value| -> Vec<u32> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap() as u32)
                    .collect()
            };
            let all = ids(&rec["all"]);
            let ordinary = if rec["ordinary"].is_null() {
                all.clone()
            } else {
                ids(&rec["ordinary"])
            };
            (rec["name"].as_str().unwrap().to_owned(), all, ordinary)
        })
        .collect()
}

fn check_sets(name: &str, tables: &'static WpTables<'static>, resume: bool) {
    let tok = WpTokenizer::new(tables);
    for set in SETS {
        let inputs = inputs(set);
        let records = records(name, set.name());
        assert_eq!(
            inputs.len(),
            records.len(),
            "{name} {}: record count",
            set.name()
        );
        let mut failed = Vec::new();
        for (input, (rec_name, all, ordinary)) in inputs.iter().zip(&records) {
            assert_eq!(&input.name, rec_name, "inputs and ids out of step");
            for (specials, want) in [(Specials::All, all), (Specials::None, ordinary)] {
                let got = encode(&tok, &input.bytes, specials);
                if &got != want {
                    failed.push(format!(
                        "{} [{specials:?}]: first difference at {}",
                        input.name,
                        got.iter()
                            .zip(want)
                            .position(|(a, b)| a != b)
                            .unwrap_or(got.len().min(want.len()))
                    ));
                    continue;
                }
                if resume {
                    // The streaming encoder, in chunks of several sizes, and decoded back
                    // through the streaming decoder as the one-shot decode does.
                    for (chunk, take) in [(1, 1), (7, 3), (64, 1000)] {
                        match encode_streamed(tok, specials, &input.bytes, chunk, take) {
                            Ok(ids) if ids == *want => {}
                            // A word longer than the stream's input capacity: documented.
                            Err(StreamError::InputTooSmall { capacity })
                                if longest_run(&input.bytes) >= capacity / 2 => {}
                            other => failed.push(format!(
                                "{} [{specials:?}] streamed in {chunk}-byte chunks: {other:?}",
                                input.name
                            )),
                        }
                    }
                    let mut text = vec![0u8; 8 * input.bytes.len() + 64];
                    let n = tok.decode(want, &mut text).expect("decode");
                    if decode_streamed(tok, want, 5).as_deref() != Ok(&text[..n]) {
                        failed.push(format!("{} [{specials:?}] stream-decoded", input.name));
                    }
                    for cap in [1, 2, 7] {
                        if encode_resumed(&tok, &input.bytes, specials, cap) != *want {
                            failed.push(format!(
                                "{} [{specials:?}] resumed with {cap} ids",
                                input.name
                            ));
                        }
                    }
                }
            }
        }
        assert!(
            failed.is_empty(),
            "{name} {}: {} failures:\n{}",
            set.name(),
            failed.len(),
            failed
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
        eprintln!(
            "{name} {}: {} inputs, 0 differences",
            set.name(),
            inputs.len()
        );
    }
}

/// WordPiece files whose normalizer is not `BertNormalizer` (`tests/scripts/gen_wp_norm_vectors.py`):
/// `Sequence[NFD, Lowercase, StripAccents]`, the normalizer `tokenizers`' guides build (run
/// by the core's character steps), and `NFKC` alone, before `BertPreTokenizer`. Every set
/// one-shot, streamed, resumed and decoded, the normalizers' edge sets, and the model file
/// read back.
#[test]
fn wordpiece_with_other_normalizers() {
    for name in ["wp-nfd-lower-strip", "wp-nfkc"] {
        let m = model(name);
        assert!(!m.clean_text && !m.lowercase && !m.strip_accents && !m.handle_chinese_chars);
        assert!(m.normalizer.is_some());
        assert_eq!(m.char_steps.any(), name == "wp-nfd-lower-strip");
        // Streamed and resumed for the steps (the Unicode form's window is the same code).
        check_sets(name, tables(&m), m.char_steps.any());
        let tok = WpTokenizer::new(tables(&m));
        let loaded = match through_model_file(name, |path| m.write(path)) {
            LiveTables::WordPiece(t) => WpTokenizer::new(t),
            other => panic!("{name}: loaded as {other:?}"),
        };
        for set in ["nfkc_edge", "steps_edge"] {
            let path = paths::fixtures().join(format!("metaspace/inputs/{set}.jsonl"));
            let texts: Vec<(String, String)> = std::fs::read_to_string(path)
                .expect("inputs")
                .lines()
                .filter_map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).ok()?;
                    Some((
                        v["name"].as_str()?.to_owned(),
                        v["text"].as_str()?.to_owned(),
                    ))
                })
                .collect();
            let records = records(name, set);
            assert_eq!(texts.len(), records.len(), "{name} {set}");
            for ((rec, text), (rec2, all, ordinary)) in texts.iter().zip(&records) {
                assert_eq!(rec, rec2);
                assert_eq!(
                    &encode(&tok, text.as_bytes(), Specials::All),
                    all,
                    "{name} {rec}"
                );
                assert_eq!(
                    &encode(&tok, text.as_bytes(), Specials::None),
                    ordinary,
                    "{name} {rec}"
                );
                assert_eq!(
                    &encode(&loaded, text.as_bytes(), Specials::All),
                    all,
                    "{name} {rec}"
                );
                assert_eq!(
                    &encode_resumed(&tok, text.as_bytes(), Specials::All, 2),
                    all,
                    "{name} {rec}"
                );
            }
        }
        // Bytes that are not UTF-8 around marks `StripAccents` drops: they stay apart.
        let inputs = inputs_at(&dir("inputs").join("marks_invalid.jsonl"), &dir("inputs"));
        let records = records(name, "marks_invalid");
        assert_eq!(inputs.len(), records.len(), "{name} marks_invalid");
        for (input, (rec, all, _)) in inputs.iter().zip(&records) {
            assert_eq!(&input.name, rec);
            assert_eq!(
                &encode(&tok, &input.bytes, Specials::All),
                all,
                "{name} {rec}"
            );
            assert_eq!(
                &encode_resumed(&tok, &input.bytes, Specials::All, 2),
                all,
                "{name} {rec}"
            );
        }
    }
}

#[test]
fn minilm_uncased_vectors() {
    check_sets("minilm-uncased", tables(&model("minilm-uncased")), true);
}

#[test]
fn bert_cased_vectors() {
    check_sets("bert-cased-8k", tables(&model("bert-cased-8k")), true);
}

/// `vocab.txt` with BERT's settings gives the same model as the `tokenizer.json`.
#[test]
fn vocab_txt_imports_the_same_models() {
    for (name, options) in [
        ("minilm-uncased", VocabTxtOptions::default()),
        (
            "bert-cased-8k",
            VocabTxtOptions {
                lowercase: false,
                strip_accents: None,
            },
        ),
    ] {
        let txt = std::fs::read(dir(name).join("vocab.txt")).unwrap();
        assert_eq!(
            import_vocab_txt(&txt, &options).unwrap(),
            model(name),
            "{name}"
        );
    }
}

/// A model file written and read back (what the CLI loads) gives the same ids.
#[test]
fn model_file_vectors() {
    let m = model("bert-cased-8k");
    let LiveTables::WordPiece(t) = through_model_file("bert-cased-8k", |path| m.write(path)) else {
        panic!("a WordPiece model file loaded as another kind");
    };
    check_sets("bert-cased-8k", t, false);
}

/// llama.cpp's BERT test: 46 inputs, ids without [CLS]/[SEP].
#[test]
fn minilm_matches_llama_cpp() {
    let tok = WpTokenizer::new(tables(&model("minilm-uncased")));
    let d = paths::fixtures().join("wordpiece/llama.cpp");
    let inp = std::fs::read_to_string(d.join("ggml-vocab-bert-bge.gguf.inp")).unwrap();
    let out = std::fs::read_to_string(d.join("ggml-vocab-bert-bge.gguf.out")).unwrap();
    let inputs: Vec<&str> = inp.split("\n__ggml_vocab_test__\n").collect();
    let (last, inputs) = inputs.split_last().unwrap();
    assert_eq!(*last, "");
    assert_eq!(inputs.len(), 46);
    for (text, ids) in inputs.iter().zip(out.lines()) {
        let want: Vec<u32> = ids.split_whitespace().map(|n| n.parse().unwrap()).collect();
        assert_eq!(
            encode(&tok, text.as_bytes(), Specials::All),
            want,
            "{text:?}"
        );
    }
}

/// The generator's edge cases (sigma, dotted I, controls, long words, added tokens inside
/// words, ...), ids and `decode` with special tokens skipped, for both models.
#[test]
fn probes_ids_and_decode() {
    let text = std::fs::read_to_string(paths::fixtures().join("wordpiece/probes.jsonl")).unwrap();
    for name in ["minilm-uncased", "bert-cased-8k"] {
        let tok = WpTokenizer::new(tables(&model(name)));
        for line in text.lines() {
            let rec: serde_json::Value = serde_json::from_str(line).unwrap();
            let input = rec["text"].as_str().unwrap();
            let r = &rec[name];
            let want: Vec<u32> = r["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            let got = encode(&tok, input.as_bytes(), Specials::All);
            assert_eq!(got, want, "{name} {}: {input:?}", rec["name"]);
            let decoded = r
                .get("decode_skip_special")
                .or(r.get("decode"))
                .and_then(|d| d.as_str())
                .unwrap();
            let mut buf = vec![0u8; 4 * input.len() + 64];
            let n = tok.decode(&got, &mut buf).expect("decode");
            assert_eq!(
                std::str::from_utf8(&buf[..n]).unwrap(),
                decoded,
                "{name} {} decode",
                rec["name"]
            );
        }
    }
}
