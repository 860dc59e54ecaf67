//! `host-trainer train` as a command: determinism across threads and chunk sizes, error
//! messages and exit codes for bad input, atomic output, and the trained model working with
//! `encode` / `decode` / `inspect`.

mod train_common;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use train_common::*;

const EOT: &str = "<|endoftext|>";

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The three output files of a run.
fn outputs(dir: &Path) -> [Vec<u8>; 3] {
    ["tokenizer.model", "vocab.json", "merges.txt"].map(|f| read(&dir.join(f)))
}

#[test]
fn identical_output_for_any_threads_and_chunk_size() {
    let tmp = TempDir::new("determinism");
    let english = fixture("train/english-1mb.txt");
    let base = tmp.join("base");
    train_ok(&[&english], 1500, &[EOT], &base, &["--threads", "1"]);
    let expected = outputs(&base);
    for (threads, chunk) in [("2", "1048576"), ("3", "4096"), ("2", "97"), ("1", "1")] {
        let out = tmp.join(&format!("t{threads}-c{chunk}"));
        train_ok(
            &[&english],
            1500,
            &[EOT],
            &out,
            &["--threads", threads, "--chunk-size", chunk],
        );
        assert!(
            outputs(&out) == expected,
            "--threads {threads} --chunk-size {chunk} changed the output"
        );
    }
}

#[test]
fn chunk_splits_never_change_pieces_in_text_without_specials() {
    // Newline splits (rule 2) and piece splits (rule 3) on every script: tiny chunks must give
    // the same merges as one chunk per file.
    let tmp = TempDir::new("chunks");
    let files: Vec<_> = ["fr", "ru", "zh", "ja", "de", "el", "code-rust"]
        .iter()
        .map(|f| fixture(&format!("train/multi/{f}.txt")))
        .collect();
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let whole = tmp.join("whole");
    train_ok(&refs, 1200, &[], &whole, &["--chunk-size", "100000000"]);
    for chunk in ["64", "3000"] {
        let out = tmp.join(&format!("c{chunk}"));
        train_ok(&refs, 1200, &[], &out, &["--chunk-size", chunk]);
        assert!(outputs(&out) == outputs(&whole), "--chunk-size {chunk}");
    }
}

/// Run train expecting failure; return stderr. Checks that `out` was not created and no
/// temporary directory is left next to it.
fn train_err(args: &[&OsStr], out: &Path) -> String {
    let output: Output = train(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "expected failure, got success");
    assert!(
        output.stdout.is_empty(),
        "nothing on stdout: {:?}",
        output.stdout
    );
    assert!(
        !out.exists(),
        "no output directory after an error ({stderr})"
    );
    let parent = out.parent().unwrap();
    for entry in std::fs::read_dir(parent).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".tmp-"), "temporary {name} left behind");
    }
    stderr
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

