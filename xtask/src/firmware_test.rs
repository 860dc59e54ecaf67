//! `cargo xtask firmware-test [--machine M] [--model NAME|FILE] [--show-output] [FILTER]`:
//! the on-target tests (`firmware-example/tests/*.rs`, embedded-test harness) under QEMU, by
//! default in every built-in configuration: the byte-level ones, lm3s6965evb/small,
//! mps2-an385/gpt2, mps2-an385/cl100k and mps2-an385/llama3-8k, the SentencePiece ones,
//! lm3s6965evb/sp4096, mps2-an385/sp4096, mps2-an385/mistral (BPE), mps2-an385/ug8000
//! (Unigram) and mps2-an385/sp-nfkc (BPE with the `nmt_nfkc` character map), and the WordPiece
//! ones,
//! lm3s6965evb/bert-cased-8k and mps2-an385/minilm (`--machine` keeps a machine's
//! configurations, `--model` one model's: `--model sp4096` runs it on both machines,
//! `--model sp4096 --machine mps2-an385` on one).
//!
//! This is the embedded-test runner protocol without probe-rs: the test list is read from the
//! ELF — every test is a symbol in section `.embedded_test` whose name is a JSON object
//! (`name`, `ignored`, `should_panic`, optional `timeout`) and whose data is
//! `(fn() -> !, &'static str module path)`. Each test runs in a fresh QEMU with
//! `-semihosting-config ...,arg=run_addr,arg=<decimal fn address>`; the harness exits with 0 on
//! success and 134 (abort) on a panic or an `Err`. A run that exceeds the test's timeout is killed
//! and fails. Prints one line per test, a `<machine>/<model>: N passed, N failed` line per
//! configuration and a final `N passed, N failed` line; any failure makes the command fail.

use std::path::Path;
use std::time::{Duration, Instant};

use object::{Object, ObjectSection, ObjectSymbol};

use crate::firmware::{self, Artifact, Build, Builtin, Config, Selection};

/// Default per-test timeout, as in embedded-test.
const DEFAULT_TIMEOUT_S: u64 = 60;

/// One test found in an ELF.
#[derive(Debug)]
pub struct TestCase {
    /// `module::name`, without the crate name.
    pub name: String,
    /// Address of the test's entry function (Thumb bit set), passed to `run_addr`.
    pub addr: u32,
    /// `#[ignore]`.
    pub ignored: bool,
    /// `#[should_panic]`.
    pub should_panic: bool,
    /// Seconds before the run is killed.
    pub timeout: u64,
}

/// Entry point of `firmware-test`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut opts = firmware::parse_options(args, Selection::All)?;
    let show_output = opts.rest.iter().any(|a| a == "--show-output");
    opts.rest.retain(|a| a != "--show-output");
    let filter = match opts.rest.as_slice() {
        [] => None,
        [f] if !f.starts_with('-') => Some(f.clone()),
        [a, ..] => {
            return Err(format!(
                "unexpected argument `{a}`\nusage: cargo xtask firmware-test [--machine M] [--model {}|FILE] [--show-output] [FILTER]",
                Builtin::ALL.map(Builtin::name).join("|")
            ))
        }
    };
    firmware::ensure_tools()?;
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut failures = Vec::new();
    let all_start = Instant::now();
    for config in &opts.configs {
        let machine = &config.machine;
        let model = config.model_path()?;
        println!(
            "== on-target tests on {} (model {})",
            config.label(),
            model.display()
        );
        let vectors = reference_vectors(config)?;
        let start = Instant::now();
        let elves = firmware::build(
            &Build {
                vectors: vectors.as_ref().map(|(p, r)| (p.as_path(), *r)),
                ..Build::new(config, &model)
            },
            Artifact::Tests,
        )?;
        println!("   built in {:.1} s", start.elapsed().as_secs_f64());
        if elves.is_empty() {
            return Err("cargo built no test binary".into());
        }
        let (mut p, mut f) = (0usize, 0usize);
        let start = Instant::now();
        for elf in &elves {
            let tests = list_tests(elf)?;
            if tests.is_empty() {
                return Err(format!(
                    "{}: no tests in section .embedded_test",
                    elf.display()
                ));
            }
            for t in tests {
                if filter
                    .as_ref()
                    .is_some_and(|f| !t.name.contains(f.as_str()))
                {
                    continue;
                }
                let label = format!("{}::{}", config.label(), t.name);
                if t.ignored {
                    println!("test {label} ... ignored");
                    continue;
                }
                let start = Instant::now();
                let out = firmware::run_qemu(
                    *machine,
                    elf,
                    &["run_addr".to_string(), t.addr.to_string()],
                    &[],
                    Duration::from_secs(t.timeout),
                )?;
                let verdict = match (out.status, t.should_panic) {
                    (Some(0), false) | (Some(134), true) => Ok(()),
                    (None, _) => Err(format!("timed out after {} s", t.timeout)),
                    (Some(code), _) => Err(format!("exit status {code}")),
                };
                let ms = start.elapsed().as_millis();
                match verdict {
                    Ok(()) => {
                        println!("test {label} ... ok ({ms} ms)");
                        if show_output {
                            print_indented(&out.stdout);
                        }
                        p += 1;
                    }
                    Err(why) => {
                        println!("test {label} ... FAILED ({why})");
                        print_indented(&out.stdout);
                        print_indented(&out.stderr);
                        failures.push(label);
                        f += 1;
                    }
                }
            }
        }
        println!(
            "{}: {p} passed, {f} failed ({:.1} s under QEMU)",
            config.label(),
            start.elapsed().as_secs_f64()
        );
        passed += p;
        failed += f;
    }
    if !failures.is_empty() {
        println!("failures:");
        for l in &failures {
            println!("    {l}");
        }
    }
    println!(
        "{passed} passed, {failed} failed ({:.1} s in all)",
        all_start.elapsed().as_secs_f64()
    );
    if failed > 0 {
        Err(format!("{failed} on-target test(s) failed"))
    } else if passed == 0 {
        Err("no on-target test ran".into())
    } else {
        Ok(())
    }
}

