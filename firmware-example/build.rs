//! Build script: picks the machine's memory layout and link scripts, bakes the model into flash
//! tables, and embeds the conformance vectors when given.
//!
//! Inputs (environment):
//! - `PICOBPE_MODEL`: the `*.model` file to bake. Default: the model `cargo xtask firmware-run`
//!   prepares for the machine (`target/models/small.model` for lm3s6965evb,
//!   `target/models/gpt2.model` for mps2-an385, `target/models/cl100k_base.model` for mps2-an385
//!   with the `cl100k` feature, `target/models/llama3-8k.model` for either machine with the
//!   `llama3` feature, `target/models/tekken.model` for mps2-an385 with the `tekken` feature;
//!   with the `sentencepiece` feature `target/models/sp4096.model` for
//!   lm3s6965evb and `target/models/mistral.model` for mps2-an385; with the `sp4096` feature
//!   `target/models/sp4096.model` for either machine; with the `unigram` feature
//!   `target/models/ug8000.model` for either machine; with the `nfkc` feature
//!   `target/models/sp-nfkc.model` for either machine; with the `wordpiece` feature
//!   `target/models/bert-cased-8k.model` for lm3s6965evb and `target/models/minilm.model` for
//!   mps2-an385).
//!   The kind of the model decides the code: a SentencePiece model (BPE or Unigram) sets
//!   `cfg(picobpe_sp)`, which builds the firmware and its tests around `picobpe::SpTokenizer`,
//!   a WordPiece model `cfg(picobpe_wp)` (`picobpe::WpTokenizer`), instead of
//!   `picobpe::Tokenizer`, whatever the features.
//! - `PICOBPE_PIECES`: `full` (default, as in `picobpe-build`: every token as a whole-piece fast
//!   path) or `minimal` (only the entries exactness needs — none for GPT-2 and cl100k_base:
//!   ~16–20 % less table flash, 2.1–2.8× more instructions per byte). Byte-level models only.
//! - `PICOBPE_PIECE_KEYS`: `1` bakes the whole-piece keys (`picobpe_build::Bake::piece_keys`:
//!   8 more bytes of flash per whole-piece entry for a cheaper check of short pieces); default off.
//!   Byte-level models only.
//! - `PICOBPE_VECTORS`: a conformance vector file (made by `cargo xtask firmware-test`); when set,
//!   the on-target tests check the model against it (`cfg(picobpe_vectors)`).
//!   `PICOBPE_VECTORS_REF` names model and reference (`gpt2/tiktoken`,
//!   `cl100k_base/tiktoken`, `small/hf-tokenizers`, `llama3-8k/hf-tokenizers`,
//!   `deepseek-8k/hf-tokenizers`,
//!   `tekken/mistral-common`,
//!   `sp4096/sentencepiece`, `mistral-v1/sentencepiece`, `ug8000/sentencepiece`,
//!   `nfkc-bpe/sentencepiece`, `bert-cased-8k/hf-tokenizers`, `minilm-uncased/hf-tokenizers`,
//!   `wp-trained/hf-tokenizers`, `sp-trained/sentencepiece`,
//!   `wp-whitespace-digits/hf-tokenizers`);
//!   `gpt2/`, `cl100k_base/`, `llama3-8k/`, `tekken/`, `mistral-v1/`, `ug8000/` and
//!   `minilm-uncased/` also enable the tests specific to that model (`cfg(picobpe_gpt2)`,
//!   `cfg(picobpe_cl100k)`, `cfg(picobpe_llama3)`, `cfg(picobpe_tekken)`, `cfg(picobpe_mistral)`,
//!   `cfg(picobpe_ug8000)`,
//!   `cfg(picobpe_minilm)`).
use std::{env, fs, path::PathBuf};

use picobpe_build::{BakedSizes, PieceTable};

