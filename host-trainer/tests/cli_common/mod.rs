//! Helpers for the CLI tests: run the built binary, and GPT-2 models imported from the
//! committed fixtures (`tests/fixtures/models`), so the tests need no `../shared`.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The `host-trainer` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_host-trainer"))
}

/// Run with `args` and `stdin`; returns the output.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    // Feed stdin from a thread so a large input cannot deadlock against a full stdout pipe.
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    output
}

/// Run and require success; returns stdout.
pub fn ok(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = run(args, stdin);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Run and require failure with an empty stdout; returns stderr.
pub fn fails(args: &[&str], stdin: &[u8]) -> String {
    let out = run(args, stdin);
    assert!(!out.status.success(), "{args:?} unexpectedly succeeded");
    assert!(
        out.stdout.is_empty(),
        "{args:?} wrote to stdout on failure: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}

/// `tests/fixtures/models/<name>` in the repository.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/models")
        .join(name)
}

/// A scratch directory unique to this test process.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("picobpe-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// GPT-2 imported from the tiktoken rank file through the CLI (once per test binary).
pub fn gpt2_tiktoken() -> &'static str {
    static MODEL: OnceLock<PathBuf> = OnceLock::new();
    path_str(MODEL.get_or_init(|| {
        let out = scratch().join("gpt2-tiktoken.model");
        ok(
            &[
                "import",
                "--tiktoken",
                path_str(&fixture("gpt2.tiktoken")),
                "--pattern",
                "gpt2",
                "--special",
                "<|endoftext|>=50256",
                "--out",
                path_str(&out),
            ],
            b"",
        );
        out
    }))
}

/// GPT-2 imported from HF vocab.json + merges.txt through the CLI (once per test binary).
pub fn gpt2_hf() -> &'static str {
    static MODEL: OnceLock<PathBuf> = OnceLock::new();
    path_str(MODEL.get_or_init(|| {
        let out = scratch().join("gpt2-hf.model");
        ok(
            &[
                "import",
                "--vocab",
                path_str(&fixture("gpt2_vocab.json")),
                "--merges",
                path_str(&fixture("gpt2_merges.txt")),
                "--special",
                "<|endoftext|>",
                "--out",
                path_str(&out),
            ],
            b"",
        );
        out
    }))
}
