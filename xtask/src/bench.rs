//! `cargo xtask bench [ARGS]`: the encode-throughput benchmark, i.e.
//! `cargo run --release -p picobpe-bench -- ARGS` (see `bench/src/main.rs` for the arguments:
//! `--encoding`, `--corpus`, `--runs`, `--specials`, `--cold`, `--first-use`, files). With
//! `--first-use`, `host-trainer` is built (release) first: that mode times the whole CLI process.

use std::path::Path;
use std::process::Command;

/// Entry point: forwards `args` to the bench binary, built in release mode.
pub fn run(args: &[String]) -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if args.iter().any(|a| a == "--first-use") {
        let status = Command::new(&cargo)
            .current_dir(root)
            .args(["build", "--release", "-p", "host-trainer"])
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() {
            return Err(format!("cargo build -p host-trainer exited with {status}"));
        }
    }
    let status = Command::new(&cargo)
        .current_dir(root)
        .args([
            "run",
            "--release",
            "-p",
            "picobpe-bench",
            "--bin",
            "picobpe-bench",
            "--",
        ])
        .args(args)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("picobpe-bench exited with {status}"))
    }
}
