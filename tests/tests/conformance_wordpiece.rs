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
    import_tokenizer_json, import_vocab_txt, CharRule, Spaces, VocabTxtOptions, WordSplit,
    WpTableData,
};
use picobpe_model::{LiveTables, WpModel};
use picobpe_tests::sp::{decode_streamed, encode_streamed};
use picobpe_tests::vectors::{inputs, inputs_at, Set};
use picobpe_tests::{paths, through_model_file};

/// Inputs longer than this are resumed through buffers of 1, 2 and 7 ids up to here only.
const SMALL_CAP_BYTES: usize = 8 << 10;

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

/// The longest run of bytes without ASCII whitespace or punctuation that ends a word under
/// `split` (an upper bound of what a stream must hold before a word surely ends).
fn longest_run(text: &[u8], split: WordSplit) -> usize {
    let (spaces, punctuation, _) = split.parts();
    let space_ends = spaces != Spaces::Kept;
    let punct_ends = matches!(punctuation, CharRule::Isolated | CharRule::Removed);
    text.split(|b| {
        (space_ends && b.is_ascii_whitespace()) || (punct_ends && b.is_ascii_punctuation())
    })
    .map(<[u8]>::len)
    .max()
    .unwrap_or(0)
}

/// A JSON array of ids.
fn id_list(v: &serde_json::Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
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
            let all = id_list(&rec["all"]);
            let ordinary = if rec["ordinary"].is_null() {
                all.clone()
            } else {
                id_list(&rec["ordinary"])
            };
            (rec["name"].as_str().unwrap().to_owned(), all, ordinary)
        })
        .collect()
}

fn check_sets(name: &str, tables: &'static WpTables<'static>, resume: bool) {
    for set in SETS {
        check_set(name, set.name(), tables, &inputs(set), resume);
    }
}

/// The reference ids of one set of `inputs`, with added tokens recognized and as text;
/// with `resume`, also streamed, resumed through small buffers and stream-decoded.
fn check_set(
    name: &str,
    set: &str,
    tables: &'static WpTables<'static>,
    inputs: &[picobpe_tests::vectors::Input],
    resume: bool,
) {
    let tok = WpTokenizer::new(tables);
    {
        let records = records(name, set);
        assert_eq!(inputs.len(), records.len(), "{name} {set}: record count");
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
                    // Byte by byte, a stream looks back over its whole buffer for a word end
                    // at each byte: a long input is streamed so up to `SMALL_CAP_BYTES` only.
                    let head = &input.bytes[..input.bytes.len().min(SMALL_CAP_BYTES)];
                    let head_ids = encode(&tok, head, specials);
                    for (bytes, ids, chunk, take) in [
                        (head, &head_ids, 1, 1),
                        (&input.bytes[..], want, 7, 3),
                        (&input.bytes[..], want, 64, 1000),
                    ] {
                        match encode_streamed(tok, specials, bytes, chunk, take) {
                            Ok(got) if got == *ids => {}
                            // A word longer than the stream's input capacity: documented.
                            Err(StreamError::InputTooSmall { capacity })
                                if longest_run(bytes, tables.split) >= capacity / 2 => {}
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
                    // Resumed through buffers of a few ids: each call searches the rest of
                    // the text for a special, so a long input is resumed whole through a
                    // wider buffer and its first `SMALL_CAP_BYTES` through the small ones
                    // (against the one-shot ids of that prefix).
                    for (bytes, ids, caps) in [
                        (&input.bytes[..], want, &[64][..]),
                        (head, &head_ids, &[1, 2, 7][..]),
                    ] {
                        for &cap in caps {
                            if encode_resumed(&tok, bytes, specials, cap) != *ids {
                                failed.push(format!(
                                    "{} [{specials:?}] resumed with {cap} ids ({} bytes)",
                                    input.name,
                                    bytes.len()
                                ));
                            }
                        }
                    }
                }
            }
        }
        assert!(
            failed.is_empty(),
            "{name} {set}: {} failures:\n{}",
            failed.len(),
            failed
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
        eprintln!("{name} {set}: {} inputs, 0 differences", inputs.len());
    }
}

