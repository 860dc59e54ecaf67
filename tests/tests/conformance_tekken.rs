//! Mistral's `tekken.json` (`fixtures/tekken`, Apache-2.0: Mistral NeMo's tokenizer as
//! `mistral-common` ships it) imports as `mistral-common`'s `Tekkenizer` reads it, and every id of
//! every text is the Tekkenizer's (`tests/scripts/gen_tekken_vectors.py`): one-shot, resumed
//! through small buffers, counted, from the model file, and decoded back. Also a v13-style
//! variant that lists its own special tokens and cuts the vocabulary, the same vocabulary as a
//! `tokenizer.json` (`transformers`' conversion, cut to 8,192 ranks) checked against
//! `tokenizers`, and the files the Tekkenizer would not load, refused with the cause.
//!
//! Heavy (a 130k-token import): run with `cargo test --release -p picobpe-tests --test
//! conformance_tekken`.

use std::io::Read;
use std::sync::OnceLock;

use picobpe::{Specials, Tokenizer};
use picobpe_model::import::{tekken, TekkenImport};
use picobpe_model::{PatternKind, PieceTable, TableData};
use picobpe_tests::check::{self, Rng};
use serde_json::Value;

/// The published file, as JSON.
fn published() -> &'static Value {
    static FILE: OnceLock<Value> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = picobpe_tests::paths::fixtures().join("tekken/tekken_240718.json.gz");
        let gz = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(gz.as_slice())
            .read_to_end(&mut json)
            .unwrap();
        serde_json::from_slice(&json).unwrap()
    })
}

fn manifest() -> Value {
    let path = picobpe_tests::paths::fixtures().join("tekken/MANIFEST.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn import(file: &Value) -> Result<TekkenImport, picobpe_model::import::ImportError> {
    tekken(&serde_json::to_vec(file).unwrap())
}

/// The published file with MANIFEST's `variant` applied, as the generator builds it.
fn variant() -> Value {
    let m = manifest();
    let v = &m["variant"];
    let mut file = published().clone();
    file["config"]["version"] = v["version"].clone();
    file["config"]["default_vocab_size"] = v["default_vocab_size"].clone();
    let specials: Vec<Value> = v["special_tokens"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"rank": i, "token_str": t, "is_control": true}))
        .collect();
    file["special_tokens"] = Value::Array(specials);
    file
}

fn tables(import: &TekkenImport) -> &'static picobpe::Tables<'static> {
    TableData::new(&import.model, PieceTable::Full)
        .unwrap()
        .to_tables()
}

