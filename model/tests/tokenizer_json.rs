//! The one `tokenizer.json` reader: each committed file goes to the importer of its family,
//! sequences are read as their steps, added tokens follow one rule for every family, and a
//! malformed model is a parse error that names the field.

use std::path::PathBuf;

use picobpe_model::import;
use picobpe_model::tokenizer_json::Family;
use picobpe_model::{sentencepiece, wordpiece, TokenizerJson};
use serde_json::{json, Value};

fn fixture(rel: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap()
}

fn parse(json: &Value) -> TokenizerJson {
    TokenizerJson::parse(&serde_json::to_vec(json).unwrap()).expect("parses")
}

const LLAMA3: &str = "hf_bpe/llama3-8k/tokenizer.json";
const QWEN2: &str = "hf_bpe/qwen2-8k/tokenizer.json";
const SP4096: &str = "sentencepiece/models/sp4096.tokenizer.json";
const UG4096: &str = "unigram/models/ug4096-bytes.tokenizer.json";
const BERT: &str = "wordpiece/bert-cased-8k/tokenizer.json";

#[test]
fn every_file_goes_to_its_family() {
    for (rel, family) in [
        (LLAMA3, Family::ByteLevel),
        (QWEN2, Family::ByteLevel),
        (SP4096, Family::SentencePiece),
        (UG4096, Family::SentencePiece),
        (BERT, Family::WordPiece),
    ] {
        assert_eq!(parse(&fixture(rel)).family(), family, "{rel}");
    }
    // A model type no importer reads is kept by name, and refused by it.
    let mut other = fixture(BERT);
    other["model"] = json!({"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"});
    let file = parse(&other);
    assert_eq!(file.family(), Family::SentencePiece);
    let err = sentencepiece::import_tokenizer_json(&file).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the model type is WordLevel; picobpe imports SentencePiece BPE and Unigram models only"
    );
    let err = wordpiece::import_tokenizer_json(&file).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tokenizer.json model.type: \"WordLevel\": not WordPiece"
    );
}

/// A byte-level or WordPiece file with no decoder is refused: `tokenizers` would decode its
/// ids as the tokens joined by spaces, which these families do not render.
#[test]
fn no_decoder_is_refused_where_it_would_decode_otherwise() {
    let mut llama = fixture(LLAMA3);
    llama["decoder"] = Value::Null;
    let Err(err) = import::tokenizer_json(&parse(&llama)) else {
        panic!("a byte-level file with no decoder imported");
    };
    assert!(
        err.to_string()
            .starts_with("tokenizer.json decoder: none: tokenizers decodes the ids as their"),
        "{err}"
    );
    let mut bert = fixture(BERT);
    bert["decoder"] = Value::Null;
    let err = wordpiece::import_tokenizer_json(&parse(&bert)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tokenizer.json decoder: none: tokenizers decodes the ids as the tokens"),
        "{err}"
    );
}

#[test]
fn a_malformed_model_is_a_parse_error_naming_the_field() {
    let mut json = fixture(BERT);
    json["model"]["vocab"]["[UNK]"] = json!("one");
    let err = TokenizerJson::parse(&serde_json::to_vec(&json).unwrap()).unwrap_err();
    assert!(err.to_string().starts_with("model: invalid type"), "{err}");
    let mut json = fixture(UG4096);
    json["model"]["dropout"] = json!(0.1);
    let err = TokenizerJson::parse(&serde_json::to_vec(&json).unwrap()).unwrap_err();
    assert!(err.to_string().contains("unknown field `dropout`"), "{err}");
}

#[test]
fn sequences_are_read_as_their_steps() {
    // Qwen2's NFC inside a (nested) Sequence is the same normalizer.
    let mut json = fixture(QWEN2);
    json["normalizer"] = json!({"type": "Sequence", "normalizers": [
        {"type": "Sequence", "normalizers": [{"type": "NFC"}]}
    ]});
    let nested = import::tokenizer_json(&parse(&json)).unwrap();
    let plain = import::tokenizer_json(&parse(&fixture(QWEN2))).unwrap();
    assert_eq!(nested.model, plain.model);
    // A step picobpe does not read is named, not the Sequence around it.
    let steps = json["normalizer"]["normalizers"].as_array_mut().unwrap();
    steps.push(json!({"type": "NFKC"}));
    let err = import::tokenizer_json(&parse(&json)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tokenizer.json normalizer: \"NFC + NFKC\": supported: NFC, NFD, NFKC or NFKD first or \
         none, then Lowercase and Replace(Regex(\"\\s+\"), \" \"), each at most once"
    );
}

#[test]
fn added_tokens_follow_one_rule() {
    // `normalized` matters only behind a normalizer: Llama 3 has none.
    let mut json = fixture(LLAMA3);
    json["added_tokens"][0]["normalized"] = true.into();
    import::tokenizer_json(&parse(&json)).unwrap();
    // BERT's lowercasing normalizer would match "[cls]" too: refused.
    let mut json = fixture(BERT);
    json["added_tokens"][2]["normalized"] = true.into();
    let err = wordpiece::import_tokenizer_json(&parse(&json)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tokenizer.json added_tokens: \"[CLS]\": normalized is not supported"
    );
    // Not marked special: matched all the same, with a note.
    let mut json = fixture(LLAMA3);
    json["added_tokens"][1]["special"] = false.into();
    let imported = import::tokenizer_json(&parse(&json)).unwrap();
    assert!(
        imported.notes.iter().any(|n| n
            .starts_with("added tokens not marked special (<|end_of_text|>) are matched")),
        "{:?}",
        imported.notes
    );
    // The same flags are refused in every family.
    for rel in [LLAMA3, SP4096, BERT] {
        let mut json = fixture(rel);
        json["added_tokens"][0]["single_word"] = true.into();
        let file = parse(&json);
        let err = match file.family() {
            Family::ByteLevel => import::tokenizer_json(&file).unwrap_err().to_string(),
            Family::SentencePiece => sentencepiece::import_tokenizer_json(&file)
                .unwrap_err()
                .to_string(),
            Family::WordPiece => wordpiece::import_tokenizer_json(&file)
                .unwrap_err()
                .to_string(),
        };
        assert!(
            err.ends_with(": single_word is not supported"),
            "{rel}: {err}"
        );
    }
}
