//! `cargo xtask gen-unicode` (second file): writes `core/src/normalizer/unicode_tables.rs`, the
//! data of the core's Unicode normalization forms (NFC, NFD, NFKC, NFKD).
//!
//! The data comes from `unicode-normalization-alignments` 0.1.12 — the crate Hugging Face
//! `tokenizers` normalizes with (Unicode 9.0.0) — through its public `char` functions, so every
//! canonical combining class, decomposition and composition is exactly the one the reference
//! applies. Hangul syllables are left out: the core decomposes and composes them by the
//! algorithm of Unicode §3.12, as the crate does.
//!
//! Layout (the invariants the core's lookups rely on):
//! - `CCC` / `FLAGS`: two-level tables over code points `< LIMIT` (a multiple of 128, past the
//!   last code point with a non-zero value): `*_INDEX[cp >> 7]` names a 128-entry block of
//!   `*_BLOCKS`; identical blocks are stored once; code points `>= LIMIT` have 0.
//! - `FLAGS` bits: `HAS_CANONICAL` (a canonical decomposition other than the code point
//!   itself), `HAS_COMPAT` (a compatibility decomposition that differs from the canonical one
//!   or from the code point), `BACKWARD` (the second character of some primary composite, the
//!   Hangul vowel and trailing jamo included: a character without it never composes with what
//!   precedes it), and `SAME[form]` (the code point alone is its own NFC, NFD, NFKC, NFKD, as
//!   the crate's iterators say: a unit of that one character is left as it is).
//! - `MARK_RANGES`: the combining marks (`is_combining_mark`, General_Category M: what
//!   `tokenizers`' `StripAccents` drops) as ranges; the generator checks that every
//!   non-starter is one.
//! - `CANONICAL_KEYS` / `COMPAT_KEYS`: the code points with a decomposition, sorted;
//!   `*_ENDS[i]` is the end of entry `i`'s full decomposition in `*_UTF8` (its start is the
//!   previous end, or 0), as UTF-8.
//! - `COMPOSE_KEYS`: `(first << 21) | second` of every primary composite but the Hangul ones,
//!   sorted; `COMPOSE_VALUES` the composite.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use unicode_normalization_alignments::char::{
    canonical_combining_class, compose, decompose_canonical, decompose_compatible,
    is_combining_mark,
};
use unicode_normalization_alignments::UnicodeNormalization;

const BLOCK_SHIFT: u32 = 7;
const BLOCK: usize = 1 << BLOCK_SHIFT;
const N_CP: u32 = 0x11_0000;
const HAS_CANONICAL: u8 = 1;
const HAS_COMPAT: u8 = 2;
const BACKWARD: u8 = 4;
/// Flags: the code point alone is its own NFC, NFD, NFKC, NFKD (in this bit order).
const SAME: [u8; 4] = [8, 16, 32, 64];
const S_BASE: u32 = 0xAC00;
const S_COUNT: u32 = 11_172;

/// Path of the generated file.
pub fn out_path() -> PathBuf {
    let xtask = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = xtask.parent().map(PathBuf::from).unwrap_or(xtask);
    root.join("core/src/normalizer/unicode_tables.rs")
}

fn is_hangul_syllable(cp: u32) -> bool {
    (S_BASE..S_BASE + S_COUNT).contains(&cp)
}

fn decomposition(c: char, compat: bool) -> Vec<char> {
    let mut v = Vec::new();
    if compat {
        decompose_compatible(c, |d| v.push(d));
    } else {
        decompose_canonical(c, |d| v.push(d));
    }
    v
}

/// A two-level table: LIMIT, the block index, the distinct blocks.
pub type TwoLevel = (u32, Vec<u8>, Vec<[u8; BLOCK]>);

