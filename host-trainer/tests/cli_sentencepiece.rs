//! `host-trainer` end to end with SentencePiece models: `import --sentencepiece` and
//! `import --tokenizer-json`, then `encode` and `decode` against the reference ids and
//! decodings of the `sentencepiece` library (and `tokenizers`, for the `tokenizer.json`
//! import) committed in `tests/fixtures/sentencepiece`, `inspect`, and the refusals: models of
//! other kinds or with unsupported settings (made by the real trainer, see
//! `tests/scripts/gen_sp_refused.py`), damaged model files, bad ids.

mod cli_common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cli_common::{ok, run, scratch};
use picobpe_tests::sp::{self, SpCase};

fn sp_fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/sentencepiece")
        .join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Import `source` (`--sentencepiece` or `--tokenizer-json`) into the scratch directory;
/// returns the model path and the import's stdout.
fn import(flag: &str, source: &str, out: &str) -> (PathBuf, String) {
    let path = scratch().join(out);
    let stdout = ok(
        &["import", flag, s(&sp_fixture(source)), "--out", s(&path)],
        b"",
    );
    (path, String::from_utf8(stdout).unwrap())
}

fn sp4096() -> &'static Path {
    static M: OnceLock<PathBuf> = OnceLock::new();
    M.get_or_init(|| import("--sentencepiece", "models/sp4096.model", "sp4096.model").0)
}

fn sp4096_unk() -> &'static Path {
    static M: OnceLock<PathBuf> = OnceLock::new();
    M.get_or_init(|| {
        import(
            "--sentencepiece",
            "models/sp4096-unk.model",
            "sp4096-unk.model",
        )
        .0
    })
}

fn sp4096_json() -> &'static Path {
    static M: OnceLock<PathBuf> = OnceLock::new();
    M.get_or_init(|| {
        import(
            "--tokenizer-json",
            "models/sp4096.tokenizer.json",
            "sp4096-json.model",
        )
        .0
    })
}

/// Records of each vector set run through the CLI: ordinary text, whitespace runs, `▁` typed
/// in the text, user-defined and control symbol text, emoji (byte fallback or `<unk>`), NUL,
/// the empty text, and malformed UTF-8.
const RECORDS: [(&str, &[&str]); 3] = [
    (
        "fixtures",
        &["german.txt", "special-mix", "one-zwj-emoji", "long-spaces"],
    ),
    (
        "sp_edge",
        &[
            "empty",
            "spaces-around",
            "meta-a",
            "a-tool-b",
            "x-im-end-y",
            "bos-hello-eos",
            "space-tab-200",
            "emoji-run",
            "nul",
        ],
    ),
    ("invalid_utf8", &["invalid-20"]),
];

fn cases(model: &str) -> Vec<(String, SpCase)> {
    let mut out = Vec::new();
    for (set, names) in RECORDS {
        let all = sp::load(model, set);
        for name in names {
            let case = all
                .iter()
                .find(|c| c.name == *name)
                .unwrap_or_else(|| panic!("{model} {set}: no record {name}"));
            out.push((
                set.to_owned(),
                SpCase {
                    name: case.name.clone(),
                    input: case.input.clone(),
                    ids: case.ids.clone(),
                    decoded: case.decoded.clone(),
                    hf: case.hf.clone(),
                    tokenizers_reference: case.tokenizers_reference,
                },
            ));
        }
    }
    out
}

fn parse_ids(stdout: &[u8]) -> Vec<u32> {
    let text = std::str::from_utf8(stdout).unwrap();
    assert!(text.ends_with('\n'), "{text:?}");
    text.split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect()
}

fn ids_text(ids: &[u32]) -> String {
    let v: Vec<String> = ids.iter().map(u32::to_string).collect();
    v.join(" ") + "\n"
}

/// Encode each record's input file with `model` and decode the ids back; `hf` compares with
/// the `tokenizers` ids (the `tokenizer.json` import), and then decodes only where they are
/// the `sentencepiece` ids, whose decoding the vectors hold.
fn check_model(model: &Path, vectors: &str, hf: bool) {
    let dir = scratch().join(format!("{vectors}-{}", if hf { "hf" } else { "sp" }));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for (set, case) in cases(vectors) {
        if hf && set == "invalid_utf8" {
            // `tokenizers` takes only valid strings: no reference.
            continue;
        }
        let label = format!("{vectors} {set} {}", case.name);
        let input = dir.join(format!("{}.in", case.name));
        std::fs::write(&input, &case.input).unwrap();
        let got = parse_ids(&ok(&["encode", "--model", s(model), s(&input)], b""));
        let want = if hf {
            case.hf.as_ref().unwrap_or(&case.ids)
        } else {
            &case.ids
        };
        assert_eq!(&got, want, "{label}: encode");
        if hf && case.hf.is_some() {
            continue;
        }
        let ids = dir.join(format!("{}.ids", case.name));
        std::fs::write(&ids, ids_text(&got)).unwrap();
        let text = ok(&["decode", "--model", s(model), s(&ids)], b"");
        assert!(
            text == case.decoded,
            "{label}: decode\n  want {:?}\n  got  {:?}",
            String::from_utf8_lossy(&case.decoded),
            String::from_utf8_lossy(&text)
        );
        checked += 1;
    }
    assert!(checked >= 8, "{vectors}: only {checked} round trips");
}

