//! `cargo xtask panic-check [--profile P]...`: the link-time proof that no panic is reachable from
//! the core's public API (`panic-check/`, a `no_std` thumbv7m-none-eabi binary).
//!
//! For each optimisation profile (`release` = opt-level 3, `release-s`, `release-z`; all three by
//! default) it builds `panic-check`, whose panic handler calls an undefined symbol: the link
//! succeeds only if the optimiser removed every panic path. On a link failure it rebuilds with
//! `--features diagnose` (the symbol is defined) and `--emit-relocs`, reads the ELF and prints
//! every call site in non-`core` code that enters the panic machinery: the call chain from an
//! entry point, and the inlined source locations from `llvm-addr2line` (or `addr2line`) when one
//! is installed.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

const TARGET: &str = "thumbv7m-none-eabi";
const PROFILES: [&str; 3] = ["release", "release-s", "release-z"];
/// The symbol the panic handler references.
const PANIC_SYMBOL: &str = "picobpe_panic_is_reachable";
/// Entry points of the proof binary (see `panic-check/src/main.rs`).
const ROOT_PREFIX: &str = "panic_check_";

/// Entry point of `panic-check`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut profiles = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--profile" => {
                let p = it.next().ok_or("--profile needs a value")?;
                if !PROFILES.contains(&p.as_str()) {
                    return Err(format!("unknown profile `{p}` (expected one of {PROFILES:?})"));
                }
                profiles.push(p.clone());
            }
            other => {
                return Err(format!(
                    "unexpected argument `{other}`\nusage: cargo xtask panic-check [--profile release|release-s|release-z]..."
                ))
            }
        }
    }
    if profiles.is_empty() {
        profiles = PROFILES.iter().map(|p| p.to_string()).collect();
    }
    let root = repo_root();
    let dir = root.join("panic-check");
    let target_dir = root.join("target");
    let mut failed = Vec::new();
    for profile in &profiles {
        println!("== panic-check: link with an undefined panic handler ({profile})");
        let out = cargo(&dir)
            .args(["build", "--profile", profile, "--target-dir"])
            .arg(&target_dir)
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            println!("ok: no panic reachable from the public API ({profile})");
            continue;
        }
        if !stderr.contains(&format!("undefined symbol: {PANIC_SYMBOL}")) {
            return Err(format!(
                "building panic-check ({profile}) failed:\n{stderr}"
            ));
        }
        println!("FAILED: a panic is reachable ({profile}); diagnosing...");
        diagnose(&dir, &target_dir, profile)?;
        failed.push(profile.clone());
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "panics reachable with profile(s) {}",
            failed.join(", ")
        ))
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// `cargo` run inside `dir` (so its `.cargo/config.toml` selects the target).
fn cargo(dir: &Path) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(dir);
    c
}

/// Build the linkable variant with relocations and print every panic call site.
fn diagnose(dir: &Path, target_dir: &Path, profile: &str) -> Result<(), String> {
    let status = cargo(dir)
        .args([
            "rustc",
            "--quiet",
            "--profile",
            profile,
            "--features",
            "diagnose",
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .args(["--", "-C", "link-arg=--emit-relocs"])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("the diagnose build ({profile}) failed too"));
    }
    let elf = target_dir
        .join(TARGET)
        .join(profile)
        .join("picobpe-panic-check");
    let sites = panic_sites(&elf)?;
    if sites.is_empty() {
        println!(
            "  (no direct call into the panic machinery found; inspect {})",
            elf.display()
        );
    }
    let lines = addr2line(&elf, sites.iter().map(|s| s.addr));
    for (i, s) in sites.iter().enumerate() {
        println!(
            "  {}. {} calls {} at {:#x}",
            i + 1,
            s.caller,
            s.callee,
            s.addr
        );
        println!("     chain: {}", s.chain.join(" -> "));
        if let Some(frames) = lines.get(&s.addr) {
            println!("     inlined at (innermost first):");
            for f in frames {
                println!("       {f}");
            }
        }
    }
    Ok(())
}

/// A call from code outside `core` into a function that reaches the panic handler.
struct Site {
    addr: u64,
    caller: String,
    callee: String,
    /// Entry point → ... → caller.
    chain: Vec<String>,
}

