//! Version-3 model files (a model with its prebuilt host tables): they load through
//! `read_tables` to the same tables a build makes, older versions still load, and each kind of
//! damage has its own error — also when the checksum was recomputed over the damage.

mod common;

use std::path::PathBuf;

use common::small_model;

use picobpe_model::format::{HEADER_LEN, TABLES_VERSION};
use picobpe_model::{read_tables, AnyModel, LiveTables, Model, ModelError, PatternKind};
use picobpe_model::{PieceTable, TableData};

/// A file of `bytes` with a name no other call (in any test thread) uses.
fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("picobpe-v3-{}-{n}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn byte_pair(loaded: LiveTables) -> &'static picobpe::Tables<'static> {
    match loaded {
        LiveTables::BytePair(t) => t,
        other => panic!("loaded as another kind: {other:?}"),
    }
}

/// Every field of two live tables, compared as slices.
fn assert_same_tables(a: &picobpe::Tables<'_>, b: &picobpe::Tables<'_>) {
    assert_eq!(a.pattern, b.pattern);
    assert_eq!(a.token_bytes, b.token_bytes);
    assert_eq!(a.token_offsets, b.token_offsets);
    assert_eq!(a.byte_ids, b.byte_ids);
    assert_eq!(a.pairs.entries, b.pairs.entries);
    assert_eq!(a.pairs.index.seed, b.pairs.index.seed);
    assert_eq!(a.pairs.index.pilots, b.pairs.index.pilots);
    assert_eq!(a.pairs.index.remap, b.pairs.index.remap);
    assert_eq!(a.ranks, b.ranks);
    assert_eq!(a.pieces.ids, b.pieces.ids);
    assert_eq!(a.pieces.keys, b.pieces.keys);
    assert_eq!(a.pieces.index.pilots, b.pieces.index.pilots);
    assert_eq!(a.pieces.index.remap, b.pieces.index.remap);
    assert_eq!(a.specials, b.specials);
    assert_eq!(a.byte_pairs, b.byte_pairs);
    assert_eq!(a.trie.edges, b.trie.edges);
    assert_eq!(a.trie.next_prefix, b.trie.next_prefix);
    assert_eq!(a.trie.splits, b.trie.splits);
    assert_eq!(a.trie.pair_filter, b.trie.pair_filter);
    assert_eq!(a.trie.starts, b.trie.starts);
    assert_eq!(a.trie.chars, b.trie.chars);
}

/// The committed gpt2 rank file, imported.
fn gpt2() -> Model {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/models");
    let ranks = std::fs::read(dir.join("gpt2.tiktoken")).unwrap();
    let specials = vec![("<|endoftext|>".to_owned(), 50256)];
    picobpe_model::import::tiktoken(&ranks, PatternKind::Gpt2, &specials).unwrap()
}

#[test]
fn written_tables_load_as_built_and_older_files_still_load() {
    for (name, model) in [("small", small_model()), ("gpt2", gpt2())] {
        let built = TableData::new(&model, PieceTable::Full)
            .unwrap()
            .to_tables();
        let v3 = model.to_bytes_with_tables().unwrap();
        assert_eq!(u16::from_le_bytes([v3[8], v3[9]]), TABLES_VERSION);
        let path = temp_file(&format!("{name}.model"), &v3);
        assert_same_tables(byte_pair(read_tables(&path).unwrap()), built);
        // The model beside the tables reads back too.
        assert_eq!(Model::read(&path).unwrap(), model);
        // Model::write writes exactly these bytes.
        model.write(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), v3);
        // A version-1 file (the model alone) loads by building the same tables.
        std::fs::write(&path, model.to_bytes().unwrap()).unwrap();
        assert_same_tables(byte_pair(read_tables(&path).unwrap()), built);
        std::fs::remove_file(&path).unwrap();
    }
}

/// Offset of the tables in a version-3 file: after the header, the model part's length and
/// the model part.
fn tables_at(file: &[u8]) -> usize {
    let model_len = u32::from_le_bytes(file[HEADER_LEN..HEADER_LEN + 4].try_into().unwrap());
    HEADER_LEN + 4 + model_len as usize
}

