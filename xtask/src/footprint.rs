//! `cargo xtask footprint [--machine M] [--model NAME|FILE] | --other-targets`: flash, RAM, stack
//! and speed of the firmware, per configuration (machine + model) and whole-piece table, as a Markdown table with
//! one column each (by default the byte-level models lm3s6965evb/small, mps2-an385/gpt2,
//! mps2-an385/cl100k and mps2-an385/llama3-8k, each with full and minimal pieces, then the
//! SentencePiece models lm3s6965evb/sp4096 and mps2-an385/mistral (BPE), mps2-an385/ug8000
//! (Unigram) and mps2-an385/sp-nfkc (BPE with the `nmt_nfkc` character map) and the WordPiece
//! models lm3s6965evb/bert-cased-8k and mps2-an385/minilm, which
//! have no whole-piece table choice: one column each). Without `--machine`, each model is
//! measured once, on the first of its machines: sp4096, which also runs on the mps2-an385, on
//! the lm3s6965evb (on the mps2-an385 its tables, code, stack and speed are the same; only the
//! share of memory differs); `--model sp4096 --machine mps2-an385` measures it there, naming
//! both machines on both. With no argument, a second table follows: the Cortex-M0
//! (`thumbv6m`) and RISC-V (`riscv32imac`) runs of `ports/` (`crate::ports`), then the C
//! firmware's row (`crate::c_firmware`: the code the C API adds); `--other-targets` prints only
//! those.
//!
//! Where each figure comes from:
//! - baked tables: measured on the target — the byte length of every slice the baked `Tables`
//!   (or `SpTables`, `WpTables`) points at: PtrHash indexes, keys, ids and flat arrays, and a
//!   SentencePiece normalizer's character map (`firmware-example/src/tables.rs`,
//!   `sp_tables.rs`, `wp_tables.rs`);
//! - Unicode tables / picobpe code: sizes of the ELF's data / function symbols whose demangled
//!   path starts with `picobpe::pretok`, `picobpe::wordpiece::unicode_tables` or
//!   `picobpe::normalizer` (the Unicode normalization forms' tables) / `picobpe::`
//!   (code inlined into the firmware's own functions is not counted; the firmware is built with
//!   fat LTO and `opt-level = "s"`);
//! - flash and static RAM: the ELF's allocated sections (flash = everything loaded below
//!   0x2000_0000 plus the `.data` initializers; RAM = `.data` + `.bss` + `.uninit`);
//! - peak stack: stack painting on the target around one encode (8 KB held-out English text,
//!   `sample/bench.txt`) and one decode of its ids, output buffers static;
//! - speed: guest instructions per input byte, from QEMU's `-icount shift=0` (one virtual ns per
//!   instruction) read through SysTick and calibrated against a loop of known length
//!   (`firmware-example/src/icount.rs`). Deterministic; no TCG plugin is needed.

use std::collections::BTreeMap;
use std::path::Path;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

use crate::firmware::{self, Artifact, Build, Config, Kind, Machine, Selection, RUN_TIMEOUT};

/// Start of RAM on both machines.
const RAM_START: u64 = 0x2000_0000;

