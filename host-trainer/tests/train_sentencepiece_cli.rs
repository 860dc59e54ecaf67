//! `host-trainer train --model-type sentencepiece-bpe` as a command: llama2.c's recipe gives
//! `spm_train`'s pieces (its reference run, `tests/fixtures/spm_train`); the written
//! `sentencepiece.model` loads in the real `sentencepiece` library, whose ids for a held-out
//! text equal picobpe's from `tokenizer.model`; bad input is refused with a clear message and
//! nothing written.
//!
//! The library check needs `python3` with `sentencepiece`; `cargo xtask test` installs it and
//! sets `PICOBPE_REQUIRE_SPM=1`, which turns a missing module into a failure.

mod train_common;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use picobpe_model::AnyModel;
use train_common::*;

fn run(args: &[&str], out: &Path) -> std::process::Output {
    train_as("sentencepiece-bpe", args, out)
}

fn fails(args: &[&str], out: &Path, message: &str) {
    fails_as("sentencepiece-bpe", args, out, message)
}

/// llama2.c's `train_vocab.sh` options, as `spm_train` spells them with dashes.
const LLAMA2C: [&str; 10] = [
    "--character-coverage",
    "1.0",
    "--split-digits",
    "--allow-whitespace-only-pieces",
    "true",
    "--byte-fallback",
    "--normalization-rule-name",
    "identity",
    "--num-threads",
    "2",
];

/// `python3` can import `module`; without it the library checks are skipped, unless
/// `PICOBPE_REQUIRE_SPM` is set (`cargo xtask test` sets it after installing both libraries).
fn have_module(module: &str, pip: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok || std::env::var_os("PICOBPE_REQUIRE_SPM").is_none(),
        "PICOBPE_REQUIRE_SPM is set, but python3 cannot import {module} \
         (python3 -m pip install {pip})"
    );
    ok
}

fn have_sentencepiece() -> bool {
    have_module("sentencepiece", "sentencepiece==0.2.3")
}

#[test]
fn llama2c_recipe_gives_spm_trains_pieces_and_loads_in_sentencepiece() {
    let tmp = TempDir::new("spm-train");
    let out = tmp.join("out");
    let english = texts("corpus-english.txt");
    let mut args = vec!["--input", english.to_str().unwrap(), "--vocab-size", "512"];
    args.extend(LLAMA2C);
    let o = run(&args, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("spm_train/llama2c-en-512.json")).unwrap(),
    )
    .unwrap();
    let want: Vec<(String, f32, String)> =
        serde_json::from_value(reference["pieces"].clone()).unwrap();
    let proto = std::fs::read(out.join("sentencepiece.model")).unwrap();
    let model = picobpe_model::sentencepiece::import_model_proto(&proto).unwrap();
    let got: Vec<(String, f32)> = model
        .pieces
        .iter()
        .map(|p| (p.piece.clone(), p.score.unwrap_or(0.0)))
        .collect();
    let want_pieces: Vec<(String, f32)> = want.iter().map(|(p, s, _)| (p.clone(), *s)).collect();
    assert_eq!(got, want_pieces, "sentencepiece.model's pieces");

    // picobpe's tokenizer.model holds the same model.
    let any = AnyModel::read(out.join("tokenizer.model")).unwrap();
    let AnyModel::SentencePiece(ours) = any else {
        panic!("tokenizer.model is not a SentencePiece model")
    };
    assert_eq!(ours, model);

    if !have_sentencepiece() {
        eprintln!("skipped the sentencepiece library check: python3 cannot import it");
        return;
    }
    // The library's ids for held-out text (German, with characters the model lacks: byte
    // fallback) equal picobpe's.
    let held = texts("corpus-de.txt");
    let script = "import sys, sentencepiece as spm\n\
                  sp = spm.SentencePieceProcessor(model_file=sys.argv[1])\n\
                  text = open(sys.argv[2], encoding='utf-8').read()\n\
                  print(' '.join(str(i) for i in sp.encode(text)))\n";
    let py = Command::new("python3")
        .args([OsStr::new("-c"), OsStr::new(script)])
        .arg(out.join("sentencepiece.model"))
        .arg(&held)
        .output()
        .expect("python3");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let theirs: Vec<u32> = String::from_utf8(py.stdout)
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let tables = picobpe_model::SpTableData::new(&ours).unwrap().to_tables();
    let text = std::fs::read(&held).unwrap();
    let mut ids = vec![0u32; text.len() * 4 + 16];
    let n = picobpe::SpTokenizer::new(tables)
        .encode(&text, &mut ids)
        .unwrap();
    assert_eq!(
        ids[..n],
        theirs[..],
        "sentencepiece's ids for {}",
        held.display()
    );
    tokenizers_agrees(&out, &held);
}

