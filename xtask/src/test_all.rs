//! `cargo xtask test`: every check the project has, in the order that fails fastest.
//!
//! 1. toolchain pieces (installs the thumbv7m target, clippy and rustfmt, the nightly toolchain
//!    and cargo-fuzz for the fuzzing smoke, Python's `tokenizers` for the small model's
//!    reference vectors, Dask (`dask[distributed]`) for the sharded-training test and
//!    `sentencepiece` 0.2.3 to load the SentencePiece trainer's output, when missing);
//! 2. `cargo fmt --check`, the generated Unicode tables are current, `cargo clippy -D warnings`
//!    on the host workspace, `cargo doc` of the library crates with `-D missing_docs` and
//!    `-D rustdoc::broken_intra_doc_links`;
//! 3. a `no_std` build of the core and of the C API's static library for `thumbv7m-none-eabi`,
//!    and a check that no crate in the core's dependency graph links `alloc`;
//! 4. the link-time panic-freedom proof (`cargo xtask panic-check`);
//! 5. the host test suite (release profile: the exactness tests read megabytes of text; the
//!    doctests too, among them the `picobpe` crate docs' example, and the C API's C program
//!    built with the system `cc`; with `PICOBPE_REQUIRE_DASK=1` and `PICOBPE_REQUIRE_SPM=1`,
//!    so the Dask and `sentencepiece` checks fail rather than skip), the undefined-behaviour check under Miri
//!    (`cargo xtask miri`: the core's families, the C API, model file loading; it installs
//!    the nightly `miri` and `rust-src` components), the C API built for `wasm32-unknown-unknown`
//!    and run through the gpt2 vectors under Node (`cargo xtask wasm-test`), the C API built
//!    with SentencePiece and WordPiece models and run through sentencepiece's and tokenizers'
//!    vectors from C (`cargo xtask capi-models-test`), then a 15 s fuzzing smoke per target (two at a time);
//! 6. the on-target tests under QEMU (`cargo xtask firmware-test`), the C firmware example with
//!    gpt2 and minilm (`cargo xtask c-firmware-test`: `arm-none-eabi-gcc`, installed when
//!    missing) and the Cortex-M0 and RISC-V runs (`cargo xtask ports-test`: `qemu-system-misc`
//!    installed when missing).
//!
//! Any failing step stops the run with a non-zero exit, and prints the disk space left (a full
//! disk is the commonest cause of a red run on a clean machine). `--free-disk` (which `.ci/run`
//! passes) deletes each step's own build directory once the step has passed — Miri's
//! `target/miri`, the C API's per-model builds, `fuzz/target`, the firmware and ports targets —
//! so the run's peak disk use is one step's, not the sum (about 7 GB instead of 12 GB).

use std::path::Path;
use std::process::Command;

