//! `cargo xtask gen-unicode` (with `crate::unicode`): writes
//! `core/src/normalizer/grapheme_tables.rs`, the grapheme cluster break classes the core's
//! extended grapheme clusters (UAX #29) are found with, for `tokenizers`' `Precompiled`
//! normalizer, which rewrites text one cluster at a time.
//!
//! The reference is the crate `tokenizers` itself calls, `unicode-segmentation` 1.12.0 (the
//! version its 0.22.2 wheel is built with). Its tables are private, so each code point's
//! class is read off its behaviour: the generator segments a few probe strings around the
//! code point and names the class the rules give for what it sees (the probes are in
//! [`class_of`]). `tests/tests/grapheme_reference.rs` then checks the core's segmentation
//! against the crate on every code point in many contexts and on random text.
//!
//! Layout: one byte per code point, the low five bits the class (`GB_*`), the top two the
//! Indic conjunct break property (`INCB_*`): below U+20000 a two-level table
//! (`crate::unicode_norm`'s), above it a short list of ranges; Hangul syllables (LV, LVT)
//! are computed, not stored.

use std::fmt::Write as _;
use std::path::PathBuf;
use unicode_segmentation::UnicodeSegmentation;

/// The classes, in output order: (constant, meaning).
const CLASSES: [(&str, &str); 16] = [
    ("OTHER", "any other character (one that no rule names)"),
    ("CR", "carriage return"),
    ("LF", "line feed"),
    ("CONTROL", "Control"),
    ("EXTEND", "Extend"),
    ("ZWJ", "zero width joiner"),
    ("SPACING_MARK", "SpacingMark"),
    ("PREPEND", "Prepend"),
    ("RI", "Regional_Indicator"),
    ("L", "Hangul leading jamo"),
    ("V", "Hangul vowel jamo"),
    ("T", "Hangul trailing jamo"),
    ("LV", "Hangul syllable LV"),
    ("LVT", "Hangul syllable LVT"),
    ("PICTOGRAPHIC", "Extended_Pictographic (and no class above)"),
    ("CONSONANT", "Indic_Conjunct_Break=Consonant"),
];

/// Indic_Conjunct_Break values, in the top two bits.
const INCB: [(&str, u8); 2] = [("INCB_EXTEND", 1), ("INCB_LINKER", 2)];

/// Code points from here on are in the table's short range list, not its blocks.
const HIGH_START: u32 = 0x2_0000;

/// Path of the generated file.
pub fn out_path() -> PathBuf {
    let xtask = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = xtask.parent().map(PathBuf::from).unwrap_or(xtask);
    root.join("core/src/normalizer/grapheme_tables.rs")
}

/// True when `s` is one extended grapheme cluster for the reference.
fn one(s: &str) -> bool {
    s.graphemes(true).count() == 1
}

fn class_index(name: &str) -> u8 {
    CLASSES.iter().position(|c| c.0 == name).unwrap_or(0) as u8
}

/// The class byte of `c`, from probes (`a` an ordinary letter, `x` U+0308 an Extend mark,
/// `ka` / `virama` a Devanagari consonant and its linker, Hangul jamo L, V, T).
fn class_of(c: char) -> u8 {
    let s = |parts: &[&str]| parts.concat();
    let cs = c.to_string();
    let c = cs.as_str();
    let (l, v, t, ka, virama, zwj, pict) = (
        "\u{1100}",
        "\u{1161}",
        "\u{11A8}",
        "\u{915}",
        "\u{94D}",
        "\u{200D}",
        "\u{1F44D}",
    );
    let name = match c {
        "\r" => "CR",
        "\n" => "LF",
        _ if !one(&s(&["\u{600}", c])) => "CONTROL",
        _ if one(&s(&["a", c])) => {
            // Extend or SpacingMark: only Extend may stand between a pictograph and the ZWJ.
            let class = if c == zwj {
                "ZWJ"
            } else if one(&s(&[pict, c, zwj, pict])) {
                "EXTEND"
            } else {
                "SPACING_MARK"
            };
            let incb = if one(&s(&[ka, c, ka])) {
                2
            } else if one(&s(&[ka, virama, c, ka])) {
                1
            } else {
                0
            };
            return class_index(class) | incb << 6;
        }
        _ if one(&s(&[c, "a"])) => "PREPEND",
        _ if one(&s(&[c, c])) && !one(&s(&[c, c, c])) => "RI",
        _ => {
            let before_v = one(&s(&[c, v]));
            let before_t = one(&s(&[c, t]));
            let after_l = one(&s(&[l, c]));
            let after_v = one(&s(&[v, c]));
            let after_t = one(&s(&[t, c]));
            match (before_v, before_t, after_l, after_v, after_t) {
                (true, false, true, false, _) => "L",
                (true, true, true, true, _) => "V",
                (true, true, true, false, _) => "LV",
                (false, true, false, true, true) => "T",
                (false, true, true, false, false) => "LVT",
                _ if one(&s(&[pict, zwj, c])) && !one(&s(&["a", zwj, c])) => "PICTOGRAPHIC",
                _ if one(&s(&[ka, virama, c])) => "CONSONANT",
                _ => "OTHER",
            }
        }
    };
    class_index(name)
}

