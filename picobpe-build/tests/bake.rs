//! Bake step: generated source, error reporting, and (compile test) baked tables that encode
//! exactly like the host-built tables of the same model.

use std::path::{Path, PathBuf};
use std::process::Command;

use picobpe::{Specials, Tokenizer};
use picobpe_build::{Bake, BakeError, BakedSizes, PieceTable};
use picobpe_model::{Model, ModelError, PatternKind, TableData};

/// A fresh, empty temporary directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picobpe-build-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Bytes as ids 0..=255 (in reverse byte order, so byte ids are not the identity), then
/// merges "th", "he", "the", "t"+"he"-unreachable "abc", and a special `<|end|>`.
///
/// `holes` unused ids are inserted before the merged tokens (a large value forces wide
/// pair keys); `reverse_merges` lists merges out of id order (forces a rank table).
fn model(whole_piece: bool, holes: usize, reverse_merges: bool) -> Model {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).rev().map(|b| vec![b]).collect();
    tokens.extend(std::iter::repeat_n(Vec::new(), holes));
    let id = |tokens: &Vec<Vec<u8>>, t: &[u8]| tokens.iter().position(|x| x == t).unwrap() as u32;
    let mut merges = Vec::new();
    for (l, r) in [
        (&b"t"[..], &b"h"[..]),
        (b"h", b"e"),
        (b"th", b"e"),
        (b" ", b"the"),
        (b"a", b"b"),
        (b"b", b"c"),
        (b"a", b"bc"),
    ] {
        let (li, ri) = (id(&tokens, l), id(&tokens, r));
        tokens.push([l, r].concat());
        merges.push((li, ri));
    }
    if reverse_merges {
        merges.reverse();
    }
    tokens.push(b"<|end|>".to_vec());
    let special = tokens.len() as u32 - 1;
    Model {
        pattern: PatternKind::Gpt2,
        tokens,
        merges,
        specials: vec![("<|end|>".to_owned(), special)],
        whole_piece,
        normalizer: None,
        strips: Vec::new(),
        splits: Vec::new(),
        prefix_space: false,
        end_of_word_suffix: Vec::new(),
        steps: Default::default(),
        empty_tokens: Vec::new(),
    }
}

/// `m` with CLIP's end-of-word suffix `</w>`: every byte followed by it, and the merges
/// `th` + `e</w>` and ` ` + `the</w>`.
fn with_suffix(mut m: Model) -> Model {
    let first = m.tokens.len() as u32;
    m.tokens
        .extend((0..=255u8).map(|b| [&[b][..], b"</w>"].concat()));
    let id = |tokens: &Vec<Vec<u8>>, t: &[u8]| tokens.iter().position(|x| x == t).unwrap() as u32;
    let th = id(&m.tokens, b"th");
    m.tokens.push(b"the</w>".to_vec());
    m.merges.push((th, first + u32::from(b'e')));
    let space = id(&m.tokens, b" ");
    m.merges.push((space, m.tokens.len() as u32 - 1));
    m.tokens.push(b" the</w>".to_vec());
    m.end_of_word_suffix = b"</w>".to_vec();
    m
}

fn bake(dir: &Path, model: &Model, pieces: PieceTable) -> picobpe_build::Baked {
    let path = dir.join("test.model");
    model.write(&path).unwrap();
    Bake::new(&path)
        .pieces(pieces)
        .out_dir(dir)
        .cargo_directives(false)
        .run()
        .unwrap()
}