/// A two-level table of `values` (one byte per code point).
pub fn two_level(values: &[u8]) -> Result<TwoLevel, String> {
    let last = values.iter().rposition(|&v| v != 0).unwrap_or(0);
    let limit = (last / BLOCK + 1) * BLOCK;
    let mut blocks: Vec<[u8; BLOCK]> = Vec::new();
    let mut index = Vec::new();
    for chunk in values[..limit].chunks(BLOCK) {
        let mut b = [0u8; BLOCK];
        b.copy_from_slice(chunk);
        let id = match blocks.iter().position(|x| *x == b) {
            Some(i) => i,
            None => {
                blocks.push(b);
                blocks.len() - 1
            }
        };
        index.push(u8::try_from(id).map_err(|_| "more than 256 distinct blocks")?);
    }
    Ok((limit as u32, index, blocks))
}

/// Sorted decomposition entries: (keys, ends, utf8).
type Decomps = (Vec<u32>, Vec<u16>, Vec<u8>);

fn pack(entries: &[(u32, Vec<char>)]) -> Result<Decomps, String> {
    let (mut keys, mut ends, mut utf8) = (Vec::new(), Vec::new(), Vec::new());
    for (cp, d) in entries {
        keys.push(*cp);
        for c in d {
            let mut b = [0u8; 4];
            utf8.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        }
        ends.push(u16::try_from(utf8.len()).map_err(|_| "decompositions exceed 64 KiB")?);
    }
    Ok((keys, ends, utf8))
}

