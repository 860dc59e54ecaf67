//! `cargo xtask c-firmware-test`: the C API on bare metal. For each model (gpt2, checked
//! against tiktoken's vectors; minilm's WordPiece, against tokenizers'), builds the C API's
//! static library for `thumbv7m-none-eabi` (`picobpe-capi`, with the model's tables baked in),
//! compiles and links the C firmware in `capi/firmware/` against it with `arm-none-eabi-gcc` (no
//! C library), runs it under QEMU on the mps2-an385 and checks the reference vectors through
//! the C API there (`capi/firmware/main.c` says which checks). Installs what is missing: the rustup
//! target, QEMU and, as root with apt, Debian's `gcc-arm-none-eabi` (else it stops with the
//! command to run).
//!
//! Then prints one footprint row per model, read from the linked ELF's sections and symbol table:
//! - flash: the loaded sections below RAM plus the `.data` initializers; RAM: `.data` + `.bss`
//!   (the test's buffers, most of it; the 256 KiB stack reserve is not counted);
//! - baked tables: the data symbols of `picobpe_capi::baked`; vectors: the embedded test data;
//! - picobpe core code: the function symbols of `picobpe::` that the link kept (the library is
//!   built with the Rust firmware's profile, `opt-level = "s"`, fat LTO, one codegen unit; the
//!   C firmware uses more of the core than the Rust demo firmware: count, streaming, the cache);
//! - C API code: the C layer's function symbols the link kept (`--gc-sections`; the firmware
//!   calls every exported function), the `picobpe_*` wrappers and any of `picobpe_capi`'s
//!   helpers not inlined. This is what the C layer adds over the Rust core, with one caveat:
//!   whatever of the core the compiler inlined into a wrapper is counted there, so the figure
//!   is an upper bound;
//! - speed: guest instructions per input byte of the one-shot encodes, from SysTick under QEMU's
//!   `-icount shift=0` (one virtual ns per instruction), calibrated against a loop of known
//!   length as `firmware-example/src/icount.rs` does.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

use crate::firmware::{self, Builtin, Machine, RUN_TIMEOUT};

/// The rustup target, also the C compiler's: Cortex-M3, soft float.
const TARGET: &str = "thumbv7m-none-eabi";
/// The C compiler.
const GCC: &str = "arm-none-eabi-gcc";
/// Start of RAM on the mps2-an385.
const RAM_START: u64 = 0x2000_0000;
/// The budget the C layer's code is held to.
const C_API_BUDGET: u64 = 2 * 1024;
/// The C sources, the assembly file and the linker script under `capi/firmware/`.
const SOURCES: [&str; 3] = ["start.c", "main.c", "vectors.S"];
const LINKER_SCRIPT: &str = "link.ld";
/// The C compiler's flags (the sources are strict C99 without a C library).
const CFLAGS: [&str; 12] = [
    "-mcpu=cortex-m3",
    "-mthumb",
    "-Os",
    "-g",
    "-std=c99",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-ffreestanding",
    "-nostdlib",
    "-ffunction-sections",
    "-fdata-sections",
];

/// A model the C firmware runs: its name, the family and vocabulary size the library must
/// report, and how its reference vectors are made.
struct Config {
    name: &'static str,
    family: u32,
    vocab: u32,
    /// `None`: the library's default (gpt2); else the builtin model baked in.
    model: Option<Builtin>,
}

/// gpt2 (tiktoken's vectors, PBVEC1) and minilm's WordPiece (tokenizers' vectors, PBVEC2).
const CONFIGS: [Config; 2] = [
    Config {
        name: "gpt2",
        family: 0,
        vocab: 50257,
        model: None,
    },
    Config {
        name: "minilm",
        family: 3,
        vocab: 30522,
        model: Some(Builtin::Minilm),
    },
];

