//! `host-trainer train --model-type wordpiece` as a command: the vocabulary of `tokenizers`'
//! `WordPieceTrainer` (its reference run, `tests/fixtures/wp_train`), the same files for any
//! thread count and chunk size, the three output files agreeing with each other, and bad
//! input refused with a clear message and nothing written.

mod train_common;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;

use picobpe_model::wordpiece::{import_tokenizer_json, import_vocab_txt, VocabTxtOptions};
use picobpe_model::{AnyModel, TokenizerJson};
use train_common::*;

fn run(args: &[&str], out: &Path) -> std::process::Output {
    train_as("wordpiece", args, out)
}

fn ok(args: &[&str], out: &Path) {
    let o = run(args, out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn fails(args: &[&str], out: &Path, message: &str) {
    fails_as("wordpiece", args, out, message)
}

/// The reference `en-uncased-200` run of `tokenizers`: the same set of entries.
#[test]
fn the_command_learns_tokenizers_vocabulary() {
    let tmp = TempDir::new("wp-train");
    let out = tmp.join("out");
    let english = texts("corpus-english.txt");
    ok(
        &[
            "--input",
            english.to_str().unwrap(),
            "--vocab-size",
            "200",
            "--min-frequency",
            "2",
            "--limit-alphabet",
            "1000",
        ],
        &out,
    );
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("wp_train/en-uncased-200.json")).unwrap(),
    )
    .unwrap();
    let want: BTreeSet<String> = serde_json::from_value(reference["vocab"].clone()).unwrap();
    let vocab_txt = std::fs::read(out.join("vocab.txt")).unwrap();
    let got: BTreeSet<String> = String::from_utf8(vocab_txt.clone())
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(got, want);
    // The three files hold one model.
    let (AnyModel::WordPiece(model), template) =
        AnyModel::read_with_template(out.join("tokenizer.model")).unwrap()
    else {
        panic!("not a WordPiece model");
    };
    // `[CLS]` (2) and `[SEP]` (3) around the ids with `--add-special-tokens`.
    assert_eq!((template.prefix, template.suffix), (vec![2], vec![3]));
    let json = std::fs::read(out.join("tokenizer.json")).unwrap();
    let file = TokenizerJson::parse(&json).unwrap();
    assert_eq!(import_tokenizer_json(&file).unwrap().model, model);
    let from_txt = import_vocab_txt(&vocab_txt, &VocabTxtOptions::default()).unwrap();
    assert_eq!(from_txt.vocab, model.vocab);
}

#[test]
fn identical_output_for_any_threads_and_chunk_size() {
    let tmp = TempDir::new("wp-determinism");
    let files = ["corpus-de.txt", "corpus-ru.txt", "corpus-zh.txt"].map(texts);
    // Form feed and vertical tab are dropped by `clean_text`, not word ends: a chunk cut after
    // one would split `ab\x0Ccd` into two words.
    let controls = tmp.join("controls.txt");
    std::fs::write(&controls, "ab\x0Ccd ef\x0Bgh\n".repeat(500)).unwrap();
    let mut args = vec!["--input", controls.to_str().unwrap()];
    for f in &files {
        args.extend(["--input", f.to_str().unwrap()]);
    }
    args.extend(["--vocab-size", "3000", "--cased"]);
    let read_all = |dir: &Path| {
        ["tokenizer.model", "vocab.txt", "tokenizer.json"]
            .map(|f| std::fs::read(dir.join(f)).unwrap())
    };
    let base = tmp.join("base");
    ok(&[&args[..], &["--threads", "1"]].concat(), &base);
    let words = std::fs::read_to_string(base.join("vocab.txt")).unwrap();
    assert!(
        words.lines().any(|w| w == "abcd"),
        "ab\\x0Ccd is the word abcd"
    );
    for (threads, chunk) in [("2", "4096"), ("3", "97"), ("1", "3")] {
        let out = tmp.join(&format!("t{threads}-c{chunk}"));
        ok(
            &[&args[..], &["--threads", threads, "--chunk-size", chunk]].concat(),
            &out,
        );
        assert!(
            read_all(&out) == read_all(&base),
            "threads {threads}, chunk {chunk}"
        );
    }
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let tmp = TempDir::new("wp-bad");
    let out = tmp.join("out");
    let english = texts("corpus-english.txt");
    let e = english.to_str().unwrap();
    let empty = tmp.join("empty.txt");
    std::fs::write(&empty, "  \n\t\n").unwrap();
    let invalid = tmp.join("invalid.txt");
    std::fs::write(&invalid, b"caf\xc3 au lait\n").unwrap();
    fails(
        &["--input", empty.to_str().unwrap(), "--vocab-size", "100"],
        &out,
        "the corpus is empty",
    );
    fails(
        &["--input", invalid.to_str().unwrap(), "--vocab-size", "100"],
        &out,
        "not valid UTF-8: invalid byte sequence at byte offset 3",
    );
    fails(
        &[
            "--input",
            e,
            "--vocab-size",
            "100",
            "--special-token",
            "[PAD]",
        ],
        &out,
        "unknown token \"[UNK]\" (--unk-token) must be one of the special tokens",
    );
    fails(
        &["--input", e, "--vocab-size", "3"],
        &out,
        "--vocab-size 3 is too small",
    );
    fails(
        &["--input", e, "--vocab-size", "100", "--pattern", "cl100k"],
        &out,
        "--pattern does not apply to --model-type wordpiece",
    );
    // A WordPiece option without `--model-type wordpiece`.
    let o = train(&[
        OsStr::new("--input"),
        english.as_os_str(),
        OsStr::new("--vocab-size"),
        OsStr::new("300"),
        OsStr::new("--cased"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--cased does not apply to --model-type bytelevel-bpe"));
    assert!(!out.exists());
}

/// The likelihood criterion trains a different, valid model that `tokenizers` would load.
#[test]
fn likelihood_scores_train_another_model() {
    let tmp = TempDir::new("wp-likelihood");
    let english = texts("corpus-english.txt");
    let e = english.to_str().unwrap();
    let (freq, like) = (tmp.join("freq"), tmp.join("like"));
    ok(&["--input", e, "--vocab-size", "400"], &freq);
    ok(
        &[
            "--input",
            e,
            "--vocab-size",
            "400",
            "--wordpiece-score",
            "likelihood",
        ],
        &like,
    );
    let vocab = |d: &Path| std::fs::read_to_string(d.join("vocab.txt")).unwrap();
    let (f, l) = (vocab(&freq), vocab(&like));
    assert_eq!(f.lines().count(), 400);
    assert_eq!(l.lines().count(), 400);
    assert_ne!(f, l);
}
