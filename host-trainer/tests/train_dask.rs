//! The sharded training example on a real engine: `examples/dask_train.py` starts a Dask
//! `LocalCluster` with 2 worker processes, runs `count-pieces` per shard on the workers, sums the
//! count files with `merge-counts` in a tree, and trains with `train --counts`; the model must
//! be byte-identical to `train --input` on the whole corpus.
//!
//! Skipped, with a message, when `python3` cannot import `dask.distributed` (`.ci/run` installs
//! it with `pip install "dask[distributed]"` and sets `PICOBPE_REQUIRE_DASK=1`, which turns the
//! skip into a failure).

mod train_common;

use std::process::Command;

use train_common::*;

const EOT: &str = "<|endoftext|>";

/// Print past the test harness's output capture, so a skip is visible in `cargo test` output.
fn say(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{message}");
}

#[test]
fn dask_local_cluster_trains_the_whole_corpus_model() {
    let import = Command::new("python3")
        .args(["-c", "import dask.distributed"])
        .output();
    if !import.as_ref().is_ok_and(|o| o.status.success()) {
        let why = match &import {
            Ok(o) => String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_owned(),
            Err(e) => format!("cannot run python3: {e}"),
        };
        let why = format!(
            "python3 cannot import dask.distributed ({why}); install it with \
             `pip install \"dask[distributed]\"`"
        );
        assert!(
            std::env::var_os("PICOBPE_REQUIRE_DASK").is_none(),
            "PICOBPE_REQUIRE_DASK is set, but {why}"
        );
        say(&format!(
            "dask_local_cluster_trains_the_whole_corpus_model SKIPPED: {why}"
        ));
        return;
    }
    let corpus = match shared_data().map(|d| d.join("corpus/english.txt")) {
        Some(p) if p.is_file() => p,
        _ => {
            say("train_dask: shared english.txt not present: running on tests/fixtures/train/english-1mb.txt");
            fixture("train/english-1mb.txt")
        }
    };
    let tmp = TempDir::new("dask");
    let whole = tmp.join("whole");
    train_ok(&[&corpus], 5000, &[EOT], &whole, &[]);

    let sharded = tmp.join("sharded");
    let output = Command::new("python3")
        .arg(root().join("examples/dask_train.py"))
        .arg("--host-trainer")
        .arg(env!("CARGO_BIN_EXE_host-trainer"))
        .args([
            "--local-workers",
            "2",
            "--count-threads",
            "1",
            "--split",
            "5",
        ])
        .args([
            "--fan-in",
            "2",
            "--vocab-size",
            "5000",
            "--special-token",
            EOT,
        ])
        .arg("--work")
        .arg(tmp.join("work"))
        .arg("--out")
        .arg(&sharded)
        .arg(&corpus)
        .output()
        .expect("run python3");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "dask_train.py failed:\n{stderr}");
    say(stderr.trim());
    assert!(
        stderr.contains("dask: 5 shards counted and summed on a cluster of 2 workers"),
        "{stderr}"
    );
    for file in ["tokenizer.model", "vocab.json", "merges.txt"] {
        let a = std::fs::read(whole.join(file)).unwrap();
        let b = std::fs::read(sharded.join(file)).unwrap();
        assert!(a == b, "{file} differs between the whole and the Dask run");
    }
}