/// Entry point of `footprint`.
pub fn run(args: &[String]) -> Result<(), String> {
    if args == ["--other-targets"] {
        return other_targets();
    }
    let opts = firmware::parse_options(args, Selection::FirstPerModel)?;
    if let Some(a) = opts.rest.first() {
        return Err(format!(
            "unexpected argument `{a}`\nusage: cargo xtask footprint [--machine M] [--model {}|FILE]",
            crate::firmware::Builtin::ALL
                .map(crate::firmware::Builtin::name)
                .join("|")
        ));
    }
    firmware::ensure_tools()?;
    let mut columns = Vec::new();
    for config in &opts.configs {
        let machine = &config.machine;
        let model = config.model_path()?;
        // A SentencePiece or WordPiece model has no whole-piece table choice: one column.
        let byte_level = config.builtin().is_none_or(|b| b.kind() == Kind::BytePair);
        let choices: &[&'static str] = if byte_level {
            &["full", "minimal"]
        } else {
            &["full"]
        };
        for &pieces in choices {
            eprintln!(
                "== footprint on {} (model {}, {pieces} whole-piece table)",
                config.label(),
                model.display()
            );
            let spec = Build {
                pieces: Some(pieces),
                ..Build::new(config, &model)
            };
            let elf = firmware::build(&spec, Artifact::Firmware)?
                .pop()
                .ok_or("cargo built no firmware binary")?;
            let out = firmware::run_qemu(
                *machine,
                &elf,
                &["footprint".to_string()],
                &["-icount", "shift=0"],
                RUN_TIMEOUT,
            )?;
            if out.status != Some(0) {
                return Err(format!(
                    "footprint run on {} failed ({:?}):\n{}{}",
                    machine.name(),
                    out.status,
                    out.stdout,
                    out.stderr
                ));
            }
            let figs: BTreeMap<String, String> = out
                .stdout
                .lines()
                .filter_map(|l| l.strip_prefix("FIG "))
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let kind = kind_of(&figs);
            columns.push(Column {
                config: config.clone(),
                machine: *machine,
                kind,
                pieces,
                figs,
                elf: elf_sizes(&elf)?,
            });
            if kind != Kind::BytePair {
                break; // a model file of that kind: `minimal` would bake the same tables
            }
        }
    }
    print_table(&columns)?;
    if args.is_empty() {
        // The default run covers every target: Cortex-M0, RISC-V and the C API too.
        other_targets()?;
    }
    Ok(())
}

/// The Cortex-M0 and RISC-V rows (`ports/`), then the C firmware's row with the code the C API
/// adds (`capi/firmware/`).
fn other_targets() -> Result<(), String> {
    crate::ports::footprint_table()?;
    crate::c_firmware::run(&[])
}

/// The kind of the baked model, from the firmware's `FIG kind`.
fn kind_of(figs: &BTreeMap<String, String>) -> Kind {
    match figs.get("kind").map(String::as_str) {
        Some("sentencepiece") => Kind::SentencePiece,
        Some("wordpiece") => Kind::WordPiece,
        _ => Kind::BytePair,
    }
}

struct Column {
    config: Config,
    machine: Machine,
    /// The kind of the baked model (the firmware's `FIG kind`).
    kind: Kind,
    /// The whole-piece table (meaningful for a byte-level model only).
    pieces: &'static str,
    figs: BTreeMap<String, String>,
    elf: ElfSizes,
}

impl Column {
    /// `SentencePiece BPE` or `SentencePiece Unigram` (the firmware's `FIG algorithm`: `BPE` or
    /// `Unigram`) for a SentencePiece model.
    fn sentencepiece_name(&self) -> &'static str {
        match self.figs.get("algorithm").map(String::as_str) {
            Some("Unigram") => "SentencePiece Unigram",
            _ => "SentencePiece BPE",
        }
    }

    fn num(&self, key: &str) -> Result<u64, String> {
        self.figs
            .get(key)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                format!(
                    "{}: the firmware did not report `{key}`",
                    self.machine.name()
                )
            })
    }
}

/// Sizes read from the ELF.
#[derive(Default)]
pub struct ElfSizes {
    /// Flash: everything loaded below RAM, plus the `.data` initializers.
    pub flash: u64,
    /// Static RAM: `.data`, `.bss`, `.uninit`.
    pub ram: u64,
    text: u64,
    /// Functions named `picobpe::…`.
    pub core_code: u64,
    unicode_tables: u64,
    core_ram: u64,
    /// Allocator symbols found (`__rust_alloc`, `__rg_alloc`, `__rdl_alloc`, ...).
    alloc_symbols: Vec<String>,
}

fn elf_sizes(path: &Path) -> Result<ElfSizes, String> {
    elf_sizes_at(path, RAM_START)
}

