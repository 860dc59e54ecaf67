//! `cargo xtask miri`: the undefined-behaviour check. Runs the tests that are made for Miri,
//! under `cargo +nightly miri test`, one crate after the other, and prints how long each took:
//!
//! 1. the core (`-p picobpe --lib --tests`): its unit tests, whose exhaustive loops shrink
//!    under `cfg(miri)` to a sample, `core/tests/miri_smoke.rs` (byte-level BPE) and
//!    `core/tests/miri_families.rs` (SentencePiece BPE, Unigram and WordPiece), every public
//!    entry point over small hand-built tables, checked against naive references;
//! 2. the C API's `extern "C"` functions called from Rust with raw pointers
//!    (`capi/tests/miri_api.rs`);
//! 3. `picobpe_model::read_tables` on intact and damaged model files
//!    (`model/tests/miri_read_tables.rs`; file access needs `-Zmiri-disable-isolation`, the
//!    tables it returns are leaked by design so `-Zmiri-ignore-leaks`, and Miri cannot map
//!    files, so the copy path runs).
//!
//! Installs what it needs when it is missing: the nightly toolchain (minimal profile) with its
//! `miri` and `rust-src` components, and Miri's sysroot (`cargo +nightly miri setup`). Miri
//! builds into `target/miri`, apart from the ordinary builds. From a clean `target/miri` the
//! run took 7 min 30 s on the shared 2-core VM (5 min 34 s with the builds done); the budget is
//! eight minutes, so keep new Miri tests small (see `docs/hostile-inputs.md`, "Miri").

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One Miri run: a name, the arguments after `cargo +nightly miri test`, whether it reads
/// files (it then runs without isolation and without the leak check: `read_tables` leaks).
struct Run {
    name: &'static str,
    args: &'static [&'static str],
    files: bool,
}

/// Every run, in order.
const RUNS: [Run; 3] = [
    Run {
        name: "core: unit tests, byte-level BPE, SentencePiece, Unigram, WordPiece",
        args: &["-p", "picobpe", "--lib", "--tests"],
        files: false,
    },
    Run {
        name: "C API: the extern \"C\" functions from Rust",
        args: &["-p", "picobpe-capi", "--test", "miri_api"],
        files: false,
    },
    Run {
        name: "model files: read_tables, intact and damaged",
        args: &["-p", "picobpe-model", "--test", "miri_read_tables"],
        files: true,
    },
];

/// Entry point of `miri`. No arguments.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!(
            "unexpected argument `{a}`\nusage: cargo xtask miri"
        ));
    }
    let root = repo_root();
    let start = Instant::now();
    ensure_miri()?;
    let mut times = Vec::new();
    for run in &RUNS {
        println!("== miri: {}", run.name);
        let t = Instant::now();
        let mut c = Command::new("cargo");
        c.args(["+nightly", "miri", "test"])
            .args(run.args)
            .current_dir(&root);
        if run.files {
            // `read_tables` leaks its tables by design (they live as long as the process).
            c.env("MIRIFLAGS", "-Zmiri-disable-isolation -Zmiri-ignore-leaks");
        }
        let status = c
            .status()
            .map_err(|e| format!("cannot run cargo miri: {e}"))?;
        if !status.success() {
            return Err(format!(
                "miri run `{}` failed ({status}); reproduce with `cargo +nightly miri test {}`",
                run.name,
                run.args.join(" ")
            ));
        }
        times.push((run.name, t.elapsed()));
    }
    println!("== miri summary");
    for (name, t) in times {
        println!("  {:>6}  {name}", secs(t));
    }
    println!(
        "  {:>6}  total, setup included (budget 8 min)",
        secs(start.elapsed())
    );
    Ok(())
}

/// `12.3 s`.
fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// Install the nightly toolchain, its `miri` and `rust-src` components and Miri's sysroot
/// when missing. Fails with the commands to run by hand if that does not work.
fn ensure_miri() -> Result<(), String> {
    let works = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let hint = "install them with `rustup toolchain install nightly --profile minimal` and \
                `rustup +nightly component add miri rust-src`";
    if !works("cargo", &["+nightly", "--version"]) {
        run_step(
            "rustup toolchain install nightly",
            &["toolchain", "install", "nightly", "--profile", "minimal"],
        )
        .map_err(|e| format!("{e}; {hint}"))?;
    }
    let installed = Command::new("rustup")
        .args(["+nightly", "component", "list", "--installed"])
        .output()
        .map_err(|e| format!("rustup not found ({e}); {hint}"))?;
    let installed = String::from_utf8_lossy(&installed.stdout).into_owned();
    let has = |name: &str| installed.lines().any(|l| l.starts_with(name));
    let missing: Vec<&str> = ["miri", "rust-src"]
        .into_iter()
        .filter(|c| !has(c))
        .collect();
    if !missing.is_empty() {
        let mut args = vec!["+nightly", "component", "add"];
        args.extend(&missing);
        run_step(
            &format!("rustup +nightly component add {}", missing.join(" ")),
            &args,
        )
        .map_err(|e| format!("{e}; {hint}"))?;
    }
    // Builds Miri's sysroot the first time (about half a minute), a no-op after.
    println!("== cargo +nightly miri setup");
    let status = Command::new("cargo")
        .args(["+nightly", "miri", "setup"])
        .status()
        .map_err(|e| format!("cannot run cargo miri setup: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo +nightly miri setup failed ({status})"))
    }
}

/// Run `rustup args`, printed as `name`.
fn run_step(name: &str, args: &[&str]) -> Result<(), String> {
    println!("== {name}");
    let status = Command::new("rustup")
        .args(args)
        .status()
        .map_err(|e| format!("{name}: cannot start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{name}` failed ({status})"))
    }
}