/// WordPiece files whose normalizer is not `BertNormalizer` (`tests/scripts/gen_wp_norm_vectors.py`):
/// `Sequence[NFD, Lowercase, StripAccents]`, the normalizer `tokenizers`' guides build (run
/// by the core's character steps), `NFKC` alone, and `Lowercase` after `NFKC` or after `NFD`
/// without `StripAccents` (run by the core's `Folded` normalizer), before `BertPreTokenizer`.
/// Every set one-shot, streamed, resumed and decoded, the normalizers' edge sets, and the
/// model file read back.
#[test]
fn wordpiece_with_other_normalizers() {
    for name in [
        "wp-nfd-lower-strip",
        "wp-nfkc",
        "wp-nfkc-lower",
        "wp-nfd-lower",
    ] {
        let m = model(name);
        assert!(!m.clean_text && !m.lowercase && !m.strip_accents && !m.handle_chinese_chars);
        assert!(m.normalizer.is_some());
        assert_eq!(m.char_steps.any(), name != "wp-nfkc");
        let kind = picobpe_model::normalizer::wordpiece_normalizer(m.normalizer, m.char_steps)
            .map(|n| n.kind());
        let folded = matches!(kind, Some(picobpe::normalizer::NormalizerKind::Folded(_)));
        assert_eq!(folded, name.ends_with("-lower"), "{name}: {kind:?}");
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
            let want = id_list(&r["ids"]);
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

/// The pre-tokenizers of `tests/scripts/gen_wp_pretok_vectors.py`'s models, with the parts
/// picobpe reads from each.
const PRETOK_MODELS: [(&str, (Spaces, CharRule, CharRule)); 6] = [
    (
        "wp-whitespace",
        (Spaces::Words, CharRule::Off, CharRule::Off),
    ),
    (
        "wp-whitespace-digits",
        (Spaces::Words, CharRule::Off, CharRule::Isolated),
    ),
    (
        "wp-wsplit-punct-contig-digits",
        (Spaces::Split, CharRule::Contiguous, CharRule::Contiguous),
    ),
    (
        "wp-wsplit-punct-removed",
        (Spaces::Split, CharRule::Removed, CharRule::Off),
    ),
    (
        "wp-wsplit-punct",
        (Spaces::Split, CharRule::Isolated, CharRule::Off),
    ),
    (
        "wp-punct-digits",
        (Spaces::Kept, CharRule::Isolated, CharRule::Isolated),
    ),
];

/// WordPiece files whose pre-tokenizer is not `BertPreTokenizer`: `Whitespace`, and
/// `Sequence`s of `WhitespaceSplit`, `Punctuation` (isolated, contiguous, removed) and
/// `Digits` (`tests/scripts/gen_wp_pretok_vectors.py`). Every shared set and the
/// pre-tokenizer edge set one-shot, streamed, resumed and decoded; the model file read back;
/// the exported `tokenizer.json` imported again.
#[test]
fn wordpiece_with_other_pre_tokenizers() {
    let edge = inputs_at(&dir("inputs").join("pretok_edge.jsonl"), &dir("inputs"));
    for (name, parts) in PRETOK_MODELS {
        let m = model(name);
        assert_eq!(m.split.parts(), parts, "{name}");
        assert_eq!(m.split.is_bert(), name == "wp-wsplit-punct", "{name}");
        check_sets(name, tables(&m), true);
        check_set(name, "pretok_edge", tables(&m), &edge, true);
        let LiveTables::WordPiece(t) = through_model_file(name, |path| m.write(path)) else {
            panic!("{name}: a WordPiece model file loaded as another kind");
        };
        check_set(name, "pretok_edge", t, &edge, false);
        // tokenizers' decode of the edge records' ids (added tokens skipped).
        let probes = std::fs::read_to_string(dir(name).join("probes.jsonl")).expect("probes");
        let tok = WpTokenizer::new(tables(&m));
        for line in probes.lines() {
            let rec: serde_json::Value = serde_json::from_str(line).unwrap();
            let r = &rec[name];
            let ids = id_list(&r["ids"]);
            let text = rec["text"].as_str().unwrap();
            assert_eq!(
                encode(&tok, text.as_bytes(), Specials::All),
                ids,
                "{name} {rec}"
            );
            let ordinary = r.get("ordinary").map_or(ids.clone(), id_list);
            assert_eq!(
                encode(&tok, text.as_bytes(), Specials::None),
                ordinary,
                "{name} {rec}"
            );
            let want = r.get("decode_skip_special").or(r.get("decode")).unwrap();
            let mut buf = vec![0u8; 8 * text.len() + 64];
            let n = tok.decode(&ids, &mut buf).expect("decode");
            assert_eq!(
                std::str::from_utf8(&buf[..n]).unwrap(),
                want.as_str().unwrap(),
                "{name} {} decode",
                rec["name"]
            );
        }
        let json = m.to_tokenizer_json().expect("export");
        let file = picobpe_model::TokenizerJson::parse(json.as_bytes()).expect("parse");
        assert_eq!(
            import_tokenizer_json(&file).expect("import").model,
            m,
            "{name}"
        );
    }
}

/// Every Unicode scalar value is classified as `tokenizers`' own pre-tokenizers classify it:
/// `inputs/pretok_classes.json` holds, per code point, what `Whitespace`, `Digits`,
/// `Punctuation` and `WhitespaceSplit` made of `"a" + c + "a"` (`pre_tokenize_str`); the core
/// must cut the same text into the same words.
#[test]
fn pre_tokenizer_classes_match_tokenizers_on_every_scalar_value() {
    let path = dir("inputs").join("pretok_classes.json");
    let classes: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("classes")).expect("json");
    assert_eq!(classes["tokenizers"], "0.22.2");
    // The runs of one key as a value per code point.
    let runs = |key: &str| -> Vec<(u32, String)> {
        classes[key]
            .as_array()
            .expect("runs")
            .iter()
            .map(|r| (r[0].as_u64().unwrap() as u32, r[1].to_string()))
            .collect()
    };
    let checks = [
        ("whitespace", (Spaces::Words, CharRule::Off, CharRule::Off)),
        ("numeric", (Spaces::Kept, CharRule::Off, CharRule::Isolated)),
        ("punct", (Spaces::Kept, CharRule::Isolated, CharRule::Off)),
        ("wsplit", (Spaces::Split, CharRule::Off, CharRule::Off)),
    ];
    for (key, (spaces, punctuation, digits)) in checks {
        let model = WpModel {
            split: WordSplit::new(spaces, punctuation, digits),
            clean_text: false,
            handle_chinese_chars: false,
            cleanup: false,
            ..WpModel::bert(
                vec!["[UNK]".into(), "a".into()],
                0,
                "##".into(),
                false,
                false,
                vec![],
            )
        };
        let data = WpTableData::new(&model).expect("tables");
        let runs = runs(key);
        let mut differ = Vec::new();
        data.with_tables(|t| {
            let tok = WpTokenizer::new(t);
            let mut run = 0;
            for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
                while runs.get(run + 1).is_some_and(|r| r.0 <= c as u32) {
                    run += 1;
                }
                let class = runs[run].1.as_str();
                let text = format!("a{c}a");
                let mut words = vec![String::new()];
                assert!(tok.pre_tokenize(text.as_bytes(), |ch| match ch {
                    Some(ch) => words.last_mut().unwrap().push(ch),
                    None => words.push(String::new()),
                }));
                words.pop();
                let want: Vec<String> = match class {
                    "\"w\"" | "0" => vec![text.clone()],
                    "\"s\"" => vec!["a".into(), "a".into()],
                    "1" if key == "wsplit" => vec!["a".into(), "a".into()],
                    "\"o\"" | "1" => vec!["a".into(), c.to_string(), "a".into()],
                    other => panic!("{key}: class {other}"),
                };
                if words != want {
                    differ.push(format!("U+{:04X}", c as u32));
                }
            }
        });
        assert!(
            differ.is_empty(),
            "{key}: {} code points differ from tokenizers: {:?}",
            differ.len(),
            &differ[..differ.len().min(20)]
        );
    }
}
