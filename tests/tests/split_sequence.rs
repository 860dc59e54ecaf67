//! `tokenizer.json` files whose pre-tokenizer is a `Sequence` of `Split`s that none of the
//! hand-rolled splitters implements, against the reference library itself (the `tokenizers`
//! crate, the code the Python package runs): the Llama 3 vocabulary cut to 8k with DeepSeek
//! V3's pre-tokenizer (three `Split`s, then `ByteLevel` without its regex), and with
//! StarCoder-style single digits before `ByteLevel`'s own regex, with `ByteLevel` alone
//! without its regex (no split at all), and with `ByteLevel`'s `add_prefix_space` (a space
//! before each text between added tokens), with and without its regex. picobpe imports the file,
//! writes a model file (format version 6) and reads its tables back; both encode the committed
//! texts, the shared corpora when present and seeded random texts: one shot, resumed through
//! small output buffers, streamed in random chunks, and counted. Zero differences allowed.

use picobpe::{Specials, StreamEncoder, Tokenizer};
use picobpe_model::{AnyModel, LiveTables, TemplateData, TokenizerJson};
use picobpe_tests::check::{self, Rng};
use picobpe_tests::{paths, through_model_file};
use serde_json::{json, Value};

/// DeepSeek V3's (and R1's) pre-tokenizer, as its `tokenizer.json` spells it.
fn deepseek_v3() -> Value {
    let split = |regex: &str| json!({"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": false});
    json!({"type": "Sequence", "pretokenizers": [
        split(r"\p{N}{1,3}"),
        split("[一-龥\u{3040}-ゟ゠-ヿ]+"),
        split(r"[!-/:-@\[-`{-~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
    ]})
}

/// Single digits split off, then `ByteLevel` with its own (GPT-2) regex: StarCoder's and
/// SmolLM's shape, with the digits as a `Split` of one character.
fn digits_then_byte_level() -> Value {
    json!({"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\p{N}"}, "behavior": "Isolated", "invert": false},
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
    ]})
}

/// `ByteLevel` without its regex and no `Split`: nothing splits, the whole text between added
/// tokens is one piece (a `tokenizer.json` built with `ByteLevel(use_regex=False)` alone).
fn byte_level_without_regex() -> Value {
    json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false})
}

/// `Digits` (single digits, or runs) or `Punctuation` (`Isolated` or `Contiguous`) before
/// `ByteLevel` with its regex: SmolLM's, StarCoder2's and Cohere's `Digits` shape.
fn char_step_then_byte_level(step: Value) -> Value {
    json!({"type": "Sequence", "pretokenizers": [
        step,
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
    ]})
}

/// `ByteLevel` with `add_prefix_space` (RoBERTa-, BART- and GPT-NeoX-style files made with
/// `add_prefix_space=True`), with or without its regex.
fn byte_level_prefix_space(use_regex: bool) -> Value {
    json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": use_regex})
}

/// The reference tokenizer for the 8k Llama 3 file with `pre_tokenizer`, and picobpe's
/// tables for the same file, read back from a model file (which takes compiled splits when
/// `compiled`, else a hand-rolled splitter).
fn pair(
    pre_tokenizer: Value,
    compiled: bool,
) -> (tokenizers::Tokenizer, &'static Tokenizer<'static>) {
    let path = paths::fixtures().join("hf_bpe/llama3-8k/tokenizer.json");
    let mut file: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("fixture")).expect("json");
    file["pre_tokenizer"] = pre_tokenizer;
    let bytes = serde_json::to_vec(&file).expect("json");
    let mut reference = tokenizers::Tokenizer::from_bytes(&bytes).expect("tokenizers loads it");
    reference.with_padding(None);
    reference.with_truncation(None).expect("no truncation");
    let parsed = TokenizerJson::parse(&bytes).expect("a tokenizer.json");
    let model = picobpe_model::import::tokenizer_json(&parsed)
        .expect("import")
        .model;
    assert_eq!(!model.splits.is_empty(), compiled, "compiled splits");
    let model = AnyModel::BytePair(model);
    let live = through_model_file("split", |p| model.write(p, &TemplateData::default()));
    let LiveTables::BytePair(tables) = live else {
        panic!("not byte-level tables")
    };
    (reference, Box::leak(Box::new(Tokenizer::new(tables))))
}

/// Texts: the committed fixtures, 100 KB of each shared multilingual file when present, and
/// seeded random texts of digits, CJK and kana runs, punctuation, symbols, whitespace and
/// the file's added tokens.
fn texts(label: &str) -> Vec<String> {
    let mut texts = check::fixture_and_corpus_texts();
    const PARTS: [&str; 31] = [
        " ",
        "  ",
        "\n",
        "\r\n",
        "\t",
        "\u{3000}",
        "12",
        "3456",
        "٣",
        "漢字",
        "かな",
        "カナ",
        "word",
        "Word",
        "é",
        "!",
        "...",
        "(x)",
        "#define",
        "$5",
        "€",
        "🙂",
        "'s",
        "\u{301}",
        "<|eot_id|>",
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "½²Ⅻ",
        "¡¿«»—",
        "、。",
        "_-",
    ];
    let mut rng = Rng::new(label, 7);
    for _ in 0..3_000 {
        let n = rng.range(0, 16);
        texts.push(
            (0..n)
                .map(|_| PARTS[rng.range(0, PARTS.len() - 1)])
                .collect(),
        );
    }
    texts
}

