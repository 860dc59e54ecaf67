//! `host-trainer import` of WordPiece models (`--tokenizer-json`, `--wordpiece-vocab`), then
//! `encode`, `decode`, `count` and `inspect`: the ids and text of Hugging Face `tokenizers`
//! from the committed probes (`tests/fixtures/wordpiece/probes.jsonl`); and the refusals, each
//! naming what is not supported.

mod cli_common;

use std::path::PathBuf;

use cli_common::{fails, ok, run, scratch};

fn fixture(model: &str, file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/wordpiece")
        .join(model)
        .join(file)
}

fn import(args: &[&str], name: &str) -> (PathBuf, String, String) {
    let out = scratch().join(format!("{name}.model"));
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let o = run(&all, b"");
    assert!(
        o.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out, text(&o.stdout), text(&o.stderr))
}

fn ids_of(stdout: Vec<u8>) -> Vec<u32> {
    String::from_utf8(stdout)
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect()
}

/// Every probe: `encode` gives the reference ids, `count` their number, `decode` the
/// reference text (special tokens skipped).
fn probes_match(model: &str, file: &std::path::Path) {
    let probes = std::fs::read_to_string(fixture("", "probes.jsonl")).unwrap();
    let m = file.to_str().unwrap();
    for line in probes.lines() {
        let rec: serde_json::Value = serde_json::from_str(line).unwrap();
        let text = rec["text"].as_str().unwrap();
        let r = &rec[model];
        let want: Vec<u32> = r["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        // A name of its own per call: tests run in parallel.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let input = scratch().join(format!("{model}-probe-{n}.txt"));
        std::fs::write(&input, text).unwrap();
        let got = ids_of(ok(&["encode", "--model", m, input.to_str().unwrap()], b""));
        assert_eq!(got, want, "{model} {}", rec["name"]);
        let count =
            String::from_utf8(ok(&["count", "--model", m, input.to_str().unwrap()], b"")).unwrap();
        assert_eq!(
            count.trim(),
            want.len().to_string(),
            "{model} {} count",
            rec["name"]
        );
        let ids: String = want.iter().map(|id| format!("{id} ")).collect();
        let decoded = ok(&["decode", "--model", m], ids.as_bytes());
        let expected = r
            .get("decode_skip_special")
            .or(r.get("decode"))
            .and_then(|d| d.as_str())
            .unwrap();
        assert_eq!(
            String::from_utf8(decoded).unwrap(),
            expected,
            "{model} {} decode",
            rec["name"]
        );
    }
}

#[test]
fn tokenizer_json_imports_encode_and_decode_like_tokenizers() {
    for model in ["minilm-uncased", "bert-cased-8k"] {
        let json = fixture(model, "tokenizer.json");
        let (file, stdout, stderr) = import(&["--tokenizer-json", json.to_str().unwrap()], model);
        assert!(stdout.contains("WordPiece"), "{stdout}");
        assert!(
            stderr.contains(
                "post-processor template \"[CLS] $A [SEP]\" is not applied unless you encode \
                 with --add-special-tokens"
            ),
            "{stderr}"
        );
        probes_match(model, &file);
    }
}

#[test]
fn vocab_txt_imports_the_same_model() {
    let vocab = fixture("minilm-uncased", "vocab.txt");
    let (file, stdout, _) = import(
        &["--wordpiece-vocab", vocab.to_str().unwrap()],
        "minilm-txt",
    );
    assert!(
        stdout.contains("30522 ids, uncased, 5 added tokens"),
        "{stdout}"
    );
    probes_match("minilm-uncased", &file);
    let vocab = fixture("bert-cased-8k", "vocab.txt");
    let (file, stdout, _) = import(
        &["--wordpiece-vocab", vocab.to_str().unwrap(), "--cased"],
        "cased-txt",
    );
    assert!(stdout.contains("8192 ids, cased"), "{stdout}");
    probes_match("bert-cased-8k", &file);
    let inspect =
        String::from_utf8(ok(&["inspect", "--model", file.to_str().unwrap()], b"")).unwrap();
    assert!(
        inspect.contains("kind:         WordPiece") && inspect.contains("lowercase false"),
        "{inspect}"
    );
}

#[test]
fn unsupported_wordpiece_files_are_refused_by_name() {
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("bert-cased-8k", "tokenizer.json")).unwrap())
            .unwrap();
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit, &str); 5] = [
        (
            "pre-tokenizer",
            |j| {
                j["pre_tokenizer"] = serde_json::json!({"type": "Sequence", "pretokenizers":
                    [{"type": "WhitespaceSplit"},
                     {"type": "Punctuation", "behavior": "MergedWithPrevious"}]})
            },
            "pre_tokenizer: \"WhitespaceSplit + Punctuation\": supported: BertPreTokenizer, or \
             WhitespaceSplit or Whitespace, Punctuation (isolated, contiguous or removed) and \
             Digits, each at most once",
        ),
        (
            "normalizer",
            |j| {
                j["normalizer"] = serde_json::json!({"type": "Sequence", "normalizers":
                    [{"type": "NFC"}, {"type": "StripAccents"}]})
            },
            "normalizer: \"NFC + StripAccents\": supported: StripAccents and Lowercase alone or \
             after NFD or NFKD with StripAccents, and Lowercase alone after any form but Nmt",
        ),
        (
            "word limit",
            |j| j["model"]["max_input_chars_per_word"] = 1000.into(),
            "max_input_chars_per_word 1000 is above 128",
        ),
        (
            "unknown token",
            |j| j["model"]["unk_token"] = "<unk>".into(),
            "model.unk_token: \"<unk>\" is not in the vocabulary",
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
        let path = scratch().join(format!("wp-{}.json", name.replace(' ', "-")));
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
        let out = scratch().join("wp-never.model");
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
    // A vocab.txt without [UNK].
    let path = scratch().join("no-unk.txt");
    std::fs::write(&path, "[PAD]\na\nb\n##c\n").unwrap();
    let out = scratch().join("wp-never.model");
    let err = fails(
        &[
            "import",
            "--wordpiece-vocab",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert!(err.contains("no [UNK] entry"), "{err}");
}

/// A 1 MB word is one [UNK] (more than 100 characters), at once.
#[test]
fn a_huge_word_is_one_unknown_token() {
    let json = fixture("bert-cased-8k", "tokenizer.json");
    let (file, _, _) = import(&["--tokenizer-json", json.to_str().unwrap()], "huge");
    let input = scratch().join("huge-word.txt");
    std::fs::write(&input, "a".repeat(1 << 20)).unwrap();
    let ids = ids_of(ok(
        &[
            "encode",
            "--model",
            file.to_str().unwrap(),
            input.to_str().unwrap(),
        ],
        b"",
    ));
    assert_eq!(ids, vec![1], "one [UNK] (id 1 in bert-cased-8k)");
}