/// Every set of `stem`: ids, round trip, resumed encode, count; through the model file too.
fn check_sets(stem: &str, import: &TekkenImport) -> usize {
    let tok = Tokenizer::new(tables(import));
    let from_file = picobpe_tests::through_model_file(stem, |path| {
        picobpe_model::AnyModel::BytePair(import.model.clone()).write(path, &import.template)
    });
    let picobpe_model::LiveTables::BytePair(from_file) = from_file else {
        panic!("{stem}: the model file loaded as another family");
    };
    let from_file = Tokenizer::new(from_file);
    let mut checked = 0;
    for set in picobpe_tests::sp::sets(stem) {
        for case in picobpe_tests::sp::load(stem, &set) {
            let what = format!("{stem} {set} {}", case.name);
            let ids = check::encode(&tok, &case.input, Specials::None).unwrap();
            assert_eq!(ids, case.ids, "{what}");
            let mut rng = Rng::new(&what, 7);
            let cache = &mut vec![picobpe::CacheEntry::EMPTY; 64];
            let resumed = check::encode_resumed(&tok, &case.input, Specials::None, &mut rng, cache);
            assert_eq!(resumed.unwrap(), case.ids, "{what}: resumed");
            assert_eq!(
                check::count(&tok, &case.input, Specials::None).unwrap(),
                case.ids.len(),
                "{what}: count"
            );
            let ids = check::encode(&from_file, &case.input, Specials::None).unwrap();
            assert_eq!(ids, case.ids, "{what}: model file");
            assert_eq!(
                check::decode(&tok, &case.ids).unwrap(),
                case.input,
                "{what}"
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn published_file_encodes_as_the_tekkenizer() {
    let m = manifest();
    let i = import(published()).unwrap();
    assert_eq!(i.model.pattern, PatternKind::Tekken);
    assert_eq!(
        i.model.n_ids() as u64,
        m["file"]["n_words"].as_u64().unwrap()
    );
    assert_eq!(
        i.model.specials.len() as u64,
        m["file"]["num_special_tokens"].as_u64().unwrap()
    );
    // `encode --add-special-tokens`: `Tekkenizer.encode(text, bos=True, eos=False)`.
    assert_eq!(
        i.template.prefix,
        [m["file"]["bos_id"].as_u64().unwrap() as u32]
    );
    assert!(i.template.suffix.is_empty());
    assert!(check_sets("tekken", &i) > 4000);
}

#[test]
fn listed_specials_and_a_cut_vocabulary_as_the_tekkenizer() {
    let m = manifest();
    let i = import(&variant()).unwrap();
    let v = &m["variant"];
    assert_eq!(
        i.model.n_ids() as u64,
        v["default_vocab_size"].as_u64().unwrap()
    );
    assert_eq!(i.template.prefix, [v["bos_id"].as_u64().unwrap() as u32]);
    // Listed texts first, then `<SPECIAL_i>` fillers, as the Tekkenizer names them.
    assert_eq!(i.model.specials[22], ("[THINK]".to_owned(), 22));
    assert_eq!(i.model.specials[24], ("<SPECIAL_24>".to_owned(), 24));
    assert!(check_sets("tekken-v13", &i) > 50);
}

/// The `tokenizer.json` form (`Split` with the Tekken pattern, `ByteLevel`, `ignore_merges`,
/// the specials as added tokens) imports with the Tekken pattern and gives `tokenizers`' ids,
/// which the generator checked equal to the Tekkenizer's with the same cut.
#[test]
fn tokenizer_json_form_encodes_as_tokenizers() {
    let path = picobpe_tests::paths::fixtures().join("tekken/tekken-8k.tokenizer.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = picobpe_model::TokenizerJson::parse(&bytes).unwrap();
    let imported = picobpe_model::import::tokenizer_json(&file).unwrap();
    assert_eq!(imported.model.pattern, PatternKind::Tekken);
    assert_eq!(imported.model.n_ids(), 1000 + 8192);
    assert_eq!(imported.model.specials.len(), 1000);
    let import = TekkenImport {
        model: imported.model,
        template: picobpe_model::TemplateData::default(),
    };
    assert!(check_sets("tekken-8k", &import) > 4000);
}

/// Special-token text is the Tekkenizer's plain text (above, with `Specials::None`); picobpe's
/// default recognizes it, as for every byte-level model.
#[test]
fn special_text_is_recognized_unless_ordinary() {
    let i = import(published()).unwrap();
    let tok = Tokenizer::new(tables(&i));
    let ids = check::encode(&tok, b"[INST]hi[/INST]", Specials::All).unwrap();
    assert_eq!(ids.first(), Some(&3));
    assert_eq!(ids.last(), Some(&4));
    let plain = check::encode(&tok, b"[INST]", Specials::None).unwrap();
    assert!(plain.iter().all(|&id| id >= 1000), "{plain:?}");
}

/// What the Tekkenizer would not load is refused with the cause.
#[test]
fn files_the_tekkenizer_refuses_are_refused() {
    let refused = |edit: &dyn Fn(&mut Value), want: &str| {
        let mut file = published().clone();
        edit(&mut file);
        let e = import(&file).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    };
    refused(
        &|f| f["config"]["version"] = "v13".into(),
        "no special_tokens list, which a v13 file must have",
    );
    refused(
        &|f| f["config"]["version"] = "v4".into(),
        "config.version \"v4\" is not one mistral-common knows",
    );
    refused(
        &|f| f["config"]["pattern"] = r"\w+|\s+".into(),
        r#"config.pattern "\\w+|\\s+" is not one picobpe splits"#,
    );
    refused(
        &|f| f["config"]["default_vocab_size"] = 200_000.into(),
        "default_vocab_size 200000 is not between",
    );
    refused(&|f| f["vocab"][5]["rank"] = 6.into(), "vocab[5] has rank 6");
    refused(
        &|f| f["vocab"][7]["token_bytes"] = "B".into(),
        "vocab[7].token_bytes \"B\" is not base64",
    );
    refused(
        &|f| {
            f["special_tokens"] =
                serde_json::json!([{"rank": 1, "token_str": "<s>", "is_control": true}])
        },
        "special_tokens[0] (\"<s>\") has rank 1",
    );
    refused(
        &|f| f["config"]["default_num_special_tokens"] = 4_000_000_000u64.into(),
        "default_num_special_tokens 4000000000 is more than picobpe reads (1048576)",
    );
    refused(
        &|f| f["config"]["default_num_special_tokens"] = 5.into(),
        "20 special tokens listed, more than default_num_special_tokens = 5",
    );
}