/// The generated Rust source.
pub fn generate() -> Result<String, String> {
    let mut values = vec![0u8; 0x11_0000];
    for (cp, v) in values.iter_mut().enumerate() {
        if let Some(c) = char::from_u32(cp as u32) {
            *v = class_of(c);
        }
    }
    // The probes' own characters must come out as the classes they stand for.
    let expect = [
        ('\u{1100}', "L"),
        ('\u{1161}', "V"),
        ('\u{11A8}', "T"),
        ('\u{AC00}', "LV"),
        ('\u{AC01}', "LVT"),
        ('\u{1F44D}', "PICTOGRAPHIC"),
        ('\u{915}', "CONSONANT"),
        ('\u{600}', "PREPEND"),
        ('\u{1F1E6}', "RI"),
        ('\u{308}', "EXTEND"),
        ('\u{903}', "SPACING_MARK"),
        ('a', "OTHER"),
    ];
    for (c, name) in expect {
        if values[c as usize] & 31 != class_index(name) {
            return Err(format!("probe character U+{:04X} is not {name}", c as u32));
        }
    }
    if values[0x94D] >> 6 != 2 {
        return Err("U+094D is not InCB=Linker".into());
    }
    // Hangul syllables are computed by the core (LV when (cp − 0xAC00) % 28 == 0, else
    // LVT): checked here, then left out of the table, whose blocks they would fill.
    for cp in 0xAC00..=0xD7A3u32 {
        let name = if (cp - 0xAC00) % 28 == 0 { "LV" } else { "LVT" };
        if values[cp as usize] != class_index(name) {
            return Err(format!("U+{cp:04X} is not {name}"));
        }
        values[cp as usize] = 0;
    }
    // Past the table: a few ranges (the tags and variation selectors of plane 14).
    let mut high: Vec<(u32, u32, u8)> = Vec::new();
    for cp in HIGH_START..0x11_0000u32 {
        let v = values[cp as usize];
        if v == 0 {
            continue;
        }
        match high.last_mut() {
            Some(r) if r.1 + 1 == cp && r.2 == v => r.1 = cp,
            _ => high.push((cp, cp, v)),
        }
        values[cp as usize] = 0;
    }
    let (limit, index, blocks) = crate::unicode_norm::two_level(&values)?;
    let mut w = String::new();
    let _ = writeln!(
        w,
        "//! Generated by `cargo xtask gen-unicode` (xtask/src/grapheme.rs) from the behaviour of \
         `unicode-segmentation` 1.12.0. Do not edit.\n"
    );
    let _ = writeln!(w, "/// Bits of a class byte that hold the class.");
    let _ = writeln!(w, "pub(crate) const CLASS_MASK: u8 = 31;");
    for (i, (name, what)) in CLASSES.iter().enumerate() {
        let _ = writeln!(w, "/// Class: {what}.");
        let _ = writeln!(w, "pub(crate) const GB_{name}: u8 = {i};");
    }
    for (name, v) in INCB {
        let _ = writeln!(w, "/// Indic_Conjunct_Break value (class byte >> 6).");
        let _ = writeln!(w, "pub(crate) const {name}: u8 = {v};");
    }
    let _ = writeln!(
        w,
        "\n/// Code points from U+{HIGH_START:X} on with a class byte other than 0: sorted, \
         inclusive ranges (first, last, class byte)."
    );
    let _ = writeln!(
        w,
        "pub(crate) static GRAPHEME_HIGH: [(u32, u32, u8); {}] = [",
        high.len()
    );
    for (a, b, v) in &high {
        let _ = writeln!(w, "    (0x{a:X}, 0x{b:X}, {v}),");
    }
    let _ = writeln!(w, "];");
    crate::unicode_norm::emit_two_level(&mut w, "GRAPHEME", "the class", limit, &index, &blocks);
    crate::unicode_norm::rustfmt(&w)
}