#[test]
fn sentencepiece_import_encodes_and_decodes_like_sentencepiece() {
    check_model(sp4096(), "sp4096", false);
}

#[test]
fn without_byte_fallback_unknowns_and_collapsed_spaces_match() {
    // sp4096-unk: `<unk>` for characters outside the vocabulary (a run is one `<unk>`,
    // decoded " ⁇ "), and remove_extra_whitespaces (decodings differ from the input).
    check_model(sp4096_unk(), "sp4096-unk", false);
}

/// SentencePiece Unigram models (`tests/fixtures/unigram`): T5-like without byte fallback, and
/// with byte fallback and a user-defined symbol.
#[test]
fn unigram_import_encodes_and_decodes_like_sentencepiece() {
    for name in ["ug8000", "ug4096-bytes"] {
        let (model, said) = import(
            "--sentencepiece",
            &format!("../unigram/models/{name}.model"),
            &format!("{name}.model"),
        );
        assert!(said.contains("SentencePiece Unigram"), "{said}");
        check_model(&model, name, false);
        let shown = String::from_utf8(ok(&["inspect", "--model", s(&model)], b"")).unwrap();
        assert!(
            shown.contains("kind:         SentencePiece Unigram"),
            "{shown}"
        );
    }
}

#[test]
fn tokenizer_json_import_encodes_like_tokenizers() {
    check_model(sp4096_json(), "sp4096", true);
}

#[test]
fn stdin_and_file_give_the_same_ids() {
    let text = "Hello  wörld <tool> \u{1F600}\u{2581}x";
    let input = scratch().join("stdin-vs-file.txt");
    std::fs::write(&input, text).unwrap();
    let from_file = ok(&["encode", "--model", s(sp4096()), s(&input)], b"");
    let from_stdin = ok(&["encode", "--model", s(sp4096())], text.as_bytes());
    assert_eq!(from_file, from_stdin);
    let back = ok(&["decode", "--model", s(sp4096())], &from_stdin);
    assert_eq!(
        String::from_utf8(back).unwrap(),
        text.replace('\u{2581}', " ")
    );
}

#[test]
fn import_and_inspect_describe_a_sentencepiece_model() {
    let (_, summary) = import("--sentencepiece", "models/sp512.model", "sp512.model");
    assert!(
        summary.contains(
            "SentencePiece BPE, 512 ids (256 byte pieces, 2 control, 0 user-defined), byte fallback on"
        ),
        "{summary}"
    );
    let text = String::from_utf8(ok(&["inspect", "--model", s(sp4096())], b"")).unwrap();
    for expected in [
        "SentencePiece BPE",
        "<tool>",
        "<|im_end|>",
        "<ctrl>",
        "total",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    let json = String::from_utf8(ok(&["inspect", "--model", s(sp4096_json())], b"")).unwrap();
    assert!(json.contains("SentencePiece BPE"), "{json}");
}

/// Run a failing command: exit status 1, nothing on stdout; returns stderr.
fn refused(args: &[&str]) -> String {
    refused_with(args, b"")
}

fn refused_with(args: &[&str], stdin: &[u8]) -> String {
    let out = run(args, stdin);
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    assert!(
        out.stdout.is_empty(),
        "{args:?} wrote to stdout on failure: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: "), "{err}");
    err
}

#[test]
fn refused_models_name_the_cause_and_write_nothing() {
    let out = scratch().join("refused.model");
    let cases = [
        (
            "--sentencepiece",
            "refused/unused.model",
            "has type 5 (UNUSED or unknown); not supported",
        ),
        (
            "--sentencepiece",
            "refused/suffix.model",
            "treat_whitespace_as_suffix = true is not supported",
        ),
        (
            "--tokenizer-json",
            "refused/nfkc-normalizer.tokenizer.json",
            "tokenizer.json normalizer: NFC, NFD, NFKC or NFKD (or Nmt + NFKC) is supported first, before a Metaspace that splits (alone or with Replace(Regex(\" {2,}\"), \" \")) or WhitespaceSplit + Metaspace (not yet with other steps or pre-tokenizers)",
        ),
        (
            "--tokenizer-json",
            "refused/bytelevel-pretok.tokenizer.json",
            "is not supported (none, one Metaspace, or WhitespaceSplit, Whitespace, Punctuation \
             and Digits with or without a Metaspace after them is)",
        ),
        (
            "--tokenizer-json",
            // A WordPiece model goes to the WordPiece importer, which refuses this one's
            // SentencePiece-style normalizer.
            "refused/wordpiece.tokenizer.json",
            "tokenizer.json normalizer: \"Prepend + Replace\": not supported (BertNormalizer, one \
             Unicode form, StripAccents and Lowercase after NFD or NFKD, or none is)",
        ),
        // A file of another format entirely.
        (
            "--sentencepiece",
            "PROVENANCE.md",
            "not a SentencePiece model (protobuf): ",
        ),
        (
            "--tokenizer-json",
            "models/sp512.model",
            "not a tokenizer.json: ",
        ),
    ];
    for (flag, file, cause) in cases {
        let path = sp_fixture(file);
        let err = refused(&["import", flag, s(&path), "--out", s(&out)]);
        assert!(err.contains(cause), "{file}: {err}");
        assert!(
            err.contains(s(&path)),
            "{file}: the message names no file: {err}"
        );
        assert!(!out.exists(), "{file}: an output file was written");
    }
    // The control: the same tokenizer.json without the unsupported parts imports.
    import(
        "--tokenizer-json",
        "refused/base.tokenizer.json",
        "base.model",
    );
}