/// The generated Rust source.
pub fn generate() -> Result<String, String> {
    let mut ccc = vec![0u8; N_CP as usize];
    let mut flags = vec![0u8; N_CP as usize];
    let mut marks: Vec<(u32, u32)> = Vec::new();
    let mut canonical = Vec::new();
    let mut compat = Vec::new();
    let mut longest = 0;
    for cp in 0..N_CP {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        ccc[cp as usize] = canonical_combining_class(c);
        if is_combining_mark(c) {
            match marks.last_mut() {
                Some((_, end)) if *end + 1 == cp => *end = cp,
                _ => marks.push((cp, cp)),
            }
        } else if ccc[cp as usize] != 0 {
            // The core strips accents a character at a time after a decomposition, which
            // skips the canonical reordering: exact only when every non-starter is a mark.
            return Err(format!(
                "U+{cp:04X} has a combining class but is not a mark"
            ));
        }
        let alone = c.to_string();
        let forms: [String; 4] = [
            alone.nfc().map(|(ch, _)| ch).collect(),
            alone.nfd().map(|(ch, _)| ch).collect(),
            alone.nfkc().map(|(ch, _)| ch).collect(),
            alone.nfkd().map(|(ch, _)| ch).collect(),
        ];
        for (form, bit) in forms.iter().zip(SAME) {
            if *form == alone {
                flags[cp as usize] |= bit;
            }
        }
        if is_hangul_syllable(cp) {
            continue;
        }
        let canon = decomposition(c, false);
        let compat_d = decomposition(c, true);
        longest = longest.max(canon.len()).max(compat_d.len());
        if canon != [c] {
            flags[cp as usize] |= HAS_CANONICAL;
            canonical.push((cp, canon.clone()));
        }
        if compat_d != canon {
            flags[cp as usize] |= HAS_COMPAT;
            compat.push((cp, compat_d));
        }
    }
    // Candidates for the two characters of a primary composite: every character of a canonical
    // decomposition, and every character that has one.
    let mut candidates = BTreeSet::new();
    for (cp, d) in &canonical {
        candidates.insert(*cp);
        candidates.extend(d.iter().map(|&c| c as u32));
    }
    let mut pairs = Vec::new();
    for &a in &candidates {
        for &b in &candidates {
            let (Some(x), Some(y)) = (char::from_u32(a), char::from_u32(b)) else {
                continue;
            };
            if let Some(r) = compose(x, y) {
                if is_hangul_syllable(r as u32) {
                    return Err(format!(
                        "U+{a:04X} U+{b:04X}: a Hangul composite in the table"
                    ));
                }
                pairs.push(((u64::from(a) << 21) | u64::from(b), r as u32));
                flags[b as usize] |= BACKWARD;
            }
        }
    }
    pairs.sort();
    // Hangul: vowel jamo compose after a leading consonant, trailing jamo after an LV syllable.
    for cp in (0x1161..=0x1175).chain(0x11A8..=0x11C2) {
        flags[cp as usize] |= BACKWARD;
    }
    // The core's boundary rule assumes no composite's second character decomposes.
    for &(k, _) in &pairs {
        let b = (k & 0x1F_FFFF) as usize;
        if flags[b] & (HAS_CANONICAL | HAS_COMPAT) != 0 {
            return Err(format!("U+{b:04X} composes backward and decomposes"));
        }
    }
    let (ccc_limit, ccc_index, ccc_blocks) = two_level(&ccc)?;
    let (flag_limit, flag_index, flag_blocks) = two_level(&flags)?;
    let (ck, ce, cu) = pack(&canonical)?;
    let (kk, ke, ku) = pack(&compat)?;
    let (major, minor, patch) = unicode_normalization_alignments::UNICODE_VERSION;
    let bytes = ccc_index.len()
        + ccc_blocks.len() * BLOCK
        + flag_index.len()
        + flag_blocks.len() * BLOCK
        + (ck.len() + kk.len()) * 6
        + cu.len()
        + ku.len()
        + pairs.len() * 12;

    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "//! Unicode normalization data: canonical combining classes, decompositions, compositions.");
    let _ = writeln!(w, "//!");
    let _ = writeln!(
        w,
        "//! @generated by `cargo xtask gen-unicode` (xtask/src/unicode_norm.rs) from"
    );
    let _ = writeln!(w, "//! `unicode-normalization-alignments` 0.1.12 (Unicode {major}.{minor}.{patch}), the crate Hugging");
    let _ = writeln!(w, "//! Face `tokenizers` normalizes with. DO NOT EDIT. See the generator's module docs for the");
    let _ = writeln!(
        w,
        "//! layout. {} canonical and {} compatibility decompositions, {} compositions; longest",
        canonical.len(),
        compat.len(),
        pairs.len()
    );
    let _ = writeln!(
        w,
        "//! decomposition {longest} characters; table bytes: {bytes}."
    );
    let _ = writeln!(w);
    let _ = writeln!(w, "/// The Unicode version of this data.");
    let _ = writeln!(
        w,
        "pub const UNICODE_VERSION: (u8, u8, u8) = ({major}, {minor}, {patch});"
    );
    let _ = writeln!(
        w,
        "/// Flag: the code point has a canonical decomposition (Hangul syllables excepted)."
    );
    let _ = writeln!(w, "pub(crate) const HAS_CANONICAL: u8 = {HAS_CANONICAL};");
    let _ = writeln!(
        w,
        "/// Flag: its compatibility decomposition differs from the canonical one."
    );
    let _ = writeln!(w, "pub(crate) const HAS_COMPAT: u8 = {HAS_COMPAT};");
    let _ = writeln!(
        w,
        "/// Flag: it is the second character of some primary composite."
    );
    let _ = writeln!(w, "pub(crate) const BACKWARD: u8 = {BACKWARD};");
    let _ = writeln!(
        w,
        "/// Flags: the code point alone is its own NFC, NFD, NFKC, NFKD (in this order)."
    );
    let _ = writeln!(w, "pub(crate) const SAME: [u8; 4] = {SAME:?};");
    let _ = writeln!(
        w,
        "/// log2 of the code points per block of the two-level tables."
    );
    let _ = writeln!(w, "pub(crate) const BLOCK_SHIFT: u32 = {BLOCK_SHIFT};");
    emit_two_level(
        w,
        "CCC",
        "canonical combining class",
        ccc_limit,
        &ccc_index,
        &ccc_blocks,
    );
    emit_two_level(w, "FLAGS", "flags", flag_limit, &flag_index, &flag_blocks);
    emit_decomps(w, "CANONICAL", "canonical", &ck, &ce, &cu);
    emit_decomps(w, "COMPAT", "compatibility", &kk, &ke, &ku);
    let _ = writeln!(
        w,
        "\n/// `(first << 21) | second` of every primary composite but the Hangul ones, sorted."
    );
    emit_array(
        w,
        "COMPOSE_KEYS",
        "u64",
        pairs.iter().map(|p| format!("0x{:X}", p.0)),
    );
    let _ = writeln!(
        w,
        "\n/// The combining marks (General_Category M, `is_combining_mark`: what `StripAccents`\n\
         /// drops) as sorted, disjoint `(first, last)` ranges."
    );
    emit_array(
        w,
        "MARK_RANGES",
        "(u32, u32)",
        marks.iter().map(|(a, b)| format!("(0x{a:X}, 0x{b:X})")),
    );
    let _ = writeln!(w, "\n/// The composite of each `COMPOSE_KEYS` entry.");
    emit_array(
        w,
        "COMPOSE_VALUES",
        "u32",
        pairs.iter().map(|p| format!("0x{:X}", p.1)),
    );
    rustfmt(&s)
}

