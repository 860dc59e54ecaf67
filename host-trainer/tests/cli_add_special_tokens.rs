//! `encode --add-special-tokens`: every committed model file (`tokenizer.json`, SentencePiece
//! `.model`, `vocab.txt`) imported with `host-trainer import`, then encoded with and without
//! the flag: the ids of `tokenizers` / transformers from `tests/fixtures/post/vectors.json`
//! (`tests/scripts/gen_post_vectors.py`). Every text goes through the core's `StreamEncoder`
//! with the model file's template, taken one id at a time; a few through the CLI. Also the
//! refusals: a post-processor picobpe does not read, a damaged template in a model file; and
//! `inspect` naming the template.

mod cli_common;

use std::path::PathBuf;

use cli_common::{fails, ok, scratch};
use picobpe::{AnyTokenizer, Specials, StreamEncoder, Template};
use picobpe_model::{read_tables_with_template, AnyModel, ModelError, TemplateData};
use serde_json::Value;

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

/// `host-trainer import ARGS --out NAME.model` (file arguments relative to the repository);
/// a case with its own `post_processor` imports a copy of its `tokenizer.json` holding it.
fn import(name: &str, args: &[Value], post_processor: Option<&Value>) -> PathBuf {
    let mut args: Vec<String> = args
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    for i in 1..args.len() {
        if args[i - 1].starts_with("--") && args[i].starts_with("tests/") {
            args[i] = repo(&args[i]).to_str().unwrap().to_owned();
        }
    }
    let file = name.replace('/', "_");
    if let Some(post) = post_processor {
        let mut json: Value = serde_json::from_slice(&std::fs::read(&args[1]).unwrap()).unwrap();
        json["post_processor"] = post.clone();
        let path = scratch().join(format!("{file}.tokenizer.json"));
        std::fs::write(&path, json.to_string()).unwrap();
        args[1] = path.to_str().unwrap().to_owned();
    }
    let out = scratch().join(format!("{file}.model"));
    args.splice(0..0, ["import".to_owned()]);
    args.extend(["--out".to_owned(), out.to_str().unwrap().to_owned()]);
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>(), b"");
    out
}

/// The ids of `text` through a stream with `template`, taken one id at a time.
fn stream(
    tok: AnyTokenizer<'static>,
    template: &'static Template<'static>,
    text: &[u8],
) -> Vec<u32> {
    let enc = StreamEncoder::<_, 1024, 4096>::new(tok, Specials::All).with_template(template);
    let mut enc = Box::new(enc);
    assert_eq!(enc.push(text), Ok(text.len()));
    enc.finish();
    let (mut ids, mut one) = (Vec::new(), [0u32; 1]);
    while enc.take(&mut one).unwrap() == 1 {
        ids.push(one[0]);
    }
    assert!(enc.is_done());
    ids
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_u64().unwrap() as u32)
        .collect()
}

fn encode_cli(model: &str, flags: &[&str], text: &str) -> Vec<u32> {
    let mut args = vec!["encode", "--model", model];
    args.extend_from_slice(flags);
    let out = String::from_utf8(ok(&args, text.as_bytes())).unwrap();
    out.split_whitespace().map(|n| n.parse().unwrap()).collect()
}

#[test]
fn ids_equal_tokenizers_and_transformers() {
    let doc: Value =
        serde_json::from_slice(&std::fs::read(repo("tests/fixtures/post/vectors.json")).unwrap())
            .unwrap();
    let texts: Vec<&str> = doc["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 13);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let args = case["import"].as_array().unwrap();
        let model = import(name, args, case.get("post_processor"));
        let (tables, template) = read_tables_with_template(&model).unwrap();
        let tok = tables.tokenizer();
        let (with, plain) = (
            case["with_specials"].as_array().unwrap(),
            case["plain"].as_array().unwrap(),
        );
        for (i, text) in texts.iter().enumerate() {
            let b = text.as_bytes();
            assert_eq!(
                stream(tok, template, b),
                ids(&with[i]),
                "{name} {text:?} with specials"
            );
            assert_eq!(
                stream(tok, &Template::NONE, b),
                ids(&plain[i]),
                "{name} {text:?}"
            );
        }
        // The CLI: the empty text (the template alone) and one more, and `count`.
        let model = model.to_str().unwrap();
        for i in [0, 5] {
            let flag = ["--add-special-tokens"];
            assert_eq!(
                encode_cli(model, &flag, texts[i]),
                ids(&with[i]),
                "{name} CLI"
            );
            assert_eq!(
                encode_cli(model, &[], texts[i]),
                ids(&plain[i]),
                "{name} CLI"
            );
        }
        // `inspect` names the template's tokens around `$A`, in the reference's order (the
        // empty text's ids are the template alone), and says nothing without one.
        let shown = String::from_utf8(ok(&["inspect", "--model", model], b"")).unwrap();
        let line = shown
            .lines()
            .find_map(|l| l.strip_prefix("with --add-special-tokens: "));
        let words: Vec<&str> =
            line.map_or(vec![], |l| l.split(' ').filter(|w| *w != "$A").collect());
        let any = AnyModel::read(model).unwrap();
        let want: Vec<String> = ids(&with[0])
            .iter()
            .map(|&id| token_text(&any, id))
            .collect();
        assert_eq!(words, want, "{name} inspect");
        let count = ok(
            &["count", "--model", model, "--add-special-tokens"],
            texts[5].as_bytes(),
        );
        assert_eq!(
            String::from_utf8(count).unwrap().trim(),
            with[5].as_array().unwrap().len().to_string()
        );
    }
}

