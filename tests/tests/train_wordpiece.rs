//! The WordPiece trainer against Hugging Face `tokenizers`' `WordPieceTrainer` 0.22.2
//! (`tests/fixtures/wp_train`, made by `tests/scripts/gen_wp_train_vectors.py`): the same
//! vocabulary in id order without a continuation prefix (where `tokenizers` is deterministic),
//! the same set with `##` (where its runs agree); and the trained model's `tokenizer.json`
//! loaded by `tokenizers` itself encodes the corpora as picobpe does.

use std::collections::{BTreeSet, HashMap};

use picobpe::{Specials, WpTokenizer};
use picobpe_model::wordpiece::{
    import_tokenizer_json, import_vocab_txt, VocabTxtOptions, WordCounter, WpModel, WpScore,
    WpTableData, WpTrainer,
};
use picobpe_model::TemplateData;
use picobpe_tests::paths;
use serde_json::Value;

struct Reference {
    name: String,
    config: Value,
    vocab: Vec<String>,
}

fn references() -> Vec<Reference> {
    let dir = paths::fixtures().join("wp_train");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("wp_train fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["tokenizers"], "0.22.2");
        out.push(Reference {
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            config: v["config"].clone(),
            vocab: serde_json::from_value(v["vocab"].clone()).unwrap(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(out.len(), 4, "reference configurations");
    out
}

fn flags(c: &Value) -> (bool, bool) {
    let lowercase = c["lowercase"].as_bool().unwrap();
    (lowercase, c["strip_accents"].as_bool().unwrap_or(lowercase))
}

fn counts(c: &Value) -> HashMap<String, u64> {
    let (lowercase, strip) = flags(c);
    let mut counter = WordCounter::new(lowercase, strip);
    for f in c["files"].as_array().unwrap() {
        let path = paths::vectors().join("texts").join(f.as_str().unwrap());
        counter.add(&std::fs::read(path).expect("corpus"));
    }
    counter.counts
}

fn trainer(c: &Value) -> WpTrainer {
    WpTrainer {
        vocab_size: c["vocab_size"].as_u64().unwrap() as usize,
        min_frequency: c["min_frequency"].as_u64().unwrap(),
        limit_alphabet: c["limit_alphabet"].as_u64().map(|n| n as usize),
        prefix: c["prefix"].as_str().unwrap().to_owned(),
        special_tokens: serde_json::from_value(c["special_tokens"].clone()).unwrap(),
        score: WpScore::Frequency,
    }
}

#[test]
fn vocabularies_match_tokenizers_trainer() {
    for r in references() {
        let got = trainer(&r.config).train(&counts(&r.config));
        match r.config["compare"].as_str().unwrap() {
            "order" => {
                if let Some(i) = (0..got.len().min(r.vocab.len())).find(|&i| got[i] != r.vocab[i]) {
                    panic!(
                        "{}: id {i} is {:?}, tokenizers' is {:?}",
                        r.name, got[i], r.vocab[i]
                    );
                }
                assert_eq!(got.len(), r.vocab.len(), "{}", r.name);
            }
            _ => {
                let (a, b): (BTreeSet<_>, BTreeSet<_>) =
                    (got.iter().collect(), r.vocab.iter().collect());
                let ours: Vec<_> = a.difference(&b).take(10).collect();
                let theirs: Vec<_> = b.difference(&a).take(10).collect();
                assert!(
                    ours.is_empty() && theirs.is_empty(),
                    "{}: only ours {ours:?}, only tokenizers' {theirs:?}",
                    r.name
                );
                // The special tokens and the alphabet come first, in the same order.
                let n = got.iter().position(|e| e.starts_with("##")).unwrap();
                assert_eq!(got[..n], r.vocab[..n], "{}", r.name);
            }
        }
    }
}

/// The trained model written as `tokenizer.json` and `vocab.txt`: both import back to the same
/// model, and `tokenizers` loading the `tokenizer.json` encodes every corpus as picobpe does.
#[test]
fn trained_models_load_in_tokenizers() {
    for r in references() {
        let t = trainer(&r.config);
        if t.prefix.is_empty() {
            continue; // WordPiece needs a continuation prefix to tell pieces apart.
        }
        let (lowercase, strip) = flags(&r.config);
        let model = t
            .bert_model(t.train(&counts(&r.config)), "[UNK]", lowercase, strip)
            .expect("model");
        let json = model.to_tokenizer_json().expect("tokenizer.json");
        let file = picobpe_model::TokenizerJson::parse(json.as_bytes()).expect("parses");
        assert_eq!(import_tokenizer_json(&file).expect("imports").model, model);
        // BERT's template, as `transformers`' `BertTokenizer` adds it.
        let template = TemplateData::bert(&model);
        assert_eq!(TemplateData::from_tokenizer_json(&file).unwrap(), template);
        assert!(
            !template.is_empty(),
            "{}: [CLS] and [SEP] are among the specials",
            r.name
        );
        let options = VocabTxtOptions {
            lowercase,
            strip_accents: Some(strip),
        };
        let vocab_txt = model.to_vocab_txt().expect("vocab.txt");
        let from_txt: WpModel = import_vocab_txt(vocab_txt.as_bytes(), &options).expect("imports");
        assert_eq!(from_txt.vocab, model.vocab, "{}", r.name);
        let reference = tokenizers::Tokenizer::from_bytes(json.as_bytes()).expect("tokenizers");
        let tables = WpTableData::new(&model).expect("tables").to_tables();
        let tok = WpTokenizer::new(tables);
        for name in [
            "corpus-english.txt",
            "corpus-de.txt",
            "corpus-zh.txt",
            "corpus-ko.txt",
        ] {
            let text = std::fs::read_to_string(paths::vectors().join("texts").join(name)).unwrap();
            let want = reference
                .encode(text.as_str(), false)
                .unwrap()
                .get_ids()
                .to_vec();
            let mut out = vec![0u32; text.len() + 8];
            let n = tok
                .encode(text.as_bytes(), &mut out, Specials::All)
                .expect("encode");
            assert_eq!(out[..n], want[..], "{} on {name}", r.name);
            let with = reference
                .encode(text.as_str(), true)
                .unwrap()
                .get_ids()
                .to_vec();
            let framed = [&template.prefix[..], &out[..n], &template.suffix[..]].concat();
            assert_eq!(framed, with, "{} on {name}, with [CLS] and [SEP]", r.name);
        }
    }
}
