//! `cargo xtask ports-test`: picobpe on Cortex-M0 and RISC-V under QEMU (`ports/`).
//!
//! Each run is a build of `ports/` that checks every embedded reference record through the
//! tokenizer of its model's family (byte-level BPE; SentencePiece BPE or Unigram; WordPiece:
//! encode, resumed encode, count where the tokenizer has one, decode; see `ports/src/main.rs`)
//! and prints its footprint figures:
//! - `thumbv6m-none-eabi` on the `microbit` (nRF51, Cortex-M0: 256 KiB flash, 16 KiB RAM)
//!   with the small trained model and Hugging Face tokenizers' ids (gpt2's tables do not fit),
//!   with SentencePiece BPE sp4096 and sentencepiece's ids, and with WordPiece bert-cased-8k
//!   and tokenizers' ids;
//! - `thumbv6m-none-eabi` on the `mps2-an385` (Armv6-M code on the Cortex-M3 machine: it has
//!   room for the larger models) with tiktoken's gpt2 and cl100k_base ids, tokenizers'
//!   llama3-8k and minilm ids, and sentencepiece's mistral, ug8000 and sp-nfkc ids (on the
//!   micro:bit, ug8000's tables of 190 KB, its code and 60 KB of vectors overflow the 256 KiB
//!   of flash by 24 KB; sp-nfkc's `nmt_nfkc` character map alone is 240 KB);
//! - `riscv32imac-unknown-none-elf` on `qemu-system-riscv32 -machine virt -bios none` with
//!   every model of the Cortex-M3 on-target tests but the small one: tiktoken's gpt2 and
//!   cl100k_base ids, tokenizers' llama3-8k (Llama 3 pattern) and deepseek-8k (DeepSeek V3's
//!   pre-tokenizer, compiled), `mistral-common`'s Tekken
//!   (Mistral NeMo's `tekken.json`), sentencepiece's sp4096, mistral,
//!   ug8000 and sp-nfkc (BPE with `nmt_nfkc`), and tokenizers' bert-cased-8k, minilm
//!   (uncased WordPiece) and wp-whitespace-digits (WordPiece with `Whitespace` + `Digits`).
//!
//! These are the vector sets of the Cortex-M3 on-target tests (`cargo xtask firmware-test`),
//! SentencePiece's selected for the machine's work buffer ([`sp_vectors`]). Installs what it
//! needs: the rustup targets, Python's `tokenizers` (for the small model's reference ids), and
//! as root Debian's `qemu-system-arm` and `qemu-system-misc` (for `qemu-system-riscv32`).
//! `cargo xtask footprint` prints the [`footprint_table`] of the same runs.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::firmware::vectors::SpRoom;
use crate::firmware::{self, Builtin, Machine, RUN_TIMEOUT};
use crate::footprint::{elf_sizes_at, ElfSizes};

/// One target, machine and model.
#[derive(Clone, Copy)]
struct Port {
    target: &'static str,
    /// QEMU machine name (and `ports/memory/<machine>.x`).
    machine: &'static str,
    model: Builtin,
    /// Start of RAM: everything loaded below it counts as flash.
    ram_start: u64,
    flash_capacity: u64,
    ram_capacity: u64,
}

const PORTS: [Port; 24] = [
    microbit(Builtin::Small),
    microbit(Builtin::Sp4096),
    microbit(Builtin::BertCased),
    mps2_an385(Builtin::Gpt2),
    mps2_an385(Builtin::Cl100k),
    mps2_an385(Builtin::Llama3),
    mps2_an385(Builtin::Mistral),
    mps2_an385(Builtin::Ug8000),
    mps2_an385(Builtin::SpNfkc),
    mps2_an385(Builtin::Minilm),
    riscv_virt(Builtin::Gpt2),
    riscv_virt(Builtin::Cl100k),
    riscv_virt(Builtin::Llama3),
    riscv_virt(Builtin::DeepSeek),
    riscv_virt(Builtin::Tekken),
    riscv_virt(Builtin::Sp4096),
    riscv_virt(Builtin::Mistral),
    riscv_virt(Builtin::Ug8000),
    riscv_virt(Builtin::SpNfkc),
    riscv_virt(Builtin::MsBpeNfkc),
    riscv_virt(Builtin::MsT5Nfkc),
    riscv_virt(Builtin::BertCased),
    riscv_virt(Builtin::Minilm),
    riscv_virt(Builtin::WpWhitespace),
];

