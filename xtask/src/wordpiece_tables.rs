//! `cargo xtask gen-wordpiece`: writes `core/src/wordpiece/unicode_tables.rs`, the character
//! data of the BERT normalizer and pre-tokenizer that WordPiece models use.
//!
//! The data comes from the crates Hugging Face `tokenizers` itself calls, so every scalar value
//! is classified exactly as the reference classifies it, whatever Unicode version each crate
//! carries: `unicode_categories` 0.1 (`is_other`, `is_punctuation`, `is_mark_nonspacing`) and
//! `unicode-normalization-alignments` 0.1.12 (NFD). The rules themselves are those of
//! `tokenizers` 0.22's `BertNormalizer` and `BertPreTokenizer`; the core applies them per
//! character:
//!
//! - `DROP`: removed by `clean_text` (`\0`, U+FFFD, and `is_other` = Cc, Cf, Co except
//!   `\t \n \r`).
//! - `SPACE`: `char::is_whitespace` (`clean_text` turns these into U+0020, and the
//!   pre-tokenizer splits on them and drops them).
//! - `PUNCT`: ASCII punctuation or `is_punctuation` (P*): a word of its own.
//! - `CJK`: the ranges `is_chinese_char` lists: `handle_chinese_chars` puts spaces around them.
//! - `MN`: `is_mark_nonspacing`: dropped by `strip_accents` (after NFD).
//!
//! And the classes of the other pre-tokenizers (`core/src/wordpiece/split.rs`), in runs of
//! their own (`CLASS_STARTS` / `CLASS_FLAGS`) so that BERT models link none of them:
//!
//! - `WORD`: `\w` as the `regex` crate reads it (Unicode `Alphabetic`, marks, `Nd`,
//!   connector punctuation, join controls): `Whitespace`'s `\w+|[^\w\s]+`.
//! - `NUMERIC`: `char::is_numeric` (`Nd`, `Nl`, `No`): `Digits`.
//!
//! Layout: `RUN_STARTS` / `RUN_FLAGS`, sorted runs of code points with equal flags (binary
//! search); `STRIP_FROM` (sorted) / `STRIP_TO` (`offset << 8 | len` into `STRIP_TEXT`): the
//! characters whose NFD, with nonspacing marks removed, is not the character itself and not
//! empty (the empty ones are the `MN` characters). Hangul syllables are left out: the core
//! decomposes them arithmetically, and the generator checks that this agrees with the crate.

use std::fmt::Write as _;
use std::path::PathBuf;

use unicode_categories::UnicodeCategories;
use unicode_normalization_alignments::UnicodeNormalization;

/// Flags of a code point, in output order (bit `i` is `FLAGS[i]`).
const FLAGS: [(&str, &str); 5] = [
    ("DROP", "removed by `clean_text`"),
    ("SPACE", "whitespace: a word boundary, dropped"),
    ("PUNCT", "punctuation: a word of its own"),
    (
        "CJK",
        "a CJK ideograph: `handle_chinese_chars` makes it a word of its own",
    ),
    ("MN", "a nonspacing mark: removed by `strip_accents`"),
];

/// Flags of the other pre-tokenizers' classes (bit `i` is `CLASS_FLAG_NAMES[i]`).
const CLASS_FLAG_NAMES: [(&str, &str); 2] = [
    (
        "WORD",
        "`\\w` (the `regex` crate's Unicode class): `Whitespace`'s word characters",
    ),
    ("NUMERIC", "`char::is_numeric`: `Digits`' characters"),
];

const N_CP: u32 = 0x11_0000;

