//! CLIP's byte-level BPE, whose tokens that end a word carry an end-of-word suffix (`</w>`),
//! against the reference library itself (the `tokenizers` crate, the code the Python package
//! runs). The file is `tests/fixtures/clip/tokenizer.json`: the real CLIP merges (open_clip's
//! `bpe_simple_vocab_16e6.txt.gz`, cut to 8,000) converted by transformers'
//! `CLIPTokenizerFast` (`tests/scripts/gen_clip_fixture.py`).
//!
//! The file is checked as published — its normalizer (`NFC`, `Replace(Regex("\s+"), " ")`,
//! `Lowercase`) applied by the core, its added tokens (marked `normalized`) found in the
//! normalized text, so `<|ENDOFTEXT|>` is one — and with its normalizer removed, and with
//! `NFC` alone (its added tokens then matched in the raw text, `normalized: false`). picobpe
//! imports each, writes a model file and reads its tables back; both encode the committed
//! texts, the shared corpora when present and seeded random texts: one shot, resumed through
//! small output buffers, streamed in random chunks, counted and decoded. Zero differences
//! allowed.

use picobpe::{Specials, StreamEncoder, Tokenizer};
use picobpe_model::{AnyModel, LiveTables, TemplateData, TokenizerJson};
use picobpe_tests::check::{self, Rng};
use picobpe_tests::{paths, through_model_file};
use serde_json::{json, Value};

/// The committed CLIP file, parsed.
fn clip_file() -> Value {
    let path = paths::fixtures().join("clip/tokenizer.json");
    serde_json::from_slice(&std::fs::read(&path).expect("fixture")).expect("json")
}

/// The reference tokenizer for `file`, and picobpe's tables for it, read back from a model
/// file.
fn pair(file: &Value) -> (tokenizers::Tokenizer, &'static Tokenizer<'static>) {
    let bytes = serde_json::to_vec(file).expect("json");
    let mut reference = tokenizers::Tokenizer::from_bytes(&bytes).expect("tokenizers loads it");
    reference.with_padding(None);
    reference.with_truncation(None).expect("no truncation");
    let parsed = TokenizerJson::parse(&bytes).expect("a tokenizer.json");
    let model = picobpe_model::import::tokenizer_json(&parsed)
        .expect("import")
        .model;
    assert_eq!(model.end_of_word_suffix, b"</w>", "the suffix is CLIP's");
    // `ByteLevel`'s GPT-2 regex splits none of the pieces of CLIP's split: left out.
    assert_eq!(model.splits.len(), 1, "CLIP's split alone");
    let model = AnyModel::BytePair(model);
    let live = through_model_file("clip", |p| model.write(p, &TemplateData::default()));
    let LiveTables::BytePair(tables) = live else {
        panic!("not byte-level tables")
    };
    (reference, Box::leak(Box::new(Tokenizer::new(tables))))
}