/// `thumbv6m-none-eabi` on the micro:bit (nRF51822: 256 KiB flash, 16 KiB RAM).
const fn microbit(model: Builtin) -> Port {
    Port {
        target: "thumbv6m-none-eabi",
        machine: "microbit",
        model,
        ram_start: 0x2000_0000,
        flash_capacity: 256 * 1024,
        ram_capacity: 16 * 1024,
    }
}

/// `thumbv6m-none-eabi` on the mps2-an385 (4 MiB of code memory, 4 MiB of RAM).
const fn mps2_an385(model: Builtin) -> Port {
    Port {
        target: "thumbv6m-none-eabi",
        machine: "mps2-an385",
        model,
        ram_start: 0x2000_0000,
        flash_capacity: 4 * 1024 * 1024,
        ram_capacity: 4 * 1024 * 1024,
    }
}

/// `riscv32imac-unknown-none-elf` on QEMU `virt` (`ports/memory/riscv-virt.x`: 8 MiB of
/// "flash", 8 MiB of RAM).
const fn riscv_virt(model: Builtin) -> Port {
    Port {
        target: "riscv32imac-unknown-none-elf",
        machine: "riscv-virt",
        model,
        ram_start: 0x8080_0000,
        flash_capacity: 8 * 1024 * 1024,
        ram_capacity: 8 * 1024 * 1024,
    }
}

/// The SentencePiece buffers on the micro:bit: `IDS` (`u32`s: ids and the work area of a
/// word) and `BYTES` of `ports/src/sentencepiece.rs` with `cfg(picobpe_small_ram)`. Elsewhere
/// they are the Cortex-M3 mps2-an385 tests' ([`firmware::vectors::sp_limits`]).
const MICROBIT_SP_LIMITS: (usize, usize) = (2560, 1024);

impl Port {
    fn label(&self) -> String {
        format!("{}/{}/{}", self.target, self.machine, self.model.name())
    }

    /// The emulator and its machine options.
    fn emulator(&self) -> (&'static str, Vec<&'static str>) {
        match self.machine {
            "riscv-virt" => (
                "qemu-system-riscv32",
                vec!["-machine", "virt", "-bios", "none"],
            ),
            m => ("qemu-system-arm", vec!["-machine", m]),
        }
    }
}

/// What one run measured.
struct Run {
    port: Port,
    figs: BTreeMap<String, String>,
    elf: ElfSizes,
    summary: String,
}

