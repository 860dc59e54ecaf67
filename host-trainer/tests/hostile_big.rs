//! Large hostile inputs (ignored by default: minutes of CPU). Run in release:
//!
//! ```text
//! cargo test --release -p host-trainer --test hostile_big -- --ignored --nocapture
//! ```
//!
//! - `encode` of a 1 GB stream through a pipe: peak RSS must not grow with the input;
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
/// seams) into `encode`; returns (peak RSS after 10 %, peak RSS at the end, ids, seconds).
fn encode_stream(total: usize) -> (Option<u64>, Option<u64>, u64, f64) {
    let text = english();
    let mut child = bin()
        .args(["encode", "--model", gpt2_tiktoken()])
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
    let (early, late, ids, secs) = encode_stream(total);
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