/// Compare on every text; streamed only up to `stream_bytes` (a piece must fit the stream's
/// 4,096-byte input buffer, and without a split a text is one piece).
fn check(label: &str, pre_tokenizer: Value, stream_bytes: usize, compiled: bool) {
    let (reference, ours) = pair(pre_tokenizer, compiled);
    let mut rng = Rng::new(label, 1);
    let mut failed = Vec::new();
    for text in texts(label) {
        let want = reference
            .encode(text.as_str(), false)
            .expect("encode")
            .get_ids()
            .to_vec();
        let bytes = text.as_bytes();
        let mut stream: StreamEncoder<Tokenizer<'static>, 4096, 8192> =
            StreamEncoder::new(*ours, Specials::All);
        let mut got = vec![
            (
                "one shot",
                check::encode(ours, bytes, Specials::All).map_err(|e| e.to_string()),
            ),
            (
                "resumed",
                check::encode_resumed(ours, bytes, Specials::All, &mut rng, &mut []),
            ),
        ];
        if bytes.len() <= stream_bytes {
            let streamed = check::encode_streamed(&mut stream, bytes, &mut rng);
            got.push(("streamed", streamed.map_err(|e| e.to_string())));
        }
        for (how, ids) in got {
            if ids.as_ref() != Ok(&want) && failed.len() < 8 {
                failed.push(check::first_difference(how, &text, &want, &ids));
            }
        }
        let counted = check::count(ours, bytes, Specials::All).map_err(|e| e.to_string());
        if counted != Ok(want.len()) && failed.len() < 8 {
            let short: String = text.chars().take(80).collect();
            failed.push(format!(
                "count {short:?}: want {}, got {counted:?}",
                want.len()
            ));
        }
    }
    assert!(failed.is_empty(), "{label}:\n{}", failed.join("\n"));
}

#[test]
fn deepseek_v3_pre_tokenizer_matches_tokenizers() {
    check("deepseek-v3", deepseek_v3(), usize::MAX, true);
}

#[test]
fn digits_then_byte_level_matches_tokenizers() {
    check(
        "digits+bytelevel",
        digits_then_byte_level(),
        usize::MAX,
        true,
    );
}

#[test]
fn byte_level_without_regex_matches_tokenizers() {
    check("bytelevel-no-regex", byte_level_without_regex(), 2048, true);
}

#[test]
fn digits_and_punctuation_before_byte_level_match_tokenizers() {
    for (label, step) in [
        (
            "digits-single",
            json!({"type": "Digits", "individual_digits": true}),
        ),
        (
            "digits-runs",
            json!({"type": "Digits", "individual_digits": false}),
        ),
        (
            "punct-isolated",
            json!({"type": "Punctuation", "behavior": "Isolated"}),
        ),
        (
            "punct-contiguous",
            json!({"type": "Punctuation", "behavior": "Contiguous"}),
        ),
        (
            "punct-merged-previous",
            json!({"type": "Punctuation", "behavior": "MergedWithPrevious"}),
        ),
        (
            "punct-merged-next",
            json!({"type": "Punctuation", "behavior": "MergedWithNext"}),
        ),
        (
            "punct-removed",
            json!({"type": "Punctuation", "behavior": "Removed"}),
        ),
    ] {
        check(label, char_step_then_byte_level(step), usize::MAX, true);
    }
}

/// A `Split` with each behaviour, inverted and not, before `ByteLevel` without its regex (so
/// the split's pieces are the model's): digits and whitespace, which follow one another and
/// the text between them in every way (`Removed` drops them, or inverted everything else).
#[test]
fn split_behaviors_match_tokenizers() {
    for behavior in [
        "Isolated",
        "MergedWithPrevious",
        "MergedWithNext",
        "Contiguous",
        "Removed",
    ] {
        for invert in [false, true] {
            let pre_tokenizer = json!({"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": r"\p{N}|\s"}, "behavior": behavior, "invert": invert},
                {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
            ]});
            let label = format!("{behavior}{}", if invert { "-inverted" } else { "" });
            check(&label, pre_tokenizer, 2048, true);
        }
    }
}

#[test]
fn byte_level_prefix_space_matches_tokenizers() {
    check(
        "bytelevel-prefix",
        byte_level_prefix_space(true),
        usize::MAX,
        false,
    );
}

#[test]
fn byte_level_prefix_space_without_regex_matches_tokenizers() {
    check(
        "bytelevel-prefix-no-regex",
        byte_level_prefix_space(false),
        2048,
        true,
    );
}