/// Entry point of `ports-test [FILTER]`: every port, or those whose label
/// (`<target>/<machine>/<model>`) contains FILTER.
pub fn run(args: &[String]) -> Result<(), String> {
    let filter = filter_arg(args, "ports-test")?;
    let start = Instant::now();
    let runs = run_all(filter)?;
    if runs.is_empty() {
        return Err(format!("no port matches `{}`", filter.unwrap_or_default()));
    }
    for r in &runs {
        println!("{}: {}", r.port.label(), r.summary);
    }
    print_table(&runs)?;
    println!(
        "{} runs passed in {:.1} s",
        runs.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The optional FILTER argument of `cargo xtask <command> [FILTER]` (an error names any other
/// argument).
pub fn filter_arg<'a>(args: &'a [String], command: &str) -> Result<Option<&'a str>, String> {
    match args {
        [] => Ok(None),
        [f] if !f.starts_with('-') => Ok(Some(f.as_str())),
        [a, ..] => Err(format!(
            "unexpected argument `{a}`\nusage: cargo xtask {command} [FILTER]"
        )),
    }
}

/// Builds and runs every port (whose label contains `filter`, if given); fails on the first
/// failing check.
fn run_all(filter: Option<&str>) -> Result<Vec<Run>, String> {
    ensure_tools()?;
    PORTS
        .iter()
        .filter(|p| filter.is_none_or(|f| p.label().contains(f)))
        .map(run_one)
        .collect()
}

fn run_one(port: &Port) -> Result<Run, String> {
    let start = Instant::now();
    println!("== {} (QEMU {})", port.label(), port.machine);
    let model = firmware::prepare_model(port.model)?;
    let vectors = vectors(port)?;
    let elf = build(port, &model, &vectors)?;
    let (program, board) = port.emulator();
    let out = firmware::run_emulator(
        program,
        &board,
        &elf,
        &[],
        &["-icount", "shift=0"],
        RUN_TIMEOUT,
    )?;
    print!("{}", indent(&out.stdout, |l| !l.starts_with("FIG ")));
    if out.status != Some(0) {
        return Err(format!(
            "{} failed (exit status {:?}):\n{}",
            port.label(),
            out.status,
            out.stderr
        ));
    }
    let summary = out
        .stdout
        .lines()
        .find(|l| l.contains(" records, "))
        .ok_or("no summary line")?
        .to_string();
    println!(
        "   passed in {:.1} s (build included)",
        start.elapsed().as_secs_f64()
    );
    let figs = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("FIG "))
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Ok(Run {
        port: *port,
        figs,
        elf: elf_sizes_at(&elf, port.ram_start)?,
        summary,
    })
}

/// Writes the port's vector file and returns its path: the Cortex-M3 on-target tests' vectors
/// of the model, SentencePiece's selected for the machine ([`sp_vectors`]).
fn vectors(port: &Port) -> Result<PathBuf, String> {
    let (path, count) = match port.model {
        Builtin::Gpt2 => firmware::vectors::prepare("gpt2")?,
        Builtin::Cl100k => firmware::vectors::prepare("cl100k_base")?,
        Builtin::Small => firmware::vectors::prepare_small()?.ok_or(
            "the small model's reference vectors need Python's `tokenizers` (pip install tokenizers)",
        )?,
        Builtin::Sp4096
        | Builtin::Mistral
        | Builtin::Ug8000
        | Builtin::SpNfkc
        | Builtin::MsBpeNfkc
        | Builtin::MsT5Nfkc => sp_vectors(port)?,
        Builtin::Llama3 => {
            let v = firmware::vectors::prepare_hf_bpe("hf_bpe", "llama3-8k")?;
            (v.path, v.count)
        }
        Builtin::DeepSeek => {
            let v = firmware::vectors::prepare_hf_bpe("hf_compiled", "deepseek-8k")?;
            (v.path, v.count)
        }
        Builtin::Tekken => {
            let v = firmware::vectors::prepare_tekken()?;
            (v.path, v.count)
        }
        b @ (Builtin::SpTrained | Builtin::UgTrained) => {
            return Err(format!("{} is built for the lm3s6965evb only", b.name()));
        }
        Builtin::WpTrained => {
            let v = firmware::vectors::prepare_wp_trained()?.ok_or(
                "wp-trained's reference vectors need Python's `tokenizers` (pip install tokenizers)",
            )?;
            (v.path, v.count)
        }
        Builtin::BertCased | Builtin::Minilm | Builtin::WpWhitespace => {
            let name = match port.model {
                Builtin::BertCased => "bert-cased-8k",
                Builtin::WpWhitespace => "wp-whitespace-digits",
                _ => "minilm-uncased",
            };
            let v = firmware::vectors::prepare_wp(name)?;
            (v.path, v.count)
        }
    };
    println!(
        "   embedding {count} reference records ({})",
        path.display()
    );
    Ok(path)
}

