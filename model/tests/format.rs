//! Model file format: round trip, and a distinct error for each kind of damage.

use picobpe_model::format::{BPE_VERSION, HEADER_LEN, MAGIC};
mod common;

use common::small_model;
use picobpe_model::{InvalidModel, Model, ModelError, Split};

/// A file around `payload` with a correct header, bypassing validation.
fn file_with_payload(payload: &[u8]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&BPE_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn invalid(model: &Model) -> InvalidModel {
    let file = file_with_payload(&postcard::to_stdvec(model).unwrap());
    match Model::from_bytes(&file) {
        Err(ModelError::Invalid(err)) => {
            assert!(matches!(model.to_bytes(), Err(ModelError::Invalid(_))));
            err
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn round_trip_bytes_and_file() {
    let model = small_model();
    let bytes = model.to_bytes().unwrap();
    assert_eq!(&bytes[..8], b"PICOBPE\0");
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 1);
    assert_eq!(Model::from_bytes(&bytes).unwrap(), model);

    let dir = std::env::temp_dir().join(format!("picobpe-format-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("small.model");
    model.write(&path).unwrap();
    assert_eq!(Model::read(&path).unwrap(), model);
    // Only the model is left in the directory (the temporary file was renamed).
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_truncation_is_reported_as_truncated() {
    let bytes = small_model().to_bytes().unwrap();
    for len in 0..bytes.len() {
        match Model::from_bytes(&bytes[..len]) {
            Err(ModelError::Truncated { needed, have }) => {
                assert_eq!(have, len as u64);
                let expected = if len < HEADER_LEN {
                    HEADER_LEN
                } else {
                    bytes.len()
                };
                assert_eq!(needed, expected as u64);
            }
            other => panic!("prefix of {len} bytes: {other:?}"),
        }
    }
    let err = Model::from_bytes(&bytes[..20]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "model file is truncated: 20 bytes present, {} expected",
            bytes.len()
        )
    );
}

#[test]
fn every_payload_bit_flip_is_a_checksum_mismatch() {
    let bytes = small_model().to_bytes().unwrap();
    for i in HEADER_LEN..bytes.len() {
        for bit in 0..8 {
            let mut bad = bytes.clone();
            bad[i] ^= 1 << bit;
            assert!(
                matches!(
                    Model::from_bytes(&bad),
                    Err(ModelError::ChecksumMismatch { .. })
                ),
                "byte {i} bit {bit}"
            );
        }
    }
    // A flipped checksum field is a mismatch too, reporting both values.
    let mut bad = bytes.clone();
    bad[14] ^= 1;
    let Err(ModelError::ChecksumMismatch { expected, found }) = Model::from_bytes(&bad) else {
        panic!("expected a checksum mismatch");
    };
    assert_eq!(expected ^ 1, found);
    assert!(Model::from_bytes(&bad)
        .unwrap_err()
        .to_string()
        .contains("corrupt"));
}

#[test]
fn wrong_magic_and_versions() {
    let bytes = small_model().to_bytes().unwrap();
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(matches!(Model::from_bytes(&bad), Err(ModelError::BadMagic)));
    assert!(matches!(
        Model::from_bytes(b"{\"json\": 1}"),
        Err(ModelError::BadMagic)
    ));
    assert!(matches!(
        Model::from_bytes(b"PICO"),
        Err(ModelError::Truncated { .. })
    ));
    assert!(matches!(
        Model::from_bytes(b"PICX"),
        Err(ModelError::BadMagic)
    ));

    for version in [0u16, 8, 0xFFFF] {
        let mut newer = bytes.clone();
        newer[8..10].copy_from_slice(&version.to_le_bytes());
        match Model::from_bytes(&newer) {
            Err(
                err @ ModelError::UnsupportedVersion {
                    found,
                    supported: 7,
                },
            ) => {
                assert_eq!(found, version);
                assert_eq!(
                    err.to_string(),
                    format!(
                        "model file format version {version} is not supported (this build reads versions 1 to 7)"
                    )
                );
            }
            other => panic!("version {version}: {other:?}"),
        }
    }
}

#[test]
fn trailing_bytes_and_undecodable_payloads() {
    let mut bytes = small_model().to_bytes().unwrap();
    bytes.push(0);
    assert!(matches!(
        Model::from_bytes(&bytes),
        Err(ModelError::TrailingBytes { count: 1 })
    ));

    // Extra bytes inside the checksummed payload, after the model.
    let mut payload = postcard::to_stdvec(&small_model()).unwrap();
    payload.extend_from_slice(&[7, 7]);
    assert!(matches!(
        Model::from_bytes(&file_with_payload(&payload)),
        Err(ModelError::TrailingBytes { count: 2 })
    ));

    // A payload with a valid checksum that is not a Model.
    for garbage in [&[][..], &[9], &[0, 0xFF, 0xFF]] {
        assert!(
            matches!(
                Model::from_bytes(&file_with_payload(garbage)),
                Err(ModelError::Decode(_))
            ),
            "{garbage:?}"
        );
    }
}

#[test]
fn hostile_length_prefixes_do_not_allocate() {
    // pattern = Gpt2, then `tokens` claims u32::MAX (and then 2^63) entries with no data behind.
    for claim in [&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F][..], &[0xFF; 9]] {
        let mut payload = vec![0u8];
        payload.extend_from_slice(claim);
        assert!(matches!(
            Model::from_bytes(&file_with_payload(&payload)),
            Err(ModelError::Decode(_))
        ));
    }
    // Inner vector claims 2^32 - 1 bytes.
    let payload = [0u8, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1, 2];
    assert!(matches!(
        Model::from_bytes(&file_with_payload(&payload)),
        Err(ModelError::Decode(_))
    ));
}

#[test]
fn each_invalid_content_is_named() {
    let base = small_model();

    let mut m = base.clone();
    m.tokens[257] = b"ab".to_vec();
    assert_eq!(
        invalid(&m),
        InvalidModel::DuplicateToken {
            first: 256,
            second: 257
        }
    );

    let mut m = base.clone();
    m.tokens[0x41] = b"ZZ".to_vec();
    let err = invalid(&m);
    assert_eq!(err, InvalidModel::MissingByte { byte: 0x41 });
    assert_eq!(
        err.to_string(),
        "byte 0x41 has no single-byte ordinary token"
    );

    let mut m = base.clone();
    m.merges[1] = (256, 999);
    let err = invalid(&m);
    assert_eq!(err, InvalidModel::MergeUnknownId { index: 1, id: 999 });
    assert_eq!(
        err.to_string(),
        "merge #1 references id 999, which is not an ordinary token"
    );

    let mut m = base.clone();
    m.merges[1] = (256, 258);
    assert_eq!(
        invalid(&m),
        InvalidModel::MergeUnknownId { index: 1, id: 258 }
    );

    let mut m = base.clone();
    m.merges[1] = (256, u32::from(b'd'));
    assert_eq!(
        invalid(&m),
        InvalidModel::MergeNotAToken {
            index: 1,
            left: 256,
            right: 100
        }
    );

    let mut m = base.clone();
    m.merges.push((u32::from(b'a'), u32::from(b'b')));
    assert_eq!(
        invalid(&m),
        InvalidModel::MergeDuplicate {
            index: 2,
            earlier: 0,
            merged: 256
        }
    );

    let mut m = base.clone();
    m.specials[0].0 = "ab".to_owned();
    m.tokens[258] = b"ab".to_vec();
    assert_eq!(
        invalid(&m),
        InvalidModel::SpecialIsOrdinary {
            text: "ab".to_owned(),
            ordinary: 256
        }
    );

    let mut m = base.clone();
    m.specials.push(("<|end|>".to_owned(), 258));
    assert_eq!(
        invalid(&m),
        InvalidModel::SpecialDuplicateText {
            text: "<|end|>".to_owned()
        }
    );

    let mut m = base.clone();
    m.tokens.push(b"<|x|>".to_vec());
    m.specials.push(("<|x|>".to_owned(), 258));
    assert_eq!(invalid(&m), InvalidModel::SpecialDuplicateId { id: 258 });

    let mut m = base.clone();
    m.specials[0].1 = 4_000_000_000;
    assert_eq!(
        invalid(&m),
        InvalidModel::SpecialIdOutOfRange {
            text: "<|end|>".to_owned(),
            id: 4_000_000_000,
            n_ids: 259
        }
    );

    let mut m = base.clone();
    m.tokens[258] = b"<|END|>".to_vec();
    assert_eq!(
        invalid(&m),
        InvalidModel::SpecialBytesMismatch {
            text: "<|end|>".to_owned(),
            id: 258
        }
    );

    let mut m = base.clone();
    m.tokens[258].clear();
    m.specials[0].0.clear();
    assert_eq!(invalid(&m), InvalidModel::SpecialEmpty { id: 258 });

    // Unused ids (holes) are fine.
    let mut m = base.clone();
    m.tokens.insert(258, Vec::new());
    m.specials[0].1 = 259;
    assert_eq!(Model::from_bytes(&m.to_bytes().unwrap()).unwrap(), m);
}

#[test]
fn io_errors_name_the_path() {
    let err = Model::read("/nonexistent/dir/x.model").unwrap_err();
    assert!(matches!(err, ModelError::Io { .. }));
    assert!(
        err.to_string().starts_with("/nonexistent/dir/x.model: "),
        "{err}"
    );
}

#[test]
fn a_unicode_normalizer_survives_every_version_and_a_bad_one_is_named() {
    use picobpe::normalizer::UnicodeForm;
    for form in [
        UnicodeForm::Nfc,
        UnicodeForm::Nfd,
        UnicodeForm::Nfkc,
        UnicodeForm::Nfkd,
    ] {
        let model = Model {
            normalizer: Some(form),
            ..small_model()
        };
        // Alone: version 2 (version 1 has no room for it).
        let bytes = model.to_bytes().unwrap();
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 2);
        assert_eq!(Model::from_bytes(&bytes).unwrap(), model);
        // With its tables: the tables carry it too.
        let bytes = model.to_bytes_with_tables().unwrap();
        assert_eq!(Model::from_bytes(&bytes).unwrap(), model);
        let dir = std::env::temp_dir().join(format!("picobpe-norm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{form:?}.model"));
        model.write(&path).unwrap();
        match picobpe_model::read_tables(&path).unwrap() {
            picobpe_model::LiveTables::BytePair(t) => {
                assert_eq!(t.normalizer.and_then(|n| n.form()), Some(form))
            }
            _ => panic!("byte-level tables"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    // Payload variant 6 with an unknown code (a correct checksum around it).
    let mut payload = vec![6u8];
    payload.extend(postcard::to_stdvec(&small_model()).unwrap());
    payload.push(9);
    let mut file = MAGIC.to_vec();
    file.extend_from_slice(&2u16.to_le_bytes());
    file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    file.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    file.extend_from_slice(&payload);
    let err = Model::from_bytes(&file).unwrap_err();
    assert!(
        matches!(err, ModelError::BadNormalizer { code: 9 }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "model file names an unknown normalizer (code 9; 1 to 4 are NFC, NFD, NFKC, NFKD)"
    );
}

/// A prefix space (`add_prefix_space`) survives the model alone (version 2, payload variant
/// 10), with its tables (whose pattern byte carries it) and through `read_tables`; a bad
/// settings byte and a prefix space beside a normalizer are refused by name.
#[test]
fn a_prefix_space_round_trips_and_damage_is_refused() {
    let model = Model {
        prefix_space: true,
        ..small_model()
    };
    let bytes = model.to_bytes().unwrap();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 2);
    assert_eq!(Model::from_bytes(&bytes).unwrap(), model);
    let bytes = model.to_bytes_with_tables().unwrap();
    assert_eq!(Model::from_bytes(&bytes).unwrap(), model);
    let dir = std::env::temp_dir().join(format!("picobpe-prefix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("prefix.model");
    model.write(&path).unwrap();
    match picobpe_model::read_tables(&path).unwrap() {
        picobpe_model::LiveTables::BytePair(t) => assert!(t.prefix_space),
        _ => panic!("byte-level tables"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // Payload variant 10 with an unknown settings byte (a correct checksum around it).
    let mut payload = vec![10u8];
    payload.extend(postcard::to_stdvec(&small_model()).unwrap());
    payload.push(3);
    let mut file = MAGIC.to_vec();
    file.extend_from_slice(&2u16.to_le_bytes());
    file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    file.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    file.extend_from_slice(&payload);
    let err = Model::from_bytes(&file).unwrap_err();
    assert!(matches!(err, ModelError::BadSettings { bits: 3 }), "{err}");
    // With a normalizer: refused when written.
    let both = Model {
        normalizer: Some(picobpe::normalizer::UnicodeForm::Nfc),
        ..model
    };
    assert!(matches!(
        both.to_bytes(),
        Err(ModelError::Invalid(InvalidModel::PrefixWithNormalizer))
    ));
}

/// [`small_model`] with an end-of-word suffix `</w>`: each byte followed by it (ids 259-514),
/// and the merge `(ab, c</w>)` → `abc</w>` (515).
fn suffix_model() -> Model {
    let mut model = small_model();
    model
        .tokens
        .extend((0..=255u8).map(|b| [&[b][..], b"</w>"].concat()));
    model.tokens.push(b"abc</w>".to_vec());
    model.merges.push((256, 259 + u32::from(b'c')));
    model.end_of_word_suffix = b"</w>".to_vec();
    model
}

/// A byte-level model with an end-of-word suffix (payload variant 11, tables of kind 2)
/// round-trips through every version that holds it and encodes with the suffix; a damaged
/// settings byte, an empty suffix, a missing suffixed byte, the whole-piece rule beside it
/// and damaged `word_end_ids` in the tables are refused by name.
#[test]
fn an_end_of_word_suffix_round_trips_and_damage_is_refused() {
    let model = suffix_model();
    let bytes = model.to_bytes().unwrap();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 2);
    assert_eq!(Model::from_bytes(&bytes).unwrap(), model);
    let with_tables = model.to_bytes_with_tables().unwrap();
    assert_eq!(Model::from_bytes(&with_tables).unwrap(), model);
    let dir = std::env::temp_dir().join(format!("picobpe-suffix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("suffix.model");
    model.write(&path).unwrap();
    let tables = match picobpe_model::read_tables(&path).unwrap() {
        picobpe_model::LiveTables::BytePair(t) => t,
        _ => panic!("byte-level tables"),
    };
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(tables.word_end_ids.len(), 256);
    let tok = picobpe::Tokenizer::new(tables);
    let mut out = [0u32; 16];
    let n = tok
        .encode(b"abc ab c", &mut out, picobpe::Specials::All)
        .unwrap();
    // "abc" → ab, c</w> → abc</w>; " ab" → " ", a, b</w> (no merge makes "b</w>" join);
    // " c" → " ", c</w>.
    let c_end = 259 + u32::from(b'c');
    let b_end = 259 + u32::from(b'b');
    assert_eq!(
        &out[..n],
        [
            515,
            u32::from(b' '),
            u32::from(b'a'),
            b_end,
            u32::from(b' '),
            c_end
        ]
    );

    // Payload variant 11 by hand: model, normalizer code, settings byte, suffix, empty ids.
    let file = |code: u8, bits: u8, suffix: &[u8]| {
        let mut payload = vec![11u8];
        payload.extend(postcard::to_stdvec(&model).unwrap());
        payload.extend([code, bits]);
        payload.extend(postcard::to_stdvec(suffix).unwrap());
        // No empty tokens.
        payload.push(0);
        let mut file = MAGIC.to_vec();
        file.extend_from_slice(&2u16.to_le_bytes());
        file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        file.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        file.extend_from_slice(&payload);
        file
    };
    assert_eq!(Model::from_bytes(&file(0, 0, b"</w>")).unwrap(), model);
    let err = Model::from_bytes(&file(0, 0x10, b"</w>")).unwrap_err();
    assert!(
        matches!(err, ModelError::BadSettings { bits: 0x10 }),
        "{err}"
    );
    // No suffix: the settings alone (here `Lowercase`, bit 1).
    let lower = Model::from_bytes(&file(0, 2, b"")).unwrap();
    assert!(lower.end_of_word_suffix.is_empty() && lower.steps.lowercase);
    // Special tokens matched in normalized text, with no normalizer; whitespace runs after
    // NFKC (code 3).
    let err = Model::from_bytes(&file(0, 8, b"</w>"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("with no normalizer"), "{err}");
    let err = Model::from_bytes(&file(3, 4, b"</w>"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("compatibility form"), "{err}");
    let err = Model::from_bytes(&file(9, 0, b"</w>")).unwrap_err();
    assert!(
        matches!(err, ModelError::BadNormalizer { code: 9 }),
        "{err}"
    );
    let err = Model::from_bytes(&file(0, 0, b"<x>"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("byte 0x00 followed by it is not an ordinary token"),
        "{err}"
    );
    // CLIP's settings round-trip with tables: NFC, `Lowercase`, whitespace runs, special
    // tokens in the normalized text.
    let clip = Model {
        normalizer: Some(picobpe::normalizer::UnicodeForm::Nfc),
        steps: picobpe_model::TextSteps {
            lowercase: true,
            collapse_whitespace: true,
            specials_normalized: true,
        },
        ..model.clone()
    };
    let bytes = clip.to_bytes_with_tables().unwrap();
    assert_eq!(Model::from_bytes(&bytes).unwrap(), clip);
    let whole = Model {
        whole_piece: true,
        ..model.clone()
    };
    assert!(matches!(
        whole.to_bytes(),
        Err(ModelError::Invalid(InvalidModel::BadWordEnd { .. }))
    ));

    // The tables' word_end_ids (kind 2, the array after the trie): a wrong id, and a
    // whole-piece table beside it. Found by their bytes, after the checksum is recomputed.
    let ids: Vec<u8> = model
        .word_end_ids()
        .unwrap()
        .iter()
        .flat_map(|id| id.to_le_bytes())
        .collect();
    let at = (with_tables.windows(ids.len()))
        .position(|w| w == ids.as_slice())
        .expect("word_end_ids in the tables");
    let mut damaged = with_tables.clone();
    damaged[at..at + 4].copy_from_slice(&9999u32.to_le_bytes());
    let crc = crc32fast::hash(&damaged[HEADER_LEN..]);
    damaged[14..18].copy_from_slice(&crc.to_le_bytes());
    let err = Model::from_bytes(&damaged).unwrap_err().to_string();
    assert!(err.contains("word_end_ids holds id 9999"), "{err}");
    // Another valid suffix id in the first slot: the tables no longer belong to the model.
    let mut other = with_tables.clone();
    other[at..at + 4].copy_from_slice(&515u32.to_le_bytes());
    let crc = crc32fast::hash(&other[HEADER_LEN..]);
    other[14..18].copy_from_slice(&crc.to_le_bytes());
    assert!(Model::from_bytes(&other).is_err());
}

/// An empty token (tiktoken's `= N` line) round-trips with and without tables and decodes to
/// nothing; one naming an id with bytes, a special, or a list out of order is refused, and so
/// are tables whose `empty_ids` name an id with bytes.
#[test]
fn empty_tokens_round_trip_and_damage_is_refused() {
    let mut model = small_model();
    model.tokens.push(Vec::new());
    model.empty_tokens = vec![259];
    let bytes = model.to_bytes().unwrap();
    assert_eq!(Model::from_bytes(&bytes).unwrap(), model);
    let with_tables = model.to_bytes_with_tables().unwrap();
    assert_eq!(Model::from_bytes(&with_tables).unwrap(), model);
    let tables = picobpe_model::TableData::new(&model, picobpe_model::PieceTable::Full)
        .unwrap()
        .to_tables();
    let tok = picobpe::Tokenizer::new(tables);
    assert_eq!(tok.decode(&[u32::from(b'a'), 259], &mut [0u8; 4]), Ok(1));
    for (empty, why) in [
        (vec![97], "id with bytes"),
        (vec![258], "a special"),
        (vec![259, 259], "not increasing"),
    ] {
        let bad = Model {
            empty_tokens: empty,
            ..model.clone()
        };
        assert!(
            matches!(
                bad.to_bytes(),
                Err(ModelError::Invalid(InvalidModel::BadEmptyToken { .. }))
            ),
            "{why}"
        );
    }
    // The tables' empty_ids (the last array before the specials): 259 → 97, an id with bytes.
    let needle: Vec<u8> = [1u64.to_le_bytes().to_vec(), 259u32.to_le_bytes().to_vec()].concat();
    let at = (with_tables.windows(needle.len()))
        .rposition(|w| w == needle.as_slice())
        .expect("empty_ids in the tables")
        + 8;
    let mut damaged = with_tables.clone();
    damaged[at..at + 4].copy_from_slice(&97u32.to_le_bytes());
    let crc = crc32fast::hash(&damaged[HEADER_LEN..]);
    damaged[14..18].copy_from_slice(&crc.to_le_bytes());
    let err = Model::from_bytes(&damaged).unwrap_err().to_string();
    assert!(err.contains("empty_ids"), "{err}");
}

/// A WordPiece model with a `tokenizer.json` normalizer (kind 8: the model, the form's code,
/// the steps' bits) round-trips; damaged codes, bits it never sets, and steps beside
/// `BertNormalizer` flags are refused by name.
#[test]
fn wordpiece_normalizer_kind_round_trips_and_damage_is_refused() {
    use picobpe::normalizer::UnicodeForm;
    use picobpe_model::normalizer::CharSteps;
    use picobpe_model::wordpiece::{import_vocab_txt, VocabTxtOptions};
    use picobpe_model::{AnyModel, WpModel};
    let options = VocabTxtOptions {
        lowercase: true,
        strip_accents: None,
    };
    let bert = import_vocab_txt(b"[UNK]\n[CLS]\nthe\n##n\ncafe\n", &options).unwrap();
    let m = WpModel {
        clean_text: false,
        handle_chinese_chars: false,
        strip_accents: false,
        lowercase: false,
        normalizer: Some(UnicodeForm::Nfd),
        char_steps: CharSteps {
            strip_accents: true,
            lowercase: true,
            lowercase_first: true,
            quotes: false,
        },
        ..bert.clone()
    };
    let bytes = m.to_bytes().unwrap();
    assert_eq!(WpModel::from_bytes(&bytes).unwrap(), m);
    // The last two payload bytes are the form's code and the steps' bits.
    let with = |code: u8, bits: u8| {
        let mut bad = bytes.clone();
        let n = bad.len();
        bad[n - 2] = code;
        bad[n - 1] = bits;
        let crc = crc32fast::hash(&bad[HEADER_LEN..]);
        bad[14..18].copy_from_slice(&crc.to_le_bytes());
        AnyModel::from_bytes(&bad).unwrap_err().to_string()
    };
    assert!(with(9, 0b1110).contains("unknown normalizer (code 9"));
    assert!(with(2, 0x10).contains("invalid WordPiece model"));
    assert!(with(0, 0).contains("invalid WordPiece model"));
    // NFC before the steps, quote pairs, or the steps beside BertNormalizer flags.
    for bad in [
        WpModel {
            normalizer: Some(UnicodeForm::Nfc),
            ..m.clone()
        },
        WpModel {
            char_steps: CharSteps {
                quotes: true,
                ..m.char_steps
            },
            ..m.clone()
        },
        WpModel {
            lowercase: true,
            ..m.clone()
        },
    ] {
        let err = bad.to_bytes().unwrap_err().to_string();
        assert!(err.contains("steps beside BertNormalizer flags"), "{err}");
    }
}

/// A WordPiece model with another pre-tokenizer (model kind 9) reads back as written, with
/// or without a normalizer; a damaged pre-tokenizer byte is refused by name.
#[test]
fn wordpiece_pre_tokenizer_kind_round_trips_and_damage_is_refused() {
    use picobpe::normalizer::UnicodeForm;
    use picobpe_model::wordpiece::{
        import_vocab_txt, split_code, CharRule, Spaces, VocabTxtOptions, WordSplit,
    };
    use picobpe_model::{AnyModel, WpModel};
    let bert =
        import_vocab_txt(b"[UNK]\n[CLS]\nthe\n##n\n4\n", &VocabTxtOptions::default()).unwrap();
    let split = WordSplit::new(Spaces::Words, CharRule::Contiguous, CharRule::Isolated);
    let plain = WpModel {
        split,
        ..bert.clone()
    };
    let normalized = WpModel {
        clean_text: false,
        handle_chinese_chars: false,
        strip_accents: false,
        lowercase: false,
        normalizer: Some(UnicodeForm::Nfkc),
        ..plain.clone()
    };
    for m in [&plain, &normalized] {
        let bytes = m.to_bytes().unwrap();
        assert_eq!(&WpModel::from_bytes(&bytes).unwrap(), m);
        assert_ne!(bytes, bert.to_bytes().unwrap());
    }
    // Every code a pre-tokenizer has round-trips; BERT's words are written as kind 2.
    for code in 0..64u8 {
        if let Some(s) = picobpe_model::wordpiece::split_from_code(code) {
            assert_eq!(split_code(s), code);
        }
    }
    let bytes = plain.to_bytes().unwrap();
    // The last payload byte is the pre-tokenizer's code.
    let with = |code: u8| {
        let mut bad = bytes.clone();
        let n = bad.len();
        bad[n - 1] = code;
        let crc = crc32fast::hash(&bad[HEADER_LEN..]);
        bad[14..18].copy_from_slice(&crc.to_le_bytes());
        AnyModel::from_bytes(&bad)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(with(split_code(split)), Ok(()));
    for code in [3, 0b11_0001, 0x40, 0xFF] {
        let err = with(code).unwrap_err();
        assert!(
            err.contains("unknown WordPiece pre-tokenizer"),
            "{code:#x}: {err}"
        );
    }
}

/// Specials that take whitespace (`lstrip`, `rstrip`) survive every way a model is written
/// and read (version 5: bytes, file, mapped tables), reach the core's tables, and work there;
/// strip bits on an id that is not a special, unknown bits or misordered ids are refused by
/// name.
#[test]
fn special_strips_round_trip_and_damage_is_refused() {
    use picobpe::special::{LSTRIP, RSTRIP};
    use picobpe_model::format::STRIP_VERSION;
    let model = Model {
        strips: vec![(258, LSTRIP | RSTRIP)],
        ..small_model()
    };
    round_trips_as(&model, STRIP_VERSION);
    let dir = std::env::temp_dir().join(format!("picobpe-strips-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("strips.model");
    model.write(&path).unwrap();
    let live = picobpe_model::read_tables(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let picobpe_model::LiveTables::BytePair(tables) = live else {
        panic!("byte-level tables")
    };
    assert_eq!(tables.specials[0].strip, LSTRIP | RSTRIP);
    let tok = picobpe::Tokenizer::new(tables);
    let mut out = [0u32; 16];
    let n = tok
        .encode(b"a  <|end|> \tb", &mut out, picobpe::Specials::All)
        .unwrap();
    assert_eq!(&out[..n], &[u32::from(b'a'), 258, u32::from(b'b')]);

    for (strips, what) in [
        (vec![(257, LSTRIP)], "id 257 is not a special token"),
        (vec![(258, 4)], "bits 0x4 are not lstrip/rstrip"),
        (vec![(258, 0)], "bits 0x0 are not lstrip/rstrip"),
        (vec![(258, 1), (258, 2)], "not strictly increasing"),
    ] {
        let bad = Model {
            strips,
            ..small_model()
        };
        let err = bad.to_bytes().unwrap_err();
        assert!(
            matches!(err, ModelError::Invalid(InvalidModel::BadStrips { .. }))
                && err.to_string().contains(what),
            "{err}"
        );
    }
    // A damaged list in a file (checksum fixed): refused when read with the model or its
    // tables alone. The payload starts with the model part's length, the empty template (two
    // zero lengths) and the list: 1 entry, id 258 as a varint (0x82 0x02), bits 3.
    let mut file = model.to_bytes_with_tables().unwrap();
    let list = HEADER_LEN + 4 + 2;
    assert_eq!(file[list..list + 4], [1, 0x82, 0x02, 3]);
    file[list + 1] = 0x81;
    let crc = crc32fast::hash(&file[HEADER_LEN..]);
    file[14..18].copy_from_slice(&crc.to_le_bytes());
    let err = Model::from_bytes(&file).unwrap_err();
    assert!(matches!(err, ModelError::BadStrips { .. }), "{err}");
    let path = std::env::temp_dir().join(format!("picobpe-bad-strips-{}", std::process::id()));
    std::fs::write(&path, &file).unwrap();
    let err = picobpe_model::read_tables(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(
        err.to_string().contains("id 257 is not a special token"),
        "{err}"
    );
    // A special that starts with whitespace beside an rstrip one.
    let mut spaced = small_model();
    spaced.tokens.push(b" <s>".to_vec());
    spaced.specials.push((" <s>".to_owned(), 259));
    spaced.strips = vec![(258, RSTRIP)];
    let err = spaced.to_bytes().unwrap_err().to_string();
    assert!(err.contains("starts with whitespace"), "{err}");
}

/// Compiled `Split` regexes (version 6): they round-trip through every writer, the tables read
/// from a file split with them, and a regex the compiler refuses is refused in a model and in a
/// file (checksum fixed), read with the model or its tables alone.
#[test]
fn split_patterns_round_trip_and_damage_is_refused() {
    use picobpe_model::format::SPLIT_VERSION;
    let model = Model {
        splits: vec![
            Split::isolated(r"\p{N}{1,3}"),
            Split::isolated(r"[a-z]+|\s+(?!\S)|\s+|."),
        ],
        ..small_model()
    };
    round_trips_as(&model, SPLIT_VERSION);
    let dir = std::env::temp_dir().join(format!("picobpe-splits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("splits.model");
    model.write(&path).unwrap();
    let live = picobpe_model::read_tables(&path).unwrap();
    let picobpe_model::LiveTables::BytePair(tables) = live else {
        panic!("byte-level tables")
    };
    assert_eq!(tables.splits.len(), 2);
    // "abc12345": "abc" (one id), then digits in threes; GPT-2's pattern would keep the
    // digits whole.
    let tok = picobpe::Tokenizer::new(tables);
    let mut out = [0u32; 16];
    let n = tok
        .encode(b"abc12345", &mut out, picobpe::Specials::All)
        .unwrap();
    assert_eq!(&out[..n], &[257, 49, 50, 51, 52, 53]);

    let bad = Model {
        splits: vec![Split::isolated(r"\s+(?=\S)")],
        ..small_model()
    };
    let err = bad.to_bytes().unwrap_err();
    assert!(
        matches!(err, ModelError::Invalid(InvalidModel::BadSplit { .. })),
        "{err}"
    );
    // The header part: model part length, empty template (two zero lengths), empty strip list
    // (0), 2 regexes, the first of length 10: `\p{N}{1,3}`. Damage its `{` into `(`.
    let mut file = model.to_bytes_with_tables().unwrap();
    let regex = HEADER_LEN + 4 + 2 + 1 + 1 + 1;
    assert_eq!(&file[regex..regex + 10], br"\p{N}{1,3}".as_slice());
    file[regex + 5] = b'(';
    let crc = crc32fast::hash(&file[HEADER_LEN..]);
    file[14..18].copy_from_slice(&crc.to_le_bytes());
    let err = Model::from_bytes(&file).unwrap_err();
    assert!(matches!(err, ModelError::BadSplit { .. }), "{err}");
    std::fs::write(&path, &file).unwrap();
    let err = picobpe_model::read_tables(&path).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(matches!(err, ModelError::BadSplit { .. }), "{err}");
}

/// Splits with rules other than `Isolated` (version 7): they round-trip through every writer,
/// the tables read from a file carry the rule, and an unknown rule byte is refused by name.
#[test]
fn split_rules_round_trip_and_damage_is_refused() {
    use picobpe::pretok::{SplitBehavior, SplitRule};
    use picobpe_model::format::SPLIT_RULE_VERSION;
    let rule = SplitRule {
        behavior: SplitBehavior::MergedWithNext,
        invert: true,
    };
    let model = Model {
        splits: vec![Split {
            regex: r"\s+".to_owned(),
            rule,
        }],
        ..small_model()
    };
    round_trips_as(&model, SPLIT_RULE_VERSION);
    // `Removed` (bit 3), inverted: byte 12.
    let removed = SplitRule {
        behavior: SplitBehavior::Removed,
        invert: true,
    };
    assert_eq!(removed.bits(), 12);
    let mut dropping = model.clone();
    dropping.splits[0].rule = removed;
    round_trips_as(&dropping, SPLIT_RULE_VERSION);
    let dir = std::env::temp_dir().join(format!("picobpe-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rules.model");
    model.write(&path).unwrap();
    let live = picobpe_model::read_tables(&path).unwrap();
    let picobpe_model::LiveTables::BytePair(tables) = live else {
        panic!("byte-level tables")
    };
    assert_eq!(tables.splits[0].parts().rule, rule);
    // The header part: model part length, empty template, empty strip list, 1 split: its
    // regex (length 3: `\s+`), then its rule byte (6: MergedWithNext | inverted). Damage it.
    let mut file = model.to_bytes_with_tables().unwrap();
    let at = HEADER_LEN + 4 + 2 + 1 + 1 + 1 + 3;
    assert_eq!(file[at], 6);
    file[at] = 9;
    let crc = crc32fast::hash(&file[HEADER_LEN..]);
    file[14..18].copy_from_slice(&crc.to_le_bytes());
    let err = Model::from_bytes(&file).unwrap_err();
    assert!(err.to_string().contains("unknown split rule 0x09"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `model` through every writer: each writes `version`, and reads back equal.
fn round_trips_as(model: &Model, version: u16) {
    use picobpe_model::{AnyModel, TemplateData};
    for bytes in [
        model.to_bytes().unwrap(),
        model.to_bytes_with_tables().unwrap(),
        AnyModel::BytePair(model.clone())
            .to_bytes_with(&TemplateData::default())
            .unwrap(),
    ] {
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), version);
        assert_eq!(Model::from_bytes(&bytes).unwrap(), *model);
    }
}