/// One function symbol.
struct Func {
    addr: u64,
    size: u64,
    name: String,
}

/// Read the call graph from the ELF's kept relocations and find the panic call sites.
fn panic_sites(elf: &Path) -> Result<Vec<Site>, String> {
    let data = std::fs::read(elf).map_err(|e| format!("{}: {e}", elf.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", elf.display()))?;
    let mut funcs: Vec<Func> = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .filter_map(|s| {
            Some(Func {
                addr: s.address() & !1, // Thumb bit
                size: s.size(),
                name: format!("{:#}", rustc_demangle::demangle(s.name().ok()?)),
            })
        })
        .collect();
    funcs.sort_by_key(|f| f.addr);
    let func_at = |addr: u64| -> Option<usize> {
        let i = funcs.partition_point(|f| f.addr <= addr).checked_sub(1)?;
        (addr < funcs[i].addr + funcs[i].size).then_some(i)
    };

    // Call edges: (caller index, callee index, call address).
    let mut edges: Vec<(usize, usize, u64)> = Vec::new();
    for section in file.sections().filter(|s| s.kind() == SectionKind::Text) {
        let base = section.address();
        let bytes = section.data().map_err(|e| e.to_string())?;
        for (offset, _) in section.relocations() {
            // Executables give virtual addresses; be lenient about section offsets.
            let addr = if offset >= base {
                offset
            } else {
                base + offset
            };
            let at = (addr - base) as usize;
            let Some(insn) = bytes.get(at..at + 4) else {
                continue;
            };
            let hw1 = u16::from_le_bytes([insn[0], insn[1]]);
            let hw2 = u16::from_le_bytes([insn[2], insn[3]]);
            let Some(target) = thumb_branch_target(addr, hw1, hw2) else {
                continue;
            };
            if let (Some(from), Some(to)) = (func_at(addr), func_at(target)) {
                edges.push((from, to, addr));
            }
        }
    }

    // Functions from which the panic handler's symbol is reachable.
    let handler = funcs
        .iter()
        .position(|f| f.name == PANIC_SYMBOL)
        .ok_or(format!("{PANIC_SYMBOL} not found in {}", elf.display()))?;
    let mut callers: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut callees: HashMap<usize, Vec<usize>> = HashMap::new();
    for &(from, to, _) in &edges {
        callers.entry(to).or_default().push(from);
        callees.entry(from).or_default().push(to);
    }
    let mut reaches = BTreeSet::from([handler]);
    let mut queue = VecDeque::from([handler]);
    while let Some(f) = queue.pop_front() {
        for &c in callers.get(&f).into_iter().flatten() {
            if reaches.insert(c) {
                queue.push_back(c);
            }
        }
    }

    // Shortest chains from the entry points.
    let mut parent: BTreeMap<usize, Option<usize>> = BTreeMap::new();
    let mut queue = VecDeque::new();
    for (i, f) in funcs.iter().enumerate() {
        if f.name.starts_with(ROOT_PREFIX) {
            parent.insert(i, None);
            queue.push_back(i);
        }
    }
    while let Some(f) = queue.pop_front() {
        for &c in callees.get(&f).into_iter().flatten() {
            if let std::collections::btree_map::Entry::Vacant(e) = parent.entry(c) {
                e.insert(Some(f));
                queue.push_back(c);
            }
        }
    }
    let chain = |mut f: usize| {
        let mut names = vec![funcs[f].name.clone()];
        while let Some(Some(p)) = parent.get(&f) {
            names.push(funcs[*p].name.clone());
            f = *p;
        }
        names.reverse();
        names
    };

    let is_runtime = |name: &str| {
        name.starts_with("core::") || name.starts_with("__rustc::") || name == PANIC_SYMBOL
    };
    let mut sites: Vec<Site> = edges
        .iter()
        .filter(|&&(from, to, _)| {
            reaches.contains(&to) && is_runtime(&funcs[to].name) && !is_runtime(&funcs[from].name)
        })
        .map(|&(from, to, addr)| Site {
            addr,
            caller: funcs[from].name.clone(),
            callee: funcs[to].name.clone(),
            chain: chain(from),
        })
        .collect();
    sites.sort_by_key(|s| s.addr);
    Ok(sites)
}

/// Target of a 32-bit Thumb-2 `BL`, `B.W` (T4) or conditional `B<c>.W` (T3) at `addr`.
fn thumb_branch_target(addr: u64, hw1: u16, hw2: u16) -> Option<u64> {
    if hw1 & 0xF800 != 0xF000 {
        return None;
    }
    let (hw1, hw2) = (u32::from(hw1), u32::from(hw2));
    let s = (hw1 >> 10) & 1;
    let j1 = (hw2 >> 13) & 1;
    let j2 = (hw2 >> 11) & 1;
    let imm11 = hw2 & 0x7FF;
    let offset = match hw2 & 0xD000 {
        // BL (T1) and B.W (T4).
        0xD000 | 0x9000 => {
            let i1 = !(j1 ^ s) & 1;
            let i2 = !(j2 ^ s) & 1;
            let imm = (s << 24) | (i1 << 23) | (i2 << 22) | ((hw1 & 0x3FF) << 12) | (imm11 << 1);
            ((imm << 7) as i32) >> 7
        }
        // B<c>.W (T3); cond 111x is not a branch.
        0x8000 if (hw1 >> 6) & 0xE != 0xE => {
            let imm = (s << 20) | (j2 << 19) | (j1 << 18) | ((hw1 & 0x3F) << 12) | (imm11 << 1);
            ((imm << 11) as i32) >> 11
        }
        _ => return None,
    };
    Some((addr as i64 + 4 + i64::from(offset)) as u64)
}

/// Inlined source frames per address, from `llvm-addr2line`/`addr2line` if installed.
fn addr2line(elf: &Path, addrs: impl Iterator<Item = u64>) -> HashMap<u64, Vec<String>> {
    let addrs: Vec<String> = addrs.map(|a| format!("{a:#x}")).collect();
    let mut result = HashMap::new();
    if addrs.is_empty() {
        return result;
    }
    for tool in ["llvm-addr2line", "addr2line"] {
        let Ok(out) = Command::new(tool)
            .args(["-a", "-f", "-i", "-C", "-e"])
            .arg(elf)
            .args(&addrs)
            .output()
        else {
            continue;
        };
        if !out.status.success() {
            continue;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut current: Option<u64> = None;
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if let Some(hex) = line.strip_prefix("0x") {
                current = u64::from_str_radix(hex, 16).ok();
                continue;
            }
            let Some(addr) = current else { continue };
            // Pairs of lines: function, then file:line.
            let func = line.trim();
            let loc = lines.next().unwrap_or("").trim();
            let loc = loc.split("/library/").last().unwrap_or(loc);
            result
                .entry(addr)
                .or_insert_with(Vec::new)
                .push(format!("{loc}  {}", strip_hash(func)));
        }
        return result;
    }
    result
}

/// `path::name::h0123456789abcdef` → `path::name`.
fn strip_hash(name: &str) -> &str {
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            head
        }
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_bl_and_conditional_branches() {
        // `bl 0x2ba4e` at 0x27faa (from a real panic-check build): f003 fd50.
        assert_eq!(thumb_branch_target(0x27faa, 0xF003, 0xFD50), Some(0x2BA4E));
        // Backward bl: `bl 0x2ba46` at 0x2e6c6 would be offset -0x2c84.
        let (hw1, hw2) = encode_bl(-0x2C84);
        assert_eq!(
            thumb_branch_target(0x2E6C6, hw1, hw2),
            Some(0x2E6C6 + 4 - 0x2C84)
        );
        // Not a 32-bit branch.
        assert_eq!(thumb_branch_target(0x1000, 0xB580, 0x0000), None);
    }

    /// Encode `bl` with a byte offset (relative to pc + 4), for the test.
    fn encode_bl(offset: i32) -> (u16, u16) {
        let imm = (offset as u32) >> 1;
        let s = (offset as u32 >> 24) & 1;
        let i1 = (imm >> 22) & 1;
        let i2 = (imm >> 21) & 1;
        let j1 = (!(i1 ^ s)) & 1;
        let j2 = (!(i2 ^ s)) & 1;
        let hw1 = 0xF000 | (s << 10) | ((imm >> 11) & 0x3FF);
        let hw2 = 0xD000 | (j1 << 13) | (j2 << 11) | (imm & 0x7FF);
        (hw1 as u16, hw2 as u16)
    }
}