/// sentencepiece's vectors for a SentencePiece port: those of the Cortex-M3 mps2-an385 tests
/// (selected for the same buffers), or on the micro:bit those of the lm3s6965evb tests whose
/// ids and longest word's work area ([`SpRoom::of`]) fit [`MICROBIT_SP_LIMITS`]
/// (`ports/target/vectors/<model>-microbit-vectors.bin`). Returns the file and its records.
fn sp_vectors(port: &Port) -> Result<(PathBuf, usize), String> {
    let fixture = port
        .model
        .sentencepiece_fixture()
        .ok_or("no sentencepiece fixture")?;
    let name = fixture.name;
    if port.machine != "microbit" {
        let v = firmware::vectors::prepare_sp(fixture, Machine::Mps2An385)?;
        return Ok((v.path, v.count));
    }
    let v = firmware::vectors::prepare_sp(fixture, Machine::Lm3s6965evb)?;
    let data = fs::read(&v.path).map_err(|e| format!("{}: {e}", v.path.display()))?;
    let (file, count, left_out) = select_sp(&data, &fixture.room()?, MICROBIT_SP_LIMITS)
        .ok_or_else(|| format!("{}: not a well-formed PBVEC2 file", v.path.display()))?;
    if left_out > 0 {
        println!(
            "   left out {left_out} of {} records: their ids and work area need more than {} ids",
            count + left_out,
            MICROBIT_SP_LIMITS.0
        );
    }
    let dir = firmware::repo_root().join("ports/target/vectors");
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dest = dir.join(format!("{name}-{}-vectors.bin", port.machine));
    if fs::read(&dest).ok().as_deref() != Some(&file[..]) {
        fs::write(&dest, &file).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    Ok((dest, count))
}

/// The records of the PBVEC2 file `data` (format: `xtask/src/firmware/vectors.rs`) whose ids
/// and work area fit `limits.0` `u32`s, as a PBVEC2 file naming `limits`, with the number of
/// records kept and left out; `None` if `data` is malformed.
fn select_sp(
    data: &[u8],
    room: &SpRoom,
    limits: (usize, usize),
) -> Option<(Vec<u8>, usize, usize)> {
    /// "The same as" / "not given" in a PBVEC2 count.
    const SAME: u32 = u32::MAX;
    const NONE: u32 = u32::MAX - 1;
    fn take(b: &mut &[u8], n: usize) -> Option<Vec<u8>> {
        let (h, t) = (b.len() >= n).then(|| b.split_at(n))?;
        *b = t;
        Some(h.to_vec())
    }
    fn take_u32(b: &mut &[u8]) -> Option<u32> {
        take(b, 4).map(|h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]))
    }
    let mut rest = data.strip_prefix(b"PBVEC2\0\0")?;
    let n = take_u32(&mut rest)?;
    take(&mut rest, 8)?; // the limits the records were selected for
    let (mut out, mut kept) = (Vec::new(), 0usize);
    for _ in 0..n {
        let start = rest;
        let name_len = take(&mut rest, 2).map(|h| u16::from_le_bytes([h[0], h[1]]))?;
        take(&mut rest, name_len as usize)?;
        let text_len = take_u32(&mut rest)?;
        let text = take(&mut rest, text_len as usize)?;
        let n_ids = take_u32(&mut rest)? as usize;
        take(&mut rest, 4 * n_ids)?;
        match take_u32(&mut rest)? {
            SAME => {}
            m => drop(take(&mut rest, 4 * m as usize)?),
        }
        match take_u32(&mut rest)? {
            SAME | NONE => {}
            k => drop(take(&mut rest, k as usize)?),
        }
        if n_ids + room.of(&text) <= limits.0 {
            out.extend_from_slice(&start[..start.len() - rest.len()]);
            kept += 1;
        }
    }
    if !rest.is_empty() {
        return None;
    }
    let mut file = b"PBVEC2\0\0".to_vec();
    for v in [kept, limits.0, limits.1] {
        file.extend_from_slice(&(v as u32).to_le_bytes());
    }
    file.extend_from_slice(&out);
    Some((file, kept, n as usize - kept))
}

