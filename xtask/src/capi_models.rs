//! `cargo xtask capi-models-test [FILTER]`: the C API built with SentencePiece and WordPiece
//! models, checked from C against sentencepiece's and tokenizers' ids.
//!
//! For each model (sp4096: SentencePiece BPE with byte fallback and user-defined symbols;
//! mistral: Mistral 7B v0.1's published 32,000-piece BPE model, the Llama 2 layout; ug8000: a
//! T5-style Unigram model; sp-nfkc: BPE with the `nmt_nfkc` normalizer, its character map
//! baked in; ms-bpe-nfkc: `tokenizers`' `SentencePieceBPETokenizer` from its `tokenizer.json`,
//! NFKC in the core; ms-t5-nfkc: a T5 `tokenizer.json` (`Precompiled` `nmt_nfkc` map by
//! `tokenizers`' rule); minilm: all-MiniLM-L6-v2's WordPiece, BERT's uncased vocabulary, with its added
//! tokens recognized or read as text), it builds `picobpe-capi` for the host with that model
//! baked in
//! (`PICOBPE_MODEL`, release, its own target directory `target/capi-models`), compiles
//! `capi/tests/sp_conformance.c` against it with the system `cc`, and runs it on the model's
//! vector file: the records of the Cortex-M3 mps2-an385 on-target tests
//! ([`firmware::vectors::prepare_sp`] and [`firmware::vectors::prepare_wp`], made from the
//! committed reference vectors). The C
//! program checks every exported function on every record (see its header) and that the
//! library reports the model's family. The gpt2 build of the library is checked by
//! `capi/tests/c_api.rs` (`cargo test -p picobpe-capi`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::firmware::{self, repo_root, Builtin, Machine};

/// The models, with the `PicobpeFamily` value the library must report for each.
const MODELS: [(Builtin, u32); 7] = [
    (Builtin::Sp4096, 1),
    (Builtin::Mistral, 1),
    (Builtin::Ug8000, 2),
    (Builtin::SpNfkc, 1),
    (Builtin::MsBpeNfkc, 1),
    (Builtin::MsT5Nfkc, 1),
    (Builtin::Minilm, 3),
];

/// Entry point of `capi-models-test [FILTER]`: every model, or those whose name contains
/// FILTER.
pub fn run(args: &[String]) -> Result<(), String> {
    let filter = crate::ports::filter_arg(args, "capi-models-test")?;
    let start = Instant::now();
    let mut runs = 0;
    for (model, family) in MODELS {
        if filter.is_some_and(|f| !model.name().contains(f)) {
            continue;
        }
        run_one(model, family)?;
        runs += 1;
    }
    if runs == 0 {
        return Err(format!("no model matches `{}`", filter.unwrap_or_default()));
    }
    println!(
        "capi-models-test: {runs} models passed in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Builds the library with `model`, then compiles and runs the C conformance program.
fn run_one(model: Builtin, family: u32) -> Result<(), String> {
    println!("== the C API with {}", model.describe());
    let model_file = firmware::prepare_model(model)?;
    let (path, count, reference) = match (
        model.sentencepiece_fixture(),
        model.tokenizer_json_fixture(),
    ) {
        (Some(fixture), _) => {
            let v = firmware::vectors::prepare_sp(fixture, Machine::Mps2An385)?;
            (v.path, v.count, "sentencepiece")
        }
        (None, Some(dir)) => {
            let name = dir.rsplit('/').next().unwrap_or(dir);
            let v = firmware::vectors::prepare_wp(name)?;
            (v.path, v.count, "tokenizers")
        }
        _ => {
            return Err(format!(
                "{} has no reference vectors for the C API",
                model.name()
            ))
        }
    };
    let vectors = Vectors { path, count };
    println!(
        "   {} {reference} records ({})",
        vectors.count,
        vectors.path.display()
    );
    let library = build_library(&model_file)?;
    let exe = library.with_file_name(format!("sp_conformance-{}", model.name()));
    compile(&library, &exe)?;
    let out = Command::new(&exe)
        .arg(&vectors.path)
        .arg(family.to_string())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    print!("   {}", String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        return Err(format!(
            "the C API with {} failed ({}):\n{}",
            model.name(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// A prepared vector file.
struct Vectors {
    path: PathBuf,
    count: usize,
}

/// `cargo build --release -p picobpe-capi` with `model` baked in; returns the static library.
fn build_library(model: &Path) -> Result<PathBuf, String> {
    let root = repo_root();
    let target_dir = root.join("target/capi-models");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(&root)
        .args(["build", "--release", "--quiet", "-p", "picobpe-capi"])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("PICOBPE_MODEL", model)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building picobpe-capi with {} failed",
            model.display()
        ));
    }
    Ok(target_dir.join("release/libpicobpe_capi.a"))
}

/// Compiles `capi/tests/sp_conformance.c` against `library` into `exe` with the system `cc`.
fn compile(library: &Path, exe: &Path) -> Result<(), String> {
    let root = repo_root();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let status = Command::new(&cc)
        .args(["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root.join("capi/include"))
        .arg(root.join("capi/tests/sp_conformance.c"))
        .arg(library)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(exe)
        .status()
        .map_err(|e| format!("cannot run `{cc}` (install a C compiler, e.g. gcc): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err("compiling capi/tests/sp_conformance.c failed".into())
    }
}