fn main() {
    let lm3s = env::var_os("CARGO_FEATURE_LM3S6965EVB").is_some();
    let mps2 = env::var_os("CARGO_FEATURE_MPS2_AN385").is_some();
    let machine = match (lm3s, mps2) {
        (true, false) => "lm3s6965evb",
        (false, true) => "mps2-an385",
        _ => fail(
            "select exactly one machine feature: `lm3s6965evb` (default) or \
             `--no-default-features --features mps2-an385` (add `cl100k` for cl100k_base, \
             `llama3` for llama3-8k, `tekken` for Tekken, `sentencepiece` for a SentencePiece \
             model, `unigram` for a SentencePiece Unigram model, `nfkc` for a SentencePiece \
             model with the `nmt_nfkc` normalizer or `wordpiece` for a WordPiece model)",
        ),
    };
    let feature = |name: &'static str| {
        let var = format!("CARGO_FEATURE_{}", name.to_uppercase());
        env::var_os(var).is_some().then_some(name)
    };
    // `sp4096` implies `sentencepiece`: name the narrower one.
    let model_features: Vec<&str> = [
        "cl100k",
        "llama3",
        "tekken",
        "sp4096",
        "unigram",
        "nfkc",
        "wordpiece",
    ]
        .into_iter()
        .filter_map(feature)
        .chain(feature("sentencepiece").filter(|_| feature("sp4096").is_none()))
        .collect();
    let (default_model, xtask_model) = match (machine, model_features.as_slice()) {
        ("lm3s6965evb", []) => ("small.model", "small"),
        ("mps2-an385", []) => ("gpt2.model", "gpt2"),
        ("mps2-an385", ["cl100k"]) => ("cl100k_base.model", "cl100k"),
        (_, ["llama3"]) => ("llama3-8k.model", "llama3-8k"),
        ("mps2-an385", ["tekken"]) => ("tekken.model", "tekken"),
        ("lm3s6965evb", ["sp4096" | "sentencepiece"]) => ("sp4096.model", "sp4096"),
        ("mps2-an385", ["sp4096"]) => ("sp4096.model", "sp4096 --machine mps2-an385"),
        ("mps2-an385", ["sentencepiece"]) => ("mistral.model", "mistral"),
        (_, ["unigram"]) => ("ug8000.model", "ug8000"),
        (_, ["nfkc"]) => ("sp-nfkc.model", "sp-nfkc"),
        ("lm3s6965evb", ["wordpiece"]) => ("bert-cased-8k.model", "bert-cased-8k"),
        ("mps2-an385", ["wordpiece"]) => ("minilm.model", "minilm"),
        ("lm3s6965evb", ["cl100k"]) => fail(
            "the `cl100k` feature needs `mps2-an385`: cl100k_base's tables (~2.7 MB) do not fit \
             the lm3s6965evb's 256 KiB of flash",
        ),
        ("lm3s6965evb", ["tekken"]) => fail(
            "the `tekken` feature needs `mps2-an385`: Tekken's tables (~3 MB) do not fit the \
             lm3s6965evb's 256 KiB of flash",
        ),
        _ => fail(&format!(
            "the model features {model_features:?} exclude each other: pick one of `cl100k`, \
             `llama3`, `tekken`, `sentencepiece` (or `sp4096`), `unigram`, `nfkc` and \
             `wordpiece`"
        )),
    };
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));

    // Memory layout and link scripts.
    let memory = manifest.join("memory").join(format!("{machine}.x"));
    if let Err(e) = fs::copy(&memory, out.join("memory.x")) {
        fail(&format!("{}: {e}", memory.display()));
    }
    println!("cargo::rerun-if-changed={}", memory.display());
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rustc-env=PICOBPE_MACHINE={machine}");
    println!("cargo::rustc-link-arg-bins=-Tlink.x");
    println!("cargo::rustc-link-arg-tests=-Tlink.x");
    println!("cargo::rustc-link-arg-tests=-Tembedded-test.x");
    println!("cargo::rustc-check-cfg=cfg(rust_analyzer)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_vectors)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_sp)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_wp)");

    // The model.
    println!("cargo::rerun-if-env-changed=PICOBPE_MODEL");
    let model = match env::var_os("PICOBPE_MODEL") {
        Some(p) => PathBuf::from(p),
        None => manifest.join("target").join("models").join(default_model),
    };
    if !model.is_file() {
        fail(&format!(
            "model file {} not found. Run `cargo xtask firmware-run --model {xtask_model}` from \
             the repository root (it trains or imports the default model), or set PICOBPE_MODEL \
             to your own `tokenizer.model`.",
            model.display()
        ));
    }
    println!("cargo::rerun-if-env-changed=PICOBPE_PIECES");
    let pieces = match env::var("PICOBPE_PIECES").as_deref() {
        Ok("full") | Err(_) => PieceTable::Full,
        Ok("minimal") => PieceTable::Minimal,
        Ok(other) => fail(&format!(
            "PICOBPE_PIECES={other}: expected `full` or `minimal`"
        )),
    };
    println!("cargo::rerun-if-env-changed=PICOBPE_PIECE_KEYS");
    let piece_keys = match env::var("PICOBPE_PIECE_KEYS").as_deref() {
        Ok("0") | Err(_) => false,
        Ok("1") => true,
        Ok(other) => fail(&format!("PICOBPE_PIECE_KEYS={other}: expected `0` or `1`")),
    };
    match picobpe_build::Bake::new(&model)
        .pieces(pieces)
        .piece_keys(piece_keys)
        .run()
    {
        // The model's kind picks the tokenizer the firmware and its tests are built around.
        Ok(baked) => match baked.sizes {
            BakedSizes::SentencePiece(_) => println!("cargo::rustc-cfg=picobpe_sp"),
            BakedSizes::WordPiece(_) => println!("cargo::rustc-cfg=picobpe_wp"),
            BakedSizes::BytePair(_) => {}
        },
        Err(e) => fail(&format!("baking {}: {e}", model.display())),
    }
    let file = model
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    println!("cargo::rustc-env=PICOBPE_MODEL_FILE={file}");

    // Conformance vectors.
    println!("cargo::rerun-if-env-changed=PICOBPE_VECTORS");
    println!("cargo::rerun-if-env-changed=PICOBPE_VECTORS_REF");
    println!("cargo::rustc-check-cfg=cfg(picobpe_gpt2)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_cl100k)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_mistral)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_llama3)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_tekken)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_minilm)");
    println!("cargo::rustc-check-cfg=cfg(picobpe_ug8000)");
    if let Some(v) = env::var_os("PICOBPE_VECTORS") {
        // `<model>/<reference>`, e.g. `gpt2/tiktoken`; a gpt2, cl100k_base, llama3-8k,
        // mistral-v1, ug8000 or minilm-uncased model adds the tests specific to it.
        let reference =
            env::var("PICOBPE_VECTORS_REF").unwrap_or_else(|_| "unnamed/reference".into());
        if reference.starts_with("gpt2/") {
            println!("cargo::rustc-cfg=picobpe_gpt2");
        }
        if reference.starts_with("cl100k_base/") {
            println!("cargo::rustc-cfg=picobpe_cl100k");
        }
        if reference.starts_with("mistral-v1/") {
            println!("cargo::rustc-cfg=picobpe_mistral");
        }
        if reference.starts_with("llama3-8k/") {
            println!("cargo::rustc-cfg=picobpe_llama3");
        }
        if reference.starts_with("tekken/") {
            println!("cargo::rustc-cfg=picobpe_tekken");
        }
        if reference.starts_with("minilm-uncased/") {
            println!("cargo::rustc-cfg=picobpe_minilm");
        }
        if reference.starts_with("ug8000/") {
            println!("cargo::rustc-cfg=picobpe_ug8000");
        }
        println!("cargo::rustc-env=PICOBPE_VECTORS_REF={reference}");
        let v = PathBuf::from(v);
        if let Err(e) = fs::copy(&v, out.join("vectors.bin")) {
            fail(&format!("PICOBPE_VECTORS={}: {e}", v.display()));
        }
        println!("cargo::rerun-if-changed={}", v.display());
        println!("cargo::rustc-cfg=picobpe_vectors");
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}
