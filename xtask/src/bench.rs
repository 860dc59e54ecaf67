//! `cargo xtask bench [ARGS]`: the encode-throughput benchmark, i.e.
//! `cargo run --release -p picobpe-bench -- ARGS` (see `bench/src/main.rs` for the arguments:
//! `--encoding`, `--corpus`, `--runs`, `--specials`, `--cold`, files).

use std::path::Path;
use std::process::Command;

/// Entry point: forwards `args` to the bench binary, built in release mode.
pub fn run(args: &[String]) -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?;
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["run", "--release", "-p", "picobpe-bench", "--"])
        .args(args)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("picobpe-bench exited with {status}"))
    }
}