/// Entry point. `--skip-firmware` leaves out step 6 (for quick local runs); `--free-disk`
/// deletes each step's own build directory after it passes.
pub fn run(args: &[String]) -> Result<(), String> {
    let skip_firmware = args.iter().any(|a| a == "--skip-firmware");
    let free_disk = args.iter().any(|a| a == "--free-disk");
    let root = repo_root();
    // Deletes build directories that no later step reads, when `--free-disk` is given.
    let release = |dirs: &[&str]| {
        if free_disk {
            for d in dirs {
                let path = root.join(d);
                if path.exists() {
                    println!("== free disk: removing {d}");
                    let _ = std::fs::remove_dir_all(&path);
                }
            }
        }
    };
    crate::firmware::ensure_target("thumbv7m-none-eabi")?;
    ensure_component("clippy")?;
    ensure_component("rustfmt")?;
    ensure_fuzz_tools()?;
    if !skip_firmware {
        ensure_python_module("tokenizers", "tokenizers")?;
    }
    ensure_python_module("distributed", "dask[distributed]")?;
    ensure_python_module("sentencepiece", "sentencepiece==0.2.3")?;

    step("format", cargo(&root, &["fmt", "--all", "--", "--check"]))?;
    step(
        "generated Unicode tables are current",
        cargo(&root, &["xtask", "gen-unicode", "--check"]),
    )?;
    step(
        "generated WordPiece character tables are current",
        cargo(&root, &["xtask", "gen-wordpiece", "--check"]),
    )?;
    step(
        "clippy",
        cargo(
            &root,
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        ),
    )?;
    let mut doc = cargo(
        &root,
        &[
            "doc",
            "--no-deps",
            "-p",
            "picobpe",
            "-p",
            "picobpe-model",
            "-p",
            "picobpe-build",
            "-p",
            "picobpe-capi",
        ],
    );
    doc.env(
        "RUSTDOCFLAGS",
        "-D missing_docs -D rustdoc::broken_intra_doc_links",
    );
    step(
        "docs: every public item documented, every link resolves",
        doc,
    )?;
    step(
        "no_std core build (thumbv7m-none-eabi)",
        cargo(
            &root,
            &["build", "-p", "picobpe", "--target", "thumbv7m-none-eabi"],
        ),
    )?;
    step(
        "C API: bare-metal static library build (thumbv7m-none-eabi)",
        cargo(
            &root,
            &[
                "build",
                "-p",
                "picobpe-capi",
                "--target",
                "thumbv7m-none-eabi",
            ],
        ),
    )?;
    check_no_alloc(&root)?;
    step(
        "panic freedom: link-time proof (opt-level 3, s, z)",
        cargo(&root, &["xtask", "panic-check"]),
    )?;
    step("host tests (release)", {
        let mut c = cargo(&root, &["test", "--workspace", "--release"]);
        c.env("PICOBPE_REQUIRE_DASK", "1");
        c.env("PICOBPE_REQUIRE_SPM", "1");
        c
    })?;
    step(
        "Miri: core (every family), C API, model file loading",
        cargo(&root, &["xtask", "miri"]),
    )?;
    release(&["target/miri"]);
    step(
        "C API on wasm32-unknown-unknown: the gpt2 vectors under Node",
        cargo(&root, &["xtask", "wasm-test"]),
    )?;
    step(
        "C API with SentencePiece and WordPiece models (sp4096, mistral, ug8000, sp-nfkc, \
         ms-bpe-nfkc, ms-t5-nfkc, minilm) from C",
        cargo(&root, &["xtask", "capi-models-test"]),
    )?;
    release(&["target/capi-models", "target/wasm32-unknown-unknown"]);
    step(
        "fuzz smoke (15 s per target)",
        cargo(&root, &["xtask", "fuzz", "--seconds", "15"]),
    )?;
    release(&["fuzz/target"]);
    if skip_firmware {
        println!("== on-target tests skipped (--skip-firmware)");
    } else {
        step(
            "on-target tests under QEMU",
            cargo(&root, &["xtask", "firmware-test"]),
        )?;
        // The prepared models in firmware-example/target/models stay: the later steps use them.
        release(&[
            "firmware-example/target/thumbv7m-none-eabi",
            "firmware-example/target/release",
            "firmware-example/target/debug",
        ]);
        step(
            "C firmware (arm-none-eabi-gcc + the C API) under QEMU",
            cargo(&root, &["xtask", "c-firmware-test"]),
        )?;
        release(&["target/c-firmware-models"]);
        step(
            "Cortex-M0 (thumbv6m) and RISC-V (riscv32imac) under QEMU",
            cargo(&root, &["xtask", "ports-test"]),
        )?;
    }
    println!("== all checks passed");
    Ok(())
}

/// The repository root (xtask's manifest dir is `<root>/xtask`).
fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

fn cargo(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.args(args).current_dir(root);
    c
}

/// Run one step, printing its name before and its wall time after (to see where a CI run's
/// time goes).
fn step(name: &str, mut cmd: Command) -> Result<(), String> {
    println!("== {name}");
    let start = std::time::Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("{name}: cannot start: {e}"))?;
    println!("== {name}: {:.0} s", start.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        report_disk_space();
        Err(format!("step `{name}` failed ({status})"))
    }
}

/// Prints `df -h` of the repository's file system (best effort: a failed `df` prints nothing).
fn report_disk_space() {
    if let Ok(out) = Command::new("df").arg("-h").arg(repo_root()).output() {
        print!("{}", String::from_utf8_lossy(&out.stdout));
    }
}

fn ensure_component(name: &str) -> Result<(), String> {
    let out = Command::new("rustup")
        .args(["component", "list", "--installed"])
        .output()
        .map_err(|e| format!("rustup not found ({e}); install `{name}` with rustup"))?;
    if String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.starts_with(name))
    {
        return Ok(());
    }
    step(&format!("rustup component add {name}"), {
        let mut c = Command::new("rustup");
        c.args(["component", "add", name]);
        c
    })
}