#[test]
fn damaged_files_and_bad_ids_are_refused() {
    let good = std::fs::read(sp4096()).unwrap();
    let dir = scratch().join("damaged");
    std::fs::create_dir_all(&dir).unwrap();
    let truncated = dir.join("truncated.model");
    std::fs::write(&truncated, &good[..good.len() / 2]).unwrap();
    let err = refused(&["encode", "--model", s(&truncated)]);
    assert!(
        err.contains(&format!(
            "model file is truncated: {} bytes present, {} expected",
            good.len() / 2,
            good.len()
        )),
        "{err}"
    );
    let mut flipped = good.clone();
    let at = good.len() - 100;
    flipped[at] ^= 0x10;
    let bad = dir.join("flipped.model");
    std::fs::write(&bad, &flipped).unwrap();
    let err = refused(&["decode", "--model", s(&bad)]);
    assert!(
        err.contains("model file is corrupt: payload CRC-32 is 0x"),
        "{err}"
    );

    // An id past the vocabulary, a word that is no id.
    let err = refused_with(&["decode", "--model", s(sp4096())], b"15 4096 7\n");
    assert!(
        err.contains("stdin: unknown token id 4096 at position 1"),
        "{err}"
    );
    let err = refused_with(&["decode", "--model", s(sp4096())], b"15 x\n");
    assert!(err.contains("invalid id \"x\" at position 1"), "{err}");

    // `--ordinary` is for models with special-token text (byte-level, WordPiece).
    let err = refused(&["encode", "--ordinary", "--model", s(sp4096())]);
    assert!(
        err.contains("--ordinary applies to byte-level BPE and WordPiece models only"),
        "{err}"
    );
}

/// `tokenizer.json` files with a `Metaspace` pre-tokenizer through the CLI: tokenizers' own
/// `SentencePieceBPETokenizer` (NFKC) and a T5 converter's file, on their edge sets, against
/// `tokenizers`' ids and decodings (`tests/fixtures/metaspace`); and the quick tour's BPE (a
/// `Whitespace` pre-tokenizer, no decoder); `inspect` names the settings.
#[test]
fn metaspace_tokenizer_json_through_the_cli() {
    for (model, sets) in [
        ("ms-bpe-nfkc", &["nfkc_edge", "ms_edge"][..]),
        ("ms-t5", &["ms_edge"][..]),
        ("ms-bpe-quicktour", &["ms_edge", "ws_edge"][..]),
    ] {
        let source = format!("../metaspace/models/{model}.tokenizer.json");
        let (path, _) = import("--tokenizer-json", &source, &format!("{model}.model"));
        let mut checked = 0;
        for set in sets {
            for case in sp::load(model, set) {
                let input = scratch().join(format!("{model}-{}.txt", case.name));
                std::fs::write(&input, &case.input).unwrap();
                let ids = parse_ids(&ok(&["encode", "--model", s(&path), s(&input)], b""));
                assert_eq!(ids, case.ids, "{model} {}", case.name);
                let text = ok(&["decode", "--model", s(&path)], ids_text(&ids).as_bytes());
                assert_eq!(text, case.decoded, "{model} {}", case.name);
                checked += 1;
            }
        }
        assert!(checked >= 50, "{model}: {checked}");
        let inspect = String::from_utf8(ok(&["inspect", "--model", s(&path)], b"")).unwrap();
        let want = match model {
            "ms-bpe-nfkc" => "unicode:      NFKC",
            "ms-bpe-quicktour" => {
                "pretokenizer: whitespace Words, punctuation Off, digits Off\n\
                 decoder:      none (ids decode as their pieces joined by spaces"
            }
            _ => "sections UnmarkedPiecesWords",
        };
        assert!(inspect.contains(want), "{inspect}");
    }
}