/// Reference vectors for a built-in model: tiktoken's for gpt2 and cl100k_base, Hugging Face
/// tokenizers' for the small trained model (made here from its vocabulary files; left out,
/// with a note, without `tokenizers`), sentencepiece's for sp4096, mistral, ug8000 and sp-nfkc
/// (`tests/fixtures/sp_norm/vectors/nfkc-bpe/`; the records that fit the machine's test
/// buffers, so sp4096 embeds more of them on the mps2-an385 than on the lm3s6965evb), and the
/// committed tokenizers vectors for llama3-8k, bert-cased-8k and minilm, `mistral-common`'s
/// for Tekken.
/// A user's model gets none.
fn reference_vectors(
    config: &Config,
) -> Result<Option<(std::path::PathBuf, &'static str)>, String> {
    let tiktoken = |encoding: &str, reference: &'static str| {
        let (path, n) = firmware::vectors::prepare(encoding)?;
        println!(
            "   embedding {n} tiktoken {encoding} vectors ({})",
            path.display()
        );
        Ok::<_, String>(Some((path, reference)))
    };
    match config.builtin() {
        Some(Builtin::Gpt2) => tiktoken("gpt2", "gpt2/tiktoken"),
        Some(Builtin::Cl100k) => tiktoken("cl100k_base", "cl100k_base/tiktoken"),
        Some(Builtin::Small) => Ok(firmware::vectors::prepare_small()?.map(|(path, n)| {
            println!(
                "   embedding {n} Hugging Face tokenizers vectors for the small model ({})",
                path.display()
            );
            (path, "small/hf-tokenizers")
        })),
        Some(
            b @ (Builtin::Sp4096
            | Builtin::Mistral
            | Builtin::Ug8000
            | Builtin::SpNfkc
            | Builtin::MsBpeNfkc
            | Builtin::MsT5Nfkc),
        ) => {
            let fixture = b
                .sentencepiece_fixture()
                .ok_or("no sentencepiece fixture")?;
            let model = fixture.name;
            let reference = match b {
                Builtin::Sp4096 => "sp4096/sentencepiece",
                Builtin::Mistral => "mistral-v1/sentencepiece",
                Builtin::SpNfkc => "nfkc-bpe/sentencepiece",
                Builtin::MsBpeNfkc => "ms-bpe-nfkc/hf-tokenizers",
                Builtin::MsT5Nfkc => "ms-t5-nfkc/hf-tokenizers",
                _ => "ug8000/sentencepiece",
            };
            let v = firmware::vectors::prepare_sp(fixture, config.machine)?;
            println!(
                "   embedding {} sentencepiece {model} vectors ({})",
                v.count,
                v.path.display()
            );
            if !v.left_out.is_empty() {
                println!(
                    "   left out (longer than the {} test buffers): {}",
                    config.machine.name(),
                    v.left_out.join(", ")
                );
            }
            Ok(Some((v.path, reference)))
        }
        Some(b @ (Builtin::SpTrained | Builtin::UgTrained)) => {
            let fixture = b
                .sentencepiece_fixture()
                .ok_or("no sentencepiece fixture")?;
            Ok(
                firmware::vectors::prepare_sp_trained(fixture, config.machine)?.map(|v| {
                    println!(
                        "   embedding {} sentencepiece vectors for {} ({})",
                        v.count,
                        b.name(),
                        v.path.display()
                    );
                    if !v.left_out.is_empty() {
                        println!(
                            "   left out (longer than the test buffers): {}",
                            v.left_out.join(", ")
                        );
                    }
                    let reference = if b == Builtin::UgTrained {
                        "ug-trained/sentencepiece"
                    } else {
                        "sp-trained/sentencepiece"
                    };
                    (v.path, reference)
                }),
            )
        }
        Some(Builtin::WpTrained) => Ok(firmware::vectors::prepare_wp_trained()?.map(|v| {
            println!(
                "   embedding {} Hugging Face tokenizers vectors for wp-trained ({})",
                v.count,
                v.path.display()
            );
            (v.path, "wp-trained/hf-tokenizers")
        })),
        Some(
            b @ (Builtin::Llama3
            | Builtin::DeepSeek
            | Builtin::Tekken
            | Builtin::BertCased
            | Builtin::Minilm
            | Builtin::WpWhitespace),
        ) => {
            // The vector file, who made its ids, and the reference name the firmware reads.
            let (v, source, reference) = match b {
                Builtin::Llama3 => (
                    firmware::vectors::prepare_hf_bpe("hf_bpe", "llama3-8k")?,
                    "Hugging Face tokenizers llama3-8k",
                    "llama3-8k/hf-tokenizers",
                ),
                Builtin::DeepSeek => (
                    firmware::vectors::prepare_hf_bpe("hf_compiled", "deepseek-8k")?,
                    "Hugging Face tokenizers deepseek-8k",
                    "deepseek-8k/hf-tokenizers",
                ),
                Builtin::Tekken => (
                    firmware::vectors::prepare_tekken()?,
                    "mistral-common Tekken",
                    "tekken/mistral-common",
                ),
                Builtin::BertCased => (
                    firmware::vectors::prepare_wp("bert-cased-8k")?,
                    "Hugging Face tokenizers bert-cased-8k",
                    "bert-cased-8k/hf-tokenizers",
                ),
                Builtin::WpWhitespace => (
                    firmware::vectors::prepare_wp("wp-whitespace-digits")?,
                    "Hugging Face tokenizers wp-whitespace-digits",
                    "wp-whitespace-digits/hf-tokenizers",
                ),
                _ => (
                    firmware::vectors::prepare_wp("minilm-uncased")?,
                    "Hugging Face tokenizers minilm-uncased",
                    "minilm-uncased/hf-tokenizers",
                ),
            };
            println!(
                "   embedding {} {source} vectors ({})",
                v.count,
                v.path.display()
            );
            if !v.left_out.is_empty() {
                println!(
                    "   left out (larger than the test buffers): {}",
                    v.left_out.join(", ")
                );
            }
            Ok(Some((v.path, reference)))
        }
        None => Ok(None),
    }
}

