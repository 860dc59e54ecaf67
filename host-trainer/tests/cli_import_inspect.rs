//! `host-trainer import` and `inspect`, including their error exits.

mod cli_common;

use cli_common::{bin, fails, fixture, gpt2_hf, gpt2_tiktoken, ok, run, scratch};
use picobpe_model::Model;

#[test]
fn both_gpt2_imports_hold_the_same_vocabulary_and_merges() {
    let tk = Model::read(gpt2_tiktoken()).unwrap();
    let hf = Model::read(gpt2_hf()).unwrap();
    assert_eq!(tk.tokens.len(), 50257);
    assert_eq!(tk.merges.len(), 50000);
    assert_eq!(tk.tokens, hf.tokens);
    assert_eq!(tk.merges, hf.merges);
    assert_eq!(tk.specials, vec![("<|endoftext|>".to_owned(), 50256)]);
    assert_eq!(tk.specials, hf.specials);
    assert!(tk.whole_piece);
    assert!(!hf.whole_piece);
}

#[test]
fn import_prints_a_summary() {
    let out = scratch().join("summary.model");
    let stdout = ok(
        &[
            "import",
            "--tiktoken",
            fixture("gpt2.tiktoken").to_str().unwrap(),
            "--pattern",
            "gpt2",
            "--special",
            "<|endoftext|>=50256",
            "--out",
            out.to_str().unwrap(),
        ],
        b"",
    );
    let line = String::from_utf8(stdout).unwrap();
    assert!(
        line.contains("50257 ids, 50000 merges, 1 special tokens, pattern gpt2"),
        "{line}"
    );
}