/// The text of token `id` of `model`.
fn token_text(model: &AnyModel, id: u32) -> String {
    let i = id as usize;
    match model {
        AnyModel::BytePair(m) => String::from_utf8_lossy(&m.tokens[i]).into_owned(),
        AnyModel::SentencePiece(m) => m.pieces[i].piece.clone(),
        AnyModel::WordPiece(m) => m.vocab[i].clone(),
    }
}

/// A `tokenizer.json` (Qwen2's, with `post_processor` replaced) for the refusals.
fn qwen2_with(post_processor: Value) -> PathBuf {
    let path = repo("tests/fixtures/hf_bpe/qwen2-8k/tokenizer.json");
    let mut json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["post_processor"] = post_processor;
    let out = scratch().join("refused.tokenizer.json");
    std::fs::write(&out, json.to_string()).unwrap();
    out
}

#[test]
fn unknown_post_processors_are_refused_by_name() {
    let roberta = serde_json::json!({"type": "RobertaProcessing", "sep": ["<|im_end|>", 8194],
        "cls": ["<|im_start|>", 8193], "trim_offsets": true, "add_prefix_space": false});
    let cases = [
        (
            serde_json::json!({"type": "Frobnicate", "x": 1}),
            "tokenizer.json post_processor: \"Frobnicate\" is not supported: {\"type\":\"Frobnicate\",\"x\":1}",
        ),
        (
            serde_json::json!({"type": "Sequence", "processors": [roberta.clone(), roberta]}),
            "tokenizer.json post_processor: a Sequence of two steps that add ids is not supported",
        ),
    ];
    for (post, message) in cases {
        let json = qwen2_with(post);
        let out = scratch().join("refused.model");
        let args = [
            "import",
            "--tokenizer-json",
            json.to_str().unwrap(),
            "--out",
        ];
        let stderr = fails(&[&args[..], &[out.to_str().unwrap()]].concat(), b"");
        assert!(stderr.contains(message), "{stderr}");
        assert!(!out.exists());
    }
}

#[test]
fn a_damaged_template_is_refused() {
    let vocab = [(
        "--wordpiece-vocab",
        "tests/fixtures/wordpiece/minilm-uncased/vocab.txt",
    )];
    let args: Vec<Value> = vocab
        .iter()
        .flat_map(|(k, v)| [(*k).into(), (*v).into()])
        .collect();
    let model = import("damaged", &args, None);
    let bytes = std::fs::read(&model).unwrap();
    let (wordpiece, template) = AnyModel::from_bytes_with_template(&bytes).unwrap();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 4);
    assert_eq!(template.prefix, [101]);
    // A version-4 file whose template's prefix is id 4,000,000 (a WordPiece file has no
    // tables, so the longer template moves nothing that must stay aligned).
    let bad = TemplateData {
        prefix: vec![4_000_000],
        suffix: vec![102],
    };
    let old = postcard::to_stdvec(&template).unwrap();
    let new = postcard::to_stdvec(&bad).unwrap();
    let part_len = u32::from_le_bytes(bytes[18..22].try_into().unwrap()) as usize;
    let mut payload = ((part_len - old.len() + new.len()) as u32)
        .to_le_bytes()
        .to_vec();
    payload.extend_from_slice(&new);
    payload.extend_from_slice(&bytes[22 + old.len()..]);
    let mut file = bytes[..10].to_vec();
    file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    file.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    file.extend_from_slice(&payload);
    let message =
        "model file's special-token template holds id 4000000, but the model has only 30522 ids";
    match AnyModel::from_bytes_with_template(&file) {
        Err(
            e @ ModelError::BadTemplate {
                id: 4_000_000,
                n_ids: 30522,
            },
        ) => assert_eq!(e.to_string(), message),
        other => panic!("{other:?}"),
    }
    let path = scratch().join("damaged-template.model");
    std::fs::write(&path, &file).unwrap();
    let stderr = fails(&["encode", "--model", path.to_str().unwrap()], b"text");
    assert!(stderr.contains(message), "{stderr}");
    // Nor is such a template written.
    let written = wordpiece.to_bytes_with(&bad);
    assert!(matches!(written, Err(ModelError::BadTemplate { .. })));
}