/// Install what the fuzzing smoke needs when it is missing: the nightly toolchain (minimal
/// profile) and `cargo-fuzz`. Fails with the commands to run by hand if that does not work.
fn ensure_fuzz_tools() -> Result<(), String> {
    let works = |args: &[&str]| {
        Command::new("cargo")
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works(&["+nightly", "fuzz", "--version"]) {
        return Ok(());
    }
    if !works(&["+nightly", "--version"]) {
        step("rustup toolchain install nightly", {
            let mut c = Command::new("rustup");
            c.args(["toolchain", "install", "nightly", "--profile", "minimal"]);
            c
        })
        .map_err(|e| format!("{e}; install it with `rustup toolchain install nightly`"))?;
    }
    step("cargo install cargo-fuzz", {
        let mut c = Command::new("cargo");
        c.args(["install", "cargo-fuzz", "--locked"]);
        c
    })
    .map_err(|e| format!("{e}; install it with `cargo install cargo-fuzz --locked`"))
}

/// Install a Python package when `python3` cannot import `module`: `tokenizers` (Hugging
/// Face; the small model's on-target reference vectors come from it) and `dask[distributed]`
/// (the sharded-training test's local cluster). Fails with the command to run by hand.
pub fn ensure_python_module(module: &str, package: &str) -> Result<(), String> {
    let has = || {
        Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has() {
        return Ok(());
    }
    let hint = format!("install it with `python3 -m pip install '{package}'`");
    step(&format!("pip install {package}"), {
        let mut c = Command::new("python3");
        c.args(["-m", "pip", "install", "--quiet", package]);
        c
    })
    .map_err(|e| format!("{e}; {hint}"))?;
    if has() {
        Ok(())
    } else {
        Err(format!("python3 still cannot import {module}; {hint}"))
    }
}

/// Fail if any crate the core depends on (for the embedded target) uses `alloc`.
fn check_no_alloc(root: &Path) -> Result<(), String> {
    println!("== no `alloc` in the core's dependency graph");
    let out = cargo(
        root,
        &[
            "tree",
            "-p",
            "picobpe",
            "--target",
            "thumbv7m-none-eabi",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p} {f}",
        ],
    )
    .output()
    .map_err(|e| format!("cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let tree = String::from_utf8_lossy(&out.stdout);
    let mut bad = Vec::new();
    for line in tree.lines() {
        // `{p} {f}`: "name vX.Y.Z (path) feat1,feat2"
        let features = line.rsplit(' ').next().unwrap_or("");
        // (A `std` feature alone proves nothing: siphasher's is a no-op, and a real std use
        // fails the thumbv7m build above.)
        if features.split(',').any(|f| f == "alloc") {
            bad.push(line.to_string());
        }
    }
    let registry = home_registry_src();
    for line in tree.lines() {
        let mut parts = line.split_whitespace();
        let (Some(name), Some(ver)) = (parts.next(), parts.next()) else {
            continue;
        };
        let dir_name = format!("{name}-{}", ver.trim_start_matches('v'));
        let src = if name == "picobpe" {
            root.join("core/src")
        } else if let Some(reg) = &registry {
            match find_crate_dir(reg, &dir_name) {
                Some(d) => d.join("src"),
                None => continue,
            }
        } else {
            continue;
        };
        let features: Vec<&str> = line.rsplit(' ').next().unwrap_or("").split(',').collect();
        if declares_alloc(&src, &features) {
            bad.push(format!("{line} (declares `extern crate alloc`)"));
        }
    }
    if bad.is_empty() {
        println!(
            "{} crates checked, none enables or declares alloc",
            tree.lines().count()
        );
        Ok(())
    } else {
        Err(format!(
            "crates using alloc in the core's graph:\n  {}",
            bad.join("\n  ")
        ))
    }
}

fn home_registry_src() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    Some(home.join("registry/src"))
}

fn find_crate_dir(registry_src: &Path, dir_name: &str) -> Option<std::path::PathBuf> {
    for index in std::fs::read_dir(registry_src).ok()?.flatten() {
        let candidate = index.path().join(dir_name);
        if candidate.is_dir() {
            return Some(candidate);
        }
    }
    None
}

/// True if a source file under `dir` declares `extern crate alloc` other than behind
/// `#[cfg(feature = "X")]` for a feature `X` that is not enabled.
fn declares_alloc(dir: &Path, enabled: &[&str]) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        if p.is_dir() {
            return declares_alloc(&p, enabled);
        }
        if p.extension().is_none_or(|x| x != "rs") {
            return false;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            return false;
        };
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.iter().enumerate().any(|(i, l)| {
            if !l.starts_with("extern crate alloc") {
                return false;
            }
            let gate = i
                .checked_sub(1)
                .and_then(|j| lines.get(j))
                .copied()
                .unwrap_or("");
            match gate
                .strip_prefix("#[cfg(feature = \"")
                .and_then(|g| g.strip_suffix("\")]"))
            {
                Some(feature) => enabled.contains(&feature),
                None => true,
            }
        })
    })
}