#[test]
fn inspect_reports_vocabulary_and_table_sizes() {
    let text = String::from_utf8(ok(&["inspect", "--model", gpt2_tiktoken()], b"")).unwrap();
    for expected in [
        "pattern:      gpt2",
        "semantics:    whole-piece",
        "ids:          50257 (50256 ordinary, 1 special, 0 unused)",
        "merges:       50000",
        "special:      50256 \"<|endoftext|>\"",
        "rank order:   merged ids increase with rank",
        "token_bytes",
        "total",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    let hf = String::from_utf8(ok(&["inspect", "--model", gpt2_hf()], b"")).unwrap();
    assert!(hf.contains("semantics:    pair"), "{hf}");
}

/// `inspect | head -1`: a reader that closes the pipe early is not an error (no panic, exit 0).
/// The pipe is closed before the model is even read, so every write meets it closed.
#[test]
fn inspect_into_a_closed_pipe_exits_cleanly() {
    use std::process::Stdio;
    let mut child = bin()
        .args(["inspect", "--model", gpt2_tiktoken()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn import_errors_exit_non_zero_and_write_nothing() {
    let out = scratch().join("never.model");
    let out = out.to_str().unwrap();
    let rank = fixture("gpt2.tiktoken");
    let rank = rank.to_str().unwrap();

    let err = fails(
        &[
            "import",
            "--tiktoken",
            "/nonexistent.tiktoken",
            "--pattern",
            "gpt2",
            "--out",
            out,
        ],
        b"",
    );
    assert!(err.contains("/nonexistent.tiktoken"), "{err}");

    let err = fails(
        &[
            "import",
            "--tiktoken",
            rank,
            "--pattern",
            "gpt2",
            "--special",
            "<|x|>",
            "--out",
            out,
        ],
        b"",
    );
    assert!(err.contains("expected TEXT=ID"), "{err}");

    let err = fails(
        &[
            "import",
            "--tiktoken",
            rank,
            "--pattern",
            "gpt2",
            "--special",
            "<|x|>=12",
            "--out",
            out,
        ],
        b"",
    );
    assert!(
        err.contains("special token \"<|x|>\": id 12 is already taken"),
        "{err}"
    );

    let err = fails(
        &[
            "import",
            "--tiktoken",
            rank,
            "--pattern",
            "gpt5",
            "--out",
            out,
        ],
        b"",
    );
    assert!(err.contains("unknown pattern \"gpt5\""), "{err}");

    // --pattern is required with --tiktoken (a usage error).
    let err = fails(&["import", "--tiktoken", rank, "--out", out], b"");
    assert!(err.contains("--pattern"), "{err}");

    let vocab = fixture("gpt2_vocab.json");
    let merges = fixture("gpt2_merges.txt");
    let err = fails(
        &[
            "import",
            "--vocab",
            vocab.to_str().unwrap(),
            "--merges",
            merges.to_str().unwrap(),
            "--special",
            "<|im_start|>",
            "--out",
            out,
        ],
        b"",
    );
    assert!(
        err.contains("\"<|im_start|>\" is not in vocab.json"),
        "{err}"
    );

    let bad = scratch().join("bad.tiktoken");
    std::fs::write(&bad, "IQ== 0\nnot-base64! 1\n").unwrap();
    let err = fails(
        &[
            "import",
            "--tiktoken",
            bad.to_str().unwrap(),
            "--pattern",
            "gpt2",
            "--out",
            out,
        ],
        b"",
    );
    assert!(err.contains("line 2: token is not valid base64"), "{err}");

    assert!(!std::path::Path::new(out).exists());
}

#[test]
fn damaged_models_are_rejected_with_the_reason() {
    let good = std::fs::read(gpt2_tiktoken()).unwrap();
    let dir = scratch();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("truncated", good[..good.len() / 2].to_vec(), "truncated"),
        (
            "flipped",
            {
                let mut b = good.clone();
                let i = b.len() - 100;
                b[i] ^= 4;
                b
            },
            "corrupt",
        ),
        (
            "newer",
            {
                let mut b = good.clone();
                b[8] = 8;
                b
            },
            "format version 8 is not supported",
        ),
        (
            "json",
            b"{\"vocab\": {}}".to_vec(),
            "not a picobpe model file",
        ),
    ];
    for (name, bytes, reason) in cases {
        let path = dir.join(format!("{name}.model"));
        std::fs::write(&path, bytes).unwrap();
        let path = path.to_str().unwrap();
        for command in ["inspect", "encode", "decode"] {
            let err = fails(&[command, "--model", path], b"1 2 3");
            assert!(err.contains(reason), "{command} {name}: {err}");
            assert!(err.contains(path), "{command} {name}: {err}");
        }
    }
    let out = run(&["inspect", "--model", "/nonexistent.model"], b"");
    assert!(!out.status.success());
}

/// `--regex`: a rank file with a pattern none of the hand-rolled splitters implements (the
/// one `tests/scripts/gen_rank_regex_vectors.py` gave tiktoken: GPT-2's with single digits)
/// encodes to tiktoken's ids for a text of digits and words; a regex the compiler cannot run,
/// or none at all, is refused.
#[test]
fn import_with_a_regex_compiles_it() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("../rank_regex/MANIFEST.json")).unwrap())
            .unwrap();
    let regex = manifest["pattern"].as_str().unwrap();
    let rank = fixture("gpt2.tiktoken");
    let rank = rank.to_str().unwrap();
    let out = scratch().join("regex.model");
    let out = out.to_str().unwrap();
    let args = [
        "import",
        "--tiktoken",
        rank,
        "--special",
        "<|endoftext|>=50256",
    ];
    let summary = ok(
        &[&args[..], &["--regex", regex, "--out", out]].concat(),
        b"",
    );
    let summary = String::from_utf8(summary).unwrap();
    assert!(summary.contains("1 compiled split pattern"), "{summary}");
    // tiktoken 0.14.0, this encoding: `enc.encode("In 2024, 12345 apples<|endoftext|>x",
    // allowed_special="all")`.
    let ids = ok(
        &["encode", "--model", out],
        b"In 2024, 12345 apples<|endoftext|>x",
    );
    assert_eq!(
        String::from_utf8(ids).unwrap().trim(),
        "818 220 17 15 17 19 11 220 16 17 18 19 20 22514 50256 87"
    );
    let err = fails(
        &[&args[..], &["--regex", r"\s+(?=\S)", "--out", out]].concat(),
        b"",
    );
    assert!(err.contains("look-around"), "{err}");
    let err = fails(&[&args[..], &["--out", out]].concat(), b"");
    assert!(err.contains("--pattern NAME or --regex REGEX"), "{err}");
}
