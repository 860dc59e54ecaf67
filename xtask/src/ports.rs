//! `cargo xtask ports-test`: the byte-level core on Cortex-M0 and RISC-V under QEMU (`ports/`).
//!
//! Three runs, each a build of `ports/` that checks every embedded reference record through the
//! core (encode both ways, resumed encode, count, decode; see `ports/src/main.rs`) and prints
//! its footprint figures:
//! - `thumbv6m-none-eabi` on the `microbit` (nRF51, Cortex-M0: 256 KiB flash, 16 KiB RAM) with
//!   the small trained model and Hugging Face tokenizers' ids (gpt2's tables do not fit);
//! - `thumbv6m-none-eabi` on the `mps2-an385` (Armv6-M code on the Cortex-M3 machine: it has
//!   room for gpt2) with tiktoken's gpt2 ids;
//! - `riscv32imac-unknown-none-elf` on `qemu-system-riscv32 -machine virt -bios none` with
//!   tiktoken's gpt2 ids.
//!
//! These are the vector sets of the Cortex-M3 on-target tests (`cargo xtask firmware-test`).
//! Installs what it needs: the rustup targets, Python's `tokenizers` (for the small model's
//! reference ids), and as root Debian's `qemu-system-arm` and
//! `qemu-system-misc` (for `qemu-system-riscv32`). `cargo xtask footprint` prints the
//! [`footprint_table`] of the same runs.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::firmware::{self, Builtin, RUN_TIMEOUT};
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

const PORTS: [Port; 3] = [
    Port {
        target: "thumbv6m-none-eabi",
        machine: "microbit",
        model: Builtin::Small,
        ram_start: 0x2000_0000,
        flash_capacity: 256 * 1024,
        ram_capacity: 16 * 1024,
    },
    Port {
        target: "thumbv6m-none-eabi",
        machine: "mps2-an385",
        model: Builtin::Gpt2,
        ram_start: 0x2000_0000,
        flash_capacity: 4 * 1024 * 1024,
        ram_capacity: 4 * 1024 * 1024,
    },
    Port {
        target: "riscv32imac-unknown-none-elf",
        machine: "riscv-virt",
        model: Builtin::Gpt2,
        ram_start: 0x8080_0000,
        flash_capacity: 8 * 1024 * 1024,
        ram_capacity: 8 * 1024 * 1024,
    },
];

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

/// Entry point of `ports-test`.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!(
            "unexpected argument `{a}`\nusage: cargo xtask ports-test"
        ));
    }
    let runs = run_all()?;
    for r in &runs {
        println!("{}: {}", r.port.label(), r.summary);
    }
    Ok(())
}

/// Builds and runs every port; fails on the first failing check.
fn run_all() -> Result<Vec<Run>, String> {
    ensure_tools()?;
    PORTS.iter().map(run_one).collect()
}

fn run_one(port: &Port) -> Result<Run, String> {
    let start = Instant::now();
    println!("== {} (QEMU {})", port.label(), port.machine);
    let model = firmware::prepare_model(port.model)?;
    let vectors = match port.model {
        Builtin::Gpt2 => firmware::vectors::prepare("gpt2")?.0,
        Builtin::Small => firmware::vectors::prepare_small()?
            .ok_or("the small model's reference vectors need Python's `tokenizers` (pip install tokenizers)")?
            .0,
        other => return Err(format!("no port runs {}", other.name())),
    };
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

/// `cargo build --release` of `ports/` for the port; returns the ELF. Each machine has a target
/// directory of its own so the runs do not rebuild each other.
fn build(
    port: &Port,
    model: &std::path::Path,
    vectors: &std::path::Path,
) -> Result<PathBuf, String> {
    let dir = firmware::repo_root().join("ports");
    let target_dir = dir.join("target").join(port.machine);
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
    let runs = run_all()?;
    println!();
    println!(
        "| other targets | flash: whole program | of which picobpe code | static RAM | peak \
         stack: encode / decode | guest instructions / input byte: encode |"
    );
    println!("|---|---|---|---|---|---|");
    for r in &runs {
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