#[test]
fn generated_source_defines_the_tables() {
    let dir = temp_dir("source");
    let m = model(false, 0, false);
    let baked = bake(&dir, &m, PieceTable::Full);
    let source = std::fs::read_to_string(&baked.source).unwrap();
    for expected in [
        "pub static TABLES: ::picobpe::Tables<'static> = ::picobpe::Tables {",
        "static PICOBPE_PAIR_ENTRIES: [u64; 7] = [",
        "static PICOBPE_PIECE_IDS: [u32; 262] = [",
        "static PICOBPE_PIECE_KEYS: [u64; 0] = [",
        "entries: &PICOBPE_PAIR_ENTRIES,",
        "pieces: ::picobpe::PieceMap { index: ::picobpe::PtrIndex {",
        "pattern: ::picobpe::Pattern::Gpt2,",
        "static PICOBPE_RANKS: [u32; 0] = [",
        "::picobpe::SpecialToken { text: \"<|end|>\", id: 263, strip: 0 },",
        "static PICOBPE_TOKEN_OFFSETS: [u32; 265] = [",
    ] {
        assert!(source.contains(expected), "missing {expected:?}");
    }
    let data = TableData::new(&m, PieceTable::Full).unwrap();
    assert_eq!(
        std::fs::read(&baked.token_bytes).unwrap(),
        *data.token_bytes
    );
    // Baked without the whole-piece keys by default: 8 bytes less per entry.
    let BakedSizes::BytePair(sizes) = baked.sizes else {
        panic!("a byte-level model bakes byte-level tables");
    };
    assert_eq!(sizes.pieces + 8 * 262, data.sizes().pieces);
    assert_eq!(sizes, data.clone().without_piece_keys().sizes());

    let keyed = Bake::new(dir.join("test.model"))
        .piece_keys(true)
        .module_name("keyed")
        .out_dir(&dir)
        .cargo_directives(false)
        .run()
        .unwrap();
    assert_eq!(keyed.sizes, BakedSizes::BytePair(data.sizes()));
    let source = std::fs::read_to_string(&keyed.source).unwrap();
    assert!(source.contains("static PICOBPE_PIECE_KEYS: [u64; 262] = ["));
    // Pair semantics: "abc" is unreachable ("ab" merges first), so it is not a whole piece.
    assert_eq!(data.pieces.len(), 256 + 6);

    let wide = bake(&dir, &model(false, 70_000, true), PieceTable::Minimal);
    let source = std::fs::read_to_string(&wide.source).unwrap();
    assert!(source.contains("static PICOBPE_PAIR_ENTRIES: [u64; 7] = ["));
    assert!(source.contains("static PICOBPE_RANKS: [u32; 70264] = ["));
    assert!(source.contains("static PICOBPE_PIECE_IDS: [u32; 0] = ["));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_name_the_problem() {
    let dir = temp_dir("errors");
    let missing = dir.join("missing.model");
    let err = Bake::new(&missing)
        .out_dir(&dir)
        .cargo_directives(false)
        .run()
        .unwrap_err();
    assert!(matches!(
        err,
        BakeError::Model {
            source: ModelError::Io { .. },
            ..
        }
    ));
    assert!(err.to_string().contains("missing.model"), "{err}");

    let corrupt = dir.join("corrupt.model");
    let mut bytes = model(true, 0, false).to_bytes().unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&corrupt, bytes).unwrap();
    let err = Bake::new(&corrupt)
        .out_dir(&dir)
        .cargo_directives(false)
        .run()
        .unwrap_err();
    assert!(matches!(
        err,
        BakeError::Model {
            source: ModelError::ChecksumMismatch { .. },
            ..
        }
    ));
    assert!(
        err.to_string()
            .contains("corrupt.model: model file is corrupt"),
        "{err}"
    );

    let err = Bake::new(&corrupt)
        .module_name("../escape")
        .out_dir(&dir)
        .cargo_directives(false)
        .run()
        .unwrap_err();
    assert!(matches!(err, BakeError::BadModuleName(_)));

    if std::env::var_os("OUT_DIR").is_none() {
        let err = Bake::new(&corrupt)
            .cargo_directives(false)
            .run()
            .unwrap_err();
        assert!(matches!(err, BakeError::NoOutDir));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `picobpe` rlibs next to this test binary (any of them serves the compile test; the
/// first that compiles is used).
fn picobpe_rlibs() -> (PathBuf, Vec<PathBuf>) {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_owned();
    let mut rlibs: Vec<PathBuf> = std::fs::read_dir(&deps)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("libpicobpe-") && name.ends_with(".rlib")
        })
        .collect();
    // Newest first: most likely the one this test was built with.
    rlibs.sort_by_key(|p| std::cmp::Reverse(p.metadata().and_then(|m| m.modified()).ok()));
    (deps, rlibs)
}

/// Compile `source` (defining `TABLES`) into a program that encodes its stdin and prints the
/// ids; return the program.
fn compile_baked(dir: &Path, source: &Path) -> PathBuf {
    let main = dir.join("main.rs");
    std::fs::write(
        &main,
        format!(
            "mod baked {{ include!({:?}); }}\n\
             use std::io::Read;\n\
             fn main() {{\n\
                 let mut text = Vec::new();\n\
                 std::io::stdin().read_to_end(&mut text).unwrap();\n\
                 let t = picobpe::Tokenizer::new(&baked::TABLES);\n\
                 let mut out = vec![0u32; text.len() + 1];\n\
                 let n = t.encode(&text, &mut out, picobpe::Specials::All).unwrap();\n\
                 if baked::TABLES.word_end_ids.is_empty() {{\n\
                     let mut back = vec![0u8; text.len()];\n\
                     assert_eq!(t.decode(&out[..n], &mut back), Ok(text.len()));\n\
                     assert_eq!(back, text);\n\
                 }}\n\
                 println!(\"{{:?}}\", &out[..n]);\n\
             }}\n",
            source.display().to_string()
        ),
    )
    .unwrap();
    compile(dir, &main, "baked-encode")
}

/// Compile the program `main` against the `picobpe` rlib next to this test into `dir/name`.
fn compile(dir: &Path, main: &Path, name: &str) -> PathBuf {
    let exe = dir.join(name);
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let (deps, rlibs) = picobpe_rlibs();
    assert!(
        !rlibs.is_empty(),
        "no libpicobpe-*.rlib in {}",
        deps.display()
    );
    let mut errors = String::new();
    for rlib in &rlibs {
        let output = Command::new(&rustc)
            .args(["--edition", "2021", "-O", "--crate-type", "bin", "-o"])
            .arg(&exe)
            .arg(main)
            .arg("--extern")
            .arg(format!("picobpe={}", rlib.display()))
            .arg("-L")
            .arg(format!("dependency={}", deps.display()))
            .output()
            .unwrap();
        if output.status.success() {
            return exe;
        }
        errors.push_str(&String::from_utf8_lossy(&output.stderr));
    }
    panic!("baked tables did not compile:\n{errors}");
}

fn run(exe: &Path, input: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new(exe)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

#[test]
fn baked_tables_compile_and_encode_like_host_tables() {
    let input = "the then abc abcabc <|end|>the\u{1F30D} ab<|end|>".as_bytes();
    let cases = [
        ("pair", model(false, 0, false), PieceTable::Full),
        ("tiktoken", model(true, 0, false), PieceTable::Minimal),
        ("wide-ranked", model(false, 70_000, true), PieceTable::Full),
        (
            "suffix",
            with_suffix(model(false, 0, false)),
            PieceTable::Full,
        ),
    ];
    for (name, m, pieces) in cases {
        let dir = temp_dir(&format!("compile-{name}"));
        let baked = bake(&dir, &m, pieces);
        let exe = compile_baked(&dir, &baked.source);

        let tables = TableData::new(&m, pieces).unwrap().to_tables();
        let t = Tokenizer::new(tables);
        let mut out = vec![0u32; input.len()];
        let n = t.encode(input, &mut out, Specials::All).unwrap();
        let expected = format!("{:?}", &out[..n]);
        if name == "suffix" {
            // "the" ends a word: one suffixed token (twice), where "then" is not.
            let the = m.tokens.iter().position(|t| t == b"the</w>").unwrap() as u32;
            assert_eq!(
                out[..n].iter().filter(|&&id| id == the).count(),
                2,
                "{expected}"
            );
        }
        assert_eq!(run(&exe, input), expected, "{name}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Bake the committed SentencePiece models, compile a program over the baked tables, and check
/// its ids against the `sentencepiece` library's reference vectors (every set; the real
/// Mistral tokenizer on the edge cases and fixtures): the baked tables give the reference's
/// ids, not just the host tables' ids.
#[test]
fn baked_sentencepiece_tables_match_sentencepiece() {
    use picobpe_tests::sp;
    let all = [
        "sp_edge",
        "fixtures",
        "corpus",
        "random",
        "double_special",
        "invalid_utf8",
    ];
    let proto = sp::SpSource::ModelProto;
    let json = sp::SpSource::TokenizerJson;
    // `tokenizer.json` files trained by `tokenizers`: pre-tokenizer steps before the
    // `Metaspace` or without one (the quick tour's BPE), and `Lowercase` after `NFKC` (their
    // ids are `tokenizers`').
    let made = [
        "split_edge",
        "fixtures",
        "invalid_utf8",
        "steps_edge",
        "nfkc_edge",
    ];
    for (name, source, sets) in [
        ("sp512", proto, &all[..]),
        ("sp4096", proto, &all[..]),
        ("sp4096-unk", proto, &all[..]),
        ("mistral-v1", proto, &all[..2]),
        ("ms-bpe-wsplit-punct-digits", json, &made[..3]),
        ("ms-unigram-nfkc-lower", json, &made[1..]),
        ("ms-bpe-quicktour", json, &made[..3]),
    ] {
        let dir = temp_dir(&format!("sp-{name}"));
        let model_path = dir.join(format!("{name}.model"));
        sp::model(name, source).write(&model_path).unwrap();
        let baked = Bake::new(&model_path)
            .out_dir(&dir)
            .cargo_directives(false)
            .run()
            .unwrap();
        assert!(matches!(baked.sizes, BakedSizes::SentencePiece(_)));
        let exe = compile_baked_sp(&dir, &baked.source);
        let mut cases = Vec::new();
        for set in sets {
            cases.extend(sp::load(name, set));
        }
        // Records: u32 little-endian length, then the bytes; one line of ids out per record.
        let mut input = Vec::new();
        for case in &cases {
            input.extend_from_slice(&(case.input.len() as u32).to_le_bytes());
            input.extend_from_slice(&case.input);
        }
        let output = run(&exe, &input);
        let lines: Vec<&str> = output.lines().collect();
        assert_eq!(lines.len(), cases.len(), "{name}");
        for (case, line) in cases.iter().zip(lines) {
            let got: Vec<u32> = line
                .strip_prefix("ids:")
                .expect("an ids line")
                .split_whitespace()
                .map(|s| s.parse().unwrap())
                .collect();
            let want = match source {
                sp::SpSource::TokenizerJson => case.hf.as_ref().unwrap_or(&case.ids),
                _ => &case.ids,
            };
            assert_eq!(&got, want, "{name}: {}", case.name);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Compile `source` (defining SentencePiece `TABLES`) into a program that encodes
/// length-prefixed records from stdin, one line of ids per record.
fn compile_baked_sp(dir: &Path, source: &Path) -> PathBuf {
    let main = dir.join("main.rs");
    std::fs::write(
        &main,
        format!(
            "mod baked {{ include!({:?}); }}\n\
             use std::io::Read;\n\
             fn main() {{\n\
                 let mut input = Vec::new();\n\
                 std::io::stdin().read_to_end(&mut input).unwrap();\n\
                 let t = picobpe::SpTokenizer::new(&baked::TABLES);\n\
                 let mut rest = &input[..];\n\
                 while rest.len() >= 4 {{\n\
                     let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;\n\
                     let text = &rest[4..4 + len];\n\
                     rest = &rest[4 + len..];\n\
                     let mut out = vec![0u32; 16 * text.len() + (1 << 17)];\n\
                     let n = t.encode(text, &mut out).unwrap();\n\
                     let ids: Vec<String> = out[..n].iter().map(|i| i.to_string()).collect();\n\
                     println!(\"ids: {{}}\", ids.join(\" \"));\n\
                 }}\n\
             }}\n",
            source.display().to_string()
        ),
    )
    .unwrap();
    compile(dir, &main, "baked-sp-encode")
}
