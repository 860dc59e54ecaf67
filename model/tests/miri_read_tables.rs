//! `read_tables` on small model files, intact and damaged, small enough for Miri
//! (`cargo xtask miri`, which runs it with `-Zmiri-disable-isolation` to reach the file
//! system). Miri cannot map files, so there `read_tables` reads them (its copy path, as on a
//! file system without `mmap`); elsewhere it maps them.
//!
//! Each family's model is written as a file without tables (decoded and laid out on load) and,
//! where the format has one, with its prebuilt tables (version 3: the arrays are borrowed from
//! the file's bytes, or copied when they are not aligned in memory). The loaded tables must
//! encode like tables built in memory from the same model. Damaged copies — truncated, with a
//! trailing byte, with a flipped byte, and with flipped table bytes under a recomputed
//! checksum — must be refused or load tables that encode and decode without undefined
//! behaviour.
//!
//! `read_tables` leaks the tables it returns (by design: they live as long as the process), so
//! `cargo xtask miri` runs this file with `-Zmiri-ignore-leaks` too.

use std::path::{Path, PathBuf};

use picobpe::{Specials, Tokenize};
use picobpe_model::format::HEADER_LEN;
use picobpe_model::sentencepiece::{SpKind, SpPiece, SpSections};
use picobpe_model::{
    import, read_tables, LiveTables, Model, ModelError, PatternKind, PieceTable, SpModel,
    SpTableData, TableData, WpModel, WpTableData,
};

const TEXT: &[u8] = b"the theme, then other themes: th\xc3\xa9 \xff!";

/// A directory of its own under the system's temporary directory.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picobpe-miri-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// A byte-level model: the 256 bytes and a few merges, gpt2's pattern, one special token.
fn byte_level() -> Model {
    use base64::Engine;
    let engine = base64::engine::general_purpose::STANDARD;
    let mut ranks = String::new();
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.extend(["th", "he", "the", " t", " the", "me", "en"].map(|s| s.as_bytes().to_vec()));
    for (rank, t) in tokens.iter().enumerate() {
        ranks.push_str(&format!("{} {rank}\n", engine.encode(t)));
    }
    let specials = [("<|end|>".to_owned(), tokens.len() as u32)];
    import::tiktoken(ranks.as_bytes(), PatternKind::Gpt2, &specials).expect("a valid rank file")
}

/// A SentencePiece BPE model without byte fallback.
fn sentencepiece() -> SpModel {
    let mut pieces = vec![
        ("<unk>", SpKind::Unknown, 0.0),
        ("<s>", SpKind::Control, 0.0),
        ("</s>", SpKind::Control, 0.0),
    ];
    for (i, p) in ["\u{2581}", "t", "h", "e", "m", "n", "o", "r", "s", ",", ":"]
        .into_iter()
        .enumerate()
    {
        pieces.push((p, SpKind::Normal, -10.0 - i as f32));
    }
    for (i, p) in ["th", "he", "\u{2581}the", "\u{2581}th", "me", "en", "er"]
        .into_iter()
        .enumerate()
    {
        pieces.push((p, SpKind::Normal, -1.0 - i as f32));
    }
    SpModel {
        pieces: pieces
            .into_iter()
            .map(|(piece, kind, score)| SpPiece {
                piece: piece.to_owned(),
                score: Some(score),
                kind,
            })
            .collect(),
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        byte_fallback: false,
        unk_surface: " \u{2047} ".to_owned(),
        sections: SpSections::Inline,
        unigram: false,
        f64_scores: Vec::new(),
        charsmap: Vec::new(),
        unk_in_text: false,
        unk_per_char: false,
        normalizer: None,
        precompiled: false,
        collapse_spaces: false,
        strip_sections: false,
        strips: Vec::new(),
        char_steps: Default::default(),
        pre_split: None,
        joins_pieces: false,
    }
}

/// A WordPiece model.
fn wordpiece() -> WpModel {
    WpModel {
        vocab: [
            "[UNK]", "[CLS]", "the", "##me", "##n", "th", "##e", "other", ",", ":", "!",
        ]
        .map(str::to_owned)
        .to_vec(),
        unk_id: 0,
        prefix: "##".to_owned(),
        max_chars_per_word: 100,
        clean_text: true,
        handle_chinese_chars: true,
        strip_accents: true,
        lowercase: true,
        cleanup: true,
        specials: vec![("[CLS]".to_owned(), 1)],
        normalizer: None,
        char_steps: Default::default(),
        split: Default::default(),
        strips: Vec::new(),
    }
}

/// The ids of `TEXT` and the text of those ids, with whatever tables `read_tables` loaded,
/// through the families' one contract.
fn run(tables: LiveTables) -> (Vec<u32>, Vec<u8>) {
    let tok = tables.tokenizer();
    let mut ids = vec![0u32; 4096];
    let mut text = vec![0u8; 4096];
    let n = Tokenize::encode_from(&tok, TEXT, 0, &mut ids, Specials::All, &mut []).unwrap_or(0);
    let k = Tokenize::decode_at(&tok, &ids[..n], 0, &mut text).unwrap_or(0);
    (ids[..n].to_vec(), text[..k].to_vec())
}

