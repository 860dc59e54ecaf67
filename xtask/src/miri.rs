//! `cargo xtask miri`: the undefined-behaviour check. Runs the tests that are made for Miri,
//! under `cargo +nightly miri test`, and prints how long each run took:
//!
//! 1. the core (`-p picobpe --lib`, `--test miri_smoke`, `--test miri_families`): its unit
//!    tests, whose exhaustive loops shrink under `cfg(miri)` to a sample,
//!    `core/tests/miri_smoke.rs` (byte-level BPE) and
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
//! builds into `target/miri`, apart from the ordinary builds. The runs are built one after
//! the other and then run two at a time (Miri interprets on one thread). The budget is eight
//! minutes from a clean `target/miri`, so keep new Miri tests small (see
//! `docs/hostile-inputs.md`, "Miri").

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

/// Every run, in order: the longest first, as two run at a time (each core test file on its
/// own: `--tests` would run the unit tests a second time).
const RUNS: [Run; 5] = [
    Run {
        name: "core: unit tests",
        args: &["-p", "picobpe", "--lib"],
        files: false,
    },
    Run {
        name: "core: byte-level BPE (miri_smoke)",
        args: &["-p", "picobpe", "--test", "miri_smoke"],
        files: false,
    },
    Run {
        name: "core: SentencePiece, Unigram, WordPiece (miri_families)",
        args: &["-p", "picobpe", "--test", "miri_families"],
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

/// Runs at a time: Miri interprets on one thread, and the machine has two cores.
const AT_ONCE: usize = 2;

/// Entry point of `miri`. No arguments.
///
/// Builds every run first (one after the other: they share `target/miri`), then runs them
/// [`AT_ONCE`] at a time, each into its own log under `target/miri/logs`, printed when it ends.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!(
            "unexpected argument `{a}`\nusage: cargo xtask miri"
        ));
    }
    let root = repo_root();
    let start = Instant::now();
    ensure_miri()?;
    for run in &RUNS {
        println!("== miri build: {}", run.name);
        let status = command(&root, run, &["--no-run"])
            .status()
            .map_err(|e| format!("cannot run cargo miri: {e}"))?;
        if !status.success() {
            return Err(failed(run, status));
        }
    }
    let logs = root.join("target/miri/logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let mut times = Vec::new();
    let mut pending = RUNS.iter().enumerate();
    let mut running: Vec<(&Run, PathBuf, Instant, std::process::Child)> = Vec::new();
    loop {
        while running.len() < AT_ONCE {
            let Some((i, run)) = pending.next() else {
                break;
            };
            println!("== miri: {}", run.name);
            let log = logs.join(format!("run-{i}.log"));
            let file =
                std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
            let err = file
                .try_clone()
                .map_err(|e| format!("{}: {e}", log.display()))?;
            let child = command(&root, run, &[])
                .stdout(file)
                .stderr(err)
                .spawn()
                .map_err(|e| format!("cannot run cargo miri: {e}"))?;
            running.push((run, log, Instant::now(), child));
        }
        if running.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        let mut i = 0;
        while i < running.len() {
            let done = running[i]
                .3
                .try_wait()
                .map_err(|e| format!("waiting for cargo miri: {e}"))?;
            let Some(status) = done else {
                i += 1;
                continue;
            };
            let (run, log, t, _) = running.swap_remove(i);
            println!("== miri done: {} ({})", run.name, secs(t.elapsed()));
            print!("{}", std::fs::read_to_string(&log).unwrap_or_default());
            if !status.success() {
                for (_, _, _, mut child) in running {
                    let _ = child.kill();
                }
                return Err(failed(run, status));
            }
            times.push((run.name, t.elapsed()));
        }
    }
    println!("== miri summary ({AT_ONCE} runs at a time)");
    for (name, t) in times {
        println!("  {:>6}  {name}", secs(t));
    }
    println!(
        "  {:>6}  total, setup and builds included (budget 8 min)",
        secs(start.elapsed())
    );
    Ok(())
}

/// `cargo +nightly miri test` for `run`, with `extra` arguments after its own.
fn command(root: &Path, run: &Run, extra: &[&str]) -> Command {
    let mut c = Command::new("cargo");
    c.args(["+nightly", "miri", "test"])
        .args(run.args)
        .args(extra)
        .current_dir(root);
    if run.files {
        // `read_tables` leaks its tables by design (they live as long as the process).
        c.env("MIRIFLAGS", "-Zmiri-disable-isolation -Zmiri-ignore-leaks");
    }
    c
}

/// The error for a run that failed, with the command that reproduces it.
fn failed(run: &Run, status: std::process::ExitStatus) -> String {
    format!(
        "miri run `{}` failed ({status}); reproduce with `cargo +nightly miri test {}`",
        run.name,
        run.args.join(" ")
    )
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