/// The committed vectors of `fixtures/hf_compiled/deepseek-8k` (DeepSeek V3's pre-tokenizer on
/// the 8k Llama 3 vocabulary; `tests/scripts/gen_compiled_vectors.py`, `tokenizers` 0.22.2),
/// which the firmware's compiled-pattern configuration checks on target: picobpe's ids through
/// a model file equal them, with special tokens and without, one shot and resumed.
#[test]
fn deepseek_8k_vectors_match() {
    use picobpe_tests::vectors::{inputs, Set};
    use std::io::Read;
    let dir = paths::fixtures().join("hf_compiled/deepseek-8k");
    let bytes = std::fs::read(dir.join("tokenizer.json")).expect("fixture");
    let parsed = TokenizerJson::parse(&bytes).expect("a tokenizer.json");
    let model = picobpe_model::import::tokenizer_json(&parsed)
        .expect("import")
        .model;
    let model = AnyModel::BytePair(model);
    let live = through_model_file("deepseek", |p| model.write(p, &TemplateData::default()));
    let LiveTables::BytePair(tables) = live else {
        panic!("not byte-level tables")
    };
    let ours = Tokenizer::new(tables);
    let mut rng = Rng::new("deepseek-8k", 3);
    let (mut checked, mut failed) = (0usize, Vec::new());
    for set in [Set::Fixtures, Set::Corpus, Set::Random] {
        let texts: std::collections::HashMap<String, Vec<u8>> =
            inputs(set).into_iter().map(|i| (i.name, i.bytes)).collect();
        let gz = std::fs::read(dir.join(format!("{}.jsonl.gz", set.name()))).expect("vectors");
        let mut data = String::new();
        flate2::read::GzDecoder::new(gz.as_slice())
            .read_to_string(&mut data)
            .expect("gzip");
        for line in data.lines().skip(1) {
            let record: Value = serde_json::from_str(line).expect("record");
            let name = record["name"].as_str().expect("name");
            let ids = |key: &str| -> Option<Vec<u32>> {
                let list = record.get(key)?.as_array()?;
                Some(
                    list.iter()
                        .map(|v| v.as_u64().expect("id") as u32)
                        .collect(),
                )
            };
            let all = ids("all").expect("all");
            let ordinary = ids("ordinary").unwrap_or_else(|| all.clone());
            let text = &texts[name];
            for (how, specials, want) in [
                ("all", Specials::All, &all),
                ("ordinary", Specials::None, &ordinary),
            ] {
                let one = check::encode(&ours, text, specials).map_err(|e| e.to_string());
                let resumed = check::encode_resumed(&ours, text, specials, &mut rng, &mut []);
                checked += 1;
                if (one.as_ref() != Ok(want) || resumed.as_ref() != Ok(want)) && failed.len() < 8 {
                    failed.push(format!("{} {name} ({how})", set.name()));
                }
            }
        }
    }
    assert!(checked > 24_000, "{checked} records");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// What picobpe cannot run yet is refused at import, naming it.
#[test]
fn unsupported_splits_are_refused() {
    let path = paths::fixtures().join("hf_bpe/llama3-8k/tokenizer.json");
    let base: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let byte_level = json!({"type": "ByteLevel", "add_prefix_space": false, "use_regex": false});
    for (split, says) in [
        (
            json!({"type": "Split", "pattern": {"Regex": r"\s+(?=\S)"}, "behavior": "Isolated", "invert": false}),
            "look-arounds",
        ),
        (
            json!({"type": "Split", "pattern": {"Regex": r"\p{L}++"}, "behavior": "Removed", "invert": true}),
            "possessive",
        ),
    ] {
        let mut file = base.clone();
        file["pre_tokenizer"] = json!({"type": "Sequence", "pretokenizers": [split, byte_level]});
        let bytes = serde_json::to_vec(&file).unwrap();
        let parsed = TokenizerJson::parse(&bytes).unwrap();
        let err = match picobpe_model::import::tokenizer_json(&parsed) {
            Ok(_) => panic!("{says}: imported"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(says), "{says}: {err}");
    }
    // A prefix space goes before every piece of the steps before `ByteLevel`, and after the
    // normalizer: neither is supported with it.
    let digits = json!({"type": "Split", "pattern": {"Regex": r"\p{N}"}, "behavior": "Isolated", "invert": false});
    let prefixed = byte_level_prefix_space(true);
    let mut after_split = base.clone();
    after_split["pre_tokenizer"] =
        json!({"type": "Sequence", "pretokenizers": [digits, prefixed.clone()]});
    let mut after_nfc = base.clone();
    after_nfc["pre_tokenizer"] = prefixed;
    after_nfc["normalizer"] = json!({"type": "NFC"});
    for (file, says) in [
        (after_split, "add_prefix_space after a Split"),
        (after_nfc, "add_prefix_space after a normalizer"),
    ] {
        let bytes = serde_json::to_vec(&file).unwrap();
        let parsed = TokenizerJson::parse(&bytes).unwrap();
        let err = match picobpe_model::import::tokenizer_json(&parsed) {
            Ok(_) => panic!("{says}: imported"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(says), "{says}: {err}");
    }
}