/// The sizes of `path`, whose RAM starts at `ram_start` (everything loaded below it is flash).
pub fn elf_sizes_at(path: &Path, ram_start: u64) -> Result<ElfSizes, String> {
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
                | SectionKind::ReadOnlyDataWithRel
        );
        // riscv-rt's `.heap` and `.stack` are placeholders for the RAM left over, not data.
        let placeholder = matches!(sec.name(), Ok(".heap" | ".stack"));
        if !loaded || sec.size() == 0 || placeholder {
            continue;
        }
        let in_ram = sec.address() >= ram_start;
        if in_ram {
            s.ram += sec.size();
            // Initialized RAM data is copied from flash at reset.
            if kind == SectionKind::Data {
                s.flash += sec.size();
            }
        } else {
            s.flash += sec.size();
        }
        if kind == SectionKind::Text {
            s.text += sec.size();
        }
    }
    for sym in file.symbols() {
        let Ok(name) = sym.name() else { continue };
        if name.contains("__rust_alloc")
            || name.contains("__rg_alloc")
            || name.contains("__rdl_alloc")
        {
            s.alloc_symbols.push(name.to_string());
        }
        let name = format!("{:#}", rustc_demangle::demangle(name));
        let core = name.starts_with("picobpe::") || name.starts_with("<picobpe::");
        if !core {
            continue;
        }
        match sym.kind() {
            SymbolKind::Text => s.core_code += sym.size(),
            SymbolKind::Data => {
                if sym.address() >= ram_start {
                    s.core_ram += sym.size();
                } else if name.starts_with("picobpe::pretok")
                    || name.starts_with("picobpe::wordpiece::unicode_tables")
                    || name.starts_with("picobpe::normalizer")
                {
                    s.unicode_tables += sym.size();
                }
            }
            _ => {}
        }
    }
    Ok(s)
}

fn kib(n: u64) -> String {
    if n >= 10 * 1024 {
        format!("{} B ({:.1} KiB)", group(n), n as f64 / 1024.0)
    } else {
        format!("{} B", group(n))
    }
}

/// `1234567` → `1,234,567`.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn flash_capacity(m: Machine) -> u64 {
    match m {
        Machine::Lm3s6965evb => 256 * 1024,
        Machine::Mps2An385 => 4 * 1024 * 1024,
    }
}

fn ram_capacity(m: Machine) -> u64 {
    match m {
        Machine::Lm3s6965evb => 64 * 1024,
        Machine::Mps2An385 => 4 * 1024 * 1024,
    }
}

