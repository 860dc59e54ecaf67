//! `host-trainer import --tokenizer-json` with byte-level BPE files (the Llama 3 and Qwen2
//! forms in `tests/fixtures/hf_bpe`), then `encode`: the ids of Hugging Face `tokenizers`
//! from the committed vectors; and the refusals, each naming what is not supported.

mod cli_common;

use std::path::PathBuf;

use cli_common::{fails, ok, run, scratch};
use picobpe_tests::vectors::{load, Encoding, Set};

fn tokenizer_json(encoding: Encoding) -> PathBuf {
    encoding.dir().join("tokenizer.json")
}

fn import(encoding: Encoding, extra: &[&str]) -> (PathBuf, String, String) {
    let out = scratch().join(format!("{}.model", encoding.name()));
    let json = tokenizer_json(encoding);
    let mut args = vec!["import", "--tokenizer-json", json.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let output = run(&args, b"");
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out, text(&output.stdout), text(&output.stderr))
}

/// `encode` of every fixture input of up to 4 KiB gives the reference ids (specials
/// recognized, the CLI's default).
fn encode_matches_reference(encoding: Encoding, model: &std::path::Path) {
    let vectors = load(encoding, Set::Fixtures);
    let mut checked = 0;
    for case in vectors.cases.iter().filter(|c| c.input.len() <= 4096) {
        let path = scratch().join(format!("{}-input.txt", encoding.name()));
        std::fs::write(&path, &case.input).unwrap();
        let stdout = ok(
            &[
                "encode",
                "--model",
                model.to_str().unwrap(),
                path.to_str().unwrap(),
            ],
            b"",
        );
        let got: Vec<u32> = String::from_utf8(stdout)
            .unwrap()
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(got, case.all, "{} {}", encoding.name(), case.name);
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} fixture cases checked");
}

#[test]
fn llama3_style_file_imports_and_encodes_like_tokenizers() {
    let (model, stdout, stderr) = import(Encoding::HfLlama3, &[]);
    assert!(
        stdout.contains("pattern llama3, whole-piece (tiktoken) semantics"),
        "{stdout}"
    );
    // The template that adds <|begin_of_text|> is reported, not silently dropped.
    assert!(
        stderr.contains("post-processor template \"<|begin_of_text|> $A\" is not applied"),
        "{stderr}"
    );
    encode_matches_reference(Encoding::HfLlama3, &model);
}

#[test]
fn qwen2_style_file_imports_with_its_nfc_normalizer() {
    let (model, stdout, stderr) = import(Encoding::HfQwen2, &[]);
    assert!(
        stdout.contains("pattern qwen2, pair (merges list) semantics, normalizer NFC"),
        "{stdout}"
    );
    assert!(!stderr.contains("NFC"), "{stderr}");
    let inspect =
        String::from_utf8(ok(&["inspect", "--model", model.to_str().unwrap()], b"")).unwrap();
    assert!(
        inspect.contains("normalizer:   NFC (Unicode 9.0.0, between special tokens)"),
        "{inspect}"
    );
    encode_matches_reference(Encoding::HfQwen2, &model);
}

#[test]
fn unsupported_parts_are_refused_by_name() {
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tokenizer_json(Encoding::HfLlama3)).unwrap())
            .unwrap();
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit, &str); 4] = [
        (
            "pattern",
            // Any other regex compiles, but for look-arounds other than a final `X+(?!C)`.
            |j| {
                j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] =
                    "\\s+(?=\\S)|\\S+".into()
            },
            "look-arounds other than",
        ),
        (
            "normalizer",
            |j| j["normalizer"] = serde_json::json!({"type": "StripAccents"}),
            "normalizer: \"StripAccents\": supported: NFC, NFD, NFKC or NFKD first or none, then Lowercase",
        ),
        (
            "prefix space",
            |j| j["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true.into(),
            "add_prefix_space",
        ),
        (
            "single word",
            |j| j["added_tokens"][0]["single_word"] = true.into(),
            "single_word is not supported",
        ),
    ];
    for (name, edit, message) in cases {
        let mut json = original.clone();
        edit(&mut json);
        let path = scratch().join(format!("edited-{}.json", name.replace(' ', "-")));
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
        let out = scratch().join("never.model");
        let err = fails(
            &[
                "import",
                "--tokenizer-json",
                path.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            b"",
        );
        assert!(err.contains(message), "{name}: {err}");
        assert!(!out.exists(), "{name}: wrote a model");
    }
}