fn emit_array(w: &mut String, name: &str, ty: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    let n = items.len();
    let _ = writeln!(w, "pub(crate) static {name}: [{ty}; {n}] = [");
    let mut line = String::from("   ");
    for it in items {
        if line.len() + it.len() + 2 > 100 {
            let _ = writeln!(w, "{line}");
            line = String::from("   ");
        }
        line.push(' ');
        line.push_str(&it);
        line.push(',');
    }
    if line.trim() != "" {
        let _ = writeln!(w, "{line}");
    }
    let _ = writeln!(w, "];");
}

pub fn emit_two_level(
    w: &mut String,
    name: &str,
    what: &str,
    limit: u32,
    index: &[u8],
    blocks: &[[u8; BLOCK]],
) {
    let _ = writeln!(w, "\n/// Code points at or past this have {what} 0.");
    let _ = writeln!(w, "pub(crate) const {name}_LIMIT: u32 = 0x{limit:X};");
    let _ = writeln!(
        w,
        "\n/// Block of each 128-code-point block below `{name}_LIMIT`."
    );
    emit_array(
        w,
        &format!("{name}_INDEX"),
        "u8",
        index.iter().map(|v| v.to_string()),
    );
    let _ = writeln!(
        w,
        "\n/// The distinct blocks of {what}, 128 code points each, back to back."
    );
    emit_array(
        w,
        &format!("{name}_BLOCKS"),
        "u8",
        blocks.iter().flatten().map(|v| v.to_string()),
    );
}

/// `text` as rustfmt prints it (so `cargo fmt --check` and `--check` agree).
pub fn rustfmt(text: &str) -> Result<String, String> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("rustfmt: no stdin")?
        .write_all(text.as_bytes())
        .map_err(|e| format!("rustfmt: {e}"))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt: {e}"))?;
    if !out.status.success() {
        return Err("rustfmt failed on the generated tables".into());
    }
    String::from_utf8(out.stdout).map_err(|e| format!("rustfmt: {e}"))
}

fn emit_decomps(w: &mut String, name: &str, what: &str, keys: &[u32], ends: &[u16], utf8: &[u8]) {
    let _ = writeln!(w, "\n/// Code points with a {what} decomposition, sorted.");
    emit_array(
        w,
        &format!("{name}_KEYS"),
        "u32",
        keys.iter().map(|v| format!("0x{v:X}")),
    );
    let _ = writeln!(
        w,
        "\n/// End of each entry's decomposition in `{name}_UTF8`."
    );
    emit_array(
        w,
        &format!("{name}_ENDS"),
        "u16",
        ends.iter().map(|v| v.to_string()),
    );
    let _ = writeln!(w, "\n/// The {what} decompositions, UTF-8, back to back.");
    emit_array(
        w,
        &format!("{name}_UTF8"),
        "u8",
        utf8.iter().map(|v| v.to_string()),
    );
}