/// `cargo build --release` of `ports/` for the port; returns the ELF, which the next port's
/// build overwrites. Every port shares one target directory: the host half (the build
/// script's `picobpe-build` and its dependencies, ~300 MB) is built once, and a change of
/// machine, model or vectors reruns only the build script and the firmware crate.
fn build(port: &Port, model: &Path, vectors: &Path) -> Result<PathBuf, String> {
    let dir = firmware::repo_root().join("ports");
    let target_dir = dir.join("target");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&dir)
        .args(["build", "--release", "--quiet", "--target", port.target])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("PICOBPE_PORT_MACHINE", port.machine)
        .env("PICOBPE_MODEL", model)
        .env("PICOBPE_VECTORS", vectors)
        .env_remove("CARGO_TARGET_DIR")
        .stdout(Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building ports/ for {} failed", port.label()));
    }
    Ok(target_dir
        .join(port.target)
        .join("release")
        .join("picobpe-ports"))
}

/// The rustup targets and the two QEMU system emulators.
fn ensure_tools() -> Result<(), String> {
    for t in ["thumbv6m-none-eabi", "riscv32imac-unknown-none-elf"] {
        firmware::ensure_target(t)?;
    }
    firmware::ensure_tools()?;
    crate::test_all::ensure_python_module("tokenizers", "tokenizers")?;
    firmware::ensure_apt("qemu-system-riscv32", "qemu-system-misc")
}

/// The lines of `s` that `keep` accepts, indented.
fn indent(s: &str, keep: impl Fn(&str) -> bool) -> String {
    s.lines()
        .filter(|l| keep(l))
        .map(|l| format!("   {l}\n"))
        .collect()
}

/// Runs every port and prints their footprint rows as a Markdown table (for `cargo xtask
/// footprint`).
pub fn footprint_table() -> Result<(), String> {
    print_table(&run_all(None)?)
}

/// The footprint rows of `runs` as a Markdown table.
fn print_table(runs: &[Run]) -> Result<(), String> {
    println!();
    println!(
        "| other targets | flash: whole program | of which picobpe code | static RAM | peak \
         stack: encode / decode | guest instructions / input byte: encode |"
    );
    println!("|---|---|---|---|---|---|");
    for r in runs {
        let num = |k: &str| -> Result<u64, String> {
            r.figs
                .get(k)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{}: no figure `{k}`", r.port.label()))
        };
        let instr = match num("instr_encode") {
            Ok(i) => format!("{:.1}", i as f64 / num("bench_bytes")? as f64),
            Err(_) => "not counted".into(),
        };
        println!(
            "| {} | {} B = {:.1} % of {} KiB | {} B | {} B = {:.1} % of {} KiB | {} B / {} B | {instr} |",
            r.port.label(),
            r.elf.flash,
            100.0 * r.elf.flash as f64 / r.port.flash_capacity as f64,
            r.port.flash_capacity / 1024,
            r.elf.core_code,
            r.elf.ram,
            100.0 * r.elf.ram as f64 / r.port.ram_capacity as f64,
            r.port.ram_capacity / 1024,
            num("stack_encode")?,
            num("stack_decode")?,
        );
    }
    println!();
    println!(
        "`ports/` (release, opt-level \"s\", fat LTO): the conformance run with its vectors in \
         flash; RAM includes its buffers. Instructions from QEMU `-icount shift=0` (SysTick on \
         Arm, `minstret` on RISC-V) over `firmware-example/sample/bench.txt`."
    );
    Ok(())
}
