//! Selects the machine's memory layout and link scripts.
use std::{env, fs, path::PathBuf};

fn main() {
    let lm3s = env::var_os("CARGO_FEATURE_LM3S6965EVB").is_some();
    let mps2 = env::var_os("CARGO_FEATURE_MPS2_AN385").is_some();
    let machine = match (lm3s, mps2) {
        (true, false) => "lm3s6965evb",
        (false, true) => "mps2-an385",
        _ => fail(
            "select exactly one machine feature: `lm3s6965evb` (default) or \
                   `--no-default-features --features mps2-an385`",
        ),
    };
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let memory = manifest.join("memory").join(format!("{machine}.x"));
    fs::copy(&memory, out.join("memory.x"))
        .unwrap_or_else(|e| fail(&format!("{}: {e}", memory.display())));
    println!("cargo::rerun-if-changed={}", memory.display());
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rustc-env=PICOBPE_MACHINE={machine}");
    println!("cargo::rustc-link-arg-bins=-Tlink.x");
    println!("cargo::rustc-link-arg-tests=-Tlink.x");
    println!("cargo::rustc-link-arg-tests=-Tembedded-test.x");
    println!("cargo::rustc-check-cfg=cfg(rust_analyzer)");
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}