/// Write `bytes` to `path` and load it.
fn load(path: &Path, bytes: &[u8]) -> Result<LiveTables, ModelError> {
    std::fs::write(path, bytes).expect("write the model file");
    read_tables(path)
}

/// Load `file` intact (its tables must give `want`) and damaged.
fn check(dir: &Path, name: &str, file: &[u8], want: &(Vec<u32>, Vec<u8>)) {
    check_intact(dir, name, file, want);
    check_damaged(dir, name, file);
}

/// Load `file` intact: its tables must give `want`.
fn check_intact(dir: &Path, name: &str, file: &[u8], want: &(Vec<u32>, Vec<u8>)) {
    let path = dir.join(name);
    let tables = load(&path, file).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(&run(tables), want, "{name}");
    let _ = std::fs::remove_file(&path);
}

/// Load damaged copies of `file`: refused, or tables that run.
fn check_damaged(dir: &Path, name: &str, file: &[u8]) {
    let path = dir.join(name);
    // Truncated anywhere in the header, and in the payload.
    for len in [
        0,
        3,
        8,
        12,
        HEADER_LEN - 1,
        HEADER_LEN,
        file.len() / 2,
        file.len() - 1,
    ] {
        assert!(load(&path, &file[..len]).is_err(), "{name} cut to {len}");
    }
    let mut longer = file.to_vec();
    longer.push(0);
    assert!(matches!(
        load(&path, &longer),
        Err(ModelError::TrailingBytes { count: 1 })
    ));
    // A flipped payload byte: the checksum says no.
    let mut flipped = file.to_vec();
    flipped[file.len() - 5] ^= 0x10;
    assert!(matches!(
        load(&path, &flipped),
        Err(ModelError::ChecksumMismatch { .. })
    ));
    // A flipped byte anywhere after the header, the checksum made to match: refused, or
    // tables that run without undefined behaviour (the result is not checked).
    let positions = 12;
    let step = (file.len() - HEADER_LEN).div_ceil(positions).max(1);
    for at in (HEADER_LEN..file.len()).step_by(step) {
        for flip in [0x01u8, 0xFF] {
            let mut damaged = file.to_vec();
            damaged[at] ^= flip;
            let crc = crc32fast::hash(&damaged[HEADER_LEN..]);
            damaged[HEADER_LEN - 4..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
            if let Ok(tables) = load(&path, &damaged) {
                let _ = run(tables);
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// Not under Miri: laying out a byte-level model's tables (an index over its 263 tokens, the
/// 64 Ki-entry byte-pair table, the trie) and checksumming its 300 KB file took Miri more than
/// five minutes. The SentencePiece files below take the same `read_tables` paths (the file's
/// frame, the copy, the tables borrowed or decoded and laid out).
#[test]
#[cfg_attr(miri, ignore = "minutes under Miri; see the comment")]
fn byte_level_files() {
    let dir = scratch_dir("bpe");
    let model = byte_level();
    // Laying out the 263 tokens' index takes Miri a while: once, for the reference; the file
    // without tables is loaded (laid out again) only intact.
    let tables = TableData::new(&model, PieceTable::Full)
        .expect("tables")
        .to_tables();
    let want = run(LiveTables::BytePair(tables));
    assert_eq!(want.1, TEXT, "byte-level decoding gives the text back");
    check_intact(
        &dir,
        "plain.model",
        &model.to_bytes().expect("bytes"),
        &want,
    );
    check(
        &dir,
        "tables.model",
        &model.to_bytes_with_tables().expect("bytes"),
        &want,
    );
    let _ = std::fs::remove_dir(&dir);
}

#[test]
fn sentencepiece_files() {
    let dir = scratch_dir("sp");
    let model = sentencepiece();
    let want = run(LiveTables::SentencePiece(
        SpTableData::new(&model).expect("tables").to_tables(),
    ));
    assert!(want.0.contains(&0), "unknown characters are <unk>");
    check(
        &dir,
        "plain.model",
        &model.to_bytes().expect("bytes"),
        &want,
    );
    check(
        &dir,
        "tables.model",
        &model.to_bytes_with_tables().expect("bytes"),
        &want,
    );
    let _ = std::fs::remove_dir(&dir);
}

#[test]
fn wordpiece_files() {
    let dir = scratch_dir("wp");
    let model = wordpiece();
    let want = run(LiveTables::WordPiece(
        WpTableData::new(&model).expect("tables").to_tables(),
    ));
    assert!(want.0.len() > 5);
    check(
        &dir,
        "plain.model",
        &model.to_bytes().expect("bytes"),
        &want,
    );
    let _ = std::fs::remove_dir(&dir);
}

#[test]
fn a_missing_file_is_an_io_error() {
    let dir = scratch_dir("missing");
    assert!(matches!(
        read_tables(dir.join("none.model")),
        Err(ModelError::Io { .. })
    ));
    let _ = std::fs::remove_dir(&dir);
}