/// The version-3 file `bytes` changed by `edit` (given the tables' offset), with the payload
/// length and checksum recomputed.
fn with_edit(mut bytes: Vec<u8>, edit: impl FnOnce(&mut Vec<u8>, usize)) -> Vec<u8> {
    let blob = tables_at(&bytes);
    edit(&mut bytes, blob);
    let payload_len = (bytes.len() - HEADER_LEN) as u32;
    bytes[10..14].copy_from_slice(&payload_len.to_le_bytes());
    let crc = crc32fast::hash(&bytes[HEADER_LEN..]);
    bytes[14..18].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// [`small_model`]'s version-3 file changed by `edit` (see [`with_edit`]).
fn edited(edit: impl FnOnce(&mut Vec<u8>, usize)) -> Vec<u8> {
    with_edit(small_model().to_bytes_with_tables().unwrap(), edit)
}

/// Both readers reject `bytes` with a `BadTables` error whose text contains `needle`.
fn assert_bad_tables(bytes: &[u8], needle: &str) {
    let from_model = AnyModel::from_bytes(bytes).unwrap_err();
    let path = temp_file("bad.model", bytes);
    let from_tables = read_tables(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    for err in [from_model, from_tables] {
        assert!(
            matches!(err, ModelError::BadTables { .. }) && err.to_string().contains(needle),
            "expected BadTables containing {needle:?}, got {err}"
        );
        assert!(err
            .to_string()
            .starts_with("model file's prebuilt tables are invalid: "));
    }
}

/// Offset in the file of array number `k` (0 = token_bytes) of the tables at `blob`, and of
/// its element count.
fn array_at(bytes: &[u8], blob: usize, k: usize) -> (usize, usize) {
    let mut at = blob + 2;
    let sizes = [1usize, 4, 4, 8];
    let mut i = 0;
    loop {
        let count_at = at;
        let count = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        at += 8;
        at += at.wrapping_neg() & 7;
        if i == k {
            return (count_at, at);
        }
        at += count * sizes[i];
        i += 1;
    }
}

#[test]
fn damaged_tables_each_have_their_error() {
    assert_bad_tables(&edited(|b, blob| b[blob] = 7), "unknown table kind 7");
    assert_bad_tables(&edited(|b, blob| b[blob + 1] = 9), "unknown pattern 9");
    // token_offsets (array 1) claiming 2^40 entries: refused before allocating.
    assert_bad_tables(
        &edited(|b, blob| {
            let (count_at, _) = array_at(b, blob, 1);
            b[count_at + 5] = 1;
        }),
        "token_offsets claims 1099511628036 entries, more than the file holds",
    );
    // An offset that goes down.
    assert_bad_tables(
        &edited(|b, blob| {
            let (_, data) = array_at(b, blob, 1);
            b[data + 4 * 100..data + 4 * 101].copy_from_slice(&1000u32.to_le_bytes());
        }),
        "token offsets do not rise from 0 to the byte count",
    );
    // A byte id out of range (array 2 is byte_ids).
    assert_bad_tables(
        &edited(|b, blob| {
            let (_, data) = array_at(b, blob, 2);
            b[data..data + 4].copy_from_slice(&5000u32.to_le_bytes());
        }),
        "byte_ids holds id 5000, the model has 259 ids",
    );
    // A merge entry whose merged id is out of range (array 3 is pairs).
    assert_bad_tables(
        &edited(|b, blob| {
            let (_, data) = array_at(b, blob, 3);
            b[data..data + 2].copy_from_slice(&[0xFF, 0xFF]);
        }),
        "pairs holds id",
    );
    // Bytes after the last table, and tables cut short.
    assert_bad_tables(&edited(|b, _| b.push(0)), "1 bytes after the last table");
    assert_bad_tables(
        &edited(|b, _| {
            b.truncate(b.len() - 3);
        }),
        "the tables end inside special id",
    );
    // The model part's length pointing past the payload.
    assert_bad_tables(
        &edited(|b, _| b[HEADER_LEN + 3] = 0x7F),
        "the model part's length runs past the payload",
    );
}

#[test]
fn tables_of_another_model_are_refused() {
    // Swap in the tables of a model with another special token.
    let mut other = small_model();
    other.tokens[258] = b"<|END|>".to_vec();
    other.specials = vec![("<|END|>".to_owned(), 258)];
    let theirs = other.to_bytes_with_tables().unwrap();
    let their_blob = theirs[tables_at(&theirs)..].to_vec();
    let bytes = edited(|b, blob| {
        b.truncate(blob);
        b.extend_from_slice(&their_blob);
    });
    let err = AnyModel::from_bytes(&bytes).unwrap_err();
    assert!(
        err.to_string()
            .contains("the tables do not belong to the model"),
        "{err}"
    );
}

#[test]
fn truncations_and_bit_flips_of_a_version_3_file() {
    let bytes = small_model().to_bytes_with_tables().unwrap();
    let path = temp_file("damage.model", &bytes);
    // Every 997th length, and the last few.
    let lengths = (0..bytes.len())
        .step_by(997)
        .chain(bytes.len() - 9..bytes.len());
    for len in lengths {
        std::fs::write(&path, &bytes[..len]).unwrap();
        let err = read_tables(&path).unwrap_err();
        assert!(
            matches!(err, ModelError::Truncated { .. } | ModelError::BadMagic),
            "length {len}: {err}"
        );
    }
    // One bit flipped in every 887th payload byte.
    for at in (HEADER_LEN..bytes.len()).step_by(887) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        std::fs::write(&path, &bad).unwrap();
        let err = read_tables(&path).unwrap_err();
        assert!(
            matches!(err, ModelError::ChecksumMismatch { .. }),
            "byte {at}: {err}"
        );
    }
    std::fs::remove_file(&path).unwrap();
}

/// The committed sp512 `tokenizer.model`, imported.
fn sp512() -> picobpe_model::SpModel {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/sentencepiece/models/sp512.model");
    picobpe_model::sentencepiece::import_model_proto(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn sentencepiece_tables_load_as_built_and_damage_is_named() {
    let model = sp512();
    let built = picobpe_model::SpTableData::new(&model).unwrap().to_tables();
    let v3 = model.to_bytes_with_tables().unwrap();
    assert_eq!(u16::from_le_bytes([v3[8], v3[9]]), TABLES_VERSION);
    let path = temp_file("sp512.model", &v3);
    let LiveTables::SentencePiece(loaded) = read_tables(&path).unwrap() else {
        panic!("sp512 loaded as byte-level");
    };
    assert_eq!(loaded.token_bytes, built.token_bytes);
    assert_eq!(loaded.token_offsets, built.token_offsets);
    assert_eq!(loaded.kinds, built.kinds);
    assert_eq!(loaded.priorities, built.priorities);
    assert_eq!(loaded.pieces.ids, built.pieces.ids);
    assert_eq!(loaded.pieces.keys, built.pieces.keys);
    assert_eq!(loaded.pieces.index.pilots, built.pieces.index.pilots);
    assert_eq!(loaded.pieces.index.remap, built.pieces.index.remap);
    assert_eq!(loaded.byte_ids, built.byte_ids);
    assert_eq!(loaded.unk_id, built.unk_id);
    assert_eq!(loaded.unk_surface, built.unk_surface);
    assert_eq!(loaded.user_defined, built.user_defined);
    assert_eq!(
        (loaded.add_dummy_prefix, loaded.remove_extra_whitespaces),
        (built.add_dummy_prefix, built.remove_extra_whitespaces)
    );
    assert_eq!(
        (loaded.sections, loaded.split_words),
        (built.sections, built.split_words)
    );
    assert_eq!(loaded.cut_bytes, built.cut_bytes);
    assert_eq!(picobpe_model::SpModel::read(&path).unwrap(), model);
    model.write(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), v3);
    std::fs::remove_file(&path).unwrap();

    // Damage with the checksum recomputed: flags (sections 8: no such variant; 7, pre-tokens,
    // without the steps they need), kinds' length, tables of another model.
    let edit = |f: &dyn Fn(&mut Vec<u8>, usize)| with_edit(v3.clone(), f);
    assert_bad_tables(&edit(&|b, blob| b[blob + 4] = 8), "unknown flag values");
    assert_bad_tables(
        &edit(&|b, blob| b[blob + 4] = 7),
        "pre-token sections without steps that remove whitespace",
    );
    // Byte-level tables' kind beside a SentencePiece model: refused by both readers (the
    // model reader expects SentencePiece tables; the tables reader then reads a byte-level
    // blob that does not parse).
    assert_bad_tables(&edit(&|b, blob| b[blob] = 0), "");
    // The kinds array (after token_bytes and token_offsets) claims one entry less.
    let kinds_count = |b: &[u8], blob: usize| {
        let mut at = blob + 1 + 5 + 4 + 16;
        for size in [1usize, 4] {
            let count = u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
            at += 8;
            at += at.wrapping_neg() & 7;
            at += count * size;
        }
        at
    };
    assert_bad_tables(
        &edit(&|b, blob| {
            let at = kinds_count(b, blob);
            let count = u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            b[at..at + 8].copy_from_slice(&(count - 1).to_le_bytes());
        }),
        "claims",
    );
    // The tables of another SentencePiece model (sp4096) beside sp512: refused (their padding
    // was laid out for another offset, so here they do not even parse).
    let other = picobpe_model::sentencepiece::import_model_proto(
        &std::fs::read(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures/sentencepiece/models/sp4096.model"),
        )
        .unwrap(),
    )
    .unwrap()
    .to_bytes_with_tables()
    .unwrap();
    let their_blob = other[tables_at(&other)..].to_vec();
    let swapped = edit(&|b, blob| {
        b.truncate(blob);
        b.extend_from_slice(&their_blob);
    });
    let err = AnyModel::from_bytes(&swapped).unwrap_err();
    assert!(matches!(err, ModelError::BadTables { .. }), "{err}");
}

/// A version-3 file of an `nmt_nfkc` model carries its character map (the double array) in
/// its tables; a damaged map there is refused when the file is read, naming the part, and so
/// is a lookahead shorter than the map's longest key.
#[test]
fn damaged_character_map_tables_are_refused() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/sentencepiece/refused/nfkc.model");
    let model =
        picobpe_model::sentencepiece::import_model_proto(&std::fs::read(path).unwrap()).unwrap();
    let v3 = model.to_bytes_with_tables().unwrap();
    assert!(picobpe_model::SpModel::from_bytes(&v3).is_ok());
    // The units array: its element count (44,800), zero padding to 8 in the file, the units.
    let units = picobpe_model::sentencepiece::charsmap::parse(&model.charsmap)
        .unwrap()
        .units;
    let count = (units.len() as u64).to_le_bytes();
    let at = |b: &[u8], blob: usize| {
        let count_at = blob + b[blob..].windows(8).position(|w| w == count).unwrap();
        let c = count_at + 8;
        let first = c + (c.wrapping_neg() & 7);
        assert_eq!(b[first..first + 4], units[0].to_le_bytes());
        (count_at, first)
    };
    // The root's offset sends the walk past the array.
    let far = with_edit(v3.clone(), |b, blob| {
        let (_, first) = at(b, blob);
        b[first..first + 4].copy_from_slice(&(1u32 << 31 | 0x3FF << 10).to_le_bytes());
    });
    assert_bad_tables(&far, "precompiled_charsmap: after key");
    // The lookahead (a u32, then the Hangul flag, then the units' count) says 1 byte.
    let short = with_edit(v3.clone(), |b, blob| {
        let (count_at, _) = at(b, blob);
        b[count_at - 8..count_at - 4].copy_from_slice(&1u32.to_le_bytes());
    });
    assert_bad_tables(&short, "lookahead 1 is shorter than its longest key 12");
}
