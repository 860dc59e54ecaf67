//! Build script: bakes the model the C API serves into `OUT_DIR/picobpe_tables.rs`, and sets
//! `cfg(picobpe_capi_sp)` for a SentencePiece model and `cfg(picobpe_capi_wp)` for a WordPiece
//! model. The model file named by the environment
//! variable `PICOBPE_MODEL` (a picobpe byte-level BPE or SentencePiece model file),
//! or else gpt2, imported from the committed rank file `tests/fixtures/models/gpt2.tiktoken`
//! with its special token `<|endoftext|>` (50256).
use std::env;
use std::path::PathBuf;

use picobpe_build::BakedSizes;
use picobpe_model::{import, PatternKind};

fn main() {
    println!("cargo:rerun-if-env-changed=PICOBPE_MODEL");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let model_path = match env::var_os("PICOBPE_MODEL") {
        // A build script runs in `capi/`, not where cargo was started: a relative path would
        // name a file the user did not mean.
        Some(path) if PathBuf::from(&path).is_relative() => panic!(
            "PICOBPE_MODEL must be an absolute path (e.g. PICOBPE_MODEL=$PWD/{}), got {}",
            PathBuf::from(&path).display(),
            PathBuf::from(&path).display()
        ),
        Some(path) => PathBuf::from(path),
        None => {
            let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("manifest"));
            let ranks = manifest.join("../tests/fixtures/models/gpt2.tiktoken");
            println!("cargo:rerun-if-changed={}", ranks.display());
            let bytes =
                std::fs::read(&ranks).unwrap_or_else(|e| panic!("{}: {e}", ranks.display()));
            let specials = [("<|endoftext|>".to_owned(), 50256)];
            let model = import::tiktoken(&bytes, PatternKind::Gpt2, &specials)
                .unwrap_or_else(|e| panic!("{}: {e}", ranks.display()));
            let path = out.join("gpt2.model");
            model
                .write(&path)
                .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
            path
        }
    };
    // The generated gpt2 file is always newer than the build: watching it would rebuild the
    // crate every time (the rank file above is what it comes from).
    let watch_model = env::var_os("PICOBPE_MODEL").is_some();
    println!("cargo::rustc-check-cfg=cfg(picobpe_capi_sp)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_capi_wp)");
    let baked = picobpe_build::Bake::new(&model_path)
        .cargo_directives(watch_model)
        .run()
        .unwrap_or_else(|e| panic!("baking {}: {e}", model_path.display()));
    match baked.sizes {
        BakedSizes::BytePair(_) => {}
        BakedSizes::SentencePiece(_) => println!("cargo::rustc-cfg=picobpe_capi_sp"),
        BakedSizes::WordPiece(_) => println!("cargo::rustc-cfg=picobpe_capi_wp"),
    }
}
