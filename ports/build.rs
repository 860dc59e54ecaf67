//! Build script: bakes the model into flash tables, embeds the conformance vectors and picks
//! the machine's memory layout.
//!
//! Inputs (environment; `cargo xtask ports-test` sets them all):
//! - `PICOBPE_MODEL`: the `*.model` file to bake. Its kind picks the code: a SentencePiece
//!   model (BPE or Unigram) sets `cfg(picobpe_sp)` (`src/sentencepiece.rs`), a WordPiece model
//!   `cfg(picobpe_wp)` (`src/wordpiece.rs`); a byte-level model neither (`src/byte_level.rs`).
//! - `PICOBPE_VECTORS`: a conformance vector file (`PBVEC1`/`PBVEC2`, made by `cargo xtask`
//!   from the reference library's ids; see `xtask/src/firmware/vectors.rs` and
//!   `xtask/src/ports.rs`).
//! - `PICOBPE_PORT_MACHINE`: the QEMU machine: `microbit` (Cortex-M0), `mps2-an385` (runs
//!   Armv6-M code too) or `riscv-virt`.
use std::{env, fs, path::PathBuf};

use picobpe_build::BakedSizes;

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let var = |name: &str| {
        println!("cargo::rerun-if-env-changed={name}");
        env::var(name).unwrap_or_else(|_| {
            fail(&format!(
                "{name} is not set; build this crate with `cargo xtask ports-test` from the \
                 repository root"
            ))
        })
    };
    let machine = var("PICOBPE_PORT_MACHINE");
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    match (machine.as_str(), arch.as_str()) {
        ("microbit" | "mps2-an385", "arm") | ("riscv-virt", "riscv32") => {}
        _ => fail(&format!(
            "machine `{machine}` does not run target arch `{arch}`: microbit and mps2-an385 \
             take thumbv6m-none-eabi, riscv-virt riscv32imac-unknown-none-elf"
        )),
    }
    let memory = manifest.join("memory").join(format!("{machine}.x"));
    if let Err(e) = fs::copy(&memory, out.join("memory.x")) {
        fail(&format!("{}: {e}", memory.display()));
    }
    println!("cargo::rerun-if-changed={}", memory.display());
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rustc-link-arg-bins=-Tlink.x");
    println!("cargo::rustc-env=PICOBPE_MACHINE={machine}");
    println!("cargo::rustc-check-cfg=cfg(picobpe_small_ram)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_sp)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_wp)");
    // `vectors.rs` (shared with the Cortex-M3 firmware) tests it; here the vectors are always in.
    println!("cargo::rustc-check-cfg=cfg(picobpe_vectors)");
    if machine == "microbit" {
        println!("cargo::rustc-cfg=picobpe_small_ram");
    }

    let model = PathBuf::from(var("PICOBPE_MODEL"));
    println!("cargo::rerun-if-changed={}", model.display());
    let name = model.file_name().and_then(|n| n.to_str()).unwrap_or("?");
    println!("cargo::rustc-env=PICOBPE_MODEL_FILE={name}");
    match picobpe_build::bake(&model) {
        Ok(baked) => match baked.sizes {
            BakedSizes::SentencePiece(_) => println!("cargo::rustc-cfg=picobpe_sp"),
            BakedSizes::WordPiece(_) => println!("cargo::rustc-cfg=picobpe_wp"),
            BakedSizes::BytePair(_) => {}
        },
        Err(e) => fail(&format!("baking {}: {e}", model.display())),
    }

    let vectors = PathBuf::from(var("PICOBPE_VECTORS"));
    println!("cargo::rerun-if-changed={}", vectors.display());
    if let Err(e) = fs::copy(&vectors, out.join("vectors.bin")) {
        fail(&format!("{}: {e}", vectors.display()));
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}