/// The `tokenizer.json` the trainer wrote loads in Hugging Face `tokenizers`, whose ids
/// (`add_special_tokens=False`) equal `sentencepiece`'s from `sentencepiece.model` for the
/// whole of `held` and for each of its lines.
fn tokenizers_agrees(out: &Path, held: &Path) {
    if !(have_sentencepiece() && have_module("tokenizers", "tokenizers==0.22.2")) {
        eprintln!("skipped the tokenizers check: python3 cannot import it");
        return;
    }
    let script = "import sys, sentencepiece as spm\n\
                  from tokenizers import Tokenizer\n\
                  sp = spm.SentencePieceProcessor(model_file=sys.argv[1] + '/sentencepiece.model')\n\
                  tok = Tokenizer.from_file(sys.argv[1] + '/tokenizer.json')\n\
                  text = open(sys.argv[2], encoding='utf-8').read()\n\
                  units = [text] + text.split('\\n')\n\
                  bad = [u for u in units\n\
                         if sp.encode(u) != tok.encode(u, add_special_tokens=False).ids]\n\
                  print(len(units), len(bad), repr(bad[:3]))\n";
    let py = Command::new("python3")
        .args([OsStr::new("-c"), OsStr::new(script)])
        .arg(out)
        .arg(held)
        .output()
        .expect("python3");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let report = String::from_utf8(py.stdout).unwrap();
    let mut fields = report.split_whitespace();
    let units: usize = fields.next().unwrap().parse().unwrap();
    assert!(units > 1, "{report}");
    assert_eq!(
        fields.next(),
        Some("0"),
        "tokenizers' ids differ from sentencepiece's for {}: {report}",
        held.display()
    );
}

/// Trains `model_type` with no option but the size on the files of reference `name`
/// (`tests/fixtures/spm_train/NAME.json`) into `out`, checks that every piece and score is the
/// reference's, and returns the corpus paths.
fn matches_reference(model_type: &str, name: &str, vocab_size: &str, out: &Path) -> Vec<String> {
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture(&format!("spm_train/{name}.json"))).unwrap(),
    )
    .unwrap();
    let files: Vec<String> = serde_json::from_value(reference["config"]["files"].clone()).unwrap();
    let paths: Vec<String> = files
        .iter()
        .map(|f| texts(f).display().to_string())
        .collect();
    let mut args: Vec<&str> = Vec::new();
    for p in &paths {
        args.extend(["--input", p.as_str()]);
    }
    args.extend(["--vocab-size", vocab_size]);
    let o = train_as(model_type, &args, out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let proto = std::fs::read(out.join("sentencepiece.model")).unwrap();
    let model = picobpe_model::sentencepiece::import_model_proto(&proto).unwrap();
    assert_eq!(
        model.unigram,
        model_type == "unigram",
        "the ModelProto's model type"
    );
    let want: Vec<(String, f32, String)> =
        serde_json::from_value(reference["pieces"].clone()).unwrap();
    assert_eq!(model.pieces.len(), want.len());
    for (got, want) in model.pieces.iter().zip(&want) {
        assert_eq!((&got.piece, got.score.unwrap_or(0.0)), (&want.0, want.1));
    }
    paths
}

/// With no option but the size, `spm_train`'s defaults (`nmt_nfkc`, coverage 0.9995): the
/// reference `default-multi-6000` run.
#[test]
fn the_defaults_are_spm_trains() {
    let tmp = TempDir::new("spm-train-defaults");
    let out = tmp.join("out");
    matches_reference("sentencepiece-bpe", "default-multi-6000", "6000", &out);
    // The tokenizer.json (`Precompiled` with the nmt_nfkc map) agrees on held-out text.
    tokenizers_agrees(&out, &texts("corpus-fr.txt"));
}

