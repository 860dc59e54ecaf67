//! `cargo xtask gen-unicode`: writes `core/src/pretok/unicode_tables.rs`, the character-class
//! tables of the hand-rolled pre-tokenizers, and (`crate::unicode_norm`)
//! `core/src/normalizer/unicode_tables.rs`, the Unicode normalization data, and
//! (`crate::grapheme`) `core/src/normalizer/grapheme_tables.rs`, grapheme cluster classes.
//!
//! The data comes from `regex-syntax` 0.8 — the crate `regex` and `fancy-regex` parse patterns
//! with — so `\p{L}`, `\p{N}`, `\s`, … mean exactly what they mean to the reference regex. Every
//! Unicode scalar value gets one class out of {Other, White_Space, N, Lu, Ll, Lt, Lm, Lo, M}; the
//! generator checks that these sets are pairwise disjoint and that their unions equal `\p{L}`,
//! `\p{M}`, so every regex class the three patterns use is a union of table classes.
//!
//! Layout (the invariant the core's lookup relies on):
//! - `ASCII[b]`: class of every ASCII byte, one byte each (the hot path).
//! - code points `< LIMIT` (a multiple of 128, just past the last non-Other code point below the
//!   supplementary private-use and tag planes): `BLOCK_INDEX[cp >> 7]` names a 128-code-point
//!   block of `BLOCKS` (64 bytes, two 4-bit classes per byte, even code point in the low nibble);
//!   identical blocks are stored once.
//! - code points `>= LIMIT`: `HIGH` lists the few non-Other ranges (sorted, inclusive), else Other.
//! - `FOLDS`: every non-ASCII code point that `(?i)` matches to one of the ASCII contraction
//!   letters `s d m t l v r e` (Unicode simple case folding as regex-syntax applies it).

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Table class ids, in output order. The core's masks are built from these constants, which the
/// generated file defines.
const CLASSES: [(&str, &str, &str); 9] = [
    ("OTHER", "", "not White_Space, not a letter, number or mark"),
    ("WS", r"\s", "White_Space (`\\s`)"),
    ("N", r"\p{N}", "Number (`\\p{N}`: Nd, Nl, No)"),
    ("LU", r"\p{Lu}", "Uppercase_Letter"),
    ("LL", r"\p{Ll}", "Lowercase_Letter"),
    ("LT", r"\p{Lt}", "Titlecase_Letter"),
    ("LM", r"\p{Lm}", "Modifier_Letter"),
    ("LO", r"\p{Lo}", "Other_Letter"),
    ("M", r"\p{M}", "Mark (`\\p{M}`: Mn, Mc, Me)"),
];

/// Code points per block of the two-level table.
const BLOCK_SHIFT: u32 = 7;
const BLOCK: usize = 1 << BLOCK_SHIFT;
const N_CP: usize = 0x11_0000;
/// Letters that occur in the contractions of the cl100k / o200k patterns.
const CONTRACTION_LETTERS: &str = "sdmtlvre";

pub fn run(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => return Err("usage: cargo xtask gen-unicode [--check]".into()),
    };
    write_or_check(&out_path(), &generate()?, check, "gen-unicode")?;
    write_or_check(
        &crate::unicode_norm::out_path(),
        &crate::unicode_norm::generate()?,
        check,
        "gen-unicode",
    )?;
    write_or_check(
        &crate::grapheme::out_path(),
        &crate::grapheme::generate()?,
        check,
        "gen-unicode",
    )
}

