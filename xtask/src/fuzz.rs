//! `cargo xtask fuzz [--seconds N] [--if-available] [TARGET...]`: run the cargo-fuzz targets in
//! `fuzz/` two at a time, N seconds each (default 60), and print a summary line per target
//! (runs, execs/s, coverage) from libFuzzer's final stats.
//!
//! Each target starts from the committed seeds (`fuzz/seeds/<target>`) plus the working corpus
//! it grew before (`fuzz/corpus/<target>`, git-ignored); new inputs go to the working corpus.
//! The full libFuzzer output is kept in `target/fuzz-logs/<target>.log`. A crash stops the run
//! with the artifact's path (`fuzz/artifacts/<target>/...`); reproduce it with
//! `cargo +nightly fuzz run <target> <artifact>`.
//!
//! Needs the nightly toolchain and `cargo-fuzz` (`cargo install cargo-fuzz --locked`). With
//! `--if-available` (used by `cargo xtask test`), a machine without them skips the fuzzing with a
//! note instead of failing.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Every target, with its libFuzzer options.
const TARGETS: [(&str, &[&str]); 12] = [
    ("encode", &["-max_len=2048"]),
    ("decode", &["-max_len=4096"]),
    // Every committed SentencePiece model against a naive whole-text reference.
    ("sp_encode", &["-max_len=2048"]),
    // Both committed WordPiece models against Hugging Face tokenizers itself.
    ("wp_encode", &["-max_len=1024"]),
    // NFC, NFD, NFKC, NFKD alone and in a byte-level model against tokenizers itself.
    ("normalize", &["-max_len=1024"]),
    // tokenizers' Precompiled (T5) against a naive one, tokenizers itself and a T5 model.
    ("precompiled", &["-max_len=1024"]),
    // Sequences of character steps (ALBERT, XLNet) against tokenizers and an ALBERT model.
    ("steps", &["-max_len=1024"]),
    // A form, Lowercase and whitespace runs (CLIP's) against tokenizers and CLIP's file.
    ("folded", &["-max_len=1024"]),
    // Hostile model files must never make the loader allocate much: 256 MB is far beyond what
    // an 8 KB input justifies (the SentencePiece seeds, sp512's payload, are 5.7 KB).
    ("model_load", &["-max_len=8192", "-malloc_limit_mb=256"]),
    // The trainer prints a summary line per run on stderr: silence the target's stderr
    // (libFuzzer keeps its own). Reproduce a crash to see its message.
    ("train", &["-max_len=2048", "-close_fd_mask=2"]),
    // The SentencePiece BPE trainer: no panic, the same model on 1 and 2 threads, round trips.
    ("sp_train", &["-max_len=2048"]),
    // Compiled split patterns from a grammar against fancy-regex, one and two levels.
    ("split", &["-max_len=512"]),
];

