//! The C API as C sees it: the committed header is what cbindgen makes of `src/lib.rs`, and a
//! C program compiled with the system `cc` against the static library gives tiktoken's ids for
//! every gpt2 reference vector, one-shot, resumed, cached and streamed (`tests/conformance.c`
//! says what it checks).

use std::path::{Path, PathBuf};
use std::process::Command;

use picobpe_tests::reference;
use picobpe_tests::vectors::{self, Encoding, Set};

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The header cbindgen generates now.
fn generated_header() -> String {
    let config = cbindgen::Config::from_file(manifest().join("cbindgen.toml")).expect("config");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(manifest())
        .with_config(config)
        .generate()
        .expect("cbindgen")
        .write(&mut out);
    String::from_utf8(out).expect("UTF-8 header")
}

/// `include/picobpe.h` is cbindgen's output for the current source (`PICOBPE_UPDATE_HEADER=1`
/// rewrites it).
#[test]
fn header_is_current() {
    let path = manifest().join("include/picobpe.h");
    let now = generated_header();
    if std::env::var_os("PICOBPE_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &now).expect("write header");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == now,
        "{} is stale: run `PICOBPE_UPDATE_HEADER=1 cargo test -p picobpe-capi --test c_api`",
        path.display()
    );
}

/// The static library cargo built for this test run (`target/<profile>/libpicobpe_capi.a`).
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    // Cargo leaves it in `deps/` with a hash; the newest one is this build's.
    let deps = profile_dir.join("deps");
    std::fs::read_dir(&deps)
        .expect("target/<profile>/deps")
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("libpicobpe_capi-") && name.ends_with(".a")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .unwrap_or_else(|| panic!("no libpicobpe_capi-*.a in {}", deps.display()))
}

/// Write the gpt2 vectors (every set whose specials the baked model has) in the format
/// `conformance.c` reads; returns the number of cases. After each case's ids come a bound on
/// its longest piece and whether the bound is exact (the reference regex's longest piece, 1;
/// the input length when the input is not UTF-8, 0), which say whether the C API's stream
/// encoder must take the case or must refuse it.
fn write_vectors(path: &Path) -> usize {
    let mut bytes = Vec::new();
    let mut cases = 0;
    let u32le = |bytes: &mut Vec<u8>, v: usize| bytes.extend_from_slice(&(v as u32).to_le_bytes());
    for set in [Set::Fixtures, Set::Corpus, Set::Random, Set::InvalidUtf8] {
        for case in vectors::load(Encoding::Gpt2, set).cases {
            u32le(&mut bytes, case.input.len());
            bytes.extend_from_slice(&case.input);
            for ids in [&case.all, &case.ordinary] {
                u32le(&mut bytes, ids.len());
                for &id in ids {
                    bytes.extend_from_slice(&id.to_le_bytes());
                }
            }
            let longest = reference::longest_piece(Encoding::Gpt2, &case.input);
            u32le(&mut bytes, longest.unwrap_or(case.input.len()));
            u32le(&mut bytes, usize::from(longest.is_some()));
            cases += 1;
        }
    }
    std::fs::write(path, bytes).expect("write vectors");
    cases
}

#[test]
fn c_program_gives_tiktoken_ids() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let vectors = dir.join("gpt2.vectors");
    let cases = write_vectors(&vectors);
    let exe = dir.join("conformance");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let status = Command::new(&cc)
        .args(["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(manifest().join("include"))
        .arg(manifest().join("tests/conformance.c"))
        .arg(static_library())
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("running `{cc}` (install a C compiler, e.g. gcc): {e}"));
    assert!(status.success(), "compiling conformance.c failed");
    let out = Command::new(&exe).arg(&vectors).output().expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with(&format!("{cases} cases, 0 failures")),
        "{stdout}"
    );
    println!("{stdout}");
}