/// Entry point of `c-firmware-test`.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!(
            "unexpected argument `{a}`\nusage: cargo xtask c-firmware-test"
        ));
    }
    let start = Instant::now();
    firmware::ensure_tools()?;
    firmware::ensure_apt(GCC, "gcc-arm-none-eabi")?;
    let root = firmware::repo_root();
    for config in &CONFIGS {
        run_one(&root, config)?;
    }
    println!(
        "c-firmware-test: passed in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Builds, links and runs the C firmware with one model, then prints its footprint row.
fn run_one(root: &Path, config: &Config) -> Result<(), String> {
    let name = config.name;
    let model = config.model.map(firmware::prepare_model).transpose()?;
    eprintln!("== building the C API's static library for {TARGET} ({name} baked)");
    let lib = build_staticlib(root, model.as_deref())?;
    let (vectors, count) = match config.model {
        None => firmware::vectors::prepare(name)?,
        Some(m) => {
            let dir = m.tokenizer_json_fixture().ok_or("no tokenizers fixture")?;
            let v = firmware::vectors::prepare_wp(dir.rsplit('/').next().unwrap_or(dir))?;
            (v.path, v.count)
        }
    };

    let out_dir = lib
        .parent()
        .ok_or("the static library has no folder")?
        .join("c-firmware");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let elf = out_dir.join(format!("picobpe-c-firmware-{name}.elf"));
    eprintln!("== {GCC}: capi/firmware/ + {}", lib.display());
    link(root, &lib, &vectors, config, &elf)?;

    println!(
        "== C firmware on mps2-an385: {count} {name} records from {}",
        vectors.display()
    );
    let out = firmware::run_qemu(
        Machine::Mps2An385,
        &elf,
        &[],
        &["-icount", "shift=0"],
        RUN_TIMEOUT,
    )?;
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    match out.status {
        Some(0) => {}
        Some(code) => return Err(format!("the C firmware ({name}) exited with status {code}")),
        None => {
            return Err(format!(
                "the C firmware ({name}) timed out after {RUN_TIMEOUT:?}"
            ))
        }
    }
    // Status 0 comes with the summary of every record and no failure.
    let summary = format!("{count} records, ");
    let passed = out
        .stdout
        .lines()
        .any(|l| l.starts_with(&summary) && l.contains(" checks, 0 failures"));
    if !passed {
        return Err(format!(
            "the C firmware ({name}) exited with 0 but did not report {count} records and 0 \
             failures"
        ));
    }

    let sizes = elf_sizes(&elf)?;
    let speed = instructions_per_byte(&out.stdout);
    print_footprint(name, &sizes, speed);
    Ok(())
}

/// Builds `picobpe-capi` for the target (release) with `model` baked in (`None`: its default
/// gpt2 tables) and returns the static library's path, as cargo reports it. Each model builds
/// in its own target directory, so switching models does not rebuild the other's library.
fn build_staticlib(root: &Path, model: Option<&Path>) -> Result<PathBuf, String> {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root)
        .args(["build", "--release", "-p", "picobpe-capi"])
        .args(["--target", TARGET])
        .args(["--message-format", "json-render-diagnostics"])
        // The Rust firmware's profile (`firmware-example/Cargo.toml`), so the C layer's size
        // is measured over the same build of the core.
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "s")
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .stderr(Stdio::inherit());
    match model {
        // The vectors are the model's: bake it whatever the environment says.
        Some(path) => {
            cmd.env("PICOBPE_MODEL", path)
                .arg("--target-dir")
                .arg(root.join("target/c-firmware-models"))
                .env_remove("CARGO_TARGET_DIR");
        }
        None => {
            cmd.env_remove("PICOBPE_MODEL");
        }
    }
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building picobpe-capi for {TARGET} failed ({})",
            out.status
        ));
    }
    let mut lib = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || msg["target"]["name"] != "picobpe_capi" {
            continue;
        }
        for f in msg["filenames"].as_array().into_iter().flatten() {
            if let Some(f) = f.as_str().filter(|f| f.ends_with(".a")) {
                lib = Some(PathBuf::from(f));
            }
        }
    }
    lib.ok_or_else(|| "cargo reported no static library for picobpe-capi".into())
}

/// Compiles `capi/firmware/` and links it with the static library into `elf`.
fn link(
    root: &Path,
    lib: &Path,
    vectors: &Path,
    config: &Config,
    elf: &Path,
) -> Result<(), String> {
    let src = root.join("capi/firmware");
    let vectors = vectors
        .to_str()
        .filter(|p| !p.contains(['"', '\\']))
        .ok_or_else(|| format!("{}: unusable in an .incbin", vectors.display()))?;
    let status = Command::new(GCC)
        .args(CFLAGS)
        .arg("-I")
        .arg(root.join("capi/include"))
        .arg(format!("-DPICOBPE_VECTORS=\"{vectors}\""))
        .arg(format!("-DPICOBPE_FAMILY={}", config.family))
        .arg(format!("-DPICOBPE_VOCAB={}u", config.vocab))
        .args(SOURCES.map(|s| src.join(s)))
        .arg(lib)
        .arg("-T")
        .arg(src.join(LINKER_SCRIPT))
        // Any linker warning fails the build (a clash of symbols or of ABI attributes, such as
        // enum sizes, between the C objects and Rust's); the stack note is meaningless here.
        .args([
            "-Wl,--gc-sections",
            "-Wl,--fatal-warnings",
            "-Wl,-z,noexecstack",
        ])
        .arg("-o")
        .arg(elf)
        .status()
        .map_err(|e| format!("cannot run {GCC}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{GCC} failed ({status})"))
    }
}