/// Entry point of `fuzz`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut seconds = 60u64;
    let mut if_available = false;
    let mut targets: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                seconds = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--seconds needs a number")?
            }
            "--if-available" => if_available = true,
            t => match TARGETS.iter().find(|(name, _)| *name == t) {
                Some((name, _)) => targets.push(name),
                None => {
                    return Err(format!(
                        "unknown target `{t}` (targets: {})\nusage: cargo xtask fuzz [--seconds N] [--if-available] [TARGET...]",
                        TARGETS.map(|t| t.0).join(", ")
                    ))
                }
            },
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|t| t.0).collect();
    }
    if let Err(why) = tools_present() {
        if if_available {
            println!("== fuzz smoke SKIPPED: {why}");
            return Ok(());
        }
        return Err(why);
    }
    let root = repo_root();
    println!("== fuzz: building targets (nightly, cargo-fuzz)");
    let status = Command::new("cargo")
        .args(["+nightly", "fuzz", "build", "--fuzz-dir", "fuzz"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    if !status.success() {
        return Err("cargo fuzz build failed".into());
    }
    let logs = root.join("target/fuzz-logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    // Two targets at a time (libFuzzer runs one process per target, and the machine has two
    // cores); each worker takes the next target until none is left or one fails.
    let queue = std::sync::Mutex::new(targets.iter());
    let failed = std::sync::atomic::AtomicBool::new(false);
    let work = || -> Result<Vec<(usize, String)>, String> {
        let mut lines = Vec::new();
        loop {
            if failed.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(lines);
            }
            let next = queue.lock().map_err(|_| "fuzz queue poisoned")?.next();
            let Some(name) = next else {
                return Ok(lines);
            };
            let options = TARGETS
                .iter()
                .find(|t| t.0 == *name)
                .map_or(&[][..], |t| t.1);
            let order = TARGETS.iter().position(|t| t.0 == *name).unwrap_or(0);
            match run_target(&root, &logs, name, options, seconds) {
                Ok(line) => lines.push((order, line)),
                Err(e) => {
                    failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
    };
    let mut summary = Vec::new();
    std::thread::scope(|scope| -> Result<(), String> {
        let workers: Vec<_> = (0..2).map(|_| scope.spawn(work)).collect();
        for w in workers {
            summary.extend(w.join().map_err(|_| "a fuzz worker panicked")??);
        }
        Ok(())
    })?;
    summary.sort();
    let summary = summary.into_iter().map(|(_, line)| line);
    println!("== fuzz summary ({seconds} s per target, two at a time)");
    for line in summary {
        println!("  {line}");
    }
    Ok(())
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// `Err(reason)` unless `cargo +nightly fuzz` works.
fn tools_present() -> Result<(), String> {
    let out = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .output();
    match out {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(
            "needs the nightly toolchain and cargo-fuzz (`rustup toolchain install nightly`, \
             `cargo install cargo-fuzz --locked`)"
                .into(),
        ),
    }
}

/// Run one target for `seconds`; returns its summary line.
fn run_target(
    root: &Path,
    logs: &Path,
    name: &str,
    options: &[&str],
    seconds: u64,
) -> Result<String, String> {
    let corpus = root.join("fuzz/corpus").join(name);
    let seeds = root.join("fuzz/seeds").join(name);
    std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let log_path = logs.join(format!("{name}.log"));
    let mut log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    println!(
        "== fuzz {name} for {seconds} s (log: {})",
        log_path.display()
    );
    let mut child = Command::new("cargo")
        .args(["+nightly", "fuzz", "run", "--fuzz-dir", "fuzz", name])
        .arg(&corpus)
        .arg(&seeds)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .args(options)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    // libFuzzer reports on stderr; the target's own stdout is not interesting.
    let stdout = child.stdout.take();
    let drain = std::thread::spawn(move || {
        if let Some(s) = stdout {
            for _ in BufReader::new(s).lines() {}
        }
    });
    let mut last_stats = String::new();
    let mut artifact = None;
    let mut tail: Vec<String> = Vec::new();
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = writeln!(log, "{line}");
            if line.contains(" cov: ") && line.contains("exec/s") {
                last_stats = line.clone();
            }
            if line.contains("INITED") || line.contains("DONE") || line.contains("pulse") {
                println!("  {name}: {line}");
            }
            if let Some(i) = line.find("Test unit written to ") {
                artifact = Some(line[i + "Test unit written to ".len()..].trim().to_string());
            }
            tail.push(line);
            if tail.len() > 60 {
                tail.remove(0);
            }
        }
    }
    let _ = drain.join();
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!(
            "fuzz target `{name}` failed ({status}); last output:\n{}\nartifact: {}\nreproduce: cargo +nightly fuzz run --fuzz-dir fuzz {name} <artifact>",
            tail.join("\n"),
            artifact.as_deref().unwrap_or("(none written)")
        ));
    }
    Ok(format!("{name:<11} {}", stats_summary(&last_stats)))
}

/// `#123 DONE cov: 1 ft: 2 corp: 3/4b lim: 5 exec/s: 6 rss: 7Mb` → `runs 123, cov 1, ft 2, ...`.
fn stats_summary(line: &str) -> String {
    let mut words = line.split_whitespace();
    let runs = words
        .next()
        .map(|w| w.trim_start_matches('#'))
        .unwrap_or("?");
    let mut fields = Vec::new();
    let rest: Vec<&str> = words.collect();
    for pair in rest.windows(2) {
        if let ["cov:" | "ft:" | "corp:" | "exec/s:" | "rss:", v] = pair {
            fields.push(format!("{} {v}", pair[0].trim_end_matches(':')));
        }
    }
    format!("runs {runs}, {}", fields.join(", "))
}

#[cfg(test)]
mod tests {
    use super::stats_summary;

    #[test]
    fn summarises_libfuzzer_stats() {
        let line =
            "#52301\tDONE   cov: 2210 ft: 9876 corp: 812/91Kb lim: 2048 exec/s: 871 rss: 512Mb";
        assert_eq!(
            stats_summary(line),
            "runs 52301, cov 2210, ft 9876, corp 812/91Kb, exec/s 871, rss 512Mb"
        );
    }
}