/// Write a generated file, or with `check` only compare it with what is there (the test
/// command's staleness check); `command` is the xtask command that regenerates it.
pub fn write_or_check(
    path: &std::path::Path,
    text: &str,
    check: bool,
    command: &str,
) -> Result<(), String> {
    if check {
        let old = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if old != text {
            return Err(format!(
                "{} is stale; run `cargo xtask {command}`",
                path.display()
            ));
        }
        eprintln!("{} is up to date", path.display());
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn out_path() -> PathBuf {
    let xtask = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = xtask.parent().map(PathBuf::from).unwrap_or(xtask);
    root.join("core/src/pretok/unicode_tables.rs")
}

/// The ranges of a single-class pattern such as `\p{Lu}`.
fn class_ranges(pattern: &str) -> Result<Vec<(u32, u32)>, String> {
    let hir = regex_syntax::parse(pattern).map_err(|e| format!("{pattern}: {e}"))?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => Ok(ranges_of(c)),
        other => Err(format!(
            "{pattern}: expected a Unicode class, got {other:?}"
        )),
    }
}

fn ranges_of(c: &ClassUnicode) -> Vec<(u32, u32)> {
    c.ranges()
        .iter()
        .map(|r| (r.start() as u32, r.end() as u32))
        .collect()
}

/// Membership bitmap of a pattern's class over all code points.
fn member(pattern: &str) -> Result<Vec<bool>, String> {
    let mut m = vec![false; N_CP];
    for (a, b) in class_ranges(pattern)? {
        for x in a..=b {
            m[x as usize] = true;
        }
    }
    Ok(m)
}

fn generate() -> Result<String, String> {
    // 1. One class per code point; the sets must be disjoint.
    let mut class = vec![0u8; N_CP];
    for (id, (name, pat, _)) in CLASSES.iter().enumerate().skip(1) {
        for (a, b) in class_ranges(pat)? {
            for x in a..=b {
                let old = class[x as usize];
                if old != 0 {
                    return Err(format!(
                        "U+{x:04X} is in both {} and {name}",
                        CLASSES[old as usize].0
                    ));
                }
                class[x as usize] = id as u8;
            }
        }
    }
    // 2. The unions the patterns use are exactly unions of table classes.
    let check_union = |pat: &str, ids: &[u8]| -> Result<(), String> {
        let m = member(pat)?;
        for (cp, &c) in class.iter().enumerate() {
            if m[cp] != ids.contains(&c) {
                return Err(format!(
                    "{pat} disagrees with classes {ids:?} at U+{cp:04X}"
                ));
            }
        }
        Ok(())
    };
    let id = |n: &str| CLASSES.iter().position(|c| c.0 == n).unwrap() as u8;
    let letters = [id("LU"), id("LL"), id("LT"), id("LM"), id("LO")];
    check_union(r"\p{L}", &letters)?;
    check_union(r"[\p{Mn}\p{Mc}\p{Me}]", &[id("M")])?;
    check_union(r"[\p{Nd}\p{Nl}\p{No}]", &[id("N")])?;
    check_union(r"[^\s\p{L}\p{N}]", &[id("OTHER"), id("M")])?;
    // Surrogates are not scalar values; keep them Other (never looked up: the decoder rejects them).
    for (cp, &c) in class.iter().enumerate().take(0xE000).skip(0xD800) {
        if c != 0 {
            return Err(format!("surrogate U+{cp:04X} has a class"));
        }
    }

    // 3. Two-level table below LIMIT, range list above.
    let last_low = (0..0xE0000).rev().find(|&cp| class[cp] != 0).unwrap_or(0);
    let limit = (last_low / BLOCK + 1) * BLOCK;
    let mut block_ids: HashMap<&[u8], usize> = HashMap::new();
    let mut blocks: Vec<&[u8]> = Vec::new();
    let mut index: Vec<usize> = Vec::new();
    for chunk in class[..limit].chunks(BLOCK) {
        let next = blocks.len();
        let i = *block_ids.entry(chunk).or_insert(next);
        if i == next {
            blocks.push(chunk);
        }
        index.push(i);
    }
    if blocks.len() > 256 {
        return Err(format!(
            "{} distinct blocks do not fit a u8 index",
            blocks.len()
        ));
    }
    let mut high: Vec<(u32, u32, u8)> = Vec::new();
    for (cp, &c) in class.iter().enumerate().skip(limit) {
        if c == 0 {
            continue;
        }
        match high.last_mut() {
            Some(r) if r.1 + 1 == cp as u32 && r.2 == c => r.1 = cp as u32,
            _ => high.push((cp as u32, cp as u32, c)),
        }
    }

    // 4. Case folds of the contraction letters.
    let mut folds: Vec<(u32, u8)> = Vec::new();
    for l in CONTRACTION_LETTERS.chars() {
        let mut c = ClassUnicode::new([ClassUnicodeRange::new(l, l)]);
        c.try_case_fold_simple()
            .map_err(|e| format!("case folding unavailable: {e:?}"))?;
        for (a, b) in ranges_of(&c) {
            for x in a..=b {
                let ch = char::from_u32(x).unwrap();
                if ch.is_ascii() {
                    if ch.to_ascii_lowercase() != l {
                        return Err(format!("(?i){l} matches ASCII {ch:?}"));
                    }
                } else if let Some(prev) = folds.iter().find(|f| f.0 == x) {
                    return Err(format!(
                        "U+{x:04X} folds to both {} and {l}",
                        prev.1 as char
                    ));
                } else {
                    folds.push((x, l as u8));
                }
            }
        }
    }
    folds.sort();

    // 5. Emit.
    let n_ranges = (1..N_CP).filter(|&i| class[i] != class[i - 1]).count() + 1;
    let bytes_index = index.len();
    let bytes_blocks = blocks.len() * BLOCK / 2;
    let bytes_high = high.len() * 12;
    let bytes_folds = folds.len() * 8;
    let total = 128 + bytes_index + bytes_blocks + bytes_high + bytes_folds;
    let mut o = String::new();
    let w = &mut o;
    writeln!(w, "//! Unicode character classes for the pre-tokenizers.").unwrap();
    writeln!(w, "//!").unwrap();
    writeln!(w, "//! @generated by `cargo xtask gen-unicode` (xtask/src/unicode.rs) from the Unicode tables of").unwrap();
    writeln!(w, "//! regex-syntax 0.8 (Unicode 16.0.0), the data `regex` and `fancy-regex` use. DO NOT EDIT.").unwrap();
    writeln!(w, "//! See the generator's module docs for the layout. {n_ranges} class ranges in all; table bytes:").unwrap();
    writeln!(w, "//! ASCII 128 + BLOCK_INDEX {bytes_index} + BLOCKS {bytes_blocks} + HIGH {bytes_high} + FOLDS {bytes_folds} = {total}.").unwrap();
    writeln!(w).unwrap();
    for (i, (name, _, doc)) in CLASSES.iter().enumerate() {
        writeln!(w, "/// Class id: {doc}.").unwrap();
        writeln!(w, "pub(crate) const {name}: u8 = {i};").unwrap();
    }
    writeln!(w).unwrap();
    writeln!(w, "/// Class of each ASCII byte.").unwrap();
    writeln!(w, "pub(crate) static ASCII: [u8; 128] = [").unwrap();
    emit_u8(w, &class[..128], 32);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "/// Code points below `LIMIT` are looked up in `BLOCK_INDEX` / `BLOCKS`."
    )
    .unwrap();
    writeln!(w, "pub(crate) const LIMIT: u32 = 0x{limit:X};").unwrap();
    writeln!(w, "/// log2 of the code points per block.").unwrap();
    writeln!(w, "pub(crate) const BLOCK_SHIFT: u32 = {BLOCK_SHIFT};").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "/// Block number of each {BLOCK}-code-point block below `LIMIT`."
    )
    .unwrap();
    writeln!(
        w,
        "pub(crate) static BLOCK_INDEX: [u8; {}] = [",
        index.len()
    )
    .unwrap();
    let idx8: Vec<u8> = index.iter().map(|&i| i as u8).collect();
    emit_u8(w, &idx8, 32);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "/// {} distinct blocks of {} bytes: the class of code point `2k` in the low nibble of byte `k`,", blocks.len(), BLOCK / 2).unwrap();
    writeln!(w, "/// of `2k + 1` in the high nibble.").unwrap();
    writeln!(w, "pub(crate) static BLOCKS: [u8; {bytes_blocks}] = [").unwrap();
    let packed: Vec<u8> = blocks
        .iter()
        .flat_map(|b| b.chunks(2).map(|p| p[0] | (p[1] << 4)))
        .collect();
    emit_u8(w, &packed, 32);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "/// Non-Other ranges at or above `LIMIT`: (first, last, class), sorted, inclusive."
    )
    .unwrap();
    writeln!(
        w,
        "pub(crate) static HIGH: [(u32, u32, u8); {}] = [",
        high.len()
    )
    .unwrap();
    for (a, b, c) in &high {
        writeln!(w, "    (0x{a:X}, 0x{b:X}, {}),", CLASSES[*c as usize].0).unwrap();
    }
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "/// Non-ASCII code points that `(?i)` matches to an ASCII contraction letter: (code point, letter).").unwrap();
    writeln!(
        w,
        "pub(crate) static FOLDS: [(u32, u8); {}] = [",
        folds.len()
    )
    .unwrap();
    for (cp, l) in &folds {
        writeln!(w, "    (0x{cp:X}, b'{}'),", *l as char).unwrap();
    }
    writeln!(w, "];").unwrap();
    eprintln!(
        "gen-unicode: {n_ranges} ranges, {} blocks below 0x{limit:X}, {} high ranges, {} folds; {total} bytes",
        blocks.len(),
        high.len(),
        folds.len()
    );
    Ok(o)
}

fn emit_u8(w: &mut String, data: &[u8], per_line: usize) {
    for line in data.chunks(per_line) {
        w.push_str("   ");
        for b in line {
            write!(w, " {b},").unwrap();
        }
        w.push('\n');
    }
}