/// Sizes read from the linked ELF, in bytes.
#[derive(Default)]
struct ElfSizes {
    flash: u64,
    ram: u64,
    tables: u64,
    vectors: u64,
    core_code: u64,
    c_api_code: u64,
    /// The C layer's functions and their sizes, largest first.
    c_api_functions: Vec<(String, u64)>,
}

fn elf_sizes(path: &Path) -> Result<ElfSizes, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut s = ElfSizes::default();
    for sec in file.sections() {
        let kind = sec.kind();
        let loaded = matches!(
            kind,
            SectionKind::Text
                | SectionKind::Data
                | SectionKind::ReadOnlyData
                | SectionKind::ReadOnlyString
                | SectionKind::UninitializedData
        );
        if !loaded || sec.size() == 0 {
            continue;
        }
        if sec.address() >= RAM_START {
            s.ram += sec.size();
            if kind == SectionKind::Data {
                s.flash += sec.size(); // initializers, copied at reset
            }
        } else {
            s.flash += sec.size();
        }
    }
    for sym in file.symbols() {
        let Ok(raw) = sym.name() else { continue };
        let name = format!("{:#}", rustc_demangle::demangle(raw));
        match sym.kind() {
            SymbolKind::Text
                if raw.starts_with("picobpe_") || name.starts_with("picobpe_capi::") =>
            {
                s.c_api_code += sym.size();
                s.c_api_functions.push((name, sym.size()));
            }
            SymbolKind::Text if name.starts_with("picobpe::") || name.starts_with("<picobpe::") => {
                s.core_code += sym.size();
            }
            SymbolKind::Data if name.starts_with("picobpe_capi::baked::") => {
                s.tables += sym.size();
            }
            SymbolKind::Data if raw == "pbvec_start" => s.vectors += sym.size(),
            _ => {}
        }
    }
    s.c_api_functions.sort_by_key(|f| std::cmp::Reverse(f.1));
    Ok(s)
}

/// Instructions per input byte from the firmware's line `speed: T SysTick ticks to encode B
/// bytes; C ticks per I instructions`.
fn instructions_per_byte(stdout: &str) -> Option<f64> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("speed: "))?;
    let nums: Vec<f64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .filter_map(|w| w.parse().ok())
        .collect();
    let [ticks, bytes, cal_ticks, cal_instr] = nums[..] else {
        return None;
    };
    (bytes > 0.0 && cal_ticks > 0.0).then(|| ticks * cal_instr / cal_ticks / bytes)
}

fn print_footprint(model: &str, s: &ElfSizes, speed: Option<f64>) {
    let verdict = if s.c_api_code <= C_API_BUDGET {
        "within"
    } else {
        "OVER"
    };
    println!();
    println!(
        "| C firmware (mps2-an385, {model}) | flash | of which baked tables | of which vectors | RAM \
         (static) | picobpe core code | C API code | encode |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| arm-none-eabi-gcc -Os + libpicobpe_capi.a (opt-level s, fat LTO) | {} | {} | {} | {} | {} | {} \
         ({verdict} the {} budget) | {} |",
        bytes(s.flash),
        bytes(s.tables),
        bytes(s.vectors),
        bytes(s.ram),
        bytes(s.core_code),
        bytes(s.c_api_code),
        bytes(C_API_BUDGET),
        speed.map_or("n/a".into(), |v| format!("{v:.0} instructions/byte")),
    );
    let parts: Vec<String> = s
        .c_api_functions
        .iter()
        .map(|(name, size)| format!("{name} {size}"))
        .collect();
    println!("C API code by function (bytes): {}", parts.join(", "));
}

/// `n` bytes, with KiB above 10 KiB.
fn bytes(n: u64) -> String {
    if n >= 10 * 1024 {
        format!("{n} B ({:.1} KiB)", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}
