//! Large hostile inputs (ignored by default, but for the 32 MiB per family check: minutes of
//! CPU). Run in release:
//!
//! ```text
//! cargo test --release -p host-trainer --test hostile_big -- --ignored --nocapture
//! ```
//!
//! - `encode` of a 1 GB stream through a pipe: peak RSS must not grow with the input;
//! - `encode` of 400 MB with a model of every family (byte-level, SentencePiece BPE, Unigram,
//!   WordPiece) under 200 MB of peak RSS (and, not ignored, 32 MiB each in flat memory);
//! - `train` on a 100 MB single line (no newline anywhere), then `encode` of it.
//!
//! Inputs are generated on the fly from the committed English fixture; the 100 MB file lives in
//! the system temp directory and is removed afterwards. Peak RSS is the child's `VmHWM` from
//! `/proc` (Linux), read just before its input ends. Figures are printed, not asserted against a
//! clock; memory bounds are asserted because they are the point. `docs/hostile-inputs.md` has
//! the measured figures.

mod cli_common;

use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::time::Instant;

use cli_common::{bin, fixture, gpt2_tiktoken, scratch};

/// The committed 1 MB English text.
fn english() -> Vec<u8> {
    std::fs::read(fixture("../train/english-1mb.txt")).expect("english-1mb.txt fixture")
}

/// Peak resident set of a running child, in KiB (`VmHWM`), or `None` off Linux.
fn peak_rss_kib(child: &Child) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Feed `total` bytes (the English text, repeated, each copy shifted so copies differ at the
/// seams) into `encode` with `model`; returns (peak RSS after 10 %, peak RSS at the end, ids,
/// seconds).
fn encode_stream(model: &str, total: usize) -> (Option<u64>, Option<u64>, u64, f64) {
    let text = english();
    let mut child = bin()
        .args(["encode", "--model", model])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn encode");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 20];
        let (mut spaces, mut any) = (0u64, false);
        loop {
            let n = stdout.read(&mut buf).expect("read ids");
            if n == 0 {
                return spaces + u64::from(any);
            }
            any = true;
            spaces += buf[..n].iter().filter(|&&b| b == b' ').count() as u64;
        }
    });
    let started = Instant::now();
    let mut stdin = child.stdin.take().unwrap();
    let (mut sent, mut copy, mut early) = (0usize, 0usize, None);
    while sent < total {
        let shift = (copy * 7919) % text.len();
        for part in [&text[shift..], &text[..shift]] {
            let part = &part[..part.len().min(total - sent)];
            stdin.write_all(part).expect("write input");
            sent += part.len();
        }
        copy += 1;
        if early.is_none() && sent >= total / 10 {
            early = peak_rss_kib(&child);
        }
    }
    let late = peak_rss_kib(&child);
    drop(stdin);
    let ids = reader.join().unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "encode failed: {status}");
    (early, late, ids, started.elapsed().as_secs_f64())
}

#[test]
#[ignore = "1 GB through the encoder: run with --release -- --ignored"]
fn encode_1gb_stream_in_flat_memory() {
    let total = 1usize << 30;
    let (early, late, ids, secs) = encode_stream(gpt2_tiktoken(), total);
    println!(
        "encode 1 GiB: {ids} ids in {secs:.1} s ({:.1} MB/s); peak RSS {early:?} KiB after 100 MiB, {late:?} KiB at 1 GiB",
        total as f64 / 1e6 / secs
    );
    assert!(ids > (total / 8) as u64, "too few ids: {ids}");
    if let (Some(early), Some(late)) = (early, late) {
        // Flat: the chunk (1 MiB), the id buffer and the text buffer do not grow with the input.
        assert!(late < 256 * 1024, "peak RSS {late} KiB");
        assert!(
            late <= early + 16 * 1024,
            "RSS grew from {early} KiB to {late} KiB"
        );
    }
}