#[test]
fn bad_inputs_are_reported_precisely() {
    let tmp = TempDir::new("errors");
    let out = tmp.join("out");
    let good = fixture("cs336/german.txt");
    let good = good.as_os_str();
    let tiny = fixture("cs336/tinystories_sample.txt");
    let outp = out.as_os_str();

    let missing = tmp.join("missing.txt");
    let e = train_err(
        &[
            os("--input"),
            missing.as_os_str(),
            os("--vocab-size"),
            os("300"),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(
        e.contains("cannot read input") && e.contains("missing.txt"),
        "{e}"
    );

    let e = train_err(
        &[
            os("--input"),
            tmp.0.as_os_str(),
            os("--vocab-size"),
            os("300"),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(e.contains("is a directory"), "{e}");

    // Invalid UTF-8: a stray continuation byte, found across chunk boundaries too.
    let bad = tmp.join("bad.txt");
    let mut bytes = b"hello world\n".repeat(20);
    bytes.insert(150, 0x80);
    std::fs::write(&bad, &bytes).unwrap();
    for chunk in ["1048576", "7"] {
        let e = train_err(
            &[
                os("--input"),
                bad.as_os_str(),
                os("--vocab-size"),
                os("300"),
                os("--chunk-size"),
                os(chunk),
                os("--out"),
                outp,
            ],
            &out,
        );
        assert!(
            e.contains("bad.txt") && e.contains("not valid UTF-8"),
            "{e}"
        );
        assert!(e.contains("byte offset 150"), "{e}");
    }
    // A sequence cut off by the end of the file.
    let cut = tmp.join("cut.txt");
    std::fs::write(&cut, b"abc\xe2\x82").unwrap();
    let e = train_err(
        &[
            os("--input"),
            cut.as_os_str(),
            os("--vocab-size"),
            os("300"),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(e.contains("byte offset 3"), "{e}");

    // Empty corpus: an empty file, or nothing but special tokens.
    let empty = tmp.join("empty.txt");
    std::fs::write(&empty, b"").unwrap();
    let e = train_err(
        &[
            os("--input"),
            empty.as_os_str(),
            os("--vocab-size"),
            os("300"),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(e.contains("corpus is empty"), "{e}");
    let only = tmp.join("only.txt");
    std::fs::write(&only, EOT.repeat(3)).unwrap();
    let e = train_err(
        &[
            os("--input"),
            only.as_os_str(),
            os("--vocab-size"),
            os("300"),
            os("--special-token"),
            os(EOT),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(e.contains("corpus is empty"), "{e}");

    // Vocabulary too small for 256 bytes + specials.
    let e = train_err(
        &[
            os("--input"),
            good,
            os("--vocab-size"),
            os("257"),
            os("--special-token"),
            os(EOT),
            os("--special-token"),
            os("<|pad|>"),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(
        e.contains("--vocab-size 257 is too small") && e.contains("258"),
        "{e}"
    );

    // Duplicate, empty and single-byte specials.
    let e = train_err(
        &[
            os("--input"),
            good,
            os("--vocab-size"),
            os("300"),
            os("--special-token"),
            os(EOT),
            os("--special-token"),
            os(EOT),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(e.contains("more than once") && e.contains(EOT), "{e}");
    let e = train_err(
        &[
            os("--input"),
            good,
            os("--vocab-size"),
            os("300"),
            os("--special-token"),
            os(""),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(e.contains("must not be empty"), "{e}");
    let e = train_err(
        &[
            os("--input"),
            good,
            os("--vocab-size"),
            os("300"),
            os("--special-token"),
            os("x"),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(e.contains("single byte"), "{e}");

    // A special spelled like a token in vocab.json: a byte (found before training) or a merged
    // token (found at the end; nothing is written).
    for (special, input) in [("Ġ", good), ("Ġthe", tiny.as_os_str())] {
        let e = train_err(
            &[
                os("--input"),
                input,
                os("--vocab-size"),
                os("300"),
                os("--special-token"),
                os(special),
                os("--out"),
                outp,
            ],
            &out,
        );
        assert!(
            e.contains("spelled like an ordinary token"),
            "{special}: {e}"
        );
    }

    let e = train_err(
        &[
            os("--input"),
            good,
            os("--vocab-size"),
            os("300"),
            os("--threads"),
            os("0"),
            os("--out"),
            outp,
        ],
        &out,
    );
    assert!(e.contains("--threads must be at least 1"), "{e}");
}

#[test]
fn output_directory_is_replaced_only_when_it_is_ours() {
    let tmp = TempDir::new("outdir");
    let input = fixture("cs336/tinystories_sample.txt");
    let out = tmp.join("out");
    train_ok(&[&input], 300, &[EOT], &out, &[]);
    let first = outputs(&out);
    // A second run into the same directory replaces it.
    train_ok(&[&input], 320, &[EOT], &out, &[]);
    assert!(outputs(&out) != first);
    // A directory with other files is refused, before training, and left untouched.
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    let output = train(&[
        os("--input"),
        input.as_os_str(),
        os("--vocab-size"),
        os("300"),
        os("--out"),
        out.as_os_str(),
    ]);
    assert!(!output.status.success());
    let e = String::from_utf8_lossy(&output.stderr);
    assert!(e.contains("notes.txt"), "{e}");
    assert_eq!(read(&out.join("notes.txt")), b"mine");
    // --out naming a file is refused too.
    let file = tmp.join("file");
    std::fs::write(&file, b"x").unwrap();
    let output = train(&[
        os("--input"),
        input.as_os_str(),
        os("--vocab-size"),
        os("300"),
        os("--out"),
        file.as_os_str(),
    ]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a directory"));
}

#[test]
fn stops_early_when_no_pair_is_left() {
    let tmp = TempDir::new("early");
    let input = tmp.join("tiny.txt");
    std::fs::write(&input, "ab ab").unwrap();
    let out = tmp.join("out");
    train_ok(&[&input], 1000, &[], &out, &[]);
    // Pieces "ab", " ab": merges (a,b)... then (" ", "ab"); nothing else to merge.
    let merges = parse_merges(&String::from_utf8(read(&out.join("merges.txt"))).unwrap());
    assert_eq!(
        merges,
        vec![
            (b"a".to_vec(), b"b".to_vec()),
            (b" ".to_vec(), b"ab".to_vec())
        ]
    );
    let vocab = parse_vocab_json(&String::from_utf8(read(&out.join("vocab.json"))).unwrap());
    assert_eq!(vocab.len(), 258);
}

/// Encode `text` the CS336 way from merges.txt: per pre-token, repeatedly merge the adjacent
/// pair with the lowest merge rank; ids from the position in vocab.json.
fn reference_encode(
    text: &str,
    merges: &[(Vec<u8>, Vec<u8>)],
    vocab: &[Vec<u8>],
    special: &str,
) -> Vec<u64> {
    let re = fancy_regex::Regex::new(
        r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    )
    .unwrap();
    let rank: std::collections::HashMap<(&[u8], &[u8]), usize> = merges
        .iter()
        .enumerate()
        .map(|(i, (l, r))| ((l.as_slice(), r.as_slice()), i))
        .collect();
    let id: std::collections::HashMap<&[u8], u64> = vocab
        .iter()
        .enumerate()
        .map(|(i, b)| (b.as_slice(), i as u64))
        .collect();
    let mut ids = Vec::new();
    let parts: Vec<&str> = text.split(special).collect();
    for (k, part) in parts.iter().enumerate() {
        for m in re.find_iter(part) {
            let mut syms: Vec<Vec<u8>> = m.unwrap().as_str().bytes().map(|b| vec![b]).collect();
            loop {
                let best = (0..syms.len().saturating_sub(1))
                    .filter_map(|i| {
                        rank.get(&(syms[i].as_slice(), syms[i + 1].as_slice()))
                            .map(|&r| (r, i))
                    })
                    .min();
                let Some((_, i)) = best else { break };
                let right = syms.remove(i + 1);
                syms[i].extend_from_slice(&right);
            }
            ids.extend(syms.iter().map(|p| id[p.as_slice()]));
        }
        if k + 1 < parts.len() {
            ids.push(id[special.as_bytes()]);
        }
    }
    ids
}

#[test]
fn trained_model_encodes_decodes_and_inspects() {
    let tmp = TempDir::new("roundtrip");
    let out = tmp.join("out");
    let train_input = fixture("train/english-1mb.txt");
    train_ok(&[&train_input], 2000, &[EOT], &out, &[]);
    let model = out.join("tokenizer.model");
    let merges = parse_merges(&String::from_utf8(read(&out.join("merges.txt"))).unwrap());
    let vocab = vocab_bytes(
        &parse_vocab_json(&String::from_utf8(read(&out.join("vocab.json"))).unwrap()),
        &[EOT],
    );

    for name in [
        "cs336/tinystories_sample.txt",
        "cs336/address.txt",
        "cs336/german.txt",
    ] {
        let input = fixture(name);
        let text = String::from_utf8(read(&input)).unwrap();
        let enc = bin()
            .args([
                os("encode"),
                os("--model"),
                model.as_os_str(),
                input.as_os_str(),
            ])
            .output()
            .unwrap();
        assert!(
            enc.status.success(),
            "{}",
            String::from_utf8_lossy(&enc.stderr)
        );
        let ids: Vec<u64> = String::from_utf8(enc.stdout.clone())
            .unwrap()
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect();
        assert_eq!(ids, reference_encode(&text, &merges, &vocab, EOT), "{name}");

        let ids_file = tmp.join("ids.txt");
        std::fs::write(&ids_file, &enc.stdout).unwrap();
        let dec = bin()
            .args([
                os("decode"),
                os("--model"),
                model.as_os_str(),
                ids_file.as_os_str(),
            ])
            .output()
            .unwrap();
        assert!(
            dec.status.success(),
            "{}",
            String::from_utf8_lossy(&dec.stderr)
        );
        assert_eq!(dec.stdout, text.as_bytes(), "{name} round trip");
    }

    // vocab.json + merges.txt describe the same model: `import` rebuilds tokenizer.model exactly.
    let imported = tmp.join("imported.model");
    let import = bin()
        .args([os("import"), os("--vocab")])
        .arg(out.join("vocab.json"))
        .arg("--merges")
        .arg(out.join("merges.txt"))
        .args(["--special", EOT, "--out"])
        .arg(&imported)
        .output()
        .unwrap();
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    assert_eq!(
        picobpe_model::Model::read(&imported).unwrap(),
        picobpe_model::Model::read(&model).unwrap()
    );

    let inspect = bin()
        .args([os("inspect"), os("--model"), model.as_os_str()])
        .output()
        .unwrap();
    assert!(
        inspect.status.success(),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    let report = String::from_utf8_lossy(&inspect.stdout);
    assert!(report.contains("2000"), "{report}");
}

#[test]
fn stderr_not_a_terminal_gets_one_summary_line() {
    let tmp = TempDir::new("summary");
    let out = tmp.join("out");
    let input = fixture("cs336/tinystories_sample.txt");
    for quiet in [false, true] {
        let mut cmd = bin();
        cmd.arg("train")
            .arg("--input")
            .arg(&input)
            .args(["--vocab-size", "300", "--special-token", EOT])
            .arg("--out")
            .arg(&out);
        if quiet {
            cmd.arg("--quiet");
        }
        let output = cmd.output().unwrap();
        assert!(output.status.success());
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
        assert!(
            stderr.starts_with("trained 300 tokens (256 bytes + 43 merges + 1 specials)"),
            "{stderr}"
        );
    }
}
