//! `host-trainer import --tiktoken … --normalizer nfc`: a rank file whose own tokenizer puts
//! text in NFC first (Qwen's `qwen.tiktoken`), checked with cl100k_base against tiktoken on
//! `unicodedata.normalize("NFC", text)` (`tests/fixtures/normalizer/cl100k-nfc.json`, made by
//! `tests/scripts/gen_nfc_tiktoken_vectors.py`): the import, `inspect`, `encode` and `decode`
//! through the CLI, and every case through the model file's tables (one-shot and resumed).
//! Then the refusals.

mod cli_common;

use std::io::Read;

use cli_common::{fails, ok, scratch};
use picobpe::{Specials, Tokenizer};
use picobpe_tests::check::{self, Rng};
use picobpe_tests::paths;

#[derive(serde::Deserialize)]
struct Case {
    text: String,
    nfc: String,
    ids: Vec<u32>,
}

#[derive(serde::Deserialize)]
struct Vectors {
    cases: Vec<Case>,
}

fn vectors() -> Vec<Case> {
    let path = paths::fixtures().join("normalizer/cl100k-nfc.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice::<Vectors>(&bytes)
        .expect("vectors")
        .cases
}

/// The committed cl100k_base rank file, un-gzipped into the scratch folder.
fn rank_file() -> std::path::PathBuf {
    let gz = std::fs::read(paths::models().join("cl100k_base.tiktoken.gz")).expect("rank file");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(gz.as_slice())
        .read_to_end(&mut plain)
        .expect("gunzip");
    let path = scratch().join("cl100k_base.tiktoken");
    std::fs::write(&path, plain).unwrap();
    path
}

#[test]
fn rank_file_with_nfc_matches_tiktoken_on_nfc_text() {
    let ranks = rank_file();
    let model = scratch().join("cl100k-nfc.model");
    let stdout = ok(
        &[
            "import",
            "--tiktoken",
            ranks.to_str().unwrap(),
            "--pattern",
            "cl100k",
            "--normalizer",
            "nfc",
            "--out",
            model.to_str().unwrap(),
        ],
        b"",
    );
    let stdout = String::from_utf8(stdout).unwrap();
    assert!(stdout.contains("normalizer NFC"), "{stdout}");
    let inspect =
        String::from_utf8(ok(&["inspect", "--model", model.to_str().unwrap()], b"")).unwrap();
    assert!(inspect.contains("normalizer:   NFC"), "{inspect}");

    let cases = vectors();
    assert!(cases.len() > 400);
    let picobpe_model::LiveTables::BytePair(tables) =
        picobpe_model::read_tables(&model).expect("read tables")
    else {
        panic!("a byte-level model");
    };
    assert_eq!(
        tables.normalizer.and_then(|n| n.form()),
        Some(picobpe::normalizer::UnicodeForm::Nfc)
    );
    let tok = Tokenizer::new(tables);
    let mut rng = Rng::new("cli-normalizer", 1);
    let mut changed = 0;
    for case in &cases {
        changed += usize::from(case.nfc != case.text);
        let got = check::encode(&tok, case.text.as_bytes(), Specials::None).expect("encode");
        assert_eq!(got, case.ids, "{:?}", case.text);
        let resumed = check::encode_resumed(
            &tok,
            case.text.as_bytes(),
            Specials::None,
            &mut rng,
            &mut [],
        )
        .expect("resumed");
        assert_eq!(resumed, case.ids, "resumed {:?}", case.text);
        let back = check::decode(&tok, &case.ids).expect("decode");
        assert_eq!(back, case.nfc.as_bytes(), "decode {:?}", case.text);
    }
    assert!(changed > 300, "only {changed} texts change under NFC");

    // The CLI's encode and decode on a few.
    for case in cases.iter().filter(|c| c.nfc != c.text).take(5) {
        let input = scratch().join("nfc-input.txt");
        std::fs::write(&input, &case.text).unwrap();
        let out = ok(
            &[
                "encode",
                "--model",
                model.to_str().unwrap(),
                input.to_str().unwrap(),
            ],
            b"",
        );
        let got: Vec<u32> = String::from_utf8(out)
            .unwrap()
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(got, case.ids, "CLI encode {:?}", case.text);
    }
}

#[test]
fn normalizer_refusals_name_the_cause() {
    let out = scratch().join("refused.model");
    let err = fails(
        &[
            "import",
            "--tiktoken",
            "x.tiktoken",
            "--pattern",
            "cl100k",
            "--normalizer",
            "nfx",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert!(err.contains("expected nfc, nfd, nfkc or nfkd"), "{err}");
    let err = fails(
        &[
            "import",
            "--tokenizer-json",
            "x.json",
            "--normalizer",
            "nfc",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert!(err.contains("cannot be used with"), "{err}");
    assert!(!out.exists());
}
