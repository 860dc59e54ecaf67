//! Byte-level models with a Unicode normalizer against the reference library itself: Qwen3's
//! published `tokenizer.json` (NFC, the Qwen2 vocabulary) and the Qwen2-style fixture, loaded
//! by Hugging Face `tokenizers` (the Rust crate, the code the Python package runs) and by
//! picobpe's import, encode text that NFC changes: every Unicode scalar value in context, seeded
//! random strings of marks in any order, composites, compatibility characters, Hangul jamo and
//! syllables mixed with scripts, spaces and special tokens (among them a special token followed
//! by a mark NFC would compose into its last character: tokenizers extracts special tokens
//! before it normalizes), and long runs of marks (pieces longer than the stack window). Each
//! text is encoded one-shot, through small output buffers (drain and resume), and streamed in
//! random chunks; the ids must equal `tokenizers`' and decode to its normalized text.
//! The same models with NFD, NFKC and NFKD in place of NFC (the file edited, both sides
//! loading the edit) check the other forms.

use std::io::Read;

use picobpe::{Specials, StreamEncoder, Tokenizer};
use picobpe_model::import;
use picobpe_tests::check::{self, Rng};
use picobpe_tests::paths;
use serde_json::json;

struct Pair {
    name: String,
    tables: &'static picobpe::Tables<'static>,
    reference: tokenizers::Tokenizer,
}

fn load(name: &str, json: &[u8], normalizer: Option<&str>) -> Pair {
    let replaced = normalizer.map(|form| (form, json!({ "type": form })));
    load_with(name, json, replaced)
}

/// [`load`] with the file's normalizer replaced by `normalizer` (its label, its JSON).
fn load_with(name: &str, json: &[u8], normalizer: Option<(&str, serde_json::Value)>) -> Pair {
    let mut value: serde_json::Value = serde_json::from_slice(json).expect("JSON");
    let label = normalizer.as_ref().map(|n| n.0.to_owned());
    if let Some((_, n)) = normalizer {
        value["normalizer"] = n;
    }
    let json = serde_json::to_vec(&value).expect("JSON");
    let file = picobpe_model::TokenizerJson::parse(&json).expect("a tokenizer.json");
    let model = import::tokenizer_json(&file).expect("import").model;
    assert!(
        model.normalizer.is_some() || model.steps.fold(),
        "{name}: a normalizer"
    );
    let tables = picobpe_model::TableData::new(&model, picobpe_model::PieceTable::Full)
        .expect("tables")
        .to_tables();
    let mut reference = tokenizers::Tokenizer::from_bytes(&json).expect("tokenizers loads it");
    reference.with_padding(None);
    reference.with_truncation(None).expect("no truncation");
    Pair {
        name: format!("{name} ({})", label.as_deref().unwrap_or("NFC")),
        tables,
        reference,
    }
}

fn qwen3(normalizer: Option<&str>) -> Pair {
    load("qwen3", &qwen3_json(), normalizer)
}

fn qwen3_json() -> Vec<u8> {
    let path = paths::fixtures().join("hf_real/qwen3.tokenizer.json.gz");
    let gz = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(gz.as_slice())
        .read_to_end(&mut json)
        .expect("gunzip");
    json
}

/// CLIP's normalizer, and the other `Lowercase` / whitespace-run sequences the byte-level
/// import takes, as `tokenizers` spells them.
fn folded_normalizers() -> Vec<(&'static str, serde_json::Value)> {
    let replace = json!({"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "});
    let lower = json!({"type": "Lowercase"});
    let seq = |steps: Vec<serde_json::Value>| json!({"type": "Sequence", "normalizers": steps});
    vec![
        (
            "NFC + Replace + Lowercase",
            seq(vec![json!({"type": "NFC"}), replace.clone(), lower.clone()]),
        ),
        ("Lowercase", lower.clone()),
        (
            "NFD + Lowercase + Replace",
            seq(vec![json!({"type": "NFD"}), lower.clone(), replace.clone()]),
        ),
        (
            "NFKC + Lowercase",
            seq(vec![json!({"type": "NFKC"}), lower.clone()]),
        ),
        (
            "NFC + Replace",
            seq(vec![json!({"type": "NFC"}), replace.clone()]),
        ),
        ("Replace", seq(vec![replace])),
    ]
}