/// `--model-type unigram` with no option but the size is `spm_train --model_type unigram`
/// with its defaults (`nmt_nfkc`, 16 threads' worth of partitions, whatever runs here): the
/// reference `unigram-default-multi-4000` run, piece for piece and score for score.
#[test]
fn unigram_defaults_are_spm_trains() {
    let tmp = TempDir::new("spm-train-unigram");
    let out = tmp.join("out");
    let paths = matches_reference("unigram", "unigram-default-multi-4000", "4000", &out);
    // Its tokenizer.json (a Unigram model behind the nmt_nfkc `Precompiled`) agrees too. (Not
    // everywhere: where two segmentations score exactly the same, `tokenizers`' Viterbi can
    // keep the other one; corpus-emoji-mixed.txt has one such line, `---------` as
    // `-` + 4 × `--` against `sentencepiece`'s 4 × `--` + `-`.)
    tokenizers_agrees(&out, &texts("corpus-fr.txt"));
    tokenizers_agrees(&out, &texts("corpus-el.txt"));
    // BPE-only options are refused for Unigram and the other way round.
    let bpe_args = ["--input", paths[0].as_str(), "--vocab-size", "300"];
    let out = tmp.join("refused");
    fails(
        &[&bpe_args[..], &["--shrinking-factor", "0.6"]].concat(),
        &out,
        "--shrinking-factor does not apply",
    );
    fails_as(
        "unigram",
        &[&bpe_args[..], &["--shrinking-factor", "0.2"]].concat(),
        &out,
        "between 0.5 and 0.95",
    );
    // spm_train 0.2.3 on corpus-fr.txt with the identity rule: "Vocabulary size too high
    // (100000). Please set it to a value <= 2619."
    let fr = texts("corpus-fr.txt").display().to_string();
    let fr_args = [
        "--input",
        fr.as_str(),
        "--normalization-rule-name",
        "identity",
    ];
    fails_as(
        "unigram",
        &[&fr_args[..], &["--vocab-size", "100000"]].concat(),
        &out,
        "it gives at most 2619 pieces",
    );
    fails_as(
        "unigram",
        &[&fr_args[..], &["--vocab-size", "20"]].concat(),
        &out,
        "smaller than the 75 pieces",
    );
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let tmp = TempDir::new("spm-train-bad");
    let out = tmp.join("out");
    let english = texts("corpus-english.txt");
    let e = english.to_str().unwrap();
    let empty = tmp.join("empty.txt");
    std::fs::write(&empty, "\n\n   \n").unwrap();
    let blank = empty.to_str().unwrap();
    let rule = ["--normalization-rule-name", "identity"];
    // `--input FILE --vocab-size N`, the identity rule, then `extra`.
    let args = |file: &'static str, n: &'static str, extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = vec!["--input", file, "--vocab-size", n];
        v.extend(rule);
        v.extend(extra);
        v
    };
    let e: &'static str = Box::leak(e.to_string().into_boxed_str());
    let blank: &'static str = Box::leak(blank.to_string().into_boxed_str());
    fails(&args(blank, "300", &[]), &out, "no sentence to train on");
    fails(&args(e, "20", &[]), &out, "smaller than the");
    fails(&args(e, "100000", &[]), &out, "too high for this corpus");
    fails(
        &args(e, "300", &["--character-coverage", "0.5"]),
        &out,
        "between 0.98 and 1.0",
    );
    fails(
        &args(e, "300", &["--user-defined-symbols", "<unk>"]),
        &out,
        "must not be defined",
    );
    fails(
        &args(e, "300", &["--unk-id", "-1"]),
        &out,
        "must have an id",
    );
    fails(
        &args(e, "300", &["--min-frequency", "2"]),
        &out,
        "--min-frequency does not apply",
    );
    fails(
        &args(e, "300", &["--special-token", "<x>"]),
        &out,
        "--special-token",
    );
    fails(
        &args(e, "300", &["--input-sentence-size", "1000"]),
        &out,
        "--shuffle-input-sentence false",
    );
    fails(
        &args(
            e,
            "300",
            &[
                "--input-sentence-size",
                "50",
                "--shuffle-input-sentence",
                "false",
            ],
        ),
        &out,
        "over 100",
    );
    fails(
        &args(e, "3000000000", &[]),
        &out,
        "between 1 and 2147483647",
    );
    fails(
        &args(e, "300", &["--num-threads", "5000"]),
        &out,
        "between 1 and 1024",
    );
    fails(
        &args(e, "300", &["--treat-whitespace-as-suffix"]),
        &out,
        "not supported",
    );
}