/// A model of each family, imported by the CLI from the committed fixtures: SentencePiece BPE
/// (sp4096), Unigram (ug8000), WordPiece (bert-cased-8k), and gpt2.
fn every_family() -> Vec<(&'static str, String)> {
    let fixtures = fixture("..");
    let mut models = vec![("gpt2", gpt2_tiktoken().to_owned())];
    for (name, flag, file) in [
        (
            "sp4096",
            "--sentencepiece",
            "sentencepiece/models/sp4096.model",
        ),
        ("ug8000", "--sentencepiece", "unigram/models/ug8000.model"),
        (
            "bert-cased-8k",
            "--tokenizer-json",
            "wordpiece/bert-cased-8k/tokenizer.json",
        ),
    ] {
        let out = scratch().join(format!("big-{name}.model"));
        let status = bin()
            .args(["import", flag])
            .arg(fixtures.join(file))
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .status()
            .expect("spawn import");
        assert!(status.success(), "import {name}");
        models.push((name, out.to_str().unwrap().to_owned()));
    }
    models
}

/// Encode `mib` MiB through a pipe with a model of each family: the peak resident set must
/// not grow with the input (within 16 MiB of what it was after a tenth) and stay under
/// `limit_mib`.
fn every_family_in_flat_memory(mib: usize, limit_mib: u64) {
    for (name, model) in every_family() {
        let (early, late, ids, secs) = encode_stream(&model, mib << 20);
        println!(
            "encode {mib} MiB with {name}: {ids} ids in {secs:.1} s ({:.1} MB/s); peak RSS \
             {early:?} KiB after a tenth, {late:?} KiB at the end",
            (mib << 20) as f64 / 1e6 / secs
        );
        assert!(
            ids > ((mib << 20) / 16) as u64,
            "{name}: too few ids: {ids}"
        );
        if let (Some(early), Some(late)) = (early, late) {
            assert!(late < limit_mib * 1024, "{name}: peak RSS {late} KiB");
            assert!(
                late <= early + 16 * 1024,
                "{name}: RSS grew from {early} KiB to {late} KiB"
            );
        }
    }
}

/// Every family streams its input: 32 MiB each, in flat memory.
#[test]
fn every_family_encodes_in_flat_memory() {
    every_family_in_flat_memory(32, 100);
}

/// The issue's figure: 400 MB of input under 200 MB of peak RSS, every family.
#[test]
#[ignore = "400 MiB per family: run with --release -- --ignored"]
fn every_family_encodes_400mb_under_200mb() {
    every_family_in_flat_memory(400, 200);
}

#[test]
#[ignore = "100 MB single line: run with --release -- --ignored"]
fn train_and_encode_a_100mb_single_line() {
    let text = english();
    let line: Vec<u8> = text
        .iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
        .collect();
    let total = 100 << 20;
    let path = scratch().join("hostile-single-line.txt");
    {
        let mut f = std::fs::File::create(&path).unwrap();
        let mut written = 0;
        while written < total {
            let n = line.len().min(total - written);
            f.write_all(&line[..n]).unwrap();
            written += n;
        }
    }
    let out = scratch().join("hostile-single-line-model");
    let started = Instant::now();
    let mut child = bin()
        .args(["train", "--quiet", "--vocab-size", "1000", "--threads", "2"])
        .arg("--input")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut peak = None;
    while child.try_wait().unwrap().is_none() {
        peak = peak_rss_kib(&child).or(peak);
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let output = child.wait_with_output().unwrap();
    let train_secs = started.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "train failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!(
        "train on a 100 MiB single line: {train_secs:.1} s, peak RSS >= {peak:?} KiB; {}",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    if let Some(peak) = peak {
        // The counts of a repeated English text are small; nothing may hold the whole line.
        assert!(peak < 512 * 1024, "train peak RSS {peak} KiB");
    }

    let model = out.join("tokenizer.model");
    let started = Instant::now();
    let mut child = bin()
        .args(["encode", "--model"])
        .arg(&model)
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut ids = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    let mut peak = None;
    loop {
        let n = stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        ids += buf[..n].iter().filter(|&&b| b == b' ').count() as u64;
        peak = peak_rss_kib(&child).or(peak);
    }
    assert!(child.wait().unwrap().success());
    println!(
        "encode the 100 MiB line: {} ids in {:.1} s, peak RSS >= {peak:?} KiB",
        ids + 1,
        started.elapsed().as_secs_f64()
    );
    if let Some(peak) = peak {
        assert!(peak < 256 * 1024, "encode peak RSS {peak} KiB");
    }
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir_all(&out);
}