fn print_indented(s: &str) {
    for line in s.lines() {
        println!("    | {line}");
    }
}

/// Reads the embedded-test test list from an ELF.
pub fn list_tests(elf: &Path) -> Result<Vec<TestCase>, String> {
    let data = std::fs::read(elf).map_err(|e| format!("{}: {e}", elf.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", elf.display()))?;
    let section = file.section_by_name(".embedded_test").ok_or_else(|| {
        format!(
            "{}: no .embedded_test section (not an embedded-test binary?)",
            elf.display()
        )
    })?;
    let sec_data = section.data().map_err(|e| e.to_string())?;
    let sec_index = section.index();
    let mut tests = Vec::new();
    for sym in file.symbols() {
        if sym.section_index() != Some(sec_index) {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        if !name.starts_with('{') {
            continue;
        }
        let meta: serde_json::Value =
            serde_json::from_str(name).map_err(|e| format!("test symbol `{name}`: {e}"))?;
        let off = sym
            .address()
            .checked_sub(section.address())
            .ok_or("test symbol outside its section")? as usize;
        let word = |at: usize| -> Result<u32, String> {
            sec_data
                .get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| format!("test symbol `{name}` points past its section"))
        };
        let addr = word(off)?;
        let module = read_str(&file, word(off + 4)?, word(off + 8)?).unwrap_or_default();
        let module = module.split_once("::").map(|(_, m)| m).unwrap_or("");
        let fn_name = meta["name"].as_str().ok_or("test without a name")?;
        tests.push((
            off,
            TestCase {
                name: if module.is_empty() {
                    fn_name.to_string()
                } else {
                    format!("{module}::{fn_name}")
                },
                addr,
                ignored: meta["ignored"].as_bool().unwrap_or(false),
                should_panic: meta["should_panic"].as_bool().unwrap_or(false),
                timeout: meta["timeout"].as_u64().unwrap_or(DEFAULT_TIMEOUT_S),
            },
        ));
    }
    // Definition order (the section keeps the order of the source).
    tests.sort_by_key(|(off, _)| *off);
    Ok(tests.into_iter().map(|(_, t)| t).collect())
}

/// The UTF-8 string at virtual address `addr` of the ELF's loaded sections.
fn read_str(file: &object::File<'_>, addr: u32, len: u32) -> Option<String> {
    let (addr, len) = (addr as u64, len as u64);
    for s in file.sections() {
        if addr >= s.address() && addr + len <= s.address() + s.size() {
            let d = s.data().ok()?;
            let start = (addr - s.address()) as usize;
            return std::str::from_utf8(d.get(start..start + len as usize)?)
                .ok()
                .map(str::to_string);
        }
    }
    None
}