/// `tokenizers`' `is_chinese_char`.
fn is_chinese_char(c: u32) -> bool {
    matches!(c,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

fn flags_of(c: char) -> u8 {
    let cp = c as u32;
    let control = !matches!(c, '\t' | '\n' | '\r') && c.is_other();
    let mut f = 0;
    if cp == 0 || cp == 0xFFFD || control {
        f |= 1;
    }
    if c.is_whitespace() {
        f |= 2;
    }
    if c.is_ascii_punctuation() || c.is_punctuation() {
        f |= 4;
    }
    if is_chinese_char(cp) {
        f |= 8;
    }
    if c.is_mark_nonspacing() {
        f |= 16;
    }
    f
}

/// NFD of `c` with nonspacing marks removed, as `BertNormalizer::do_strip_accents` does.
fn strip(c: char) -> String {
    c.to_string()
        .nfd()
        .map(|(ch, _)| ch)
        .filter(|ch| !ch.is_mark_nonspacing())
        .collect()
}

/// Arithmetic Hangul decomposition (Unicode 3.12), as the core does it.
fn hangul(cp: u32) -> Option<String> {
    let s = cp.checked_sub(0xAC00).filter(|&s| s < 11_172)?;
    let (l, v, t) = (0x1100 + s / 588, 0x1161 + (s % 588) / 28, s % 28);
    let mut out: String = [l, v].iter().filter_map(|&c| char::from_u32(c)).collect();
    if t != 0 {
        out.extend(char::from_u32(0x11A7 + t));
    }
    Some(out)
}

/// The code points of `\\w` as `regex-syntax` reads it: the class `tokenizers`' `Whitespace`
/// pre-tokenizer compiles with the `regex` crate.
fn word_class() -> Result<Vec<(u32, u32)>, String> {
    let hir = regex_syntax::Parser::new()
        .parse(r"\w")
        .map_err(|e| format!("\\w: {e}"))?;
    match hir.kind() {
        regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(c)) => Ok(c
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect()),
        other => Err(format!("\\w parsed as {other:?}")),
    }
}

/// The `CLASS_FLAGS` bits of `cp` (`WORD` 1, `NUMERIC` 2), given `\w`'s sorted ranges.
fn class_flags_of(cp: u32, word: &[(u32, u32)]) -> u8 {
    let i = word.partition_point(|&(_, end)| end < cp);
    let is_word = word.get(i).is_some_and(|&(start, _)| start <= cp);
    let numeric = char::from_u32(cp).is_some_and(char::is_numeric);
    u8::from(is_word) | u8::from(numeric) << 1
}

pub fn run(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => return Err("usage: cargo xtask gen-wordpiece [--check]".into()),
    };
    crate::unicode::write_or_check(&out_path(), &generate()?, check, "gen-wordpiece")
}

fn out_path() -> PathBuf {
    let xtask = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = xtask.parent().map(PathBuf::from).unwrap_or(xtask);
    root.join("core/src/wordpiece/unicode_tables.rs")
}