/// Texts: the committed fixtures, 100 KB of each shared multilingual file when present, and
/// seeded random texts of letters in both cases, digits, contractions, whitespace runs,
/// punctuation, the suffix's own characters and the added tokens.
fn texts(label: &str) -> Vec<String> {
    let mut texts = check::fixture_and_corpus_texts();
    const PARTS: [&str; 42] = [
        " ",
        "   ",
        "\n",
        "\t",
        "\u{3000}",
        "a",
        "the",
        "photo",
        "Photograph",
        "dog",
        "12",
        "3",
        "'s",
        "'ll",
        "'T",
        "</w>",
        "w>",
        "<|startoftext|>",
        "<|endoftext|>",
        "!",
        "...",
        "(x)",
        "é",
        "e\u{301}",
        "漢字",
        "🙂",
        "€",
        "_-",
        "ÿ",
        "\u{85}",
        "<|ENDOFTEXT|>",
        "<|EndOfText|>\u{338}",
        ">\u{338}",
        "PHOTO",
        "\u{212A}",
        "\u{130}",
        "ΣΑΣ",
        "A\u{30A}",
        " \u{301}",
        "\u{2000}\u{2001}",
        "\r\n\r\n",
        "\u{3000} \t",
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

/// Compare on every text: ids (one shot, resumed, streamed, counted) and the decoded text.
fn check(label: &str, file: &Value) {
    let (reference, ours) = pair(file);
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
        let got = [
            (
                "one shot",
                check::encode(ours, bytes, Specials::All).map_err(|e| e.to_string()),
            ),
            (
                "resumed",
                check::encode_resumed(ours, bytes, Specials::All, &mut rng, &mut []),
            ),
            (
                "streamed",
                check::encode_streamed(&mut stream, bytes, &mut rng).map_err(|e| e.to_string()),
            ),
        ];
        for (how, ids) in got {
            if ids.as_ref() != Ok(&want) && failed.len() < 8 {
                failed.push(check::first_difference(how, &text, &want, &ids));
            }
        }
        let counted = check::count(ours, bytes, Specials::All).map_err(|e| e.to_string());
        let short: String = text.chars().take(80).collect();
        if counted != Ok(want.len()) && failed.len() < 8 {
            failed.push(format!(
                "count {short:?}: want {}, got {counted:?}",
                want.len()
            ));
        }
        let decoded = reference.decode(&want, false).expect("decode");
        let ours_decoded =
            check::decode(ours, &want).map(|b| String::from_utf8_lossy(&b).into_owned());
        if ours_decoded.as_ref() != Ok(&decoded) && failed.len() < 8 {
            failed.push(format!("decode of {short:?} differs"));
        }
    }
    assert!(failed.is_empty(), "{label}:\n{}", failed.join("\n"));
}

#[test]
fn clip_without_its_normalizer_matches_tokenizers() {
    let mut file = clip_file();
    file["normalizer"] = Value::Null;
    check("clip-no-normalizer", &file);
}

#[test]
fn clip_with_nfc_matches_tokenizers() {
    let mut file = clip_file();
    file["normalizer"] = json!({"type": "NFC"});
    for token in file["added_tokens"].as_array_mut().expect("added tokens") {
        token["normalized"] = json!(false);
    }
    check("clip-nfc", &file);
}

#[test]
fn the_suffix_goes_on_the_last_byte_of_each_piece() {
    let mut file = clip_file();
    file["normalizer"] = Value::Null;
    let (reference, ours) = pair(&file);
    let ids = check::encode(ours, b"a photo of a dog", Specials::All).expect("encode");
    let tokens: Vec<String> = ids
        .iter()
        .map(|&id| reference.id_to_token(id).expect("a token"))
        .collect();
    assert_eq!(tokens, ["a</w>", "photo</w>", "of</w>", "a</w>", "dog</w>"]);
}

#[test]
fn clip_as_published_matches_tokenizers() {
    check("clip", &clip_file());
}

#[test]
fn whitespace_runs_after_a_compatibility_form_are_refused() {
    let mut file = clip_file();
    file["normalizer"]["normalizers"][0] = json!({"type": "NFKC"});
    let bytes = serde_json::to_vec(&file).expect("json");
    let parsed = TokenizerJson::parse(&bytes).expect("a tokenizer.json");
    let err = picobpe_model::import::tokenizer_json(&parsed)
        .expect_err("refused")
        .to_string();
    assert!(err.contains("compatibility form"), "{err}");
}

#[test]
fn a_suffix_outside_the_byte_alphabet_or_with_a_missing_token_is_refused() {
    for (suffix, want) in [
        ("▁", "byte-level alphabet"),
        ("</x>", "is not an ordinary token"),
    ] {
        let mut file = clip_file();
        file["normalizer"] = Value::Null;
        file["model"]["end_of_word_suffix"] = json!(suffix);
        let bytes = serde_json::to_vec(&file).expect("json");
        let parsed = TokenizerJson::parse(&bytes).expect("a tokenizer.json");
        let err = picobpe_model::import::tokenizer_json(&parsed)
            .expect_err("refused")
            .to_string();
        assert!(err.contains(want), "{suffix}: {err}");
    }
}