fn print_table(cols: &[Column]) -> Result<(), String> {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |label: &str, f: &dyn Fn(&Column) -> Result<String, String>| {
        let cells = cols.iter().map(f).collect::<Result<Vec<_>, _>>()?;
        rows.push((label.to_string(), cells));
        Ok::<(), String>(())
    };
    row("model", &|c| {
        let file = c.figs.get("model").cloned().unwrap_or_default();
        Ok(match c.kind {
            Kind::BytePair => format!(
                "`{file}`: {} ids, {} merges",
                group(c.num("n_ids")?),
                group(c.num("n_merges")?)
            ),
            Kind::SentencePiece => format!(
                "`{file}`: {}, {} ids ({} normal, {} byte pieces)",
                c.sentencepiece_name(),
                group(c.num("n_ids")?),
                group(c.num("n_normal")?),
                group(c.num("n_byte")?)
            ),
            Kind::WordPiece => format!(
                "`{file}`: WordPiece, {} ids ({} continuation pieces), {}",
                group(c.num("n_ids")?),
                group(c.num("n_continuations")?),
                if c.num("lowercase")? == 1 {
                    "uncased"
                } else {
                    "cased"
                }
            ),
        })
    })?;
    row("flash: baked tables", &|c| {
        let total = c.num("table.total")?;
        Ok(format!(
            "{}; {:.1} B/id",
            kib(total),
            total as f64 / c.num("n_ids")? as f64
        ))
    })?;
    row(
        "  of which merge map / whole-piece map (SentencePiece: scores + kinds / piece map, \
         Unigram + piece filter; WordPiece: word-start / continuation piece maps)",
        &|c| match c.kind {
            Kind::BytePair => Ok(format!(
                "{} / {}",
                kib(c.num("table.pairs")?),
                kib(c.num("table.pieces")?)
            )),
            Kind::SentencePiece => Ok(format!(
                "{} / {}{}",
                kib(c.num("table.priorities")? + c.num("table.kinds")?),
                kib(c.num("table.pieces")?),
                match c.num("table.filter").unwrap_or(0) {
                    0 => String::new(),
                    n => format!(" + {} piece filter", kib(n)),
                }
            )),
            Kind::WordPiece => Ok(format!(
                "{} / {}",
                kib(c.num("table.starts")?),
                kib(c.num("table.continuations")?)
            )),
        },
    )?;
    row(
        "  of which compiled split patterns (a `tokenizer.json` pre-tokenizer none of the \
         hand-rolled splitters implements)",
        &|c| match c.kind {
            Kind::BytePair => Ok(match c.num("table.splits")? {
                0 => "none (hand-rolled pattern)".into(),
                n => kib(n),
            }),
            Kind::SentencePiece | Kind::WordPiece => Ok("none".into()),
        },
    )?;
    row("  of which token bytes + offsets", &|c| {
        Ok(kib(
            c.num("table.token_bytes")? + c.num("table.token_offsets")?
        ))
    })?;
    row(
        "  of which character map (SentencePiece normalizer: `precompiled_charsmap`)",
        &|c| match c.kind {
            Kind::SentencePiece => Ok(match c.num("table.charsmap")? {
                0 => "none (identity)".into(),
                n => kib(n),
            }),
            Kind::BytePair | Kind::WordPiece => Ok("none".into()),
        },
    )?;
    row(
        "flash: Unicode tables (pre-tokenizer; WordPiece and Unicode forms: normalizer)",
        &|c| Ok(kib(c.elf.unicode_tables)),
    )?;
    row("flash: picobpe code", &|c| Ok(kib(c.elf.core_code)))?;
    row("flash: whole firmware (code + data)", &|c| {
        let cap = flash_capacity(c.machine);
        Ok(format!(
            "{} = {:.1} % of {} KiB",
            kib(c.elf.flash),
            100.0 * c.elf.flash as f64 / cap as f64,
            cap / 1024
        ))
    })?;
    row("static RAM: picobpe", &|c| Ok(kib(c.elf.core_ram)))?;
    row(
        "static RAM: whole firmware (incl. 24 KiB bench buffers; SentencePiece and WordPiece: \
         28 KiB)",
        &|c| {
            let cap = ram_capacity(c.machine);
            Ok(format!(
                "{} = {:.1} % of {} KiB",
                kib(c.elf.ram),
                100.0 * c.elf.ram as f64 / cap as f64,
                cap / 1024
            ))
        },
    )?;
    row("heap", &|c| {
        Ok(if c.elf.alloc_symbols.is_empty() {
            "none (no allocator symbol in the ELF)".into()
        } else {
            format!("ALLOCATOR LINKED: {}", c.elf.alloc_symbols.join(", "))
        })
    })?;
    row("peak stack: encode", &|c| Ok(kib(c.num("stack_encode")?)))?;
    row("peak stack: decode", &|c| Ok(kib(c.num("stack_decode")?)))?;
    row("bench text → ids", &|c| {
        let (b, t) = (c.num("bench_bytes")?, c.num("bench_tokens")?);
        Ok(format!(
            "{} B → {} ids ({:.2} B/id)",
            group(b),
            group(t),
            b as f64 / t as f64
        ))
    })?;
    row("guest instructions / input byte: encode", &|c| {
        let per = c.num("instr_encode")? as f64 / c.num("bench_bytes")? as f64;
        Ok(format!("{per:.1}"))
    })?;
    row("guest instructions / output byte: decode", &|c| {
        // The decoded text is the bench text, except for a model that does not round-trip it
        // (ug8000), whose firmware reports its length.
        let out = c.num("decoded_bytes").or_else(|_| c.num("bench_bytes"))?;
        let per = c.num("instr_decode")? as f64 / out as f64;
        Ok(format!("{per:.1}"))
    })?;

    let header: Vec<String> = cols
        .iter()
        .map(|c| match c.kind {
            Kind::BytePair => {
                let default = if c.pieces == "full" { " (default)" } else { "" };
                format!("{}, {} pieces{default}", c.config.label(), c.pieces)
            }
            Kind::SentencePiece => format!("{} ({})", c.config.label(), c.sentencepiece_name()),
            Kind::WordPiece => format!("{} (WordPiece)", c.config.label()),
        })
        .collect();
    println!("| | {} |", header.join(" | "));
    println!("|---|{}", "---|".repeat(cols.len()));
    for (label, cells) in rows {
        println!("| {label} | {} |", cells.join(" | "));
    }
    println!();
    println!(
        "Release profile (opt-level \"s\", fat LTO). Speed: QEMU `-icount shift=0` guest \
         instructions (SysTick, calibrated), on the 8 KB held-out English text \
         `firmware-example/sample/bench.txt`; code size counts functions named `picobpe::…` \
         (inlined copies are counted in the firmware's own functions)."
    );
    Ok(())
}