fn qwen2_8k(normalizer: Option<&str>) -> Pair {
    let path = paths::fixtures().join("hf_bpe/qwen2-8k/tokenizer.json");
    let json = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    load("qwen2-8k", &json, normalizer)
}

impl Pair {
    /// Ids and normalized text from `tokenizers` (special tokens recognized: picobpe's
    /// `Specials::All`).
    fn reference(&self, text: &str) -> (Vec<u32>, String) {
        let enc = self
            .reference
            .encode(text, false)
            .expect("tokenizers encodes");
        let ids = enc.get_ids().to_vec();
        let back = self.reference.decode(&ids, false).expect("decode");
        (ids, back)
    }

    fn check(&self, label: &str, texts: impl Iterator<Item = String>) {
        let tok = Tokenizer::new(self.tables);
        let mut rng = Rng::new(label, 7);
        let (mut n, mut failed) = (0, Vec::new());
        for text in texts {
            n += 1;
            let (want, normalized) = self.reference(&text);
            let mut fail = |how: &str, got: String| {
                if failed.len() < 6 {
                    let text: String = text.chars().take(40).collect();
                    let (got, want): (String, String) = (
                        got.chars().take(300).collect(),
                        format!("{want:?}").chars().take(300).collect(),
                    );
                    failed.push(format!("{how} {text:?}...: {got}, want {want}"));
                }
            };
            match check::encode(&tok, text.as_bytes(), Specials::All) {
                Ok(got) if got == want => {}
                other => fail("encode", format!("{other:?}")),
            }
            match check::encode_resumed(&tok, text.as_bytes(), Specials::All, &mut rng, &mut []) {
                Ok(got) if got == want => {}
                other => fail("resumed", format!("{other:?}")),
            }
            let mut enc: Box<StreamEncoder<Tokenizer<'_>, 8192, 65536>> =
                Box::new(StreamEncoder::new(tok, Specials::All));
            match check::encode_streamed(&mut enc, text.as_bytes(), &mut rng) {
                Ok(got) if got == want => {}
                other => fail("streamed", format!("{other:?}")),
            }
            match check::decode(&tok, &want) {
                Ok(back) if back == normalized.as_bytes() => {}
                other => fail("decode", format!("{other:?}")),
            }
        }
        assert!(
            failed.is_empty(),
            "{} {label}: {} of {n} texts differ, first:\n{}",
            self.name,
            failed.len(),
            failed.join("\n")
        );
        eprintln!("{} {label}: {n} texts equal tokenizers'", self.name);
    }
}

