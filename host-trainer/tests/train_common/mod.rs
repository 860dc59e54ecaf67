//! Helpers shared by the `train_*` integration tests: running the binary, temporary
//! directories, fixture paths, and parsers for the GPT-2 text formats written by `train`.
#![allow(dead_code)] // each test file uses a different subset

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The `host-trainer` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_host-trainer"))
}

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host-trainer is inside the workspace")
        .to_path_buf()
}

/// A committed fixture, e.g. `fixture("cs336/corpus.en")`.
pub fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures").join(rel)
}

/// `../shared/data` (or `$PICOBPE_SHARED_DATA`), when present.
pub fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("PICOBPE_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/data"));
    dir.is_dir().then_some(dir)
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Create `picobpe-<tag>-<pid>-<n>`.
    pub fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("picobpe-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    /// A path inside the directory.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `host-trainer train` with `args` (plus `--quiet`).
pub fn train(args: &[&std::ffi::OsStr]) -> Output {
    let mut cmd = bin();
    cmd.arg("train").arg("--quiet").args(args);
    cmd.output().expect("run host-trainer")
}

/// A committed text of `tests/fixtures/vectors/texts`.
pub fn texts(name: &str) -> PathBuf {
    fixture("vectors/texts").join(name)
}

/// Run `train --model-type model_type` with `args` and `--out out`.
pub fn train_as(model_type: &str, args: &[&str], out: &Path) -> Output {
    let mut all: Vec<&std::ffi::OsStr> = vec!["--model-type".as_ref(), model_type.as_ref()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    all.extend(["--out".as_ref(), out.as_os_str()]);
    train(&all)
}

/// [`train_as`] must fail with `message` on stderr and write nothing.
pub fn fails_as(model_type: &str, args: &[&str], out: &Path, message: &str) {
    let o = train_as(model_type, args, out);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
    assert!(!out.exists(), "{args:?} wrote {}", out.display());
}

/// Run `train` and panic with its stderr unless it succeeds.
pub fn train_ok(
    inputs: &[&Path],
    vocab_size: usize,
    specials: &[&str],
    out: &Path,
    extra: &[&str],
) {
    let mut cmd = bin();
    cmd.arg("train").arg("--quiet");
    for input in inputs {
        cmd.arg("--input").arg(input);
    }
    cmd.arg("--vocab-size").arg(vocab_size.to_string());
    for s in specials {
        cmd.arg("--special-token").arg(s);
    }
    cmd.arg("--out").arg(out).args(extra);
    let output = cmd.output().expect("run host-trainer");
    assert!(
        output.status.success(),
        "host-trainer train failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// GPT-2's byte-to-unicode table, written out from its definition (printable Latin-1 bytes map
/// to themselves, the other 68 bytes to U+0100.. in byte order), and its inverse.
pub fn unicode_to_byte() -> HashMap<char, u8> {
    let mut map = HashMap::new();
    let mut next = 0x100u32;
    for b in 0..=255u8 {
        let printable = (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || b >= 0xAE;
        let c = if printable {
            char::from(b)
        } else {
            next += 1;
            char::from_u32(next - 1).unwrap()
        };
        map.insert(c, b);
    }
    map
}

/// Decode a token in GPT-2 text form to bytes.
pub fn to_bytes(text: &str, table: &HashMap<char, u8>) -> Vec<u8> {
    text.chars()
        .map(|c| {
            *table
                .get(&c)
                .unwrap_or_else(|| panic!("{c:?} is not a GPT-2 byte char"))
        })
        .collect()
}

/// Parse `merges.txt` (GPT-2 text form, optional `#version` header) into byte pairs.
pub fn parse_merges(text: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let table = unicode_to_byte();
    text.lines()
        .filter(|l| !l.starts_with("#version"))
        .map(|line| {
            let (l, r) = line.split_once(' ').expect("merge line has a space");
            (to_bytes(l, &table), to_bytes(r, &table))
        })
        .collect()
}

/// Parse a flat JSON object `{"key": integer, ...}` (what `vocab.json` is) into pairs in file
/// order. Handles the JSON string escapes, including `\uXXXX` surrogate pairs.
pub fn parse_vocab_json(text: &str) -> Vec<(String, u64)> {
    let mut chars = text.chars().peekable();
    let mut out = Vec::new();
    let skip_ws = |chars: &mut std::iter::Peekable<std::str::Chars>| {
        while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            chars.next();
        }
    };
    skip_ws(&mut chars);
    assert_eq!(chars.next(), Some('{'));
    loop {
        skip_ws(&mut chars);
        match chars.next() {
            Some('}') => break,
            Some(',') => continue,
            Some('"') => {}
            other => panic!("unexpected {other:?} in vocab.json"),
        }
        let mut key = String::new();
        let mut pending_high: Option<u32> = None;
        loop {
            let c = chars.next().expect("unterminated string");
            match c {
                '"' => break,
                '\\' => match chars.next().expect("escape") {
                    'u' => {
                        let hex: String = (0..4).map(|_| chars.next().unwrap()).collect();
                        let unit = u32::from_str_radix(&hex, 16).expect("hex");
                        if (0xD800..0xDC00).contains(&unit) {
                            pending_high = Some(unit);
                        } else if (0xDC00..0xE000).contains(&unit) {
                            let high = pending_high.take().expect("low surrogate after high");
                            let c = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00);
                            key.push(char::from_u32(c).unwrap());
                        } else {
                            key.push(char::from_u32(unit).unwrap());
                        }
                    }
                    'n' => key.push('\n'),
                    'r' => key.push('\r'),
                    't' => key.push('\t'),
                    'b' => key.push('\u{8}'),
                    'f' => key.push('\u{c}'),
                    other => key.push(other), // \" \\ \/
                },
                c => key.push(c),
            }
        }
        skip_ws(&mut chars);
        assert_eq!(chars.next(), Some(':'));
        skip_ws(&mut chars);
        let mut num = String::new();
        while chars.peek().is_some_and(|c| c.is_ascii_digit()) {
            num.push(chars.next().unwrap());
        }
        out.push((key, num.parse().expect("integer id")));
    }
    out
}

/// Bytes of every vocabulary entry (`specials` are taken literally, the rest decoded from the
/// GPT-2 text form).
pub fn vocab_bytes(entries: &[(String, u64)], specials: &[&str]) -> Vec<Vec<u8>> {
    let table = unicode_to_byte();
    entries
        .iter()
        .map(|(k, _)| {
            if specials.contains(&k.as_str()) {
                k.as_bytes().to_vec()
            } else {
                to_bytes(k, &table)
            }
        })
        .collect()
}