fn generate() -> Result<String, String> {
    // Runs of equal flags over all code points (surrogates get 0; the core never sees them).
    let mut starts: Vec<u32> = Vec::new();
    let mut run_flags: Vec<u8> = Vec::new();
    let mut strip_from: Vec<u32> = Vec::new();
    let mut strip_to: Vec<u32> = Vec::new();
    let mut strip_text: Vec<u8> = Vec::new();
    for cp in 0..N_CP {
        let (f, c) = match char::from_u32(cp) {
            Some(c) => (flags_of(c), Some(c)),
            None => (0, None),
        };
        if run_flags.last() != Some(&f) {
            starts.push(cp);
            run_flags.push(f);
        }
        let Some(c) = c else { continue };
        if f & 16 != 0 {
            if !strip(c).is_empty() {
                return Err(format!("U+{cp:04X} is Mn but strips to {:?}", strip(c)));
            }
            continue;
        }
        let s = strip(c);
        if let Some(h) = hangul(cp) {
            if s != h {
                return Err(format!("U+{cp:04X}: NFD {s:?}, arithmetic {h:?}"));
            }
            continue;
        }
        if s.chars().eq(std::iter::once(c)) {
            continue;
        }
        if s.len() > 255 || strip_text.len() >= 1 << 24 {
            return Err(format!("U+{cp:04X}: strip output too long"));
        }
        strip_from.push(cp);
        strip_to.push((strip_text.len() as u32) << 8 | s.len() as u32);
        strip_text.extend_from_slice(s.as_bytes());
    }

    // The other pre-tokenizers' classes (surrogates continue the run before them).
    let word = word_class()?;
    let (mut class_starts, mut class_flags): (Vec<u32>, Vec<u8>) = (Vec::new(), Vec::new());
    for cp in (0..N_CP).filter(|&cp| char::from_u32(cp).is_some()) {
        let f = class_flags_of(cp, &word);
        if class_flags.last() != Some(&f) {
            class_starts.push(cp);
            class_flags.push(f);
        }
    }

    let total = 5 * starts.len() + 8 * strip_from.len() + strip_text.len();
    let mut o = String::new();
    let w = &mut o;
    writeln!(
        w,
        "//! Character data of the BERT normalizer and pre-tokenizer."
    )
    .unwrap();
    writeln!(w, "//!").unwrap();
    writeln!(
        w,
        "//! @generated by `cargo xtask gen-wordpiece` (xtask/src/wordpiece_tables.rs) from"
    )
    .unwrap();
    writeln!(w, "//! unicode_categories 0.1 and unicode-normalization-alignments 0.1.12, the crates Hugging Face").unwrap();
    writeln!(w, "//! `tokenizers` uses. DO NOT EDIT. See the generator's module docs for the layout. Table bytes:").unwrap();
    writeln!(
        w,
        "//! runs {} + strip keys and values {} + strip text {} = {total}.",
        5 * starts.len(),
        8 * strip_from.len(),
        strip_text.len()
    )
    .unwrap();
    writeln!(w).unwrap();
    for (i, (name, doc)) in FLAGS.iter().enumerate() {
        writeln!(w, "/// Flag: {doc}.").unwrap();
        writeln!(w, "pub(crate) const {name}: u8 = 1 << {i};").unwrap();
    }
    writeln!(w).unwrap();
    writeln!(w, "/// First code point of each run of equal flags.").unwrap();
    writeln!(
        w,
        "pub(crate) static RUN_STARTS: [u32; {}] = [",
        starts.len()
    )
    .unwrap();
    emit(w, &starts, 10);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "/// Flags of each run.").unwrap();
    writeln!(
        w,
        "pub(crate) static RUN_FLAGS: [u8; {}] = [",
        run_flags.len()
    )
    .unwrap();
    emit(w, &run_flags, 24);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "/// Characters that `strip_accents` changes (and does not remove), sorted."
    )
    .unwrap();
    writeln!(
        w,
        "pub(crate) static STRIP_FROM: [u32; {}] = [",
        strip_from.len()
    )
    .unwrap();
    emit(w, &strip_from, 10);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "/// Per `STRIP_FROM` entry: `offset << 8 | len` of its replacement in `STRIP_TEXT`."
    )
    .unwrap();
    writeln!(
        w,
        "pub(crate) static STRIP_TO: [u32; {}] = [",
        strip_to.len()
    )
    .unwrap();
    emit(w, &strip_to, 10);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "/// The replacements, UTF-8.").unwrap();
    writeln!(
        w,
        "pub(crate) static STRIP_TEXT: [u8; {}] = [",
        strip_text.len()
    )
    .unwrap();
    emit(w, &strip_text, 20);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    for (i, (name, doc)) in CLASS_FLAG_NAMES.iter().enumerate() {
        writeln!(w, "/// Class flag: {doc}.").unwrap();
        writeln!(w, "pub(crate) const {name}: u8 = 1 << {i};").unwrap();
    }
    writeln!(w).unwrap();
    writeln!(
        w,
        "/// First code point of each run of equal class flags ({} bytes with the flags).",
        5 * class_starts.len()
    )
    .unwrap();
    writeln!(
        w,
        "pub(crate) static CLASS_STARTS: [u32; {}] = [",
        class_starts.len()
    )
    .unwrap();
    emit(w, &class_starts, 10);
    writeln!(w, "];").unwrap();
    writeln!(w).unwrap();
    writeln!(w, "/// Class flags of each run.").unwrap();
    writeln!(
        w,
        "pub(crate) static CLASS_FLAGS: [u8; {}] = [",
        class_flags.len()
    )
    .unwrap();
    emit(w, &class_flags, 24);
    writeln!(w, "];").unwrap();
    eprintln!(
        "gen-wordpiece: {} runs, {} strip entries, {} text bytes; {total} bytes; {} class runs",
        starts.len(),
        strip_from.len(),
        strip_text.len(),
        class_starts.len()
    );
    Ok(o)
}

fn emit<T: std::fmt::Display>(w: &mut String, data: &[T], per_line: usize) {
    for line in data.chunks(per_line) {
        w.push_str("   ");
        for v in line {
            write!(w, " {v},").unwrap();
        }
        w.push('\n');
    }
}