/// Characters normalization acts on, scripts, spaces and a special token.
fn alphabet() -> Vec<String> {
    let mut v: Vec<String> = [
        "a",
        "e",
        "o",
        "A",
        "E",
        "n",
        "s",
        "k",
        " ",
        "  ",
        "\n",
        ",",
        ".",
        "1",
        "23",
        "'s",
        "<",
        ">",
        "|",
        "x",
        "中",
        "文",
        "한",
        "가",
        "각",
        "ᄀ",
        "ᅡ",
        "ᆨ",
        "ﬁ",
        "①",
        "²",
        "～",
        "ｶ",
        "ﾞ",
        "Å",
        "Ω",
        "K",
        "é",
        "ǖ",
        "ṩ",
        "ế",
        "ΐ",
        "क",
        "्",
        "ि",
        "ऀ",
        "ँ",
        "ऌ",
        "\u{0958}",
        "\u{2ADC}",
        "\u{1D15E}",
        "\u{F900}",
        "\u{FB2C}",
        "\u{212B}",
        "\u{3099}",
        "か",
        "\u{309A}",
        "<|endoftext|>",
        "<|im_start|>",
        "\t",
        " \t\r\n",
        "\u{3000}",
        "\u{2000}",
        "\u{85}",
        "\u{A0}",
        "\u{2028}",
        "\u{180E}",
        "İ",
        "ΣΑΣ",
        "ẞ",
        "\u{212A}",
        "ǅ",
        "ᾼ",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(
        [
            0x0300, 0x0301, 0x0302, 0x0308, 0x030A, 0x030C, 0x0316, 0x0323, 0x0327, 0x0328, 0x0334,
            0x0338, 0x0345, 0x035C, 0x093C, 0x094D, 0x05B0, 0x05BC, 0x0E38, 0x0F71, 0x0F72, 0x0F80,
            0x0344, 0x0F73, 0x0B3E, 0x0B47, 0x0DCF, 0x0DD9, 0x1161, 0x11A8,
        ]
        .into_iter()
        .filter_map(char::from_u32)
        .map(String::from),
    );
    v
}

fn random_texts(seed: u64, n: usize, max_len: usize) -> impl Iterator<Item = String> {
    let abc = alphabet();
    let mut rng = Rng::new("normalizer-reference", seed);
    (0..n).map(move |_| {
        let len = rng.range(1, max_len);
        (0..len)
            .map(|_| abc[rng.range(0, abc.len() - 1)].as_str())
            .collect()
    })
}

/// Every scalar value, 64 to a text, each after a letter and before two marks.
fn every_scalar() -> impl Iterator<Item = String> {
    let all: Vec<char> = (0..0x11_0000u32).filter_map(char::from_u32).collect();
    let chunks: Vec<String> = all
        .chunks(64)
        .map(|c| {
            c.iter()
                .map(|&ch| format!("a{ch}\u{0316}\u{0301} "))
                .collect()
        })
        .collect();
    chunks.into_iter()
}

/// A letter with a long run of marks (longer, normalized, than the stack window), among text.
fn long_runs() -> impl Iterator<Item = String> {
    let marks = [
        '\u{0301}', '\u{0316}', '\u{0308}', '\u{0327}', '\u{0345}', '\u{093C}',
    ];
    let mut rng = Rng::new("normalizer-reference-runs", 3);
    (0..40).map(move |i| {
        let len = [10, 100, 300, 1000][i % 4];
        let mut s = String::from("word e");
        s.extend((0..len).map(|_| marks[rng.range(0, marks.len() - 1)]));
        s.push_str(" and more, 한국어");
        s
    })
}

#[test]
fn qwen3_nfc_every_scalar_value() {
    qwen3(None).check("every scalar value", every_scalar());
}

#[test]
fn qwen3_nfc_random_texts_and_long_runs() {
    let pair = qwen3(None);
    pair.check("random texts", random_texts(1, 3_000, 40));
    pair.check("long runs of marks", long_runs());
}

#[test]
fn qwen2_8k_every_form() {
    for form in ["NFC", "NFD", "NFKC", "NFKD"] {
        let pair = qwen2_8k(Some(form));
        pair.check("random texts", random_texts(2, 2_000, 40));
        pair.check("long runs of marks", long_runs());
    }
}

/// CLIP's normalizer (and the other `Lowercase` and whitespace-run sequences) on the real
/// Qwen3 vocabulary, whose pre-tokenizer keeps whitespace: every scalar value in context,
/// random texts (whitespace runs of every kind among them) and long runs of marks.
#[test]
fn qwen3_folded_normalizers() {
    let json = qwen3_json();
    for (label, normalizer) in folded_normalizers() {
        let pair = load_with("qwen3", &json, Some((label, normalizer)));
        if label.starts_with("NFC") {
            pair.check("every scalar value", every_scalar());
        }
        pair.check("random texts", random_texts(3, 2_000, 40));
        pair.check("long runs of marks", long_runs());
    }
}
